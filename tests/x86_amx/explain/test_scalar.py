"""isasim explain of the scalar x86-64 subset: flags and branches as the machine computed them."""

from __future__ import annotations

from isasim.core.explain import Table, to_text
from isasim.core.trace import Init

from explain_helpers import blocks, ex


def flag_rows(expl):
    table = next(t for t in blocks(expl, "Worked example", Table) if t.columns[0] == "flag")
    return {r[0]: (r[1], r[2].text) for r in table.rows}


def test_scalar_flags_come_from_the_machine():
    init = Init(regs={"rax": 0x7FFFFFFFFFFFFFFF, "rbx": 1, "rflags": 0x202})
    flags = flag_rows(ex("add rax, rbx", init=init, init_source="test"))
    assert flags["OF"] == ("0", "1") and flags["SF"] == ("0", "1") and flags["CF"] == ("0", "0")


def test_branch_taken_or_not():
    taken = to_text(ex("jne 0x400010", init=Init(regs={"rflags": 0x202}), init_source="t"))
    assert "0x400010 (taken)" in taken
    fall = to_text(ex("jne 0x400010", init=Init(regs={"rflags": 0x242}), init_source="t"))
    assert "not taken" in fall

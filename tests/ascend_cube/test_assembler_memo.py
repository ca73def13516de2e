"""The assembler keeps each statement's parse (issue 33: a kernel repeats its SetFlag/WaitFlag lines thousands of
times), and what it gives must be what a fresh parse of every line gives: the same forms, operands and texts, each
line its own Instruction at its own address and line, and a bad statement refused with the same message every time
it appears.  The reference is :func:`assembler.parse_line`, which keeps nothing (an identity test)."""

from __future__ import annotations

import pytest

from isasim.ascend_cube import assembler
from isasim.ascend_cube.explain import EXAMPLES
from isasim.core.errors import AssemblyError

REPEATED = [
    "SetFlag(event=M_MTE1, id=0)",
    "WaitFlag(event=M_MTE1, id=0)",
    EXAMPLES["Mmad"],
    "SetFlag(event=M_MTE1, id=0)   // the same statement, a comment after it",
    "",
    "  SetFlag(event=M_MTE1, id=0)",
    "# a comment line",
    "WaitFlag(event=M_MTE1, id=0)",
    "SetFlag(event=M_MTE1,id=0)",  # other spacing: another key, the same instruction
    EXAMPLES["Mmad"],
    EXAMPLES["DataCopy_GM_to_L1_Nd2Nz"],
    EXAMPLES["DataCopy_GM_to_L1_Nd2Nz"],
]


def _fresh(text: str, base: int) -> list[tuple]:
    """Each instruction as a parse of its own line that keeps nothing gives it: (form, operands, text, address,
    line)."""
    result = []
    for number, line in enumerate(assembler.source_lines(text), start=1):
        body = assembler._strip(line)
        if body:
            form, operands = assembler.parse_line(body)
            result.append((form, operands, assembler.instruction_text(form, operands), base + len(result), number))
    return result


def _seen(program) -> list[tuple]:
    return [(i.form, i.operands, i.text, i.address, i.line) for i in program.instructions]


@pytest.mark.parametrize("base", [0, 0x1000])
def test_memoised_assembly_of_repeated_lines_equals_a_fresh_parse(base, monkeypatch):
    monkeypatch.setattr(assembler, "_PARSED", {})
    text = "\n".join(REPEATED)
    first = assembler.assemble(text, "ascend_cube", "memo.s", base)
    assert _seen(first) == _fresh(text, base)
    again = assembler.assemble(text, "ascend_cube", "memo.s", base)  # every statement kept by now
    assert again.instructions == first.instructions
    shifted = assembler.assemble("SetAtomicNone()\n" + text, "ascend_cube", "memo.s", base + 7)
    assert _seen(shifted) == _fresh("SetAtomicNone()\n" + text, base + 7)  # the same lines one line and address on


def test_memoised_lines_are_separate_instructions(monkeypatch):
    monkeypatch.setattr(assembler, "_PARSED", {})
    program = assembler.assemble("SetFlag(event=M_MTE1, id=0)\n" * 3, "ascend_cube", "memo.s", 0)
    first, second, third = program.instructions
    assert first is not second and second is not third
    assert [i.address for i in program.instructions] == [0, 1, 2]
    assert [i.line for i in program.instructions] == [1, 2, 3]
    first.extra["mark"] = 1  # one instruction's own data is not another's
    assert second.extra == {} and third.extra == {}


BAD = [
    ("Mmad(c=L0C[0], a=L0A[0], b=L0B[0], aType=int8, bType=int8, m=16, n=16)", "k is missing"),
    ("SetFlag(event=M_MTE1, id=0, q=1)", "no parameter 'q'"),
    ("loop: SetFlag(event=M_MTE1, id=0)", "straight-line"),
]


@pytest.mark.parametrize("line, words", BAD)
def test_memoised_assembler_refuses_a_bad_line_the_same_way_each_time(line, words, monkeypatch):
    monkeypatch.setattr(assembler, "_PARSED", {})
    good = "SetFlag(event=M_MTE1, id=0)\nWaitFlag(event=M_MTE1, id=0)\n"
    messages = []
    for text, number in ((good + line, 3), (good + line, 3), (good + good + line, 5)):
        with pytest.raises(AssemblyError) as raised:
            assembler.assemble(text, "ascend_cube", "bad.s", 0)
        assert (raised.value.source, raised.value.line) == ("bad.s", number)
        assert words in raised.value.message
        messages.append(raised.value.message)
    assert len(set(messages)) == 1
    assert line not in assembler._PARSED  # a refused statement is not kept


def test_memoised_assembler_stays_within_its_bound(monkeypatch):
    monkeypatch.setattr(assembler, "_PARSED", {})
    monkeypatch.setattr(assembler, "_PARSED_LIMIT", 4)
    text = "\n".join(f"SetFlag(event=M_MTE1, id={i % 8})" for i in range(20))
    program = assembler.assemble(text, "ascend_cube", "memo.s", 0)
    assert len(assembler._PARSED) <= 4
    assert _seen(program) == _fresh(text, 0)

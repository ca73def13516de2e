"""arm_sme's accounts of the scalar, predicate and whole-register writers (explain/workings_registers.py): PTRUE,
WHILELT/WHILELO, CNTB/H/W/D, RDSVL, ADDVL/ADDSVL/ADDSPL, ADD/SUB/MOV immediate, LDR/STR of Z and P, multi-vector
MOVA/MOVAZ, LUTI2/LUTI4 and the ZT0 instructions.

The outside truth is the machine's step (its semantics are QEMU-checked): every account's Check compares the
value its rule makes with what the step left, and the accounts together cover every register, array byte and
memory byte the step changed.  A handful of values are worked by hand from the Arm ARM (PTRUE VL3 at SVL 512 is
three active words; WHILELT from 5 to 9 four), and tampering with the after-state turns a Check unequal.
"""

from __future__ import annotations

import numpy as np
import pytest

from isasim.arm_sme import ISA
from isasim.arm_sme.config import FEATURES
from isasim.arm_sme.explain import example_text
from isasim.arm_sme.explain.workings_registers import REGISTER_ACCOUNTS
from isasim.arm_sme.forms import FORMS
from isasim.core.explain.model import Check
from isasim.core.machine import Machine

MEMORY = 0x100000
COVERED = [form for form in FORMS if any(pattern.match(form.id) for pattern, _ in REGISTER_ACCOUNTS)]


def run(text: str, svl: int, seed: int = 0, regs: dict | None = None):
    """The accounts of ``text`` run once from random state, and the machines before and after it."""
    rng = np.random.default_rng(seed)
    svlb = svl // 8
    arrays = {f"z{n}": rng.integers(0, 256, svlb, dtype=np.uint8).tobytes() for n in range(32)}
    arrays.update({f"p{n}": rng.integers(0, 256, svlb // 8, dtype=np.uint8).tobytes() for n in range(16)})
    arrays["za"] = rng.integers(0, 256, svlb * svlb, dtype=np.uint8).tobytes()
    arrays["zt0"] = rng.integers(0, 256, 64, dtype=np.uint8).tobytes()
    registers = {**{f"x{n}": MEMORY + 0x40 * n + int(rng.integers(0, 16)) for n in range(31)},
                 "sp": MEMORY + 0x8000, "svcr": 3, **(regs or {})}
    memory = [(MEMORY, rng.integers(0, 256, 0x10000, dtype=np.uint8).tobytes(), True)]
    config = {"svl": svl, "features": list(FEATURES)}
    before, after = Machine("arm_sme", config), Machine("arm_sme", config)
    for machine in (before, after):
        machine.load(machine.assemble(text), regs=registers, arrays=arrays, memory=memory)
    instruction = after.current_instruction()
    after.step()
    assert after.fault is None, after.fault
    return ISA.element_workings(instruction, before, after), before, after


def checks(workings) -> list[Check]:
    assert workings
    out = []
    for w in workings:
        assert isinstance(w.blocks[-1], Check), w.title
        out.append(w.blocks[-1])
    return out


def changed_locations(before, after) -> set[tuple[str, int]]:
    """(register or array, byte offset) of everything the step changed, and ("memory", address)."""
    out = set()
    for name in before.state.register_names():
        if name not in ("pc", "nzcv") and before.state.read_register(name) != after.state.read_register(name):
            out.add((name, 0))
    old, new = ISA.observed_arrays(before.state), ISA.observed_arrays(after.state)
    for name in old:
        a, b = np.frombuffer(old[name], np.uint8), np.frombuffer(new[name], np.uint8)
        out.update((name, int(i)) for i in np.flatnonzero(a != b))
    a = np.frombuffer(before.memory.read(MEMORY, 0x10000), np.uint8)
    b = np.frombuffer(after.memory.read(MEMORY, 0x10000), np.uint8)
    out.update(("memory", MEMORY + int(i)) for i in np.flatnonzero(a != b))
    return out


def accounted(workings) -> set[tuple[str, int]]:
    out = set()
    for w in workings:
        if w.location.startswith("x") or w.location == "sp":
            out.add((w.location, 0))
        else:
            out.update((w.location, w.offset + i) for i in range(w.size))
    return out


@pytest.mark.parametrize("svl", [128, 512])
@pytest.mark.parametrize("form", COVERED, ids=[form.id for form in COVERED])
def test_every_covered_form_has_accounts_whose_checks_hold_and_cover_what_it_wrote(form, svl):
    text = example_text(form)
    workings, before, after = run(text, svl, seed=svl)
    for check in checks(workings):
        assert check.equal, (text, check)
    assert changed_locations(before, after) <= accounted(workings), text


def _tamper(after, working) -> None:
    """Change the account's element in ``after`` (our own machine): a register's low bit, an array's or memory's
    first byte flipped."""
    state = after.state
    if working.location.startswith("x") or working.location == "sp":
        state.write_register(working.location, state.read_register(working.location) ^ 1)
    elif working.location == "memory":
        after.memory.write(working.offset, bytes([after.memory.read(working.offset, 1)[0] ^ 0xFF]))
    else:
        data = bytearray(state.array_bytes(working.location))
        data[working.offset] ^= 0xFF
        state.set_array(working.location, bytes(data))


@pytest.mark.parametrize("text", ["ptrue p3.s, vl3", "whilelo p1.h, x5, x6", "cntd x4, all, mul #3",
                                  "addsvl x1, x2, #-2", "add w1, w2, #5, lsl #12", "mov x7, #0x1234",
                                  "ldr z5, [x1, #2, mul vl]", "str p2, [x1, #1, mul vl]",
                                  "mova {z4.d-z7.d}, za.d[w8, 1, vgx4]", "mova za.d[w9, 0, vgx2], {z2.d-z3.d}",
                                  "movaz {z4.d-z5.d}, za.d[w8, 1, vgx2]",
                                  "luti4 z3.h, zt0, z1[1]", "ldr zt0, [x1]", "str zt0, [x2]", "zero {zt0}",
                                  "movt x5, zt0[16]", "movt zt0[8], x5"])
def test_a_tampered_after_state_turns_the_check_unequal(text):
    count = len(run(text, 512, seed=7, regs={"x5": 3, "x6": 11})[0])
    for k in sorted({0, count // 2, count - 1}):
        workings, before, after = run(text, 512, seed=7, regs={"x5": 3, "x6": 11})
        assert all(c.equal for c in checks(workings))
        working = workings[k]
        _tamper(after, working)
        rebuilt = ISA.element_workings(before.current_instruction(), before, after)
        match = [w for w in rebuilt if (w.location, w.offset, w.title) == (working.location, working.offset,
                                                                           working.title)]
        assert match and not match[0].blocks[-1].equal, (text, working.title)


# ---- values worked by hand from the Arm ARM -----------------------------------------------------------------------

def test_ptrue_vl3_of_words_at_svl_512_makes_three_active_elements():
    (working,), _, after = run("ptrue p3.s, vl3", 512)
    assert working.location == "p3"
    # elements 0-2 active: bits 0, 4, 8 of the 64-bit predicate (one bit per byte of Z, a word is 4 bytes)
    assert working.blocks[-1].explained == "11 01 00 00 00 00 00 00"
    assert bytes(after.state.p[3]).hex(" ") == "11 01 00 00 00 00 00 00"


def test_whilelt_from_5_to_9_makes_four_active_words_and_cntw_counts_svl_over_32():
    (working,), _, _ = run("whilelt p1.s, x5, x6", 256, regs={"x5": 5, "x6": 9})
    assert working.blocks[-1].explained == "11 11 00 00"  # elements 0-3 of 8: bits 0, 4, 8, 12
    (working,), _, _ = run("whilelt p1.s, w5, w6", 256, regs={"x5": 0xFFFFFFFF, "x6": 2})  # w5 = -1: 3 active
    assert working.blocks[-1].explained == "11 01 00 00"
    (working,), _, _ = run("whilelo p1.s, w5, w6", 256, regs={"x5": 0xFFFFFFFF, "x6": 2})  # unsigned: none
    assert working.blocks[-1].explained == "00 00 00 00"
    for svl, words in ((128, 4), (512, 16), (2048, 64)):
        (working,), _, _ = run("cntw x7", svl)
        assert (working.location, working.blocks[-1].explained) == ("x7", f"{words:#x} ({words})")


def test_rdsvl_and_addsvl_use_the_streaming_vector_length_in_bytes():
    (working,), _, _ = run("rdsvl x3, #3", 512)
    assert working.blocks[-1].explained == f"{3 * 64:#x} ({3 * 64})"
    (working,), before, _ = run("addspl x1, x2, #-2", 512)
    assert working.blocks[-1].explained.split()[0] == hex(before.state.x[2] - 2 * 8)


def test_luti2_takes_each_2_bit_index_from_the_chosen_quarter_of_zn():
    """luti2 z3.b, zt0, z1[1] at SVL 128: 16 byte elements, segments = 8 DIV 2 = 4, base = 1 x 16; element e is
    ZT0 entry UInt(z1's 2-bit field 16 + e), its low byte."""
    workings, before, after = run("luti2 z3.b, zt0, z1[1]", 128, seed=3)
    bits = int.from_bytes(before.state.z[1].tobytes(), "little")
    table = np.frombuffer(before.state.zt0.tobytes(), dtype="<u4")
    expected = [int(table[bits >> (2 * (16 + e)) & 3]) & 0xFF for e in range(16)]
    assert [int(w.blocks[-1].explained, 16) for w in workings] == expected == list(after.state.z[3])

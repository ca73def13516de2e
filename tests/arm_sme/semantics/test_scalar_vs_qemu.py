"""The A64 base instructions executed by isasim and by QEMU (>= 10.1), compared (issues 11 and 28).

Every data-processing form (MOVZ ... MSUB, BIC ... BICS, BFM, EXTR, the shifts by register, UDIV/SDIV,
RBIT ... CLS, the long and high multiplies, CSEL ... CSNEG, CCMP/CCMN; X and W) and every load/store form
(LDR/STR of X, W, B, H, the sign-extending loads, B/H/S/D/Q; unsigned offset, unscaled, pre- and post-index,
register offset; LDP/STP/LDPSW of W, X, S, D, Q with offset, pre- and post-index): random valid encodings
(random fields as the decoder reads them), random registers with many edge values (0, 1, 2^31, 2^63, all
ones, 2^31 - 1, 2^32 - 1, 2^63 - 1, junk above bit 31), random NZCV, and ADDS/SUBS/ANDS of every pair of
edge values.  A load or store's base register points into a random writable memory block so that base +
offset lands inside it (a register offset's index register holds a small value, negative for SXTW/SXTX).  The branches (B.cond for all 16 conditions, CBZ/CBNZ, TBZ/TBNZ) run as "branch over a
MOV" on random flags and registers, and a small loop uses B.cond, TBZ and CBNZ together.  The
data-processing forms and branches are compared at SVL 128; the loads and stores at 128, 512 and 2048 (a
Q load zeroes Z[t] above bit 127 up to the vector length); a block of cases starts with streaming
mode and ZA off (SVCR = 0).

X30 holds the harness's return address while a snippet runs (tests/arm_sme/differential.py), so
no case reads it: register fields that would name x30 are drawn again.
"""

from __future__ import annotations

import random

import pytest

from isasim.arm_sme import ISA
from isasim.arm_sme.forms import FORMS
from isasim.arm_sme.semantics import base_memory, base_register, scalar

from differential import MEMORY_BASE, compare_with_qemu, random_state

pytestmark = [pytest.mark.needs_qemu, pytest.mark.needs_clang]

SEED = 20261230
CASES_PER_FORM = 8
EDGES = [0, 1, 2, 1 << 31, 1 << 63, (1 << 64) - 1, (1 << 31) - 1, (1 << 32) - 1, (1 << 63) - 1,
         0xDEADBEEF_80000000, 0xFFFFFFFF_7FFFFFFF]
REGISTER_FIELDS = ("Rd", "Rn", "Rm", "Ra", "Rt", "Rt2")


def _semantics_module(form):
    execute = getattr(form.execute, "func", form.execute)
    return getattr(execute, "__module__", None)


# ADR, ADRP and LDR (literal) give or read addresses of the code, which is elsewhere under QEMU: test_base_vs_qemu.py
DATA_FORMS = [f for f in FORMS if _semantics_module(f) in (scalar.__name__, base_register.__name__)
              and not f.extra.get("position_dependent")]
MEMORY_FORMS = [f for f in FORMS if _semantics_module(f) == base_memory.__name__
                and not f.extra.get("position_dependent") and "size" in getattr(f.execute, "keywords", {})]
# (PRFM, which moves nothing, runs in test_base_vs_qemu.py's hints, from unmapped addresses too)


def random_registers(rng: random.Random) -> list[int]:
    return [rng.choice(EDGES) if rng.random() < 0.5 else rng.getrandbits(64) for _ in range(31)]


def random_fields(rng: random.Random, form) -> dict | None:
    """Random fields of ``form`` that decode to it (no x30), or None."""
    for _ in range(50):
        fields = {name: rng.randrange(1 << box.width) for name, box in form.encoding.fields.items()}
        if any(fields.get(name) == 30 for name in REGISTER_FIELDS):
            continue
        try:
            instruction = ISA.disassemble(form.encoding.pack(fields).to_bytes(4, "little")).instructions[0]
        except Exception:  # a reserved or UNDEFINED choice the decoder refuses
            continue
        if instruction.form is form:
            return fields
    return None


def text_of(form, fields) -> str:
    return ISA.disassemble(form.encoding.pack(fields).to_bytes(4, "little")).instructions[0].text


def outside_streaming_mode(state: dict, svl: int) -> dict:
    """SVCR = 0, and zero Z, P, ZA and ZT0: the harness dumps them after SMSTART, which zeroes them."""
    state["svcr"] = 0
    state["z"], state["p"] = [bytes(svl // 8)] * 32, [bytes(svl // 64)] * 16
    state["za"], state["zt0"] = bytes((svl // 8) ** 2), bytes(64)
    return state


def data_cases(rng: random.Random, svl: int, svcr: int = 3, per_form: int = CASES_PER_FORM) -> list:
    cases = []
    for form in DATA_FORMS:
        for _ in range(per_form if form.encoding.fields else 1):
            fields = random_fields(rng, form)
            state = random_state(rng, svl, memory_bytes=4096)
            state["x"] = random_registers(rng)
            if svcr == 0:
                outside_streaming_mode(state, svl)
            cases.append((form.id, text_of(form, fields), state))
    return cases


def flag_cases(rng: random.Random, svl: int) -> list:
    """ADDS, SUBS and ANDS of every pair of edge values, X and W: the carries and overflows of AddWithCarry."""
    cases = []
    for mnemonic in ("adds", "subs", "ands"):
        for width in ("x", "w"):
            for a in EDGES:
                for b in EDGES:
                    state = random_state(rng, svl, memory_bytes=4096)
                    state["x"] = random_registers(rng)
                    state["x"][1], state["x"][2] = a, b
                    cases.append((f"flags {mnemonic}", f"{mnemonic} {width}0, {width}1, {width}2", state))
    return cases


def _transfer(form) -> tuple[int, bool]:
    """(the bytes one register moves, whether the form moves a pair)."""
    return form.execute.keywords["size"], form.mnemonic in ("ldp", "stp", "ldpsw")


def _offset(form, fields, index: int) -> tuple[int, int]:
    """(the access's offset from the base register, its size in bytes); ``index`` is the index register's value."""
    size, pair = _transfer(form)
    if pair:
        raw = fields["imm7"]
        return ((raw - 128 if raw >> 6 else raw) * size if not form.id.endswith("_post") else 0), 2 * size
    if form.id.endswith("_uoff"):
        return fields["imm12"] * size, size
    if form.id.endswith("_reg"):
        return index << (size.bit_length() - 1 if fields["S"] else 0), size
    raw = fields["imm9"]
    signed = raw - 512 if raw >> 8 else raw
    return signed if form.id.endswith("_pre") or form.mnemonic.startswith(("ldur", "stur")) else 0, size


def memory_cases(rng: random.Random, svl: int, svcr: int = 3, per_form: int = CASES_PER_FORM) -> list:
    cases = []
    for form in MEMORY_FORMS:
        for _ in range(per_form):
            fields = random_fields(rng, form)
            while "Rm" in fields and fields["Rm"] in (fields["Rn"], fields["Rt"]):
                fields = random_fields(rng, form)  # the index register is neither the base nor the data
            state = random_state(rng, svl, svcr=svcr)
            state["x"] = random_registers(rng)
            if svcr == 0:
                outside_streaming_mode(state, svl)
            index = 0
            if "Rm" in fields and fields["Rm"] != 31:
                index = rng.randrange(-16, 16) if fields["option"] in (6, 7) else rng.randrange(32)
                state["x"][fields["Rm"]] = index & ((1 << 64) - 1) if fields["option"] != 6 else \
                    (rng.getrandbits(32) << 32) | (index & 0xFFFFFFFF)  # SXTW reads the low word only
            offset, size = _offset(form, fields, index)
            low, high = max(0, -offset), len(state["memory"]) - max(0, offset) - size
            base = MEMORY_BASE + rng.randrange(low, high + 1)
            if fields["Rn"] == 31:
                state["sp"] = base
            else:
                state["x"][fields["Rn"]] = base
            text = text_of(form, fields)
            if svcr == 0 and text.split()[1][0] in "bhsdq":
                # an FP/SIMD register outside streaming mode is seen only through memory: store it (them) at the
                # block's start, then SMSTART SM / SMSTOP SM (zeroing Z as the harness's dump will) so the states
                # compare
                spare = next(r for r in (29, 28, 27) if r not in (fields["Rn"], fields.get("Rm")))
                state["x"][spare] = MEMORY_BASE
                text += f"\nstr q{fields['Rt']}, [x{spare}]"
                if "Rt2" in fields:
                    text += f"\nstr q{fields['Rt2']}, [x{spare}, #16]"
                text += "\nsmstart sm\nsmstop sm"
            cases.append((form.id, text, state))
    return cases


def _flag_setting_value(rng: random.Random) -> int:
    return rng.choice(EDGES) if rng.random() < 0.7 else rng.getrandbits(64)


def branch_cases(rng: random.Random, svl: int) -> list:
    """Each branch skips "mov x0, #1" when taken: x0 (and the flags it was given) show which way it went."""
    cases = []
    branches = [f"b.{cond}" for cond in ("eq", "ne", "hs", "lo", "mi", "pl", "vs", "vc", "hi", "ls", "ge", "lt", "gt",
                                         "le", "al", "nv")]
    for name in branches:
        for nzcv in range(16):  # every flag combination for every condition
            state = random_state(rng, svl, memory_bytes=4096)
            state["nzcv"] = nzcv << 28
            cases.append((f"B_cond {name}", f"{name} taken\nmov x0, #1\ntaken:\nmov x1, #2", state))
    for _ in range(40):
        width = rng.choice(("x", "w"))
        kind = rng.choice(("cbz", "cbnz"))
        register = rng.randrange(1, 30)
        state = random_state(rng, svl, memory_bytes=4096)
        state["x"] = random_registers(rng)
        if rng.random() < 0.4:
            state["x"][register] = rng.choice([0, 1 << 32, 1 << 63, 0xFFFFFFFF_00000000])  # zero in W, not in X
        cases.append((f"{kind.upper()} {width}", f"{kind} {width}{register}, taken\nmov x0, #1\ntaken:\nnop", state))
    for _ in range(60):
        kind = rng.choice(("tbz", "tbnz"))
        register, bit = rng.randrange(1, 30), rng.randrange(64)
        width = "w" if bit < 32 and rng.random() < 0.5 else "x"
        state = random_state(rng, svl, memory_bytes=4096)
        state["x"] = random_registers(rng)
        cases.append((kind.upper(), f"{kind} {width}{register}, #{bit}, taken\nmov x0, #1\ntaken:\nnop", state))
    loop = """
        mov x0, #0
        mov w1, #10
    again:
        add x0, x0, x1, lsl #1
        subs w1, w1, #1
        b.ne again
        tbz x0, #1, even
        movk x0, #0xbeef, lsl #48
    even:
        mov x2, #3
    down:
        sub x2, x2, #1
        cbnz x2, down
        ret
    """
    state = random_state(rng, svl, memory_bytes=4096)
    cases.append(("loop", "\n".join(line.strip() for line in loop.strip().splitlines()), state))
    return cases


def _check(cases, svl):
    comparison = compare_with_qemu(cases, svl)
    assert not comparison.mismatches, comparison.report(svl)
    assert comparison.changed >= 0.9 * comparison.compared, \
        f"only {comparison.changed} of {comparison.compared} cases changed anything on QEMU: nothing was compared"
    return comparison


def test_every_data_processing_form_and_branch_agrees_with_qemu():
    rng = random.Random(SEED)
    cases = data_cases(rng, 128) + flag_cases(rng, 128) + branch_cases(rng, 128)
    assert {label for label, _, _ in cases} >= {form.id for form in DATA_FORMS if form.id != "NOP"}
    _check([case for case in cases if case[0] != "NOP"], 128)


@pytest.mark.parametrize("svl", (128, 512, 2048))
def test_every_load_and_store_form_agrees_with_qemu(svl):
    rng = random.Random(SEED + svl)
    # 148 forms: 8 cases each at SVL 128, 4 at the others (what the SVL changes is a Q/D/S/H/B load's zeroing)
    cases = memory_cases(rng, svl, per_form=CASES_PER_FORM if svl == 128 else CASES_PER_FORM // 2)
    assert {label for label, _, _ in cases} == {form.id for form in MEMORY_FORMS}
    _check(cases, svl)


def test_scalar_forms_agree_with_qemu_outside_streaming_mode():
    rng = random.Random(SEED + 1)
    cases = memory_cases(rng, 256, svcr=0, per_form=3) + data_cases(rng, 256, svcr=0, per_form=2)
    _check([case for case in cases if case[0] != "NOP"], 256)

"""The AdvSIMD (NEON) integer forms (issue 28: what clang emits in the plain C helpers around SME kernels)
against clang's assembler and QEMU: random operands of every form assemble to clang's words and print as clang
prints them; lines neither assembler takes are refused in one line; every form executed by isasim and by QEMU
outside streaming mode (V is the low 128 bits of Z: a write clears Z's bits above 128, seen at SVL 512 and 2048)
and inside it, where each is illegal without FEAT_SME_FA64 (SIGILL on QEMU, UNDEFINED in isasim)."""

from __future__ import annotations

import random
import re

import pytest

from clang_oracle import assert_refused_in_one_line, clang_accepts, clang_encode
from differential import compare_with_qemu, random_instruction, random_state
from isasim.arm_sme import ISA
from isasim.arm_sme.forms import FORMS

SEED = 2028_1206
FORMS_ADVSIMD = [form for form in FORMS if form.group == "advsimd"]
EDGES = bytes([0, 1, 0x7F, 0x80, 0xFF, 0xFE, 0x3F, 0x10])

# what clang -O1..-O3 emits in plain helpers (measured), with the alias spellings
WRITTEN = """
movi v0.2d, #0000000000000000
movi v1.4s, #127
mvni v2.4s, #127
movi d0, #0
movi v0.4s, #1, msl #8
add v0.2d, v0.2d, v1.2d
addp d0, v0.2d
addv s0, v0.4s
uaddlv h0, v1.16b
tbl v30.16b, { v28.16b }, v25.16b
tbx v0.8b, {v1.16b, v2.16b}, v3.8b
uaddw2 v6.2d, v6.2d, v30.4s
uaddw v1.2d, v1.2d, v31.2s
saddw2 v4.4s, v4.4s, v20.8h
saddl v0.8h, v1.8b, v0.8b
smull2 v20.8h, v16.16b, v17.16b
mov v0.d[0], x8
mov v0.s[0], w8
mov w0, v1.s[1]
umov w0, v1.b[3]
smov x0, v1.h[3]
mov v0.s[1], v2.s[3]
mov s0, v1.s[1]
dup v0.4s, w2
dup v0.8b, v1.b[3]
smin v4.4s, v2.4s, v1.4s
umaxv b0, v1.16b
cmgt v2.4s, v0.4s, v2.4s
cmeq v0.4s, v1.4s, #0
bsl v2.16b, v0.16b, v4.16b
mov v1.16b, v2.16b
mvn v0.16b, v1.16b
uzp1 v4.8h, v4.8h, v5.8h
xtn v4.8b, v4.8h
sqxtn2 v0.16b, v1.8h
sshll v4.8h, v4.8b, #0
sxtl v4.8h, v4.8b
uxtl2 v0.4s, v1.8h
shl v0.4s, v1.4s, #31
ushr v0.2d, v1.2d, #64
ext v0.16b, v1.16b, v2.16b, #15
zip2 v0.2d, v1.2d, v2.2d
"""

# neither clang nor isasim takes these (the reserved arrangements and out-of-range immediates); clang does take
# ext v0.8b, v1.8b, v2.8b, #8 (0x2e024020, imm4<3> set with Q = 0: RESERVED in the Arm ARM), which isasim refuses
REFUSED = [
    ("add v0.1d, v1.1d, v2.1d", "v0.1d"),
    ("smax v0.2d, v1.2d, v2.2d", ".2d"),
    ("addv s0, v1.2s", ".2s"),
    ("movi v0.4s, #256", "0-255"),
    ("movi v0.2d, #0x12", "0x00 or 0xff"),
    ("shl v0.4s, v1.4s, #32", "0-31, not 32"),
    ("ushr v0.4s, v1.4s, #0", "1-32, not 0"),
    ("tbl v0.16b, {v1.16b, v3.16b}, v2.16b", "consecutive"),
    ("mov v0.s[4], w1", "0-3"),
    ("uaddw v0.2d, v0.2d, v1.4s", ".4s"),
    ("movi v0.4s, #1, msl #24", "8 or 16"),
]


@pytest.mark.needs_clang
def test_advsimd_forms_agree_with_clang():
    rng = random.Random(SEED)
    texts = [random_instruction(rng, form) for form in FORMS_ADVSIMD for _ in range(4)]
    texts += [line.strip() for line in WRITTEN.strip().splitlines()]
    answers = clang_encode(texts)
    mismatches = []
    for text, (clang_text, clang_word) in zip(texts, answers):
        ours = int.from_bytes(ISA.assemble(text).instructions[0].encoding, "little")
        printed = ISA.disassemble(ours.to_bytes(4, "little")).instructions[0].text
        if clang_word != ours or " ".join(printed.split()) != " ".join(clang_text.split()):
            mismatches.append(f"{text}: isasim {ours:#010x} '{printed}', clang {clang_word} '{clang_text}'")
    assert not mismatches, "\n".join(mismatches[:20])
    assert len(texts) == 4 * len(FORMS_ADVSIMD) + len(WRITTEN.strip().splitlines())


@pytest.mark.needs_clang
@pytest.mark.parametrize("line, words", REFUSED)
def test_non_encodable_lines_are_refused_by_both(line, words):
    assert not clang_accepts([line])
    assert_refused_in_one_line(line, words)


# The QEMU harness loads and dumps Z in streaming mode, and leaving streaming mode zeroes Z (and V): so each case
# loads V0-V31 itself from the 512 bytes below SP (LDP Q, legal in both modes), runs the instruction, and stores
# V0-V31 back there, where the memory comparison sees every V register the instruction read or wrote.
LOAD = "\n".join(f"ldp q{2 * k}, q{2 * k + 1}, [sp, #{32 * k - 512}]" for k in range(16))
STORE = "\n".join(f"stp q{2 * k}, q{2 * k + 1}, [sp, #{32 * k - 512}]" for k in range(16))


def _instruction(rng, form):
    """A random instruction of ``form`` that reads no w30/x30 (x30 holds the harness's return address)."""
    while True:
        text = random_instruction(rng, form)
        if not re.search(r"\b[wx]30\b", text):
            return text


def _case(rng, forms, svl, svcr):
    """One case: V0-V31 loaded, an instruction of each of ``forms`` in turn, V0-V31 stored (in streaming mode the
    harness's Z are the V registers: the instructions alone)."""
    state = random_state(rng, svl, svcr=svcr, memory_bytes=1024)
    flavour = rng.randrange(3)
    vectors = rng.randbytes(512)
    if flavour == 1:  # small bytes: TBL indices in range, sums that do not wrap
        vectors = bytes(b & 0x3F for b in vectors)
    elif flavour == 2:  # the edges: equal elements for the compares, the saturation limits
        vectors = bytes(rng.choice(EDGES) for _ in vectors)
    state["memory"] = vectors + state["memory"][512:]
    body = "\n".join(_instruction(rng, form) for form in forms)
    return " ".join(form.id for form in forms), body if svcr & 1 else f"{LOAD}\n{body}\n{STORE}", state


def _cases(rng, svl, rounds, svcr=0, per_case=4):
    """``rounds`` times every form, shuffled, ``per_case`` forms a case (the 32 loads and stores shared)."""
    cases = []
    for _ in range(rounds):
        forms = FORMS_ADVSIMD[:]
        rng.shuffle(forms)
        cases += [_case(rng, forms[i:i + per_case], svl, svcr) for i in range(0, len(forms), per_case)]
    return cases


def _check(cases, svl):
    comparison = compare_with_qemu(cases, svl)
    assert not comparison.mismatches, comparison.report(svl)
    return comparison


@pytest.mark.needs_qemu
@pytest.mark.needs_clang
@pytest.mark.parametrize("svl, rounds", [(128, 4), (512, 2), (2048, 1)])
def test_every_advsimd_form_agrees_with_qemu_outside_streaming_mode(svl, rounds):
    rng = random.Random(SEED + svl)
    cases = _cases(rng, svl, rounds)
    comparison = _check(cases, svl)
    assert comparison.changed > comparison.compared * 0.9


@pytest.mark.needs_qemu
@pytest.mark.needs_clang
def test_every_advsimd_form_is_illegal_in_streaming_mode_as_on_qemu():
    rng = random.Random(SEED + 1)
    cases = [_case(rng, [form], 256, svcr=rng.choice((1, 3))) for form in FORMS_ADVSIMD]
    # UMOV and SMOV of element 0 are legal in streaming mode (QEMU runs them; any other index is SIGILL)
    moves = [case for case in cases if case[0].startswith(("UMOV", "SMOV"))]
    cases += [(label, re.sub(r"\[\d+\]", "[0]", text), state) for label, text, state in moves]
    _check(cases, 256)
    assert all(ISA.assemble(text).instructions[0].form.group == "advsimd" for _, text, _ in cases)

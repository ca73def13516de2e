"""Every arm_sme form's encoding and disassembly against clang, over random operand choices.

For each form, random words with the form's fixed bits and random operand fields are decoded
by isasim; the text isasim prints is assembled by clang, and clang's word must be the word
isasim's assembler makes of the same text, and clang's printed text must be isasim's
disassembly of that word (a branch's comment, its target's address, aside).  One clang run
assembles every case.  Branches are among them: isasim prints a target as clang does (``#offset``,
from the instruction), so a listing pasted into clang is the same program.
"""

from __future__ import annotations

import random

import pytest

from clang_oracle import assert_refused_in_one_line, clang_accepts, clang_encode, clang_text_section
from isasim.arm_sme import ISA
from isasim.arm_sme.forms import FORMS
from isasim.arm_sme.operands import BranchTarget

PER_FORM = 60
SEED = 20261201


def _canonical(text: str) -> str:
    """The text without spacing differences or a trailing comment (isasim's branch target address)."""
    return " ".join(text.split("//")[0].replace("\t", " ").split())


def _clang_comparable(form, fields) -> bool:
    """Operand choices clang cannot be asked about: encodings the Arm ARM makes UNDEFINED or CONSTRAINED
    UNPREDICTABLE (the decoder refuses them).  Aliases are not excluded: isasim prints llvm's alias."""
    if any(fields[name] == value for name, value in form.extra.get("reserved", {}).items()):
        return False  # UNDEFINED (the decoder refuses it): LD1W (scalar plus scalar) with Rm = 31
    if form.extra.get("undefined_when", lambda _: None)(fields):
        return False  # an extend's shift above 4, a bitmask immediate DecodeBitMasks refuses, ldr x0, [x0], #8
    return True


def random_cases(rng: random.Random):
    cases = []
    for form in FORMS:
        if form.extra.get("prefix"):
            continue  # MOVPRFX: clang refuses the next line unless it is its partner (checked in pairs elsewhere)
        made = 0
        while made < PER_FORM:
            fields = {name: rng.randrange(1 << box.width) for name, box in form.encoding.fields.items()}
            if not _clang_comparable(form, fields):
                continue
            word = form.encoding.pack(fields)
            cases.append((form, word))
            made += 1
            if not form.encoding.fields:
                break
    return cases


@pytest.mark.needs_clang
def test_every_form_agrees_with_clang_over_random_operands():
    rng = random.Random(SEED)
    cases = random_cases(rng)
    texts = [ISA.disassemble(word.to_bytes(4, "little")).instructions[0].text for _, word in cases]
    answers = clang_encode(texts)
    mismatches = []
    counted = {}
    for (form, word), text, (clang_text, clang_word) in zip(cases, texts, answers):
        counted[form.id] = counted.get(form.id, 0) + 1
        decoded = ISA.disassemble(word.to_bytes(4, "little")).instructions[0]
        assert decoded.form is form, (hex(word), decoded.form.id, form.id)
        ours = ISA.assemble(text).instructions[0].encoding
        if clang_word is None:
            mismatches.append(f"{text}: clang refuses it ({clang_text})")
        elif int.from_bytes(ours, "little") != clang_word:
            mismatches.append(f"{text}: isasim {int.from_bytes(ours, 'little'):#010x}, clang {clang_word:#010x}")
        elif _canonical(clang_text) != _canonical(text):
            mismatches.append(f"{word:#010x}: isasim prints '{text}', clang '{clang_text}'")
    assert not mismatches, f"{len(mismatches)} of {len(cases)} differ:\n" + "\n".join(mismatches[:20])
    dots = [f for f in FORMS if f.group == "dot"]
    assert len(dots) == 54 and all(counted[f.id] >= 50 for f in dots)
    with_operands = [f for f in FORMS if f.encoding.fields and not f.extra.get("prefix")]
    assert all(counted[f.id] >= 50 for f in with_operands), [f.id for f in with_operands if counted[f.id] < 50]
    branches = [f for f in FORMS if any(isinstance(k, BranchTarget) for k in f.operands)]
    # B, B.cond, CBZ/CBNZ (W, X), TBZ, TBNZ, BL; ADR, ADRP, the six LDR (literal) forms and PRFM (literal)
    assert len(branches) == 18 and all(counted[f.id] >= 50 for f in branches)


@pytest.mark.needs_clang
def test_branches_to_labels_agree_with_clang():
    rng = random.Random(SEED + 1)
    lines = []
    for n in range(200):  # forward and backward branches over random distances
        lines.append(f"l{n}:")
        kind = rng.choice(["b", "cbz", "cbnz"])
        register = "" if kind == "b" else f"x{rng.randrange(31)}, "
        lines.append(f" {kind} {register}l{rng.randrange(200)}")
        lines.extend([" nop"] * rng.randrange(3))
    ours = ISA.assemble("\n".join(lines), base=0).code
    assert ours == clang_text_section(lines)


# ---- what neither assembler accepts --------------------------------------------------------------

NOT_ENCODABLE = [
    ("udot za.s[w8, 0, vgx4], {z1.b-z4.b}, {z4.b-z7.b}", "multiple of 4"),  # misaligned list
    ("udot za.s[w8, 0, vgx2], {z1.h-z2.h}, {z4.h-z5.h}", "multiple of 2"),
    ("udot za.s[w8, 0, vgx4], {z2.b-z5.b}, z4.b[1]", "multiple of 4"),  # indexed lists are aligned too
    ("udot za.s[w8, 0, vgx2], {z0.h-z1.h}, z16.h", "z0-z15"),  # Zm above z15
    ("sdot za.s[w8, 0, vgx4], {z0.b-z3.b}, z20.b[1]", "z0-z15"),
    ("udot za.s[w12, 0, vgx4], {z0.b-z3.b}, z4.b", "w8-w11"),  # Wv outside w8-w11
    ("udot za.s[w7, 0, vgx4], {z0.b-z3.b}, z4.b", "w8-w11"),
    ("udot za.s[w8, 8, vgx4], {z0.b-z3.b}, z4.b", "0-7"),  # an offset above 7
    ("sudot za.s[w8, 0, vgx4], {z0.b-z3.b}, {z4.b-z7.b}", "no multi-vector SUDOT"),
    ("udot za.d[w8, 0, vgx4], {z0.h-z3.h}, z0.h[2]", "0-1"),  # the .D index is 0-1
    ("udot za.s[w8, 0, vgx4], {z0.h-z3.h}, z0.h[4]", "0-3"),
    ("udot za.s[w8, 0, vgx2], {z0.h-z3.h}, z0.h", "4 registers"),  # the list and VGx2 disagree
    ("udot za.s[w8, 0, vgx4], {z0.h, z2.h}, z0.h", "consecutive"),
    ("ptrue p16.b", "p0-p15"),  # predicates, counts and vector lengths
    ("ptrue p0.b, vl1, mul #2", "without a multiplier"),
    ("ptrue p0.s, #32", "0-31"),
    ("cntb x0, all, mul #17", "mul #1-16"),
    ("cntd x0, all, mul #0", "mul #1-16"),
    ("cntb sp", "sp is not allowed"),
    ("rdsvl sp, #1", "sp is not allowed"),
    ("addvl x0, x1, #32", "-32 to 31"),
    ("addsvl x0, x1, #-33", "-32 to 31"),
    ("whilelt p0.b, x1, w2", "not a 64-bit register"),
    ("whilelo p0.h, w1, xzr", "not a 32-bit register"),
    ("ldr za[w11, 0], [x0]", "w12-w15"),  # ZA array vectors and tile slices
    ("str za[w12, 16], [x0, #16, mul vl]", "0-15"),
    ("ldr za[w12, 1], [x0, #2, mul vl]", "must equal the vector select offset"),
    ("mov z0.h, p0/m, za2h.h[w12, 0]", "za0-za1"),
    ("mov z0.s, p8/m, za0h.s[w12, 0]", "p0-p7"),
    ("mova z0.s, p0/m, za0v.s[w12, 4]", "0-3"),
    ("mov za0h.q[w12, 1], p0/m, z0.q", "must be 0"),
    ("mov z0.b, p0/z, za0h.b[w12, 0]", "merges"),
    ("mov za0h.b[w11, 0], p0/m, z0.b", "w12-w15"),
    ("mov za7v.d[w12, 2], p0/m, z0.d", "0-1"),
    ("ld1w {za4h.s[w12, 0]}, p0/z, [x0, x1, lsl #2]", "za0-za3"),  # tile-slice and contiguous loads/stores
    ("ld1w {za0h.s[w12, 0]}, p0/z, [x0, x1, lsl #1]", "lsl #2"),
    ("ld1h {za0h.h[w12, 0]}, p0/m, [x0, x1, lsl #1]", "p0/z"),
    ("st1d {za0h.d[w12, 0]}, p0/z, [x0, x1, lsl #3]", "without /z"),
    ("ld1b {za0h.b[w11, 0]}, p0/z, [x0, x1]", "w12-w15"),
    ("ld1b {z0.b}, p0/z, [x0, xzr]", "x0-x30"),
    ("ld1w {z0.s}, p0/z, [x0, #8, mul vl]", "-8 to #7"),
    ("ld1w {z0.h}, p0/z, [x0]", "not this form's .s"),  # no LD1W into .H elements (a narrowing load)
    ("st1h {z0.b}, p0, [x0]", "not this form's .h"),
    ("ld1d {z0.d}, p8/z, [x0]", "p0-p7"),
    ("ld1b {z0.b, z1.b}, p0/z, [x0]", "predicate-as-counter"),  # two registers: SME2 LD1B under pn8-pn15
    ("ldr z0.b, [x0]", "without an element size"),  # whole Z and P registers
    ("ldr z0, [x0, #256, mul vl]", "#-256 to #255"),
    ("str p16, [x0]", "p0-p15"),
    ("str p0, [x0, #-257, mul vl]", "#-256 to #255"),
    ("mova {z1.d-z2.d}, za.d[w8, 0, vgx2]", "multiple of 2"),  # SME2 MOVA of ZA vector groups
    ("mova za.d[w8, 0, vgx4], {z2.d-z5.d}", "multiple of 4"),
    ("mov {z0.d-z3.d}, za.d[w12, 0, vgx4]", "w8-w11"),
    ("mov za.s[w8, 8, vgx2], {z0.s-z1.s}", "0-7"),
    ("umopa za4.s, p0/m, p1/m, z0.b, z1.b", "za0-za3"),  # the integer outer products
    ("smopa za8.d, p0/m, p1/m, z0.h, z1.h", "za0-za7"),
    ("umopa za0.s, p8/m, p1/m, z0.b, z1.b", "p0-p7"),
    ("sumops za0.s, p0/m, p1/z, z0.b, z1.b", "merges"),
    ("usmopa za0.s, p0/m, p1/m, z0.h, z1.h", "not this form's .b"),  # no 2-way USMOPA
    ("uvdot za.s[w8, 0, vgx4], {z1.b-z4.b}, z0.b[0]", "multiple of 4"),  # the vertical dots
    ("svdot za.s[w8, 0, vgx2], {z1.h-z2.h}, z0.h[0]", "multiple of 2"),
    ("usvdot za.s[w8, 0, vgx4], {z0.b-z3.b}, z16.b[0]", "z0-z15"),
    ("suvdot za.s[w8, 0, vgx2], {z0.b-z1.b}, z0.b[0]", "vgx4"),  # SUVDOT is VGx4 only
    ("uvdot za.d[w8, 0, vgx4], {z0.h-z3.h}, z0.h[2]", "0-1"),
    ("svdot za.s[w8, 0, vgx4], {z0.b-z3.b}, z0.b", "indexed"),  # vertical dots are indexed only
]


@pytest.mark.parametrize("line, words", NOT_ENCODABLE)
def test_isasim_refuses_what_cannot_be_encoded_in_one_line(line, words):
    assert_refused_in_one_line(line, words)


@pytest.mark.needs_clang
def test_clang_refuses_the_same_lines():
    assert not clang_accepts([line for line, _ in NOT_ENCODABLE])


def test_no_word_decodes_to_two_forms():
    forms = list(FORMS)
    for a in forms:
        for b in forms:
            if a is not b:
                common = a.encoding.mask & b.encoding.mask
                assert (a.encoding.value ^ b.encoding.value) & common, (a.id, b.id)

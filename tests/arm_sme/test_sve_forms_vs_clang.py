"""The SVE and SME2 forms of issue 28 (forms/sve_data.py, sve_arith.py, sve_misc.py, sve_multi.py, sme2_za.py) beside clang, on the lines
compiled ACLE kernels hold and on lines nobody can encode.  (Their random operands are in
test_encoding_vs_clang.py with every other form.)

Each compiled-code line is one zig's clang -O0..-O3 printed for the project's ACLE kernels (llvm's spelling:
MOV for ORR, DUP, SEL and MOVA; ``{ z0.b - z3.b }``; ``pn8/z``): isasim assembles it to clang's word and
prints clang's text.  Each non-encodable line is refused by clang and by isasim, in one line naming the rule.
"""

from __future__ import annotations

import pytest

from clang_oracle import assert_refused_in_one_line, clang_answers, clang_encode
from isasim.arm_sme import ISA

pytestmark = pytest.mark.needs_clang

COMPILED = [
    "mov z0.d, z16.d", "ptrue pn8.b", "ptrue pn8.s", "ld1b { z0.b - z3.b }, pn8/z, [x0, x9]",
    "ld1b { z4.b, z5.b }, pn8/z, [x1, x8]", "ld1b { z0.b, z4.b, z8.b, z12.b }, pn8/z, [x0, x9]",
    "ld1b { z0.b - z3.b }, pn8/z, [x8]", "st1w { z0.s - z3.s }, pn8, [x2]", "st1b { z0.b, z1.b }, pn8, [x9, x10]",
    "whilelo pn8.b, x9, x3, vlx4", "mov { z0.s - z3.s }, za0h.s[w12, 0:3]", "mov p8.b, p0.b", "mov z2.s, #7",
    "mov z7.s, s7", "mov z1.b, w10", "add z0.s, z0.s, z1.s", "saddv d0, p0, z0.s", "uaddv d1, p1, z7.b",
    "smaxv s2, p0, z5.s", "sminv s1, p0, z3.s", "orv s7, p0, z6.s", "eorv s2, p0, z4.s",
    "addha za0.s, p0/m, p0/m, z0.s", "addva za0.s, p0/m, p0/m, z0.s", "zero { zt0 }", "ldr zt0, [x0]",
    "luti4 z0.b, zt0, z1[0]", "luti2 z0.b, zt0, z1[1]", "luti4 { z0.b, z1.b }, zt0, z1[0]",
    "index z1.s, #3, #-2", "sel z2.s, p1, z3.s, z1.s", "zip1 z4.s, z2.s, z0.s", "uzp2 z6.s, z4.s, z3.s",
    "trn1 z5.s, z6.s, z2.s", "cntp x8, p0, p0.s", "psel p0, p1, p0.s[w12, 0]", "mov z0.s, p1/m, z2.s",
    "mov p0.b, p1/z, p2.b", "not p0.b, p1/z, p2.b", "inch z1.h", "whilele p0.s, x1, x2", "cntp x8, pn8.s, vlx2",
    "incb x9", "incb x8, all, mul #4", "incd x8, all, mul #5", "rdvl x8, #1", "mla z3.s, p0/m, z2.s, z1.s",
    "cmpgt p1.s, p0/z, z3.s, #7", "cmpgt p0.s, p0/z, z0.s, z1.s", "smax z7.s, p0/m, z7.s, z3.s",
    "sub z0.b, z0.b, #1", "ext z3.b, { z5.b, z6.b }, #12", "tbl z1.s, { z3.s }, z1.s", "incp x9, p0.s",
    "ld1rqw { z3.s }, p1/z, [x0]",
]

NOT_ENCODABLE = [
    ("ld1b { z1.b - z4.b }, pn8/z, [x0, x1]", "multiple of 4"),
    ("ld1b { z0.b, z1.b }, pn7/z, [x0, x1]", "pn8-pn15"),
    ("ld1w { z0.s, z1.s }, pn8/z, [x0, x1]", "lsl #2"),
    ("ld1b { z0.b, z1.b }, pn8/z, [x0, #3, mul vl]", "multiple of 2"),
    ("ld1b { z0.b - z3.b }, pn8/z, [x0, #32, mul vl]", "-32 to #28"),
    ("st1b { z0.b, z1.b }, pn8/z, [x0, x1]", "without /z"),
    ("ld1b { z8.b, z16.b }, pn8/z, [x0, x1]", "not consecutive"),  # strided lists start at z0-z7 or z16-z23
    ("ptrue pn7.b", "pn8-pn15"),
    ("whilelt pn8.b, x0, x1, vlx3", "vlx2 or vlx4"),
    ("mov { z1.s - z4.s }, za0h.s[w12, 0:3]", "multiple of 4"),
    ("mov { z0.s - z3.s }, za0h.s[w12, 1:4]", "multiple of 4"),
    ("mov { z0.s, z1.s }, za4h.s[w12, 0:1]", "za0-za3"),
    ("mov { z0.s, z1.s }, za0h.s[w11, 0:1]", "w12-w15"),
    ("psel p0, p1, p0.s[w11, 0]", "w12-w15"),
    ("psel p0, p1, p0.s[w12, 4]", "0-3"),
    ("luti4 z0.b, zt0, z1[8]", "0-7"),
    ("mov z0.b, #1, lsl #8", "lsl #8"),
    ("mov z0.s, #257", "shifted by 8"),
    ("index z0.s, #16, #1", "-16 to 15"),
    ("addha za4.s, p0/m, p0/m, z0.s", "za0-za3"),
    ("addha za0.s, p8/m, p0/m, z0.s", "p0-p7"),
    ("sub z0.b, z0.b, #1, lsl #8", "not on .b"),
    ("ext z0.b, z0.b, z1.b, #256", "0-255"),
    ("ld1rqw { z0.s }, p0/z, [x0, #8]", "multiple of 16"),
    ("cmpgt p0.s, p0/z, z0.s, #16", "-16 to 15"),
    ("cmphi p0.s, p0/z, z0.s, #128", "0-127"),
    ("sdiv z0.b, p0/m, z0.b, z1.b", "not this form's"),
    ("incb x0, all, mul #17", "mul #1-16"),
]


def test_compiled_lines_agree_with_clang():
    answers = clang_encode(COMPILED)
    for line, (clang_text, clang_word) in zip(COMPILED, answers):
        assert clang_word is not None, (line, clang_text)
        ours = ISA.assemble(line).instructions[0]
        assert int.from_bytes(ours.encoding, "little") == clang_word, line
        assert ISA.disassemble(ours.encoding).instructions[0].text == " ".join(clang_text.split()), line


def test_what_cannot_be_encoded_is_refused_by_both():
    answers = clang_answers([line for line, _ in NOT_ENCODABLE])
    assert [line for (line, _), answer in zip(NOT_ENCODABLE, answers) if answer.accepted] == []
    for line, words in NOT_ENCODABLE:
        assert_refused_in_one_line(line, words)

"""Random words and random text never crash the arm_sme decoder or assembler: a word either decodes
to text that assembles back to the same word, or is refused with DecodeError; text either assembles
or is refused with one AssemblyError line."""

from __future__ import annotations

import random

from hypothesis import given, settings
from hypothesis import strategies as st

from isasim.arm_sme import ISA
from isasim.arm_sme.forms import FORMS
from isasim.core.errors import DecodeError, IsasimError


def _round_trip(word: int) -> None:
    try:
        program = ISA.disassemble(word.to_bytes(4, "little"))
    except DecodeError as error:
        assert "cannot decode" in str(error)
        return
    instruction = program.instructions[0]
    text = instruction.text
    # a form that a word may spell two ways (a bitmask immediate's unread immr bits) names the one assembly makes
    canonical = instruction.form.extra.get("canonical", lambda fields: fields)(instruction.extra["fields"])
    assert ISA.assemble(text).code == instruction.form.encoding.pack(canonical).to_bytes(4, "little"), text


@settings(max_examples=1000, deadline=None)
@given(st.integers(0, 2**32 - 1))
def test_any_word_decodes_and_assembles_back_or_is_refused(word):
    _round_trip(word)


def test_words_near_every_form_round_trip():
    # random words inside each form's fixed bits, so every form's decoder is exercised, not only UDF's
    rng = random.Random(11)
    for form in FORMS:
        for _ in range(200):
            _round_trip(form.encoding.value | (rng.getrandbits(32) & ~form.encoding.mask))


_PIECES = ["udot", "sdot", "usdot", "sudot", "za.s", "za.d", "[w8,", "[w12,", " 0", " 7", " 8", ", vgx2]", ", vgx4]",
           "]", ", {z0.b-z1.b}", ", {z0.h-z3.h}", ", {z31.h, z0.h}", ", z4.b", ", z16.h", ", z3.h[1]", ", z3.h[9]",
           ", {z4.b-z7.b}", "mov x1, #", "0x10000", "-1", "smstart", " za", "zero {za", "}", "ldr x0, [x1, #8]",
           "//", ":", "lab", "\t", ",", "{", "#", "ptrue p0.s", ", vl4", ", mul #3", "cntb x0", "whilelt p1.b, x0",
           "ldr za[w12, 0]", ", [x0, #1, mul vl]", "ld1w {za0h.s[w12, 0]}", "{z0.s}", ", p0/z", ", p0/m", ", [x0, x1",
           ", lsl #2]", "mov z0.s, p0/m, za1v.s[w13, 1]", "za3h.d[w15, 1]", "st1b", "addvl sp, sp, #-1"]


@settings(max_examples=1000, deadline=None)
@given(st.lists(st.sampled_from(_PIECES), max_size=8).map("".join) | st.text(max_size=40))
def test_any_text_assembles_or_is_one_error_line(text):
    try:
        ISA.assemble(text, source="t.s")
    except IsasimError as error:
        message = str(error)
        assert "\n" not in message and message.startswith("t.s:")


def test_a_number_of_thousands_of_digits_is_one_error_line(tmp_path, capsys):
    # found by tests/fuzz/test_fuzz_traces.py from a golden trace: int() refuses more than 4,300 digits
    from cli_harness import error_line

    program = tmp_path / "long.s"
    program.write_text(f"usdot za.s[w9, {'9' * 5001}, vgx2], {{z0.b-z1.b}}, z4.b\n")
    error_line(capsys, ["asm", str(program), "--isa", "arm_sme"], "long.s:1", "5001 digits")

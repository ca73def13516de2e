"""Random words never crash the arm_sme decoder: a word either decodes to text that assembles back to
the same word, or is refused with DecodeError (random text through the assembler: test_assembler.py).

A consistency test (marked ``consistency``): the decoder and the assembler read the same declarations,
so a round trip shows only that they agree with each other; that the words and texts are Arm's is
checked against clang (test_encoding_vs_clang.py, test_assembler_vs_clang.py)."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from isasim.arm_sme import ISA
from isasim.arm_sme.forms import FORMS
from isasim.core.errors import DecodeError

pytestmark = pytest.mark.consistency


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
    # (40 per form: 2,366 forms at 200 each took three and a half minutes of the suite; test_encoding_vs_clang.py
    # round-trips 60 more per form through clang)
    rng = random.Random(11)
    for form in FORMS:
        for _ in range(40):
            _round_trip(form.encoding.value | (rng.getrandbits(32) & ~form.encoding.mask))

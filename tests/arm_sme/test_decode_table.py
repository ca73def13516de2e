"""The decoder's decode table finds the form a scan of every declaration finds.

A consistency test (marked ``consistency``): both sides read the same declarations, so it shows only
that the table is a faithful index of them; that the declarations are right is checked against clang
(test_encoding_vs_clang.py) and QEMU.
"""

import random

import pytest

from isasim.arm_sme.decoder import DECODE_TABLE, find_form
from isasim.arm_sme.forms import FORMS

pytestmark = pytest.mark.consistency


def scan(word):
    """The first declared form whose fixed bits the word has: what the table stands in for."""
    for form in FORMS:
        if word & form.encoding.mask == form.encoding.value:
            return form
    return None


def test_every_form_is_found_from_random_fills_of_its_open_bits():
    rng = random.Random(26)
    for form in FORMS:
        open_bits = ~form.encoding.mask & 0xFFFFFFFF
        for _ in range(64):
            word = form.encoding.value | (rng.getrandbits(32) & open_bits)
            assert find_form(word) is scan(word), (form.id, hex(word))
            assert find_form(word) is form, (form.id, hex(word))


def test_words_one_bit_away_from_a_form_decode_as_the_scan_decodes_them():
    # A flipped fixed bit is where a table that splits on the wrong bits would go astray.
    rng = random.Random(2026)
    for form in FORMS:
        word = form.encoding.value | (rng.getrandbits(32) & ~form.encoding.mask & 0xFFFFFFFF)
        for position in range(32):
            flipped = word ^ (1 << position)
            assert find_form(flipped) is scan(flipped), (form.id, hex(flipped))


def test_random_words_decode_as_the_scan_decodes_them():
    rng = random.Random(7)
    for _ in range(20000):
        word = rng.getrandbits(32)
        assert DECODE_TABLE.find(word) is scan(word), hex(word)

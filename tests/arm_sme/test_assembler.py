"""Random text never crashes the arm_sme assembler: text either assembles or is refused with one
AssemblyError line (random words through the decoder: test_decoder.py)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from isasim.arm_sme import ISA
from isasim.core.errors import IsasimError

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

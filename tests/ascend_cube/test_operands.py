"""The numbers of Ascend program text and of the stepper's Ascend locations are C++ integer literals.

The truth is a C++ compiler's: every spelling isasim accepts must compile to the value isasim reads, and
every spelling isasim refuses must be one g++ refuses too, or an octal literal (which isasim refuses by
choice, its message naming the value C++ gives it).  These tests skip, saying so, without g++.
"""

from __future__ import annotations

import re
import shutil
import subprocess

import pytest

from isasim.ascend_cube import ISA
from isasim.ascend_cube.operands import NumberError, read_integer
from isasim.cli import main
from isasim.core.errors import AssemblyError

ACCEPTED = ["0", "7", "16", "4096", "0x10", "0X1F", "0xfull", "0b101", "0B1", "1'000", "0x10'00", "0b1'0",
            "16u", "16U", "16l", "16LL", "16ull", "16LLU", "0x10UL", "18446744073709551615u", "0xffffffffffffffff",
            "0x00000000000000000000001", "1'8446'7440'7370'9551'615ULL", "9223372036854775807"]
REFUSED = ["016", "00", "0'17", "09", "08'0", "1e3", "1_000", "0x", "0b", "0b2", "0x'1", "1''0", "1'", "'1",
           "18446744073709551616", "0x10000000000000000", "16uu", "16lL", "0x1g", "1.0", "99999999999999999999u", "9223372036854775808",
           "18446744073709551615"]
MMAD = "Mmad(c=L0C[0], a=L0A[0], b=L0B[0], aType=int8, bType=int8, m={m}, n=16, k=32)"


def _gpp():
    gpp = shutil.which("g++")
    if gpp is None:
        pytest.skip("g++ is not installed: it is the oracle for what C++ makes of each spelling")
    return gpp


def _compile_and_run(tmp_path, literals: list[str]) -> list[int]:
    source = tmp_path / "values.cpp"
    body = "".join(f'    std::printf("%llu\\n", (unsigned long long)({lit}));\n' for lit in literals)
    source.write_text(f"#include <cstdio>\nint main() {{\n{body}}}\n")
    binary = tmp_path / "values"
    subprocess.run([_gpp(), "-std=c++17", "-pedantic-errors", str(source), "-o", str(binary)], check=True,
                   capture_output=True)
    return [int(line) for line in subprocess.run([str(binary)], check=True, capture_output=True,
                                                 text=True).stdout.split()]


def _lines_gpp_refuses(tmp_path, literals: list[str]) -> set[int]:
    """The (1-based) literals that g++ -std=c++17 -pedantic-errors rejects as integer literals (ill-formed, or
    of a type that is not an integer: 1e3), one per line of a file after the #include."""
    source = tmp_path / "refused.cpp"
    source.write_text("#include <type_traits>\n" + "".join(f"static_assert(std::is_integral_v<decltype({lit})>);\n"
                                                            for lit in literals))
    result = subprocess.run([_gpp(), "-std=c++17", "-pedantic-errors", "-fsyntax-only", str(source)],
                            capture_output=True, text=True)
    return {int(n) - 1 for n in re.findall(r"refused\.cpp:(\d+):\d+: error", result.stderr)}


def test_every_accepted_spelling_has_the_value_gpp_gives_it(tmp_path):
    assert [read_integer(lit) for lit in ACCEPTED] == _compile_and_run(tmp_path, ACCEPTED)


def test_every_refused_spelling_is_ill_formed_cpp_or_octal_with_the_value_gpp_gives(tmp_path):
    ill_formed = _lines_gpp_refuses(tmp_path, REFUSED)
    octal = [lit for i, lit in enumerate(REFUSED, start=1) if i not in ill_formed]
    assert octal and all(lit.startswith("0") and lit[1:2] in "01234567'" for lit in octal), octal
    values = _compile_and_run(tmp_path, octal)
    for lit, value in zip(octal, values):
        with pytest.raises(NumberError, match=rf"C\+\+ reads it as octal, {value};"):
            read_integer(lit)
    for lit in REFUSED + ["1z"]:  # 1z: C++23's size_t suffix (g++ 12 takes it in C++17 mode, silently)
        with pytest.raises(NumberError):
            read_integer(lit)


@pytest.mark.parametrize("spelling, words", [
    ("016", "leading 0: C++ reads it as octal, 14"),  # the case: was an internal error (exit 70)
    ("1" + "0" * 5000, "above 2^64 - 1"),  # past Python's 4,300-digit int() limit: was exit 70
    ("\u0661\u0666", "is not one of C++'s digits"),  # Python's int() reads Arabic-Indic 16
    ("\uff11\uff16", "is not one of C++'s digits"),  # and fullwidth 16
    ("-16", "a sign is not part of a C++ integer literal"),
], ids=["octal", "5001-digits", "arabic-indic", "fullwidth", "negative"])
def test_a_bad_number_in_a_program_is_one_line_exit_2(spelling, words, tmp_path, capsys):
    program = tmp_path / "p.asc"
    program.write_text(MMAD.format(m=spelling) + "\n")
    assert main(["run", str(program), "--isa", "ascend_cube"]) == 2
    error = capsys.readouterr().err
    assert words in error and f"{program}:1: m=" in error
    assert error.count("\n") == 1 and len(error) < 400


def test_every_numeric_spelling_reaches_every_number_the_parser_reads():
    program = ISA.assemble("DataCopy(dst=L1[0b100000], src=GM[0x1'0000], blockLen=16u, srcStride=1'0)")
    assert program.instructions[0].operands[:5] == (32, 0x10000, 1, 16, 10)
    with pytest.raises(AssemblyError, match="src=0100 has a leading 0"):
        ISA.assemble("DataCopy(dst=L1[0], src=GM[0100], blockLen=1)")


def test_lines_end_at_newlines_only_as_in_cpp():
    """U+2028, NEL, form feed and vertical tab end a line for str.splitlines, not for C++: a program whose two
    calls they separate is one line that is not an instruction, and a form feed inside a line is blank."""
    one = "SetAtomicNone()"
    for separator in ("\u2028", "\x85", "\x1e"):
        with pytest.raises(AssemblyError, match=r":1: "):
            ISA.assemble(one + separator + one, source="p")
    assert len(ISA.assemble(f"{one}\r\n\x0c{one}\v\n").instructions) == 2
    with pytest.raises(AssemblyError):  # a Unicode space is not C++ whitespace
        ISA.assemble("Mmad(c=L0C[0], a=L0A[0], b=L0B[0], aType=int8, bType=int8, m=\u200316, n=16, k=32)")


@pytest.mark.parametrize("command, words", [
    ("p l1[016]", "leading 0"),
    ("p l1[\u0661]", "is not one of C++'s digits"),
    ("p l1[" + "9" * 5000 + "]", "above 2^64 - 1"),
    ("p l0c.nd[016x16]", "leading 0"),
    ("p l0c.nd[0x0x16]", "at least 1"),
    ("w l0c[0:" + "9" * 30 + "]", "above 2^64 - 1"),
    ("p fixpipe[016,1]", "leading 0"),
], ids=["offset-octal", "offset-arabic-indic", "offset-5000-digits", "nd-octal", "nd-zero-rows", "watch-huge",
        "fixpipe-octal"])
def test_a_bad_number_in_a_stepper_location_is_one_line(command, words, capsys):
    assert main(["step", "examples/ascend_cube/int8_gemm.trace.json", "--commands", f"s 7; {command}"]) == 2
    error = capsys.readouterr().err
    assert words in error and error.count("\n") == 1


def test_stepper_locations_read_numbers_as_the_program_does(capsys):
    """l1[0x40] is l1[64], and l0c.nd[0x10x0x10] the 16 x 16 matrix l0c.nd[16x16] is."""
    outputs = []
    for pair in (("p l1[0x40]", "p l0c.nd[0x10x0x10]"), ("p l1[64]", "p l0c.nd[16x16]")):
        assert main(["step", "examples/ascend_cube/int8_gemm.trace.json", "--no-color", "--commands",
                     f"s 7; {pair[0]}; {pair[1]}"]) == 0
        outputs.append(capsys.readouterr().out.replace("0x40", "64").replace("0x10x0x10", "16x16"))
    assert outputs[0] == outputs[1]

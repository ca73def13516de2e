"""Property tests: random text, bytes and trace JSON give a result or a documented one-line error, never a crash.

The documented errors are the IsasimError family (AssemblyError, DecodeError,
TraceFormatError, ...).  Anything else escaping is a bug.
"""

from __future__ import annotations

import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from trace_mutations import json_values, only_documented_errors, paths, replaced

from isasim.core.replay import replay
from isasim.core.trace import parse_trace
from isasim.x86_amx import ISA
from isasim.x86_amx.forms import amx

SETTINGS = settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# Fragments that make random text look like assembly, so the parser's deeper paths get exercised.
WORDS = sorted({f.mnemonic for f in amx.FORMS} | {
    "mov", "add", "sub", "jnz", "jmp", "ret", "lea", "imul", "cmp", "xor", "inc", "dec", "test", "nop",
    "tmm0", "tmm7", "tmm8", "rax", "rdi", "rsi*4", "r8", "eax", "al", "ah", "riz", "rip", "[", "]", "+", "-", "*",
    ",", ":", ";", "#", "0x", "0b1", "017", "09", "-1", "99999999999999999999", "QWORD PTR", "BYTE PTR", "ds:",
    ".byte", ".set", ".intel_syntax noprefix", ".p2align", "label", "label:", "\n", " ", "(", ")", "<<", "~",
})
assembly_text = st.one_of(
    st.text(max_size=200),
    st.lists(st.sampled_from(WORDS), max_size=30).map(" ".join),
    st.lists(st.sampled_from(WORDS), max_size=30).map("".join),
)


@SETTINGS
@given(assembly_text)
def test_assembler_accepts_or_reports_one_line(text):
    program = only_documented_errors(ISA.assemble, text)
    if program is not None:  # whatever assembles, disassembles to the same bytes
        again = ISA.disassemble(program.code)
        assert again.code == program.code


@SETTINGS
@given(st.binary(max_size=64))
def test_decoder_accepts_or_reports_one_line(code):
    program = only_documented_errors(ISA.disassemble, code)
    if program is not None:
        assert program.code == code


def vex_like():
    """Bytes that start like an AMX instruction, so every VEX field combination is tried."""
    return st.builds(
        lambda prefix, b1, b2, op, rest: prefix + bytes([0xC4, b1, b2, op]) + rest,
        st.sampled_from([b"", b"\x66", b"\xf2", b"\xf3", b"\xf0", b"\x48", b"\x67", b"\x2e"]),
        st.integers(0, 255), st.integers(0, 255), st.sampled_from([0x49, 0x4B, 0x5C, 0x5E, 0x00, 0xFF]),
        st.binary(max_size=10),
    )


@SETTINGS
@given(vex_like())
def test_vex_bytes_decode_to_an_instruction_a_ud_or_a_one_line_error(code):
    program = only_documented_errors(ISA.disassemble, code)
    if program is not None:
        assert program.code == code
        for ins in program.instructions:
            assert ins.invalid is None or ins.text == "(bad)"


VALID_TRACE = {
    "format": "isasim-trace/1",
    "isa": "x86_amx",
    "config": {"cpu": "emerald-rapids"},
    "program": ["ldtilecfg [rcx]", "tilezero tmm0", "tilestored [rdx+rsi*1], tmm0"],
    "init": {"regs": {"rcx": "0x10000", "rdx": "0x20000", "rsi": 64},
             "memory": [{"addr": "0x10000", "hex": "01" + "00" * 15 + "4000" + "00" * 30 + "10" + "00" * 15},
                        {"addr": "0x20000", "size": 1024}]},
    "expect": {"regs": {"rsi": 64}, "fault": None, "memory": [{"addr": "0x20000", "hex": "00" * 1024}]},
}

ALL_PATHS = list(paths(VALID_TRACE))[1:]


def mutate(path, replacement):
    return replaced(VALID_TRACE, path, replacement)


@SETTINGS
@given(json_values)
def test_random_json_is_a_trace_or_a_one_line_error(value):
    trace = only_documented_errors(parse_trace, value)
    if trace is not None:
        only_documented_errors(replay, trace, "sim", 10_000)


@SETTINGS
@given(st.sampled_from(ALL_PATHS), json_values)
def test_a_valid_trace_with_one_value_replaced_parses_and_replays_or_errs_in_one_line(path, replacement):
    data = mutate(path, replacement)
    json.dumps(data)
    trace = only_documented_errors(parse_trace, data)
    if trace is not None:
        only_documented_errors(replay, trace, "sim", 10_000)

"""The encoding view of the vector moves (explain/encoding_view.vector_encoding) against GNU binutils.

Every line of the vector corpus, vector_cases.py (and g++'s own bytes), is assembled by GNU as; explained from
those bytes, the view must split exactly them into its byte units, in order, and every register it says
a field holds must be the register GNU objdump prints in that operand, with the register number the
SDM's layout gives it (ModRM.reg with R and EVEX R', r/m with B and EVEX X, vvvv with EVEX V').  An EVEX
disp8 must be read as disp8 x N with the displacement objdump prints.
"""

from __future__ import annotations

import re

import pytest
from gnu_binutils import gas, needs_binutils
from vector_cases import CASES, GXX_BYTES

from isasim.core.explain import ExplainOptions
from isasim.x86_amx.explain import explain
from isasim.x86_amx.operands import GPR_VIEWS, vector_register


@pytest.fixture(scope="module")
def gnu():
    return gas(CASES)


def register_number(name: str) -> int:
    vector = vector_register(name)
    if name.startswith("k"):
        return int(name[1:])  # an opmask register
    return vector.number if vector is not None else GPR_VIEWS[name].number


def encoding_of(code: bytes):
    expl = explain(None, code, ExplainOptions())
    section = next(s for s in expl.sections if s.title == "Encoding")
    return expl, section.blocks[1]


def check_view(code: bytes, text: str) -> None:
    expl, encoding = encoding_of(code)
    at = 0
    for unit in encoding.units:  # the units are the bytes, each once, in order
        assert unit.offset == at and code[at:at + len(unit.data)] == unit.data, (text, unit.name)
        at += len(unit.data)
    assert at == len(code), text
    named = [m for unit in encoding.units for f in unit.fields
             for m in re.finditer(r"register (\d+): (\S+)", f.meaning)]
    outside_memory = re.sub(r"\[[^]]*\]|\{[^}]*\}", "", text.split(None, 1)[1] if " " in text else "")
    registers = re.findall(r"\b([xyz]mm\d+|[er][a-z]x|r\d+d?|k[0-7])\b", outside_memory)
    assert sorted(m[2] for m in named) == sorted(registers), (text, [m[0] for m in named])
    for m in named:
        assert int(m[1]) == register_number(m[2]), (text, m[0])
    disp = [f.meaning for unit in encoding.units for f in unit.fields if unit.name.startswith("disp")]
    if code[0] == 0x62 and disp and "×" in disp[0]:
        shown = re.search(r"([+-]0x[0-9a-f]+)\]", text)
        raw, scale, value = re.match(r"(-?0x[0-9a-f]+) × (\d+) .* = (-?0x[0-9a-f]+)", disp[0]).groups()
        assert int(raw, 16) * int(scale) == int(value, 16) == int(shown[1], 16), (text, disp[0])
    rows = next(s for s in expl.sections if s.title == "Opcode rows of this form").blocks[0].rows
    marked = [r[0].text for r in rows if r[0].role == "changed"]
    assert marked == [dict(expl.facts)["opcode row"].split("  ")[0]], text  # the matched row, marked once


@needs_binutils
@pytest.mark.parametrize("i", range(len(CASES)), ids=CASES)
def test_the_view_reads_gnu_as_bytes_as_objdump_does(gnu, i):
    code, text = gnu[i]
    check_view(code, text)


@pytest.mark.parametrize("hexcode,text", GXX_BYTES)
def test_the_view_reads_gxx_bytes(hexcode, text):
    check_view(bytes.fromhex(hexcode), text)

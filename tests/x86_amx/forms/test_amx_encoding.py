"""Every AMX instruction form against GNU as (bytes) and objdump (text), and against iced-x86's decoder.

For each form: every tile register in every operand position, and every
addressing variant (each base, each index, each scale, displacement sizes,
rbp/r13/rsp/r12 special cases, no base, no index).  isasim must produce GNU
as's bytes, print objdump's text, and re-assemble its own text to the same bytes.
"""

from __future__ import annotations

import iced_x86
import pytest

from amx_lines import lines_for
from gnu_binutils import gas, needs_binutils

from isasim.x86_amx import ISA
from isasim.x86_amx.forms import amx
from isasim.x86_amx.operands import Mem, Reg


def test_every_form_has_test_lines():
    assert {f.mnemonic for f in amx.FORMS} == {
        "ldtilecfg", "sttilecfg", "tilerelease", "tilezero", "tileloadd", "tileloaddt1", "tilestored",
        "tdpbssd", "tdpbsud", "tdpbusd", "tdpbuud", "tdpbf16ps", "tdpfp16ps"}
    for form in amx.FORMS:
        assert lines_for(form)


@needs_binutils
@pytest.mark.parametrize("form", amx.FORMS, ids=lambda f: f.mnemonic)
def test_form_matches_gnu_as_and_objdump(form):
    lines = lines_for(form)
    expected = gas(lines)
    mismatches = []
    for line, (gas_bytes, objdump_text) in zip(lines, expected):
        ours = ISA.assemble(line)
        code = ours.code
        if code != gas_bytes:
            mismatches.append(f"{line}: isasim {code.hex()} vs GNU as {gas_bytes.hex()}")
            continue
        decoded = ISA.disassemble(gas_bytes)
        text = decoded.instructions[0].text
        if text != objdump_text:
            mismatches.append(f"{gas_bytes.hex()}: isasim '{text}' vs objdump '{objdump_text}'")
            continue
        if ISA.assemble(text).code != gas_bytes:
            mismatches.append(f"{text}: does not re-assemble to {gas_bytes.hex()}")
    assert not mismatches, f"{len(mismatches)} of {len(lines)} differ:\n" + "\n".join(mismatches[:20])


_ICED_CODES = {
    "ldtilecfg": "VEX_LDTILECFG_M512", "sttilecfg": "VEX_STTILECFG_M512", "tilerelease": "VEX_TILERELEASE",
    "tilezero": "VEX_TILEZERO_TMM", "tileloadd": "VEX_TILELOADD_TMM_SIBMEM",
    "tileloaddt1": "VEX_TILELOADDT1_TMM_SIBMEM", "tilestored": "VEX_TILESTORED_SIBMEM_TMM",
    "tdpbssd": "VEX_TDPBSSD_TMM_TMM_TMM", "tdpbsud": "VEX_TDPBSUD_TMM_TMM_TMM", "tdpbusd": "VEX_TDPBUSD_TMM_TMM_TMM",
    "tdpbuud": "VEX_TDPBUUD_TMM_TMM_TMM", "tdpbf16ps": "VEX_TDPBF16PS_TMM_TMM_TMM",
    "tdpfp16ps": "VEX_TDPFP16PS_TMM_TMM_TMM",
}


def _iced_register_name(reg: int) -> str:
    names = {getattr(iced_x86.Register, n): n.lower() for n in dir(iced_x86.Register) if not n.startswith("_")}
    return names[reg]


@pytest.mark.parametrize("form", amx.FORMS, ids=lambda f: f.mnemonic)
def test_form_decodes_the_same_in_iced(form):
    """iced-x86 (an independent decoder) reads isasim's bytes as the same instruction and operands."""
    for line in lines_for(form):
        program = ISA.assemble(line)
        ins = program.instructions[0]
        decoder = iced_x86.Decoder(64, program.code, ip=program.base)
        iced = decoder.decode()
        assert iced.len == len(program.code), line
        assert iced.code == getattr(iced_x86.Code, _ICED_CODES[form.mnemonic]), line
        for i, operand in enumerate(ins.operands):
            if isinstance(operand, Reg):
                assert _iced_register_name(iced.op_register(i)) == operand.name, line
            else:
                assert isinstance(operand, Mem)
                base = _iced_register_name(iced.memory_base) if iced.memory_base else None
                index = _iced_register_name(iced.memory_index) if iced.memory_index else None
                assert (base, index or "riz" if operand.index == "riz" else index) == (operand.base, operand.index), line
                assert iced.memory_index_scale == operand.scale, line
                assert iced.memory_displacement == operand.disp % (1 << 64), line


@pytest.mark.parametrize("text,code", [
    # objdump prints a SIB byte without an index as riz; GNU as cannot read that
    # back (it takes riz for a symbol), isasim can, so its text round-trips.
    ("tileloadd tmm2,[rdi+riz*1]", "c4e27b4b1427"),
    ("tilestored [r13+riz*1+0x0],tmm1", "c4c27a4b4c2500"),
    ("ldtilecfg [rdi+riz*4]", "c4e2784904a7"),
])
def test_riz_round_trips(text, code):
    program = ISA.assemble(text)
    assert program.code.hex() == code
    assert program.instructions[0].text == text

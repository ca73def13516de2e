"""Every AMX instruction form against GNU as (bytes) and objdump (text), and against iced-x86's decoder.

For each form: every tile register in every operand position, and every
addressing variant (each base, each index, each scale, displacement sizes,
rbp/r13/rsp/r12 special cases, no base, no index).  isasim must produce GNU
as's bytes, print objdump's text, and re-assemble its own text to the same bytes.
"""

from __future__ import annotations

import itertools

import iced_x86
import pytest

from gnu_binutils import gas, needs_binutils

from isasim.x86_amx import ISA
from isasim.x86_amx.forms import amx
from isasim.x86_amx.operands import Mem, Reg
from isasim.x86_amx.operands import GPR64

TILES = [f"tmm{i}" for i in range(8)]
DISPS = [0, 1, -1, 0x7F, 0x80, -0x80, -0x81, 0x7FFFFFFF, -0x80000000]


def disp_text(d: int) -> str:
    return "" if d == 0 else (f"+{d:#x}" if d > 0 else f"-{-d:#x}")


def sib_addresses() -> list[str]:
    out = [f"[{base}+rsi*1]" for base in GPR64]
    out += [f"[rdi+{index}*1]" for index in GPR64 if index != "rsp"]
    out += [f"[r9+r10*{scale}]" for scale in (1, 2, 4, 8)]
    out += [f"[rax+rbx*2{disp_text(d)}]" for d in DISPS]
    out += [f"[{b}+rcx*1{disp_text(d)}]" for b in ("rbp", "r13", "rsp", "r12") for d in (0, 8, 0x200)]
    out += ["[rdi]", "[r13]", "[rsp]", "[r12]", "[rax*4+0x40]", "[r15*8-0x8]", "[rdi+rsi*1+0x7fffffff]"]
    return out


def m512_addresses() -> list[str]:
    out = [f"[{base}]" for base in GPR64]
    out += [f"[rdx{disp_text(d)}]" for d in DISPS]
    out += [f"[{b}{disp_text(d)}]" for b in ("rbp", "r13", "rsp", "r12") for d in (0, 8, -0x200)]
    out += [f"[r8+r14*{s}+0x40]" for s in (1, 2, 4, 8)]
    out += ["[0x1000]", "[rax*2+0x10]", "[rsp+rax*1]", "[r12+r12*1]"]
    return out


def lines_for(form: amx.AmxForm) -> list[str]:
    kinds = form.operand_kinds
    name = form.mnemonic
    if not kinds:
        return [name]
    if kinds == ("tmm",):
        return [f"{name} {t}" for t in TILES]
    if kinds == ("tmm", "tmm", "tmm"):
        return [f"{name} {a}, {b}, {c}" for a, b, c in itertools.permutations(TILES, 3)]
    if kinds == ("m512",):
        return [f"{name} {a}" for a in m512_addresses()]
    if kinds == ("tmm", "sibmem"):
        return [f"{name} {t}, {a}" for t in TILES for a in ["[rdi+rsi*1]"]] + \
               [f"{name} tmm5, {a}" for a in sib_addresses()]
    if kinds == ("sibmem", "tmm"):
        return [f"{name} {a}, {t}" for t in TILES for a in ["[rdi+rsi*1]"]] + \
               [f"{name} {a}, tmm2" for a in sib_addresses()]
    raise AssertionError(f"no test lines for {form.syntax}")


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

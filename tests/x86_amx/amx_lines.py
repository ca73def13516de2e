"""The AMX lines the tests assemble: each form with every tile register in every operand position and every
addressing variant (each base, index and scale, displacement sizes, the rbp/r13/rsp/r12 special cases, no base,
no index).  forms/test_amx_encoding.py holds them to GNU as and objdump; test_assembler_program.py uses them too."""

from __future__ import annotations

import itertools

from isasim.x86_amx.forms import amx
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

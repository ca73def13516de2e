"""Bytes -> instructions: the AMX forms from their SDM declarations, the scalar subset via iced-x86.

An encoding that reaches an AMX opcode but breaks one of the rules the hardware
checks while decoding (VEX.L=1, VEX.W=1, a non-1111 vvvv where no operand lives
there, tmm8-15 through VEX.R/B/vvvv, a register form where memory is required, a
missing SIB, a legacy 66/F2/F3/LOCK/REX prefix before VEX) still decodes: it
becomes an instruction marked ``undefined`` that raises #UD when executed, as
those bytes do on silicon.  Bytes that are neither are a DecodeError.
"""

from __future__ import annotations

from ..core.errors import DecodeError
from ..core.program import Instruction, Program
from . import amx, scalar
from .encoding import MAP_NAMES, PP_NAMES, VexFields, decode_modrm
from .operands import Mem, Reg

_UD_PREFIXES = {0x66: "66", 0xF2: "F2", 0xF3: "F3", 0xF0: "LOCK"}


def _undefined(form, operands, address, encoding, reason) -> Instruction:
    return Instruction(form, operands, address, encoding, "(bad)", undefined=reason)


def decode_amx(code: bytes, pos: int, address: int) -> Instruction | None:
    """Decode an AMX instruction at code[pos:], or None if the bytes are not one."""
    start = pos
    prefixes = []
    while pos < len(code) and (code[pos] in _UD_PREFIXES or 0x40 <= code[pos] <= 0x4F):
        prefixes.append(_UD_PREFIXES.get(code[pos], "REX"))
        pos += 1
    if pos + 4 > len(code) or code[pos] != 0xC4:
        return None
    vex = VexFields.parse(code[pos + 1], code[pos + 2])
    opcode = code[pos + 3]
    forms = amx.BY_OPCODE.get((vex.map, opcode, vex.pp))
    if forms is None:
        if (vex.map, opcode) in amx.AMX_OPCODE_BYTES:
            # The opcode byte is AMX's, the implied prefix selects no instruction.
            form = amx.BY_OPCODE[next(k for k in amx.BY_OPCODE if k[:2] == (vex.map, opcode))][0]
            modrm = decode_modrm(code, pos + 4, vex.X, vex.B)
            if modrm is None or modrm.length < 0:
                return None
            encoding = code[start : pos + 4 + modrm.length]
            return _undefined(form, (), address, encoding,
                              f"no AMX instruction has opcode {MAP_NAMES.get(vex.map, '?')} {opcode:02X} with prefix {PP_NAMES[vex.pp]}")
        return None
    modrm = decode_modrm(code, pos + 4, vex.X, vex.B)
    if modrm is None:
        raise DecodeError(f"truncated instruction at {address:#x}: {code[start:].hex()}")
    register_form = modrm.mod == 0b11
    candidates = [f for f in forms if f.opcode.modrm.register_form == register_form]
    if modrm.length < 0:  # RIP-relative memory operand
        encoding = code[start : pos + 4 + 5]
        return _undefined(forms[0], (), address, encoding, "RIP-relative addressing is not supported by isasim")
    encoding = code[start : pos + 4 + modrm.length]
    if not candidates:
        form = forms[0]
        need = "a memory operand" if not form.opcode.modrm.register_form else "register operands"
        return _undefined(form, (), address, encoding, f"{form.mnemonic} needs {need} (ModRM.mod={modrm.mod:02b})")
    form = candidates[0]
    operands = []
    problems = []
    if prefixes:
        problems.append(f"a {'/'.join(prefixes)} prefix before VEX is not allowed")
    op = form.opcode
    if vex.L != op.L:
        problems.append(f"VEX.L={vex.L} (must be {op.L})")
    if vex.W != op.W:
        problems.append(f"VEX.W={vex.W} (must be {op.W})")
    if op.modrm.reg is not None and modrm.reg != op.modrm.reg:
        problems.append(f"ModRM.reg={modrm.reg:03b} (must be {op.modrm.reg:03b})")
    if op.modrm.rm is not None and modrm.rm != op.modrm.rm:
        problems.append(f"ModRM.r/m={modrm.rm:03b} (must be {op.modrm.rm:03b})")
    if form.field_of("VEX.vvvv") is None and vex.vvvv != 0:
        problems.append(f"VEX.vvvv={~vex.vvvv & 0xF:04b} (must be 1111)")
    for kind, where in zip(form.operand_kinds, form.operand_fields):
        if kind == "tmm":
            number = {"ModRM:reg": modrm.reg | (vex.R << 3), "ModRM:r/m": modrm.rm | (vex.B << 3),
                      "VEX.vvvv": vex.vvvv}[where]
            if number >= 8:
                problems.append(f"tmm{number} does not exist ({where})")
            operands.append(Reg(f"tmm{number}"))
        else:
            mem = modrm.mem
            if kind == "sibmem" and not modrm.has_sib:
                problems.append("the memory operand needs a SIB byte")
            operands.append(Mem(mem.base, mem.index, mem.scale, mem.disp, show_size=False, disp_size=mem.disp_size))
    operands = tuple(operands)
    if problems:
        return _undefined(form, operands, address, encoding, "; ".join(problems))
    return Instruction(form, operands, address, encoding, form.format(operands))


def decode_one(code: bytes, pos: int, address: int) -> Instruction:
    instruction = decode_amx(code, pos, address)
    if instruction is None:
        instruction = scalar.decode(code, pos, address)
    if instruction is None:
        raise DecodeError(
            f"cannot decode the bytes at {address:#x} ({code[pos:pos + 15].hex(' ')}): "
            "not an AMX instruction nor one of the scalar subset isasim simulates"
        )
    return instruction


def disassemble(code: bytes, base: int, source: str = "<bytes>") -> Program:
    instructions = []
    pos = 0
    while pos < len(code):
        instruction = decode_one(code, pos, base + pos)
        instruction.extra["source_offset"] = pos
        instructions.append(instruction)
        pos += len(instruction.encoding)
    return Program("x86_amx", base, instructions, {}, source)

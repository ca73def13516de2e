"""The control forms' encodings (forms/control.py): GNU as's bytes for a text, and iced's reading of bytes.

    encode(mnemonic, operands, address) -> (form, canonical operands, bytes)
        call TARGET: E8 rel32 (GNU as writes no shorter CALL); call r/m64: FF /2; jmp r/m64: FF /4.
        A built-in's name (memset, ...) is its instruction: the bytes of UD2.
    decode(code, pos, address) -> Instruction | None
        None unless the bytes are exactly what GNU as writes for the text objdump prints for them (so
        ``rex.W call``, ``data16 call``, a redundant SIB or a disp32 that fits in 8 bits are left undecoded).
"""

from __future__ import annotations

import iced_x86

from ...core.errors import IsasimError
from ...core.program import Instruction
from ..forms.control import BUILTINS, CODE_FORMS, FORMS, MNEMONICS, ROWS
from ..instructions import make_instruction
from ..operands import GPR64, Imm, Mem, Reg, Target, operand_text
from .iced import MASK64, NAME_OF_REGISTER, OK, REGISTER_OF, check_memory, encode_with, fail, iced_memory, rip_relative


NOTRACK = 0x3E  # CET's NOTRACK prefix: an indirect CALL/JMP whose target need not start with ENDBR64


def accepts(mnemonic: str, operands: tuple) -> bool:
    """Whether the assembler should give this statement to ``encode``: a call or ret, a built-in's name, a
    jmp whose operand is a register or memory (a jmp to a label is a scalar branch), or either behind
    ``notrack`` (-fcf-protection's jump tables: ``notrack jmp rax``)."""
    if mnemonic.startswith("notrack "):
        return mnemonic[8:] in ("call", "jmp")
    if mnemonic == "call" or mnemonic in BUILTINS:
        return True
    return mnemonic == "jmp" and len(operands) == 1 and isinstance(operands[0], (Reg, Mem))


def _form(syntax_start: str):
    return next(f for f in FORMS if f.syntax.startswith(syntax_start))


def _row(form, kind: int) -> int:
    return next(c for c in form.codes if ROWS[c].kinds and ROWS[c].kinds[0] == kind)


def encode(mnemonic: str, operands: tuple, address: int):
    """(form, canonical operands, bytes) of one control instruction, as GNU as encodes it."""
    mnemonic = mnemonic.lower()
    operands = tuple(operands)
    if mnemonic.startswith("notrack "):
        # CET: the indirect branch's target is not checked for ENDBR64.  isasim models no indirect-branch
        # tracking, so it runs as the branch without it; GNU as writes 3E before everything else.
        if len(operands) != 1 or not isinstance(operands[0], (Reg, Mem)):
            raise fail(mnemonic, "notrack goes before an indirect call or jmp (through a register or memory)")
        form, canonical, code = encode(mnemonic[8:], operands, address + 1)
        return form, canonical, bytes([NOTRACK]) + code
    if mnemonic in BUILTINS:
        if operands:
            raise fail(mnemonic, "an isasim built-in takes no operands (its arguments are in rdi, rsi, rdx)")
        return BUILTINS[mnemonic], (), BUILTINS[mnemonic].ENCODING
    if len(operands) != 1:
        raise fail(mnemonic, f"takes 1 operand, got {len(operands)}")
    (op,) = operands
    form = _form("CALL") if mnemonic == "call" else _form("JMP")
    if isinstance(op, Imm):
        op = Target(op.value & MASK64)
    if isinstance(op, Target):
        if mnemonic != "call":
            raise fail(mnemonic, "a jmp to a label or address is a scalar branch")
        rel = op.address - (address + 5)
        if not -(1 << 31) <= rel < (1 << 31):
            raise fail(mnemonic, f"target {op.address:#x} is out of rel32 range of {address:#x}")
        code = encode_with(iced_x86.Instruction.create_branch(_row(form, OK.BR64_4), op.address & MASK64), address)[0]
        return form, (op,), code
    row = _row(form, OK.R64_OR_MEM)
    if isinstance(op, Reg):
        name = op.name.lower()
        if name not in GPR64:
            raise fail(mnemonic, f"'{op.name}' is not a 64-bit general-purpose register (the target is 64 bits)")
        return form, (Reg(name),), encode_with(iced_x86.Instruction.create_reg(row, REGISTER_OF[name]), address)[0]
    if not isinstance(op, Mem):
        raise fail(mnemonic, f"unexpected operand {op!r}")
    if op.size not in (None, 8):
        raise fail(mnemonic, f"the target is a QWORD in memory, not {operand_text(op)}")
    mem = check_memory(mnemonic, op)
    if op.segment:
        raise fail(mnemonic, "an fs:/gs: target is not supported")
    data, disp_size = encode_with(iced_x86.Instruction.create_mem(row, iced_memory(mem)), address)
    return form, (Mem(mem.base, mem.index, mem.scale, mem.disp, 8, disp_size=disp_size),), data


def decode(code: bytes, pos: int, address: int) -> Instruction | None:
    """One control instruction at code[pos:], or None (see the module docstring)."""
    window = bytes(code[pos:pos + 15])
    if not window:
        return None
    instr = iced_x86.Decoder(64, window, ip=address & MASK64).decode()
    form = CODE_FORMS.get(instr.code)
    if form is None or instr.is_invalid:
        return None
    operands = []
    for i in range(instr.op_count):
        kind = instr.op_kind(i)
        if kind == iced_x86.OpKind.NEAR_BRANCH64:
            operands.append(Target(instr.near_branch64))
        elif kind == iced_x86.OpKind.REGISTER:
            name = NAME_OF_REGISTER.get(instr.op_register(i))
            if name not in GPR64:
                return None
            operands.append(Reg(name))
        elif kind == iced_x86.OpKind.MEMORY:
            if instr.segment_prefix not in (iced_x86.Register.NONE, iced_x86.Register.DS) or (
                    instr.segment_prefix == iced_x86.Register.DS and window[0] != NOTRACK):
                return None  # (3E first is NOTRACK, whose DS is the default segment anyway)
            if instr.memory_base == iced_x86.Register.RIP:
                operands.append(rip_relative(instr, 64))
                continue
            base = NAME_OF_REGISTER.get(instr.memory_base) if instr.memory_base != iced_x86.Register.NONE else None
            index = NAME_OF_REGISTER.get(instr.memory_index) if instr.memory_index != iced_x86.Register.NONE else None
            if (instr.memory_base != iced_x86.Register.NONE and base not in GPR64) or (
                    instr.memory_index != iced_x86.Register.NONE and index not in GPR64):
                return None
            if base is None and instr.memory_displ_size != 8:
                return None  # 32-bit addressing
            disp = instr.memory_displacement
            disp = disp - (1 << 64) if disp >> 63 else disp
            operands.append(Mem(base, index, instr.memory_index_scale, disp, 8,
                                disp_size=4 if instr.memory_displ_size == 8 else instr.memory_displ_size))
        else:
            return None
    operands = tuple(operands)
    prefixes = ("notrack",) if window[0] == NOTRACK and ROWS[instr.code].kinds[0] != OK.BR64_4 else ()
    instruction = make_instruction(form, operands, address, window[:instr.len], prefixes)
    written = tuple(Mem(o.base, o.index, o.scale, o.disp, 8) if isinstance(o, Mem) else o for o in operands)
    try:
        canonical = encode(" ".join(prefixes + (form.mnemonic,)), written, address)[2]
    except IsasimError:  # operands the text cannot say: not decoded
        return None
    if canonical != instruction.encoding:
        return None
    return instruction


__all__ = ["MNEMONICS", "accepts", "decode", "encode"]

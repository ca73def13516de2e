"""The vector moves' encodings: GNU as's choice of bytes for a text (the shortest: VEX before EVEX, the
two-byte VEX when it can be), and iced's reading of bytes.  Each form's rows are the iced ``Code`` values
it names (forms/vector.py).

    encode(mnemonic, operands, address) -> (form, canonical operands, bytes)
    decode(code, pos, address) -> Instruction | None   (masked, broadcast and other forms isasim does not
                                                        model are not decoded)
"""

from __future__ import annotations

import iced_x86

from ...core.program import Instruction
from ..instructions import make_instruction
from ..forms.vector import CODE_FORMS, FORMS, ROWS, Row, vl
from ..operands import GPR64, GPR_VIEWS, Mem, Reg, vector_register
from .iced import GPR_KINDS, MASK64, VECTOR_KINDS, VECTOR_OR_MEM, check_memory, encode_with, fail, iced_memory, rip_relative


def _register_of(name: str) -> int:
    return getattr(iced_x86.Register, name.upper())
_NAME_OF_REGISTER = {}
for _n in range(32):
    for _prefix in ("xmm", "ymm", "zmm"):
        _NAME_OF_REGISTER[_register_of(f"{_prefix}{_n}")] = f"{_prefix}{_n}"
for _name in GPR_VIEWS:
    if GPR_VIEWS[_name].bits == 32:
        _NAME_OF_REGISTER[_register_of(_name)] = _name
_NAME_OF_REGISTER_64 = {_register_of(name): name for name in GPR64}


def _matches(row: Row, operands: tuple) -> bool:
    if len(row.kinds) != len(operands):
        return False
    if not row.op_code_string.startswith("EVEX") and any(
            isinstance(o, Reg) and vector_register(o.name) and vector_register(o.name).number >= 16 for o in operands):
        return False  # xmm16-31 exist only in EVEX encodings
    for kind, op in zip(row.kinds, operands):
        if kind in VECTOR_KINDS:
            prefix, _bits = VECTOR_KINDS[kind]
            ok = isinstance(op, Reg) and op.name.startswith(prefix)
        elif kind in VECTOR_OR_MEM:
            prefix, _bits = VECTOR_OR_MEM[kind]
            ok = (isinstance(op, Reg) and op.name.startswith(prefix)) or (
                isinstance(op, Mem) and op.size == row.memory_bytes)
        elif kind in GPR_KINDS:
            ok = isinstance(op, Reg) and op.name in GPR_VIEWS and GPR_VIEWS[op.name].bits == GPR_KINDS[kind]
        else:
            ok = False
        if not ok:
            return False
    return True


def _iced_instruction(row: Row, operands: tuple) -> "iced_x86.Instruction":
    I = iced_x86.Instruction
    args = [_register_of(o.name) if isinstance(o, Reg) else iced_memory(o) for o in operands]
    shape = "".join("r" if isinstance(o, Reg) else "m" for o in operands)
    factory = {"": I.create, "rr": I.create_reg_reg, "rm": I.create_reg_mem, "mr": I.create_mem_reg,
               "rrr": I.create_reg_reg_reg, "rrm": I.create_reg_reg_mem}[shape]
    return factory(row.code, *args)


def _check(mnemonic: str, operands: tuple) -> tuple:
    out = []
    for op in operands:
        if isinstance(op, Reg):
            name = op.name.lower()
            if vector_register(name) is None and name not in GPR_VIEWS:
                raise fail(mnemonic, f"'{op.name}' is not a vector or general-purpose register")
            out.append(Reg(name))
        elif isinstance(op, Mem):
            mem = check_memory(mnemonic, Mem(op.base, op.index, op.scale, op.disp, None))
            out.append(Mem(mem.base, mem.index, mem.scale, mem.disp, op.size))
        else:
            raise fail(mnemonic, f"'{op}' is not an operand of {mnemonic} (registers and memory only)")
    return tuple(out)


def encode(mnemonic: str, operands: tuple, address: int):
    """(form, canonical operands, bytes) of one vector instruction, as GNU as encodes it."""
    mnemonic = mnemonic.lower()
    (form,) = FORMS.of_mnemonic(mnemonic)
    ops = _check(mnemonic, tuple(operands))
    if sum(isinstance(o, Mem) for o in ops) > 1:
        raise fail(mnemonic, "two memory operands")
    registers = [o for o in ops if isinstance(o, Reg) and vector_register(o.name)]
    widths = {vl(o) for o in registers}
    for o in ops:
        if isinstance(o, Mem) and o.size is None:
            # the register gives the size (vpbroadcastw: always a WORD), as GNU as infers it
            size = 2 if mnemonic == "vpbroadcastw" else (max(widths) // 8 if widths else None)
            if size is None:
                raise fail(mnemonic, "operand size not given; write XMMWORD, YMMWORD or ZMMWORD PTR")
            ops = tuple(Mem(m.base, m.index, m.scale, m.disp, size) if m is o else m for m in ops)
    candidates, errors = [], []
    for code in form.codes:
        row = ROWS[code]
        if not _matches(row, ops):
            continue
        try:
            data, disp_size = encode_with(_iced_instruction(row, ops), address)
        except ValueError as exc:
            errors.append(str(exc))
            continue
        candidates.append((len(data), code, data, disp_size))
    if not candidates:
        if errors:
            raise fail(mnemonic, f"cannot encode: {errors[0]}")
        rows = " | ".join(ROWS[c].instruction_string for c in form.codes)
        raise fail(mnemonic, f"no form takes these operands; forms: {rows}")
    _, code, data, disp_size = min(candidates)
    canonical = tuple(Mem(o.base, o.index, o.scale, o.disp, o.size, disp_size=disp_size) if isinstance(o, Mem)
                      else o for o in ops)
    return form, canonical, data


def decode(code: bytes, pos: int, address: int) -> Instruction | None:
    """One vector instruction at code[pos:], or None if the bytes are not one of these forms (or are masked,
    broadcast, or otherwise outside what isasim models)."""
    window = bytes(code[pos:pos + 15])
    if not window:
        return None
    instr = iced_x86.Decoder(64, window, ip=address & MASK64).decode()
    form = CODE_FORMS.get(instr.code)
    if form is None or instr.is_invalid:
        return None
    if (instr.op_mask != iced_x86.Register.NONE or instr.zeroing_masking or instr.is_broadcast
            or instr.suppress_all_exceptions or instr.has_lock_prefix or instr.has_rep_prefix
            or instr.has_repne_prefix or instr.segment_prefix != iced_x86.Register.NONE):
        return None
    row = ROWS[instr.code]
    operands = []
    for i in range(instr.op_count):
        kind = instr.op_kind(i)
        if kind == iced_x86.OpKind.REGISTER:
            name = _NAME_OF_REGISTER.get(instr.op_register(i))
            if name is None:
                return None
            operands.append(Reg(name))
        elif kind == iced_x86.OpKind.MEMORY and instr.memory_base == iced_x86.Register.RIP:
            operands.append(rip_relative(instr, 8 * row.memory_bytes))
        elif kind == iced_x86.OpKind.MEMORY:
            base = _NAME_OF_REGISTER_64.get(instr.memory_base) if instr.memory_base != iced_x86.Register.NONE else None
            index = (_NAME_OF_REGISTER_64.get(instr.memory_index)
                     if instr.memory_index != iced_x86.Register.NONE else None)
            if (instr.memory_base != iced_x86.Register.NONE and base is None) or (
                    instr.memory_index != iced_x86.Register.NONE and index is None):
                return None  # RIP-relative, 32-bit or vector-index addressing
            if base is None and instr.memory_displ_size != 8:
                return None
            disp = instr.memory_displacement
            disp = disp - (1 << 64) if disp >> 63 else disp
            # the bytes the displacement takes: iced says 8 for a disp32 (64-bit addressing sign-extends it)
            disp_size = 4 if instr.memory_displ_size == 8 else instr.memory_displ_size
            operands.append(Mem(base, index, instr.memory_index_scale, disp, row.memory_bytes, disp_size=disp_size))
        else:
            return None
    operands = tuple(operands)
    return make_instruction(form, operands, address, window[:instr.len])

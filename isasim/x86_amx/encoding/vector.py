"""The vector forms' encodings: GNU as's choice of bytes for a text (the shortest: legacy or VEX before EVEX,
the two-byte VEX when it can be), and iced's reading of bytes.  Each form's rows are the iced ``Code`` values
it names (forms/vector.py); a write mask ({k1}, {k1}{z}) is EVEX's aaa and z fields.

    encode(mnemonic, operands, address) -> (form, canonical operands, bytes)
    decode(code, pos, address) -> Instruction | None   (embedded broadcast and rounding, and the forms isasim
                                                        does not model, are not decoded)
"""

from __future__ import annotations

from dataclasses import replace

import iced_x86

from ...core.program import Instruction
from ..instructions import make_instruction
from ..forms.vector import CODE_FORMS, FORMS, PSEUDO_OPS, ROWS, VSIB_KINDS, matches, vl
from ..operands import GPR64, GPR_VIEWS, Imm, Mem, Reg, vector_register
from ..operands.masking import OPMASK_REGISTERS, Masked, opmask_number
from .iced import MASK64, check_memory, encode_with, fail, iced_memory, rip_relative


def _register_of(name: str) -> int:
    return getattr(iced_x86.Register, name.upper())


_NAME_OF_REGISTER = {}
for _n in range(32):
    for _prefix in ("xmm", "ymm", "zmm"):
        _NAME_OF_REGISTER[_register_of(f"{_prefix}{_n}")] = f"{_prefix}{_n}"
for _name in GPR_VIEWS:
    if GPR_VIEWS[_name].bits in (32, 64):
        _NAME_OF_REGISTER[_register_of(_name)] = _name
for _name in OPMASK_REGISTERS:
    _NAME_OF_REGISTER[_register_of(_name)] = _name
_NAME_OF_REGISTER_64 = {_register_of(name): name for name in GPR64}


def _iced_instruction(code: int, operands: tuple) -> "iced_x86.Instruction":
    I = iced_x86.Instruction
    plain = [o.operand if isinstance(o, Masked) else o for o in operands]
    args = [_register_of(o.name) if isinstance(o, Reg) else o.value % 256 if isinstance(o, Imm) else _memory(o)
            for o in plain]
    shape = "".join("r" if isinstance(o, Reg) else "i" if isinstance(o, Imm) else "m" for o in plain)
    factory = {"": I.create, "rr": I.create_reg_reg, "rm": I.create_reg_mem, "mr": I.create_mem_reg,
               "rrr": I.create_reg_reg_reg, "rrm": I.create_reg_reg_mem,
               "rrri": I.create_reg_reg_reg_u32, "rmr": I.create_reg_mem_reg, "rrmi": I.create_reg_reg_mem_u32, "rri": I.create_reg_reg_u32,
               "rmi": I.create_reg_mem_u32, "mri": I.create_mem_reg_u32,
               "ri": I.create_reg_u32, "rrrr": I.create_reg_reg_reg_reg, "rrmr": I.create_reg_reg_mem_reg}[shape]
    instr = factory(code, *args)
    if operands and isinstance(operands[0], Masked):
        instr.op_mask = _register_of(operands[0].mask)
        instr.zeroing_masking = operands[0].zeroing
    if any(isinstance(o, Mem) and o.broadcast for o in plain):
        instr.is_broadcast = True
    return instr


def _memory(mem: Mem) -> "iced_x86.MemoryOperand":
    """iced's memory operand; a VSIB one ([rax+zmm1*4]) with its vector index register."""
    if not (mem.index and vector_register(mem.index)):
        return iced_memory(mem)
    base = _register_of(mem.base) if mem.base else iced_x86.Register.NONE
    displ_size = 8 if not mem.base else 1 if mem.disp else 0
    return iced_x86.MemoryOperand(base, _register_of(mem.index), mem.scale, mem.disp, displ_size)


def _check(mnemonic: str, operands: tuple) -> tuple:
    out = []
    for position, op in enumerate(operands):
        if isinstance(op, Masked):
            if position:
                raise fail(mnemonic, "only the destination (the first operand) takes a write mask")
            if op.mask == "k0":
                raise fail(mnemonic, "k0 cannot be a write mask (its encoding means no mask)")
            (inner,) = _check(mnemonic, (op.operand,))
            out.append(Masked(inner, op.mask, op.zeroing))
        elif isinstance(op, Reg):
            name = op.name.lower()
            if vector_register(name) is None and name not in GPR_VIEWS and opmask_number(name) is None:
                raise fail(mnemonic, f"'{op.name}' is not a vector, opmask or general-purpose register")
            out.append(Reg(name))
        elif isinstance(op, Mem) and op.index and vector_register(op.index.lower()):  # VSIB: [rax+zmm1*4]
            if op.base and op.base.lower() == "rip":
                raise fail(mnemonic, "a VSIB address ([base+zmm*scale]) cannot be rip-relative")
            mem = check_memory(mnemonic, Mem(op.base, None, 1, op.disp, None))
            out.append(Mem(mem.base, op.index.lower(), op.scale, mem.disp, op.size))
        elif isinstance(op, Mem):
            mem = check_memory(mnemonic, Mem(op.base, op.index, op.scale, op.disp, None))
            out.append(Mem(mem.base, mem.index, mem.scale, mem.disp, op.size, rip_target=op.rip_target,
                           broadcast=op.broadcast))
        elif isinstance(op, Imm):
            out.append(Imm(op.value, 8))
        else:
            raise fail(mnemonic, f"'{op}' is not an operand of {mnemonic} (registers, memory and imm8 only)")
    return tuple(out)


def _sized(operands: tuple, size: int, row=None) -> tuple:
    """The operands with a memory operand of no written size given the row's (a broadcast one: the element's,
    and the row's count of elements)."""
    def one(o):
        if isinstance(o, Masked):
            return Masked(one(o.operand), o.mask, o.zeroing)
        if isinstance(o, Mem) and o.broadcast and row is not None:
            return Mem(o.base, o.index, o.scale, o.disp, row.element_bytes, rip_target=o.rip_target,
                       broadcast=row.memory_bytes // row.element_bytes)
        if isinstance(o, Mem) and o.size is None:
            return Mem(o.base, o.index, o.scale, o.disp, size, rip_target=o.rip_target)
        return o
    return tuple(one(o) for o in operands)


def _with_disp_size(operands: tuple, disp_size: int) -> tuple:
    def one(o):
        if isinstance(o, Masked):
            return Masked(one(o.operand), o.mask, o.zeroing)
        if isinstance(o, Mem):
            return Mem(o.base, o.index, o.scale, o.disp, o.size, disp_size=disp_size, rip_target=o.rip_target,
                       broadcast=o.broadcast)
        return o
    return tuple(one(o) for o in operands)


def encode(mnemonic: str, operands: tuple, address: int):
    """(form, canonical operands, bytes) of one vector instruction, as GNU as encodes it."""
    mnemonic = mnemonic.lower()
    if mnemonic in PSEUDO_OPS:  # vcmpltps ymm0,ymm1,ymm2: VCMPPS with the predicate's imm8
        mnemonic, predicate = PSEUDO_OPS[mnemonic]
        operands = (*operands, Imm(predicate, 8))
    (form,) = FORMS.of_mnemonic(mnemonic)
    ops = _check(mnemonic, tuple(operands))
    plain = [o.operand if isinstance(o, Masked) else o for o in ops]
    if sum(isinstance(o, Mem) for o in plain) > 1:
        raise fail(mnemonic, "two memory operands")
    candidates, errors = [], []
    for code in form.codes:
        row = ROWS[code]
        if not matches(row, ops):
            continue
        sized = _sized(ops, row.memory_bytes, row)
        try:
            data, disp_size = encode_with(_iced_instruction(code, sized), address)
        except ValueError as exc:
            errors.append(str(exc))
            continue
        candidates.append((len(data), row.evex, code, data, disp_size, sized))
    if not candidates:
        if errors:
            raise fail(mnemonic, f"cannot encode: {errors[0]}")
        rows = " | ".join(ROWS[c].instruction_string for c in form.codes)
        raise fail(mnemonic, f"no form takes these operands; forms: {rows}")
    # GNU as takes a legacy or VEX row where one fits (even where EVEX's disp8*N would be shorter), then the
    # shortest encoding (the two-byte VEX where a swapped load/store row allows it), and for MOVQ/VMOVQ with
    # memory the xmm/m64 row (F3 0F 7E, 66 0F D6) over the r/m64 one (66 REX.W 0F 6E/7E) when REX ties them; but
    # EVEX's VMOVQ with memory (xmm16-31) the r/m64 rows (EVEX.W1 6E/7E), as GNU as 2.40 does (g++ -O3 -march=x86-64-v4's
    # vmovq QWORD PTR [rsp-0x10],xmm31)
    evex_vmovq = form.mnemonic == "vmovq"
    _, _evex, code, data, disp_size, sized = min(
        candidates, key=lambda c: (c[1], c[0], _gpr_memory_row(c[2]) != (c[1] and evex_vmovq), c[2]))
    return form, _with_disp_size(sized, disp_size), data


def _gpr_memory_row(code: int) -> bool:
    """Whether the row takes its memory operand as a GPR-or-memory one (MOVQ xmm, r/m64)."""
    return any(kind in (iced_x86.OpCodeOperandKind.R32_OR_MEM, iced_x86.OpCodeOperandKind.R64_OR_MEM)
               for kind in ROWS[code].kinds)


def decode(code: bytes, pos: int, address: int) -> Instruction | None:
    """One vector instruction at code[pos:], or None if the bytes are not one of these forms (or use embedded
    broadcast or rounding, or otherwise lie outside what isasim models)."""
    window = bytes(code[pos:pos + 15])
    if not window:
        return None
    instr = iced_x86.Decoder(64, window, ip=address & MASK64).decode()
    form = CODE_FORMS.get(instr.code)
    if form is None or instr.is_invalid:
        return None
    if (instr.suppress_all_exceptions or instr.rounding_control != iced_x86.RoundingControl.NONE
            or instr.has_lock_prefix or instr.has_rep_prefix
            or instr.has_repne_prefix or instr.segment_prefix != iced_x86.Register.NONE):
        return None
    row = ROWS[instr.code]
    if instr.is_broadcast and not row.element_bytes:
        return None  # a broadcast isasim does not take (a narrowing conversion's, which objdump writes {1toN})
    operands = []
    for i in range(instr.op_count):
        kind = instr.op_kind(i)
        if kind == iced_x86.OpKind.REGISTER:
            name = _NAME_OF_REGISTER.get(instr.op_register(i))
            if name is None:
                return None
            operands.append(Reg(name))
        elif kind == iced_x86.OpKind.IMMEDIATE8:
            operands.append(Imm(instr.immediate8, 8))
        elif kind == iced_x86.OpKind.MEMORY and instr.memory_base == iced_x86.Register.RIP and instr.is_broadcast:
            operands.append(replace(rip_relative(instr, 8 * row.element_bytes),
                                    broadcast=row.memory_bytes // row.element_bytes))
        elif kind == iced_x86.OpKind.MEMORY and instr.memory_base == iced_x86.Register.RIP:
            operands.append(rip_relative(instr, 8 * row.memory_bytes))
        elif kind == iced_x86.OpKind.MEMORY:
            base = _NAME_OF_REGISTER_64.get(instr.memory_base) if instr.memory_base != iced_x86.Register.NONE else None
            index = (_NAME_OF_REGISTER_64.get(instr.memory_index)
                     if instr.memory_index != iced_x86.Register.NONE else None)
            if any(kind in VSIB_KINDS for kind in row.kinds):  # VSIB: the index is a vector register
                index = _NAME_OF_REGISTER.get(instr.memory_index)
            if (instr.memory_base != iced_x86.Register.NONE and base is None) or (
                    instr.memory_index != iced_x86.Register.NONE and index is None):
                return None  # RIP-relative, 32-bit or vector-index addressing
            if base is None and instr.memory_displ_size != 8:
                return None
            disp = instr.memory_displacement
            disp = disp - (1 << 64) if disp >> 63 else disp
            # the bytes the displacement takes: iced says 8 for a disp32 (64-bit addressing sign-extends it)
            disp_size = 4 if instr.memory_displ_size == 8 else instr.memory_displ_size
            if instr.is_broadcast:  # one element, repeated: DWORD BCST [rdi]
                operands.append(Mem(base, index, instr.memory_index_scale, disp, row.element_bytes, disp_size=disp_size,
                                    broadcast=row.memory_bytes // row.element_bytes))
            else:
                operands.append(Mem(base, index, instr.memory_index_scale, disp, row.memory_bytes, disp_size=disp_size))
        else:
            return None
    if instr.op_mask != iced_x86.Register.NONE or instr.zeroing_masking:
        if not operands or instr.op_mask == iced_x86.Register.NONE:
            return None  # {z} without a mask: #UD on silicon, refused here
        operands[0] = Masked(operands[0], _NAME_OF_REGISTER[instr.op_mask], instr.zeroing_masking)
    return make_instruction(form, tuple(operands), address, window[:instr.len])


_FORMATTER = iced_x86.Formatter(iced_x86.FormatterSyntax.INTEL)
_FORMATTER.space_after_operand_separator = False


def why_not(code: bytes, pos: int, address: int) -> str | None:
    """What a valid x86 instruction at code[pos:] that isasim does not simulate is, in one phrase naming it
    (``vpxord zmm0,zmm0,dword bcst [rdi]: embedded broadcast is not simulated``), or None for bytes that are
    no instruction."""
    window = bytes(code[pos:pos + 15])
    instr = iced_x86.Decoder(64, window, ip=address & MASK64).decode() if window else None
    if instr is None or instr.is_invalid:
        return None
    text = _FORMATTER.format(instr)
    form = CODE_FORMS.get(instr.code)
    if instr.is_broadcast and (form is None or not ROWS[instr.code].element_bytes):
        return f"{text}: embedded broadcast is not simulated"
    if instr.suppress_all_exceptions or instr.rounding_control != iced_x86.RoundingControl.NONE:
        return f"{text}: embedded rounding ({{sae}}, {{rn-sae}} ...) is not simulated"
    if form is None and FORMS.of_mnemonic(text.split()[0].lower()):
        return f"{text}: this encoding of {text.split()[0]} is not simulated"
    if form is None:
        return f"{text}: isasim does not simulate {text.split()[0]}"
    return None

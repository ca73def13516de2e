"""What the scalar and vector forms share with iced-x86 (https://github.com/icedland/iced), the x86 encoder
and decoder they are encoded and decoded with: the operand kinds of iced's opcode rows (the SDM's opcode-table
rows), the registers by iced's numbers, a memory operand in iced's terms, and encoding one instruction at an
address (a RIP-relative operand is placed once the length is known)."""

from __future__ import annotations

import iced_x86

from ...core.errors import AssemblyError
from ..operands import GPR64, GPR_VIEWS, SIZE_NAMES, Mem, signed

MASK64 = (1 << 64) - 1


# ---------------------------------------------------------------------------
# The operand kinds of iced's opcode rows
# ---------------------------------------------------------------------------


OK = iced_x86.OpCodeOperandKind
RM_KINDS = {OK.R8_OR_MEM: 8, OK.R16_OR_MEM: 16, OK.R32_OR_MEM: 32, OK.R64_OR_MEM: 64}
REG_KINDS = {OK.R8_REG: 8, OK.R16_REG: 16, OK.R32_REG: 32, OK.R64_REG: 64,
              OK.R8_OPCODE: 8, OK.R16_OPCODE: 16, OK.R32_OPCODE: 32, OK.R64_OPCODE: 64,
              OK.R32_VVVV: 32, OK.R64_VVVV: 64}  # (VEX.vvvv: the BMI1/BMI2 forms' second register)
ACC_KINDS = {OK.AL: "al", OK.AX: "ax", OK.EAX: "eax", OK.RAX: "rax"}
FIXED_REG_KINDS = {OK.CL: "cl"}  # the shift count register: not an accumulator, no tie-break
IMM_KINDS = {OK.IMM8, OK.IMM16, OK.IMM32, OK.IMM64}
IMM_FIELD_BITS = {OK.IMM8: 8, OK.IMM16: 16, OK.IMM32: 32, OK.IMM64: 64}
IMPLIED_ONE = OK.IMM8_CONST_1  # D0/D1 /r: shift by 1, no immediate byte
SEXT_IMM_KINDS = {OK.IMM8SEX16: 8, OK.IMM8SEX32: 8, OK.IMM8SEX64: 8, OK.IMM32SEX64: 32}
BRANCH_KINDS = {OK.BR64_1: 1, OK.BR64_4: 4}
STRING_KINDS = {OK.ES_RDI: ("rdi", "es"), OK.SEG_RSI: ("rsi", "ds")}  # a string instruction's fixed memory operands
SUPPORTED_KINDS = (set(RM_KINDS) | set(REG_KINDS) | set(ACC_KINDS) | IMM_KINDS | set(SEXT_IMM_KINDS)
                    | set(BRANCH_KINDS) | set(FIXED_REG_KINDS) | set(STRING_KINDS) | {OK.MEM, IMPLIED_ONE})


# the vector forms' rows
VECTOR_KINDS = {OK.XMM_REG: ("xmm", 128), OK.YMM_REG: ("ymm", 256), OK.ZMM_REG: ("zmm", 512),
                 OK.XMM_VVVV: ("xmm", 128), OK.YMM_VVVV: ("ymm", 256)}
VECTOR_OR_MEM = {OK.XMM_OR_MEM: ("xmm", 128), OK.YMM_OR_MEM: ("ymm", 256), OK.ZMM_OR_MEM: ("zmm", 512)}
GPR_KINDS = {OK.R32_RM: 32}


CODE_NAMES = {v: k for k, v in vars(iced_x86.Code).items() if isinstance(v, int) and not k.startswith("_")}
MNEMONIC_NAMES = {v: k for k, v in vars(iced_x86.Mnemonic).items() if isinstance(v, int) and not k.startswith("_")}


# ---------------------------------------------------------------------------
# Registers and memory operands
# ---------------------------------------------------------------------------


REGISTER_OF: dict[str, int] = {}
for _name in GPR_VIEWS:
    _iced_name = _name.upper()
    if _name.startswith("r") and _name.endswith("b") and _name[1:-1].isdigit():
        _iced_name = _name[:-1].upper() + "L"  # r8b is iced's R8L
    REGISTER_OF[_name] = getattr(iced_x86.Register, _iced_name)
NAME_OF_REGISTER = {v: k for k, v in REGISTER_OF.items()}


def fail(mnemonic: str, rule: str) -> AssemblyError:
    return AssemblyError(f"{mnemonic}: {rule}")


def check_memory(mnemonic: str, mem: Mem) -> Mem:
    base = mem.base.lower() if mem.base else None
    index = mem.index.lower() if mem.index else None
    if base == "rip" and index is not None:
        raise fail(mnemonic, "a rip-relative address takes no index register")
    for what, name in (("base", base), ("index", index)):
        if name == "eip" or (name == "rip" and what == "index"):
            raise fail(mnemonic, f"{name} cannot be an index register" if name == "rip" else
                        "eip-relative addressing is not supported")
        if name == "rip":
            continue
        if name == "riz":
            raise fail(mnemonic, "riz is not supported here; leave the index out")
        if name is not None and name not in GPR64:
            raise fail(mnemonic, f"{what} register must be a 64-bit general-purpose register, not '{name}'")
    if index == "rsp":
        raise fail(mnemonic, "rsp cannot be an index register")
    if mem.scale not in (1, 2, 4, 8):
        raise fail(mnemonic, f"scale must be 1, 2, 4 or 8, not {mem.scale}")
    if index is None and mem.scale != 1:
        raise fail(mnemonic, "a scale needs an index register")
    disp = mem.disp
    if -(1 << 63) <= disp <= MASK64:
        disp = signed(disp, 64)
    if not -(1 << 31) <= disp < (1 << 31):
        raise fail(mnemonic, f"displacement {mem.disp:#x} does not fit in 32 signed bits")
    if mem.size is not None and mem.size not in (1, 2, 4, 8):
        raise fail(mnemonic, f"{SIZE_NAMES.get(mem.size, mem.size)} PTR is not an operand size of {mnemonic}")
    return Mem(base=base, index=index, scale=mem.scale, disp=disp, size=mem.size)


def iced_memory(mem: Mem) -> "iced_x86.MemoryOperand":
    if mem.base == "rip":
        # iced wants the target; until the length is known, carry disp (encode_with places it)
        return iced_x86.MemoryOperand(iced_x86.Register.RIP, displ=mem.disp, displ_size=8)
    base = REGISTER_OF[mem.base] if mem.base else iced_x86.Register.NONE
    index = REGISTER_OF[mem.index] if mem.index else iced_x86.Register.NONE
    if not mem.base:
        displ_size = 8  # 64-bit addressing with no base: SIB base=101, disp32 sign-extended
    else:
        displ_size = 1 if mem.disp else 0  # 1: disp8 if it fits, else disp32; rbp/r13 get disp8 0
    return iced_x86.MemoryOperand(base, index, mem.scale, mem.disp, displ_size)


def encode_with(instr: "iced_x86.Instruction", address: int) -> tuple[bytes, int]:
    """The bytes, and the size of the displacement field in them."""
    if instr.memory_base == iced_x86.Register.RIP:
        # [rip+disp] is relative to the next instruction: encode once for the length (disp32 always), then
        # with the target that gives this disp
        disp = signed(instr.memory_displacement, 64)
        guess = 15 if disp < 0 else 0  # keeps the probe's own distance in i32 range for any disp32
        instr.memory_displacement = (address + guess + disp) & MASK64
        probe = iced_x86.Encoder(64)
        length = probe.encode(instr, address & MASK64)
        instr.memory_displacement = (address + length + disp) & MASK64
    encoder = iced_x86.Encoder(64)
    encoder.encode(instr, address & MASK64)
    return encoder.take_buffer(), encoder.get_constant_offsets().displacement_size


def rip_relative(instr: "iced_x86.Instruction", size: int | None) -> Mem:
    """[rip+disp] as decoded: disp from the target iced resolves, and the target itself for execution."""
    target = instr.memory_displacement  # iced: next_ip + disp, resolved
    disp = signed(target - instr.next_ip, 64)
    return Mem("rip", None, 1, disp, size // 8 if size else None, show_size=size is not None, disp_size=4,
               rip_target=target)

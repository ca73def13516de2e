"""The scalar A64 instructions a kernel's loop needs, as the Arm ARM's ASL writes them: the move-wide
immediates (MOVZ, MOVN, MOVK), ADD/SUB/ADDS/SUBS (immediate, shifted register, extended register),
the logical instructions AND/ORR/EOR/ANDS (immediate, shifted register), the bitfield moves UBFM and
SBFM (behind LSL, LSR, ASR, UBFX ...), MADD/MSUB, LDR/STR of X, W and Q registers, and the branches
B, B.cond, CBZ/CBNZ, TBZ/TBNZ and RET; NOP.

Every instruction with a 32-bit (W) variant takes ``datasize`` (32 or 64): it reads the low
``datasize`` bits of its registers, and a W result is written zero-extended to 64 bits, as
X[d, 32] = result does.  Each returns None to go on to the next instruction, a branch offset (from
the instruction's address) to branch, or END when the program ends (RET).
"""

from __future__ import annotations

import numpy as np

from ..context import END
from ..numerics.integer_asl import ROR, AddWithCarry, ConditionHolds, DecodeBitMasks, Ones, SInt
from ..state import MASK64


# ---- the ASL's helper functions that read registers ---------------------------------------------------------

def ShiftReg(cpu, reg: int, shift_type: int, amount: int, N: int) -> int:
    value = cpu.X(reg) & Ones(N)
    if shift_type == 0:
        return (value << amount) & Ones(N)
    if shift_type == 1:
        return value >> amount
    if shift_type == 2:
        return (SInt(value, N) >> amount) & Ones(N)
    return ROR(value, amount, N)


def ExtendReg(cpu, reg: int, extend_type: int, shift: int, N: int) -> int:
    """UXTB, UXTH, UXTW, UXTX, SXTB, SXTH, SXTW, SXTX (extend_type 0-7) of X[reg], shifted left."""
    value = cpu.X(reg) & Ones(N)
    unsigned = extend_type < 4
    length = min(8 << (extend_type & 3), N - shift)
    low = value & Ones(length)
    extended = low if unsigned else SInt(low, length) & Ones(N)
    return (extended << shift) & Ones(N)


def _pstate_nzcv(cpu) -> int:
    return cpu.state.nzcv >> 28


def _set_flags(cpu, nzcv: tuple[int, int, int, int]) -> None:
    cpu.set_NZCV(*nzcv)


def _write_result(cpu, d: int, result: int, datasize: int, setflags: bool, sp: bool) -> None:
    """X[d, datasize] = result (zero-extended); register 31 is SP where ``sp`` and no flags are set."""
    if d == 31 and sp and not setflags:
        cpu.set_XSP(31, result)
    else:
        cpu.set_X(d, result)


# ---- data processing ---------------------------------------------------------------------------------------

def move_wide(cpu, d, immediate, *, datasize, opcode):
    """bits(datasize) result;
if opcode == MoveWideOp_K then result = X[d, datasize]; else result = Zeros(datasize);
result<pos+15:pos> = imm16;
if opcode == MoveWideOp_N then result = NOT(result);
X[d, datasize] = result;"""
    imm16, pos = immediate
    result = cpu.X(d) & Ones(datasize) if opcode == "K" else 0
    result = (result & ~(Ones(16) << pos)) | (imm16 << pos)
    if opcode == "N":
        result = ~result & Ones(datasize)
    cpu.set_X(d, result)


def add_sub_imm(cpu, d, n, imm, *, datasize, sub_op, setflags):
    """bits(datasize) operand1 = if n == 31 then SP[datasize] else X[n, datasize];
bits(datasize) operand2 = imm;    // imm12, LSL #12 if sh
if sub_op then operand2 = NOT(operand2); carry_in = '1'; else carry_in = '0';
(result, nzcv) = AddWithCarry(operand1, operand2, carry_in);
if setflags then PSTATE.<N,Z,C,V> = nzcv;
if d == 31 && !setflags then SP[] = ZeroExtend(result, 64); else X[d, datasize] = result;"""
    _add_sub(cpu, d, cpu.XSP(n) & Ones(datasize), imm, datasize, sub_op, setflags, sp=True)


def add_sub_shifted(cpu, d, n, rm, *, datasize, sub_op, setflags):
    """bits(datasize) operand1 = X[n, datasize];
bits(datasize) operand2 = ShiftReg(m, shift_type, shift_amount, datasize);
if sub_op then operand2 = NOT(operand2); carry_in = '1'; else carry_in = '0';
(result, nzcv) = AddWithCarry(operand1, operand2, carry_in);
if setflags then PSTATE.<N,Z,C,V> = nzcv;
X[d, datasize] = result;    // register 31 is XZR for d, n and m"""
    operand2 = ShiftReg(cpu, *rm, datasize)
    _add_sub(cpu, d, cpu.X(n) & Ones(datasize), operand2, datasize, sub_op, setflags, sp=False)


def add_sub_extended(cpu, d, n, rm, *, datasize, sub_op, setflags):
    """bits(datasize) operand1 = if n == 31 then SP[datasize] else X[n, datasize];
bits(datasize) operand2 = ExtendReg(m, extend_type, shift, datasize);
if sub_op then operand2 = NOT(operand2); carry_in = '1'; else carry_in = '0';
(result, nzcv) = AddWithCarry(operand1, operand2, carry_in);
if setflags then PSTATE.<N,Z,C,V> = nzcv;
if d == 31 && !setflags then SP[] = ZeroExtend(result, 64); else X[d, datasize] = result;"""
    operand2 = ExtendReg(cpu, *rm, datasize)
    _add_sub(cpu, d, cpu.XSP(n) & Ones(datasize), operand2, datasize, sub_op, setflags, sp=True)


def _add_sub(cpu, d, operand1, operand2, datasize, sub_op, setflags, sp):
    carry_in = 0
    if sub_op:
        operand2, carry_in = ~operand2 & Ones(datasize), 1
    result, nzcv = AddWithCarry(operand1, operand2, carry_in, datasize)
    if setflags:
        _set_flags(cpu, nzcv)
    _write_result(cpu, d, result, datasize, setflags, sp)


LOGICAL_OPS = {"AND": lambda a, b: a & b, "ORR": lambda a, b: a | b, "EOR": lambda a, b: a ^ b}


def logical_imm(cpu, d, n, imm, *, datasize, op, setflags):
    """bits(datasize) operand1 = X[n, datasize];
bits(datasize) operand2 = imm;    // DecodeBitMasks(N, imms, immr, TRUE, datasize)'s wmask
result = operand1 AND/OR/EOR operand2;
if setflags then PSTATE.<N,Z,C,V> = result<datasize-1>:IsZeroBit(result):'00';
if d == 31 && !setflags then SP[] = ZeroExtend(result, 64); else X[d, datasize] = result;"""
    result = LOGICAL_OPS[op](cpu.X(n) & Ones(datasize), imm)
    if setflags:
        _set_flags(cpu, (result >> (datasize - 1), int(result == 0), 0, 0))
    _write_result(cpu, d, result, datasize, setflags, sp=True)


def logical_shifted(cpu, d, n, rm, *, datasize, op, setflags):
    """bits(datasize) operand1 = X[n, datasize];
bits(datasize) operand2 = ShiftReg(m, shift_type, shift_amount, datasize);
result = operand1 AND/OR/EOR operand2;
if setflags then PSTATE.<N,Z,C,V> = result<datasize-1>:IsZeroBit(result):'00';
X[d, datasize] = result;    // register 31 is XZR"""
    result = LOGICAL_OPS[op](cpu.X(n) & Ones(datasize), ShiftReg(cpu, *rm, datasize))
    if setflags:
        _set_flags(cpu, (result >> (datasize - 1), int(result == 0), 0, 0))
    cpu.set_X(d, result)


def bitfield_move(cpu, d, n, immr, imms, *, datasize, signed):
    """(wmask, tmask) = DecodeBitMasks(N, imms, immr, FALSE, datasize);
bits(datasize) src = X[n, datasize];
bits(datasize) bot = ROR(src, R) AND wmask;                  // R = UInt(immr), S = UInt(imms)
bits(datasize) top = if signed then Replicate(src<S>) else Zeros(datasize);    // SBFM / UBFM
X[d, datasize] = (top AND NOT(tmask)) OR (bot AND tmask);"""
    wmask, tmask = DecodeBitMasks(1 if datasize == 64 else 0, imms, immr, False, datasize)
    src = cpu.X(n) & Ones(datasize)
    bot = ROR(src, immr, datasize) & wmask
    top = Ones(datasize) if signed and (src >> imms) & 1 else 0
    cpu.set_X(d, (top & ~tmask & Ones(datasize)) | (bot & tmask))


def multiply_add(cpu, d, n, m, a, *, datasize, sub_op):
    """bits(datasize) operand1 = X[n, datasize]; operand2 = X[m, datasize]; operand3 = X[a, datasize];
integer result = if sub_op then UInt(operand3) - UInt(operand1) * UInt(operand2)    // MSUB
                 else UInt(operand3) + UInt(operand1) * UInt(operand2);             // MADD
X[d, datasize] = result<datasize-1:0>;"""
    product = (cpu.X(n) & Ones(datasize)) * (cpu.X(m) & Ones(datasize))
    addend = cpu.X(a) & Ones(datasize)
    cpu.set_X(d, (addend - product if sub_op else addend + product) & Ones(datasize))


# ---- loads and stores -------------------------------------------------------------------------------------

def _load_register(cpu, t, data: bytes, register):
    if register == "Q":  # V[t, 128] = data: Z[t]'s low 128 bits, the rest of the vector zeroed
        vector = np.zeros(cpu.svlb, dtype=np.uint8)
        vector[:16] = np.frombuffer(data, dtype=np.uint8)
        cpu.set_Z(t, vector)
    else:
        cpu.set_X(t, int.from_bytes(data, "little"))  # a W load zero-extends to 64 bits


def _store_bytes(cpu, t, size, register) -> bytes:
    if register == "Q":
        return cpu.Z(t)[:16].tobytes()
    return (cpu.X(t) & Ones(8 * size)).to_bytes(size, "little")


def load_store(cpu, t, address, *, size, register, load):
    """bits(64) address = if n == 31 then SP[] else X[n, 64];
address = address + offset;    // LDR/STR: imm12 << scale; LDUR/STUR: simm9
if load then R[t] = Mem[address, size]    // W zero-extends into X[t]; Q is V[t]: Z[t] with bits 128 up zeroed
else Mem[address, size] = R[t];    // little-endian; an unmapped address is a translation fault"""
    n, offset = address
    _access(cpu, t, cpu.XSP(n) + offset, size, register, load)


def load_store_pre(cpu, t, address, *, size, register, load):
    """bits(64) address = (if n == 31 then SP[] else X[n, 64]) + offset;    // offset: simm9
if load then R[t] = Mem[address, size] else Mem[address, size] = R[t];
if n == 31 then SP[] = address else X[n, 64] = address;    // written back before the access ends"""
    n, offset = address
    target = (cpu.XSP(n) + offset) & MASK64
    _access(cpu, t, target, size, register, load)
    cpu.set_XSP(n, target)


def load_store_post(cpu, t, n, offset, *, size, register, load):
    """bits(64) address = if n == 31 then SP[] else X[n, 64];
if load then R[t] = Mem[address, size] else Mem[address, size] = R[t];
address = address + offset;    // simm9
if n == 31 then SP[] = address else X[n, 64] = address;"""
    address = cpu.XSP(n)
    _access(cpu, t, address, size, register, load)
    cpu.set_XSP(n, address + offset)


def _access(cpu, t, address, size, register, load):
    if load:
        _load_register(cpu, t, cpu.read_memory(address, size), register)
    else:
        cpu.write_memory(address, _store_bytes(cpu, t, size, register))


# ---- branches ----------------------------------------------------------------------------------------------

def b(cpu, offset):
    """PC = PC + offset"""
    return offset


def b_cond(cpu, offset, cond):
    """if ConditionHolds(cond) then PC = PC + offset;    // ConditionHolds reads PSTATE.<N,Z,C,V>"""
    return offset if ConditionHolds(cond, _pstate_nzcv(cpu)) else None


def compare_branch(cpu, t, offset, *, datasize, nonzero):
    """bits(datasize) operand1 = X[t, datasize];
if IsZero(operand1) != nonzero then PC = PC + offset;    // CBZ: nonzero = FALSE; CBNZ: TRUE"""
    return offset if ((cpu.X(t) & Ones(datasize)) != 0) == nonzero else None


def test_branch(cpu, t, bit_pos, offset, *, bit_val):
    """bits(datasize) operand = X[t, datasize];    // bit_pos = b5:b40
if operand<bit_pos> == bit_val then PC = PC + offset;    // TBZ: bit_val 0; TBNZ: 1"""
    return offset if (cpu.X(t) >> bit_pos) & 1 == bit_val else None


def ret(cpu):
    """return to X30's caller: isasim's program ends here"""
    return END


def nop(cpu):
    """// nothing"""

"""The A64 base data-processing instructions with immediates, and the arithmetic and logical ones with a
register, as the Arm ARM's ASL writes them: the move-wide immediates (MOVZ, MOVN, MOVK), ADR and ADRP,
ADD/SUB/ADDS/SUBS (immediate, shifted register, extended register), the logical instructions AND/ORR/EOR/ANDS
(immediate) and AND/BIC/ORR/ORN/EOR/EON/ANDS/BICS (shifted register), the bitfield moves UBFM, SBFM and BFM
(behind LSL, LSR, ASR, UBFX, BFI, BFXIL ...), EXTR (and ROR), MADD/MSUB.  The other base families:
base_register.py (shifts by register, divides, CLZ/REV..., long multiplies, conditional selects and compares),
base_memory.py (loads and stores), base_branch.py (branches, calls, returns) and base_system.py (MRS, MSR,
hints).

Every instruction with a 32-bit (W) variant takes ``datasize`` (32 or 64): it reads the low
``datasize`` bits of its registers, and a W result is written zero-extended to 64 bits, as
X[d, 32] = result does.
"""

from __future__ import annotations

from ..numerics.integer_asl import ROR, AddWithCarry, DecodeBitMasks, Ones, SInt


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


def logical_shifted(cpu, d, n, rm, *, datasize, op, setflags, invert=False):
    """bits(datasize) operand1 = X[n, datasize];
bits(datasize) operand2 = ShiftReg(m, shift_type, shift_amount, datasize);
if invert then operand2 = NOT(operand2);    // BIC, ORN, EON, BICS
result = operand1 AND/OR/EOR operand2;
if setflags then PSTATE.<N,Z,C,V> = result<datasize-1>:IsZeroBit(result):'00';
X[d, datasize] = result;    // register 31 is XZR"""
    operand2 = ShiftReg(cpu, *rm, datasize)
    if invert:
        operand2 = ~operand2 & Ones(datasize)
    result = LOGICAL_OPS[op](cpu.X(n) & Ones(datasize), operand2)
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


def bitfield_insert(cpu, d, n, immr, imms, *, datasize):
    """(wmask, tmask) = DecodeBitMasks(N, imms, immr, FALSE, datasize);
bits(datasize) dst = X[d, datasize];    // BFM keeps the destination's other bits
bits(datasize) src = X[n, datasize];
bits(datasize) bot = (dst AND NOT(wmask)) OR (ROR(src, R) AND wmask);
X[d, datasize] = (dst AND NOT(tmask)) OR (bot AND tmask);"""
    wmask, tmask = DecodeBitMasks(1 if datasize == 64 else 0, imms, immr, False, datasize)
    dst, src = cpu.X(d) & Ones(datasize), cpu.X(n) & Ones(datasize)
    bot = (dst & ~wmask) | (ROR(src, immr, datasize) & wmask)
    cpu.set_X(d, ((dst & ~tmask) | (bot & tmask)) & Ones(datasize))


def extract(cpu, d, n, m, lsb, *, datasize):
    """bits(2*datasize) concat = X[n, datasize]:X[m, datasize];
X[d, datasize] = concat<lsb+datasize-1:lsb>;    // EXTR (ROR #lsb where n == m)"""
    concat = ((cpu.X(n) & Ones(datasize)) << datasize) | (cpu.X(m) & Ones(datasize))
    cpu.set_X(d, (concat >> lsb) & Ones(datasize))


def pc_relative(cpu, d, offset, *, page):
    """bits(64) base = PC[];
if page then base<11:0> = Zeros(12);    // ADRP: imm is immhi:immlo:Zeros(12)
X[d, 64] = base + imm;"""
    base = cpu.state.pc & ~0xFFF if page else cpu.state.pc
    cpu.set_X(d, (base + offset) & Ones(64))

"""The A64 base data-processing (register) instructions beyond the scalar subset, as the Arm ARM's ASL writes
them: the shifts by a register (LSLV, LSRV, ASRV, RORV), UDIV/SDIV, the one-source instructions (RBIT, REV16,
REV32, REV, CLZ, CLS), the long and high multiplies (SMADDL, SMSUBL, UMADDL, UMSUBL, SMULH, UMULH), the
conditional selects (CSEL, CSINC, CSINV, CSNEG), the conditional compares (CCMP, CCMN, register and
immediate), add and subtract with carry (ADC, ADCS, SBC, SBCS), and FMOV between a general register and an FP
register (S, D), which a streaming function uses for its scalar floats.

``datasize`` (32 or 64) as in semantics/scalar.py: a W form reads the low 32 bits of its registers and
writes its result zero-extended to 64 bits.
"""

from __future__ import annotations

import numpy as np

from ..numerics.integer_asl import ROR, AddWithCarry, ConditionHolds, Ones, SInt


def _x(cpu, n: int, datasize: int) -> int:
    return cpu.X(n) & Ones(datasize)


def shift_variable(cpu, d, n, m, *, datasize, shift_type):
    """bits(datasize) operand2 = X[m, datasize];
result = ShiftReg(n, shift_type, UInt(operand2) MOD datasize, datasize);    // LSL, LSR, ASR, ROR
X[d, datasize] = result;"""
    amount = _x(cpu, m, datasize) % datasize
    value = _x(cpu, n, datasize)
    if shift_type == 0:
        result = value << amount
    elif shift_type == 1:
        result = value >> amount
    elif shift_type == 2:
        result = SInt(value, datasize) >> amount
    else:
        result = ROR(value, amount, datasize)
    cpu.set_X(d, result & Ones(datasize))


def divide(cpu, d, n, m, *, datasize, unsigned):
    """bits(datasize) operand1 = X[n, datasize]; operand2 = X[m, datasize];
integer result;
if IsZero(operand2) then result = 0;
else result = RoundTowardsZero(Real(Int(operand1, unsigned)) / Real(Int(operand2, unsigned)));
X[d, datasize] = result<datasize-1:0>;    // SDIV of the most negative number by -1 wraps to itself"""
    a, b = _x(cpu, n, datasize), _x(cpu, m, datasize)
    if not unsigned:
        a, b = SInt(a, datasize), SInt(b, datasize)
    if b == 0:
        result = 0
    else:
        quotient = abs(a) // abs(b)
        result = quotient if (a < 0) == (b < 0) else -quotient
    cpu.set_X(d, result & Ones(datasize))


def reverse_bits(cpu, d, n, *, datasize):
    """for i = 0 to datasize-1 do result<datasize-1-i> = operand<i>;    // RBIT
X[d, datasize] = result;"""
    value = _x(cpu, n, datasize)
    cpu.set_X(d, int(format(value, f"0{datasize}b")[::-1], 2))


def reverse_bytes(cpu, d, n, *, datasize, container):
    """// REV16 (container 16), REV32 (32), REV (datasize): the bytes of each container reversed
for c = 0 to containers-1 do for b = 0 to bytes_per_container-1 do
    result<byte (c, b)> = operand<byte (c, bytes_per_container-1-b)>;
X[d, datasize] = result;"""
    data = _x(cpu, n, datasize).to_bytes(datasize // 8, "little")
    step = container // 8
    swapped = b"".join(data[i:i + step][::-1] for i in range(0, len(data), step))
    cpu.set_X(d, int.from_bytes(swapped, "little"))


def count_leading(cpu, d, n, *, datasize, signs):
    """if opcode == CountOp_CLZ then result = CountLeadingZeroBits(operand1);
else result = CountLeadingSignBits(operand1);    // CLS: the bits after the top one that equal it
X[d, datasize] = result<datasize-1:0>;"""
    value = _x(cpu, n, datasize)
    if signs:
        value = (value ^ (value >> 1)) & Ones(datasize - 1)  # bit i set where bits i+1 and i differ
        result = datasize - 1 - value.bit_length()
    else:
        result = datasize - value.bit_length()
    cpu.set_X(d, result)


def multiply_long(cpu, d, n, m, a, *, unsigned, sub_op):
    """bits(32) operand1 = X[n, 32]; operand2 = X[m, 32]; bits(64) operand3 = X[a, 64];
integer result = if sub_op then Int(operand3, unsigned) - Int(operand1, unsigned) * Int(operand2, unsigned)
                 else Int(operand3, unsigned) + Int(operand1, unsigned) * Int(operand2, unsigned);
X[d, 64] = result<63:0>;    // SMADDL, SMSUBL, UMADDL, UMSUBL (SMULL, UMULL, SMNEGL, UMNEGL: a = XZR)"""
    a1, a2 = _x(cpu, n, 32), _x(cpu, m, 32)
    if not unsigned:
        a1, a2 = SInt(a1, 32), SInt(a2, 32)
    addend = cpu.X(a)
    cpu.set_X(d, (addend - a1 * a2 if sub_op else addend + a1 * a2) & Ones(64))


def multiply_high(cpu, d, n, m, *, unsigned):
    """integer result = Int(X[n, 64], unsigned) * Int(X[m, 64], unsigned);
X[d, 64] = result<127:64>;    // SMULH, UMULH"""
    a1, a2 = cpu.X(n), cpu.X(m)
    if not unsigned:
        a1, a2 = SInt(a1, 64), SInt(a2, 64)
    cpu.set_X(d, ((a1 * a2) >> 64) & Ones(64))


def conditional_select(cpu, d, n, m, cond, *, datasize, else_inv, else_inc):
    """if ConditionHolds(cond) then result = X[n, datasize];
else
    result = X[m, datasize];
    if else_inv then result = NOT(result);    // CSINV, CSNEG
    if else_inc then result = result + 1;     // CSINC, CSNEG
X[d, datasize] = result;"""
    if ConditionHolds(cond, cpu.state.nzcv >> 28):
        result = _x(cpu, n, datasize)
    else:
        result = _x(cpu, m, datasize)
        if else_inv:
            result = ~result
        if else_inc:
            result += 1
    cpu.set_X(d, result & Ones(datasize))


def conditional_compare(cpu, n, operand, nzcv, cond, *, datasize, sub_op, immediate):
    """bits(datasize) operand1 = X[n, datasize];
bits(datasize) operand2 = if immediate then ZeroExtend(imm5) else X[m, datasize];
bits(4) flags = nzcv;    // the immediate #nzcv
if ConditionHolds(cond) then
    if sub_op then operand2 = NOT(operand2); carry_in = '1'; else carry_in = '0';    // CCMP / CCMN
    (-, flags) = AddWithCarry(operand1, operand2, carry_in);
PSTATE.<N,Z,C,V> = flags;"""
    if ConditionHolds(cond, cpu.state.nzcv >> 28):
        operand2 = operand if immediate else _x(cpu, operand, datasize)
        carry_in = 0
        if sub_op:
            operand2, carry_in = ~operand2 & Ones(datasize), 1
        _, flags = AddWithCarry(_x(cpu, n, datasize), operand2, carry_in, datasize)
        cpu.set_NZCV(*flags)
    else:
        cpu.set_NZCV((nzcv >> 3) & 1, (nzcv >> 2) & 1, (nzcv >> 1) & 1, nzcv & 1)


def add_sub_carry(cpu, d, n, m, *, datasize, sub_op, setflags):
    """bits(datasize) operand1 = X[n, datasize]; operand2 = X[m, datasize];
if sub_op then operand2 = NOT(operand2);    // SBC, SBCS (NGC, NGCS)
(result, nzcv) = AddWithCarry(operand1, operand2, PSTATE.C);
if setflags then PSTATE.<N,Z,C,V> = nzcv;    // ADCS, SBCS
X[d, datasize] = result;"""
    operand2 = _x(cpu, m, datasize)
    if sub_op:
        operand2 = ~operand2 & Ones(datasize)
    result, flags = AddWithCarry(_x(cpu, n, datasize), operand2, (cpu.state.nzcv >> 29) & 1, datasize)
    if setflags:
        cpu.set_NZCV(*flags)
    cpu.set_X(d, result)


def fmov_general(cpu, d, n, *, datasize, to_general):
    """if to_general then X[d, datasize] = V[n, datasize];    // FMOV Wd, Sn / Xd, Dn
else V[d, datasize] = X[n, datasize];    // FMOV Sd, Wn / Dd, Xn: the rest of the vector (Z[d] up to VL) zeroed"""
    if to_general:
        cpu.set_X(d, int.from_bytes(cpu.Z(n)[:datasize // 8].tobytes(), "little"))
    else:
        vector = np.zeros(cpu.svlb, dtype=np.uint8)
        vector[:datasize // 8] = np.frombuffer(_x(cpu, n, datasize).to_bytes(datasize // 8, "little"), dtype=np.uint8)
        cpu.set_Z(d, vector)

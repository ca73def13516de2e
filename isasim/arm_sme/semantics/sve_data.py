"""SVE data processing clang's ACLE intrinsics lower to in streaming code: the unpredicated bitwise and
integer arithmetic on whole vectors (AND, ORR (MOV), EOR, BIC; ADD, SUB, SQADD, UQADD, SQSUB, UQSUB), the
element-count increments of a register (INCB/INCH/INCW/INCD, DECB...) and of each element of a vector
(INCH/INCW/INCD, DECH/DECW/DECD), RDVL and ADDPL, the reductions to a scalar (SADDV, UADDV, SMAXV, UMAXV, SMINV, UMINV, ORV, EORV, ANDV), the
predicate logic (AND, BIC, EOR, SEL, ORR, ORN, NOR, NAND and their flag-setting forms: MOV, MOVS, NOT),
DUP (immediate, scalar, indexed), SEL of vectors, INDEX and the permutes ZIP1/2, UZP1/2, TRN1/2.

Elements are numpy views of a Z register's bytes (little-endian, element e at bytes e*esize/8...).  A
scalar result written to a V register (a reduction's Vd) zeroes the rest of the Z register, as a
streaming-mode write of a SIMD&FP register does.
"""

from __future__ import annotations

import numpy as np

from ..state import MASK64
from .predicates_and_counts import pred_count

_DTYPES = {8: np.uint8, 16: np.uint16, 32: np.uint32, 64: np.uint64}
_SIGNED = {8: np.int8, 16: np.int16, 32: np.int32, 64: np.int64}


def elements(vector: np.ndarray, esize: int, signed: bool = False) -> np.ndarray:
    """A Z register's bytes as its esize-bit elements (a copy)."""
    return np.frombuffer(vector.tobytes(), dtype=(_SIGNED if signed else _DTYPES)[esize]).copy()


def as_bytes(values: np.ndarray) -> np.ndarray:
    return np.frombuffer(np.ascontiguousarray(values).tobytes(), dtype=np.uint8)


# ---- unpredicated bitwise and integer arithmetic ------------------------------------------------------

_LOGICAL = {"and": np.bitwise_and, "orr": np.bitwise_or, "eor": np.bitwise_xor,
            "bic": lambda a, b: np.bitwise_and(a, np.invert(b))}


def logical_vectors(cpu, d, n, m, *, op):
    """CheckSVEEnabled();
bits(VL) operand1 = Z[n, VL];
bits(VL) operand2 = Z[m, VL];
Z[d, VL] = operand1 op operand2;   // AND, OR (ORR), EOR, AND NOT (BIC): the 64-bit elements as bits"""
    cpu.CheckSVEEnabled()
    cpu.set_Z(d, _LOGICAL[op](cpu.Z(n), cpu.Z(m)))


def _saturate(values, esize, signed):
    low, high = (-(1 << (esize - 1)), (1 << (esize - 1)) - 1) if signed else (0, (1 << esize) - 1)
    return [min(max(v, low), high) for v in values]


def arithmetic_vectors(cpu, d, n, m, *, esize, op):
    """CheckSVEEnabled();
for e = 0 to elements-1
    integer element1 = Int(Elem[operand1, e, esize], unsigned);   // SQADD/SQSUB signed, UQADD/UQSUB unsigned
    integer element2 = Int(Elem[operand2, e, esize], unsigned);
    case op of                                                  // ADD, SUB: modulo 2^esize
        when add  Elem[result, e, esize] = (element1 + element2)<esize-1:0>;
        when sub  Elem[result, e, esize] = (element1 - element2)<esize-1:0>;
        when sqadd, uqadd  (Elem[result, e, esize], -) = SatQ(element1 + element2, esize, unsigned);
        when sqsub, uqsub  (Elem[result, e, esize], -) = SatQ(element1 - element2, esize, unsigned);
Z[d, VL] = result;"""
    cpu.CheckSVEEnabled()
    if op in ("add", "sub"):
        a, b = elements(cpu.Z(n), esize), elements(cpu.Z(m), esize)
        with np.errstate(over="ignore"):
            result = a + b if op == "add" else a - b
        cpu.set_Z(d, as_bytes(result))
        return
    signed = op.startswith("s")
    a, b = elements(cpu.Z(n), esize, signed), elements(cpu.Z(m), esize, signed)
    exact = [int(x) + int(y) if op.endswith("add") else int(x) - int(y) for x, y in zip(a, b)]
    mask = (1 << esize) - 1
    result = np.array([v & mask for v in _saturate(exact, esize, signed)], dtype=object).astype(_DTYPES[esize])
    cpu.set_Z(d, as_bytes(result))


# ---- element counts ------------------------------------------------------------------------------------


def inc_scalar(cpu, dn, pattern, *, esize, decrement):
    """CheckSVEEnabled();
integer count = DecodePredCount(pat, esize);
bits(64) operand1 = X[dn, 64];
X[dn, 64] = operand1 + (count * imm);   // INC*; DEC*: operand1 - (count * imm), modulo 2^64"""
    cpu.CheckSVEEnabled()
    pat, times = pattern
    step = pred_count(pat, esize, cpu.VL) * times
    cpu.set_X(dn, (cpu.X(dn) + (-step if decrement else step)) & MASK64)


def rdvl(cpu, d, imm):
    """CheckSVEEnabled();
X[d, 64] = imm * (VL DIV 8);   // imm -32..31; in streaming mode VL is the SVL"""
    cpu.CheckSVEEnabled()
    cpu.set_X(d, (imm * (cpu.VL // 8)) & MASK64)


def addpl(cpu, d, n, imm):
    """CheckSVEEnabled();
X[d|SP, 64] = X[n|SP, 64] + imm * (PL DIV 8);   // imm -32..31 predicate lengths in bytes (VL / 64)"""
    cpu.CheckSVEEnabled()
    cpu.set_XSP(d, (cpu.XSP(n) + imm * (cpu.VL // 64)) & MASK64)


def inc_vector(cpu, dn, pattern, *, esize, decrement):
    """CheckSVEEnabled();
integer count = DecodePredCount(pat, esize);
for e = 0 to elements-1
    Elem[result, e, esize] = Elem[Z[dn], e, esize] + (count * imm);   // DEC*: minus; modulo 2^esize
Z[dn, VL] = result;"""
    cpu.CheckSVEEnabled()
    pat, times = pattern
    step = (pred_count(pat, esize, cpu.VL) * times) % (1 << esize)
    values = elements(cpu.Z(dn), esize)
    with np.errstate(over="ignore"):
        values = values - _DTYPES[esize](step) if decrement else values + _DTYPES[esize](step)
    cpu.set_Z(dn, as_bytes(values))


# ---- reductions -------------------------------------------------------------------------------------------


def _write_v(cpu, d, value: int, bits: int) -> None:
    """V[d, bits] = value: the low bits of Z[d], the rest of Z[d] zeroed."""
    out = np.zeros(cpu.VL // 8, dtype=np.uint8)
    out[:bits // 8] = np.frombuffer((value & ((1 << bits) - 1)).to_bytes(bits // 8, "little"), dtype=np.uint8)
    cpu.set_Z(d, out)


def reduce(cpu, d, g, n, *, esize, op):
    """CheckSVEEnabled();
bits(PL) mask = P[g, PL];
bits(VL) operand = Z[n, VL];
// SADDV, UADDV: the sum of the active elements, each Int(element, unsigned), in 64 bits:
//   V[d, 64] = sum<63:0>;
// SMAXV, UMAXV, SMINV, UMINV: the largest (smallest) active element; with none active, the
//   identity: the smallest (largest) value of the element type;  V[d, esize] = result
// ORV, EORV, ANDV: the active elements combined by OR, EOR, AND (identity Zeros, Zeros, Ones)
//   V[d, esize] = result"""
    cpu.CheckSVEEnabled()
    active = cpu.ActiveElements(g, esize)
    signed = op in ("saddv", "smaxv", "sminv")
    values = [int(v) for v in elements(cpu.Z(n), esize, signed)[active]]
    mask = (1 << esize) - 1
    if op in ("saddv", "uaddv"):
        _write_v(cpu, d, sum(values), 64)
        return
    if op in ("smaxv", "umaxv", "sminv", "uminv"):
        low, high = (-(1 << (esize - 1)), (1 << (esize - 1)) - 1) if signed else (0, mask)
        result = (max if "max" in op else min)(values, default=low if "max" in op else high)
    else:
        result = {"orv": 0, "eorv": 0, "andv": mask}[op]
        for v in values:
            result = result | v if op == "orv" else result ^ v if op == "eorv" else result & v
    _write_v(cpu, d, result, esize)


# ---- predicate logic ---------------------------------------------------------------------------------------

_PREDICATE_OPS = {
    "and": lambda n, m: n & m, "bic": lambda n, m: n & ~m, "eor": lambda n, m: n ^ m,
    "orr": lambda n, m: n | m, "orn": lambda n, m: n | ~m, "nor": lambda n, m: ~(n | m),
    "nand": lambda n, m: ~(n & m)}


def predicate_logical(cpu, d, g, n, m, *, op, setflags):
    """CheckSVEEnabled();
bits(PL) mask = P[g, PL]; bits(PL) operand1 = P[n, PL]; bits(PL) operand2 = P[m, PL];
for e = 0 to elements-1   // every byte's predicate bit
    if ActivePredicateElement(mask, e, 8) then
        ElemP[result, e, 8] = op(ElemP[operand1, e, 8], ElemP[operand2, e, 8]);  // AND, BIC, EOR, ORR,
    else                                                                           // ORN, NOR, NAND
        ElemP[result, e, 8] = '0';           // SEL: ElemP[operand2, e, 8] instead
if setflags then PSTATE.<N,Z,C,V> = PredTest(mask, result, 8);
P[d, PL] = result;"""
    cpu.CheckSVEEnabled()
    mask, a, b = cpu.P(g), cpu.P(n), cpu.P(m)
    if op == "sel":
        result = np.where(mask, a, b)
    else:
        result = _PREDICATE_OPS[op](a, b) & mask
    if setflags:
        selected = result[mask]
        if selected.size:
            cpu.set_NZCV(int(selected[0]), int(not selected.any()), int(not selected[-1]), 0)
        else:
            cpu.set_NZCV(0, 1, 1, 0)
    cpu.set_P(d, result)


# ---- DUP, SEL, INDEX, permutes -----------------------------------------------------------------------------


def _broadcast(cpu, d, value: int, esize: int) -> None:
    count = cpu.VL // esize
    cpu.set_Z(d, as_bytes(np.full(count, value & ((1 << esize) - 1), dtype=_DTYPES[esize])))


def dup_immediate(cpu, d, imm, *, esize):
    """CheckSVEEnabled();
bits(esize) imm = SignExtend(imm8 : Zeros(8*sh), esize);   // #-128..127, or LSL #8
for e = 0 to elements-1
    Elem[result, e, esize] = imm;
Z[d, VL] = result;"""
    cpu.CheckSVEEnabled()
    _broadcast(cpu, d, imm, esize)


def dup_scalar(cpu, d, n, *, esize):
    """CheckSVEEnabled();
bits(esize) operand = X[n|SP, esize];   // the low esize bits of Wn/Xn (register 31 is SP)
for e = 0 to elements-1
    Elem[result, e, esize] = operand;
Z[d, VL] = result;"""
    cpu.CheckSVEEnabled()
    _broadcast(cpu, d, cpu.XSP(n), esize)


def dup_indexed(cpu, d, indexed, *, esize):
    """CheckSVEEnabled();
bits(esize) element = if index >= elements then Zeros() else Elem[Z[n], index, esize];
for e = 0 to elements-1
    Elem[result, e, esize] = element;
Z[d, VL] = result;"""
    cpu.CheckSVEEnabled()
    n, index = indexed
    size = esize // 8
    source = cpu.Z(n).reshape(-1, size)
    element = source[index] if index < source.shape[0] else np.zeros(size, dtype=np.uint8)
    cpu.set_Z(d, np.tile(element, source.shape[0]))


def select_vectors(cpu, d, g, n, m, *, esize):
    """CheckSVEEnabled();
for e = 0 to elements-1
    Elem[result, e, esize] = if ActivePredicateElement(P[g], e, esize) then Elem[Z[n], e, esize]
                             else Elem[Z[m], e, esize];
Z[d, VL] = result;"""
    cpu.CheckSVEEnabled()
    active = cpu.ActiveElements(g, esize)
    cpu.set_Z(d, as_bytes(np.where(active, elements(cpu.Z(n), esize), elements(cpu.Z(m), esize))))


def index(cpu, d, start, step, *, esize):
    """CheckSVEEnabled();
for e = 0 to elements-1
    Elem[result, e, esize] = (start + e * step)<esize-1:0>;   // immediates -16..15 or registers
Z[d, VL] = result;"""
    cpu.CheckSVEEnabled()
    first, by = start, step
    if not isinstance(first, int) or not isinstance(by, int):
        raise TypeError("INDEX takes integer operands")
    mask = (1 << esize) - 1
    values = [(first + e * by) & mask for e in range(cpu.VL // esize)]
    cpu.set_Z(d, as_bytes(np.array(values, dtype=object).astype(_DTYPES[esize])))


def index_registers(cpu, d, a, b, *, esize, start_reg, step_reg):
    """CheckSVEEnabled();
integer start = if start is a register then SInt(X[n, esize]) else imm5;
integer step = if step is a register then SInt(X[m, esize]) else imm5b;
for e = 0 to elements-1
    Elem[result, e, esize] = (start + e * step)<esize-1:0>;
Z[d, VL] = result;"""
    start = cpu.X(a) if start_reg else a
    step = cpu.X(b) if step_reg else b
    index(cpu, d, start, step, esize=esize)


def permute(cpu, d, n, m, *, esize, op):
    """CheckSVEEnabled();
// pairs = elements DIV 2; operand1 = Z[n], operand2 = Z[m]
// ZIP1: Elem[result, 2p] = Elem[operand1, p], Elem[result, 2p+1] = Elem[operand2, p] (low halves);
// ZIP2: the same from the high halves (p + pairs)
// UZP1: the even elements of operand1 then of operand2;  UZP2: the odd ones
// TRN1: Elem[result, 2p] = Elem[operand1, 2p], Elem[result, 2p+1] = Elem[operand2, 2p];
// TRN2: the same with the odd elements (2p+1)
Z[d, VL] = result;"""
    cpu.CheckSVEEnabled()
    a, b = elements(cpu.Z(n), esize), elements(cpu.Z(m), esize)
    half = a.size // 2
    result = np.empty_like(a)
    if op in ("zip1", "zip2"):
        base = 0 if op == "zip1" else half
        result[0::2], result[1::2] = a[base:base + half], b[base:base + half]
    elif op in ("uzp1", "uzp2"):
        start = 0 if op == "uzp1" else 1
        result = np.concatenate([a[start::2], b[start::2]])
    else:
        start = 0 if op == "trn1" else 1
        result[0::2], result[1::2] = a[start::2], b[start::2]
    cpu.set_Z(d, as_bytes(result))


def permute_predicates(cpu, d, n, m, *, esize, op):
    """CheckSVEEnabled();
// as ZIP1/2, UZP1/2, TRN1/2 of vectors, on the predicates' esize DIV 8-bit elements
P[d, PL] = result;"""
    cpu.CheckSVEEnabled()
    size = esize // 8
    a, b = cpu.P(n).reshape(-1, size), cpu.P(m).reshape(-1, size)
    half = a.shape[0] // 2
    if op in ("zip1", "zip2"):
        base = 0 if op == "zip1" else half
        result = np.empty_like(a)
        result[0::2], result[1::2] = a[base:base + half], b[base:base + half]
    elif op in ("uzp1", "uzp2"):
        start = 0 if op == "uzp1" else 1
        result = np.concatenate([a[start::2], b[start::2]])
    else:
        start = 0 if op == "trn1" else 1
        result = np.empty_like(a)
        result[0::2], result[1::2] = a[start::2], b[start::2]
    cpu.set_P(d, result.reshape(-1))

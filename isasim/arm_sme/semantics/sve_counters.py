"""Predicates as counters and the multi-vector memory forms they govern (SME2): PTRUE (predicate as counter),
WHILELT/LE/LO/LS/GE/GT/HS/HI into a counter over two or four vectors, CNTP of a predicate and of a counter,
PSEL, and the contiguous LD1B/H/W/D, LDNT1*, ST1*, STNT1* of two or four registers, consecutive or strided.

A predicate-as-counter register holds, in its low 16 bits, how many leading elements are active and of what
size (the Arm ARM's EncodePredCount: bit 15 inverts, the lowest set bit of bits 3:0 gives the element size,
the count sits above it); CounterToPredicate turns it back into a predicate of up to four vectors.  The
non-temporal forms (LDNT1*, STNT1*) differ only in their cache hint, which isasim does not model.
"""

from __future__ import annotations

import numpy as np

from ..state import MASK64
from .vector_memory import _read_elements, _write_elements

_SIZE_BIT = {8: 0, 16: 1, 32: 2, 64: 3}


def encode_pred_count(esize: int, elements: int, count: int, invert: bool, vl: int) -> np.ndarray:
    """EncodePredCount(esize, elements, count, invert, PL) as the predicate's bytes (PL = VL/8 bits)."""
    out = np.zeros(vl // 64, dtype=np.uint8)
    if count == 0:
        return out
    if invert:
        count = elements - count
    elif count == elements:
        count, invert = 0, True
    shift = _SIZE_BIT[esize]
    pred = (int(invert) << 15) | ((count << (shift + 1)) & 0x7FFF & ~((1 << (shift + 1)) - 1)) | (1 << shift)
    out[:2] = np.frombuffer(pred.to_bytes(2, "little"), dtype=np.uint8)
    return out


def counter_to_predicate(cpu, n: int, nreg: int) -> tuple[int, np.ndarray]:
    """CounterToPredicate(P[n]<15:0>, PL * nreg): (esize, whether each element of the nreg vectors is
    active); esize 8 with none active where bits 3:0 are zero."""
    p = cpu.state.p[n]
    pred = int(p[0]) | (int(p[1]) << 8) if p.size > 1 else int(p[0])
    vl = cpu.VL
    if pred & 0xF == 0:
        return 8, np.zeros(nreg * vl // 8, dtype=bool)
    shift = (pred & -pred).bit_length() - 1  # the lowest set bit of 3:0
    esize = 8 << shift
    maxbit = (vl // 2 - 1).bit_length()  # HighestSetBit(CeilPow2(PL * 4)), PL = VL / 8
    count = (pred >> (shift + 1)) & ((1 << (maxbit - shift)) - 1)
    invert = bool(pred >> 15 & 1)
    elements = nreg * vl // esize
    active = np.arange(elements) < count
    return esize, ~active if invert else active


def ptrue_counter(cpu, d, *, esize):
    """CheckSVEEnabled();   // streaming mode (SME2)
constant integer elements = VL DIV esize;
P[d, PL] = EncodePredCount(esize, elements, elements, FALSE, PL);   // all active: the inverted zero count"""
    cpu.CheckStreamingSVEEnabled()
    cpu.state.write_p(d, encode_pred_count(esize, cpu.VL // esize, cpu.VL // esize, False, cpu.VL))


def _while_count(a: int, b: int, elements: int, width: int, op: str, unsigned: bool) -> int:
    """How many elements the WHILE loop makes active: from the first (LT, LE, LO, LS; the operand stepping
    up) or the last (GE, GT, HS, HI; stepping down), as long as the comparison holds in ``width`` bits (an
    operand that wraps past the end of its range keeps the comparison true only where the bound is that end)."""
    low, high = (0, (1 << width) - 1) if unsigned else (-(1 << (width - 1)), (1 << (width - 1)) - 1)
    if op == "lt":
        return min(elements, max(0, b - a))
    if op == "le":
        return elements if b == high else min(elements, max(0, b - a + 1))
    if op == "gt":
        return min(elements, max(0, a - b))
    return elements if b == low else min(elements, max(0, a - b + 1))  # ge


def _operands(cpu, n, m, width, unsigned):
    mask = (1 << width) - 1
    a, b = cpu.X(n) & mask, cpu.X(m) & mask
    if not unsigned:
        a = a - (1 << width) if a >> (width - 1) else a
        b = b - (1 << width) if b >> (width - 1) else b
    return a, b


def _flags(cpu, count: int, elements: int, invert: bool) -> None:
    """PredCountTest(elements, count, invert): N the first element active, Z none, C the last not, V 0."""
    first = count != 0 and (not invert or count == elements)
    last = count != 0 and (invert or count == elements)
    cpu.set_NZCV(int(first), int(count == 0), int(not last), 0)


def while_counter(cpu, d, n, m, nreg, *, esize, op, unsigned):
    """CheckSVEEnabled();   // streaming mode (SME2)
constant integer elements = nreg * (VL DIV esize);   // VLx2 or VLx4
bits(64) operand1 = X[n, 64]; bits(64) operand2 = X[m, 64];
integer count = 0; boolean last = TRUE;
for e = 0 to elements-1
    // LT/LO: operand1 < operand2, LE/LS: <=, stepping operand1 up by 1;
    // GT/HI: operand1 > operand2, GE/HS: >=, stepping operand1 down by 1 (then invert = TRUE)
    last = last && Compare(operand1, operand2);   // SInt, or UInt for LO, LS, HI, HS
    if last then count = count + 1;
PSTATE.<N,Z,C,V> = PredCountTest(elements, count, invert);
P[d, PL] = EncodePredCount(esize, elements, count, invert, PL);"""
    cpu.CheckStreamingSVEEnabled()
    a, b = _operands(cpu, n, m, 64, unsigned)
    elements = nreg * cpu.VL // esize
    count = _while_count(a, b, elements, 64, op, unsigned)
    invert = op in ("gt", "ge")
    _flags(cpu, count, elements, invert)
    cpu.state.write_p(d, encode_pred_count(esize, elements, count, invert, cpu.VL))


def while_predicate(cpu, d, n, m, *, esize, width, op, unsigned):
    """CheckSVEEnabled();
bits(rsize) operand1 = X[n, rsize]; bits(rsize) operand2 = X[m, rsize];   // rsize 32 (W) or 64 (X)
boolean last = TRUE;
for e = 0 to elements-1
    // LE/LS: operand1 <= operand2, stepping operand1 up, element e;  GE/HS: >=, GT/HI: >, stepping
    // operand1 down, element elements-1-e (the predicate's last elements active)
    last = last && Compare(operand1, operand2);
    ElemP[result, e or elements-1-e, esize] = if last then '1' else '0';
PSTATE.<N,Z,C,V> = PredTest(Ones(PL), result, esize);
P[d, PL] = result;"""
    cpu.CheckSVEEnabled()
    a, b = _operands(cpu, n, m, width, unsigned)
    elements = cpu.VL // esize
    count = _while_count(a, b, elements, width, op, unsigned)
    active = np.arange(elements) < count
    if op in ("gt", "ge"):
        active = active[::-1]
    cpu.set_NZCV(int(active[0]), int(not active.any()), int(not active[-1]), 0)
    cpu.set_P_elements(d, active, esize)


def cntp_predicate(cpu, d, g, n, *, esize):
    """CheckSVEEnabled();
integer sum = 0;
for e = 0 to elements-1
    if ActivePredicateElement(P[g], e, esize) && ActivePredicateElement(P[n], e, esize) then sum = sum + 1;
X[d, 64] = sum;"""
    cpu.CheckSVEEnabled()
    cpu.set_X(d, int(np.count_nonzero(cpu.ActiveElements(g, esize) & cpu.ActiveElements(n, esize))))


def cntp_counter(cpu, d, n, nreg, *, esize):
    """CheckSVEEnabled();   // streaming mode (SME2)
constant integer elements = nreg * (VL DIV esize);   // VLx2 or VLx4
bits(PL*4) pred = CounterToPredicate(P[n]<15:0>, PL*nreg);
integer count = 0;
for e = 0 to elements-1
    if ActivePredicateElement(pred, e, esize) then count = count + 1;
X[d, 64] = count;"""
    cpu.CheckStreamingSVEEnabled()
    cpu.set_X(d, int(np.count_nonzero(_active_per_register(cpu, n, nreg, esize))))


def psel(cpu, d, n, selector, *, esize):
    """CheckSVEEnabled();   // streaming mode (SME2)
constant integer elements = VL DIV esize;
integer index = (UInt(X[v, 32]) + imm) MOD elements;
P[d, PL] = if ActivePredicateElement(P[m], index, esize) then P[n, PL] else Zeros(PL);"""
    cpu.CheckStreamingSVEEnabled()
    m, v, imm = selector
    index = ((cpu.X(v) & 0xFFFFFFFF) + imm) % (cpu.VL // esize)
    if cpu.ActiveElements(m, esize)[index]:
        cpu.state.write_p(d, cpu.state.p[n].copy())
    else:
        cpu.state.write_p(d, np.zeros_like(cpu.state.p[n]))


def _active_per_register(cpu, g: int, nreg: int, esize: int) -> np.ndarray:
    """CounterToPredicate(P[g]<15:0>, PL * nreg) read at esize: one row of elements per register."""
    stored, active = counter_to_predicate(cpu, g, nreg)
    bits = np.zeros(nreg * cpu.VL // 8, dtype=bool)
    bits[::stored // 8] = active[:bits[::stored // 8].size]
    return bits[::esize // 8].reshape(nreg, -1)


def _base(cpu, address, mode, nreg, esize):
    n, k = address
    mbytes = esize // 8
    if mode == "imm":  # [Xn, #imm, MUL VL]: imm whole vectors (a multiple of nreg)
        return (cpu.XSP(n) + k * (cpu.VL // 8)) & MASK64
    return (cpu.XSP(n) + cpu.X(k) * mbytes) & MASK64


def ld1_multi(cpu, registers, g, address, *, esize, mode):
    """CheckStreamingSVEEnabled();   // SME2 (or FEAT_SVE2p1)
constant integer elements = VL DIV esize;
constant integer mbytes = esize DIV 8;
bits(PL*4) mask = CounterToPredicate(P[g]<15:0>, PL*nreg);
bits(64) base = X[n|SP, 64];      // + X[m] * mbytes, or + imm * elements * mbytes (imm a multiple of nreg)
for r = 0 to nreg-1
    for e = 0 to elements-1
        if ActivePredicateElement(mask, r * elements + e, esize) then
            Elem[values[r], e, esize] = Mem[base + (r * elements + e) * mbytes, mbytes];
        else
            Elem[values[r], e, esize] = Zeros();
for r = 0 to nreg-1
    Z[t(r), VL] = values[r];   // t(r): consecutive t + r, or strided t + r * (16 DIV nreg)"""
    cpu.CheckStreamingSVEEnabled()
    nreg, mbytes = len(registers), esize // 8
    active = _active_per_register(cpu, g, nreg, esize).reshape(-1)
    start = _base(cpu, address, mode, nreg, esize)
    if active.all():
        data = np.frombuffer(cpu.read_memory(start, nreg * cpu.VL // 8), dtype=np.uint8)
    else:
        data = _read_elements(cpu, start, active, mbytes)
    rows = data.reshape(nreg, -1)
    for r, t in enumerate(registers):
        cpu.set_Z(t, rows[r].copy())


def st1_multi(cpu, registers, g, address, *, esize, mode):
    """CheckStreamingSVEEnabled();   // SME2 (or FEAT_SVE2p1)
constant integer elements = VL DIV esize;
constant integer mbytes = esize DIV 8;
bits(PL*4) mask = CounterToPredicate(P[g]<15:0>, PL*nreg);
bits(64) base = X[n|SP, 64];      // + X[m] * mbytes, or + imm * elements * mbytes
for r = 0 to nreg-1
    for e = 0 to elements-1
        if ActivePredicateElement(mask, r * elements + e, esize) then
            Mem[base + (r * elements + e) * mbytes, mbytes] = Elem[Z[t(r)], e, esize];"""
    cpu.CheckStreamingSVEEnabled()
    nreg, mbytes = len(registers), esize // 8
    active = _active_per_register(cpu, g, nreg, esize).reshape(-1)
    start = _base(cpu, address, mode, nreg, esize)
    data = np.concatenate([cpu.Z(t) for t in registers])
    if active.all():
        cpu.write_memory(start, data.tobytes())
    else:
        _write_elements(cpu, start, data, active, mbytes)


"""More SVE forms compiled ACLE code holds (streaming mode): ADD, SUB, SUBR, SQADD, UQADD, SQSUB, UQSUB of an
unsigned immediate, EXT (destructive and of a register pair), TBL (one and two table registers), INCP/DECP of a
general register, and LD1RQB/H/W/D (one quadword loaded under the predicate, repeated along the vector)."""

from __future__ import annotations

import numpy as np

from ..state import MASK64
from .sve_data import _DTYPES, as_bytes, elements
from .vector_memory import _read_elements


def arithmetic_immediate(cpu, dn, dn_again, imm, *, esize, op):
    """CheckSVEEnabled();
for e = 0 to elements-1
    integer element1 = UInt(Elem[Z[dn], e, esize]);   // SQADD/SQSUB: SInt
    case op of
        when add   Elem[result, e, esize] = (element1 + imm)<esize-1:0>;
        when sub   Elem[result, e, esize] = (element1 - imm)<esize-1:0>;
        when subr  Elem[result, e, esize] = (imm - element1)<esize-1:0>;
        otherwise  (Elem[result, e, esize], -) = SatQ(element1 +/- imm, esize, unsigned);
Z[dn, VL] = result;   // imm 0..255, optionally LSL #8"""
    cpu.CheckSVEEnabled()
    signed = op in ("sqadd", "sqsub")
    mask = (1 << esize) - 1
    values = [int(v) for v in elements(cpu.Z(dn), esize)]
    if signed:
        values = [v - (1 << esize) if v >> (esize - 1) else v for v in values]
    if op in ("add", "sub", "subr"):
        out = [(v + imm if op == "add" else v - imm if op == "sub" else imm - v) & mask for v in values]
    else:
        low, high = (-(1 << (esize - 1)), (1 << (esize - 1)) - 1) if signed else (0, mask)
        out = [min(max(v + imm if op.endswith("add") else v - imm, low), high) & mask for v in values]
    cpu.set_Z(dn, as_bytes(np.array(out, dtype=object).astype(_DTYPES[esize])))


def ext(cpu, d, first, second, imm):
    """CheckSVEEnabled();
bits(2*VL) concat = Z[second, VL] : Z[first, VL];   // destructive: Zm : Zdn; constructive: Z[n+1] : Z[n]
integer position = if imm >= VL DIV 8 then 0 else imm;
Z[d, VL] = concat<position*8 + VL - 1 : position*8>;"""
    cpu.CheckSVEEnabled()
    size = cpu.VL // 8
    position = 0 if imm >= size else imm
    both = np.concatenate([cpu.Z(first), cpu.Z(second)])
    cpu.set_Z(d, both[position:position + size].copy())


def ext_pair(cpu, d, pair, imm):
    """CheckSVEEnabled();
bits(2*VL) concat = Z[n+1, VL] : Z[n, VL];
integer position = if imm >= VL DIV 8 then 0 else imm;
Z[d, VL] = concat<position*8 + VL - 1 : position*8>;"""
    ext(cpu, d, pair, (pair + 1) % 32, imm)


def tbl(cpu, d, table, m, *, esize):
    """CheckSVEEnabled();
// table: one register, or two (Z[n] then Z[n+1]: 2 * elements entries)
for e = 0 to elements-1
    integer index = UInt(Elem[Z[m], e, esize]);
    Elem[result, e, esize] = if index < entries then Elem[table, index, esize] else Zeros();
Z[d, VL] = result;"""
    cpu.CheckSVEEnabled()
    entries = np.concatenate([elements(cpu.Z(t), esize) for t in table])
    indexes = elements(cpu.Z(m), esize)
    out = np.array([entries[int(i)] if int(i) < entries.size else 0 for i in indexes], dtype=_DTYPES[esize])
    cpu.set_Z(d, as_bytes(out))


def tbl_single(cpu, d, n, m, *, esize):
    """CheckSVEEnabled();
for e = 0 to elements-1
    integer index = UInt(Elem[Z[m], e, esize]);
    Elem[result, e, esize] = if index < elements then Elem[Z[n], index, esize] else Zeros();
Z[d, VL] = result;"""
    tbl(cpu, d, (n,), m, esize=esize)


def count_predicate(cpu, dn, m, *, esize, decrement):
    """CheckSVEEnabled();
integer count = 0;
for e = 0 to elements-1
    if ActivePredicateElement(P[m], e, esize) then count = count + 1;
X[dn, 64] = X[dn, 64] + count;   // DECP: minus count; modulo 2^64"""
    cpu.CheckSVEEnabled()
    count = int(np.count_nonzero(cpu.ActiveElements(m, esize)))
    cpu.set_X(dn, (cpu.X(dn) + (-count if decrement else count)) & MASK64)


def ld1rq(cpu, t, g, address, *, esize, mode):
    """CheckSVEEnabled();
constant integer elements = 128 DIV esize;
bits(64) addr = X[n|SP, 64] + offset;   // #imm (a multiple of 16, -128..112), or X[m] * mbytes
for e = 0 to elements-1
    Elem[quad, e, esize] = if ActivePredicateElement(P[g], e, esize) then Mem[addr + e * mbytes, mbytes]
                           else Zeros();
Z[t, VL] = Replicate(quad, VL DIV 128);"""
    cpu.CheckSVEEnabled()
    n, k = address
    mbytes = esize // 8
    start = cpu.XSP(n) + (k if mode == "imm" else cpu.X(k) * mbytes)
    active = cpu.ActiveElements(g, esize)[:128 // esize]
    quad = _read_elements(cpu, start & MASK64, active, mbytes)
    cpu.set_Z(t, np.tile(quad, cpu.VL // 128))


def tbl_pair(cpu, d, pair, m, *, esize):
    """See tbl: the table is Z[n] then Z[n+1]."""
    tbl(cpu, d, (pair, (pair + 1) % 32), m, esize=esize)


def ext_destructive(cpu, dn, dn_again, m, imm):
    """See ext: Zm : Zdn."""
    ext(cpu, dn, dn, m, imm)

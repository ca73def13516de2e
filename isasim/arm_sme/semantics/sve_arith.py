"""SVE predicated integer arithmetic and compares (streaming mode): the destructive binary forms (ADD, SUB, SUBR,
SMAX, UMAX, SMIN, UMIN, SABD, UABD, MUL, SMULH, UMULH, SDIV, UDIV, SDIVR, UDIVR, ORR, EOR, AND, BIC: inactive
elements keep Zdn's value), the multiply-accumulates (MLA, MLS, MAD, MSB) and the compares into a predicate
(CMPEQ, CMPNE, CMPGE, CMPGT, CMPHI, CMPHS with a vector; with a signed or unsigned immediate also CMPLT, CMPLE,
CMPLO, CMPLS), which set NZCV as PredTest does.  Each element is worked in Python integers, exactly."""

from __future__ import annotations

import numpy as np

from .sve_data import as_bytes, elements

_DTYPES = {8: np.uint8, 16: np.uint16, 32: np.uint32, 64: np.uint64}


def _signed(value: int, esize: int) -> int:
    return value - (1 << esize) if value >> (esize - 1) else value


def _divide(a: int, b: int) -> int:
    if b == 0:
        return 0
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q  # towards zero


_BINARY = {
    "add": lambda a, b, s: a + b, "sub": lambda a, b, s: a - b, "subr": lambda a, b, s: b - a,
    "smax": lambda a, b, s: max(a, b), "umax": lambda a, b, s: max(a, b),
    "smin": lambda a, b, s: min(a, b), "umin": lambda a, b, s: min(a, b),
    "sabd": lambda a, b, s: abs(a - b), "uabd": lambda a, b, s: abs(a - b),
    "mul": lambda a, b, s: a * b, "smulh": lambda a, b, s: (a * b) >> s, "umulh": lambda a, b, s: (a * b) >> s,
    "sdiv": lambda a, b, s: _divide(a, b), "udiv": lambda a, b, s: _divide(a, b),
    "sdivr": lambda a, b, s: _divide(b, a), "udivr": lambda a, b, s: _divide(b, a),
    "orr": lambda a, b, s: a | b, "eor": lambda a, b, s: a ^ b, "and": lambda a, b, s: a & b,
    "bic": lambda a, b, s: a & ~b,
}
_SIGNED_OPS = {"smax", "smin", "sabd", "smulh", "sdiv", "sdivr"}


def _values(cpu, n, esize, signed):
    raw = [int(v) for v in elements(cpu.Z(n), esize)]
    return [_signed(v, esize) for v in raw] if signed else raw


def binary_predicated(cpu, dn, g, dn_again, m, *, esize, op):
    """CheckSVEEnabled();
for e = 0 to elements-1
    integer element1 = Int(Elem[Z[dn], e, esize], unsigned);   // signed for SMAX, SMIN, SABD, SMULH, SDIV(R)
    integer element2 = Int(Elem[Z[m], e, esize], unsigned);
    if ActivePredicateElement(P[g], e, esize) then
        Elem[result, e, esize] = op(element1, element2)<esize-1:0>;
        // ADD, SUB, SUBR (element2 - element1), MAX, MIN, ABD |e1 - e2|, MUL, MULH (the high half of the
        // 2*esize-bit product), DIV, DIVR (rounding towards zero; a divisor of zero gives 0), ORR, EOR, AND, BIC
    else
        Elem[result, e, esize] = Elem[Z[dn], e, esize];
Z[dn, VL] = result;"""
    cpu.CheckSVEEnabled()
    signed = op in _SIGNED_OPS
    a, b = _values(cpu, dn, esize, signed), _values(cpu, m, esize, signed)
    active = cpu.ActiveElements(g, esize)
    mask = (1 << esize) - 1
    out = [(_BINARY[op](x, y, esize) & mask) if on else (x & mask) for x, y, on in zip(a, b, active)]
    cpu.set_Z(dn, as_bytes(np.array(out, dtype=object).astype(_DTYPES[esize])))


def multiply_add(cpu, d, g, n, m, *, esize, op):
    """CheckSVEEnabled();
for e = 0 to elements-1
    if ActivePredicateElement(P[g], e, esize) then
        // MLA: Zda + Zn * Zm;  MLS: Zda - Zn * Zm;  MAD: Za + Zdn * Zm;  MSB: Za - Zdn * Zm
        Elem[result, e, esize] = (addend + or - product)<esize-1:0>;
    else
        Elem[result, e, esize] = Elem[Z[d], e, esize];   // Zda, or Zdn
Z[d, VL] = result;"""
    cpu.CheckSVEEnabled()
    mask = (1 << esize) - 1
    active = cpu.ActiveElements(g, esize)
    dest, first, second = (_values(cpu, r, esize, False) for r in (d, n, m))
    if op in ("mla", "mls"):  # d += or -= n * m
        addend, product = dest, [x * y for x, y in zip(first, second)]
    else:  # MAD, MSB: operands (d = Zdn, n = Zm, m = Za): d = Za +- d * Zm
        addend, product = second, [x * y for x, y in zip(dest, first)]
    sign = 1 if op in ("mla", "mad") else -1
    out = [((a + sign * p) & mask) if on else x for a, p, x, on in zip(addend, product, dest, active)]
    cpu.set_Z(d, as_bytes(np.array(out, dtype=object).astype(_DTYPES[esize])))


_COMPARE = {"eq": lambda a, b: a == b, "ne": lambda a, b: a != b, "ge": lambda a, b: a >= b,
            "gt": lambda a, b: a > b, "lt": lambda a, b: a < b, "le": lambda a, b: a <= b}


def compare(cpu, d, g, n, m, *, esize, cond, signed, immediate):
    """CheckSVEEnabled();
bits(PL) mask = P[g, PL];
for e = 0 to elements-1
    integer element1 = Int(Elem[Z[n], e, esize], unsigned);   // CMPHI/HS/LO/LS unsigned, the others signed
    integer element2 = if immediate then imm else Int(Elem[Z[m], e, esize], unsigned);
    ElemP[result, e, esize] = if ActivePredicateElement(mask, e, esize) && Compare(element1, element2)
                              then '1' else '0';
PSTATE.<N,Z,C,V> = PredTest(mask, result, esize);
P[d, PL] = result;"""
    cpu.CheckSVEEnabled()
    a = _values(cpu, n, esize, signed)
    b = [m] * len(a) if immediate else _values(cpu, m, esize, signed)
    mask = cpu.ActiveElements(g, esize)
    result = np.array([bool(on and _COMPARE[cond](x, y)) for x, y, on in zip(a, b, mask)])
    governed = result[mask]
    if governed.size:
        cpu.set_NZCV(int(governed[0]), int(not governed.any()), int(not governed[-1]), 0)
    else:
        cpu.set_NZCV(0, 1, 1, 0)
    cpu.set_P_elements(d, result, esize)

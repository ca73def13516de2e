"""SME2's integer operations on groups of two or four Z registers (forms/multi_vector.py), read like their ASL:
SMAX/SMIN/UMAX/UMIN, SRSHL/URSHL and SQDMULH of a group and a single vector or a group; SCLAMP/UCLAMP of a
group (and SVE2's of one vector); SEL under a predicate-as-counter; ZIP/UZP of two vectors or four
(``.q``: 128-bit elements); SUNPK/UUNPK into two or four; the saturating narrows SQCVT/UQCVT/SQCVTU (concatenated)
and SQCVTN/UQCVTN/SQCVTUN (interleaved), and the rounding, saturating shifts right SQRSHR/UQRSHR/SQRSHRU and their
interleaving N forms.

Registers of a group are consecutive from a multiple of their count (``{z4.s - z7.s}``).  Elements are Python
ints of one Z register (element e at bytes e*esize/8...), signed or unsigned as the ASL's Int(x, unsigned) reads
them.
"""

from __future__ import annotations

import numpy as np

from ..faults import undefined
from .sve_counters import _active_per_register

_DTYPES = {8: np.uint8, 16: np.uint16, 32: np.uint32, 64: np.uint64}


def elements(cpu, n: int, esize: int, signed: bool = False) -> list[int]:
    """Elem[Z[n], e, esize] for every e, as the ASL's SInt or UInt."""
    data = cpu.Z(n).tobytes()
    width = esize // 8
    return [int.from_bytes(data[i:i + width], "little", signed=signed) for i in range(0, len(data), width)]


def write(cpu, d: int, values, esize: int) -> None:
    """Z[d] = the elements (each taken modulo 2^esize)."""
    mask, width = (1 << esize) - 1, esize // 8
    cpu.set_Z(d, np.frombuffer(b"".join((v & mask).to_bytes(width, "little") for v in values), dtype=np.uint8))


def _sat(value: int, esize: int, unsigned: bool) -> int:
    low, high = (0, (1 << esize) - 1) if unsigned else (-(1 << (esize - 1)), (1 << (esize - 1)) - 1)
    return min(max(value, low), high)


def _shift_sat(shift: int, esize: int) -> int:
    return min(max(shift, -(esize + 1)), esize + 1)


def _rshl(a: int, shift: int, esize: int) -> int:
    shift = _shift_sat(shift, esize)
    round_const = 1 << (-1 - shift) if shift < 0 else 0
    return (a + round_const) << shift if shift >= 0 else (a + round_const) >> -shift


_BINARY = {
    "smax": (True, max), "smin": (True, min), "umax": (False, max), "umin": (False, min),
    "srshl": (True, None), "urshl": (False, None), "sqdmulh": (True, None),
}


def binary(cpu, dn, dn_again, m, *, esize, nreg, op, single):
    """CheckStreamingSVEEnabled();
constant integer elements = VL DIV esize;
array [0..3] of bits(VL) results;
for r = 0 to nreg-1
    bits(VL) operand1 = Z[dn+r, VL];
    bits(VL) operand2 = if single then Z[m, VL] else Z[m+r, VL];
    for e = 0 to elements-1
        integer element1 = Int(Elem[operand1, e, esize], unsigned);
        integer element2 = Int(Elem[operand2, e, esize], unsigned);
        case op of
            when SMAX, UMAX  res = Max(element1, element2);
            when SMIN, UMIN  res = Min(element1, element2);
            when SRSHL, URSHL                           // shift by the whole signed element2, rounding
                integer shift = ShiftSat(SInt(Elem[operand2, e, esize]), esize);
                integer round_const = if shift < 0 then 1 << (-1 - shift) else 0;
                res = (element1 + round_const) << shift;
            when SQDMULH  res = SignedSat((2 * element1 * element2) >> esize, esize);
        Elem[results[r], e, esize] = res<esize-1:0>;
for r = 0 to nreg-1
    Z[dn+r, VL] = results[r];"""
    cpu.CheckStreamingSVEEnabled()
    signed, pick = _BINARY[op]
    results = []
    for r in range(nreg):
        a = elements(cpu, dn + r, esize, signed)
        b = elements(cpu, m if single else m + r, esize, signed)
        if pick is not None:
            results.append([pick(x, y) for x, y in zip(a, b)])
        elif op == "sqdmulh":
            results.append([_sat((2 * x * y) >> esize, esize, False) for x, y in zip(a, b)])
        else:
            shifts = b if signed else [y - (1 << esize) if y >> (esize - 1) else y for y in b]
            results.append([_rshl(x, s, esize) for x, s in zip(a, shifts)])
    for r, values in enumerate(results):
        write(cpu, dn + r, values, esize)


def clamp(cpu, d, n, m, *, esize, nreg, signed):
    """CheckStreamingSVEEnabled();   // SVE2's one-vector form: CheckSVEEnabled()
constant integer elements = VL DIV esize;
bits(VL) operand1 = Z[n, VL];   // the minimum
bits(VL) operand2 = Z[m, VL];   // the maximum
for r = 0 to nreg-1
    bits(VL) operand3 = Z[d+r, VL];
    for e = 0 to elements-1
        integer element1 = Int(Elem[operand1, e, esize], unsigned);
        integer element2 = Int(Elem[operand2, e, esize], unsigned);
        integer element3 = Int(Elem[operand3, e, esize], unsigned);
        Elem[result, e, esize] = Min(Max(element1, element3), element2)<esize-1:0>;
    Z[d+r, VL] = result;"""
    if nreg == 1:
        cpu.CheckSVEEnabled()
    else:
        cpu.CheckStreamingSVEEnabled()
    low, high = elements(cpu, n, esize, signed), elements(cpu, m, esize, signed)
    for r in range(nreg):
        values = elements(cpu, d + r, esize, signed)
        write(cpu, d + r, [min(max(a, v), b) for a, v, b in zip(low, values, high)], esize)


def movprfx(cpu, d, n):
    """CheckSVEEnabled();
Z[d, VL] = Z[n, VL];   // a move that prefixes the destructive instruction after it (which must write Zd)"""
    cpu.CheckSVEEnabled()
    cpu.set_Z(d, cpu.Z(n).copy())


def sel(cpu, d, g, n, m, *, esize, nreg):
    """CheckStreamingSVEEnabled();
constant integer elements = VL DIV esize;
bits(PL * nreg) pred = CounterToPredicate(PN[g]<15:0>, PL * nreg);
for r = 0 to nreg-1
    for e = 0 to elements-1
        if ActivePredicateElement(pred, r * elements + e, esize) then
            Elem[result, e, esize] = Elem[Z[n+r], e, esize];
        else
            Elem[result, e, esize] = Elem[Z[m+r], e, esize];
    Z[d+r, VL] = result;"""
    cpu.CheckStreamingSVEEnabled()
    active = _active_per_register(cpu, g, nreg, esize)
    width = esize // 8
    results = []
    for r in range(nreg):
        chosen = np.repeat(active[r], width)
        results.append(np.where(chosen, cpu.Z(n + r), cpu.Z(m + r)).astype(np.uint8))
    for r, data in enumerate(results):
        cpu.set_Z(d + r, data)


def _chunks(cpu, registers, esize) -> list[bytes]:
    width = esize // 8
    data = b"".join(cpu.Z(r).tobytes() for r in registers)
    return [data[i:i + width] for i in range(0, len(data), width)]


def _write_chunks(cpu, d, chunks, nreg):
    data = b"".join(chunks)
    size = len(data) // nreg
    for r in range(nreg):
        cpu.set_Z(d + r, np.frombuffer(data[r * size:(r + 1) * size], dtype=np.uint8))


def zip_vectors(cpu, d, n, m, *, esize, nreg, unzip):
    """CheckStreamingSVEEnabled();
constant integer elements = VL DIV esize;    // esize 128 for .Q
// two sources (ZIP/UZP {Zd1, Zd2}, Zn, Zm) or a group of four ({Zd1-Zd4}, {Zn1-Zn4})
array [0..3] of bits(VL) sources = (Z[n], Z[m]) or (Z[n], Z[n+1], Z[n+2], Z[n+3]);
if nreg * esize > VL then UNDEFINED;         // ZIP/UZP .Q of two below 256 bits, .D and .Q of four
bits(VL * nreg) result;
for e = 0 to nreg * elements - 1
    if ZIP then Elem[result, e, esize] = Elem[sources[e MOD nreg], e DIV nreg, esize];     // interleave
    if UZP then Elem[result, (e MOD nreg) * elements + e DIV nreg, esize] = Elem[sources, e, esize];
                                          // the sources as one vector: every nreg-th element per register
for r = 0 to nreg-1
    Z[d+r, VL] = result<(r+1)*VL-1:r*VL>;"""
    cpu.CheckStreamingSVEEnabled()
    if nreg * esize > cpu.VL:
        raise undefined(f"{nreg} registers of {esize}-bit elements need a vector length of at least {nreg * esize} bits")
    sources = [n, m] if nreg == 2 and m is not None else [n + r for r in range(nreg)]
    per = cpu.VL // esize
    if unzip:
        flat = _chunks(cpu, sources, esize)
        out = [flat[k * nreg + r] for r in range(nreg) for k in range(per)]
    else:
        rows = [_chunks(cpu, [s], esize) for s in sources]
        out = [rows[r][k] for k in range(per) for r in range(nreg)]
    _write_chunks(cpu, d, out, nreg)


def zip_pair(cpu, d, n, m, *, esize, unzip):
    return zip_vectors(cpu, d, n, m, esize=esize, nreg=2, unzip=unzip)


def zip_four(cpu, d, n, *, esize, unzip):
    return zip_vectors(cpu, d, n, None, esize=esize, nreg=4, unzip=unzip)


def unpack(cpu, d, n, *, esize, nreg, signed):
    """CheckStreamingSVEEnabled();
constant integer elements = VL DIV esize;        // esize: the destination's, twice the source's
for r = 0 to nreg-1
    bits(VL) operand = Z[n + r DIV 2, VL];        // {Zd1, Zd2} from Zn; {Zd1-Zd4} from {Zn1, Zn2}
    integer base = (r MOD 2) * elements;          // the low half of the source, then the high half
    for e = 0 to elements-1
        Elem[result, e, esize] = Extend(Elem[operand, base + e, esize DIV 2], esize, unsigned);
    Z[d+r, VL] = result;"""
    cpu.CheckStreamingSVEEnabled()
    half = esize // 2
    sources = [elements(cpu, n + s, half, signed) for s in range(nreg // 2)]
    per = cpu.VL // esize
    results = [sources[r // 2][(r % 2) * per:(r % 2 + 1) * per] for r in range(nreg)]
    for r, values in enumerate(results):
        write(cpu, d + r, values, esize)


def _narrow(cpu, d, n, nreg, esize, interleave, convert):
    per = cpu.VL // esize
    dsize = esize // nreg
    out = [0] * (per * nreg)
    for r in range(nreg):
        for e, value in enumerate(convert(n + r)):
            out[e * nreg + r if interleave else r * per + e] = value
    write(cpu, d, out, dsize)


def saturate_narrow(cpu, d, n, *, esize, nreg, signed, unsigned_result, interleave):
    """CheckStreamingSVEEnabled();
constant integer elements = VL DIV esize;        // esize: the source's; the result's is esize DIV nreg
for r = 0 to nreg-1
    bits(VL) operand = Z[n+r, VL];
    for e = 0 to elements-1
        integer element = Int(Elem[operand, e, esize], unsigned);
        // SQCVT, UQCVT, SQCVTU: the registers one after another; the N forms interleave them
        integer i = if interleave then e * nreg + r else r * elements + e;
        Elem[result, i, esize DIV nreg] = SatQ(element, esize DIV nreg, unsigned_result);
Z[d, VL] = result;"""
    cpu.CheckStreamingSVEEnabled()
    dsize = esize // nreg
    _narrow(cpu, d, n, nreg, esize, interleave,
            lambda r: [_sat(v, dsize, unsigned_result) for v in elements(cpu, r, esize, signed)])


def shift_narrow(cpu, d, n, shift, *, esize, nreg, signed, unsigned_result, interleave):
    """CheckStreamingSVEEnabled();
constant integer elements = VL DIV esize;        // esize: the source's; the result's is esize DIV nreg
integer round_const = 1 << (shift - 1);          // shift: 1 to esize
for r = 0 to nreg-1
    bits(VL) operand = Z[n+r, VL];
    for e = 0 to elements-1
        integer element = (Int(Elem[operand, e, esize], unsigned) + round_const) >> shift;
        // SQRSHR, UQRSHR, SQRSHRU: the registers one after another; the N forms interleave them
        integer i = if interleave then e * nreg + r else r * elements + e;
        Elem[result, i, esize DIV nreg] = SatQ(element, esize DIV nreg, unsigned_result);
Z[d, VL] = result;"""
    cpu.CheckStreamingSVEEnabled()
    dsize, round_const = esize // nreg, 1 << (shift - 1)
    _narrow(cpu, d, n, nreg, esize, interleave,
            lambda r: [_sat((v + round_const) >> shift, dsize, unsigned_result)
                       for v in elements(cpu, r, esize, signed)])


def revd(cpu, d, g, n):
    """CheckStreamingSVEEnabled();
constant integer segments = VL DIV 128;
bits(PL) mask = P[g, PL];
bits(VL) result = Z[d, VL];                      // merging: an inactive quadword keeps its value
for e = 0 to segments-1
    if ActivePredicateElement(mask, e, 128) then
        bits(128) element = Elem[Z[n, VL], e, 128];
        Elem[result, e, 128] = element<63:0> : element<127:64>;   // the two doublewords swapped
Z[d, VL] = result;"""
    cpu.CheckStreamingSVEEnabled()
    active = cpu.ActiveElements(g, 128)
    source, result = cpu.Z(n).reshape(-1, 2, 8), cpu.Z(d).copy().reshape(-1, 2, 8)
    result[active] = source[active][:, ::-1]
    cpu.set_Z(d, result.reshape(-1))


def movt_to_general(cpu, t, offset):
    """CheckSMEAndZT0Enabled();   // PSTATE.ZA = 1
X[t, 64] = ZT0[offset * 8 +: 64];   // offset: 0, 8, ... 56 bytes (off3 * 8)"""
    cpu.CheckSMEAndZAEnabled()
    cpu.set_X(t, int.from_bytes(cpu.state.zt0[offset:offset + 8].tobytes(), "little"))


def movt_to_table(cpu, offset, t):
    """CheckSMEAndZT0Enabled();   // PSTATE.ZA = 1
ZT0[offset * 8 +: 64] = X[t, 64];   // offset: 0, 8, ... 56 bytes (off3 * 8)"""
    cpu.CheckSMEAndZAEnabled()
    table = cpu.state.zt0.copy()
    table[offset:offset + 8] = np.frombuffer(cpu.X(t).to_bytes(8, "little"), dtype=np.uint8)
    cpu.state.write_zt0(table)

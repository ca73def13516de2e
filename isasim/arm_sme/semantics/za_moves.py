"""Moving data into and out of ZA: LDR/STR ZA (one array vector to or from memory) and MOVA
(a tile slice to or from a Z register; llvm prints MOVA as its alias MOV).

The Operation of each is the Arm ARM's (C9.2 LDR (array vector), STR (array vector),
MOVA (tile to vector), MOVA (vector to tile)); the tile and slice geometry is za_tiles.py's.
"""

from __future__ import annotations

import numpy as np

from .za_tiles import vector_group_rows


def ldr_za(cpu, vector, address):
    """CheckSMEAndZAEnabled();   // PSTATE.SM may be 0
constant integer dim = SVL DIV 8;    // vectors in ZA, and bytes in a vector
bits(32) vbase = X[v, 32];
integer vec = (UInt(vbase) + offset) MOD dim;
bits(64) address = X[n|SP, 64] + offset * dim;   // the same offset, in vectors
ZAvector[vec, SVL] = Mem[address, dim];"""
    cpu.CheckSMEAndZAEnabled()
    (v, offset), (n, _) = vector, address
    vec = ((cpu.X(v) & 0xFFFFFFFF) + offset) % cpu.svlb
    data = cpu.read_memory(cpu.XSP(n) + offset * cpu.svlb, cpu.svlb)
    cpu.set_ZAvector(vec, np.frombuffer(data, dtype=np.uint8))


def str_za(cpu, vector, address):
    """CheckSMEAndZAEnabled();
constant integer dim = SVL DIV 8;
integer vec = (UInt(X[v, 32]) + offset) MOD dim;
bits(64) address = X[n|SP, 64] + offset * dim;
Mem[address, dim] = ZAvector[vec, SVL];"""
    cpu.CheckSMEAndZAEnabled()
    (v, offset), (n, _) = vector, address
    vec = ((cpu.X(v) & 0xFFFFFFFF) + offset) % cpu.svlb
    cpu.write_memory(cpu.XSP(n) + offset * cpu.svlb, cpu.ZAvector(vec).tobytes())


def _slice_index(cpu, esize: int, s: int, offset: int) -> int:
    """slice = (UInt(X[s, 32]) + offset) MOD dim, dim = SVL DIV esize (the slices of a tile)."""
    return ((cpu.X(s) & 0xFFFFFFFF) + offset) % (cpu.svl // esize)


def _merge(old: np.ndarray, new: np.ndarray, active: np.ndarray, esize: int) -> np.ndarray:
    """new where an element is active, old where not (whole esize-bit elements)."""
    bytes_active = np.repeat(active, esize // 8)
    return np.where(bytes_active, new, old).astype(np.uint8)


def mova_to_vector(cpu, d, g, za_slice, *, esize):
    """CheckStreamingSVEAndZAEnabled();
constant integer dim = SVL DIV esize;
integer slice = (UInt(X[s, 32]) + offset) MOD dim;
bits(PL) mask = P[g, PL];
bits(SVL) operand = ZAslice[tile, esize, vertical, slice, SVL];
bits(SVL) result = Z[d, SVL];          // merging: inactive elements keep Zd's
for e = 0 to dim-1
    if ActivePredicateElement(mask, e, esize) then
        Elem[result, e, esize] = Elem[operand, e, esize];
Z[d, SVL] = result;"""
    cpu.CheckStreamingSVEAndZAEnabled()
    tile, vertical, s, offset = za_slice
    operand = cpu.ZAslice(tile, esize, vertical, _slice_index(cpu, esize, s, offset))
    cpu.set_Z(d, _merge(cpu.Z(d), operand, cpu.ActiveElements(g, esize), esize))


def mova_to_tile(cpu, za_slice, g, n, *, esize):
    """CheckStreamingSVEAndZAEnabled();
constant integer dim = SVL DIV esize;
integer slice = (UInt(X[s, 32]) + offset) MOD dim;
bits(PL) mask = P[g, PL];
bits(SVL) operand = Z[n, SVL];
bits(SVL) result = ZAslice[tile, esize, vertical, slice, SVL];   // merging
for e = 0 to dim-1
    if ActivePredicateElement(mask, e, esize) then
        Elem[result, e, esize] = Elem[operand, e, esize];
ZAslice[tile, esize, vertical, slice, SVL] = result;"""
    cpu.CheckStreamingSVEAndZAEnabled()
    tile, vertical, s, offset = za_slice
    index = _slice_index(cpu, esize, s, offset)
    old = cpu.ZAslice(tile, esize, vertical, index)
    cpu.set_ZAslice(tile, esize, vertical, index, _merge(old, cpu.Z(n), cpu.ActiveElements(g, esize), esize))


def mova_group_to_vectors(cpu, d, group, *, nreg):
    """CheckStreamingSVEAndZAEnabled();
constant integer vstride = (SVL DIV 8) DIV nreg;
integer vec = (UInt(X[v, 32]) + offset) MOD vstride;
for r = 0 to nreg-1
    Z[d+r, SVL] = ZAvector[vec, SVL];
    vec = vec + vstride;"""
    cpu.CheckStreamingSVEAndZAEnabled()
    v, offset = group
    for r, row in enumerate(vector_group_rows(cpu.svlb, cpu.X(v), offset, nreg)):
        cpu.set_Z(d + r, cpu.ZAvector(row).copy())


def mova_vectors_to_group(cpu, group, n, *, nreg):
    """CheckStreamingSVEAndZAEnabled();
constant integer vstride = (SVL DIV 8) DIV nreg;
integer vec = (UInt(X[v, 32]) + offset) MOD vstride;
for r = 0 to nreg-1
    ZAvector[vec, SVL] = Z[n+r, SVL];
    vec = vec + vstride;"""
    cpu.CheckStreamingSVEAndZAEnabled()
    v, offset = group
    for r, row in enumerate(vector_group_rows(cpu.svlb, cpu.X(v), offset, nreg)):
        cpu.set_ZAvector(row, cpu.Z(n + r).copy())


def movaz_to_vector(cpu, d, za_slice, *, esize):
    """CheckStreamingSVEAndZAEnabled();
constant integer dim = SVL DIV esize;
integer slice = (UInt(X[s, 32]) + offset) MOD dim;
bits(SVL) result = ZAslice[tile, esize, vertical, slice, SVL];
Z[d, SVL] = result;                                   // every element: MOVAZ has no governing predicate
ZAslice[tile, esize, vertical, slice, SVL] = Zeros(SVL);"""
    cpu.CheckStreamingSVEAndZAEnabled()
    tile, vertical, s, offset = za_slice
    index = _slice_index(cpu, esize, s, offset)
    result = cpu.ZAslice(tile, esize, vertical, index).copy()
    cpu.set_Z(d, result)
    cpu.set_ZAslice(tile, esize, vertical, index, np.zeros_like(result))


def movaz_group_to_vectors(cpu, d, group, *, nreg):
    """CheckStreamingSVEAndZAEnabled();
constant integer vstride = (SVL DIV 8) DIV nreg;
integer vec = (UInt(X[v, 32]) + offset) MOD vstride;
for r = 0 to nreg-1
    Z[d+r, SVL] = ZAvector[vec, SVL];
    ZAvector[vec, SVL] = Zeros(SVL);
    vec = vec + vstride;"""
    cpu.CheckStreamingSVEAndZAEnabled()
    v, offset = group
    for r, row in enumerate(vector_group_rows(cpu.svlb, cpu.X(v), offset, nreg)):
        value = cpu.ZAvector(row).copy()
        cpu.set_Z(d + r, value)
        cpu.set_ZAvector(row, np.zeros_like(value))

"""SME and SME2 ZA forms the ACLE intrinsics lower to beside the dots and outer products: ADDHA/ADDVA (a
vector added to every row or column of a tile), the SME2 MOVA of two or four tile slices to consecutive Z
registers and back, and ZT0: ZERO ZT0, LDR/STR ZT0."""

from __future__ import annotations

import numpy as np

from ..faults import undefined
from ..state import MASK64
from .sve_data import as_bytes, elements


def add_to_tile(cpu, tile, n_gov, m_gov, n, *, esize, vertical):
    """CheckStreamingSVEAndZAEnabled();
constant integer dim = SVL DIV esize;
bits(SVL) operand_src = Z[n, SVL];
for row = 0 to dim-1
    for col = 0 to dim-1
        if ActivePredicateElement(P[n_gov], row, esize) && ActivePredicateElement(P[m_gov], col, esize) then
            // ADDHA: element col of Zn added to every row; ADDVA: element row of Zn to every column
            bits(esize) element = Elem[operand_src, if vertical then row else col, esize];
            ZAtile[row, col] = ZAtile[row, col] + element;   // modulo 2^esize"""
    cpu.CheckStreamingSVEAndZAEnabled()
    dim = cpu.svl // esize
    rows_active, cols_active = cpu.ActiveElements(n_gov, esize), cpu.ActiveElements(m_gov, esize)
    source = elements(cpu.Z(n), esize)
    for row in range(dim):
        if not rows_active[row]:
            continue
        current = elements(cpu.ZAslice(tile, esize, False, row), esize)
        add = np.full(dim, source[row]) if vertical else source
        with np.errstate(over="ignore"):
            updated = np.where(cols_active, current + add, current)
        cpu.set_ZAslice(tile, esize, False, row, as_bytes(updated))


def _slices(cpu, za_slices, esize, nreg):
    tile, vertical, s, offset = za_slices
    dim = cpu.svl // esize
    if dim < nreg:  # four .d slices of a two-slice tile (SVL 128)
        raise undefined(f"a {esize}-bit tile has {dim} slices at SVL {cpu.svl}, fewer than the {nreg} named")
    base = ((cpu.X(s) & 0xFFFFFFFF) + offset) % dim
    base -= base % nreg
    return tile, vertical, [base + r for r in range(nreg)]


def mova_slices_to_vectors(cpu, registers, za_slices, *, esize):
    """CheckStreamingSVEAndZAEnabled();
constant integer slices = SVL DIV esize;
if slices < nreg then UNDEFINED;          // .D, VGx4 at SVL 128 (as QEMU)
integer slice = (UInt(X[s, 32]) + offs) MOD slices;   // offs a multiple of nreg
slice = slice - (slice MOD nreg);         // the group of nreg slices it falls in
for r = 0 to nreg-1
    Z[d + r, SVL] = ZAslice[tile, esize, vertical, slice + r, SVL];"""
    cpu.CheckStreamingSVEAndZAEnabled()
    tile, vertical, rows = _slices(cpu, za_slices, esize, len(registers))
    values = [cpu.ZAslice(tile, esize, vertical, row).copy() for row in rows]
    for t, value in zip(registers, values):
        cpu.set_Z(t, value)


def mova_vectors_to_slices(cpu, za_slices, registers, *, esize):
    """CheckStreamingSVEAndZAEnabled();
constant integer slices = SVL DIV esize;
if slices < nreg then UNDEFINED;          // .D, VGx4 at SVL 128 (as QEMU)
integer slice = (UInt(X[s, 32]) + offs) MOD slices;   // offs a multiple of nreg
slice = slice - (slice MOD nreg);         // the group of nreg slices it falls in
for r = 0 to nreg-1
    ZAslice[tile, esize, vertical, slice + r, SVL] = Z[n + r, SVL];"""
    cpu.CheckStreamingSVEAndZAEnabled()
    tile, vertical, rows = _slices(cpu, za_slices, esize, len(registers))
    values = [cpu.Z(t).copy() for t in registers]
    for row, value in zip(rows, values):
        cpu.set_ZAslice(tile, esize, vertical, row, value)


def zero_zt0(cpu, _zt0):
    """CheckSMEAndZT0Enabled();   // PSTATE.ZA = 1
ZT0[512] = Zeros(512);"""
    cpu.CheckSMEAndZAEnabled()
    cpu.state.write_zt0(np.zeros(64, dtype=np.uint8))


def zero_vector_groups(cpu, group, *, nreg, ways):
    """CheckStreamingSVEAndZAEnabled();
constant integer vstride = (SVL DIV 8) DIV nreg;       // nreg 1 (no VGx), 2 or 4
integer vec = (UInt(X[v, 32]) + offset) MOD vstride;
vec = vec - (vec MOD ways);                           // ways 1, 2 or 4 vectors from each group member
for r = 0 to nreg-1
    for i = 0 to ways-1
        ZAvector[vec + i, SVL] = Zeros(SVL);
    vec = vec + vstride;"""
    cpu.CheckStreamingSVEAndZAEnabled()
    v, offset = group
    vstride = cpu.svlb // nreg
    vec = ((cpu.X(v) & 0xFFFFFFFF) + offset) % vstride
    vec -= vec % ways
    zeros = np.zeros(cpu.svlb, dtype=np.uint8)
    for r in range(nreg):
        for i in range(ways):
            cpu.set_ZAvector(vec + r * vstride + i, zeros.copy())


def ldr_zt0(cpu, _zt0, n):
    """CheckSMEAndZT0Enabled();   // PSTATE.ZA = 1
ZT0[512] = Mem[X[n|SP, 64], 64];"""
    cpu.CheckSMEAndZAEnabled()
    data = cpu.read_memory(cpu.XSP(n) & MASK64, 64)
    cpu.state.write_zt0(np.frombuffer(data, dtype=np.uint8))


def str_zt0(cpu, _zt0, n):
    """CheckSMEAndZT0Enabled();   // PSTATE.ZA = 1
Mem[X[n|SP, 64], 64] = ZT0[512];"""
    cpu.CheckSMEAndZAEnabled()
    cpu.write_memory(cpu.XSP(n) & MASK64, cpu.state.zt0.tobytes())


def luti(cpu, registers, _zt0, indexed, *, esize, isize):
    """CheckStreamingSVEEnabled(); CheckSMEZT0Enabled();
constant integer elements = VL DIV esize;
constant integer segments = esize DIV (isize * nreg);   // the parts of Zn one instruction's indices fill
bits(VL) indexes = Z[n, VL];
bits(512) table = ZT0[512];                              // 16 entries of 32 bits (LUTI2 uses the first 4)
integer base = (imm MOD segments) * elements * nreg;
for r = 0 to nreg-1
    for e = 0 to elements-1
        integer index = UInt(Elem[indexes, base + r * elements + e, isize]);
        Elem[result, e, esize] = Elem[table, index, 32]<esize-1:0>;
    Z[d + r, VL] = result;"""
    cpu.CheckStreamingSVEEnabled()
    cpu.CheckSMEAndZAEnabled()
    n, imm = indexed
    nreg = len(registers)
    count = cpu.VL // esize
    segments = esize // (isize * nreg)
    indexes = int.from_bytes(cpu.Z(n).tobytes(), "little")
    table = elements(cpu.state.zt0, 32).astype(np.uint64) & ((1 << esize) - 1)
    base = (imm % segments) * count * nreg
    mask = (1 << isize) - 1
    results = []
    for r in range(nreg):
        picks = [(indexes >> ((base + r * count + e) * isize)) & mask for e in range(count)]
        results.append(as_bytes(table[picks].astype({8: np.uint8, 16: np.uint16, 32: np.uint32}[esize])))
    for t, value in zip(registers, results):
        cpu.set_Z(t, value)


def luti_single(cpu, d, zt0, indexed, *, esize, isize):
    """The single-vector LUTI2/LUTI4 (nreg = 1): see luti."""
    luti(cpu, (d,), zt0, indexed, esize=esize, isize=isize)

"""Predicated vector loads and stores: LD1B/LD1H/LD1W/LD1D (and ST1*) to and from ZA tile slices
(SME), and the SVE contiguous LD1*/ST1* of Z registers, including the widening loads (LD1B into
.H/.S/.D ...: each memory element zero-extended) and the truncating stores (ST1B from .H ...: the
low bits of each element).

Only active elements touch memory (Arm ARM: an inactive element's address is not accessed, so
it cannot fault); a load's inactive elements become zero.  A translation fault names the first
active element's address that is not mapped, and a store that faults writes nothing (see
_write_elements).
"""

from __future__ import annotations

import numpy as np

from ...core.faults import Fault


def _read_elements(cpu, address: int, active: np.ndarray, mbytes: int) -> np.ndarray:
    """The memory elements at address + e*mbytes for each active e (zero where inactive), as bytes."""
    out = np.zeros(active.size * mbytes, dtype=np.uint8)
    where = np.flatnonzero(active)
    if where.size == 0:
        return out
    first, last = int(where[0]), int(where[-1])
    try:  # one read of the span the active elements cover; element by element if part of it is unmapped
        span = np.frombuffer(cpu.read_memory(address + first * mbytes, (last - first + 1) * mbytes), dtype=np.uint8)
        out[first * mbytes:(last + 1) * mbytes] = span
        out[~np.repeat(active, mbytes)] = 0
    except Fault:
        for e in where:
            out[e * mbytes:(e + 1) * mbytes] = np.frombuffer(cpu.read_memory(address + int(e) * mbytes, mbytes),
                                                             dtype=np.uint8)
    return out


def _read_active(cpu, address: int, g: int, esize: int, mbytes: int) -> np.ndarray:
    """The memory elements governed by P[g] at esize bits (see _read_elements); with every element
    active, one read of the whole span (a fault there is found again element by element, so it names
    the same address)."""
    if cpu.AllElementsActive(g, esize):
        try:
            return np.frombuffer(cpu.read_memory(address, cpu.svl // esize * mbytes), dtype=np.uint8)
        except Fault:
            pass
    return _read_elements(cpu, address, cpu.ActiveElements(g, esize), mbytes)


def _write_active(cpu, address: int, data: np.ndarray, g: int, esize: int, mbytes: int) -> None:
    """Store the elements governed by P[g] at esize bits (see _write_elements); with every element
    active, one write of the whole span (which writes nothing if any of it would fault)."""
    if cpu.AllElementsActive(g, esize):
        cpu.write_memory(address, data.tobytes())
        return
    _write_elements(cpu, address, data, cpu.ActiveElements(g, esize), mbytes)


def _write_elements(cpu, address: int, data: np.ndarray, active: np.ndarray, mbytes: int) -> None:
    """Mem[address + e*mbytes, mbytes] = element e of data, for each active e (in element order).

    A store whose active element faults writes none of its elements (every element's access is
    checked first).  Model choice: the pseudocode writes element by element, so a real core may
    have written the elements before the faulting one; isasim makes a faulting store leave memory as
    it was, the state QEMU's harness reports at a fault (it cannot see past one), so that a fault's
    state is the state before the faulting instruction, as for every other instruction."""
    elements = [int(e) for e in np.flatnonzero(active)]
    for e in elements:
        cpu.check_write(address + e * mbytes, mbytes)
    for e in elements:
        cpu.write_memory(address + e * mbytes, data[e * mbytes:(e + 1) * mbytes].tobytes())


def _widen(memory: np.ndarray, mbytes: int, ebytes: int) -> np.ndarray:
    """ZeroExtend each mbytes-byte element to ebytes (little-endian: the low bytes, then zeros)."""
    if mbytes == ebytes:
        return memory
    out = np.zeros((memory.size // mbytes, ebytes), dtype=np.uint8)
    out[:, :mbytes] = memory.reshape(-1, mbytes)
    return out.reshape(-1)


def _narrow(vector: np.ndarray, mbytes: int, ebytes: int) -> np.ndarray:
    """The low mbytes bytes of each ebytes-byte element (a truncating store's memory image)."""
    return vector.reshape(-1, ebytes)[:, :mbytes].reshape(-1).copy()


# ---- SME: ZA tile slices ------------------------------------------------------------------------


def _tile_slice(cpu, esize, za_slice):
    tile, vertical, s, offset = za_slice
    return tile, vertical, ((cpu.X(s) & 0xFFFFFFFF) + offset) % (cpu.svl // esize)


def ld1_tile(cpu, za_slice, g, address, *, esize):
    """CheckStreamingSVEAndZAEnabled();
constant integer dim = SVL DIV esize;
constant integer mbytes = esize DIV 8;
bits(PL) pred = P[g, PL];
bits(64) base = X[n|SP, 64];
bits(64) offset = X[m, 64];          // XZR: no index ([Xn])
integer slice = (UInt(X[s, 32]) + offs) MOD dim;
bits(SVL) result;
for e = 0 to dim-1
    bits(64) addr = base + (UInt(offset) + e) * mbytes;
    if ActivePredicateElement(pred, e, esize) then
        Elem[result, e, esize] = Mem[addr, mbytes];
    else
        Elem[result, e, esize] = Zeros();      // inactive elements are zeroed
ZAslice[tile, esize, vertical, slice, SVL] = result;"""
    cpu.CheckStreamingSVEAndZAEnabled()
    n, m = address
    mbytes = esize // 8
    tile, vertical, index = _tile_slice(cpu, esize, za_slice)
    start = cpu.XSP(n) + cpu.X(m) * mbytes
    data = _read_active(cpu, start, g, esize, mbytes)
    cpu.set_ZAslice(tile, esize, vertical, index, data)


def st1_tile(cpu, za_slice, g, address, *, esize):
    """CheckStreamingSVEAndZAEnabled();
constant integer dim = SVL DIV esize;
constant integer mbytes = esize DIV 8;
integer slice = (UInt(X[s, 32]) + offs) MOD dim;
bits(SVL) src = ZAslice[tile, esize, vertical, slice, SVL];
for e = 0 to dim-1
    bits(64) addr = X[n|SP, 64] + (UInt(X[m, 64]) + e) * mbytes;
    if ActivePredicateElement(P[g, PL], e, esize) then
        Mem[addr, mbytes] = Elem[src, e, esize];"""
    cpu.CheckStreamingSVEAndZAEnabled()
    n, m = address
    mbytes = esize // 8
    tile, vertical, index = _tile_slice(cpu, esize, za_slice)
    data = cpu.ZAslice(tile, esize, vertical, index)
    _write_active(cpu, cpu.XSP(n) + cpu.X(m) * mbytes, data, g, esize, mbytes)


# ---- SVE: contiguous Z loads and stores ---------------------------------------------------------------


def _contiguous_address(cpu, address, mode: str, msize: int, esize: int) -> int:
    n, k = address
    if mode == "imm":  # [Xn, #imm, MUL VL]: imm times the memory one vector's elements take
        return cpu.XSP(n) + k * (cpu.VL // esize) * (msize // 8)
    return cpu.XSP(n) + cpu.X(k) * (msize // 8)  # [Xn, Xm, LSL #log2(msize/8)]


def ld1_z(cpu, t, g, address, *, msize, esize, mode):
    """CheckSVEEnabled();
constant integer elements = VL DIV esize;
constant integer mbytes = msize DIV 8;
bits(64) addr = X[n|SP, 64] + offset;   // #imm * elements * mbytes (mul vl), or X[m] * mbytes
for e = 0 to elements-1
    if ActivePredicateElement(P[g, PL], e, esize) then
        Elem[result, e, esize] = ZeroExtend(Mem[addr, mbytes], esize);
    else
        Elem[result, e, esize] = Zeros();
    addr = addr + mbytes;
Z[t, VL] = result;"""
    cpu.CheckSVEEnabled()
    mbytes, ebytes = msize // 8, esize // 8
    start = _contiguous_address(cpu, address, mode, msize, esize)
    memory = _read_active(cpu, start, g, esize, mbytes)
    cpu.set_Z(t, _widen(memory, mbytes, ebytes))


def st1_z(cpu, t, g, address, *, msize, esize, mode):
    """CheckSVEEnabled();
constant integer elements = VL DIV esize;
constant integer mbytes = msize DIV 8;
bits(64) addr = X[n|SP, 64] + offset;   // #imm * elements * mbytes (mul vl), or X[m] * mbytes
for e = 0 to elements-1
    if ActivePredicateElement(P[g, PL], e, esize) then
        Mem[addr, mbytes] = Elem[Z[t, VL], e, esize]<msize-1:0>;   // truncated to msize bits
    addr = addr + mbytes;"""
    cpu.CheckSVEEnabled()
    mbytes, ebytes = msize // 8, esize // 8
    start = _contiguous_address(cpu, address, mode, msize, esize)
    data = _narrow(cpu.Z(t), mbytes, ebytes)
    _write_active(cpu, start, data, g, esize, mbytes)


# ---- SVE: whole Z and P registers ---------------------------------------------------------------------


def ldr_z(cpu, t, address):
    """CheckSVEEnabled();
constant integer elements = VL DIV 8;
bits(64) addr = X[n|SP, 64] + imm * elements;   // imm -256..255 vectors
Z[t, VL] = Mem[addr, elements];"""
    cpu.CheckSVEEnabled()
    n, imm = address
    elements = cpu.VL // 8
    data = cpu.read_memory(cpu.XSP(n) + imm * elements, elements)
    cpu.set_Z(t, np.frombuffer(data, dtype=np.uint8))


def str_z(cpu, t, address):
    """CheckSVEEnabled();
constant integer elements = VL DIV 8;
bits(64) addr = X[n|SP, 64] + imm * elements;
Mem[addr, elements] = Z[t, VL];"""
    cpu.CheckSVEEnabled()
    n, imm = address
    cpu.write_memory(cpu.XSP(n) + imm * (cpu.VL // 8), cpu.Z(t).tobytes())


def ldr_p(cpu, t, address):
    """CheckSVEEnabled();
constant integer elements = PL DIV 8;           // PL = VL DIV 8
bits(64) addr = X[n|SP, 64] + imm * elements;   // imm -256..255 predicates
P[t, PL] = Mem[addr, elements];"""
    cpu.CheckSVEEnabled()
    n, imm = address
    size = cpu.VL // 64  # PL DIV 8 bytes
    data = cpu.read_memory(cpu.XSP(n) + imm * size, size)
    cpu.state.write_p(t, np.frombuffer(data, dtype=np.uint8))


def str_p(cpu, t, address):
    """CheckSVEEnabled();
constant integer elements = PL DIV 8;
bits(64) addr = X[n|SP, 64] + imm * elements;
Mem[addr, elements] = P[t, PL];"""
    cpu.CheckSVEEnabled()
    n, imm = address
    size = cpu.VL // 64  # PL DIV 8 bytes
    cpu.write_memory(cpu.XSP(n) + imm * size, cpu.state.p[t].tobytes())

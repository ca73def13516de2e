"""The A64 base loads and stores, as the Arm ARM's ASL writes them: LDR/STR of every integer width (LDRB,
LDRH, LDRSB, LDRSH, LDRSW, STRB, STRH, and of W and X) and of the FP/SIMD registers B, H, S, D and Q, with an
unsigned offset, an unscaled one (LDUR/STUR), pre- and post-index and a register offset (LSL, UXTW, SXTW,
SXTX); LDR (literal); LDP/STP (and LDPSW) of W, X, S, D and Q with an offset, pre- and post-index; PRFM (a hint, run as NOP).

What moves is described by the form's keywords: ``size`` (bytes in memory), ``register`` ("X": a general
register, "V": an FP/SIMD one), ``load``, and for a general-register load ``regsize`` (32 or 64: the W or X
it writes) and ``signed`` (sign-extend the data to regsize; else zero-extend).  A W result is written
zero-extended to 64 bits.  An FP/SIMD load writes V[t] = data, zero-extended to the whole vector: Z[t]'s
bits above the data are zeroed up to the vector length, as the Arm ARM has it where SVE is implemented.
"""

from __future__ import annotations

import numpy as np

from ..numerics.integer_asl import Ones, SInt
from ..state import MASK64


# ---- the ASL's helpers ------------------------------------------------------------------------------------

def _base(cpu, n: int) -> int:
    """if n == 31 then SP[] else X[n, 64]  (CheckSPAlignment is not modelled: Linux leaves SP checks off at EL0)"""
    return cpu.XSP(n)


def ExtendReg(cpu, m: int, option: int, shift: int) -> int:
    """ExtendReg(m, extend_type, shift, 64): UXTW (2), LSL/UXTX (3), SXTW (6), SXTX (7) of X[m], shifted left."""
    value = cpu.X(m)
    if option in (2, 6):
        value &= Ones(32)
        if option == 6:
            value = SInt(value, 32) & MASK64
    return (value << shift) & MASK64


def _read(cpu, t: int, address: int, *, size, register, load, regsize=64, signed=False):
    if load:
        data = cpu.read_memory(address & MASK64, size)
        if register == "V":
            vector = np.zeros(cpu.svlb, dtype=np.uint8)
            vector[:size] = np.frombuffer(data, dtype=np.uint8)
            cpu.set_Z(t, vector)  # V[t, 8 * size] = data: the rest of Z[t] zeroed
        else:
            value = int.from_bytes(data, "little")
            if signed:
                value = SInt(value, 8 * size) & Ones(regsize)
            cpu.set_X(t, value)  # X[t, regsize] = value: a W result zero-extended
    elif register == "V":
        cpu.write_memory(address & MASK64, cpu.Z(t)[:size].tobytes())
    else:
        cpu.write_memory(address & MASK64, (cpu.X(t) & Ones(8 * size)).to_bytes(size, "little"))


# ---- single registers ----------------------------------------------------------------------------------------

def load_store(cpu, t, address, **transfer):
    """bits(64) address = if n == 31 then SP[] else X[n, 64];
address = address + offset;    // LDR/STR: imm12 << scale; LDUR/STUR: simm9
if memop == MemOp_LOAD then
    data = Mem[address, datasize DIV 8];
    X[t, regsize] = if signed then SignExtend(data, regsize) else ZeroExtend(data, regsize);    // or V[t] = data
else
    Mem[address, datasize DIV 8] = X[t, datasize];    // or V[t, datasize]; little-endian"""
    n, offset = address
    _read(cpu, t, _base(cpu, n) + offset, **transfer)


def load_store_pre(cpu, t, address, **transfer):
    """bits(64) address = (if n == 31 then SP[] else X[n, 64]) + offset;    // offset: simm9
data = Mem[address, datasize DIV 8] (a load) or Mem[address, datasize DIV 8] = X[t, datasize] (a store);
if n == 31 then SP[] = address; else X[n, 64] = address;    // written back"""
    n, offset = address
    target = (_base(cpu, n) + offset) & MASK64
    _read(cpu, t, target, **transfer)
    cpu.set_XSP(n, target)


def load_store_post(cpu, t, n, offset, **transfer):
    """bits(64) address = if n == 31 then SP[] else X[n, 64];
data = Mem[address, datasize DIV 8] (a load) or Mem[address, datasize DIV 8] = X[t, datasize] (a store);
address = address + offset;    // simm9
if n == 31 then SP[] = address; else X[n, 64] = address;"""
    address = _base(cpu, n)
    _read(cpu, t, address, **transfer)
    cpu.set_XSP(n, address + offset)


def load_store_register(cpu, t, address, **transfer):
    """bits(64) offset = ExtendReg(m, extend_type, shift, 64);    // UXTW, LSL, SXTW, SXTX; shift 0 or log2(size)
bits(64) address = (if n == 31 then SP[] else X[n, 64]) + offset;
if memop == MemOp_LOAD then X[t, regsize] = Extend(Mem[address, datasize DIV 8], regsize, !signed);
else Mem[address, datasize DIV 8] = X[t, datasize];    // V[t] for B, H, S, D, Q"""
    n, m, option, shift = address
    _read(cpu, t, _base(cpu, n) + ExtendReg(cpu, m, option, shift), **transfer)


def load_literal(cpu, t, offset, **transfer):
    """bits(64) address = PC[] + offset;    // imm19:'00', signed
data = Mem[address, size];
X[t, regsize] = if signed then SignExtend(data, 64) else ZeroExtend(data, regsize);    // or V[t] = data"""
    _read(cpu, t, cpu.state.pc + offset, load=True, **transfer)


# ---- pairs ----------------------------------------------------------------------------------------------------

def _pair(cpu, t, t2, address, size, register, load, signed):
    if load:
        _read(cpu, t, address, size=size, register=register, load=True, signed=signed, regsize=64 if signed else 8 * size)
        _read(cpu, t2, address + size, size=size, register=register, load=True, signed=signed,
              regsize=64 if signed else 8 * size)
    else:
        if register == "V":
            data = cpu.Z(t)[:size].tobytes() + cpu.Z(t2)[:size].tobytes()
        else:
            data = b"".join((cpu.X(r) & Ones(8 * size)).to_bytes(size, "little") for r in (t, t2))
        cpu.write_memory(address & MASK64, data)  # both or neither: a fault part way writes nothing


def load_store_pair(cpu, t, t2, address, *, size, register, load, signed=False):
    """bits(64) address = (if n == 31 then SP[] else X[n, 64]) + offset;    // imm7 << scale
if memop == MemOp_LOAD then
    data = Mem[address, 2 * dbytes];
    X[t] = data<datasize-1:0>; X[t2] = data<2*datasize-1:datasize>;    // LDPSW sign-extends; V[t] for S, D, Q
else
    Mem[address, 2 * dbytes] = X[t2, datasize]:X[t, datasize];"""
    n, offset = address
    _pair(cpu, t, t2, (_base(cpu, n) + offset) & MASK64, size, register, load, signed)


def load_store_pair_pre(cpu, t, t2, address, *, size, register, load, signed=False):
    """bits(64) address = (if n == 31 then SP[] else X[n, 64]) + offset;
(the pair's access, as LDP/STP (offset));
if n == 31 then SP[] = address; else X[n, 64] = address;"""
    n, offset = address
    target = (_base(cpu, n) + offset) & MASK64
    _pair(cpu, t, t2, target, size, register, load, signed)
    cpu.set_XSP(n, target)


def load_store_pair_post(cpu, t, t2, n, offset, *, size, register, load, signed=False):
    """bits(64) address = if n == 31 then SP[] else X[n, 64];
(the pair's access, as LDP/STP (offset));
address = address + offset;    // imm7 << scale
if n == 31 then SP[] = address; else X[n, 64] = address;"""
    address = _base(cpu, n)
    _pair(cpu, t, t2, address, size, register, load, signed)
    cpu.set_XSP(n, address + offset)


def prefetch(cpu, prfop, address, *rest):
    """Prefetch(address, prfop);    // a hint: isasim's core has no cache to fill; it reads nothing, and never faults"""

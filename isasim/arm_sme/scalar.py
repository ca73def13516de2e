"""The scalar A64 instructions a kernel's loop needs: MOV (MOVZ), ADD/SUB/SUBS (immediate),
LDR/STR (X, unsigned offset), B, CBZ/CBNZ, RET and NOP.

Each returns None to go on to the next instruction, a branch offset (from the instruction's
address) to branch, or END when the program ends (RET).
"""

from __future__ import annotations

from .state import MASK64

END = object()  # what RET returns: the program ends (isasim runs one function, as a test harness calls it)


def movz(cpu, d, imm):
    """X[d] = imm    // MOVZ: imm16 << (16 * hw), every other bit zero"""
    cpu.set_X(d, imm)


def add_imm(cpu, d, n, imm):
    """X[d] = X[n] + imm    // register 31 is SP for both; no flags"""
    cpu.set_XSP(d, cpu.XSP(n) + imm)


def sub_imm(cpu, d, n, imm):
    """X[d] = X[n] - imm    // register 31 is SP for both; no flags"""
    cpu.set_XSP(d, cpu.XSP(n) - imm)


def subs_imm(cpu, d, n, imm):
    """(result, nzcv) = AddWithCarry(X[n], NOT(imm), '1');
X[d] = result;   // d = 31 is XZR (CMP)
PSTATE.<N,Z,C,V> = nzcv"""
    a = cpu.XSP(n)
    result = (a - imm) & MASK64
    signed_a = a - (1 << 64) if a >> 63 else a
    signed_result = signed_a - imm
    cpu.set_X(d, result)
    cpu.set_NZCV(result >> 63, int(result == 0), int(a >= imm), int(not -(1 << 63) <= signed_result < 1 << 63))


def ldr_x(cpu, t, address):
    """X[t] = Mem[X[n] + offset, 8]    // little-endian; an unmapped address is a translation fault"""
    n, offset = address
    cpu.set_X(t, int.from_bytes(cpu.read_memory(cpu.XSP(n) + offset, 8), "little"))


def str_x(cpu, t, address):
    """Mem[X[n] + offset, 8] = X[t]    // little-endian; an unmapped address is a translation fault"""
    n, offset = address
    cpu.write_memory(cpu.XSP(n) + offset, cpu.X(t).to_bytes(8, "little"))


def b(cpu, offset):
    """PC = PC + offset"""
    return offset


def cbz(cpu, t, offset):
    """IF X[t] == 0 THEN PC = PC + offset"""
    return offset if cpu.X(t) == 0 else None


def cbnz(cpu, t, offset):
    """IF X[t] != 0 THEN PC = PC + offset"""
    return offset if cpu.X(t) != 0 else None


def ret(cpu):
    """return to X30's caller: isasim's program ends here"""
    return END


def nop(cpu):
    """// nothing"""

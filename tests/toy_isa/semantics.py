"""The toy's semantics: one function per instruction, written like a manual's pseudocode.

Each takes the context (context.py) and the form's operands in syntax order, and returns None (go on to
the next instruction), a branch target's address, or HALT.  Its docstring is the pseudocode
``isasim explain`` shows, so the text a reader sees and the code that runs are one.
"""

from __future__ import annotations

from .state import WORD

HALT = object()  # what a semantics function returns to end the program


def li(cpu, rd, imm):
    """R[rd] = imm"""
    cpu.set_R(rd, imm)


def add(cpu, rd, ra, rb):
    """R[rd] = (R[ra] + R[rb]) MOD 2^32"""
    cpu.set_R(rd, (cpu.R(ra) + cpu.R(rb)) % WORD)


def addi(cpu, rd, ra, imm):
    """R[rd] = (R[ra] + imm) MOD 2^32"""
    cpu.set_R(rd, (cpu.R(ra) + imm) % WORD)


def ld(cpu, rd, ra):
    """R[rd] = MEM32[R[ra]]            (MEMFAULT if R[ra]..R[ra]+3 is not mapped)"""
    cpu.set_R(rd, cpu.load_word(cpu.R(ra)))


def st(cpu, rb, ra):
    """MEM32[R[ra]] = R[rb]            (MEMFAULT if R[ra]..R[ra]+3 is not mapped or read-only)"""
    cpu.store_word(cpu.R(ra), cpu.R(rb))


def mac(cpu, i, ra, rb):
    """ACC[i] = (ACC[i] + R[ra] * R[rb]) MOD 2^32      (signed or unsigned: the low 32 bits agree)"""
    cpu.set_ACC(i, (cpu.ACC(i) + cpu.R(ra) * cpu.R(rb)) % WORD)


def mova(cpu, rd, i):
    """R[rd] = ACC[i]"""
    cpu.set_R(rd, cpu.ACC(i))


def bnz(cpu, ra, target):
    """IF R[ra] != 0 THEN PC = target"""
    if cpu.R(ra) != 0:
        return target
    return None


def halt(cpu):
    """the program ends"""
    return HALT

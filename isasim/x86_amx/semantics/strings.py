"""The string instructions (STOS, MOVS, LODS, SCAS, CMPS), the REP/REPE/REPNE prefixes that repeat them,
and CLD/STD, which set the direction they step in.

A string instruction's operands name its fixed registers, as objdump prints them (``stos BYTE PTR
es:[rdi],al``): the destination is always ES:[RDI] and the source DS:[RSI] (ES and DS have base 0 in 64-bit
mode), and after each element RDI and RSI step by the element size, forward while DF is clear and back while
it is set.  This is what ``memset`` and ``memcpy`` inline to (``rep stos QWORD PTR es:[rdi],rax``).

With a repeat prefix the whole loop is one instruction (one step, one trace entry): the SDM's REP operation
(``repeat`` below) runs the element operation RCX times, and REPE/REPNE also stop on ZF.  A fault part way
(a page fault on element k) leaves RCX, RDI and RSI as the elements before it left them, as the hardware
does (the instruction restarts from there).
"""

from __future__ import annotations

from typing import Callable

from ...core.faults import Fault
from ..context import X86Context
from ..operands import GPR_VIEWS, Mem, Reg
from ..state import DF, STATUS_FLAGS, ZF
from .scalar import set_flags, sub_flags

_RCX, _RDI, _RSI = GPR_VIEWS["rcx"], GPR_VIEWS["rdi"], GPR_VIEWS["rsi"]
_MASK64 = (1 << 64) - 1


def _step(cpu: X86Context, size: int) -> int:
    """The amount RDI/RSI move by per element: +size while DF = 0, -size while DF = 1."""
    return -size if cpu.state.rflags & DF else size


def _advance(cpu: X86Context, view, by: int) -> None:
    state = cpu.state
    state.write_gpr(view, (state.read_gpr(view) + by) & _MASK64)


def _accumulator(cpu: X86Context, reg: Reg) -> int:
    return cpu.state.read_gpr(GPR_VIEWS[reg.name])


# ---------------------------------------------------------------------------
# One element
# ---------------------------------------------------------------------------


def stos(cpu: X86Context, dest: Mem, src: Reg) -> None:
    """Store String: store AL, AX, EAX or RAX at ES:[RDI], then step RDI.

        Memory[RDI] := SRC (AL, AX, EAX or RAX, the operand size)
        IF DF = 0 THEN RDI := RDI + size ELSE RDI := RDI - size

    No flags change.  ``rep stos`` fills RCX elements: what ``memset`` inlines to (``rep stos QWORD PTR
    es:[rdi],rax`` with RAX zero clears RCX quadwords).
    """
    size = dest.size
    state = cpu.state
    cpu.write_memory(state.read_gpr(_RDI), _accumulator(cpu, src).to_bytes(size, "little"))
    _advance(cpu, _RDI, _step(cpu, size))


def movs(cpu: X86Context, dest: Mem, src: Mem) -> None:
    """Move Data from String to String: copy one element from DS:[RSI] to ES:[RDI], then step both.

        Memory[RDI] := Memory[RSI] (a byte, word, doubleword or quadword)
        IF DF = 0 THEN RSI := RSI + size; RDI := RDI + size ELSE RSI := RSI - size; RDI := RDI - size

    No flags change.  ``rep movs`` copies RCX elements one after the other (what ``memcpy`` inlines to): where
    the destination overlaps the source ahead of it, elements already copied are copied again.
    """
    size = dest.size
    state = cpu.state
    data = cpu.read_memory(state.read_gpr(_RSI), size)
    cpu.write_memory(state.read_gpr(_RDI), data)
    by = _step(cpu, size)
    _advance(cpu, _RSI, by)
    _advance(cpu, _RDI, by)


def lods(cpu: X86Context, dest: Reg, src: Mem) -> None:
    """Load String: load the element at DS:[RSI] into AL, AX, EAX or RAX, then step RSI.

        DEST := Memory[RSI] (AL, AX, EAX or RAX; EAX zero-extends into RAX)
        IF DF = 0 THEN RSI := RSI + size ELSE RSI := RSI - size

    No flags change.
    """
    size = src.size
    state = cpu.state
    value = int.from_bytes(cpu.read_memory(state.read_gpr(_RSI), size), "little")
    state.write_gpr(GPR_VIEWS[dest.name], value)
    _advance(cpu, _RSI, _step(cpu, size))


def scas(cpu: X86Context, src1: Reg, src2: Mem) -> None:
    """Scan String: compare AL, AX, EAX or RAX with the element at ES:[RDI], then step RDI.

        temp := SRC1 - Memory[RDI]; set the status flags as CMP does (the result is discarded)
        IF DF = 0 THEN RDI := RDI + size ELSE RDI := RDI - size

    ``repne scas`` finds the first element equal to the accumulator (``strlen`` with AL zero); ``repe scas``
    the first one that differs.
    """
    size = src2.size
    state = cpu.state
    a = _accumulator(cpu, src1)
    b = int.from_bytes(cpu.read_memory(state.read_gpr(_RDI), size), "little")
    set_flags(cpu, sub_flags(a, b, size * 8), STATUS_FLAGS)
    _advance(cpu, _RDI, _step(cpu, size))


def cmps(cpu: X86Context, src1: Mem, src2: Mem) -> None:
    """Compare String Operands: compare the element at DS:[RSI] with the one at ES:[RDI], then step both.

        temp := Memory[RSI] - Memory[RDI]; set the status flags as CMP does (the result is discarded)
        IF DF = 0 THEN RSI := RSI + size; RDI := RDI + size ELSE RSI := RSI - size; RDI := RDI - size

    ``repe cmps`` finds the first pair that differs (``memcmp``).
    """
    size = src1.size
    state = cpu.state
    a = int.from_bytes(cpu.read_memory(state.read_gpr(_RSI), size), "little")
    b = int.from_bytes(cpu.read_memory(state.read_gpr(_RDI), size), "little")
    set_flags(cpu, sub_flags(a, b, size * 8), STATUS_FLAGS)
    by = _step(cpu, size)
    _advance(cpu, _RSI, by)
    _advance(cpu, _RDI, by)


# ---------------------------------------------------------------------------
# The repeat prefixes
# ---------------------------------------------------------------------------


def repeat(cpu: X86Context, operation: Callable, operands: tuple, prefix: str) -> None:
    """Repeat String Operation Prefix: run the string instruction RCX times (REP), or until ZF says stop
    (REPE/REPZ: while equal; REPNE/REPNZ: while not equal; only SCAS and CMPS test ZF).

        WHILE RCX != 0 DO
            Execute the string instruction
            RCX := RCX - 1
            IF RCX = 0 THEN exit the loop
            IF (REPE and ZF = 0) or (REPNE and ZF = 1) THEN exit the loop
        OD

    With RCX zero at the start nothing happens (no memory is touched, no flag changes).  The whole loop is one
    instruction; a fault on an element leaves RCX, RSI and RDI counting the elements done before it.
    """
    state = cpu.state
    stop_on = {"repz": 0, "repnz": ZF}.get(prefix)  # the ZF value that ends REPE / REPNE; None: REP
    if stop_on is None and _bulk(cpu, operation, operands):
        return
    while state.read_gpr(_RCX):
        operation(cpu, *operands)
        remaining = (state.read_gpr(_RCX) - 1) & _MASK64
        state.write_gpr(_RCX, remaining)
        if remaining and stop_on is not None and state.rflags & ZF == stop_on:
            break


def _bulk(cpu: X86Context, operation: Callable, operands: tuple) -> bool:
    """REP STOS and REP MOVS stepping forward over memory that is all there, done as one write: the same bytes
    as the element loop (for MOVS, only where the destination is not ahead of the source within the copy,
    where the loop would copy elements it already wrote).  False: not such a case, let the loop run."""
    if operation not in (stos, movs) or cpu.state.rflags & DF:
        return False
    state = cpu.state
    count, size = state.read_gpr(_RCX), operands[0].size
    total = count * size
    dest = state.read_gpr(_RDI)
    if dest + total > 1 << 64:
        return False
    memory = cpu.memory
    try:
        memory.check(dest, total, "write")
        if operation is movs:
            source = state.read_gpr(_RSI)
            if source < dest < source + total or source + total > 1 << 64:
                return False
            memory.check(source, total, "read")
            data = cpu.read_memory(source, total)
        else:
            data = _accumulator(cpu, operands[1]).to_bytes(size, "little") * count
    except Fault:  # an element is not there: the element loop faults where the hardware does
        return False
    cpu.write_memory(dest, data)
    _advance(cpu, _RDI, total)
    if operation is movs:
        _advance(cpu, _RSI, total)
    state.write_gpr(_RCX, 0)
    return True


# ---------------------------------------------------------------------------
# The direction flag
# ---------------------------------------------------------------------------


def cld(cpu: X86Context) -> None:
    """Clear Direction Flag: string instructions step forward (RDI and RSI increase).

        DF := 0

    The System V ABI requires DF clear at every call and return; compilers emit CLD only after an STD.
    """
    cpu.state.set_rflags(cpu.state.rflags & ~DF)


def std(cpu: X86Context) -> None:
    """Set Direction Flag: string instructions step backward (RDI and RSI decrease).

        DF := 1
    """
    cpu.state.set_rflags(cpu.state.rflags | DF)

"""The semantics of calls and indirect jumps, and of the C library functions isasim provides as built-ins.

CALL pushes the address of the next instruction on the simulated stack and jumps; RET (semantics/scalar.py)
pops it and comes back.  ``state.call_depth`` counts the CALLs not yet returned from, so that the RET of the function isasim
was asked to run (none pending) ends the run, as returning to its caller would.

The built-ins are what a compiled kernel calls out of its object file: ``memset``, ``memcpy``, ``memmove``
(their C semantics, arguments in rdi, rsi, rdx as the System V ABI passes them, the result in rax) and
``__stack_chk_fail`` (the stack protector's report: it stops the run with a named fault).  Each lives at an
address of its own after the function's code (the loader places it there and resolves the symbol to it);
reaching that address runs the whole function as one step and returns as RET does.

Each function reads like the SDM's Operation section (the built-ins like their C standard text); its
docstring is the ``isasim explain`` text.
"""

from __future__ import annotations

from ...core.faults import Fault
from ..context import X86Context
from ..operands import GPR_VIEWS, Target
from .scalar import push_value, read, ret

STACK_CHECK_FAILED = "__stack_chk_fail"  # the fault kind of a clobbered stack-protector canary
ABORTED = "abort"  # the fault kind of a call of C's abort() (a test's reference check that failed)

_RSP, _RAX, _RDI, _RSI, _RDX = (GPR_VIEWS[name] for name in ("rsp", "rax", "rdi", "rsi", "rdx"))


def _destination(cpu: X86Context, operand) -> int:
    """Where a CALL or JMP goes: a rel32's target, or the 64-bit value of r/m64."""
    if isinstance(operand, Target):
        return operand.address
    return read(cpu, operand, 64)


def call(cpu: X86Context, next_rip: int, target) -> int:
    """Call the procedure at target, pushing the return address (the next instruction's).

        tempRIP := RIP + SignExtend(rel32)       (CALL rel32)
        tempRIP := r/m64                         (CALL r/m64: a function pointer, a table entry)
        Push(RIP)                                (RSP := RSP - 8; Memory[RSP] := the next instruction's address)
        RIP := tempRIP

    r/m64 is read before RSP changes (``call QWORD PTR [rsp+8]`` reads at the old RSP + 8).  No flags
    change.  The callee's RET pops the address and comes back; isasim counts the calls not yet returned
    from, so that only the RET of the function it was asked to run ends the run.
    """
    destination = _destination(cpu, target)
    push_value(cpu, next_rip, 8)
    cpu.state.call_depth += 1
    return destination


def jmp_indirect(cpu: X86Context, target) -> int:
    """Jump to the address held in r/m64 (a jump table's entry, a tail call through a function pointer).

        RIP := r/m64

    No flags change; nothing is pushed.
    """
    return read(cpu, target, 64)


# ---------------------------------------------------------------------------
# The built-ins: C library functions a compiled kernel calls out of its object
# ---------------------------------------------------------------------------


def _copy(cpu: X86Context) -> int:
    dest, src, n = (cpu.state.read_gpr(view) for view in (_RDI, _RSI, _RDX))
    if n:
        cpu.write_memory(dest, cpu.read_memory(src, n))
    cpu.state.write_gpr(_RAX, dest)
    return dest


def memset(cpu: X86Context):
    """isasim built-in: void *memset(void *s, int c, size_t n), then return as RET does.

        s := RDI; c := RSI; n := RDX
        FOR i := 0 TO n - 1: Memory[s + i] := c AND 0FFH
        RAX := s
        RIP := Pop()

    C's memset: the byte (unsigned char)c stored in each of the first n bytes at s, s returned.  One step
    writes all n bytes (the journal records them as one write); a byte outside mapped memory is #PF,
    with nothing written.
    """
    s, c, n = (cpu.state.read_gpr(view) for view in (_RDI, _RSI, _RDX))
    if n:
        cpu.write_memory(s, bytes([c & 0xFF]) * n)
    cpu.state.write_gpr(_RAX, s)
    return ret(cpu)


def memcpy(cpu: X86Context):
    """isasim built-in: void *memcpy(void *dest, const void *src, size_t n), then return as RET does.

        dest := RDI; src := RSI; n := RDX
        Memory[dest .. dest + n - 1] := Memory[src .. src + n - 1]
        RAX := dest
        RIP := Pop()

    C's memcpy: n bytes copied, dest returned.  C leaves overlapping buffers undefined; isasim reads all
    n bytes before writing any (as memmove does), so an overlap gives memmove's result.
    """
    _copy(cpu)
    return ret(cpu)


def memmove(cpu: X86Context):
    """isasim built-in: void *memmove(void *dest, const void *src, size_t n), then return as RET does.

        dest := RDI; src := RSI; n := RDX
        temp := Memory[src .. src + n - 1]; Memory[dest .. dest + n - 1] := temp
        RAX := dest
        RIP := Pop()

    C's memmove: as if the n bytes were first copied to a temporary array, so overlapping buffers are
    copied correctly; dest returned.
    """
    _copy(cpu)
    return ret(cpu)


def stack_chk_fail(cpu: X86Context):
    """isasim built-in: void __stack_chk_fail(void), the stack protector's report of a clobbered canary.

        Fault("__stack_chk_fail")

    Code built with -fstack-protector(-strong) copies the canary from fs:0x28 into its frame on entry and
    compares it before returning; a different value means the frame was overwritten, and the function
    calls this instead of returning.  glibc's prints "stack smashing detected" and aborts; isasim stops
    the run with the fault __stack_chk_fail, naming the instruction that called it.
    """
    state = cpu.state
    canary = int.from_bytes(cpu.read_memory(state.fs_base + 0x28, 8), "little") if state.fs_base else None
    told = f" (fs:0x28 holds {canary:#x})" if canary is not None else ""
    caller = ""
    if state.call_depth:  # the CALL that came here pushed the address after it
        caller = f" (return address {int.from_bytes(cpu.read_memory(state.gpr[4], 8), 'little'):#x})"
    raise Fault(STACK_CHECK_FAILED, "stack smashing detected: the function's copy of the stack-protector canary "
                                    f"no longer matches the thread's{told}; __stack_chk_fail was called{caller}")


stack_chk_fail.__name__ = "__stack_chk_fail"


def abort(cpu: X86Context):
    """isasim built-in: void abort(void), C's abnormal end of the program.

        Fault("abort")

    A test compiled with its own reference (GCC's AMX tests, assert()'s failure path) calls abort when a
    result is wrong; the C library raises SIGABRT and the process dies.  isasim stops the run with the fault
    abort, naming the instruction that called it (the return address the CALL pushed).
    """
    state = cpu.state
    caller = ""
    if state.call_depth:  # the CALL that came here pushed the address after it
        caller = f" (return address {int.from_bytes(cpu.read_memory(state.gpr[4], 8), 'little'):#x})"
    raise Fault(ABORTED, f"abort() was called{caller}")

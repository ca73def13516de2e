"""The functions a compiled kernel calls out of its object file that isasim runs itself, each as one step:
the C library's ``memset``, ``memcpy``, ``memmove`` and ``abort``, and the SME ABI support routines clang calls
around streaming and ZA-sharing code (``__arm_tpidr2_save``, ``__arm_tpidr2_restore``, ``__arm_za_disable``,
``__arm_sme_state``, ``__arm_get_current_vg``, and for ``__arm_agnostic("sme_za_state")`` functions
``__arm_sme_state_size``, ``__arm_sme_save``, ``__arm_sme_restore``).

The loader (isasim/arm_sme/elf.py) gives each one an address after the functions and points the calls there;
reaching that address runs the whole routine and returns to X30, as its RET would (X30 is where the BL that
called it, or its caller's, left the way back).  Arguments and results are where AAPCS64 puts them: X0, X1,
X2 in, X0 (and X1) out.  A routine changes nothing else: the SME routines preserve more registers than
AAPCS64 asks (X0-X13 or more, Z, P), and these change none they need not.

The lazy-save scheme of the SME ABI (AAPCS64, "SME support routines").  A function whose ZA is live calls a
function that does not share ZA so: it points TPIDR2_EL0 at a TPIDR2 block in its frame,

    bytes 0-7    za_save_buffer       where ZA goes if it must be saved (SVL/8 vectors of SVL/8 bytes)
    bytes 8-9    num_za_save_slices   how many ZA vectors to save (ZA[0] first)
    bytes 10-15  reserved             zero

and calls.  ZA is then *dormant*: a callee that wants ZA for itself first commits the save
(``__arm_tpidr2_save``, or ``__arm_za_disable``, which also turns ZA off) and sets TPIDR2_EL0 to zero.
After the call the caller turns ZA on again (SMSTART ZA); if TPIDR2_EL0 is now zero, the save was committed
and it calls ``__arm_tpidr2_restore`` with its block to load ZA back; then it sets TPIDR2_EL0 to zero.

Each function's docstring is its ``isasim explain`` text.
"""

from __future__ import annotations

import numpy as np

from ...core.faults import Fault
from ..faults import undefined
from .modes import set_modes

ABORTED = "abort"  # the fault kind of C's abort(), and of the SME routines' aborts the ABI asks for
HAS_SME = 1 << 63  # __arm_sme_state's X0<63>: the thread can use SME
TPIDR2_BLOCK_BYTES = 16


def _return(cpu) -> int:
    """RET: where the routine returns, X30 (an address: the built-in's step goes there).  The BL/BLR that
    came here counted a call not yet returned from (semantics/base_branch.py): this return ends it."""
    state = cpu.state
    if state.call_depth:
        state.call_depth -= 1
    return cpu.X(30)


def memset(cpu):
    """isasim built-in: void *memset(void *s, int c, size_t n), then RET.

        s = X[0]; c = X[1]<7:0>; n = X[2]
        Mem[s + i] = c, for i = 0 to n-1
        X[0] = s
        PC = X[30]

    C's memset: the byte (unsigned char)c in each of the n bytes from s; s returned.  One step writes all n
    bytes; a byte outside mapped memory is a TRANSLATION fault, with nothing written."""
    s, c, n = cpu.X(0), cpu.X(1) & 0xFF, cpu.X(2)
    if n:
        cpu.check_write(s, n)
        cpu.write_memory(s, bytes([c]) * n)
    cpu.set_X(0, s)
    return _return(cpu)


def _copy(cpu) -> None:
    dest, src, n = cpu.X(0), cpu.X(1), cpu.X(2)
    if n:
        data = cpu.read_memory(src, n)
        cpu.check_write(dest, n)
        cpu.write_memory(dest, data)
    cpu.set_X(0, dest)


def memcpy(cpu):
    """isasim built-in: void *memcpy(void *dest, const void *src, size_t n), then RET.

        dest = X[0]; src = X[1]; n = X[2]
        Mem[dest .. dest+n-1] = Mem[src .. src+n-1]
        X[0] = dest
        PC = X[30]

    C's memcpy: n bytes copied, dest returned.  C leaves overlapping buffers undefined; isasim reads the n
    bytes before writing any, so an overlap gives memmove's result."""
    _copy(cpu)
    return _return(cpu)


def memmove(cpu):
    """isasim built-in: void *memmove(void *dest, const void *src, size_t n), then RET.

        dest = X[0]; src = X[1]; n = X[2]
        temp = Mem[src .. src+n-1]; Mem[dest .. dest+n-1] = temp
        X[0] = dest
        PC = X[30]

    C's memmove: as if through a temporary array, so overlapping buffers copy correctly; dest returned."""
    _copy(cpu)
    return _return(cpu)


def abort(cpu):
    """isasim built-in: void abort(void), C's abnormal end of the program.

        Fault("abort")

    A test that checks its own result calls abort when it is wrong; the C library raises SIGABRT.  isasim
    stops the run with the fault abort, naming the return address (X30: after the BL that called it)."""
    raise Fault(ABORTED, f"abort() was called (return address X30 = {cpu.X(30):#x})")


def _tpidr2_block(cpu, address: int, routine: str) -> tuple[int, int]:
    """The TPIDR2 block at ``address``: (za_save_buffer, num_za_save_slices); the ABI's abort when its
    reserved bytes are not zero."""
    block = cpu.read_memory(address, TPIDR2_BLOCK_BYTES)
    if any(block[10:16]):
        raise Fault(ABORTED, f"{routine}: the TPIDR2 block at {address:#x} has reserved bytes 10-15 = "
                             f"{block[10:16].hex()}, not zero (the SME ABI says abort)")
    return int.from_bytes(block[0:8], "little"), int.from_bytes(block[8:10], "little")


def _need_za(cpu, routine: str) -> None:
    if not cpu.state.za_enabled:
        raise undefined(f"{routine}: PSTATE.ZA is 0, so ZA cannot be saved or loaded (its STR/LDR ZA is "
                        "UNDEFINED); the SME ABI calls it with ZA on")


def _commit_lazy_save(cpu, routine: str) -> None:
    """What __arm_tpidr2_save does (see its docstring)."""
    block = cpu.state.tpidr2
    if block == 0:
        return
    buffer, slices = _tpidr2_block(cpu, block, routine)
    if slices == 0:
        return
    _need_za(cpu, routine)
    svlb = cpu.svlb
    rows = [i % svlb for i in range(slices)]  # the save loop's STR ZA[Wv, 0] wraps at SVL/8 vectors
    data = np.ascontiguousarray(cpu.state.za[rows]).tobytes()
    cpu.check_write(buffer, len(data))
    cpu.write_memory(buffer, data)


def tpidr2_save(cpu):
    """isasim built-in: __arm_tpidr2_save, the SME ABI's commit of a lazy ZA save, then RET.

        blk = TPIDR2_EL0
        if blk != 0 then
            if Mem[blk+10 .. blk+15] != Zeros() then abort();
            buffer = Mem[blk, 8]; n = Mem[blk+8, 2]
            for i = 0 to n-1
                Mem[buffer + i*(SVL/8), SVL/8] = ZA[i MOD (SVL/8)]   // STR ZA[Wv, 0]: needs PSTATE.ZA = 1
        PC = X[30]

    TPIDR2_EL0 and PSTATE.ZA are left as they are (the caller clears TPIDR2_EL0 after it).  No register
    changes (the ABI lets it change X14-X17 only)."""
    _commit_lazy_save(cpu, "__arm_tpidr2_save")
    return _return(cpu)


def tpidr2_restore(cpu):
    """isasim built-in: __arm_tpidr2_restore(blk in X0), loading ZA back after a committed lazy save, then RET.

        if TPIDR2_EL0 != 0 then abort();          // the save was not committed: ZA still holds the data
        blk = X[0]
        if Mem[blk+10 .. blk+15] != Zeros() then abort();
        buffer = Mem[blk, 8]; n = Mem[blk+8, 2]
        for i = 0 to n-1
            ZA[i MOD (SVL/8)] = Mem[buffer + i*(SVL/8), SVL/8]   // LDR ZA[Wv, 0]: needs PSTATE.ZA = 1
        PC = X[30]

    The caller has turned ZA on again (SMSTART ZA) and sets TPIDR2_EL0 to zero after it."""
    routine = "__arm_tpidr2_restore"
    if cpu.state.tpidr2 != 0:
        raise Fault(ABORTED, f"{routine}: TPIDR2_EL0 is {cpu.state.tpidr2:#x}, not zero (the SME ABI says abort: "
                             "the lazy save was not committed)")
    buffer, slices = _tpidr2_block(cpu, cpu.X(0), routine)
    if slices:
        _need_za(cpu, routine)
        svlb = cpu.svlb
        data = np.frombuffer(cpu.read_memory(buffer, slices * svlb), dtype=np.uint8).reshape(slices, svlb)
        for i in range(slices):
            cpu.set_ZAvector(i % svlb, data[i])
    return _return(cpu)


def za_disable(cpu):
    """isasim built-in: __arm_za_disable, committing any lazy save and turning ZA off, then RET.

        if TPIDR2_EL0 != 0 then __arm_tpidr2_save();
        TPIDR2_EL0 = 0
        PSTATE.ZA = 0                             // SMSTOP ZA
        PC = X[30]

    A function that needs ZA for itself (__arm_new("za")) calls it on entry to take ZA from a caller's
    dormant state."""
    _commit_lazy_save(cpu, "__arm_za_disable")
    if cpu.state.tpidr2:
        cpu.state.write_tpidr2(0)
    set_modes(cpu, None, False)
    return _return(cpu)


def sme_state(cpu):
    """isasim built-in: __arm_sme_state, the SME state of the thread, then RET.

        X[0] = '1' : Zeros(61) : PSTATE.ZA : PSTATE.SM      // bit 63: SME is available
        X[1] = TPIDR2_EL0
        PC = X[30]

    isasim's core has SME, so bit 63 is always set; bit 62 (FEAT_SME_FA64) is clear."""
    state = cpu.state
    cpu.set_X(0, HAS_SME | (2 if state.za_enabled else 0) | (1 if state.sm else 0))
    cpu.set_X(1, state.tpidr2)
    return _return(cpu)


def get_current_vg(cpu):
    """isasim built-in: __arm_get_current_vg, the current vector length in 64-bit granules, then RET.

        if PSTATE.SM == '1' || HaveSVE() then X[0] = CurrentVL DIV 64;
        else X[0] = 0;
        PC = X[30]

    clang calls it at -O0 where a streaming function's unwind information records VG.  isasim's VL is the
    SVL in both modes; without the "SVE" feature, a non-streaming caller gets 0."""
    state = cpu.state
    cpu.set_X(0, cpu.svl // 64 if state.sm or "SVE" in state.features else 0)
    return _return(cpu)



# ---- the routines of functions with __arm_agnostic("sme_za_state") ----------------------------------------
# Such a function keeps whatever ZA state its caller has across a call of a function that does not share ZA:
# it asks __arm_sme_state_size for a buffer size, puts the buffer on its stack, and brackets the call with
# __arm_sme_save and __arm_sme_restore.  What the buffer holds is the routines' own business (the ABI fixes
# only that restore undoes save); isasim's layout, which QEMU's harness routines write too:
#
#     bytes 0-7     1 if ZA was live and is saved here, else 0      bytes 8-15  zero
#     then          ZA (SVL/8 vectors of SVL/8 bytes), then ZT0 (64 bytes)

AGNOSTIC_HEADER = 16


def sme_state_size(cpu):
    """isasim built-in: __arm_sme_state_size, the bytes __arm_sme_save needs, then RET.

        X[0] = 16 + (SVL DIV 8) * (SVL DIV 8) + 64       // a header, ZA, ZT0
        PC = X[30]"""
    cpu.set_X(0, AGNOSTIC_HEADER + cpu.svlb * cpu.svlb + 64)
    return _return(cpu)


def sme_save(cpu):
    """isasim built-in: __arm_sme_save(blk in X0), setting the ZA state aside for a call, then RET.

        if PSTATE.ZA == '0' then Mem[blk, 16] = Zeros();                       // nothing to keep
        elsif TPIDR2_EL0 != 0 then                                              // dormant: a caller's lazy save
            __arm_tpidr2_save(); TPIDR2_EL0 = 0; PSTATE.ZA = '0'; Mem[blk, 16] = Zeros();
        else                                                                    // live: kept here
            Mem[blk, 8] = 1; Mem[blk+8, 8] = 0; Mem[blk+16, ...] = ZA; then ZT0;
            PSTATE.ZA = '0';
        PC = X[30]"""
    state, blk = cpu.state, cpu.X(0)
    header = bytes(AGNOSTIC_HEADER)
    if state.za_enabled and state.tpidr2 == 0:
        header = (1).to_bytes(8, "little") + bytes(8)
        data = header + state.za.tobytes() + state.zt0.tobytes()
    else:
        data = header
    cpu.check_write(blk, len(data))
    if state.za_enabled and state.tpidr2 != 0:
        _commit_lazy_save(cpu, "__arm_sme_save")
        state.write_tpidr2(0)
    cpu.write_memory(blk, data)
    if state.za_enabled:
        set_modes(cpu, None, False)
    return _return(cpu)


def sme_restore(cpu):
    """isasim built-in: __arm_sme_restore(blk in X0), the ZA state __arm_sme_save set aside, back, then RET.

        if Mem[blk, 8] == 1 then
            PSTATE.ZA = '1';                             // SMSTART ZA (ZA and ZT0 zero)
            ZA = Mem[blk+16, ...]; ZT0 = Mem[blk+16+(SVL DIV 8)^2, 64];
        PC = X[30]"""
    state, blk = cpu.state, cpu.X(0)
    if int.from_bytes(cpu.read_memory(blk, 8), "little") == 1:
        svlb = cpu.svlb
        data = cpu.read_memory(blk + AGNOSTIC_HEADER, svlb * svlb + 64)
        set_modes(cpu, None, True)
        rows = np.frombuffer(data[:svlb * svlb], dtype=np.uint8).reshape(svlb, svlb)
        for i in range(svlb):
            if rows[i].any():
                cpu.set_ZAvector(i, rows[i])
        zt0 = np.frombuffer(data[svlb * svlb:], dtype=np.uint8)
        if zt0.any():
            state.write_zt0(zt0)
    return _return(cpu)

"""The parent side of a silicon run: one child process under ptrace, holding the program's memory and code.

The child (child.py, standard library only, started by path) maps the job and stops; ChildProcess sets its
registers, continues or single-steps it, and reads its state: GPRs and RFLAGS (PTRACE_GETREGS), TILECFG,
the tile data and the vector registers from the XSAVE image (PTRACE_GETREGSET NT_X86_XSTATE), and the
mapped memory (/proc/PID/mem).  An INT3 stop is the end of the program; a signal is a fault.
"""

from __future__ import annotations

import ctypes
import errno
import json
import os
import signal
import subprocess
import sys
import threading
from dataclasses import dataclass, field
from pathlib import Path

from ...core.errors import ConfigError, IsasimError
from ...core.faults import Fault
from ...core.program import Program
from ...core.trace import Init
from ..faults import DE, GP, PAGE_FAULT, UD
from ..forms.control import BUILTINS
from ..operands import GPR64
from ..semantics.control import ABORTED, STACK_CHECK_FAILED
from ..semantics.libm import ROUNDING, call_rounding
from .host import XFEATURE_XTILECFG, XFEATURE_XTILEDATA, host_cpu, libc, xsave_offset

PAGE = 4096
PTRACE_CONT, PTRACE_SINGLESTEP = 7, 9
PTRACE_GETREGS, PTRACE_SETREGS = 12, 13
PTRACE_GETSIGINFO, PTRACE_GETREGSET, PTRACE_SETREGSET = 0x4202, 0x4204, 0x4205
NT_X86_XSTATE = 0x202
XSAVE_IMAGE_BYTES = 16384  # room for every XSAVE component a core has (with AMX, about 11 KiB)
XSTATE_BV = slice(512, 520)  # the XSAVE header's bitmap of the components not in their INIT state
# The vector registers in the standard (non-compacted) XSAVE image that PTRACE_GETREGSET
# NT_X86_XSTATE returns: XMM0-15 in the legacy FXSAVE area (fixed by the architecture), and
# components 2 (AVX: bits 255:128 of YMM0-15), 6 (ZMM_Hi256: bits 511:256 of ZMM0-15) and 7
# (Hi16_ZMM: all of ZMM16-31) where CPUID.(EAX=0DH, ECX=i).EBX says (xsave_offset).  Those
# offsets differ between vendors: Intel leaves room for MPX (6 at 1152, 7 at 1664), a Zen 4
# packs them (6 at 896, 7 at 1408).  tests/x86_amx/forms/test_vector.py checks them on the host:
# registers seeded through the image and stored by the CPU's own instructions.
XMM_OFFSET = 160
XFEATURE_SSE, XFEATURE_AVX, XFEATURE_ZMM_HI256, XFEATURE_HI16_ZMM = 1, 2, 6, 7
SI_KERNEL = 0x80
INT3 = 0xCC

# x86-64 struct user_regs_struct, in order
_USER_REGS = ("r15", "r14", "r13", "r12", "rbp", "rbx", "r11", "r10", "r9", "r8", "rax", "rcx", "rdx", "rsi",
              "rdi", "orig_rax", "rip", "cs", "eflags", "rsp", "ss", "fs_base", "gs_base", "ds", "es", "fs", "gs")
# RF (resume flag): when the kernel delivers a fault it saves RFLAGS with RF set, so that the
# faulting instruction, if restarted, does not hit an instruction breakpoint again.  That is the
# delivery's doing, not the program's: before delivery RF is clear (it is cleared as every
# instruction completes), and a trace records the program's flags, so the snapshot clears it.
RF = 1 << 16


class UserRegs(ctypes.Structure):
    _fields_ = [(name, ctypes.c_ulonglong) for name in _USER_REGS]


class SigInfo(ctypes.Structure):
    _fields_ = [("si_signo", ctypes.c_int), ("si_errno", ctypes.c_int), ("si_code", ctypes.c_int),
                ("_pad", ctypes.c_int), ("si_addr", ctypes.c_ulonglong), ("_rest", ctypes.c_byte * 104)]


class IoVec(ctypes.Structure):
    _fields_ = [("iov_base", ctypes.c_void_p), ("iov_len", ctypes.c_size_t)]


# The child process: ``child.py`` (standard library only, started by path so that
# it starts in milliseconds without importing isasim) maps the job and stops under ptrace.
CHILD = Path(__file__).with_name("child.py")


@dataclass
class SiliconSnapshot:
    """The architectural state read from the child."""

    regs: dict[str, int]
    rflags: int
    rip: int
    tilecfg: bytes  # 64 bytes (zeros when the XTILECFG component is INIT)
    tiles: bytes  # 8 x 1024 bytes
    memory: dict[int, bytes] = field(default_factory=dict)  # region start -> contents
    vectors: tuple[int, ...] = ()  # zmm0-31 as numbers, the bits this core does not have 0


def _page_mappings(init: Init, program: Program) -> list:
    """Whole-page mappings for the init regions and the code, as (start, end, prot, pieces)."""
    spans = []
    for address, data, writable in init.memory:
        start, end = address // PAGE * PAGE, -(-(address + len(data)) // PAGE) * PAGE
        spans.append([start, end, 3 if writable else 1, [(address, data.hex())]])
    code = bytearray(program.code) + bytes([INT3])
    for ins in program.instructions:
        if ins.mnemonic == "ret" and ins.invalid is None:
            code[ins.address - program.base] = INT3  # RET ends the kernel: stop there instead
    spans.append([program.base // PAGE * PAGE, -(-(program.end + 1) // PAGE) * PAGE, 5,
                  [(program.base, bytes(code).hex())]])
    spans.sort()
    merged: list = []
    for span in spans:
        if merged and span[0] < merged[-1][1]:
            last = merged[-1]
            if last[2] != span[2]:
                raise IsasimError(f"regions at {last[3][0][0]:#x} and {span[3][0][0]:#x} share a page but "
                                  "differ in permissions; the silicon backend maps whole 4 KiB pages")
            last[1] = max(last[1], span[1])
            last[3] += span[3]
        else:
            merged.append(span)
    return merged


class ChildProcess:
    """One traced child holding the program's memory and code."""

    def __init__(self, program: Program, init: Init, amx: bool, timeout: float):
        self.program = program
        self.init = init
        self.timeout = timeout
        self.stops = {ins.address for ins in program.instructions if ins.mnemonic == "ret"} | {program.end}
        # where the program's CALLs return to: a RET (an INT3 here) whose return address is one of them
        # returns inside the program (the parent does it) instead of ending the kernel
        self.returns = {ins.next_address for ins in program.instructions if ins.mnemonic == "call"}
        # isasim's built-ins (memset, ...) are UD2 in the code: the parent runs them when the CPU reaches one
        self.builtins = {ins.address: ins.mnemonic for ins in program.instructions if ins.mnemonic in BUILTINS}
        self.proc = subprocess.Popen([sys.executable, "-S", str(CHILD)],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        self.pid = self.proc.pid
        self.alive = True
        try:
            job = {"amx": amx, "mappings": _page_mappings(init, program)}
            self.proc.stdin.write((json.dumps(job) + "\n").encode())
            self.proc.stdin.flush()
            answer = json.loads(self.proc.stdout.readline() or b'{"error": "the child process died while mapping"}')
            if "error" in answer:
                raise IsasimError(f"silicon backend: {answer['error']}")
            status = self._wait(10.0)
            if not (os.WIFSTOPPED(status) and os.WSTOPSIG(status) == signal.SIGSTOP):
                raise IsasimError("silicon backend: the child did not stop under ptrace")
            regs = self.get_regs()
            for name in GPR64:
                setattr(regs, name, init.regs.get(name, 0))
            regs.rip = program.base
            for base in ("fs_base", "gs_base"):  # the thread pointers the init gives (the program's own block)
                if base in init.regs:
                    setattr(regs, base, init.regs[base] % (1 << 64))
            regs.eflags = 0x202
            regs.orig_rax = (1 << 64) - 1  # not in a system call: no restart on resume
            self.set_regs(regs)
            # The child's vector registers hold whatever its own Python left there: start them as the
            # simulator starts them, zero or as init.arrays seeds zmm0-31.
            self.set_vectors(seeded_vectors(init))
        except BaseException:
            self.kill()
            raise

    # ---- ptrace plumbing --------------------------------------------------------
    def _wait(self, timeout: float | None) -> int:
        """Block until the child stops or ends; with a timeout, a watchdog kills it when time is up."""
        expired = threading.Event()
        timer = None
        if timeout is not None:
            def expire() -> None:
                expired.set()
                try:
                    os.kill(self.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass

            timer = threading.Timer(timeout, expire)
            timer.start()
        try:
            _pid, status = os.waitpid(self.pid, 0)
        finally:
            if timer is not None:
                timer.cancel()
        if os.WIFEXITED(status) or os.WIFSIGNALED(status):
            self.alive = False
            self.proc.returncode = -1
        if expired.is_set():
            raise TimeoutError
        return status

    def _ptrace(self, request: int, addr=None, data=None) -> int:
        ctypes.set_errno(0)
        result = libc().ptrace(request, self.pid, addr, data)
        if result == -1:
            err = ctypes.get_errno()
            if err == errno.ESRCH:  # the child is gone (killed from outside, or it died)
                self._raise_if_gone()
            if err:
                raise IsasimError(f"silicon backend: ptrace request {request} failed: {os.strerror(err)}")
        return result

    def _raise_if_gone(self) -> None:
        try:
            status = self._wait(1.0)  # a SIGKILL may still be on its way to the stopped child
        except (ChildProcessError, TimeoutError):
            return
        if os.WIFSIGNALED(status) or os.WIFEXITED(status):
            how = f"signal {os.WTERMSIG(status)}" if os.WIFSIGNALED(status) else "it exited"
            raise IsasimError(f"silicon backend: the child process ended unexpectedly ({how})")

    def get_regs(self) -> UserRegs:
        regs = UserRegs()
        self._ptrace(PTRACE_GETREGS, None, ctypes.byref(regs))
        return regs

    def set_regs(self, regs: UserRegs) -> None:
        self._ptrace(PTRACE_SETREGS, None, ctypes.byref(regs))

    def xsave_image(self) -> bytes:
        """The child's XSAVE image (standard format), as PTRACE_GETREGSET NT_X86_XSTATE gives it."""
        buffer = ctypes.create_string_buffer(XSAVE_IMAGE_BYTES)
        iov = IoVec(ctypes.cast(buffer, ctypes.c_void_p), len(buffer))
        self._ptrace(PTRACE_GETREGSET, ctypes.c_void_p(NT_X86_XSTATE), ctypes.byref(iov))
        return buffer.raw[: iov.iov_len]

    def xstate(self, image: bytes | None = None) -> tuple[bytes, bytes]:
        """(TILECFG, TILEDATA) from the XSAVE image; zeros for components in their INIT state."""
        if not host_cpu().amx_features:
            return bytes(64), bytes(8192)
        image = self.xsave_image() if image is None else image
        xstate_bv = int.from_bytes(image[XSTATE_BV], "little")
        cfg_offset, data_offset = _xsave_offsets()
        cfg = image[cfg_offset : cfg_offset + 64] if xstate_bv >> XFEATURE_XTILECFG & 1 else bytes(64)
        data = image[data_offset : data_offset + 8192] if xstate_bv >> XFEATURE_XTILEDATA & 1 else bytes(8192)
        return cfg, data

    def vectors(self, image: bytes | None = None) -> tuple[int, ...]:
        """zmm0-31 from the XSAVE image: the parts this core has, a component in its INIT state as zeros
        (XSAVE leaves such a component's bytes in the image stale)."""
        image = self.xsave_image() if image is None else image
        present = int.from_bytes(image[XSTATE_BV], "little")
        count, bits = host_cpu().vector_shape
        ymm_hi, zmm_hi, hi16 = (xsave_offset(c) for c in (XFEATURE_AVX, XFEATURE_ZMM_HI256, XFEATURE_HI16_ZMM))
        out = [0] * 32
        for n in range(count):
            parts = []  # (the component's bit, its bytes of register n), lowest bits first
            if n < 16:
                parts.append((XFEATURE_SSE, image[XMM_OFFSET + 16 * n:XMM_OFFSET + 16 * n + 16]))
                if bits >= 256:
                    parts.append((XFEATURE_AVX, image[ymm_hi + 16 * n:ymm_hi + 16 * n + 16]))
                if bits == 512:
                    parts.append((XFEATURE_ZMM_HI256, image[zmm_hi + 32 * n:zmm_hi + 32 * n + 32]))
            else:
                at = hi16 + 64 * (n - 16)
                parts.append((XFEATURE_HI16_ZMM, image[at:at + 64]))
            value = b"".join(data if present >> bit & 1 else bytes(len(data)) for bit, data in parts)
            out[n] = int.from_bytes(value, "little")
        return tuple(out)

    def set_vectors(self, values: list[int]) -> None:
        """zmm0-31 := ``values`` (bits the core does not have must be 0; seeded_vectors checks that)."""
        image = bytearray(self.xsave_image())
        count, bits = host_cpu().vector_shape
        ymm_hi, zmm_hi, hi16 = (xsave_offset(c) for c in (XFEATURE_AVX, XFEATURE_ZMM_HI256, XFEATURE_HI16_ZMM))
        present = int.from_bytes(image[XSTATE_BV], "little") | 1 << XFEATURE_SSE
        for n in range(count):
            raw = values[n].to_bytes(64, "little")
            if n < 16:
                image[XMM_OFFSET + 16 * n:XMM_OFFSET + 16 * n + 16] = raw[:16]
                if bits >= 256:
                    image[ymm_hi + 16 * n:ymm_hi + 16 * n + 16] = raw[16:32]
                if bits == 512:
                    image[zmm_hi + 32 * n:zmm_hi + 32 * n + 32] = raw[32:]
            else:
                image[hi16 + 64 * (n - 16):hi16 + 64 * (n - 15)] = raw
        # every component written is now live (not INIT), or the CPU would restore it as zeros
        present |= (1 << XFEATURE_AVX if bits >= 256 else 0) | (
            (1 << XFEATURE_ZMM_HI256 | 1 << XFEATURE_HI16_ZMM) if bits == 512 else 0)
        image[XSTATE_BV] = present.to_bytes(8, "little")
        buffer = ctypes.create_string_buffer(bytes(image), len(image))
        iov = IoVec(ctypes.cast(buffer, ctypes.c_void_p), len(image))
        self._ptrace(PTRACE_SETREGSET, ctypes.c_void_p(NT_X86_XSTATE), ctypes.byref(iov))

    def read_memory(self) -> dict[int, bytes]:
        out = {}
        with open(f"/proc/{self.pid}/mem", "rb", buffering=0) as mem:
            for address, data, _writable in self.init.memory:
                mem.seek(address)
                out[address] = mem.read(len(data))
        return out

    def mapped_pages(self) -> list[tuple[int, int]]:
        spans = []
        with open(f"/proc/{self.pid}/maps", encoding="ascii") as maps:
            for line in maps:
                lo, hi = line.split()[0].split("-")
                spans.append((int(lo, 16), int(hi, 16)))
        return spans

    def snapshot(self, *, with_memory: bool = True) -> SiliconSnapshot:
        regs = self.get_regs()
        image = self.xsave_image()
        cfg, data = self.xstate(image)
        return SiliconSnapshot({name: getattr(regs, name) for name in GPR64}, regs.eflags & ~RF, regs.rip, cfg, data,
                               self.read_memory() if with_memory else {}, self.vectors(image))

    def kill(self) -> None:
        if self.alive:
            try:
                os.kill(self.pid, signal.SIGKILL)
                os.waitpid(self.pid, 0)
            except (ProcessLookupError, ChildProcessError):
                pass
            self.alive = False
        self.proc.returncode = -9
        for stream in (self.proc.stdin, self.proc.stdout):
            try:
                stream.close()
            except OSError:
                pass

    # ---- running ----------------------------------------------------------------
    def resume(self, request: int) -> tuple[str, Fault | None]:
        """Continue or single-step; returns ("end" | "step" | "fault", fault)."""
        while True:
            outcome = self._resume(request)
            if outcome[0] != "returned":
                return outcome
            if request != PTRACE_CONT:
                return "step", None

    def returns_inside(self, regs: UserRegs) -> int | None:
        """The address a RET at this point returns to, if it is after one of the program's CALLs (the RET of a
        called function, which goes on inside the program); None for the RET that ends the kernel."""
        if not self.returns:
            return None
        with open(f"/proc/{self.pid}/mem", "rb", buffering=0) as mem:
            try:
                mem.seek(regs.rsp)
                address = int.from_bytes(mem.read(8), "little")
            except (OSError, ValueError, OverflowError):
                return None
        return address if address in self.returns else None

    def _return_inside(self, regs: UserRegs) -> bool:
        """Stopped at a RET's INT3 whose return address is inside the program: do the RET (pop the address into
        RIP), as the CPU would have."""
        address = self.returns_inside(regs) if regs.rip - 1 != self.program.end else None
        if address is None:
            return False
        regs.rip, regs.rsp = address, regs.rsp + 8
        self.set_regs(regs)
        return True

    def _resume(self, request: int) -> tuple[str, Fault | None]:
        # a single step of a RET's INT3 (not of an instruction that lands just after one)
        before = self.get_regs().rip if request != PTRACE_CONT and self.returns else None
        self._ptrace(request, None, None)
        try:  # one instruction always ends, so only a free run needs the watchdog
            status = self._wait(self.timeout if request == PTRACE_CONT else None)
        except TimeoutError:
            self.kill()
            return "timeout", None
        if not os.WIFSTOPPED(status):
            how = f"signal {os.WTERMSIG(status)}" if os.WIFSIGNALED(status) else f"exit {os.WEXITSTATUS(status)}"
            raise IsasimError(f"silicon backend: the child process ended unexpectedly ({how})")
        sig = os.WSTOPSIG(status)
        regs = self.get_regs()
        if sig == signal.SIGTRAP:
            if (regs.rip - 1 in self.stops and (request == PTRACE_CONT or before == regs.rip - 1)
                    and self._return_inside(regs)):
                return "returned", None
            if request == PTRACE_CONT and regs.rip - 1 in self.stops:
                regs.rip -= 1  # report the stop at the RET (or the end), as the simulator does
                self.set_regs(regs)
                return "end", None
            return "step", None
        if sig == signal.SIGILL and regs.rip in self.builtins:
            return self._run_builtin(self.builtins[regs.rip], regs)
        info = SigInfo()
        self._ptrace(PTRACE_GETSIGINFO, None, ctypes.byref(info))
        return "fault", _fault_from_signal(sig, info)

    def _run_builtin(self, name: str, regs: UserRegs) -> tuple[str, Fault | None]:
        """Do what isasim's built-in ``name`` does (semantics/control.py), in the child's memory, and return as
        RET does: the CPU stopped at its UD2."""
        if name == "__stack_chk_fail":
            return "fault", Fault(STACK_CHECK_FAILED, "stack smashing detected: __stack_chk_fail was called "
                                                      "(on silicon)")
        if name == "abort":
            return "fault", Fault(ABORTED, "abort() was called (on silicon)")
        if name in ROUNDING:  # C's rounding functions: the simulator's definitions, on the child's registers
            vectors = list(self.vectors())
            zmm0, rax = call_rounding(name, vectors[0])
            if zmm0 is not None:
                vectors[0] = zmm0
                self.set_vectors(vectors)
                regs = self.get_regs()  # (the same registers: SETREGSET changed only the vector state)
            else:
                regs.rax = rax
            try:
                with open(f"/proc/{self.pid}/mem", "rb", buffering=0) as mem:
                    mem.seek(regs.rsp)
                    address = int.from_bytes(mem.read(8), "little")
            except (OSError, ValueError, OverflowError) as error:
                return "fault", Fault(PAGE_FAULT, f"{name} could not return: the stack is not readable ({error})")
            regs.rip, regs.rsp = address, regs.rsp + 8
            self.set_regs(regs)
            return "returned", None
        dest, n = regs.rdi, regs.rdx
        try:
            with open(f"/proc/{self.pid}/mem", "r+b", buffering=0) as mem:
                if name == "memset":
                    data = bytes([regs.rsi & 0xFF]) * n
                else:  # memcpy, memmove: all n bytes read before any is written
                    mem.seek(regs.rsi)
                    data = mem.read(n)
                    if len(data) != n:
                        raise OSError(errno.EIO, "short read")
                if n:
                    mem.seek(dest)
                    mem.write(data)
                mem.seek(regs.rsp)
                address = int.from_bytes(mem.read(8), "little")
        except (OSError, ValueError, OverflowError) as error:
            return "fault", Fault(PAGE_FAULT, f"{name} touched memory the child cannot access ({error}) on silicon")
        regs.rax = dest
        regs.rip, regs.rsp = address, regs.rsp + 8
        self.set_regs(regs)
        return "returned", None

    def index_at(self, rip: int) -> int | None:
        ins = self.program.at(rip)
        return None if ins is None else ins.index


def _fault_from_signal(sig: int, info: SigInfo) -> Fault:
    if sig == signal.SIGILL:
        return UD(f"SIGILL (si_code {info.si_code}) on silicon")
    if sig == signal.SIGFPE:
        return DE(f"SIGFPE (si_code {info.si_code}) on silicon")
    if sig == signal.SIGSEGV and info.si_code == SI_KERNEL:
        return GP("SIGSEGV (SI_KERNEL) on silicon")
    if sig in (signal.SIGSEGV, signal.SIGBUS):
        kind = {1: "address not mapped", 2: "access not permitted"}.get(info.si_code, f"si_code {info.si_code}")
        return Fault(PAGE_FAULT, f"{kind} at {info.si_addr:#x} on silicon", address=info.si_addr)
    return Fault(f"signal {sig}", f"{signal.Signals(sig).name} on silicon")


def _xsave_offsets() -> tuple[int, int]:
    """Standard-format XSAVE offsets of XTILECFG and XTILEDATA (CPUID.(0DH,17/18).EBX: 2752 and 2816
    measured on Emerald Rapids)."""
    return xsave_offset(XFEATURE_XTILECFG), xsave_offset(XFEATURE_XTILEDATA)


def seeded_vectors(init: Init) -> list[int]:
    """zmm0-31 as ``init.arrays`` seeds them (zero where it does not), refusing what this core cannot hold."""
    count, bits = host_cpu().vector_shape
    values = [0] * 32
    for n in range(32):
        data = init.arrays.get(f"zmm{n}")
        if data is None:
            continue
        values[n] = int.from_bytes(data, "little")
        if values[n] >> bits or (n >= count and values[n]):
            raise ConfigError(f"backend 'silicon' cannot seed init.arrays.zmm{n}: this CPU has {count} vector "
                              f"registers of {bits} bits")
    return values

"""The ``silicon`` backend: run a program on this machine's CPU and report what it did.

The same bytes the simulator decodes run on the real core, in a child process
the backend controls with ptrace, so a #UD, #GP or #PF is a report (with the
kind and the index of the faulting instruction) instead of a dead interpreter,
and a runaway loop is stopped by a timeout.  Pure ctypes: no compiler is needed.

How a run goes:

1. A child Python process asks the kernel for AMX tile permission
   (arch_prctl ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA), maps every init memory
   region at its exact address (whole pages, never over an existing mapping),
   maps the program's code at its own address with every RET replaced by INT3
   (and an INT3 after the last instruction), puts itself under ptrace
   (PTRACE_TRACEME) and stops.
2. The parent sets the child's registers to the init state (PTRACE_SETREGS, RIP
   at the first instruction) and either continues it to the end (``run``) or
   single-steps it (``lockstep``), reading the full state after each step:
   GPRs and RFLAGS (PTRACE_GETREGS), TILECFG and the tile data from the XSAVE
   image (PTRACE_GETREGSET NT_X86_XSTATE), and the mapped memory (/proc/PID/mem).
3. An INT3 stop is the end of the program (the simulator's RET); a SIGILL is #UD,
   a SIGSEGV with si_code SI_KERNEL is #GP, other SIGSEGVs are #PF at si_addr.

Safety: the backend runs only programs isasim encoded itself, and first runs the
simulator: a program whose simulated run faults at an address the child process
has mapped for its own use is refused before anything reaches the CPU.
"""

from __future__ import annotations

import ctypes
import errno
import functools
import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from ..core.backends import Backend, Outcome
from ..core.errors import ConfigError, IsasimError, StepLimitExceeded
from ..core.faults import Fault
from ..core.machine import DEFAULT_STEP_LIMIT, Machine
from ..core.program import Program
from ..core.trace import Init
from .config import CPU_MODELS, model_with_features, uses_amx
from .faults import GP, INVALID_OPCODE, PAGE_FAULT, UD
from .state import observed_arrays
from .registers import GPR64

PAGE = 4096
ARCH_GET_XCOMP_SUPP = 0x1021
SYS_ARCH_PRCTL = 158
XFEATURE_XTILECFG, XFEATURE_XTILEDATA = 17, 18

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
# packs them (6 at 896, 7 at 1408).  tests/x86_amx/test_vector_moves.py checks them on the host:
# registers seeded through the image and stored by the CPU's own instructions.
XMM_OFFSET = 160
XFEATURE_SSE, XFEATURE_AVX, XFEATURE_ZMM_HI256, XFEATURE_HI16_ZMM = 1, 2, 6, 7
# cpuid_ebx's machine code (System V: leaf in edi, subleaf in esi, EBX returned in eax; RBX is
# callee-saved, so it is kept): push rbx; mov eax, edi; mov ecx, esi; cpuid; mov eax, ebx; pop rbx; ret
_CPUID_EBX_CODE = bytes.fromhex("53" "89f8" "89f1" "0fa2" "89d8" "5b" "c3")
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

# Family 6 models with AMX, for naming the producer of a trace.
CPU_NAMES = {143: "sapphire-rapids", 207: "emerald-rapids", 173: "granite-rapids", 174: "granite-rapids"}


class UserRegs(ctypes.Structure):
    _fields_ = [(name, ctypes.c_ulonglong) for name in _USER_REGS]


class SigInfo(ctypes.Structure):
    _fields_ = [("si_signo", ctypes.c_int), ("si_errno", ctypes.c_int), ("si_code", ctypes.c_int),
                ("_pad", ctypes.c_int), ("si_addr", ctypes.c_ulonglong), ("_rest", ctypes.c_byte * 104)]


class IoVec(ctypes.Structure):
    _fields_ = [("iov_base", ctypes.c_void_p), ("iov_len", ctypes.c_size_t)]


_libc = None


def libc():
    global _libc
    if _libc is None:
        _libc = ctypes.CDLL(None, use_errno=True)
        _libc.ptrace.restype = ctypes.c_long
        _libc.ptrace.argtypes = [ctypes.c_long, ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p]
        _libc.syscall.restype = ctypes.c_long
    return _libc


# ---------------------------------------------------------------------------
# What this host can do
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class HostCpu:
    family: int
    model: int
    name: str  # a CPU model name isasim knows, or "unknown"
    flags: frozenset[str]
    xcomp_supported: int  # ARCH_GET_XCOMP_SUPP: the XSAVE features the kernel lets a process use

    @property
    def vector_shape(self) -> tuple[int, int]:
        """(registers, bits) of the vector registers this core has: 32 x 512 with AVX-512, 16 x 256 with
        AVX, 16 x 128 (SSE) otherwise."""
        if "avx512f" in self.flags:
            return 32, 512
        return (16, 256) if "avx" in self.flags else (16, 128)

    @property
    def amx_features(self) -> set[str]:
        names = {"amx_tile": "AMX-TILE", "amx_int8": "AMX-INT8", "amx_bf16": "AMX-BF16", "amx_fp16": "AMX-FP16"}
        have = {v for k, v in names.items() if k in self.flags}
        if not self.xcomp_supported >> XFEATURE_XTILEDATA & 1:
            return set()
        return have

    def why_no_amx(self) -> str | None:
        if self.amx_features:
            return None
        if not {"amx_tile"} & self.flags:
            return (f"this CPU (family {self.family} model {self.model}) reports no AMX-TILE in CPUID "
                    f"(/proc/cpuinfo has no amx_tile; the kernel's XSAVE features are {self.xcomp_supported:#x})")
        return f"the kernel does not offer XTILEDATA (ARCH_GET_XCOMP_SUPP = {self.xcomp_supported:#x})"


_host: HostCpu | None = None


def host_cpu() -> HostCpu:
    global _host
    if _host is None:
        family = model = 0
        flags: frozenset[str] = frozenset()
        try:
            with open("/proc/cpuinfo", encoding="ascii", errors="replace") as f:
                for line in f:
                    key, _, value = line.partition(":")
                    key = key.strip()
                    if key == "cpu family":
                        family = int(value)
                    elif key == "model":
                        model = int(value)
                    elif key == "flags":
                        flags = frozenset(value.split())
                        break
        except OSError:
            pass
        supported = ctypes.c_ulonglong(0)
        if sys.platform.startswith("linux") and os.uname().machine == "x86_64":
            libc().syscall(SYS_ARCH_PRCTL, ARCH_GET_XCOMP_SUPP, ctypes.byref(supported))
        _host = HostCpu(family, model, CPU_NAMES.get(model, "unknown") if family == 6 else "unknown", flags,
                        supported.value)
    return _host


# What the host executes, which need not be what CPUID says: a hypervisor can clear a feature's CPUID bit
# but cannot stop the core executing the instruction (measured: a KVM guest reporting family 6 model 167
# without amx_fp16 runs TDPFP16PS).  One instruction per feature isasim can only learn so; the probe
# program configures tmm0-2 as 16 x 64 bytes, so the instruction itself is the only thing that can #UD.
AMX_PROBES = {"AMX-FP16": "tdpfp16ps tmm0, tmm1, tmm2"}
PROBE_CONFIG = 0x20000000  # the probe's one page: its 64-byte TILECFG
EXECUTES_HIDDEN = "executes though CPUID hides it"


@dataclass(frozen=True)
class MeasuredAmx:
    """The AMX features this host executes, as measured, and how each probed one is known."""

    features: frozenset[str]  # what the host runs (CPUID's AMX features, corrected by the probes)
    sources: tuple[tuple[str, str], ...] = ()  # (feature, how it was found) for every feature in features
    absent: tuple[tuple[str, str], ...] = ()  # (feature, why not) for the probed features it does not run

    @property
    def hidden(self) -> list[str]:
        """Features the host executes while CPUID says it has none of them."""
        return [f for f, how in self.sources if how == EXECUTES_HIDDEN]

    def describe(self) -> str:
        """How the features were found, as a producer or a note says it: the probes' findings when they
        differ from CPUID, otherwise the features and "from CPUID"."""
        unusual = [f"{f} {how}" for f, how in self.sources if how != "CPUID"] + \
                  [f"{f} {why}" for f, why in self.absent if why != "raises #UD (as CPUID says)"]
        if unusual:
            return ", ".join(unusual)
        have = ", ".join(sorted(self.features)) or "none"
        return f"AMX features from CPUID: {have}" + "".join(f"; {f} raises #UD" for f, _ in self.absent)


def _probe_executes(line: str) -> Fault | None:
    """Run ``line`` once in the backend's child after a LDTILECFG of tmm0-2; the fault it raised, if any.
    The child is the one every program runs in (same AMX permission, same mappings), so what the probe
    sees is what a program would see."""
    from .kernels import tile_config

    full = {t: (16, 64) for t in range(3)}
    program = Machine("x86_amx", {"cpu": "granite-rapids"}).assemble(f"ldtilecfg [rcx]\n{line}\nret")
    init = Init({"rcx": PROBE_CONFIG}, [(PROBE_CONFIG, tile_config(full).ljust(PAGE, b"\0"), False)])
    child = ChildProcess(program, init, True, 10.0)
    try:
        outcome, fault = child.resume(PTRACE_CONT)
        if outcome == "timeout":
            raise IsasimError(f"silicon backend: probing {line!r} did not finish")
        if fault is not None and child.get_regs().rip != program.instructions[1].address:
            raise IsasimError(f"silicon backend: the probe's LDTILECFG faulted ({fault.kind}: {fault.message})")
        return fault
    finally:
        child.kill()


_measured: MeasuredAmx | None = None


def host_amx() -> MeasuredAmx:
    """The host's AMX features as measured (once per process: a probe starts a child process).  With no
    usable AMX at all (no AMX-TILE in CPUID, or no XTILEDATA from the kernel) nothing is probed: the
    child could not configure tiles."""
    global _measured
    if _measured is None:
        cpuid = host_cpu().amx_features
        if not cpuid or platform_problem():
            _measured = MeasuredAmx(frozenset(cpuid))
        else:
            have, sources, absent = set(cpuid), {f: "CPUID" for f in cpuid}, []
            for feature, line in AMX_PROBES.items():
                fault = _probe_executes(line)
                if fault is None:
                    have.add(feature)
                    sources[feature] = "CPUID, and it executes" if feature in cpuid else EXECUTES_HIDDEN
                elif fault.kind == INVALID_OPCODE:
                    have.discard(feature)
                    sources.pop(feature, None)
                    absent.append((feature, "raises #UD though CPUID reports it" if feature in cpuid
                                   else "raises #UD (as CPUID says)"))
                else:
                    raise IsasimError(f"silicon backend: probing {feature} with {line!r} gave {fault.kind} "
                                      f"({fault.message}), neither a result nor #UD")
            _measured = MeasuredAmx(frozenset(have), tuple(sorted(sources.items())), tuple(absent))
    return _measured


def host_model() -> tuple[str | None, str]:
    """The isasim CPU model of this host and how it was chosen: by family and model when isasim knows
    them, otherwise by the AMX features the host executes (host_amx); None when neither names one."""
    host = host_cpu()
    if host.name in CPU_MODELS:
        return host.name, f"(family {host.family} model {host.model})"
    measured = host_amx()
    name = model_with_features(measured.features)
    if name is None:
        return None, f"(family {host.family} model {host.model})"
    return name, f"by its features (family {host.family} model {host.model}, {measured.describe()})"


def platform_problem() -> str | None:
    if not sys.platform.startswith("linux") or os.uname().machine != "x86_64":
        return f"the silicon backend needs x86-64 Linux (this is {sys.platform} {os.uname().machine})"
    return None


# The child process: ``silicon_child.py`` (standard library only, started by path so that
# it starts in milliseconds without importing isasim) maps the job and stops under ptrace.
CHILD = Path(__file__).with_name("silicon_child.py")


# ---------------------------------------------------------------------------
# The parent side
# ---------------------------------------------------------------------------


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


class SiliconMemory:
    """Final memory as read from the child, with the Memory-like read()/is_mapped() the core uses."""

    def __init__(self, regions: list[tuple[int, bytes, bool]], contents: dict[int, bytes]):
        self.regions = [(a, contents.get(a, d)) for a, d, _w in regions]

    def is_mapped(self, address: int, size: int) -> bool:
        return any(a <= address and address + size <= a + len(d) for a, d in self.regions)

    def read(self, address: int, size: int) -> bytes:
        for a, d in self.regions:
            if a <= address and address + size <= a + len(d):
                return d[address - a : address - a + size]
        raise IsasimError(f"memory at {address:#x} was not mapped in the silicon run")


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
            if request == PTRACE_CONT and regs.rip - 1 in self.stops:
                regs.rip -= 1  # report the stop at the RET (or the end), as the simulator does
                self.set_regs(regs)
                return "end", None
            return "step", None
        info = SigInfo()
        self._ptrace(PTRACE_GETSIGINFO, None, ctypes.byref(info))
        return "fault", _fault_from_signal(sig, info)

    def index_at(self, rip: int) -> int | None:
        ins = self.program.at(rip)
        return None if ins is None else ins.index


def _fault_from_signal(sig: int, info: SigInfo) -> Fault:
    if sig == signal.SIGILL:
        return UD(f"SIGILL (si_code {info.si_code}) on silicon")
    if sig == signal.SIGSEGV and info.si_code == SI_KERNEL:
        return GP("SIGSEGV (SI_KERNEL) on silicon")
    if sig in (signal.SIGSEGV, signal.SIGBUS):
        kind = {1: "address not mapped", 2: "access not permitted"}.get(info.si_code, f"si_code {info.si_code}")
        return Fault(PAGE_FAULT, f"{kind} at {info.si_addr:#x} on silicon", address=info.si_addr)
    return Fault(f"signal {sig}", f"{signal.Signals(sig).name} on silicon")


_cpuid_function = None
_cpuid_page = None  # the executable page holding _CPUID_EBX_CODE: kept, since unmapping it would pull the code away


def cpuid_ebx(leaf: int, subleaf: int) -> int:
    """EBX of the CPUID instruction, run on this CPU (seven bytes of machine code in an executable page:
    Python has no other way to ask the CPU, and /proc/cpuinfo does not tell XSAVE offsets)."""
    global _cpuid_function, _cpuid_page
    if _cpuid_function is None:
        import mmap

        _cpuid_page = mmap.mmap(-1, mmap.PAGESIZE, prot=mmap.PROT_READ | mmap.PROT_WRITE | mmap.PROT_EXEC)
        _cpuid_page.write(_CPUID_EBX_CODE)
        address = ctypes.addressof(ctypes.c_char.from_buffer(_cpuid_page))
        _cpuid_function = ctypes.CFUNCTYPE(ctypes.c_uint32, ctypes.c_uint32, ctypes.c_uint32)(address)
    return _cpuid_function(leaf, subleaf)


@functools.lru_cache(maxsize=None)
def xsave_offset(component: int) -> int:
    """Where XSAVE component ``component`` (2 or more) starts in the standard-format image:
    CPUID.(EAX=0DH, ECX=component).EBX (0 for a component the CPU does not have)."""
    return cpuid_ebx(0xD, component)


def _xsave_offsets() -> tuple[int, int]:
    """Standard-format XSAVE offsets of XTILECFG and XTILEDATA (CPUID.(0DH,17/18).EBX: 2752 and 2816
    measured on Emerald Rapids)."""
    return xsave_offset(XFEATURE_XTILECFG), xsave_offset(XFEATURE_XTILEDATA)


# ---------------------------------------------------------------------------
# The backend
# ---------------------------------------------------------------------------


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


def observed_vectors(vectors: tuple[int, ...]) -> dict[str, bytes]:
    """Each zmm register that is not zero, as its 64 bytes: what X86AmxState.observed_vectors shows."""
    return {f"zmm{n}": value.to_bytes(64, "little") for n, value in enumerate(vectors) if value}


def observed_state(snap: SiliconSnapshot) -> dict:
    """The trace view of a silicon snapshot, shaped like X86Amx.observe()."""
    regs = dict(snap.regs)
    regs["rflags"] = snap.rflags
    arrays = {**observed_arrays(snap.tilecfg, snap.tiles), **observed_vectors(snap.vectors)}
    return {"regs": regs, "arrays": arrays,
            "raw": {"rip": snap.rip, "tilecfg": snap.tilecfg, "tiles": snap.tiles}}


class SiliconBackend(Backend):
    """This machine's CPU, through a ptrace-controlled child process."""

    name = "silicon"
    isa = "x86_amx"  # the ISA whose programs it runs
    timeout = 10.0

    def unavailable_reason(self, isa: str, program: Program | None = None) -> str | None:
        if isa != "x86_amx":
            return f"the silicon backend runs x86_amx only, not {isa}"
        problem = platform_problem()
        if problem:
            return problem
        if program is not None and uses_amx(program):
            return host_cpu().why_no_amx()
        return None

    def producer(self) -> str:
        """Which CPU ran the program: "silicon: emerald-rapids (family 6 model 207)" for a family and model
        isasim knows, "silicon: granite-rapids by its features (family 6 model 167, AMX-FP16 executes
        though CPUID hides it)" for one it names by what it measured (host_model), "silicon: unknown (...)"
        otherwise."""
        name, how = host_model()
        return f"silicon: {name or 'unknown'} {how}"

    def cpu_of_producer(self, producer: str) -> str | None:
        """The CPU model a silicon producer names by family and model (this backend's producer(), or
        the "family 6 model 207 (0xcf)" of the traces measured on Emerald Rapids), None if unknown.
        A producer that names its model only "by its features" names none here: features tell which
        instructions exist, not how the core sets the flags the SDM leaves undefined, and its family
        and model are a hypervisor's (so its undefined flags are not held against the model)."""
        found = re.search(r"\bfamily ([0-9]{1,9}) model ([0-9]{1,9})\b", producer) if producer.startswith("silicon: ") else None
        if found is None or int(found.group(1)) != 6:
            return None
        return CPU_NAMES.get(int(found.group(2)))

    def measured_elsewhere(self, producer: str, config: dict) -> bool | None:
        """Whether expectations from ``producer`` were measured on a CPU other than the one ``config``
        models (their undefined flags are then that CPU's choice); None if this backend did not write
        them.  A silicon producer whose CPU isasim does not model is elsewhere too."""
        if not producer.startswith("silicon: "):
            return None
        return self.cpu_of_producer(producer) != config.get("cpu")

    def _check(self, isa: str, config: dict, program: Program, init: Init, max_steps: int, *,
               honour_step_limit: bool = False) -> Fault | None:
        reason = self.unavailable_reason(isa, program)
        if reason:
            raise ConfigError(f"backend 'silicon' cannot run this program here: {reason}")
        tile_arrays = [name for name in init.arrays if not name.startswith("zmm")]
        if tile_arrays:
            # The child starts from the state its own code sets up; seeding tiles would need a prologue
            # of LDTILECFG and TILELOADDs that the program's instruction indices would have to skip.
            # (zmm registers it seeds through the XSAVE image: ChildProcess.set_vectors.)
            raise ConfigError("backend 'silicon' cannot seed init.arrays "
                              f"({', '.join(tile_arrays)}): load them with the program's own instructions")
        seeded_vectors(init)  # refused before anything runs if this core cannot hold them
        # Run the simulator first: the program must be one isasim validated, and a
        # fault it predicts must not land in the child's own memory.
        machine = Machine(isa, config)
        machine.load_init(program, init)
        try:
            return machine.run(max_steps).fault
        except StepLimitExceeded:
            # A free run on the CPU cannot count its instructions, so it honours the step limit
            # through the simulator's count: the same error the simulator gives, at once, instead
            # of running until the timeout.  Single-stepping counts on the CPU itself and stops at
            # the limit, and timing a repeated kernel checks only its first calls: both go on.
            if honour_step_limit:
                raise
            return machine.fault

    def _refuse_unsafe_fault(self, child: ChildProcess, sim_fault: Fault | None) -> None:
        if sim_fault is None or sim_fault.address is None:
            return
        page = sim_fault.address // PAGE * PAGE
        own = [(lo, hi) for lo, hi in child.mapped_pages() if lo <= page < hi]
        ours = any(a // PAGE * PAGE <= page < a + len(d) for a, d, _w in child.init.memory)
        if own and not ours:
            raise IsasimError(f"refusing to run on silicon: the program faults at {sim_fault.address:#x}, "
                              "which the backend's child process has mapped for its own use")

    def run(self, isa: str, config: dict, program: Program, init: Init, *,
            max_steps: int = DEFAULT_STEP_LIMIT, keep_records: bool = False) -> Outcome:
        sim_fault = self._check(isa, config, program, init, max_steps, honour_step_limit=True)
        child = ChildProcess(program, init, bool(host_cpu().amx_features), self.timeout)
        try:
            self._refuse_unsafe_fault(child, sim_fault)
            outcome, fault = child.resume(PTRACE_CONT)
            if outcome == "timeout":
                return Outcome({}, SiliconMemory(init.memory, {}), Fault(
                    "timeout", f"the program was still running after {self.timeout:g} s on silicon"), None,
                    timed_out=True)
            snap = child.snapshot()
            if fault is not None:
                fault.index = child.index_at(snap.rip)
                fault.pc = snap.rip
                fault.instruction = program.at(snap.rip).text if program.at(snap.rip) else None
            return Outcome(observed_state(snap), SiliconMemory(init.memory, snap.memory), fault, steps=None)
        finally:
            child.kill()

    def lockstep(self, isa: str, config: dict, program: Program, init: Init, *,
                 max_steps: int = DEFAULT_STEP_LIMIT):
        """Yield (index, pc, observed, memory, fault) after every instruction on silicon."""
        sim_fault = self._check(isa, config, program, init, max_steps)
        child = ChildProcess(program, init, bool(host_cpu().amx_features), self.timeout)
        try:
            self._refuse_unsafe_fault(child, sim_fault)
            for step in range(max_steps):
                rip = child.get_regs().rip
                ins = program.at(rip)
                if rip in child.stops:
                    if ins is not None:  # the RET itself: a step that changes nothing but ends the kernel
                        snap = child.snapshot()
                        yield step, rip, observed_state(snap), SiliconMemory(init.memory, snap.memory), None
                    return
                outcome, fault = child.resume(PTRACE_SINGLESTEP)
                if outcome == "timeout":
                    yield step, rip, {}, None, Fault("timeout", "a single step did not finish on silicon")
                    return
                snap = child.snapshot()
                if fault is not None:
                    fault.index, fault.pc = (ins.index if ins else None), rip
                    fault.instruction = ins.text if ins else None
                yield step, rip, observed_state(snap), SiliconMemory(init.memory, snap.memory), fault
                if fault is not None:
                    return
        finally:
            child.kill()


def time_on_silicon(program: Program, init: Init, *, timeout: float = 60.0, simulate_steps: int = 100_000) -> float:
    """Wall-clock seconds from resuming the child at the program's first instruction until it stops at
    the end: the program runs natively, so this is the silicon's time plus a fixed ptrace stop/wake cost
    (benchmarks cancel that by timing two repetition counts).  The program must end without a fault.
    The simulator checks its first ``simulate_steps`` instructions (a repeated kernel repeats the same
    accesses, so its first calls show what all of them touch)."""
    backend = SiliconBackend()
    fault = backend._check("x86_amx", {}, program, init, simulate_steps)
    if fault is not None:
        raise IsasimError(f"refusing to time a program that faults in the simulator: {fault.describe()}")
    child = ChildProcess(program, init, bool(host_cpu().amx_features), timeout)
    try:
        start = time.perf_counter()
        child._ptrace(PTRACE_CONT, None, None)
        _pid, status = os.waitpid(child.pid, 0)  # blocking: the end is seen at once
        elapsed = time.perf_counter() - start
        if not (os.WIFSTOPPED(status) and os.WSTOPSIG(status) == signal.SIGTRAP):
            raise IsasimError("silicon backend: the timed program did not end at its RET")
        return elapsed
    finally:
        child.kill()



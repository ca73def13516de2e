"""What this host can do: its CPU (family, model, CPUID flags), the XSAVE features the kernel lets a
process use, and CPUID leaves no file tells (the XSAVE component offsets).  Pure ctypes."""

from __future__ import annotations

import ctypes
import functools
import os
import sys
from dataclasses import dataclass

ARCH_GET_XCOMP_SUPP = 0x1021
SYS_ARCH_PRCTL = 158
XFEATURE_XTILECFG, XFEATURE_XTILEDATA = 17, 18
# cpuid_ebx's machine code (System V: leaf in edi, subleaf in esi, EBX returned in eax; RBX is
# callee-saved, so it is kept): push rbx; mov eax, edi; mov ecx, esi; cpuid; mov eax, ebx; pop rbx; ret
_CPUID_EBX_CODE = bytes.fromhex("53" "89f8" "89f1" "0fa2" "89d8" "5b" "c3")

# Family 6 models with AMX, for naming the producer of a trace.
# 174 (0xAE) is Granite Rapids-D, the Xeon 6 SoC with AMX-COMPLEX (Linux's INTEL_GRANITERAPIDS_D).
CPU_NAMES = {143: "sapphire-rapids", 207: "emerald-rapids", 173: "granite-rapids", 174: "granite-rapids-d"}

_libc = None


def libc():
    global _libc
    if _libc is None:
        _libc = ctypes.CDLL(None, use_errno=True)
        _libc.ptrace.restype = ctypes.c_long
        _libc.ptrace.argtypes = [ctypes.c_long, ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p]
        _libc.syscall.restype = ctypes.c_long
    return _libc


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
        names = {"amx_tile": "AMX-TILE", "amx_int8": "AMX-INT8", "amx_bf16": "AMX-BF16", "amx_fp16": "AMX-FP16",
                 "amx_complex": "AMX-COMPLEX", "amx_fp8": "AMX-FP8", "amx_tf32": "AMX-TF32", "amx_movrs": "AMX-MOVRS",
                 "amx_avx512": "AMX-AVX512"}  # (the extensions' names as /proc/cpuinfo would spell them)
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


def platform_problem() -> str | None:
    if not sys.platform.startswith("linux") or os.uname().machine != "x86_64":
        return f"the silicon backend needs x86-64 Linux (this is {sys.platform} {os.uname().machine})"
    return None


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

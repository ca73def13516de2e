"""What gdb sees of an arm_sme machine: the AArch64 target description of gdb's manual ("AArch64 Features").

gdb (14 and later) knows SME natively when the description has these features, in the order gdb's own
descriptions list them (binutils-gdb gdb/arch/aarch64.c):

    org.gnu.gdb.aarch64.core   x0-x30, sp, pc, cpsr
    org.gnu.gdb.aarch64.sve    z0-z31, fpsr, fpcr, p0-p15, ffr, vg
    org.gnu.gdb.aarch64.tls    tpidr, tpidr2
    org.gnu.gdb.aarch64.sme    svg, svcr, za
    org.gnu.gdb.aarch64.sme2   zt0

From these gdb derives its pseudo-registers itself: v0-v31, q/d/s/h/b0-31 from the Z registers (gdb refuses a
description with both the fpu and the sve feature: with sve, the V registers are the Z registers' low 128
bits), and the tiles za0b, za0h-za1h, za0s-za3s, za0d-za7d, za0q-za15q and their slices (za0hs0 ...) from za.

The Z and P registers are shown at the streaming vector length: isasim keeps them SVL-sized (with SVE listed
the non-streaming vector length equals the SVL too, see config.py), so vg = svg = SVL/64.

A value gdb writes goes through the state's journalled writes.  As Linux's ptrace does for ZA and ZT0 (its
NT_ARM_ZA/NT_ARM_ZT regsets, which gdb's own native target uses), writing a nonzero za or zt0 while PSTATE.ZA is
off turns ZA on first (zeroed), and a ZA that is off reads as zeros.  Writing svcr changes PSTATE.SM and
PSTATE.ZA as MSR SVCR does (with its zeroing).  The vector lengths (vg, svg) cannot be changed.
"""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np

from ..core.debug_target import SIGBUS, SIGILL, SIGSEGV, DebugFeature, DebugRegister, DebugTarget, little_endian
from . import faults
from .config import configure
from .semantics.builtins import ABORTED
from .semantics.modes import set_modes
from .state import SVCR_SM, SVCR_ZA, ZT0_BYTES

SIGABRT = 6  # gdb's remote signal number for abort() (the same as Linux's)

# The cpsr flags of gdb's aarch64-core.xml (name, first bit, last bit).  isasim keeps N Z C V only; the other
# fields read as zero (EL0, AArch64, nothing masked), as a user-mode process shows them.
CPSR_FIELDS = (("SP", 0, 0), ("EL", 2, 3), ("nRW", 4, 4), ("F", 6, 6), ("I", 7, 7), ("A", 8, 8), ("D", 9, 9),
               ("BTYPE", 10, 11), ("SSBS", 12, 12), ("IL", 20, 20), ("SS", 21, 21), ("PAN", 22, 22),
               ("UAO", 23, 23), ("DIT", 24, 24), ("TCO", 25, 25), ("V", 28, 28), ("C", 29, 29), ("Z", 30, 30),
               ("N", 31, 31))
# FPSR's and FPCR's fields, as gdb's aarch64-fpu.xml names them (the manual points the sve feature to them)
FPSR_FIELDS = (("IOC", 0, 0), ("DZC", 1, 1), ("OFC", 2, 2), ("UFC", 3, 3), ("IXC", 4, 4), ("IDC", 7, 7),
               ("QC", 27, 27), ("V", 28, 28), ("C", 29, 29), ("Z", 30, 30), ("N", 31, 31))
FPCR_FIELDS = (("FIZ", 0, 0), ("AH", 1, 1), ("NEP", 2, 2), ("IOE", 8, 8), ("DZE", 9, 9), ("OFE", 10, 10),
               ("UFE", 11, 11), ("IXE", 12, 12), ("IDE", 15, 15), ("FZ16", 19, 19), ("RMode", 22, 23),
               ("FZ", 24, 24), ("DN", 25, 25), ("AHP", 26, 26))
SVCR_FIELDS = (("SM", 0, 0), ("ZA", 1, 1))

# The element views of a Z register, gdb's "svev" union: (field, its union, [(member, element type, bits)])
Z_VIEWS = (("q", "svevnq", (("u", "uint128", 128), ("s", "int128", 128))),
           ("d", "svevnd", (("f", "ieee_double", 64), ("u", "uint64", 64), ("s", "int64", 64))),
           ("s", "svevns", (("f", "ieee_single", 32), ("u", "uint32", 32), ("s", "int32", 32))),
           ("h", "svevnh", (("f", "ieee_half", 16), ("u", "uint16", 16), ("s", "int16", 16))),
           ("b", "svevnb", (("u", "uint8", 8), ("s", "int8", 8))))


def debug_target(config: dict) -> DebugTarget:
    """The AArch64 description of an arm_sme machine of ``config`` (its SVL sizes z, p, ffr and za)."""
    svl = configure(config)["svl"]
    return DebugTarget(
        architecture="aarch64",
        features=(core_feature(), sve_feature(svl), tls_feature(), sme_feature(svl), sme2_feature()),
        signals={faults.UNDEFINED: SIGILL, faults.TRANSLATION: SIGSEGV, faults.ALIGNMENT: SIGBUS,
                 ABORTED: SIGABRT, "memory": SIGSEGV},  # "memory": the core's MemoryFault, should one escape
        osabi="GNU/Linux",
        pc_register="pc",
        code_registers=("x30",),  # the link register: BL leaves the return address there
    )


# ---- the features ------------------------------------------------------------------------------------------
def core_feature() -> DebugFeature:
    registers = [number_register(f"x{n}", 64, "int", x_reader(n), x_writer(n)) for n in range(31)]
    registers += [number_register("sp", 64, "data_ptr", lambda state: state.sp, lambda state, v: state.write_sp(v)),
                  number_register("pc", 64, "code_ptr", lambda state: state.pc, write_pc),
                  number_register("cpsr", 32, "cpsr_flags", lambda state: state.nzcv,
                                  lambda state, v: state.write_nzcv(v))]
    return DebugFeature("org.gnu.gdb.aarch64.core", tuple(registers), flags_xml("cpsr_flags", 4, CPSR_FIELDS))


def sve_feature(svl: int) -> DebugFeature:
    svlb = svl // 8
    registers = [DebugRegister(f"z{n}", svl, "svev", z_reader(n), z_writer(n)) for n in range(32)]
    registers += [system_register("fpsr", "fpsr_flags"), system_register("fpcr", "fpcr_flags")]
    registers += [DebugRegister(f"p{n}", svl // 8, "svep", p_reader(n), p_writer(n)) for n in range(16)]
    registers += [DebugRegister("ffr", svl // 8, "svep", lambda state: state.ffr.tobytes(),
                                lambda state, data: state.write_ffr(as_bytes(data))),
                  number_register("vg", 64, "int", lambda state: state.svl // 64)]
    types = [vector_xml(f"svev{view[0]}{member}", element, svl // bits)
             for view in Z_VIEWS for member, element, bits in view[2]]
    types += [union_xml(union, [(member, f"svev{field}{member}") for member, _, _ in members])
              for field, union, members in Z_VIEWS]
    types.append(union_xml("svev", [(field, union) for field, union, _ in Z_VIEWS]))
    types.append(vector_xml("svep", "uint8", svlb // 8))
    types += [flags_xml("fpsr_flags", 4, FPSR_FIELDS), flags_xml("fpcr_flags", 4, FPCR_FIELDS)]
    return DebugFeature("org.gnu.gdb.aarch64.sve", tuple(registers), "\n".join(types))


def tls_feature() -> DebugFeature:
    # TPIDR_EL0 (the thread pointer) isasim does not model: a program here has no threads, so it reads 0
    return DebugFeature("org.gnu.gdb.aarch64.tls", (
        number_register("tpidr", 64, "data_ptr", lambda state: 0),
        number_register("tpidr2", 64, "data_ptr", lambda state: state.tpidr2,
                        lambda state, v: state.write_tpidr2(v))))


def sme_feature(svl: int) -> DebugFeature:
    svlb = svl // 8
    types = "\n".join([flags_xml("svcr_flags", 8, SVCR_FIELDS), vector_xml("sme_bv", "uint8", svlb),
                       vector_xml("sme_bvv", "sme_bv", svlb)])
    return DebugFeature("org.gnu.gdb.aarch64.sme", (
        number_register("svg", 64, "int", lambda state: state.svl // 64),
        number_register("svcr", 64, "svcr_flags", lambda state: state.svcr, write_svcr),
        DebugRegister("za", svlb * svlb * 8, "sme_bvv", read_za, write_za)), types)


def sme2_feature() -> DebugFeature:
    zt0 = DebugRegister("zt0", ZT0_BYTES * 8, "sme2_bv", read_zt0, write_zt0)
    return DebugFeature("org.gnu.gdb.aarch64.sme2", (zt0,), vector_xml("sme2_bv", "uint8", ZT0_BYTES))


# ---- reading and writing the state ---------------------------------------------------------------------------
def number_register(name, bits, type_, value, write=None) -> DebugRegister:
    """A register holding a number: ``value(state)`` as little-endian bytes; ``write(state, int)`` if settable."""
    def read(state) -> bytes:
        return little_endian(value(state), bits)

    def write_bytes(state, data: bytes) -> None:
        write(state, int.from_bytes(data, "little"))

    return DebugRegister(name, bits, type_, read, write_bytes if write else None)


def system_register(name: str, type_: str) -> DebugRegister:
    return number_register(name, 32, type_, lambda state: state.system[name],
                           lambda state, v: state.write_system(name, v))


def x_reader(n):
    return lambda state: state.x[n]


def x_writer(n):
    return lambda state, value: state.write_x(n, value)


def z_reader(n):
    return lambda state: state.z[n].tobytes()


def z_writer(n):
    return lambda state, data: state.write_z(n, as_bytes(data))


def p_reader(n):
    return lambda state: state.p[n].tobytes()


def p_writer(n):
    return lambda state, data: state.write_p(n, as_bytes(data))


def as_bytes(data: bytes) -> np.ndarray:
    return np.frombuffer(bytes(data), dtype=np.uint8)


def write_pc(state, value: int) -> None:
    # the pc is a step's own field, not a journalled write (Machine sets it the same way between steps)
    state.pc = value


def write_svcr(state, value: int) -> None:
    """MSR SVCR: the SM and ZA bits, with the zeroing a change of either does; the other bits are RES0."""
    set_modes(SimpleNamespace(state=state), bool(value & SVCR_SM), bool(value & SVCR_ZA))


def enable_za_for(state, data: np.ndarray) -> bool:
    """Whether a debugger write of ``data`` to ZA or ZT0 is to be made: with ZA off, zeros change nothing (it
    reads as zeros already), and anything else turns ZA on (zeroed) first, as Linux's ptrace does."""
    if state.za_enabled:
        return True
    if not data.any():
        return False
    set_modes(SimpleNamespace(state=state), None, True)
    return True


def read_za(state) -> bytes:
    if not state.za_enabled:
        return bytes(state.svlb * state.svlb)
    return state.za.tobytes()


def write_za(state, data: bytes) -> None:
    rows = as_bytes(data).reshape(state.svlb, state.svlb)
    if not enable_za_for(state, rows):
        return
    for i in np.flatnonzero((rows != state.za).any(axis=1)):  # only the vectors that change are journalled
        state.write_za_vector(int(i), rows[i])


def read_zt0(state) -> bytes:
    return state.zt0.tobytes() if state.za_enabled else bytes(ZT0_BYTES)


def write_zt0(state, data: bytes) -> None:
    table = as_bytes(data)
    if enable_za_for(state, table):
        state.write_zt0(table)


# ---- the type definitions, as gdb-target.dtd spells them -------------------------------------------------------
def vector_xml(name: str, element: str, count: int) -> str:
    return f'<vector id="{name}" type="{element}" count="{count}"/>'


def union_xml(name: str, fields: list[tuple[str, str]]) -> str:
    inner = "".join(f'\n  <field name="{field}" type="{type_}"/>' for field, type_ in fields)
    return f'<union id="{name}">{inner}\n</union>'


def flags_xml(name: str, size: int, fields) -> str:
    inner = "".join(f'\n  <field name="{field}" start="{start}" end="{end}"/>' for field, start, end in fields)
    return f'<flags id="{name}" size="{size}">{inner}\n</flags>'

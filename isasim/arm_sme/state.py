"""The architectural state of an A64 core with SME2, at one streaming vector length (SVL).

Registers (numbers): X0-X30, SP, PC, NZCV, SVCR (PSTATE.SM in bit 0, PSTATE.ZA in bit 1,
as the SVCR system register shows them) and TPIDR2_EL0 (the thread register the SME ABI's lazy ZA
save points at its TPIDR2 block with; MRS/MSR TPIDR2_EL0, and the ABI routines, read and write it).  Arrays (bytes, little-endian element order):

    z0 ... z31   the scalable vectors, SVL bits each (the V/Q registers are their low 128 bits)
    p0 ... p15   the predicates, SVL/8 bits each (one bit per byte of a vector)
    ffr          the first-fault register, a predicate
    za           the ZA array: SVL/8 vectors of SVL bits ("ZA[i]" is row i of the array)
    zt0          the SME2 lookup table register, 512 bits at every SVL

Every write goes through a method here that records it in the journal with a structured
Location (``Location("za", 5)`` for ZA vector 5, ``Location("z3")`` for a whole Z register).
"""

from __future__ import annotations

import functools

from dataclasses import dataclass

import numpy as np

from ..core.errors import IsasimError
from ..core.journal import Journal, Location

ZT0_BYTES = 64
X_COUNT = 31
MASK64 = (1 << 64) - 1
SVCR_SM, SVCR_ZA = 1, 2  # PSTATE.SM and PSTATE.ZA as bits of SVCR

X_NAMES = tuple(f"x{n}" for n in range(X_COUNT))
REGISTER_NAMES = X_NAMES + ("sp", "nzcv", "svcr", "tpidr2_el0", "pc")
Z_NAMES = tuple(f"z{n}" for n in range(32))
P_NAMES = tuple(f"p{n}" for n in range(16))

# journal locations made once (a Location is the text a trace stores in steps[].writes[].where)
X_LOCATIONS = tuple(Location(name) for name in X_NAMES)
SP, NZCV, SVCR, TPIDR2 = Location("sp"), Location("nzcv"), Location("svcr"), Location("tpidr2_el0")
# FPCR and FPSR (MRS/MSR), readable and writable by name (init.regs, read_register) but not in REGISTER_NAMES: the
# QEMU harness does not observe them
SYSTEM_REGISTERS = ("fpcr", "fpsr")
SYSTEM_LOCATIONS = {name: Location(name) for name in SYSTEM_REGISTERS}
# the bits of FPCR and FPSR that hold what is written (the others are RES0): FPCR AHP DN FZ RMode Stride FZ16 Len
# EBF NEP AH FIZ, FPSR N Z C V QC IDC IXC UFC OFC DZC IOC, as QEMU's -cpu max keeps them
FPCR_MASK, FPSR_MASK = 0x07FF2007, 0xF800009F
Z_LOCATIONS = tuple(Location(name) for name in Z_NAMES)
P_LOCATIONS = tuple(Location(name) for name in P_NAMES)
FFR, ZT0 = Location("ffr"), Location("zt0")


@functools.cache
def za_locations(rows: int) -> tuple[Location, ...]:
    """ZA's vectors as journal locations, made once per SVL (every new state asks: a fuzz case makes one)."""
    return tuple(Location("za", i) for i in range(rows))


@dataclass(frozen=True)
class ZaTurnedOff:
    """ZA and ZT0 as an instruction that turned ZA off (SMSTOP, SMSTOP ZA) found them, and its address."""

    at: int
    za: np.ndarray
    zt0: np.ndarray


class ArmSmeState:
    def __init__(self, journal: Journal, config: dict):
        self.journal = journal
        self.config = config
        self.svl = config["svl"]
        self.features = frozenset(config["features"])
        self.svlb = self.svl // 8  # bytes in a vector, and vectors in ZA
        self.x = [0] * X_COUNT
        self.sp = 0
        self.pc = 0
        self.nzcv = 0  # N Z C V in bits 31:28, as MRS NZCV reads them
        self.sm = False  # PSTATE.SM: streaming mode
        self.za_enabled = False  # PSTATE.ZA: ZA (and ZT0) accessible
        self.system = dict.fromkeys(SYSTEM_REGISTERS, 0)  # FPCR, FPSR
        # BL/BLR not yet returned from (not architectural): a RET with none pending returns to the caller outside
        # the program, and the run ends there
        self.call_depth = 0
        self.tpidr2 = 0  # TPIDR2_EL0: 0, or the address of the TPIDR2 block of a pending lazy ZA save
        self.z = np.zeros((32, self.svlb), dtype=np.uint8)
        self.p = np.zeros((16, self.svlb // 8), dtype=np.uint8)
        self.ffr = np.zeros(self.svlb // 8, dtype=np.uint8)
        self.za = np.zeros((self.svlb, self.svlb), dtype=np.uint8)
        self.zt0 = np.zeros(ZT0_BYTES, dtype=np.uint8)
        self.za_locations = za_locations(self.svlb)
        # What ZA and ZT0 held when ZA last went off, kept for the views only: not architectural (no backend
        # observes it, no trace holds it), so that after a kernel's closing SMSTOP `run --show za` can still
        # show what the kernel left there instead of the zeros a ZA that is off reads as.
        self.za_turned_off: ZaTurnedOff | None = None

    # ---- what the core asks for (isasim.core.isa.State) ------------------------------------
    def register_names(self) -> list[str]:
        return list(REGISTER_NAMES)

    def read_register(self, name: str) -> int:
        name = name.lower()
        if name in X_NAMES:
            return self.x[X_NAMES.index(name)]
        if name == "sp":
            return self.sp
        if name == "pc":
            return self.pc
        if name == "nzcv":
            return self.nzcv
        if name == "svcr":
            return self.svcr
        if name == "tpidr2_el0":
            return self.tpidr2
        if name in SYSTEM_REGISTERS:
            return self.system[name]
        raise IsasimError(f"unknown register '{name}' (arm_sme has x0-x30, sp, nzcv, svcr, tpidr2_el0 and pc)")

    def write_register(self, name: str, value: int) -> None:
        name = name.lower()
        if name in X_NAMES:
            self.write_x(X_NAMES.index(name), value)
        elif name == "sp":
            self.write_sp(value)
        elif name == "nzcv":
            self.write_nzcv(value)
        elif name == "svcr":  # a trace's starting modes: set as they are, without the zeroing SMSTART does
            self.set_modes(bool(value & SVCR_SM), bool(value & SVCR_ZA))
        elif name == "tpidr2_el0":
            self.write_tpidr2(value)
        elif name in SYSTEM_REGISTERS:
            self.write_system(name, value)
        elif name == "pc":
            raise IsasimError("pc is set by the program's start, not by init.regs")
        else:
            self.read_register(name)  # raises, naming the registers there are

    # ---- registers ---------------------------------------------------------------------------
    @property
    def svcr(self) -> int:
        return (SVCR_SM if self.sm else 0) | (SVCR_ZA if self.za_enabled else 0)

    def write_x(self, n: int, value: int) -> None:
        """X[n] = value (64 bits).  n = 31 is XZR here: writes to it are discarded."""
        if n == 31:
            return
        old, new = self.x[n], value & MASK64
        self.x[n] = new
        self.journal.record("reg", X_LOCATIONS[n], old, new)

    def write_sp(self, value: int) -> None:
        old, self.sp = self.sp, value & MASK64
        self.journal.record("reg", SP, old, self.sp)

    def write_nzcv(self, value: int) -> None:
        old, self.nzcv = self.nzcv, value & 0xF0000000
        self.journal.record("reg", NZCV, old, self.nzcv)

    def write_tpidr2(self, value: int) -> None:
        """TPIDR2_EL0 = value (64 bits): MSR TPIDR2_EL0, and the SME ABI routines."""
        old, self.tpidr2 = self.tpidr2, value & MASK64
        self.journal.record("reg", TPIDR2, old, self.tpidr2)

    def write_system(self, name: str, value: int) -> None:
        """FPCR or FPSR = value, their RES0 bits kept zero."""
        value &= FPCR_MASK if name == "fpcr" else FPSR_MASK
        old, self.system[name] = self.system[name], value
        self.journal.record("reg", SYSTEM_LOCATIONS[name], old, value)

    def set_modes(self, sm: bool, za: bool) -> None:
        """PSTATE.SM and PSTATE.ZA, nothing else (the zeroing rules are SMSTART's and SMSTOP's)."""
        old = self.svcr
        self.sm, self.za_enabled = sm, za
        self.journal.record("reg", SVCR, old, self.svcr)

    # ---- vectors and arrays --------------------------------------------------------------------
    def write_z(self, n: int, data: np.ndarray) -> None:
        if not self.journal.enabled:  # a run without records: no old and new bytes to keep
            self.z[n] = data
            return
        old = self.z[n].tobytes()
        self.z[n] = data
        self.journal.record("array", Z_LOCATIONS[n], old, self.z[n].tobytes())

    def write_p(self, n: int, data: np.ndarray) -> None:
        if not self.journal.enabled:
            self.p[n] = data
            return
        old = self.p[n].tobytes()
        self.p[n] = data
        self.journal.record("array", P_LOCATIONS[n], old, self.p[n].tobytes())

    def write_ffr(self, data: np.ndarray) -> None:
        old = self.ffr.tobytes()
        self.ffr[:] = data
        self.journal.record("array", FFR, old, self.ffr.tobytes())

    def write_za_vector(self, i: int, data: np.ndarray) -> None:
        """ZA[i] = data: one SVL-bit vector of the array."""
        if not self.journal.enabled:  # a run without records: no old and new bytes to keep
            self.za[i] = data
            return
        old = self.za[i].tobytes()
        self.za[i] = data
        self.journal.record("array", self.za_locations[i], old, self.za[i].tobytes())

    def write_za_vectors(self, rows: list[int], data: np.ndarray) -> None:
        """ZA[rows[k]] = data[k] for every k (a vector group: evenly spaced rows), journalled per vector."""
        if not self.journal.enabled:
            stride = rows[1] - rows[0] if len(rows) > 1 else 1
            self.za[rows[0]:rows[0] + stride * len(rows):stride] = data
            return
        for row, vector in zip(rows, data):
            self.write_za_vector(row, vector)

    def write_zt0(self, data: np.ndarray) -> None:
        old = self.zt0.tobytes()
        self.zt0[:] = data
        self.journal.record("array", ZT0, old, self.zt0.tobytes())

    def zero_vectors(self) -> None:
        """What a change of PSTATE.SM does: Z0-Z31, P0-P15 and FFR become zero."""
        for n in range(32):
            if self.z[n].any():
                self.write_z(n, 0)
        for n in range(16):
            if self.p[n].any():
                self.write_p(n, 0)
        if self.ffr.any():
            self.write_ffr(np.zeros_like(self.ffr))

    def zero_za(self) -> None:
        """What enabling ZA does (and ZERO {za}): every vector of ZA becomes zero."""
        for i in np.flatnonzero(self.za.any(axis=1)):
            self.write_za_vector(int(i), 0)

    # ---- arrays as traces hold them ---------------------------------------------------------------
    def array_sizes(self) -> dict[str, int]:
        sizes = {name: self.svlb for name in Z_NAMES}
        sizes.update({name: self.svlb // 8 for name in P_NAMES})
        sizes.update({"ffr": self.svlb // 8, "za": self.svlb * self.svlb, "zt0": ZT0_BYTES})
        return sizes

    def array_bytes(self, name: str) -> bytes:
        if name == "za":
            return self.za.tobytes()
        if name == "zt0":
            return self.zt0.tobytes()
        if name == "ffr":
            return self.ffr.tobytes()
        if name in Z_NAMES:
            return self.z[Z_NAMES.index(name)].tobytes()
        return self.p[P_NAMES.index(name)].tobytes()

    def set_array(self, name: str, data: bytes) -> None:
        values = np.frombuffer(data, dtype=np.uint8)
        if name == "za" and not self.journal.enabled:  # loading an initial state: one copy
            self.za[...] = values.reshape(self.svlb, self.svlb)
        elif name == "za":
            for i, row in enumerate(values.reshape(self.svlb, self.svlb)):
                self.write_za_vector(i, row)
        elif name == "zt0":
            self.write_zt0(values)
        elif name == "ffr":
            self.write_ffr(values)
        elif name in Z_NAMES:
            self.write_z(Z_NAMES.index(name), values)
        else:
            self.write_p(P_NAMES.index(name), values)

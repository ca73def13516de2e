"""What a semantics function sees: the state, memory and configuration, in the Arm ARM's words.

``X(n)``/``set_X(n, v)``, ``Z(n)``, ``ZAvector(i)``, and the checks the ASL starts with
(``CheckStreamingSVEAndZAEnabled``...), which raise the UNDEFINED fault an SME instruction
takes with its mode off.
"""

from __future__ import annotations

import numpy as np

from ..core.faults import Fault, MemoryFault
from .faults import translation, undefined
from .semantics import za_tiles
from .state import MASK64, ArmSmeState

# What a semantics function returns to end the program (RET: isasim runs one function, as a test harness
# calls it); otherwise None (the next instruction) or a branch offset from the instruction's address.
END = object()


def group_slice(rows: list[int]) -> slice:
    """The rows of a vector group (vec, vec + vstride, ...) as a slice: a view of ZA, not a copy."""
    stride = rows[1] - rows[0] if len(rows) > 1 else 1
    return slice(rows[0], rows[0] + stride * len(rows), stride)


class SmeContext:
    def __init__(self, state: ArmSmeState, memory):
        self.state, self.memory = state, memory
        self.svl = state.svl
        self.svlb = state.svlb
        # esize -> the predicate bits that govern its elements (each element's lowest bit), as one integer
        self._element_bits = {esize: sum(1 << bit for bit in range(0, self.svlb, esize // 8))
                              for esize in (8, 16, 32, 64, 128)}

    # ---- the ASL's checks ----------------------------------------------------------------------
    def CheckStreamingSVEAndZAEnabled(self) -> None:
        if not self.state.sm:
            raise undefined("PSTATE.SM is 0: this instruction needs streaming mode (SMSTART or SMSTART SM)")
        if not self.state.za_enabled:
            raise undefined("PSTATE.ZA is 0: this instruction needs ZA enabled (SMSTART or SMSTART ZA)")

    def CheckStreamingSVEEnabled(self) -> None:
        """An instruction legal in streaming mode only: UNDEFINED while PSTATE.SM is 0."""
        if not self.state.sm:
            raise undefined("PSTATE.SM is 0: this instruction needs streaming mode (SMSTART or SMSTART SM)")

    def CheckSVEEnabled(self) -> None:
        """What an SVE instruction (PTRUE, WHILELT, CNTB, ADDVL, LD1W...) checks first.  The ASL:

            if HaveSME() && PSTATE.SM == '1' then CheckStreamingSVEEnabled();
            elsif HaveSME() && !HaveSVE() then UNDEFINED;
            else CheckNonStreamingSVEEnabled();

        isasim's default core has SME without FEAT_SVE, so outside streaming mode these are
        UNDEFINED; a configuration listing "SVE" has FEAT_SVE and runs them there too."""
        if not self.state.sm and "SVE" not in self.state.features:
            raise undefined("PSTATE.SM is 0: an SVE instruction needs streaming mode (SMSTART or SMSTART SM) on a core"
                            " without FEAT_SVE (add \"SVE\" to the config's features to model one with it)")

    def CheckSMEAndZAEnabled(self) -> None:
        if not self.state.za_enabled:
            raise undefined("PSTATE.ZA is 0: this instruction needs ZA enabled (SMSTART or SMSTART ZA)")

    def feature_missing(self, feature: str) -> Fault:
        """The UNDEFINED fault of an instruction whose feature the configuration lacks."""
        return undefined(f"FEAT_{feature} is not implemented (the configuration's features: "
                         f"{', '.join(sorted(self.state.features)) or 'none'})")

    # ---- general-purpose registers ------------------------------------------------------------------
    def X(self, n: int) -> int:
        """X[n]; n = 31 reads as zero (XZR)."""
        return 0 if n == 31 else self.state.x[n]

    def set_X(self, n: int, value: int) -> None:
        self.state.write_x(n, value)

    def XSP(self, n: int) -> int:
        """X[n] where register 31 is SP (base registers, ADD/SUB immediate)."""
        return self.state.sp if n == 31 else self.state.x[n]

    def set_XSP(self, n: int, value: int) -> None:
        if n == 31:
            self.state.write_sp(value)
        else:
            self.state.write_x(n, value)

    def set_NZCV(self, n: int, z: int, c: int, v: int) -> None:
        self.state.write_nzcv((n << 31) | (z << 30) | (c << 29) | (v << 28))

    # ---- vectors -----------------------------------------------------------------------------------
    def Z(self, n: int) -> np.ndarray:
        return self.state.z[n % 32]

    def Zs(self, n: int, count: int) -> np.ndarray:
        """Z[n], Z[n+1], ... Z[n+count-1], wrapping mod 32, as one (count, SVL/8) array (a multi-vector
        operand such as {z30.h-z1.h}); a view of the registers when the list does not wrap."""
        if n + count <= 32:
            return self.state.z[n:n + count]
        return self.state.z[[(n + i) % 32 for i in range(count)]]

    def set_Z(self, n: int, data: np.ndarray) -> None:
        self.state.write_z(n % 32, data)

    @property
    def VL(self) -> int:
        """CurrentVL in bits: the SVL in streaming mode.  Outside it (reachable only with the "SVE"
        feature) the non-streaming vector length, which isasim makes equal to the SVL: one length per
        configuration, so Z and P have one size whatever the mode (the qemu oracle is told the same)."""
        return self.svl

    def P(self, n: int) -> np.ndarray:
        """P[n] as one bool per vector byte (bit i of the predicate governs byte i)."""
        return np.unpackbits(self.state.p[n], bitorder="little").astype(bool)

    def set_P(self, n: int, bits: np.ndarray) -> None:
        """P[n] = bits (one bool per vector byte)."""
        self.state.write_p(n, np.packbits(np.asarray(bits, dtype=bool), bitorder="little"))

    def set_P_elements(self, n: int, active: np.ndarray, esize: int) -> None:
        """P[n] with element e of esize bits active where active[e]: its lowest bit set, the others clear."""
        bits = np.zeros(self.svlb, dtype=bool)
        bits[::esize // 8] = active
        self.set_P(n, bits)

    def ActiveElements(self, g: int, esize: int) -> np.ndarray:
        """ActivePredicateElement(P[g], e, esize) for every element e: the element's lowest predicate bit."""
        return self.P(g)[::esize // 8]

    def AllElementsActive(self, g: int, esize: int) -> bool:
        """Whether ActivePredicateElement(P[g], e, esize) holds for every element e (the whole-vector
        case of a loop over the elements, which an instruction can then do in one go)."""
        bits = self._element_bits[esize]
        return int.from_bytes(self.state.p[g].tobytes(), "little") & bits == bits

    def ZAslice(self, tile: int, esize: int, vertical: bool, index: int) -> np.ndarray:
        return za_tiles.read_slice(self.state.za, tile, esize, vertical, index)

    def set_ZAslice(self, tile: int, esize: int, vertical: bool, index: int, data: np.ndarray) -> None:
        """ZAslice[tile, esize, vertical, index] = data, journalled as the ZA vectors it changes."""
        for row, start, stop, element in za_tiles.slice_rows(tile, esize, vertical, index, self.svlb):
            eb = esize // 8
            part = data[element * eb:element * eb + (stop - start)]
            if not np.array_equal(self.state.za[row, start:stop], part):
                vector = self.state.za[row].copy()
                vector[start:stop] = part
                self.state.write_za_vector(row, vector)

    def ZAvector(self, i: int) -> np.ndarray:
        return self.state.za[i]

    def set_ZAvector(self, i: int, data: np.ndarray) -> None:
        self.state.write_za_vector(i, data)

    def ZAvectors(self, rows: list[int]) -> np.ndarray:
        """ZAvector[row] for each of ``rows`` (a vector group: evenly spaced rows), as one
        (len(rows), SVL/8) array, a read-only view."""
        view = self.state.za[group_slice(rows)]
        view.flags.writeable = False  # written only through set_ZAvectors, which journals
        return view

    def set_ZAvectors(self, rows: list[int], data: np.ndarray) -> None:
        """ZAvector[rows[k]] = data[k] for every k: a whole vector group in one write."""
        self.state.write_za_vectors(rows, data)

    # ---- memory --------------------------------------------------------------------------------------
    def read_memory(self, address: int, size: int) -> bytes:
        try:
            return self.memory.read(address & MASK64, size)
        except MemoryFault as fault:
            raise translation(fault) from None

    def check_write(self, address: int, size: int) -> None:
        """The translation fault a write of ``size`` bytes at ``address`` would take, writing nothing."""
        try:
            self.memory.check(address & MASK64, size, "write")
        except MemoryFault as fault:
            raise translation(fault) from None

    def write_memory(self, address: int, data: bytes) -> None:
        try:
            self.memory.write(address & MASK64, data)
        except MemoryFault as fault:
            raise translation(fault) from None

"""The SME mode and ZA instructions: SMSTART/SMSTOP (MSR SVCR*) and ZERO {mask}.

The zeroing rules are the Arm ARM's (D1.3 "PSTATE.SM and PSTATE.ZA", MSR SVCRSM/SVCRZA/
SVCRSMZA): a change of PSTATE.SM zeroes Z0-Z31, P0-P15 and FFR and keeps ZA; enabling ZA
zeroes ZA and ZT0 (and disabling it makes them inaccessible: isasim zeroes them then, see
set_modes); writing the value a bit already has changes nothing.
"""

from __future__ import annotations

import numpy as np

from ..state import ZaTurnedOff


def set_modes(cpu, sm: bool | None, za: bool | None) -> None:
    """MSR SVCR{SM,ZA,SMZA}, #imm: sm / za are the new values, None where the form leaves the bit alone."""
    state = cpu.state
    new_sm = state.sm if sm is None else sm
    new_za = state.za_enabled if za is None else za
    if new_sm != state.sm:
        state.zero_vectors()  # ResetSVEState(): the vector state of the old mode is lost
    if new_za != state.za_enabled:
        # Enabling ZA is ResetSMEState(): ZA and ZT0 start as zero.  Disabling it leaves their
        # contents inaccessible, and nothing can read them again without enabling ZA, which zeroes
        # them: isasim zeroes them as ZA goes off, so that a ZA that is off always reads as zero
        # (in the stepper, in a trace, and as any harness that must re-enable ZA to dump it sees it).
        # The views still show what was there: state.za_turned_off keeps it (not architectural).
        state.za_turned_off = None if new_za else ZaTurnedOff(state.pc, state.za.copy(), state.zt0.copy())
        state.zero_za()
        if state.zt0.any():
            state.write_zt0(np.zeros_like(state.zt0))
    if (new_sm, new_za) != (state.sm, state.za_enabled):
        state.set_modes(new_sm, new_za)


def zero_tiles(cpu, mask: int) -> None:
    """ZERO {mask}: zero each 64-bit tile ZAt.D whose bit t of mask is set; ZAt.D is the ZA vectors
    t, t+8, t+16, ... (so {za} is every vector)."""
    cpu.CheckSMEAndZAEnabled()
    for row in range(cpu.svlb):
        if mask >> (row % 8) & 1 and cpu.ZAvector(row).any():
            cpu.set_ZAvector(row, np.zeros(cpu.svlb, dtype=np.uint8))

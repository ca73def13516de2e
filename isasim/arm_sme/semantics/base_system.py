"""The A64 system instructions a compiled SME function holds, as the Arm ARM's ASL writes them: MRS and MSR
of NZCV, FPCR, FPSR, TPIDR2_EL0 and SVCR, and the hints (NOP; the pointer-authentication and BTI hints).

The hints.  isasim models a core without FEAT_PAuth and FEAT_BTI: the Arm ARM allocates PACIASP, AUTIASP,
BTI and their kin in the HINT space so that a core without the feature executes them as NOP (C6.2 HINT:
"the instruction ... behaves as a NOP" where the feature is not implemented), which is what isasim does; the
code clang emits with -mbranch-protection then runs as on such a core.  QEMU's -cpu max implements PAuth:
between PACIASP and AUTIASP, X30 holds a signed address there and the plain one here (the same again after
AUTIASP), so a lockstep comparison sees X30 differ on those steps only.
"""

from __future__ import annotations

from ..faults import undefined
from .modes import set_modes


def mrs(cpu, t, register):
    """X[t, 64] = <system register>;    // NZCV: PSTATE.<N,Z,C,V> in bits 31:28; SVCR: PSTATE.ZA:PSTATE.SM"""
    cpu.set_X(t, cpu.state.read_register(register))


def msr(cpu, register, t):
    """<system register> = X[t, 64];    // NZCV: PSTATE.<N,Z,C,V> = X[t]<31:28>; FPCR, FPSR: RES0 bits ignored
// SVCR: PSTATE.SM = X[t]<0>, PSTATE.ZA = X[t]<1>, each change with SMSTART's and SMSTOP's zeroing"""
    value = cpu.X(t)
    if register == "svcr":
        set_modes(cpu, sm=bool(value & 1), za=bool(value & 2))
    else:
        cpu.state.write_register(register, value)


def privileged(cpu, *operands):
    """// MRS, MSR of a register of EL1 or above (SMCR_ELx, SMPRI_EL1, SMIDR_EL1, ID_AA64SMFR0_EL1, MPAMSM_EL1):
// isasim runs at EL0, where the access is UNDEFINED (an operating system may trap and emulate it)
UNDEFINED;"""
    raise undefined("this system register belongs to EL1 or above; isasim runs code at EL0, where MRS/MSR of it "
                    "is UNDEFINED")


def hint(cpu, *operands):
    """// a hint this core does not implement (PACIASP, AUTIASP, BTI ...): executes as NOP"""

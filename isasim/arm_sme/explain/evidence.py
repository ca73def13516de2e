"""What each arm_sme form is held to outside isasim, as the reference index lists it.

Every form's encoding is checked against clang's assembler (LLVM 22, zig's) over random operands
(tests/arm_sme/test_encoding_vs_clang.py) and, where LLVM's MC tests have the form, against their lines
(tests/arm_sme/test_llvm_mc_checklist.py).  Every form's execution is compared with QEMU's (>= 10.1, -cpu max) in a
test that runs that form (tests/arm_sme/semantics/*_vs_qemu.py, test_infrastructure_vs_qemu.py,
test_advsimd.py) but those listed here, each with the reason; tests/arm_sme/test_evidence.py holds the claim to
those tests' own selections, so a form claimed here is one they run.
"""

from __future__ import annotations

_PRIVILEGED = "QEMU user mode runs EL0, where it is UNDEFINED"
_BRANCH = "QEMU only inside compiled code and random programs (no per-form case)"

NOT_RUN_ON_QEMU = {
    "UDF": "the fault itself: tests/arm_sme/semantics check its SIGILL index",
    "NOP": "nothing to compare",
    **{name: _BRANCH for name in ("B_cond", "CBZ_32", "CBNZ_32", "CBZ_64", "CBNZ_64", "TBZ", "TBNZ")},
    **{name: "QEMU only inside compiled code (a literal sits in the code it reads)"
       for name in ("LDR_32_lit", "LDR_64_lit", "LDRSW_64_lit", "LDR_S_lit", "LDR_D_lit", "LDR_Q_lit")},
    **{f"{op}_{register}": _PRIVILEGED for op in ("MRS", "MSR")
       for register in ("SMCR_EL1", "SMCR_EL2", "SMCR_EL3", "SMCR_EL12", "SMPRI_EL1", "SMPRIMAP_EL2", "MPAMSM_EL1")},
    "MRS_ID_AA64SMFR0_EL1": _PRIVILEGED, "MRS_SMIDR_EL1": _PRIVILEGED,
    **{f"{m}_x{n}_{kind}_h": "QEMU 11.1 lacks FEAT_SVE_BFSCALE: hand-worked values from the Arm rules"
       for m in ("BFMUL", "BFSCALE") for n in (2, 4) for kind in ("single", "multi")},
}


def evidence(form) -> str:
    """The oracles of ``form`` in a few words: the index's evidence column."""
    reason = NOT_RUN_ON_QEMU.get(form.id)
    return "clang" + (f"; {reason}" if reason else ", QEMU")

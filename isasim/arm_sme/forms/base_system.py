"""The A64 system forms a compiled SME function holds: NOP, the pointer-authentication and BTI hints (PACIASP,
AUTIASP, BTI c ... printed as ``hint #n``, as llvm prints them without FEAT_PAuth and FEAT_BTI in its
features; isasim runs them as NOP: see semantics/base_system.py), and MRS/MSR of NZCV, FPCR, FPSR,
TPIDR2_EL0 and SVCR (one form each: its op0:op1:CRn:CRm:op2 fixed)."""

from __future__ import annotations

from dataclasses import replace

from ..operands import Imm
from ..operands.base import SysRegName
from ..semantics import base_system as semantics
from .base import Alias, add
from .scalar import R, _form

GROUP = "system"

add(_form("NOP", "nop", "NOP", "no operation", "11010101 00000011 0010 0000 000 11111", (), semantics.hint,
          group="scalar"))

# HINT #24-#31 (CRm = 0011) and #32-#39 (CRm = 0100): the pointer-authentication hints of the stack pointer
# and X30 (PACIAZ PACIASP PACIBZ PACIBSP AUTIAZ AUTIASP AUTIBZ AUTIBSP) and BTI (op2 even: bti, bti c, bti j,
# bti jc); the assembler also takes their names
_PAC = ("paciaz", "paciasp", "pacibz", "pacibsp", "autiaz", "autiasp", "autibz", "autibsp")
_BTI_TARGETS = ("", "c", "j", "jc")  # op2 = 2 * the index


class _BtiTargets:
    """BTI's optional ``c``, ``j`` or ``jc`` (the branches it lets in), as op2 = 0, 2, 4, 6."""

    kind = "bti_target"
    default = ""

    def parse(self, text):
        from ..operands.common import _shape

        name = text.strip().lower()
        if name not in _BTI_TARGETS:
            raise _shape(f"'{text.strip()[:40]}' is not a BTI target (c, j or jc)")
        return {"op2": 2 * _BTI_TARGETS.index(name)}

    def text(self, fields):
        return _BTI_TARGETS[fields["op2"] // 2]

    def value(self, fields):
        return fields["op2"]


def _named(names: dict) -> tuple:
    return tuple(Alias(name, (), lambda f: False, {"op2": op2}, accepts=lambda f: True) for name, op2 in names.items())


_BTI = (Alias("bti", (_BtiTargets(),), lambda f: False, accepts=lambda f: True),)


class _HintNumber(Imm):
    """``#<imm>`` of HINT, CRm:op2, of which this form fixes CRm (``base``: CRm << 3)."""

    def __init__(self, base):
        super().__init__("op2", 3)
        object.__setattr__(self, "base", base)

    def parse(self, text):
        from ..operands.common import _shape, parse_int

        value = parse_int(text)
        if value is None or not self.base <= value < self.base + 8:
            raise _shape(f"'{text.strip()[:40]}' is not one of this hint form's numbers")
        return {"op2": value - self.base}

    def text(self, fields):
        return f"#{self.base + fields['op2']}"

    def value(self, fields):
        return self.base + fields["op2"]


for _id, _crm, _names, _what in (
        ("HINT_PAC", "0011", {name: op2 for op2, name in enumerate(_PAC)},
         "PACIASP, AUTIASP and the other pointer-authentication hints of X30: NOP on a core without FEAT_PAuth"),
        ("HINT_BTI", "0100", None, "BTI {c, j, jc}: NOP on a core without FEAT_BTI")):
    add(_form(_id, "hint", "HINT #<imm>", _what, f"11010101 00000011 0010 {_crm} op2:3 11111",
              (_HintNumber(int(_crm, 2) << 3),), semantics.hint, group=GROUP,
              aliases=_named(_names) if _names else _BTI, **({"not_fuzzed": "QEMU signs X30"} if _names else {})))

# ---- MRS, MSR -------------------------------------------------------------------------------------------------
# (name, o0 op1 CRn CRm op2 as the encoding's bits 19-5, the feature)
_SYSTEM_REGISTERS = (("NZCV", "1 011 0100 0010 000", "A64"), ("FPCR", "1 011 0100 0100 000", "A64"),
                     ("FPSR", "1 011 0100 0100 001", "A64"), ("TPIDR2_EL0", "1 011 1101 0000 101", "SME"),
                     ("SVCR", "1 011 0100 0010 010", "SME"))

def _fuzzing(load: str, sysreg: str) -> dict:
    """Why the fuzzer leaves a form out, if it does: an MSR's value outlives its case in QEMU's process (one runs
    many), and FPSR gathers the cumulative exception bits of every earlier case's FP instructions there, which
    isasim's FP forms do not set."""
    if sysreg == "FPSR":
        return {"not_fuzzed": "FPSR's cumulative bits come from earlier cases in QEMU's process"}
    if load == "0" and sysreg != "NZCV":
        return {"not_fuzzed": "the value outlives the case in QEMU's process"}
    return {}


for _sysreg, _bits, _feature in _SYSTEM_REGISTERS:
    for _name, _l in (("MRS", "1"), ("MSR", "0")):
        _operands = (R("Rt", 64), SysRegName(_sysreg)) if _l == "1" else (SysRegName(_sysreg), R("Rt", 64))
        _what = f"{'read' if _l == '1' else 'write'} {_sysreg}" + (
            " (PSTATE.SM in bit 0, PSTATE.ZA in bit 1; a change zeroes as SMSTART/SMSTOP do)"
            if _sysreg == "SVCR" and _l == "0" else "")
        add(replace(_form(f"{_name}_{_sysreg}", _name.lower(),
                          f"{_name} <Xt>, {_sysreg}" if _l == "1" else f"{_name} {_sysreg}, <Xt>", _what,
                          f"1101010100 {_l} 1 {_bits} Rt:5", _operands, semantics.mrs if _l == "1" else semantics.msr,
                          group=GROUP, **_fuzzing(_l, _sysreg)),
                    feature=_feature))

# SME's registers of EL1 and above, and MPAM's MPAMSM_EL1 (name, o0 op1 CRn CRm op2, writable): isasim runs code
# at EL0, where MRS and MSR of them are UNDEFINED (issue 29; QEMU's linux-user agrees but for ID_AA64SMFR0_EL1,
# whose read it answers as Linux does, emulating the trap)
_PRIVILEGED = (("ID_AA64SMFR0_EL1", "1 000 0000 0100 101", False), ("SMIDR_EL1", "1 001 0000 0000 110", False),
               ("SMCR_EL1", "1 000 0001 0010 110", True), ("SMCR_EL2", "1 100 0001 0010 110", True),
               ("SMCR_EL3", "1 110 0001 0010 110", True), ("SMCR_EL12", "1 101 0001 0010 110", True),
               ("SMPRI_EL1", "1 000 0001 0010 100", True), ("SMPRIMAP_EL2", "1 100 0001 0010 101", True),
               ("MPAMSM_EL1", "1 000 1010 0101 011", True))
for _sysreg, _bits, _writable in _PRIVILEGED:
    for _name, _l in (("MRS", "1"), ("MSR", "0"))[:2 if _writable else 1]:
        _operands = (R("Rt", 64), SysRegName(_sysreg)) if _l == "1" else (SysRegName(_sysreg), R("Rt", 64))
        _fuzz = {"not_fuzzed": "QEMU's linux-user answers the read as Linux does"} if _sysreg.startswith("ID_") else \
            {"not_fuzzed": "the harness's clang assembles no MPAM registers"} if _sysreg.startswith("MPAM") else {}
        add(replace(_form(f"{_name}_{_sysreg}", _name.lower(),
                          f"{_name} <Xt>, {_sysreg}" if _l == "1" else f"{_name} {_sysreg}, <Xt>",
                          f"{'read' if _l == '1' else 'write'} {_sysreg}: UNDEFINED at EL0, where isasim runs",
                          f"1101010100 {_l} 1 {_bits} Rt:5", _operands, semantics.privileged, group=GROUP, **_fuzz),
                    feature="SME"))

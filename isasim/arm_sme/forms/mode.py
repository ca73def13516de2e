"""The SME mode instructions (SMSTART/SMSTOP and their SM/ZA variants) and ZERO {tiles}."""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial

from ..encoding import Encoding
from ..operands import TileList
from ..semantics import modes
from ..operands.common import _shape, parse_int
from .base import A64Form, Alias, add


@dataclass(frozen=True)
class _SvcrField:
    """``SVCRSM``, ``SVCRZA`` or ``SVCRSMZA`` and ``#0``/``#1`` of the MSR (immediate) an SMSTART/SMSTOP is: fixed by
    the form (llvm reads ``msr svcrsm, #1`` and prints ``smstart sm``)."""

    name: str
    kind = "sysreg"

    def parse(self, text: str) -> dict:
        word = text.strip().lower()
        if self.name.startswith("#") and parse_int(word, hash="required") == int(self.name[1:]):
            return {}
        if word != self.name:
            raise _shape(f"'{text.strip()[:40]}' is not {self.name} (MSR {{SVCRSM, SVCRZA, SVCRSMZA}}, #0 or #1)")
        return {}

    def text(self, fields: dict) -> str:
        return self.name

    def value(self, fields: dict) -> None:
        return None


# ---- SME modes and ZA ---------------------------------------------------------------------------------
# SMSTART/SMSTOP are MSR SVCR{SM,ZA,SMZA}, #imm: CRm = 0 mask(2) imm (mask 01 SM, 10 ZA, 11 both)
for _text, _crm, _sm, _za in (("smstart", "0111", True, True), ("smstop", "0110", False, False),
                              ("smstart sm", "0011", True, None), ("smstop sm", "0010", False, None),
                              ("smstart za", "0101", None, True), ("smstop za", "0100", None, False)):
    _what = " and ".join(n for n, v in (("PSTATE.SM", _sm), ("PSTATE.ZA", _za)) if v is not None)
    add(A64Form(
        id=_text.upper().replace(" ", "_"), mnemonic=_text.split()[0], syntax=_text.upper(),
        summary=f"{'set' if 'start' in _text else 'clear'} {_what}",
        encoding=Encoding(f"11010101 00000011 0100 {_crm} 01111111"),
        execute=partial(modes.set_modes, sm=_sm, za=_za), feature="SME", group="mode",
        doc=("IF PSTATE.SM != new_sm THEN ResetSVEState();  // Z0-Z31, P0-P15, FFR = 0; ZA kept\n"
             "IF PSTATE.ZA == '0' AND new_za == '1' THEN ResetSMEState();  // ZA, ZT0 = 0\n"
             "PSTATE.SM = new_sm; PSTATE.ZA = new_za;  // for the bits this form writes"),
        extra={"text": _text, "aliases": (Alias("msr", (_SvcrField({"sm": "svcrsm", "za": "svcrza"}.get(
            _text.split()[-1], "svcrsmza")), _SvcrField("#1" if "start" in _text else "#0")),
            preferred=lambda fields: False, accepts=lambda fields: True),)}))

add(A64Form(
    id="ZERO_tiles", mnemonic="zero", syntax="ZERO {<mask>}", summary="zero a list of ZA tiles ({za}: all of ZA)",
    encoding=Encoding("11000000 00001000 00000000 mask:8"), operands=(TileList(),),
    execute=modes.zero_tiles, feature="SME", group="za",
    doc=("CheckSMEAndZAEnabled();\n"
         "for row = 0 to (SVL DIV 8)-1\n"
         "    IF mask<row MOD 8> == '1' THEN ZAvector[row] = Zeros();  // ZAt.D holds rows t, t+8, ...")))

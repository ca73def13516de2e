"""The SME integer outer products into a ZA tile: UMOPA, SMOPA, USMOPA, SUMOPA and their subtracting
MOPS forms (4-way .B->.S and .H->.D), and the SME2 2-way .H->.S UMOPA/SMOPA/UMOPS/SMOPS."""

from __future__ import annotations

from ..encoding import Encoding
from ..operands import PredMerge, ZaTile, ZReg
from ..semantics import integer_outer_products
from ..semantics.integer_outer_products import OuterShape
from .base import A64Form, add

# Encodings (Arm ARM C9.2; bit 31 first).  u0 = 1: Zn is unsigned; u1 = 1: Zm is unsigned; S = 1: subtract.
# Pm governs the columns (from Zm), Pn the rows (from Zn).
OUTER = {
    ("s", "b"): "1010000 u0={u0} 10 u1={u1} Zm:5 Pm:3 Pn:3 Zn:5 S={s} 00 ZAda:2",  # 4-way, SME
    ("d", "h"): "1010000 u0={u0} 11 u1={u1} Zm:5 Pm:3 Pn:3 Zn:5 S={s} 0 ZAda:3",  # 4-way, SME_I16I64
    ("s", "h"): "1010000 u0={u0} 10 0 Zm:5 Pm:3 Pn:3 Zn:5 S={s} 10 ZAda:2",  # 2-way, SME2 (u1 is 0)
}
FEATURES = {("s", "b"): "SME", ("d", "h"): "SME_I16I64", ("s", "h"): "SME2"}

# (mnemonic stem, Zn signed, Zm signed, the ZA/source size pairs it has)
OUTERS = (
    ("umop", False, False, (("s", "b"), ("d", "h"), ("s", "h"))),
    ("smop", True, True, (("s", "b"), ("d", "h"), ("s", "h"))),
    ("usmop", False, True, (("s", "b"), ("d", "h"))),
    ("sumop", True, False, (("s", "b"), ("d", "h"))),
)
SIGNEDNESS = {(False, False): "unsigned", (True, True): "signed", (False, True): "unsigned by signed",
              (True, False): "signed by unsigned"}


def _outer_form(stem, s1, s2, za, src, subtract) -> A64Form:
    mnemonic = stem + ("s" if subtract else "a")
    esize = 32 if za == "s" else 64
    ways = esize // (8 if src == "b" else 16)
    shape = OuterShape(esize, ways, s1, s2, subtract)
    pattern = OUTER[za, src].format(u0=int(not s1), u1=int(not s2), s=int(subtract))
    syntax = (f"{mnemonic.upper()} <ZAda>.{za.upper()}, <Pn>/M, <Pm>/M, <Zn>.{src.upper()}, <Zm>.{src.upper()}")
    summary = (f"{ways}-way {SIGNEDNESS[s1, s2]} sum of outer products of {src.upper()} elements "
               f"{'subtracted from' if subtract else 'added to'} a {esize}-bit ZA tile (Pn governs Zn's rows, "
               f"Pm Zm's columns)")
    return A64Form(
        id=f"{mnemonic.upper()}_za{za}_{src}", mnemonic=mnemonic, syntax=syntax, summary=summary,
        encoding=Encoding(pattern),
        operands=(ZaTile(za, "ZAda"), PredMerge("Pn"), PredMerge("Pm"), ZReg(src, "Zn"), ZReg(src, "Zm")),
        execute=integer_outer_products.bound(shape), feature=FEATURES[za, src],
        doc=integer_outer_products.asl(mnemonic, shape),
        group="outer", extra={"shape": shape})


for _stem, _s1, _s2, _sizes in OUTERS:
    for _za, _src in _sizes:
        for _subtract in (False, True):
            add(_outer_form(_stem, _s1, _s2, _za, _src, _subtract))

"""The SME floating-point outer products (FMOPA/FMOPS .S and widening .H->.S, BFMOPA/BFMOPS .H->.S) and
the SME2 floating-point dot products into ZA vector groups (FDOT/BFDOT .H->.S: single, multiple,
indexed; VGx2 and VGx4)."""

from __future__ import annotations

from ..encoding import Encoding
from ..operands import PredMerge, ZaTile, ZaVectorGroup, ZIndexed, ZList, ZReg
from ..semantics import fp_products
from ..semantics.fp_products import FPDotShape, FPOuterShape
from .base import A64Form, add

# ---- outer products into a ZA tile (Arm ARM C9.2.43/45, 115-118) -------------------------------------
# bits 23:21 pick the form (100 non-widening single precision, 101 widening FMOPA, 100 of the 0x81
# space BFMOPA); S (bit 4) subtracts; ZAda is ZA0-ZA3.S
OUTER = {"fmopa": "10000000 100 Zm:5 Pm:3 Pn:3 Zn:5 S={s} 00 ZAda:2",
         "fmopa_widening": "10000001 101 Zm:5 Pm:3 Pn:3 Zn:5 S={s} 00 ZAda:2",
         "bfmopa": "10000001 100 Zm:5 Pm:3 Pn:3 Zn:5 S={s} 00 ZAda:2"}

# (mnemonic, kind, source element, subtract, what it does)
OUTERS = (
    ("fmopa", "fmopa", "s", False, "single-precision outer product, accumulated into"),
    ("fmops", "fmopa", "s", True, "single-precision outer product, subtracted from"),
    ("fmopa", "fmopa_widening", "h", False,
     "half-precision sum of outer products (2-way), widened and accumulated into"),
    ("fmops", "fmopa_widening", "h", True, "half-precision sum of outer products (2-way), widened and subtracted from"),
    ("bfmopa", "bfmopa", "h", False, "BFloat16 sum of outer products (2-way), widened and accumulated into"),
    ("bfmops", "bfmopa", "h", True, "BFloat16 sum of outer products (2-way), widened and subtracted from"),
)


def _outer_form(mnemonic, kind, src, subtract, what) -> A64Form:
    shape = FPOuterShape(kind, subtract)
    suffix = src.upper()
    return A64Form(
        id=f"{mnemonic.upper()}_zas_{src}", mnemonic=mnemonic,
        syntax=f"{mnemonic.upper()} <ZAda>.S, <Pn>/M, <Pm>/M, <Zn>.{suffix}, <Zm>.{suffix}",
        summary=f"{what} a single-precision ZA tile (Pn governs the rows, Pm the columns)",
        encoding=Encoding(OUTER[kind].format(s=int(subtract))),
        operands=(ZaTile("s"), PredMerge("Pn"), PredMerge("Pm"), ZReg(src, "Zn"), ZReg(src, "Zm")),
        execute=fp_products.bound_outer(shape), feature="SME", doc=fp_products.outer_asl(mnemonic, shape),
        group="fp_outer", extra={"shape": shape})


for _outer in OUTERS:
    add(_outer_form(*_outer))


# ---- dot products into ZA vector groups (Arm ARM C9.2.16-18 BFDOT, 78-80 FDOT) ------------------------
# the integer dots' layout (forms/dot.py) with bits 12:10 = 100 (single, multiple) and sz = 0
SINGLE = "11000001 0 0 1 G={g} Zm:4 0 Rv:2 100 Zn:5 opc={opc} off3:3"
MULTIPLE = {2: "11000001 1 0 1 Zm:4 0 0 Rv:2 100 Zn:4 0 opc={opc} off3:3",
            4: "11000001 1 0 1 Zm:3 01 0 Rv:2 100 Zn:3 00 opc={opc} off3:3"}
INDEXED = {2: "11000001 0101 Zm:4 0 Rv:2 1 i:2 Zn:4 0 opc={opc} off3:3",
           4: "11000001 0101 Zm:4 1 Rv:2 1 i:2 Zn:3 0 0 opc={opc} off3:3"}

# (mnemonic, opc of the single and multiple forms, opc of the indexed form, what the sources are)
DOTS = (("fdot", "00", "01", "half-precision"), ("bfdot", "10", "11", "BFloat16"))


def _dot_form(mnemonic, nreg, second, pattern, sources) -> A64Form:
    shape = FPDotShape(mnemonic, nreg, second)
    if second == "single":
        zn, zm, m_syntax = ZList("h", nreg, "Zn", 1), ZReg("h", "Zm", 4), "<Zm>.H"
    elif second == "multiple":
        zn, zm = ZList("h", nreg, "Zn", nreg), ZList("h", nreg, "Zm", nreg)
        m_syntax = "{<Zm1>.H-<Zm%d>.H}" % nreg
    else:
        zn, zm, m_syntax = ZList("h", nreg, "Zn", nreg), ZIndexed("h", "Zm", "i", 2), "<Zm>.H[<index>]"
    return A64Form(
        id=f"{mnemonic.upper()}_zas_h_{second}_vgx{nreg}", mnemonic=mnemonic,
        syntax=f"{mnemonic.upper()} ZA.S[<Wv>, <offs>{{, VGx{nreg}}}], {{<Zn1>.H-<Zn{nreg}>.H}}, {m_syntax}",
        summary=(f"2-way {sources} dot product into the single-precision elements of a {nreg}-vector ZA group"
                 f" ({second} Zm)"),
        encoding=Encoding(pattern), operands=(ZaVectorGroup("s", nreg), zn, zm),
        execute=fp_products.bound_dot(shape), feature="SME2", doc=fp_products.dot_asl(mnemonic, shape),
        group="fp_dot", extra={"shape": shape})


for _m, _opc, _iopc, _sources in DOTS:
    for _nreg in (2, 4):
        add(_dot_form(_m, _nreg, "single", SINGLE.format(g=_nreg // 4, opc=_opc), _sources))
        add(_dot_form(_m, _nreg, "multiple", MULTIPLE[_nreg].format(opc=_opc), _sources))
        add(_dot_form(_m, _nreg, "indexed", INDEXED[_nreg].format(opc=_iopc), _sources))

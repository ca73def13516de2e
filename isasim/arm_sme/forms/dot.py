"""The SME2 integer dot products into ZA vector groups: UDOT, SDOT, USDOT, SUDOT (single, multiple,
indexed; VGx2 and VGx4), and the vertical dots UVDOT, SVDOT, USVDOT, SUVDOT (indexed only)."""

from __future__ import annotations

from ..encoding import Encoding
from ..operands import ZaVectorGroup, ZIndexed, ZList, ZReg
from ..semantics import integer_dots
from ..semantics.integer_dots import DotShape
from .base import A64Form, add


# ---- SME2 integer dot products into ZA vector groups ----------------------------------------------
# Encodings (Arm ARM C9.2; bit 31 first).  Rv picks W8-W11, off3 the offset, Zn the first source.
SINGLE = "11000001 0 sz={sz} 1 G={g} Zm:4 0 Rv:2 101 Zn:5 opc={opc} off3:3"
MULTIPLE = {2: "11000001 1 sz={sz} 1 Zm:4 0 0 Rv:2 101 Zn:4 0 opc={opc} off3:3",
            4: "11000001 1 sz={sz} 1 Zm:3 01 0 Rv:2 101 Zn:3 00 opc={opc} off3:3"}
INDEXED = {  # (source size, ZA size) -> (23:20, the index bits 12:10)
    "S": {2: "11000001 0101 Zm:4 0 Rv:2 1 i:2 Zn:4 t={t} opc={opc} off3:3",
          4: "11000001 0101 Zm:4 1 Rv:2 1 i:2 Zn:3 0 t={t} opc={opc} off3:3"},
    "D": {2: "11000001 1101 Zm:4 0 Rv:2 00 i:1 Zn:4 0 opc={opc} off3:3",
          4: "11000001 1101 Zm:4 1 Rv:2 00 i:1 Zn:3 0 0 opc={opc} off3:3"},
}

# (mnemonic, ZA size, source size, ways, Zn signed, Zm signed, feature, sz and opc of the single and
#  multiple forms, opc of the indexed form); SUDOT has no multiple-vector form (None)
DOTS = (
    ("udot", "s", "h", 2, False, False, "SME2", ("1", "11"), "10"),
    ("sdot", "s", "h", 2, True, True, "SME2", ("1", "01"), "00"),
    ("udot", "s", "b", 4, False, False, "SME2", ("0", "10"), "10"),
    ("sdot", "s", "b", 4, True, True, "SME2", ("0", "00"), "00"),
    ("usdot", "s", "b", 4, False, True, "SME2", ("0", "01"), "01"),
    ("sudot", "s", "b", 4, True, False, "SME2", ("0", "11"), "11"),
    ("udot", "d", "h", 4, False, False, "SME_I16I64", ("1", "10"), "11"),
    ("sdot", "d", "h", 4, True, True, "SME_I16I64", ("1", "00"), "01"),
)
SIGNEDNESS = {(False, False): "unsigned", (True, True): "signed", (False, True): "unsigned by signed",
              (True, False): "signed by unsigned"}


def _dot_form(mnemonic, za, src, ways, s1, s2, feature, nreg, second, pattern, vertical=False) -> A64Form:
    esize = 32 if za == "s" else 64
    shape = DotShape(esize, ways, s1, s2, nreg, second, vertical)
    group = ZaVectorGroup(za, nreg)
    if second == "single":
        zn, zm = ZList(src, nreg, "Zn", 1), ZReg(src, "Zm", 4)
        m_syntax = f"<Zm>.{src.upper()}"
    elif second == "multiple":
        zn, zm = ZList(src, nreg, "Zn", nreg), ZList(src, nreg, "Zm", nreg)
        m_syntax = "{<Zm1>.%s-<Zm%d>.%s}" % (src.upper(), nreg, src.upper())
    else:
        index_bits = 1 if za == "d" else 2
        zn, zm = ZList(src, nreg, "Zn", nreg), ZIndexed(src, "Zm", "i", index_bits)
        m_syntax = f"<Zm>.{src.upper()}[<index>]"
    syntax = (f"{mnemonic.upper()} ZA.{za.upper()}[<Wv>, <offs>{{, VGx{nreg}}}], "
              "{<Zn1>.%s-<Zn%d>.%s}, %s" % (src.upper(), nreg, src.upper(), m_syntax))
    summary = (f"{ways}-way {SIGNEDNESS[s1, s2]} {'vertical ' if vertical else ''}dot product of {src.upper()} "
               f"elements into the {esize}-bit elements of a {nreg}-vector ZA group ({second} Zm)")
    return A64Form(
        id=f"{mnemonic.upper()}_za{za}_{src}_{second}_vgx{nreg}", mnemonic=mnemonic, syntax=syntax,
        summary=summary, encoding=Encoding(pattern), operands=(group, zn, zm),
        execute=integer_dots.bound(shape), feature=feature, doc=integer_dots.asl(mnemonic, shape),
        group="dot", extra={"shape": shape})


for _m, _za, _src, _ways, _s1, _s2, _feature, (_sz, _opc), _iopc in DOTS:
    for _nreg in (2, 4):
        add(_dot_form(_m, _za, _src, _ways, _s1, _s2, _feature, _nreg, "single",
                       SINGLE.format(sz=_sz, g=_nreg // 4, opc=_opc)))
        if _m != "sudot":  # there is no multiple-vector SUDOT (USDOT with the sources swapped is one)
            add(_dot_form(_m, _za, _src, _ways, _s1, _s2, _feature, _nreg, "multiple",
                           MULTIPLE[_nreg].format(sz=_sz, opc=_opc)))
        add(_dot_form(_m, _za, _src, _ways, _s1, _s2, _feature, _nreg, "indexed",
                       INDEXED[_za.upper()][_nreg].format(t=int(_src == "b"), opc=_iopc)))


# ---- SME2 vertical dot products (indexed only; VGx2 for 2-way, VGx4 for 4-way) ---------------------
# The indexed encodings with bit 12 (bits 12:11 for .D) marking "vertical"; Zn is aligned to nreg.
VERTICAL = {
    ("s", "h"): "11000001 0101 Zm:4 0 Rv:2 0 i:2 Zn:4 1 opc={opc} off3:3",  # 2-way, VGx2
    ("s", "b"): "11000001 0101 Zm:4 1 Rv:2 0 i:2 Zn:3 0 1 opc={opc} off3:3",  # 4-way, VGx4
    ("d", "h"): "11000001 1101 Zm:4 1 Rv:2 01 i:1 Zn:3 00 opc={opc} off3:3",  # 4-way, VGx4, SME_I16I64
}
# (mnemonic, ZA size, source size, Zn signed, Zm signed, feature, opc)
VERTICAL_DOTS = (
    ("uvdot", "s", "h", False, False, "SME2", "10"),
    ("svdot", "s", "h", True, True, "SME2", "00"),
    ("uvdot", "s", "b", False, False, "SME2", "10"),
    ("svdot", "s", "b", True, True, "SME2", "00"),
    ("usvdot", "s", "b", False, True, "SME2", "01"),
    ("suvdot", "s", "b", True, False, "SME2", "11"),
    ("uvdot", "d", "h", False, False, "SME_I16I64", "11"),
    ("svdot", "d", "h", True, True, "SME_I16I64", "01"),
)

for _m, _za, _src, _s1, _s2, _feature, _opc in VERTICAL_DOTS:
    _ways = (32 if _za == "s" else 64) // (8 if _src == "b" else 16)
    add(_dot_form(_m, _za, _src, _ways, _s1, _s2, _feature, _ways, "indexed",
                  VERTICAL[_za, _src].format(opc=_opc), vertical=True))


# what the assembler says of text that no form encodes but that looks like an instruction
NOT_ENCODABLE = {
    ("sudot", "multiple"): "there is no multi-vector SUDOT (Zm a list): use USDOT with Zn and Zm swapped",
}

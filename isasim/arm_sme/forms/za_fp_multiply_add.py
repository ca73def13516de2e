"""The SME2 floating-point multiply-adds and adds into ZA array vectors and the remaining floating-point and
bitwise outer products (semantics/za_fp_multiply_add.py): FMLA/FMLS (.S; .D with FEAT_SME_F64F64; .H with
FEAT_SME_F16F16) and BFMLA/BFMLS (FEAT_SME_B16B16), single, multiple and indexed, VGx2/VGx4; the widening
FMLAL/FMLSL/BFMLAL/BFMLSL (VGx1 ``za.s[w8, 0:1]``, VGx2, VGx4); FADD/FSUB/BFADD/BFSUB of a Z list into a
vector group; FVDOT/BFVDOT; FMOPA/FMOPS .D and .H, BFMOPA/BFMOPS .H (non-widening); BMOPA/BMOPS."""

from __future__ import annotations

from ..encoding import Encoding
from ..faults import UNDEFINED
from ..operands import PredMerge, ZaTile, ZaVectorGroup, ZIndexed, ZList, ZReg
from ..operands.za import ZaVectorRange
from ..semantics import za_fp_multiply_add as sem
from ..semantics.za_fp_multiply_add import OuterShape, ZaFPShape
from .base import A64Form, add

NAMES = {"h": "half-precision", "s": "single-precision", "d": "double-precision", "bf": "BFloat16"}
FEATURES = {"h": "SME_F16F16", "s": "SME2", "d": "SME_F64F64", "bf": "SME_B16B16"}


def _faults(feature: str) -> list[tuple[str, str]]:
    """What explain lists: CheckStreamingSVEAndZAEnabled's two UNDEFINED cases, and the form's feature."""
    faults = [(UNDEFINED, "PSTATE.SM is 0 (not in streaming mode)"), (UNDEFINED, "PSTATE.ZA is 0 (ZA off)")]
    if feature != "SME2":
        faults.append((UNDEFINED, f"FEAT_{feature} is not in the configuration (it is on by default)"))
    return faults


def _list_syntax(name: str, t: str, nreg: int) -> str:
    return "{<%s1>.%s-<%s%d>.%s}" % (name, t, name, nreg, t)


# ---- FMLA/FMLS, BFMLA/BFMLS into a vector group (non-widening) ------------------------------------------
# bit 22 (b22) and bit 10 of the single form / the 100 of the .H multiple forms tell the element type apart:
# .S 0/0, .D 1/0, .H 0/1, BFloat16 1/1
TYPE_BITS = {"s": ("0", "0"), "d": ("1", "0"), "h": ("0", "1"), "bf": ("1", "1")}


def _mla_patterns(fmt: str, subtract: bool, nreg: int) -> dict[str, str]:
    b22, h = TYPE_BITS[fmt]
    s = int(subtract)
    g = nreg // 4
    sixteen = fmt in ("h", "bf")
    if sixteen:
        multiple = {2: f"11000001 1 {b22} 1 Zm:4 0 0 Rv:2 100 Zn:4 0 S={s} 1 off3:3",
                    4: f"11000001 1 {b22} 1 Zm:3 01 0 Rv:2 100 Zn:3 00 S={s} 1 off3:3"}[nreg]
        bf = int(fmt == "bf")
        indexed = {2: f"11000001 0001 Zm:4 0 Rv:2 1 i:2 Zn:4 bf={bf} S={s} il:1 off3:3",
                   4: f"11000001 0001 Zm:4 1 Rv:2 1 i:2 Zn:3 0 bf={bf} S={s} il:1 off3:3"}[nreg]
    else:
        multiple = {2: f"11000001 1 {b22} 1 Zm:4 0 0 Rv:2 110 Zn:4 0 0 S={s} off3:3",
                    4: f"11000001 1 {b22} 1 Zm:3 01 0 Rv:2 110 Zn:3 00 0 S={s} off3:3"}[nreg]
        if fmt == "s":
            indexed = {2: f"11000001 0101 Zm:4 0 Rv:2 0 i:2 Zn:4 0 S={s} 0 off3:3",
                       4: f"11000001 0101 Zm:4 1 Rv:2 0 i:2 Zn:3 00 S={s} 0 off3:3"}[nreg]
        else:
            indexed = {2: f"11000001 1101 Zm:4 0 Rv:2 00 i:1 Zn:4 0 S={s} 0 off3:3",
                       4: f"11000001 1101 Zm:4 1 Rv:2 00 i:1 Zn:3 00 S={s} 0 off3:3"}[nreg]
    single = f"11000001 0 {b22} 1 G={g} Zm:4 0 Rv:2 11{h} Zn:5 0 S={s} off3:3"
    return {"single": single, "multiple": multiple, "indexed": indexed}


def _mla_form(mnemonic: str, fmt: str, subtract: bool, nreg: int, second: str, pattern: str) -> A64Form:
    t = "h" if fmt == "bf" else fmt
    T = t.upper()
    shape = ZaFPShape("mla", fmt, subtract, nreg, second)
    if second == "single":
        zn, zm, m_syntax = ZList(t, nreg, "Zn", 1), ZReg(t, "Zm", 4), f"<Zm>.{T}"
    elif second == "multiple":
        zn, zm, m_syntax = ZList(t, nreg, "Zn", nreg), ZList(t, nreg, "Zm", nreg), _list_syntax("Zm", T, nreg)
    else:
        index_bits = {"s": 2, "d": 1}.get(fmt, 3)
        low = ("il", 1) if fmt in ("h", "bf") else (None, 0)
        zn, zm = ZList(t, nreg, "Zn", nreg), ZIndexed(t, "Zm", "i", index_bits, *low)
        m_syntax = f"<Zm>.{T}[<index>]"
    verb = "subtracted from" if subtract else "accumulated into"
    return A64Form(
        id=f"{mnemonic.upper()}_za{t}_{second}_vgx{nreg}", mnemonic=mnemonic,
        syntax=f"{mnemonic.upper()} ZA.{T}[<Wv>, <offs>{{, VGx{nreg}}}], {_list_syntax('Zn', T, nreg)}, {m_syntax}",
        summary=(f"fused {NAMES[fmt]} multiply of {nreg} Z registers by {second} Zm, {verb} a {nreg}-vector ZA "
                 f"group"),
        encoding=Encoding(pattern), operands=(ZaVectorGroup(t, nreg), zn, zm),
        execute=sem.bound(sem.za_multiply_add, shape), feature=FEATURES[fmt],
        doc=sem.multiply_add_asl(mnemonic, shape), group="za", extra={"fp_shape": shape, "faults": _faults(FEATURES[fmt])})


for _fmt, _names in (("s", ("fmla", "fmls")), ("d", ("fmla", "fmls")), ("h", ("fmla", "fmls")),
                     ("bf", ("bfmla", "bfmls"))):
    for _subtract, _m in enumerate(_names):
        for _nreg in (2, 4):
            for _second, _pattern in _mla_patterns(_fmt, bool(_subtract), _nreg).items():
                add(_mla_form(_m, _fmt, bool(_subtract), _nreg, _second, _pattern))


# ---- FMLAL/FMLSL, BFMLAL/BFMLSL: 16-bit into single precision, two ZA vectors per register -------------

def _mlal_patterns(bf: int, s: int, nreg: int) -> dict[str, str]:
    if nreg == 1:
        return {"single": f"11000001 0010 Zm:4 0 Rv:2 011 Zn:5 bf={bf} S={s} off3:3",
                "indexed": f"11000001 1000 Zm:4 i:1 Rv:2 1 il:2 Zn:5 bf={bf} S={s} off3:3"}
    g = nreg // 4
    if nreg == 2:
        indexed = f"11000001 1001 Zm:4 0 Rv:2 1 i:2 Zn:4 0 bf={bf} S={s} il:1 off2:2"
        multiple = f"11000001 101 Zm:4 0 0 Rv:2 010 Zn:4 0 bf={bf} S={s} 0 off2:2"
    else:
        indexed = f"11000001 1001 Zm:4 1 Rv:2 1 i:2 Zn:3 00 bf={bf} S={s} il:1 off2:2"
        multiple = f"11000001 101 Zm:3 01 0 Rv:2 010 Zn:3 00 bf={bf} S={s} 0 off2:2"
    return {"single": f"11000001 0011 Zm:4 0 Rv:2 010 Zn:5 bf={bf} S={s} 0 off2:2".replace("0011", f"001{g}", 1),
            "indexed": indexed, "multiple": multiple}


def _mlal_form(mnemonic: str, fmt: str, subtract: bool, nreg: int, second: str, pattern: str) -> A64Form:
    shape = ZaFPShape("mlal", fmt, subtract, nreg, second)
    bits, field = (3, "off3") if nreg == 1 else (2, "off2")
    group = ZaVectorRange("s", nreg, 2, bits, field)
    if nreg == 1:
        zn, n_syntax = ZReg("h", "Zn"), "<Zn>.H"
    else:
        zn, n_syntax = ZList("h", nreg, "Zn", 1 if second == "single" else nreg), _list_syntax("Zn", "H", nreg)
    if second == "single":
        zm, m_syntax = ZReg("h", "Zm", 4), "<Zm>.H"
    elif second == "multiple":
        zm, m_syntax = ZList("h", nreg, "Zm", nreg), _list_syntax("Zm", "H", nreg)
    else:
        zm = ZIndexed("h", "Zm", "i", 3, "il", 2) if nreg == 1 else ZIndexed("h", "Zm", "i", 3, "il", 1)
        m_syntax = "<Zm>.H[<index>]"
    vg = "" if nreg == 1 else f"{{, VGx{nreg}}}"
    verb = "subtracted from" if subtract else "accumulated into"
    return A64Form(
        id=f"{mnemonic.upper()}_zas_h_{second}_vgx{nreg}", mnemonic=mnemonic,
        syntax=f"{mnemonic.upper()} ZA.S[<Wv>, <offs>:<offs>+1{vg}], {n_syntax}, {m_syntax}",
        summary=(f"{NAMES[fmt]} elements widened to single precision, multiplied by {second} Zm and {verb} two "
                 f"ZA vectors per source register (fused)"),
        encoding=Encoding(pattern), operands=(group, zn, zm),
        execute=sem.bound(sem.za_multiply_add_long, shape), feature="SME2",
        doc=sem.multiply_add_long_asl(mnemonic, shape), group="za", extra={"fp_shape": shape, "faults": _faults("SME2")})


for _m, _fmt, _bf, _s in (("fmlal", "h", 0, 0), ("fmlsl", "h", 0, 1), ("bfmlal", "bf", 1, 0), ("bfmlsl", "bf", 1, 1)):
    for _nreg in (1, 2, 4):
        for _second, _pattern in _mlal_patterns(_bf, _s, _nreg).items():
            add(_mlal_form(_m, _fmt, bool(_s), _nreg, _second, _pattern))


# ---- FADD/FSUB, BFADD/BFSUB: a Z list added to (subtracted from) a vector group ---------------------------
# bit 22: .D or BFloat16; bit 18: a 16-bit type
for _fmt, _names, _b22, _b18 in (("s", ("fadd", "fsub"), "0", "0"), ("d", ("fadd", "fsub"), "1", "0"),
                                 ("h", ("fadd", "fsub"), "0", "1"), ("bf", ("bfadd", "bfsub"), "1", "1")):
    _t = "h" if _fmt == "bf" else _fmt
    for _s, _m in enumerate(_names):
        for _nreg in (2, 4):
            _shape = ZaFPShape("add", _fmt, bool(_s), _nreg)
            _zm = "Zm:4 0" if _nreg == 2 else "Zm:3 00"
            add(A64Form(
                id=f"{_m.upper()}_za{_t}_vgx{_nreg}", mnemonic=_m,
                syntax=f"{_m.upper()} ZA.{_t.upper()}[<Wv>, <offs>{{, VGx{_nreg}}}], {_list_syntax('Zm', _t.upper(), _nreg)}",
                summary=(f"{_nreg} Z registers of {NAMES[_fmt]} elements {'subtracted from' if _s else 'added to'} a "
                         f"{_nreg}-vector ZA group"),
                encoding=Encoding(f"11000001 1 {_b22} 1 00 {_b18} 0 {_nreg // 4} 0 Rv:2 111 {_zm} 0 S={_s} off3:3"),
                operands=(ZaVectorGroup(_t, _nreg), ZList(_t, _nreg, "Zm", _nreg)),
                execute=sem.bound(sem.za_add, _shape), feature=FEATURES[_fmt], doc=sem.add_asl(_m, _shape),
                group="za", extra={"fp_shape": _shape, "faults": _faults(FEATURES[_fmt])}))


# ---- FVDOT, BFVDOT: vertical 2-way dots, indexed, VGx2 ------------------------------------------------------
for _m, _fmt, _bf in (("fvdot", "h", 0), ("bfvdot", "bf", 1)):
    _shape = ZaFPShape("vdot", _fmt, False, 2, "indexed")
    add(A64Form(
        id=f"{_m.upper()}_zas_h_indexed_vgx2", mnemonic=_m,
        syntax=f"{_m.upper()} ZA.S[<Wv>, <offs>{{, VGx2}}], {{<Zn1>.H-<Zn2>.H}}, <Zm>.H[<index>]",
        summary=(f"2-way {NAMES[_fmt]} vertical dot product of a register pair with an indexed pair of Zm, into "
                 f"the single-precision elements of a 2-vector ZA group"),
        encoding=Encoding(f"11000001 0101 Zm:4 0 Rv:2 0 i:2 Zn:4 0 bf={_bf} 1 off3:3"),
        operands=(ZaVectorGroup("s", 2), ZList("h", 2, "Zn", 2), ZIndexed("h", "Zm", "i", 2)),
        execute=sem.bound(sem.za_vertical_dot, _shape), feature="SME2", doc=sem.vertical_dot_asl(_m, _shape),
        group="za", extra={"fp_shape": _shape, "faults": _faults("SME2")}))


# ---- FMOPA/FMOPS .D and .H, BFMOPA/BFMOPS .H (non-widening), BMOPA/BMOPS --------------------------------
OUTERS = (  # (mnemonic, format, ZA tile and element suffix, pattern, what)
    ("fmopa", "d", "d", "10000000 110 Zm:5 Pm:3 Pn:3 Zn:5 S={s} 0 ZAda:3", "double-precision outer product"),
    ("fmopa", "h", "h", "10000001 100 Zm:5 Pm:3 Pn:3 Zn:5 S={s} 100 ZAda:1", "half-precision outer product"),
    ("bfmopa", "bf", "h", "10000001 101 Zm:5 Pm:3 Pn:3 Zn:5 S={s} 100 ZAda:1", "BFloat16 outer product"),
    ("bmopa", "bits", "s", "10000000 100 Zm:5 Pm:3 Pn:3 Zn:5 S={s} 10 ZAda:2",
     "1-bit outer product (the matching bits of each pair of 32-bit words counted)"),
)
for _m, _fmt, _t, _pattern, _what in OUTERS:
    for _s in (0, 1):
        _mn = _m[:-1] + "s" if _s else _m
        _shape = OuterShape(_fmt, bool(_s))
        _feature = "SME2" if _fmt == "bits" else FEATURES[_fmt]
        add(A64Form(
            id=f"{_mn.upper()}_za{_t}_{_t}", mnemonic=_mn,
            syntax=f"{_mn.upper()} <ZAda>.{_t.upper()}, <Pn>/M, <Pm>/M, <Zn>.{_t.upper()}, <Zm>.{_t.upper()}",
            summary=(f"{_what}, {'subtracted from' if _s else 'accumulated into'} a ZA tile (Pn governs the rows, "
                     f"Pm the columns)"),
            encoding=Encoding(_pattern.format(s=_s)),
            operands=(ZaTile(_t), PredMerge("Pn"), PredMerge("Pm"), ZReg(_t, "Zn"), ZReg(_t, "Zm")),
            execute=sem.bound(sem.outer_product, _shape), feature=_feature,
            doc=sem.outer_asl(_mn, _shape), group="za", extra={"fp_shape": _shape, "faults": _faults(_feature)}))

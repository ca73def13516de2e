"""The SME2 integer multiply-adds into ZA array vectors and integer adds into ZA vector groups
(semantics/za_integer_multiply_add.py): SMLAL/SMLSL/UMLAL/UMLSL (2-way, 16-bit into 32-bit), SMLALL/SMLSLL/
UMLALL/UMLSLL (4-way: 8-bit into 32-bit, and 16-bit into 64-bit with FEAT_SME_I16I64), USMLALL and SUMLALL
(8-bit into 32-bit), each single, multiple and indexed, VGx1 (``za.s[w8, 0:1]``), VGx2, VGx4; ADD/SUB of a Z list
into ZA (array accumulators), of a Z list and one Z or a Z list written to ZA (array results), and the
multi-vector ADD ``{z0.h, z1.h}, {z0.h, z1.h}, z0.h``."""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial

from ..encoding import Encoding
from ..operands import ZaVectorGroup, ZaVectorRange, ZIndexed, ZList, ZReg
from ..operands.sve import ConsecutiveList
from ..semantics import za_integer_multiply_add as sem
from ..semantics.za_integer_multiply_add import MlaShape
from .base import A64Form, add
from .dot import NOT_ENCODABLE

NOT_ENCODABLE[("sumlall", "multiple")] = ("there is no multi-vector SUMLALL (Zm a list): use USMLALL with Zn and Zm "
                                          "swapped")

SIGNEDNESS = {(False, False): "unsigned", (True, True): "signed", (False, True): "unsigned by signed",
              (True, False): "signed by unsigned"}

# ---- 2-way: SMLAL, SMLSL, UMLAL, UMLSL (ZA.S += or -= 16-bit products) ------------------------------
# (bit 31 first); U and S are the low bits' 4 and 3; the index is split ih:il
MLAL = {
    (1, "single"): "11000001 0110 Zm:4 0 Rv:2 011 Zn:5 U={u} S={s} off3:3",
    (1, "indexed"): "11000001 1100 Zm:4 ih:1 Rv:2 1 il:2 Zn:5 U={u} S={s} off3:3",
    (2, "single"): "11000001 0110 Zm:4 0 Rv:2 010 Zn:5 U={u} S={s} 0 off2:2",
    (4, "single"): "11000001 0111 Zm:4 0 Rv:2 010 Zn:5 U={u} S={s} 0 off2:2",
    (2, "indexed"): "11000001 1101 Zm:4 0 Rv:2 1 ih:2 Zn:4 0 U={u} S={s} il:1 off2:2",
    (4, "indexed"): "11000001 1101 Zm:4 1 Rv:2 1 ih:2 Zn:3 00 U={u} S={s} il:1 off2:2",
    (2, "multiple"): "11000001 111 Zm:4 0 0 Rv:2 010 Zn:4 0 U={u} S={s} 0 off2:2",
    (4, "multiple"): "11000001 111 Zm:3 01 0 Rv:2 010 Zn:3 00 U={u} S={s} 0 off2:2",
}
# ---- 4-way: SMLALL, SMLSLL, UMLALL, UMLSLL, USMLALL, SUMLALL ------------------------------------------
MLALL = {
    (1, "single"): "11000001 0 sz={sz} 10 Zm:4 0 Rv:2 001 Zn:5 U={u} S={s} op={op} off2:2",
    (2, "single"): "11000001 0 sz={sz} 10 Zm:4 0 Rv:2 000 Zn:5 U={u} S={s} op={op} 0 off1:1",
    (4, "single"): "11000001 0 sz={sz} 11 Zm:4 0 Rv:2 000 Zn:5 U={u} S={s} op={op} 0 off1:1",
    (2, "multiple"): "11000001 1 sz={sz} 1 Zm:4 0 0 Rv:2 000 Zn:4 0 U={u} S={s} op={op} 0 off1:1",
    (4, "multiple"): "11000001 1 sz={sz} 1 Zm:3 0 1 0 Rv:2 000 Zn:3 00 U={u} S={s} op={op} 0 off1:1",
}
MLALL_INDEXED = {  # by ZA element size: the index is 4 bits for .S (8-bit sources), 3 for .D
    ("s", 1): "11000001 0000 Zm:4 ih:1 Rv:2 il:3 Zn:5 U={u} S={s} op={op} off2:2",
    ("s", 2): "11000001 0001 Zm:4 0 Rv:2 0 ih:2 Zn:4 op={op} U={u} S={s} il:2 off1:1",
    ("s", 4): "11000001 0001 Zm:4 1 Rv:2 0 ih:2 Zn:3 0 op={op} U={u} S={s} il:2 off1:1",
    ("d", 1): "11000001 1000 Zm:4 ih:1 Rv:2 0 il:2 Zn:5 U={u} S={s} 0 off2:2",
    ("d", 2): "11000001 1001 Zm:4 0 Rv:2 00 ih:1 Zn:4 0 U={u} S={s} il:2 off1:1",
    ("d", 4): "11000001 1001 Zm:4 1 Rv:2 00 ih:1 Zn:3 00 U={u} S={s} il:2 off1:1",
}
# the low bits of each index's split: (ih bits, il bits)
INDEX_SPLIT = {("s", "h", 1): (1, 2), ("s", "h", 2): (2, 1), ("s", "h", 4): (2, 1),
               ("s", "b", 1): (1, 3), ("s", "b", 2): (2, 2), ("s", "b", 4): (2, 2),
               ("d", "h", 1): (1, 2), ("d", "h", 2): (1, 2), ("d", "h", 4): (1, 2)}

# (mnemonic, ZA size, source size, Zn signed, Zm signed, subtract, feature, U, S, op, the forms it has)
ALL = ("single", "multiple", "indexed")
FAMILIES = (
    ("smlal", "s", "h", True, True, False, "SME2", "0", "0", None, ALL),
    ("smlsl", "s", "h", True, True, True, "SME2", "0", "1", None, ALL),
    ("umlal", "s", "h", False, False, False, "SME2", "1", "0", None, ALL),
    ("umlsl", "s", "h", False, False, True, "SME2", "1", "1", None, ALL),
    ("smlall", "s", "b", True, True, False, "SME2", "0", "0", "0", ALL),
    ("smlsll", "s", "b", True, True, True, "SME2", "0", "1", "0", ALL),
    ("umlall", "s", "b", False, False, False, "SME2", "1", "0", "0", ALL),
    ("umlsll", "s", "b", False, False, True, "SME2", "1", "1", "0", ALL),
    ("usmlall", "s", "b", False, True, False, "SME2", "0", "0", "1", ALL),
    ("sumlall", "s", "b", True, False, False, "SME2", "1", "0", "1", ("single", "indexed")),
    ("smlall", "d", "h", True, True, False, "SME_I16I64", "0", "0", "0", ALL),
    ("smlsll", "d", "h", True, True, True, "SME_I16I64", "0", "1", "0", ALL),
    ("umlall", "d", "h", False, False, False, "SME_I16I64", "1", "0", "0", ALL),
    ("umlsll", "d", "h", False, False, True, "SME_I16I64", "1", "1", "0", ALL),
)


def _mla_form(mnemonic, za, src, s1, s2, subtract, feature, nreg, second, pattern) -> A64Form:
    esize = 32 if za == "s" else 64
    ways = esize // (8 if src == "b" else 16)
    shape = MlaShape(esize, ways, s1, s2, subtract, nreg, second)
    offset_field = next(piece.split(":")[0] for piece in pattern.split() if piece.startswith("off"))
    offset_bits = int(offset_field[3:])
    group = ZaVectorRange(za, nreg, ways, offset_bits, offset_field)
    S = src.upper()
    if nreg == 1:
        zn, zn_text = ZReg(src, "Zn"), f"<Zn>.{S}"
    else:
        zn = ZList(src, nreg, "Zn", 1 if second == "single" else nreg)
        zn_text = "{<Zn1>.%s-<Zn%d>.%s}" % (S, nreg, S)
    if second == "single":
        zm, m_text = ZReg(src, "Zm", 4), f"<Zm>.{S}"
    elif second == "multiple":
        zm, m_text = ZList(src, nreg, "Zm", nreg), "{<Zm1>.%s-<Zm%d>.%s}" % (S, nreg, S)
    else:
        high, low = INDEX_SPLIT[za, src, nreg]
        zm, m_text = ZIndexed(src, "Zm", "ih", high + low, "il", low), f"<Zm>.{S}[<index>]"
    vg = f", VGx{nreg}" if nreg > 1 else ""
    syntax = (f"{mnemonic.upper()} ZA.{za.upper()}[<Wv>, <offs1>:<offs{ways}>{{{vg}}}], {zn_text}, {m_text}"
              if nreg > 1 else f"{mnemonic.upper()} ZA.{za.upper()}[<Wv>, <offs1>:<offs{ways}>], {zn_text}, {m_text}")
    verb = "subtract" if subtract else "add"
    summary = (f"{ways}-way {SIGNEDNESS[s1, s2]} multiply-{verb} of {S} elements, each product widened to "
               f"{esize} bits and {'subtracted from' if subtract else 'added to'} its own ZA vector of the {ways} "
               f"{'' if nreg == 1 else f'in each of {nreg} groups '}at the offset ({second} Zm)")
    return A64Form(
        id=f"{mnemonic.upper()}_za{za}_{src}_{second}_vgx{nreg}", mnemonic=mnemonic, syntax=syntax,
        summary=summary, encoding=Encoding(pattern), operands=(group, zn, zm), execute=sem.bound(shape),
        feature=feature, doc=sem.asl(mnemonic, shape), group="za", extra={"shape": shape})


for _m, _za, _src, _s1, _s2, _sub, _feature, _u, _s, _op, _seconds in FAMILIES:
    for _nreg in (1, 2, 4):
        for _second in _seconds:
            if _second == "multiple" and _nreg == 1:
                continue  # a VGx1 form takes one Zn and one Zm
            if _second == "single" and _nreg == 1 and _m == "sumlall":
                continue  # no VGx1 SUMLALL with a single Zm (USMLALL with the sources swapped is one)
            if _op is None:
                _pattern = MLAL[_nreg, _second].format(u=_u, s=_s)
            elif _second == "indexed":
                _pattern = MLALL_INDEXED[_za, _nreg].format(u=_u, s=_s, op=_op)
            else:
                _pattern = MLALL[_nreg, _second].format(u=_u, s=_s, op=_op, sz=int(_za == "d"))
            add(_mla_form(_m, _za, _src, _s1, _s2, _sub, _feature, _nreg, _second, _pattern))


# ---- ADD/SUB into ZA vector groups ---------------------------------------------------------------------
ZA_ADD = {
    (2, None): "11000001 1 sz={sz} 1 00000 0 Rv:2 111 Zn:4 0 1 S={s} off3:3",
    (4, None): "11000001 1 sz={sz} 1 00001 0 Rv:2 111 Zn:3 00 1 S={s} off3:3",
    (2, "single"): "11000001 0 sz={sz} 10 Zm:4 0 Rv:2 110 Zn:5 1 S={s} off3:3",
    (4, "single"): "11000001 0 sz={sz} 11 Zm:4 0 Rv:2 110 Zn:5 1 S={s} off3:3",
    (2, "multiple"): "11000001 1 sz={sz} 1 Zm:4 0 0 Rv:2 110 Zn:4 0 1 S={s} off3:3",
    (4, "multiple"): "11000001 1 sz={sz} 1 Zm:3 0 1 0 Rv:2 110 Zn:3 00 1 S={s} off3:3",
}

for _m, _s in (("add", "0"), ("sub", "1")):
    for _t, _feature in (("s", "SME2"), ("d", "SME_I16I64")):
        _T, _esize = _t.upper(), 32 if _t == "s" else 64
        for _nreg in (2, 4):
            for _second in (None, "single", "multiple"):
                _zn = ZList(_t, _nreg, "Zn", 1 if _second == "single" else _nreg)
                _operands = (ZaVectorGroup(_t, _nreg), _zn)
                _list = "{<Zn1>.%s-<Zn%d>.%s}" % (_T, _nreg, _T)
                _syntax = f"{_m.upper()} ZA.{_T}[<Wv>, <offs>{{, VGx{_nreg}}}], {_list}"
                if _second == "single":
                    _operands += (ZReg(_t, "Zm", 4),)
                    _syntax += f", <Zm>.{_T}"
                elif _second == "multiple":
                    _operands += (ZList(_t, _nreg, "Zm", _nreg),)
                    _syntax += ", {<Zm1>.%s-<Zm%d>.%s}" % (_T, _nreg, _T)
                _verb = "added to" if _m == "add" else "subtracted from"
                _summary = (f"{_nreg} Z registers {_verb} the {_esize}-bit elements of a {_nreg}-vector ZA group"
                            if _second is None else
                            f"the {_esize}-bit elements of {_nreg} Z registers {'plus' if _m == 'add' else 'minus'} "
                            + ("one Z register" if _second == "single" else f"{_nreg} more") +
                            f", written to a {_nreg}-vector ZA group")
                add(A64Form(
                    f"{_m.upper()}_za{_t}_{_second or 'za'}_vgx{_nreg}", _m, _syntax, _summary,
                    Encoding(ZA_ADD[_nreg, _second].format(sz=int(_t == "d"), s=_s)), _operands,
                    partial(sem.za_add, esize=_esize, nreg=_nreg, second=_second, subtract=_m == "sub"),
                    feature=_feature, doc=sem.za_add_asl(_m, _esize, _nreg, _second), group="za"))



@dataclass(frozen=True)
class DestructiveList(ConsecutiveList):
    """The multi-vector ADD's {Zdn1-Zdn<nreg>}, written twice: the second must name the first's registers."""

    conflict = "the second list must be the destination list (ADD {Zdn}, {Zdn}, Zm adds Zm to Zdn in place)"


# ADD (to vector): {Zdn1-Zdn<nreg>} = {Zdn1-Zdn<nreg>} + Zm
for _t, _sz, _esize in (("b", "00", 8), ("h", "01", 16), ("s", "10", 32), ("d", "11", 64)):
    for _nreg in (2, 4):
        _T = _t.upper()
        _zdn = "Zdn:4 0" if _nreg == 2 else "Zdn:3 00"
        _list = DestructiveList(_t, _nreg, "Zdn")
        _text = "{<Zdn1>.%s-<Zdn%d>.%s}" % (_T, _nreg, _T)
        add(A64Form(
            f"ADD_z_{_t}_x{_nreg}", "add", f"ADD {_text}, {_text}, <Zm>.{_T}",
            f"one Z register's {_esize}-bit elements added to each of {_nreg} consecutive Z registers",
            Encoding(f"11000001 size={_sz} 10 Zm:4 1010 {'0' if _nreg == 2 else '1'}011 000 {_zdn}"),
            (_list, _list, ZReg(_t, "Zm", 4)), partial(sem.add_to_vectors, esize=_esize), feature="SME2",
            doc=sem.add_to_vectors.__doc__.replace("esize", str(_esize)).replace("nreg", str(_nreg)),
            group="z_data"))

"""SME and SME2 ZA forms the ACLE intrinsics lower to beside the dots and outer products (semantics/sme2_za.py):
ADDHA and ADDVA (32-bit, and 64-bit with FEAT_SME_I16I64), the SME2 MOVA (printed MOV) of two or four tile slices
to consecutive Z registers and back, ZERO { ZT0 }, LDR ZT0 and STR ZT0."""

from __future__ import annotations

from functools import partial

from ..encoding import Encoding
from ..operands import PredMerge, ZaTile, ZaVectorGroup, ZReg
from ..operands.scalar import BaseOnly
from ..operands.sve import ZT0, ConsecutiveList, LutIndex, StridedList, ZaSliceRange
from ..operands.za import ZaVectorRange
from ..semantics import sme2_za
from .base import A64Form, add

for _t, _sz, _esize, _tail, _feature in (("s", "10", 32, "000 ZAda:2", "SME"), ("d", "11", 64, "00 ZAda:3", "SME_I16I64")):
    for _m, _v in (("addha", "0"), ("addva", "1")):
        add(A64Form(
            f"{_m.upper()}_{_t}", _m, f"{_m.upper()} <ZAda>.{_t.upper()}, <Pn>/M, <Pm>/M, <Zn>.{_t.upper()}",
            f"add Zn's {_esize}-bit elements to every {'row' if _v == '0' else 'column'} of a tile (rows active in Pn, "
            f"columns in Pm)",
            Encoding(f"11000000 size={_sz} 01000 V={_v} Pm:3 Pn:3 Zn:5 {_tail}"),
            (ZaTile(_t, "ZAda"), PredMerge("Pn"), PredMerge("Pm"), ZReg(_t, "Zn")),
            partial(sme2_za.add_to_tile, esize=_esize, vertical=_v == "1"), feature=_feature,
            doc=sme2_za.add_to_tile.__doc__, group="za"))

add(A64Form("ZERO_zt0", "zero", "ZERO { ZT0 }", "zero the 512-bit lookup table register ZT0",
            Encoding("11000000 01001000 00000000 00000001"), (ZT0(braces=True),), sme2_za.zero_zt0, feature="SME2",
            doc=sme2_za.zero_zt0.__doc__, group="za"))
for _m, _bit in (("ldr", "0"), ("str", "1")):
    _function = getattr(sme2_za, f"{_m}_zt0")
    add(A64Form(f"{_m.upper()}_zt0", _m, f"{_m.upper()} ZT0, [<Xn|SP>]",
                f"{'load' if _m == 'ldr' else 'store'} the 64 bytes of ZT0 {'from' if _m == 'ldr' else 'to'} memory",
                Encoding(f"11100001 0 0 {_bit} 11111 100000 Rn:5 00000"), (ZT0(), BaseOnly()), _function,
                feature="SME2", doc=_function.__doc__, group="za"))

for _t, _sz, _esize in (("b", "00", 8), ("h", "01", 16), ("s", "10", 32), ("d", "11", 64)):
    for _nreg in (2, 4):
        _width = 3 if _nreg == 2 or _t == "d" else 2
        _range, _source_range = ZaSliceRange(_t, _nreg, _width), ZaSliceRange(_t, _nreg, _width, source=True)
        _x4 = "001" if _nreg == 4 else "000"
        _to_z = f"{'0' * (5 - _width)} ZAo:{_width} " + ("Zd:4 0" if _nreg == 2 else "Zd:3 00")
        _to_za = ("Zn:4 0" if _nreg == 2 else "Zn:3 00") + f" {'0' * (5 - _width)} ZAo:{_width}"
        _list_d, _list_n = ConsecutiveList(_t, _nreg, "Zd"), ConsecutiveList(_t, _nreg, "Zn")
        _list_text = f"{{<Zd1>.{_t.upper()}-<Zd{_nreg}>.{_t.upper()}}}"
        add(A64Form(
            f"MOVA_z_za_{_t}_x{_nreg}", "mova", f"MOVA {_list_text}, <ZAn><HV>.{_t.upper()}[<Ws>, <offs1>:<offs{_nreg}>]",
            f"copy {_nreg} consecutive horizontal or vertical slices of a {_esize}-bit tile to {_nreg} Z registers",
            Encoding(f"11000000 size={_sz} 000110 V:1 Rs:2 {_x4} {_to_z}"), (_list_d, _source_range),
            partial(sme2_za.mova_slices_to_vectors, esize=_esize), feature="SME2",
            doc=sme2_za.mova_slices_to_vectors.__doc__, group="za_move", extra={"alias": "mov"}))
        add(A64Form(
            f"MOVA_za_z_{_t}_x{_nreg}", "mova",
            f"MOVA <ZAd><HV>.{_t.upper()}[<Ws>, <offs1>:<offs{_nreg}>], {_list_text.replace('Zd', 'Zn')}",
            f"copy {_nreg} Z registers to {_nreg} consecutive horizontal or vertical slices of a {_esize}-bit tile",
            Encoding(f"11000000 size={_sz} 000100 V:1 Rs:2 {_x4} {_to_za}"), (_range, _list_n),
            partial(sme2_za.mova_vectors_to_slices, esize=_esize), feature="SME2",
            doc=sme2_za.mova_vectors_to_slices.__doc__, group="za_move", extra={"alias": "mov"}))

# LUTI2/LUTI4: ZT0 looked up with 2- or 4-bit indices from a segment of Zn, into one, two or four Z registers
for _m, _isize, _head in (("luti2", 2, "0011"), ("luti4", 4, "0010 1")):
    for _nreg, _ibits, _lists in ((1, 4 if _isize == 2 else 3, "b h s"), (2, 3 if _isize == 2 else 2, "b h s"),
                                  (4, 2 if _isize == 2 else 1, "h s" if _isize == 4 else "b h s")):
        for _t in _lists.split():
            _sz, _esize = {"b": ("00", 8), "h": ("01", 16), "s": ("10", 32)}[_t]
            _mid = {1: "", 2: " 1", 4: " 10"}[_nreg]
            _zd = {1: "Zd:5", 2: "Zd:4 0", 4: "Zd:3 00"}[_nreg]
            _top = "11" if _nreg == 1 else "10"
            _list = ZReg(_t, "Zd") if _nreg == 1 else ConsecutiveList(_t, _nreg, "Zd")
            add(A64Form(
                f"{_m.upper()}_{_t}_x{_nreg}", _m,
                f"{_m.upper()} " + (f"<Zd>.{_t.upper()}" if _nreg == 1 else
                                    f"{{<Zd1>.{_t.upper()}-<Zd{_nreg}>.{_t.upper()}}}") + ", ZT0, <Zn>[<index>]",
                f"{_nreg} vector{'s' if _nreg > 1 else ''} of {_esize}-bit elements looked up in ZT0 with {_isize}-bit "
                f"indices from a segment of Zn",
                Encoding(f"11000000 {_top} {_head} i:{_ibits}{_mid} size={_sz} 00 Zn:5 {_zd}"),
                (_list, ZT0(), LutIndex("Zn", "i", _ibits)),
                partial(sme2_za.luti, esize=_esize, isize=_isize) if _nreg > 1 else
                partial(sme2_za.luti_single, esize=_esize, isize=_isize),
                feature="SME2", doc=sme2_za.luti.__doc__, group="z_data"))


# SME2.1's LUTI2/LUTI4 into a strided list ({z0.b, z8.b}, {z0.h, z4.h, z8.h, z12.h}): the same lookups
for _m, _isize, _head in (("luti2", 2, "0111"), ("luti4", 4, "0110 1")):
    for _nreg, _ibits, _lists in ((2, 3 if _isize == 2 else 2, "b h"), (4, 2 if _isize == 2 else 1, "b h" if _isize == 2 else "h")):
        for _t in _lists.split():
            _sz, _esize = {"b": ("00", 8), "h": ("01", 16)}[_t]
            _zd = "T:1 0 Zt:3" if _nreg == 2 else "T:1 00 Zt:2"
            add(A64Form(
                f"{_m.upper()}_{_t}_x{_nreg}_strided", _m,
                f"{_m.upper()} {{<Zd1>.{_t.upper()}, ... <Zd{_nreg}>.{_t.upper()}}}, ZT0, <Zn>[<index>]",
                f"{_nreg} vectors {16 // _nreg} apart of {_esize}-bit elements looked up in ZT0 with {_isize}-bit "
                f"indices from a segment of Zn",
                Encoding(f"11000000 10 {_head} i:{_ibits} {'1' if _nreg == 2 else '10'} size={_sz} 00 Zn:5 {_zd}"),
                (StridedList(_t, _nreg), ZT0(), LutIndex("Zn", "i", _ibits)),
                partial(sme2_za.luti, esize=_esize, isize=_isize), feature="SME2p1", doc=sme2_za.luti.__doc__,
                group="z_data"))

# SME2.1's ZERO of ZA vectors: one, two or four from each member of a VGx1/VGx2/VGx4 group.  (nreg, ways) ->
# (opc, bit 15, offset bits); without a VGx the range is VGx1's, so VGx2/VGx4 must be written.
_ZERO_SHAPES = {(1, 2): ("00", "1", 3), (1, 4): ("10", "1", 2), (2, 1): ("00", "0", 3), (2, 2): ("01", "0", 2),
                (2, 4): ("11", "0", 1), (4, 1): ("10", "0", 3), (4, 2): ("01", "1", 2), (4, 4): ("11", "1", 1)}
for (_nreg, _ways), (_opc, _b15, _bits) in _ZERO_SHAPES.items():
    _field = f"off{_bits}"
    if _ways == 1:
        _group, _offs = ZaVectorGroup("d", _nreg, vgx_written=True), "<offs>"
    else:
        _group = ZaVectorRange("d", _nreg, _ways, _bits, _field, vgx_written=True)
        _offs = f"<offs1>:<offs{_ways}>"
    _vgx = f", VGx{_nreg}" if _nreg > 1 else ""
    add(A64Form(
        f"ZERO_za_d_vgx{_nreg}_x{_ways}", "zero", f"ZERO ZA.D[<Wv>, {_offs}{_vgx}]",
        f"zero {_ways} consecutive ZA vectors" if _nreg == 1 else
        f"zero {_ways} consecutive ZA vector{'s' if _ways > 1 else ''} in each of the {_nreg} members of a ZA "
        f"vector group",
        Encoding(f"11000000 00001 1 opc={_opc} {_b15} Rv:2 0000000000 {'0' * (3 - _bits)} "
                 f"{'off3:3' if _ways == 1 else f'{_field}:{_bits}'}"),
        (_group,), partial(sme2_za.zero_vector_groups, nreg=_nreg, ways=_ways), feature="SME2p1",
        doc=sme2_za.zero_vector_groups.__doc__, group="za"))

"""Moving ZA to and from registers and memory: LDR/STR ZA, MOVA (tile slices and SME2 vector
groups), LD1*/ST1* of tile slices."""

from __future__ import annotations

from functools import partial

from ..encoding import Encoding
from ..operands import (Governing, MulVlAddress, PredMerge, ScalarPlusScalar, ZaArrayVector, ZaSlice, ZaSliceList,
                        ZaVectorGroup, ZList, ZReg)
from ..semantics import vector_memory, za_moves
from .base import A64Form, add


# LDR/STR ZA[Wv, offs], [Xn{, #offs, MUL VL}]: one ZA vector from or to memory (the offset is both's)
for _m, _bit, _what in (("ldr", "0", "load"), ("str", "1", "store")):
    add(A64Form(
        f"{_m.upper()}_za", _m, f"{_m.upper()} ZA[<Wv>, <offs>], [<Xn|SP>{{, #<offs>, MUL VL}}]",
        f"{_what} one ZA array vector ({'from' if _m == 'ldr' else 'to'} memory at Xn + offs * SVL/8)",
        Encoding(f"1110000 1 00{_bit} 00000 0 Rv:2 000 Rn:5 0 off4:4"), (ZaArrayVector(), MulVlAddress("off4")),
        getattr(za_moves, f"{_m}_za"), feature="SME", doc=getattr(za_moves, f"{_m}_za").__doc__, group="za"))

# MOVA tile slice <-> Z (printed as MOV, its alias): size and Q give the element size
_TILE_SIZES = {"b": ("00", "0", 8), "h": ("01", "0", 16), "s": ("10", "0", 32), "d": ("11", "0", 64),
               "q": ("11", "1", 128)}
for _t, (_sz, _q, _esize) in _TILE_SIZES.items():
    add(A64Form(
        f"MOVA_z_za_{_t}", "mova", f"MOVA <Zd>.{_t.upper()}, <Pg>/M, <ZAn><HV>.{_t.upper()}[<Ws>, <offs>]",
        f"copy the active {_esize}-bit elements of a horizontal or vertical ZA tile slice to a Z register",
        Encoding(f"11000000 size={_sz} 0000 1 Q={_q} V:1 Rs:2 Pg:3 0 ZAn:4 Zd:5"),
        (ZReg(_t, "Zd"), PredMerge(), ZaSlice(_t)), partial(za_moves.mova_to_vector, esize=_esize),
        feature="SME", doc=za_moves.mova_to_vector.__doc__.replace("esize", str(_esize)), group="za_move",
        extra={"alias": "mov"}))
    add(A64Form(
        f"MOVA_za_z_{_t}", "mova", f"MOVA <ZAd><HV>.{_t.upper()}[<Ws>, <offs>], <Pg>/M, <Zn>.{_t.upper()}",
        f"copy the active {_esize}-bit elements of a Z register to a horizontal or vertical ZA tile slice",
        Encoding(f"11000000 size={_sz} 0000 0 Q={_q} V:1 Rs:2 Pg:3 Zn:5 0 ZAd:4"),
        (ZaSlice(_t, "ZAd"), PredMerge(), ZReg(_t, "Zn")), partial(za_moves.mova_to_tile, esize=_esize),
        feature="SME", doc=za_moves.mova_to_tile.__doc__.replace("esize", str(_esize)), group="za_move",
        extra={"alias": "mov"}))



# SME2 MOVA between a ZA vector group and a list of Z registers (any element size names the same
# vectors; llvm prints .d and the MOV alias)
for _nreg, _low_to_z, _low_to_za in ((2, "010 00 off3:3 Zd:4 0", "010 Zn:4 000 off3:3"),
                                     (4, "011 00 off3:3 Zd:3 00", "011 Zn:3 0000 off3:3")):
    add(A64Form(
        f"MOVA_z_zad_vgx{_nreg}", "mova", "MOVA {<Zd1>.D-<Zd%d>.D}, ZA.D[<Wv>, <offs>{, VGx%d}]" % (_nreg, _nreg),
        f"copy a {_nreg}-vector ZA group to {_nreg} consecutive Z registers",
        Encoding(f"11000000 00000110 0 Rv:2 {_low_to_z}"),
        (ZList("d", _nreg, "Zd", _nreg, any_size=True), ZaVectorGroup("d", _nreg, any_size=True)),
        partial(za_moves.mova_group_to_vectors, nreg=_nreg), feature="SME2",
        doc=za_moves.mova_group_to_vectors.__doc__.replace("nreg-1", str(_nreg - 1)).replace("nreg", str(_nreg)),
        group="za_move", extra={"alias": "mov"}))
    add(A64Form(
        f"MOVA_zad_z_vgx{_nreg}", "mova", "MOVA ZA.D[<Wv>, <offs>{, VGx%d}], {<Zn1>.D-<Zn%d>.D}" % (_nreg, _nreg),
        f"copy {_nreg} consecutive Z registers to a {_nreg}-vector ZA group",
        Encoding(f"11000000 00000100 0 Rv:2 {_low_to_za}"),
        (ZaVectorGroup("d", _nreg, any_size=True), ZList("d", _nreg, "Zn", _nreg, any_size=True)),
        partial(za_moves.mova_vectors_to_group, nreg=_nreg), feature="SME2",
        doc=za_moves.mova_vectors_to_group.__doc__.replace("nreg-1", str(_nreg - 1)).replace("nreg", str(_nreg)),
        group="za_move", extra={"alias": "mov"}))


# SME2.1's MOVAZ: MOVA that zeroes what it read (a tile slice, or a ZA vector group), no governing predicate
for _t, (_sz, _q, _esize) in _TILE_SIZES.items():
    add(A64Form(
        f"MOVAZ_z_za_{_t}", "movaz", f"MOVAZ <Zd>.{_t.upper()}, <ZAn><HV>.{_t.upper()}[<Ws>, <offs>]",
        f"move a horizontal or vertical ZA tile slice of {_esize}-bit elements to a Z register and zero the slice",
        Encoding(f"11000000 size={_sz} 0000 1 Q={_q} V:1 Rs:2 000 1 ZAn:4 Zd:5"), (ZReg(_t, "Zd"), ZaSlice(_t)),
        partial(za_moves.movaz_to_vector, esize=_esize), feature="SME2p1",
        doc=za_moves.movaz_to_vector.__doc__.replace("esize", str(_esize)), group="za"))
for _nreg, _low in ((2, "010 10 off3:3 Zd:4 0"), (4, "011 10 off3:3 Zd:3 00")):
    add(A64Form(
        f"MOVAZ_z_zad_vgx{_nreg}", "movaz", "MOVAZ {<Zd1>.D-<Zd%d>.D}, ZA.D[<Wv>, <offs>{, VGx%d}]" % (_nreg, _nreg),
        f"move a {_nreg}-vector ZA group to {_nreg} consecutive Z registers and zero the group",
        Encoding(f"11000000 00000110 0 Rv:2 {_low}"),
        (ZList("d", _nreg, "Zd", _nreg, any_size=True), ZaVectorGroup("d", _nreg, any_size=True)),
        partial(za_moves.movaz_group_to_vectors, nreg=_nreg), feature="SME2p1",
        doc=za_moves.movaz_group_to_vectors.__doc__.replace("nreg-1", str(_nreg - 1)).replace("nreg", str(_nreg)),
        group="za"))


# LD1B/LD1H/LD1W/LD1D/LD1Q and ST1* of one ZA tile slice: [Xn|SP{, Xm, LSL #log2(esize/8)}]
for _t, (_sz, _q, _esize) in _TILE_SIZES.items():
    _letter = {"b": "b", "h": "h", "s": "w", "d": "d", "q": "q"}[_t]
    _shift = (_esize // 8).bit_length() - 1
    for _m, _bit, _governing in (("ld1", "0", Governing(zeroing=True)), ("st1", "1", Governing(zeroing=False))):
        _function = vector_memory.ld1_tile if _m == "ld1" else vector_memory.st1_tile
        add(A64Form(
            f"{_m.upper()}{_letter.upper()}_za_{_t}", f"{_m}{_letter}",
            f"{_m.upper()}{_letter.upper()} {{<ZAt><HV>.{_t.upper()}[<Ws>, <offs>]}}, <Pg>{'/Z' if _m == 'ld1' else ''}"
            f", [<Xn|SP>{{, <Xm>{', LSL #%d' % _shift if _shift else ''}}}]",
            f"{'load' if _m == 'ld1' else 'store'} the active {_esize}-bit elements of a horizontal or vertical ZA "
            f"tile slice {'from' if _m == 'ld1' else 'to'} memory" + (" (inactive ones zeroed)" if _m == "ld1" else ""),
            Encoding(f"1110000 q={_q} msz={_sz} {_bit} Rm:5 V:1 Rs:2 Pg:3 Rn:5 0 ZAt:4"),
            (ZaSliceList(_t), _governing, ScalarPlusScalar(_shift, xzr_is_none=True)),
            partial(_function, esize=_esize), feature="SME", doc=_function.__doc__.replace("esize", str(_esize)),
            group="za_memory"))

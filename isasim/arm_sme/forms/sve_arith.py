"""SVE predicated integer arithmetic and compares (semantics/sve_arith.py): the destructive binary forms
(ADD, SUB, SUBR, SMAX, UMAX, SMIN, UMIN, SABD, UABD, MUL, SMULH, UMULH, SDIV, UDIV, SDIVR, UDIVR, ORR, EOR,
AND, BIC), MLA, MLS, MAD, MSB, and CMPEQ/NE/GE/GT/HI/HS of two vectors and CMPEQ/NE/GE/GT/LT/LE (signed
immediate) and CMPHI/HS/LO/LS (unsigned immediate); llvm prints CMPLT of two vectors as CMPGT with them
swapped, so that is the one spelling here."""

from __future__ import annotations

from functools import partial

from ..encoding import Encoding
from ..operands import Governing, Imm, PReg, PredMerge, ZReg
from ..operands.sve import SImmField
from ..semantics import sve_arith
from .base import A64Form, add

SIZES = {"b": ("00", 8), "h": ("01", 16), "s": ("10", 32), "d": ("11", 64)}

for _op, _opc in (("add", "00000"), ("sub", "00001"), ("subr", "00011"), ("smax", "01000"), ("umax", "01001"),
                  ("smin", "01010"), ("umin", "01011"), ("sabd", "01100"), ("uabd", "01101"), ("mul", "10000"),
                  ("smulh", "10010"), ("umulh", "10011"), ("sdiv", "10100"), ("udiv", "10101"), ("sdivr", "10110"),
                  ("udivr", "10111"), ("orr", "11000"), ("eor", "11001"), ("and", "11010"), ("bic", "11011")):
    for _t, (_sz, _esize) in SIZES.items():
        if "div" in _op and _esize < 32:
            continue  # the divides have .S and .D forms only
        _T = _t.upper()
        add(A64Form(
            f"{_op.upper()}_z_p_{_t}", _op, f"{_op.upper()} <Zdn>.{_T}, <Pg>/M, <Zdn>.{_T}, <Zm>.{_T}",
            f"{_op.upper()} of the active {_esize}-bit elements of Zdn and Zm into Zdn (inactive ones kept)",
            Encoding(f"00000100 size={_sz} 0 opc={_opc} 000 Pg:3 Zm:5 Zdn:5"),
            (ZReg(_t, "Zdn"), PredMerge(), ZReg(_t, "Zdn"), ZReg(_t, "Zm")),
            partial(sve_arith.binary_predicated, esize=_esize, op=_op), feature="SME",
            doc=sve_arith.binary_predicated.__doc__, group="z_data"))

for _t, (_sz, _esize) in SIZES.items():
    _T = _t.upper()
    for _op, _bits in (("mla", "01 0"), ("mls", "01 1")):
        add(A64Form(
            f"{_op.upper()}_{_t}", _op, f"{_op.upper()} <Zda>.{_T}, <Pg>/M, <Zn>.{_T}, <Zm>.{_T}",
            f"{'add' if _op == 'mla' else 'subtract'} the products of the active {_esize}-bit elements of Zn and Zm "
            f"{'to' if _op == 'mla' else 'from'} Zda",
            Encoding(f"00000100 size={_sz} 0 Zm:5 {_bits} Pg:3 Zn:5 Zda:5"),
            (ZReg(_t, "Zda"), PredMerge(), ZReg(_t, "Zn"), ZReg(_t, "Zm")),
            partial(sve_arith.multiply_add, esize=_esize, op=_op), feature="SME",
            doc=sve_arith.multiply_add.__doc__, group="z_data"))
    for _op, _bits in (("mad", "11 0"), ("msb", "11 1")):
        add(A64Form(
            f"{_op.upper()}_{_t}", _op, f"{_op.upper()} <Zdn>.{_T}, <Pg>/M, <Zm>.{_T}, <Za>.{_T}",
            f"Za {'plus' if _op == 'mad' else 'minus'} the products of the active {_esize}-bit elements of Zdn and "
            f"Zm, into Zdn",
            Encoding(f"00000100 size={_sz} 0 Zm:5 {_bits} Pg:3 Za:5 Zdn:5"),
            (ZReg(_t, "Zdn"), PredMerge(), ZReg(_t, "Zm"), ZReg(_t, "Za")),
            partial(sve_arith.multiply_add, esize=_esize, op=_op), feature="SME",
            doc=sve_arith.multiply_add.__doc__, group="z_data"))

for _t, (_sz, _esize) in SIZES.items():
    _T = _t.upper()
    for _cond, _op, _o2, _ne, _signed in (("ge", "1", "0", "0", True), ("gt", "1", "0", "1", True),
                                          ("eq", "1", "1", "0", True), ("ne", "1", "1", "1", True),
                                          ("hs", "0", "0", "0", False), ("hi", "0", "0", "1", False)):
        add(A64Form(
            f"CMP{_cond.upper()}_{_t}", f"cmp{_cond}", f"CMP{_cond.upper()} <Pd>.{_T}, <Pg>/Z, <Zn>.{_T}, <Zm>.{_T}",
            f"a predicate of the active {_esize}-bit elements where Zn {_cond.upper()} Zm; sets NZCV",
            Encoding(f"00100100 size={_sz} 0 Zm:5 {_op} 0 {_o2} Pg:3 Zn:5 {_ne} Pd:4"),
            (PReg(_t, "Pd"), Governing(zeroing=True), ZReg(_t, "Zn"), ZReg(_t, "Zm")),
            partial(sve_arith.compare, esize=_esize, cond={"hs": "ge", "hi": "gt"}.get(_cond, _cond),
                    signed=_signed, immediate=False),
            feature="SME", doc=sve_arith.compare.__doc__, group="predicate"))
    for _cond, _bits, _ne in (("ge", "0 0 0", "0"), ("gt", "0 0 0", "1"), ("lt", "0 0 1", "0"), ("le", "0 0 1", "1"),
                              ("eq", "1 0 0", "0"), ("ne", "1 0 0", "1")):
        add(A64Form(
            f"CMP{_cond.upper()}_{_t}_imm", f"cmp{_cond}", f"CMP{_cond.upper()} <Pd>.{_T}, <Pg>/Z, <Zn>.{_T}, #<imm>",
            f"a predicate of the active {_esize}-bit elements where Zn {_cond.upper()} a signed immediate "
            f"(-16..15); sets NZCV",
            Encoding(f"00100101 size={_sz} 0 imm5:5 {_bits} Pg:3 Zn:5 {_ne} Pd:4"),
            (PReg(_t, "Pd"), Governing(zeroing=True), ZReg(_t, "Zn"), SImmField("imm5")),
            partial(sve_arith.compare, esize=_esize, cond=_cond, signed=True, immediate=True),
            feature="SME", doc=sve_arith.compare.__doc__, group="predicate"))
    for _cond, _lt, _ne in (("hs", "0", "0"), ("hi", "0", "1"), ("lo", "1", "0"), ("ls", "1", "1")):
        add(A64Form(
            f"CMP{_cond.upper()}_{_t}_imm", f"cmp{_cond}", f"CMP{_cond.upper()} <Pd>.{_T}, <Pg>/Z, <Zn>.{_T}, #<imm>",
            f"a predicate of the active {_esize}-bit elements where Zn {_cond.upper()} an unsigned immediate "
            f"(0..127); sets NZCV",
            Encoding(f"00100100 size={_sz} 1 imm7:7 {_lt} Pg:3 Zn:5 {_ne} Pd:4"),
            (PReg(_t, "Pd"), Governing(zeroing=True), ZReg(_t, "Zn"), Imm("imm7", 7)),
            partial(sve_arith.compare, esize=_esize, cond={"hs": "ge", "hi": "gt", "lo": "lt", "ls": "le"}[_cond],
                    signed=False, immediate=True),
            feature="SME", doc=sve_arith.compare.__doc__, group="predicate"))

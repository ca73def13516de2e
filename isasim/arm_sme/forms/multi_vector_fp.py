"""SME2's floating-point operations on groups of Z registers (semantics/multi_vector_fp.py): FMAX/FMIN/FMAXNM/FMINNM
of .H/.S/.D elements and BFMAX/BFMIN/BFMAXNM/BFMINNM (FEAT_SVE_B16B16) of a group of two or four and a single vector
or a group; FCLAMP/BFCLAMP of a group; FCVT/FCVTN and BFCVT/BFCVTN of two single-precision registers into one;
FCVTZS/FCVTZU, SCVTF/UCVTF and FRINTA/FRINTM/FRINTN/FRINTP of two or four."""

from __future__ import annotations

from functools import partial

from ..encoding import Encoding
from ..operands import ZList, ZReg
from ..operands.base import FpReg
from ..semantics import multi_vector_fp as mvf
from .base import A64Form, add
from .multi_vector import _group, add_in_place_group_forms

_FORMATS = (("h", "01", "fp16"), ("s", "10", "fp32"), ("d", "11", "fp64"), ("bf", "00", "bf16"))
_SUFFIX = {"h": "h", "s": "s", "d": "d", "bf": "h"}


# ---- FMAX FMIN FMAXNM FMINNM (and BF*) -----------------------------------------------------------------------
_MINMAX = {"max": ("000", "0"), "min": ("000", "1"), "maxnm": ("001", "0"), "minnm": ("001", "1")}
_WHAT = {"max": "the maximum", "min": "the minimum", "maxnm": "the maximum number (a quiet NaN loses)",
         "minnm": "the minimum number (a quiet NaN loses)"}
for _name, (_b, _u) in _MINMAX.items():
    for _f, _sz, _kind in _FORMATS:
        _op = ("bf" if _f == "bf" else "f") + _name
        add_in_place_group_forms(
            _op, _SUFFIX[_f], _sz, f"001 {_b}", _u, f"{_WHAT[_name]} of each {_kind} element",
            lambda nreg, single, f=_f, name=_name: partial(mvf.minmax, fmt=mvf.FORMATS[f], nreg=nreg, op="f" + name,
                                                          single=single),
            "SVE_B16B16" if _f == "bf" else "SME2")

# ---- FCLAMP BFCLAMP -------------------------------------------------------------------------------------------
for _f, _sz, _kind in _FORMATS:
    _op = "bfclamp" if _f == "bf" else "fclamp"
    _t = _SUFFIX[_f]
    _T = _t.upper()
    for _nreg in (2, 4):
        add(A64Form(
            f"{_op.upper()}_x{_nreg}_{_t}", _op, f"{_op.upper()} {{<Zd1>.{_T}-<Zd{_nreg}>.{_T}}}, <Zn>.{_T}, <Zm>.{_T}",
            f"each {_kind} element of {_nreg} registers clamped to between Zn's and Zm's (FPMaxNum, FPMinNum)",
            Encoding(f"11000001 size={_sz} 1 Zm:5 1100 {'1' if _nreg == 4 else '0'} 0 Zn:5 "
                     + ("Zd:4 0" if _nreg == 2 else "Zd:3 00")),
            (_group(_t, _nreg, "Zd"), ZReg(_t, "Zn"), ZReg(_t, "Zm")),
            partial(mvf.clamp, fmt=mvf.FORMATS[_f], nreg=_nreg), feature="SVE_B16B16" if _f == "bf" else "SME2", doc=mvf.clamp.__doc__,
            group="z_data"))

# ---- FCVT FCVTN BFCVT BFCVTN: {Zn.S, Zn+1.S} -> Zd.H ---------------------------------------------------------------
for _op, _top, _n in (("fcvt", "00100000", "0"), ("fcvtn", "00100000", "1"), ("bfcvt", "01100000", "0"),
                      ("bfcvtn", "01100000", "1")):
    _target = mvf.BF16 if _op.startswith("bf") else mvf.FP16
    add(A64Form(
        f"{_op.upper()}_x2", _op, f"{_op.upper()} <Zd>.H, {{<Zn1>.S-<Zn2>.S}}",
        f"the single-precision elements of two registers converted to {'BFloat16' if _op.startswith('bf') else 'half precision'}, "
        + ("interleaved" if _n == "1" else "one register after the other"),
        Encoding(f"11000001 {_top} 111000 Zn:4 N={_n} Zd:5"), (ZReg("h", "Zd"), _group("s", 2, "Zn")),
        partial(mvf.convert_narrow, target=_target, interleave=_n == "1"), feature="SME2",
        doc=mvf.convert_narrow.__doc__, group="z_data"))

# ---- FCVTZS FCVTZU SCVTF UCVTF FRINT*: {Zd.S...}, {Zn.S...} --------------------------------------------------------
_UNARY = [("fcvtzs", "0001", "0", partial(mvf.to_integer, unsigned=False), "rounded toward zero to signed integers"),
          ("fcvtzu", "0001", "1", partial(mvf.to_integer, unsigned=True), "rounded toward zero to unsigned integers"),
          ("scvtf", "0010", "0", partial(mvf.from_integer, unsigned=False), "signed integers converted"),
          ("ucvtf", "0010", "1", partial(mvf.from_integer, unsigned=True), "unsigned integers converted")]
for _op, _opc, _u, _function, _what in _UNARY:
    for _nreg in (2, 4):
        _enc = (f"11000001 0010 {_opc} 111000 Zn:4 U={_u} Zd:4 0" if _nreg == 2 else
                f"11000001 0011 {_opc} 111000 Zn:3 0 U={_u} Zd:3 00")
        add(A64Form(
            f"{_op.upper()}_x{_nreg}", _op, f"{_op.upper()} {{<Zd1>.S-<Zd{_nreg}>.S}}, {{<Zn1>.S-<Zn{_nreg}>.S}}",
            f"{_nreg} registers of 32-bit elements: {_what}", Encoding(_enc),
            (_group("s", _nreg, "Zd"), _group("s", _nreg, "Zn")), partial(_function, nreg=_nreg), feature="SME2",
            doc=_function.func.__doc__, group="z_data"))
for _op, _opc, _rounding, _what in (("frintn", "000", "TIEEVEN", "to nearest, ties to even"),
                                    ("frintp", "001", "POSINF", "toward plus infinity"),
                                    ("frintm", "010", "NEGINF", "toward minus infinity"),
                                    ("frinta", "100", "TIEAWAY", "to nearest, ties away from zero")):
    for _nreg in (2, 4):
        _enc = (f"11000001 101 0 1 {_opc} 111000 Zn:4 0 Zd:4 0" if _nreg == 2 else
                f"11000001 101 1 1 {_opc} 111000 Zn:3 00 Zd:3 00")
        add(A64Form(
            f"{_op.upper()}_x{_nreg}", _op, f"{_op.upper()} {{<Zd1>.S-<Zd{_nreg}>.S}}, {{<Zn1>.S-<Zn{_nreg}>.S}}",
            f"{_nreg} registers of single-precision elements rounded to integral values {_what}", Encoding(_enc),
            (_group("s", _nreg, "Zd"), _group("s", _nreg, "Zn")),
            partial(mvf.round_integral, nreg=_nreg, rounding=_rounding), feature="SME2",
            doc=mvf.round_integral.__doc__, group="z_data"))


# ---- BFMUL, BFSCALE (FEAT_SVE_BFSCALE) -----------------------------------------------------------------------------
# QEMU 11.1 has no FEAT_SVE_BFSCALE (UNDEFINED even with SVE on): tests/arm_sme/semantics/test_multi_vector_vs_qemu.py
# holds them to hand-worked values instead
_NOT_IN_QEMU = {"not_fuzzed": "QEMU 11.1 lacks FEAT_SVE_BFSCALE"}
for _nreg in (2, 4):
    _x4 = "1" if _nreg == 4 else "0"
    _list = "{<Z%s1>.H-<Z%s" + str(_nreg) + ">.H}"
    for _single in (True, False):
        _zm = "Zm:4 " + _x4 if _single else ("Zm:4 0" if _nreg == 2 else "Zm:3 0 1")
        _lists = ("Zn:4 0 Zd:4 0" if _nreg == 2 else "Zn:3 00 Zd:3 00")
        _kind = "single" if _single else "multi"
        add(A64Form(
            f"BFMUL_x{_nreg}_{_kind}_h", "bfmul",
            f"BFMUL {_list % ('d', 'd')}, {_list % ('n', 'n')}, " + ("<Zm>.H" if _single else _list % ("m", "m")),
            f"the BFloat16 products of {_nreg} registers and " + ("one register" if _single else f"{_nreg} registers"),
            Encoding(f"11000001 001 {_zm} {'111010' if _single else '111001'} {_lists}"),
            (_group("h", _nreg, "Zd"), _group("h", _nreg, "Zn"),
             ZReg("h", "Zm", bits=4) if _single else _group("h", _nreg, "Zm")),
            partial(mvf.bfmul, nreg=_nreg, single=_single), feature="SVE_BFSCALE", doc=mvf.bfmul.__doc__,
            group="z_data", extra=_NOT_IN_QEMU))
        _zdn = "Zdn:4" if _nreg == 2 else "Zdn:3 0"
        _zm2 = "10 Zm:4" if _single else ("1 Zm:4 0" if _nreg == 2 else "1 Zm:3 00")
        add(A64Form(
            f"BFSCALE_x{_nreg}_{_kind}_h", "bfscale",
            f"BFSCALE {_list % ('dn', 'dn')}, {_list % ('dn', 'dn')}, " + ("<Zm>.H" if _single else _list % ("m", "m")),
            f"each BFloat16 element of {_nreg} registers times 2 to the power of a 16-bit integer of "
            + ("one register" if _single else f"{_nreg} registers") + ", in place",
            Encoding(f"11000001 size=00 {_zm2} 101{'0' if _single else '1'} {_x4} 001 100 {_zdn} 0"),
            (_group("h", _nreg, "Zdn"), _group("h", _nreg, "Zdn"),
             ZReg("h", "Zm", bits=4) if _single else _group("h", _nreg, "Zm")),
            partial(mvf.bfscale, nreg=_nreg, single=_single), feature="SVE_BFSCALE", doc=mvf.bfscale.__doc__,
            group="z_data", extra=_NOT_IN_QEMU))


# ---- FMULX, FRECPS, FRSQRTS, FRECPE, FRSQRTE, FRECPX of H registers (scalar FEAT_FP16: legal in streaming mode) ----
for _op, _pattern, _two in (("fmulx", "01011110 010 Rm:5 000111 Rn:5 Rd:5", True),
                            ("frecps", "01011110 010 Rm:5 001111 Rn:5 Rd:5", True),
                            ("frsqrts", "01011110 110 Rm:5 001111 Rn:5 Rd:5", True),
                            ("frecpe", "01011110 11111001 110110 Rn:5 Rd:5", False),
                            ("frsqrte", "01111110 11111001 110110 Rn:5 Rd:5", False),
                            ("frecpx", "01011110 11111001 111110 Rn:5 Rd:5", False)):
    _operands = (FpReg("Rd", "h"), FpReg("Rn", "h")) + ((FpReg("Rm", "h"),) if _two else ())
    add(A64Form(
        f"{_op.upper()}_h", _op, f"{_op.upper()} <Hd>, <Hn>" + (", <Hm>" if _two else ""),
        {"fmulx": "the half-precision product (0 * infinity = 2.0)", "frecps": "2.0 - Hn * Hm, rounded once",
         "frsqrts": "(3.0 - Hn * Hm) / 2.0, rounded once", "frecpe": "an estimate of 1 / Hn (8 fraction bits)",
         "frsqrte": "an estimate of 1 / sqrt(Hn) (8 fraction bits)",
         "frecpx": "Hn's exponent inverted (a scale for the reciprocal), fraction zero"}[_op],
        Encoding(_pattern), _operands, partial(mvf.scalar_fp16, op=_op), feature="SME", doc=mvf.scalar_fp16.__doc__,
        group="scalar"))

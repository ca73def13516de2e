"""SME2.2's quarter-tile outer products (FEAT_SME_MOP4, semantics/quarter_tile_outer_products.py): SMOP4A/SMOP4S,
UMOP4A/UMOP4S, SUMOP4A/SUMOP4S, USMOP4A/USMOP4S (4-way .B->.S and .H->.D, 2-way .H->.S for SMOP4/UMOP4),
FMOP4A/FMOP4S (.S, .D, .H and the widening .H->.S) and BFMOP4A/BFMOP4S (widening .H->.S, non-widening .H).
Each has four encodings: Zn one register or a pair, Zm one register or a pair.  Zn is an even register of
z0-z14 (a pair: {z0-z1} ... {z14-z15}), Zm an even register of z16-z30; the encoding holds their number
DIV 2 (Zm's less 16).  Unpredicated."""

from __future__ import annotations

from dataclasses import dataclass

from ..encoding import Encoding
from ..faults import UNDEFINED
from ..operands import OperandError, ZaTile, ZList, ZReg
from ..operands.common import _shape
from ..operands.vector import _zreg, parse_list
from ..semantics import quarter_tile_outer_products as sem
from ..semantics.quarter_tile_outer_products import Mop4Shape
from .base import A64Form, add


def _range(base: int) -> str:
    return f"z{base}-z{base + 14}"


@dataclass(frozen=True)
class EvenZ(ZReg):
    """``Zn.T`` (an even register of z0-z14, base 0) or ``Zm.T`` (an even one of z16-z30, base 16): the
    field holds (number - base) DIV 2."""

    base: int = 0

    def parse(self, text: str) -> dict:
        if text.strip().startswith("{"):
            raise _shape(f"{text.strip()} is a list, not a single register")
        n, t = _zreg(text)
        if t != self.suffix:
            raise _shape(f"{text.strip()} is .{t}, not this form's .{self.suffix}")
        if n % 2 or not self.base <= n <= self.base + 14:
            raise OperandError(f"{self.field} must be an even register of {_range(self.base)} here, not z{n}")
        return {self.field: (n - self.base) // 2}

    def text(self, fields: dict) -> str:
        return f"z{self.value(fields)}.{self.suffix}"

    def value(self, fields: dict) -> int:
        return self.base + 2 * fields[self.field]


@dataclass(frozen=True)
class EvenPair(ZList):
    """``{Zn1.T-Zn2.T}``: two consecutive registers, the first an even one of z0-z14 (base 0) or of z16-z30
    (base 16); the field holds (first - base) DIV 2."""

    base: int = 0

    def parse(self, text: str) -> dict:
        regs = parse_list(text)
        if regs[0][1] != self.suffix:
            raise _shape(f"{text.strip()} holds .{regs[0][1]} elements, not this form's .{self.suffix}")
        if len(regs) != 2:
            raise _shape(f"{text.strip()} is {len(regs)} registers, not this form's 2")
        first = regs[0][0]
        if first % 2 or not self.base <= first <= self.base + 14:
            raise OperandError(f"the pair {text.strip()} must start at an even register of {_range(self.base)}")
        return {self.field: (first - self.base) // 2}

    def first(self, fields: dict) -> int:
        return self.base + 2 * fields[self.field]


# (ZA element, source element) -> the bits of the encoding beside the operands (bit 31 first); u0 = 1: Zn
# unsigned, u1 = 1: Zm unsigned, S = 1: subtract, M/N = 1: Zm/Zn a pair
INTEGER = {("s", "b"): "1000000 {u0} 00 {u1} {M} Zm:3 0 100000 {N} Zn:3 0 {S} 0 0 ZAda:2",
           ("s", "h"): "1000000 {u0} 00 0 {M} Zm:3 0 100000 {N} Zn:3 0 {S} 1 0 ZAda:2",
           ("d", "h"): "1010000 {u0} 11 {u1} {M} Zm:3 0 000000 {N} Zn:3 0 {S} 1 ZAda:3"}
INTEGER_FEATURE = {("s", "b"): "", ("s", "h"): "", ("d", "h"): "SME_I16I64"}
INTEGERS = (  # (mnemonic stem, Zn signed, Zm signed, the (ZA, source) pairs it has)
    ("smop4", True, True, (("s", "b"), ("s", "h"), ("d", "h"))),
    ("umop4", False, False, (("s", "b"), ("s", "h"), ("d", "h"))),
    ("sumop4", True, False, (("s", "b"), ("d", "h"))),
    ("usmop4", False, True, (("s", "b"), ("d", "h"))),
)
SIGNEDNESS = {(False, False): "unsigned", (True, True): "signed", (False, True): "unsigned by signed",
              (True, False): "signed by unsigned"}

# (mnemonic stem, ZA element, source element, kind, pattern, feature beside SME_MOP4, what)
FLOATS = (
    ("fmop4", "s", "s", "fp", "10000000 000 {M} Zm:3 0 000000 {N} Zn:3 0 {S} 0 0 ZAda:2", "",
     "single-precision quarter-tile outer products"),
    ("fmop4", "d", "d", "fp", "10000000 110 {M} Zm:3 0 000000 {N} Zn:3 0 {S} 1 ZAda:3", "SME_F64F64",
     "double-precision quarter-tile outer products"),
    ("fmop4", "h", "h", "fp", "10000001 000 {M} Zm:3 0 000000 {N} Zn:3 0 {S} 1 00 ZAda:1", "SME_F16F16",
     "half-precision quarter-tile outer products"),
    ("fmop4", "s", "h", "fp_widening", "10000001 001 {M} Zm:3 0 000000 {N} Zn:3 0 {S} 0 0 ZAda:2", "",
     "half-precision quarter-tile sums of outer products (2-way), widened to single precision"),
    ("bfmop4", "s", "h", "bf_widening", "10000001 000 {M} Zm:3 0 000000 {N} Zn:3 0 {S} 0 0 ZAda:2", "",
     "BFloat16 quarter-tile sums of outer products (2-way), widened to single precision"),
    ("bfmop4", "h", "h", "fp", "10000001 001 {M} Zm:3 0 000000 {N} Zn:3 0 {S} 1 00 ZAda:1", "SME_B16B16",
     "BFloat16 quarter-tile outer products"),
)
ESIZE = {"b": 8, "h": 16, "s": 32, "d": 64}
REGISTERS = {1: "one register", 2: "a pair"}


def _faults(requires: str) -> list[tuple[str, str]]:
    """What explain lists: the features the form needs and CheckStreamingSVEAndZAEnabled's two UNDEFINED cases."""
    faults = [(UNDEFINED, "FEAT_SME_MOP4 is not in the configuration (it is on by default)")]
    if requires:
        faults.append((UNDEFINED, f"FEAT_{requires} is not in the configuration (it is on by default)"))
    return faults + [(UNDEFINED, "PSTATE.SM is 0 (not in streaming mode)"), (UNDEFINED, "PSTATE.ZA is 0 (ZA off)")]


def _form(mnemonic: str, za: str, src: str, pattern: str, shape: Mop4Shape, what: str) -> A64Form:
    T, Z = src.upper(), za.upper()
    zn = EvenPair(src, 2, "Zn", base=0) if shape.nreg == 2 else EvenZ(src, "Zn", base=0)
    zm = EvenPair(src, 2, "Zm", base=16) if shape.mreg == 2 else EvenZ(src, "Zm", base=16)
    n_syntax = f"{{ <Zn1>.{T}-<Zn2>.{T} }}" if shape.nreg == 2 else f"<Zn>.{T}"
    m_syntax = f"{{ <Zm1>.{T}-<Zm2>.{T} }}" if shape.mreg == 2 else f"<Zm>.{T}"
    verb = "subtracted from" if shape.subtract else "accumulated into"
    feature_note = f" (needs FEAT_{shape.requires} too)" if shape.requires else ""
    return A64Form(
        id=f"{mnemonic.upper()}_za{za}_{src}_{shape.nreg}x{shape.mreg}", mnemonic=mnemonic,
        syntax=f"{mnemonic.upper()} <ZAda>.{Z}, {n_syntax}, {m_syntax}",
        summary=(f"{what}, {verb} the four quarters of a ZA tile (Zn {REGISTERS[shape.nreg]}, Zm "
                 f"{REGISTERS[shape.mreg]}; unpredicated){feature_note}"),
        encoding=Encoding(pattern.format(M=shape.mreg - 1, N=shape.nreg - 1, S=int(shape.subtract))),
        operands=(ZaTile(za), zn, zm), execute=sem.bound(shape), feature="SME_MOP4",
        doc=sem.asl(mnemonic, shape), group="za",
        extra={"mop4_shape": shape, "faults": _faults(shape.requires)})


for _stem, _s1, _s2, _pairs in INTEGERS:
    for _za, _src in _pairs:
        for _subtract in (False, True):
            for _nreg in (1, 2):
                for _mreg in (1, 2):
                    _shape_ = Mop4Shape("int", ESIZE[_za], ESIZE[_za] // ESIZE[_src], _nreg, _mreg, _subtract,
                                        signed1=_s1, signed2=_s2, requires=INTEGER_FEATURE[_za, _src])
                    _pattern = INTEGER[_za, _src].replace("{u0}", str(int(not _s1))).replace("{u1}", str(int(not _s2)))
                    _what = (f"{_shape_.ways}-way {SIGNEDNESS[_s1, _s2]} integer quarter-tile sums of outer "
                             f"products of .{_src.upper()} elements into .{_za.upper()}")
                    add(_form(_stem + ("s" if _subtract else "a"), _za, _src, _pattern, _shape_, _what))

for _stem, _za, _src, _kind, _pattern, _requires, _what in FLOATS:
    for _subtract in (False, True):
        for _nreg in (1, 2):
            for _mreg in (1, 2):
                _fmt = "bf" if _stem == "bfmop4" else _src
                _shape_ = Mop4Shape(_kind, ESIZE[_za], ESIZE[_za] // ESIZE[_src], _nreg, _mreg, _subtract, fmt=_fmt,
                                    requires=_requires)
                add(_form(_stem + ("s" if _subtract else "a"), _za, _src, _pattern, _shape_, _what))

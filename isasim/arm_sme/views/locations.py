"""The names the stepper's ``p`` and ``w`` take for SME2 state, read into what they point at:
ZA vectors (za[5]), vector groups (za.s[w8, 0, vgx4]), tiles, their slices and elements
(za1.s, za1h.s, za1v.s[2], za1h.s[2][3]), Z registers and lanes (z4.h, z4.s[3]) and
predicates (p2.s).  A name that is plainly one of these but names nothing there is an
IsasimError saying what there is; a name of none of these kinds is None.  Numbers are read as the
assembler reads them (operands/common.py): za[012] is za[10], z04 is no register."""

from __future__ import annotations

import re
from dataclasses import dataclass

from ...core.errors import IsasimError
from ..operands import ZaVectorGroup
from ..operands.common import OperandError, parse_int
from ..semantics import za_tiles

LANE_SUFFIXES = "bhsd"  # a Z register's or a predicate's element sizes


@dataclass(frozen=True)
class ZaVector:
    """za[i]: one vector of the ZA array."""

    row: int


@dataclass(frozen=True)
class VectorGroup:
    """za.<T>[Wv, offs, VGx<nreg>]: the group of nreg ZA vectors an SME2 multi-vector operand names."""

    suffix: str
    v: int  # Wv's register number, 8-11
    offset: int
    nreg: int
    text: str


@dataclass(frozen=True)
class Tile:
    """za<t>[h|v].<T>, optionally [slice] and [slice][element]: a tile (its rows, or with v its columns),
    one slice, or one element of a slice."""

    tile: int
    suffix: str
    vertical: bool
    slice: int | None
    element: int | None
    text: str

    @property
    def esize(self) -> int:
        return 8 * za_tiles.ELEMENT_BYTES[self.suffix]


@dataclass(frozen=True)
class ZRegister:
    """z<n>, z<n>.<T> or z<n>.<T>[lane]."""

    number: int
    suffix: str | None
    lane: int | None


@dataclass(frozen=True)
class Predicate:
    """p<n> or p<n>.<T>."""

    number: int
    suffix: str | None


# Register numbers as the assembler reads them (z4, never z04); subscripts are numbers, read by the
# assembler's number reader (za[012] is za[10], za[0x1f] is za[31]).
_NUMBER = r"(0|[1-9][0-9]*)"
_VECTOR = re.compile(r"za\[([^\[\]]*)\]", re.ASCII)
_GROUP = re.compile(r"za\.([a-z])[ \t]*\[(.*)\]", re.ASCII)
_TILE = re.compile(rf"za{_NUMBER}([hv]?)\.([a-z])((?:\[[^\[\]]*\])*)", re.ASCII)
_Z = re.compile(rf"z{_NUMBER}(?:\.([a-z]))?(?:\[([^\[\]]*)\])?", re.ASCII)
_P = re.compile(rf"p{_NUMBER}(?:\.([a-z]))?", re.ASCII)


def _register(digits: str) -> int:
    """A register's number; a run of digits longer than any register number is just too large (never
    an int() of thousands of digits)."""
    return int(digits) if len(digits) <= 6 else 10 ** 6


def _index(text: str, name: str) -> int:
    """A subscript of ``name``, read as the assembler reads a number; never negative."""
    try:
        value = parse_int(text, hash="forbidden")
    except OperandError as error:
        raise IsasimError(f"{name[:60]}: {error}") from None
    if value is None or value < 0:
        raise IsasimError(f"{name[:60]}: '{text.strip()[:40]}' is not an index (a number from 0)")
    return value


def parse(name: str, svlb: int):
    """The location ``name`` (lower case) names at SVL svlb * 8, or None (see the module docstring).  A name
    with a character outside printable ASCII is none of these (it may be a memory region's)."""
    if not name.isascii() or not name.isprintable():
        return None
    m = _VECTOR.fullmatch(name)
    if m:
        row = _index(m.group(1), name)
        if row >= svlb:
            raise IsasimError(f"ZA has {svlb} vectors at SVL {8 * svlb}, za[0] to za[{svlb - 1}], "
                              f"not za[{m.group(1).strip()[:40]}]")
        return ZaVector(row)
    m = _GROUP.fullmatch(name)
    if m:
        return _vector_group(name, m.group(1))
    m = _TILE.fullmatch(name)
    if m:
        subscripts = [_index(text, name) for text in re.findall(r"\[([^\[\]]*)\]", m.group(4))]
        return _tile(name, _register(m.group(1)), m.group(2), m.group(3), subscripts, svlb)
    m = _Z.fullmatch(name)
    if m:
        digits, suffix, lane_text = m.groups()
        number = _register(digits)
        if number > 31:
            raise IsasimError(f"there are 32 Z registers, z0 to z31, not z{digits[:40]}")
        if suffix is not None and suffix not in LANE_SUFFIXES:
            raise IsasimError(f"{name}: a Z register's lanes are .b, .h, .s or .d, not .{suffix}")
        lane = None
        if lane_text is not None:
            if suffix is None:
                raise IsasimError(f"{name[:60]}: say the lane's size, as in z{number}.s[{lane_text.strip()[:40]}]")
            lane = _index(lane_text, name)
            lanes = svlb // za_tiles.ELEMENT_BYTES[suffix]
            if lane >= lanes:
                raise IsasimError(f"z{number}.{suffix} has {lanes} lanes at SVL {8 * svlb}, "
                                  f"z{number}.{suffix}[0] to [{lanes - 1}], not [{lane_text.strip()[:40]}]")
        return ZRegister(number, suffix, lane)
    m = _P.fullmatch(name)
    if m:
        number, suffix = _register(m.group(1)), m.group(2)
        if number > 15:
            raise IsasimError(f"there are 16 predicate registers, p0 to p15, not p{m.group(1)[:40]}")
        if suffix is not None and suffix not in LANE_SUFFIXES:
            raise IsasimError(f"{name}: a predicate's elements are .b, .h, .s or .d, not .{suffix}")
        return Predicate(number, suffix)
    return None


def _vector_group(name: str, suffix: str) -> VectorGroup:
    if suffix not in LANE_SUFFIXES:
        raise IsasimError(f"{name}: a vector group's elements are .b, .h, .s or .d, not .{suffix}")
    size = re.search(r",[ \t]*([a-z0-9_]+)[ \t]*\]$", name)
    if size is None or not size.group(1).startswith("vgx"):
        raise IsasimError(f"{name}: name the group's size, as in za.{suffix}[w8, 0, vgx2] or za.{suffix}[w8, 0, vgx4]")
    nreg = 4 if size.group(1) == "vgx4" else 2  # any other size is refused by the operand's own parser
    try:
        fields = ZaVectorGroup(suffix, nreg, any_size=True).parse(name)
    except OperandError as error:
        raise IsasimError(f"{name[:60]}: {error}") from None
    return VectorGroup(suffix, 8 + fields["Rv"], fields["off3"], nreg, f"za.{suffix}[w{8 + fields['Rv']}, "
                       f"{fields['off3']}, vgx{nreg}]")


def _tile(name: str, number: int, direction: str, suffix: str, subscripts: list[int], svlb: int) -> Tile:
    if suffix not in za_tiles.ELEMENT_BYTES:
        raise IsasimError(f"{name}: a tile's elements are .b, .h, .s, .d or .q, not .{suffix}")
    esize = 8 * za_tiles.ELEMENT_BYTES[suffix]
    count = za_tiles.tile_count(esize)
    if number >= count:
        raise IsasimError(f"the .{suffix} tiles are za0.{suffix} to za{count - 1}.{suffix}, not za{number}.{suffix}")
    if subscripts and not direction or len(subscripts) > 2:
        raise IsasimError(f"'{name}': a tile is za{number}.{suffix} (or za{number}h.{suffix}, za{number}v.{suffix}), "
                          f"a slice za{number}h.{suffix}[i] or za{number}v.{suffix}[i], an element of one "
                          f"za{number}h.{suffix}[i][j]")
    slices = svlb * 8 // esize
    for index in subscripts:
        if index >= slices:
            raise IsasimError(f"za{number}.{suffix} has {slices} slices of {slices} elements at SVL {8 * svlb}, "
                              f"numbered 0 to {slices - 1}, not {index}")
    return Tile(number, suffix, direction == "v", *(subscripts + [None, None])[:2], text=name)

"""The names the stepper's ``p`` and ``w`` take for SME2 state, read into what they point at:
ZA vectors (za[5]), vector groups (za.s[w8, 0, vgx4]), tiles, their slices and elements
(za1.s, za1h.s, za1v.s[2], za1h.s[2][3]), Z registers and lanes (z4.h, z4.s[3]) and
predicates (p2.s).  A name that is plainly one of these but names nothing there is an
IsasimError saying what there is; a name of none of these kinds is None."""

from __future__ import annotations

import re
from dataclasses import dataclass

from ...core.errors import IsasimError
from .. import tiles
from ..operands import ZaVectorGroup
from ..operands.common import OperandError

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
        return 8 * tiles.ELEMENT_BYTES[self.suffix]


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


_GROUP = re.compile(r"za\.([a-z])\s*\[(.*)\]")
_TILE = re.compile(r"za([0-9]+)([hv]?)\.([a-z])((?:\[[0-9]+\])*)")
_Z = re.compile(r"z([0-9]+)(?:\.([a-z]))?(?:\[([0-9]+)\])?")
_P = re.compile(r"p([0-9]+)(?:\.([a-z]))?")


def parse(name: str, svlb: int):
    """The location ``name`` (lower case) names at SVL svlb * 8, or None (see the module docstring)."""
    m = re.fullmatch(r"za\[([0-9]+)\]", name)
    if m:
        row = int(m.group(1))
        if row >= svlb:
            raise IsasimError(f"ZA has {svlb} vectors at SVL {8 * svlb}, za[0] to za[{svlb - 1}], not za[{row}]")
        return ZaVector(row)
    m = _GROUP.fullmatch(name)
    if m:
        return _vector_group(name, m.group(1))
    m = _TILE.fullmatch(name)
    if m:
        return _tile(name, int(m.group(1)), m.group(2), m.group(3), [int(i) for i in re.findall(r"[0-9]+", m.group(4))],
                     svlb)
    m = _Z.fullmatch(name)
    if m:
        number, suffix, lane = int(m.group(1)), m.group(2), m.group(3)
        if number > 31:
            raise IsasimError(f"there are 32 Z registers, z0 to z31, not z{number}")
        if suffix is not None and suffix not in LANE_SUFFIXES:
            raise IsasimError(f"{name}: a Z register's lanes are .b, .h, .s or .d, not .{suffix}")
        if lane is not None:
            if suffix is None:
                raise IsasimError(f"{name}: say the lane's size, as in z{number}.s[{lane}]")
            lanes = svlb // tiles.ELEMENT_BYTES[suffix]
            if int(lane) >= lanes:
                raise IsasimError(f"z{number}.{suffix} has {lanes} lanes at SVL {8 * svlb}, "
                                  f"z{number}.{suffix}[0] to [{lanes - 1}], not [{lane}]")
            lane = int(lane)
        return ZRegister(number, suffix, lane)
    m = _P.fullmatch(name)
    if m:
        number, suffix = int(m.group(1)), m.group(2)
        if number > 15:
            raise IsasimError(f"there are 16 predicate registers, p0 to p15, not p{number}")
        if suffix is not None and suffix not in LANE_SUFFIXES:
            raise IsasimError(f"{name}: a predicate's elements are .b, .h, .s or .d, not .{suffix}")
        return Predicate(number, suffix)
    return None


def _vector_group(name: str, suffix: str) -> VectorGroup:
    if suffix not in LANE_SUFFIXES:
        raise IsasimError(f"{name}: a vector group's elements are .b, .h, .s or .d, not .{suffix}")
    size = re.search(r",\s*(\w+)\s*\]$", name)
    if size is None or not size.group(1).startswith("vgx"):
        raise IsasimError(f"{name}: name the group's size, as in za.{suffix}[w8, 0, vgx2] or za.{suffix}[w8, 0, vgx4]")
    nreg = 4 if size.group(1) == "vgx4" else 2  # any other size is refused by the operand's own parser
    try:
        fields = ZaVectorGroup(suffix, nreg, any_size=True).parse(name)
    except OperandError as error:
        raise IsasimError(f"{name}: {error}") from None
    return VectorGroup(suffix, 8 + fields["Rv"], fields["off3"], nreg, f"za.{suffix}[w{8 + fields['Rv']}, "
                       f"{fields['off3']}, vgx{nreg}]")


def _tile(name: str, number: int, direction: str, suffix: str, subscripts: list[int], svlb: int) -> Tile:
    if suffix not in tiles.ELEMENT_BYTES:
        raise IsasimError(f"{name}: a tile's elements are .b, .h, .s, .d or .q, not .{suffix}")
    esize = 8 * tiles.ELEMENT_BYTES[suffix]
    count = tiles.tile_count(esize)
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
                              f"not {index + 1}")
    return Tile(number, suffix, direction == "v", *(subscripts + [None, None])[:2], text=name)

"""ZA operands: vector groups (za.s[w8, 0, vgx4]), tiles, tile slices and array vectors."""

from __future__ import annotations

import re
from dataclasses import dataclass

from .common import REGISTER_NUMBER, SIZE_NOTE, SIZES_DISAGREE, OperandError, _shape, parse_int


@dataclass(frozen=True)
class ZaVectorGroup:
    """``ZA.S[Wv, offs{, VGx2|VGx4}]``: Wv is W8-W11 (field Rv), offs 0-7 (field off3)."""

    esize: str  # "s" or "d"
    nreg: int
    any_size: bool = False  # .b/.h/.s/.d all name the same vectors (MOVA's array forms, printed as .d)
    vgx_written: bool = False  # the VGx may not be left out (ZERO's: without it, ZA.D[Wv, o:o+1] is VGx1)
    kind = "za_group"
    conflict = SIZES_DISAGREE

    def parse(self, text: str) -> dict:
        m = re.fullmatch(r"za\.([a-z])[ \t]*\[[ \t]*([a-z0-9_]+)[ \t]*,([^,\]]+)(?:,[ \t]*([a-z0-9_]+)[ \t]*)?\]",
                         text.strip().lower())
        if not m:
            raise _shape(f"'{text.strip()}' is not a ZA vector group ZA.{self.esize.upper()}[Wv, offs, VGxN]")
        suffix, reg, offset, vg = m.groups()
        if suffix != self.esize and not (self.any_size and suffix in "bhsd"):
            raise _shape(f"ZA.{suffix.upper()} is not this form's ZA.{self.esize.upper()}")
        if vg is not None and vg not in ("vgx2", "vgx4"):
            raise OperandError(f"'{vg}' is not a vector group size (vgx2 or vgx4)")
        if vg is not None and vg != f"vgx{self.nreg}":
            raise _shape(f"{vg} is not this form's vgx{self.nreg}")
        if vg is None and self.vgx_written:
            raise _shape(f"this form's vector group needs its vgx{self.nreg}")
        wm = re.fullmatch(rf"w({REGISTER_NUMBER})", reg)
        if not wm or not 8 <= int(wm.group(1)) <= 11:
            raise OperandError(f"the vector select register must be one of w8-w11, not {reg}")
        off = parse_int(offset)
        if off is None:
            raise OperandError(f"'{offset}' is not an offset")
        if not 0 <= off <= 7:
            raise OperandError(f"the vector select offset must be 0-7, not {off}")
        fields = {"Rv": int(wm.group(1)) - 8, "off3": off}
        return {**fields, SIZE_NOTE: suffix} if self.any_size else fields

    def text(self, fields: dict) -> str:
        return f"za.{self.esize}[w{8 + fields['Rv']}, {fields['off3']}, vgx{self.nreg}]"

    def value(self, fields: dict) -> tuple[int, int]:
        return 8 + fields["Rv"], fields["off3"]


@dataclass(frozen=True)
class ZaVectorRange:
    """``ZA.S[Wv, o:o+k-1{, VGx2|VGx4}]``: the vector select of the multiply-adds into ZA (SMLAL's
    ``za.s[w8, 0:1]``, SMLALL's ``za.d[w8, 4:7, vgx2]``): k = ``ways`` consecutive ZA vectors from o, a
    multiple of k; Wv W8-W11 (field Rv), o / k in the ``bits``-bit field ``field``.  A VGx1 form (nreg 1) is
    written without a VGx; VGx2/VGx4 may leave theirs out, as llvm allows.  value() is (v, o)."""

    esize: str
    nreg: int
    ways: int
    bits: int
    field: str = "off"
    vgx_written: bool = False  # the VGx may not be left out (ZERO's: without it, ZA.D[Wv, o:o+1] is VGx1)
    kind = "za_group"

    def parse(self, text: str) -> dict:
        m = re.fullmatch(r"za\.([a-z])[ \t]*\[[ \t]*([a-z0-9_]+)[ \t]*,([^,\]]+)(?:,[ \t]*([a-z0-9_]+)[ \t]*)?\]",
                         text.strip().lower())
        if not m:
            raise _shape(f"'{text.strip()[:40]}' is not a ZA vector select "
                         f"ZA.{self.esize.upper()}[Wv, o:o+{self.ways - 1}]")
        suffix, reg, offset, vg = m.groups()
        if suffix != self.esize:
            raise _shape(f"ZA.{suffix.upper()} is not this form's ZA.{self.esize.upper()}")
        if vg is not None and vg not in ("vgx2", "vgx4"):
            raise OperandError(f"'{vg}' is not a vector group size (vgx2 or vgx4)")
        if vg is not None and vg != f"vgx{self.nreg}":
            raise _shape(f"{vg} is not this form's " + (f"vgx{self.nreg}" if self.nreg > 1 else "single vector"))
        if vg is None and self.vgx_written and self.nreg > 1:
            raise _shape(f"this form's vector group needs its vgx{self.nreg}")
        wm = re.fullmatch(rf"w({REGISTER_NUMBER})", reg)
        if not wm or not 8 <= int(wm.group(1)) <= 11:
            raise OperandError(f"the vector select register must be one of w8-w11, not {reg}")
        first, colon, last = offset.partition(":")
        lo = parse_int(first, hash="forbidden") if colon and not first.strip().startswith("-") else None
        hi = parse_int(last, hash="forbidden") if colon else None
        top = ((1 << self.bits) - 1) * self.ways
        if lo is None or hi is None or lo % self.ways or hi != lo + self.ways - 1 or not 0 <= lo <= top:
            raise OperandError(f"the vector select offset must be a range o:o+{self.ways - 1} with o a multiple of "
                               f"{self.ways} from 0 to {top}, not {offset.strip()[:40]}")
        return {"Rv": int(wm.group(1)) - 8, self.field: lo // self.ways}

    def text(self, fields: dict) -> str:
        v, o = self.value(fields)
        group = f", vgx{self.nreg}" if self.nreg > 1 else ""
        return f"za.{self.esize}[w{v}, {o}:{o + self.ways - 1}{group}]"

    def value(self, fields: dict) -> tuple[int, int]:
        return 8 + fields["Rv"], fields[self.field] * self.ways


# the bits of a tile-slice field that name the tile (the rest are the slice offset), by element size
TILE_BITS = {"b": 0, "h": 1, "s": 2, "d": 3, "q": 4}


@dataclass(frozen=True)
class ZaSlice:
    """``ZA<t><H|V>.<T>[<Ws>, <offs>]``: a horizontal or vertical slice of a ZA tile (fields V, Rs for
    W12-W15, and the 4 bits ``field`` that hold the tile number above the slice offset)."""

    suffix: str
    field: str = "ZAn"
    kind = "za_slice"

    @property
    def tile_bits(self) -> int:
        return TILE_BITS[self.suffix]

    def parse(self, text: str) -> dict:
        m = re.fullmatch(rf"za({REGISTER_NUMBER})([hv])\.([bhsdq])[ \t]*\[[ \t]*([a-z0-9_]+)[ \t]*(?:,([^\]]+))?\]",
                         text.strip().lower())
        if not m:
            raise _shape(f"'{text.strip()}' is not a ZA tile slice (za0h.s[w12, 0])")
        tile, direction, suffix, reg, offset = m.groups()
        if suffix != self.suffix:
            raise _shape(f"{text.strip()} is a .{suffix} slice, not this form's .{self.suffix}")
        tiles = 1 << self.tile_bits
        if int(tile) >= tiles:
            raise OperandError(f"the .{suffix} tiles are za0-za{tiles - 1}, not za{tile}")
        wm = re.fullmatch(rf"w({REGISTER_NUMBER})", reg)
        if not wm or not 12 <= int(wm.group(1)) <= 15:
            raise OperandError(f"the slice index register must be one of w12-w15, not {reg}")
        limit = (1 << (4 - self.tile_bits)) - 1
        off = parse_int(offset) if offset is not None else None
        if off is None or not 0 <= off <= limit:
            raise OperandError(f"the slice offset of a .{suffix} tile must be {'0' if not limit else f'0-{limit}'}, "
                               f"not {offset}")
        return {"V": int(direction == "v"), "Rs": int(wm.group(1)) - 12,
                self.field: (int(tile) << (4 - self.tile_bits)) | off}

    def value(self, fields: dict) -> tuple[int, bool, int, int]:
        """(tile, vertical, Ws's register number, offset)"""
        raw = fields[self.field]
        offset_bits = 4 - self.tile_bits
        return raw >> offset_bits, bool(fields["V"]), 12 + fields["Rs"], raw & ((1 << offset_bits) - 1)

    def text(self, fields: dict) -> str:
        tile, vertical, s, offset = self.value(fields)
        return f"za{tile}{'hv'[vertical]}.{self.suffix}[w{s}, {offset}]"


@dataclass(frozen=True)
class ZaArrayVector:
    """``ZA[<Wv>, <offs>]``: one vector of the ZA array, Wv W12-W15 (field Rv), offs 0-15 (field off4)."""

    kind = "za_vector"

    def parse(self, text: str) -> dict:
        m = re.fullmatch(r"za[ \t]*\[[ \t]*([a-z0-9_]+)[ \t]*(?:,([^\]]+))?\]", text.strip().lower())
        if not m:
            raise _shape(f"'{text.strip()[:40]}' is not a ZA array vector za[Wv, offs]")
        if m.group(2) is None:
            raise OperandError(f"{text.strip()} needs its offset, as in za[{m.group(1)}, 0]")
        wm = re.fullmatch(rf"w({REGISTER_NUMBER})", m.group(1))
        if not wm or not 12 <= int(wm.group(1)) <= 15:
            raise OperandError(f"the vector select register must be one of w12-w15, not {m.group(1)}")
        off = parse_int(m.group(2))  # clang wants it even when it is 0: za[w12, 0]
        if off is None or not 0 <= off <= 15:
            raise OperandError(f"the vector select offset must be 0-15, not {m.group(2).strip()[:40]}")
        return {"Rv": int(wm.group(1)) - 12, "off4": off}

    def text(self, fields: dict) -> str:
        return f"za[w{12 + fields['Rv']}, {fields['off4']}]"

    def value(self, fields: dict) -> tuple[int, int]:
        return 12 + fields["Rv"], fields["off4"]


@dataclass(frozen=True)
class ZaSliceList:
    """``{<ZAt><HV>.<T>[<Ws>, <offs>]}``: one tile slice in braces (the SME loads' and stores' list)."""

    suffix: str
    field: str = "ZAt"
    kind = "za_slice"

    def parse(self, text: str) -> dict:
        m = re.fullmatch(r"\{(.*)\}", text.strip())  # clang also takes the slice without its braces
        return ZaSlice(self.suffix, self.field).parse(m.group(1) if m else text)

    def value(self, fields: dict) -> tuple[int, bool, int, int]:
        return ZaSlice(self.suffix, self.field).value(fields)

    def text(self, fields: dict) -> str:
        return "{" + ZaSlice(self.suffix, self.field).text(fields) + "}"



# ZERO's tile lists: each tile name and the 64-bit tiles (bits of the mask) it is made of; ZAt.D
# is the ZA vectors t, t+8, t+16, ..., so a wider tile is several of them
TILE_MASKS = {"za": 0xFF, "za0.b": 0xFF}
TILE_MASKS.update({f"za{t}.h": 0x55 << t for t in range(2)})
TILE_MASKS.update({f"za{t}.s": 0x11 << t for t in range(4)})
TILE_MASKS.update({f"za{t}.d": 1 << t for t in range(8)})


def tile_list_text(mask: int) -> str:
    """The list llvm prints for a mask: {za} for all, else the tiles of the largest one size whose
    tiles make up exactly the mask (a list never mixes sizes)."""
    if mask == 0xFF:
        return "{za}"
    for size in ("h", "s", "d"):
        tiles = [name for name, bits in TILE_MASKS.items() if name.endswith("." + size) and mask & bits == bits]
        covered = 0
        for name in tiles:
            covered |= TILE_MASKS[name]
        if covered == mask:
            return "{" + ("," if size == "s" else ", ").join(tiles) + "}"  # llvm: no space in a list of .s tiles
    return "{}"


@dataclass(frozen=True)
class TileList:
    """``{<tile>, ...}``: ZERO's list of ZA tiles of one element size, or ``{za}`` (field ``mask``, one
    bit per 64-bit tile ZA0.D-ZA7.D)."""

    field: str = "mask"
    kind = "tile_list"

    def parse(self, text: str) -> dict:
        m = re.fullmatch(r"\{(.*)\}", text.strip().lower())
        if not m:
            raise _shape(f"'{text.strip()}' is not a tile list {{za...}}")
        if not m.group(1).strip():
            return {self.field: 0}  # zero {}: no tile (llvm accepts and prints it)
        names = [n.strip() for n in m.group(1).split(",")]
        if len({n.partition(".")[2] for n in names}) > 1:
            raise OperandError(f"the tiles of {text.strip()} mix element sizes (a ZERO list has one size)")
        mask = 0
        for name in names:
            if name not in TILE_MASKS:
                raise OperandError(f"'{name}' is not a ZA tile (za, za0.b, za0-1.h, za0-3.s, za0-7.d)")
            mask |= TILE_MASKS[name]
        return {self.field: mask}

    def text(self, fields: dict) -> str:
        return tile_list_text(fields[self.field])

    def value(self, fields: dict) -> int:
        return fields[self.field]


@dataclass(frozen=True)
class ZaTile:
    """``ZA<n>.<T>``: one whole ZA tile of elements of size T (the outer products' accumulator); the
    field holds the tile number, 0 to (element bytes - 1)."""

    suffix: str
    field: str = "ZAda"
    kind = "za_tile"

    @property
    def tiles(self) -> int:
        return 1 << TILE_BITS[self.suffix]

    def parse(self, text: str) -> dict:
        m = re.fullmatch(rf"za({REGISTER_NUMBER})\.([bhsdq])", text.strip().lower())
        if not m:
            raise _shape(f"'{text.strip()}' is not a ZA tile (za0.s)")
        tile, suffix = int(m.group(1)), m.group(2)
        if suffix != self.suffix:
            raise _shape(f"{text.strip()} is a .{suffix} tile, not this form's .{self.suffix}")
        if tile >= self.tiles:
            raise OperandError(f"the .{suffix} tiles are za0-za{self.tiles - 1}, not za{tile}")
        return {self.field: tile}

    def text(self, fields: dict) -> str:
        return f"za{fields[self.field]}.{self.suffix}"

    def value(self, fields: dict) -> int:
        return fields[self.field]

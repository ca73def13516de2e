"""The trace page's views of ZA: its tiles at the configured SVL, as the architecture names them.

Of an element size of esize bytes ZA holds esize tiles (ZA0.B; ZA0.H-ZA1.H; ZA0.S-ZA3.S; ZA0.D-ZA7.D;
ZA0.Q-ZA15.Q), each SVL/(8 * esize) rows of as many elements.  Row i of tile t is ZA vector
i * esize + t (semantics/za_tiles.tile_rows, the rows ``p za1.s`` prints and the outer products write),
so a tile's cells are regular in ZA's bytes: row stride esize * SVL/8, column stride esize.
"""

from __future__ import annotations

import re

import numpy as np

from ...core.isa import PageView
from ...core.program import Program
from ..semantics import za_tiles

# the element type each tile's cells are read as at first (the products' usual result type), and the
# tile sizes shown: .Q (one 128-bit element per cell) is left to the page's hex view of ZA itself
DEFAULT_ELEMENT = {"b": "int8", "h": "int16", "s": "int32", "d": "int64"}


def _named_tiles(program: Program | None) -> set[tuple[int, str]]:
    """The tiles the program's text names (za1.s, za1h.s[w12, 0], za1v.d ...): (tile, size letter)."""
    named = set()
    for instruction in program.instructions if program is not None else ():
        for tile, suffix in re.findall(r"\bza(\d+)[hv]?\.([bhsdq])\b", instruction.text.lower()):
            named.add((int(tile), suffix))
    return named


def page_views(config: dict, program: Program | None) -> list[PageView]:
    """za0.b; za0.h, za1.h; za0.s-za3.s; za0.d-za7.d (named as the stepper's ``p`` names them) as
    horizontal-slice matrices over the ZA panel."""
    svlb = config["svl"] // 8
    named = _named_tiles(program)
    views = []
    for suffix, element in DEFAULT_ELEMENT.items():
        esize = za_tiles.ELEMENT_BYTES[suffix]
        for tile in range(za_tiles.tile_count(8 * esize)):
            rows = za_tiles.tile_rows(tile, 8 * esize, svlb)
            offsets = rows[:, None] * svlb + np.arange(svlb // esize)[None, :] * esize
            views.append(PageView(
                f"za{tile}.{suffix}", "za", element, offsets,
                note=f"ZA{tile}.{suffix.upper()}: row i is ZA vector {esize} * i + {tile}, "
                     f"{svlb // esize} x {svlb // esize} elements of {esize} byte{'s' * (esize > 1)}",
                show=(tile, suffix) in named))
    return views

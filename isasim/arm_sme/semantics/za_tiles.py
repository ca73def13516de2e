"""The ZA tiles: ZA seen as square tiles of one element size, and their horizontal and vertical slices.

ZA is SVL/8 vectors of SVL bits.  Of an element size of esize bits there are esize/8 tiles
(ZA0.B; ZA0-ZA1.H; ZA0-ZA3.S; ZA0-ZA7.D; ZA0-ZA15.Q), each SVL/esize rows of SVL/esize
elements; row r of tile t is ZA vector r * (esize/8) + t (the Arm ARM's ZAtile interleaving,
so ZA0.S holds vectors 0, 4, 8, ...).  A horizontal slice is one row of a tile (one ZA vector),
a vertical slice one column: element s of each of the tile's rows.
"""

from __future__ import annotations

import numpy as np

ELEMENT_BYTES = {"b": 1, "h": 2, "s": 4, "d": 8, "q": 16}


def tile_count(esize: int) -> int:
    """How many tiles of esize-bit elements ZA holds (ZA0-ZA3 for .S)."""
    return esize // 8


def tile_rows(tile: int, esize: int, svlb: int) -> np.ndarray:
    """The ZA vectors that are the rows of ZA<tile> of esize-bit elements, first row first."""
    return np.arange(svlb // (esize // 8)) * tile_count(esize) + tile


def read_slice(za: np.ndarray, tile: int, esize: int, vertical: bool, index: int) -> np.ndarray:
    """ZAslice[tile, esize, vertical, index] as SVL/8 bytes (element e in bytes e*esize/8 ...)."""
    rows = tile_rows(tile, esize, za.shape[0])
    if not vertical:
        return za[rows[index]].copy()
    eb = esize // 8
    return za[rows, index * eb:(index + 1) * eb].reshape(-1).copy()


def slice_rows(tile: int, esize: int, vertical: bool, index: int, svlb: int):
    """The ZA vectors a slice touches and where: [(vector, byte start, byte stop, first element)]."""
    rows = tile_rows(tile, esize, svlb)
    eb = esize // 8
    if not vertical:
        return [(int(rows[index]), 0, svlb, 0)]
    return [(int(row), index * eb, (index + 1) * eb, e) for e, row in enumerate(rows)]


def tile_text(tile: int, suffix: str, vertical: bool | None = None) -> str:
    """za1h.s (a horizontal slice's tile), za1v.s, or za1.s (the whole tile)."""
    return f"za{tile}{'' if vertical is None else 'hv'[vertical]}.{suffix}"


def vector_group_rows(svl_bytes: int, wv: int, offset: int, nreg: int) -> list[int]:
    """The ZA vectors of the vector group ``ZA[Wv, offset, VGx<nreg>]``, in register order, as the ASL
    selects them: vstride = (SVL DIV 8) DIV nreg; vec = (UInt(X[v, 32]) + offset) MOD vstride; then
    vec, vec + vstride, ...  Only the low 32 bits of ``wv`` count."""
    vstride = svl_bytes // nreg
    vec = ((wv & 0xFFFFFFFF) + offset) % vstride
    return [vec + r * vstride for r in range(nreg)]

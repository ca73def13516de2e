"""Rows of the AMX fault table the tests share: the full three-tile shape and a TILECFG image edited byte by
byte, the instructions that fault after TILERELEASE, and the TMUL shape mismatches (semantics/test_amx_faults.py
checks them on the simulator, fuzz/test_fuzz_vs_silicon.py on silicon)."""

from __future__ import annotations

from amxharness import tilecfg_bytes

FULL = {0: (16, 64), 1: (16, 64), 2: (16, 64)}


def cfg_with(**changes) -> bytes:
    image = bytearray(tilecfg_bytes(FULL))
    for offset, value in changes.items():
        image[int(offset[1:])] = value
    return bytes(image)


AFTER_RELEASE = [
    ("tilezero tmm0",),
    ("tileloadd tmm0, [rdi+rsi*1]",),
    ("tilestored [rdi+rsi*1], tmm0",),
    ("tdpbusd tmm0, tmm1, tmm2",),
    ("tdpbf16ps tmm0, tmm1, tmm2",),
]


SHAPE_MISMATCHES = [
    ({0: (16, 8), 1: (16, 64), 2: (16, 12)}, "colsb"),  # C.colsb != B.colsb
    ({0: (4, 8), 1: (4, 12), 2: (4, 8)}, "A=tmm1.colsb/4"),  # A.colsb/4 (3) != B.rows (4)
    ({0: (4, 8), 1: (5, 12), 2: (3, 8)}, "rows"),  # C.rows 4 != A.rows 5
    ({0: (5, 8), 1: (4, 12), 2: (3, 8)}, "rows"),  # C.rows 5 > A.rows 4
]

"""Write the init files of kernels.cpp's functions (NAME.init.json here, or in the directory given).

Each names its memory regions (A, B, C and, for amx_block_configured, tilecfg) and gives the
function's arguments as "args": region names for the pointers (their addresses), numbers for the
counts.  A and B are in the layout the kernel reads (B packed, the 32 x 32 kernels' operands split in
16-row halves per K step), packed here from the plain matrices; "expect" is C = A B of the plain
matrices, numpy's int64 product (or float64 for BF16, exact: the values are multiples of 0.25 in
[-2, 2), so every sum the kernels form is exact in fp32), so `isasim run` prints PASS or FAIL.

    python examples/x86_amx/compiled/make_inits.py [DIR]
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np

A_ADDR, B_ADDR, C_ADDR, CFG_ADDR = 0x10000000, 0x10100000, 0x10200000, 0x10300000
PRODUCER = "make_inits.py: numpy's int64 (int8) or float64 (bf16, exact) product of the unpacked A and B"


def int8_operands(m: int, k: int, n: int) -> tuple[np.ndarray, np.ndarray]:
    """A (m x k uint8) and B (k x n int8): small patterns, the same for every kernel of this shape."""
    i, j = np.arange(m * k), np.arange(k * n)
    return ((7 * i + 3 * (i // 64)) % 256).reshape(m, k), ((5 * j + 11 * (j // 64)) % 255 - 127).reshape(k, n)


def bf16_operands(m: int, k: int, n: int) -> tuple[np.ndarray, np.ndarray]:
    """A (m x k) and B (k x n) of multiples of 0.25 in [-2, 2): bf16 values exactly, whose products and
    sums over k <= 128 are exact in fp32 (at most 12 significant bits)."""
    i, j = np.arange(m * k), np.arange(k * n)
    return (((7 * i + 3 * (i // 32)) % 16 - 8) / 4).reshape(m, k), (((5 * j + 11 * (j // 32)) % 16 - 8) / 4).reshape(k, n)


def pack_b(b: np.ndarray, per: int) -> np.ndarray:
    """B (K x 16) as TDPBUSD/TDPBF16PS read it (the seed's packing, Intel's "VNNI" layout): row r holds
    K rows 4r..4r+3 (int8; 2r, 2r+1 for bf16) interleaved, element [r][per * n + j] = B[per * r + j][n]."""
    k, n = b.shape
    return b.reshape(k // per, per, n).transpose(0, 2, 1).reshape(k // per, n * per)


def pack_gemm32(a: np.ndarray, b: np.ndarray, steps: int, per: int) -> tuple[np.ndarray, np.ndarray]:
    """The 32 x 32 kernels' operands: A (blocks*32 x steps*W) as [block][step][half][16 rows][W] and
    B (steps*W x 32) as [step][half][16 rows][16 * per], each half the packed B of 16 columns (W: the
    elements of a 64-byte row)."""
    width = a.shape[1] // steps
    blocks = a.shape[0] // 32
    a_packed = a.reshape(blocks, 2, 16, steps, width).transpose(0, 3, 1, 2, 4)
    b_packed = np.stack([np.stack([pack_b(b[s * width:(s + 1) * width, h * 16:(h + 1) * 16], per)
                                   for h in range(2)]) for s in range(steps)])
    return a_packed, b_packed


def region(name: str, addr: int, element: str, values: np.ndarray, rows: int) -> dict:
    flat = values.reshape(-1).tolist()
    return {"name": name, "addr": hex(addr), "type": element, "shape": [rows, len(flat) // rows], "values": flat}


def output(element: str, rows: int, cols: int) -> dict:
    return {"name": "C", "addr": hex(C_ADDR), "type": element, "shape": [rows, cols], "size": rows * cols * 4}


def expected_c(element: str, a: np.ndarray, b: np.ndarray) -> dict:
    """C = A B of the logical (unpacked) operands, in int64 or float64, which is exact here (checked)."""
    product = a.astype(np.int64) @ b.astype(np.int64) if element == "int32" else a @ b
    if element == "int32":
        assert np.abs(product).max() < 2**31
    else:
        assert (product.astype(np.float32) == product).all()
        product = product.astype(float)
    return {"addr": hex(C_ADDR), "type": element, "values": product.reshape(-1).tolist()}


def tilecfg(tiles: int) -> list[int]:
    image = [0] * 64
    image[0] = 1
    for t in range(tiles):
        image[16 + 2 * t] = 64  # colsb[t] = 64 (little-endian uint16)
        image[48 + t] = 16  # rows[t] = 16
    return image


def init(a_region: dict, b_region: dict, element: str, a: np.ndarray, b: np.ndarray, args: list) -> dict:
    m, n = a.shape[0], b.shape[1]
    return {"memory": [a_region, b_region, output(element, m, n)], "args": args,
            "expect": {"memory": [expected_c(element, a, b)]}}


def inits() -> dict[str, dict]:
    out = {}
    count, steps, blocks = 3, 2, 2
    for kind, element, per, operands in (("int8", "int32", 4, int8_operands), ("bf16", "fp32", 2, bf16_operands)):
        a_type, b_type = ("uint8", "int8") if kind == "int8" else ("bf16", "bf16")
        k = 16 * per  # a tile of packed B is 16 rows of `per` K values per column
        block_a, block_b = operands(16, k, 16)
        block = init(region("A", A_ADDR, a_type, block_a, 16), region("packed B", B_ADDR, b_type, pack_b(block_b, per), 16),
                     element, block_a, block_b, ["A", "packed B", "C"])
        batch_a, _ = operands(16 * count, k, 16)
        batch = init(region("A", A_ADDR, a_type, batch_a, 16 * count),
                     region("packed B", B_ADDR, b_type, pack_b(block_b, per), 16),
                     element, batch_a, block_b, ["A", "packed B", "C", count])
        gemm_a, gemm_b = operands(32 * blocks, k * steps, 32)
        packed_a, packed_b = pack_gemm32(gemm_a, gemm_b, steps, per)
        gemm = init(region("A", A_ADDR, a_type, packed_a, 32 * steps * blocks),
                    region("B", B_ADDR, b_type, packed_b, 32 * steps),
                    element, gemm_a, gemm_b, ["A", "B", "C", steps, blocks])
        if kind == "int8":
            out["amx_block"] = block
            configured = json.loads(json.dumps(block))
            configured["memory"].append({"name": "tilecfg", "addr": hex(CFG_ADDR), "type": "uint8", "shape": [1, 64],
                                         "values": tilecfg(3), "readonly": True, "show": False})
            configured["args"] = ["tilecfg"] + configured["args"]
            out["amx_block_configured"], out["amx_batch"], out["amx_gemm32_batch"] = configured, batch, gemm
        else:
            out["bf16_block"], out["amx_bf16_batch"], out["amx_bf16_gemm32_batch"] = block, batch, gemm
    return out


def text(init: dict) -> str:
    """The init as JSON with one region per line."""
    regions = ",\n  ".join(json.dumps(r) for r in init["memory"])
    expect = ",\n  ".join(json.dumps(r) for r in init["expect"]["memory"])
    return (f'{{"producer": "{PRODUCER}",\n "memory": [\n  {regions}\n ],\n "args": {json.dumps(init["args"])},\n'
            f' "expect": {{"memory": [\n  {expect}\n ]}}}}\n')


def main(argv: list[str]) -> int:
    where = Path(argv[0]) if argv else Path(__file__).resolve().parent
    for name, init in inits().items():
        (where / f"{name}.init.json").write_text(text(init))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

"""Write the init files of kernels.cpp's functions (NAME.init.json here, or in the directory given).

Each names its memory regions (A, B, C and, for amx_block_configured, tilecfg) and gives the
function's arguments as "args": region names for the pointers (their addresses), numbers for the
counts.  A and B are in the layout the kernel reads (B packed, the 32 x 32 kernels' operands split in
16-row halves per K step).  The values are small patterns; the BF16 ones are multiples of 0.25 in
[-2, 2), so every sum the kernels form is exact in fp32.

    python examples/x86_amx/compiled/make_inits.py [DIR]
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

A_ADDR, B_ADDR, C_ADDR, CFG_ADDR = 0x10000000, 0x10100000, 0x10200000, 0x10300000


def int8_values(count: int) -> tuple[list[int], list[int]]:
    """uint8 A and int8 B byte patterns of ``count`` bytes each."""
    return [(7 * i + 3 * (i // 64)) % 256 for i in range(count)], [(5 * i + 11 * (i // 64)) % 255 - 127
                                                                   for i in range(count)]


def bf16_values(count: int) -> tuple[list[float], list[float]]:
    return ([((7 * i + 3 * (i // 32)) % 16 - 8) / 4 for i in range(count)],
            [((5 * i + 11 * (i // 32)) % 16 - 8) / 4 for i in range(count)])


def region(name: str, addr: int, element: str, values: list, rows: int) -> dict:
    return {"name": name, "addr": hex(addr), "type": element, "shape": [rows, len(values) // rows], "values": values}


def output(name: str, element: str, rows: int, cols: int) -> dict:
    return {"name": name, "addr": hex(C_ADDR), "type": element, "shape": [rows, cols], "size": rows * cols * 4}


def tilecfg(tiles: int) -> list[int]:
    image = [0] * 64
    image[0] = 1
    for t in range(tiles):
        image[16 + 2 * t] = 64  # colsb[t] = 64 (little-endian uint16)
        image[48 + t] = 16  # rows[t] = 16
    return image


def inits() -> dict[str, dict]:
    out = {}
    a, b = int8_values(1024)
    for name in ("amx_block", "amx_block_configured"):
        memory = [region("A", A_ADDR, "uint8", a, 16), region("packed B", B_ADDR, "int8", b, 16),
                  output("C", "int32", 16, 16)]
        args = ["A", "packed B", "C"]
        if name == "amx_block_configured":
            memory.append({"name": "tilecfg", "addr": hex(CFG_ADDR), "type": "uint8", "shape": [1, 64],
                           "values": tilecfg(3), "readonly": True, "show": False})
            args = ["tilecfg"] + args
        out[name] = {"memory": memory, "args": args}
    count = 3
    a, b = int8_values(1024 * count)
    out["amx_batch"] = {"memory": [region("A", A_ADDR, "uint8", a, 16 * count),
                                   region("packed B", B_ADDR, "int8", b[:1024], 16),
                                   output("C", "int32", 16 * count, 16)],
                        "args": ["A", "packed B", "C", count]}
    steps, blocks = 2, 2
    a, b = int8_values(2048 * steps * blocks)
    out["amx_gemm32_batch"] = {"memory": [region("A", A_ADDR, "uint8", a, 32 * steps * blocks),
                                          region("B", B_ADDR, "int8", b[:2048 * steps], 32 * steps),
                                          output("C", "int32", 32 * blocks, 32)],
                               "args": ["A", "B", "C", steps, blocks]}
    a, b = bf16_values(512)
    out["bf16_block"] = {"memory": [region("A", A_ADDR, "bf16", a, 16), region("packed B", B_ADDR, "bf16", b, 16),
                                    output("C", "fp32", 16, 16)],
                         "args": ["A", "packed B", "C"]}
    a, b = bf16_values(512 * count)
    out["amx_bf16_batch"] = {"memory": [region("A", A_ADDR, "bf16", a, 16 * count),
                                        region("packed B", B_ADDR, "bf16", b[:512], 16),
                                        output("C", "fp32", 16 * count, 16)],
                             "args": ["A", "packed B", "C", count]}
    a, b = bf16_values(1024 * steps * blocks)
    out["amx_bf16_gemm32_batch"] = {"memory": [region("A", A_ADDR, "bf16", a, 32 * steps * blocks),
                                               region("B", B_ADDR, "bf16", b[:1024 * steps], 32 * steps),
                                               output("C", "fp32", 32 * blocks, 32)],
                                    "args": ["A", "B", "C", steps, blocks]}
    return out


def text(init: dict) -> str:
    """The init as JSON with one region per line."""
    regions = ",\n  ".join(json.dumps(r) for r in init["memory"])
    return f'{{"memory": [\n  {regions}\n ],\n "args": {json.dumps(init["args"])}}}\n'


def main(argv: list[str]) -> int:
    where = Path(argv[0]) if argv else Path(__file__).resolve().parent
    for name, init in inits().items():
        (where / f"{name}.init.json").write_text(text(init))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

"""Write int8_block.init.json: the seed article's data for the 16x16 TDPBUSD block.

a[m][k] = (17m + 13k) mod 256 (uint8), b[k][n] = (11k + 7n) mod 31 - 15 (int8),
B packed four K values per output column, C zero, and the tile configuration
(palette 1; tmm0, tmm1, tmm2 all 16 rows x 64 bytes).
"""

import json
from pathlib import Path

M, N, K = 16, 16, 64
a = [[(17 * m + 13 * k) % 256 for k in range(K)] for m in range(M)]
b = [[(11 * k + 7 * n) % 31 - 15 for n in range(N)] for k in range(K)]
packed_b = [[0] * (4 * N) for _ in range(K // 4)]
for k in range(K):
    for n in range(N):
        packed_b[k // 4][4 * n + k % 4] = b[k][n]

config = bytearray(64)
config[0] = 1  # palette 1
for t in range(3):
    config[16 + 2 * t] = 64  # colsb
    config[48 + t] = 16  # rows

init = {
    "regs": {"rdi": "0x20000", "rsi": "0x30000", "rdx": "0x40000", "rcx": "0x10000"},
    "memory": [
        {"name": "tilecfg", "addr": "0x10000", "hex": config.hex(), "show": False},
        {"name": "A", "addr": "0x20000", "type": "uint8", "shape": [M, K], "values": sum(a, []), "show": False},
        {"name": "packed B", "addr": "0x30000", "type": "int8", "shape": [K // 4, 4 * N], "values": sum(packed_b, []),
         "show": False},
        {"name": "C", "addr": "0x40000", "type": "int32", "shape": [M, N], "size": 4 * M * N},
    ],
}
out = Path(__file__).with_name("int8_block.init.json")
out.write_text(json.dumps(init, separators=(",", ":")) + "\n")
print(f"wrote {out}")

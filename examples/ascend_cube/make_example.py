"""Regenerate the Ascend cube example: an int8 GEMM as an Ascend C kernel writes it, on the 910B.

C (30 x 40, int32) = A (30 x 70, int8) . B (70 x 40, int8). A and B^T sit in GM as ND
matrices; DataCopy with Nd2NzParams makes Nz fractals in L1; LoadData moves A to L0A as Zz
(one load per row of fractals) and B to L0B as Zn; Mmad multiplies (m, n, k not multiples of
the fractal: the padding is ignored); Fixpipe writes C to GM as ND with NoQuant.  Each pipe waits for the one whose
results it reads (SetFlag/WaitFlag: MTE2 -> MTE1 -> M -> FIX), as the NPU's parallel pipes need.  The files:

    int8_gemm.s            the program text
    int8_gemm.init.json    A, B^T and C's region
    int8_gemm.trace.json   both, with the expected C from an INT64 numpy product

    isasim run examples/ascend_cube/int8_gemm.trace.json        # prints PASS or FAIL
    isasim step examples/ascend_cube/int8_gemm.trace.json

Run: python examples/ascend_cube/make_example.py [OUTPUT_DIR]
"""

import json
import sys
from pathlib import Path

import numpy as np

M, K, N = 30, 70, 40
A_GM, B_GM, C_GM = 0x100000, 0x200000, 0x300000
M1, K1, N1 = 2, 3, 3  # fractals: rows of 16, int8 K in 32s, columns of 16
B_L1 = M1 * K1 * 512

PROGRAM = f"""\
# int8 GEMM on the 910B: C (30 x 40, int32) = A (30 x 70) . B (70 x 40)
# GM -> L1: ND to Nz fractals (16 rows x 32 int8), A and B^T
DataCopy(dst=L1[0], src=GM[{A_GM:#x}], dtype=int8, nValue={M}, dValue={K}, srcDValue={K}, dstNzC0Stride={16 * M1})
DataCopy(dst=L1[{B_L1}], src=GM[{B_GM:#x}], dtype=int8, nValue={N}, dValue={K}, srcDValue={K}, dstNzC0Stride={16 * N1})
# MTE1 reads what MTE2 wrote: the pipes run in parallel, so MTE1 waits for MTE2's flag
SetFlag(event=MTE2_MTE1, id=0)
WaitFlag(event=MTE2_MTE1, id=0)
# L1 -> L0A as Zz: row block r takes fractals r, r + 2, r + 4 of L1's Nz
LoadData(dst=L0A[0], src=L1[0], dtype=int8, startIndex=0, repeatTimes={K1}, srcStride={M1})
LoadData(dst=L0A[{K1 * 512}], src=L1[0], dtype=int8, startIndex=1, repeatTimes={K1}, srcStride={M1})
# L1 -> L0B: B^T's Nz is B's Zn already
LoadData(dst=L0B[0], src=L1[{B_L1}], dtype=int8, repeatTimes={K1 * N1})
SetFlag(event=MTE1_M, id=0)
WaitFlag(event=MTE1_M, id=0)
Mmad(c=L0C[0], a=L0A[0], b=L0B[0], aType=int8, bType=int8, m={M}, n={N}, k={K})
SetFlag(event=M_FIX, id=0)
WaitFlag(event=M_FIX, id=0)
# L0C (Nz, 32 rows per column block) -> GM as the 30 x 40 ND matrix
Fixpipe(dst=GM[{C_GM:#x}], src=L0C[0], srcType=int32, dstType=int32, nSize={N}, mSize={M}, srcStride={16 * M1}, dstStride={N})
"""


def build():
    rng = np.random.default_rng(2026)
    a = rng.integers(-128, 128, (M, K), dtype=np.int64)
    b = rng.integers(-128, 128, (K, N), dtype=np.int64)
    init = {"memory": [
        {"name": "A", "addr": hex(A_GM), "type": "int8", "shape": [M, K], "values": a.reshape(-1).tolist()},
        {"name": "Bt", "addr": hex(B_GM), "type": "int8", "shape": [N, K], "values": b.T.reshape(-1).tolist()},
        {"name": "C", "addr": hex(C_GM), "type": "int32", "shape": [M, N], "size": 4 * M * N}]}
    c = (a @ b).astype(np.int32)  # |sum| <= 70 x 2^14: no int32 overflow, so wrap and saturate agree
    trace = {"format": "isasim-trace/2", "isa": "ascend_cube", "config": {"chip": "910B"},
             "producer": "examples/ascend_cube/make_example.py (expected C: numpy INT64 product)",
             "program": [line for line in PROGRAM.splitlines() if line and not line.startswith("#")],
             "init": init,
             "expect": {"fault": None, "memory": [{"addr": hex(C_GM), "hex": c.tobytes().hex()}]}}
    return init, trace


if __name__ == "__main__":
    out = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).parent
    init, trace = build()
    (out / "int8_gemm.s").write_text(PROGRAM)
    (out / "int8_gemm.init.json").write_text(json.dumps(init) + "\n")
    (out / "int8_gemm.trace.json").write_text(json.dumps(trace, indent=1) + "\n")
    for name in ("int8_gemm.s", "int8_gemm.init.json", "int8_gemm.trace.json"):
        print(f"wrote {out / name}")

"""Write the teaching notebooks of examples/notebooks/, one per engine, without outputs.

    python examples/notebooks/make_notebooks.py

Each notebook steps the seed's instructions of one engine with the ``isasim`` teaching API (isasim/teaching.py):
x86 AMX's LDTILECFG, TILELOADD and TDPBUSD; Arm SME's SMOPA and UDOT; the Ascend cube's Mmad and Fixpipe.
A code cell whose result tests/test_notebooks.py compares with a trace's expectations carries the tag
``result:NAME``; the cell showing the trace viewer carries ``viewer``.  The notebooks run from this directory
(their paths are relative to it).
"""

from __future__ import annotations

from pathlib import Path

import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

HERE = Path(__file__).resolve().parent

SETUP = """\
from pathlib import Path

import numpy as np

import isasim

np.set_printoptions(linewidth=150, threshold=5000)"""


def md(text: str):
    return new_markdown_cell(text.strip())


def code(text: str, *tags: str):
    cell = new_code_cell(text.strip())
    if tags:
        cell.metadata["tags"] = list(tags)
    return cell


X86_AMX = [
    md("""
# Intel AMX: one 16 x 16 int8 block with TDPBUSD

AMX adds eight **tiles**, `tmm0`-`tmm7`, each up to 16 rows of 64 bytes, and a tile matrix unit that multiplies
them. This notebook steps the seed's kernel, `examples/x86_amx/int8_block.s`: C (16 x 16 int32) = A (16 x 64
uint8) times B (64 x 16 int8), with the three instructions that make AMX:

* `LDTILECFG` loads the 64-byte **tile configuration**: how many rows and bytes per row each tile has;
* `TILELOADD` loads a tile from memory, row by row, with a stride;
* `TDPBUSD` multiplies: every int32 element of C gains the dot product of a row of A (unsigned bytes) and a
  column of B (signed bytes).

The data is the trace's, whose expected C is an exact int64 product computed apart from the simulator
(`examples/x86_amx/make_examples.py`; `isasim diff` checks the kernel against the CPU on an AMX host).
"""),
    code(SETUP),
    code("""
m = isasim.machine("x86_amx", cpu="emerald-rapids")
m.load(Path("../x86_amx/int8_block.s").read_text(), init="../x86_amx/int8_block.trace.json")
print(m)"""),
    md("""
## LDTILECFG: shape the tiles

The configuration's byte 0 is the palette (1), bytes 16-31 the bytes per row of each tile (16-bit), bytes
48-55 the rows of each tile. Here tmm0, tmm1 and tmm2 are 16 rows of 64 bytes.
"""),
    code("""
step = m.step()
print(step)
print("tmm0 as int32:", m.view("tmm0", "int32").shape, " tmm1 as uint8:", m.view("tmm1", "uint8").shape)"""),
    md("""
## TILELOADD: A and the packed B into tiles

`tileloadd tmm1, [rdi+r8*1]` reads 16 rows of 64 bytes, row r from `rdi + r * r8`. B is stored *packed*: its
row k/4 holds, for each column n, the four values B[k..k+3][n] next to each other, which is the order TDPBUSD
reads them in.
"""),
    code("""
print(m.run_to("tileloadd tmm1"))
print(m.run_to("tileloadd tmm2").instruction)
print("tmm1 (A), first rows, uint8:")
print(m.view("tmm1", "uint8")[:2, :16])
print("equal to the memory region A:", bool((m.view("tmm1", "uint8") == m.view("A")).all()))"""),
    md("""
## TDPBUSD: the dot products

`tdpbusd tmm0, tmm1, tmm2`: C[m][n] += the sum over k of uint8 A[m][k] times int8 B[k][n], in int32 with
wrap-around. The cell after it computes the same with numpy from the memory regions, unpacking B first.
"""),
    code("""
step = m.run_to("tdpbusd")
print(step.instruction, "wrote", len(step.writes), "tile rows")
tmm0 = m.view("tmm0", "int32")
tmm0""", "result:tmm0"),
    code("""
A = m.view("A").astype(np.int64)                      # 16 x 64
packed = m.view("packed B").astype(np.int64)          # 16 x 64: row k // 4, byte 4 n + k % 4
B = packed.reshape(16, 16, 4).transpose(0, 2, 1).reshape(64, 16)
print("numpy's A @ B equals tmm0:", bool(((A @ B) == tmm0).all()))"""),
    md("""
## How the simulator explains TDPBUSD

`isasim.explain` is `isasim explain`: the encoding field by field, the operation, and a worked example whose
numbers come from running the instruction, with one element checked by hand against the machine.
"""),
    code("""
explained = isasim.explain("tdpbusd tmm0, tmm1, tmm2", isa="x86_amx")
print(explained.checks[0])
explained"""),
    md("""
## The whole run in the trace viewer

The rest of the kernel stores C and releases the tiles. Showing the machine draws the same interactive viewer
as `isasim show --html`: step with the slider or the arrow keys, pick an element type, click a written cell.
"""),
    code("""
m.run()
m""", "viewer"),
    code("""
m.view("C")""", "result:C"),
]

ARM_SME = [
    md("""
# Arm SME: SMOPA outer products and UDOT vector groups

SME adds **ZA**, a square array of SVL/8 x SVL/8 bytes (64 x 64 at SVL 512), used as **tiles** (ZA0.S-ZA3.S:
16 x 16 int32 each at SVL 512, row i of ZAn.S being ZA vector 4 i + n) or as **vector groups**, and the
streaming SVE Z and P registers. This notebook steps two seed kernels:

* `examples/arm_sme/smopa_gemm.s`: `SMOPA za0.s, p0/m, p0/m, z0.b, z1.b` adds to each int32 element (i, j) of
  ZA0.S the 4-way dot product of four int8 of A's row i (in z0) and four of B's column j (in z1);
* `examples/arm_sme/udot_gemm.s`: `UDOT za.s[w8, 0, vgx4], {z0.b-z3.b}, z4.b` adds to four ZA vectors at once.

The SMOPA trace's expected values were recorded on QEMU (`qemu-aarch64 -cpu max`); the UDOT trace's are
numpy's int64 product.
"""),
    code(SETUP),
    code("""
m = isasim.machine("arm_sme", svl=512)
m.load(Path("../arm_sme/smopa_gemm.s").read_text(), init="../arm_sme/smopa_gemm.trace.json")
print(m)"""),
    md("""
## The first SMOPA

`smstart` turns on streaming mode and ZA, `zero {za}` clears ZA, the loads put four k of every row of A in
z0 and the same four k of every column of B in z1. After SMOPA, element (i, j) of ZA0.S is the dot product of
z0's bytes 4i..4i+3 and z1's bytes 4j..4j+3.
"""),
    code("""
step = m.run_to("smopa")
print(step.instruction)
z0, z1 = m.view("z0", "int8")[0], m.view("z1", "int8")[0]
tile = m.tile(0, "int32")
by_hand = int(np.dot(z0[0:4].astype(np.int64), z1[4:8].astype(np.int64)))
print("ZA0.S[0][1] =", tile[0, 1], " z0[0:4] . z1[4:8] =", by_hand)
tile[:4, :8]"""),
    md("""
## The loop: one SMOPA per four k

The loop runs K/4 times; after it ZA0.S holds C, which the second loop stores row by row with `st1w`.
"""),
    code("""
m.run_to("cntw")
za0 = m.tile(0, "int32")
za0""", "result:za0"),
    code("""
explained = isasim.explain("smopa za0.s, p0/m, p0/m, z0.b, z1.b", isa="arm_sme")
print(explained.checks[0])
explained"""),
    code("""
m.run()
m""", "viewer"),
    code("""
m.view("C")""", "result:C"),
    md("""
## UDOT on a vector group

`udot za.s[w8, 0, vgx4], {z0.b-z3.b}, z4.b` treats ZA as vectors: with w8 = 0 the group is ZA vectors 0, 16,
32 and 48 (at SVL 512 the group's stride is SVL/32 = 16 vectors), and vector r gains, lane by lane, the 4-way
dot product of z(r) and z4. The kernel keeps four rows of C in the group.
"""),
    code("""
udot = isasim.load_trace("../arm_sme/udot_gemm.trace.json").machine()
print(udot.run_to("udot").instruction)
udot.view("za", "int32")[[0, 16, 32, 48], :8]"""),
    code("""
isasim.explain("udot za.s[w8, 0, vgx4], {z0.b-z3.b}, z4.b", isa="arm_sme")"""),
    code("""
udot.run()
udot.view("C")""", "result:udot_C"),
]

ASCEND_CUBE = [
    md("""
# The Ascend cube unit: Mmad and Fixpipe

The Ascend 910B's cube unit multiplies matrices held in on-chip buffers: **L0A** (left operand), **L0B** (right
operand) and **L0C** (int32 or fp32 accumulators), filled from **L1** and global memory (GM) by `DataCopy` and
`LoadData`. Matrices live in 16 x 16 **fractals** (16 x 32 for int8 in L0A/L0B). This notebook steps the seed's
`examples/ascend_cube/int8_gemm.s`, C (30 x 40 int32) = A (30 x 70 int8) times B (70 x 40 int8):

* `Mmad` multiplies L0A by L0B into L0C;
* `Fixpipe` moves L0C to GM, turning the fractal (Nz) layout back into a row-major (ND) matrix.

The copies, the multiply and the Fixpipe run on separate pipes of the NPU (MTE2, MTE1, M, FIX) that work in
parallel, so each waits for the one before with a `SetFlag`/`WaitFlag` pair; without them isasim stops with a
SYNC_RACE fault naming the two instructions, as the NPU would compute garbage.

The trace's expected C is numpy's int64 product (`examples/ascend_cube/make_example.py`).
"""),
    code(SETUP),
    code("""
m = isasim.machine("ascend_cube", chip="910B")
m.load(Path("../ascend_cube/int8_gemm.s").read_text(), init="../ascend_cube/int8_gemm.init.json")
print(m)
print("views:", ", ".join(m.names()))"""),
    md("""
## Mmad

After the copies, `Mmad(c=L0C[0], a=L0A[0], b=L0B[0], ..., m=30, n=40, k=70)` writes C into L0C in the Nz
layout: column block j // 16 of C is a run of 32 rows (m rounded up to whole fractals) of 16 int32, so element
(i, j) is int32 number (j // 16) * 32 * 16 + i * 16 + j % 16 of L0C.
"""),
    code("""
step = m.run_to("Mmad")
print(step.instruction)
l0c = m.view("l0c", "int32")            # L0C as rows of 16 int32
print(l0c.shape)
l0c[:4, :8]"""),
    code("""
blocks = l0c.reshape(-1)[:3 * 32 * 16].reshape(3, 32, 16)      # 3 column blocks of 32 x 16
l0c_as_matrix = blocks.transpose(1, 0, 2).reshape(32, 48)[:30, :40]
l0c_as_matrix""", "result:l0c"),
    code("""
A, Bt = m.view("A").astype(np.int64), m.view("Bt").astype(np.int64)
print("numpy's A @ B equals L0C:", bool(((A @ Bt.T) == l0c_as_matrix).all()))
isasim.explain("Mmad(c=L0C[0], a=L0A[0], b=L0B[0], aType=int8, bType=int8, m=30, n=40, k=70)", isa="ascend_cube")"""),
    md("""
## Fixpipe

`Fixpipe(... srcType=int32, dstType=int32, nSize=40, mSize=30, srcStride=32, dstStride=40)` writes L0C to GM as
the 30 x 40 row-major matrix (no quantisation here: int32 to int32).
"""),
    code("""
print(m.run_to("Fixpipe").instruction)
isasim.explain("Fixpipe(dst=GM[0x300000], src=L0C[0], srcType=int32, dstType=int32, nSize=40, mSize=30, "
               "srcStride=32, dstStride=40)", isa="ascend_cube")"""),
    code("""
m""", "viewer"),
    code("""
m.view("C")""", "result:C"),
]

NOTEBOOKS = {"x86_amx.ipynb": X86_AMX, "arm_sme.ipynb": ARM_SME, "ascend_cube.ipynb": ASCEND_CUBE}


def notebook(cells: list) -> nbformat.NotebookNode:
    made = new_notebook(cells=cells)
    made.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    made.metadata["language_info"] = {"name": "python"}
    for number, cell in enumerate(made.cells):  # stable ids: regenerating changes nothing that did not change
        cell["id"] = f"cell-{number}"
    return made


def main() -> None:
    for name, cells in NOTEBOOKS.items():
        made = notebook(cells)
        nbformat.validate(made)
        nbformat.write(made, HERE / name)
        print(f"wrote {HERE / name}")


if __name__ == "__main__":
    main()

"""A whole cube pipeline on the machine, as an Ascend C kernel writes it, against numpy.

A and B^T sit in GM as ND matrices; DataCopy with Nd2NzParams makes Nz fractals in L1;
LoadData moves them to L0A (Zz on 910B: one load per row of fractals; Nz on 950: one load)
and L0B (Zn: one load); Mmad multiplies; Fixpipe writes C to GM as ND.  The expectations
are numpy's matrix products (int64, then the int32 the option says) and numpy's own
float16 rounding, never this package's arithmetic, so a wrong layout, a wrong address
formula or a wrong sum fails here.
"""

from __future__ import annotations

import numpy as np
import pytest

from isasim.core.machine import Machine
from isasim.ascend_cube.numerics.quant_word import pack_scale

A_GM, B_GM, C_GM, WORDS_GM = 0x100000, 0x200000, 0x300000, 0x400000


def _ceil(value: int, unit: int) -> int:
    return -(-value // unit) * unit


def cube_program(m: int, k: int, n: int, dtype: str, chip: str, *, fixpipe: str, accumulate: bool = False) -> str:
    """The kernel's lines: A (m x k) and B^T (n x k) ND in GM -> Nz in L1 -> L0A / L0B -> Mmad -> ``fixpipe``."""
    size = {"int8": 1, "float16": 2}[dtype]
    k0 = 32 // size
    m1, k1, n1 = _ceil(m, 16) // 16, _ceil(k, k0) // k0, _ceil(n, 16) // 16
    b_l1 = _ceil(m1 * k1 * 512, 512)
    lines = [f"DataCopy(dst=L1[0], src=GM[{A_GM:#x}], dtype={dtype}, nValue={m}, dValue={k}, srcDValue={k}, "
             f"dstNzC0Stride={m1 * 16})",
             f"DataCopy(dst=L1[{b_l1}], src=GM[{B_GM:#x}], dtype={dtype}, nValue={n}, dValue={k}, srcDValue={k}, "
             f"dstNzC0Stride={n1 * 16})"]
    lines += flag("MTE2_MTE1")  # each pipe waits for the one whose results it reads, as on the NPU
    if chip == "910B":  # Zz: the fractals of row block r are fractals r, r + M1, r + 2 M1 ... of L1's Nz
        lines += [f"LoadData(dst=L0A[{r * k1 * 512}], src=L1[0], dtype={dtype}, startIndex={r}, repeatTimes={k1}, "
                  f"srcStride={m1})" for r in range(m1)]
    else:  # 950: A is Nz in L0A too
        lines.append(f"LoadData(dst=L0A[0], src=L1[0], dtype={dtype}, repeatTimes={m1 * k1})")
    lines.append(f"LoadData(dst=L0B[0], src=L1[{b_l1}], dtype={dtype}, repeatTimes={k1 * n1})")
    mmad = f"Mmad(c=L0C[0], a=L0A[0], b=L0B[0], aType={dtype}, bType={dtype}, m={m}, n={n}, k={k})"
    lines += [*flag("MTE1_M"), mmad]
    if accumulate:
        lines.append(mmad.replace(")", ", cmatrixInitVal=false)"))
    lines += [*flag("M_FIX"), fixpipe.format(m=m, n=n, stride=m1 * 16)]
    return "\n".join(lines)


def flag(event: str, event_id: int = 0) -> list[str]:
    """A SetFlag/WaitFlag pair: the event's destination pipe waits for its source pipe's earlier instructions."""
    return [f"SetFlag(event={event}, id={event_id})", f"WaitFlag(event={event}, id={event_id})"]


def run(program: str, memory: list, chip: str = "910B", options: dict | None = None, regs: dict | None = None):
    machine = Machine("ascend_cube", {"chip": chip, "options": options or {}})
    machine.load(machine.assemble(program), regs=regs or {}, memory=memory)
    machine.run()
    return machine


def _inputs(m, k, n, dtype, seed):
    rng = np.random.default_rng(seed)
    if dtype == "int8":
        a = rng.integers(-128, 128, (m, k)).astype(np.int8)
        b = rng.integers(-128, 128, (k, n)).astype(np.int8)
    else:  # small multiples of 1/8: every product and sum is exact in float32, so numpy's float64 is the truth
        a = (rng.integers(-64, 64, (m, k)) / 8).astype(np.float16)
        b = (rng.integers(-64, 64, (k, n)) / 8).astype(np.float16)
    return a, b


def _memory(a, b, c_bytes):
    return [(A_GM, a.tobytes(), True), (B_GM, np.ascontiguousarray(b.T).tobytes(), True),
            (C_GM, bytes(c_bytes), True)]


INT32_OUT = ("Fixpipe(dst=GM[0x300000], src=L0C[0], srcType=int32, dstType=int32, nSize={n}, mSize={m}, "
             "srcStride={stride}, dstStride={n})")


@pytest.mark.parametrize("chip", ["910B", "950"])
@pytest.mark.parametrize("m, k, n", [(16, 32, 16), (30, 70, 40), (1, 5, 3), (48, 96, 33)])
def test_int8_gemm_is_numpys_product(chip, m, k, n):
    a, b = _inputs(m, k, n, "int8", m * k + n)
    machine = run(cube_program(m, k, n, "int8", chip, fixpipe=INT32_OUT), _memory(a, b, 4 * m * n), chip)
    assert machine.fault is None, machine.fault
    c = np.frombuffer(machine.memory.read(C_GM, 4 * m * n), dtype=np.int32).reshape(m, n)
    assert (c == a.astype(np.int64) @ b.astype(np.int64)).all()


def test_accumulating_mmad_adds_to_l0c():
    m, k, n = 20, 40, 24
    a, b = _inputs(m, k, n, "int8", 3)
    machine = run(cube_program(m, k, n, "int8", "910B", fixpipe=INT32_OUT, accumulate=True),
                  _memory(a, b, 4 * m * n))
    c = np.frombuffer(machine.memory.read(C_GM, 4 * m * n), dtype=np.int32).reshape(m, n)
    assert (c == 2 * (a.astype(np.int64) @ b.astype(np.int64))).all()


@pytest.mark.parametrize("overflow", ["wrap", "saturate"])
def test_int32_overflow_follows_the_option(overflow):
    """Every product is -128 x -128 = 2^14; one Mmad of k = 4064 gives 4064 x 2^14, and 41 of them accumulated
    give 2,729,771,008, past 2^31 - 1: wrapped, or held at the int32 maximum."""
    m, k, n = 16, 4064, 16
    a = np.full((m, k), -128, dtype=np.int8)
    b = np.full((k, n), -128, dtype=np.int8)
    program = cube_program(m, k, n, "int8", "910B", fixpipe=INT32_OUT)
    mmad = next(line for line in program.splitlines() if line.startswith("Mmad"))
    extra = "\n".join([mmad.replace(")", ", cmatrixInitVal=false)")] * 40)
    program = program.replace(mmad, mmad + "\n" + extra)
    machine = run(program, _memory(a, b, 4 * m * n), options={"l0c_int32_overflow": overflow})
    c = np.frombuffer(machine.memory.read(C_GM, 4 * m * n), dtype=np.int32)
    exact = 41 * 4064 * (1 << 14)
    want = (1 << 31) - 1 if overflow == "saturate" else exact - (1 << 32)
    assert (c == want).all()


@pytest.mark.parametrize("chip", ["910B", "950"])
def test_fp16_gemm_through_f322f16_is_numpys_half(chip):
    m, k, n = 30, 40, 20
    a, b = _inputs(m, k, n, "float16", 11)
    out = ("Fixpipe(dst=GM[0x300000], src=L0C[0], srcType=float32, dstType=float16, nSize={n}, mSize={m}, "
           "srcStride={stride}, dstStride={n}, quantPre=F322F16)")
    machine = run(cube_program(m, k, n, "float16", chip, fixpipe=out), _memory(a, b, 2 * m * n), chip)
    assert machine.fault is None, machine.fault
    c = np.frombuffer(machine.memory.read(C_GM, 2 * m * n), dtype=np.float16).reshape(m, n)
    want = (a.astype(np.float64) @ b.astype(np.float64)).astype(np.float16)
    assert (c.view(np.uint16) == want.view(np.uint16)).all()


def test_deqf16_scales_int32_by_m1():
    """DEQF16 with M1 = 0.25 (a power of two: exact), as the documented order says: int32 -> float, x M1,
    round to half (numpy's ties-to-even float16)."""
    m, k, n = 16, 64, 32
    a, b = _inputs(m, k, n, "int8", 5)
    word = pack_scale(0.25)
    out = ("Fixpipe(dst=GM[0x300000], src=L0C[0], srcType=int32, dstType=float16, nSize={n}, mSize={m}, "
           "srcStride={stride}, dstStride={n}, quantPre=DEQF16)")
    program = f"SetFixpipePreQuantFlag(config={word:#x})\n" + cube_program(m, k, n, "int8", "910B", fixpipe=out)
    machine = run(program, _memory(a, b, 2 * m * n))
    c = np.frombuffer(machine.memory.read(C_GM, 2 * m * n), dtype=np.float16).reshape(m, n)
    want = ((a.astype(np.int64) @ b.astype(np.int64)) * 0.25).astype(np.float16)
    assert (c.view(np.uint16) == want.view(np.uint16)).all()


def test_vreq8_takes_one_word_per_column_from_fb_with_relu():
    """VREQ8: each column's own M1 (2^-8 .. 2^-5) and offset, ReLU folded in (M2 = 0): round half to even
    to s9, + offset, saturate to int8, as the documented Fixpipe order (ASC's golden scripts) has it."""
    m, k, n = 16, 64, 16
    a, b = _inputs(m, k, n, "int8", 9)
    scales = [2.0 ** -(5 + j % 4) for j in range(n)]
    offsets = [(-1) ** j * (j * 7 % 40) for j in range(n)]
    words = np.array([pack_scale(s, o) for s, o in zip(scales, offsets)], dtype=np.uint64)
    out = ("Fixpipe(dst=GM[0x300000], src=L0C[0], srcType=int32, dstType=int8, nSize={n}, mSize={m}, "
           "srcStride={stride}, dstStride={n}, quantPre=VREQ8, reluEn=true)")
    program = "\n".join([f"DataCopy(dst=L1[65536], src=GM[{WORDS_GM:#x}], blockLen={8 * n // 32})",
                         *flag("MTE2_FIX", 1),  # L1 -> FB runs on the FIX pipe
                         "DataCopy(dst=FB[0], src=L1[65536], blockLen=4)", "SetFixPipeConfig(quantPre=FB[0])",
                         cube_program(m, k, n, "int8", "910B", fixpipe=out)])
    machine = run(program, _memory(a, b, m * n) + [(WORDS_GM, words.tobytes(), True)])
    assert machine.fault is None, machine.fault
    c = np.frombuffer(machine.memory.read(C_GM, m * n), dtype=np.int8).reshape(m, n)
    product = (a.astype(np.int64) @ b.astype(np.int64)).astype(np.float64)
    scaled = np.where(product >= 0, product * np.array(scales), 0.0)
    want = np.clip(np.clip(np.round(scaled), -256, 255) + np.array(offsets), -128, 127).astype(np.int8)
    assert (c == want).all()


def test_atomic_add_adds_the_second_store_to_the_first():
    m, k, n = 16, 32, 16
    a, b = _inputs(m, k, n, "int8", 1)
    program = cube_program(m, k, n, "int8", "910B", fixpipe=INT32_OUT)
    fixpipe = program.splitlines()[-1]
    program += "\nSetAtomicAdd(dtype=int32)\n" + fixpipe + "\nSetAtomicNone()"
    machine = run(program, _memory(a, b, 4 * m * n))
    c = np.frombuffer(machine.memory.read(C_GM, 4 * m * n), dtype=np.int32).reshape(m, n)
    assert (c == 2 * (a.astype(np.int64) @ b.astype(np.int64))).all()
    assert machine.state.regs["atomic"] == 0


def test_bias_table_initialises_c_broadcast_over_rows():
    """cmatrixSource: C = bias (one row of N, broadcast) + A . B; the bias goes L1 -> BT as int32."""
    m, k, n = 16, 32, 16
    a, b = _inputs(m, k, n, "int8", 2)
    bias = np.arange(-8, 8, dtype=np.int32) * 1000
    program = cube_program(m, k, n, "int8", "910B", fixpipe=INT32_OUT)
    program = program.replace("m=16, n=16, k=32)", "m=16, n=16, k=32, cmatrixInitVal=false, cmatrixSource=true)")
    program = (f"DataCopy(dst=L1[131072], src=GM[{WORDS_GM:#x}], blockLen=2)\n" + "\n".join(flag("MTE2_MTE1", 1))
               + "\nDataCopy(dst=BT[0], src=L1[131072], srcType=int32, dstType=int32, blockLen=2)\n" + program)
    machine = run(program, _memory(a, b, 4 * m * n) + [(WORDS_GM, bias.tobytes(), True)])
    c = np.frombuffer(machine.memory.read(C_GM, 4 * m * n), dtype=np.int32).reshape(m, n)
    assert (c == a.astype(np.int64) @ b.astype(np.int64) + bias).all()


def test_a_half_bias_is_widened_to_float_in_the_bias_table():
    half = np.array([1.5, -2.25, 65504, -0.0, 2 ** -24, 3.0, 7.0, 0.1] * 2, dtype=np.float16)
    program = "\n".join(["DataCopy(dst=L1[0], src=GM[0x100000], blockLen=1)", *flag("MTE2_MTE1"),
                         "DataCopy(dst=BT[64], src=L1[0], srcType=float16, dstType=float32, blockLen=1)"])
    machine = run(program, [(A_GM, half.tobytes(), True)])
    got = machine.state.buffers["BT"][64:128].view(np.float32)
    assert (got.view(np.uint32) == half.astype(np.float32).view(np.uint32)).all()


def test_mmad_of_zero_size_is_a_nop():
    machine = run("Mmad(c=L0C[0], a=L0A[0], b=L0B[0], aType=int8, bType=int8, m=0, n=16, k=32)", [])
    assert machine.fault is None and not machine.state.buffers["L0C"].any()


@pytest.mark.parametrize("dtype, mode, columns", [("int32", "NoQuant", 16), ("int8", "REQ8", 32)])
def test_nz_output_keeps_fractals_and_int8_merges_two(dtype, mode, columns):
    """nz2nd=false: the output stays in Nz blocks, 16 columns wide (one L0C fractal), 32 for int8 (Int8
    Channel Merge), each block dstStride x 32 bytes after the one before; element (i, j) at
    dst + (j / columns) * dstStride * 32 + (i * columns + j MOD columns) * size."""
    m, n, stride = 16, 64, 80
    c = (np.arange(m * n, dtype=np.int32).reshape(m, n) % 200) - 100
    l0c = c.reshape(m, n // 16, 16).transpose(1, 0, 2).reshape(-1)  # Nz: column blocks of 16, rows inside
    word = pack_scale(1.0)
    program = (f"SetFixpipePreQuantFlag(config={word:#x})\n"
               f"Fixpipe(dst=GM[0x300000], src=L0C[0], srcType=int32, dstType={dtype}, nSize={n}, mSize={m}, "
               f"srcStride=16, dstStride={stride}, quantPre={mode}, nz2nd=false)")
    machine = Machine("ascend_cube", {"chip": "910B"})
    machine.load(machine.assemble(program), regs={}, memory=[(C_GM, bytes(8192 * 4), True)])
    machine.state.write_buffer("L0C", 0, l0c.view(np.uint8))
    machine.run()
    assert machine.fault is None, machine.fault
    size = np.dtype(dtype).itemsize
    gm = machine.memory.read(C_GM, 8192 * 4)
    for i in (0, 5, 15):
        for j in (0, 17, 31, 32, 63):
            at = (j // columns) * stride * 32 + (i * columns + j % columns) * size
            assert np.frombuffer(gm[at : at + size], dtype=dtype)[0] == c[i, j], (i, j)


@pytest.mark.parametrize("dtype, mode", [("float32", "NoQuant"), ("float16", "F322F16"), ("bfloat16", "F322BF16")])
def test_float_atomic_add_is_ieee_addition_in_the_output_type(dtype, mode):
    """SetAtomicAdd(T): GM = GM + out, one IEEE addition rounded to nearest-even in T (numpy / ml_dtypes'
    arithmetic is the reference: a float32 sum of two halves or bf16s is exact, then rounded once)."""
    import ml_dtypes

    rng = np.random.default_rng(4)
    c = rng.normal(0, 1000, (16, 16)).astype(np.float32)
    old = rng.normal(0, 1000, (16, 16)).astype(np.float32)
    numpy_type = {"float32": np.float32, "float16": np.float16, "bfloat16": ml_dtypes.bfloat16}[dtype]
    program = (f"SetAtomicAdd(dtype={dtype})\nFixpipe(dst=GM[0x300000], src=L0C[0], srcType=float32, dstType={dtype}, "
               f"nSize=16, mSize=16, srcStride=16, dstStride=16, quantPre={mode})")
    machine = Machine("ascend_cube", {"chip": "910B"})
    machine.load(machine.assemble(program), regs={}, memory=[(C_GM, old.astype(numpy_type).tobytes(), True)])
    machine.state.write_buffer("L0C", 0, c.view(np.uint8))  # one 16x16 fractal: Nz order is row order
    machine.run()
    assert machine.fault is None, machine.fault
    got = np.frombuffer(machine.memory.read(C_GM, 256 * np.dtype(numpy_type).itemsize), dtype=numpy_type)
    want = (old.astype(numpy_type).astype(np.float32) + c.astype(numpy_type).astype(np.float32)).astype(numpy_type)
    assert (got.view(np.uint8) == want.reshape(-1).view(np.uint8)).all()


def test_atomic_add_of_another_type_is_refused():
    program = ("SetAtomicAdd(dtype=float16)\nFixpipe(dst=GM[0x300000], src=L0C[0], srcType=int32, dstType=int32, "
               "nSize=16, mSize=16, srcStride=16, dstStride=16)")
    machine = Machine("ascend_cube", {"chip": "910B"})
    machine.load(machine.assemble(program), regs={}, memory=[(C_GM, bytes(1024), True)])
    machine.run()
    assert machine.fault.kind == "UNSUPPORTED" and machine.fault.index == 1 and "float16" in machine.fault.rule


@pytest.mark.parametrize("disable", [False, True])
def test_950_gemv_reads_a_as_an_nd_row_unless_disabled(disable):
    """Mmad.md (3510): m = 1 turns on GEMV mode, in which L0A is read as ND; disableGemv keeps the Nz layout.
    A's row of k = 64 int8 is placed both ways in L0A (ND at 0, Nz at 4096): each setting must read its own."""
    k, n = 64, 16
    rng = np.random.default_rng(8)
    row = rng.integers(-128, 128, k).astype(np.int8)
    other = rng.integers(-128, 128, k).astype(np.int8)
    b = rng.integers(-128, 128, (k, n)).astype(np.int8)
    # Nz of a 1 x 64 A: K1 = 2 fractals of (16 rows x 32), row 0 of each holds 32 of k
    nz = np.zeros((2, 16, 32), dtype=np.int8)
    nz[:, 0, :] = (other if not disable else row).reshape(2, 32)
    nd = row if not disable else other
    zn = np.ascontiguousarray(b.reshape(2, 32, 1, 16).transpose(0, 2, 3, 1))  # Zn (K1, N1, N0, K0)
    program = (f"Mmad(c=L0C[0], a=L0A[{0 if not disable else 4096}], b=L0B[0], aType=int8, bType=int8, m=1, n={n}, "
               f"k={k}, disableGemv={'true' if disable else 'false'})")
    machine = Machine("ascend_cube", {"chip": "950"})
    machine.load(machine.assemble(program), regs={}, memory=[])
    if disable:
        machine.state.write_buffer("L0A", 4096, nz.view(np.uint8))
        machine.state.write_buffer("L0A", 4096 + 2048, nd.view(np.uint8))  # past A's fractals: must not be read
    else:
        machine.state.write_buffer("L0A", 0, nd.view(np.uint8))
        machine.state.write_buffer("L0A", 4096, nz.view(np.uint8))
    machine.state.write_buffer("L0B", 0, zn.view(np.uint8))
    machine.run()
    assert machine.fault is None, machine.fault
    c = machine.state.buffers["L0C"][:64].view(np.int32)  # row 0 of the first Nz fractal: C[0][0..15]
    assert (c == row.astype(np.int64) @ b.astype(np.int64)).all()


@pytest.mark.parametrize("ctrl, want", [(0, 0x7F7FFFFF), (1 << 48, 0x7F800000)])
def test_ctrl_bit_48_chooses_float_saturation_in_mmad(ctrl, want):
    """Mmad.md: CTRL[48] = 0 saturates (inf -> the largest float32), 1 lets inf through. An fp16 inf in A times
    B's 1.0 makes +inf in every element of row 0."""
    a = np.zeros((16, 16), dtype=np.float16)
    a[0, 0] = np.inf
    b = np.ones((16, 16), dtype=np.float16)
    machine = Machine("ascend_cube", {"chip": "910B"})
    machine.load(machine.assemble("Mmad(c=L0C[0], a=L0A[0], b=L0B[0], aType=float16, bType=float16, m=16, n=16, "
                                  "k=16)"), regs={"ctrl": ctrl}, memory=[])
    machine.state.write_buffer("L0A", 0, a.view(np.uint8))  # one Zz fractal: row order
    machine.state.write_buffer("L0B", 0, b.view(np.uint8))
    machine.run()
    c = machine.state.buffers["L0C"][:1024].view(np.uint32).reshape(16, 16)
    assert (c[0] == want).all() and not c[1:].any()  # the other rows of A are zeros

"""LoadData with LoadData2DParamsV2 (the 950's L1 -> L0A / L0B load), against layouts worked out here.

The expectations come from the fractal layout formulas, never from isasim: Nz (M, K) -> (K1, M1, M0, K0)
(element (i, k) at ((k / C0)*M1 + i / 16)*512 + (i MOD 16)*32 + (k MOD C0)*size) for A in L1 and L0A, and Zn
(K, N) -> (K1, N1, N0, K0) for B in L0B.  The Ascend C page ("LoadData（2D矩阵搬运V2）") gives the start
fractal (kStartPosition*srcStride + mStartPosition), the units (16 rows along M, 32 B along K, 512 B strides)
and the transpose rules (b8: mStep even, b32: kStep even); the QBMM kernel (ops-nn
block_mmad_a8w8_fixpipe_quant.h, CopyInL0A / CopyInL0B) gives the parameters that load A^T / B as A / B^T.

Two tests are marked ``consistency``: the printer against isasim's own parser, and explain's worked example
against the machine (that it catches a machine that moves wrong); the layout tests above are their evidence.
"""

from __future__ import annotations

import numpy as np
import pytest

from isasim.cli import main
from isasim.core.errors import IsasimError
from isasim.core.machine import Machine

SIZE = {"int8": 1, "float16": 2, "float32": 4, "float8_e4m3fn": 1, "hifloat8": 1, "bfloat16": 2}
GM_SRC = 0x100000


def _ceil(value: int, unit: int) -> int:
    return -(-value // unit)


def _elements(rng, rows: int, cols: int, size: int) -> np.ndarray:
    """A rows x cols matrix of random elements, each ``size`` bytes (bit patterns: moves do not look at them)."""
    return rng.integers(0, 256, size=(rows, cols, size), dtype=np.uint8)


def _nz_bytes(matrix: np.ndarray, height_fractals: int | None = None) -> bytes:
    """Nz (M, K) -> (K1, M1, M0, K0) of ``matrix`` (rows x cols x size), padded with zeros to whole fractals,
    element by element from the formula."""
    rows, cols, size = matrix.shape
    c0 = 32 // size
    m1 = height_fractals or _ceil(rows, 16)
    k1 = _ceil(cols, c0)
    out = bytearray(m1 * k1 * 512)
    for i in range(rows):
        for k in range(cols):
            at = ((k // c0) * m1 + i // 16) * 512 + (i % 16) * 32 + (k % c0) * size
            out[at : at + size] = matrix[i, k].tobytes()
    return bytes(out)


def _zn_bytes(b: np.ndarray) -> bytes:
    """Zn (K, N) -> (K1, N1, N0, K0) of B (k x n x size), element by element."""
    k, n, size = b.shape
    c0 = 32 // size
    n1, k1 = _ceil(n, 16), _ceil(k, c0)
    out = bytearray(n1 * k1 * 512)
    for kk in range(k):
        for j in range(n):
            at = ((kk // c0) * n1 + j // 16) * 512 + (j % 16) * 32 + (kk % c0) * size
            out[at : at + size] = b[kk, j].tobytes()
    return bytes(out)


def _run(lines: list[str], l1: bytes = b"", gm: bytes = b"", chip: str = "950") -> Machine:
    copies = [line for line in lines if line.startswith("DataCopy")]
    if copies:  # the loads (PIPE_MTE1) wait for the copies into L1 (PIPE_MTE2), as on the NPU
        lines = copies + ["SetFlag(event=MTE2_MTE1, id=0)", "WaitFlag(event=MTE2_MTE1, id=0)"] + [
            line for line in lines if not line.startswith("DataCopy")]
    machine = Machine("ascend_cube", {"chip": chip})
    memory = [(GM_SRC, gm, True)] if gm else []
    machine.load(machine.assemble("\n".join(lines)), regs={}, memory=memory)
    if l1:
        machine.state.write_buffer("L1", 0, np.frombuffer(l1, dtype=np.uint8))
    machine.run()
    assert machine.fault is None, machine.fault
    return machine


def _v2(buffer: str, dst: int, dtype: str, m0: int, k0: int, ms: int, ks: int, ss: int, ds: int,
        transpose: bool, src: int = 0) -> str:
    return (f"LoadData(dst={buffer}[{dst}], src=L1[{src}], dtype={dtype}, mStartPosition={m0}, kStartPosition={k0}, "
            f"mStep={ms}, kStep={ks}, srcStride={ss}, dstStride={ds}, ifTranspose={'true' if transpose else 'false'})")


# ---- (1) non-transposed: a sub-block of an Nz matrix -----------------------------------------------------------

@pytest.mark.parametrize("dtype", ["int8", "float16", "float32"])
@pytest.mark.parametrize("buffer", ["L0A", "L0B"])
def test_a_sub_block_of_an_nz_matrix_lands_as_the_nz_of_the_sub_block(dtype, buffer):
    rng = np.random.default_rng(7)
    size = SIZE[dtype]
    c0 = 32 // size
    rows, cols = 80, 6 * c0  # M1 = 5, K1 = 6
    a = _elements(rng, rows, cols, size)
    m_start, k_start, m_step, k_step = 1, 2, 3, 3
    machine = _run([_v2(buffer, 1024, dtype, m_start, k_start, m_step, k_step, 5, m_step, False)],
                   l1=_nz_bytes(a))
    block = a[m_start * 16 : (m_start + m_step) * 16, k_start * c0 : (k_start + k_step) * c0]
    expected = _nz_bytes(block)
    assert machine.state.buffers[buffer][1024 : 1024 + len(expected)].tobytes() == expected


def test_the_documented_example_starts_at_the_thirteenth_fractal_and_leaves_the_dststride_gap():
    """The page's figure: half, mStartPosition=2, kStartPosition=2, mStep=2, kStep=3, srcStride=5, dstStride=3:
    the first fractal moved is the 13th (2*5 + 2 = index 12); K columns are 3 fractals apart in L0A, so the
    third fractal of each column is left as it was."""
    l1 = b"".join(bytes([f]) * 512 for f in range(30))  # fractal f is all f
    machine = _run([_v2("L0A", 0, "float16", 2, 2, 2, 3, 5, 3, False)], l1=l1)
    got = machine.state.buffers["L0A"][: 9 * 512].reshape(9, 512)
    for k in range(3):
        for m in range(2):
            assert (got[k * 3 + m] == (2 + k) * 5 + 2 + m).all(), (k, m)
        assert (got[k * 3 + 2] == 0).all()  # the gap


def test_mstep_or_kstep_zero_moves_nothing():
    machine = _run([_v2("L0A", 0, "int8", 0, 0, 0, 4, 1, 1, False), _v2("L0B", 0, "int8", 0, 0, 4, 0, 1, 1, True)],
                   l1=bytes(range(256)) * 8)
    assert not machine.state.buffers["L0A"].any() and not machine.state.buffers["L0B"].any()


# ---- (2) transposed: A^T (k x m) in L1 loads as A's Nz; B (k x n) loads as B's Zn --------------------------------

def _nd2nz(dtype: str, rows: int, cols: int, l1: int = 0) -> str:
    """DataCopy GM ND (rows x cols) -> L1 Nz, one column block every ceil16(rows) rows."""
    return (f"DataCopy(dst=L1[{l1}], src=GM[{GM_SRC:#x}], dtype={dtype}, nValue={rows}, dValue={cols}, "
            f"srcDValue={cols}, dstNzC0Stride={_ceil(rows, 16) * 16})")


def _transposed_loads(buffer: str, dtype: str, k: int, m: int) -> list[str]:
    """The QBMM kernel's CopyInL0A (transA) / CopyInL0B (!transB): the L1 matrix is k x m (k along its rows), the
    load's M axis is k and its K axis m; with M1 = ceil(m/16) odd, one load per 32-wide column of k (mStep 2)
    at dst + i*M1 fractals, each later one overwriting the fractal the previous one wrote past its column."""
    size = SIZE[dtype]
    c0 = 32 // size
    m1 = _ceil(m, 16)
    src_stride = _ceil(k, 16)
    k_step = _ceil(m, c0)
    k_rows = _ceil(k, 16)
    even = 2 if size == 1 else 1  # b8: mStep even
    if size == 4 and k_step % 2:
        k_step += 1  # b32: kStep even (the destination's extra fractal row is padding)
    if size != 1 or m1 % 2 == 0:
        return [_v2(buffer, 0, dtype, 0, 0, _ceil(k_rows, even) * even, k_step, src_stride, m1, True)]
    return [_v2(buffer, i * m1 * 512, dtype, 2 * i, 0, 2, k_step, src_stride, m1, True)
            for i in range(_ceil(k_rows, 2))]


@pytest.mark.parametrize("dtype, k, m", [("int8", 64, 64), ("int8", 64, 48), ("int8", 96, 32),
                                         ("float8_e4m3fn", 32, 96), ("hifloat8", 64, 80),
                                         ("float16", 48, 32), ("bfloat16", 32, 48), ("float32", 32, 32)])
def test_a_transposed_load_of_a_transpose_gives_a_s_nz_in_l0a(dtype, k, m):
    rng = np.random.default_rng(k * 1000 + m)
    size = SIZE[dtype]
    a = _elements(rng, m, k, size)  # A is m x k; GM holds A^T (k x m) ND
    a_t = np.ascontiguousarray(a.transpose(1, 0, 2))
    machine = _run([_nd2nz(dtype, k, m)] + _transposed_loads("L0A", dtype, k, m), gm=a_t.tobytes())
    expected = _nz_bytes(a)
    assert machine.state.buffers["L0A"][: len(expected)].tobytes() == expected
    # the same bytes as A itself, ND in GM -> Nz in L1 -> a plain (non-transposed) load
    m1, k1 = _ceil(m, 16), _ceil(k, 32 // size)
    plain = _run([_nd2nz(dtype, m, k), _v2("L0A", 0, dtype, 0, 0, m1, k1, m1, m1, False)], gm=a.tobytes())
    assert plain.state.buffers["L0A"][: len(expected)].tobytes() == expected


@pytest.mark.parametrize("dtype, k, n", [("int8", 64, 64), ("int8", 64, 48), ("float16", 32, 48),
                                         ("float32", 16, 32)])
def test_a_transposed_load_of_b_gives_b_s_zn_in_l0b(dtype, k, n):
    rng = np.random.default_rng(k * 7 + n)
    size = SIZE[dtype]
    b = _elements(rng, k, n, size)  # GM holds B (k x n) ND
    machine = _run([_nd2nz(dtype, k, n)] + _transposed_loads("L0B", dtype, k, n), gm=b.tobytes())
    expected = _zn_bytes(b)
    assert machine.state.buffers["L0B"][: len(expected)].tobytes() == expected
    # B^T (n x k) ND -> Nz in L1 -> a plain load gives the same Zn
    n1, k1 = _ceil(n, 16), _ceil(k, 32 // size)
    b_t = np.ascontiguousarray(b.transpose(1, 0, 2))
    plain = _run([_nd2nz(dtype, n, k), _v2("L0B", 0, dtype, 0, 0, n1, k1, n1, n1, False)], gm=b_t.tobytes())
    assert plain.state.buffers["L0B"][: len(expected)].tobytes() == expected


def test_an_8_bit_transpose_is_of_a_32x32_block_split_into_two_fractals():
    """The page's b8 figure: two stacked 16x32 source fractals are one 32x32 block, transposed, then split into
    two 16x32 destination fractals (rows 0-15 and 16-31 of the transpose) one above the other."""
    block = np.arange(1024, dtype=np.uint32).astype(np.uint8).reshape(32, 32)
    block[:, 0] = np.arange(32)  # column 0 of the block becomes row 0 of the transpose
    machine = _run([_v2("L0A", 0, "int8", 0, 0, 2, 1, 2, 1, True)], l1=block.tobytes())
    got = machine.state.buffers["L0A"][:1024].reshape(2, 16, 32)
    assert (got[0] == block.T[:16]).all() and (got[1] == block.T[16:]).all()


# ---- (3) faults, each with its rule, before anything is written ------------------------------------------------

FAULTS = [
    (_v2("L0A", 256, "int8", 0, 0, 1, 1, 1, 1, False), "ALIGNMENT", ["L0A[256]", "512"]),
    (_v2("L0B", 0, "int8", 0, 0, 1, 1, 1, 1, False, src=16), "ALIGNMENT", ["L1[16]", "32"]),
    (_v2("L0A", 65024, "int8", 0, 0, 2, 1, 2, 1, False), "BUFFER_OVERFLOW", ["L0A", "65536"]),
    (_v2("L0B", 0, "int8", 0, 1000, 1, 1, 1000, 1, False), "BUFFER_OVERFLOW", ["L1", "524288"]),
    (_v2("L0A", 0, "int8", 0, 0, 3, 1, 4, 2, True), "PARAM_RANGE", ["mStep 3", "multiple of 2"]),
    (_v2("L0B", 0, "float32", 0, 0, 1, 3, 1, 2, True), "PARAM_RANGE", ["kStep 3", "multiple of 2"]),
    (_v2("L0A", 0, "int8", 0, 0, 4, 2, 4, 3, False), "PARAM_RANGE", ["dstStride 3", "overlap"]),
    (_v2("L0A", 0, "int16", 0, 0, 1, 1, 1, 1, False), "UNSUPPORTED", ["int16"]),
    (_v2("L0A", 0, "int8", 0, 0, 1, 1, 1, 1, False), "UNSUPPORTED", ["910B", "LoadData2DParamsV2"]),
]


@pytest.mark.parametrize("line, kind, words", FAULTS)
def test_each_fault_names_its_rule_and_writes_nothing(line, kind, words):
    chip = "910B" if "910B" in words else "950"
    machine = Machine("ascend_cube", {"chip": chip})
    machine.load(machine.assemble("SetAtomicNone()\n" + line), regs={}, memory=[])
    machine.state.write_buffer("L1", 0, np.frombuffer(bytes(range(256)) * 64, dtype=np.uint8))
    before = {name: data.copy() for name, data in machine.state.buffers.items()}
    machine.run()
    fault = machine.fault
    assert fault is not None and fault.kind == kind and fault.index == 1, fault
    for word in words:
        assert word in fault.rule, (word, fault.rule)
    assert all((machine.state.buffers[n] == before[n]).all() for n in before)


@pytest.mark.parametrize("field, value", [("mStep", 256), ("kStep", 256), ("srcStride", 32768),
                                          ("dstStride", 65536), ("mStartPosition", 65536)])
def test_a_field_outside_its_width_is_a_one_line_error(field, value):
    params = {"mStartPosition": 0, "kStartPosition": 0, "mStep": 1, "kStep": 1, "srcStride": 1, "dstStride": 1}
    params[field] = value
    line = "LoadData(dst=L0A[0], src=L1[0], dtype=int8, " + ", ".join(f"{k}={v}" for k, v in params.items()) + ")"
    with pytest.raises(IsasimError) as error:
        Machine("ascend_cube", {"chip": "950"}).assemble(line)
    assert "\n" not in str(error.value) and field in str(error.value)


# ---- (4) the 910B has no such load ----------------------------------------------------------------------------

def test_a_v2_load_on_910b_is_refused_in_one_line_and_runs_on_950(tmp_path, capsys):
    program = tmp_path / "kernel.s"
    program.write_text("SetAtomicNone()\n" + _v2("L0A", 0, "int8", 0, 0, 2, 1, 2, 2, True) + "\n")
    assert main(["run", str(program), "--isa", "ascend_cube", "--chip", "910B", "--no-color"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"{program}:2: " in err and "910B has no such load" in err, err
    assert main(["run", str(program), "--isa", "ascend_cube", "--chip", "950", "--no-color"]) == 0
    assert "has no such" not in capsys.readouterr().err


@pytest.mark.consistency
def test_the_printer_writes_a_line_the_parser_reads_back():
    machine = Machine("ascend_cube", {"chip": "950"})
    ins = machine.assemble(_v2("L0B", 512, "float16", 1, 2, 3, 4, 5, 6, True)).instructions[0]
    assert ins.form.id == "LoadData_L1_to_L0B_V2"
    again = machine.assemble(ins.text).instructions[0]
    assert again.form.id == ins.form.id and again.operands == ins.operands


@pytest.mark.consistency
def test_a_machine_that_moves_wrong_is_caught_by_the_explain_check(monkeypatch):
    from isasim.ascend_cube import context
    from isasim.ascend_cube.explain import EXAMPLES, EXPLAINER
    from isasim.core.explain import ExplainOptions

    real = context.AscendContext.write
    monkeypatch.setattr(context.AscendContext, "write", lambda self, b, o, d, w: real(self, b, o + 32, d, w))
    for form_id in ("LoadData_L1_to_L0A_V2", "LoadData_L1_to_L0B_V2"):
        checks = EXPLAINER.explain(EXAMPLES[form_id], None, ExplainOptions(config={"chip": "950"})).checks
        assert checks and not all(c.equal for c in checks), form_id

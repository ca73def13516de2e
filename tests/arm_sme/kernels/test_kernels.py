"""The arm_sme GEMM kernels (isasim.arm_sme.kernels): the packing is the loop the builders' module
docstrings state, every kernel at SVL 128, 512 and 2048 and several sizes (ragged M, N and K included) meets
its INT64 reference on the simulator, the committed examples are what the builder makes, bad sizes
are one-line errors, and (with QEMU) the same traces agree on QEMU."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from isasim.arm_sme import ISA, kernels
from isasim.arm_sme.kernels import packing
from isasim.arm_sme.kernels.kernel import KernelSizeError
from isasim.arm_sme.kernels.udot_gemm import udot_indexed_gemm
from isasim.cli import main
from isasim.core.replay import replay
from isasim.core.trace import parse_trace, trace_json

ROOT = Path(__file__).resolve().parents[3]
EXAMPLES = ROOT / "examples" / "arm_sme"
SVLS = (128, 512, 2048)
# (M, N, K): a single element; ragged everywhere; whole tiles at SVL 128 (dim 4); more than one
# block of rows and columns at SVL 512 (dim 16) with K not a multiple of 4
SIZES = [(1, 1, 1), (7, 9, 5), (8, 12, 16), (19, 35, 13)]


def run(kernel):
    """The kernel's trace written and read back as a file would be, then replayed on the simulator."""
    trace = parse_trace(json.loads(json.dumps(trace_json(kernel.trace()))), kernel.name)
    return replay(trace)


def test_a_and_b_panels_are_the_documented_loop():
    rng = np.random.default_rng(3)
    dim, kpl = 4, 4
    a = rng.integers(0, 256, size=(6, 7)).astype(np.uint8)  # 2 row blocks, 2 k groups, both ragged
    want = np.full((2, 2, dim * kpl), packing.PAD_BYTE, dtype=np.uint8)
    for rb in range(2):
        for g in range(2):
            for i in range(dim):
                for kk in range(kpl):
                    m, k = rb * dim + i, kpl * g + kk
                    if k >= 7:
                        want[rb][g][i * kpl + kk] = 0  # K padding adds nothing
                    elif m < 6:
                        want[rb][g][i * kpl + kk] = a[m][k]
    assert (packing.pack_a_panels(a, dim, kpl, packing.PAD_BYTE) == want).all()
    assert (packing.pack_b_panels(a.T.copy(), dim, kpl, packing.PAD_BYTE) == want).all()


def test_a_broadcast_is_the_documented_loop():
    rng = np.random.default_rng(4)
    dim, kpl = 4, 2
    a = rng.integers(0, 1 << 16, size=(5, 3)).astype(np.uint16)  # 2 quads (3 zero rows), 2 k groups
    want = np.zeros((2, 2, 4, dim * kpl), dtype=np.uint16)
    for q in range(2):
        for g in range(2):
            for r in range(4):
                for j in range(dim):
                    for kk in range(kpl):
                        m, k = 4 * q + r, kpl * g + kk
                        if m < 5 and k < 3:
                            want[q][g][r][j * kpl + kk] = a[m][k]
    assert (packing.pack_a_broadcast(a, dim, kpl) == want).all()


def test_indexed_kernel_b_quad_is_the_documented_loop():
    """b_quad[c][g][4i + kk] = B[4g + kk][4c + i], the 16 bytes repeated in every 128-bit segment."""
    kernel = udot_indexed_gemm(M=3, N=6, K=5, svl=256)
    _a, b, _c0 = packing.operands(3, 6, 5, 8)
    vl = 256 // 8
    want = np.zeros((2, 2, vl), dtype=np.uint8)  # 2 column quads (N padded to 8), 2 k groups
    for c in range(2):
        for g in range(2):
            for segment in range(vl // 16):
                for i in range(4):
                    for kk in range(4):
                        k, n = 4 * g + kk, 4 * c + i
                        if k < 5 and n < 6:
                            want[c][g][16 * segment + 4 * i + kk] = b[k][n]
    b_region = next(data for address, data, _w in kernel.init.memory if address == kernel.init.regs["x1"])
    assert b_region == want.tobytes()


@pytest.mark.parametrize("svl", SVLS)
@pytest.mark.parametrize("size", SIZES, ids=lambda s: "x".join(map(str, s)))
@pytest.mark.parametrize("name", ISA.kernel_names)
def test_kernel_meets_its_int64_reference(name, size, svl):
    M, N, K = size
    kernel = kernels.build(name, M=M, N=N, K=K, svl=svl)
    final, diffs = run(kernel)
    assert final.fault is None and diffs == [], diffs[:1]


def test_reference_is_int64_wrapped_to_32_bits():
    a = np.full((1, 4), 65535, np.uint16)
    b = np.full((4, 1), 65535, np.uint16)
    c0 = np.zeros((1, 1), np.int32)
    exact = 4 * 65535 * 65535  # past 2^32: the accumulator keeps it mod 2^32
    assert int(packing.reference(a, b, c0)[0, 0]) == (exact + 2**31) % 2**32 - 2**31


def test_committed_kernel_examples_are_what_make_examples_writes(tmp_path):
    """Both files of each kernel example, the .s to read and the .trace.json to run, are current."""
    done = subprocess.run([sys.executable, str(EXAMPLES / "make_examples.py"), str(tmp_path)], capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    made = sorted(p.name for p in tmp_path.iterdir())
    assert made == sorted(f"{name}{suffix}" for name in ISA.kernel_names for suffix in (".s", ".trace.json"))
    for name in made:
        assert (tmp_path / name).read_text() == (EXAMPLES / name).read_text(), f"{name} is stale: rerun make_examples.py"


@pytest.mark.parametrize("name", ISA.kernel_names)
def test_example_is_what_the_builder_makes_and_passes(name, capsys):
    path = EXAMPLES / f"{name}.trace.json"
    built = trace_json(kernels.build(name).trace())
    assert json.loads(path.read_text()) == json.loads(json.dumps(built))
    assert main(["run", str(path)]) == 0
    assert "PASS" in capsys.readouterr().out


@pytest.mark.parametrize("options, message", [
    (dict(M=0), "M must be a whole number of at least 1, not 0"),
    (dict(K=-3), "K must be a whole number of at least 1, not -3"),
    (dict(svl=384), "--svl must be one of 128, 256, 512, 1024, 2048, not 384"),
    (dict(count=2), "take --m, --n and --k, not --count"),
    (dict(M=4096, N=4096, K=4), "more than the limit"),
])
def test_impossible_sizes_are_one_line_errors(options, message):
    for name in ISA.kernel_names:
        with pytest.raises(KernelSizeError) as caught:
            kernels.build(name, **options)
        assert message in str(caught.value) and "\n" not in str(caught.value)


def test_cli_builds_any_size_and_refuses_bad_ones(tmp_path, capsys):
    out = tmp_path / "k.json"
    assert main(["kernel", "udot_gemm", "--isa", "arm_sme", "--svl", "256", "--m", "6", "--n", "11", "--k", "9",
                 "-o", str(out)]) == 0
    assert main(["run", str(out)]) == 0
    assert "PASS" in capsys.readouterr().out
    assert main(["kernel", "umopa_gemm", "--isa", "arm_sme", "--svl", "100", "-o", str(tmp_path / "x.json")]) != 0
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "--svl must be one of" in err
    assert main(["kernel", "int8_block", "--m", "3", "-o", str(tmp_path / "y.json")]) != 0
    assert "x86_amx kernels take no --m" in capsys.readouterr().err


# On QEMU: each kernel at the three SVLs at one ragged size, and the examples.
@pytest.mark.needs_qemu
@pytest.mark.needs_clang
@pytest.mark.parametrize("svl", SVLS)
@pytest.mark.parametrize("name", ISA.kernel_names)
def test_kernel_agrees_on_qemu(name, svl):
    kernel = kernels.build(name, M=19, N=35, K=13, svl=svl)
    trace = parse_trace(json.loads(json.dumps(trace_json(kernel.trace()))), kernel.name)
    final, diffs = replay(trace, backend="qemu")
    assert final.fault is None and diffs == [], diffs[:1]


@pytest.mark.needs_qemu
@pytest.mark.needs_clang
@pytest.mark.parametrize("name", ISA.kernel_names)
def test_example_agrees_with_qemu_through_the_cli(name):
    assert main(["diff", str(EXAMPLES / f"{name}.trace.json"), "--against", "qemu"]) == 0

"""The seed article's kernels: packing as the article's loops write it, results against INT64/exact references,
the committed examples are what the builder produces, and (on an AMX host) the same kernels on silicon."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from isasim.core.backends import get_backend
from isasim.core.errors import ConfigError
from isasim.core.replay import check, replay
from isasim.core.trace import parse_trace, trace_json
from isasim.x86_amx import ISA, kernels
from isasim.x86_amx.oracle import host_cpu, platform_problem

ROOT = Path(__file__).resolve().parents[3]
EXAMPLES = ROOT / "examples" / "x86_amx"


def test_pack_b_int8_is_the_articles_loop():
    rng = np.random.default_rng(1)
    for K, N in [(64, 16), (62, 16), (8, 4), (5, 3)]:
        b = rng.integers(-128, 128, size=(K, N)).astype(np.int8)
        packed = np.zeros((-(-K // 4), 4 * N), dtype=np.int8)
        for k in range(K):  # packed_b[k / 4][4 * n + k % 4] = b[k][n];
            for n in range(N):
                packed[k // 4][4 * n + k % 4] = b[k][n]
        assert (kernels.pack_b_int8(b) == packed).all()


def test_pack_b_bf16_pairs_k_values_per_column():
    rng = np.random.default_rng(2)
    b = rng.integers(0, 1 << 16, size=(7, 5)).astype(np.uint16)
    packed = np.zeros((4, 10), dtype=np.uint16)
    for k in range(7):
        for n in range(5):
            packed[k // 2][2 * n + k % 2] = b[k][n]
    assert (kernels.pack_b_bf16(b) == packed).all()


def test_microkernel_packing_is_the_articles_loop():
    count, K = 2, 128
    kernel = kernels.int8_microkernel(count, K)
    steps = K // 64
    a = kernels.article_a(32 * count, K)
    b = kernels.article_b(K, 32, modulus=255, offset=128)
    pa = np.zeros((count, steps, 2, 16, 64), dtype=np.uint8)
    pb = np.zeros((steps, 2, 16, 64), dtype=np.int8)
    for i in range(count):
        for m in range(32):
            for k in range(K):  # pa[i][k / 64][m / 16][m % 16][k % 64] = a[i * 32 + m][k]
                pa[i][k // 64][m // 16][m % 16][k % 64] = a[i * 32 + m][k]
    for k in range(K):
        for n in range(32):  # pb[k / 64][n / 16][(k % 64) / 4][4 * (n % 16) + k % 4] = b[k][n]
            pb[k // 64][n // 16][(k % 64) // 4][4 * (n % 16) + k % 4] = b[k][n]
    regions = {address: data for address, data, _w in kernel.init.memory}
    assert regions[kernels.A_BASE] == pa.tobytes() and regions[kernels.B_BASE] == pb.tobytes()


def run_kernel(kernel):
    trace = parse_trace(json.loads(json.dumps(trace_json(kernel.trace()))), kernel.name)
    final, diffs = replay(trace)
    return final, diffs


@pytest.mark.parametrize("kernel", [
    kernels.int8_block(64), kernels.int8_block(62), kernels.int8_block(1), kernels.int8_batch(1),
    kernels.int8_batch(3), kernels.int8_per_block(3), kernels.int8_microkernel(1, 64),
    kernels.int8_microkernel(3, 128), kernels.bf16_block(32), kernels.bf16_block(30),
    kernels.bf16_microkernel(1, 32), kernels.bf16_microkernel(3, 96),
], ids=lambda k: k.name)
def test_kernels_pass_against_their_reference(kernel):
    final, diffs = run_kernel(kernel)
    assert final.fault is None and diffs == [], diffs[:1]


def test_the_articles_full_microkernel_problem():
    """M=1024, N=32, K=1280: all 32,768 outputs against the INT64 reference, as the article checks them."""
    kernel = kernels.int8_microkernel(32, 1280)
    final, diffs = run_kernel(kernel)
    assert diffs == [] and kernel.reference.shape == (1024, 32)
    assert np.abs(kernel.reference).max() < 2**31  # the article's data does not wrap


def test_a_planted_error_in_the_reference_is_caught():
    kernel = kernels.int8_batch(2)
    address, data = kernel.expected[0]
    kernel.expected[0] = (address, data[:100] + bytes([data[100] ^ 1]) + data[101:])
    _final, diffs = run_kernel(kernel)
    assert diffs and "byte 100" in diffs[0].describe()


def test_committed_examples_are_what_the_builder_makes(tmp_path):
    done = subprocess.run([sys.executable, str(EXAMPLES / "make_examples.py"), str(tmp_path)], capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    made = sorted(p.name for p in tmp_path.iterdir())
    committed = sorted(p.name for p in EXAMPLES.iterdir() if p.suffix in (".s", ".json"))
    assert made == committed
    for name in made:
        assert (tmp_path / name).read_text() == (EXAMPLES / name).read_text(), f"{name} is stale: rerun make_examples.py"


@pytest.mark.parametrize("path", sorted(EXAMPLES.glob("*.trace.json")), ids=lambda p: p.name)
def test_every_example_replays(path):
    from isasim.core.trace import read_trace

    final, diffs = replay(read_trace(path))
    assert diffs == []


@pytest.mark.needs_amx
@pytest.mark.parametrize("kernel", [kernels.int8_block(), kernels.int8_block(62), kernels.int8_batch(7),
                                    kernels.int8_per_block(3), kernels.int8_microkernel(2, 256),
                                    kernels.bf16_block(), kernels.bf16_microkernel(2, 128)], ids=lambda k: k.name)
def test_kernels_on_silicon(kernel):
    program = ISA.assemble(kernel.text)
    final = get_backend("silicon", "x86_amx", program).run("x86_amx", {}, program, kernel.init)
    assert check(kernel.trace(), final) == []


def test_silicon_refuses_kernels_without_amx_with_the_reason():
    if host_cpu().amx_features or platform_problem():
        pytest.skip("this host can run AMX kernels")
    with pytest.raises(ConfigError, match="AMX-TILE"):
        get_backend("silicon", "x86_amx", ISA.assemble(kernels.int8_block().text))

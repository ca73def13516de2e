"""A kernel split by output block (isasim.core.kernel_parallel) gives the bits the single-process run gives,
and those are the independent expectation: numpy's exact product for the x86_amx and arm_sme kernels (their
``expected`` bytes, made from an INT64 or exact float64 reference, never by running isasim), the vendor's
golden C for the qbmm cases.  Every kernel of every ISA with kernels runs in this process (--workers 1),
in two local processes and on a two-worker Dask LocalCluster; then the command lines."""

from __future__ import annotations

import shutil
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from isasim.cli import main
from isasim.core.errors import IsasimError
from isasim.core.isa import get_isa
from isasim.core.kernel_parallel import PartFault, Span, block_ranges, contiguous, run_parts, run_whole
from isasim.core.parallel import Pool, local_cluster

from cli_harness import error_line

ROOT = Path(__file__).resolve().parents[2]
QBMM_CASES = ROOT / "tests" / "ascend_cube" / "qbmm_cases"

# small sizes with several output blocks each, partial last blocks where the kernel has them
KERNELS = [
    ("x86_amx", "int8_block", {}), ("x86_amx", "bf16_block", {}),
    ("x86_amx", "int8_batch", {"count": 5}), ("x86_amx", "int8_per_block", {"count": 3}),
    ("x86_amx", "int8_microkernel", {"count": 3, "K": 128}), ("x86_amx", "bf16_microkernel", {"count": 3, "K": 64}),
    ("arm_sme", "umopa_gemm", {"M": 40, "N": 18, "K": 12}),  # 16-row blocks at SVL 512: 16, 16, 8
    ("arm_sme", "udot_gemm", {"M": 10, "N": 20, "K": 24}),  # 3 quads of rows, the last half padding
    ("arm_sme", "udot16_gemm", {"M": 14, "N": 20, "K": 10}),
    ("arm_sme", "udot_indexed_gemm", {"M": 140, "N": 10, "K": 9}),  # 3 superblocks: C^T split by columns
]
# the seed's per-channel example (6 blocks over a batch of 6), a three-core tiling with the tail round split,
# and L0C ping-pong over a batch with three-dimensional bias
QBMM = [
    (ROOT / "examples" / "ascend_cube" / "qbmm_int8_bf16" / "case.json", None),
    (QBMM_CASES / "i8_bf16_pcu64_biasi32_m257n15k300" / "case.json",
     {"baseM": 32, "baseN": 32, "baseK": 64, "blockDim": 3, "mTailTile": 2, "nTailTile": 2}),
    (QBMM_CASES / "i8_i8_pcu64_b3_bias3_m33n70k100" / "case.json",
     {"baseM": 48, "baseN": 32, "baseK": 32, "kAL1": 64, "kBL1": 64, "nBufferNum": 4, "dbL0C": 2}),
]


@pytest.fixture(scope="module")
def cluster_address():
    pytest.importorskip("distributed", reason="dask[distributed] is not installed: no cluster runs")
    with local_cluster(2) as cluster:
        yield cluster.scheduler_address


@pytest.fixture(scope="module", params=["workers=1", "workers=2", "cluster"])
def pool(request):
    if request.param == "cluster":
        opened = Pool.open(cluster=request.getfixturevalue("cluster_address"))
    else:
        opened = Pool.open(workers=int(request.param.split("=")[1]))
    with opened:
        yield opened


def _build(isa_name: str, name: str, sizes: dict):
    return get_isa(isa_name).build_kernel(name, **sizes)


@pytest.mark.parametrize("isa_name, name, sizes", KERNELS, ids=[f"{i}-{n}" for i, n, _ in KERNELS])
def test_a_kernel_split_by_block_gives_the_single_runs_c_and_the_reference(pool, isa_name, name, sizes):
    kernel = _build(isa_name, name, sizes)
    trace = kernel.trace()
    address, expected = kernel.expected[0]
    output = contiguous(address, len(expected))
    single = run_whole(isa_name, trace.config, kernel.init, kernel.lines, output)
    assert single == expected, "the single-process run is not numpy's product"
    split = kernel.parts(2)
    assert len(split) == min(2, kernel.blocks)
    assert run_parts(pool, isa_name, trace.config, kernel.init, split, output) == single
    if kernel.blocks > 2:  # every block its own part, as many parts as a larger cluster would get
        every = kernel.parts(kernel.blocks)
        assert len(every) == kernel.blocks
        assert run_parts(pool, isa_name, trace.config, kernel.init, every, output) == expected


@pytest.mark.parametrize("path, tiling", QBMM, ids=[p.parent.name for p, _ in QBMM])
def test_qbmm_blocks_in_groups_give_the_single_runs_c_and_the_golden(pool, path, tiling):
    from isasim.ascend_cube.kernels import qbmm
    from isasim.ascend_cube.kernels.qbmm_run import compare, run, run_parallel

    case = qbmm.load_case(path)
    if tiling is not None:
        case.tiling = dict(tiling)
    kernel = qbmm.build(case)
    assert len(kernel.blocks) >= 3
    single, _machine = run(kernel)
    for pieces in (None, len(kernel.blocks)):  # one group per worker, then every block alone
        c = run_parallel(kernel, pool, pieces)
        assert c.dtype == single.dtype and c.tobytes() == single.tobytes()
        result = compare(case, c)
        # int8 inputs: the golden's arithmetic does not depend on how K is cut, so every element is
        # bit-exact, not only the share the golden's tolerance asks for
        assert result.passed and result.bit_exact == result.elements, result.describe()


def test_block_ranges_are_contiguous_balanced_and_cover_every_block():
    assert block_ranges(7, 3) == [range(0, 3), range(3, 5), range(5, 7)]
    assert block_ranges(2, 5) == [range(0, 1), range(1, 2)]  # never an empty part
    assert block_ranges(1, 1) == [range(0, 1)]


def test_parts_that_leave_a_gap_or_overlap_are_refused_before_running():
    kernel = _build("x86_amx", "int8_batch", {"count": 3})
    address, expected = kernel.expected[0]
    output = contiguous(address, len(expected))
    first, second = kernel.parts(2)
    with Pool.open(workers=1) as inline:
        with pytest.raises(IsasimError, match="do not tile its output: byte 2048 .* no part"):
            run_parts(inline, "x86_amx", {"cpu": "emerald-rapids"}, kernel.init, [first], output)
        with pytest.raises(IsasimError, match="do not tile its output: byte 0 .* 2 parts"):
            run_parts(inline, "x86_amx", {"cpu": "emerald-rapids"}, kernel.init, [first, first, second], output)
        outside = replace(second, owns=(Span(address + len(expected), 1, 4, 4),))
        with pytest.raises(IsasimError, match="writes outside the output"):
            run_parts(inline, "x86_amx", {"cpu": "emerald-rapids"}, kernel.init, [first, outside], output)


def test_a_part_that_faults_is_named_with_its_instruction():
    kernel = _build("x86_amx", "int8_batch", {"count": 4})
    address, expected = kernel.expected[0]
    first, second = kernel.parts(2)
    stray = replace(second, regs={**second.regs, "rdx": 0x7000_0000})  # C pointer into unmapped memory
    with Pool.open(workers=2) as local, pytest.raises(PartFault) as caught:
        run_parts(local, "x86_amx", {"cpu": "emerald-rapids"}, kernel.init, [first, stray],
                  contiguous(address, len(expected)))
    text = str(caught.value)
    assert "part 2 of 2" in text and "blocks 2..3" in text and "tilestored" in text and "#PF" in text


# ---------------------------------------------------------------------------
# The command lines
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("argv", [
    ["kernel", "int8_batch", "--count", "5"],
    ["kernel", "int8_microkernel", "--count", "3", "--k", "128"],
    ["kernel", "--isa", "arm_sme", "udot_indexed_gemm", "--m", "140"],
], ids=["int8_batch", "int8_microkernel", "udot_indexed_gemm"])
def test_kernel_run_with_two_workers_passes(capsys, argv):
    assert main([*argv, "--run", "--workers", "2", "--no-color"]) == 0
    text = " ".join(capsys.readouterr().out.split())  # the console wraps long lines
    assert "PASS" in text and "2 parts on 2 local processes" in text


def test_kernel_run_writes_the_trace_too_and_fails_on_a_wrong_reference(tmp_path, capsys, monkeypatch):
    trace = tmp_path / "k.trace.json"
    assert main(["kernel", "int8_batch", "--count", "3", "--run", "-o", str(trace), "--no-color"]) == 0
    assert trace.exists() and "PASS" in capsys.readouterr().out
    isa = get_isa("x86_amx")
    real = isa.build_kernel

    def wrong_reference(*args, **kwargs):  # element 300 of the reference one more than numpy's product
        kernel = real(*args, **kwargs)
        address, data = kernel.expected[0]
        values = np.frombuffer(data, dtype="<i4").copy()
        values[300] += 1
        kernel.expected = [(address, values.tobytes())]
        return kernel

    monkeypatch.setattr(type(isa), "build_kernel", lambda self, *a, **k: wrong_reference(*a, **k))
    assert main(["kernel", "int8_batch", "--count", "3", "--run", "--workers", "2", "--no-color"]) == 1
    text = " ".join(capsys.readouterr().out.split())  # the console wraps long lines
    assert "FAIL" in text and "1 of 768 int32 elements of C differ; the first is element 300" in text


def test_qbmm_with_two_workers_passes(capsys):
    case = QBMM[0][0]
    assert main(["qbmm", str(case), "--workers", "2", "--no-color"]) == 0
    text = " ".join(capsys.readouterr().out.split())  # the console wraps long lines
    assert "PASS: 42,000 of 42,000 elements bit-exact" in text and "2 local processes" in text


@pytest.mark.consistency
def test_qbmm_with_workers_writes_the_same_c_as_without(tmp_path, capsys):
    case_dir = tmp_path / "case"
    shutil.copytree(QBMM[0][0].parent, case_dir)
    plain, split = tmp_path / "plain.npy", tmp_path / "split.npy"
    assert main(["qbmm", str(case_dir / "case.json"), "-o", str(plain), "--no-color"]) == 0
    assert main(["qbmm", str(case_dir / "case.json"), "-o", str(split), "--workers", "2", "--no-color"]) == 0
    capsys.readouterr()
    assert np.load(plain).tobytes() == np.load(split).tobytes()


@pytest.mark.parametrize("argv, words", [
    (["kernel", "int8_block", "--workers", "2"], ["--run"]),
    (["kernel", "int8_block", "--cluster", "tcp://127.0.0.1:8786", "-o", "k.json"], ["--run"]),
    (["kernel", "int8_block"], ["-o/--output", "--run"]),
    (["kernel", "int8_block", "--run", "--cluster", "tcp//127.0.0.1:8786"], ["--cluster", "not a scheduler address"]),
    (["kernel", "int8_block", "--run", "--cluster", "tcp://127.0.0.1:70000"], ["port 70000"]),
    (["kernel", "int8_block", "--run", "--workers", "2", "--cluster", "tcp://127.0.0.1:8786"], ["give one"]),
    (["qbmm", QBMM[0][0], "--workers", "2", "--step"], ["--step and --blocks"]),
    (["qbmm", QBMM[0][0], "--cluster", "tcp://127.0.0.1:8786", "--blocks"], ["--step and --blocks"]),
    (["qbmm", QBMM[0][0], "--cluster", "127.0.0.1:8786:x"], ["not a scheduler address"]),
], ids=["kernel-workers-without-run", "kernel-cluster-without-run", "kernel-no-output", "kernel-bad-cluster",
        "kernel-bad-port", "kernel-both-places", "qbmm-step", "qbmm-blocks", "qbmm-bad-cluster"])
def test_misused_parallel_options_are_one_line_and_exit_2(tmp_path, monkeypatch, capsys, argv, words):
    monkeypatch.chdir(tmp_path)
    error_line(capsys, argv, *words)
    assert not (tmp_path / "k.json").exists()

"""The benchmark command runs (on tiny sizes); what it measures is reported by the benchmark, not asserted here."""

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_benchmark_command_runs_quick(tmp_path):
    out = tmp_path / "bench.json"
    done = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "run.py"), "--quick", "--json", str(out)],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    results = json.loads(out.read_text())
    assert {row["kernel"] for row in results["simulator"]} >= {"int8_block", "bf16_block"}
    assert "sim/numpy" in done.stdout and "silicon" in done.stdout
    sme = results["arm_sme"]["rows"]
    assert {row["kernel"] for row in sme} == {"udot_gemm", "udot16_gemm", "umopa_gemm", "udot_indexed_gemm"}
    assert all(row["instructions"] > 0 for row in sme)
    # a timing lost in the fixed costs' noise (a loaded machine) is reported as "noise", never as a figure
    assert all(row["isasim_s"] is None or row["isasim_s"] > 0 for row in sme)
    if any(row["isasim_s"] is None for row in sme):
        assert "noise" in done.stdout
    assert "arm_sme kernel" in done.stdout and "isasim/qemu" in done.stdout


def test_the_silicon_timing_program_repeats_the_kernel_correctly():
    """The program timed on AMX hosts (the kernel in a loop of calls) computes the kernel's result."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        import run as bench
    finally:
        sys.path.pop(0)
    from isasim.core.machine import Machine
    from isasim.x86_amx import ISA, kernels

    for kernel in (kernels.int8_per_block(3), kernels.int8_batch(3), kernels.int8_microkernel(1, 128)):
        program = ISA.assemble(bench.repeated(kernel, 3))
        machine = Machine("x86_amx")
        machine.load(program, regs=kernel.init.regs, memory=kernel.init.memory)
        result = machine.run(100_000)
        assert result.fault is None and result.halted
        for address, data in kernel.expected:
            assert machine.memory.read(address, len(data)) == data


def test_the_silicon_tables_put_the_article_beside_the_measurement_with_its_ratios():
    """On an AMX host the measured tables print beside the article's, with the speed-ups and K ratios."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        import run as bench
    finally:
        sys.path.pop(0)
    measured = {"blocks_ns": {count: (100.0, 25.0) for count in bench.ARTICLE_BLOCKS},
                "microkernel_us": {512: 10.0, 1024: 20.0, 1280: 25.0, 1536: 36.0}}
    for silicon in (measured, json.loads(json.dumps(measured))):  # as measured, and as read back from the JSON file
        text = "\n".join(bench.silicon_report(silicon))
        assert "4.00x" in text  # 100 / 25 ns per block: the reuse speed-up here
        assert f"{104.04 / 30.28:4.2f}x" in text  # the article's at count 4
        assert "3.60x" in text and f"{30.43 / 9.34:.2f}x" in text  # K=1536 over K=512, here and in the article
        assert f"{36.0 * 1e3 / (32 * 24):.2f}" in text  # ns per 32x32x64 step at K=1536
    assert bench.silicon_report({"skipped": "no AMX"}) == ["silicon tables: not measured: no AMX"]


def test_sme_benchmark_command_runs_quick(tmp_path):
    out = tmp_path / "sme.json"
    done = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "sme.py"), "--quick", "--json", str(out)],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    rows = json.loads(out.read_text())["rows"]
    assert [row["svl"] for row in rows] == [128, 256, 512, 1024, 2048] and all(row["dots"] == 1000 for row in rows)
    assert "at SVL 512" in done.stdout or "QEMU not available" in done.stdout


def test_the_sme_timing_loop_runs_the_kernel_again_each_time():
    """The program timed R and 2R times (the kernel in a loop, its registers set again each run) adds A x B
    to C once per run: after three runs C = C0 + 3 (C1 - C0), C1 being the INT64 reference's result."""
    import numpy as np

    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        import sme_kernels as bench
    finally:
        sys.path.pop(0)
    from isasim.arm_sme import ISA, kernels
    from isasim.core.machine import Machine

    for name in kernels.BUILDERS:
        kernel = kernels.build(name, M=5, N=7, K=9, svl=256)
        machine = Machine("arm_sme", {"svl": 256})
        machine.load_init(ISA.assemble(bench.repeated(kernel, 3)), kernel.init)
        assert machine.run(1_000_000).fault is None
        initial = {address: data for address, data, _ in kernel.init.memory}
        for address, expected in kernel.expected:
            start = next(a for a, data in initial.items() if a <= address < a + len(data))
            c0 = np.frombuffer(initial[start][address - start:address - start + len(expected)], np.int32)
            c1 = np.frombuffer(expected, np.int32)
            three = (c0.astype(np.int64) + 3 * (c1.astype(np.int64) - c0)).astype(np.int32)  # wraps as int32 does
            assert machine.memory.read(address, len(expected)) == three.tobytes(), name


def test_the_fuzz_scaling_benchmark_runs_quick(tmp_path):
    """benchmarks/fuzz_scale.py on a tiny campaign: every row ran the same campaign (it checks that itself and
    exits 1 otherwise) and reports programs per second."""
    out = tmp_path / "scale.json"
    done = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "fuzz_scale.py"), "--quick", "--json", str(out)],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    rows = json.loads(out.read_text())["rows"]
    assert [row["where"] for row in rows][:2] == ["this process", "2 local processes"]
    assert all(row["programs_per_second"] > 0 for row in rows) and "ceiling" in done.stdout


def test_the_sme_fuzz_benchmark_runs_quick_and_both_engines_agree(tmp_path):
    """benchmarks/sme_fuzz.py on a few cases: every program ends the same on both engines (it exits 1
    otherwise and prints no figure) and the parts of a program's time are reported."""
    out = tmp_path / "sme_fuzz.json"
    done = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "sme_fuzz.py"), "--quick", "--json", str(out)],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    row = json.loads(out.read_text())
    assert row["disagreeing"] == 0 and row["programs"] >= 15
    assert "programs per second" in done.stdout

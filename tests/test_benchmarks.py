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

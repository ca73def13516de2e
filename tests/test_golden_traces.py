"""Every golden trace under traces/ replays on the simulator with no difference.

The traces are measurements (their producer is silicon for x86_amx, QEMU for arm_sme), so
they are the project's evidence on machines without AMX or QEMU: each one is replayed on every
host, and a sample also goes through ``isasim run``, which must reach the same verdict as ``replay``.
"""

from pathlib import Path

import pytest

from isasim.cli import main
from isasim.core.replay import replay
from isasim.core.trace import read_trace

TRACES_DIR = Path(__file__).resolve().parents[1] / "traces"
TRACES = sorted(TRACES_DIR.rglob("*.trace.json"))
SILICON_AMX = sorted((TRACES_DIR / "x86_amx" / "silicon").glob("*.trace.json"))
QEMU_SME = sorted((TRACES_DIR / "arm_sme").glob("*.trace.json"))
EXPECTED_QEMU_SME = 129  # traces/arm_sme/README.md: 123 dots at five SVLs and 6 faults
MEASURED_BY = {"x86_amx": "silicon: ", "arm_sme": "qemu: "}  # who may have produced a golden trace

# traces/x86_amx/silicon/ holds 103 traces measured on Emerald Rapids; the three scalar
# ones beside it were recorded on silicon with isasim.  A lost file must not pass quietly.
EXPECTED_SILICON_AMX = 103
EXPECTED_SCALAR = 3
CATEGORIES = {"int8": 30, "bf16": 30, "ldst": 12, "fault": 21, "kernel": 10}


def test_no_golden_trace_went_missing():
    assert len(SILICON_AMX) >= EXPECTED_SILICON_AMX, (
        f"only {len(SILICON_AMX)} traces in traces/x86_amx/silicon/, expected {EXPECTED_SILICON_AMX}")
    assert len(QEMU_SME) >= EXPECTED_QEMU_SME, f"only {len(QEMU_SME)} traces in traces/arm_sme/"
    expected = EXPECTED_SILICON_AMX + EXPECTED_SCALAR + EXPECTED_QEMU_SME
    assert len(TRACES) >= expected, f"only {len(TRACES)} golden traces under traces/, expected {expected}"
    for category, count in CATEGORIES.items():
        found = [p for p in SILICON_AMX if p.name.startswith(category + "-")]
        assert len(found) >= count, f"{category}: {len(found)} traces, expected {count}"


@pytest.mark.parametrize("path", TRACES, ids=lambda p: str(p.relative_to(TRACES_DIR)))
def test_golden_trace_replays(path):
    trace = read_trace(path)
    measured_by = MEASURED_BY[trace.isa]
    assert trace.producer.startswith(measured_by), f"{path.name}: producer {trace.producer!r} is not {measured_by}"
    _final, diffs = replay(trace)
    assert diffs == [], diffs[0].describe()


# One of each category plus the scalar traces with per-step records: `run` must agree with `replay`.
RUN_SAMPLE = [p for p in TRACES if p.parent.name != "silicon"] + [
    next(p for p in SILICON_AMX if p.name.startswith(category + "-")) for category in CATEGORIES]


@pytest.mark.parametrize("path", RUN_SAMPLE, ids=lambda p: str(p.relative_to(TRACES_DIR)))
def test_isasim_run_passes_a_golden_trace(path, capsys):
    status = main(["run", str(path), "--no-color"])
    out = capsys.readouterr().out
    assert status == 0 and "PASS" in out, out[-2000:]

"""``isasim explain`` on Ascend instructions whose parameters reach past their buffers, or far across GM:
it faults as ``isasim run`` faults (the same fault from the same check, raised before any example data is
built), and builds no more data than the instruction reads, so a large legal instruction is explained in
about the time a small one is.

The fault test is marked ``consistency`` (explain against isasim's own run); the evidence for the faults and
their rules is the documented limits test_faults.py checks."""

from __future__ import annotations

import subprocess
import sys
import time

import pytest

from isasim.ascend_cube.explain import EXPLAINER, example_data
from isasim.core.explain import ExplainOptions, Table
from isasim.core.machine import Machine

FIXPIPE = ("Fixpipe(dst=GM[0x200000], src=L0C[{src}], srcType=int32, dstType=int8, nSize=16, mSize=16, "
           "srcStride={stride}, dstStride=16, quantPre=VREQ8)")
FAULTING = [
    FIXPIPE.format(src=0, stride=65535),  # the issue's: the example's L0C data was written past L0C
    FIXPIPE.format(src="0xfffffffffffff000", stride=16),  # the issue's hang: 2^64 - 4096 bytes of example data
    "Mmad(c=L0C[0], a=L0A[0], b=L0B[0], aType=int8, bType=int8, m=256, n=256, k=512)",
    "Mmad(c=L0C[0], a=L0A[65024], b=L0B[0], aType=int8, bType=int8, m=16, n=16, k=64)",
    "LoadData(dst=L0A[0], src=L1[523776], dtype=int8, repeatTimes=2)",
    "LoadData(dst=L0A[0], src=L1[0], dtype=int8, mStartPosition=0, kStartPosition=0, mStep=255, kStep=255, "
    "srcStride=255, dstStride=255)",
    "DataCopy(dst=L1[524256], src=GM[0x100000], blockCount=2, blockLen=1)",
    "DataCopy(dst=BT[0], src=L1[0], srcType=float32, dstType=float32, blockCount=4095, blockLen=1)",
    "DataCopy(dst=L1[0], src=GM[0x100000], dtype=int8, nValue=16384, dValue=65535, srcDValue=65535, "
    "dstNzC0Stride=16384)",
    "Fixpipe(dst=L1[524256], src=L0C[0], srcType=float32, dstType=float32, nSize=16, mSize=16, srcStride=16, "
    "dstStride=16)",
]


def _run_fault(line: str, chip: str):
    machine = Machine("ascend_cube", {"chip": chip})
    machine.load(machine.assemble(line), regs={}, memory=[])
    return machine.run(max_steps=2).fault


def _explained_fault(line: str, chip: str) -> list[str]:
    explanation = EXPLAINER.explain(line, None, ExplainOptions(config={"chip": chip}))
    tables = [block for section in explanation.sections for block in section.blocks
              if isinstance(block, Table) and block.columns == ["fault", "rule"]]
    assert len(tables) == 1, line
    return [str(getattr(cell, "text", cell)) for cell in tables[0].rows[0]]


@pytest.mark.consistency
@pytest.mark.parametrize(("line", "chip"), [(line, chip) for line in FAULTING for chip in ("910B", "950")
                                            if not ("mStartPosition" in line and chip == "910B")])  # V2: the 950's
def test_explain_faults_as_run_does_before_building_any_data(line, chip, monkeypatch):
    built = []
    monkeypatch.setattr(example_data, "seed_buffers", lambda *a: built.append("buffers"))
    monkeypatch.setattr(example_data, "map_gm", lambda *a: built.append("gm"))
    fault = _run_fault(line, chip)
    assert fault is not None and fault.kind in ("BUFFER_OVERFLOW", "PARAM_RANGE"), (line, fault)
    assert _explained_fault(line, chip) == [fault.kind, fault.rule]
    assert built == []


def test_the_issues_l0c_offset_explains_in_seconds_not_minutes():
    """It ran past 60 s (the example built 2^64 - 4096 bytes of L0C data); run faulted in one."""
    line = FIXPIPE.format(src="18446744073709547520u", stride=16)
    started = time.monotonic()
    result = subprocess.run([sys.executable, "-m", "isasim", "explain", line, "--isa", "ascend_cube"],
                            capture_output=True, text=True, timeout=45)
    assert result.returncode == 0 and "BUFFER_OVERFLOW" in result.stdout, result.stderr
    assert time.monotonic() - started < 30


@pytest.mark.parametrize("line, read", [
    # 16 bursts of 32 bytes, 2 MiB apart: the example mapped (and filled byte by byte) the 33 MB between them
    ("DataCopy(dst=L1[0], src=GM[0x100000], blockCount=16, blockLen=1, srcStride=65535, dstStride=0)", 16 * 32),
    # two 32-byte rows 4 GiB apart (int32 ND rows, dstStride 2^30): the example allocated 4 GiB of zeros
    ("Fixpipe(dst=GM[0x200000], src=L0C[0], srcType=int32, dstType=int32, nSize=8, mSize=2, srcStride=16, "
     "dstStride=1073741824)", 2 * 32),
])
def test_the_example_maps_the_gm_the_instruction_touches_not_the_gaps(line, read, monkeypatch):
    mapped = []
    real = example_data.map_gm

    def recording(machine, access, numbers, quant_word):
        regions = real(machine, access, numbers, quant_word)
        mapped.extend(end - start for start, end in regions)
        return regions

    monkeypatch.setattr(example_data, "map_gm", recording)
    explanation = EXPLAINER.explain(line, None, ExplainOptions())
    assert explanation.checks and all(check.equal for check in explanation.checks)
    assert read <= sum(mapped) <= read + len(mapped) * example_data.GM_ROWS_SHARE_GAP


def test_gm_an_example_cannot_map_is_refused_in_one_line():
    """4,095 reads of 32 bytes 1 GiB apart (a legal GM -> L1 copy) would be 4 TiB of GM in one region or
    4,095 regions of their own: within the region limit.  One more region than the limit is refused."""
    from isasim.ascend_cube.semantics.access import Access, Span
    from isasim.core.explain import ExplainError

    spread = Span("GM", 0, example_data.GM_EXAMPLE_REGIONS + 1, 32, 1 << 30)
    with pytest.raises(ExplainError, match="explain maps at most 64 MiB in 4,096 regions"):
        example_data.gm_regions(Access(reads=(spread,)))
    assert len(example_data.gm_regions(Access(reads=(Span("GM", 0, 4095, 32, 1 << 30),)))) == 4095


def test_an_mmad_the_chip_has_but_isasim_does_not_simulate_is_one_line_naming_it(tmp_path, capsys):
    """float32 x float32 is in the chips' Mmad pairs, but mmad_math does not compute it: run and explain ended
    in an internal error (ValueError, exit 70); found by tests/fuzz/test_fuzz_ascend.py."""
    from isasim.cli import main

    line = "Mmad(c=L0C[0], a=L0A[0], b=L0B[0], aType=float32, bType=float32, m=16, n=16, k=8)"
    program = tmp_path / "f32.asc"
    program.write_text(line + "\n")
    assert main(["run", str(program), "--isa", "ascend_cube"]) == 2
    assert main(["explain", line, "--isa", "ascend_cube"]) == 2
    errors = capsys.readouterr().err.splitlines()
    assert len(errors) == 2 and errors[0].startswith(f"isasim: error: {program}:1: Mmad float32 x float32")
    assert "does not simulate" in errors[1]

"""What `run` shows after a kernel's closing instruction discarded its engine state (issue 25).

The seed's AMX block ends with TILERELEASE and the SME GEMM with SMSTOP, so the tiles and ZA are zero at
the end of the run: `run` said "INIT: tiles not configured" and printed an all-zero ZA.  Both now show what
the discarding instruction found, labelled as such, and the expectations checked here come from outside:
the C the kernels stored (an INT64 reference for AMX, QEMU's run for SME) is what the tiles / ZA held."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from isasim import cli
from isasim.core.machine import Machine
from isasim.core.trace import read_trace

ROOT = Path(__file__).resolve().parent.parent
AMX_BLOCK = ROOT / "examples" / "x86_amx" / "int8_block.trace.json"
SME_GEMM = ROOT / "examples" / "arm_sme" / "smopa_gemm.trace.json"


def _ran(path: Path):
    """The machine after the trace's run, and the trace."""
    trace = read_trace(str(path))
    machine = Machine(trace.isa, trace.config)
    machine.load_init(machine.assemble("\n".join(trace.program)), trace.init)
    machine.run()
    return machine, trace


@pytest.fixture(autouse=True)
def wide(monkeypatch):
    monkeypatch.setenv("COLUMNS", "200")  # a tile row of 16 int32 on one line, whatever terminal runs the tests


def test_the_amx_block_shows_the_configuration_tilerelease_ended(capsys):
    assert cli.main(["run", str(AMX_BLOCK), "--no-color", "--show", "tmm0:int32"]) == 0
    out = capsys.readouterr().out
    assert re.search(r"INIT: tilerelease \(instruction \d+, 0x[0-9a-f]+\) released the tiles; as configured "
                     r"before it \(palette=1\)", out), out
    for tile in ("tmm0", "tmm1", "tmm2"):
        assert re.search(rf"^ {tile} +16 +64 *$", out, re.M), out
    # tmm0, the accumulator, as the release found it: C, which the INT64 reference of the trace expects
    machine, trace = _ran(AMX_BLOCK)
    [(_address, data)] = trace.expect["memory"]
    c = np.frombuffer(data, dtype=np.int32).reshape(16, 16)
    assert np.array_equal(machine.state.released.tiles[0].view(np.int32), c)
    assert "tmm0  16x16 int32  before the release (now zero)" in out
    assert " ".join(f"{v:5d}" for v in c[0]) in out


def test_the_sme_gemm_shows_what_za_held_before_smstop(capsys):
    assert cli.main(["run", str(SME_GEMM), "--no-color", "--show", "za:int32"]) == 0
    out = capsys.readouterr().out
    assert "ZA is off (PSTATE.ZA=0) since smstop (instruction" in out and "as it was before:" in out
    assert "(before ZA was turned off)" in out and "all zero" not in out
    machine, trace = _ran(SME_GEMM)
    [data] = [data for address, data in trace.expect["memory"] if address == 0x300000]
    c = np.frombuffer(data, dtype=np.int32).reshape(16, 16)
    # ZA0.S's horizontal slices are ZA vectors 0, 4, 8, ... at SVL 512; ST1W stored them as C's rows (QEMU's C)
    za = machine.state.za_turned_off.za
    assert np.array_equal(za[0::4].view(np.int32)[:, :16], c)
    assert not machine.state.za.any()  # the architectural state is untouched: a ZA that is off reads as zero

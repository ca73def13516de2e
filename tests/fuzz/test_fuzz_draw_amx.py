"""x86 AMX fuzzing with the numpy drawer (isasim.x86_amx.fuzz.AmxGenerator's draw and reductions hooks).

AMX programs run on silicon only on an AMX host, so the campaigns here run against the simulator (the
plumbing) and against a planted backend: the simulator with one bug on purpose, rax one too high after an
executed TDPBUUD.  Its smallest reproduction is known (LDTILECFG, the TDPBUUD, RET): the greedy shrinker
must reach it, and the trace it writes must convict the simulator of disagreeing with that backend.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from isasim.cli import main
from isasim.core.backends import BACKENDS, SimulatorBackend
from isasim.core.fuzz.drawing import DRAWER, HYPOTHESIS, draw_cases
from isasim.core.machine import Machine
from isasim.core.trace import read_trace
from isasim.x86_amx import fuzz
from isasim.x86_amx.fuzz import amx as fuzz_amx

AMX_SEED_OFFSET = [g.subset for g in fuzz.GENERATORS].index("amx")  # a subset draws from seed + its position


class PlantedTdpbuud(SimulatorBackend):
    """The simulator, but rax ends one too high when a TDPBUUD ran without a fault."""

    name = "planted-tdpbuud"

    def run(self, isa, config, program, init, **options):
        final = super().run(isa, config, program, init, **{**options, "keep_records": True})
        if any(r.fault is None and r.instruction.mnemonic == "tdpbuud" for r in final.records):
            final.observed["regs"]["rax"] = (final.observed["regs"]["rax"] + 1) & ((1 << 64) - 1)
        return final


    def lockstep(self, isa, config, program, init, **options):
        ran = False
        for index, pc, observed, memory, fault in super().lockstep(isa, config, program, init, **options):
            ran = ran or (fault is None and program.at(pc).mnemonic == "tdpbuud")
            if ran:
                observed["regs"]["rax"] = (observed["regs"]["rax"] + 1) & ((1 << 64) - 1)
            yield index, pc, observed, memory, fault


@pytest.fixture
def planted(monkeypatch):
    monkeypatch.setitem(BACKENDS, PlantedTdpbuud.name, PlantedTdpbuud())
    return PlantedTdpbuud.name


def counts_of(cases) -> Counter:
    total: Counter = Counter()
    for case in cases:
        text, init = case.standalone()
        total.update(fuzz.count_executed(Machine("x86_amx").assemble(text), init)[0])
    return total


def test_the_amx_generator_draws_the_drawers_cases_in_chunks():
    n = fuzz.AmxGenerator.DRAW_CHUNK + 30  # across a chunk's end
    assert list(fuzz.AmxGenerator().draw(n, 9)) == fuzz_amx.draw_amx_cases(n, 9)


def test_an_amx_campaign_draws_with_numpy_by_default_and_with_hypothesis_when_asked(tmp_path):
    summary = fuzz.run_fuzz(12, 5, against="sim", isa_subset="amx", out_dir=tmp_path, workers=1)
    assert summary.draws == {"amx": DRAWER} and summary.cases["amx"] == 12 and not summary.divergences
    assert summary.instructions == counts_of(fuzz_amx.draw_amx_cases(12, 5 + AMX_SEED_OFFSET))
    asked = fuzz.run_fuzz(6, 5, against="sim", isa_subset="amx", out_dir=tmp_path, workers=1, draw=HYPOTHESIS)
    assert asked.draws == {"amx": HYPOTHESIS}
    assert asked.instructions == counts_of(draw_cases(fuzz_amx.amx_cases(), 6, 5 + AMX_SEED_OFFSET))


def test_scalar_cases_stay_with_hypothesis(tmp_path):
    summary = fuzz.run_fuzz(3, 1, against="sim", out_dir=tmp_path, workers=1, isa_subset="scalar")
    assert summary.draws == {"scalar": HYPOTHESIS}


def test_a_lockstep_amx_campaign_runs_drawn_cases(tmp_path):
    summary = fuzz.run_fuzz(4, 2, against="sim", isa_subset="amx", lockstep=True, out_dir=tmp_path, workers=1)
    assert summary.mode == "lockstep" and summary.cases["amx"] == 4 and not summary.divergences


def test_amx_reductions_cut_first_then_drop_one_statement_and_keep_the_ret():
    case = next(c for c in fuzz_amx.draw_amx_cases(30, 4) if 5 <= c.size <= 12)
    body = list(case.lines[:-1])
    reductions = list(fuzz.AmxGenerator().reductions(case))
    cuts = [tuple(body[: i + 1]) + ("ret",) for i in range(len(body) - 1)]
    drops = [tuple(body[:i] + body[i + 1 :]) + ("ret",) for i in range(len(body))]
    assert [r.lines for r in reductions] == cuts + drops
    assert all((r.regs, r.configs, r.data_seed, r.dest_fill) == (case.regs, case.configs, case.data_seed,
                                                                  case.dest_fill) for r in reductions)


def test_a_planted_amx_divergence_is_shrunk_greedily_to_a_trace_that_reproduces_it(tmp_path, planted):
    summary = fuzz.run_fuzz(40, 4, against=planted, isa_subset="amx", out_dir=tmp_path, workers=1,
                            max_divergences=1)
    assert summary.draws == {"amx": DRAWER} and summary.divergent_cases == 1, summary
    found = summary.divergences[0]
    assert found.shrunk and found.original_size > 3 and found.mode == "final", found
    assert len(found.program) == 3 and found.program[1].startswith("tdpbuud tmm"), found.program
    assert found.program[0].startswith("ldtilecfg [rcx") and found.program[2] == "ret"
    assert found.description == f"rax: sim 0x0, {planted} 0x1"
    trace = read_trace(found.trace)
    assert Path(found.trace).parent == tmp_path and trace.program == found.program
    assert trace.producer.startswith(f"isasim {planted}; isasim fuzz: seed {4 + AMX_SEED_OFFSET}, amx case "
                                     f"{found.case} drawn with numpy, final: ")
    assert trace.expect["regs"]["rax"] == 1 and trace.expect["fault"] is None
    assert main(["replay", "--no-color", found.trace]) == 1  # the simulator gives rax 0
    assert main(["replay", "--no-color", "--backend", planted, found.trace]) == 0
    # The same seed shrinks to the same case and writes the same trace.
    again = fuzz.run_fuzz(40, 4, against=planted, isa_subset="amx", out_dir=tmp_path / "again", workers=1,
                          max_divergences=1)
    assert [(d.case, d.program, d.notes) for d in again.divergences] == [(found.case, found.program, found.notes)]
    assert Path(again.divergences[0].trace).read_text() == Path(found.trace).read_text()


def test_a_planted_lockstep_amx_divergence_seen_at_the_end_is_shrunk_comparing_final_states(tmp_path, planted):
    summary = fuzz.run_fuzz(40, 4, against=planted, isa_subset="amx", out_dir=tmp_path, workers=1, lockstep=True,
                            max_divergences=1)
    found = summary.divergences[0]
    assert found.mode == "final" and found.shrunk and len(found.program) == 3, found
    assert found.program[1].startswith("tdpbuud tmm")
    assert main(["replay", "--no-color", found.trace]) == 1


def test_the_fuzz_command_draws_amx_with_numpy_and_refuses_numpy_for_scalar(tmp_path, capsys):
    common = ["fuzz", "--against", "sim", "--cases", "4", "--no-color", "--out", str(tmp_path)]
    assert main(common + ["--only", "amx"]) == 0
    assert "4 programs (amx 4 drawn with numpy) on sim and sim" in " ".join(capsys.readouterr().out.split())
    assert main(common + ["--only", "scalar", "--draw", "numpy"]) == 2
    captured = capsys.readouterr()
    assert not captured.out and captured.err == ("isasim: error: scalar cases have no numpy drawer (only amx has "
                                                 "one): draw them with hypothesis\n")
    assert not list(tmp_path.glob("*.trace.json"))  # no divergence, no trace (the campaign keeps its shards)

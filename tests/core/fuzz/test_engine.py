"""The ISA-neutral fuzzing engine (isasim.core.fuzz) driven by the toy ISA's generators (tests/toy_isa/fuzz.py).

Nothing here is x86: the cases are toy programs that add a few numbers into r0 and store
it, and the other backend is a "shaky" simulator that gets r0 wrong on the programs a test
picks, so that the engine has divergences to pin, shrink and write as traces.
"""

from __future__ import annotations

import pickle
from collections import Counter

import pytest

from isasim.cli import main
from isasim.core.backends import BACKENDS, SimulatorBackend
from isasim.core.campaign import plan_shards, run_campaign
from isasim.core.errors import ConfigError
from isasim.core.fuzz.subsets import FuzzUnavailable
from isasim.core.isa import KNOWN_ISAS
from isasim.core.trace import read_trace
from toy_isa.fuzz import BatchedSums, Shaky, Sum, Sums, big_addend


@pytest.fixture(autouse=True)
def toy(monkeypatch):
    monkeypatch.setitem(KNOWN_ISAS, "toy", "toy_isa")


def shaky(monkeypatch, wrong=big_addend):
    monkeypatch.setitem(BACKENDS, "shaky", Shaky(wrong))


GENERATORS = (BatchedSums(), Sums())


def campaign(tmp_path, cases=40, seed=3, against="sim", **options):
    return run_campaign("toy", GENERATORS, cases, seed, against, out_dir=tmp_path, workers=1, **options)


def test_cases_are_shared_by_weight_and_each_subset_draws_from_its_own_seed():
    shards = plan_shards("toy", GENERATORS, ["batched", "sums"], 41, 7, "sim", "final", {})
    # batched (weight 3) takes 31 cases, in shards of two batches of 4; sums 10, one shard (250 at most);
    # the next shard is the one of the subset least far through its share
    assert [(s.subset, s.number, s.first, s.cases) for s in shards] == [
        ("batched", 0, 0, 8), ("sums", 0, 0, 10), ("batched", 1, 8, 8), ("batched", 2, 16, 8), ("batched", 3, 24, 7)]
    seeds = [s.seed for s in shards]
    assert seeds[:2] == [7, 8] and len(set(seeds)) == 5  # shard 0 of generator i: seed + i; the others their own
    assert [s.seed for s in plan_shards("toy", GENERATORS, ["batched"], 41, 7, "sim", "final", {})][:4] == \
        [seeds[0], *seeds[2:]]  # a subset's shards do not depend on the other subsets
    only = plan_shards("toy", GENERATORS, ["sums"], 41, 7, "sim", "final", {})
    assert [(s.subset, s.seed, s.cases) for s in only] == [("sums", 8, 41)]
    assert pickle.loads(pickle.dumps(shards[0])) == shards[0]  # a shard is a plain description


def test_the_same_seed_runs_the_same_cases(tmp_path):
    one, two = campaign(tmp_path), campaign(tmp_path)
    assert not one.divergences and one.cases == two.cases == Counter(batched=30, sums=10)
    assert one.instructions == two.instructions and one.instructions["halt"] == 10  # a batch counts its cases' own lines only
    assert campaign(tmp_path, seed=4).instructions != one.instructions


def test_a_divergence_is_pinned_shrunk_and_written_as_a_trace_that_convicts_the_simulator(tmp_path, monkeypatch):
    shaky(monkeypatch)
    summary = campaign(tmp_path, cases=60, against="shaky", isa_subset="sums", shrink_candidates=200)
    assert summary.divergences, summary
    found = summary.divergences[0]
    assert found.subset == "sums" and found.shrunk and found.mode == "final"
    assert found.program == ["li r0, 0", "addi r0, r0, 200", "li r1, 0x1000", "st r0, [r1]", "halt"]
    assert "r0" in found.description
    trace = read_trace(found.trace)
    assert trace.isa == "toy" and trace.program == found.program and trace.producer.startswith("isasim shaky")
    assert trace.expect["regs"]["r0"] == 201 and trace.expect["fault"] is None
    assert main(["replay", "--no-color", found.trace]) == 1  # the simulator computes 200


def test_a_batch_divergence_is_settled_by_running_its_cases_alone(tmp_path, monkeypatch):
    shaky(monkeypatch)
    summary = campaign(tmp_path, cases=60, against="shaky", isa_subset="batched", shrink_candidates=200,
                       max_divergences=1)
    assert len(summary.divergences) == 1 and summary.divergent_cases == 1
    found = summary.divergences[0]
    assert found.subset == "batched" and found.shrunk
    assert found.program[:2] == ["li r0, 0", "addi r0, r0, 200"] and len(found.program) == 5
    assert found.shrunk_case == Sum((200,), 0)  # the same case wherever in a batch it was found


def test_a_divergence_only_the_batch_shows_keeps_the_batch(tmp_path, monkeypatch):
    shaky(monkeypatch, wrong=lambda program: len(program.instructions) > 12)  # no case alone is that long
    summary = campaign(tmp_path, cases=8, against="shaky", isa_subset="batched", max_divergences=1)
    found = summary.divergences[0]
    assert found.notes == ["the batch diverges but none of its cases does on its own"]
    assert read_trace(found.trace).program == found.program and found.program[-1] == "halt"


def test_a_subset_the_other_backend_cannot_run_is_named(tmp_path, monkeypatch):
    class Nowhere(SimulatorBackend):
        name = "nowhere"

        def unavailable_reason(self, isa, program=None):
            return "not on this host"

    monkeypatch.setitem(BACKENDS, "nowhere", Nowhere())
    with pytest.raises(FuzzUnavailable, match="cannot fuzz sums programs against nowhere here: not on"):
        campaign(tmp_path, against="nowhere", isa_subset="sums")
    with pytest.raises(ConfigError, match=r"unknown subset 'x' \(batched or sums\)"):
        campaign(tmp_path, isa_subset="x")


def test_the_command_runs_whatever_fuzzer_the_isa_has(tmp_path, monkeypatch, capsys):
    from isasim.core.isa import get_isa

    toy_isa = get_isa("toy")
    assert main(["fuzz", "--isa", "toy", "--against", "sim", "--cases", "5"]) == 2  # it has none yet
    assert "ISA toy has no fuzzer" in capsys.readouterr().err
    monkeypatch.setattr(toy_isa, "fuzz_subsets", ("batched", "sums"), raising=False)
    monkeypatch.setattr(toy_isa, "run_fuzz", lambda cases, seed, **options: run_campaign(
        "toy", GENERATORS, cases, seed, **{**options, "workers": 1}), raising=False)
    assert main(["fuzz", "--isa", "toy", "--against", "sim", "--only", "sums", "--cases", "5", "--no-color",
                 "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "no divergence: fuzz toy: 5 programs (sums 5) on sim and sim" in " ".join(out.split())
    assert main(["fuzz", "--isa", "toy", "--against", "sim", "--only", "scalar", "--cases", "5"]) == 2
    assert "invalid choice for toy: 'scalar' (choose from batched, sums)" in capsys.readouterr().err

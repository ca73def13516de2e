"""The campaign engine's draw hooks (isasim.core.fuzz): a generator that draws its own cases (``draw(n, seed)``)
runs them by default, hypothesis stays available for it (``draw="hypothesis"``), and a divergent drawn case is
shrunk greedily over its ``reductions`` (or its truncations) to a trace that reproduces the divergence.

Nothing here is x86: the cases are toy programs that add a few numbers into r0 and store it (the toy ISA's, tests/toy_isa/fuzz.py), drawn with numpy, and the other backend is a "shaky" simulator that gets
r0 wrong when a program adds 200 or more, so the divergences are planted and their smallest reproduction
is known: one such addition.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from isasim.cli import main
from isasim.core.backends import BACKENDS
from isasim.core.campaign import plan_shards, run_campaign
from isasim.core.errors import ConfigError
from isasim.core.fuzz.drawing import DRAWER, HYPOTHESIS, draw_cases
from isasim.core.generators import CaseGenerator, DrawingGenerator
from isasim.core.isa import KNOWN_ISAS, get_isa
from isasim.core.trace import read_trace
from toy_isa.fuzz import BatchedSums, Shaky, Sum, Sums, count_executed


def drawn_sums(n: int, seed: int) -> list[Sum]:
    """Up to six addends of 0..255 a case, all from one numpy generator: the first k of n are the first k."""
    rng = np.random.default_rng(seed)
    return [Sum(tuple(int(v) for v in rng.integers(0, 256, int(rng.integers(1, 7))))) for _ in range(n)]


class DrawnSums(Sums, DrawingGenerator):
    """Sums one by one, drawn with numpy; reductions drop one addend."""

    subset = "drawn"

    def draw(self, n: int, seed: int):
        return iter(drawn_sums(n, seed))  # an iterable, not necessarily a list

    def reductions(self, case: Sum):
        for i in range(len(case.values)):
            yield Sum(case.values[:i] + case.values[i + 1 :], case.slot)


class CutSums(DrawnSums):
    """Drawn, with the default reductions: the greedy shrinker has only the truncations."""

    subset = "cut"
    reductions = CaseGenerator.reductions


class DrawnBatchedSums(DrawnSums, BatchedSums):
    """Drawn sums, four to a program."""

    subset = "drawnbatched"
    weight = 1


@pytest.fixture(autouse=True)
def toy(monkeypatch):
    monkeypatch.setitem(KNOWN_ISAS, "toy", "toy_isa")
    monkeypatch.setitem(BACKENDS, "shaky", Shaky())


GENERATORS = (DrawnSums(), Sums(), CutSums(), DrawnBatchedSums())


def campaign(tmp_path, subset, cases=30, seed=3, against="sim", **options):
    return run_campaign("toy", GENERATORS, cases, seed, against, subset, out_dir=tmp_path, workers=1,
                             **options)


def counts_of(cases) -> Counter:
    """What the toy simulator executes running each case alone (the campaign counts the same)."""
    total: Counter = Counter()
    isa = get_isa("toy")
    for case in cases:
        text, init = Sums().program_and_init(case)
        total.update(count_executed(isa.assemble(text), init, None, {})[0])
    return total


def test_a_generator_that_draws_runs_its_own_cases_by_default(tmp_path):
    summary = campaign(tmp_path, "drawn")
    assert summary.draws == {"drawn": DRAWER} and summary.cases == Counter(drawn=30)
    assert summary.instructions == counts_of(drawn_sums(30, 3))  # DrawnSums is generator 0: seed + 0
    again = campaign(tmp_path, "drawn")
    assert again.instructions == summary.instructions


def test_hypothesis_still_draws_when_asked_and_for_a_generator_without_a_drawer(tmp_path):
    asked = campaign(tmp_path, "drawn", draw=HYPOTHESIS)
    assert asked.draws == {"drawn": HYPOTHESIS}
    assert asked.instructions == counts_of(draw_cases(DrawnSums().cases(), 30, 3))
    plain = campaign(tmp_path, "sums")
    assert plain.draws == {"sums": HYPOTHESIS}
    assert plain.instructions == counts_of(draw_cases(Sums().cases(), 30, 4))  # generator 1: seed + 1


def test_a_shard_says_how_its_cases_are_drawn():
    shards = plan_shards("toy", GENERATORS, ["drawn", "sums"], 10, 7, "sim", "final", {},
                              {"drawn": DRAWER, "sums": HYPOTHESIS})
    assert [(s.subset, s.seed, s.draw) for s in shards] == [("drawn", 7, "numpy"), ("sums", 8, "hypothesis")]
    assert plan_shards("toy", GENERATORS, ["drawn"], 10, 7, "sim", "final", {})[0].draw == "hypothesis"


def test_asking_for_a_drawer_a_subset_lacks_or_an_unknown_way_is_a_config_error(tmp_path):
    with pytest.raises(ConfigError, match=r"^sums cases have no numpy drawer \(only drawn, cut, drawnbatched have "
                                          r"one\): draw them with hypothesis$"):
        campaign(tmp_path, "sums", draw=DRAWER)
    with pytest.raises(ConfigError, match=r"unknown way to draw cases 'dice' \(hypothesis or numpy\)"):
        campaign(tmp_path, "drawn", draw="dice")


def test_a_drawn_divergence_is_shrunk_greedily_to_a_trace_that_reproduces_it(tmp_path):
    summary = campaign(tmp_path, "drawn", cases=40, against="shaky", max_divergences=1)
    assert summary.divergent_cases == 1, summary
    found = summary.divergences[0]
    assert found.shrunk and found.mode == "final" and found.original_size > 1
    assert found.program[0] == "li r0, 0" and found.program[2:] == ["li r1, 0x1000", "st r0, [r1]", "halt"]
    assert int(found.program[1].split()[-1]) >= 200  # one addition the shaky backend gets wrong, nothing else
    assert found.notes[0].startswith("shrinking diffed ")
    trace = read_trace(found.trace)
    assert trace.program == found.program and trace.producer.startswith("isasim shaky; isasim fuzz: seed 3, ")
    assert " drawn with numpy, final: r0: sim " in trace.producer
    assert trace.expect["regs"]["r0"] == int(found.program[1].split()[-1]) + 1
    assert main(["replay", "--no-color", found.trace]) == 1  # the simulator disagrees with the shaky backend
    assert main(["replay", "--no-color", "--backend", "shaky", found.trace]) == 0


def test_greedy_shrinking_is_the_same_every_time(tmp_path):
    one = campaign(tmp_path / "one", "drawn", cases=40, against="shaky")
    two = campaign(tmp_path / "two", "drawn", cases=40, against="shaky")
    assert len(one.divergences) >= 2
    assert [(d.case, d.program, d.notes) for d in one.divergences] == \
        [(d.case, d.program, d.notes) for d in two.divergences]
    for a, b in zip(one.divergences, two.divergences):
        assert Path(a.trace).name == Path(b.trace).name
        assert Path(a.trace).read_text() == Path(b.trace).read_text()


def test_without_reductions_the_greedy_shrinker_cuts_the_case_short(tmp_path):
    summary = campaign(tmp_path, "cut", cases=40, against="shaky", max_divergences=3)
    assert summary.divergences
    cases = drawn_sums(40, 3 + 2)  # CutSums is generator 2: seed + 2
    for found in summary.divergences:
        values = cases[found.case].values
        shortest = next(k for k in range(1, len(values) + 1) if max(values[:k]) >= 200)  # the shortest prefix
        assert found.program[1 : 1 + shortest] == [f"addi r0, r0, {v}" for v in values[:shortest]]
        assert len(found.program) == shortest + 4 and found.shrunk == (shortest < len(values))


def test_the_budget_ends_greedy_shrinking_with_the_smallest_failure_so_far(tmp_path):
    summary = campaign(tmp_path, "drawn", cases=40, against="shaky", max_divergences=1, shrink_candidates=1)
    found = summary.divergences[0]
    assert found.notes[0] == "shrinking diffed 1 candidates" and not found.shrunk  # the case itself only
    assert found.program == Sums().program_and_init(drawn_sums(40, 3)[found.case])[0].split("\n")


def test_a_drawn_batch_divergence_is_settled_alone_and_shrunk_in_its_slot(tmp_path):
    summary = campaign(tmp_path, "drawnbatched", cases=40, against="shaky", max_divergences=1)
    found = summary.divergences[0]
    assert summary.draws == {"drawnbatched": "numpy"} and found.shrunk
    assert found.shrunk_case.slot == 0 and len(found.shrunk_case.values) == 1
    assert found.shrunk_case.values[0] >= 200
    assert main(["replay", "--no-color", found.trace]) == 1


def test_the_command_passes_draw_through(tmp_path, monkeypatch, capsys):
    toy_isa = get_isa("toy")
    monkeypatch.setattr(toy_isa, "fuzz_subsets", tuple(g.subset for g in GENERATORS), raising=False)
    monkeypatch.setattr(toy_isa, "run_fuzz", lambda cases, seed, **options: run_campaign(
        "toy", GENERATORS, cases, seed, **{**options, "workers": 1}), raising=False)
    common = ["fuzz", "--isa", "toy", "--against", "sim", "--cases", "5", "--no-color", "--out", str(tmp_path)]
    assert main(common + ["--only", "drawn"]) == 0
    assert "5 programs (drawn 5 drawn with numpy) on sim and sim" in " ".join(capsys.readouterr().out.split())
    assert main(common + ["--only", "drawn", "--draw", "hypothesis"]) == 0
    assert "5 programs (drawn 5) on sim and sim" in " ".join(capsys.readouterr().out.split())
    assert main(common + ["--only", "sums", "--draw", "numpy"]) == 2
    captured = capsys.readouterr()
    assert not captured.out and captured.err.count("\n") == 1
    assert captured.err.startswith("isasim: error: sums cases have no numpy drawer")
    assert main(common + ["--draw", "dice"]) == 2
    assert "argument --draw: invalid choice: 'dice'" in capsys.readouterr().err

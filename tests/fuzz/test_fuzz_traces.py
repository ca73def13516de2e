"""Structure-mutation fuzzing of the trace reader, the init reader and every trace consumer.

The seeds are the example traces (examples/**/*.trace.json), the golden traces (traces/**)
and their init objects.  Each target gets FUZZ_INPUTS mutants (100,000 by default; set
ISASIM_FUZZ_INPUTS to change it) from tests/fuzz/mutators.py and must answer every one with
a result or an IsasimError; any other exception fails the test with the seed, the case
number and the mutant, so the case can be replayed.

The consumers (run, replay, show, diff) are the in-process functions the command line calls,
fed a mutant instead of a file.  Every one of a consumer target's inputs goes through the trace
reader as the command line's does; a mutant the reader accepts is handed to the consumer when it
is new (a repeat would test nothing new) and the consumer's budget allows: assembling, running
and above all printing with rich cost 5-70 ms a trace here, so each consumer runs a fixed number
of distinct accepted mutants (CONSUMER_BUDGET, spread evenly over the input stream so every seed
and every stage of the stream is represented; ISASIM_FUZZ_CONSUMED changes the numbers by a
factor).  The counts (inputs, rejected by the reader, accepted, consumed, rejected by the
consumer) are reported as a line on stdout (shown with ``-s``) and as a ``user_properties``
entry in the JUnit XML, so the issue note can quote them.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import time
from pathlib import Path
from typing import Any, Callable

import pytest
from rich.console import Console

from isasim.cli import loading, running
from isasim.core.errors import EXIT_OK, IsasimError
from isasim.core.show import show_trace
from isasim.core.trace import parse_init, parse_json_text, parse_trace

from .mutators import JsonMutator

ROOT = Path(__file__).resolve().parents[2]
FUZZ_INPUTS = int(os.environ.get("ISASIM_FUZZ_INPUTS", "100000"))
# the same seed gives the same mutants (a failure is reproducible); set ISASIM_FUZZ_SEED to explore others
FUZZ_SEED = int(os.environ.get("ISASIM_FUZZ_SEED", "0"))
MAX_STEPS = 2_000  # a mutant that loops stops here with a typed StepLimitExceeded
SMALL_SEED_BYTES = 12_000  # consumers are fed the smaller seeds: running and printing dominate their cost
# distinct accepted mutants each consumer runs: about 15-40 s a target on a shared 2-core host
_CONSUMED_SCALE = float(os.environ.get("ISASIM_FUZZ_CONSUMED", "1"))
CONSUMER_BUDGET = {name: max(1, int(count * _CONSUMED_SCALE))
                   for name, count in {"run": 2000, "show": 2000, "replay": 5000, "diff": 10000}.items()}


def _seed_paths() -> list[Path]:
    found = sorted(ROOT.glob("examples/**/*.trace.json")) + sorted(ROOT.glob("traces/**/*.json"))
    return [p for p in found if p.is_file()]


SEED_PATHS = _seed_paths()
SEEDS: dict[str, Any] = {str(p.relative_to(ROOT)): json.loads(p.read_text(encoding="utf-8")) for p in SEED_PATHS}
SEED_TEXTS = {name: json.dumps(doc) for name, doc in SEEDS.items()}
SMALL_SEEDS = [name for name, text in SEED_TEXTS.items() if len(text) <= SMALL_SEED_BYTES] or list(SEEDS)
# hand-written init files use the forms a recorded trace never has: typed values, sizes, names
HAND_INITS = [
    {"regs": {"rdi": "0x20000"},
     "memory": [{"name": "A", "addr": "0x20000", "type": "uint8", "shape": [2, 4], "values": [1, 2, 3, 4, 5, 6, 7, 8]},
                {"name": "C", "addr": "0x40000", "type": "int32", "shape": [4, 4], "size": 64},
                {"addr": "0x10000", "hex": "0100"}, {"addr": "0x50000", "type": "bf16", "values": [1.5, "-2", "inf"]},
                {"addr": "0x60000", "type": "fp32", "values": [1e-30, -0.0], "readonly": True}]},
]
# (the large seeds' inits are fuzzed inside the trace reader's target already)
INIT_SEEDS = [SEEDS[name]["init"] for name in SMALL_SEEDS if isinstance(SEEDS[name].get("init"), dict)]
INIT_SEEDS += HAND_INITS


class Tally:
    """What a fuzz target saw: inputs, how many the reader rejected (typed), how many reached the
    consumer, and the consumer's own typed rejections."""

    def __init__(self, target: str):
        self.target, self.inputs, self.rejected_by_reader, self.accepted, self.consumed = target, 0, 0, 0, 0
        self.rejected_by_consumer, self.started = 0, time.perf_counter()

    def report(self, record_property) -> str:
        seconds = time.perf_counter() - self.started
        line = (f"fuzz {self.target}: {self.inputs} inputs, {self.rejected_by_reader} rejected by the reader "
                f"with a typed error, {self.accepted} ({_share(self.accepted, self.inputs)}) accepted")
        if self.consumed:
            line += (f"; {self.consumed} distinct accepted ones ({_share(self.consumed, self.inputs)} of the inputs) "
                     f"ran through {self.target}, {self.rejected_by_consumer} of them rejected there with a typed "
                     f"error")
        line += f"; {seconds:.1f} s"
        print("\n" + line)
        record_property(f"fuzz_{self.target}", line)
        return line


def _share(part: int, whole: int) -> str:
    return f"{part / whole:.1%}" if whole else "-"


def _fail_with_case(target: str, seed: str, case: int, mutant: Any, error: BaseException):
    try:
        shown = repr(mutant)
    except ValueError:  # an integer past the digit limit somewhere inside
        shown = "(a document holding an integer too long to print)"
    shown = shown if len(shown) < 1500 else shown[:1500] + "..."
    pytest.fail(f"{target}: ISASIM_FUZZ_SEED={FUZZ_SEED}, seed file {seed}, case {case}: {error.__class__.__name__}: {error}\nmutant: {shown}")


def _documents(mutator: JsonMutator, count: int, seeds: list[str]):
    """``count`` (seed name, mutant document or None when the text did not parse, text) triples:
    nine in ten by structure mutation, one in ten by text mutation through the JSON reader."""
    for case in range(count):
        seed = seeds[case % len(seeds)]
        if case % 10 == 9:
            text = mutator.mutate_text(SEED_TEXTS[seed])
            yield case, seed, ("text", text)
        else:
            yield case, seed, ("data", mutator.mutate(SEEDS[seed]))


def _read(kind_and_value, seed: str):
    """The trace reader as the command line uses it: JSON text through parse_json_text, then parse_trace."""
    kind, value = kind_and_value
    data = parse_json_text(value, f"{seed}~") if kind == "text" else value
    return parse_trace(data, source=f"{seed}~")


def _identity(trace) -> str:
    """A key for an accepted trace, so that each distinct one is consumed once."""
    from isasim.core.trace import trace_json

    try:
        return json.dumps(trace_json(trace), sort_keys=True, default=repr)
    except ValueError:  # an integer past the digit limit (in-process mutants only): count it as new
        return f"unprintable {id(trace)}"


class ConsumerStream:
    """One stream of FUZZ_INPUTS mutants read once for all four consumers: every input goes
    through the trace reader (as the command line reads a file before any consumer runs), and
    each distinct accepted trace is dealt to the consumers that still have budget at that point
    of the stream, so each consumer's share is spread over the whole stream and every seed."""

    def __init__(self):
        self.tally = Tally("consumer stream")
        self.cases: dict[str, list[tuple[int, str, Any, Any]]] = {name: [] for name in CONSUMER_BUDGET}
        mutator = JsonMutator(FUZZ_SEED * 10 + 3)
        seen: set[str] = set()
        for case, seed, mutant in _documents(mutator, FUZZ_INPUTS, SMALL_SEEDS):
            self.tally.inputs += 1
            try:
                trace = _read(mutant, seed)
            except IsasimError:
                self.tally.rejected_by_reader += 1
                continue
            except Exception as error:  # noqa: BLE001 - the point of the test
                _fail_with_case("trace reader (consumer stream)", seed, case, mutant, error)
            self.tally.accepted += 1
            wanting = [name for name, budget in CONSUMER_BUDGET.items()
                       if len(self.cases[name]) < budget * (case + 1) / FUZZ_INPUTS]
            if not wanting:
                continue
            key = _identity(trace)
            if key in seen:
                continue
            seen.add(key)
            for name in wanting:
                self.cases[name].append((case, seed, mutant, trace))
        self.seconds = time.perf_counter() - self.tally.started


@pytest.fixture(scope="module")
def consumer_stream() -> ConsumerStream:
    return ConsumerStream()


def _fuzz_consumer(target: str, consume: Callable[[Any], None], stream: ConsumerStream, record_property):
    tally = Tally(target)
    tally.inputs, tally.rejected_by_reader = stream.tally.inputs, stream.tally.rejected_by_reader
    tally.accepted = stream.tally.accepted
    tally.started -= stream.seconds / len(CONSUMER_BUDGET)  # each target's part of reading the stream
    for case, seed, mutant, trace in stream.cases[target]:
        tally.consumed += 1
        try:
            consume(trace)
        except IsasimError:
            tally.rejected_by_consumer += 1
        except Exception as error:  # noqa: BLE001
            _fail_with_case(target, seed, case, mutant, error)
    tally.report(record_property)
    _assert_seeds_untouched()
    assert tally.consumed >= min(CONSUMER_BUDGET[target], tally.accepted) // 2, "too few mutants reached it"


def _assert_seeds_untouched():
    for name, doc in SEEDS.items():
        assert json.dumps(doc) == SEED_TEXTS[name], f"a reader modified the seed {name}"


def _quiet_console(*_args, **_kwargs) -> Console:
    """A console as isasim's own, writing into memory (the rendering is what is fuzzed)."""
    return Console(file=io.StringIO(), width=100, highlight=False, no_color=True, soft_wrap=False)


def _args(**values) -> argparse.Namespace:
    defaults = {"program": "fuzz.trace.json", "init": None, "cpu": None, "isa": "x86_amx", "max_steps": MAX_STEPS,
                "no_color": True, "show": None, "hex": False, "all_rows": False, "region": None}
    defaults.update(values)
    return argparse.Namespace(**defaults)


@pytest.fixture
def cli_reads(monkeypatch):
    """The CLI's file reader and console replaced: the command reads the mutant and prints nowhere."""
    current: dict[str, Any] = {}
    monkeypatch.setattr(loading, "read_trace", lambda path: current["trace"])
    monkeypatch.setattr(running, "read_trace", lambda path: current["trace"])
    monkeypatch.setattr(running, "console", _quiet_console)
    return current


# ---- the readers ---------------------------------------------------------------------------------------


def test_fuzz_trace_reader(record_property):
    mutator = JsonMutator(FUZZ_SEED * 10 + 1)
    tally = Tally("trace reader")
    for case, seed, mutant in _documents(mutator, FUZZ_INPUTS, list(SEEDS)):
        tally.inputs += 1
        try:
            _read(mutant, seed)
            tally.accepted += 1
        except IsasimError:
            tally.rejected_by_reader += 1
        except Exception as error:  # noqa: BLE001
            _fail_with_case("trace reader", seed, case, mutant, error)
    tally.report(record_property)
    _assert_seeds_untouched()
    assert tally.accepted and tally.rejected_by_reader


def test_fuzz_init_reader(record_property):
    mutator = JsonMutator(FUZZ_SEED * 10 + 2)
    tally = Tally("init reader")
    for case in range(FUZZ_INPUTS):
        seed = INIT_SEEDS[case % len(INIT_SEEDS)]
        tally.inputs += 1
        try:
            if case % 5 == 4:
                mutant = mutator.mutate_text(json.dumps(seed))
                parse_init(parse_json_text(mutant, "init.json"))
            else:
                mutant = mutator.mutate(seed)
                parse_init(mutant)
            tally.accepted += 1
        except IsasimError:
            tally.rejected_by_reader += 1
        except Exception as error:  # noqa: BLE001
            _fail_with_case("init reader", f"init seed {case % len(INIT_SEEDS)}", case, mutant, error)
    tally.report(record_property)
    assert tally.accepted and tally.rejected_by_reader


# ---- the consumers ---------------------------------------------------------------------------------------


def test_fuzz_run(cli_reads, consumer_stream, record_property):
    def consume(trace):
        cli_reads["trace"] = trace
        running.cmd_run(_args())

    _fuzz_consumer("run", consume, consumer_stream, record_property)


def test_fuzz_replay(cli_reads, consumer_stream, record_property):
    def consume(trace):
        cli_reads["trace"] = trace
        running.cmd_replay(argparse.Namespace(traces=["fuzz.trace.json"], backend="sim", max_steps=MAX_STEPS,
                                              max_report=10, no_color=True))

    _fuzz_consumer("replay", consume, consumer_stream, record_property)


def test_fuzz_show(consumer_stream, record_property):
    out = _quiet_console()

    def consume(trace):
        out.file = io.StringIO()
        show_trace(trace, out)

    _fuzz_consumer("show", consume, consumer_stream, record_property)


def test_fuzz_diff_sim_against_sim(cli_reads, consumer_stream, record_property):
    def consume(trace):
        cli_reads["trace"] = trace
        code = running.cmd_diff(_args(backend="sim", against="sim", lockstep=False))
        assert code == EXIT_OK, "the simulator differs from itself"

    _fuzz_consumer("diff", consume, consumer_stream, record_property)

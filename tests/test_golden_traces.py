"""Every golden trace under traces/ replays on the simulator with no difference."""

from pathlib import Path

import pytest

from isasim.core.replay import replay
from isasim.core.trace import read_trace

TRACES = sorted((Path(__file__).resolve().parents[1] / "traces").rglob("*.trace.json"))


def test_there_are_golden_traces():
    assert TRACES


@pytest.mark.parametrize("path", TRACES, ids=lambda p: p.name)
def test_golden_trace_replays(path):
    trace = read_trace(path)
    assert trace.producer.startswith("silicon: ")
    _final, diffs = replay(trace)
    assert diffs == [], diffs[0].describe()

"""The race check's fast paths against its reference: a shadow kept per 32-byte granule, the compiled (numba)
check and the many-rows call give the conflicts and the shadow contents that the per-byte numpy check gives
access by access (issue 33: they are there for speed only)."""

from __future__ import annotations

import numpy as np
import pytest

from isasim.ascend_cube.sync import race_check
from isasim.ascend_cube.sync.events import PIPES
from isasim.ascend_cube.sync.race_check import GM_PAGE, RaceCheck, lookup

SIZES = {"L1": 16384, "L0A": 1024}  # L1: several summary chunks
GM_FIRST = GM_PAGE - 1024  # GM accesses around a page boundary, so some cross it


def _checks() -> dict[str, RaceCheck]:
    checks = {"per byte": RaceCheck(SIZES, granule=1, compiled=False),
              "per granule, numpy": RaceCheck(SIZES, compiled=False)}
    if race_check.njit is not None:
        checks["per granule, compiled"] = RaceCheck(SIZES, compiled=True)
        checks["per byte, compiled"] = RaceCheck(SIZES, granule=1, compiled=True)
    return checks


def _random_access(rng, aligned: bool):
    space = rng.choice(["L1", "L0A", "GM"])
    limit = SIZES.get(space, 2048)
    unit = 32 if aligned else 1
    rows = int(rng.integers(1, 5))
    row_bytes = unit * int(rng.integers(1, 12))
    stride = row_bytes + unit * int(rng.integers(0, 4))
    start = unit * int(rng.integers(0, max(1, (limit - rows * stride) // unit)))
    if space == "GM":
        start += GM_FIRST
    return space, start, rows, row_bytes, stride


def _reference_rows(check, space, start, rows, row_bytes, stride, *args):
    """Row by row, as the semantics tracked them before the many-rows call: the first conflict, or None."""
    for r in range(rows):
        conflict = check.access(space, start + r * stride, row_bytes, *args)
        if conflict is not None:
            return r, conflict
    return rows, None


def _shadows(check: RaceCheck):
    spaces = {name: shadow.bytes_view() for name, shadow in check.shadows.items()}
    spaces.update({("GM", page): shadow.bytes_view() for page, shadow in check.gm_pages.items()})
    return spaces


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("aligned_share", [1.0, 0.9])
def test_race_check_fast_paths_match_per_byte(seed, aligned_share):
    rng = np.random.default_rng(seed)
    checks = _checks()
    counts = np.zeros(len(PIPES), dtype=np.int32)
    conflicts = 0
    for index in range(400):
        pipe = int(rng.integers(len(PIPES)))
        counts[pipe] += 1
        # a clock that orders most earlier instructions and leaves a few recent ones unordered
        clock = lookup(np.maximum(counts - rng.integers(0, 3, len(PIPES)) * (rng.random(len(PIPES)) < 0.3), 0))
        write = bool(rng.random() < 0.5)
        access = _random_access(rng, rng.random() < aligned_share)
        args = (write, pipe, int(counts[pipe]), index, clock)
        results = {}
        for name, check in checks.items():
            if name == "per byte":
                results[name] = _reference_rows(check, *access, *args)
            else:
                done = check.access_rows(*access, *args)
                conflict = None
                if done < access[2]:
                    conflict = check.access(access[0], access[1] + done * access[4], access[3], *args)
                results[name] = (done, conflict)
        expect = results["per byte"]
        conflicts += expect[1] is not None
        for name, got in results.items():
            assert got == expect, (name, index, access)
    reference = _shadows(checks["per byte"])
    for name, check in checks.items():
        shadows = _shadows(check)
        assert shadows.keys() == reference.keys(), name
        for key, arrays in reference.items():
            for want, have in zip(arrays, shadows[key]):
                np.testing.assert_array_equal(have, want, err_msg=f"{name} {key}")
    assert conflicts > 0  # the sequences do reach the conflict path


def test_race_check_single_access_paths_match():
    """One access at a time (the semantics' ``ctx.track``) through each path."""
    rng = np.random.default_rng(11)
    checks = _checks()
    counts = np.zeros(len(PIPES), dtype=np.int32)
    for index in range(300):
        pipe = int(rng.integers(len(PIPES)))
        counts[pipe] += 1
        clock = lookup(np.maximum(counts - (rng.random(len(PIPES)) < 0.2), 0))
        space, start, _rows, row_bytes, _stride = _random_access(rng, rng.random() < 0.8)
        args = (space, start, row_bytes * 3, bool(rng.random() < 0.5), pipe, int(counts[pipe]), index, clock)
        got = {name: check.access(*args) for name, check in checks.items()}
        assert all(result == got["per byte"] for result in got.values()), (index, args[:3])
    reference = _shadows(checks["per byte"])
    for name, check in checks.items():
        for key, arrays in reference.items():
            for want, have in zip(arrays, _shadows(check)[key]):
                np.testing.assert_array_equal(have, want, err_msg=f"{name} {key}")

"""How a campaign's cases are drawn: from a generator's hypothesis strategy (the same seed draws the same
cases, in any process) or by the generator's own drawer, and which of the two each subset uses."""

from __future__ import annotations

import contextlib
from typing import Sequence

from hypothesis import HealthCheck, Phase, Verbosity, given, seed as hypothesis_seed, settings

from ..errors import ConfigError
from ..generators import CaseGenerator

HYPOTHESIS = "hypothesis"  # a shard's cases drawn from the generator's hypothesis strategy
DRAWER = "numpy"  # ... or by its own draw hook (the drawers the ISAs have are numpy's: ``isasim fuzz --draw numpy``)
DRAWS = (HYPOTHESIS, DRAWER)

_SETTINGS = dict(database=None, deadline=None, suppress_health_check=list(HealthCheck), derandomize=False,
                 verbosity=Verbosity.quiet, report_multiple_bugs=False, print_blob=False)


def explore(strategy, n: int, seed: int, body, *, shrink: bool) -> None:
    """Run ``body`` on the first n cases hypothesis draws for ``seed`` (the same cases every time for the
    same seed, n and body outcomes, in any process); with shrink=True a failure that body raises is
    shrunk."""
    phases = (Phase.generate, Phase.shrink) if shrink else (Phase.generate,)

    @settings(max_examples=n, phases=phases, **_SETTINGS)
    @hypothesis_seed(seed)
    @given(strategy)
    def run_body(case):
        body(case)

    with _without_local_constants():
        run_body()


@contextlib.contextmanager
def _without_local_constants():
    """Hypothesis (6.131 on) also draws, now and then, constants it finds in the source of the "local" modules
    loaded in the process (those outside site-packages and the standard library).  Which those are depends on
    what the process imported before (isasim.cli, another ISA) and on whether isasim is installed editable, so
    that the same seed drew other programs in a shell, a test and a cluster's worker (seen: an arm_sme shard
    differed between this process and a Dask worker).  A campaign's draws go without them: no local
    constants, and a cache of the allowed constants of its own, put back afterwards for everyone else.

    This reaches into hypothesis's internals (hypothesis.internal.conjecture.providers); where they are not
    as expected, nothing is changed, and tests/fuzz/test_fuzz_campaign.py's import-order test says so."""
    try:
        from hypothesis.internal.conjecture import providers

        getter, cache, empty = providers._get_local_constants, providers.CONSTANTS_CACHE, providers.Constants()
    except (ImportError, AttributeError, TypeError):
        yield
        return
    providers._get_local_constants, providers.CONSTANTS_CACHE = (lambda: empty), {}
    try:
        yield
    finally:
        providers._get_local_constants, providers.CONSTANTS_CACHE = getter, cache


def draw_cases(strategy, n: int, seed: int) -> list:
    """The first n cases of ``strategy`` for ``seed``."""
    out: list = []
    explore(strategy, n, seed, out.append, shrink=False)
    return out


def draw_ways(generators: Sequence[CaseGenerator], subsets: list[str], draw: str | None) -> dict[str, str]:
    """How each subset's cases are drawn.  By default (None) with the generator's own drawer where it has one:
    hypothesis's cost per case can exceed running it, and its shrinker is not needed to find a divergence,
    only to shrink it, which the greedy shrinker does for drawn cases.  HYPOTHESIS: hypothesis for every
    subset.  DRAWER: the drawers, and an error naming the subsets that have none."""
    if draw is not None and draw not in DRAWS:
        raise ConfigError(f"unknown way to draw cases '{draw}' ({' or '.join(DRAWS)})")
    running = [g for g in generators if g.subset in subsets]
    if draw == DRAWER and (missing := [g.subset for g in running if not g.draws]):
        have = [g.subset for g in generators if g.draws]
        which = f"only {', '.join(have)} {'has' if len(have) == 1 else 'have'} one" if have else "no subset has one"
        raise ConfigError(f"{' and '.join(missing)} cases have no {DRAWER} drawer ({which}): "
                          f"draw them with {HYPOTHESIS}")
    return {g.subset: DRAWER if g.draws and draw != HYPOTHESIS else HYPOTHESIS for g in running}


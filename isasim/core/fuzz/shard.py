"""A shard: a part of a campaign as plain values that a worker elsewhere can run, what every shard of a
campaign shares, and a case of a shard compared alone."""

from __future__ import annotations

from dataclasses import dataclass, field

from ..diff import DiffReport, diff
from ..generators import CaseGenerator
from ..isa import get_isa
from ..program import Program
from ..trace import Init
from .drawing import HYPOTHESIS


@dataclass(frozen=True)
class Shard:
    """The first ``cases`` cases that ``seed`` draws from ``subset`` of ``isa``, compared with ``against``.

    Plain values only, so that a shard pickles: it is what a worker elsewhere needs to run its part.
    A campaign cuts each subset's cases into shards (see :mod:`.campaign`): shard ``number`` holds the
    subset's cases ``first`` .. ``first + cases - 1``, drawn from its own ``seed``; ``campaign_seed`` is
    the seed the campaign was given (None: the shard is the whole campaign)."""

    isa: str
    subset: str
    seed: int
    cases: int
    against: str
    mode: str  # "final" or "lockstep"
    config: dict = field(default_factory=dict)
    draw: str = HYPOTHESIS  # how its cases are drawn: HYPOTHESIS or DRAWER (the generator's own draw hook)
    number: int = 0
    first: int = 0
    campaign_seed: int | None = None

    @property
    def key(self) -> str:
        """Its name in a campaign directory."""
        return f"{self.subset}-{self.number:06d}"

    def describe_case(self, index: int) -> str:
        """How a trace names the shard's case ``index`` (its index in the subset) and where it came from."""
        text = f"seed {self.seed}, {self.subset} case {index}"
        if self.number:
            text += f" (shard {self.number} of the campaign of seed {self.campaign_seed})"
        return text


@dataclass(frozen=True)
class ShardSettings:
    """What every shard of a campaign shares: how it runs its cases and when it stops shrinking."""

    batch_size: int | None = None  # None: the generator's
    shrink_seconds: float = 60.0
    shrink_candidates: int = 1 << 30
    max_divergences: int = 3  # a shard stops after this many divergent cases


def diff_alone(shard: Shard, generator: CaseGenerator, case, mode: str) -> tuple[DiffReport, Program, Init]:
    """The case alone (not in a batch) compared on the shard's two backends, with its program and initial
    state."""
    text, init = generator.program_and_init(case)
    program = get_isa(shard.isa).assemble(text, source="<fuzz>")
    return diff(shard.isa, shard.config, program, init, a="sim", b=shard.against, mode=mode), program, init


"""What shards and campaigns find: the divergences (each with its reproducing trace), and the summary of
the cases, instructions and elements compared."""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field


@dataclass
class FoundDivergence:
    subset: str
    case: int  # the index of the generated case
    description: str  # the first difference, as diff describes it (of the shrunk case)
    program: list[str]  # the shrunk program
    trace: str | None  # the reproducing trace file
    mode: str
    original_size: int = 0
    shrunk: bool = False
    notes: list[str] = field(default_factory=list)
    shrunk_case: object = field(default=None, repr=False)  # the case the trace holds (in slot 0 if batched)
    trace_data: dict | None = field(default=None, repr=False)  # the trace (its JSON), until the client writes it
    stem: str = ""  # the trace file's name, less the suffix a name already taken gets
    worker: str = ""  # where it was found: host, CPU (and Dask worker)
    shard: str = ""  # the shard that found it

    @property
    def same_case_key(self) -> str:
        """What two divergences that shrank to the same case share: the trace's program and initial state."""
        data = self.trace_data or {}
        return json.dumps([self.subset, self.program, data.get("init")], sort_keys=True)

    def as_json(self) -> dict:
        return {"subset": self.subset, "case": self.case, "description": self.description, "program": self.program,
                "trace": self.trace, "mode": self.mode, "original_size": self.original_size, "shrunk": self.shrunk,
                "notes": self.notes, "trace_data": self.trace_data, "stem": self.stem, "worker": self.worker,
                "shard": self.shard}

    @classmethod
    def from_json(cls, data: dict) -> "FoundDivergence":
        return cls(data["subset"], int(data["case"]), data["description"], list(data["program"]), data.get("trace"),
                   data["mode"], int(data.get("original_size", 0)), bool(data.get("shrunk")), list(data.get("notes", [])),
                   None, data.get("trace_data"), data.get("stem", ""), data.get("worker", ""), data.get("shard", ""))


@dataclass
class FuzzSummary:
    isa: str
    a: str
    b: str
    seed: int
    mode: str
    subsets: list[str]
    skipped: dict[str, str] = field(default_factory=dict)  # subset -> why it could not run
    cases: Counter = field(default_factory=Counter)  # subset -> programs run
    instructions: Counter = field(default_factory=Counter)  # form -> instructions compared
    elements: Counter = field(default_factory=Counter)  # form -> output elements compared
    divergences: list[FoundDivergence] = field(default_factory=list)  # one per distinct shrunk case
    divergent_cases: int = 0  # cases that diverged (several may shrink to the same case)
    draws: dict[str, str] = field(default_factory=dict)  # subset -> how its cases were drawn (HYPOTHESIS, DRAWER)
    runs: int = 0  # differential runs (one per batch or single case)
    seconds: float = 0.0
    notes: list[str] = field(default_factory=list)  # what the report should say about the campaign as a whole
    shards: int = 0  # shards merged into it
    hosts: Counter = field(default_factory=Counter)  # where they ran (WorkerInfo.describe()) -> shards
    where: str = "this process"  # the pool's description

    @property
    def total_cases(self) -> int:
        return sum(self.cases.values())

    @property
    def total_instructions(self) -> int:
        return sum(self.instructions.values())

    @property
    def traces(self) -> list[str]:
        return [d.trace for d in self.divergences if d.trace]


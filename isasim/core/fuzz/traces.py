"""The trace a divergence leaves: the shrunk case, with what the other backend does with it as the
expectation, and its file, written under a name no file has yet."""

from __future__ import annotations

import json
from pathlib import Path

from ..backends import get_backend
from ..diff import undefined_by
from ..errors import IsasimError
from ..generators import CaseGenerator
from ..isa import get_isa
from ..machine import Machine
from ..trace import Trace, expectations
from .shard import Shard


def _defined_only(isa, regs: dict, undefined) -> dict:
    """``regs`` less each register that the architecture leaves partly undefined after the run (a trace
    holding it would fail on a correct machine).  A register is partly undefined when ``comparable``
    masks some of it: asked about a register of all ones, it gives back less than it does with
    nothing undefined."""
    probe = {"regs": {name: -1 for name in regs}}
    now, never = isa.comparable(probe, undefined)["regs"], isa.comparable(probe, None)["regs"]
    return {name: value for name, value in regs.items() if now.get(name) == never.get(name)}


def expectation(shard: Shard, generator: CaseGenerator, case) -> tuple[dict, str]:
    """What the other backend does with the case alone, as a trace's ``expect`` (and the producer)."""
    text, init = generator.program_and_init(case)
    isa = get_isa(shard.isa)
    program = isa.assemble(text, source="<fuzz>")
    backend = get_backend(shard.against, shard.isa, program)
    config = isa.configure(shard.config)
    final = backend.run(shard.isa, config, program, init)
    expect = expectations(final, init, every_register=True)  # what isasim record expects, on every register
    sim = Machine(shard.isa, config)
    sim.load_init(program, init)
    executed = [r.instruction for r in sim.run(keep_records=True).records]
    expect["regs"] = _defined_only(isa, expect["regs"], undefined_by(isa, executed))
    producer = backend.producer()
    return expect, producer


def write_fresh(trace_data: dict, directory: Path, stem: str) -> Path:
    """Write a trace (its JSON) under a name no file in ``directory`` has yet, never overwriting one."""
    directory.mkdir(parents=True, exist_ok=True)
    text = json.dumps(trace_data, indent=1) + "\n"
    for n in range(1, 100000):
        path = directory / (f"{stem}.trace.json" if n == 1 else f"{stem}-{n}.trace.json")
        try:
            with open(path, "x", encoding="utf-8") as f:
                f.write(text)
            return path
        except FileExistsError:
            continue
    raise IsasimError(f"no free trace file name for {stem} in {directory}")


def trace_stem(shard: Shard, what: str) -> str:
    """A trace's file name: the ISA, the subset, the campaign's seed and the case (its index in the subset)."""
    seed = shard.seed if shard.campaign_seed is None else shard.campaign_seed
    return f"fuzz-{shard.isa}-{shard.subset}-seed{seed}-{what}"


def case_trace(shard: Shard, generator: CaseGenerator, case, note: str) -> Trace:
    """The case alone as a trace whose expectation is what the other backend does with it."""
    text, init = generator.program_and_init(case)
    expect, producer = expectation(shard, generator, case)
    return Trace(shard.isa, text.split("\n"), get_isa(shard.isa).configure(shard.config),
                 f"{producer}; isasim fuzz: {note}", init, expect)


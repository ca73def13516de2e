"""Differential fuzzing of x86_amx: its two case generators, for the ISA-neutral campaign engine
(:mod:`isasim.core.fuzz`), and what a run of them counts.

``scalar`` (:mod:`.scalar`) draws random programs of the scalar subset, which runs on any
x86-64 host and batches many cases into one program; ``amx`` (:mod:`.amx`) draws tile
programs, run one by one and only where the CPU offers AMX when the other backend is silicon.
With both, a quarter of the cases are AMX.  ``run_fuzz`` is what ``isasim fuzz`` runs.

AMX cases are drawn by default with numpy (amx.AmxCaseDrawer, about 0.1 ms a case), not
with the hypothesis strategy (15-30 ms a case, as long as running one on the simulator and on
silicon): the time of a campaign then goes to comparing programs.  A divergent drawn case is shrunk
greedily over ``AmxGenerator.reductions``; ``draw="hypothesis"`` (``isasim fuzz --draw hypothesis``)
draws them from the strategy and shrinks them with hypothesis, as before.  Scalar cases have no
drawer: hypothesis draws them (cheaply, next to a batch's run) and shrinks them.
"""

from __future__ import annotations

import bisect
from collections import Counter
from dataclasses import replace
from pathlib import Path

from ...core.campaign import run_campaign
from ...core.fuzz.results import FuzzSummary
from ...core.generators import BatchingGenerator, CaseGenerator, DrawingGenerator
from ...core.machine import Machine
from ...core.program import Program
from ...core.trace import Init
from ..config import AMX_FEATURES, DEFAULT_CPU, cpu_model, needs_amx
from .amx import AmxCase, AmxCaseDrawer, amx_cases
from .scalar import ScalarCase, build_batch, scalar_cases

ISA_NAME = "x86_amx"


class _Generator(CaseGenerator):
    """What both x86 generators share: their cases know their program, size and truncation."""

    def program_and_init(self, case: ScalarCase | AmxCase) -> tuple[str, Init]:
        return case.standalone()

    def size(self, case: ScalarCase | AmxCase) -> int:
        return case.size

    def truncated(self, case, index: int):
        return case.truncated(index)

    def count_executed(self, program, init, ranges, config):
        return count_executed(program, init, ranges, config)


class ScalarGenerator(_Generator, BatchingGenerator):
    """Scalar cases (see fuzz/scalar.py), many to a program."""

    subset = "scalar"
    probe = "nop"
    weight = 3

    def cases(self):
        return scalar_cases()

    def batch_size(self, mode: str) -> int:
        return 20 if mode == "lockstep" else 150  # a lockstep batch stops the child after every instruction

    def place(self, case: ScalarCase, slot: int) -> ScalarCase:
        return case.at_slot(slot)

    def batch(self, cases: list[ScalarCase], mode: str):
        # lockstep compares after every instruction: the bookkeeping need not store the results
        return build_batch(cases, capture=mode == "final")


class AmxGenerator(_Generator, DrawingGenerator):
    """AMX cases (see fuzz/amx.py), one to a program: a fault ends a program."""

    subset = "amx"
    probe = "tilerelease"
    weight = 1

    # Cases drawn a chunk at a time (the drawer's cases do not depend on the chunks), so that the first ones
    # run while the others are drawn
    DRAW_CHUNK = 256

    def __init__(self, fp16: bool = False):
        self.fp16 = fp16  # draw fp16 cases too (AmxCaseDrawer's option): the model has AMX-FP16

    def cases(self):
        return amx_cases()

    def draw(self, n: int, seed: int):
        """The first n cases AmxCaseDrawer(seed) draws (the campaign's default for AMX: see the module docstring)."""
        drawer = AmxCaseDrawer(seed, fp16=self.fp16)
        for start in range(0, n, self.DRAW_CHUNK):
            yield from drawer.draw(min(self.DRAW_CHUNK, n - start))

    def reductions(self, case: AmxCase):
        """For the greedy shrinker: the case cut after each of its statements, shortest first (a divergence is
        often the effect of one instruction: the shortest diverging cut ends with it), then the case less one
        statement, first to last (the setup the culprit does not need).  The closing RET stays, as in every case
        either generator draws (and in every truncation): a shrunk case is one of theirs, only smaller."""
        body = len(case.lines) - 1 if case.lines and case.lines[-1] == "ret" else len(case.lines)
        for index in range(body - 1):
            yield case.truncated(index)
        for index in range(body):
            yield replace(case, lines=case.lines[:index] + case.lines[index + 1 :])


GENERATORS = (ScalarGenerator(), AmxGenerator())  # the order fixes each subset's seed (seed + position)
SUBSETS = tuple(g.subset for g in GENERATORS)


def chosen_config(against: str) -> tuple[dict, str | None]:
    """The CPU model to simulate when the user named none, and a note saying which and why: this host's
    when the other backend is its silicon (by family and model, or by the AMX features it executes:
    oracle.host_model), the default model otherwise (no note)."""
    if against != "silicon":
        return {}, None
    from ..oracle import host_model, platform_problem

    if platform_problem():
        return {}, None
    name, how = host_model()
    if name is None:
        return {}, f"simulating {DEFAULT_CPU}, the default: no isasim CPU model matches this host {how}"
    return {"cpu": name}, f"simulating {name}, this host's model {how}"


def config_notes(against: str, config: dict, isa_subset: str | None) -> list[str]:
    """What the report must say when the modelled CPU's AMX features are not the ones the host executes:
    an instruction one side has and the other has not diverges as #UD on one side only, and that is the
    configuration's doing, not the simulator's."""
    if against != "silicon" or isa_subset not in (None, "amx"):
        return []
    from ..oracle import host_amx, host_cpu, platform_problem

    if platform_problem() or not host_cpu().amx_features:
        return []  # no AMX program runs on this silicon: the campaign says so itself
    name = config.get("cpu", DEFAULT_CPU)
    modelled = cpu_model(name).features & AMX_FEATURES
    measured = host_amx()
    how = dict(measured.sources)
    notes = []
    for feature in sorted(measured.features - modelled):
        notes.append(f"this host executes {feature} ({how.get(feature, 'CPUID')}), which the {name} model has not: "
                     f"a divergence where the simulator raises #UD for an {feature} instruction is the --cpu "
                     "option's, not the simulator's")
    for feature in sorted(modelled - measured.features):
        notes.append(f"the {name} model has {feature}, which this host does not execute: a divergence where "
                     f"silicon raises #UD for an {feature} instruction is the --cpu option's, not the simulator's")
    return notes


def run_fuzz(cases: int, seed: int, against: str = "silicon", isa_subset: str | None = None, lockstep: bool = False,
             out_dir: str | Path = ".", config: dict | None = None, **options) -> FuzzSummary:
    """Run ``cases`` random x86_amx programs on the simulator and on ``against`` and compare them
    (isa_subset "scalar", "amx" or None for both; ``config`` the CPU model, by default this host's
    when ``against`` is its silicon; the options are run_campaign's).  The summary's notes say which
    model was simulated when the caller named none, and where its AMX features and the host's differ.
    A model with AMX-FP16 has the drawer draw fp16 cases too."""
    notes = []
    if not config or "cpu" not in config:  # the CLI's config lacks "cpu" when --cpu was not given
        chosen, why = chosen_config(against)
        config = {**(config or {}), **chosen}
        if why:
            notes.append(why)
    notes += config_notes(against, config, isa_subset)
    fp16 = "AMX-FP16" in cpu_model(config.get("cpu", DEFAULT_CPU)).features
    generators = (GENERATORS[0], AmxGenerator(fp16=fp16)) if fp16 else GENERATORS
    summary = run_campaign(ISA_NAME, generators, cases, seed, against, isa_subset, lockstep, out_dir,
                           config=config, **options)
    summary.notes.extend(notes)
    return summary


# ---------------------------------------------------------------------------
# What was compared
# ---------------------------------------------------------------------------

def form_key(ins) -> str:
    if ins.invalid is not None:
        return f"{ins.form.mnemonic} (undefined encoding)"
    mnemonic = ins.form.mnemonic
    if mnemonic.startswith("j") and mnemonic != "jmp":
        return "jcc"
    if mnemonic == "imul":
        return f"imul ({len(ins.operands)} operand{'s' if len(ins.operands) > 1 else ''})"
    return mnemonic


def _elements(ins, state) -> int:
    """Output elements an AMX instruction produced (dwords of a tile), 0 for others."""
    name = ins.form.mnemonic
    if name.startswith("tdp"):
        c = ins.operands[0].name
        rows, colsb = state.tile_shape(int(c[3:]))
        return rows * (colsb // 4)
    if name in ("tileloadd", "tileloaddt1", "tilezero"):
        rows, colsb = state.tile_shape(int(ins.operands[0].name[3:]))
        return rows * (colsb // 4)
    if name == "tilestored":
        rows, colsb = state.tile_shape(int(ins.operands[1].name[3:]))
        return rows * (colsb // 4)
    return 0


def count_executed(program: Program, init: Init, ranges: list[tuple[int, int]] | None = None,
                   config: dict | None = None) -> tuple[Counter, Counter]:
    """Instructions executed without a fault, per form, and the elements they produced (run on the simulator).
    ``ranges``: count only instructions whose address is in one of these sorted [start, end) ranges."""
    machine = Machine(ISA_NAME, config)
    machine.load(program, regs=init.regs, memory=init.memory)
    machine.journal.enabled = False
    counted = None
    if ranges is not None:
        counted = {ins.address for ins in program.instructions
                   if (k := bisect.bisect_right(ranges, (ins.address, float("inf"))) - 1) >= 0
                   and ins.address < ranges[k][1]}
    keys: dict[int, str] = {}
    counts, elements = Counter(), Counter()
    while not machine.finished and machine.state.pc != program.end:
        record = machine.step()
        if record.fault is not None:
            break
        ins = record.instruction
        if counted is not None and ins.address not in counted:
            continue
        key = keys.get(ins.address)
        if key is None:
            key = keys[ins.address] = form_key(ins)
        counts[key] += 1
        if needs_amx(ins.form) and (produced := _elements(ins, machine.state)):
            elements[key] += produced
    return counts, elements


"""Differential fuzzing of arm_sme: random programs of ZA dot products, for the ISA-neutral campaign
engine (:mod:`isasim.core.fuzz`), compared with QEMU (``isasim fuzz --isa arm_sme --against qemu``).

A case is a few random encodings of the integer dot forms (every field random, so every Zn list,
Zm, Wv, offset and index the encoding allows), the vector-select registers W8-W11 at edge values
(0, vstride - 1, vstride, 0x7fffffff, 0xffffffff, junk in the upper half) or random, and random Z
registers and ZA made from a seed.  The same campaign seed draws the same cases.
"""

from __future__ import annotations

import random
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from ..core.fuzz import FuzzSummary, run_campaign
from ..core.machine import Machine
from ..core.program import Program
from ..core.trace import Init

ISA_NAME = "arm_sme"
ON = 3  # SVCR: streaming mode and ZA on
MAX_INSTRUCTIONS = 4


@dataclass(frozen=True)
class DotCase:
    """Dot instructions (as text) and the state they start from, at SVL ``svl``."""

    lines: tuple[str, ...]
    vector_selects: tuple[int, int, int, int]  # X8-X11
    data_seed: int  # makes Z0-Z31 and ZA
    svl: int

    def standalone(self) -> tuple[str, Init]:
        rng = random.Random(self.data_seed)
        svl_bytes = self.svl // 8
        arrays = {f"z{i}": rng.randbytes(svl_bytes) for i in range(32)}
        arrays["za"] = rng.randbytes(svl_bytes * svl_bytes)
        regs = {f"x{8 + i}": value for i, value in enumerate(self.vector_selects)}
        regs["svcr"] = ON
        return "\n".join(self.lines) + "\n", Init(regs=regs, arrays=arrays)


def _dot_texts(rng: random.Random, count: int) -> tuple[str, ...]:
    from . import ISA
    from .forms import FORMS

    dots = [form for form in FORMS if form.group == "dot"]
    texts = []
    while len(texts) < count:
        form = rng.choice(dots)
        fields = {name: rng.randrange(1 << box.width) for name, box in form.encoding.fields.items()}
        instruction = ISA.disassemble(form.encoding.pack(fields).to_bytes(4, "little")).instructions[0]
        if instruction.invalid is None:
            texts.append(instruction.text)
    return tuple(texts)


class DotGenerator:
    """Cases of 1 to 4 random dot instructions (see the module docstring)."""

    subset = "dot"
    probe = "udot za.s[w8, 0, vgx4], {z0.h-z3.h}, z4.h"
    weight = 1

    def __init__(self, svl: int = 512):
        self.svl = svl

    def cases(self):
        from hypothesis import strategies as st

        svl = self.svl

        def build(seed: int, count: int, selects: list[int]) -> DotCase:
            return DotCase(_dot_texts(random.Random(seed), count), tuple(selects), seed, svl)

        vstride = svl // 8 // 4
        edges = st.sampled_from([0, vstride - 1, vstride, 2 * vstride - 1, 0x7FFFFFFF, 0xFFFFFFFF,
                                 0xDEADBEEF_00000000 | (vstride + 1)])
        select = st.one_of(edges, st.integers(0, (1 << 64) - 1))
        return st.builds(build, st.integers(0, (1 << 32) - 1), st.integers(1, MAX_INSTRUCTIONS),
                         st.lists(select, min_size=4, max_size=4))

    def program_and_init(self, case: DotCase) -> tuple[str, Init]:
        return case.standalone()

    def size(self, case: DotCase) -> int:
        return len(case.lines)

    def truncated(self, case: DotCase, index: int) -> DotCase:
        return DotCase(case.lines[:index + 1], case.vector_selects, case.data_seed, case.svl)

    def count_executed(self, program: Program, init: Init, ranges, config: dict) -> tuple[Counter, Counter]:
        machine = Machine(ISA_NAME, config)
        machine.load_init(program, init)
        counts, elements = Counter(), Counter()
        while not machine.finished and machine.state.pc != program.end:
            record = machine.step()
            if record.fault is not None:
                break
            form_id = record.instruction.form.id
            counts[form_id] += 1
            element_bytes = 8 if "_zad_" in form_id else 4  # the ZA elements a dot accumulates into
            elements[form_id] += sum(len(w.new) // element_bytes for w in record.writes
                                     if str(w.where).startswith("za["))
        return counts, elements


SUBSETS = ("dot",)


def run_fuzz(cases: int, seed: int, against: str = "qemu", isa_subset: str | None = None, lockstep: bool = False,
             out_dir: str | Path = ".", config: dict | None = None, **options) -> FuzzSummary:
    """Run ``cases`` random arm_sme dot programs on the simulator and on ``against`` and compare them."""
    from . import ISA

    config = ISA.configure(config or {})
    return run_campaign(ISA_NAME, (DotGenerator(config["svl"]),), cases, seed, against, isa_subset, lockstep,
                        out_dir, config=config, **options)

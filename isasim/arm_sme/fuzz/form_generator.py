"""The arm_sme fuzzer's case generators: one per form group (``FORMS``' ``group``) and ``mixed``, whose
programs draw from every form.
"""

from __future__ import annotations

from collections import Counter

from ...core.generators import CaseGenerator
from ...core.machine import Machine
from ...core.program import Program
from ...core.trace import Init
from ..forms import FORMS
from .cases import ISA_NAME, MASK64, MAX_INSTRUCTIONS, SmeCase, draw_slot, edge_selects, fuzzable, mode_ids

MIXED = "mixed"


def subsets() -> tuple[str, ...]:
    """``mixed`` and every form group, in the order the families declare them."""
    groups: list[str] = []
    for form in FORMS:
        if form.group not in groups:
            groups.append(form.group)
    return (MIXED, *groups)


def turns_za_off(form) -> bool:
    """SMSTOP and SMSTOP ZA: after them the QEMU harness shows ZA as its dump's SMSTART zeroed it."""
    return form.group == "mode" and form.fixed_text in ("smstop", "smstop za")


class FormGenerator(CaseGenerator):
    """Cases over the forms of one group (or of every group: ``mixed``)."""

    probe = "nop"

    def __init__(self, subset: str, svl: int, weight: int = 1, lockstep: bool = False):
        self.subset, self.svl, self.weight, self.lockstep = subset, svl, weight, lockstep

    def forms(self) -> list:
        return [form for form in FORMS if (self.subset == MIXED or form.group == self.subset) and fuzzable(form)
                and not (self.lockstep and turns_za_off(form))]

    def cases(self):
        from hypothesis import strategies as st

        forms, svl = self.forms(), self.svl
        modes = mode_ids()

        def build(picks: list[tuple[int, int]], selects: list[int], data_seed: int) -> SmeCase:
            slots = [slot for form_number, seed in picks if (slot := draw_slot(forms[form_number], seed))]
            # The mode instructions go last (before the closing SMSTART): see the module docstring.
            slots.sort(key=lambda slot: slot.form_id in modes)
            return SmeCase(tuple(slots), tuple(selects), data_seed, svl)

        pick = st.tuples(st.integers(0, len(forms) - 1), st.integers(0, (1 << 32) - 1))
        select = st.one_of(st.sampled_from(edge_selects(svl)), st.integers(0, MASK64))
        return st.builds(build, st.lists(pick, min_size=1, max_size=MAX_INSTRUCTIONS),
                         st.lists(select, min_size=8, max_size=8), st.integers(0, (1 << 32) - 1))

    def program_and_init(self, case: SmeCase) -> tuple[str, Init]:
        return case.standalone()

    def size(self, case: SmeCase) -> int:
        return len(case.slots)

    def truncated(self, case: SmeCase, index: int) -> SmeCase:
        return SmeCase(case.slots[:index + 1], case.selects, case.data_seed, case.svl)

    def count_executed(self, program: Program, init: Init, ranges, config: dict) -> tuple[Counter, Counter]:
        """Instructions run without a fault, by form, and the bytes of Z, P, ZA, ZT0 and memory each
        form changed (the elements it produced, counted in bytes)."""
        machine = Machine(ISA_NAME, config)
        machine.load_init(program, init)
        counts, changed = Counter(), Counter()
        while not machine.finished and machine.state.pc != program.end:
            record = machine.step()
            if record.fault is not None:
                break
            form_id = record.instruction.form.id
            counts[form_id] += 1
            changed[form_id] += sum(len(w.new) for w in record.writes if isinstance(w.new, (bytes, bytearray)))
        return counts, changed

"""Differential fuzzing of arm_sme: random programs over every form isasim knows, for the ISA-neutral
campaign engine (:mod:`isasim.core.fuzz`), compared with QEMU (``isasim fuzz --isa arm_sme --against qemu``).

Subsets
    One per form group (``FORMS``' ``group``: dot, outer, za, za_move, za_memory, z_memory, predicate,
    count, mode, scalar, memory, control, ... whatever the families declare), whose programs draw only
    that group's forms, and ``mixed``, whose programs draw from every form, so that a load feeds a dot
    and a PTRUE governs a store.  ``--only GROUP`` runs one; without it half the cases are mixed and
    the rest are shared over the groups.  A form added to FORMS is fuzzed with no change here.

A case
    Up to MAX_INSTRUCTIONS instructions, each a form and a seed that packs random values into its
    encoding's fields and disassembles the word (as tests/arm_sme/test_dots_vs_qemu.py does), so every
    register, list, index and immediate the encoding allows comes up; an encoding the decoder refuses
    or calls UNDEFINED is drawn again.  Then the fields that must point somewhere are put there:
      * memory operands take their base from x16-x19 or SP, which point into the middle of one writable
        block large enough for every offset an encoding holds (LDR Z's 256 vectors, LDR X's 32 KiB), and
        their index register from x20-x23, which hold small values; in a third of the cases x18 and
        x19 point just below the block's end, so that loads through them may fault part way;
      * a branch goes forward: its target is its seed's number of instructions on, or the program's end,
        so no program loops (shrinking, which removes instructions, keeps every target inside it);
      * no operand names x30 or w30: x30 holds the harness's return address under QEMU.
    x8-x15 (the vector selects of the dots, W8-W11, and of the ZA slices, W12-W15) hold edge values
    (0, dim - 1, dim for the group and slice counts at this SVL, 0x7fffffff, 0xffffffff, junk in the
    upper half) or random ones; the other registers are random or (one in four) scalar edge values
    (0, 1, all ones, the sign bits and their neighbours in X and W); NZCV, Z, ZA, ZT0 and the memory
    are random from the case's data seed, and P0-P15 are random bits, all true, all false or a run of leading trues.
    Streaming mode and ZA are on.

What the comparison cannot see, or QEMU gets wrong in a documented way, is kept out of the cases
    (docs/known-oracle-deviations.md):
      * a load to a vertical ZA tile slice with a predicate whose inactive elements follow the last
        active one (QEMU's sme_ld1 leaves them unzeroed): such loads are governed by P7, which is all
        true and which no instruction of a case writes (an instruction writing P7 is drawn again);
      * a store that faults part way: isasim writes the elements before the faulting one, as the ASL's
        element loop does (the architecture leaves those bytes UNKNOWN), while QEMU probes every page
        first and writes none (and the qemu backend reports the state before a faulting instruction),
        so stores never take their base from x18/x19, the registers that point near the block's end;
      * nor do the ZA tile-slice loads: one whose active element straddles the end of mapped memory
        aborts QEMU (its sme_ld1 reaches g_assert_not_reached, deviation 2), which would end a campaign;
      * ZA while PSTATE.ZA is off is not architectural state, and the QEMU harness dumps it after an
        SMSTART that zeroes it (at the end, or at a fault): a case's mode instructions come last, and a
        program holding one ends with SMSTART, which turns both modes back on with the architecture's
        zeroing on both sides (redundant where they are on).  So the fuzzer compares the zeroing rules
        of every SMSTART/SMSTOP sequence, and leaves UNDEFINED-with-a-mode-off to the differential tests
        and golden traces.  In lockstep mode the step after an SMSTOP ZA would show the harness's
        zeroed ZA (the harness cannot see ZA while it is off), so lockstep campaigns leave out the
        instructions that turn ZA off (SMSTOP, SMSTOP ZA).
"""

from __future__ import annotations

import random
import re
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from ..core.generators import CaseGenerator
from ..core.machine import Machine
from ..core.program import Program
from ..core.trace import Init

ISA_NAME = "arm_sme"
ON = 3  # SVCR: streaming mode and ZA on
MAX_INSTRUCTIONS = 6
MEMORY_BASE = 0x10000000
MIXED = "mixed"
BASES = (16, 17, 18, 19, 31)  # x16-x19 and SP point into the memory block
EDGE_BASES = (18, 19)  # in a third of the cases, these point near the block's end instead
INDEXES = (20, 21, 22, 23)  # small values, as the index of [Xn, Xm, lsl #k]
ALL_TRUE_P = 7  # governs the vertical ZA tile-slice loads; no instruction of a case writes it
MASK64 = (1 << 64) - 1
# values where the scalar forms' carries, overflows and W/X halves change
SCALAR_EDGES = (0, 1, MASK64, 1 << 63, (1 << 63) - 1, 0xFFFFFFFF, 0x80000000, 0x7FFFFFFF, 0x1_0000_0000)


def _forms():
    from .forms import FORMS

    return list(FORMS)


def subsets() -> tuple[str, ...]:
    """``mixed`` and every form group, in the order the families declare them."""
    groups: list[str] = []
    for form in _forms():
        if form.group not in groups:
            groups.append(form.group)
    return (MIXED, *groups)


def turns_za_off(form) -> bool:
    """SMSTOP and SMSTOP ZA: after them the QEMU harness shows ZA as its dump's SMSTART zeroed it."""
    return form.group == "mode" and form.fixed_text in ("smstop", "smstop za")


def _mode_ids() -> set[str]:
    return {form.id for form in _forms() if form.group == "mode"}


def memory_half(svl: int) -> int:
    """Bytes either side of the block's middle: LDR Z/P reach 256 vectors either way, LDR X 32 KiB up."""
    return max(256 * (svl // 8), 32768) + 8192


# ---- one instruction ----------------------------------------------------------------------------

def _kinds(form) -> set[str]:
    return {getattr(operand, "kind", "") for operand in form.operands}


def _target(form):
    return next((operand for operand in form.operands if getattr(operand, "kind", None) == "target"), None)


def _fix_fields(form, fields: dict, rng: random.Random) -> None:
    """Put the fields that must point somewhere where they point into the case's memory and registers."""
    kinds = _kinds(form)
    if any(kind.startswith("mem") for kind in kinds) and "Rn" in fields:  # mem, mem_vl, mem_index, mem_pre ...
        stays_inside = form.mnemonic.startswith("st") or form.group == "za_memory"
        fields["Rn"] = rng.choice([n for n in BASES if not (stays_inside and n in EDGE_BASES)])
    if "mem_index" in kinds and "Rm" in fields:
        fields["Rm"] = rng.choice(INDEXES)
    if form.group == "za_memory" and form.mnemonic.startswith("ld") and fields.get("V") == 1 and "Pg" in fields:
        fields["Pg"] = ALL_TRUE_P


def _acceptable(text: str) -> bool:
    if re.search(r"\b[xw]30\b", text):
        return False  # x30 is the harness's return address under QEMU
    if re.match(rf"\S+\s+p{ALL_TRUE_P}\b", text):
        return False  # writes P7 (a P destination is the first operand)
    return True


@dataclass(frozen=True)
class Slot:
    """One instruction of a case: a form, its fields, and (a branch) how many instructions it skips."""

    form_id: str
    fields: tuple[tuple[str, int], ...]
    skip: int = 0


def draw_slot(form, seed: int, tries: int = 40) -> Slot | None:
    """A random valid encoding of ``form`` with its fields fixed up, or None if ``tries`` give none."""
    from . import ISA

    rng = random.Random(seed)
    target = _target(form)
    for _ in range(tries):
        fields = {name: rng.randrange(1 << box.width) for name, box in form.encoding.fields.items()}
        _fix_fields(form, fields, rng)
        skip = rng.randrange(MAX_INSTRUCTIONS + 1) if target is not None else 0
        if target is not None:
            fields[target.field] = 1  # placed later; any in-range value decodes the same form
        try:
            instruction = ISA.disassemble(form.encoding.pack(fields).to_bytes(4, "little")).instructions[0]
        except Exception:  # noqa: BLE001 - a reserved field value: the decoder refuses it
            continue
        if instruction.form is form and instruction.invalid is None and _acceptable(instruction.text):
            return Slot(form.id, tuple(sorted(fields.items())), skip)
    return None


def slot_text(slot: Slot, position: int, count: int, base: int) -> str:
    """The slot's instruction as text, at instruction ``position`` of a program of ``count``."""
    from . import ISA
    from .forms import FORMS

    form = FORMS[slot.form_id]
    fields = dict(slot.fields)
    target = _target(form)
    if target is not None:
        words = min(position + 1 + slot.skip, count) - position  # forward, at most to the program's end
        fields[target.field] = words & ((1 << target.bits) - 1)
    word = form.encoding.pack(fields)
    return ISA.disassemble(word.to_bytes(4, "little"), base=base + 4 * position).instructions[0].text


# ---- a case -------------------------------------------------------------------------------------

@dataclass(frozen=True)
class SmeCase:
    slots: tuple[Slot, ...]
    selects: tuple[int, ...]  # x8-x15
    data_seed: int
    svl: int

    def lines(self) -> list[str]:
        from .config import CODE_BASE

        n = len(self.slots)
        lines = [slot_text(slot, i, n, CODE_BASE) for i, slot in enumerate(self.slots)]
        if any(slot.form_id in _mode_ids() for slot in self.slots):
            lines.append("smstart")  # ZA ends on, zeroed by the architecture if a program turned it off
        return lines

    def standalone(self) -> tuple[str, Init]:
        rng = random.Random(self.data_seed)
        svlb = self.svl // 8
        half = memory_half(self.svl)
        middle = MEMORY_BASE + half
        regs = {f"x{n}": rng.choice(SCALAR_EDGES) if rng.randrange(4) == 0 else rng.getrandbits(64)
                for n in range(30)}
        regs |= {f"x{8 + i}": value for i, value in enumerate(self.selects)}
        for n in BASES:
            address = middle + 16 * rng.randrange(-16, 16)
            regs["sp" if n == 31 else f"x{n}"] = address
        if rng.randrange(3) == 0:  # an access through x18 or x19 may cross the block's end: a translation fault
            for n in EDGE_BASES:
                regs[f"x{n}"] = MEMORY_BASE + 2 * half - 16 * rng.randrange(1, 9)
        for n in INDEXES:
            regs[f"x{n}"] = rng.randrange(64)
        regs |= {"nzcv": rng.getrandbits(4) << 28, "svcr": ON}
        arrays = {f"z{n}": rng.randbytes(svlb) for n in range(32)}
        arrays |= {f"p{n}": _predicate(rng, svlb // 8) for n in range(16)}
        arrays[f"p{ALL_TRUE_P}"] = b"\xff" * (svlb // 8)
        arrays |= {"za": rng.randbytes(svlb * svlb), "zt0": rng.randbytes(64)}
        memory = [(MEMORY_BASE, rng.randbytes(2 * half), True)]
        return "\n".join(self.lines()) + "\n", Init(regs=regs, memory=memory, arrays=arrays)


def _predicate(rng: random.Random, size: int) -> bytes:
    kind = rng.randrange(4)
    if kind == 0:
        return rng.randbytes(size)
    if kind == 1:
        return b"\xff" * size
    if kind == 2:
        return bytes(size)
    bits = rng.randrange(8 * size + 1)
    return ((1 << bits) - 1).to_bytes(size, "little")


def edge_selects(svl: int) -> list[int]:
    """Values worth putting in a vector- or slice-select register at this SVL."""
    svlb = svl // 8
    dims = sorted({svlb // 4, svlb // 2, svlb, max(1, svlb // 16), max(1, svlb // 8)})
    values = {0, 0x7FFFFFFF, 0xFFFFFFFF}
    for dim in dims:
        values |= {dim - 1, dim, 0xDEADBEEF_00000000 | (dim + 1)}
    return sorted(values)


class FormGenerator(CaseGenerator):
    """Cases over the forms of one group (or of every group: ``mixed``)."""

    probe = "nop"

    def __init__(self, subset: str, svl: int, weight: int = 1, lockstep: bool = False):
        self.subset, self.svl, self.weight, self.lockstep = subset, svl, weight, lockstep

    def forms(self) -> list:
        return [form for form in _forms() if (self.subset == MIXED or form.group == self.subset)
                and not (self.lockstep and turns_za_off(form))]

    def cases(self):
        from hypothesis import strategies as st

        forms, svl = self.forms(), self.svl
        mode_ids = _mode_ids()

        def build(picks: list[tuple[int, int]], selects: list[int], data_seed: int) -> SmeCase:
            slots = [slot for form_number, seed in picks if (slot := draw_slot(forms[form_number], seed))]
            # The mode instructions go last (before the closing SMSTART): see the module docstring.
            slots.sort(key=lambda slot: slot.form_id in mode_ids)
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


def generators(svl: int, lockstep: bool = False) -> tuple[FormGenerator, ...]:
    """``mixed`` (half the cases) and one generator per group; the order fixes each one's seed."""
    groups = subsets()[1:]
    return (FormGenerator(MIXED, svl, len(groups), lockstep), *(FormGenerator(g, svl, 1, lockstep) for g in groups))


SUBSETS = subsets()


def run_fuzz(cases: int, seed: int, against: str = "qemu", isa_subset: str | None = None, lockstep: bool = False,
             out_dir: str | Path = ".", config: dict | None = None, **options):
    """Run ``cases`` random arm_sme programs on the simulator and on ``against`` and compare them."""
    from ..core.campaign import run_campaign
    from . import ISA

    config = ISA.configure(config or {})
    return run_campaign(ISA_NAME, generators(config["svl"], lockstep), cases, seed, against, isa_subset, lockstep,
                        out_dir, config=config, **options)

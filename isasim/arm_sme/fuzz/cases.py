"""One case of the arm_sme fuzzer: its instructions (slots: a form and random values for its encoding's fields,
fixed up where they must point into the case's memory) and its initial state (registers with edge values,
random vectors, predicates, ZA, ZT0 and memory).  The package docstring says why each rule is there.
"""

from __future__ import annotations

import functools

import random
import re
from dataclasses import dataclass

from ...core.trace import Init
from ..config import CODE_BASE
from ..decoder import disassemble
from ..forms import FORMS

ISA_NAME = "arm_sme"
ON = 3  # SVCR: streaming mode and ZA on
MAX_INSTRUCTIONS = 6
MEMORY_BASE = 0x10000000
BASES = (16, 17, 18, 19, 31)  # x16-x19 and SP point into the memory block
EDGE_BASES = (18, 19)  # in a third of the cases, these point near the block's end instead
INDEXES = (20, 21, 22, 23)  # small values, as the index of [Xn, Xm, lsl #k]
ALL_TRUE_P = 7  # governs the vertical ZA tile-slice loads; no instruction of a case writes it
MASK64 = (1 << 64) - 1
# values where the scalar forms' carries, overflows and W/X halves change
SCALAR_EDGES = (0, 1, MASK64, 1 << 63, (1 << 63) - 1, 0xFFFFFFFF, 0x80000000, 0x7FFFFFFF, 0x1_0000_0000)


@functools.cache
def mode_ids() -> frozenset[str]:
    """The mode instructions (SMSTART, SMSTOP ...): a case runs them last (see the package docstring).
    Made once: every case's text asks."""
    return frozenset(form.id for form in FORMS if form.group == "mode")


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
    if form.id == "RET":
        fields["Rn"] = 30  # RET to the harness (isasim: the end of the run); any other register branches anywhere
    if form.group == "za_memory" and form.mnemonic.startswith("ld") and fields.get("V") == 1 and "Pg" in fields:
        fields["Pg"] = ALL_TRUE_P


def fuzzable(form) -> bool:
    """Whether random cases may hold ``form``: not the forms whose effect depends on where the code is (ADR, ADRP,
    LDR (literal), BL, BR, BLR: the code is elsewhere under QEMU), nor those that leave state behind in QEMU's
    process that the next case would see or its harness does not dump (MSR of FPCR, FPSR, TPIDR2_EL0, SVCR),
    nor the PAC hints (QEMU's -cpu max signs X30, isasim's core has no FEAT_PAuth)."""
    return not form.extra.get("position_dependent") and not form.extra.get("not_fuzzed")


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
    if not fuzzable(form):
        return None
    rng = random.Random(seed)
    target = _target(form)
    for _ in range(tries):
        fields = {name: rng.randrange(1 << box.width) for name, box in form.encoding.fields.items()}
        _fix_fields(form, fields, rng)
        skip = rng.randrange(MAX_INSTRUCTIONS + 1) if target is not None else 0
        if target is not None:
            fields[target.field] = 1  # placed later; any in-range value decodes the same form
        try:
            instruction = disassemble(form.encoding.pack(fields).to_bytes(4, "little"), ISA_NAME, CODE_BASE).instructions[0]
        except Exception:  # noqa: BLE001 - a reserved field value: the decoder refuses it
            continue
        if instruction.form is form and instruction.invalid is None and _acceptable(instruction.text):
            return Slot(form.id, tuple(sorted(fields.items())), skip)
    return None


def slot_text(slot: Slot, position: int, count: int, base: int) -> str:
    """The slot's instruction as text, at instruction ``position`` of a program of ``count``."""
    form = FORMS[slot.form_id]
    fields = dict(slot.fields)
    target = _target(form)
    if target is not None:
        words = min(position + 1 + slot.skip, count) - position  # forward, at most to the program's end
        fields[target.field] = words & ((1 << target.bits) - 1)
    word = form.encoding.pack(fields)
    return disassemble(word.to_bytes(4, "little"), ISA_NAME, base + 4 * position).instructions[0].text


# ---- a case -------------------------------------------------------------------------------------

@dataclass(frozen=True)
class SmeCase:
    slots: tuple[Slot, ...]
    selects: tuple[int, ...]  # x8-x15
    data_seed: int
    svl: int

    def lines(self) -> list[str]:
        n = len(self.slots)
        lines = [slot_text(slot, i, n, CODE_BASE) for i, slot in enumerate(self.slots)]
        if any(slot.form_id in mode_ids() for slot in self.slots):
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

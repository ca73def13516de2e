"""``isasim explain`` of the vector moves (forms/vector.py): the opcode rows, the operands, the operation, and a
worked example that shows each vector register's 512 bits before and after, so the upper-bits rule of
the encoding (SSE keeps bits 511:128, VEX/EVEX zero them) is visible."""

from __future__ import annotations

import numpy as np

from ...core.explain import Cell, Code, Explanation, Grid, Paragraph, Section, Table, fault_blocks
from ...core.program import Instruction
from ..forms import vector
from ..faults import INVALID_OPCODE, PAGE_FAULT
from ..operands import GPR64, GPR_VIEWS, Imm, Mem, Reg, vector_register
from ..operands.masking import Masked, opmask_number, unmasked
from .common import DATA_ADDR, command, default_cpu, example_figure, facts, run_after_setup
from .encoding_view import vector_encoding
from .settings import Settings


def _hex512(value: int) -> str:
    """512 bits as four 128-bit lanes, high lane first, so the lanes a write zeroes stand out."""
    return " ".join(f"{value >> (128 * lane) & ((1 << 128) - 1):032x}" for lane in (3, 2, 1, 0))


def _dwords(value: int, count: int = 16) -> list[str]:
    """A register's or a store's dwords as hex, the highest first (as _hex512 orders its lanes)."""
    return [f"{value >> (32 * i) & 0xFFFFFFFF:08x}" for i in reversed(range(count))]


def _change_grid(title: str, old: int, new: int, count: int, caption: str) -> Grid:
    before, after = _dwords(old, count), _dwords(new, count)
    cells = [[Cell(b) for b in before], [Cell(a, "changed" if a != b else None) for a, b in zip(after, before)]]
    labels = [f"{32 * i + 31}:{32 * i}" if i in (count - 1, 0) else "" for i in reversed(range(count))]
    return Grid(title, cells, ["before", "after"], labels, group=4, caption=caption)


def _kind_and_bits(o) -> tuple[str, str]:
    """What the Operands table says of an operand: its kind and its width in bits."""
    mask = f", written under {o.mask}" + (" (zeroing)" if o.zeroing else " (merging)") if isinstance(o, Masked) else ""
    o = unmasked(o)
    if isinstance(o, Mem):
        return "memory" + mask, str(8 * o.size)
    if isinstance(o, Imm):
        return "immediate", "8"
    if vector_register(o.name):
        return "vector register" + mask, str(vector_register(o.name).bits)
    if opmask_number(o.name) is not None:
        return "opmask register", "64"
    return "register", str(GPR_VIEWS[o.name].bits)


def explain_vector(ins: Instruction, form, settings: Settings) -> Explanation:
    cpu = default_cpu(form.feature, settings.cpu)
    encoding, row, row_syntax = vector_encoding(ins)
    expl = Explanation("x86_amx", form.syntax, ins.text, ins.encoding, form.summary, facts(ins, cpu))
    expl.command = command(ins, settings)
    features = vector.required_features(form, ins.operands)
    expl.facts.insert(2, ("CPUID features", ", ".join(features)))
    expl.facts.insert(3, ("opcode row", f"{row}  {row_syntax}"))
    expl.sections.append(Section("Encoding", [Paragraph(f"The SDM opcode row these bytes match: {row}  "
                                                        f"({row_syntax})"), encoding]))
    expl.sections.append(Section("Opcode rows of this form", [Table(["opcode", "instruction"], [
        [Cell(r.split("  ")[0], "changed" if r == f"{row}  {row_syntax}" else None), r.split("  ", 1)[1]]
        for r in form.rows])]))
    expl.sections.append(Section("Operands", [Table(["operand", "kind", "bits"], [
        [str(o), *_kind_and_bits(o)] for o in ins.operands]) if ins.operands else Paragraph("none")]))
    expl.sections.append(Section("Operation (the semantics the simulator executes)", [Code(form.doc)]))
    faults = [[INVALID_OPCODE, f"the CPU model lacks {', '.join(features)}"]]
    if form.aligned and any(isinstance(unmasked(o), Mem) for o in ins.operands):
        faults.append(["#GP(0)", "the memory operand is not aligned to its size"])
    if any(isinstance(unmasked(o), Mem) for o in ins.operands):
        faults.append([PAGE_FAULT, "the memory operand's bytes are not mapped (or, for a write, not writable)"])
    expl.sections.append(Section("Faults", [Table(["fault", "when"], faults)]))

    rng = np.random.default_rng(settings.seed)
    regs, memory = {}, []
    for o in ins.operands:
        if isinstance(o, Masked):
            regs[o.mask] = int(rng.integers(0, 1 << 62))
            o = o.operand
        if isinstance(o, Reg) and vector_register(o.name):
            regs[f"zmm{vector_register(o.name).number}"] = int.from_bytes(rng.bytes(64), "little")
        elif isinstance(o, Reg) and opmask_number(o.name) is not None:
            regs[o.name] = int(rng.integers(0, 1 << 62))
        elif isinstance(o, Reg):
            regs[GPR64[GPR_VIEWS[o.name].number]] = int(rng.integers(0, 1 << 62))
        elif isinstance(o, Mem):
            for r in (o.base, o.index):
                if r and r != "rip":  # RIP is where the instruction is: the data goes where it points
                    regs[r] = DATA_ADDR + 0x100 if r == o.base else 0
            if o.index and vector_register(o.index):  # VSIB (gathers, scatters): small indices, some negative
                regs[f"zmm{vector_register(o.index).number}"] = sum(
                    (int(v) % (1 << 64)) << (64 * j) for j, v in enumerate(rng.integers(-16, 32, 8)))
            data = DATA_ADDR if o.base != "rip" else (ins.address + ins.size + o.disp - 0x100) & ~63
            memory.append((data, rng.integers(0, 256, 0x400, dtype=np.uint8).tobytes(), True))
    if form.mnemonic == "vzeroupper":
        regs.update({f"zmm{n}": int.from_bytes(rng.bytes(64), "little") for n in (0, 1, 15, 16)})
    run = run_after_setup(ins, [], cpu=cpu, regs=regs, memory=memory[:1], max_steps=settings.max_steps)
    blocks = [Paragraph(f"The instruction runs alone on the simulator (--seed {settings.seed}); "
                        "vector registers as four 128-bit lanes, bits 511:384 first:")]
    if run.fault:
        expl.sections.append(Section("Worked example", blocks + fault_blocks(run)))
        expl.figure = example_figure(ins, encoding, [], [])
        return expl
    state = run.machine.state
    rows, panels = [], []
    for name in sorted((r for r in regs if r.startswith("zmm")), key=lambda r: int(r[3:])):
        old, new = regs[name], state.read_register(name)  # as seeded: a trace's registers hold no zmm
        rows.append([name, _hex512(old), Cell(_hex512(new), "changed" if old != new else None)])
        if old != new and len(panels) < 2:
            panels.append([_change_grid(f"{name}, 16 dwords", old, new, 16, "bits 511:480 on the left")])
    if rows:
        blocks.append(Table(["register", "before", "after"], rows))
    for w in run.record.writes:
        if w.kind == "mem":
            blocks.append(Paragraph(f"memory {w.where:#x}: {w.old.hex(' ')} → {w.new.hex(' ')}"))
            count = len(w.new) // 4
            panels.append([_change_grid(f"memory {w.where:#x}, {count} dwords", int.from_bytes(w.old, "little"),
                                        int.from_bytes(w.new, "little"), count, "the highest address on the left")])
    expl.sections.append(Section("Worked example", blocks))
    expl.figure = example_figure(ins, encoding, panels, [], legend=[("changed", "changed by the instruction")])
    return expl

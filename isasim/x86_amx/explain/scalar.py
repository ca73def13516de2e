"""``isasim explain`` of the scalar x86-64 subset: the opcode row matched, the operands, and the flags.

The example runs the instruction alone, with random register values (small now and
then, so results are readable), and shows each register and status flag before and
after, the memory it accessed and, for a branch, where it went.
"""

from __future__ import annotations

import numpy as np

from ...core.explain import Cell, Code, Explanation, Grid, Paragraph, Section, Table, fault_blocks
from ...core.program import Instruction
from ..faults import PAGE_FAULT
from ..operands import GPR64, GPR_VIEWS, Imm, Mem, Reg, Target, operand_text, width
from ..semantics import scalar, strings
from ..state import FLAG_NAMES, RFLAGS_RESET
from .common import DATA_ADDR, ISA_NAME, command, default_cpu, example_figure, facts, run_after_setup
from .encoding_view import legacy_encoding
from .settings import Settings


def _scalar_values(ins, rng, regs_given: dict) -> tuple[dict, list]:
    """Register values (operands, address registers, an implicit accumulator) and the memory to map."""
    regs = {}
    names = []
    for o in ins.operands:
        if isinstance(o, Reg):
            names.append(o.name)
    if ins.form.mnemonic == "imul" and len(ins.operands) == 1:
        low, high = scalar._IMUL_ACCUMULATORS[width(ins.operands[0])]
        names += [low, high]
    for name in names:
        view = GPR_VIEWS[name]
        full = GPR64[view.number]
        if full not in regs:
            regs[full] = int(rng.integers(0, 1 << 63, dtype=np.int64)) * 2 + int(rng.integers(0, 2))
            if rng.integers(0, 2):
                regs[full] &= 0xFFFF  # small values now and then, so results are readable
    memory = []
    for o in ins.operands:
        if isinstance(o, Mem):
            if o.base and o.base != "rip" and o.base not in regs_given:  # RIP is where the instruction is
                regs[o.base] = DATA_ADDR
            if o.index and o.index not in regs_given:
                regs[o.index] = int(rng.integers(0, 4))
    if getattr(ins.form, "repeat_prefixes", ()):  # a string instruction: its source apart, a few elements
        if "rsi" not in regs_given and any(isinstance(o, Mem) and o.base == "rsi" for o in ins.operands):
            regs["rsi"] = DATA_ADDR + 0x80
        if "rcx" not in regs_given and set(ins.extra.get("prefixes", ())) & set(ins.form.repeat_prefixes):
            regs["rcx"] = 4
    if ins.form.mnemonic in ("push", "pop", "leave", "call"):
        # the stack is memory like any other: point RSP (and LEAVE's RBP) into a mapped block
        for name in ("rsp", "rbp") if ins.form.mnemonic == "leave" else ("rsp",):
            if name not in regs_given:
                regs[name] = DATA_ADDR + 0x40
        memory.append((DATA_ADDR, rng.integers(0, 256, 128, dtype=np.uint8).tobytes(), True))
    status = 0
    for bit in FLAG_NAMES.values():
        if rng.integers(0, 2):
            status |= bit
    regs["rflags"] = RFLAGS_RESET | status
    regs.update(regs_given)
    for o in ins.operands:
        if isinstance(o, Mem) and ins.form.mnemonic != "lea":
            base = ins.address + ins.size if o.base == "rip" else regs.get(o.base, 0) if o.base else 0
            ea = o.disp + base + (regs.get(o.index, 0) * o.scale if o.index else 0)
            ea %= 1 << 64
            low = ea & ~63
            memory.append((low, rng.integers(0, 256, 128, dtype=np.uint8).tobytes(), True))
    return regs, memory


def _flags_text(value: int) -> str:
    return " ".join(name for name, bit in FLAG_NAMES.items() if value & bit) or "-"


def explain_scalar(ins: Instruction, form, settings: Settings) -> Explanation:
    cpu = default_cpu(form.feature, settings.cpu)
    encoding, row, row_syntax = legacy_encoding(ins)
    expl = Explanation(ISA_NAME, form.syntax, ins.text, ins.encoding, form.summary, facts(ins, cpu))
    expl.command = command(ins, settings)
    expl.facts.insert(2, ("opcode row", f"{row}  {row_syntax}"))
    expl.sections.append(Section("Encoding", [Paragraph(f"The SDM opcode row these bytes match: {row}  "
                                                        f"({row_syntax})"), encoding]))
    expl.sections.append(Section("Opcode rows of this form", [Table(["opcode", "instruction"], [
        [Cell(r.split("  ")[0], "changed" if r.split("  ")[0] == row else None), r.split("  ", 1)[1]]
        for r in form.rows])]))
    operand_rows = []
    for o in ins.operands:
        what = {Reg: "register", Mem: "memory", Imm: "immediate", Target: "branch target"}[type(o)]
        bits = "" if isinstance(o, Target) or (isinstance(o, Mem) and o.size is None) else str(width(o))
        operand_rows.append([operand_text(o), what, bits])
    expl.sections.append(Section("Operands", [Table(["operand", "kind", "bits"], operand_rows)
                                               if operand_rows else Paragraph("none")]))
    operation = [Code(form.doc)]
    prefix = next((p for p in ins.extra.get("prefixes", ()) if p in getattr(form, "repeat_prefixes", ())), None)
    if prefix is not None:  # the repeat prefix's own operation, around the element's
        operation += [Paragraph(f"{prefix} repeats it:"), Code(strings.repeat.__doc__.strip())]
    expl.sections.append(Section("Operation (the semantics the simulator executes)", operation))
    faults = []
    if any(isinstance(o, Mem) for o in ins.operands) and form.mnemonic not in ("lea", "nop"):
        faults.append([PAGE_FAULT, "the memory operand's bytes are not mapped (or, for a write, not writable)"])
    if form.undefined_flags:
        faults.append(["-", "flags the SDM leaves undefined: " + _flags_text(form.undefined_flags)
                       + " (isasim's deterministic choice is in the operation text)"])
    expl.sections.append(Section("Faults", [Table(["fault", "when"], faults) if faults else
                                            Paragraph("None: the scalar subset raises no fault without a memory "
                                                      "operand.")]))
    rng = np.random.default_rng(settings.seed)
    init = settings.init
    given = dict(init.regs) if init is not None else {}
    regs, memory = _scalar_values(ins, rng, given)
    if init is not None:
        covered = [(a, d, w) for a, d, w in memory if not any(a < b + len(e) and b < a + len(d)
                                                                for b, e, _x in init.memory)]
        memory = list(init.memory) + covered
    run = run_after_setup(ins, [], cpu=cpu, regs=regs, memory=memory, max_steps=settings.max_steps)
    blocks = [Paragraph("The instruction runs alone on the simulator, with these registers "
                        + (f"(from --seed {settings.seed}" + (f" and {settings.init_source}" if init else "") + ")")
                        + ":")]
    state = run.machine.state
    before = run.before["regs"]
    shown = sorted({GPR64[GPR_VIEWS[o.name].number] for o in ins.operands if isinstance(o, Reg)}
                   | {r for o in ins.operands if isinstance(o, Mem) for r in (o.base, o.index) if r}
                   | {w.where for w in (run.record.writes if run.record else []) if w.kind == "reg"},
                   key=lambda r: GPR64.index(r) if r in GPR64 else 99)
    reg_rows = []
    for name in shown:
        old, new = before[name], state.read_register(name)
        reg_rows.append([name, f"{old:#x}", Cell(f"{new:#x}", "changed" if old != new else None),
                         str(new - (1 << 64) if new >> 63 else new)])
    if reg_rows:
        blocks.append(Table(["register", "before", "after", "after (signed)"], reg_rows))
    if run.fault:
        return _finish_scalar(expl, blocks + fault_blocks(run), ins, encoding, None, None)
    flag_rows = []
    old_f, new_f = before["rflags"], state.rflags
    for name, bit in FLAG_NAMES.items():
        o, n_ = int(bool(old_f & bit)), int(bool(new_f & bit))
        undefined = " (undefined in the SDM)" if form.undefined_flags & bit else ""
        flag_rows.append([name, str(o), Cell(str(n_), "changed" if o != n_ else None), undefined.strip()])
    blocks.append(Table(["flag", "before", "after", ""], flag_rows, title=f"RFLAGS {old_f:#x} → {new_f:#x}"))
    for w in run.record.writes:
        if w.kind == "mem":
            blocks.append(Paragraph(f"memory {w.where:#x}: {w.old.hex(' ')} → {w.new.hex(' ')}"))
    if run.reads:
        blocks.append(Paragraph("memory read: " + ", ".join(f"{s} bytes at {a:#x}" for a, s in run.reads)))
    if form.mnemonic.startswith("j") or form.mnemonic in ("ret", "call"):
        where = "the end of the program (RET)" if run.record.halted and form.mnemonic == "ret" else f"{state.pc:#x}"
        taken = state.pc != ins.next_address
        blocks.append(Paragraph(f"next instruction: {where}" + ("" if form.mnemonic == "ret" else
                                                                (" (taken)" if taken else " (not taken: falls through)"))))
    return _finish_scalar(expl, blocks, ins, encoding, old_f, new_f)


def _finish_scalar(expl, blocks, ins, encoding, old_f, new_f):
    expl.sections.append(Section("Worked example", blocks))
    panels = []
    if old_f is not None:
        names = list(FLAG_NAMES)
        cells = [[Cell(str(int(bool(v & FLAG_NAMES[f]))), ("changed" if (old_f ^ new_f) & FLAG_NAMES[f] else None)
                       if i else None) for f in names] for i, v in enumerate((old_f, new_f))]
        panels.append([Grid("status flags", cells, ["before", "after"], names, caption="changed flags highlighted")])
    legend = [("changed", "changed by the instruction")] if panels else []
    expl.figure = example_figure(ins, encoding, panels, [], legend=legend)
    return expl

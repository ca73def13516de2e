"""``isasim explain`` and ``isasim docs`` for the toy (an Explainer, see isasim.core.explain.explainer).

Every section comes from the form's one declaration: the operands from its syntax line,
the operation from its semantics function's docstring, the faults from its ``faults``,
the encoding (toy32 only) from the encoder's bytes.  The worked example runs the real
machine on the instruction and checks the machine's result against the same result
worked out here from the pseudocode.
"""

from __future__ import annotations

import random

from isasim.core.errors import IsasimError
from isasim.core.explain import (
    BitField, Cell, Check, Code, Encoding, EncodingUnit, ExplainError, ExplainOptions, Explainer, Explanation, Figure, Grid,
    Paragraph, ReferencePage, Section, Table, fault_blocks, run_example, setup_blocks,
)

from .decoder import decode_one
from .forms import FORMS, ToyForm
from .operands import operand_text
from .state import ACC_BYTES, ACC_ELEMENTS, REGISTER_NAMES, WORD

DATA_ADDRESS = 0x1000  # where the example's memory words are
DATA_WORDS = 8

_OPERAND_MEANINGS = {
    "rd": "the register written", "ra": "a register read", "rb": "a register read",
    "[ra]": "the memory word at the address in the register", "acc[i]": "an element of the accumulator acc",
    "imm": "a 32-bit immediate", "target": "where the branch goes: an instruction's address",
}


class ToyExplainer(Explainer):
    OPTIONS = ()  # the toy has no options of its own
    INIT_HELP = ""

    def __init__(self, isa):
        self.isa = isa
        self.SCREENSHOTS = ((f"explain-{isa.name}-mac.svg", "mac acc[1], r2, r3"),)

    # ---- reference pages -----------------------------------------------------------------------
    def example_text(self, form: ToyForm) -> str:
        """The instruction each reference page works through."""
        operands = {"rd": "r1", "ra": "r2", "rb": "r3", "[ra]": "[r2]", "acc[i]": "acc[1]", "imm": "-3",
                    "target": f"{self.isa.code_base:#x}"}
        names = form.operand_names
        if form.mnemonic == "st":
            operands["rb"] = "r1"
        return form.mnemonic + (" " + ", ".join(operands[n] for n in names) if names else "")

    def reference_pages(self) -> list[ReferencePage]:
        return [ReferencePage(form.mnemonic, form.group, self.example_text(form), form.syntax, form.summary)
                for form in FORMS]

    # ---- one instruction ---------------------------------------------------------------------------
    def explain(self, instruction: str | None, code: bytes | None, options: ExplainOptions) -> Explanation:
        ins = self._instruction(instruction, code)
        form = ins.form
        encoding = _encoding(ins.encoding) if ins.encoding is not None else None
        sections = [
            Section("Encoding", [encoding] if encoding else [Paragraph(
                f"{self.isa.name} has no binary encoding: a program is its text, one instruction per address.")]),
            Section("Operands", [Table(["operand", "is", "here"],
                                       [[n, _OPERAND_MEANINGS[n], operand_text(n, v)]
                                        for n, v in zip(form.operand_names, ins.operands)])]
                     if form.operand_names else [Paragraph("none")]),
            Section("Operation", [Code(form.doc)]),
            Section("Faults", [Table(["fault", "when"], [list(f) for f in form.faults])] if form.faults
                    else [Paragraph("none")]),
        ]
        blocks, panels = self._example(ins, options)
        sections.append(Section("Example", blocks))
        command = f'isasim explain "{ins.text}" --isa {self.isa.name}' + (
            f" --seed {options.seed}" if options.seed != 1 else "")
        figure = Figure(ins.text, ([[encoding]] if encoding else []) + panels,
                        legend=[("changed", "what the step changed")])
        return Explanation(self.isa.name, form.syntax, ins.text, ins.encoding, form.summary,
                           facts=[("group", form.group), ("form id", form.id)], sections=sections, figure=figure,
                           command=command)

    def _instruction(self, text: str | None, code: bytes | None):
        try:
            if code is not None:
                if not self.isa.encoded:
                    raise ExplainError(f"{self.isa.name} has no binary encoding: give the instruction as text")
                program = self.isa.disassemble(code)
            else:
                program = self.isa.assemble(text, source="explain")
        except ExplainError:
            raise
        except IsasimError as error:
            raise ExplainError(str(error)) from None
        if len(program.instructions) != 1:
            raise ExplainError(f"explain takes one instruction, not {len(program.instructions)}")
        return program.instructions[0]

    def _example(self, ins, options: ExplainOptions):
        rng = random.Random(options.seed)
        regs = {name: rng.randrange(WORD) for name in REGISTER_NAMES}
        words = [rng.randrange(WORD) for _ in range(DATA_WORDS)]
        memory = [(DATA_ADDRESS, b"".join(w.to_bytes(4, "little") for w in words), True)]
        acc = bytes(rng.randrange(256) for _ in range(ACC_BYTES))
        if "[ra]" in ins.form.operand_names:  # the address register points at one of the words
            address_register = REGISTER_NAMES[ins.operands[ins.form.operand_names.index("[ra]")]]
            regs[address_register] = DATA_ADDRESS + 4 * rng.randrange(DATA_WORDS)
        if options.init is not None:  # the user's data instead
            regs.update(options.init.regs)
            memory = list(options.init.memory)
            acc = options.init.arrays.get("acc", acc)

        def seed_acc(machine):
            self.isa.seed_arrays(machine.state, {"acc": acc})

        run = run_example(self.isa.name, ins.text, config={}, regs=regs, memory=memory,
                          max_steps=options.max_steps, snapshot=_snapshot, before_step=seed_acc)
        blocks = setup_blocks(run, "acc seeded before the step")
        if run.fault:
            return blocks + fault_blocks(run), []
        before, after = run.before, _snapshot(run.machine.state)
        read = [(n, REGISTER_NAMES[v]) for n, v in zip(ins.form.operand_names, ins.operands)
                if n in ("ra", "rb", "[ra]")]
        if read:
            blocks.append(Table(["operand", "register", "value before the step"],
                                [[n, r, f"{before['regs'][r]:#x}"] for n, r in read]))
        written = {str(w.where) for w in run.record.writes}
        blocks.append(Table(["write", "old", "new"], [[str(w.where) if w.kind != "mem" else f"memory {w.where:#x}",
                                                       _value(w.old), _value(w.new)] for w in run.record.writes],
                            title="What the step wrote (the machine's journal)"))
        blocks.append(_check(ins, before, after, run))
        reg_names = [*REGISTER_NAMES, "pc"]

        def registers(title, values):
            return Grid(title, [[Cell(f"{values['regs'][n]:#x}", "changed" if n in written and values is after
                                      else None) for n in reg_names]], col_labels=reg_names)

        def accumulator(title, values):
            cells = [Cell(str(int.from_bytes(values["acc"][4 * i : 4 * i + 4], "little")),
                          "changed" if f"acc[{i}]" in written and values is after else None)
                     for i in range(ACC_ELEMENTS)]
            return Grid(title, [cells], col_labels=[f"acc[{i}]" for i in range(ACC_ELEMENTS)])

        panels = [[registers("registers before", before), registers("registers after", after)],
                  [accumulator("acc before", before), accumulator("acc after", after)]]
        return blocks, panels


def _snapshot(state) -> dict:
    return {"regs": {name: state.read_register(name) for name in state.register_names()},
            "acc": state.acc_bytes()}


def _value(value) -> str:
    return value.hex(" ") if isinstance(value, (bytes, bytearray)) else f"{value:#x}"


def _check(ins, before: dict, after: dict, run) -> Check:
    """The instruction's result worked out from its pseudocode, beside the machine's."""
    names, ops = ins.form.operand_names, dict(zip(ins.form.operand_names, ins.operands))
    R = lambda n: before["regs"][REGISTER_NAMES[n]]  # noqa: E731
    acc = lambda values, i: int.from_bytes(values["acc"][4 * i : 4 * i + 4], "little")  # noqa: E731
    memory = run.machine.memory
    mnemonic = ins.form.mnemonic
    if mnemonic == "halt":
        return Check("the program ended", "True", str(run.machine.halted))
    if mnemonic == "bnz":
        expected = ops["target"] if R(ops["ra"]) != 0 else ins.next_address
        return Check("next pc", f"{expected:#x}", f"{after['regs']['pc']:#x}")
    if mnemonic == "st":
        return Check(f"MEM32[{R(ops['[ra]']):#x}]", f"{R(ops['rb']):#x}",
                     f"{int.from_bytes(memory.read(R(ops['[ra]']), 4), 'little'):#x}")
    if mnemonic == "mac":
        i = ops["acc[i]"]
        expected = (acc(before, i) + R(ops["ra"]) * R(ops["rb"])) % WORD
        return Check(f"acc[{i}]", f"{expected:#x}", f"{acc(after, i):#x}")
    result = {
        "li": lambda: ops["imm"],
        "add": lambda: (R(ops["ra"]) + R(ops["rb"])) % WORD,
        "addi": lambda: (R(ops["ra"]) + ops["imm"]) % WORD,
        "ld": lambda: _loaded(run, R(ops["[ra]"])),
        "mova": lambda: acc(before, ops["acc[i]"]),
    }[mnemonic]()
    rd = REGISTER_NAMES[ops["rd"]] if "rd" in names else None
    return Check(rd, f"{result:#x}", f"{after['regs'][rd]:#x}")


def _loaded(run, address: int) -> int:
    """The word the load read: memory is unchanged by a load, so it is still there."""
    return int.from_bytes(run.machine.memory.read(address, 4), "little")


def _encoding(data: bytes) -> Encoding:
    """toy32's eight bytes: the opcode, three register or element fields, the 32-bit immediate."""
    form, operands, _undefined = decode_one(data, 0)
    named = dict(zip(form.operand_names, operands))
    small = [n for n in form.operand_names if n not in ("imm", "target")]
    wide = [n for n in form.operand_names if n in ("imm", "target")]
    units = [EncodingUnit(0, data[0:1], "opcode", [BitField(0, 8, "opcode", data[0], form.mnemonic)])]
    for k in range(3):
        name = small[k] if k < len(small) else "(zero)"
        meaning = operand_text(name, named[name]) if k < len(small) else "unused"
        units.append(EncodingUnit(1 + k, data[1 + k : 2 + k], f"field {k}", [BitField(0, 8, name, data[1 + k], meaning)]))
    value = int.from_bytes(data[4:8], "little")
    meaning = operand_text(wide[0], value) if wide else "unused"
    units.append(EncodingUnit(4, data[4:8], "imm32", [BitField(0, 32, wide[0] if wide else "(zero)", value,
                                                               meaning, binary=False)]))
    return Encoding(units, title="toy32 encoding: opcode, three fields, a little-endian 32-bit word")

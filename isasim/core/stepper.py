"""Step-through: run a program one instruction at a time and show what each one changed.

Commands (interactive at the ``(isasim)`` prompt, or scripted with ``--commands
"s 3; p tmm0 int32; c"`` or a file):

    s [N], step [N]        execute N instructions (default 1) and show what each changed
    c, continue            run until a breakpoint, a watched location changes, a fault, or the end
    back [N]               go back N steps (default 1): the run is replayed from the start to there
    goto N                 go to the state after N steps (forwards or backwards)
    b LOC, break LOC       stop before instruction LOC: an index (3 or #3), a label, or an address (0x...)
    w LOC, watch LOC       stop when LOC changes: a register, rflags, tmmN, tmmN[r][c], or memory 0xADDR[:N]
    d N, delete N          delete breakpoint or watch number N (see info)
    p WHAT [TYPE] [hex]    print a register, rflags, regs, cfg, a tile (tmm0 int32 / bf16 / fp32 ... [hex] [all]),
                           a named init region (C [hex] [all]: all prints every row of a large one),
                           or memory (0xADDR [N])
    l, list                the program, with the current position
    i, info                breakpoints and watches
    h, help                this text
    q, quit                leave

A fault stops the stepper on the faulting instruction with the rule it broke.
Stepping backwards is a replay, never a guess: the step records are kept and the
machine is re-run from the initial state.  With ``--against silicon`` every step
also runs on the CPU, and the stepper stops at the first instruction where the
two states differ, showing both values.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass

import numpy as np
from rich.console import Console
from rich.text import Text

from .diff import compare
from .errors import IsasimError
from .isa import get_isa
from .machine import DEFAULT_STEP_LIMIT, Machine, StepRecord
from .program import Program
from .render import region_grid
from .trace import Init

PROMPT = "(isasim) "


class CommandError(IsasimError):
    """A stepper command that cannot be carried out; the session goes on."""


@dataclass
class Watch:
    spec: str
    value: object


class Stepper:
    def __init__(self, isa_name: str, config: dict, program: Program, init: Init, *, out: Console,
                 max_steps: int = DEFAULT_STEP_LIMIT, against: str | None = None, backend: str = "sim",
                 element_types: dict[int, str] | None = None, hex_values: bool = False):
        self.isa_name, self.config, self.program, self.init = isa_name, config, program, init
        self.isa = get_isa(isa_name)
        self.out = out
        self.max_steps = max_steps
        self.against = against
        self.backend = backend
        self.element_types = element_types or {}
        self.hex_values = hex_values
        self.breakpoints: list[tuple[int, str]] = []  # (instruction index, as written)
        self.watches: list[Watch] = []
        self.history: list[StepRecord] = []
        self.divergence = None
        self._reset()

    # ---- the machine(s) -------------------------------------------------------------------
    def _reset(self) -> None:
        self.machine = Machine(self.isa_name, self.config)
        self.machine.load(self.program, regs=self.init.regs, memory=self.init.memory)
        self.history = []
        self.divergence = None
        self.undefined = None  # what the executed instructions left undefined (the ISA's token)
        self.other = None
        if self.against or self.backend != "sim":
            from .backends import get_backend

            name = self.against or self.backend
            oracle = get_backend(name, self.isa_name, self.program)
            self.other = oracle.lockstep(self.isa_name, self.config, self.program, self.init,
                                         max_steps=self.max_steps)
            self.other_state = None

    @property
    def state(self):
        """The state shown: the simulator's, or the CPU's with --backend silicon."""
        if self.backend != "sim" and self.other_state is not None:
            return self.other_state
        return self.machine.state

    @property
    def width(self) -> int:
        return max(self.out.width, 60)

    def _one_step(self) -> StepRecord | None:
        machine = self.machine
        if machine.finished or machine.state.pc == self.program.end:
            self.out.print("the program has ended" + (f" with {machine.fault.kind}" if machine.fault else ""))
            return None
        if self.divergence is not None:
            self.out.print("stopped at a divergence; use 'back' to look at earlier steps")
            return None
        if len(self.history) >= self.max_steps:
            raise CommandError(f"the step limit of {self.max_steps} is reached")
        record = machine.step()
        self.history.append(record)
        self.undefined = self.isa.undefined_after(self.undefined, record.instruction)
        if self.other is not None:
            self._step_other(record)
        return record

    def _step_other(self, record: StepRecord) -> None:
        name = self.against or self.backend
        got = next(self.other, None)
        if got is None:
            self.divergence = f"{name} had already ended when the simulator ran {record.instruction.text}"
            return
        _index, pc, observed, memory, fault = got
        if self.backend != "sim":
            self.other_state, record.writes = self.isa.state_from_observed(observed, self.other_state or
                                                                         self._initial_state(), memory, self.init)
        found = compare(self.isa, self.init, self.undefined, self.isa.observe(self.machine.state), self.machine.memory,
                        record.fault, observed, memory, fault)
        if pc != record.pc:
            self.divergence = f"pc: sim {record.pc:#x}, {name} {pc:#x}"
        elif found is not None:
            self.divergence = found.describe("sim", name)

    def _initial_state(self):
        fresh = Machine(self.isa_name, self.config)
        fresh.load(self.program, regs=self.init.regs, memory=self.init.memory)
        return fresh.state

    # ---- showing ---------------------------------------------------------------------------
    def show_position(self) -> None:
        ins = self.machine.current_instruction()
        if self.machine.fault is not None:
            return
        if ins is None:
            self.out.print(Text(f"[{len(self.history)} steps] the program has ended", style="bold"))
            return
        label = self.program.label_at(ins.address)
        where = f"{label}: " if label else ""
        self.out.print(Text(f"next: #{ins.index} {ins.address:#x}  {where}{ins.text}", style="bold cyan"))

    def show_record(self, record: StepRecord) -> None:
        ins = record.instruction
        head = Text(f"[{record.index}] #{ins.index} {record.pc:#x}  {ins.text}", style="bold")
        self.out.print(head)
        if record.fault is not None:
            self.out.print(Text(f"fault {record.fault.kind}: {record.fault.rule}", style="bold red"))
        self.out.print(self.isa.render_step(record, self.state, self.program, element_types=self.element_types,
                                            hex_values=self.hex_values, width=self.width))
        if self.divergence is not None:
            self.out.print(Text(f"DIVERGENCE {self.divergence}", style="bold red"))

    # ---- commands --------------------------------------------------------------------------
    def run_script(self, text: str) -> None:
        for command in re.split(r"[;\n]", text):
            if command.strip() and not self.execute(command):
                return

    def execute(self, line: str) -> bool:
        """Run one command; False means quit."""
        try:
            words = shlex.split(line.strip())
        except ValueError as error:
            self.out.print(f"error: {error}")
            return True
        if not words:
            return True
        name, args = words[0].lower(), words[1:]
        handler = COMMANDS.get(name)
        if handler is None:
            self.out.print(f"error: unknown command '{name}' (type 'help')")
            return True
        try:
            return handler(self, args) is not False
        except CommandError as error:
            self.out.print(f"error: {error}")
            return True

    def _count(self, args: list[str], default: int = 1) -> int:
        if not args:
            return default
        try:
            n = int(args[0], 0)
        except ValueError:
            raise CommandError(f"'{args[0]}' is not a number") from None
        if n < 0:
            raise CommandError("a count cannot be negative")
        return n

    def cmd_step(self, args):
        for _ in range(self._count(args)):
            record = self._one_step()
            if record is None:
                break
            self.show_record(record)
            if record.fault is not None or self.divergence is not None:
                break
        self.show_position()

    def cmd_continue(self, args):
        first = True
        ran = 0
        while True:
            ins = self.machine.current_instruction()
            if ins is not None and not first:
                hit = next((n for n, (index, _text) in enumerate(self.breakpoints, 1) if index == ins.index), None)
                if hit is not None:
                    self.out.print(Text(f"breakpoint {hit} before #{ins.index}", style="bold magenta"))
                    break
            if ran and (self.machine.finished or self.machine.state.pc == self.program.end):
                break
            first = False
            before = [(w, self._watch_value(w.spec)) for w in self.watches]
            record = self._one_step()
            if record is None:
                break
            ran += 1
            changed = [(w, old, self._watch_value(w.spec)) for w, old in before if self._watch_value(w.spec) != old]
            if record.fault is not None or self.divergence is not None or changed:
                self.show_record(record)
                for w, old, new in changed:
                    w.value = new
                    self.out.print(Text(f"watch {w.spec} changed: {_short(old)} -> {_short(new)}",
                                        style="bold magenta"))
                break
        self.out.print(Text(f"({ran} instruction{'s' if ran != 1 else ''} run)", style="dim"))
        self.show_position()

    def cmd_back(self, args):
        self._goto(len(self.history) - self._count(args))

    def cmd_goto(self, args):
        if not args:
            raise CommandError("goto needs a step number")
        self._goto(self._count(args))

    def _goto(self, target: int) -> None:
        if target < 0:
            raise CommandError(f"there are only {len(self.history)} steps to go back over")
        kept = self.history[:target]
        self._reset()
        for _ in range(target):
            if self._one_step() is None:
                break
        if len(kept) == len(self.history):
            assert [r.pc for r in kept] == [r.pc for r in self.history[:len(kept)]]
        self.out.print(Text(f"at step {len(self.history)} (replayed from the start)", style="dim"))
        self.show_position()

    def resolve(self, spec: str) -> int:
        text = spec.lstrip("#")
        if re.fullmatch(r"\d+", text):
            index = int(text)
            if index >= len(self.program.instructions):
                raise CommandError(f"there is no instruction #{index} (the program has {len(self.program.instructions)})")
            return index
        if spec in self.program.labels:
            address = self.program.labels[spec]
        elif re.fullmatch(r"0[xX][0-9a-fA-F]+", spec):
            address = int(spec, 16)
        else:
            raise CommandError(f"'{spec}' is not an instruction index, label or address")
        ins = self.program.at(address)
        if ins is None:
            raise CommandError(f"no instruction starts at {address:#x}")
        return ins.index

    def cmd_break(self, args):
        if not args:
            raise CommandError("break needs an instruction index, label or address")
        index = self.resolve(args[0])
        self.breakpoints.append((index, args[0]))
        ins = self.program.instructions[index]
        self.out.print(f"breakpoint {len(self.breakpoints)} before #{index} {ins.address:#x} {ins.text}")

    def _watch_value(self, spec: str):
        value = self.isa.watch_value(self.state, spec)
        if value is not None:
            return value
        m = re.fullmatch(r"(0[xX][0-9a-fA-F]+)(?::(\d+))?", spec)
        if m:
            address, size = int(m.group(1), 16), int(m.group(2) or 8)
            memory = self.machine.memory
            return memory.read(address, size) if memory.is_mapped(address, size) else None
        raise CommandError(f"cannot watch '{spec}': not a register, tile, tile element or memory address")

    def cmd_watch(self, args):
        if not args:
            raise CommandError("watch needs a location")
        value = self._watch_value(args[0])
        self.watches.append(Watch(args[0], value))
        self.out.print(f"watch {len(self.breakpoints) + len(self.watches)}: {args[0]} = {_short(value)}")

    def cmd_delete(self, args):
        n = self._count(args, default=0)
        if 1 <= n <= len(self.breakpoints):
            self.breakpoints.pop(n - 1)
        elif 1 <= n - len(self.breakpoints) <= len(self.watches):
            self.watches.pop(n - len(self.breakpoints) - 1)
        else:
            raise CommandError(f"there is no breakpoint or watch number {n}")

    def cmd_info(self, args):
        if not self.breakpoints and not self.watches:
            self.out.print("no breakpoints or watches")
        for i, (index, text) in enumerate(self.breakpoints, start=1):
            self.out.print(f"{i}: break before #{index} ({text}): {self.program.instructions[index].text}")
        for i, w in enumerate(self.watches, start=len(self.breakpoints) + 1):
            self.out.print(f"{i}: watch {w.spec} = {_short(self._watch_value(w.spec))}")

    def cmd_print(self, args):
        if not args:
            raise CommandError("print what? (a register, regs, cfg, tmmN [type] [hex], a region name, or 0xADDR [N])")
        what, rest = args[0], args[1:]
        view = self.isa.render_item(self.state, what, rest, self.program, width=self.width)
        if view is not None:
            self.out.print(view)
            return
        region = next((v for v in self.init.views if v.name == what), None)
        if region is not None:
            self.out.print(region_grid(self.machine.memory, region, hex_values="hex" in rest, width=self.width,
                                       all_rows="all" in rest))
            return
        if re.fullmatch(r"0[xX][0-9a-fA-F]+", what):
            address, size = int(what, 16), self._count(rest, default=64)
            if not self.machine.memory.is_mapped(address, size):
                raise CommandError(f"memory {address:#x}..{address + size:#x} is not mapped")
            data = self.machine.memory.read(address, size)
            for offset in range(0, size, 16):
                chunk = data[offset:offset + 16]
                self.out.print(f"{address + offset:#x}: {chunk.hex(' ')}")
            return
        raise CommandError(f"cannot print '{what}'")

    def cmd_list(self, args):
        current = self.machine.current_instruction()
        for ins in self.program.instructions:
            label = self.program.label_at(ins.address)
            if label:
                self.out.print(f"{label}:")
            mark = "=>" if current is not None and ins.index == current.index else "  "
            stop = "*" if any(index == ins.index for index, _ in self.breakpoints) else " "
            style = "bold cyan" if mark == "=>" else ""
            self.out.print(Text(f"{mark}{stop}#{ins.index:<3} {ins.address:#x}  {ins.text}", style=style))

    def cmd_help(self, args):
        self.out.print(__doc__.split("\n\n", 2)[1].strip("\n"))

    def cmd_quit(self, args):
        return False


def _short(value) -> str:
    if isinstance(value, (bytes, bytearray)):
        return value.hex() if len(value) <= 16 else value[:16].hex() + "..."
    if isinstance(value, (int, np.integer)):
        return hex(int(value))
    return str(value)


COMMANDS = {}
for _names, _method in [
    (("s", "step", "n", "next"), Stepper.cmd_step), (("c", "continue", "cont"), Stepper.cmd_continue),
    (("back", "r", "reverse"), Stepper.cmd_back), (("goto",), Stepper.cmd_goto),
    (("b", "break"), Stepper.cmd_break), (("w", "watch"), Stepper.cmd_watch), (("d", "delete"), Stepper.cmd_delete),
    (("i", "info"), Stepper.cmd_info), (("p", "print"), Stepper.cmd_print), (("l", "list"), Stepper.cmd_list),
    (("h", "help", "?"), Stepper.cmd_help), (("q", "quit", "exit"), Stepper.cmd_quit),
]:
    for _name in _names:
        COMMANDS[_name] = _method

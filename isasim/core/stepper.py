"""Step-through: run a program one instruction at a time and show what each one changed.

Commands (interactive at the ``(isasim)`` prompt, or scripted with ``--commands
"s 3; p tmm0 int32; c"`` or a file; LOC and WHAT are the ISA's locations, which
``help`` lists after these):

    s [N], step [N]      execute N instructions (default 1), showing each change
    c, continue          run to a breakpoint, a watch's change, a fault or the
                         end (Ctrl-C stops it)
    back [N]             go back N steps (default 1), replayed from a checkpoint
    goto N               go to the state after N steps (forwards or backwards)
    b LOC, break LOC     stop before instruction LOC: an index (3 or #3), a
                         label, or an address (0x...)
    w LOC [TYPE], watch  stop when LOC changes: a register, an array or an
                         element of one (its --show type unless TYPE), or
                         memory 0xADDR[:N] (its init region's type unless TYPE)
    d N, delete N        delete breakpoint or watch number N (see info)
    p WHAT [TYPE] [hex]  print a register, an array (TYPE int32, bf16, fp32
                         ... [hex] [all]), a named init region (C [hex]
                         [all]: all prints every row), or memory (0xADDR [N])
    l, list              the program, with the current position
    i, info              breakpoints and watches
    h, help              this text
    q, quit              leave

A fault stops the stepper on the faulting instruction with the rule it broke.
Ctrl-C during ``c`` or a long ``s N`` stops at the next instruction boundary and
returns to the prompt, as in gdb.

A scripted session (``--commands``, ``--commands-file``) stops at the first
command that fails, as gdb stops a command file at its first error, and the
command exits with status 2 naming that command: later commands usually depend
on it (a ``c`` after a mistyped ``b`` would run to the end).  Stepping past the
end of the program is not a failure; it says that the program has ended.

Stepping backwards is a replay, never a guess.  No step records are kept;
instead the stepper keeps checkpoints, copies of the whole machine state (memory
included), one every ``interval`` steps, and ``back``/``goto`` restore the nearest
checkpoint before the target and replay from there.  The bound: at most
MAX_CHECKPOINTS (64) checkpoints and at most CHECKPOINT_BUDGET (256 MiB) of them
in all, whatever the number of steps; ``interval`` starts at
FIRST_CHECKPOINT_INTERVAL (1,000) steps and doubles, dropping every other
checkpoint, whenever they fill up, so a back-step replays fewer than
max(1,000, 2 x steps / cap) steps, cap being 64 unless 64 copies of the memory
would pass the budget (then as many as fit, at least 2).  With
``--against silicon`` every step also runs on the CPU, and the stepper stops at
the first instruction where the two states differ, showing both values; a CPU
cannot be restored to a checkpoint, so there stepping back replays from the
start.
"""

from __future__ import annotations

import re
import shlex
import signal
from contextlib import contextmanager
from dataclasses import dataclass

import numpy as np
from rich.console import Console
from rich.text import Text

from .diff import compare
from .errors import IsasimError
from .isa import get_isa
from .machine import DEFAULT_STEP_LIMIT, Checkpoint, Machine, StepRecord
from .program import Program
from .render import _REGION_DTYPES, console, element_text, layout_width, markup_safe, region_grid
from .trace import Init, clipped, printable

PROMPT = "(isasim) "

# The bound on what stepping backwards keeps (see the module docstring).
FIRST_CHECKPOINT_INTERVAL = 1_000
MAX_CHECKPOINTS = 64
CHECKPOINT_BUDGET = 256 << 20  # bytes for all checkpoints together

ELEMENT_TYPE_NAMES = tuple(_REGION_DTYPES)  # the element types an init region, an array view or a watch can have
PRINT_OPTIONS = ("hex", "all")
WATCH_ELEMENTS_SHOWN = 8  # a watched range of more elements shows its first ones and a count


_NUMBER = re.compile(r"[0-9]{1,20}|0[xX][0-9a-fA-F]{1,16}")  # ASCII only: int() also reads "٣" and "1_0"


def read_number(text: str) -> int | None:
    """A count, index or size as the stepper's commands take it: decimal or 0x hexadecimal, at most 64 bits'
    worth of digits (None for anything else, so a 5,000-digit word never reaches int())."""
    return int(text, 0 if text[:2].lower() == "0x" else 10) if _NUMBER.fullmatch(text) else None


def locate_instruction(program, spec: str):
    """The instruction of ``program`` that ``spec`` names: an index (3 or #3), a label, or the address it
    starts at (0x...), as ``break`` and ``explain --at`` take them; a ValueError says what is wrong."""
    text = spec.lstrip("#")
    if text.isascii() and text.isdigit():
        index = read_number(text)
        if index is None:
            raise ValueError(f"there is no instruction #{clipped(text, 40)} (the program has "
                             f"{len(program.instructions)})")
        if index >= len(program.instructions):
            raise ValueError(f"there is no instruction #{index} (the program has {len(program.instructions)})")
        return program.instructions[index]
    if spec in program.labels:
        address = program.labels[spec]
    elif re.fullmatch(r"0[xX][0-9a-fA-F]+", spec):
        address = int(spec, 16)
    else:
        raise ValueError(f"'{clipped(spec, 60)}' is not an instruction index, label or address")
    ins = program.at(address)
    if ins is None:
        raise ValueError(f"no instruction starts at {address:#x}")
    return ins


QUOTED_CHARS = 100  # how much of a failed command its error quotes (the reason: four times as much)


class CommandError(IsasimError):
    """A stepper command that cannot be carried out; an interactive session goes on."""


@dataclass
class Watch:
    spec: str
    value: object
    element: str | None = None  # how to show the value (None: the location's own type)


class Stepper:
    def __init__(self, isa_name: str, config: dict, program: Program, init: Init, *, out: Console,
                 max_steps: int = DEFAULT_STEP_LIMIT, against: str | None = None, backend: str = "sim",
                 element_types: dict[str, str] | None = None, hex_values: bool = False):
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
        self.position = 0  # how many steps have run: the state shown is the one after them
        self.divergence = None
        self.error: str | None = None  # why the last command failed, or None
        self.interrupted = False  # set by Ctrl-C while steps run; checked between steps
        self._reset()
        # step -> (the machine after that many steps, what was left undefined then); 0 is the loaded program
        self.checkpoints: dict[int, tuple[Checkpoint, object]] = {}
        self.checkpoint_interval = FIRST_CHECKPOINT_INTERVAL
        self.checkpoint_cap = MAX_CHECKPOINTS
        if self.other is None:
            first = self.machine.checkpoint()
            self.checkpoint_cap = max(2, min(MAX_CHECKPOINTS, CHECKPOINT_BUDGET // max(1, first.size)))
            self.checkpoints[0] = (first, None)

    # ---- the machine(s) -------------------------------------------------------------------
    def _reset(self) -> None:
        self.machine = Machine(self.isa_name, self.config)
        self.machine.load_init(self.program, self.init)
        self.position = 0
        self.divergence = None
        self.undefined = None  # what the executed instructions left undefined (the ISA's token)
        self.other = None
        if self.against or self.backend != "sim":
            from .backends import get_backend, lockstep

            name = self.against or self.backend
            oracle = get_backend(name, self.isa_name, self.program)
            self.other = lockstep(oracle, self.isa_name, self.config, self.program, self.init,
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
        return layout_width(self.out)

    def _one_step(self) -> StepRecord | None:
        machine = self.machine
        if machine.finished or machine.state.pc == self.program.end:
            self.out.print("the program has ended" + (f" with {machine.fault.kind}" if machine.fault else ""))
            return None
        if self.divergence is not None:
            self.out.print("stopped at a divergence; use 'back' to look at earlier steps")
            return None
        if self.position >= self.max_steps:
            raise CommandError(f"the step limit of {self.max_steps} is reached")
        record = machine.step()
        self.position += 1
        self.undefined = self.isa.undefined_after(self.undefined, record.instruction)
        if self.other is not None:
            self._step_other(record)
        elif self.position % self.checkpoint_interval == 0 and self.position not in self.checkpoints:
            self._keep_checkpoint()
        return record

    def _keep_checkpoint(self) -> None:
        """Keep the machine as it is now; when there are more than the cap, keep every other one and
        take them twice as far apart from now on, so their number never passes the cap."""
        self.checkpoints[self.position] = (self.machine.checkpoint(), self.undefined)
        if len(self.checkpoints) > self.checkpoint_cap:
            self.checkpoint_interval *= 2
            self.checkpoints = {step: kept for step, kept in self.checkpoints.items()
                                if step % self.checkpoint_interval == 0}

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
        fresh.load_init(self.program, self.init)
        return fresh.state

    def _rewind(self, target: int) -> int:
        """Put the machine at the latest kept point at or before step ``target``; returns that step."""
        if self.other is not None:  # a CPU cannot be put back: start both again
            self._reset()
            return 0
        start = max(step for step in self.checkpoints if step <= target)
        checkpoint, self.undefined = self.checkpoints[start]
        self.machine.restore(checkpoint)
        self.position = start
        self.divergence = None
        return start

    @contextmanager
    def _ctrl_c_stops(self):
        """While steps run, Ctrl-C (SIGINT) asks to stop after the current instruction, as gdb's does,
        instead of raising KeyboardInterrupt in the middle of one."""
        self.interrupted = False

        def stop_soon(_signum, _frame):
            self.interrupted = True

        try:
            previous = signal.signal(signal.SIGINT, stop_soon)
        except ValueError:  # not the main thread: a KeyboardInterrupt is caught in execute instead
            previous = None
        try:
            yield
        finally:
            if previous is not None:
                signal.signal(signal.SIGINT, previous)

    def _report_interrupt(self) -> None:
        self.interrupted = False
        self.out.print(Text(f"interrupted at step {self.position}", style="bold magenta"))

    # ---- showing ---------------------------------------------------------------------------
    def show_position(self) -> None:
        ins = self.machine.current_instruction()
        if self.machine.fault is not None:
            return
        if ins is None:
            self.out.print(Text(f"[{self.position} steps] the program has ended", style="bold"))
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
    def run_script(self, text: str) -> str | None:
        """Run the commands in order, stopping at the first that fails (see the module docstring);
        returns what failed, or None when every command ran."""
        commands = [command.strip() for command in re.split(r"[;\n]", text) if command.strip()]
        for number, command in enumerate(commands, start=1):
            going_on = self.execute(command)
            if self.error is not None:
                left = len(commands) - number
                return (f"command {number} of {len(commands)} ({clipped(command, QUOTED_CHARS)!r}) failed: "
                        f"{self.error}"
                        + (f" ({left} later command{'s' if left != 1 else ''} not run)" if left else ""))
            if not going_on:
                break
        return None

    def _fail(self, message: str) -> bool:
        # clipped: a reason may quote what the user typed, which may be 5,000 characters long
        self.error = clipped(printable(message), 4 * QUOTED_CHARS)
        self.out.print(Text(f"error: {message}"))  # Text: the message may quote the user's brackets
        return True

    def execute(self, line: str) -> bool:
        """Run one command; False means quit.  A command that fails prints why and sets ``error``."""
        self.error = None
        try:
            words = _rejoin_brackets(shlex.split(line.strip()))
        except ValueError as error:
            return self._fail(str(error))
        if not words:
            return True
        name, args = words[0].lower(), words[1:]
        handler = COMMANDS.get(name)
        if handler is None:
            return self._fail(f"unknown command '{name}' (type 'help')")
        try:
            return handler(self, args) is not False
        except IsasimError as error:  # a CommandError, or an ISA's view refusing what it was asked to show
            return self._fail(str(error))
        except KeyboardInterrupt:
            # Ctrl-C that the SIGINT handler did not turn into a request (it could not be installed, or it came
            # outside a run of steps) may have stopped an instruction half-way: go back to the last whole step.
            self._replay_to(self.position, rewind=True)
            self._report_interrupt()
            self.show_position()
            return True

    def _count(self, args: list[str], default: int = 1) -> int:
        if not args:
            return default
        n = read_number(args[0])
        if n is None:
            negative = args[0].startswith("-") and read_number(args[0][1:]) is not None
            raise CommandError("a count cannot be negative" if negative else
                               f"'{clipped(args[0], 40)}' is not a number (decimal, or hexadecimal with 0x)")
        return n

    def cmd_step(self, args):
        count = self._count(args)
        with self._ctrl_c_stops():
            for _ in range(count):
                record = self._one_step()
                if record is None:
                    break
                self.show_record(record)
                if record.fault is not None or self.divergence is not None:
                    break
                if self.interrupted:
                    self._report_interrupt()
                    break
        self.show_position()

    def cmd_continue(self, args):
        first = True
        ran = 0
        with self._ctrl_c_stops():
            while True:
                if self.interrupted:
                    self._report_interrupt()
                    break
                ins = self.machine.current_instruction()
                if ins is not None and not first:
                    hit = next((n for n, (index, _text) in enumerate(self.breakpoints, 1) if index == ins.index),
                               None)
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
                changed = [(w, old, new) for w, old in before if (new := self._watch_value(w.spec)) != old]
                if record.fault is not None or self.divergence is not None or changed:
                    self.show_record(record)
                    for w, old, new in changed:
                        w.value = new
                        self.out.print(Text(f"watch {w.spec} changed: {self._watch_text(w, old)} -> "
                                            f"{self._watch_text(w, new)}", style="bold magenta"))
                    break
        self.out.print(Text(f"({ran} instruction{'s' if ran != 1 else ''} run)", style="dim"))
        self.show_position()

    def cmd_back(self, args):
        count = self._count(args)
        if count > self.position:
            raise CommandError(f"there are only {self.position} steps to go back over")
        self._goto(self.position - count)

    def cmd_goto(self, args):
        if not args:
            raise CommandError("goto needs a step number")
        self._goto(self._count(args))

    def _replay_to(self, target: int, *, rewind: bool = False) -> int:
        """Put the machine at step ``target`` (or the end, if the program ends first), replaying forwards
        from where it is or (going back, or with ``rewind``) from the latest checkpoint at or before it;
        returns the step replayed from."""
        start = self.position if target >= self.position and not rewind else self._rewind(target)
        quiet, self.out.quiet = self.out.quiet, True  # replayed steps were shown when they first ran
        try:
            while self.position < target and not self.interrupted and self._one_step() is not None:
                pass
        finally:
            self.out.quiet = quiet
        return start

    def _goto(self, target: int) -> None:
        going_back = target < self.position
        with self._ctrl_c_stops():
            start = self._replay_to(target)
        if self.interrupted:
            self._report_interrupt()
        if not going_back:
            self.out.print(Text(f"at step {self.position}", style="dim"))
        else:
            origin = "the start" if start == 0 else f"the checkpoint at step {start}"
            self.out.print(Text(f"at step {self.position} (replayed from {origin})", style="dim"))
        self.show_position()

    def resolve(self, spec: str) -> int:
        try:
            return locate_instruction(self.program, spec).index
        except ValueError as error:
            raise CommandError(str(error)) from None

    def cmd_break(self, args):
        if not args:
            raise CommandError("break needs an instruction index, label or address")
        index = self.resolve(args[0])
        self.breakpoints.append((index, args[0]))
        ins = self.program.instructions[index]
        self.out.print(Text(f"breakpoint {len(self.breakpoints)} before #{index} {ins.address:#x} {ins.text}"))

    def _watch_target(self, spec: str) -> tuple[object, str | None]:
        """What watching ``spec`` reads now: (value, its default element type or None), from the ISA (a
        register, an array or an element of one) or from memory (0xADDR[:N], in its init region's type)."""
        target = self.isa.watch_value(self.state, spec, self.element_types)
        if target is not None:
            return target.value, target.element
        memory = self._memory_watch(spec)
        if memory is not None:
            address, size, element = memory
            return self.machine.memory.read(address, size), element
        raise CommandError(f"cannot watch '{spec}': not a register, array, array element or memory address")

    def _watch_value(self, spec: str):
        return self._watch_target(spec)[0]

    def _region_of(self, address: int, size: int):
        """The named init region wholly holding [address, address+size) in whole elements, or None."""
        for view in self.init.views:
            element_size = np.dtype(_REGION_DTYPES[view.element][0]).itemsize
            end = view.address + view.shape[0] * view.shape[1] * element_size
            if view.address <= address and address + size <= end and (address - view.address) % element_size == 0:
                return view, element_size
        return None

    def _memory_watch(self, spec: str) -> tuple[int, int, str | None] | None:
        """0xADDR[:N] as (address, size, the element type of the init region it lies in), or None if
        ``spec`` is not a memory location.  N defaults to one element of that region, else 8 bytes."""
        m = re.fullmatch(r"(0[xX][0-9a-fA-F]+)(?::(\w+))?", spec)
        if not m:
            return None
        address = int(m.group(1), 16)
        if m.group(2) is None:
            found = self._region_of(address, 1)
            size = found[1] if found else 8
        else:
            size = read_number(m.group(2))
            if size is None:
                raise CommandError(f"'{clipped(m.group(2), 40)}' in '{clipped(spec, 60)}' is not a number of bytes")
            if size < 1:
                raise CommandError(f"cannot watch '{spec}': the size must be at least 1 byte")
        if not self.machine.memory.is_mapped(address, size):
            raise CommandError(f"cannot watch '{spec}': memory {address:#x}..{address + size:#x} is not all mapped")
        found = self._region_of(address, size)
        element = found[0].element if found and size % found[1] == 0 else None
        return address, size, element

    @staticmethod
    def _element_type(words: list[str]) -> str | None:
        """The one element type among ``words`` (None if there is none); any other word is an error."""
        types = [word for word in words if word in ELEMENT_TYPE_NAMES]
        unknown = [word for word in words if word not in ELEMENT_TYPE_NAMES and word not in PRINT_OPTIONS]
        if unknown:
            raise CommandError(f"unknown element type or option '{unknown[0]}' (types: {', '.join(ELEMENT_TYPE_NAMES)};"
                               f" options: {', '.join(PRINT_OPTIONS)})")
        if len(types) > 1:
            raise CommandError(f"give one element type, not {' and '.join(types)}")
        return types[0] if types else None

    def cmd_watch(self, args):
        if not args:
            raise CommandError("watch needs a location")
        spec, rest = args[0], args[1:]
        if any(word in PRINT_OPTIONS for word in rest) or len(rest) > 1:
            raise CommandError("watch takes a location and at most an element type")
        element = self._element_type(rest)
        value, default_element = self._watch_target(spec)
        if isinstance(value, (bytes, bytearray)):
            element = element or default_element
            size = len(value)
        elif element is not None:
            raise CommandError(f"'{spec}' is a register: it is shown as a number, without an element type")
        if element is not None and size % np.dtype(_REGION_DTYPES[element][0]).itemsize:
            raise CommandError(f"{size} bytes are not a whole number of {element} elements")
        watch = Watch(spec, value, element)
        self.watches.append(watch)
        number = len(self.breakpoints) + len(self.watches)
        self.out.print(Text(f"watch {number}: {spec} = {self._watch_text(watch, value)}"))

    def _watch_text(self, watch: Watch, value) -> str:
        """A watched value as its type: a register as hex and decimal, an array element or a memory range
        as its elements (the first WATCH_ELEMENTS_SHOWN of a longer range)."""
        if watch.element is None:
            if isinstance(value, (bytes, bytearray)):
                return _short(value)
            return f"{int(value):#x} ({int(value)})"
        # an element type is only ever set for bytes (cmd_watch refuses one for a register)
        dtype, kind = _REGION_DTYPES[watch.element]
        elements = np.frombuffer(bytes(value), dtype=dtype)
        digits = 2 * elements.dtype.itemsize if self.hex_values else None
        texts = [element_text(bits, kind, hex_digits=digits) for bits in elements[:WATCH_ELEMENTS_SHOWN]]
        if len(elements) == 1:
            return texts[0]
        more = f", ... ({len(elements)} {watch.element})" if len(elements) > WATCH_ELEMENTS_SHOWN else ""
        return "[" + ", ".join(texts) + more + "]"

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
            self.out.print(Text(f"{i}: break before #{index} ({text}): {self.program.instructions[index].text}"))
        for i, w in enumerate(self.watches, start=len(self.breakpoints) + 1):
            self.out.print(Text(f"{i}: watch {w.spec} = {self._watch_text(w, self._watch_value(w.spec))}"))

    def cmd_print(self, args):
        if not args:
            raise CommandError("print what? (a register, an array [type] [hex], a region name, or 0xADDR [N]; "
                               "'help' lists this ISA's locations)")
        what, rest = args[0], args[1:]
        if re.fullmatch(r"0[xX][0-9a-fA-F]+", what):
            if len(rest) > 1:
                raise CommandError(f"print {what} takes at most a byte count, not '{' '.join(rest)}'")
        else:
            element = self._element_type(rest)  # an unknown type is an error, never a silent default
            region = next((v for v in self.init.views if v.name == what), None)
            if region is not None and element not in (None, region.element):
                raise CommandError(f"{what} holds {region.element} elements; it is printed as {region.element}")
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

    def interact(self) -> None:
        """Read commands at the prompt until q or end of input (line editing where readline exists)."""
        try:
            import readline  # noqa: F401  (line editing and history at the prompt)
        except ImportError:
            pass
        while True:
            try:
                line = input(PROMPT)
            except EOFError:
                self.out.print()
                break
            except KeyboardInterrupt:  # Ctrl-C at the prompt drops the line typed so far, as gdb does
                self.out.print()
                continue
            if not self.execute(line):
                break

    def cmd_list(self, args):
        current = self.machine.current_instruction()
        for ins in self.program.instructions:
            label = self.program.label_at(ins.address)
            if label:
                self.out.print(Text(f"{label}:"))
            mark = "=>" if current is not None and ins.index == current.index else "  "
            stop = "*" if any(index == ins.index for index, _ in self.breakpoints) else " "
            style = "bold cyan" if mark == "=>" else ""
            self.out.print(Text(f"{mark}{stop}#{ins.index:<3} {ins.address:#x}  {ins.text}", style=style))

    def cmd_help(self, args):
        # the docstring's command list: the paragraph naming the commands, then one line per command
        self.out.print(Text("\n".join(__doc__.split("\n\n")[1:3]).strip("\n")))
        locations = self.isa.stepper_locations
        if locations:
            self.out.print(Text(f"\n{self.isa.name} locations:\n{locations}"))

    def cmd_quit(self, args):
        return False


def _rejoin_brackets(words: list[str]) -> list[str]:
    """The words shlex split inside brackets put back together: a location such as
    ``za.s[w8, 0, vgx4]`` is one argument, spaces and all."""
    joined: list[str] = []
    for word in words:
        if joined and joined[-1].count("[") > joined[-1].count("]"):
            joined[-1] += " " + word
        else:
            joined.append(word)
    return joined


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


# ---- a scripted session, on the terminal or recorded as a picture ---------------------------------------


def session_console(*, color: bool, svg: str | None, svg_width: int) -> Console:
    """The console a stepper session prints on: the command's own, or, when the session is saved as an
    SVG picture, a recording one in colour at the picture's width."""
    if svg is None:
        return console(color=color)
    out = console(color=True, width=svg_width)
    out.record = True
    return out


def run_scripted_session(stepper: Stepper, script: str, *, svg: str | None, title: str, force: bool) -> None:
    """Run ``script``'s commands, stopping at the first that fails as gdb's command files do; with ``svg``,
    the script is echoed into the session and the session so far is saved as a picture (also when a command
    failed).  A failed command is a CommandError (exit 2) naming it."""
    if svg is not None:
        stepper.out.print(f"[dim](isasim) {markup_safe(script)}[/dim]")
    failed = stepper.run_script(script)
    if svg is not None:
        from .output import write_output

        write_output(svg, stepper.out.export_svg(title=title), force=force)
    if failed is not None:
        raise CommandError(failed)


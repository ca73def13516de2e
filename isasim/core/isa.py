"""The plug-in interface every ISA package implements, and their registry.

An ISA package (``isasim.x86_amx``, later ``isasim.arm_sme`` and
``isasim.ascend_cube``) provides one object with the methods of :class:`Isa`.
The core engine (machine, traces, backends, CLI) only talks to that object, so a
reader who knows one ISA package finds their way in the others.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Protocol

from .errors import ConfigError
from .journal import Journal
from .program import Instruction, Program


@dataclass(frozen=True)
class ArraySpec:
    """One array of an ISA's state that a trace can seed and expect, by name.

    Registers are numbers (``regs``); arrays are bytes: x86_amx's tiles tmm0-tmm7 and
    the 64-byte TILECFG image, arm_sme's ZA, ZT0, Z0-Z31 and P0-P15, the Ascend cube's
    L1, L0A, L0B, L0C and bias table (buffers that are not addressable memory).

    name:     the name in traces and commands, lower case (``"tmm0"``, ``"za"``).
    size:     its bytes, or None where the state decides (a tile holds its configured
              rows x colsb bytes; an absent array is one the state does not hold now).
    elements: the element types it can be viewed as (``--show``, ``p``, ``w``), the
              first being its default view.
    row_bytes: how many bytes make one row when it is shown as a grid (None: one row).
    """

    name: str
    size: int | None
    elements: tuple[str, ...] = ("uint8",)
    row_bytes: int | None = None


@dataclass(frozen=True)
class ConfigOption:
    """A command-line option that sets one key of an ISA's configuration (x86_amx: ``--cpu``)."""

    flag: str  # "--cpu"
    key: str  # "cpu"
    help: str
    metavar: str | None = None


@dataclass(frozen=True)
class WatchTarget:
    """What a stepper watch on one location reads: a register's number, or an array's bytes."""

    value: int | bytes
    element: str | None = None  # the default element type of bytes (None: shown as bytes)


class State(Protocol):
    """What the core needs of an ISA's architectural state."""

    pc: int

    def read_register(self, name: str) -> int: ...
    def write_register(self, name: str, value: int) -> None: ...
    def register_names(self) -> list[str]: ...


class Isa(Protocol):
    name: str
    title: str
    code_base: int  # where assembled code is placed unless told otherwise
    config_options: tuple[ConfigOption, ...]  # the CLI options that set configuration keys
    default_oracle: str | None  # the backend `isasim diff` compares with by default (x86_amx: "silicon")
    # the expect keys an isasim-trace/1 file kept this ISA's arrays under (x86_amx: "tiles", "tilecfg");
    # optional: an ISA newer than version 1 has none
    legacy_array_keys: tuple[str, ...]

    def configure(self, config: dict | None) -> dict: ...
    def new_state(self, config: dict, journal: Journal) -> State: ...
    def new_context(self, state: State, memory: Any) -> Any:
        """What the ISA's semantics functions receive: state, memory and configuration together."""
        ...

    def assemble(self, text: str, source: str = "<input>", base: int | None = None) -> Program: ...
    def disassemble(self, code: bytes, base: int | None = None) -> Program: ...
    def arrays(self, config: dict) -> list[ArraySpec]:
        """Every array a trace can seed and expect under ``config`` (see ArraySpec)."""
        ...

    def observe(self, state: State) -> dict:
        """The state a trace can check: ``{"regs": {name: int}, "arrays": {name: bytes}}``, the arrays
        being those the state holds now (a subset of ``arrays``)."""
        ...

    def seed_arrays(self, state: State, arrays: dict[str, bytes]) -> None:
        """Set arrays from a trace's ``init.arrays`` before the run, in whatever order the ISA needs (x86:
        TILECFG before the tiles it shapes).  Raises ConfigError naming an unknown array or a wrong size."""
        ...

    def render_state(self, state: State, program: Program | None = None, **options: Any) -> Any:
        """A rich renderable of the whole state (tiles as grids, ...)."""
        ...

    def undefined_after(self, undefined: Any, instruction: Instruction) -> Any:
        """What the architecture leaves undefined once ``instruction`` has run (an opaque token, None at first)."""
        ...

    def comparable(self, observed: dict, undefined: Any) -> dict:
        """``observed`` without what ``undefined`` says the architecture leaves undefined."""
        ...

    def translate(self, context: Any, instruction: Instruction) -> Callable[[], int | None]:
        """Bind one decoded instruction to a machine's context, once.

        The returned function executes the instruction and returns the next pc, or
        None when the program ends; it raises the ISA's Fault when the instruction
        faults.  The machine caches it by address (like Spike's and QEMU's decode
        caches), so whatever depends only on the instruction and the machine's fixed
        configuration (operand fields, register numbers, the next address) is worked
        out here rather than on every execution.
        """
        ...

    def parse_show(self, item: str) -> tuple[str, str]:
        """One ``--show`` view ``ARRAY:TYPE`` (x86_amx: ``tmm0:int32``) as (array name, element type).

        Raises ValueError whose text says what a view looks like, for the CLI to show.
        """
        ...

    # ---- step-through (core/stepper.py) -------------------------------------------------
    stepper_locations: str  # the stepper's help on this ISA's p/w locations, one per line

    def render_step(self, record: Any, state: State, program: Program | None = None, **options: Any) -> Any:
        """A rich renderable of what one step changed (its journal writes), for ``isasim step``."""
        ...

    def render_item(self, state: State, what: str, args: list[str], program: Program | None = None,
                    **options: Any) -> Any:
        """The renderable for the stepper's ``p WHAT ARGS``, or None when ``what`` names nothing of this ISA
        (the stepper then tries memory and named init regions)."""
        ...

    def watch_value(self, state: State, what: str, element_types: dict[str, str]) -> WatchTarget | None:
        """The current value of a watched location (a register, an array, an element of one), or None
        when ``what`` is not a location of this ISA.  ``element_types`` are the user's --show choices."""
        ...

    # Optional hooks: an ISA that lacks the feature leaves them out and the CLI says so.
    # Each imports its module on first call, so loading an ISA stays cheap.

    def array_divergence(self, name: str, a: bytes, b: bytes, observed: dict) -> tuple[str, str, bytes, bytes]:
        """Where two different values of array ``name`` first differ, in the ISA's words: (location, detail,
        the part of a and of b a reader should see), e.g. ("tmm0[3]", "first difference in dword 5: ...",
        row 3 of a, row 3 of b).  Without it the core names the first differing byte."""
        ...

    def state_from_observed(self, observed: dict, previous: State, memory: Any, init: Any) -> tuple[State, list]:
        """A state holding what another backend (silicon, QEMU) observed, and the journal writes that lead
        to it from ``previous``, so the stepper and ``record --steps`` can show another backend's steps."""
        ...

    def config_title(self, config: dict) -> str:
        """What a run is on, for a heading ("emerald-rapids", "SVL 512"); without it, the ISA's name."""
        ...

    def source_line(self, instruction: Instruction) -> str:
        """The assembly line that assembles back to ``instruction`` (a trace's program line); without it,
        ``instruction.text``.  x86 writes an invalid encoding as a ``.byte`` directive."""
        ...

    def check_program(self, program: Program, config: dict) -> None:
        """Refuse, with an IsasimError naming the source line, a program the configuration rules out before it
        runs (ascend_cube: a mode or type pair the chip lacks); the command line calls it on what it loads."""
        ...

    def fault_kind(self, text: str) -> str:
        """A fault kind as a trace may spell it, in this ISA's canonical spelling (x86: ``UD`` -> ``#UD``)."""
        ...

    def explainer(self) -> Any:
        """The module behind ``isasim explain`` and ``isasim docs``: ``explain(instruction, code, options)``,
        ``reference_pages()``, and the ``OPTIONS``, ``INIT_HELP`` and ``SCREENSHOTS`` only this ISA has
        (the protocol :class:`isasim.core.explain.Explainer`)."""
        ...

    fuzz_subsets: tuple[str, ...]  # with run_fuzz: the subsets `isasim fuzz --only` may name, in seed order

    def run_fuzz(self, cases: int, seed: int, **options: Any) -> Any:
        """Random programs run on the simulator and another backend; returns a summary (see ``isasim fuzz``).

        Raises ImportError when a package the fuzzer needs (hypothesis) is missing.
        """
        ...

    kernel_names: tuple[str, ...]  # the kernels build_kernel knows (with build_kernel)

    def build_kernel(self, name: str, count: int | None = None, K: int | None = None) -> Any:
        """A ready-made kernel by name, with ``trace()``, ``description``, ``lines`` and ``macs``."""
        ...

    def listing(self, code: bytes, base: int) -> Any:
        """Yield (address, bytes, text, note, decoded) per instruction of ``code``, going on past
        undecodable bytes (``decoded`` False) as objdump does."""
        ...


def has_hook(isa: Isa, hook: str) -> bool:
    """Whether ``isa`` provides the optional ``hook`` (an ISA lacking a feature leaves it out)."""
    return callable(getattr(isa, hook, None))


def array_spec(isa: Isa, config: dict, name: str) -> ArraySpec | None:
    """The declaration of array ``name`` of ``isa`` under ``config``, or None."""
    return next((spec for spec in isa.arrays(config) if spec.name == name), None)


def first_byte_difference(a: bytes | None, b: bytes | None) -> int | None:
    """The offset of the first byte where ``a`` and ``b`` differ (a length difference counts), or None."""
    if a == b:
        return None
    a, b = a or b"", b or b""
    return next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))


def registered_isas() -> Iterable[str]:
    """The names of every ISA the registry knows."""
    return iter(KNOWN_ISAS)


# name -> module that defines ``ISA``; imported on first use so the core never
# depends on an ISA package.
KNOWN_ISAS = {
    "x86_amx": "isasim.x86_amx",
    "arm_sme": "isasim.arm_sme",
    "ascend_cube": "isasim.ascend_cube",
}
DEFAULT_ISA = next(iter(KNOWN_ISAS))  # what the CLI runs when no --isa (or trace) says otherwise


def get_isa(name: str) -> Isa:
    module = KNOWN_ISAS.get(name)
    if module is None:
        raise ConfigError(f"unknown ISA '{name}' (known: {', '.join(sorted(KNOWN_ISAS))})")
    return importlib.import_module(module).ISA

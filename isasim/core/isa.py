"""The plug-in interface every ISA package implements, and their registry.

An ISA package (``isasim.x86_amx``, later ``isasim.arm_sme`` and
``isasim.ascend_cube``) provides one object with the methods of :class:`Isa`.
The core engine (machine, traces, backends, CLI) only talks to that object, so a
reader who knows one ISA package finds their way in the others.
"""

from __future__ import annotations

import importlib
from typing import Any, Callable, Protocol

from .errors import ConfigError
from .journal import Journal
from .program import Instruction, Program


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

    def configure(self, config: dict | None) -> dict: ...
    def new_state(self, config: dict, journal: Journal) -> State: ...
    def new_context(self, state: State, memory: Any) -> Any:
        """What the ISA's semantics functions receive: state, memory and configuration together."""
        ...

    def assemble(self, text: str, source: str = "<input>", base: int | None = None) -> Program: ...
    def disassemble(self, code: bytes, base: int | None = None) -> Program: ...
    def observe(self, state: State) -> dict:
        """The state a trace can check, in trace terms: {"regs": {...}, ...}."""
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

    def parse_show(self, item: str) -> tuple[int, str]:
        """One ``--show`` view (x86_amx: ``tmmN:TYPE``) as (register number, element type).

        Raises ValueError whose text says what a view looks like, for the CLI to show.
        """
        ...

    # Optional hooks: an ISA that lacks the feature leaves them out and the CLI says so.
    # Each imports its module on first call, so loading an ISA stays cheap.

    def explainer(self) -> Any:
        """The module behind ``isasim explain`` and ``isasim docs``: ``explain(instruction, code, options)``
        and ``reference_pages()`` (see :mod:`isasim.core.explain`)."""
        ...

    def run_fuzz(self, cases: int, seed: int, **options: Any) -> Any:
        """Random programs run on the simulator and another backend; returns a summary (see ``isasim fuzz``).

        Raises ImportError when a package the fuzzer needs (hypothesis) is missing.
        """
        ...

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


# name -> module that defines ``ISA``; imported on first use so the core never
# depends on an ISA package.
KNOWN_ISAS = {
    "x86_amx": "isasim.x86_amx",
}


def get_isa(name: str) -> Isa:
    module = KNOWN_ISAS.get(name)
    if module is None:
        raise ConfigError(f"unknown ISA '{name}' (known: {', '.join(sorted(KNOWN_ISAS))})")
    return importlib.import_module(module).ISA

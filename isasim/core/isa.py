"""The plug-in interface every ISA package implements, and their registry.

An ISA package (``isasim.x86_amx``, ``isasim.arm_sme``, ``isasim.ascend_cube``) provides one
object, ``ISA``, an instance of a subclass of :class:`Isa`.
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
class PageView:
    """A derived view of one of the trace page's panels: a matrix whose cells are elements of the panel's bytes
    (arm_sme: the ZA tile za1.s; ascend_cube: L0C's Nz fractals read as the Mmad's M x N matrix).

    name:    what the page calls it, as the stepper's ``p`` names it ("za1.s", "l0c.nd[30x40]"); unique in a run.
    panel:   the panel it reads: an array's name as ``Isa.arrays`` gives it ("za", "l0c").
    element: the element type its cells are read as by default (its size is each cell's byte count).
    offsets: rows x cols byte offsets into the panel, each the first byte of one element (a list of lists,
             or anything with ``tolist()`` giving one).
    note:    one line on where the layout comes from, shown under the view's title.
    show:    open when the page opens (a view the program names), else closed until the reader opens it.
    """

    name: str
    panel: str
    element: str
    offsets: Any
    note: str = ""
    show: bool = False
    fields: tuple["PageField", ...] = ()


@dataclass(frozen=True)
class PageField:
    """One named bit field of a PageView's cells, which the page can show decoded ("fields" in the view's type
    list) beside the plain element types (ascend_cube: the fixpipe buffer's quant words as M1, N, offset, sign).

    name:      its name in the architecture's tables ("M1", "offset").
    first_bit: the field's lowest bit in the cell, counting from bit 0 of the little-endian element.
    width:     its bits.
    kind:      "unsigned"; "signed" (two's complement); or "float_top": the field is the top ``width`` bits
               of an IEEE binary32 (sign, exponent, the mantissa's top bits; the rest zero), shown as that float.
    add:       added to an integer field's value before it is shown (a shift whose code 0 means 1: add=1).
    note:      what it means, one line (the page shows it as the field's tooltip).
    """

    name: str
    first_bit: int
    width: int
    kind: str = "unsigned"
    add: int = 0
    note: str = ""


@dataclass(frozen=True)
class PageOutline:
    """Bytes of one of the page's arrays that an instruction addresses as one operand, for the page to outline
    while that step is shown (arm_sme: the ZA vector group of ``za.s[w8, 0, vgx4]``; x86_amx: the tiles a TMUL
    reads).  Given by ``Isa.page_outlines`` from the state before the step.

    location: the array's name as ``Isa.arrays`` gives it ("za", "tmm1", "l0a").
    spans:    the operand's bytes as [start, end) byte ranges of the array, in the operand's order.
    label:    what the operand is, in the instruction's own terms ("ZA.S[w8, 0, VGx4]: ZA vectors 0, 4, 8, 12").
    role:     "read", "written" or "read and written".
    """

    location: str
    spans: tuple[tuple[int, int], ...]
    label: str
    role: str = "read"


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


# What an instruction becomes on the way to running (the execute contract, one for every ISA):
#   Isa.prepare(instruction) -> bind        once per instruction of a program, whatever the machine: the
#                                           work that depends on the instruction alone (operand lookups)
#   bind(context) -> run                    once per machine: the checks its fixed configuration decides
#                                           (a feature the CPU model lacks, an operation the chip lacks)
#   run() -> the next pc, or None           every execution; raises the ISA's Fault when it faults
# A form's ``prepare`` makes the bind of its instructions.  The decoded program (each instruction's form
# id and resolved operands) is plain data, so an engine that compiles a program's run loop can take it
# instead, form by form, and fall back to this contract where it has no compiled body.
Run = Callable[[], "int | None"]
Bind = Callable[[Any], Run]


def raising(make_fault: Callable[[], Exception]) -> Run:
    """A run that raises a new fault each time (a fault records where it happened, so none is shared)."""

    def run():
        raise make_fault()

    return run


class Isa:
    """The plug-in interface every ISA package implements: its ``ISA`` object is an instance of a subclass.

    The methods without a default raise NotImplementedError; the rest have the default an ISA without that
    feature wants (no fuzzer, no kernels, no object files, no explainer, nothing left undefined ...), so the
    core and the command line call them rather than probing for them.
    """

    name: str = ""
    title: str = ""
    code_base: int = 0  # where assembled code is placed unless told otherwise
    config_options: tuple[ConfigOption, ...] = ()  # the CLI options that set configuration keys
    default_oracle: str | None = None  # the backend `isasim diff` compares with by default (x86_amx: "silicon")
    # the expect keys an isasim-trace/1 file kept this ISA's arrays under (x86_amx: "tiles", "tilecfg")
    legacy_array_keys: tuple[str, ...] = ()
    pc_register: str = "pc"  # the program counter's register name, which observe leaves out (x86: "rip")
    stepper_locations: str = ""  # the stepper's help on this ISA's p/w locations, one per line
    kernel_names: tuple[str, ...] = ()  # the kernels build_kernel knows
    fuzz_subsets: tuple[str, ...] = ()  # the subsets `isasim fuzz --only` may name, in seed order (none: no fuzzer)
    elf_machines: tuple[int, ...] = ()  # the ELF e_machine values whose object files load_object reads

    # ---- configuration, state and programs ----------------------------------------------------------
    def configure(self, config: dict | None) -> dict:
        """``config`` checked and completed with its defaults (ConfigError naming what is wrong)."""
        raise NotImplementedError

    def config_title(self, config: dict) -> str:
        """What a run is on, for a heading ("emerald-rapids", "SVL 512")."""
        return self.name

    def new_state(self, config: dict, journal: Journal) -> State:
        raise NotImplementedError

    def new_context(self, state: State, memory: Any) -> Any:
        """What the ISA's semantics functions receive: state, memory and configuration together."""
        raise NotImplementedError

    def assemble(self, text: str, source: str = "<input>", base: int | None = None) -> Program:
        raise NotImplementedError

    def disassemble(self, code: bytes, base: int | None = None) -> Program:
        from .program import NoEncodingError

        raise NoEncodingError(f"{self.name} has no binary encoding: its programs are text only")

    def listing(self, code: bytes, base: int) -> Iterable[tuple[int, bytes, str, str, bool]]:
        """Yield (address, bytes, text, note, decoded) per instruction of ``code``, going on past
        undecodable bytes (``decoded`` False) as objdump does."""
        from .program import NoEncodingError

        raise NoEncodingError(f"{self.name} has no binary encoding, so no bytes to list")

    def source_line(self, instruction: Instruction) -> str:
        """The assembly line that assembles back to ``instruction`` (a trace's program line).  x86 writes an
        invalid encoding as a ``.byte`` directive."""
        return instruction.text

    def check_program(self, program: Program, config: dict) -> None:
        """Refuse, with an IsasimError naming the source line, a program the configuration rules out before it
        runs (ascend_cube: a mode or type pair the chip lacks); the command line calls it on what it loads."""

    def load_object(self, path: str, function: str, init: Any) -> tuple[Program, Any]:
        """Function ``function`` of the object file at ``path`` as a program, and ``init`` completed with what
        running it needs (arguments, stack, data).  Only an ISA with ``elf_machines`` has it."""
        raise ConfigError(f"isasim cannot load object files for {self.name}")

    # ---- execution ------------------------------------------------------------------------------------
    def prepare(self, instruction: Instruction) -> Bind:
        """The execute contract's first step (see Bind above): an invalid encoding faults when it runs, any
        other instruction is prepared by its form."""
        if instruction.invalid is not None:
            reason = instruction.invalid
            return lambda context: raising(lambda: self.invalid_encoding(reason))
        return instruction.form.prepare(instruction)

    def compile_program(self, program: Program, config: dict) -> Any:
        """The compiled engine's lowering of ``program`` under ``config`` (a core.compiled.CompiledProgram), for a
        plain run: the instructions it has compiled bodies for run in one compiled loop, the others hand back to
        the Python semantics one by one.  Called once per machine and program; an ISA should cache what depends
        on the program alone.  None (the default, and where numba is missing): every instruction runs in Python."""
        return None

    def invalid_encoding(self, reason: str) -> Exception:
        """The fault an invalid encoding raises when it runs (x86: #UD, Arm: UNDEFINED)."""
        from .faults import Fault

        return Fault("UNDEFINED", reason)

    # ---- what a trace checks ----------------------------------------------------------------------------
    def arrays(self, config: dict) -> list[ArraySpec]:
        """Every array a trace can seed and expect under ``config`` (see ArraySpec)."""
        raise NotImplementedError

    def observe(self, state: State) -> dict:
        """The state a trace can check: ``{"regs": {name: int}, "arrays": {name: bytes}}``: every register but
        the program counter, and the arrays the state holds now (a subset of ``arrays``)."""
        regs = {name: state.read_register(name) for name in state.register_names() if name != self.pc_register}
        return {"regs": regs, "arrays": self.observed_arrays(state)}

    def observed_arrays(self, state: State) -> dict[str, bytes]:
        """The arrays ``observe`` reports, by name."""
        raise NotImplementedError

    def seed_arrays(self, state: State, arrays: dict[str, bytes]) -> None:
        """Set arrays from a trace's ``init.arrays`` before the run, in whatever order the ISA needs (x86:
        TILECFG before the tiles it shapes).  Raises ConfigError naming an unknown array or a wrong size."""
        raise NotImplementedError

    def undefined_after(self, undefined: Any, instruction: Instruction) -> Any:
        """What the architecture leaves undefined once ``instruction`` has run (an opaque token, None at first);
        by default nothing is."""
        return None

    def comparable(self, observed: dict, undefined: Any) -> dict:
        """``observed`` without what ``undefined`` says the architecture leaves undefined."""
        return observed

    def fault_kind(self, text: str) -> str:
        """A fault kind as a trace may spell it, in this ISA's canonical spelling (x86: ``UD`` -> ``#UD``)."""
        return text.strip().upper()

    def array_divergence(self, name: str, a: bytes, b: bytes, observed: dict) -> tuple[str, str, bytes, bytes]:
        """Where two different values of array ``name`` first differ, in the ISA's words: (location, detail,
        the part of a and of b a reader should see), e.g. ("tmm0[3]", "first difference in dword 5: ...",
        row 3 of a, row 3 of b).  By default, the first differing byte."""
        offset = first_byte_difference(a, b)
        detail = (f"first difference at byte {offset}: {a[offset]:#04x} vs {b[offset]:#04x}"
                  if offset < min(len(a), len(b)) else f"{len(a)} bytes vs {len(b)}")
        return name, detail, a, b

    def state_from_observed(self, observed: dict, previous: State, memory: Any, init: Any) -> tuple[State, list]:
        """A state holding what another backend (silicon, QEMU) observed, and the journal writes that lead
        to it from ``previous``, so the stepper and ``record --steps`` can show another backend's steps."""
        raise ConfigError(f"{self.name} cannot show another backend's state step by step")

    # ---- views ------------------------------------------------------------------------------------------
    def parse_show(self, item: str) -> tuple[str, str]:
        """One ``--show`` view ``ARRAY:TYPE`` (x86_amx: ``tmm0:int32``) as (array name, element type).

        Raises ValueError whose text says what a view looks like, for the CLI to show.
        """
        raise NotImplementedError

    def render_state(self, state: State, program: Program | None = None, **options: Any) -> Any:
        """A rich renderable of the whole state (tiles as grids, ...)."""
        raise NotImplementedError

    def render_step(self, record: Any, state: State, program: Program | None = None, **options: Any) -> Any:
        """A rich renderable of what one step changed (its journal writes), for ``isasim step``."""
        raise NotImplementedError

    def render_item(self, state: State, what: str, args: list[str], program: Program | None = None,
                    **options: Any) -> Any:
        """The renderable for the stepper's ``p WHAT ARGS``, or None when ``what`` names nothing of this ISA
        (the stepper then tries memory and named init regions)."""
        raise NotImplementedError

    def watch_value(self, state: State, what: str, element_types: dict[str, str]) -> WatchTarget | None:
        """The current value of a watched location (a register, an array, an element of one), or None
        when ``what`` is not a location of this ISA.  ``element_types`` are the user's --show choices."""
        raise NotImplementedError

    # ---- the parts an ISA may lack (each imports its module on first call, so loading an ISA stays cheap) --
    def explainer(self) -> Any:
        """The module behind ``isasim explain`` and ``isasim docs`` (the protocol
        :class:`isasim.core.explain.Explainer`), or None for an ISA without one."""
        return None

    def run_fuzz(self, cases: int, seed: int, **options: Any) -> Any:
        """Random programs run on the simulator and another backend; returns a summary (see ``isasim fuzz``).
        Only an ISA with ``fuzz_subsets`` has it.  Raises ImportError when a package the fuzzer needs
        (hypothesis) is missing."""
        raise ConfigError(f"{self.name} has no fuzzer yet")

    def build_kernel(self, name: str, *, count: int | None = None, K: int | None = None, M: int | None = None,
                     N: int | None = None, config: dict | None = None) -> Any:
        """A ready-made kernel by name (one of ``kernel_names``), with ``trace()``, ``description``, ``lines``
        and ``macs``; a size the kernel does not take is refused in one line."""
        raise ConfigError(f"{self.name} has no kernels")

    def element_workings(self, instruction: Instruction, before: Any, after: Any) -> list:
        """For the trace viewer: how each element ``instruction`` wrote was computed, as a list of
        core.explain.model.ElementWorking.  ``before`` and ``after`` are core Machines holding the state just
        before and just after the step (only ``after`` may be the caller's own machine; neither may be changed).
        An instruction the ISA gives no element account for: [] (the default)."""
        return []

    def page_views(self, config: dict, program: Program) -> list[PageView]:
        """For the trace viewer: the matrices the architecture sees in this ISA's arrays under ``config``, as
        PageViews the page draws under their panel (arm_sme: ZA's tiles; ascend_cube: L0C as the M x N matrix
        of ``program``'s Mmad).  Their cells follow the panel's bytes step by step.  None: [] (the default)."""
        return []

    def begin_program(self, state: Any, program: Program) -> None:
        """A machine has loaded ``program`` into ``state`` (its initial state set): an ISA whose state depends on
        the whole program sets that up here (ascend_cube: the pipes' queues, flags and race check).  Default:
        nothing."""

    def timeline(self, state: Any) -> dict | None:
        """The run so far as a Chrome trace-event document (``{"traceEvents": [...], ...}``, the JSON Perfetto and
        chrome://tracing open), for ``--timeline FILE``: one track per unit that runs instructions in parallel
        (ascend_cube: its pipes), a box per instruction run, and flow arrows for what orders them (ascend_cube: a
        SetFlag to the WaitFlag it satisfied).  ``state`` is the state after the run (or as far as it went).  An
        ISA that times nothing says what its ``ts`` counts in the document's ``otherData``.  None (the default):
        the ISA runs one instruction stream and has no timeline, and the command line refuses ``--timeline``."""
        return None

    def page_outlines(self, instruction: Instruction, before: Any) -> list[PageOutline]:
        """For the trace viewer: the array bytes ``instruction``'s operands address, as PageOutlines, read from
        ``before`` (the core Machine just before the step; it must not be changed).  The page outlines them
        while it shows that step.  An instruction with no array operand, or an ISA that gives none: []."""
        return []

    def debug_target(self, config: dict) -> Any:
        """The registers a gdb client sees (``isasim gdbserver``): a core.debug_target.DebugTarget for the
        configuration (the CPU model's vector registers, the SVL).  None: no debugger architecture fits."""
        return None

    def register_commands(self, sub: Any, common: Any) -> None:
        """Add the ISA's own subcommands to the command line (ascend_cube: ``isasim qbmm``)."""


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

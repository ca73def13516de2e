"""isasim for teaching: a small API for notebooks (Jupyter, VS Code, marimo) and the Python prompt.

    import isasim

    m = isasim.machine("x86_amx")                     # an ISA and its configuration (cpu=..., svl=..., chip=...)
    m.load(open("int8_block.s").read(), init="int8_block.trace.json")   # a program and its initial state
    s = m.step()                                      # one instruction: s.instruction, s.writes, s.fault
    m.run()                                           # on to the end (or a fault)
    m.view("tmm0", "int32")                           # an array of the ISA's state as a numpy array
    m.view("C")                                       # a named memory region of the init, in its declared type
    isasim.explain("tdpbusd tmm0, tmm1, tmm2", isa="x86_amx")   # how the instruction works, on example data
    t = isasim.load_trace("int8_block.trace.json")    # a trace file; t.machine() runs its program

In a notebook a machine, a step and a trace show the interactive trace viewer of ``isasim show --html``
(``isasim.core.trace_page``) inline, and an explanation shows ``isasim explain --html``'s page.  Everything
here is a thin layer over the simulator's own objects (``core.machine.Machine``, ``core.trace``,
``core.explain``): the numbers a notebook prints are the simulator's.

Bad input (an unknown ISA, assembly that does not assemble, a name that is no view) raises
:class:`isasim.IsasimError`, whose message is one line.
"""

from __future__ import annotations

import html
import re
from pathlib import Path
from typing import Any

import numpy as np

from .core.errors import IsasimError
from .core.isa import get_isa
from .core.machine import DEFAULT_STEP_LIMIT, StepRecord
from .core.machine import Machine as CoreMachine
from .core.numerics import ELEMENT_TYPES
from .core.program import Program
from .core.trace import Init, Trace, load_json, parse_init, read_trace

__all__ = ["Explained", "Machine", "Step", "TraceFile", "explain", "load_trace", "machine"]

# how many steps a notebook's viewer replays at most (the page says what it left out past this)
VIEWER_STEP_LIMIT = 100_000
STEP_LINE = 110  # a step's printed lines are cut to this width (a tile row's write is 260 hex digits)


# ---- the viewer ----------------------------------------------------------------------------------------------


def _viewer_html(build: Any) -> str:
    """The trace viewer as a notebook fragment: ``build(trace_page)`` makes the page model.  Without the
    viewer package (an older install) a note saying so, so a notebook still shows the text."""
    try:
        from .core import trace_page
    except ImportError as error:  # the viewer is part of isasim; only a broken install lacks it
        return f"<p><em>isasim's trace viewer is not available ({html.escape(str(error))})</em></p>"
    return trace_page.fragment_html(build(trace_page))


def _iframe(document: str, height: int = 600) -> str:
    """A whole HTML document as an isolated notebook fragment (its CSS cannot restyle the notebook)."""
    return (f'<iframe srcdoc="{html.escape(document, quote=True)}" style="width:100%;height:{height}px;'
            f'border:1px solid #ccc" sandbox="allow-scripts"></iframe>')


# ---- typed views -----------------------------------------------------------------------------------------------


def _typed(raw: bytes, element: str, row_bytes: int | None) -> np.ndarray:
    """Bytes as a rows x columns numpy array of ``element``: integers as numbers, floats as numpy floats of the
    same bits (bf16 as ml_dtypes.bfloat16), reinterpreted, never converted (as ``tile_array`` does)."""
    kind = ELEMENT_TYPES[element]
    row_bytes = row_bytes or len(raw)
    usable = row_bytes - row_bytes % kind.size
    rows = np.frombuffer(bytes(raw), dtype=np.uint8).reshape(-1, row_bytes)[:, :usable]
    return np.ascontiguousarray(rows).view(kind.storage).view(kind.value_type)


def _element(name: str, element: str | None, allowed: tuple[str, ...]) -> str:
    chosen = element or allowed[0]
    if chosen not in allowed:
        raise IsasimError(f"{name} is viewed as {', '.join(allowed)}, not '{chosen}'")
    return chosen


# ---- steps ------------------------------------------------------------------------------------------------------


class Step:
    """One executed instruction: ``index`` (how many ran before it), ``pc``, ``instruction`` (its text),
    ``writes`` (each state change, old -> new: core.journal.Write), ``fault`` (None, or the architectural
    fault it raised: ``fault.kind``, ``fault.rule``).  ``record`` is the simulator's own StepRecord."""

    def __init__(self, record: StepRecord, machine: "Machine"):
        self.record = record
        self._machine = machine
        self._program, self._init = machine.program, machine.init  # what the viewer replays

    index = property(lambda self: self.record.index)
    pc = property(lambda self: self.record.pc)
    writes = property(lambda self: self.record.writes)
    fault = property(lambda self: self.record.fault)
    halted = property(lambda self: self.record.halted)

    @property
    def instruction(self) -> str:
        return self.record.instruction.text

    def __repr__(self) -> str:
        """The step as ``isasim step`` lists it, each write on one line cut to STEP_LINE characters."""
        return "\n".join(line if len(line) <= STEP_LINE else line[:STEP_LINE - 4] + " ..."
                         for line in self.record.describe().splitlines())

    def _repr_html_(self) -> str:
        """The viewer of the run up to and including this step."""
        return self._machine._viewer(self.index + 1, self._program, self._init)


# ---- the machine ------------------------------------------------------------------------------------------------


class Machine:
    """A machine for teaching: the simulator's machine (``core``) with its program, its initial state, and
    the steps run so far (``history``).  Make one with :func:`machine`."""

    def __init__(self, isa: str, config: dict | None = None):
        self.core = CoreMachine(isa, config)
        self.isa = self.core.isa
        self.program: Program | None = None
        self.init = Init()
        self.history: list[Step] = []
        self.title = ""

    # ---- building --------------------------------------------------------------------------------------
    @property
    def config(self) -> dict:
        return self.core.config

    def assemble(self, text: str) -> Program:
        """The program ``text`` assembles to (an AssemblyError naming the line if it does not)."""
        return self.core.assemble(text, source="<notebook>")

    def load(self, program: str | Program, init: Init | str | Path | dict | None = None, *,
             regs: dict[str, int] | None = None, title: str = "") -> "Machine":
        """Load a program (assembly text or an assembled Program) and its initial state: ``init`` is an
        init or trace file's path, its JSON as a dict, or a core.trace.Init; ``regs`` sets registers too.
        Starts again from step 0."""
        if isinstance(program, str):
            program = self.assemble(program)
        init = _init_of(init)
        if regs:
            init = Init({**init.regs, **{k.lower(): v for k, v in regs.items()}}, init.memory, init.views,
                        init.arrays, init.args)
        self.isa.check_program(program, self.config)
        fresh = CoreMachine(self.isa, self.config)  # a clean state and memory: load() again restarts
        fresh.load_init(program, init)
        self.core, self.program, self.init, self.history = fresh, program, init, []
        self.title = title
        return self

    # ---- running -----------------------------------------------------------------------------------------
    @property
    def steps(self) -> int:
        """How many instructions have run."""
        return self.core.steps

    @property
    def finished(self) -> bool:
        return self.core.finished

    @property
    def next_instruction(self) -> str | None:
        """The text of the instruction the next step runs (None once the program has ended)."""
        if self.program is None or self.finished or self.core.state.pc == self.program.end:
            return None
        found = self.core.current_instruction()
        return found.text if found is not None else None

    def step(self) -> Step:
        """Run one instruction; its Step (a fault is in ``step.fault``, not raised)."""
        step = Step(self.core.step(), self)
        self.history.append(step)
        return step

    def run_to(self, pattern: str, *, max_steps: int = DEFAULT_STEP_LIMIT) -> Step:
        """Step until an instruction whose text contains ``pattern`` (case-insensitive) has run; that Step."""
        wanted = pattern.lower()
        while self.next_instruction is not None:
            if self.steps >= max_steps:
                break
            step = self.step()
            if wanted in step.instruction.lower() or step.fault is not None:
                return step
        raise IsasimError(f"no instruction containing '{pattern}' ran before the program ended")

    def run(self, max_steps: int = DEFAULT_STEP_LIMIT) -> list[Step]:
        """Run to the end of the program or to a fault (the fault is the last step's ``fault``); the steps run
        now.  More than ``max_steps`` steps in all is an IsasimError."""
        done: list[Step] = []
        while self.next_instruction is not None:
            self.core._check_step_limit(max_steps)
            done.append(self.step())
            if done[-1].fault is not None or done[-1].halted:
                break
        return done

    # ---- reading the state -----------------------------------------------------------------------------
    def register(self, name: str) -> int:
        return self.core.state.read_register(name.lower())

    @property
    def registers(self) -> dict[str, int]:
        state = self.core.state
        return {name: state.read_register(name) for name in state.register_names()}

    def names(self) -> list[str]:
        """Every name :meth:`view` takes: the ISA's arrays, then the init's named memory regions."""
        return [spec.name for spec in self.isa.arrays(self.config)] + [view.name for view in self.init.views]

    def view(self, name: str, element: str | None = None) -> np.ndarray:
        """An array of the ISA's state (``tmm0``, ``za``, ``z3``, ``l0c`` ...: ``Isa.arrays``) or a named memory
        region of the init (``C``), now, as a rows x columns numpy array of ``element`` (default: the array's
        first view type, or the region's declared type).  Floats come back as numpy floats of the same bits."""
        region = next((v for v in self.init.views if v.name == name), None) or \
            next((v for v in self.init.views if v.name.lower() == name.lower()), None)
        if region is not None:
            element = element or region.element
            if element not in ELEMENT_TYPES:
                raise IsasimError(f"'{element}' is no element type (one of {', '.join(ELEMENT_TYPES)})")
            rows, cols = region.shape
            raw = self.core.memory.read(region.address, rows * cols * ELEMENT_TYPES[element].size)
            return _typed(raw, element, cols * ELEMENT_TYPES[element].size)
        key = name.lower()
        spec = next((s for s in self.isa.arrays(self.config) if s.name == key), None)
        if spec is None:
            raise IsasimError(f"{self.isa.name} has no array or init region '{name}' "
                              f"(views: {', '.join(self.names())})")
        element = _element(key, element, spec.elements)
        tile = re.fullmatch(r"tmm([0-7])", key)
        if tile and hasattr(self.core.state, "tile_array"):  # x86: a tile's shape is its TILECFG rows x colsb
            if not self.core.state.tilecfg.configured:
                raise IsasimError(f"{key} is not configured (LDTILECFG has not run)")
            return self.core.state.tile_array(int(tile.group(1)), element)
        raw = self.isa.observed_arrays(self.core.state).get(key)
        if raw is None:
            if spec.size is None:
                raise IsasimError(f"{key} holds nothing now")
            raw = bytes(spec.size)  # an array the state leaves out of its observation is all zero
        return _typed(raw, element, spec.row_bytes)

    def tile(self, number: int, element: str = "int32") -> np.ndarray:
        """A matrix tile as rows x columns of ``element``: x86's tmmN in its configured shape, or Arm's ZA tile
        ZAn of ``element``'s size (its horizontal slices, ZAnH[i] being ZA vector i * size + n)."""
        if self.isa.name == "x86_amx":
            return self.view(f"tmm{number}", element)
        if self.isa.name == "arm_sme":
            size = ELEMENT_TYPES[_element("za", element, self.isa.arrays(self.config)[0].elements)].size
            if not 0 <= number < size:
                raise IsasimError(f"ZA has {size} tiles of {element}: ZA0 to ZA{size - 1}, not ZA{number}")
            return self.view("za", element)[number::size]
        raise IsasimError(f"{self.isa.name} has no matrix tiles; view its arrays: {', '.join(self.names())}")

    # ---- showing --------------------------------------------------------------------------------------------
    def _viewer(self, steps: int, program: Program | None = None, init: Init | None = None) -> str:
        program = program or self.program
        if program is None:
            return "<p>(no program loaded)</p>"
        init = init if init is not None else self.init

        def build(page):
            model = page.build_model(self.isa.name, self.config, program, init, max_steps=steps, title=self.title)
            if model.get("truncated") and len(model.get("steps", ())) == steps:
                # cut where the notebook's machine is, not for the page's size: say so in those words
                model["truncated"] = (f"The notebook's machine has run {steps:,} steps so far; the page shows "
                                      f"those (step on and show it again for more).")
            return model

        return _viewer_html(build)

    def __repr__(self) -> str:
        where = f", next: {self.next_instruction}" if self.next_instruction else ", ended" if self.program else ""
        return f"<isasim {self.isa.name} machine ({self.isa.config_title(self.config)}), {self.steps} steps{where}>"

    def _repr_html_(self) -> str:
        """The viewer of the program run so far (its state now is the last step's)."""
        return self._viewer(self.steps)


def _init_of(init: Init | str | Path | dict | None) -> Init:
    if init is None:
        return Init()
    if isinstance(init, Init):
        return init
    if isinstance(init, (str, Path)):
        data = load_json(init)
    elif isinstance(init, dict):
        data = init
    else:
        raise IsasimError(f"init is a path, a dict or an Init, not {type(init).__name__}")
    # a trace file holds its init under "init"; an init file is the init itself
    return parse_init(data.get("init", data) if isinstance(data, dict) and "format" in data else data)


def machine(isa: str = "x86_amx", **config: Any) -> Machine:
    """A machine for ``isa`` ("x86_amx", "arm_sme", "ascend_cube") configured by keyword (x86_amx: cpu=...,
    arm_sme: svl=..., ascend_cube: chip=...); ConfigError for an unknown ISA or option."""
    get_isa(isa)  # the one-line error naming the known ISAs
    return Machine(isa, config or None)


# ---- traces ---------------------------------------------------------------------------------------------------


class TraceFile:
    """A trace file (``core.trace.Trace`` as ``trace``): its program, init and expectations, a machine that runs
    it, and the viewer of its run."""

    def __init__(self, trace: Trace):
        self.trace = trace

    isa = property(lambda self: self.trace.isa)
    config = property(lambda self: self.trace.config)
    program = property(lambda self: self.trace.program)
    init = property(lambda self: self.trace.init)
    expect = property(lambda self: self.trace.expect)
    producer = property(lambda self: self.trace.producer)

    def machine(self) -> Machine:
        """A machine with the trace's program and initial state loaded, at step 0."""
        loaded = Machine(self.isa, self.config)
        return loaded.load("\n".join(self.program), self.init, title=Path(self.trace.source).name)

    def expected(self, name: str, element: str | None = None) -> np.ndarray:
        """What the trace expects of array ``name`` or of the init's memory region ``name`` at the end, typed as
        :meth:`Machine.view` types it (an IsasimError if the trace expects nothing of it)."""
        arrays = self.expect.get("arrays", {})
        if name.lower() in arrays:
            isa = get_isa(self.isa)
            spec = next(s for s in isa.arrays(isa.configure(self.config)) if s.name == name.lower())
            return _typed(arrays[name.lower()], _element(name.lower(), element, spec.elements), spec.row_bytes)
        region = next((v for v in self.init.views if v.name.lower() == name.lower()), None)
        if region is not None:
            element = element or region.element
            size = region.shape[0] * region.shape[1] * ELEMENT_TYPES[element].size
            for address, data in self.expect.get("memory", []):
                if address <= region.address and region.address + size <= address + len(data):
                    start = region.address - address
                    return _typed(data[start:start + size], element, region.shape[1] * ELEMENT_TYPES[element].size)
        raise IsasimError(f"{self.trace.source} expects nothing of '{name}'")

    def __repr__(self) -> str:
        return f"<isasim trace {self.trace.source}: {self.isa}, {len(self.program)} lines>"

    def _repr_html_(self) -> str:
        return _viewer_html(lambda page: page.trace_model(self.trace, max_steps=VIEWER_STEP_LIMIT))


def load_trace(path: str | Path) -> TraceFile:
    """Read a trace file (``isasim-trace/2``); a TraceFormatError naming the file and key if it is not one."""
    return TraceFile(read_trace(path))


# ---- explanations ----------------------------------------------------------------------------------------------


class Explained:
    """``isasim explain``'s explanation of one instruction (``explanation``: core.explain.Explanation); its
    text is ``str()``, its page ``_repr_html_``, its worked checks ``checks``."""

    def __init__(self, explanation: Any):
        self.explanation = explanation

    title = property(lambda self: self.explanation.title)
    summary = property(lambda self: self.explanation.summary)
    checks = property(lambda self: self.explanation.checks)

    def __str__(self) -> str:
        """The text ``isasim explain --no-color`` prints."""
        from .core.explain.terminal import to_text

        return to_text(self.explanation)

    def __repr__(self) -> str:
        return str(self)

    def _repr_html_(self) -> str:
        from .core.explain import render_html

        return _iframe(render_html(self.explanation), height=700)


def explain(text: str, isa: str = "x86_amx", *, init: Init | str | Path | dict | None = None, seed: int = 1,
            **options: Any) -> Explained:
    """Explain one instruction (assembly text) as ``isasim explain`` does, its worked example run on the
    simulator: on generated data (``seed``) or an init's (``init``); ``options`` are the ISA's explain
    options by name (x86_amx: start_row=...) and its configuration keys (arm_sme: svl=...)."""
    from .core.explain import ExplainOptions
    from .core.explain import explain as core_explain
    from .core.explain import explainer

    found = explainer(isa)
    own = {option.dest for option in found.OPTIONS}
    config = {key: value for key, value in options.items() if key not in own}
    choices = ExplainOptions(seed=seed, init=None if init is None else _init_of(init),
                             isa_options={key: options.get(key) for key in own}, config=config)
    if config:
        get_isa(isa).configure(config)  # an unknown key is a one-line ConfigError here
    return Explained(core_explain(isa, text, None, choices))

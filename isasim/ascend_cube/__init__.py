"""The Huawei Ascend AI Core cube path: L1, L0A, L0B, L0C, the bias table BT and the fixpipe buffer FB;
DataCopy, LoadData, Mmad and Fixpipe with every quant mode of the 910B and the 950.

``ISA`` is the object the core engine plugs in (see :mod:`isasim.core.isa`), built as
``isasim.arm_sme`` is: config.py (the chip models and configure()), state.py (the state), faults.py (the
fault kinds), forms/ (every instruction declared once, after its Ascend C call, a module per family),
assembler.py (parser and printer, both from those declarations), context.py (what semantics see),
semantics/ (data_movement, mmad, fixpipe: what each instruction does, and access: what it reads),
views/ (what run and step show) and explain/.  The arithmetic is in pure modules beside them, numerics/
(formats, fractal layouts, the quant word, Mmad, Fixpipe and atomic-add arithmetic), and options.py
names every behaviour public material does not settle.

There is no public binary encoding, no Ascend hardware and no CANN toolkit here: a program
is its text, and runs on the simulator only.
"""

from __future__ import annotations

from ..core.errors import ConfigError
from ..core.isa import ArraySpec, ConfigOption, Isa, WatchTarget
from ..core.journal import Journal
from ..core.program import NoEncodingError, Program
from . import assembler, views
from .config import BUFFER_NAMES, CHIPS, DEFAULT_CHIP, configure
from .context import AscendContext
from .state import AscendState, array_name

CODE_BASE = 0x0  # instructions are one address apart from here: an instruction's address is its index


class AscendCube(Isa):
    name = "ascend_cube"
    title = "Huawei Ascend cube (L1/L0 buffers, Mmad, Fixpipe)"
    code_base = CODE_BASE
    default_oracle = None  # no executable oracle exists (no hardware, no CANN simulator here)
    legacy_array_keys = ()
    config_options = (
        ConfigOption("--chip", "chip", f"the Ascend chip modelled: {' or '.join(CHIPS)} (default {DEFAULT_CHIP})",
                     metavar="CHIP"),
        ConfigOption("--option", "options", "ascend_cube behaviours public material leaves open, "
                     "NAME=VALUE[,NAME=VALUE...] (see docs/ascend_cube/options.md)", metavar="NAME=VALUE"),
        ConfigOption("--schedule", "schedule", "the order the pipes' queues run in: inorder (the program's order "
                     "where its flags allow; the default) or random (a seeded interleaving the flags allow)",
                     metavar="ORDER"),
        ConfigOption("--schedule-seed", "seed", "the random schedule's seed (default 0)", metavar="N"),
    )
    stepper_locations = """    quant_pre, fpc, atomic, ctrl, pc   registers (p, w); p quant_pre decodes the word
    regs                                every register (p)
    l1 l0a l0b l0c bt fb [TYPE] [hex] [all]
                                        a buffer as a typed grid of 32/64-byte rows (p, w)
    l1[OFFSET]                          a buffer from a byte offset on (p)
    l0c.nd[MxN], l0c[OFFSET].nd[MxN]    the M x N matrix L0C's Nz fractals hold (p)
    l0c[A:B]                            bytes A..B-1 of a buffer (w)
    fixpipe[I,J]                        output element (I, J) of the Fixpipe at or before the pc, step by
                                        step: L0C value, quant word, multiply, conversion (p)"""

    def configure(self, config: dict | None) -> dict:
        return configure(config)

    def config_title(self, config: dict) -> str:
        return CHIPS[config["chip"]].title

    def new_state(self, config: dict, journal: Journal) -> AscendState:
        return AscendState(journal, config)

    def new_context(self, state: AscendState, memory) -> AscendContext:
        return AscendContext(state, memory, state.config)

    def begin_program(self, state: AscendState, program: Program) -> None:
        """The pipes of this run: each instruction's queue, the flags, the race check and the schedule."""
        from .sync.pipe_model import PipeModel

        state.pipes = PipeModel(program, state.config, dict(state.chip.buffers))
        state.pc = state.pipes.first_address()  # the schedule's first instruction

    def timeline(self, state: AscendState) -> dict | None:
        """The run's pipes, instructions and flags as Chrome trace-event JSON, ts the run-order step
        (views/timeline.py)."""
        from .views.timeline import timeline

        return timeline(state)

    # ---- programs ---------------------------------------------------------------------------------
    def assemble(self, text: str, source: str = "<input>", base: int | None = None) -> Program:
        return assembler.assemble(text, self.name, source, CODE_BASE if base is None else base)

    def disassemble(self, code: bytes, base: int | None = None) -> Program:
        raise NoEncodingError("ascend_cube has no binary encoding (none is public): its programs are text only")

    def check_program(self, program: Program, config: dict) -> None:
        """Refuse, naming the line, a program that asks the configured chip for what it lacks (a Fixpipe mode,
        a type pair): a program for the other chip.  Run as it stands, each such instruction would fault
        UNSUPPORTED; the command line says so before anything runs."""
        from ..core.errors import AssemblyError
        from ..core.faults import Fault
        from .semantics.mmad import NotSimulated

        chip = CHIPS[config["chip"]]
        for instruction in program.instructions:
            form = instruction.form
            if form.check_chip is None:
                continue
            where = f"{program.source}:{instruction.line}" if instruction.line else program.source
            try:
                form.check_chip(chip, dict(zip(form.operand_names, instruction.operands)))
            except Fault as fault:
                raise AssemblyError(f"{where}: {fault.rule} (chip {config['chip']}; --chip chooses another)") \
                    from None
            except NotSimulated as error:  # the chip has it; isasim does not simulate it
                raise AssemblyError(f"{where}: {error.message}") from None

    # ---- observable state ----------------------------------------------------------------------------
    def arrays(self, config: dict) -> list[ArraySpec]:
        chip = CHIPS[config["chip"]]
        return [ArraySpec(array_name(b), chip.buffers[b], views.VIEWS[b], row_bytes=views.buffers.ROW_BYTES[b])
                for b in BUFFER_NAMES]

    def observed_arrays(self, state: AscendState) -> dict[str, bytes]:
        """Every buffer holding a non-zero byte (an all-zero buffer is as reset leaves it, and leaving it out
        keeps traces small)."""
        return {array_name(b): state.buffer_bytes(b) for b in BUFFER_NAMES if state.buffers[b].any()}

    def seed_arrays(self, state: AscendState, arrays: dict[str, bytes]) -> None:
        for name, data in arrays.items():
            if name not in views.BY_ARRAY:
                raise ConfigError(f"init.arrays.{name}: ascend_cube has no array '{name}' "
                                  f"(its arrays: {', '.join(views.BY_ARRAY)})")
        for name, data in arrays.items():
            state.seed_buffer(views.BY_ARRAY[name], data)

    # (undefined_after and comparable: the defaults; every modelled result is defined, and what public
    # material leaves open is an option, not undefined)

    # ---- views -------------------------------------------------------------------------------------------
    def parse_show(self, item: str) -> tuple[str, str]:
        name, _, element = (part.strip() for part in item.strip().lower().partition(":"))
        buffer = views.BY_ARRAY.get(name)
        if buffer is None or element not in views.VIEWS[buffer]:
            raise ValueError("expected BUFFER:TYPE, BUFFER one of " + ", ".join(views.BY_ARRAY)
                             + " and TYPE one of its view types (l0c: int32, fp32; l0a: int8, fp16, ...)")
        return name, element

    def render_state(self, state: AscendState, program: Program | None = None, **options):
        return views.state_view(state, **options)

    def render_step(self, record, state: AscendState, program: Program | None = None, **options):
        return views.step_view(record, state, **options)

    def render_item(self, state: AscendState, what: str, args: list[str], program: Program | None = None,
                    **options):
        from .views.fixpipe_element import fixpipe_element

        element = fixpipe_element(state, program, what)
        if element is not None:
            return element
        return views.item_view(state, what, args, width=options.get("width", 100))

    def watch_value(self, state: AscendState, what: str, element_types: dict[str, str]) -> WatchTarget | None:
        return views.watch_value(state, what, element_types)

    # ---- optional hooks ----------------------------------------------------------------------------------
    def register_commands(self, sub, common) -> None:
        """``isasim qbmm``: the seed's quantised batch-matmul kernel (:mod:`.kernels.qbmm_command`)."""
        from .kernels.qbmm_command import register

        register(sub, common)

    def explainer(self):
        from .explain import EXPLAINER

        return EXPLAINER

    def page_views(self, config: dict, program) -> list:
        """L0C as the M x N matrix of the program's first Mmad, for the trace page (views/page_views.py)."""
        from .views.page_views import page_views

        return page_views(config, program)

    def element_workings(self, instruction, before, after) -> list:
        """Each element an Mmad or a Fixpipe wrote, worked out as ``isasim explain`` works its example's
        (:mod:`.explain.workings`)."""
        from .explain.workings import element_workings

        return element_workings(instruction, before, after)

    def page_outlines(self, instruction, before) -> list:
        """The buffer bytes an instruction reads and writes, for the trace page to outline
        (views/page_outlines.py)."""
        from .views.page_outlines import page_outlines

        return page_outlines(instruction, before)


ISA = AscendCube()

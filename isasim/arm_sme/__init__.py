"""Arm SME2 on A64: X0-X30, SP, NZCV, Z0-Z31 and P0-P15 at the streaming vector length, ZA, ZT0,
PSTATE.SM and PSTATE.ZA; the SME2 integer dot products into ZA vector groups, the integer and
floating-point outer products and dots, ZA moves and ZA, Z and P memory, SMSTART/SMSTOP, ZERO,
the SVE instructions a streaming kernel needs, and a scalar subset.

``ISA`` is the object the core engine plugs in (see :mod:`isasim.core.isa`), built as every ISA
package is: config.py (the SVLs, the features and configure()), state.py (the state), faults.py
(the fault kinds), forms/ (every form declared once, with encoding.py's named bit fields and
operands/' syntax), assembler.py and decoder.py (both from those declarations), context.py (what
semantics see), semantics/ (one module per instruction family), numerics/ (the Arm ARM's integer
and floating-point functions), views/ (what run and step show), explain/, oracle/ (clang and QEMU),
fuzz/ and kernels/.
"""

from __future__ import annotations

from ..core.errors import ConfigError
from ..core.isa import ArraySpec, ConfigOption, Isa, WatchTarget
from ..core.journal import Journal, record_memory_changes
from ..core.program import Instruction, Program
from . import assembler, decoder, views
from .config import CODE_BASE, DEFAULT_FEATURES, DEFAULT_SVL, FEATURES, SVLS, configure
from .context import SmeContext
from .state import P_NAMES, Z_NAMES, ZT0_BYTES, ArmSmeState


class ArmSme(Isa):
    name = "arm_sme"
    title = "Arm SME2 (A64)"
    code_base = CODE_BASE
    config_options = (ConfigOption("--svl", "svl", f"streaming vector length in bits "
                                   f"({', '.join(map(str, SVLS))}; default {DEFAULT_SVL})",
                                   "BITS"),
                      ConfigOption("--features", "features",
                                   f"comma-separated architecture features ({', '.join(FEATURES)}; "
                                   f"default {','.join(DEFAULT_FEATURES)}): an instruction whose "
                                   f"feature is missing is UNDEFINED", "LIST"))
    default_oracle = "qemu"  # what `isasim diff` compares with unless --against says otherwise
    legacy_array_keys = ()
    stepper_locations = views.STEPPER_LOCATIONS
    elf_machines = (183,)  # EM_AARCH64: load_object reads a function of an AArch64 .o or linked program

    def configure(self, config: dict | None) -> dict:
        return configure(config)

    def config_title(self, config: dict) -> str:
        return f"SVL {config['svl']}"

    def new_state(self, config: dict, journal: Journal) -> ArmSmeState:
        return ArmSmeState(journal, config)

    def new_context(self, state: ArmSmeState, memory) -> SmeContext:
        return SmeContext(state, memory)

    def compile_program(self, program: Program, config: dict):
        from . import compiled  # numba loads only when a plain run asks for the compiled engine

        return compiled.compile_program(program, config)

    # ---- programs ---------------------------------------------------------------------------------
    def assemble(self, text: str, source: str = "<input>", base: int | None = None) -> Program:
        return assembler.assemble(text, self.name, source, CODE_BASE if base is None else base)

    def disassemble(self, code: bytes, base: int | None = None) -> Program:
        return decoder.disassemble(code, self.name, CODE_BASE if base is None else base)

    def listing(self, code: bytes, base: int):
        return decoder.listing(code, base)

    def source_line(self, instruction: Instruction) -> str:
        """Its text; an UNDEFINED encoding (UDF) as the bytes that make it."""
        if instruction.invalid is None:
            return instruction.text
        return ".byte " + ",".join(f"0x{b:02x}" for b in instruction.encoding)

    def load_object(self, path: str, function: str, init):
        from .elf import load_object  # capstone (naming what isasim cannot decode) only when an object is read

        return load_object(path, function, init)

    # ---- observable state ------------------------------------------------------------------------
    def arrays(self, config: dict) -> list[ArraySpec]:
        svlb = config["svl"] // 8
        vectors = views.VECTOR_VIEWS
        return ([ArraySpec("za", svlb * svlb, views.ZA_VIEWS, row_bytes=svlb),
                 ArraySpec("zt0", ZT0_BYTES, vectors, row_bytes=ZT0_BYTES)]
                + [ArraySpec(name, svlb, vectors, row_bytes=svlb) for name in Z_NAMES]
                + [ArraySpec(name, svlb // 8, views.PREDICATE_VIEWS, row_bytes=svlb // 8) for name in P_NAMES]
                + [ArraySpec("ffr", svlb // 8, views.PREDICATE_VIEWS, row_bytes=svlb // 8)])

    def observed_arrays(self, state: ArmSmeState) -> dict[str, bytes]:
        return {spec.name: state.array_bytes(spec.name) for spec in self.arrays(state.config)}

    def seed_arrays(self, state: ArmSmeState, arrays: dict[str, bytes]) -> None:
        sizes = state.array_sizes()
        for name, data in arrays.items():
            if name not in sizes:
                raise ConfigError(f"init.arrays.{name}: arm_sme has no array '{name}' "
                                  f"(its arrays: za, zt0, z0-z31, p0-p15, ffr)")
            if len(data) != sizes[name]:
                raise ConfigError(f"init.arrays.{name}: {name} is {sizes[name]} bytes at SVL {state.svl}, "
                                  f"not {len(data)}")
        for name, data in arrays.items():
            state.set_array(name, data)

    # ---- views -------------------------------------------------------------------------------------
    def parse_show(self, item: str) -> tuple[str, str]:
        name, _, element = (part.strip() for part in item.strip().lower().partition(":"))
        known = {"za", "zt0", "ffr", *Z_NAMES, *P_NAMES}
        if name not in known or element not in views.views_of(name):
            raise ValueError(f"expected ARRAY:TYPE, ARRAY one of za, zt0, z0-z31, p0-p15, ffr and TYPE one of "
                             f"{', '.join(views.VECTOR_VIEWS)} (uint8 for predicates)")
        return name, element

    def render_state(self, state: ArmSmeState, program: Program | None = None, **options):
        return views.state_view(state, program, **options)

    def render_step(self, record, state: ArmSmeState, program: Program | None = None, **options):
        return views.step_view(record, state, program, **options)

    def render_item(self, state: ArmSmeState, what: str, args: list[str], program: Program | None = None, **options):
        return views.item_view(state, what, args, program, width=options.get("width", 100))

    def watch_value(self, state: ArmSmeState, what: str, element_types: dict[str, str]) -> WatchTarget | None:
        return views.watch_value(state, what, element_types)

    def debug_target(self, config: dict):
        from .debug_target import debug_target  # only `isasim gdbserver` needs it

        return debug_target(config)

    # ---- optional hooks -----------------------------------------------------------------------------
    def state_from_observed(self, observed: dict, previous: ArmSmeState, memory, init) -> tuple[ArmSmeState, list]:
        """A state holding what another backend (QEMU) observed, and the writes that lead to it from
        ``previous`` (registers, arrays, and each init memory region's changed bytes), for the stepper
        and ``record --steps`` of another backend."""
        journal = Journal()
        state = ArmSmeState(journal, previous.config)
        state.x, state.sp, state.pc, state.nzcv = list(previous.x), previous.sp, previous.pc, previous.nzcv
        state.sm, state.za_enabled, state.tpidr2 = previous.sm, previous.za_enabled, previous.tpidr2
        for name in ("z", "p", "ffr", "za", "zt0"):
            setattr(state, name, getattr(previous, name).copy())
        for name, value in observed.get("regs", {}).items():
            state.write_register(name, value)
        sizes = state.array_sizes()
        for name, data in observed.get("arrays", {}).items():
            if name in sizes and len(data) == sizes[name] and data != state.array_bytes(name):
                state.set_array(name, data)
        state.memory_image = record_memory_changes(journal, init.memory, memory, getattr(previous, "memory_image", None))
        return state, journal.take()

    @property
    def fuzz_subsets(self) -> tuple[str, ...]:
        from .fuzz.form_generator import subsets  # mixed and every form group; importing it imports no hypothesis

        return subsets()

    def run_fuzz(self, cases: int, seed: int, **options):
        from .fuzz import run_fuzz  # needs hypothesis: ImportError reaches the CLI, which says so

        return run_fuzz(cases, seed, **options)

    kernel_names = ("umopa_gemm", "udot_gemm", "udot16_gemm", "udot_indexed_gemm")  # kernels.BUILDERS

    def build_kernel(self, name: str, *, count: int | None = None, K: int | None = None, M: int | None = None,
                     N: int | None = None, config: dict | None = None):
        from . import kernels

        return kernels.build(name, count=count, K=K, M=M, N=N, svl=(config or {}).get("svl"))

    def element_workings(self, instruction: Instruction, before, after) -> list:
        """The trace viewer's account of each ZA element a dot or outer product wrote (explain/workings.py)."""
        from .explain.workings import element_workings

        return element_workings(instruction, before, after)

    def page_views(self, config: dict, program: Program) -> list:
        """ZA's tiles at the configured SVL, for the trace page (views/page_views.py)."""
        from .views.page_views import page_views

        return page_views(config, program)

    def page_outlines(self, instruction: Instruction, before) -> list:
        """The ZA, ZT0, Z and P bytes the instruction's operands address, for the trace page (views/page_outlines.py)."""
        from .views.page_outlines import page_outlines

        return page_outlines(instruction, before)

    def explainer(self):
        if getattr(self, "_explainer", None) is None:
            from .explain import ArmSmeExplainer

            self._explainer = ArmSmeExplainer(self)
        return self._explainer


ISA = ArmSme()


def _register_backends() -> None:
    from ..core.backends import register_backend
    from .oracle.backend import QemuBackend

    register_backend(QemuBackend())


_register_backends()

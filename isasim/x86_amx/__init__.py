"""Intel AMX on x86-64: TILECFG, tmm0-7, the AMX-TILE/INT8/BF16/FP16 instructions and a scalar subset.

``ISA`` is the object the core engine plugs in (see :mod:`isasim.core.isa`).
"""

from __future__ import annotations

from ..core.errors import ConfigError
from ..core.isa import ArraySpec, ConfigOption, Isa, WatchTarget
from ..core.journal import Journal, record_memory_changes
from ..core.program import Instruction, Program
from .forms import scalar as scalar_forms
from .assembler import assemble
from .context import X86Context
from .faults import UD, fault_kind
from .config import CODE_BASE, CPU_MODELS, configure, cpu_model
from .decoder import disassemble
from .state import STATUS_FLAGS, X86AmxState, observed_arrays

TILE_NAMES = tuple(f"tmm{t}" for t in range(8))
VECTOR_NAMES = tuple(f"zmm{n}" for n in range(32))
TILE_ELEMENT_TYPES = ("int32", "int8", "uint8", "int16", "uint16", "uint32", "bf16", "fp16", "fp32")


def tile_number(name: str) -> int | None:
    """7 for "tmm7", None for anything else."""
    return TILE_NAMES.index(name) if name in TILE_NAMES else None


def _by_tile_number(element_types: dict[str, str] | None) -> dict[int, str]:
    """--show choices keyed by array name ({"tmm0": "int8"}) as the x86 views key them (by tile number)."""
    return {tile_number(name): element for name, element in (element_types or {}).items()
            if tile_number(name) is not None}


class X86Amx(Isa):
    name = "x86_amx"
    title = "Intel AMX (x86-64)"
    code_base = CODE_BASE
    config_options = (ConfigOption("--cpu", "cpu", f"CPU model ({', '.join(CPU_MODELS)})", "MODEL"),)
    default_oracle = "silicon"  # what `isasim diff` compares with unless --against says otherwise
    pc_register = "rip"
    elf_machines = (62,)  # EM_X86_64
    # isasim-trace/1 kept the tiles in expect.tiles (by name) and TILECFG in expect.tilecfg
    legacy_array_keys = ("tiles", "tilecfg")
    kernel_names = ("int8_block", "int8_batch", "int8_per_block", "int8_microkernel", "bf16_block",
                    "bf16_microkernel")

    def configure(self, config: dict | None) -> dict:
        return configure(config)

    def new_state(self, config: dict, journal: Journal) -> X86AmxState:
        return X86AmxState(journal, cpu_model(config["cpu"]))

    def new_context(self, state: X86AmxState, memory) -> X86Context:
        return X86Context(state, memory, state.model)

    def assemble(self, text: str, source: str = "<input>", base: int | None = None) -> Program:
        return assemble(text, source, CODE_BASE if base is None else base)

    def disassemble(self, code: bytes, base: int | None = None) -> Program:
        return disassemble(code, CODE_BASE if base is None else base)

    def arrays(self, config: dict) -> list[ArraySpec]:
        """TILECFG's 64-byte image, and tmm0-tmm7 as rows x colsb bytes (what TILESTORED would store),
        held while the tiles are configured with a non-empty shape."""
        return [ArraySpec("tilecfg", 64, ("uint8",))] + [
            ArraySpec(name, None, TILE_ELEMENT_TYPES) for name in TILE_NAMES] + [
            ArraySpec(name, None, TILE_ELEMENT_TYPES) for name in VECTOR_NAMES]  # zmm0-31: held while not zero

    def observed_arrays(self, state: X86AmxState) -> dict[str, bytes]:
        """TILECFG, each configured tile, and each zmm register that is not zero."""
        arrays = observed_arrays(state.tilecfg.to_bytes(), state.settled_tiles().tobytes())
        return {**arrays, **state.observed_vectors()}

    def seed_arrays(self, state: X86AmxState, arrays: dict[str, bytes]) -> None:
        """TILECFG first (it must be a configuration LDTILECFG accepts, and it shapes the tiles), then
        each tile as its rows x colsb bytes, as TILELOADD of a dense block would leave it."""
        import numpy as np

        from .semantics.amx import checked_tilecfg
        from ..core.faults import Fault

        unknown = [name for name in arrays if name != "tilecfg" and name not in TILE_NAMES and name not in VECTOR_NAMES]
        if unknown:
            raise ConfigError(f"init.arrays.{unknown[0]}: x86_amx has no array '{unknown[0]}' "
                              f"(its arrays: tilecfg, {', '.join(TILE_NAMES)})")
        if "tilecfg" in arrays:
            image = arrays["tilecfg"]
            if len(image) != 64:
                raise ConfigError(f"init.arrays.tilecfg: TILECFG is 64 bytes, not {len(image)}")
            try:
                config = checked_tilecfg(image, state.model)
            except Fault as fault:
                raise ConfigError(f"init.arrays.tilecfg: LDTILECFG would refuse it ({fault.rule})") from None
            state.set_tilecfg(config)
            state.zero_all_tiles()
        for name, data in arrays.items():
            if name in VECTOR_NAMES:
                if len(data) != 64:
                    raise ConfigError(f"init.arrays.{name}: a zmm register is 64 bytes, not {len(data)}")
                state.write_vector(VECTOR_NAMES.index(name), int.from_bytes(data, "little"))
                continue
            t = tile_number(name)
            if t is None:
                continue
            rows, colsb = state.tile_shape(t) if state.tilecfg.configured else (0, 0)
            if not rows:
                raise ConfigError(f"init.arrays.{name}: the tile is not configured (seed init.arrays.tilecfg "
                                  f"with its rows and colsb)")
            if len(data) != rows * colsb:
                raise ConfigError(f"init.arrays.{name}: its configured shape is {rows} rows x {colsb} bytes = "
                                  f"{rows * colsb} bytes, not {len(data)}")
            tile = np.zeros((16, 64), dtype=np.uint8)
            tile[:rows, :colsb] = np.frombuffer(data, dtype=np.uint8).reshape(rows, colsb)
            state.write_tile(t, tile)

    def render_state(self, state: X86AmxState, program: Program | None = None, **options):
        from .views import state_view

        options["element_types"] = _by_tile_number(options.get("element_types"))
        return state_view(state, program, **options)

    # ---- step-through views --------------------------------------------------------
    @property
    def stepper_locations(self) -> str:
        from .views import STEPPER_LOCATIONS  # (the views import rich: loading the ISA stays cheap)

        return STEPPER_LOCATIONS

    def render_step(self, record, state: X86AmxState, program: Program | None = None, **options):
        from .views import step_view

        options["element_types"] = _by_tile_number(options.get("element_types"))
        return step_view(record, state, program, **options)

    def render_item(self, state: X86AmxState, what: str, args: list[str], program: Program | None = None, **options):
        from .views import item_view

        return item_view(state, what, args, program, **options)

    def watch_value(self, state: X86AmxState, what: str, element_types: dict[str, str]) -> WatchTarget | None:
        """A register, rflags, a whole tile (16 x 64 bytes, in its --show type, int32 by default) or one
        dword tmmN[r][c] of it."""
        from .views import watch_value

        value = watch_value(state, what)
        if value is None:
            return None
        name = what.lower().split("[", 1)[0]
        if tile_number(name) is None:
            return WatchTarget(value)
        element = element_types.get(name, "int32")
        return WatchTarget(value if isinstance(value, bytes) else value.to_bytes(4, "little"), element)

    def state_from_observed(self, observed: dict, previous: X86AmxState, memory, init) -> tuple[X86AmxState, list]:
        """A state object holding what another backend (silicon) observed, and the writes that
        lead to it from ``previous``, so the stepper can show the CPU's state and changes."""
        import numpy as np

        from .state import TileConfig

        journal = Journal()
        state = X86AmxState(journal, previous.model)
        state.gpr, state.rip, state.rflags = list(previous.gpr), previous.rip, previous.rflags
        state.tilecfg = previous.tilecfg.copy()
        state.replace_tiles(previous.settled_tiles().copy())
        raw = observed.get("raw", {})
        for name, value in observed.get("regs", {}).items():
            if name == "rflags":
                state.set_rflags(value)
            else:
                state.write_register(name, value)
        if "tilecfg" in raw:  # the whole of XTILEDATA, also the rows a configuration leaves out
            image = raw["tilecfg"]
            state.set_tilecfg(TileConfig.from_bytes(image) if image[0] else TileConfig())
            tiles = np.frombuffer(raw["tiles"], dtype=np.uint8).reshape(8, 16, 64)
            for t in range(8):
                state.write_tile(t, tiles[t])
        state.rip = raw.get("rip", state.rip)
        state.memory_image = record_memory_changes(journal, init.memory, memory, getattr(previous, "memory_image", None))
        return state, journal.take()

    # ---- hooks the CLI dispatches through (each module imported on first call) ----------
    def parse_show(self, item: str) -> tuple[str, str]:
        """``tmmN:TYPE`` as ("tmmN", TYPE), TYPE one of state.ELEMENT_TYPES."""
        import re

        from .state import ELEMENT_TYPES

        m = re.fullmatch(r"\s*(tmm[0-7])\s*:\s*(\w+)\s*", item)
        if not m or m.group(2) not in ELEMENT_TYPES:
            raise ValueError(f"expected tmmN:TYPE with TYPE one of {', '.join(ELEMENT_TYPES)}")
        return m.group(1), m.group(2)

    def config_title(self, config: dict) -> str:
        return config["cpu"]

    def source_line(self, instruction: Instruction) -> str:
        """The line that assembles back to ``instruction``: its text, or for an invalid encoding (which
        has no text GNU as would encode) or a redundant one (objdump's text names other bytes, e.g. the
        disp32 of 0 in g++'s ``nop WORD PTR [rax+rax*1+0x0]`` padding) its bytes as a .byte directive."""
        if instruction.invalid is None and "canonical_encoding" not in instruction.extra:
            return instruction.text
        return ".byte " + ",".join(f"0x{b:02x}" for b in instruction.encoding)

    def fault_kind(self, text: str) -> str:
        """x86 exceptions are written #UD, #GP, #PF; a trace may leave out the '#'."""
        return fault_kind(text)

    def explainer(self):
        from .explain import EXPLAINER

        return EXPLAINER

    @property
    def fuzz_subsets(self) -> tuple[str, ...]:
        """The subsets ``run_fuzz`` draws programs from (``isasim fuzz --only``), in seed order."""
        from .fuzz import SUBSETS  # needs hypothesis, as run_fuzz does

        return SUBSETS

    def run_fuzz(self, cases: int, seed: int, **options):
        """The x86 generators (scalar, amx) run by the ISA-neutral campaign engine, isasim.core.fuzz."""
        from .fuzz import run_fuzz  # needs hypothesis: ImportError reaches the CLI, which says so

        return run_fuzz(cases, seed, **options)

    def build_kernel(self, name: str, *, count: int | None = None, K: int | None = None, M: int | None = None,
                     N: int | None = None, config: dict | None = None):
        """The seed article's kernels take a block count and K (M and N are the article's; they run on any
        CPU model with AMX)."""
        from . import kernels
        from .kernels import KernelSizeError

        for flag, value in (("--m", M), ("--n", N)):
            if value is not None:
                raise KernelSizeError(f"x86_amx kernels take no {flag}")
        if config:
            raise KernelSizeError(f"x86_amx kernels take no configuration options ({', '.join(config)})")
        return kernels.build(name, count=count, K=K)

    def load_object(self, path: str, function: str, init):
        """``function`` of the ELF file ``path`` as (program, init): its code at CODE_BASE, relocated, the
        data it reaches mapped read-only, a stack, and init.args in rdi, rsi, rdx, rcx, r8, r9 (see .elf)."""
        from .elf import load_object

        return load_object(path, function, init)

    def listing(self, code: bytes, base: int):
        from .decoder import listing

        return listing(code, base)

    # ---- differential comparison ------------------------------------------------
    def undefined_after(self, undefined: int | None, instruction: Instruction) -> int:
        """The status flags left undefined once ``instruction`` has run: those it leaves undefined,
        plus those undefined before that it does not write (e.g. IMUL's SF, ZF, AF, PF)."""
        undefined = undefined or 0
        if instruction.invalid is None:
            written = scalar_forms.FLAGS_WRITTEN.get(instruction.form.mnemonic, 0)
            undefined = (undefined & ~written) | scalar_forms.UNDEFINED_FLAGS.get(instruction.form.mnemonic, 0)
        return undefined

    def comparable(self, observed: dict, undefined: int | None) -> dict:
        """The observed state without what the architecture leaves undefined: RFLAGS is compared on
        its status flags only, less the ``undefined`` ones (see undefined_after)."""
        regs = dict(observed.get("regs", {}))
        if "rflags" in regs:
            regs["rflags"] &= STATUS_FLAGS & ~(undefined or 0)
        return {**observed, "regs": regs}

    def array_divergence(self, name: str, a: bytes, b: bytes, observed: dict) -> tuple[str, str, bytes, bytes]:
        """A tile's first differing row (its bytes are rows x colsb) and dword in it; TILECFG's first byte."""
        if len(a) != len(b):
            return name, f"{len(a)} bytes vs {len(b)}: configured differently", a, b
        offset = next(i for i, (x, y) in enumerate(zip(a, b)) if x != y)
        t = tile_number(name)
        if t is None:
            return name, f"first difference at byte {offset}: {a[offset]:#04x} vs {b[offset]:#04x}", a, b
        from .state import TileConfig

        colsb = TileConfig.from_bytes(observed.get("arrays", {}).get("tilecfg", bytes(64))).colsb[t] or 64
        row, column = divmod(offset, colsb)
        dword = column // 4
        value = lambda data: int.from_bytes(data[row * colsb + 4 * dword : row * colsb + 4 * dword + 4], "little")  # noqa: E731
        row_of = lambda data: data[row * colsb : (row + 1) * colsb]  # noqa: E731
        return (f"{name}[{row}]", f"first difference in dword {dword}: {value(a):#010x} vs {value(b):#010x}",
                row_of(a), row_of(b))

    def compile_program(self, program: Program, config: dict):
        """The compiled engine (isasim.x86_amx.compiled): None without numba."""
        from .compiled import build

        return build(program, config)

    def invalid_encoding(self, reason: str):
        return UD(f"invalid encoding: {reason}")

    def element_workings(self, instruction: Instruction, before, after) -> list:
        """For a TMUL step: the account of each element of C it wrote (see .explain.workings); else []."""
        from .explain.workings import element_workings

        return element_workings(instruction, before, after)

    def page_outlines(self, instruction: Instruction, before) -> list:
        """For an AMX step: the tilecfg, tile and zmm bytes its operands read and write (see .views.page_outlines)."""
        from .views.page_outlines import page_outlines

        return page_outlines(instruction, before)

    def debug_target(self, config: dict):
        """gdb's amd64 Linux registers with the CPU model's vector features, and the AMX state (see .debug_target)."""
        from .debug_target import debug_target

        return debug_target(config)


ISA = X86Amx()


def _register_backends() -> None:
    from ..core.backends import register_backend
    from .oracle import SiliconBackend

    register_backend(SiliconBackend())


_register_backends()

__all__ = ["ISA", "CPU_MODELS", "X86AmxState", "amx", "scalar"]

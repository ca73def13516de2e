"""Intel AMX on x86-64: TILECFG, tmm0-7, the AMX-TILE/INT8/BF16/FP16 instructions and a scalar subset.

``ISA`` is the object the core engine plugs in (see :mod:`isasim.core.isa`).
"""

from __future__ import annotations

from ..core.errors import ConfigError
from ..core.journal import Journal
from ..core.program import Instruction, Program
from . import amx, scalar
from .assembler import assemble
from .context import UD, X86Context
from .cpu import CPU_MODELS, DEFAULT_CPU, cpu_model
from .decoder import disassemble
from .state import STATUS_FLAGS, X86AmxState

CODE_BASE = 0x400000


class X86Amx:
    name = "x86_amx"
    title = "Intel AMX (x86-64)"
    code_base = CODE_BASE

    def configure(self, config: dict | None) -> dict:
        config = dict(config or {})
        unknown = set(config) - {"cpu"}
        if unknown:
            raise ConfigError(f"unknown x86_amx config key(s): {', '.join(repr(k) for k in sorted(unknown))} (known: cpu)")
        name = config.get("cpu", DEFAULT_CPU)
        cpu_model(name)
        return {"cpu": name}

    def new_state(self, config: dict, journal: Journal) -> X86AmxState:
        return X86AmxState(journal, cpu_model(config["cpu"]))

    def new_context(self, state: X86AmxState, memory) -> X86Context:
        return X86Context(state, memory, state.model)

    def assemble(self, text: str, source: str = "<input>", base: int | None = None) -> Program:
        return assemble(text, source, CODE_BASE if base is None else base)

    def disassemble(self, code: bytes, base: int | None = None) -> Program:
        return disassemble(code, CODE_BASE if base is None else base)

    def observe(self, state: X86AmxState) -> dict:
        """The state a trace can check: every GPR and RFLAGS, TILECFG, and each
        configured tile's rows x colsb bytes (what TILESTORED would store)."""
        regs = {name: state.read_register(name) for name in state.register_names() if name != "rip"}
        tiles = {}
        if state.tilecfg.configured:
            for t in range(8):
                rows, colsb = state.tile_shape(t)
                if rows and colsb:
                    tiles[f"tmm{t}"] = state.tiles[t, :rows, :colsb].tobytes()
        return {"regs": regs, "tiles": tiles, "tilecfg": state.tilecfg.to_bytes()}

    def render_state(self, state: X86AmxState, program: Program | None = None, **options):
        from .render import state_view

        return state_view(state, program, **options)

    # ---- step-through views --------------------------------------------------------
    def render_step(self, record, state: X86AmxState, program: Program | None = None, **options):
        from .render import step_view

        return step_view(record, state, program, **options)

    def render_item(self, state: X86AmxState, what: str, args: list[str], program: Program | None = None, **options):
        from .render import item_view

        return item_view(state, what, args, program, **options)

    def watch_value(self, state: X86AmxState, what: str):
        from .render import watch_value

        return watch_value(state, what)

    def state_from_observed(self, observed: dict, previous: X86AmxState, memory, init) -> tuple[X86AmxState, list]:
        """A state object holding what another backend (silicon) observed, and the writes that
        lead to it from ``previous``, so the stepper can show the CPU's state and changes."""
        import numpy as np

        from ..core.journal import Journal
        from .state import TileConfig

        journal = Journal()
        state = X86AmxState(journal, previous.model)
        state.gpr, state.rip, state.rflags = list(previous.gpr), previous.rip, previous.rflags
        state.tilecfg, state.tiles = previous.tilecfg.copy(), previous.tiles.copy()
        raw = observed.get("raw", {})
        for name, value in observed.get("regs", {}).items():
            if name == "rflags":
                state.set_rflags(value)
            else:
                state.write_register(name, value)
        if "tilecfg" in raw:
            image = raw["tilecfg"]
            state.set_tilecfg(TileConfig.from_bytes(image) if image[0] else TileConfig())
            tiles = np.frombuffer(raw["tiles"], dtype=np.uint8).reshape(8, 16, 64)
            for t in range(8):
                state.write_tile(t, tiles[t])
        state.rip = raw.get("rip", state.rip)
        previous_image = getattr(previous, "memory_image", {a: d for a, d, _w in init.memory})
        state.memory_image = {}
        for address, data, _writable in init.memory:
            now = memory.read(address, len(data)) if memory is not None else data
            state.memory_image[address] = now
            before = previous_image.get(address, data)
            if now != before:
                first = next(i for i, (x, y) in enumerate(zip(before, now)) if x != y)
                last = len(now) - next(i for i, (x, y) in enumerate(zip(before[::-1], now[::-1])) if x != y)
                journal.record("mem", address + first, before[first:last], now[first:last])
        return state, journal.take()

    # ---- hooks the CLI dispatches through (each module imported on first call) ----------
    def parse_show(self, item: str) -> tuple[int, str]:
        """``tmmN:TYPE`` as (N, TYPE), TYPE one of state.ELEMENT_TYPES."""
        import re

        from .state import ELEMENT_TYPES

        m = re.fullmatch(r"\s*tmm([0-7])\s*:\s*(\w+)\s*", item)
        if not m or m.group(2) not in ELEMENT_TYPES:
            raise ValueError(f"expected tmmN:TYPE with TYPE one of {', '.join(ELEMENT_TYPES)}")
        return int(m.group(1)), m.group(2)

    def explainer(self):
        from . import explain

        return explain

    def run_fuzz(self, cases: int, seed: int, **options):
        from .fuzz import run_fuzz  # needs hypothesis: ImportError reaches the CLI, which says so

        return run_fuzz(cases, seed, **options)

    def build_kernel(self, name: str, count: int | None = None, K: int | None = None):
        from . import kernels

        return kernels.build(name, count=count, K=K)

    def listing(self, code: bytes, base: int):
        from .decoder import listing

        return listing(code, base)

    # ---- differential comparison ------------------------------------------------
    def undefined_after(self, undefined: int | None, instruction: Instruction) -> int:
        """The status flags left undefined once ``instruction`` has run: those it leaves undefined,
        plus those undefined before that it does not write (e.g. IMUL's SF, ZF, AF, PF)."""
        undefined = undefined or 0
        if instruction.undefined is None:
            written = scalar.FLAGS_WRITTEN.get(instruction.form.mnemonic, 0)
            undefined = (undefined & ~written) | scalar.UNDEFINED_FLAGS.get(instruction.form.mnemonic, 0)
        return undefined

    def comparable(self, observed: dict, undefined: int | None) -> dict:
        """The observed state without what the architecture leaves undefined: RFLAGS is compared on
        its status flags only, less the ``undefined`` ones (see undefined_after)."""
        regs = dict(observed.get("regs", {}))
        if "rflags" in regs:
            regs["rflags"] &= STATUS_FLAGS & ~(undefined or 0)
        return {**observed, "regs": regs}

    def tile_divergence(self, name: str, a: bytes | None, b: bytes | None, observed: dict):
        """Name the first differing row and dword of a tile (rows x colsb bytes)."""
        from ..core.diff import Divergence

        if a is None or b is None or len(a) != len(b):
            return Divergence(name, a, b, detail="configured on one side only")
        cfg = observed.get("tilecfg", bytes(64))
        t = int(name[3:])
        colsb = int.from_bytes(cfg[16 + 2 * t : 18 + 2 * t], "little") or 64
        offset = next(i for i, (x, y) in enumerate(zip(a, b)) if x != y)
        row, column = divmod(offset, colsb)
        dword = column // 4
        value = lambda data: int.from_bytes(data[row * colsb + 4 * dword : row * colsb + 4 * dword + 4], "little")  # noqa: E731
        return Divergence(f"{name}[{row}]", a[row * colsb : (row + 1) * colsb], b[row * colsb : (row + 1) * colsb],
                          detail=f"first difference in dword {dword}: {value(a):#010x} vs {value(b):#010x}")

    def translate(self, context, instruction: Instruction):
        """The instruction bound to ``context``: a function that executes it and returns the next rip."""
        if instruction.undefined is not None:
            reason = instruction.undefined

            def undefined_encoding():
                raise UD(f"invalid encoding: {reason}")

            return undefined_encoding
        return instruction.form.translate(context, instruction.operands, instruction.next_address)


ISA = X86Amx()


def _register_backends() -> None:
    from ..core.backends import register_backend
    from .silicon import SiliconBackend

    register_backend(SiliconBackend())


_register_backends()

__all__ = ["ISA", "CPU_MODELS", "X86AmxState", "amx", "scalar"]

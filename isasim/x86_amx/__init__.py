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
from .state import X86AmxState

CODE_BASE = 0x400000


class X86Amx:
    name = "x86_amx"
    title = "Intel AMX (x86-64)"
    code_base = CODE_BASE

    def configure(self, config: dict | None) -> dict:
        config = dict(config or {})
        unknown = set(config) - {"cpu"}
        if unknown:
            raise ConfigError(f"unknown x86_amx config key(s): {', '.join(sorted(unknown))} (known: cpu)")
        name = config.get("cpu", DEFAULT_CPU)
        cpu_model(name)
        return {"cpu": name}

    def new_state(self, config: dict, journal: Journal) -> X86AmxState:
        state = X86AmxState(journal)
        state.model = cpu_model(config["cpu"])
        return state

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

    def execute(self, machine, instruction: Instruction) -> int | None:
        if instruction.undefined is not None:
            raise UD(f"invalid encoding: {instruction.undefined}")
        cpu = X86Context(machine.state, machine.memory, machine.state.model)
        result = instruction.form.execute(cpu, instruction.operands)
        if result is scalar.HALT:
            return None
        return instruction.next_address if result is None else result


ISA = X86Amx()

__all__ = ["ISA", "CPU_MODELS", "X86AmxState", "amx", "scalar"]

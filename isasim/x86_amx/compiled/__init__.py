"""The x86_amx compiled engine (isasim.core.compiled): a plain run's tile loads and stores, TMULs, TILEZERO
and loop bookkeeping in one numba loop, every other instruction, and every case a body does not model, handed
back to the Python semantics.

    lowering.py  each instruction as a form number and int64 operands (or no compiled body)
    loop.py      the @njit dispatch loop and the scalar and tile-move bodies
    tmul.py      the TMUL bodies (integer, and bf16/fp16 bit for bit as numerics/tmul.py)
    program.py   the CompiledProgram: the state into arrays at a run's start, back at its end

numba is imported only by ``build`` (and the modules above): without it every run takes the Python path.
"""

from __future__ import annotations

from ...core.compiled import numba_available


def build(program, config: dict, *, disabled=(), plant: str | None = None):
    """The compiled program for ``program`` under ``config`` (a configured x86_amx config), None without numba.
    ``disabled``: form names (lowering.FORM_NAMES) left to the Python semantics; ``plant``: a form name whose
    first instruction deliberately perturbs its result (for the identity tests to catch)."""
    if not numba_available():
        return None
    from .program import X86CompiledProgram
    from ..config import cpu_model

    return X86CompiledProgram(program, cpu_model(config["cpu"]), disabled, plant)


def form_names() -> tuple[str, ...]:
    """Every form the engine has a compiled body for."""
    from .lowering import FORM_NAMES

    return tuple(FORM_NAMES.values())

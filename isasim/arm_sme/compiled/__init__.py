"""The arm_sme compiled engine (see isasim.core.compiled): the hot instructions of a plain run lowered to
body numbers and integer operands (lowering.py) and run by one numba loop (bodies.py) over the state's
arrays; program.py moves the registers in and out.  Everything it has no body for, and every case a
body's checks refuse (a fault, an access across regions, a mode check), runs in the Python semantics."""

from __future__ import annotations

from ...core.compiled import numba_available


def compile_program(program, config: dict, **options):
    """The program lowered for the compiled loop, or None (numba missing, or no instruction has a body)."""
    if not numba_available():
        return None
    from .program import ArmCompiledProgram

    made = ArmCompiledProgram(program, config, **options)
    return made if made.bodies.any() else None

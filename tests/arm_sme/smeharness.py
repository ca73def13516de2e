"""Running small arm_sme programs in the tests: a machine at an SVL with Z registers and ZA seeded."""

from __future__ import annotations

import numpy as np

from isasim.core.machine import Machine


def run(program: str, *, svl: int = 512, regs: dict | None = None, arrays: dict | None = None,
        memory: list | None = None, features: list | None = None, keep_records: bool = False):
    config = {"svl": svl} if features is None else {"svl": svl, "features": features}
    machine = Machine("arm_sme", config)
    machine.load(machine.assemble(program), regs=regs or {}, memory=memory or [], arrays=arrays or {})
    result = machine.run(keep_records=keep_records)
    return machine, result


def vector(values, dtype, svl: int) -> bytes:
    """One SVL-bit vector holding ``values`` (repeated to fill it) as ``dtype`` elements."""
    count = svl // 8 // np.dtype(dtype).itemsize
    return np.resize(np.array(values, dtype=np.int64).astype(dtype), count).tobytes()


def za_elements(machine, row: int, dtype) -> np.ndarray:
    return machine.state.za[row].view(dtype)


def plant(monkeypatch, form_id: str, wrap) -> None:
    """A planted bug: isasim runs ``wrap(context, run, instruction)`` instead of ``run`` for every instruction of
    one form (through the execute contract's first step, Isa.prepare), for a test to show it is caught."""
    from isasim.arm_sme import ISA

    prepare = ISA.prepare

    def patched(instruction):
        bind = prepare(instruction)
        if instruction.invalid is not None or instruction.form.id != form_id:
            return bind

        def planted_bind(context):
            run = bind(context)
            return lambda: wrap(context, run, instruction)

        return planted_bind

    monkeypatch.setattr(ISA, "prepare", patched)

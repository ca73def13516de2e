"""The faults arm_sme raises, spelt one way: each kind's name as the Arm ARM writes it, and the function that
makes one (``raise undefined("...")``).

Semantics and the form checks raise these; the qemu backend reports QEMU's signals as the same kinds
(oracle/observation.py); explain lists them beside each form.
"""

from __future__ import annotations

from ..core.faults import Fault, MemoryFault

UNDEFINED = "UNDEFINED"  # the instruction is UNDEFINED in this state, configuration or encoding (SIGILL)
TRANSLATION = "TRANSLATION"  # a data access no init region maps (Arm: a translation fault on that address)
ALIGNMENT = "ALIGNMENT"  # isasim raises none (no access here needs alignment); QEMU's SIGBUS reads as one


def undefined(rule: str) -> Fault:
    """UNDEFINED: the instruction takes the Undefined Instruction exception, for the reason ``rule``."""
    return Fault(UNDEFINED, rule)


def translation(fault: MemoryFault) -> Fault:
    """A translation fault: a memory access ``fault`` found no mapped region for (or a write a read-only one)."""
    return Fault(TRANSLATION, fault.rule, address=fault.address, access=fault.access)

"""The x86 exceptions isasim raises, spelt one way: each kind's name as the SDM writes it, and the function
that makes one, named after the SDM's pseudocode (``raise UD("...")``).

Semantics raise these; the silicon backend reports the CPU's signals as the same kinds; form declarations
list them (``faults``) with the same names.
"""

from __future__ import annotations

from ..core.faults import Fault, MemoryFault

INVALID_OPCODE = "#UD"  # the instruction is undefined in this state or encoding (SIGILL on silicon)
GENERAL_PROTECTION = "#GP"  # #GP(0), e.g. an invalid tile configuration (SIGSEGV, si_code SI_KERNEL)
PAGE_FAULT = "#PF"  # an access to an address no mapped region covers, or a write to a read-only one
DIVIDE_ERROR = "#DE"  # DIV/IDIV by zero, or a quotient too large for its destination (SIGFPE on silicon)
KINDS = (INVALID_OPCODE, GENERAL_PROTECTION, PAGE_FAULT, DIVIDE_ERROR)


def UD(rule: str) -> Fault:
    """#UD, invalid opcode: the instruction is undefined in this state or encoding."""
    return Fault(INVALID_OPCODE, rule)


def GP(rule: str) -> Fault:
    """#GP(0), general protection: e.g. an invalid tile configuration."""
    return Fault(GENERAL_PROTECTION, rule)


def DE(rule: str) -> Fault:
    """#DE, divide error: DIV or IDIV by zero, or a quotient that does not fit in its destination."""
    return Fault(DIVIDE_ERROR, rule)


def PF(fault: MemoryFault) -> Fault:
    """#PF, page fault: a memory access to an address no mapped region covers."""
    return Fault(PAGE_FAULT, fault.rule, address=fault.address, access=fault.access)


def fault_kind(text: str) -> str:
    """A kind as a trace may spell it (``UD``, ``#UD``): x86 exceptions are written with '#'."""
    text = text.strip()
    return text if text.startswith("#") or not text.isupper() or len(text) > 3 else f"#{text}"

"""The toy's fault kinds, spelt once, and the functions that make them.

MEMFAULT is the toy's one architectural fault: an access to memory no init region maps, or a store to a
read-only one.  An encoding that breaks a rule (an element past acc[3], which only toy32 bytes can hold)
is UNDEFINED, the core's default for an invalid encoding (``Isa.invalid_encoding``).
"""

from __future__ import annotations

from isasim.core.faults import Fault, MemoryFault

MEMFAULT = "MEMFAULT"
UNDEFINED = "UNDEFINED"


def memfault(fault: MemoryFault) -> Fault:
    """The MEMFAULT a failed memory access raises, with the address and the rule the core's memory named."""
    return Fault(MEMFAULT, fault.rule, address=fault.address, access=fault.access)

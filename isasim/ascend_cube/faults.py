"""The faults the Ascend cube raises, spelt one way: each kind's name, and the function that makes one.

No public document names the cube's exceptions, so each kind is named after the rule it breaks.
Semantics and the context raise these (``raise faults.unsupported("...")``); form declarations list
the same kinds in their fault tables.
"""

from __future__ import annotations

from ..core.faults import Fault, MemoryFault

BUFFER_OVERFLOW = "BUFFER_OVERFLOW"  # a byte read or written lies past the end of an on-chip buffer
ALIGNMENT = "ALIGNMENT"  # a buffer address is not a multiple of the buffer's alignment
PARAM_RANGE = "PARAM_RANGE"  # a parameter, or a combination of them, is outside what the hardware takes
UNSUPPORTED = "UNSUPPORTED"  # the chip has no such mode, type pair or load
QUANT_PARAM = "QUANT_PARAM"  # a quant word (or the count of them) the Fixpipe cannot take
GM_FAULT = "GM_FAULT"  # a GM byte no init region maps, or a write to a read-only one
SYNC_RACE = "SYNC_RACE"  # two pipes' conflicting accesses to the same bytes with no flag or barrier between
SYNC_HANG = "SYNC_HANG"  # a WaitFlag no SetFlag can satisfy: the NPU's pipe would wait forever
SYNC_PAIRING = "SYNC_PAIRING"  # a SetFlag set again before its WaitFlag, or a flag left set at the end


def buffer_overflow(rule: str) -> Fault:
    return Fault(BUFFER_OVERFLOW, rule)


def alignment(rule: str) -> Fault:
    return Fault(ALIGNMENT, rule)


def param_range(rule: str) -> Fault:
    return Fault(PARAM_RANGE, rule)


def unsupported(rule: str) -> Fault:
    return Fault(UNSUPPORTED, rule)


def quant_param(rule: str) -> Fault:
    return Fault(QUANT_PARAM, rule)


def gm_fault(fault: MemoryFault) -> Fault:
    """The core's memory fault of a GM access, as the cube reports it (its rule, address and access kept)."""
    return Fault(GM_FAULT, fault.rule, address=fault.address, access=fault.access)


def sync_race(rule: str) -> Fault:
    return Fault(SYNC_RACE, rule)


def sync_hang(rule: str) -> Fault:
    return Fault(SYNC_HANG, rule)


def sync_pairing(rule: str) -> Fault:
    return Fault(SYNC_PAIRING, rule)

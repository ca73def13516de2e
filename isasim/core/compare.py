"""Comparing two observed states: the one walker ``replay`` and ``diff`` share.

A replay compares what a trace expects with what a backend observed; a diff
compares what two backends observed.  Both walk the same state in the same
reading order (the fault, the registers, the ISA's arrays, memory) and report
:class:`Difference` values, so the two commands cannot disagree about what
"the same" means: a register is compared as the ISA's ``comparable`` says
(less what the architecture leaves undefined), an array byte for byte with the
location of its first differing element in the ISA's words.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterator

from .isa import first_byte_difference
from .program import Instruction

SHOWN_HEX_DIGITS = 64  # a longer byte string is shown by its start and its length


def shown(value) -> str:
    """A compared value in a message: bytes as hex (long ones cut), integers as hex, None as "nothing"."""
    if value is None:
        return "nothing"
    if isinstance(value, (bytes, bytearray)):
        text = bytes(value).hex()
        return text if len(text) <= SHOWN_HEX_DIGITS else text[:SHOWN_HEX_DIGITS] + f"... ({len(value)} bytes)"
    if isinstance(value, int) and not isinstance(value, bool):
        return hex(value)
    return str(value)


@dataclass
class Difference:
    """One place where two states differ.

    where: the location: ``"expect.regs.rax"`` in a replay, ``"rax"``, ``"tmm0[3]"``,
           ``"memory 0x20005"`` or ``"fault"`` in a diff.
    a, b:  the two values (replay: expected, then actual).
    detail: more on where inside the value they first differ.
    index, instruction: the instruction after which they differ (lockstep, per-step checks).
    """

    where: str
    a: object
    b: object
    detail: str = ""
    index: int | None = None
    instruction: Instruction | None = None
    array: str | None = None  # the ISA array it lies in (a and b are then parts of it, e.g. one tile row)

    def describe(self, a_name: str | None = None, b_name: str | None = None) -> str:
        """A replay's wording ("expected A, got B") without names, a diff's ("sim A, silicon B") with them."""
        at = "" if self.instruction is None else f"after instruction {self.instruction.index} ({self.instruction.text}): "
        if a_name is None:
            text = f"{at}{self.where}: expected {shown(self.a)}, got {shown(self.b)}"
        else:
            a = self.a.hex() if isinstance(self.a, (bytes, bytearray)) else shown(self.a)
            b = self.b.hex() if isinstance(self.b, (bytes, bytearray)) else shown(self.b)
            text = f"{at}{self.where}: {a_name} {a}, {b_name} {b}"
        return text + (f" ({self.detail})" if self.detail else "")

    # the names a replay reader knows these by
    @property
    def expected(self):
        return self.a

    @property
    def actual(self):
        return self.b


def register_differences(isa, a: dict, b: dict, undefined, names, label: str = "", *,
                         compared_values: bool = False) -> Iterator[Difference]:
    """Registers ``names`` compared as the ISA compares them (``comparable``, less ``undefined``).  A
    difference shows the values as read, or with ``compared_values`` the parts that were compared (a
    diff shows x86's RFLAGS as its status flags)."""
    a_cmp = isa.comparable({"regs": {n: a[n] for n in names if n in a}}, undefined)["regs"]
    b_cmp = isa.comparable({"regs": {n: b[n] for n in names if n in b}}, undefined)["regs"]
    for name in names:
        if a_cmp.get(name) != b_cmp.get(name):
            shown_a, shown_b = (a_cmp, b_cmp) if compared_values else (a, b)
            yield Difference(f"{label}{name}", shown_a.get(name), shown_b.get(name))


def array_difference(isa, name: str, a: bytes | None, b: bytes | None, observed: dict,
                     label: str = "") -> Difference | None:
    """Array ``name`` compared byte for byte; the ISA names the first differing element if it can."""
    offset = first_byte_difference(a, b)
    if offset is None:
        return None
    if a is None or b is None:
        return Difference(f"{label}{name}", a, b, detail="held on one side only")
    where, detail, a, b = isa.array_divergence(name, a, b, observed)
    return Difference(f"{label}{where}", a, b, detail=detail, array=name)


def memory_difference(address: int, a: bytes | None, b: bytes | None, *, expected: bool = False,
                      views=()) -> Difference | None:
    """A memory region compared byte for byte (None: not mapped on that side).  A diff names the first
    differing address and shows 16 bytes from it; a replay (``expected``) names the region it expects,
    and, where one of ``views`` (the init's named regions) holds the first differing byte, that element
    as a number of the view's type."""
    offset = first_byte_difference(a, b)
    if offset is None:
        return None
    if expected:
        where = f"expect.memory[{address:#x}]"
        if b is None:
            return Difference(where, a, b, detail="not mapped")
        detail = f"first difference at byte {offset}: {a[offset]:#04x} vs {b[offset]:#04x}"
        element = element_difference(views, address, a, b, offset)
        return Difference(where, a, b, detail=detail if element is None else f"{detail}; {element}")
    if a is None or b is None:
        return Difference(f"memory {address:#x}", a, b, detail="not mapped on one side")
    return Difference(f"memory {address + offset:#x}", a[offset:offset + 16], b[offset:offset + 16],
                      detail=f"region {address:#x}, byte {offset}")


def element_difference(views, address: int, a: bytes, b: bytes, offset: int) -> str | None:
    """"C[0][3] (int32): expected 12, got 13": the element of the named region holding byte ``offset`` of
    the compared bytes at ``address``, with both values, when one of ``views`` (RegionView) holds it whole."""
    import numpy as np

    from .numerics import ELEMENT_TYPES

    at = address + offset
    for view in views:
        element = ELEMENT_TYPES[view.element]
        rows, cols = view.shape
        index = (at - view.address) // element.size
        start = view.address + index * element.size - address  # the element's first byte in a and b
        if not 0 <= index < rows * cols or start < 0 or start + element.size > min(len(a), len(b)):
            continue
        want, got = (np.frombuffer(bytes(x[start:start + element.size]), dtype=element.storage).view(
            element.value_type)[0] for x in (a, b))
        return f"{view.name}[{index // cols}][{index % cols}] ({view.element}): expected {want}, got {got}"
    return None

"""Which element type a location is shown in: the user's ``--show`` choice, else the type the
instruction at hand declares for it (its form's ``element_types``), else the type the program
first uses it as, else the location's default."""

from __future__ import annotations

from ...core.errors import IsasimError
from ...core.numerics import ELEMENT_TYPES
from ...core.program import Instruction, Program

# the types a Z register, ZA or ZT0 can be shown in; the first is the default of a location nothing types
VECTOR_VIEWS = ("int32", "uint8", "int8", "int16", "uint16", "uint32", "int64", "uint64", "fp16", "bf16", "fp32")
ZA_VIEWS = VECTOR_VIEWS
PREDICATE_VIEWS = ("uint8",)  # a predicate's bytes (shown as one mark per element)

# the types of each element size, by suffix; the first is the size's default (unsigned, as the A64 loads
# and moves zero-extend); a .q element is shown as its two 64-bit halves
SIZE_TYPES = {"b": ("uint8", "int8"), "h": ("uint16", "int16", "fp16", "bf16"), "s": ("uint32", "int32", "fp32"),
              "d": ("uint64", "int64"), "q": ("uint64",)}
SUFFIX_OF_BYTES = {1: "b", 2: "h", 4: "s", 8: "d"}


def element_bytes(element: str) -> int:
    return ELEMENT_TYPES[element].size


def suffix_of(element: str) -> str:
    """The element size letter of a type (int16: h)."""
    return SUFFIX_OF_BYTES[element_bytes(element)]


def views_of(name: str) -> tuple[str, ...]:
    """The types array ``name`` can be shown in (--show NAME:TYPE)."""
    return PREDICATE_VIEWS if name.startswith("p") or name == "ffr" else VECTOR_VIEWS


def sized_type(suffix: str, words: list[str], preferred: str | None, location: str) -> str:
    """The type of elements of size ``suffix``: the one among ``words`` (an error if it has another size),
    else ``preferred`` if it has this size, else the size's default."""
    allowed = SIZE_TYPES[suffix]
    asked = [word for word in words if word in ELEMENT_TYPES]
    if asked and asked[0] not in allowed:
        raise IsasimError(f"{location} has {8 * element_bytes(allowed[0])}-bit elements: it is shown as "
                          f"{', '.join(allowed)}, not {asked[0]}")
    if asked:
        return asked[0]
    return preferred if preferred in allowed else allowed[0]


def operand_types(instruction: Instruction | None) -> dict[str, str]:
    """The locations an instruction's operands name ("za", "z4", "p0") and the element type its form
    declares for each (UDOT za.s[...], {z0.b-z3.b}, z4.b: za int32, z0-z4 uint8)."""
    found: dict[str, str] = {}
    if instruction is None or instruction.invalid is not None:
        return found
    form = instruction.form
    for operand, value, element in zip(form.operands, instruction.operands, form.element_types):
        if element is None:
            continue
        kind = operand.kind
        if kind.startswith("za"):
            names = ["za"]
        elif kind == "z_list" and isinstance(value, tuple):  # ConsecutiveList, StridedList: the numbers
            names = [f"z{n}" for n in value]
        elif kind == "z_list":
            names = [f"z{(value + i) % 32}" for i in range(operand.nreg)]
        elif kind == "z":
            names = [f"z{value}"]
        elif kind == "z_indexed":
            names = [f"z{value[0]}"]
        elif kind == "p":
            names = [f"p{value}"]
        else:
            continue
        for name in names:
            found.setdefault(name, element)
    return found


_PROGRAM_TYPES: dict[int, tuple[Program, dict[str, str]]] = {}  # by id(program): stepping asks on every step


def program_types(program: Program | None) -> dict[str, str]:
    """Each location's type by the first instruction of the program that types it (ld1b {z4.b}: z4 uint8)."""
    if program is None:
        return {}
    kept = _PROGRAM_TYPES.get(id(program))
    if kept is not None and kept[0] is program:
        return kept[1]
    found: dict[str, str] = {}
    for instruction in program.instructions:
        for name, element in operand_types(instruction).items():
            found.setdefault(name, element)
    _PROGRAM_TYPES.clear()  # one program is stepped at a time
    _PROGRAM_TYPES[id(program)] = (program, found)
    return found


def element_type(name: str, shown: dict[str, str] | None, instruction: Instruction | None = None,
                 program: Program | None = None) -> str:
    """The type location ``name`` (za, z4, p0, zt0) is shown in (see the module docstring)."""
    if shown and name in shown:
        return shown[name]
    for found in (operand_types(instruction), program_types(program)):
        if name in found:
            return found[name]
    return "uint8" if name.startswith("p") or name == "ffr" else VECTOR_VIEWS[0]

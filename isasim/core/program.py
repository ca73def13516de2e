"""Programs: decoded instructions at addresses, and the instruction forms they are made of.

A :class:`Program` is what an ISA's assembler or decoder produces and what every
backend runs: the simulator executes its instructions, the silicon backend runs
its ``code`` bytes.  Both views come from the same encoding, so they cannot drift.
An ISA whose binary encoding is not public (the Ascend cube) assembles text into
instructions without bytes: such a program runs on the simulator, and says so when
asked for its code.

A :class:`Form` is one ISA's definition of one encoding form of an instruction
(Sail's and the Arm ARM's "encoding", one row of the Intel SDM's opcode table).
One mnemonic may have many forms (A64's UDOT has a dozen), so forms are keyed by
an ``id`` unique per form, and a :class:`FormTable` finds the forms of a mnemonic.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterator, Protocol, runtime_checkable

from .errors import IsasimError


@runtime_checkable
class Form(Protocol):
    """What the core and the CLI may rely on from any ISA's instruction form.

    id:       unique among the ISA's forms, stable, and readable: it names one
              encoding form, e.g. x86_amx's ``"TDPBUSD_tmm1_tmm2_tmm3"`` (A64 would
              have ``UDOT`` forms for each element size and operand shape).
    mnemonic: the name as written in assembly, lower case (shared by the forms of
              one instruction).
    syntax:   the vendor manual's syntax line, e.g. ``"TDPBUSD tmm1, tmm2, tmm3"``.
    summary:  one line saying what the form does.

    These four are all the core and the CLI use.  Everything else a form offers is
    optional, the ISA's own business, reached through the ISA object's hooks: x86_amx
    forms also declare ``feature`` (the CPUID feature they need), ``doc`` (the
    pseudocode ``explain`` prints), ``faults``, ``operand_roles`` and ``element_types``;
    every ISA's forms have ``prepare`` (the execute contract, isasim.core.isa), reached
    through ``Isa.prepare``; an ISA with a public binary encoding encodes (x86_amx:
    ``encode``), a text-only one (the Ascend cube) does not.
    """

    @property
    def id(self) -> str: ...

    @property
    def mnemonic(self) -> str: ...

    @property
    def syntax(self) -> str: ...

    @property
    def summary(self) -> str: ...


def syntax_id(syntax: str) -> str:
    """A form id made from a manual's syntax line: the mnemonic and the operand names,
    joined by underscores (``"TILELOADD tmm1, sibmem"`` -> ``"TILELOADD_tmm1_sibmem"``)."""
    mnemonic, _, operands = syntax.strip().partition(" ")
    return "_".join([mnemonic] + [o.strip().replace(" ", "_") for o in operands.split(",") if o.strip()])


class FormTable:
    """An ISA's forms in declaration order, keyed by id, and found by mnemonic.

    Iterating gives the forms (as iterating a list of them would); ``table[id]`` is
    one form; ``of_mnemonic(m)`` is every form of mnemonic ``m``, in declaration
    order (empty if there is none).
    """

    def __init__(self) -> None:
        self._by_id: dict[str, Any] = {}
        self._by_mnemonic: dict[str, list[Any]] = {}

    def add(self, form: Any) -> Any:
        """Register ``form``; two forms with one id are a mistake in the declarations."""
        if form.id in self._by_id:
            raise ValueError(f"two instruction forms have the id {form.id!r}")
        self._by_id[form.id] = form
        self._by_mnemonic.setdefault(form.mnemonic, []).append(form)
        return form

    def __getitem__(self, form_id: str) -> Any:
        return self._by_id[form_id]

    def get(self, form_id: str, default: Any = None) -> Any:
        return self._by_id.get(form_id, default)

    def __contains__(self, form: Any) -> bool:
        """Whether ``form`` (the object, not an id) is one of this table's forms."""
        return self._by_id.get(getattr(form, "id", None)) is form

    def __iter__(self) -> Iterator[Any]:
        return iter(self._by_id.values())

    def __len__(self) -> int:
        return len(self._by_id)

    def __add__(self, other: Any) -> list:
        """The forms of both tables, in order, as a list (``amx.FORMS + scalar.FORMS``)."""
        return list(self) + list(other)

    def ids(self) -> list[str]:
        return list(self._by_id)

    def mnemonics(self) -> list[str]:
        return list(self._by_mnemonic)

    def of_mnemonic(self, mnemonic: str) -> tuple:
        return tuple(self._by_mnemonic.get(mnemonic, ()))


class NoEncodingError(IsasimError):
    """A program of a text-only ISA was asked for its bytes."""


@dataclass
class Instruction:
    """One decoded instruction.

    form:     the ISA's definition of this instruction form (encoding, syntax,
              semantics and explanation live there).
    operands: the decoded operands, in assembly order.
    address:  where it sits in the code.
    encoding: its bytes, or None for an ISA without a public binary encoding.
    size:     how far the next instruction's address is: len(encoding) when there
              is an encoding (and then it may be left out), else the ISA's step.
    text:     canonical assembly text (what the disassembler prints).
    line:     the source line it came from, if it was assembled from text.
    invalid:  for an encoding that decodes to a known opcode but breaks an
              encoding rule the hardware checks (x86_amx: VEX.L=1): why it is
              undefined.  Executing it raises the ISA's undefined-instruction fault.
    """

    form: Any
    operands: tuple
    address: int
    encoding: bytes | None
    text: str
    line: int | None = None
    index: int = 0
    invalid: str | None = None  # why the encoding is invalid (None: it is valid)
    extra: dict = field(default_factory=dict)
    size: int | None = None

    def __post_init__(self) -> None:
        if self.encoding is not None:
            if self.size is None:
                self.size = len(self.encoding)
            elif self.size != len(self.encoding):
                raise ValueError(f"{self.text}: size {self.size} but {len(self.encoding)} encoding bytes")
        elif self.size is None:
            raise ValueError(f"{self.text}: an instruction without an encoding needs a size (its address step)")

    @property
    def next_address(self) -> int:
        return self.address + self.size

    @property
    def mnemonic(self) -> str:
        return self.text.split(None, 1)[0] if self.text else ""


@dataclass
class Program:
    isa: str
    base: int
    instructions: list[Instruction]
    labels: dict[str, int] = field(default_factory=dict)
    source: str = "<input>"

    def __post_init__(self) -> None:
        self._by_address = {}
        for i, instruction in enumerate(self.instructions):
            instruction.index = i
            self._by_address[instruction.address] = instruction
        self._end = self.base + sum(i.size for i in self.instructions)

    @property
    def has_encoding(self) -> bool:
        """Whether every instruction has bytes (false for a text-only ISA's program)."""
        return all(i.encoding is not None for i in self.instructions)

    @property
    def code(self) -> bytes:
        """The program's bytes; NoEncodingError for a text-only ISA, whose binary encoding is not public."""
        missing = next((i for i in self.instructions if i.encoding is None), None)
        if missing is not None:
            raise NoEncodingError(f"{self.source}: {self.isa} instructions have no binary encoding "
                                  f"(#{missing.index} '{missing.text}' is text only), so the program has no code bytes")
        return b"".join(i.encoding for i in self.instructions)

    @property
    def end(self) -> int:
        """The address just past the last instruction."""
        return self._end

    def at(self, address: int) -> Instruction | None:
        return self._by_address.get(address)

    def label_at(self, address: int) -> str | None:
        for name, value in self.labels.items():
            if value == address:
                return name
        return None

    def listing(self) -> str:
        """Index, address, bytes and text per instruction; a program without an encoding says so
        once at the top and leaves the bytes column out."""
        encoded = self.has_encoding
        lines = [] if encoded else [f"({self.isa} has no binary encoding: text only)"]
        for ins in self.instructions:
            label = self.label_at(ins.address)
            if label:
                lines.append(f"{label}:")
            code = f"{ins.encoding.hex(' '):<30} " if encoded else ""
            lines.append(f"  {ins.index:4d}  {ins.address:#x}  {code}{ins.text}")
        return "\n".join(lines)

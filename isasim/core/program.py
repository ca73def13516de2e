"""Programs: decoded instructions at addresses.

A :class:`Program` is what an ISA's assembler or decoder produces and what every
backend runs: the simulator executes its instructions, the silicon backend runs
its ``code`` bytes.  Both views come from the same encoding, so they cannot drift.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class Instruction:
    """One decoded instruction.

    form:     the ISA's definition of this instruction form (encoding, syntax,
              semantics and explanation live there).
    operands: the decoded operands, in assembly order.
    address:  where it sits in the code.
    encoding: its bytes.
    text:     canonical assembly text (what the disassembler prints).
    line:     the source line it came from, if it was assembled from text.
    undefined: for an encoding that decodes to a known opcode but breaks an
              encoding rule the hardware checks (VEX.L=1, tmm8, ...): why it is
              undefined.  Executing it raises the ISA's undefined-instruction fault.
    """

    form: Any
    operands: tuple
    address: int
    encoding: bytes
    text: str
    line: int | None = None
    index: int = 0
    undefined: str | None = None
    extra: dict = field(default_factory=dict)

    @property
    def length(self) -> int:
        return len(self.encoding)

    @property
    def next_address(self) -> int:
        return self.address + len(self.encoding)

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
        self._end = self.base + sum(len(i.encoding) for i in self.instructions)

    @property
    def code(self) -> bytes:
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
        lines = []
        for ins in self.instructions:
            label = self.label_at(ins.address)
            if label:
                lines.append(f"{label}:")
            lines.append(f"  {ins.index:4d}  {ins.address:#x}  {ins.encoding.hex(' '):<30} {ins.text}")
        return "\n".join(lines)

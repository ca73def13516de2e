"""A64 encodings declared as the Arm ARM draws them: a 32-bit word, bit 31 first, in named fields.

A pattern is a space-separated list of pieces, most significant first; the pieces add up to
32 bits:

    0101      fixed bits (part of the opcode)
    Zm:4      a field of 4 bits named Zm (an operand's bits)

``Encoding("11000001 0 sz=1 1 G:1 Zm:4 ...")``: ``name=bits`` is a named field whose value
is fixed for this form (the Arm ARM's ``sz``/``opc`` boxes), kept by name so that explain
can label it.  One Encoding gives the opcode's mask and value (decode: ``matches``), the bit
range of each field (``fields``), and packs or unpacks the operand fields.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class BitField:
    name: str
    high: int  # the field's bits high:low, inclusive
    low: int
    fixed: int | None = None  # its value when the form fixes it

    @property
    def width(self) -> int:
        return self.high - self.low + 1

    def get(self, word: int) -> int:
        return (word >> self.low) & ((1 << self.width) - 1)

    def put(self, value: int) -> int:
        if not 0 <= value < (1 << self.width):
            raise ValueError(f"{value} does not fit the {self.width}-bit field {self.name}")
        return value << self.low


@dataclass(frozen=True)
class Encoding:
    pattern: str
    mask: int = field(init=False)
    value: int = field(init=False)
    fields: dict[str, BitField] = field(init=False)  # the operand fields, by name
    boxes: tuple[BitField, ...] = field(init=False)  # every piece, fixed or not, most significant first

    def __post_init__(self) -> None:
        mask = value = 0
        bit = 32
        fields: dict[str, BitField] = {}
        boxes = []
        for piece in self.pattern.split():
            if ":" in piece:  # an operand field
                name, width = piece.split(":")
                bit -= int(width)
                box = BitField(name, bit + int(width) - 1, bit)
                fields[name] = box
            elif "=" in piece:  # a named field this form fixes
                name, bits = piece.split("=")
                bit -= len(bits)
                box = BitField(name, bit + len(bits) - 1, bit, int(bits, 2))
            else:
                bit -= len(piece)
                box = BitField("", bit + len(piece) - 1, bit, int(piece, 2))
            if box.fixed is not None:
                mask |= ((1 << box.width) - 1) << box.low
                value |= box.fixed << box.low
            boxes.append(box)
        if bit != 0:
            raise ValueError(f"encoding pattern {self.pattern!r} has {32 - bit} bits, not 32")
        object.__setattr__(self, "mask", mask)
        object.__setattr__(self, "value", value)
        object.__setattr__(self, "fields", fields)
        object.__setattr__(self, "boxes", tuple(boxes))

    def matches(self, word: int) -> bool:
        return word & self.mask == self.value

    def pack(self, values: dict[str, int]) -> int:
        word = self.value
        for name, box in self.fields.items():
            word |= box.put(values[name])
        return word

    def unpack(self, word: int) -> dict[str, int]:
        return {name: box.get(word) for name, box in self.fields.items()}

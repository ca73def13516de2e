"""AVX-512's opmask registers k0-k7 and a masked operand, as ``objdump -M intel`` prints them: ``zmm0{k1}{z}``
(the destination written under k1, the other elements zeroed), ``ZMMWORD PTR [rdi]{k2}`` (a store that
writes only the elements k2 selects).  The mask names one of k1-k7: k0 in the EVEX.aaa field means no mask."""

from __future__ import annotations

from dataclasses import dataclass

from .syntax import Mem, Reg, operand_text

OPMASK_REGISTERS = tuple(f"k{n}" for n in range(8))


def opmask_number(name: str) -> int | None:
    """n of the opmask register kn, None for any other name."""
    return OPMASK_REGISTERS.index(name) if name in OPMASK_REGISTERS else None


@dataclass(frozen=True)
class Masked:
    """An EVEX destination under a write mask: ``operand`` (a vector register or memory), ``mask`` (k1-k7) and
    whether the elements the mask leaves out are zeroed ({z}) or keep their value (merging)."""

    operand: Reg | Mem
    mask: str
    zeroing: bool = False

    def __str__(self) -> str:
        return f"{operand_text(self.operand)}{{{self.mask}}}" + ("{z}" if self.zeroing else "")


def unmasked(operand):
    """The register or memory operand under any mask."""
    return operand.operand if isinstance(operand, Masked) else operand

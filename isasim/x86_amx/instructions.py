"""An x86 instruction from its form and operands: the text objdump prints for it, and the address a
RIP-relative operand names once the instruction is placed.

The assembler (text -> form and operands, through the encoders) and the decoder (bytes -> form and
operands) both end here, so an instruction reads the same whichever way it came.
"""

from __future__ import annotations

from dataclasses import replace

from ..core.program import Instruction
from .operands import Mem

_ADDRESS_MASK = (1 << 64) - 1


def instruction_text(form, operands: tuple, prefixes: tuple[str, ...] = ()) -> str:
    """What ``objdump -M intel`` prints: the form's text of the operands, after the prefix words it shows
    before a NOP (``data16 cs nop WORD PTR [rax+rax*1+0x0]``)."""
    text = form.format(operands)
    return " ".join(prefixes + (text,)) if prefixes else text


def placed(operands: tuple, next_address: int) -> tuple:
    """The operands of an instruction that ends at ``next_address``: a [rip+disp] operand names the address
    next_address + disp (decoded operands already carry it)."""
    return tuple(replace(o, rip_target=(next_address + o.disp) & _ADDRESS_MASK)
                 if isinstance(o, Mem) and o.base == "rip" and o.rip_target is None else o for o in operands)


def make_instruction(form, operands: tuple, address: int, encoding: bytes, prefixes: tuple[str, ...] = ()
                     ) -> Instruction:
    """The instruction ``encoding`` is at ``address``: ``form`` with ``operands`` (and the NOP prefix words
    objdump prints, kept in ``extra["prefixes"]``)."""
    operands = placed(operands, address + len(encoding))
    instruction = Instruction(form, operands, address, encoding, instruction_text(form, operands, prefixes))
    if prefixes:
        instruction.extra["prefixes"] = prefixes
    return instruction

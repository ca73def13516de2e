"""A64 words to instructions: the first form whose fixed bits match, its fields unpacked.

The declarations are unambiguous (tests/arm_sme check that no word matches two forms), so
the first match is the only one.
"""

from __future__ import annotations

from ..core.errors import DecodeError
from ..core.program import Instruction, Program
from .forms import FORMS
from .instructions import make_instruction


def decode_word(word: int, address: int) -> Instruction:
    for form in FORMS:
        if form.encoding.matches(word):
            fields = form.encoding.unpack(word)
            reserved = [name for name, value in form.extra.get("reserved", {}).items() if fields[name] == value]
            if reserved:  # e.g. LD1W (scalar plus scalar) with Rm = 31: the Arm ARM makes it UNDEFINED
                raise DecodeError(f"cannot decode {word:#010x} at {address:#x}: {form.mnemonic} with {reserved[0]} = "
                                  f"{fields[reserved[0]]} is UNDEFINED (Arm ARM)")
            undefined = form.extra.get("undefined_when", lambda _: None)(fields)
            if undefined:  # e.g. a bitmask immediate DecodeBitMasks refuses
                raise DecodeError(f"cannot decode {word:#010x} at {address:#x}: {form.mnemonic} is UNDEFINED here: "
                                  f"{undefined}")
            return make_instruction(form, fields, address, word)
    raise DecodeError(f"cannot decode {word:#010x} at {address:#x}: no arm_sme form has this encoding")


def disassemble(code: bytes, isa: str, base: int) -> Program:
    if len(code) % 4:
        raise DecodeError(f"A64 code is whole 32-bit words: {len(code)} bytes is not a multiple of 4")
    instructions = [decode_word(int.from_bytes(code[i:i + 4], "little"), base + i) for i in range(0, len(code), 4)]
    return Program(isa, base, instructions)


def listing(code: bytes, base: int):
    """(address, bytes, text, note, decoded) per word, going on past words no form decodes."""
    for i in range(0, len(code) - len(code) % 4, 4):
        word = code[i:i + 4]
        try:
            ins = decode_word(int.from_bytes(word, "little"), base + i)
        except DecodeError as error:
            yield base + i, word, f".inst {int.from_bytes(word, 'little'):#010x}", str(error), False
            continue
        yield base + i, word, ins.text, ins.invalid or "", True

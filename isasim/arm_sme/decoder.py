"""A64 words to instructions: the form whose fixed bits match, its fields unpacked.

The form is found through a decode table built once from the form declarations' encodings (their fixed
bits' mask and value, the only copy of each encoding), as QEMU's decodetree builds its decoders: the
top-level bits [31:25] index a table of 128 entries (A64's op0 field and the bits around it, which
every form but B, TBZ and TBNZ fixes whole); below that, a node looks at the bits every form left at
it fixes, and keys its children by their value; where the forms left fix no bit in common, it splits
on the bit most of them fix, and a form that leaves that bit open goes both ways.  A leaf holds the
few forms a word can still be, in declaration order, each checked against its whole mask.  A form that
leaves bits open is reachable from every value of them, so a word reaches every form it matches, and
the first of those in declaration order is the form a scan of every form would find.  The declarations
are unambiguous (tests/arm_sme check that no word matches two forms), so that is the only one.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..core.errors import DecodeError
from ..core.program import Instruction, Program
from .forms import FORMS, A64Form
from .instructions import make_instruction

TOP_SHIFT = 25  # the first level is indexed by bits [31:25] of the word
LEAF_FORMS = 4  # a node with this many forms or fewer tries them in turn


@dataclass(frozen=True)
class Split:
    """A node of the decode table: the bits it looks at, and the subtree for each value of them."""

    mask: int
    children: dict  # word & mask -> Split, or the leaf's tuple of forms


class DecodeTable:
    """The forms of ``forms`` found by their fixed opcode bits instead of by trying every one."""

    def __init__(self, forms):
        forms = tuple(forms)
        top = ((1 << (32 - TOP_SHIFT)) - 1) << TOP_SHIFT
        self.top = [_node(_compatible(forms, top, value << TOP_SHIFT), top)
                    for value in range(1 << (32 - TOP_SHIFT))]

    def find(self, word: int) -> A64Form | None:
        """The first form (in declaration order) whose fixed bits ``word`` has, or None."""
        node = self.top[word >> TOP_SHIFT]
        while isinstance(node, Split):
            node = node.children.get(word & node.mask, ())
        for form in node:
            if word & form.encoding.mask == form.encoding.value:
                return form
        return None


def _compatible(forms: tuple, mask: int, value: int) -> tuple:
    """The forms a word with ``value`` in the bits ``mask`` may still be (those that fix them otherwise go)."""
    return tuple(form for form in forms if (value ^ form.encoding.value) & mask & form.encoding.mask == 0)


def _node(forms: tuple, known: int):
    """The subtree that tells ``forms`` apart, given that the bits ``known`` are decided already."""
    if len(forms) <= LEAF_FORMS:
        return forms
    common = ~known & 0xFFFFFFFF
    for form in forms:
        common &= form.encoding.mask
    if common:
        values = {form.encoding.value & common for form in forms}
        if len(values) == 1:  # the forms agree on these bits: only the leaf's whole-mask check can refuse a word
            return _node(forms, known | common)
        return Split(common, {value: _node(tuple(f for f in forms if f.encoding.value & common == value),
                                           known | common) for value in values})
    bit = _splitting_bit(forms, known)
    if bit is None:  # no bit left that a form fixes: nothing tells them apart but trying them
        return forms
    return Split(bit, {value: _node(_compatible(forms, bit, value), known | bit) for value in (0, bit)})


def _splitting_bit(forms: tuple, known: int) -> int | None:
    """The undecided bit the most forms fix (the most even split among those), or None if no form fixes one."""
    best, best_score = None, None
    for position in range(32):
        bit = 1 << position
        if known & bit:
            continue
        fixing = [form for form in forms if form.encoding.mask & bit]
        if not fixing:
            continue
        ones = sum(1 for form in fixing if form.encoding.value & bit)
        score = (len(fixing), -abs(len(fixing) - 2 * ones))
        if best_score is None or score > best_score:
            best, best_score = bit, score
    return best


DECODE_TABLE = DecodeTable(FORMS)


def find_form(word: int) -> A64Form | None:
    """The form whose fixed bits ``word`` has (the first in declaration order), or None."""
    return DECODE_TABLE.find(word)


def decode_word(word: int, address: int) -> Instruction:
    form = find_form(word)
    if form is None:
        raise DecodeError(f"cannot decode {word:#010x} at {address:#x}: no arm_sme form has this encoding")
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

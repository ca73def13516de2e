"""What an A64 form declaration is: its 32-bit encoding in named fields, its syntax,
the operands that fill the fields, the feature it needs, and its semantics.

The same declaration drives the assembler (operands parse text into fields, the encoding
packs them), the decoder (the encoding's fixed bits match a word, the fields unpack), the
disassembler (operands print the fields as llvm-objdump does), the machine (``execute``)
and ``explain`` (``doc``).  Forms are keyed by id: UDOT alone has a dozen.  The declarations
themselves are in the modules beside this one, one per instruction family.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import partial
from typing import Callable

from ...core.isa import raising
from ...core.program import FormTable
from ..context import END
from ..encoding import Encoding
from ..operands import GReg
from ..operands.common import SUFFIX_BYTES


ARCHITECTURE_BASE = ("A64", "SME", "SME2")  # what every configuration has: no feature check


@dataclass(frozen=True)
class A64Form:
    id: str
    mnemonic: str
    syntax: str  # the Arm ARM's syntax line
    summary: str
    encoding: Encoding
    operands: tuple = ()
    execute: Callable = None  # execute(cpu, *operand values) -> None | branch offset | END
    feature: str = "A64"  # "A64" (the base ISA), "SME", "SME2" or "SME_I16I64"
    doc: str = ""  # the Operation, as the Arm ARM writes it
    group: str = "scalar"
    # extra: "alias" (a mnemonic always printed instead), "aliases" (Alias, ... tried in order),
    # "reserved" ({field: value} the decoder refuses), "undefined_when" (fields -> why they are UNDEFINED or None),
    # "canonical" (fields -> the fields the assembler makes of their text, where a word may spell a value two ways),
    # "written_as_aliases_only" (the mnemonic is the Arm ARM's placeholder, b.cond: only the aliases are assembly)
    extra: dict = field(default_factory=dict)

    def prepare(self, instruction):
        """The execute contract (isasim.core.isa): the feature is checked once per machine, when the
        instruction is bound to its context, not on every execution."""
        execute, operands = self.execute, instruction.operands
        address, next_address = instruction.address, instruction.next_address
        feature = None if self.feature in ARCHITECTURE_BASE else self.feature

        def bind(context):
            if feature is not None and feature not in context.state.features:
                return raising(lambda: context.feature_missing(feature))

            def run():
                target = execute(context, *operands)
                if target is None:
                    return next_address
                if target is END:
                    return None
                return address + target

            return run

        return bind

    @property
    def fixed_text(self) -> str:
        """The text of a form without operands, or with fixed ones (``smstart za``)."""
        return self.extra.get("text", self.mnemonic)

    @property
    def element_types(self) -> tuple[str | None, ...]:
        """The element type of each operand, in operand order (None where it has no sized elements: a
        scalar, a governing predicate, LDR's whole register).  The size is the operand's suffix; the kind
        comes from the form's shape: a dot's or outer product's Zn and Zm signedness (the ZA sum signed,
        as AMX's TMUL accumulators are), an FP form's format; any other form's elements are unsigned,
        as the A64 loads and moves zero-extend."""
        shape = self.extra.get("shape")
        fp = getattr(shape, "kind", None)  # the FP shapes: fdot, bfdot, fmopa, fmopa_widening, bfmopa
        types = []
        for operand in self.operands:
            size = getattr(operand, "suffix", None) or getattr(operand, "esize", None)
            if not isinstance(size, str):
                types.append(None)
                continue
            accumulator = operand.kind.startswith("za")
            bits = 8 * SUFFIX_BYTES[size]
            if fp is not None:
                types.append("fp32" if accumulator or fp == "fmopa" else "bf16" if fp.startswith("bf") else "fp16")
            elif shape is not None:
                signed = accumulator or (shape.signed1 if operand.field.startswith("Zn") else shape.signed2)
                types.append(f"{'' if signed else 'u'}int{bits}")
            else:
                types.append(f"uint{min(bits, 64)}")  # a .q element is shown as its two 64-bit halves
        return tuple(types)


@dataclass(frozen=True)
class Alias:
    """Another name for some encodings of a form, as the Arm ARM's alias tables give it (CMP is
    SUBS with Rd = 31): the disassembler prints the first alias whose ``preferred(fields)`` holds,
    as llvm-objdump does; the assembler also accepts the alias, its operands filling the fields
    that ``fixed`` leaves open, and ``derive`` (if any) turning what they parsed into the form's fields
    (UBFX's #lsb, #width into immr and imms)."""

    mnemonic: str
    operands: tuple
    preferred: Callable[[dict], bool] = lambda fields: True
    fixed: dict = field(default_factory=dict)
    derive: Callable[[dict], dict] | None = None
    accepts: Callable[[dict], bool] | None = None  # what the assembler takes (default: where it is preferred)


FORMS = FormTable()


def add(form: A64Form) -> None:
    FORMS.add(form)


# the 64-bit general registers as operands: register 31 is XZR, or SP where the form says so
X, X_OR_SP = partial(GReg, width=64), partial(GReg, width=64, sp=True)


"""The SSE/AVX/AVX-512 moves' forms: one declaration per form (see semantics/vector.py for what they do).

Each form is its SDM syntax line, the iced-x86 ``Code`` rows it owns (the SDM's opcode table rows, which
say the CPUID feature each needs: required_features), whether a memory operand must be aligned, and its
semantics function.  encoding/vector.py encodes and decodes them by those rows.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, ClassVar

import iced_x86

from ...core.program import FormTable
from ..context import X86Context
from ..encoding.iced import VECTOR_OR_MEM
from ..faults import GP
from ..operands import GPR_VIEWS, Mem, Reg, vector_register
from ..semantics import vector as semantics
from ..semantics.vector import vl
from .iced_rows import IcedRowsForm


FEATURE = "SSE2"  # the lowest feature of the module; each form's rows say which one they need


@dataclass
class VectorForm(IcedRowsForm):
    syntax: str  # the SDM's instruction column, generic over widths
    mnemonic: str  # as objdump prints it
    semantics: Callable = field(repr=False)
    code_names: tuple[str, ...] = ()  # the iced Codes (SDM opcode rows) of the form
    aligned: bool = False  # a memory operand must be aligned to its size (#GP(0) otherwise)
    feature: str = FEATURE
    codes: list[int] = field(default_factory=list)
    element_types: tuple[str, ...] = ()
    undefined_flags: int = 0

    row_table: ClassVar[dict] = {}  # iced Code -> its Row (this module's ROWS)

    def execute(self, cpu: X86Context, operands: tuple):
        for feature in required_features(self, operands):
            cpu.require_feature(feature, self.mnemonic)
        return self._checked_semantics(cpu, operands)

    def _checked_semantics(self, cpu: X86Context, operands: tuple):
        """The semantics after the alignment check (#GP) of a form that requires aligned memory."""
        if self.aligned:
            for o in operands:
                if isinstance(o, Mem) and cpu.effective_address(o) % o.size:
                    raise GP(f"{self.mnemonic}: the {o.size}-byte memory operand at "
                             f"{cpu.effective_address(o):#x} is not {o.size}-byte aligned")
        return self.semantics(cpu, *operands)

    def prepare(self, instruction):
        """The execute contract (isasim.core.isa; see AmxForm.prepare): ``bind(cpu)`` checks the CPU model's
        features once (the operands decide which: an EVEX form needs AVX-512)."""
        operands, next_address = instruction.operands, instruction.next_address
        features, mnemonic, checked_semantics = required_features(self, operands), self.mnemonic, self._checked_semantics

        def bind(cpu: X86Context):
            missing = [feature for feature in features if feature not in cpu.model.features]
            if missing:
                def unsupported() -> int:
                    cpu.require_feature(missing[0], mnemonic)  # raises #UD
                    return next_address

                return unsupported

            def run() -> int | None:
                checked_semantics(cpu, operands)
                return next_address

            return run

        return bind


FORMS = FormTable()


def declare(semantics: Callable, syntax: str, *, codes: tuple[str, ...], aligned: bool = False) -> VectorForm:
    """Declare a vector instruction: its semantics, its SDM syntax line and its iced Code rows."""
    name = syntax.split()[0]
    form = VectorForm(syntax, name.lower(), semantics, codes, aligned)
    FORMS.add(form)
    return form


# ---------------------------------------------------------------------------
# The forms
# ---------------------------------------------------------------------------


declare(semantics.pxor, "PXOR xmm1, xmm2/m128", codes=("PXOR_XMM_XMMM128",), aligned=True)
declare(semantics.vpxor, "VPXOR xmm1, xmm2, xmm3/m128", codes=("VEX_VPXOR_XMM_XMM_XMMM128", "VEX_VPXOR_YMM_YMM_YMMM256"))
declare(semantics.movaps, "MOVAPS dest, src", codes=("MOVAPS_XMM_XMMM128", "MOVAPS_XMMM128_XMM"), aligned=True)
declare(semantics.movups, "MOVUPS dest, src", codes=("MOVUPS_XMM_XMMM128", "MOVUPS_XMMM128_XMM"))
declare(semantics.movdqa, "MOVDQA dest, src", codes=("MOVDQA_XMM_XMMM128", "MOVDQA_XMMM128_XMM"), aligned=True)
declare(semantics.vmovdqa, "VMOVDQA dest, src", codes=("VEX_VMOVDQA_XMM_XMMM128", "VEX_VMOVDQA_YMM_YMMM256",
                                         "VEX_VMOVDQA_XMMM128_XMM", "VEX_VMOVDQA_YMMM256_YMM"), aligned=True)
declare(semantics.vmovdqu8, "VMOVDQU8 dest, src", codes=(
    "EVEX_VMOVDQU8_XMM_K1Z_XMMM128", "EVEX_VMOVDQU8_YMM_K1Z_YMMM256", "EVEX_VMOVDQU8_ZMM_K1Z_ZMMM512",
    "EVEX_VMOVDQU8_XMMM128_K1Z_XMM", "EVEX_VMOVDQU8_YMMM256_K1Z_YMM", "EVEX_VMOVDQU8_ZMMM512_K1Z_ZMM"))
declare(semantics.vpbroadcastw, "VPBROADCASTW dest, src", codes=(
    "VEX_VPBROADCASTW_XMM_XMMM16", "VEX_VPBROADCASTW_YMM_XMMM16", "EVEX_VPBROADCASTW_XMM_K1Z_XMMM16",
    "EVEX_VPBROADCASTW_YMM_K1Z_XMMM16", "EVEX_VPBROADCASTW_ZMM_K1Z_XMMM16", "EVEX_VPBROADCASTW_XMM_K1Z_R32",
    "EVEX_VPBROADCASTW_YMM_K1Z_R32", "EVEX_VPBROADCASTW_ZMM_K1Z_R32"))
declare(semantics.vzeroupper, "VZEROUPPER", codes=("VEX_VZEROUPPER",))


def is_legacy(form: VectorForm) -> bool:
    return not form.mnemonic.startswith("v")


def required_features(form: VectorForm, operands: tuple) -> tuple[str, ...]:
    """The CPUID features these operands' encoding of ``form`` needs (SDM: each row's CPUID column)."""
    if is_legacy(form):
        return ("SSE2",)
    if form.mnemonic == "vzeroupper":
        return ("AVX",)
    evex = form.mnemonic == "vmovdqu8" or any(
        isinstance(o, Reg) and (o.name in GPR_VIEWS or o.name.startswith("zmm")
                                or vector_register(o.name).number >= 16) for o in operands)
    if evex:
        return ("AVX512F", "AVX512BW") + (("AVX512VL",) if vl(operands[0]) < 512 else ())
    if form.mnemonic == "vpbroadcastw" or (form.mnemonic == "vpxor" and vl(operands[0]) == 256):
        return ("AVX2",)
    return ("AVX",)


# ---------------------------------------------------------------------------
# The iced-x86 opcode rows of each form
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Row:
    code: int
    kinds: tuple[int, ...]
    op_code_string: str
    instruction_string: str
    memory_bytes: int  # the size of the row's memory operand (m16 for vpbroadcastw), 0 if none


ROWS: dict[int, Row] = VectorForm.row_table
CODE_FORMS: dict[int, VectorForm] = {}


def _memory_bytes(form: VectorForm, kinds: tuple[int, ...]) -> int:
    if form.mnemonic == "vpbroadcastw":
        return 2  # xmm2/m16
    for k in kinds:
        if k in VECTOR_OR_MEM:
            return VECTOR_OR_MEM[k][1] // 8
    return 0


def _build_tables() -> None:
    for form in FORMS:
        for name in form.code_names:
            code = getattr(iced_x86.Code, name)
            info = iced_x86.OpCodeInfo(code)
            kinds = tuple(info.op_kind(i) for i in range(info.op_count))
            ROWS[code] = Row(code, kinds, info.op_code_string, info.instruction_string, _memory_bytes(form, kinds))
            form.codes.append(code)
            CODE_FORMS[code] = form


_build_tables()
MNEMONICS: frozenset[str] = frozenset(f.mnemonic for f in FORMS)

"""The scalar x86-64 subset's forms: one declaration per form.

    ScalarForm: a core Form (.id, .mnemonic, .syntax, .summary), .feature ("BASE"), .doc (explain text),
        .execute(cpu: X86Context, operands) -> None (fall through) | int (jump target) | HALT
        .prepare(instruction) -> bind(cpu) -> a function that executes it and returns the next rip
            (None: the program ends): the execute contract of isasim.core.isa (the first step shared
            by every machine that runs the program, the function kept in the machine's decode cache)
        .format(operands) -> canonical text as `objdump -M intel` prints it (without
        objdump's column padding), e.g. "mov rax,QWORD PTR [rdi+0x8]".

Each form is its SDM syntax line, the mnemonic objdump prints, the flags the SDM leaves
undefined, and its semantics function (semantics/scalar.py).  Its encodings are not
written here: the form owns the iced-x86 ``Code`` values (the rows of the SDM opcode
table, e.g. ``o64 83 /0 ib  ADD r/m64, imm8``) found by asking iced's ``OpCodeInfo``
for every 64-bit legacy Code with the form's mnemonic (ROWS, CODE_FORMS, CANDIDATES
below), which encoding/scalar.py encodes and decodes with.

    MNEMONICS: frozenset[str]
        every mnemonic the assembler accepts for scalar instructions, aliases included
        (jnz, jz, jc, ...), lower case.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, ClassVar

import iced_x86

from ...core.program import FormTable
from ..context import X86Context
from ..encoding.iced import (ACC_KINDS, CODE_NAMES, FIXED_REG_KINDS, IMM_FIELD_BITS, IMPLIED_ONE, MNEMONIC_NAMES, OK,
                             REG_KINDS, RM_KINDS, STRING_KINDS, SUPPORTED_KINDS)
from ..operands import GPR_VIEWS
from ..semantics import scalar as semantics
from ..semantics import strings
from ..semantics.plain_run import PLAIN_RUN_PATHS
from ..semantics.scalar import CMOVCC, CONDITIONS, HALT, JCC, SETCC
from ..state import AF, CF, OF, PF, SF, STATUS_FLAGS, ZF
from .iced_rows import IcedRowsForm

FEATURE = "BASE"


@dataclass
class ScalarForm(IcedRowsForm):
    syntax: str  # the SDM's instruction column, generic over widths, e.g. "ADD dest, src"
    mnemonic: str  # as objdump prints it: "add", "je", "movabs"
    iced_mnemonics: tuple[str, ...]  # iced-x86's Mnemonic names of the rows this form owns
    semantics: Callable = field(repr=False)
    aliases: tuple[str, ...] = ()  # further spellings the assembler accepts (jz for je)
    undefined_flags: int = 0  # status flags the SDM leaves undefined
    only_codes: tuple[str, ...] = ()  # restrict the form to these iced Codes
    feature: str = FEATURE
    codes: list[int] = field(default_factory=list)  # iced Codes (SDM opcode rows), filled below
    element_types: tuple[str, ...] = ()  # (as AmxForm's: no scalar operand is a typed array)
    # MOVZX/MOVSX/MOVSXD and the shifts take operands of different widths (movzx eax, BYTE PTR [rdi];
    # shl rax, cl): the operand size is the first operand's, and each row says what the others must be.
    mixed_widths: bool = False
    example: str | None = None  # the line its reference page explains (explain/__init__.py has the older ones)
    # A string instruction (STOS MOVS LODS SCAS CMPS): its operands are the fixed ES:[RDI], DS:[RSI] and
    # accumulator, and these repeat prefixes may come before it ("rep"; "repz"/"repnz" for SCAS and CMPS,
    # whose loops also stop on ZF), as objdump prints them.
    repeat_prefixes: tuple[str, ...] = ()

    row_table: ClassVar[dict] = {}  # iced Code -> its Row (this module's ROWS)

    def execute(self, cpu: X86Context, operands: tuple):
        if self.feature != FEATURE:
            cpu.require_feature(self.feature, self.mnemonic)
        return self.semantics(cpu, *operands)

    def prepare(self, instruction):
        """The execute contract (isasim.core.isa; see AmxForm.prepare): ``bind(cpu)``, whose function returns
        the next rip (None: HALT)."""
        operands, next_address = instruction.operands, instruction.next_address
        semantics, fast = self.semantics, PLAIN_RUN_PATHS.get(self.semantics)
        feature, mnemonic = self.feature, self.mnemonic
        prefix = next((p for p in instruction.extra.get("prefixes", ()) if p in self.repeat_prefixes), None)
        if prefix is not None:  # REP/REPE/REPNE: the SDM's repeat loop around the string instruction
            element, fast = semantics, None

            def semantics(cpu: X86Context, *operands):
                return strings.repeat(cpu, element, operands, prefix)

        def bind(cpu: X86Context):
            if feature != FEATURE and feature not in cpu.model.features:
                def unsupported() -> int:
                    cpu.require_feature(feature, mnemonic)  # raises #UD
                    return next_address

                return unsupported

            def execute() -> int | None:
                target = semantics(cpu, *operands)
                if target is None:
                    return next_address
                return None if target is HALT else target

            return execute if fast is None else (fast(cpu, execute, next_address, *operands) or execute)

        return bind


FORMS = FormTable()  # every scalar form, by id (see core.program.FormTable)


def declare(semantics: Callable, syntax: str, *, iced: str | tuple[str, ...] | None = None,
            aliases: tuple[str, ...] = (), undefined: int = 0, codes: tuple[str, ...] = (), mixed_widths: bool = False,
            feature: str = FEATURE, example: str | None = None, repeat_prefixes: tuple[str, ...] = ()) -> ScalarForm:
    """Declare a scalar instruction: its semantics and its SDM syntax line (its iced rows are found below)."""
    name = syntax.split()[0]
    iced_names = (iced,) if isinstance(iced, str) else tuple(iced or (name,))
    form = ScalarForm(syntax, name.lower(), iced_names, semantics, aliases, undefined, codes,
                      feature=feature, mixed_widths=mixed_widths, example=example, repeat_prefixes=repeat_prefixes)
    FORMS.add(form)
    return form


# ---------------------------------------------------------------------------
# The forms
# ---------------------------------------------------------------------------


declare(semantics.mov, "MOV dest, src")
declare(semantics.mov, "MOVABS r64, imm64", codes=("MOV_R64_IMM64",), iced="MOV")
declare(semantics.lea, "LEA dest, m")
declare(semantics.movzx, "MOVZX dest, src", mixed_widths=True)
declare(semantics.movsx, "MOVSX dest, src", mixed_widths=True)
declare(semantics.movsxd, "MOVSXD dest, src", mixed_widths=True)
declare(semantics.cdqe, "CDQE", codes=("CDQE",))
declare(semantics.xchg, "XCHG dest, src", codes=("XCHG_RM8_R8", "XCHG_RM16_R16", "XCHG_RM32_R32", "XCHG_RM64_R64",
                                      "XCHG_R16_AX", "XCHG_R32_EAX", "XCHG_R64_RAX"))
declare(semantics.push, "PUSH src", codes=("PUSH_R64", "PUSH_R16", "PUSH_RM64", "PUSH_RM16", "PUSHQ_IMM8", "PUSHQ_IMM32"))
declare(semantics.pop, "POP dest", codes=("POP_R64", "POP_R16", "POP_RM64", "POP_RM16"))
declare(semantics.leave, "LEAVE", codes=("LEAVEQ",))
declare(semantics.add, "ADD dest, src")
declare(semantics.sub, "SUB dest, src")
declare(semantics.cmp, "CMP src1, src2")
declare(semantics.inc, "INC dest")
declare(semantics.dec, "DEC dest")
declare(semantics.xor, "XOR dest, src", undefined=AF)
declare(semantics.test, "TEST src1, src2", undefined=AF)
declare(semantics.imul, "IMUL dest, src1, src2", undefined=SF | ZF | AF | PF)
declare(semantics.shl, "SHL dest, count", aliases=("sal",), undefined=OF | AF, mixed_widths=True)
declare(semantics.shr, "SHR dest, count", undefined=OF | AF, mixed_widths=True)
declare(semantics.sar, "SAR dest, count", undefined=OF | AF, mixed_widths=True)
declare(semantics.jmp, "JMP rel")
for _cc, _meaning, _test, _aliases in CONDITIONS:
    declare(JCC[_cc], f"J{_cc.upper()} rel", aliases=_aliases)
declare(semantics.nop, "NOP", codes=("NOPD", "NOP_RM16", "NOP_RM32", "NOP_RM64"))
declare(semantics.ret, "RET", codes=("RETNQ",))
# issue 27: the rest of what g++ and clang emit
declare(semantics.and_, "AND dest, src", undefined=AF, example="and rsp, 0xffffffffffffffc0")
declare(semantics.or_, "OR dest, src", undefined=AF, example="or eax, DWORD PTR [rdi+0x4]")
declare(semantics.adc, "ADC dest, src", example="adc rdx, rcx")
declare(semantics.sbb, "SBB dest, src", example="sbb eax, eax")
declare(semantics.not_, "NOT dest", example="not rax")
declare(semantics.neg, "NEG dest", example="neg ecx")
for _cc, _meaning, _test, _aliases in CONDITIONS:
    declare(CMOVCC[_cc], f"CMOV{_cc.upper()} dest, src", aliases=tuple("cmov" + a[1:] for a in _aliases),
            example=f"cmov{_cc} eax, ecx")
for _cc, _meaning, _test, _aliases in CONDITIONS:
    declare(SETCC[_cc], f"SET{_cc.upper()} dest", aliases=tuple("set" + a[1:] for a in _aliases),
            example=f"set{_cc} al")
declare(semantics.cbw, "CBW", codes=("CBW",), example="cbw")
declare(semantics.cwde, "CWDE", codes=("CWDE",), example="cwde")
declare(semantics.cwd, "CWD", codes=("CWD",), example="cwd")
declare(semantics.cdq, "CDQ", codes=("CDQ",), example="cdq")
declare(semantics.cqo, "CQO", codes=("CQO",), example="cqo")
declare(semantics.mul, "MUL src", undefined=SF | ZF | AF | PF, example="mul rcx")
declare(semantics.div, "DIV src", undefined=STATUS_FLAGS, example="div rcx")
declare(semantics.idiv, "IDIV src", undefined=STATUS_FLAGS, example="idiv ecx")
declare(semantics.endbr64, "ENDBR64", codes=("ENDBR64",), example="endbr64")
declare(semantics.bswap, "BSWAP dest", codes=("BSWAP_R32", "BSWAP_R64"), example="bswap eax")
declare(semantics.movbe, "MOVBE dest, src", feature="MOVBE", example="movbe eax, DWORD PTR [rdi]")
declare(semantics.xadd, "XADD dest, src", example="xadd DWORD PTR [rdi], eax")
declare(semantics.cmpxchg, "CMPXCHG dest, src", example="cmpxchg QWORD PTR [rdi], rcx")
# group 2: rotates and double-precision shifts
declare(semantics.rol, "ROL dest, count", undefined=OF, mixed_widths=True, example="rol eax, 0x8")
declare(semantics.ror, "ROR dest, count", undefined=OF, mixed_widths=True, example="ror rdx, cl")
declare(semantics.rcl, "RCL dest, count", undefined=OF, mixed_widths=True, example="rcl ecx, 1")
declare(semantics.rcr, "RCR dest, count", undefined=OF, mixed_widths=True, example="rcr bl, 0x3")
declare(semantics.shld, "SHLD dest, src, count", undefined=OF | AF, mixed_widths=True, example="shld rax, rdx, 0xc")
declare(semantics.shrd, "SHRD dest, src, count", undefined=OF | AF, mixed_widths=True, example="shrd eax, edx, cl")
# group 3: bit tests, bit scans and counts
declare(semantics.bt, "BT base, offset", undefined=OF | SF | AF | PF, mixed_widths=True, example="bt eax, 0x1f")
declare(semantics.bts, "BTS base, offset", undefined=OF | SF | AF | PF, mixed_widths=True,
        example="bts QWORD PTR [rdi], rcx")
declare(semantics.btr, "BTR base, offset", undefined=OF | SF | AF | PF, mixed_widths=True, example="btr rax, rdx")
declare(semantics.btc, "BTC base, offset", undefined=OF | SF | AF | PF, mixed_widths=True,
        example="btc DWORD PTR [rdi], 0x3")
declare(semantics.bsf, "BSF dest, src", undefined=CF | OF | SF | AF | PF, example="bsf eax, ecx")
declare(semantics.bsr, "BSR dest, src", undefined=CF | OF | SF | AF | PF, example="bsr rax, QWORD PTR [rdi]")
declare(semantics.lzcnt, "LZCNT dest, src", undefined=OF | SF | AF | PF, example="lzcnt eax, ecx")
declare(semantics.tzcnt, "TZCNT dest, src", undefined=OF | SF | AF | PF, example="tzcnt rax, rdx")
declare(semantics.popcnt, "POPCNT dest, src", feature="POPCNT", example="popcnt eax, DWORD PTR [rdi]")
# group 4: BMI1 and BMI2 (VEX-encoded general-purpose forms)
declare(semantics.andn, "ANDN dest, src1, src2", undefined=AF | PF, feature="BMI1", example="andn eax, ecx, edx")
declare(semantics.bextr, "BEXTR dest, src, control", undefined=AF | SF | PF, feature="BMI1",
        example="bextr rax, rdi, rcx")
declare(semantics.blsi, "BLSI dest, src", undefined=AF | PF, feature="BMI1", example="blsi eax, ecx")
declare(semantics.blsmsk, "BLSMSK dest, src", undefined=AF | PF, feature="BMI1", example="blsmsk rax, rdx")
declare(semantics.blsr, "BLSR dest, src", undefined=AF | PF, feature="BMI1", example="blsr eax, DWORD PTR [rdi]")
declare(semantics.bzhi, "BZHI dest, src, index", undefined=AF | PF, feature="BMI2", example="bzhi eax, ecx, edx")
declare(semantics.shlx, "SHLX dest, src, count", feature="BMI2", example="shlx rax, rdi, rcx")
declare(semantics.shrx, "SHRX dest, src, count", feature="BMI2", example="shrx eax, ecx, edx")
declare(semantics.sarx, "SARX dest, src, count", feature="BMI2", example="sarx rax, QWORD PTR [rdi], rcx")
declare(semantics.rorx, "RORX dest, src, imm8", feature="BMI2", mixed_widths=True, example="rorx eax, ecx, 0x7")
declare(semantics.mulx, "MULX dest_high, dest_low, src", feature="BMI2", example="mulx rdx, rax, rcx")
declare(semantics.pdep, "PDEP dest, src, mask", feature="BMI2", example="pdep rax, rcx, rdx")
declare(semantics.pext, "PEXT dest, src, mask", feature="BMI2", example="pext eax, ecx, edx")
# the string instructions (what memset, memcpy, memcmp and strlen inline to) and the direction flag
_BWDQ = "BWDQ"
declare(strings.stos, "STOS dest, src", iced=tuple(f"STOS{w}" for w in _BWDQ), repeat_prefixes=("rep",),
        aliases=tuple(f"stos{w.lower()}" for w in _BWDQ), example="rep stos QWORD PTR es:[rdi],rax")
declare(strings.movs, "MOVS dest, src", iced=tuple(f"MOVS{w}" for w in _BWDQ), repeat_prefixes=("rep",),
        aliases=tuple(f"movs{w.lower()}" for w in _BWDQ), example="rep movs BYTE PTR es:[rdi],BYTE PTR ds:[rsi]")
declare(strings.lods, "LODS dest, src", iced=tuple(f"LODS{w}" for w in _BWDQ), repeat_prefixes=("rep",),
        aliases=tuple(f"lods{w.lower()}" for w in _BWDQ), example="lods eax,DWORD PTR ds:[rsi]")
declare(strings.scas, "SCAS src1, src2", iced=tuple(f"SCAS{w}" for w in _BWDQ), repeat_prefixes=("repz", "repnz"),
        aliases=tuple(f"scas{w.lower()}" for w in _BWDQ), example="repnz scas al,BYTE PTR es:[rdi]")
declare(strings.cmps, "CMPS src1, src2", iced=tuple(f"CMPS{w}" for w in _BWDQ), repeat_prefixes=("repz", "repnz"),
        aliases=tuple(f"cmps{w.lower()}" for w in _BWDQ), example="repz cmps BYTE PTR ds:[rsi],BYTE PTR es:[rdi]")
declare(strings.cld, "CLD", codes=("CLD",), example="cld")
declare(strings.std, "STD", codes=("STD",), example="std")


# ---------------------------------------------------------------------------
# The iced-x86 opcode rows of each form
# ---------------------------------------------------------------------------


# Rows iced knows that GNU as never emits for this subset, or that are not this subset.
_EXCLUDED_CODES = {
    "TEST_RM8_IMM8_F6R1", "TEST_RM16_IMM16_F7R1", "TEST_RM32_IMM32_F7R1", "TEST_RM64_IMM32_F7R1",  # F6/F7 /1
    "NOPW", "NOPQ",  # 66 90 is xchg ax,ax (given to XCHG below) and REX.W 90 is rex.W nop to objdump
    "PUSH_IMM16", "PUSHW_IMM8",  # pushw imm: GNU as writes push imm as the 64-bit push
    "MOVSXD_R16_RM16",  # GNU as refuses movsxd ax, cx (operand size mismatch)
    "RETNW", "RETNW_IMM16", "RETNQ_IMM16",
    "JMP_RM16", "JMP_RM64", "JMP_M1616", "JMP_M1632", "JMP_M1664",  # indirect jumps
}


@dataclass(frozen=True)
class Row:
    """What the encoder and decoder need to know about one iced Code."""

    code: int
    kinds: tuple[int, ...]
    bits: int | None  # operand size, from the first register/memory operand
    op_code_string: str
    instruction_string: str
    operand_bits: tuple = ()  # per operand: its own width (movzx r32, r/m8: 32, 8; an immediate: its field)

    @property
    def has_accumulator(self) -> bool:
        return any(k in ACC_KINDS for k in self.kinds)


def _row_bits(kinds: tuple[int, ...]) -> int | None:
    for k in kinds:
        for table in (RM_KINDS, REG_KINDS):
            if k in table:
                return table[k]
        if k in ACC_KINDS:
            return GPR_VIEWS[ACC_KINDS[k]].bits
    if kinds and kinds[0] in (OK.IMM8SEX64, OK.IMM32SEX64):
        return 64  # push imm: a 64-bit push of the sign-extended immediate
    return None


def _operand_bits(kind: int, bits: int | None) -> int | None:
    """One operand's own width in a row whose operand size is ``bits``."""
    for table in (RM_KINDS, REG_KINDS):
        if kind in table:
            return table[kind]
    if kind in ACC_KINDS:
        return GPR_VIEWS[ACC_KINDS[kind]].bits
    if kind in FIXED_REG_KINDS or kind == IMPLIED_ONE:
        return 8
    if kind in IMM_FIELD_BITS and bits:
        return min(IMM_FIELD_BITS[kind], bits)  # a shift's imm8 count is 8 bits whatever the operand size
    return bits


_STRING_ELEMENT_BITS = {"B": 8, "W": 16, "D": 32, "Q": 64}

ROWS: dict[int, Row] = ScalarForm.row_table
CODE_FORMS: dict[int, ScalarForm] = {}  # iced Code -> the form that owns it
CANDIDATES: dict[str, list[int]] = {}  # mnemonic as written -> rows to try


def _build_tables() -> None:
    by_iced: dict[str, list[ScalarForm]] = {}
    for form in FORMS:
        for iced_name in form.iced_mnemonics:
            by_iced.setdefault(iced_name, []).append(form)
    for code in sorted(CODE_NAMES):
        name = CODE_NAMES[code]
        try:
            info = iced_x86.OpCodeInfo(code)
        except ValueError:
            continue
        forms = by_iced.get(MNEMONIC_NAMES.get(info.mnemonic, ""), [])
        if not forms or not info.mode64 or info.encoding not in (iced_x86.EncodingKind.LEGACY,
                                                                  iced_x86.EncodingKind.VEX):  # VEX: BMI1/BMI2
            continue
        kinds = tuple(info.op_kind(i) for i in range(info.op_count))
        if name in _EXCLUDED_CODES or not set(kinds) <= SUPPORTED_KINDS:
            continue
        claimed = [f for f in forms if name in f.only_codes]
        owners = claimed or [f for f in forms if not f.only_codes]
        if not owners:
            continue
        bits = _row_bits(kinds)
        if set(kinds) & set(STRING_KINDS):  # MOVSB .. CMPSQ: the element size is the mnemonic's last letter
            bits = _STRING_ELEMENT_BITS[info.instruction_string.split()[0][-1]]
        ROWS[code] = Row(code, kinds, bits, info.op_code_string, info.instruction_string,
                           tuple(_operand_bits(k, bits) for k in kinds))
        owners[0].codes.append(code)
        CODE_FORMS[code] = owners[0]
    for form in FORMS:
        for spelling in (form.mnemonic, *form.aliases):
            CANDIDATES.setdefault(spelling, []).extend(form.codes)
    # "mov rax, 0x80000000" is written as mov but needs MOVABS's row.
    (movabs,) = FORMS.of_mnemonic("movabs")
    CANDIDATES["mov"].extend(movabs.codes)
    # 66 90 is iced's NOPW, objdump's and GNU as's "xchg ax,ax" (o16 90+rw with AX twice).
    (xchg,) = FORMS.of_mnemonic("xchg")
    nopw = iced_x86.Code.NOPW
    ROWS[nopw] = Row(nopw, (OK.R16_OPCODE, OK.AX), 16, "o16 90", "XCHG AX, AX", (16, 16))
    CODE_FORMS[nopw] = xchg


_build_tables()

MNEMONICS: frozenset[str] = frozenset(CANDIDATES)
# The string instructions' one-word spellings (stosb .. cmpsq: no operands) -> (form, element bits)
STRING_SPELLINGS: dict[str, tuple[ScalarForm, int]] = {
    alias: (form, _STRING_ELEMENT_BITS[alias[-1].upper()]) for form in FORMS if form.repeat_prefixes
    for alias in form.aliases}
REPEAT_WORDS = {"rep": "rep", "repe": "repz", "repz": "repz", "repne": "repnz", "repnz": "repnz"}  # as written -> objdump's
ALIASES: dict[str, str] = {a: f.mnemonic for f in FORMS for a in f.aliases}

# mnemonic (aliases included) -> RFLAGS bits the SDM leaves undefined after it.
UNDEFINED_FLAGS: dict[str, int] = {m: FORMS.of_mnemonic(ALIASES.get(m, m))[0].undefined_flags
                                   for m in sorted(MNEMONICS)}
# The status flags each instruction writes (defined or not); the others keep their values.
FLAGS_WRITTEN: dict[str, int] = {"add": STATUS_FLAGS, "sub": STATUS_FLAGS, "cmp": STATUS_FLAGS, "xor": STATUS_FLAGS,
                                 "test": STATUS_FLAGS, "imul": STATUS_FLAGS, "inc": STATUS_FLAGS & ~CF,
                                 "dec": STATUS_FLAGS & ~CF,
                                 # a shift by 0 writes no flag: count the shifts as writing none, so a flag
                                 # undefined before stays undefined (those a shift defines are still compared)
                                 "shl": 0, "sal": 0, "shr": 0, "sar": 0,
                                 "and": STATUS_FLAGS, "or": STATUS_FLAGS, "adc": STATUS_FLAGS, "sbb": STATUS_FLAGS,
                                 "neg": STATUS_FLAGS, "mul": STATUS_FLAGS, "div": STATUS_FLAGS, "idiv": STATUS_FLAGS,
                                 "xadd": STATUS_FLAGS, "cmpxchg": STATUS_FLAGS,
                                 # as the shifts: a count of 0 writes no flag
                                 "rol": 0, "ror": 0, "rcl": 0, "rcr": 0, "shld": 0, "shrd": 0,
                                 **dict.fromkeys(("bt", "bts", "btr", "btc"), CF | OF | SF | AF | PF),
                                 **dict.fromkeys(("bsf", "bsr", "lzcnt", "tzcnt", "popcnt"), STATUS_FLAGS),
                                 **dict.fromkeys(("andn", "bextr", "blsi", "blsmsk", "blsr", "bzhi"), STATUS_FLAGS),
                                 # a repeated SCAS/CMPS with RCX zero writes no flag
                                 **dict.fromkeys(("scas", "cmps"), 0)}

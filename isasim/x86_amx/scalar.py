"""The scalar x86-64 subset a hand-written AMX kernel loop needs.

CONTRACT (used by the assembler, disassembler and ISA object; do not change names):

    MNEMONICS: frozenset[str]
        every mnemonic the assembler accepts for scalar instructions, aliases included
        (jnz, jz, jc, ...), lower case.

    encode(mnemonic, operands, address, *, long_branch=False) -> (form, operands, bytes)
        mnemonic: lower-case text as written; operands: tuple of Reg/Imm/Mem/Target
        (isasim.x86_amx.operands).  Returns the ScalarForm, the canonical operands
        (as the disassembler would produce them, e.g. Imm with its field width) and
        the encoding GNU as produces for that text.  Branches: rel8 when the target is
        in range and long_branch is False, else rel32.  Raises AssemblyError
        (one line, no location) for operands the instruction does not take.

    decode(code, pos, address) -> Instruction | None
        decode one instruction of the subset at code[pos:], placed at ``address``;
        None if the bytes are not an instruction of the subset.

    ScalarForm: a core Form (.id, .mnemonic, .syntax, .summary), .feature ("BASE"), .doc (explain text),
        .execute(cpu: X86Context, operands) -> None (fall through) | int (jump target) | HALT
        .translate(cpu, operands, next_address) -> a function that executes it and returns
            the next rip (None: the program ends), as the machine's decode cache keeps it
        .format(operands) -> canonical text as `objdump -M intel` prints it (without
        objdump's column padding), e.g. "mov rax,QWORD PTR [rdi+0x8]".

IMPLEMENTATION NOTES

The subset is MOV (and MOVABS, which is what objdump calls ``mov r64, imm64``),
ADD, SUB, INC, DEC, CMP, TEST, XOR, LEA, IMUL (1, 2 and 3 operands), JMP, the
sixteen Jcc, NOP (``90`` and ``0F 1F /0``) and RET.  Each is declared once below
with a semantics function that reads like the SDM's Operation section; its
docstring is the ``isasim explain`` text.

Encodings are not written here: each form owns the iced-x86 ``Code`` values (the
rows of the SDM opcode table, e.g. ``o64 83 /0 ib  ADD r/m64, imm8``) found by
asking iced's ``OpCodeInfo`` for every 64-bit legacy Code with the form's
mnemonic.  ``encode`` tries every row the operands fit, encodes each with
``iced_x86.Encoder(64)`` and keeps what GNU as 2.40 keeps: the shortest; on a tie,
a row without a fixed accumulator operand (``add ax,1`` is ``66 83 c0 01``, not
``66 05 01 00``), then the lower Code, which puts ``op r/m, reg`` (01, 89, ...)
before ``op reg, r/m`` (03, 8B, ...).  Two further GNU as habits are copied:
``test reg, mem`` is encoded (and printed by objdump) as ``test mem, reg``, and
``imul reg, imm`` is ``imul reg, reg, imm``.

Canonical operands: registers by name; memory with its size (LEA's without) and a
signed displacement; immediates as the instruction sees them, i.e. sign-extended
to the operand width and reduced modulo 2^width, with ``bits`` = the operand
width, so ``str(Imm)`` is what objdump prints (``add rax,0xffffffffffffffff`` for
``48 83 c0 ff``); branch targets as ``Target``.

Flags the SDM leaves undefined get the values Emerald Rapids silicon gives them
(UNDEFINED_FLAGS lists them so that comparisons with other CPUs can mask them):
TEST and XOR clear AF; the IMUL forms set SF and PF from the truncated result (the
low half for the one-operand form) and clear ZF and AF.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Callable

import iced_x86

from ..core.errors import AssemblyError
from ..core.program import FormTable, Instruction, syntax_id
from .context import X86Context
from .operands import SIZE_NAMES, Imm, Mem, Reg, Target
from .registers import GPR64, GPR_VIEWS
from .state import AF, CF, OF, PF, SF, STATUS_FLAGS, ZF

HALT = object()  # returned by RET's semantics: the kernel is over

FEATURE = "BASE"
_MASK64 = (1 << 64) - 1

# ---------------------------------------------------------------------------
# Form declarations
# ---------------------------------------------------------------------------


@dataclass
class ScalarForm:
    syntax: str  # the SDM's instruction column, generic over widths, e.g. "ADD dest, src"
    mnemonic: str  # as objdump prints it: "add", "je", "movabs"
    iced_mnemonic: str  # iced-x86's Mnemonic name of the rows this form owns
    semantics: Callable = field(repr=False)
    aliases: tuple[str, ...] = ()  # further spellings the assembler accepts (jz for je)
    undefined_flags: int = 0  # status flags the SDM leaves undefined
    only_codes: tuple[str, ...] = ()  # restrict the form to these iced Codes
    feature: str = FEATURE
    codes: list[int] = field(default_factory=list)  # iced Codes (SDM opcode rows), filled below
    element_types: tuple[str, ...] = ()  # (as AmxForm's: no scalar operand is a typed array)

    @property
    def id(self) -> str:
        """Unique per form: its syntax line as an identifier, e.g. ``ADD_dest_src``, ``JE_rel``."""
        return syntax_id(self.syntax)

    @property
    def doc(self) -> str:
        return (self.semantics.__doc__ or "").strip()

    @property
    def summary(self) -> str:
        return self.doc.split("\n")[0]

    @property
    def rows(self) -> list[str]:
        """The SDM opcode-table rows this form covers, e.g. ``o64 01 /r  ADD r/m64, r64``."""
        return [f"{_INFO[c].op_code_string}  {_INFO[c].instruction_string}" for c in self.codes]

    def format(self, operands: tuple) -> str:
        """Canonical text, as ``objdump -M intel`` prints it (no column padding)."""
        if not operands:
            return self.mnemonic
        return f"{self.mnemonic} " + ",".join(operand_text(o) for o in operands)

    def execute(self, cpu: X86Context, operands: tuple):
        return self.semantics(cpu, *operands)

    def translate(self, cpu: X86Context, operands: tuple, next_address: int):
        """Bind to ``cpu``: a function that executes the instruction and returns the next rip (None: HALT)."""
        semantics = self.semantics

        def execute() -> int | None:
            target = semantics(cpu, *operands)
            if target is None:
                return next_address
            return None if target is HALT else target

        return execute


FORMS = FormTable()  # every scalar form, by id (see core.program.FormTable)


def instruction(syntax: str, *, iced: str | None = None, aliases: tuple[str, ...] = (), undefined: int = 0,
                codes: tuple[str, ...] = ()):
    """Declare a scalar instruction: its SDM syntax line, then its semantics."""

    def declare(semantics: Callable) -> Callable:
        name = syntax.split()[0]
        FORMS.add(ScalarForm(syntax, name.lower(), iced or name, semantics, aliases, undefined, codes))
        return semantics

    return declare


# ---------------------------------------------------------------------------
# Shared pseudocode helpers (the SDM's vocabulary)
# ---------------------------------------------------------------------------


def width(operand) -> int:
    """Operand size in bits: a register's view, a memory operand's size, an immediate's width."""
    if isinstance(operand, Reg):
        return GPR_VIEWS[operand.name].bits
    if isinstance(operand, Mem):
        return operand.size * 8
    return operand.bits


def read(cpu: X86Context, operand, bits: int) -> int:
    """The operand's value as an unsigned ``bits``-bit number (immediates come sign-extended)."""
    if isinstance(operand, Reg):
        return cpu.state.read_gpr(GPR_VIEWS[operand.name])
    if isinstance(operand, Mem):
        data = cpu.read_memory(cpu.effective_address(operand), bits // 8)
        return int.from_bytes(data, "little")
    return operand.value % (1 << bits)


def write(cpu: X86Context, operand, value: int, bits: int) -> None:
    """DEST := value: 32-bit register writes zero-extend, 8/16-bit writes merge (registers.py)."""
    value %= 1 << bits
    if isinstance(operand, Reg):
        cpu.state.write_gpr(GPR_VIEWS[operand.name], value)
    else:
        cpu.write_memory(cpu.effective_address(operand), value.to_bytes(bits // 8, "little"))


def signed(value: int, bits: int) -> int:
    value %= 1 << bits
    return value - (1 << bits) if value >> (bits - 1) else value


def parity(value: int) -> bool:
    """PF: set when the low byte of the result has an even number of 1 bits."""
    return _EVEN_PARITY[value & 0xFF]


_EVEN_PARITY = [bin(byte).count("1") % 2 == 0 for byte in range(256)]


def result_flags(result: int, bits: int) -> int:
    """SF, ZF and PF of a ``bits``-wide result, as RFLAGS bits."""
    return (SF if result >> (bits - 1) & 1 else 0) | (ZF if result == 0 else 0) | (PF if parity(result) else 0)


def add_flags(a: int, b: int, bits: int) -> int:
    """The status flags of a + b: CF carry out of the top bit, OF signed overflow, AF carry out of bit 3."""
    r = (a + b) % (1 << bits)
    return ((CF if (a + b) >> bits else 0)
            | (OF if ((a ^ r) & (b ^ r)) >> (bits - 1) & 1 else 0)
            | (AF if (a ^ b ^ r) & 0x10 else 0)
            | result_flags(r, bits))


def sub_flags(a: int, b: int, bits: int) -> int:
    """The status flags of a - b: CF borrow (a < b unsigned), OF signed overflow, AF borrow from bit 4."""
    r = (a - b) % (1 << bits)
    return ((CF if a < b else 0)
            | (OF if ((a ^ b) & (a ^ r)) >> (bits - 1) & 1 else 0)
            | (AF if (a ^ b ^ r) & 0x10 else 0)
            | result_flags(r, bits))


def logic_flags(r: int, bits: int) -> int:
    """CF := 0; OF := 0; SF, ZF, PF from the result; AF (undefined) := 0."""
    return result_flags(r, bits)



def set_flags(cpu: X86Context, flags: int, written: int = STATUS_FLAGS) -> None:
    """Write the status flags ``written`` (RFLAGS bits) with their values in ``flags``;
    every other RFLAGS bit keeps its value."""
    cpu.state.set_rflags(cpu.state.rflags & ~written | flags & written)


# ---------------------------------------------------------------------------
# Data movement and address arithmetic
# ---------------------------------------------------------------------------


@instruction("MOVABS r64, imm64", codes=("MOV_R64_IMM64",), iced="MOV")
@instruction("MOV dest, src")
def mov(cpu: X86Context, dest, src) -> None:
    """Copy src to dest; no flags change.

        DEST := SRC

    An immediate is sign-extended to the operand size (``mov rax, -1`` is
    C7 /0 with imm32 0xffffffff).  A 64-bit immediate that does not fit in 32
    signed bits needs B8+r with imm64, which objdump calls MOVABS.  Writing a
    32-bit register zero-extends into the 64-bit register; 8- and 16-bit writes
    leave the other bits alone.
    """
    bits = width(dest)
    write(cpu, dest, read(cpu, src, bits), bits)


@instruction("LEA dest, m")
def lea(cpu: X86Context, dest, m: Mem) -> None:
    """Load the effective address of m into dest; memory is not accessed and no flags change.

        DEST := EffectiveAddress(SRC)   (truncated to the size of DEST)
    """
    bits = width(dest)
    write(cpu, dest, cpu.effective_address(m), bits)


# ---------------------------------------------------------------------------
# Arithmetic and logic
# ---------------------------------------------------------------------------


@instruction("ADD dest, src")
def add(cpu: X86Context, dest, src) -> None:
    """Add src to dest.

        DEST := DEST + SRC      (an immediate SRC is sign-extended to the operand size)
        CF := carry out of the top bit; OF := signed overflow; AF := carry out of bit 3
        SF, ZF, PF := from the result (PF: even parity of the low byte)
    """
    bits = width(dest)
    a, b = read(cpu, dest, bits), read(cpu, src, bits)
    write(cpu, dest, a + b, bits)
    set_flags(cpu, add_flags(a, b, bits))


@instruction("SUB dest, src")
def sub(cpu: X86Context, dest, src) -> None:
    """Subtract src from dest.

        DEST := DEST - SRC      (an immediate SRC is sign-extended to the operand size)
        CF := borrow (DEST < SRC unsigned); OF := signed overflow; AF := borrow from bit 4
        SF, ZF, PF := from the result
    """
    bits = width(dest)
    a, b = read(cpu, dest, bits), read(cpu, src, bits)
    write(cpu, dest, a - b, bits)
    set_flags(cpu, sub_flags(a, b, bits))


@instruction("CMP src1, src2")
def cmp(cpu: X86Context, src1, src2) -> None:
    """Compare src1 with src2: set the flags as SUB would, and discard the difference.

        temp := SRC1 - SignExtend(SRC2)
        CF, OF, SF, ZF, AF, PF := as for SUB
    """
    bits = width(src1)
    a, b = read(cpu, src1, bits), read(cpu, src2, bits)
    set_flags(cpu, sub_flags(a, b, bits))


@instruction("INC dest")
def inc(cpu: X86Context, dest) -> None:
    """Add 1 to dest, keeping CF.

        DEST := DEST + 1
        OF, SF, ZF, AF, PF := as for ADD with 1; CF is not affected
    """
    bits = width(dest)
    a = read(cpu, dest, bits)
    write(cpu, dest, a + 1, bits)
    set_flags(cpu, add_flags(a, 1, bits), written=STATUS_FLAGS & ~CF)


@instruction("DEC dest")
def dec(cpu: X86Context, dest) -> None:
    """Subtract 1 from dest, keeping CF.

        DEST := DEST - 1
        OF, SF, ZF, AF, PF := as for SUB with 1; CF is not affected
    """
    bits = width(dest)
    a = read(cpu, dest, bits)
    write(cpu, dest, a - 1, bits)
    set_flags(cpu, sub_flags(a, 1, bits), written=STATUS_FLAGS & ~CF)


@instruction("XOR dest, src", undefined=AF)
def xor(cpu: X86Context, dest, src) -> None:
    """Bitwise exclusive OR of dest and src into dest.

        DEST := DEST XOR SRC    (an immediate SRC is sign-extended to the operand size)
        CF := 0; OF := 0; SF, ZF, PF := from the result
        AF is undefined in the SDM; isasim clears it.
    """
    bits = width(dest)
    r = read(cpu, dest, bits) ^ read(cpu, src, bits)
    write(cpu, dest, r, bits)
    set_flags(cpu, logic_flags(r, bits))


@instruction("TEST src1, src2", undefined=AF)
def test(cpu: X86Context, src1, src2) -> None:
    """Bitwise AND of src1 and src2, setting the flags and discarding the result.

        TEMP := SRC1 AND SRC2
        CF := 0; OF := 0; SF, ZF, PF := from TEMP
        AF is undefined in the SDM; isasim clears it.
    """
    bits = width(src1)
    r = read(cpu, src1, bits) & read(cpu, src2, bits)
    set_flags(cpu, logic_flags(r, bits))


_IMUL_ACCUMULATORS = {8: ("al", "ah"), 16: ("ax", "dx"), 32: ("eax", "edx"), 64: ("rax", "rdx")}


@instruction("IMUL dest, src1, src2", undefined=SF | ZF | AF | PF)
def imul(cpu: X86Context, *operands) -> None:
    """Signed multiply.

        IMUL r/m (one operand):   AX := AL * r/m8;  DX:AX := AX * r/m16;
                                  EDX:EAX := EAX * r/m32;  RDX:RAX := RAX * r/m64
            CF := OF := (the product does not fit in the low half as a signed number)
        IMUL dest, src (two):     DEST := truncate(DEST * SRC)
        IMUL dest, src1, imm:     DEST := truncate(SRC1 * SignExtend(imm))
            CF := OF := (the full signed product differs from the truncated result)

    SF, ZF, AF and PF are undefined in the SDM.  isasim gives them the values
    Emerald Rapids silicon gives (measured on every form and width): SF and PF
    from the truncated result (for the one-operand form, the low half), ZF := 0
    even when that result is zero, AF := 0.
    """
    if len(operands) == 1:
        (src,) = operands
        bits = width(src)
        low, high = _IMUL_ACCUMULATORS[bits]
        product = signed(cpu.state.read_register(low), bits) * signed(read(cpu, src, bits), bits)
        if bits == 8:
            write(cpu, Reg("ax"), product, 16)
        else:
            write(cpu, Reg(low), product, bits)
            write(cpu, Reg(high), product >> bits, bits)
    else:
        dest, src1, src2 = operands if len(operands) == 3 else (operands[0], operands[0], operands[1])
        bits = width(dest)
        product = signed(read(cpu, src1, bits), bits) * signed(read(cpu, src2, bits), bits)
        write(cpu, dest, product, bits)
    truncated = product % (1 << bits)
    overflow = product != signed(truncated, bits)
    set_flags(cpu, (CF | OF if overflow else 0) | result_flags(truncated, bits) & (SF | PF))  # ZF := 0, AF := 0


# ---------------------------------------------------------------------------
# Control transfer
# ---------------------------------------------------------------------------


@instruction("JMP rel")
def jmp(cpu: X86Context, target: Target) -> int:
    """Jump to target (rel8 or rel32, relative to the next instruction).

        RIP := RIP + SignExtend(rel)
    """
    return target.address


# (condition code, the SDM's condition, test on the flags, aliases GNU as accepts)
CONDITIONS: list[tuple[str, str, Callable[..., bool], tuple[str, ...]]] = [
    ("o", "overflow (OF=1)", lambda CF, ZF, SF, OF, PF: OF, ()),
    ("no", "not overflow (OF=0)", lambda CF, ZF, SF, OF, PF: not OF, ()),
    ("b", "below (CF=1)", lambda CF, ZF, SF, OF, PF: CF, ("jc", "jnae")),
    ("ae", "above or equal (CF=0)", lambda CF, ZF, SF, OF, PF: not CF, ("jnc", "jnb")),
    ("e", "equal (ZF=1)", lambda CF, ZF, SF, OF, PF: ZF, ("jz",)),
    ("ne", "not equal (ZF=0)", lambda CF, ZF, SF, OF, PF: not ZF, ("jnz",)),
    ("be", "below or equal (CF=1 or ZF=1)", lambda CF, ZF, SF, OF, PF: CF or ZF, ("jna",)),
    ("a", "above (CF=0 and ZF=0)", lambda CF, ZF, SF, OF, PF: not CF and not ZF, ("jnbe",)),
    ("s", "sign (SF=1)", lambda CF, ZF, SF, OF, PF: SF, ()),
    ("ns", "not sign (SF=0)", lambda CF, ZF, SF, OF, PF: not SF, ()),
    ("p", "parity even (PF=1)", lambda CF, ZF, SF, OF, PF: PF, ("jpe",)),
    ("np", "parity odd (PF=0)", lambda CF, ZF, SF, OF, PF: not PF, ("jpo",)),
    ("l", "less (SF!=OF)", lambda CF, ZF, SF, OF, PF: SF != OF, ("jnge",)),
    ("ge", "greater or equal (SF=OF)", lambda CF, ZF, SF, OF, PF: SF == OF, ("jnl",)),
    ("le", "less or equal (ZF=1 or SF!=OF)", lambda CF, ZF, SF, OF, PF: ZF or SF != OF, ("jng",)),
    ("g", "greater (ZF=0 and SF=OF)", lambda CF, ZF, SF, OF, PF: not ZF and SF == OF, ("jnle",)),
]


def jcc(cpu: X86Context, target: Target, *, condition: Callable[..., bool]) -> int | None:
    """Jump to target if the condition holds, else fall through.

        IF condition THEN RIP := RIP + SignExtend(rel) FI
    """
    state = cpu.state
    if condition(CF=state.flag(CF), ZF=state.flag(ZF), SF=state.flag(SF), OF=state.flag(OF), PF=state.flag(PF)):
        return target.address
    return None


def _declare_jcc(cc: str, meaning: str, test: Callable[..., bool], aliases: tuple[str, ...]) -> None:
    def semantics(cpu: X86Context, target: Target) -> int | None:
        return jcc(cpu, target, condition=test)

    semantics.__name__ = f"j{cc}"
    semantics.__doc__ = (
        f"Jump to target if {meaning}, else fall through (rel8 or rel32, relative to the next instruction).\n\n"
        f"    IF {meaning.split('(')[1].rstrip(')')} THEN RIP := RIP + SignExtend(rel) FI\n\n"
        "No flags change."
    )
    instruction(f"J{cc.upper()} rel", aliases=aliases)(semantics)


for _cc in CONDITIONS:
    _declare_jcc(*_cc)


@instruction("NOP", codes=("NOPD", "NOP_RM16", "NOP_RM32", "NOP_RM64"))
def nop(cpu: X86Context, *operands) -> None:
    """No operation.  The r/m of the multi-byte NOP (0F 1F /0) is not accessed."""


@instruction("RET", codes=("RETNQ",))
def ret(cpu: X86Context):
    """Return: in isasim, the end of the kernel.

    The stack is not modelled; RET stops the run (the kernel returns to its caller).
    """
    return HALT


# ---------------------------------------------------------------------------
# The iced-x86 opcode rows of each form
# ---------------------------------------------------------------------------

_OK = iced_x86.OpCodeOperandKind
_RM_KINDS = {_OK.R8_OR_MEM: 8, _OK.R16_OR_MEM: 16, _OK.R32_OR_MEM: 32, _OK.R64_OR_MEM: 64}
_REG_KINDS = {_OK.R8_REG: 8, _OK.R16_REG: 16, _OK.R32_REG: 32, _OK.R64_REG: 64,
              _OK.R8_OPCODE: 8, _OK.R16_OPCODE: 16, _OK.R32_OPCODE: 32, _OK.R64_OPCODE: 64}
_ACC_KINDS = {_OK.AL: "al", _OK.AX: "ax", _OK.EAX: "eax", _OK.RAX: "rax"}
_IMM_KINDS = {_OK.IMM8, _OK.IMM16, _OK.IMM32, _OK.IMM64}
_SEXT_IMM_KINDS = {_OK.IMM8SEX16: 8, _OK.IMM8SEX32: 8, _OK.IMM8SEX64: 8, _OK.IMM32SEX64: 32}
_BRANCH_KINDS = {_OK.BR64_1: 1, _OK.BR64_4: 4}
_SUPPORTED_KINDS = (set(_RM_KINDS) | set(_REG_KINDS) | set(_ACC_KINDS) | _IMM_KINDS | set(_SEXT_IMM_KINDS)
                    | set(_BRANCH_KINDS) | {_OK.MEM})
# Rows iced knows that GNU as never emits for this subset, or that are not this subset.
_EXCLUDED_CODES = {
    "TEST_RM8_IMM8_F6R1", "TEST_RM16_IMM16_F7R1", "TEST_RM32_IMM32_F7R1", "TEST_RM64_IMM32_F7R1",  # F6/F7 /1
    "NOPW", "NOPQ",  # 66 90 is xchg ax,ax and REX.W 90 is rex.W nop to objdump
    "RETNW", "RETNW_IMM16", "RETNQ_IMM16",
    "JMP_RM16", "JMP_RM64", "JMP_M1616", "JMP_M1632", "JMP_M1664",  # indirect jumps
}

_CODE_NAMES = {v: k for k, v in vars(iced_x86.Code).items() if isinstance(v, int) and not k.startswith("_")}
_MNEMONIC_NAMES = {v: k for k, v in vars(iced_x86.Mnemonic).items() if isinstance(v, int) and not k.startswith("_")}


@dataclass(frozen=True)
class _Row:
    """What the encoder and decoder need to know about one iced Code."""

    code: int
    kinds: tuple[int, ...]
    bits: int | None  # operand size, from the first register/memory operand
    op_code_string: str
    instruction_string: str

    @property
    def has_accumulator(self) -> bool:
        return any(k in _ACC_KINDS for k in self.kinds)


def _row_bits(kinds: tuple[int, ...]) -> int | None:
    for k in kinds:
        for table in (_RM_KINDS, _REG_KINDS):
            if k in table:
                return table[k]
        if k in _ACC_KINDS:
            return GPR_VIEWS[_ACC_KINDS[k]].bits
    return None


_INFO: dict[int, _Row] = {}
CODE_FORMS: dict[int, ScalarForm] = {}  # iced Code -> the form that owns it
_CANDIDATES: dict[str, list[int]] = {}  # mnemonic as written -> rows to try


def _build_tables() -> None:
    by_iced: dict[str, list[ScalarForm]] = {}
    for form in FORMS:
        by_iced.setdefault(form.iced_mnemonic, []).append(form)
    for code in sorted(_CODE_NAMES):
        name = _CODE_NAMES[code]
        try:
            info = iced_x86.OpCodeInfo(code)
        except ValueError:
            continue
        forms = by_iced.get(_MNEMONIC_NAMES.get(info.mnemonic, ""), [])
        if not forms or not info.mode64 or info.encoding != iced_x86.EncodingKind.LEGACY:
            continue
        kinds = tuple(info.op_kind(i) for i in range(info.op_count))
        if name in _EXCLUDED_CODES or not set(kinds) <= _SUPPORTED_KINDS:
            continue
        claimed = [f for f in forms if name in f.only_codes]
        owners = claimed or [f for f in forms if not f.only_codes]
        if not owners:
            continue
        _INFO[code] = _Row(code, kinds, _row_bits(kinds), info.op_code_string, info.instruction_string)
        owners[0].codes.append(code)
        CODE_FORMS[code] = owners[0]
    for form in FORMS:
        for spelling in (form.mnemonic, *form.aliases):
            _CANDIDATES.setdefault(spelling, []).extend(form.codes)
    # "mov rax, 0x80000000" is written as mov but needs MOVABS's row.
    (movabs,) = FORMS.of_mnemonic("movabs")
    _CANDIDATES["mov"].extend(movabs.codes)


_build_tables()

MNEMONICS: frozenset[str] = frozenset(_CANDIDATES)
ALIASES: dict[str, str] = {a: f.mnemonic for f in FORMS for a in f.aliases}

# mnemonic (aliases included) -> RFLAGS bits the SDM leaves undefined after it.
UNDEFINED_FLAGS: dict[str, int] = {m: FORMS.of_mnemonic(ALIASES.get(m, m))[0].undefined_flags
                                   for m in sorted(MNEMONICS)}
# The status flags each instruction writes (defined or not); the others keep their values.
FLAGS_WRITTEN: dict[str, int] = {"add": STATUS_FLAGS, "sub": STATUS_FLAGS, "cmp": STATUS_FLAGS, "xor": STATUS_FLAGS,
                                 "test": STATUS_FLAGS, "imul": STATUS_FLAGS, "inc": STATUS_FLAGS & ~CF,
                                 "dec": STATUS_FLAGS & ~CF}

# ---------------------------------------------------------------------------
# Printing (objdump -M intel)
# ---------------------------------------------------------------------------


def memory_text(mem: Mem) -> str:
    """A memory operand as objdump prints it (``Mem.__str__``).

    objdump shows the displacement the encoding carries, even when it is 0
    (``[rbp+0x0]``, ``[rbx*4+0x0]``).  Decoded and canonical operands record its
    size in ``disp_size``; for an operand without it, GNU as's choice is assumed:
    a displacement only when the value is not 0, or the base is rbp/r13 (which
    cannot be encoded without one), or there is no base.
    """
    if not mem.disp_size and (not mem.base or mem.base in ("rbp", "r13")):
        mem = replace(mem, disp_size=4 if not mem.base else 1)
    return str(mem)


def operand_text(operand) -> str:
    if isinstance(operand, Mem):
        return memory_text(operand)
    return str(operand)


# ---------------------------------------------------------------------------
# Encoding (GNU as's choices, iced's encoder)
# ---------------------------------------------------------------------------

_REGISTER_OF: dict[str, int] = {}
for _name in GPR_VIEWS:
    _iced_name = _name.upper()
    if _name.startswith("r") and _name.endswith("b") and _name[1:-1].isdigit():
        _iced_name = _name[:-1].upper() + "L"  # r8b is iced's R8L
    _REGISTER_OF[_name] = getattr(iced_x86.Register, _iced_name)
_NAME_OF_REGISTER = {v: k for k, v in _REGISTER_OF.items()}


def _fail(mnemonic: str, rule: str) -> AssemblyError:
    return AssemblyError(f"{mnemonic}: {rule}")


def _check_register(mnemonic: str, reg: Reg) -> Reg:
    name = reg.name.lower()
    if name not in GPR_VIEWS:
        raise _fail(mnemonic, f"'{reg.name}' is not a general-purpose register")
    return Reg(name)


def _check_memory(mnemonic: str, mem: Mem) -> Mem:
    base = mem.base.lower() if mem.base else None
    index = mem.index.lower() if mem.index else None
    for what, name in (("base", base), ("index", index)):
        if name in ("rip", "eip"):
            raise _fail(mnemonic, "rip-relative addressing is not supported")
        if name == "riz":
            raise _fail(mnemonic, "riz is not supported here; leave the index out")
        if name is not None and name not in GPR64:
            raise _fail(mnemonic, f"{what} register must be a 64-bit general-purpose register, not '{name}'")
    if index == "rsp":
        raise _fail(mnemonic, "rsp cannot be an index register")
    if mem.scale not in (1, 2, 4, 8):
        raise _fail(mnemonic, f"scale must be 1, 2, 4 or 8, not {mem.scale}")
    if index is None and mem.scale != 1:
        raise _fail(mnemonic, "a scale needs an index register")
    disp = mem.disp
    if -(1 << 63) <= disp <= _MASK64:
        disp = signed(disp, 64)
    if not -(1 << 31) <= disp < (1 << 31):
        raise _fail(mnemonic, f"displacement {mem.disp:#x} does not fit in 32 signed bits")
    if mem.size is not None and mem.size not in (1, 2, 4, 8):
        raise _fail(mnemonic, f"{SIZE_NAMES.get(mem.size, mem.size)} PTR is not an operand size of {mnemonic}")
    return Mem(base=base, index=index, scale=mem.scale, disp=disp, size=mem.size)


def _imm_fits(value: int, bits: int, kind: int) -> bool:
    """Does an immediate (already reduced to the operand width) fit this row's field?"""
    if kind in _IMM_KINDS:
        return True
    field_bits = _SEXT_IMM_KINDS[kind]
    s = signed(value, bits)
    return -(1 << (field_bits - 1)) <= s < (1 << (field_bits - 1))


def _matches(row: _Row, operands: tuple) -> bool:
    if len(row.kinds) != len(operands):
        return False
    for kind, op in zip(row.kinds, operands):
        if kind in _RM_KINDS:
            ok = (isinstance(op, Reg) and width(op) == _RM_KINDS[kind]) or (
                isinstance(op, Mem) and op.size * 8 == _RM_KINDS[kind])
        elif kind in _REG_KINDS:
            ok = isinstance(op, Reg) and width(op) == _REG_KINDS[kind]
        elif kind in _ACC_KINDS:
            ok = isinstance(op, Reg) and op.name == _ACC_KINDS[kind]
        elif kind in _IMM_KINDS or kind in _SEXT_IMM_KINDS:
            ok = isinstance(op, Imm) and _imm_fits(op.value, row.bits, kind)
        elif kind == _OK.MEM:
            ok = isinstance(op, Mem)
        else:
            ok = False
        if not ok:
            return False
    return True


def _iced_memory(mem: Mem) -> "iced_x86.MemoryOperand":
    base = _REGISTER_OF[mem.base] if mem.base else iced_x86.Register.NONE
    index = _REGISTER_OF[mem.index] if mem.index else iced_x86.Register.NONE
    if not mem.base:
        displ_size = 8  # 64-bit addressing with no base: SIB base=101, disp32 sign-extended
    else:
        displ_size = 1 if mem.disp else 0  # 1: disp8 if it fits, else disp32; rbp/r13 get disp8 0
    return iced_x86.MemoryOperand(base, index, mem.scale, mem.disp, displ_size)


def _iced_instruction(row: _Row, operands: tuple) -> "iced_x86.Instruction":
    I = iced_x86.Instruction
    shape = "".join("r" if isinstance(o, Reg) else "m" if isinstance(o, Mem) else "i" for o in operands)
    args = []
    for op in operands:
        if isinstance(op, Reg):
            args.append(_REGISTER_OF[op.name])
        elif isinstance(op, Mem):
            args.append(_iced_memory(op))
        else:
            args.append(signed(op.value, row.bits))
    if shape == "ri" and row.bits == 64 and _OK.IMM64 in row.kinds:
        return I.create_reg_i64(row.code, *args)
    factory = {
        "": I.create, "r": I.create_reg, "m": I.create_mem,
        "rr": I.create_reg_reg, "rm": I.create_reg_mem, "mr": I.create_mem_reg,
        "ri": I.create_reg_i32, "mi": I.create_mem_i32,
        "rri": I.create_reg_reg_i32, "rmi": I.create_reg_mem_i32,
    }[shape]
    return factory(row.code, *args)


def _encode_with(instr: "iced_x86.Instruction", address: int) -> tuple[bytes, int]:
    """The bytes, and the size of the displacement field in them."""
    encoder = iced_x86.Encoder(64)
    encoder.encode(instr, address & _MASK64)
    return encoder.take_buffer(), encoder.get_constant_offsets().displacement_size


def _canonical(row: _Row, form: ScalarForm, operands: tuple, disp_size: int) -> tuple:
    out = []
    for op in operands:
        if isinstance(op, Imm):
            out.append(Imm(op.value % (1 << row.bits), row.bits))
        elif isinstance(op, Mem):
            if form.mnemonic == "lea":
                out.append(Mem(op.base, op.index, op.scale, op.disp, None, show_size=False, disp_size=disp_size))
            else:
                out.append(Mem(op.base, op.index, op.scale, op.disp, row.bits // 8, disp_size=disp_size))
        else:
            out.append(op)
    return tuple(out)


def _describe(operands: tuple) -> str:
    return ", ".join(operand_text(o) for o in operands)


def _encode_branch(mnemonic: str, form: ScalarForm, operands: tuple, address: int, long_branch: bool):
    if len(operands) != 1:
        raise _fail(mnemonic, f"takes 1 operand (a label or address), got {len(operands)}")
    (op,) = operands
    if isinstance(op, Imm):
        op = Target(op.value & _MASK64)
    if not isinstance(op, Target):
        raise _fail(mnemonic, f"operand must be a label or an address, not '{operand_text(op)}' "
                              "(indirect jumps are not supported)")
    rows = {_BRANCH_KINDS[_INFO[c].kinds[0]]: _INFO[c] for c in form.codes}
    short = rows[1]
    rel8 = op.address - (address + 2)
    row = short if not long_branch and -128 <= rel8 <= 127 else rows[4]
    length = 2 if row is short else (5 if form.mnemonic == "jmp" else 6)
    rel = op.address - (address + length)
    if not -(1 << 31) <= rel < (1 << 31):
        raise _fail(mnemonic, f"target {op.address:#x} is out of rel32 range of {address:#x}")
    code, _ = _encode_with(iced_x86.Instruction.create_branch(row.code, op.address & _MASK64), address)
    return form, (op,), code


def _operation_bits(mnemonic: str, operands: tuple) -> int:
    """The operand size all register and sized memory operands agree on."""
    sized = [o for o in operands if isinstance(o, Reg) or (isinstance(o, Mem) and o.size is not None)]
    sizes = {width(o) for o in sized}
    if len(sizes) > 1:
        raise _fail(mnemonic, f"operand sizes differ ({_describe(tuple(sized))})")
    if not sizes:
        raise _fail(mnemonic, "operand size not given; write BYTE, WORD, DWORD or QWORD PTR")
    return sizes.pop()


def encode(mnemonic: str, operands: tuple, address: int, *, long_branch: bool = False):
    """Encode one scalar instruction as GNU as 2.40 does; see the module docstring."""
    mnemonic = mnemonic.lower()
    if mnemonic not in _CANDIDATES:
        raise AssemblyError(f"{mnemonic}: not a scalar instruction isasim knows")
    codes = _CANDIDATES[mnemonic]
    form = CODE_FORMS[codes[0]]
    if _INFO[codes[0]].kinds and _INFO[codes[0]].kinds[0] in _BRANCH_KINDS:
        return _encode_branch(mnemonic, form, tuple(operands), address, long_branch)

    ops = []
    for op in operands:
        if isinstance(op, Reg):
            ops.append(_check_register(mnemonic, op))
        elif isinstance(op, Mem):
            ops.append(_check_memory(mnemonic, op))
        elif isinstance(op, Imm):
            ops.append(op)
        elif isinstance(op, Target):
            raise _fail(mnemonic, f"a label ({op}) is not an operand of {mnemonic}")
        else:
            raise _fail(mnemonic, f"unexpected operand {op!r}")
    ops = tuple(ops)

    counts = sorted({len(_INFO[c].kinds) for c in codes})
    if form.mnemonic == "imul" and len(ops) == 2 and isinstance(ops[1], Imm):
        ops = (ops[0], ops[0], ops[1])  # GNU as: imul r, imm is imul r, r, imm
    if len(ops) not in counts:
        wanted = " or ".join(str(n) for n in counts)
        raise _fail(mnemonic, f"takes {wanted} operand(s), got {len(ops)}")
    if sum(isinstance(o, Mem) for o in ops) > 1:
        raise _fail(mnemonic, "two memory operands")
    if ops and isinstance(ops[0], Imm):
        raise _fail(mnemonic, "the first operand cannot be an immediate")
    if form.mnemonic == "test" and len(ops) == 2 and isinstance(ops[0], Reg) and isinstance(ops[1], Mem):
        ops = (ops[1], ops[0])  # GNU as encodes test reg, mem as TEST r/m, reg

    if ops:
        if form.mnemonic == "lea":
            if not isinstance(ops[0], Reg) or len(ops) != 2 or not isinstance(ops[1], Mem):
                raise _fail(mnemonic, "takes a register and a memory operand (lea reg, [address])")
            bits = width(ops[0])
        else:
            bits = _operation_bits(mnemonic, ops)
            ops = tuple(Mem(o.base, o.index, o.scale, o.disp, bits // 8) if isinstance(o, Mem) else o for o in ops)
        for op in ops:
            if isinstance(op, Imm) and not -(1 << (bits - 1)) <= op.value < (1 << bits):
                raise _fail(mnemonic, f"immediate {op} does not fit in {bits} bits")

    candidates = []
    errors = []
    for code in codes:
        row = _INFO[code]
        if not _matches(row, ops):
            continue
        try:
            data, disp_size = _encode_with(_iced_instruction(row, ops), address)
        except ValueError as exc:
            errors.append(str(exc))
            continue
        candidates.append((len(data), row.has_accumulator, code, data, disp_size))
    if not candidates:
        if errors:
            raise _fail(mnemonic, f"cannot encode ({_describe(ops)}): {errors[0]}")
        if any(isinstance(o, Imm) for o in ops) and ops and width(ops[0]) == 64:
            raise _fail(mnemonic, "immediate does not fit in 32 signed bits")
        if any(isinstance(o, Imm) for o in ops) and ops and width(ops[0]) == 8 and form.mnemonic == "imul":
            raise _fail(mnemonic, "there is no 8-bit form with an immediate")
        rows = sorted({_INFO[c].instruction_string for c in codes})
        raise _fail(mnemonic, f"no form takes ({_describe(ops)}); forms: {' | '.join(rows)}")
    _, _, code, data, disp_size = min(candidates)
    row = _INFO[code]
    form = CODE_FORMS[code]
    return form, _canonical(row, form, ops, disp_size), data


# ---------------------------------------------------------------------------
# Decoding (iced's decoder)
# ---------------------------------------------------------------------------

_IMMEDIATE_OP_KINDS = {
    iced_x86.OpKind.IMMEDIATE8, iced_x86.OpKind.IMMEDIATE16, iced_x86.OpKind.IMMEDIATE32,
    iced_x86.OpKind.IMMEDIATE64, iced_x86.OpKind.IMMEDIATE8TO16, iced_x86.OpKind.IMMEDIATE8TO32,
    iced_x86.OpKind.IMMEDIATE8TO64, iced_x86.OpKind.IMMEDIATE32TO64,
}


def _decode_memory(instr: "iced_x86.Instruction", form: ScalarForm, row: _Row) -> Mem | None:
    base = index = None
    if instr.memory_base != iced_x86.Register.NONE:
        base = _NAME_OF_REGISTER.get(instr.memory_base)
        if base not in GPR64:
            return None  # rip-relative, or 32-bit addressing (67 prefix)
    if instr.memory_index != iced_x86.Register.NONE:
        index = _NAME_OF_REGISTER.get(instr.memory_index)
        if index not in GPR64:
            return None
    if base is None and instr.memory_displ_size != 8:
        return None  # 32-bit addressing
    disp = signed(instr.memory_displacement, 64)
    disp_size = 4 if base is None else instr.memory_displ_size  # iced says 8 for a no-base disp32
    if form.mnemonic == "lea":
        return Mem(base, index, instr.memory_index_scale, disp, None, show_size=False, disp_size=disp_size)
    return Mem(base, index, instr.memory_index_scale, disp, row.bits // 8, disp_size=disp_size)


def decode(code: bytes, pos: int, address: int) -> Instruction | None:
    """Decode one instruction of the subset at code[pos:], placed at ``address``."""
    window = bytes(code[pos : pos + 15])
    if not window:
        return None
    instr = iced_x86.Decoder(64, window, ip=address & _MASK64).decode()
    form = CODE_FORMS.get(instr.code)
    if form is None or instr.is_invalid:
        return None
    if (instr.has_lock_prefix or instr.has_rep_prefix or instr.has_repne_prefix
            or instr.segment_prefix != iced_x86.Register.NONE):
        return None
    row = _INFO[instr.code]
    operands = []
    for i in range(instr.op_count):
        kind = instr.op_kind(i)
        if kind == iced_x86.OpKind.REGISTER:
            name = _NAME_OF_REGISTER.get(instr.op_register(i))
            if name is None:
                return None
            operands.append(Reg(name))
        elif kind == iced_x86.OpKind.MEMORY:
            mem = _decode_memory(instr, form, row)
            if mem is None:
                return None
            operands.append(mem)
        elif kind == iced_x86.OpKind.NEAR_BRANCH64:
            operands.append(Target(instr.near_branch64))
        elif kind in _IMMEDIATE_OP_KINDS:
            operands.append(Imm(instr.immediate(i) % (1 << row.bits), row.bits))
        else:
            return None
    operands = tuple(operands)
    return Instruction(form=form, operands=operands, address=address, encoding=window[: instr.len],
                       text=form.format(operands))

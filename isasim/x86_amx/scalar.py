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
        .prepare(instruction) -> bind(cpu) -> a function that executes it and returns the next rip
            (None: the program ends): the execute contract of isasim.core.isa (the first step shared
            by every machine that runs the program, the function kept in the machine's decode cache)
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

from dataclasses import dataclass, field
from typing import Callable, ClassVar

import iced_x86

from ..core.errors import AssemblyError
from ..core.program import FormTable, Instruction
from .context import X86Context
from .iced_forms import IcedRowsForm
from .operands import GPR64, GPR_VIEWS, SIZE_NAMES, GprView, Imm, Mem, Reg, Target, operand_text
from .state import AF, CF, OF, PF, SF, STATUS_FLAGS, ZF

HALT = object()  # returned by RET's semantics: the kernel is over

FEATURE = "BASE"
_MASK64 = (1 << 64) - 1

# ---------------------------------------------------------------------------
# Form declarations
# ---------------------------------------------------------------------------


@dataclass
class ScalarForm(IcedRowsForm):
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
    # MOVZX/MOVSX/MOVSXD and the shifts take operands of different widths (movzx eax, BYTE PTR [rdi];
    # shl rax, cl): the operand size is the first operand's, and each row says what the others must be.
    mixed_widths: bool = False

    row_table: ClassVar[dict] = {}  # iced Code -> its _Row (this module's _INFO)

    def execute(self, cpu: X86Context, operands: tuple):
        return self.semantics(cpu, *operands)

    def prepare(self, instruction):
        """The execute contract (isasim.core.isa; see AmxForm.prepare): ``bind(cpu)``, whose function returns
        the next rip (None: HALT)."""
        operands, next_address = instruction.operands, instruction.next_address
        semantics, fast = self.semantics, _PLAIN_RUN_PATHS.get(self.semantics)

        def bind(cpu: X86Context):
            def execute() -> int | None:
                target = semantics(cpu, *operands)
                if target is None:
                    return next_address
                return None if target is HALT else target

            return execute if fast is None else (fast(cpu, execute, next_address, *operands) or execute)

        return bind


FORMS = FormTable()  # every scalar form, by id (see core.program.FormTable)


def instruction(syntax: str, *, iced: str | None = None, aliases: tuple[str, ...] = (), undefined: int = 0,
                codes: tuple[str, ...] = (), mixed_widths: bool = False):
    """Declare a scalar instruction: its SDM syntax line, then its semantics."""

    def declare(semantics: Callable) -> Callable:
        name = syntax.split()[0]
        FORMS.add(ScalarForm(syntax, name.lower(), iced or name, semantics, aliases, undefined, codes,
                             mixed_widths=mixed_widths))
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
    """DEST := value: 32-bit register writes zero-extend, 8/16-bit writes merge (operands/registers.py)."""
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
    return (SF if result >> (bits - 1) & 1 else 0) | (ZF if result == 0 else 0) | _PF_BIT[result & 0xFF]


_PF_BIT = [PF if even else 0 for even in _EVEN_PARITY]  # the low byte -> PF as an RFLAGS bit


def add_flags(a: int, b: int, bits: int) -> int:
    """The status flags of a + b: CF carry out of the top bit, OF signed overflow, AF carry out of bit 3.
    (result_flags written out: a kernel's loop counter runs through here on every iteration.)"""
    r = (a + b) % (1 << bits)
    return ((CF if (a + b) >> bits else 0)
            | (OF if ((a ^ r) & (b ^ r)) >> (bits - 1) & 1 else 0)
            | (AF if (a ^ b ^ r) & 0x10 else 0)
            | (SF if r >> (bits - 1) & 1 else 0) | (0 if r else ZF) | _PF_BIT[r & 0xFF])


def sub_flags(a: int, b: int, bits: int) -> int:
    """The status flags of a - b: CF borrow (a < b unsigned), OF signed overflow, AF borrow from bit 4."""
    r = (a - b) % (1 << bits)
    return ((CF if a < b else 0)
            | (OF if ((a ^ b) & (a ^ r)) >> (bits - 1) & 1 else 0)
            | (AF if (a ^ b ^ r) & 0x10 else 0)
            | (SF if r >> (bits - 1) & 1 else 0) | (0 if r else ZF) | _PF_BIT[r & 0xFF])


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


@instruction("MOVZX dest, src", mixed_widths=True)
def movzx(cpu: X86Context, dest, src) -> None:
    """Copy a byte or word to a wider register, zero-extended; no flags change.

        DEST := ZeroExtend(SRC)

    The 32-bit destination forms zero bits 63:32 as every 32-bit write does.
    """
    write(cpu, dest, read(cpu, src, width(src)), width(dest))


@instruction("MOVSX dest, src", mixed_widths=True)
def movsx(cpu: X86Context, dest, src) -> None:
    """Copy a byte or word to a wider register, sign-extended; no flags change.

        DEST := SignExtend(SRC)
    """
    bits = width(src)
    write(cpu, dest, signed(read(cpu, src, bits), bits), width(dest))


@instruction("MOVSXD dest, src", mixed_widths=True)
def movsxd(cpu: X86Context, dest, src) -> None:
    """Copy a doubleword to a 64-bit register, sign-extended (GNU as: movslq); no flags change.

        DEST := SignExtend(SRC)

    With a 32- or 16-bit destination (no REX.W) it is a plain move of that width,
    as the SDM's table says (``movsxd eax, ecx`` is ``63 c1``).
    """
    bits = width(src)
    write(cpu, dest, signed(read(cpu, src, bits), bits), width(dest))


@instruction("CDQE", codes=("CDQE",))
def cdqe(cpu: X86Context) -> None:
    """Sign-extend EAX into RAX (GNU as: cltq); no flags change.

        RAX := SignExtend(EAX)
    """
    write(cpu, Reg("rax"), signed(read(cpu, Reg("eax"), 32), 32), 64)


@instruction("XCHG dest, src", codes=("XCHG_RM8_R8", "XCHG_RM16_R16", "XCHG_RM32_R32", "XCHG_RM64_R64",
                                      "XCHG_R16_AX", "XCHG_R32_EAX", "XCHG_R64_RAX"))
def xchg(cpu: X86Context, dest, src) -> None:
    """Exchange dest and src; no flags change.

        TEMP := DEST; DEST := SRC; SRC := TEMP

    ``xchg ax, ax`` (66 90) is what GNU as pads with; ``90`` itself is NOP (it does
    not zero-extend EAX as ``xchg eax, eax``, 87 C0, does).  With a memory operand
    the exchange is locked on silicon; isasim has one thread, so it is just two moves.
    """
    bits = width(dest)
    a, b = read(cpu, dest, bits), read(cpu, src, bits)
    write(cpu, dest, b, bits)
    write(cpu, src, a, bits)


# ---------------------------------------------------------------------------
# The stack (memory at RSP; the loader maps it)
# ---------------------------------------------------------------------------


def push_value(cpu: X86Context, value: int, size: int) -> None:
    """RSP := RSP - size; Memory[RSP] := value (``size`` bytes, little-endian)."""
    rsp = (cpu.state.read_gpr(GPR_VIEWS["rsp"]) - size) & _MASK64
    cpu.write_memory(rsp, (value % (1 << (8 * size))).to_bytes(size, "little"))
    cpu.state.write_gpr(GPR_VIEWS["rsp"], rsp)  # after the store: a faulting push leaves RSP as it was


def pop_value(cpu: X86Context, size: int) -> int:
    """value := Memory[RSP] (``size`` bytes); RSP := RSP + size."""
    rsp = cpu.state.read_gpr(GPR_VIEWS["rsp"])
    value = int.from_bytes(cpu.read_memory(rsp, size), "little")
    cpu.state.write_gpr(GPR_VIEWS["rsp"], rsp + size)
    return value


@instruction("PUSH src", codes=("PUSH_R64", "PUSH_R16", "PUSH_RM64", "PUSH_RM16", "PUSHQ_IMM8", "PUSHQ_IMM32"))
def push(cpu: X86Context, src) -> None:
    """Push src onto the stack; no flags change.

        RSP := RSP - OperandSize/8; Memory[RSP] := SRC

    The operand size is 64 bits (16 with a 66 prefix: ``push ax``); an immediate is
    sign-extended to 64 bits.  SRC is read before RSP changes, so ``push rsp``
    stores RSP's old value and ``push QWORD PTR [rsp+8]`` reads at the old RSP + 8.
    """
    bits = width(src) if not isinstance(src, Imm) else 64
    push_value(cpu, read(cpu, src, bits), bits // 8)


@instruction("POP dest", codes=("POP_R64", "POP_R16", "POP_RM64", "POP_RM16"))
def pop(cpu: X86Context, dest) -> None:
    """Pop the top of the stack into dest; no flags change.

        DEST := Memory[RSP]; RSP := RSP + OperandSize/8

    RSP is incremented before DEST is written: ``pop rsp`` leaves the popped value
    in RSP, and a memory DEST addressed through RSP uses the incremented RSP
    (the SDM's POP: "computes the effective address ... after it increments").
    """
    bits = width(dest)
    write(cpu, dest, pop_value(cpu, bits // 8), bits)


@instruction("LEAVE", codes=("LEAVEQ",))
def leave(cpu: X86Context) -> None:
    """Release the stack frame ENTER or ``push rbp; mov rbp, rsp`` made; no flags change.

        RSP := RBP
        RBP := Pop()
    """
    cpu.state.write_gpr(GPR_VIEWS["rsp"], cpu.state.read_gpr(GPR_VIEWS["rbp"]))
    cpu.state.write_gpr(GPR_VIEWS["rbp"], pop_value(cpu, 8))


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
# Shifts
# ---------------------------------------------------------------------------


def shift(cpu: X86Context, dest, count, *, kind: str) -> None:
    """The SDM's SAL/SAR/SHL/SHR Operation, one bit at a time as it is written there."""
    bits = width(dest)
    temp_count = read(cpu, count, 8) & (0x3F if bits == 64 else 0x1F)
    if temp_count == 0:
        return  # "If the count is 0, the flags are not affected", nor is DEST written
    original = value = read(cpu, dest, bits)
    carry = 0
    for _ in range(temp_count):
        if kind == "shl":
            carry = value >> (bits - 1) & 1
            value = (value << 1) % (1 << bits)
        elif kind == "sar":
            carry = value & 1
            value = (signed(value, bits) >> 1) % (1 << bits)
        else:
            carry = value & 1
            value >>= 1
    write(cpu, dest, value, bits)
    if kind == "shl":
        overflow = (value >> (bits - 1) & 1) ^ carry  # OF := MSB(DEST) XOR CF
    elif kind == "sar":
        overflow = 0
    else:
        overflow = original >> (bits - 1) & 1  # OF := MSB(tempDEST)
    set_flags(cpu, (CF if carry else 0) | (OF if overflow else 0) | result_flags(value, bits))  # AF := 0


_SHIFT_DOC = """{what}

        tempCOUNT := COUNT AND (3FH if 64-bit else 1FH)
        WHILE tempCOUNT != 0: {step}; tempCOUNT := tempCOUNT - 1
        IF tempCOUNT was 0: no flags change, DEST is not written
        ELSE: SF, ZF, PF from the result; OF := {of} (defined for a count of 1 only)

    OF for counts other than 1 and AF are undefined in the SDM; isasim computes
    OF by the count-1 rule and clears AF (UNDEFINED_FLAGS masks both when
    comparing with silicon).  CF is undefined for SHL and SHR of a byte or word by
    more than its width; isasim follows the loop above (the bits shifted in are 0).
    The count is an imm8, CL, or the implied 1 of D0/D1 (``shl rax,1``).
"""


@instruction("SHL dest, count", aliases=("sal",), undefined=OF | AF, mixed_widths=True)
def shl(cpu: X86Context, dest, count) -> None:
    shift(cpu, dest, count, kind="shl")


@instruction("SHR dest, count", undefined=OF | AF, mixed_widths=True)
def shr(cpu: X86Context, dest, count) -> None:
    shift(cpu, dest, count, kind="shr")


@instruction("SAR dest, count", undefined=OF | AF, mixed_widths=True)
def sar(cpu: X86Context, dest, count) -> None:
    shift(cpu, dest, count, kind="sar")


shl.__doc__ = _SHIFT_DOC.format(
    what="Shift dest left by count (SAL is the same instruction: GNU as writes /4 for both).",
    step="CF := MSB(DEST); DEST := DEST * 2", of="MSB(DEST) XOR CF")
shr.__doc__ = _SHIFT_DOC.format(what="Shift dest right by count, unsigned (zeros come in).",
                                step="CF := LSB(DEST); DEST := DEST / 2 (unsigned)", of="MSB(original DEST)")
sar.__doc__ = _SHIFT_DOC.format(what="Shift dest right by count, signed (copies of the sign bit come in).",
                                step="CF := LSB(DEST); DEST := DEST / 2 (signed, rounding toward -infinity)",
                                of="0")


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


_JCC_CONDITIONS: dict[Callable, Callable[..., bool]] = {}  # each Jcc's semantics -> its condition


def _declare_jcc(cc: str, meaning: str, test: Callable[..., bool], aliases: tuple[str, ...]) -> None:
    def semantics(cpu: X86Context, target: Target) -> int | None:
        return jcc(cpu, target, condition=test)

    _JCC_CONDITIONS[semantics] = test
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
# Plain-run paths: a kernel loop's scalar instructions, bound at translation
# ---------------------------------------------------------------------------
#
# A kernel's loop bookkeeping (add rdi, 2048; dec r11; jnz) costs as much per instruction as a tile
# load when every operand is looked up by name on each execution.  These paths find the register
# views once, at translation, and do what the semantics above do for whole 64- and 32-bit registers
# (a 32-bit write zero-extends: the register is simply replaced) while the journal is off; every
# other case, and every recorded step, runs the semantics themselves.


def _whole_register(operand) -> GprView | None:
    """The view of a 64- or 32-bit GPR operand (a write replaces the whole register), else None."""
    if isinstance(operand, Reg):
        view = GPR_VIEWS.get(operand.name)
        if view is not None and view.bits in (32, 64):
            return view
    return None


def _source_reader(src, bits: int):
    """(register view, None) or (None, constant) for a register or immediate source of ``bits`` bits;
    None for any other source."""
    if isinstance(src, Imm):
        return None, src.value % (1 << bits)
    if isinstance(src, Reg) and src.name in GPR_VIEWS:
        return GPR_VIEWS[src.name], None
    return None


def _plain_arithmetic(flags_of: Callable[[int, int, int], int], result_of: Callable[[int, int], int] | None,
                      written: int = STATUS_FLAGS, constant: int | None = None):
    """ADD / SUB / CMP (``result_of`` None: flags only) of a whole register and a register or immediate;
    with ``constant``, INC / DEC (the source is that constant, and CF is not written)."""

    def bind(cpu: X86Context, general, next_address: int, dest, src=None):
        view = _whole_register(dest)
        if view is None:
            return None
        bits = view.bits
        source = (None, constant) if constant is not None else _source_reader(src, bits)
        if source is None:
            return None
        src_view, value = source
        state, journal = cpu.state, cpu.state.journal
        number, mask, keep = view.number, (1 << bits) - 1, ~written

        def execute() -> int:
            if journal.enabled:
                return general()
            gpr = state.gpr
            a = gpr[number] & mask
            b = value if src_view is None else (gpr[src_view.number] & src_view.mask) >> src_view.shift
            if result_of is not None:
                gpr[number] = result_of(a, b) & mask
            state.rflags = state.rflags & keep | flags_of(a, b, bits) & written | 0x2  # as set_rflags: bit 1 is 1
            return next_address

        return execute

    return bind


def _plain_mov(cpu: X86Context, general, next_address: int, dest, src):
    """MOV of a register or immediate into a whole register."""
    view = _whole_register(dest)
    source = _source_reader(src, view.bits) if view is not None else None
    if source is None:
        return None
    src_view, value = source
    state, journal = cpu.state, cpu.state.journal
    number, mask = view.number, (1 << view.bits) - 1

    def execute() -> int:
        if journal.enabled:
            return general()
        gpr = state.gpr
        gpr[number] = value if src_view is None else ((gpr[src_view.number] & src_view.mask) >> src_view.shift) & mask
        return next_address

    return execute


def _plain_jcc(condition: Callable[..., bool]):
    """Jcc: the condition of each combination of the five status flags it may test, worked out once by
    the declared condition itself (a branch writes nothing, so this path serves stepping too)."""

    def bind(cpu: X86Context, general, next_address: int, target: Target):
        state, taken_address = cpu.state, target.address
        taken: dict[int, bool] = {}
        tested = CF | ZF | SF | OF | PF

        def execute() -> int:
            flags = state.rflags & tested
            outcome = taken.get(flags)
            if outcome is None:
                outcome = taken[flags] = bool(condition(CF=bool(flags & CF), ZF=bool(flags & ZF), SF=bool(flags & SF),
                                                        OF=bool(flags & OF), PF=bool(flags & PF)))
            return taken_address if outcome else next_address

        return execute

    return bind


# semantics -> the builder of its plain-run path
_PLAIN_RUN_PATHS: dict[Callable, Callable] = {semantics: _plain_jcc(test) for semantics, test in _JCC_CONDITIONS.items()}
_PLAIN_RUN_PATHS.update({
    add: _plain_arithmetic(add_flags, lambda a, b: a + b),
    sub: _plain_arithmetic(sub_flags, lambda a, b: a - b),
    cmp: _plain_arithmetic(sub_flags, None),
    inc: _plain_arithmetic(add_flags, lambda a, b: a + b, STATUS_FLAGS & ~CF, constant=1),
    dec: _plain_arithmetic(sub_flags, lambda a, b: a - b, STATUS_FLAGS & ~CF, constant=1),
    mov: _plain_mov,
})


# ---------------------------------------------------------------------------
# The iced-x86 opcode rows of each form
# ---------------------------------------------------------------------------

_OK = iced_x86.OpCodeOperandKind
_RM_KINDS = {_OK.R8_OR_MEM: 8, _OK.R16_OR_MEM: 16, _OK.R32_OR_MEM: 32, _OK.R64_OR_MEM: 64}
_REG_KINDS = {_OK.R8_REG: 8, _OK.R16_REG: 16, _OK.R32_REG: 32, _OK.R64_REG: 64,
              _OK.R8_OPCODE: 8, _OK.R16_OPCODE: 16, _OK.R32_OPCODE: 32, _OK.R64_OPCODE: 64}
_ACC_KINDS = {_OK.AL: "al", _OK.AX: "ax", _OK.EAX: "eax", _OK.RAX: "rax"}
_FIXED_REG_KINDS = {_OK.CL: "cl"}  # the shift count register: not an accumulator, no tie-break
_IMM_KINDS = {_OK.IMM8, _OK.IMM16, _OK.IMM32, _OK.IMM64}
_IMM_FIELD_BITS = {_OK.IMM8: 8, _OK.IMM16: 16, _OK.IMM32: 32, _OK.IMM64: 64}
_IMPLIED_ONE = _OK.IMM8_CONST_1  # D0/D1 /r: shift by 1, no immediate byte
_SEXT_IMM_KINDS = {_OK.IMM8SEX16: 8, _OK.IMM8SEX32: 8, _OK.IMM8SEX64: 8, _OK.IMM32SEX64: 32}
_BRANCH_KINDS = {_OK.BR64_1: 1, _OK.BR64_4: 4}
_SUPPORTED_KINDS = (set(_RM_KINDS) | set(_REG_KINDS) | set(_ACC_KINDS) | _IMM_KINDS | set(_SEXT_IMM_KINDS)
                    | set(_BRANCH_KINDS) | set(_FIXED_REG_KINDS) | {_OK.MEM, _IMPLIED_ONE})
# Rows iced knows that GNU as never emits for this subset, or that are not this subset.
_EXCLUDED_CODES = {
    "TEST_RM8_IMM8_F6R1", "TEST_RM16_IMM16_F7R1", "TEST_RM32_IMM32_F7R1", "TEST_RM64_IMM32_F7R1",  # F6/F7 /1
    "NOPW", "NOPQ",  # 66 90 is xchg ax,ax (given to XCHG below) and REX.W 90 is rex.W nop to objdump
    "PUSH_IMM16", "PUSHW_IMM8",  # pushw imm: GNU as writes push imm as the 64-bit push
    "MOVSXD_R16_RM16",  # GNU as refuses movsxd ax, cx (operand size mismatch)
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
    operand_bits: tuple = ()  # per operand: its own width (movzx r32, r/m8: 32, 8; an immediate: its field)

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
    if kinds and kinds[0] in (_OK.IMM8SEX64, _OK.IMM32SEX64):
        return 64  # push imm: a 64-bit push of the sign-extended immediate
    return None


def _operand_bits(kind: int, bits: int | None) -> int | None:
    """One operand's own width in a row whose operand size is ``bits``."""
    for table in (_RM_KINDS, _REG_KINDS):
        if kind in table:
            return table[kind]
    if kind in _ACC_KINDS:
        return GPR_VIEWS[_ACC_KINDS[kind]].bits
    if kind in _FIXED_REG_KINDS or kind == _IMPLIED_ONE:
        return 8
    if kind in _IMM_FIELD_BITS and bits:
        return min(_IMM_FIELD_BITS[kind], bits)  # a shift's imm8 count is 8 bits whatever the operand size
    return bits


_INFO: dict[int, _Row] = ScalarForm.row_table
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
        bits = _row_bits(kinds)
        _INFO[code] = _Row(code, kinds, bits, info.op_code_string, info.instruction_string,
                           tuple(_operand_bits(k, bits) for k in kinds))
        owners[0].codes.append(code)
        CODE_FORMS[code] = owners[0]
    for form in FORMS:
        for spelling in (form.mnemonic, *form.aliases):
            _CANDIDATES.setdefault(spelling, []).extend(form.codes)
    # "mov rax, 0x80000000" is written as mov but needs MOVABS's row.
    (movabs,) = FORMS.of_mnemonic("movabs")
    _CANDIDATES["mov"].extend(movabs.codes)
    # 66 90 is iced's NOPW, objdump's and GNU as's "xchg ax,ax" (o16 90+rw with AX twice).
    (xchg,) = FORMS.of_mnemonic("xchg")
    nopw = iced_x86.Code.NOPW
    _INFO[nopw] = _Row(nopw, (_OK.R16_OPCODE, _OK.AX), 16, "o16 90", "XCHG AX, AX", (16, 16))
    CODE_FORMS[nopw] = xchg


_build_tables()

MNEMONICS: frozenset[str] = frozenset(_CANDIDATES)
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
                                 "shl": 0, "sal": 0, "shr": 0, "sar": 0}

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
    if base == "rip" and index is not None:
        raise _fail(mnemonic, "a rip-relative address takes no index register")
    for what, name in (("base", base), ("index", index)):
        if name == "eip" or (name == "rip" and what == "index"):
            raise _fail(mnemonic, f"{name} cannot be an index register" if name == "rip" else
                        "eip-relative addressing is not supported")
        if name == "rip":
            continue
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
    if kind == _IMPLIED_ONE:
        return value == 1
    if kind in _IMM_KINDS:
        field = _IMM_FIELD_BITS[kind]
        # as wide as the operand: already range-checked; narrower (a shift's imm8): -128..255
        return field >= bits or -(1 << (field - 1)) <= value < (1 << field)
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
        elif kind in _FIXED_REG_KINDS:
            ok = isinstance(op, Reg) and op.name == _FIXED_REG_KINDS[kind]
        elif kind in _IMM_KINDS or kind in _SEXT_IMM_KINDS or kind == _IMPLIED_ONE:
            ok = isinstance(op, Imm) and _imm_fits(op.value, row.bits, kind)
        elif kind == _OK.MEM:
            ok = isinstance(op, Mem)
        else:
            ok = False
        if not ok:
            return False
    return True


def _iced_memory(mem: Mem) -> "iced_x86.MemoryOperand":
    if mem.base == "rip":
        # iced wants the target; until the length is known, carry disp (_encode_with places it)
        return iced_x86.MemoryOperand(iced_x86.Register.RIP, displ=mem.disp, displ_size=8)
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
        "": I.create, "r": I.create_reg, "m": I.create_mem, "i": I.create_i32,
        "rr": I.create_reg_reg, "rm": I.create_reg_mem, "mr": I.create_mem_reg,
        "ri": I.create_reg_i32, "mi": I.create_mem_i32,
        "rri": I.create_reg_reg_i32, "rmi": I.create_reg_mem_i32,
    }[shape]
    return factory(row.code, *args)


def _encode_with(instr: "iced_x86.Instruction", address: int) -> tuple[bytes, int]:
    """The bytes, and the size of the displacement field in them."""
    if instr.memory_base == iced_x86.Register.RIP:
        # [rip+disp] is relative to the next instruction: encode once for the length (disp32 always), then
        # with the target that gives this disp
        disp = signed(instr.memory_displacement, 64)
        guess = 15 if disp < 0 else 0  # keeps the probe's own distance in i32 range for any disp32
        instr.memory_displacement = (address + guess + disp) & _MASK64
        probe = iced_x86.Encoder(64)
        length = probe.encode(instr, address & _MASK64)
        instr.memory_displacement = (address + length + disp) & _MASK64
    encoder = iced_x86.Encoder(64)
    encoder.encode(instr, address & _MASK64)
    return encoder.take_buffer(), encoder.get_constant_offsets().displacement_size


def _canonical(row: _Row, form: ScalarForm, operands: tuple, disp_size: int) -> tuple:
    out = []
    for kind, bits, op in zip(row.kinds, row.operand_bits, operands):
        if isinstance(op, Imm):
            out.append(Imm(op.value % (1 << bits), bits, implied=kind == _IMPLIED_ONE))
        elif isinstance(op, Mem):
            if form.mnemonic == "lea":
                out.append(Mem(op.base, op.index, op.scale, op.disp, None, show_size=False, disp_size=disp_size))
            else:
                out.append(Mem(op.base, op.index, op.scale, op.disp, bits // 8, disp_size=disp_size))
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


# Prefix words objdump prints before a NOP that carries prefixes it does not need (GNU as's own
# padding, e.g. 66 66 2E 0F 1F 84 00 00 00 00 00 "data16 cs nop WORD PTR [rax+rax*1+0x0]").
NOP_PREFIX_WORDS = {"data16": 0x66, "cs": 0x2E}


def split_prefixes(mnemonic: str) -> tuple[tuple[str, ...], str]:
    """("data16", "cs"), "nop" for "data16 cs nop"; (), mnemonic for a mnemonic without prefix words."""
    words = mnemonic.lower().split()
    return tuple(words[:-1]), words[-1] if words else ""


def accepts(mnemonic: str) -> bool:
    """Whether ``mnemonic`` (possibly with NOP prefix words) is a scalar instruction's."""
    prefixes, name = split_prefixes(mnemonic)
    return name in _CANDIDATES and (not prefixes or name == "nop")


def _encode_prefixed_nop(prefixes: tuple[str, ...], operands: tuple, address: int):
    """NOP r/m behind the prefix words objdump prints.

    GNU as takes ``cs nop WORD PTR [...]`` and writes 2E before the 66 the
    operand size needs; it refuses ``data16`` on a WORD NOP ("same type of prefix
    used twice"), yet its padding is exactly that: every extra 66 first, then the
    operand-size 66, then 2E.  isasim writes those bytes, so objdump's text of GNU
    as's padding assembles back to it.
    """
    if any(p not in NOP_PREFIX_WORDS for p in prefixes) or prefixes.count("cs") > 1 or (
            "cs" in prefixes and prefixes[-1] != "cs"):
        raise _fail(" ".join(prefixes + ("nop",)),
                    "only 'data16' (any number) then 'cs' may come before nop, as objdump prints them")
    if not operands or not isinstance(operands[0], Mem):
        raise _fail("nop", "prefix words go only before a NOP with a memory operand")
    form, ops, data = encode("nop", operands, address)
    data16 = prefixes.count("data16")
    cs = b"\x2e" if "cs" in prefixes else b""
    if not data16:
        return form, ops, cs + data  # GNU as: 2E 66 0F 1F ...
    own = data[:1] if data[:1] == b"\x66" else b""
    return form, ops, b"\x66" * data16 + own + cs + data[len(own):]


def encode(mnemonic: str, operands: tuple, address: int, *, long_branch: bool = False):
    """Encode one scalar instruction as GNU as 2.40 does; see the module docstring."""
    mnemonic = mnemonic.lower()
    prefixes, name = split_prefixes(mnemonic)
    if prefixes:
        if name != "nop":
            raise _fail(mnemonic, "prefix words are supported only before nop")
        return _encode_prefixed_nop(prefixes, tuple(operands), address)
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
    if ops and isinstance(ops[0], Imm) and form.mnemonic != "push":
        raise _fail(mnemonic, "the first operand cannot be an immediate")
    if form.mnemonic in ("test", "xchg") and len(ops) == 2 and isinstance(ops[0], Reg) and isinstance(ops[1], Mem):
        ops = (ops[1], ops[0])  # GNU as encodes test/xchg reg, mem as OP r/m, reg
    if form.mnemonic == "xchg" and len(ops) == 2 and all(isinstance(o, Reg) for o in ops):
        if ops[0].name == ops[1].name == "rax":
            raise _fail(mnemonic, "GNU as writes xchg rax, rax as 90, which is nop; write nop")
        if (ops[0].name in _ACC_KINDS.values() and ops[1].name not in _ACC_KINDS.values()
                and width(ops[0]) > 8):
            ops = (ops[1], ops[0])  # GNU as: xchg rax, rcx is 90+r with the other register, as objdump prints it

    if ops:
        if form.mnemonic == "lea":
            if not isinstance(ops[0], Reg) or len(ops) != 2 or not isinstance(ops[1], Mem):
                raise _fail(mnemonic, "takes a register and a memory operand (lea reg, [address])")
            bits = width(ops[0])
        elif form.mixed_widths:
            if isinstance(ops[0], Imm) or (isinstance(ops[0], Mem) and ops[0].size is None):
                raise _fail(mnemonic, "operand size not given; write BYTE, WORD, DWORD or QWORD PTR")
            if any(isinstance(o, Mem) and o.size is None for o in ops):
                raise _fail(mnemonic, "source size not given; write BYTE, WORD or DWORD PTR")
            bits = width(ops[0])
        elif form.mnemonic == "push" and len(ops) == 1 and isinstance(ops[0], Imm):
            bits = 64  # push imm: the 64-bit push of the sign-extended imm8/imm32
        else:
            bits = _operation_bits(mnemonic, ops)
            ops = tuple(Mem(o.base, o.index, o.scale, o.disp, bits // 8) if isinstance(o, Mem) else o for o in ops)
        for op in ops:
            if form.mixed_widths and isinstance(op, Imm):
                if not -0x80 <= op.value <= 0xFF:
                    raise _fail(mnemonic, f"shift count {op} does not fit in 8 bits")
            elif isinstance(op, Imm) and not -(1 << (bits - 1)) <= op.value < (1 << bits):
                raise _fail(mnemonic, f"immediate {op} does not fit in {bits} bits")

    candidates = []
    errors = []
    for code in codes:
        row = _INFO[code]
        if not _matches(row, ops):
            continue
        if code == iced_x86.Code.XCHG_R32_EAX and ops[0].name == "eax":
            continue  # 90 would be NOP, which does not zero-extend: GNU as writes xchg eax, eax as 87 C0
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


def _decode_memory(instr: "iced_x86.Instruction", form: ScalarForm, bits: int) -> Mem | None:
    base = index = None
    if instr.memory_base == iced_x86.Register.RIP:
        return rip_relative(instr, bits if form.mnemonic != "lea" else None)
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
    return Mem(base, index, instr.memory_index_scale, disp, bits // 8, disp_size=disp_size)


def rip_relative(instr: "iced_x86.Instruction", size: int | None) -> Mem:
    """[rip+disp] as decoded: disp from the target iced resolves, and the target itself for execution."""
    target = instr.memory_displacement  # iced: next_ip + disp, resolved
    disp = signed(target - instr.next_ip, 64)
    return Mem("rip", None, 1, disp, size // 8 if size else None, show_size=size is not None, disp_size=4,
               rip_target=target)


def decode(code: bytes, pos: int, address: int) -> Instruction | None:
    """Decode one instruction of the subset at code[pos:], placed at ``address``."""
    window = bytes(code[pos : pos + 15])
    if not window:
        return None
    instr = iced_x86.Decoder(64, window, ip=address & _MASK64).decode()
    form = CODE_FORMS.get(instr.code)
    if form is None or instr.is_invalid:
        return None
    prefixes = ()
    if instr.code in _PREFIXABLE_NOPS:
        prefixes = _nop_prefix_words(window, instr)
        if prefixes is None:
            return None
    elif instr.segment_prefix != iced_x86.Register.NONE:
        return None
    if instr.has_lock_prefix or instr.has_rep_prefix or instr.has_repne_prefix:
        return None
    row = _INFO[instr.code]
    if instr.code == iced_x86.Code.NOPW:
        operands = (Reg("ax"), Reg("ax"))
        return Instruction(form=form, operands=operands, address=address, encoding=window[: instr.len],
                           text=form.format(operands))
    operands = []
    for i in range(instr.op_count):
        kind = instr.op_kind(i)
        if kind == iced_x86.OpKind.REGISTER:
            name = _NAME_OF_REGISTER.get(instr.op_register(i))
            if name is None:
                return None
            operands.append(Reg(name))
        elif kind == iced_x86.OpKind.MEMORY:
            mem = _decode_memory(instr, form, row.operand_bits[i])
            if mem is None:
                return None
            operands.append(mem)
        elif kind == iced_x86.OpKind.NEAR_BRANCH64:
            operands.append(Target(instr.near_branch64))
        elif kind in _IMMEDIATE_OP_KINDS:
            bits = row.operand_bits[i]
            operands.append(Imm(instr.immediate(i) % (1 << bits), bits, implied=row.kinds[i] == _IMPLIED_ONE))
        else:
            return None
    operands = tuple(operands)
    if (form.mnemonic == "xchg" and instr.code != iced_x86.Code.XCHG_RM8_R8 and all(isinstance(o, Reg) for o in operands)
            and sum(o.name in _ACC_KINDS.values() for o in operands) == 1 and row.kinds[1] != _OK.AX
            and row.kinds[1] not in _ACC_KINDS):
        # 87 /r with the accumulator: objdump prints "xchg eax,ecx", whose text GNU as writes as 91,
        # which objdump prints "xchg ecx,eax".  The text cannot name these bytes; leave them undecoded.
        return None
    decoded = Instruction(form=form, operands=operands, address=address, encoding=window[: instr.len],
                          text=" ".join(prefixes + (form.format(operands),)))
    if prefixes:
        decoded.extra["prefixes"] = prefixes
    return decoded


_PREFIXABLE_NOPS = {iced_x86.Code.NOP_RM16, iced_x86.Code.NOP_RM32, iced_x86.Code.NOP_RM64}


def _nop_prefix_words(window: bytes, instr: "iced_x86.Instruction") -> tuple[str, ...] | None:
    """The words objdump prints before NOP r/m for its prefixes (``data16`` per unneeded 66, ``cs``), or
    None if a prefix is one isasim does not model (another segment, a second 2E, 67, ...)."""
    if instr.segment_prefix not in (iced_x86.Register.NONE, iced_x86.Register.CS):
        return None
    legacy = []
    for byte in window[: instr.len]:
        if byte in (0x66, 0x2E):
            legacy.append(byte)
        elif 0x40 <= byte <= 0x4F or byte == 0x0F:
            break
        else:
            return None
    if legacy.count(0x2E) > 1:
        return None
    needed = 1 if instr.code == iced_x86.Code.NOP_RM16 else 0
    return ("data16",) * (legacy.count(0x66) - needed) + (("cs",) if 0x2E in legacy else ())

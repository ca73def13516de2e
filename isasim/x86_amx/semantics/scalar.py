"""The semantics of the scalar x86-64 subset a hand-written AMX kernel loop (and a compiled function) needs.

The subset is MOV (and MOVABS, which is what objdump calls ``mov r64, imm64``), MOVZX,
MOVSX, MOVSXD, CDQE, XCHG, PUSH, POP, LEAVE, ADD, SUB, INC, DEC, CMP, TEST, XOR, LEA,
IMUL (1, 2 and 3 operands), SHL/SAL, SHR, SAR, JMP, the sixteen Jcc, NOP (``90`` and
``0F 1F /0``) and RET.  Each function reads like the SDM's Operation section; its
docstring is the ``isasim explain`` text.  The forms that run them are declared in
forms/scalar.py, their encodings in encoding/scalar.py.

Each function returns None (fall through), a jump target, or HALT (the RET of the function isasim
runs: the run is over).

Flags the SDM leaves undefined get the values Emerald Rapids silicon gives them
(forms/scalar.py's UNDEFINED_FLAGS lists them so that comparisons with other CPUs can
mask them): TEST and XOR clear AF; the IMUL forms set SF and PF from the truncated
result (the low half for the one-operand form) and clear ZF and AF.
"""

from __future__ import annotations

from typing import Callable

from ..context import X86Context
from ..faults import DE
from ..operands import GPR_VIEWS, Imm, Mem, Reg, Target, signed, width
from ..state import AF, CF, OF, PF, SF, STATUS_FLAGS, ZF

HALT = object()  # returned by RET's semantics when the function isasim runs returns: the run is over

_MASK64 = (1 << 64) - 1


# ---------------------------------------------------------------------------
# Shared pseudocode helpers (the SDM's vocabulary)
# ---------------------------------------------------------------------------


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


def lea(cpu: X86Context, dest, m: Mem) -> None:
    """Load the effective address of m into dest; memory is not accessed and no flags change.

        DEST := EffectiveAddress(SRC)   (truncated to the size of DEST)
    """
    bits = width(dest)
    write(cpu, dest, cpu.effective_address(m), bits)


def movzx(cpu: X86Context, dest, src) -> None:
    """Copy a byte or word to a wider register, zero-extended; no flags change.

        DEST := ZeroExtend(SRC)

    The 32-bit destination forms zero bits 63:32 as every 32-bit write does.
    """
    write(cpu, dest, read(cpu, src, width(src)), width(dest))


def movsx(cpu: X86Context, dest, src) -> None:
    """Copy a byte or word to a wider register, sign-extended; no flags change.

        DEST := SignExtend(SRC)
    """
    bits = width(src)
    write(cpu, dest, signed(read(cpu, src, bits), bits), width(dest))


def movsxd(cpu: X86Context, dest, src) -> None:
    """Copy a doubleword to a 64-bit register, sign-extended (GNU as: movslq); no flags change.

        DEST := SignExtend(SRC)

    With a 32- or 16-bit destination (no REX.W) it is a plain move of that width,
    as the SDM's table says (``movsxd eax, ecx`` is ``63 c1``).
    """
    bits = width(src)
    write(cpu, dest, signed(read(cpu, src, bits), bits), width(dest))


def cdqe(cpu: X86Context) -> None:
    """Sign-extend EAX into RAX (GNU as: cltq); no flags change.

        RAX := SignExtend(EAX)
    """
    write(cpu, Reg("rax"), signed(read(cpu, Reg("eax"), 32), 32), 64)


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


def push(cpu: X86Context, src) -> None:
    """Push src onto the stack; no flags change.

        RSP := RSP - OperandSize/8; Memory[RSP] := SRC

    The operand size is 64 bits (16 with a 66 prefix: ``push ax``); an immediate is
    sign-extended to 64 bits.  SRC is read before RSP changes, so ``push rsp``
    stores RSP's old value and ``push QWORD PTR [rsp+8]`` reads at the old RSP + 8.
    """
    bits = width(src) if not isinstance(src, Imm) else 64
    push_value(cpu, read(cpu, src, bits), bits // 8)


def pop(cpu: X86Context, dest) -> None:
    """Pop the top of the stack into dest; no flags change.

        DEST := Memory[RSP]; RSP := RSP + OperandSize/8

    RSP is incremented before DEST is written: ``pop rsp`` leaves the popped value
    in RSP, and a memory DEST addressed through RSP uses the incremented RSP
    (the SDM's POP: "computes the effective address ... after it increments").
    """
    bits = width(dest)
    write(cpu, dest, pop_value(cpu, bits // 8), bits)


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


def cmp(cpu: X86Context, src1, src2) -> None:
    """Compare src1 with src2: set the flags as SUB would, and discard the difference.

        temp := SRC1 - SignExtend(SRC2)
        CF, OF, SF, ZF, AF, PF := as for SUB
    """
    bits = width(src1)
    a, b = read(cpu, src1, bits), read(cpu, src2, bits)
    set_flags(cpu, sub_flags(a, b, bits))


def inc(cpu: X86Context, dest) -> None:
    """Add 1 to dest, keeping CF.

        DEST := DEST + 1
        OF, SF, ZF, AF, PF := as for ADD with 1; CF is not affected
    """
    bits = width(dest)
    a = read(cpu, dest, bits)
    write(cpu, dest, a + 1, bits)
    set_flags(cpu, add_flags(a, 1, bits), written=STATUS_FLAGS & ~CF)


def dec(cpu: X86Context, dest) -> None:
    """Subtract 1 from dest, keeping CF.

        DEST := DEST - 1
        OF, SF, ZF, AF, PF := as for SUB with 1; CF is not affected
    """
    bits = width(dest)
    a = read(cpu, dest, bits)
    write(cpu, dest, a - 1, bits)
    set_flags(cpu, sub_flags(a, 1, bits), written=STATUS_FLAGS & ~CF)


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


def _zero_extend_if_32(cpu: X86Context, dest, bits: int) -> None:
    """A shift or rotate by a masked count of 0 changes no flag, but a 32-bit register DEST is still
    written: bits 63:32 become 0 (measured on AMD Zen 3 silicon, as every 32-bit register write)."""
    if bits == 32 and isinstance(dest, Reg):
        write(cpu, dest, read(cpu, dest, 32), 32)


def shift(cpu: X86Context, dest, count, *, kind: str) -> None:
    """The SDM's SAL/SAR/SHL/SHR Operation, one bit at a time as it is written there."""
    bits = width(dest)
    temp_count = read(cpu, count, 8) & (0x3F if bits == 64 else 0x1F)
    if temp_count == 0:
        _zero_extend_if_32(cpu, dest, bits)  # "If the count is 0, the flags are not affected"
        return
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
        IF tempCOUNT was 0: no flags change (a 32-bit register DEST is still zero-extended)
        ELSE: SF, ZF, PF from the result; OF := {of} (defined for a count of 1 only)

    OF for counts other than 1 and AF are undefined in the SDM; isasim computes
    OF by the count-1 rule and clears AF (UNDEFINED_FLAGS masks both when
    comparing with silicon).  CF is undefined for SHL and SHR of a byte or word by
    more than its width; isasim follows the loop above (the bits shifted in are 0).
    The count is an imm8, CL, or the implied 1 of D0/D1 (``shl rax,1``).
"""


def shl(cpu: X86Context, dest, count) -> None:
    shift(cpu, dest, count, kind="shl")


def shr(cpu: X86Context, dest, count) -> None:
    shift(cpu, dest, count, kind="shr")


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


_JCC_DOC = (
    "Jump to target if {meaning}, else fall through (rel8 or rel32, relative to the next instruction).\n\n"
    "    IF {condition} THEN RIP := RIP + SignExtend(rel) FI\n\n"
    "No flags change."
)
JCC: dict[str, Callable] = {}  # condition code -> the semantics of its Jcc, in CONDITIONS order
JCC_CONDITIONS: dict[Callable, Callable[..., bool]] = {}  # each Jcc's semantics -> its condition


def _jcc_semantics(cc: str, meaning: str, test: Callable[..., bool]) -> Callable:
    def semantics(cpu: X86Context, target: Target) -> int | None:
        return jcc(cpu, target, condition=test)

    semantics.__name__ = f"j{cc}"
    semantics.__doc__ = _JCC_DOC.format(meaning=meaning, condition=meaning.split("(")[1].rstrip(")"))
    return semantics


for _cc, _meaning, _test, _aliases in CONDITIONS:
    JCC[_cc] = _jcc_semantics(_cc, _meaning, _test)
    JCC_CONDITIONS[JCC[_cc]] = _test


def nop(cpu: X86Context, *operands) -> None:
    """No operation.  The r/m of the multi-byte NOP (0F 1F /0) is not accessed."""


def ret(cpu: X86Context):
    """Return from a procedure: pop the return address a CALL pushed and go there.

        RIP := Pop()        (RIP := Memory[RSP]; RSP := RSP + 8)

    isasim counts the CALLs not yet returned from (semantics/control.py's CALL): the RET of the function
    it was asked to run, with none pending, returns to a caller outside the program, so the run ends
    there, with RSP and the stack as the function left them.
    """
    state = cpu.state
    if not state.call_depth:
        return HALT
    address = pop_value(cpu, 8)
    state.call_depth -= 1
    return address


# ---------------------------------------------------------------------------
# Issue 27: the rest of the integer instructions compilers emit
# ---------------------------------------------------------------------------


def _logic(cpu: X86Context, dest, src, op: Callable[[int, int], int]) -> None:
    bits = width(dest)
    r = op(read(cpu, dest, bits), read(cpu, src, bits))
    write(cpu, dest, r, bits)
    set_flags(cpu, logic_flags(r, bits))


def and_(cpu: X86Context, dest, src) -> None:
    """Bitwise AND of dest and src into dest.

        DEST := DEST AND SRC    (an immediate SRC is sign-extended to the operand size)
        CF := 0; OF := 0; SF, ZF, PF := from the result
        AF is undefined in the SDM; isasim clears it.
    """
    _logic(cpu, dest, src, lambda a, b: a & b)


def or_(cpu: X86Context, dest, src) -> None:
    """Bitwise inclusive OR of dest and src into dest.

        DEST := DEST OR SRC     (an immediate SRC is sign-extended to the operand size)
        CF := 0; OF := 0; SF, ZF, PF := from the result
        AF is undefined in the SDM; isasim clears it.
    """
    _logic(cpu, dest, src, lambda a, b: a | b)


def adc(cpu: X86Context, dest, src) -> None:
    """Add src and the carry flag to dest.

        DEST := DEST + SRC + CF (an immediate SRC is sign-extended to the operand size)
        CF := carry out of the top bit; OF := signed overflow; AF := carry out of bit 3
        SF, ZF, PF := from the result
    """
    bits = width(dest)
    a, b, c = read(cpu, dest, bits), read(cpu, src, bits), int(cpu.state.flag(CF))
    r = (a + b + c) % (1 << bits)
    write(cpu, dest, r, bits)
    set_flags(cpu, (CF if a + b + c >= 1 << bits else 0) | (OF if ((a ^ r) & (b ^ r)) >> (bits - 1) & 1 else 0)
              | (AF if (a ^ b ^ r) & 0x10 else 0) | result_flags(r, bits))


def sbb(cpu: X86Context, dest, src) -> None:
    """Subtract src and the carry flag from dest (integer subtraction with borrow).

        DEST := DEST - (SRC + CF)   (an immediate SRC is sign-extended to the operand size)
        CF := borrow (DEST < SRC + CF unsigned); OF := signed overflow; AF := borrow from bit 4
        SF, ZF, PF := from the result
    """
    bits = width(dest)
    a, b, c = read(cpu, dest, bits), read(cpu, src, bits), int(cpu.state.flag(CF))
    r = (a - b - c) % (1 << bits)
    write(cpu, dest, r, bits)
    set_flags(cpu, (CF if a < b + c else 0) | (OF if ((a ^ b) & (a ^ r)) >> (bits - 1) & 1 else 0)
              | (AF if (a ^ b ^ r) & 0x10 else 0) | result_flags(r, bits))


def not_(cpu: X86Context, dest) -> None:
    """One's complement negation of dest; no flags change.

        DEST := NOT DEST
    """
    bits = width(dest)
    write(cpu, dest, ~read(cpu, dest, bits), bits)


def neg(cpu: X86Context, dest) -> None:
    """Two's complement negation of dest.

        IF DEST = 0 THEN CF := 0 ELSE CF := 1 FI
        DEST := -DEST
        OF, SF, ZF, AF, PF := as for SUB 0 - DEST
    """
    bits = width(dest)
    a = read(cpu, dest, bits)
    write(cpu, dest, -a, bits)
    set_flags(cpu, sub_flags(0, a, bits))


def cmovcc(cpu: X86Context, dest, src, *, condition: Callable[..., bool]) -> None:
    """Conditional move (see _CMOV_DOC)."""
    bits = width(dest)
    value = read(cpu, src, bits)  # the source is read (and may fault) whether or not the condition holds
    state = cpu.state
    if condition(CF=state.flag(CF), ZF=state.flag(ZF), SF=state.flag(SF), OF=state.flag(OF), PF=state.flag(PF)):
        write(cpu, dest, value, bits)
    elif bits == 32:
        write(cpu, dest, read(cpu, dest, 32), 32)  # a 32-bit destination is zero-extended either way


def setcc(cpu: X86Context, dest, *, condition: Callable[..., bool]) -> None:
    """Set byte on condition (see _SETCC_DOC)."""
    state = cpu.state
    holds = condition(CF=state.flag(CF), ZF=state.flag(ZF), SF=state.flag(SF), OF=state.flag(OF), PF=state.flag(PF))
    write(cpu, dest, 1 if holds else 0, 8)


_CMOV_DOC = (
    "Move src to dest if {meaning}; no flags change.\n\n"
    "    temp := SRC\n"
    "    IF {condition} THEN DEST := temp\n"
    "    ELSE IF OperandSize = 32 THEN DEST[63:32] := 0 FI\n\n"
    "The source is read (and a memory source may fault) whether or not the condition holds."
)
_SETCC_DOC = (
    "Set the byte dest to 1 if {meaning}, else to 0; no flags change.\n\n"
    "    IF {condition} THEN DEST := 1 ELSE DEST := 0 FI"
)
CMOVCC: dict[str, Callable] = {}  # condition code -> the semantics of its CMOVcc, in CONDITIONS order
SETCC: dict[str, Callable] = {}  # condition code -> the semantics of its SETcc


def _conditional(kind: str, cc: str, meaning: str, test: Callable[..., bool]) -> Callable:
    if kind == "cmov":
        def semantics(cpu: X86Context, dest, src) -> None:
            cmovcc(cpu, dest, src, condition=test)
    else:
        def semantics(cpu: X86Context, dest) -> None:
            setcc(cpu, dest, condition=test)

    semantics.__name__ = f"{kind}{cc}"
    doc = _CMOV_DOC if kind == "cmov" else _SETCC_DOC
    semantics.__doc__ = doc.format(meaning=meaning, condition=meaning.split("(")[1].rstrip(")"))
    return semantics


for _cc, _meaning, _test, _aliases in CONDITIONS:
    CMOVCC[_cc] = _conditional("cmov", _cc, _meaning, _test)
    SETCC[_cc] = _conditional("set", _cc, _meaning, _test)


def cbw(cpu: X86Context) -> None:
    """Sign-extend AL into AX (GNU as: cbtw); no flags change.

        AX := SignExtend(AL)
    """
    write(cpu, Reg("ax"), signed(cpu.state.read_register("al"), 8), 16)


def cwde(cpu: X86Context) -> None:
    """Sign-extend AX into EAX (GNU as: cwtl); no flags change.

        EAX := SignExtend(AX)   (RAX[63:32] := 0, as every 32-bit write)
    """
    write(cpu, Reg("eax"), signed(cpu.state.read_register("ax"), 16), 32)


def cwd(cpu: X86Context) -> None:
    """Sign-extend AX into DX:AX (GNU as: cwtd); no flags change.

        DX := (AX[15] = 1) ? FFFFH : 0
    """
    write(cpu, Reg("dx"), signed(cpu.state.read_register("ax"), 16) >> 16, 16)


def cdq(cpu: X86Context) -> None:
    """Sign-extend EAX into EDX:EAX (GNU as: cltd); no flags change.

        EDX := (EAX[31] = 1) ? FFFFFFFFH : 0     (RDX[63:32] := 0)
    """
    write(cpu, Reg("edx"), signed(cpu.state.read_register("eax"), 32) >> 32, 32)


def cqo(cpu: X86Context) -> None:
    """Sign-extend RAX into RDX:RAX (GNU as: cqto); no flags change.

        RDX := (RAX[63] = 1) ? FFFFFFFFFFFFFFFFH : 0
    """
    write(cpu, Reg("rdx"), signed(cpu.state.read_register("rax"), 64) >> 64, 64)


def mul(cpu: X86Context, src) -> None:
    """Unsigned multiply of the accumulator by src.

        AX := AL * r/m8;  DX:AX := AX * r/m16;  EDX:EAX := EAX * r/m32;  RDX:RAX := RAX * r/m64
        IF the upper half of the product is 0 THEN OF := CF := 0 ELSE OF := CF := 1 FI

    SF, ZF, AF and PF are undefined in the SDM; isasim sets SF, ZF and PF from the
    low half and clears AF (UNDEFINED_FLAGS masks them when comparing with silicon).
    """
    bits = width(src)
    low, high = _IMUL_ACCUMULATORS[bits]
    product = cpu.state.read_register(low) * read(cpu, src, bits)
    if bits == 8:
        write(cpu, Reg("ax"), product, 16)
    else:
        write(cpu, Reg(low), product, bits)
        write(cpu, Reg(high), product >> bits, bits)
    set_flags(cpu, (CF | OF if product >> bits else 0) | result_flags(product % (1 << bits), bits))


def _divide(cpu: X86Context, src, *, signed_division: bool, name: str) -> None:
    bits = width(src)
    low, high = _IMUL_ACCUMULATORS[bits]
    if bits == 8:
        dividend = cpu.state.read_register("ax")
        dividend_bits = 16
    else:
        dividend = cpu.state.read_register(high) << bits | cpu.state.read_register(low)
        dividend_bits = 2 * bits
    divisor = read(cpu, src, bits)
    if divisor == 0:
        raise DE(f"{name}: the divisor is 0")
    if signed_division:
        n, d = signed(dividend, dividend_bits), signed(divisor, bits)
        quotient = abs(n) // abs(d) * (1 if (n < 0) == (d < 0) else -1)  # truncated toward zero
        remainder = n - quotient * d
        fits = -(1 << (bits - 1)) <= quotient < (1 << (bits - 1))
    else:
        quotient, remainder = divmod(dividend, divisor)
        fits = quotient < (1 << bits)
    if not fits:
        raise DE(f"{name}: the quotient {quotient:#x} does not fit in the {bits}-bit destination")
    if bits == 8:
        write(cpu, Reg("ax"), (remainder % 256) << 8 | quotient % 256, 16)
    else:
        write(cpu, Reg(low), quotient, bits)
        write(cpu, Reg(high), remainder, bits)


def div(cpu: X86Context, src) -> None:
    """Unsigned divide of the accumulator pair by src.

        r/m8:  AL := AX / SRC;  AH := AX MOD SRC
        r/m16: AX := DX:AX / SRC;  DX := DX:AX MOD SRC   (likewise EDX:EAX and RDX:RAX)
        IF SRC = 0 THEN #DE FI;  IF the quotient does not fit in the destination THEN #DE FI

    The quotient is truncated (rounded toward zero).  CF, OF, SF, ZF, AF and PF are
    undefined in the SDM; isasim leaves them unchanged.
    """
    _divide(cpu, src, signed_division=False, name="div")


def idiv(cpu: X86Context, src) -> None:
    """Signed divide of the accumulator pair by src.

        r/m8:  AL := AX / SRC;  AH := AX MOD SRC
        r/m16: AX := DX:AX / SRC;  DX := DX:AX MOD SRC   (likewise EDX:EAX and RDX:RAX)
        IF SRC = 0 THEN #DE FI
        IF the quotient is outside the signed range of the destination THEN #DE FI
            (e.g. -2^63 / -1 in 64 bits)

    The quotient is truncated toward zero; the remainder has the sign of the dividend.
    CF, OF, SF, ZF, AF and PF are undefined in the SDM; isasim leaves them unchanged.
    """
    _divide(cpu, src, signed_division=True, name="idiv")


def endbr64(cpu: X86Context) -> None:
    """End branch 64: marks a valid indirect-branch target for CET.  isasim models no
    control-flow enforcement, so it is a no-operation (as on a CPU without CET)."""


def bswap(cpu: X86Context, dest) -> None:
    """Reverse the byte order of a 32- or 64-bit register; no flags change.

        TEMP := DEST;  DEST[7:0] := TEMP[top byte]; ...; DEST[top byte] := TEMP[7:0]
    """
    bits = width(dest)
    value = read(cpu, dest, bits)
    write(cpu, dest, int.from_bytes(value.to_bytes(bits // 8, "little"), "big"), bits)


def movbe(cpu: X86Context, dest, src) -> None:
    """Move src to dest with its bytes swapped (one operand is memory); no flags change.

        TEMP := SRC;  DEST := TEMP with its byte order reversed

    Needs the MOVBE CPUID feature.
    """
    bits = width(dest)
    value = read(cpu, src, bits)
    write(cpu, dest, int.from_bytes(value.to_bytes(bits // 8, "little"), "big"), bits)


def xadd(cpu: X86Context, dest, src) -> None:
    """Exchange and add.

        TEMP := SRC + DEST;  SRC := DEST;  DEST := TEMP
        CF, OF, SF, ZF, AF, PF := as for ADD

    With LOCK and a memory dest it is atomic on silicon; isasim has one thread.
    """
    bits = width(dest)
    a, b = read(cpu, dest, bits), read(cpu, src, bits)
    write(cpu, src, a, bits)
    write(cpu, dest, a + b, bits)
    set_flags(cpu, add_flags(a, b, bits))


def cmpxchg(cpu: X86Context, dest, src) -> None:
    """Compare the accumulator (AL, AX, EAX or RAX) with dest and exchange.

        TEMP := DEST
        IF accumulator = TEMP THEN ZF := 1; DEST := SRC
        ELSE ZF := 0; accumulator := TEMP; DEST := TEMP FI
        CF, OF, SF, AF, PF := as for CMP accumulator, TEMP

    On failure a memory DEST is written back with its own value (a write cycle: a read-only
    page faults), but a register DEST is not written at all: a 32-bit one keeps bits 63:32
    (measured on AMD Zen 3 silicon; QEMU models Intel's the same way).  On success the
    accumulator is not written.  With LOCK and a memory dest it is atomic on silicon; isasim
    has one thread.
    """
    bits = width(dest)
    accumulator = Reg(_IMUL_ACCUMULATORS[bits][0])
    a, temp = read(cpu, accumulator, bits), read(cpu, dest, bits)
    if a == temp:
        write(cpu, dest, read(cpu, src, bits), bits)
    else:
        if isinstance(dest, Mem):
            write(cpu, dest, temp, bits)
        write(cpu, accumulator, temp, bits)
    set_flags(cpu, sub_flags(a, temp, bits))


# ---------------------------------------------------------------------------
# Rotates and double-precision shifts (issue 27, group 2)
# ---------------------------------------------------------------------------


def rotate(cpu: X86Context, dest, count, *, kind: str) -> None:
    """The SDM's RCL/RCR/ROL/ROR Operation, one bit at a time as it is written there."""
    bits = width(dest)
    masked = read(cpu, count, 8) & (0x3F if bits == 64 else 0x1F)
    if masked == 0:
        _zero_extend_if_32(cpu, dest, bits)  # "If the masked count is 0, the flags are not affected"
        return
    value = read(cpu, dest, bits)
    top = bits - 1
    carry = int(cpu.state.flag(CF))
    if kind in ("rcl", "rcr"):
        temp_count = masked % (bits + 1) if bits in (8, 16) else masked
    else:
        temp_count = masked % bits
    if kind == "rcr" and masked == 1:
        overflow = (value >> top & 1) ^ carry  # RCR's OF is computed before the rotation
    for _ in range(temp_count):
        if kind == "rol":
            value = (value << 1 | value >> top) % (1 << bits)
        elif kind == "ror":
            value = value >> 1 | (value & 1) << top
        elif kind == "rcl":
            value, carry = (value << 1 | carry) % (1 << bits), value >> top & 1
        else:
            value, carry = value >> 1 | carry << top, value & 1
    write(cpu, dest, value, bits)
    if kind == "rol":
        carry = value & 1  # CF := LSB(DEST), for every nonzero masked count
        overflow = (value >> top & 1) ^ carry
    elif kind == "ror":
        carry = value >> top & 1  # CF := MSB(DEST)
        overflow = (value >> top & 1) ^ (value >> (top - 1) & 1)
    elif kind == "rcl":
        overflow = (value >> top & 1) ^ carry
    elif masked != 1:
        overflow = (value >> top & 1) ^ (value >> (top - 1) & 1)
    set_flags(cpu, (CF if carry else 0) | (OF if overflow else 0), written=CF | OF)


_ROTATE_DOC = """{what}

        tempCOUNT := (COUNT AND (3FH if 64-bit else 1FH)){modulo}
        WHILE tempCOUNT != 0: {step}; tempCOUNT := tempCOUNT - 1
        {cf}
        IF the masked count is 1 THEN OF := {of} ELSE OF is undefined
        IF the masked count is 0: no flags change (a 32-bit register DEST is still zero-extended)

    SF, ZF, AF and PF are not affected.  For other counts isasim computes OF by the
    count-1 rule (UNDEFINED_FLAGS masks it when comparing with silicon).  The count
    is an imm8, CL, or the implied 1 of D0/D1 (``rol rax,1``).
"""


def rol(cpu: X86Context, dest, count) -> None:
    rotate(cpu, dest, count, kind="rol")


def ror(cpu: X86Context, dest, count) -> None:
    rotate(cpu, dest, count, kind="ror")


def rcl(cpu: X86Context, dest, count) -> None:
    rotate(cpu, dest, count, kind="rcl")


def rcr(cpu: X86Context, dest, count) -> None:
    rotate(cpu, dest, count, kind="rcr")


rol.__doc__ = _ROTATE_DOC.format(
    what="Rotate dest left by count (the bits shifted out of the top come in at the bottom).", modulo=" MOD SIZE",
    step="tempCF := MSB(DEST); DEST := (DEST * 2) + tempCF", cf="CF := LSB(DEST) (for any nonzero masked count)",
    of="MSB(DEST) XOR CF")
ror.__doc__ = _ROTATE_DOC.format(
    what="Rotate dest right by count (the bits shifted out of the bottom come in at the top).", modulo=" MOD SIZE",
    step="tempCF := LSB(DEST); DEST := (DEST / 2) + (tempCF * 2^(SIZE-1))",
    cf="CF := MSB(DEST) (for any nonzero masked count)", of="MSB(DEST) XOR MSB-1(DEST)")
rcl.__doc__ = _ROTATE_DOC.format(
    what="Rotate dest and CF left by count (a SIZE+1-bit rotation through the carry flag).",
    modulo=" MOD 9 (byte), MOD 17 (word)", step="tempCF := MSB(DEST); DEST := (DEST * 2) + CF; CF := tempCF",
    cf="(CF is the last bit rotated out)", of="MSB(DEST) XOR CF")
rcr.__doc__ = _ROTATE_DOC.format(
    what="Rotate dest and CF right by count (a SIZE+1-bit rotation through the carry flag).",
    modulo=" MOD 9 (byte), MOD 17 (word)",
    step="tempCF := LSB(DEST); DEST := (DEST / 2) + (CF * 2^(SIZE-1)); CF := tempCF",
    cf="(CF is the last bit rotated out)", of="MSB(DEST) XOR CF, before the rotation")


def double_shift(cpu: X86Context, dest, src, count, *, left: bool) -> None:
    """The SDM's SHLD/SHRD Operation (see _DOUBLE_SHIFT_DOC)."""
    bits = width(dest)
    n = read(cpu, count, 8) & (0x3F if bits == 64 else 0x1F)
    if n == 0:
        _zero_extend_if_32(cpu, dest, bits)  # no operation: the flags are not affected
        return
    a, b = read(cpu, dest, bits), read(cpu, src, bits)
    if bits == 16:  # DEST:SRC:DEST, so that a count above 16 goes on shifting (isasim's choice, as Intel)
        wide, span = a << 32 | b << 16 | a, 48
    else:
        wide, span = (a << bits | b, 2 * bits) if left else (b << bits | a, 2 * bits)
    if left:
        result = (wide << n) >> (span - bits) & ((1 << bits) - 1)
        carry = (wide << n) >> span & 1
    else:
        result = wide >> n & ((1 << bits) - 1)
        carry = wide >> (n - 1) & 1
    write(cpu, dest, result, bits)
    overflow = (result ^ a) >> (bits - 1) & 1  # a sign change (defined for a count of 1)
    set_flags(cpu, (CF if carry else 0) | (OF if overflow else 0) | result_flags(result, bits))  # AF := 0


_DOUBLE_SHIFT_DOC = """{what}

        COUNT := COUNT MOD 64 (64-bit operands) or MOD 32
        IF COUNT = 0 THEN no operation (no flag changes; a 32-bit register DEST is zero-extended)
        ELSE
            {op}
            CF := the last bit shifted out of DEST; SF, ZF, PF := from the result
            OF := 1 if the sign changed (defined for a count of 1 only)
        FI

    OF for counts other than 1 and AF are undefined in the SDM; isasim computes OF
    by the count-1 rule and clears AF.  A 16-bit count above 16 leaves DEST and the
    flags undefined in the SDM; isasim's named choice is Intel's behaviour as QEMU
    documents it: the shift goes on through DEST:SRC:DEST (so the bits after SRC's
    are DEST's again).  The count is an imm8 or CL.
"""


def shld(cpu: X86Context, dest, src, count) -> None:
    double_shift(cpu, dest, src, count, left=True)


def shrd(cpu: X86Context, dest, src, count) -> None:
    double_shift(cpu, dest, src, count, left=False)


shld.__doc__ = _DOUBLE_SHIFT_DOC.format(
    what="Shift dest left by count, filling from the top bits of src (double-precision shift left).",
    op="DEST := (DEST:SRC << COUNT), its upper SIZE bits")
shrd.__doc__ = _DOUBLE_SHIFT_DOC.format(
    what="Shift dest right by count, filling from the low bits of src (double-precision shift right).",
    op="DEST := (SRC:DEST >> COUNT), its lower SIZE bits")


# ---------------------------------------------------------------------------
# Bit tests and bit scans (issue 27, group 3)
# ---------------------------------------------------------------------------


def bit_test(cpu: X86Context, base, offset, *, action: str) -> None:
    """The SDM's BT/BTS/BTR/BTC Operation (see _BIT_TEST_DOC)."""
    bits = width(base)
    if isinstance(base, Mem) and isinstance(offset, Reg):
        # a register offset reaches beyond the operand: signed, it picks the operand-sized word
        # EffectiveAddress + (SIZE/8) * FLOOR(offset / SIZE), then bit (offset MOD SIZE) of it
        n = signed(read(cpu, offset, bits), bits)
        address = (cpu.effective_address(base) + bits // 8 * (n // bits)) & _MASK64
        value = int.from_bytes(cpu.read_memory(address, bits // 8), "little")
        position = n % bits
    else:
        address = None
        value = read(cpu, base, bits)
        position = read(cpu, offset, bits) % bits
    bit = value >> position & 1
    if action != "bt":
        new = {"bts": value | 1 << position, "btr": value & ~(1 << position), "btc": value ^ 1 << position}[action]
        if address is None:
            write(cpu, base, new, bits)
        else:
            cpu.write_memory(address, new.to_bytes(bits // 8, "little"))
    set_flags(cpu, CF if bit else 0, written=CF | OF | SF | AF | PF)  # ZF is not affected; OF SF AF PF := 0


_BIT_TEST_DOC = """{what}

        CF := Bit(BitBase, BitOffset){op}

    An imm8 BitOffset is taken MOD the operand size, and so is a register one when
    BitBase is a register.  With BitBase in memory a register BitOffset is signed
    and reaches beyond the operand: the operand-sized word at
    EffectiveAddress + (SIZE/8) * FLOOR(BitOffset / SIZE) is accessed and its bit
    BitOffset MOD SIZE is the one meant.  ZF is not affected; OF, SF, AF and PF are
    undefined in the SDM and isasim clears them.
"""


def bt(cpu: X86Context, base, offset) -> None:
    bit_test(cpu, base, offset, action="bt")


def bts(cpu: X86Context, base, offset) -> None:
    bit_test(cpu, base, offset, action="bts")


def btr(cpu: X86Context, base, offset) -> None:
    bit_test(cpu, base, offset, action="btr")


def btc(cpu: X86Context, base, offset) -> None:
    bit_test(cpu, base, offset, action="btc")


bt.__doc__ = _BIT_TEST_DOC.format(what="Copy the selected bit of the bit base into CF.", op="")
bts.__doc__ = _BIT_TEST_DOC.format(what="Copy the selected bit into CF and set it.",
                                   op="; Bit(BitBase, BitOffset) := 1")
btr.__doc__ = _BIT_TEST_DOC.format(what="Copy the selected bit into CF and clear it.",
                                   op="; Bit(BitBase, BitOffset) := 0")
btc.__doc__ = _BIT_TEST_DOC.format(what="Copy the selected bit into CF and complement it.",
                                   op="; Bit(BitBase, BitOffset) := NOT Bit(BitBase, BitOffset)")


def _bit_scan(cpu: X86Context, dest, src, *, forward: bool) -> None:
    bits = width(dest)
    value = read(cpu, src, bits)
    if value == 0:
        set_flags(cpu, ZF)  # DEST is not written (isasim's named choice: see the docstrings)
        return
    index = (value & -value).bit_length() - 1 if forward else value.bit_length() - 1
    write(cpu, dest, index, bits)
    set_flags(cpu, result_flags(index, bits) & PF)  # ZF := 0; CF, OF, SF, AF (undefined) := 0


_BIT_SCAN_DOC = """{what}

        IF SRC = 0 THEN ZF := 1; DEST is not written
        ELSE ZF := 0; DEST := {index} FI

    The SDM leaves DEST undefined for a zero source; isasim's named choice is what
    AMD documents and this host's silicon (AMD Zen 3) does: DEST keeps its value, all
    64 bits of it even for a 32-bit DEST.  CF, OF, SF, AF and PF are undefined in the
    SDM; isasim sets PF from the index and clears the others.
"""


def bsf(cpu: X86Context, dest, src) -> None:
    _bit_scan(cpu, dest, src, forward=True)


def bsr(cpu: X86Context, dest, src) -> None:
    _bit_scan(cpu, dest, src, forward=False)


bsf.__doc__ = _BIT_SCAN_DOC.format(what="Bit scan forward: the index of the lowest set bit of src.",
                                   index="the index of the least significant 1 bit of SRC")
bsr.__doc__ = _BIT_SCAN_DOC.format(what="Bit scan reverse: the index of the highest set bit of src.",
                                   index="the index of the most significant 1 bit of SRC")


def _count(cpu: X86Context, dest, src, *, kind: str) -> None:
    bits = width(dest)
    value = read(cpu, src, bits)
    fallback = {"lzcnt": ("LZCNT", bsr), "tzcnt": ("BMI1", bsf)}.get(kind)
    if fallback and fallback[0] not in cpu.model.features:
        fallback[1](cpu, dest, src)  # the same bytes without the feature: F3 is ignored, BSR/BSF run
        return
    if kind == "popcnt":
        result = bin(value).count("1")
        set_flags(cpu, 0 if value else ZF)  # OF SF AF CF PF := 0; ZF := (SRC = 0)
    else:
        if kind == "lzcnt":
            result = bits - value.bit_length()
        else:
            result = ((value & -value).bit_length() - 1) if value else bits
        set_flags(cpu, (0 if value else CF) | (0 if result else ZF))  # OF SF AF PF (undefined) := 0
    write(cpu, dest, result, bits)


def lzcnt(cpu: X86Context, dest, src) -> None:
    """Count the leading zero bits of src (the operand size when src is 0).

        temp := OperandSize - 1; DEST := 0
        WHILE temp >= 0 AND Bit(SRC, temp) = 0: temp := temp - 1; DEST := DEST + 1
        CF := (SRC = 0); ZF := (DEST = 0)

    OF, SF, AF and PF are undefined in the SDM; isasim clears them.  On a CPU without
    LZCNT (CPUID.80000001H:ECX.ABM) these bytes are BSR, and isasim runs BSR then.
    """
    _count(cpu, dest, src, kind="lzcnt")


def tzcnt(cpu: X86Context, dest, src) -> None:
    """Count the trailing zero bits of src (the operand size when src is 0).

        temp := 0; DEST := 0
        WHILE temp < OperandSize AND Bit(SRC, temp) = 0: temp := temp + 1; DEST := DEST + 1
        CF := (SRC = 0); ZF := (DEST = 0)

    OF, SF, AF and PF are undefined in the SDM; isasim clears them.  On a CPU without
    BMI1 these bytes are BSF, and isasim runs BSF then.
    """
    _count(cpu, dest, src, kind="tzcnt")


def popcnt(cpu: X86Context, dest, src) -> None:
    """Count the 1 bits of src.

        DEST := the number of bits of SRC that are 1
        OF, SF, AF, CF, PF := 0; ZF := (SRC = 0)

    Needs the POPCNT CPUID feature (#UD without it).
    """
    _count(cpu, dest, src, kind="popcnt")


# ---------------------------------------------------------------------------
# BMI1 and BMI2 (issue 27, group 4): VEX-encoded, three operands, the sources left alone
# ---------------------------------------------------------------------------


def andn(cpu: X86Context, dest, src1, src2) -> None:
    """Bitwise AND of the complement of src1 with src2 (BMI1).

        DEST := (NOT SRC1) AND SRC2
        SF, ZF := from the result; CF := 0; OF := 0
        AF and PF are undefined in the SDM; isasim clears AF and sets PF from the result.
    """
    bits = width(dest)
    r = ~read(cpu, src1, bits) & read(cpu, src2, bits) & ((1 << bits) - 1)
    write(cpu, dest, r, bits)
    set_flags(cpu, result_flags(r, bits))


def bextr(cpu: X86Context, dest, src, control) -> None:
    """Extract a bit field of src: START := control[7:0], LEN := control[15:8] (BMI1).

        TEMP := ZeroExtend(SRC) >> START (0 when START >= the operand size)
        DEST := TEMP AND (2^LEN - 1) (all of TEMP when LEN >= the operand size)
        ZF := (DEST = 0); CF := 0; OF := 0
        AF, SF and PF are undefined in the SDM; isasim clears AF and SF and sets PF from DEST.
    """
    bits = width(dest)
    c = read(cpu, control, bits)
    start, length = c & 0xFF, c >> 8 & 0xFF
    r = (read(cpu, src, bits) >> start if start < bits else 0) & ((1 << min(length, bits)) - 1)
    write(cpu, dest, r, bits)
    set_flags(cpu, result_flags(r, bits) & (ZF | PF))


def _blsx(cpu: X86Context, dest, src, op: Callable[[int], int], carry: Callable[[int], bool]) -> None:
    bits = width(dest)
    value = read(cpu, src, bits)
    r = op(value) & ((1 << bits) - 1)
    write(cpu, dest, r, bits)
    set_flags(cpu, (CF if carry(value) else 0) | result_flags(r, bits))


def blsi(cpu: X86Context, dest, src) -> None:
    """Isolate the lowest set bit of src (BMI1).

        DEST := (-SRC) AND SRC
        ZF, SF := from the result; CF := (SRC != 0); OF := 0
        AF and PF are undefined in the SDM; isasim clears AF and sets PF from the result.
    """
    _blsx(cpu, dest, src, lambda v: -v & v, lambda v: v != 0)


def blsmsk(cpu: X86Context, dest, src) -> None:
    """A mask up to and including the lowest set bit of src (BMI1).

        DEST := (SRC - 1) XOR SRC
        SF := from the result; ZF := 0; CF := (SRC = 0); OF := 0
        AF and PF are undefined in the SDM; isasim clears AF and sets PF from the result.
    """
    _blsx(cpu, dest, src, lambda v: (v - 1) ^ v, lambda v: v == 0)


def blsr(cpu: X86Context, dest, src) -> None:
    """Clear the lowest set bit of src (BMI1).

        DEST := (SRC - 1) AND SRC
        ZF, SF := from the result; CF := (SRC = 0); OF := 0
        AF and PF are undefined in the SDM; isasim clears AF and sets PF from the result.
    """
    _blsx(cpu, dest, src, lambda v: (v - 1) & v, lambda v: v == 0)


def bzhi(cpu: X86Context, dest, src, index) -> None:
    """Zero the bits of src from bit index up (BMI2).

        N := index[7:0]
        DEST := SRC with bits OperandSize-1:N cleared (all of SRC when N >= the operand size)
        ZF, SF := from the result; CF := (N > OperandSize - 1); OF := 0
        AF and PF are undefined in the SDM; isasim clears AF and sets PF from the result.
    """
    bits = width(dest)
    n = read(cpu, index, bits) & 0xFF
    r = read(cpu, src, bits) & ((1 << min(n, bits)) - 1)
    write(cpu, dest, r, bits)
    set_flags(cpu, (CF if n > bits - 1 else 0) | result_flags(r, bits))


def _shift_x(cpu: X86Context, dest, src, count, kind: str) -> None:
    bits = width(dest)
    n = read(cpu, count, bits) & (bits - 1)
    value = read(cpu, src, bits)
    r = {"shlx": value << n, "shrx": value >> n, "sarx": signed(value, bits) >> n}[kind]
    write(cpu, dest, r, bits)


def shlx(cpu: X86Context, dest, src, count) -> None:
    """Shift src left by count, without changing the flags (BMI2).

        DEST := SRC << (COUNT AND (OperandSize - 1))
    """
    _shift_x(cpu, dest, src, count, "shlx")


def shrx(cpu: X86Context, dest, src, count) -> None:
    """Shift src right (unsigned) by count, without changing the flags (BMI2).

        DEST := SRC >> (COUNT AND (OperandSize - 1))   (zeros come in)
    """
    _shift_x(cpu, dest, src, count, "shrx")


def sarx(cpu: X86Context, dest, src, count) -> None:
    """Shift src right (signed) by count, without changing the flags (BMI2).

        DEST := SRC >> (COUNT AND (OperandSize - 1))   (copies of the sign bit come in)
    """
    _shift_x(cpu, dest, src, count, "sarx")


def rorx(cpu: X86Context, dest, src, imm8: Imm) -> None:
    """Rotate src right by an immediate, without changing the flags (BMI2).

        n := imm8 AND (OperandSize - 1)
        DEST := (SRC >> n) OR (SRC << (OperandSize - n))
    """
    bits = width(dest)
    n = read(cpu, imm8, 8) & (bits - 1)
    value = read(cpu, src, bits)
    write(cpu, dest, value >> n | value << (bits - n), bits)


def mulx(cpu: X86Context, dest_high, dest_low, src) -> None:
    """Unsigned multiply of EDX/RDX by src, without changing the flags (BMI2).

        TEMP := RDX * SRC (EDX for 32 bits)
        DEST_LOW := TEMP[SIZE-1:0];  DEST_HIGH := TEMP[2*SIZE-1:SIZE]

    DEST_LOW is written first: with the same register twice, it ends holding the high half.
    """
    bits = width(dest_high)
    product = cpu.state.read_register("rdx" if bits == 64 else "edx") * read(cpu, src, bits)
    write(cpu, dest_low, product, bits)
    write(cpu, dest_high, product >> bits, bits)


def pdep(cpu: X86Context, dest, src, mask) -> None:
    """Parallel bits deposit: the low bits of src go, in order, to the set bits of mask (BMI2).

        TEMP := SRC; MASK := mask; DEST := 0; k := 0
        FOR m := 0 TO OperandSize-1: IF MASK[m] = 1 THEN DEST[m] := TEMP[k]; k := k + 1 FI
    """
    bits = width(dest)
    value, m = read(cpu, src, bits), read(cpu, mask, bits)
    r, k = 0, 0
    for position in range(bits):
        if m >> position & 1:
            r |= (value >> k & 1) << position
            k += 1
    write(cpu, dest, r, bits)


def pext(cpu: X86Context, dest, src, mask) -> None:
    """Parallel bits extract: the bits of src at the set bits of mask go, in order, to the low bits (BMI2).

        TEMP := SRC; MASK := mask; DEST := 0; k := 0
        FOR m := 0 TO OperandSize-1: IF MASK[m] = 1 THEN DEST[k] := TEMP[m]; k := k + 1 FI
    """
    bits = width(dest)
    value, m = read(cpu, src, bits), read(cpu, mask, bits)
    r, k = 0, 0
    for position in range(bits):
        if m >> position & 1:
            r |= (value >> position & 1) << k
            k += 1
    write(cpu, dest, r, bits)

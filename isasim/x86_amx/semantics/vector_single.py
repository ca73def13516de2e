"""Single precision (issue 27): the scalar forms (SSE: two operands, DEST[MAXVL-1:128] kept; VEX/EVEX: three, a
write mask on element 0), the packed forms (SSE 128 bits, an m128 aligned; VEX/EVEX every width under a mask), and
half precision (F16C, AVX-512).  fp32 is computed exactly and rounded once under the default MXCSR
(numerics/simd_fp32.py).  Each function is its form's explain text; forms/vector.py declares the forms.
"""

from __future__ import annotations

from ..context import X86Context
from ..numerics import simd_fp32 as fp32
from ..operands import GPR_VIEWS, Mem, Reg
from ..operands.masking import Masked, unmasked
from ..state import AF, CF, OF, PF, SF, ZF
from .vector import active, elements, pack, read, read_selected, vl, write_legacy, write_masked, write_vex
from .vector_arithmetic import _each, _extract_lane, _widen


# ---------------------------------------------------------------------------
# Scalar single precision (issue 27: what compilers emit for float code beside the kernels): the SSE forms
# (two operands, DEST[MAXVL-1:128] kept) and the VEX/EVEX forms (three operands, SRC1's bits 127:32 copied,
# DEST[MAXVL-1:128] zeroed; an EVEX write mask selects element 0 or not).  fp32 is exact and rounded once
# under the default MXCSR (numerics/simd_fp32.py).
# ---------------------------------------------------------------------------

LOW32 = 0xFFFFFFFF


def _scalar_element(cpu: X86Context, src) -> int:
    """SRC[31:0]: an xmm register's low dword or a DWORD of memory."""
    return read(cpu, src, 32) & LOW32


def _scalar_legacy(cpu: X86Context, dest, src, operation) -> None:
    """DEST[31:0] := operation(DEST[31:0], SRC[31:0]); DEST[MAXVL-1:32] unmodified (SSE)."""
    old = read(cpu, dest, 128)
    write_legacy(cpu, dest, old >> 32 << 32 | operation(old & LOW32, _scalar_element(cpu, src)) & LOW32)


def _scalar_vex(cpu: X86Context, dest, src1, src2, operation) -> None:
    """DEST[31:0] := operation(SRC1[31:0], SRC2[31:0]) if k1[0] or no mask (else 0 with {z}, else unchanged);
    DEST[127:32] := SRC1[127:32]; DEST[MAXVL-1:128] := 0 (VEX, EVEX).  A masked-out memory SRC2 is not read."""
    first = read(cpu, src1, 128)
    if active(cpu, dest, 1):
        low = operation(first & LOW32, _scalar_element(cpu, src2)) & LOW32
    else:
        low = 0 if dest.zeroing else read(cpu, unmasked(dest), 32)
    write_vex(cpu, unmasked(dest), first >> 32 << 32 | low, 128)


def movss(cpu: X86Context, dest, src) -> None:
    """Move a single-precision value (SSE).

        MOVSS xmm1, xmm2:  DEST[31:0] := SRC[31:0];  DEST[MAXVL-1:32] unmodified
        MOVSS xmm1, m32:   DEST[31:0] := SRC[31:0];  DEST[127:32] := 0;  DEST[MAXVL-1:128] unmodified
        MOVSS m32, xmm1:   DEST[31:0] := SRC[31:0]
    """
    if isinstance(dest, Mem):
        cpu.write_memory(cpu.effective_address(dest), _scalar_element(cpu, src).to_bytes(4, "little"))
    elif isinstance(src, Mem):
        write_legacy(cpu, dest, _scalar_element(cpu, src))
    else:
        _scalar_legacy(cpu, dest, src, lambda a, b: b)


def vmovss(cpu: X86Context, *operands) -> None:
    """Move a single-precision value (VEX: AVX; EVEX: AVX512F, element 0 under a write mask).

        VMOVSS xmm1 {k1}{z}, xmm2, xmm3:  DEST[31:0] := SRC2[31:0] (masked);  DEST[127:32] := SRC1[127:32]
        VMOVSS xmm1 {k1}{z}, m32:         DEST[31:0] := SRC[31:0] (masked);   DEST[127:32] := 0
        VMOVSS m32 {k1}, xmm1:            DEST[31:0] := SRC[31:0] if k1[0] or no mask (else not written)
        DEST[MAXVL-1:128] := 0 (a register)
    """
    if len(operands) == 3:
        dest, src1, src2 = operands
        _scalar_vex(cpu, dest, src1, src2, lambda a, b: b)
        return
    dest, src = operands
    if isinstance(unmasked(dest), Mem):
        if active(cpu, dest, 1):
            cpu.write_memory(cpu.effective_address(unmasked(dest)), _scalar_element(cpu, src).to_bytes(4, "little"))
        return
    if active(cpu, dest, 1):
        low = _scalar_element(cpu, src)
    else:
        low = 0 if dest.zeroing else read(cpu, unmasked(dest), 32)
    write_vex(cpu, unmasked(dest), low, 128)


def _scalar_pair(name: str, operation, summary: str, formula: str, note: str):
    """The SSE form (NAME xmm1, xmm2/m32) and the VEX/EVEX form (VNAME xmm1 {k1}{z}, xmm2, xmm3/m32) of one
    scalar single-precision operation."""
    def legacy(cpu: X86Context, dest, src) -> None:
        _scalar_legacy(cpu, dest, src, operation)

    def vex(cpu: X86Context, dest, src1, src2) -> None:
        _scalar_vex(cpu, dest, src1, src2, operation)

    legacy.__name__ = legacy.__qualname__ = name
    vex.__name__ = vex.__qualname__ = "v" + name
    legacy.__doc__ = (f"{summary} (SSE).\n\n"
                      f"        DEST[31:0] := {formula.format(a='DEST[31:0]', b='SRC[31:0]')}\n"
                      f"        DEST[MAXVL-1:32] unmodified\n\n    {note}  SRC is an xmm register or a DWORD of "
                      f"memory (no alignment).\n")
    vex.__doc__ = (f"{summary} (VEX: AVX; EVEX: AVX512F, element 0 under a write mask).\n\n"
                   f"        IF k1[0] OR *no writemask*: DEST[31:0] := {formula.format(a='SRC1[31:0]', b='SRC2[31:0]')}\n"
                   f"        ELSE IF *zeroing*: DEST[31:0] := 0     (else unchanged: merging)\n"
                   f"        DEST[127:32] := SRC1[127:32];  DEST[MAXVL-1:128] := 0\n\n    {note}\n")
    return legacy, vex


_NAN_RULE = "A NaN operand gives the first NaN (the first operand, then the second) made quiet."
addss, vaddss = _scalar_pair("addss", fp32.add, "Add scalar single-precision values", "{a} + {b}",
                             "The exact sum rounded once (RNE).  " + _NAN_RULE)
subss, vsubss = _scalar_pair("subss", fp32.sub, "Subtract scalar single-precision values", "{a} - {b}",
                             "The exact difference rounded once (RNE).  " + _NAN_RULE)
mulss, vmulss = _scalar_pair("mulss", fp32.mul, "Multiply scalar single-precision values", "{a} * {b}",
                             "The exact product rounded once (RNE); 0 x inf gives the default NaN FFC00000H.  "
                             + _NAN_RULE)
divss, vdivss = _scalar_pair("divss", fp32.div, "Divide scalar single-precision values", "{a} / {b}",
                             "The exact quotient rounded once (RNE); 0/0 and inf/inf give the default NaN "
                             "FFC00000H, x/0 a signed infinity.  " + _NAN_RULE)
maxss, vmaxss = _scalar_pair("maxss", fp32.maximum, "Maximum of scalar single-precision values",
                             "IF {a} > {b} THEN {a} ELSE {b}",
                             "Both zeros (of any sign) or a NaN in either (quiet or signalling) give the second "
                             "operand, unchanged.")
minss, vminss = _scalar_pair("minss", fp32.minimum, "Minimum of scalar single-precision values",
                             "IF {a} < {b} THEN {a} ELSE {b}",
                             "Both zeros (of any sign) or a NaN in either (quiet or signalling) give the second "
                             "operand, unchanged.")


def _integer_bits(cpu: X86Context, src) -> tuple[int, int]:
    bits = GPR_VIEWS[src.name].bits if isinstance(src, Reg) else src.size * 8
    return read(cpu, src, bits), bits


def cvtsi2ss(cpu: X86Context, dest, src) -> None:
    """Convert a signed doubleword or quadword integer to single precision, rounded to nearest even (SSE).

        DEST[31:0] := Convert_Integer_To_Single_Precision_Floating_Point(SRC)   (r/m32, or r/m64 with REX.W)
        DEST[MAXVL-1:32] unmodified
    """
    value, bits = _integer_bits(cpu, src)
    _scalar_legacy(cpu, dest, dest, lambda a, _b: fp32.from_int(value, bits))


def vcvtsi2ss(cpu: X86Context, dest, src1, src2) -> None:
    """Convert a signed doubleword or quadword integer to single precision, rounded to nearest even
    (VEX: AVX; EVEX: AVX512F).

        DEST[31:0] := Convert_Integer_To_Single_Precision_Floating_Point(SRC2)   (r/m32 or r/m64)
        DEST[127:32] := SRC1[127:32];  DEST[MAXVL-1:128] := 0
    """
    value, bits = _integer_bits(cpu, src2)
    _scalar_vex(cpu, dest, src1, src1, lambda _a, _b: fp32.from_int(value, bits))


def vcvtusi2ss(cpu: X86Context, dest, src1, src2) -> None:
    """Convert an unsigned doubleword or quadword integer to single precision, rounded to nearest even (EVEX:
    AVX512F; clang's (float) of an unsigned long under -march=sapphirerapids).

        DEST[31:0] := Convert_UInteger_To_Single_Precision_Floating_Point(SRC2)   (r/m32 or r/m64)
        DEST[127:32] := SRC1[127:32];  DEST[MAXVL-1:128] := 0

    Embedded rounding ({rn-sae} ...) is not simulated: such bytes are refused by name.
    """
    value, bits = _integer_bits(cpu, src2)
    _scalar_vex(cpu, dest, src1, src1, lambda _a, _b: fp32.from_uint(value, bits))


def _to_gpr(cpu: X86Context, dest, src, mode: str) -> None:
    bits = GPR_VIEWS[dest.name].bits
    cpu.state.write_gpr(GPR_VIEWS[dest.name], fp32.to_int(_scalar_element(cpu, src), bits, mode))


_INDEFINITE = ("A NaN, an infinity or a value out of range gives the integer indefinite 80000000H "
               "(8000000000000000H for a 64-bit DEST); a 32-bit DEST zeroes bits 63:32 of its register.")


def cvttss2si(cpu: X86Context, dest, src) -> None:
    """Convert a single-precision value to a signed doubleword or quadword integer, truncated (SSE).

        DEST := Convert_Single_Precision_Floating_Point_To_Integer_Truncate(SRC[31:0])
    """
    _to_gpr(cpu, dest, src, "truncate")


def vcvttss2si(cpu: X86Context, dest, src) -> None:
    """Convert a single-precision value to a signed doubleword or quadword integer, truncated (VEX: AVX;
    EVEX: AVX512F).

        DEST := Convert_Single_Precision_Floating_Point_To_Integer_Truncate(SRC[31:0])
    """
    _to_gpr(cpu, dest, src, "truncate")


def cvtss2si(cpu: X86Context, dest, src) -> None:
    """Convert a single-precision value to a signed doubleword or quadword integer, rounded as MXCSR.RC says
    (round to nearest even by default) (SSE).

        DEST := Convert_Single_Precision_Floating_Point_To_Integer(SRC[31:0])
    """
    _to_gpr(cpu, dest, src, "nearest")


def vcvtss2si(cpu: X86Context, dest, src) -> None:
    """Convert a single-precision value to a signed doubleword or quadword integer, rounded to nearest even
    (MXCSR's default) (VEX: AVX; EVEX: AVX512F).

        DEST := Convert_Single_Precision_Floating_Point_To_Integer(SRC[31:0])
    """
    _to_gpr(cpu, dest, src, "nearest")


for _f in (cvttss2si, vcvttss2si, cvtss2si, vcvtss2si):
    _f.__doc__ += "\n    " + _INDEFINITE + "\n"


def _compare_flags(cpu: X86Context, src1, src2) -> None:
    relation = fp32.compare(read(cpu, src1, 32) & LOW32, _scalar_element(cpu, src2))
    flags = cpu.state.rflags & ~(CF | PF | AF | ZF | SF | OF)
    flags |= {"unordered": ZF | PF | CF, "greater": 0, "less": CF, "equal": ZF}[relation]
    cpu.state.set_rflags(flags)


_COMPARE_TEXT = """

        RESULT := OrderedCompare(SRC1[31:0] <> SRC2[31:0])
        CASE (RESULT) OF
            UNORDERED:    ZF, PF, CF := 111
            GREATER_THAN: ZF, PF, CF := 000
            LESS_THAN:    ZF, PF, CF := 001
            EQUAL:        ZF, PF, CF := 100      (-0 equals +0)
        OF, AF, SF := 0
"""


def ucomiss(cpu: X86Context, src1, src2) -> None:
    """Compare two single-precision values, unordered, and set ZF PF CF (SSE); a quiet NaN raises no
    exception (all are masked: the flags are the same as COMISS's)."""
    _compare_flags(cpu, src1, src2)


def comiss(cpu: X86Context, src1, src2) -> None:
    """Compare two single-precision values, ordered, and set ZF PF CF (SSE); any NaN is invalid (masked)."""
    _compare_flags(cpu, src1, src2)


def vucomiss(cpu: X86Context, src1, src2) -> None:
    """Compare two single-precision values, unordered, and set ZF PF CF (VEX: AVX; EVEX: AVX512F)."""
    _compare_flags(cpu, src1, src2)


def vcomiss(cpu: X86Context, src1, src2) -> None:
    """Compare two single-precision values, ordered, and set ZF PF CF (VEX: AVX; EVEX: AVX512F)."""
    _compare_flags(cpu, src1, src2)


for _f in (ucomiss, comiss, vucomiss, vcomiss):
    _f.__doc__ += _COMPARE_TEXT


def _fma_scalar(order: str):
    """VFMADD132SS / 213SS / 231SS: the digits name which operands are multiplied and which is added."""
    def semantics(cpu: X86Context, dest, src2, src3) -> None:
        def one(d: int, s2: int, s3: int) -> int:
            ops = {"1": d, "2": s2, "3": s3}
            a, b, c = ops[order[0]], ops[order[1]], ops[order[2]]
            return fp32.fma(a, b, c, (a, b, c))

        first = read(cpu, unmasked(dest), 128)
        s2 = read(cpu, src2, 32) & LOW32
        if active(cpu, dest, 1):
            low = one(first & LOW32, s2, _scalar_element(cpu, src3))
        else:
            low = 0 if dest.zeroing else first & LOW32
        write_vex(cpu, unmasked(dest), first >> 32 << 32 | low, 128)

    names = {"1": "DEST", "2": "SRC2", "3": "SRC3"}
    semantics.__name__ = semantics.__qualname__ = f"vfmadd{order}ss"
    semantics.__doc__ = (f"Fused multiply-add of single-precision values, rounded once (VEX: FMA; EVEX: AVX512F, "
                         f"element 0 under a write mask).\n\n"
                         f"        IF k1[0] OR *no writemask*:\n"
                         f"            DEST[31:0] := RoundFPControl_MXCSR({names[order[0]]}[31:0] * "
                         f"{names[order[1]]}[31:0] + {names[order[2]]}[31:0])\n"
                         f"        ELSE IF *zeroing*: DEST[31:0] := 0     (else unchanged: merging)\n"
                         f"        DEST[127:32] unchanged;  DEST[MAXVL-1:128] := 0\n\n"
                         f"    A NaN operand gives the first NaN of the two factors, then the addend, made quiet.\n")
    return semantics


vfmadd132ss, vfmadd213ss, vfmadd231ss = (_fma_scalar(o) for o in ("132", "213", "231"))


def roundss(cpu: X86Context, dest, src, imm8) -> None:
    """Round a single-precision value to an integer value by imm8 (SSE4.1).

        DEST[31:0] := Round(SRC[31:0], imm8[1:0] or MXCSR.RC if imm8[2])   (0: nearest even, 1: down,
                      2: up, 3: toward zero; imm8[3] suppresses the precision exception only)
        DEST[MAXVL-1:32] unmodified

    A NaN gives itself made quiet; an infinity or a zero itself; a zero result keeps SRC's sign.
    """
    _scalar_legacy(cpu, dest, src, lambda _a, b: fp32.round_integral(b, imm8.value & 0xF))


def vroundss(cpu: X86Context, dest, src1, src2, imm8) -> None:
    """Round a single-precision value to an integer value by imm8 (VEX: AVX).

        DEST[31:0] := Round(SRC2[31:0], imm8[1:0] or MXCSR.RC if imm8[2])
        DEST[127:32] := SRC1[127:32];  DEST[MAXVL-1:128] := 0

    A NaN gives itself made quiet; an infinity or a zero itself; a zero result keeps SRC2's sign.
    """
    _scalar_vex(cpu, dest, src1, src2, lambda _a, b: fp32.round_integral(b, imm8.value & 0xF))


def vrndscaless(cpu: X86Context, dest, src1, src2, imm8) -> None:
    """Round a single-precision value to a multiple of 2^-M, M := imm8[7:4] (AVX512F, element 0 under a
    write mask).

        IF k1[0] OR *no writemask*: DEST[31:0] := 2^-M * Round(2^M * SRC2[31:0], imm8[1:0] or MXCSR.RC if imm8[2])
        ELSE IF *zeroing*: DEST[31:0] := 0     (else unchanged)
        DEST[127:32] := SRC1[127:32];  DEST[MAXVL-1:128] := 0

    A NaN gives itself made quiet; an infinity or a zero itself; a zero result keeps SRC2's sign.
    """
    _scalar_vex(cpu, dest, src1, src2, lambda _a, b: fp32.round_integral(b, imm8.value & 0xFF))


# ---------------------------------------------------------------------------
# Packed single precision (issue 27: what the auto-vectoriser and intrinsics emit for float loops around the
# kernels): the SSE forms (two operands, 128 bits, DEST[MAXVL-1:128] kept, an m128 aligned) and the VEX/EVEX
# forms (three operands, every width, a write mask on the EVEX ones, DEST[MAXVL-1:VL] zeroed).
# ---------------------------------------------------------------------------


def _legacy_each(cpu: X86Context, dest, src, size: int, operation) -> None:
    """DEST element j := operation(DEST element j, SRC element j) over 128 bits (SSE: bits MAXVL-1:128 kept)."""
    count = 128 // size
    a, b = elements(read(cpu, dest, 128), size, count), elements(read(cpu, src, 128), size, count)
    write_legacy(cpu, dest, pack([operation(x, y) for x, y in zip(a, b)], size))


def _legacy_whole(cpu: X86Context, dest, sources, compute) -> None:
    """DEST[127:0] := compute(128, the sources' 128 bits) (SSE: bits MAXVL-1:128 kept)."""
    write_legacy(cpu, dest, compute(128, *(read(cpu, s, 128) for s in sources)))


def _whole(cpu: X86Context, dest, sources, size: int, compute) -> None:
    """DEST[VL-1:0] := compute(VL, the sources' VL bits) under DEST's write mask of ``size``-bit elements
    (a permute or a lane operation: every element of a source may feed any selected element)."""
    bits = vl(dest)
    count = bits // size
    mask = active(cpu, dest, count)
    values = [read(cpu, s, bits) if not isinstance(s, Mem) else read_selected(cpu, s, bits, size, (1 << count) - 1 if mask else 0)
              for s in sources]
    write_masked(cpu, dest, compute(bits, *values), bits, size)


def _packed_pair(name: str, operation, summary: str, formula: str, note: str, *, evex: str = "AVX512F",
                 legacy: bool = True, vex: bool = True):
    """The SSE form (NAME xmm1, xmm2/m128) and the VEX/EVEX form (VNAME dest {k1}{z}, src1, src2) of one
    element-wise single-precision operation."""
    def sse(cpu: X86Context, dest, src) -> None:
        _legacy_each(cpu, dest, src, 32, operation)

    def avx(cpu: X86Context, dest, src1, src2) -> None:
        _each(cpu, dest, (src1, src2), 32, operation)

    sse.__name__ = sse.__qualname__ = name
    avx.__name__ = avx.__qualname__ = "v" + name
    sse.__doc__ = (f"{summary} (SSE).\n\n"
                   f"        FOR j := 0 TO 3: DEST.fp32[j] := {formula.format(a='DEST.fp32[j]', b='SRC.fp32[j]')}\n"
                   f"        DEST[MAXVL-1:128] unmodified\n\n    {note}  A memory SRC must be 16-byte aligned (#GP(0)).\n")
    avx.__doc__ = (f"{summary} (VEX: AVX; EVEX: {evex}, under a write mask).\n\n"
                   f"        FOR j := 0 TO VL/32 - 1\n"
                   f"            IF k1[j] OR *no writemask*: DEST.fp32[j] := "
                   f"{formula.format(a='SRC1.fp32[j]', b='SRC2.fp32[j]')}\n"
                   f"            ELSE IF *zeroing*: DEST.fp32[j] := 0     (else unchanged: merging)\n"
                   f"        DEST[MAXVL-1:VL] := 0\n\n    {note}\n")
    return sse, avx


addps, _ = _packed_pair("addps", fp32.add, "Add packed single-precision values", "{a} + {b}",
                        "Each sum rounded once (RNE).  " + _NAN_RULE)
subps, vsubps = _packed_pair("subps", fp32.sub, "Subtract packed single-precision values", "{a} - {b}",
                             "Each difference rounded once (RNE).  " + _NAN_RULE)
mulps, _ = _packed_pair("mulps", fp32.mul, "Multiply packed single-precision values", "{a} * {b}",
                        "Each product rounded once (RNE); 0 x inf gives the default NaN FFC00000H.  " + _NAN_RULE)
divps, vdivps = _packed_pair("divps", fp32.div, "Divide packed single-precision values", "{a} / {b}",
                             "Each quotient rounded once (RNE); 0/0 and inf/inf give the default NaN FFC00000H, x/0 "
                             "a signed infinity.  " + _NAN_RULE)
maxps, vmaxps = _packed_pair("maxps", fp32.maximum, "Maximum of packed single-precision values",
                             "IF {a} > {b} THEN {a} ELSE {b}",
                             "Both zeros (of any sign) or a NaN in either (quiet or signalling) give the second "
                             "operand's element, unchanged.")
minps, vminps = _packed_pair("minps", fp32.minimum, "Minimum of packed single-precision values",
                             "IF {a} < {b} THEN {a} ELSE {b}",
                             "Both zeros (of any sign) or a NaN in either (quiet or signalling) give the second "
                             "operand's element, unchanged.")
_BITS_NOTE = "Bitwise, on the values' bits: no exception, a NaN is not special."
andps, vandps = _packed_pair("andps", lambda a, b: a & b, "Bitwise AND of packed single-precision values",
                             "{a} BITWISE AND {b}", _BITS_NOTE, evex="AVX512DQ")
orps, vorps = _packed_pair("orps", lambda a, b: a | b, "Bitwise OR of packed single-precision values",
                           "{a} BITWISE OR {b}", _BITS_NOTE, evex="AVX512DQ")
xorps, _ = _packed_pair("xorps", lambda a, b: a ^ b, "Bitwise XOR of packed single-precision values (xorps xmm0, "
                        "xmm0 is the zeroing idiom)", "{a} BITWISE XOR {b}", _BITS_NOTE, evex="AVX512DQ")
andnps, vandnps = _packed_pair("andnps", lambda a, b: ~a & b, "Bitwise AND NOT of packed single-precision values",
                               "(NOT {a}) BITWISE AND {b}", _BITS_NOTE, evex="AVX512DQ")


def cvtdq2ps(cpu: X86Context, dest, src) -> None:
    """Convert four signed dwords to single precision, rounded to nearest even (SSE2).

        FOR j := 0 TO 3: DEST.fp32[j] := Convert_Integer_To_Single_Precision_Floating_Point(SRC.dword[j])
        DEST[MAXVL-1:128] unmodified

    A memory SRC must be 16-byte aligned (#GP(0)).
    """
    _legacy_each(cpu, dest, src, 32, lambda _a, b: fp32.from_int32(b))


def _converted_to_int(mode: str):
    return lambda x: fp32.to_int(x, 32, mode)


def cvttps2dq(cpu: X86Context, dest, src) -> None:
    """Convert four single-precision values to signed dwords, truncated (SSE2).

        FOR j := 0 TO 3: DEST.dword[j] := Convert_Single_Precision_Floating_Point_To_Integer_Truncate(SRC.fp32[j])
        DEST[MAXVL-1:128] unmodified

    A NaN, an infinity or a value out of range gives the integer indefinite 80000000H.
    """
    convert = _converted_to_int("truncate")
    _legacy_each(cpu, dest, src, 32, lambda _a, b: convert(b))


def cvtps2dq(cpu: X86Context, dest, src) -> None:
    """Convert four single-precision values to signed dwords, rounded to nearest even (MXCSR's default) (SSE2).

        FOR j := 0 TO 3: DEST.dword[j] := Convert_Single_Precision_Floating_Point_To_Integer(SRC.fp32[j])
        DEST[MAXVL-1:128] unmodified

    A NaN, an infinity or a value out of range gives the integer indefinite 80000000H.
    """
    convert = _converted_to_int("nearest")
    _legacy_each(cpu, dest, src, 32, lambda _a, b: convert(b))


def vcvttps2dq(cpu: X86Context, dest, src) -> None:
    """Convert single-precision values to signed dwords, truncated (VEX: AVX; EVEX: AVX512F, under a write mask).

        FOR j := 0 TO VL/32 - 1
            IF k1[j] OR *no writemask*:
                DEST.dword[j] := Convert_Single_Precision_Floating_Point_To_Integer_Truncate(SRC.fp32[j])
            ELSE IF *zeroing*: DEST.dword[j] := 0     (else unchanged: merging)
        DEST[MAXVL-1:VL] := 0

    A NaN, an infinity or a value out of range gives the integer indefinite 80000000H.
    """
    _each(cpu, dest, (src,), 32, _converted_to_int("truncate"))


def vcvtps2dq(cpu: X86Context, dest, src) -> None:
    """Convert single-precision values to signed dwords, rounded to nearest even (VEX: AVX; EVEX: AVX512F).

        FOR j := 0 TO VL/32 - 1
            IF k1[j] OR *no writemask*: DEST.dword[j] := Convert_Single_Precision_Floating_Point_To_Integer(SRC.fp32[j])
            ELSE IF *zeroing*: DEST.dword[j] := 0     (else unchanged: merging)
        DEST[MAXVL-1:VL] := 0

    A NaN, an infinity or a value out of range gives the integer indefinite 80000000H.
    """
    _each(cpu, dest, (src,), 32, _converted_to_int("nearest"))


def _fma_packed(order: str):
    """VFMADD132PS / 213PS: the digits name which operands are multiplied and which is added."""
    def semantics(cpu: X86Context, dest, src2, src3) -> None:
        def one(d: int, s2: int, s3: int) -> int:
            ops = {"1": d, "2": s2, "3": s3}
            a, b, c = ops[order[0]], ops[order[1]], ops[order[2]]
            return fp32.fma(a, b, c, (a, b, c))

        _each(cpu, dest, (unmasked(dest), src2, src3), 32, one)

    names = {"1": "DEST", "2": "SRC2", "3": "SRC3"}
    semantics.__name__ = semantics.__qualname__ = f"vfmadd{order}ps"
    semantics.__doc__ = (f"Fused multiply-add of packed single-precision values, each rounded once (VEX: FMA; "
                         f"EVEX: AVX512F, under a write mask).\n\n"
                         f"        FOR j := 0 TO VL/32 - 1\n"
                         f"            IF k1[j] OR *no writemask*:\n"
                         f"                DEST.fp32[j] := RoundFPControl_MXCSR({names[order[0]]}.fp32[j] * "
                         f"{names[order[1]]}.fp32[j] + {names[order[2]]}.fp32[j])\n"
                         f"            ELSE IF *zeroing*: DEST.fp32[j] := 0     (else unchanged: merging)\n"
                         f"        DEST[MAXVL-1:VL] := 0\n\n"
                         f"    A NaN operand gives the first NaN of the two factors, then the addend, made quiet; "
                         f"0 x inf and inf - inf give the default NaN FFC00000H.\n")
    return semantics


vfmadd132ps, vfmadd213ps = _fma_packed("132"), _fma_packed("213")


def roundps(cpu: X86Context, dest, src, imm8) -> None:
    """Round four single-precision values to integer values by imm8 (SSE4.1).

        FOR j := 0 TO 3: DEST.fp32[j] := Round(SRC.fp32[j], imm8[1:0] or MXCSR.RC if imm8[2])
        DEST[MAXVL-1:128] unmodified

    imm8[1:0]: 0 nearest even, 1 down, 2 up, 3 toward zero; imm8[3] suppresses the precision exception only.
    A NaN gives itself made quiet; an infinity or a zero itself; a zero result keeps the sign.
    """
    control = imm8.value & 0xF
    _legacy_each(cpu, dest, src, 32, lambda _a, b: fp32.round_integral(b, control))


def vroundps(cpu: X86Context, dest, src, imm8) -> None:
    """Round single-precision values to integer values by imm8 (VEX: AVX; 128 or 256 bits).

        FOR j := 0 TO VL/32 - 1: DEST.fp32[j] := Round(SRC.fp32[j], imm8[1:0] or MXCSR.RC if imm8[2])
        DEST[MAXVL-1:VL] := 0

    A NaN gives itself made quiet; an infinity or a zero itself; a zero result keeps the sign.
    """
    control = imm8.value & 0xF
    _each(cpu, dest, (src,), 32, lambda b: fp32.round_integral(b, control))


def vrndscaleps(cpu: X86Context, dest, src, imm8) -> None:
    """Round single-precision values to multiples of 2^-M, M := imm8[7:4] (AVX512F, under a write mask).

        FOR j := 0 TO VL/32 - 1
            IF k1[j] OR *no writemask*:
                DEST.fp32[j] := 2^-M * Round(2^M * SRC.fp32[j], imm8[1:0] or MXCSR.RC if imm8[2])
            ELSE IF *zeroing*: DEST.fp32[j] := 0     (else unchanged: merging)
        DEST[MAXVL-1:VL] := 0

    A NaN gives itself made quiet; an infinity or a zero itself; a zero result keeps the sign.
    """
    control = imm8.value & 0xFF
    _each(cpu, dest, (src,), 32, lambda b: fp32.round_integral(b, control))


def _horizontal(bits: int, a: int, b: int, size: int, operation) -> int:
    """Per 128-bit lane: the pairwise results of A's elements, then of B's."""
    per = 128 // size
    out = []
    for lane in range(bits // 128):
        for source in (a, b):
            x = elements(source >> (128 * lane), size, per)
            out += [operation(x[2 * i], x[2 * i + 1]) for i in range(per // 2)]
    return pack(out, size)


def haddps(cpu: X86Context, dest, src) -> None:
    """Add horizontal pairs of single-precision values (SSE3).

        DEST.fp32[0] := DEST.fp32[0] + DEST.fp32[1];  DEST.fp32[1] := DEST.fp32[2] + DEST.fp32[3]
        DEST.fp32[2] := SRC.fp32[0] + SRC.fp32[1];    DEST.fp32[3] := SRC.fp32[2] + SRC.fp32[3]
        DEST[MAXVL-1:128] unmodified

    Each sum rounded once (RNE); a NaN gives the first NaN of its pair made quiet.  An m128 must be aligned.
    """
    _legacy_whole(cpu, dest, (dest, src), lambda bits, a, b: _horizontal(bits, a, b, 32, fp32.add))


def vhaddps(cpu: X86Context, dest, src1, src2) -> None:
    """Add horizontal pairs of single-precision values in each 128-bit lane (VEX: AVX).

        FOR each 128-bit lane:
            DEST.fp32[0] := SRC1.fp32[0] + SRC1.fp32[1];  DEST.fp32[1] := SRC1.fp32[2] + SRC1.fp32[3]
            DEST.fp32[2] := SRC2.fp32[0] + SRC2.fp32[1];  DEST.fp32[3] := SRC2.fp32[2] + SRC2.fp32[3]
        DEST[MAXVL-1:VL] := 0

    Each sum rounded once (RNE); a NaN gives the first NaN of its pair made quiet.
    """
    bits = vl(dest)
    write_vex(cpu, dest, _horizontal(bits, read(cpu, src1, bits), read(cpu, src2, bits), 32, fp32.add), bits)


def _shuffle_ps(bits: int, a: int, b: int, imm: int) -> int:
    out = []
    for lane in range(bits // 128):
        x, y = elements(a >> (128 * lane), 32, 4), elements(b >> (128 * lane), 32, 4)
        out += [x[imm & 3], x[imm >> 2 & 3], y[imm >> 4 & 3], y[imm >> 6 & 3]]
    return pack(out, 32)


def shufps(cpu: X86Context, dest, src, imm8) -> None:
    """Pick two single-precision values of DEST and two of SRC by imm8 (SSE).

        DEST.fp32[0] := DEST.fp32[imm8[1:0]];  DEST.fp32[1] := DEST.fp32[imm8[3:2]]
        DEST.fp32[2] := SRC.fp32[imm8[5:4]];   DEST.fp32[3] := SRC.fp32[imm8[7:6]]
        DEST[MAXVL-1:128] unmodified
    """
    _legacy_whole(cpu, dest, (dest, src), lambda bits, a, b: _shuffle_ps(bits, a, b, imm8.value & 0xFF))


def vshufps(cpu: X86Context, dest, src1, src2, imm8) -> None:
    """Pick two single-precision values of SRC1 and two of SRC2 by imm8 in each 128-bit lane (VEX: AVX;
    EVEX: AVX512F, under a write mask).

        FOR each 128-bit lane: DEST.fp32[0] := SRC1.fp32[imm8[1:0]];  DEST.fp32[1] := SRC1.fp32[imm8[3:2]]
                               DEST.fp32[2] := SRC2.fp32[imm8[5:4]];  DEST.fp32[3] := SRC2.fp32[imm8[7:6]]
        (each element under the write mask);  DEST[MAXVL-1:VL] := 0
    """
    _whole(cpu, dest, (src1, src2), 32, lambda bits, a, b: _shuffle_ps(bits, a, b, imm8.value & 0xFF))


def _unpack(bits: int, a: int, b: int, size: int, high: int) -> int:
    """Per 128-bit lane: the low (or high) half's elements of A and B, interleaved (A's first)."""
    half = 64 // size
    out = []
    for lane in range(bits // 128):
        x, y = elements(a >> (128 * lane), size, 2 * half), elements(b >> (128 * lane), size, 2 * half)
        for i in range(half):
            out += [x[half * high + i], y[half * high + i]]
    return pack(out, size)


def _unpack_forms(name: str, size: int, high: int, feature: str, evex: str, what: str):
    """The SSE form (NAME xmm1, xmm2/m128) and the VEX/EVEX form of one unpack (interleave)."""
    def sse(cpu: X86Context, dest, src) -> None:
        _legacy_whole(cpu, dest, (dest, src), lambda bits, a, b: _unpack(bits, a, b, size, high))

    def avx(cpu: X86Context, dest, src1, src2) -> None:
        _whole(cpu, dest, (src1, src2), size, lambda bits, a, b: _unpack(bits, a, b, size, high))

    half = 64 // size
    part = "high" if high else "low"
    sse.__name__ = sse.__qualname__ = name
    avx.__name__ = avx.__qualname__ = "v" + name
    first = f"{half * high}" if high else "0"
    sse.__doc__ = (f"Interleave the {part} {what} of DEST and SRC ({feature}).\n\n"
                   f"        FOR i := 0 TO {half - 1}: DEST.e[2i] := DEST.e[{first}+i];  DEST.e[2i+1] := SRC.e[{first}+i]"
                   f"      (e: {size}-bit elements)\n"
                   f"        DEST[MAXVL-1:128] unmodified\n\n    A memory SRC must be 16-byte aligned (#GP(0)).\n")
    avx.__doc__ = (f"Interleave the {part} {what} of each 128-bit lane of SRC1 and SRC2 (VEX: AVX/AVX2; EVEX: "
                   f"{evex}, under a write mask).\n\n"
                   f"        FOR each 128-bit lane, i := 0 TO {half - 1}:\n"
                   f"            DEST.e[2i] := SRC1.e[{first}+i];  DEST.e[2i+1] := SRC2.e[{first}+i]"
                   f"      (e: {size}-bit elements, each under the write mask)\n"
                   f"        DEST[MAXVL-1:VL] := 0\n")
    return sse, avx


unpcklps, vunpcklps = _unpack_forms("unpcklps", 32, 0, "SSE", "AVX512F", "single-precision values")
unpckhps, vunpckhps = _unpack_forms("unpckhps", 32, 1, "SSE", "AVX512F", "single-precision values")
unpcklpd, vunpcklpd = _unpack_forms("unpcklpd", 64, 0, "SSE2", "AVX512F", "double-precision values")
unpckhpd, vunpckhpd = _unpack_forms("unpckhpd", 64, 1, "SSE2", "AVX512F", "double-precision values")


def movhlps(cpu: X86Context, dest, src) -> None:
    """Move the high qword of SRC to the low qword of DEST (SSE; registers only).

        DEST[63:0] := SRC[127:64];  DEST[MAXVL-1:64] unmodified
    """
    old = read(cpu, dest, 128)
    write_legacy(cpu, dest, old >> 64 << 64 | read(cpu, src, 128) >> 64)


def movlhps(cpu: X86Context, dest, src) -> None:
    """Move the low qword of SRC to the high qword of DEST (SSE; registers only).

        DEST[127:64] := SRC[63:0];  DEST[MAXVL-1:128], DEST[63:0] unmodified
    """
    old = read(cpu, dest, 128)
    write_legacy(cpu, dest, (read(cpu, src, 64) << 64) | old & ((1 << 64) - 1))


def movlps(cpu: X86Context, dest, src) -> None:
    """Move two single-precision values (64 bits) between memory and the low qword of an xmm register (SSE).

        MOVLPS xmm1, m64:  DEST[63:0] := SRC[63:0];  DEST[MAXVL-1:64] unmodified
        MOVLPS m64, xmm1:  DEST[63:0] := SRC[63:0]
    """
    if isinstance(dest, Mem):
        cpu.write_memory(cpu.effective_address(dest), read(cpu, src, 64).to_bytes(8, "little"))
        return
    old = read(cpu, dest, 128)
    write_legacy(cpu, dest, old >> 64 << 64 | read(cpu, src, 64))


def movhps(cpu: X86Context, dest, src) -> None:
    """Move two single-precision values (64 bits) between memory and the high qword of an xmm register (SSE).

        MOVHPS xmm1, m64:  DEST[127:64] := SRC[63:0];  DEST[63:0], DEST[MAXVL-1:128] unmodified
        MOVHPS m64, xmm1:  DEST[63:0] := SRC[127:64]
    """
    if isinstance(dest, Mem):
        cpu.write_memory(cpu.effective_address(dest), (read(cpu, src, 128) >> 64).to_bytes(8, "little"))
        return
    old = read(cpu, dest, 128)
    write_legacy(cpu, dest, read(cpu, src, 64) << 64 | old & ((1 << 64) - 1))


def _insert_lane(cpu: X86Context, dest, src1, src2, lane_bits: int, size: int, imm8) -> None:
    bits = vl(dest)
    lanes = bits // lane_bits
    at = imm8.value % lanes * lane_bits
    base = read(cpu, src1, bits)
    mask = active(cpu, dest, bits // size)
    part = read_selected(cpu, src2, lane_bits, size, (1 << (lane_bits // size)) - 1 if mask else 0)
    value = base & ~(((1 << lane_bits) - 1) << at) | part << at
    write_masked(cpu, dest, value, bits, size)


def vinsertf128(cpu: X86Context, dest, src1, src2, imm8) -> None:
    """Insert 128 bits into the lane imm8[0] of a ymm register (AVX).

        DEST[255:0] := SRC1[255:0];  DEST[128*imm8[0]+127 : 128*imm8[0]] := SRC2[127:0];  DEST[MAXVL-1:256] := 0
    """
    _insert_lane(cpu, dest, src1, src2, 128, 128, imm8)


def vinserti128(cpu: X86Context, dest, src1, src2, imm8) -> None:
    """Insert 128 bits of integers into the lane imm8[0] of a ymm register (AVX2).

        DEST[255:0] := SRC1[255:0];  DEST[128*imm8[0]+127 : 128*imm8[0]] := SRC2[127:0];  DEST[MAXVL-1:256] := 0
    """
    _insert_lane(cpu, dest, src1, src2, 128, 128, imm8)


def vinserti32x4(cpu: X86Context, dest, src1, src2, imm8) -> None:
    """Insert 128 bits into a lane (imm8[0] of a ymm, imm8[1:0] of a zmm), as dwords under a write mask (AVX512F).

        TMP := SRC1 with lane imm8 := SRC2[127:0]
        FOR j: IF k1[j] OR *no writemask*: DEST.dword[j] := TMP.dword[j]  ELSE IF *zeroing*: 0  (else unchanged)
        DEST[MAXVL-1:VL] := 0
    """
    _insert_lane(cpu, dest, src1, src2, 128, 32, imm8)


def vinserti64x4(cpu: X86Context, dest, src1, src2, imm8) -> None:
    """Insert 256 bits into the half imm8[0] of a zmm register, as qwords under a write mask (AVX512F).

        TMP := SRC1 with 256-bit half imm8[0] := SRC2[255:0]
        FOR j: IF k1[j] OR *no writemask*: DEST.qword[j] := TMP.qword[j]  ELSE IF *zeroing*: 0  (else unchanged)
    """
    _insert_lane(cpu, dest, src1, src2, 256, 64, imm8)


def vextractf128(cpu: X86Context, dest, src, imm8) -> None:
    """Extract the 128-bit lane imm8[0] of a ymm register to an xmm register or memory (AVX).

        DEST[127:0] := SRC[128*imm8[0]+127 : 128*imm8[0]];  DEST[MAXVL-1:128] := 0 (a register)
    """
    _extract_lane(cpu, dest, src, 128, 128, imm8)


def vextractf32x4(cpu: X86Context, dest, src, imm8) -> None:
    """Extract a 128-bit lane (imm8[0] of a ymm, imm8[1:0] of a zmm) as single-precision values under a write
    mask (AVX512F; AVX512VL for a ymm source).

        TMP[127:0] := SRC lane imm8
        FOR j := 0 TO 3: IF k1[j] OR *no writemask*: DEST.fp32[j] := TMP.fp32[j]
                         ELSE IF *zeroing*: DEST.fp32[j] := 0     (else unchanged; memory: not written)
        DEST[MAXVL-1:128] := 0 (a register)
    """
    _extract_lane(cpu, dest, src, 128, 32, imm8)


def vextracti64x2(cpu: X86Context, dest, src, imm8) -> None:
    """Extract a 128-bit lane (imm8[0] of a ymm, imm8[1:0] of a zmm) as qwords under a write mask (AVX512DQ).

        TMP[127:0] := SRC lane imm8
        FOR j := 0 TO 1: IF k1[j] OR *no writemask*: DEST.qword[j] := TMP.qword[j]
                         ELSE IF *zeroing*: DEST.qword[j] := 0     (else unchanged; memory: not written)
        DEST[MAXVL-1:128] := 0 (a register)
    """
    _extract_lane(cpu, dest, src, 128, 64, imm8)


def _blend_variable(cpu: X86Context, dest, src1, src2, selector, size: int) -> None:
    bits = vl(dest)
    count = bits // size
    a, b = elements(read(cpu, src1, bits), size, count), elements(read(cpu, src2, bits), size, count)
    s = elements(read(cpu, selector, bits), size, count)
    write_vex(cpu, dest, pack([y if m >> (size - 1) else x for x, y, m in zip(a, b, s)], size), bits)


def vblendvps(cpu: X86Context, dest, src1, src2, selector) -> None:
    """Pick each single-precision value from SRC2 where the selector's sign bit is set, else SRC1 (VEX: AVX).

        FOR j := 0 TO VL/32 - 1: DEST.dword[j] := IF SRC4[32j+31] THEN SRC2.dword[j] ELSE SRC1.dword[j]
        DEST[MAXVL-1:VL] := 0
    """
    _blend_variable(cpu, dest, src1, src2, selector, 32)


def vpblendvb(cpu: X86Context, dest, src1, src2, selector) -> None:
    """Pick each byte from SRC2 where the selector byte's top bit is set, else SRC1 (VEX: AVX/AVX2).

        FOR j := 0 TO VL/8 - 1: DEST.byte[j] := IF SRC4[8j+7] THEN SRC2.byte[j] ELSE SRC1.byte[j]
        DEST[MAXVL-1:VL] := 0
    """
    _blend_variable(cpu, dest, src1, src2, selector, 8)


def _blend_masked(cpu: X86Context, dest, src1, src2, size: int) -> None:
    bits = vl(dest)
    count = bits // size
    mask = active(cpu, dest, count)
    a = elements(read(cpu, src1, bits), size, count)
    b = elements(read_selected(cpu, src2, bits, size, mask), size, count)
    zeroing = isinstance(dest, Masked) and dest.zeroing
    out = [y if mask >> j & 1 else (0 if zeroing else x) for j, (x, y) in enumerate(zip(a, b))]
    write_vex(cpu, unmasked(dest), pack(out, size), bits)


def vblendmps(cpu: X86Context, dest, src1, src2) -> None:
    """Blend single-precision values of SRC1 and SRC2 by the write mask (AVX512F).

        FOR j := 0 TO VL/32 - 1
            IF k1[j] OR *no writemask*: DEST.fp32[j] := SRC2.fp32[j]
            ELSE IF *zeroing*: DEST.fp32[j] := 0
            ELSE: DEST.fp32[j] := SRC1.fp32[j]     (SRC1, not DEST's old value)
        DEST[MAXVL-1:VL] := 0
    """
    _blend_masked(cpu, dest, src1, src2, 32)


def vpblendmb(cpu: X86Context, dest, src1, src2) -> None:
    """Blend bytes of SRC1 and SRC2 by the write mask (AVX512BW).

        FOR j := 0 TO VL/8 - 1
            IF k1[j] OR *no writemask*: DEST.byte[j] := SRC2.byte[j]
            ELSE IF *zeroing*: DEST.byte[j] := 0
            ELSE: DEST.byte[j] := SRC1.byte[j]
        DEST[MAXVL-1:VL] := 0
    """
    _blend_masked(cpu, dest, src1, src2, 8)


def vpblendmd(cpu: X86Context, dest, src1, src2) -> None:
    """Blend dwords of SRC1 and SRC2 by the write mask (AVX512F).

        FOR j := 0 TO VL/32 - 1
            IF k1[j] OR *no writemask*: DEST.dword[j] := SRC2.dword[j]
            ELSE IF *zeroing*: DEST.dword[j] := 0
            ELSE: DEST.dword[j] := SRC1.dword[j]
        DEST[MAXVL-1:VL] := 0
    """
    _blend_masked(cpu, dest, src1, src2, 32)


# ---------------------------------------------------------------------------
# Half precision (issue 27: what AMX-FP16 kernels convert before and after the tiles): F16C (VEX) and AVX512F
# ---------------------------------------------------------------------------


def vcvtph2ps(cpu: X86Context, dest, src) -> None:
    """Convert half-precision values to single precision, exactly (VEX: F16C; EVEX: AVX512F, under a write mask).

        FOR j := 0 TO VL/32 - 1
            IF k1[j] OR *no writemask*: DEST.fp32[j] := Convert_FP16_To_FP32(SRC.fp16[j])
            ELSE IF *zeroing*: DEST.fp32[j] := 0     (else unchanged: merging)
        DEST[MAXVL-1:VL] := 0

    Every fp16 value, denormals too, is exact in fp32; a NaN keeps its payload, made quiet.
    """
    _widen(cpu, dest, src, 16, 32, fp32.from_fp16)


def vcvtps2ph(cpu: X86Context, dest, src, imm8) -> None:
    """Convert single-precision values to half precision, rounded by imm8 (VEX: F16C; EVEX: AVX512F, under a
    write mask), into an xmm/ymm register or memory.

        FOR j := 0 TO VL/32 - 1
            IF k1[j] OR *no writemask*: DEST.fp16[j] := Convert_FP32_To_FP16(SRC.fp32[j], imm8)
            ELSE IF *zeroing*: DEST.fp16[j] := 0     (else unchanged; memory: not written)
        a register DEST: DEST[MAXVL-1:VL/2] := 0

    imm8[1:0]: 0 nearest even, 1 down, 2 up, 3 toward zero; imm8[2] set: MXCSR.RC (nearest even by default).
    One rounding with gradual underflow; past 65504: infinity, or 65504 where the mode rounds toward zero; a
    NaN keeps its top payload bits, made quiet.
    """
    control = imm8.value & 7
    mode = "nearest" if control & 4 else fp32.ROUNDING_MODES[control & 3]
    bits = vl(src)
    count = bits // 32
    values = [fp32.to_fp16(x, mode) for x in elements(read(cpu, src, bits), 32, count)]
    mask = active(cpu, dest, count)
    target = unmasked(dest)
    if isinstance(target, Mem):
        write_masked(cpu, dest, pack(values, 16), count * 16, 16)
        return
    old = read(cpu, target, count * 16)
    zeroing = isinstance(dest, Masked) and dest.zeroing
    out = [v if mask >> j & 1 else (0 if zeroing else old >> (16 * j) & 0xFFFF) for j, v in enumerate(values)]
    write_vex(cpu, target, pack(out, 16), 128 if count * 16 <= 128 else 256)

"""Integer and fp32 arithmetic, BF16 conversions and VNNI (issue 27), and what g++ and clang emit besides around
AMX kernels: logic, shifts, shuffles, element inserts and extracts, 128/256-bit lane moves, the word multiply-add.
Element by element under DEST's write mask (semantics/vector.py's vocabulary).  Each function is its form's
explain text; forms/vector.py declares the forms.
"""

from __future__ import annotations

from ..context import X86Context
from ..numerics import simd_fp32 as fp32
from ..operands import GPR_VIEWS, Imm, Mem, Reg
from ..operands.masking import unmasked
from .vector import _bitwise, active, elements, pack, read, read_selected, signed, vl, write_masked, write_vex


def _saturate(x: int, bits: int, is_signed: bool) -> int:
    low, high = (-(1 << (bits - 1)), (1 << (bits - 1)) - 1) if is_signed else (0, (1 << bits) - 1)
    return min(max(x, low), high)



# ---------------------------------------------------------------------------
# Integer and fp32 arithmetic, BF16 and VNNI (issue 27): element by element under DEST's write mask
# ---------------------------------------------------------------------------


def _each(cpu: X86Context, dest, sources, size: int, operation, bits: int | None = None) -> None:
    """DEST element j := operation(source elements j) for each element the mask selects (``size`` bits)."""
    bits = bits or vl(dest)
    count = bits // size
    mask = active(cpu, dest, count)
    columns = [elements(read_selected(cpu, s, bits, size, mask), size, count) for s in sources]
    results = [operation(*row) if mask >> j & 1 else 0 for j, row in enumerate(zip(*columns))]
    write_masked(cpu, dest, pack(results, size), bits, size)


def vpaddd(cpu: X86Context, dest, src1, src2) -> None:
    """Add packed dwords, wrapping (VEX: AVX/AVX2; EVEX: AVX512F, under a write mask).

        FOR j := 0 TO VL/32 - 1
            IF k1[j] OR *no writemask*: DEST[32j+31:32j] := SRC1[32j+31:32j] + SRC2[32j+31:32j]   (mod 2^32)
            ELSE IF *zeroing*: DEST[32j+31:32j] := 0     (else unchanged: merging)
        DEST[MAXVL-1:VL] := 0
    """
    _each(cpu, dest, (src1, src2), 32, lambda a, b: a + b)


def vpsubd(cpu: X86Context, dest, src1, src2) -> None:
    """Subtract packed dwords, wrapping (VEX: AVX/AVX2; EVEX: AVX512F, under a write mask).

        FOR j := 0 TO VL/32 - 1
            IF k1[j] OR *no writemask*: DEST[32j+31:32j] := SRC1[32j+31:32j] - SRC2[32j+31:32j]   (mod 2^32)
            ELSE IF *zeroing*: DEST[32j+31:32j] := 0     (else unchanged: merging)
        DEST[MAXVL-1:VL] := 0
    """
    _each(cpu, dest, (src1, src2), 32, lambda a, b: a - b)


def vpmulld(cpu: X86Context, dest, src1, src2) -> None:
    """Multiply packed signed dwords, keeping the low 32 bits of each 64-bit product (VEX: AVX/AVX2; EVEX: AVX512F).

        FOR j := 0 TO VL/32 - 1
            IF k1[j] OR *no writemask*:
                Temp[63:0] := SRC1[32j+31:32j] * SRC2[32j+31:32j]   (signed)
                DEST[32j+31:32j] := Temp[31:0]
            ELSE IF *zeroing*: DEST[32j+31:32j] := 0     (else unchanged: merging)
        DEST[MAXVL-1:VL] := 0
    """
    _each(cpu, dest, (src1, src2), 32, lambda a, b: signed(a, 32) * signed(b, 32))


def vpdpbusd(cpu: X86Context, dest, src1, src2) -> None:
    """Multiply unsigned bytes of SRC1 by signed bytes of SRC2, add each group of four to a dword of DEST,
    wrapping (EVEX: AVX512_VNNI, AVX512VL below 512 bits, under a write mask; VEX, written {vex}: AVX-VNNI).

        FOR i := 0 TO VL/32 - 1
            IF k1[i] OR *no writemask*:
                p1 := ZeroExtend(SRC1.byte[4i+0]) * SignExtend(SRC2.byte[4i+0])
                ... p4 := ZeroExtend(SRC1.byte[4i+3]) * SignExtend(SRC2.byte[4i+3])
                DEST.dword[i] := DEST.dword[i] + p1 + p2 + p3 + p4     (mod 2^32, no saturation)
            ELSE IF *zeroing*: DEST.dword[i] := 0     (else unchanged: merging)
        DEST[MAXVL-1:VL] := 0
    """
    def dot(c: int, a: int, b: int) -> int:
        return c + sum((a >> 8 * t & 0xFF) * signed(b >> 8 * t, 8) for t in range(4))

    _each(cpu, dest, (unmasked(dest), src1, src2), 32, dot)


def vpermd(cpu: X86Context, dest, index, src) -> None:
    """Permute the dwords of SRC by the indices in INDEX (VEX ymm: AVX2; EVEX: AVX512F, under a write mask).

        n := VL/32
        FOR j := 0 TO n - 1
            i := INDEX[32j+3:32j] MOD n          (bits 2:0 for ymm, 3:0 for zmm)
            IF k1[j] OR *no writemask*: DEST[32j+31:32j] := SRC[32i+31:32i]
            ELSE IF *zeroing*: DEST[32j+31:32j] := 0     (else unchanged: merging)
        DEST[MAXVL-1:VL] := 0
    """
    bits = vl(dest)
    count = bits // 32
    table = elements(read(cpu, src, bits), 32, count)
    _each(cpu, dest, (index,), 32, lambda i: table[i % count])


def vpshufb(cpu: X86Context, dest, src1, src2) -> None:
    """Shuffle the bytes of SRC1 within each 128-bit lane by the indices in SRC2 (VEX: AVX/AVX2; EVEX: AVX512BW).

        FOR j := 0 TO VL/8 - 1
            IF k1[j] OR *no writemask*:
                IF SRC2[8j+7] = 1: DEST[8j+7:8j] := 0
                ELSE: index := SRC2[8j+3:8j];  DEST[8j+7:8j] := SRC1[128*(j DIV 16) + 8*index + 7 : ...]
            ELSE IF *zeroing*: DEST[8j+7:8j] := 0     (else unchanged: merging)
        DEST[MAXVL-1:VL] := 0
    """
    bits = vl(dest)
    count = bits // 8
    mask = active(cpu, dest, count)
    table = elements(read(cpu, src1, bits), 8, count)
    indices = elements(read_selected(cpu, src2, bits, 8, mask), 8, count)
    out = [0 if s & 0x80 else table[j // 16 * 16 + (s & 0xF)] for j, s in enumerate(indices)]
    write_masked(cpu, dest, pack(out, 8), bits, 8)


def _widen(cpu: X86Context, dest, src, source_size: int, size: int, extend) -> None:
    bits = vl(dest)
    count = bits // size
    mask = active(cpu, dest, count)
    narrow = elements(read_selected(cpu, src, count * source_size, source_size, mask), source_size, count)
    write_masked(cpu, dest, pack([extend(x) if mask >> j & 1 else 0 for j, x in enumerate(narrow)], size), bits, size)


def vpmovzxbw(cpu: X86Context, dest, src) -> None:
    """Zero-extend bytes to words (VEX: AVX/AVX2; EVEX: AVX512BW, under a write mask).

        FOR j := 0 TO VL/16 - 1
            IF k1[j] OR *no writemask*: DEST[16j+15:16j] := ZeroExtend(SRC[8j+7:8j])
            ELSE IF *zeroing*: DEST[16j+15:16j] := 0     (else unchanged: merging)
        DEST[MAXVL-1:VL] := 0
    """
    _widen(cpu, dest, src, 8, 16, lambda x: x)


def vpmovzxbd(cpu: X86Context, dest, src) -> None:
    """Zero-extend bytes to dwords (VEX: AVX/AVX2; EVEX: AVX512F, under a write mask).

        FOR j := 0 TO VL/32 - 1
            IF k1[j] OR *no writemask*: DEST[32j+31:32j] := ZeroExtend(SRC[8j+7:8j])
            ELSE IF *zeroing*: DEST[32j+31:32j] := 0     (else unchanged: merging)
        DEST[MAXVL-1:VL] := 0
    """
    _widen(cpu, dest, src, 8, 32, lambda x: x)


def vpmovzxwd(cpu: X86Context, dest, src) -> None:
    """Zero-extend words to dwords (VEX: AVX/AVX2; EVEX: AVX512F, under a write mask).

        FOR j := 0 TO VL/32 - 1
            IF k1[j] OR *no writemask*: DEST[32j+31:32j] := ZeroExtend(SRC[16j+15:16j])
            ELSE IF *zeroing*: DEST[32j+31:32j] := 0     (else unchanged: merging)
        DEST[MAXVL-1:VL] := 0
    """
    _widen(cpu, dest, src, 16, 32, lambda x: x)


def vpmovsxbw(cpu: X86Context, dest, src) -> None:
    """Sign-extend bytes to words (VEX: AVX/AVX2; EVEX: AVX512BW, under a write mask).

        FOR j := 0 TO VL/16 - 1
            IF k1[j] OR *no writemask*: DEST[16j+15:16j] := SignExtend(SRC[8j+7:8j])
            ELSE IF *zeroing*: DEST[16j+15:16j] := 0     (else unchanged: merging)
        DEST[MAXVL-1:VL] := 0
    """
    _widen(cpu, dest, src, 8, 16, lambda x: signed(x, 8))


def vpmovsxbd(cpu: X86Context, dest, src) -> None:
    """Sign-extend bytes to dwords (VEX: AVX/AVX2; EVEX: AVX512F, under a write mask).

        FOR j := 0 TO VL/32 - 1
            IF k1[j] OR *no writemask*: DEST[32j+31:32j] := SignExtend(SRC[8j+7:8j])
            ELSE IF *zeroing*: DEST[32j+31:32j] := 0     (else unchanged: merging)
        DEST[MAXVL-1:VL] := 0
    """
    _widen(cpu, dest, src, 8, 32, lambda x: signed(x, 8))


def vpmovsxwd(cpu: X86Context, dest, src) -> None:
    """Sign-extend words to dwords (VEX: AVX/AVX2; EVEX: AVX512F, under a write mask).

        FOR j := 0 TO VL/32 - 1
            IF k1[j] OR *no writemask*: DEST[32j+31:32j] := SignExtend(SRC[16j+15:16j])
            ELSE IF *zeroing*: DEST[32j+31:32j] := 0     (else unchanged: merging)
        DEST[MAXVL-1:VL] := 0
    """
    _widen(cpu, dest, src, 16, 32, lambda x: signed(x, 16))


def vcvtdq2ps(cpu: X86Context, dest, src) -> None:
    """Convert signed dwords to single precision, rounded to nearest even (MXCSR's default; VEX: AVX; EVEX: AVX512F).

        FOR j := 0 TO VL/32 - 1
            IF k1[j] OR *no writemask*: DEST[32j+31:32j] := Convert_Integer_To_Single_Precision_Floating_Point(SRC[32j+31:32j])
            ELSE IF *zeroing*: DEST[32j+31:32j] := 0     (else unchanged: merging)
        DEST[MAXVL-1:VL] := 0
    """
    _each(cpu, dest, (src,), 32, fp32.from_int32)


def vaddps(cpu: X86Context, dest, src1, src2) -> None:
    """Add packed single-precision values, each sum rounded once (RNE; VEX: AVX; EVEX: AVX512F, under a write mask).

        FOR j := 0 TO VL/32 - 1
            IF k1[j] OR *no writemask*: DEST[32j+31:32j] := SRC1[32j+31:32j] + SRC2[32j+31:32j]
            ELSE IF *zeroing*: DEST[32j+31:32j] := 0     (else unchanged: merging)
        DEST[MAXVL-1:VL] := 0

    A NaN operand gives the first NaN (SRC1, then SRC2) made quiet; inf - inf gives the default NaN FFC00000H.
    """
    _each(cpu, dest, (src1, src2), 32, fp32.add)


def vmulps(cpu: X86Context, dest, src1, src2) -> None:
    """Multiply packed single-precision values, each product rounded once (RNE; VEX: AVX; EVEX: AVX512F).

        FOR j := 0 TO VL/32 - 1
            IF k1[j] OR *no writemask*: DEST[32j+31:32j] := SRC1[32j+31:32j] * SRC2[32j+31:32j]
            ELSE IF *zeroing*: DEST[32j+31:32j] := 0     (else unchanged: merging)
        DEST[MAXVL-1:VL] := 0

    A NaN operand gives the first NaN (SRC1, then SRC2) made quiet; 0 x inf gives the default NaN FFC00000H.
    """
    _each(cpu, dest, (src1, src2), 32, fp32.mul)


def vfmadd231ps(cpu: X86Context, dest, src2, src3) -> None:
    """Fused multiply-add of packed single-precision values: one rounding of the exact SRC2 x SRC3 + DEST
    (VEX: FMA; EVEX: AVX512F, under a write mask).

        FOR j := 0 TO VL/32 - 1
            IF k1[j] OR *no writemask*:
                DEST[32j+31:32j] := RoundFPControl_MXCSR(SRC2[32j+31:32j] * SRC3[32j+31:32j] + DEST[32j+31:32j])
            ELSE IF *zeroing*: DEST[32j+31:32j] := 0     (else unchanged: merging)
        DEST[MAXVL-1:VL] := 0

    A NaN operand gives the first NaN of SRC2, SRC3, DEST (the two factors, then the addend) made quiet,
    signalling or not (measured on an AMD EPYC's AVX-512; the SDM's table leaves the FMA order to the
    form); 0 x inf and inf - inf give the default NaN FFC00000H.
    """
    _each(cpu, dest, (unmasked(dest), src2, src3), 32, lambda c, a, b: fp32.fma(a, b, c, (a, b, c)))


def vcvtne2ps2bf16(cpu: X86Context, dest, src1, src2) -> None:
    """Convert two vectors of single-precision values to one of BF16, SRC2's in the low half (AVX512_BF16).

        FOR i := 0 TO VL/16 - 1
            IF k1[i] OR *no writemask*:
                IF i < VL/32: DEST.word[i] := convert_fp32_to_bfloat16(SRC2.fp32[i])
                ELSE:         DEST.word[i] := convert_fp32_to_bfloat16(SRC1.fp32[i - VL/32])
            ELSE IF *zeroing*: DEST.word[i] := 0     (else unchanged: merging)
        DEST[MAXVL-1:VL] := 0

    convert_fp32_to_bfloat16 rounds to nearest even by an integer bias, reads a denormal as a signed zero,
    and makes a NaN quiet (numerics/simd_fp32.py's to_bf16).
    """
    bits = vl(dest)
    half = bits // 32
    mask = active(cpu, dest, bits // 16)
    low = elements(read_selected(cpu, src2, bits, 32, mask & ((1 << half) - 1)), 32, half)
    high = elements(read(cpu, src1, bits), 32, half)
    words = [fp32.to_bf16(x) for x in low + high]
    write_masked(cpu, dest, pack(words, 16), bits, 16)


def vcvtneps2bf16(cpu: X86Context, dest, src) -> None:
    """Convert single-precision values to BF16 in the low half of DEST (EVEX: AVX512_BF16, under a write mask).

        FOR i := 0 TO VL/32 - 1                 (VL: the source's length)
            IF k1[i] OR *no writemask*: DEST.word[i] := convert_fp32_to_bfloat16(SRC.fp32[i])
            ELSE IF *zeroing*: DEST.word[i] := 0     (else unchanged: merging)
        DEST[MAXVL-1:VL/2] := 0
    """
    bits = vl(src)
    count = bits // 32
    mask = active(cpu, dest, count)
    values = elements(read_selected(cpu, src, bits, 32, mask), 32, count)
    write_masked(cpu, dest, pack([fp32.to_bf16(x) for x in values], 16), bits // 2, 16)


# ---------------------------------------------------------------------------
# What g++ and clang emit besides (issue 27: found in the compiled kernels of tests/x86_amx/compiled): logic,
# shifts, shuffles, element inserts and extracts, 128/256-bit lane moves, and the word multiply-add
# ---------------------------------------------------------------------------


def vpand(cpu: X86Context, dest, src1, src2) -> None:
    """Bitwise AND (VEX: AVX/AVX2).

        DEST[VL-1:0] := SRC1[VL-1:0] BITWISE AND SRC2[VL-1:0];  DEST[MAXVL-1:VL] := 0
    """
    _bitwise(cpu, dest, (src1, src2), 32, lambda a, b: a & b)


def vpandd(cpu: X86Context, dest, src1, src2) -> None:
    """Bitwise AND of dwords under a write mask (AVX512F).

        FOR j: IF k1[j] OR *no writemask*: DEST.dword[j] := SRC1.dword[j] BITWISE AND SRC2.dword[j]
               ELSE IF *zeroing*: DEST.dword[j] := 0     (else unchanged)
        DEST[MAXVL-1:VL] := 0
    """
    _bitwise(cpu, dest, (src1, src2), 32, lambda a, b: a & b)


def vpandq(cpu: X86Context, dest, src1, src2) -> None:
    """Bitwise AND of qwords under a write mask (AVX512F).

        FOR j: IF k1[j] OR *no writemask*: DEST.qword[j] := SRC1.qword[j] BITWISE AND SRC2.qword[j]
               ELSE IF *zeroing*: DEST.qword[j] := 0     (else unchanged)
        DEST[MAXVL-1:VL] := 0
    """
    _bitwise(cpu, dest, (src1, src2), 64, lambda a, b: a & b)


def vpor(cpu: X86Context, dest, src1, src2) -> None:
    """Bitwise OR (VEX: AVX/AVX2).

        DEST[VL-1:0] := SRC1[VL-1:0] BITWISE OR SRC2[VL-1:0];  DEST[MAXVL-1:VL] := 0
    """
    _bitwise(cpu, dest, (src1, src2), 32, lambda a, b: a | b)


def vpord(cpu: X86Context, dest, src1, src2) -> None:
    """Bitwise OR of dwords under a write mask (AVX512F).

        FOR j: IF k1[j] OR *no writemask*: DEST.dword[j] := SRC1.dword[j] BITWISE OR SRC2.dword[j]
               ELSE IF *zeroing*: DEST.dword[j] := 0     (else unchanged)
        DEST[MAXVL-1:VL] := 0
    """
    _bitwise(cpu, dest, (src1, src2), 32, lambda a, b: a | b)


def vporq(cpu: X86Context, dest, src1, src2) -> None:
    """Bitwise OR of qwords under a write mask (AVX512F).

        FOR j: IF k1[j] OR *no writemask*: DEST.qword[j] := SRC1.qword[j] BITWISE OR SRC2.qword[j]
               ELSE IF *zeroing*: DEST.qword[j] := 0     (else unchanged)
        DEST[MAXVL-1:VL] := 0
    """
    _bitwise(cpu, dest, (src1, src2), 64, lambda a, b: a | b)


def vxorps(cpu: X86Context, dest, src1, src2) -> None:
    """Bitwise XOR of single-precision values' bits (VEX: AVX; EVEX: AVX512DQ, under a write mask);
    ``vxorps xmm0, xmm0, xmm0`` is clang's zeroing idiom.

        FOR j: IF k1[j] OR *no writemask*: DEST.dword[j] := SRC1.dword[j] BITWISE XOR SRC2.dword[j]
               ELSE IF *zeroing*: DEST.dword[j] := 0     (else unchanged)
        DEST[MAXVL-1:VL] := 0
    """
    _bitwise(cpu, dest, (src1, src2), 32, lambda a, b: a ^ b)


def _shift_count(cpu: X86Context, count) -> int:
    return count.value & 0xFF if isinstance(count, Imm) else read(cpu, count, 64)


def vpslld(cpu: X86Context, dest, src, count) -> None:
    """Shift dwords left by an imm8 or by COUNT[63:0] of an xmm register or m128 (VEX: AVX/AVX2; EVEX: AVX512F).

        FOR j: IF k1[j] OR *no writemask*:
                   DEST.dword[j] := IF COUNT > 31 THEN 0 ELSE SRC.dword[j] << COUNT
               ELSE IF *zeroing*: DEST.dword[j] := 0     (else unchanged)
        DEST[MAXVL-1:VL] := 0
    """
    n = _shift_count(cpu, count)
    _each(cpu, dest, (src,), 32, lambda a: 0 if n > 31 else a << n)


def vpsrld(cpu: X86Context, dest, src, count) -> None:
    """Shift dwords right, logically, by an imm8 or by COUNT[63:0] (VEX: AVX/AVX2; EVEX: AVX512F).

        FOR j: IF k1[j] OR *no writemask*:
                   DEST.dword[j] := IF COUNT > 31 THEN 0 ELSE SRC.dword[j] >> COUNT   (zeros shifted in)
               ELSE IF *zeroing*: DEST.dword[j] := 0     (else unchanged)
        DEST[MAXVL-1:VL] := 0
    """
    n = _shift_count(cpu, count)
    _each(cpu, dest, (src,), 32, lambda a: 0 if n > 31 else a >> n)


def vpsrad(cpu: X86Context, dest, src, count) -> None:
    """Shift dwords right, arithmetically, by an imm8 or by COUNT[63:0] (VEX: AVX/AVX2; EVEX: AVX512F).

        FOR j: IF k1[j] OR *no writemask*:
                   DEST.dword[j] := SignExtend(SRC.dword[j]) >> MIN(COUNT, 31)   (sign bits shifted in)
               ELSE IF *zeroing*: DEST.dword[j] := 0     (else unchanged)
        DEST[MAXVL-1:VL] := 0
    """
    n = min(_shift_count(cpu, count), 31)
    _each(cpu, dest, (src,), 32, lambda a: signed(a, 32) >> n)


def vpshufd(cpu: X86Context, dest, src, imm8) -> None:
    """Shuffle the dwords of each 128-bit lane by imm8 (VEX: AVX/AVX2; EVEX: AVX512F, under a write mask).

        FOR j := 0 TO VL/32 - 1
            i := imm8[2*(j MOD 4)+1 : 2*(j MOD 4)]
            IF k1[j] OR *no writemask*: DEST.dword[j] := SRC.dword[4*(j DIV 4) + i]
            ELSE IF *zeroing*: DEST.dword[j] := 0     (else unchanged)
        DEST[MAXVL-1:VL] := 0
    """
    bits = vl(dest)
    count = bits // 32
    mask = active(cpu, dest, count)
    table = elements(read_selected(cpu, src, bits, 32, (1 << count) - 1 if mask else 0), 32, count)
    order = imm8.value & 0xFF
    out = [table[j // 4 * 4 + (order >> 2 * (j % 4) & 3)] for j in range(count)]
    write_masked(cpu, dest, pack(out, 32), bits, 32)


def _extract(cpu: X86Context, dest, src, size: int, imm8) -> None:
    count = 128 // size
    value = elements(read(cpu, src, 128), size, count)[imm8.value % count]
    if isinstance(dest, Reg):
        cpu.state.write_gpr(GPR_VIEWS[dest.name], value)  # a 32-bit GPR write zeroes bits 63:32
    else:
        cpu.write_memory(cpu.effective_address(dest), value.to_bytes(size // 8, "little"))


def vpextrd(cpu: X86Context, dest, src, imm8) -> None:
    """Extract the dword imm8[1:0] of an xmm register to a GPR or memory (VEX: AVX; EVEX: AVX512DQ).

        DEST := SRC.dword[imm8[1:0]]   (a 32-bit GPR: bits 63:32 zeroed)
    """
    _extract(cpu, dest, src, 32, imm8)


def vpextrq(cpu: X86Context, dest, src, imm8) -> None:
    """Extract the qword imm8[0] of an xmm register to a GPR or memory (VEX: AVX; EVEX: AVX512DQ).

        DEST := SRC.qword[imm8[0]]
    """
    _extract(cpu, dest, src, 64, imm8)


def _insert(cpu: X86Context, dest, src1, src2, size: int, imm8) -> None:
    count = 128 // size
    values = elements(read(cpu, src1, 128), size, count)
    values[imm8.value % count] = read(cpu, src2, size if isinstance(src2, Mem) else vl(src2)) & ((1 << size) - 1)
    write_vex(cpu, dest, pack(values, size), 128)


def vpinsrb(cpu: X86Context, dest, src1, src2, imm8) -> None:
    """Insert a byte from a GPR or memory into an xmm register (VEX: AVX; EVEX: AVX512BW).

        DEST[127:0] := SRC1[127:0] with byte imm8[3:0] := SRC2[7:0];  DEST[MAXVL-1:128] := 0
    """
    _insert(cpu, dest, src1, src2, 8, imm8)


def vpinsrd(cpu: X86Context, dest, src1, src2, imm8) -> None:
    """Insert a dword from a GPR or memory into an xmm register (VEX: AVX; EVEX: AVX512DQ).

        DEST[127:0] := SRC1[127:0] with dword imm8[1:0] := SRC2[31:0];  DEST[MAXVL-1:128] := 0
    """
    _insert(cpu, dest, src1, src2, 32, imm8)


def vpinsrq(cpu: X86Context, dest, src1, src2, imm8) -> None:
    """Insert a qword from a GPR or memory into an xmm register (VEX: AVX; EVEX: AVX512DQ).

        DEST[127:0] := SRC1[127:0] with qword imm8[0] := SRC2[63:0];  DEST[MAXVL-1:128] := 0
    """
    _insert(cpu, dest, src1, src2, 64, imm8)


def _extract_lane(cpu: X86Context, dest, src, lane_bits: int, size: int, imm8) -> None:
    lanes = vl(src) // lane_bits
    value = read(cpu, src, vl(src)) >> (lane_bits * (imm8.value % lanes)) & ((1 << lane_bits) - 1)
    write_masked(cpu, dest, value, lane_bits, size)


def vextracti128(cpu: X86Context, dest, src, imm8) -> None:
    """Extract the 128-bit lane imm8[0] of a ymm register to an xmm register or memory (AVX2).

        DEST[127:0] := SRC[128*imm8[0]+127 : 128*imm8[0]];  DEST[MAXVL-1:128] := 0 (a register)
    """
    _extract_lane(cpu, dest, src, 128, 128, imm8)


def vextracti32x4(cpu: X86Context, dest, src, imm8) -> None:
    """Extract a 128-bit lane (imm8[0] of a ymm, imm8[1:0] of a zmm register) as dwords under a write mask
    (AVX512F; AVX512VL for a ymm source).

        TMP[127:0] := SRC lane imm8
        FOR j := 0 TO 3: IF k1[j] OR *no writemask*: DEST.dword[j] := TMP.dword[j]
                         ELSE IF *zeroing*: DEST.dword[j] := 0     (else unchanged; memory: not written)
        DEST[MAXVL-1:128] := 0 (a register)
    """
    _extract_lane(cpu, dest, src, 128, 32, imm8)


def vextracti64x4(cpu: X86Context, dest, src, imm8) -> None:
    """Extract the 256-bit half imm8[0] of a zmm register as qwords under a write mask (AVX512F).

        TMP[255:0] := SRC[256*imm8[0]+255 : 256*imm8[0]]
        FOR j := 0 TO 3: IF k1[j] OR *no writemask*: DEST.qword[j] := TMP.qword[j]
                         ELSE IF *zeroing*: DEST.qword[j] := 0     (else unchanged; memory: not written)
        DEST[MAXVL-1:256] := 0 (a register)
    """
    _extract_lane(cpu, dest, src, 256, 64, imm8)


def vbroadcasti128(cpu: X86Context, dest, src) -> None:
    """Broadcast 128 bits of memory to both lanes of a ymm register (AVX2).

        DEST[127:0] := SRC[127:0];  DEST[255:128] := SRC[127:0];  DEST[MAXVL-1:256] := 0
    """
    value = read(cpu, src, 128)
    write_vex(cpu, dest, value << 128 | value, 256)


def vbroadcasti64x4(cpu: X86Context, dest, src) -> None:
    """Broadcast 256 bits of memory to both halves of a zmm register, as qwords under a write mask (AVX512F).

        FOR j := 0 TO 7: IF k1[j] OR *no writemask*: DEST.qword[j] := SRC.qword[j MOD 4]
                         ELSE IF *zeroing*: DEST.qword[j] := 0     (else unchanged)
    """
    value = read(cpu, src, 256)
    write_masked(cpu, dest, value << 256 | value, 512, 64)


def vpmovsxdq(cpu: X86Context, dest, src) -> None:
    """Sign-extend dwords to qwords (VEX: AVX/AVX2; EVEX: AVX512F, under a write mask).

        FOR j: IF k1[j] OR *no writemask*: DEST.qword[j] := SignExtend(SRC.dword[j])
               ELSE IF *zeroing*: DEST.qword[j] := 0     (else unchanged)
        DEST[MAXVL-1:VL] := 0
    """
    _widen(cpu, dest, src, 32, 64, lambda x: signed(x, 32))


def vpmovzxdq(cpu: X86Context, dest, src) -> None:
    """Zero-extend dwords to qwords (VEX: AVX/AVX2; EVEX: AVX512F, under a write mask).

        FOR j: IF k1[j] OR *no writemask*: DEST.qword[j] := ZeroExtend(SRC.dword[j])
               ELSE IF *zeroing*: DEST.qword[j] := 0     (else unchanged)
        DEST[MAXVL-1:VL] := 0
    """
    _widen(cpu, dest, src, 32, 64, lambda x: x)


def vpmaddwd(cpu: X86Context, dest, src1, src2) -> None:
    """Multiply signed words and add adjacent pairs into dwords, wrapping (VEX: AVX/AVX2; EVEX: AVX512BW).

        FOR j: IF k1[j] OR *no writemask*:
                   DEST.dword[j] := SRC1.word[2j+1]*SRC2.word[2j+1] + SRC1.word[2j]*SRC2.word[2j]  (signed, mod 2^32)
               ELSE IF *zeroing*: DEST.dword[j] := 0     (else unchanged)
        DEST[MAXVL-1:VL] := 0
    """
    _each(cpu, dest, (src1, src2), 32, lambda a, b: signed(a, 16) * signed(b, 16)
          + signed(a >> 16, 16) * signed(b >> 16, 16))


def _unpack_words(cpu: X86Context, dest, src1, src2, high: int) -> None:
    bits = vl(dest)
    count = bits // 16
    mask = active(cpu, dest, count)
    a = elements(read(cpu, src1, bits), 16, count)
    b = elements(read_selected(cpu, src2, bits, 16, (1 << count) - 1 if mask else 0), 16, count)
    out = []
    for lane in range(bits // 128):
        for i in range(4):
            out += [a[8 * lane + 4 * high + i], b[8 * lane + 4 * high + i]]
    write_masked(cpu, dest, pack(out, 16), bits, 16)


def vpunpcklwd(cpu: X86Context, dest, src1, src2) -> None:
    """Interleave the low four words of each 128-bit lane of SRC1 and SRC2 (VEX: AVX/AVX2; EVEX: AVX512BW).

        FOR each 128-bit lane, i := 0 TO 3:
            DEST.word[2i] := SRC1.word[i];  DEST.word[2i+1] := SRC2.word[i]   (under the write mask)
        DEST[MAXVL-1:VL] := 0
    """
    _unpack_words(cpu, dest, src1, src2, 0)


def vpunpckhwd(cpu: X86Context, dest, src1, src2) -> None:
    """Interleave the high four words of each 128-bit lane of SRC1 and SRC2 (VEX: AVX/AVX2; EVEX: AVX512BW).

        FOR each 128-bit lane, i := 0 TO 3:
            DEST.word[2i] := SRC1.word[4+i];  DEST.word[2i+1] := SRC2.word[4+i]   (under the write mask)
        DEST[MAXVL-1:VL] := 0
    """
    _unpack_words(cpu, dest, src1, src2, 1)


def vperm2i128(cpu: X86Context, dest, src1, src2, imm8) -> None:
    """Choose each 128-bit half of DEST from the four halves of SRC1 and SRC2, or zero (AVX2).

        FOR h := 0 TO 1:  sel := imm8[4h+1 : 4h]
            DEST[128h+127 : 128h] := IF imm8[4h+3] THEN 0 ELSE (SRC1.lo, SRC1.hi, SRC2.lo, SRC2.hi)[sel]
        DEST[MAXVL-1:256] := 0
    """
    halves = elements(read(cpu, src1, 256), 128, 2) + elements(read(cpu, src2, 256), 128, 2)
    control = imm8.value & 0xFF
    out = [0 if control >> (4 * h + 3) & 1 else halves[control >> (4 * h) & 3] for h in range(2)]
    write_vex(cpu, dest, pack(out, 128), 256)


def vpermt2w(cpu: X86Context, dest, index, table) -> None:
    """Permute words from two tables, DEST (the first, overwritten) and SRC3, by the indices in SRC2
    (AVX512BW; AVX512VL below 512 bits), under a write mask.

        n := VL/16;  id := log2(n)
        FOR j := 0 TO n - 1
            i := SRC2.word[j]
            IF k1[j] OR *no writemask*:
                DEST.word[j] := IF i[id] = 0 THEN DEST.word[i[id-1:0]] ELSE SRC3.word[i[id-1:0]]
            ELSE IF *zeroing*: DEST.word[j] := 0     (else unchanged: merging)
        DEST[MAXVL-1:VL] := 0
    """
    bits = vl(dest)
    count = bits // 16
    mask = active(cpu, dest, count)
    first = elements(read(cpu, unmasked(dest), bits), 16, count)
    second = elements(read_selected(cpu, table, bits, 16, (1 << count) - 1 if mask else 0), 16, count)
    indices = elements(read(cpu, index, bits), 16, count)
    out = [(second if i & count else first)[i % count] for i in indices]
    write_masked(cpu, dest, pack(out, 16), bits, 16)


# ---------------------------------------------------------------------------
# The rest of the VNNI family (issue 27): the saturating VPDPBUSDS and the word forms VPDPWSSD/VPDPWSSDS; EVEX
# (AVX512_VNNI, under a write mask) and VEX (AVX-VNNI, which objdump and GNU as write with a {vex} prefix: the
# forms "{vex} vpdpbusd" and kin, g++ and clang's choice for 128/256-bit intrinsics under -march=sapphirerapids)
# ---------------------------------------------------------------------------


def _saturate32(x: int) -> int:
    return _saturate(x, 32, True)


def vpdpbusds(cpu: X86Context, dest, src1, src2) -> None:
    """Multiply unsigned bytes of SRC1 by signed bytes of SRC2, add each group of four to a dword of DEST, with
    signed saturation (EVEX: AVX512_VNNI, under a write mask; VEX, written {vex}: AVX-VNNI).

        FOR i := 0 TO VL/32 - 1
            IF k1[i] OR *no writemask*:
                DEST.dword[i] := SIGNED_DWORD_SATURATE(DEST.dword[i] + SUM(t = 0..3) ZeroExtend(SRC1.byte[4i+t])
                                                                       * SignExtend(SRC2.byte[4i+t]))
            ELSE IF *zeroing*: DEST.dword[i] := 0     (else unchanged: merging)
        DEST[MAXVL-1:VL] := 0
    """
    def dot(c: int, a: int, b: int) -> int:
        return _saturate32(signed(c, 32) + sum((a >> 8 * t & 0xFF) * signed(b >> 8 * t, 8) for t in range(4)))

    _each(cpu, dest, (unmasked(dest), src1, src2), 32, dot)


def _word_dot(c: int, a: int, b: int) -> int:
    return signed(c, 32) + signed(a, 16) * signed(b, 16) + signed(a >> 16, 16) * signed(b >> 16, 16)


def vpdpwssd(cpu: X86Context, dest, src1, src2) -> None:
    """Multiply signed words of SRC1 and SRC2, add each pair to a dword of DEST, wrapping (EVEX: AVX512_VNNI,
    under a write mask; VEX, written {vex}: AVX-VNNI).

        FOR i := 0 TO VL/32 - 1
            IF k1[i] OR *no writemask*:
                DEST.dword[i] := DEST.dword[i] + SRC1.word[2i]*SRC2.word[2i] + SRC1.word[2i+1]*SRC2.word[2i+1]
            ELSE IF *zeroing*: DEST.dword[i] := 0     (else unchanged: merging)
        DEST[MAXVL-1:VL] := 0
    """
    _each(cpu, dest, (unmasked(dest), src1, src2), 32, _word_dot)


def vpdpwssds(cpu: X86Context, dest, src1, src2) -> None:
    """Multiply signed words of SRC1 and SRC2, add each pair to a dword of DEST, with signed saturation (EVEX:
    AVX512_VNNI, under a write mask; VEX, written {vex}: AVX-VNNI).

        FOR i := 0 TO VL/32 - 1
            IF k1[i] OR *no writemask*:
                DEST.dword[i] := SIGNED_DWORD_SATURATE(DEST.dword[i] + SRC1.word[2i]*SRC2.word[2i]
                                                                      + SRC1.word[2i+1]*SRC2.word[2i+1])
            ELSE IF *zeroing*: DEST.dword[i] := 0     (else unchanged: merging)
        DEST[MAXVL-1:VL] := 0
    """
    _each(cpu, dest, (unmasked(dest), src1, src2), 32, lambda c, a, b: _saturate32(_word_dot(c, a, b)))

"""Packed-integer families the compilers' vectorised loops emit beside AMX kernels (issue 27, round 2): the
multiplies of dword pairs into qwords (PMULUDQ, PMULDQ) and of qwords (VPMULLQ), the word shuffles of one
half of a lane (PSHUFLW, PSHUFHW), word inserts and extracts (PINSRW, PEXTRW), the immediate blends
(PBLENDW, VPBLENDW, VPBLENDD), the byte and word permutes (VPERMB, VPERMW), and the conversions between
vectors and opmask registers (VPMOV{B,W,D,Q}2M, VPMOVM2{B,W,D,Q}).

Each function reads like the SDM's Operation section and is its form's explain text.  The SSE forms work on
128 bits and keep DEST[MAXVL-1:128]; the VEX/EVEX forms write VL bits and zero DEST[MAXVL-1:VL]; an EVEX write
mask merges or zeroes element by element (semantics/vector.py's write_masked).  The forms are declared in
forms/vector.py with their iced-x86 rows.
"""

from __future__ import annotations

from ..context import X86Context
from ..operands import Mem
from ..operands.masking import opmask_number
from .vector import elements, pack, read, signed, vl, write_legacy, write_vex
from .vector_arithmetic import _each, _extract
from .vector_single import _legacy_each, _whole

LOW32 = 0xFFFFFFFF


# ---------------------------------------------------------------------------
# Multiplies: dword pairs into qwords, and qwords
# ---------------------------------------------------------------------------


def pmuludq(cpu: X86Context, dest, src) -> None:
    """Multiply the unsigned low dwords of each qword into a 64-bit product (SSE2).

        DEST[63:0]   := DEST[31:0] * SRC[31:0]        (unsigned)
        DEST[127:64] := DEST[95:64] * SRC[95:64]
        DEST[MAXVL-1:128] unmodified

    A memory SRC must be 16-byte aligned (#GP(0)).
    """
    _legacy_each(cpu, dest, src, 64, lambda a, b: (a & LOW32) * (b & LOW32))


def pmuldq(cpu: X86Context, dest, src) -> None:
    """Multiply the signed low dwords of each qword into a 64-bit product (SSE4.1).

        DEST[63:0]   := SignExtend(DEST[31:0]) * SignExtend(SRC[31:0])
        DEST[127:64] := SignExtend(DEST[95:64]) * SignExtend(SRC[95:64])
        DEST[MAXVL-1:128] unmodified

    A memory SRC must be 16-byte aligned (#GP(0)).
    """
    _legacy_each(cpu, dest, src, 64, lambda a, b: signed(a, 32) * signed(b, 32))


def vpmuludq(cpu: X86Context, dest, src1, src2) -> None:
    """Multiply the unsigned low dwords of each qword into a 64-bit product (VEX: AVX/AVX2; EVEX: AVX512F,
    under a write mask, SRC2 may be a qword broadcast).

        FOR j := 0 TO VL/64 - 1
            IF k1[j] OR *no writemask*: DEST.qword[j] := ZeroExtend(SRC1[64j+31:64j]) * ZeroExtend(SRC2[64j+31:64j])
            ELSE IF *zeroing*: DEST.qword[j] := 0     (else unchanged: merging)
        DEST[MAXVL-1:VL] := 0
    """
    _each(cpu, dest, (src1, src2), 64, lambda a, b: (a & LOW32) * (b & LOW32))


def vpmuldq(cpu: X86Context, dest, src1, src2) -> None:
    """Multiply the signed low dwords of each qword into a 64-bit product (VEX: AVX/AVX2; EVEX: AVX512F,
    under a write mask, SRC2 may be a qword broadcast).

        FOR j := 0 TO VL/64 - 1
            IF k1[j] OR *no writemask*: DEST.qword[j] := SignExtend(SRC1[64j+31:64j]) * SignExtend(SRC2[64j+31:64j])
            ELSE IF *zeroing*: DEST.qword[j] := 0     (else unchanged: merging)
        DEST[MAXVL-1:VL] := 0
    """
    _each(cpu, dest, (src1, src2), 64, lambda a, b: signed(a, 32) * signed(b, 32))


def vpmullq(cpu: X86Context, dest, src1, src2) -> None:
    """Multiply packed qwords, keeping the low 64 bits of each 128-bit product (EVEX: AVX512DQ, AVX512VL below
    512 bits, under a write mask, SRC2 may be a qword broadcast).

        FOR j := 0 TO VL/64 - 1
            IF k1[j] OR *no writemask*:
                Temp[127:0] := SRC1.qword[j] * SRC2.qword[j]
                DEST.qword[j] := Temp[63:0]
            ELSE IF *zeroing*: DEST.qword[j] := 0     (else unchanged: merging)
        DEST[MAXVL-1:VL] := 0
    """
    _each(cpu, dest, (src1, src2), 64, lambda a, b: a * b)


# ---------------------------------------------------------------------------
# Word shuffles of one half of each 128-bit lane
# ---------------------------------------------------------------------------


def _shuffle_half(bits: int, value: int, imm: int, high: bool) -> int:
    words = elements(value, 16, bits // 16)
    out = list(words)
    for lane in range(0, len(words), 8):
        base = lane + (4 if high else 0)
        for j in range(4):
            out[base + j] = words[base + (imm >> 2 * j & 3)]
    return pack(out, 16)


def pshuflw(cpu: X86Context, dest, src, imm8) -> None:
    """Shuffle the low four words of SRC by imm8, copy the high qword (SSE2).

        FOR j := 0 TO 3: DEST.word[j] := SRC.word[imm8[2j+1:2j]]
        DEST[127:64] := SRC[127:64]
        DEST[MAXVL-1:128] unmodified

    A memory SRC must be 16-byte aligned (#GP(0)).
    """
    write_legacy(cpu, dest, _shuffle_half(128, read(cpu, src, 128), imm8.value & 0xFF, False))


def pshufhw(cpu: X86Context, dest, src, imm8) -> None:
    """Shuffle the high four words of SRC by imm8, copy the low qword (SSE2).

        DEST[63:0] := SRC[63:0]
        FOR j := 0 TO 3: DEST.word[4+j] := SRC.word[4 + imm8[2j+1:2j]]
        DEST[MAXVL-1:128] unmodified

    A memory SRC must be 16-byte aligned (#GP(0)).
    """
    write_legacy(cpu, dest, _shuffle_half(128, read(cpu, src, 128), imm8.value & 0xFF, True))


def vpshuflw(cpu: X86Context, dest, src, imm8) -> None:
    """Shuffle the low four words of each 128-bit lane by imm8, copy each lane's high qword (VEX: AVX/AVX2;
    EVEX: AVX512BW, under a write mask of words).

        FOR each 128-bit lane l:
            FOR j := 0 TO 3: TMP.word[8l+j] := SRC.word[8l + imm8[2j+1:2j]]
            TMP[128l+127:128l+64] := SRC[128l+127:128l+64]
        FOR j := 0 TO VL/16 - 1
            IF k1[j] OR *no writemask*: DEST.word[j] := TMP.word[j]
            ELSE IF *zeroing*: DEST.word[j] := 0     (else unchanged: merging)
        DEST[MAXVL-1:VL] := 0
    """
    imm = imm8.value & 0xFF
    _whole(cpu, dest, (src,), 16, lambda bits, value: _shuffle_half(bits, value, imm, False))


def vpshufhw(cpu: X86Context, dest, src, imm8) -> None:
    """Shuffle the high four words of each 128-bit lane by imm8, copy each lane's low qword (VEX: AVX/AVX2;
    EVEX: AVX512BW, under a write mask of words).

        FOR each 128-bit lane l:
            TMP[128l+63:128l] := SRC[128l+63:128l]
            FOR j := 0 TO 3: TMP.word[8l+4+j] := SRC.word[8l + 4 + imm8[2j+1:2j]]
        FOR j := 0 TO VL/16 - 1
            IF k1[j] OR *no writemask*: DEST.word[j] := TMP.word[j]
            ELSE IF *zeroing*: DEST.word[j] := 0     (else unchanged: merging)
        DEST[MAXVL-1:VL] := 0
    """
    imm = imm8.value & 0xFF
    _whole(cpu, dest, (src,), 16, lambda bits, value: _shuffle_half(bits, value, imm, True))


# ---------------------------------------------------------------------------
# Word inserts and extracts
# ---------------------------------------------------------------------------


def _with_word(cpu: X86Context, base: int, src, imm8) -> int:
    word = read(cpu, src, 16 if isinstance(src, Mem) else vl(src)) & 0xFFFF
    position = imm8.value & 7
    return base & ~(0xFFFF << 16 * position) | word << 16 * position


def pinsrw(cpu: X86Context, dest, src, imm8) -> None:
    """Insert a word from a GPR's low 16 bits or memory into an xmm register (SSE2).

        SEL := imm8[2:0]
        DEST.word[SEL] := SRC[15:0]     (the other words unchanged)
        DEST[MAXVL-1:128] unmodified
    """
    write_legacy(cpu, dest, _with_word(cpu, read(cpu, dest, 128), src, imm8))


def vpinsrw(cpu: X86Context, dest, src1, src2, imm8) -> None:
    """Insert a word from a GPR's low 16 bits or memory into an xmm register (VEX: AVX; EVEX: AVX512BW).

        SEL := imm8[2:0]
        DEST[127:0] := SRC1[127:0] with DEST.word[SEL] := SRC2[15:0]
        DEST[MAXVL-1:128] := 0
    """
    write_vex(cpu, dest, _with_word(cpu, read(cpu, src1, 128), src2, imm8), 128)


def pextrw(cpu: X86Context, dest, src, imm8) -> None:
    """Extract the word imm8[2:0] of an xmm register, zero-extended, to a GPR, or to a word of memory (SSE2;
    the memory form, 66 0F 3A 15: SSE4.1).

        SEL := imm8[2:0]
        r32/r64: DEST := ZeroExtend(SRC.word[SEL])      m16: DEST := SRC.word[SEL]
    """
    _extract(cpu, dest, src, 16, imm8)


def vpextrw(cpu: X86Context, dest, src, imm8) -> None:
    """Extract the word imm8[2:0] of an xmm register, zero-extended, to a GPR, or to a word of memory (VEX: AVX;
    EVEX: AVX512BW).

        SEL := imm8[2:0]
        r32/r64: DEST := ZeroExtend(SRC.word[SEL])      m16: DEST := SRC.word[SEL]
    """
    _extract(cpu, dest, src, 16, imm8)


# ---------------------------------------------------------------------------
# Immediate blends
# ---------------------------------------------------------------------------


def _blend_imm(bits: int, a: int, b: int, size: int, imm: int, period: int) -> int:
    """Element j from b where imm8[j MOD period] is set, else from a."""
    count = bits // size
    first, second = elements(a, size, count), elements(b, size, count)
    return pack([second[j] if imm >> (j % period) & 1 else first[j] for j in range(count)], size)


def pblendw(cpu: X86Context, dest, src, imm8) -> None:
    """Blend words by imm8 (SSE4.1).

        FOR j := 0 TO 7: IF imm8[j] THEN DEST.word[j] := SRC.word[j]     (else unchanged)
        DEST[MAXVL-1:128] unmodified

    A memory SRC must be 16-byte aligned (#GP(0)).
    """
    write_legacy(cpu, dest, _blend_imm(128, read(cpu, dest, 128), read(cpu, src, 128), 16, imm8.value & 0xFF, 8))


def vpblendw(cpu: X86Context, dest, src1, src2, imm8) -> None:
    """Blend words by imm8, the same imm8 in each 128-bit lane (VEX: AVX 128 bits, AVX2 256 bits).

        FOR j := 0 TO VL/16 - 1
            DEST.word[j] := IF imm8[j MOD 8] THEN SRC2.word[j] ELSE SRC1.word[j]
        DEST[MAXVL-1:VL] := 0
    """
    bits = vl(dest)
    write_vex(cpu, dest, _blend_imm(bits, read(cpu, src1, bits), read(cpu, src2, bits), 16, imm8.value & 0xFF, 8),
              bits)


def vpblendd(cpu: X86Context, dest, src1, src2, imm8) -> None:
    """Blend dwords by imm8 (VEX: AVX2).

        FOR j := 0 TO VL/32 - 1
            DEST.dword[j] := IF imm8[j] THEN SRC2.dword[j] ELSE SRC1.dword[j]
        DEST[MAXVL-1:VL] := 0
    """
    bits = vl(dest)
    write_vex(cpu, dest, _blend_imm(bits, read(cpu, src1, bits), read(cpu, src2, bits), 32, imm8.value & 0xFF, 8),
              bits)


# ---------------------------------------------------------------------------
# Byte and word permutes across the whole vector
# ---------------------------------------------------------------------------


def _permute(bits: int, index: int, table: int, size: int) -> int:
    count = bits // size
    ids, values = elements(index, size, count), elements(table, size, count)
    return pack([values[i % count] for i in ids], size)


def vpermb(cpu: X86Context, dest, index, table) -> None:
    """Permute the bytes of TABLE (SRC2) by the byte indexes of SRC1 (EVEX: AVX512_VBMI, AVX512VL below 512 bits,
    under a write mask).

        id := 3, 4 or 5 (VL 128, 256, 512: the low log2(VL/8) bits of each index byte)
        FOR j := 0 TO VL/8 - 1
            IF k1[j] OR *no writemask*: DEST.byte[j] := SRC2.byte[SRC1.byte[j][id:0]]
            ELSE IF *zeroing*: DEST.byte[j] := 0     (else unchanged: merging)
        DEST[MAXVL-1:VL] := 0
    """
    _whole(cpu, dest, (index, table), 8, lambda bits, i, t: _permute(bits, i, t, 8))


def vpermw(cpu: X86Context, dest, index, table) -> None:
    """Permute the words of TABLE (SRC2) by the word indexes of SRC1 (EVEX: AVX512BW, AVX512VL below 512 bits,
    under a write mask).

        id := 2, 3 or 4 (VL 128, 256, 512: the low log2(VL/16) bits of each index word)
        FOR j := 0 TO VL/16 - 1
            IF k1[j] OR *no writemask*: DEST.word[j] := SRC2.word[SRC1.word[j][id:0]]
            ELSE IF *zeroing*: DEST.word[j] := 0     (else unchanged: merging)
        DEST[MAXVL-1:VL] := 0
    """
    _whole(cpu, dest, (index, table), 16, lambda bits, i, t: _permute(bits, i, t, 16))


# ---------------------------------------------------------------------------
# Vector <-> opmask
# ---------------------------------------------------------------------------


_NAMES = {8: "byte", 16: "word", 32: "dword", 64: "qword"}
_FEATURES = {8: "AVX512BW", 16: "AVX512BW", 32: "AVX512DQ", 64: "AVX512DQ"}


def _to_mask(name: str, size: int):
    e = _NAMES[size]

    def semantics(cpu: X86Context, dest, src) -> None:
        bits = vl(src)
        values = elements(read(cpu, src, bits), size, bits // size)
        cpu.state.write_opmask(opmask_number(dest.name), sum((v >> (size - 1)) << j for j, v in enumerate(values)))

    semantics.__name__ = semantics.__qualname__ = name
    semantics.__doc__ = (f"Each {e}'s most significant bit into an opmask register ({_FEATURES[size]}, AVX512VL "
                         f"below 512 bits).\n\n"
                         f"        FOR j := 0 TO VL/{size} - 1: DEST[j] := SRC.{e}[j][{size - 1}]\n"
                         f"        DEST[MAX_KL-1:VL/{size}] := 0\n")
    return semantics


def _from_mask(name: str, size: int):
    e = _NAMES[size]

    def semantics(cpu: X86Context, dest, src) -> None:
        bits = vl(dest)
        mask = cpu.state.read_opmask(opmask_number(src.name))
        write_vex(cpu, dest, pack([-(mask >> j & 1) for j in range(bits // size)], size), bits)

    semantics.__name__ = semantics.__qualname__ = name
    semantics.__doc__ = (f"Each bit of an opmask register into a {e} of all ones or zeros ({_FEATURES[size]}, "
                         f"AVX512VL below 512 bits).\n\n"
                         f"        FOR j := 0 TO VL/{size} - 1: DEST.{e}[j] := IF SRC[j] THEN all ones ELSE 0\n"
                         f"        DEST[MAXVL-1:VL] := 0\n")
    return semantics


vpmovb2m = _to_mask("vpmovb2m", 8)
vpmovw2m = _to_mask("vpmovw2m", 16)
vpmovd2m = _to_mask("vpmovd2m", 32)
vpmovq2m = _to_mask("vpmovq2m", 64)
vpmovm2b = _from_mask("vpmovm2b", 8)
vpmovm2w = _from_mask("vpmovm2w", 16)
vpmovm2d = _from_mask("vpmovm2d", 32)
vpmovm2q = _from_mask("vpmovm2q", 64)



# ---------------------------------------------------------------------------
# The high halves of word products, and absolute values (g++ -O2/-O3 -march=x86-64-v3/v4's vectorised loops)
# ---------------------------------------------------------------------------


def _pair(name: str, size: int, operation, summary: str, formula: str, sse: str, evex: str, unary: bool = False):
    """The SSE form and the VEX/EVEX form of one element-wise operation on ``size``-bit elements."""
    e = {8: "byte", 16: "word", 32: "dword", 64: "qword"}[size]

    def legacy(cpu: X86Context, dest, src) -> None:
        _legacy_each(cpu, dest, src, size, (lambda _a, b: operation(b)) if unary else operation)

    def avx(cpu: X86Context, dest, *sources) -> None:
        _each(cpu, dest, sources, size, operation)

    legacy.__name__ = legacy.__qualname__ = name
    avx.__name__ = avx.__qualname__ = "v" + name
    a, b = ("SRC", "SRC") if unary else ("DEST", "SRC")
    legacy.__doc__ = (f"{summary} ({sse}).\n\n"
                      f"        FOR j := 0 TO {128 // size - 1}: DEST.{e}[j] := "
                      f"{formula.format(a=f'{a}.{e}[j]', b=f'{b}.{e}[j]')}\n"
                      f"        DEST[MAXVL-1:128] unmodified\n\n    A memory SRC must be 16-byte aligned (#GP(0)).\n")
    a, b = ("SRC", "SRC") if unary else ("SRC1", "SRC2")
    avx.__doc__ = (f"{summary} ({'VEX: AVX/AVX2; ' if evex != 'AVX512F (EVEX only)' else ''}EVEX: {evex}, AVX512VL "
                   f"below 512 bits, under a write mask).\n\n"
                   f"        FOR j := 0 TO VL/{size} - 1\n"
                   f"            IF k1[j] OR *no writemask*: DEST.{e}[j] := "
                   f"{formula.format(a=f'{a}.{e}[j]', b=f'{b}.{e}[j]')}\n"
                   f"            ELSE IF *zeroing*: DEST.{e}[j] := 0     (else unchanged: merging)\n"
                   f"        DEST[MAXVL-1:VL] := 0\n")
    return legacy, avx


pmulhw, vpmulhw = _pair("pmulhw", 16, lambda a, b: signed(a, 16) * signed(b, 16) >> 16,
                        "Multiply packed signed words, keeping the high 16 bits of each 32-bit product",
                        "(SignExtend({a}) * SignExtend({b}))[31:16]", "SSE2", "AVX512BW")
pmulhuw, vpmulhuw = _pair("pmulhuw", 16, lambda a, b: a * b >> 16,
                          "Multiply packed unsigned words, keeping the high 16 bits of each 32-bit product",
                          "(ZeroExtend({a}) * ZeroExtend({b}))[31:16]", "SSE2", "AVX512BW")
pabsb, vpabsb = _pair("pabsb", 8, lambda x: abs(signed(x, 8)), "Absolute value of packed signed bytes (80H stays 80H)",
                      "ABS({b})", "SSSE3", "AVX512BW", unary=True)
pabsw, vpabsw = _pair("pabsw", 16, lambda x: abs(signed(x, 16)),
                      "Absolute value of packed signed words (8000H stays 8000H)", "ABS({b})", "SSSE3", "AVX512BW",
                      unary=True)
pabsd, vpabsd = _pair("pabsd", 32, lambda x: abs(signed(x, 32)),
                      "Absolute value of packed signed dwords (80000000H stays 80000000H)", "ABS({b})", "SSSE3",
                      "AVX512F", unary=True)
_, vpabsq = _pair("pabsq", 64, lambda x: abs(signed(x, 64)),
                  "Absolute value of packed signed qwords (8000000000000000H stays)", "ABS({b})", "-",
                  "AVX512F (EVEX only)", unary=True)
vpabsq.__doc__ = vpabsq.__doc__.replace("EVEX: AVX512F (EVEX only)", "EVEX: AVX512F")

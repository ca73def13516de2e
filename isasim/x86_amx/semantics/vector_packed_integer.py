"""Packed integers (issue 27: what the auto-vectoriser emits for integer loops, legacy SSE2 at the x86-64 baseline
and VEX/EVEX above it): add and subtract, logic, minimum and maximum, compares, shifts, byte shifts, shuffles,
unpacks, saturating packs, multiplies, and the AVX2/AVX-512 permutes, aligns and down-conversions.  Each function
is its form's explain text; forms/vector.py declares the forms.
"""

from __future__ import annotations

from ..context import X86Context
from ..operands import Imm, Mem, Reg
from ..operands.masking import Masked, opmask_number, unmasked
from .vector import active, elements, pack, read, read_selected, signed, vl, write_legacy, write_masked, write_vex
from .vector_arithmetic import _each, _saturate, _shift_count, _widen
from .vector_single import LOW32, _horizontal, _legacy_each, _legacy_whole, _unpack_forms, _whole


# ---------------------------------------------------------------------------
# Packed integers (issue 27: what the auto-vectoriser emits for integer loops, legacy SSE2 at the x86-64
# baseline and VEX/EVEX above it): add and subtract, logic, compares, shifts, byte shifts, shuffles, unpacks,
# saturating packs, multiplies, and the AVX2/AVX-512 permutes, aligns and down-conversions.
# ---------------------------------------------------------------------------

_SIZE_NAMES = {8: "byte", 16: "word", 32: "dword", 64: "qword"}


def _integer_pair(name: str, size: int, operation, summary: str, formula: str, evex: str,
                  sse: str = "SSE2"):
    """The SSE form (PNAME xmm1, xmm2/m128) and the VEX/EVEX form (VPNAME dest {k1}{z}, src1, src2) of one
    element-wise integer operation on ``size``-bit elements (results wrap to their size)."""
    e = _SIZE_NAMES[size]

    def legacy(cpu: X86Context, dest, src) -> None:
        _legacy_each(cpu, dest, src, size, operation)

    def avx(cpu: X86Context, dest, src1, src2) -> None:
        _each(cpu, dest, (src1, src2), size, operation)

    legacy.__name__ = legacy.__qualname__ = name
    avx.__name__ = avx.__qualname__ = "v" + name
    legacy.__doc__ = (f"{summary} ({sse}).\n\n"
                      f"        FOR j := 0 TO {128 // size - 1}: DEST.{e}[j] := "
                      f"{formula.format(a=f'DEST.{e}[j]', b=f'SRC.{e}[j]')}\n"
                      f"        DEST[MAXVL-1:128] unmodified\n\n    A memory SRC must be 16-byte aligned (#GP(0)).\n")
    avx.__doc__ = (f"{summary} (VEX: AVX/AVX2; EVEX: {evex}, under a write mask).\n\n"
                   f"        FOR j := 0 TO VL/{size} - 1\n"
                   f"            IF k1[j] OR *no writemask*: DEST.{e}[j] := "
                   f"{formula.format(a=f'SRC1.{e}[j]', b=f'SRC2.{e}[j]')}\n"
                   f"            ELSE IF *zeroing*: DEST.{e}[j] := 0     (else unchanged: merging)\n"
                   f"        DEST[MAXVL-1:VL] := 0\n")
    return legacy, avx


paddb, vpaddb = _integer_pair("paddb", 8, lambda a, b: a + b, "Add packed bytes, wrapping", "{a} + {b}", "AVX512BW")
paddw, vpaddw = _integer_pair("paddw", 16, lambda a, b: a + b, "Add packed words, wrapping", "{a} + {b}", "AVX512BW")
paddd, _ = _integer_pair("paddd", 32, lambda a, b: a + b, "Add packed dwords, wrapping", "{a} + {b}", "AVX512F")
paddq, vpaddq = _integer_pair("paddq", 64, lambda a, b: a + b, "Add packed qwords, wrapping", "{a} + {b}", "AVX512F")
psubb, vpsubb = _integer_pair("psubb", 8, lambda a, b: a - b, "Subtract packed bytes, wrapping", "{a} - {b}",
                              "AVX512BW")
psubw, vpsubw = _integer_pair("psubw", 16, lambda a, b: a - b, "Subtract packed words, wrapping", "{a} - {b}",
                              "AVX512BW")
psubd, _ = _integer_pair("psubd", 32, lambda a, b: a - b, "Subtract packed dwords, wrapping", "{a} - {b}", "AVX512F")
psubq, vpsubq = _integer_pair("psubq", 64, lambda a, b: a - b, "Subtract packed qwords, wrapping", "{a} - {b}",
                              "AVX512F")
pand, _ = _integer_pair("pand", 64, lambda a, b: a & b, "Bitwise AND of 128 bits", "{a} BITWISE AND {b}", "-")
por, _ = _integer_pair("por", 64, lambda a, b: a | b, "Bitwise OR of 128 bits", "{a} BITWISE OR {b}", "-")
pandn, vpandn = _integer_pair("pandn", 64, lambda a, b: ~a & b, "Bitwise AND NOT", "(NOT {a}) BITWISE AND {b}", "-")
pmullw, vpmullw = _integer_pair("pmullw", 16, lambda a, b: signed(a, 16) * signed(b, 16),
                                "Multiply packed signed words, keeping the low 16 bits of each product",
                                "LOW16({a} * {b})", "AVX512BW")
pmulld, _ = _integer_pair("pmulld", 32, lambda a, b: signed(a, 32) * signed(b, 32),
                          "Multiply packed signed dwords, keeping the low 32 bits of each product",
                          "LOW32({a} * {b})", "AVX512F", sse="SSE4.1")
pmaddwd, _ = _integer_pair("pmaddwd", 32, lambda a, b: signed(a, 16) * signed(b, 16)
                           + signed(a >> 16, 16) * signed(b >> 16, 16),
                           "Multiply signed words and add adjacent pairs into dwords, wrapping",
                           "{a}.word[1]*{b}.word[1] + {a}.word[0]*{b}.word[0]", "AVX512BW")
pminsd, vpminsd = _integer_pair("pminsd", 32, lambda a, b: min(signed(a, 32), signed(b, 32)),
                                "Minimum of packed signed dwords", "MIN({a}, {b})", "AVX512F", sse="SSE4.1")
pmaxsd, vpmaxsd = _integer_pair("pmaxsd", 32, lambda a, b: max(signed(a, 32), signed(b, 32)),
                                "Maximum of packed signed dwords", "MAX({a}, {b})", "AVX512F", sse="SSE4.1")
pminub, vpminub = _integer_pair("pminub", 8, min, "Minimum of packed unsigned bytes", "MIN({a}, {b})", "AVX512BW")
pmaxub, vpmaxub = _integer_pair("pmaxub", 8, max, "Maximum of packed unsigned bytes", "MAX({a}, {b})", "AVX512BW")
# issue 27, round 2: the rest of the minimum/maximum family (clang's clamps of int64 values: vpminsq, vpmaxsq)
pminsb, vpminsb = _integer_pair("pminsb", 8, lambda a, b: min(signed(a, 8), signed(b, 8)),
                                "Minimum of packed signed bytes", "MIN({a}, {b})", "AVX512BW", sse="SSE4.1")
pmaxsb, vpmaxsb = _integer_pair("pmaxsb", 8, lambda a, b: max(signed(a, 8), signed(b, 8)),
                                "Maximum of packed signed bytes", "MAX({a}, {b})", "AVX512BW", sse="SSE4.1")
pminsw, vpminsw = _integer_pair("pminsw", 16, lambda a, b: min(signed(a, 16), signed(b, 16)),
                                "Minimum of packed signed words", "MIN({a}, {b})", "AVX512BW")
pmaxsw, vpmaxsw = _integer_pair("pmaxsw", 16, lambda a, b: max(signed(a, 16), signed(b, 16)),
                                "Maximum of packed signed words", "MAX({a}, {b})", "AVX512BW")
pminuw, vpminuw = _integer_pair("pminuw", 16, min, "Minimum of packed unsigned words", "MIN({a}, {b})", "AVX512BW",
                                sse="SSE4.1")
pmaxuw, vpmaxuw = _integer_pair("pmaxuw", 16, max, "Maximum of packed unsigned words", "MAX({a}, {b})", "AVX512BW",
                                sse="SSE4.1")
pminud, vpminud = _integer_pair("pminud", 32, min, "Minimum of packed unsigned dwords", "MIN({a}, {b})", "AVX512F",
                                sse="SSE4.1")
pmaxud, vpmaxud = _integer_pair("pmaxud", 32, max, "Maximum of packed unsigned dwords", "MAX({a}, {b})", "AVX512F",
                                sse="SSE4.1")
_, vpminsq = _integer_pair("pminsq", 64, lambda a, b: min(signed(a, 64), signed(b, 64)),
                           "Minimum of packed signed qwords", "MIN({a}, {b})", "AVX512F")
_, vpmaxsq = _integer_pair("pmaxsq", 64, lambda a, b: max(signed(a, 64), signed(b, 64)),
                           "Maximum of packed signed qwords", "MAX({a}, {b})", "AVX512F")
_, vpminuq = _integer_pair("pminuq", 64, min, "Minimum of packed unsigned qwords", "MIN({a}, {b})",
                           "AVX512F")
_, vpmaxuq = _integer_pair("pmaxuq", 64, max, "Maximum of packed unsigned qwords", "MAX({a}, {b})",
                           "AVX512F")
for _qword in (vpminsq, vpmaxsq, vpminuq, vpmaxuq):  # EVEX only: no VEX row
    _qword.__doc__ = _qword.__doc__.replace("VEX: AVX/AVX2; EVEX: AVX512F", "EVEX: AVX512F, AVX512VL below 512 bits")
pavgb, vpavgb = _integer_pair("pavgb", 8, lambda a, b: (a + b + 1) >> 1, "Average of packed unsigned bytes, rounded up",
                              "({a} + {b} + 1) >> 1", "AVX512BW")


def _compare_forms(name: str, size: int, relation, text: str, sse: str = "SSE2"):
    """PCMPxx (SSE), VPCMPxx (VEX: a vector of all-ones or zero elements; EVEX: a mask in an opmask register,
    ANDed with k2 when one is given)."""
    e = _SIZE_NAMES[size]
    test = lambda a, b: relation(a, b, size)  # noqa: E731

    def legacy(cpu: X86Context, dest, src) -> None:
        _legacy_each(cpu, dest, src, size, lambda a, b: -1 if test(a, b) else 0)

    def avx(cpu: X86Context, dest, src1, src2) -> None:
        target = unmasked(dest)
        if isinstance(target, Reg) and opmask_number(target.name) is not None:
            bits = vl(src1)
            count = bits // size
            mask = active(cpu, dest, count)
            a = elements(read(cpu, src1, bits), size, count)
            b = elements(read_selected(cpu, src2, bits, size, mask), size, count)
            result = sum(1 << j for j in range(count) if mask >> j & 1 and test(a[j], b[j]))
            cpu.state.write_opmask(opmask_number(target.name), result)
            return
        _each(cpu, dest, (src1, src2), size, lambda a, b: -1 if test(a, b) else 0)

    legacy.__name__ = legacy.__qualname__ = name
    avx.__name__ = avx.__qualname__ = "v" + name
    legacy.__doc__ = (f"Compare packed {e}s for {text} ({sse}).\n\n"
                      f"        FOR j := 0 TO {128 // size - 1}: DEST.{e}[j] := IF DEST.{e}[j] {text} SRC.{e}[j] "
                      f"THEN all ones ELSE 0\n        DEST[MAXVL-1:128] unmodified\n")
    avx.__doc__ = (f"Compare packed {e}s for {text} (VEX: AVX/AVX2, into a vector; EVEX: AVX-512, into an "
                   f"opmask register).\n\n"
                   f"        VEX:  FOR j: DEST.{e}[j] := IF SRC1.{e}[j] {text} SRC2.{e}[j] THEN all ones ELSE 0;  "
                   f"DEST[MAXVL-1:VL] := 0\n"
                   f"        EVEX: FOR j: k1[j] := IF (k2[j] OR *no writemask*) AND SRC1.{e}[j] {text} SRC2.{e}[j] "
                   f"THEN 1 ELSE 0;  k1[MAX_KL-1:VL/{size}] := 0\n")
    return legacy, avx


_equal = lambda a, b, size: a == b  # noqa: E731
_greater = lambda a, b, size: signed(a, size) > signed(b, size)  # noqa: E731
pcmpeqb, vpcmpeqb = _compare_forms("pcmpeqb", 8, _equal, "equality")
pcmpeqw, vpcmpeqw = _compare_forms("pcmpeqw", 16, _equal, "equality")
pcmpeqd, vpcmpeqd = _compare_forms("pcmpeqd", 32, _equal, "equality")
pcmpgtb, vpcmpgtb = _compare_forms("pcmpgtb", 8, _greater, "signed greater than (>)")
pcmpgtw, vpcmpgtw = _compare_forms("pcmpgtw", 16, _greater, "signed greater than (>)")
pcmpgtd, vpcmpgtd = _compare_forms("pcmpgtd", 32, _greater, "signed greater than (>)")


def _shift(size: int, kind: str, n: int):
    if kind == "left":
        return lambda a: 0 if n >= size else a << n
    if kind == "logical":
        return lambda a: 0 if n >= size else a >> n
    return lambda a: signed(a, size) >> min(n, size - 1)


def _shift_forms(name: str, size: int, kind: str):
    """PSxx (SSE2: by imm8 or xmm/m128's low qword) and VPSxx (VEX/EVEX) of ``size``-bit elements."""
    e = _SIZE_NAMES[size]

    def legacy(cpu: X86Context, dest, count) -> None:
        shift = _shift(size, kind, _shift_count(cpu, count))
        _legacy_each(cpu, dest, dest, size, lambda a, _b: shift(a))

    def avx(cpu: X86Context, dest, src, count) -> None:
        _each(cpu, dest, (src,), size, _shift(size, kind, _shift_count(cpu, count)))

    rule = {"left": f"IF COUNT > {size - 1} THEN 0 ELSE {{x}} << COUNT",
            "logical": f"IF COUNT > {size - 1} THEN 0 ELSE {{x}} >> COUNT   (zeros in)",
            "arithmetic": f"SignExtend({{x}}) >> MIN(COUNT, {size - 1})   (sign bits in)"}[kind]
    legacy.__name__ = legacy.__qualname__ = name
    avx.__name__ = avx.__qualname__ = "v" + name
    legacy.__doc__ = (f"Shift packed {e}s {'left' if kind == 'left' else 'right, ' + kind + 'ly'} by an imm8 or by "
                      f"COUNT[63:0] of an xmm register or m128 (SSE2).\n\n"
                      f"        FOR j := 0 TO {128 // size - 1}: DEST.{e}[j] := {rule.format(x=f'DEST.{e}[j]')}\n"
                      f"        DEST[MAXVL-1:128] unmodified\n")
    avx.__doc__ = (f"Shift packed {e}s {'left' if kind == 'left' else 'right, ' + kind + 'ly'} by an imm8 or by "
                   f"COUNT[63:0] (VEX: AVX/AVX2; EVEX: AVX-512, under a write mask).\n\n"
                   f"        FOR j: IF k1[j] OR *no writemask*: DEST.{e}[j] := {rule.format(x=f'SRC.{e}[j]')}\n"
                   f"               ELSE IF *zeroing*: DEST.{e}[j] := 0     (else unchanged)\n"
                   f"        DEST[MAXVL-1:VL] := 0\n")
    return legacy, avx


psllw, vpsllw = _shift_forms("psllw", 16, "left")
pslld, _ = _shift_forms("pslld", 32, "left")
psllq, vpsllq = _shift_forms("psllq", 64, "left")
psrlw, vpsrlw = _shift_forms("psrlw", 16, "logical")
psrld, _ = _shift_forms("psrld", 32, "logical")
psrlq, vpsrlq = _shift_forms("psrlq", 64, "logical")
psraw, vpsraw = _shift_forms("psraw", 16, "arithmetic")
psrad, _ = _shift_forms("psrad", 32, "arithmetic")


def _byte_shift(bits: int, value: int, n: int, left: bool) -> int:
    out = 0
    for lane in range(bits // 128):
        x = value >> (128 * lane) & ((1 << 128) - 1)
        y = 0 if n > 15 else (x << 8 * n if left else x >> 8 * n) & ((1 << 128) - 1)
        out |= y << (128 * lane)
    return out


def pslldq(cpu: X86Context, dest, imm8) -> None:
    """Shift 128 bits left by imm8 bytes, zeros in (SSE2).

        TEMP := MIN(imm8, 16);  DEST[127:0] := DEST[127:0] << (TEMP * 8);  DEST[MAXVL-1:128] unmodified
    """
    write_legacy(cpu, dest, _byte_shift(128, read(cpu, dest, 128), imm8.value & 0xFF, True))


def psrldq(cpu: X86Context, dest, imm8) -> None:
    """Shift 128 bits right by imm8 bytes, zeros in (SSE2).

        TEMP := MIN(imm8, 16);  DEST[127:0] := DEST[127:0] >> (TEMP * 8);  DEST[MAXVL-1:128] unmodified
    """
    write_legacy(cpu, dest, _byte_shift(128, read(cpu, dest, 128), imm8.value & 0xFF, False))


def vpslldq(cpu: X86Context, dest, src, imm8) -> None:
    """Shift each 128-bit lane left by imm8 bytes, zeros in (VEX: AVX/AVX2; EVEX: AVX512BW; no write mask).

        FOR each 128-bit lane: DEST.lane := SRC.lane << (MIN(imm8, 16) * 8);  DEST[MAXVL-1:VL] := 0
    """
    bits = vl(dest)
    write_vex(cpu, dest, _byte_shift(bits, read(cpu, src, bits), imm8.value & 0xFF, True), bits)


def vpsrldq(cpu: X86Context, dest, src, imm8) -> None:
    """Shift each 128-bit lane right by imm8 bytes, zeros in (VEX: AVX/AVX2; EVEX: AVX512BW; no write mask).

        FOR each 128-bit lane: DEST.lane := SRC.lane >> (MIN(imm8, 16) * 8);  DEST[MAXVL-1:VL] := 0
    """
    bits = vl(dest)
    write_vex(cpu, dest, _byte_shift(bits, read(cpu, src, bits), imm8.value & 0xFF, False), bits)


def pshufd(cpu: X86Context, dest, src, imm8) -> None:
    """Shuffle the dwords of SRC by imm8 (SSE2).

        FOR j := 0 TO 3: DEST.dword[j] := SRC.dword[imm8[2j+1:2j]]
        DEST[MAXVL-1:128] unmodified

    A memory SRC must be 16-byte aligned (#GP(0)).
    """
    table = elements(read(cpu, src, 128), 32, 4)
    order = imm8.value & 0xFF
    write_legacy(cpu, dest, pack([table[order >> 2 * j & 3] for j in range(4)], 32))


def _integer_unpacks():
    out = {}
    for size, letter in ((8, "bw"), (16, "wd"), (32, "dq"), (64, "qdq")):
        for high, part in ((0, "l"), (1, "h")):
            name = f"punpck{part}{letter}"
            evex = "AVX512BW" if size <= 16 else "AVX512F"
            out[name], out["v" + name] = _unpack_forms(name, size, high, "SSE2", evex, f"{_SIZE_NAMES[size]}s")
    return out


_unpacks = _integer_unpacks()
punpcklbw, vpunpcklbw, punpckhbw, vpunpckhbw = (_unpacks[n] for n in ("punpcklbw", "vpunpcklbw", "punpckhbw",
                                                                       "vpunpckhbw"))
punpcklwd, punpckhwd = _unpacks["punpcklwd"], _unpacks["punpckhwd"]
punpckldq, vpunpckldq, punpckhdq, vpunpckhdq = (_unpacks[n] for n in ("punpckldq", "vpunpckldq", "punpckhdq",
                                                                       "vpunpckhdq"))
punpcklqdq, vpunpcklqdq, punpckhqdq, vpunpckhqdq = (_unpacks[n] for n in ("punpcklqdq", "vpunpcklqdq",
                                                                           "punpckhqdq", "vpunpckhqdq"))


def _pack_lanes(bits: int, a: int, b: int, size: int, is_signed: bool) -> int:
    """Per 128-bit lane: A's signed ``size``-bit elements saturated to size/2 bits, then B's."""
    per = 128 // size
    out = []
    for lane in range(bits // 128):
        for source in (a, b):
            out += [_saturate(signed(x, size), size // 2, is_signed) for x in elements(source >> (128 * lane), size, per)]
    return pack(out, size // 2)


def _pack_forms(name: str, size: int, is_signed: bool, sse: str, evex: str):
    narrow = _SIZE_NAMES[size // 2]
    rule = f"Saturate{'Signed' if is_signed else 'Unsigned'}{_SIZE_NAMES[size].capitalize()}To" \
           f"{'Signed' if is_signed else 'Unsigned'}{narrow.capitalize()}"

    def legacy(cpu: X86Context, dest, src) -> None:
        _legacy_whole(cpu, dest, (dest, src), lambda bits, a, b: _pack_lanes(bits, a, b, size, is_signed))

    def avx(cpu: X86Context, dest, src1, src2) -> None:
        _whole(cpu, dest, (src1, src2), size // 2, lambda bits, a, b: _pack_lanes(bits, a, b, size, is_signed))

    legacy.__name__ = legacy.__qualname__ = name
    avx.__name__ = avx.__qualname__ = "v" + name
    what = f"signed {_SIZE_NAMES[size]}s to {'signed' if is_signed else 'unsigned'} {narrow}s with saturation"
    legacy.__doc__ = (f"Pack {what} ({sse}).\n\n"
                      f"        DEST.{narrow}[0..{128 // size - 1}] := {rule}(DEST.{_SIZE_NAMES[size]}[0..{128 // size - 1}])\n"
                      f"        DEST.{narrow}[{128 // size}..{256 // size - 1}] := {rule}(SRC.{_SIZE_NAMES[size]}"
                      f"[0..{128 // size - 1}])\n        DEST[MAXVL-1:128] unmodified\n")
    avx.__doc__ = (f"Pack {what}, per 128-bit lane (VEX: AVX/AVX2; EVEX: {evex}, under a write mask).\n\n"
                   f"        FOR each 128-bit lane: DEST.lane := {rule}(SRC1.lane), then {rule}(SRC2.lane)\n"
                   f"        (each {narrow} under the write mask);  DEST[MAXVL-1:VL] := 0\n")
    return legacy, avx


packsswb, vpacksswb = _pack_forms("packsswb", 16, True, "SSE2", "AVX512BW")
packssdw, vpackssdw = _pack_forms("packssdw", 32, True, "SSE2", "AVX512BW")
packuswb, vpackuswb = _pack_forms("packuswb", 16, False, "SSE2", "AVX512BW")
packusdw, vpackusdw = _pack_forms("packusdw", 32, False, "SSE4.1", "AVX512BW")


def _phadd(bits: int, a: int, b: int) -> int:
    return _horizontal(bits, a, b, 32, lambda x, y: (x + y) & LOW32)


def phaddd(cpu: X86Context, dest, src) -> None:
    """Add horizontal pairs of dwords, wrapping (SSSE3).

        DEST.dword[0] := DEST.dword[0] + DEST.dword[1];  DEST.dword[1] := DEST.dword[2] + DEST.dword[3]
        DEST.dword[2] := SRC.dword[0] + SRC.dword[1];    DEST.dword[3] := SRC.dword[2] + SRC.dword[3]
        DEST[MAXVL-1:128] unmodified
    """
    _legacy_whole(cpu, dest, (dest, src), _phadd)


def vphaddd(cpu: X86Context, dest, src1, src2) -> None:
    """Add horizontal pairs of dwords in each 128-bit lane, wrapping (VEX: AVX/AVX2).

        FOR each 128-bit lane:
            DEST.dword[0] := SRC1.dword[0] + SRC1.dword[1];  DEST.dword[1] := SRC1.dword[2] + SRC1.dword[3]
            DEST.dword[2] := SRC2.dword[0] + SRC2.dword[1];  DEST.dword[3] := SRC2.dword[2] + SRC2.dword[3]
        DEST[MAXVL-1:VL] := 0
    """
    bits = vl(dest)
    write_vex(cpu, dest, _phadd(bits, read(cpu, src1, bits), read(cpu, src2, bits)), bits)


def pshufb(cpu: X86Context, dest, src) -> None:
    """Shuffle the bytes of DEST by the indices in SRC (SSSE3).

        FOR j := 0 TO 15: DEST.byte[j] := IF SRC.byte[j][7] THEN 0 ELSE DEST_OLD.byte[SRC.byte[j][3:0]]
        DEST[MAXVL-1:128] unmodified
    """
    def shuffle(bits, a, b):
        table = elements(a, 8, 16)
        return pack([0 if s & 0x80 else table[s & 0xF] for s in elements(b, 8, 16)], 8)

    _legacy_whole(cpu, dest, (dest, src), shuffle)


def _permq_imm(bits: int, value: int, imm: int) -> int:
    q = elements(value, 64, bits // 64)
    return pack([q[j // 4 * 4 + (imm >> 2 * (j % 4) & 3)] for j in range(bits // 64)], 64)


def vpermq(cpu: X86Context, dest, src1, src2=None) -> None:
    """Permute qwords: by imm8 within each 256-bit half (VEX ymm: AVX2; EVEX: AVX512F), or by the indices of a
    vector (EVEX: VPERMQ dest, index, src), under a write mask.

        imm8:  FOR j: DEST.qword[j] := SRC.qword[4*(j DIV 4) + imm8[2*(j MOD 4)+1 : 2*(j MOD 4)]]
        index: FOR j: DEST.qword[j] := SRC.qword[INDEX.qword[j] MOD (VL/64)]
        (each qword under the write mask);  DEST[MAXVL-1:VL] := 0
    """
    if isinstance(src2, Imm):
        _whole(cpu, dest, (src1,), 64, lambda bits, v: _permq_imm(bits, v, src2.value & 0xFF))
        return
    bits = vl(dest)
    count = bits // 64
    table = elements(read(cpu, src2, bits), 64, count)
    _each(cpu, dest, (src1,), 64, lambda i: table[i % count])


def _permute2(cpu: X86Context, dest, index, first, second, size: int) -> None:
    """DEST element j := (FIRST, SECOND)[bit log2(n) of index j][index j MOD n] under DEST's write mask."""
    bits = vl(dest)
    count = bits // size
    mask = active(cpu, dest, count)
    a = elements(read(cpu, first, bits), size, count)
    b = elements(read_selected(cpu, second, bits, size, (1 << count) - 1 if mask else 0), size, count)
    indices = elements(read(cpu, index, bits), size, count)
    write_masked(cpu, dest, pack([(b if i & count else a)[i % count] for i in indices], size), bits, size)


def vpermt2b(cpu: X86Context, dest, index, table) -> None:
    """Permute bytes from two tables, DEST (the first, overwritten) and SRC3, by the indices in SRC2
    (AVX512_VBMI; AVX512VL below 512 bits), under a write mask.

        FOR j := 0 TO VL/8 - 1:  i := SRC2.byte[j]
            DEST.byte[j] := IF i[log2(VL/8)] = 0 THEN DEST.byte[i MOD VL/8] ELSE SRC3.byte[i MOD VL/8]
        (each byte under the write mask);  DEST[MAXVL-1:VL] := 0
    """
    _permute2(cpu, dest, index, unmasked(dest), table, 8)


def vpermi2b(cpu: X86Context, dest, first, second) -> None:
    """Permute bytes from two tables, SRC2 and SRC3, by the indices in DEST (overwritten) (AVX512_VBMI),
    under a write mask.

        FOR j := 0 TO VL/8 - 1:  i := DEST.byte[j]
            DEST.byte[j] := IF i[log2(VL/8)] = 0 THEN SRC2.byte[i MOD VL/8] ELSE SRC3.byte[i MOD VL/8]
        (each byte under the write mask);  DEST[MAXVL-1:VL] := 0
    """
    _permute2(cpu, dest, unmasked(dest), first, second, 8)


def vpermi2w(cpu: X86Context, dest, first, second) -> None:
    """Permute words from two tables, SRC2 and SRC3, by the indices in DEST (overwritten) (AVX512BW), under a
    write mask.

        FOR j := 0 TO VL/16 - 1:  i := DEST.word[j]
            DEST.word[j] := IF i[log2(VL/16)] = 0 THEN SRC2.word[i MOD VL/16] ELSE SRC3.word[i MOD VL/16]
        (each word under the write mask);  DEST[MAXVL-1:VL] := 0
    """
    _permute2(cpu, dest, unmasked(dest), first, second, 16)


def vpermt2d(cpu: X86Context, dest, index, table) -> None:
    """Permute dwords from two tables, DEST (the first, overwritten) and SRC3, by the indices in SRC2
    (AVX512F), under a write mask.

        FOR j := 0 TO VL/32 - 1:  i := SRC2.dword[j]
            DEST.dword[j] := IF i[log2(VL/32)] = 0 THEN DEST.dword[i MOD VL/32] ELSE SRC3.dword[i MOD VL/32]
        (each dword under the write mask);  DEST[MAXVL-1:VL] := 0
    """
    _permute2(cpu, dest, index, unmasked(dest), table, 32)


def _align(bits: int, a: int, b: int, size: int, imm: int) -> int:
    count = bits // size
    joined = b | a << bits  # SRC1:SRC2, SRC2 in the low half
    return joined >> (size * (imm % count)) & ((1 << bits) - 1)


def valignd(cpu: X86Context, dest, src1, src2, imm8) -> None:
    """Shift the concatenation SRC1:SRC2 right by imm8 dwords and keep the low VL bits (AVX512F), under a
    write mask.

        TEMP := (SRC1[VL-1:0] << VL) OR SRC2[VL-1:0];  n := imm8 MOD (VL/32)
        FOR j: DEST.dword[j] := TEMP.dword[j + n]     (under the write mask);  DEST[MAXVL-1:VL] := 0
    """
    _whole(cpu, dest, (src1, src2), 32, lambda bits, a, b: _align(bits, a, b, 32, imm8.value & 0xFF))


def valignq(cpu: X86Context, dest, src1, src2, imm8) -> None:
    """Shift the concatenation SRC1:SRC2 right by imm8 qwords and keep the low VL bits (AVX512F), under a
    write mask.

        TEMP := (SRC1[VL-1:0] << VL) OR SRC2[VL-1:0];  n := imm8 MOD (VL/64)
        FOR j: DEST.qword[j] := TEMP.qword[j + n]     (under the write mask);  DEST[MAXVL-1:VL] := 0
    """
    _whole(cpu, dest, (src1, src2), 64, lambda bits, a, b: _align(bits, a, b, 64, imm8.value & 0xFF))


def _shuffle_lanes(bits: int, a: int, b: int, imm: int) -> int:
    lanes = bits // 128
    x, y = elements(a, 128, lanes), elements(b, 128, lanes)
    if lanes == 2:
        return pack([x[imm & 1], y[imm >> 1 & 1]], 128)
    return pack([x[imm & 3], x[imm >> 2 & 3], y[imm >> 4 & 3], y[imm >> 6 & 3]], 128)


def vshufi64x2(cpu: X86Context, dest, src1, src2, imm8) -> None:
    """Pick 128-bit lanes: the low half of DEST's from SRC1, the high half's from SRC2, by imm8 (AVX512F;
    ymm and zmm), as qwords under a write mask.

        zmm: DEST.lane[0] := SRC1.lane[imm8[1:0]];  DEST.lane[1] := SRC1.lane[imm8[3:2]]
             DEST.lane[2] := SRC2.lane[imm8[5:4]];  DEST.lane[3] := SRC2.lane[imm8[7:6]]
        ymm: DEST.lane[0] := SRC1.lane[imm8[0]];    DEST.lane[1] := SRC2.lane[imm8[1]]
    """
    _whole(cpu, dest, (src1, src2), 64, lambda bits, a, b: _shuffle_lanes(bits, a, b, imm8.value & 0xFF))


def vshufi32x4(cpu: X86Context, dest, src1, src2, imm8) -> None:
    """Pick 128-bit lanes as VSHUFI64X2 does, as dwords under a write mask (AVX512F; ymm and zmm).

        zmm: DEST.lane[0] := SRC1.lane[imm8[1:0]];  DEST.lane[1] := SRC1.lane[imm8[3:2]]
             DEST.lane[2] := SRC2.lane[imm8[5:4]];  DEST.lane[3] := SRC2.lane[imm8[7:6]]
        ymm: DEST.lane[0] := SRC1.lane[imm8[0]];    DEST.lane[1] := SRC2.lane[imm8[1]]
    """
    _whole(cpu, dest, (src1, src2), 32, lambda bits, a, b: _shuffle_lanes(bits, a, b, imm8.value & 0xFF))


def _down_convert(name: str, size: int, narrow: int, saturation: str, feature: str):
    """VPMOV[S|US]{size}{narrow}: each element converted to ``narrow`` bits (truncated, or saturated signed or
    unsigned) into the low part of DEST, under a write mask; a memory DEST gets only the selected elements."""
    e, n = _SIZE_NAMES[size], _SIZE_NAMES[narrow]

    def convert(x: int) -> int:
        if saturation == "signed":
            return _saturate(signed(x, size), narrow, True)
        if saturation == "unsigned":
            return _saturate(x, narrow, False)
        return x

    def semantics(cpu: X86Context, dest, src) -> None:
        bits = vl(src)
        count = bits // size
        values = [convert(x) for x in elements(read(cpu, src, bits), size, count)]
        mask = active(cpu, dest, count)
        target = unmasked(dest)
        if isinstance(target, Mem):
            write_masked(cpu, dest, pack(values, narrow), count * narrow, narrow)
            return
        old = read(cpu, target, count * narrow)
        zeroing = isinstance(dest, Masked) and dest.zeroing
        out = [v if mask >> j & 1 else (0 if zeroing else old >> (narrow * j) & ((1 << narrow) - 1))
               for j, v in enumerate(values)]
        write_vex(cpu, target, pack(out, narrow), 128 if count * narrow <= 128 else 256)

    rule = {"": f"TruncateTo{n.capitalize()}", "signed": f"SaturateSigned{e.capitalize()}ToSigned{n.capitalize()}",
            "unsigned": f"SaturateUnsigned{e.capitalize()}ToUnsigned{n.capitalize()}"}[saturation]
    semantics.__name__ = semantics.__qualname__ = name
    semantics.__doc__ = (f"Down-convert {e}s to {n}s, {'truncated' if not saturation else saturation + ' saturated'} "
                         f"({feature}; AVX512VL below 512 bits), under a write mask.\n\n"
                         f"        FOR j := 0 TO VL/{size} - 1\n"
                         f"            IF k1[j] OR *no writemask*: DEST.{n}[j] := {rule}(SRC.{e}[j])\n"
                         f"            ELSE IF *zeroing*: DEST.{n}[j] := 0     (else unchanged; memory: not written)\n"
                         f"        a register DEST: DEST[MAXVL-1:VL*{narrow}/{size}] := 0\n")
    return semantics


vpmovdb = _down_convert("vpmovdb", 32, 8, "", "AVX512F")
vpmovsdb = _down_convert("vpmovsdb", 32, 8, "signed", "AVX512F")
vpmovusdb = _down_convert("vpmovusdb", 32, 8, "unsigned", "AVX512F")
vpmovdw = _down_convert("vpmovdw", 32, 16, "", "AVX512F")
vpmovsdw = _down_convert("vpmovsdw", 32, 16, "signed", "AVX512F")
vpmovusdw = _down_convert("vpmovusdw", 32, 16, "unsigned", "AVX512F")
vpmovqd = _down_convert("vpmovqd", 64, 32, "", "AVX512F")
vpmovwb = _down_convert("vpmovwb", 16, 8, "", "AVX512BW")
vpmovswb = _down_convert("vpmovswb", 16, 8, "signed", "AVX512BW")
vpmovuswb = _down_convert("vpmovuswb", 16, 8, "unsigned", "AVX512BW")
vpmovqb = _down_convert("vpmovqb", 64, 8, "", "AVX512F")
vpmovsqb = _down_convert("vpmovsqb", 64, 8, "signed", "AVX512F")
vpmovusqb = _down_convert("vpmovusqb", 64, 8, "unsigned", "AVX512F")
vpmovqw = _down_convert("vpmovqw", 64, 16, "", "AVX512F")
vpmovsqw = _down_convert("vpmovsqw", 64, 16, "signed", "AVX512F")
vpmovusqw = _down_convert("vpmovusqw", 64, 16, "unsigned", "AVX512F")
vpmovsqd = _down_convert("vpmovsqd", 64, 32, "signed", "AVX512F")
vpmovusqd = _down_convert("vpmovusqd", 64, 32, "unsigned", "AVX512F")


def vpmovsxbq(cpu: X86Context, dest, src) -> None:
    """Sign-extend bytes to qwords (VEX: AVX/AVX2; EVEX: AVX512F, under a write mask).

        FOR j: IF k1[j] OR *no writemask*: DEST.qword[j] := SignExtend(SRC.byte[j])
               ELSE IF *zeroing*: DEST.qword[j] := 0     (else unchanged)
        DEST[MAXVL-1:VL] := 0
    """
    _widen(cpu, dest, src, 8, 64, lambda x: signed(x, 8))


def vpmovzxbq(cpu: X86Context, dest, src) -> None:
    """Zero-extend bytes to qwords (VEX: AVX/AVX2; EVEX: AVX512F, under a write mask).

        FOR j: IF k1[j] OR *no writemask*: DEST.qword[j] := ZeroExtend(SRC.byte[j])
               ELSE IF *zeroing*: DEST.qword[j] := 0     (else unchanged)
        DEST[MAXVL-1:VL] := 0
    """
    _widen(cpu, dest, src, 8, 64, lambda x: x)

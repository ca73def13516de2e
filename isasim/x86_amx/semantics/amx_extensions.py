"""The semantics of the AMX extensions Intel has published beyond AMX-TILE/INT8/BF16/FP16 (forms in
forms/amx_extensions.py), each reading like the Operation section of Intel's ISE (Architecture Instruction
Set Extensions Programming Reference); the docstring is the text ``explain`` prints.

SPEC ONLY, NO SILICON SEEN: no host with AMX-COMPLEX, AMX-FP8, AMX-TF32, AMX-MOVRS or AMX-AVX512 has run these
tests.  The oracle is the published pseudocode read independently (the Operation loops Intel publishes with
the intrinsics, the SDM's TDPFP16PS/TDPBF16PS rounding statements: docs/x86_amx/amx-extensions.md); where it
leaves a rule open the choice is a named constant (here and in numerics/fp8.py) with its default documented.

AMX-TRANSPOSE (T2RPNTLVW*, TTRANSPOSED, TTDP*, TTCMM*, TCONJ*, TTMMULTF32PS) is not here: Intel withdrew it
from the ISE (it is no longer listed for Diamond Rapids) and LLVM 22 removed it; see docs/x86_amx/amx-extensions.md.
"""

from __future__ import annotations

import numpy as np

from ...core import numerics
from ..context import X86Context
from ..faults import UD
from ..numerics import fp8 as fp8_numerics
from ..numerics import simd_fp32 as fp32
from ..numerics import tmul as tmul_numerics
from ..state import BYTES_PER_ROW, MAX_ROWS
from .amx import check_tile_valid, check_tiles_configured, check_tmul_shapes, tile_load, zero_tilecfg_start

# TCVTROW*/TILEMOVROW with a row index at or beyond tsrc.rows: the ISE's loop reads the row without a
# check; isasim raises #UD (default "ud"), the rule every other tile access follows.  "read" would return
# the row's bytes (zeros beyond the configured rows).
ROW_BEYOND_ROWS = "ud"


def _tmul_result(cpu: X86Context, tsrcdest: int, M: int, N: int, new_dwords: np.ndarray) -> None:
    """tsrcdest's dwords [:M, :N] := new_dwords; every byte beyond them := 0 (write_row_and_zero,
    zero_upper_rows); zero_tilecfg_start()."""
    image = np.zeros((MAX_ROWS, BYTES_PER_ROW), dtype=np.uint8)
    image[:M, : 4 * N] = np.ascontiguousarray(new_dwords, dtype=np.uint32).view(np.uint8).reshape(M, 4 * N)
    cpu.state.write_tile(tsrcdest, image)
    zero_tilecfg_start(cpu)


def _fp16_lanes(A: np.ndarray, B: np.ndarray, M: int, K: int, N: int) -> np.ndarray:
    """E and O of every output: two fresh fp32 lanes, FMA32 over k of A's (M, K, 2) and B's (K, N, 2) fp32."""
    lanes = np.zeros((M, N, 2), dtype=np.uint32)
    return tmul_numerics.tmul_fma32_fold(lanes, A.transpose(1, 0, 2)[:, :, None, :], B[:, None, :, :])


def _complex_product(cpu: X86Context, mnemonic: str, tsrcdest: int, tsrc1: int, tsrc2: int, imaginary: bool) -> None:
    M, K, N = check_tmul_shapes(cpu, mnemonic, tsrcdest, tsrc1, tsrc2)
    a = cpu.state.tile(tsrc1)[:M, : 4 * K].copy().view(np.uint16).reshape(M, K, 2)
    b = cpu.state.tile(tsrc2)[:K, : 4 * N].copy().view(np.uint16).reshape(K, N, 2)
    if imaginary:
        b = b[:, :, ::-1]  # E pairs a.re with b.im, O pairs a.im with b.re
    else:
        a = a.copy()
        a[:, :, 1] ^= np.uint16(CONJUGATE_SIGN_BIT)  # O pairs -a.im with b.im
    A32, B32 = numerics.fp16_to_fp32(a), numerics.fp16_to_fp32(np.ascontiguousarray(b))
    C = cpu.state.tile(tsrcdest)[:M, : 4 * N].copy().view(np.uint32)
    if COMPLEX_LANES == "sequential":  # C := FMA32(C, a, b) for each product in order: k, then E before O
        a_steps = A32.transpose(1, 2, 0).reshape(2 * K, M)[:, :, None]
        b_steps = B32.transpose(0, 2, 1).reshape(2 * K, N)[:, None, :]
        _tmul_result(cpu, tsrcdest, M, N, tmul_numerics.tmul_fma32_fold(C, np.ascontiguousarray(a_steps),
                                                                         np.ascontiguousarray(b_steps)))
        return
    lanes = _fp16_lanes(A32, B32, M, K, N)
    T = tmul_numerics.tmul_add32(lanes[..., 0], lanes[..., 1])
    _tmul_result(cpu, tsrcdest, M, N, tmul_numerics.tmul_add32(C, T))


# The lane structure of TCMMIMFP16PS/TCMMRLFP16PS.  "pair" (the default): two fresh fp32 lanes E and O per
# output, summed and then added to C, the structure the SDM gives TDPFP16PS (and Emerald Rapids silicon showed
# for TDPBF16PS), which the ISE's AMX-COMPLEX pseudocode shares as read here.  "sequential": the Intrinsics
# Guide's text (as LLVM's amxcomplexintrin.h reproduces it), every product accumulated into C in turn.
COMPLEX_LANES = "pair"


# The ISE's FP32(-a.fp16[2k+1]): the negation flips the fp16 sign bit before widening, so a NaN there
# comes out of the lane with its sign flipped too (the pseudocode negates the operand, not the product).
CONJUGATE_SIGN_BIT = 0x8000


def tcmmimfp16ps(cpu: X86Context, tsrcdest: int, tsrc1: int, tsrc2: int) -> None:
    """Complex matrix multiply, imaginary part: each dword of tmm2 (A) and tmm3 (B) is an fp16 complex number (real in bits 15:0, imaginary in 31:16); the imaginary parts of A·B accumulate into the fp32 elements of tmm1 (C).  Spec only, no silicon seen.

        for m < C.rows, n < C.colsb/4:
            E := +0.0; O := +0.0                          # two fp32 lanes, fresh for every element
            for k < A.colsb/4, in increasing k:
                E := FMA32(E, A[m].fp16[2k+0], B[k].fp16[2n+1])     # a.re * b.im
                O := FMA32(O, A[m].fp16[2k+1], B[k].fp16[2n+0])     # a.im * b.re
            C[m].fp32[n] := ADD32(C[m].fp32[n], ADD32(E, O))
        rows beyond C.rows and bytes beyond C.colsb are zeroed; zero_tilecfg_start()

    The TDPFP16PS rules: fp16 inputs widen exactly (denormals kept), FMA32 and
    ADD32 round once (RNE) with DAZ and FTZ, MXCSR is neither read nor written.
    The same #UD checks as every TMUL.  COMPLEX_LANES = "pair" in
    semantics/amx_extensions.py ("sequential": every product into C in turn).
    """
    _complex_product(cpu, "tcmmimfp16ps", tsrcdest, tsrc1, tsrc2, imaginary=True)


def tcmmrlfp16ps(cpu: X86Context, tsrcdest: int, tsrc1: int, tsrc2: int) -> None:
    """Complex matrix multiply, real part: each dword of tmm2 (A) and tmm3 (B) is an fp16 complex number (real in bits 15:0, imaginary in 31:16); the real parts of A·B accumulate into the fp32 elements of tmm1 (C).  Spec only, no silicon seen.

        for m < C.rows, n < C.colsb/4:
            E := +0.0; O := +0.0
            for k < A.colsb/4, in increasing k:
                E := FMA32(E,  A[m].fp16[2k+0], B[k].fp16[2n+0])    # a.re * b.re
                O := FMA32(O, -A[m].fp16[2k+1], B[k].fp16[2n+1])    # -(a.im) * b.im
            C[m].fp32[n] := ADD32(C[m].fp32[n], ADD32(E, O))
        rows beyond C.rows and bytes beyond C.colsb are zeroed; zero_tilecfg_start()

    The rules of TCMMIMFP16PS.  The negation is of the fp16 operand (its sign
    bit flips before widening; a NaN there keeps its flipped sign):
    CONJUGATE_SIGN_BIT in semantics/amx_extensions.py.
    """
    _complex_product(cpu, "tcmmrlfp16ps", tsrcdest, tsrc1, tsrc2, imaginary=False)


def _fp8_product(cpu: X86Context, mnemonic: str, tsrcdest: int, tsrc1: int, tsrc2: int, a_fmt: str, b_fmt: str) -> None:
    M, K, N = check_tmul_shapes(cpu, mnemonic, tsrcdest, tsrc1, tsrc2)
    T = fp8_numerics.fp8_dot_products(cpu.state.tile(tsrc1), cpu.state.tile(tsrc2), M, K, N, a_fmt, b_fmt)
    C = cpu.state.tile(tsrcdest)[:M, : 4 * N].copy().view(np.uint32)
    _tmul_result(cpu, tsrcdest, M, N, tmul_numerics.tmul_add32(C, T))


_FP8_DOC = """

        for m < C.rows, n < C.colsb/4:
            T := +0.0                                     # one fp32 accumulator, fresh for every element
            for k < A.colsb/4, in increasing k:
                T := ROUND32(T + sum over i < 4 of A[m].{a}[4k+i] * B[k].{b}[4n+i])
            C[m].fp32[n] := ADD32(C[m].fp32[n], T)
        rows beyond C.rows and bytes beyond C.colsb are zeroed; zero_tilecfg_start()

    FP8 inputs decode exactly (denormals kept: BF8 = E5M2, HF8 = E4M3, no
    infinity in HF8).  ROUND32 rounds the exact group sum once (RNE, FTZ after
    rounding): FP8_GROUP_ROUNDING = "group" in numerics/fp8.py; NaN: the first
    NaN of a0, b0, ..., a3, b3, T made quiet, else inf*0 or inf-inf give
    FFC00000H (FP8_NAN_RULE).  ADD32 as TDPBF16PS.  MXCSR is neither read nor
    written.  The same #UD checks as every TMUL."""


def tdpbf8ps(cpu: X86Context, tsrcdest: int, tsrc1: int, tsrc2: int) -> None:
    _fp8_product(cpu, "tdpbf8ps", tsrcdest, tsrc1, tsrc2, "bf8", "bf8")


def tdpbhf8ps(cpu: X86Context, tsrcdest: int, tsrc1: int, tsrc2: int) -> None:
    _fp8_product(cpu, "tdpbhf8ps", tsrcdest, tsrc1, tsrc2, "bf8", "hf8")


def tdphbf8ps(cpu: X86Context, tsrcdest: int, tsrc1: int, tsrc2: int) -> None:
    _fp8_product(cpu, "tdphbf8ps", tsrcdest, tsrc1, tsrc2, "hf8", "bf8")


def tdphf8ps(cpu: X86Context, tsrcdest: int, tsrc1: int, tsrc2: int) -> None:
    _fp8_product(cpu, "tdphf8ps", tsrcdest, tsrc1, tsrc2, "hf8", "hf8")


for _function, (_a, _b, _aname, _bname) in {
    tdpbf8ps: ("bf8", "bf8", "BF8 (E5M2)", "BF8 (E5M2)"), tdpbhf8ps: ("bf8", "hf8", "BF8 (E5M2)", "HF8 (E4M3)"),
    tdphbf8ps: ("hf8", "bf8", "HF8 (E4M3)", "BF8 (E5M2)"), tdphf8ps: ("hf8", "hf8", "HF8 (E4M3)", "HF8 (E4M3)"),
}.items():
    _function.__doc__ = (f"Dot product of groups of four {_aname} values of tmm2 (A) and four {_bname} values of tmm3 (B), "
                         "accumulated into the fp32 elements of tmm1 (C).  Spec only, no silicon seen."
                         + _FP8_DOC.format(a=_a, b=_b))


def tmmultf32ps(cpu: X86Context, tsrcdest: int, tsrc1: int, tsrc2: int) -> None:
    """Matrix multiply of the fp32 elements of tmm2 (A) and tmm3 (B) read as TF32, accumulated into the fp32 elements of tmm1 (C).  Spec only, no silicon seen.

        for m < C.rows, n < C.colsb/4:
            T := +0.0                                     # one fp32 lane, fresh for every element
            for k < A.colsb/4, in increasing k:
                T := FMA32(T, tf32(A[m].fp32[k]), tf32(B[k].fp32[n]))
            C[m].fp32[n] := ADD32(T, C[m].fp32[n])        # the ISE adds C to the lane: T's NaN first
        rows beyond C.rows and bytes beyond C.colsb are zeroed; zero_tilecfg_start()

    tf32(x) = zero_lower_mantissa_bits_fp32(silence_snan_fp32(x)): a signalling
    NaN made quiet, then fraction bits 12:0 cleared.  FMA32 and ADD32 round once
    (RNE) with DAZ and FTZ, as TDPBF16PS.  The same #UD checks as every TMUL.
    """
    M, K, N = check_tmul_shapes(cpu, "tmmultf32ps", tsrcdest, tsrc1, tsrc2)
    A = cpu.state.tile(tsrc1)[:M, : 4 * K].copy().view(np.uint32)
    B = cpu.state.tile(tsrc2)[:K, : 4 * N].copy().view(np.uint32)
    T = fp8_numerics.tf32_dot_products(A, B, M, K, N)
    C = cpu.state.tile(tsrcdest)[:M, : 4 * N].copy().view(np.uint32)
    _tmul_result(cpu, tsrcdest, M, N, tmul_numerics.tmul_add32(T, C))


# ---------------------------------------------------------------------------
# AMX-MOVRS
# ---------------------------------------------------------------------------


def tileloaddrs(cpu: X86Context, tdest: int, sibmem) -> None:
    """TILELOADD with a read-shared hint (the data is likely read by other cores); the result is TILELOADD's.  Spec only, no silicon seen.

    Architecturally TILELOADD in every respect, faults included (AMX-E3):
    rows come from base + disp + r * stride, bytes beyond colsb and rows beyond
    rows are zeroed, a #PF leaves start_row at the faulting row.
    """
    tile_load(cpu, tdest, sibmem, "tileloaddrs")


def tileloaddrst1(cpu: X86Context, tdest: int, sibmem) -> None:
    """TILELOADDT1 with a read-shared hint; the result is TILELOADD's.  Spec only, no silicon seen.

    Architecturally TILELOADD in every respect, faults included (AMX-E3).
    """
    tile_load(cpu, tdest, sibmem, "tileloaddrst1")


# ---------------------------------------------------------------------------
# AMX-AVX512: a tile row to a zmm register
# ---------------------------------------------------------------------------


def _row_and_chunk(cpu: X86Context, mnemonic: str, tsrc: int, row) -> tuple[int, int]:
    """(row_index, row_chunk in bytes) from r32 (bits 15:0, bits 31:16 * 64) or imm8 (bits 5:0, bits 7:6 * 64),
    after the checks: tiles configured, tsrc configured, and row_index < tsrc.rows (ROW_BEYOND_ROWS)."""
    check_tiles_configured(cpu, mnemonic)
    check_tile_valid(cpu, tsrc, mnemonic)
    if isinstance(row, int):
        index, chunk = row & 0x3F, (row >> 6) * 64
    else:
        value = cpu.state.read_gpr(row) & 0xFFFFFFFF
        index, chunk = value & 0xFFFF, ((value >> 16) & 0xFFFF) * 64
    rows = cpu.state.tilecfg.rows[tsrc]
    if index >= rows and ROW_BEYOND_ROWS == "ud":
        raise UD(f"{mnemonic}: row {index} is not below tmm{tsrc}.rows={rows}")
    return index, chunk


def _row_dwords(cpu: X86Context, tsrc: int, index: int, chunk: int) -> list[int | None]:
    """The 16 dwords of the chunk, None where i + row_chunk/4 >= tsrc.colsb/4."""
    colsb = cpu.state.tilecfg.colsb[tsrc]
    row = cpu.state.tile(tsrc)[index] if index < MAX_ROWS else np.zeros(BYTES_PER_ROW, dtype=np.uint8)
    dwords = np.concatenate([row, np.zeros(64, dtype=np.uint8)]).view(np.uint32).tolist()
    return [dwords[chunk // 4 + i] if i + chunk // 4 < colsb // 4 and chunk // 4 + i < 32 else None
            for i in range(16)]


def _write_zmm(cpu: X86Context, zdest: int, dwords: list[int]) -> None:
    cpu.state.write_vector(zdest, sum((d & 0xFFFFFFFF) << (32 * i) for i, d in enumerate(dwords)))


def _convert_row(cpu: X86Context, mnemonic: str, zdest: int, tsrc: int, row, convert) -> None:
    index, chunk = _row_and_chunk(cpu, mnemonic, tsrc, row)
    _write_zmm(cpu, zdest, [0 if d is None else convert(d) for d in _row_dwords(cpu, tsrc, index, chunk)])
    zero_tilecfg_start(cpu)


_ROW_DOC = """

        VL := 512
        if r32: row_index := r32[15:0];  row_chunk := r32[31:16] * 64
        else:   row_index := imm8[5:0];  row_chunk := imm8[7:6] * 64
        for i < 16:
            if i + row_chunk/4 >= tsrc.colsb/4: zmm1.dword[i] := 0
            else: zmm1.dword[i] := {what}
        zero_tilecfg_start()

    #UD if tiles or tsrc are not configured, or row_index >= tsrc.rows
    (ROW_BEYOND_ROWS in semantics/amx_extensions.py; the ISE's loop has no such
    check).  MXCSR is neither read nor written."""


def tcvtrowd2ps(cpu: X86Context, zdest: int, tsrc: int, row) -> None:
    _convert_row(cpu, "tcvtrowd2ps", zdest, tsrc, row, fp32.from_int32)


def tcvtrowps2bf16h(cpu: X86Context, zdest: int, tsrc: int, row) -> None:
    _convert_row(cpu, "tcvtrowps2bf16h", zdest, tsrc, row, lambda d: fp32.to_bf16(d) << 16)


def tcvtrowps2bf16l(cpu: X86Context, zdest: int, tsrc: int, row) -> None:
    _convert_row(cpu, "tcvtrowps2bf16l", zdest, tsrc, row, fp32.to_bf16)


def tcvtrowps2phh(cpu: X86Context, zdest: int, tsrc: int, row) -> None:
    _convert_row(cpu, "tcvtrowps2phh", zdest, tsrc, row, lambda d: fp32.to_fp16(d) << 16)


def tcvtrowps2phl(cpu: X86Context, zdest: int, tsrc: int, row) -> None:
    _convert_row(cpu, "tcvtrowps2phl", zdest, tsrc, row, fp32.to_fp16)


def tilemovrow(cpu: X86Context, zdest: int, tsrc: int, row) -> None:
    index, chunk = _row_and_chunk(cpu, "tilemovrow", tsrc, row)
    colsb = cpu.state.tilecfg.colsb[tsrc]
    data = cpu.state.tile(tsrc)[index].tolist() + [0] * 64
    out = bytes(data[chunk + i] if chunk + i < colsb else 0 for i in range(64))
    cpu.state.write_vector(zdest, int.from_bytes(out, "little"))


for _function, (_summary, _what) in {
    tcvtrowd2ps: ("Convert 16 int32 elements of a tile row to fp32 in zmm1", "CONVERT_INT32_TO_FP32(tsrc.row[row_index].dword[row_chunk/4+i], RNE)"),
    tcvtrowps2bf16h: ("Convert 16 fp32 elements of a tile row to bf16 in the high words of zmm1's dwords (low words zero)",
                      "CONVERT_FP32_TO_BF16(tsrc.row[row_index].fp32[row_chunk/4+i]) << 16   # the SDM's convert_fp32_to_bfloat16"),
    tcvtrowps2bf16l: ("Convert 16 fp32 elements of a tile row to bf16 in the low words of zmm1's dwords (high words zero)",
                      "CONVERT_FP32_TO_BF16(tsrc.row[row_index].fp32[row_chunk/4+i])          # the SDM's convert_fp32_to_bfloat16"),
    tcvtrowps2phh: ("Convert 16 fp32 elements of a tile row to fp16 in the high words of zmm1's dwords (low words zero)",
                    "CONVERT_FP32_TO_FP16(tsrc.row[row_index].fp32[row_chunk/4+i], RNE) << 16   # as VCVTPS2PH"),
    tcvtrowps2phl: ("Convert 16 fp32 elements of a tile row to fp16 in the low words of zmm1's dwords (high words zero)",
                    "CONVERT_FP32_TO_FP16(tsrc.row[row_index].fp32[row_chunk/4+i], RNE)          # as VCVTPS2PH"),
}.items():
    _function.__doc__ = f"{_summary}.  Spec only, no silicon seen." + _ROW_DOC.format(what=_what)

tilemovrow.__doc__ = """Move 64 bytes of a tile row to zmm1.  Spec only, no silicon seen.

        VL := 512
        if r32: row_index := r32[15:0];  row_chunk := r32[31:16] * 64
        else:   row_index := imm8[5:0];  row_chunk := imm8[7:6] * 64
        for i < 64:
            if row_chunk + i >= tsrc.colsb: zmm1.byte[i] := 0
            else: zmm1.byte[i] := tsrc.row[row_index].byte[row_chunk+i]

    #UD if tiles or tsrc are not configured, or row_index >= tsrc.rows
    (ROW_BEYOND_ROWS).  The ISE's loop for TILEMOVROW does not reset start_row.
    """

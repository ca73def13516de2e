"""SME2's floating-point operations on groups of Z registers (forms/multi_vector_fp.py), read like their ASL:
FMAX/FMIN/FMAXNM/FMINNM of a group and a single vector or a group (and BFMAX/BFMIN/BFMAXNM/BFMINNM, FEAT_SVE_B16B16:
the same rules on BFloat16's fields), FCLAMP/BFCLAMP, FCVT/FCVTN and BFCVT/BFCVTN of two single-precision
registers into one, FCVTZS/FCVTZU, SCVTF/UCVTF and FRINTA/FRINTM/FRINTN/FRINTP of groups of single-precision
elements.  FPCR is the reset value (numerics/fp_asl.py): round to nearest even, no flushing, NaNs propagated
(FPCR.DN = 0)."""

from __future__ import annotations

from ..numerics.fp_asl import BF16, FP16, FP32, FP64, FPCR_DEFAULT, FPMul
from ..numerics import fp_minmax_convert
from ..numerics.fp_minmax_convert import (FixedToFP, FPConvert, FPMax, FPMaxNum, FPMin, FPMinNum, FPRoundInt,
                                          FPScale, FPToFixed)
from .advsimd import V, set_V
from .multi_vector_integer import elements, write

FPCR = FPCR_DEFAULT  # the FPCR every form reads (fp_asl.py)
FORMATS = {"h": FP16, "s": FP32, "d": FP64, "bf": BF16}
_OPS = {"fmax": FPMax, "fmin": FPMin, "fmaxnm": FPMaxNum, "fminnm": FPMinNum}


def minmax(cpu, dn, dn_again, m, *, fmt, nreg, op, single):
    """CheckStreamingSVEEnabled();
constant integer elements = VL DIV esize;
array [0..3] of bits(VL) results;
for r = 0 to nreg-1
    bits(VL) operand1 = Z[dn+r, VL];
    bits(VL) operand2 = if single then Z[m, VL] else Z[m+r, VL];
    for e = 0 to elements-1
        bits(esize) element1 = Elem[operand1, e, esize];
        bits(esize) element2 = Elem[operand2, e, esize];
        // FMAX: FPMax, FMIN: FPMin, FMAXNM: FPMaxNum, FMINNM: FPMinNum (BF*: the same on BFloat16)
        Elem[results[r], e, esize] = op(element1, element2, FPCR);
for r = 0 to nreg-1
    Z[dn+r, VL] = results[r];"""
    cpu.CheckStreamingSVEEnabled()
    function, esize = _OPS[op], fmt.width
    results = []
    for r in range(nreg):
        a = elements(cpu, dn + r, esize)
        b = elements(cpu, m if single else m + r, esize)
        results.append([function(x, y, fmt, FPCR) for x, y in zip(a, b)])
    for r, values in enumerate(results):
        write(cpu, dn + r, values, esize)


def clamp(cpu, d, n, m, *, fmt, nreg):
    """CheckStreamingSVEEnabled();
constant integer elements = VL DIV esize;
bits(VL) operand1 = Z[n, VL];   // the minimum
bits(VL) operand2 = Z[m, VL];   // the maximum
for r = 0 to nreg-1
    bits(VL) operand3 = Z[d+r, VL];
    for e = 0 to elements-1
        bits(esize) element1 = Elem[operand1, e, esize];
        bits(esize) element2 = Elem[operand2, e, esize];
        bits(esize) element3 = Elem[operand3, e, esize];
        Elem[result, e, esize] = FPMinNum(FPMaxNum(element1, element3, FPCR), element2, FPCR);
    Z[d+r, VL] = result;"""
    cpu.CheckStreamingSVEEnabled()
    esize = fmt.width
    low, high = elements(cpu, n, esize), elements(cpu, m, esize)
    for r in range(nreg):
        values = elements(cpu, d + r, esize)
        write(cpu, d + r, [FPMinNum(FPMaxNum(a, v, fmt, FPCR), b, fmt, FPCR) for a, v, b in zip(low, values, high)],
              esize)


def convert_narrow(cpu, d, n, *, target, interleave):
    """CheckStreamingSVEEnabled();
constant integer elements = VL DIV 32;
for r = 0 to 1
    bits(VL) operand = Z[n+r, VL];
    for e = 0 to elements-1
        bits(32) element = Elem[operand, e, 32];
        // FCVT, BFCVT: the two registers one after the other; FCVTN, BFCVTN: interleaved
        integer i = if interleave then 2 * e + r else r * elements + e;
        Elem[result, i, 16] = FPConvert(element, FPCR);   // to half precision (FCVT) or BFloat16 (BFCVT)
Z[d, VL] = result;"""
    cpu.CheckStreamingSVEEnabled()
    per = cpu.VL // 32
    out = [0] * (2 * per)
    for r in range(2):
        for e, value in enumerate(elements(cpu, n + r, 32)):
            out[2 * e + r if interleave else r * per + e] = FPConvert(value, FP32, target, FPCR)
    write(cpu, d, out, 16)


def _each(cpu, d, n, nreg, function):
    results = [[function(v) for v in elements(cpu, n + r, 32)] for r in range(nreg)]
    for r, values in enumerate(results):
        write(cpu, d + r, values, 32)


def to_integer(cpu, d, n, *, nreg, unsigned):
    """CheckStreamingSVEEnabled();
constant integer elements = VL DIV 32;
for r = 0 to nreg-1
    bits(VL) operand = Z[n+r, VL];
    for e = 0 to elements-1
        // rounded towards zero, saturated; a NaN converts to 0
        Elem[results[r], e, 32] = FPToFixed(Elem[operand, e, 32], 0, unsigned, FPCR, FPRounding_ZERO, 32);
for r = 0 to nreg-1
    Z[d+r, VL] = results[r];"""
    cpu.CheckStreamingSVEEnabled()
    _each(cpu, d, n, nreg, lambda v: FPToFixed(v, FP32, 0, unsigned, FPCR, "ZERO", 32))


def from_integer(cpu, d, n, *, nreg, unsigned):
    """CheckStreamingSVEEnabled();
constant integer elements = VL DIV 32;
for r = 0 to nreg-1
    bits(VL) operand = Z[n+r, VL];
    for e = 0 to elements-1
        // rounded to nearest even (FPCR.RMode)
        Elem[results[r], e, 32] = FixedToFP(Elem[operand, e, 32], 0, unsigned, FPCR, FPRoundingMode(FPCR));
for r = 0 to nreg-1
    Z[d+r, VL] = results[r];"""
    cpu.CheckStreamingSVEEnabled()
    _each(cpu, d, n, nreg, lambda v: FixedToFP(v, 32, 0, unsigned, FP32, FPCR))


def round_integral(cpu, d, n, *, nreg, rounding):
    """CheckStreamingSVEEnabled();
constant integer elements = VL DIV 32;
for r = 0 to nreg-1
    bits(VL) operand = Z[n+r, VL];
    for e = 0 to elements-1
        // FRINTN: FPRounding_TIEEVEN, FRINTA: TIEAWAY, FRINTP: POSINF, FRINTM: NEGINF; exact = FALSE
        Elem[results[r], e, 32] = FPRoundInt(Elem[operand, e, 32], FPCR, rounding, FALSE);
for r = 0 to nreg-1
    Z[d+r, VL] = results[r];"""
    cpu.CheckStreamingSVEEnabled()
    _each(cpu, d, n, nreg, lambda v: FPRoundInt(v, FP32, FPCR, rounding))


def bfmul(cpu, d, n, m, *, nreg, single):
    """CheckStreamingSVEEnabled();   // FEAT_SVE_BFSCALE
constant integer elements = VL DIV 16;
for r = 0 to nreg-1
    bits(VL) operand1 = Z[n+r, VL];
    bits(VL) operand2 = if single then Z[m, VL] else Z[m+r, VL];
    for e = 0 to elements-1
        // BFMul: the IEEE product of two BFloat16 values, rounded once by FPCR (not BFloat16's round to odd)
        Elem[results[r], e, 16] = BFMul(Elem[operand1, e, 16], Elem[operand2, e, 16], FPCR);
for r = 0 to nreg-1
    Z[d+r, VL] = results[r];"""
    cpu.CheckStreamingSVEEnabled()
    results = [[FPMul(a, b, BF16, FPCR) for a, b in zip(elements(cpu, n + r, 16), elements(cpu, m if single else m + r, 16))]
               for r in range(nreg)]
    for r, values in enumerate(results):
        write(cpu, d + r, values, 16)


def bfscale(cpu, dn, dn_again, m, *, nreg, single):
    """CheckStreamingSVEEnabled();   // FEAT_SVE_BFSCALE
constant integer elements = VL DIV 16;
for r = 0 to nreg-1
    bits(VL) operand1 = Z[dn+r, VL];
    bits(VL) operand2 = if single then Z[m, VL] else Z[m+r, VL];
    for e = 0 to elements-1
        integer scale = SInt(Elem[operand2, e, 16]);
        Elem[results[r], e, 16] = BFScale(Elem[operand1, e, 16], scale, FPCR);   // element * 2^scale, rounded once
for r = 0 to nreg-1
    Z[dn+r, VL] = results[r];"""
    cpu.CheckStreamingSVEEnabled()
    results = [[FPScale(a, b - (1 << 16) if b >> 15 else b, BF16, FPCR)
                for a, b in zip(elements(cpu, dn + r, 16), elements(cpu, m if single else m + r, 16))]
               for r in range(nreg)]
    for r, values in enumerate(results):
        write(cpu, dn + r, values, 16)


# ---- the scalar half-precision forms legal in streaming mode --------------------------------------------------------
_SCALAR16 = {"fmulx": "FPMulX", "frecps": "FPRecipStepFused", "frsqrts": "FPRSqrtStepFused", "frecpe": "FPRecipEstimate",
             "frsqrte": "FPRSqrtEstimate", "frecpx": "FPRecpX"}


def scalar_fp16(cpu, d, n, *m, op):
    """CheckFPEnabled64();   // legal in streaming mode: a scalar, not an AdvSIMD vector, instruction
bits(16) operand1 = V[n, 16];
bits(16) operand2 = V[m, 16];                    // FMULX, FRECPS, FRSQRTS
case op of
    when FMULX    result = FPMulX(operand1, operand2, FPCR);            // 0 * inf = 2.0 with the product's sign
    when FRECPS   result = FPRecipStepFused(operand1, operand2, FPCR);  // 2.0 - op1 * op2, rounded once
    when FRSQRTS  result = FPRSqrtStepFused(operand1, operand2, FPCR);  // (3.0 - op1 * op2) / 2.0, rounded once
    when FRECPE   result = FPRecipEstimate(operand1, FPCR);              // RecipEstimate: 8 fraction bits
    when FRSQRTE  result = FPRSqrtEstimate(operand1, FPCR);              // RecipSqrtEstimate: 8 fraction bits
    when FRECPX   result = FPRecpX(operand1, FPCR);                      // the exponent inverted, fraction zero
V[d, 16] = result;                               // the rest of Z[d] zeroed"""
    function = getattr(fp_minmax_convert, _SCALAR16[op])
    operands = [V(cpu, n, 16)] + [V(cpu, r, 16) for r in m]
    set_V(cpu, d, function(*operands, FP16, FPCR), 16)

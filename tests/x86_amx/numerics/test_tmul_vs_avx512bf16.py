"""tmul_fma32 against real silicon, through AVX512_BF16 VDPBF16PS.

AMX (TDPBF16PS) cannot run on this machine: the CPU is Emerald Rapids, but
the hypervisor hides AMX. AVX512_BF16 is available, and its VDPBF16PS is
built on the same primitive. The SDM Operation section for VDPBF16PS reads,
for each fp32 lane i (t is src2.dword[i]):

    // FP32 FMA with daz in, ftz out and RNE rounding. MXCSR neither consulted nor updated.
    srcdest.fp32[ i ] += make_fp32(src1.bfloat16[2*i+1]) * make_fp32(t.bfloat[1])
    srcdest.fp32[ i ] += make_fp32(src1.bfloat16[2*i+0]) * make_fp32(t.bfloat[0])

(Intel SDM Vol. 2, "VDPBF16PS -- Dot Product of BF16 Pairs Accumulated into
Packed Single Precision", also at https://www.felixcloutier.com/x86/vdpbf16ps.)
So one VDPBF16PS lane is two chained FP32 FMAs, odd element first:

    silicon == tmul_fma32(tmul_fma32(acc, a_odd, b_odd), a_even, b_even)

with a_* and b_* the bf16 elements widened by make_fp32 (``<< 16``). This
file checks that equation bit for bit on about 1.1 million lanes drawn from
seven seeded distributions. It then checks a single tmul_fma32 step on the
same lanes twice more, with the other element's product set to +0 * +0.
The distributions include tens of thousands of lanes whose exact sum lies
just below 2**-126, where tininess detected after rounding (AMX, isasim) and
tininess detected before rounding give different results. The measured AMX
facts pin that rule with only a few targeted cases, so these lanes check it
again.

To show that the comparison can fail, models that are wrong in one rule
(tininess before rounding, flush on the denormal grid, even element first,
one rounding for both products, accumulator NaN first) are run on the same
silicon results, and each must mismatch many lanes.

The NaN table in the same SDM entry (Table 5-1: src1 low, src2 low, src1
high, src2 high, srcdest) is what two chained FMAs with NaN priority a > b >
acc give: the later (even, "low") step's operands beat the earlier step's
result. No input class is excluded from the comparison.

The C helper is compiled at test time into pytest's temporary directory. It
reads raw bit patterns on stdin and writes raw bit patterns on stdout.
"""

from __future__ import annotations

import platform
import shutil
import subprocess
from dataclasses import dataclass

import numpy as np
import pytest

from isasim.x86_amx.numerics import tmul_fma32, tmul_fma32_reference

# ---------------------------------------------------------------------------
# Silicon: a tiny VDPBF16PS runner
# ---------------------------------------------------------------------------

# stdin:  uint64 n (a multiple of 16), then acc[n], a[n], b[n] as uint32 words.
#         a[i] and b[i] hold two bf16 values: bits 15:0 are element 2i (even),
#         bits 31:16 element 2i+1 (odd).
# argv[1]: MXCSR value (hex) to load before the loop.
# stdout: the n result words, then MXCSR as read back after the loop.
C_SOURCE = r"""
#include <immintrin.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
    unsigned int mxcsr = argc > 1 ? (unsigned int)strtoul(argv[1], NULL, 16) : 0x1F80u;
    uint64_t n;
    if (fread(&n, sizeof n, 1, stdin) != 1 || n % 16 != 0)
        return 2;
    uint32_t *words = malloc(4 * n * sizeof *words);
    if (words == NULL || fread(words, sizeof *words, 3 * n, stdin) != 3 * n)
        return 3;
    const uint32_t *acc = words, *a = words + n, *b = words + 2 * n;
    uint32_t *out = words + 3 * n;

    _mm_setcsr(mxcsr);
    for (uint64_t i = 0; i < n; i += 16) {
        __m512 c;
        __m512bh x, y;
        memcpy(&c, acc + i, 64);
        memcpy(&x, a + i, 64);
        memcpy(&y, b + i, 64);
        c = _mm512_dpbf16_ps(c, x, y);
        memcpy(out + i, &c, 64);
    }
    uint32_t after = _mm_getcsr();
    _mm_setcsr(0x1F80u);

    if (fwrite(out, sizeof *out, n, stdout) != n || fwrite(&after, sizeof after, 1, stdout) != 1)
        return 4;
    return 0;
}
"""

GCC_FLAGS = ["-O1", "-mavx512bf16", "-mavx512f"]
DEFAULT_MXCSR = 0x1F80  # RNE, all exceptions masked, no flags


def _cpu_flags() -> set[str]:
    try:
        with open("/proc/cpuinfo", encoding="ascii", errors="replace") as f:
            for line in f:
                if line.startswith("flags"):
                    return set(line.split(":", 1)[1].split())
    except OSError:
        pass
    return set()


def _skip_reason() -> str | None:
    if platform.machine() not in ("x86_64", "AMD64"):
        return f"needs an x86-64 CPU with AVX512_BF16 (this is {platform.machine()})"
    if shutil.which("gcc") is None:
        return "needs gcc to build the VDPBF16PS runner (gcc not found)"
    flags = _cpu_flags()
    missing = [f for f in ("avx512f", "avx512_bf16") if f not in flags]
    if missing:
        return f"CPU lacks {', '.join(missing)} (per /proc/cpuinfo): VDPBF16PS cannot run here"
    return None


_SKIP = _skip_reason()
pytestmark = pytest.mark.skipif(_SKIP is not None, reason=_SKIP or "")


@pytest.fixture(scope="module")
def vdpbf16ps(tmp_path_factory):
    """A function (acc, a, b, mxcsr) -> (silicon result words, MXCSR after)."""
    work = tmp_path_factory.mktemp("vdpbf16ps")
    src, exe = work / "vdpbf16ps.c", work / "vdpbf16ps"
    src.write_text(C_SOURCE)
    build = subprocess.run(
        ["gcc", *GCC_FLAGS, "-o", str(exe), str(src)], capture_output=True, text=True
    )
    if build.returncode != 0:
        if "unrecognized" in build.stderr or "-mavx512bf16" in build.stderr:
            pytest.skip(f"gcc cannot build AVX512_BF16 code: {build.stderr.strip()[:200]}")
        pytest.fail(f"gcc failed on the VDPBF16PS runner:\n{build.stderr}")

    def run(acc, a, b, mxcsr=DEFAULT_MXCSR):
        n = len(acc)
        padded = -(-n // 16) * 16
        words = np.zeros((3, padded), dtype=np.uint32)
        words[0, :n], words[1, :n], words[2, :n] = acc, a, b
        proc = subprocess.run(
            [str(exe), f"{mxcsr:x}"],
            input=np.uint64(padded).tobytes() + words.tobytes(),
            capture_output=True,
            timeout=120,
        )
        assert proc.returncode == 0, (
            f"VDPBF16PS runner exited with {proc.returncode} (MXCSR {mxcsr:#06x}): "
            f"{proc.stderr.decode(errors='replace')}"
        )
        out = np.frombuffer(proc.stdout, dtype=np.uint32)
        assert out.size == padded + 1
        return out[:n].copy(), int(out[-1])

    return run


# ---------------------------------------------------------------------------
# The models
# ---------------------------------------------------------------------------

_U32 = np.uint32


def odd32(words: np.ndarray) -> np.ndarray:
    """make_fp32 of element 2i+1 (bits 31:16 of each dword)."""
    return words & _U32(0xFFFF0000)


def even32(words: np.ndarray) -> np.ndarray:
    """make_fp32 of element 2i (bits 15:0 of each dword)."""
    return words << _U32(16)


def lane_model(fma, acc, a, b):
    """One VDPBF16PS lane per the SDM: two chained FP32 FMAs, odd element first."""
    return fma(fma(acc, odd32(a), odd32(b)), even32(a), even32(b))


def isasim_lane(acc, a, b):
    return lane_model(tmul_fma32, acc, a, b)


# A second, deliberately simple FP32 FMA written only for this file. It is
# used to build wrong models that differ from the right one in exactly one
# rule, and it checks itself against silicon as the right model first.
# It handles finite inputs whose sum float64 holds exactly (checked), which
# covers every lane of the distributions it is used on.

_TWO_M126 = 2.0**-126


def _daz(x: np.ndarray) -> np.ndarray:
    denormal = ((x & _U32(0x7F800000)) == 0) & ((x & _U32(0x007FFFFF)) != 0)
    return np.where(denormal, x & _U32(0x80000000), x)


def _to_f64(x: np.ndarray) -> np.ndarray:
    return x.view(np.float32).astype(np.float64)


def _exact_sum(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(float64 x + y, mask of lanes where that sum is exact): Knuth's TwoSum error is 0."""
    s = x + y
    yy = s - x
    err = (x - (s - yy)) + (y - yy)
    return s, err == 0


def _round24(s: np.ndarray) -> np.ndarray:
    """float64 -> float64 rounded to 24 significant bits, RNE, unbounded exponent."""
    bits = s.view(np.uint64)
    lsb = (bits >> np.uint64(29)) & np.uint64(1)
    bits = (bits + np.uint64(0x0FFFFFFF) + lsb) & ~np.uint64(0x1FFFFFFF)
    return bits.view(np.float64)


def _finish(s, r, tiny, zero_sign_neg):
    """fp32 bits: r (24 bits already), flushed where tiny, zero sums, overflow to inf."""
    with np.errstate(over="ignore"):
        out = r.astype(np.float32).view(np.uint32)  # exact; |r| >= 2**128 becomes inf
    sign = np.where(np.signbit(s), _U32(0x80000000), _U32(0))
    out = np.where(tiny, sign, out)
    return np.where(s == 0, np.where(zero_sign_neg, _U32(0x80000000), _U32(0)), out)


def own_fma32(acc, a, b, tininess="after"):
    """acc + a*b for finite inputs: DAZ in, exact product, one RNE rounding, FTZ out.

    tininess:
      "after"          result tiny if the 24-bit, unbounded-exponent rounding
                       is below 2**-126 (x86, AMX, isasim);
      "before"         result tiny if the exact sum is below 2**-126;
      "denormal_grid"  round onto the fp32 denormal grid first, then flush if
                       below 2**-126.
    """
    acc, a, b = _daz(acc), _daz(a), _daz(b)
    for x in (acc, a, b):
        assert np.all((x & _U32(0x7F800000)) != _U32(0x7F800000)), "own_fma32 takes finite inputs"
    c = _to_f64(acc)
    p = _to_f64(a) * _to_f64(b)  # exact: bf16 significands have 8 bits
    s, exact = _exact_sum(c, p)
    assert exact.all(), f"{np.count_nonzero(~exact)} sums not exact in float64"
    r = _round24(s)
    if tininess == "after":
        tiny = np.abs(r) < _TWO_M126
    elif tininess == "before":
        tiny = np.abs(s) < _TWO_M126
    elif tininess == "denormal_grid":
        below = np.abs(s) < _TWO_M126
        on_grid = np.rint(s * 2.0**149) * 2.0**-149  # RNE onto multiples of 2**-149 (exact scaling)
        r = np.where(below, on_grid, r)
        tiny = np.abs(r) < _TWO_M126
    else:
        raise ValueError(tininess)
    both_neg_zero = (c == 0) & (p == 0) & np.signbit(c) & np.signbit(p)
    return _finish(s, r, tiny, both_neg_zero)


def own_fused_lane(acc, a, b):
    """Wrong structure: acc + p_odd + p_even with a single rounding (finite inputs).

    Returns (result, lanes where the float64 sum was exact); only those lanes
    are meaningful.
    """
    c = _to_f64(_daz(acc))
    p1 = _to_f64(_daz(odd32(a))) * _to_f64(_daz(odd32(b)))
    p2 = _to_f64(_daz(even32(a))) * _to_f64(_daz(even32(b)))
    s1, ok1 = _exact_sum(c, p1)
    s, ok2 = _exact_sum(s1, p2)
    r = _round24(s)
    neg = (c == 0) & (p1 == 0) & (p2 == 0) & np.signbit(c) & np.signbit(p1) & np.signbit(p2)
    return _finish(s, r, np.abs(r) < _TWO_M126, neg), ok1 & ok2


# ---------------------------------------------------------------------------
# Input distributions (fixed seeds)
# ---------------------------------------------------------------------------


@dataclass
class Dist:
    name: str
    acc: np.ndarray  # fp32 bits
    a: np.ndarray  # bf16 pairs: bits 15:0 even element, 31:16 odd element
    b: np.ndarray
    about: str

    def __len__(self):
        return len(self.acc)


def _bits(rng, n, width):
    return rng.integers(0, 1 << width, n, dtype=np.uint64).astype(np.uint32)


def bf16_normal(rng, n, e_lo, e_hi, sign=None):
    """Normal bf16 values with unbiased exponent in [e_lo, e_hi], random mantissa."""
    e = rng.integers(e_lo, e_hi + 1, n)
    return _bf16_from(rng, e, sign)


def _bf16_from(rng, e, sign=None):
    n = len(e)
    assert np.all((e >= -126) & (e <= 127))
    s = rng.integers(0, 2, n) if sign is None else np.broadcast_to(sign, (n,))
    m = rng.integers(0, 128, n)
    return ((s << 15) | ((e + 127) << 7) | m).astype(np.uint32)


def fp32_normal(rng, n, e_lo, e_hi, sign=None):
    e = rng.integers(e_lo, e_hi + 1, n)
    s = rng.integers(0, 2, n) if sign is None else np.broadcast_to(sign, (n,))
    m = rng.integers(0, 1 << 23, n)
    return ((s << 31) | ((e + 127) << 23) | m).astype(np.uint32)


def bf16_nan(rng, n):
    """Random bf16 NaNs: either sign, quiet or signalling, random payload."""
    m = rng.integers(1, 128, n)
    return ((rng.integers(0, 2, n) << 15) | (0xFF << 7) | m).astype(np.uint32)


def fp32_nan(rng, n):
    m = rng.integers(1, 1 << 23, n)
    return ((rng.integers(0, 2, n) << 31) | (0xFF << 23) | m).astype(np.uint32)


# Zeros and denormals: DAZ reads every one of these as a zero of its sign.
ZERO_LIKE_BF16 = np.array([0x0000, 0x8000, 0x0001, 0x8001, 0x007F, 0x807F, 0x0040], dtype=np.uint32)
ZERO_LIKE_FP32 = np.array(
    [
        0x00000000, 0x80000000, 0x00000001, 0x80000001,
        0x007FFFFF, 0x807FFFFF, 0x00400000, 0x80400000,
    ],
    dtype=np.uint32,
)


def pack(even, odd):
    even, odd = np.asarray(even, dtype=np.uint32), np.asarray(odd, dtype=np.uint32)
    return (even & _U32(0xFFFF)) | (odd << _U32(16))


def _f64_of_bf16(x):
    return _to_f64(np.asarray(x, dtype=np.uint32) << _U32(16))


def tiny_products(rng, n, e_lo=-153, e_hi=-137):
    """bf16 pairs (a, b), both normal, with |a*b| in about [2**e_lo, 2**(e_hi+2))."""
    e = rng.integers(e_lo, e_hi + 1, n)
    ea = e // 2 + rng.integers(-10, 11, n)
    return _bf16_from(rng, ea), _bf16_from(rng, e - ea)


def zero_product(rng, n, plus_zero_share=0.7):
    """bf16 pairs whose product is a zero after DAZ; mostly exactly +0 * +0."""
    a = rng.choice(ZERO_LIKE_BF16, n)
    b = rng.choice(ZERO_LIKE_BF16, n)
    plain = rng.random(n) < plus_zero_share
    return np.where(plain, 0, a).astype(np.uint32), np.where(plain, 0, b).astype(np.uint32)


def place(rng, acc, pa, pb, za, zb):
    """Put the product (pa, pb) in a random element (odd or even), the zero product in the other."""
    odd = rng.random(len(acc)) < 0.5
    a = np.where(odd, pack(za, pa), pack(pa, za))
    b = np.where(odd, pack(zb, pb), pack(pb, zb))
    return Dist("", acc.astype(np.uint32), a.astype(np.uint32), b.astype(np.uint32), "")


def _concat(name, about, parts):
    return Dist(
        name,
        np.concatenate([p.acc for p in parts]),
        np.concatenate([p.a for p in parts]),
        np.concatenate([p.b for p in parts]),
        about,
    )


def dist_uniform(seed=101, n=300_000):
    rng = np.random.default_rng(seed)
    return Dist(
        "uniform_bits", _bits(rng, n, 32), _bits(rng, n, 32), _bits(rng, n, 32),
        "uniformly random 32-bit patterns (NaN, inf, denormal included)",
    )


def dist_narrow(seed=102, n=150_000):
    rng = np.random.default_rng(seed)
    acc = fp32_normal(rng, n, -14, 14)
    acc[rng.random(n) < 0.02] = 0
    a = pack(bf16_normal(rng, n, -6, 6), bf16_normal(rng, n, -6, 6))
    b = pack(bf16_normal(rng, n, -6, 6), bf16_normal(rng, n, -6, 6))
    return Dist("narrow", acc, a, b, "normal values, bf16 exponents within +-6, acc within +-14")


def dist_ftz_boundary(seed=103):
    """Results around 2**-126; tens of thousands of exact sums in [2**-126 - 2**-151, 2**-126)."""
    rng = np.random.default_rng(seed)
    parts = []

    # F1 (window): acc = +-(2**-126 + j*2**-149), one tiny product of the other
    # sign with |p| = (j + frac)*2**-149, so the exact sum is +-(2**-126 - frac*2**-149)
    # (delta = 0), or a few ulps away from that.
    # frac in (0, 1/4]: after-rounding keeps 2**-126, before-rounding flushes.
    # frac in (1/4, 1/2]: unbounded rounding flushes, the denormal grid keeps 2**-126.
    n = 130_000
    pa, pb = tiny_products(rng, n)
    p = _f64_of_bf16(pa) * _f64_of_bf16(pb)
    j = np.floor(np.abs(p) * 2.0**149).astype(np.int64)
    delta = np.where(rng.random(n) < 0.65, 0, rng.integers(-3, 4, n))
    k = np.maximum(j + delta, 0)
    opposite = rng.random(n) < 0.9
    s_acc = np.where(opposite, ~np.signbit(p), np.signbit(p)).astype(np.int64)
    acc = (s_acc << 31) | (0x00800000 + k)
    parts.append(place(rng, acc, pa, pb, *zero_product(rng, n)))

    # F2: both elements tiny, acc just above 2**-126: the odd step may already
    # flush, then the even step starts again from a zero.
    n = 40_000
    acc = (rng.integers(0, 2, n) << 31) | (0x00800000 + rng.integers(0, 64, n))
    oa, ob = tiny_products(rng, n, -152, -140)
    ea, eb = tiny_products(rng, n, -152, -140)
    parts.append(Dist("", acc.astype(np.uint32), pack(ea, oa), pack(eb, ob), ""))

    # F3: coarse cancellation: acc in [2**-126, 2**-124), product ~ -(acc - t) with
    # t = 2**-126 * (1 + u), |u| <= 2**-6, so results straddle 2**-126.
    n = 50_000
    acc = fp32_normal(rng, n, -126, -125)
    t = _TWO_M126 * (1 + rng.uniform(-(2.0**-6), 2.0**-6, n))
    cv = _to_f64(acc)
    want = np.sign(cv) * (np.abs(cv) - t)  # the value acc + p should cancel
    scale_exp = rng.integers(40, 81, n)
    scaled = (-want * 2.0**scale_exp).astype(np.float32).view(np.uint32)
    pa = ((scaled + _U32(0x7FFF) + ((scaled >> _U32(16)) & _U32(1))) >> _U32(16)).astype(np.uint32)
    pb = ((127 - scale_exp) << 7).astype(np.uint32)  # 2**-scale_exp
    parts.append(place(rng, acc, pa, pb, *zero_product(rng, n)))

    # F4: acc a zero or a denormal (read as zero), product near 2**-126: the
    # result is the exact product, kept or flushed with its sign.
    n = 30_000
    acc = rng.choice(ZERO_LIKE_FP32, n)
    pa, pb = tiny_products(rng, n, -129, -126)
    parts.append(place(rng, acc, pa, pb, *zero_product(rng, n)))

    return _concat(
        "ftz_boundary", "acc and products around 2**-126; exact sums just below 2**-126", parts
    )


def dist_near_overflow(seed=104, n=100_000):
    rng = np.random.default_rng(seed)
    acc = fp32_normal(rng, n, 123, 127)
    top = rng.random(n) < 0.25  # within 16 ulps of +-maxf
    acc = np.where(top, (acc & _U32(0x8000000F)) | _U32(0x7F7FFFF0), acc)

    def big(m):
        e = rng.integers(96, 129, m)
        ea = e // 2 + rng.integers(-8, 9, m)
        return _bf16_from(rng, ea), _bf16_from(rng, e - ea)

    oa, ob = big(n)
    ea, eb = big(n)
    # RNE ties at the overflow threshold: maxf + 2**103 (half an ulp of maxf).
    tie = rng.random(n) < 0.1
    acc = np.where(tie, (rng.integers(0, 2, n) << 31).astype(np.uint32) | _U32(0x7F7FFFFF), acc)
    # Even product +-2**103 (exact tie, same sign as acc) or +-2**103 * (1 + 2**-7).
    tie_a = ((acc >> _U32(16)) & _U32(0x8000)) | _U32((51 + 127) << 7)
    ea = np.where(tie, tie_a | rng.integers(0, 2, n).astype(np.uint32), ea)
    eb = np.where(tie, _U32((52 + 127) << 7), eb)  # 2**52
    oa = np.where(tie, rng.choice(ZERO_LIKE_BF16, n), oa)
    return Dist(
        "near_overflow", acc, pack(ea, oa), pack(eb, ob),
        "acc near maxf, products 2**96..2**129, RNE ties at the overflow threshold",
    )


def dist_cancellation(seed=105):
    rng = np.random.default_rng(seed)
    parts = []

    # C1: acc = -p_odd exactly, so the odd step gives +0; the even product is a
    # signed zero (result +0) or a normal value (result: that product).
    n = 40_000
    oa, ob = bf16_normal(rng, n, -20, 20), bf16_normal(rng, n, -20, 20)
    acc = (-(_f64_of_bf16(oa) * _f64_of_bf16(ob))).astype(np.float32).view(np.uint32)
    za, zb = zero_product(rng, n, 0.3)
    na, nb = bf16_normal(rng, n, -20, 20), bf16_normal(rng, n, -20, 20)
    nonzero = rng.random(n) < 0.3
    ea, eb = np.where(nonzero, na, za), np.where(nonzero, nb, zb)
    parts.append(Dist("", acc, pack(ea, oa), pack(eb, ob), ""))

    # C2: acc = p_odd, then p_even = -2*acc: the even step cancels exactly to +0.
    n = 40_000
    oa, ob = bf16_normal(rng, n, -20, 20), bf16_normal(rng, n, -20, 20)
    acc = (_f64_of_bf16(oa) * _f64_of_bf16(ob)).astype(np.float32).view(np.uint32)
    ea = oa + _U32(1 << 7)  # twice a_odd
    eb = ob ^ _U32(0x8000)  # -b_odd
    parts.append(Dist("", acc, pack(ea, oa), pack(eb, ob), ""))

    # C3: every combination of zero-like acc and bf16 operands (signs, DAZ).
    z16, z32 = ZERO_LIKE_BF16, ZERO_LIKE_FP32
    grid = np.indices((len(z32), len(z16), len(z16), len(z16), len(z16))).reshape(5, -1)
    acc = z32[grid[0]]
    a = pack(z16[grid[1]], z16[grid[2]])
    b = pack(z16[grid[3]], z16[grid[4]])
    parts.append(Dist("", acc, a, b, ""))

    return _concat(
        "cancellation",
        "exact cancellations, signed zeros and DAZ'd denormals in every position",
        parts,
    )


def _pool_bf16(rng, n, nan_share=0.0):
    """bf16 values from a mix of classes."""
    out = bf16_normal(rng, n, -10, 10)
    u = rng.random(n)
    out = np.where(u < 0.20, (rng.integers(0, 2, n) << 15 | 0x7F80).astype(np.uint32), out)  # inf
    out = np.where((u >= 0.20) & (u < 0.35), rng.choice(ZERO_LIKE_BF16, n), out)  # zero / denormal
    out = np.where((u >= 0.35) & (u < 0.40), bf16_normal(rng, n, 60, 127), out)  # huge
    out = np.where((u >= 0.40) & (u < 0.45), bf16_normal(rng, n, -126, -60), out)  # tiny
    return np.where(rng.random(n) < nan_share, bf16_nan(rng, n), out)


def _pool_fp32(rng, n, nan_share=0.0):
    out = fp32_normal(rng, n, -20, 20)
    u = rng.random(n)
    out = np.where(u < 0.20, (rng.integers(0, 2, n) << 31 | 0x7F800000).astype(np.uint32), out)
    out = np.where((u >= 0.20) & (u < 0.35), rng.choice(ZERO_LIKE_FP32, n), out)
    out = np.where((u >= 0.35) & (u < 0.40), fp32_normal(rng, n, 100, 127), out)
    out = np.where((u >= 0.40) & (u < 0.45), fp32_normal(rng, n, -126, -100), out)
    return np.where(rng.random(n) < nan_share, fp32_nan(rng, n), out)


def dist_nan_payloads(seed=106, per_subset=3_000):
    """NaNs in every subset of the five positions (acc, a_odd, b_odd, a_even, b_even)."""
    rng = np.random.default_rng(seed)
    n = 32 * per_subset
    subset = np.repeat(np.arange(32), per_subset)
    acc = np.where(subset & 1, fp32_nan(rng, n), _pool_fp32(rng, n))
    ao = np.where(subset & 2, bf16_nan(rng, n), _pool_bf16(rng, n))
    bo = np.where(subset & 4, bf16_nan(rng, n), _pool_bf16(rng, n))
    ae = np.where(subset & 8, bf16_nan(rng, n), _pool_bf16(rng, n))
    be = np.where(subset & 16, bf16_nan(rng, n), _pool_bf16(rng, n))
    return Dist(
        "nan_payloads", acc, pack(ae, ao), pack(be, bo),
        "random-payload qNaN/sNaN in all 32 subsets of the 5 positions; "
        "others inf/0/denormal/normal",
    )


def dist_specials_mixed(seed=107, n=100_000):
    rng = np.random.default_rng(seed)
    return Dist(
        "specials_mixed",
        _pool_fp32(rng, n, 0.03),
        pack(_pool_bf16(rng, n, 0.03), _pool_bf16(rng, n, 0.03)),
        pack(_pool_bf16(rng, n, 0.03), _pool_bf16(rng, n, 0.03)),
        "inf*0, inf-inf across the two steps, huge/tiny, zeros, some NaNs",
    )


DISTRIBUTIONS = [
    dist_uniform,
    dist_narrow,
    dist_ftz_boundary,
    dist_near_overflow,
    dist_cancellation,
    dist_nan_payloads,
    dist_specials_mixed,
]


@pytest.fixture(scope="module")
def measured(vdpbf16ps):
    """{name: (Dist, silicon result)}; all distributions in one silicon run."""
    dists = [make() for make in DISTRIBUTIONS]
    acc = np.concatenate([d.acc for d in dists])
    a = np.concatenate([d.a for d in dists])
    b = np.concatenate([d.b for d in dists])
    out, mxcsr_after = vdpbf16ps(acc, a, b)
    assert mxcsr_after == DEFAULT_MXCSR, f"VDPBF16PS changed MXCSR: {mxcsr_after:#06x}"
    result, start = {}, 0
    for d in dists:
        result[d.name] = (d, out[start : start + len(d)])
        start += len(d)
    return result


# ---------------------------------------------------------------------------
# Comparison and report
# ---------------------------------------------------------------------------


def describe_lane(d: Dist, i: int, silicon: int, model: int, label: str) -> str:
    a, b = int(d.a[i]), int(d.b[i])
    return (
        f"  [{i}] acc={int(d.acc[i]):08x} a_odd={a >> 16:04x} b_odd={b >> 16:04x} "
        f"a_even={a & 0xFFFF:04x} b_even={b & 0xFFFF:04x}  "
        f"silicon={silicon:08x} {label}={model:08x}"
    )


def compare(d: Dist, silicon: np.ndarray, model: np.ndarray, label: str, show: int = 6):
    """(mismatch count, report lines)."""
    bad = np.flatnonzero(silicon != model)
    lines = [f"{d.name:16s} {len(d):9,d} lanes  {len(bad):7,d} mismatches vs {label}"]
    lines += [describe_lane(d, int(i), int(silicon[i]), int(model[i]), label) for i in bad[:show]]
    return len(bad), lines


def own_lane(d: Dist, tininess: str) -> np.ndarray:
    return lane_model(lambda c, x, y: own_fma32(c, x, y, tininess), d.acc, d.a, d.b)


# ---------------------------------------------------------------------------
# Tests
# ---------------------------------------------------------------------------


def test_tmul_fma32_chained_matches_vdpbf16ps(measured):
    """silicon == tmul_fma32(tmul_fma32(acc, a_odd, b_odd), a_even, b_even), bit for bit."""
    total_lanes = total_bad = 0
    report = ["VDPBF16PS (silicon) vs isasim tmul_fma32 chained odd then even:"]
    for d, silicon in measured.values():
        n_bad, lines = compare(d, silicon, isasim_lane(d.acc, d.a, d.b), "isasim")
        total_lanes += len(d)
        total_bad += n_bad
        report += lines
    report.append(f"{'total':16s} {total_lanes:9,d} lanes  {total_bad:7,d} mismatches")
    print("\n".join(report))
    assert total_lanes >= 1_000_000
    assert total_bad == 0, "\n".join(report)


def plus_zero_step(x: np.ndarray) -> np.ndarray:
    """What an FMA32 step with product exactly +0 (+0 * +0) does to x, worked out by hand.

    - NaN x: quiet(x) (no NaN operand in the product, so the accumulator NaN wins);
    - zero or denormal x: DAZ makes it a zero, and +-0 + +0 is +0 under RNE;
    - any other x (normal, inf): x + 0 == x exactly, no rounding, no flush.
    """
    nan = ((x & _U32(0x7F800000)) == _U32(0x7F800000)) & ((x & _U32(0x007FFFFF)) != 0)
    zero_like = (x & _U32(0x7F800000)) == 0
    return np.where(nan, x | _U32(0x00400000), np.where(zero_like, _U32(0), x))


@pytest.fixture(scope="module")
def single_steps(vdpbf16ps, measured):
    """Every distribution again, with one element of each pair set to +0 in a and b.

    {position: {name: (Dist, silicon)}}; position is the element that is kept.
    """
    result = {}
    for keep, mask in (("even", _U32(0x0000FFFF)), ("odd", _U32(0xFFFF0000))):
        dists = [
            Dist(d.name, d.acc, d.a & mask, d.b & mask, d.about) for d, _ in measured.values()
        ]
        out, after = vdpbf16ps(
            np.concatenate([d.acc for d in dists]),
            np.concatenate([d.a for d in dists]),
            np.concatenate([d.b for d in dists]),
        )
        assert after == DEFAULT_MXCSR
        result[keep], start = {}, 0
        for d in dists:
            result[keep][d.name] = (d, out[start : start + len(d)])
            start += len(d)
    return result


@pytest.mark.parametrize("keep", ["even", "odd"])
def test_single_fma32_step_matches_vdpbf16ps(single_steps, keep):
    """One tmul_fma32 step per lane; the other element's product is +0 * +0.

    keep="even": the odd step runs first and gives plus_zero_step(acc), so
                 silicon == tmul_fma32(plus_zero_step(acc), a_even, b_even).
    keep="odd":  the even step runs last on the odd step's result r, so
                 silicon == plus_zero_step(tmul_fma32(acc, a_odd, b_odd)).
    """
    total_lanes = total_bad = 0
    report = [f"VDPBF16PS with only the {keep} element vs one isasim tmul_fma32 step:"]
    for d, silicon in single_steps[keep].values():
        if keep == "even":
            first = plus_zero_step(d.acc)
            assert np.array_equal(first, tmul_fma32(d.acc, odd32(d.a), odd32(d.b)))
            model = tmul_fma32(first, even32(d.a), even32(d.b))
        else:
            model = plus_zero_step(tmul_fma32(d.acc, odd32(d.a), odd32(d.b)))
        n_bad, lines = compare(d, silicon, model, "isasim")
        total_lanes += len(d)
        total_bad += n_bad
        report += lines
        if d.name == "ftz_boundary":  # the step alone must still sit on the tininess rule
            n_window = int(np.count_nonzero(own_lane(d, "before") != own_lane(d, "after")))
            report.append(f"{'':16s} {n_window:9,d} of them tell after- from before-rounding")
            assert n_window >= 5_000
    report.append(f"{'total':16s} {total_lanes:9,d} lanes  {total_bad:7,d} mismatches")
    print("\n".join(report))
    assert total_bad == 0, "\n".join(report)


def test_boundary_distribution_exercises_the_tininess_rule(measured):
    """Thousands of ftz_boundary lanes tell after-rounding from before-rounding tininess,
    and on every one of them silicon takes the after-rounding result."""
    d, silicon = measured["ftz_boundary"]
    after, before = own_lane(d, "after"), own_lane(d, "before")
    window = after != before
    n_window = int(np.count_nonzero(window))
    n_after = int(np.count_nonzero(silicon[window] == after[window]))
    n_min_normal = int(np.count_nonzero((silicon[window] & _U32(0x7FFFFFFF)) == _U32(0x00800000)))
    print(
        f"ftz_boundary: {n_window:,d} lanes where the two tininess rules disagree; silicon "
        f"agrees with after-rounding on {n_after:,d}; {n_min_normal:,d} of them are +-2**-126"
    )
    assert n_window >= 5_000
    assert n_after == n_window


def test_own_model_matches_silicon_on_boundary(measured):
    """The file's own simple FMA32 (after-rounding) is right on ftz_boundary, so the
    wrong models below differ from silicon only through the rule they change."""
    d, silicon = measured["ftz_boundary"]
    n_bad, lines = compare(d, silicon, own_lane(d, "after"), "own-after")
    print("\n".join(lines))
    assert n_bad == 0, "\n".join(lines)


def _wrong_before(d):
    return own_lane(d, "before"), None


def _wrong_denormal_grid(d):
    return own_lane(d, "denormal_grid"), None


def _wrong_even_first(d):
    even_first = tmul_fma32(tmul_fma32(d.acc, even32(d.a), even32(d.b)), odd32(d.a), odd32(d.b))
    return even_first, None


def _wrong_fused(d):
    return own_fused_lane(d.acc, d.a, d.b)


def _wrong_nan_acc_first(d):
    """NaN priority acc > a > b in each step (x86 VFMADD231-like 'dest first')."""

    def fma(c, x, y):
        r = tmul_fma32(c, x, y)
        c_nan = ((c & _U32(0x7F800000)) == _U32(0x7F800000)) & ((c & _U32(0x007FFFFF)) != 0)
        return np.where(c_nan, c | _U32(0x00400000), r)

    return lane_model(fma, d.acc, d.a, d.b), None


WRONG_MODELS = {
    # name: (model, distribution, minimum mismatches expected)
    "tininess_before_rounding": (_wrong_before, "ftz_boundary", 5_000),
    "flush_on_denormal_grid": (_wrong_denormal_grid, "ftz_boundary", 5_000),
    "even_element_first": (_wrong_even_first, "narrow", 1_000),
    "single_rounding_of_both_products": (_wrong_fused, "narrow", 1_000),
    "nan_priority_acc_first": (_wrong_nan_acc_first, "nan_payloads", 1_000),
}


@pytest.mark.parametrize("wrong", list(WRONG_MODELS))
def test_harness_rejects_wrong_model(measured, wrong):
    """The comparison can fail: a model wrong in one rule mismatches silicon many times."""
    model, dist_name, minimum = WRONG_MODELS[wrong]
    d, silicon = measured[dist_name]
    predicted, usable = model(d)
    if usable is not None:  # the fused model is only defined where float64 was exact
        assert np.count_nonzero(usable) > 0.9 * len(d)
        predicted = np.where(usable, predicted, silicon)
    n_bad, lines = compare(d, silicon, predicted, wrong, show=3)
    print("\n".join(lines))
    assert n_bad >= minimum, "\n".join(lines)


def test_scalar_reference_matches_vdpbf16ps(measured):
    """isasim's scalar tmul_fma32_reference, chained the same way, on a sample per distribution."""
    rng = np.random.default_rng(108)
    bad = []
    checked = 0
    for d, silicon in measured.values():
        for i in rng.choice(len(d), 300, replace=False):
            acc, a, b = int(d.acc[i]), int(d.a[i]), int(d.b[i])
            mid = tmul_fma32_reference(acc, a & 0xFFFF0000, b & 0xFFFF0000)
            got = tmul_fma32_reference(mid, (a << 16) & 0xFFFFFFFF, (b << 16) & 0xFFFFFFFF)
            checked += 1
            if got != int(silicon[i]):
                bad.append(describe_lane(d, int(i), int(silicon[i]), got, "reference"))
    assert checked == 300 * len(measured)
    assert not bad, "\n".join(bad[:10])


@pytest.mark.parametrize("mxcsr", [0xFFC0, 0x2000], ids=["RZ_FTZ_DAZ_masked", "RD_all_unmasked"])
def test_mxcsr_neither_consulted_nor_updated(vdpbf16ps, measured, mxcsr):
    """Same bits under another rounding mode, FTZ/DAZ, or unmasked exceptions; MXCSR unchanged."""
    names = ["ftz_boundary", "near_overflow", "cancellation", "nan_payloads", "specials_mixed"]
    for name in names:
        d, silicon = measured[name]
        out, after = vdpbf16ps(d.acc, d.a, d.b, mxcsr)
        assert after == mxcsr, f"{name}: MXCSR {mxcsr:#06x} became {after:#06x}"
        n_bad = int(np.count_nonzero(out != silicon))
        assert n_bad == 0, f"{name}: {n_bad} lanes differ under MXCSR {mxcsr:#06x}"

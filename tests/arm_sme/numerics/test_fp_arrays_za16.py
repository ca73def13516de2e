"""FPMulAdd_ZA16_array (numerics/fp_arrays.py, what FMLA/FMOPA .H and BFMLA/BFMOPA execute) against the
per-element definition FPMulAdd_ZA of numerics/fp_asl.py, for half precision and BFloat16: on uniformly
random bit patterns, and on lanes biased to where rounding goes wrong (specials, half-mantissa values whose
products tie, values near the square root of the smallest normal, addends that cancel a product)."""

from __future__ import annotations

import random

import numpy as np
import pytest

from isasim.arm_sme.numerics.fp_arrays import FPMulAdd_ZA16_array
from isasim.arm_sme.numerics.fp_asl import BF16, FP16, FPCR_DEFAULT, FPMulAdd_ZA

LAYOUT = {FP16: (5, 10), BF16: (8, 7)}


def _biased(rng: random.Random, fmt, count: int) -> list[int]:
    e, f = LAYOUT[fmt]
    bias = (1 << (e - 1)) - 1
    top = ((1 << e) - 1) << f
    specials = [0, 0x8000, top, top | 0x8000, top | (1 << (f - 1)), top | 1, 1, 0x8001, (1 << f) - 1, 1 << f,
                top - 1, (top - 1) | 0x8000]
    out = []
    for _ in range(count):
        pick = rng.random()
        if pick < 0.2:
            out.append(rng.choice(specials))
        elif pick < 0.8:
            exponent = rng.choice([bias + rng.randrange(-4, 5), bias - bias // 2 + rng.randrange(-3, 4),
                                   rng.randrange(1, 2 * bias + 1)])
            keep = (f + 1) // 2 + 1
            out.append((rng.getrandbits(1) << 15) | (exponent << f) | (rng.getrandbits(keep) << (f - keep)))
        else:
            out.append(rng.getrandbits(16))
    return out


@pytest.mark.parametrize("fmt", [FP16, BF16], ids=["fp16", "bf16"])
def test_the_array_form_is_the_definition(fmt):
    rng = random.Random(2029)
    x, y = _biased(rng, fmt, 3000), _biased(rng, fmt, 3000)
    addend = _biased(rng, fmt, 3000)
    for k in range(0, 3000, 3):  # about -(x*y) for the lane's own x and y: a cancellation or its rounding error
        exact = FPMulAdd_ZA(0, x[k], y[k], fmt, FPCR_DEFAULT)
        addend[k] = exact ^ 0x8000
    uniform = [rng.getrandbits(16) for _ in range(3 * 3000)]
    for a, b, c in ((addend, x, y), (uniform[0::3], uniform[1::3], uniform[2::3])):
        got = FPMulAdd_ZA16_array(np.array(a, np.uint16), np.array(b, np.uint16), np.array(c, np.uint16), fmt)
        want = [FPMulAdd_ZA(p, q, r, fmt, FPCR_DEFAULT) for p, q, r in zip(a, b, c)]
        wrong = [(hex(p), hex(q), hex(r)) for p, q, r, g, w in zip(a, b, c, got.tolist(), want) if g != w]
        assert not wrong, f"{len(wrong)} lanes differ, e.g. {wrong[:5]}"

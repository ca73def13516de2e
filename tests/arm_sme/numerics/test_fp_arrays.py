"""The array forms in isasim/arm_sme/numerics/fp_arrays.py (what the FP instructions execute) against the
per-element functions of fp_asl.py (the definition explain prints), bit for bit, on 200,000 lanes per
operation: random bit patterns and biased ones (specials, denormals, values near the smallest normal
and the largest finite, short mantissas whose products tie, addends that cancel the product or the dot
product, all-zero lanes).  Both the public array form and the general masked form it falls back on are
compared on every lane, and the public form again on 20,000 of the lanes in blocks of 8 (where its
fallback is the scalar function).

This checks an optimisation against the definition, so the three comparisons are marked ``consistency``;
the evidence that the rules are Arm's is semantics/test_fp_products_vs_qemu.py, which checks the
instructions against QEMU, and numerics/test_fp_asl.py's hand-worked examples of the element functions.
"""

from __future__ import annotations

import numpy as np
import pytest

from isasim.arm_sme.numerics import fp_arrays, fp_asl

LANES = 200_000
CHUNKS = 4  # the lanes are compared in chunks so a failure names its inputs without a huge message

HALF_SPECIALS = [0x0000, 0x8000, 0x7C00, 0xFC00, 0x7E00, 0xFE00, 0x7D01, 0xFC01, 0x0001, 0x8001, 0x03FF,
                 0x0400, 0x3C00, 0xBC00, 0x7BFF, 0xFBFF, 0x3800, 0x0200]
BF16_SPECIALS = [0x0000, 0x8000, 0x7F80, 0xFF80, 0x7FC0, 0xFFC1, 0x7F81, 0x0001, 0x807F, 0x0080, 0x3F80,
                 0xBF80, 0x7F7F, 0xFF7F, 0x0100, 0x3F00]
SINGLE_SPECIALS = [0x00000000, 0x80000000, 0x7F800000, 0xFF800000, 0x7FC00000, 0xFFC00001, 0x7F800001,
                   0x00000001, 0x80000001, 0x007FFFFF, 0x00800000, 0x3F800000, 0xBF800000, 0x7F7FFFFF,
                   0xFF7FFFFF, 0x00400000, 0x33800000]
FORMATS = {"half": (fp_asl.FP16, HALF_SPECIALS), "bf16": (fp_asl.BF16, BF16_SPECIALS),
           "single": (fp_asl.FP32, SINGLE_SPECIALS)}


def biased(rng: np.random.Generator, count: int, kind: str) -> np.ndarray:
    """Bit patterns of one format: a fifth each of specials, random bits, short mantissas (ties),
    exponents near the smallest normal or its square root (underflow, denormal results), and exponents
    near the top (overflow)."""
    fmt, specials = FORMATS[kind]
    f, emax, bias = fmt.mantissa_bits, fmt.max_exponent_field, fmt.bias
    sign = rng.integers(0, 2, count, dtype=np.int64) << (fmt.width - 1)
    fraction = rng.integers(0, 1 << f, count, dtype=np.int64)
    short = fraction & ~((1 << (f - (f + 1) // 2 - 1)) - 1)  # only the top bits: exact products, ties
    exponent = np.select(
        [rng.random(count) < p for p in (0.25, 0.5, 0.75)],
        [rng.integers(1, 4, count), rng.integers(bias // 2 - 3, bias // 2 + 4, count),
         rng.integers(emax - 3, emax, count)], rng.integers(bias - 6, bias + 7, count))
    exponent = np.clip(exponent, 0, emax - 1)
    pick = rng.integers(0, 5, count)
    lanes = np.select(
        [pick == 0, pick == 1, pick == 2],
        [np.array(specials, dtype=np.int64)[rng.integers(0, len(specials), count)],
         rng.integers(0, 1 << fmt.width, count, dtype=np.int64),
         sign | (exponent << f) | short], sign | (exponent << f) | fraction)
    return lanes.astype(np.uint16 if fmt.width == 16 else np.uint32)


def cancel(rng, addend: np.ndarray, approximate: np.ndarray) -> np.ndarray:
    """About half the addends replaced by -approximate (a float64 estimate of the product or dot
    product, rounded to single precision): then only the exact rule gets the small remainder right."""
    with np.errstate(all="ignore"):  # a generator of inputs, not a model
        opposite = (-approximate).astype(np.float32).view(np.uint32)
    return np.where(rng.random(addend.shape) < 0.5, opposite, addend)


def values(bits: np.ndarray, kind: str) -> np.ndarray:
    if kind == "half":
        return bits.view(np.float16).astype(np.float64)
    if kind == "bf16":
        return (bits.astype(np.uint32) << 16).view(np.float32).astype(np.float64)
    return bits.view(np.float32).astype(np.float64)


def compare(name: str, scalar, inputs) -> None:
    """fp_arrays.<name> (the array form the instructions run) and fp_arrays._<general form> (the one that
    handles every lane with masks, which the first uses for lanes with an infinity or NaN) against the
    scalar function on every lane."""
    columns = [column.tolist() for column in inputs]
    wanted = np.array([scalar(*lane) for lane in zip(*columns)], dtype=np.uint32)
    general = "_" + name.replace("_array", "_general")
    for form in (name, general):
        got = np.asarray(getattr(fp_arrays, form)(*inputs), dtype=np.uint32)
        wrong = np.flatnonzero(got != wanted)
        assert wrong.size == 0, (f"{form}: {wrong.size} of {got.size} lanes differ, e.g. inputs "
                                 f"{[hex(column[wrong[0]]) for column in columns]}: array {got[wrong[0]]:#010x},"
                                 f" scalar {wanted[wrong[0]]:#010x}")


def compare_in_blocks(name: str, scalar, inputs, block: int = 8, count: int = 20_000) -> None:
    """fp_arrays.<name> on blocks of a few lanes (an instruction's arrays at small SVLs), where the lanes it
    cannot take the short way are recomputed by the scalar function instead of the general form."""
    columns = [np.concatenate([column[:count // 2], column[-count // 2:]]) for column in inputs]  # random, biased
    wanted = [scalar(*lane) for lane in zip(*(column.tolist() for column in columns))]
    got = np.concatenate([getattr(fp_arrays, name)(*(column[k:k + block] for column in columns))
                          for k in range(0, count, block)])
    wrong = np.flatnonzero(got != np.array(wanted, dtype=np.uint32))
    assert wrong.size == 0, f"{name} in blocks of {block}: {wrong.size} of {count} lanes differ, e.g. {wrong[0]}"


def lanes(seed: int, kind: str, sources: int, dot: bool):
    """(addend, operands...) for LANES lanes: half random bits, half biased, with cancelling addends."""
    rng = np.random.default_rng(seed)
    count = LANES // 2
    random_half = [rng.integers(0, 1 << 32, count, dtype=np.uint64).astype(np.uint32)] + \
        [rng.integers(0, 1 << FORMATS[kind][0].width, count, dtype=np.uint64).astype(
            np.uint16 if kind != "single" else np.uint32) for _ in range(sources)]
    ops = [biased(rng, count, kind) for _ in range(sources)]
    if dot and kind != "single":  # some pairs whose two products cancel: (a, -a) . (b, b)
        pairs = rng.random(count) < 0.2
        ops[1] = np.where(pairs, ops[0] ^ np.uint16(0x8000), ops[1])
        ops[3] = np.where(pairs, ops[2], ops[3])
    with np.errstate(all="ignore"):
        x = [values(op, kind) for op in ops]
        approximate = x[0] * x[2] + x[1] * x[3] if dot else x[0] * x[1]
    addend = cancel(rng, biased(rng, count, "single"), approximate)
    zeros = rng.random(count) < 0.03  # every operand a zero of a random sign: the zero-sign rules
    width = FORMATS[kind][0].width
    ops = [np.where(zeros, op & np.array(1 << (width - 1), dtype=op.dtype), op) for op in ops]
    addend = np.where(zeros, addend & np.uint32(0x80000000), addend)
    return [np.concatenate([r, b]) for r, b in zip(random_half, [addend] + ops)]


def chunks(columns):
    size = len(columns[0]) // CHUNKS
    for k in range(CHUNKS):
        yield [column[k * size:(k + 1) * size] for column in columns]


@pytest.mark.consistency
def test_fpmuladd_za_array_matches_fpmuladd_za():
    def scalar(addend, op1, op2):
        return fp_asl.FPMulAdd_ZA(addend, op1, op2, fp_asl.FP32, fp_asl.FPCR_DEFAULT)

    inputs = lanes(1, "single", 2, dot=False)
    for columns in chunks(inputs):
        compare("FPMulAdd_ZA_array", scalar, columns)
    compare_in_blocks("FPMulAdd_ZA_array", scalar, inputs)


@pytest.mark.consistency
def test_fpdotadd_za_array_matches_fpdotadd_za():
    # lanes() yields (addend, op1_a, op1_b, op2_a, op2_b)
    def scalar(addend, op1_a, op1_b, op2_a, op2_b):
        return fp_asl.FPDotAdd_ZA(addend, op1_a, op1_b, op2_a, op2_b, fp_asl.FPCR_DEFAULT)

    inputs = lanes(2, "half", 4, dot=True)
    for columns in chunks(inputs):
        compare("FPDotAdd_ZA_array", scalar, columns)
    compare_in_blocks("FPDotAdd_ZA_array", scalar, inputs)


@pytest.mark.consistency
def test_bfdotadd_array_matches_bfdotadd():
    def scalar(addend, op1_a, op1_b, op2_a, op2_b):
        return fp_asl.BFDotAdd(addend, op1_a, op1_b, op2_a, op2_b, fp_asl.FPCR_DEFAULT)

    inputs = lanes(3, "bf16", 4, dot=True)
    for columns in chunks(inputs):
        compare("BFDotAdd_array", scalar, columns)
    compare_in_blocks("BFDotAdd_array", scalar, inputs)


@pytest.mark.parametrize("name", ["FPMulAdd_ZA_array", "FPDotAdd_ZA_array", "BFDotAdd_array"])
def test_the_lanes_reach_every_case(name):
    """The inputs really hold NaNs, infinities, zeros, denormal and overflowing results, exact zeros
    from cancellation and inexact results (so the comparisons above are not of easy lanes only)."""
    kind, sources, dot = {"FPMulAdd_ZA_array": ("single", 2, False), "FPDotAdd_ZA_array": ("half", 4, True),
                          "BFDotAdd_array": ("bf16", 4, True)}[name]
    columns = lanes(4, kind, sources, dot)
    result = getattr(fp_arrays, name)(*columns)
    exponent, fraction = (result >> 23) & 0xFF, result & 0x7FFFFF
    assert (result == 0x7FC00000).sum() > 1000  # default NaNs
    assert ((exponent == 0xFF) & (fraction == 0)).sum() > 1000  # infinities
    assert (result == 0).sum() > 100 and (result == 0x80000000).sum() > 100  # +0 and -0
    assert ((exponent > 0) & (exponent < 0xFF)).sum() > 50_000
    if name != "BFDotAdd_array":  # BFloat16 arithmetic flushes its denormal results
        assert ((exponent == 0) & (fraction != 0)).sum() > 100


def test_a_host_not_rounding_to_nearest_is_refused():
    """The array forms rely on the host's float64 additions rounding to nearest (TwoSum): with the
    host switched to round towards zero they refuse to run instead of giving wrong bits."""
    import ctypes
    import ctypes.util
    import platform

    towards_zero = {"x86_64": 0xC00, "aarch64": 0xC00000}.get(platform.machine())  # <fenv.h> FE_TOWARDZERO
    libm = ctypes.util.find_library("m")
    if towards_zero is None or libm is None:
        pytest.skip("no known FE_TOWARDZERO for this host")
    libm = ctypes.CDLL(libm)
    saved = libm.fegetround()
    ones = np.array([0x3F800000], dtype=np.uint32)
    try:
        assert libm.fesetround(towards_zero) == 0
        assert not fp_arrays._host_rounds_to_nearest()
        with pytest.raises(RuntimeError, match="round to nearest"):
            fp_arrays.FPMulAdd_ZA_array(ones, ones, ones)
    finally:
        libm.fesetround(saved)
    assert fp_arrays._host_rounds_to_nearest()
    assert fp_arrays.FPMulAdd_ZA_array(ones, ones, ones)[0] == 0x40000000  # 1 + 1*1 = 2

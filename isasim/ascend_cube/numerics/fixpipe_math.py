"""The Fixpipe's per-element arithmetic on the way out of L0C: every quant mode of 910B and 950.

One element goes through, in the order the Ascend C guide (随路量化.md, 随路量化与随路ReLU场景组合.md)
and its example goldens (fixpipe_l0c2gm gen_data_*.py) give:

1. the L0C value (int32 or float32);
2. 910B DEQF16 / REQ8 with MCB = 1: int32 >> N, then saturated to int16 (options ``mcb_shift``,
   ``mcb_n_code``, ``mcb_int16_saturation``);
3. int32 -> float (rounded to float32 under ``fixpipe_multiply = fp32_rounded``);
4. the scale: x * M1 for x >= 0, x * M2 otherwise, with M2 = M1 without ReLU and M2 = 0 with
   ReLU (the ReLU is folded into the multiply); modes without a scale apply ReLU as max(x, 0);
5. the output conversion: int8/uint8 by rounding to the s9 intermediate (``int8_rounding``),
   + offset, saturation to int8 (bit 46 = 1) or uint8; float16/bfloat16 ties to even;
   float8_e4m3fn (``fixpipe_fp8_rounding``); hifloat8 half-away or hybrid; float32 ties to even.
   Float overflow and NaN: saturated (``fixpipe_float_overflow``; always for the modes the docs
   say do not support INF_NAN mode).

Values are exact integers (sign, magnitude, exponent) throughout; each rounding is one call.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from fractions import Fraction

import numpy as np

from . import formats
from .formats import BITS_DTYPE, FLOAT_FORMATS, decode_exact, round_exact
from .quant_word import add_offset_saturate, decode_quant_word, round_to_s9

__all__ = ["QuantMode", "QUANT_MODES", "UnsupportedModeError", "modes_for_chip", "output_dtype",
           "float_saturates", "quantize", "element_steps"]

_BOTH = ("910B", "950")
_950 = ("950",)


class UnsupportedModeError(ValueError):
    """A quant mode, or an L0C / output dtype pair, the chip does not have."""


@dataclass(frozen=True)
class QuantMode:
    """One QuantMode_t value: what L0C holds, what it writes, on which chips, and its parameter."""

    name: str
    l0c_dtypes: tuple[str, ...]
    outputs: tuple[str, ...]  # NoQuant writes the L0C dtype itself
    chips: tuple[str, ...]
    form: str  # "none" (no quant word), "scalar" (one word) or "vector" (one word per column)
    doc: str

    @property
    def scaled(self) -> bool:
        return self.form != "none"


def _pair(name: str, l0c: str, outputs: tuple[str, ...], chips: tuple[str, ...], doc: str) -> list[QuantMode]:
    return [QuantMode(name, (l0c,), outputs, chips, "scalar", doc),
            QuantMode("V" + name, (l0c,), outputs, chips, "vector", doc + " (per channel)")]


QUANT_MODES: dict[str, QuantMode] = {mode.name: mode for mode in [
    QuantMode("NoQuant", ("float32", "int32"), ("float32", "int32"), _BOTH, "none", "no conversion"),
    QuantMode("F322F16", ("float32",), ("float16",), _BOTH, "none", "cast to half, CAST_RINT"),
    QuantMode("F322BF16", ("float32",), ("bfloat16",), _BOTH, "none", "cast to bfloat16, CAST_RINT"),
    *_pair("DEQF16", "int32", ("float16",), _BOTH, "dequant int32 -> half with M1 (MCB/N shift on 910B)"),
    *_pair("QF322B8_PRE", "float32", ("int8", "uint8"), _BOTH, "quant float -> int8/uint8: M1, s9, + offset"),
    *_pair("REQ8", "int32", ("int8", "uint8"), _BOTH, "requant int32 -> int8/uint8: M1, s9, + offset"),
    *_pair("QF322FP8_PRE", "float32", ("float8_e4m3fn",), _950, "quant float -> fp8 e4m3fn"),
    *_pair("QF322HIF8_PRE", "float32", ("hifloat8",), _950, "quant float -> HiFloat8, half to away"),
    *_pair("QF322HIF8_PRE_HYBRID", "float32", ("hifloat8",), _950, "quant float -> HiFloat8, hybrid round"),
    *_pair("QS322BF16_PRE", "int32", ("bfloat16",), _950, "dequant int32 -> bfloat16"),
    *_pair("QF322F16_PRE", "float32", ("float16",), _950, "scaled cast float -> half"),
    *_pair("QF322BF16_PRE", "float32", ("bfloat16",), _950, "scaled cast float -> bfloat16"),
    *_pair("QF322F32_PRE", "float32", ("float32",), _950, "scaled float -> float"),
]}

# Modes whose float result the docs say does "not support INF_NAN mode" (asc_copy_l0c2gm_arch_*.md).
_NO_INF_NAN = {"910B": {"F322F16", "F322BF16", "DEQF16", "VDEQF16"},
               "950": {"F322BF16", "DEQF16", "VDEQF16"}}
# Modes where 910B's MCB bit selects the shift-then-int16 path (it is ignored for QF322B8).
_MCB_MODES = {"DEQF16", "VDEQF16", "REQ8", "VREQ8"}
# Modes whose result adds the quant word's offset.
_OFFSET_MODES = {"QF322B8_PRE", "VQF322B8_PRE", "REQ8", "VREQ8"}


def modes_for_chip(chip: str) -> list[str]:
    """The quant mode names *chip* has."""
    return [name for name, mode in QUANT_MODES.items() if chip in mode.chips]


def _mode(mode: str, chip: str, l0c_dtype: str) -> QuantMode:
    try:
        spec = QUANT_MODES[mode]
    except KeyError:
        raise UnsupportedModeError(f"unknown quant mode {mode!r} (modes: {', '.join(QUANT_MODES)})") from None
    if chip not in spec.chips:
        raise UnsupportedModeError(f"quant mode {mode} is not on {chip} (only {', '.join(spec.chips)})")
    if l0c_dtype not in spec.l0c_dtypes:
        raise UnsupportedModeError(f"quant mode {mode} takes an L0C of {' or '.join(spec.l0c_dtypes)}, "
                                   f"not {l0c_dtype}")
    return spec


def output_dtype(mode: str, l0c_dtype: str, signed: bool = True) -> str:
    """The dtype *mode* writes for an L0C of *l0c_dtype* (int8 modes: by the sign bit)."""
    spec = QUANT_MODES[mode]
    if spec.name == "NoQuant":
        return l0c_dtype
    if spec.outputs == ("int8", "uint8"):
        return "int8" if signed else "uint8"
    return spec.outputs[0]


def float_saturates(mode: str, chip: str, options: dict) -> bool:
    """True if *mode*'s float result saturates on *chip* (documented, or per fixpipe_float_overflow)."""
    return mode in _NO_INF_NAN[chip] or options["fixpipe_float_overflow"] == "saturate"


# ---------------------------------------------------------------------------
# The quant words, per column
# ---------------------------------------------------------------------------


@dataclass
class _Params:
    offset: np.ndarray
    signed: np.ndarray
    mcb: np.ndarray
    n_shift: np.ndarray
    decoded: list
    m1_bits: np.ndarray  # M1 as float32 bits (its 19 bits at 31..13), per column

    @cached_property
    def m1(self) -> tuple:
        """(negative, magnitude, exponent) of M1 per column, for the exact multiply."""
        negative, magnitude, exponent, _, _ = decode_exact(self.m1_bits, "float32")
        return negative, magnitude, exponent


def _params(words, n: int, form: str, chip: str, options: dict) -> _Params:
    if form == "vector":
        words = np.asarray(words, dtype=np.uint64).reshape(-1)
        if words.size != n:
            raise ValueError(f"a vector quant mode needs one word per column: {words.size} words for {n} columns")
        # each distinct word decoded once, in the order of first use (so a bad word faults as column by column
        # would), then spread over the columns
        distinct, first, column = np.unique(words, return_index=True, return_inverse=True)
        order = np.argsort(first, kind="stable")
        rank = np.empty_like(order)
        rank[order] = np.arange(order.size)
        unique = [decode_quant_word(int(w), chip, options) for w in distinct[order]]
        column = rank[column.reshape(-1)]
    else:
        if isinstance(words, np.ndarray):
            if words.size != 1:
                raise ValueError(f"a scalar quant mode takes one word, not {words.size}")
            words = int(words.reshape(-1)[0])
        unique = [decode_quant_word(int(words), chip, options)] if n else []  # (no column: nothing read)
        column = np.zeros(n, dtype=np.int64)
    return _Params(np.array([q.offset for q in unique], dtype=np.int64)[column],
                   np.array([q.signed for q in unique], dtype=bool)[column],
                   np.array([q.mcb for q in unique], dtype=bool)[column],
                   np.array([q.n_shift or 0 for q in unique], dtype=np.int64)[column],
                   [unique[i] for i in column.tolist()],
                   np.array([q.m1_bits << 13 for q in unique], dtype=np.uint32)[column])


# ---------------------------------------------------------------------------
# The stages, on exact values (negative, magnitude, exponent, nan, inf)
# ---------------------------------------------------------------------------


def _exact_int(ints: np.ndarray):
    ints = np.asarray(ints, dtype=np.int64)
    zeros = np.zeros(ints.shape, dtype=bool)
    return (ints < 0, np.abs(ints).astype(np.uint64), np.zeros(ints.shape, dtype=np.int64), zeros, zeros.copy())


def _mcb_shift(ints: np.ndarray, n_shift: np.ndarray, options: dict) -> np.ndarray:
    if options["mcb_shift"] == "floor":
        shifted = ints >> n_shift
    else:
        shifted = np.where(ints < 0, -((-ints) >> n_shift), ints >> n_shift)
    if options["mcb_int16_saturation"] == "int16":
        shifted = np.clip(shifted, -(1 << 15), (1 << 15) - 1)
    return shifted


def _to_fp32(value):
    negative, magnitude, exponent, nan, inf = value
    bits = round_exact(negative, magnitude, exponent, FLOAT_FORMATS["float32"], "ties_even", False, nan, inf)
    return decode_exact(bits.astype(np.uint32), "float32")


def _multiply(value, scale, relu: bool, options: dict):
    """x * M1 for x >= 0, x * M2 (0 with ReLU, else M1) otherwise, exactly."""
    negative, magnitude, exponent, nan, inf = value
    s_neg, s_mag, s_exp = (np.broadcast_to(part, magnitude.shape) for part in scale)
    is_negative = negative & ((magnitude != 0) | inf)
    zeroed = is_negative & relu
    out_neg = negative ^ s_neg
    out_mag = magnitude * s_mag
    out_exp = exponent + s_exp
    zero_scale = (s_mag == 0) | zeroed
    as_product = options["relu_zero_sign"] == "product_sign"
    # x * 0 for x = inf is NaN as a product; a ReLU that writes +0 gives +0 even for -inf
    out_nan = nan | (inf & zero_scale & (as_product | ~zeroed))
    out_inf = inf & ~zero_scale
    out_mag = np.where(zeroed, np.uint64(0), out_mag)
    if not as_product:
        out_neg = np.where(zeroed, False, out_neg)
    return out_neg, out_mag, out_exp, out_nan, out_inf


def _relu_only(value, options: dict):
    negative, magnitude, exponent, nan, inf = value
    zeroed = negative & ((magnitude != 0) | inf) & ~nan
    keep_sign = options["relu_zero_sign"] == "product_sign"
    return (np.where(zeroed, keep_sign, negative), np.where(zeroed, np.uint64(0), magnitude), exponent,
            nan, inf & ~zeroed)


def _convert(value, out_dtype: str, mode: str, chip: str, params: _Params | None, options: dict) -> np.ndarray:
    negative, magnitude, exponent, nan, inf = value
    if out_dtype in ("int8", "uint8"):
        s9 = round_to_s9(value, options["int8_rounding"])
        return add_offset_saturate(s9, params.offset, params.signed)
    saturate = float_saturates(mode, chip, options)
    if out_dtype == "hifloat8":
        # HiF8 rounds from float32 bits (Cast.md's rule reads the fp32 fields), so round to fp32 first
        bits32 = round_exact(negative, magnitude, exponent, FLOAT_FORMATS["float32"], "ties_even", False, nan, inf)
        encode = formats.f32_to_hif8_hybrid if mode.endswith("HYBRID") else formats.f32_to_hif8_half_away
        return encode(bits32.astype(np.uint32), saturate)
    rounding = options["fixpipe_fp8_rounding"] if out_dtype == "float8_e4m3fn" else "ties_even"
    bits = round_exact(negative, magnitude, exponent, FLOAT_FORMATS[out_dtype], rounding, saturate, nan, inf)
    return bits.astype(BITS_DTYPE[out_dtype])


def _chosen_output(spec: QuantMode, output: str | None, options: dict) -> str | None:
    if output is None or output in spec.outputs:
        return output
    if spec.name.endswith("QF322FP8_PRE") and output == "float8_e5m2":
        if options["fp8_e5m2_output"] == "allow":
            return output
        raise UnsupportedModeError(f"{spec.name} writes float8_e4m3fn only (the Fixpipe page and "
                                   "CheckFixpipeQuantParams); option fp8_e5m2_output=allow lets it write e5m2")
    raise UnsupportedModeError(f"quant mode {spec.name} cannot write {output} (it writes {', '.join(spec.outputs)})")


def _pipeline(values, l0c_dtype: str, mode: str, words, relu: bool, chip: str, options: dict, trace=None,
              output: str | None = None):
    spec = _mode(mode, chip, l0c_dtype)
    output = _chosen_output(spec, output, options)
    bits = np.asarray(values).astype(np.uint32)
    if bits.ndim != 2:
        raise ValueError(f"expected an (m, n) block of L0C bits, got shape {bits.shape}")
    n = bits.shape[1]
    note = trace.append if trace is not None else (lambda item: None)
    if spec.name == "NoQuant":
        out = bits
        if relu:
            if l0c_dtype == "int32":
                out = np.maximum(bits.view(np.int32), 0).astype(np.uint32)
            else:
                negative, magnitude, exponent, nan, inf = _relu_only(decode_exact(bits, "float32"), options)
                out = round_exact(negative, magnitude, exponent, FLOAT_FORMATS["float32"], "ties_even", False,
                                  None, inf).astype(np.uint32)
                out = np.where(nan, bits, out)  # a NaN passes unchanged
            note(("relu", "ReLU: max(x, 0)"))
        return out, l0c_dtype, None
    params = _params(words, n, spec.form, chip, options) if spec.scaled else None
    if trace is None and l0c_dtype == "int32" and spec.scaled:
        fast = _int32_scaled_to_half(bits, spec, params, relu, chip, options)
        if fast is not None:
            return fast, spec.outputs[0], params
    if l0c_dtype == "int32":
        ints = bits.view(np.int32).astype(np.int64)
        if chip == "910B" and spec.name in _MCB_MODES and params.mcb.any():
            shifted = _mcb_shift(ints, params.n_shift[None, :], options)
            ints = np.where(params.mcb[None, :], shifted, ints)
            note(("shift", ints))
        value = _exact_int(ints)
        if options["fixpipe_multiply"] == "fp32_rounded":
            value = _to_fp32(value)
            note(("to float32", value))
    else:
        value = decode_exact(bits, "float32")
    if spec.scaled:
        value = _multiply(value, params.m1, relu, options)
        note(("multiply", value))
        if options["fixpipe_multiply"] == "fp32_rounded":
            value = _to_fp32(value)
            note(("round product", value))
    elif relu:
        value = _relu_only(value, options)
        note(("relu", value))
    signed = bool(params.signed[0]) if params is not None else True
    out_dtype = output_dtype(spec.name, l0c_dtype, signed)
    if output == "float8_e5m2":
        out_dtype = output
    out = _convert(value, out_dtype, spec.name, chip, params, options)
    return out, out_dtype, params


_HALF_FORMATS = {"bfloat16": FLOAT_FORMATS["bfloat16"], "float16": FLOAT_FORMATS["float16"]}


def _int32_scaled_to_half(bits: np.ndarray, spec: QuantMode, params: _Params, relu: bool, chip: str,
                          options: dict) -> np.ndarray | None:
    """The common dequantisation (int32 L0C, x M1 per column or one word, to bfloat16 or float16, fp32_rounded,
    no ReLU, no MCB shift) in float32 arithmetic, or None where it does not apply.  The same bits as the exact
    path: an int32 converts to float32 with one rounding to nearest even, and x * M1 is one IEEE float32 product
    rounded the same way; every M1 is normal or zero (decode_quant_word refuses the others), so a product of an
    integer is zero, normal or past the largest float32 (inf), never subnormal, and the host's flush-to-zero
    modes cannot change it; the last rounding is on the bits."""
    if relu or options["fixpipe_multiply"] != "fp32_rounded" or spec.outputs[0] not in _HALF_FORMATS:
        return None
    if chip == "910B" and spec.name in _MCB_MODES and params.mcb.any():
        return None
    m1 = params.m1_bits.view(np.float32)
    with np.errstate(over="ignore"):
        product = bits.view(np.int32).astype(np.float32) * m1[None, :]
    return _f32_to_half_bits(product.view(np.uint32), spec.outputs[0], float_saturates(spec.name, chip, options))


def _f32_to_half_bits(bits: np.ndarray, out_dtype: str, saturate: bool) -> np.ndarray:
    """float32 bits that are zero, normal or inf (no NaN) to bfloat16 / float16 bits, nearest even; overflow and
    inf are +-max when ``saturate``, else +-inf."""
    fmt = _HALF_FORMATS[out_dtype]
    if out_dtype == "bfloat16":
        # the same exponent range: round off the low 16 bits, sign and all (a magnitude of at most inf carries
        # no further than inf's code, never into the sign); past the largest finite value that is inf's code
        out = bits >> np.uint32(16)
        out &= np.uint32(1)
        out += bits
        out += np.uint32(0x7FFF)
        out >>= np.uint32(16)
        if saturate:
            code = np.minimum(out & np.uint32(0x7FFF), np.uint32(fmt.max_code))
            out &= np.uint32(0x8000)
            out |= code
        return out.astype(np.uint16)
    sign = (bits >> np.uint32(16)) & np.uint32(0x8000)
    code = _f32_magnitude_to_f16(bits & np.uint32(0x7FFFFFFF))
    over = code > np.uint32(fmt.max_code)
    code = np.where(over, np.uint32(fmt.max_code if saturate else fmt.inf_code), code)
    return (sign | code).astype(np.uint16)


def _f32_magnitude_to_f16(mag: np.ndarray) -> np.ndarray:
    """float32 magnitudes (zero, normal or inf) to float16 codes, nearest even; past the largest float16 a code
    above 0x7BFF (the caller makes it inf or max)."""
    exponent = (mag >> np.uint32(23)).astype(np.int32) - 127
    significand = (mag & np.uint32(0x7FFFFF)) | np.uint32(0x800000)  # 24 bits, value = significand * 2**(e-23)
    # the float16 quantum: 2**(e - 10) for a normal result, 2**-24 below 2**-14 (subnormals)
    shift = np.clip(np.maximum(exponent, -14) - 10 - (exponent - 23), 13, 25).astype(np.uint32)
    quotient = significand >> shift
    remainder = significand & ((np.uint32(1) << shift) - np.uint32(1))
    half = np.uint32(1) << (shift - np.uint32(1))
    up = (remainder > half) | ((remainder == half) & ((quotient & np.uint32(1)) == 1))
    rounded = quotient + up.astype(np.uint32)
    # normal: ((biased exponent - 1) << 10) + the rounded significand with its hidden bit, which adds the
    # exponent's last 1 and carries into the next binade
    field = np.maximum(exponent + 14, 0).astype(np.uint32)
    code = np.where(exponent >= -14, (field << np.uint32(10)) + rounded, rounded)
    code = np.where(exponent > 15, np.uint32(0x7C00), code)  # past float16's range (and inf)
    return np.where(mag == 0, np.uint32(0), code)


def quantize(values: np.ndarray, l0c_dtype: str, mode: str, words, relu: bool, chip: str,
             options: dict, output: str | None = None) -> tuple[np.ndarray, str]:
    """Fixpipe (m, n) L0C element bits through *mode*: (the output element bits, their dtype).

    *words* is the scalar quant word (an int) or, for a V mode, one uint64 per column; modes
    without a scale ignore it. An int8 mode's dtype follows bit 46 of the first column's word
    (each column is saturated by its own word's sign bit). *output* may name the destination
    dtype; QF322FP8_PRE takes float8_e5m2 only under option fp8_e5m2_output=allow.
    """
    out, out_dtype, _ = _pipeline(values, l0c_dtype, mode, words, relu, chip, options, output=output)
    return out, out_dtype


# ---------------------------------------------------------------------------
# One element, step by step (for explain)
# ---------------------------------------------------------------------------


def _exact_text(value) -> str:
    negative, magnitude, exponent, nan, inf = (np.asarray(v).reshape(-1)[0] for v in value)
    if nan:
        return "NaN"
    if inf:
        return "-inf" if negative else "+inf"
    exact = Fraction(int(magnitude)) * Fraction(2) ** int(exponent)
    text = repr(float(exact)) if float(exact) == exact else str(exact)
    return ("-" if negative else "") + text


def element_steps(value_bits: int, l0c_dtype: str, mode: str, word, relu: bool, chip: str,
                  options: dict) -> list[tuple[str, str]]:
    """The steps one L0C element goes through in *mode*, as (step, what happens) pairs.

    *word* is the element's own quant word (its column's word for a V mode).
    """
    spec = _mode(mode, chip, l0c_dtype)
    bits = np.array([[int(value_bits) & 0xFFFFFFFF]], dtype=np.uint32)
    words = np.array([int(word)], dtype=np.uint64) if spec.form == "vector" else (int(word) if word is not None else 0)
    trace: list = []
    out, out_dtype, params = _pipeline(bits, l0c_dtype, mode, words, relu, chip, options, trace)
    if l0c_dtype == "int32":
        first = f"L0C int32 {int(bits.view(np.int32)[0, 0])} ({int(bits[0, 0]):#010x})"
    else:
        first = f"L0C float32 {_exact_text(decode_exact(bits, 'float32'))} ({int(bits[0, 0]):#010x})"
    steps = [("L0C", first)]
    if params is not None:
        q = params.decoded[0]
        steps.append(("quant word", f"{q.word:#018x}: " + "; ".join(
            f"{name} (bits {first_bit + width - 1}..{first_bit}) = {value:#x}: {meaning}"
            for first_bit, width, name, value, meaning in q.fields)))
    for name, value in trace:
        if name == "shift":
            steps.append(("MCB shift", f"int32 >> {params.n_shift[0]} ({options['mcb_shift']}), "
                          f"{'saturated to int16' if options['mcb_int16_saturation'] == 'int16' else 'not saturated'}"
                          f": {int(np.asarray(value).reshape(-1)[0])}"))
        elif name == "to float32":
            steps.append(("to float", f"int -> float32, ties to even: {_exact_text(value)}"))
        elif name == "multiply":
            negative = bool(decode_exact(bits, l0c_dtype)[0].reshape(-1)[0])
            which = "M2 (0: ReLU)" if negative and relu else f"M1 ({params.decoded[0].m1!r})"
            steps.append(("multiply", f"x * {which} = {_exact_text(value)} (exact)"))
        elif name == "round product":
            steps.append(("round", f"product rounded to float32, ties to even: {_exact_text(value)}"))
        elif name == "relu":
            steps.append(("ReLU", "max(x, 0)" if isinstance(value, str) else f"max(x, 0) = {_exact_text(value)}"))
    out_bits = int(np.asarray(out).reshape(-1)[0])
    if out_dtype in ("int8", "uint8"):
        q = params.decoded[0]
        s9 = int(round_to_s9(trace_value(trace), options["int8_rounding"]).reshape(-1)[0])
        steps.append(("round to s9", f"round ({options['int8_rounding']}) and saturate to [-256, 255]: {s9}"))
        if spec.name in _OFFSET_MODES:
            steps.append(("+ offset", f"{s9} + {q.offset} = {s9 + q.offset}"))
        steps.append(("saturate", f"to {out_dtype} [{-128 if q.signed else 0}, {127 if q.signed else 255}]"))
        shown = out_bits - 256 if out_dtype == "int8" and out_bits >= 128 else out_bits
        steps.append(("output", f"{out_dtype} {shown} ({out_bits:#04x})"))
    elif spec.name == "NoQuant":
        shown = formats.decode(np.array([out_bits], dtype=np.uint32), out_dtype)[0]
        shown = int(shown) if out_dtype == "int32" else float(shown)
        steps.append(("output", f"{out_dtype} {shown!r} ({out_bits:#010x}), no conversion"))
    else:
        saturate = float_saturates(spec.name, chip, options)
        rule = {"hifloat8": "hybrid round" if spec.name.endswith("HYBRID") else "half to away",
                "float8_e4m3fn": options["fixpipe_fp8_rounding"].replace("_", " ")}.get(out_dtype, "ties to even")
        steps.append(("convert", f"to {out_dtype}, {rule}, {'saturating' if saturate else 'inf/NaN kept'}"))
        width = np.dtype(BITS_DTYPE[out_dtype]).itemsize * 2
        value = float(formats.decode(np.array([out_bits], dtype=BITS_DTYPE[out_dtype]), out_dtype)[0])
        steps.append(("output", f"{out_dtype} {value!r} ({out_bits:#0{width + 2}x})"))
    return steps


def trace_value(trace: list):
    """The last exact value a pipeline trace recorded (the input to the output conversion)."""
    for name, value in reversed(trace):
        if isinstance(value, tuple):
            return value
    raise ValueError("no value recorded")

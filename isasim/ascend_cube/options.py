"""The named choices for what public Ascend material does not settle, each with its default and why.

Every behaviour the docs, the official goldens and the impl headers leave open (facts/ascend.md
sections 3 and 9) is an option here rather than a silent guess. A run's configuration carries
the resolved settings (``{"chip": ..., "options": {...}}``), so explain and traces show them.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..core.errors import ConfigError

__all__ = ["Option", "OPTIONS", "CHIP_NAMES", "resolve_options", "default_options"]

CHIP_NAMES = ("910B", "950")


@dataclass(frozen=True)
class Option:
    """One open behaviour: its settings, the default, the public source the default rests on."""

    name: str
    choices: tuple[str, ...]
    default: str
    source: str
    doc: str


_OPTION_LIST = (
    Option(
        "mmad_float_accumulation", ("exact_single_rounding", "fp32_per_k_step", "fp32_per_fractal"),
        "exact_single_rounding",
        "no public statement of the order or width (facts 9.1); the official goldens use numpy float32 "
        "matmul, whose blocked order is not the hardware's either",
        "exact_single_rounding: the exact sum of the exact products and L0C, rounded once to fp32 (ties "
        "to even); fp32_per_k_step: L0C rounded to fp32 after each k, in k order (PTO CPU model's loop); "
        "fp32_per_fractal: rounded after each K0 block of one fractal (16 fp16/bf16, 32 8-bit values)"),
    Option(
        "mmad_subnormals", ("keep", "flush"), "keep",
        "not documented for the cube (facts 9.1); the goldens' numpy float32 matmul keeps subnormals",
        "keep: subnormal inputs and results keep their value; flush: they become zeros of their sign"),
    Option(
        "l0c_int32_overflow", ("saturate", "wrap"), "saturate",
        "Mmad.md: 'for integer types there is only saturation mode' (the goldens use numpy int32, which wraps)",
        "what an int32 L0C sum past the int32 range becomes"),
    Option(
        "int8_rounding", ("ties_even", "ties_away"), "ties_even",
        "the ASC fixpipe_l0c2gm goldens and OPSNN f32_2_s9 use np.round (ties to even); the docs do not say",
        "rounding of the scaled value to the s9 intermediate in REQ8 / QF322B8_PRE"),
    Option(
        "mcb_shift", ("floor", "toward_zero"), "floor",
        "ASC fixpipe_l0c2gm gen_data_s322*.py shift with arithmetic >> (floor); the PTO a2a3 tmov golden "
        "truncates toward zero",
        "how int32 >> N rounds a negative value when MCB = 1 (910B DEQF16 / REQ8)"),
    Option(
        "mcb_n_code", ("plus_one", "raw"), "plus_one",
        "随路量化.md table 1: N 'range [1,16] (b'0000 means 1, b'1111 means 16)'; the ASC and PTO goldens "
        "shift by the raw 0..15",
        "the shift the 4-bit N field (bits 32..35) means: the code plus one, or the code itself"),
    Option(
        "mcb_int16_saturation", ("int16", "none"), "int16",
        "随路量化.md table 1: MCB = 1 means 'int32 >> N, then to int16, then to float'",
        "whether the shifted value saturates to int16 before the conversion to float"),
    Option(
        "fixpipe_float_overflow", ("saturate", "inf_nan"), "saturate",
        "asc_copy_l0c2gm_arch_2201/3510.md: F322F16/F322BF16/DEQF16 'do not support INF_NAN mode' (950: "
        "F322F16 does); the goldens clip to the fp16 range",
        "float outputs of modes whose INF_NAN support is documented or unknown: saturate (overflow and "
        "inf -> +-max, NaN -> 0) or pass inf/NaN through; modes documented without INF_NAN always saturate"),
    Option(
        "fixpipe_multiply", ("fp32_rounded", "exact"), "fp32_rounded",
        "the official goldens (ASC gen_data_*.py, OPSNN qbmmv3 golden) convert int32 to float32 and "
        "multiply in float32; the QF322F32_PRE '1/1000' remark says the datapath is narrower still (facts 9.3)",
        "fp32_rounded: int32 -> fp32 (ties to even), x * M1 rounded to fp32, then the output conversion; "
        "exact: the exact product, rounded once by the output conversion (HiFloat8 outputs still round from "
        "the float32 value, as Cast.md's rule reads float32 fields)"),
    Option(
        "fixpipe_fp8_rounding", ("ties_even", "ties_away"), "ties_even",
        "the Fixpipe FP8 rounding is not documented; the vector Cast and SIMT float->fp8 conversions are "
        "CAST_RINT (Cast.md, __asc_cvt_float2_to_fp8x2.md)",
        "rounding of QF322FP8_PRE's conversion to float8_e4m3fn"),
    Option(
        "fp8_e5m2_output", ("reject", "allow"), "reject",
        "the Fixpipe page and CheckFixpipeQuantParams (dav_3510) allow only e4m3fn; the Matmul API's "
        "quant_processor_fixpipe.h maps e5m2 to QF322FP8_PRE as well (facts 8.5)",
        "whether QF322FP8_PRE may write float8_e5m2"),
    Option(
        "gm_atomic_int_overflow", ("wrap", "saturate"), "wrap",
        "SetAtomicAdd's pages do not say; the goldens accumulate in numpy integers, which wrap",
        "what an integer atomic-add sum in GM past its dtype's range becomes"),
    Option(
        "gm_atomic_float_overflow", ("inf_nan", "saturate"), "inf_nan",
        "SetAtomicAdd's pages do not say; the goldens add in numpy floats (IEEE: overflow -> inf)",
        "a float atomic-add sum past the dtype's range: inf (IEEE), or +-max with NaN -> 0"),
    Option(
        "relu_zero_sign", ("positive_zero", "product_sign"), "positive_zero",
        "ReLU is M2 = 0 in the scale multiply (随路量化与随路ReLU场景组合.md); the sign of x * 0 for a "
        "negative x is not documented",
        "positive_zero: a ReLU-zeroed element is +0; product_sign: it is x * (+0), i.e. -0 for negative x"),
)

_OPTION_LIST += (
    Option(
        "sync_check", ("on", "off"), "on",
        "the SetFlag/WaitFlag and PipeBarrier pages: instructions of different pipes with a data dependence need "
        "this synchronisation (without it the NPU computes garbage or hangs)",
        "on: every buffer and GM access is checked for a SetFlag/WaitFlag or PipeBarrier chain to the earlier "
        "conflicting accesses of other pipes (fault SYNC_RACE); off: the pipes are not checked"),
    Option(
        "pipe_order", ("program", "barrier"), "program",
        "each pipe runs its queue in order; whether an instruction's reads and writes complete before the next "
        "of the same pipe starts is not stated (PipeBarrier's page: instructions of the same pipe with a data "
        "dependence need a PipeBarrier)",
        "program: a pipe's instructions are ordered by program order; barrier: only by a PipeBarrier of the pipe "
        "(or a SetFlag/WaitFlag chain), as PipeBarrier's page asks"),
)

OPTIONS: dict[str, Option] = {option.name: option for option in _OPTION_LIST}


def default_options() -> dict[str, str]:
    """Every option at its default."""
    return {name: option.default for name, option in OPTIONS.items()}


def resolve_options(chip_name: str, given: dict | None) -> dict[str, str]:
    """The full option settings for *chip_name*: *given* over the defaults, each value checked.

    Raises ConfigError (one line naming the option and its choices) for an unknown chip,
    option or value.
    """
    if chip_name not in CHIP_NAMES:
        raise ConfigError(f"unknown Ascend chip {chip_name!r} (choices: {', '.join(CHIP_NAMES)})")
    resolved = default_options()
    for name, value in (given or {}).items():
        option = OPTIONS.get(name)
        if option is None:
            raise ConfigError(f"unknown ascend_cube option {name!r} (options: {', '.join(OPTIONS)})")
        if value not in option.choices:
            raise ConfigError(f"option {name} cannot be {value!r} (choices: {', '.join(option.choices)})")
        resolved[name] = value
    return resolved

"""The ascend_cube configuration: the Ascend chips isasim models, with the capacities and features their
instructions check, and configure().

Every number here is from public Huawei material (the sources are named beside each
field); ``docs/ascend_cube/`` says which facts are documented and which are choices.  What
public material leaves open is not here but in :mod:`.options`, whose settings configure()
resolves into the configuration.

- ``910B``: Atlas A2/A3, ``__NPU_ARCH__`` 2201.
- ``950``: Ascend 950PR/950DT, ``__NPU_ARCH__`` 3510.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..core.errors import ConfigError
from .options import resolve_options

KIB = 1024


@dataclass(frozen=True)
class Chip:
    """One chip model.

    buffers:  byte size of each on-chip buffer (L1, L0A, L0B, L0C, the bias table BT and the
              fixpipe buffer FB), from the Ascend C buffer-structure pages and the PTO limits.
    quant_params_per_pass: how many per-channel quant words one Fixpipe pass takes from FB
              (the Ascend C impl checks 256 on 2201 and 1024 on 3510).
    a_layout: the fractal layout of A in L0A (Zz on 2201, Nz on 3510); B is Zn, C is Nz on both.
    quant_modes: the Fixpipe quantPre modes the chip has (each V-prefixed one is its vector form).
    mmad_types:  (A, B, L0C) dtype triples Mmad accepts.
    fixpipe_types: (L0C dtype, output dtype) pairs Fixpipe writes.
    quant_word_has_mcb: whether the 64-bit quant word carries the N shift and MCB (2201 only).
    transpose_types: the element types LoadData can transpose on the way to L0A/L0B.
    """

    name: str
    arch: int
    title: str
    buffers: dict
    quant_params_per_pass: int
    a_layout: str
    quant_modes: tuple[str, ...]
    mmad_types: tuple[tuple[str, str, str], ...]
    fixpipe_types: tuple[tuple[str, str], ...]
    quant_word_has_mcb: bool
    transpose_types: tuple[str, ...]
    bias_types: tuple[tuple[str, str], ...]  # (L1 dtype, BT dtype) pairs of DataCopy L1 -> BT


# modes both chips have, scalar and vector forms
_COMMON_MODES = ("NoQuant", "F322F16", "F322BF16", "DEQF16", "VDEQF16", "QF322B8_PRE", "VQF322B8_PRE",
                 "REQ8", "VREQ8")
_950_MODES = ("QS322BF16_PRE", "VQS322BF16_PRE", "QF322F16_PRE", "VQF322F16_PRE", "QF322BF16_PRE",
              "VQF322BF16_PRE", "QF322F32_PRE", "VQF322F32_PRE", "QF322FP8_PRE", "VQF322FP8_PRE",
              "QF322HIF8_PRE", "VQF322HIF8_PRE", "QF322HIF8_PRE_HYBRID", "VQF322HIF8_PRE_HYBRID")
_FP8 = ("float8_e4m3fn", "float8_e5m2")

CHIPS = {
    "910B": Chip(
        name="910B", arch=2201, title="Atlas A2/A3 (910B, arch 2201)",
        buffers={"L1": 512 * KIB, "L0A": 64 * KIB, "L0B": 64 * KIB, "L0C": 128 * KIB, "BT": 1 * KIB, "FB": 2 * KIB},
        quant_params_per_pass=256, a_layout="Zz", quant_modes=_COMMON_MODES,
        mmad_types=(("int8", "int8", "int32"), ("float16", "float16", "float32"),
                    ("bfloat16", "bfloat16", "float32"), ("float32", "float32", "float32")),
        fixpipe_types=(("float32", "float32"), ("float32", "float16"), ("float32", "bfloat16"),
                       ("float32", "int8"), ("float32", "uint8"), ("int32", "int32"), ("int32", "float16"),
                       ("int32", "int8"), ("int32", "uint8")),
        quant_word_has_mcb=True, transpose_types=("float16", "bfloat16"),
        bias_types=(("float16", "float32"), ("float32", "float32"), ("int32", "int32"))),
    "950": Chip(
        name="950", arch=3510, title="Ascend 950PR/950DT (arch 3510)",
        buffers={"L1": 512 * KIB, "L0A": 64 * KIB, "L0B": 64 * KIB, "L0C": 256 * KIB, "BT": 4 * KIB, "FB": 4 * KIB},
        quant_params_per_pass=1024, a_layout="Nz", quant_modes=_COMMON_MODES + _950_MODES,
        mmad_types=(("int8", "int8", "int32"), ("float16", "float16", "float32"),
                    ("bfloat16", "bfloat16", "float32"), ("float32", "float32", "float32"),
                    *((a, b, "float32") for a in _FP8 for b in _FP8), ("hifloat8", "hifloat8", "float32")),
        fixpipe_types=(("float32", "float32"), ("float32", "float16"), ("float32", "bfloat16"),
                       ("float32", "int8"), ("float32", "uint8"), ("float32", "float8_e4m3fn"),
                       ("float32", "hifloat8"), ("int32", "int32"), ("int32", "float16"), ("int32", "bfloat16"),
                       ("int32", "int8"), ("int32", "uint8")),
        quant_word_has_mcb=False, transpose_types=("float16", "bfloat16"),
        bias_types=(("float16", "float32"), ("bfloat16", "float32"), ("float32", "float32"), ("int32", "int32"))),
}
DEFAULT_CHIP = "910B"

BUFFER_NAMES = ("L1", "L0A", "L0B", "L0C", "BT", "FB")

# the alignment each buffer's operand address must have (Mmad.md: dst 1024 B, fm/filter 512 B, bias 64 B)
ALIGNMENT = {"L0A": 512, "L0B": 512, "L0C": 1024, "BT": 64, "L1": 32, "FB": 64}

ELEMENT_BYTES = {"int8": 1, "uint8": 1, "float8_e4m3fn": 1, "float8_e5m2": 1, "hifloat8": 1, "float16": 2,
                 "bfloat16": 2, "int16": 2, "int32": 4, "float32": 4}


# the orders the pipes' queues may run in (sync/schedule.py)
SCHEDULES = ("inorder", "random")


def configure(config: dict | None) -> dict:
    """``{"chip": "910B" | "950", "options": {NAME: VALUE}}`` checked, with every option's value filled in
    (the trace's config says which settings a run used).  ``options`` may also be the command line's
    ``NAME=VALUE,NAME=VALUE`` text."""
    config = dict(config or {})
    unknown = sorted(set(config) - {"chip", "options", "schedule", "seed"})
    if unknown:
        raise ConfigError(f"unknown ascend_cube config key(s): {', '.join(map(repr, unknown))} "
                          f"(it takes chip, options, schedule and seed)")
    chip = str(config.get("chip", DEFAULT_CHIP))
    if chip not in CHIPS:
        raise ConfigError(f"unknown chip '{chip}' (ascend_cube models {', '.join(CHIPS)})")
    given = config.get("options") or {}
    if isinstance(given, str):
        given = option_text(given)
    if not isinstance(given, dict):
        raise ConfigError("config.options is an object of NAME: VALUE")
    configured = {"chip": chip, "options": resolve_options(chip, given)}
    schedule = str(config.get("schedule") or "inorder")
    if schedule not in SCHEDULES:
        raise ConfigError(f"unknown schedule {schedule!r} (ascend_cube runs its pipes {' or '.join(SCHEDULES)})")
    seed = config.get("seed", 0)
    try:
        seed = int(seed)
    except (TypeError, ValueError):
        raise ConfigError(f"seed must be a whole number, not {seed!r}") from None
    if schedule != "inorder" or seed:  # the default order is left out, so configs and traces stay as they were
        configured.update(schedule=schedule, seed=seed)
    return configured


def option_text(text: str) -> dict:
    """``NAME=VALUE,NAME=VALUE`` (the command line's --option) as {NAME: VALUE}, unchecked."""
    given = {}
    for item in filter(None, (part.strip() for part in text.split(","))):
        name, eq, value = item.partition("=")
        if not eq or not name.strip() or not value.strip():
            raise ConfigError(f"--option {item!r}: expected NAME=VALUE")
        given[name.strip()] = value.strip()
    return given

"""The named options: every open behaviour of facts/ascend.md 3 and 9 is one, each default among
its choices with a source, and bad names or values are refused in one line naming the choices.
(Each setting's effect is tested where the option acts: numerics/test_mmad_math.py and
numerics/test_fixpipe_math.py.)"""

import pytest

from isasim.ascend_cube.options import CHIP_NAMES, OPTIONS, default_options, resolve_options
from isasim.core.errors import ConfigError

REQUIRED = {
    "mmad_float_accumulation": {"exact_single_rounding", "fp32_per_k_step", "fp32_per_fractal"},
    "l0c_int32_overflow": {"wrap", "saturate"},
    "int8_rounding": {"ties_even", "ties_away"},
    "mcb_shift": {"floor", "toward_zero"},
    "mcb_n_code": {"raw", "plus_one"},
    "fixpipe_float_overflow": {"saturate", "inf_nan"},
    "fixpipe_multiply": {"fp32_rounded", "exact"},
}


def test_the_open_behaviours_are_options_with_their_choices():
    for name, choices in REQUIRED.items():
        assert set(OPTIONS[name].choices) == choices
    for name, option in OPTIONS.items():
        assert option.name == name
        assert option.default in option.choices
        assert option.source and option.doc


def test_resolve_gives_every_option_and_keeps_the_given_settings():
    for chip in CHIP_NAMES:
        assert resolve_options(chip, None) == default_options()
        resolved = resolve_options(chip, {"int8_rounding": "ties_away", "l0c_int32_overflow": "wrap"})
        assert resolved["int8_rounding"] == "ties_away" and resolved["l0c_int32_overflow"] == "wrap"
        assert set(resolved) == set(OPTIONS)


@pytest.mark.parametrize("chip,given,message", [
    ("910B", {"int8_round": "ties_even"}, "unknown ascend_cube option 'int8_round'"),
    ("950", {"int8_rounding": "up"}, "option int8_rounding cannot be 'up' (choices: ties_even, ties_away)"),
    ("310P", {}, "unknown Ascend chip '310P' (choices: 910B, 950)"),
])
def test_bad_settings_are_one_line_config_errors(chip, given, message):
    with pytest.raises(ConfigError) as error:
        resolve_options(chip, given)
    assert message in str(error.value) and "\n" not in str(error.value)

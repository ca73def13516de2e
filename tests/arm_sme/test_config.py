"""The "SVE" configuration feature (FEAT_SVE): named, off by default, validated like the others.

What it does to execution (SVE forms legal outside streaming mode, at VL = SVL) is checked against
QEMU in test_infrastructure_vs_qemu.py; this file checks only the configuration itself.
"""

from __future__ import annotations

import pytest

from isasim.arm_sme.config import configure
from isasim.core.errors import ConfigError


def test_sve_is_off_by_default():
    assert configure({"svl": 256}) == {"svl": 256, "features": ["SME2", "SME2p1", "SME_I16I64", "SME_F64F64", "SME_F16F16", "SME_B16B16", "SME_MOP4"]}


@pytest.mark.parametrize("features", [["SME2", "SME_I16I64", "SVE"], ["sve", "sme2", "sme_i16i64"],
                                      "SME2, SME_I16I64, SVE"])
def test_sve_can_be_named_in_any_spelling_the_others_accept(features):
    assert configure({"features": features})["features"] == ["SME2", "SME_I16I64", "SVE"]


def test_an_unknown_feature_names_sve_among_the_known_ones():
    # the known ones in FEATURES' order (the list grows as features land: SME_MOP4, ...)
    with pytest.raises(ConfigError, match=r"unknown arm_sme feature 'SVE2' \(known: SME2, SME2p1, SME_I16I64, SME_F64F64, "
                                          r"SME_F16F16, SME_B16B16, SME_MOP4, SVE, SVE_B16B16[,)]"):
        configure({"features": ["SVE2"]})

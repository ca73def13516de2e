"""The configurations an arm_sme machine can have: its streaming vector length and its features.

``configure`` checks a configuration and completes it with the defaults; the state (state.py), the
semantics and the views read the result, ``{"svl": 512, "features": ["SME2", "SME_I16I64", ...]}``.
"""

from __future__ import annotations

import re

from ..core.errors import ConfigError

CODE_BASE = 0x10000  # where assembled code is placed unless told otherwise
SVLS = (128, 256, 512, 1024, 2048)  # the streaming vector lengths the architecture allows, in bits
DEFAULT_SVL = 512
FEATURES = ("SME2", "SME2p1", "SME_I16I64", "SME_F64F64", "SME_F16F16", "SME_B16B16", "SME_MOP4", "SVE", "SVE_B16B16",
            "SVE_BFSCALE")  # the named features
# SME_I16I64, SME_F64F64 (FMOPA/FMLA of doubles), SME_F16F16 (non-widening half precision into ZA) and
# SME_B16B16 (non-widening BFloat16 into ZA) are optional in the architecture, on unless the config drops
# them, as QEMU's -cpu max has them (measured with QEMU 11.1).  SVE (FEAT_SVE) is off:
# the core isasim models by default has SME without SVE, so the SVE instructions it has (PTRUE,
# LD1W, CNTB...) are UNDEFINED outside streaming mode; with "SVE" listed they run there too, at a
# non-streaming vector length equal to the SVL (context.SmeContext.VL).
# SVE_B16B16 (FEAT_SVE_B16B16: SME2's multi-vector BFMAX/BFMIN/BFMAXNM/BFMINNM/BFCLAMP) is off by default:
# QEMU's -cpu max has it only with SVE on (measured with QEMU 11.1: UNDEFINED under sve=off).
# SVE_BFSCALE (FEAT_SVE_BFSCALE: SME2's BFMUL and BFSCALE of groups) is off by default: QEMU 11.1 has it nowhere.
# SME2p1 (FEAT_SME2p1: MOVAZ, ZERO of ZA vector groups, LUTI2/LUTI4 into strided lists) is on, as QEMU 11.1's
# -cpu max has it (measured: MOVAZ and ZERO ZA.D[w8, 0:1] run there under sve=off).
# SME_MOP4 (FEAT_SME_MOP4, SME2.2's quarter-tile outer products SMOP4A ... FMOP4A, BFMOP4A) is on, as QEMU 11.1's
# -cpu max has it (measured: SMOP4A za0.s, z0.b, z16.b and the FMOP4A/BFMOP4A forms run there under sve=off).
DEFAULT_FEATURES = ("SME2", "SME2p1", "SME_I16I64", "SME_F64F64", "SME_F16F16", "SME_B16B16", "SME_MOP4")


def configure(config: dict | None) -> dict:
    """The configuration with its defaults: ``{"svl": 512, "features": list(DEFAULT_FEATURES)}``."""
    config = dict(config or {})
    unknown = set(config) - {"svl", "features"}
    if unknown:
        raise ConfigError(f"unknown arm_sme config key(s): {', '.join(repr(k) for k in sorted(unknown))} "
                          f"(known: features, svl)")
    svl = config.get("svl", DEFAULT_SVL)
    if isinstance(svl, str):  # decimal digits only: int() would also take "٥١٢" and "5_12"
        svl = int(svl) if re.fullmatch(r"[0-9]{1,5}", svl) else None
    if isinstance(svl, bool) or svl not in SVLS:
        raise ConfigError(f"SVL {config.get('svl')!r} is not a streaming vector length "
                          f"(one of {', '.join(map(str, SVLS))} bits)")
    features = config.get("features", list(DEFAULT_FEATURES))
    if isinstance(features, str):
        features = [f.strip() for f in features.split(",") if f.strip()]
    spelled = {name.upper(): name for name in FEATURES}  # any case: sme2p1 is SME2p1
    features = [spelled.get(str(f).upper(), str(f)) for f in features]
    bad = [f for f in features if f not in FEATURES]
    if bad:
        raise ConfigError(f"unknown arm_sme feature {bad[0]!r} (known: {', '.join(FEATURES)})")
    return {"svl": svl, "features": [f for f in FEATURES if f in features]}

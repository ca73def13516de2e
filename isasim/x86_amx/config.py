"""The x86_amx configuration: the CPU models (which AMX features each Xeon generation has) and configure().

An instruction whose feature the selected model lacks raises #UD, as it does on
that silicon (TDPFP16PS on Emerald Rapids was measured to #UD).  The palette-1
limits below are what CPUID leaves 0x1D and 0x1E report on every model so far.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..core.errors import ConfigError
from ..core.trace import brief

CODE_BASE = 0x400000  # where assembled code is placed unless told otherwise, and a linked function moved


@dataclass(frozen=True)
class CpuModel:
    name: str
    title: str
    features: frozenset[str]
    # CPUID.(1DH,1): palette 1
    max_palette: int = 1
    max_names: int = 8
    bytes_per_row: int = 64
    max_rows: int = 16
    # CPUID.(1EH,0): TMUL limits
    tmul_maxk: int = 16
    tmul_maxn: int = 64


_AMX_BASE = frozenset({"AMX-TILE", "AMX-INT8", "AMX-BF16"})
# The vector features forms/vector.py's forms need (as iced-x86 names the SDM's CPUID bits); every AMX Xeon
# has them: SSE to SSE4.1, AVX-512 (F, BW, DQ, VL, VNNI, BF16, VBMI), AVX-VNNI, FMA, F16C (SDM Vol. 1,
# Sapphire Rapids' CPUID).
VECTOR_FEATURES = frozenset({"SSE", "SSE2", "SSE3", "SSSE3", "SSE4_1", "AVX", "AVX2", "FMA", "F16C", "AVX512F",
                             "AVX512BW", "AVX512DQ", "AVX512VL", "AVX512_VNNI", "AVX512_BF16", "AVX512_VBMI",
                             "AVX_VNNI"})
# The AMX extensions (forms/amx_extensions.py; spec only, no silicon seen but AMX-COMPLEX's backend check)
AMX_EXTENSION_FEATURES = frozenset({"AMX-COMPLEX", "AMX-FP8", "AMX-TF32", "AMX-MOVRS", "AMX-AVX512"})
AMX_FEATURES = _AMX_BASE | {"AMX-FP16"} | AMX_EXTENSION_FEATURES  # the CPUID features an AMX form can need
# The general-purpose features the scalar forms need beyond the base set (CPUID.1:ECX MOVBE, POPCNT;
# 80000001H:ECX LZCNT (ABM); 7:EBX BMI1, BMI2): every AMX Xeon has them (since Haswell).
SCALAR_FEATURES = frozenset({"MOVBE", "POPCNT", "LZCNT", "BMI1", "BMI2"})
_XEON = VECTOR_FEATURES | SCALAR_FEATURES

CPU_MODELS = {
    m.name: m
    for m in (
        CpuModel("sapphire-rapids", "4th Gen Xeon Scalable (Sapphire Rapids)", _AMX_BASE | _XEON),
        CpuModel("emerald-rapids", "5th Gen Xeon Scalable (Emerald Rapids)", _AMX_BASE | _XEON),
        CpuModel("granite-rapids", "Xeon 6 P-core (Granite Rapids)", _AMX_BASE | _XEON | {"AMX-FP16"}),
        # Intel's names: "Intel Xeon 6 SoC" (Granite Rapids-D) adds AMX-COMPLEX to Granite Rapids' AMX;
        # Diamond Rapids (the ISE's future Xeon) has AMX-FP8, -TF32, -MOVRS, -AVX512 and AMX-COMPLEX, the
        # ISE's table listing it for Granite Rapids-D and later Xeons.  Spec only: no silicon seen.
        CpuModel("granite-rapids-d", "Xeon 6 SoC (Granite Rapids-D)", _AMX_BASE | _XEON | {"AMX-FP16", "AMX-COMPLEX"}),
        CpuModel("diamond-rapids", "Xeon (Diamond Rapids), spec only", _AMX_BASE | _XEON | {"AMX-FP16"} | AMX_EXTENSION_FEATURES),
    )
}

DEFAULT_CPU = "emerald-rapids"  # a trace's config "cpu" when it names none


def needs_amx(form) -> bool:
    """Whether ``form`` (an AMX or scalar form) needs an AMX feature: its declared ``feature`` says."""
    return form.feature in AMX_FEATURES


def uses_amx(program) -> bool:
    """Whether any instruction of ``program`` needs an AMX feature (so it needs an AMX host to
    run on silicon, and its TILECFG is worth showing)."""
    return any(needs_amx(ins.form) for ins in program.instructions)


def configure(config: dict | None) -> dict:
    """``config`` checked and completed: {"cpu": a model name}, the default model when it names none."""
    config = dict(config or {})
    unknown = set(config) - {"cpu"}
    if unknown:
        raise ConfigError(f"unknown x86_amx config key(s): {', '.join(repr(k) for k in sorted(unknown))} (known: cpu)")
    name = config.get("cpu", DEFAULT_CPU)
    cpu_model(name)
    return {"cpu": name}


def cpu_model(name: str) -> CpuModel:
    model = CPU_MODELS.get(name) if isinstance(name, str) else None
    if model is None:
        raise ConfigError(f"unknown CPU model {brief(name)} (known: {', '.join(CPU_MODELS)})")
    return model


def model_with_features(amx: set[str] | frozenset[str]) -> str | None:
    """The CPU model whose AMX features are exactly ``amx``, for a host whose family and model isasim does
    not know (a hypervisor may report a made-up one).  Models with the same features (Sapphire and Emerald
    Rapids) differ in nothing isasim simulates, so the newest of them is named; None when no model has
    exactly these features (a host without AMX, or with some AMX feature no model has)."""
    matches = [m.name for m in CPU_MODELS.values() if m.features & AMX_FEATURES == amx]
    return matches[-1] if matches else None

"""What each x86_amx page's form is held to outside isasim, as the reference index lists it.

Encodings: GNU as and objdump (2.40) for every AMX, scalar and vector form (tests/x86_amx/forms,
test_assembler_vs_gnu_as.py), LLVM 22's MC lines and zig's clang for the AMX extensions GNU as 2.40 does not
know.  Execution: the golden traces measured on Emerald Rapids and a Granite Rapids guest (traces/x86_amx, replayed
by tests/test_golden_traces.py; tests/x86_amx/test_evidence.py checks each AMX form is in one), the random programs
the fuzzer compares with this host's silicon (isasim/x86_amx/fuzz: a form is claimed only if its tables draw it),
the host's libm for the rounding built-ins; the extensions have no silicon yet.
"""

from __future__ import annotations

from ..forms.amx_extensions import SPEC_ONLY

SILICON_TRACED = ("AMX-TILE", "AMX-INT8", "AMX-BF16", "AMX-FP16")  # the page groups of the AMX forms
LIBM = ("rint", "nearbyint", "round", "floor", "ceil", "trunc", "lrint", "llrint", "lround", "llround")


def _drawn_by_the_fuzzer() -> set[str]:
    from ..fuzz import amx as fuzz_amx, scalar as fuzz_scalar, vector as fuzz_vector

    core = {kind for kind in fuzz_scalar._KINDS if kind.isalpha()}  # mov, add, sub, ... as the scalar fuzzer names them
    return (core | set(fuzz_scalar.GENERAL_FORMS) | set(fuzz_scalar.STRING_FORMS) | set(fuzz_scalar.BMI_FORMS)
            | set(fuzz_scalar.AVX512_FORMS) | set(fuzz_vector.FORMS) | set(fuzz_amx.TDP_FORMS))


def evidence(page, mnemonic: str) -> str:
    """The oracles of the form behind ``page`` (its mnemonic ``mnemonic``), in a few words."""
    if page.group.endswith(f"({SPEC_ONLY})"):
        return "LLVM MC, clang; spec only, no silicon seen"
    if page.group in SILICON_TRACED:
        return "GNU as, objdump; silicon traces"
    if page.group.startswith("built-in"):
        return "host libm" if mnemonic.rstrip("f") in LIBM or mnemonic in LIBM else ""
    drawn = mnemonic in _drawn_by_the_fuzzer()
    return "GNU as, objdump" + ("; silicon (random programs)" if drawn else "")

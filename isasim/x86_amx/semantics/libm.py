"""The C library's rounding functions as isasim built-ins: what quantisation code around AMX kernels calls
(``lrintf(x * scale)``, ``nearbyintf``, ``roundf``) when the compiler does not inline them.

Each takes its argument in xmm0 (the low 32 bits for a float, 64 for a double) and returns in rax (the
l*/ll* functions, a long) or in the low bits of xmm0 (the rest of zmm0 kept), as the System V ABI passes
them; then returns as RET does.  The values are computed exactly (a float or double is a Python float, and
every integral value a float or double can hold is exact) and rounded once, as the C standard says:

- ``rint``/``nearbyint``/``lrint``/``llrint``: the current rounding direction.  isasim does not model MXCSR
  or the x87 control word's changes (fesetround): the direction is the default, round to nearest, ties to
  even.
- ``round``/``lround``: to nearest, ties away from zero; ``floor``, ``ceil``, ``trunc``: toward -inf, +inf, 0.
- A NaN argument of the float-valued ones gives that NaN made quiet; infinities and zeros (their sign too)
  are returned as they are.
- A long-valued one whose result does not fit (NaN, an infinity, |x| >= 2^63) is unspecified in C; glibc on
  x86-64 gives CVTSS2SI's "integer indefinite" 8000000000000000H, and so does isasim
  (tests/x86_amx/test_libm_builtins.py compares every function with this host's libm through ctypes).

ROUNDING: name -> (argument kind, result kind, function of the argument's value) for the simulator and the
silicon backend's child (oracle/ptrace.py), which run the same definitions.
"""

from __future__ import annotations

import math
import struct
from typing import Callable

from ..context import X86Context
from ..operands import GPR_VIEWS
from .scalar import ret

_RAX = GPR_VIEWS["rax"]
INTEGER_INDEFINITE = 1 << 63
_F32, _F64 = ("f32", 32, "<f", 1 << 22), ("f64", 64, "<d", 1 << 51)  # kind, bits, struct code, quiet bit


def _value(bits: int, kind) -> float:
    return struct.unpack(kind[2], (bits & ((1 << kind[1]) - 1)).to_bytes(kind[1] // 8, "little"))[0]


def _bits(value: float, kind) -> int:
    return int.from_bytes(struct.pack(kind[2], value), "little")


def _nearest_even(x: float) -> float:
    return float(round(x))  # Python's round of a float: exact, ties to even


def _away(x: float) -> float:
    whole = math.floor(abs(x))
    return math.copysign(whole + (1.0 if abs(x) - whole >= 0.5 else 0.0), x)


_INTEGRAL: dict[str, Callable[[float], float]] = {
    "rint": _nearest_even, "nearbyint": _nearest_even, "round": _away,
    "floor": lambda x: float(math.floor(x)), "ceil": lambda x: float(math.ceil(x)),
    "trunc": lambda x: float(math.trunc(x)),
}


def _integral_function(how: Callable[[float], float], kind) -> Callable[[int], int]:
    """bits -> bits of the float-valued function: NaN made quiet, infinities kept, the sign of a zero kept."""

    def apply(bits: int) -> int:
        bits &= (1 << kind[1]) - 1
        x = _value(bits, kind)
        if math.isnan(x):
            return bits | kind[3]
        if math.isinf(x):
            return bits
        return _bits(math.copysign(how(x), x), kind)

    return apply


def _long_function(how: Callable[[float], float], kind) -> Callable[[int], int]:
    """bits -> the 64-bit result of the long-valued function (the integer indefinite where it does not fit)."""

    def apply(bits: int) -> int:
        x = _value(bits, kind)
        if math.isnan(x) or math.isinf(x):
            return INTEGER_INDEFINITE
        whole = int(how(x))
        return whole % (1 << 64) if -(1 << 63) <= whole < (1 << 63) else INTEGER_INDEFINITE

    return apply


ROUNDING: dict[str, tuple[str, str, Callable[[int], int]]] = {}
for _name, _how in _INTEGRAL.items():
    ROUNDING[_name] = ("f64", "f64", _integral_function(_how, _F64))
    ROUNDING[_name + "f"] = ("f32", "f32", _integral_function(_how, _F32))
for _name, _how in (("lrint", _nearest_even), ("llrint", _nearest_even), ("lround", _away), ("llround", _away)):
    ROUNDING[_name] = ("f64", "i64", _long_function(_how, _F64))
    ROUNDING[_name + "f"] = ("f32", "i64", _long_function(_how, _F32))


def call_rounding(name: str, xmm0: int) -> tuple[int | None, int | None]:
    """(new zmm0 or None, new rax or None) of the rounding function ``name`` called with zmm0 = ``xmm0``."""
    argument, result, apply = ROUNDING[name]
    width = 32 if argument == "f32" else 64
    value = apply(xmm0 & ((1 << width) - 1))
    if result == "i64":
        return None, value
    return (xmm0 & ~((1 << width) - 1)) | value, None


def _builtin(name: str) -> Callable:
    argument, result, _apply = ROUNDING[name]
    c_type = {"f32": "float", "f64": "double", "i64": "long long" if name.startswith("ll") else "long"}
    where = "RAX" if result == "i64" else "the low bits of XMM0 (the rest of ZMM0 kept)"
    rule = {"rint": "the current direction (isasim: nearest, ties to even)",
            "nearbyint": "the current direction (isasim: nearest, ties to even), raising no inexact",
            "round": "nearest, ties away from zero", "floor": "toward -infinity", "ceil": "toward +infinity",
            "trunc": "toward zero"}[name.lstrip("l").rstrip("f")]  # lrintf -> rint, floorf -> floor

    def semantics(cpu: X86Context):
        state = cpu.state
        zmm0, rax = call_rounding(name, state.read_vector(0))
        if zmm0 is not None:
            state.write_vector(0, zmm0)
        else:
            state.write_gpr(_RAX, rax)
        return ret(cpu)

    semantics.__name__ = name
    semantics.__doc__ = (
        f"""isasim built-in: {c_type[result]} {name}({c_type[argument]} x), then return as RET does.

        x := XMM0's low {32 if argument == 'f32' else 64} bits
        result := x rounded to an integral value: {rule}
        {where} := result
        RIP := Pop()

    C's {name}, computed exactly and rounded once.  """
        + ("A NaN gives the NaN made quiet; infinities and signed zeros are returned as they are."
           if result != "i64" else
           "Where the result does not fit in 64 bits (a NaN, an infinity, |x| >= 2^63) it is 8000000000000000H, "
           "the integer indefinite glibc's x86-64 version gives."))
    return semantics


SEMANTICS: dict[str, Callable] = {name: _builtin(name) for name in ROUNDING}
SIGNATURES: dict[str, str] = {
    name: f"{'long long' if name.startswith('ll') else 'long' if result == 'i64' else c} {name}({c} x)"
    for name, (argument, result, _f) in ROUNDING.items() for c in (("float" if argument == "f32" else "double"),)}

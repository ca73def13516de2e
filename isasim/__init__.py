"""isasim: instruction-set simulators for matrix engines (x86 AMX, Arm SME2, the Ascend cube).

The teaching API (:mod:`isasim.teaching`) is available from the package itself::

    import isasim
    m = isasim.machine("x86_amx")
    isasim.explain("tdpbusd tmm0, tmm1, tmm2", isa="x86_amx")

Its names are imported on first use, so that ``import isasim`` (the command line's start) stays cheap.
"""

from __future__ import annotations

_TEACHING = ("Explained", "Machine", "Step", "TraceFile", "explain", "load_trace", "machine")
__all__ = [*_TEACHING, "IsasimError"]


def __getattr__(name: str):
    if name in _TEACHING:
        from . import teaching

        return getattr(teaching, name)
    if name == "IsasimError":
        from .core.errors import IsasimError

        return IsasimError
    raise AttributeError(f"module 'isasim' has no attribute {name!r}")

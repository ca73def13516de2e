"""The picture ``isasim explain --svg/--html`` and ``isasim docs`` draw for an arm_sme form."""

from __future__ import annotations

from ...core.explain import Encoding, Figure


def figure(ins, encoding: Encoding, run) -> Figure:
    """The instruction word's bit fields (the picture's first row)."""
    return Figure(ins.text, [[encoding]])

"""The options of ``isasim explain`` that only x86_amx understands, and the settings a worked example reads.

The command adds :data:`OPTIONS` to its parser and hands their values back by name
(``ExplainOptions.isa_options``); :meth:`Settings.of` checks them and joins them with
the options every ISA has (seed, init file, step limit).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from ...core.explain import ExplainError, ExplainOption, ExplainOptions

OPTIONS = (
    ExplainOption("--cpu", "CPU model (default: emerald-rapids, or one that has the instruction's feature)"),
    ExplainOption("--m", "row of the output element C[m][n] to work through (TDP*)", value="count"),
    ExplainOption("--n", "dword column of the output element C[m][n] (TDP*)", value="count"),
    ExplainOption("--shape", "M,K,N in dwords for TDP* and the tile configuration (default 4,4,4); "
                             "ROWS,COLSB for tile loads, stores and TILEZERO (default 4,16)"),
    ExplainOption("--start-row", "TILECFG.start_row for tile loads and stores (default 0)", value="count"),
)
INIT_HELP = "for TDP* its named regions A, B (and C, tilecfg) become the tiles"


def parse_shape(text: str) -> tuple[int, ...]:
    """--shape: M,K,N or ROWS,COLSB, each 1..255."""
    if not re.fullmatch(r"\s*\d+(\s*,\s*\d+){1,2}\s*", text or ""):
        raise ExplainError(f"--shape {text!r}: expected M,K,N (TDP instructions) or ROWS,COLSB (tile loads, "
                           "stores, TILEZERO), e.g. --shape 4,4,4")
    values = tuple(int(x) for x in text.split(","))
    if any(v < 1 or v > 255 for v in values):
        raise ExplainError(f"--shape {text!r}: each number must be 1..255")
    return values


@dataclass(frozen=True)
class Settings:
    """Everything an x86 worked example is built from."""

    cpu: str | None = None
    element: tuple[int | None, int | None] = (None, None)  # (m, n) of a TMUL's output element
    shape: tuple[int, ...] | None = None  # M,K,N (TMUL, TILECFG) or ROWS,COLSB (tile loads, stores, zeroing)
    start_row: int | None = None
    seed: int = 1
    init: Any = None  # an isasim.core.trace.Init
    init_source: str | None = None
    max_steps: int = 10_000

    @classmethod
    def of(cls, options: ExplainOptions) -> "Settings":
        given = options.isa_options
        unknown = sorted(set(given) - {o.dest for o in OPTIONS})
        if unknown:
            raise ExplainError(f"x86_amx's explain has no option {', '.join(unknown)}")
        m, n = given.get("m"), given.get("n")
        if m is not None and m < 0 or n is not None and n < 0:
            raise ExplainError("--m and --n must not be negative")
        shape = given.get("shape")
        if isinstance(shape, str):
            shape = parse_shape(shape)
        start_row = given.get("start_row")
        if start_row is not None and not 0 <= start_row < 256:
            raise ExplainError("--start-row must be 0..255")
        return cls(cpu=given.get("cpu"), element=(m, n), shape=tuple(shape) if shape else None,
                   start_row=start_row, seed=options.seed, init=options.init, init_source=options.init_source,
                   max_steps=options.max_steps)

"""The subsets of an ISA's instructions a campaign fuzzes: those asked for that the other backend can run
here."""

from __future__ import annotations

from typing import Sequence

from ..backends import BACKENDS
from ..errors import ConfigError
from ..generators import CaseGenerator
from ..isa import get_isa


class FuzzUnavailable(ConfigError):
    """The requested subset cannot run on the other backend here."""


def fuzzable_subsets(isa_name: str, generators: Sequence[CaseGenerator], against: str,
             isa_subset: str | None) -> tuple[list[str], dict[str, str]]:
    """The subsets to fuzz, and why the others cannot run against ``against`` here."""
    names = [g.subset for g in generators]
    if isa_subset is not None and isa_subset not in names:
        raise ConfigError(f"unknown subset '{isa_subset}' ({' or '.join(names)})")
    isa = get_isa(isa_name)  # registers the ISA's backends
    backend = BACKENDS.get(against)
    if backend is None:
        raise ConfigError(f"unknown backend '{against}' (known: {', '.join(BACKENDS)})")
    skipped: dict[str, str] = {}
    for g in generators:
        reason = backend.unavailable_reason(isa_name, isa.assemble(g.probe, source="<fuzz>"))
        if reason:
            skipped[g.subset] = reason
    wanted = [isa_subset] if isa_subset else names
    usable = [s for s in wanted if s not in skipped]
    if not usable:
        raise FuzzUnavailable(f"cannot fuzz {' or '.join(wanted)} programs against {against} here: "
                              f"{skipped[wanted[0]]}")
    return usable, {s: r for s, r in skipped.items() if s in wanted}


"""What an ISA's explainer provides (:class:`Explainer`), what ``isasim explain`` passes it, and where to find it.

An ISA's explainer is the module its ISA object's ``explainer()`` hook returns.  It
turns one instruction into an :class:`~isasim.core.explain.model.Explanation` and
lists the reference pages ``isasim docs`` generates; the options only it understands
(x86_amx: the output element, the tile shapes, the start row) it declares in
``OPTIONS``, and the command adds them to its parser and hands their values back
in :attr:`ExplainOptions.isa_options`, so the command names no ISA's option.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from ..errors import ConfigError, IsasimError
from .model import Explanation, ReferencePage


class ExplainError(IsasimError):
    """An instruction or option ``isasim explain`` cannot work with."""


@dataclass(frozen=True)
class ExplainOption:
    """One option an explainer adds to ``isasim explain`` (its value arrives in ``isa_options[dest]``,
    None when not given)."""

    flag: str  # "--start-row"
    help: str
    value: str = "text"  # what it takes: "text", or "count" (a whole number, 0 or more)
    metavar: str | None = None

    @property
    def dest(self) -> str:
        return self.flag.lstrip("-").replace("-", "_")


@dataclass
class ExplainOptions:
    """What the command passes to an explainer, whatever the ISA."""

    seed: int = 1  # of the generated example data
    init: Any = None  # an isasim.core.trace.Init: example data the user gave
    init_source: str | None = None  # where ``init`` came from, for messages and the reproducing command
    max_steps: int = 10_000  # how long the example's set-up may run
    isa_options: dict[str, Any] = field(default_factory=dict)  # the explainer's OPTIONS by dest
    # the ISA's configuration keys given on the command line (its config_options, as `run` takes them:
    # arm_sme's --svl); the explainer validates them through its ISA's configure()
    config: dict[str, Any] = field(default_factory=dict)


class Explainer:
    """What an ISA's ``explainer()`` hook returns (a base class: each ISA's explainer subclasses it)."""

    OPTIONS: tuple[ExplainOption, ...] = ()  # the explain options only this ISA understands
    INIT_HELP: str = ""  # what --init's named regions mean to this ISA ("" if nothing special)
    SCREENSHOTS: tuple[tuple[str, str], ...] = ()  # (file name, instruction): terminal screenshots `isasim docs` makes
    INDEX_INTRO: str = ""  # what the ISA's docs index says before its list of pages

    def explain(self, instruction: str | None, code: bytes | None, options: ExplainOptions) -> Explanation:
        """Explain one instruction, given as assembly text or as its bytes (exactly one of the two)."""
        raise NotImplementedError

    def reference_pages(self) -> list[ReferencePage]:
        """One page per instruction form, in the order of the ISA's reference index."""
        raise NotImplementedError

    def extra_pages(self) -> dict[str, str]:
        """Pages of the ISA's docs beyond one per form (name -> Markdown): ascend_cube's options and qbmm."""
        return {}


# The ISAs with an explainer: those of core.isa.KNOWN_ISAS whose ISA object has the ``explainer`` hook.
# One registry (KNOWN_ISAS), so a new ISA is added in one place.
class _Explainers:
    def __iter__(self):
        from ..isa import KNOWN_ISAS

        return iter([name for name in sorted(KNOWN_ISAS) if _has_explainer(name)])

    def __contains__(self, name) -> bool:
        from ..isa import KNOWN_ISAS

        return name in KNOWN_ISAS and _has_explainer(name)


def _has_explainer(name: str) -> bool:
    from ..isa import get_isa

    return get_isa(name).explainer() is not None


EXPLAINERS = _Explainers()


def explainer(isa: str) -> Explainer:
    """The explainer module of ISA ``isa``, through its ISA object."""
    from ..isa import KNOWN_ISAS, get_isa

    if isa not in KNOWN_ISAS:
        raise ConfigError(f"isasim explain does not know ISA '{isa}' (known: {', '.join(sorted(EXPLAINERS))})")
    found = get_isa(isa).explainer()
    if found is None:
        raise ConfigError(f"ISA {isa} has no explainer")
    return found


def explain(isa: str, instruction: str | None = None, code: bytes | None = None,
            options: ExplainOptions | None = None) -> Explanation:
    return explainer(isa).explain(instruction, code, options or ExplainOptions())


_HEX_RE = re.compile(r"(?:[0-9a-f]{2})+")


def split_instruction_argument(words: list[str], *, force_hex: bool = False) -> tuple[str | None, bytes | None]:
    """The explain argument as assembly text, or as bytes when it is all hex digit pairs
    (spaces, commas and 0x prefixes allowed: ``c4e2695ec1``, ``c4 e2 69 5e c1``)."""
    joined = " ".join(words).strip()
    if not joined:
        raise ExplainError("explain needs an instruction, as assembly text (quoted) or as its bytes in hex")
    compact = re.sub(r"0x|[\s,]+", "", joined.lower())
    # every word a whole number of bytes: "b 0x10010" (a word of one hex digit, then more) is text, not 3 bytes
    groups = [re.sub(r"^0x", "", word) for word in re.split(r"[\s,]+", joined.lower()) if word]
    looks_hex = bool(_HEX_RE.fullmatch(compact)) and all(len(group) % 2 == 0 for group in groups)
    if force_hex or looks_hex:
        if not looks_hex:
            raise ExplainError(f"'{joined}' is not hex bytes (two hex digits per byte, e.g. 'c4 e2 69')")
        return None, bytes.fromhex(compact)
    if re.fullmatch(r"[0-9a-fA-Fx\s,]+", joined) and re.search(r"\d", joined) and not groups[0].isalpha():
        # hex digits, but an odd number of them: meant as bytes, not as a mnemonic
        raise ExplainError(f"'{joined}' is not hex bytes (two hex digits per byte, e.g. 'c4 e2 69')")
    return joined, None

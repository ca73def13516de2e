"""What the x86 explain tests share: explaining an instruction with x86's own options, and picking blocks."""

from __future__ import annotations

from isasim.core.explain import Encoding, ExplainOptions
from isasim.x86_amx.explain import explain

_COMMON = ("seed", "init", "init_source", "max_steps")


def ex(text=None, code=None, *, element=(None, None), **options):
    """``isasim explain`` of ``text`` or ``code``: seed/init/init_source as every ISA has them, the rest
    (cpu, shape, start_row, and element = (m, n)) as x86's explainer options."""
    common = {k: options.pop(k) for k in _COMMON if k in options}
    m, n = element
    return explain(text, code, ExplainOptions(**common, isa_options={"m": m, "n": n, **options}))


def blocks(expl, section, kind):
    return [b for b in expl.section(section).blocks if isinstance(b, kind)]


def fields(expl):
    """(unit name, field name) -> field, over the explanation's encoding."""
    (encoding,) = blocks(expl, "Encoding", Encoding)
    return {(p.name, f.name): f for p in encoding.parts for f in p.fields}

"""The toy's explainer (isasim.core.explain.explainer.Explainer): written last, once core explain settles."""

from __future__ import annotations

OPTIONS = ()
INIT_HELP = ""
SCREENSHOTS = ()


def explain(instruction, code, options):
    raise NotImplementedError


def reference_pages():
    return []

"""The interactive trace page as HTML: one self-contained document (``page_html``) or a notebook fragment
(``fragment_html``), with the model (see model.py) embedded as JSON and the viewer's script and style inline.

No part of the page loads anything from a network: the script, the style and the data are all in the file.
"""

from __future__ import annotations

import html
import json
from functools import lru_cache
from importlib import resources

from ..errors import IsasimError
from ..explain.palette import CYCLE_FILLS, ROLES
from .model import FORMAT


@lru_cache(maxsize=None)
def _asset(name: str) -> str:
    return resources.files(__package__).joinpath(name).read_text(encoding="utf-8")


@lru_cache(maxsize=None)
def _role_css() -> str:
    """The explain palette's role colours for the accounts of written elements (html_block marks a cell with
    class r-<role>, or r-k<i> / r-field<i> for the cycling roles), so a colour means what it means in
    isasim explain's pages."""
    rules = [f".iv-working .r-{name} {{ background: {fill}; font-weight: 700; }}" for name, (fill, _) in ROLES.items()]
    rules += [f".iv-working .r-k{i}, .iv-working .r-field{i} {{ background: {fill}; font-weight: 700; }}"
              for i, fill in enumerate(CYCLE_FILLS)]
    return "\n".join(rules)


def _json_for_script(model: dict) -> str:
    """The model as JSON that cannot end its <script> element early: every "<" is written \\u003c (so no
    "</script>" or "<!--" in a register name or a file name can close or confuse the element), and the
    line separators JavaScript once treated as line ends are escaped too."""
    text = json.dumps(model, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026").replace(
        "\u2028", "\\u2028").replace("\u2029", "\\u2029")


def _check(model: dict) -> None:
    if not isinstance(model, dict) or model.get("format") != FORMAT:
        raise IsasimError(f"page_html takes a model from build_model (format {FORMAT}), "
                          f"not {type(model).__name__}")


def page_html(model: dict) -> str:
    """One HTML document that shows the run in ``model`` and steps it in the browser, with no network."""
    _check(model)
    title = html.escape(str(model.get("title") or "isasim trace"))
    return (
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
        "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
        # the page may run only its own inline script and style, and fetch nothing
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
        "script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:\">\n"
        f"<title>{title} · isasim</title>\n<style>\n{_asset('viewer.css')}\n{_role_css()}\n</style>\n</head>\n<body>\n"
        "<div id=\"isasim-viewer\" class=\"isasim-viewer\"><noscript>This page needs JavaScript to show the "
        "steps of the run.</noscript></div>\n"
        f"<script type=\"application/json\" id=\"isasim-model\">{_json_for_script(model)}</script>\n"
        f"<script>\n{_asset('viewer.js')}\n</script>\n</body>\n</html>\n"
    )


def fragment_html(model: dict, *, height: int = 720) -> str:
    """The viewer for a notebook cell: the page in an <iframe srcdoc>, so that its script and style stay
    apart from the notebook's (and from a second viewer in the same notebook)."""
    document = page_html(model)
    return (f"<iframe class=\"isasim-viewer-frame\" title=\"{html.escape(str(model.get('title') or 'isasim'))}\" "
            f"style=\"width:100%;height:{int(height)}px;border:1px solid #ccc\" "
            f"sandbox=\"allow-scripts\" srcdoc=\"{html.escape(document, quote=True)}\"></iframe>")

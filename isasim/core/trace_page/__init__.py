"""The interactive trace page (issue 31): one self-contained HTML file per run, stepped in the browser.

``build_model`` / ``trace_model`` run a program and record its initial state and each step's byte patches;
``page_html`` writes the page around that model, ``fragment_html`` the same viewer for a notebook cell.
"""

from .html import fragment_html, page_html
from .model import FORMAT, build_model, trace_model, unpack_workings_html, view_offsets

__all__ = ["FORMAT", "build_model", "fragment_html", "page_html", "trace_model", "unpack_workings_html",
           "view_offsets"]

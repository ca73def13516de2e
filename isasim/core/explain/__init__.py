"""``isasim explain`` and ``isasim docs``, whatever the ISA: what an explanation is, how it is run and shown.

An ISA's explainer (the module its ``explainer()`` hook returns; see
:class:`~isasim.core.explain.explainer.Explainer`) turns one instruction into an
:class:`Explanation`: the encoding unit by unit and field by field, the operands, the
operation (the docstring of the semantics function the simulator executes), the
faults it can raise, and a worked example whose numbers come from running the real
:class:`~isasim.core.machine.Machine` on the real instruction.  This package knows
nothing about any ISA.  One job per module:

* :mod:`.model`: the data model, an :class:`Explanation` made of :class:`Section` s of
  blocks (:class:`Paragraph`, :class:`Code`, :class:`Table`, :class:`Grid`,
  :class:`Encoding` of :class:`EncodingUnit` s of :class:`BitField` s, :class:`Check`),
  and a :class:`Figure` (grids and an encoding strip laid out in rows, with arrows);
* :mod:`.explainer`: the explainer protocol, the options the command passes, the registry;
* :mod:`.runner`: the worked example's run on a machine, with before and after;
* :mod:`.palette`: roles and their colours, shared by every renderer;
* the renderers, each dispatching on the block type through a table:
  :mod:`.terminal` (rich, plain text, a screenshot), :mod:`.svg` (the figure),
  :mod:`.html_page` (a self-contained page) and :mod:`.markdown` (a reference page).
"""

from __future__ import annotations

from .explainer import (
    EXPLAINERS, ExplainError, ExplainOption, ExplainOptions, Explainer, explain, explainer,
    split_instruction_argument,
)
from .html_page import render_html
from .markdown import render_markdown
from .model import (
    Arrow, BitField, Cell, Check, Code, Encoding, EncodingUnit, Explanation, Figure, Grid, Paragraph,
    ReferencePage, Section, Table, cell, instruction_figure,
)
from .palette import role_fill, role_style
from .runner import ExampleRun, fault_blocks, run_example, setup_blocks
from .svg import render_svg
from .terminal import grid_lines, print_explanation, render_block, renderables, terminal_svg, to_text

__all__ = [
    "EXPLAINERS", "Arrow", "BitField", "Cell", "Check", "Code", "Encoding", "EncodingUnit", "ExampleRun",
    "ExplainError", "ExplainOption", "ExplainOptions", "Explainer", "Explanation", "Figure", "Grid", "Paragraph",
    "ReferencePage", "Section", "Table", "cell", "explain", "explainer", "fault_blocks", "grid_lines",
    "instruction_figure",
    "print_explanation", "render_block", "render_html", "render_markdown", "render_svg", "renderables",
    "role_fill", "role_style", "run_example", "setup_blocks", "split_instruction_argument", "terminal_svg",
    "to_text",
]

"""isasim explain, whatever the ISA: the data model, the renderers, the option pass-through.

Nothing here uses an ISA: the explanation is built by hand, with an encoding that is
one 32-bit unit whose fields cross byte boundaries (as an A64 instruction's do), and
the explainer is a stand-in.  The x86_amx explainer's tests are in tests/x86_amx/.
"""

from __future__ import annotations

import argparse
import types
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from isasim.cli import explain as explain_cli
from isasim.core.explain import (
    BitField, Cell, Check, Code, Encoding, EncodingUnit, ExplainError, ExplainOption, ExplainOptions, Explanation,
    Figure, Grid, Paragraph, Section, Table, render_block, render_html, render_markdown, render_svg,
    split_instruction_argument, to_text,
)


def word_unit() -> EncodingUnit:
    """A 32-bit word 0x4E9A9400 split as an A64-like instruction: fields that cross byte boundaries."""
    data = (0x4E9A9400).to_bytes(4, "little")
    unit = EncodingUnit(0, data, "instruction word")
    layout = [(31, 1, "Q"), (24, 7, "op"), (16, 8, "Rm"), (10, 6, "opc"), (5, 5, "Rn"), (0, 5, "Rd")]
    unit.fields = [BitField(first, width, name, unit.bits_at(first, width), f"{name} field", role=f"field{i}")
                   for i, (first, width, name) in enumerate(layout)]
    return unit


def hand_made() -> Explanation:
    unit = word_unit()
    grid = Grid("Z0", [[Cell("1", "a"), Cell("2")], [Cell("3"), Cell("4", "c")]])
    expl = Explanation("toy", "TOY z0, z1", "toy z0,z1", unit.data, "a made-up instruction",
                       [("instruction", "toy z0,z1")])
    expl.sections = [
        Section("Encoding", [Paragraph("one word"), Encoding([unit], "Encoding")]),
        Section("Operation", [Code("z0 := z1")]),
        Section("Worked example", [Table(["x", "y"], [[Cell("1", "changed"), "2"]]), grid,
                                   Check("z0[0]", "1", "1")]),
    ]
    expl.figure = Figure("toy", [[Encoding([unit], "Encoding")], [grid]], legend=[("a", "source")])
    return expl


def test_a_field_may_cross_a_byte_boundary():
    unit = word_unit()
    assert unit.width == 32 and unit.fully_split
    fields = {f.name: f for f in unit.fields}
    assert fields["Rm"].bits == "10011010" and fields["opc"].bits == "100101" and fields["Rn"].bits == "00000"
    assert "".join(f.bits for f in unit.fields) == f"{unit.word:032b}"


def test_every_renderer_shows_a_hand_made_explanation():
    expl = hand_made()
    text = to_text(expl)
    assert "instruction word" in text and "10011010" in text and "equal ✓" in text and "0 [1] 2" in text
    svg = render_svg(expl.figure)
    ET.fromstring(svg)
    assert svg.count(">1</text>") >= 1 and ">Rm<" in svg
    html = render_html(expl)
    assert html.startswith("<!DOCTYPE html>") and "<svg" in html and 'class="r-field2 l"' in html
    assert "| +0 | 00 94 9a 4e | instruction word | Q | `0` |" in render_markdown(expl)


def test_a_block_no_renderer_knows_is_refused():
    class Unknown:
        pass

    with pytest.raises(TypeError, match="not an explanation block"):
        render_block(Unknown(), plain=True, width=80)


def test_instruction_argument_is_text_or_hex():
    assert split_instruction_argument(["0a 0b", "0c"]) == (None, bytes.fromhex("0a0b0c"))
    assert split_instruction_argument(["toy", "z0,", "z1"]) == ("toy z0, z1", None)
    for bad in (["c4e"], ["0x1"], []):
        with pytest.raises(ExplainError):
            split_instruction_argument(bad)
    with pytest.raises(ExplainError, match="not hex bytes"):
        split_instruction_argument(["toy"], force_hex=True)


def test_an_explainers_own_options_reach_it_by_name(monkeypatch):
    """explain_cli adds the options the explainer declares and hands their values back in isa_options."""
    seen = {}

    def explain(text, code, options):
        seen.update(options.isa_options, seed=options.seed)
        return hand_made()

    toy = types.SimpleNamespace(OPTIONS=(ExplainOption("--lane", "which lane", value="count"),), INIT_HELP="",
                                SCREENSHOTS=(), explain=explain, reference_pages=lambda: [])
    monkeypatch.setattr(explain_cli, "EXPLAINERS", ["toy"])
    monkeypatch.setattr(explain_cli, "explainer", lambda isa: toy)
    parser = argparse.ArgumentParser()
    sub = parser.add_subparsers()

    def common(p, *, program=True):
        p.add_argument("--isa", default="toy")
        p.add_argument("--no-color", action="store_true")

    explain_cli.register(sub, common)
    args = parser.parse_args(["explain", "toy z0, z1", "--lane", "3", "--seed", "5", "--no-color"])
    assert args.func(args) == 0
    assert seen == {"lane": 3, "seed": 5}
    assert ExplainOptions().isa_options == {}


def test_the_core_explain_package_knows_no_isa():
    root = Path(__file__).resolve().parents[3] / "isasim" / "core" / "explain"
    for path in root.glob("*.py"):
        text = path.read_text(encoding="utf-8")
        imports = [line for line in text.splitlines() if line.lstrip().startswith(("import ", "from "))]
        assert not [line for line in imports if "x86" in line], path.name
        assert "tmm" not in text and "rflags" not in text.lower() and "#UD" not in text, path.name


def test_an_instruction_whose_words_look_like_hex_is_text_unless_every_word_is_whole_bytes():
    from isasim.core.explain.explainer import split_instruction_argument

    assert split_instruction_argument(["b 0x10010"]) == ("b 0x10010", None)  # "b" is one hex digit: text
    assert split_instruction_argument(["c4 e2 69 5e c1"]) == (None, bytes.fromhex("c4e2695ec1"))
    assert split_instruction_argument(["0xc1741418"]) == (None, bytes.fromhex("c1741418"))

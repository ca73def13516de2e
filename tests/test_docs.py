"""The committed reference pages are exactly what the instruction definitions generate."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

from isasim.core.explain import EXPLAINERS, explainer
from isasim.docs import check_docs, generate, write_docs

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"


def test_committed_docs_are_up_to_date(tmp_path):
    written = write_docs(tmp_path / "docs")
    stale = [rel for rel in written
             if not (DOCS / rel).is_file()
             or (DOCS / rel).read_text(encoding="utf-8") != (tmp_path / "docs" / rel).read_text(encoding="utf-8")]
    assert not stale, f"regenerate with 'isasim docs --out docs': {stale[:10]}"
    assert check_docs(DOCS) == []


def test_generation_is_deterministic_and_portable():
    first, second = generate(), generate()
    assert first == second
    for rel, text in first.items():
        assert str(ROOT) not in text and "/work/" not in text and "/tmp/" not in text, rel


def test_screenshots_are_generated_svg():
    files = generate()
    shots = [rel for rel in files if rel.startswith("screenshots/")]
    assert shots
    for rel in shots:
        root = ET.fromstring(files[rel])
        assert root.tag.endswith("svg")


def test_stale_pages_are_reported_and_removed(tmp_path):
    out = tmp_path / "docs"
    write_docs(out)
    isa = sorted(EXPLAINERS)[0]
    page = explainer(isa).reference_pages()[-1].slug
    (out / isa / "gone.md").write_text("old page\n")
    (out / isa / f"{page}.md").write_text("edited by hand\n")
    (out / "screenshots").mkdir(exist_ok=True)
    (out / "screenshots" / "step-other.svg").write_text("<svg/>")  # another command's screenshot: not ours
    assert set(check_docs(out)) == {f"{isa}/gone.md", f"{isa}/{page}.md"}
    write_docs(out)
    assert check_docs(out) == [] and (out / "screenshots" / "step-other.svg").is_file()

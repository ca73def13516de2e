"""The x86_amx reference pages: one per form, each with every section, from the definitions."""

from __future__ import annotations

import xml.etree.ElementTree as ET

from isasim.docs import generate
from isasim.x86_amx.forms import amx, scalar, vector


def test_one_page_per_form_with_every_section():
    files = generate()
    for form in amx.FORMS + scalar.FORMS + list(vector.FORMS):
        slug = getattr(form, "slug", form.mnemonic)  # "{vex} vpdpbusd" is on vex-vpdpbusd.md
        page = files[f"x86_amx/{slug}.md"]
        for heading in ("## Encoding", "## Operands", "## Faults", "## Worked example"):
            assert heading in page, (form.mnemonic, heading)
        assert "Worked example: `isasim explain" in page
        assert form.doc.splitlines()[0] in page
        assert "DIFFERENT" not in page
        ET.fromstring(files[f"x86_amx/{slug}.svg"])
        assert f"({slug}.md)" in files["x86_amx/index.md"]

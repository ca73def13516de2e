"""The x86_amx reference index's evidence column (isasim/x86_amx/explain/evidence.py) says only what is so.

"silicon traces": every AMX form so marked runs in a golden trace measured on silicon (traces/x86_amx, whose
producers tests/test_golden_traces.py checks).  "spec only": exactly the extension forms.  "silicon (random
programs)": the fuzzer's own tables draw the mnemonic (the fuzz tests hold the tables to silicon).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from isasim.x86_amx.explain import reference_pages
from isasim.x86_amx.forms import amx_extensions

TRACES = Path(__file__).resolve().parents[2] / "traces" / "x86_amx"


def _traced_mnemonics() -> set[str]:
    seen = set()
    for path in TRACES.rglob("*.trace.json"):
        trace = json.loads(path.read_text())
        assert trace["producer"].startswith("silicon: "), path
        program = trace.get("program")
        lines = program if isinstance(program, list) else str(program).splitlines()
        seen |= {m.group(1).lower() for line in lines if (m := re.match(r"\s*([A-Za-z][A-Za-z0-9]*)", str(line)))}
    return seen


def test_the_amx_forms_said_measured_are_in_silicon_traces():
    traced = _traced_mnemonics()
    claimed = [page.slug for page in reference_pages() if page.evidence.endswith("silicon traces")]
    assert len(claimed) >= 13
    assert [slug for slug in claimed if slug not in traced] == []


def test_spec_only_is_said_of_the_extensions_and_of_nothing_else():
    spec_only = {page.slug for page in reference_pages() if "spec only" in page.evidence}
    assert spec_only == {getattr(form, "slug", form.mnemonic) for form in amx_extensions.FORMS}

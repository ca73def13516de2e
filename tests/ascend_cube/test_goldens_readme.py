"""goldens/README.md accounts for every vector file: its provenance row, and a known source commit."""

import json
import re
from pathlib import Path

GOLDENS = Path(__file__).parent / "goldens"
README = (GOLDENS / "README.md").read_text()
COMMITS = set(re.findall(r"`([0-9a-f]{40})`", README))


def test_every_vector_file_has_a_provenance_row_and_a_listed_commit():
    files = sorted(p.name for p in GOLDENS.glob("*.json"))
    assert files
    for name in files:
        assert f"| `{name}` |" in README, f"{name} has no row in goldens/README.md"
        source = json.loads((GOLDENS / name).read_text())["source"]
        assert source["commit"] in COMMITS, f"{name}: commit {source['commit']} is not in the README's source table"
        assert source["path"] in README or source["path"].rsplit("/", 1)[-1] in README


def test_folder_stays_small_and_holds_no_code():
    total = sum(p.stat().st_size for p in GOLDENS.iterdir())
    assert total < 2_000_000
    assert {p.suffix for p in GOLDENS.iterdir()} <= {".json", ".md"}

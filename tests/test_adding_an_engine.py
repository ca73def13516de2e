"""docs/adding-an-engine.md's Python blocks run, in order, as one program: the guide's worked example
cannot drift from tests/toy_isa or from the core's contract."""

import re
from pathlib import Path

from isasim.core.isa import KNOWN_ISAS

GUIDE = Path(__file__).resolve().parents[1] / "docs" / "adding-an-engine.md"


def python_blocks(text: str) -> list[str]:
    return re.findall(r"^```python\n(.*?)^```", text, flags=re.S | re.M)


def test_the_guide_has_its_worked_example():
    assert len(python_blocks(GUIDE.read_text())) >= 5


def test_every_python_block_of_the_guide_runs():
    registry = dict(KNOWN_ISAS)  # the guide adds its registry lines; they are taken out again below
    namespace: dict = {}
    try:
        for number, block in enumerate(python_blocks(GUIDE.read_text()), start=1):
            exec(compile(block, f"{GUIDE.name} block {number}", "exec"), namespace)
    finally:
        KNOWN_ISAS.clear()
        KNOWN_ISAS.update(registry)

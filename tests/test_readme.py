"""The README's Python example runs as written."""

import os
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_readme_python_example_runs():
    text = (ROOT / "README.md").read_text()
    code = re.search(r"```python\n(.*?)```", text, re.S).group(1)
    cwd = os.getcwd()
    os.chdir(ROOT)
    try:
        namespace: dict = {}
        exec(compile(code, "README.md", "exec"), namespace)
    finally:
        os.chdir(cwd)
    assert namespace["record"].instruction.text == "ldtilecfg [rcx]"
    assert namespace["m"].state.tile_array(0, "int32")[0, 0] == 4916  # C[0][0] of the seed's data

"""The teaching notebooks of examples/notebooks/ run (nbclient, kernel python3) and print what the example traces
expect.

Each notebook runs from a copy in a temporary directory (the committed file keeps no outputs) with its working
directory examples/notebooks, as a reader opens it.  A code cell tagged ``result:NAME`` shows a numpy array;
its printed value is compared with the trace's expected values, decoded here from the trace JSON with numpy:
C of the x86 and Ascend examples is an int64 product computed apart from the simulator, C of the SMOPA example
was recorded on QEMU.  The cell tagged ``viewer`` must show the trace viewer (its HTML, with the page model).
"""

import html
import json
import re
import shutil
from pathlib import Path

import numpy as np
import pytest

nbformat = pytest.importorskip("nbformat", reason="nbformat not found: pip install -e '.[test]'")
nbclient = pytest.importorskip("nbclient", reason="nbclient not found: pip install -e '.[test]'")
pytest.importorskip("ipykernel", reason="ipykernel (the python3 kernel) not found: pip install -e '.[test]'")

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = ROOT / "examples" / "notebooks"


def expected_region(trace: str, name: str) -> np.ndarray:
    """int32 region ``name`` of a trace's expect (the shape from its init entry)."""
    data = json.loads((ROOT / "examples" / trace).read_text())
    region = next(r for r in data["init"]["memory"] if r.get("name") == name)
    found = next(r for r in data["expect"]["memory"] if int(r["addr"], 16) == int(region["addr"], 16))
    return np.frombuffer(bytes.fromhex(found["hex"]), dtype="<i4").reshape(region["shape"])


@pytest.fixture(scope="module")
def run_notebook(tmp_path_factory):
    done: dict[str, nbformat.NotebookNode] = {}

    def run(name: str) -> nbformat.NotebookNode:
        if name not in done:
            copy = tmp_path_factory.mktemp("notebooks") / name
            shutil.copy(NOTEBOOKS / name, copy)
            notebook = nbformat.read(copy, as_version=4)
            assert not any(cell.get("outputs") for cell in notebook.cells), f"{name} is committed with outputs"
            nbclient.NotebookClient(notebook, timeout=120, kernel_name="python3",
                                    resources={"metadata": {"path": str(NOTEBOOKS)}}).execute()
            done[name] = notebook
        return done[name]

    return run


def tagged(notebook, tag: str):
    cells = [cell for cell in notebook.cells if tag in cell.metadata.get("tags", [])]
    assert len(cells) == 1, f"one cell tagged {tag}"
    return cells[0]


def shown_array(notebook, tag: str) -> np.ndarray:
    """The numpy array the cell tagged ``tag`` shows, read back from its printed repr."""
    result = next(o for o in tagged(notebook, tag).outputs if o.output_type == "execute_result")
    text = result.data["text/plain"]
    assert text.startswith("array(") and "..." not in text, text[:200]  # printed whole, not summarised
    return eval(text, {"array": lambda values, dtype=None: np.array(values, dtype=dtype), "int32": "int32"})


def viewer_model(notebook) -> dict:
    shown = next(o for o in tagged(notebook, "viewer").outputs if o.output_type == "execute_result")
    fragment = shown.data.get("text/html", "")
    found = re.search(r'<script type="application/json" id="isasim-model">(.*?)</script>', html.unescape(fragment),
                      re.S)
    assert fragment.startswith("<iframe") and found, "the viewer cell does not show the trace viewer"
    return json.loads(found.group(1))


def all_text(notebook) -> str:
    parts = []
    for cell in notebook.cells:
        for output in cell.get("outputs", []):
            assert output.output_type != "error", f"{output.ename}: {output.evalue}"
            parts.append(output.get("text") or output.get("data", {}).get("text/plain", ""))
    return "\n".join(parts)


def test_x86_amx_notebook(run_notebook):
    notebook = run_notebook("x86_amx.ipynb")
    want = expected_region("x86_amx/int8_block.trace.json", "C")
    assert np.array_equal(shown_array(notebook, "result:tmm0"), want)  # tmm0 right after TDPBUSD
    assert np.array_equal(shown_array(notebook, "result:C"), want)
    text = all_text(notebook)
    assert "numpy's A @ B equals tmm0: True" in text and "equal to the memory region A: True" in text
    assert "equal ✓" in text  # the explanation's worked element
    model = viewer_model(notebook)
    assert model["isa"] == "x86_amx" and len(model["steps"]) == 9  # the whole kernel, through RET


def test_arm_sme_notebook(run_notebook):
    notebook = run_notebook("arm_sme.ipynb")
    qemu = expected_region("arm_sme/smopa_gemm.trace.json", "C")
    assert np.array_equal(shown_array(notebook, "result:za0"), qemu)  # ZA0.S once the SMOPA loop is done
    assert np.array_equal(shown_array(notebook, "result:C"), qemu)
    assert np.array_equal(shown_array(notebook, "result:udot_C"), expected_region("arm_sme/udot_gemm.trace.json", "C"))
    text = all_text(notebook)
    first = re.search(r"ZA0.S\[0\]\[1\] = (-?\d+)  z0\[0:4\] . z1\[4:8\] = (-?\d+)", text)
    assert first and first.group(1) == first.group(2)
    assert text.count("equal ✓") >= 2  # SMOPA's and UDOT's worked elements
    assert viewer_model(notebook)["isa"] == "arm_sme"


def test_ascend_cube_notebook(run_notebook):
    notebook = run_notebook("ascend_cube.ipynb")
    want = expected_region("ascend_cube/int8_gemm.trace.json", "C")
    assert np.array_equal(shown_array(notebook, "result:l0c"), want)  # L0C after Mmad, read as the ND matrix
    assert np.array_equal(shown_array(notebook, "result:C"), want)  # GM after Fixpipe
    text = all_text(notebook)
    assert "numpy's A @ B equals L0C: True" in text and text.count("equal ✓") >= 2
    model = viewer_model(notebook)
    program = json.loads((ROOT / "examples" / "ascend_cube" / "int8_gemm.trace.json").read_text())["program"]
    assert model["isa"] == "ascend_cube" and len(model["steps"]) == len(program)  # every line ran once

"""The trace page's model replayed in Python, as the page's script replays it: the tests' reading of a model
(tests/core/test_trace_page.py, tests/core/test_trace_page_browser.py)."""

from __future__ import annotations

from itertools import islice


def rebuild(model: dict):
    """Yield the panels ({name: (definition, bytearray)}) before the first step and after each step, by
    applying the model's patches as the page's script does."""
    panels = {p["name"]: (p, _bytes(p)) for p in model["initial"]["panels"]}
    yield panels
    for step in model["steps"]:
        for name in step.get("removed", []):
            del panels[name]
        for definition in step.get("panels", []):
            panels[definition["name"]] = (definition, _bytes(definition))
        for name, offset, data in step["patches"]:
            new = bytes.fromhex(data)
            panels[name][1][offset:offset + len(new)] = new
        yield panels


def _bytes(definition: dict) -> bytearray:
    data = bytearray(bytes.fromhex(definition["data"]))
    return data + bytes(definition["size"] - len(data))


def panels_after(model: dict, t: int) -> dict[str, tuple[dict, bytearray]]:
    """The model's panels after ``t`` steps, its patches applied in Python."""
    return next(islice(rebuild(model), t, None))

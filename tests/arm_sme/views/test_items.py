"""ZA tiles and their slices as the stepper prints and watches them (za1.s, za1h.s[i], za1v.s[i])."""

from __future__ import annotations

import numpy as np
import pytest
from rich.console import Console

from isasim.arm_sme import views
from isasim.core.errors import IsasimError
from smeharness import run


def _text(renderable) -> str:
    console = Console(width=120, record=True)
    console.print(renderable)
    return console.export_text()


@pytest.fixture()
def state():
    machine, _ = run("nop", svl=128, arrays={"za": np.arange(256, dtype=np.uint8).tobytes()})
    return machine.state


def test_a_tile_is_its_interleaved_rows(state):
    text = _text(views.item_view(state, "za0h.b[3]", []))
    assert "za0h.b[3]" in text and " 48 " in text and " 63" in text  # ZA0.B row 3 is ZA vector 3
    data, suffix, _ = views.tile_values(state, "za1.s")
    assert suffix == "s" and [row[0] for row in data] == [16, 80, 144, 208]  # ZA vectors 1, 5, 9, 13


def test_a_vertical_slice_is_one_element_of_each_row(state):
    watched = views.watch_value(state, "za1v.s[2]", {})
    assert watched.value == bytes([24, 25, 26, 27, 88, 89, 90, 91, 152, 153, 154, 155, 216, 217, 218, 219])
    assert "1b1a1918" in _text(views.item_view(state, "za1v.s[2]", ["hex"]))


@pytest.mark.parametrize("name, words", [("za4.s", "za0.s to za3.s"), ("za1h.s[0][0][0]", "a slice"), ("za1v.s[4]", "4 slices"),
                                         ("za1.s[0]", "a slice")])
def test_bad_tile_names_are_one_error(state, name, words):
    with pytest.raises(IsasimError, match=words):
        views.item_view(state, name, [])

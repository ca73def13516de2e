"""isasim's teaching API (isasim/teaching.py): typed views hold what the example traces expect, and bad input
is one IsasimError line.

The expected values are read here straight from the trace files' JSON (not through isasim): the x86 and Ascend
examples' C is an int64 product computed apart from the simulator, the SMOPA example's C was recorded on QEMU.
"""

import json
from pathlib import Path

import numpy as np
import pytest

import isasim
from isasim.core.errors import AssemblyError, ConfigError, IsasimError, TraceFormatError

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def expected_region(trace: str, name: str, dtype: str) -> np.ndarray:
    """Region ``name`` of ``trace``'s expect, decoded with numpy from the JSON (shape from its init entry)."""
    data = json.loads((EXAMPLES / trace).read_text())
    region = next(r for r in data["init"]["memory"] if r.get("name") == name)
    found = next(r for r in data["expect"]["memory"] if int(r["addr"], 16) == int(region["addr"], 16))
    return np.frombuffer(bytes.fromhex(found["hex"]), dtype=dtype).reshape(region["shape"])


def test_x86_tile_views_hold_the_expected_product():
    m = isasim.load_trace(EXAMPLES / "x86_amx/int8_block.trace.json").machine()
    first = m.step()
    assert first.instruction == "ldtilecfg [rcx]" and first.fault is None and first.index == 0
    step = m.run_to("tdpbusd")
    assert step.instruction.startswith("tdpbusd") and len(step.writes) == 16  # one write per row of tmm0
    want = expected_region("x86_amx/int8_block.trace.json", "C", "<i4")
    assert np.array_equal(m.view("tmm0", "int32"), want) and np.array_equal(m.tile(0), want)
    assert m.view("tmm0", "int32").dtype == np.int32
    assert m.view("tmm1", "uint8").shape == (16, 64) and m.view("TMM1", "int8").dtype == np.int8
    m.run()
    assert m.finished and np.array_equal(m.view("C"), want)


def test_x86_float_tiles_come_back_as_floats():
    m = isasim.load_trace(EXAMPLES / "x86_amx/bf16_block.trace.json").machine()
    m.run_to("tdpbf16ps")
    tile = m.view("tmm0", "fp32")
    assert tile.dtype == np.float32
    assert np.array_equal(tile, expected_region("x86_amx/bf16_block.trace.json", "C", "<f4"))


def test_arm_za_tile_after_the_smopa_loop_is_qemus_c():
    trace = isasim.load_trace(EXAMPLES / "arm_sme/smopa_gemm.trace.json")
    assert trace.producer.startswith("qemu")
    m = trace.machine()
    m.run_to("cntw")  # the SMOPA loop is done; ZA0.S holds C
    want = expected_region("arm_sme/smopa_gemm.trace.json", "C", "<i4")
    assert np.array_equal(m.tile(0, "int32"), want)
    assert np.array_equal(m.view("za", "int32")[0::4], want)  # ZA0.S's row i is ZA vector 4 i
    assert m.view("z0", "int8").shape == (1, 64)
    m.run()
    assert np.array_equal(m.view("C"), want) and np.array_equal(trace.expected("C"), want)


def test_ascend_result_is_the_expected_product():
    m = isasim.machine("ascend_cube", chip="910B")
    m.load((EXAMPLES / "ascend_cube/int8_gemm.s").read_text(), init=EXAMPLES / "ascend_cube/int8_gemm.init.json")
    m.run()
    want = expected_region("ascend_cube/int8_gemm.trace.json", "C", "<i4")
    assert np.array_equal(m.view("C"), want)
    assert m.view("l0c", "int32").shape == (2048, 16)  # 128 KiB of L0C in rows of 16 int32


def test_a_fault_is_in_the_step_not_raised():
    m = isasim.machine("x86_amx")
    m.load("tdpbusd tmm0, tmm1, tmm2")
    steps = m.run()
    assert steps[-1].fault is not None and steps[-1].fault.kind == "#UD"  # no tile configuration: the SDM's #UD
    assert m.finished and m.next_instruction is None


def one_line(error: pytest.ExceptionInfo) -> str:
    text = str(error.value)
    assert "\n" not in text and text
    return text


def test_bad_input_is_one_line():
    with pytest.raises(ConfigError) as error:
        isasim.machine("mips")
    assert "arm_sme, ascend_cube, x86_amx" in one_line(error)
    with pytest.raises(ConfigError) as error:
        isasim.machine("x86_amx", cpu="z80")
    assert "z80" in one_line(error)
    m = isasim.machine("x86_amx")
    with pytest.raises(AssemblyError) as error:
        m.load("mov rax, 1\ntdpbusd tmm0, xyz")
    assert one_line(error).startswith("<notebook>:2:")
    with pytest.raises(IsasimError) as error:
        m.view("tmm0")
    assert "not configured" in one_line(error)
    with pytest.raises(IsasimError) as error:
        m.view("tmm9")
    assert "tmm9" in one_line(error)
    with pytest.raises(IsasimError) as error:
        isasim.machine("ascend_cube").view("l0c", "int8")
    assert "int32" in one_line(error)
    with pytest.raises(IsasimError) as error:
        isasim.machine("arm_sme").tile(4, "int32")
    assert "ZA0 to ZA3" in one_line(error)
    with pytest.raises(TraceFormatError) as error:
        isasim.load_trace(EXAMPLES / "no_such.trace.json")
    assert "no such file" in one_line(error)
    with pytest.raises(IsasimError) as error:
        isasim.explain("tdpbusd tmm0, tmm1", isa="x86_amx")
    one_line(error)
    with pytest.raises(IsasimError) as error:
        isasim.machine("x86_amx").step()
    assert "no program" in one_line(error)


def test_explain_checks_the_machine_and_renders_html():
    explained = isasim.explain("smopa za0.s, p0/m, p0/m, z0.b, z1.b", isa="arm_sme", svl=256)
    check = explained.checks[0]
    assert check.explained == check.machine  # the worked element equals what the simulator wrote
    assert "SVL 256" in str(explained)
    page = explained._repr_html_()
    assert page.startswith("<iframe") and "SMOPA" in page


def viewer_model(shown: str) -> dict:
    """The run a viewer fragment shows: the page model embedded in its iframe's document."""
    import html
    import re

    assert shown.startswith("<iframe")
    found = re.search(r'<script type="application/json" id="isasim-model">(.*?)</script>', html.unescape(shown), re.S)
    assert found, "no viewer model in the fragment"
    return json.loads(found.group(1))


def test_machines_steps_and_traces_show_the_trace_viewer():
    pytest.importorskip("isasim.core.trace_page", reason="the trace viewer (isasim.core.trace_page) is not here")
    trace = isasim.load_trace(EXAMPLES / "x86_amx/int8_block.trace.json")
    m = trace.machine()
    m.run_to("tdpbusd")  # six steps run: the viewer shows those, the last being TDPBUSD
    for shown, steps in ((m._repr_html_(), 6), (m.history[-1]._repr_html_(), 6), (m.history[2]._repr_html_(), 3),
                         (trace._repr_html_(), 9)):
        model = viewer_model(shown)
        assert model["format"] == "isasim-page/1" and model["isa"] == "x86_amx"
        assert len(model["steps"]) == steps
        assert [line["text"] for line in model["listing"]][5].startswith("tdpbusd")
    model = viewer_model(m._repr_html_())
    assert model["listing"][model["steps"][-1]["instruction"]]["text"].startswith("tdpbusd")

"""The trace page's model (isasim.core.trace_page): the initial panels with each step's patches applied give
the machine's state after that step, and the seed examples end with the memory their traces expect.

The step-by-step check compares the model with a second machine stepped alongside (isasim against itself,
hence ``consistency``); the final regions are compared with the traces' ``expect`` memory, which the
examples' generators computed as numpy integer products, without the simulator.
"""

from __future__ import annotations

import json
from html.parser import HTMLParser
from pathlib import Path

import pytest

from isasim.core.errors import IsasimError
from isasim.core.isa import get_isa
from isasim.core.machine import Machine
from isasim.core.trace import Init, read_trace
from isasim.core.trace_page import build_model, fragment_html, page_html, trace_model

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
SEEDS = {"x86_amx": EXAMPLES / "x86_amx" / "int8_block.trace.json",
         "arm_sme": EXAMPLES / "arm_sme" / "udot_gemm.trace.json",
         "ascend_cube": EXAMPLES / "ascend_cube" / "int8_gemm.trace.json"}


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


def machine_panels(machine: Machine, isa, init: Init, model: dict) -> dict[str, bytes]:
    """What the model's panels must hold for ``machine`` now, read from the machine itself."""
    names = [n for n in machine.state.register_names() if n != isa.pc_register]
    wanted = {"registers": b"".join(machine.state.read_register(n).to_bytes(8, "little") for n in names)}
    observed = isa.observed_arrays(machine.state)
    for spec in isa.arrays(machine.config):
        if spec.name in observed:
            wanted[spec.name] = observed[spec.name]
        elif spec.size:
            wanted[spec.name] = bytes(spec.size)
    return wanted


@pytest.mark.consistency
@pytest.mark.parametrize("isa_name", sorted(SEEDS))
def test_patches_rebuild_the_machine_state_after_every_step(isa_name):
    trace = read_trace(SEEDS[isa_name])
    model = trace_model(trace)
    isa = get_isa(trace.isa)
    program = isa.assemble("\n".join(trace.program))
    machine = Machine(trace.isa, trace.config)
    machine.load_init(program, trace.init)
    states = rebuild(model)
    panels = next(states)
    memory_panels = {p["name"]: p["address"] for p in model["initial"]["panels"] if p["group"] == "memory"}
    assert len(memory_panels) == len(trace.init.views) > 0
    for index in range(len(model["steps"]) + 1):
        if index:
            record = machine.step()
            step = model["steps"][index - 1]
            assert (step["index"], step["pc"], step["instruction"]) == (record.index, record.pc,
                                                                        record.instruction.index)
            panels = next(states)
        wanted = machine_panels(machine, isa, trace.init, model)
        shown = {name: bytes(data) for name, (definition, data) in panels.items() if definition["group"] != "memory"}
        assert shown == wanted, f"step {index}"
        for name, address in memory_panels.items():
            data = panels[name][1]
            assert bytes(data) == machine.memory.read(address, len(data)), f"{name} after step {index}"
    assert machine.finished and model["end"]["halted"] and model["truncated"] is None


@pytest.mark.parametrize("isa_name", sorted(SEEDS))
def test_the_last_state_holds_the_memory_the_trace_expects(isa_name):
    trace = read_trace(SEEDS[isa_name])
    model = trace_model(trace)
    *_, final = rebuild(model)
    by_address = {definition["address"]: data for definition, data in final.values() if "address" in definition}
    expected = trace.expect["memory"]
    assert expected
    for address, data in expected:
        assert bytes(by_address[address][:len(data)]) == data
    assert model["steps"][-1]["fault"] is None and trace.expect.get("fault") is None


def test_a_fault_ends_the_model_with_its_kind_rule_and_instruction():
    # Intel's SDM: TILEZERO raises #UD while no tile configuration is loaded
    program = get_isa("x86_amx").assemble("mov rax, 1\ntilezero tmm0\nret")
    model = build_model("x86_amx", {}, program, Init())
    assert len(model["steps"]) == 2
    fault = model["steps"][-1]["fault"]
    assert fault["kind"] == "#UD" and fault["index"] == 1 and fault["rule"]
    assert model["end"]["fault"] == fault and model["truncated"] is None


def test_a_long_run_is_cut_at_max_steps_or_the_patch_budget_and_says_so():
    program = get_isa("x86_amx").assemble("mov rcx, 1000\nagain:\nadd rax, 3\ndec rcx\njnz again\nret")
    model = build_model("x86_amx", {}, program, Init(), max_steps=50)
    assert len(model["steps"]) == 50 and "50" in model["truncated"] and "\n" not in model["truncated"]
    small = build_model("x86_amx", {}, program, Init(), patch_budget=60)
    assert 0 < len(small["steps"]) < 50 and "budget" in small["truncated"]
    *_, final = rebuild(model)
    registers = final["registers"]
    names = registers[0]["labels"]
    rax = int.from_bytes(registers[1][8 * names.index("rax"):8 * names.index("rax") + 8], "little")
    assert rax == 3 * 17  # 50 steps: mov, 16 passes of three instructions, then the 17th add


class _ScriptText(HTMLParser):
    """The text of the page's <script type="application/json"> as an HTML parser reads it."""

    def __init__(self):
        super().__init__()
        self.inside, self.text, self.scripts = False, "", 0

    def handle_starttag(self, tag, attrs):
        if tag == "script":
            self.scripts += 1
            self.inside = dict(attrs).get("type") == "application/json"

    def handle_endtag(self, tag):
        if tag == "script":
            self.inside = False

    def handle_data(self, data):
        if self.inside:
            self.text += data


def test_the_embedded_model_cannot_close_its_script_element():
    program = get_isa("x86_amx").assemble("mov rax, 1\nret")
    title = "</script><script>alert(1)</script><!-- \u2028"
    model = build_model("x86_amx", {}, program, Init(), title=title)
    page = page_html(model)
    parser = _ScriptText()
    parser.feed(page)
    assert parser.scripts == 2  # the model and the viewer: the title opened no third
    assert json.loads(parser.text) == model
    assert "http://" not in page.split("</title>", 1)[1] and "https://" not in page
    fragment = fragment_html(model)
    assert fragment.startswith("<iframe") and "srcdoc=" in fragment and "<script" not in fragment


@pytest.mark.parametrize("call, words", [
    (lambda: build_model("no_such_isa", {}, None, Init()), "unknown ISA"),
    (lambda: build_model("arm_sme", {}, get_isa("x86_amx").assemble("ret"), Init()), "x86_amx"),
    (lambda: build_model("x86_amx", {}, get_isa("x86_amx").assemble("ret"), Init(), max_steps=-1), "max_steps"),
    (lambda: build_model("x86_amx", {"cpu": "pentium"}, get_isa("x86_amx").assemble("ret"), Init()), "pentium"),
    (lambda: page_html({"steps": []}), "build_model"),
])
def test_bad_inputs_are_refused_in_one_line(call, words):
    with pytest.raises(IsasimError) as caught:
        call()
    assert words in str(caught.value) and "\n" not in str(caught.value)


def test_an_x86_tile_panel_is_shaped_by_its_tilecfg():
    """A TILECFG image as Intel's SDM lays it out (palette in byte 0, colsb as 16-bit words from byte 16,
    rows from byte 48) with 4 rows of 16 bytes: the tile panels are 4 x 16, and TILELOADD with a 32-byte
    stride puts memory rows 0, 32, 64, 96 (16 bytes each) into them."""
    tilecfg = bytearray(64)
    tilecfg[0] = 1
    for tile in range(3):
        tilecfg[16 + 2 * tile], tilecfg[48 + tile] = 16, 4
    memory = bytes(range(128))
    init = Init(regs={"rcx": 0x10000, "rdi": 0x20000, "r8": 32},
                memory=[(0x10000, bytes(tilecfg), True), (0x20000, memory, True)])
    program = get_isa("x86_amx").assemble("ldtilecfg [rcx]\ntileloadd tmm1, [rdi+r8*1]\nret")
    model = build_model("x86_amx", {}, program, init)
    configured = {p["name"]: (p["size"], p["row_bytes"]) for p in model["steps"][0]["panels"]}
    assert configured == {"tmm0": (64, 16), "tmm1": (64, 16), "tmm2": (64, 16)}
    *_, final = rebuild(model)
    assert bytes(final["tmm1"][1]) == b"".join(memory[32 * r:32 * r + 16] for r in range(4))

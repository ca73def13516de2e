"""The trace page's model (isasim.core.trace_page): the initial panels with each step's patches applied give
the machine's state after that step, and the seed examples end with the memory their traces expect.

The step-by-step check compares the model with a second machine stepped alongside (isasim against itself,
hence ``consistency``); the final regions are compared with the traces' ``expect`` memory, which the
examples' generators computed as numpy integer products, without the simulator.
"""

from __future__ import annotations

import html
import json
import re
from html.parser import HTMLParser
from pathlib import Path

import numpy as np
import pytest

from isasim.core.errors import IsasimError
from isasim.core.explain.model import Check, ElementWorking, Paragraph
from isasim.core.isa import Isa, get_isa
from isasim.core.machine import Machine
from isasim.core.trace import Init, RegionView, read_trace
from isasim.core.trace_page import (build_model, fragment_html, page_html, trace_model, unpack_workings_html,
                                    view_offsets)

from page_replay import rebuild

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
SEEDS = {"x86_amx": EXAMPLES / "x86_amx" / "int8_block.trace.json",
         "arm_sme": EXAMPLES / "arm_sme" / "udot_gemm.trace.json",
         "ascend_cube": EXAMPLES / "ascend_cube" / "int8_gemm.trace.json"}


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


# ---- click-for-working: each step's accounts of the elements it wrote --------------------------------------

_MACHINE_VALUE = re.compile(r"machine <code>([^<]*)</code>")


def has_workings_hook(isa_name: str) -> bool:
    return type(get_isa(isa_name)).element_workings is not Isa.element_workings


def machine_value(working: dict, text: str) -> str:
    """The value the account's last Check says the machine wrote, as html_block rendered it."""
    found = _MACHINE_VALUE.findall(text)
    assert found, f"no Check in the account of {working['title']}"
    return html.unescape(found[-1])


_HEX_BYTES = re.compile(r"[0-9a-f]{2}( [0-9a-f]{2})*")


def decoded(text: str, data: bytes):
    """``data`` (little-endian) read the way ``text`` writes a number: bytes in memory order ("0e 6b b5 24",
    "34 13 00 00 = int32 4916", one byte "5a") as bytes, hex with 0x as unsigned (a typed reading after it in
    brackets left aside: "0x6a (uint8 106)"), a decimal integer as signed, anything else as an IEEE float of
    the data's width."""
    text = text.strip()
    raw = text.split(" = ", 1)[0].strip().lower()
    if _HEX_BYTES.fullmatch(raw) and len(raw.split()) == len(data):  # (the accounts write a byte in hex)
        return bytes.fromhex(raw), data
    text = text.split(" (", 1)[0]
    if text.lower().startswith(("0x", "-0x")):
        return int(text, 16), int.from_bytes(data, "little")
    try:
        return int(text), int.from_bytes(data, "little", signed=True)
    except ValueError:
        dtype = {2: "<f2", 4: "<f4", 8: "<f8"}[len(data)]
        return float(text), float(np.frombuffer(data, dtype=dtype)[0])


def expected_c(trace) -> tuple[int, np.ndarray]:
    """The trace's expected C (the examples' generators computed it with numpy integer products) as int32 rows
    of the C region's declared shape, and the region's address."""
    view = next(v for v in trace.init.views if v.name == "C")
    data = next(d for address, d in trace.expect["memory"] if address == view.address)
    rows, cols = view.shape
    return view.address, np.frombuffer(data[:rows * cols * 4], dtype="<i4").reshape(rows, cols)


def c_of(isa_name: str, model: dict, step: dict, working: dict) -> tuple[int, int] | None:
    """The element of C that ``working`` (written by ``step``) holds in the seed example, or None where the
    value is still a partial sum or the account is not of a 4-byte element of C (a load's, a byte store's).  Each
    layout is the one the example's source describes."""
    panel, offset = working["panel"], working["offset"]
    mnemonic = model["listing"][step["instruction"]]["text"].split("(")[0].split()[0].lower()
    if working["size"] != 4 or (panel != "C" and mnemonic not in ("tdpbusd", "udot", "mmad")):
        return None
    if panel == "C":  # memory: C itself (a row of C is its declared columns of int32)
        row_bytes = next(p["row_bytes"] for p in model["initial"]["panels"] if p["name"] == "C")
        return offset // row_bytes, offset % row_bytes // 4
    if isa_name == "x86_amx" and panel == "tmm0":
        # int8_block.s: tilezero tmm0, then one TDPBUSD: tmm0 row m, dword n is C[m][n] (rows of 64 bytes)
        return offset // 64, offset % 64 // 4
    if isa_name == "arm_sme" and panel == "za":
        # udot_gemm.s at SVL 512 (x3 = 3 row quads, x4 = 2 column blocks, x5 = 6 k groups): the n-th UDOT
        # of the run is column block n // 18, row quad n // 6 % 3, k group n % 6; ZA vector r * 16 (64 bytes)
        # lane j holds C[4q + r][16cb + j], complete after the last k group
        udots = [s["index"] for s in model["steps"]
                 if model["listing"][s["instruction"]]["text"].lower().startswith("udot")]
        n = udots.index(step["index"])
        if n % 6 != 5:
            return None
        vector, lane = offset // 64, offset % 64 // 4
        assert vector % 16 == 0, f"a UDOT vgx4 at w8 = 0 writes ZA vectors 0, 16, 32, 48, not {vector}"
        return 4 * (n // 6 % 3) + vector // 16, 16 * (n // 18) + lane
    if isa_name == "ascend_cube" and panel == "l0c":
        # int8_gemm.s: L0C holds C (30 x 40 int32) as Nz, column blocks of 16 columns, 32 rows each (the
        # Fixpipe's srcStride): element (m, n) at int32 index ((n // 16) * 32 + m) * 16 + n % 16
        index = offset // 4
        block, rest = divmod(index, 32 * 16)
        return rest // 16, 16 * block + rest % 16
    return None


@pytest.mark.parametrize("isa_name", sorted(SEEDS))
def test_the_seed_examples_carry_the_workings_of_their_multiplies(isa_name):
    if not has_workings_hook(isa_name):
        pytest.skip(f"{isa_name} has no Isa.element_workings yet (isasim/{isa_name}/explain/workings.py)")
    trace = read_trace(SEEDS[isa_name])
    model = trace_model(trace)
    assert model["workings"] and model["workings_truncated"] is None
    kinds = {"x86_amx": ("tdpbusd",), "arm_sme": ("udot",), "ascend_cube": ("mmad", "fixpipe")}[isa_name]
    explained = {model["listing"][s["instruction"]]["text"].split("(")[0].split()[0].lower()
                 for s in model["steps"] if s.get("workings")}
    assert set(kinds) <= explained, f"steps with workings: {explained}"
    assert not [s["workings_error"] for s in model["steps"] if "workings_error" in s]
    _address, want = expected_c(trace)
    compared = 0
    states = rebuild(model)
    next(states)
    for step in model["steps"]:
        panels = next(states)
        texts = unpack_workings_html(step)
        assert len(texts) == len(step.get("workings", ()))
        for working, account in zip(step.get("workings", ()), texts):
            assert working["equal"], working["title"]
            # consistency: the account's machine value is the model's bytes there after the step
            data = bytes(panels[working["panel"]][1][working["offset"]:working["offset"] + working["size"]])
            text = machine_value(working, account)
            shown, stored = decoded(text, data)
            assert shown == stored, (step["index"], working["title"], text, data.hex())
            # outside truth: where the element is an element of C, the trace's expected C
            where = c_of(isa_name, model, step, working)
            if where is not None:  # (an account may write a dword as hex, i.e. unsigned: compared as 32 bits)
                if isinstance(shown, bytes):
                    shown = int.from_bytes(shown, "little")
                assert shown % 2**32 == int(want[where]) % 2**32, (step["index"], working["title"], where)
                compared += 1
    # every element of C was compared at least once (a Fixpipe and an Mmad: twice)
    assert compared >= want.size


def _fake_workings(isa_self, instruction, before, after):
    """Accounts for the plumbing test: the bytes the step wrote, read from ``before`` and ``after``."""
    text = instruction.text.lower()
    if text.startswith("mov dword ptr"):
        old = before.memory.read(0x2004, 4).hex()
        new = after.memory.read(0x2004, 4).hex()
        return [ElementWorking("memory", 0x2004, 4, "C[0][1] <b>", [Paragraph(f"was {old} & now <{new}>"),
                                                                       Check("C[0][1]", new, new)]),
                ElementWorking("memory", 0x9000, 4, "not on the page", [Check("x", "1", "1")]),
                ElementWorking("rax", 0, 8, "rax", [Check("rax", "1", "2")])]
    if text.startswith("boom"):
        raise RuntimeError("no\nmore")
    return []


def test_workings_are_placed_in_their_panels_and_escaped(monkeypatch):
    """The page's side of the hook: a memory address lands in the named region that holds it, at its offset
    there; an address no panel shows is dropped; a register lands in its row; a Check that differs is marked;
    the text is escaped by html_block; ``before`` is the state before the step."""
    isa = get_isa("x86_amx")
    monkeypatch.setattr(type(isa), "element_workings", _fake_workings)
    program = isa.assemble("mov rax, 7\nmov dword ptr [rdi+4], 5\nret")
    init = Init(regs={"rdi": 0x2000}, memory=[(0x2000, bytes(16), True)],
                views=[RegionView("C", 0x2000, "int32", (2, 2))])
    model = build_model("x86_amx", {}, program, init)
    assert model["workings"] and model["workings_until"] is None and model["workings_truncated"] is None
    workings = model["steps"][1]["workings"]
    assert [(w["panel"], w["offset"], w["size"]) for w in workings] == [("C", 4, 4), ("registers", 0, 8)]
    c, rax = workings
    assert c["title"] == "C[0][1] <b>" and c["equal"] and not rax["equal"]
    c_html, rax_html = unpack_workings_html(model["steps"][1])
    assert "was 00000000 &amp; now &lt;05000000&gt;" in c_html and "<b>" not in c_html
    assert "machine <code>2</code>" in rax_html
    names = model["initial"]["panels"][0]["labels"]
    assert rax["offset"] == 8 * names.index("rax")
    assert "workings" not in model["steps"][0] and "workings" not in model["steps"][2]


def test_workings_stop_at_their_step_limit_or_budget_and_say_so(monkeypatch):
    isa = get_isa("x86_amx")
    monkeypatch.setattr(type(isa), "element_workings", _fake_workings)
    program = isa.assemble("mov rcx, 3\nagain:\nmov dword ptr [rdi+4], 5\ndec rcx\njnz again\nret")
    init = Init(regs={"rdi": 0x2000}, memory=[(0x2000, bytes(16), True)],
                views=[RegionView("C", 0x2000, "int32", (2, 2))])
    whole = build_model("x86_amx", {}, program, init)
    assert [s["index"] for s in whole["steps"] if s.get("workings")] == [1, 4, 7]
    by_steps = build_model("x86_amx", {}, program, init, workings_steps=4)
    assert [s["index"] for s in by_steps["steps"] if s.get("workings")] == [1]
    assert by_steps["workings_until"] == 4 and "from step 5 on" in by_steps["workings_truncated"]
    one = len(whole["steps"][1]["workings_html"]) + sum(len(json.dumps(w)) for w in whole["steps"][1]["workings"])
    by_size = build_model("x86_amx", {}, program, init, workings_budget=2 * one + 10)
    assert [s["index"] for s in by_size["steps"] if s.get("workings")] == [1, 4]
    assert by_size["workings_until"] == 7 and "budget" in by_size["workings_truncated"]
    assert len(by_size["steps"]) == len(whole["steps"]) and by_size["truncated"] is None


def test_a_failing_account_is_named_on_its_step_and_an_isa_without_the_hook_has_none(monkeypatch):
    isa = get_isa("x86_amx")
    monkeypatch.setattr(type(isa), "element_workings", lambda self, ins, before, after: 1 / 0)
    model = build_model("x86_amx", {}, isa.assemble("mov rax, 1\nret"), Init())
    assert model["steps"][0]["workings_error"] == "ZeroDivisionError: division by zero"
    monkeypatch.setattr(type(isa), "element_workings", Isa.element_workings)
    plain = build_model("x86_amx", {}, isa.assemble("mov rax, 1\nret"), Init())
    assert plain["workings"] is False and plain["workings_until"] is None
    assert not any("workings" in s or "workings_error" in s for s in plain["steps"])


# ---- derived views: ZA's tiles, L0C as the Mmad's matrix (Isa.page_views) -----------------------------------

SMOPA_GEMM = EXAMPLES / "arm_sme" / "smopa_gemm.trace.json"  # recorded by QEMU (its "producer")


def region(trace, name: str) -> tuple[int, bytes]:
    view = next(v for v in trace.init.views if v.name == name)
    return view.address, next(d for address, d, _writable in trace.init.memory if address == view.address)


def view_values(model: dict, panels: dict, name: str, dtype: str) -> np.ndarray:
    """The cells of view ``name`` read from the panels' bytes as the page reads them (little-endian)."""
    view = next(v for v in model["views"] if v["name"] == name)
    offsets = view_offsets(view)
    data = np.frombuffer(bytes(panels[view["panel"]][1]), dtype=np.uint8)
    width = np.dtype(dtype).itemsize
    gathered = np.ascontiguousarray(data[offsets[..., None] + np.arange(width)])
    return gathered.view(dtype)[..., 0]


def panels_at(model: dict, t: int) -> dict:
    """The panels after ``t`` steps (rebuild yields one dict it keeps changing: stop at step t)."""
    for index, panels in enumerate(rebuild(model)):
        if index == t:
            return panels
    raise AssertionError(f"the model has no step {t}")


def after_last(model: dict, mnemonic: str) -> int:
    """How many steps have run once the last ``mnemonic`` has."""
    return max(i + 1 for i, s in enumerate(model["steps"])
               if model["listing"][s["instruction"]]["text"].lower().startswith(mnemonic))


def test_za_tile_views_after_the_last_smopa_hold_qemus_c():
    """smopa_gemm.s stores ZA0.S row by row to C once its last SMOPA has run, so the za0.s view at that step
    must be C as QEMU recorded it, and numpy's product of the packed panels (panel p holds k = 4p..4p+3 of
    each row of A, column of B).  The other tiles follow the Arm ARM's rule that ZA<t>.<T> of esize bytes
    has row i in ZA vector esize * i + t: so the tiles of one size cover every byte of ZA exactly once."""
    trace = read_trace(SMOPA_GEMM)
    assert trace.producer.startswith("qemu")
    model = trace_model(trace)
    assert model["views_error"] is None
    svlb = trace.config["svl"] // 8
    names = [v["name"] for v in model["views"]]
    assert names == ["za0.b", "za0.h", "za1.h", *[f"za{t}.s" for t in range(4)], *[f"za{t}.d" for t in range(8)]]
    for esize, suffix in ((1, "b"), (2, "h"), (4, "s"), (8, "d")):
        tiles = [v for v in model["views"] if v["name"].endswith("." + suffix)]
        assert all((v["rows"], v["cols"], v["panel"]) == (svlb // esize, svlb // esize, "za") for v in tiles)
        covered = np.concatenate([view_offsets(v).reshape(-1) for v in tiles])
        assert sorted(covered.tolist()) == list(range(0, svlb * svlb, esize))
        for t, v in enumerate(tiles):  # row i, column j of tile t: ZA vector esize * i + t, bytes esize * j ...
            assert view_offsets(v)[1, 2] == (esize * 1 + t) * svlb + 2 * esize
    # opened at first only where the program names the tile (smopa za0.s ..., st1w {za0h.s[w12, 0]})
    assert [v["name"] for v in model["views"] if v["show"]] == ["za0.s"]

    t = after_last(model, "smopa")
    panels = panels_at(model, t)
    shown = view_values(model, panels, "za0.s", "<i4")
    c_address, _ = region(trace, "C")
    qemu_c = np.frombuffer(dict(trace.expect["memory"])[c_address], dtype="<i4").reshape(svlb // 4, svlb // 4)
    assert np.array_equal(shown, qemu_c)
    _, a_panels = region(trace, "A_panels")
    _, b_panels = region(trace, "B_panels")
    a = np.frombuffer(a_panels, dtype=np.int8).reshape(-1, svlb // 4, 4).transpose(1, 0, 2).reshape(svlb // 4, -1)
    b = np.frombuffer(b_panels, dtype=np.int8).reshape(-1, svlb // 4, 4).transpose(1, 0, 2).reshape(svlb // 4, -1)
    assert np.array_equal(shown, a.astype(np.int64) @ b.astype(np.int64).T)
    # the stepper's `p za1.h` and the other tiles read the same elements at that step
    from isasim.arm_sme.views import tile_values

    machine = Machine(trace.isa, trace.config)
    machine.load_init(get_isa(trace.isa).assemble("\n".join(trace.program)), trace.init)
    for _ in range(t):
        machine.step()
    for name, dtype in (("za0.b", "i1"), ("za1.h", "<i2"), ("za0.s", "<i4"), ("za3.d", "<i8")):
        rows, _suffix, _name = tile_values(machine.state, name)
        assert np.array_equal(view_values(model, panels, name, dtype), np.ascontiguousarray(rows).view(dtype)), name


def test_the_l0c_view_after_mmad_is_numpys_product_of_a_and_b():
    """int8_gemm.s: the Mmad (m = 30, n = 40) leaves C in L0C as Nz fractals; the page's view of it is the
    30 x 40 matrix, equal to numpy's A @ Bt.T of the init's int8 regions and to the trace's expected C."""
    trace = read_trace(SEEDS["ascend_cube"])
    model = trace_model(trace)
    (view,) = model["views"]
    assert (view["name"], view["panel"], view["rows"], view["cols"], view["element"]) == \
        ("l0c.nd[30x40]", "l0c", 30, 40, "int32")
    assert "offsets" in view and view["show"]  # Nz is not one stride per row and column: the full list
    t = after_last(model, "mmad")
    shown = view_values(model, panels_at(model, t), view["name"], "<i4")
    a = np.frombuffer(region(trace, "A")[1], dtype=np.int8).reshape(30, 70).astype(np.int64)
    bt = np.frombuffer(region(trace, "Bt")[1], dtype=np.int8).reshape(40, 70).astype(np.int64)
    assert np.array_equal(shown, a @ bt.T)
    _address, want = expected_c(trace)
    assert np.array_equal(shown, want)


def test_views_are_checked_against_their_panel_and_a_failing_hook_costs_only_the_views(monkeypatch):
    from isasim.core.isa import PageView

    isa = get_isa("arm_sme")
    program = isa.assemble("smstart\nsmstop\nret")
    for views, words in (([PageView("x", "nowhere", "int32", [[0]])], "no panel 'nowhere'"),
                         ([PageView("x", "za", "int32", [[64 * 64 - 2]])], "outside"),
                         ([PageView("x", "za", "int32", [0, 4])], "rows x cols"),
                         ([PageView("x", "za", "int8", [[0]]), PageView("x", "za", "int8", [[1]])], "same name")):
        monkeypatch.setattr(type(isa), "page_views", lambda self, config, program, views=views: views)
        model = build_model("arm_sme", {"svl": 512}, program, Init())
        assert model["views"] == [] and words in model["views_error"], model["views_error"]
        assert len(model["steps"]) == 3
    x86 = build_model("x86_amx", {}, get_isa("x86_amx").assemble("ret"), Init())
    assert x86["views"] == [] and x86["views_error"] is None


def test_the_za0s_view_is_gdbs_za0s_after_the_last_smopa():
    """gdb 18's own $za0s (its SME tile pseudo-register, read through `isasim gdbserver`) after the last SMOPA
    of smopa_gemm.s has the rows the page's za0.s view shows at that step."""
    from gdb_client import gdb_or_skip, gdbserver_command, run_gdb  # tests/ is on the path, as for the gdb tests

    gdb = gdb_or_skip("wheel", "aarch64")
    trace = read_trace(SMOPA_GEMM)
    model = trace_model(trace)
    t = after_last(model, "smopa")
    shown = view_values(model, panels_at(model, t), "za0.s", "<i4")
    server = gdbserver_command(str(EXAMPLES / "arm_sme" / "smopa_gemm.s"), "--isa", "arm_sme", "--svl",
                               str(trace.config["svl"]), "--init", str(EXAMPLES / "arm_sme" / "smopa_gemm.init.json"))
    out = run_gdb(gdb, [f"target remote | {server}", f"stepi {t}", "p/x $pc", "p/x $za0s"]).stdout
    assert f"= {hex(model['steps'][t - 1]['pc'] + 4)}" in out, out[-800:]
    rows = re.findall(r"\{([0-9a-fx, ]+)\}", out.split("$2 =", 1)[1])
    gdb_rows = np.array([[int(v, 16) for v in row.split(",")] for row in rows], dtype=np.uint32)
    assert np.array_equal(gdb_rows, shown.view(np.uint32)), out[-800:]


# ---- operand outlines (Isa.page_outlines) and bit-field views (PageField): the page's side -------------------

def test_outlines_are_read_before_the_step_clipped_to_their_panel_and_joined(monkeypatch):
    """The plumbing of the hook (a consistency test of the model, not of any ISA's operands): it sees the
    state before the step (x86's rax is 1 there, 2 after), spans outside the panel are clipped or dropped, touching
    spans join, an array the page does not show is dropped, and a failing hook costs only that step's outlines."""
    from isasim.core.isa import PageOutline

    isa = get_isa("x86_amx")
    seen = []

    def outlines(self, instruction, before):
        seen.append(before.state.read_register("rax"))
        if instruction.text.startswith("add"):
            return [PageOutline("tilecfg", ((0, 2), (2, 4), (60, 99)), "cfg <b>", "read"),
                    PageOutline("nowhere", ((0, 1),), "gone")]
        if instruction.text.startswith("ret"):
            raise RuntimeError("bad\nhook")
        return []

    monkeypatch.setattr(type(isa), "page_outlines", outlines)
    program = isa.assemble("mov rax, 1\nadd rax, 1\nret")
    model = build_model("x86_amx", {}, program, Init())
    assert seen == [0, 1, 2]
    assert "outlines" not in model["steps"][0]
    assert model["steps"][1]["outlines"] == [{"panel": "tilecfg", "spans": [[0, 4], [60, 64]], "label": "cfg <b>",
                                              "role": "read"}]
    assert model["steps"][2]["outlines_error"] == "RuntimeError: bad"
    assert "cfg \\u003cb\\u003e" in page_html(model)  # the label cannot close the script element
    limited = build_model("x86_amx", {}, program, Init(), workings_steps=1)
    assert not any("outlines" in step for step in limited["steps"])


def test_a_view_of_bit_fields_is_checked_and_listed_first(monkeypatch):
    from isasim.core.isa import PageField, PageView

    isa = get_isa("arm_sme")
    program = isa.assemble("smstart\nsmstop\nret")
    good = PageView("words", "za", "uint64", [[0, 8]], fields=(PageField("m", 13, 19, "float_top"),
                                                             PageField("n", 32, 4, add=1),
                                                             PageField("o", 37, 9, "signed")))
    monkeypatch.setattr(type(isa), "page_views", lambda self, config, program: [good])
    model = build_model("arm_sme", {"svl": 128}, program, Init())
    view, = model["views"]
    assert view["elements"][0] == "fields" and view["element"] == "uint64"
    assert [f["name"] for f in view["fields"]] == ["m", "n", "o"] and view["fields"][1]["add"] == 1
    for field, words in ((PageField("x", 60, 8), "inside a 64-bit cell"), (PageField("x", 0, 4, "odd"), "kind"),
                         (PageField("x", 0, 40, "float_top"), "at most 32")):
        bad = PageView("w", "za", "uint64", [[0]], fields=(field,))
        monkeypatch.setattr(type(isa), "page_views", lambda self, config, program, bad=bad: [bad])
        broken = build_model("arm_sme", {"svl": 128}, program, Init())
        assert broken["views"] == [] and words in broken["views_error"], broken["views_error"]

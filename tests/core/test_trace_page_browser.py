"""The interactive trace page in a real browser (headless Chromium driven by Playwright): each engine's seed
example is stepped both ways by keys, buttons, the slider and a breakpoint, and the cells the page shows are
compared with the trace's expected memory (C as the examples' generators computed it with numpy integer
products, not with the simulator) and with the model's own bytes; the floating-point views are checked
against numpy's fp16/fp32 and ml_dtypes' bf16; the page must make no request beyond its own file and log no
error.  With ISASIM_SCREENSHOTS=1 the pages are also saved as the docs' screenshots (docs/screenshots/);
otherwise into the test's temporary folder, so a test run leaves the checkout as it was.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import numpy as np
import pytest

from isasim import cli
from page_replay import panels_after
from isasim.core.isa import Isa, get_isa
from isasim.core.trace import Init, read_trace
from isasim.core.trace_page import build_model, page_html, trace_model

playwright_api = pytest.importorskip("playwright.sync_api", reason="playwright (Python) not installed: "
                                     "pip install playwright")

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
SCREENSHOTS = ROOT / "docs" / "screenshots"
SEEDS = {"x86_amx": (EXAMPLES / "x86_amx" / "int8_block.trace.json", "tmm0"),
         "arm_sme": (EXAMPLES / "arm_sme" / "udot_gemm.trace.json", "za"),
         "ascend_cube": (EXAMPLES / "ascend_cube" / "int8_gemm.trace.json", "l0c")}


def _chromium() -> str:
    path = shutil.which("chromium") or shutil.which("chromium-browser")
    if path is None and Path("/usr/bin/chromium").exists():
        path = "/usr/bin/chromium"
    if path is None:
        pytest.skip("chromium not found: install Debian's chromium package (.ci/run does)")
    return path


@pytest.fixture(scope="module")
def browser():
    executable = _chromium()
    with playwright_api.sync_playwright() as driver:
        try:
            launched = driver.chromium.launch(executable_path=executable, args=["--no-sandbox"])
        except playwright_api.Error as error:
            pytest.skip(f"chromium at {executable} does not start under Playwright: {str(error).splitlines()[0]}")
        yield launched
        launched.close()


class Page:
    """One generated page open in the browser, with every request and console error it made."""

    def __init__(self, browser, path: Path):
        self.url = path.resolve().as_uri()
        self.requests: list[str] = []
        self.errors: list[str] = []
        self.page = browser.new_page(viewport={"width": 1400, "height": 900})
        self.page.set_default_timeout(8000)  # a page that does not answer fails in seconds, not half a minute
        self.page.on("request", lambda request: self.requests.append(request.url))
        self.page.on("console", lambda message: self.errors.append(message.text) if message.type == "error" else None)
        self.page.on("pageerror", lambda error: self.errors.append(str(error)))
        self.page.goto(self.url)

    def by(self, testid: str):
        return self.page.get_by_test_id(testid)

    def step_number(self) -> int:
        return int(self.by("step-number").text_content())

    def cells(self, panel: str) -> dict[tuple[int, int], str]:
        values = self.page.eval_on_selector_all(
            f'[data-testid="panel-{panel}"] td[data-row]',
            "cells => cells.map(c => [Number(c.dataset.row), Number(c.dataset.col), c.dataset.value])")
        return {(row, col): value for row, col, value in values}

    def written(self, panel: str) -> set[tuple[int, int]]:
        values = self.page.eval_on_selector_all(
            f'[data-testid="panel-{panel}"] td.written',
            "cells => cells.map(c => [Number(c.dataset.row), Number(c.dataset.col)])")
        return {tuple(v) for v in values}

    def close(self) -> None:
        assert set(self.requests) == {self.url}, f"the page asked for more than its file: {self.requests}"
        assert self.errors == [], self.errors
        self.page.close()


def int32_cells(data: bytes, row_bytes: int, rows: range) -> dict[tuple[int, int], str]:
    values = np.frombuffer(bytes(data), dtype="<i4").reshape(-1, row_bytes // 4)
    return {(r, c): str(int(values[r, c])) for r in rows for c in range(row_bytes // 4)}


@pytest.mark.parametrize("isa_name", sorted(SEEDS))
def test_step_an_engine_seed_example_both_ways_in_the_browser(browser, tmp_path, isa_name):
    trace_path, array = SEEDS[isa_name]
    trace = read_trace(trace_path)
    model = trace_model(trace)
    steps = len(model["steps"])
    page_file = tmp_path / f"{isa_name}.html"
    page_file.write_text(page_html(model), encoding="utf-8")
    page = Page(browser, page_file)
    assert page.step_number() == 0 and page.by("truncated").count() == 0 and page.by("fault").is_hidden()

    # keys and buttons, both ways
    page.page.keyboard.press("ArrowRight")
    page.page.keyboard.press("j")
    assert page.step_number() == 2
    page.by("step-forward").click()
    assert page.step_number() == 3
    page.page.keyboard.press("ArrowLeft")
    assert page.step_number() == 2
    page.by("step-back").click()
    page.page.keyboard.press("k")
    assert page.step_number() == 0
    ran = model["steps"][0]["instruction"]
    page.page.keyboard.press("ArrowRight")
    assert page.by("listing").locator(f'[data-index="{ran}"]').get_attribute("aria-current") == "step"

    # the engine's array after the first step that wrote it, as the model's bytes say
    t = next(i + 1 for i, s in enumerate(model["steps"]) if any(p[0] == array for p in s["patches"]))
    page.by("slider").fill(str(t))
    assert page.step_number() == t
    definition, data = panels_after(model, t)[array]
    page.by(f"type-{array}").select_option("int32")
    shown = page.cells(array)
    rows = sorted({row for row, _col in shown})
    assert shown == int32_cells(data, definition["row_bytes"], range(rows[0], rows[-1] + 1))
    written = page.written(array)
    assert written, "the step that wrote the array outlines the cells it changed"
    first_patch = next(p for p in model["steps"][t - 1]["patches"] if p[0] == array)
    assert (first_patch[1] // definition["row_bytes"], first_patch[1] % definition["row_bytes"] // 4) in written

    # a breakpoint on the last instruction that stores to memory, then "run"
    stores = [i for i, s in enumerate(model["steps"]) if any(p[0] == "C" for p in s["patches"])]
    line = model["steps"][stores[-1]]["instruction"]
    page.by("step-first").click()
    page.by("listing").locator(f'[data-index="{line}"]').click()
    assert "breakpoint" in page.by("listing").locator(f'[data-index="{line}"]').get_attribute("class")
    page.by("run").click()
    first_run = next(i + 1 for i, s in enumerate(model["steps"]) if s["instruction"] == line)
    assert page.step_number() == first_run

    # the end: C as the trace expects it (numpy's product, made without isasim), and again after a jump back
    page.page.keyboard.press("End")
    assert page.step_number() == steps
    c_address = next(p["address"] for p in model["initial"]["panels"] if p["name"] == "C")
    expected = next(data for address, data in trace.expect["memory"] if address == c_address)
    c_row_bytes = next(p["row_bytes"] for p in model["initial"]["panels"] if p["name"] == "C")
    want = int32_cells(expected, c_row_bytes, range(len(expected) // c_row_bytes))
    assert page.cells("C") == want
    page.page.keyboard.press("Home")
    page.page.keyboard.press("End")
    assert page.cells("C") == want

    # the picture the docs use: the step that first wrote the engine's array, its written cells outlined
    page.by("slider").fill(str(t))
    page.page.set_viewport_size({"width": 1400, "height": 1050})
    page.page.evaluate("keep => document.querySelectorAll('details.iv-panel[open]').forEach("
                       "d => { if (!keep.includes(d.dataset.panel)) d.open = false; })", [array, "C"])
    if isa_name == "ascend_cube":
        page.by("heatmap").check()
    page.page.evaluate("window.scrollTo(0, 0)")
    folder = SCREENSHOTS if os.environ.get("ISASIM_SCREENSHOTS") == "1" else tmp_path
    folder.mkdir(parents=True, exist_ok=True)
    page.page.screenshot(path=str(folder / f"viewer-{isa_name}.png"))
    page.page.set_viewport_size({"width": 1400, "height": 900})

    if type(get_isa(isa_name)).element_workings is Isa.element_workings:
        page.close()
        pytest.skip(f"{isa_name} has no Isa.element_workings yet: its cells have no working to click")
    click_for_working(page, model, trace, isa_name, array)
    page.close()


# The element of C each engine's check clicks: the step (the n-th run of the multiply), the byte offset of
# the cell in the engine's array, and the element of C it holds then, as the example's source lays it out
# (x86 int8_block.s: tmm0 row 1, dword 2 after its one TDPBUSD; Arm udot_gemm.s: the 6th UDOT ends
# the k loop of row quad 0, column block 0, and ZA vector 0 lane 2 is C[0][2]; Ascend int8_gemm.s: the Mmad
# writes C as Nz fractals of 16 columns x 32 rows, so C[1][2] is int32 number 1 * 16 + 2 of L0C).
CLICKED = {"x86_amx": ("tdpbusd", 0, 1 * 64 + 2 * 4, (1, 2)), "arm_sme": ("udot", 5, 2 * 4, (0, 2)),
           "ascend_cube": ("mmad", 0, (1 * 16 + 2) * 4, (1, 2))}


def runs_of(model: dict, mnemonic: str) -> list[int]:
    """The step numbers (steps run so far) after each run of ``mnemonic``."""
    return [i + 1 for i, s in enumerate(model["steps"])
            if model["listing"][s["instruction"]]["text"].lower().startswith(mnemonic)]


def click_for_working(page: Page, model: dict, trace, isa_name: str, array: str) -> None:
    """Click a cell the multiply wrote: the side panel's account ends with the value the machine wrote, which
    must be the cell's value and the trace's expected C (numpy's product); Esc closes it; a written cell of a
    step without accounts says so."""
    mnemonic, nth, offset, (row, col) = CLICKED[isa_name]
    t = runs_of(model, mnemonic)[nth]
    page.by("slider").fill(str(t))
    page.by(f"type-{array}").select_option("int32")
    cell = page.page.locator(f'[data-testid="panel-{array}"] td[data-offset="{offset}"]')
    assert "has-working" in cell.get_attribute("class")
    row_bytes = panels_after(model, t)[array][0]["row_bytes"]
    assert (int(cell.get_attribute("data-row")), int(cell.get_attribute("data-col"))) == \
        (offset // row_bytes, offset % row_bytes // 4)
    assert page.by("working").is_hidden()
    cell.click()
    assert page.by("working").is_visible()
    machine = page.by("working-body").locator("code").last.text_content()  # waits for the unpacked account
    assert "equal" in page.by("working-body").text_content()
    value = int(machine, 0) % 2**32
    shown = int(cell.get_attribute("data-value")) % 2**32
    c_view = next(v for v in trace.init.views if v.name == "C")
    expected = next(data for address, data in trace.expect["memory"] if address == c_view.address)
    want = np.frombuffer(expected, dtype="<i4").reshape(-1, c_view.shape[1])[row, col]
    assert value == shown == int(want) % 2**32, (machine, shown, int(want))
    page.page.keyboard.press("Escape")
    assert page.by("working").is_hidden()
    assert page.page.evaluate("document.activeElement.dataset.offset") == str(offset)  # focus back on the cell
    page.page.keyboard.press("Enter")  # the focused cell opens it again from the keyboard
    assert page.by("working").is_visible() and page.by("working-title").text_content()
    page.by("working-close").click()
    assert page.by("working").is_hidden()
    click_a_view_cell(page, model, isa_name, offset, int(want))
    # a step that wrote an array or memory without an account (a load, where the ISA gives none): its written
    # cells say there is none
    unexplained = next(((i + 1, p[0]) for i, s in enumerate(model["steps"]) if not s.get("workings")
                        for p in s["patches"] if p[0] != "registers"), None)
    if unexplained is None:
        return
    load, panel = unexplained
    page.by("slider").fill(str(load))
    page.page.evaluate("name => { document.querySelector(`details[data-panel='${name}']`).open = true; }", panel)
    page.page.locator(f'[data-testid="panel-{panel}"] td.written').first.click()
    assert "no account for this instruction yet" in page.by("working").text_content().lower()
    page.page.keyboard.press("Escape")
    assert page.by("working").is_hidden()


# The view of the engine's array that holds the clicked element of C, and that element's row and column in it:
# udot_gemm.s's ZA vector 0 is row 0 of tile ZA0.S (row i of ZA0.S is ZA vector 4i), so lane 2 is its
# column 2; int8_gemm.s's Mmad writes the 30 x 40 C from L0C[0], and l0c.nd[30x40] is C itself.
VIEWED = {"arm_sme": ("za0.s", (0, 2)), "ascend_cube": ("l0c.nd[30x40]", (1, 2))}


def click_a_view_cell(page: Page, model: dict, isa_name: str, offset: int, want: int) -> None:
    """The same element in the array's derived view: the cell names the same byte, shows the trace's expected
    value, is written by the step, takes the heat map, and clicking it opens the same account."""
    if isa_name not in VIEWED:
        assert page.page.locator("details.iv-view").count() == len(model["views"]) == 0
        return
    name, (row, col) = VIEWED[isa_name]
    view = page.by(f"view-{name}")
    if view.get_attribute("open") is None:  # a view the program does not name starts closed
        view.locator("summary").click()
    cell = view.locator(f'td[data-row="{row}"][data-col="{col}"]')
    assert int(cell.get_attribute("data-offset")) == offset
    assert int(cell.get_attribute("data-value")) % 2**32 == want % 2**32
    assert "has-working" in cell.get_attribute("class")
    page.by("heatmap").check()
    assert cell.evaluate("c => c.style.background") != ""
    page.by("heatmap").uncheck()
    cell.click()
    machine = page.by("working-body").locator("code").last.text_content()
    assert int(machine, 0) % 2**32 == want % 2**32
    page.page.keyboard.press("Escape")
    assert page.by("working").is_hidden()
    assert page.page.evaluate("document.activeElement.closest('[data-view]').dataset.view") == name


def test_float_views_decode_exactly_and_hex_shows_the_bytes(browser, tmp_path):
    """The A block of the x86 seed holds random bytes: every fp16, bf16 and fp32 the page shows must read back
    as the same bits through numpy (fp16, fp32) and ml_dtypes (bf16)."""
    ml_dtypes = pytest.importorskip("ml_dtypes", reason="ml_dtypes not installed")
    model = trace_model(read_trace(SEEDS["x86_amx"][0]))
    page_file = tmp_path / "floats.html"
    page_file.write_text(page_html(model), encoding="utf-8")
    page = Page(browser, page_file)
    definition, data = panels_after(model, 0)["A"]
    page.page.locator('[data-testid="panel-A"] > summary').click()
    for element, dtype, bits in (("fp16", np.float16, np.uint16), ("bf16", ml_dtypes.bfloat16, np.uint16),
                                 ("fp32", np.float32, np.uint32)):
        page.by("type-A").select_option(element)
        per_row = definition["row_bytes"] // np.dtype(bits).itemsize
        raw = np.frombuffer(bytes(data), dtype=bits).reshape(-1, per_row)
        shown = page.cells("A")
        assert len(shown) == raw.size
        for (row, col), text in shown.items():
            value = np.array(raw[row, col], dtype=bits).view(dtype)
            if np.isnan(value):
                assert text == "NaN"
            else:
                read_back = np.array(float(text.replace("inf", "Infinity")), dtype=np.float64).astype(dtype)
                assert read_back.view(bits) == raw[row, col], (element, row, col, text)
    page.by("type-A").select_option("hex")
    assert page.cells("A")[(0, 0)] == f"0x{data[0]:02x}"
    page.by("heatmap").check()
    assert page.page.locator('[data-testid="panel-A"] td[data-row]').first.evaluate("c => c.style.background") != ""
    page.close()


def test_fault_and_truncation_banners_and_the_cli_page(browser, tmp_path, capsys):
    # Intel's SDM: TILEZERO raises #UD while no tile configuration is loaded
    program = get_isa("x86_amx").assemble("mov rax, 1\ntilezero tmm0\nret")
    faulting = tmp_path / "fault.html"
    faulting.write_text(page_html(build_model("x86_amx", {}, program, Init(), title="fault")), encoding="utf-8")
    page = Page(browser, faulting)
    page.page.keyboard.press("End")
    assert page.by("fault").is_visible() and "#UD" in page.by("fault").text_content()
    page.page.keyboard.press("ArrowLeft")
    assert page.by("fault").is_hidden()
    page.close()

    loop = get_isa("x86_amx").assemble("mov rcx, 100\nagain:\nadd rax, 3\ndec rcx\njnz again\nret")
    cut = tmp_path / "cut.html"
    cut.write_text(page_html(build_model("x86_amx", {}, loop, Init(), max_steps=20)), encoding="utf-8")
    page = Page(browser, cut)
    assert page.by("truncated").is_visible() and "20" in page.by("truncated").text_content()
    page.page.keyboard.press("End")
    registers = page.cells("registers")
    names = get_isa("x86_amx").new_state(get_isa("x86_amx").configure({}), None).register_names()
    names = [name for name in names if name != "rip"]
    assert registers[(names.index("rax"), 0)] == str(3 * 7)  # 20 steps: mov, 6 passes of 3, then the 7th add
    page.close()

    shown = tmp_path / "shown.html"
    assert cli.main(["show", str(SEEDS["arm_sme"][0]), "--html", str(shown)]) == 0
    page = Page(browser, shown)
    trace = read_trace(SEEDS["arm_sme"][0])
    program = get_isa("arm_sme").assemble("\n".join(trace.program))
    assert page.by("listing").locator("li").count() == len(program.instructions)
    page.page.keyboard.press("End")
    assert page.step_number() == len(trace_model(trace)["steps"])  # the CLI's page is the model's run
    page.close()


def test_keyboard_only_use_print_view_and_the_notebook_fragment(browser, tmp_path):
    from isasim.core.trace_page import fragment_html

    model = trace_model(read_trace(SEEDS["x86_amx"][0]))
    page_file = tmp_path / "keys.html"
    page_file.write_text(page_html(model), encoding="utf-8")
    page = Page(browser, page_file)
    page.by("step-forward").focus()
    page.page.keyboard.press("Enter")
    page.page.keyboard.press("Space")
    assert page.step_number() == 2
    page.page.keyboard.press("Tab")  # to "last"
    assert page.page.evaluate("document.activeElement.dataset.testid") == "step-last"
    assert page.page.evaluate("getComputedStyle(document.activeElement).outlineStyle") != "none"
    line = page.by("listing").locator('[data-index="3"]')
    line.focus()
    page.page.keyboard.press("Enter")
    assert "breakpoint" in line.get_attribute("class") and line.get_attribute("aria-pressed") == "true"
    page.page.emulate_media(media="print")
    assert page.by("step-forward").is_hidden() and page.by("slider").is_hidden()
    assert page.by("panel-C").is_visible()
    page.page.emulate_media(media="screen")
    page.close()

    notebook = tmp_path / "notebook.html"
    notebook.write_text("<!DOCTYPE html><html><body><h1>a notebook cell</h1>" + fragment_html(model) + "</body></html>",
                        encoding="utf-8")
    page = Page(browser, notebook)
    frame = page.page.frame_locator("iframe.isasim-viewer-frame")
    assert frame.get_by_test_id("step-number").text_content() == "0"
    frame.get_by_test_id("step-forward").click()
    assert frame.get_by_test_id("step-number").text_content() == "1"
    page.requests = [url for url in page.requests if url != "about:srcdoc"]  # the fragment's own document
    page.close()


def test_a_written_element_without_an_account_shows_its_instruction_and_bytes(browser, tmp_path):
    """ADD (shifted register) has no element account: clicking the w12 that ``add w12, w12, w7`` wrote names the
    instruction and its form's summary and gives the register's bytes before and after; after is the 0 that
    ``mov w12, #0`` left plus w7 = CNTW = SVL/32 (the number of 32-bit elements in a vector, as the
    architecture defines CNTW: 16 at the trace's SVL 512)."""
    trace = read_trace(str(SEEDS["arm_sme"][0]))
    assert trace.config["svl"] == 512
    page_file = tmp_path / "add.html"
    model = trace_model(trace)
    page_file.write_text(page_html(model))
    page = Page(browser, page_file)
    texts = [model["listing"][step["instruction"]]["text"] for step in model["steps"]]
    step = texts.index("add w12, w12, w7") + 1
    assert not model["steps"][step - 1].get("workings"), "this test wants a step with no account"
    page.page.keyboard.press("End")
    page.page.keyboard.press("Home")
    for _ in range(step):
        page.page.keyboard.press("ArrowRight")
    assert page.step_number() == step
    written = page.page.locator('[data-testid="panel-registers"] td.written')
    assert written.count() == 1 and written.first.get_attribute("data-row") == "12"
    written.first.click()
    assert page.by("working-none").is_visible()
    body = page.by("working").inner_text()
    assert "add w12, w12, w7" in body
    assert page.by("working-bytes").inner_text() == \
        f"Its bytes, most significant first: {0:016x} before, {512 // 32:016x} after."
    page.page.keyboard.press("Escape")
    page.close()


def quant_like_word(m1: float, code: int, offset: int, sign: int) -> int:
    """A word of the shape the Ascend guide's quant table gives (a hand-made example): the float32 m1 in bits
    31..13, a 4-bit code at 35..32, a 9-bit two's complement offset at 45..37 and a flag at 46."""
    bits = int(np.float32(m1).view(np.uint32)) & 0xFFFFE000
    return bits | code << 32 | (offset & 0x1FF) << 37 | sign << 46


def test_bit_field_cells_and_the_steps_operands_show_in_the_page(browser, tmp_path, monkeypatch):
    """The page's side of PageField and PageOutline (the ISAs' own fields and outlines are checked in their
    packages): a view of 64-bit words decodes each field as the field says (a float's top bits, an unsigned code
    shown plus one, a signed offset), and the operands the hook names for a step are outlined, role by role, in
    the panel, with their names in the operands line; the other steps outline nothing."""
    from isasim.core.isa import PageField, PageOutline, PageView

    isa = get_isa("ascend_cube")
    words = [quant_like_word(0.5, 3, -3, 1), quant_like_word(-1.75, 0, 255, 0), quant_like_word(0.375 + 2.0 ** -20, 15, -256, 1)]
    fields = (PageField("M1", 13, 19, "float_top"), PageField("N", 32, 4, add=1),
              PageField("offset", 37, 9, "signed"), PageField("sign", 46, 1))
    monkeypatch.setattr(type(isa), "page_views", lambda self, config, program: [
        PageView("fb.words", "fb", "uint64", [[0, 8, 16]], note="three words", show=True, fields=fields)])

    def outlines(self, instruction, before):
        if "L0B" not in instruction.text:
            return []
        return [PageOutline("l1", ((0, 512),), "src L1[0]", "read"),
                PageOutline("l0b", ((0, 512),), "dst L0B[0]", "written")]

    monkeypatch.setattr(type(isa), "page_outlines", outlines)
    program = isa.assemble("LoadData(dst=L0B[0], src=L1[0], dtype=int8, repeatTimes=1)\n"
                           "LoadData(dst=L0A[0], src=L1[0], dtype=int8, repeatTimes=1)")
    sizes = {spec.name: spec.size for spec in isa.arrays({"chip": "910B"})}
    l1 = bytes((i * 7 + 1) % 251 for i in range(sizes["l1"]))
    fb = b"".join(w.to_bytes(8, "little") for w in words).ljust(sizes["fb"], b"\0")
    init = Init(arrays={"fb": fb, "l1": l1})
    page_file = tmp_path / "fields.html"
    page_file.write_text(page_html(build_model("ascend_cube", {"chip": "910B"}, program, init)))
    page = Page(browser, page_file)
    shown = page.page.eval_on_selector_all('[data-testid="view-fb.words"] td[data-row]',
                                           "cells => cells.map(c => c.dataset.value)")
    assert shown == ["M1=0.5 N=4 offset=-3 sign=1", "M1=-1.75 N=1 offset=255 sign=0",
                     "M1=0.375 N=16 offset=-256 sign=1"]  # the 2**-20 below bit 13 is not kept
    assert "bits 45..37, two's complement" in page.by("view-fields-fb.words").inner_text()
    assert page.by("operands").is_hidden()
    page.page.keyboard.press("ArrowRight")
    assert page.by("operands").inner_text() == "Operands of this step: src L1[0] (read); dst L0B[0] (written)"
    read = page.page.locator('[data-testid="panel-l1"] td.operand-read')
    written = page.page.locator('[data-testid="panel-l0b"] td.operand-written')
    assert read.count() > 0 and written.count() > 0
    offsets = page.page.eval_on_selector_all('[data-testid="panel-l1"] td.operand',
                                             "cells => cells.map(c => Number(c.dataset.offset))")
    assert min(offsets) == 0 and max(offsets) < 512
    assert "operand src L1[0] (read)" in read.first.get_attribute("title")
    page.page.keyboard.press("ArrowRight")
    assert page.by("operands").is_hidden()
    assert page.page.locator("td.operand").count() == 0
    page.close()


def page_after_first(browser, tmp_path, model: dict, prefix: str) -> Page:
    """The model's page, stepped by the arrow key to the state after the first step whose instruction starts
    with ``prefix``."""
    texts = [model["listing"][step["instruction"]]["text"] for step in model["steps"]]
    step = next(i for i, text in enumerate(texts) if text.startswith(prefix)) + 1
    page_file = tmp_path / f"after-{step}.html"
    page_file.write_text(page_html(model), encoding="utf-8")
    page = Page(browser, page_file)
    while page.step_number() < step:
        page.page.keyboard.press("ArrowRight")
    return page


def test_real_operands_and_quant_words_in_the_page(browser, tmp_path):
    """The ISAs' own hooks in the browser. arm_sme: the seed's first UDOT outlines its ZA vector group as the
    Arm ARM picks it (VGx4 at SVL 512: the 64 ZA vectors in four groups of 16, so vectors 0, 16, 32, 48 for
    w8 = 0), each cell the step wrote lies inside it, and Zn/Zm are outlined as read. ascend_cube: after the
    qbmm example's copy into FB, the FB view's cells show each quant word's fields as the package's
    decode_quant_word reads them (the words are the case's scale_b.npy, packed by Huawei's ops-nn)."""
    from isasim.ascend_cube.kernels.qbmm import build
    from isasim.ascend_cube.kernels.qbmm_case_file import load_case
    from isasim.ascend_cube.numerics.quant_word import decode_quant_word

    page = page_after_first(browser, tmp_path, trace_model(read_trace(str(SEEDS["arm_sme"][0]))), "udot")
    operands = page.by("operands").inner_text()
    assert "ZA vectors 0, 16, 32, 48" in operands and "(read and written)" in operands
    assert all(f"z{n}" in operands for n in range(5))
    za = '[data-testid="panel-za"]'
    outlined = page.page.eval_on_selector_all(f"{za} td.operand-both",
                                              "cells => cells.map(c => Number(c.dataset.offset))")
    written = page.page.eval_on_selector_all(f"{za} td.written", "cells => cells.map(c => Number(c.dataset.offset))")
    assert written and set(written) <= set(outlined)
    # the panel shows 32 of ZA's 64 vectors at a time: there, vectors 0 and 16 of the group, whole
    assert sorted(outlined) == [row * 64 + 4 * i for row in (0, 16) for i in range(16)]
    assert page.page.locator('[data-testid="panel-z0"] td.operand-read').count() == 16  # 64 bytes as int32
    page.close()

    example = EXAMPLES / "ascend_cube" / "qbmm_int8_bf16"
    case = load_case(example / "case.json")
    kernel = build(case)
    isa = get_isa("ascend_cube")
    config = isa.configure({"chip": case.chip, "options": dict(case.options)})
    program = isa.assemble("\n".join(kernel.program_lines))
    model = build_model("ascend_cube", config, program, kernel.init(), workings_steps=0)
    page = page_after_first(browser, tmp_path, model, "DataCopy(dst=FB")
    fb = next(v for v in model["views"] if v["panel"] == "fb")
    shown = page.page.eval_on_selector_all(f'[data-testid="view-{fb["name"]}"] td[data-row]',
                                           "cells => cells.map(c => c.dataset.value)")
    words = np.load(example / "scale_b.npy")
    assert len(shown) == min(len(words), 32)  # a view shows 32 rows at a time
    for text, word in zip(shown, words):
        decoded = decode_quant_word(int(word), case.chip, config.get("options"))
        values = dict(part.split("=") for part in text.split())
        # the page writes the shortest decimal that reads back as the same binary32
        assert np.float32(values["M1"]) == np.float32(decoded.m1) and int(values["offset"]) == decoded.offset
        assert int(values["sign"]) == decoded.signed
        if case.chip == "910B":
            assert int(values["MCB"]) == decoded.mcb and int(values["N"]) == decoded.n_shift
    page.close()

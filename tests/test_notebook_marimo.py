"""The trace viewer inside a marimo notebook: ``marimo run`` serves a two-line notebook that shows an
``isasim.load_trace`` result, and headless Chromium (Playwright) finds the viewer in the page, steps it to its end
and reads C, which must equal the trace's expected memory (computed by the example's generator with numpy, not by
the simulator).  marimo renders a value through its ``_repr_html_`` as Jupyter does; this checks the viewer's
iframe survives marimo's output sanitising and runs there.  Skips with the reason without marimo, Playwright or
Chromium.
"""

from __future__ import annotations

import json
import shutil
import socket
import subprocess
import sys
import textwrap
import time
import urllib.request
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("marimo", reason="marimo not installed: pip install -e '.[test]'")
playwright_api = pytest.importorskip("playwright.sync_api", reason="playwright (Python) not installed: "
                                     "pip install -e '.[test]'")

ROOT = Path(__file__).resolve().parents[1]
TRACE = ROOT / "examples" / "x86_amx" / "int8_block.trace.json"


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _expected_c() -> list[str]:
    data = json.loads(TRACE.read_text())
    region = next(r for r in data["init"]["memory"] if r.get("name") == "C")
    found = next(r for r in data["expect"]["memory"] if int(r["addr"], 16) == int(region["addr"], 16))
    return [str(v) for v in np.frombuffer(bytes.fromhex(found["hex"]), dtype="<i4")]


@pytest.fixture
def marimo_server(tmp_path):
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        pytest.skip("chromium not found: install Debian's chromium package (.ci/run does)")
    app = tmp_path / "viewer_app.py"
    app.write_text(textwrap.dedent(f"""\
        import marimo

        app = marimo.App()


        @app.cell
        def _():
            import isasim
            trace = isasim.load_trace({str(TRACE)!r})
            trace
            return


        if __name__ == "__main__":
            app.run()
        """))
    port = _free_port()
    server = subprocess.Popen([sys.executable, "-m", "marimo", "run", str(app), "--headless", "--port", str(port),
                               "--no-token"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, cwd=tmp_path)
    url = f"http://127.0.0.1:{port}/"
    try:
        for _ in range(120):  # marimo starts in a few seconds; a server that never answers fails the test
            if server.poll() is not None:
                pytest.fail(f"marimo run exited: {server.stdout.read().decode(errors='replace')[-800:]}")
            try:
                urllib.request.urlopen(url, timeout=1).close()
                break
            except OSError:
                time.sleep(0.5)
        else:
            pytest.fail("marimo run did not answer within 60 s")
        yield chromium, url
    finally:
        server.terminate()
        server.wait(timeout=20)


def test_the_viewer_runs_inside_a_marimo_notebook(marimo_server):
    chromium, url = marimo_server
    with playwright_api.sync_playwright() as driver:
        browser = driver.chromium.launch(executable_path=chromium, args=["--no-sandbox"])
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            errors: list[str] = []
            page.on("pageerror", lambda error: errors.append(str(error)))
            page.goto(url)
            viewer = page.frame_locator("iframe.isasim-viewer-frame")
            viewer.get_by_test_id("step-number").wait_for(timeout=60_000)  # the cell runs after the page loads
            assert viewer.get_by_test_id("step-number").text_content() == "0"
            viewer.get_by_test_id("step-forward").click()
            assert viewer.get_by_test_id("step-number").text_content() == "1"
            viewer.get_by_test_id("step-last").click()
            shown = viewer.locator('[data-testid="panel-C"] td[data-row]').evaluate_all(
                "cells => cells.map(c => c.dataset.value)")
            assert shown == _expected_c()
            assert errors == []
        finally:
            browser.close()

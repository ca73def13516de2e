"""isasim explain: every section comes from the definitions, every worked number from the machine.

The worked elements are checked three ways: the explanation's own check (its account
against the machine's C[m][n]), an independent recomputation here from the tile bytes
the explanation shows, and a separate run of the same data through the AMX test
harness.
"""

from __future__ import annotations

import argparse
import re
import xml.etree.ElementTree as ET

import numpy as np
import pytest

from isasim import cli
from isasim.core.explain import (
    Check, Code, Encoding, ExplainError, ExplainOptions, Grid, Table, render_html, render_markdown, render_svg,
    split_instruction_argument, terminal_svg, to_text,
)
from isasim.core.errors import AssemblyError, DecodeError
from isasim.core.trace import Init, RegionView
from isasim.explain_cli import register
from isasim.x86_amx import amx, scalar
from isasim.x86_amx.explain import explain, reference_pages, tilecfg_layout

from amxharness import stored_dwords, tdp_program


def ex(text=None, code=None, **options):
    return explain(text, code, ExplainOptions(**options))


def blocks(expl, section, kind):
    return [b for b in expl.section(section).blocks if isinstance(b, kind)]


# ---------------------------------------------------------------------------
# Every instruction the definitions declare
# ---------------------------------------------------------------------------

PAGES = reference_pages()


@pytest.mark.parametrize("page", PAGES, ids=[p.slug for p in PAGES])
def test_every_form_explains_from_its_definition(page):
    expl = ex(page.example)
    titles = [s.title for s in expl.sections]
    for wanted in ("Encoding", "Operands", "Faults", "Worked example"):
        assert wanted in titles
    form = next(f for f in amx.FORMS + scalar.FORMS if f.mnemonic == page.slug)
    # the operation is the docstring of the semantics function the simulator runs
    (code,) = blocks(expl, "Operation (the semantics the simulator executes)", Code)
    assert code.text == form.doc
    # the encoding parts cover the instruction's bytes exactly, in order
    (encoding,) = blocks(expl, "Encoding", Encoding)
    assert b"".join(p.data for p in encoding.parts) == expl.encoding
    assert [p.offset for p in encoding.parts] == sorted(p.offset for p in encoding.parts)
    assert all(c.equal for c in expl.checks), [c for c in expl.checks if not c.equal]
    # every renderer accepts it
    assert page.slug in to_text(expl).lower()
    if expl.figure is not None:
        ET.fromstring(render_svg(expl.figure))
    html = render_html(expl)
    assert html.startswith("<!DOCTYPE html>") and ("<svg" in html) == (expl.figure is not None)
    assert "## Worked example" in render_markdown(expl)


def test_amx_faults_come_from_the_form_declaration():
    for form in amx.FORMS:
        expl = ex(next(p.example for p in PAGES if p.slug == form.mnemonic))
        (table,) = blocks(expl, "Faults", Table)
        rules = [str(row[1]) for row in table.rows]
        for kind, rule in form.faults:
            assert rule in rules
        assert any(form.feature in r for r in rules)
        assert any(r.startswith("encoding:") for r in rules)


# ---------------------------------------------------------------------------
# The encoding, field by field
# ---------------------------------------------------------------------------


def fields(expl):
    (encoding,) = blocks(expl, "Encoding", Encoding)
    return {(p.name, f.name): f for p in encoding.parts for f in p.fields}


def test_vex_fields_of_tdpbusd_from_text_and_from_hex():
    a, b = ex("tdpbusd tmm0, tmm1, tmm2"), ex(code=bytes.fromhex("c4e2695ec1"))
    assert a.encoding == b.encoding == bytes.fromhex("c4e2695ec1") and a.text == b.text
    f = fields(a)
    assert f[("VEX byte 1", "m-mmmm")].bits == "00010" and "0F38" in f[("VEX byte 1", "m-mmmm")].meaning
    assert f[("VEX byte 2", "v̄v̄v̄v̄")].bits == "1101" and "tmm2" in f[("VEX byte 2", "v̄v̄v̄v̄")].meaning
    assert f[("VEX byte 2", "pp")].bits == "01" and "66" in f[("VEX byte 2", "pp")].meaning
    assert f[("ModRM", "reg")].bits == "000" and "tmm0" in f[("ModRM", "reg")].meaning
    assert f[("ModRM", "r/m")].bits == "001" and "tmm1" in f[("ModRM", "r/m")].meaning
    assert all(x.ok is not False for x in f.values())


def test_sib_and_displacement_of_a_tile_load():
    f = fields(ex("tileloadd tmm1, [rdi+r8*4+0x40]"))
    assert f[("SIB", "scale")].bits == "10" and "4" in f[("SIB", "scale")].meaning
    assert "r8" in f[("SIB", "index")].meaning and "rdi" in f[("SIB", "base")].meaning
    assert f[("VEX byte 1", "X̄")].bits == "0"  # r8 needs X = 1, stored inverted
    assert "0x40" in f[("disp8", "disp8")].meaning


def test_an_undefined_encoding_is_marked_and_faults_on_the_machine():
    expl = ex(code=bytes.fromhex("c4e27f49c0"))  # TILEZERO with VEX.L=1
    assert fields(expl)[("VEX byte 2", "L")].ok is False
    assert any("VEX.L=1" in v for k, v in expl.facts if k == "undefined")
    text = to_text(expl)
    assert "#UD" in text and "invalid encoding" in text


def test_scalar_encoding_follows_the_opcode_row():
    expl = ex("add rax, 5")
    f = fields(expl)
    assert f[("REX", "W")].bits == "1"
    assert f[("ModRM", "reg")].meaning == "opcode extension /0"
    assert ("imm8", "imm8") in f
    assert any(k == "opcode row" and v.startswith("o64 83 /0 ib") for k, v in expl.facts)


# ---------------------------------------------------------------------------
# The worked element of the integer dot products
# ---------------------------------------------------------------------------


def int_element(expl):
    (check,) = expl.checks
    return int(check.explained), int(check.machine)


@pytest.mark.parametrize("mnemonic", ["tdpbssd", "tdpbsud", "tdpbusd", "tdpbuud"])
@pytest.mark.parametrize("seed,shape,m,n", [(1, None, None, None), (7, (3, 5, 2), 2, 1), (3, (16, 16, 16), 15, 15)])
def test_int_worked_element_equals_the_machine(mnemonic, seed, shape, m, n):
    expl = ex(f"{mnemonic} tmm0, tmm1, tmm2", seed=seed, shape=shape, element=(m, n))
    explained, machine = int_element(expl)
    assert explained == machine
    # recompute from the tiles the explanation shows (A row m, B's dword n)
    grids = {g.title.split(" = ")[0]: g for g in blocks(expl, "Worked example", Grid) if " = " in g.title}
    A = [[int(c.text) for c in row] for row in grids["A"].cells]
    B = [[int(c.text) for c in row] for row in grids["B"].cells]
    mm = 1 if m is None else m
    nn = (2 if n is None else n) if shape is None or shape[2] > 2 else (n or 0)
    c_before = next(int(x) for x in re.findall(r"before = (-?\d+)", to_text(expl)))
    total = c_before + sum(A[mm][4 * k + i] * B[k][4 * nn + i] for k in range(len(B)) for i in range(4))
    assert (total - machine) % (1 << 32) == 0


def test_int_element_wraps_around_and_matches_the_harness():
    # A = 255, B = 127 everywhere, C = 2^31 - 1: the 32-bit sum wraps
    M = K = N = 2
    a = bytes([255]) * 64 * M
    b = bytes([127]) * 64 * K
    c = np.full((M, 16), 2**31 - 1, dtype=np.int32).tobytes()
    init = Init(regs={}, memory=[(0x100000, a, True), (0x200000, b, True), (0x300000, c, True)],
                views=[RegionView("A", 0x100000, "uint8", (M, 64)), RegionView("B", 0x200000, "int8", (K, 64)),
                       RegionView("C", 0x300000, "int32", (M, 16))])
    shapes = {0: (M, 4 * N), 1: (M, 4 * K), 2: (K, 4 * N)}
    from isasim.x86_amx.explain import tilecfg_image
    cfg = tilecfg_image(shapes)
    init.memory.append((0x10000, cfg, True))
    init.views.append(RegionView("tilecfg", 0x10000, "uint8", (1, 64)))
    expl = ex("tdpbuud tmm0, tmm1, tmm2", init=init, init_source="test", element=(1, 1))
    explained, machine = int_element(expl)
    expected = (2**31 - 1 + 4 * K * 255 * 127) % 2**32
    assert explained == machine == expected - 2**32
    assert "wraps mod 2^32" in to_text(expl)
    harness = tdp_program("tdpbuud", c, a, b, shapes)
    assert int(stored_dwords(harness, M, N)[1, 1]) == machine


# ---------------------------------------------------------------------------
# The lanes of TDPBF16PS / TDPFP16PS
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("mnemonic", ["tdpbf16ps", "tdpfp16ps"])
@pytest.mark.parametrize("seed", [1, 2, 5])
def test_float_worked_element_follows_the_lanes_and_equals_the_machine(mnemonic, seed):
    expl = ex(f"{mnemonic} tmm3, tmm4, tmm5", seed=seed, shape=(2, 3, 2), element=(1, 0))
    (check,) = expl.checks
    assert check.equal and check.what == "C[1][0] (fp32)"
    lanes = next(t for t in blocks(expl, "Worked example", Table) if "FMA32" in " ".join(t.columns))
    assert [(r[0].text, r[1].text) for r in lanes.rows] == [(str(k), lane) for k in range(3) for lane in "EO"]
    assert all("exact product" in r[6] for r in lanes.rows)  # the numerics reference's notes
    text = to_text(expl)
    assert "ADD32(E, O)" in text and "RNE to 24 bits" in text


def test_fp16_runs_on_a_cpu_that_has_it_and_faults_on_one_that_does_not():
    assert dict(ex("tdpfp16ps tmm0, tmm1, tmm2").facts)["example CPU"] == "granite-rapids"
    expl = ex("tdpfp16ps tmm0, tmm1, tmm2", cpu="emerald-rapids")
    assert not expl.checks
    assert "needs AMX-FP16" in to_text(expl)


def test_a_shape_the_machine_rejects_shows_the_machine_fault():
    expl = ex("tdpbusd tmm0, tmm1, tmm2", shape=(4, 17, 4))  # A.colsb = 68 > 64
    text = to_text(expl)
    assert "#GP" in text and "colsb=68" in text and not expl.checks


def test_element_outside_the_tile_is_an_error():
    with pytest.raises(ExplainError, match="outside C's rows"):
        ex("tdpbusd tmm0, tmm1, tmm2", element=(4, 0))


# ---------------------------------------------------------------------------
# Tile loads and stores, configuration, zeroing
# ---------------------------------------------------------------------------


def test_tile_load_rows_are_where_the_machine_read_them():
    expl = ex("tileloadd tmm2, [rsi+rbx*2+0x10]", shape=(5, 12))
    (check,) = expl.checks
    addresses = [int(a, 16) for a in check.machine.split()]
    assert check.equal and len(addresses) == 5
    assert [b - a for a, b in zip(addresses, addresses[1:])] == [64] * 4  # rbx = 32, scale 2


def test_tile_load_with_start_row_keeps_the_rows_below():
    expl = ex("tileloadd tmm1, [rdi+r8*1]", start_row=2)
    (check,) = expl.checks
    assert check.equal and len(check.machine.split()) == 2  # rows 2 and 3 of 4
    text = to_text(expl)
    assert "kept (below start_row)" in text and "start_row := 2" in text


def test_tile_load_without_index_reads_every_row_at_one_address():
    expl = ex("tileloadd tmm0, [rdi+riz*1+0x8]")
    (check,) = expl.checks
    assert check.equal and len(set(check.machine.split())) == 1


def test_tile_store_rows():
    (check,) = ex("tilestored [rdx+r8*1], tmm0", shape=(3, 8)).checks
    assert check.equal and len(check.machine.split()) == 3


def test_tilecfg_layout_is_read_from_the_definition():
    names = tilecfg_layout()
    assert names[0] == "palette" and names[1] == "start_row"
    assert names[16] == names[17] == "colsb[0]" and names[30] == "colsb[7]" and names[48] == "rows[0]"
    assert names[2] == names[32] == names[63] == "reserved"


def test_ldtilecfg_and_sttilecfg():
    expl = ex("ldtilecfg [rcx+0x40]", shape=(2, 3, 4))
    (check,) = expl.checks
    assert check.equal and "tmm0=2x16 tmm1=2x12 tmm2=3x16" in check.machine
    (check,) = ex("sttilecfg [rax]").checks
    assert check.equal


def test_ldtilecfg_of_a_bad_configuration_is_a_gp():
    cfg = bytearray(64)
    cfg[0], cfg[5] = 1, 7  # a reserved byte
    init = Init(memory=[(0x10000, bytes(cfg), True)], views=[RegionView("tilecfg", 0x10000, "uint8", (1, 64))])
    text = to_text(ex("ldtilecfg [rcx]", init=init, init_source="test"))
    assert "#GP" in text and "reserved byte 5" in text


@pytest.mark.parametrize("text", ["tilezero tmm5", "tilerelease"])
def test_zeroing(text):
    expl = ex(text)
    assert expl.checks and all(c.equal for c in expl.checks)


# ---------------------------------------------------------------------------
# The scalar subset: flags
# ---------------------------------------------------------------------------


def flag_rows(expl):
    table = next(t for t in blocks(expl, "Worked example", Table) if t.columns[0] == "flag")
    return {r[0]: (r[1], r[2].text) for r in table.rows}


def test_scalar_flags_come_from_the_machine():
    init = Init(regs={"rax": 0x7FFFFFFFFFFFFFFF, "rbx": 1, "rflags": 0x202})
    flags = flag_rows(ex("add rax, rbx", init=init, init_source="test"))
    assert flags["OF"] == ("0", "1") and flags["SF"] == ("0", "1") and flags["CF"] == ("0", "0")


def test_branch_taken_or_not():
    taken = to_text(ex("jne 0x400010", init=Init(regs={"rflags": 0x202}), init_source="t"))
    assert "0x400010 (taken)" in taken
    fall = to_text(ex("jne 0x400010", init=Init(regs={"rflags": 0x242}), init_source="t"))
    assert "not taken" in fall


# ---------------------------------------------------------------------------
# Input handling and the command
# ---------------------------------------------------------------------------


def test_instruction_argument():
    assert split_instruction_argument(["c4e2695ec1"]) == (None, bytes.fromhex("c4e2695ec1"))
    assert split_instruction_argument(["c4 e2 69", "5e c1"]) == (None, bytes.fromhex("c4e2695ec1"))
    assert split_instruction_argument(["add"]) == ("add", None)
    with pytest.raises(ExplainError):
        split_instruction_argument(["c4e"])
    with pytest.raises(AssemblyError, match="unknown mnemonic"):
        ex("tilezerox tmm0")
    with pytest.raises(DecodeError):
        ex(code=bytes.fromhex("0f0b"))
    with pytest.raises(ExplainError, match="one instruction"):
        ex("add rax, rbx; ret")


_BUILD_PARSER = cli.build_parser


def parser():
    """The real `isasim` parser, with explain/docs registered if cli.py does not do it yet."""
    p = _BUILD_PARSER()
    sub = next(a for a in p._actions if isinstance(a, argparse._SubParsersAction))
    if "explain" not in sub.choices:
        def common(q, *, program=True):
            q.add_argument("--isa", default="x86_amx")
            q.add_argument("--max-steps", type=int, default=10_000)
            q.add_argument("--no-color", action="store_true")
        register(sub, common)
    return p


def run_cli(monkeypatch, capsys, *argv):
    monkeypatch.setattr(cli, "build_parser", parser)
    code = cli.main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("argv,words", [
    (["explain", "tdpbusdx tmm0, tmm1, tmm2"], ["unknown mnemonic"]),
    (["explain", "c4e"], ["not hex bytes"]),
    (["explain", "0f0b"], ["cannot decode"]),
    (["explain", "c4", "e2"], ["cannot decode"]),
    (["explain"], ["needs an instruction"]),
    (["explain", "tdpbusd tmm0, tmm1, tmm2", "--m", "9"], ["outside"]),
    (["explain", "tdpbusd tmm0, tmm1, tmm2", "--shape", "4x4"], ["--shape"]),
    (["explain", "tdpbusd tmm0, tmm1, tmm2", "--init", "no/such.json"], ["no such file"]),
])
def test_bad_input_is_one_line_and_exit_2(monkeypatch, capsys, argv, words):
    code, out, err = run_cli(monkeypatch, capsys, *argv)
    assert code == 2
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("isasim: error: ") and "Traceback" not in err
    for word in words:
        assert word in lines[0]


def test_command_writes_svg_and_html(monkeypatch, capsys, tmp_path):
    svg, page = tmp_path / "e.svg", tmp_path / "e.html"
    code, out, err = run_cli(monkeypatch, capsys, "explain", "tdpbf16ps tmm0, tmm1, tmm2", "--m", "2", "--n", "3",
                             "--seed", "4", "--no-color", "--svg", svg, "--html", page)
    assert code == 0, err
    assert "C[2][3] (fp32): explained" in out and "equal ✓" in out
    root = ET.fromstring(svg.read_text())
    assert root.tag.endswith("svg") and len(root.findall(".//{http://www.w3.org/2000/svg}rect")) > 50
    html = page.read_text()
    assert "<svg" in html and "Worked example" in html and "http" not in html.replace("http://www.w3.org", "")


def test_command_with_hex_and_an_example_trace(monkeypatch, capsys):
    code, out, _ = run_cli(monkeypatch, capsys, "explain", "c4e2695ec1", "--init",
                           "examples/x86_amx/int8_block.trace.json", "--m", "2", "--n", "3", "--no-color",
                           "--width", "140")
    assert code == 0
    a_row = [(13 * k + 2 * 17) % 256 for k in range(64)]  # the example's A: row m is 13k + 17m mod 256
    assert "C[2][3] (int32): explained" in out and "equal ✓" in out
    assert " ".join(map(str, a_row[:4])) in out


def test_terminal_screenshot_is_rich_svg():
    svg = terminal_svg(ex("tdpbusd tmm0, tmm1, tmm2"))
    ET.fromstring(svg)
    assert "tdpbusd" in svg
    assert isinstance(ex("tdpbusd tmm0, tmm1, tmm2").checks[0], Check)

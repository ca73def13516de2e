"""The arm_sme explain pictures (``--svg``, ``--html``, docs/arm_sme/*.svg), checked against the machine.

What the pictures draw is compared with the worked example's run, read independently here: the
ZA vectors the journal says the step wrote, the predicates in the machine, za_tiles.read_slice's and
za_tiles.slice_rows's positions of a slice, the tile's elements in the machine's ZA.  Those tests are
marked ``consistency`` (a picture against isasim's own run); the evidence that the run is right is QEMU's
(semantics/*_vs_qemu.py, test_infrastructure_vs_qemu.py).
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

import pytest

from isasim.arm_sme.explain import example_text
from isasim.arm_sme.explain import checks_sve
from isasim.arm_sme.forms import FORMS
from isasim.arm_sme.semantics.za_tiles import read_slice, slice_rows, tile_rows
from isasim.cli import main
from isasim.core.explain import ExplainOptions, explain, render_svg

POSITION = {form.id: index for index, form in enumerate(FORMS)}
SIZE_BOUND = 300_000  # bytes of SVG, at every SVL
GREY = "inactive"


def explained(text: str, svl: int, seed: int = 1, init=None):
    return explain("arm_sme", text, None, ExplainOptions(seed=seed, config={"svl": svl}, init=init))


def explained_with_run(text: str, svl: int, seed: int = 1, monkeypatch=None, init=None):
    """The explanation and the example's run, caught as the explainer hands it to figure()."""
    import isasim.arm_sme.explain as arm_explain

    seen = {}
    original = arm_explain.figure

    def spy(ins, encoding, run):
        seen["run"] = run
        return original(ins, encoding, run)

    monkeypatch.setattr(arm_explain, "figure", spy)
    expl = explained(text, svl, seed, init)
    return expl, seen["run"]


def grids(expl):
    return {panel.title: panel for row in expl.figure.rows for panel in row if hasattr(panel, "cells")}


@pytest.mark.parametrize("form", list(FORMS), ids=lambda f: f.id)
def test_every_form_draws_a_small_well_formed_svg(form):
    svl = (128, 2048)[POSITION[form.id] % 2]  # the smallest and largest SVL, each for every other form
    svg = render_svg(explained(example_text(form), svl).figure)
    root = ET.fromstring(svg)
    assert root.tag.endswith("svg")
    assert len(svg.encode()) < SIZE_BOUND, (form.id, len(svg))


DOTS = [f for f in FORMS if f.group in ("dot", "fp_dot")]


def za_rows_drawn(grid) -> list[int]:
    return [int(re.search(r"ZA\[(\d+)\]", label).group(1)) for label in grid.row_labels]


@pytest.mark.consistency
@pytest.mark.parametrize("svl", [128, 2048])
@pytest.mark.parametrize("form", DOTS, ids=lambda f: f.id)
def test_a_dot_draws_the_journals_vectors_coloured_by_r_and_arrows_to_element_0(svl, form, monkeypatch):
    expl, run = explained_with_run(example_text(form), svl, monkeypatch=monkeypatch)
    written = [w.where.subscript for w in run.record.writes if w.where.name == "za"]
    za = next(g for title, g in grids(expl).items() if title.startswith("ZA."))
    assert za_rows_drawn(za) == written  # r = 0, 1, ... in the order the machine wrote them
    assert len(written) == form.extra["shape"].nreg
    for r, row in enumerate(za.cells):
        roles = {c.role for c in row[1:]} | ({row[0].role} if r else set())
        assert roles == {f"k{r}"}, (r, roles)
    assert za.cells[0][0].role == "c"
    ebytes = form.extra["shape"].esize // 8 if form.group == "dot" else 4
    for vector, row in zip(written, za.cells):  # each element's bits (the tooltip: old -> new) are the machine's
        for e, cell in enumerate(row):
            bits = int.from_bytes(bytes(run.machine.state.za[vector][e * ebytes:(e + 1) * ebytes]), "little")
            assert cell.note.endswith(f"-> {bits:0{2 * ebytes}x}"), (vector, e, cell.note)
    ways = 2 if form.group == "fp_dot" else form.extra["shape"].ways
    assert len(expl.figure.arrows) == 2 * ways  # one per lane of Zn and of Zm
    for arrow in expl.figure.arrows:
        assert (arrow.dst, arrow.dst_cell) == (za.title, (0, 0))
        source = grids(expl)[arrow.src]
        assert source.cells[arrow.src_cell[0]][arrow.src_cell[1]].role == arrow.role


@pytest.mark.consistency
def test_a_dot_draws_the_machines_element_values(monkeypatch):
    """Each drawn ZA element is the machine's (the tooltip holds its bits before -> after)."""
    expl, run = explained_with_run("udot za.s[w8, 0, vgx4], {z0.b-z3.b}, z4.b", 2048, monkeypatch=monkeypatch)
    za = next(g for title, g in grids(expl).items() if title.startswith("ZA."))
    state = run.machine.state
    for label, row in zip(za.row_labels, za.cells):
        vector = int(re.search(r"ZA\[(\d+)\]", label).group(1))
        for e, cell in enumerate(row):
            assert int(cell.text, 16) == int.from_bytes(bytes(state.za[vector][4 * e:4 * e + 4]), "little")
    assert len(za.cells[0]) < state.svl // 32 and "elided" in expl.figure.caption


OUTERS = [f for f in FORMS if f.group in ("outer", "fp_outer")]


def outer_widths(form):
    shape = form.extra["shape"]
    if form.group == "fp_outer":
        return 32, 1 if shape.kind == "fmopa" else 2
    return shape.esize, shape.ways


def active(pred, element: int, ebytes: int) -> bool:
    bit = element * ebytes
    return bool(int(pred[bit // 8]) >> (bit % 8) & 1)


@pytest.mark.consistency
@pytest.mark.parametrize("svl,seed", [(128, 1), (128, 5), (2048, 2)])
@pytest.mark.parametrize("form", OUTERS, ids=lambda f: f.id)
def test_an_outer_product_greys_exactly_the_inactive_cells(svl, seed, form, monkeypatch):
    expl, run = explained_with_run(example_text(form), svl, seed, monkeypatch=monkeypatch)
    da, a, b, n, m = run.record.instruction.operands
    esize, ways = outer_widths(form)
    nb = esize // ways // 8
    state = run.machine.state
    pn, pm = state.p[a], state.p[b]  # MOPA writes no predicate: these are the example's
    (grid,) = [g for g in grids(expl).values() if g.title.startswith(f"ZA{da}.")]
    tile_row_at = {i: int(re.match(r"row (\d+)", label).group(1)) for i, label in enumerate(grid.row_labels)
                   if label.startswith("row")}
    tile_col_at = {j: int(label.split()[1]) for j, label in enumerate(grid.col_labels) if label.startswith("col")}
    vectors = tile_rows(da, esize, state.svlb)
    for i, row in enumerate(grid.cells):
        for j, cell in enumerate(row):
            if i in tile_row_at and j in tile_col_at:
                r, c = tile_row_at[i], tile_col_at[j]
                reached = any(active(pn, ways * r + k, nb) and active(pm, ways * c + k, nb) for k in range(ways))
                assert (cell.role == GREY) == (not reached), (r, c)
                if reached:
                    vector = int(vectors[r])
                    bits = int.from_bytes(bytes(state.za[vector][c * esize // 8:(c + 1) * esize // 8]), "little")
                    assert cell.note.split("-> ")[1].split()[0] == f"{bits:0{esize // 4}x}"
            elif i in tile_row_at:  # Zn down the side: element ways*row + k, governed by Pn
                assert (cell.role == GREY) == (not active(pn, ways * tile_row_at[i] + j, nb))
            elif j in tile_col_at:  # Zm across the top: element ways*col + k, governed by Pm
                assert (cell.role == GREY) == (not active(pm, ways * tile_col_at[j] + i, nb))
    assert len(tile_row_at) <= 8 and len(tile_col_at) <= 8


def test_outer_product_examples_have_both_grey_and_active_cells(monkeypatch):
    """The random predicates of the example leave some cells masked, so the greying is visible."""
    expl, _ = explained_with_run("smopa za1.s, p1/m, p2/m, z1.b, z2.b", 512, monkeypatch=monkeypatch)
    roles = [c.role for g in grids(expl).values() for row in g.cells for c in row]
    assert GREY in roles and "a" in roles and "b" in roles


# the single-slice forms (issue 28's SME2 MOVA of slice groups and ZT0's LDR/STR draw their own figures)
SLICES = [f for f in FORMS if (f.group == "za_memory" or (f.group == "za_move" and "vgx" not in f.id))
          and not checks_sve.applies(f)]


def slice_form_text(form, vertical: bool) -> str:
    return example_text(form).replace("za0h.", "za0v." if vertical else "za0h.")


@pytest.mark.consistency
@pytest.mark.parametrize("svl", [128, 2048])
@pytest.mark.parametrize("vertical", [False, True], ids=["horizontal", "vertical"])
@pytest.mark.parametrize("form", SLICES, ids=lambda f: f.id)
def test_a_slice_highlights_the_slices_cells(svl, vertical, form, monkeypatch):
    expl, run = explained_with_run(slice_form_text(form, vertical), svl, monkeypatch=monkeypatch)
    ins = run.record.instruction
    tile, is_vertical, s, offset = next(o for o in ins.operands if isinstance(o, tuple) and len(o) == 4)
    assert is_vertical == vertical
    ebytes = {"b": 1, "h": 2, "s": 4, "d": 8, "q": 16}[form.id[-1]]
    esize = 8 * ebytes
    state = run.machine.state
    dim = state.svl // esize
    index = ((run.before["regs"][f"x{s}"] & 0xFFFFFFFF) + offset) % dim
    positions = {(vector, e) for vector, start, stop, _ in slice_rows(tile, esize, vertical, index, state.svlb)
                 for e in range(start // ebytes, stop // ebytes)}
    (grid,) = [g for t, g in grids(expl).items() if t.startswith(f"za{tile}.")]
    drawn, highlighted = set(), set()
    for label, row in zip(grid.row_labels, grid.cells):
        vector = int(re.search(r"ZA\[(\d+)\]", label).group(1))
        for col_label, cell in zip(grid.col_labels, row):
            drawn.add((vector, int(col_label)))
            if cell.role is not None:
                highlighted.add((vector, int(col_label)))
    assert highlighted == positions & drawn and highlighted
    # the drawn slice values are the machine's slice (read_slice), element by element
    values = read_slice(state.za, tile, esize, vertical, index)
    for label, row in zip(grid.row_labels, grid.cells):
        r = int(label.split(":")[0])
        for col_label, cell in zip(grid.col_labels, row):
            c = int(col_label)
            if cell.role is not None:
                e = r if vertical else c
                assert int(cell.text, 16) == int.from_bytes(bytes(values[e * ebytes:(e + 1) * ebytes]), "little")


def test_horizontal_and_vertical_slices_differ_as_row_and_column(monkeypatch):
    for vertical in (False, True):
        expl, _ = explained_with_run(slice_form_text(FORMS["LD1W_za_s"], vertical), 512, monkeypatch=monkeypatch)
        (grid,) = [g for t, g in grids(expl).items() if t.startswith("za0.")]
        lit = [(i, j) for i, row in enumerate(grid.cells) for j, c in enumerate(row) if c.role is not None]
        assert len({i for i, _ in lit}) == (len(grid.cells) if vertical else 1)
        assert len({j for _, j in lit}) == (1 if vertical else len(grid.cells[0]))


def test_a_faulting_example_draws_the_encoding_and_names_the_fault(monkeypatch):
    from isasim.core.trace import parse_init

    # the example's own data is wherever the load looks; data given with --init need not be
    init = parse_init({"regs": {"x2": "0x20000"}, "memory": [{"addr": "0x20000", "size": 64}]})
    expl, run = explained_with_run("ldr x3, [x2, #4000]", 512, monkeypatch=monkeypatch, init=init)
    assert run.fault is not None
    assert len(expl.figure.rows) == 1 and run.fault.kind in expl.figure.caption
    ET.fromstring(render_svg(expl.figure))


def test_html_holds_the_svg_and_the_check_line(tmp_path, capsys):
    page = tmp_path / "page.html"
    code = main(["explain", "--isa", "arm_sme", "smopa za1.s, p1/m, p2/m, z1.b, z2.b", "--html", str(page),
                 "--no-color"])
    assert code == 0
    text = page.read_text()
    assert "<svg" in text and "</svg>" in text and "ZA1.S element (0, 0)" in text and "equal ✓" in text
    ET.fromstring(text[text.index("<svg"):text.index("</svg>") + len("</svg>")])


def test_svg_is_written_and_not_overwritten_without_force(tmp_path, capsys):
    picture = tmp_path / "pic.svg"
    args = ["explain", "--isa", "arm_sme", "ld1w {za0v.s[w12, 0]}, p0/z, [x2, x0, lsl #2]", "--svg", str(picture),
            "--no-color", "--svl", "2048"]
    assert main(args) == 0
    ET.fromstring(picture.read_text())
    capsys.readouterr()
    picture.write_text("mine")
    assert main(args) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("isasim: error: ")
    assert picture.read_text() == "mine"
    assert main(args + ["--force"]) == 0 and picture.read_text().startswith("<svg")


@pytest.mark.parametrize("args", [["--svg"], ["--svl", "3", "--svg", "x.svg"], ["--wv", "zz", "--svg", "x.svg"],
                                  ["--svg", "no/such/folder/x.svg"], ["--svg", "x.svg", "--html", "x.svg"]])
def test_bad_picture_options_are_one_line_errors(tmp_path, capsys, monkeypatch, args):
    monkeypatch.chdir(tmp_path)
    code = main(["explain", "--isa", "arm_sme", "udot za.s[w8, 0, vgx4], {z0.h-z3.h}, z4.h", *args])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and err.startswith("isasim: error: "), err
    assert not (tmp_path / "x.svg").exists()


@pytest.mark.consistency
@pytest.mark.parametrize("svl", [128, 2048])
@pytest.mark.parametrize("form", [f for f in FORMS if f.group == "za_move" and "vgx" in f.id], ids=lambda f: f.id)
def test_a_group_move_draws_the_groups_vectors_beside_their_registers(svl, form, monkeypatch):
    expl, run = explained_with_run(example_text(form), svl, monkeypatch=monkeypatch)
    za = next(g for title, g in grids(expl).items() if title.startswith("ZA.D group"))
    written = [w.where.subscript for w in run.record.writes if w.where.name == "za"]
    if form.id.startswith("MOVA_za_"):
        assert za_rows_drawn(za) == written
    state = run.machine.state
    z = next(g for title, g in grids(expl).items() if title.startswith("Z list"))
    for label, za_row, z_label, z_row in zip(za.row_labels, za.cells, z.row_labels, z.cells):
        vector = int(re.search(r"ZA\[(\d+)\]", label).group(1))
        register = int(re.match(r"z(\d+)", z_label).group(1))
        assert bytes(state.za[vector]) == bytes(state.z[register])  # the move made them equal
        assert [c.text for c in za_row] == [c.text for c in z_row]


@pytest.mark.consistency
@pytest.mark.parametrize("form", [f for f in FORMS if f.group == "z_memory" and "_ss" in f.id  # (single vector)
                                  and not checks_sve.applies(f)], ids=lambda f: f.id)
def test_a_z_load_or_store_greys_exactly_the_inactive_elements(form, monkeypatch):
    expl, run = explained_with_run(example_text(form), 512, monkeypatch=monkeypatch)
    t, g, _ = run.record.instruction.operands
    ebytes = {"b": 1, "h": 2, "s": 4, "d": 8}[form.id.split("_")[2]]
    register = next(g_ for title, g_ in grids(expl).items() if title.startswith(f"z{t}"))
    pred = run.machine.state.p[g]
    for e, cell in enumerate(register.cells[0]):
        assert (cell.role == GREY) == (not active(pred, e, ebytes))
        bits = int.from_bytes(bytes(run.machine.state.z[t][e * ebytes:(e + 1) * ebytes]), "little")
        assert int(cell.text, 16) == bits

"""isasim step --isa arm_sme, scripted as a user scripts it: what each step shows (lanes at the
instruction's element size, predicate marks, NZCV flags, the ZA vectors written), p and w on vector
groups, tiles, lanes and memory, back and goto, width folding at SVL 2048, bad commands, --svg.

The vector groups' rows are checked against QEMU: a golden trace of traces/arm_sme/ is stepped and
the rows `p za.s[...]` names must be the ZA vectors QEMU's expected ZA differs from the initial one in
(and za_tiles.vector_group_rows, what the simulator executes).

The tests marked ``consistency`` compare what a step prints with isasim itself (za_tiles' rows, the
machine's state, a replay of the same steps); the evidence for those rows and values is QEMU's: the
golden traces here and the differential tests (semantics/*_vs_qemu.py, test_infrastructure_vs_qemu.py)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest

from cli_harness import error_line
from isasim import cli
from isasim.arm_sme.semantics import za_tiles
from isasim.arm_sme.views.pictures import flags_text
from isasim.core.trace import read_trace

ROOT = Path(__file__).resolve().parents[2]
GOLDEN = ROOT / "traces" / "arm_sme"
MEMORY = bytes((7 * i + 3) % 256 for i in range(256))  # the bytes at x0 that the loads read (and again after)

PROGRAM = """        ptrue p0.b
        ptrue p1.s
        whilelt p2.s, x1, x2
        ld1b {z0.b}, p0/z, [x0]
        ld1w {z1.s}, p0/z, [x0]
        ld1b {z4.b}, p0/z, [x0, #1, mul vl]
        ld1b {z2.b}, p0/z, [x0, #1, mul vl]
        ld1b {z3.b}, p0/z, [x0]
        mov w12, #5
        ldr za[w12, 0], [x0]
        mov za1v.s[w12, 1], p0/m, z1.s
        udot za.s[w8, 0, vgx4], {z0.b-z3.b}, z4.b
        st1w {z1.s}, p0, [x3]
        ret
"""
LD1B, LD1W, LDR_ZA, MOVA, UDOT, ST1W = 3, 4, 9, 10, 11, 12  # instruction indexes


def _files(tmp_path, svl: int, regs: dict | None = None):
    program, init = tmp_path / "p.s", tmp_path / "i.json"
    program.write_text(PROGRAM)
    init.write_text(json.dumps({
        "regs": {"x0": "0x20000", "x1": "0", "x2": "5", "x3": "0x21000", "x8": "0", "svcr": "0x3", **(regs or {})},
        "memory": [{"addr": "0x20000", "hex": (MEMORY * (2 * svl // 8 // 256 + 1))[:2 * svl // 8].hex()},
                   {"addr": "0x21000", "hex": "00" * (svl // 8)}]}))
    return program, init


def step(capsys, program, *args, commands: str) -> str:
    capsys.readouterr()
    code = cli.main(["step", str(program), *map(str, args), "--isa", "arm_sme", "--no-color", "--commands", commands])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    return captured.out


def step_on(capsys, tmp_path, commands: str, svl: int = 512, *extra, regs: dict | None = None) -> str:
    program, init = _files(tmp_path, svl, regs)
    return step(capsys, program, "--init", init, "--svl", svl, *extra, commands=commands)


def records(out: str) -> dict[int, str]:
    """The text each step printed, by instruction index (the last step of that index)."""
    found = {}
    for block in re.split(r"(?m)^(?=\[\d+\] #)", out):
        m = re.match(r"\[\d+\] #(\d+) ", block)
        if m:
            found[int(m.group(1))] = block
    return found


def row_values(text: str, label: str) -> list[str]:
    """The cells of the grid rows labelled ``label``, every column block's in order (a title line that
    starts with the label has words that are not numbers and is left out)."""
    number = re.compile(r"-?(?:[0-9a-f.]+(?:e[-+][0-9]+)?|nan|inf)")  # decimal, hex or a float's text
    cells = []
    for line in text.splitlines():
        words = line.split()
        if words[:1] == [label] and all(number.fullmatch(w) for w in words[1:]):
            cells += words[1:]
    return cells


def lanes(data: bytes, dtype) -> list[str]:
    return [str(v) for v in np.frombuffer(data, dtype=dtype)]


# ---- what a step shows ---------------------------------------------------------------------------------


def test_z_lanes_are_shown_at_the_instructions_element_size(capsys, tmp_path):
    shown = records(step_on(capsys, tmp_path, "s 14"))
    svlb = 64
    assert "z0.b  64 lanes of uint8" in shown[LD1B]  # LD1B: .b lanes, not int32
    assert row_values(shown[LD1B], "z0.b") == lanes(MEMORY[:svlb], np.uint8)
    assert "z1.s  16 lanes of uint32" in shown[LD1W]
    assert row_values(shown[LD1W], "z1.s") == lanes(MEMORY[:svlb], np.uint32)
    udot = shown[UDOT]
    assert "za  int32 (.s), 64 vectors" in udot  # UDOT's ZA.S destination as .s, its Zn sources not written
    assert not re.search(r"(?m)^z\d+\.", udot)


def test_show_overrides_the_instructions_element_size(capsys, tmp_path):
    shown = records(step_on(capsys, tmp_path, "s 14", 512, "--show", "z0:int16"))
    assert "z0.h  32 lanes of int16" in shown[LD1B]
    assert row_values(shown[LD1B], "z0.h") == lanes(MEMORY[:64], np.int16)


@pytest.mark.parametrize("svl", [128, 512, 2048])
def test_predicates_are_one_mark_per_element(capsys, tmp_path, svl):
    shown = records(step_on(capsys, tmp_path, "s 3", svl))
    elements = svl // 32
    assert f"p1.s  {elements} elements of 32 bits: {elements} active (was 0)" in shown[1]
    marks = "".join("".join(line.split()[2:]) for line in shown[1].splitlines() if line.split()[:1] == ["new"])
    assert marks == "1" * elements
    active = min(5, elements)  # whilelt p2.s, x1 = 0, x2 = 5
    assert f"p2.s  {elements} elements of 32 bits: {active} active" in shown[2]
    marks = "".join("".join(line.split()[2:]) for line in shown[2].splitlines() if line.split()[:1] == ["new"])
    assert marks == "1" * active + "0" * (elements - active)


def test_nzcv_is_shown_as_flags(capsys, tmp_path):
    whilelt = records(step_on(capsys, tmp_path, "s 3", 512))[2]
    old, new, flags = re.search(r"nzcv\s+(0x[0-9a-f]+) \[nzcv\] -> (0x[0-9a-f]+) \[(\w{4})\]", whilelt).groups()
    assert int(old, 16) == 0 and flags == flags_text(int(new, 16))  # the letters are the new value's bits
    assert flags_text(0x60000000) == "nZCv" and flags_text(0) == "nzcv" and flags_text(0xF0000000) == "NZCV"


@pytest.mark.consistency
def test_the_za_vectors_a_step_writes_are_named_and_listed(capsys, tmp_path):
    shown = records(step_on(capsys, tmp_path, "s 14", 512))
    assert "za[5] written, 1 not zero" in shown[LDR_ZA]
    mova = shown[MOVA]  # vertical slice w12 + 1 = 6 of ZA1.S: element 6 of each of its 16 rows
    rows = [int(r) for r in za_tiles.tile_rows(1, 32, 64)]
    assert "16 written" in mova and all(row_values(mova, f"za[{r}]") for r in rows)
    group = za_tiles.vector_group_rows(64, 0, 0, 4)
    assert " ".join(f"za[{r}]" for r in group) + " written" in shown[UDOT]


# ---- vector groups against QEMU's golden traces ------------------------------------------------------


def _qemu_written_rows(trace_path: Path) -> list[int]:
    trace = json.loads(trace_path.read_text())
    svlb = trace["config"]["svl"] // 8
    before = np.frombuffer(bytes.fromhex(trace["init"]["arrays"]["za"]), np.uint8).reshape(svlb, svlb)
    after = np.frombuffer(bytes.fromhex(trace["expect"]["arrays"]["za"]), np.uint8).reshape(svlb, svlb)
    return np.flatnonzero((before != after).any(axis=1)).tolist()


@pytest.mark.parametrize("name, wraps", [
    ("dot-udot_zas_b_single_vgx4-svl128", True),  # w11 = 0xffffffff, offset 3
    ("dot-udot_zas_b_indexed_vgx4-svl128", True),  # junk in x9's upper half
    ("dot-udot_zas_b_multiple_vgx4-svl512", True),
    ("dot-sudot_zas_b_single_vgx4-svl128", False),  # w11 = 3, offset 0: no wrap
    ("form-fdot_zas_h_indexed_vgx4-svl2048", False),
    ("dot-udot_zad_h_indexed_vgx2-svl2048", True),  # za.d[w11, 2, vgx2], w11 = 127: 129 passes vstride 128
])
def test_p_vector_group_names_the_rows_qemu_writes(capsys, name, wraps):
    path = GOLDEN / f"{name}.trace.json"
    trace = read_trace(str(path))
    group = re.match(r"\w+ (za\.[sd]\[[^\]]*\])", trace.program[0]).group(1)
    out = step(capsys, path, commands=f"p {group}; s")
    m = re.search(r"za\.[sd]\[w(\d+), (\d), vgx([24])\] at SVL (\d+): ZA vectors ([\d, ]+)", out)
    v, offset, nreg, svl = (int(g) for g in m.groups()[:4])
    printed = [int(r) for r in m.group(5).split(",")]
    wv = trace.init.regs[f"x{v}"]
    assert printed == za_tiles.vector_group_rows(svl // 8, wv, offset, nreg)
    assert printed == _qemu_written_rows(path)
    assert ("the MOD wraps it" in out) == wraps
    assert ("upper 32 bits" in out) == bool(wv >> 32)
    shown = records(out)[0]
    assert " ".join(f"za[{r}]" for r in printed) + " written" in shown


@pytest.mark.consistency
def test_p_vector_group_shows_the_rows_lanes(capsys, tmp_path):
    out = step_on(capsys, tmp_path, "s 14; p za.s[w8, 0, vgx4] hex", 128)
    rows = za_tiles.vector_group_rows(16, 0, 0, 4)
    assert f"ZA vectors {', '.join(map(str, rows))}" in out and "vstride = (SVL/8) / 4 = 16 / 4 = 4" in out
    program, init = _files(tmp_path, 128)
    from isasim.core.machine import Machine
    from isasim.core.trace import parse_init

    machine = Machine("arm_sme", {"svl": 128})
    machine.load_init(machine.assemble(PROGRAM), parse_init(json.loads(init.read_text())))
    machine.run()
    group = out[out.index("za.s[w8, 0, vgx4]  4 vectors"):]
    for r, row in enumerate(rows):
        cells = [line.split()[2:] for line in group.splitlines() if line.split()[:2] == [f"{r}:", f"za[{row}]"]]
        assert cells[0] == [f"{v:08x}" for v in machine.state.za[row].view(np.uint32)]


# ---- tiles ---------------------------------------------------------------------------------------------


def _za_init(tmp_path, svl: int) -> Path:
    rng = np.random.default_rng(12)
    za = rng.integers(0, 256, (svl // 8) ** 2, dtype=np.uint8)
    init = tmp_path / "za.json"
    init.write_text(json.dumps({"regs": {"svcr": "0x3"}, "arrays": {"za": za.tobytes().hex()}}))
    program = tmp_path / "nop.s"
    program.write_text("        nop\n        ret\n")
    return program, init, za.reshape(svl // 8, svl // 8)


@pytest.mark.consistency
@pytest.mark.parametrize("svl", [128, 512])
def test_tile_views_horizontal_and_vertical(capsys, tmp_path, svl):
    program, init, za = _za_init(tmp_path, svl)
    out = step(capsys, program, "--init", init, "--svl", svl, "--isa", "arm_sme",
               commands="p za1h.s hex; p za1v.s hex; p za3v.d[1]; p za1h.s[2][3]")
    assert "za1h.s  the rows of za1.s" in out and "za1v.s  the columns of za1.s shown as rows" in out
    horizontal, vertical = out.split("za1v.s  the columns")
    rows = za_tiles.tile_rows(1, 32, svl // 8)
    for i, row in enumerate(rows):
        cells = [c for line in horizontal.splitlines() for c in line.split()[2:]
                 if line.split()[:2] == [f"{i}:", f"za[{row}]"]]
        assert cells == [f"{v:08x}" for v in za[row].view(np.uint32)]
        column = za[rows, 4 * i:4 * i + 4].reshape(-1).view(np.uint32)  # vertical slice i: element i of each row
        assert row_values(vertical, f"za1v.s[{i}]") == [f"{v:08x}" for v in column]
    d_rows = za_tiles.tile_rows(3, 64, svl // 8)
    assert row_values(out, "za3v.d[1]") == [str(v) for v in za[d_rows, 8:16].reshape(-1).view(np.uint64)]
    # the program does not type ZA: int32
    assert row_values(out, "za1h.s[2][3]") == [str(za[rows[2], 12:16].view(np.int32)[0])]


# ---- watches, back and goto ---------------------------------------------------------------------------


def _stopped_at(out: str, spec: str) -> int:
    head = out[:out.index(f"watch {spec} changed")]
    return int(re.findall(r"(?m)^\[\d+\] #(\d+) ", head)[-1])


@pytest.mark.parametrize("spec, index", [
    ("za[5]", LDR_ZA),
    ("za1h.s[1][2]", LDR_ZA),  # ZA1.S row 1 is ZA vector 5: LDR ZA writes it first
    ("za1v.s[6][0]", MOVA),  # column w12 + 1 = 6, row 0: ZA vector 1, written by the vertical MOVA
    ("za[16]", UDOT),  # the group's second vector at SVL 512 with w8 = 0
    ("z1.s[3]", LD1W),
    ("z4.b[63]", LD1B + 2),
    ("0x21004:4", ST1W),
])
def test_watch_stops_at_the_instruction_that_changes_it(capsys, tmp_path, spec, index):
    out = step_on(capsys, tmp_path, f"w {spec}; c", 512)
    assert f"watch 1: {spec} = " in out
    assert _stopped_at(out, spec) == index


def test_watch_shows_the_element_in_its_type(capsys, tmp_path):
    out = step_on(capsys, tmp_path, "w z1.s[3]; c", 512)
    assert f"watch z1.s[3] changed: 0 -> {np.frombuffer(MEMORY[12:16], np.uint32)[0]}" in out


@pytest.mark.consistency
def test_back_and_goto_replay_to_the_same_state(capsys, tmp_path):
    forward = step_on(capsys, tmp_path, "s 11; p z1.s; p za[5]", 512)
    printed = forward[forward.rindex("next: #11 "):]  # the position after 11 steps, then the two prints
    out = step_on(capsys, tmp_path, "s 14; back 3; p z1.s; p za[5]; goto 4; goto 11; p z1.s; p za[5]", 512)
    back = out.index("at step 11 (replayed from the start)")
    assert out[out.index("next: #11 ", back):out.index("at step 4 (replayed from the start)")] == printed
    assert out[out.rindex("next: #11 "):] == printed
    assert "at step 11\n" in out  # goto 11 from step 4 runs forwards


# ---- width ---------------------------------------------------------------------------------------------


def test_svl_2048_folds_into_column_blocks_that_fit_the_width(capsys, tmp_path, monkeypatch):
    monkeypatch.setenv("COLUMNS", "100")
    out = step_on(capsys, tmp_path, "s 14; p za.s[w8, 0, vgx4]; p z0.b; p p0.b; p za1v.s", 2048)
    # the blocks fill the width, never pass it (headings and titles, "name: what", are one line however long:
    # output that is not a terminal is never wrapped)
    assert 90 < max(len(line) for line in out.splitlines() if ": " not in line) <= 100
    assert row_values(records(out)[LD1B], "z0.b") == lanes(MEMORY, np.uint8)  # every lane, across blocks
    headers = [line.split() for line in out.split("\nz0.b  256 lanes")[-1].splitlines()
               if re.fullmatch(r"\s+\d+( +\d+)+", line)]
    assert [int(c) for h in headers[:len(headers)] for c in h][:256] == list(range(256))  # blocks in order
    assert len(headers) > 1


# ---- bad commands ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("command, words", [
    ("p za.s[w7, 0, vgx4]", "w8-w11"),
    ("p za.s[w8, 0]", "vgx4"),
    ("p za9.s", "za0.s to za3.s"),
    ("p z4.q", ".b, .h, .s or .d"),
    ("p z4.h int32", "16-bit"),
    ("p z40", "32 Z registers"),
    ("p p2.s int32", "p2.s is shown as uint8"),
    ("w za[999]", "za[0] to za[63]"),
    ("w z4.s[16]", "16 lanes"),
    ("w za1h.s[16][0]", "16 slices"),
])
def test_bad_locations_are_one_error_and_the_script_exits_2(capsys, tmp_path, command, words):
    program, init = _files(tmp_path, 512)
    line = error_line(capsys, ["step", program, "--init", init, "--isa", "arm_sme", "--no-color",
                               "--commands", f"{command}; s"], words)
    assert "1 later command not run" in line


# ---- --svg ---------------------------------------------------------------------------------------------


def test_svg_records_an_arm_sme_session(capsys, tmp_path):
    program, init = _files(tmp_path, 512)
    svg = tmp_path / "s.svg"
    assert cli.main(["step", str(program), "--init", str(init), "--isa", "arm_sme", "--commands",
                     "s 10; p za.s[w8, 0, vgx4]", "--svg", str(svg), "--svg-width", "110"]) == 0
    text = svg.read_text()
    assert text.startswith("<svg") and "za.s[w8,&#160;0,&#160;vgx4]" in text


# ---- floating-point lanes, and every SVL ---------------------------------------------------------------------


def test_fp_forms_show_their_formats(capsys):
    from isasim.core.render import element_text

    path = GOLDEN / "form-fdot_zas_h_indexed_vgx4-svl2048.trace.json"
    trace = read_trace(str(path))
    out = step(capsys, path, commands="s; p z8; p z8.h bf16; p z8.h int16 hex")
    assert "za  fp32 (.s), 256 vectors: za[6] za[70] za[134] za[198] written" in out  # FDOT's ZA.S is fp32
    z8 = np.frombuffer(trace.init.arrays["z8"], np.uint16)
    fp16, bf16, hex16 = out.split("z8.h  128 lanes of")[1:4]
    assert fp16.startswith(" fp16") and bf16.startswith(" bf16") and hex16.startswith(" int16")
    assert row_values(fp16, "z8.h") == [element_text(v, "fp16") for v in z8]  # the Zn list's type: fp16
    assert row_values(bf16, "z8.h") == [element_text(v, "bf16") for v in z8]
    assert row_values(hex16, "z8.h") == [f"{v:04x}" for v in z8]


@pytest.mark.parametrize("svl", [128, 256, 512, 1024, 2048])
def test_every_svl(capsys, tmp_path, svl):
    out = step_on(capsys, tmp_path, "s 14; p za.s[w8, 0, vgx4]; p z0.b; p p1.s", svl)
    svlb = svl // 8
    rows = za_tiles.vector_group_rows(svlb, 0, 0, 4)
    assert f"at SVL {svl}: ZA vectors {', '.join(map(str, rows))}" in out
    assert f"z0.b  {svlb} lanes of uint8" in out and f"p1.s  {svl // 32} elements of 32 bits: {svl // 32} active" in out
    assert row_values(records(out)[LD1B], "z0.b") == lanes((MEMORY * 2)[:svlb], np.uint8)


def test_a_vector_group_is_not_watched(capsys, tmp_path):
    program, init = _files(tmp_path, 512)
    error_line(capsys, ["step", program, "--init", init, "--isa", "arm_sme", "--commands", "w za.s[w8, 0, vgx4]"],
               "watch one, za[i]")


@pytest.mark.parametrize("name", ["form-ptrue_s-svl128", "form-whilelt_s_x-svl256", "form-whilelo_h_x-svl512",
                                  "form-whilelo_b_x-svl1024", "form-whilelt_d_w-svl2048"])
def test_predicate_marks_and_flags_are_what_qemu_left(capsys, name):
    """The marks a PTRUE or WHILE step prints are the bits QEMU's golden trace expects (element e's bit is
    bit e * esize/8 of the predicate), and the NZCV letters its expected NZCV."""
    path = GOLDEN / f"{name}.trace.json"
    trace = json.loads(path.read_text())
    p, suffix = re.match(r"\w+ p(\d+)\.([bhsd])", trace["program"][0]).groups()
    size = {"b": 1, "h": 2, "s": 4, "d": 8}[suffix]
    out = step(capsys, path, commands="s")
    bits = np.unpackbits(np.frombuffer(bytes.fromhex(trace["expect"]["arrays"][f"p{p}"]), np.uint8), bitorder="little")
    marks = "".join(w for line in out.splitlines() if line.split()[:1] == ["new"] for w in line.split()[2:])
    assert marks == "".join(str(b) for b in bits[::size])
    before, after = (int(trace[part]["regs"].get("nzcv", "0x0"), 16) for part in ("init", "expect"))
    letters = "".join(f.upper() if after >> (31 - i) & 1 else f for i, f in enumerate("nzcv"))
    assert (re.search(rf"nzcv .* -> {after:#x} \[{letters}\]", out) is not None) == (before != after)


def test_written_za_vectors_and_changed_lanes_are_highlighted(tmp_path):
    """On a colour terminal the labels of the ZA vectors a step wrote and the lanes it changed are bold
    yellow; the vectors it did not write are shown (they are not zero) but not highlighted."""
    import io

    from rich.console import Console

    from isasim.core.machine import Machine
    from isasim.core.stepper import Stepper
    from isasim.core.trace import parse_init

    _program, init = _files(tmp_path, 128)
    screen = io.StringIO()
    out = Console(file=screen, width=120, force_terminal=True, color_system="standard", highlight=False)
    stepper = Stepper("arm_sme", {"svl": 128, "features": ["SME2", "SME_I16I64"]},
                      Machine("arm_sme", {"svl": 128}).assemble(PROGRAM), parse_init(json.loads(init.read_text())),
                      out=out)
    assert stepper.run_script(f"s {UDOT}") is None
    screen.seek(0)
    screen.truncate()
    assert stepper.run_script("s") is None  # the UDOT
    text = screen.getvalue()
    bold_yellow, dim = r"\x1b\[1;33m", r"\x1b\[2m"  # a label's padding is inside its style
    for row in za_tiles.vector_group_rows(16, 0, 0, 4):  # 0, 4, 8, 12
        assert re.search(rf"{bold_yellow} *za\[{row}\]", text)
    for row in za_tiles.tile_rows(1, 32, 16):  # 1, 5, 9, 13: written by the LDR and MOVA before
        assert re.search(rf"{dim} *za\[{row}\]", text)
    assert re.search(r"\x1b\[1;33m +-?\d+\x1b\[0m", text)  # changed lanes


def test_a_w_register_with_a_superscript_or_thousands_of_digits_is_refused(capsys, tmp_path):
    """`p w³` (str.isdigit is true for superscripts, int() refuses them) and `p w` with 5,000 digits were
    internal errors (issue 25); a w register is named as the assembler names it."""
    program, init = _files(tmp_path, 512, None)
    for name in ("w³", "w" + "9" * 5000, "w03"):
        code = cli.main(["step", str(program), "--init", str(init), "--isa", "arm_sme", "--no-color",
                         "--commands", f"p {name}"])
        err = capsys.readouterr().err
        assert code == 2 and "cannot print" in err and "internal error" not in err, err
    assert "w3 = 0x" in step_on(capsys, tmp_path, "p w3", 512)

"""`isasim explain --isa arm_sme`: --svl and --wv, the vector-group section, the worked example's check line.

The rows the vector-group section shows are compared with tiles.vector_group_rows (what the
simulator executes) and with the ZA vectors the machine's journal says the step wrote.
"""

from __future__ import annotations

import re

import pytest

from isasim.arm_sme.explain import example_text
from isasim.arm_sme.forms import FORMS
from isasim.arm_sme.tiles import vector_group_rows
from isasim.cli import main
from isasim.core.explain import Check, ExplainOptions, explain

UDOT_VGX4 = "udot za.s[w8, 0, vgx4], {z0.h-z3.h}, z4.h"
UDOT_VGX2_OFFSET = "udot za.s[w9, 7, vgx2], {z30.h-z31.h}, z4.h"
MOVA_VGX2 = "mov za.d[w10, 1, vgx2], {z2.d-z3.d}"


def run_explain(capsys, *args) -> tuple[int, str, str]:
    code = main(["explain", "--isa", "arm_sme", "--no-color", "--width", "200", *args])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def shown_rows(text: str) -> list[int]:
    """The ZA vectors of the group table: its lines '<r>  <vec> + <r> * <vstride>  ZA[<row>]'."""
    return [int(m.group(1)) for m in re.finditer(r"^\s*\d+\s+\d+ \+ \d+ \* \d+\s+ZA\[(\d+)\]", text, re.M)]


def journal_rows(text: str) -> list[int]:
    found = re.search(r"The machine's journal wrote ZA vectors ([\d, ]+)\.", text)
    return [int(x) for x in found.group(1).split(", ")] if found else []


@pytest.mark.parametrize("svl", [128, 256, 512, 1024, 2048])
@pytest.mark.parametrize("instruction,v,offset,nreg", [(UDOT_VGX4, 8, 0, 4), (UDOT_VGX2_OFFSET, 9, 7, 2),
                                                       (MOVA_VGX2, 10, 1, 2)])
def test_rows_follow_svl_and_wv(capsys, svl, instruction, v, offset, nreg):
    vstride = svl // 8 // nreg
    for wv in (0, vstride - 1, vstride, 0xFFFFFFFF, 0xDEADBEEF_00000003, (1 << 64) - 1):
        code, out, err = run_explain(capsys, instruction, "--svl", str(svl), "--wv", hex(wv))
        assert code == 0, err
        expected = vector_group_rows(svl // 8, wv, offset, nreg)
        assert shown_rows(out) == expected, (svl, wv)
        assert journal_rows(out) == sorted(expected), (svl, wv)
        assert f"vstride              (SVL / 8) / nreg = {svl // 8} / {nreg} = {vstride}" in out
        low = wv & 0xFFFFFFFF
        assert ("are ignored" in out) == bool(wv >> 32)
        assert ("so the MOD wraps" in out) == (low + offset >= vstride)
        assert f"SVL {svl} (ZA: {svl // 8} vectors" in out


def test_the_default_is_svl_512_and_the_example_value(capsys):
    code, out, _ = run_explain(capsys, UDOT_VGX4)
    assert code == 0
    assert "ZA[w8, 0, VGx4] at SVL 512" in out
    x8 = int(re.search(r"Xv\s+x8 = (0x[0-9a-f]+)", out).group(1), 16)
    assert shown_rows(out) == vector_group_rows(64, x8, 0, 4)


def test_z_list_wrap_is_shown(capsys):
    _, out, _ = run_explain(capsys, "udot za.s[w8, 0, vgx4], {z30.h-z1.h}, z4.h", "--wv", "0")
    assert "Zn list: z30, z31, z0, z1 (Z[(30 + r) MOD 32]); it wraps past z31 to z0" in out
    _, out, _ = run_explain(capsys, UDOT_VGX4, "--wv", "0")
    assert "Zn list: z0, z1, z2, z3 (Z[(0 + r) MOD 32]); no wrap past z31" in out


def test_a_form_without_a_vector_group_has_no_section(capsys):
    code, out, _ = run_explain(capsys, "ptrue p0.b", "--svl", "2048")
    assert code == 0 and "Vector group" not in out
    assert "active elements of p0.b: explained 256, machine 256" in out


@pytest.mark.parametrize("args,message", [
    (["--svl", "100", UDOT_VGX4], "SVL '100' is not a streaming vector length"),
    (["--svl", "4096", UDOT_VGX4], "SVL '4096' is not a streaming vector length"),
    (["--svl", "big", UDOT_VGX4], "SVL 'big' is not a streaming vector length"),
    (["--wv", "0x1g", UDOT_VGX4], "--wv '0x1g' is not a number"),
    (["--wv", "", UDOT_VGX4], "--wv '' is not a number"),
    (["--wv", hex(1 << 64), UDOT_VGX4], "does not fit in 64 bits"),
    (["--wv", "1", "ptrue p0.b"], "--wv applies only to a form with a ZA vector group"),
])
def test_bad_options_are_one_error_line(capsys, args, message):
    code, out, err = run_explain(capsys, *args)
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and err.startswith("isasim: error: ") and message in err


def test_x86_refuses_the_arm_options(capsys):
    for args in (["--svl", "256"], ["--wv", "1"]):
        code = main(["explain", "tdpbusd tmm0, tmm1, tmm2", *args])
        err = capsys.readouterr().err
        assert code == 2 and err.count("\n") == 1, err


CHECKED_GROUPS = ("dot", "fp_dot", "outer", "fp_outer")


@pytest.mark.parametrize("svl", [128, 512, 2048])
@pytest.mark.parametrize("form", [f for f in FORMS if f.group in CHECKED_GROUPS], ids=lambda f: f.id)
def test_every_dot_and_outer_form_ends_with_an_equal_check(svl, form):
    expl = explain("arm_sme", example_text(form), None, ExplainOptions(config={"svl": svl}))
    example = next(s for s in expl.sections if s.title == "Example")
    checks = [b for b in example.blocks if isinstance(b, Check)]
    assert len(checks) == 1, [type(b).__name__ for b in example.blocks]
    assert checks[0].equal, (form.id, checks[0])


@pytest.mark.parametrize("form", [f for f in FORMS if f.group in ("outer", "fp_outer")], ids=lambda f: f.id)
def test_outer_checks_hold_over_seeds(form):
    """Each seed draws other predicates and data: element (0, 0) is active or kept as their low bits fall."""
    for seed in range(1, 13):
        expl = explain("arm_sme", example_text(form), None, ExplainOptions(seed=seed, config={"svl": 128}))
        example = next(s for s in expl.sections if s.title == "Example")
        check = next(b for b in example.blocks if isinstance(b, Check))
        assert check.equal, (form.id, seed, check)

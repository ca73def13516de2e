"""Files a user must not lose: every command that writes refuses to replace a file without --force, names a
missing folder in one line, and `isasim docs` writes only into a folder of its own (issue 9, item 6)."""

from __future__ import annotations

from pathlib import Path

import pytest

from cli_harness import error_line
from isasim import cli
from isasim.core.output import OutputError, write_output
from isasim.docs import INDEX_HEADING, NEW_DOCS_FOLDER, default_docs_dir

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE_TRACE = ROOT / "examples" / "x86_amx" / "int8_block.trace.json"
MISSING_FOLDER = "no-such-folder"


# ---- explain --html / --svg replaced the user's files -----------------------------------


@pytest.mark.parametrize("option", ["--html", "--svg"])
def test_explain_does_not_replace_an_existing_file(tmp_path, capsys, option):
    program = tmp_path / "prog.s"
    program.write_text("tilezero tmm0\n")
    error_line(capsys, ["explain", "tilezero tmm0", option, program], "prog.s", "refusing to overwrite", "--force")
    assert program.read_text() == "tilezero tmm0\n"


def test_explain_refuses_before_printing_the_explanation(tmp_path, capsys):
    taken = tmp_path / "page.html"
    taken.write_text("mine")
    assert cli.main(["explain", "tilezero tmm0", "--html", str(taken)]) == 2
    assert capsys.readouterr().out == ""  # no explanation followed by an error: the refusal comes first


def test_explain_force_replaces_and_a_new_file_is_written(tmp_path, capsys):
    page, picture = tmp_path / "page.html", tmp_path / "pic.svg"
    page.write_text("old")
    assert cli.main(["explain", "tilezero tmm0", "--html", str(page), "--svg", str(picture), "--force",
                     "--no-color"]) == 0
    assert page.read_text().lstrip().lower().startswith("<!doctype html") or "<html" in page.read_text()
    assert picture.read_text().lstrip().startswith("<svg")


# ---- an output in a folder that does not exist: one line, exit 2 (was exit 70) --------------


def test_record_into_a_missing_folder(tmp_path, capsys):
    target = tmp_path / MISSING_FOLDER / "x.json"
    error_line(capsys, ["record", EXAMPLE_TRACE, "-o", target], MISSING_FOLDER, "does not exist")


def test_kernel_into_a_missing_folder(tmp_path, capsys):
    target = tmp_path / MISSING_FOLDER / "x.json"
    error_line(capsys, ["kernel", "int8_block", "-o", target], MISSING_FOLDER, "does not exist")


def test_show_html_into_a_missing_folder(tmp_path, capsys):
    target = tmp_path / MISSING_FOLDER / "x.html"
    error_line(capsys, ["show", EXAMPLE_TRACE, "--html", target], MISSING_FOLDER, "does not exist")


def test_step_svg_into_a_missing_folder(tmp_path, capsys):
    target = tmp_path / MISSING_FOLDER / "x.svg"
    error_line(capsys, ["step", EXAMPLE_TRACE, "--commands", "s", "--svg", target], MISSING_FOLDER,
               "does not exist")


@pytest.mark.parametrize("option", ["--html", "--svg"])
def test_explain_into_a_missing_folder(tmp_path, capsys, option):
    target = tmp_path / MISSING_FOLDER / "x.out"
    error_line(capsys, ["explain", "tilezero tmm0", option, target], MISSING_FOLDER, "does not exist")


def test_docs_into_a_missing_folder(tmp_path, capsys):
    error_line(capsys, ["docs", "--out", tmp_path / MISSING_FOLDER / "docs"], MISSING_FOLDER, "does not exist")


def test_output_that_is_a_directory(tmp_path, capsys):
    error_line(capsys, ["kernel", "int8_block", "-o", tmp_path], "is a directory")


def test_kernel_does_not_replace_an_existing_trace(tmp_path, capsys):
    target = tmp_path / "k.trace.json"
    target.write_text("mine")
    error_line(capsys, ["kernel", "int8_block", "-o", target], "refusing to overwrite")
    assert target.read_text() == "mine"


def test_write_output_does_not_replace_a_file_created_after_the_check(tmp_path):
    target = tmp_path / "late.txt"
    target.write_text("created meanwhile")
    with pytest.raises(OutputError, match="refusing to overwrite"):
        write_output(target, "new")
    assert target.read_text() == "created meanwhile"
    write_output(target, "new", force=True)
    assert target.read_text() == "new"


# ---- docs writes only into its own folder ---------------------------------------------


def test_docs_in_another_project_leaves_its_docs_alone(tmp_path, capsys, monkeypatch):
    project = tmp_path / "other-project"
    (project / "docs").mkdir(parents=True)
    theirs = project / "docs" / "index.md"
    theirs.write_text("# Their documentation\n")
    monkeypatch.chdir(project)
    assert cli.main(["docs", "--no-color"]) == 0
    assert theirs.read_text() == "# Their documentation\n"
    assert sorted(p.name for p in (project / "docs").iterdir()) == ["index.md"]
    written = project / NEW_DOCS_FOLDER / "index.md"
    assert written.read_text(encoding="utf-8").startswith(INDEX_HEADING)
    assert NEW_DOCS_FOLDER in capsys.readouterr().out
    # pointed explicitly at their docs/, it refuses instead of overwriting
    error_line(capsys, ["docs", "--out", "docs"], "did not generate", "--force")
    assert theirs.read_text() == "# Their documentation\n"
    # and it regenerates its own folder without complaint
    assert cli.main(["docs", "--out", NEW_DOCS_FOLDER, "--no-color"]) == 0


def test_docs_default_in_the_checkout_is_its_docs_folder(tmp_path):
    assert default_docs_dir(ROOT) == Path("docs")
    assert default_docs_dir(tmp_path) == Path(NEW_DOCS_FOLDER)


# ---- two outputs, or an output and an input, that are one file (issue 25) ----------------------------
QBMM_CASE = ROOT / "examples" / "ascend_cube" / "qbmm_int8_bf16" / "case.json"


def test_qbmm_output_and_trace_spelled_differently_are_one_file(tmp_path, capsys, monkeypatch):
    """-o same.npy --trace ./same.npy --force: compared as text the two differ, and the trace silently
    replaced the C just written; resolved, they are one file, refused before the run."""
    monkeypatch.chdir(tmp_path)
    error_line(capsys, ["qbmm", QBMM_CASE, "-o", "same.npy", "--trace", "./same.npy", "--force"],
               "-o and --trace name the same file")
    assert not (tmp_path / "same.npy").exists()


def test_outputs_through_a_link_or_dotdot_are_one_file(tmp_path, capsys):
    (tmp_path / "sub").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "sub")
    picture, page = tmp_path / "link" / "x.out", tmp_path / "sub" / ".." / "sub" / "x.out"
    error_line(capsys, ["explain", "tilezero tmm0", "--svg", picture, "--html", page, "--force"],
               "--svg and --html name the same file")
    assert not (tmp_path / "sub" / "x.out").exists()


def test_an_output_that_is_the_commands_input_is_refused_even_with_force(tmp_path, capsys):
    trace = tmp_path / "t.trace.json"
    trace.write_bytes(EXAMPLE_TRACE.read_bytes())
    error_line(capsys, ["record", trace, "-o", trace, "--force"], "which this command reads")
    error_line(capsys, ["show", trace, "--html", tmp_path / "." / "t.trace.json", "--force"], "which this command reads")
    assert trace.read_bytes() == EXAMPLE_TRACE.read_bytes()


# ---- output that is not a terminal is not wrapped (issue 25) ----------------------------------------


def test_piped_output_is_not_wrapped_inside_a_long_path(tmp_path):
    """In a fresh clone under a long path the PASS line, which names the file, was cut at 80 columns (inside
    the file name), so grep found neither the line nor the path.  Run as a user pipes it: a subprocess."""
    import os
    import subprocess
    import sys

    folder = tmp_path.joinpath(*["a-rather-long-folder-name"] * 6)
    folder.mkdir(parents=True)
    trace = folder / "int8_block.trace.json"
    trace.write_bytes(EXAMPLE_TRACE.read_bytes())
    env = {key: value for key, value in os.environ.items() if key not in ("COLUMNS", "LINES", "FORCE_COLOR")}
    done = subprocess.run([sys.executable, "-m", "isasim", "run", str(trace)], capture_output=True, text=True,
                          env=env, timeout=300)
    assert done.returncode == 0, done.stderr
    assert f"PASS: every expectation of {trace} holds" in done.stdout.splitlines()[-1]
    assert done.stdout.splitlines()[0].startswith(f"{trace}: 9 instructions")
    # the grids are still laid out in column blocks of a readable width, not one 10,000-column line
    assert max(len(line) for line in done.stdout.splitlines() if "PASS" not in line and str(trace) not in line) <= 110


def test_piped_output_lays_grids_out_for_columns_when_the_environment_sets_it(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "60")
    assert cli.main(["run", str(EXAMPLE_TRACE), "--no-color"]) == 0
    grid_lines = [line for line in capsys.readouterr().out.splitlines() if line[:3].strip().isdigit()]
    assert grid_lines and max(len(line) for line in grid_lines) <= 60


def test_a_huge_failing_stepper_command_is_quoted_in_part(capsys):
    """A 5,000-character location in a script made a 5,000-character error line (issue 25): the command and
    the reason are quoted with their middles left out, and the line still names both."""
    location = "tmm" + "9" * 5000
    line = error_line(capsys, ["step", EXAMPLE_TRACE, "--commands", f"s; p {location}; s"],
                      "command 2 of 3", "characters)", "(1 later command not run)")
    assert len(line) < 700


def test_qbmm_does_not_write_over_one_of_its_array_files(tmp_path, capsys):
    """-o naming the case's own A (a.npy beside case.json) with --force replaced the input with C."""
    import shutil

    case = tmp_path / "case"
    shutil.copytree(QBMM_CASE.parent, case)
    before = (case / "a.npy").read_bytes()
    error_line(capsys, ["qbmm", case / "case.json", "-o", case / "a.npy", "--force"], "which this command reads")
    assert (case / "a.npy").read_bytes() == before

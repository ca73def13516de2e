"""``isasim qbmm`` sizes every allocation from the case before any work, and refuses a run past a limit of
isasim.ascend_cube.kernels.qbmm_size in one line naming the limit and the sizes, on every path (a plain
run, -o, --blocks, --step, --trace, --workers); a big-endian .npy is read as the same numbers; --step
records its session as an SVG picture with --svg, as isasim step does.

test_the_lower_bounds_hold_for_the_recorded_cases is marked ``consistency``: kernel_size's estimate against
the kernel isasim builds (whose C is checked against Huawei's golden in test_qbmm_goldens.py)."""

from __future__ import annotations

import json
import re
import resource
import shutil
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from isasim.ascend_cube.kernels import qbmm
from isasim.ascend_cube.kernels.qbmm_case_file import load_case
from isasim.ascend_cube.kernels.qbmm_size import (
    MAX_GM_BYTES, MAX_INSTRUCTIONS, MAX_SCHEDULER_STEPS, MAX_TRACE_GM_BYTES, kernel_size,
)
from isasim.ascend_cube.kernels.qbmm_tiling import tiling_for
from isasim.cli import main

CASES = Path(__file__).parents[1] / "qbmm_cases"
EXAMPLES = Path(__file__).parents[3] / "examples" / "ascend_cube"
MEMORY_CAP = 3 * 2**30  # a subprocess that asks for more fails with MemoryError rather than taking the machine


def _small_case(tmp_path: Path, **fields) -> Path:
    """An int8 -> int32 case (no scale, no bias) with A and B of the given m, n, k, broadcast over batch_c."""
    data = {"format": "isasim-qbmm/1", "m": 16, "n": 16, "k": 32, "c_type": "int32", "a": "a.npy", "b": "b.npy"}
    data.update(fields)
    rng = np.random.default_rng(0)
    np.save(tmp_path / "a.npy", rng.integers(-128, 128, (data["m"], data["k"]), dtype=np.int8))
    np.save(tmp_path / "b.npy", rng.integers(-128, 128, (data["k"], data["n"]), dtype=np.int8))
    path = tmp_path / "case.json"
    path.write_text(json.dumps(data))
    return path


def _capped_qbmm(*args: str) -> subprocess.CompletedProcess:
    def cap():
        resource.setrlimit(resource.RLIMIT_AS, (MEMORY_CAP, MEMORY_CAP))

    return subprocess.run([sys.executable, "-m", "isasim", "qbmm", *args], capture_output=True, text=True,
                          timeout=120, preexec_fn=cap)


@pytest.mark.parametrize("path", [[], ["-o", "{tmp}/c.npy"], ["--blocks"], ["--step", "--commands", "c"],
                                  ["--trace", "{tmp}/t.json"], ["--workers", "2", "-o", "{tmp}/c.npy"]],
                         ids=["run", "output", "blocks", "step", "trace", "workers"])
def test_a_billion_batches_are_refused_on_every_path_before_any_allocation(path, tmp_path):
    """The issue's case: batch_c [1, 1, 1, 10^9] (A and B broadcast) ran out of memory (5.59 TiB) with -o,
    --blocks, --step or --trace.  Run with the address space capped, so that a regression fails here."""
    case = _small_case(tmp_path, batch_c=[1, 1, 1, 10**9])
    result = _capped_qbmm(str(case), *(arg.format(tmp=tmp_path) for arg in path))
    assert result.returncode == 2, result.stderr
    assert result.stderr.count("\n") == 1 and "MAX_GM_BYTES" in result.stderr
    image = int(re.search(r"is ([\d,]+) bytes", result.stderr).group(1).replace(",", ""))
    c_bytes = 10**9 * 16 * 16 * 4  # C: a billion 16 x 16 int32 blocks; A and B take a page each
    assert c_bytes < image < c_bytes + 2**20
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.npy", "b.npy", "case.json"]  # nothing written


def test_the_trace_and_worker_limits_refuse_only_their_paths(tmp_path, capsys):
    """A 40 MiB GM image: within MAX_GM_BYTES for one machine, past MAX_TRACE_GM_BYTES for a trace, and past
    MAX_GM_BYTES on eight local workers."""
    case = _small_case(tmp_path, m=1024, n=1024, k=32, batch_c=[1, 1, 1, 10])
    image = kernel_size(load_case(case), tiling_for(load_case(case), False, 0)).gm_bytes
    assert MAX_TRACE_GM_BYTES < image < MAX_GM_BYTES < 8 * image
    assert main(["qbmm", str(case), "--blocks"]) == 0
    capsys.readouterr()
    assert main(["qbmm", str(case), "--trace", str(tmp_path / "t.json")]) == 2
    assert "MAX_TRACE_GM_BYTES" in capsys.readouterr().err
    assert main(["qbmm", str(case), "--workers", "8", "-o", str(tmp_path / "c.npy")]) == 2
    err = capsys.readouterr().err
    assert "on each of 8 local workers" in err and "MAX_GM_BYTES" in err
    assert not (tmp_path / "t.json").exists() and not (tmp_path / "c.npy").exists()


@pytest.mark.parametrize("fields, limit", [
    ({"m": 1, "n": 1, "batch_c": [1, 1, 1, 100_000]}, "MAX_INSTRUCTIONS"),  # 100,000 blocks of at least 6
    ({"batch_c": [1, 1, 1, 1000], "tiling": {"blockDim": 10_000}}, "MAX_SCHEDULER_STEPS"),
    ({"batch_c": [1, 1, 1, 10], "tiling": {"blockDim": 10**18}}, "MAX_SCHEDULER_STEPS"),
])
def test_a_program_or_schedule_past_its_limit_is_refused_before_it_is_built(fields, limit, tmp_path):
    """Each was built (up to the old 2,000,000-instruction limit) or scheduled core by core first: seconds to
    minutes, and hundreds of MB of program text."""
    case = _small_case(tmp_path, **fields)
    started = time.monotonic()
    result = _capped_qbmm(str(case), "--blocks")
    assert result.returncode == 2 and limit in result.stderr and result.stderr.count("\n") == 1, result.stderr
    assert time.monotonic() - started < 20


@pytest.mark.consistency
def test_the_lower_bounds_hold_for_the_recorded_cases():
    """kernel_size's blocks and instructions are lower bounds of what the builder makes (its GM image is the
    layout's), on every recorded case the kernel builds (the others are refused, which bounds nothing)."""
    from isasim.core.errors import IsasimError

    checked = []
    for path in sorted(CASES.glob("*/case.json")):
        try:
            case = load_case(path)
            kernel = qbmm.build(case)
        except IsasimError:
            continue
        size = kernel_size(case, kernel.tiling)
        assert size.blocks <= len(kernel.blocks) and size.instructions <= len(kernel.program_lines), path
        layout_end = max(address + array.nbytes for address, array, _w in kernel.regions.values())
        assert layout_end - qbmm.GM_BASE <= size.gm_bytes, path
        assert size.instructions <= MAX_INSTRUCTIONS and size.scheduler_steps <= MAX_SCHEDULER_STEPS, path
        checked.append(path.parent.name)
    assert len(checked) >= 10, checked


def test_a_big_endian_npy_is_read_as_the_same_numbers(tmp_path, capsys):
    """It was refused as 'uint64 is stored as uint64, not uint64': the .npy header records the byte order."""
    case_dir = tmp_path / "case"
    shutil.copytree(EXAMPLES / "qbmm_int8_bf16", case_dir)
    for name in ("scale_b", "bias", "a"):
        array = np.load(case_dir / f"{name}.npy")
        np.save(case_dir / f"{name}.npy", array.astype(array.dtype.newbyteorder(">")))
    assert np.load(case_dir / "scale_b.npy").dtype.str == ">u8"
    assert main(["qbmm", str(case_dir / "case.json"), "--no-color"]) == 0
    assert "PASS: 42,000 of 42,000 elements bit-exact" in capsys.readouterr().out


def test_a_wrong_type_names_its_byte_order(tmp_path, capsys):
    case_dir = tmp_path / "case"
    shutil.copytree(EXAMPLES / "qbmm_int8_bf16", case_dir)
    np.save(case_dir / "scale_b.npy", np.zeros(70, dtype=">i4"))
    assert main(["qbmm", str(case_dir / "case.json")]) == 2
    err = capsys.readouterr().err
    assert "uint64 is stored as uint64 (itself), not big-endian int32" in err and err.count("\n") == 1


def test_step_records_its_session_as_an_svg(tmp_path, capsys):
    picture = tmp_path / "session.svg"
    case = EXAMPLES / "qbmm_int8_bf16" / "case.json"
    assert main(["qbmm", str(case), "--step", "--block", "1", "--commands", "s 3; p l0c", "--svg",
                 str(picture)]) == 0
    svg = picture.read_text()
    text = svg.replace("&#160;", " ")  # rich writes a space in an SVG text as a no-break space
    assert svg.startswith("<svg") and "isasim qbmm case.json --step" in text
    assert "block 1 of 6" in text and "(isasim) s 3; p l0c" in text  # the session, commands and all
    assert main(["qbmm", str(case), "--step", "--commands", "s", "--svg", str(picture)]) == 2  # not replaced
    assert "--force" in capsys.readouterr().err or picture.read_text() == svg
    assert main(["qbmm", str(case), "--svg", str(tmp_path / "other.svg")]) == 2  # a picture of a session only
    assert not (tmp_path / "other.svg").exists()


@pytest.mark.parametrize("header", [
    b"{'descr': '<i4', 5fortran_order': False, 's]ape': (15,)Y }",  # numpy's parser: SyntaxError
    b"{'descr': '<i4', 'fortran_order': False, 'shape': (15,",  # TokenError ("EOF in multi-line statement")
], ids=["syntax", "token"])
def test_a_damaged_npy_header_is_one_line(header, tmp_path, capsys):
    """Found by tests/fuzz/test_fuzz_qbmm.py: numpy reads a .npy header as Python text, and a damaged one
    raised SyntaxError or tokenize.TokenError, an internal error (exit 70)."""
    case_dir = tmp_path / "case"
    shutil.copytree(EXAMPLES / "qbmm_int8_bf16", case_dir)
    padded = header + b" " * (-(len(header) + 11) % 64) + b"\n"
    (case_dir / "bias.npy").write_bytes(b"\x93NUMPY\x01\x00" + len(padded).to_bytes(2, "little") + padded)
    assert main(["qbmm", str(case_dir / "case.json")]) == 2
    err = capsys.readouterr().err
    assert "bias (bias.npy): not a .npy array" in err and err.count("\n") == 1


@pytest.mark.parametrize("tolerance", [10**400, float("inf"), -1])
def test_a_tolerance_no_float_holds_is_one_line(tolerance, tmp_path, capsys):
    """Found by the fuzzer: rtol 10^400 passed the check (10^400 < inf) and then float() raised OverflowError."""
    case_dir = tmp_path / "case"
    shutil.copytree(EXAMPLES / "qbmm_int8_bf16", case_dir)
    document = json.loads((case_dir / "case.json").read_text())
    document["expect"]["compare"]["rtol"] = tolerance
    (case_dir / "case.json").write_text(json.dumps(document))
    assert main(["qbmm", str(case_dir / "case.json")]) == 2
    err = capsys.readouterr().err
    assert "expect.compare.rtol must be a finite number >= 0" in err and err.count("\n") == 1 and len(err) < 400

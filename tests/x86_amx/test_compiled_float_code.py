"""The float code around AMX kernels, compiled by g++ and by clang and run from its object files (issue 27).

compiled/float_code_around_tiles.cpp (in the project's own words) turns int32 accumulators into floats with a
scale and a bias, finds a quantisation scale from a row's largest magnitude, and requantises a row to int8.
At the x86-64 baseline the compilers write it in legacy SSE (movss, cvtsi2ss, mulss, maxss, cvttss2si, and the
auto-vectoriser's cvtdq2ps, mulps, packssdw, packsswb ...); with -march=x86-64-v3 and sapphirerapids in VEX and
EVEX (vfmadd, vcmpltps, masked tails ...).  Every build must run on isasim and meet the reference computed here
in numpy float32 (IEEE single, one rounding per operation), where a build that contracted acc * scale + bias
into an FMA (objdump shows vfmadd in it, as -ffp-contract=fast lets g++ and clang do) is held to the exact
value rounded once.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from compilers import compile_object, gxx, zig_clang

from isasim import cli

SOURCE = Path(__file__).resolve().parent / "compiled" / "float_code_around_tiles.cpp"
FLAGS = {"base": [], "v3": ["-march=x86-64-v3"], "spr": ["-march=sapphirerapids"]}
BUILDS = [("gxx", "O0", "base"), ("gxx", "O2", "base"), ("gxx", "O3", "v3"), ("gxx", "O2", "spr"),
          ("gxx", "Os", "spr"), ("clang", "O1", "base"), ("clang", "O3", "base"), ("clang", "O2", "v3"),
          ("clang", "O3", "spr"), ("clang", "Os", "spr")]
BUILD_IDS = ["-".join(build) for build in BUILDS]
A, B, C = 0x10000000, 0x10100000, 0x10200000


@pytest.fixture(scope="module")
def objects(tmp_path_factory) -> dict[str, Path | str]:
    where = tmp_path_factory.mktemp("floatcode")
    built = {}
    compilers = {"gxx": gxx(), "clang": zig_clang()}
    for (cc, level, target), build_id in zip(BUILDS, BUILD_IDS):
        command, why_not = compilers[cc]
        if command is None:
            built[build_id] = why_not
            continue
        flags = FLAGS[target]
        if cc == "clang" and target == "v3":
            flags = ["-march=x86_64_v3"]  # zig spells the x86-64 levels with underscores
        path = where / f"{build_id}.o"
        compile_object(command, SOURCE, path, [f"-{level}", *flags])
        built[build_id] = path
    return built


def contracted(obj: Path, function: str) -> bool:
    """Whether the compiler fused a multiply and an add of ``function`` into an FMA."""
    listing = subprocess.run(["objdump", "-d", "-M", "intel", f"--disassemble={function}", str(obj)],
                             capture_output=True, text=True, timeout=120).stdout
    return "vfmadd" in listing


def region(name: str, address: int, dtype: str, values: np.ndarray) -> dict:
    return {"name": name, "addr": hex(address), "type": dtype, "shape": [1, values.size],
            "values": values.ravel().tolist()}


def float_in_xmm0(value: float) -> dict:
    return {"zmm0": (np.float32(value).tobytes() + bytes(60)).hex()}


def case(function: str, obj: Path):
    """(init, where the result is, the expected bytes)."""
    rng = np.random.default_rng(27)
    f32 = np.float32
    if function == "accumulators_to_float":
        rows, cols, scale = 5, 13, f32(0.0371)
        acc = rng.integers(-3000, 3000, (rows, cols)).astype(np.int32)
        bias = (rng.integers(-400, 400, cols) / 64).astype(np.float32)
        if contracted(obj, function):
            want = (acc.astype(np.float64) * np.float64(scale) + bias.astype(np.float64)).astype(np.float32)
        else:
            want = acc.astype(np.float32) * scale + bias
        init = {"memory": [region("acc", A, "int32", acc), region("bias", B, "fp32", bias),
                           region("out", C, "fp32", np.zeros(rows * cols, np.float32))],
                "args": ["acc", "bias", "out", rows, cols], "arrays": float_in_xmm0(scale)}
        return init, ("memory", C), want.astype(np.float32).tobytes()
    if function == "largest_magnitude_scale":
        row = (rng.standard_normal(37) * 40).astype(np.float32)
        row[17] = -97.25  # the largest magnitude is a negative value
        init = {"memory": [region("row", A, "fp32", row)], "args": ["row", row.size]}
        return init, ("xmm0", None), (np.abs(row).max() / f32(127)).astype(np.float32).tobytes()
    acc = rng.integers(-4000, 4000, 45).astype(np.int32)
    acc[:4] = [27, -27, 3500, -3500]  # 27 * 0.0185 lies near a tie; the last two clamp
    scale = f32(0.0185)
    v = np.clip(acc.astype(np.float32) * scale, f32(-128), f32(127))
    want = np.trunc(v + np.where(v < 0, f32(-0.5), f32(0.5))).astype(np.int8)
    init = {"memory": [region("acc", A, "int32", acc), region("out", C, "int8", np.zeros(acc.size, np.int8))],
            "args": ["acc", "out", acc.size], "arrays": float_in_xmm0(scale)}
    return init, ("memory", C), want.tobytes()


FUNCTIONS = ["accumulators_to_float", "largest_magnitude_scale", "requantize_row"]


@pytest.mark.skipif(not shutil.which("objdump"), reason="no objdump: the FMA check reads its listing")
@pytest.mark.parametrize("build_id", BUILD_IDS)
@pytest.mark.parametrize("function", FUNCTIONS)
def test_compiled_float_code_meets_its_reference(objects, build_id, function, tmp_path, capsys):
    obj = objects[build_id]
    if isinstance(obj, str):
        pytest.skip(obj)
    init, (where, address), want = case(function, obj)
    init_path, trace = tmp_path / "init.json", tmp_path / "run.trace.json"
    init_path.write_text(json.dumps(init))
    capsys.readouterr()
    code = cli.main(["record", str(obj), "--function", function, "--init", str(init_path), "-o", str(trace),
                     "--no-color"])
    out, err = capsys.readouterr()
    assert code == 0, out + err
    expect = json.loads(trace.read_text())["expect"]
    if where == "memory":
        got = bytes.fromhex(next(m["hex"] for m in expect["memory"] if int(m["addr"], 16) == address))
    else:
        got = bytes.fromhex(expect["arrays"]["zmm0"])[:4]
    assert got == want, f"{build_id} {function}: {got.hex()} vs {want.hex()}"
    if function != "largest_magnitude_scale":  # the instructions it ran are the float forms of issue 27
        assert re.search(r"ss|ps", " ".join(json.loads(trace.read_text())["program"]))

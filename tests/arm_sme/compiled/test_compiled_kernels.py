"""SME2 kernels as users compile them (issue 28): ACLE intrinsics (sme2_kernels.c, the project's own words) compiled
by zig's clang at -O0, -O1, -O2 and -O3, each function run from the object file at SVL 128, 512 and 2048 and
checked against a reference computed here in int64, and against QEMU running the same words at the same addresses
(isasim.arm_sme.oracle.objects).

The kernels: ``udot_groups`` (UDOT ZA.S VGx4, the group read back by MOVA and stored as four vectors), ``row_sums``
(a GEMV: UDOT VGx4 per row, MOVA back, UADDV), ``umopa_tile`` and ``smopa_tile`` (UMOPA and SMOPA into ZA0.S, ST1W
of each horizontal slice) and ``tile_then_call`` (``umopa_tile`` with a call in the middle of the sums of a helper
that wants ZA for itself: the SME ABI's lazy save runs through TPIDR2_EL0, ``__arm_tpidr2_save`` commits ZA to the
caller's buffer and ``__arm_tpidr2_restore`` loads it back) and ``keeps_za`` (an ``__arm_agnostic("sme_za_state")``
function calling an ordinary one between ``__arm_sme_save`` and ``__arm_sme_restore``: its caller's ZA, random
here, comes back whole). The functions are entered as their callers must enter them: the streaming ones with
PSTATE.SM and PSTATE.ZA on (init svcr 3), keeps_za with ZA live and not streaming (svcr 2).

A build holding an instruction isasim does not decode yet is refused before the run in one line naming it
(capstone's mnemonic): such a case is an expected failure whose reason is that line, so the summary lists what is
still refused. ISASIM_SME_COMPILED_SVLS (e.g. "128,256,512,1024,2048") widens the SVLs.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import numpy as np
import pytest

from isasim.core.errors import IsasimError
from isasim.core.isa import get_isa
from isasim.core.machine import Machine
from isasim.core.trace import parse_init

SOURCE = Path(__file__).resolve().parent / "sme2_kernels.c"
LEVELS = ("O0", "O1", "O2", "O3")
SVLS = tuple(int(s) for s in os.environ.get("ISASIM_SME_COMPILED_SVLS", "128,512,2048").split(","))
KERNELS = ("udot_groups", "row_sums", "umopa_tile", "smopa_tile", "tile_then_call", "keeps_za")
A, B, C, W = 0x1000000, 0x2000000, 0x3000000, 0x4000000  # the regions' addresses (clear of code and stack)
STREAMING_WITH_ZA = 3  # SVCR: PSTATE.SM and PSTATE.ZA, as a __arm_streaming __arm_inout("za") caller has them
ZA_ONLY = 2  # ZA live, not streaming: a caller of an __arm_agnostic("sme_za_state") function with ZA in use


@pytest.fixture(scope="module")
def objects(tmp_path_factory) -> dict[str, Path | str]:
    """Each level's object file, or why it could not be built here."""
    from isasim.arm_sme.oracle.tools import clang_problem, find_zig, zig_env

    problem = clang_problem()
    where = tmp_path_factory.mktemp("sme2_compiled")
    built: dict[str, Path | str] = {}
    for level in LEVELS:
        if problem:
            built[level] = problem
            continue
        zig, _ = find_zig()
        path = where / f"sme2_kernels_{level}.o"
        done = subprocess.run([zig, "cc", "-target", "aarch64-linux-gnu", "-mcpu=generic+sme2", "-fno-sanitize=all",
                               f"-{level}", "-c", str(SOURCE), "-o", str(path)], capture_output=True, text=True,
                              env=zig_env(), timeout=300)
        built[level] = path if done.returncode == 0 else f"zig cc -{level} failed: {done.stderr[:300]}"
    return built


def _region(name: str, address: int, element: str, values, readonly: bool) -> dict:
    return {"name": name, "addr": hex(address), "type": element, "values": [int(v) for v in np.ravel(values)],
            "shape": [1, int(np.size(values))], "readonly": readonly}


def case(kernel: str, svl: int, seed: int = 7):
    """(init data, the output regions' (address, dtype, reference values)) for one kernel at one SVL."""
    rng = np.random.default_rng(seed + svl)
    svlb = svl // 8
    lanes = svlb // 4
    if kernel == "udot_groups":
        blocks = 3
        a, b = (rng.integers(0, 256, blocks * 4 * svlb) for _ in range(2))
        products = (a * b).reshape(blocks, 4, lanes, 4).sum(axis=(0, 3))  # [group][lane]
        init = {"args": ["a", "b", "out", blocks],
                "memory": [_region("a", A, "uint8", a, True), _region("b", B, "uint8", b, True),
                           _region("out", C, "uint32", np.zeros(4 * lanes), False)]}
        return init, [(C, np.uint32, products.ravel())]
    if kernel == "row_sums":
        rows, n = 3, 2 * 4 * svlb
        a, x = rng.integers(0, 256, rows * n), rng.integers(0, 256, n)
        reference = (a.reshape(rows, n) * x).sum(axis=1)
        init = {"args": ["a", "x", "out", rows, n],
                "memory": [_region("a", A, "uint8", a, True), _region("x", B, "uint8", x, True),
                           _region("out", C, "uint64", np.zeros(rows), False)]}
        return init, [(C, np.uint64, reference)]
    if kernel == "keeps_za":
        v = rng.integers(0, 256, 100)
        init = {"args": ["v", v.size], "memory": [_region("v", A, "uint8", v, True)],
                "arrays": {"za": rng.integers(0, 256, svlb * svlb, dtype=np.uint8).tobytes().hex()}}
        return init, [("x0", None, int(v.sum()) + 1), ("za", None, init["arrays"]["za"])]
    k4 = 3
    if kernel == "smopa_tile":
        a, b = (rng.integers(-128, 128, k4 * svlb) for _ in range(2))
        tile = np.einsum("tiq,tjq->ij", a.reshape(k4, lanes, 4), b.reshape(k4, lanes, 4))
        return ({"args": ["a", "b", "c", k4],
                 "memory": [_region("a", A, "int8", a, True), _region("b", B, "int8", b, True),
                            _region("c", C, "int32", np.zeros(lanes * lanes), False)]},
                [(C, np.int32, tile.ravel())])
    a, b = (rng.integers(0, 256, k4 * svlb) for _ in range(2))
    tile = np.einsum("tiq,tjq->ij", a.reshape(k4, lanes, 4), b.reshape(k4, lanes, 4))
    memory = [_region("a", A, "uint8", a, True), _region("b", B, "uint8", b, True),
              _region("c", C, "uint32", np.zeros(lanes * lanes), False)]
    if kernel == "umopa_tile":
        return {"args": ["a", "b", "c", k4], "memory": memory}, [(C, np.uint32, tile.ravel())]
    memory.append(_region("w", W, "uint32", np.zeros(lanes), False))
    helper_row = 2 * (b[:svlb].reshape(lanes, 4) * a[:4]).sum(axis=1)  # twice a[0..3] . b[4j..4j+3]
    return ({"args": ["a", "b", "c", k4, "w"], "memory": memory},
            [(C, np.uint32, tile.ravel()), (W, np.uint32, helper_row)])


def loaded(objects, level: str, kernel: str, svl: int):
    """(isa, config, program, init, expected) for one case; skips without the compiler, xfails a refusal."""
    obj = objects[level]
    if isinstance(obj, str):
        pytest.skip(obj)
    data, expected = case(kernel, svl)
    data["regs"] = {"svcr": ZA_ONLY if kernel == "keeps_za" else STREAMING_WITH_ZA}
    isa = get_isa("arm_sme")
    config = isa.configure({"svl": svl})
    try:
        program, init = isa.load_object(str(obj), kernel, parse_init(data))
    except IsasimError as error:
        message = str(error)
        assert "\n" not in message
        if "does not simulate" in message:
            pytest.xfail(message.split(": ", 1)[-1])
        raise
    return isa, config, program, init, expected


def _check(machine, expected) -> None:
    memory = machine.memory
    for address, dtype, reference in expected:
        if address == "x0":
            assert machine.state.x[0] == reference
            continue
        if address == "za":
            assert machine.state.za_enabled and machine.state.za.tobytes().hex() == reference
            continue
        reference = np.asarray(reference, dtype=np.int64)
        info = np.iinfo(dtype)
        assert info.min <= reference.min(initial=0) and reference.max(initial=0) <= info.max  # the sums fit
        size = reference.size * np.dtype(dtype).itemsize
        got = np.frombuffer(memory.read(address, size), dtype=dtype).astype(np.int64)
        np.testing.assert_array_equal(got, reference)


@pytest.mark.parametrize("svl", SVLS)
@pytest.mark.parametrize("level", LEVELS)
@pytest.mark.parametrize("kernel", KERNELS)
def test_kernel_meets_int64_reference(objects, kernel, level, svl):
    _isa, config, program, init, expected = loaded(objects, level, kernel, svl)
    machine = Machine("arm_sme", config)
    machine.load_init(program, init)
    result = machine.run(2_000_000)
    assert result.fault is None, result.fault.describe()
    assert machine.halted
    _check(machine, expected)


@pytest.mark.needs_qemu
@pytest.mark.parametrize("svl", SVLS)
@pytest.mark.parametrize("level", LEVELS)
@pytest.mark.parametrize("kernel", KERNELS)
def test_kernel_agrees_with_qemu(objects, kernel, level, svl):
    from isasim.core.diff import diff

    _isa, config, program, init, expected = loaded(objects, level, kernel, svl)
    report = diff("arm_sme", config, program, init, a="sim", b="qemu", max_steps=2_000_000)
    assert report.divergence is None, report.divergence.describe("sim", "qemu")

"""The C library's rounding functions as isasim built-ins (semantics/libm.py): every one against this host's
libm through ctypes, and compiled quantisation code that calls them (g++ and clang, -O0 and -O2) against the
same source built as a shared library and run natively on this host, and on silicon after every instruction."""

from __future__ import annotations

import ctypes
import ctypes.util
import struct
import subprocess
from pathlib import Path

import numpy as np
import pytest
from compilers import compile_object, gxx, zig_clang

from isasim.arm_sme.oracle.tools import zig_env
from isasim.core.diff import diff
from isasim.core.machine import Machine
from isasim.core.trace import Init
from isasim.x86_amx import ISA
from isasim.x86_amx.semantics.libm import ROUNDING, call_rounding

SOURCE = Path(__file__).parent / "compiled" / "rounding_calls.cpp"
X, OUT, OUT2, OUT3 = 0x10000000, 0x10100000, 0x10200000, 0x10300000
EDGES = [0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 0.49999997, -0.0, 0.0, 1e10, -1e10, 3e38, float("inf"), float("-inf"),
         float("nan"), 2.0 ** 63, -(2.0 ** 63), 2.0 ** 62 * 1.5, 8388607.5, 4503599627370495.5, 1e-40, -1e-40,
         123.456, -0.7, 127.5, -128.5]


def host_libm():
    name = ctypes.util.find_library("m")
    if name is None:
        pytest.skip("this host has no C math library to compare with")
    return ctypes.CDLL(name)


def _bits(value: float, argument: str) -> int:
    return int.from_bytes(struct.pack("<f" if argument == "f32" else "<d", value), "little")


@pytest.mark.parametrize("name", sorted(ROUNDING))
def test_each_rounding_function_is_this_hosts_libm(name):
    argument, result, _apply = ROUNDING[name]
    function = getattr(host_libm(), name)
    c_float = ctypes.c_float if argument == "f32" else ctypes.c_double
    function.argtypes = [c_float]
    function.restype = {"f32": ctypes.c_float, "f64": ctypes.c_double, "i64": ctypes.c_longlong}[result]
    rng = np.random.default_rng(abs(hash(name)) % 1000)
    if argument == "f32":
        randoms = rng.integers(0, 1 << 32, 3000, dtype=np.uint64).astype(np.uint32).view(np.float32).tolist()
    else:
        randoms = rng.integers(0, 1 << 63, 3000, dtype=np.uint64).view(np.float64).tolist()
        randoms += (rng.standard_normal(1000) * 1e6).tolist()  # plenty with fractions near .5
    mismatches = []
    for value in EDGES + randoms:
        if argument == "f32":
            value = struct.unpack("<f", struct.pack("<f", value))[0] if abs(value) < 3.4e38 or value != value \
                else value
        zmm0, rax = call_rounding(name, _bits(value, argument))
        got = function(value)
        if result == "i64":
            mine, want = rax, got % (1 << 64)
        else:
            width = 32 if result == "f32" else 64
            mine, want = zmm0 & ((1 << width) - 1), _bits(got, result)
        if mine != want:
            mismatches.append((value, hex(mine), hex(want)))
    assert not mismatches, mismatches[:5]


# ---- compiled code that calls them ------------------------------------------------------------------------

BUILDS = {"g++ -O0": (gxx, ["-O0"]), "g++ -O2": (gxx, ["-O2"]), "clang -O0": (zig_clang, ["-O0"]),
          "clang -O2": (zig_clang, ["-O2"])}


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> dict[str, tuple]:
    """Each build's object file and the same source as a native shared library, or why there is none."""
    where = tmp_path_factory.mktemp("rounding")
    out = {}
    for n, (name, (compiler, flags)) in enumerate(BUILDS.items()):
        command, why = compiler()
        if command is None:
            out[name] = why
            continue
        obj, shared = where / f"{n}.o", where / f"{n}.so"
        compile_object(command, SOURCE, obj, [*flags, "-fno-stack-protector"])
        done = subprocess.run([*command, "-shared", "-fPIC", *flags, str(SOURCE), "-o", str(shared), "-lm"],
                              capture_output=True, text=True, timeout=300, env=zig_env() if "zig" in command[0]
                              else None)
        out[name] = (obj, shared) if done.returncode == 0 else f"the native library does not build: {done.stderr}"
    return out


def build_of(built, name):
    if isinstance(built[name], str):
        pytest.skip(built[name])
    return built[name]


def run(obj: Path, function: str, args: list[int], memory: list) -> Machine:
    program, init = ISA.load_object(str(obj), function, Init(memory=memory, args=args))
    machine = Machine("x86_amx")
    machine.load_init(program, init)
    machine.state.write_register("zmm0", _bits(float(np.float32(1 / 0.0375)), "f32"))  # inverse_scale's register
    machine.run()
    assert machine.fault is None and machine.halted, machine.fault
    return machine


def values(n: int) -> np.ndarray:
    rng = np.random.default_rng(42)
    halves = (rng.integers(-400, 400, n // 2) + 0.5) * 0.0375  # ties, once scaled
    return np.concatenate([halves, rng.standard_normal(n - n // 2) * 4]).astype(np.float32)


@pytest.mark.parametrize("build", BUILDS)
def test_quantize_row_calls_lrintf_as_the_host_runs_it(built, build):
    obj, shared = build_of(built, build)
    x = values(64)
    machine = run(obj, "quantize_row", [X, OUT, len(x)], [(X, x.tobytes(), False), (OUT, bytes(64), True)])
    native = ctypes.CDLL(str(shared))
    native.quantize_row.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int, ctypes.c_float]
    want = ctypes.create_string_buffer(64)
    native.quantize_row(x.ctypes.data, want, len(x), ctypes.c_float(1 / 0.0375))
    assert machine.memory.read(OUT, 64) == want.raw


@pytest.mark.parametrize("build", BUILDS)
def test_integral_rows_and_llround_as_the_host_runs_them(built, build):
    obj, shared = build_of(built, build)
    x = values(32)
    machine = run(obj, "integral_rows", [X, OUT, OUT2, OUT3, len(x)],
                  [(X, x.tobytes(), False), (OUT, bytes(128), True), (OUT2, bytes(128), True),
                   (OUT3, bytes(128), True)])
    native = ctypes.CDLL(str(shared))
    nearest, away, down = (ctypes.create_string_buffer(size) for size in (128, 128, 128))
    native.integral_rows(ctypes.c_void_p(x.ctypes.data), nearest, away, down, len(x))
    assert machine.memory.read(OUT, 128) == nearest.raw and machine.memory.read(OUT2, 128) == away.raw
    assert machine.memory.read(OUT3, 128) == down.raw
    halves = (np.arange(-20, 20) * 0.5 + 0.25).astype(np.float32)  # x and 3x: ties and not
    machine = run(obj, "count_rounded", [X, len(halves)], [(X, halves.tobytes(), False)])
    native.count_rounded.restype = ctypes.c_longlong
    assert machine.state.read_register("rax") == native.count_rounded(ctypes.c_void_p(halves.ctypes.data),
                                                                       len(halves)) % (1 << 64)


@pytest.mark.needs_silicon
@pytest.mark.parametrize("build", ["g++ -O2", "clang -O0"])
def test_the_calls_agree_with_silicon(built, build):
    """The silicon backend's child runs the same built-ins at their UD2: lockstep, every instruction."""
    obj, _shared = build_of(built, build)
    x = values(16)
    program, init = ISA.load_object(str(obj), "integral_rows", Init(
        memory=[(X, x.tobytes(), False), (OUT, bytes(0x1000), True)], args=[X, OUT, OUT + 0x100, OUT + 0x200, 16]))
    report = diff("x86_amx", {}, program, init, mode="lockstep")
    assert report.divergence is None, report

"""AMX kernels written as application code writes them, compiled by g++ and by clang at every optimisation
level, run from their object files and checked against a reference computed here (issue 27).

The source (compiled/amx_kernels_in_the_wild.cpp, in the project's own words) takes its sizes from its
arguments, keeps its tile configuration in an aligned struct on the stack filled by a helper function that is
not inlined and clears it with memset, finishes K in scalar C after the tiles, and converts float32 to bfloat16
with AVX-512 BF16 before them.  The builds: g++ and zig's clang (``zig c++ -target x86_64-linux-gnu``, with
zig's debug-mode sanitizer off, as plain clang builds) at -O0, -O1, -O2, -O3 and -Os; -march=sapphirerapids and
-march=graniterapids; with -fstack-protector-strong and without.

The references: int8 products in numpy int64 (every sum fits int32, asserted); bf16 products from inputs rounded
to bfloat16 by ml_dtypes (round to nearest even, ties included in the data) and summed exactly in float64, the
data chosen so that every sum is exact in float32 (asserted), so the hardware's one rounding changes nothing.

Where a build holds something isasim does not run yet (an instruction, a call out of the object), the run must be
refused before it starts in one line (exit 2, no traceback); an instruction refusal must name the mnemonic GNU
objdump shows at that address. Such a build is an expected failure whose reason is that line, so the summary
lists what is still refused.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

from isasim import cli
from isasim.arm_sme.oracle.tools import find_zig, zig_env

SOURCE = Path(__file__).resolve().parent / "compiled" / "amx_kernels_in_the_wild.cpp"
CODE_BASE = 0x400000
ISA_FLAGS = {
    "amx": ["-mamx-tile", "-mamx-int8", "-mamx-bf16", "-mavx512f", "-mavx512bw", "-mavx512bf16"],
    "spr": ["-march=sapphirerapids"],
    "gnr": ["-march=graniterapids"],
    "v3": ["-march=x86-64-v3", "-mamx-tile", "-mamx-int8", "-mamx-bf16", "-mavx512f", "-mavx512bw", "-mavx512bf16"],
}
STACK_FLAGS = {"nossp": ["-fno-stack-protector"], "ssp": ["-fstack-protector-strong"],
               # as shared libraries are built (-fPIC: globals through the GOT), with CET's ENDBR64 and NOTRACK
               "pic": ["-fPIC", "-fno-plt", "-fcf-protection=full", "-fstack-protector-strong"]}
# compiler, level, isa flags, stack protector: every level with each compiler, the -march builds and the stack
# protector at a few levels (the full product would cost a minute of compiling for little more coverage)
BUILDS = ([(cc, level, "amx", "nossp") for cc in ("gxx", "clang") for level in ("O0", "O1", "O2", "O3", "Os")]
          + [(cc, level, "spr", "ssp") for cc in ("gxx", "clang") for level in ("O0", "O2")]
          + [(cc, "O3", "amx", "ssp") for cc in ("gxx", "clang")]
          + [("clang", "O2", "gnr", "nossp"), ("gxx", "O2", "gnr", "nossp")]
          + [(cc, "O2", "spr", "pic") for cc in ("gxx", "clang")] + [(cc, "O3", "v3", "nossp") for cc in ("gxx", "clang")])
BUILD_IDS = ["-".join(build) for build in BUILDS]
REFUSED_INSTRUCTION = re.compile(r"the instruction at (?P<address>0x[0-9a-f]+) \((?P<bytes>[0-9a-f]{2}(?: [0-9a-f]{2})*)"
                                 r": [^)]*\) is (?P<mnemonic>[a-z0-9]+)")


def compiler_command(cc: str) -> list[str] | str:
    """The compiler's command, or why there is none here."""
    if cc == "gxx":
        return ["g++"] if shutil.which("g++") else "no g++ on this machine"
    zig, looked = find_zig()
    if zig is None:
        return "no zig for clang (looked at " + ", ".join(looked) + "); run tools/install_oracles.sh"
    return [zig, "c++", "-target", "x86_64-linux-gnu", "-fno-sanitize=all"]


@pytest.fixture(scope="module")
def objects(tmp_path_factory) -> dict[str, Path | str]:
    """Each build's object file, or the reason it could not be built here (a skip, not a failure)."""
    where = tmp_path_factory.mktemp("wild")
    built = {}
    for build, build_id in zip(BUILDS, BUILD_IDS):
        cc, level, isa, stack = build
        command = compiler_command(cc)
        if isinstance(command, str):
            built[build_id] = command
            continue
        path = where / f"{build_id}.o"
        flags = ISA_FLAGS[isa]
        if cc == "clang":  # zig's clang names the x86-64 levels as LLVM's CPUs: x86_64_v3
            flags = [f.replace("x86-64-v", "x86_64_v") for f in flags]
        done = subprocess.run([*command, "-c", f"-{level}", *flags, *STACK_FLAGS[stack], str(SOURCE),
                               "-o", str(path)], capture_output=True, text=True, timeout=300, env=zig_env())
        if done.returncode != 0:
            last = (done.stderr.strip().splitlines() or ["no message"])[-1]
            if "-march=" in done.stderr and isa in ("gnr", "spr"):
                built[build_id] = f"{cc} does not know {ISA_FLAGS[isa][0]} ({last.strip()[:120]})"
                continue
            raise AssertionError(f"{build_id} does not compile: {done.stderr}")
        built[build_id] = path
    return built


# ---- the cases: arguments, initial memory and the reference ---------------------------------------------


def vnni(b: np.ndarray, per_dword: int) -> np.ndarray:
    """B (k x n) in the layout the tiles read: k/per_dword rows (zero-padded) of n groups of per_dword values,
    group (r, col) holding B[per_dword * r + j][col] for j in order."""
    k, n = b.shape
    rows = -(-k // per_dword)
    padded = np.zeros((rows * per_dword, n), dtype=b.dtype)
    padded[:k] = b
    return padded.reshape(rows, per_dword, n).transpose(0, 2, 1).reshape(rows, n * per_dword)


def region(name: str, address: int, dtype: str, values: np.ndarray) -> dict:
    return {"name": name, "addr": hex(address), "type": dtype, "shape": list(values.shape),
            "values": values.ravel().tolist()}


def int8_case(function: str, rng: np.random.Generator) -> tuple[dict, np.ndarray, str]:
    if function == "gemm_s8s8_k_tail":
        m, n, k = 13, 11, 100  # K: one tile step of 64 and a scalar tail of 36
        a = rng.integers(-128, 128, (m, k), dtype=np.int64)
        c = rng.integers(-10**6, 10**6, (m, n), dtype=np.int64)
        a_type = "int8"
    else:
        m, n, k = 16, 16, 128
        a = rng.integers(0, 256, (m, k), dtype=np.int64)
        c = np.zeros((m, n), dtype=np.int64)  # accumulates from TILEZERO
        a_type = "uint8"
    b = rng.integers(-128, 128, (k, n), dtype=np.int64)
    want = c + a @ b
    assert np.abs(want).max() < 2**31
    init = {"memory": [region("A", 0x10000000, a_type, a), region("B", 0x10100000, "int8", vnni(b, 4)),
                       region("C", 0x10200000, "int32", c)],
            "args": ["A", "B", "C", m, n, k]}
    return init, want.astype(np.int32), "int32"


def bf16_inputs(rng: np.random.Generator, shape: tuple[int, int]) -> np.ndarray:
    """float32 values whose bfloat16 roundings lie in [1, 4) (or are 0), with a sign: each is a bfloat16 value,
    or one a third of an ulp either side of it, or exactly half an ulp above it (a tie, to even)."""
    exponent = rng.integers(0, 2, shape)  # [1, 2) or [2, 4)
    mantissa = rng.integers(0, 128, shape)
    ulp = 2.0 ** (exponent - 7)
    value = (1 + mantissa / 128) * 2.0**exponent
    offset = rng.choice([0.0, 5 / 16, -5 / 16, 0.5], shape) * ulp
    offset[(mantissa == 0) & (offset < 0)] = 0  # below 1 the ulp halves: keep to the grid above
    value = (value + offset) * rng.choice([-1.0, 1.0], shape)
    value[rng.random(shape) < 0.1] = 0.0
    out = value.astype(np.float32)
    assert (out.astype(np.float64) == value).all()  # every input is exactly the float32 the kernel reads
    return out


def bf16_case(rng: np.random.Generator) -> tuple[dict, np.ndarray, str]:
    m, n = 9, 13
    a, b = bf16_inputs(rng, (m, 32)), bf16_inputs(rng, (32, n))
    c = (rng.integers(-512, 512, (m, n)) / 64).astype(np.float32)
    rounded_a = a.astype(ml_dtypes.bfloat16).astype(np.float64)
    rounded_b = b.astype(ml_dtypes.bfloat16).astype(np.float64)
    assert (rounded_a != a).any() and (rounded_b != b).any()  # the conversion has work to do
    want = c.astype(np.float64) + rounded_a @ rounded_b
    assert (want.astype(np.float32).astype(np.float64) == want).all()  # exact in float32: one rounding is moot
    init = {"memory": [region("A", 0x10000000, "fp32", a), region("B", 0x10100000, "fp32", b),
                       region("C", 0x10200000, "fp32", c)],
            "args": ["A", "B", "C", m, n]}
    return init, want.astype(np.float32), "fp32"


def case(function: str):
    rng = np.random.default_rng(sum(map(ord, function)))
    return bf16_case(rng) if function == "gemm_bf16_from_f32" else int8_case(function, rng)


FUNCTIONS = ["gemm_s8s8_k_tail", "gemm_u8s8", "gemm_bf16_from_f32"]


def test_the_vnni_layout_puts_k_consecutive_values_of_a_column_in_one_group():
    b = np.arange(5 * 3).reshape(5, 3)  # B[k][n] = 3k + n
    packed = vnni(b, 4)
    assert packed.shape == (2, 12)
    assert list(packed[0, 4:8]) == [1, 4, 7, 10]  # column 1, k = 0..3
    assert list(packed[1, 0:4]) == [12, 0, 0, 0]  # column 0, k = 4, then the zero padding


def objdump_mnemonic(obj: Path, function: str, address: int) -> str:
    from elftools.elf.elffile import ELFFile

    with open(obj, "rb") as f:
        value = next(s["st_value"] for s in ELFFile(f).get_section_by_name(".symtab").iter_symbols()
                     if s.name == function)
    listing = subprocess.run(["objdump", "-d", "-M", "intel", "--insn-width=16", str(obj)], capture_output=True,
                             text=True, timeout=120).stdout
    at = value + address - CODE_BASE
    for line in listing.splitlines():
        m = re.match(r"\s*([0-9a-f]+):\t(?:[0-9a-f]{2} )+\s*\t(\S+)", line)
        if m and int(m.group(1), 16) == at:
            return m.group(2)
    raise AssertionError(f"objdump shows no instruction at {at:#x} of {obj.name}")


@pytest.mark.parametrize("build_id", BUILD_IDS)
@pytest.mark.parametrize("function", FUNCTIONS)
def test_compiled_kernel_meets_its_reference(objects, build_id, function, tmp_path, capsys):
    obj = objects[build_id]
    if isinstance(obj, str):
        pytest.skip(obj)
    init, want, element = case(function)
    init_path, trace = tmp_path / "init.json", tmp_path / "run.trace.json"
    init_path.write_text(json.dumps(init))
    capsys.readouterr()
    code = cli.main(["record", str(obj), "--function", function, "--init", str(init_path), "-o", str(trace),
                     "--no-color"])
    out, err = capsys.readouterr()
    if code != 0:
        assert code == 2 and err.count("\n") == 1 and "Traceback" not in err, out + err
        assert not trace.exists()
        # only what isasim says it does not run yet is an expected failure; any other error is a failure
        assert "which isasim does not simulate" in err or "nor an isasim built-in" in err, err
        refused = REFUSED_INSTRUCTION.search(err)
        if refused and shutil.which("objdump"):
            assert objdump_mnemonic(obj, function, int(refused["address"], 16)) == refused["mnemonic"], err
        pytest.xfail(err.strip().replace(str(obj), f"{build_id}.o"))
    data = json.loads(trace.read_text())
    got_hex = next(m["hex"] for m in data["expect"]["memory"] if int(m["addr"], 16) == 0x10200000)
    got = np.frombuffer(bytes.fromhex(got_hex), dtype=np.int32 if element == "int32" else np.float32)
    got = got.reshape(want.shape)
    wrong = np.argwhere(got.view(np.uint32) != want.view(np.uint32))
    assert not len(wrong), f"{len(wrong)} wrong elements of C, first at {wrong[0]}: {got[tuple(wrong[0])]} " \
                           f"vs {want[tuple(wrong[0])]}"

"""isasim run/step/record/diff FILE.o --function NAME: g++-compiled AMX kernels (examples/x86_amx/compiled)
at -O0, -O2, -O3, with -mamx-tile -mamx-int8 -mamx-bf16 and with -march=sapphirerapids, checked against
an INT64 numpy product (int8) or an exact float64 one (bf16: the inputs are multiples of 0.25, so every
sum is exact in fp32, as tests/x86_amx/kernels/test_kernels.py checks the BF16 kernels).

Where the compiled code holds an instruction isasim does not simulate yet, the refusal must be one line
naming its address, bytes and mnemonic, and GNU objdump must show that mnemonic at that place in the
object file; the run is then an xfail with that line as its reason, so the summary lists every one.
The object files are compiled here, into a temporary folder, with the machine's g++.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

from isasim import cli

ROOT = Path(__file__).resolve().parents[2]
COMPILED = ROOT / "examples" / "x86_amx" / "compiled"
SOURCE = COMPILED / "kernels.cpp"
CODE_BASE = 0x400000

AMX_FLAGS = ["-mamx-tile", "-mamx-int8", "-mamx-bf16"]
BUILDS = {f"{level}{'-spr' if spr else ''}": [f"-{level}"] + (["-march=sapphirerapids"] if spr else AMX_FLAGS)
          for spr in (False, True) for level in ("O0", "O2", "O3")}
KERNELS = ["amx_block", "amx_block_configured", "amx_batch", "amx_gemm32_batch", "bf16_block", "amx_bf16_batch",
           "amx_bf16_gemm32_batch"]
REFUSAL = re.compile(r"isasim: error: (?P<file>\S+): function '(?P<name>[^']+)': the instruction at "
                     r"(?P<address>0x[0-9a-f]+) \((?P<bytes>[0-9a-f]{2}(?: [0-9a-f]{2})*): (?P<text>[^)]*)\) is "
                     r"(?P<mnemonic>[a-z0-9]+)(?P<form> with [^,]+)?, which isasim does not simulate")


def _compiler_problem() -> str | None:
    gxx = shutil.which("g++")
    if gxx is None:
        return "no g++ on this machine"
    probe = subprocess.run([gxx, "-x", "c++", "-c", "-o", "/dev/null", "-mamx-tile", "-"], input="int x;\n",
                           capture_output=True, text=True, timeout=120)
    if probe.returncode != 0:
        return f"this g++ does not take -mamx-tile ({probe.stderr.strip().splitlines()[-1:]})"
    return None


@pytest.fixture(scope="module")
def objects(tmp_path_factory) -> dict[str, Path]:
    problem = _compiler_problem()
    if problem:
        pytest.skip(problem)
    where = tmp_path_factory.mktemp("compiled")
    out = {}
    for build, flags in BUILDS.items():
        path = where / f"kernels_{build}.o"
        done = subprocess.run(["g++", "-c", *flags, str(SOURCE), "-o", str(path)], capture_output=True, text=True,
                              timeout=300)
        assert done.returncode == 0, done.stderr
        out[build] = path
    return out


def isasim(capsys, *argv: str) -> tuple[int, str, str]:
    capsys.readouterr()
    code = cli.main([*argv, "--no-color"] if argv[0] != "replay" else list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def one_line_error(code: int, err: str) -> str:
    assert code == 2, err
    assert err.endswith("\n") and err.count("\n") == 1, err
    assert "Traceback" not in err
    return err.strip()


# ---- the reference, from the init file's own numbers --------------------------------------------------


def regions(init_path: Path) -> dict[str, dict]:
    return {r["name"]: r for r in json.loads(init_path.read_text())["memory"]}


def operands(name: str, init: dict) -> tuple[np.ndarray, np.ndarray]:
    """The logical A (M x K) and B (K x N) the kernel multiplies, unpacked from the init's layout."""
    bf16 = "bf16" in name
    dtype = np.float64 if bf16 else np.int64
    a = np.array(init["A"]["values"], dtype=dtype)
    b = np.array((init.get("packed B") or init["B"])["values"], dtype=dtype)
    per = 2 if bf16 else 4  # K values per dword of packed B
    width = 64 // (2 if bf16 else 1)  # elements per 64-byte row
    if "gemm32" in name:
        args = json.loads((COMPILED / f"{name}.init.json").read_text())["args"]
        steps, blocks = args[3], args[4]
        a = a.reshape(blocks, steps, 2, 16, width).transpose(0, 2, 3, 1, 4).reshape(blocks * 32, steps * width)
        b = b.reshape(steps, 2, 16, 16, per).transpose(0, 2, 4, 1, 3).reshape(steps * width, 32)
    else:
        a = a.reshape(-1, width)
        b = b.reshape(16, 16, per).transpose(0, 2, 1).reshape(width, 16)
    return a, b


def reference(name: str, init: dict) -> np.ndarray:
    a, b = operands(name, init)
    product = a @ b
    if "bf16" in name:
        for x in (a, b):  # the inputs are bf16 values exactly ...
            assert (x.astype(ml_dtypes.bfloat16).astype(np.float64) == x).all()
        assert (product.astype(np.float32).astype(np.float64) == product).all()  # ... and every sum is exact
        return product.astype(np.float32)
    assert np.abs(product).max() < 2**31
    return product.astype(np.int32)


def test_the_reference_unpacks_the_articles_layout():
    """A planted check of operands(): packed B's row r, dword n, byte j is B[4r + j][n]."""
    init = regions(COMPILED / "amx_block.init.json")
    packed = np.array(init["packed B"]["values"]).reshape(16, 64)
    _a, b = operands("amx_block", init)
    for k, n in [(0, 0), (5, 3), (63, 15), (17, 9)]:
        assert b[k][n] == packed[k // 4][4 * n + k % 4]


# ---- every kernel, every build ------------------------------------------------------------------------


def objdump_mnemonic(obj: Path, symbol: str, offset: int) -> tuple[str, int]:
    """GNU objdump's mnemonic and length of the instruction at ``offset`` into ``symbol``."""
    from elftools.elf.elffile import ELFFile

    with open(obj, "rb") as f:
        value = next(s["st_value"] for s in ELFFile(f).get_section_by_name(".symtab").iter_symbols()
                     if s.name == symbol)
    listing = subprocess.run(["objdump", "-d", "-M", "intel", "--insn-width=16", str(obj)], capture_output=True,
                             text=True, timeout=120).stdout
    at = value + offset
    for line in listing.splitlines():
        m = re.match(r"\s*([0-9a-f]+):\t((?:[0-9a-f]{2} )+)\s*\t(\S+)", line)
        if m and int(m.group(1), 16) == at:
            return m.group(3), len(m.group(2).split())
    raise AssertionError(f"objdump shows no instruction at {at:#x} of {obj.name}")


MANGLED = {"bf16_block": "_Z10bf16_blockPKtS0_Pf"}


@pytest.mark.parametrize("build", BUILDS)
@pytest.mark.parametrize("name", KERNELS)
def test_compiled_kernel_against_the_reference(objects, build, name, tmp_path, capsys):
    obj, init_path = objects[build], COMPILED / f"{name}.init.json"
    trace = tmp_path / "run.trace.json"
    code, out, err = isasim(capsys, "record", str(obj), "--function", name, "--init", str(init_path),
                            "-o", str(trace))
    if code != 0:
        line = one_line_error(code, err)
        m = REFUSAL.match(line)
        assert m, line
        assert not trace.exists()
        address = int(m["address"], 16)
        mnemonic, length = objdump_mnemonic(obj, MANGLED.get(name, name), address - CODE_BASE)
        assert mnemonic == m["mnemonic"] and length == len(m["bytes"].split()), (mnemonic, length, line)
        pytest.xfail(f"-{build} {name}: not simulated yet: {m['mnemonic']}{m['form'] or ''} at {m['address']} "
                     f"({m['bytes']}: {m['text']}){line[m.end():]}")
    init = regions(init_path)
    data = json.loads(trace.read_text())
    c = init["C"]
    got_hex = next(m["hex"] for m in data["expect"]["memory"] if int(m["addr"], 16) == int(c["addr"], 16))
    element = np.float32 if "bf16" in name else np.int32
    got = np.frombuffer(bytes.fromhex(got_hex), dtype=element).reshape(c["shape"])
    want = reference(name, init)
    assert got.shape == want.shape
    assert (got.view(np.uint32) == want.view(np.uint32)).all(), np.argwhere(got != want)[:3]
    # the trace replays without the object file: its program is the disassembly, its init the data and stack
    moved = tmp_path / "elsewhere" / "run.trace.json"
    moved.parent.mkdir()
    shutil.move(trace, moved)
    code, out, err = isasim(capsys, "replay", str(moved))
    assert code == 0 and out.startswith("ok"), out + err


# ---- what runs today: the function given its tile configuration ------------------------------------------


@pytest.mark.parametrize("build", BUILDS)
def test_configured_block_runs_steps_and_records(objects, build, tmp_path, capsys):
    """No stack frame to build (at -O0 the arguments are spilled to the stack and read back): it runs
    at every level now, and its result is the INT64 product."""
    obj, init_path = objects[build], COMPILED / "amx_block_configured.init.json"
    code, out, err = isasim(capsys, "run", str(obj), "--function", "amx_block_configured", "--init", str(init_path))
    assert code == 0, err
    assert "amx_block_configured" not in err
    code, out, err = isasim(capsys, "step", str(obj), "--function", "amx_block_configured", "--init",
                            str(init_path), "--commands", "s; p rdi; c")
    assert code == 0, err
    config_address = int(regions(init_path)["tilecfg"]["addr"], 16)
    assert f"rdi = {config_address:#x}" in out
    trace = tmp_path / "t.json"
    code, out, err = isasim(capsys, "record", str(obj), "--function", "amx_block_configured", "--init",
                            str(init_path), "-o", str(trace))
    assert code == 0, err
    data = json.loads(trace.read_text())
    init = regions(init_path)
    # the System V argument registers hold the regions' addresses, in the order of "args"
    for register, region in zip(("rdi", "rsi", "rdx", "rcx"), ("tilecfg", "A", "packed B", "C")):
        assert int(data["init"]["regs"][register], 16) == int(init[region]["addr"], 16)
    rsp = int(data["init"]["regs"]["rsp"], 16)
    assert (rsp + 8) % 16 == 0  # as a CALL leaves it: the return address below a 16-byte aligned top
    stack = next(m for m in data["init"]["memory"] if m.get("name") == "stack")
    top = int(stack["addr"], 16) + len(stack["hex"]) // 2
    assert top == rsp + 8 and int(data["expect"]["regs"].get("rsp", hex(rsp)), 16) == rsp
    assert data["program"][0].startswith("amx_block_configured:")
    c = next(m for m in data["expect"]["memory"] if int(m["addr"], 16) == int(init["C"]["addr"], 16))
    got = np.frombuffer(bytes.fromhex(c["hex"]), dtype=np.int32).reshape(16, 16)
    assert (got == reference("amx_block", init)).all()
    code, out, err = isasim(capsys, "replay", str(trace))
    assert code == 0, out + err
    code, out, err = isasim(capsys, "diff", str(obj), "--function", "amx_block_configured", "--init",
                            str(init_path), "--against", "sim")
    assert code == 0 and "identical" in out, out + err


def test_a_function_by_its_mangled_demangled_or_full_name(objects, capsys):
    obj = str(objects["O2"])
    init = str(COMPILED / "bf16_block.init.json")
    outcomes = set()
    for name in ("bf16_block", "_Z10bf16_blockPKtS0_Pf", "bf16_block(unsigned short const*, unsigned short const*, "
                 "float*)"):
        code, out, err = isasim(capsys, "run", obj, "--function", name, "--init", init)
        outcomes.add((code, err))  # the messages name the function as c++filt writes it, however it was given
        assert "no function" not in err
    assert len(outcomes) == 1


def test_without_cxxfilt_the_mangled_name_still_works(objects, capsys, monkeypatch):
    import isasim.core.elf_file as elf_file

    monkeypatch.setattr(elf_file.shutil, "which", lambda _tool: None)
    obj, init = str(objects["O2"]), str(COMPILED / "bf16_block.init.json")
    code, out, err = isasim(capsys, "run", obj, "--function", "bf16_block", "--init", init)
    assert "no function 'bf16_block'" in one_line_error(code, err) and "_Z10bf16_blockPKtS0_Pf" in err
    code, out, err = isasim(capsys, "run", obj, "--function", "_Z10bf16_blockPKtS0_Pf", "--init", init)
    assert "no function" not in err


# ---- bad input: one line, exit 2 ------------------------------------------------------------------------


@pytest.mark.parametrize("build", BUILDS)
def test_a_function_that_calls_another_runs_it(objects, build, tmp_path, capsys):
    """amx_block_twice calls amx_block twice (CALL and RET on the simulated stack): both blocks of C are the
    INT64 product."""
    data = json.loads((COMPILED / "amx_block.init.json").read_text())
    c = next(m for m in data["memory"] if m["name"] == "C")
    c["shape"], c["size"] = [32, 16], 2 * c["size"]
    expected = data.pop("expect")["memory"][0]
    data["expect"] = {"memory": [{**expected, "values": expected["values"] * 2}]}
    init = tmp_path / "twice.init.json"
    init.write_text(json.dumps(data))
    code, out, err = isasim(capsys, "run", str(objects[build]), "--function", "amx_block_twice", "--init", str(init))
    assert code == 0 and "PASS" in out, out + err


def test_bad_input_is_one_line(objects, tmp_path, capsys):
    obj = str(objects["O2"])
    init = str(COMPILED / "amx_block_configured.init.json")
    code, _out, err = isasim(capsys, "run", obj, "--function", "no_such_kernel", "--init", init)
    line = one_line_error(code, err)
    assert "no function 'no_such_kernel'" in line and "amx_block_configured" in line
    code, _out, err = isasim(capsys, "run", obj, "--init", init)
    assert "name the function to run with --function" in one_line_error(code, err)
    code, _out, err = isasim(capsys, "run", str(ROOT / "examples/x86_amx/int8_block.s"), "--function", "amx_block")
    assert "--function names a function of an object file" in one_line_error(code, err)
    code, _out, err = isasim(capsys, "run", str(ROOT / "examples/x86_amx/int8_block.trace.json"),
                             "--function", "amx_block")
    assert "--function" in one_line_error(code, err)
    code, _out, err = isasim(capsys, "run", obj, "--function", "amx_block_configured", "--isa", "arm_sme")
    assert "an ELF file for x86-64, not AArch64" in one_line_error(code, err)  # --isa naming another ISA stands
    broken = tmp_path / "broken.o"
    broken.write_bytes(b"\x7fELF" + bytes(12))
    code, _out, err = isasim(capsys, "run", str(broken), "--function", "f")
    assert "not an ELF file isasim can read" in one_line_error(code, err)
    assert broken.read_bytes() == b"\x7fELF" + bytes(12)  # nothing the user gave is changed
    bad_args = tmp_path / "bad_args.json"
    data = json.loads(Path(init).read_text())
    data["args"] = ["tilecfg", "A", "no such region", "C"]
    bad_args.write_text(json.dumps(data))
    code, _out, err = isasim(capsys, "run", obj, "--function", "amx_block_configured", "--init", str(bad_args))
    line = one_line_error(code, err)
    assert "init.args[2]" in line and "'packed B'" in line
    data["args"] = [1, 2, 3, 4, 5, 6, 7]  # the seventh goes on isasim's stack, which an rsp of the init's is not
    data.setdefault("regs", {})["rsp"] = 0x7FFE0000
    bad_args.write_text(json.dumps(data))
    code, _out, err = isasim(capsys, "run", obj, "--function", "amx_block_configured", "--init", str(bad_args))
    assert "after the sixth go on isasim's stack" in one_line_error(code, err)
    code, _out, err = isasim(capsys, "run", str(ROOT / "examples/x86_amx/int8_block.s"), "--init", init)
    assert "init.args" in one_line_error(code, err)


def test_a_trace_with_args_is_refused(tmp_path, capsys):
    data = json.loads((ROOT / "examples/x86_amx/int8_block.trace.json").read_text())
    data["init"]["args"] = [1]
    path = tmp_path / "with_args.trace.json"
    path.write_text(json.dumps(data))
    code, _out, err = isasim(capsys, "replay", str(path))
    assert "init.args" in one_line_error(code, err)


def test_an_example_run_without_its_init_points_to_its_trace(capsys):
    code, out, err = isasim(capsys, "run", str(ROOT / "examples/x86_amx/int8_block.s"))
    assert code == 3
    hint = [line for line in out.splitlines() if "int8_block.trace.json" in line]
    assert len(hint) == 1 and "give --init" in hint[0], out


# ---- hand-written assembly: a .rodata relocation, a linked program, an undefined callee -----------------

HANDWRITTEN = """.intel_syntax noprefix
.section .rodata
.p2align 6
config:                       # palette 1, tiles 0-2 16 rows x 64 bytes
    .byte 1, 0
    .zero 14
    .short 64, 64, 64
    .zero 26
    .byte 16, 16, 16
    .zero 13
.text
.globl block
.type block, @function
block:
    mov rcx, OFFSET config    # R_X86_64_32S against .rodata
    ldtilecfg [rcx]
    mov eax, 64
    tilezero tmm0
    tileloadd tmm1, [rdi+rax*1]
    tileloadd tmm2, [rsi+rax*1]
    tdpbusd tmm0, tmm1, tmm2
    tilestored [rdx+rax*1], tmm0
    tilerelease
    ret
.size block, .-block
.globl twice
.type twice, @function
twice:
    call external_helper
    ret
.size twice, .-twice
"""


@pytest.fixture(scope="module")
def handwritten(tmp_path_factory) -> dict[str, Path]:
    if shutil.which("as") is None or shutil.which("ld") is None:
        pytest.skip("GNU as and ld (binutils) are not installed")
    where = tmp_path_factory.mktemp("handwritten")
    (where / "block.s").write_text(HANDWRITTEN)
    subprocess.run(["as", str(where / "block.s"), "-o", str(where / "block.o")], check=True, timeout=60)
    subprocess.run(["ld", "-e", "block", "--unresolved-symbols=ignore-all", str(where / "block.o"), "-o",
                    str(where / "block.elf")], check=True, timeout=60)
    return {"object": where / "block.o", "linked": where / "block.elf"}


@pytest.mark.parametrize("kind", ["object", "linked"])
def test_handwritten_block_reads_its_config_from_rodata(handwritten, kind, tmp_path, capsys):
    init_path = COMPILED / "amx_block.init.json"
    trace = tmp_path / "block.trace.json"
    code, out, err = isasim(capsys, "record", str(handwritten[kind]), "--function", "block", "--init",
                            str(init_path), "-o", str(trace))
    assert code == 0, err
    data = json.loads(trace.read_text())
    rodata = next(m for m in data["init"]["memory"] if m.get("name") == ".rodata")
    assert rodata["readonly"] is True and bytes.fromhex(rodata["hex"])[:1] == b"\x01"
    init = regions(init_path)
    c = next(m for m in data["expect"]["memory"] if int(m["addr"], 16) == int(init["C"]["addr"], 16))
    assert (np.frombuffer(bytes.fromhex(c["hex"]), dtype=np.int32).reshape(16, 16)
            == reference("amx_block", init)).all()
    code, out, err = isasim(capsys, "replay", str(trace))
    assert code == 0, out + err


def test_a_call_to_an_undefined_function_names_it(handwritten, capsys):
    code, _out, err = isasim(capsys, "run", str(handwritten["object"]), "--function", "twice")
    line = one_line_error(code, err)
    assert "'external_helper'" in line and "the instruction at 0x400000" in line
    code, _out, err = isasim(capsys, "run", str(handwritten["linked"]), "--function", "twice")
    assert "calls or uses code outside it" in one_line_error(code, err)


@pytest.mark.parametrize("readme", ["README.md", "examples/x86_amx/compiled/README.md"])
def test_the_readme_recipe_runs(objects, readme, tmp_path, capsys):
    """The two-line recipe: g++ as written (from the checkout's top, the object file in a temporary
    folder), then isasim as written."""
    import shlex

    text = (ROOT / readme).read_text()
    block = re.search(r"```bash\n(g\+\+ .*?)```", text, re.S).group(1)
    compile_line, run_line = [shlex.split(line) for line in block.strip().splitlines()]
    written = compile_line[compile_line.index("-o") + 1]
    assert written == run_line[2]  # isasim runs the object file the compiler wrote
    assert Path(written).is_absolute()  # a temporary folder's, never the checkout (it left kernels.o there)
    obj = tmp_path / "kernels.o"
    compile_line[compile_line.index("-o") + 1] = str(obj)
    done = subprocess.run(compile_line, cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    argv = [str(obj) if arg == written else str(ROOT / arg) if arg.startswith("examples/") else arg
            for arg in run_line[1:]]
    code, out, err = isasim(capsys, *argv)
    assert code == 0, err
    words = " ".join(out.split())
    assert "9 instructions on" in words
    assert "PASS: every expectation of" in words and "amx_block_configured.init.json holds" in words, out


@pytest.mark.parametrize("name", KERNELS)
def test_an_init_files_expectation_is_the_reference(name):
    """The C each init file expects (make_inits.py packs plain A and B, then multiplies them) is this test's
    reference (which unpacks the packed A and B the kernel reads): two directions through the layout."""
    data = json.loads((COMPILED / f"{name}.init.json").read_text())
    [expected] = data["expect"]["memory"]
    init = regions(COMPILED / f"{name}.init.json")
    assert int(expected["addr"], 16) == int(init["C"]["addr"], 16) and expected["type"] == init["C"]["type"]
    want = reference(name, init)
    assert np.array_equal(np.array(expected["values"], dtype=want.dtype).reshape(want.shape), want)


def test_run_checks_an_init_files_expectation(objects, tmp_path, capsys):
    """`run --init` with "expect" exits 1 on a wrong C, naming the element and both values; an init file
    without "expect" prints no verdict; a malformed "expect" is a one-line error."""
    obj = str(objects["O2"])
    data = json.loads((COMPILED / "amx_block.init.json").read_text())
    data["expect"]["memory"][0]["values"][16 * 2 + 5] += 1  # C[2][5]
    wrong = tmp_path / "wrong.init.json"
    wrong.write_text(json.dumps(data))
    code, out, err = isasim(capsys, "run", obj, "--function", "amx_block", "--init", str(wrong))
    words = " ".join(out.split())
    want = data["expect"]["memory"][0]["values"][16 * 2 + 5]
    assert code == 1 and "FAIL: expect.memory[0x10200000]" in words, out + err
    assert f"C[2][5] (int32): expected {want}, got {want - 1}" in words, out
    del data["expect"]
    plain = tmp_path / "plain.init.json"
    plain.write_text(json.dumps(data))
    code, out, err = isasim(capsys, "run", obj, "--function", "amx_block", "--init", str(plain))
    assert code == 0 and "PASS" not in out and "FAIL" not in out, out + err
    data["expect"] = {"memory": [{"addr": "0x10200000", "type": "int32"}]}
    plain.write_text(json.dumps(data))
    code, _out, err = isasim(capsys, "run", obj, "--function", "amx_block", "--init", str(plain))
    assert "expect.memory[0]" in one_line_error(code, err)
    data["expect"], data["producer"] = {"memory": []}, 7
    plain.write_text(json.dumps(data))
    code, _out, err = isasim(capsys, "run", obj, "--function", "amx_block", "--init", str(plain))
    assert "producer" in one_line_error(code, err)


def test_committed_init_files_are_what_make_inits_writes(tmp_path):
    done = subprocess.run([sys.executable, str(COMPILED / "make_inits.py"), str(tmp_path)], capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    made = sorted(p.name for p in tmp_path.iterdir())
    assert made == sorted(p.name for p in COMPILED.glob("*.init.json")) and len(made) == len(KERNELS)
    for name in made:
        assert (tmp_path / name).read_text() == (COMPILED / name).read_text(), f"{name} is stale: rerun make_inits.py"


@pytest.mark.needs_amx
@pytest.mark.parametrize("build", BUILDS)
def test_configured_block_on_silicon(objects, build, tmp_path, capsys):
    """On an AMX host the CPU runs the same bytes: its C is the INT64 product, and the simulator agrees
    with it instruction by instruction."""
    obj, init_path = objects[build], COMPILED / "amx_block_configured.init.json"
    trace = tmp_path / "silicon.trace.json"
    code, out, err = isasim(capsys, "record", str(obj), "--function", "amx_block_configured", "--init",
                            str(init_path), "--backend", "silicon", "-o", str(trace))
    assert code == 0, err
    init = regions(init_path)
    c = next(m for m in json.loads(trace.read_text())["expect"]["memory"]
             if int(m["addr"], 16) == int(init["C"]["addr"], 16))
    got = np.frombuffer(bytes.fromhex(c["hex"]), dtype=np.int32).reshape(16, 16)
    assert (got == reference("amx_block", init)).all()
    code, out, err = isasim(capsys, "diff", str(obj), "--function", "amx_block_configured", "--init", str(init_path),
                            "--lockstep")
    assert code == 0 and "identical" in out, out + err


# ---- explain an instruction of a compiled function ------------------------------------------------------


@pytest.mark.skipif(shutil.which("objdump") is None, reason="GNU objdump (binutils) is not installed")
def test_explain_an_instruction_of_a_compiled_function(objects, capsys):
    """`explain FILE.o --function NAME --at LOC` explains the bytes at LOC, an index or an address: the
    heading's mnemonic and the bytes shown are GNU objdump's for that place of the object file."""
    obj = objects["O2"]
    for at, index in (("1", 1), ("#5", 5), (hex(CODE_BASE), 0)):
        code, out, err = isasim(capsys, "explain", str(obj), "--function", "amx_block", "--at", at, "--no-color")
        assert code == 0, err
        heading = out.splitlines()[0]
        m = re.fullmatch(rf"{re.escape(str(obj))}: amx_block #{index} at (0x[0-9a-f]+): (\S+).*", heading)
        assert m, heading
        mnemonic, length = objdump_mnemonic(obj, "amx_block", int(m[1], 16) - CODE_BASE)
        assert m[2] == mnemonic, (heading, mnemonic)
        shown = re.search(r"^ bytes\s+((?:[0-9a-f]{2} ?)+)", out, re.M)
        assert shown and len(shown[1].split()) == length, out
    for argv, words in ((["--at", "99"], "there is no instruction #99"),
                        (["--at", hex(CODE_BASE + 1)], "no instruction starts"),
                        ([], "name the instruction of amx_block to explain with --at")):
        code, _out, err = isasim(capsys, "explain", str(obj), "--function", "amx_block", *argv)
        assert words in one_line_error(code, err)
    code, _out, err = isasim(capsys, "explain", str(obj))
    assert "name the function with --function" in one_line_error(code, err)
    code, _out, err = isasim(capsys, "explain", "tilezero tmm0", "--at", "3")
    assert "name an instruction of an object file" in one_line_error(code, err)


@pytest.mark.needs_binutils
def test_asm_lists_a_compiled_function_as_objdump_does(objects, capsys):
    """`isasim asm FILE.o --function NAME` lists the function as `run` loads it (it said "not a UTF-8 text
    file"); its mnemonics, in order, are GNU objdump's for the same function."""
    obj = str(objects["O2"])
    capsys.readouterr()
    assert cli.main(["asm", obj, "--function", "amx_block"]) == 0
    listing = capsys.readouterr().out
    ours = [_listed_mnemonic(line) for line in listing.splitlines() if re.match(r"\s+\d+\s+0x", line)]
    dump = subprocess.run(["objdump", "-d", "-M", "intel", "--no-show-raw-insn", "--disassemble=amx_block", obj],
                          capture_output=True, text=True, timeout=60).stdout
    theirs = [m.group(1) for m in re.finditer(r"^\s+[0-9a-f]+:\s+(?:(?:rep|lock|notrack|bnd)\s+)?([a-z0-9]+)",
                                              dump, re.M)]
    assert ours and ours == theirs
    assert cli.main(["asm", obj]) == 2 and "--function NAME" in capsys.readouterr().err


def _listed_mnemonic(line: str) -> str:
    """The mnemonic of a listing line: index, address, the bytes (pairs of hex digits), then the text."""
    words = line.split()[2:]
    while words and re.fullmatch(r"[0-9a-f]{2}", words[0]):
        words = words[1:]
    return words[0] if words[0] not in ("rep", "lock", "notrack", "bnd") else words[1]


def test_explain_at_of_a_file_that_is_not_an_object_names_it(tmp_path, capsys):
    damaged = tmp_path / "damaged.o"
    damaged.write_bytes(b"\x7fELG" + bytes(60))  # the magic lost
    code, _out, err = isasim(capsys, "explain", str(damaged), "--function", "f", "--at", "1")
    assert "damaged.o is not an ELF object file" in one_line_error(code, err)

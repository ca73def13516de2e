"""``isasim run|record|replay|diff [--lockstep]|explain|asm FILE.o --function NAME`` for AArch64 objects (issue 28):
the ISA comes from the ELF header (no --isa), init args become x0-x7 and the stack's, the relocations clang writes
are applied where isasim places the code and data (checked against capstone's reading of the relocated words), and
bad input is one line, exit 2: a file for another machine, no such function, a relocation isasim does not apply, a
symbol the file does not define, an instruction isasim does not decode (named by capstone).

The sources are small C functions in the project's own words, compiled at test time by zig's clang.
"""

from __future__ import annotations

import dataclasses
import json
import subprocess
from pathlib import Path

import pytest

from isasim import cli
from isasim.core.isa import get_isa
from isasim.core.trace import parse_init

HERE = Path(__file__).resolve().parent

SOURCES = {
    "calls_out.c": "extern void elsewhere(int *p);\nvoid needs_elsewhere(int *p) { elsewhere(p); }\n",
    "thread_local.c": "__thread int counter;\nint bump(void) { return ++counter; }\n",
    # at -O1 a tail call: B memset (JUMP26), so the built-in returns straight to the function's caller
    "tail_call.c": "#include <string.h>\nvoid *fill(void *p, unsigned long n) { return memset(p, 0x5a, n); }\n",
    # data reached by ADRP with ADD and with the LDST*_ABS_LO12_NC loads; a table of function pointers (ABS64 in
    # .data.rel.ro); a static helper called without a relocation at -O1; memset out of the object
    "with_data.c": """
#include <stdint.h>
#include <string.h>
static const uint64_t weights[4] = {3, 5, 7, 11};
static const uint16_t halves[4] = {100, 200, 300, 400};
uint32_t scale = 9;
typedef uint64_t (*step_fn)(uint64_t);
static uint64_t twice(uint64_t v) { return 2 * v; }
static uint64_t thrice(uint64_t v) { return 3 * v; }
step_fn const steps[2] = {twice, thrice};
uint64_t weighted(const uint8_t *v, uint64_t *scratch, uint64_t n) {
    memset(scratch, 0, n);
    uint64_t sum = 0;
    for (int i = 0; i < 4; i++) sum += weights[v[i] & 3] * v[i] + halves[v[i] & 3] + scale;
    return steps[v[0] & 1](sum);
}
""",
}


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


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> dict[str, Path]:
    from isasim.arm_sme.oracle.tools import clang_problem, find_zig, zig_env

    problem = clang_problem()
    if problem:
        pytest.skip(f"needs_clang: {problem}")
    zig, _ = find_zig()
    where = tmp_path_factory.mktemp("objects")
    out = {}
    jobs = [(name, level) for name in SOURCES for level in ("O1",)] + [("with_data.c", "O0"),
                                                                       ("../compiled/sme2_kernels.c", "O0")]
    for name, level in jobs:
        source = where / Path(name).name
        if name in SOURCES:
            source.write_text(SOURCES[name])
        else:
            source = HERE / Path(name).name
        obj = where / f"{source.stem}_{level}.o"
        done = subprocess.run([zig, "cc", "-target", "aarch64-linux-gnu", "-mcpu=generic+sme2", "-fno-sanitize=all",
                               f"-{level}", "-ftls-model=local-exec", "-c", str(source), "-o", str(obj)],
                              capture_output=True, text=True, env=zig_env(), timeout=300)
        assert done.returncode == 0, done.stderr
        out[f"{source.stem}_{level}"] = obj
    # a linked static program: the kernels with a main and the SME ABI routines as empty stand-ins (isasim's
    # built-ins run in their place, by name)
    (where / "main.c").write_text("int main(void) { return 0; }\n")
    (where / "abi.S").write_text("".join(f"\t.text\n\t.globl {name}\n\t.type {name}, %function\n{name}:\n\tret\n"
                                         for name in ("__arm_tpidr2_save", "__arm_tpidr2_restore",
                                                      "__arm_get_current_vg", "__arm_sme_state_size",
                                                      "__arm_sme_save", "__arm_sme_restore")))
    done = subprocess.run([zig, "cc", "-target", "aarch64-linux-musl", "-mcpu=generic+sme2", "-fno-sanitize=all",
                           "-O0", "-static", str(where / "main.c"), str(where / "abi.S"), str(HERE / "sme2_kernels.c"),
                           "-o", str(where / "linked")], capture_output=True, text=True, env=zig_env(), timeout=300)
    assert done.returncode == 0, done.stderr
    out["linked"] = where / "linked"
    return out


def init_file(tmp_path: Path, data: dict) -> str:
    path = tmp_path / "init.json"
    path.write_text(json.dumps(data))
    return str(path)


def umopa_init(tmp_path: Path) -> str:
    svlb = 512 // 8
    return init_file(tmp_path, {
        "regs": {"svcr": 3}, "args": ["a", "b", "c", 2],
        "memory": [{"name": "a", "addr": "0x1000000", "type": "uint8", "values": list(range(2 * svlb))},
                   {"name": "b", "addr": "0x2000000", "type": "uint8", "values": [1] * (2 * svlb)},
                   {"name": "c", "addr": "0x3000000", "type": "uint32", "values": [0] * (svlb // 4) ** 2,
                    "shape": [svlb // 4, svlb // 4]}]})


def test_isa_from_the_elf_header_run_record_replay(built, capsys, tmp_path):
    obj, init = str(built["sme2_kernels_O0"]), umopa_init(tmp_path)
    code, out, err = isasim(capsys, "run", obj, "--function", "umopa_tile", "--init", init, "--svl", "512")
    assert code == 0, err
    # c[i][j] = sum over the 2 blocks of a's bytes 4i..4i+3 times ones: 32 i + 268 (row 0: 268, row 15: 748)
    assert " 268 " in out and " 748 " in out
    trace = tmp_path / "umopa.trace.json"
    code, _out, err = isasim(capsys, "record", obj, "--function", "umopa_tile", "--init", init, "--svl", "512",
                             "-o", str(trace))
    assert code == 0, err
    data = json.loads(trace.read_text())
    assert data["isa"] == "arm_sme" and data["program"][0].startswith("umopa_tile:")
    code, _out, err = isasim(capsys, "replay", str(trace))  # the trace runs without the object
    assert code == 0, err
    code, out, err = isasim(capsys, "explain", obj, "--function", "umopa_tile", "--at", "0")
    assert code == 0, err
    assert "umopa_tile #0 at 0x10000" in out
    capsys.readouterr()
    code = cli.main(["asm", obj, "--function", "umopa_tile"])  # the listing of the loaded function
    assert code == 0 and "umopa_tile:" in capsys.readouterr().out


def test_the_example_passes(built, capsys):
    """examples/arm_sme/README.md's recipe: compile compiled/tile_kernels.c, run umopa_tile with its init file,
    whose expect is numpy's int64 tile: PASS."""
    from isasim.arm_sme.oracle.tools import find_zig, zig_env

    zig, _ = find_zig()
    example = HERE.parents[2] / "examples" / "arm_sme" / "compiled"
    obj = built["linked"].parent / "tiles.o"
    done = subprocess.run([zig, "cc", "-target", "aarch64-linux-gnu", "-mcpu=generic+sme2", "-fno-sanitize=all", "-O0",
                           "-c", str(example / "tile_kernels.c"), "-o", str(obj)], capture_output=True, text=True,
                          env=zig_env(), timeout=300)
    assert done.returncode == 0, done.stderr
    code, out, err = isasim(capsys, "run", str(obj), "--function", "umopa_tile", "--init",
                            str(example / "umopa_tile.init.json"))
    assert code == 0 and "PASS" in out, err + out[-500:]


def test_a_linked_program(built, capsys, tmp_path):
    """A function of a linked static program moves to CODE_BASE (its PC-relative words re-aimed, its data at
    the link addresses): the same tile as from the object."""
    code, out, err = isasim(capsys, "run", str(built["linked"]), "--function", "umopa_tile",
                            "--init", umopa_init(tmp_path), "--svl", "512")
    assert code == 0, err
    assert " 268 " in out and " 748 " in out


@pytest.mark.needs_qemu
def test_diff_against_qemu_final_and_lockstep(built, capsys, tmp_path):
    obj, init = str(built["sme2_kernels_O0"]), umopa_init(tmp_path)
    code, out, err = isasim(capsys, "diff", obj, "--function", "umopa_tile", "--init", init, "--svl", "128",
                            "--against", "qemu")
    assert code == 0, err + out
    assert "identical" in out
    code, out, err = isasim(capsys, "diff", obj, "--function", "umopa_tile", "--init", init, "--svl", "128",
                            "--against", "qemu", "--lockstep")
    assert code == 0 and "identical" in out and "lockstep" in out, err + out
    code, out, err = isasim(capsys, "diff", str(built["linked"]), "--function", "umopa_tile", "--init", init,
                            "--svl", "512", "--against", "qemu")
    assert code == 0 and "identical" in out, err + out


def test_relocations_reach_what_they_name(built):
    """Every ADRP+ADD / ADRP+LDR pair of the relocated code, as capstone reads it, reaches the section bytes its
    relocation names where isasim mapped them (-fPIC: through the GOT, whose slots hold the data's and the
    functions' placed addresses); the calls of memset land on the built-in's word, the static helpers are placed.
    (Relocation only: the run itself waits for base forms, see test_compiled_kernels.)"""
    import capstone

    from isasim.arm_sme.elf import _relocated
    from isasim.core.elf_file import EM_AARCH64, read_elf

    for key in ("with_data_O1", "with_data_O0"):
        elf = read_elf(str(built[key]), EM_AARCH64)
        symbol, name = elf.find_function("weighted")
        code, regions, views, layout = _relocated(elf, symbol, name)
        assert layout.builtins == ["memset"] and len(layout.functions) == 3  # weighted, twice, thrice

        def read(address: int, size: int) -> bytes:
            for start, data, _w in regions:
                if start <= address and address + size <= start + len(data):
                    return data[address - start:address - start + size]
            raise AssertionError(f"{address:#x} is not mapped ({key})")

        md = capstone.Cs(capstone.CS_ARCH_AARCH64, capstone.CS_MODE_ARM)
        pages, reached = {}, []
        for ins in md.disasm(code, 0x10000):
            operands = [p.strip(" []!") for p in ins.op_str.split(",")]
            if ins.mnemonic == "adrp":
                pages[operands[0]] = int(operands[1].lstrip("#"), 16)
            elif ins.mnemonic == "bl":
                assert int(operands[0].lstrip("#"), 16) in (layout.builtin_address("memset"),
                                                            *(f.address for f in layout.functions)), ins
            elif len(operands) >= 2 and operands[1] in pages:  # add xd, xn, #lo12 / ldr xt, [xn{, #lo12}]
                offset = operands[2] if len(operands) > 2 else "#0"
                if offset.startswith("#"):
                    reached.append(pages[operands[1]] + int(offset.lstrip("#"), 0))
        # through the GOT (a slot holding the address) or straight at the data
        targets = set(reached) | {int.from_bytes(read(a, 8), "little") for a in reached
                                  if any(v.name == "GOT" and v.address <= a < v.address + 8 * v.shape[1]
                                         for v in views)}
        found = {value: any(read(t, size) == value.to_bytes(size, "little") for t in targets
                            if _mapped(regions, t, size))
                 for value, size in ((3, 8), (100, 2), (9, 4))}
        assert all(found.values()), (key, found)
        functions = {f.address for f in layout.functions}
        assert any(_mapped(regions, t, 16) and {int.from_bytes(read(t + 8 * i, 8), "little") for i in range(2)}
                   <= functions for t in targets), key  # the table of function pointers holds placed functions


def _mapped(regions, address: int, size: int) -> bool:
    return any(start <= address and address + size <= start + len(data) for start, data, _w in regions)


def test_bad_input_is_one_line(built, capsys, tmp_path):
    init = init_file(tmp_path, {"args": [0]})
    code, _out, err = isasim(capsys, "run", str(built["calls_out_O1"]), "--function", "needs_elsewhere", "--init", init)
    line = one_line_error(code, err)
    assert "'elsewhere'" in line and "neither in this file nor an isasim built-in" in line
    code, _out, err = isasim(capsys, "run", str(built["calls_out_O1"]), "--function", "no_such", "--init", init)
    assert "no_such" in one_line_error(code, err)
    code, _out, err = isasim(capsys, "run", str(built["thread_local_O1"]), "--function", "bump", "--init", init)
    line = one_line_error(code, err)
    assert "relocation type" in line and "is not supported" in line
    riscv = tmp_path / "riscv.o"  # an ELF header for RISC-V: no ISA of isasim loads it
    header = bytearray(built["calls_out_O1"].read_bytes())
    header[18:20] = (243).to_bytes(2, "little")
    riscv.write_bytes(bytes(header))
    code, _out, err = isasim(capsys, "run", str(riscv), "--function", "needs_elsewhere", "--init", init)
    assert "an ELF file for RISC-V" in one_line_error(code, err)
    code, _out, err = isasim(capsys, "run", str(built["calls_out_O1"]), "--function", "needs_elsewhere",
                             "--init", init, "--isa", "ascend_cube")  # an --isa naming another ISA stands
    assert "cannot load one for ascend_cube" in one_line_error(code, err)
    both = init_file(tmp_path, {"args": [0, 0, 0], "regs": {"x0": 1}})
    code, _out, err = isasim(capsys, "run", str(built["with_data_O1"]), "--function", "weighted", "--init", both)
    assert "init.args gives x0 and so does init.regs.x0" in one_line_error(code, err)


@pytest.mark.needs_qemu
@pytest.mark.parametrize("svl", (128, 512, 2048))
def test_a_fault_compares_with_the_state_qemu_saw(built, capsys, tmp_path, svl):
    """umopa_tile storing its tile to an address no region maps: both stop at the same ST1W with TRANSLATION,
    and the state QEMU's signal frame holds (registers, NZCV, streaming mode and ZA on, Z, P, ZA with the tile,
    ZT0, TPIDR2_EL0) and the memory equal isasim's."""
    svlb = svl // 8
    init = init_file(tmp_path, {
        "regs": {"svcr": 3}, "args": ["a", "b", 0x5000000, 2],
        "memory": [{"name": "a", "addr": "0x1000000", "type": "uint8", "values": [n % 256 for n in range(2 * svlb)]},
                   {"name": "b", "addr": "0x2000000", "type": "uint8", "values": [3] * (2 * svlb)}]})
    code, out, err = isasim(capsys, "diff", str(built["sme2_kernels_O0"]), "--function", "umopa_tile", "--init", init,
                            "--svl", str(svl), "--against", "qemu")
    assert code == 0 and "identical" in out, err + out
    code, out, err = isasim(capsys, "run", str(built["sme2_kernels_O0"]), "--function", "umopa_tile", "--init", init,
                            "--svl", str(svl))
    assert "TRANSLATION" in out + err and "st1w" in out + err


def test_arguments_stack_and_return_address(built):
    """Ten arguments: x0-x7, then [sp] and [sp+8] (AAPCS64), sp 16-byte aligned on isasim's stack; x30 the address
    just past the code (the built-ins included), where the function's RET ends the run."""
    isa = get_isa("arm_sme")
    args = [0x1000 + n for n in range(10)]
    program, init = isa.load_object(str(built["with_data_O0"]), "weighted", parse_init({"args": args}))
    regs = init.regs
    assert [regs[f"x{n}"] for n in range(8)] == args[:8]
    assert regs["sp"] % 16 == 0 and regs["x30"] == program.end
    stack = next(data for address, data, _w in init.memory if address <= regs["sp"] < address + len(data)
                 and address + len(data) >= regs["sp"] + 16)
    base = next(address for address, data, _w in init.memory if data is stack)
    offset = regs["sp"] - base
    assert [int.from_bytes(stack[offset + 8 * n:offset + 8 * n + 8], "little") for n in range(2)] == args[8:]
    assert program.instructions[-1].text == "memset" and program.labels["memset"] == program.instructions[-1].address


def test_an_undecodable_word_is_named_with_or_without_capstone(monkeypatch):
    from isasim.arm_sme import elf

    word = 0x4E20D400  # fadd v0.4s, v0.4s, v0.4s: a NEON form isasim does not decode
    found = elf.unsupported(word.to_bytes(4, "little"), 0x10000)
    assert found[0][:3] == (0x10000, word, "fadd")
    monkeypatch.setitem(__import__("sys").modules, "capstone", None)  # as if capstone were not installed
    found = elf.unsupported(word.to_bytes(4, "little"), 0x10000)
    assert found[0][2] == ".inst 0x4e20d400"


HAND_WRITTEN = ("udot_gemm", "udot16_gemm", "umopa_gemm", "udot_indexed_gemm", "smopa_gemm")


@pytest.mark.parametrize("name", HAND_WRITTEN)
def test_hand_written_kernels_assembled_by_clang(built, name, tmp_path):
    """The hand-written SME2 kernels of examples/arm_sme (SMSTART and SMSTOP of their own, a RET at the end), given a
    global symbol and assembled by clang into an object, run from it to the C their traces expect (an INT64
    reference), and QEMU running the object's words agrees."""
    from isasim.arm_sme.oracle.tools import find_zig, qemu_problem, zig_env
    from isasim.core.diff import diff
    from isasim.core.machine import Machine
    from isasim.core.trace import parse_expect

    example = HERE.parents[2] / "examples" / "arm_sme"
    trace = json.loads((example / f"{name}.trace.json").read_text())
    source = tmp_path / f"{name}.S"
    source.write_text(f"\t.text\n\t.globl {name}\n\t.type {name}, %function\n{name}:\n"
                      + (example / f"{name}.s").read_text() + f"\n\t.size {name}, . - {name}\n")
    zig, _ = find_zig()
    obj = tmp_path / f"{name}.o"
    done = subprocess.run([zig, "cc", "-target", "aarch64-linux-gnu", "-mcpu=generic+sme2+sme_i16i64", "-c",
                           str(source), "-o", str(obj)], capture_output=True, text=True, env=zig_env(), timeout=300)
    assert done.returncode == 0, done.stderr
    isa = get_isa("arm_sme")
    config = isa.configure(trace["config"])
    program, init = isa.load_object(str(obj), name, parse_init(trace["init"]))
    machine = Machine("arm_sme", config)
    machine.load_init(program, init)
    result = machine.run(1_000_000)
    assert result.fault is None and machine.halted
    for address, data in parse_expect(trace["expect"])["memory"]:
        assert machine.memory.read(address, len(data)) == data
    if qemu_problem() is None:
        report = diff("arm_sme", config, program, init, a="sim", b="qemu", max_steps=1_000_000)
        assert report.divergence is None, report.divergence.describe("sim", "qemu")


def test_a_damaged_object_is_refused_in_one_line(built, tmp_path):
    """Structure-aware mutants of an AArch64 object (tests/elf_mutations.py: one field at a time to hostile values,
    cuts, broken string tables), every 40th of them: each loads or is refused with one IsasimError line, never
    another exception.  (All 17,284 of this object's mutants were run once while writing the loader: 0 others.)"""
    from elf_mutations import mutants  # tests/ is on pytest's path (pyproject.toml)

    from isasim.core.errors import IsasimError

    isa = get_isa("arm_sme")
    path = tmp_path / "damaged.o"
    tried = 0
    for n, mutant in enumerate(mutants(built["sme2_kernels_O0"].read_bytes())):
        if n % 40:
            continue
        tried += 1
        path.write_bytes(mutant.data)
        try:
            isa.load_object(str(path), "tile_then_call", parse_init({"args": [1, 2, 3, 4, 5]}))
        except IsasimError as error:
            assert "\n" not in str(error), mutant.what
    assert tried > 100


def test_a_tail_call_of_a_builtin(built, capsys, tmp_path):
    """fill's B memset (JUMP26): the built-in's RET to x30 is the end of the run; QEMU agrees."""
    from isasim.arm_sme.oracle.tools import qemu_problem

    program, _init = get_isa("arm_sme").load_object(str(built["tail_call_O1"]), "fill", parse_init({"args": [1, 2]}))
    assert program.instructions[-2].text.startswith("b ") and program.instructions[-1].text == "memset"
    init = init_file(tmp_path, {"args": ["buf", 37], "memory": [{"name": "buf", "addr": "0x1000000", "size": 64}],
                                "expect": {"memory": [{"addr": "0x1000000", "hex": "5a" * 37 + "00" * 27}]}})
    code, out, err = isasim(capsys, "run", str(built["tail_call_O1"]), "--function", "fill", "--init", init)
    assert code == 0 and "PASS" in out, err + out
    if qemu_problem() is None:
        code, out, err = isasim(capsys, "diff", str(built["tail_call_O1"]), "--function", "fill", "--init", init,
                                "--against", "qemu")
        assert code == 0 and "identical" in out, err + out


def tile_then_call_init(tmp_path: Path) -> str:
    svlb, k4 = 512 // 8, 2  # sized for SVL 512, so every SVL up to it reads inside the regions
    return init_file(tmp_path, {
        "regs": {"svcr": 3}, "args": ["a", "b", "c", k4, "w"],
        "memory": [{"name": "a", "addr": "0x1000000", "type": "uint8", "values": [n % 251 for n in range(k4 * svlb)]},
                   {"name": "b", "addr": "0x2000000", "type": "uint8", "values": [1 + n % 7 for n in range(k4 * svlb)]},
                   {"name": "c", "addr": "0x3000000", "type": "uint32", "values": [0] * (svlb // 4) ** 2},
                   {"name": "w", "addr": "0x4000000", "type": "uint32", "values": [0] * (svlb // 4)}]})


@pytest.mark.needs_qemu
@pytest.mark.parametrize("svl", (128, 512))
def test_lockstep_against_qemu(built, capsys, tmp_path, svl):
    """diff --lockstep of a compiled function: the object harness traps before every instruction (each word a BRK,
    run out of line or, where it reads the pc, by the handler), so QEMU's state after every step is compared:
    tile_then_call's calls, its lazy save through the built-ins and its SMSTOP/SMSTART agree step by step."""
    code, out, err = isasim(capsys, "diff", str(built["sme2_kernels_O0"]), "--function", "tile_then_call", "--init",
                            tile_then_call_init(tmp_path), "--svl", str(svl), "--against", "qemu", "--lockstep")
    assert code == 0 and "identical" in out and "lockstep" in out, err + out


@pytest.mark.needs_qemu
def test_lockstep_finds_a_planted_builtin_bug_at_its_step(built, tmp_path, monkeypatch):
    from isasim.arm_sme.forms.builtins import BUILTINS
    from isasim.arm_sme.semantics import builtins as semantics
    from isasim.core.diff import diff
    from isasim.core.trace import load_json

    def clobbers_x12(cpu):
        back = semantics.tpidr2_save(cpu)
        cpu.set_X(12, 7)
        return back

    monkeypatch.setitem(BUILTINS, "__arm_tpidr2_save", dataclasses.replace(BUILTINS["__arm_tpidr2_save"],
                                                                           execute=clobbers_x12))
    isa = get_isa("arm_sme")
    program, init = isa.load_object(str(built["sme2_kernels_O0"]), "tile_then_call",
                                    parse_init(load_json(tile_then_call_init(tmp_path))))
    report = diff("arm_sme", isa.configure({"svl": 512}), program, init, a="sim", b="qemu", mode="lockstep")
    assert report.divergence is not None and report.divergence.where == "x12"
    assert report.divergence.instruction.text == "__arm_tpidr2_save"

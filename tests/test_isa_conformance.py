"""ISA conformance: what every registered ISA must do, checked the same way for each.

The subjects are every ISA of the registry (``KNOWN_ISAS``) plus the throwaway toy ISA
written inside the tests (``toy_isa``: text only, no binary encoding) and its encoded
twin (``toy_isa.encoded``, "toy32").  The toys are registered with one line each, by
monkeypatching the registry, and nothing in ``isasim/`` knows them: if a test here
passes for the toys, adding an ISA really is a package and a registry line.

Each subject brings its own test data (:data:`SAMPLES`): a small program and its initial
state, the names of one register and one array to print, watch and corrupt, a program
that faults, and lines that must be refused.  Everything runs through the command line
in-process (``cli.main``), as a user would run it.
"""

from __future__ import annotations

import io
import json
import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass, replace
from pathlib import Path

import pytest
from rich.console import Console

from cli_harness import error_line
from isasim import cli
from isasim.core.backends import Outcome
from isasim.core.isa import KNOWN_ISAS, get_isa
from isasim.core.replay import check
from isasim.core.stepper import Stepper
from isasim.core.trace import parse_init, parse_trace, read_trace, trace_json
from isasim.docs import check_docs

ROOT = Path(__file__).resolve().parents[1]

# the ISAs written inside the tests: name -> the module defining ISA (tests/ is on sys.path)
TEST_ISAS = {"toy": "toy_isa", "toy32": "toy_isa.encoded"}


@pytest.fixture(autouse=True)
def toy_isas(monkeypatch):
    """The test ISAs in the registry, as a real ISA package would be: one line each.  (And a wide
    console, so that no message is wrapped in the middle of a path.)"""
    for name, module in TEST_ISAS.items():
        monkeypatch.setitem(KNOWN_ISAS, name, module)
    monkeypatch.setenv("COLUMNS", "400")


# ---- each subject's test data ------------------------------------------------------------------


@dataclass
class Sample:
    program: str  # assembly text
    init: dict  # an init file's contents
    register: str  # a register the program changes
    array: str  # an array the state holds at the end, which the program changes
    faulting: str  # a program whose run raises the ISA's memory fault
    fault_kind: str  # ... which the ISA names so
    bad_mnemonic: str  # a line with no such instruction
    bad_register: str  # a line naming a register that does not exist
    bad_register_word: str  # what the error must quote
    explain: str  # one instruction to explain
    show: str  # a --show view of the array
    text_only: bool = False  # the ISA has no binary encoding (Instruction.encoding None)
    undefined: str | None = None  # (encoded ISAs) a line of bytes that decode but are undefined to execute
    undefined_kind: str = ""  # ... the fault that raises
    undefined_spelling: str = ""  # ... and another way a trace may write that kind


def _x86_tilecfg(shapes: dict[int, tuple[int, int]]) -> str:
    """A palette-1 TILECFG image (64 bytes, hex) giving tile t rows x colsb bytes, as LDTILECFG reads it:
    byte 0 the palette, bytes 16+2t the colsb (16 bits), byte 48+t the rows."""
    image = bytearray(64)
    image[0] = 1
    for t, (rows, colsb) in shapes.items():
        image[16 + 2 * t : 18 + 2 * t] = colsb.to_bytes(2, "little")
        image[48 + t] = rows
    return image.hex()


def _samples() -> dict[str, Sample]:
    from toy_isa import samples as toy

    toy_sample = Sample(toy.PROGRAM, toy.INIT, "r1", "acc", toy.FAULTING, "MEMFAULT",
                        "frobnicate r1, r2", "li r7, 1", "r7", "mac acc[1], r2, r3", "acc:uint8", text_only=True)
    x86 = Sample(
        program=""".intel_syntax noprefix
    mov r8, 64                      # the row stride of A, B and C
    tileloadd tmm1, [rdi+r8*1]      # A: 2 rows x 8 uint8
    tileloadd tmm2, [rsi+r8*1]      # B: 2 rows x 8 int8 (four K values per dword)
    mov rcx, 2
again:
    tdpbusd tmm0, tmm1, tmm2        # twice, so C = 2 x A.B (a loop and deferred products)
    sub rcx, 1
    jnz again
    tilestored [rdx+r8*1], tmm0
    add rax, 3
    ret
""",
        init={"regs": {"rdi": "0x100000", "rsi": "0x200000", "rdx": "0x300000", "rax": "0x10"},
              "memory": [{"addr": "0x100000", "hex": bytes((7 * i + 3) % 256 for i in range(128)).hex()},
                         {"addr": "0x200000", "hex": bytes((5 * i + 250) % 256 for i in range(128)).hex()},
                         {"name": "C", "addr": "0x300000", "type": "int32", "shape": [2, 16], "size": 128}],
              "arrays": {"tilecfg": _x86_tilecfg({0: (2, 8), 1: (2, 8), 2: (2, 8)})}},
        register="rax", array="tmm0",
        faulting=".intel_syntax noprefix\n    mov rbx, 0x9000\n    mov rax, [rbx]\n    ret\n", fault_kind="#PF",
        bad_mnemonic="frobnicate rax, 1", bad_register="tdpbusd tmm9, tmm1, tmm2", bad_register_word="tmm9",
        explain="tdpbusd tmm0, tmm1, tmm2", show="tmm0:int8",
        undefined=".byte 0xc4,0xe2,0x78,0x49,0xc1", undefined_kind="#UD", undefined_spelling="UD")
    toy32 = replace(toy_sample, text_only=False, undefined=".byte 0x06,0x07,0x01,0x01,0,0,0,0", undefined_kind="UNDEFINED",
                    undefined_spelling="undefined")
    arm_sme = Sample(
        program="""        mov x8, #3                          // w8 selects the ZA vector group
        mov x2, #2
again:
        udot za.s[w8, 1, vgx2], {z0.b-z1.b}, z4.b   // twice: ZA[4], ZA[36] += 2 x (Zn . Z4), 4-way
        subs x2, x2, #1
        cbnz x2, again
        ldr x5, [x0]
        add x5, x5, #7
        str x5, [x0, #8]
        ret
""",
        init={"regs": {"x0": "0x20000", "svcr": "0x3"},  # streaming mode and ZA on from the start
              "memory": [{"name": "M", "addr": "0x20000", "type": "int64", "shape": [1, 2], "values": [40, 0]}],
              "arrays": {"z0": bytes((3 * i + 1) % 256 for i in range(64)).hex(),
                         "z1": bytes((5 * i + 2) % 256 for i in range(64)).hex(),
                         "z4": bytes((7 * i + 250) % 256 for i in range(64)).hex()}},
        register="x5", array="za",
        faulting="        mov x1, #0x9000\n        ldr x0, [x1]\n        ret\n", fault_kind="TRANSLATION",
        bad_mnemonic="frobnicate x0, x1", bad_register="udot za.s[w12, 0, vgx4], {z0.b-z3.b}, z4.b",
        bad_register_word="w12", explain="udot za.s[w8, 1, vgx2], {z0.b-z1.b}, z4.b", show="za:int32",
        undefined=".byte 0x03,0x00,0x00,0x00", undefined_kind="UNDEFINED", undefined_spelling="undefined")
    ascend_cube = Sample(  # text only: A (16 x 32 int8, Zz) and B (32 x 16, Zn) to L1, L0A, L0B; C = A.B into L0C
        program="""DataCopy(dst=L1[0], src=GM[0x10000], blockCount=2, blockLen=8, srcStride=0, dstStride=0)
DataCopy(dst=L1[512], src=GM[0x10200], blockLen=16)
SetFlag(event=MTE2_MTE1, id=0)                      # the pipes run in parallel: each waits for the one it reads
WaitFlag(event=MTE2_MTE1, id=0)
LoadData(dst=L0A[0], src=L1[0], dtype=int8)
LoadData(dst=L0B[0], src=L1[512], dtype=int8)
SetFlag(event=MTE1_M, id=0)
WaitFlag(event=MTE1_M, id=0)
SetFixpipePreQuantFlag(config=0x400000000000)      # a register the program changes
Mmad(c=L0C[0], a=L0A[0], b=L0B[0], aType=int8, bType=int8, m=16, n=16, k=32)
Mmad(c=L0C[0], a=L0A[0], b=L0B[0], aType=int8, bType=int8, m=16, n=16, k=32, cmatrixInitVal=false)
SetFlag(event=M_FIX, id=0)
WaitFlag(event=M_FIX, id=0)
Fixpipe(dst=GM[0x20000], src=L0C[0], srcType=int32, dstType=int32, nSize=16, mSize=16, srcStride=16, dstStride=16)
""",
        init={"memory": [{"addr": "0x10000", "hex": bytes((7 * i + 3) % 256 for i in range(1024)).hex()},
                         {"name": "C", "addr": "0x20000", "type": "int32", "shape": [16, 16], "size": 1024}]},
        register="quant_pre", array="l0a",
        faulting="SetAtomicNone()\nDataCopy(dst=L1[0], src=GM[0x9000], blockLen=1)\n", fault_kind="GM_FAULT",
        bad_mnemonic="Frobnicate (dst=L1[0])", bad_register="LoadData(dst=L0X[0], src=L1[0], dtype=int8)",
        bad_register_word="L0X", explain="Mmad(c=L0C[0], a=L0A[0], b=L0B[0], aType=int8, bType=int8, m=16, n=16, k=32)",
        show="l0c:int32", text_only=True)
    return {"x86_amx": x86, "toy": toy_sample, "toy32": toy32, "arm_sme": arm_sme, "ascend_cube": ascend_cube}


SAMPLES = _samples()
SUBJECTS = sorted(set(KNOWN_ISAS) | set(TEST_ISAS))  # every registered ISA, and the test ISAs
ENCODED = [name for name in SUBJECTS if name in SAMPLES and not SAMPLES[name].text_only]  # with a binary encoding


def test_every_registered_isa_has_test_data():
    missing = [name for name in KNOWN_ISAS if name not in SAMPLES]
    assert not missing, f"add conformance test data (SAMPLES) for {missing}"


@pytest.fixture(params=SUBJECTS)
def subject(request, tmp_path):
    """(ISA name, its sample, the sample's program file, its init file) in a fresh folder."""
    name = request.param
    sample = SAMPLES.get(name)
    if sample is None:
        pytest.fail(f"{name} is registered but has no conformance test data: add it to SAMPLES")
    program, init = tmp_path / "program.s", tmp_path / "init.json"
    program.write_text(sample.program)
    init.write_text(json.dumps(sample.init))
    return name, sample, program, init


def run_cli(capsys, *argv) -> tuple[int, str, str]:
    code = cli.main([str(a) for a in argv])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def program_lines(isa, program) -> list[str]:
    """A program as a trace's lines (what ``isasim record`` writes): each instruction's source line,
    after its label if it has one."""
    lines = []
    for ins in program.instructions:
        line = isa.source_line(ins)
        label = program.label_at(ins.address)
        lines.append(f"{label}: {line}" if label else line)
    return lines


def same_instructions(a, b) -> None:
    assert len(a.instructions) == len(b.instructions)
    for x, y in zip(a.instructions, b.instructions):
        assert (x.form.id, x.operands, x.address, x.encoding, x.size, x.text) == \
               (y.form.id, y.operands, y.address, y.encoding, y.size, y.text), (x.text, y.text)


# ---- programs: text and bytes round trips ----------------------------------------------------------


@pytest.mark.consistency
def test_assemble_print_assemble_gives_the_same_program(subject):
    name, sample, _program, _init = subject
    isa = get_isa(name)
    first = isa.assemble(sample.program, source="sample.s")
    again = isa.assemble("\n".join(program_lines(isa, first)), source="again.s")
    same_instructions(first, again)
    assert first.labels == again.labels
    for ins in first.instructions:  # every form is a core Form
        assert ins.form.id and ins.form.mnemonic and ins.form.syntax and ins.form.summary


@pytest.mark.consistency
@pytest.mark.parametrize("name", ENCODED)
def test_disassemble_of_the_assembled_bytes_gives_the_program_back(name):
    isa = get_isa(name)
    program = isa.assemble(SAMPLES[name].program, source="sample.s")
    assert program.has_encoding
    decoded = isa.disassemble(program.code, base=program.base)
    assert [(i.address, i.encoding, i.form.id) for i in decoded.instructions] == \
           [(i.address, i.encoding, i.form.id) for i in program.instructions]
    assert isa.assemble("\n".join(i.text for i in decoded.instructions)).code == program.code


def test_a_text_only_isa_says_it_has_no_bytes(capsys, tmp_path):
    program = tmp_path / "p.s"
    program.write_text(SAMPLES["toy"].program)
    parsed = get_isa("toy").assemble(SAMPLES["toy"].program)
    assert not parsed.has_encoding and all(i.encoding is None and i.size == 1 for i in parsed.instructions)
    code, out, _err = run_cli(capsys, "asm", program, "--isa", "toy")
    assert code == 0 and "no binary encoding" in out and "mac acc[0], r1, r1" in out
    error_line(capsys, ["asm", program, "--isa", "toy", "--hex"], str(program), "no binary encoding")


def test_disasm_lists_an_encoded_test_isa(capsys):
    code = get_isa("toy32").assemble("li r1, 5\nhalt").code
    status, out, _err = run_cli(capsys, "disasm", code.hex(), "--isa", "toy32")
    assert status == 0 and "li r1, 5" in out and "halt" in out
    error_line(capsys, ["disasm", "ff" * 8, "--isa", "toy32"], "cannot decode")
    status, out, _err = run_cli(capsys, "disasm", "0607010100000000", "--isa", "toy32")
    assert status == 0 and "mac acc[7], r1, r1" in out and "UNDEFINED: acc[7]" in out


# ---- traces: record, read back, replay, corrupt -------------------------------------------------------


def record(capsys, name, program, init, out, *extra) -> dict:
    code, stdout, err = run_cli(capsys, "record", program, "--init", init, "--isa", name, "-o", out, *extra)
    assert code == 0, err
    assert f"wrote {out}" in stdout
    return json.loads(Path(out).read_text())


@pytest.mark.consistency
def test_trace_records_reads_back_and_replays(subject, capsys, tmp_path):
    name, sample, program, init = subject
    trace_file = tmp_path / "sample.trace.json"
    written = record(capsys, name, program, init, trace_file, "--steps")
    assert written["isa"] == name and written["format"] == "isasim-trace/2"
    trace = read_trace(trace_file)
    assert trace_json(trace) == written  # what is read is what was written
    assert sample.array in trace.expect["arrays"] and sample.register in trace.expect["regs"]
    code, out, err = run_cli(capsys, "replay", trace_file, "--no-color")
    assert code == 0, out + err
    assert out.startswith("ok ")
    code, out, _err = run_cli(capsys, "run", trace_file, "--no-color")
    assert code == 0 and "PASS" in out


def test_a_corrupted_trace_reports_exactly_what_was_corrupted(subject, capsys, tmp_path):
    name, sample, program, init = subject
    written = record(capsys, name, program, init, tmp_path / "good.trace.json")
    expect = written["expect"]
    data = bytearray.fromhex(expect["arrays"][sample.array])
    data[5] ^= 0x40
    expect["arrays"][sample.array] = data.hex()
    expect["regs"][sample.register] = hex(int(expect["regs"][sample.register], 16) ^ 0x100)
    bad = tmp_path / "bad.trace.json"
    bad.write_text(json.dumps(written))
    code, out, _err = run_cli(capsys, "replay", bad, "--no-color")
    assert code == 1, out
    reported = [line for line in out.splitlines() if line.strip()]
    assert len(reported) == 2, out  # "DIFFERENT file: first", then the second, and nothing else
    assert reported[0].startswith(f"DIFFERENT {bad}: ")
    assert f"expect.regs.{sample.register}:" in out
    assert re.search(rf"expect\.arrays\.{sample.array}\b", out)


def test_a_fault_is_the_isas_own_and_recorded_as_such(subject, capsys, tmp_path):
    name, sample, _program, init = subject
    faulting = tmp_path / "fault.s"
    faulting.write_text(sample.faulting)
    code, out, _err = run_cli(capsys, "run", faulting, "--isa", name, "--no-color")
    assert code == 3 and f"fault {sample.fault_kind}" in out
    written = record(capsys, name, faulting, init, tmp_path / "fault.trace.json")
    assert written["expect"]["fault"] == {"kind": sample.fault_kind, "index": 1}
    assert run_cli(capsys, "replay", tmp_path / "fault.trace.json")[0] == 0


@pytest.mark.parametrize("name", ENCODED)
def test_an_undefined_encoding_decodes_faults_when_run_and_records_as_bytes(name, capsys, tmp_path):
    sample = SAMPLES[name]
    head = sample.program.splitlines()[0] + "\n"  # x86's .intel_syntax line, or the toy's first instruction
    program, init = tmp_path / "undefined.s", tmp_path / "init.json"
    program.write_text(head + sample.undefined + "\n")
    init.write_text(json.dumps(sample.init))
    code, out, _err = run_cli(capsys, "run", program, "--init", init, "--isa", name, "--no-color")
    assert code == 3 and f"fault {sample.undefined_kind}" in out
    written = record(capsys, name, program, init, tmp_path / "u.trace.json", "--steps")
    assert written["expect"]["fault"]["kind"] == sample.undefined_kind
    assert any(line.startswith(".byte") for line in written["program"])  # no text assembles to it
    written["expect"]["fault"]["kind"] = sample.undefined_spelling  # the ISA's fault_kind reads it too
    respelled = tmp_path / "respelled.trace.json"
    respelled.write_text(json.dumps(written))
    code, out, _err = run_cli(capsys, "replay", respelled, "--no-color")
    assert code == 0, out
    code, out, _err = run_cli(capsys, "replay", tmp_path / "u.trace.json", "--no-color")
    assert code == 0, out


# ---- run, step and diff agree -----------------------------------------------------------------------


@pytest.mark.consistency
def test_run_and_step_reach_the_same_state(subject, capsys, tmp_path):
    """`isasim record` runs the program as `isasim run` does (no records kept: the fast path); the stepper,
    one recorded step at a time, must end where that run's trace says."""
    name, sample, program, init = subject
    trace_file = tmp_path / "run.trace.json"
    record(capsys, name, program, init, trace_file)
    trace = read_trace(trace_file)
    code, out, err = run_cli(capsys, "step", program, "--init", init, "--isa", name, "--no-color",
                             "--commands", "s 100")
    assert code == 0, err
    assert "the program has ended" in out
    isa = get_isa(name)
    stepper = Stepper(name, trace.config, isa.assemble(sample.program), parse_init(sample.init),
                      out=Console(file=io.StringIO(), width=100))
    assert stepper.run_script("s 100") is None
    machine = stepper.machine
    stepped = Outcome(isa.observe(machine.state), machine.memory, machine.fault, machine.steps)
    assert check(trace, stepped) == []


def test_stepper_prints_and_watches_an_array_and_a_register(subject, capsys):
    name, sample, program, init = subject
    script = (f"p {sample.array}; p {sample.register}; w {sample.array}; w {sample.register}; c; c; i; help")
    code, out, err = run_cli(capsys, "step", program, "--init", init, "--isa", name, "--no-color",
                             "--commands", script)
    assert code == 0, err
    assert f"{sample.register} = 0x" in out
    assert f"watch 1: {sample.array} = " in out and f"watch 2: {sample.register} = 0x" in out
    assert re.search(rf"watch ({sample.array}|{sample.register}) changed: ", out)
    assert f"{name} locations:" in out


@pytest.mark.consistency
def test_stepping_back_gives_the_state_stepping_forward_gave(subject):
    name, sample, _program, _init = subject
    isa = get_isa(name)
    program, init = isa.assemble(sample.program), parse_init(sample.init)

    def after(script: str) -> tuple[dict, list[bytes]]:
        stepper = Stepper(name, isa.configure({}), program, init, out=Console(file=io.StringIO(), width=100))
        assert stepper.run_script(script) is None
        return isa.observe(stepper.machine.state), [bytes(r.data) for r in stepper.machine.memory.regions]

    assert after("s 7; back 4") == after("s 3")
    assert after("s 7; goto 2; s 5") == after("s 7")


def test_run_shows_an_array_as_asked_and_refuses_a_view_it_has_not(subject, capsys):
    name, sample, program, init = subject
    code, out, err = run_cli(capsys, "run", program, "--init", init, "--isa", name, "--no-color", "--show",
                             sample.show, "--hex")
    assert code == 0, err
    assert sample.show.split(":")[1] in out
    error_line(capsys, ["run", program, "--init", init, "--isa", name, "--show", "nosuch:int8"], "--show")


def test_an_option_of_another_isa_is_refused(capsys, tmp_path):
    program = tmp_path / "p.s"
    program.write_text(SAMPLES["toy"].program)
    error_line(capsys, ["run", program, "--isa", "toy", "--cpu", "emerald-rapids"], "--cpu", "not of toy")


def test_what_a_test_isa_leaves_out_the_cli_says_it_lacks(capsys, tmp_path):
    program = tmp_path / "p.s"
    program.write_text(SAMPLES["toy"].program)
    error_line(capsys, ["diff", program, "--isa", "toy"], "toy", "--against")
    error_line(capsys, ["fuzz", "--isa", "toy"], "toy", "fuzzer")
    error_line(capsys, ["kernel", "anything", "--isa", "toy", "-o", tmp_path / "k.json"], "toy", "kernels")
    error_line(capsys, ["record", program, "--isa", "toy", "--backend", "silicon", "-o", tmp_path / "s.json"],
               "silicon")


@pytest.mark.consistency
@pytest.mark.parametrize("mode", [[], ["--lockstep"]])
def test_diff_against_itself_is_identical(subject, capsys, mode):
    name, _sample, program, init = subject
    code, out, err = run_cli(capsys, "diff", program, "--init", init, "--isa", name, "--against", "sim", *mode)
    assert code == 0, out + err
    assert out.startswith("identical: sim and sim agree")


def test_show_lists_the_trace(subject, capsys, tmp_path):
    name, sample, program, init = subject
    record(capsys, name, program, init, tmp_path / "t.trace.json", "--steps")
    code, out, _err = run_cli(capsys, "show", tmp_path / "t.trace.json", "--no-color")
    assert code == 0 and f"isa {name}" in out and sample.array in out


# ---- bad input: exit 2, one line naming the place ------------------------------------------------------


@pytest.mark.parametrize("what", ["mnemonic", "register"])
def test_a_bad_program_line_is_one_error_naming_file_and_line(subject, capsys, tmp_path, what):
    name, sample, _program, init = subject
    line = sample.bad_mnemonic if what == "mnemonic" else sample.bad_register
    head = sample.program.splitlines()[0] + "\n"  # x86's .intel_syntax line, or the toy's first instruction
    bad = tmp_path / "bad.s"
    bad.write_text(head + line + "\n")
    word = line.split()[0] if what == "mnemonic" else sample.bad_register_word
    for command in ("run", "step", "record"):
        extra = ["-o", tmp_path / "never.json"] if command == "record" else []
        error_line(capsys, [command, bad, "--init", init, "--isa", name, *extra], f"{bad}:2:", word)
    assert not (tmp_path / "never.json").exists()


def _fixed_size_array(name: str) -> str:
    """An array of ``name`` whose size the ISA fixes (x86: TILECFG; a tile's size is its configuration's)."""
    isa = get_isa(name)
    return next(spec.name for spec in isa.arrays(isa.configure({})) if spec.size is not None)


@pytest.mark.parametrize("what", ["unknown array", "wrong size"])
def test_bad_init_arrays_are_one_error_naming_the_array(subject, capsys, tmp_path, what):
    name, sample, program, _init = subject
    array = _fixed_size_array(name)
    arrays = {"nosucharray": "00"} if what == "unknown array" else {array: "0102"}
    bad_init = tmp_path / "bad_init.json"
    bad_init.write_text(json.dumps({**sample.init, "arrays": arrays}))
    place = "init.arrays.nosucharray" if what == "unknown array" else f"init.arrays.{array}"
    for command in ("run", "step", "diff"):
        against = ["--against", "sim"] if command == "diff" else []
        error_line(capsys, [command, program, "--init", bad_init, "--isa", name, *against], str(bad_init), place)


def test_a_trace_of_an_unknown_array_is_refused(subject, capsys, tmp_path):
    name, _sample, program, init = subject
    written = record(capsys, name, program, init, tmp_path / "t.trace.json")
    written["init"]["arrays"] = {"nosucharray": "00"}
    bad = tmp_path / "bad.trace.json"
    bad.write_text(json.dumps(written))
    error_line(capsys, ["run", bad], str(bad), "init.arrays.nosucharray")
    error_line(capsys, ["replay", bad], "init.arrays.nosucharray")


def test_replay_of_a_trace_with_an_unknown_array_names_the_file(capsys, tmp_path):
    program, init = tmp_path / "p.s", tmp_path / "i.json"
    program.write_text(SAMPLES["toy"].program)
    init.write_text(json.dumps(SAMPLES["toy"].init))
    written = record(capsys, "toy", program, init, tmp_path / "t.trace.json")
    written["init"]["arrays"] = {"nosucharray": "00"}
    bad = tmp_path / "bad.trace.json"
    bad.write_text(json.dumps(written))
    error_line(capsys, ["replay", bad], str(bad), "init.arrays.nosucharray")


def test_parsing_a_toy_trace_with_the_toy_unregistered_names_the_isa(monkeypatch, capsys, tmp_path):
    program, init = tmp_path / "p.s", tmp_path / "i.json"
    program.write_text(SAMPLES["toy"].program)
    init.write_text(json.dumps(SAMPLES["toy"].init))
    record(capsys, "toy", program, init, tmp_path / "t.trace.json")
    monkeypatch.delitem(KNOWN_ISAS, "toy")
    error_line(capsys, ["replay", tmp_path / "t.trace.json"], "unknown ISA 'toy'")
    assert parse_trace(json.loads((tmp_path / "t.trace.json").read_text())).isa == "toy"


# ---- explain and docs ------------------------------------------------------------------------------------


def test_explain_shows_the_form_and_checks_the_machine(subject, capsys, tmp_path):
    name, sample, _program, _init = subject
    form = get_isa(name).assemble(sample.explain).instructions[0].form
    svg, html = tmp_path / "e.svg", tmp_path / "e.html"
    code, out, err = run_cli(capsys, "explain", sample.explain, "--isa", name, "--no-color", "--svg", svg,
                             "--html", html)
    assert code == 0, err
    assert form.syntax in out and "Operation" in out and "equal ✓" in out and "DIFFERENT ✗" not in out
    assert ET.fromstring(svg.read_text()).tag.endswith("svg") and "<html" in html.read_text().lower()
    error_line(capsys, ["explain", sample.bad_mnemonic, "--isa", name], sample.bad_mnemonic.split()[0])


def test_explain_of_bytes_for_a_text_only_isa_says_why_not(capsys):
    error_line(capsys, ["explain", "0600010100000000", "--isa", "toy"], "no binary encoding")
    status, out, _err = run_cli(capsys, "explain", "0600010100000000", "--isa", "toy32", "--no-color")
    assert status == 0 and "mac acc[0], r1, r1" in out


@pytest.fixture(scope="module")
def generated_docs(tmp_path_factory):
    """`isasim docs` written once with the test ISAs registered, and `isasim docs --check` of it."""
    out = tmp_path_factory.mktemp("generated") / "docs"
    with pytest.MonkeyPatch.context() as patch:
        for name, module in TEST_ISAS.items():
            patch.setitem(KNOWN_ISAS, name, module)
        assert cli.main(["docs", "--out", str(out)]) == 0
        stale = check_docs(out)  # a second generation: deterministic, so nothing differs
    return out, stale


def test_docs_have_every_isas_pages_and_are_fresh(subject, generated_docs):
    name, _sample, _program, _init = subject
    out, stale = generated_docs
    assert stale == []
    pages = get_isa(name).explainer().reference_pages()
    assert pages
    for page in pages:
        assert (out / name / f"{page.slug}.md").is_file(), page.slug
    assert f"[{name}]({name}/index.md)" in (out / "index.md").read_text()
    if name in TEST_ISAS:
        return
    # an ISA of the registry: adding the test ISAs changed none of its pages, which are the committed ones
    generated = sorted(p.relative_to(out).as_posix() for p in (out / name).iterdir())
    # (a folder inside, such as ascend_cube/guide/, holds hand-written pages the generator leaves alone)
    committed = sorted(p.relative_to(ROOT / "docs").as_posix() for p in (ROOT / "docs" / name).iterdir()
                       if p.is_file())
    assert generated == committed
    differ = [rel for rel in generated if (out / rel).read_text() != (ROOT / "docs" / rel).read_text()]
    assert not differ, f"regenerate with 'isasim docs --out docs': {differ[:5]}"

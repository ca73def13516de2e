"""Differential fuzzing of the simulator against this machine's CPU (isasim.x86_amx.fuzz on isasim.core.fuzz).

The scalar subset runs on any x86-64 Linux host: thousands of random programs are
compared with silicon at the end of each program, and a few hundred after every
instruction.  AMX programs run only where the CPU and kernel offer AMX (the
tests say why they skip elsewhere).  ISASIM_FUZZ_SEED picks other programs.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from amx_fault_cases import AFTER_RELEASE, FULL, SHAPE_MISMATCHES, cfg_with
from amxharness import tilecfg_bytes
from isasim.cli import main
from isasim.core.diff import diff
from isasim.core.fuzz.drawing import draw_cases
from isasim.core.fuzz.results import FuzzSummary
from isasim.core.fuzz.traces import write_fresh
from isasim.core.machine import Machine
from isasim.core.trace import Init, read_trace
from isasim.x86_amx import fuzz
from isasim.x86_amx.forms import scalar as scalar_forms, vector as vector_forms
from isasim.x86_amx.fuzz import amx as fuzz_amx, scalar as fuzz_scalar, vector as fuzz_vector
from isasim.x86_amx.operands import Reg
from isasim.x86_amx.oracle import SiliconBackend, host_amx, host_cpu, platform_problem
from isasim.x86_amx.semantics import scalar, vector

ROOT = Path(__file__).resolve().parents[3]
SEED = int(os.environ.get("ISASIM_FUZZ_SEED", "20250101"))

needs_silicon = pytest.mark.needs_silicon  # tests/conftest.py
needs_amx = pytest.mark.needs_amx
NO_AMX = platform_problem() or host_cpu().why_no_amx()  # the refusal a test below expects word for word

SCALAR_FORMS = {"mov", "movabs", "add", "sub", "cmp", "xor", "test", "inc", "dec", "lea", "imul (1 operand)",
                "imul (2 operands)", "imul (3 operands)", "jmp", "jcc", "nop"}


def divergence_report(summary: FuzzSummary) -> str:
    lines = [f"{len(summary.divergences)} divergence(s) between sim and {summary.b} (seed {summary.seed}):"]
    for d in summary.divergences:
        lines.append(f"  {d.subset} case {d.case}: {d.description}")
        lines += [f"      {line}" for line in d.program]
        lines.append(f"    trace: {d.trace}")
    return "\n".join(lines)


# ---- scalar programs against silicon -------------------------------------------------


@needs_silicon
def test_scalar_programs_agree_with_silicon(tmp_path):
    summary = fuzz.run_fuzz(10_000, SEED, against="silicon", isa_subset="scalar", out_dir=tmp_path)
    assert not summary.divergences, divergence_report(summary)
    assert summary.cases["scalar"] == 10_000
    assert summary.total_instructions >= 100_000, summary.instructions
    assert SCALAR_FORMS <= set(summary.instructions), SCALAR_FORMS - set(summary.instructions)
    assert min(summary.instructions[form] for form in SCALAR_FORMS) >= 100, summary.instructions
    vectors = vector_forms_this_host_runs()
    assert vectors <= set(summary.instructions), vectors - set(summary.instructions)
    assert min((summary.instructions[form] for form in vectors), default=100) >= 100, summary.instructions
    if fuzz_scalar.avx512_host():  # issue 27's AVX-512 forms (masks, GPR moves, idioms, broadcasts, opmasks)
        assert min(summary.instructions.get(form, 0) for form in fuzz_scalar.AVX512_FORMS) >= 20, summary.instructions
    # issue 27's SSE/AVX/AVX-512 arithmetic, conversions, compares, shuffles and opmask logic (fuzz/vector.py), those
    # this host's CPU runs: 249 forms share about 12,000 draws (49 each at the median; the draws of a seed come in
    # clumps, and the fewest is 3 on the AMD EPYC)
    simd = fuzz_vector.simd_forms(frozenset(host_cpu().flags)) if vectors else ()
    assert min((summary.instructions.get(form, 0) for form in simd), default=3) >= 3, summary.instructions
    assert sum(summary.instructions.get(form, 0) for form in simd) >= 40 * len(simd), summary.instructions
    # issue 27's general-purpose forms (the BMI ones where this host has BMI1 and BMI2)
    general = (fuzz_scalar.GENERAL_FORMS + fuzz_scalar.STRING_FORMS
               + (fuzz_scalar.BMI_FORMS if fuzz_scalar.bmi_host() else ()))
    assert min(summary.instructions.get(form, 0) for form in general) >= 10, summary.instructions
    for prefix in ("cmov", "set"):
        assert sum(n for form, n in summary.instructions.items() if form.startswith(prefix)) >= 100


def vector_forms_this_host_runs() -> set[str]:
    """The vector moves the scalar cases draw on this host (fuzz_scalar.vector_shape: what its CPU has)."""
    _count, bits = fuzz_scalar.vector_shape()
    if not bits:
        return set()
    forms = {"pxor", "vpxor", "movaps", "movups", "movdqa", "vmovdqa", "vpbroadcastw", "vzeroupper"}
    return forms | ({"vmovdqu8"} if bits == 512 else set())


@needs_silicon
def test_scalar_programs_agree_with_silicon_after_every_instruction(tmp_path):
    summary = fuzz.run_fuzz(1000, SEED + 1, against="silicon", isa_subset="scalar", lockstep=True, out_dir=tmp_path)
    assert not summary.divergences, divergence_report(summary)
    assert summary.cases["scalar"] == 1000 and summary.mode == "lockstep"
    assert summary.total_instructions >= 9000


# ---- the fuzzer finds and shrinks a planted bug ----------------------------------------


def inc_that_sets_cf(cpu, dest):
    """INC with a bug: it writes CF (the carry out of the top bit) as ADD does."""
    bits = scalar.width(dest)
    a = scalar.read(cpu, dest, bits)
    scalar.write(cpu, dest, a + 1, bits)
    scalar.set_flags(cpu, scalar.add_flags(a, 1, bits))


@needs_silicon
def test_a_planted_bug_is_found_shrunk_and_written_as_a_trace(tmp_path, monkeypatch):
    monkeypatch.setattr(scalar_forms.FORMS["INC_dest"], "semantics", inc_that_sets_cf)
    monkeypatch.setenv("ISASIM_ENGINE", "python")  # planted in the Python semantics, which the compiled INC bypasses
    summary = fuzz.run_fuzz(300, 2, against="silicon", isa_subset="scalar", out_dir=tmp_path, max_divergences=1,
                            shrink_candidates=200, shrink_seconds=120)
    assert len(summary.divergences) == 1, summary
    found = summary.divergences[0]
    assert "rflags" in found.description and found.shrunk, found
    assert len(found.program) <= 7 and found.program[-1] == "ret", found.program  # a few instructions and ret
    assert any(line.startswith("inc ") for line in found.program), found.program
    trace = read_trace(found.trace)
    assert Path(found.trace).parent == tmp_path and trace.program == found.program
    assert trace.producer.startswith(SiliconBackend().producer())
    assert trace.expect["fault"] is None and "rflags" in trace.expect["regs"]
    # The trace convicts the buggy simulator and acquits the real one (and silicon).
    assert main(["replay", "--no-color", found.trace]) == 1
    monkeypatch.undo()
    assert main(["replay", "--no-color", found.trace]) == 0
    assert main(["replay", "--no-color", "--backend", "silicon", found.trace]) == 0


def movups_that_zeroes_the_upper_bits(cpu, dest, src):
    """MOVUPS with the classic bug: a load zeroes bits 511:128 of its register as a VEX write would
    (legacy SSE keeps them)."""
    value = vector.read(cpu, src, 128)
    if isinstance(dest, Reg):
        vector.write_vex(cpu, dest, value, 128)
    else:
        vector.write_legacy(cpu, dest, value)


@needs_silicon
@pytest.mark.skipif(not fuzz_scalar.vector_shape()[0], reason="this host's CPU has no AVX: no case draws vector moves")
def test_a_planted_vector_bug_is_found_in_a_batch_and_written_as_a_trace(tmp_path, monkeypatch):
    monkeypatch.setattr(vector_forms.FORMS["MOVUPS_dest_src"], "semantics", movups_that_zeroes_the_upper_bits)
    summary = fuzz.run_fuzz(300, 4, against="silicon", isa_subset="scalar", out_dir=tmp_path, max_divergences=1,
                            shrink_candidates=20, shrink_seconds=120)
    assert len(summary.divergences) == 1, summary
    found = summary.divergences[0]
    assert any(line.startswith("movups ") for line in found.program), found.program
    assert main(["replay", "--no-color", found.trace]) == 1  # the trace convicts the buggy simulator ...
    monkeypatch.undo()
    assert main(["replay", "--no-color", found.trace]) == 0  # ... and acquits the real one and silicon
    assert main(["replay", "--no-color", "--backend", "silicon", found.trace]) == 0


@needs_silicon
def test_traces_are_never_overwritten(tmp_path):
    case = draw_cases(fuzz_scalar.scalar_cases(), 1, SEED)[0]
    text, init = case.standalone()
    from isasim.core.trace import Trace, trace_json

    trace = trace_json(Trace("x86_amx", text.split("\n"), {}, "test", init, {}))
    first = write_fresh(trace, tmp_path, "same")
    second = write_fresh(trace, tmp_path, "same")
    assert first != second and first.exists() and second.exists()


def test_the_same_seed_draws_the_same_programs():
    one = draw_cases(fuzz_scalar.scalar_cases(), 30, 7)
    two = draw_cases(fuzz_scalar.scalar_cases(), 30, 7)
    assert one == two and len(set(one)) > 20


def test_generated_programs_assemble_and_run_on_the_simulator_without_faults():
    for case in draw_cases(fuzz_scalar.scalar_cases(), 200, SEED):
        text, init = case.standalone()
        machine = Machine("x86_amx")
        machine.load(machine.assemble(text), regs=init.regs, memory=init.memory)
        result = machine.run(10000)
        assert result.fault is None and result.halted, (text, result.fault)


def test_a_batch_runs_each_case_as_it_runs_alone():
    """Registers, memory and flags a batch stores for each case equal the case's own run."""
    cases = [c.at_slot(i) for i, c in enumerate(draw_cases(fuzz_scalar.scalar_cases(), 40, SEED + 3))]
    batch = fuzz_scalar.build_batch(cases)
    machine = Machine("x86_amx")
    machine.load(batch.program, regs=batch.init.regs, memory=batch.init.memory)
    assert machine.run().fault is None
    for i, case in enumerate(cases):
        text, init = case.standalone()
        alone = Machine("x86_amx")
        alone.load(alone.assemble(text), regs=init.regs, memory=init.memory)
        alone.run()
        block = fuzz_scalar.BOOK_BASE + i * fuzz_scalar.BOOK
        for name in case.written:
            stored = machine.memory.read(block + fuzz_scalar.BOOK_OUT + 8 * fuzz_scalar.GPR64.index(name), 8)
            assert int.from_bytes(stored, "little") == alone.state.read_register(name), (i, name, text)
        for flag, _jump in fuzz_scalar.CAPTURE_JUMPS:
            if case.defined & flag:
                at = block + fuzz_scalar.BOOK_FLAGS + fuzz_scalar.CAPTURE_OFFSET[flag]
                stored = machine.memory.read(at, 1)[0]
                assert stored == bool(alone.state.rflags & flag), (i, flag, text)
        slot = (case.slot_address, fuzz_scalar.SLOT)
        assert machine.memory.read(*slot) == alone.memory.read(*slot)
        width = fuzz_scalar.vector_shape()[1] // 8
        for n in case.vectors:
            at = block + fuzz_scalar.BOOK_VECTORS + 64 * fuzz_scalar.VECTOR_POOL.index(n)
            stored = int.from_bytes(machine.memory.read(at, width), "little")
            assert stored == alone.state.read_vector(n) % (1 << 8 * width), (i, n, text)
    assert any(case.vectors for case in cases) == bool(fuzz_scalar.vector_shape()[0])
    # the batch ends with the cases' vector registers zero: what they held is in their blocks
    assert all(not machine.state.read_vector(n) for n in fuzz_scalar.VECTOR_POOL)


# ---- AMX programs -------------------------------------------------------------------------


def test_amx_generator_runs_sim_against_sim(tmp_path):
    summary = fuzz.run_fuzz(40, SEED, against="sim", isa_subset="amx", out_dir=tmp_path)
    assert not summary.divergences and summary.cases["amx"] == 40
    assert summary.elements["tdpbf16ps"] > 0 and sum(summary.elements[f] for f in fuzz_amx.INT_TDP_FORMS) > 0


@needs_amx
def test_amx_programs_agree_with_silicon(tmp_path):
    """At least 100,000 TDPBF16PS and 50,000 elements of each integer TDP per run.  The fuzzer simulates
    the host's model (chosen by the AMX features it executes where its family and model are a
    hypervisor's): where the core runs TDPFP16PS, its results are compared too; where it does not, every
    TDPFP16PS must raise #UD on silicon as in the simulator, so none ever produces an element."""
    executes_fp16 = "AMX-FP16" in host_amx().features
    elements: Counter = Counter()
    seed = SEED
    while (elements["tdpbf16ps"] < 100_000 or min(elements[f] for f in fuzz_amx.INT_TDP_FORMS) < 50_000) \
            and seed < SEED + 20:
        summary = fuzz.run_fuzz(100, seed, against="silicon", isa_subset="amx", out_dir=tmp_path)
        assert not summary.divergences, divergence_report(summary)
        elements.update(summary.elements)
        seed += 1
    assert elements["tdpbf16ps"] >= 100_000, elements
    assert all(elements[f] >= 50_000 for f in fuzz_amx.INT_TDP_FORMS), elements
    assert elements["tdpfp16ps"] >= 20_000 if executes_fp16 else elements["tdpfp16ps"] == 0, elements


# Every row of the fault table (tests/x86_amx/semantics/test_amx_faults.py) as a program with its
# initial state: (name, lines, configuration bytes, register changes, fault on Emerald Rapids).
CFG, BUF, DST, READ_ONLY = fuzz_amx.AMX_CFG, fuzz_amx.AMX_BUF, fuzz_amx.AMX_DST, 0x20300000
LAST_CFG = CFG + 0x1000 - 64  # a configuration in the last 64 bytes of its page
FAULT_ROWS = [
    ("valid palette 1", ["ldtilecfg [rcx]"], tilecfg_bytes({t: (16, 64) for t in range(8)}), {}, None),
    *[(f"palette {p}", ["ldtilecfg [rcx]"], tilecfg_bytes(FULL, palette=p), {}, ("#GP", 0)) for p in (2, 255)],
    *[(f"shape {s}", ["ldtilecfg [rcx]"], tilecfg_bytes({0: s}), {}, ("#GP", 0))
      for s in ((17, 64), (16, 65), (16, 68))],
    *[(f"half-zero shape {s}", ["ldtilecfg [rcx]"], tilecfg_bytes({0: s}), {}, ("#GP", 0)) for s in ((16, 0), (0, 64))],
    *[(f"reserved byte {b}", ["ldtilecfg [rcx]"], cfg_with(**{f"b{b}": 1}), {}, ("#GP", 0))
      for b in (2, 15, 32, 47, 56, 63)],
    ("colsb not a multiple of 4", ["ldtilecfg [rcx]"], tilecfg_bytes({0: (16, 6), 1: (1, 1)}), {}, None),
    *[(f"start_row {r} echoed", ["ldtilecfg [rcx]", "sttilecfg [rdx]"], tilecfg_bytes(FULL, start_row=r), {}, None)
      for r in (15, 200)],
    ("palette 0 with garbage", ["ldtilecfg [rcx]", "sttilecfg [rdx]"], bytes([0]) + b"\xff" * 63, {}, None),
    ("misaligned configuration", ["ldtilecfg [rcx+1]"], b"\0" + tilecfg_bytes(FULL), {}, None),
    ("ldtilecfg crossing into unmapped memory", ["ldtilecfg [rcx+0x20]"], tilecfg_bytes(FULL),
     {"rcx": LAST_CFG}, ("#PF", 0)),
    ("sttilecfg crossing into unmapped memory", ["ldtilecfg [rcx]", "sttilecfg [rdx+0xffe0]"], tilecfg_bytes(FULL),
     {}, ("#PF", 1)),
    ("ldtilecfg register form", [".byte 0xc4,0xe2,0x78,0x49,0xc1"], b"", {}, ("#UD", 0)),
    ("#GP ldtilecfg changes nothing", ["ldtilecfg [rcx]", "tileloadd tmm0, [rdi+rsi*1]", "ldtilecfg [rcx+64]"],
     tilecfg_bytes(FULL) + tilecfg_bytes(FULL, palette=2), {}, ("#GP", 2)),
    *[(f"{line} after tilerelease", ["ldtilecfg [rcx]", "tilerelease", line], tilecfg_bytes(FULL), {}, ("#UD", 2))
      for (line,) in AFTER_RELEASE],
    ("tilezero after a palette 0 configuration", ["ldtilecfg [rcx]", "tilezero tmm0"], bytes(64), {}, ("#UD", 1)),
    ("sttilecfg after tilerelease twice", ["ldtilecfg [rcx]", "tilerelease", "tilerelease", "sttilecfg [rdx]"],
     tilecfg_bytes(FULL), {}, None),
    *[(f"{line} on an unconfigured tile", ["ldtilecfg [rcx]", line], tilecfg_bytes(FULL), {}, ("#UD", 1))
      for line in ("tilezero tmm3", "tileloadd tmm3, [rdi+rsi*1]", "tilestored [rdi+rsi*1], tmm3",
                   "tdpbusd tmm0, tmm1, tmm3", "tdpbusd tmm3, tmm1, tmm2")],
    ("tilezero with colsb 6", ["ldtilecfg [rcx]", "tilezero tmm0"], tilecfg_bytes({0: (16, 6)}), {}, None),
    *[(f"{line} with colsb 6", ["ldtilecfg [rcx]", line], tilecfg_bytes({0: (16, 6)}), {}, ("#UD", 1))
      for line in ("tileloadd tmm0, [rdi+rsi*1]", "tilestored [rdi+rsi*1], tmm0")],
    ("tdpbusd with C and B colsb 6", ["ldtilecfg [rcx]", "tdpbusd tmm0, tmm1, tmm2"],
     tilecfg_bytes({0: (16, 6), 1: (16, 64), 2: (16, 6)}), {}, ("#UD", 1)),
    *[(f"tdpbusd valid shapes {i}", ["ldtilecfg [rcx]", "tdpbusd tmm0, tmm1, tmm2"], tilecfg_bytes(shapes), {}, None)
      for i, shapes in enumerate((FULL, {0: (4, 8), 1: (4, 12), 2: (3, 8)}))],
    *[(f"{form} shape mismatch {i}", ["ldtilecfg [rcx]", f"{form} tmm0, tmm1, tmm2"], tilecfg_bytes(shapes), {},
       ("#UD", 1))
      for form in ("tdpbusd", "tdpbssd", "tdpbsud", "tdpbuud", "tdpbf16ps") for i, (shapes, _w) in
      enumerate(SHAPE_MISMATCHES)],
    *[(f"repeated tiles {raw}", ["ldtilecfg [rcx]", f".byte {raw}"], tilecfg_bytes(FULL), {}, ("#UD", 1))
      for raw in ("0xc4,0xe2,0x71,0x5e,0xc0", "0xc4,0xe2,0x79,0x5e,0xc1", "0xc4,0xe2,0x71,0x5e,0xc1",
                  "0xc4,0xe2,0x72,0x5c,0xc1")],
    ("tileloadd crossing into an unmapped page at row 8", ["ldtilecfg [rcx]", "tileloadd tmm0, [rdi+rsi*1+0xfe00]"],
     tilecfg_bytes(FULL), {}, ("#PF", 1)),
    ("tilestored crossing into an unmapped page", ["ldtilecfg [rcx]", "tilestored [rdi+rsi*1+0xfe00], tmm0"],
     tilecfg_bytes(FULL), {}, ("#PF", 1)),
    ("tilestored to read-only memory", ["ldtilecfg [rcx]", "tilestored [r9+rsi*1], tmm0"], tilecfg_bytes(FULL),
     {"r9": READ_ONLY}, ("#PF", 1)),
    *[(f"tileloadd {address} stride {stride}", ["ldtilecfg [rcx]", f"tileloadd tmm0, {address}"],
       tilecfg_bytes(FULL), {"rsi": stride % (1 << 64)}, None)
      for address, stride in (("[rdi+rsi*1+1]", 65), ("[rdi+rsi*1]", 0), ("[rdi+rsi*1+0x8000]", -64))],
    *[(f"{line} with start_row >= rows", ["ldtilecfg [rcx]", line], tilecfg_bytes({0: (4, 64)}, start_row=4), {},
       ("#UD", 1)) for line in ("tileloadd tmm0, [rdi+rsi*1]", "tilestored [rdi+rsi*1], tmm0")],
    ("tilezero with start_row >= rows", ["ldtilecfg [rcx]", "tilezero tmm0"],
     tilecfg_bytes({0: (4, 64)}, start_row=4), {}, None),
    ("start_row checked against the tile used", ["ldtilecfg [rcx]", "tileloadd tmm1, [rdi+rsi*1]"],
     tilecfg_bytes({0: (4, 64), 1: (16, 64)}, start_row=4), {}, None),
    *[(f"tmul ignores start_row {r}", ["ldtilecfg [rcx]", "tdpbusd tmm0, tmm1, tmm2"],
       tilecfg_bytes({0: (4, 64), 1: (4, 64), 2: (16, 64)}, start_row=r), {}, None) for r in (5, 4)],
    *[(f"invalid encoding {raw}", ["ldtilecfg [rcx]", f".byte {raw}"], tilecfg_bytes(FULL), {}, ("#UD", 1))
      for raw in ("0xc4,0xe2,0x7b,0x4b,0x07", "0xc4,0xe2,0x7f,0x49,0xc0", "0xc4,0xe2,0xfb,0x49,0xc0",
                  "0xc4,0xe2,0x73,0x49,0xc0", "0xc4,0x62,0x7b,0x49,0xc0", "0xc4,0xe2,0x39,0x5e,0xc1",
                  "0xc4,0xc2,0x69,0x5e,0xc1", "0xc4,0xe2,0x69,0x5e,0x01", "0xc4,0xe2,0x70,0x49,0xc0",
                  "0xf0,0xc4,0xe2,0x6a,0x5c,0xc1", "0x66,0xc4,0xe2,0x6a,0x5c,0xc1")],
    ("tileloadd with a SIB byte and no index", ["ldtilecfg [rcx]", "tileloadd tmm0, [rdi+riz*1]"],
     tilecfg_bytes(FULL), {}, None),
    ("tdpfp16ps", ["ldtilecfg [rcx]", "tdpfp16ps tmm0, tmm1, tmm2"], tilecfg_bytes(FULL), {}, ("#UD", 1)),
    ("a fault stops the run", ["ldtilecfg [rcx]", "tilezero tmm0", "tilezero tmm5", "tilezero tmm1"],
     tilecfg_bytes(FULL), {}, ("#UD", 2)),
]


def fault_row_program(lines, configs: bytes, regs: dict) -> tuple[str, Init]:
    page = bytearray(0x1000)
    at = 0x1000 - 64 if regs.get("rcx") == LAST_CFG else 0
    page[at : at + len(configs)] = configs
    buffer = (bytes(range(64)) + b"\x66" * 64) * (fuzz_amx.AMX_SPAN // 128)
    memory = [(CFG, bytes(page), True), (BUF, buffer, True), (DST, bytes(fuzz_amx.AMX_SPAN), True),
              (READ_ONLY, b"\x11" * 0x1000, False)]
    return "\n".join(lines + ["ret"]), Init({"rcx": CFG, "rdi": BUF, "rdx": DST, "rsi": 64, **regs}, memory)


@pytest.mark.parametrize("name,lines,configs,regs,fault", FAULT_ROWS, ids=[row[0] for row in FAULT_ROWS])
def test_fault_row_programs_fault_as_measured_on_the_simulator(name, lines, configs, regs, fault):
    text, init = fault_row_program(lines, configs, regs)
    machine = Machine("x86_amx", {"cpu": "emerald-rapids"})
    machine.load(machine.assemble(text), regs=init.regs, memory=init.memory)
    result = machine.run(100)
    got = None if result.fault is None else (result.fault.kind, result.fault.index)
    assert got == fault, result.fault


@needs_amx
@pytest.mark.parametrize("name,lines,configs,regs,fault", FAULT_ROWS, ids=[row[0] for row in FAULT_ROWS])
def test_fault_rows_agree_with_silicon(name, lines, configs, regs, fault):
    text, init = fault_row_program(lines, configs, regs)
    config = fuzz.chosen_config("silicon")[0]
    program = Machine("x86_amx", config).assemble(text)
    report = diff("x86_amx", config, program, init, a="sim", b="silicon")
    assert report.identical, report.divergence.describe("sim", "silicon")


# ---- the command ----------------------------------------------------------------------------


def isasim(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "isasim.cli", *map(str, args)], capture_output=True, text=True,
                          cwd=cwd or ROOT, timeout=300)


@needs_silicon
def test_fuzz_command_reports_no_divergence(tmp_path):
    done = isasim("fuzz", "--cases", 50, "--seed", 1, "--out", tmp_path, "--no-color")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "no divergence" in done.stdout and "50 programs" in done.stdout and "total" in done.stdout
    assert not list(tmp_path.glob("*.trace.json"))  # no divergence, no trace (only the campaign's own files)


@pytest.mark.skipif(NO_AMX is None, reason="this host runs AMX programs on silicon")
def test_fuzz_command_explains_why_amx_cannot_run_here(tmp_path):
    done = isasim("fuzz", "--only", "amx", "--cases", 10, "--out", tmp_path)
    assert done.returncode == 2, done.stdout + done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("isasim: error: cannot fuzz amx programs against silicon here: ")
    assert NO_AMX in lines[0] and not done.stdout


def test_fuzz_command_rejects_an_unknown_backend():
    done = isasim("fuzz", "--against", "nosuchbackend", "--cases", 1)
    assert done.returncode == 2 and "unknown backend 'nosuchbackend'" in done.stderr


def test_fuzz_command_rejects_another_isas_backend():
    done = isasim("fuzz", "--against", "qemu", "--cases", 1)  # arm_sme's oracle, not x86_amx's
    assert done.returncode == 2 and "runs arm_sme programs, not x86_amx" in done.stderr, done.stderr


def test_fuzz_command_takes_the_subsets_the_isa_names():
    done = isasim("fuzz", "--only", "vector", "--cases", 1)
    assert done.returncode == 2 and not done.stdout
    assert "invalid choice for x86_amx: 'vector' (choose from scalar, amx)" in done.stderr

"""The x86 compiled engine (isasim.x86_amx.compiled) against the Python semantics: identity.

Every program of the x86 corpora (the golden traces, the examples, the kernels, AMX fuzz cases drawn with
numpy for a model without and with AMX-FP16, scalar fuzz cases, and seeded loops of the scalar forms with a
compiled body) runs on Machine(engine="python") and Machine(engine="compiled"), and the two must end with the
same state bit for bit: registers and arrays (isa.observe), all tile data, every memory region's bytes, the
fault's kind, rule, index and pc, the step count, halted, the pc, and the Python side's own bookkeeping
(state.checks_passed, start_row, the released tiles, the call depth).

Then each compiled form is switched off in turn (its instructions hand back), with the same identity; and for
each compiled form the corpus uses, a deliberate difference planted in the form's body (``plant``) is caught by
the same comparison on some program of the corpus, so the comparison is shown able to see the bodies.
"""

from __future__ import annotations

import random
import subprocess
import sys
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest

from isasim.core import compiled as core_compiled
from isasim.core.errors import IsasimError
from isasim.core.isa import get_isa
from isasim.core.machine import Machine
from isasim.core.trace import Init, read_trace

if not core_compiled.numba_available():
    pytest.skip("numba is not installed: the compiled engine is off (every run takes the Python path)",
                allow_module_level=True)

from isasim.x86_amx import kernels  # noqa: E402
from isasim.x86_amx.compiled import build  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
ISA = get_isa("x86_amx")
MAX_STEPS = 200_000


@dataclass
class Case:
    name: str
    program: object
    config: dict
    init: Init


def _trace_cases() -> list[Case]:
    paths = sorted((ROOT / "traces" / "x86_amx").rglob("*.trace.json"))
    paths += sorted((ROOT / "examples" / "x86_amx").glob("*.trace.json"))
    cases = []
    for path in paths:
        trace = read_trace(path)
        program = ISA.assemble("\n".join(trace.program), source=str(path.name))
        cases.append(Case(str(path.relative_to(ROOT)), program, ISA.configure(trace.config), trace.init))
    return cases


def _kernel_cases() -> list[Case]:
    built = [kernels.int8_block(), kernels.int8_block(62), kernels.int8_batch(4), kernels.int8_per_block(3),
             kernels.int8_microkernel(2, 256), kernels.bf16_block(), kernels.bf16_microkernel(2, 128)]
    return [Case(f"kernel {k.name}", ISA.assemble(k.text), ISA.configure(None), k.init) for k in built]


def _amx_fuzz_cases() -> list[Case]:
    from isasim.x86_amx.fuzz.amx import AmxCaseDrawer

    cases = []
    for seed, fp16, count, cpu in ((7, False, 240, "emerald-rapids"), (8, True, 160, "granite-rapids")):
        for n, case in enumerate(AmxCaseDrawer(seed, fp16=fp16).draw(count)):
            text, init = case.standalone()
            cases.append(Case(f"amx fuzz {seed}/{n}", ISA.assemble(text), ISA.configure({"cpu": cpu}), init))
    return cases


def _scalar_fuzz_cases() -> list[Case]:
    from isasim.core.fuzz.drawing import draw_cases
    from isasim.x86_amx.fuzz.scalar import scalar_cases

    cases = []
    for n, case in enumerate(draw_cases(scalar_cases(), 12, seed=3)):
        text, init = case.standalone()
        cases.append(Case(f"scalar fuzz {n}", ISA.assemble(text), ISA.configure(None), init))
    return cases


_EDGES = (0, 1, 2, 0x7F, 0x80, 0xFF, 0x7FFFFFFF, 0x80000000, 0xFFFFFFFF, 0x100000000, 0x7FFFFFFFFFFFFFFF,
          0x8000000000000000, 0xFFFFFFFFFFFFFFFF, 0xFFFFFFFFFFFFFFFE, 0x0F, 0x10)
_REGS64 = ("rax", "rbx", "rcx", "rdx", "rsi", "rdi", "r8", "r9", "r10", "r11", "r12", "r13", "r14", "r15")
_REGS32 = ("eax", "ebx", "ecx", "edx", "esi", "edi", "r8d", "r9d", "r10d", "r11d", "r12d", "r13d", "r14d", "r15d")
_JCC = ("jo", "jno", "jb", "jae", "je", "jne", "jbe", "ja", "js", "jns", "jp", "jnp", "jl", "jge", "jle", "jg")


def _loop_program(rng: random.Random) -> str:
    """Straight-line scalar work with every compiled scalar form, inside a counted loop (rbp, 64-bit), each
    block ending in a conditional jump past the next line (taken or not by the flags it left)."""
    lines = [f"mov rbp, {rng.randint(1, 9)}", "top:"]
    for n in range(rng.randint(4, 14)):
        wide = rng.random() < 0.6
        regs = _REGS64 if wide else _REGS32
        dest, src = rng.choice(regs), rng.choice(regs)
        imm = rng.choice((0, 1, -1, 0x7F, -0x80, 0x7FFFFFFF, -0x80000000, 0x10, rng.randint(-999, 999)))
        op = rng.choice(("add", "sub", "cmp", "xor", "and", "or", "test", "mov", "inc", "dec", "lea", "movabs",
                         "nop"))
        if op in ("inc", "dec"):
            lines.append(f"{op} {dest}")
        elif op == "lea":
            lines.append(f"lea {dest}, [{rng.choice(_REGS64)}+{rng.choice(_REGS64[:-1])}*{rng.choice((1, 2, 4, 8))}"
                         f"{imm:+#x}]")
        elif op == "movabs":
            lines.append(f"movabs {rng.choice(_REGS64)}, {rng.choice(_EDGES):#x}")
        elif op == "nop":
            lines.append("nop")
        elif op == "test" or rng.random() < 0.5:
            lines.append(f"{op} {dest}, {src}")
        else:
            lines.append(f"{op} {dest}, {imm:#x}" if imm >= 0 else f"{op} {dest}, -{-imm:#x}")
        if rng.random() < 0.3:
            lines += [f"{rng.choice(_JCC)} skip{n}", f"add r15, {n + 1}", f"skip{n}:"]
    lines += ["dec rbp", "jnz top", "jmp done", "add r14, 1", "done:", "ret"]
    return "\n".join(lines)


def _scalar_loop_cases() -> list[Case]:
    rng = random.Random(33)
    cases = []
    for n in range(60):
        regs = {name: rng.choice(_EDGES) if rng.random() < 0.7 else rng.getrandbits(64) for name in _REGS64}
        regs["rbp"] = 0
        cases.append(Case(f"scalar loop {n}", ISA.assemble(_loop_program(rng)), ISA.configure(None),
                          Init(regs, [])))
    return cases


@pytest.fixture(scope="module")
def corpus() -> list[Case]:
    # the loop loaded now: a run starts in Python until it is (core.compiled.TIER_STEPS), and these are short
    build(ISA.assemble("ret"), ISA.configure(None)).warm_up()
    return _trace_cases() + _kernel_cases() + _amx_fuzz_cases() + _scalar_fuzz_cases() + _scalar_loop_cases()


@contextmanager
def compiled_with(**options):
    """Machines built meanwhile run ``build(program, config, **options)`` as their compiled program."""
    ISA.compile_program = lambda program, config: build(program, config, **options)
    try:
        yield
    finally:
        del ISA.compile_program


def outcome(case: Case, engine: str) -> dict:
    """Everything a run leaves, as comparable values."""
    machine = Machine(ISA, case.config, engine=engine)
    machine.load_init(case.program, case.init)
    try:
        machine.run(MAX_STEPS)
        error = None
    except IsasimError as exc:  # (a jump out of the program, the step limit: the same error both ways)
        error = (type(exc).__name__, str(exc))
    state, fault = machine.state, machine.fault
    released = state.released
    return {
        "observed": ISA.observe(state),
        "tiles": state.settled_tiles().tobytes(),
        "memory": [(r.start, bytes(r.data)) for r in machine.memory.regions],
        "fault": None if fault is None else (fault.kind, fault.rule, fault.index, fault.pc),
        "error": error,
        "steps": machine.steps, "halted": machine.halted, "pc": state.pc,
        "checks_passed": dict(state.checks_passed), "tilecfg": state.tilecfg.to_bytes(),
        "start_row": state.tilecfg.start_row, "call_depth": state.call_depth,
        "released": None if released is None else (released.at, released.tilecfg.to_bytes(), released.tiles.tobytes()),
        "compiled": {} if machine.compiled_program() is None else machine.compiled_program().compiled_forms(),
        "compiled_steps": 0 if machine.compiled_program() is None else machine.compiled_program().steps_run,
    }


def _differences(python: dict, compiled: dict) -> list[str]:
    return [key for key in python if not key.startswith("compiled") and python[key] != compiled[key]]


@pytest.fixture(scope="module")
def python_outcomes(corpus) -> list[dict]:
    return [outcome(case, "python") for case in corpus]


@pytest.fixture(scope="module")
def compiled_outcomes(corpus) -> list[dict]:
    return [outcome(case, "compiled") for case in corpus]


def test_compiled_engine_runs_the_corpus_bit_identically(corpus, python_outcomes, compiled_outcomes):
    assert len(corpus) >= 500
    mismatched = [(case.name, _differences(p, c)) for case, p, c in zip(corpus, python_outcomes, compiled_outcomes)
                  if _differences(p, c)]
    assert not mismatched, f"{len(mismatched)} of {len(corpus)} programs differ: {mismatched[:5]}"
    # most instructions ran in the compiled loop (the rest were handed back)
    compiled_steps = sum(c["compiled_steps"] for c in compiled_outcomes)
    assert compiled_steps > 0.6 * sum(c["steps"] for c in compiled_outcomes)
    used = {form for c in compiled_outcomes for form in c["compiled"]}
    # the corpus reaches every body (else the identity above says nothing of it)
    assert used >= {"tilezero", "tileloadd", "tileloaddt1", "tilestored", "tdpbssd", "tdpbsud", "tdpbusd",
                    "tdpbuud", "tdpbf16ps", "tdpfp16ps", "add", "sub", "cmp", "inc", "dec", "mov", "lea", "jcc",
                    "jmp", "ret", "xor", "and", "or", "test", "nop"}, used


def _forms_used(compiled_outcomes) -> list[str]:
    return sorted({form for c in compiled_outcomes for form in c["compiled"]})


def test_each_compiled_form_switched_off_keeps_identity(corpus, python_outcomes, compiled_outcomes):
    for form in _forms_used(compiled_outcomes):
        with compiled_with(disabled=(form,)):
            for case, python, compiled in zip(corpus, python_outcomes, compiled_outcomes):
                if form in compiled["compiled"]:
                    off = outcome(case, "compiled")
                    assert form not in off["compiled"]
                    assert not _differences(python, off), (form, case.name, _differences(python, off))


def test_a_planted_difference_in_each_compiled_form_is_caught(corpus, python_outcomes, compiled_outcomes):
    missed = []
    for form in _forms_used(compiled_outcomes):
        for case, python, compiled in zip(corpus, python_outcomes, compiled_outcomes):
            if form in compiled["compiled"]:
                with compiled_with(plant=form):
                    if _differences(python, outcome(case, "compiled")):
                        break
        else:
            missed.append(form)
    assert not missed, f"a difference planted in these forms' bodies went unseen: {missed}"


def test_the_first_compile_is_announced_on_stderr_only(tmp_path):
    """A process whose numba cache is empty compiles the loop, and says so on stderr (stdout stays the
    program's); the cache is redirected to an empty directory so that the compile happens.  The program runs
    long enough (past core.compiled.TIER_STEPS) that the run switches to the compiled loop."""
    script = ("from isasim.core.machine import Machine\n"
              "m = Machine('x86_amx', engine='compiled')\n"
              "m.load(m.assemble('mov rcx, 20000\\ntop: add rax, 3\\ndec rcx\\njnz top\\nret'))\n"
              "m.run(); print(m.state.gpr[0], m.compiled_program().steps_run > 0)\n")
    env = {**__import__("os").environ, "NUMBA_CACHE_DIR": str(tmp_path / "cache"), "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, cwd=tmp_path,
                          timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "60000 True\n"
    assert "isasim: compiling the fast engine (x86_amx" in done.stderr

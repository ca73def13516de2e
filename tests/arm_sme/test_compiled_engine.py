"""The compiled engine (isasim/arm_sme/compiled) against the Python semantics: bit-identical final states.

A consistency check (two parts of isasim): the Python semantics are the ones held to QEMU and clang
elsewhere; here every program of the corpora runs both ways and everything must match: the registers and
arrays the trace format observes, every memory byte, the fault (kind, rule, index, pc), the step count,
the end flag and the pc.  The corpora: the golden traces (traces/arm_sme, made with QEMU), the examples,
the GEMM kernels at every SVL, and fuzz programs drawn the way ``isasim fuzz`` draws them, half of them from
the forms the compiled loop has bodies for (so that the bodies, and not the hand-backs, do the work).
Each body is then forced off in turn (identity still holds: Python does those instructions), and a
planted difference in each body (one operand of its first instruction changed) must be caught.
"""

from __future__ import annotations

import json
import random
from collections import Counter
from pathlib import Path

import pytest

from isasim.core.compiled import numba_available

pytestmark = [pytest.mark.consistency,
              pytest.mark.skipif(not numba_available(), reason="numba is not installed: no compiled engine")]

ROOT = Path(__file__).resolve().parents[2]
SVLS = (128, 256, 512, 1024, 2048)


def _imports():
    from isasim.arm_sme import ISA, kernels
    from isasim.arm_sme.compiled import body_numbers
    from isasim.arm_sme.compiled.lowering import lower
    from isasim.arm_sme.compiled.program import ArmCompiledProgram
    from isasim.core.machine import Machine
    from isasim.core.trace import read_trace as load_trace
    return ISA, kernels, body_numbers, lower, ArmCompiledProgram, Machine, load_trace


def final_state(machine, result) -> dict:
    fault = result.fault
    return {
        "observed": machine.isa.observe(machine.state),
        "memory": [bytes(region.data) for region in machine.memory.regions],
        "fault": None if fault is None else (type(fault).__name__, str(fault), fault.index, fault.pc),
        "steps": result.steps, "halted": result.halted, "pc": machine.state.pc,
        "modes": (machine.state.sm, machine.state.za_enabled),
    }


def run_both(program, init, config, compiled_options=None, max_steps=200_000):
    """The program's final state on the Python engine and on the compiled one (warmed up, so it runs from the
    first instruction), and the compiled lowering used."""
    _, _, _, _, ArmCompiledProgram, Machine, _ = _imports()
    states = []
    lowering = None
    for engine in ("python", "compiled"):
        machine = Machine("arm_sme", config, engine=engine)
        machine.load_init(program, init)
        if engine == "compiled":
            lowering = ArmCompiledProgram(program, machine.config, **(compiled_options or {}))
            lowering.warm_up()
            machine.use_compiled(lowering)
        try:
            result = machine.run(max_steps)
        except Exception as error:  # the step limit: both must say the same
            states.append(("error", str(error)))
            continue
        states.append(final_state(machine, result))
    return states[0], states[1], lowering


def difference(a, b) -> str:
    if a == b:
        return ""
    if not isinstance(a, dict) or not isinstance(b, dict):
        return f"{a!r:.200} != {b!r:.200}"
    for key in a:
        if a[key] != b[key]:
            return f"{key} differs: python {a[key]!r:.300} compiled {b[key]!r:.300}"
    return "?"


# ---- the corpora --------------------------------------------------------------------------------------

def golden_traces():
    _, _, _, _, _, _, load_trace = _imports()
    for path in sorted((ROOT / "traces" / "arm_sme").glob("*.trace.json")):
        yield path.name, load_trace(str(path))


def example_traces():
    _, _, _, _, _, _, load_trace = _imports()
    for path in sorted((ROOT / "examples" / "arm_sme").glob("*.trace.json")):
        yield path.name, load_trace(str(path))


def program_of(trace):
    ISA = _imports()[0]
    return ISA.assemble("\n".join(trace.program) + "\n", source=trace.source)


KERNEL_SIZES = ((8, 8, 8), (13, 21, 19), (32, 48, 64))


def kernel_cases():
    ISA, kernels = _imports()[:2]
    for name in ("udot_gemm", "udot16_gemm", "umopa_gemm", "udot_indexed_gemm"):
        for svl in SVLS:
            for M, N, K in KERNEL_SIZES:
                kernel = kernels.build(name, M=M, N=N, K=K, svl=svl)
                yield f"{name} {M}x{N}x{K} SVL {svl}", ISA.assemble(kernel.text), kernel.init, {"svl": svl}


def compiled_form_ids(svl: int) -> set[str]:
    """The forms the compiled loop has a body for at this SVL (lowered once on a representative program)."""
    from isasim.arm_sme.forms import FORMS
    from isasim.arm_sme.fuzz.cases import draw_slot, slot_text
    from isasim.arm_sme.config import configure

    ISA, _, _, lower = _imports()[:4]
    config = configure({"svl": svl})
    ids = set()
    for form in FORMS:
        slot = draw_slot(form, 1)
        if slot is None:
            continue
        try:
            program = ISA.assemble(slot_text(slot, 0, 1, 0x10000) + "\n")
        except Exception:
            continue
        instruction = program.instructions[0]
        if lower(instruction, config, {i.address: n for n, i in enumerate(program.instructions)}, program.end):
            ids.add(form.id)
    return ids


def fuzz_cases(count: int, seed: int):
    """Fuzz programs as ``isasim fuzz`` draws them (its slots, selects and data): half from every fuzzable
    form, half from the forms with compiled bodies."""
    from isasim.arm_sme.forms import FORMS
    from isasim.arm_sme.fuzz.cases import MAX_INSTRUCTIONS, SmeCase, draw_slot, edge_selects, fuzzable

    ISA = _imports()[0]
    rng = random.Random(seed)
    every = [form for form in FORMS if fuzzable(form)]
    for number in range(count):
        svl = SVLS[number % len(SVLS)]
        if number % 2:
            wanted = _cached_compiled_ids(svl)
            forms = [form for form in every if form.id in wanted]
        else:
            forms = every
        slots = []
        for _ in range(rng.randint(1, MAX_INSTRUCTIONS)):
            slot = draw_slot(rng.choice(forms), rng.getrandbits(32))
            if slot is not None:
                slots.append(slot)
        if not slots:
            continue
        selects = tuple(rng.choice(edge_selects(svl)) if rng.randrange(2) else rng.getrandbits(64) for _ in range(8))
        case = SmeCase(tuple(slots), selects, rng.getrandbits(32), svl)
        text, init = case.standalone()
        yield f"fuzz {seed}:{number} SVL {svl}", ISA.assemble(text), init, {"svl": svl}


LOOP = """\
        mov x1, #0
        mov w2, #7
again:
        add x1, x1, x0, lsl #1
        eor x3, x1, x0, ror #3
        madd x4, x3, x0, x1
        ubfx x5, x4, #3, #9
        subs x0, x0, #1
        csel x6, x5, x4, ne
        cbz x0, done
        tbnz x4, #5, odd
        b again
odd:
        sub w2, w2, #1
        cbnz w2, again
done:
        ret
"""


MOVES = """\
        smstart
        ptrue pn8.b
        ld1b {z0.b-z3.b}, pn8/z, [x2]
        st1b {z0.b-z3.b}, pn8, [x3]
        ldr z5, [x2, #1, mul vl]
        str z5, [x3, #5, mul vl]
        ld1w {z16.s, z24.s}, pn8/z, [x2, x4, lsl #2]
        st1w {z16.s, z24.s}, pn8, [x3, x4, lsl #2]
        ld1h {z6.h-z7.h}, pn8/z, [x2, #2, mul vl]
        st1h {z6.h-z7.h}, pn8, [x3, #6, mul vl]
        smstop
        ret
"""


def loop_cases():
    """A scalar loop with every kind of branch, from several starting counts, and the whole-vector moves (LDR/STR
    Z, the multi-vector LD1/ST1 under an all-true predicate-as-counter) at two SVLs."""
    from isasim.core.trace import Init

    ISA = _imports()[0]
    program = ISA.assemble(LOOP)
    for count in (1, 2, 5, 17, 200):
        yield f"loop from {count}", program, Init(regs={"x0": count}, memory=[], arrays={}), {"svl": 128}
    moves = ISA.assemble(MOVES)
    rng = random.Random(5)
    for svl in (128, 512):
        memory = [(0x100000, rng.randbytes(2048), False), (0x200000, rng.randbytes(2048), True)]
        init = Init(regs={"x2": 0x100000, "x3": 0x200000, "x4": 3}, memory=memory, arrays={})
        yield f"moves SVL {svl}", moves, init, {"svl": svl}


_FORM_IDS: dict[int, set[str]] = {}


def _cached_compiled_ids(svl):
    if svl not in _FORM_IDS:
        _FORM_IDS[svl] = compiled_form_ids(svl)
    return _FORM_IDS[svl]


# ---- the tests -----------------------------------------------------------------------------------------

def _check_all(cases) -> tuple[int, Counter]:
    """Run every case both ways; fail on the first difference.  Returns how many ran and the compiled
    bodies' instruction counts over them (what the identity covered)."""
    compared, covered = 0, Counter()
    for name, program, init, config in cases:
        python, compiled, lowering = run_both(program, init, config)
        assert python == compiled, f"{name}: {difference(python, compiled)}"
        compared += 1
        covered.update(lowering.compiled_forms())
    return compared, covered


def test_compiled_engine_matches_python_on_the_golden_traces():
    cases = ((name, program_of(trace), trace.init, trace.config) for name, trace in golden_traces())
    compared, covered = _check_all(cases)
    assert compared > 1000, compared
    assert {"UDOT_zas_b_single_vgx4", "SMOPA_zas_b"} & set(covered), covered


def test_compiled_engine_matches_python_on_the_examples_and_kernels():
    cases = [(name, program_of(trace), trace.init, trace.config) for name, trace in example_traces()]
    compared, covered = _check_all(cases + list(kernel_cases()) + list(loop_cases()))
    assert compared >= len(cases) + 4 * len(SVLS) * len(KERNEL_SIZES)
    for form in ("UDOT_zas_b_single_vgx4", "UMOPA_zas_b", "LD1W_za_s", "ST1W_za_s", "LDR_za", "STR_za", "B_cond",
                 "WHILELT_b_x", "LD1B_z_b_imm", "ADDVL", "SUBS_64_imm", "MADD_64", "B", "CBZ_64", "CBNZ_32", "TBNZ",
                 "UBFM_64", "EOR_64_log_shift", "LDR_z", "STR_z", "LD1B_multi_x4_imm", "ST1W_strided_x2_ss"):
        assert covered[form], f"{form} never ran compiled: {sorted(covered)}"


def test_compiled_engine_matches_python_on_fuzz_programs():
    compared, covered = _check_all(fuzz_cases(250, seed=33))
    assert compared >= 240
    assert len(covered) > 60, sorted(covered)  # many compiled forms, not a few


_FORCING: list = []


def _corpus_for_forcing():
    """A small corpus that runs every body: the kernels at two SVLs and fuzz programs of compiled forms, each
    with the bodies its lowering uses."""
    if not _FORCING:
        ArmCompiledProgram = _imports()[4]
        cases = [case for case in kernel_cases() if " SVL 128" in case[0] or " SVL 1024" in case[0]]
        cases += list(loop_cases())
        cases += [case for case in fuzz_cases(160, seed=7) if int(case[0].split(":")[1].split()[0]) % 2]
        for case in cases:
            lowering = ArmCompiledProgram(case[1], {"svl": case[3]["svl"], "features": _features()})
            _FORCING.append((case, set(int(body) for body in lowering.bodies)))
    return _FORCING


def test_each_compiled_body_forced_off_keeps_the_identity():
    body_numbers = _imports()[2]
    for number, name in enumerate(body_numbers.BODY_NAMES, start=1):
        using = [case for case, bodies in _corpus_for_forcing() if number in bodies]
        for case_name, program, init, config in using[:6]:
            python, compiled, lowering = run_both(program, init, config, {"disabled": frozenset({number})})
            assert python == compiled, f"{name} off, {case_name}: {difference(python, compiled)}"
            assert not (lowering.bodies == number).any()


def test_a_planted_difference_in_each_body_is_caught():
    """For each body: one operand of the first instruction lowered to it is changed (the destination, a branch
    target, a tile number ...); at least one program of the corpus must then differ from the Python engine.
    A body no corpus program uses is a gap in the corpus and fails here."""
    body_numbers = _imports()[2]
    uncaught = []
    for number, name in enumerate(body_numbers.BODY_NAMES, start=1):
        caught = used = 0
        for case_name, program, init, config in [case for case, bodies in _corpus_for_forcing() if number in bodies]:
            used += 1
            python, compiled, _ = run_both(program, init, config, {"plant": number})
            if python != compiled:
                caught += 1
                break
        if not caught:
            uncaught.append(f"{name} (in {used} programs)")
    assert not uncaught, f"planted differences not caught: {uncaught}"


def _features():
    from isasim.arm_sme.config import configure

    return configure({})["features"]


def test_a_faulting_instruction_is_run_by_python_with_its_rule():
    """A load past the end of memory hands back and faults exactly as the Python engine does."""
    ISA, _, _, _, _, Machine, _ = _imports()
    from isasim.core.trace import Init

    program = ISA.assemble("smstart\nptrue p0.b\nmov x1, #0x10000\nld1b {z0.b}, p0/z, [x1, #3, mul vl]\nret\n")
    init = Init(regs={}, memory=[(0x10000, bytes(64), True)], arrays={})
    python, compiled, lowering = run_both(program, init, {"svl": 512})
    assert python == compiled
    assert python["fault"] is not None and python["fault"][2] == 3, python["fault"]
    assert lowering.compiled_forms().get("LD1B_z_b_imm") == 1

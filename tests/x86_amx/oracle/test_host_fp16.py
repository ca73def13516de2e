"""TDPFP16PS against silicon, and how the silicon backend learns that the host has it.

A hypervisor can clear AMX-FP16's CPUID bit but cannot stop the core executing TDPFP16PS, so the
backend measures it (silicon.host_amx: one TDPFP16PS in its child).  Where the host executes it,
at least 100,000 TDPFP16PS output elements are compared with silicon on operands that reach fp16
denormals, infinities, NaNs, large magnitudes and cancelling products; where it does not (an
Emerald Rapids), TDPFP16PS must raise #UD on silicon as on the simulator.
"""

from __future__ import annotations

import os

import numpy as np
import pytest

from isasim.core.diff import diff
from isasim.core.machine import Machine
from isasim.core.trace import Init
from isasim.x86_amx import fuzz
from isasim.x86_amx.fuzz import amx as fuzz_amx
from isasim.x86_amx.oracle import backend as silicon
from isasim.x86_amx.config import CPU_MODELS, model_with_features
from isasim.x86_amx.kernels import tile_config
from isasim.x86_amx.oracle import host_amx, host_cpu, platform_problem

SEED = int(os.environ.get("ISASIM_FUZZ_SEED", "20250101"))
NO_AMX = platform_problem() or host_cpu().why_no_amx()
FP16_HERE = NO_AMX is None and "AMX-FP16" in host_amx().features
needs_amx = pytest.mark.skipif(NO_AMX is not None, reason=f"no AMX programs run on this host's silicon: {NO_AMX}")
needs_fp16 = pytest.mark.skipif(not FP16_HERE, reason=(
    f"this host does not execute TDPFP16PS ({NO_AMX or host_amx().describe()})"))
needs_no_fp16 = pytest.mark.skipif(NO_AMX is not None or FP16_HERE, reason=(
    "this host executes TDPFP16PS" if FP16_HERE else f"no AMX programs run on this host's silicon: {NO_AMX}"))

GRANITE = {"cpu": "granite-rapids"}  # the one model with AMX-FP16


def test_the_model_is_the_one_with_the_hosts_amx_features():
    base = {"AMX-TILE", "AMX-INT8", "AMX-BF16"}
    assert model_with_features(frozenset(base)) == "emerald-rapids"  # Sapphire and Emerald Rapids alike
    assert model_with_features(frozenset(base | {"AMX-FP16"})) == "granite-rapids"
    assert model_with_features(frozenset()) is None
    assert model_with_features(frozenset({"AMX-TILE", "AMX-INT8"})) is None


def test_a_producer_named_by_its_features_is_still_measured_elsewhere():
    """Features say which instructions a core has, not how it sets the flags the SDM leaves undefined, and
    such a host's family and model are a hypervisor's: its undefined flags are not held against the model."""
    backend = silicon.SiliconBackend()
    named = "silicon: granite-rapids by its features (family 6 model 167, AMX-FP16 executes though CPUID hides it)"
    assert backend.cpu_of_producer(named) is None
    assert backend.measured_elsewhere(named, {"cpu": "granite-rapids"}) is True
    assert backend.measured_elsewhere(f"{named}; isasim fuzz: seed 1, amx case 5", {"cpu": "granite-rapids"}) is True
    assert backend.measured_elsewhere("silicon: emerald-rapids (family 6 model 207)", {"cpu": "emerald-rapids"}) is False


# ---- the probe ----------------------------------------------------------------------------------


@needs_amx
def test_the_probe_tells_an_instruction_that_raises_ud_from_one_that_runs(monkeypatch):
    """The probe's verdict comes from the child: a TDP on a tile the probe's configuration leaves
    unconfigured (tmm3) raises #UD on every AMX core, a TDPBF16PS on configured tiles runs."""
    monkeypatch.setattr(silicon, "_measured", None)
    monkeypatch.setattr(silicon, "AMX_PROBES", {"AMX-FP16": "tdpbusd tmm0, tmm1, tmm3"})
    measured = host_amx()
    assert "AMX-FP16" not in measured.features and dict(measured.absent)["AMX-FP16"].startswith("raises #UD")
    monkeypatch.setattr(silicon, "_measured", None)
    monkeypatch.setattr(silicon, "AMX_PROBES", {"AMX-FP16": "tdpbf16ps tmm0, tmm1, tmm2"})
    measured = host_amx()
    assert "AMX-FP16" in measured.features and dict(measured.sources)["AMX-FP16"] in (
        silicon.EXECUTES_HIDDEN, "CPUID, and it executes")
    monkeypatch.setattr(silicon, "_measured", None)  # the real probe again for what follows


def tdpfp16ps_program() -> tuple[str, Init]:
    cfg = 0x20000000
    image = tile_config({t: (16, 64) for t in range(3)}).ljust(0x1000, b"\0")
    return "ldtilecfg [rcx]\ntdpfp16ps tmm0, tmm1, tmm2\nret", Init({"rcx": cfg}, [(cfg, image, False)])


@needs_amx
def test_the_measured_features_agree_with_running_tdpfp16ps_on_silicon():
    """host_amx's verdict against a TDPFP16PS run through the backend itself, and the model the
    fuzzer simulates here has AMX-FP16 exactly when the host executes it."""
    text, init = tdpfp16ps_program()
    program = Machine("x86_amx", GRANITE).assemble(text)
    outcome = silicon.SiliconBackend().run("x86_amx", GRANITE, program, init)
    runs = outcome.fault is None
    assert runs or (outcome.fault.kind, outcome.fault.index) == ("#UD", 1), outcome.fault
    assert ("AMX-FP16" in host_amx().features) == runs
    model = fuzz.chosen_config("silicon")[0].get("cpu")
    if host_cpu().name not in CPU_MODELS:  # a model chosen by its features
        assert ("AMX-FP16" in CPU_MODELS[model].features) == runs, model
    if runs and "amx_fp16" not in host_cpu().flags:
        assert silicon.SiliconBackend().producer().endswith("AMX-FP16 executes though CPUID hides it)")


@needs_no_fp16
def test_tdpfp16ps_raises_ud_on_silicon_as_on_an_emerald_rapids():
    text, init = tdpfp16ps_program()
    config = fuzz.chosen_config("silicon")[0]
    assert "AMX-FP16" not in CPU_MODELS[config.get("cpu", "emerald-rapids")].features, config
    program = Machine("x86_amx", config).assemble(text)
    report = diff("x86_amx", config, program, init, a="sim", b="silicon")
    assert report.identical and report.b_fault is not None and report.b_fault.kind == "#UD", report


# ---- the fuzzer's notes -------------------------------------------------------------------------


@needs_amx
def test_the_fuzzer_says_which_model_it_simulates_and_where_the_config_disagrees(tmp_path):
    """Without --cpu the note names the model simulated, which has AMX-FP16 exactly when the host runs
    TDPFP16PS; with a --cpu whose AMX-FP16 the host does not share, a note says the divergences are the
    option's."""
    summary = fuzz.run_fuzz(4, SEED, against="silicon", isa_subset="amx", out_dir=tmp_path)
    chosen = [note.split()[1].rstrip(",") for note in summary.notes if note.startswith("simulating ")]
    assert len(chosen) == 1 and ("AMX-FP16" in CPU_MODELS[chosen[0]].features) == FP16_HERE, summary.notes
    assert not summary.divergences, summary.divergences[0].description
    wrong = "emerald-rapids" if FP16_HERE else "granite-rapids"
    summary = fuzz.run_fuzz(4, SEED, against="silicon", isa_subset="amx", out_dir=tmp_path, config={"cpu": wrong})
    assert not any(note.startswith("simulating ") for note in summary.notes), summary.notes  # the user chose
    expected = ("this host executes AMX-FP16" if FP16_HERE else "the granite-rapids model has AMX-FP16")
    assert any(note.startswith(expected) for note in summary.notes), summary.notes


# ---- TDPFP16PS against silicon ------------------------------------------------------------------


def fp16_operand_classes(machine: Machine, ins, accumulator: np.ndarray) -> dict[str, int]:
    """What one TDPFP16PS just computed from: its fp16 inputs that fed a product (A's rows x 2K, B's
    K x 2N), by class, the pairs of products that cancel exactly, its fp32 accumulators (``accumulator``:
    C before it ran) that are denormal, and its fp32 outputs by class."""
    state = machine.state
    c, a, b = (int(op.name[3:]) for op in ins.operands)
    rows, colsb = state.tile_shape(c)
    k = state.tile_shape(a)[1] // 4
    n = colsb // 4
    av = state.tile_view(a, "uint16")[:rows, : 2 * k]
    bv = state.tile_view(b, "uint16")[:k, : 2 * n]
    inputs = np.concatenate([av.ravel(), bv.ravel()])
    exponent, mantissa = (inputs >> 10) & 0x1F, inputs & 0x3FF
    out = state.tile_view(c, "uint32")[:rows, :n].ravel()
    out_exp, out_man = (out >> 23) & 0xFF, out & 0x7FFFFF
    af = av.view(np.float16).astype(np.float64).reshape(rows, k, 2)
    bf = bv.view(np.float16).astype(np.float64).reshape(k, n, 2)
    with np.errstate(invalid="ignore", over="ignore"):
        p0 = af[:, :, None, 0] * bf[None, :, :, 0]  # [row, k, column]: exact in float64 (22-bit products)
        p1 = af[:, :, None, 1] * bf[None, :, :, 1]
        cancel = np.isfinite(p0) & (p0 != 0) & (p0 + p1 == 0)
    return {"denormal inputs": int(np.count_nonzero((exponent == 0) & (mantissa != 0))),
            "infinite inputs": int(np.count_nonzero((exponent == 31) & (mantissa == 0))),
            "NaN inputs": int(np.count_nonzero((exponent == 31) & (mantissa != 0))),
            "inputs of magnitude 2^10 and more": int(np.count_nonzero((exponent >= 25) & (exponent < 31))),
            "cancelling product pairs": int(np.count_nonzero(cancel)),
            "denormal accumulators": int(np.count_nonzero((accumulator >> 23 & 0xFF == 0) & (accumulator & 0x7FFFFF != 0))),
            "NaN outputs": int(np.count_nonzero((out_exp == 255) & (out_man != 0))),
            "infinite outputs": int(np.count_nonzero((out_exp == 255) & (out_man == 0))),
            "zero outputs": int(np.count_nonzero(out & 0x7FFFFFFF == 0))}


def tdpfp16ps_elements(text: str, init: Init) -> tuple[int, dict[str, int]]:
    """On the simulator: the output elements of the TDPFP16PS the case executes before any fault, and
    the classes of what they computed from."""
    machine = Machine("x86_amx", GRANITE)
    program = machine.assemble(text)
    machine.load_init(program, init)
    machine.journal.enabled = False
    elements, classes = 0, {}
    while not machine.finished and machine.state.pc != program.end:
        upcoming = program.at(machine.state.pc)
        accumulator = None
        if upcoming is not None and upcoming.form.mnemonic == "tdpfp16ps":
            c = int(upcoming.operands[0].name[3:])
            accumulator = machine.state.tile_view(c, "uint32")[:, : machine.state.tile_shape(c)[1] // 4].ravel()
        record = machine.step()
        if record.fault is not None:
            break
        ins = record.instruction
        if ins.form.mnemonic == "tdpfp16ps":
            rows, colsb = machine.state.tile_shape(int(ins.operands[0].name[3:]))
            elements += rows * (colsb // 4)
            for name, count in fp16_operand_classes(machine, ins, accumulator).items():
                classes[name] = classes.get(name, 0) + count
    return elements, classes


# Each class at least this often among the inputs and outputs of the compared TDPFP16PS (the drawer's
# fp16 cases reach many times more: a drawer change that stops reaching one fails here)
MINIMUM = {"denormal inputs": 5_000, "infinite inputs": 200, "NaN inputs": 500,
           "inputs of magnitude 2^10 and more": 5_000, "cancelling product pairs": 5_000,
           "denormal accumulators": 1_000, "NaN outputs": 1_000, "infinite outputs": 500, "zero outputs": 500}


@needs_fp16
def test_tdpfp16ps_agrees_with_silicon_on_100000_elements():
    """The drawer's fp16 cases (AmxCaseDrawer(fp16=True)), each run on the simulator modelling
    granite-rapids and on this host's CPU and compared at its end (tiles, memory, registers, fault)."""
    elements, classes, compared, mismatches = 0, {}, 0, []
    seed = SEED
    while elements < 100_000 and seed < SEED + 40:
        for case in fuzz_amx.draw_amx_cases(100, seed, fp16=True):
            if not case.fp16:
                continue
            text, init = case.standalone()
            produced, found = tdpfp16ps_elements(text, init)
            if not produced:
                continue
            program = Machine("x86_amx", GRANITE).assemble(text)
            report = diff("x86_amx", GRANITE, program, init, a="sim", b="silicon")
            compared += 1
            elements += produced
            for name, count in found.items():
                classes[name] = classes.get(name, 0) + count
            if not report.identical:
                mismatches.append(f"seed {seed}: {report.divergence.describe('sim', 'silicon')}\n  " +
                                  "\n  ".join(text.split("\n")))
        seed += 1
    print(f"TDPFP16PS: {elements} elements in {compared} cases compared with silicon, {len(mismatches)} "
          f"mismatching; {classes}")
    assert not mismatches, f"{len(mismatches)} of {compared} cases differ:\n" + "\n".join(mismatches[:3])
    assert elements >= 100_000, (elements, compared)
    # most outputs finite: a NaN among an output's inputs makes it NaN and hides every other rounding
    assert classes["NaN outputs"] < elements // 2, classes
    short = {name: classes.get(name, 0) for name, least in MINIMUM.items() if classes.get(name, 0) < least}
    assert not short, (short, classes)

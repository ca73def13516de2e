"""SMSTART/SMSTOP and their zeroing rules, ZERO, the UNDEFINED faults of SME instructions with their
mode or feature off, and where a program ends."""

from __future__ import annotations

import numpy as np
import pytest

from isasim.arm_sme import ISA
from isasim.core.errors import ConfigError
from smeharness import run

DOT = "udot za.s[w8, 0, vgx2], {z0.b-z1.b}, z2.b"
ONES = {"z0": bytes([1]) * 64, "z1": bytes([1]) * 64, "z2": bytes([2]) * 64, "p3": bytes([0xff]) * 8,
        "ffr": bytes([0x0f]) * 8}


def test_smstart_sm_zeroes_z_p_and_ffr_and_keeps_za():
    za = bytes(range(256)) * 16
    machine, result = run("smstart sm", regs={"svcr": 2}, arrays={**ONES, "za": za})
    state = machine.state
    assert result.fault is None and state.sm and state.za_enabled
    assert not state.z.any() and not state.p.any() and not state.ffr.any()
    assert state.za.tobytes() == za


def test_smstop_sm_zeroes_the_vectors_too():
    machine, _ = run("smstop sm", regs={"svcr": 3}, arrays=ONES)
    assert not machine.state.sm and machine.state.za_enabled and not machine.state.z.any()


def test_smstart_za_zeroes_za_and_keeps_the_vectors():
    machine, _ = run("smstart za", regs={"svcr": 1}, arrays={**ONES, "za": bytes([7]) * 4096, "zt0": bytes([1]) * 64})
    state = machine.state
    assert not state.za.any() and not state.zt0.any()
    assert state.z[0].tobytes() == ONES["z0"] and state.p[3].tobytes() == ONES["p3"]


def test_a_redundant_smstart_changes_nothing():
    machine, result = run("smstart", regs={"svcr": 3}, arrays={**ONES, "za": bytes([7]) * 4096}, keep_records=True)
    assert result.records[0].writes == []
    assert machine.state.z[0].tobytes() == ONES["z0"] and machine.state.za.all()


def test_smstop_za_keeps_sm_and_the_vectors():
    machine, _ = run("smstop za", regs={"svcr": 3}, arrays=ONES)
    assert machine.state.sm and not machine.state.za_enabled and machine.state.z[0].tobytes() == ONES["z0"]


def test_a_za_that_is_off_reads_as_zero():
    # Disabling ZA leaves its contents inaccessible and enabling it zeroes them, so no program can see
    # them again: isasim zeroes ZA and ZT0 as ZA goes off (QEMU's harness, which must re-enable ZA to
    # dump it, sees the same; the golden trace form-smstop_za-* pins that down)
    machine, result = run("smstop za", regs={"svcr": 3}, arrays={"za": bytes([7]) * 4096, "zt0": bytes([1]) * 64},
                          keep_records=True)
    assert not machine.state.za.any() and not machine.state.zt0.any()
    assert {"za[0]", "zt0", "svcr"} <= {str(w.where) for w in result.records[0].writes}


def test_smstart_then_smstop_round_trip_is_journalled():
    machine, result = run("smstart\nsmstop", arrays=ONES, keep_records=True)
    first, second = result.records
    assert ("reg", "svcr", 0, 3) in [(w.kind, str(w.where), w.old, w.new) for w in first.writes]
    assert {str(w.where) for w in first.writes} >= {"z0", "z1", "z2", "p3", "ffr", "svcr"}
    assert [(str(w.where), w.old, w.new) for w in second.writes] == [("svcr", 3, 0)]


def test_zero_za_and_one_tile():
    za = np.arange(64 * 64, dtype=np.uint32).astype(np.uint8) | 1
    machine, _ = run("zero {za1.s}", regs={"svcr": 2}, arrays={"za": za.tobytes()})
    rows = machine.state.za
    assert all(not rows[r].any() for r in range(1, 64, 4)) and all(rows[r].all() for r in range(64) if r % 4 != 1)
    machine, _ = run("zero {za}", regs={"svcr": 2}, arrays={"za": za.tobytes()})
    assert not machine.state.za.any()


@pytest.mark.parametrize("svcr, missing", [(0, "PSTATE.SM is 0"), (2, "PSTATE.SM is 0"), (1, "PSTATE.ZA is 0")])
def test_a_dot_with_its_mode_off_is_undefined_naming_instruction_index_and_rule(svcr, missing):
    machine, result = run(f"mov x8, #1\n{DOT}\nret", regs={"svcr": svcr})
    fault = result.fault
    assert fault.kind == "UNDEFINED" and fault.index == 1 and missing in fault.rule
    assert "udot" in fault.instruction
    assert missing in str(fault) and "instruction 1" in str(fault)


def test_zero_needs_za_only():
    assert run("zero {za}", regs={"svcr": 2})[1].fault is None
    assert run("zero {za}", regs={"svcr": 1})[1].fault.kind == "UNDEFINED"


def test_an_i16i64_dot_without_the_feature_is_undefined():
    line = "udot za.d[w8, 0, vgx4], {z0.h-z3.h}, z4.h"
    assert run(line, regs={"svcr": 3})[1].fault is None
    fault = run(line, regs={"svcr": 3}, features=["SME2"])[1].fault
    assert fault.kind == "UNDEFINED" and "SME_I16I64" in fault.rule
    assert run(DOT, regs={"svcr": 3}, features=["SME2"])[1].fault is None


def test_a_program_ends_at_ret_or_at_its_end():
    machine, result = run("mov x1, #1\nret\nmov x1, #2")
    assert result.halted and machine.state.x[1] == 1 and result.steps == 2
    machine, result = run("mov x1, #1\nmov x2, #2")
    assert result.halted and machine.state.x[2] == 2


def test_udf_is_undefined():
    fault = run("nop\n.inst 0x00000005")[1].fault
    assert fault.kind == "UNDEFINED" and fault.index == 1 and "permanently undefined" in fault.rule


def test_a_load_from_unmapped_memory_is_a_translation_fault_naming_the_address():
    fault = run("mov x1, #0x9000\nldr x0, [x1, #16]")[1].fault
    assert fault.kind == "TRANSLATION" and fault.address == 0x9010 and fault.index == 1


# ---- configuration -------------------------------------------------------------------------------------


@pytest.mark.parametrize("svl", [128, 256, 512, 1024, 2048])
def test_every_svl_sizes_the_state(svl):
    config = ISA.configure({"svl": svl})
    sizes = {spec.name: spec.size for spec in ISA.arrays(config)}
    assert sizes["za"] == (svl // 8) ** 2 and sizes["z31"] == svl // 8 and sizes["p15"] == svl // 64
    assert sizes["zt0"] == 64 and sizes["ffr"] == svl // 64


def test_the_default_configuration():
    assert ISA.configure({}) == {"svl": 512, "features": ["SME2", "SME2p1", "SME_I16I64", "SME_F64F64", "SME_F16F16", "SME_B16B16", "SME_MOP4"]}
    assert ISA.configure({"svl": "256"})["svl"] == 256


@pytest.mark.parametrize("config, words", [({"svl": 384}, "384"), ({"svl": 64}, "64"), ({"cpu": "x"}, "cpu"),
                                           ({"features": ["SVE9"]}, "SVE9")])
def test_a_bad_configuration_is_one_clear_error(config, words):
    with pytest.raises(ConfigError) as error:
        ISA.configure(config)
    assert words in str(error.value)


def test_state_from_observed_gives_another_backends_state_and_its_writes():
    from isasim.core.trace import parse_init

    machine, _ = run("nop", regs={"svcr": 3})
    observed = {"regs": {"x3": 7, "svcr": 3}, "arrays": {"za": bytes([1]) * 4096, "z2": bytes([2]) * 64}}
    init = parse_init({"memory": [{"addr": "0x1000", "hex": "00" * 8}]})
    state, writes = ISA.state_from_observed(observed, machine.state, None, init)
    assert state.x[3] == 7 and state.za.all() and state.z[2].all() and state.sm and state.za_enabled
    assert {str(w.where) for w in writes} == {"x3", "z2"} | {f"za[{i}]" for i in range(64)}
    assert not machine.state.za.any()  # the previous state is left as it was

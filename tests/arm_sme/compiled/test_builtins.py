"""The built-ins a compiled function calls (issue 28): memset, memcpy, memmove, abort and the SME ABI support
routines (__arm_tpidr2_save, __arm_tpidr2_restore, __arm_za_disable, __arm_sme_state, __arm_get_current_vg, and
__arm_sme_state_size, __arm_sme_save, __arm_sme_restore of __arm_agnostic("sme_za_state") functions),
each one traced step that returns to x30 (isasim/arm_sme/semantics/builtins.py).

A program here is the built-in's name as its one line (as a recorded trace of a compiled function writes it),
x30 the address after it, so the step returns and the run ends, as the call of a function isasim runs does.
The expected states are the AAPCS64 SME ABI's lazy-save scheme worked by hand (examples); the runs that need an
oracle are compared with QEMU running the same words through the object harness, where each built-in's word
is a branch to the harness's own routine (isasim/arm_sme/oracle/object_routines.S), at SVL 128, 512 and 2048.
"""

from __future__ import annotations

import numpy as np
import pytest

from isasim.core.isa import get_isa
from isasim.core.machine import Machine
from isasim.core.trace import Init

BUF, DST, BLOCK = 0x100000, 0x200000, 0x300000
SVLS = (128, 512, 2048)


def run_builtin(name: str, svl: int, regs: dict, memory: list, za: bytes | None = None):
    isa = get_isa("arm_sme")
    config = isa.configure({"svl": svl})
    program = isa.assemble(name + "\n")
    regs = {"x30": program.end, **regs}
    init = Init(regs=regs, memory=memory, arrays={"za": za} if za is not None else {})
    machine = Machine("arm_sme", config)
    machine.load_init(program, init)
    result = machine.run(10)
    return machine, result, (config, program, init)


def block(buffer: int, slices: int, reserved: bytes = bytes(6)) -> bytes:
    return buffer.to_bytes(8, "little") + slices.to_bytes(2, "little") + reserved


def za_pattern(svl: int, seed: int = 3) -> bytes:
    return np.random.default_rng(seed + svl).integers(0, 256, (svl // 8) ** 2, dtype=np.uint8).tobytes()


@pytest.mark.parametrize("svl", SVLS)
def test_memset_memcpy_memmove(svl):
    machine, result, _ = run_builtin("memset", svl, {"x0": DST + 3, "x1": 0x1A5, "x2": 37},
                                     [(DST, bytes(64), True)])
    assert result.fault is None and machine.halted and result.steps == 1
    assert machine.memory.read(DST, 64) == bytes(3) + b"\xa5" * 37 + bytes(24)
    assert machine.state.x[0] == DST + 3 and machine.state.x[2] == 37
    data = bytes(range(64))
    for name in ("memcpy", "memmove"):  # dest above src, overlapping: as if through a temporary
        machine, result, _ = run_builtin(name, svl, {"x0": DST + 5, "x1": DST, "x2": 40}, [(DST, data, True)])
        assert result.fault is None
        assert machine.memory.read(DST, 64) == data[:5] + data[:40] + data[45:]
        assert machine.state.x[0] == DST + 5


@pytest.mark.parametrize("svl", SVLS)
def test_tpidr2_save_commits_za_to_the_buffer(svl):
    svlb, za = svl // 8, za_pattern(svl)
    machine, result, _ = run_builtin("__arm_tpidr2_save", svl, {"svcr": 3, "tpidr2_el0": BLOCK},
                                     [(BUF, bytes(svlb * svlb), True), (BLOCK, block(BUF, svlb), True)], za)
    assert result.fault is None
    assert machine.memory.read(BUF, svlb * svlb) == za
    assert machine.state.tpidr2 == BLOCK and machine.state.za_enabled  # the caller clears TPIDR2_EL0 after it
    # three slices only; TPIDR2_EL0 zero: nothing to save
    machine, _, _ = run_builtin("__arm_tpidr2_save", svl, {"svcr": 3, "tpidr2_el0": BLOCK},
                                [(BUF, bytes(svlb * svlb), True), (BLOCK, block(BUF, 3), True)], za)
    assert machine.memory.read(BUF, svlb * svlb) == za[:3 * svlb] + bytes(svlb * (svlb - 3))
    machine, _, _ = run_builtin("__arm_tpidr2_save", svl, {"svcr": 3},
                                [(BUF, bytes(svlb * svlb), True), (BLOCK, block(BUF, svlb), True)], za)
    assert machine.memory.read(BUF, svlb * svlb) == bytes(svlb * svlb)


@pytest.mark.parametrize("svl", SVLS)
def test_tpidr2_restore_and_za_disable(svl):
    svlb = svl // 8
    saved = za_pattern(svl, 11)
    machine, result, _ = run_builtin("__arm_tpidr2_restore", svl, {"svcr": 3, "x0": BLOCK},
                                     [(BUF, saved, True), (BLOCK, block(BUF, svlb), True)])
    assert result.fault is None and machine.state.za.tobytes() == saved
    za = za_pattern(svl)
    machine, result, _ = run_builtin("__arm_za_disable", svl, {"svcr": 3, "tpidr2_el0": BLOCK},
                                     [(BUF, bytes(svlb * svlb), True), (BLOCK, block(BUF, svlb), True)], za)
    assert result.fault is None
    assert machine.memory.read(BUF, svlb * svlb) == za
    assert machine.state.tpidr2 == 0 and not machine.state.za_enabled and machine.state.sm


@pytest.mark.parametrize("svl", SVLS)
def test_sme_state_and_current_vg(svl):
    machine, _, _ = run_builtin("__arm_sme_state", svl, {"svcr": 2, "tpidr2_el0": BLOCK}, [])
    assert machine.state.x[0] == (1 << 63) | 2 and machine.state.x[1] == BLOCK
    machine, _, _ = run_builtin("__arm_get_current_vg", svl, {"svcr": 1}, [])
    assert machine.state.x[0] == svl // 64
    machine, _, _ = run_builtin("__arm_get_current_vg", svl, {}, [])
    assert machine.state.x[0] == 0  # not streaming, and isasim's default core has no SVE


def test_aborts_are_faults_naming_the_rule():
    svlb = 16
    _m, result, _ = run_builtin("abort", 128, {}, [])
    assert result.fault.kind == "abort" and result.fault.index == 0
    _m, result, _ = run_builtin("__arm_tpidr2_save", 128, {"svcr": 3, "tpidr2_el0": BLOCK},
                                [(BUF, bytes(svlb * svlb), True), (BLOCK, block(BUF, svlb, b"\x01" + bytes(5)), True)])
    assert result.fault.kind == "abort" and "reserved bytes" in result.fault.rule
    _m, result, _ = run_builtin("__arm_tpidr2_restore", 128, {"svcr": 3, "tpidr2_el0": BLOCK, "x0": BLOCK},
                                [(BUF, bytes(svlb * svlb), True), (BLOCK, block(BUF, svlb), True)])
    assert result.fault.kind == "abort" and "not committed" in result.fault.rule
    _m, result, _ = run_builtin("__arm_tpidr2_save", 128, {"svcr": 1, "tpidr2_el0": BLOCK},
                                [(BUF, bytes(svlb * svlb), True), (BLOCK, block(BUF, svlb), True)])
    assert result.fault.kind == "UNDEFINED" and "PSTATE.ZA is 0" in result.fault.rule


def test_a_recorded_line_assembles_back():
    isa = get_isa("arm_sme")
    program = isa.assemble("memset\n__arm_tpidr2_restore\nret\n")
    assert [i.text for i in program.instructions] == ["memset", "__arm_tpidr2_restore", "ret"]
    assert program.instructions[0].encoding == bytes.fromhex("00b10000")  # udf #0xb100: a CPU stops there


QEMU_CASES = {
    "memset": lambda svlb: ({"x0": DST + 3, "x1": 0x1A5, "x2": 37}, [(DST, bytes(64), True)], None),
    "memmove": lambda svlb: ({"x0": DST + 5, "x1": DST, "x2": 40}, [(DST, bytes(range(64)), True)], None),
    "memcpy": lambda svlb: ({"x0": DST, "x1": DST + 8, "x2": 50}, [(DST, bytes(range(64)), True)], None),
    "__arm_tpidr2_save": lambda svlb: ({"svcr": 3, "tpidr2_el0": BLOCK},
                                       [(BUF, bytes(svlb * svlb), True), (BLOCK, block(BUF, svlb - 1), True)], "za"),
    "__arm_tpidr2_restore": lambda svlb: ({"svcr": 3, "x0": BLOCK}, [(BUF, bytes(range(256)) * (svlb * svlb // 256),
                                                                      True), (BLOCK, block(BUF, svlb), True)], "za"),
    "__arm_za_disable": lambda svlb: ({"svcr": 3, "tpidr2_el0": BLOCK},
                                      [(BUF, bytes(svlb * svlb), True), (BLOCK, block(BUF, svlb), True)], "za"),
    "__arm_sme_state": lambda svlb: ({"svcr": 3, "tpidr2_el0": BLOCK}, [(BLOCK, bytes(16), True)], None),
    "__arm_get_current_vg": lambda svlb: ({"svcr": 1}, [], None),
    "__arm_sme_state_size": lambda svlb: ({}, [], None),
    "__arm_sme_save": lambda svlb: ({"svcr": 3, "x0": BUF}, [(BUF, bytes(16 + svlb * svlb + 64), True)], "za"),
    "__arm_sme_restore": lambda svlb: ({"svcr": 1, "x0": BUF},
                                       [(BUF, (1).to_bytes(16, "little") + bytes(range(256)) * (svlb * svlb // 256)
                                         + bytes(range(64)), True)], None),
}
QEMU_DORMANT = {  # __arm_sme_save of a dormant ZA commits the caller's lazy save; of no ZA, keeps nothing
    "dormant": lambda svlb: ({"svcr": 3, "x0": DST, "tpidr2_el0": BLOCK},
                             [(BUF, bytes(svlb * svlb), True), (BLOCK, block(BUF, svlb), True),
                              (DST, bytes(16 + svlb * svlb + 64), True)], "za"),
    "off": lambda svlb: ({"svcr": 1, "x0": DST}, [(DST, b"\xff" * (16 + svlb * svlb + 64), True)], None),
}


@pytest.mark.needs_qemu
@pytest.mark.parametrize("svl", SVLS)
@pytest.mark.parametrize("name", sorted(QEMU_CASES))
def test_builtin_agrees_with_qemu(name, svl):
    """The built-in and the object harness's routine leave the same state: every register (the routines
    change none but their results, NZCV included), Z, P, ZA, ZT0, TPIDR2_EL0 and the memory."""
    from isasim.core.diff import diff

    regs, memory, za = QEMU_CASES[name](svl // 8)
    regs = {**regs, "x9": 0x1234, "x16": 0x5678, "nzcv": 0x60000000}  # a routine's scratch must come back
    _m, result, (config, program, init) = run_builtin(name, svl, regs, memory, za_pattern(svl) if za else None)
    assert result.fault is None
    report = diff("arm_sme", config, program, init, a="sim", b="qemu")
    assert report.divergence is None, report.divergence.describe("sim", "qemu")


@pytest.mark.parametrize("svl", SVLS)
def test_agnostic_za_save_and_restore(svl):
    """__arm_sme_state_size, __arm_sme_save and __arm_sme_restore (a function with __arm_agnostic("sme_za_state")):
    a live ZA and ZT0 go to the block and ZA off, and come back."""
    svlb, za = svl // 8, za_pattern(svl)
    machine, _, _ = run_builtin("__arm_sme_state_size", svl, {}, [])
    size = machine.state.x[0]
    assert size == 16 + svlb * svlb + 64
    machine, result, _ = run_builtin("__arm_sme_save", svl, {"svcr": 3, "x0": BUF}, [(BUF, bytes(size), True)], za)
    assert result.fault is None and not machine.state.za_enabled
    saved = machine.memory.read(BUF, size)
    assert saved[:16] == (1).to_bytes(16, "little") and saved[16:16 + svlb * svlb] == za
    machine, result, _ = run_builtin("__arm_sme_restore", svl, {"svcr": 1, "x0": BUF}, [(BUF, saved, True)])
    assert result.fault is None and machine.state.za_enabled and machine.state.za.tobytes() == za


@pytest.mark.needs_qemu
@pytest.mark.parametrize("svl", SVLS)
@pytest.mark.parametrize("name", sorted(QEMU_DORMANT))
def test_agnostic_save_of_dormant_or_no_za_agrees_with_qemu(name, svl):
    from isasim.core.diff import diff

    regs, memory, za = QEMU_DORMANT[name](svl // 8)
    _m, result, (config, program, init) = run_builtin("__arm_sme_save", svl, regs, memory,
                                                      za_pattern(svl) if za else None)
    assert result.fault is None
    report = diff("arm_sme", config, program, init, a="sim", b="qemu")
    assert report.divergence is None, report.divergence.describe("sim", "qemu")


@pytest.mark.needs_qemu
def test_abort_agrees_with_qemu():
    from isasim.core.backends import get_backend

    _m, result, (config, program, init) = run_builtin("abort", 512, {}, [])
    outcome = get_backend("qemu", "arm_sme", program).run("arm_sme", config, program, init)
    assert (outcome.fault.kind, outcome.fault.index) == (result.fault.kind, result.fault.index) == ("abort", 0)


@pytest.mark.parametrize("name", ["memset", "__arm_tpidr2_save", "__arm_sme_restore"])
def test_explain_a_builtin(name, capsys):
    from isasim import cli

    capsys.readouterr()
    assert cli.main(["explain", name, "--isa", "arm_sme", "--no-color"]) == 0
    out = capsys.readouterr().out
    assert "called, not decoded" in out and "UDF #0xb1" in out and "PC = X[30]" in out

"""Lockstep against QEMU: the first instruction where isasim and QEMU differ, counted in executed steps.

The programs loop, so the per-step states come from straight-lined prefixes of the executed path
(isasim.arm_sme.oracle.lockstep).  Each divergence is planted in isasim by monkeypatching one
form's semantics in a way that depends on the loop counter, so it strikes in one iteration only.
"""

import json

import pytest

from isasim import cli
from isasim.arm_sme import ISA
from isasim.core.diff import diff
from isasim.core.faults import Fault
from isasim.core.trace import Init
from smeharness import plant

pytestmark = [pytest.mark.needs_qemu, pytest.mark.needs_clang]

SVL = 256
SVLB = SVL // 8
# x0 counts the iterations down from 4; steps 0-3 are the first iteration, 4-7 the second, ...
DOT_LOOP = """\
loop:
        udot za.s[w8, 0, vgx4], {z0.h-z3.h}, z4.h
        add x8, x8, #1
        sub x0, x0, #1
        cbnz x0, loop
        ldr x1, [x2]
        ret
"""
# the third ldr (step 8) reads 0x21000, past the one mapped page
FAULT_LOOP = """\
loop:
        ldr x1, [x2]
        add x2, x2, #2048
        sub x0, x0, #1
        cbnz x0, loop
"""


def dot_init() -> Init:
    arrays = {f"z{n}": bytes((n * 7 + i) % 251 for i in range(SVLB)) for n in range(5)}
    memory = [(0x20000, (0x1122334455667788).to_bytes(8, "little"), True)]
    return Init(regs={"svcr": 3, "x0": 4, "x2": 0x20000, "x8": 5}, memory=memory, arrays=arrays)


def fault_init() -> Init:
    return Init(regs={"svcr": 3, "x0": 4, "x2": 0x20000}, memory=[(0x20000, bytes(range(256)) * 16, True)])


def lockstep(text: str, init: Init):
    return diff("arm_sme", {"svl": SVL}, ISA.assemble(text), init, a="sim", b="qemu", mode="lockstep")


def corrupt_za_when_x0_is_2(context, run, instruction):
    result = run()
    state = context.state
    if state.x[0] == 2:  # the third iteration's UDOT, step 8
        za = bytearray(state.array_bytes("za"))
        za[3] ^= 0x40
        state.set_array("za", bytes(za))
    return result


def test_a_clean_loop_agrees_at_every_step():
    report = lockstep(DOT_LOOP, dot_init())
    assert report.identical, report.divergence.describe("sim", "qemu")
    assert report.steps == 18  # four iterations of four, the ldr and the ret


def test_a_planted_za_divergence_in_the_third_iteration_is_found_at_its_step(monkeypatch):
    plant(monkeypatch, "UDOT_zas_h_single_vgx4", corrupt_za_when_x0_is_2)
    report = lockstep(DOT_LOOP, dot_init())
    d = report.divergence
    assert d is not None and d.where.startswith("za"), d
    assert d.index == 8 and d.instruction.index == 0 and d.instruction.text.startswith("udot")


def test_the_final_comparison_sees_it_too_but_not_where(monkeypatch):
    # the same bug compared at the end only: found, with no step (why lockstep exists)
    plant(monkeypatch, "UDOT_zas_h_single_vgx4", corrupt_za_when_x0_is_2)
    report = diff("arm_sme", {"svl": SVL}, ISA.assemble(DOT_LOOP), dot_init(), a="sim", b="qemu")
    assert report.divergence is not None and report.divergence.index is None


def test_a_wrong_branch_decision_in_isasim_is_a_pc_divergence_at_the_next_step(monkeypatch):
    def falls_through_when_x0_is_2(context, run, instruction):
        target = run()
        return instruction.next_address if context.state.x[0] == 2 else target

    plant(monkeypatch, "CBNZ_64", falls_through_when_x0_is_2)
    report = lockstep(DOT_LOOP, dot_init())
    d = report.divergence
    # the second iteration's CBNZ is step 7: isasim goes on to the ldr, QEMU back to the udot
    program = ISA.assemble(DOT_LOOP)
    assert d is not None and d.where == "pc" and d.index == 8, d
    assert (d.a, d.b) == (program.instructions[4].address, program.instructions[0].address)


def test_a_fault_in_the_third_iteration_is_reported_at_its_step_by_both():
    report = lockstep(FAULT_LOOP, fault_init())
    assert report.identical, report.divergence.describe("sim", "qemu")
    assert report.steps == 9 and report.b_fault.kind == "TRANSLATION" and report.b_fault.index == 0
    assert report.a_fault.kind == report.b_fault.kind


def test_a_fault_isasim_misses_is_a_divergence_at_the_faulting_step(monkeypatch):
    def no_fault(context, run, instruction):
        try:
            return run()
        except Fault:
            return instruction.next_address

    plant(monkeypatch, "LDR_64_uoff", no_fault)
    report = lockstep(FAULT_LOOP, fault_init())
    d = report.divergence
    assert d is not None and d.where == "fault" and d.index == 8, d
    assert d.b == "TRANSLATION at instruction 0"


def test_qemus_states_are_the_state_after_each_step():
    # The backend's own steps, one per executed instruction with the pc of each: after step 4 (the
    # second str) x0 is 1 and the memory holds the 1 QEMU stored.
    from isasim.core.backends import get_backend

    text = "loop:\n sub x0, x0, #1\n str x0, [x2]\n cbnz x0, loop\n"
    init = Init(regs={"svcr": 3, "x0": 3, "x2": 0x20000}, memory=[(0x20000, bytes(8), True)])
    program = ISA.assemble(text)
    steps = list(get_backend("qemu", "arm_sme", program).lockstep("arm_sme", {"svl": 128}, program, init))
    assert [index for index, *_ in steps] == list(range(9))
    index, pc, observed, memory, fault = steps[4]  # the second str
    assert observed["regs"]["x0"] == 1 and memory.read(0x20000, 8) == (1).to_bytes(8, "little") and fault is None
    assert [pc for _, pc, *_ in steps[:4]] == [program.instructions[i].address for i in (0, 1, 2, 0)]


def write_case(tmp_path, text: str, init: Init) -> list[str]:
    program = tmp_path / "loop.s"
    program.write_text(text)
    regs = {name: hex(value) for name, value in init.regs.items()}
    memory = [{"addr": hex(address), "name": f"m{n}", "type": "uint8", "shape": [1, len(data)], "values": list(data)}
              for n, (address, data, _writable) in enumerate(init.memory)]
    arrays = {name: data.hex() for name, data in init.arrays.items()}
    (tmp_path / "loop.init.json").write_text(json.dumps({"config": {"svl": SVL}, "regs": regs, "memory": memory,
                                                         "arrays": arrays}))
    return [str(program), "--init", str(tmp_path / "loop.init.json"), "--isa", "arm_sme", "--no-color"]


def test_the_command_line_finds_the_planted_divergence(monkeypatch, tmp_path, capsys):
    args = write_case(tmp_path, DOT_LOOP, dot_init())
    assert cli.main(["diff", *args, "--against", "qemu", "--lockstep"]) == 0
    assert "agree (lockstep, 18 instructions)" in capsys.readouterr().out
    plant(monkeypatch, "UDOT_zas_h_single_vgx4", corrupt_za_when_x0_is_2)
    assert cli.main(["diff", *args, "--against", "qemu", "--lockstep"]) != 0
    out = capsys.readouterr().out
    assert "DIVERGENCE" in out and "after instruction 0 (udot" in out and "za" in out
    assert "at step 8 (0-based) of the run" in out  # the third iteration's udot


def test_an_instruction_outside_the_branches_that_reads_the_pc_is_refused():
    from types import SimpleNamespace

    from isasim.arm_sme.oracle.lockstep import branch_field
    from isasim.core.errors import ConfigError

    # No such form exists yet (ADR, a literal load): a CBZ that calls itself scalar stands in.
    cbz = ISA.assemble("cbz x3, done\ndone: nop\n").instructions[0]
    assert branch_field(cbz) == ("imm19", 19)
    pretender = SimpleNamespace(form=SimpleNamespace(operands=cbz.form.operands, group="scalar"), index=0,
                                text="adr x0, 1f")
    with pytest.raises(ConfigError, match="reads the pc"):
        branch_field(pretender)


def test_a_branch_to_a_register_is_refused(monkeypatch):
    from isasim.arm_sme.oracle.lockstep import executed_path
    from isasim.core.errors import ConfigError

    # No BR form exists yet: a NOP that jumps over the next instruction stands in.
    plant(monkeypatch, "NOP", lambda context, run, instruction: instruction.address + 8)
    program = ISA.assemble("nop\nnop\nnop\n")
    with pytest.raises(ConfigError, match="branches to a register's address"):
        executed_path({"svl": 128}, program, Init(regs={"svcr": 3}), 100)


def test_a_qemu_that_dies_on_a_step_is_reported_at_that_step(monkeypatch):
    # QEMU dies on any snippet of seven or more instructions: the prefix of step 6 (the second sub)
    from isasim.arm_sme.oracle import lockstep as module
    from isasim.arm_sme.oracle.qemu import OracleError

    run_many = module.run_many

    def dies_on_long_snippets(cases, *args, **kwargs):
        if any(snippet.count(".inst") >= 7 for snippet, _state in cases):
            raise OracleError("the test program under QEMU gave no result: planted")
        return run_many(cases, *args, **kwargs)

    monkeypatch.setattr(module, "run_many", dies_on_long_snippets)
    d = lockstep(DOT_LOOP, dot_init()).divergence
    assert d is not None and d.where == "fault" and d.index == 6, d
    assert d.b == "QEMU aborted at instruction 2" and d.instruction.text.startswith("sub")

"""The silicon backend's machinery on this machine's CPU: runs, faults, runaways, dead children, refusals.

The scalar subset runs on any x86-64 Linux host, so these tests exercise the real
child process, ptrace and state collection here; programs with AMX instructions
need an AMX host and are refused elsewhere with the host's reason.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys

import pytest

from isasim.core.backends import get_backend
from isasim.core.diff import diff
from isasim.core.errors import ConfigError, IsasimError
from isasim.core.trace import Init
from isasim.x86_amx import ISA
from isasim.x86_amx.oracle import PTRACE_CONT, ChildProcess, SiliconBackend, host_cpu

pytestmark = pytest.mark.needs_silicon  # tests/conftest.py

SCRATCH = 0x20000
INIT = Init(regs={"rdi": SCRATCH, "rsi": 3}, memory=[(SCRATCH, bytes(range(256)) * 16, True)])


def silicon(timeout: float = 10.0) -> SiliconBackend:
    backend = SiliconBackend()
    backend.timeout = timeout
    return backend


def test_a_scalar_program_ends_in_the_same_state_on_silicon_and_in_the_simulator():
    program = ISA.assemble("""
        mov rax, 0x7fffffffffffffff
        add rax, 1              # OF and SF set, CF clear
        mov rbx, QWORD PTR [rdi+8]
        imul rbx, rsi
        lea rcx, [rbx+rax*2+0x10]
        sub cl, 0x81            # 8-bit wrap, AF
        mov DWORD PTR [rdi+0x40], ecx
        test rcx, rcx
        ret
    """)
    final = silicon().run("x86_amx", {"cpu": "emerald-rapids"}, program, INIT)
    assert final.fault is None
    report = diff("x86_amx", {}, program, INIT, mode="lockstep")
    assert report.identical, report.divergence.describe("sim", "silicon")
    assert report.steps == 9


def test_a_faulting_program_is_a_report_with_the_kind_and_index():
    program = ISA.assemble("mov eax, 1\nmov rbx, QWORD PTR [rdi+0x100000]\nret")
    final = silicon().run("x86_amx", {}, program, INIT)
    assert final.fault.kind == "#PF" and final.fault.index == 1 and final.fault.address == SCRATCH + 0x100000
    assert final.observed["regs"]["rax"] == 1  # the state before the faulting instruction
    # and the caller is still here to compare it with the simulator
    assert diff("x86_amx", {}, program, INIT).identical


def test_a_write_to_a_read_only_region_is_pf():
    init = Init(regs={"rdi": 0x30000}, memory=[(0x30000, bytes(4096), False)])
    program = ISA.assemble("mov DWORD PTR [rdi], 1\nret")
    final = silicon().run("x86_amx", {}, program, init)
    assert final.fault.kind == "#PF" and final.fault.index == 0
    assert diff("x86_amx", {}, program, init, mode="lockstep").identical


def test_a_runaway_loop_is_stopped_by_the_timeout():
    # the backend's run stops a loop the simulator predicts at the step limit (test_verdicts.py);
    # the watchdog is the safety net for a free run that goes on where the simulator ended
    program = ISA.assemble("top: inc rax\njmp top")
    child = ChildProcess(program, INIT, amx=False, timeout=0.5)
    try:
        outcome, fault = child.resume(PTRACE_CONT)
    finally:
        child.kill()
    assert outcome == "timeout" and fault is None


def test_a_killed_child_is_a_clear_error_and_the_caller_goes_on():
    program = ISA.assemble("top: jmp top")
    child = ChildProcess(program, INIT, amx=False, timeout=5.0)
    try:
        os.kill(child.pid, signal.SIGKILL)
        with pytest.raises(IsasimError, match="ended unexpectedly"):
            child.resume(PTRACE_CONT)
    finally:
        child.kill()
    assert silicon().run("x86_amx", {}, ISA.assemble("ret"), INIT).fault is None


def test_init_registers_reach_the_cpu_and_untouched_ones_are_zero():
    program = ISA.assemble("ret")
    regs = {name: (0x1111111111111111 * (i + 1)) % (1 << 64) for i, name in enumerate(["rax", "rbx", "r8", "r15"])}
    final = silicon().run("x86_amx", {}, program, Init(regs=regs, memory=INIT.memory))
    observed = final.observed["regs"]
    assert all(observed[k] == v for k, v in regs.items())
    assert observed["rcx"] == 0 and observed["rflags"] & 0x8D5 == 0


def test_amx_programs_are_refused_with_the_hosts_reason_where_there_is_no_amx():
    if host_cpu().amx_features:
        pytest.skip("this host has AMX")
    program = ISA.assemble("tilerelease\nret")
    with pytest.raises(ConfigError, match="AMX"):
        get_backend("silicon", "x86_amx", program)


def test_regions_that_share_a_page_with_different_permissions_are_refused():
    init = Init(memory=[(0x20000, b"\0" * 16, True), (0x20100, b"\0" * 16, False)])
    with pytest.raises(IsasimError, match="share a page"):
        silicon().run("x86_amx", {}, ISA.assemble("ret"), init)


def test_cli_diff_record_and_replay_on_silicon(tmp_path):
    src = tmp_path / "k.s"
    src.write_text("mov rax, QWORD PTR [rdi]\nadd rax, rsi\nmov QWORD PTR [rdi+8], rax\nret\n")
    init = tmp_path / "k.json"
    init.write_text('{"regs": {"rdi": "0x20000", "rsi": 5}, "memory": [{"addr": "0x20000", "size": 64}]}')

    def isasim(*args):
        return subprocess.run([sys.executable, "-m", "isasim.cli", *map(str, args)], capture_output=True, text=True,
                              timeout=120)

    done = isasim("diff", src, "--init", init, "--lockstep", "--no-color")
    assert done.returncode == 0 and "identical" in done.stdout, done.stdout + done.stderr
    out = tmp_path / "k.trace.json"
    done = isasim("record", src, "--init", init, "--backend", "silicon", "-o", out)
    assert done.returncode == 0, done.stderr
    assert '"producer": "silicon: ' in out.read_text()
    assert isasim("replay", out).returncode == 0


def test_time_on_silicon_runs_natively_and_refuses_faulting_programs():
    from isasim.x86_amx.oracle import time_on_silicon

    program = ISA.assemble("mov rcx, 100000\ntop: add rax, 3\ndec rcx\njnz top\nret")
    assert time_on_silicon(program, INIT) > 0
    with pytest.raises(IsasimError, match="faults in the simulator"):
        time_on_silicon(ISA.assemble("mov rax, QWORD PTR [rdi+0x100000]\nret"), INIT)

"""Stepping backwards keeps bounded state (checkpoints, not one record per step) and lands exactly where
stepping forwards does; Ctrl-C stops a run of steps on an instruction boundary.

The reference for "the state after N steps" is a fresh machine stepped N times from the initial state.
"""

from __future__ import annotations

import gc
import io
import os
import signal

import pytest
from rich.console import Console

from isasim.core import stepper as stepper_module
from isasim.core.errors import StepLimitExceeded
from isasim.core.machine import Machine, StepRecord
from isasim.core.stepper import Stepper
from isasim.core.trace import Init

# A scalar loop that writes memory on every pass: 64 x 5 instructions per outer pass, 323 with its tail.
LOOP = """\
mov rbx, 100000
mov rdi, 0x10000
outer:
mov rcx, 64
inner:
imul rax, rcx, 7
add rax, rbx
xor qword ptr [rdi + rcx*8 - 8], rax
dec rcx
jnz inner
dec rbx
jnz outer
ret
"""
REGION = (0x10000, bytes(512), True)


def make_stepper(**options) -> tuple[Stepper, io.StringIO]:
    program = Machine("x86_amx").assemble(LOOP)
    screen = io.StringIO()
    out = Console(file=screen, width=120, no_color=True, highlight=False)
    return Stepper("x86_amx", {}, program, Init(memory=[REGION]), out=out, max_steps=10_000_000, **options), screen


def state_after(steps: int):
    """Everything observable after ``steps`` steps from the start (registers, rip, tiles, TILECFG, memory),
    reached by the plain run loop, which stops with StepLimitExceeded when ``steps`` have run."""
    machine = Machine("x86_amx")
    machine.load(machine.assemble(LOOP), memory=[REGION])
    with pytest.raises(StepLimitExceeded):
        machine.run(max_steps=steps)
    return observed(machine)


def observed(machine: Machine):
    return machine.isa.observe(machine.state), machine.state.pc, machine.memory.snapshot(), machine.steps


def live_step_records() -> int:
    gc.collect()
    return sum(1 for thing in gc.get_objects() if isinstance(thing, StepRecord))


def test_checkpoints_stay_under_their_cap_and_no_step_records_are_kept():
    """After N steps the stepper holds O(N / interval) checkpoints, never more than the cap, and no
    per-step records (the old stepper kept one StepRecord, about 400 bytes, for every step)."""
    stepper, _ = make_stepper()
    stepper.checkpoint_interval, stepper.checkpoint_cap = 16, 8  # small, so that 6,000 steps thin them often
    records_before = live_step_records()
    most = 0
    for target in range(500, 6_001, 500):
        stepper.execute(f"goto {target}")
        assert stepper.error is None and stepper.position == target
        most = max(most, len(stepper.checkpoints))
        assert len(stepper.checkpoints) <= stepper.checkpoint_cap
        # thinning doubles the interval: the checkpoints cover the run at most cap x interval steps apart
        assert len(stepper.checkpoints) <= target // stepper.checkpoint_interval + 1
        assert target < stepper.checkpoint_cap * stepper.checkpoint_interval
    assert most == stepper.checkpoint_cap and stepper.checkpoint_interval == 1024
    assert all(step % stepper.checkpoint_interval == 0 for step in stepper.checkpoints) and 0 in stepper.checkpoints
    assert live_step_records() - records_before <= 2


def test_the_default_bound_holds_past_the_first_thinning():
    """With the default interval and cap: 70,000 steps pass 64 x 1,000, so the checkpoints are thinned
    once, to one every 2,000 steps."""
    stepper, _ = make_stepper()
    assert stepper.checkpoint_cap == stepper_module.MAX_CHECKPOINTS  # 512 bytes of memory: far under the budget
    stepper.execute("goto 70000")
    assert stepper.position == 70_000
    assert stepper.checkpoint_interval == 2 * stepper_module.FIRST_CHECKPOINT_INTERVAL
    assert len(stepper.checkpoints) == 70_000 // 2_000 + 1
    stepper.execute("back 1")
    assert observed(stepper.machine) == state_after(69_999)


@pytest.mark.consistency
@pytest.mark.parametrize("back", [1, 37, 1_000, 2_047, 2_999, 3_000])
def test_back_lands_on_the_state_that_stepping_forwards_reaches(back):
    stepper, screen = make_stepper()
    stepper.checkpoint_interval, stepper.checkpoint_cap = 100, 8  # thinned twice by step 3,000
    stepper.execute("goto 3000")
    stepper.execute(f"back {back}")
    assert stepper.error is None and stepper.position == 3_000 - back
    assert observed(stepper.machine) == state_after(3_000 - back)
    # and stepping on from there is stepping on from the true state
    stepper.execute("goto 3001")
    assert observed(stepper.machine) == state_after(3_001)
    assert "replayed from" in screen.getvalue()


def test_back_past_the_start_is_an_error_and_changes_nothing():
    stepper, screen = make_stepper()
    stepper.execute("goto 50")
    stepper.execute("back 51")
    assert stepper.error == "there are only 50 steps to go back over" and stepper.position == 50
    assert observed(stepper.machine) == state_after(50)


def interrupt_at(stepper, call: int, action):
    """Make the stepper's machine run ``action`` at its ``call``-th step, before that step executes;
    returns the real step function."""
    real_step = stepper.machine.step
    calls = 0

    def step():
        nonlocal calls
        calls += 1
        if calls == call:
            action()
        return real_step()

    stepper.machine.step = step
    return real_step


def test_ctrl_c_during_continue_stops_on_an_instruction_boundary():
    """SIGINT while 'c' runs: the stepper stops after the current instruction and the session goes on."""
    stepper, screen = make_stepper()
    # delivered to the stepper's handler before the next step
    real_step = interrupt_at(stepper, 700, lambda: os.kill(os.getpid(), signal.SIGINT))
    assert stepper.execute("c") is True and stepper.error is None
    assert "interrupted at step 700" in screen.getvalue()
    assert stepper.position == 700 and observed(stepper.machine) == state_after(700)
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler  # the handler is put back
    stepper.execute("s")
    assert stepper.position == 701 and observed(stepper.machine) == state_after(701)


def test_keyboard_interrupt_in_the_middle_of_an_instruction_goes_back_to_the_last_whole_step():
    """A KeyboardInterrupt the handler did not catch (raised inside a step, after it wrote a register)
    returns to the prompt with the state of the last completed step, not a half-executed one."""
    stepper, screen = make_stepper()

    def half_a_step():
        stepper.machine.state.write_register("rax", 0xDEAD)  # the instruction had begun
        raise KeyboardInterrupt

    real_step = interrupt_at(stepper, 400, half_a_step)
    assert stepper.execute("c") is True
    assert "interrupted at step 399" in screen.getvalue()
    stepper.machine.step = real_step
    assert stepper.position == 399 and observed(stepper.machine) == state_after(399)

"""One trace, one verdict: `run`, `replay`, `record` and `diff` agree (issue 9, items 7, 8 and 9).

7. `run` on a trace recorded with --steps checks it as `replay` does (it used to build its
   result without step records and report every such trace as FAIL).
8. RFLAGS in a trace is the program's value before a fault's delivery (RF clear), and every
   comparison looks at the same bits (the ISA's ``comparable``: the status flags).
9. The silicon backend honours --max-steps, and `record` never writes, nor blames, a trace it
   could not read back.

The silicon tests run the scalar subset on this machine's CPU and skip where the silicon
backend cannot run (not x86-64 Linux), saying why.
"""

from __future__ import annotations

import json

import pytest

from isasim.cli import main
from isasim.core.backends import Outcome
from isasim.core.faults import Fault
from isasim.x86_amx import ISA
from isasim.x86_amx.oracle import RF, SiliconBackend, SiliconMemory
from isasim.x86_amx.state import STATUS_FLAGS

needs_silicon = pytest.mark.needs_silicon  # tests/conftest.py

SCALAR = "mov rax, QWORD PTR [rdi]\nadd rax, 7\nmov QWORD PTR [rdi+8], rax\nsub rax, rax\nret\n"
INIT = {"regs": {"rdi": "0x20000"}, "memory": [{"addr": "0x20000", "hex": "05" + "00" * 15}]}
# a load from an unmapped address: #PF at instruction 1, after instruction 0 has changed rax
FAULTING = "mov eax, 1\nmov rbx, QWORD PTR [rax]\nret\n"
RUNAWAY = "top:\n  inc rax\n  jmp top\n"


def isasim(capsys, *args) -> tuple[int, str, str]:
    status = main([*map(str, args), "--no-color"])
    captured = capsys.readouterr()
    return status, captured.out, captured.err


@pytest.fixture
def files(tmp_path):
    def write(name: str, text: str):
        path = tmp_path / name
        path.write_text(text)
        return path

    write("init.json", json.dumps(INIT))
    write("empty.json", "{}")
    return write, tmp_path


# ---- item 7: run and replay give the same verdict -------------------------------------


@pytest.mark.consistency
def test_run_passes_a_trace_recorded_with_steps_as_replay_does(files, capsys):
    write, tmp = files
    program = write("k.s", SCALAR)
    status, _out, err = isasim(capsys, "record", program, "--init", tmp / "init.json", "--steps",
                               "-o", tmp / "k.trace.json")
    assert status == 0, err
    assert json.loads((tmp / "k.trace.json").read_text())["steps"]
    status, out, _ = isasim(capsys, "replay", tmp / "k.trace.json")
    assert status == 0 and "ok" in out
    status, out, _ = isasim(capsys, "run", tmp / "k.trace.json")
    assert status == 0 and "PASS" in out, out


@pytest.mark.consistency
def test_run_and_replay_report_the_same_wrong_step(files, capsys):
    write, tmp = files
    isasim(capsys, "record", write("k.s", SCALAR), "--init", tmp / "init.json", "--steps", "-o", tmp / "k.trace.json")
    data = json.loads((tmp / "k.trace.json").read_text())
    data["steps"][1]["writes"][0]["new"] = "0x1234"  # step 1 writes rax: claim another value
    (tmp / "k.trace.json").write_text(json.dumps(data))
    status, replayed, _ = isasim(capsys, "replay", tmp / "k.trace.json")
    assert status == 1
    status, ran, _ = isasim(capsys, "run", tmp / "k.trace.json")
    assert status == 1 and "FAIL: step 1 (add rax,0x7): reg rax: expected 0x1234" in " ".join(ran.split())
    assert "step 1 (add rax,0x7): reg rax: expected 0x1234" in " ".join(replayed.split())


# ---- item 8: RFLAGS, RF and one comparison ----------------------------------------------


def test_replay_compares_rflags_on_the_bits_diff_compares(files, capsys):
    """An RF bit in an expectation (as an earlier silicon recording stored it) is not compared;
    a status flag is, in the final state and in a step's flags write."""
    write, tmp = files
    trace = {"format": "isasim-trace/1", "isa": "x86_amx", "producer": "silicon: test", "program": ["ret"],
             "init": {"regs": {}, "memory": []}, "expect": {"regs": {"rflags": hex(0x202 | RF)}}}
    write("rf.trace.json", json.dumps(trace))
    status, out, _ = isasim(capsys, "replay", tmp / "rf.trace.json")
    assert status == 0, out
    trace["expect"]["regs"]["rflags"] = hex(0x202 | 1)  # CF: a status flag the program did not set
    write("cf.trace.json", json.dumps(trace))
    status, out, _ = isasim(capsys, "replay", tmp / "cf.trace.json")
    assert status == 1 and "expect.regs.rflags" in out
    assert ISA.comparable({"regs": {"rflags": 0x202 | RF | 0xFFF}}, None)["regs"]["rflags"] == STATUS_FLAGS


@needs_silicon
def test_a_fault_recorded_on_silicon_replays_and_runs(files, capsys):
    write, tmp = files
    program = write("pf.s", FAULTING)
    for extra, name in (((), "pf.trace.json"), (("--steps",), "pf-steps.trace.json")):
        out_file = tmp / name
        status, _out, err = isasim(capsys, "record", program, "--init", tmp / "empty.json", "--backend", "silicon",
                                   *extra, "-o", out_file)
        assert status == 0, err
        data = json.loads(out_file.read_text())
        assert data["expect"]["fault"] == {"kind": "#PF", "index": 1}
        assert int(data["expect"]["regs"]["rflags"], 0) & RF == 0, "RF set by the fault's delivery was recorded"
        status, out, _ = isasim(capsys, "replay", out_file)
        assert status == 0, out
        status, out, _ = isasim(capsys, "run", out_file)
        assert status == 0 and "PASS" in out, out
    status, out, _ = isasim(capsys, "diff", program, "--init", tmp / "empty.json", "--lockstep")
    assert status == 0 and "identical" in out


# ---- item 9: the step limit on silicon, and no trace that cannot be read back ---------------


@needs_silicon
def test_recording_a_runaway_loop_on_silicon_stops_at_the_step_limit_like_the_simulator(files, capsys):
    write, tmp = files
    program = write("loop.s", RUNAWAY)
    status, _out, simulated = isasim(capsys, "run", program, "--max-steps", 50)
    assert status == 2 and "step limit of 50" in simulated
    out_file = tmp / "loop.trace.json"
    status, _out, err = isasim(capsys, "record", program, "--backend", "silicon", "--max-steps", 50, "-o", out_file)
    assert status == 2 and err == simulated
    assert "expect.fault" not in err and not out_file.exists()


@needs_silicon
def test_a_silicon_run_that_timed_out_is_not_recorded_and_the_error_names_the_program(files, capsys, monkeypatch):
    """The watchdog ends a free run the simulator finished but the CPU did not: no trace, and an
    error about the program, not about the output file that was never written."""
    write, tmp = files
    program = write("k.s", "ret\n")

    def timed_out_run(self, isa, config, program, init, **options):
        return Outcome({}, SiliconMemory(init.memory, {}), Fault("timeout", "the program was still running after "
                                                                           "10 s on silicon"), None, timed_out=True)

    monkeypatch.setattr(SiliconBackend, "run", timed_out_run)
    out_file = tmp / "k.trace.json"
    status, _out, err = isasim(capsys, "record", program, "--backend", "silicon", "-o", out_file)
    assert status == 2 and len(err.strip().splitlines()) == 1
    assert err.startswith(f"isasim: error: {program}: not recorded: the program was still running after 10 s")
    assert "expect.fault" not in err and not out_file.exists()


def _recorded_on_the_simulator(capsys, write, tmp, name: str, program: str) -> dict:
    status, _out, err = isasim(capsys, "record", write(name + ".s", program), "--init", tmp / "empty.json", "--steps",
                               "-o", tmp / (name + ".trace.json"))
    assert status == 0, err
    return json.loads((tmp / (name + ".trace.json")).read_text())


def _replays(capsys, write, tmp, data: dict) -> tuple[bool, str]:
    path = write("edited.trace.json", json.dumps(data))
    status, out, _ = isasim(capsys, "replay", path)
    run_status, ran, _ = isasim(capsys, "run", path)
    assert (status == 0) == (run_status == 0) and (run_status == 0) == ("PASS" in ran), (out, ran)
    return status == 0, " ".join(out.split())


def test_rf_in_a_steps_flags_write_is_not_compared_but_a_status_flag_is(files, capsys):
    """Earlier silicon recordings stored the delivery's RF as a flags write of the faulting step."""
    write, tmp = files
    data = _recorded_on_the_simulator(capsys, write, tmp, "pf", FAULTING)
    data["producer"] = "silicon: unknown (family 25 model 1)"
    data["expect"]["regs"]["rflags"] = hex(0x202 | RF)
    data["steps"][1]["writes"].append({"kind": "flags", "where": "rflags", "old": "0x202", "new": hex(0x202 | RF)})
    assert _replays(capsys, write, tmp, data)[0]
    data["steps"][1]["writes"][-1]["new"] = hex(0x202 | 1)  # CF: a status flag, compared
    ok, out = _replays(capsys, write, tmp, data)
    assert not ok and "step 1 (mov rbx,QWORD PTR [rax]): flags rflags: expected 0x203" in out


IMUL_ZERO = "mov rax, 3\nmov rbx, 0\nimul rax, rbx\nret\n"  # SF, ZF, AF, PF undefined after IMUL


@pytest.mark.parametrize("producer, compared", [
    ("silicon: Intel(R) Xeon(R) Processor, family 6 model 207 (0xcf) stepping 2", True),  # the modelled CPU
    ("silicon: emerald-rapids (family 6 model 207)", True),
    ("silicon: unknown (family 25 model 1)", False),  # another CPU: its undefined flags are its own
])
def test_undefined_flags_are_compared_only_against_the_cpu_the_simulator_models(files, capsys, producer, compared):
    write, tmp = files
    data = _recorded_on_the_simulator(capsys, write, tmp, "imul", IMUL_ZERO)
    data["producer"] = producer
    flags = int(data["expect"]["regs"]["rflags"], 0)
    other = flags ^ 0x04  # PF, undefined after IMUL: what another CPU may well leave
    data["expect"]["regs"]["rflags"] = hex(other)
    step = data["steps"][2]
    step["writes"] = [w for w in step["writes"] if w["kind"] != "flags"]
    step["writes"].append({"kind": "flags", "where": "rflags", "old": "0x202", "new": hex(other)})
    ok, out = _replays(capsys, write, tmp, data)
    assert ok != compared, out
    if compared:
        assert "step 2 (imul rax,rbx): flags rflags" in out
    data["expect"]["regs"]["rflags"] = hex(flags ^ 0x01)  # CF is defined after IMUL: always compared
    step["writes"][-1]["new"] = hex(flags ^ 0x01)
    assert not _replays(capsys, write, tmp, data)[0]


@needs_silicon
def test_a_trace_recorded_on_this_cpu_replays_where_diff_says_identical(files, capsys):
    """diff leaves out the flags the SDM leaves undefined; so does replay of a trace measured on a
    CPU the simulator does not model (this host, unless it is the modelled Intel part)."""
    write, tmp = files
    program = write("imul.s", IMUL_ZERO)
    status, out, _ = isasim(capsys, "diff", program, "--init", tmp / "empty.json", "--lockstep")
    assert status == 0 and "identical" in out
    for extra in ((), ("--steps",)):
        out_file = tmp / f"imul{len(extra)}.trace.json"
        status, _out, err = isasim(capsys, "record", program, "--init", tmp / "empty.json", "--backend", "silicon",
                                   *extra, "-o", out_file)
        assert status == 0, err
        status, out, _ = isasim(capsys, "replay", out_file)
        assert status == 0, out


@needs_silicon
@pytest.mark.parametrize("claimed", ["silicon: emerald-rapids (family 6 model 207)",  # the modelled CPU
                                     "silicon: unknown (family 25 model 1)"])
def test_diff_and_replay_agree_on_undefined_flags_whichever_cpu_this_is(files, capsys, monkeypatch, claimed):
    """On the CPU the simulator models both compare IMUL's undefined flags, elsewhere neither does; the
    host is made to claim each, so the verdicts must agree whatever this CPU really leaves there."""
    write, tmp = files
    monkeypatch.setattr(SiliconBackend, "producer", lambda self: claimed)
    program = write("imul.s", IMUL_ZERO)
    diff_status, diffed, _ = isasim(capsys, "diff", program, "--init", tmp / "empty.json")
    lockstep_status, _out, _ = isasim(capsys, "diff", program, "--init", tmp / "empty.json", "--lockstep")
    out_file = tmp / "imul.trace.json"
    status, _out, err = isasim(capsys, "record", program, "--init", tmp / "empty.json", "--backend", "silicon",
                               "-o", out_file)
    assert status == 0, err
    replay_status, replayed, _ = isasim(capsys, "replay", out_file)
    assert diff_status == lockstep_status == replay_status, (diffed, replayed)


@pytest.mark.parametrize("numbers", ["family 6 model " + "7" * 5000, "family ٦ model ٢٠٧"])
def test_a_producer_with_absurd_family_or_model_numbers_names_no_cpu(numbers):
    """Found by tests/fuzz: a 5,000-digit model in a producer crashed replay (Python's int-string limit)."""
    assert SiliconBackend().cpu_of_producer(f"silicon: somebody ({numbers})") is None
    assert SiliconBackend().cpu_of_producer("silicon: Xeon (family 6 model 207)") == "emerald-rapids"

"""A fuzz campaign cut into shards (isasim.core.campaign) run in this process, in two local worker processes
and on a two-worker Dask LocalCluster (processes, on loopback): the same seed gives the same campaign
everywhere, a worker killed mid-campaign loses nothing and counts nothing twice, a divergence found on a
worker comes back with a trace that replays here, and a killed campaign resumes from its directory.

The other backend is the simulator with one bug planted on purpose (rax one too high after a TDPBUUD into
tmm6 ran), so that there are divergences to find, shrink and ship back.  The cluster's workers are other
processes that know nothing of this test's set-up: the shards reach them through a runner defined here,
which registers the planted backend in the worker before it runs the shard.
"""

from __future__ import annotations

import functools
import json
import os
from pathlib import Path

import pytest

from isasim.cli import main
from isasim.core import campaign
from isasim.core.backends import BACKENDS, SimulatorBackend
from isasim.core.errors import ConfigError, IsasimError
from isasim.core.fuzz.runner import run_shard
from isasim.core.parallel import Pool, local_cluster
from isasim.x86_amx import fuzz

PLANTED = "planted-tdpbuud-tmm6"
SEED, CASES, SHARD = 4, 240, 30  # 8 shards of amx cases


class PlantedTdpbuudTmm6(SimulatorBackend):
    """The simulator, but rax ends one too high when a TDPBUUD into tmm6 ran without a fault (rare enough that
    seed 4 meets it in two of its first shards, and so stops after the second)."""

    name = PLANTED

    def run(self, isa, config, program, init, **options):
        final = super().run(isa, config, program, init, **{**options, "keep_records": True})
        if any(r.fault is None and r.instruction.mnemonic == "tdpbuud"
               and r.instruction.operands[0].name == "tmm6" for r in final.records):
            final.observed["regs"]["rax"] = (final.observed["regs"]["rax"] + 1) & ((1 << 64) - 1)
        return final


def planted_runner(shard, generator, settings):
    """Runs a shard wherever it lands, the planted backend registered there first."""
    BACKENDS.setdefault(PLANTED, PlantedTdpbuudTmm6())
    return run_shard(shard, generator, settings)


def killing_runner(flag: str, victim: str, shard, generator, settings):
    """planted_runner, but the first attempt at shard ``victim`` kills the worker process running it (the flag
    file says it has been done): what a worker that crashes or loses its machine looks like to the campaign."""
    if shard.key == victim and not os.path.exists(flag):
        Path(flag).write_text("killed\n")
        os._exit(17)
    return planted_runner(shard, generator, settings)


def failing_runner(log: str, fail_at: str | None, shard, generator, settings):
    """planted_runner, which notes each shard it runs; shard ``fail_at`` stops the campaign as a kill would."""
    with open(log, "a", encoding="utf-8") as f:
        f.write(shard.key + "\n")
    if shard.key == fail_at:
        raise KeyboardInterrupt
    return planted_runner(shard, generator, settings)


@pytest.fixture(scope="module", autouse=True)
def planted():
    with pytest.MonkeyPatch.context() as patch:
        patch.setitem(BACKENDS, PLANTED, PlantedTdpbuudTmm6())
        yield


@pytest.fixture(scope="module")
def cluster():
    pytest.importorskip("distributed", reason="the cluster tests need dask.distributed (pip install 'isasim[cluster]')")
    with local_cluster(2) as local:
        yield local


def run(out: Path, *, workers=None, pool=None, runner=planted_runner, **options):
    options = {"cases": CASES, "shard_size": SHARD, "max_divergences": 3, **options}
    return fuzz.run_fuzz(options.pop("cases"), SEED, against=PLANTED, isa_subset="amx", out_dir=out, workers=workers,
                         pool=pool, runner=runner, shrink_candidates=40, shrink_seconds=600, **options)


def outcome(summary) -> dict:
    """Everything a campaign found, less where and how fast it ran."""
    return {"cases": dict(summary.cases), "instructions": dict(summary.instructions),
            "elements": dict(summary.elements), "runs": summary.runs, "shards": summary.shards,
            "divergent": summary.divergent_cases,
            "divergences": [(d.subset, d.case, d.description, d.program, d.notes, d.shrunk, d.original_size,
                             Path(d.trace).read_text()) for d in summary.divergences]}


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    """The campaign run in this process, one shard after the other."""
    summary = run(tmp_path_factory.mktemp("reference"), workers=1)
    assert summary.where == "this process"
    return summary


def test_the_reference_campaign_finds_the_planted_bug_and_stops_after_the_shard_that_reaches_the_limit(reference):
    assert reference.divergent_cases >= 3 and reference.divergences, reference
    assert 1 <= reference.shards < CASES // SHARD  # it stopped early, after a whole shard
    assert reference.total_cases == reference.shards * SHARD
    for found in reference.divergences:
        assert found.shrunk and found.program[-1] == "ret" and found.description.startswith("rax: sim ")
        assert any(line.startswith("tdpbuud tmm6") for line in found.program), found.program


def test_two_local_processes_run_the_same_campaign(reference, tmp_path):
    summary = run(tmp_path, workers=2)
    assert summary.where == "2 local processes"
    assert outcome(summary) == outcome(reference)


def test_a_two_worker_cluster_runs_the_same_campaign(reference, tmp_path, cluster):
    with Pool.open(cluster=cluster.scheduler_address) as pool:
        summary = run(tmp_path, pool=pool)
    assert summary.where.startswith(f"the Dask cluster at {cluster.scheduler_address} (2 workers)")
    assert outcome(summary) == outcome(reference)
    assert all("Dask worker tcp://127.0.0.1:" in host for host in summary.hosts)


def test_a_divergence_found_on_a_cluster_worker_comes_back_with_a_trace_that_replays_here(tmp_path, cluster):
    with Pool.open(cluster=cluster.scheduler_address) as pool:
        summary = run(tmp_path, pool=pool, max_divergences=1)
    found = summary.divergences[0]
    assert "Dask worker tcp://127.0.0.1:" in found.worker and found.shard.startswith("amx-")
    assert Path(found.trace).parent == tmp_path  # written here, from what the worker sent
    assert main(["replay", "--no-color", found.trace]) == 1  # the simulator gives rax without the planted + 1
    assert main(["replay", "--no-color", "--backend", PLANTED, found.trace]) == 0


@pytest.mark.parametrize("where", ["local", "cluster"])
def test_a_worker_killed_mid_campaign_loses_nothing_and_counts_nothing_twice(reference, tmp_path, where, request):
    flag = tmp_path / "killed"
    victim = "amx-000001"  # a shard the reference merges
    runner = functools.partial(killing_runner, str(flag), victim)
    if where == "local":
        summary = run(tmp_path / "out", workers=2, runner=runner)
    else:
        cluster = request.getfixturevalue("cluster")
        with Pool.open(cluster=cluster.scheduler_address) as pool:
            summary = run(tmp_path / "out", pool=pool, runner=runner)
    assert flag.read_text() == "killed\n"  # a worker did die running it
    assert outcome(summary) == outcome(reference)


def test_a_killed_campaign_resumes_from_its_directory_running_only_what_it_had_not_finished(reference, tmp_path):
    out, log = tmp_path / "campaign", tmp_path / "ran.txt"
    with pytest.raises(KeyboardInterrupt):
        run(out, workers=1, runner=functools.partial(failing_runner, str(log), "amx-000001"), journal=True)
    state = json.loads((out / "campaign.json").read_text())
    assert state["finished"] is False and sorted(p.name for p in (out / "shards").iterdir()) == ["amx-000000.json"]
    log.write_text("")
    summary = run(out, workers=1, runner=functools.partial(failing_runner, str(log), None), journal=True)
    assert "amx-000000" not in log.read_text().split()  # taken from the directory, not run again
    assert any(note.startswith(f"resumed the campaign in {out}: 1 finished shards") for note in summary.notes)
    assert outcome(summary) == outcome(reference)
    assert json.loads((out / "campaign.json").read_text())["finished"] is True
    traces = sorted(p.name for p in out.glob("*.trace.json"))
    assert len(traces) == len(summary.divergences)  # each written once, though its shard was merged twice


def test_a_different_campaign_in_an_unfinished_directory_is_refused_and_fresh_starts_over(tmp_path):
    out, log = tmp_path / "campaign", tmp_path / "ran.txt"
    with pytest.raises(KeyboardInterrupt):
        run(out, workers=1, runner=functools.partial(failing_runner, str(log), "amx-000001"), journal=True)
    with pytest.raises(ConfigError, match="holds an unfinished campaign .*seed 4, 240 cases.*not this one.*"
                                          "seed 4, 60 cases.*--fresh"):
        run(out, workers=1, cases=60, journal=True)
    summary = run(out, workers=1, cases=60, journal=True, fresh=True, max_divergences=100)
    assert summary.total_cases == 60 and not summary.notes


def test_until_a_divergence_runs_shards_until_the_first_and_a_duration_stops_starting_them(tmp_path):
    summary = run(tmp_path, workers=1, cases=None, max_divergences=1)
    assert summary.divergent_cases == 1 and summary.total_cases == summary.divergences[0].case + 1  # it stops there
    timed = fuzz.run_fuzz(None, SEED, against="sim", isa_subset="amx", out_dir=tmp_path, workers=1, shard_size=SHARD,
                          duration=0.5)
    assert timed.shards >= 1 and not timed.divergences
    assert timed.notes[-1].startswith(f"stopped after 0.5 s (--duration): {timed.shards} shards")


def test_the_shards_of_a_campaign_do_not_depend_on_how_many_run_it():
    plan = campaign.plan_shards("x86_amx", fuzz.GENERATORS, ["scalar", "amx"], 1000, 9, "sim", "final", {})
    assert [(s.subset, s.number, s.first, s.cases) for s in plan] == [
        ("scalar", 0, 0, 300), ("amx", 0, 0, 250), ("scalar", 1, 300, 300), ("scalar", 2, 600, 150)]
    assert sum(s.cases for s in plan) == 1000 and plan[0].seed == 9 and plan[1].seed == 10
    endless = campaign.shard_stream("x86_amx", fuzz.GENERATORS, ["scalar", "amx"], None, 9, "sim", "final", {})
    assert [next(endless).seed for _ in range(3)] == [s.seed for s in plan[:3]]  # a bounded plan is a prefix


def test_the_fuzz_command_runs_on_local_processes_and_says_so(tmp_path, capsys):
    assert main(["fuzz", "--against", "sim", "--only", "amx", "--cases", "40", "--workers", "2", "--no-color",
                 "--out", str(tmp_path)]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "no divergence: fuzz x86_amx: 40 programs (amx 40 drawn with numpy)" in out
    assert (tmp_path / "campaign.json").is_file()


@pytest.mark.parametrize("argv, message", [
    (["--cluster", "tcp://127.0.0.1:99999"], "--cluster tcp://127.0.0.1:99999: port 99999 is not 1..65535"),
    (["--cluster", "udp://127.0.0.1:8786"], "--cluster udp://127.0.0.1:8786: unknown scheme 'udp://'"),
    (["--cluster", "no-such-file"], "--cluster no-such-file: no such scheduler file, and not an address"),
    (["--cluster", "host:port"], "--cluster host:port: not a scheduler address (tcp://HOST:PORT"),
    (["--cluster", "tcp://127.0.0.1:8786", "--workers", "2"], "--workers and --cluster are two places to run"),
    (["--workers", "0"], "--workers 0: at least 1"),
    (["--fresh"], "--fresh starts the campaign kept in --out DIR over: give --out too"),
    (["--duration", "soon"], "argument --duration: expected a time such as 90s, 30m, 2h or 1h30m, got 'soon'"),
])
def test_bad_campaign_options_are_one_line(argv, message, capsys):
    assert main(["fuzz", "--against", "sim", "--cases", "5", *argv]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and message in err, err


def test_a_scheduler_file_that_is_not_one_is_one_line(tmp_path, capsys):
    bad = tmp_path / "scheduler.json"
    bad.write_text("{\"no\": 1}")
    assert main(["fuzz", "--against", "sim", "--cases", "5", "--cluster", str(bad)]) == 2
    assert "not a Dask scheduler file" in capsys.readouterr().err


def test_a_campaign_directory_isasim_did_not_write_is_left_alone(tmp_path):
    (tmp_path / "campaign.json").write_text("[1, 2]")
    with pytest.raises(IsasimError, match="not an isasim campaign file"):
        run(tmp_path, workers=1, journal=True)
    assert (tmp_path / "campaign.json").read_text() == "[1, 2]"


def test_the_fuzz_command_sends_its_shards_to_a_cluster_by_address_or_scheduler_file(tmp_path, cluster, capsys):
    scheduler_file = tmp_path / "scheduler.json"
    scheduler_file.write_text(json.dumps({"address": cluster.scheduler_address}))
    reports = []
    for where in (cluster.scheduler_address, str(scheduler_file)):
        argv = ["fuzz", "--against", "sim", "--cases", "80", "--seed", str(SEED), "--no-color",
                "--out", str(tmp_path / "out"), "--fresh", "--cluster", where]
        assert main(argv) == 0
        out = " ".join(capsys.readouterr().out.split())
        assert f"on the Dask cluster at {cluster.scheduler_address} (2 workers)" in out
        assert "ran on " in out and "Dask worker tcp://127.0.0.1:" in out
        reports.append(out.split(" (")[0] + out[out.index("form "):out.index("ran on")])
    assert reports[0] == reports[1]


def test_without_dask_the_local_pools_still_work_and_cluster_says_what_to_install(tmp_path, monkeypatch, capsys):
    import sys

    monkeypatch.setitem(sys.modules, "distributed", None)  # what an install without isasim[cluster] has
    assert main(["fuzz", "--against", "sim", "--only", "amx", "--cases", "20", "--workers", "2", "--no-color"]) == 0
    capsys.readouterr()
    assert main(["fuzz", "--against", "sim", "--cases", "5", "--cluster", "tcp://127.0.0.1:8786"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--cluster needs dask.distributed, which is not installed: " \
                                   "pip install 'isasim[cluster]'" in err


@pytest.mark.needs_qemu
@pytest.mark.needs_clang
def test_an_arm_sme_campaign_against_qemu_is_the_same_on_one_process_two_processes_and_a_cluster(tmp_path, cluster):
    """The engine is ISA-neutral: SME2 programs against QEMU, every subset, each worker starting its own
    QEMU, give one campaign wherever they run."""
    from isasim.arm_sme import fuzz as sme_fuzz

    def campaign(**where):
        summary = sme_fuzz.run_fuzz(150, 5, against="qemu", out_dir=tmp_path, **where)
        assert summary.shards > 2 and not summary.divergences, summary
        return dict(summary.cases), dict(summary.instructions), dict(summary.elements), summary.runs

    alone = campaign(workers=1)
    assert campaign(workers=2) == alone
    with Pool.open(cluster=cluster.scheduler_address) as pool:
        assert campaign(pool=pool) == alone


DRAW_PROGRAMS = """
import hashlib, sys
for name in sys.argv[1:]:
    __import__(name)  # what the process imported before the campaign drew
from isasim.arm_sme import ISA, fuzz as sme_fuzz
from isasim.core.fuzz.drawing import draw_cases
from isasim.x86_amx.fuzz.scalar import scalar_cases
digest = hashlib.sha256()
for generator in sme_fuzz.generators(ISA.configure({})["svl"])[:3]:
    for case in draw_cases(generator.cases(), 12, 5):
        digest.update(generator.program_and_init(case)[0].encode())
for case in draw_cases(scalar_cases(), 12, 5):
    digest.update(repr(case).encode())
print(digest.hexdigest())
"""


def test_the_same_seed_draws_the_same_programs_whatever_the_process_imported_before():
    """Hypothesis also draws constants from the source of the modules a process has loaded; a campaign's draws
    go without them, or an arm_sme shard drew other programs in a Dask worker than here (seen)."""
    import subprocess
    import sys

    from hypothesis.internal.conjecture import providers

    assert hasattr(providers, "_get_local_constants") and hasattr(providers, "CONSTANTS_CACHE"), \
        "hypothesis no longer has the internals core.fuzz.drawing._without_local_constants replaces: look again"

    def drawn(*imports: str) -> str:
        done = subprocess.run([sys.executable, "-c", DRAW_PROGRAMS, *imports], capture_output=True, text=True,
                              timeout=300)
        assert done.returncode == 0, done.stderr
        return done.stdout.strip()

    plain = drawn()
    assert drawn("isasim.cli", "isasim.x86_amx.fuzz") == plain
    assert drawn("isasim.ascend_cube", "isasim.arm_sme.explain") == plain

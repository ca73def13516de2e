"""Oracle markers: a test that needs an outside tool or this host's hardware says so with a marker.

    @pytest.mark.needs_binutils             GNU as + objdump on PATH
    @pytest.mark.needs_binutils("nm")       ... and any further binutils the test runs
    @pytest.mark.needs_silicon              the x86 silicon backend can run here
    @pytest.mark.needs_amx                  ... and this CPU and kernel run AMX programs
    @pytest.mark.needs_qemu                 qemu-aarch64 >= 10.1 that runs SME2 programs
    @pytest.mark.needs_clang                zig's clang, which assembles SME2 and builds aarch64 programs

Both Arm oracles are fetched into .oracles/ by tools/install_oracles.sh (or named by
$ISASIM_ZIG / $ISASIM_QEMU_AARCH64); isasim.arm_sme.oracle.tools finds and checks them.

Each probe runs at most once per session and only when a collected test asks for it, so a
run that needs no oracle starts no tools.  A test whose oracle is missing is skipped with a
reason naming what is missing (``-ra``, on by default, lists the reasons), never failed.

This folder is also where the shared helper modules live (gnu_binutils, amxharness,
cli_harness): pytest puts it on sys.path for this conftest, so any test imports them by name.
"""

from __future__ import annotations

import functools
import shutil

import pytest


@functools.cache
def binutils_problem(*extra: str) -> str | None:
    tools = ("as", "objdump") + tuple(t for t in extra if t not in ("as", "objdump"))
    missing = [tool for tool in tools if shutil.which(tool) is None]
    if missing:
        return f"GNU binutils not on PATH: {', '.join(missing)} (this test runs {', '.join(tools)})"
    return None


@functools.cache
def silicon_problem() -> str | None:
    from isasim.x86_amx.oracle import platform_problem  # imported late: only runs that ask pay for it

    problem = platform_problem()
    return f"no silicon backend here: {problem}" if problem else None


@functools.cache
def amx_problem() -> str | None:
    from isasim.x86_amx.oracle import host_cpu, platform_problem

    problem = platform_problem() or host_cpu().why_no_amx()
    return f"AMX programs cannot run on this host: {problem}" if problem else None


def qemu_problem() -> str | None:
    # The oracle package finds qemu-aarch64 ($ISASIM_QEMU_AARCH64, .oracles/bin, PATH), checks
    # its version and runs one SME2 instruction on it; the qemu backend asks the same question.
    from isasim.arm_sme.oracle.tools import qemu_problem as problem  # imported late, like silicon's

    return problem()


def clang_problem() -> str | None:
    # zig's clang ($ISASIM_ZIG, .oracles/python, an installed ziglang, PATH), asked to assemble
    # an SME2-only instruction.
    from isasim.arm_sme.oracle.tools import clang_problem as problem

    return problem()


PROBES = {
    "needs_binutils": (binutils_problem, "GNU as + objdump (and any binutils named as arguments) on PATH"),
    "needs_silicon": (silicon_problem, "the x86 silicon backend can run on this host"),
    "needs_amx": (amx_problem, "this CPU and kernel run AMX programs (silicon backend)"),
    "needs_qemu": (qemu_problem, "qemu-aarch64 >= 10.1 runs SME2 (tools/install_oracles.sh fetches it)"),
    "needs_clang": (clang_problem, "zig's clang assembles SME2 (tools/install_oracles.sh fetches it)"),
}


def _deliverable_ctrl_c() -> None:
    # A shell without job control starts a background command ("pytest &", a CI script run with &) with
    # SIGINT ignored, and Python keeps an inherited SIG_IGN.  The stepper's Ctrl-C tests (in process, and
    # through a pty in a child, which inherits the disposition) need Ctrl-C to arrive: put Python's own
    # handler back for the session.
    import signal

    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)


def pytest_configure(config):
    _deliverable_ctrl_c()
    for name, (_, what) in PROBES.items():
        config.addinivalue_line("markers", f"{name}: skip unless {what}")


def pytest_collection_modifyitems(config, items):
    # A skip marker added at collection is honoured before any fixture runs, so a fixture
    # that calls the tool (e.g. assembling every case with GNU as) is never reached without it.
    for item in items:
        for name, (probe, _) in PROBES.items():
            for mark in item.iter_markers(name):
                problem = probe(*mark.args)
                if problem:
                    item.add_marker(pytest.mark.skip(reason=f"{name}: {problem}"))
                    break


@pytest.fixture(scope="session")
def sme2_cc() -> list[str]:
    """The argv prefix of a compiler for static aarch64 +sme2 programs (use with @pytest.mark.needs_clang)."""
    from isasim.arm_sme.oracle.tools import CC_CPU, find_zig

    problem = clang_problem()
    if problem:
        pytest.skip(f"needs_clang: {problem}")
    zig, _ = find_zig()
    return [zig, "cc", "-target", "aarch64-linux-musl", f"-mcpu={CC_CPU}"]

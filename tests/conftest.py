"""Oracle markers: a test that needs an outside tool or this host's hardware says so with a marker.

    @pytest.mark.needs_binutils             GNU as + objdump on PATH
    @pytest.mark.needs_binutils("nm")       ... and any further binutils the test runs
    @pytest.mark.needs_silicon              the x86 silicon backend can run here
    @pytest.mark.needs_amx                  ... and this CPU and kernel run AMX programs
    @pytest.mark.needs_qemu                 qemu-aarch64 >= 10.1 on PATH (SME2 programs)
    @pytest.mark.needs_clang                a C compiler that targets aarch64 with +sme2

Each probe runs at most once per session and only when a collected test asks for it, so a
run that needs no oracle starts no tools.  A test whose oracle is missing is skipped with a
reason naming what is missing (``-ra``, on by default, lists the reasons), never failed.

This folder is also where the shared helper modules live (gnu_binutils, amxharness,
cli_harness): pytest puts it on sys.path for this conftest, so any test imports them by name.
"""

from __future__ import annotations

import functools
import importlib.util
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

QEMU_MIN = (10, 1)  # the first release whose qemu-aarch64 emulates SME2 as the SME2 tests expect


@functools.cache
def binutils_problem(*extra: str) -> str | None:
    tools = ("as", "objdump") + tuple(t for t in extra if t not in ("as", "objdump"))
    missing = [tool for tool in tools if shutil.which(tool) is None]
    if missing:
        return f"GNU binutils not on PATH: {', '.join(missing)} (this test runs {', '.join(tools)})"
    return None


@functools.cache
def silicon_problem() -> str | None:
    from isasim.x86_amx.silicon import platform_problem  # imported late: only runs that ask pay for it

    problem = platform_problem()
    return f"no silicon backend here: {problem}" if problem else None


@functools.cache
def amx_problem() -> str | None:
    from isasim.x86_amx.silicon import host_cpu, platform_problem

    problem = platform_problem() or host_cpu().why_no_amx()
    return f"AMX programs cannot run on this host: {problem}" if problem else None


@functools.cache
def qemu_problem() -> str | None:
    qemu = shutil.which("qemu-aarch64")
    if qemu is None:
        return "qemu-aarch64 is not on PATH (SME2 tests need qemu-aarch64 >= %d.%d)" % QEMU_MIN
    try:
        out = subprocess.run([qemu, "--version"], capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.SubprocessError) as e:
        return f"qemu-aarch64 --version failed: {e}"
    found = re.search(r"version (\d+)\.(\d+)", out)
    if found is None:
        return f"qemu-aarch64 --version printed no version: {out[:80]!r}"
    version = (int(found.group(1)), int(found.group(2)))
    if version < QEMU_MIN:
        return "qemu-aarch64 is %d.%d; SME2 tests need >= %d.%d" % (version + QEMU_MIN)
    return None


# The probe compiles a function using SME2-only instructions (ZT0 exists only with SME2), so a
# compiler that knows SME but not SME2, or an assembler without aarch64, is refused here.
_SME2_PROBE = 'void probe(void) { __asm__ volatile("smstart\\n\\tzero {zt0}\\n\\tsmstop"); }\n'
_SME2_FLAGS = ["-target", "aarch64-linux-gnu", "-march=armv9-a+sme2", "-O1", "-c"]


def _clang_candidates() -> tuple[list[tuple[str, list[str]]], list[str]]:
    """(name, command) of each compiler worth probing, and why the others were not."""
    found, absent = [], []
    if importlib.util.find_spec("ziglang") is not None:
        found.append(("python -m ziglang cc", [sys.executable, "-m", "ziglang", "cc"]))
    else:
        absent.append("python -m ziglang cc (ziglang not installed)")
    clang = shutil.which("clang")
    if clang is not None:
        found.append(("clang", [clang]))
    else:
        absent.append("clang (not on PATH)")
    return found, absent


@functools.cache
def sme2_compiler() -> tuple[list[str] | None, str]:
    """The first command (argv prefix) that compiles aarch64 +sme2 code, or None and why not."""
    found, tried = _clang_candidates()
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp, "probe.c")
        src.write_text(_SME2_PROBE)
        for name, command in found:
            try:
                done = subprocess.run(command + _SME2_FLAGS + ["-o", str(Path(tmp, "probe.o")), str(src)],
                                      capture_output=True, text=True, timeout=120)
            except (OSError, subprocess.SubprocessError) as e:
                tried.append(f"{name} ({e})")
                continue
            if done.returncode == 0:
                return command, ""
            first = (done.stderr.strip().splitlines() or ["no message"])[0]
            tried.append(f"{name} (refused aarch64 +sme2: {first[:120]})")
    return None, "no C compiler targets aarch64 with +sme2; tried " + "; ".join(tried)


def clang_problem() -> str | None:
    command, why = sme2_compiler()
    return None if command else why


PROBES = {
    "needs_binutils": (binutils_problem, "GNU as + objdump (and any binutils named as arguments) on PATH"),
    "needs_silicon": (silicon_problem, "the x86 silicon backend can run on this host"),
    "needs_amx": (amx_problem, "this CPU and kernel run AMX programs (silicon backend)"),
    "needs_qemu": (qemu_problem, "qemu-aarch64 >= %d.%d on PATH" % QEMU_MIN),
    "needs_clang": (clang_problem, "a C compiler targeting aarch64 with +sme2 (python -m ziglang cc or clang)"),
}


def pytest_configure(config):
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
    """The argv prefix of a compiler for aarch64 +sme2 code (use with @pytest.mark.needs_clang)."""
    command, why = sme2_compiler()
    if command is None:
        pytest.skip(f"needs_clang: {why}")
    return list(command) + _SME2_FLAGS[:3]

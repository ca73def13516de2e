"""gdb as the tests' client: finding a gdb that knows an architecture, and running it in batch mode against
``isasim gdbserver --stdio`` (or any command line that serves gdb's remote protocol).

Two gdbs are used: the distribution's (Debian's gdb 13: x86-64 only), found as the first gdb binary on PATH,
and gdb 18 of PyPI's gdb-for-pwndbg wheel (every architecture; a launcher script in the environment's bin,
which the test extra installs).  A test names the architecture it needs; ``gdb_or_skip`` skips with the reason
when no such gdb is here.
"""

from __future__ import annotations

import functools
import os
import shlex
import subprocess
import sys

import pytest

WHEEL_GDB = os.path.join(sys.prefix, "bin", "gdb")  # gdb 18 of the gdb-for-pwndbg wheel (a Python launcher)
GDB_TIMEOUT = 300  # seconds a whole batch session may take before the test fails


def system_gdb() -> str | None:
    """The first gdb program on PATH that is a binary (not a launcher script such as the wheel's, or a shim)."""
    for directory in os.environ.get("PATH", "").split(os.pathsep):
        candidate = os.path.join(directory, "gdb")
        try:
            with open(candidate, "rb") as file:
                if file.read(4) == b"\x7fELF" and os.access(candidate, os.X_OK):
                    return candidate
        except OSError:
            continue
    return None


def gdb_or_skip(which: str, architecture: str) -> str:
    """``which`` is "system" (the distribution's gdb) or "wheel" (gdb-for-pwndbg's gdb 18); the gdb, if it can
    ``set architecture`` to ``architecture`` ("i386:x86-64", "aarch64"), else the test is skipped, saying why."""
    found, why = _probe(which, architecture)
    if found is None:
        pytest.skip(why)
    return found


@functools.cache
def _probe(which: str, architecture: str) -> tuple[str | None, str]:
    gdb = system_gdb() if which == "system" else WHEEL_GDB
    if gdb is None or not os.path.exists(gdb):
        return None, (f"gdb not found: {'no gdb binary on PATH' if which == 'system' else WHEEL_GDB}"
                      f"{'' if which == 'system' else ' (pip install gdb-for-pwndbg)'}")
    try:
        probe = subprocess.run([gdb, "-nx", "-batch", "-ex", f"set architecture {architecture}"],
                               capture_output=True, text=True, timeout=120)
    except (OSError, subprocess.TimeoutExpired) as error:
        return None, f"gdb at {gdb} does not run: {error}"
    if probe.returncode != 0 or "Undefined" in probe.stderr:  # gdb's word for an architecture it lacks
        return None, f"gdb at {gdb} cannot `set architecture {architecture}`: {probe.stderr.strip()[:200]}"
    return gdb, ""


def gdbserver_command(*arguments: str) -> str:
    """The shell command gdb's ``target remote |`` runs: this Python's isasim gdbserver on stdin/stdout."""
    return " ".join(shlex.quote(word) for word in (sys.executable, "-m", "isasim", "gdbserver", "--stdio",
                                                     *arguments))


def run_gdb(gdb: str, commands: list[str], *, program: str | None = None, cwd=None,
            timeout: float = GDB_TIMEOUT) -> subprocess.CompletedProcess:
    """gdb in batch mode, with no init files, running ``commands`` (each one -ex) after loading ``program``'s
    symbols; stdout and stderr together in ``.stdout``.  A command that fails prints its error and gdb goes on
    with the next, as it does with -ex commands: a test checks what each printed."""
    arguments = [gdb, "-nx", "-batch", "-ex", "set pagination off", "-ex", "set confirm off",
                 "-ex", "set width 0", "-ex", "set style enabled off"]
    for command in commands:
        arguments += ["-ex", command]
    if program is not None:
        arguments.append(program)
    return subprocess.run(arguments, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, cwd=cwd,
                          timeout=timeout)

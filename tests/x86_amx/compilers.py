"""The C++ compilers the compiled-kernel tests build with: g++, and clang as zig ships it (found as the arm_sme
oracles find zig: isasim.arm_sme.oracle.tools.find_zig), for x86-64 Linux.  Each gives the command that
compiles to an object file, or the reason it cannot be used here (the tests skip with it)."""

from __future__ import annotations

import shutil
import subprocess

from isasim.arm_sme.oracle.tools import find_zig, zig_env


def gxx() -> tuple[list[str] | None, str]:
    """g++'s command, or None and why it cannot be used (missing, or without -mamx-tile)."""
    found = shutil.which("g++")
    if found is None:
        return None, "no g++ on this machine"
    probe = subprocess.run([found, "-x", "c++", "-c", "-o", "/dev/null", "-mamx-tile", "-"], input="int x;\n",
                           capture_output=True, text=True, timeout=120)
    if probe.returncode:
        return None, f"this g++ does not take -mamx-tile ({probe.stderr.strip().splitlines()[-1:]})"
    return [found], ""


def zig_clang() -> tuple[list[str] | None, str]:
    """zig's clang for x86-64 Linux (``zig c++ -target x86_64-linux-gnu``), or None and where zig was sought.
    zig builds in Debug mode with UBSan's checks, which call the sanitizer's runtime: they are turned off."""
    zig, tried = find_zig()
    if zig is None:
        return None, "zig is not installed (sought: " + ", ".join(tried) + ")"
    return [zig, "c++", "-target", "x86_64-linux-gnu", "-fno-sanitize=undefined"], ""


def compile_object(command: list[str], source, output, flags: list[str]) -> None:
    """Compile ``source`` to the object file ``output``; a failure is the compiler's message."""
    done = subprocess.run([*command, "-c", *flags, str(source), "-o", str(output)], capture_output=True, text=True,
                          timeout=600, env=zig_env() if "zig" in command[0] else None)
    assert done.returncode == 0, done.stderr[-3000:]

"""GNU as + objdump as an encoding oracle: assemble lines, return each instruction's bytes and objdump text."""

from __future__ import annotations

import re
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

HAVE_BINUTILS = shutil.which("as") is not None and shutil.which("objdump") is not None
needs_binutils = pytest.mark.skipif(not HAVE_BINUTILS, reason="GNU binutils (as, objdump) are not installed")

_LINE = re.compile(r"^\s*([0-9a-f]+):\t((?:[0-9a-f]{2} )+)\s*\t(.*)$")


def normalise(text: str) -> str:
    """objdump's text with its column padding and <symbol> annotations removed."""
    text = re.sub(r"\s*<[^>]*>", "", text.strip())
    parts = text.split(None, 1)
    return parts[0] if len(parts) == 1 else f"{parts[0]} {parts[1].strip()}"


def gas(lines: list[str]) -> list[tuple[bytes, str]]:
    """Assemble ``lines`` (one instruction each) with GNU as; objdump's (bytes, text) per instruction."""
    with tempfile.TemporaryDirectory() as tmp:
        src, obj = Path(tmp, "t.s"), Path(tmp, "t.o")
        src.write_text(".intel_syntax noprefix\n" + "\n".join(lines) + "\n")
        done = subprocess.run(["as", "-o", str(obj), str(src)], capture_output=True, text=True)
        if done.returncode:
            raise AssertionError(f"GNU as refused the test input:\n{done.stderr[:2000]}")
        dump = subprocess.run(["objdump", "-d", "-M", "intel", "--insn-width=16", str(obj)],
                              capture_output=True, text=True, check=True).stdout
    out = []
    for line in dump.splitlines():
        m = _LINE.match(line)
        if m:
            out.append((bytes.fromhex(m.group(2).replace(" ", "")), normalise(m.group(3))))
    if len(out) != len(lines):
        raise AssertionError(f"objdump listed {len(out)} instructions for {len(lines)} lines")
    return out


def gas_accepts(line: str) -> bool:
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp, "t.s")
        src.write_text(".intel_syntax noprefix\n" + line + "\n")
        return subprocess.run(["as", "-o", str(Path(tmp, "t.o")), str(src)], capture_output=True).returncode == 0

"""GNU as + objdump as an encoding oracle: assemble lines, return each instruction's bytes and objdump text;
objdump's reading of many raw byte windows in one call (shared by the decoder round-trip and fuzz tests)."""

from __future__ import annotations

import re
import subprocess
import tempfile
from pathlib import Path

import pytest

# Whether the tools are there is decided by the needs_binutils marker (tests/conftest.py).
needs_binutils = pytest.mark.needs_binutils

_OBJDUMP_LINE = re.compile(r"^\s*([0-9a-f]+):\t((?:[0-9a-f]{2} )+)\s*\t?(.*)$")
_NOP_PADDING = b"\x90" * 16  # longer than any x86 instruction: objdump is back in step at the next window


def objdump_decode_many(windows: list[bytes]) -> list[tuple[int, str] | None]:
    """objdump's (length, text) for the first instruction of each byte window, with ONE objdump call.

    The windows go into one raw binary, each followed by 16 one-byte NOPs, so whatever
    objdump makes of a window's later bytes it is back in step where the next window
    starts; window i starts at file offset ``starts[i]`` and a branch target objdump
    prints is relative to that offset (decode isasim's copy at the same address).
    """
    blob = bytearray()
    starts = []
    for window in windows:
        starts.append(len(blob))
        blob += window + _NOP_PADDING
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp, "windows.bin")
        path.write_bytes(bytes(blob))
        dump = subprocess.run(
            ["objdump", "-D", "-b", "binary", "-m", "i386:x86-64", "-M", "intel", "--insn-width=16", str(path)],
            capture_output=True, text=True, check=True).stdout
    found = {}
    for line in dump.splitlines():
        match = _OBJDUMP_LINE.match(line)
        if match:
            found[int(match.group(1), 16)] = (len(match.group(2).split()), " ".join(_drop_target(match.group(3)).split()))
    return [found.get(start) for start in starts]


def _drop_target(text: str) -> str:
    """objdump's text without the address it works out for a RIP-relative operand ("... # 0x8cf8929" and
    any <symbol> after it): a comment, not part of the instruction's text."""
    return re.sub(r"\s+# 0x[0-9a-f]+.*$", "", text)


def window_offsets(windows: list[bytes]) -> list[int]:
    """Where objdump_decode_many places each window (to decode isasim's copy at the same address)."""
    offsets, at = [], 0
    for window in windows:
        offsets.append(at)
        at += len(window) + len(_NOP_PADDING)
    return offsets

_LINE = re.compile(r"^\s*([0-9a-f]+):\t((?:[0-9a-f]{2} )+)\s*\t(.*)$")


def normalise(text: str) -> str:
    """objdump's text with its column padding and <symbol> annotations removed."""
    text = re.sub(r"\s*<[^>]*>", "", _drop_target(text.strip()))
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


def assert_round_trip(assemble, line: str, want_bytes: bytes, want_text: str) -> None:
    """isasim assembles ``line`` to GNU as's bytes and prints it as objdump does, and objdump's text
    assembles back to the same bytes (``assemble``: the ISA's text -> Program)."""
    (ins,) = assemble(line).instructions
    assert ins.encoding.hex(" ") == want_bytes.hex(" ")
    assert ins.text == want_text
    (again,) = assemble(want_text).instructions
    assert again.encoding == want_bytes

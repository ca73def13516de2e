"""zig's clang's integrated assembler as the encoding oracle (use with the needs_clang marker).

``clang_encode(lines)`` assembles the lines in one run of ``clang -cc1as -show-encoding`` and
returns, per line, (the text clang prints, its 32-bit word) or (the error, None).
``clang_answers(lines)`` takes any lines (several statements, none, ``.inst``, symbols, lines clang
refuses) and returns one ClangAnswer per line: its words, its error, or that it needed a linker.
"""

from __future__ import annotations

import re
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from isasim.arm_sme.oracle.tools import ASM_FEATURES, find_zig, zig_env

# the features isasim's default core has (sme2, sme-i16i64, sme-f64f64, sme-f16f16, sme-b16b16)
FEATURES = [word for feature in ASM_FEATURES for word in ("-target-feature", "+" + feature)]


def clang_cc1as() -> list[str] | None:
    """zig's clang as the project finds it (isasim.arm_sme.oracle.tools: env var, .oracles/, the ziglang
    package, PATH)."""
    zig, _ = find_zig()
    return [zig, "clang", "-cc1as"] if zig else None


_ENCODING = re.compile(r"^\s*(.*?)\s*// encoding: \[(.*)\]\s*$")


def clang_encode(lines: list[str]) -> list[tuple[str, int | None]]:
    command = clang_cc1as()
    assert command is not None, "no clang (use the needs_clang marker)"
    with tempfile.TemporaryDirectory() as tmp:
        source = Path(tmp, "t.s")
        source.write_text("".join(f"{line}\n" for line in lines))
        done = subprocess.run(command + ["-triple", "aarch64-unknown-linux-gnu", *FEATURES, "-filetype", "asm",
                                         "-show-encoding", "-o", "-", str(source)],
                              capture_output=True, text=True, timeout=600, env=zig_env())
    errors = {}
    for m in re.finditer(r"t\.s:(\d+):\d+: error: (.*)", done.stderr):
        errors.setdefault(int(m.group(1)), m.group(2))
    encoded = []
    for out in done.stdout.splitlines():
        m = _ENCODING.match(out)
        if m:
            if "A" in m.group(2):  # a fixup (a label clang leaves to the object file): no word here
                encoded.append((" ".join(m.group(1).split()), None))
                continue
            word = bytes(int(b, 0) for b in m.group(2).split(","))
            encoded.append((" ".join(m.group(1).split()), int.from_bytes(word, "little")))
    results, it = [], iter(encoded)
    for number in range(1, len(lines) + 1):
        results.append((errors[number], None) if number in errors else next(it))
    return results


def clang_text_section(lines: list[str]) -> bytes:
    """The .text bytes of the object clang makes of ``lines`` (labels resolved, as a linker sees them)."""
    import struct

    command = clang_cc1as()
    with tempfile.TemporaryDirectory() as tmp:
        source, obj = Path(tmp, "t.s"), Path(tmp, "t.o")
        source.write_text("".join(f"{line}\n" for line in lines))
        subprocess.run(command + ["-triple", "aarch64-unknown-linux-gnu", *FEATURES, "-filetype", "obj", "-o",
                                  str(obj), str(source)], check=True, capture_output=True, timeout=600, env=zig_env())
        elf = obj.read_bytes()
    # ELF64 little-endian: section headers at e_shoff, e_shentsize each, names in section e_shstrndx
    shoff, = struct.unpack_from("<Q", elf, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", elf, 0x3A)
    headers = [struct.unpack_from("<IIQQQQ", elf, shoff + i * shentsize) for i in range(shnum)]
    names_offset = headers[shstrndx][4]
    for name, _type, _flags, _addr, offset, size in headers:
        end = elf.index(b"\0", names_offset + name)
        if elf[names_offset + name:end] == b".text":
            return elf[offset:offset + size]
    raise AssertionError("no .text section")


def assert_refused_in_one_line(line: str, words: str) -> None:
    """isasim's assembler refuses ``line`` with one error line naming the file, the line and ``words``."""
    from isasim.arm_sme import ISA
    from isasim.core.errors import IsasimError

    try:
        ISA.assemble(line, source="bad.s")
    except IsasimError as error:
        message = str(error)
        assert message.startswith("bad.s:1: ") and words in message and "\n" not in message, message
    else:
        raise AssertionError(f"isasim assembled {line!r}")


def clang_accepts(lines: list[str]) -> list[str]:
    """The lines clang assembles (each should be refused, as isasim refuses it)."""
    return [line for line, (_, word) in zip(lines, clang_encode(lines)) if word is not None]


# ---- one answer per line, whatever the line holds -------------------------------------------------

_MARK = ".Lisasim_line_{}:"
_MARK_SEEN = re.compile(r"^\.Lisasim_line_(\d+):")
_INST = re.compile(r"^\s*\.inst\s+(0x[0-9a-f]+)\s*$")
_STDIN_ERROR = re.compile(r"^<stdin>:(\d+):\d+: error: (.*)$")


@dataclass(frozen=True)
class ClangAnswer:
    """What clang made of one line: its instruction words (``.inst`` words too, in order), or the first
    error it reported (``error``), or that an operand was a symbol it left to the linker (``fixup``)."""

    words: tuple[int, ...] = ()
    error: str | None = None
    fixup: bool = False

    @property
    def accepted(self) -> bool:
        return self.error is None


def clang_answers(lines: list[str]) -> list[ClangAnswer]:
    """Every line assembled by one clang run, each answer kept with its line: each line follows a label
    of its own, which clang echoes (a line clang refuses still has its label), and an error names the
    line it is on (line n of the input is line 2n + 2 of what clang reads)."""
    command = clang_cc1as()
    assert command is not None, "no clang (use the needs_clang marker)"
    assert not any("\n" in line for line in lines), "one line each: a newline would shift the line numbers"
    assert not any(re.sub(r"/\*.*?\*/", "", line).count("/*") for line in lines), \
        "an open /* comment would swallow the lines after it, and their labels"
    source = "".join(f"{_MARK.format(n)}\n{line}\n" for n, line in enumerate(lines)) + _MARK.format(len(lines)) + "\n"
    done = subprocess.run(command + ["-triple", "aarch64-unknown-linux-gnu", *FEATURES, "-filetype", "asm",
                                     "-show-encoding", "-o", "-", "-"],
                          input=source.encode(), capture_output=True, timeout=600, env=zig_env())
    words: list[list[int]] = [[] for _ in lines]
    fixups: set[int] = set()
    current = None
    for out in done.stdout.decode("utf-8", "replace").splitlines():
        mark = _MARK_SEEN.match(out.strip())
        if mark:
            current = int(mark.group(1))
            continue
        if current is None or current >= len(lines):
            continue
        encoding = _ENCODING.match(out)
        inst = _INST.match(out)
        if encoding and "A" in encoding.group(2):
            fixups.add(current)
        elif encoding:
            word = bytes(int(b, 0) for b in encoding.group(2).split(","))
            words[current].append(int.from_bytes(word, "little"))
        elif inst:
            words[current].append(int(inst.group(1), 16))
    errors: dict[int, str] = {}
    for err in done.stderr.decode("utf-8", "replace").splitlines():
        found = _STDIN_ERROR.match(err)
        if found:
            errors.setdefault((int(found.group(1)) - 2) // 2, found.group(2))
    return [ClangAnswer(error=errors[n]) if n in errors else ClangAnswer(tuple(words[n]), fixup=n in fixups)
            for n in range(len(lines))]

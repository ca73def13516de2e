"""Encodings from clang: the assembler oracle for isasim's SME2 encoder.

zig's clang runs as an integrated assembler (``clang -cc1as -show-encoding``, the stand-in for
``llvm-mc --show-encoding``).  Many lines go through one call: each line is preceded by a label of
its own, which clang echoes, so every encoding is matched to the line it came from even when
other lines in the batch are rejected.
"""

from __future__ import annotations

import re
import subprocess
from collections.abc import Iterable, Sequence

from .tools import ASM_FEATURES, OracleUnavailable, clang_problem, find_zig, zig_env

_LABEL = ".Lisasim_line_{}:"
_LABEL_SEEN = re.compile(r"^\.Lisasim_line_(\d+):")
_ENCODING = re.compile(r"// encoding: \[([^\]]*)\]")
_ERROR = re.compile(r"^<stdin>:(\d+):\d+: error: (.*)$")


class AsmError(ValueError):
    """clang rejected a line (the message is clang's), or it is not exactly one instruction."""


def _features(features: Iterable[str]) -> list[str]:
    flags = []
    for name in features:
        flags += ["-target-feature", "+" + name.lstrip("+")]
    return flags


def encode_many(lines: Sequence[str], features: Iterable[str] = ASM_FEATURES) -> list[int | AsmError]:
    """The 32-bit instruction word of each line, or an AsmError saying why clang gave none."""
    problem = clang_problem()
    if problem:
        raise OracleUnavailable(problem)
    zig, _ = find_zig()
    source = "".join(f"{_LABEL.format(n)}\n{line}\n" for n, line in enumerate(lines))
    done = subprocess.run(
        [zig, "clang", "-cc1as", "-triple", "aarch64-unknown-linux-gnu", *_features(features),
         "-filetype", "asm", "-show-encoding", "-o", "-", "-"],
        input=source, capture_output=True, text=True, timeout=600, env=zig_env())
    words: list[list[int]] = [[] for _ in lines]
    current = None
    for out in done.stdout.splitlines():
        label = _LABEL_SEEN.match(out.strip())
        if label:
            current = int(label.group(1))
            continue
        encoding = _ENCODING.search(out)
        if encoding and current is not None:
            data = bytes(int(b, 16) for b in encoding.group(1).split(","))
            words[current].append(int.from_bytes(data, "little"))
    errors: dict[int, str] = {}
    for err in done.stderr.splitlines():
        found = _ERROR.match(err)
        if found:
            errors.setdefault((int(found.group(1)) - 2) // 2, found.group(2))  # line 2n+2 holds line n
    results: list[int | AsmError] = []
    for n, line in enumerate(lines):
        if n in errors:
            results.append(AsmError(f"clang: {errors[n]}: {line.strip()}"))
        elif len(words[n]) != 1:
            results.append(AsmError(f"clang gave {len(words[n])} instruction words for: {line.strip()}"))
        else:
            results.append(words[n][0])
    if done.returncode != 0 and not errors:
        raise AsmError(f"clang failed: {done.stderr.strip()[:300]}")
    return results


def encode(asm_line: str, features: Iterable[str] = ASM_FEATURES) -> int:
    """The 32-bit instruction word clang assembles one line to (raises AsmError if it refuses)."""
    (result,) = encode_many([asm_line], features)
    if isinstance(result, AsmError):
        raise result
    return result

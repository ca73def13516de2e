"""Write the public checklist of SME/SME2 and AMX encodings from LLVM's own assembler tests.

LLVM's MC tests (llvm/test/MC/AArch64/SME*, llvm/test/MC/X86/AMX) pair each instruction line with
the bytes llvm-mc gives it (``CHECK-ENCODING``) and its printed text (``CHECK-INST``); the
``*-diagnostics.s`` files list lines llvm-mc refuses, each with its message.  Those pairs are facts
about the ISA; this script copies them, and nothing else, into a tab-separated data file the tests read:

    python tools/llvm_mc_checklist.py LLVM_SOURCE [--out tests/arm_sme/data/llvm_mc_sme.tsv.gz]

LLVM_SOURCE is an llvm-project tree, or the release tarball itself (Debian's
``llvm-toolchain-22_22.1.8.orig.tar.xz`` is what the checked-in file was made from).
"""

from __future__ import annotations

import argparse
import gzip
import re
import sys
import tarfile
from pathlib import Path

SME_DIRECTORIES = ("SME", "SME2", "SME2p1", "SME2p2", "SME2p3")
ENCODING = re.compile(r"CHECK-ENCODING:\s*(?:encoding:\s*)?\[([0-9a-fx,]+)\]")
INSTRUCTION = re.compile(r"CHECK-INST:\s*(.*)$")
ERROR = re.compile(r"error:\s*(.*)$")
FEATURES = re.compile(r"-mattr=(\S+)")


def _sources(root: str):
    """(relative path under llvm/test/MC/AArch64, text) for each SME test file."""
    path = Path(root)
    if path.is_dir():
        base = path / "llvm" / "test" / "MC" / "AArch64"
        for directory in SME_DIRECTORIES:
            for file in sorted((base / directory).glob("*.s")):
                yield f"{directory}/{file.name}", file.read_text()
        return
    with tarfile.open(path) as archive:
        for member in sorted(archive.getmembers(), key=lambda m: m.name):
            match = re.search(r"/llvm/test/MC/AArch64/((SME[0-9p]*)/[^/]+\.s)$", member.name)
            if match and match.group(2) in SME_DIRECTORIES and member.isfile():
                yield match.group(1), archive.extractfile(member).read().decode()


def _statement(line: str) -> str | None:
    """The instruction on a source line, or None for comments, directives and blank lines."""
    text = line.split("//")[0].strip()
    if not text or text.startswith((".", "#")) or text.endswith(":"):
        return None
    return " ".join(text.split())


def _encoded_rows(name: str, text: str):
    features = FEATURES.search(text)
    features = features.group(1) if features else ""
    pending = None
    printed = ""
    for line in text.splitlines():
        statement = _statement(line)
        if statement is not None:
            pending, printed = statement, ""
            continue
        if pending is None:
            continue
        if (match := INSTRUCTION.search(line)) and not printed:
            printed = " ".join(match.group(1).split())
        elif match := ENCODING.search(line):
            word = bytes(int(byte, 16) for byte in match.group(1).split(","))
            yield ("encodes", name, features, pending, word.hex(), printed)
            pending = None


def _refused_rows(name: str, text: str):
    features = FEATURES.search(text)
    features = features.group(1) if features else ""
    pending = None
    for line in text.splitlines():
        statement = _statement(line)
        if statement is not None:
            pending = statement
            continue
        if pending is not None and (match := ERROR.search(line)):
            yield ("refused", name, features, pending, "", " ".join(match.group(1).split()))
            pending = None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("source", help="an llvm-project tree or its release tarball")
    parser.add_argument("--out", default="tests/arm_sme/data/llvm_mc_sme.tsv.gz")
    args = parser.parse_args(argv)
    rows = []
    for name, text in _sources(args.source):
        rows.extend((_refused_rows if name.endswith("-diagnostics.s") else _encoded_rows)(name, text))
    if not rows:
        print(f"llvm_mc_checklist: no SME test files under {args.source}", file=sys.stderr)
        return 1
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    text = "# kind\tfile\tfeatures\tline\tencoding\tllvm says\n" + "".join("\t".join(row) + "\n" for row in rows)
    data = text.encode()
    if args.out.endswith(".gz"):
        data = gzip.compress(data, compresslevel=9, mtime=0)  # mtime 0: the same source gives the same bytes
    Path(args.out).write_bytes(data)
    print(f"{len(rows)} rows -> {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

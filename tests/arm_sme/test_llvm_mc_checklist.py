"""LLVM's own SME/SME2 assembler tests as the public checklist (issue 29).

data/llvm_mc_sme.tsv.gz holds, copied by tools/llvm_mc_checklist.py from LLVM 22.1.8's
llvm/test/MC/AArch64/SME, SME2, SME2p1, SME2p2 and SME2p3, every (instruction line, CHECK-ENCODING bytes,
CHECK-INST text) triple and every line of the ``*-diagnostics.s`` files with llvm-mc's error.  Those are
facts about the ISA that nobody here wrote:

- every line isasim accepts gives LLVM's bytes, and isasim prints LLVM's bytes as LLVM's CHECK-INST text;
- every diagnostics line is refused, in one line, never a traceback;
- the lines isasim accepts do not fall below the counts recorded in ACCEPTED_AT_LEAST (raised as forms land;
  a failure lists the refused lines by file; :func:`coverage` returns them all).
"""

from __future__ import annotations

import collections
import gzip
from pathlib import Path

import pytest

from isasim.arm_sme import ISA
from isasim.core.errors import IsasimError

DATA = Path(__file__).parent / "data" / "llvm_mc_sme.tsv.gz"

# Lines of each LLVM test directory isasim assembles to LLVM's bytes, at least (of 1,487 / 8,901 / 673 / 483 / 74).
ACCEPTED_AT_LEAST = {"SME": 1487, "SME2": 8901, "SME2p1": 665, "SME2p2": 384, "SME2p3": 0}


def _rows(kind: str) -> list[tuple[str, str, str, str, str]]:
    with gzip.open(DATA, "rt") as data:
        rows = [line.rstrip("\n").split("\t") for line in data if not line.startswith("#")]
    return [tuple(row[1:]) for row in rows if row[0] == kind]


def _spaced(text: str) -> str:
    return " ".join(text.split("//")[0].split())


def coverage():
    """(accepted, wrong bytes, wrong text, refused) over the encoding lines: each a list of (file, line, detail)."""
    accepted, wrong_bytes, wrong_text, refused = [], [], [], []
    for name, _features, line, encoding, llvm_text in _rows("encodes"):
        try:
            ours = ISA.assemble(line).instructions[0].encoding.hex()
        except IsasimError as error:
            refused.append((name, line, str(error)))
            continue
        if ours != encoding:
            wrong_bytes.append((name, line, f"isasim {ours}, llvm {encoding}"))
            continue
        printed = ISA.disassemble(bytes.fromhex(encoding)).instructions[0].text
        # FileCheck finds a CHECK-INST line's text within the printed line: 'smstart' checks llvm's 'smstart sm'
        if _spaced(printed) != _spaced(llvm_text) and not _spaced(printed).startswith(_spaced(llvm_text) + " "):
            wrong_text.append((name, line, f"isasim prints '{printed}', llvm '{llvm_text}'"))
        accepted.append((name, line, ""))
    return accepted, wrong_bytes, wrong_text, refused


@pytest.fixture(scope="module")
def measured():
    return coverage()


def test_the_checklist_is_whole():
    encodes, refused = _rows("encodes"), _rows("refused")
    per_directory = collections.Counter(name.split("/")[0] for name, *_ in encodes)
    assert per_directory == {"SME": 1487, "SME2": 8901, "SME2p1": 673, "SME2p2": 483, "SME2p3": 74}
    assert len(refused) == 2068


def test_every_accepted_line_gives_llvms_bytes(measured):
    _, wrong_bytes, _, _ = measured
    assert not wrong_bytes, f"{len(wrong_bytes)} differ:\n" + "\n".join(map(str, wrong_bytes[:20]))


def test_llvms_bytes_print_as_llvm_prints_them(measured):
    _, _, wrong_text, _ = measured
    assert not wrong_text, f"{len(wrong_text)} differ:\n" + "\n".join(map(str, wrong_text[:20]))


def test_no_fewer_lines_are_accepted(measured):
    accepted, _, _, refused = measured
    counts = collections.Counter(name.split("/")[0] for name, *_ in accepted)
    by_file = collections.Counter(name for name, *_ in refused)
    short = {d: (counts[d], floor) for d, floor in ACCEPTED_AT_LEAST.items() if counts[d] < floor}
    assert not short, f"accepted (now, recorded): {short}; refused by file: {by_file.most_common(30)}"


def test_diagnostics_lines_are_refused_in_one_line():
    accepted, unclear = [], []
    for name, _features, line, _encoding, llvm_error in _rows("refused"):
        if llvm_error.startswith("instruction requires:"):
            continue  # refused for a feature the test's -mattr leaves out: isasim assembles every feature
        if "following a" in llvm_error and "movprfx" in llvm_error:
            continue  # refused for the MOVPRFX line before it: alone the line is an ordinary instruction
        try:
            ISA.assemble(line)
        except IsasimError as error:
            if "\n" in str(error).strip():
                unclear.append((name, line, str(error)))
            continue
        except Exception as error:  # a traceback where a one-line refusal belongs
            unclear.append((name, line, repr(error)))
            continue
        accepted.append((name, line, llvm_error))
    assert not accepted, f"{len(accepted)} lines llvm-mc refuses are accepted:\n" + "\n".join(map(str, accepted[:20]))
    assert not unclear, f"{len(unclear)} refusals are not one line:\n" + "\n".join(map(str, unclear[:20]))

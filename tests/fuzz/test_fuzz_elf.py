"""Fuzzing the object-file loader with corrupted ELF files.

The compiled kernels (examples/x86_amx/compiled/kernels.cpp) are built here, into a temporary folder: with
g++ (the test skips, saying why, without a g++ that takes -mamx-tile), with zig's clang where zig is
installed (tools/install_oracles.sh), and linked into a static program with GNU ld where ld is on PATH.
Each file's mutants (tests/elf_mutations.py: one field of the ELF header, a section header, a symbol, a
relocation or a program header set to a hostile value, the file cut at a structure boundary, a string
table broken) are sampled with a fixed seed, the same number from each structure, and each goes through
the x86 loader in this process with the function named by one of the kernels:

* the loader returns a program, which then runs (at most MAX_STEPS steps) to its end, a simulated fault
  or its step limit; or
* it refuses the file with an IsasimError of one line (as the command line prints it) naming the file.

Anything else fails the test, naming the mutant: another exception (the command line's exit 70), a case
that takes more than CASE_SECONDS, or an allocation beyond ALLOCATION_HEADROOM (a corrupted size must not
make isasim allocate what it says).  Every tenth mutant also goes through ``isasim run`` in-process, which
must exit 0, 1 or 2 with one error line.  ``-s`` prints the counts.

ISASIM_ELF_MUTANTS (per structure and file, 40 by default) and ISASIM_FUZZ_SEED change the sample; the
whole set is what tests/elf_mutations.py lists (about 6,500 mutants of the g++ object).
"""

from __future__ import annotations

import collections
import contextlib
import io
import os
import random
import re
import shutil
import subprocess
import time
from pathlib import Path

import pytest
from elf_mutations import mutants

from isasim import cli
from isasim.core.errors import IsasimError
from isasim.core.isa import get_isa
from isasim.core.machine import Machine
from isasim.core.trace import load_json, parse_init, printable

from .limits import Hang, address_space_room, time_limit

ROOT = Path(__file__).resolve().parents[2]
COMPILED = ROOT / "examples" / "x86_amx" / "compiled"
PER_STRUCTURE = int(os.environ.get("ISASIM_ELF_MUTANTS", "40"))
SEED = int(os.environ.get("ISASIM_FUZZ_SEED", "9"))
CASE_SECONDS = 5  # a load takes milliseconds; a case this slow is a hang (a loop over a corrupted count)
MAX_STEPS = 2000  # the kernels run a few dozen instructions; a corrupted one may loop
ALLOCATION_HEADROOM = 1 << 30  # more than any section of these files, far less than a corrupted size says
CLI_EVERY = 10
ISA = get_isa("x86_amx")
# the functions each file's mutants are loaded with: one with .rodata relocations, one that calls another
# function, one found by its demangled C++ name, one that runs from the zig build
FUNCTIONS = {"g++": ["amx_block", "amx_block_twice", "bf16_block"],
             "zig": ["amx_block_configured", "amx_block", "amx_block_twice"],
             "linked": ["amx_block", "amx_block_twice", "bf16_block"]}
INIT_FILES = {"amx_block": "amx_block", "amx_block_twice": "amx_block", "bf16_block": "bf16_block",
              "amx_block_configured": "amx_block_configured"}
AMX_FLAGS = ["-c", "-O2", "-mamx-tile", "-mamx-int8", "-mamx-bf16"]


def _gxx_problem() -> str | None:
    if shutil.which("g++") is None:
        return "no g++ on this machine to compile the kernels whose object files are mutated"
    probe = subprocess.run(["g++", "-x", "c++", "-c", "-o", os.devnull, "-mamx-tile", "-"], input="int x;\n",
                           capture_output=True, text=True, timeout=120)
    return f"this g++ does not take -mamx-tile: {probe.stderr.strip()[-200:]}" if probe.returncode else None


@pytest.fixture(scope="module")
def objects(tmp_path_factory) -> dict[str, bytes]:
    """The compiled kernels' object files (and a linked program), by how they were built."""
    problem = _gxx_problem()
    if problem:
        pytest.skip(problem)
    where = tmp_path_factory.mktemp("elf_fuzz")
    built = {"g++": where / "kernels_gxx.o"}
    subprocess.run(["g++", *AMX_FLAGS, str(COMPILED / "kernels.cpp"), "-o", str(built["g++"])], check=True,
                   timeout=300)
    from isasim.arm_sme.oracle.tools import find_zig

    zig, _looked = find_zig()
    if zig is not None:
        built["zig"] = where / "kernels_zig.o"
        subprocess.run([zig, "c++", "-target", "x86_64-linux-gnu", *AMX_FLAGS, str(COMPILED / "kernels.cpp"), "-o",
                        str(built["zig"])], check=True, timeout=600)
    if shutil.which("ld") is not None:  # a linked program: the loader moves its code and maps its data
        built["linked"] = where / "kernels.elf"
        subprocess.run(["ld", "-e", "amx_block", "--unresolved-symbols=ignore-all", str(built["g++"]), "-o",
                        str(built["linked"])], check=True, timeout=60)
    return {kind: path.read_bytes() for kind, path in built.items()}


def _one_line(error: IsasimError) -> str:
    line = printable(str(error))  # as the command line prints it
    assert "\n" not in line and "\r" not in line and line.strip(), repr(line)
    return line


def loader_outcome(path: Path, function: str, init) -> str:
    """What loading ``function`` of the file at ``path`` came to: 'refused', 'ran', 'faulted' or
    'step limit' (raising what breaks the rules)."""
    try:
        program, state = ISA.load_object(str(path), function, init)
    except IsasimError as error:
        line = _one_line(error)
        assert str(path) in line, f"the refusal does not name the file: {line}"
        return "refused"
    machine = Machine(ISA)
    try:
        ISA.check_program(program, machine.config)  # as the command line does, before anything runs
        machine.load_init(program, state)
        result = machine.run(MAX_STEPS)
    except IsasimError as error:  # the step limit, or what the command line would say of the init file
        _one_line(error)
        return "step limit" if "step limit" in str(error) else "run refused"
    return "faulted" if result.fault is not None else "ran"


def cli_outcome(path: Path, function: str, init_path: Path) -> str:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = cli.main(["run", str(path), "--function", function, "--init", str(init_path), "--no-color",
                         "--max-steps", str(MAX_STEPS)])
    lines = err.getvalue().splitlines()
    assert code in (0, 1, 2), f"exit {code}: {err.getvalue()[-500:]}"
    if code == 2:
        assert len(lines) == 1 and lines[0].startswith("isasim: error: "), err.getvalue()[-500:]
    return f"cli exit {code}"


def sample(data: bytes, rng: random.Random) -> list:
    """PER_STRUCTURE mutants of each structure (all of a structure that has fewer)."""
    by_structure = collections.defaultdict(list)
    for mutant in mutants(data):
        by_structure[mutant.structure].append(mutant)
    chosen = []
    for structure in sorted(by_structure):
        group = by_structure[structure]
        chosen += rng.sample(group, min(PER_STRUCTURE, len(group)))
    return chosen


def test_corrupted_object_files_are_refused_in_one_line(objects, tmp_path):
    rng = random.Random(SEED)
    inits = {name: parse_init(load_json(COMPILED / f"{init}.init.json")) for name, init in INIT_FILES.items()}
    counts: dict[str, collections.Counter] = {}
    failures = []
    started = time.perf_counter()
    with address_space_room(ALLOCATION_HEADROOM) as capped:
        for kind, data in objects.items():
            tally = counts[kind] = collections.Counter()
            path = tmp_path / f"{re.sub(r'[^a-z]', '', kind)}.o"
            for n, mutant in enumerate(sample(data, rng)):
                function = FUNCTIONS[kind][n % len(FUNCTIONS[kind])]
                path.write_bytes(mutant.data)
                case = f"{kind} object, {mutant.what}, --function {function}"
                try:
                    with time_limit(CASE_SECONDS, "the case"):
                        tally[loader_outcome(path, function, inits[function])] += 1
                        if n % CLI_EVERY == 0:
                            tally[cli_outcome(path, function, COMPILED / f"{INIT_FILES[function]}.init.json")] += 1
                except Hang as hang:
                    failures.append(f"{case}: {hang}")
                except MemoryError:
                    failures.append(f"{case}: MemoryError (an allocation of more than {ALLOCATION_HEADROOM >> 20} MiB)")
                except Exception as error:  # the very thing this test looks for: anything but a clean refusal
                    failures.append(f"{case}: {error.__class__.__name__}: {str(error)[:300]}")
                tally["mutants"] += 1
    elapsed = time.perf_counter() - started
    print(f"\ncorrupted ELF files, seed {SEED}, {PER_STRUCTURE} per structure, "
          f"{'allocations capped' if capped else 'allocations not capped (no RLIMIT_AS here)'}, {elapsed:.1f} s:")
    for kind, tally in counts.items():
        print(f"  {kind:7} " + ", ".join(f"{what} {n}" for what, n in sorted(tally.items())))
    assert not failures, f"{len(failures)} corrupted files were not refused cleanly:\n" + "\n".join(failures[:20])
    assert all(tally["refused"] and tally["ran"] for tally in counts.values()), counts  # both kinds were reached

"""GCC's own AMX run tests, compiled here at test time and run on isasim from their object files (issue 27).

GCC's testsuite has a run test for each AMX extension, gcc.target/i386/amx*-2.c: GCC 12 has amxtile-2.c,
amxint8-dp{bssd,bsud,busd,buud}-2.c and amxbf16-dpbf16ps-2.c (GCC 13 and 14 add amxfp16-dpfp16ps-2.c and
amxcomplex-cmm{im,rl}fp16ps-2.c).  Each loads tiles from data it builds, computes the same product in plain C
(its own reference, written by GCC's authors, not by us), runs the AMX instruction and calls abort() where the
two differ; main() only checks the CPUID bits and calls that test function.  So the test function run to its
end is a PASS, and a mismatch stops at abort.

Their code is never part of this repository.  The source comes, at test time, from

* $ISASIM_GCC_SOURCE: a GCC source tree, a GCC source tarball, or a folder holding one; or
* Debian's gcc-12-source package, which puts GCC 12's tarball in /usr/src/gcc-12/ (.ci/run installs it where
  apt can);

only the amx* files of gcc/testsuite/gcc.target/i386/ are taken out, into pytest's temporary folder, once per
session.  Without the source every test here skips, saying so in one line.

Each test is compiled as C, with the options of its dg-options line (the optimisation level replaced), by g++
(gcc's C compiler, through ``g++ -x c``) and by zig's clang (compilers.py finds both) at -O0 and -O2, and at -O2
with -march=sapphirerapids (where the compilers use VEX/EVEX forms instead of SSE2's); the test function runs
as a user runs it: ``isasim run FILE.o --function test_amx_int8_dpbssd``.  Where isasim refuses the run before
it starts (a call to a function that is neither in the file nor an isasim built-in, such as abort; an
instruction isasim does not simulate), the test is an expected failure whose reason is isasim's one-line
refusal, so the summary lists what is still missing; any other outcome than the function returning fails.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tarfile
from pathlib import Path

import pytest
from compilers import compile_object, gxx, zig_clang

from isasim import cli

# where Debian's gcc-12-source package puts GCC's source tarball (gcc-12.2.0-dfsg.tar.xz)
DEBIAN_SOURCE = Path("/usr/src/gcc-12")
TESTSUITE = "gcc/testsuite/gcc.target/i386"
GCC12_TESTS = ("amxtile-2.c", "amxint8-dpbssd-2.c", "amxint8-dpbsud-2.c", "amxint8-dpbusd-2.c",
               "amxint8-dpbuud-2.c", "amxbf16-dpbf16ps-2.c")
LATER_TESTS = ("amxfp16-dpfp16ps-2.c", "amxcomplex-cmmimfp16ps-2.c", "amxcomplex-cmmrlfp16ps-2.c")  # GCC 13, 14
SPR = ["-march=sapphirerapids"]
BUILDS = {"g++ -O0": (gxx, ["-O0"]), "g++ -O2": (gxx, ["-O2"]), "g++ -O2 spr": (gxx, ["-O2", *SPR]),
          "clang -O0": (zig_clang, ["-O0"]), "clang -O2": (zig_clang, ["-O2"]),
          "clang -O2 spr": (zig_clang, ["-O2", *SPR])}
MAX_STEPS = 5_000_000  # g++ -O0's int8 tests run about a million instructions (the C reference's four loops)
REFUSED = ("which isasim does not simulate", "nor an isasim built-in")
FAULT = re.compile(r"^fault (\S+) at (.*)$", re.M)
# A planted mismatch: the dpbsud test's tile product done by TDPBSSD (its B bytes read as signed), which its C
# reference (unsigned B) must catch: the run has to stop at abort.
PLANTED = """#include <immintrin.h>
#undef _tile_dpbsud
#define _tile_dpbsud(dst, a, b) _tile_dpbssd (dst, a, b)
"""


def gcc_source() -> tuple[Path | None, str]:
    """A GCC source tree or tarball, and where it came from; or None and why there is none."""
    named = os.environ.get("ISASIM_GCC_SOURCE")
    where = Path(named) if named else DEBIAN_SOURCE
    told = f"ISASIM_GCC_SOURCE={named}" if named else f"{DEBIAN_SOURCE} (Debian's gcc-12-source)"
    if where.is_file():
        return where, told
    if (where / TESTSUITE).is_dir():
        return where, told
    tarballs = sorted(where.glob("gcc-*.tar.*")) if where.is_dir() else []
    if tarballs:
        return tarballs[0], told
    how = ("it names no GCC source tree, tarball or folder holding one" if named else
           "install Debian's gcc-12-source (apt-get install gcc-12-source) or name a GCC source in ISASIM_GCC_SOURCE")
    return None, f"GCC's testsuite is not here: {told}: {how}"


def take_amx_files(source: Path, into: Path) -> Path:
    """gcc.target/i386/amx* of the source, copied or extracted into ``into``: the folder holding them."""
    if source.is_dir():
        for file in (source / TESTSUITE).glob("amx*"):
            shutil.copy(file, into / file.name)
        return into
    tar = shutil.which("tar")
    if tar:  # GNU tar reads the xz stream about twice as fast as tarfile
        done = subprocess.run([tar, "-x", "-f", str(source), "-C", str(into), "--wildcards",
                               f"*/{TESTSUITE}/amx*"], capture_output=True, text=True, timeout=300)
        if done.returncode:
            pytest.skip(f"{source.name}: tar could not take {TESTSUITE}/amx* out ({done.stderr.strip()[-200:]})")
    else:
        with tarfile.open(source, "r:*") as archive:
            wanted = [m for m in archive if f"/{TESTSUITE}/amx" in m.name and m.isfile()]
            safe = {"filter": "data"} if hasattr(tarfile, "data_filter") else {}
            archive.extractall(into, wanted, **safe)
    found = sorted(into.glob(f"*/{TESTSUITE}"))
    if not found:
        pytest.skip(f"{source.name} holds no {TESTSUITE}/amx* files")
    return found[0]


class GccAmxTests:
    """The GCC AMX test files (taken out once) and their objects (each built once, when a test first needs it)."""

    def __init__(self, where: Path):
        self.where = where
        self._folder: Path | str | None = None
        self._objects: dict[tuple[str, str], Path | str] = {}

    def folder(self) -> Path:
        if self._folder is None:
            source, told = gcc_source()
            if source is None:
                self._folder = told
            else:
                out = self.where / "gcc"
                out.mkdir()
                self._folder = take_amx_files(source, out)
        if isinstance(self._folder, str):
            pytest.skip(self._folder)
        return self._folder

    def source(self, test: str) -> Path:
        path = self.folder() / test
        if not path.is_file():
            pytest.skip(f"{test} is not in this GCC's testsuite (the AMX-FP16 and AMX-COMPLEX tests came with GCC 13 "
                        "and 14; Debian 12 packages GCC 12's source)")
        return path

    def object(self, test: str, build: str, extra: tuple[str, ...] = ()) -> Path:
        key = (test, build + " ".join(extra))
        if key not in self._objects:
            self._objects[key] = self._compile(test, build, list(extra))
        found = self._objects[key]
        if isinstance(found, str):
            pytest.skip(found)
        return found

    def _compile(self, test: str, build: str, extra: list[str]) -> Path | str:
        source = self.source(test)
        compiler, level = BUILDS[build]
        command, why = compiler()
        if command is None:
            return why
        options = [option for option in dg_options(source) if not option.startswith("-O")]
        output = self.where / f"{len(self._objects)}-{source.stem}.o"
        try:
            compile_object(command, source, output, ["-x", "c", *level, *options, *extra])
        except AssertionError as error:
            message = str(error)
            if "unrecognized command-line option" in message or "unknown argument" in message:
                return f"{build} does not take {test}'s options: {message.strip().splitlines()[0]}"
            raise
        return output


def dg_options(source: Path) -> list[str]:
    """The options of the test's ``{ dg-options "..." }`` line: what GCC's testsuite compiles it with."""
    found = re.search(r'\{\s*dg-options\s+"([^"]*)"', source.read_text(encoding="utf-8", errors="replace"))
    assert found, f"{source.name} has no dg-options line"
    return found[1].split()


def called_by_main(source: Path) -> str:
    """The function main() calls: ``#define DO_TEST name`` in the test."""
    found = re.search(r"^#define\s+DO_TEST\s+(\w+)", source.read_text(encoding="utf-8", errors="replace"), re.M)
    assert found, f"{source.name} names no DO_TEST function"
    return found[1]


@pytest.fixture(scope="module")
def gcc(tmp_path_factory) -> GccAmxTests:
    return GccAmxTests(tmp_path_factory.mktemp("gcc_amx"))


def run(obj: Path, function: str, capsys) -> tuple[int, str, str]:
    """``isasim run OBJ --function FUNCTION``: its exit status, output and error output."""
    capsys.readouterr()
    code = cli.main(["run", str(obj), "--function", function, "--max-steps", str(MAX_STEPS), "--no-color"])
    out, err = capsys.readouterr()
    return code, out, err


def expect_refusal_or(code: int, err: str, obj: Path, name: str) -> None:
    """A refusal before the run is an expected failure where it names what isasim does not have yet."""
    if code == 2:
        assert err.count("\n") == 1 and "Traceback" not in err, err
        assert any(reason in err for reason in REFUSED), err
        pytest.xfail(err.strip().replace(str(obj), name))


# ---- the source ----------------------------------------------------------------------------------------------


def test_the_source_holds_gccs_amx_run_tests(gcc):
    """Every GCC from 12 on has the six run tests, their header, and in each the test function main() calls."""
    folder = gcc.folder()
    assert (folder / "amx-check.h").is_file()
    functions = {test: called_by_main(folder / test) for test in GCC12_TESTS}
    assert functions["amxint8-dpbssd-2.c"] == "test_amx_int8_dpbssd"
    assert functions["amxbf16-dpbf16ps-2.c"] == "test_amx_bf16_dpbf16ps"
    assert all("-mamx-tile" in dg_options(folder / test) for test in GCC12_TESTS)


# ---- each test, each build -----------------------------------------------------------------------------------


@pytest.mark.parametrize("build", BUILDS)
@pytest.mark.parametrize("test", GCC12_TESTS + LATER_TESTS)
def test_gcc_amx_test_passes(gcc, test, build, capsys):
    """The test function returns: the tiles agree with GCC's C reference (no abort)."""
    obj = gcc.object(test, build)
    function = called_by_main(gcc.source(test))
    code, out, err = run(obj, function, capsys)
    expect_refusal_or(code, err, obj, f"{test} ({build})")
    fault = FAULT.search(out)
    if fault and fault[1] == "abort":
        pytest.fail(f"{test} ({build}): the tiles differ from GCC's C reference: {function} called abort "
                    f"({fault[2]})")
    assert code == 0 and fault is None, f"{test} ({build}): exit {code}: {err.strip() or fault and fault[0]}"
    assert re.search(r"\d+ instructions on ", out), out[:300]


def test_a_planted_mismatch_stops_at_abort(gcc, capsys):
    """The check has teeth: the dpbsud test with TDPBSSD in place of TDPBSUD (g++ -O0) stops at abort."""
    planted = gcc.where / "planted.h"
    planted.write_text(PLANTED)
    obj = gcc.object("amxint8-dpbsud-2.c", "g++ -O0", ("-include", str(planted)))
    code, out, err = run(obj, "test_amx_int8_dpbsud", capsys)
    expect_refusal_or(code, err, obj, "amxint8-dpbsud-2.c with TDPBSSD planted (g++ -O0)")
    fault = FAULT.search(out)
    assert code == 3 and fault and fault[1] == "abort", f"exit {code}: {fault and fault[0]} {err.strip()}"

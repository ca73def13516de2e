"""Where the SME2 oracles live and whether they work: zig's clang and qemu-aarch64 >= 10.1.

``tools/install_oracles.sh`` puts both into the project's cache directory (``.oracles/``); a
machine that has them elsewhere points at them with environment variables instead:

    ISASIM_ORACLES        the cache directory (default: ``.oracles`` at the checkout's root)
    ISASIM_ZIG            a ``zig`` executable (its ``zig clang`` / ``zig cc`` are the assembler
                          and the static aarch64 cross compiler)
    ISASIM_QEMU_AARCH64   a ``qemu-aarch64`` executable

Each ``*_problem`` function returns None when the tool works, or one sentence saying what is
missing; the test probes and the qemu backend both ask here, so they agree on the reason.
"""

from __future__ import annotations

import functools
import importlib.util
import os
import re
import shutil
import struct
import subprocess
import tempfile
from pathlib import Path

class OracleUnavailable(RuntimeError):
    """The oracle's tool is missing or does not work here (the message says which and why)."""


QEMU_MIN = (10, 1)  # 10.0 runs SME1 but raises SIGILL on every SME2 instruction

# Target features, in clang -cc1as spelling and in zig cc's -mcpu spelling (zig wants '_').
ASM_FEATURES = ("sme2", "sme2p1", "sme-i16i64", "sme-f64f64", "sme-f16f16", "sme-b16b16", "sme-mop4",
                "sve-bfscale", "mpam")  # the last two: BFMUL/BFSCALE and MPAMSM_EL1, which isasim assembles too
CC_CPU = "generic+sme2+sme2p1+sme_i16i64+sme_f64f64+sme_f16f16+sme_b16b16+sme_mop4"


def qemu_cpu(svl_bytes: int, sve: bool = False) -> str:
    """The -cpu value that makes QEMU the core isasim models at this SVL.

    ``-cpu max`` has FEAT_SVE as well as SME; isasim's default core has SME without SVE (SVE
    instructions UNDEFINED outside streaming mode), which is ``sve=off`` (QEMU 11.1 accepts it with
    SME on: a non-streaming CNTB is SIGILL, a streaming one runs).  With SVE (the "SVE" config
    feature) the non-streaming vector length is set to the SVL, as isasim's is."""
    if sve:
        return f"max,sve-default-vector-length={svl_bytes},sme-default-vector-length={svl_bytes}"
    return f"max,sve=off,sme-default-vector-length={svl_bytes}"


def oracle_dir() -> Path:
    """The cache the installer fills and the qemu backend keeps its built programs in."""
    if os.environ.get("ISASIM_ORACLES"):
        return Path(os.environ["ISASIM_ORACLES"])
    checkout = Path(__file__).resolve().parents[3]
    if (checkout / "pyproject.toml").is_file():
        return checkout / ".oracles"
    return Path.home() / ".cache" / "isasim" / "oracles"


def _first_executable(candidates: list[tuple[str, Path | str | None]]) -> tuple[str | None, list[str]]:
    """The first candidate that is an executable file, and where else was looked."""
    looked = []
    for where, path in candidates:
        if path and Path(path).is_file() and os.access(path, os.X_OK):
            return str(path), looked
        looked.append(where)
    return None, looked


def find_zig() -> tuple[str | None, list[str]]:
    """The zig executable (env var, the cache, an installed ziglang package, PATH) and where it was sought."""
    spec = importlib.util.find_spec("ziglang")
    packaged = Path(spec.origin).parent / "zig" if spec and spec.origin else None
    return _first_executable([
        ("$ISASIM_ZIG", os.environ.get("ISASIM_ZIG")),
        (f"{oracle_dir()}/python/ziglang/zig", oracle_dir() / "python" / "ziglang" / "zig"),
        ("the ziglang package", packaged),
        ("zig on PATH", shutil.which("zig")),
    ])


def find_qemu() -> tuple[str | None, list[str]]:
    """The qemu-aarch64 executable (env var, the cache, PATH) and where it was sought."""
    return _first_executable([
        ("$ISASIM_QEMU_AARCH64", os.environ.get("ISASIM_QEMU_AARCH64")),
        (f"{oracle_dir()}/bin/qemu-aarch64", oracle_dir() / "bin" / "qemu-aarch64"),
        ("qemu-aarch64 on PATH", shutil.which("qemu-aarch64")),
    ])


def zig_env() -> dict[str, str]:
    """zig keeps its build cache (musl's libc, built once) in the oracle dir, not in $HOME."""
    env = dict(os.environ)
    env.setdefault("ZIG_GLOBAL_CACHE_DIR", str(oracle_dir() / "zig-cache"))
    env.setdefault("ZIG_LOCAL_CACHE_DIR", str(oracle_dir() / "zig-cache"))
    return env


def _minimal_elf(words: list[int]) -> bytes:
    """A static aarch64 Linux executable holding just these instruction words (one PT_LOAD segment).

    The qemu probe runs it so that it needs no compiler: QEMU's SME2 support is checked
    even on a machine where clang is missing."""
    base, header_size = 0x400000, 64 + 56
    code = b"".join(struct.pack("<I", w) for w in words)
    ident = b"\x7fELF" + bytes([2, 1, 1, 0]) + bytes(8)  # 64-bit, little-endian, ELF version 1, SysV
    elf_header = ident + struct.pack("<HHIQQQIHHHHHH", 2, 183, 1, base + header_size, 64, 0, 0,
                                     64, 56, 1, 0, 0, 0)  # ET_EXEC, EM_AARCH64, one program header
    size = header_size + len(code)
    program_header = struct.pack("<IIQQQQQQ", 1, 5, 0, base, base, size, size, 0x1000)  # PT_LOAD, R+X
    return elf_header + program_header + code


# smstart; udot za.s[w8, 0, vgx4], {z0.h-z3.h}, z4.h (SME2 only); smstop; exit(42).
# The exit status 42 shows the program got past the SME2 instruction.
_SME2_PROBE_WORDS = [0xD503477F, 0xC1741418, 0xD503467F, 0xD2800540, 0xD2800BA8, 0xD4000001]


def qemu_version(qemu: str) -> tuple[int, int] | str:
    """(major, minor) of a qemu-aarch64, or why it could not be read."""
    try:
        out = subprocess.run([qemu, "--version"], capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.SubprocessError) as e:
        return f"{qemu} --version failed: {e}"
    found = re.search(r"version (\d+)\.(\d+)", out)
    if found is None:
        return f"{qemu} --version printed no version: {out[:80]!r}"
    return int(found.group(1)), int(found.group(2))


@functools.cache
def qemu_problem() -> str | None:
    """None if qemu-aarch64 >= 10.1 is found and runs an SME2 instruction, else why not."""
    qemu, looked = find_qemu()
    if qemu is None:
        return ("no qemu-aarch64 (looked at " + ", ".join(looked) + "); run tools/install_oracles.sh")
    return qemu_problem_at(qemu)


def qemu_problem_at(qemu: str) -> str | None:
    """None if this qemu-aarch64 is >= 10.1 and runs an SME2 instruction, else why not."""
    version = qemu_version(qemu)
    if isinstance(version, str):
        return version
    if version < QEMU_MIN:
        return "%s is %d.%d; SME2 needs qemu-aarch64 >= %d.%d" % ((qemu,) + version + QEMU_MIN)
    with tempfile.TemporaryDirectory() as tmp:
        probe = Path(tmp, "sme2-probe")
        probe.write_bytes(_minimal_elf(_SME2_PROBE_WORDS))
        probe.chmod(0o755)
        try:
            done = subprocess.run([qemu, "-cpu", "max", str(probe)], capture_output=True, timeout=60)
        except (OSError, subprocess.SubprocessError) as e:
            return f"{qemu} could not run an SME2 probe program: {e}"
    if done.returncode != 42:
        return (f"{qemu} {version[0]}.{version[1]} did not run an SME2 UDOT "
                f"(exit status {done.returncode}; -4 is SIGILL)")
    return None


@functools.cache
def clang_problem() -> str | None:
    """None if zig's clang assembles SME2 (and SME_I16I64) code, else why not."""
    zig, looked = find_zig()
    if zig is None:
        return "no zig (looked at " + ", ".join(looked) + "); run tools/install_oracles.sh"
    command = [zig, "clang", "-cc1as", "-triple", "aarch64-unknown-linux-gnu"]
    for feature in ASM_FEATURES:
        command += ["-target-feature", "+" + feature]
    command += ["-filetype", "asm", "-show-encoding", "-o", "-", "-"]
    try:
        done = subprocess.run(command, input="zero {zt0}\n", capture_output=True, text=True,
                              timeout=120, env=zig_env())
    except (OSError, subprocess.SubprocessError) as e:
        return f"{zig} clang could not run: {e}"
    if "0x01,0x00,0x48,0xc0" not in done.stdout:  # zero {zt0} = 0xC0480001, SME2 only
        first = (done.stderr.strip().splitlines() or ["no output"])[0]
        return f"{zig} clang does not assemble SME2 ({first[:120]})"
    return None

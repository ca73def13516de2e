"""Run SME2 snippets on QEMU: the execution oracle behind isasim's ``qemu`` backend.

``run(snippet, state, svl_bits)`` assembles the snippet into a static aarch64 Linux program
(zig cc, musl) around a harness of our own (harness_main.c, harness_entry.S), runs it under
``qemu-aarch64 -cpu max,sve=off,sme-default-vector-length=<SVL bytes>`` (tools.qemu_cpu: SME without
SVE, as isasim's default core), and returns the state the snippet left.  The harness enters
streaming mode with ZA on before the snippet and dumps
everything after it, so a snippet is the body of a kernel, not a whole program: it ends by
falling off its last line or at RET (x30 holds the return address while it runs).

A state is plain Python (every key optional on input; missing registers start at zero):

    {"x": [x0 .. x30], "sp": int,                   # x30 reads back as given unless the snippet moves it
     "nzcv": int,                                   # NZCV as MRS reads it (bits 31:28)
     "svcr": int,                                   # the modes to start in (default 3: SM and ZA on)
     "z": [bytes] * 32, "p": [bytes] * 16,          # SVL/8 and SVL/64 bytes each
     "za": bytes, "zt0": bytes,                     # ZA[0] first, SVL/8 vectors of SVL/8 bytes; 64
     "memory": bytes, "memory_base": int,           # one writable block, mapped at memory_base
     "regions": [(address, bytes, writable)]}       # and/or any number of others (a trace's Init.memory)

and the result has the same keys, ``"svcr"`` as the snippet left it (bit 0 SM, bit 1 ZA) and gives back
"memory" and "regions" as the snippet left them.  A write to a read-only region is a SIGSEGV.  A snippet that
faults gives a Fault instead (``run`` raises it as OracleFault) naming the signal and the index
of the faulting instruction in the snippet.

Programs are built once per set of snippets and kept in the oracle dir under their content hash;
``run_many`` puts many snippets into one program and many cases into one QEMU process.
"""

from __future__ import annotations

import hashlib
import os
import re
import signal
import struct
import subprocess
import tempfile
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from collections.abc import Sequence

from .tools import (CC_CPU, OracleUnavailable, clang_problem, find_qemu, find_zig, oracle_dir, qemu_cpu, qemu_problem,
                    zig_env)

SVLS = (128, 256, 512, 1024, 2048)
NUM_X = 31  # x0-x30; x30 holds the snippet's return address while it runs and reads back as given
MEMORY_BASE = 0x10000000  # where "memory" is mapped when the state names no memory_base
ZT0_BYTES = 64
_MAGIC = 0x324D5349  # "ISM2", the harness's input header
_HARNESS_FILES = ("harness_main.c", "harness_entry.S")


class OracleError(RuntimeError):
    """The oracle could not give an answer: the snippet does not assemble, or QEMU misbehaved."""


@dataclass(frozen=True)
class Fault:
    """A snippet stopped by a signal: SIGILL for an UNDEFINED instruction, SIGSEGV/SIGBUS for memory."""

    signal: str              # "SIGILL", "SIGSEGV", ...
    index: int | None        # 0-based instruction index in the snippet (None: outside the snippet)
    address: int             # the fault address the kernel reported (the pc for SIGILL)
    pc: int


class OracleFault(OracleError):
    def __init__(self, fault: Fault):
        where = "outside the snippet" if fault.index is None else f"at instruction {fault.index}"
        super().__init__(f"{fault.signal} {where} (address 0x{fault.address:x})")
        self.fault = fault


# ---- state <-> bytes --------------------------------------------------------------------------

def _svl_bytes(svl_bits: int) -> int:
    if svl_bits not in SVLS:
        raise ValueError(f"SVL must be one of {', '.join(map(str, SVLS))} bits, not {svl_bits}")
    return svl_bits // 8


def _exact(name: str, value, size: int) -> bytes:
    if value is None:
        return bytes(size)
    data = bytes(value)
    if len(data) != size:
        raise ValueError(f"{name} must be {size} bytes at this SVL, not {len(data)}")
    return data


_PAGE = 4096  # the harness checks the guest's page size is this


def _regions(state: dict) -> list[tuple[int, bytes, bool]]:
    """The state's memory as (address, bytes, writable): "regions", plus "memory" at "memory_base"."""
    regions = [(int(address), bytes(data), bool(writable)) for address, data, writable in state.get("regions", [])]
    if state.get("memory"):
        regions.append((state.get("memory_base", MEMORY_BASE), bytes(state["memory"]), True))
    ordered = sorted(regions)
    for (a, data, _), (b, _, _) in zip(ordered, ordered[1:]):
        if a + len(data) > b:
            raise ValueError(f"memory regions at 0x{a:x} and 0x{b:x} overlap")
    return regions


def _page_spans(ranges: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """The page-aligned (start, size) spans covering these (address, size) ranges, merged."""
    pages = sorted((a // _PAGE * _PAGE, -(-(a + n) // _PAGE) * _PAGE) for a, n in ranges)
    spans: list[list[int]] = []
    for start, end in pages:
        if spans and start <= spans[-1][1]:
            spans[-1][1] = max(spans[-1][1], end)
        else:
            spans.append([start, end])
    return [(start, end - start) for start, end in spans]


def _pack_state(snippet: int, state: dict, svlb: int) -> bytes:
    x = list(state.get("x", []))
    if len(x) > NUM_X:
        raise ValueError(f"the qemu oracle loads x0-x{NUM_X - 1}; got {len(x)} x registers")
    x += [0] * (NUM_X - len(x))
    z, p = list(state.get("z", [])), list(state.get("p", []))
    if len(z) > 32 or len(p) > 16:
        raise ValueError("a state has at most 32 Z and 16 P registers")
    regions = _regions(state)
    # Protection is per page: a page a writable region touches stays writable, even where a
    # read-only region shares it, so only a read-only region on pages of its own faults on a write.
    maps = _page_spans([(a, len(data)) for a, data, _ in regions if data])
    writable_pages = {page for start, size in _page_spans([(a, len(d)) for a, d, w in regions if w and d])
                      for page in range(start, start + size, _PAGE)}
    readonly = [(page, _PAGE) for start, size in _page_spans([(a, len(d)) for a, d, w in regions if not w and d])
                for page in range(start, start + size, _PAGE) if page not in writable_pages]
    parts = [struct.pack("<IIII", snippet, len(regions), len(maps), len(readonly))]
    parts += [struct.pack("<QQ", *span) for span in maps + readonly]
    parts += [struct.pack("<QQ", a, len(data)) for a, data, _ in regions]
    parts += [struct.pack(f"<{NUM_X + 1}Q", *(v & (2**64 - 1) for v in x + [state.get("sp", 0)])),
              struct.pack("<QQ", state.get("nzcv", 0) & 0xF0000000, state.get("svcr", 3) & 3)]
    parts += [_exact(f"z{n}", z[n] if n < len(z) else None, svlb) for n in range(32)]
    parts += [_exact(f"p{n}", p[n] if n < len(p) else None, svlb // 8) for n in range(16)]
    parts += [_exact("za", state.get("za"), svlb * svlb), _exact("zt0", state.get("zt0"), ZT0_BYTES)]
    parts += [data for _, data, _ in regions]
    return b"".join(parts)


class _Reader:
    def __init__(self, data: bytes):
        self.data, self.at = data, 0

    def take(self, n: int) -> bytes:
        if self.at + n > len(self.data):
            raise EOFError
        chunk = self.data[self.at:self.at + n]
        self.at += n
        return chunk

    def u64s(self, n: int) -> list[int]:
        return list(struct.unpack(f"<{n}Q", self.take(8 * n)))


def _unpack_result(reader: _Reader, svlb: int, state: dict) -> dict | Fault:
    status, signum = struct.unpack("<II", reader.take(8))
    if status == 1:
        address, index, pc = reader.u64s(3)
        index = index if index < 2**63 else None  # -1: the fault was not in the snippet
        return Fault(signal.Signals(signum).name, index, address, pc)
    (svcr,) = reader.u64s(1)
    *x, sp = reader.u64s(NUM_X + 1)
    (nzcv,) = reader.u64s(1)
    z = [reader.take(svlb) for _ in range(32)]
    p = [reader.take(svlb // 8) for _ in range(16)]
    za, zt0 = reader.take(svlb * svlb), reader.take(ZT0_BYTES)
    regions = [(a, reader.take(len(data)), writable) for a, data, writable in _regions(state)]
    result = {"x": x, "sp": sp, "nzcv": nzcv, "svcr": svcr, "z": z, "p": p, "za": za, "zt0": zt0}
    if state.get("memory"):  # the shorthand's block is the last region
        result |= {"memory": regions[-1][1], "memory_base": regions[-1][0]}
    if "regions" in state:
        result["regions"] = regions[:len(regions) - (1 if state.get("memory") else 0)]
    return result


# ---- building the test program ----------------------------------------------------------------

def _snippet_source(n: int, text: str) -> str:
    # One file per snippet, so two snippets may use the same labels.  The branch after the last
    # line takes a snippet that falls off its end back to the harness without needing x30.
    return (f"\t.text\n\t.p2align 2\n\t.globl isasim_snippet_{n}\nisasim_snippet_{n}:\n"
            f"{text.rstrip()}\n\tb isasim_snippet_return\n\t.globl isasim_snippet_{n}_end\nisasim_snippet_{n}_end:\n")


_SNIPPET_HEADER_LINES = 4


def _table_source(count: int) -> str:
    rows = "".join(f"\t.quad isasim_snippet_{n}, isasim_snippet_{n}_end\n" for n in range(count))
    return (f"\t.section .rodata\n\t.p2align 3\n\t.globl isasim_snippets\nisasim_snippets:\n{rows}"
            f"\t.globl isasim_snippet_count\nisasim_snippet_count:\n\t.quad {count}\n")


def _harness_text(name: str) -> str:
    return resources.files(__package__).joinpath(name).read_text()


def build(snippets: Sequence[str]) -> Path:
    """The static test program holding these snippets (built now, or found in the cache)."""
    problem = clang_problem()
    if problem:
        raise OracleUnavailable(problem)
    zig, _ = find_zig()
    sources = {name: _harness_text(name) for name in _HARNESS_FILES}
    sources |= {f"snippet_{n}.s": _snippet_source(n, text) for n, text in enumerate(snippets)}
    sources["snippets.s"] = _table_source(len(snippets))
    key = hashlib.sha256(repr((CC_CPU, sorted(sources.items()))).encode()).hexdigest()[:24]
    program = oracle_dir() / "builds" / key / "prog"
    if program.is_file():
        return program
    program.parent.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=program.parent.parent) as tmp:
        for name, text in sources.items():
            Path(tmp, name).write_text(text)
        done = subprocess.run(
            [zig, "cc", "-target", "aarch64-linux-musl", f"-mcpu={CC_CPU}", "-O1", "-static",
             "-o", "prog", *sources], cwd=tmp, capture_output=True, text=True, timeout=600, env=zig_env())
        if done.returncode != 0:
            raise OracleError(_explain_build_error(done.stderr))
        # Publish the whole directory at once: a concurrent run sees either no program or all of it.
        final = Path(tmp, "out")
        final.mkdir()
        os.replace(Path(tmp, "prog"), final / "prog")
        try:
            os.replace(final, program.parent)
        except OSError:
            if not program.is_file():
                raise
    return program


def _explain_build_error(stderr: str) -> str:
    """clang's first error, with a snippet's file and line turned back into the caller's terms."""
    for line in stderr.splitlines():
        found = re.match(r"^(?:.*/)?snippet_(\d+)\.s:(\d+):\d+: error: (.*)$", line)
        if found:
            number, row, message = int(found.group(1)), int(found.group(2)), found.group(3)
            return f"snippet {number} line {row - _SNIPPET_HEADER_LINES}: {message}"
    return "zig cc could not build the test program: " + stderr.strip()[:500]


# ---- running ----------------------------------------------------------------------------------

def has_sve(config: dict) -> bool:
    """An arm_sme configuration's core has FEAT_SVE (its "SVE" feature): run_many's ``sve``."""
    return "SVE" in config.get("features", ())


def run_many(cases: Sequence[tuple[str, dict]], svl_bits: int, timeout: float = 120, *,
             sve: bool = False) -> list[dict | Fault]:
    """Run each (snippet, state) from its own state; all in one program and as few QEMU runs as can be.

    ``sve``: the core has FEAT_SVE (isasim's "SVE" config feature), so SVE instructions run outside
    streaming mode, at a vector length equal to the SVL; without it QEMU runs with ``sve=off``.
    A case that faults ends its QEMU process after reporting; the cases after it run in a new one."""
    problem = qemu_problem()
    if problem:
        raise OracleUnavailable(problem)
    svlb = _svl_bytes(svl_bits)
    texts = sorted({snippet for snippet, _ in cases})
    number = {text: n for n, text in enumerate(texts)}
    program = build(texts) if cases else None
    packed = [_pack_state(number[snippet], state, svlb) for snippet, state in cases]
    qemu, _ = find_qemu()
    results: list[dict | Fault] = []
    while len(results) < len(cases):
        todo = range(len(results), len(cases))
        stream = struct.pack("<III", _MAGIC, svlb, len(todo)) + b"".join(packed[i] for i in todo)
        try:
            done = subprocess.run([qemu, "-cpu", qemu_cpu(svlb, sve), str(program)],
                                  input=stream, capture_output=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            raise OracleError(f"QEMU ran longer than {timeout} s (a snippet that never ends?)") from None
        reader = _Reader(done.stdout)
        before = len(results)
        for i in todo:
            try:
                result = _unpack_result(reader, svlb, cases[i][1])
            except EOFError:
                break
            results.append(result)
            if isinstance(result, Fault):
                break
        if len(results) == before:
            message = done.stderr.decode(errors="replace").strip() or f"exit status {done.returncode}"
            raise OracleError(f"the test program under QEMU gave no result: {message[:300]}")
    return results


def run(snippet_asm: str, state: dict, svl_bits: int, *, sve: bool = False) -> dict:
    """The state after running one snippet from ``state`` at this SVL; raises OracleFault on a fault."""
    (result,) = run_many([(snippet_asm, state)], svl_bits, sve=sve)
    if isinstance(result, Fault):
        raise OracleFault(result)
    return result

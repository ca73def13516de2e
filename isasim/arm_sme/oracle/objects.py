"""QEMU runs a compiled function as isasim loaded it: the ``qemu`` backend's way for a program from an object file
(``isasim diff FILE.o --function NAME --against qemu``).

isasim's object loader (isasim/arm_sme/elf.py) places the function and what it calls at CODE_BASE, applies the
relocations, maps the data sections and a stack, and gives each built-in a word after the code.  The harness
here (object_main.c, object_entry.S, object_routines.S: the project's own) runs those very words under
``qemu-aarch64`` at the same addresses, every region of the run mapped at its own address, each built-in's word
a branch to a routine of the harness that does what isasim's built-in does (memset ... the SME ABI routines,
changing no register but their results), and x30 the word after the code, as isasim sets it, which branches
back to the harness.  So the final states are the same state, compared as any two backends' are: every
register, Z, P, ZA, ZT0 and every memory region (the init's, the data sections and the stack).

At a fault, the state is the one the signal frame QEMU writes holds (object_main.c reads its records: the
general registers, NZCV, SVE with PSTATE.SM, ZA, ZT0, TPIDR2), so a faulting run compares whole too.

Lockstep (``diff --lockstep``, ``step --against qemu``; ``object_steps``): the harness makes every word of the
code a BRK and records, from the signal frame, the state before each instruction (the memory as the pages that
changed), then runs the word out of line, from a copy followed by a branch back, or does it in the handler where
it reads the pc (B, BL, B.cond, CBZ/CBNZ, TBZ/TBNZ, ADR, ADRP, BLR, LDR literal).  One QEMU run gives every step.

What the harness cannot show: Z beyond 128 bits and P outside streaming mode (the core has no SVE: they read
as zero, as isasim's do after SMSTOP), ZA and ZT0 while ZA is off (zero in both).  A fault inside a routine (a
TPIDR2 block in unmapped memory) has no instruction of the program to name, and the routine's scratch
registers are its own there.
"""

from __future__ import annotations

import hashlib
import os
import signal
import struct
import subprocess
import tempfile
from importlib import resources
from pathlib import Path

from ...core.backends import Outcome
from ...core.errors import ConfigError
from ...core.faults import Fault as CoreFault
from ...core.program import Program
from ...core.trace import Init
from ..forms.builtins import BUILTINS, UDF_BASE, BuiltinForm
from .observation import fill_defaults, harness_memory, observed, oracle_state
from .qemu import _Reader, _page_spans, _regions, _unpack_result, OracleError
from .tools import CC_CPU, OracleUnavailable, clang_problem, find_qemu, find_zig, oracle_dir, qemu_cpu, qemu_problem, \
    zig_env

_MAGIC = 0x424F5349  # "ISOB"
_FILES = ("object_main.c", "object_entry.S", "object_routines.S")
ROUTINE_ORDER = ("memset", "memcpy", "memmove", "abort", "__arm_tpidr2_save", "__arm_tpidr2_restore",
                 "__arm_za_disable", "__arm_sme_state", "__arm_get_current_vg", "__arm_sme_state_size",
                 "__arm_sme_save", "__arm_sme_restore")  # object_routines.S's table
ABORTED = "abort"
# Where the harness program is linked: within a branch's reach (128 MiB) of the code at CODE_BASE, so that a
# built-in's word and the word after the code can be B instructions to it, and above the addresses a kernel's
# init usually names (16 MiB and up, where the snippet harness lives).
IMAGE_BASE = 0x7000000


def compiled_function(program: Program) -> bool:
    """Whether ``program`` is a function elf.py loaded from an object file (it marks it so), or holds a
    built-in (only such a program can)."""
    return getattr(program, "compiled_function", False) or any(isinstance(i.form, BuiltinForm)
                                                               for i in program.instructions)


def is_object_program(program: Program, init: Init) -> bool:
    """Whether ``program`` is a compiled function as elf.py loads it (or its recorded trace): it holds a
    built-in, or x30 is the address after its code (the return that ends the run)."""
    return (any(isinstance(i.form, BuiltinForm) for i in program.instructions)
            or init.regs.get("x30") == program.end)


def build() -> Path:
    """The object harness program (built now, or found in the oracle dir's cache)."""
    problem = clang_problem()
    if problem:
        raise OracleUnavailable(problem)
    zig, _ = find_zig()
    sources = {name: resources.files(__package__).joinpath(name).read_text() for name in _FILES}
    key = "object-" + hashlib.sha256(repr((CC_CPU, IMAGE_BASE, sorted(sources.items()))).encode()).hexdigest()[:24]
    program = oracle_dir() / "builds" / key / "prog"
    if program.is_file():
        return program
    program.parent.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=program.parent.parent) as tmp:
        for name, text in sources.items():
            Path(tmp, name).write_text(text)
        done = subprocess.run([zig, "cc", "-target", "aarch64-linux-musl", f"-mcpu={CC_CPU}", "-O1", "-static",
                               f"-Wl,--image-base={IMAGE_BASE:#x}", "-o", "prog", *sources], cwd=tmp,
                              capture_output=True, text=True, timeout=600,
                              env=zig_env())
        if done.returncode != 0:
            raise OracleError("zig cc could not build the object harness: " + done.stderr.strip()[:500])
        final = Path(tmp, "out")
        final.mkdir()
        os.replace(Path(tmp, "prog"), final / "prog")
        try:
            os.replace(final, program.parent)
        except OSError:
            if not program.is_file():
                raise
    return program


def _pack(program: Program, state: dict, svlb: int, sve: bool, x30: int, tpidr2: int, steps: bool = False) -> bytes:
    slots = [(i.address, ROUTINE_ORDER.index(i.form.mnemonic)) for i in program.instructions
             if isinstance(i.form, BuiltinForm)]
    regions = _regions(state)
    maps = _page_spans([(a, len(data)) for a, data, _ in regions if data])
    writable_pages = {page for start, size in _page_spans([(a, len(d)) for a, d, w in regions if w and d])
                      for page in range(start, start + size, 4096)}
    readonly = [(page, 4096) for start, size in _page_spans([(a, len(d)) for a, d, w in regions if not w and d])
                for page in range(start, start + size, 4096) if page not in writable_pages]
    x = list(state["x"]) + [0] * (31 - len(state["x"]))
    parts = [struct.pack("<III", _MAGIC, svlb, int(sve) | int(steps) << 1),
             struct.pack("<QQQQ", program.base, program.end, x30, tpidr2),
             struct.pack("<IIII", len(slots), len(regions), len(maps), len(readonly))]
    parts += [struct.pack("<QQ", *slot) for slot in slots]
    parts += [struct.pack("<QQ", *span) for span in maps + readonly]
    parts += [struct.pack("<QQ", a, len(data)) for a, data, _ in regions]
    parts += [struct.pack("<32Q", *(v % (1 << 64) for v in x[:30] + [0, state.get("sp", 0)])),
              struct.pack("<QQ", state.get("nzcv", 0) & 0xF0000000, state.get("svcr", 0) & 3)]
    parts += [bytes(z) for z in state["z"]] + [bytes(p) for p in state["p"]]
    parts += [bytes(state.get("za") or bytes(svlb * svlb)), bytes(state.get("zt0") or bytes(64))]
    parts += [program.code] + [data for _, data, _ in regions]
    return b"".join(parts)


def run_object(program: Program, init: Init, config: dict, timeout: float) -> Outcome:
    """The compiled function's run under QEMU, as an Outcome the core compares with the simulator's."""
    problem = qemu_problem()
    if problem:
        raise OracleUnavailable(problem)
    names = {form.mnemonic for form in BUILTINS.values()}
    assert set(ROUTINE_ORDER) == names and all(
        BUILTINS[name].word == UDF_BASE + n for n, name in enumerate(ROUTINE_ORDER)), "harness table out of step"
    svl = config["svl"]
    svlb = svl // 8
    state = fill_defaults(oracle_state(init), svl)
    state["svcr"] = init.regs.get("svcr", 0)  # a function is entered in the modes its init gives (none: off)
    sve = "SVE" in config.get("features", ())
    stream = _pack(program, state, svlb, sve, init.regs.get("x30", program.end), init.regs.get("tpidr2_el0", 0))
    qemu, _ = find_qemu()
    try:
        done = subprocess.run([qemu, "-cpu", qemu_cpu(svlb, sve), str(build())], input=stream, capture_output=True,
                              timeout=timeout)
    except subprocess.TimeoutExpired:
        return Outcome({}, harness_memory(state["regions"]), CoreFault("timeout", f"QEMU ran longer than {timeout} s"),
                       None, timed_out=True)
    reader = _Reader(done.stdout)
    try:
        result = _unpack_result(reader, svlb, state)
        if isinstance(result, dict):
            seen = result
            seen["tpidr2_el0"] = reader.u64s(1)[0]
        else:
            seen = _fault_state(reader, svlb, state)
    except EOFError:
        message = done.stderr.decode(errors="replace").strip() or f"exit status {done.returncode}"
        raise OracleError(f"the object harness under QEMU gave no result: {message[:300]}") from None
    if not isinstance(result, dict):  # a fault, and the state it saw (the signal frame's)
        return Outcome(observed(seen, init, svl), harness_memory(seen["regions"]), _fault(result, program), None)
    return Outcome(observed(result, init, svl), harness_memory(result["regions"]), None, None)


def _fault(result, program: Program) -> CoreFault:
    """A fault record as the arm_sme fault it stands for, naming the program's instruction."""
    kind = ABORTED if result.signal == signal.Signals.SIGABRT.name else None
    fault = CoreFault(kind or {"SIGILL": "UNDEFINED", "SIGSEGV": "TRANSLATION", "SIGBUS": "ALIGNMENT"}.get(
        result.signal, result.signal), f"{result.signal} under QEMU",
        address=None if result.signal in ("SIGILL", "SIGABRT") else result.address)
    index = result.index
    if index is None and kind == ABORTED:  # abort's own word: the built-in the program called
        index = next((i.index for i in program.instructions if i.form.mnemonic == "abort"), None)
    if index is not None and index < len(program.instructions):
        ins = program.instructions[index]
        fault.index, fault.pc, fault.instruction = index, ins.address, ins.text
    return fault


def _frame_registers(reader: _Reader, svlb: int) -> dict:
    """The registers and arrays object_main.c's handler writes from a signal frame."""
    (svcr,) = reader.u64s(1)
    *x, sp = reader.u64s(32)
    (nzcv,) = reader.u64s(1)
    z = [reader.take(svlb) for _ in range(32)]
    p = [reader.take(svlb // 8) for _ in range(16)]
    za, zt0 = reader.take(svlb * svlb), reader.take(64)
    (tpidr2,) = reader.u64s(1)
    return {"x": x[:31], "sp": sp, "nzcv": nzcv, "svcr": svcr, "z": z, "p": p, "za": za, "zt0": zt0,
            "tpidr2_el0": tpidr2}


def _fault_state(reader: _Reader, svlb: int, state: dict) -> dict:
    """The state a fault saw, as object_main.c's handler writes it after the fault record."""
    seen = _frame_registers(reader, svlb)
    seen["regions"] = [(a, reader.take(len(data)), writable) for a, data, writable in _regions(state)]
    return seen


def object_steps(program: Program, init: Init, config: dict, timeout: float, max_steps: int):
    """Yield (index, pc, observed, memory, fault) after every instruction of a compiled function, as QEMU ran it:
    the harness's lockstep mode (object_main.c) writes the state before each instruction (every word a BRK, the
    word then run out of line), so the state after step k is the one recorded before step k+1 (or at the end)."""
    problem = qemu_problem()
    if problem:
        raise OracleUnavailable(problem)
    for instruction in program.instructions:  # the one pc-reading word the handler does not do itself
        word = int.from_bytes(instruction.encoding, "little")
        if word & 0x3F000000 == 0x1C000000:
            raise ConfigError(f"the qemu backend's lockstep cannot step instruction {instruction.index} "
                              f"({instruction.text}): an LDR (SIMD&FP literal) reads the pc; diff without --lockstep")
    svl = config["svl"]
    svlb = svl // 8
    state = fill_defaults(oracle_state(init), svl)
    state["svcr"] = init.regs.get("svcr", 0)
    sve = "SVE" in config.get("features", ())
    stream = _pack(program, state, svlb, sve, init.regs.get("x30", program.end), init.regs.get("tpidr2_el0", 0),
                   steps=True)
    qemu, _ = find_qemu()
    try:
        done = subprocess.run([qemu, "-cpu", qemu_cpu(svlb, sve), str(build())], input=stream, capture_output=True,
                              timeout=timeout)
    except subprocess.TimeoutExpired:
        raise OracleError(f"QEMU ran longer than {timeout} s (the lockstep mode traps on every instruction)") from None
    reader = _Reader(done.stdout)
    regions = [(a, bytearray(data), writable) for a, data, writable in _regions(state)]
    pending = None  # the instruction the last record was written before (its index), not yet reported
    steps = 0
    try:
        while steps < max_steps:
            status, _signal = struct.unpack("<II", reader.take(8))
            if status == 2:
                (index,) = reader.u64s(1)
                seen = _frame_registers(reader, svlb)
                while True:
                    (number,) = struct.unpack("<I", reader.take(4))
                    if number == 0xFFFFFFFF:
                        break
                    offset, size = struct.unpack("<II", reader.take(8))
                    regions[number][1][offset:offset + size] = reader.take(size)
                seen["regions"] = [(a, bytes(data), w) for a, data, w in regions]
                if pending is not None:
                    yield _step(program, pending, steps, seen, init, svl, None)
                    steps += 1
                pending = index
                continue
            reader.at -= 8
            if status == 0:
                result = _unpack_result(reader, svlb, state)
                result["tpidr2_el0"] = reader.u64s(1)[0]
                if pending is not None:
                    yield _step(program, pending, steps, result, init, svl, None)
                return
            record = _unpack_result(reader, svlb, state)
            seen = _fault_state(reader, svlb, state)
            if pending is not None:
                yield _step(program, pending, steps, seen, init, svl, _fault(record, program))
            return
    except EOFError:
        message = done.stderr.decode(errors="replace").strip() or f"exit status {done.returncode}"
        raise OracleError(f"the object harness's lockstep under QEMU ended early: {message[:300]}") from None


def _step(program: Program, index: int, step: int, seen: dict, init: Init, svl: int, fault):
    """What the core's lockstep takes for one step: (step number, the instruction's address, the state after it,
    the memory after it, its fault)."""
    return (step, program.instructions[index].address, observed(seen, init, svl), harness_memory(seen["regions"]),
            fault)

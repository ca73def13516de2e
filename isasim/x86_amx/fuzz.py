"""Differential fuzzing of x86_amx: random programs on the simulator and on another backend, compared.

Generators (hypothesis strategies)
    ``scalar_cases()`` and ``amx_cases()`` draw test cases; ``case.standalone()``
    turns one into a (program text, Init) pair, and ``scalar_programs()`` /
    ``amx_programs()`` are the strategies of those pairs.

    Scalar cases are random straight-line-with-forward-branches programs of the
    scalar subset (MOV/MOVABS, ADD, SUB, CMP, XOR, TEST, INC, DEC, LEA, the three
    IMUL forms, JMP, the sixteen Jcc with their aliases, rel8 and rel32, NOP and
    NOP r/m, RET) at every operand width, ending with RET.  Memory operands go
    only through one or two reserved base registers that point into the case's
    own scratch slot, with small displacements and a reserved index register
    holding a small value, so every access stays inside mapped memory; nothing
    writes the reserved registers.  A conditional branch only tests flags that
    are defined on every path to it (IMUL leaves SF/ZF/AF/PF undefined, XOR and
    TEST leave AF undefined), so the two backends never legitimately part ways.

    AMX cases configure tiles from random valid and invalid 64-byte
    configurations and run TILEZERO, TILELOADD(T1), TILESTORED (strides 0,
    negative, odd), the integer TDPs and TDPBF16PS (matching and mismatching
    shapes, repeated tile numbers as raw bytes), TILERELEASE and STTILECFG, on
    data full of the values worth testing: int8 0x80/0xff/0x7f/0x00, int32
    accumulators next to the wrap, bf16 NaN payloads, infinities, denormals and
    products next to the FTZ boundary 2^-126, fp32 accumulators next to it.

Running (``run_fuzz``)
    Starting a silicon run costs a child process (about 0.2 s), so scalar cases
    run in batches: one program holds many cases, each loading its registers from
    a bookkeeping block, normalising the flags (all clear, as a program starts),
    running its body (a RET becomes a jump to the end of the body) and storing the
    registers it may have written and the flags that are defined at its end
    (through Jcc) into that block.  ``diff`` compares the batch program on both
    backends, at the end or (``lockstep``) after every instruction; worker
    processes run the batches while hypothesis draws the next cases.  A
    divergence is pinned to its case, confirmed by diffing that case alone,
    shrunk with hypothesis's shrinker (the cases are drawn again from the same
    seed, and when the failing one comes up hypothesis shrinks it, every
    candidate diffed alone) and written as an ``isasim-trace/1`` file whose
    ``expect`` is what the other backend did with the shrunk case.  AMX cases run
    one by one (a fault ends a program, so they cannot share one).

    AF has no Jcc: a final-state batch compares it for its last case only, a
    lockstep run after every instruction of every case.
"""

from __future__ import annotations

import bisect
import json
import multiprocessing
import os
import re
import time
from collections import Counter
from concurrent.futures import Future, ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from hypothesis import HealthCheck, Phase, Verbosity, given, seed as hypothesis_seed, settings
from hypothesis import strategies as st

from ..core.backends import get_backend
from ..core.diff import DiffReport, diff, undefined_by
from ..core.errors import ConfigError, IsasimError
from ..core.isa import get_isa
from ..core.machine import Machine
from ..core.program import Program
from ..core.trace import Init, Trace, trace_json
from . import CODE_BASE, amx, scalar
from .kernels import tile_config
from .operands import Reg, Target
from .registers import GPR64, GPR_VIEWS, gpr_name
from .state import CF, OF, PF, SF, STATUS_FLAGS, ZF

ISA_NAME = "x86_amx"
SUBSETS = ("scalar", "amx")

# ---------------------------------------------------------------------------
# Memory layout
# ---------------------------------------------------------------------------

SLOT_BASE = 0x10000000  # scalar case i's scratch memory: SLOT_BASE + i * SLOT
SLOT = 0x400
BASE_LOW, BASE_HIGH = 0x90, 0x2F0  # where in its slot a base register may point
DISP_LIMIT = 0x90  # |displacement| of a memory operand through a base register
INDEX_LIMIT = 15  # the index register holds 0..15 (times a scale of at most 8)
BOOK_BASE = 0x18000000  # bookkeeping of a batch: case i's block at BOOK_BASE + i * BOOK
BOOK = 0x140
BOOK_IN, BOOK_OUT, BOOK_FLAGS, BOOK_ONE = 0x00, 0x80, 0x100, 0x108

AMX_CFG = 0x20000000  # 4 KiB: up to four 64-byte configurations, rcx points at the first
AMX_BUF = 0x20100000  # 64 KiB of tile data, rdi points at its middle
AMX_DST = 0x20200000  # 64 KiB for TILESTORED and STTILECFG, rdx points at its middle
AMX_SPAN = 0x10000
AMX_ZONE = 0x400  # the buffer is 64 zones of 16 rows x 64 bytes, each of one kind of data

MASK64 = (1 << 64) - 1

# ---------------------------------------------------------------------------
# Values worth generating
# ---------------------------------------------------------------------------

EDGE_VALUES = (0, 1, MASK64, 0x7F, 0x80, 0xFF, 0x100, 0x7FFF, 0x8000, 0xFFFF, 0x7FFFFFFF, 0x80000000,
               0xFFFFFFFF, 0x100000000, (1 << 63) - 1, 1 << 63, MASK64 - 0x7F, 0xFFFFFFFF80000000,
               0x8080808080808080, 0x7F7F7F7F7F7F7F7F, 0x0F, 0x10, 0xFFFFFFFFFFFF8000, 0x5555555555555555,
               0xAAAAAAAAAAAAAAAA, 0xFE, 0xFFFE, 0xFFFFFFFE, MASK64 - 1)
EDGE_IMMEDIATES = (0, 1, -1, 0x7F, 0x80, -0x80, -0x81, 0xFF, 0x7FFF, 0x8000, -0x8000, 0xFFFF, 0x7FFFFFFF,
                   -(1 << 31), 0x80000000, 0xFFFFFFFF, (1 << 63) - 1, 1 << 63, 0x10, 2, 0x7E, -2)
EDGE_DISPLACEMENTS = (0, 1, -1, 8, -8, 0x7F, -0x80, 0x80, -0x81, DISP_LIMIT, -DISP_LIMIT, 0x40, -0x40)
LEA_DISPLACEMENTS = (0, 1, -1, 0x7F, -0x80, 0x80, 0x7FFFFFFF, -(1 << 31), 0x12345678, -0x12345678)

STATUS_TESTED = CF | PF | ZF | SF | OF  # the flags a Jcc can observe (AF has none)
# (canonical mnemonic and its aliases, flags the condition reads)
CONDITIONS = [(("j" + cc,) + aliases, reads) for (cc, _m, _t, aliases), reads in zip(scalar.CONDITIONS, (
    OF, OF, CF, CF, ZF, ZF, CF | ZF, CF | ZF, SF, SF, PF, PF, SF | OF, SF | OF, ZF | SF | OF, ZF | SF | OF))]
# The Jcc that jumps when the flag is CLEAR (so the fall-through records a set flag).
CAPTURE_JUMPS = ((CF, "jae"), (PF, "jnp"), (ZF, "jne"), (SF, "jns"), (OF, "jno"))
CAPTURE_OFFSET = {CF: 0, PF: 1, ZF: 2, SF: 3, OF: 4}

_HIGH_BYTES = {"ah": "rax", "ch": "rcx", "dh": "rdx", "bh": "rbx"}
_LOW_OF_HIGH = {"ah": "al", "ch": "cl", "dh": "dl", "bh": "bl"}
_SIZE = {8: "BYTE", 16: "WORD", 32: "DWORD", 64: "QWORD"}
_NEEDS_REX = {gpr_name(n, 8) for n in range(4, 16)} | {gpr_name(n, b) for n in range(8, 16) for b in (16, 32, 64)}


def parent(name: str) -> str:
    return GPR64[GPR_VIEWS[name].number]


def _signed(value: int, bits: int) -> int:
    value &= (1 << bits) - 1
    return value - (1 << bits) if value >> (bits - 1) else value


# ---------------------------------------------------------------------------
# Scalar cases
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class ScalarCase:
    """One scalar test case, placed in scratch slot ``slot`` (SLOT_BASE + slot * SLOT).

    body: assembly lines; branch labels are L<n>; every RET is the line "ret" (possibly after a label).
    regs: initial GPR values (only the registers the body uses); base registers as offsets into the slot.
    bases: the base registers (they hold SLOT address + offset).
    scratch: the slot's initial bytes.
    written: the GPRs the body may write.  defined: status flags defined at every RET.
    """

    body: tuple[str, ...]
    regs: tuple[tuple[str, int], ...]
    bases: tuple[str, ...]
    scratch: bytes
    written: tuple[str, ...]
    defined: int
    slot: int = 0

    @property
    def kind(self) -> str:
        return "scalar"

    def at_slot(self, slot: int) -> "ScalarCase":
        return ScalarCase(self.body, self.regs, self.bases, self.scratch, self.written, self.defined, slot)

    @property
    def slot_address(self) -> int:
        return SLOT_BASE + self.slot * SLOT

    def init_regs(self) -> dict[str, int]:
        return {name: (self.slot_address + value if name in self.bases else value) for name, value in self.regs}

    def standalone(self) -> tuple[str, Init]:
        """The (program text, Init) pair of this case on its own."""
        return "\n".join(self.body), Init(self.init_regs(), [(self.slot_address, self.scratch, True)])

    @property
    def size(self) -> int:
        return sum(1 for line in self.body if line.split(":")[-1].strip())

    def truncated(self, index: int) -> "ScalarCase":
        """The case ending (RET) right after instruction ``index``; labels of the lines cut go on the RET."""
        kept, cut = list(self.body[: index + 1]), self.body[index + 1 :]
        labels = [line.split(":")[0] for line in cut if re.match(r"^L\d+: ", line)]
        kept.append(" ".join(f"{label}:" for label in labels) + (" ret" if labels else "ret"))
        return ScalarCase(tuple(kept), self.regs, self.bases, self.scratch, self.written, self.defined, self.slot)


@dataclass
class _Block:
    lines: list[str]
    jump_to: int | None = None  # block index this block may jump to
    falls_through: bool = True
    mnemonic: str = ""


class _ScalarBuilder:
    """Turns drawn choices into a valid program: registers from pools, flags tracked for Jcc."""

    def __init__(self, reserved: set[str], bases: list[str], index: str | None):
        self.reserved = reserved
        self.bases = bases
        self.index = index
        self.used: set[str] = set(bases) | ({index} if index else set())
        self.written: set[str] = set()
        writable = [r for r in GPR64 if r not in reserved]
        self.dest_pool = {bits: [gpr_name(GPR64.index(r), bits) for r in writable] for bits in (16, 32, 64)}
        self.dest_pool[8] = [gpr_name(GPR64.index(r), 8) for r in writable] + [
            h for h, p in _HIGH_BYTES.items() if p not in reserved]
        self.src_pool = {bits: [gpr_name(n, bits) for n in range(16)] for bits in (16, 32, 64)}
        self.src_pool[8] = [gpr_name(n, 8) for n in range(16)] + list(_HIGH_BYTES)

    def dest(self, bits: int, choice: int) -> str:
        pool = self.dest_pool[bits]
        return pool[choice % len(pool)]

    def src(self, bits: int, choice: int) -> str:
        pool = self.src_pool[bits]
        return pool[choice % len(pool)]

    def memory(self, bits: int | None, m) -> str:
        base_choice, use_index, scale, disp = m
        base = self.bases[base_choice % len(self.bases)]
        parts = base
        if use_index and self.index:
            parts += f"+{self.index}*{scale}"
        if disp:
            parts += f"+{disp:#x}" if disp > 0 else f"-{-disp:#x}"
        size = f"{_SIZE[bits]} PTR " if bits else ""
        return f"{size}[{parts}]"

    @staticmethod
    def immediate(value: int, bits: int, *, full64: bool = False) -> str:
        if bits == 64 and not full64:
            return f"{_signed(value, 32) & MASK64:#x}"
        return f"{value & ((1 << bits) - 1):#x}"

    def fix_rex(self, ops: list[str]) -> list[str]:
        """ah/bh/ch/dh cannot be encoded with a REX prefix: use al/bl/cl/dl then."""
        regs = set()
        for o in ops:
            if "[" in o:
                regs |= set(re.findall(r"r\d+|[a-z]+", o.split("[", 1)[1]))
            else:
                regs.add(o)
        if not any(o in _HIGH_BYTES for o in ops):
            return ops
        if regs & _NEEDS_REX or any(re.fullmatch(r"r(8|9|1[0-5])", r) for r in regs):
            return [_LOW_OF_HIGH.get(o, o) for o in ops]
        return ops

    def note(self, *, reads=(), writes=()) -> None:
        for name in reads:
            self.used.add(parent(name))
        for name in writes:
            self.used.add(parent(name))
            self.written.add(parent(name))


# Instruction kinds, weighted by repetition; a choice byte of 0 picks the first (the simplest).
_KINDS = (("mov",) * 8 + ("add",) * 5 + ("sub",) * 4 + ("cmp",) * 5 + ("xor",) * 4 + ("test",) * 4
          + ("inc",) * 3 + ("dec",) * 3 + ("lea",) * 4 + ("imul1",) * 3 + ("imul2",) * 3 + ("imul3",) * 3
          + ("jcc",) * 6 + ("jmp",) * 2 + ("nop",) * 2 + ("longjump", "ret"))
_SHAPES = ("rr", "ri", "rm", "mr", "mi")
INSTRUCTION_BYTES = 28
HEADER_BYTES = 16 + 9 * 16


class _Choices:
    """Fixed-offset fields of a blob of bytes hypothesis drew (missing bytes read as 0).

    Cases are decoded from blobs because drawing a blob costs hypothesis one choice where
    drawing each field would cost dozens, and a blob still shrinks well: toward fewer
    instructions (list elements deleted, blobs shortened, and a blob of zeros is no
    instruction) and toward zero bytes, which decode to the simplest choice of every field."""

    def __init__(self, data: bytes):
        self.data = data

    def byte(self, at: int) -> int:
        return self.data[at] if at < len(self.data) else 0

    def pick(self, at: int, options):
        return options[self.byte(at) % len(options)]

    def word(self, at: int, size: int) -> int:
        return int.from_bytes(self.data[at : at + size].ljust(size, b"\0"), "little")

    def edge_or_word(self, at: int, edges, size: int) -> int:
        """Half the values of byte ``at`` pick an edge value; the other half take the ``size`` bytes after it."""
        selector = self.byte(at)
        if selector < 128:
            return edges[selector % len(edges)]
        return self.word(at + 1, size)


def _decode_instruction(blob: bytes) -> dict:
    """The choices of one instruction (28 bytes at fixed offsets); _render turns them into text once the
    registers are known.  Every field is drawn whatever the kind, so that a kind change keeps the others."""
    c = _Choices(blob)
    kind = c.pick(0, _KINDS)
    if kind == "longjump" and c.byte(24) & 3:  # three in four become plain Jcc: their filler is long
        kind = "jcc"
    random_disp = _signed(c.byte(16), 8)
    if abs(random_disp) > DISP_LIMIT:
        random_disp = random_disp % (2 * DISP_LIMIT + 1) - DISP_LIMIT
    disp = EDGE_DISPLACEMENTS[c.byte(15) % len(EDGE_DISPLACEMENTS)] if c.byte(15) < 128 else random_disp
    spec = {"kind": kind, "bits": c.pick(1, (64, 32, 16, 8)), "shape": c.pick(2, _SHAPES), "r1": c.byte(3) % 20,
            "r2": c.byte(4) % 20, "imm": _signed(c.edge_or_word(5, [v & MASK64 for v in EDGE_IMMEDIATES], 8), 64),
            "mem": (c.byte(14) & 1, bool(c.byte(14) & 2), (1, 2, 4, 8)[c.byte(14) >> 2 & 3], disp),
            "cond": c.byte(17) % 16, "alias": c.byte(18) % 4, "dist": c.byte(19) % 7,
            "on_memory": bool(c.byte(2) & 1), "conditional": kind == "jcc" or (kind == "longjump" and c.byte(18) & 4),
            "base": c.byte(20) % 17, "index": c.byte(21) % 17, "scale": (1, 2, 4, 8)[c.byte(22) & 3],
            "disp": _signed(c.edge_or_word(23, [d & 0xFFFFFFFF for d in LEA_DISPLACEMENTS], 4), 32)}
    if kind in ("imul2", "imul3", "lea") and spec["bits"] == 8:
        spec["bits"] = 32
    if kind == "nop":
        spec["bits"] = c.pick(1, (0, 16, 32, 64))
        spec["disp"] = c.pick(23, LEA_DISPLACEMENTS)
    return spec


# One to four instructions per element (a blob of 29..56 bytes is two, the second padded with zeros):
# fewer, larger choices are cheaper for hypothesis to draw.
_INSTRUCTIONS = st.lists(st.binary(min_size=INSTRUCTION_BYTES, max_size=4 * INSTRUCTION_BYTES), min_size=0,
                         max_size=12)
_HEADER = st.binary(min_size=HEADER_BYTES, max_size=HEADER_BYTES)


def _address(base_choice: int, index_choice: int, scale: int, disp: int) -> str:
    """An address of arbitrary registers (LEA, NOP r/m: nothing is accessed)."""
    base = GPR64[base_choice] if base_choice < 16 else None
    index = GPR64[index_choice] if index_choice < 16 and GPR64[index_choice] != "rsp" else None
    parts = base or ""
    if index:
        parts += ("+" if parts else "") + f"{index}*{scale}"
    if disp or not parts:
        parts += (f"+{disp:#x}" if parts else f"{disp:#x}") if disp >= 0 else f"-{-disp:#x}"
    return f"[{parts}]"


def _render(b: _ScalarBuilder, spec: dict, position: int) -> _Block:
    """One instruction (or, for a rel32 branch, a branch and its filler) as assembly lines."""
    kind = spec["kind"]
    bits = spec.get("bits", 64)
    if kind in ("mov", "add", "sub", "cmp", "xor", "test"):
        shape = spec["shape"]
        writes = kind not in ("cmp", "test")
        first = b.dest(bits, spec["r1"]) if writes else b.src(bits, spec["r1"])
        mem = b.memory(bits, spec["mem"]) if "m" in shape else None
        if shape == "rr":
            ops = [first, b.src(bits, spec["r2"])]
        elif shape == "ri":
            ops = [first, b.immediate(spec["imm"], bits, full64=kind == "mov")]
        elif shape == "rm":
            ops = [first, mem]
        elif shape == "mr":
            ops = [mem, b.src(bits, spec["r1"])]
        else:
            ops = [mem, b.immediate(spec["imm"], bits)]
        ops = b.fix_rex(ops)
        regs = [o for o in ops if o in GPR_VIEWS]
        b.note(reads=regs, writes=[ops[0]] if writes and ops[0] in GPR_VIEWS else [])
        return _Block([f"{kind} {', '.join(ops)}"], mnemonic=kind)
    if kind in ("inc", "dec", "imul1"):
        mnemonic = "imul" if kind == "imul1" else kind
        if spec["on_memory"]:
            op = b.memory(bits, spec["mem"])
        else:
            op = b.dest(bits, spec["r1"]) if kind != "imul1" else b.src(bits, spec["r1"])
            op = b.fix_rex([op])[0]
            b.note(reads=[op], writes=[op] if kind != "imul1" else [])
        if kind == "imul1":
            b.note(reads=["rax"], writes=["rax"] + (["rdx"] if bits > 8 else []))
        return _Block([f"{mnemonic} {op}"], mnemonic=mnemonic)
    if kind in ("imul2", "imul3"):
        dest = b.dest(bits, spec["r1"])
        src = b.memory(bits, spec["mem"]) if spec["on_memory"] else b.src(bits, spec["r2"])
        ops = [dest, src] + ([b.immediate(spec["imm"], bits)] if kind == "imul3" else [])
        b.note(reads=[o for o in ops if o in GPR_VIEWS], writes=[dest])
        return _Block([f"imul {', '.join(ops)}"], mnemonic="imul")
    if kind == "lea":
        dest = b.dest(bits, spec["r1"])
        address = _address(spec["base"], spec["index"], spec["scale"], spec["disp"])
        b.note(reads=re.findall(r"r\w+", address), writes=[dest])
        return _Block([f"lea {dest}, {address}"], mnemonic="lea")
    if kind == "nop":
        if not bits:
            return _Block(["nop"], mnemonic="nop")
        return _Block([f"nop {_SIZE[bits]} PTR {_address(spec['base'], spec['index'], spec['scale'], spec['disp'])}"],
                      mnemonic="nop")
    if kind == "ret":
        return _Block(["ret"], falls_through=False, mnemonic="ret")
    # branches: the target is filled in by the caller
    target = position + 1 + spec["dist"]
    if spec["conditional"]:
        names, _reads = CONDITIONS[spec["cond"]]
        mnemonic = names[spec["alias"] % len(names)]
    else:
        mnemonic = "jmp"
    block = _Block([f"{mnemonic} L{target}"], jump_to=target, falls_through=mnemonic != "jmp", mnemonic=mnemonic)
    if kind == "longjump":  # 13 ten-byte MOVABS: the branch needs rel32
        for k in range(13):
            dest = b.dest(64, spec["cond"] + k)
            value = (0x8123456789ABCDEF + 0x1111111111 * k * (spec["dist"] + 1)) & MASK64
            block.lines.append(f"mov {dest}, {value:#x}")
            b.note(writes=[dest])
    return block


_BASE_CANDIDATES = [r for r in GPR64 if r not in ("rax", "rdx")]  # IMUL writes rax and rdx


def _offset(c: _Choices, at: int) -> int:
    """Where in the slot a base register points."""
    edges = (0x100, 0x200, BASE_LOW, BASE_HIGH, 0x1FF, 0x201)
    if c.byte(at) < 128:
        return edges[c.byte(at) % len(edges)]
    return BASE_LOW + c.byte(at + 1) * 3 % (BASE_HIGH - BASE_LOW + 1)


@st.composite
def scalar_cases(draw):
    """A random scalar test case (see the module docstring)."""
    c = _Choices(draw(_HEADER))
    pieces = [blob[k : k + INSTRUCTION_BYTES] for blob in draw(_INSTRUCTIONS)
              for k in range(0, len(blob), INSTRUCTION_BYTES)]
    specs = [_decode_instruction(piece) for piece in pieces if any(piece)]  # all zeros: no instruction
    base1 = c.pick(0, _BASE_CANDIDATES)
    others = [r for r in _BASE_CANDIDATES if r != base1]
    base2 = others[c.byte(2) % len(others)] if c.byte(1) & 1 else None
    others = [r for r in others if r not in (base2, "rsp")]
    index = others[c.byte(4) % len(others)] if c.byte(3) & 1 else None
    bases = [base1] + ([base2] if base2 else [])
    offsets = [_offset(c, 5), _offset(c, 7)][: len(bases)]
    index_value = c.byte(9) % (INDEX_LIMIT + 1)
    fill = c.pick(10, ("pattern", "zero", "ones", "edges", "random"))
    fill_seed = c.word(11, 4)
    values = [c.edge_or_word(16 + 9 * n, EDGE_VALUES, 8) for n in range(16)]

    reserved = set(bases) | ({index} if index else set())
    builder = _ScalarBuilder(reserved, bases, index)
    blocks = [_render(builder, spec, i) for i, spec in enumerate(specs)]
    blocks.append(_Block(["ret"], falls_through=False, mnemonic="ret"))
    final = len(blocks) - 1

    # Forward branches and the flags each path leaves undefined.
    pending: dict[int, int | None] = {}  # block -> undefined flags arriving by branch (None: no branch arrives)
    labels: set[int] = set()
    undefined: int | None = 0  # None: this point is unreachable
    at_ret = 0
    for i, block in enumerate(blocks):
        arriving = pending.get(i)
        if arriving is not None:
            undefined = arriving if undefined is None else undefined | arriving
        if block.jump_to is not None:
            block.jump_to = min(block.jump_to, final)
            labels.add(block.jump_to)
            names, reads = CONDITIONS[specs[i]["cond"]]
            if block.mnemonic != "jmp" and reads & (undefined or 0):
                allowed = [c for c in CONDITIONS if not c[1] & (undefined or 0)]
                if allowed:
                    names, _ = allowed[specs[i]["cond"] % len(allowed)]
                    first = names[specs[i]["alias"] % len(names)]
                else:
                    first = "jmp"
                    block.falls_through = False
                block.lines[0] = f"{first} L{block.jump_to}"
            block.lines[0] = re.sub(r"L\d+$", f"L{block.jump_to}", block.lines[0])
            if undefined is not None:
                prior = pending.get(block.jump_to)
                pending[block.jump_to] = undefined if prior is None else prior | undefined
        if block.mnemonic == "ret" and undefined is not None:
            at_ret |= undefined
        if undefined is not None and block.mnemonic not in ("ret",):
            written = scalar.FLAGS_WRITTEN.get(block.mnemonic, 0)
            undefined = (undefined & ~written) | scalar.UNDEFINED_FLAGS.get(block.mnemonic, 0)
        if not block.falls_through:
            undefined = None
    # labels go in front of their block's first line
    out: list[str] = []
    for i, block in enumerate(blocks):
        for j, line in enumerate(block.lines):
            out.append(f"L{i}: {line}" if j == 0 and i in labels else line)

    regs = {}
    for n, name in enumerate(GPR64):
        if name in builder.used:
            regs[name] = values[n]
    for name, offset in zip(bases, offsets):
        regs[name] = offset
    if index:
        regs[index] = index_value
    written = tuple(r for r in GPR64 if r in builder.written)
    return ScalarCase(tuple(out), tuple(sorted(regs.items(), key=lambda kv: GPR64.index(kv[0]))), tuple(bases),
                      _fill(fill, fill_seed, SLOT), written, STATUS_TESTED & ~at_ret)


def _fill(kind: str, fill_seed: int, size: int) -> bytes:
    """Scratch memory contents from a small description (so that hypothesis shrinks it cheaply)."""
    if kind == "zero":
        return bytes(size)
    if kind == "ones":
        return b"\xff" * size
    rng = np.random.default_rng(fill_seed)
    if kind == "random":
        return rng.integers(0, 256, size, dtype=np.uint8).tobytes()
    if kind == "edges":
        words = np.array([v & MASK64 for v in EDGE_VALUES], dtype=np.uint64)
        return rng.choice(words, size // 8).astype("<u8").tobytes()
    return bytes((i * 0x1F + fill_seed) & 0xFF for i in range(size))


def scalar_programs():
    """(program text, Init) pairs of random scalar cases."""
    return scalar_cases().map(lambda case: case.standalone())


# ---------------------------------------------------------------------------
# Batches of scalar cases
# ---------------------------------------------------------------------------


@dataclass
class Batch:
    """Many scalar cases in one program: case i in slot i, with its bookkeeping block."""

    cases: list[ScalarCase]
    program: Program
    init: Init
    starts: list[int]  # address of each case's first instruction
    bodies: list[tuple[int, int]]  # [start, end) of each case's body

    def text(self) -> list[str]:
        """The program as assembly lines that assemble back to the same bytes."""
        lines = [ins.text for ins in self.program.instructions]
        again = get_isa(ISA_NAME).assemble("\n".join(lines))
        if again.code == self.program.code:
            return lines
        return [".byte " + ",".join(f"{x:#04x}" for x in ins.encoding) for ins in self.program.instructions]


_LINE_CODE: dict[str, bytes] = {}


def line_code(line: str) -> bytes:
    """The encoding of one position-independent line (cached: batches repeat their bookkeeping lines)."""
    code = _LINE_CODE.get(line)
    if code is None:
        if len(_LINE_CODE) > 200000:
            _LINE_CODE.clear()
        code = _LINE_CODE[line] = get_isa(ISA_NAME).assemble(line).code
    return code


_BRANCH = re.compile(r"^(j[a-z]+) L(\d+)$")


def body_code(case: ScalarCase) -> bytes:
    """The case's body as position-independent code with every RET a jump to the end of the body
    (where the batch goes on with the case's bookkeeping).  Lines are encoded one by one (the
    assembler lays a whole program out again each time a branch grows); branches are laid out here
    (rel8 where it reaches, as GNU as does) and encoded by the scalar encoder."""
    items = []  # (label or None, bytes or (mnemonic, target label))
    for line in case.body:
        label, _, rest = line.partition(": ") if re.match(r"^L\d+: ", line) else ("", "", line)
        m = _BRANCH.match(rest)
        if rest == "ret":
            items.append((label, ("jmp", None)))
        elif m:
            items.append((label, (m.group(1), m.group(2))))
        else:
            items.append((label, line_code(rest)))
    if items and items[-1][1] == ("jmp", None):  # the final RET: fall into the bookkeeping
        items[-1] = (items[-1][0], b"")
    long = [False] * len(items)
    for _attempt in range(64):
        address, labels, where = 0, {}, []
        for i, (label, what) in enumerate(items):
            if label:
                labels[label[1:]] = address
            where.append(address)
            if isinstance(what, bytes):
                address += len(what)
            else:
                address += (5 if what[0] == "jmp" else 6) if long[i] else 2
        end = address
        grew = False
        for i, (_label, what) in enumerate(items):
            if isinstance(what, tuple) and not long[i]:
                target = end if what[1] is None else labels[what[1]]
                if not -128 <= target - (where[i] + 2) <= 127:
                    long[i] = grew = True
        if not grew:
            break
    code = bytearray()
    for i, (_label, what) in enumerate(items):
        if isinstance(what, bytes):
            code += what
            continue
        mnemonic, label = what
        target = end if label is None else labels[label]
        code += scalar.encode(mnemonic, (Target(target),), where[i], long_branch=long[i])[2]
    return bytes(code)


def build_batch(cases: list[ScalarCase], *, capture: bool = True) -> Batch:
    """One program running every case in turn (case i in slot i), and its Init.  capture=False leaves
    out the stores of the final registers and flags (lockstep compares every step anyway)."""
    code = bytearray()
    book = bytearray(BOOK * len(cases))
    slots = bytearray(SLOT * len(cases))
    starts, bodies = [], []
    for i, case in enumerate(cases):
        assert case.slot == i, "a batch's case i must be placed in slot i"
        block = BOOK_BASE + i * BOOK
        starts.append(CODE_BASE + len(code))
        for name, value in case.init_regs().items():
            at = BOOK_IN + 8 * GPR64.index(name)
            code += line_code(f"mov {name}, QWORD PTR [{block + at:#x}]")
            book[i * BOOK + at : i * BOOK + at + 8] = value.to_bytes(8, "little")
        book[i * BOOK + BOOK_ONE] = 1
        code += line_code(f"cmp BYTE PTR [{block + BOOK_ONE:#x}], 0x0")  # 1 - 0: every status flag clear
        body = body_code(case)
        bodies.append((CODE_BASE + len(code), CODE_BASE + len(code) + len(body)))
        code += body
        for name in case.written if capture else ():
            code += line_code(f"mov QWORD PTR [{block + BOOK_OUT + 8 * GPR64.index(name):#x}], {name}")
        for flag, jump in CAPTURE_JUMPS:
            if capture and case.defined & flag:  # the flag's byte becomes 1 when the flag is set
                store = line_code(f"mov BYTE PTR [{block + BOOK_FLAGS + CAPTURE_OFFSET[flag]:#x}], 0x1")
                code += scalar.encode(jump, (Target(len(store) + 2),), 0)[2] + store
        slots[i * SLOT : (i + 1) * SLOT] = case.scratch
    code += line_code("ret")
    program = get_isa(ISA_NAME).disassemble(bytes(code), base=CODE_BASE)
    init = Init({}, [(SLOT_BASE, bytes(slots), True), (BOOK_BASE, bytes(book), True)])
    return Batch(cases, program, init, starts, bodies)


def _assemble(text: str, source: str = "<fuzz>") -> Program:
    return get_isa(ISA_NAME).assemble(text, source=source)


# ---------------------------------------------------------------------------
# AMX cases
# ---------------------------------------------------------------------------

TDP_FORMS = ("tdpbssd", "tdpbsud", "tdpbusd", "tdpbuud", "tdpbf16ps")
INT_TDP_FORMS = TDP_FORMS[:4]

# bf16 values (bit patterns) worth generating
BF16_SPECIAL = (0x7F80, 0xFF80, 0x7FC0, 0xFFC0, 0x7F81, 0x7FA5, 0xFFC1, 0x7FFF, 0x0001, 0x8001, 0x0040, 0x807F,
                0x0080, 0x8080, 0x0081, 0x2000, 0x1FFF, 0x2001, 0xA000, 0x7F7F, 0xFF7F, 0x7180, 0x0000, 0x8000,
                0x3F80, 0xBF80, 0x0E00, 0x6080, 0x1F80, 0x20FF)
# fp32 accumulators worth generating
FP32_SPECIAL = (0x00800000, 0x80800000, 0x007FFFFF, 0x807FFFFF, 0x00400000, 0x80000001, 0x00000000, 0x80000000,
                0x7F800000, 0xFF800000, 0x7FA00001, 0xFFA00001, 0x7FC00123, 0x7F7FFFFF, 0xFF7FFFFF, 0x00C00000,
                0x3F800000, 0xBF800000, 0x00800001, 0x01000000, 0x4B800000, 0x33800000)
INT32_SPECIAL = (0x7FFFFFFF, 0x80000000, 0x7FFFFFF0, 0x8000000F, 0xFFFFFFFF, 0, 1, 0x7FFC0000, 0x80040000)
INT8_SPECIAL = (0x80, 0xFF, 0x7F, 0x00, 0x01, 0x81, 0xFE)
STRIDES = (64, 0, -64, 128, 4, 1, -1, 65, 256, -256, 1024, -1024, 32, 60, -4)
ZONE_KINDS = ("int8", "int32", "bf16", "fp32", "bf16-tiny", "fp32-tiny", "bf16-special", "random")


def _zone(kind: str, rng: np.random.Generator) -> bytes:
    """AMX_ZONE bytes of one kind of data."""
    n32 = AMX_ZONE // 4
    if kind == "int8":
        edge = rng.choice(np.array(INT8_SPECIAL, dtype=np.uint8), AMX_ZONE)
        rand = rng.integers(0, 256, AMX_ZONE, dtype=np.uint8)
        return np.where(rng.random(AMX_ZONE) < 0.6, edge, rand).astype(np.uint8).tobytes()
    if kind == "int32":
        edge = rng.choice(np.array(INT32_SPECIAL, dtype=np.uint32), n32)
        near = (np.uint32(0x7FFFFFFF) - rng.integers(0, 300000, n32).astype(np.uint32)).astype(np.uint32)
        rand = rng.integers(0, 1 << 32, n32, dtype=np.uint64).astype(np.uint32)
        pick = rng.random(n32)
        return np.where(pick < 0.4, edge, np.where(pick < 0.7, near, rand)).astype("<u4").tobytes()
    if kind.startswith("bf16"):
        n16 = AMX_ZONE // 2
        sign = rng.integers(0, 2, n16).astype(np.uint16) << 15
        if kind == "bf16-tiny":  # products near 2^-126: exponents near 2^-63, and denormals
            exponent = rng.integers(127 - 66, 127 - 60, n16).astype(np.uint16)
        else:
            exponent = rng.integers(127 - 6, 127 + 6, n16).astype(np.uint16)
        normal = sign | (exponent << 7) | rng.integers(0, 128, n16).astype(np.uint16)
        special = rng.choice(np.array(BF16_SPECIAL, dtype=np.uint16), n16)
        share = 0.6 if kind == "bf16-special" else 0.08
        return np.where(rng.random(n16) < share, special, normal).astype("<u2").tobytes()
    if kind.startswith("fp32"):
        sign = rng.integers(0, 2, n32).astype(np.uint32) << 31
        if kind == "fp32-tiny":
            exponent = rng.integers(0, 4, n32).astype(np.uint32)
        else:
            exponent = rng.integers(127 - 8, 127 + 8, n32).astype(np.uint32)
        normal = sign | (exponent << 23) | rng.integers(0, 1 << 23, n32).astype(np.uint32)
        special = rng.choice(np.array(FP32_SPECIAL, dtype=np.uint32), n32)
        return np.where(rng.random(n32) < 0.3, special, normal).astype("<u4").tobytes()
    return rng.integers(0, 256, AMX_ZONE, dtype=np.uint8).tobytes()


def amx_buffer(data_seed: int) -> bytes:
    """The 64 KiB tile-data buffer: zone z holds ZONE_KINDS[z % 8] data."""
    rng = np.random.default_rng(data_seed)
    return b"".join(_zone(ZONE_KINDS[z % len(ZONE_KINDS)], rng) for z in range(AMX_SPAN // AMX_ZONE))


def zone_disp(zone: int) -> int:
    """Displacement from rdi (the middle of the buffer) to a zone."""
    return zone * AMX_ZONE - AMX_SPAN // 2


@dataclass(frozen=True)
class AmxCase:
    lines: tuple[str, ...]
    regs: tuple[tuple[str, int], ...]
    configs: bytes  # the configuration page
    data_seed: int
    dest_fill: int  # the byte the destination region starts as

    @property
    def kind(self) -> str:
        return "amx"

    def standalone(self) -> tuple[str, Init]:
        memory = [(AMX_CFG, self.configs, True), (AMX_BUF, amx_buffer(self.data_seed), True),
                  (AMX_DST, bytes([self.dest_fill]) * AMX_SPAN, True)]
        return "\n".join(self.lines), Init(dict(self.regs), memory)

    @property
    def size(self) -> int:
        return len(self.lines)

    def truncated(self, index: int) -> "AmxCase":
        """The case ending (RET) right after instruction ``index``."""
        return AmxCase(self.lines[: index + 1] + ("ret",), self.regs, self.configs, self.data_seed, self.dest_fill)


_M_K_N = st.sampled_from((16, 16, 16, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15))


@st.composite
def _tdp_config(draw):
    """A palette-1 configuration with consistent C/A/B shapes; roles maps tile -> 'C', 'A' or 'B'."""
    m, k, n = draw(_M_K_N), draw(_M_K_N), draw(_M_K_N)
    order = draw(st.permutations(range(8)))
    roles = {order[0]: "C", order[1]: "C", order[2]: "A", order[3]: "A", order[4]: "A", order[5]: "B",
             order[6]: "B", order[7]: "B"}
    shapes = {t: {"C": (m, 4 * n), "A": (m, 4 * k), "B": (k, 4 * n)}[r] for t, r in roles.items()}
    mismatch = draw(st.sampled_from((None,) * 12 + ("C.colsb", "A.colsb", "C.rows", "B.rows")))
    if mismatch:  # one dimension that no longer agrees: every TDP over it is #UD
        role, what = mismatch.split(".")
        for t, r in roles.items():
            if r == role:
                rows, colsb = shapes[t]
                shapes[t] = (rows, max(4, (colsb + 4) % 68)) if what == "colsb" else (rows % 16 + 1, colsb)
    start_row = draw(st.sampled_from((0,) * 6 + (1, 5, 15, 200)))
    return tile_config(shapes, start_row), roles, (m, k, n)


@st.composite
def _random_config(draw):
    """Any 64-byte configuration: valid, beyond the limits, colsb % 4 != 0, reserved bytes, palettes 0/1/2."""
    palette = draw(st.sampled_from((1, 1, 1, 0, 2, 255)))
    shapes = {}
    for t in range(8):
        rows = draw(st.sampled_from((0, 16, 1, 8, 17, 255)) | st.integers(0, 16))
        colsb = draw(st.sampled_from((0, 64, 4, 6, 1, 65, 68, 0x100)) | st.integers(0, 64))
        shapes[t] = (rows, colsb)
    if draw(st.booleans()):  # mostly keep rows and colsb zero together
        shapes = {t: (r, c) if r and c else (0, 0) for t, (r, c) in shapes.items()}
    image = bytearray(tile_config(shapes, draw(st.sampled_from((0, 0, 3, 200))), palette=palette))
    reserved = draw(st.sampled_from((None,) * 8 + (2, 15, 32, 47, 56, 63)))
    if reserved is not None:
        image[reserved] = 1
    return bytes(image)


def _sib(base: str, stride_reg: str | None, scale: int, disp: int) -> str:
    inner = base + (f"+{stride_reg}*{scale}" if stride_reg else "+riz*1")
    return f"[{inner}{'+' if disp >= 0 else '-'}{abs(disp):#x}]"


def _tdp_text(form: str, c: int, a: int, b: int) -> str:
    if len({c, a, b}) == 3:
        return f"{form} tmm{c}, tmm{a}, tmm{b}"
    code = amx.BY_MNEMONIC[form].encode((Reg(f"tmm{c}"), Reg(f"tmm{a}"), Reg(f"tmm{b}")))
    return ".byte " + ",".join(f"{x:#04x}" for x in code)  # gas refuses repeated tiles


STRIDE_REGS = ("rsi", "r8", "r9", "r10")


@st.composite
def amx_cases(draw, max_ops: int = 24):
    """A random AMX test case (see the module docstring)."""
    heavy = draw(st.sampled_from((True, True, False)))
    cfg0, roles, (m, k, n) = draw(_tdp_config())
    configs = [cfg0] + draw(st.lists(st.one_of(_random_config(), _tdp_config().map(lambda c: c[0])),
                                     min_size=0, max_size=3))
    strides = {"rsi": 64}
    for reg in STRIDE_REGS[1:]:
        strides[reg] = draw(st.sampled_from(STRIDES) | st.integers(-1024, 1024))
    flavour = draw(st.sampled_from(("bf16", "bf16", "bf16", "int", "int")))
    data_seed = draw(st.integers(0, 1 << 32))
    lines = ["ldtilecfg [rcx]"]
    zones = {"A": ("bf16", "bf16-tiny", "bf16-special") if flavour == "bf16" else ("int8", "random"),
             "B": ("bf16", "bf16-tiny", "bf16-special") if flavour == "bf16" else ("int8", "random"),
             "C": ("fp32", "fp32-tiny") if flavour == "bf16" else ("int32",)}

    def zone_of(kind_name: str, choice: int) -> int:
        kind_index = ZONE_KINDS.index(kind_name)
        return kind_index + len(ZONE_KINDS) * (choice % (AMX_SPAN // AMX_ZONE // len(ZONE_KINDS)))

    if heavy:  # load every tile from data of its role, many TDPs, store the results
        for t in range(8):
            kinds = zones[roles[t]]
            zone = zone_of(kinds[draw(st.integers(0, len(kinds) - 1))], draw(st.integers(0, 7)))
            lines.append(f"tileloadd tmm{t}, {_sib('rdi', 'rsi', 1, zone_disp(zone))}")
        cs = [t for t in range(8) if roles[t] == "C"]
        as_ = [t for t in range(8) if roles[t] == "A"]
        bs = [t for t in range(8) if roles[t] == "B"]
        forms = ("tdpbf16ps",) * 8 + INT_TDP_FORMS if flavour == "bf16" else INT_TDP_FORMS + ("tdpbf16ps",)
        for _ in range(draw(st.integers(1, 32))):
            form = draw(st.sampled_from(forms))
            lines.append(_tdp_text(form, draw(st.sampled_from(cs)), draw(st.sampled_from(as_)),
                                   draw(st.sampled_from(bs))))
        for i, t in enumerate(cs):
            lines.append(f"tilestored {_sib('rdx', 'rsi', 1, -0x800 + 0x400 * i)}, tmm{t}")
    ops = draw(st.lists(st.sampled_from(("tilezero", "tileloadd", "tileloaddt1", "tilestored", "tdp", "tdp", "tdp",
                                         "tilerelease", "sttilecfg", "ldtilecfg", "pagefault")),
                        min_size=0 if heavy else 1, max_size=max_ops if not heavy else 4))
    for op in ops:
        t = draw(st.integers(0, 7))
        if op == "tilezero":
            lines.append(f"tilezero tmm{t}")
        elif op in ("tileloadd", "tileloaddt1", "tilestored"):
            reg = draw(st.sampled_from((None,) + STRIDE_REGS))
            scale = draw(st.sampled_from((1, 2, 4, 8)))
            if reg and abs(strides[reg] * scale) > 1024:
                scale = 1
            disp = draw(st.sampled_from((0, 64, -64, 1, -0x400, 0x3C0)) | st.integers(-0x100, 0x100))
            if op == "tilestored":
                lines.append(f"tilestored {_sib('rdx', reg, scale, disp)}, tmm{t}")
            else:
                zone = draw(st.integers(0, AMX_SPAN // AMX_ZONE - 1))
                disp = max(-0x4400, min(0x43C0, zone_disp(zone) + disp))
                lines.append(f"{op} tmm{t}, {_sib('rdi', reg, scale, disp)}")
        elif op == "tdp":
            form = draw(st.sampled_from(TDP_FORMS + ("tdpfp16ps",)))
            if draw(st.booleans()):
                cs = [x for x in range(8) if roles[x] == "C"]
                c, a, b = (draw(st.sampled_from(cs)), draw(st.sampled_from([x for x in range(8) if roles[x] == "A"])),
                           draw(st.sampled_from([x for x in range(8) if roles[x] == "B"])))
            else:
                c, a, b = draw(st.integers(0, 7)), draw(st.integers(0, 7)), draw(st.integers(0, 7))
            lines.append(_tdp_text(form, c, a, b))
        elif op == "tilerelease":
            lines.append("tilerelease")
        elif op == "sttilecfg":
            lines.append(f"sttilecfg [rdx{'+' if t % 2 else '-'}{0x40 * (t + 1):#x}]")
        elif op == "ldtilecfg":
            lines.append(f"ldtilecfg [rcx+{0x40 * (t % len(configs)):#x}]")
        else:  # rows 8..15 of a 64-byte stride land past the end of the buffer: #PF on row 8
            lines.append(f"tileloadd tmm{t}, {_sib('rdi', 'rsi', 1, AMX_SPAN // 2 - 512)}")
    lines.append("ret")
    regs = {"rcx": AMX_CFG, "rdi": AMX_BUF + AMX_SPAN // 2, "rdx": AMX_DST + AMX_SPAN // 2}
    regs.update({r: s & MASK64 for r, s in strides.items()})
    page = b"".join(configs).ljust(0x1000, b"\0")
    return AmxCase(tuple(lines), tuple(regs.items()), page, data_seed, draw(st.sampled_from((0, 0xCC))))


def amx_programs():
    """(program text, Init) pairs of random AMX cases."""
    return amx_cases().map(lambda case: case.standalone())


# ---------------------------------------------------------------------------
# What was compared
# ---------------------------------------------------------------------------


def form_key(ins) -> str:
    if ins.undefined is not None:
        return f"{ins.form.mnemonic} (undefined encoding)"
    mnemonic = ins.form.mnemonic
    if mnemonic.startswith("j") and mnemonic != "jmp":
        return "jcc"
    if mnemonic == "imul":
        return f"imul ({len(ins.operands)} operand{'s' if len(ins.operands) > 1 else ''})"
    return mnemonic


def _elements(ins, state) -> int:
    """Output elements an AMX instruction produced (dwords of a tile), 0 for others."""
    name = ins.form.mnemonic
    if name.startswith("tdp"):
        c = ins.operands[0].name
        rows, colsb = state.tile_shape(int(c[3:]))
        return rows * (colsb // 4)
    if name in ("tileloadd", "tileloaddt1", "tilezero"):
        rows, colsb = state.tile_shape(int(ins.operands[0].name[3:]))
        return rows * (colsb // 4)
    if name == "tilestored":
        rows, colsb = state.tile_shape(int(ins.operands[1].name[3:]))
        return rows * (colsb // 4)
    return 0


def count_executed(program: Program, init: Init, ranges: list[tuple[int, int]] | None = None,
                   config: dict | None = None) -> tuple[Counter, Counter]:
    """Instructions executed without a fault, per form, and the elements they produced (run on the simulator).
    ``ranges``: count only instructions whose address is in one of these sorted [start, end) ranges."""
    machine = Machine(ISA_NAME, config)
    machine.load(program, regs=init.regs, memory=init.memory)
    machine.journal.enabled = False
    counted = None
    if ranges is not None:
        counted = {ins.address for ins in program.instructions
                   if (k := bisect.bisect_right(ranges, (ins.address, float("inf"))) - 1) >= 0
                   and ins.address < ranges[k][1]}
    keys: dict[int, str] = {}
    counts, elements = Counter(), Counter()
    while not machine.finished and machine.state.pc != program.end:
        record = machine.step()
        if record.fault is not None:
            break
        ins = record.instruction
        if counted is not None and ins.address not in counted:
            continue
        key = keys.get(ins.address)
        if key is None:
            key = keys[ins.address] = form_key(ins)
        counts[key] += 1
        if isinstance(ins.form, amx.AmxForm) and (produced := _elements(ins, machine.state)):
            elements[key] += produced
    return counts, elements


# ---------------------------------------------------------------------------
# Results
# ---------------------------------------------------------------------------


@dataclass
class FoundDivergence:
    subset: str
    case: int  # the index of the generated case
    description: str  # the first difference, as diff describes it (of the shrunk case)
    program: list[str]  # the shrunk program
    trace: str | None  # the reproducing trace file
    mode: str
    original_size: int = 0
    shrunk: bool = False
    notes: list[str] = field(default_factory=list)
    shrunk_case: object = field(default=None, repr=False)  # the case the trace holds (slot 0 for scalar cases)


@dataclass
class FuzzSummary:
    isa: str
    a: str
    b: str
    seed: int
    mode: str
    subsets: list[str]
    skipped: dict[str, str] = field(default_factory=dict)  # subset -> why it could not run
    cases: Counter = field(default_factory=Counter)  # subset -> programs run
    instructions: Counter = field(default_factory=Counter)  # form -> instructions compared
    elements: Counter = field(default_factory=Counter)  # form -> output elements compared (AMX)
    divergences: list[FoundDivergence] = field(default_factory=list)  # one per distinct shrunk case
    divergent_cases: int = 0  # cases that diverged (several may shrink to the same case)
    runs: int = 0  # differential runs (one per batch or AMX case)
    seconds: float = 0.0

    @property
    def total_cases(self) -> int:
        return sum(self.cases.values())

    @property
    def total_instructions(self) -> int:
        return sum(self.instructions.values())

    @property
    def traces(self) -> list[str]:
        return [d.trace for d in self.divergences if d.trace]


class FuzzUnavailable(ConfigError):
    """The requested subset cannot run on the other backend here."""


# ---------------------------------------------------------------------------
# Drawing cases reproducibly
# ---------------------------------------------------------------------------

_SETTINGS = dict(database=None, deadline=None, suppress_health_check=list(HealthCheck), derandomize=False,
                 verbosity=Verbosity.quiet, report_multiple_bugs=False, print_blob=False)


class _Divergent(Exception):
    pass


class _StopShrinking(BaseException):
    """Ends a hypothesis run at once (hypothesis treats only Exception and a few others as failures)."""


def _explore(strategy, n: int, seed: int, body, *, shrink: bool) -> None:
    """Run ``body`` on the first n cases hypothesis draws for ``seed`` (the same cases every time for the
    same seed, n and body outcomes); with shrink=True a _Divergent raised by body is shrunk."""
    phases = (Phase.generate, Phase.shrink) if shrink else (Phase.generate,)

    @settings(max_examples=n, phases=phases, **_SETTINGS)
    @hypothesis_seed(seed)
    @given(strategy)
    def explore(case):
        body(case)

    explore()


def draw_cases(strategy, n: int, seed: int) -> list:
    """The first n cases of ``strategy`` for ``seed``."""
    out: list = []
    _explore(strategy, n, seed, out.append, shrink=False)
    return out


# ---------------------------------------------------------------------------
# The fuzzing loop
# ---------------------------------------------------------------------------


def _standalone_diff(case, against: str, mode: str, config: dict) -> tuple[DiffReport, Program, Init]:
    """Diff one case on its own."""
    text, init = case.standalone()
    program = _assemble(text)
    return diff(ISA_NAME, config, program, init, a="sim", b=against, mode=mode), program, init


def _case_of_divergence(batch: Batch, report: DiffReport) -> int | None:
    """Which case of a batch a divergence belongs to (None: cannot tell)."""
    d = report.divergence
    address = None
    if d.instruction is not None:
        address = d.instruction.address
    elif d.where == "fault":
        fault = report.a_fault or report.b_fault
        if fault is not None and fault.index is not None:
            address = batch.program.instructions[fault.index].address
    elif d.where.startswith("memory "):
        at = int(d.where.split()[1], 16)
        if SLOT_BASE <= at < SLOT_BASE + SLOT * len(batch.cases):
            return (at - SLOT_BASE) // SLOT
        if BOOK_BASE <= at < BOOK_BASE + BOOK * len(batch.cases):
            return (at - BOOK_BASE) // BOOK
    elif d.where in GPR64 or d.where == "rflags":
        return len(batch.cases) - 1
    if address is None:
        return None
    return max(i for i, start in enumerate(batch.starts) if address >= start) if address >= batch.starts[0] else None


def expectation(case, against: str, config: dict) -> tuple[dict, str]:
    """What the other backend does with the case alone, as a trace's ``expect`` (and the producer)."""
    text, init = case.standalone()
    program = _assemble(text)
    backend = get_backend(against, ISA_NAME, program)
    config = get_isa(ISA_NAME).configure(config)
    final = backend.run(ISA_NAME, config, program, init)
    observed = final.observed
    expect: dict = {"fault": None if final.fault is None else {"kind": final.fault.kind, "index": final.fault.index}}
    regs = {k: v for k, v in observed.get("regs", {}).items() if k != "rflags"}
    sim = Machine(ISA_NAME, config)
    sim.load(program, regs=init.regs, memory=init.memory)
    executed = [r.instruction for r in sim.run(keep_records=True).records]
    isa = get_isa(ISA_NAME)
    defined = isa.comparable({"regs": {"rflags": STATUS_FLAGS}}, undefined_by(isa, executed))["regs"]["rflags"]
    rflags = observed.get("regs", {}).get("rflags")
    if rflags is not None and defined == STATUS_FLAGS:
        regs["rflags"] = rflags  # no status flag is left undefined: check them all
    expect["regs"] = regs
    if case.kind == "amx":
        expect["tiles"] = observed.get("tiles", {})
        expect["tilecfg"] = observed.get("tilecfg", bytes(64))
    expect["memory"] = [(address, final.read_memory(address, len(data))) for address, data, writable in init.memory
                        if writable]
    producer = backend.producer() if hasattr(backend, "producer") else f"isasim {against}"
    return expect, producer


def write_fresh(trace: Trace, directory: Path, stem: str) -> Path:
    """Write the trace under a name no file has yet (never overwriting one)."""
    directory.mkdir(parents=True, exist_ok=True)
    text = json.dumps(trace_json(trace), indent=1) + "\n"
    for n in range(1, 100000):
        path = directory / (f"{stem}.trace.json" if n == 1 else f"{stem}-{n}.trace.json")
        try:
            with open(path, "x", encoding="utf-8") as f:
                f.write(text)
            return path
        except FileExistsError:
            continue
    raise IsasimError(f"no free trace file name for {stem} in {directory}")


def _write_case_trace(case, job: "_Job", stem: str, note: str) -> Path:
    text, init = case.standalone()
    expect, producer = expectation(case, job.against, job.config)
    trace = Trace(ISA_NAME, text.split("\n"), get_isa(ISA_NAME).configure(job.config),
                  f"{producer}; isasim fuzz: {note}", init, expect)
    return write_fresh(trace, job.out, stem)


class _Shrinker:
    """Re-draw the cases of ``seed``; when the failing one comes up again, let hypothesis shrink it.

    Every candidate is diffed on its own (each distinct case once).  After ``shrink_seconds`` or
    ``shrink_candidates`` diffs the shrinking ends with the smallest failure found so far."""

    def __init__(self, strategy, n: int, seed: int, target, job: "_Job", mode: str, place=lambda case: case):
        self.strategy, self.n, self.seed, self.target, self.job, self.mode = strategy, n, seed, target, job, mode
        self.deadline = time.monotonic() + job.shrink_seconds
        self.place = place
        self.armed = False
        self.verdicts: dict = {}
        self.last_failing = None
        self.calls = 0

    def check(self, case) -> None:
        case = self.place(case)
        if not self.armed:
            if case != self.target:
                return  # a case drawn before the failing one: it passed the first time
            self.armed = True
        if case in self.verdicts:
            verdict = self.verdicts[case]
        elif time.monotonic() > self.deadline or self.calls >= self.job.shrink_candidates:
            raise _StopShrinking
        else:
            self.calls += 1
            try:
                report, _program, _init = _standalone_diff(case, self.job.against, self.mode, self.job.config)
                verdict = None if report.identical else report
            except IsasimError:
                verdict = None
            self.verdicts[case] = verdict
        if verdict is not None:
            self.last_failing = (case, verdict)
            raise _Divergent(verdict.divergence.describe("sim", self.job.against))

    def run(self):
        try:
            _explore(self.strategy, self.n, self.seed, self.check, shrink=True)
        except (Exception, _StopShrinking):  # noqa: BLE001 - the smallest case's _Divergent, out of time, or
            pass  # hypothesis's own complaint: the verdicts say what failed
        failing = [(c, v) for c, v in self.verdicts.items() if v is not None]
        if failing:
            smallest = min(failing, key=lambda cv: (cv[0].size, len("\n".join(cv[0].standalone()[0]))))
            if self.last_failing is None or smallest[0].size < self.last_failing[0].size:
                self.last_failing = smallest
        return self.last_failing


def _subsets(against: str, isa_subset: str | None) -> tuple[list[str], dict[str, str]]:
    """The subsets to fuzz, and why the others cannot run against ``against`` here."""
    from ..core.backends import BACKENDS

    if isa_subset is not None and isa_subset not in SUBSETS:
        raise ConfigError(f"unknown subset '{isa_subset}' (scalar or amx)")
    get_isa(ISA_NAME)  # registers the ISA's backends
    backend = BACKENDS.get(against)
    if backend is None:
        raise ConfigError(f"unknown backend '{against}' (known: {', '.join(BACKENDS)})")
    skipped: dict[str, str] = {}
    for subset, probe in (("scalar", "nop"), ("amx", "tilerelease")):
        reason = backend.unavailable_reason(ISA_NAME, _assemble(probe))
        if reason:
            skipped[subset] = reason
    wanted = [isa_subset] if isa_subset else list(SUBSETS)
    usable = [s for s in wanted if s not in skipped]
    if not usable:
        raise FuzzUnavailable(f"cannot fuzz {' or '.join(wanted)} programs against {against} here: "
                              f"{skipped[wanted[0]]}")
    return usable, {s: r for s, r in skipped.items() if s in wanted}


def fuzz_config(against: str) -> dict:
    """The CPU model to simulate: this host's, when the other backend is its silicon."""
    if against == "silicon":
        from .cpu import CPU_MODELS
        from .silicon import host_cpu

        if host_cpu().name in CPU_MODELS:
            return {"cpu": host_cpu().name}
    return {}


def run_fuzz(cases: int, seed: int, against: str = "silicon", isa_subset: str | None = None, lockstep: bool = False,
             out_dir: str | Path = ".", *, batch_size: int | None = None, workers: int | None = None,
             shrink_seconds: float = 60.0, shrink_candidates: int | None = None, max_divergences: int = 3,
             progress=None) -> FuzzSummary:
    """Run ``cases`` random programs on the simulator and on ``against`` and compare them.

    isa_subset: "scalar", "amx" or None (every subset ``against`` can run here; with both, a quarter of
    the cases are AMX).  lockstep: compare after every instruction instead of at the end.
    Raises FuzzUnavailable (a ConfigError) when the subset asked for cannot run on ``against`` here.

    The same seed draws the same cases.  Each divergent case is shrunk and gets a reproducing trace
    in ``out_dir`` (cases that shrink to the same case share one); the run stops after
    ``max_divergences`` divergent cases.  Shrinking one diffs at most ``shrink_candidates`` smaller
    cases (then the result depends on the seed only) and takes at most ``shrink_seconds``.
    ``workers`` processes (default: one per CPU, at most 2) run the batches while hypothesis draws
    the next cases; ``progress(summary)`` is called after each batch or AMX case.
    """
    if cases < 0:
        raise ConfigError("the number of cases cannot be negative")
    started = time.monotonic()
    mode = "lockstep" if lockstep else "final"
    subsets, skipped = _subsets(against, isa_subset)
    summary = FuzzSummary(ISA_NAME, "sim", against, seed, mode, subsets, skipped)
    share = {"scalar": cases, "amx": 0}
    if subsets == ["amx"]:
        share = {"scalar": 0, "amx": cases}
    elif "amx" in subsets:
        share = {"scalar": cases - cases // 4, "amx": cases // 4}
    job = _Job(against, mode, fuzz_config(against), Path(out_dir), shrink_seconds, max_divergences, progress,
               shrink_candidates if shrink_candidates is not None else 1 << 30)
    workers = max(1, min(2, os.cpu_count() or 1)) if workers is None else workers
    pool = None
    if workers > 1 and cases > 0:
        pool = ProcessPoolExecutor(max_workers=workers, mp_context=multiprocessing.get_context("fork"))
    try:
        if share["scalar"]:
            size = batch_size or (20 if lockstep else 150)
            _fuzz_scalar(summary, job, share["scalar"], seed, size, pool)
        if share["amx"] and summary.divergent_cases < max_divergences:
            _fuzz_amx(summary, job, share["amx"], seed + 1, pool)
    finally:
        if pool is not None:
            pool.shutdown(wait=True, cancel_futures=True)
    summary.seconds = time.monotonic() - started
    return summary


@dataclass
class _Job:
    against: str
    mode: str
    config: dict
    out: Path
    shrink_seconds: float
    max_divergences: int
    progress: object = None
    shrink_candidates: int = 1 << 30


def run_batch(cases: list[ScalarCase], against: str, mode: str, config: dict) -> dict:
    """Diff one batch (cases placed in slots 0..n-1); a plain dict, so that a worker process can return it."""
    batch = build_batch(cases, capture=mode == "final")
    report = diff(ISA_NAME, config, batch.program, batch.init, a="sim", b=against, mode=mode)
    if not report.identical:
        return {"identical": False, "which": _case_of_divergence(batch, report),
                "description": report.divergence.describe("sim", against), "steps": report.steps}
    counts, _elements = count_executed(batch.program, batch.init, batch.bodies, config)
    return {"identical": True, "counts": counts, "steps": report.steps}


def run_amx_case(case: "AmxCase", against: str, mode: str, config: dict) -> dict:
    report, program, init = _standalone_diff(case, against, mode, config)
    counts, elements = count_executed(program, init, config=config)
    return {"identical": report.identical, "counts": counts, "elements": elements,
            "description": None if report.identical else report.divergence.describe("sim", against)}


def _submit(pool, fn, *args):
    if pool is None:
        future: Future = Future()
        try:
            future.set_result(fn(*args))
        except BaseException as error:  # noqa: BLE001 - handed to the caller by future.result()
            future.set_exception(error)
        return future
    return pool.submit(fn, *args)


def _fuzz_scalar(summary: FuzzSummary, job: _Job, n: int, seed: int, batch_size: int, pool) -> None:
    strategy = scalar_cases()
    drawn: list[ScalarCase] = []
    futures: list[Future] = []

    def take(case: ScalarCase) -> None:  # runs while hypothesis draws: batches go to the workers as they fill
        drawn.append(case)
        if len(drawn) % batch_size == 0:
            chunk = drawn[-batch_size:]
            futures.append(_submit(pool, run_batch, [c.at_slot(i) for i, c in enumerate(chunk)], job.against,
                                   job.mode, job.config))

    _explore(strategy, n, seed, take, shrink=False)
    if len(drawn) % batch_size:
        chunk = drawn[len(drawn) // batch_size * batch_size :]
        futures.append(_submit(pool, run_batch, [c.at_slot(i) for i, c in enumerate(chunk)], job.against, job.mode,
                               job.config))
    for number, future in enumerate(futures):
        result = future.result()
        summary.runs += 1
        chunk = [c.at_slot(i) for i, c in enumerate(drawn[number * batch_size : (number + 1) * batch_size])]
        first = number * batch_size
        while not result["identical"]:
            if summary.divergent_cases >= job.max_divergences:
                result = None
                break
            done = _settle_batch(summary, job, strategy, n, seed, chunk, first, result)
            if done < len(chunk):  # go on with the cases after the divergent one
                counts, _e = count_executed(*_batch_program(chunk[:done], job.mode), config=job.config)
                summary.instructions.update(counts)
                summary.cases["scalar"] += done
                chunk = [c.at_slot(i) for i, c in enumerate(chunk[done:])]
                first += done
                result = run_batch(chunk, job.against, job.mode, job.config)
                summary.runs += 1
            else:
                result = {"identical": True, "counts": count_executed(*_batch_program(chunk, job.mode),
                                                                      config=job.config)[0]}
        if result is None:
            break  # enough divergences: the batches not yet run are cancelled
        summary.instructions.update(result["counts"])
        summary.cases["scalar"] += len(chunk)
        if job.progress:
            job.progress(summary)
        if summary.divergent_cases >= job.max_divergences:
            break


def _batch_program(cases: list[ScalarCase], mode: str):
    batch = build_batch(cases, capture=mode == "final")
    return batch.program, batch.init, batch.bodies


def _settle_batch(summary: FuzzSummary, job: _Job, strategy, n: int, seed: int, chunk: list[ScalarCase],
                  first: int, result: dict) -> int:
    """A batch diverged: find the case (diffing cases alone), shrink it, write its trace.
    Returns how many cases of the chunk are settled (up to and including the divergent one)."""
    which = result["which"]
    order = ([which] if which is not None else []) + [i for i in range(len(chunk)) if i != which]
    for i in order:
        alone, _program, _init = _standalone_diff(chunk[i], job.against, job.mode, job.config)
        summary.runs += 1
        if not alone.identical:
            _record(summary, job, "scalar", first + i, chunk[i], strategy, n, seed,
                    place=lambda c, slot=i: c.at_slot(slot))
            return i + 1
    # Only the batch diverges: keep the batch itself as the reproduction.
    batch = build_batch(chunk, capture=job.mode == "final")
    lines = batch.text()
    description = result["description"]
    trace = Trace(ISA_NAME, lines, get_isa(ISA_NAME).configure(job.config),
                  f"isasim fuzz: seed {seed}, scalar cases {first}..{first + len(chunk) - 1} as one program, "
                  f"{job.mode}: {description}", batch.init, {})
    path = write_fresh(trace, job.out, f"fuzz-{ISA_NAME}-scalar-seed{seed}-batch{first}")
    summary.divergent_cases += 1
    summary.divergences.append(FoundDivergence("scalar", first, description, lines, str(path), job.mode,
                                               notes=["the batch diverges but none of its cases does on its own"]))
    return len(chunk)


def _record(summary: FuzzSummary, job: _Job, subset: str, index: int, case, strategy, n: int, seed: int,
            place=lambda c: c) -> None:
    """Shrink a confirmed divergent case, write its trace, add it to the summary.

    A divergence seen after some instruction (lockstep) that also shows in the final state is shrunk
    comparing final states, so that the trace's expectations (the other backend's final state) show
    it; one that a later instruction hides is shrunk in lockstep and the trace's program is cut after
    the diverging instruction."""
    summary.divergent_cases += 1
    mode = job.mode
    if mode == "lockstep" and not _standalone_diff(case, job.against, "final", job.config)[0].identical:
        mode = "final"
    shrinker = _Shrinker(strategy, n, seed, case, job, mode, place)
    found = shrinker.run()
    notes = [f"shrinking diffed {shrinker.calls} candidates"]
    if found is None:  # the re-draw did not meet the case (it should): keep it as it is
        found = (case, _standalone_diff(case, job.against, mode, job.config)[0])
        notes.append("not shrunk: hypothesis did not draw the case again")
    small, report = found
    description = report.divergence.describe("sim", job.against)
    if mode == "lockstep" and _standalone_diff(small, job.against, "final", job.config)[0].identical:
        where = report.divergence.instruction.index if report.divergence.instruction is not None else None
        cut = small.truncated(where) if where is not None else small
        if cut != small and not _standalone_diff(cut, job.against, "final", job.config)[0].identical:
            notes.append(f"the program is cut after instruction {where}: a later instruction hides the difference")
            small = cut
        else:
            notes.append("the difference shows only between instructions: see it with isasim diff --lockstep")
    text, _init = small.standalone()
    key = small.at_slot(0) if isinstance(small, ScalarCase) else small
    for earlier in summary.divergences:
        if earlier.shrunk_case == key:
            earlier.notes.append(f"case {index} shrinks to the same case")
            return
    path = _write_case_trace(small, job, f"fuzz-{ISA_NAME}-{subset}-seed{seed}-case{index}",
                             f"seed {seed}, {subset} case {index}, {mode}: {description}")
    summary.divergences.append(FoundDivergence(subset, index, description, text.split("\n"), str(path), mode,
                                               case.size, small != case, notes, key))


def _fuzz_amx(summary: FuzzSummary, job: _Job, n: int, seed: int, pool) -> None:
    strategy = amx_cases()
    drawn: list[AmxCase] = []
    futures: list[Future] = []

    def take(case: AmxCase) -> None:
        drawn.append(case)
        futures.append(_submit(pool, run_amx_case, case, job.against, job.mode, job.config))

    _explore(strategy, n, seed, take, shrink=False)
    for index, future in enumerate(futures):
        result = future.result()
        summary.runs += 1
        summary.cases["amx"] += 1
        summary.instructions.update(result["counts"])
        summary.elements.update(result["elements"])
        if not result["identical"] and summary.divergent_cases < job.max_divergences:
            _record(summary, job, "amx", index, drawn[index], strategy, n, seed)
        if job.progress:
            job.progress(summary)

"""Random scalar x86-64 test cases for the fuzzer, and batches of them in one program.

Cases (``scalar_cases()``, a hypothesis strategy)
    Random straight-line-with-forward-branches programs of the scalar subset
    (MOV/MOVABS, ADD, SUB, CMP, XOR, TEST, INC, DEC, LEA, the three IMUL forms,
    JMP, the sixteen Jcc with their aliases, rel8 and rel32, NOP and NOP r/m,
    RET) at every operand width, ending with RET.  Memory operands go only
    through one or two reserved base registers that point into the case's own
    scratch slot, with small displacements and a reserved index register holding
    a small value, so every access stays inside mapped memory; nothing writes the
    reserved registers.  A conditional branch only tests flags that are defined on
    every path to it (IMUL leaves SF/ZF/AF/PF undefined, XOR and TEST leave AF
    undefined), so the two backends never legitimately part ways.  What g++ emits
    around AMX kernels is drawn too: shifts, MOVZX/MOVSX/MOVSXD, CDQE, XCHG,
    PUSH/POP pairs, and the vector moves on a pool of six vector registers
    (VECTOR_POOL, zero at a case's start), as far as this host's CPU has them
    (``vector_shape``: EVEX forms only with AVX-512), with the destination filled
    first now and then so that the rule for its upper bits shows.

Batches (``build_batch``)
    Starting a silicon run costs a child process (about 0.2 s), so scalar cases
    run in batches: one program holds many cases, each loading its registers from
    a bookkeeping block, normalising the flags (all clear, as a program starts),
    running its body (a RET becomes a jump to the end of the body) and storing the
    registers it may have written and the flags that are defined at its end
    (through Jcc) into that block, and the vector registers it wrote (zeroed
    before each such case and at the end of the batch, so that the end state
    holds no vector the batch's cases share).  A batch divergence is pinned to its case by
    ``Batch.case_of``.  AF has no Jcc: a final-state batch compares it for its
    last case only, a lockstep run after every instruction of every case.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np
from hypothesis import strategies as st

from ...core.diff import DiffReport
from ...core.isa import get_isa
from ...core.program import Program
from ...core.trace import Init
from ..config import CODE_BASE
from ..encoding import scalar as scalar_encoding
from ..forms import scalar
from ..operands import GPR64, GPR_VIEWS, Target, gpr_name
from ..semantics.scalar import CONDITIONS as JCC_CONDITIONS
from ..state import CF, OF, PF, SF, ZF
from .vector import render_simd

ISA_NAME = "x86_amx"
MASK64 = (1 << 64) - 1

# ---------------------------------------------------------------------------
# Memory layout
# ---------------------------------------------------------------------------

SLOT_BASE = 0x10000000  # scalar case i's scratch memory: SLOT_BASE + i * SLOT
SLOT = 0x400
BASE_LOW, BASE_HIGH = 0x90, 0x2F0  # where in its slot a base register may point
DISP_LIMIT = 0x90  # |displacement| of a memory operand through a base register
INDEX_LIMIT = 15  # the index register holds 0..15 (times a scale of at most 8)
BOOK_BASE = 0x18000000  # bookkeeping of a batch: case i's block at BOOK_BASE + i * BOOK
BOOK_IN, BOOK_OUT, BOOK_FLAGS, BOOK_ONE, BOOK_VECTORS = 0x00, 0x80, 0x100, 0x108, 0x140
# The vector registers a case may use (issue 15: the moves g++ emits around AMX kernels): four of
# xmm/ymm/zmm0-15 and, where the CPU has AVX-512, two of 16-31 (EVEX only).  A case's writes to
# them are stored in its bookkeeping block, 64 bytes each (aligned: BOOK is a multiple of 64).
VECTOR_POOL = (0, 1, 2, 3, 16, 17)
BOOK = BOOK_VECTORS + 64 * len(VECTOR_POOL)

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
CONDITIONS = [(("j" + cc,) + aliases, reads) for (cc, _m, _t, aliases), reads in zip(JCC_CONDITIONS, (
    OF, OF, CF, CF, ZF, ZF, CF | ZF, CF | ZF, SF, SF, PF, PF, SF | OF, SF | OF, ZF | SF | OF, ZF | SF | OF))]
# The Jcc that jumps when the flag is CLEAR (so the fall-through records a set flag).
CAPTURE_JUMPS = ((CF, "jae"), (PF, "jnp"), (ZF, "jne"), (SF, "jns"), (OF, "jno"))
CAPTURE_OFFSET = {CF: 0, PF: 1, ZF: 2, SF: 3, OF: 4}

_HIGH_BYTES = {"ah": "rax", "ch": "rcx", "dh": "rdx", "bh": "rbx"}
_LOW_OF_HIGH = {"ah": "al", "ch": "cl", "dh": "dl", "bh": "bl"}
_SIZE = {8: "BYTE", 16: "WORD", 32: "DWORD", 64: "QWORD", 128: "XMMWORD", 256: "YMMWORD", 512: "ZMMWORD"}
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
    vectors: the vector registers (numbers, of VECTOR_POOL) the body may write; they start zero.
    """

    body: tuple[str, ...]
    regs: tuple[tuple[str, int], ...]
    bases: tuple[str, ...]
    scratch: bytes
    written: tuple[str, ...]
    defined: int
    slot: int = 0
    vectors: tuple[int, ...] = ()

    def at_slot(self, slot: int) -> "ScalarCase":
        return ScalarCase(self.body, self.regs, self.bases, self.scratch, self.written, self.defined, slot,
                          self.vectors)

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
        return ScalarCase(tuple(kept), self.regs, self.bases, self.scratch, self.written, self.defined, self.slot,
                          self.vectors)


@dataclass
class _Block:
    lines: list[str]
    jump_to: int | None = None  # block index this block may jump to
    falls_through: bool = True
    mnemonic: str = ""
    # A block that reads flags without branching (CMOVcc, SETcc: "{cc}" in its lines is the condition;
    # ADC, SBB, RCL, RCR: CF) must read defined ones: the condition is chosen among those whose flags are
    # defined, or the block becomes its ``fallback`` lines.
    reads: int = 0
    condition: int | None = None
    fallback: list[str] | None = None


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
        self.vectors_written: set[int] = set()

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
          + ("jcc",) * 6 + ("jmp",) * 2 + ("nop",) * 2 + ("longjump", "ret")
          # what g++ emits around AMX kernels (issue 15)
          + ("shift",) * 4 + ("extend",) * 3 + ("cdqe",) + ("xchg",) * 2 + ("pushpop",) * 3
          + ("vector",) * 6)
# issue 27: the rest of the integer instructions g++ and clang emit take a quarter of the draws of the
# plain ALU kinds (so that every other kind is drawn as often as before), weighted by repetition
_ALU_KINDS = ("mov", "add", "sub", "cmp", "xor", "test")
_GENERAL_KINDS = (("logic",) * 6 + ("unary",) * 2 + ("cmov",) * 3 + ("setcc",) * 2 + ("widen",) + ("mul",) * 2
                  + ("divide",) * 3 + ("swap",) * 2 + ("exchange",) * 2 + ("rotate",) * 4 + ("shiftd",) * 2
                  + ("bittest",) * 4 + ("bitscan",) * 4 + ("bmi",) * 6 + ("string",) * 5)
_SHIFTS = ("shl", "sal", "shr", "sar")
_EXTENDS = ("movzx", "movsx", "movsxd")
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
    if kind in _ALU_KINDS and (c.byte(2) ^ c.byte(13)) & 3 == 3:
        kind = c.pick(12, _GENERAL_KINDS)
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
    if kind == "pushpop" and spec["dist"] >= 4 and "rsp" in b.bases:
        # calls within the program, through a register and memory too, and indirect jumps (issue 27): three
        # in seven of the stack's blocks (a kind of their own would change every seed's programs)
        return _render_call(b, spec)
    if kind in ("shift", "extend", "cdqe", "xchg", "pushpop"):
        return _render_compiled(b, spec)
    if kind in _ISSUE27_KINDS:
        return _render_general(b, spec)
    if kind == "vector":
        return _render_vector(b, spec)
    if kind == "avx512":
        return _render_avx512(b, spec)
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


def _render_compiled(b: _ScalarBuilder, spec: dict) -> _Block:
    """The instructions g++ emits for the AMX kernels: shifts, sign/zero extensions, CDQE, XCHG, and
    PUSH/POP pairs.  A pair runs only while RSP is a base register (it points into the case's slot, so the
    stack is the slot's mapped memory); the pop restores RSP, so the reserved register ends as it began."""
    kind, bits = spec["kind"], spec["bits"]
    if kind == "shift":
        mnemonic = _SHIFTS[spec["alias"]]
        dest = b.memory(bits, spec["mem"]) if spec["on_memory"] else b.dest(bits, spec["r1"])
        count = 1 + spec["imm"] % (bits - 1)  # 1..bits-1: every flag but OF (count > 1) and AF is defined
        lines = []
        if spec["dist"] == 0 and "rcx" not in b.reserved and dest not in ("rcx", "ecx", "cx", "cl", "ch"):
            lines.append(f"mov cl, {count:#x}")
            b.note(writes=["cl"])
            count_text = "cl"
        else:
            count_text = "1" if count == 1 else f"{count:#x}"
        ops = b.fix_rex([dest])
        if ops[0] in GPR_VIEWS:
            b.note(reads=ops, writes=ops)
        lines.append(f"{mnemonic} {ops[0]}, {count_text}")
        return _Block(lines, mnemonic=mnemonic)
    if kind == "extend":
        mnemonic = _EXTENDS[spec["alias"] % 3]
        if mnemonic == "movsxd":
            dest_bits, src_bits = (64, 32) if spec["r2"] % 3 else (32, 32)
        else:
            dest_bits = (16, 32, 64)[spec["r2"] % 3]
            src_bits = 8 if dest_bits == 16 or spec["cond"] & 1 else 16
        dest = b.dest(dest_bits, spec["r1"])
        src = b.memory(src_bits, spec["mem"]) if spec["on_memory"] else b.src(src_bits, spec["r2"] // 3)
        dest, src = b.fix_rex([dest, src])
        if dest_bits == 64:
            src = _LOW_OF_HIGH.get(src, src)  # REX.W: ah/bh/ch/dh cannot be encoded
        b.note(reads=[o for o in (src,) if o in GPR_VIEWS], writes=[dest])
        return _Block([f"{mnemonic} {dest}, {src}"], mnemonic=mnemonic)
    if kind == "cdqe":
        if "rax" in b.reserved:
            return _Block(["nop"], mnemonic="nop")
        b.note(reads=["eax"], writes=["rax"])
        return _Block(["cdqe"], mnemonic="cdqe")
    if kind == "xchg":
        first = b.dest(bits, spec["r1"])
        second = b.memory(bits, spec["mem"]) if spec["on_memory"] else b.dest(bits, spec["r2"])
        first, second = b.fix_rex([first, second])
        if first == second and first in ("rax", "eax"):
            return _Block(["nop"], mnemonic="nop")  # xchg rax, rax is not GNU as's; eax, eax is 87 c0
        b.note(reads=[o for o in (first, second) if o in GPR_VIEWS], writes=[o for o in (first, second) if o in GPR_VIEWS])
        return _Block([f"xchg {first}, {second}"], mnemonic="xchg")
    # pushpop
    if "rsp" not in b.bases:
        return _Block(["nop"], mnemonic="nop")
    width = 16 if bits == 16 else 64
    shape = spec["shape"]
    if shape == "ri" and width == 64:
        source = b.immediate(spec["imm"], 32)
        source = f"{_signed(int(source, 16), 32):#x}" if _signed(int(source, 16), 32) >= 0 else \
            f"-{-_signed(int(source, 16), 32):#x}"
    elif "m" in shape:
        source = b.memory(width, spec["mem"])
    else:
        source = b.src(width, spec["r1"])
        b.note(reads=[source])
    target = b.memory(width, (spec["mem"][0], False, 1, spec["mem"][3])) if shape == "mr" else b.dest(width, spec["r2"])
    if target in GPR_VIEWS:
        b.note(writes=[target])
    return _Block([f"push {source}", f"pop {target}"], mnemonic="pop")


_ISSUE27_KINDS = frozenset(_GENERAL_KINDS)
# The forms those kinds draw (CMOVcc and SETcc apart, by condition); the BMI ones where the host has BMI1/2.
GENERAL_FORMS = ("and", "or", "adc", "sbb", "not", "neg", "mul", "div", "idiv", "cbw", "cwde", "cwd", "cdq", "cqo",
                 "bswap", "movbe", "xadd", "cmpxchg", "endbr64", "rol", "ror", "rcl", "rcr", "shld", "shrd", "bt",
                 "bts", "btr", "btc", "bsf", "bsr", "lzcnt", "tzcnt", "popcnt")
_LOGIC = ("and", "or", "adc", "sbb")
_NOT_DIVISORS = {"rax", "rdx"}  # a divisor must not be the dividend


def _operand(b: _ScalarBuilder, spec: dict, bits: int, *, writes: bool, memory: bool | None = None) -> str:
    """A register (noted as read, and written if ``writes``) or, on memory, a memory operand of the slot."""
    if spec["on_memory"] if memory is None else memory:
        return b.memory(bits, spec["mem"])
    reg = b.dest(bits, spec["r1"]) if writes else b.src(bits, spec["r1"])
    b.note(reads=[reg], writes=[reg] if writes else [])
    return reg


def _render_general(b: _ScalarBuilder, spec: dict) -> _Block:
    """The integer instructions of issue 27 (see _ISSUE27_KINDS): every width, register and memory forms."""
    kind, bits = spec["kind"], spec["bits"]
    if kind == "logic":
        mnemonic = _LOGIC[spec["alias"]]
        block = _render(b, {**spec, "kind": "add"}, 0)
        line = block.lines[0].replace("add ", f"{mnemonic} ", 1)
        if mnemonic in ("adc", "sbb"):
            fallback = [line.replace(f"{mnemonic} ", {"adc": "add ", "sbb": "sub "}[mnemonic], 1)]
            return _Block([line], mnemonic=mnemonic, reads=CF, fallback=fallback)
        return _Block([line], mnemonic=mnemonic)
    if kind == "unary":
        mnemonic = ("not", "neg")[spec["alias"] % 2]
        op = b.fix_rex([_operand(b, spec, bits, writes=True)])[0]
        return _Block([f"{mnemonic} {op}"], mnemonic=mnemonic)
    if kind == "cmov":
        bits = max(bits, 16)
        dest = b.dest(bits, spec["r1"])
        src = b.memory(bits, spec["mem"]) if spec["on_memory"] else b.src(bits, spec["r2"])
        b.note(reads=[o for o in (dest, src) if o in GPR_VIEWS], writes=[dest])
        fallback = [f"mov {dest}, {src}"]
        return _Block([f"cmov{{cc}} {dest}, {src}"], mnemonic="cmov", reads=-1, condition=spec["cond"] + 16 * spec["alias"],
                      fallback=fallback)
    if kind == "setcc":
        op = b.fix_rex([_operand(b, spec, 8, writes=True)])[0]
        return _Block([f"set{{cc}} {op}"], mnemonic="set", reads=-1, condition=spec["cond"] + 16 * spec["alias"],
                      fallback=[f"mov {op}, 0x1"])
    if kind == "widen":
        mnemonic = ("cbw", "cwde", "cwd", "cdq", "cqo")[spec["alias"] % 4 + (spec["cond"] & 1)]
        b.note(reads=["rax"], writes=["rax", "rdx"])
        return _Block([mnemonic], mnemonic=mnemonic)
    if kind == "mul":
        op = b.fix_rex([_operand(b, spec, bits, writes=False)])[0]
        b.note(reads=["rax"], writes=["rax"] + (["rdx"] if bits > 8 else []))
        return _Block([f"mul {op}"], mnemonic="mul")
    if kind == "divide":
        return _render_divide(b, spec)
    if kind == "swap":
        if spec["on_memory"] and bits > 8:  # MOVBE, a load or a store
            bits = max(bits, 16)
            reg, mem = b.dest(bits, spec["r2"]), b.memory(bits, spec["mem"])
            if spec["alias"] & 1:
                b.note(reads=[reg])
                return _Block([f"movbe {mem}, {reg}"], mnemonic="movbe")
            b.note(writes=[reg])
            return _Block([f"movbe {reg}, {mem}"], mnemonic="movbe")
        if spec["cond"] == 0:
            return _Block(["endbr64"], mnemonic="endbr64")
        reg = b.dest(64 if bits == 64 else 32, spec["r1"])
        b.note(reads=[reg], writes=[reg])
        return _Block([f"bswap {reg}"], mnemonic="bswap")
    if kind in ("rotate", "shiftd"):
        return _render_rotate(b, spec)
    if kind in ("bittest", "bitscan"):
        return _render_bits(b, spec)
    if kind == "bmi":
        return _render_bmi(b, spec)
    if kind == "string":
        return _render_string(b, spec)
    # exchange: XADD, CMPXCHG
    mnemonic = ("xadd", "cmpxchg")[spec["alias"] % 2]
    dest = _operand(b, spec, bits, writes=True)
    src = b.dest(bits, spec["r2"])
    dest, src = b.fix_rex([dest, src])
    b.note(reads=[src] + [o for o in (dest,) if o in GPR_VIEWS], writes=[src] if mnemonic == "xadd" else [])
    if mnemonic == "cmpxchg":
        b.note(reads=["rax"], writes=["rax"])
        if spec["imm"] & 1 and "[" in dest:  # make the comparison succeed now and then
            accumulator = {8: "al", 16: "ax", 32: "eax", 64: "rax"}[bits]
            return _Block([f"mov {accumulator}, {dest}", f"cmpxchg {dest}, {src}"], mnemonic="cmpxchg")
    return _Block([f"{mnemonic} {dest}, {src}"], mnemonic=mnemonic)


def _render_rotate(b: _ScalarBuilder, spec: dict) -> _Block:
    """ROL ROR RCL RCR by 1, an imm8 or CL (any count: a masked count of 0 changes nothing, OF is compared for
    a count of 1 only), and SHLD/SHRD (a 16-bit count at most 16: above, DEST is undefined)."""
    kind, bits = spec["kind"], spec["bits"]
    count = spec["imm"] & 0xFF
    if kind == "shiftd":
        bits = max(bits, 16)
        mnemonic = ("shld", "shrd")[spec["alias"] % 2]
        if bits == 16 and count & 0x1F > 16:
            count &= 0x0F
    else:
        mnemonic = ("rol", "ror", "rcl", "rcr")[spec["alias"]]
    dest = _operand(b, spec, bits, writes=True)
    src = b.src(bits, spec["r2"]) if kind == "shiftd" else None
    lines = []
    cl_free = "rcx" not in b.reserved and parent(dest) != "rcx" if dest in GPR_VIEWS else "rcx" not in b.reserved
    if spec["dist"] == 0 and cl_free:
        lines.append(f"mov cl, {count:#x}")
        b.note(writes=["cl"])
        count_text = "cl"
    else:
        count_text = "1" if count == 1 and kind == "rotate" else f"{count:#x}"
    ops = b.fix_rex([dest] + ([src] if src else []))
    if src:
        b.note(reads=[ops[1]])
    lines.append(f"{mnemonic} {', '.join(ops)}, {count_text}")
    if mnemonic in ("rcl", "rcr"):
        fallback = lines[:-1] + [lines[-1].replace(mnemonic, {"rcl": "rol", "rcr": "ror"}[mnemonic], 1)]
        return _Block(lines, mnemonic=mnemonic, reads=CF, fallback=fallback)
    return _Block(lines, mnemonic=mnemonic)


def _render_bits(b: _ScalarBuilder, spec: dict) -> _Block:
    """BT BTS BTR BTC with an imm8 or a register offset (into memory: made 0..255 first, so the word it
    reaches stays in the slot) and BSF BSR LZCNT TZCNT POPCNT from a register or memory (zero sources too:
    BSF/BSR then leave DEST as it was)."""
    kind, bits = spec["kind"], max(spec["bits"], 16)
    if kind == "bitscan":
        mnemonic = ("bsf", "bsr", "lzcnt", "tzcnt", "popcnt")[(spec["alias"] + 4 * spec["cond"]) % 5]
        dest = b.dest(bits, spec["r1"])
        if spec["on_memory"]:
            src = b.memory(bits, spec["mem"])
        else:
            src = b.src(bits, spec["r2"])
            b.note(reads=[src])
        b.note(reads=[dest], writes=[dest])
        return _Block([f"{mnemonic} {dest}, {src}"], mnemonic=mnemonic)
    mnemonic = ("bt", "bts", "btr", "btc")[spec["alias"]]
    base = _operand(b, spec, bits, writes=mnemonic != "bt")
    lines = []
    if spec["shape"] in ("ri", "mi"):
        offset = f"{spec['imm'] & 0xFF:#x}"
    else:
        pool = [r for r in b.dest_pool[bits] if r != base]
        offset = pool[spec["r2"] % len(pool)]
        b.note(reads=[offset])
        if "[" in base:
            lines.append(f"and {offset}, 0xff")
            b.note(writes=[offset])
    lines.append(f"{mnemonic} {base}, {offset}")
    return _Block(lines, mnemonic=mnemonic)


STRING_FORMS = ("stos", "movs", "lods", "scas", "cmps")
_STRING_SUFFIX = {8: "b", 16: "w", 32: "d", 64: "q"}
_STRING_REACH = 15 * 8  # at most 15 elements of 8 bytes from where RDI or RSI starts


def _render_string(b: _ScalarBuilder, spec: dict) -> _Block:
    """A string instruction on the slot, once or behind its repeat prefix with RCX 0..15 (REP; REPE and REPNE
    before SCAS and CMPS, whose loops may stop early): RDI and RSI are first pointed into the slot by LEA from
    a base register, far enough from its end for 15 elements (the two regions may overlap, as memmove's do).
    Where RDI, RSI or RCX is a base or the index, a free register keeps it meanwhile.  DF stays clear (a CLD
    now and then): a case the shrinker cuts short must not return with it set; tests/x86_amx/forms/
    test_strings.py runs the backward direction against silicon."""
    mnemonic = STRING_FORMS[(spec["alias"] + 4 * spec["cond"]) % len(STRING_FORMS)]
    bits = spec["bits"]
    lines = ["cld"] if spec["cond"] == 15 else []
    free = [r for r in GPR64 if r not in b.reserved and r not in ("rdi", "rsi", "rcx", "rax", "rsp")]
    kept = {}
    for name in ("rdi", "rsi", "rcx"):
        if name in b.reserved:
            kept[name] = free.pop(spec["r2"] % len(free))
            lines.append(f"mov {kept[name]}, {name}")
    b.note(reads=list(kept), writes=list(kept.values()))
    disp = spec["mem"][3]
    dest_disp = disp - _STRING_REACH if disp > DISP_LIMIT - _STRING_REACH else disp
    source_disp = spec["dist"] * 0x20 - DISP_LIMIT
    for target, base, offset in (("rdi", b.bases[spec["mem"][0] % len(b.bases)], dest_disp),
                                 ("rsi", b.bases[spec["r2"] % len(b.bases)], source_disp)):
        base = kept.get(base, base)
        lines.append(f"lea {target}, [{base}{offset:+#x}]".replace("+-", "-"))
    b.note(reads=["rax"], writes=["rdi", "rsi"] + (["rax"] if mnemonic == "lods" else []))
    prefix = ""
    if spec["r1"] % 4:
        lines.append(f"mov ecx, {spec['imm'] & 15:#x}")
        b.note(writes=["rcx"])
        prefix = "rep " if mnemonic in ("stos", "movs", "lods") else ("repe ", "repne ")[spec["imm"] >> 4 & 1]
    lines.append(f"{prefix}{mnemonic}{_STRING_SUFFIX[bits]}")
    lines += [f"mov {name}, {keep}" for name, keep in kept.items()]
    return _Block(lines, mnemonic=mnemonic)


BMI_FORMS = _BMI = ("andn", "bextr", "blsi", "blsmsk", "blsr", "bzhi", "shlx", "shrx", "sarx", "rorx", "mulx", "pdep", "pext")


def _render_bmi(b: _ScalarBuilder, spec: dict) -> _Block:
    """A BMI1/BMI2 form at 32 or 64 bits, its r/m operand a register or the slot (where this host has BMI1 and
    BMI2: else a NOP)."""
    if not bmi_host():
        return _Block(["nop"], mnemonic="nop")
    bits = 64 if spec["bits"] in (64, 16) else 32
    mnemonic = _BMI[(spec["alias"] + 4 * spec["cond"]) % len(_BMI)]
    dest = b.dest(bits, spec["r1"])
    other = b.src(bits, spec["r2"])
    rm = b.memory(bits, spec["mem"]) if spec["on_memory"] else b.src(bits, spec["r2"] // 3 + spec["dist"])
    b.note(reads=[o for o in (other, rm) if o in GPR_VIEWS], writes=[dest])
    if mnemonic in ("blsi", "blsmsk", "blsr"):
        ops = [dest, rm]
    elif mnemonic == "rorx":
        ops = [dest, rm, f"{spec['imm'] & 0xFF:#x}"]
    elif mnemonic in ("bextr", "bzhi", "shlx", "shrx", "sarx"):
        ops = [dest, rm, other]
    elif mnemonic == "mulx":
        low = b.dest(bits, spec["r2"])
        b.note(reads=["rdx"], writes=[low])
        ops = [dest, low, rm]
    else:
        ops = [dest, other, rm]
    return _Block([f"{mnemonic} {', '.join(ops)}"], mnemonic=mnemonic)


def bmi_host() -> bool:
    """Whether this host's CPU has BMI1 and BMI2 (a case must run on the silicon it is compared with)."""
    from ..oracle import host_cpu, platform_problem

    return platform_problem() is None and {"bmi1", "bmi2"} <= host_cpu().flags


def _render_divide(b: _ScalarBuilder, spec: dict) -> _Block:
    """DIV or IDIV that cannot fault: the divisor is made nonzero (and, for IDIV, never -1 with the
    most negative dividend: positive and odd, or even and nonzero) and the dividend's upper half is
    zero (DIV) or the sign of its lower half (IDIV), so the quotient fits."""
    bits, signed_division = spec["bits"], bool(spec["alias"] & 1)
    if spec["on_memory"]:
        divisor = b.memory(bits, spec["mem"])
    else:
        pool = [r for r in b.dest_pool[bits] if parent(r) not in _NOT_DIVISORS]
        divisor = b.fix_rex([pool[spec["r1"] % len(pool)]])[0]
        b.note(reads=[divisor], writes=[divisor])
    lines = [f"shr {divisor}, 1", f"or {divisor}, 0x1"] if not signed_division or spec["cond"] & 1 else \
        [f"and {divisor}, 0xfe" if bits == 8 else f"and {divisor}, -2", f"or {divisor}, 0x2"]
    if signed_division:
        lines.append({8: "cbw", 16: "cwd", 32: "cdq", 64: "cqo"}[bits])
    else:
        lines.append("movzx eax, al" if bits == 8 else "xor edx, edx")
    mnemonic = "idiv" if signed_division else "div"
    lines.append(f"{mnemonic} {divisor}")
    b.note(reads=["rax", "rdx"], writes=["rax", "rdx"])
    return _Block(lines, mnemonic=mnemonic)


def vector_shape() -> tuple[int, int]:
    """(registers, bits) of the vector registers the fuzzer may use: what this host's CPU has (a case must
    run on the silicon it is compared with), or (0, 0) on a host without AVX, where no case uses them."""
    from ..oracle import host_cpu, platform_problem

    if platform_problem() is not None or "avx" not in host_cpu().flags:
        return 0, 0
    return host_cpu().vector_shape


# The vector moves a case draws: (mnemonic, the widths it takes, what its operands may be).  Forms
# that need alignment (MOVAPS, MOVDQA, VMOVDQA, PXOR's m128) stay register to register: the slot's
# addresses are not aligned, and a #GP would end the whole batch.
_VECTOR_OPS = (("pxor", (128,), "rr"), ("vpxor", (128, 256), "rrm"), ("movaps", (128,), "rr"),
               ("movups", (128,), "rml"), ("movdqa", (128,), "rr"), ("vmovdqa", (128, 256), "rr"),
               ("vmovdqu8", (128, 256, 512), "rml"), ("vpbroadcastw", (128, 256, 512), "rmg"),
               ("vzeroupper", (), ""))
_VECTOR_PREFIX = {128: "xmm", 256: "ymm", 512: "zmm"}


def _render_vector(b: _ScalarBuilder, spec: dict) -> _Block:
    """A vector move on the case's vector registers (VECTOR_POOL), its memory in the case's slot: a load
    from the slot first, now and then, so that the move has data to work on."""
    count, bits = vector_shape()
    if not count:
        return _Block(["nop"], mnemonic="nop")
    if (spec["r1"] ^ spec["r2"]) & 1:  # half the draws: issue 27's arithmetic, conversions, shuffles (fuzz/vector.py)
        return _render_simd(b, spec)
    evex = bits == 512  # AVX-512: vmovdqu8, zmm, xmm16-31 and the GPR broadcast
    ops = [op for op in _VECTOR_OPS if op[0] != "vmovdqu8" or evex]
    mnemonic, widths, shapes = ops[spec["cond"] % len(ops)]
    if mnemonic == "vzeroupper":
        b.vectors_written.update(n for n in VECTOR_POOL if n < 16)
        return _Block(["vzeroupper"], mnemonic="vzeroupper")
    widths = [w for w in widths if w <= bits and (w < 512 or mnemonic in ("vmovdqu8", "vpbroadcastw"))]
    width = widths[spec["alias"] % len(widths)]
    high = evex and mnemonic in ("vmovdqu8", "vpbroadcastw")  # EVEX forms reach xmm16-31
    pool = [n for n in VECTOR_POOL if n < 16 or high]

    def register(choice: int, w: int = width) -> str:
        return f"{_VECTOR_PREFIX[w]}{pool[choice % len(pool)]}"

    def memory(bits: int) -> str:
        # no index, and a displacement that keeps all 64 bytes in the slot (a base points at most
        # BASE_HIGH into it): the scalar kinds' operands are at most 8 bytes
        base_choice, _use_index, scale, disp = spec["mem"]
        return b.memory(bits, (base_choice, False, scale, min(disp, DISP_LIMIT - 64)))

    dest, src = register(spec["r1"]), register(spec["r2"])
    shape = shapes[spec["dist"] % len(shapes)]
    lines = []
    if spec["imm"] & 1 and shape != "l":  # load the source from the slot first (an unaligned load)
        load_bits = 512 if evex and mnemonic != "vpbroadcastw" else 128
        load = register(spec["r2"], load_bits)
        lines.append(f"{'vmovdqu8' if evex else 'movups'} {load}, {memory(load_bits)}")
        b.vectors_written.add(int(load[3:]))
    if spec["imm"] & 2 and shape != "l":
        # fill all of the destination first, so that what the move does to the bits above its width
        # (a legacy SSE write keeps them, VEX and EVEX zero them) shows
        full = register(spec["r1"], bits)
        lines.append(f"vmovdqu8 {full}, {memory(512)}" if evex else f"vpxor {full}, {full}, {memory(256)}")
        b.vectors_written.add(int(full[3:]))
    if mnemonic == "vpbroadcastw":
        source = {"r": register(spec["r2"], 128), "m": memory(16),
                  "g": b.src(32, spec["r2"]) if evex else register(spec["r2"], 128)}[shape]
        if source in GPR_VIEWS:
            b.note(reads=[source])
        lines.append(f"vpbroadcastw {dest}, {source}")
    elif mnemonic in ("pxor", "vpxor"):
        second = memory(width) if shape == "m" else register(spec["r2"] // 3)
        lines.append(f"pxor {dest}, {src}" if mnemonic == "pxor" else f"vpxor {dest}, {src}, {second}")
    elif shape == "l":  # a store to the slot
        lines.append(f"{mnemonic} {memory(width)}, {src}")
        return _Block(lines, mnemonic=mnemonic)
    else:
        lines.append(f"{mnemonic} {dest}, {memory(width) if shape == 'm' else src}")
    b.vectors_written.add(int(dest[3:]))
    return _Block(lines, mnemonic=mnemonic)


# issue 27: the AVX-512 forms compilers emit around AMX kernels (every width and mask form of the moves, GPR <->
# xmm moves, the zeroing and all-ones idioms, the broadcasts, the opmask instructions), drawn where this host's
# CPU has AVX-512 F, BW, DQ and VL.  A mask is loaded from the slot in the same block before it is used, so a
# case never reads an opmask register it did not set (they are not observed: KMOV stores them to the slot).
_KINDS += ("avx512",) * 16 + ("vector",) * 6  # the SSE/AVX moves keep their share beside the new kinds
_AVX512_MOVES = ("vmovdqu8", "vmovdqu16", "vmovdqu32", "vmovdqu64", "vmovups", "vmovupd")
_AVX512_ALIGNED = ("vmovdqa32", "vmovdqa64", "vmovaps", "vmovapd")  # register to register: the slot is unaligned
AVX512_FORMS = (_AVX512_MOVES + _AVX512_ALIGNED + ("vmovdqu", "movdqu", "movd", "movq", "vmovd", "vmovq", "vpxord",
                "vpxorq", "vpternlogd", "vpternlogq", "vpbroadcastb", "vpbroadcastd", "vpbroadcastq", "vbroadcastss",
                "kmovb", "kmovw", "kmovd", "kmovq", "kortestb", "kortestw", "kortestd", "kortestq", "kxorb", "kxorw",
                "kxord", "kxorq"))
_AVX512_PICKS = AVX512_FORMS[:-12] + ("kmov", "kortest", "kxor")
# and the integer, BF16 and fp32 arithmetic (three operands), and the widening and converting moves (the
# source's bits per destination bit)
_AVX512_ARITHMETIC = ("vpaddd", "vpsubd", "vpmulld", "vpdpbusd", "vpermd", "vpshufb", "vaddps", "vmulps",
                      "vfmadd231ps", "vcvtne2ps2bf16")
_AVX512_CONVERSIONS = {"vpmovzxbw": 0.5, "vpmovzxbd": 0.25, "vpmovzxwd": 0.5, "vpmovsxbw": 0.5, "vpmovsxbd": 0.25,
                       "vpmovsxwd": 0.5, "vcvtdq2ps": 1, "vcvtneps2bf16": 2}
_AVX512_ARITHMETIC += ("vpandd", "vpandq", "vpord", "vporq", "vxorps", "vpmaddwd", "vpunpcklwd", "vpunpckhwd")
_AVX512_CONVERSIONS.update({"vpmovsxdq": 0.5, "vpmovzxdq": 0.5})
_AVX512_PICKS += ("kmov", "kortest", "kxor") * 2  # four forms each: drawn as often as the others
AVX512_FORMS += _AVX512_ARITHMETIC + tuple(_AVX512_CONVERSIONS)
_AVX512_PICKS += _AVX512_ARITHMETIC + tuple(_AVX512_CONVERSIONS)


def avx512_host() -> bool:
    """Whether this host's CPU runs the avx512 kind's forms (else the kind draws a NOP)."""
    from ..oracle import host_cpu, platform_problem

    return platform_problem() is None and {"avx512f", "avx512bw", "avx512dq", "avx512vl"} <= host_cpu().flags


def _render_simd(b: _ScalarBuilder, spec: dict) -> _Block:
    """One of fuzz/vector.py's forms this host runs, on the case's vector registers and its slot."""
    from ..oracle import host_cpu

    def memory(bits: int) -> str:  # no index, all 64 bytes in the slot (as the vector kinds' memory)
        base_choice, _use_index, scale, disp = spec["mem"]
        return b.memory(bits, (base_choice, False, scale, min(disp, DISP_LIMIT - 64)))

    lines, mnemonic = render_simd(b, spec, frozenset(host_cpu().flags), VECTOR_POOL, memory)
    return _Block(lines, mnemonic=mnemonic)


def _render_avx512(b: _ScalarBuilder, spec: dict) -> _Block:
    """One of AVX512_FORMS on the case's vector registers (VECTOR_POOL) and its slot, a mask (k1-k3, loaded from
    the slot first) on the forms that take one now and then."""
    if not avx512_host():
        return _Block(["nop"], mnemonic="nop")
    if (spec["r1"] ^ spec["r2"]) & 1:  # half the draws: issue 27's arithmetic, conversions, shuffles (fuzz/vector.py)
        return _render_simd(b, spec)
    # the kind's fields, mixed so that every form and variant comes up (the immediate alone has few values)
    mixed = (spec["imm"] ^ spec["disp"] << 17 ^ spec["base"] << 41 ^ spec["index"] << 49 ^ spec["cond"] << 55
             ^ spec["alias"] << 60) & MASK64
    choice = mixed * 0x9E3779B97F4A7C15 & MASK64 ^ (mixed >> 29)
    pick = _AVX512_PICKS[(choice >> 32) % len(_AVX512_PICKS)] if mixed else _AVX512_PICKS[0]
    width = (128, 256, 512)[spec["dist"] % 3]
    low = pick in ("movdqu", "vmovdqu", "movd", "movq")  # legacy or VEX only: xmm0-15
    pool = [n for n in VECTOR_POOL if n < 16 or not low]

    def register(c: int, w: int = width) -> str:
        return f"{_VECTOR_PREFIX[w]}{pool[c % len(pool)]}"

    def memory(bits: int) -> str:
        base_choice, _use_index, scale, disp = spec["mem"]
        return b.memory(bits, (base_choice, False, scale, min(disp, DISP_LIMIT - 64)))

    lines, k = [], f"k{1 + (choice >> 4) % 3}"
    masked = bool(choice & 4)
    zeroing = bool(choice & 8)

    def dest_of(text: str, *, store: bool = False) -> str:
        if not masked:
            return text
        return f"{text}{{{k}}}" + ("{z}" if zeroing and not store else "")

    if masked and not low and not pick.startswith("k"):
        lines.append(f"kmovq {k}, {memory(64)}")
    if choice & 1 and not pick.startswith("k"):  # the source from the slot first
        load = register(spec["r2"], 512 if not low else 128)
        lines.append(f"vmovdqu8 {load}, {memory(512)}" if not low else f"movdqu {load}, {memory(128)}")
        b.vectors_written.add(int(load[3:]))
    dest, src = register(spec["r1"]), register(spec["r2"])
    shape = (choice >> 8) % 3  # 0: register to register, 1: a load, 2: a store
    if pick in _AVX512_MOVES + _AVX512_ALIGNED or pick in ("vmovdqu", "movdqu"):
        if pick == "movdqu":
            dest, src, width = register(spec["r1"], 128), register(spec["r2"], 128), 128
        if pick == "vmovdqu" and width == 512:
            dest, src, width = register(spec["r1"], 256), register(spec["r2"], 256), 256
        if pick in _AVX512_ALIGNED or shape == 0:
            lines.append(f"{pick} {dest if low else dest_of(dest)}, {src}")
        elif shape == 1:
            lines.append(f"{pick} {dest if low else dest_of(dest)}, {memory(width)}")
        else:
            lines.append(f"{pick} {memory(width) if low else dest_of(memory(width), store=True)}, {src}")
            return _Block(lines, mnemonic=pick)
        b.vectors_written.add(int(dest[3:]))
        return _Block(lines, mnemonic=pick)
    if pick in ("movd", "movq", "vmovd", "vmovq"):
        size = 32 if pick.endswith("d") else 64
        x = register(spec["r1"], 128)
        direction = (choice >> 8) % (5 if size == 64 else 4)
        if direction == 0:
            gpr = b.src(size, spec["r2"])
            b.note(reads=[gpr])
            lines.append(f"{pick} {x}, {gpr}")
        elif direction == 1:
            gpr = b.dest(size, spec["r2"])
            b.note(writes=[gpr])
            lines.append(f"{pick} {gpr}, {x}")
            return _Block(lines, mnemonic=pick)
        elif direction == 2:
            lines.append(f"{pick} {x}, {memory(size)}")
        elif direction == 3:
            lines.append(f"{pick} {memory(size)}, {x}")
            return _Block(lines, mnemonic=pick)
        else:
            lines.append(f"{pick} {x}, {register(spec['r2'], 128)}")
        b.vectors_written.add(int(x[3:]))
        return _Block(lines, mnemonic=pick)
    if pick in ("vpxord", "vpxorq", "vpternlogd", "vpternlogq"):
        second = memory(width) if shape == 1 else register(spec["r2"] // 3)
        if shape == 2:  # the zeroing and all-ones idioms
            second, src = dest, dest
        imm = f", {(choice >> 16) & 0xFF if shape != 2 else 0xFF:#x}" if pick.startswith("vpternlog") else ""
        lines.append(f"{pick} {dest_of(dest)}, {src}, {second}{imm}")
        b.vectors_written.add(int(dest[3:]))
        return _Block(lines, mnemonic=pick)
    if pick.startswith(("vpbroadcast", "vbroadcast")):
        size = {"b": 8, "d": 32, "q": 64}.get(pick[-1], 32)
        if shape == 0:
            source = register(spec["r2"], 128)
        elif shape == 1:
            source = memory(size)
        else:
            source = b.src(64 if size == 64 else 32, spec["r2"]) if pick != "vbroadcastss" else register(spec["r2"], 128)
            if source in GPR_VIEWS:
                b.note(reads=[source])
        lines.append(f"{pick} {dest_of(dest)}, {source}")
        b.vectors_written.add(int(dest[3:]))
        return _Block(lines, mnemonic=pick)
    if pick in _AVX512_ARITHMETIC:
        if pick == "vpermd" and width == 128:  # VPERMD has no xmm form
            dest, src, width = register(spec["r1"], 256), register(spec["r2"], 256), 256
        second = memory(width) if shape == 1 else register(spec["r2"] // 3, width)
        lines.append(f"{pick} {dest_of(dest)}, {src}, {second}")
        b.vectors_written.add(int(dest[3:]))
        return _Block(lines, mnemonic=pick)
    if pick in _AVX512_CONVERSIONS:
        source_bits = int(width * _AVX512_CONVERSIONS[pick])
        if pick == "vcvtneps2bf16":  # the destination holds half the source
            source_bits, dest = width, register(spec["r1"], max(128, width // 2))
        source = memory(source_bits) if shape == 1 else register(spec["r2"], max(128, source_bits))
        lines.append(f"{pick} {dest_of(dest)}, {source}")
        b.vectors_written.add(int(dest[3:]))
        return _Block(lines, mnemonic=pick)
    # the opmask instructions: their sources set from the slot first, their results stored to it
    suffix = "bwdq"[(choice >> 4) % 4]
    size = {"b": 8, "w": 16, "d": 32, "q": 64}[suffix]
    k1, k2, k3 = (f"k{1 + (choice >> s) % 7}" for s in (20, 23, 26))
    lines += [f"kmovq {k2}, {memory(64)}", f"kmovq {k3}, QWORD PTR [{b.bases[0]}+{0x10 + (choice >> 29) % 0x40:#x}]"]
    if pick == "kortest":
        lines.append(f"kortest{suffix} {k2}, {k3}")
        return _Block(lines, mnemonic=f"kortest{suffix}")
    if pick == "kxor":
        lines += [f"kxor{suffix} {k1}, {k2}, {k3}", f"kmovq {memory(64)}, {k1}"]
        return _Block(lines, mnemonic=f"kxor{suffix}")
    direction = (choice >> 8) % 5
    gpr_bits = 64 if size == 64 else 32
    if direction == 0:
        gpr = b.src(gpr_bits, spec["r2"])
        b.note(reads=[gpr])
        lines += [f"kmov{suffix} {k1}, {gpr}", f"kmovq {memory(64)}, {k1}"]
    elif direction == 1:
        gpr = b.dest(gpr_bits, spec["r2"])
        b.note(writes=[gpr])
        lines.append(f"kmov{suffix} {gpr}, {k2}")
    elif direction == 2:
        lines += [f"kmov{suffix} {k1}, {memory(size)}", f"kmovq {memory(64)}, {k1}"]
    elif direction == 3:
        lines.append(f"kmov{suffix} {memory(size)}, {k2}")
    else:
        lines += [f"kmov{suffix} {k1}, {k3}", f"kmovq {memory(64)}, {k1}"]
    return _Block(lines, mnemonic=f"kmov{suffix}")
def _render_call(b: _ScalarBuilder, spec: dict) -> _Block:
    """A call of a small function placed right after it (CALL rel32, CALL r64 or CALL m64: the function reads
    the return address CALL pushed and RETs), or an indirect JMP over a MOV that must not run (JMP r64, JMP
    m64).  Only while RSP is a base register (the stack is the slot's memory).  Every line is position
    independent (.byte for the rel32 CALL, the jump over the function and its RET, which the batch must
    not turn into a jump to the end; [rip+n] for the address), so the batch can place it anywhere."""
    if "rsp" not in b.bases:
        return _Block(["nop"], mnemonic="nop")
    way = spec["alias"] % 3 if spec["cond"] & 1 else 3 + spec["alias"] % 2  # 0-2: call, 3-4: jmp
    target = b.dest(64, spec["r1"])
    other = b.dest(64, spec["r2"])
    if other == target:
        other = b.dest(64, spec["r2"] + 1)
    slot = b.memory(64, spec["mem"])
    b.note(writes=[target, other])
    store = [f"mov {slot}, {target}"] if way in (2, 4) else []  # through memory: the address goes there first

    def aimed(between: list[str]) -> str:  # lea of the address just after the lines ``between``
        return f"lea {target}, [rip+{sum(len(line_code(line)) for line in between):#x}]"

    if way >= 3:  # jmp over a mov that writes `other`
        skipped = f"mov {other}, {spec['imm'] & 0x7FFFFFFF:#x}"
        jump = [f"jmp {target}" if way == 3 else f"jmp {slot}"]
        return _Block([aimed(store + jump + [skipped])] + store + jump + [skipped], mnemonic="jmp")
    body = [f"mov {other}, QWORD PTR [rsp]", ".byte 0xc3"]  # the return address, then RET
    over = [f".byte 0xeb, {sum(len(line_code(line)) for line in body):#x}"]  # jmp over the function (rel8)
    if way == 0:
        lines = [f".byte 0xe8, {len(line_code(over[0])):#x}, 0x0, 0x0, 0x0"]  # call rel32 to the function
    else:
        call = [f"call {target}" if way == 1 else f"call {slot}"]
        lines = [aimed(store + call + over)] + store + call
    return _Block(lines + over + body, mnemonic="call")


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
        if block.reads:
            _choose_condition(block, undefined or 0)
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
                      _fill(fill, fill_seed, SLOT), written, STATUS_TESTED & ~at_ret,
                      vectors=tuple(sorted(builder.vectors_written)))


def _choose_condition(block: _Block, undefined: int) -> None:
    """A flag-reading block's condition among those whose flags are defined here, or its fallback."""
    if block.condition is None:
        if block.reads & undefined:
            block.lines = list(block.fallback)
        return
    allowed = [names for names, reads in CONDITIONS if not reads & undefined]
    if not allowed:
        block.lines = list(block.fallback)
        return
    names = allowed[block.condition % len(allowed)]
    cc = names[block.condition // 16 % len(names)][1:]
    block.lines = [line.replace("{cc}", cc) for line in block.lines]


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

    def case_of(self, report: DiffReport) -> int | None:
        """Which case a divergence of the batch belongs to (None: cannot tell).  A register or RFLAGS
        that differs only at the end is the last case's (the bookkeeping stores every other's)."""
        d = report.divergence
        address = None
        if d.instruction is not None:
            address = d.instruction.address
        elif d.where == "fault":
            fault = report.a_fault or report.b_fault
            if fault is not None and fault.index is not None:
                address = self.program.instructions[fault.index].address
        elif d.where.startswith("memory "):
            at = int(d.where.split()[1], 16)
            if SLOT_BASE <= at < SLOT_BASE + SLOT * len(self.cases):
                return (at - SLOT_BASE) // SLOT
            if BOOK_BASE <= at < BOOK_BASE + BOOK * len(self.cases):
                return (at - BOOK_BASE) // BOOK
        elif d.where in GPR64 or d.where == "rflags":
            return len(self.cases) - 1
        if address is None:
            return None
        return max(i for i, start in enumerate(self.starts) if address >= start) if address >= self.starts[0] else None


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
        code += scalar_encoding.encode(mnemonic, (Target(target),), where[i], long_branch=long[i])[2]
    return bytes(code)


def zero_vectors() -> bytes:
    """Code that zeroes every register of VECTOR_POOL the CPU has (a VEX VPXOR zeroes all of zmm0-15;
    zmm16-31 take zmm0's zeros with VMOVDQU8)."""
    count, bits = vector_shape()
    lines = [f"vpxor xmm{n}, xmm{n}, xmm{n}" for n in VECTOR_POOL if n < 16]
    lines += [f"vmovdqu8 zmm{n}, zmm0" for n in VECTOR_POOL if 16 <= n < count and bits == 512]
    return b"".join(line_code(line) for line in lines)


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
        if case.vectors:  # as the case starts on its own: its vector registers zero
            code += zero_vectors()
        code += line_code(f"cmp BYTE PTR [{block + BOOK_ONE:#x}], 0x0")  # 1 - 0: every status flag clear
        body = body_code(case)
        bodies.append((CODE_BASE + len(code), CODE_BASE + len(code) + len(body)))
        code += body
        for name in case.written if capture else ():
            code += line_code(f"mov QWORD PTR [{block + BOOK_OUT + 8 * GPR64.index(name):#x}], {name}")
        for n in case.vectors if capture else ():
            at = block + BOOK_VECTORS + 64 * VECTOR_POOL.index(n)
            bits = vector_shape()[1]
            store = (f"vmovdqu8 ZMMWORD PTR [{at:#x}], zmm{n}" if bits == 512 else
                     f"vmovdqa YMMWORD PTR [{at:#x}], ymm{n}")  # the block is aligned: VMOVDQA may store it
            code += line_code(store)
        for flag, jump in CAPTURE_JUMPS:
            if capture and case.defined & flag:  # the flag's byte becomes 1 when the flag is set
                store = line_code(f"mov BYTE PTR [{block + BOOK_FLAGS + CAPTURE_OFFSET[flag]:#x}], 0x1")
                code += scalar_encoding.encode(jump, (Target(len(store) + 2),), 0)[2] + store
        slots[i * SLOT : (i + 1) * SLOT] = case.scratch
    if any(case.vectors for case in cases):  # what the cases left is in their blocks: the end compares memory
        code += zero_vectors()
    code += line_code("ret")
    program = get_isa(ISA_NAME).disassemble(bytes(code), base=CODE_BASE)
    init = Init({}, [(SLOT_BASE, bytes(slots), True), (BOOK_BASE, bytes(book), True)])
    return Batch(cases, program, init, starts, bodies)


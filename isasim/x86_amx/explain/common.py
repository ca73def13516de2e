"""What every x86 worked example shares: parsing the one instruction, running it, placing its data, text.

:func:`run` puts the explained instruction's own bytes after a set-up program (GNU
as's ``.byte``, so even an undefined encoding runs as written) and hands both to the
core runner; the snapshot it takes before the step holds the registers, the tiles and
TILECFG.
"""

from __future__ import annotations

import re
import struct

import numpy as np

from ...core.errors import IsasimError
from ...core.explain import ExplainError, Figure, instruction_figure, run_example
from ...core.program import Instruction
from ..assembler import assemble
from ..config import CODE_BASE, CPU_MODELS, DEFAULT_CPU
from ..decoder import disassemble
from ..forms import scalar
from ..operands import Mem
from ..state import BYTES_PER_ROW, MAX_ROWS
from .settings import Settings

ISA_NAME = "x86_amx"
CFG_ADDR = 0x10000
A_ADDR, B_ADDR, C_ADDR = 0x20000, 0x30000, 0x40000
DATA_ADDR = 0x20000
OLD_ADDR = 0x60000
REGION = MAX_ROWS * BYTES_PER_ROW  # one whole tile's bytes


def parse_instruction(instruction: str | None, code: bytes | None) -> Instruction:
    """Exactly one instruction, from text (assembled) or bytes (decoded), placed at CODE_BASE."""
    try:
        if code is not None:
            program = disassemble(code, CODE_BASE)
            what = f"the bytes {code.hex(' ')}"
        else:
            program = assemble(instruction, "explain", CODE_BASE)
            what = f"'{instruction}'"
    except IsasimError as error:
        if error.source == "explain" and error.line == 1:
            error.line = None  # the user typed one line: its number says nothing
        raise
    if len(program.instructions) != 1:
        texts = "; ".join(i.text for i in program.instructions[:3])
        raise ExplainError(f"explain takes one instruction; {what} hold {len(program.instructions)} ({texts})")
    return program.instructions[0]


def default_cpu(feature: str, requested: str | None) -> str:
    """The CPU the example runs on: the one asked for, else the default if it has ``feature``, else one that has."""
    if requested:
        return requested
    if feature in CPU_MODELS[DEFAULT_CPU].features or feature == scalar.FEATURE:
        return DEFAULT_CPU
    return next((name for name, model in CPU_MODELS.items() if feature in model.features), DEFAULT_CPU)


def _snapshot(state) -> dict:
    return {"tiles": state.settled_tiles().copy(), "tilecfg": state.tilecfg.copy(),
            "regs": {name: state.read_register(name) for name in state.register_names()}}


def run_after_setup(ins: Instruction, setup: list[str], *, cpu: str, regs: dict, memory: list, max_steps: int,
        before_step=None):
    """Assemble ``setup`` followed by the instruction's own bytes, run the setup, then step the instruction."""
    lines = list(setup) + [".byte " + ",".join(f"0x{b:02x}" for b in ins.encoding)]
    return run_example(ISA_NAME, "\n".join(lines), config={"cpu": cpu}, regs=regs, memory=memory,
                       max_steps=max_steps, base=CODE_BASE, snapshot=_snapshot, before_step=before_step)


def facts(ins: Instruction, cpu: str, form_facts: list[tuple[str, str]] = ()) -> list[tuple[str, str]]:
    """The facts at the top: the instruction, its bytes, what the form declares, the CPU, an undefined encoding."""
    out = [("instruction", ins.text), ("bytes", ins.encoding.hex(" "))] + list(form_facts)
    out.append(("example CPU", cpu))
    if ins.invalid:
        out.append(("undefined", f"these bytes are #UD: {ins.invalid}"))
    return out


def command(ins: Instruction, settings: Settings) -> str:
    """The isasim command that reproduces this explanation."""
    words = [f'isasim explain "{ins.text}"']
    m, n = settings.element
    if m is not None:
        words.append(f"--m {m}")
    if n is not None:
        words.append(f"--n {n}")
    if settings.shape:
        words.append("--shape " + ",".join(map(str, settings.shape)))
    if settings.seed != 1:
        words.append(f"--seed {settings.seed}")
    if settings.cpu:
        words.append(f"--cpu {settings.cpu}")
    if settings.start_row:
        words.append(f"--start-row {settings.start_row}")
    if settings.init_source:
        words.append(f"--init {settings.init_source}")
    return " ".join(words)


def example_figure(ins: Instruction, encoding, panels, arrows, *, legend=None, caption="") -> Figure:
    """The picture: the encoding strip on top, then the example's panels."""
    return instruction_figure(ins.text, ins.encoding, encoding, panels, arrows, legend or (), caption)


# ---------------------------------------------------------------------------
# The example's data: the init file's named regions, and where generated data goes
# ---------------------------------------------------------------------------


def init_regions(settings: Settings):
    """The init file and its named regions by role: "a", "b" (also "packed B"), "c", "tilecfg"."""
    init = settings.init
    views = {}
    for v in (init.views if init is not None else []):
        key = re.sub(r"\s+", " ", v.name.lower().replace("packed", "")).strip()
        views.setdefault(key, v)
    return init, views


def free_address(memory: list, size: int, preferred: int) -> int:
    """``preferred`` if [preferred, preferred+size) is free of the given regions, else past all of them."""
    def overlaps(start):
        return any(start < a + len(d) and a < start + size for a, d, _w in memory)
    if not overlaps(preferred):
        return preferred
    end = max(a + len(d) for a, d, _w in memory)
    return (end + 0xFFFF) & ~0xFFFF


def region_covering(memory: list, address: int) -> bool:
    return any(a <= address < a + len(d) for a, d, _w in memory)


def place(mem: Mem, address: int) -> tuple[dict, int]:
    """Register values that make ``mem`` address ``address`` (index := 0); returns (regs, the address).
    With no base register the operand's own displacement is the address."""
    regs = {}
    if mem.base == "rip":  # [rip+disp32] names one address: the instruction's own place decides it
        return regs, (mem.rip_target or 0) % (1 << 64)
    if mem.index and mem.index != "riz":
        regs[mem.index] = 0
    if mem.base:
        regs[mem.base] = (address - mem.disp) % (1 << 64)
        return regs, address
    return regs, mem.disp % (1 << 64)


def scratch(avoid: set[str], count: int) -> list[str]:
    """``count`` general-purpose registers for the set-up program that the instruction does not use."""
    pool = ["rcx", "rdi", "rsi", "rdx", "r8", "r9", "r10", "r11", "r12", "r13", "r14", "r15", "rax", "rbx", "rbp"]
    free = [r for r in pool if r not in avoid]
    return free[:count]


def mem_registers(ins: Instruction) -> set[str]:
    """The registers the instruction's memory operands address with."""
    used = set()
    for o in ins.operands:
        if isinstance(o, Mem):
            used |= {r for r in (o.base, o.index) if r and r != "riz"}
    return used


# ---------------------------------------------------------------------------
# Text
# ---------------------------------------------------------------------------


def fp32_text(bits: int) -> str:
    value = np.uint32(bits).view(np.float32)
    if np.isnan(value):
        return f"nan ({bits:#010x})"
    return f"{value!s} ({bits:#010x})" if bits & 0x7FFFFFFF else (("-0" if bits >> 31 else "0") + f" ({bits:#010x})")


def half_text(bits: int, kind: str) -> str:
    """A bf16 or fp16 bit pattern's exact value, shortest text.  (struct widens one pattern exactly, as
    numerics.bf16_bits_to_float / fp16_bits_to_float do for arrays, at a fraction of their per-call cost: a
    TDPBF16PS step's accounts write 16384 of these.)"""
    if kind == "bf16":
        value = _FP32.unpack(_U32.pack((bits & 0xFFFF) << 16))[0]  # bf16 is the top half of an fp32
    else:
        value = _FP16.unpack(_U16.pack(bits & 0xFFFF))[0]
    if value != value:
        return "nan"
    if value == 0:
        return "-0" if bits >> 15 else "0"
    return repr(float(value)).removesuffix(".0") if abs(value) < 1e6 else f"{value:g}"


_U16, _U32, _FP16, _FP32 = struct.Struct("<H"), struct.Struct("<I"), struct.Struct("<e"), struct.Struct("<f")


def short_fp32(bits: int) -> str:
    value = np.uint32(bits).view(np.float32)
    if np.isnan(value):
        return "nan"
    text = f"{value!s}"
    return text.removesuffix(".0")


def signed32(x: int) -> int:
    x &= 0xFFFFFFFF
    return x - (1 << 32) if x >> 31 else x


def hex_bytes(data: bytes, limit: int = 16) -> str:
    text = data[:limit].hex(" ")
    return text + (f" … ({len(data)} bytes)" if len(data) > limit else "")

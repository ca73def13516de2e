"""``isasim explain`` for Intel AMX and the scalar x86-64 subset.

Every section comes from the one definition the simulator runs:

* the encoding: the instruction's own bytes, split by the form's SDM opcode row
  (``AmxForm.opcode``, a parsed ``VEX.128.66.0F38.W0 5E 11:rrr:bbb``) and checked
  field by field against it; for the scalar subset, by the iced-x86 opcode row
  (``o64 83 /0 ib``) that the decoder matched;
* the operands: the SDM's instruction and operand-encoding columns, and the
  parameter names of the semantics function;
* the operation: the semantics function's docstring;
* the faults: the form's ``faults``, the #UD of a CPU without its CPUID feature
  (from the CPU models) and the encoding #UDs its opcode row implies;
* the worked example: a small program (LDTILECFG, TILELOADDs, ...) runs on a real
  :class:`~isasim.core.machine.Machine` up to the instruction, which is then
  stepped; every number shown is read from that machine before and after the
  step (memory addresses are those the machine accessed).  For TDPBF16PS and
  TDPFP16PS the per-step rounding account is the numerics reference's notes,
  and the element it arrives at is checked against the machine's.
"""

from __future__ import annotations

import contextlib
import inspect
import re
from dataclasses import dataclass, field

import iced_x86
import numpy as np

from . import numerics as tmul_numerics
from ..core import numerics
from ..core.errors import IsasimError
from ..core.explain import (
    Arrow, BitField, Cell, Check, Code, EncodedPart, Encoding, ExplainError, ExplainOptions, Explanation, Figure,
    Grid, Paragraph, ReferencePage, Section, Table,
)
from ..core.machine import Machine, StepRecord
from ..core.program import Instruction
from . import CODE_BASE, ISA, amx, scalar
from .cpu import CPU_MODELS, DEFAULT_CPU
from .encoding import MAP_NAMES, PP_NAMES, VexFields, decode_modrm
from .operands import Imm, Mem, Reg, Target
from .registers import GPR64, GPR_VIEWS, tile_number
from .state import BYTES_PER_ROW, FLAG_NAMES, MAX_ROWS, MAX_TILES, RFLAGS_RESET, TileConfig

ISA_NAME = "x86_amx"
CFG_ADDR = 0x10000
A_ADDR, B_ADDR, C_ADDR = 0x20000, 0x30000, 0x40000
DATA_ADDR = 0x20000
OLD_ADDR = 0x60000
REGION = MAX_ROWS * BYTES_PER_ROW

_INT_TDP = re.compile(r"tdpb([su])([su])d")  # the SDM's names: A's signedness, then B's
_FLOAT_TDP = re.compile(r"tdp(bf16|fp16)ps")


# ---------------------------------------------------------------------------
# Entry points
# ---------------------------------------------------------------------------


def parse_instruction(instruction: str | None, code: bytes | None) -> Instruction:
    """Exactly one instruction, from text (assembled) or bytes (decoded), placed at CODE_BASE."""
    try:
        if code is not None:
            program = ISA.disassemble(code, base=CODE_BASE)
            what = f"the bytes {code.hex(' ')}"
        else:
            program = ISA.assemble(instruction, source="explain", base=CODE_BASE)
            what = f"'{instruction}'"
    except IsasimError as error:
        if error.source == "explain" and error.line == 1:
            error.line = None
        raise
    if len(program.instructions) != 1:
        texts = "; ".join(i.text for i in program.instructions[:3])
        raise ExplainError(f"explain takes one instruction; {what} hold {len(program.instructions)} ({texts})")
    return program.instructions[0]


def explain(instruction: str | None, code: bytes | None, options: ExplainOptions) -> Explanation:
    ins = parse_instruction(instruction, code)
    form = ins.form
    if isinstance(form, amx.AmxForm):
        return _explain_amx(ins, form, options)
    return _explain_scalar(ins, form, options)


# The example each reference page explains (teaching content, not semantics).
_AMX_EXAMPLES = {
    "ldtilecfg": "ldtilecfg [rcx]",
    "sttilecfg": "sttilecfg [rdx]",
    "tilerelease": "tilerelease",
    "tilezero": "tilezero tmm0",
    "tileloadd": "tileloadd tmm1, [rdi+r8*1+0x40]",
    "tileloaddt1": "tileloaddt1 tmm1, [rdi+r8*1]",
    "tilestored": "tilestored [rdx+r8*1], tmm0",
}
_SCALAR_EXAMPLES = {
    "mov": "mov rax, QWORD PTR [rdi+rcx*8+0x10]", "movabs": "movabs rax, 0x123456789abcdef0",
    "lea": "lea rax, [rdi+rcx*4+0x40]", "add": "add rax, rbx", "sub": "sub rcx, 0x40", "cmp": "cmp rcx, rdx",
    "inc": "inc r8", "dec": "dec ecx", "xor": "xor eax, eax", "test": "test rcx, rcx", "imul": "imul rax, rbx",
    "jmp": "jmp 0x400010", "nop": "nop", "ret": "ret",
}


def reference_pages() -> list[ReferencePage]:
    pages = []
    for form in amx.FORMS:
        example = _AMX_EXAMPLES.get(form.mnemonic, f"{form.mnemonic} tmm0, tmm1, tmm2")
        pages.append(ReferencePage(form.mnemonic, form.feature, example, form.syntax, form.summary))
    for form in scalar.FORMS:
        example = _SCALAR_EXAMPLES.get(form.mnemonic)
        if example is None and form.mnemonic.startswith("j"):
            example = f"{form.mnemonic} 0x400010"
        pages.append(ReferencePage(form.mnemonic, "scalar x86-64 subset", example, form.syntax, form.summary))
    return pages


def default_cpu(feature: str, requested: str | None) -> str:
    if requested:
        return requested
    if feature in CPU_MODELS[DEFAULT_CPU].features or feature == scalar.FEATURE:
        return DEFAULT_CPU
    return next((name for name, model in CPU_MODELS.items() if feature in model.features), DEFAULT_CPU)


# ---------------------------------------------------------------------------
# Running the example on the machine
# ---------------------------------------------------------------------------


@dataclass
class Run:
    machine: Machine
    listing: list[str]
    record: StepRecord | None = None  # the explained instruction's step
    setup_fault: object = None
    before: dict = field(default_factory=dict)
    reads: list[tuple[int, int]] = field(default_factory=list)
    writes: list[tuple[int, bytes]] = field(default_factory=list)

    @property
    def fault(self):
        return self.setup_fault or (self.record.fault if self.record else None)


@contextlib.contextmanager
def _watch_memory(memory, reads: list, writes: list):
    """Note every memory access the machine makes during one step (addresses as the machine computed them)."""
    originals = {}

    def wrap(name, log):
        original = getattr(memory, name, None)
        if original is None:
            return
        originals[name] = original

        def watched(*args, **kwargs):
            log(*args)
            return original(*args, **kwargs)

        setattr(memory, name, watched)

    wrap("read", lambda address, size: reads.append((address, size)))
    wrap("write", lambda address, data: writes.append((address, bytes(data))))
    wrap("read_rows", lambda first, stride, count, size: reads.extend(
        ((first + r * stride) % (1 << 64), size) for r in range(count)))
    wrap("write_rows", lambda first, stride, rows: writes.extend(
        ((first + r * stride) % (1 << 64), bytes(row)) for r, row in enumerate(rows)))
    try:
        yield
    finally:
        for name in originals:
            delattr(memory, name)  # the instance attribute goes; the class method is back


def run_example(ins: Instruction, setup: list[str], *, cpu: str, regs: dict, memory: list, max_steps: int,
                before_step=None) -> Run:
    """Assemble ``setup`` followed by the instruction's own bytes, run the setup, then step the instruction."""
    lines = list(setup) + [".byte " + ",".join(f"0x{b:02x}" for b in ins.encoding)]
    machine = Machine(ISA_NAME, {"cpu": cpu})
    program = machine.assemble("\n".join(lines), source="explain-setup", base=CODE_BASE)
    target = program.instructions[-1]
    listing = [f"{i.address:#x}:  {i.encoding.hex(' '):<24} {i.text}" for i in program.instructions]
    machine.load(program, regs=regs, memory=memory)
    run = Run(machine, listing)
    while machine.state.pc != target.address:
        if machine.steps >= max_steps:
            raise ExplainError(f"the setup did not reach the instruction within {max_steps} steps")
        record = machine.step()
        if record.fault is not None:
            run.setup_fault = record.fault
            return run
    if before_step is not None:
        before_step(machine)
    state = machine.state
    run.before = {"tiles": state.tiles.copy(), "tilecfg": state.tilecfg.copy(),
                  "regs": {name: state.read_register(name) for name in state.register_names()}}
    with _watch_memory(machine.memory, run.reads, run.writes):
        run.record = machine.step()
    return run


def _fault_section(run: Run) -> list:
    fault = run.fault
    if run.setup_fault is not None:
        return [Paragraph(f"The setup did not reach the instruction: {fault.describe()}")]
    return [Paragraph("The machine raised a fault, so nothing after it was written:"),
            Table(["fault", "rule"], [[Cell(fault.kind, "bad"), fault.rule]])]


def _setup_block(run: Run, note: str = "") -> list:
    blocks = [Paragraph("The example program, run on the simulator up to the instruction, which is then stepped"
                        + (f" ({note})" if note else "") + ":"),
              Code("\n".join(run.listing))]
    return blocks


def _load_init(options: ExplainOptions):
    """The init file and its named regions, by role: "a", "b" (also "packed B"), "c", "tilecfg"."""
    init = options.init
    views = {}
    for v in (init.views if init is not None else []):
        key = re.sub(r"\s+", " ", v.name.lower().replace("packed", "")).strip()
        views.setdefault(key, v)
    return init, views


def _free_address(memory: list, size: int, preferred: int) -> int:
    """``preferred`` if [preferred, preferred+size) is free of the given regions, else past all of them."""
    def overlaps(start):
        return any(start < a + len(d) and a < start + size for a, d, _w in memory)
    if not overlaps(preferred):
        return preferred
    end = max(a + len(d) for a, d, _w in memory)
    return (end + 0xFFFF) & ~0xFFFF


def _region_covering(memory: list, address: int) -> bool:
    return any(a <= address < a + len(d) for a, d, _w in memory)


# ---------------------------------------------------------------------------
# Text helpers
# ---------------------------------------------------------------------------


def fp32_text(bits: int) -> str:
    value = np.uint32(bits).view(np.float32)
    if np.isnan(value):
        return f"nan ({bits:#010x})"
    return f"{value!s} ({bits:#010x})" if bits & 0x7FFFFFFF else (("-0" if bits >> 31 else "0") + f" ({bits:#010x})")


def half_text(bits: int, kind: str) -> str:
    value = numerics.bf16_bits_to_float(bits) if kind == "bf16" else numerics.fp16_bits_to_float(bits)
    if value != value:
        return "nan"
    if value == 0:
        return "-0" if bits >> 15 else "0"
    return repr(float(value)).removesuffix(".0") if abs(value) < 1e6 else f"{value:g}"


def short_fp32(bits: int) -> str:
    value = np.uint32(bits).view(np.float32)
    if np.isnan(value):
        return "nan"
    text = f"{value!s}"
    return text.removesuffix(".0")


def signed32(x: int) -> int:
    x &= 0xFFFFFFFF
    return x - (1 << 32) if x >> 31 else x


def _hex_bytes(data: bytes, limit: int = 16) -> str:
    text = data[:limit].hex(" ")
    return text + (f" … ({len(data)} bytes)" if len(data) > limit else "")


# ---------------------------------------------------------------------------
# AMX: encoding, operands, faults
# ---------------------------------------------------------------------------


def _operand_params(form: amx.AmxForm) -> list[str]:
    """The semantics function's names for the operands (tsrcdest, tsrc1, sibmem, ...)."""
    return [p for p in inspect.signature(form.semantics).parameters if p != "cpu"]


def _tmul_roles(form: amx.AmxForm) -> dict[str, str]:
    """C, A and B of a TMUL form, by the SDM operand names (tmm1 = C, tmm2 = A, tmm3 = B, as its docstring says)."""
    roles = {}
    for name in form.operand_names:
        m = re.search(rf"{name} \(([ABC])\)", form.doc)
        if m:
            roles[name] = m.group(1)
    return roles


def amx_encoding(ins: Instruction, form: amx.AmxForm) -> Encoding:
    code = ins.encoding
    op = form.opcode
    parts: list[EncodedPart] = []
    pos = 0
    while code[pos] != 0xC4:
        parts.append(EncodedPart(pos, code[pos:pos + 1], "prefix", [BitField(
            "prefix", f"{code[pos]:08b}", "a legacy or REX prefix before VEX makes the instruction #UD", ok=False)]))
        pos += 1
    parts.append(EncodedPart(pos, code[pos:pos + 1], "VEX", [BitField("C4", "11000100", "three-byte VEX escape")]))
    b1, b2 = code[pos + 1], code[pos + 2]
    vex = VexFields.parse(b1, b2)
    names = dict(zip(form.operand_fields, form.operand_names))
    kinds = dict(zip(form.operand_fields, form.operand_kinds))
    roles = _tmul_roles(form)

    def tile_text(where: str) -> str:
        name = names[where]
        role = f", {roles[name]}" if name in roles else ""
        return f"operand {name}{role}"

    register_form = op.modrm.register_form
    rm_tile = kinds.get("ModRM:r/m") == "tmm"
    reg_tile = kinds.get("ModRM:reg") == "tmm"
    r_field = BitField("R̄", f"{(b1 >> 7) & 1}", f"R = {vex.R}: bit 3 of ModRM.reg" + (
        " (tmm8-15 do not exist)" if reg_tile else ""), ok=(vex.R == 0) if reg_tile else None)
    x_field = BitField("X̄", f"{(b1 >> 6) & 1}", f"X = {vex.X}: bit 3 of the SIB index" + (
        "" if not register_form else " (unused: no memory operand)"))
    b_field = BitField("B̄", f"{(b1 >> 5) & 1}", f"B = {vex.B}: bit 3 of " + (
        "ModRM.r/m (tmm8-15 do not exist)" if rm_tile else "the base register"), ok=(vex.B == 0) if rm_tile else None)
    map_field = BitField("m-mmmm", f"{b1 & 0x1F:05b}", f"opcode map {MAP_NAMES.get(vex.map, '?')}",
                         ok=vex.map == op.map)
    parts.append(EncodedPart(pos + 1, code[pos + 1:pos + 2], "VEX byte 1", [r_field, x_field, b_field, map_field]))
    if "VEX.vvvv" in names:
        v_meaning, v_ok = f"vvvv = {vex.vvvv:04b}: tmm{vex.vvvv}, {tile_text('VEX.vvvv')}", vex.vvvv < 8
    else:
        v_meaning, v_ok = "no operand here: must be 1111", vex.vvvv == 0
    parts.append(EncodedPart(pos + 2, code[pos + 2:pos + 3], "VEX byte 2", [
        BitField("W", f"{vex.W}", f"W{vex.W} (the form is W{op.W})", ok=vex.W == op.W),
        BitField("v̄v̄v̄v̄", f"{(b2 >> 3) & 0xF:04b}", v_meaning + " (stored inverted)", ok=v_ok),
        BitField("L", f"{vex.L}", f"vector length {'128' if vex.L == 0 else '256'} (the form is L{op.L})",
                 ok=vex.L == op.L),
        BitField("pp", f"{vex.pp:02b}", f"implied prefix {PP_NAMES[vex.pp]}", ok=vex.pp == op.pp),
    ]))
    parts.append(EncodedPart(pos + 3, code[pos + 3:pos + 4], "opcode",
                             [BitField("opcode", f"{code[pos + 3]:08b}", f"{code[pos + 3]:02X}",
                                       ok=code[pos + 3] == op.opcode)]))
    pos += 4
    if pos >= len(code):
        return Encoding(parts, "Encoding")
    modrm = code[pos]
    mod, reg, rm = modrm >> 6, (modrm >> 3) & 7, modrm & 7
    decoded = decode_modrm(code, pos, vex.X, vex.B)
    if mod == 3:
        mod_meaning = "11: register operands"
    else:
        mod_meaning = {0: "00: memory, no displacement", 1: "01: memory + disp8", 2: "10: memory + disp32"}[mod]
        if mod == 0 and decoded is not None and decoded.has_sib and (code[pos + 1] & 7) == 5:
            mod_meaning = "00: memory, no base: disp32"
    fields = [BitField("mod", f"{mod:02b}", mod_meaning + f" (the form needs {op.modrm.text.split(':')[0]})",
                       ok=(mod == 3) == register_form)]
    if op.modrm.reg is not None:
        fields.append(BitField("reg", f"{reg:03b}", f"opcode extension /{op.modrm.reg}", ok=reg == op.modrm.reg))
    elif reg_tile:
        fields.append(BitField("reg", f"{reg:03b}", f"tmm{reg | vex.R << 3}: {tile_text('ModRM:reg')}",
                               role="field1"))
    else:
        fields.append(BitField("reg", f"{reg:03b}", "ModRM.reg"))
    if op.modrm.rm is not None and register_form:
        fields.append(BitField("r/m", f"{rm:03b}", f"must be {op.modrm.rm:03b}", ok=rm == op.modrm.rm))
    elif rm_tile:
        fields.append(BitField("r/m", f"{rm:03b}", f"tmm{rm | vex.B << 3}: {tile_text('ModRM:r/m')}"))
    elif mod != 3 and rm == 4:
        need = " (sibmem needs one)" if kinds.get("ModRM:r/m") == "sibmem" else ""
        fields.append(BitField("r/m", f"{rm:03b}", "100: a SIB byte follows" + need, ok=True if need else None))
    elif mod != 3:
        base = GPR64[rm | vex.B << 3] if not (mod == 0 and rm == 5) else "rip"
        bad = kinds.get("ModRM:r/m") == "sibmem"
        fields.append(BitField("r/m", f"{rm:03b}", f"base register {base}" + (": sibmem needs a SIB byte (100)"
                                                                              if bad else ""), ok=False if bad else None))
    else:
        fields.append(BitField("r/m", f"{rm:03b}", "ModRM.r/m"))
    parts.append(EncodedPart(pos, code[pos:pos + 1], "ModRM", fields))
    pos += 1
    if mod != 3 and rm == 4 and pos < len(code):
        sib = code[pos]
        scale, index, base = sib >> 6, (sib >> 3) & 7, sib & 7
        index_no = index | vex.X << 3
        index_meaning = (f"index {GPR64[index_no]} (the row stride register)" if index_no != 4
                         else "100: no index (riz): stride 0")
        if mod == 0 and base == 5:
            base_meaning = "101 with mod 00: no base, disp32"
        else:
            base_meaning = f"base {GPR64[base | vex.B << 3]}"
        parts.append(EncodedPart(pos, code[pos:pos + 1], "SIB", [
            BitField("scale", f"{scale:02b}", f"× {1 << scale}"),
            BitField("index", f"{index:03b}", index_meaning),
            BitField("base", f"{base:03b}", base_meaning),
        ]))
        pos += 1
    if pos < len(code):
        disp = code[pos:]
        value = int.from_bytes(disp, "little", signed=True)
        parts.append(EncodedPart(pos, disp, f"disp{8 * len(disp)}", [BitField(
            f"disp{8 * len(disp)}", "", f"displacement {value:#x} ({value}), little-endian, sign-extended")]))
    return Encoding(parts, "Encoding")


def amx_operands(ins: Instruction, form: amx.AmxForm) -> Table:
    params = _operand_params(form)
    roles = _tmul_roles(form)
    rows = []
    for i, (name, enc) in enumerate(zip(form.operand_names, form.operand_encoding)):
        where, _, access = enc.partition(" (")
        value = str(ins.operands[i]) if i < len(ins.operands) else "?"
        param = params[i] if i < len(params) else ""
        role = roles.get(name, "")
        role_cell = Cell(role, {"A": "a", "B": "b", "C": "c"}.get(role)) if role else ""
        rows.append([name, param, where, access.rstrip(")"), Cell(value, {"A": "a", "B": "b", "C": "c"}.get(role)),
                     role_cell])
    return Table(["operand", "in the pseudocode", "encoded in", "access", "here", "role"], rows)


def amx_faults(form: amx.AmxForm) -> Table:
    op = form.opcode
    lacking = [name for name, model in CPU_MODELS.items() if form.feature not in model.features]
    rows = []
    if lacking:
        rows.append(["#UD", f"the CPU lacks {form.feature} (here: {', '.join(lacking)})"])
    else:
        rows.append(["#UD", f"the CPU lacks {form.feature} (every modelled CPU has it)"])
    rows += [[kind, rule] for kind, rule in form.faults]
    encoding_rules = [f"VEX.L is not {op.L}", f"VEX.W is not {op.W}"]
    if form.field_of("VEX.vvvv") is None:
        encoding_rules.append("VEX.vvvv is not 1111")
    if op.modrm.register_form:
        encoding_rules.append("ModRM.mod is not 11")
    else:
        encoding_rules.append("ModRM.mod is 11 (a memory operand is required)")
    if op.modrm.reg is not None:
        encoding_rules.append(f"ModRM.reg is not {op.modrm.reg:03b}")
    if op.modrm.rm is not None and op.modrm.register_form:
        encoding_rules.append(f"ModRM.r/m is not {op.modrm.rm:03b}")
    if "sibmem" in form.operand_kinds:
        encoding_rules.append("there is no SIB byte (ModRM.r/m != 100)")
    if "tmm" in form.operand_kinds:
        encoding_rules.append("a tile number is 8-15 (VEX.R, VEX.B or vvvv bit 3 set)")
    encoding_rules.append("a 66/F2/F3/LOCK/REX prefix precedes VEX")
    rows.append(["#UD", "encoding: " + "; ".join(encoding_rules)])
    return Table(["fault", "when"], [[Cell(k, "bad"), r] for k, r in rows])


def _facts(ins: Instruction, form, cpu: str) -> list[tuple[str, str]]:
    facts = [("instruction", ins.text), ("bytes", ins.encoding.hex(" "))]
    if isinstance(form, amx.AmxForm):
        having = [name for name, model in CPU_MODELS.items() if form.feature in model.features]
        facts += [("SDM opcode", form.opcode.text), ("CPUID feature", f"{form.feature} ({', '.join(having)})")]
    facts.append(("example CPU", cpu))
    if ins.undefined:
        facts.append(("undefined", f"these bytes are #UD: {ins.undefined}"))
    return facts


def _command(ins: Instruction, options: ExplainOptions) -> str:
    words = [f'isasim explain "{ins.text}"']
    m, n = options.element
    if m is not None:
        words.append(f"--m {m}")
    if n is not None:
        words.append(f"--n {n}")
    if options.shape:
        words.append("--shape " + ",".join(map(str, options.shape)))
    if options.seed != 1:
        words.append(f"--seed {options.seed}")
    if options.cpu:
        words.append(f"--cpu {options.cpu}")
    if options.start_row:
        words.append(f"--start-row {options.start_row}")
    if options.init_source:
        words.append(f"--init {options.init_source}")
    return " ".join(words)


def _explain_amx(ins: Instruction, form: amx.AmxForm, options: ExplainOptions) -> Explanation:
    cpu = default_cpu(form.feature, options.cpu)
    encoding = amx_encoding(ins, form)
    expl = Explanation(ISA_NAME, form.syntax, ins.text, ins.encoding, form.summary, _facts(ins, form, cpu))
    expl.command = _command(ins, options)
    expl.sections.append(Section("Encoding", [Paragraph(f"SDM opcode column: {form.opcode.text}"), encoding]))
    expl.sections.append(Section("Operands", [amx_operands(ins, form)]))
    expl.sections.append(Section("Operation (the semantics the simulator executes)", [Code(form.doc)]))
    expl.sections.append(Section("Faults", [amx_faults(form)]))
    mnemonic = form.mnemonic
    if _INT_TDP.fullmatch(mnemonic) or _FLOAT_TDP.fullmatch(mnemonic):
        blocks, figure = _tdp_example(ins, form, options, cpu, encoding)
    elif mnemonic in ("tileloadd", "tileloaddt1", "tilestored"):
        blocks, figure = _tile_memory_example(ins, form, options, cpu, encoding, store=mnemonic == "tilestored")
    elif mnemonic in ("ldtilecfg", "sttilecfg"):
        blocks, figure = _tilecfg_example(ins, form, options, cpu, encoding)
    else:  # tilezero, tilerelease
        blocks, figure = _zero_example(ins, form, options, cpu, encoding)
    expl.sections.append(Section("Worked example", blocks))
    expl.figure = figure
    return expl


# ---------------------------------------------------------------------------
# The tile configuration
# ---------------------------------------------------------------------------


def tilecfg_layout() -> list[str]:
    """The name of each of the 64 TILECFG bytes, found by letting ``TileConfig.from_bytes`` (what
    LDTILECFG loads with) read images with one byte set."""
    zero = TileConfig.from_bytes(bytes(64))
    names = []
    for offset in range(64):
        image = bytearray(64)
        image[offset] = 1
        cfg = TileConfig.from_bytes(bytes(image))
        name = "reserved"
        for attr in ("palette", "start_row"):
            if getattr(cfg, attr) != getattr(zero, attr):
                name = attr
        for attr in ("colsb", "rows"):
            for t in range(MAX_TILES):
                if getattr(cfg, attr)[t] != getattr(zero, attr)[t]:
                    name = f"{attr}[{t}]"
        names.append(name)
    return names


def _field_role(name: str) -> str | None:
    if name == "palette":
        return "a"
    if name == "start_row":
        return "result"
    m = re.fullmatch(r"(colsb|rows)\[(\d)\]", name)
    return f"k{m.group(2)}" if m else "dim"


def tilecfg_image(shapes: dict[int, tuple[int, int]], *, palette: int = 1, start_row: int = 0) -> bytes:
    """A configuration image through TileConfig.to_bytes (STTILECFG's layout, the same as LDTILECFG's)."""
    cfg = TileConfig(palette=palette, start_row=start_row)
    for t, (rows, colsb) in shapes.items():
        cfg.rows[t], cfg.colsb[t] = rows, colsb
    return cfg.to_bytes()


def tilecfg_grid(image: bytes, title: str, caption: str = "") -> Grid:
    names = tilecfg_layout()
    cells = [[Cell(f"{image[16 * r + c]:02x}", _field_role(names[16 * r + c]), f"byte {16 * r + c}: {names[16 * r + c]}")
              for c in range(16)] for r in range(4)]
    return Grid(title, cells, [f"+{16 * r}" for r in range(4)], [f"{c}" for c in range(16)], group=2, caption=caption)


def tilecfg_fields_table(image: bytes, cfg_after: TileConfig | None) -> Table:
    """The bytes of a configuration image grouped by field, with the value the machine holds after."""
    names = tilecfg_layout()
    rows = []
    offset = 0
    while offset < 64:
        end = offset
        while end + 1 < 64 and names[end + 1] == names[offset]:
            end += 1
        name = names[offset]
        data = image[offset:end + 1]
        value = int.from_bytes(data, "little")
        if cfg_after is None or name == "reserved":
            after = "" if name != "reserved" else ("must be 0" if not any(data) else "NOT 0")
        else:
            m = re.fullmatch(r"(colsb|rows)\[(\d)\]", name)
            held = getattr(cfg_after, m.group(1))[int(m.group(2))] if m else getattr(cfg_after, name)
            after = str(held)
        if name == "reserved" and not any(data) and rows and rows[-1][2].text == "reserved":
            pass
        span = f"{offset}" if end == offset else f"{offset}-{end}"
        rows.append([span, _hex_bytes(data), Cell(name, _field_role(name)), str(value), after])
        offset = end + 1
    return Table(["bytes", "hex", "field", "value", "TILECFG after (machine)"], rows)


def _cfg_text(cfg: TileConfig) -> str:
    if not cfg.configured:
        return "palette=0 (INIT: not configured)"
    tiles = " ".join(f"tmm{t}={cfg.rows[t]}x{cfg.colsb[t]}" for t in range(MAX_TILES) if cfg.rows[t] or cfg.colsb[t])
    return f"palette={cfg.palette} start_row={cfg.start_row} {tiles}".strip()


def _place(mem: Mem, address: int, avoid: set[str]) -> tuple[dict, int]:
    """Register values that make ``mem`` address ``address`` (index := 0); returns (regs, the address).
    With no base register the operand's own displacement is the address."""
    regs = {}
    if mem.index and mem.index != "riz":
        regs[mem.index] = 0
    if mem.base:
        regs[mem.base] = (address - mem.disp) % (1 << 64)
        return regs, address
    return regs, mem.disp % (1 << 64)


def _scratch(avoid: set[str], count: int) -> list[str]:
    pool = ["rcx", "rdi", "rsi", "rdx", "r8", "r9", "r10", "r11", "r12", "r13", "r14", "r15", "rax", "rbx", "rbp"]
    free = [r for r in pool if r not in avoid]
    return free[:count]


def _mem_registers(ins: Instruction) -> set[str]:
    used = set()
    for o in ins.operands:
        if isinstance(o, Mem):
            used |= {r for r in (o.base, o.index) if r and r != "riz"}
    return used


def _default_shapes(options: ExplainOptions) -> dict[int, tuple[int, int]]:
    M, K, N = (options.shape + (4, 4, 4))[:3] if options.shape else (4, 4, 4)
    return {0: (M, 4 * N), 1: (M, 4 * K), 2: (K, 4 * N)}


def _tilecfg_example(ins, form, options, cpu, encoding):
    init, views = _load_init(options)
    (mem,) = ins.operands or (None,)
    if mem is None:
        return [Paragraph("These bytes do not decode to an operand, so there is nothing to run.")], None
    memory = list(init.memory) if init else []
    regs = dict(init.regs) if init else {}
    if "tilecfg" in views:
        image = bytes(options.init.memory[[a for a, _d, _w in memory].index(views["tilecfg"].address)][1][:64])
        source = f"the tilecfg region of {options.init_source}"
    else:
        image = tilecfg_image(_default_shapes(options), start_row=options.start_row or 0)
        source = "tmm0 = C, tmm1 = A, tmm2 = B of a TDP example"
    store = form.mnemonic == "sttilecfg"
    avoid = _mem_registers(ins)
    if store:
        cfg_at = _free_address(memory, 64, CFG_ADDR)
        cfg_reg = _scratch(avoid, 1)[0]
        memory.append((cfg_at, image, True))
        place_regs, dest = _place(mem, _free_address(memory, 64, DATA_ADDR), avoid)
        regs.update(place_regs)
        if not _region_covering(memory, dest):
            memory.append((dest, bytes(64), True))
        regs[cfg_reg] = cfg_at
        setup = [f"ldtilecfg [{cfg_reg}]"]
    else:
        place_regs, cfg_at = _place(mem, _free_address(memory, 64, CFG_ADDR), avoid)
        regs.update(place_regs)
        if not _region_covering(memory, cfg_at):
            memory.append((cfg_at, image, True))
        setup = []
    run = run_example(ins, setup, cpu=cpu, regs=regs, memory=memory, max_steps=options.max_steps)
    blocks = _setup_block(run, f"the configuration: {source}")
    if run.fault:
        blocks += _fault_section(run)
        if not store:
            blocks.append(tilecfg_fields_table(image, None))
        return blocks, _figure(ins, encoding, [[tilecfg_grid(image, "the 64 bytes at m512")]], [])
    after = run.machine.state.tilecfg
    if store:
        stored = b"".join(d for _a, d in run.writes)
        where = run.writes[0][0] if run.writes else None
        blocks.append(Paragraph(f"STTILECFG wrote {len(stored)} bytes at {where:#x}" if where is not None
                                else "STTILECFG wrote nothing"))
        blocks.append(tilecfg_fields_table(stored, after))
        blocks.append(Check("the stored image", stored.hex(), after.to_bytes().hex()))
        grid = tilecfg_grid(stored, "the 64 bytes STTILECFG stored", caption=_cfg_text(after))
    else:
        blocks.append(Paragraph(f"LDTILECFG read {sum(s for _a, s in run.reads)} bytes at "
                                f"{run.reads[0][0]:#x}; the layout below is what TileConfig.from_bytes reads:"))
        blocks.append(tilecfg_fields_table(image, after))
        blocks.append(Check("TILECFG", _cfg_text(TileConfig.from_bytes(image)), _cfg_text(after)))
        zeroed = sorted({w.where.split("[")[0] for w in run.record.writes if w.kind == "tile"})
        blocks.append(Paragraph("All tile data is zeroed" + (f" (rows changed in {', '.join(zeroed)})" if zeroed
                                                              else " (it was already zero)") + "."))
        grid = tilecfg_grid(image, "the 64 bytes at m512", caption=_cfg_text(after))
    legend = [("a", "palette (byte 0)"), ("result", "start_row (byte 1)")]
    legend += [(f"k{t}", f"tmm{t}: colsb[{t}] at bytes {16 + 2 * t}-{17 + 2 * t}, rows[{t}] at byte {48 + t}")
               for t in range(MAX_TILES)]
    legend.append(("dim", "reserved: must be 0 (else #GP)"))
    return blocks, _figure(ins, encoding, [[grid]], [], legend=legend)


# ---------------------------------------------------------------------------
# TILELOADD / TILELOADDT1 / TILESTORED
# ---------------------------------------------------------------------------


def _tile_memory_example(ins, form, options, cpu, encoding, *, store: bool):
    init, views = _load_init(options)
    operands = ins.operands
    if len(operands) != 2:
        return [Paragraph("These bytes do not decode to operands, so there is nothing to run.")], None
    mem = next(o for o in operands if isinstance(o, Mem))
    tile = tile_number(next(o for o in operands if isinstance(o, Reg)).name)
    rows, colsb = (options.shape + (4, 16))[:2] if options.shape else (4, 16)
    start_row = options.start_row or 0
    rng = np.random.default_rng(options.seed)
    memory = list(init.memory) if init else []
    regs = dict(init.regs) if init else {}
    avoid = _mem_registers(ins) | set(regs)
    cfg_reg, src_reg, stride_reg, old_reg = _scratch(avoid, 4)
    if "tilecfg" in views:
        cfg_at = views["tilecfg"].address
    else:
        cfg_at = _free_address(memory, 64, CFG_ADDR)
        if tile < MAX_TILES:
            memory.append((cfg_at, tilecfg_image({tile: (rows, colsb)}), True))
    regs[cfg_reg] = cfg_at
    # the operand's registers: base at the data, index = the row stride
    stride_wanted = 64
    if mem.index and mem.index != "riz" and mem.index not in regs:
        regs[mem.index] = max(1, stride_wanted // mem.scale)
    if mem.base and mem.base not in regs:
        regs[mem.base] = DATA_ADDR if mem.base != mem.index else regs[mem.index]
    base = (regs.get(mem.base, 0) if mem.base else 0) + mem.disp
    stride = regs[mem.index] * mem.scale if mem.index and mem.index != "riz" else 0
    addresses = [(base + r * stride) % (1 << 64) for r in range(rows)]
    if init is None or not all(_region_covering(memory, a) for a in addresses):
        low = min(addresses) & ~63
        high = (max(addresses) + colsb + 63) & ~63
        if not any(low < a + len(d) and a < high for a, d, _w in memory):
            data = bytes(high - low) if store else rng.integers(0, 256, high - low, dtype=np.uint8).tobytes()
            memory.append((low, data, True))
    setup = [f"ldtilecfg [{cfg_reg}]"]
    note = ""
    if store:
        src_at = _free_address(memory, REGION, OLD_ADDR)
        memory.append((src_at, rng.integers(0, 256, REGION, dtype=np.uint8).tobytes(), True))
        regs[src_reg], regs[stride_reg] = src_at, 64
        setup.append(f"tileloadd tmm{tile}, [{src_reg}+{stride_reg}*1]")
    elif start_row:
        old_at = _free_address(memory, REGION, OLD_ADDR)
        memory.append((old_at, bytes([0xEE]) * REGION, True))
        regs[old_reg], regs[stride_reg] = old_at, 64
        setup.append(f"tileloadd tmm{tile}, [{old_reg}+{stride_reg}*1]")
    if start_row:
        note = (f"then start_row := {start_row}, as an earlier {form.mnemonic.upper()} interrupted by a #PF at row "
                f"{start_row} leaves it (and XRSTOR restores it)")

        def before_step(machine):
            machine.state.set_start_row(start_row)
    else:
        before_step = None
    run = run_example(ins, setup, cpu=cpu, regs=regs, memory=memory, max_steps=options.max_steps,
                      before_step=before_step)
    blocks = _setup_block(run, note)
    reg_rows = [[name, f"{value:#x}"] for name, value in sorted(regs.items()) if name in (mem.base, mem.index)]
    address_rule = (f"row r is at {mem.base or '0'} + {mem.disp:#x} + r × ({mem.index} × {mem.scale})"
                    if mem.index and mem.index != "riz" else f"row r is at {mem.base or '0'} + {mem.disp:#x} + r × 0")
    blocks.append(Paragraph(f"Addressing: {address_rule}; start_row = {start_row}; "
                            f"tmm{tile} is configured as {rows} rows × {colsb} bytes."))
    if reg_rows:
        blocks.append(Table(["register", "value"], reg_rows))
    if run.fault:
        blocks += _fault_section(run)
        return blocks, _figure(ins, encoding, [], [])
    machine = run.machine
    accesses = run.writes if store else [(a, s) for a, s in run.reads]
    table_rows = []
    observed = []
    for r in range(rows):
        if r < start_row:
            kept = run.before["tiles"][tile, r, :colsb].tobytes()
            table_rows.append([str(r), "", "", Cell(f"kept (below start_row): {_hex_bytes(kept, 8)}", "kept")])
            continue
        k = r - start_row
        predicted = (base + r * stride) % (1 << 64)
        if k < len(accesses):
            address = accesses[k][0]
            observed.append(address)
            data = bytes(accesses[k][1]) if store else machine.state.tiles[tile, r, :colsb].tobytes()
        else:
            address, data = None, b""
        table_rows.append([str(r), f"{predicted:#x}", Cell(f"{address:#x}" if address is not None else "-", "addr"),
                           _hex_bytes(data, 8)])
    if not store and rows < MAX_ROWS:
        table_rows.append([f"{rows}-{MAX_ROWS - 1}", "", "", Cell("zeroed (beyond the configured rows)", "zeroed")])
    blocks.append(Table(["row", "base + disp + r × stride", "address the machine " + ("wrote" if store else "read"),
                         ("bytes stored" if store else "bytes loaded (then bytes colsb..63 zeroed)")], table_rows))
    predicted_all = [f"{(base + r * stride) % (1 << 64):#x}" for r in range(start_row, rows)]
    blocks.append(Check("row addresses", " ".join(predicted_all), " ".join(f"{a:#x}" for a in observed)))
    blocks.append(Paragraph(f"start_row after: {machine.state.tilecfg.start_row} (every tile instruction that "
                            "completes resets it)."))
    # the picture: memory rows -> tile rows
    tile_after = machine.state.tiles[tile]
    mem_rows = []
    for r in range(rows):
        address = (base + r * stride) % (1 << 64)
        try:
            data = machine.memory.read(address, colsb)
        except Exception:  # noqa: BLE001 - an unmapped row shows as blanks
            data = b""
        mem_rows.append([Cell(f"{b:02x}", "addr" if r >= start_row else "kept") for b in data] or
                        [Cell("") for _ in range(colsb)])
    mem_grid = Grid("memory rows", mem_rows, [f"{(base + r * stride) % (1 << 64):#x}" for r in range(rows)],
                    [str(c) for c in range(colsb)], group=4,
                    caption=f"row r at base+disp+r×stride, stride {stride}")
    tile_cells = [[Cell(f"{tile_after[r, c]:02x}" if not store else f"{run.before['tiles'][tile, r, c]:02x}",
                        ("kept" if r < start_row else "addr") if r < rows and c < colsb else "zeroed")
                   for c in range(BYTES_PER_ROW)] for r in range(MAX_ROWS)]
    tile_grid = Grid(f"tmm{tile} ({'before the store' if store else 'after'}, all 16 × 64 bytes)", tile_cells,
                     group=4, caption=f"configured: {rows} rows × {colsb} bytes")
    if store:
        panels = [[tile_grid, mem_grid]]
        arrows = [Arrow(tile_grid.title, (r, BYTES_PER_ROW - 1), mem_grid.title, (r, 0), "a", "", "right", "left")
                  for r in range(start_row, rows)]
    else:
        panels = [[mem_grid, tile_grid]]
        arrows = [Arrow(mem_grid.title, (r, colsb - 1), tile_grid.title, (r, 0), "a", "", "right", "left")
                  for r in range(start_row, rows)]
    blocks.append(mem_grid)
    legend = [("addr", "bytes moved by this instruction"), ("kept", "rows below start_row: untouched"),
              ("zeroed", "outside the configured shape" + (": zeroed" if not store else ""))]
    return blocks, _figure(ins, encoding, panels, arrows, legend=legend)


# ---------------------------------------------------------------------------
# TILEZERO / TILERELEASE
# ---------------------------------------------------------------------------


def _zero_example(ins, form, options, cpu, encoding):
    init, views = _load_init(options)
    release = form.mnemonic == "tilerelease"
    tile = tile_number(ins.operands[0].name) if ins.operands else 0
    rows, colsb = (options.shape + (4, 16))[:2] if options.shape else (4, 16)
    rng = np.random.default_rng(options.seed)
    memory = list(init.memory) if init else []
    regs = dict(init.regs) if init else {}
    cfg_reg, src_reg, stride_reg = _scratch(set(regs), 3)
    cfg_at = _free_address(memory, 64, CFG_ADDR)
    shapes = {tile: (rows, colsb)} if tile < MAX_TILES else {}
    memory.append((cfg_at, tilecfg_image(shapes), True))
    src_at = _free_address(memory, REGION, DATA_ADDR)
    memory.append((src_at, rng.integers(1, 256, REGION, dtype=np.uint8).tobytes(), True))
    regs.update({cfg_reg: cfg_at, src_reg: src_at, stride_reg: 64})
    setup = [f"ldtilecfg [{cfg_reg}]"]
    if tile < MAX_TILES:
        setup.append(f"tileloadd tmm{tile}, [{src_reg}+{stride_reg}*1]")
    run = run_example(ins, setup, cpu=cpu, regs=regs, memory=memory, max_steps=options.max_steps)
    blocks = _setup_block(run)
    if run.fault:
        return blocks + _fault_section(run), _figure(ins, encoding, [], [])
    state = run.machine.state
    changed = [w for w in run.record.writes if w.kind == "tile"]
    before_cells = [[Cell(f"{run.before['tiles'][tile, r, c]:02x}", "a" if r < rows and c < colsb else "zeroed")
                     for c in range(BYTES_PER_ROW)] for r in range(MAX_ROWS)]
    after_cells = [[Cell(f"{state.tiles[tile, r, c]:02x}", "changed" if any(w.where == f"tmm{tile}[{r}]"
                                                                          for w in changed) else "zeroed")
                    for c in range(BYTES_PER_ROW)] for r in range(MAX_ROWS)]
    before = Grid(f"tmm{tile} before", before_cells, group=4, caption=f"configured {rows} × {colsb} bytes")
    after = Grid(f"tmm{tile} after", after_cells, group=4, caption="every byte of all 16 rows × 64 bytes")
    blocks.append(Table(["write", "old", "new"], [[w.where, _hex_bytes(w.old, 8) if isinstance(w.old, bytes)
                                                  else str(w.old), _hex_bytes(w.new, 8) if isinstance(w.new, bytes)
                                                  else str(w.new)] for w in run.record.writes],
                        title="What the step wrote (the machine's journal)"))
    nonzero = int(np.count_nonzero(state.tiles))
    blocks.append(Check("non-zero tile bytes after" + ("" if release else f" in tmm{tile}"), "0",
                        str(nonzero if release else int(np.count_nonzero(state.tiles[tile])))))
    if release:
        blocks.append(Check("TILECFG after", _cfg_text(TileConfig()), _cfg_text(state.tilecfg)))
    panels = [[before, after]]
    legend = [("a", "the configured rows × colsb"), ("changed", "rows the step changed"),
              ("zeroed", "zero")]
    return blocks, _figure(ins, encoding, panels, [], legend=legend)


# ---------------------------------------------------------------------------
# TMUL: the worked element
# ---------------------------------------------------------------------------


def _tdp_kind(mnemonic: str):
    m = _INT_TDP.fullmatch(mnemonic)
    if m:
        return "int", (m.group(1) == "s", m.group(2) == "s")
    return _FLOAT_TDP.fullmatch(mnemonic).group(1), None


def _tdp_data(kind: str, signs, rng, rows: int, cols_bytes: int, role: str) -> bytes:
    """Generated example data: full-range bytes, or small floats with some mantissa bits."""
    if role == "C":
        if kind == "int":
            return rng.integers(-1000, 1000, rows * cols_bytes // 4, dtype=np.int32).tobytes()
        values = np.round(rng.uniform(-8, 8, rows * cols_bytes // 4), 3)
        return np.array([numerics.float_to_fp32_bits(float(v)) for v in values], dtype=np.uint32).tobytes()
    if kind == "int":
        return rng.integers(0, 256, rows * cols_bytes, dtype=np.uint8).tobytes()
    convert = numerics.float_to_bf16_bits if kind == "bf16" else numerics.float_to_fp16_bits
    values = np.round(rng.uniform(-2, 2, rows * cols_bytes // 2), 2)
    return np.array([convert(float(v)) for v in values], dtype=np.uint16).tobytes()


def _tdp_example(ins, form, options, cpu, encoding):
    kind, signs = _tdp_kind(form.mnemonic)
    init, views = _load_init(options)
    if len(ins.operands) != 3:
        return [Paragraph("These bytes do not decode to operands, so there is nothing to run.")], None
    tc, ta, tb = (tile_number(o.name) for o in ins.operands)
    rng = np.random.default_rng(options.seed)
    memory = list(init.memory) if init else []
    regs = dict(init.regs) if init else {}
    cfg_reg, a_reg, b_reg, c_reg, a_stride, b_stride, c_stride = _scratch(set(regs), 7)
    M, K, N = (options.shape + (4, 4, 4))[:3] if options.shape else (4, 4, 4)
    sources = {}
    if init is not None and ("a" in views or "b" in views):
        for role in ("A", "B", "C"):
            view = views.get(role.lower())
            if view is not None:
                size = {"int8": 1, "uint8": 1, "bf16": 2, "fp16": 2, "int32": 4, "uint32": 4, "fp32": 4,
                        "int16": 2, "uint16": 2}.get(view.element, 1)
                sources[role] = (view.address, view.shape[1] * size, view.shape)
        if "A" not in sources or "B" not in sources:
            raise ExplainError(f"{options.init_source}: the init file needs named regions 'A' and 'B' (and "
                               "optionally 'C' and 'tilecfg') to explain a TDP instruction")
        if "tilecfg" in views:
            cfg_at = views["tilecfg"].address
        else:
            (_, a_row, (a_rows, _)), (_, b_row, (b_rows, _)) = sources["A"], sources["B"]
            c_shape = (sources["C"][2][0], sources["C"][1]) if "C" in sources else (a_rows, b_row)
            cfg_at = _free_address(memory, 64, CFG_ADDR)
            memory.append((cfg_at, tilecfg_image({tc: (c_shape[0], min(c_shape[1], 64)),
                                                  ta: (a_rows, min(a_row, 64)), tb: (b_rows, min(b_row, 64))}), True))
        data_note = f"A, B{', C' if 'C' in sources else ''} from {options.init_source}"
    else:
        cfg_at = _free_address(memory, 64, CFG_ADDR)
        memory.append((cfg_at, tilecfg_image({tc: (M, 4 * N), ta: (M, 4 * K), tb: (K, 4 * N)}), True))
        for role, address, (rows, width) in (("C", C_ADDR, (M, 4 * N)), ("A", A_ADDR, (M, 4 * K)),
                                             ("B", B_ADDR, (K, 4 * N))):
            address = _free_address(memory, REGION, address)
            image = bytearray(REGION)
            for r in range(min(rows, MAX_ROWS)):
                row = _tdp_data(kind, signs, rng, 1, min(width, BYTES_PER_ROW), role)
                image[64 * r: 64 * r + len(row)] = row
            memory.append((address, bytes(image), True))
            sources[role] = (address, 64, (rows, width))
        data_note = f"A, B and C generated with --seed {options.seed}"
    regs[cfg_reg] = cfg_at
    setup = [f"ldtilecfg [{cfg_reg}]"]
    for role, tile, reg, sreg in (("C", tc, c_reg, c_stride), ("A", ta, a_reg, a_stride), ("B", tb, b_reg, b_stride)):
        if role in sources:
            regs[reg], regs[sreg] = sources[role][0], sources[role][1]
            setup.append(f"tileloadd tmm{tile}, [{reg}+{sreg}*1]")
        else:
            setup.append(f"tilezero tmm{tile}")
    run = run_example(ins, setup, cpu=cpu, regs=regs, memory=memory, max_steps=options.max_steps)
    blocks = _setup_block(run, data_note)
    cfg = run.before.get("tilecfg") or run.machine.state.tilecfg
    shape_rows = [[f"tmm{t}", role, str(cfg.rows[t]), str(cfg.colsb[t]), meaning]
                  for t, role, meaning in ((tc, "C", "M rows × N dwords"), (ta, "A", "M rows × K dwords"),
                                           (tb, "B", "K rows × N dwords"))]
    blocks.append(Table(["tile", "role", "rows", "colsb", "shape rule"], shape_rows,
                        title="Tile shapes (TILECFG as the machine holds it)"))
    if run.fault:
        return blocks + _fault_section(run), _figure(ins, encoding, [], [])
    M, K, N = cfg.rows[tc], cfg.colsb[ta] // 4, cfg.colsb[tc] // 4
    m, n = options.element
    m = min(1, M - 1) if m is None else m
    n = min(2, N - 1) if n is None else n
    if not 0 <= m < M:
        raise ExplainError(f"--m {m} is outside C's rows (M = {M}: 0..{M - 1})")
    if not 0 <= n < N:
        raise ExplainError(f"--n {n} is outside C's dword columns (N = {N}: 0..{N - 1})")
    tiles_before = run.before["tiles"]
    A = np.ascontiguousarray(tiles_before[ta, :M, :4 * K])
    B = np.ascontiguousarray(tiles_before[tb, :K, :4 * N])
    C0 = np.ascontiguousarray(tiles_before[tc, :M, :4 * N]).view(np.uint32)
    C1 = np.ascontiguousarray(run.machine.state.tiles[tc, :M, :4 * N]).view(np.uint32)
    machine_value = int(C1[m, n])
    blocks.append(Paragraph(f"The worked element: C[{m}][{n}] = tmm{tc}.dword[{n}] of row {m}, from A's row {m} "
                            f"(tmm{ta}) and dword {n} of each of B's {K} rows (tmm{tb}); M={M}, K={K}, N={N}."))
    if kind == "int":
        account, explained, figure = _int_element(ins, A, B, C0, C1, m, n, K, N, M, signs, tc, ta, tb, encoding)
        blocks += account
        blocks.append(Check(f"C[{m}][{n}] (int32)", str(explained), str(signed32(machine_value))))
    else:
        account, explained, figure = _float_element(ins, kind, A, B, C0, C1, m, n, K, N, M, tc, ta, tb, encoding)
        blocks += account
        blocks.append(Check(f"C[{m}][{n}] (fp32)", fp32_text(explained), fp32_text(machine_value)))
    blocks += [g for row in figure.rows for g in row if isinstance(g, Grid)]
    return blocks, figure


def _int_element(ins, A, B, C0, C1, m, n, K, N, M, signs, tc, ta, tb, encoding):
    a_signed, b_signed = signs
    a_vals = A.view(np.int8 if a_signed else np.uint8).astype(np.int64)
    b_vals = B.view(np.int8 if b_signed else np.uint8).astype(np.int64)
    ext_a, ext_b = ("sext" if a_signed else "zext"), ("sext" if b_signed else "zext")
    rows = []
    total = 0
    for k in range(K):
        a4 = [int(a_vals[m, 4 * k + i]) for i in range(4)]
        b4 = [int(b_vals[k, 4 * n + i]) for i in range(4)]
        products = [x * y for x, y in zip(a4, b4)]
        total += sum(products)
        rows.append([Cell(str(k), f"k{k}"), f"{4 * k}..{4 * k + 3}", " ".join(map(str, a4)),
                     f"B[{k}] {4 * n}..{4 * n + 3}", " ".join(map(str, b4)), " ".join(map(str, products)),
                     str(sum(products)), str(total)])
    c_before = signed32(int(C0[m, n]))
    wide = c_before + total
    explained = signed32(wide)
    table = Table(["k", f"A[{m}] bytes", f"{ext_a}(A)", "B bytes", f"{ext_b}(B)", "products", "dword sum",
                   "running Σ"], rows, title=f"C[{m}][{n}] += Σ over k, i of {ext_a}(A[{m}].byte[4k+i]) × "
                                           f"{ext_b}(B[k].byte[4·{n}+i])")
    wrap = "" if wide == explained else f"; wraps mod 2^32 to {explained}"
    account = [table, Paragraph(f"C[{m}][{n}] before = {c_before}; {c_before} + {total} = {wide}{wrap}.")]
    a_kind, b_kind = ("int8" if a_signed else "uint8"), ("int8" if b_signed else "uint8")
    figure = _tdp_figure(ins, encoding, A.view(np.int8 if a_signed else np.uint8),
                         B.view(np.int8 if b_signed else np.uint8), [[str(signed32(int(v))) for v in row] for row in C1],
                         m, n, K, N, M, tc, ta, tb, 1, a_kind, b_kind, "int32",
                         f"C[{m}][{n}] = {explained}")
    return account, explained, figure


def _float_element(ins, kind, A, B, C0, C1, m, n, K, N, M, tc, ta, tb, encoding):
    widen = numerics.bf16_to_fp32 if kind == "bf16" else numerics.fp16_to_fp32
    a_h = A.view(np.uint16)  # M x 2K halves
    b_h = B.view(np.uint16)  # K x 2N halves
    lanes = {"E": 0, "O": 0}  # +0.0
    rows = []
    for k in range(K):
        for lane, offset in (("E", 0), ("O", 1)):
            a_bits = int(a_h[m, 2 * k + offset])
            b_bits = int(b_h[k, 2 * n + offset])
            notes: list[str] = []
            before = lanes[lane]
            after = tmul_numerics.tmul_fma32_reference(before, int(widen(a_bits)), int(widen(b_bits)), notes)
            lanes[lane] = after
            rows.append([Cell(str(k), f"k{k}"), Cell(lane, "even" if lane == "E" else "odd"),
                         f"{2 * k + offset} / {2 * n + offset}", half_text(a_bits, kind), half_text(b_bits, kind),
                         short_fp32(before), "\n".join(notes), fp32_text(after)])
    table = Table(["k", "lane", "i / j", f"a = A[{m}].{kind}[i]", f"b = B[k].{kind}[j]", "lane before",
                   "FMA32(lane, a, b): account (numerics reference)", "lane after"],
                  rows, title="E and O start at +0; each step is FMA32(lane, a, b), in increasing k")
    notes_t: list[str] = []
    T = tmul_numerics.tmul_add32_reference(lanes["E"], lanes["O"], notes_t)
    notes_c: list[str] = []
    c_before = int(C0[m, n])
    result = tmul_numerics.tmul_add32_reference(c_before, T, notes_c)
    finish = Table(["step", "operands", "account (numerics reference)", "result"], [
        ["T := ADD32(E, O)", f"{short_fp32(lanes['E'])} + {short_fp32(lanes['O'])}", "\n".join(notes_t),
         fp32_text(T)],
        [f"C[{m}][{n}] := ADD32(C, T)", f"{short_fp32(c_before)} + {short_fp32(T)}", "\n".join(notes_c),
         Cell(fp32_text(result), "c")],
    ])
    figure = _tdp_figure(ins, encoding, a_h, b_h,
                         [[f"{float(np.uint32(v).view(np.float32)):.6g}" for v in row] for row in C1],
                         m, n, K, N, M, tc, ta, tb, 2, kind, kind, "fp32", f"C[{m}][{n}] = {short_fp32(result)}")
    return [table, finish], result, figure


def _tdp_figure(ins, encoding, A, B, C_text, m, n, K, N, M, tc, ta, tb, elem, a_kind, b_kind, c_kind, result):
    """Tile shapes, the data flow of C[m][n], and B's K-packing."""
    per = 4 // elem  # elements of A/B per dword
    is_float = elem == 2

    def value(x, kind):
        if kind in ("bf16", "fp16"):  # compact in the picture; the tables give exact values
            v = numerics.bf16_bits_to_float(int(x)) if kind == "bf16" else numerics.fp16_bits_to_float(int(x))
            return f"{v:.4g}"
        return str(int(x))

    def role_of(k, j):
        if is_float:
            return "even" if j % 2 == 0 else "odd"
        return f"k{k}"

    a_cells = [[Cell(value(A[r, c], a_kind), role_of(c // per, c) if r == m else None) for c in range(K * per)]
               for r in range(M)]
    b_cells = [[Cell(value(B[k, c], b_kind), role_of(k, c) if c // per == n else None) for c in range(N * per)]
               for k in range(K)]
    c_cells = [[Cell(C_text[r][c], "c" if (r, c) == (m, n) else None) for c in range(N)] for r in range(M)]
    unit = "bytes" if not is_float else f"{a_kind} elements"
    a_grid = Grid(f"A = tmm{ta}", a_cells, None, [str(c) for c in range(K * per)], group=per,
                  caption=f"{M} rows × {K * per} {a_kind} (K = {K} dwords)")
    b_grid = Grid(f"B = tmm{tb}", b_cells, None, [str(c) for c in range(N * per)], group=per,
                  caption=f"{K} rows × {N * per} {b_kind}: row k holds K-slice k")
    c_grid = Grid(f"C = tmm{tc} after", c_cells, None, [str(c) for c in range(N)],
                  caption=f"{M} × {N} {c_kind}; {result}")
    # B as the logical K x N matrix before packing: element (k*per + i, n) sits in B[k].(4n + i)
    logical = [[Cell(value(B[kk // per, nn * per + kk % per], b_kind),
                     role_of(kk // per, kk % per) if nn == n else None,
                     f"b[{kk}][{nn}] is stored in B[{kk // per}].{'byte' if not is_float else b_kind}"
                     f"[{nn * per + kk % per}]") for nn in range(N)] for kk in range(K * per)]
    logical_grid = Grid("B before packing", logical, None, [str(c) for c in range(N)],
                        caption=f"{K * per} × {N}: b[k'][n] goes to B[k'/{per}], element {per}n + k'%{per}")
    arrows = [Arrow(a_grid.title, (m, K * per - 1), c_grid.title, (m, 0), "a", f"row {m}", "right", "left"),
              Arrow(b_grid.title, (min(m, K - 1), 0), c_grid.title, (m, N - 1), "b", f"dword {n}",
                    "left", "right")]
    if is_float:
        legend = [("even", f"even lane E: {a_kind} 2k of each dword (bits 15:0)"),
                  ("odd", f"odd lane O: {a_kind} 2k+1 (bits 31:16)"), ("c", f"C[{m}][{n}]")]
    else:
        legend = [(f"k{k}", f"k = {k}: A[{m}].dword[{k}] meets B[{k}].dword[{n}]") for k in range(min(K, 8))]
        legend.append(("c", f"C[{m}][{n}]"))
    caption = (f"C[{m}][{n}] adds the products of A's row {m} with dword {n} of every row of B; each dword of B "
               f"packs {per} consecutive K values of one column n.")
    del unit
    return _figure(ins, encoding, [[a_grid, c_grid, b_grid], [logical_grid]], arrows, legend=legend,
                   caption=caption)


def _figure(ins, encoding, panels, arrows, *, legend=None, caption="") -> Figure:
    return Figure(f"{ins.text}  ({ins.encoding.hex(' ')})", [[encoding]] + [row for row in panels if row], arrows,
                  legend or [], caption)


# ---------------------------------------------------------------------------
# The scalar subset
# ---------------------------------------------------------------------------

_PREFIX_NAMES = {0x66: "operand size 16 bits", 0x67: "address size 32 bits", 0xF2: "REPNE", 0xF3: "REP",
                 0xF0: "LOCK"}


def scalar_encoding(ins: Instruction) -> tuple[Encoding, str, str]:
    code = ins.encoding
    decoder = iced_x86.Decoder(64, code, ip=ins.address)
    instr = decoder.decode()
    offsets = decoder.get_constant_offsets(instr)
    info = iced_x86.OpCodeInfo(instr.code)
    tokens = info.op_code_string.split()
    kinds = [info.op_kind(i) for i in range(info.op_count)]
    parts: list[EncodedPart] = []
    pos = 0
    while code[pos] in _PREFIX_NAMES:
        parts.append(EncodedPart(pos, code[pos:pos + 1], "prefix",
                                 [BitField("prefix", f"{code[pos]:08b}", _PREFIX_NAMES[code[pos]])]))
        pos += 1
    rex = 0
    if 0x40 <= code[pos] <= 0x4F:
        rex = code[pos]
        parts.append(EncodedPart(pos, code[pos:pos + 1], "REX", [
            BitField("0100", "0100", "REX"),
            BitField("W", f"{rex >> 3 & 1}", "64-bit operand size" if rex & 8 else "default operand size"),
            BitField("R", f"{rex >> 2 & 1}", "bit 3 of ModRM.reg"),
            BitField("X", f"{rex >> 1 & 1}", "bit 3 of the SIB index"),
            BitField("B", f"{rex & 1}", "bit 3 of ModRM.r/m, SIB base or the opcode's register"),
        ]))
        pos += 1
    opcode_tokens = [t for t in tokens if re.fullmatch(r"[0-9A-F]{2}(\+r[bwdo])?", t)]

    def operand_register(i: int) -> str:
        return scalar._NAME_OF_REGISTER.get(instr.op_register(i), "?")

    for token in opcode_tokens:
        byte = code[pos]
        if "+r" in token:
            number = byte & 7 | (rex & 1) << 3
            index = next(i for i, k in enumerate(kinds) if k in scalar._REG_KINDS)
            fields = [BitField("opcode", f"{byte >> 3:05b}", f"{token[:2]} + register"),
                      BitField("reg", f"{byte & 7:03b}", f"register {number}: {operand_register(index)}")]
        else:
            fields = [BitField("opcode", f"{byte:08b}", token)]
        parts.append(EncodedPart(pos, code[pos:pos + 1], "opcode", fields))
        pos += 1
    slash = next((t for t in tokens if t.startswith("/")), None)
    if slash is not None:
        modrm = code[pos]
        mod, reg, rm = modrm >> 6, (modrm >> 3) & 7, modrm & 7
        reg_index = next((i for i, k in enumerate(kinds) if k in scalar._REG_KINDS), None)
        rm_index = next((i for i, k in enumerate(kinds) if k in scalar._RM_KINDS or k == scalar._OK.MEM), None)
        if slash == "/r" and reg_index is not None:
            reg_meaning = f"register {reg | (rex >> 2 & 1) << 3}: {operand_register(reg_index)}"
        else:
            reg_meaning = f"opcode extension {slash}"
        if mod == 3:
            rm_meaning = f"register {rm | (rex & 1) << 3}: {operand_register(rm_index) if rm_index is not None else '?'}"
        elif rm == 4:
            rm_meaning = "100: a SIB byte follows"
        elif mod == 0 and rm == 5:
            rm_meaning = "RIP-relative"
        else:
            rm_meaning = f"base {GPR64[rm | (rex & 1) << 3]}"
        mod_meaning = {0: "memory", 1: "memory + disp8", 2: "memory + disp32", 3: "register operand"}[mod]
        parts.append(EncodedPart(pos, code[pos:pos + 1], "ModRM", [
            BitField("mod", f"{mod:02b}", mod_meaning), BitField("reg", f"{reg:03b}", reg_meaning),
            BitField("r/m", f"{rm:03b}", rm_meaning)]))
        pos += 1
        if mod != 3 and rm == 4:
            sib = code[pos]
            scale, index, base = sib >> 6, (sib >> 3) & 7, sib & 7
            index_no = index | (rex >> 1 & 1) << 3
            base_text = "no base (disp32)" if base == 5 and mod == 0 else f"base {GPR64[base | (rex & 1) << 3]}"
            parts.append(EncodedPart(pos, code[pos:pos + 1], "SIB", [
                BitField("scale", f"{scale:02b}", f"× {1 << scale}"),
                BitField("index", f"{index:03b}", "no index" if index_no == 4 else f"index {GPR64[index_no]}"),
                BitField("base", f"{base:03b}", base_text)]))
            pos += 1
    if offsets.has_displacement:
        data = code[offsets.displacement_offset:offsets.displacement_offset + offsets.displacement_size]
        value = int.from_bytes(data, "little", signed=True)
        parts.append(EncodedPart(offsets.displacement_offset, data, f"disp{8 * len(data)}",
                                 [BitField(f"disp{8 * len(data)}", "", f"{value:#x} ({value}), sign-extended")]))
        pos = offsets.displacement_offset + offsets.displacement_size
    if offsets.has_immediate:
        data = code[offsets.immediate_offset:offsets.immediate_offset + offsets.immediate_size]
        value = int.from_bytes(data, "little", signed=True)
        is_branch = any(k in scalar._BRANCH_KINDS for k in kinds)
        if is_branch:
            target = ins.operands[0].address if ins.operands and isinstance(ins.operands[0], Target) else 0
            meaning = f"{value:+#x}: target = next instruction {ins.next_address:#x} {value:+#x} = {target:#x}"
            name = f"rel{8 * len(data)}"
        else:
            meaning = f"{value:#x} ({value}), sign-extended to the operand size" if len(data) < 8 else \
                f"{int.from_bytes(data, 'little'):#x}"
            name = f"imm{8 * len(data)}"
        parts.append(EncodedPart(offsets.immediate_offset, data, name, [BitField(name, "", meaning)]))
    return Encoding(parts, "Encoding"), info.op_code_string, info.instruction_string


def _scalar_values(ins, rng, regs_given: dict) -> tuple[dict, list]:
    """Register values (operands, address registers, an implicit accumulator) and the memory to map."""
    regs = {}
    names = []
    for o in ins.operands:
        if isinstance(o, Reg):
            names.append(o.name)
    if ins.form.mnemonic == "imul" and len(ins.operands) == 1:
        low, high = scalar._IMUL_ACCUMULATORS[scalar.width(ins.operands[0])]
        names += [low, high]
    for name in names:
        view = GPR_VIEWS[name]
        full = GPR64[view.number]
        if full not in regs:
            regs[full] = int(rng.integers(0, 1 << 63, dtype=np.int64)) * 2 + int(rng.integers(0, 2))
            if rng.integers(0, 2):
                regs[full] &= 0xFFFF  # small values now and then, so results are readable
    memory = []
    for o in ins.operands:
        if isinstance(o, Mem):
            if o.base and o.base not in regs_given:
                regs[o.base] = DATA_ADDR
            if o.index and o.index not in regs_given:
                regs[o.index] = int(rng.integers(0, 4))
    status = 0
    for bit in FLAG_NAMES.values():
        if rng.integers(0, 2):
            status |= bit
    regs["rflags"] = RFLAGS_RESET | status
    regs.update(regs_given)
    for o in ins.operands:
        if isinstance(o, Mem) and ins.form.mnemonic != "lea":
            ea = o.disp + (regs.get(o.base, 0) if o.base else 0) + (regs.get(o.index, 0) * o.scale if o.index else 0)
            ea %= 1 << 64
            low = ea & ~63
            memory.append((low, rng.integers(0, 256, 128, dtype=np.uint8).tobytes(), True))
    return regs, memory


def _flags_text(value: int) -> str:
    return " ".join(name for name, bit in FLAG_NAMES.items() if value & bit) or "-"


def _explain_scalar(ins: Instruction, form, options: ExplainOptions) -> Explanation:
    cpu = default_cpu(form.feature, options.cpu)
    encoding, row, row_syntax = scalar_encoding(ins)
    expl = Explanation(ISA_NAME, form.syntax, ins.text, ins.encoding, form.summary, _facts(ins, form, cpu))
    expl.command = _command(ins, options)
    expl.facts.insert(2, ("opcode row", f"{row}  {row_syntax}"))
    expl.sections.append(Section("Encoding", [Paragraph(f"The SDM opcode row these bytes match: {row}  "
                                                        f"({row_syntax})"), encoding]))
    expl.sections.append(Section("Opcode rows of this form", [Table(["opcode", "instruction"], [
        [Cell(r.split("  ")[0], "changed" if r.split("  ")[0] == row else None), r.split("  ", 1)[1]]
        for r in form.rows])]))
    operand_rows = []
    for o in ins.operands:
        what = {Reg: "register", Mem: "memory", Imm: "immediate", Target: "branch target"}[type(o)]
        bits = "" if isinstance(o, Target) or (isinstance(o, Mem) and o.size is None) else str(scalar.width(o))
        operand_rows.append([scalar.operand_text(o), what, bits])
    expl.sections.append(Section("Operands", [Table(["operand", "kind", "bits"], operand_rows)
                                               if operand_rows else Paragraph("none")]))
    expl.sections.append(Section("Operation (the semantics the simulator executes)", [Code(form.doc)]))
    faults = []
    if any(isinstance(o, Mem) for o in ins.operands) and form.mnemonic not in ("lea", "nop"):
        faults.append(["#PF", "the memory operand's bytes are not mapped (or, for a write, not writable)"])
    if form.undefined_flags:
        faults.append(["-", "flags the SDM leaves undefined: " + _flags_text(form.undefined_flags)
                       + " (isasim's deterministic choice is in the operation text)"])
    expl.sections.append(Section("Faults", [Table(["fault", "when"], faults) if faults else
                                            Paragraph("None: the scalar subset raises no fault without a memory "
                                                      "operand.")]))
    rng = np.random.default_rng(options.seed)
    init = options.init
    given = dict(init.regs) if init is not None else {}
    regs, memory = _scalar_values(ins, rng, given)
    if init is not None:
        covered = [(a, d, w) for a, d, w in memory if not any(a < b + len(e) and b < a + len(d)
                                                                for b, e, _x in init.memory)]
        memory = list(init.memory) + covered
    run = run_example(ins, [], cpu=cpu, regs=regs, memory=memory, max_steps=options.max_steps)
    blocks = [Paragraph("The instruction runs alone on the simulator, with these registers "
                        + (f"(from --seed {options.seed}" + (f" and {options.init_source}" if init else "") + ")")
                        + ":")]
    state = run.machine.state
    before = run.before["regs"]
    shown = sorted({GPR64[GPR_VIEWS[o.name].number] for o in ins.operands if isinstance(o, Reg)}
                   | {r for o in ins.operands if isinstance(o, Mem) for r in (o.base, o.index) if r}
                   | {w.where for w in (run.record.writes if run.record else []) if w.kind == "reg"},
                   key=lambda r: GPR64.index(r) if r in GPR64 else 99)
    reg_rows = []
    for name in shown:
        old, new = before[name], state.read_register(name)
        reg_rows.append([name, f"{old:#x}", Cell(f"{new:#x}", "changed" if old != new else None),
                         str(new - (1 << 64) if new >> 63 else new)])
    if reg_rows:
        blocks.append(Table(["register", "before", "after", "after (signed)"], reg_rows))
    if run.fault:
        return _finish_scalar(expl, blocks + _fault_section(run), ins, encoding, None, None)
    flag_rows = []
    old_f, new_f = before["rflags"], state.rflags
    for name, bit in FLAG_NAMES.items():
        o, n_ = int(bool(old_f & bit)), int(bool(new_f & bit))
        undefined = " (undefined in the SDM)" if form.undefined_flags & bit else ""
        flag_rows.append([name, str(o), Cell(str(n_), "changed" if o != n_ else None), undefined.strip()])
    blocks.append(Table(["flag", "before", "after", ""], flag_rows, title=f"RFLAGS {old_f:#x} → {new_f:#x}"))
    for w in run.record.writes:
        if w.kind == "mem":
            blocks.append(Paragraph(f"memory {w.where:#x}: {w.old.hex(' ')} → {w.new.hex(' ')}"))
    if run.reads:
        blocks.append(Paragraph("memory read: " + ", ".join(f"{s} bytes at {a:#x}" for a, s in run.reads)))
    if form.mnemonic.startswith("j") or form.mnemonic == "ret":
        where = "the end of the program (RET)" if run.record.halted and form.mnemonic == "ret" else f"{state.pc:#x}"
        taken = state.pc != ins.next_address
        blocks.append(Paragraph(f"next instruction: {where}" + ("" if form.mnemonic == "ret" else
                                                                (" (taken)" if taken else " (not taken: falls through)"))))
    return _finish_scalar(expl, blocks, ins, encoding, old_f, new_f)


def _finish_scalar(expl, blocks, ins, encoding, old_f, new_f):
    expl.sections.append(Section("Worked example", blocks))
    panels = []
    if old_f is not None:
        names = list(FLAG_NAMES)
        cells = [[Cell(str(int(bool(v & FLAG_NAMES[f]))), ("changed" if (old_f ^ new_f) & FLAG_NAMES[f] else None)
                       if i else None) for f in names] for i, v in enumerate((old_f, new_f))]
        panels.append([Grid("status flags", cells, ["before", "after"], names, caption="changed flags highlighted")])
    expl.figure = _figure(ins, encoding, panels, [], legend=[("changed", "changed by the instruction")] if panels
                          else [])
    return expl

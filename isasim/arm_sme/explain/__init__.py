"""``isasim explain`` and ``isasim docs`` for arm_sme (an Explainer, see isasim.core.explain.explainer).

Every section comes from the form's one declaration: the encoding's boxes (the Arm ARM's
bit diagram) with the word's bits in them, the operands, the Operation (the form's ASL), the
faults (an SME instruction's mode checks), for a form with a ZA vector group the group's
arithmetic at the example's SVL and Wv (``--svl``, ``--wv``), and a worked example: the
instruction run on the simulator on random data, and one result of it worked out here (in plain
integer arithmetic, or with fp_asl.py's per-element functions) beside what the machine wrote.
"""

from __future__ import annotations

import random

from ...core.errors import IsasimError
from ...core.explain import (
    BitField, Code, Encoding, EncodingUnit, ExplainError, ExplainOption, ExplainOptions, Explainer, Explanation, Paragraph,
    ReferencePage, Section, Table, fault_blocks, run_example, setup_blocks,
)
from ..config import CODE_BASE, DEFAULT_SVL, configure
from ..faults import TRANSLATION, UNDEFINED
from ..forms import FORMS, UNDEFINED_FORMS, A64Form
from ..instructions import instruction_text, operand_texts, statement_text
from ..operands import BranchTarget, OperandError, parse_int
from ..semantics.za_tiles import vector_group_rows
from ..state import MASK64, X_NAMES
from .checks import check
from .evidence import evidence
from .figures import figure

DATA_ADDRESS = 0x20000  # where a load's or store's example data is (unless it reaches elsewhere)
DATA_BYTES = 256
# A load or store's example is first run on zeros mapped from 0 to here, to learn the bytes it touches:
# every addressing form reaches them from the example's registers (a base of DATA_ADDRESS, at most
# 256 vectors of 256 bytes either side, or DATA_ADDRESS scaled by 17 where the index is the base).
PROBE_BYTES = 4 << 20
GROUPS = {"dot": "SME2 integer dot products (ZA)", "mode": "SME modes", "za": "ZA",
          "scalar": "A64 scalar", "memory": "A64 loads and stores", "control": "A64 control flow",
          "predicate": "SVE predicates (streaming mode)", "count": "element counts and vector lengths",
          "za_move": "ZA tile slices to and from Z registers", "za_memory": "ZA tile slices to and from memory",
          "z_memory": "SVE contiguous loads and stores (streaming mode)",
          "outer": "SME integer outer products (ZA tiles)", "fp_dot": "SME2 floating-point dot products (ZA)",
          "fp_outer": "SME floating-point outer products (ZA tiles)", "system": "A64 system registers and hints",
          "z_data": "SVE vector data processing (streaming mode)"}

# the example each reference page explains: chosen field values per form (the rest are zero)
_EXAMPLE_FIELDS = {"Rv": 1, "off3": 3, "Zn": 1, "Zm": 2, "i": 1, "mask": 0x11, "Rd": 1, "Rn": 2, "Rt": 3,
                   "imm12": 5, "imm16": 42, "imm19": 2, "imm26": 2, "imm14": 2, "imm9": 16, "imm6": 3, "imm3": 2,
                   "immr": 4, "imms": 11, "shift": 1, "option": 2, "b40": 3, "cond": 11, "Ra": 4}

_FAULTS = {
    "dot": [(UNDEFINED, "PSTATE.SM is 0 (not in streaming mode)"), (UNDEFINED, "PSTATE.ZA is 0 (ZA off)"),
            (UNDEFINED, "the form's feature is not in the configuration (SME_I16I64 forms)")],
    "za": [(UNDEFINED, "PSTATE.ZA is 0 (ZA off)")],
    "outer": [(UNDEFINED, "PSTATE.SM is 0 (not in streaming mode)"), (UNDEFINED, "PSTATE.ZA is 0 (ZA off)"),
              (UNDEFINED, "the form's feature is not in the configuration (SME_I16I64 forms)")],
    "fp_dot": [(UNDEFINED, "PSTATE.SM is 0 (not in streaming mode)"), (UNDEFINED, "PSTATE.ZA is 0 (ZA off)")],
    "fp_outer": [(UNDEFINED, "PSTATE.SM is 0 (not in streaming mode)"), (UNDEFINED, "PSTATE.ZA is 0 (ZA off)")],
    "za_vector_memory": [(UNDEFINED, "PSTATE.ZA is 0 (ZA off)"),
                         (TRANSLATION, "the SVL/8 bytes are not all in mapped memory (or a store's are read-only)")],
    "za_move": [(UNDEFINED, "PSTATE.SM is 0 (not in streaming mode)"), (UNDEFINED, "PSTATE.ZA is 0 (ZA off)")],
    "za_memory": [(UNDEFINED, "PSTATE.SM is 0 (not in streaming mode)"), (UNDEFINED, "PSTATE.ZA is 0 (ZA off)"),
                  (TRANSLATION, "an active element's bytes are not in mapped memory (or a store's are read-only)")],
    "z_memory": [(UNDEFINED, "PSTATE.SM is 0 and the config lacks \"SVE\" (the default core: SME without FEAT_SVE)"),
                 (TRANSLATION, "an active element's bytes are not in mapped memory (or a store's are read-only)")],
    "z_data": [(UNDEFINED, "PSTATE.SM is 0 and the config lacks \"SVE\" (the default core: SME without FEAT_SVE)")],
    "predicate": [(UNDEFINED,
                   "PSTATE.SM is 0 and the config lacks \"SVE\" (the default core: SME without FEAT_SVE)")],
    "memory": [(TRANSLATION, "the 8 bytes are not all in mapped memory (or a store's are read-only)")],
}


_KINDS = {"za_group": "a ZA vector group: Wv (W8-W11), offset, VGx2/VGx4",
          "z_list": "consecutive Z registers (wrapping z31 -> z0 where the form allows)",
          "z": "a Z register", "z_indexed": "a Z register (z0-z15) and an element-group index",
          "gpr": "a general-purpose register", "imm": "an immediate", "mem": "a base register and offset",
          "target": "the branch target", "tile_list": "a list of ZA tiles",
          "za_tile": "a whole ZA tile (the accumulator of an outer product)",
          "p": "a predicate register", "pattern": "an element-count pattern (and multiplier)",
          "za_slice": "a horizontal (h) or vertical (v) slice of a ZA tile: Ws (W12-W15), offset",
          "p_governing": "a governing predicate (p0-p7), merging",
          "za_vector": "a ZA array vector: Wv (W12-W15), offset",
          "mem_vl": "a base register and an offset in vectors (mul vl)",
          "imm_wide": "a 16-bit immediate and its shift (lsl #0, #16, #32 or #48)",
          "imm_bitmask": "a bitmask immediate (a rotated run of ones in a repeated 2- to 64-bit element)",
          "shifted_reg": "a register shifted by LSL, LSR, ASR (or ROR) by a constant",
          "extended_reg": "a register zero- or sign-extended (uxtb ... sxtx), then shifted left by 0-4",
          "bit_number": "the number of the bit to test (0-63)", "cond": "a condition on NZCV (eq ... nv)",
          "q": "a Q register: the low 128 bits of a Z register",
          "mem_pre": "a base register and a signed offset, written back before the access",
          "mem_post": "a base register, written back with the offset after the access",
          "p_indexed": "a predicate, a select register (W12-W15) and an element index", "zt0": "the lookup table ZT0"}


def example_text(form: A64Form) -> str:
    fields = {name: min(_EXAMPLE_FIELDS.get(name, 0), (1 << box.width) - 1)
              for name, box in form.encoding.fields.items()}
    return instruction_text(form, fields, CODE_BASE, comment=False)


def parse_wv(text: str | None) -> int | None:
    """--wv: the 64-bit value of Xv, a number as the assembler reads one (0x1f, 31, 0b11111, 037: see
    operands/common.py); a negative value is taken as its two's complement."""
    if text is None:
        return None
    try:
        value = parse_int(text, hash="forbidden")
    except OperandError as error:
        raise ExplainError(f"--wv {text[:60]!r} is not a number: {error}") from None
    if value is None:
        raise ExplainError(f"--wv {text[:60]!r} is not a number (decimal, 0x-hex, 0b-binary or 0-octal, e.g. "
                           f"--wv 0x1f)")
    return value & MASK64


def _za_group(ins):
    """(Wv's register number, offset, nreg, ways) of the form's ZA vector group operand, or None if it has none;
    ways is 1 but for a multiply-add's vector select of ways consecutive vectors (ZaVectorRange: za.s[w8, 0:1])."""
    for kind, value in zip(ins.form.operands, ins.operands):
        if type(kind).__name__ in ("ZaVectorGroup", "ZaVectorRange"):
            v, offset = value
            return v, offset, kind.nreg, getattr(kind, "ways", 1)
    return None


class ArmSmeExplainer(Explainer):
    # --svl and --features come from the ISA's config_options, which explain takes as `run` does
    OPTIONS = (ExplainOption("--wv", "arm_sme: the 64-bit value of Xv, the vector-select register of a ZA vector "
                                     "group (Wv is its low 32 bits; default: the example's random value)",
                             metavar="V"),)
    INIT_HELP = ""
    # (file name, instruction): the terminal screenshot `isasim docs` writes: the seed's UDOT VGx4, as its page explains it
    SCREENSHOTS = (("explain-udot-vgx4.svg", "udot za.s[w9, 3, vgx4], { z1.b - z4.b }, z2.b"),)
    INDEX_INTRO = ("The evidence column names the outside oracles each form is held to: clang (zig's, LLVM 22) "
                   "encodes every form over random operands and LLVM's own SME/SME2 MC test lines where they have "
                   "it; QEMU (>= 10.1, -cpu max) runs it beside isasim in a test of its own, at the five SVLs for "
                   "the SVE and SME forms; where QEMU does not, the column says why.")

    def __init__(self, isa):
        self.isa = isa

    def reference_pages(self) -> list[ReferencePage]:
        return [ReferencePage(form.id.lower(), GROUPS[form.group], example_text(form), form.syntax, form.summary,
                              feature=form.feature, evidence=evidence(form)) for form in FORMS]

    def explain(self, instruction: str | None, code: bytes | None, options: ExplainOptions) -> Explanation:
        config = configure(options.config)  # checked before anything else: a bad --svl is the one error shown
        wv = parse_wv(options.isa_options.get("wv"))
        ins = self._instruction(instruction, code)
        form = ins.form
        if form.group == "builtin":  # memset, __arm_tpidr2_save ...: a routine run as one step, not an encoding
            from .builtins import explain_builtin

            return explain_builtin(self.isa, ins)
        group = _za_group(ins)
        if wv is not None and group is None:
            raise ExplainError(f"--wv applies only to a form with a ZA vector group, not to {form.id}")
        encoding = _encoding(ins)
        operands = [[_KINDS.get(getattr(kind, "kind", kind), str(kind)), text]
                    for kind, text in zip(form.operands, _operand_texts(ins))]
        sections = [
            Section("Encoding", [encoding]),
            Section("Operands", [Table(["operand", "here"], operands)] if operands else [Paragraph("none")]),
            Section("Operation", [Code(form.doc)]),
            Section("Faults", [Table(["fault", "when"], [list(f) for f in _faults(form)])] if _faults(form)
                    else [Paragraph("none")]),
        ]
        example, run = self._example(ins, options, config, wv)
        if group is not None and run.before:
            sections.insert(2, Section("Vector group", _vector_group_blocks(ins, group, run)))
        sections.append(Section("Example", example))
        command = f'isasim explain "{statement_text(ins)}" --isa {self.isa.name}' + (
            f" --svl {config['svl']}" if config["svl"] != DEFAULT_SVL else "") + (
            f" --wv {wv:#x}" if wv is not None else "") + (
            f" --seed {options.seed}" if options.seed != 1 else "")
        return Explanation(self.isa.name, form.syntax, statement_text(ins), ins.encoding, form.summary,
                           facts=[("feature", form.feature), ("form id", form.id)], sections=sections,
                           figure=figure(ins, encoding, run), command=command)

    def _instruction(self, text: str | None, code: bytes | None):
        try:
            program = self.isa.disassemble(code) if code is not None else self.isa.assemble(text, source="explain")
        except IsasimError as error:
            raise ExplainError(str(error)) from None
        if len(program.instructions) != 1:
            raise ExplainError(f"explain takes one instruction, not {len(program.instructions)}")
        return program.instructions[0]

    def _example(self, ins, options: ExplainOptions, config: dict, wv: int | None):
        """The worked example's blocks and its run (the run's ``before`` is empty if the set-up faulted)."""
        form = ins.form
        rng = random.Random(options.seed)
        svlb = config["svl"] // 8
        regs = {name: rng.randrange(1 << 64) for name in X_NAMES}
        regs["svcr"] = 0 if form.id.startswith("SMSTART") else 2 if form.group == "advsimd" else 3
        fields = ins.extra["fields"]
        accesses_memory = "Rn" in fields and (form.group in ("memory", "za_memory", "z_memory")
                                              or form.id in ("LDR_za", "STR_za", "LDR_zt0", "STR_zt0"))
        if accesses_memory:
            regs[X_NAMES[fields["Rn"]] if fields["Rn"] < 31 else "sp"] = DATA_ADDRESS
        index_register = form.group in ("za_memory", "z_memory") or (form.group == "memory" and form.id.endswith("_reg"))
        if "Rm" in fields and index_register and fields["Rm"] < 31:
            regs[X_NAMES[fields["Rm"]]] = 0 if fields["Rm"] == fields.get("Rn") else 1  # index one element
            if fields["Rm"] == fields.get("Rn"):
                regs[X_NAMES[fields["Rm"]]] = DATA_ADDRESS
        if form.id == "SUBS_64_imm" and "Rn" in fields and fields["Rn"] < 31:
            regs[X_NAMES[fields["Rn"]]] = rng.randrange(64)  # a small value, so the flags vary
        if form.mnemonic.startswith("while") and fields["Rn"] < 31 and fields["Rm"] < 31 and fields["Rn"] != fields["Rm"]:
            # a small start below the limit, so the predicate is partly active (random 64-bit values
            # would almost always leave it all false or all true)
            size = next(part for part in form.id.split("_")[1:] if part in ("b", "h", "s", "d"))  # WHILELO_pn_b too
            elements = config["svl"] // (8 << "bhsd".index(size))
            start = rng.randrange(16)
            regs[X_NAMES[fields["Rn"]]] = start
            regs[X_NAMES[fields["Rm"]]] = start + 1 + rng.randrange(elements - 1)  # 1 to elements-1 active
        # zeros after the random bytes up to two vectors: a vector-long access at an element's offset stays
        # mapped at SVL 2048, and the random draws are the same at every SVL
        memory = [(DATA_ADDRESS, bytes(rng.randrange(256) for _ in range(DATA_BYTES))
                   + bytes(max(0, 2 * svlb - DATA_BYTES)), True)]
        arrays = {f"z{n}": bytes(rng.randrange(256) for _ in range(svlb)) for n in range(32)}
        arrays["za"] = bytes(rng.randrange(256) for _ in range(svlb * svlb))
        if form.group in ("za_move", "za_memory", "z_memory", "outer", "fp_outer"):  # governing predicates, some active
            arrays.update({f"p{n}": bytes(rng.randrange(256) for _ in range(svlb // 8)) for n in range(8)})
        if form.mnemonic in ("ccmp", "ccmn", "adc", "adcs", "sbc", "sbcs"):
            regs["nzcv"] = 0xF0000000  # flags the step changes, whichever way the condition goes
        if form.id.endswith("_lit"):  # LDR (literal): example data where the label is (isasim maps no code as data)
            memory = [((ins.address + ins.operands[1]) & MASK64, bytes(rng.randrange(256) for _ in range(16)), True)]
        if options.init is not None:
            regs.update(options.init.regs)
            memory = list(options.init.memory)
            arrays.update(options.init.arrays)
        if wv is not None:  # after --init: the option names the value the vector group is explained for
            regs[f"x{_za_group(ins)[0]}"] = wv

        def seed(machine):
            self.isa.seed_arrays(machine.state, arrays)

        if accesses_memory and options.init is None:
            memory = self._memory_where_touched(ins, config, regs, memory, arrays, options.max_steps)
        run = run_example(self.isa.name, ins.text, config=config, regs=regs, memory=memory,
                          max_steps=options.max_steps, snapshot=_snapshot, before_step=seed, base=ins.address)
        blocks = [Paragraph(f"SVL {config['svl']} (ZA: {svlb} vectors of {svlb} bytes); Z0-Z31 and ZA random; "
                            + (f"PSTATE.SM and PSTATE.ZA {'off' if regs['svcr'] == 0 else 'on'}." if regs["svcr"] != 2
                               else "PSTATE.SM off (not streaming), PSTATE.ZA on."))]
        blocks += setup_blocks(run, "Z, ZA seeded before the step")
        if run.fault:
            return blocks + fault_blocks(run) + check(ins, run), run
        blocks.append(Table(["write", "old", "new"],
                            [[str(w.where) if w.kind != "mem" else f"memory {w.where:#x}", _short(w.old), _short(w.new)]
                             for w in run.record.writes], title="What the step wrote (the machine's journal)"))
        blocks += check(ins, run)
        return blocks, run

    def _memory_where_touched(self, ins, config: dict, regs: dict, memory: list, arrays: dict, max_steps: int) -> list:
        """``memory`` (one region of example data) moved to the lowest byte the instruction touches and grown
        to its highest, so that an offset (#-3, mul vl; #32760; an index register) finds the example's data
        rather than unmapped memory.  The bytes touched come from a run of the same step on zeros, with every
        predicate all true: the region holds what an inactive element would have moved too (the figure
        shows it, greyed)."""
        svlb = config["svl"] // 8
        every_element = {**arrays, **{f"p{n}": b"\xff" * (svlb // 8) for n in range(16)}}

        def seed(machine):
            self.isa.seed_arrays(machine.state, every_element)

        probe = run_example(self.isa.name, ins.text, config=config, regs=regs, memory=[(0, bytes(PROBE_BYTES), True)],
                            max_steps=max_steps, snapshot=_snapshot, before_step=seed, base=ins.address)
        touched = [(address, size) for address, size in probe.reads] + \
            [(address, len(data)) for address, data in probe.writes]
        if probe.fault is not None or not touched:
            return memory
        low, high = min(a for a, _ in touched), max(a + size for a, size in touched)
        ((start, data, writable),) = memory
        if start <= low and high <= start + len(data):
            return memory  # the data is where the instruction looks (an offset of 0, a small index)
        return [(low, data + bytes(max(0, high - low - len(data))), writable)]


def _vector_group_blocks(ins, group, run) -> list:
    """ZA[Wv, offs, VGx<nreg>] worked out for the example's SVL and Xv, with the rows from
    za_tiles.vector_group_rows (what the simulator executes) and the Z lists' registers."""
    v, offset, nreg, ways = group
    svlb = run.machine.state.svlb
    svl = svlb * 8
    esize = {"b": 8, "h": 16, "s": 32, "d": 64}[next(k.esize for k in ins.form.operands
                                                      if type(k).__name__ in ("ZaVectorGroup", "ZaVectorRange"))]
    xv = run.before["regs"][f"x{v}"]
    low = xv & 0xFFFFFFFF
    vstride = svlb // nreg
    rows = vector_group_rows(svlb, xv, offset, nreg)
    vec = rows[0]
    upper = (f"; the upper 32 bits of X{v} ({xv >> 32:#x}) are ignored" if xv >> 32
             else f"; the upper 32 bits of X{v} are 0")
    wrap = (f": {low} + {offset} = {low + offset} >= vstride {vstride}, so the MOD wraps"
            if low + offset >= vstride else f": {low} + {offset} < vstride {vstride}, no wrap")
    facts = [
        ["elements per vector", f"SVL / {esize} = {svl} / {esize} = {svl // esize} ({esize}-bit)"],
        ["ZA vectors", f"SVL / 8 = {svl} / 8 = {svlb} (each {svlb} bytes)"],
        ["vstride", f"(SVL / 8) / nreg = {svlb} / {nreg} = {vstride}"],
        ["Xv", f"x{v} = {xv:#018x}"],
        ["UInt(Wv<31:0>)", f"{low:#x} = {low}{upper}"],
        ["vec", f"(UInt(Wv<31:0>) + offs) MOD vstride = ({low} + {offset}) MOD {vstride} = {vec}{wrap}"],
    ]
    if ways > 1:  # a multiply-add's ways consecutive vectors from vec rounded down to a multiple of ways
        first = vec - vec % ways
        facts.append(["vec - (vec MOD ways)", f"{vec} - ({vec} MOD {ways}) = {first}: the {ways} vectors "
                                              f"{first} to {first + ways - 1} of each group"])
        blocks = [Table(["", "for this example"], facts,
                        title=f"ZA[w{v}, {offset}:{offset + ways - 1}, VGx{nreg}] at SVL {svl}")]
        blocks.append(Table(["r", "i", "vec + i + r * vstride", "ZA vector"],
                            [[str(r), str(i), f"{first} + {i} + {r} * {vstride}", f"ZA[{first + i + r * vstride}]"]
                             for r in range(nreg) for i in range(ways)],
                            title="The ZA vectors of the group" + (
                                " (what the semantics run: ZA vector vec + i takes the products of the narrow "
                                "elements ways * e + i)" if ins.form.mnemonic != "zero" else " (zeroed)")))
    else:
        blocks = [Table(["", "for this example"], facts, title=f"ZA[w{v}, {offset}, VGx{nreg}] at SVL {svl}")]
        blocks.append(Table(["r", "vec + r * vstride", "ZA vector"],
                            [[str(r), f"{vec} + {r} * {vstride}", f"ZA[{row}]"] for r, row in enumerate(rows)],
                            title="The ZA vectors of the group (za_tiles.vector_group_rows, what the simulator runs)"))
    written = sorted({w.where.subscript for w in run.record.writes if getattr(w.where, "name", None) == "za"}) \
        if run.record is not None and not run.fault else []
    if written:
        blocks.append(Paragraph("The machine's journal wrote ZA vectors " + ", ".join(map(str, written)) + "."))
    for kind, value in zip(ins.form.operands, ins.operands):
        if type(kind).__name__ != "ZList":
            continue
        registers = [(value + r) % 32 for r in range(kind.nreg)]
        wraps = value + kind.nreg - 1 > 31
        blocks.append(Paragraph(
            f"{kind.field} list: " + ", ".join(f"z{z}" for z in registers) + f" (Z[({value} + r) MOD 32])"
            + ("; it wraps past z31 to z0" if wraps else "; no wrap past z31")))
    return blocks


def _snapshot(state) -> dict:
    return {"regs": {name: state.read_register(name) for name in state.register_names()},
            "z": state.z.copy(), "za": state.za.copy()}


def _short(value) -> str:
    if isinstance(value, (bytes, bytearray)):
        text = value.hex(" ")
        return text if len(text) <= 48 else text[:45] + "..."
    return f"{value:#x}"


def _operand_texts(ins) -> list[str]:
    """Each operand as the instruction writes it; a branch target with the address it reaches."""
    fields = ins.extra["fields"]
    return [f"{text} (to {kind.comment(fields, ins.address)})" if isinstance(kind, BranchTarget) else text
            for kind, text in zip(ins.form.operands, operand_texts(ins.form, fields))]


def _faults(form: A64Form) -> list[tuple[str, str]]:
    if form.id in UNDEFINED_FORMS:
        return [(UNDEFINED, UNDEFINED_FORMS[form.id])]
    if "faults" in form.extra:  # a form that names its own (kind, when) pairs (forms/za_fp_multiply_add.py)
        return list(form.extra["faults"])
    return _FAULTS.get("za_vector_memory" if form.id in ("LDR_za", "STR_za") else form.group, [])


_FIELD_MEANINGS = {"Rv": lambda v: f"Wv = w{8 + v}", "off3": lambda v: f"offset {v}", "i": lambda v: f"index {v}",
                   "hw": lambda v: f"shift {16 * v}", "sh": lambda v: "lsl #12" if v else "no shift",
                   "imm16": str, "imm12": str, "mask": lambda v: f"tiles {v:#04x}"}


def _encoding(ins) -> Encoding:
    word = ins.extra["word"]
    form = ins.form
    texts = dict(zip((getattr(k, "field", None) for k in form.operands), _operand_texts(ins)))
    boxes = []
    for box in form.encoding.boxes:
        value = box.get(word)
        if not box.name:
            meaning = "opcode"
        elif box.fixed is not None:
            meaning = f"{box.name}: fixed by the form"
        else:
            meaning = _FIELD_MEANINGS.get(box.name, lambda v: texts.get(box.name, str(v)))(value)
        boxes.append(BitField(box.low, box.width, box.name or "", value, meaning, role=None))
    unit = EncodingUnit(0, ins.encoding, "A64 instruction word", boxes)
    return Encoding([unit], title=f"{word:#010x}, bit 31 first (little-endian in memory)")




# the AdvSIMD forms of the plain C helpers around SME kernels (issue 28): V is the low 128 bits of Z
GROUPS["advsimd"] = "AdvSIMD (NEON) integer vectors (outside streaming mode)"
_FAULTS["advsimd"] = [(UNDEFINED, "PSTATE.SM is 1: illegal in streaming mode without FEAT_SME_FA64 (UMOV and SMOV of "
                                  "element 0 aside)")]
_KINDS.update({"v": "a V register (the low 128 bits of a Z register) and its arrangement (8b ... 2d)",
               "v_list": "consecutive V registers (wrapping v31 -> v0): a TBL/TBX table",
               "v_element": "one element of a V register"})

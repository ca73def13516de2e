"""``isasim explain`` of an AMX form: its facts, operands and faults from the declaration, then the topic's example.

Operand roles (C, A, B of a TMUL) come from the form's ``operand_roles``; the faults
from its ``faults``, the CPU models (the CPUID-feature #UD) and the #UDs its opcode
row implies.  The worked example is the topic module's: TILECFG, tile loads and
stores, zeroing, or the TMUL element.
"""

from __future__ import annotations

import inspect

from ...core.explain import Cell, Code, Explanation, Paragraph, Section, Table
from ...core.program import Instruction
from ..forms import amx, amx_extensions
from ..config import CPU_MODELS
from ..faults import INVALID_OPCODE
from . import tile_memory, tile_zero, tilecfg, tmul
from .common import ISA_NAME, command, default_cpu, facts
from .encoding_view import vex_encoding
from .settings import Settings

_ROLE_COLOURS = {"A": "a", "B": "b", "C": "c"}

# mnemonic -> the module whose ``example(ins, form, settings, cpu, encoding)`` builds the worked example;
# the TMUL forms (C += A·B, by their declared operand roles) are the tmul module's
_EXAMPLES = {
    "ldtilecfg": tilecfg, "sttilecfg": tilecfg,
    "tileloadd": tile_memory, "tileloaddt1": tile_memory, "tilestored": tile_memory,
    "tileloaddrs": tile_memory, "tileloaddrst1": tile_memory,  # AMX-MOVRS (forms/amx_extensions.py)
    "tilezero": tile_zero, "tilerelease": tile_zero,
}


def operands_table(ins: Instruction, form: amx.AmxForm) -> Table:
    """The SDM's operands, the semantics function's names for them, where each is encoded and its role."""
    params = [p for p in inspect.signature(form.semantics).parameters if p != "cpu"]
    roles = dict(zip(form.operand_names, form.operand_roles))
    rows = []
    for i, (name, enc) in enumerate(zip(form.operand_names, form.operand_encoding)):
        where, _, access = enc.partition(" (")
        value = str(ins.operands[i]) if i < len(ins.operands) else "?"
        param = params[i] if i < len(params) else ""
        role = roles.get(name, "")
        role_cell = Cell(role, _ROLE_COLOURS.get(role)) if role else ""
        rows.append([name, param, where, access.rstrip(")"), Cell(value, _ROLE_COLOURS.get(role)), role_cell])
    return Table(["operand", "in the pseudocode", "encoded in", "access", "here", "role"], rows)


def faults_table(form: amx.AmxForm) -> Table:
    op = form.opcode
    lacking = [name for name, model in CPU_MODELS.items() if form.feature not in model.features]
    rows = []
    if lacking:
        rows.append([INVALID_OPCODE, f"the CPU lacks {form.feature} (here: {', '.join(lacking)})"])
    else:
        rows.append([INVALID_OPCODE, f"the CPU lacks {form.feature} (every modelled CPU has it)"])
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
    rows.append([INVALID_OPCODE, "encoding: " + "; ".join(encoding_rules)])
    return Table(["fault", "when"], [[Cell(k, "bad"), r] for k, r in rows])


def explain_amx(ins: Instruction, form: amx.AmxForm, settings: Settings) -> Explanation:
    cpu = default_cpu(form.feature, settings.cpu)
    encoding = vex_encoding(ins, form)
    having = [name for name, model in CPU_MODELS.items() if form.feature in model.features]
    form_facts = [("SDM opcode", form.opcode.text), ("CPUID feature", f"{form.feature} ({', '.join(having)})")]
    expl = Explanation(ISA_NAME, form.syntax, ins.text, ins.encoding, form.summary, facts(ins, cpu, form_facts))
    expl.command = command(ins, settings)
    expl.sections.append(Section("Encoding", [Paragraph(f"SDM opcode column: {form.opcode.text}"), encoding]))
    expl.sections.append(Section("Operands", [operands_table(ins, form)]))
    expl.sections.append(Section("Operation (the semantics the simulator executes)", [Code(form.doc)]))
    expl.sections.append(Section("Faults", [faults_table(form)]))
    if form.is_tmul and form.feature in amx_extensions.EXTENSION_FEATURES:  # their own element formats
        from . import amx_extensions as extension_topic

        blocks, figure = extension_topic.tmul_example(ins, form, settings, cpu, encoding)
    else:
        topic = tmul if form.is_tmul else _EXAMPLES[form.mnemonic]
        blocks, figure = topic.example(ins, form, settings, cpu, encoding)
    expl.sections.append(Section("Worked example", blocks))
    expl.figure = figure
    return expl

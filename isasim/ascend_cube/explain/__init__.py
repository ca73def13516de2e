"""``isasim explain`` and ``isasim docs`` for the Ascend cube (an Explainer, see isasim.core.explain).

Every section comes from the form's one declaration (:mod:`isasim.ascend_cube.forms`): the
syntax and parameters, the pseudocode (the semantics function's docstring), the faults.  The
worked example fills the buffers the instruction reads with seeded random data, runs the
real machine on the instruction, and checks its result against the same result worked out
here from the pseudocode, by other means (element loops, exact fractions), so a machine
that moved or computed the wrong thing is caught.
"""

from __future__ import annotations

import random

import numpy as np

from isasim.core.errors import IsasimError
from isasim.core.explain import (
    Code, ExplainError, ExplainOptions, Explainer, Explanation, Figure, Paragraph, ReferencePage, Section, Table,
    fault_blocks, run_example, setup_blocks,
)
from isasim.core.faults import Fault

from ..assembler import assemble
from ..config import CHIPS, configure
from ..forms import FORMS
from ..operands import value_text
from . import example_data, worked

GM_SOURCE = 0x100000  # where the examples' GM source data is
GM_DESTINATION = 0x200000  # and where a Fixpipe writes
EXAMPLE_WRITES_SHOWN = 16  # a Fixpipe writes one GM row per output row: the table lists the first few

EXAMPLES = {
    "DataCopy_GM_to_L1": f"DataCopy(dst=L1[64], src=GM[{GM_SOURCE:#x}], blockCount=2, blockLen=1, srcStride=1, "
                         "dstStride=0)",
    "DataCopy_GM_to_L1_Nd2Nz": f"DataCopy(dst=L1[0], src=GM[{GM_SOURCE:#x}], dtype=float16, nValue=3, dValue=20, "
                               "srcDValue=24, dstNzC0Stride=16)",
    "DataCopy_L1_to_BT": "DataCopy(dst=BT[0], src=L1[0], srcType=float16, dstType=float32, blockLen=1)",
    "DataCopy_L1_to_FB": "DataCopy(dst=FB[0], src=L1[0], blockLen=2)",
    "LoadData_L1_to_L0A": "LoadData(dst=L0A[512], src=L1[0], dtype=float16, startIndex=1, repeatTimes=1, "
                          "ifTranspose=true)",
    "LoadData_L1_to_L0B": "LoadData(dst=L0B[0], src=L1[0], dtype=int8, repeatTimes=2, srcStride=2)",
    "LoadData_L1_to_L0A_V2": "LoadData(dst=L0A[0], src=L1[0], dtype=int8, mStartPosition=2, kStartPosition=1, "
                             "mStep=4, kStep=2, srcStride=6, dstStride=4, ifTranspose=true)",
    "LoadData_L1_to_L0B_V2": "LoadData(dst=L0B[512], src=L1[0], dtype=float16, mStartPosition=1, kStartPosition=1, "
                             "mStep=2, kStep=3, srcStride=4, dstStride=3)",
    "Mmad": "Mmad(c=L0C[0], a=L0A[0], b=L0B[0], aType=int8, bType=int8, m=16, n=16, k=32)",
    "Fixpipe_L0C_to_GM": f"Fixpipe(dst=GM[{GM_DESTINATION:#x}], src=L0C[0], srcType=int32, dstType=int32, "
                         "nSize=16, mSize=16, srcStride=16, dstStride=16)",
    "Fixpipe_L0C_to_L1": "Fixpipe(dst=L1[0], src=L0C[0], srcType=float32, dstType=float32, nSize=16, mSize=16, "
                         "srcStride=16, dstStride=16)",
    "SetFixpipePreQuantFlag": "SetFixpipePreQuantFlag(config=0x400000000000)",
    "SetFixPipeConfig": "SetFixPipeConfig(quantPre=FB[128])",
    "SetAtomicAdd": "SetAtomicAdd(dtype=float32)",
    "SetAtomicNone": "SetAtomicNone()",
    "SetFlag": "SetFlag(event=MTE2_MTE1, id=0)",
    "WaitFlag": "WaitFlag(event=MTE2_MTE1, id=0)",
    "PipeBarrier": "PipeBarrier(pipe=PIPE_ALL)",
}


INDEX_INTRO = """\
**No Ascend hardware, no CANN toolkit and no public binary encoding exist here.** The program text is the
instruction: one Ascend C call per line with keyword parameters named as Ascend C names them
(`Mmad(c=L0C[0], a=L0A[0], b=L0B[0], aType=int8, bType=int8, m=16, n=16, k=32)`). Buffers are addressed by
byte offset (`L0A[512]`), GM by address (`GM[0x10000]`); numbers are C++ integer literals (`4096`, `0x1000`,
`0b1000`, `4'096`, a `u`/`l` suffix) up to 2^64 - 1, except that a leading 0 (`016`, which C++ reads as octal 14)
is refused rather than read as octal; parameters with a default may be left out and come in any order; `#` and `//` start comments; programs are straight-line (a kernel's loops are unrolled by the Python
that generates it). The registers are the control state: `quant_pre` (SetFixpipePreQuantFlag), `fpc`
(SetFixPipeConfig), `atomic` (SetAtomicAdd / SetAtomicNone) and `ctrl` (bit 48 set: float results keep
inf/NaN). The configuration is `{"chip": "910B" | "950", "options": {...}}` (`--chip`, `--option NAME=VALUE`);
what public material leaves open is a named option with a documented default: [options](options.md).
The seed's quantised batch-matmul kernel runs on these instructions with `isasim qbmm`: [qbmm](qbmm.md).
Each instruction runs on one of the cube's parallel pipes (MTE2, MTE1, M, FIX, S), ordered only by
SetFlag/WaitFlag and PipeBarrier; isasim checks every access for that order and names a missing flag:
[pipes, events and the race check](guide/pipes.md), and [the QBMM kernel's own flags](guide/qbmm-flags.md).

{chips}

Faults, each naming the rule it broke: GM_FAULT (unmapped GM), BUFFER_OVERFLOW (past the end of a buffer),
ALIGNMENT (L0A/L0B 512 B, L0C 1024 B, BT 64 B, L1 32 B, FB 64 B), PARAM_RANGE (m, n, k above 4095; strides
that overlap), UNSUPPORTED (a mode, type pair, transpose or load the chip lacks), QUANT_PARAM (more per-channel words
than one pass takes; an M1 the chip forbids; a sign bit that disagrees with the output type)."""


def _chips_table() -> str:
    rows = ["| chip | arch | L1 | L0A / L0B | L0C | BT | FB | quant words per pass | A in L0A | Fixpipe modes |",
            "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for chip in CHIPS.values():
        b = chip.buffers
        rows.append(f"| {chip.name} | {chip.arch} | {b['L1'] // 1024} KiB | {b['L0A'] // 1024} KiB | "
                    f"{b['L0C'] // 1024} KiB | {b['BT'] // 1024} KiB | {b['FB'] // 1024} KiB | "
                    f"{chip.quant_params_per_pass} | {chip.a_layout} | {', '.join(chip.quant_modes)} |")
    return "\n".join(rows)


def options_page() -> str:
    """docs/ascend_cube/options.md: every option, its settings, its default and what the default rests on."""
    from ..options import OPTIONS

    lines = ["# ascend_cube: options", "",
             "Behaviours public Ascend material does not settle, each a named choice of the run's configuration "
             "(`--option NAME=VALUE[,NAME=VALUE]`, or `config.options` in a trace). A trace's `config` lists "
             "every setting the run used, and `isasim explain` shows them.", "",
             "| option | settings | default | what the default rests on | meaning |", "| --- | --- | --- | --- | --- |"]
    for option in OPTIONS.values():
        cells = [f"`{option.name}`", ", ".join(f"`{c}`" for c in option.choices), f"`{option.default}`",
                 option.source, option.doc]
        lines.append("| " + " | ".join(cell.replace("|", "\\|") for cell in cells) + " |")
    return "\n".join(lines) + "\n"


class AscendExplainer(Explainer):
    INDEX_INTRO = INDEX_INTRO.replace("{chips}", _chips_table())

    def extra_pages(self) -> dict[str, str]:
        from ..kernels.qbmm_docs import qbmm_page

        return {"options": options_page(), "qbmm": qbmm_page()}

    INIT_HELP = ("Give the buffers the instruction reads as init.arrays (l1, l0a, l0b, l0c, bt, fb: whole "
                 "buffers in hex) and GM as init.memory; without them the example fills them with seeded data.")
    SCREENSHOTS = ()

    def reference_pages(self) -> list[ReferencePage]:
        return [ReferencePage(form.id.lower(), form.group, EXAMPLES[form.id], form.syntax, form.summary)
                for form in FORMS]

    def explain(self, instruction: str | None, code: bytes | None, options: ExplainOptions) -> Explanation:
        if code is not None:
            raise ExplainError("ascend_cube has no binary encoding (none is public): give the instruction as text")
        try:
            config = configure(options.config)
            program = assemble(instruction, "ascend_cube", "explain", base=0)
        except IsasimError as error:
            raise ExplainError(str(error)) from None
        if len(program.instructions) != 1:
            raise ExplainError(f"explain takes one instruction, not {len(program.instructions)}")
        ins = program.instructions[0]
        form = ins.form
        params = dict(zip(form.operand_names, ins.operands))
        moved = []
        if form.chips and config["chip"] not in form.chips:
            # a form the configured chip lacks altogether: explain it on a chip that has it, and say so
            moved = [Paragraph(f"{config['chip']} has no {form.id}: this example runs on the {form.chips[0]}.")]
            config = configure({**(options.config or {}), "chip": form.chips[0]})
        sections = [
            Section("Encoding", [Paragraph("ascend_cube has no binary encoding (Huawei publishes none): the "
                                           "program text is the instruction, one per address.")]),
            Section("Operands", [Table(["parameter", "is", "here"],
                                       [[p.name, p.doc, value_text(p, params[p.name])] for p in form.params])]
                    if form.params else [Paragraph("none")]),
            Section("Operation", [Code(form.doc)]),
            Section("Faults", [Table(["fault", "when"], [list(f) for f in form.faults])] if form.faults
                    else [Paragraph("none")]),
            Section("Configuration", [Table(["setting", "value"], [["chip", config["chip"]]]
                                            + [[name, str(value)] for name, value in config["options"].items()])]),
        ]
        blocks, panels = self._example(ins, params, config, options)
        sections.append(Section("Example", moved + blocks))
        command = f'isasim explain "{ins.text}" --isa ascend_cube' + (
            f" --seed {options.seed}" if options.seed != 1 else "") + (
            f" --chip {config['chip']}" if config["chip"] != "910B" else "")
        figure = Figure(ins.text, panels, legend=[("changed", "what the step wrote")])
        return Explanation("ascend_cube", form.syntax, ins.text, None, form.summary,
                           facts=[("group", form.group), ("form id", form.id), ("chip", config["chip"])],
                           sections=sections, figure=figure, command=command)

    def _example(self, ins, params: dict, config: dict, options: ExplainOptions):
        rng = random.Random(options.seed)
        form = ins.form
        chip = config["chip"]
        regs = worked.example_regs(form, params, rng)
        memory = []
        if options.init is not None:
            regs.update(options.init.regs)
            memory = list(options.init.memory)

        def seed(machine):
            """The data the instruction reads, once the machine has its registers (a V-mode Fixpipe reads its
            words where fpc points): only if the instruction's own checks pass, so that one which faults on
            its parameters is run on no data and faults as isasim run does."""
            given = options.init
            for name, data in (given.arrays.items() if given is not None else ()):
                machine.state.write_buffer(name.upper(), 0, data)
            if form.access is None:
                return
            try:
                access = form.access(machine.context, form, params)
            except Fault:
                return  # the step raises it again, from the same check
            numbers = np.random.default_rng(rng.getrandbits(64))
            quant_word = lambda: worked.quant_word(params, rng)  # noqa: E731 - one per per-channel word
            if given is None or not given.arrays:
                example_data.seed_buffers(machine, access, numbers, quant_word)
            if given is None or not given.memory:
                example_data.map_gm(machine, access, numbers, quant_word)

        source = ins.text
        if form.sync:
            # a flag's example runs alone: the checks that need the rest of a program (pairs, races) are off,
            # and a WaitFlag waits for the SetFlag run just before it
            config = {**config, "options": {**config["options"], "sync_check": "off"}}
            if form.sync == "wait":
                source = f"SetFlag(event={params['event']}, id={params['id']})\n{ins.text}"
        run = run_example("ascend_cube", source, config=config, regs=regs, memory=memory,
                          max_steps=options.max_steps, snapshot=_snapshot, before_step=seed)
        blocks = setup_blocks(run, "the buffers it reads filled with seeded data first")
        if run.fault:
            return blocks + fault_blocks(run), []
        written = run.record.writes
        blocks.append(Table(["write", "bytes or value"],
                            [[str(w.where) if w.kind != "mem" else f"GM {w.where:#x}",
                              f"{len(w.new)} bytes" if isinstance(w.new, bytes) else f"{w.old:#x} -> {w.new:#x}"]
                             for w in written[:EXAMPLE_WRITES_SHOWN]]
                            + ([[f"... and {len(written) - EXAMPLE_WRITES_SHOWN:,} more", ""]]
                               if len(written) > EXAMPLE_WRITES_SHOWN else []),
                            title="What the step wrote (the machine's journal)"))
        worked_blocks, panels = worked.work(form, params, run, chip, config["options"])
        return blocks + worked_blocks, panels


def _snapshot(state) -> dict:
    pipes = state.pipes
    return {"regs": dict(state.regs), "buffers": {name: data.copy() for name, data in state.buffers.items()},
            "flags": dict(pipes.flags) if pipes is not None else {},
            "clocks": pipes.clocks.copy() if pipes is not None else None}


EXPLAINER = AscendExplainer()

"""``isasim explain`` of a built-in (memset, __arm_tpidr2_save, ...: forms/builtins.py): what the routine does as
its one step, and what holds its place in the loaded code."""

from __future__ import annotations

import textwrap

from ...core.explain import Code, Explanation, Paragraph, Section, Table
from ..faults import TRANSLATION, UNDEFINED
from ..semantics.builtins import ABORTED

_FAULTS = {
    "memset": [(TRANSLATION, "a byte of the n it writes is not in mapped, writable memory (nothing is written)")],
    "memcpy": [(TRANSLATION, "a byte it reads or writes is not mapped (writable, for dest): nothing is written")],
    "memmove": [(TRANSLATION, "a byte it reads or writes is not mapped (writable, for dest): nothing is written")],
    "abort": [(ABORTED, "always: C's abort()")],
    "__arm_tpidr2_save": [(ABORTED, "the TPIDR2 block's reserved bytes 10-15 are not zero"),
                          (UNDEFINED, "there are slices to save and PSTATE.ZA is 0"),
                          (TRANSLATION, "the block or the buffer is not mapped")],
    "__arm_tpidr2_restore": [(ABORTED, "TPIDR2_EL0 is not zero, or the block's reserved bytes are not"),
                             (UNDEFINED, "there are slices to load and PSTATE.ZA is 0"),
                             (TRANSLATION, "the block or the buffer is not mapped")],
    "__arm_za_disable": [(ABORTED, "a pending lazy save's block has reserved bytes that are not zero"),
                         (TRANSLATION, "the block or the buffer is not mapped")],
    "__arm_sme_save": [(TRANSLATION, "the block (or a pending lazy save's buffer) is not mapped")],
    "__arm_sme_restore": [(TRANSLATION, "the block is not mapped")],
}


def explain_builtin(isa, ins) -> Explanation:
    form = ins.form
    word = int.from_bytes(ins.encoding, "little")
    faults = _FAULTS.get(form.mnemonic, [])
    sections = [
        Section("Encoding", [Paragraph(
            f"None of its own: the object loader (isasim run FILE.o --function NAME) gives a built-in a word after the "
            f"functions and points the calls there; the word holding its place is UDF #{word & 0xFFFF:#x} "
            f"({word:08x}), so a CPU that ran the loaded bytes would stop on it. Reaching it runs the routine below "
            "as one step, which returns to X30 as its RET would.")]),
        Section("Operation", [Code(textwrap.dedent(form.doc.split("\n", 1)[-1]).strip("\n"))]),
        Section("Faults", [Table(["fault", "when"], [list(f) for f in faults])] if faults else [Paragraph("none")]),
    ]
    return Explanation(isa.name, form.syntax, form.mnemonic, ins.encoding, form.summary,
                       facts=[("built-in", "called, not decoded"), ("form id", form.id)], sections=sections,
                       command=f"isasim explain {form.mnemonic} --isa {isa.name}")

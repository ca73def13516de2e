"""``p fixpipe[I,J]``: the arithmetic of one output element of a Fixpipe, step by step, in the stepper.

The Fixpipe is the one at the pc (about to run) or, if the pc is past it, the last one before: L0C
and the quant words are what it reads (a Fixpipe changes neither), so the steps shown are the ones
it takes or took for element (I, J): the L0C value, the quant word (quant_pre, or column J's word in
FB for a V-mode), the scale multiply and the conversion, each as
:func:`..numerics.fixpipe_math.element_steps` works it out.
"""

from __future__ import annotations

import re

from rich.console import Group
from rich.text import Text

from isasim.core.errors import IsasimError

# the numbers are C++ literals, read (and a bad one named) by buffers.location_number
PATTERN = re.compile(r"fixpipe\[([^\],]*),([^\]]*)\]", re.ASCII)


def _fixpipe_instruction(state, program):
    if program is None:
        return None
    here = program.at(state.pc)
    if here is not None and here.form.name == "Fixpipe":
        return here
    before = [ins for ins in program.instructions
              if ins.form.name == "Fixpipe" and (here is None or ins.index < here.index)]
    return before[-1] if before else None


def fixpipe_element(state, program, what: str):
    """The view of ``fixpipe[I,J]``, or None when ``what`` is not one."""
    from ..numerics.fixpipe_math import element_steps
    from ..semantics.fixpipe import is_vector_mode

    found = PATTERN.fullmatch(what.lower().replace(" ", ""))
    if not found:
        return None
    from .buffers import location_number

    row, col = (location_number(found.group(i), "fixpipe[I,J]") for i in (1, 2))
    instruction = _fixpipe_instruction(state, program)
    if instruction is None:
        raise IsasimError("no Fixpipe at or before this step: fixpipe[I,J] shows one of a Fixpipe's elements")
    p = dict(zip(instruction.form.operand_names, instruction.operands))
    if not (0 <= row < p["mSize"] and 0 <= col < p["nSize"]):
        raise IsasimError(f"fixpipe[{row},{col}]: instruction {instruction.index} moves {p['mSize']} x {p['nSize']} "
                          f"elements (rows 0..{p['mSize'] - 1}, columns 0..{p['nSize'] - 1})")
    offset = p["src"] + ((col // 16) * p["srcStride"] + row) * 16 * 4 + (col % 16) * 4
    bits = int.from_bytes(state.buffers["L0C"][offset:offset + 4].tobytes(), "little")
    mode = p["quantPre"]
    if is_vector_mode(mode):
        at = state.read_register("fpc") + 8 * col
        word = int.from_bytes(state.buffers["FB"][at:at + 8].tobytes(), "little")
        source = f"column {col}'s word, FB[{at}]"
    else:
        word = state.read_register("quant_pre")
        source = "quant_pre"
    steps = element_steps(bits, p["srcType"], mode, word, p["reluEn"], state.chip.name, state.config["options"])
    head = Text(f"Fixpipe #{instruction.index} ({mode}{', ReLU' if p['reluEn'] else ''}), element ({row}, {col}) "
                f"from L0C[{offset}]" + ("" if mode == "NoQuant" else f", the word from {source}") + ":")
    width = max(len(name) for name, _ in steps)
    return Group(head, *(Text(f"  {name:<{width}}  {text}") for name, text in steps))

"""What the pictures of arm_sme forms share (figures.py picks one per form; figures_group, figures_outer,
figures_slices and figures_simple draw them): how an element is written, the bounded windows a large SVL is
drawn through, the caption that says what was left out, and the frame every picture sits in (the
instruction word's fields on top).
"""

from __future__ import annotations

from ...core.explain import Encoding, Figure, instruction_figure
from ...core.render import element_text
from ..instructions import statement_text

INACTIVE = "inactive"  # the role of an element a predicate leaves inactive: drawn grey
MAX_GROUP_ELEMENTS = 8  # ZA elements of each group vector drawn (the lanes feeding them beside)
MAX_TILE_ELEMENTS = 8  # rows and columns of an outer product's tile drawn
MAX_SLICE_ELEMENTS = {1: 16, 2: 16, 4: 12, 8: 8, 16: 4}  # elements of a slice drawn, by element bytes
WINDOW_ROWS = 7  # tile rows drawn around a horizontal slice (columns around a vertical one)


def element_bits(data, e: int, ebytes: int) -> int:
    """Element e (ebytes bytes, little-endian) of a vector's bytes."""
    return int.from_bytes(bytes(data[e * ebytes:(e + 1) * ebytes]), "little")


def hex_text(bits: int, ebytes: int) -> str:
    return element_text(bits, "int", hex_digits=2 * ebytes)


def int_text(bits: int, width: int, signed: bool) -> str:
    """The element as the Operation reads it: UInt or SInt of ``width`` bits."""
    return str(bits - (1 << width) if signed and bits >> (width - 1) & 1 else bits)


def fp_text(bits: int, kind: str) -> str:
    """An fp32, fp16 or bf16 element's value (the tooltips and the tables give the bits)."""
    return element_text(bits, kind)


def predicate_active(pred, e: int, ebytes: int) -> bool:
    """ActivePredicateElement: the predicate bit of element e's lowest byte (one bit per vector byte)."""
    bit = e * ebytes
    return bool(int(pred[bit // 8]) >> (bit % 8) & 1)


def predicate(run, g: int):
    """P[g] as the step used it: the machine's after the step, which is P[g] before, since no form
    drawn with a governing predicate writes P."""
    return run.machine.state.p[g]


def window(total: int, limit: int, around: int | None = None) -> range:
    """The indices drawn of ``total``: all if they fit in ``limit``, else ``limit`` of them from 0, or
    centred on ``around`` (a slice's index) so that it is drawn."""
    if total <= limit:
        return range(total)
    if around is None:
        return range(limit)
    start = max(0, min(around - limit // 2, total - limit))
    return range(start, start + limit)


def elided(what: str, drawn: range, total: int) -> str:
    """"elements 0-7 of 64 drawn (56 elided)", or "" when all are drawn."""
    if len(drawn) == total:
        return ""
    span = f"{drawn.start}-{drawn.stop - 1}" if len(drawn) > 1 else f"{drawn.start}"
    return f"{what} {span} of {total} drawn ({total - len(drawn)} elided)"


def tile_vectors_text(name: str, vectors) -> str:
    """Which ZA vectors a tile's rows are (za_tiles.tile_rows): "za1.s is ZA vectors 1, 5, ... (one in 4)"."""
    if len(vectors) == 1:
        return f"{name} is ZA vector {int(vectors[0])}"
    step = int(vectors[1]) - int(vectors[0])
    if step == 1:
        return f"{name} is all of ZA"
    return f"{name} is ZA vectors {int(vectors[0])}, {int(vectors[1])}, ... (one in {step})"


def join_captions(*parts: str) -> str:
    return "; ".join(p for p in parts if p)


def example_figure(ins, encoding: Encoding, panels: list, arrows=(), legend=(), caption: str = "") -> Figure:
    """The instruction word's fields on top, then the example's panels."""
    return instruction_figure(statement_text(ins), ins.encoding, encoding, panels, arrows, legend, caption)

"""Running the QBMM kernel on the simulator, and holding its C to the case's expectation."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from isasim.core.errors import IsasimError

from ..numerics.formats import decode
from .qbmm import QbmmKernel
from .qbmm_case import STORAGE, QbmmCase


class KernelFault(IsasimError):
    """The simulated kernel raised an architectural fault (a builder bug or a case the checks missed)."""


def run(kernel: QbmmKernel, lines: list[str] | None = None):
    """C (the case's c shape and storage dtype) after the simulator runs the kernel (or ``lines``), and
    the machine it ran on."""
    from isasim.core.machine import Machine

    case = kernel.case
    machine = Machine("ascend_cube", {"chip": case.chip, "options": dict(case.options)})
    program = machine.assemble("\n".join(lines if lines is not None else kernel.program_lines), source=case.source)
    machine.load_init(program, kernel.init())
    result = machine.run(max_steps=len(program.instructions) + 1)
    if result.fault is not None:
        raise KernelFault(f"the kernel faulted: {result.fault.describe()}", source=case.source)
    return read_c(kernel, machine.memory), machine


def parts(kernel: QbmmKernel, pieces: int):
    """The kernel as at most ``pieces`` independent parts (isasim.core.kernel_parallel): contiguous groups of
    its blocks, each group's program the set-up, the group's blocks and the tear-down, and each part owning
    its blocks' tiles of C.  A block loads everything it reads (words, bias, A and B windows) into L1 itself
    and writes only its tile, so a group gives its tiles the bits the whole program gives them."""
    from isasim.core.kernel_parallel import Part, Span, block_ranges

    case = kernel.case
    item = np.dtype(STORAGE[case.c_type]).itemsize
    result = []
    for group in block_ranges(len(kernel.blocks), pieces):
        owns = tuple(Span(kernel.c_address + (t.batch * case.m * case.n + t.m_offset * case.n + t.n_offset) * item,
                          t.m, t.n * item, case.n * item) for t in (kernel.blocks[i].tile for i in group))
        label = f"{case.source} blocks {group.start}..{group.stop - 1}"
        result.append(Part(label, tuple(kernel.group_lines(group)), owns))
    return result


def c_span(kernel: QbmmKernel):
    from isasim.core.kernel_parallel import contiguous

    case = kernel.case
    return contiguous(kernel.c_address, math.prod(case.shape_of("c")) * np.dtype(STORAGE[case.c_type]).itemsize)


def run_parallel(kernel: QbmmKernel, pool, pieces: int | None = None) -> np.ndarray:
    """C as :func:`run` gives it, the blocks run in groups on ``pool`` (one group per worker unless
    ``pieces`` says otherwise: a group costs a copy of the inputs and an assembly)."""
    from isasim.core.kernel_parallel import PartFault, run_parts

    case = kernel.case
    config = {"chip": case.chip, "options": dict(case.options)}
    try:
        data = run_parts(pool, "ascend_cube", config, kernel.init(), parts(kernel, pieces or pool.workers),
                         c_span(kernel))
    except PartFault as fault:
        raise KernelFault(str(fault), source=case.source) from None
    return np.frombuffer(data, dtype=np.dtype(STORAGE[case.c_type])).reshape(case.shape_of("c")).copy()


def read_c(kernel: QbmmKernel, memory) -> np.ndarray:
    case = kernel.case
    dtype = np.dtype(STORAGE[case.c_type])
    shape = case.shape_of("c")
    size = math.prod(shape) * dtype.itemsize
    return np.frombuffer(memory.read(kernel.c_address, size), dtype=dtype).reshape(shape).copy()


@dataclass
class Comparison:
    elements: int
    bit_exact: int
    within: int  # elements the rule accepts (= bit_exact for "exact")
    worst: str  # the first element the rule rejects, or ""

    allowed: int = 0  # elements the rule lets fail (the golden's ptol: a fraction of the elements)

    @property
    def passed(self) -> bool:
        return self.elements - self.within <= self.allowed

    def describe(self) -> str:
        rate = 100.0 * self.bit_exact / self.elements if self.elements else 100.0
        text = f"{self.bit_exact:,} of {self.elements:,} elements bit-exact ({rate:.2f}%)"
        if self.within != self.bit_exact:
            text += f", {self.within:,} within the tolerance"
        if self.allowed and self.within < self.elements:
            text += f" ({self.elements - self.within} outside it; the rule allows {self.allowed})"
        return text + (f"; {self.worst}" if self.worst else "")


def values(bits: np.ndarray, c_type: str) -> np.ndarray:
    """float64 values of C as stored (int8/int32 as integers, float types decoded from their bits)."""
    if c_type in ("int8", "int32", "float32"):  # stored as themselves
        with np.errstate(invalid="ignore"):  # a signalling NaN widens to a NaN, which compare matches as NaN
            return bits.astype(np.float64)
    return decode(bits.astype(np.uint16), c_type)


def compare(case: QbmmCase, got: np.ndarray, expect: np.ndarray | None = None) -> Comparison:
    """``got`` against the case's expected C under its rule ("exact": the same bits; {"rtol", "atol"}:
    |got - expect| <= atol + rtol |expect|, NaN matching NaN)."""
    expect = case.expect if expect is None else expect
    storage = np.dtype(STORAGE[case.c_type])
    bits = lambda a: np.ascontiguousarray(a).view({1: np.uint8, 2: np.uint16, 4: np.uint32}[storage.itemsize])
    same = bits(got) == bits(expect)
    bit_exact = int(same.sum())
    if case.compare == "exact":
        ok = same
    else:
        g, e = values(got, case.c_type), values(expect, case.c_type)
        with np.errstate(invalid="ignore"):
            close = np.abs(g - e) <= case.compare["atol"] + case.compare["rtol"] * np.abs(e)
        ok = same | close | (np.isnan(g) & np.isnan(e)) | ((g == e) & np.isinf(e))
    worst = ""
    if not ok.all():
        where = tuple(int(i) for i in np.argwhere(~ok)[0])
        worst = (f"first difference at c{list(where)}: got {_text(got[where], case.c_type)}, "
                 f"expected {_text(expect[where], case.c_type)}")
    allowed = 0 if case.compare == "exact" else int(case.compare.get("ptol", 0) * same.size)
    return Comparison(int(same.size), bit_exact, int(ok.sum()), worst, allowed)


def _text(value, c_type: str) -> str:
    if c_type in ("float16", "bfloat16"):
        return f"{float(values(np.array([value]), c_type)[0])!r} (bits {int(value):#06x})"
    return repr(value.item())

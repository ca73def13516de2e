"""What an ascend_cube form declaration is: the Ascend C call it is, its keyword parameters (Param), its
summary, the semantics function it runs, the faults it can raise, and the checks the chip and its data
make (``check_chip``, ``access``).

The same declaration drives the assembler and printer (the parameters, their kinds and ranges), the machine
(``prepare``), ``isasim explain`` (``doc``, the fault table) and the fuzzer.  The declarations themselves are
in the modules beside this one, one per instruction family; each adds its forms to ``FORMS``.
"""


from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from isasim.core.faults import Fault
from isasim.core.isa import raising
from isasim.core.program import FormTable

from ..config import CHIPS
from ..faults import ALIGNMENT, BUFFER_OVERFLOW, GM_FAULT, PARAM_RANGE, UNSUPPORTED

DTYPES = ("int8", "uint8", "int16", "int32", "float16", "bfloat16", "float32", "float8_e4m3fn", "float8_e5m2",
          "hifloat8")
QUANT_MODES = tuple(dict.fromkeys(mode for chip in CHIPS.values() for mode in chip.quant_modes))


@dataclass(frozen=True)
class Param:
    """One keyword parameter of an instruction.

    kind:  "GM" (an address), a buffer name ("L1", "L0A", ...: a byte offset), "int", "bool",
           "dtype" or "mode" (a name from ``choices``).
    lo, hi: the range of an int (the Ascend C struct's field width, or the documented limit).
    """

    name: str
    kind: str
    doc: str
    default: object = None  # None: the parameter must be given
    lo: int = 0
    hi: int = (1 << 16) - 1
    choices: tuple[str, ...] = ()

    @property
    def required(self) -> bool:
        return self.default is None


@dataclass(frozen=True)
class AscendForm:
    """One instruction form (a core Form: id, mnemonic, syntax, summary)."""

    name: str  # the Ascend C call: "DataCopy"
    variant: str  # what tells it apart from the call's other forms: "GM_to_L1"
    params: tuple[Param, ...]
    summary: str
    semantics: Callable
    faults: tuple[tuple[str, str], ...] = ()  # (kind, when)
    group: str = "data movement"
    marker: str | None = None  # a parameter only this form of the call has (Nd2Nz: nValue)
    # what the chip must support for these parameters (a mode, a type pair), known before the program runs:
    # check_chip(chip, params) raises the UNSUPPORTED fault the instruction raises on that chip
    check_chip: Callable | None = None
    chips: tuple[str, ...] = ()  # the chips that have this form at all (empty: every chip)
    # access(ctx, form, params) -> access.Access: the instruction's checks that its data does not decide, and
    # the bytes it will read (the semantics call it first; explain calls it before building example data).
    # None: the form moves no data (it sets a register)
    access: Callable | None = None
    # the pipe that runs it (sync/events.py: "MTE2", "MTE1", "M", "FIX", "S"), or pipe(params) -> that pipe
    # where the parameters decide (a SetFlag runs in its event's source pipe)
    pipe: str | Callable = "S"
    sync: str | None = None  # "set", "wait", "barrier": a form that orders the pipes

    def pipe_of(self, params: dict) -> str:
        return self.pipe(params) if callable(self.pipe) else self.pipe

    @property
    def id(self) -> str:
        return f"{self.name}_{self.variant}" if self.variant else self.name

    def prepare(self, instruction):
        """The execute contract (isasim.core.isa): the parameters by name once per instruction, and what the
        chip must support checked once per machine, when the instruction is bound to its context."""
        semantics, check_chip, next_address = self.semantics, self.check_chip, instruction.next_address
        params = dict(zip(self.operand_names, instruction.operands))
        index = instruction.index

        def bind(context):
            if check_chip is not None:
                try:
                    check_chip(context.chip, params)
                except Fault as fault:  # raised anew each time the instruction runs
                    kind, rule = fault.kind, fault.rule
                    return raising(lambda: Fault(kind, rule))

            def run():
                pipes = context.state.pipes
                if pipes is None:  # a lone instruction (explain): no pipes to order
                    semantics(context, self, params)
                    return next_address
                pipes.begin(index)
                try:
                    semantics(context, self, params)
                except BaseException:
                    pipes.abandon()
                    raise
                return pipes.finish(index)  # the schedule's next instruction

            return run

        return bind

    @property
    def mnemonic(self) -> str:
        return self.name.lower()

    @property
    def syntax(self) -> str:
        return f"{self.name}({', '.join(_param_syntax(p) for p in self.params)})"

    @property
    def operand_names(self) -> tuple[str, ...]:
        return tuple(p.name for p in self.params)

    @property
    def buffers(self) -> dict[str, str]:
        """The buffer each location parameter names ({"dst": "L1", "src": "GM"})."""
        return {p.name: p.kind for p in self.params if p.kind in LOCATION_KINDS}

    @property
    def doc(self) -> str:
        """The pseudocode: the semantics function's docstring."""
        return self.semantics.__doc__.strip()


LOCATION_KINDS = ("GM", "L1", "L0A", "L0B", "L0C", "BT", "FB")


def _param_syntax(p: Param) -> str:
    value = {"GM": "GM[address]"}.get(p.kind, f"{p.kind}[offset]" if p.kind in LOCATION_KINDS else p.name)
    if p.kind in LOCATION_KINDS:
        return f"{p.name}={value}"
    return p.name if p.required else f"{p.name}={_default_text(p)}"


def _default_text(p: Param) -> str:
    if p.kind == "bool":
        return "true" if p.default else "false"
    return str(p.default)


# the fault-table rows (kind, when) the families share
GM_UNMAPPED = (GM_FAULT, "a GM byte read or written is not in mapped memory")
PAST_BUFFER_END = (BUFFER_OVERFLOW, "a byte the instruction reads or writes lies past the end of a buffer")
MISALIGNED = (ALIGNMENT, "a buffer address is not a multiple of its alignment (L0A/L0B 512 B, L0C 1024 B, BT 64 B, "
              "L1 32 B, FB 64 B)")
OUT_OF_RANGE = (PARAM_RANGE, "a parameter is outside the range the hardware takes")
CHIP_LACKS = (UNSUPPORTED, "the chip has no such type pair or mode")

FORMS = FormTable()

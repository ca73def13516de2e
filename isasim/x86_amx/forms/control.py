"""Calls, returns and indirect jumps, and the built-in C library functions: one declaration per form.

    ControlForm: CALL (rel32 and r/m64) and JMP r/m64, each its SDM syntax line, the iced-x86 ``Code``
        rows it owns (the SDM's opcode-table rows; encoding/control.py encodes and decodes by them) and its
        semantics function (semantics/control.py, whose docstring is its ``explain`` text).
        .prepare(instruction) -> bind(cpu) -> a function that executes it and returns the next rip (None:
        the program ends), the execute contract of isasim.core.isa.  CALL's semantics takes the address of
        the next instruction (what it pushes) before its operand.
    BuiltinForm: memset, memcpy, memmove, __stack_chk_fail and abort, which isasim runs as one step each when a
        call reaches the address the loader gave the symbol (elf.py).  The instruction has the C name as its
        text and the two bytes of UD2 (0F 0B) as its encoding: a CPU that ran them would stop there.

JMP rel8/rel32 and RET stay scalar forms (RET pops what CALL pushes: semantics/scalar.py); this family has
the rows that push a return address or read the destination from a register or memory.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, ClassVar

import iced_x86

from ...core.program import FormTable, syntax_id
from ..context import X86Context
from ..semantics import control as semantics
from ..semantics import libm
from ..semantics.scalar import HALT
from .iced_rows import IcedRowsForm

FEATURE = "BASE"


@dataclass
class ControlForm(IcedRowsForm):
    syntax: str  # the SDM's instruction column, e.g. "CALL r/m64"
    mnemonic: str  # as objdump prints it
    semantics: Callable = field(repr=False)
    code_names: tuple[str, ...] = ()  # the iced Codes (SDM opcode rows) of the form
    slug: str = ""  # its reference page's name (docs/x86_amx/<slug>.md)
    example: str = ""  # the instruction its reference page explains
    feature: str = FEATURE
    codes: list[int] = field(default_factory=list)
    element_types: tuple[str, ...] = ()
    undefined_flags: int = 0
    pushes_return: bool = False  # CALL: the semantics takes the next instruction's address first

    row_table: ClassVar[dict] = {}  # iced Code -> its Row (this module's ROWS)

    def execute(self, cpu: X86Context, operands: tuple, next_rip: int = 0):
        return self.semantics(cpu, next_rip, *operands) if self.pushes_return else self.semantics(cpu, *operands)

    def prepare(self, instruction):
        """The execute contract (isasim.core.isa): ``bind(cpu)``, whose function returns the next rip
        (None: the program ends, at the RET of the function isasim runs)."""
        operands, next_address = instruction.operands, instruction.next_address
        semantics = self.semantics
        if self.pushes_return:
            operands = (next_address,) + tuple(operands)
        # A linked program's functions run moved (elf.py): an address its data holds (a function pointer, a
        # jump table's target) is where the function was linked, which "moved" maps to where it runs.
        moved = instruction.extra.get("moved")

        def bind(cpu: X86Context):
            def execute() -> int | None:
                target = semantics(cpu, *operands)
                if target is None:
                    return next_address
                if target is HALT:
                    return None
                for low, high, placed in moved or ():
                    if low <= target < high:
                        return placed + target - low
                return target

            return execute

        return bind


@dataclass
class BuiltinForm:
    """A C library function isasim runs itself (see the module docstring)."""

    name: str  # the C symbol: memset, memcpy, memmove, __stack_chk_fail
    signature: str  # its C declaration
    semantics: Callable = field(repr=False)
    feature: str = FEATURE
    element_types: tuple[str, ...] = ()
    undefined_flags: int = 0
    codes: tuple = ()
    rows: tuple = ()

    ENCODING: ClassVar[bytes] = b"\x0f\x0b"  # UD2: what a CPU that ran the place would do

    @property
    def mnemonic(self) -> str:
        return self.name

    @property
    def slug(self) -> str:
        """Its reference page's name: memset, ..., stack_chk_fail."""
        return self.name.strip("_")

    @property
    def syntax(self) -> str:
        return self.signature

    @property
    def id(self) -> str:
        return "BUILTIN_" + syntax_id(self.name.strip("_"))

    @property
    def doc(self) -> str:
        return (self.semantics.__doc__ or "").strip()

    @property
    def summary(self) -> str:
        return self.doc.split("\n")[0]

    def format(self, operands: tuple) -> str:
        return self.name

    def execute(self, cpu: X86Context, operands: tuple):
        return self.semantics(cpu)

    def prepare(self, instruction):
        semantics = self.semantics

        def bind(cpu: X86Context):
            def execute() -> int | None:
                target = semantics(cpu)
                return None if target is HALT else target

            return execute

        return bind


FORMS = FormTable()  # the control forms, by id
BUILTINS: dict[str, BuiltinForm] = {}  # C name -> its built-in


def declare(semantics_function: Callable, syntax: str, *, codes: tuple[str, ...], slug: str, example: str,
            pushes_return: bool = False) -> ControlForm:
    name = syntax.split()[0]
    form = ControlForm(syntax, name.lower(), semantics_function, codes, slug, example, pushes_return=pushes_return)
    FORMS.add(form)
    return form


def builtin(semantics_function: Callable, name: str, signature: str) -> BuiltinForm:
    form = BuiltinForm(name, signature, semantics_function)
    BUILTINS[name] = form
    return form


# ---------------------------------------------------------------------------
# The forms
# ---------------------------------------------------------------------------


declare(semantics.call, "CALL target", codes=("CALL_REL32_64", "CALL_RM64"), slug="call",
        example="call 0x400100", pushes_return=True)
declare(semantics.jmp_indirect, "JMP r/m64", codes=("JMP_RM64",), slug="jmp-indirect",
        example="jmp QWORD PTR [rax*8+0x400100]")

builtin(semantics.memset, "memset", "void *memset(void *s, int c, size_t n)")
builtin(semantics.memcpy, "memcpy", "void *memcpy(void *dest, const void *src, size_t n)")
builtin(semantics.memmove, "memmove", "void *memmove(void *dest, const void *src, size_t n)")
builtin(semantics.stack_chk_fail, "__stack_chk_fail", "void __stack_chk_fail(void)")
builtin(semantics.abort, "abort", "void abort(void)")
for _name in libm.ROUNDING:  # the C library's rounding functions (semantics/libm.py)
    builtin(libm.SEMANTICS[_name], _name, libm.SIGNATURES[_name])


# ---------------------------------------------------------------------------
# The iced-x86 opcode rows of each form
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Row:
    code: int
    kinds: tuple[int, ...]
    op_code_string: str
    instruction_string: str


ROWS: dict[int, Row] = ControlForm.row_table
CODE_FORMS: dict[int, ControlForm] = {}


def _build_tables() -> None:
    for form in FORMS:
        for name in form.code_names:
            code = getattr(iced_x86.Code, name)
            info = iced_x86.OpCodeInfo(code)
            kinds = tuple(info.op_kind(i) for i in range(info.op_count))
            ROWS[code] = Row(code, kinds, info.op_code_string, info.instruction_string)
            form.codes.append(code)
            CODE_FORMS[code] = form


_build_tables()
MNEMONICS: frozenset[str] = frozenset(f.mnemonic for f in FORMS)

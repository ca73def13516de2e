"""The built-ins: C library functions and SME ABI routines a compiled kernel calls, which isasim runs itself
as one step each (semantics/builtins.py) when a call reaches the address the object loader gave the symbol
(elf.py).  Each is a form of its own, outside ``FORMS`` (no assembler but isasim's knows its name): its text
is the C name, and a recorded trace's program line of that name assembles back to it (assembler.py).

Its encoding is a UDF word, ``udf #0xb1NN`` (NN its number here): a CPU that ran the place would take the
Undefined Instruction exception, and ``isasim disasm`` shows it so.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..encoding import Encoding
from ..semantics import builtins as semantics
from .base import A64Form

UDF_BASE = 0x0000B100  # built-in N's word: UDF #0xb100 + N


@dataclass(frozen=True)
class BuiltinForm(A64Form):
    """A routine isasim runs itself: its semantics returns the address it returns to (X30)."""

    signature: str = ""  # its C declaration

    @property
    def word(self) -> int:
        return self.encoding.value

    def prepare(self, instruction):
        execute = self.execute

        def bind(context):
            def run():
                return execute(context)

            return run

        return bind


BUILTINS: dict[str, BuiltinForm] = {}  # C name -> its built-in, in declaration order


def builtin(function, name: str, signature: str) -> None:
    word = UDF_BASE + len(BUILTINS)
    doc = (function.__doc__ or "").strip()
    BUILTINS[name] = BuiltinForm(
        id="BUILTIN_" + name.strip("_"), mnemonic=name, syntax=signature, summary=doc.split("\n")[0],
        encoding=Encoding(f"{word:032b}"), execute=function, doc=doc, group="builtin", signature=signature)


builtin(semantics.memset, "memset", "void *memset(void *s, int c, size_t n)")
builtin(semantics.memcpy, "memcpy", "void *memcpy(void *dest, const void *src, size_t n)")
builtin(semantics.memmove, "memmove", "void *memmove(void *dest, const void *src, size_t n)")
builtin(semantics.abort, "abort", "void abort(void)")
builtin(semantics.tpidr2_save, "__arm_tpidr2_save", "void __arm_tpidr2_save(void)")
builtin(semantics.tpidr2_restore, "__arm_tpidr2_restore", "void __arm_tpidr2_restore(void *blk)")
builtin(semantics.za_disable, "__arm_za_disable", "void __arm_za_disable(void)")
builtin(semantics.sme_state, "__arm_sme_state", "struct { uint64_t x0, x1; } __arm_sme_state(void)")
builtin(semantics.get_current_vg, "__arm_get_current_vg", "uint64_t __arm_get_current_vg(void)")
builtin(semantics.sme_state_size, "__arm_sme_state_size", "uint64_t __arm_sme_state_size(void)")
builtin(semantics.sme_save, "__arm_sme_save", "void __arm_sme_save(void *blk)")
builtin(semantics.sme_restore, "__arm_sme_restore", "void __arm_sme_restore(void *blk)")

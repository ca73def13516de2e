"""Every x86_amx form, declared once: its syntax, its encoding (an SDM opcode row, or the iced-x86 rows it
owns), its operands, its CPUID feature, the faults it can raise, and the semantics function it runs (whose
docstring is its ``explain`` text).  One module per family, each with its own ``FORMS`` table:

    amx      the AMX instructions (VEX-encoded, declared by their SDM opcode rows: encoding/vex.py)
    scalar   the scalar subset (encoded and decoded by iced-x86 as GNU as and objdump do: encoding/scalar.py)
    vector   the SSE/AVX/AVX-512 moves (likewise: encoding/vector.py)
    control  CALL, RET, JMP r/m64 and the built-in C functions (memset, memcpy, memmove, __stack_chk_fail, abort)
             a compiled kernel calls (iced-x86 rows: encoding/control.py)

iced_rows.py holds what the scalar and vector forms derive alike from their iced rows.
"""

from . import amx, control, scalar, vector

__all__ = ["amx", "control", "scalar", "vector"]

"""Double-precision moves (issue 27, round 2): MOVSD and VMOVSD, the SSE2/AVX scalar double loads, stores and
register merges (clang's builds of GCC's AMX tests load a double constant with ``movsd xmm0, QWORD PTR
[rip+...]``), and the SSE2 packed moves MOVAPD and MOVUPD.  Bits move unchanged: no floating-point exception.

MOVSD with xmm operands is SSE2's instruction; the string MOVSD (A5 with a 32-bit operand) takes no operands
and is forms/scalar.py's.  Each function is its form's explain text.
"""

from __future__ import annotations

from ..context import X86Context
from ..operands import Mem
from ..operands.masking import unmasked
from .vector import active, read, write_legacy, write_vex

LOW64 = (1 << 64) - 1


def _element(cpu: X86Context, src) -> int:
    return read(cpu, src, 64) & LOW64


def movsd(cpu: X86Context, dest, src) -> None:
    """Move a double-precision value (SSE2).

        MOVSD xmm1, xmm2:  DEST[63:0] := SRC[63:0];  DEST[MAXVL-1:64] unmodified
        MOVSD xmm1, m64:   DEST[63:0] := SRC[63:0];  DEST[127:64] := 0;  DEST[MAXVL-1:128] unmodified
        MOVSD m64, xmm1:   DEST[63:0] := SRC[63:0]
    """
    if isinstance(dest, Mem):
        cpu.write_memory(cpu.effective_address(dest), _element(cpu, src).to_bytes(8, "little"))
    elif isinstance(src, Mem):
        write_legacy(cpu, dest, _element(cpu, src))
    else:
        write_legacy(cpu, dest, read(cpu, dest, 128) >> 64 << 64 | _element(cpu, src))


def vmovsd(cpu: X86Context, *operands) -> None:
    """Move a double-precision value (VEX: AVX; EVEX: AVX512F, element 0 under a write mask).

        VMOVSD xmm1 {k1}{z}, xmm2, xmm3:  DEST[63:0] := SRC2[63:0] (masked);  DEST[127:64] := SRC1[127:64]
        VMOVSD xmm1 {k1}{z}, m64:         DEST[63:0] := SRC[63:0] (masked);   DEST[127:64] := 0
        VMOVSD m64 {k1}, xmm1:            DEST[63:0] := SRC[63:0] if k1[0] or no mask (else not written)
        DEST[MAXVL-1:128] := 0 (a register)
        masked: IF k1[0] OR *no writemask* THEN the value ELSE IF *zeroing* THEN 0 ELSE DEST[63:0] unchanged
    """
    if len(operands) == 3:
        dest, src1, src2 = operands
        high = read(cpu, src1, 128) >> 64 << 64
        source = src2
    else:
        (dest, source), high = operands, 0
    target = unmasked(dest)
    if isinstance(target, Mem):
        if active(cpu, dest, 1):
            cpu.write_memory(cpu.effective_address(target), _element(cpu, source).to_bytes(8, "little"))
        return
    if active(cpu, dest, 1):
        low = _element(cpu, source)
    else:
        low = 0 if dest.zeroing else read(cpu, target, 64)
    write_vex(cpu, target, high | low, 128)


def movapd(cpu: X86Context, dest, src) -> None:
    """Move 128 aligned bits of two double-precision values (SSE2).

        DEST[127:0] := SRC[127:0]
        DEST[MAXVL-1:128] (unmodified, for a register DEST)

    A memory operand must be 16-byte aligned (#GP(0)).
    """
    write_legacy(cpu, dest, read(cpu, src, 128))


def movupd(cpu: X86Context, dest, src) -> None:
    """Move 128 bits of two double-precision values, any alignment (SSE2).

        DEST[127:0] := SRC[127:0]
        DEST[MAXVL-1:128] (unmodified, for a register DEST)
    """
    write_legacy(cpu, dest, read(cpu, src, 128))

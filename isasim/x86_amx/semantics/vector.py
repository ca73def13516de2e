"""The SSE/AVX/AVX-512 moves and zeroing idioms g++ 12 emits around AMX kernels (issue 15).

g++ zeroes the 64-byte TileConfig on the stack with a vector register (pxor or
vpxor, then movaps/movups/movdqa, vmovdqa or vmovdqu8 stores), fills the colsb
words with vpbroadcastw, and ends a function that touched ymm/zmm with vzeroupper.
Those are the semantics here: each reads like the SDM's Operation section, its
docstring is the explain text.  The forms are declared in forms/vector.py (with the
iced-x86 ``Code`` rows each names, the SDM's opcode table rows), encoded and decoded
in encoding/vector.py.

Registers: xmm/ymm/zmm0-31 are views of 32 512-bit registers (state.py).  A
legacy SSE write of an xmm register keeps bits 511:128; a VEX or EVEX write of
VL bits zeroes bits 511:VL (the SDM's "DEST[MAXVL-1:VL] := 0").  VZEROUPPER zeroes
bits 511:128 of zmm0-15 and leaves zmm16-31 (64-bit mode).

Not modelled: opmask registers and masking ({k1}{z}), embedded broadcast and
rounding (g++ emits none of them for these kernels: such bytes do not decode);
MMX (PXOR mm).  Features: the CPU model must have the instruction's CPUID feature
(SSE2, AVX, AVX2, AVX512F+AVX512BW, +AVX512VL below 512 bits), else #UD.
Alignment: MOVAPS, MOVDQA, PXOR with a memory operand and VMOVDQA need it
aligned to the operand size, else #GP(0); MOVUPS and VMOVDQU8 do not.
"""

from __future__ import annotations

from ..context import X86Context
from ..operands import GPR_VIEWS, Mem, Reg, vector_register


# ---------------------------------------------------------------------------
# The SDM's vocabulary
# ---------------------------------------------------------------------------


def vl(operand) -> int:
    """The vector length of an operand in bits (an xmm register: 128, a YMMWORD: 256, a GPR: its width)."""
    if isinstance(operand, Reg):
        reg = vector_register(operand.name)
        return reg.bits if reg else GPR_VIEWS[operand.name].bits
    return operand.size * 8


def read(cpu: X86Context, operand, bits: int | None = None) -> int:
    """SRC[bits-1:0] as an unsigned number (a register's low bits, or ``bits`` bits of memory)."""
    bits = bits or vl(operand)
    if isinstance(operand, Reg):
        reg = vector_register(operand.name)
        if reg is None:
            return cpu.state.read_gpr(GPR_VIEWS[operand.name]) % (1 << bits)
        return cpu.state.read_vector(reg.number) % (1 << bits)
    return int.from_bytes(cpu.read_memory(cpu.effective_address(operand), bits // 8), "little")


def write_legacy(cpu: X86Context, dest, value: int) -> None:
    """DEST[127:0] := value; a register keeps bits MAXVL-1:128 (legacy SSE)."""
    if isinstance(dest, Reg):
        n = vector_register(dest.name).number
        old = cpu.state.read_vector(n)
        cpu.state.write_vector(n, old >> 128 << 128 | value % (1 << 128))
    else:
        cpu.write_memory(cpu.effective_address(dest), (value % (1 << 128)).to_bytes(16, "little"))


def write_vex(cpu: X86Context, dest, value: int, bits: int) -> None:
    """DEST[VL-1:0] := value; DEST[MAXVL-1:VL] := 0 for a register (VEX and EVEX)."""
    value %= 1 << bits
    if isinstance(dest, Reg):
        cpu.state.write_vector(vector_register(dest.name).number, value)
    else:
        cpu.write_memory(cpu.effective_address(dest), value.to_bytes(bits // 8, "little"))


# ---------------------------------------------------------------------------
# The forms' semantics
# ---------------------------------------------------------------------------


def pxor(cpu: X86Context, dest, src) -> None:
    """Bitwise XOR of 128 bits (SSE2); ``pxor xmm0, xmm0`` is the zeroing idiom.

        DEST[127:0] := DEST[127:0] XOR SRC[127:0]
        DEST[MAXVL-1:128] (unmodified)

    A memory SRC must be 16-byte aligned (#GP(0)).  No flags change.
    """
    write_legacy(cpu, dest, read(cpu, dest, 128) ^ read(cpu, src, 128))


def vpxor(cpu: X86Context, dest, src1, src2) -> None:
    """Bitwise XOR of 128 (AVX) or 256 bits (AVX2), VEX-encoded: the upper bits of DEST are zeroed.

        DEST[VL-1:0] := SRC1[VL-1:0] XOR SRC2[VL-1:0]
        DEST[MAXVL-1:VL] := 0

    ``vpxor xmm0, xmm0, xmm0`` zeroes all 512 bits of zmm0.  No alignment, no flags.
    """
    bits = vl(dest)
    write_vex(cpu, dest, read(cpu, src1, bits) ^ read(cpu, src2, bits), bits)


def movaps(cpu: X86Context, dest, src) -> None:
    """Move 128 aligned bits (SSE).

        DEST[127:0] := SRC[127:0]
        DEST[MAXVL-1:128] (unmodified, for a register DEST)

    A memory operand must be 16-byte aligned (#GP(0)).
    """
    write_legacy(cpu, dest, read(cpu, src, 128))


def movups(cpu: X86Context, dest, src) -> None:
    """Move 128 bits, any alignment (SSE).

        DEST[127:0] := SRC[127:0]
        DEST[MAXVL-1:128] (unmodified, for a register DEST)
    """
    write_legacy(cpu, dest, read(cpu, src, 128))


def movdqa(cpu: X86Context, dest, src) -> None:
    """Move 128 aligned bits of integers (SSE2).

        DEST[127:0] := SRC[127:0]
        DEST[MAXVL-1:128] (unmodified, for a register DEST)

    A memory operand must be 16-byte aligned (#GP(0)).
    """
    write_legacy(cpu, dest, read(cpu, src, 128))


def vmovdqa(cpu: X86Context, dest, src) -> None:
    """Move 128 or 256 aligned bits (AVX), VEX-encoded.

        DEST[VL-1:0] := SRC[VL-1:0]
        DEST[MAXVL-1:VL] := 0   (a register DEST)

    A memory operand must be aligned to VL/8 bytes (#GP(0)).
    """
    bits = vl(dest)
    write_vex(cpu, dest, read(cpu, src, bits), bits)


def vmovdqu8(cpu: X86Context, dest, src) -> None:
    """Move 128, 256 or 512 bits of bytes, any alignment (AVX512BW; AVX512VL below 512), EVEX-encoded.

        DEST[VL-1:0] := SRC[VL-1:0]      (no write mask: every byte is written)
        DEST[MAXVL-1:VL] := 0            (a register DEST)

    isasim takes the unmasked form only (k0); {k1}{z} encodings do not decode.
    """
    bits = vl(dest)
    write_vex(cpu, dest, read(cpu, src, bits), bits)


def vpbroadcastw(cpu: X86Context, dest, src) -> None:
    """Broadcast the low word of an xmm register, of memory or of a GPR (EVEX only) to every word of dest.

        temp := SRC[15:0]
        FOR j := 0 TO VL/16 - 1: DEST[16j+15:16j] := temp
        DEST[MAXVL-1:VL] := 0

    The VEX forms are AVX2; the EVEX forms (the GPR source, zmm, xmm16-31) are
    AVX512BW (and AVX512VL below 512 bits).
    """
    bits = vl(dest)
    word = read(cpu, src, 16 if isinstance(src, Mem) else vl(src)) & 0xFFFF
    write_vex(cpu, dest, int.from_bytes(word.to_bytes(2, "little") * (bits // 16), "little"), bits)


def vzeroupper(cpu: X86Context) -> None:
    """Zero the upper bits of the first sixteen vector registers (AVX).

        FOR i := 0 TO 15: ZMMi[MAXVL-1:128] := 0
        ZMM16-31 are not changed (64-bit mode)
    """
    for n in range(16):
        value = cpu.state.read_vector(n)
        if value >> 128:
            cpu.state.write_vector(n, value % (1 << 128))

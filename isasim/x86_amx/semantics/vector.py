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

Masks (issue 27): an EVEX destination may be written under an opmask, ``dest{k1}`` (merging: the
elements whose mask bit is 0 keep their value) or ``dest{k1}{z}`` (zeroing: they become 0); a masked store
writes only the selected elements, and a masked memory source reads only them, so an element the mask
leaves out never faults (the SDM's fault suppression).  k0-k7 are 64 bits (MAX_KL); KMOV, KORTEST and KXOR
read and write them.  Embedded broadcast (objdump's DWORD BCST [rdi], GNU as's [rdi]{1to16}) reads one element
and repeats it.  Not modelled: embedded rounding ({rn-sae}): such bytes do not decode; MMX (PXOR mm).

Features: the CPU model must have the CPUID features of the row the instruction is encoded with (SSE, SSE2,
AVX, AVX2, AVX512F, +AVX512VL below 512 bits, AVX512BW for byte and word elements, AVX512DQ for KMOVB...),
else #UD.  Alignment: MOVAPS, MOVDQA, PXOR with a memory operand, VMOVDQA, VMOVAPS/PD and VMOVDQA32/64
need it aligned to the operand size, else #GP(0) (masked or not); the other moves do not.
"""

from __future__ import annotations

from ..context import X86Context
from ..numerics import simd_fp32 as fp32
from ..operands import GPR_VIEWS, Imm, Mem, Reg, vector_register
from ..operands.masking import Masked, opmask_number, unmasked
from ..state import AF, CF, OF, PF, SF, ZF


# ---------------------------------------------------------------------------
# The SDM's vocabulary
# ---------------------------------------------------------------------------


def vl(operand) -> int:
    """The vector length of an operand in bits (an xmm register: 128, a YMMWORD: 256, a GPR: its width)."""
    operand = unmasked(operand)
    if isinstance(operand, Reg) and opmask_number(operand.name) is not None:
        return 64
    if isinstance(operand, Reg):
        reg = vector_register(operand.name)
        return reg.bits if reg else GPR_VIEWS[operand.name].bits
    return operand.size * 8 * (operand.broadcast or 1)  # an embedded broadcast: its count of elements


def read(cpu: X86Context, operand, bits: int | None = None) -> int:
    """SRC[bits-1:0] as an unsigned number (a register's low bits, or ``bits`` bits of memory)."""
    bits = bits or vl(operand)
    operand = unmasked(operand)
    if isinstance(operand, Reg):
        reg = vector_register(operand.name)
        if reg is None:
            return cpu.state.read_gpr(GPR_VIEWS[operand.name]) % (1 << bits)
        return cpu.state.read_vector(reg.number) % (1 << bits)
    if operand.broadcast:  # EVEX embedded broadcast: one element read, repeated to the width (b = 1)
        element = int.from_bytes(cpu.read_memory(cpu.effective_address(operand), operand.size), "little")
        return pack([element] * (bits // (8 * operand.size)), 8 * operand.size)
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

        FOR j := 0 TO KL-1                        (KL = VL/8 bytes)
            IF k1[j] OR *no writemask*: DEST[8j+7:8j] := SRC[8j+7:8j]
            ELSE IF *zeroing*: DEST[8j+7:8j] := 0
            ELSE: DEST[8j+7:8j] unchanged         (merging; a store leaves the byte in memory)
        DEST[MAXVL-1:VL] := 0                     (a register DEST)

    A masked-out byte of memory is neither read nor written: it cannot fault.
    """
    move_elements(cpu, dest, src, 8)


def vpbroadcastw(cpu: X86Context, dest, src) -> None:
    """Broadcast the low word of an xmm register, of memory or of a GPR (EVEX only) to every word of dest.

        temp := SRC[15:0]
        FOR j := 0 TO VL/16 - 1
            IF k1[j] OR *no writemask*: DEST[16j+15:16j] := temp
            ELSE IF *zeroing*: DEST[16j+15:16j] := 0   (else unchanged)
        DEST[MAXVL-1:VL] := 0

    The VEX forms are AVX2; the EVEX forms (the GPR source, zmm, xmm16-31, a mask) are
    AVX512BW (and AVX512VL below 512 bits).
    """
    broadcast(cpu, dest, src, 16)


def vzeroupper(cpu: X86Context) -> None:
    """Zero the upper bits of the first sixteen vector registers (AVX).

        FOR i := 0 TO 15: ZMMi[MAXVL-1:128] := 0
        ZMM16-31 are not changed (64-bit mode)
    """
    for n in range(16):
        value = cpu.state.read_vector(n)
        if value >> 128:
            cpu.state.write_vector(n, value % (1 << 128))


# ---------------------------------------------------------------------------
# Elements and write masks (AVX-512)
# ---------------------------------------------------------------------------


def elements(value: int, size: int, count: int) -> list[int]:
    """value's ``count`` elements of ``size`` bits, element 0 first (unsigned)."""
    low = (1 << size) - 1
    return [value >> (size * j) & low for j in range(count)]


def pack(values, size: int) -> int:
    """The elements, element 0 in the low bits, each reduced to ``size`` bits."""
    low, out = (1 << size) - 1, 0
    for j, v in enumerate(values):
        out |= (v & low) << (size * j)
    return out


def signed(value: int, bits: int) -> int:
    value &= (1 << bits) - 1
    return value - (1 << bits) if value >> (bits - 1) else value


def active(cpu: X86Context, dest, count: int) -> int:
    """The write mask of ``count`` elements: k1[count-1:0] for a masked DEST, all ones without a mask."""
    full = (1 << count) - 1
    if isinstance(dest, Masked):
        return cpu.state.read_opmask(opmask_number(dest.mask)) & full
    return full


def spread(mask: int, size: int, count: int) -> int:
    """The bits of the elements ``mask`` selects."""
    ones = (1 << size) - 1
    return sum(ones << (size * j) for j in range(count) if mask >> j & 1)


def _runs(mask: int, count: int):
    """(first, length) of each run of selected elements."""
    j = 0
    while j < count:
        if mask >> j & 1:
            first = j
            while j < count and mask >> j & 1:
                j += 1
            yield first, j - first
        else:
            j += 1


def read_selected(cpu: X86Context, src, bits: int, size: int, mask: int) -> int:
    """SRC[bits-1:0], of which a memory operand's bytes are read only for the elements ``mask`` selects
    (the others read as 0: the SDM's fault suppression, they are never accessed)."""
    count = bits // size
    if not isinstance(src, Mem) or mask == (1 << count) - 1:
        return read(cpu, src, bits)
    if src.broadcast:  # the one element is read if any element is selected
        return read(cpu, src, bits) if mask else 0
    address, width, value = cpu.effective_address(src), size // 8, 0
    for first, length in _runs(mask, count):
        data = cpu.read_memory(address + first * width, length * width)
        value |= int.from_bytes(data, "little") << (first * size)
    return value


def write_masked(cpu: X86Context, dest, value: int, bits: int, size: int) -> None:
    """DEST[VL-1:0] := value under DEST's write mask, element by element of ``size`` bits:

        IF k1[j] OR *no writemask*: DEST element j := value element j
        ELSE IF *zeroing*: DEST element j := 0
        ELSE: DEST element j unchanged (merging; memory: not written)
        DEST[MAXVL-1:VL] := 0 (a register)
    """
    count = bits // size
    mask = active(cpu, dest, count)
    target = unmasked(dest)
    if mask == (1 << count) - 1:
        write_vex(cpu, target, value, bits)
        return
    if isinstance(target, Reg):
        selected = spread(mask, size, count)
        kept = 0 if dest.zeroing else read(cpu, target, bits) & ~selected
        write_vex(cpu, target, kept | (value & selected), bits)
        return
    address, width = cpu.effective_address(target), size // 8
    for first, length in _runs(mask, count):
        part = value >> (first * size) & ((1 << (length * size)) - 1)
        cpu.write_memory(address + first * width, part.to_bytes(length * width, "little"))


def move_elements(cpu: X86Context, dest, src, size: int) -> None:
    """An EVEX move of VL bits, element by element of ``size`` bits under DEST's write mask."""
    bits = vl(dest) if not isinstance(unmasked(dest), Mem) else vl(src)
    mask = active(cpu, dest, bits // size)
    write_masked(cpu, dest, read_selected(cpu, src, bits, size, mask), bits, size)


def broadcast(cpu: X86Context, dest, src, size: int) -> None:
    """Every ``size``-bit element of DEST := SRC[size-1:0], under DEST's write mask."""
    bits = vl(dest)
    element = read(cpu, src, size if isinstance(src, Mem) else vl(src)) & ((1 << size) - 1)
    write_masked(cpu, dest, pack([element] * (bits // size), size), bits, size)


# ---------------------------------------------------------------------------
# Moves of every width and mask form (issue 27)
# ---------------------------------------------------------------------------


def movdqu(cpu: X86Context, dest, src) -> None:
    """Move 128 bits of integers, any alignment (SSE2).

        DEST[127:0] := SRC[127:0]
        DEST[MAXVL-1:128] (unmodified, for a register DEST)
    """
    write_legacy(cpu, dest, read(cpu, src, 128))


def vmovdqu(cpu: X86Context, dest, src) -> None:
    """Move 128 or 256 bits of integers, any alignment (AVX), VEX-encoded.

        DEST[VL-1:0] := SRC[VL-1:0]
        DEST[MAXVL-1:VL] := 0   (a register DEST)
    """
    bits = vl(dest)
    write_vex(cpu, dest, read(cpu, src, bits), bits)


def vmovdqa32(cpu: X86Context, dest, src) -> None:
    """Move aligned dwords (AVX512F; AVX512VL below 512 bits), under a write mask.

        FOR j := 0 TO VL/32 - 1
            IF k1[j] OR *no writemask*: DEST[32j+31:32j] := SRC[32j+31:32j]
            ELSE IF *zeroing*: DEST[32j+31:32j] := 0     (else unchanged: merging)
        DEST[MAXVL-1:VL] := 0                            (a register DEST)

    A memory operand must be aligned to VL/8 bytes, masked or not (#GP(0)); a dword the mask leaves
    out is not accessed.
    """
    move_elements(cpu, dest, src, 32)


def vmovdqa64(cpu: X86Context, dest, src) -> None:
    """Move aligned qwords (AVX512F; AVX512VL below 512 bits), under a write mask.

        FOR j := 0 TO VL/64 - 1
            IF k1[j] OR *no writemask*: DEST[64j+63:64j] := SRC[64j+63:64j]
            ELSE IF *zeroing*: DEST[64j+63:64j] := 0     (else unchanged: merging)
        DEST[MAXVL-1:VL] := 0                            (a register DEST)

    A memory operand must be aligned to VL/8 bytes, masked or not (#GP(0)).
    """
    move_elements(cpu, dest, src, 64)


def vmovdqu16(cpu: X86Context, dest, src) -> None:
    """Move words, any alignment (AVX512BW; AVX512VL below 512 bits), under a write mask.

        FOR j := 0 TO VL/16 - 1
            IF k1[j] OR *no writemask*: DEST[16j+15:16j] := SRC[16j+15:16j]
            ELSE IF *zeroing*: DEST[16j+15:16j] := 0     (else unchanged: merging)
        DEST[MAXVL-1:VL] := 0                            (a register DEST)
    """
    move_elements(cpu, dest, src, 16)


def vmovdqu32(cpu: X86Context, dest, src) -> None:
    """Move dwords, any alignment (AVX512F; AVX512VL below 512 bits), under a write mask.

        FOR j := 0 TO VL/32 - 1
            IF k1[j] OR *no writemask*: DEST[32j+31:32j] := SRC[32j+31:32j]
            ELSE IF *zeroing*: DEST[32j+31:32j] := 0     (else unchanged: merging)
        DEST[MAXVL-1:VL] := 0                            (a register DEST)
    """
    move_elements(cpu, dest, src, 32)


def vmovdqu64(cpu: X86Context, dest, src) -> None:
    """Move qwords, any alignment (AVX512F; AVX512VL below 512 bits), under a write mask.

        FOR j := 0 TO VL/64 - 1
            IF k1[j] OR *no writemask*: DEST[64j+63:64j] := SRC[64j+63:64j]
            ELSE IF *zeroing*: DEST[64j+63:64j] := 0     (else unchanged: merging)
        DEST[MAXVL-1:VL] := 0                            (a register DEST)
    """
    move_elements(cpu, dest, src, 64)


def vmovups(cpu: X86Context, dest, src) -> None:
    """Move single-precision values (bits, unchanged), any alignment: VEX (AVX) or EVEX (AVX512F) under a mask.

        FOR j := 0 TO VL/32 - 1
            IF k1[j] OR *no writemask*: DEST[32j+31:32j] := SRC[32j+31:32j]
            ELSE IF *zeroing*: DEST[32j+31:32j] := 0     (else unchanged: merging)
        DEST[MAXVL-1:VL] := 0                            (a register DEST)
    """
    move_elements(cpu, dest, src, 32)


def vmovaps(cpu: X86Context, dest, src) -> None:
    """Move aligned single-precision values (bits, unchanged): VEX (AVX) or EVEX (AVX512F) under a mask.

        FOR j := 0 TO VL/32 - 1
            IF k1[j] OR *no writemask*: DEST[32j+31:32j] := SRC[32j+31:32j]
            ELSE IF *zeroing*: DEST[32j+31:32j] := 0     (else unchanged: merging)
        DEST[MAXVL-1:VL] := 0                            (a register DEST)

    A memory operand must be aligned to VL/8 bytes (#GP(0)).
    """
    move_elements(cpu, dest, src, 32)


def vmovupd(cpu: X86Context, dest, src) -> None:
    """Move double-precision values (bits, unchanged), any alignment: VEX (AVX) or EVEX (AVX512F) under a mask.

        FOR j := 0 TO VL/64 - 1
            IF k1[j] OR *no writemask*: DEST[64j+63:64j] := SRC[64j+63:64j]
            ELSE IF *zeroing*: DEST[64j+63:64j] := 0     (else unchanged: merging)
        DEST[MAXVL-1:VL] := 0                            (a register DEST)
    """
    move_elements(cpu, dest, src, 64)


def vmovapd(cpu: X86Context, dest, src) -> None:
    """Move aligned double-precision values (bits, unchanged): VEX (AVX) or EVEX (AVX512F) under a mask.

        FOR j := 0 TO VL/64 - 1
            IF k1[j] OR *no writemask*: DEST[64j+63:64j] := SRC[64j+63:64j]
            ELSE IF *zeroing*: DEST[64j+63:64j] := 0     (else unchanged: merging)
        DEST[MAXVL-1:VL] := 0                            (a register DEST)

    A memory operand must be aligned to VL/8 bytes (#GP(0)).
    """
    move_elements(cpu, dest, src, 64)


def _scalar_move(cpu: X86Context, dest, src, size: int, *, legacy: bool) -> None:
    value = read(cpu, src, size)
    target = unmasked(dest)
    if isinstance(target, Reg) and vector_register(target.name):
        (write_legacy if legacy else lambda c, d, v: write_vex(c, d, v, 128))(cpu, target, value)
    elif isinstance(target, Reg):
        cpu.state.write_gpr(GPR_VIEWS[target.name], value)
    else:
        cpu.write_memory(cpu.effective_address(target), value.to_bytes(size // 8, "little"))


def movd(cpu: X86Context, dest, src) -> None:
    """Move a dword between a GPR or memory and an xmm register (SSE2).

        MOVD xmm, r/m32:  DEST[31:0] := SRC;  DEST[127:32] := 0;  DEST[MAXVL-1:128] (unmodified)
        MOVD r/m32, xmm:  DEST := SRC[31:0]   (a 32-bit GPR write zeroes bits 63:32)
    """
    _scalar_move(cpu, dest, src, 32, legacy=True)


def movq(cpu: X86Context, dest, src) -> None:
    """Move a qword between a GPR, memory or an xmm register and an xmm register (SSE2).

        MOVQ xmm, r/m64 or xmm/m64:  DEST[63:0] := SRC[63:0];  DEST[127:64] := 0;  DEST[MAXVL-1:128] (unmodified)
        MOVQ r/m64 or xmm/m64, xmm:  DEST := SRC[63:0]   (an xmm DEST: as above)
    """
    _scalar_move(cpu, dest, src, 64, legacy=True)


def vmovd(cpu: X86Context, dest, src) -> None:
    """Move a dword between a GPR or memory and an xmm register: VEX (AVX) or EVEX (AVX512F).

        VMOVD xmm, r/m32:  DEST[31:0] := SRC;  DEST[MAXVL-1:32] := 0
        VMOVD r/m32, xmm:  DEST := SRC[31:0]
    """
    _scalar_move(cpu, dest, src, 32, legacy=False)


def vmovq(cpu: X86Context, dest, src) -> None:
    """Move a qword between a GPR, memory or an xmm register and an xmm register: VEX (AVX) or EVEX (AVX512F).

        VMOVQ xmm, r/m64 or xmm/m64:  DEST[63:0] := SRC[63:0];  DEST[MAXVL-1:64] := 0
        VMOVQ r/m64 or xmm/m64, xmm:  DEST := SRC[63:0]
    """
    _scalar_move(cpu, dest, src, 64, legacy=False)


# ---------------------------------------------------------------------------
# Logic and the zeroing idioms
# ---------------------------------------------------------------------------


def _bitwise(cpu: X86Context, dest, sources, size: int, operation) -> None:
    bits = vl(dest)
    mask = active(cpu, dest, bits // size)
    values = [read(cpu, s, bits) if not isinstance(s, Mem) else read_selected(cpu, s, bits, size, mask)
              for s in sources]
    write_masked(cpu, dest, operation(*values), bits, size)


def vpxord(cpu: X86Context, dest, src1, src2) -> None:
    """Bitwise XOR of dwords (AVX512F; AVX512VL below 512 bits), under a write mask.

        FOR j := 0 TO VL/32 - 1
            IF k1[j] OR *no writemask*: DEST[32j+31:32j] := SRC1[32j+31:32j] BITWISE XOR SRC2[32j+31:32j]
            ELSE IF *zeroing*: DEST[32j+31:32j] := 0     (else unchanged: merging)
        DEST[MAXVL-1:VL] := 0

    ``vpxord zmm0, zmm0, zmm0`` is the EVEX zeroing idiom (and the only one for zmm16-31).
    """
    _bitwise(cpu, dest, (src1, src2), 32, lambda a, b: a ^ b)


def vpxorq(cpu: X86Context, dest, src1, src2) -> None:
    """Bitwise XOR of qwords (AVX512F; AVX512VL below 512 bits), under a write mask.

        FOR j := 0 TO VL/64 - 1
            IF k1[j] OR *no writemask*: DEST[64j+63:64j] := SRC1[64j+63:64j] BITWISE XOR SRC2[64j+63:64j]
            ELSE IF *zeroing*: DEST[64j+63:64j] := 0     (else unchanged: merging)
        DEST[MAXVL-1:VL] := 0
    """
    _bitwise(cpu, dest, (src1, src2), 64, lambda a, b: a ^ b)


def ternary_logic(a: int, b: int, c: int, imm8: int, bits: int) -> int:
    """Each bit i of the result is imm8[(A[i] << 2) | (B[i] << 1) | C[i]]: the truth table imm8 of three inputs."""
    ones, out = (1 << bits) - 1, 0
    for index in range(8):
        if imm8 >> index & 1:
            out |= ((a if index & 4 else ~a) & (b if index & 2 else ~b) & (c if index & 1 else ~c)) & ones
    return out


def vpternlogd(cpu: X86Context, dest, src2, src3, imm8) -> None:
    """Bitwise ternary logic of dwords (AVX512F; AVX512VL below 512 bits), under a write mask.

        FOR j := 0 TO VL/32 - 1
            IF k1[j] OR *no writemask*:
                FOR h := 0 TO 31
                    DEST[32j+h] := imm8[(DEST[32j+h] << 2) | (SRC2[32j+h] << 1) | SRC3[32j+h]]
            ELSE IF *zeroing*: DEST[32j+31:32j] := 0     (else unchanged: merging)
        DEST[MAXVL-1:VL] := 0

    ``vpternlogd zmm0, zmm0, zmm0, 0xff`` sets every bit (the all-ones idiom).
    """
    bits = vl(dest)
    _bitwise(cpu, dest, (unmasked(dest), src2, src3), 32,
             lambda a, b, c: ternary_logic(a, b, c, imm8.value & 0xFF, bits))


def vpternlogq(cpu: X86Context, dest, src2, src3, imm8) -> None:
    """Bitwise ternary logic of qwords (AVX512F; AVX512VL below 512 bits), under a write mask.

        FOR j := 0 TO VL/64 - 1
            IF k1[j] OR *no writemask*:
                FOR h := 0 TO 63
                    DEST[64j+h] := imm8[(DEST[64j+h] << 2) | (SRC2[64j+h] << 1) | SRC3[64j+h]]
            ELSE IF *zeroing*: DEST[64j+63:64j] := 0     (else unchanged: merging)
        DEST[MAXVL-1:VL] := 0
    """
    bits = vl(dest)
    _bitwise(cpu, dest, (unmasked(dest), src2, src3), 64,
             lambda a, b, c: ternary_logic(a, b, c, imm8.value & 0xFF, bits))


# ---------------------------------------------------------------------------
# Broadcasts
# ---------------------------------------------------------------------------


def vpbroadcastb(cpu: X86Context, dest, src) -> None:
    """Broadcast the low byte of an xmm register, of memory or of a GPR (EVEX only) to every byte of dest.

        temp := SRC[7:0]
        FOR j := 0 TO VL/8 - 1
            IF k1[j] OR *no writemask*: DEST[8j+7:8j] := temp
            ELSE IF *zeroing*: DEST[8j+7:8j] := 0        (else unchanged: merging)
        DEST[MAXVL-1:VL] := 0

    VEX: AVX2; EVEX: AVX512BW (and AVX512VL below 512 bits).
    """
    broadcast(cpu, dest, src, 8)


def vpbroadcastd(cpu: X86Context, dest, src) -> None:
    """Broadcast the low dword of an xmm register, of memory or of a GPR (EVEX only) to every dword of dest.

        temp := SRC[31:0]
        FOR j := 0 TO VL/32 - 1
            IF k1[j] OR *no writemask*: DEST[32j+31:32j] := temp
            ELSE IF *zeroing*: DEST[32j+31:32j] := 0     (else unchanged: merging)
        DEST[MAXVL-1:VL] := 0

    VEX: AVX2; EVEX: AVX512F (and AVX512VL below 512 bits).
    """
    broadcast(cpu, dest, src, 32)


def vpbroadcastq(cpu: X86Context, dest, src) -> None:
    """Broadcast the low qword of an xmm register, of memory or of a GPR (EVEX only) to every qword of dest.

        temp := SRC[63:0]
        FOR j := 0 TO VL/64 - 1
            IF k1[j] OR *no writemask*: DEST[64j+63:64j] := temp
            ELSE IF *zeroing*: DEST[64j+63:64j] := 0     (else unchanged: merging)
        DEST[MAXVL-1:VL] := 0

    VEX: AVX2; EVEX: AVX512F (and AVX512VL below 512 bits).
    """
    broadcast(cpu, dest, src, 64)


def vbroadcastss(cpu: X86Context, dest, src) -> None:
    """Broadcast a single-precision value (its 32 bits) from memory or an xmm register to every dword of dest.

        temp := SRC[31:0]
        FOR j := 0 TO VL/32 - 1
            IF k1[j] OR *no writemask*: DEST[32j+31:32j] := temp
            ELSE IF *zeroing*: DEST[32j+31:32j] := 0     (else unchanged: merging)
        DEST[MAXVL-1:VL] := 0

    VEX with m32: AVX; VEX with an xmm source: AVX2; EVEX: AVX512F (and AVX512VL below 512 bits).
    """
    broadcast(cpu, dest, src, 32)


# ---------------------------------------------------------------------------
# The opmask registers
# ---------------------------------------------------------------------------


def _kmov(cpu: X86Context, dest, src, size: int) -> None:
    if isinstance(src, Reg) and opmask_number(src.name) is not None:
        value = cpu.state.read_opmask(opmask_number(src.name))
    else:
        value = read(cpu, src, min(size, vl(src)) if isinstance(src, Reg) else size)
    value &= (1 << size) - 1
    if isinstance(dest, Reg) and opmask_number(dest.name) is not None:
        cpu.state.write_opmask(opmask_number(dest.name), value)
    elif isinstance(dest, Reg):
        cpu.state.write_gpr(GPR_VIEWS[dest.name], value)
    else:
        cpu.write_memory(cpu.effective_address(dest), value.to_bytes(size // 8, "little"))


def kmovb(cpu: X86Context, dest, src) -> None:
    """Move 8 bits of a mask (AVX512DQ).

        KMOVB k1, k2/m8 or r32:  DEST[7:0] := SRC[7:0];  DEST[MAX_KL-1:8] := 0
        KMOVB m8, k1:            DEST[7:0] := SRC[7:0]
        KMOVB r32, k1:           DEST := ZeroExtension(SRC[7:0])
    """
    _kmov(cpu, dest, src, 8)


def kmovw(cpu: X86Context, dest, src) -> None:
    """Move 16 bits of a mask (AVX512F).

        KMOVW k1, k2/m16 or r32:  DEST[15:0] := SRC[15:0];  DEST[MAX_KL-1:16] := 0
        KMOVW m16, k1:            DEST[15:0] := SRC[15:0]
        KMOVW r32, k1:            DEST := ZeroExtension(SRC[15:0])
    """
    _kmov(cpu, dest, src, 16)


def kmovd(cpu: X86Context, dest, src) -> None:
    """Move 32 bits of a mask (AVX512BW).

        KMOVD k1, k2/m32 or r32:  DEST[31:0] := SRC[31:0];  DEST[MAX_KL-1:32] := 0
        KMOVD m32, k1:            DEST[31:0] := SRC[31:0]
        KMOVD r32, k1:            DEST := SRC[31:0] (bits 63:32 of the GPR zeroed)
    """
    _kmov(cpu, dest, src, 32)


def kmovq(cpu: X86Context, dest, src) -> None:
    """Move 64 bits of a mask (AVX512BW).

        KMOVQ k1, k2/m64 or r64:  DEST[63:0] := SRC[63:0]
        KMOVQ m64 or r64, k1:     DEST[63:0] := SRC[63:0]
    """
    _kmov(cpu, dest, src, 64)


def _kortest(cpu: X86Context, src1, src2, size: int) -> None:
    ones = (1 << size) - 1
    tmp = (cpu.state.read_opmask(opmask_number(src1.name)) | cpu.state.read_opmask(opmask_number(src2.name))) & ones
    flags = cpu.state.rflags & ~(CF | PF | AF | ZF | SF | OF)
    flags |= (ZF if tmp == 0 else 0) | (CF if tmp == ones else 0)
    cpu.state.set_rflags(flags)


def kortestb(cpu: X86Context, src1, src2) -> None:
    """OR two masks' 8 bits and set ZF if the result is all zeros, CF if all ones (AVX512DQ).

        TMP[7:0] := SRC1[7:0] BITWISE OR SRC2[7:0]
        ZF := (TMP[7:0] = 0);  CF := (TMP[7:0] = FFH);  OF, SF, AF, PF := 0
    """
    _kortest(cpu, src1, src2, 8)


def kortestw(cpu: X86Context, src1, src2) -> None:
    """OR two masks' 16 bits and set ZF if the result is all zeros, CF if all ones (AVX512F).

        TMP[15:0] := SRC1[15:0] BITWISE OR SRC2[15:0]
        ZF := (TMP[15:0] = 0);  CF := (TMP[15:0] = FFFFH);  OF, SF, AF, PF := 0
    """
    _kortest(cpu, src1, src2, 16)


def kortestd(cpu: X86Context, src1, src2) -> None:
    """OR two masks' 32 bits and set ZF if the result is all zeros, CF if all ones (AVX512BW).

        TMP[31:0] := SRC1[31:0] BITWISE OR SRC2[31:0]
        ZF := (TMP[31:0] = 0);  CF := (TMP[31:0] = FFFFFFFFH);  OF, SF, AF, PF := 0
    """
    _kortest(cpu, src1, src2, 32)


def kortestq(cpu: X86Context, src1, src2) -> None:
    """OR two masks' 64 bits and set ZF if the result is all zeros, CF if all ones (AVX512BW).

        TMP[63:0] := SRC1[63:0] BITWISE OR SRC2[63:0]
        ZF := (TMP[63:0] = 0);  CF := (TMP[63:0] = FFFFFFFF_FFFFFFFFH);  OF, SF, AF, PF := 0
    """
    _kortest(cpu, src1, src2, 64)


def _kxor(cpu: X86Context, dest, src1, src2, size: int) -> None:
    value = cpu.state.read_opmask(opmask_number(src1.name)) ^ cpu.state.read_opmask(opmask_number(src2.name))
    cpu.state.write_opmask(opmask_number(dest.name), value & ((1 << size) - 1))


def kxorb(cpu: X86Context, dest, src1, src2) -> None:
    """XOR two masks' 8 bits (AVX512DQ); ``kxorb k1, k1, k1`` zeroes k1.

        DEST[7:0] := SRC1[7:0] BITWISE XOR SRC2[7:0];  DEST[MAX_KL-1:8] := 0
    """
    _kxor(cpu, dest, src1, src2, 8)


def kxorw(cpu: X86Context, dest, src1, src2) -> None:
    """XOR two masks' 16 bits (AVX512F); ``kxorw k1, k1, k1`` zeroes k1.

        DEST[15:0] := SRC1[15:0] BITWISE XOR SRC2[15:0];  DEST[MAX_KL-1:16] := 0
    """
    _kxor(cpu, dest, src1, src2, 16)


def kxord(cpu: X86Context, dest, src1, src2) -> None:
    """XOR two masks' 32 bits (AVX512BW); ``kxord k1, k1, k1`` zeroes k1.

        DEST[31:0] := SRC1[31:0] BITWISE XOR SRC2[31:0];  DEST[MAX_KL-1:32] := 0
    """
    _kxor(cpu, dest, src1, src2, 32)


def kxorq(cpu: X86Context, dest, src1, src2) -> None:
    """XOR two masks' 64 bits (AVX512BW); ``kxorq k1, k1, k1`` zeroes k1.

        DEST[63:0] := SRC1[63:0] BITWISE XOR SRC2[63:0]
    """
    _kxor(cpu, dest, src1, src2, 64)


# ---------------------------------------------------------------------------
# Integer and fp32 arithmetic, BF16 and VNNI (issue 27): element by element under DEST's write mask
# ---------------------------------------------------------------------------


def _each(cpu: X86Context, dest, sources, size: int, operation, bits: int | None = None) -> None:
    """DEST element j := operation(source elements j) for each element the mask selects (``size`` bits)."""
    bits = bits or vl(dest)
    count = bits // size
    mask = active(cpu, dest, count)
    columns = [elements(read_selected(cpu, s, bits, size, mask), size, count) for s in sources]
    results = [operation(*row) if mask >> j & 1 else 0 for j, row in enumerate(zip(*columns))]
    write_masked(cpu, dest, pack(results, size), bits, size)


def vpaddd(cpu: X86Context, dest, src1, src2) -> None:
    """Add packed dwords, wrapping (VEX: AVX/AVX2; EVEX: AVX512F, under a write mask).

        FOR j := 0 TO VL/32 - 1
            IF k1[j] OR *no writemask*: DEST[32j+31:32j] := SRC1[32j+31:32j] + SRC2[32j+31:32j]   (mod 2^32)
            ELSE IF *zeroing*: DEST[32j+31:32j] := 0     (else unchanged: merging)
        DEST[MAXVL-1:VL] := 0
    """
    _each(cpu, dest, (src1, src2), 32, lambda a, b: a + b)


def vpsubd(cpu: X86Context, dest, src1, src2) -> None:
    """Subtract packed dwords, wrapping (VEX: AVX/AVX2; EVEX: AVX512F, under a write mask).

        FOR j := 0 TO VL/32 - 1
            IF k1[j] OR *no writemask*: DEST[32j+31:32j] := SRC1[32j+31:32j] - SRC2[32j+31:32j]   (mod 2^32)
            ELSE IF *zeroing*: DEST[32j+31:32j] := 0     (else unchanged: merging)
        DEST[MAXVL-1:VL] := 0
    """
    _each(cpu, dest, (src1, src2), 32, lambda a, b: a - b)


def vpmulld(cpu: X86Context, dest, src1, src2) -> None:
    """Multiply packed signed dwords, keeping the low 32 bits of each 64-bit product (VEX: AVX/AVX2; EVEX: AVX512F).

        FOR j := 0 TO VL/32 - 1
            IF k1[j] OR *no writemask*:
                Temp[63:0] := SRC1[32j+31:32j] * SRC2[32j+31:32j]   (signed)
                DEST[32j+31:32j] := Temp[31:0]
            ELSE IF *zeroing*: DEST[32j+31:32j] := 0     (else unchanged: merging)
        DEST[MAXVL-1:VL] := 0
    """
    _each(cpu, dest, (src1, src2), 32, lambda a, b: signed(a, 32) * signed(b, 32))


def vpdpbusd(cpu: X86Context, dest, src1, src2) -> None:
    """Multiply unsigned bytes of SRC1 by signed bytes of SRC2, add each group of four to a dword of DEST,
    wrapping (EVEX: AVX512_VNNI, AVX512VL below 512 bits, under a write mask; VEX, written {vex}: AVX-VNNI).

        FOR i := 0 TO VL/32 - 1
            IF k1[i] OR *no writemask*:
                p1 := ZeroExtend(SRC1.byte[4i+0]) * SignExtend(SRC2.byte[4i+0])
                ... p4 := ZeroExtend(SRC1.byte[4i+3]) * SignExtend(SRC2.byte[4i+3])
                DEST.dword[i] := DEST.dword[i] + p1 + p2 + p3 + p4     (mod 2^32, no saturation)
            ELSE IF *zeroing*: DEST.dword[i] := 0     (else unchanged: merging)
        DEST[MAXVL-1:VL] := 0
    """
    def dot(c: int, a: int, b: int) -> int:
        return c + sum((a >> 8 * t & 0xFF) * signed(b >> 8 * t, 8) for t in range(4))

    _each(cpu, dest, (unmasked(dest), src1, src2), 32, dot)


def vpermd(cpu: X86Context, dest, index, src) -> None:
    """Permute the dwords of SRC by the indices in INDEX (VEX ymm: AVX2; EVEX: AVX512F, under a write mask).

        n := VL/32
        FOR j := 0 TO n - 1
            i := INDEX[32j+3:32j] MOD n          (bits 2:0 for ymm, 3:0 for zmm)
            IF k1[j] OR *no writemask*: DEST[32j+31:32j] := SRC[32i+31:32i]
            ELSE IF *zeroing*: DEST[32j+31:32j] := 0     (else unchanged: merging)
        DEST[MAXVL-1:VL] := 0
    """
    bits = vl(dest)
    count = bits // 32
    table = elements(read(cpu, src, bits), 32, count)
    _each(cpu, dest, (index,), 32, lambda i: table[i % count])


def vpshufb(cpu: X86Context, dest, src1, src2) -> None:
    """Shuffle the bytes of SRC1 within each 128-bit lane by the indices in SRC2 (VEX: AVX/AVX2; EVEX: AVX512BW).

        FOR j := 0 TO VL/8 - 1
            IF k1[j] OR *no writemask*:
                IF SRC2[8j+7] = 1: DEST[8j+7:8j] := 0
                ELSE: index := SRC2[8j+3:8j];  DEST[8j+7:8j] := SRC1[128*(j DIV 16) + 8*index + 7 : ...]
            ELSE IF *zeroing*: DEST[8j+7:8j] := 0     (else unchanged: merging)
        DEST[MAXVL-1:VL] := 0
    """
    bits = vl(dest)
    count = bits // 8
    mask = active(cpu, dest, count)
    table = elements(read(cpu, src1, bits), 8, count)
    indices = elements(read_selected(cpu, src2, bits, 8, mask), 8, count)
    out = [0 if s & 0x80 else table[j // 16 * 16 + (s & 0xF)] for j, s in enumerate(indices)]
    write_masked(cpu, dest, pack(out, 8), bits, 8)


def _widen(cpu: X86Context, dest, src, source_size: int, size: int, extend) -> None:
    bits = vl(dest)
    count = bits // size
    mask = active(cpu, dest, count)
    narrow = elements(read_selected(cpu, src, count * source_size, source_size, mask), source_size, count)
    write_masked(cpu, dest, pack([extend(x) if mask >> j & 1 else 0 for j, x in enumerate(narrow)], size), bits, size)


def vpmovzxbw(cpu: X86Context, dest, src) -> None:
    """Zero-extend bytes to words (VEX: AVX/AVX2; EVEX: AVX512BW, under a write mask).

        FOR j := 0 TO VL/16 - 1
            IF k1[j] OR *no writemask*: DEST[16j+15:16j] := ZeroExtend(SRC[8j+7:8j])
            ELSE IF *zeroing*: DEST[16j+15:16j] := 0     (else unchanged: merging)
        DEST[MAXVL-1:VL] := 0
    """
    _widen(cpu, dest, src, 8, 16, lambda x: x)


def vpmovzxbd(cpu: X86Context, dest, src) -> None:
    """Zero-extend bytes to dwords (VEX: AVX/AVX2; EVEX: AVX512F, under a write mask).

        FOR j := 0 TO VL/32 - 1
            IF k1[j] OR *no writemask*: DEST[32j+31:32j] := ZeroExtend(SRC[8j+7:8j])
            ELSE IF *zeroing*: DEST[32j+31:32j] := 0     (else unchanged: merging)
        DEST[MAXVL-1:VL] := 0
    """
    _widen(cpu, dest, src, 8, 32, lambda x: x)


def vpmovzxwd(cpu: X86Context, dest, src) -> None:
    """Zero-extend words to dwords (VEX: AVX/AVX2; EVEX: AVX512F, under a write mask).

        FOR j := 0 TO VL/32 - 1
            IF k1[j] OR *no writemask*: DEST[32j+31:32j] := ZeroExtend(SRC[16j+15:16j])
            ELSE IF *zeroing*: DEST[32j+31:32j] := 0     (else unchanged: merging)
        DEST[MAXVL-1:VL] := 0
    """
    _widen(cpu, dest, src, 16, 32, lambda x: x)


def vpmovsxbw(cpu: X86Context, dest, src) -> None:
    """Sign-extend bytes to words (VEX: AVX/AVX2; EVEX: AVX512BW, under a write mask).

        FOR j := 0 TO VL/16 - 1
            IF k1[j] OR *no writemask*: DEST[16j+15:16j] := SignExtend(SRC[8j+7:8j])
            ELSE IF *zeroing*: DEST[16j+15:16j] := 0     (else unchanged: merging)
        DEST[MAXVL-1:VL] := 0
    """
    _widen(cpu, dest, src, 8, 16, lambda x: signed(x, 8))


def vpmovsxbd(cpu: X86Context, dest, src) -> None:
    """Sign-extend bytes to dwords (VEX: AVX/AVX2; EVEX: AVX512F, under a write mask).

        FOR j := 0 TO VL/32 - 1
            IF k1[j] OR *no writemask*: DEST[32j+31:32j] := SignExtend(SRC[8j+7:8j])
            ELSE IF *zeroing*: DEST[32j+31:32j] := 0     (else unchanged: merging)
        DEST[MAXVL-1:VL] := 0
    """
    _widen(cpu, dest, src, 8, 32, lambda x: signed(x, 8))


def vpmovsxwd(cpu: X86Context, dest, src) -> None:
    """Sign-extend words to dwords (VEX: AVX/AVX2; EVEX: AVX512F, under a write mask).

        FOR j := 0 TO VL/32 - 1
            IF k1[j] OR *no writemask*: DEST[32j+31:32j] := SignExtend(SRC[16j+15:16j])
            ELSE IF *zeroing*: DEST[32j+31:32j] := 0     (else unchanged: merging)
        DEST[MAXVL-1:VL] := 0
    """
    _widen(cpu, dest, src, 16, 32, lambda x: signed(x, 16))


def vcvtdq2ps(cpu: X86Context, dest, src) -> None:
    """Convert signed dwords to single precision, rounded to nearest even (MXCSR's default; VEX: AVX; EVEX: AVX512F).

        FOR j := 0 TO VL/32 - 1
            IF k1[j] OR *no writemask*: DEST[32j+31:32j] := Convert_Integer_To_Single_Precision_Floating_Point(SRC[32j+31:32j])
            ELSE IF *zeroing*: DEST[32j+31:32j] := 0     (else unchanged: merging)
        DEST[MAXVL-1:VL] := 0
    """
    _each(cpu, dest, (src,), 32, fp32.from_int32)


def vaddps(cpu: X86Context, dest, src1, src2) -> None:
    """Add packed single-precision values, each sum rounded once (RNE; VEX: AVX; EVEX: AVX512F, under a write mask).

        FOR j := 0 TO VL/32 - 1
            IF k1[j] OR *no writemask*: DEST[32j+31:32j] := SRC1[32j+31:32j] + SRC2[32j+31:32j]
            ELSE IF *zeroing*: DEST[32j+31:32j] := 0     (else unchanged: merging)
        DEST[MAXVL-1:VL] := 0

    A NaN operand gives the first NaN (SRC1, then SRC2) made quiet; inf - inf gives the default NaN FFC00000H.
    """
    _each(cpu, dest, (src1, src2), 32, fp32.add)


def vmulps(cpu: X86Context, dest, src1, src2) -> None:
    """Multiply packed single-precision values, each product rounded once (RNE; VEX: AVX; EVEX: AVX512F).

        FOR j := 0 TO VL/32 - 1
            IF k1[j] OR *no writemask*: DEST[32j+31:32j] := SRC1[32j+31:32j] * SRC2[32j+31:32j]
            ELSE IF *zeroing*: DEST[32j+31:32j] := 0     (else unchanged: merging)
        DEST[MAXVL-1:VL] := 0

    A NaN operand gives the first NaN (SRC1, then SRC2) made quiet; 0 x inf gives the default NaN FFC00000H.
    """
    _each(cpu, dest, (src1, src2), 32, fp32.mul)


def vfmadd231ps(cpu: X86Context, dest, src2, src3) -> None:
    """Fused multiply-add of packed single-precision values: one rounding of the exact SRC2 x SRC3 + DEST
    (VEX: FMA; EVEX: AVX512F, under a write mask).

        FOR j := 0 TO VL/32 - 1
            IF k1[j] OR *no writemask*:
                DEST[32j+31:32j] := RoundFPControl_MXCSR(SRC2[32j+31:32j] * SRC3[32j+31:32j] + DEST[32j+31:32j])
            ELSE IF *zeroing*: DEST[32j+31:32j] := 0     (else unchanged: merging)
        DEST[MAXVL-1:VL] := 0

    A NaN operand gives the first NaN of SRC2, SRC3, DEST (the two factors, then the addend) made quiet,
    signalling or not (measured on an AMD EPYC's AVX-512; the SDM's table leaves the FMA order to the
    form); 0 x inf and inf - inf give the default NaN FFC00000H.
    """
    _each(cpu, dest, (unmasked(dest), src2, src3), 32, lambda c, a, b: fp32.fma(a, b, c, (a, b, c)))


def vcvtne2ps2bf16(cpu: X86Context, dest, src1, src2) -> None:
    """Convert two vectors of single-precision values to one of BF16, SRC2's in the low half (AVX512_BF16).

        FOR i := 0 TO VL/16 - 1
            IF k1[i] OR *no writemask*:
                IF i < VL/32: DEST.word[i] := convert_fp32_to_bfloat16(SRC2.fp32[i])
                ELSE:         DEST.word[i] := convert_fp32_to_bfloat16(SRC1.fp32[i - VL/32])
            ELSE IF *zeroing*: DEST.word[i] := 0     (else unchanged: merging)
        DEST[MAXVL-1:VL] := 0

    convert_fp32_to_bfloat16 rounds to nearest even by an integer bias, reads a denormal as a signed zero,
    and makes a NaN quiet (numerics/simd_fp32.py's to_bf16).
    """
    bits = vl(dest)
    half = bits // 32
    mask = active(cpu, dest, bits // 16)
    low = elements(read_selected(cpu, src2, bits, 32, mask & ((1 << half) - 1)), 32, half)
    high = elements(read(cpu, src1, bits), 32, half)
    words = [fp32.to_bf16(x) for x in low + high]
    write_masked(cpu, dest, pack(words, 16), bits, 16)


def vcvtneps2bf16(cpu: X86Context, dest, src) -> None:
    """Convert single-precision values to BF16 in the low half of DEST (EVEX: AVX512_BF16, under a write mask).

        FOR i := 0 TO VL/32 - 1                 (VL: the source's length)
            IF k1[i] OR *no writemask*: DEST.word[i] := convert_fp32_to_bfloat16(SRC.fp32[i])
            ELSE IF *zeroing*: DEST.word[i] := 0     (else unchanged: merging)
        DEST[MAXVL-1:VL/2] := 0
    """
    bits = vl(src)
    count = bits // 32
    mask = active(cpu, dest, count)
    values = elements(read_selected(cpu, src, bits, 32, mask), 32, count)
    write_masked(cpu, dest, pack([fp32.to_bf16(x) for x in values], 16), bits // 2, 16)


# ---------------------------------------------------------------------------
# What g++ and clang emit besides (issue 27: found in the compiled kernels of tests/x86_amx/compiled): logic,
# shifts, shuffles, element inserts and extracts, 128/256-bit lane moves, and the word multiply-add
# ---------------------------------------------------------------------------


def vpand(cpu: X86Context, dest, src1, src2) -> None:
    """Bitwise AND (VEX: AVX/AVX2).

        DEST[VL-1:0] := SRC1[VL-1:0] BITWISE AND SRC2[VL-1:0];  DEST[MAXVL-1:VL] := 0
    """
    _bitwise(cpu, dest, (src1, src2), 32, lambda a, b: a & b)


def vpandd(cpu: X86Context, dest, src1, src2) -> None:
    """Bitwise AND of dwords under a write mask (AVX512F).

        FOR j: IF k1[j] OR *no writemask*: DEST.dword[j] := SRC1.dword[j] BITWISE AND SRC2.dword[j]
               ELSE IF *zeroing*: DEST.dword[j] := 0     (else unchanged)
        DEST[MAXVL-1:VL] := 0
    """
    _bitwise(cpu, dest, (src1, src2), 32, lambda a, b: a & b)


def vpandq(cpu: X86Context, dest, src1, src2) -> None:
    """Bitwise AND of qwords under a write mask (AVX512F).

        FOR j: IF k1[j] OR *no writemask*: DEST.qword[j] := SRC1.qword[j] BITWISE AND SRC2.qword[j]
               ELSE IF *zeroing*: DEST.qword[j] := 0     (else unchanged)
        DEST[MAXVL-1:VL] := 0
    """
    _bitwise(cpu, dest, (src1, src2), 64, lambda a, b: a & b)


def vpor(cpu: X86Context, dest, src1, src2) -> None:
    """Bitwise OR (VEX: AVX/AVX2).

        DEST[VL-1:0] := SRC1[VL-1:0] BITWISE OR SRC2[VL-1:0];  DEST[MAXVL-1:VL] := 0
    """
    _bitwise(cpu, dest, (src1, src2), 32, lambda a, b: a | b)


def vpord(cpu: X86Context, dest, src1, src2) -> None:
    """Bitwise OR of dwords under a write mask (AVX512F).

        FOR j: IF k1[j] OR *no writemask*: DEST.dword[j] := SRC1.dword[j] BITWISE OR SRC2.dword[j]
               ELSE IF *zeroing*: DEST.dword[j] := 0     (else unchanged)
        DEST[MAXVL-1:VL] := 0
    """
    _bitwise(cpu, dest, (src1, src2), 32, lambda a, b: a | b)


def vporq(cpu: X86Context, dest, src1, src2) -> None:
    """Bitwise OR of qwords under a write mask (AVX512F).

        FOR j: IF k1[j] OR *no writemask*: DEST.qword[j] := SRC1.qword[j] BITWISE OR SRC2.qword[j]
               ELSE IF *zeroing*: DEST.qword[j] := 0     (else unchanged)
        DEST[MAXVL-1:VL] := 0
    """
    _bitwise(cpu, dest, (src1, src2), 64, lambda a, b: a | b)


def vxorps(cpu: X86Context, dest, src1, src2) -> None:
    """Bitwise XOR of single-precision values' bits (VEX: AVX; EVEX: AVX512DQ, under a write mask);
    ``vxorps xmm0, xmm0, xmm0`` is clang's zeroing idiom.

        FOR j: IF k1[j] OR *no writemask*: DEST.dword[j] := SRC1.dword[j] BITWISE XOR SRC2.dword[j]
               ELSE IF *zeroing*: DEST.dword[j] := 0     (else unchanged)
        DEST[MAXVL-1:VL] := 0
    """
    _bitwise(cpu, dest, (src1, src2), 32, lambda a, b: a ^ b)


def _shift_count(cpu: X86Context, count) -> int:
    return count.value & 0xFF if isinstance(count, Imm) else read(cpu, count, 64)


def vpslld(cpu: X86Context, dest, src, count) -> None:
    """Shift dwords left by an imm8 or by COUNT[63:0] of an xmm register or m128 (VEX: AVX/AVX2; EVEX: AVX512F).

        FOR j: IF k1[j] OR *no writemask*:
                   DEST.dword[j] := IF COUNT > 31 THEN 0 ELSE SRC.dword[j] << COUNT
               ELSE IF *zeroing*: DEST.dword[j] := 0     (else unchanged)
        DEST[MAXVL-1:VL] := 0
    """
    n = _shift_count(cpu, count)
    _each(cpu, dest, (src,), 32, lambda a: 0 if n > 31 else a << n)


def vpsrld(cpu: X86Context, dest, src, count) -> None:
    """Shift dwords right, logically, by an imm8 or by COUNT[63:0] (VEX: AVX/AVX2; EVEX: AVX512F).

        FOR j: IF k1[j] OR *no writemask*:
                   DEST.dword[j] := IF COUNT > 31 THEN 0 ELSE SRC.dword[j] >> COUNT   (zeros shifted in)
               ELSE IF *zeroing*: DEST.dword[j] := 0     (else unchanged)
        DEST[MAXVL-1:VL] := 0
    """
    n = _shift_count(cpu, count)
    _each(cpu, dest, (src,), 32, lambda a: 0 if n > 31 else a >> n)


def vpsrad(cpu: X86Context, dest, src, count) -> None:
    """Shift dwords right, arithmetically, by an imm8 or by COUNT[63:0] (VEX: AVX/AVX2; EVEX: AVX512F).

        FOR j: IF k1[j] OR *no writemask*:
                   DEST.dword[j] := SignExtend(SRC.dword[j]) >> MIN(COUNT, 31)   (sign bits shifted in)
               ELSE IF *zeroing*: DEST.dword[j] := 0     (else unchanged)
        DEST[MAXVL-1:VL] := 0
    """
    n = min(_shift_count(cpu, count), 31)
    _each(cpu, dest, (src,), 32, lambda a: signed(a, 32) >> n)


def vpshufd(cpu: X86Context, dest, src, imm8) -> None:
    """Shuffle the dwords of each 128-bit lane by imm8 (VEX: AVX/AVX2; EVEX: AVX512F, under a write mask).

        FOR j := 0 TO VL/32 - 1
            i := imm8[2*(j MOD 4)+1 : 2*(j MOD 4)]
            IF k1[j] OR *no writemask*: DEST.dword[j] := SRC.dword[4*(j DIV 4) + i]
            ELSE IF *zeroing*: DEST.dword[j] := 0     (else unchanged)
        DEST[MAXVL-1:VL] := 0
    """
    bits = vl(dest)
    count = bits // 32
    mask = active(cpu, dest, count)
    table = elements(read_selected(cpu, src, bits, 32, (1 << count) - 1 if mask else 0), 32, count)
    order = imm8.value & 0xFF
    out = [table[j // 4 * 4 + (order >> 2 * (j % 4) & 3)] for j in range(count)]
    write_masked(cpu, dest, pack(out, 32), bits, 32)


def _extract(cpu: X86Context, dest, src, size: int, imm8) -> None:
    count = 128 // size
    value = elements(read(cpu, src, 128), size, count)[imm8.value % count]
    if isinstance(dest, Reg):
        cpu.state.write_gpr(GPR_VIEWS[dest.name], value)  # a 32-bit GPR write zeroes bits 63:32
    else:
        cpu.write_memory(cpu.effective_address(dest), value.to_bytes(size // 8, "little"))


def vpextrd(cpu: X86Context, dest, src, imm8) -> None:
    """Extract the dword imm8[1:0] of an xmm register to a GPR or memory (VEX: AVX; EVEX: AVX512DQ).

        DEST := SRC.dword[imm8[1:0]]   (a 32-bit GPR: bits 63:32 zeroed)
    """
    _extract(cpu, dest, src, 32, imm8)


def vpextrq(cpu: X86Context, dest, src, imm8) -> None:
    """Extract the qword imm8[0] of an xmm register to a GPR or memory (VEX: AVX; EVEX: AVX512DQ).

        DEST := SRC.qword[imm8[0]]
    """
    _extract(cpu, dest, src, 64, imm8)


def _insert(cpu: X86Context, dest, src1, src2, size: int, imm8) -> None:
    count = 128 // size
    values = elements(read(cpu, src1, 128), size, count)
    values[imm8.value % count] = read(cpu, src2, size if isinstance(src2, Mem) else vl(src2)) & ((1 << size) - 1)
    write_vex(cpu, dest, pack(values, size), 128)


def vpinsrb(cpu: X86Context, dest, src1, src2, imm8) -> None:
    """Insert a byte from a GPR or memory into an xmm register (VEX: AVX; EVEX: AVX512BW).

        DEST[127:0] := SRC1[127:0] with byte imm8[3:0] := SRC2[7:0];  DEST[MAXVL-1:128] := 0
    """
    _insert(cpu, dest, src1, src2, 8, imm8)


def vpinsrd(cpu: X86Context, dest, src1, src2, imm8) -> None:
    """Insert a dword from a GPR or memory into an xmm register (VEX: AVX; EVEX: AVX512DQ).

        DEST[127:0] := SRC1[127:0] with dword imm8[1:0] := SRC2[31:0];  DEST[MAXVL-1:128] := 0
    """
    _insert(cpu, dest, src1, src2, 32, imm8)


def vpinsrq(cpu: X86Context, dest, src1, src2, imm8) -> None:
    """Insert a qword from a GPR or memory into an xmm register (VEX: AVX; EVEX: AVX512DQ).

        DEST[127:0] := SRC1[127:0] with qword imm8[0] := SRC2[63:0];  DEST[MAXVL-1:128] := 0
    """
    _insert(cpu, dest, src1, src2, 64, imm8)


def _extract_lane(cpu: X86Context, dest, src, lane_bits: int, size: int, imm8) -> None:
    lanes = vl(src) // lane_bits
    value = read(cpu, src, vl(src)) >> (lane_bits * (imm8.value % lanes)) & ((1 << lane_bits) - 1)
    write_masked(cpu, dest, value, lane_bits, size)


def vextracti128(cpu: X86Context, dest, src, imm8) -> None:
    """Extract the 128-bit lane imm8[0] of a ymm register to an xmm register or memory (AVX2).

        DEST[127:0] := SRC[128*imm8[0]+127 : 128*imm8[0]];  DEST[MAXVL-1:128] := 0 (a register)
    """
    _extract_lane(cpu, dest, src, 128, 128, imm8)


def vextracti32x4(cpu: X86Context, dest, src, imm8) -> None:
    """Extract a 128-bit lane (imm8[0] of a ymm, imm8[1:0] of a zmm register) as dwords under a write mask
    (AVX512F; AVX512VL for a ymm source).

        TMP[127:0] := SRC lane imm8
        FOR j := 0 TO 3: IF k1[j] OR *no writemask*: DEST.dword[j] := TMP.dword[j]
                         ELSE IF *zeroing*: DEST.dword[j] := 0     (else unchanged; memory: not written)
        DEST[MAXVL-1:128] := 0 (a register)
    """
    _extract_lane(cpu, dest, src, 128, 32, imm8)


def vextracti64x4(cpu: X86Context, dest, src, imm8) -> None:
    """Extract the 256-bit half imm8[0] of a zmm register as qwords under a write mask (AVX512F).

        TMP[255:0] := SRC[256*imm8[0]+255 : 256*imm8[0]]
        FOR j := 0 TO 3: IF k1[j] OR *no writemask*: DEST.qword[j] := TMP.qword[j]
                         ELSE IF *zeroing*: DEST.qword[j] := 0     (else unchanged; memory: not written)
        DEST[MAXVL-1:256] := 0 (a register)
    """
    _extract_lane(cpu, dest, src, 256, 64, imm8)


def vbroadcasti128(cpu: X86Context, dest, src) -> None:
    """Broadcast 128 bits of memory to both lanes of a ymm register (AVX2).

        DEST[127:0] := SRC[127:0];  DEST[255:128] := SRC[127:0];  DEST[MAXVL-1:256] := 0
    """
    value = read(cpu, src, 128)
    write_vex(cpu, dest, value << 128 | value, 256)


def vbroadcasti64x4(cpu: X86Context, dest, src) -> None:
    """Broadcast 256 bits of memory to both halves of a zmm register, as qwords under a write mask (AVX512F).

        FOR j := 0 TO 7: IF k1[j] OR *no writemask*: DEST.qword[j] := SRC.qword[j MOD 4]
                         ELSE IF *zeroing*: DEST.qword[j] := 0     (else unchanged)
    """
    value = read(cpu, src, 256)
    write_masked(cpu, dest, value << 256 | value, 512, 64)


def vpmovsxdq(cpu: X86Context, dest, src) -> None:
    """Sign-extend dwords to qwords (VEX: AVX/AVX2; EVEX: AVX512F, under a write mask).

        FOR j: IF k1[j] OR *no writemask*: DEST.qword[j] := SignExtend(SRC.dword[j])
               ELSE IF *zeroing*: DEST.qword[j] := 0     (else unchanged)
        DEST[MAXVL-1:VL] := 0
    """
    _widen(cpu, dest, src, 32, 64, lambda x: signed(x, 32))


def vpmovzxdq(cpu: X86Context, dest, src) -> None:
    """Zero-extend dwords to qwords (VEX: AVX/AVX2; EVEX: AVX512F, under a write mask).

        FOR j: IF k1[j] OR *no writemask*: DEST.qword[j] := ZeroExtend(SRC.dword[j])
               ELSE IF *zeroing*: DEST.qword[j] := 0     (else unchanged)
        DEST[MAXVL-1:VL] := 0
    """
    _widen(cpu, dest, src, 32, 64, lambda x: x)


def vpmaddwd(cpu: X86Context, dest, src1, src2) -> None:
    """Multiply signed words and add adjacent pairs into dwords, wrapping (VEX: AVX/AVX2; EVEX: AVX512BW).

        FOR j: IF k1[j] OR *no writemask*:
                   DEST.dword[j] := SRC1.word[2j+1]*SRC2.word[2j+1] + SRC1.word[2j]*SRC2.word[2j]  (signed, mod 2^32)
               ELSE IF *zeroing*: DEST.dword[j] := 0     (else unchanged)
        DEST[MAXVL-1:VL] := 0
    """
    _each(cpu, dest, (src1, src2), 32, lambda a, b: signed(a, 16) * signed(b, 16)
          + signed(a >> 16, 16) * signed(b >> 16, 16))


def _unpack_words(cpu: X86Context, dest, src1, src2, high: int) -> None:
    bits = vl(dest)
    count = bits // 16
    mask = active(cpu, dest, count)
    a = elements(read(cpu, src1, bits), 16, count)
    b = elements(read_selected(cpu, src2, bits, 16, (1 << count) - 1 if mask else 0), 16, count)
    out = []
    for lane in range(bits // 128):
        for i in range(4):
            out += [a[8 * lane + 4 * high + i], b[8 * lane + 4 * high + i]]
    write_masked(cpu, dest, pack(out, 16), bits, 16)


def vpunpcklwd(cpu: X86Context, dest, src1, src2) -> None:
    """Interleave the low four words of each 128-bit lane of SRC1 and SRC2 (VEX: AVX/AVX2; EVEX: AVX512BW).

        FOR each 128-bit lane, i := 0 TO 3:
            DEST.word[2i] := SRC1.word[i];  DEST.word[2i+1] := SRC2.word[i]   (under the write mask)
        DEST[MAXVL-1:VL] := 0
    """
    _unpack_words(cpu, dest, src1, src2, 0)


def vpunpckhwd(cpu: X86Context, dest, src1, src2) -> None:
    """Interleave the high four words of each 128-bit lane of SRC1 and SRC2 (VEX: AVX/AVX2; EVEX: AVX512BW).

        FOR each 128-bit lane, i := 0 TO 3:
            DEST.word[2i] := SRC1.word[4+i];  DEST.word[2i+1] := SRC2.word[4+i]   (under the write mask)
        DEST[MAXVL-1:VL] := 0
    """
    _unpack_words(cpu, dest, src1, src2, 1)


def vperm2i128(cpu: X86Context, dest, src1, src2, imm8) -> None:
    """Choose each 128-bit half of DEST from the four halves of SRC1 and SRC2, or zero (AVX2).

        FOR h := 0 TO 1:  sel := imm8[4h+1 : 4h]
            DEST[128h+127 : 128h] := IF imm8[4h+3] THEN 0 ELSE (SRC1.lo, SRC1.hi, SRC2.lo, SRC2.hi)[sel]
        DEST[MAXVL-1:256] := 0
    """
    halves = elements(read(cpu, src1, 256), 128, 2) + elements(read(cpu, src2, 256), 128, 2)
    control = imm8.value & 0xFF
    out = [0 if control >> (4 * h + 3) & 1 else halves[control >> (4 * h) & 3] for h in range(2)]
    write_vex(cpu, dest, pack(out, 128), 256)


def vpermt2w(cpu: X86Context, dest, index, table) -> None:
    """Permute words from two tables, DEST (the first, overwritten) and SRC3, by the indices in SRC2
    (AVX512BW; AVX512VL below 512 bits), under a write mask.

        n := VL/16;  id := log2(n)
        FOR j := 0 TO n - 1
            i := SRC2.word[j]
            IF k1[j] OR *no writemask*:
                DEST.word[j] := IF i[id] = 0 THEN DEST.word[i[id-1:0]] ELSE SRC3.word[i[id-1:0]]
            ELSE IF *zeroing*: DEST.word[j] := 0     (else unchanged: merging)
        DEST[MAXVL-1:VL] := 0
    """
    bits = vl(dest)
    count = bits // 16
    mask = active(cpu, dest, count)
    first = elements(read(cpu, unmasked(dest), bits), 16, count)
    second = elements(read_selected(cpu, table, bits, 16, (1 << count) - 1 if mask else 0), 16, count)
    indices = elements(read(cpu, index, bits), 16, count)
    out = [(second if i & count else first)[i % count] for i in indices]
    write_masked(cpu, dest, pack(out, 16), bits, 16)


# ---------------------------------------------------------------------------
# Scalar single precision (issue 27: what compilers emit for float code beside the kernels): the SSE forms
# (two operands, DEST[MAXVL-1:128] kept) and the VEX/EVEX forms (three operands, SRC1's bits 127:32 copied,
# DEST[MAXVL-1:128] zeroed; an EVEX write mask selects element 0 or not).  fp32 is exact and rounded once
# under the default MXCSR (numerics/simd_fp32.py).
# ---------------------------------------------------------------------------

LOW32 = 0xFFFFFFFF


def _scalar_element(cpu: X86Context, src) -> int:
    """SRC[31:0]: an xmm register's low dword or a DWORD of memory."""
    return read(cpu, src, 32) & LOW32


def _scalar_legacy(cpu: X86Context, dest, src, operation) -> None:
    """DEST[31:0] := operation(DEST[31:0], SRC[31:0]); DEST[MAXVL-1:32] unmodified (SSE)."""
    old = read(cpu, dest, 128)
    write_legacy(cpu, dest, old >> 32 << 32 | operation(old & LOW32, _scalar_element(cpu, src)) & LOW32)


def _scalar_vex(cpu: X86Context, dest, src1, src2, operation) -> None:
    """DEST[31:0] := operation(SRC1[31:0], SRC2[31:0]) if k1[0] or no mask (else 0 with {z}, else unchanged);
    DEST[127:32] := SRC1[127:32]; DEST[MAXVL-1:128] := 0 (VEX, EVEX).  A masked-out memory SRC2 is not read."""
    first = read(cpu, src1, 128)
    if active(cpu, dest, 1):
        low = operation(first & LOW32, _scalar_element(cpu, src2)) & LOW32
    else:
        low = 0 if dest.zeroing else read(cpu, unmasked(dest), 32)
    write_vex(cpu, unmasked(dest), first >> 32 << 32 | low, 128)


def movss(cpu: X86Context, dest, src) -> None:
    """Move a single-precision value (SSE).

        MOVSS xmm1, xmm2:  DEST[31:0] := SRC[31:0];  DEST[MAXVL-1:32] unmodified
        MOVSS xmm1, m32:   DEST[31:0] := SRC[31:0];  DEST[127:32] := 0;  DEST[MAXVL-1:128] unmodified
        MOVSS m32, xmm1:   DEST[31:0] := SRC[31:0]
    """
    if isinstance(dest, Mem):
        cpu.write_memory(cpu.effective_address(dest), _scalar_element(cpu, src).to_bytes(4, "little"))
    elif isinstance(src, Mem):
        write_legacy(cpu, dest, _scalar_element(cpu, src))
    else:
        _scalar_legacy(cpu, dest, src, lambda a, b: b)


def vmovss(cpu: X86Context, *operands) -> None:
    """Move a single-precision value (VEX: AVX; EVEX: AVX512F, element 0 under a write mask).

        VMOVSS xmm1 {k1}{z}, xmm2, xmm3:  DEST[31:0] := SRC2[31:0] (masked);  DEST[127:32] := SRC1[127:32]
        VMOVSS xmm1 {k1}{z}, m32:         DEST[31:0] := SRC[31:0] (masked);   DEST[127:32] := 0
        VMOVSS m32 {k1}, xmm1:            DEST[31:0] := SRC[31:0] if k1[0] or no mask (else not written)
        DEST[MAXVL-1:128] := 0 (a register)
    """
    if len(operands) == 3:
        dest, src1, src2 = operands
        _scalar_vex(cpu, dest, src1, src2, lambda a, b: b)
        return
    dest, src = operands
    if isinstance(unmasked(dest), Mem):
        if active(cpu, dest, 1):
            cpu.write_memory(cpu.effective_address(unmasked(dest)), _scalar_element(cpu, src).to_bytes(4, "little"))
        return
    if active(cpu, dest, 1):
        low = _scalar_element(cpu, src)
    else:
        low = 0 if dest.zeroing else read(cpu, unmasked(dest), 32)
    write_vex(cpu, unmasked(dest), low, 128)


def _scalar_pair(name: str, operation, summary: str, formula: str, note: str):
    """The SSE form (NAME xmm1, xmm2/m32) and the VEX/EVEX form (VNAME xmm1 {k1}{z}, xmm2, xmm3/m32) of one
    scalar single-precision operation."""
    def legacy(cpu: X86Context, dest, src) -> None:
        _scalar_legacy(cpu, dest, src, operation)

    def vex(cpu: X86Context, dest, src1, src2) -> None:
        _scalar_vex(cpu, dest, src1, src2, operation)

    legacy.__name__ = legacy.__qualname__ = name
    vex.__name__ = vex.__qualname__ = "v" + name
    legacy.__doc__ = (f"{summary} (SSE).\n\n"
                      f"        DEST[31:0] := {formula.format(a='DEST[31:0]', b='SRC[31:0]')}\n"
                      f"        DEST[MAXVL-1:32] unmodified\n\n    {note}  SRC is an xmm register or a DWORD of "
                      f"memory (no alignment).\n")
    vex.__doc__ = (f"{summary} (VEX: AVX; EVEX: AVX512F, element 0 under a write mask).\n\n"
                   f"        IF k1[0] OR *no writemask*: DEST[31:0] := {formula.format(a='SRC1[31:0]', b='SRC2[31:0]')}\n"
                   f"        ELSE IF *zeroing*: DEST[31:0] := 0     (else unchanged: merging)\n"
                   f"        DEST[127:32] := SRC1[127:32];  DEST[MAXVL-1:128] := 0\n\n    {note}\n")
    return legacy, vex


_NAN_RULE = "A NaN operand gives the first NaN (the first operand, then the second) made quiet."
addss, vaddss = _scalar_pair("addss", fp32.add, "Add scalar single-precision values", "{a} + {b}",
                             "The exact sum rounded once (RNE).  " + _NAN_RULE)
subss, vsubss = _scalar_pair("subss", fp32.sub, "Subtract scalar single-precision values", "{a} - {b}",
                             "The exact difference rounded once (RNE).  " + _NAN_RULE)
mulss, vmulss = _scalar_pair("mulss", fp32.mul, "Multiply scalar single-precision values", "{a} * {b}",
                             "The exact product rounded once (RNE); 0 x inf gives the default NaN FFC00000H.  "
                             + _NAN_RULE)
divss, vdivss = _scalar_pair("divss", fp32.div, "Divide scalar single-precision values", "{a} / {b}",
                             "The exact quotient rounded once (RNE); 0/0 and inf/inf give the default NaN "
                             "FFC00000H, x/0 a signed infinity.  " + _NAN_RULE)
maxss, vmaxss = _scalar_pair("maxss", fp32.maximum, "Maximum of scalar single-precision values",
                             "IF {a} > {b} THEN {a} ELSE {b}",
                             "Both zeros (of any sign) or a NaN in either (quiet or signalling) give the second "
                             "operand, unchanged.")
minss, vminss = _scalar_pair("minss", fp32.minimum, "Minimum of scalar single-precision values",
                             "IF {a} < {b} THEN {a} ELSE {b}",
                             "Both zeros (of any sign) or a NaN in either (quiet or signalling) give the second "
                             "operand, unchanged.")


def _integer_bits(cpu: X86Context, src) -> tuple[int, int]:
    bits = GPR_VIEWS[src.name].bits if isinstance(src, Reg) else src.size * 8
    return read(cpu, src, bits), bits


def cvtsi2ss(cpu: X86Context, dest, src) -> None:
    """Convert a signed doubleword or quadword integer to single precision, rounded to nearest even (SSE).

        DEST[31:0] := Convert_Integer_To_Single_Precision_Floating_Point(SRC)   (r/m32, or r/m64 with REX.W)
        DEST[MAXVL-1:32] unmodified
    """
    value, bits = _integer_bits(cpu, src)
    _scalar_legacy(cpu, dest, dest, lambda a, _b: fp32.from_int(value, bits))


def vcvtsi2ss(cpu: X86Context, dest, src1, src2) -> None:
    """Convert a signed doubleword or quadword integer to single precision, rounded to nearest even
    (VEX: AVX; EVEX: AVX512F).

        DEST[31:0] := Convert_Integer_To_Single_Precision_Floating_Point(SRC2)   (r/m32 or r/m64)
        DEST[127:32] := SRC1[127:32];  DEST[MAXVL-1:128] := 0
    """
    value, bits = _integer_bits(cpu, src2)
    _scalar_vex(cpu, dest, src1, src1, lambda _a, _b: fp32.from_int(value, bits))


def _to_gpr(cpu: X86Context, dest, src, mode: str) -> None:
    bits = GPR_VIEWS[dest.name].bits
    cpu.state.write_gpr(GPR_VIEWS[dest.name], fp32.to_int(_scalar_element(cpu, src), bits, mode))


_INDEFINITE = ("A NaN, an infinity or a value out of range gives the integer indefinite 80000000H "
               "(8000000000000000H for a 64-bit DEST); a 32-bit DEST zeroes bits 63:32 of its register.")


def cvttss2si(cpu: X86Context, dest, src) -> None:
    """Convert a single-precision value to a signed doubleword or quadword integer, truncated (SSE).

        DEST := Convert_Single_Precision_Floating_Point_To_Integer_Truncate(SRC[31:0])
    """
    _to_gpr(cpu, dest, src, "truncate")


def vcvttss2si(cpu: X86Context, dest, src) -> None:
    """Convert a single-precision value to a signed doubleword or quadword integer, truncated (VEX: AVX;
    EVEX: AVX512F).

        DEST := Convert_Single_Precision_Floating_Point_To_Integer_Truncate(SRC[31:0])
    """
    _to_gpr(cpu, dest, src, "truncate")


def cvtss2si(cpu: X86Context, dest, src) -> None:
    """Convert a single-precision value to a signed doubleword or quadword integer, rounded as MXCSR.RC says
    (round to nearest even by default) (SSE).

        DEST := Convert_Single_Precision_Floating_Point_To_Integer(SRC[31:0])
    """
    _to_gpr(cpu, dest, src, "nearest")


def vcvtss2si(cpu: X86Context, dest, src) -> None:
    """Convert a single-precision value to a signed doubleword or quadword integer, rounded to nearest even
    (MXCSR's default) (VEX: AVX; EVEX: AVX512F).

        DEST := Convert_Single_Precision_Floating_Point_To_Integer(SRC[31:0])
    """
    _to_gpr(cpu, dest, src, "nearest")


for _f in (cvttss2si, vcvttss2si, cvtss2si, vcvtss2si):
    _f.__doc__ += "\n    " + _INDEFINITE + "\n"


def _compare_flags(cpu: X86Context, src1, src2) -> None:
    relation = fp32.compare(read(cpu, src1, 32) & LOW32, _scalar_element(cpu, src2))
    flags = cpu.state.rflags & ~(CF | PF | AF | ZF | SF | OF)
    flags |= {"unordered": ZF | PF | CF, "greater": 0, "less": CF, "equal": ZF}[relation]
    cpu.state.set_rflags(flags)


_COMPARE_TEXT = """

        RESULT := OrderedCompare(SRC1[31:0] <> SRC2[31:0])
        CASE (RESULT) OF
            UNORDERED:    ZF, PF, CF := 111
            GREATER_THAN: ZF, PF, CF := 000
            LESS_THAN:    ZF, PF, CF := 001
            EQUAL:        ZF, PF, CF := 100      (-0 equals +0)
        OF, AF, SF := 0
"""


def ucomiss(cpu: X86Context, src1, src2) -> None:
    """Compare two single-precision values, unordered, and set ZF PF CF (SSE); a quiet NaN raises no
    exception (all are masked: the flags are the same as COMISS's)."""
    _compare_flags(cpu, src1, src2)


def comiss(cpu: X86Context, src1, src2) -> None:
    """Compare two single-precision values, ordered, and set ZF PF CF (SSE); any NaN is invalid (masked)."""
    _compare_flags(cpu, src1, src2)


def vucomiss(cpu: X86Context, src1, src2) -> None:
    """Compare two single-precision values, unordered, and set ZF PF CF (VEX: AVX; EVEX: AVX512F)."""
    _compare_flags(cpu, src1, src2)


def vcomiss(cpu: X86Context, src1, src2) -> None:
    """Compare two single-precision values, ordered, and set ZF PF CF (VEX: AVX; EVEX: AVX512F)."""
    _compare_flags(cpu, src1, src2)


for _f in (ucomiss, comiss, vucomiss, vcomiss):
    _f.__doc__ += _COMPARE_TEXT


def _fma_scalar(order: str):
    """VFMADD132SS / 213SS / 231SS: the digits name which operands are multiplied and which is added."""
    def semantics(cpu: X86Context, dest, src2, src3) -> None:
        def one(d: int, s2: int, s3: int) -> int:
            ops = {"1": d, "2": s2, "3": s3}
            a, b, c = ops[order[0]], ops[order[1]], ops[order[2]]
            return fp32.fma(a, b, c, (a, b, c))

        first = read(cpu, unmasked(dest), 128)
        s2 = read(cpu, src2, 32) & LOW32
        if active(cpu, dest, 1):
            low = one(first & LOW32, s2, _scalar_element(cpu, src3))
        else:
            low = 0 if dest.zeroing else first & LOW32
        write_vex(cpu, unmasked(dest), first >> 32 << 32 | low, 128)

    names = {"1": "DEST", "2": "SRC2", "3": "SRC3"}
    semantics.__name__ = semantics.__qualname__ = f"vfmadd{order}ss"
    semantics.__doc__ = (f"Fused multiply-add of single-precision values, rounded once (VEX: FMA; EVEX: AVX512F, "
                         f"element 0 under a write mask).\n\n"
                         f"        IF k1[0] OR *no writemask*:\n"
                         f"            DEST[31:0] := RoundFPControl_MXCSR({names[order[0]]}[31:0] * "
                         f"{names[order[1]]}[31:0] + {names[order[2]]}[31:0])\n"
                         f"        ELSE IF *zeroing*: DEST[31:0] := 0     (else unchanged: merging)\n"
                         f"        DEST[127:32] unchanged;  DEST[MAXVL-1:128] := 0\n\n"
                         f"    A NaN operand gives the first NaN of the two factors, then the addend, made quiet.\n")
    return semantics


vfmadd132ss, vfmadd213ss, vfmadd231ss = (_fma_scalar(o) for o in ("132", "213", "231"))


def roundss(cpu: X86Context, dest, src, imm8) -> None:
    """Round a single-precision value to an integer value by imm8 (SSE4.1).

        DEST[31:0] := Round(SRC[31:0], imm8[1:0] or MXCSR.RC if imm8[2])   (0: nearest even, 1: down,
                      2: up, 3: toward zero; imm8[3] suppresses the precision exception only)
        DEST[MAXVL-1:32] unmodified

    A NaN gives itself made quiet; an infinity or a zero itself; a zero result keeps SRC's sign.
    """
    _scalar_legacy(cpu, dest, src, lambda _a, b: fp32.round_integral(b, imm8.value & 0xF))


def vroundss(cpu: X86Context, dest, src1, src2, imm8) -> None:
    """Round a single-precision value to an integer value by imm8 (VEX: AVX).

        DEST[31:0] := Round(SRC2[31:0], imm8[1:0] or MXCSR.RC if imm8[2])
        DEST[127:32] := SRC1[127:32];  DEST[MAXVL-1:128] := 0

    A NaN gives itself made quiet; an infinity or a zero itself; a zero result keeps SRC2's sign.
    """
    _scalar_vex(cpu, dest, src1, src2, lambda _a, b: fp32.round_integral(b, imm8.value & 0xF))


def vrndscaless(cpu: X86Context, dest, src1, src2, imm8) -> None:
    """Round a single-precision value to a multiple of 2^-M, M := imm8[7:4] (AVX512F, element 0 under a
    write mask).

        IF k1[0] OR *no writemask*: DEST[31:0] := 2^-M * Round(2^M * SRC2[31:0], imm8[1:0] or MXCSR.RC if imm8[2])
        ELSE IF *zeroing*: DEST[31:0] := 0     (else unchanged)
        DEST[127:32] := SRC1[127:32];  DEST[MAXVL-1:128] := 0

    A NaN gives itself made quiet; an infinity or a zero itself; a zero result keeps SRC2's sign.
    """
    _scalar_vex(cpu, dest, src1, src2, lambda _a, b: fp32.round_integral(b, imm8.value & 0xFF))


# ---------------------------------------------------------------------------
# Packed single precision (issue 27: what the auto-vectoriser and intrinsics emit for float loops around the
# kernels): the SSE forms (two operands, 128 bits, DEST[MAXVL-1:128] kept, an m128 aligned) and the VEX/EVEX
# forms (three operands, every width, a write mask on the EVEX ones, DEST[MAXVL-1:VL] zeroed).
# ---------------------------------------------------------------------------


def _legacy_each(cpu: X86Context, dest, src, size: int, operation) -> None:
    """DEST element j := operation(DEST element j, SRC element j) over 128 bits (SSE: bits MAXVL-1:128 kept)."""
    count = 128 // size
    a, b = elements(read(cpu, dest, 128), size, count), elements(read(cpu, src, 128), size, count)
    write_legacy(cpu, dest, pack([operation(x, y) for x, y in zip(a, b)], size))


def _legacy_whole(cpu: X86Context, dest, sources, compute) -> None:
    """DEST[127:0] := compute(128, the sources' 128 bits) (SSE: bits MAXVL-1:128 kept)."""
    write_legacy(cpu, dest, compute(128, *(read(cpu, s, 128) for s in sources)))


def _whole(cpu: X86Context, dest, sources, size: int, compute) -> None:
    """DEST[VL-1:0] := compute(VL, the sources' VL bits) under DEST's write mask of ``size``-bit elements
    (a permute or a lane operation: every element of a source may feed any selected element)."""
    bits = vl(dest)
    count = bits // size
    mask = active(cpu, dest, count)
    values = [read(cpu, s, bits) if not isinstance(s, Mem) else read_selected(cpu, s, bits, size, (1 << count) - 1 if mask else 0)
              for s in sources]
    write_masked(cpu, dest, compute(bits, *values), bits, size)


def _packed_pair(name: str, operation, summary: str, formula: str, note: str, *, evex: str = "AVX512F",
                 legacy: bool = True, vex: bool = True):
    """The SSE form (NAME xmm1, xmm2/m128) and the VEX/EVEX form (VNAME dest {k1}{z}, src1, src2) of one
    element-wise single-precision operation."""
    def sse(cpu: X86Context, dest, src) -> None:
        _legacy_each(cpu, dest, src, 32, operation)

    def avx(cpu: X86Context, dest, src1, src2) -> None:
        _each(cpu, dest, (src1, src2), 32, operation)

    sse.__name__ = sse.__qualname__ = name
    avx.__name__ = avx.__qualname__ = "v" + name
    sse.__doc__ = (f"{summary} (SSE).\n\n"
                   f"        FOR j := 0 TO 3: DEST.fp32[j] := {formula.format(a='DEST.fp32[j]', b='SRC.fp32[j]')}\n"
                   f"        DEST[MAXVL-1:128] unmodified\n\n    {note}  A memory SRC must be 16-byte aligned (#GP(0)).\n")
    avx.__doc__ = (f"{summary} (VEX: AVX; EVEX: {evex}, under a write mask).\n\n"
                   f"        FOR j := 0 TO VL/32 - 1\n"
                   f"            IF k1[j] OR *no writemask*: DEST.fp32[j] := "
                   f"{formula.format(a='SRC1.fp32[j]', b='SRC2.fp32[j]')}\n"
                   f"            ELSE IF *zeroing*: DEST.fp32[j] := 0     (else unchanged: merging)\n"
                   f"        DEST[MAXVL-1:VL] := 0\n\n    {note}\n")
    return sse, avx


addps, _ = _packed_pair("addps", fp32.add, "Add packed single-precision values", "{a} + {b}",
                        "Each sum rounded once (RNE).  " + _NAN_RULE)
subps, vsubps = _packed_pair("subps", fp32.sub, "Subtract packed single-precision values", "{a} - {b}",
                             "Each difference rounded once (RNE).  " + _NAN_RULE)
mulps, _ = _packed_pair("mulps", fp32.mul, "Multiply packed single-precision values", "{a} * {b}",
                        "Each product rounded once (RNE); 0 x inf gives the default NaN FFC00000H.  " + _NAN_RULE)
divps, vdivps = _packed_pair("divps", fp32.div, "Divide packed single-precision values", "{a} / {b}",
                             "Each quotient rounded once (RNE); 0/0 and inf/inf give the default NaN FFC00000H, x/0 "
                             "a signed infinity.  " + _NAN_RULE)
maxps, vmaxps = _packed_pair("maxps", fp32.maximum, "Maximum of packed single-precision values",
                             "IF {a} > {b} THEN {a} ELSE {b}",
                             "Both zeros (of any sign) or a NaN in either (quiet or signalling) give the second "
                             "operand's element, unchanged.")
minps, vminps = _packed_pair("minps", fp32.minimum, "Minimum of packed single-precision values",
                             "IF {a} < {b} THEN {a} ELSE {b}",
                             "Both zeros (of any sign) or a NaN in either (quiet or signalling) give the second "
                             "operand's element, unchanged.")
_BITS_NOTE = "Bitwise, on the values' bits: no exception, a NaN is not special."
andps, vandps = _packed_pair("andps", lambda a, b: a & b, "Bitwise AND of packed single-precision values",
                             "{a} BITWISE AND {b}", _BITS_NOTE, evex="AVX512DQ")
orps, vorps = _packed_pair("orps", lambda a, b: a | b, "Bitwise OR of packed single-precision values",
                           "{a} BITWISE OR {b}", _BITS_NOTE, evex="AVX512DQ")
xorps, _ = _packed_pair("xorps", lambda a, b: a ^ b, "Bitwise XOR of packed single-precision values (xorps xmm0, "
                        "xmm0 is the zeroing idiom)", "{a} BITWISE XOR {b}", _BITS_NOTE, evex="AVX512DQ")
andnps, vandnps = _packed_pair("andnps", lambda a, b: ~a & b, "Bitwise AND NOT of packed single-precision values",
                               "(NOT {a}) BITWISE AND {b}", _BITS_NOTE, evex="AVX512DQ")


def cvtdq2ps(cpu: X86Context, dest, src) -> None:
    """Convert four signed dwords to single precision, rounded to nearest even (SSE2).

        FOR j := 0 TO 3: DEST.fp32[j] := Convert_Integer_To_Single_Precision_Floating_Point(SRC.dword[j])
        DEST[MAXVL-1:128] unmodified

    A memory SRC must be 16-byte aligned (#GP(0)).
    """
    _legacy_each(cpu, dest, src, 32, lambda _a, b: fp32.from_int32(b))


def _converted_to_int(mode: str):
    return lambda x: fp32.to_int(x, 32, mode)


def cvttps2dq(cpu: X86Context, dest, src) -> None:
    """Convert four single-precision values to signed dwords, truncated (SSE2).

        FOR j := 0 TO 3: DEST.dword[j] := Convert_Single_Precision_Floating_Point_To_Integer_Truncate(SRC.fp32[j])
        DEST[MAXVL-1:128] unmodified

    A NaN, an infinity or a value out of range gives the integer indefinite 80000000H.
    """
    convert = _converted_to_int("truncate")
    _legacy_each(cpu, dest, src, 32, lambda _a, b: convert(b))


def cvtps2dq(cpu: X86Context, dest, src) -> None:
    """Convert four single-precision values to signed dwords, rounded to nearest even (MXCSR's default) (SSE2).

        FOR j := 0 TO 3: DEST.dword[j] := Convert_Single_Precision_Floating_Point_To_Integer(SRC.fp32[j])
        DEST[MAXVL-1:128] unmodified

    A NaN, an infinity or a value out of range gives the integer indefinite 80000000H.
    """
    convert = _converted_to_int("nearest")
    _legacy_each(cpu, dest, src, 32, lambda _a, b: convert(b))


def vcvttps2dq(cpu: X86Context, dest, src) -> None:
    """Convert single-precision values to signed dwords, truncated (VEX: AVX; EVEX: AVX512F, under a write mask).

        FOR j := 0 TO VL/32 - 1
            IF k1[j] OR *no writemask*:
                DEST.dword[j] := Convert_Single_Precision_Floating_Point_To_Integer_Truncate(SRC.fp32[j])
            ELSE IF *zeroing*: DEST.dword[j] := 0     (else unchanged: merging)
        DEST[MAXVL-1:VL] := 0

    A NaN, an infinity or a value out of range gives the integer indefinite 80000000H.
    """
    _each(cpu, dest, (src,), 32, _converted_to_int("truncate"))


def vcvtps2dq(cpu: X86Context, dest, src) -> None:
    """Convert single-precision values to signed dwords, rounded to nearest even (VEX: AVX; EVEX: AVX512F).

        FOR j := 0 TO VL/32 - 1
            IF k1[j] OR *no writemask*: DEST.dword[j] := Convert_Single_Precision_Floating_Point_To_Integer(SRC.fp32[j])
            ELSE IF *zeroing*: DEST.dword[j] := 0     (else unchanged: merging)
        DEST[MAXVL-1:VL] := 0

    A NaN, an infinity or a value out of range gives the integer indefinite 80000000H.
    """
    _each(cpu, dest, (src,), 32, _converted_to_int("nearest"))


def _fma_packed(order: str):
    """VFMADD132PS / 213PS: the digits name which operands are multiplied and which is added."""
    def semantics(cpu: X86Context, dest, src2, src3) -> None:
        def one(d: int, s2: int, s3: int) -> int:
            ops = {"1": d, "2": s2, "3": s3}
            a, b, c = ops[order[0]], ops[order[1]], ops[order[2]]
            return fp32.fma(a, b, c, (a, b, c))

        _each(cpu, dest, (unmasked(dest), src2, src3), 32, one)

    names = {"1": "DEST", "2": "SRC2", "3": "SRC3"}
    semantics.__name__ = semantics.__qualname__ = f"vfmadd{order}ps"
    semantics.__doc__ = (f"Fused multiply-add of packed single-precision values, each rounded once (VEX: FMA; "
                         f"EVEX: AVX512F, under a write mask).\n\n"
                         f"        FOR j := 0 TO VL/32 - 1\n"
                         f"            IF k1[j] OR *no writemask*:\n"
                         f"                DEST.fp32[j] := RoundFPControl_MXCSR({names[order[0]]}.fp32[j] * "
                         f"{names[order[1]]}.fp32[j] + {names[order[2]]}.fp32[j])\n"
                         f"            ELSE IF *zeroing*: DEST.fp32[j] := 0     (else unchanged: merging)\n"
                         f"        DEST[MAXVL-1:VL] := 0\n\n"
                         f"    A NaN operand gives the first NaN of the two factors, then the addend, made quiet; "
                         f"0 x inf and inf - inf give the default NaN FFC00000H.\n")
    return semantics


vfmadd132ps, vfmadd213ps = _fma_packed("132"), _fma_packed("213")


def roundps(cpu: X86Context, dest, src, imm8) -> None:
    """Round four single-precision values to integer values by imm8 (SSE4.1).

        FOR j := 0 TO 3: DEST.fp32[j] := Round(SRC.fp32[j], imm8[1:0] or MXCSR.RC if imm8[2])
        DEST[MAXVL-1:128] unmodified

    imm8[1:0]: 0 nearest even, 1 down, 2 up, 3 toward zero; imm8[3] suppresses the precision exception only.
    A NaN gives itself made quiet; an infinity or a zero itself; a zero result keeps the sign.
    """
    control = imm8.value & 0xF
    _legacy_each(cpu, dest, src, 32, lambda _a, b: fp32.round_integral(b, control))


def vroundps(cpu: X86Context, dest, src, imm8) -> None:
    """Round single-precision values to integer values by imm8 (VEX: AVX; 128 or 256 bits).

        FOR j := 0 TO VL/32 - 1: DEST.fp32[j] := Round(SRC.fp32[j], imm8[1:0] or MXCSR.RC if imm8[2])
        DEST[MAXVL-1:VL] := 0

    A NaN gives itself made quiet; an infinity or a zero itself; a zero result keeps the sign.
    """
    control = imm8.value & 0xF
    _each(cpu, dest, (src,), 32, lambda b: fp32.round_integral(b, control))


def vrndscaleps(cpu: X86Context, dest, src, imm8) -> None:
    """Round single-precision values to multiples of 2^-M, M := imm8[7:4] (AVX512F, under a write mask).

        FOR j := 0 TO VL/32 - 1
            IF k1[j] OR *no writemask*:
                DEST.fp32[j] := 2^-M * Round(2^M * SRC.fp32[j], imm8[1:0] or MXCSR.RC if imm8[2])
            ELSE IF *zeroing*: DEST.fp32[j] := 0     (else unchanged: merging)
        DEST[MAXVL-1:VL] := 0

    A NaN gives itself made quiet; an infinity or a zero itself; a zero result keeps the sign.
    """
    control = imm8.value & 0xFF
    _each(cpu, dest, (src,), 32, lambda b: fp32.round_integral(b, control))


def _horizontal(bits: int, a: int, b: int, size: int, operation) -> int:
    """Per 128-bit lane: the pairwise results of A's elements, then of B's."""
    per = 128 // size
    out = []
    for lane in range(bits // 128):
        for source in (a, b):
            x = elements(source >> (128 * lane), size, per)
            out += [operation(x[2 * i], x[2 * i + 1]) for i in range(per // 2)]
    return pack(out, size)


def haddps(cpu: X86Context, dest, src) -> None:
    """Add horizontal pairs of single-precision values (SSE3).

        DEST.fp32[0] := DEST.fp32[0] + DEST.fp32[1];  DEST.fp32[1] := DEST.fp32[2] + DEST.fp32[3]
        DEST.fp32[2] := SRC.fp32[0] + SRC.fp32[1];    DEST.fp32[3] := SRC.fp32[2] + SRC.fp32[3]
        DEST[MAXVL-1:128] unmodified

    Each sum rounded once (RNE); a NaN gives the first NaN of its pair made quiet.  An m128 must be aligned.
    """
    _legacy_whole(cpu, dest, (dest, src), lambda bits, a, b: _horizontal(bits, a, b, 32, fp32.add))


def vhaddps(cpu: X86Context, dest, src1, src2) -> None:
    """Add horizontal pairs of single-precision values in each 128-bit lane (VEX: AVX).

        FOR each 128-bit lane:
            DEST.fp32[0] := SRC1.fp32[0] + SRC1.fp32[1];  DEST.fp32[1] := SRC1.fp32[2] + SRC1.fp32[3]
            DEST.fp32[2] := SRC2.fp32[0] + SRC2.fp32[1];  DEST.fp32[3] := SRC2.fp32[2] + SRC2.fp32[3]
        DEST[MAXVL-1:VL] := 0

    Each sum rounded once (RNE); a NaN gives the first NaN of its pair made quiet.
    """
    bits = vl(dest)
    write_vex(cpu, dest, _horizontal(bits, read(cpu, src1, bits), read(cpu, src2, bits), 32, fp32.add), bits)


def _shuffle_ps(bits: int, a: int, b: int, imm: int) -> int:
    out = []
    for lane in range(bits // 128):
        x, y = elements(a >> (128 * lane), 32, 4), elements(b >> (128 * lane), 32, 4)
        out += [x[imm & 3], x[imm >> 2 & 3], y[imm >> 4 & 3], y[imm >> 6 & 3]]
    return pack(out, 32)


def shufps(cpu: X86Context, dest, src, imm8) -> None:
    """Pick two single-precision values of DEST and two of SRC by imm8 (SSE).

        DEST.fp32[0] := DEST.fp32[imm8[1:0]];  DEST.fp32[1] := DEST.fp32[imm8[3:2]]
        DEST.fp32[2] := SRC.fp32[imm8[5:4]];   DEST.fp32[3] := SRC.fp32[imm8[7:6]]
        DEST[MAXVL-1:128] unmodified
    """
    _legacy_whole(cpu, dest, (dest, src), lambda bits, a, b: _shuffle_ps(bits, a, b, imm8.value & 0xFF))


def vshufps(cpu: X86Context, dest, src1, src2, imm8) -> None:
    """Pick two single-precision values of SRC1 and two of SRC2 by imm8 in each 128-bit lane (VEX: AVX;
    EVEX: AVX512F, under a write mask).

        FOR each 128-bit lane: DEST.fp32[0] := SRC1.fp32[imm8[1:0]];  DEST.fp32[1] := SRC1.fp32[imm8[3:2]]
                               DEST.fp32[2] := SRC2.fp32[imm8[5:4]];  DEST.fp32[3] := SRC2.fp32[imm8[7:6]]
        (each element under the write mask);  DEST[MAXVL-1:VL] := 0
    """
    _whole(cpu, dest, (src1, src2), 32, lambda bits, a, b: _shuffle_ps(bits, a, b, imm8.value & 0xFF))


def _unpack(bits: int, a: int, b: int, size: int, high: int) -> int:
    """Per 128-bit lane: the low (or high) half's elements of A and B, interleaved (A's first)."""
    half = 64 // size
    out = []
    for lane in range(bits // 128):
        x, y = elements(a >> (128 * lane), size, 2 * half), elements(b >> (128 * lane), size, 2 * half)
        for i in range(half):
            out += [x[half * high + i], y[half * high + i]]
    return pack(out, size)


def _unpack_forms(name: str, size: int, high: int, feature: str, evex: str, what: str):
    """The SSE form (NAME xmm1, xmm2/m128) and the VEX/EVEX form of one unpack (interleave)."""
    def sse(cpu: X86Context, dest, src) -> None:
        _legacy_whole(cpu, dest, (dest, src), lambda bits, a, b: _unpack(bits, a, b, size, high))

    def avx(cpu: X86Context, dest, src1, src2) -> None:
        _whole(cpu, dest, (src1, src2), size, lambda bits, a, b: _unpack(bits, a, b, size, high))

    half = 64 // size
    part = "high" if high else "low"
    sse.__name__ = sse.__qualname__ = name
    avx.__name__ = avx.__qualname__ = "v" + name
    first = f"{half * high}" if high else "0"
    sse.__doc__ = (f"Interleave the {part} {what} of DEST and SRC ({feature}).\n\n"
                   f"        FOR i := 0 TO {half - 1}: DEST.e[2i] := DEST.e[{first}+i];  DEST.e[2i+1] := SRC.e[{first}+i]"
                   f"      (e: {size}-bit elements)\n"
                   f"        DEST[MAXVL-1:128] unmodified\n\n    A memory SRC must be 16-byte aligned (#GP(0)).\n")
    avx.__doc__ = (f"Interleave the {part} {what} of each 128-bit lane of SRC1 and SRC2 (VEX: AVX/AVX2; EVEX: "
                   f"{evex}, under a write mask).\n\n"
                   f"        FOR each 128-bit lane, i := 0 TO {half - 1}:\n"
                   f"            DEST.e[2i] := SRC1.e[{first}+i];  DEST.e[2i+1] := SRC2.e[{first}+i]"
                   f"      (e: {size}-bit elements, each under the write mask)\n"
                   f"        DEST[MAXVL-1:VL] := 0\n")
    return sse, avx


unpcklps, vunpcklps = _unpack_forms("unpcklps", 32, 0, "SSE", "AVX512F", "single-precision values")
unpckhps, vunpckhps = _unpack_forms("unpckhps", 32, 1, "SSE", "AVX512F", "single-precision values")
unpcklpd, vunpcklpd = _unpack_forms("unpcklpd", 64, 0, "SSE2", "AVX512F", "double-precision values")
unpckhpd, vunpckhpd = _unpack_forms("unpckhpd", 64, 1, "SSE2", "AVX512F", "double-precision values")


def movhlps(cpu: X86Context, dest, src) -> None:
    """Move the high qword of SRC to the low qword of DEST (SSE; registers only).

        DEST[63:0] := SRC[127:64];  DEST[MAXVL-1:64] unmodified
    """
    old = read(cpu, dest, 128)
    write_legacy(cpu, dest, old >> 64 << 64 | read(cpu, src, 128) >> 64)


def movlhps(cpu: X86Context, dest, src) -> None:
    """Move the low qword of SRC to the high qword of DEST (SSE; registers only).

        DEST[127:64] := SRC[63:0];  DEST[MAXVL-1:128], DEST[63:0] unmodified
    """
    old = read(cpu, dest, 128)
    write_legacy(cpu, dest, (read(cpu, src, 64) << 64) | old & ((1 << 64) - 1))


def movlps(cpu: X86Context, dest, src) -> None:
    """Move two single-precision values (64 bits) between memory and the low qword of an xmm register (SSE).

        MOVLPS xmm1, m64:  DEST[63:0] := SRC[63:0];  DEST[MAXVL-1:64] unmodified
        MOVLPS m64, xmm1:  DEST[63:0] := SRC[63:0]
    """
    if isinstance(dest, Mem):
        cpu.write_memory(cpu.effective_address(dest), read(cpu, src, 64).to_bytes(8, "little"))
        return
    old = read(cpu, dest, 128)
    write_legacy(cpu, dest, old >> 64 << 64 | read(cpu, src, 64))


def movhps(cpu: X86Context, dest, src) -> None:
    """Move two single-precision values (64 bits) between memory and the high qword of an xmm register (SSE).

        MOVHPS xmm1, m64:  DEST[127:64] := SRC[63:0];  DEST[63:0], DEST[MAXVL-1:128] unmodified
        MOVHPS m64, xmm1:  DEST[63:0] := SRC[127:64]
    """
    if isinstance(dest, Mem):
        cpu.write_memory(cpu.effective_address(dest), (read(cpu, src, 128) >> 64).to_bytes(8, "little"))
        return
    old = read(cpu, dest, 128)
    write_legacy(cpu, dest, read(cpu, src, 64) << 64 | old & ((1 << 64) - 1))


def _insert_lane(cpu: X86Context, dest, src1, src2, lane_bits: int, size: int, imm8) -> None:
    bits = vl(dest)
    lanes = bits // lane_bits
    at = imm8.value % lanes * lane_bits
    base = read(cpu, src1, bits)
    mask = active(cpu, dest, bits // size)
    part = read_selected(cpu, src2, lane_bits, size, (1 << (lane_bits // size)) - 1 if mask else 0)
    value = base & ~(((1 << lane_bits) - 1) << at) | part << at
    write_masked(cpu, dest, value, bits, size)


def vinsertf128(cpu: X86Context, dest, src1, src2, imm8) -> None:
    """Insert 128 bits into the lane imm8[0] of a ymm register (AVX).

        DEST[255:0] := SRC1[255:0];  DEST[128*imm8[0]+127 : 128*imm8[0]] := SRC2[127:0];  DEST[MAXVL-1:256] := 0
    """
    _insert_lane(cpu, dest, src1, src2, 128, 128, imm8)


def vinserti128(cpu: X86Context, dest, src1, src2, imm8) -> None:
    """Insert 128 bits of integers into the lane imm8[0] of a ymm register (AVX2).

        DEST[255:0] := SRC1[255:0];  DEST[128*imm8[0]+127 : 128*imm8[0]] := SRC2[127:0];  DEST[MAXVL-1:256] := 0
    """
    _insert_lane(cpu, dest, src1, src2, 128, 128, imm8)


def vinserti32x4(cpu: X86Context, dest, src1, src2, imm8) -> None:
    """Insert 128 bits into a lane (imm8[0] of a ymm, imm8[1:0] of a zmm), as dwords under a write mask (AVX512F).

        TMP := SRC1 with lane imm8 := SRC2[127:0]
        FOR j: IF k1[j] OR *no writemask*: DEST.dword[j] := TMP.dword[j]  ELSE IF *zeroing*: 0  (else unchanged)
        DEST[MAXVL-1:VL] := 0
    """
    _insert_lane(cpu, dest, src1, src2, 128, 32, imm8)


def vinserti64x4(cpu: X86Context, dest, src1, src2, imm8) -> None:
    """Insert 256 bits into the half imm8[0] of a zmm register, as qwords under a write mask (AVX512F).

        TMP := SRC1 with 256-bit half imm8[0] := SRC2[255:0]
        FOR j: IF k1[j] OR *no writemask*: DEST.qword[j] := TMP.qword[j]  ELSE IF *zeroing*: 0  (else unchanged)
    """
    _insert_lane(cpu, dest, src1, src2, 256, 64, imm8)


def vextractf128(cpu: X86Context, dest, src, imm8) -> None:
    """Extract the 128-bit lane imm8[0] of a ymm register to an xmm register or memory (AVX).

        DEST[127:0] := SRC[128*imm8[0]+127 : 128*imm8[0]];  DEST[MAXVL-1:128] := 0 (a register)
    """
    _extract_lane(cpu, dest, src, 128, 128, imm8)


def vextractf32x4(cpu: X86Context, dest, src, imm8) -> None:
    """Extract a 128-bit lane (imm8[0] of a ymm, imm8[1:0] of a zmm) as single-precision values under a write
    mask (AVX512F; AVX512VL for a ymm source).

        TMP[127:0] := SRC lane imm8
        FOR j := 0 TO 3: IF k1[j] OR *no writemask*: DEST.fp32[j] := TMP.fp32[j]
                         ELSE IF *zeroing*: DEST.fp32[j] := 0     (else unchanged; memory: not written)
        DEST[MAXVL-1:128] := 0 (a register)
    """
    _extract_lane(cpu, dest, src, 128, 32, imm8)


def vextracti64x2(cpu: X86Context, dest, src, imm8) -> None:
    """Extract a 128-bit lane (imm8[0] of a ymm, imm8[1:0] of a zmm) as qwords under a write mask (AVX512DQ).

        TMP[127:0] := SRC lane imm8
        FOR j := 0 TO 1: IF k1[j] OR *no writemask*: DEST.qword[j] := TMP.qword[j]
                         ELSE IF *zeroing*: DEST.qword[j] := 0     (else unchanged; memory: not written)
        DEST[MAXVL-1:128] := 0 (a register)
    """
    _extract_lane(cpu, dest, src, 128, 64, imm8)


def _blend_variable(cpu: X86Context, dest, src1, src2, selector, size: int) -> None:
    bits = vl(dest)
    count = bits // size
    a, b = elements(read(cpu, src1, bits), size, count), elements(read(cpu, src2, bits), size, count)
    s = elements(read(cpu, selector, bits), size, count)
    write_vex(cpu, dest, pack([y if m >> (size - 1) else x for x, y, m in zip(a, b, s)], size), bits)


def vblendvps(cpu: X86Context, dest, src1, src2, selector) -> None:
    """Pick each single-precision value from SRC2 where the selector's sign bit is set, else SRC1 (VEX: AVX).

        FOR j := 0 TO VL/32 - 1: DEST.dword[j] := IF SRC4[32j+31] THEN SRC2.dword[j] ELSE SRC1.dword[j]
        DEST[MAXVL-1:VL] := 0
    """
    _blend_variable(cpu, dest, src1, src2, selector, 32)


def vpblendvb(cpu: X86Context, dest, src1, src2, selector) -> None:
    """Pick each byte from SRC2 where the selector byte's top bit is set, else SRC1 (VEX: AVX/AVX2).

        FOR j := 0 TO VL/8 - 1: DEST.byte[j] := IF SRC4[8j+7] THEN SRC2.byte[j] ELSE SRC1.byte[j]
        DEST[MAXVL-1:VL] := 0
    """
    _blend_variable(cpu, dest, src1, src2, selector, 8)


def _blend_masked(cpu: X86Context, dest, src1, src2, size: int) -> None:
    bits = vl(dest)
    count = bits // size
    mask = active(cpu, dest, count)
    a = elements(read(cpu, src1, bits), size, count)
    b = elements(read_selected(cpu, src2, bits, size, mask), size, count)
    zeroing = isinstance(dest, Masked) and dest.zeroing
    out = [y if mask >> j & 1 else (0 if zeroing else x) for j, (x, y) in enumerate(zip(a, b))]
    write_vex(cpu, unmasked(dest), pack(out, size), bits)


def vblendmps(cpu: X86Context, dest, src1, src2) -> None:
    """Blend single-precision values of SRC1 and SRC2 by the write mask (AVX512F).

        FOR j := 0 TO VL/32 - 1
            IF k1[j] OR *no writemask*: DEST.fp32[j] := SRC2.fp32[j]
            ELSE IF *zeroing*: DEST.fp32[j] := 0
            ELSE: DEST.fp32[j] := SRC1.fp32[j]     (SRC1, not DEST's old value)
        DEST[MAXVL-1:VL] := 0
    """
    _blend_masked(cpu, dest, src1, src2, 32)


def vpblendmb(cpu: X86Context, dest, src1, src2) -> None:
    """Blend bytes of SRC1 and SRC2 by the write mask (AVX512BW).

        FOR j := 0 TO VL/8 - 1
            IF k1[j] OR *no writemask*: DEST.byte[j] := SRC2.byte[j]
            ELSE IF *zeroing*: DEST.byte[j] := 0
            ELSE: DEST.byte[j] := SRC1.byte[j]
        DEST[MAXVL-1:VL] := 0
    """
    _blend_masked(cpu, dest, src1, src2, 8)


def vpblendmd(cpu: X86Context, dest, src1, src2) -> None:
    """Blend dwords of SRC1 and SRC2 by the write mask (AVX512F).

        FOR j := 0 TO VL/32 - 1
            IF k1[j] OR *no writemask*: DEST.dword[j] := SRC2.dword[j]
            ELSE IF *zeroing*: DEST.dword[j] := 0
            ELSE: DEST.dword[j] := SRC1.dword[j]
        DEST[MAXVL-1:VL] := 0
    """
    _blend_masked(cpu, dest, src1, src2, 32)


# ---------------------------------------------------------------------------
# Packed integers (issue 27: what the auto-vectoriser emits for integer loops, legacy SSE2 at the x86-64
# baseline and VEX/EVEX above it): add and subtract, logic, compares, shifts, byte shifts, shuffles, unpacks,
# saturating packs, multiplies, and the AVX2/AVX-512 permutes, aligns and down-conversions.
# ---------------------------------------------------------------------------

_SIZE_NAMES = {8: "byte", 16: "word", 32: "dword", 64: "qword"}


def _integer_pair(name: str, size: int, operation, summary: str, formula: str, evex: str,
                  sse: str = "SSE2"):
    """The SSE form (PNAME xmm1, xmm2/m128) and the VEX/EVEX form (VPNAME dest {k1}{z}, src1, src2) of one
    element-wise integer operation on ``size``-bit elements (results wrap to their size)."""
    e = _SIZE_NAMES[size]

    def legacy(cpu: X86Context, dest, src) -> None:
        _legacy_each(cpu, dest, src, size, operation)

    def avx(cpu: X86Context, dest, src1, src2) -> None:
        _each(cpu, dest, (src1, src2), size, operation)

    legacy.__name__ = legacy.__qualname__ = name
    avx.__name__ = avx.__qualname__ = "v" + name
    legacy.__doc__ = (f"{summary} ({sse}).\n\n"
                      f"        FOR j := 0 TO {128 // size - 1}: DEST.{e}[j] := "
                      f"{formula.format(a=f'DEST.{e}[j]', b=f'SRC.{e}[j]')}\n"
                      f"        DEST[MAXVL-1:128] unmodified\n\n    A memory SRC must be 16-byte aligned (#GP(0)).\n")
    avx.__doc__ = (f"{summary} (VEX: AVX/AVX2; EVEX: {evex}, under a write mask).\n\n"
                   f"        FOR j := 0 TO VL/{size} - 1\n"
                   f"            IF k1[j] OR *no writemask*: DEST.{e}[j] := "
                   f"{formula.format(a=f'SRC1.{e}[j]', b=f'SRC2.{e}[j]')}\n"
                   f"            ELSE IF *zeroing*: DEST.{e}[j] := 0     (else unchanged: merging)\n"
                   f"        DEST[MAXVL-1:VL] := 0\n")
    return legacy, avx


paddb, vpaddb = _integer_pair("paddb", 8, lambda a, b: a + b, "Add packed bytes, wrapping", "{a} + {b}", "AVX512BW")
paddw, vpaddw = _integer_pair("paddw", 16, lambda a, b: a + b, "Add packed words, wrapping", "{a} + {b}", "AVX512BW")
paddd, _ = _integer_pair("paddd", 32, lambda a, b: a + b, "Add packed dwords, wrapping", "{a} + {b}", "AVX512F")
paddq, vpaddq = _integer_pair("paddq", 64, lambda a, b: a + b, "Add packed qwords, wrapping", "{a} + {b}", "AVX512F")
psubb, vpsubb = _integer_pair("psubb", 8, lambda a, b: a - b, "Subtract packed bytes, wrapping", "{a} - {b}",
                              "AVX512BW")
psubw, vpsubw = _integer_pair("psubw", 16, lambda a, b: a - b, "Subtract packed words, wrapping", "{a} - {b}",
                              "AVX512BW")
psubd, _ = _integer_pair("psubd", 32, lambda a, b: a - b, "Subtract packed dwords, wrapping", "{a} - {b}", "AVX512F")
psubq, vpsubq = _integer_pair("psubq", 64, lambda a, b: a - b, "Subtract packed qwords, wrapping", "{a} - {b}",
                              "AVX512F")
pand, _ = _integer_pair("pand", 64, lambda a, b: a & b, "Bitwise AND of 128 bits", "{a} BITWISE AND {b}", "-")
por, _ = _integer_pair("por", 64, lambda a, b: a | b, "Bitwise OR of 128 bits", "{a} BITWISE OR {b}", "-")
pandn, vpandn = _integer_pair("pandn", 64, lambda a, b: ~a & b, "Bitwise AND NOT", "(NOT {a}) BITWISE AND {b}", "-")
pmullw, vpmullw = _integer_pair("pmullw", 16, lambda a, b: signed(a, 16) * signed(b, 16),
                                "Multiply packed signed words, keeping the low 16 bits of each product",
                                "LOW16({a} * {b})", "AVX512BW")
pmulld, _ = _integer_pair("pmulld", 32, lambda a, b: signed(a, 32) * signed(b, 32),
                          "Multiply packed signed dwords, keeping the low 32 bits of each product",
                          "LOW32({a} * {b})", "AVX512F", sse="SSE4.1")
pmaddwd, _ = _integer_pair("pmaddwd", 32, lambda a, b: signed(a, 16) * signed(b, 16)
                           + signed(a >> 16, 16) * signed(b >> 16, 16),
                           "Multiply signed words and add adjacent pairs into dwords, wrapping",
                           "{a}.word[1]*{b}.word[1] + {a}.word[0]*{b}.word[0]", "AVX512BW")
pminsd, vpminsd = _integer_pair("pminsd", 32, lambda a, b: min(signed(a, 32), signed(b, 32)),
                                "Minimum of packed signed dwords", "MIN({a}, {b})", "AVX512F", sse="SSE4.1")
pmaxsd, vpmaxsd = _integer_pair("pmaxsd", 32, lambda a, b: max(signed(a, 32), signed(b, 32)),
                                "Maximum of packed signed dwords", "MAX({a}, {b})", "AVX512F", sse="SSE4.1")
pminub, vpminub = _integer_pair("pminub", 8, min, "Minimum of packed unsigned bytes", "MIN({a}, {b})", "AVX512BW")
pmaxub, vpmaxub = _integer_pair("pmaxub", 8, max, "Maximum of packed unsigned bytes", "MAX({a}, {b})", "AVX512BW")
# issue 27, round 2: the rest of the minimum/maximum family (clang's clamps of int64 values: vpminsq, vpmaxsq)
pminsb, vpminsb = _integer_pair("pminsb", 8, lambda a, b: min(signed(a, 8), signed(b, 8)),
                                "Minimum of packed signed bytes", "MIN({a}, {b})", "AVX512BW", sse="SSE4.1")
pmaxsb, vpmaxsb = _integer_pair("pmaxsb", 8, lambda a, b: max(signed(a, 8), signed(b, 8)),
                                "Maximum of packed signed bytes", "MAX({a}, {b})", "AVX512BW", sse="SSE4.1")
pminsw, vpminsw = _integer_pair("pminsw", 16, lambda a, b: min(signed(a, 16), signed(b, 16)),
                                "Minimum of packed signed words", "MIN({a}, {b})", "AVX512BW")
pmaxsw, vpmaxsw = _integer_pair("pmaxsw", 16, lambda a, b: max(signed(a, 16), signed(b, 16)),
                                "Maximum of packed signed words", "MAX({a}, {b})", "AVX512BW")
pminuw, vpminuw = _integer_pair("pminuw", 16, min, "Minimum of packed unsigned words", "MIN({a}, {b})", "AVX512BW",
                                sse="SSE4.1")
pmaxuw, vpmaxuw = _integer_pair("pmaxuw", 16, max, "Maximum of packed unsigned words", "MAX({a}, {b})", "AVX512BW",
                                sse="SSE4.1")
pminud, vpminud = _integer_pair("pminud", 32, min, "Minimum of packed unsigned dwords", "MIN({a}, {b})", "AVX512F",
                                sse="SSE4.1")
pmaxud, vpmaxud = _integer_pair("pmaxud", 32, max, "Maximum of packed unsigned dwords", "MAX({a}, {b})", "AVX512F",
                                sse="SSE4.1")
_, vpminsq = _integer_pair("pminsq", 64, lambda a, b: min(signed(a, 64), signed(b, 64)),
                           "Minimum of packed signed qwords", "MIN({a}, {b})", "AVX512F")
_, vpmaxsq = _integer_pair("pmaxsq", 64, lambda a, b: max(signed(a, 64), signed(b, 64)),
                           "Maximum of packed signed qwords", "MAX({a}, {b})", "AVX512F")
_, vpminuq = _integer_pair("pminuq", 64, min, "Minimum of packed unsigned qwords", "MIN({a}, {b})",
                           "AVX512F")
_, vpmaxuq = _integer_pair("pmaxuq", 64, max, "Maximum of packed unsigned qwords", "MAX({a}, {b})",
                           "AVX512F")
for _qword in (vpminsq, vpmaxsq, vpminuq, vpmaxuq):  # EVEX only: no VEX row
    _qword.__doc__ = _qword.__doc__.replace("VEX: AVX/AVX2; EVEX: AVX512F", "EVEX: AVX512F, AVX512VL below 512 bits")
pavgb, vpavgb = _integer_pair("pavgb", 8, lambda a, b: (a + b + 1) >> 1, "Average of packed unsigned bytes, rounded up",
                              "({a} + {b} + 1) >> 1", "AVX512BW")


def _compare_forms(name: str, size: int, relation, text: str, sse: str = "SSE2"):
    """PCMPxx (SSE), VPCMPxx (VEX: a vector of all-ones or zero elements; EVEX: a mask in an opmask register,
    ANDed with k2 when one is given)."""
    e = _SIZE_NAMES[size]
    test = lambda a, b: relation(a, b, size)  # noqa: E731

    def legacy(cpu: X86Context, dest, src) -> None:
        _legacy_each(cpu, dest, src, size, lambda a, b: -1 if test(a, b) else 0)

    def avx(cpu: X86Context, dest, src1, src2) -> None:
        target = unmasked(dest)
        if isinstance(target, Reg) and opmask_number(target.name) is not None:
            bits = vl(src1)
            count = bits // size
            mask = active(cpu, dest, count)
            a = elements(read(cpu, src1, bits), size, count)
            b = elements(read_selected(cpu, src2, bits, size, mask), size, count)
            result = sum(1 << j for j in range(count) if mask >> j & 1 and test(a[j], b[j]))
            cpu.state.write_opmask(opmask_number(target.name), result)
            return
        _each(cpu, dest, (src1, src2), size, lambda a, b: -1 if test(a, b) else 0)

    legacy.__name__ = legacy.__qualname__ = name
    avx.__name__ = avx.__qualname__ = "v" + name
    legacy.__doc__ = (f"Compare packed {e}s for {text} ({sse}).\n\n"
                      f"        FOR j := 0 TO {128 // size - 1}: DEST.{e}[j] := IF DEST.{e}[j] {text} SRC.{e}[j] "
                      f"THEN all ones ELSE 0\n        DEST[MAXVL-1:128] unmodified\n")
    avx.__doc__ = (f"Compare packed {e}s for {text} (VEX: AVX/AVX2, into a vector; EVEX: AVX-512, into an "
                   f"opmask register).\n\n"
                   f"        VEX:  FOR j: DEST.{e}[j] := IF SRC1.{e}[j] {text} SRC2.{e}[j] THEN all ones ELSE 0;  "
                   f"DEST[MAXVL-1:VL] := 0\n"
                   f"        EVEX: FOR j: k1[j] := IF (k2[j] OR *no writemask*) AND SRC1.{e}[j] {text} SRC2.{e}[j] "
                   f"THEN 1 ELSE 0;  k1[MAX_KL-1:VL/{size}] := 0\n")
    return legacy, avx


_equal = lambda a, b, size: a == b  # noqa: E731
_greater = lambda a, b, size: signed(a, size) > signed(b, size)  # noqa: E731
pcmpeqb, vpcmpeqb = _compare_forms("pcmpeqb", 8, _equal, "equality")
pcmpeqw, vpcmpeqw = _compare_forms("pcmpeqw", 16, _equal, "equality")
pcmpeqd, vpcmpeqd = _compare_forms("pcmpeqd", 32, _equal, "equality")
pcmpgtb, vpcmpgtb = _compare_forms("pcmpgtb", 8, _greater, "signed greater than (>)")
pcmpgtw, vpcmpgtw = _compare_forms("pcmpgtw", 16, _greater, "signed greater than (>)")
pcmpgtd, vpcmpgtd = _compare_forms("pcmpgtd", 32, _greater, "signed greater than (>)")


def _shift(size: int, kind: str, n: int):
    if kind == "left":
        return lambda a: 0 if n >= size else a << n
    if kind == "logical":
        return lambda a: 0 if n >= size else a >> n
    return lambda a: signed(a, size) >> min(n, size - 1)


def _shift_forms(name: str, size: int, kind: str):
    """PSxx (SSE2: by imm8 or xmm/m128's low qword) and VPSxx (VEX/EVEX) of ``size``-bit elements."""
    e = _SIZE_NAMES[size]

    def legacy(cpu: X86Context, dest, count) -> None:
        shift = _shift(size, kind, _shift_count(cpu, count))
        _legacy_each(cpu, dest, dest, size, lambda a, _b: shift(a))

    def avx(cpu: X86Context, dest, src, count) -> None:
        _each(cpu, dest, (src,), size, _shift(size, kind, _shift_count(cpu, count)))

    rule = {"left": f"IF COUNT > {size - 1} THEN 0 ELSE {{x}} << COUNT",
            "logical": f"IF COUNT > {size - 1} THEN 0 ELSE {{x}} >> COUNT   (zeros in)",
            "arithmetic": f"SignExtend({{x}}) >> MIN(COUNT, {size - 1})   (sign bits in)"}[kind]
    legacy.__name__ = legacy.__qualname__ = name
    avx.__name__ = avx.__qualname__ = "v" + name
    legacy.__doc__ = (f"Shift packed {e}s {'left' if kind == 'left' else 'right, ' + kind + 'ly'} by an imm8 or by "
                      f"COUNT[63:0] of an xmm register or m128 (SSE2).\n\n"
                      f"        FOR j := 0 TO {128 // size - 1}: DEST.{e}[j] := {rule.format(x=f'DEST.{e}[j]')}\n"
                      f"        DEST[MAXVL-1:128] unmodified\n")
    avx.__doc__ = (f"Shift packed {e}s {'left' if kind == 'left' else 'right, ' + kind + 'ly'} by an imm8 or by "
                   f"COUNT[63:0] (VEX: AVX/AVX2; EVEX: AVX-512, under a write mask).\n\n"
                   f"        FOR j: IF k1[j] OR *no writemask*: DEST.{e}[j] := {rule.format(x=f'SRC.{e}[j]')}\n"
                   f"               ELSE IF *zeroing*: DEST.{e}[j] := 0     (else unchanged)\n"
                   f"        DEST[MAXVL-1:VL] := 0\n")
    return legacy, avx


psllw, vpsllw = _shift_forms("psllw", 16, "left")
pslld, _ = _shift_forms("pslld", 32, "left")
psllq, vpsllq = _shift_forms("psllq", 64, "left")
psrlw, vpsrlw = _shift_forms("psrlw", 16, "logical")
psrld, _ = _shift_forms("psrld", 32, "logical")
psrlq, vpsrlq = _shift_forms("psrlq", 64, "logical")
psraw, vpsraw = _shift_forms("psraw", 16, "arithmetic")
psrad, _ = _shift_forms("psrad", 32, "arithmetic")


def _byte_shift(bits: int, value: int, n: int, left: bool) -> int:
    out = 0
    for lane in range(bits // 128):
        x = value >> (128 * lane) & ((1 << 128) - 1)
        y = 0 if n > 15 else (x << 8 * n if left else x >> 8 * n) & ((1 << 128) - 1)
        out |= y << (128 * lane)
    return out


def pslldq(cpu: X86Context, dest, imm8) -> None:
    """Shift 128 bits left by imm8 bytes, zeros in (SSE2).

        TEMP := MIN(imm8, 16);  DEST[127:0] := DEST[127:0] << (TEMP * 8);  DEST[MAXVL-1:128] unmodified
    """
    write_legacy(cpu, dest, _byte_shift(128, read(cpu, dest, 128), imm8.value & 0xFF, True))


def psrldq(cpu: X86Context, dest, imm8) -> None:
    """Shift 128 bits right by imm8 bytes, zeros in (SSE2).

        TEMP := MIN(imm8, 16);  DEST[127:0] := DEST[127:0] >> (TEMP * 8);  DEST[MAXVL-1:128] unmodified
    """
    write_legacy(cpu, dest, _byte_shift(128, read(cpu, dest, 128), imm8.value & 0xFF, False))


def vpslldq(cpu: X86Context, dest, src, imm8) -> None:
    """Shift each 128-bit lane left by imm8 bytes, zeros in (VEX: AVX/AVX2; EVEX: AVX512BW; no write mask).

        FOR each 128-bit lane: DEST.lane := SRC.lane << (MIN(imm8, 16) * 8);  DEST[MAXVL-1:VL] := 0
    """
    bits = vl(dest)
    write_vex(cpu, dest, _byte_shift(bits, read(cpu, src, bits), imm8.value & 0xFF, True), bits)


def vpsrldq(cpu: X86Context, dest, src, imm8) -> None:
    """Shift each 128-bit lane right by imm8 bytes, zeros in (VEX: AVX/AVX2; EVEX: AVX512BW; no write mask).

        FOR each 128-bit lane: DEST.lane := SRC.lane >> (MIN(imm8, 16) * 8);  DEST[MAXVL-1:VL] := 0
    """
    bits = vl(dest)
    write_vex(cpu, dest, _byte_shift(bits, read(cpu, src, bits), imm8.value & 0xFF, False), bits)


def pshufd(cpu: X86Context, dest, src, imm8) -> None:
    """Shuffle the dwords of SRC by imm8 (SSE2).

        FOR j := 0 TO 3: DEST.dword[j] := SRC.dword[imm8[2j+1:2j]]
        DEST[MAXVL-1:128] unmodified

    A memory SRC must be 16-byte aligned (#GP(0)).
    """
    table = elements(read(cpu, src, 128), 32, 4)
    order = imm8.value & 0xFF
    write_legacy(cpu, dest, pack([table[order >> 2 * j & 3] for j in range(4)], 32))


def _integer_unpacks():
    out = {}
    for size, letter in ((8, "bw"), (16, "wd"), (32, "dq"), (64, "qdq")):
        for high, part in ((0, "l"), (1, "h")):
            name = f"punpck{part}{letter}"
            evex = "AVX512BW" if size <= 16 else "AVX512F"
            out[name], out["v" + name] = _unpack_forms(name, size, high, "SSE2", evex, f"{_SIZE_NAMES[size]}s")
    return out


_unpacks = _integer_unpacks()
punpcklbw, vpunpcklbw, punpckhbw, vpunpckhbw = (_unpacks[n] for n in ("punpcklbw", "vpunpcklbw", "punpckhbw",
                                                                       "vpunpckhbw"))
punpcklwd, punpckhwd = _unpacks["punpcklwd"], _unpacks["punpckhwd"]
punpckldq, vpunpckldq, punpckhdq, vpunpckhdq = (_unpacks[n] for n in ("punpckldq", "vpunpckldq", "punpckhdq",
                                                                       "vpunpckhdq"))
punpcklqdq, vpunpcklqdq, punpckhqdq, vpunpckhqdq = (_unpacks[n] for n in ("punpcklqdq", "vpunpcklqdq",
                                                                           "punpckhqdq", "vpunpckhqdq"))


def _saturate(x: int, bits: int, is_signed: bool) -> int:
    low, high = (-(1 << (bits - 1)), (1 << (bits - 1)) - 1) if is_signed else (0, (1 << bits) - 1)
    return min(max(x, low), high)


def _pack_lanes(bits: int, a: int, b: int, size: int, is_signed: bool) -> int:
    """Per 128-bit lane: A's signed ``size``-bit elements saturated to size/2 bits, then B's."""
    per = 128 // size
    out = []
    for lane in range(bits // 128):
        for source in (a, b):
            out += [_saturate(signed(x, size), size // 2, is_signed) for x in elements(source >> (128 * lane), size, per)]
    return pack(out, size // 2)


def _pack_forms(name: str, size: int, is_signed: bool, sse: str, evex: str):
    narrow = _SIZE_NAMES[size // 2]
    rule = f"Saturate{'Signed' if is_signed else 'Unsigned'}{_SIZE_NAMES[size].capitalize()}To" \
           f"{'Signed' if is_signed else 'Unsigned'}{narrow.capitalize()}"

    def legacy(cpu: X86Context, dest, src) -> None:
        _legacy_whole(cpu, dest, (dest, src), lambda bits, a, b: _pack_lanes(bits, a, b, size, is_signed))

    def avx(cpu: X86Context, dest, src1, src2) -> None:
        _whole(cpu, dest, (src1, src2), size // 2, lambda bits, a, b: _pack_lanes(bits, a, b, size, is_signed))

    legacy.__name__ = legacy.__qualname__ = name
    avx.__name__ = avx.__qualname__ = "v" + name
    what = f"signed {_SIZE_NAMES[size]}s to {'signed' if is_signed else 'unsigned'} {narrow}s with saturation"
    legacy.__doc__ = (f"Pack {what} ({sse}).\n\n"
                      f"        DEST.{narrow}[0..{128 // size - 1}] := {rule}(DEST.{_SIZE_NAMES[size]}[0..{128 // size - 1}])\n"
                      f"        DEST.{narrow}[{128 // size}..{256 // size - 1}] := {rule}(SRC.{_SIZE_NAMES[size]}"
                      f"[0..{128 // size - 1}])\n        DEST[MAXVL-1:128] unmodified\n")
    avx.__doc__ = (f"Pack {what}, per 128-bit lane (VEX: AVX/AVX2; EVEX: {evex}, under a write mask).\n\n"
                   f"        FOR each 128-bit lane: DEST.lane := {rule}(SRC1.lane), then {rule}(SRC2.lane)\n"
                   f"        (each {narrow} under the write mask);  DEST[MAXVL-1:VL] := 0\n")
    return legacy, avx


packsswb, vpacksswb = _pack_forms("packsswb", 16, True, "SSE2", "AVX512BW")
packssdw, vpackssdw = _pack_forms("packssdw", 32, True, "SSE2", "AVX512BW")
packuswb, vpackuswb = _pack_forms("packuswb", 16, False, "SSE2", "AVX512BW")
packusdw, vpackusdw = _pack_forms("packusdw", 32, False, "SSE4.1", "AVX512BW")


def _phadd(bits: int, a: int, b: int) -> int:
    return _horizontal(bits, a, b, 32, lambda x, y: (x + y) & LOW32)


def phaddd(cpu: X86Context, dest, src) -> None:
    """Add horizontal pairs of dwords, wrapping (SSSE3).

        DEST.dword[0] := DEST.dword[0] + DEST.dword[1];  DEST.dword[1] := DEST.dword[2] + DEST.dword[3]
        DEST.dword[2] := SRC.dword[0] + SRC.dword[1];    DEST.dword[3] := SRC.dword[2] + SRC.dword[3]
        DEST[MAXVL-1:128] unmodified
    """
    _legacy_whole(cpu, dest, (dest, src), _phadd)


def vphaddd(cpu: X86Context, dest, src1, src2) -> None:
    """Add horizontal pairs of dwords in each 128-bit lane, wrapping (VEX: AVX/AVX2).

        FOR each 128-bit lane:
            DEST.dword[0] := SRC1.dword[0] + SRC1.dword[1];  DEST.dword[1] := SRC1.dword[2] + SRC1.dword[3]
            DEST.dword[2] := SRC2.dword[0] + SRC2.dword[1];  DEST.dword[3] := SRC2.dword[2] + SRC2.dword[3]
        DEST[MAXVL-1:VL] := 0
    """
    bits = vl(dest)
    write_vex(cpu, dest, _phadd(bits, read(cpu, src1, bits), read(cpu, src2, bits)), bits)


def pshufb(cpu: X86Context, dest, src) -> None:
    """Shuffle the bytes of DEST by the indices in SRC (SSSE3).

        FOR j := 0 TO 15: DEST.byte[j] := IF SRC.byte[j][7] THEN 0 ELSE DEST_OLD.byte[SRC.byte[j][3:0]]
        DEST[MAXVL-1:128] unmodified
    """
    def shuffle(bits, a, b):
        table = elements(a, 8, 16)
        return pack([0 if s & 0x80 else table[s & 0xF] for s in elements(b, 8, 16)], 8)

    _legacy_whole(cpu, dest, (dest, src), shuffle)


def _permq_imm(bits: int, value: int, imm: int) -> int:
    q = elements(value, 64, bits // 64)
    return pack([q[j // 4 * 4 + (imm >> 2 * (j % 4) & 3)] for j in range(bits // 64)], 64)


def vpermq(cpu: X86Context, dest, src1, src2=None) -> None:
    """Permute qwords: by imm8 within each 256-bit half (VEX ymm: AVX2; EVEX: AVX512F), or by the indices of a
    vector (EVEX: VPERMQ dest, index, src), under a write mask.

        imm8:  FOR j: DEST.qword[j] := SRC.qword[4*(j DIV 4) + imm8[2*(j MOD 4)+1 : 2*(j MOD 4)]]
        index: FOR j: DEST.qword[j] := SRC.qword[INDEX.qword[j] MOD (VL/64)]
        (each qword under the write mask);  DEST[MAXVL-1:VL] := 0
    """
    if isinstance(src2, Imm):
        _whole(cpu, dest, (src1,), 64, lambda bits, v: _permq_imm(bits, v, src2.value & 0xFF))
        return
    bits = vl(dest)
    count = bits // 64
    table = elements(read(cpu, src2, bits), 64, count)
    _each(cpu, dest, (src1,), 64, lambda i: table[i % count])


def _permute2(cpu: X86Context, dest, index, first, second, size: int) -> None:
    """DEST element j := (FIRST, SECOND)[bit log2(n) of index j][index j MOD n] under DEST's write mask."""
    bits = vl(dest)
    count = bits // size
    mask = active(cpu, dest, count)
    a = elements(read(cpu, first, bits), size, count)
    b = elements(read_selected(cpu, second, bits, size, (1 << count) - 1 if mask else 0), size, count)
    indices = elements(read(cpu, index, bits), size, count)
    write_masked(cpu, dest, pack([(b if i & count else a)[i % count] for i in indices], size), bits, size)


def vpermt2b(cpu: X86Context, dest, index, table) -> None:
    """Permute bytes from two tables, DEST (the first, overwritten) and SRC3, by the indices in SRC2
    (AVX512_VBMI; AVX512VL below 512 bits), under a write mask.

        FOR j := 0 TO VL/8 - 1:  i := SRC2.byte[j]
            DEST.byte[j] := IF i[log2(VL/8)] = 0 THEN DEST.byte[i MOD VL/8] ELSE SRC3.byte[i MOD VL/8]
        (each byte under the write mask);  DEST[MAXVL-1:VL] := 0
    """
    _permute2(cpu, dest, index, unmasked(dest), table, 8)


def vpermi2b(cpu: X86Context, dest, first, second) -> None:
    """Permute bytes from two tables, SRC2 and SRC3, by the indices in DEST (overwritten) (AVX512_VBMI),
    under a write mask.

        FOR j := 0 TO VL/8 - 1:  i := DEST.byte[j]
            DEST.byte[j] := IF i[log2(VL/8)] = 0 THEN SRC2.byte[i MOD VL/8] ELSE SRC3.byte[i MOD VL/8]
        (each byte under the write mask);  DEST[MAXVL-1:VL] := 0
    """
    _permute2(cpu, dest, unmasked(dest), first, second, 8)


def vpermi2w(cpu: X86Context, dest, first, second) -> None:
    """Permute words from two tables, SRC2 and SRC3, by the indices in DEST (overwritten) (AVX512BW), under a
    write mask.

        FOR j := 0 TO VL/16 - 1:  i := DEST.word[j]
            DEST.word[j] := IF i[log2(VL/16)] = 0 THEN SRC2.word[i MOD VL/16] ELSE SRC3.word[i MOD VL/16]
        (each word under the write mask);  DEST[MAXVL-1:VL] := 0
    """
    _permute2(cpu, dest, unmasked(dest), first, second, 16)


def vpermt2d(cpu: X86Context, dest, index, table) -> None:
    """Permute dwords from two tables, DEST (the first, overwritten) and SRC3, by the indices in SRC2
    (AVX512F), under a write mask.

        FOR j := 0 TO VL/32 - 1:  i := SRC2.dword[j]
            DEST.dword[j] := IF i[log2(VL/32)] = 0 THEN DEST.dword[i MOD VL/32] ELSE SRC3.dword[i MOD VL/32]
        (each dword under the write mask);  DEST[MAXVL-1:VL] := 0
    """
    _permute2(cpu, dest, index, unmasked(dest), table, 32)


def _align(bits: int, a: int, b: int, size: int, imm: int) -> int:
    count = bits // size
    joined = b | a << bits  # SRC1:SRC2, SRC2 in the low half
    return joined >> (size * (imm % count)) & ((1 << bits) - 1)


def valignd(cpu: X86Context, dest, src1, src2, imm8) -> None:
    """Shift the concatenation SRC1:SRC2 right by imm8 dwords and keep the low VL bits (AVX512F), under a
    write mask.

        TEMP := (SRC1[VL-1:0] << VL) OR SRC2[VL-1:0];  n := imm8 MOD (VL/32)
        FOR j: DEST.dword[j] := TEMP.dword[j + n]     (under the write mask);  DEST[MAXVL-1:VL] := 0
    """
    _whole(cpu, dest, (src1, src2), 32, lambda bits, a, b: _align(bits, a, b, 32, imm8.value & 0xFF))


def valignq(cpu: X86Context, dest, src1, src2, imm8) -> None:
    """Shift the concatenation SRC1:SRC2 right by imm8 qwords and keep the low VL bits (AVX512F), under a
    write mask.

        TEMP := (SRC1[VL-1:0] << VL) OR SRC2[VL-1:0];  n := imm8 MOD (VL/64)
        FOR j: DEST.qword[j] := TEMP.qword[j + n]     (under the write mask);  DEST[MAXVL-1:VL] := 0
    """
    _whole(cpu, dest, (src1, src2), 64, lambda bits, a, b: _align(bits, a, b, 64, imm8.value & 0xFF))


def _shuffle_lanes(bits: int, a: int, b: int, imm: int) -> int:
    lanes = bits // 128
    x, y = elements(a, 128, lanes), elements(b, 128, lanes)
    if lanes == 2:
        return pack([x[imm & 1], y[imm >> 1 & 1]], 128)
    return pack([x[imm & 3], x[imm >> 2 & 3], y[imm >> 4 & 3], y[imm >> 6 & 3]], 128)


def vshufi64x2(cpu: X86Context, dest, src1, src2, imm8) -> None:
    """Pick 128-bit lanes: the low half of DEST's from SRC1, the high half's from SRC2, by imm8 (AVX512F;
    ymm and zmm), as qwords under a write mask.

        zmm: DEST.lane[0] := SRC1.lane[imm8[1:0]];  DEST.lane[1] := SRC1.lane[imm8[3:2]]
             DEST.lane[2] := SRC2.lane[imm8[5:4]];  DEST.lane[3] := SRC2.lane[imm8[7:6]]
        ymm: DEST.lane[0] := SRC1.lane[imm8[0]];    DEST.lane[1] := SRC2.lane[imm8[1]]
    """
    _whole(cpu, dest, (src1, src2), 64, lambda bits, a, b: _shuffle_lanes(bits, a, b, imm8.value & 0xFF))


def vshufi32x4(cpu: X86Context, dest, src1, src2, imm8) -> None:
    """Pick 128-bit lanes as VSHUFI64X2 does, as dwords under a write mask (AVX512F; ymm and zmm).

        zmm: DEST.lane[0] := SRC1.lane[imm8[1:0]];  DEST.lane[1] := SRC1.lane[imm8[3:2]]
             DEST.lane[2] := SRC2.lane[imm8[5:4]];  DEST.lane[3] := SRC2.lane[imm8[7:6]]
        ymm: DEST.lane[0] := SRC1.lane[imm8[0]];    DEST.lane[1] := SRC2.lane[imm8[1]]
    """
    _whole(cpu, dest, (src1, src2), 32, lambda bits, a, b: _shuffle_lanes(bits, a, b, imm8.value & 0xFF))


def _down_convert(name: str, size: int, narrow: int, saturation: str, feature: str):
    """VPMOV[S|US]{size}{narrow}: each element converted to ``narrow`` bits (truncated, or saturated signed or
    unsigned) into the low part of DEST, under a write mask; a memory DEST gets only the selected elements."""
    e, n = _SIZE_NAMES[size], _SIZE_NAMES[narrow]

    def convert(x: int) -> int:
        if saturation == "signed":
            return _saturate(signed(x, size), narrow, True)
        if saturation == "unsigned":
            return _saturate(x, narrow, False)
        return x

    def semantics(cpu: X86Context, dest, src) -> None:
        bits = vl(src)
        count = bits // size
        values = [convert(x) for x in elements(read(cpu, src, bits), size, count)]
        mask = active(cpu, dest, count)
        target = unmasked(dest)
        if isinstance(target, Mem):
            write_masked(cpu, dest, pack(values, narrow), count * narrow, narrow)
            return
        old = read(cpu, target, count * narrow)
        zeroing = isinstance(dest, Masked) and dest.zeroing
        out = [v if mask >> j & 1 else (0 if zeroing else old >> (narrow * j) & ((1 << narrow) - 1))
               for j, v in enumerate(values)]
        write_vex(cpu, target, pack(out, narrow), 128 if count * narrow <= 128 else 256)

    rule = {"": f"TruncateTo{n.capitalize()}", "signed": f"SaturateSigned{e.capitalize()}ToSigned{n.capitalize()}",
            "unsigned": f"SaturateUnsigned{e.capitalize()}ToUnsigned{n.capitalize()}"}[saturation]
    semantics.__name__ = semantics.__qualname__ = name
    semantics.__doc__ = (f"Down-convert {e}s to {n}s, {'truncated' if not saturation else saturation + ' saturated'} "
                         f"({feature}; AVX512VL below 512 bits), under a write mask.\n\n"
                         f"        FOR j := 0 TO VL/{size} - 1\n"
                         f"            IF k1[j] OR *no writemask*: DEST.{n}[j] := {rule}(SRC.{e}[j])\n"
                         f"            ELSE IF *zeroing*: DEST.{n}[j] := 0     (else unchanged; memory: not written)\n"
                         f"        a register DEST: DEST[MAXVL-1:VL*{narrow}/{size}] := 0\n")
    return semantics


vpmovdb = _down_convert("vpmovdb", 32, 8, "", "AVX512F")
vpmovsdb = _down_convert("vpmovsdb", 32, 8, "signed", "AVX512F")
vpmovusdb = _down_convert("vpmovusdb", 32, 8, "unsigned", "AVX512F")
vpmovdw = _down_convert("vpmovdw", 32, 16, "", "AVX512F")
vpmovsdw = _down_convert("vpmovsdw", 32, 16, "signed", "AVX512F")
vpmovusdw = _down_convert("vpmovusdw", 32, 16, "unsigned", "AVX512F")
vpmovqd = _down_convert("vpmovqd", 64, 32, "", "AVX512F")
vpmovwb = _down_convert("vpmovwb", 16, 8, "", "AVX512BW")
vpmovswb = _down_convert("vpmovswb", 16, 8, "signed", "AVX512BW")
vpmovuswb = _down_convert("vpmovuswb", 16, 8, "unsigned", "AVX512BW")
vpmovqb = _down_convert("vpmovqb", 64, 8, "", "AVX512F")
vpmovsqb = _down_convert("vpmovsqb", 64, 8, "signed", "AVX512F")
vpmovusqb = _down_convert("vpmovusqb", 64, 8, "unsigned", "AVX512F")
vpmovqw = _down_convert("vpmovqw", 64, 16, "", "AVX512F")
vpmovsqw = _down_convert("vpmovsqw", 64, 16, "signed", "AVX512F")
vpmovusqw = _down_convert("vpmovusqw", 64, 16, "unsigned", "AVX512F")
vpmovsqd = _down_convert("vpmovsqd", 64, 32, "signed", "AVX512F")
vpmovusqd = _down_convert("vpmovusqd", 64, 32, "unsigned", "AVX512F")


def vpmovsxbq(cpu: X86Context, dest, src) -> None:
    """Sign-extend bytes to qwords (VEX: AVX/AVX2; EVEX: AVX512F, under a write mask).

        FOR j: IF k1[j] OR *no writemask*: DEST.qword[j] := SignExtend(SRC.byte[j])
               ELSE IF *zeroing*: DEST.qword[j] := 0     (else unchanged)
        DEST[MAXVL-1:VL] := 0
    """
    _widen(cpu, dest, src, 8, 64, lambda x: signed(x, 8))


def vpmovzxbq(cpu: X86Context, dest, src) -> None:
    """Zero-extend bytes to qwords (VEX: AVX/AVX2; EVEX: AVX512F, under a write mask).

        FOR j: IF k1[j] OR *no writemask*: DEST.qword[j] := ZeroExtend(SRC.byte[j])
               ELSE IF *zeroing*: DEST.qword[j] := 0     (else unchanged)
        DEST[MAXVL-1:VL] := 0
    """
    _widen(cpu, dest, src, 8, 64, lambda x: x)


# ---------------------------------------------------------------------------
# Opmask logic (issue 27: what compilers emit to build and combine the masks of tails and compares): each
# reads and writes the low 8, 16, 32 or 64 bits of k registers (B: AVX512DQ, W: AVX512F, D/Q: AVX512BW, KADDB/W
# and KTESTB/W: AVX512DQ) and zeroes DEST[MAX_KL-1:size].
# ---------------------------------------------------------------------------

_K_SIZES = {"b": 8, "w": 16, "d": 32, "q": 64}
_K_FEATURES = {"b": "AVX512DQ", "w": "AVX512F", "d": "AVX512BW", "q": "AVX512BW"}


def _k(cpu: X86Context, operand) -> int:
    return cpu.state.read_opmask(opmask_number(operand.name))


def _k_forms(stem: str, operation, formula: str, summary: str, operands: int = 3):
    out = {}
    for suffix, size in _K_SIZES.items():
        ones = (1 << size) - 1

        def binary(cpu: X86Context, dest, src1, src2, size=size, ones=ones) -> None:
            cpu.state.write_opmask(opmask_number(dest.name), operation(_k(cpu, src1), _k(cpu, src2), size) & ones)

        def unary(cpu: X86Context, dest, src, size=size, ones=ones) -> None:
            cpu.state.write_opmask(opmask_number(dest.name), operation(_k(cpu, src), 0, size) & ones)

        semantics = binary if operands == 3 else unary
        name = f"{stem}{suffix}"
        feature = "AVX512DQ" if stem == "kadd" and suffix in "bw" else _K_FEATURES[suffix]
        semantics.__name__ = semantics.__qualname__ = name
        semantics.__doc__ = (f"{summary} ({feature}).\n\n"
                             f"        DEST[{size - 1}:0] := {formula.format(n=size - 1, size=size)};  "
                             f"DEST[MAX_KL-1:{size}] := 0\n")
        out[name] = semantics
    return out


_k_table = {}
_k_table.update(_k_forms("kand", lambda a, b, s: a & b, "SRC1[{n}:0] BITWISE AND SRC2[{n}:0]",
                         "AND two masks"))
_k_table.update(_k_forms("kandn", lambda a, b, s: ~a & b, "(NOT SRC1[{n}:0]) BITWISE AND SRC2[{n}:0]",
                         "AND NOT of two masks"))
_k_table.update(_k_forms("kor", lambda a, b, s: a | b, "SRC1[{n}:0] BITWISE OR SRC2[{n}:0]", "OR two masks"))
_k_table.update(_k_forms("kxnor", lambda a, b, s: ~(a ^ b), "NOT (SRC1[{n}:0] BITWISE XOR SRC2[{n}:0])",
                         "XNOR two masks (kxnorw k1, k1, k1 sets all 16 bits)"))
_k_table.update(_k_forms("kadd", lambda a, b, s: a + b, "SRC1[{n}:0] + SRC2[{n}:0]   (mod 2^{size})",
                         "Add two masks"))
_k_table.update(_k_forms("knot", lambda a, _b, s: ~a, "BITWISE NOT SRC[{n}:0]", "NOT of a mask", operands=2))
kandb, kandw, kandd, kandq = (_k_table[f"kand{s}"] for s in "bwdq")
kandnb, kandnw, kandnd, kandnq = (_k_table[f"kandn{s}"] for s in "bwdq")
korb, korw, kord, korq = (_k_table[f"kor{s}"] for s in "bwdq")
kxnorb, kxnorw, kxnord, kxnorq = (_k_table[f"kxnor{s}"] for s in "bwdq")
kaddb, kaddw, kaddd, kaddq = (_k_table[f"kadd{s}"] for s in "bwdq")
knotb, knotw, knotd, knotq = (_k_table[f"knot{s}"] for s in "bwdq")


def _kshift_forms(left: bool):
    out = {}
    for suffix, size in _K_SIZES.items():
        def semantics(cpu: X86Context, dest, src, imm8, size=size) -> None:
            count, value = imm8.value & 0xFF, _k(cpu, src) & ((1 << size) - 1)
            result = 0 if count > size - 1 else (value << count if left else value >> count)
            cpu.state.write_opmask(opmask_number(dest.name), result & ((1 << size) - 1))

        name = f"kshift{'l' if left else 'r'}{suffix}"
        semantics.__name__ = semantics.__qualname__ = name
        semantics.__doc__ = (f"Shift a mask {'left' if left else 'right'} by imm8, zeros in ({_K_FEATURES[suffix]}).\n\n"
                             f"        COUNT := imm8[7:0]\n"
                             f"        DEST[{size - 1}:0] := IF COUNT <= {size - 1} THEN SRC[{size - 1}:0] "
                             f"{'<<' if left else '>>'} COUNT ELSE 0;  DEST[MAX_KL-1:{size}] := 0\n")
        out[name] = semantics
    return out


_k_table.update(_kshift_forms(True))
_k_table.update(_kshift_forms(False))
kshiftlb, kshiftlw, kshiftld, kshiftlq = (_k_table[f"kshiftl{s}"] for s in "bwdq")
kshiftrb, kshiftrw, kshiftrd, kshiftrq = (_k_table[f"kshiftr{s}"] for s in "bwdq")


def _kunpck(cpu: X86Context, dest, src1, src2, half: int) -> None:
    ones = (1 << half) - 1
    cpu.state.write_opmask(opmask_number(dest.name), (_k(cpu, src1) & ones) << half | _k(cpu, src2) & ones)


def kunpckbw(cpu: X86Context, dest, src1, src2) -> None:
    """Join the low bytes of two masks into a word (AVX512F).

        DEST[7:0] := SRC2[7:0];  DEST[15:8] := SRC1[7:0];  DEST[MAX_KL-1:16] := 0
    """
    _kunpck(cpu, dest, src1, src2, 8)


def kunpckwd(cpu: X86Context, dest, src1, src2) -> None:
    """Join the low words of two masks into a dword (AVX512BW).

        DEST[15:0] := SRC2[15:0];  DEST[31:16] := SRC1[15:0];  DEST[MAX_KL-1:32] := 0
    """
    _kunpck(cpu, dest, src1, src2, 16)


def kunpckdq(cpu: X86Context, dest, src1, src2) -> None:
    """Join the low dwords of two masks into a qword (AVX512BW).

        DEST[31:0] := SRC2[31:0];  DEST[63:32] := SRC1[31:0]
    """
    _kunpck(cpu, dest, src1, src2, 32)


def _ktest_forms():
    out = {}
    for suffix, size in _K_SIZES.items():
        def semantics(cpu: X86Context, src1, src2, size=size) -> None:
            ones = (1 << size) - 1
            a, b = _k(cpu, src1) & ones, _k(cpu, src2) & ones
            flags = cpu.state.rflags & ~(CF | PF | AF | ZF | SF | OF)
            flags |= (ZF if a & b == 0 else 0) | (CF if ~a & b & ones == 0 else 0)
            cpu.state.set_rflags(flags)

        name = f"ktest{suffix}"
        semantics.__name__ = semantics.__qualname__ = name
        semantics.__doc__ = (f"Test two masks' {size} bits, setting ZF and CF "
                             f"({'AVX512DQ' if suffix in 'bw' else 'AVX512BW'}).\n\n"
                             f"        ZF := IF (SRC1[{size - 1}:0] BITWISE AND SRC2[{size - 1}:0]) = 0 THEN 1 ELSE 0\n"
                             f"        CF := IF ((NOT SRC1[{size - 1}:0]) BITWISE AND SRC2[{size - 1}:0]) = 0 THEN 1 "
                             f"ELSE 0\n        OF, SF, AF, PF := 0\n")
        out[name] = semantics
    return out


_k_table.update(_ktest_forms())
ktestb, ktestw, ktestd, ktestq = (_k_table[f"ktest{s}"] for s in "bwdq")


# ---------------------------------------------------------------------------
# Compares with a predicate (issue 27: clang's clamps and masked tails): CMPPS/CMPSS (SSE, into a vector of
# all-ones or zero elements), VCMPPS/VCMPSS (VEX into a vector, EVEX into an opmask register ANDed with k2)
# and VPCMP[U]B/W/D/Q (EVEX, into an opmask).  objdump prints the predicate in the mnemonic (vcmpltps
# ymm0,ymm1,ymm2 is VCMPPS with imm8 = 1); the forms print and read it so (forms/vector.py's CompareForm).
# ---------------------------------------------------------------------------

# imm8[3:0]'s predicates (imm8[4] only chooses which raise the invalid exception on a quiet NaN: masked, the
# result is the same): the relations (less, equal, greater, unordered) each is true for
FP_PREDICATES = ("eq", "lt", "le", "unord", "neq", "nlt", "nle", "ord", "eq_uq", "nge", "ngt", "false", "neq_oq",
                 "ge", "gt", "true", "eq_os", "lt_oq", "le_oq", "unord_s", "neq_us", "nlt_uq", "nle_uq", "ord_s",
                 "eq_us", "nge_uq", "ngt_uq", "false_os", "neq_os", "ge_oq", "gt_oq", "true_us")
_FP_TRUE_FOR = ({"equal"}, {"less"}, {"less", "equal"}, {"unordered"}, {"less", "greater", "unordered"},
                {"equal", "greater", "unordered"}, {"greater", "unordered"}, {"less", "equal", "greater"},
                {"equal", "unordered"}, {"less", "unordered"}, {"less", "equal", "unordered"}, set(),
                {"less", "greater"}, {"greater", "equal"}, {"greater"}, {"less", "equal", "greater", "unordered"})
INTEGER_PREDICATES = ("eq", "lt", "le", "false", "neq", "nlt", "nle", "true")  # VPCMP's imm8[2:0]


def fp_predicate(a: int, b: int, imm8: int) -> bool:
    """Whether fp32 a and b meet predicate imm8[3:0] (the SDM's CMPPS table)."""
    return fp32.compare(a, b) in _FP_TRUE_FOR[imm8 & 0xF]


def integer_predicate(a: int, b: int, imm8: int) -> bool:
    """Whether a and b (already signed or unsigned as the form reads them) meet VPCMP's predicate imm8[2:0]."""
    return (a == b, a < b, a <= b, False, a != b, a >= b, a > b, True)[imm8 & 7]


_FP_TABLE = """
        imm8[3:0]: 0 EQ, 1 LT, 2 LE, 3 UNORD, 4 NEQ, 5 NLT, 6 NLE, 7 ORD, 8 EQ_UQ, 9 NGE, 10 NGT, 11 FALSE,
        12 NEQ_OQ, 13 GE, 14 GT, 15 TRUE (16-31: the same relations, signalling on quiet NaNs or not);
        a NaN operand is UNORDERED: only UNORD, NEQ, NLT, NLE, EQ_UQ, NGE, NGT and TRUE hold.
"""


def cmpps(cpu: X86Context, dest, src, imm8) -> None:
    """Compare packed single-precision values by predicate imm8[2:0] (SSE); cmpltps xmm1, xmm2 is imm8 = 1.

        FOR j := 0 TO 3: DEST.dword[j] := IF CMP(DEST.fp32[j], SRC.fp32[j], imm8) THEN FFFFFFFFH ELSE 0
        DEST[MAXVL-1:128] unmodified
    """
    _legacy_each(cpu, dest, src, 32, lambda a, b: LOW32 if fp_predicate(a, b, imm8.value & 7) else 0)


def cmpss(cpu: X86Context, dest, src, imm8) -> None:
    """Compare scalar single-precision values by predicate imm8[2:0] (SSE); cmpeqss xmm1, xmm2 is imm8 = 0.

        DEST[31:0] := IF CMP(DEST[31:0], SRC[31:0], imm8) THEN FFFFFFFFH ELSE 0;  DEST[MAXVL-1:32] unmodified
    """
    _scalar_legacy(cpu, dest, src, lambda a, b: LOW32 if fp_predicate(a, b, imm8.value & 7) else 0)


def _compare_into_mask(cpu: X86Context, dest, src1, src2, size: int, bits: int, test) -> None:
    count = bits // size
    mask = active(cpu, dest, count)
    a = elements(read(cpu, src1, bits), size, count)
    b = elements(read_selected(cpu, src2, bits, size, mask), size, count)
    cpu.state.write_opmask(opmask_number(unmasked(dest).name),
                           sum(1 << j for j in range(count) if mask >> j & 1 and test(a[j], b[j])))


def vcmpps(cpu: X86Context, dest, src1, src2, imm8) -> None:
    """Compare packed single-precision values by predicate imm8[4:0] (VEX: AVX, into a vector; EVEX: AVX512F,
    into an opmask register, under k2); vcmpltps ymm1, ymm2, ymm3 is imm8 = 1.

        VEX:  FOR j: DEST.dword[j] := IF CMP(SRC1.fp32[j], SRC2.fp32[j], imm8) THEN FFFFFFFFH ELSE 0
              DEST[MAXVL-1:VL] := 0
        EVEX: FOR j: k1[j] := IF (k2[j] OR *no writemask*) AND CMP(SRC1.fp32[j], SRC2.fp32[j], imm8) THEN 1 ELSE 0
              k1[MAX_KL-1:VL/32] := 0
    """
    test = lambda a, b: fp_predicate(a, b, imm8.value)  # noqa: E731
    target = unmasked(dest)
    if opmask_number(target.name) is not None:
        _compare_into_mask(cpu, dest, src1, src2, 32, vl(src1), test)
        return
    _each(cpu, dest, (src1, src2), 32, lambda a, b: LOW32 if test(a, b) else 0)


def vcmpss(cpu: X86Context, dest, src1, src2, imm8) -> None:
    """Compare scalar single-precision values by predicate imm8[4:0] (VEX: AVX, into DEST[31:0]; EVEX:
    AVX512F, into k1[0], under k2[0]); vcmpeqss xmm1, xmm2, xmm3 is imm8 = 0.

        VEX:  DEST[31:0] := IF CMP(SRC1[31:0], SRC2[31:0], imm8) THEN FFFFFFFFH ELSE 0
              DEST[127:32] := SRC1[127:32];  DEST[MAXVL-1:128] := 0
        EVEX: k1[0] := IF (k2[0] OR *no writemask*) AND CMP(SRC1[31:0], SRC2[31:0], imm8) THEN 1 ELSE 0
              k1[MAX_KL-1:1] := 0
    """
    test = lambda a, b: fp_predicate(a, b, imm8.value)  # noqa: E731
    target = unmasked(dest)
    if opmask_number(target.name) is not None:
        mask = active(cpu, dest, 1)
        hit = bool(mask) and test(read(cpu, src1, 32) & LOW32, _scalar_element(cpu, src2))
        cpu.state.write_opmask(opmask_number(target.name), int(hit))
        return
    _scalar_vex(cpu, dest, src1, src2, lambda a, b: LOW32 if test(a, b) else 0)


for _f in (cmpps, cmpss, vcmpps, vcmpss):
    _f.__doc__ += _FP_TABLE


def _integer_compare(name: str, size: int, is_signed: bool, feature: str):
    e = _SIZE_NAMES[size]

    def semantics(cpu: X86Context, dest, src1, src2, imm8) -> None:
        read_as = (lambda x: signed(x, size)) if is_signed else (lambda x: x)
        _compare_into_mask(cpu, dest, src1, src2, size, vl(src1),
                           lambda a, b: integer_predicate(read_as(a), read_as(b), imm8.value))

    semantics.__name__ = semantics.__qualname__ = name
    semantics.__doc__ = (f"Compare packed {'signed' if is_signed else 'unsigned'} {e}s by predicate imm8[2:0] into an "
                         f"opmask register ({feature}; AVX512VL below 512 bits), under k2.\n\n"
                         f"        FOR j := 0 TO VL/{size} - 1\n"
                         f"            k1[j] := IF (k2[j] OR *no writemask*) AND CMP(SRC1.{e}[j], SRC2.{e}[j], imm8) "
                         f"THEN 1 ELSE 0\n        k1[MAX_KL-1:VL/{size}] := 0\n\n"
                         f"        imm8[2:0]: 0 EQ, 1 LT, 2 LE, 3 FALSE, 4 NEQ, 5 NLT (>=), 6 NLE (>), 7 TRUE\n")
    return semantics


vpcmpb, vpcmpub = _integer_compare("vpcmpb", 8, True, "AVX512BW"), _integer_compare("vpcmpub", 8, False, "AVX512BW")
vpcmpw, vpcmpuw = _integer_compare("vpcmpw", 16, True, "AVX512BW"), _integer_compare("vpcmpuw", 16, False, "AVX512BW")
vpcmpd, vpcmpud = _integer_compare("vpcmpd", 32, True, "AVX512F"), _integer_compare("vpcmpud", 32, False, "AVX512F")
vpcmpq, vpcmpuq = _integer_compare("vpcmpq", 64, True, "AVX512F"), _integer_compare("vpcmpuq", 64, False, "AVX512F")


# ---------------------------------------------------------------------------
# The rest of the VNNI family (issue 27): the saturating VPDPBUSDS and the word forms VPDPWSSD/VPDPWSSDS; EVEX
# (AVX512_VNNI, under a write mask) and VEX (AVX-VNNI, which objdump and GNU as write with a {vex} prefix: the
# forms "{vex} vpdpbusd" and kin, g++ and clang's choice for 128/256-bit intrinsics under -march=sapphirerapids)
# ---------------------------------------------------------------------------


def _saturate32(x: int) -> int:
    return _saturate(x, 32, True)


def vpdpbusds(cpu: X86Context, dest, src1, src2) -> None:
    """Multiply unsigned bytes of SRC1 by signed bytes of SRC2, add each group of four to a dword of DEST, with
    signed saturation (EVEX: AVX512_VNNI, under a write mask; VEX, written {vex}: AVX-VNNI).

        FOR i := 0 TO VL/32 - 1
            IF k1[i] OR *no writemask*:
                DEST.dword[i] := SIGNED_DWORD_SATURATE(DEST.dword[i] + SUM(t = 0..3) ZeroExtend(SRC1.byte[4i+t])
                                                                       * SignExtend(SRC2.byte[4i+t]))
            ELSE IF *zeroing*: DEST.dword[i] := 0     (else unchanged: merging)
        DEST[MAXVL-1:VL] := 0
    """
    def dot(c: int, a: int, b: int) -> int:
        return _saturate32(signed(c, 32) + sum((a >> 8 * t & 0xFF) * signed(b >> 8 * t, 8) for t in range(4)))

    _each(cpu, dest, (unmasked(dest), src1, src2), 32, dot)


def _word_dot(c: int, a: int, b: int) -> int:
    return signed(c, 32) + signed(a, 16) * signed(b, 16) + signed(a >> 16, 16) * signed(b >> 16, 16)


def vpdpwssd(cpu: X86Context, dest, src1, src2) -> None:
    """Multiply signed words of SRC1 and SRC2, add each pair to a dword of DEST, wrapping (EVEX: AVX512_VNNI,
    under a write mask; VEX, written {vex}: AVX-VNNI).

        FOR i := 0 TO VL/32 - 1
            IF k1[i] OR *no writemask*:
                DEST.dword[i] := DEST.dword[i] + SRC1.word[2i]*SRC2.word[2i] + SRC1.word[2i+1]*SRC2.word[2i+1]
            ELSE IF *zeroing*: DEST.dword[i] := 0     (else unchanged: merging)
        DEST[MAXVL-1:VL] := 0
    """
    _each(cpu, dest, (unmasked(dest), src1, src2), 32, _word_dot)


def vpdpwssds(cpu: X86Context, dest, src1, src2) -> None:
    """Multiply signed words of SRC1 and SRC2, add each pair to a dword of DEST, with signed saturation (EVEX:
    AVX512_VNNI, under a write mask; VEX, written {vex}: AVX-VNNI).

        FOR i := 0 TO VL/32 - 1
            IF k1[i] OR *no writemask*:
                DEST.dword[i] := SIGNED_DWORD_SATURATE(DEST.dword[i] + SRC1.word[2i]*SRC2.word[2i]
                                                                      + SRC1.word[2i+1]*SRC2.word[2i+1])
            ELSE IF *zeroing*: DEST.dword[i] := 0     (else unchanged: merging)
        DEST[MAXVL-1:VL] := 0
    """
    _each(cpu, dest, (unmasked(dest), src1, src2), 32, lambda c, a, b: _saturate32(_word_dot(c, a, b)))


# ---------------------------------------------------------------------------
# Half precision (issue 27: what AMX-FP16 kernels convert before and after the tiles): F16C (VEX) and AVX512F
# ---------------------------------------------------------------------------


def vcvtph2ps(cpu: X86Context, dest, src) -> None:
    """Convert half-precision values to single precision, exactly (VEX: F16C; EVEX: AVX512F, under a write mask).

        FOR j := 0 TO VL/32 - 1
            IF k1[j] OR *no writemask*: DEST.fp32[j] := Convert_FP16_To_FP32(SRC.fp16[j])
            ELSE IF *zeroing*: DEST.fp32[j] := 0     (else unchanged: merging)
        DEST[MAXVL-1:VL] := 0

    Every fp16 value, denormals too, is exact in fp32; a NaN keeps its payload, made quiet.
    """
    _widen(cpu, dest, src, 16, 32, fp32.from_fp16)


def vcvtps2ph(cpu: X86Context, dest, src, imm8) -> None:
    """Convert single-precision values to half precision, rounded by imm8 (VEX: F16C; EVEX: AVX512F, under a
    write mask), into an xmm/ymm register or memory.

        FOR j := 0 TO VL/32 - 1
            IF k1[j] OR *no writemask*: DEST.fp16[j] := Convert_FP32_To_FP16(SRC.fp32[j], imm8)
            ELSE IF *zeroing*: DEST.fp16[j] := 0     (else unchanged; memory: not written)
        a register DEST: DEST[MAXVL-1:VL/2] := 0

    imm8[1:0]: 0 nearest even, 1 down, 2 up, 3 toward zero; imm8[2] set: MXCSR.RC (nearest even by default).
    One rounding with gradual underflow; past 65504: infinity, or 65504 where the mode rounds toward zero; a
    NaN keeps its top payload bits, made quiet.
    """
    control = imm8.value & 7
    mode = "nearest" if control & 4 else fp32.ROUNDING_MODES[control & 3]
    bits = vl(src)
    count = bits // 32
    values = [fp32.to_fp16(x, mode) for x in elements(read(cpu, src, bits), 32, count)]
    mask = active(cpu, dest, count)
    target = unmasked(dest)
    if isinstance(target, Mem):
        write_masked(cpu, dest, pack(values, 16), count * 16, 16)
        return
    old = read(cpu, target, count * 16)
    zeroing = isinstance(dest, Masked) and dest.zeroing
    out = [v if mask >> j & 1 else (0 if zeroing else old >> (16 * j) & 0xFFFF) for j, v in enumerate(values)]
    write_vex(cpu, target, pack(out, 16), 128 if count * 16 <= 128 else 256)

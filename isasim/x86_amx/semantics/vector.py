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

This module is the SDM's vocabulary the vector families share (vl, read, write_legacy, write_vex, elements,
write masks) and the moves, zeroing idioms, broadcasts and opmask moves; the other families have a module each
(issue 27): vector_arithmetic (integer/fp32 arithmetic, BF16, VNNI, logic, shifts, shuffles, lanes),
vector_single (scalar and packed single precision, half precision), vector_packed_integer, vector_masks (opmask
logic, compares), vector_integer (dword-pair and qword multiplies, word shuffles/inserts/extracts, blends,
permutes, vector <-> opmask), vector_double (double moves), vector_gather (gathers and scatters).

Features: the CPU model must have the CPUID features of the row the instruction is encoded with (SSE, SSE2,
AVX, AVX2, AVX512F, +AVX512VL below 512 bits, AVX512BW for byte and word elements, AVX512DQ for KMOVB...),
else #UD.  Alignment: MOVAPS, MOVDQA, PXOR with a memory operand, VMOVDQA, VMOVAPS/PD and VMOVDQA32/64
need it aligned to the operand size, else #GP(0) (masked or not); the other moves do not.
"""

from __future__ import annotations

from ..context import X86Context
from ..operands import GPR_VIEWS, Mem, Reg, vector_register
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

"""Gathers and scatters (issue 27, round 2): VPGATHERDD/DQ/QD/QQ and VGATHERDPS/DPD/QPS/QPD (VEX: AVX2, a vector
mask; EVEX: AVX512F, an opmask), VPSCATTERDD/DQ/QD/QQ and VSCATTERDPS/DPD/QPS/QPD (EVEX: AVX512F).  clang -O2
-march=sapphirerapids stores a column of a tile's result with vpscatterdd [rax+ymm1*4]{k2},ymm0.

The memory operand is VSIB: a base GPR, a vector of indices (dword indices for the D forms, qword indices for
the Q forms; each sign-extended), a scale and a displacement: [rax+zmm1*4+0x10].  Element j's address is
BASE + SignExtend(VINDEX[j]) * SCALE + DISP.

The elements go one at a time, element 0 first, as the SDM orders them; each one completed clears its mask
element (the vector mask's element, or k1's bit) at once, so a fault (#PF) part way leaves the elements below
it done, DEST holding them, and the mask saying how far the instruction got: run again, it carries on.  At the
end the whole mask is zero and DEST[MAXVL-1:VL] zeroed; a fault leaves the bits above the elements as they were
(measured on an AMD EPYC: a VEX gather faulting at element 2 leaves zmm DEST[511:128] unchanged).  The data moves unchanged (the PS/PD forms raise no floating-point exception).
#UD: a VEX form whose destination, index and mask registers are not three different registers; an EVEX gather
whose destination is its index register.
"""

from __future__ import annotations

from ..context import X86Context
from ..faults import UD
from ..operands import Reg, vector_register
from ..operands.masking import opmask_number, unmasked
from .vector import elements, pack, read, signed, vl, write_vex


def _addresses(cpu: X86Context, mem, index_size: int, count: int):
    """The address of each element (a generator: computed as the elements go)."""
    base = cpu.effective_address(mem, with_index=False)
    indices = elements(read(cpu, _index_register(mem), 512), index_size, count)
    for j in range(count):
        yield j, (base + signed(indices[j], index_size) * mem.scale) & ((1 << 64) - 1)


def _index_register(mem) -> Reg:
    return Reg(mem.index)


def _write_low(cpu: X86Context, register, value: int, bits: int) -> None:
    """register[bits-1:0] := value, the bits above kept: the state a fault part way leaves (the SDM zeroes
    DEST[MAXVL-1:VL] only once the instruction completes; measured on this host's silicon)."""
    n = vector_register(register.name).number
    cpu.state.write_vector(n, cpu.state.read_vector(n) >> bits << bits | value % (1 << bits))


def _count(mem, dest_bits: int, index_size: int, size: int) -> int:
    return min(vector_register(mem.index).bits // index_size, dest_bits // size)


def _gather_vex(cpu: X86Context, dest, mem, mask, index_size: int, size: int) -> None:
    numbers = {vector_register(dest.name).number, vector_register(mem.index).number, vector_register(mask.name).number}
    if len(numbers) < 3:
        raise UD(f"a VEX gather's destination, index and mask registers must be three different registers "
                 f"({dest.name}, {mem.index}, {mask.name})")
    bits = vl(dest)
    count = _count(mem, bits, index_size, size)
    values = elements(read(cpu, dest, bits), size, count)
    pending = [m >> (size - 1) & 1 for m in elements(read(cpu, mask, bits), size, count)]
    width = size // 8
    for j, address in _addresses(cpu, mem, index_size, count):
        if not pending[j]:
            continue
        values[j] = int.from_bytes(cpu.read_memory(address, width), "little")
        pending[j] = 0
        _write_low(cpu, dest, pack(values, size), count * size)
        _write_low(cpu, mask, pack([-p for p in pending], size), count * size)
    write_vex(cpu, dest, pack(values, size), bits)
    write_vex(cpu, mask, 0, bits)


def _gather_evex(cpu: X86Context, dest, mem, index_size: int, size: int) -> None:
    target = unmasked(dest)
    if vector_register(target.name).number == vector_register(mem.index).number:
        raise UD(f"an EVEX gather's destination cannot be its index register ({target.name}, {mem.index})")
    k = opmask_number(dest.mask)
    bits = vl(target)
    count = _count(mem, bits, index_size, size)
    values = elements(read(cpu, target, bits), size, count)
    pending = cpu.state.read_opmask(k) & ((1 << count) - 1)
    width = size // 8
    for j, address in _addresses(cpu, mem, index_size, count):
        if not pending >> j & 1:
            continue
        values[j] = int.from_bytes(cpu.read_memory(address, width), "little")
        pending &= ~(1 << j)
        _write_low(cpu, target, pack(values, size), count * size)
        cpu.state.write_opmask(k, pending)
    write_vex(cpu, target, pack(values, size), bits)
    cpu.state.write_opmask(k, 0)


def _scatter(cpu: X86Context, dest, src, index_size: int, size: int) -> None:
    mem = unmasked(dest)
    k = opmask_number(dest.mask)
    count = _count(mem, vl(src), index_size, size)
    values = elements(read(cpu, src), size, count)
    pending = cpu.state.read_opmask(k) & ((1 << count) - 1)
    width = size // 8
    for j, address in _addresses(cpu, mem, index_size, count):
        if not pending >> j & 1:
            continue
        cpu.write_memory(address, values[j].to_bytes(width, "little"))
        pending &= ~(1 << j)
        cpu.state.write_opmask(k, pending)
    cpu.state.write_opmask(k, 0)


_NAMES = {32: "dword", 64: "qword"}


def _gather(name: str, index_size: int, size: int, what: str):
    e, i = _NAMES[size], _NAMES[index_size]

    def semantics(cpu: X86Context, dest, mem, mask=None) -> None:
        if mask is None:
            _gather_evex(cpu, dest, mem, index_size, size)
        else:
            _gather_vex(cpu, dest, mem, mask, index_size, size)

    semantics.__name__ = semantics.__qualname__ = name
    semantics.__doc__ = (
        f"Gather {what} through {i} indices (VEX: AVX2, a vector mask; EVEX: AVX512F, AVX512VL below 512 bits, "
        f"an opmask).\n\n"
        f"        ADDR(j) := BASE + SignExtend(VINDEX.{i}[j]) * SCALE + DISP\n"
        f"        VEX:  FOR j: MASK.{e}[j] := IF MASK.{e}[j][{size - 1}] THEN all ones ELSE 0\n"
        f"              FOR j := 0 TO N-1 (in order):\n"
        f"                  IF MASK.{e}[j][{size - 1}]: DEST.{e}[j] := MEM[ADDR(j)]; MASK.{e}[j] := 0\n"
        f"              at the end: MASK := 0;  DEST[MAXVL-1:N*{size}] := 0\n"
        f"        EVEX: FOR j := 0 TO N-1 (in order):\n"
        f"                  IF k1[j]: DEST.{e}[j] := MEM[ADDR(j)]; k1[j] := 0     (else DEST.{e}[j] unchanged)\n"
        f"              at the end: k1 := 0;  DEST[MAXVL-1:N*{size}] := 0\n"
        f"        N := the number of indices that fit the destination: MIN(VL(VINDEX)/{index_size}, VL(DEST)/{size})\n\n"
        f"    A fault at element j leaves elements 0..j-1 gathered and their mask elements cleared, the rest still "
        f"set, and DEST's and MASK's bits above the elements as they were (as this host's silicon leaves them).  "
        f"#UD: VEX with DEST, VINDEX and MASK not all different; EVEX with DEST = VINDEX.\n")
    return semantics


def _scatter_form(name: str, index_size: int, size: int, what: str):
    e, i = _NAMES[size], _NAMES[index_size]

    def semantics(cpu: X86Context, dest, src) -> None:
        _scatter(cpu, dest, src, index_size, size)

    semantics.__name__ = semantics.__qualname__ = name
    semantics.__doc__ = (
        f"Scatter {what} through {i} indices under an opmask (EVEX: AVX512F, AVX512VL below 512 bits).\n\n"
        f"        ADDR(j) := BASE + SignExtend(VINDEX.{i}[j]) * SCALE + DISP\n"
        f"        FOR j := 0 TO N-1 (in order: overlapping addresses keep the last element's value):\n"
        f"            IF k1[j]: MEM[ADDR(j)] := SRC.{e}[j]; k1[j] := 0\n"
        f"        k1 := 0\n"
        f"        N := MIN(VL(VINDEX)/{index_size}, VL(SRC)/{size})\n\n"
        f"    A fault at element j leaves elements 0..j-1 stored and their k1 bits cleared.\n")
    return semantics


vpgatherdd = _gather("vpgatherdd", 32, 32, "dwords")
vpgatherdq = _gather("vpgatherdq", 32, 64, "qwords")
vpgatherqd = _gather("vpgatherqd", 64, 32, "dwords")
vpgatherqq = _gather("vpgatherqq", 64, 64, "qwords")
vgatherdps = _gather("vgatherdps", 32, 32, "single-precision values")
vgatherdpd = _gather("vgatherdpd", 32, 64, "double-precision values")
vgatherqps = _gather("vgatherqps", 64, 32, "single-precision values")
vgatherqpd = _gather("vgatherqpd", 64, 64, "double-precision values")
vpscatterdd = _scatter_form("vpscatterdd", 32, 32, "dwords")
vpscatterdq = _scatter_form("vpscatterdq", 32, 64, "qwords")
vpscatterqd = _scatter_form("vpscatterqd", 64, 32, "dwords")
vpscatterqq = _scatter_form("vpscatterqq", 64, 64, "qwords")
vscatterdps = _scatter_form("vscatterdps", 32, 32, "single-precision values")
vscatterdpd = _scatter_form("vscatterdpd", 32, 64, "double-precision values")
vscatterqps = _scatter_form("vscatterqps", 64, 32, "single-precision values")
vscatterqpd = _scatter_form("vscatterqpd", 64, 64, "double-precision values")

"""The plain-run paths: the hot instructions of a kernel loop, bound at translation.

While a plain ``run()`` goes (the journal off, no access noted), a kernel's tile loads and stores, TMULs,
and its loop bookkeeping (add, sub, cmp, inc, dec, mov, Jcc) take the same steps as their semantics, with
what the operands name found once, at translation; every other case runs the semantics themselves, so
``run()`` and ``step()`` agree bit for bit.  PLAIN_RUN_PATHS maps a semantics function to the builder of its
path: ``builder(cpu, general, next_address, *operands)`` returns the path, or None where the operands are
not a case it takes; a form's ``prepare`` asks for one.
"""

from __future__ import annotations

from typing import Callable

from ..context import X86Context
from ..numerics.products import DwordDotProducts, PairDotProducts
from ..operands import GPR_VIEWS, GprView, Imm, Reg, Target
from ..state import BYTES_PER_ROW, CF, MAX_ROWS, OF, PF, SF, STATUS_FLAGS, ZF
from . import amx, scalar
from ...core import numerics
from .amx import _ADDRESS_MASK, _ZERO_TILE, BoundSib
from .scalar import JCC_CONDITIONS, add_flags, sub_flags


# ---------------------------------------------------------------------------
# The AMX instructions
# ---------------------------------------------------------------------------


#
# While a plain run() goes (the journal off, no access noted), a kernel's tile loads and TMULs take
# the same steps as their semantics above, with what the operands name found once at translation
# and the Python calls between them gone: in a kernel loop the calls, not the bytes, are the cost.
# Each path does exactly what the semantics would in its case and hands every other case (stepping,
# a fault, a first use under a TILECFG, start_row != 0, a strided or unmapped load ...) to the
# semantics themselves, so ``run()`` and ``step()`` still agree bit for bit.


_TILE_BYTES = MAX_ROWS * BYTES_PER_ROW


class _TileBytes:
    """The state's tile data as one flat memoryview, made again if the state's array was replaced
    (replace_tiles): a byte copy through a memoryview costs a third of a numpy row-block assignment."""

    __slots__ = ("array", "bytes")

    def __init__(self):
        self.array = self.bytes = None

    def of(self, state) -> memoryview:
        if state._tiles is not self.array:
            self.array, self.bytes = state._tiles, memoryview(state._tiles).cast("B")
        return self.bytes


def _whole_rows_at(state, memory, sibmem: BoundSib, tile: int, last: list):
    """Where a plain tile load or store of ``tile`` through ``sibmem`` goes: (region, offset, size) when its
    configured rows are 64 bytes each, back to back (the index register times the scale is 64), inside one
    mapped region; else None, and the general path decides (and faults where it must).  ``last`` holds the
    region the instruction reached last time (regions are never unmapped)."""
    config, gpr, index, base = state.tilecfg, state.gpr, sibmem.index, sibmem.base
    if ((gpr[index.number] & index.mask) >> index.shift) * sibmem.scale != BYTES_PER_ROW \
            or config.colsb[tile] != BYTES_PER_ROW:
        return None
    address = sibmem.disp if base is None else sibmem.disp + ((gpr[base.number] & base.mask) >> base.shift)
    address &= _ADDRESS_MASK
    size = config.rows[tile] * BYTES_PER_ROW
    region = last[0]
    if not region.start <= address < region.end:
        region = memory._region_at(address)
        if region is None:
            return None
        last[0] = region
    if address + size > region.end:
        return None
    return region, address - region.start, size


def _plain_tile_load(cpu: X86Context, general: Callable[[], int], next_address: int, tdest: int, sibmem):
    """TILELOADD / TILELOADDT1 of whole 64-byte rows back to back (tile_load's first case)."""
    if type(sibmem) is not BoundSib or sibmem.index is None:
        return None
    state, memory, journal = cpu.state, cpu.memory, cpu.state.journal
    key, tiles = ("E3", tdest), _TileBytes()
    first = tdest * _TILE_BYTES
    last = [memory._last]

    def execute() -> int:
        if (journal.enabled or memory.accesses is not None or state.tilecfg.start_row
                or key not in state.checks_passed or tdest in state._deferred):
            return general()
        span = _whole_rows_at(state, memory, sibmem, tdest, last)
        if span is None:
            return general()
        region, offset, size = span
        flat = tiles.bytes if state._tiles is tiles.array else tiles.of(state)
        flat[first:first + size] = region.data[offset:offset + size]
        if size < _TILE_BYTES:
            flat[first + size:first + _TILE_BYTES] = _ZERO_TILE[size:]
        return next_address  # start_row is 0 already

    return execute


def _plain_tile_store(cpu: X86Context, general: Callable[[], int], next_address: int, sibmem, tsrc: int):
    """TILESTORED of whole 64-byte rows back to back (tilestored's first case), with no products
    waiting on the tile."""
    if type(sibmem) is not BoundSib or sibmem.index is None:
        return None
    state, memory, journal, memory_journal = cpu.state, cpu.memory, cpu.state.journal, cpu.memory.journal
    key, tiles = ("E3", tsrc), _TileBytes()
    first = tsrc * _TILE_BYTES
    last = [memory._last]

    def execute() -> int:
        if (journal.enabled or memory_journal.enabled or memory.accesses is not None or state.tilecfg.start_row
                or key not in state.checks_passed or tsrc in state._deferred):
            return general()
        span = _whole_rows_at(state, memory, sibmem, tsrc, last)
        if span is None or not span[0].writable:
            return general()
        region, offset, size = span
        flat = tiles.bytes if state._tiles is tiles.array else tiles.of(state)
        region.data[offset:offset + size] = flat[first:first + size]
        return next_address  # start_row is 0 already

    return execute


def _plain_tilezero(cpu: X86Context, general: Callable[[], int], next_address: int, tdest: int):
    """TILEZERO once its checks passed under this TILECFG, with start_row 0 and no products waiting."""
    state, journal, key = cpu.state, cpu.state.journal, ("TILEZERO", tdest)

    def execute() -> int:
        if journal.enabled or state.tilecfg.start_row or key not in state.checks_passed or tdest in state._deferred:
            return general()
        state._tile_views[tdest].fill(0)
        return next_address

    return execute


def _plain_tmul(batch_type: type, kind_of: Callable[[int], tuple]):
    """A TMUL's product joining the batch waiting on its accumulator (X86AmxState.accumulate), when the
    shapes passed under this TILECFG before, start_row is 0, and neither source has products waiting."""

    def bind(cpu: X86Context, general: Callable[[], int], next_address: int, tsrcdest: int, tsrc1: int, tsrc2: int):
        state, journal = cpu.state, cpu.state.journal
        key, tiles, capacity = ("TMUL", tsrcdest, tsrc1, tsrc2), _TileBytes(), batch_type.CAPACITY
        a_first, b_first = tsrc1 * _TILE_BYTES, tsrc2 * _TILE_BYTES
        # The batch last added to, its A and B as flat memoryviews, the shapes (M, K, N) it was found
        # under and the kind of this instruction's products then: while both are the same objects, the
        # batch is known to be of this type and shape.
        bound = [None, None, None, None, None]

        def execute() -> int:
            passed = state.checks_passed.get(key)
            if passed is None or journal.enabled or state.tilecfg.start_row:
                return general()
            deferred = state._deferred
            batch = deferred.get(tsrcdest)
            if batch is not bound[0] or passed is not bound[3]:
                if batch is None or type(batch) is not batch_type or batch.shape != (passed[0], passed[2]):
                    return general()  # (a new batch, or one of another kind or shape, is accumulate's to make)
                bound[:] = batch, memoryview(batch.A).cast("B"), memoryview(batch.B).cast("B"), passed, kind_of(passed[1])
            if tsrc1 in deferred or tsrc2 in deferred:
                return general()
            if state._tiles is not tiles.array:
                tiles.of(state)
            flat, kinds = tiles.bytes, batch.kinds
            n = len(kinds)
            at = n * _TILE_BYTES
            bound[1][at:at + _TILE_BYTES] = flat[a_first:a_first + _TILE_BYTES]
            bound[2][at:at + _TILE_BYTES] = flat[b_first:b_first + _TILE_BYTES]
            kinds.append(bound[4])
            if n + 1 == capacity:
                state._settle(tsrcdest)
            return next_address

        return execute

    return bind


# ---------------------------------------------------------------------------
# The scalar loop bookkeeping
# ---------------------------------------------------------------------------


#
# A kernel's loop bookkeeping (add rdi, 2048; dec r11; jnz) costs as much per instruction as a tile
# load when every operand is looked up by name on each execution.  These paths find the register
# views once, at translation, and do what the semantics above do for whole 64- and 32-bit registers
# (a 32-bit write zero-extends: the register is simply replaced) while the journal is off; every
# other case, and every recorded step, runs the semantics themselves.


def _whole_register(operand) -> GprView | None:
    """The view of a 64- or 32-bit GPR operand (a write replaces the whole register), else None."""
    if isinstance(operand, Reg):
        view = GPR_VIEWS.get(operand.name)
        if view is not None and view.bits in (32, 64):
            return view
    return None


def _source_reader(src, bits: int):
    """(register view, None) or (None, constant) for a register or immediate source of ``bits`` bits;
    None for any other source."""
    if isinstance(src, Imm):
        return None, src.value % (1 << bits)
    if isinstance(src, Reg) and src.name in GPR_VIEWS:
        return GPR_VIEWS[src.name], None
    return None


def _plain_arithmetic(flags_of: Callable[[int, int, int], int], result_of: Callable[[int, int], int] | None,
                      written: int = STATUS_FLAGS, constant: int | None = None):
    """ADD / SUB / CMP (``result_of`` None: flags only) of a whole register and a register or immediate;
    with ``constant``, INC / DEC (the source is that constant, and CF is not written)."""

    def bind(cpu: X86Context, general, next_address: int, dest, src=None):
        view = _whole_register(dest)
        if view is None:
            return None
        bits = view.bits
        source = (None, constant) if constant is not None else _source_reader(src, bits)
        if source is None:
            return None
        src_view, value = source
        state, journal = cpu.state, cpu.state.journal
        number, mask, keep = view.number, (1 << bits) - 1, ~written

        def execute() -> int:
            if journal.enabled:
                return general()
            gpr = state.gpr
            a = gpr[number] & mask
            b = value if src_view is None else (gpr[src_view.number] & src_view.mask) >> src_view.shift
            if result_of is not None:
                gpr[number] = result_of(a, b) & mask
            state.rflags = state.rflags & keep | flags_of(a, b, bits) & written | 0x2  # as set_rflags: bit 1 is 1
            return next_address

        return execute

    return bind


def _plain_mov(cpu: X86Context, general, next_address: int, dest, src):
    """MOV of a register or immediate into a whole register."""
    view = _whole_register(dest)
    source = _source_reader(src, view.bits) if view is not None else None
    if source is None:
        return None
    src_view, value = source
    state, journal = cpu.state, cpu.state.journal
    number, mask = view.number, (1 << view.bits) - 1

    def execute() -> int:
        if journal.enabled:
            return general()
        gpr = state.gpr
        gpr[number] = value if src_view is None else ((gpr[src_view.number] & src_view.mask) >> src_view.shift) & mask
        return next_address

    return execute


def _plain_jcc(condition: Callable[..., bool]):
    """Jcc: the condition of each combination of the five status flags it may test, worked out once by
    the declared condition itself (a branch writes nothing, so this path serves stepping too)."""

    def bind(cpu: X86Context, general, next_address: int, target: Target):
        state, taken_address = cpu.state, target.address
        taken: dict[int, bool] = {}
        tested = CF | ZF | SF | OF | PF

        def execute() -> int:
            flags = state.rflags & tested
            outcome = taken.get(flags)
            if outcome is None:
                outcome = taken[flags] = bool(condition(CF=bool(flags & CF), ZF=bool(flags & ZF), SF=bool(flags & SF),
                                                        OF=bool(flags & OF), PF=bool(flags & PF)))
            return taken_address if outcome else next_address

        return execute

    return bind


# semantics -> the builder of its plain-run path
PLAIN_RUN_PATHS: dict[Callable, Callable] = {
    amx.tilezero: _plain_tilezero,
    amx.tilestored: _plain_tile_store,
    amx.tileloadd: _plain_tile_load,
    amx.tileloaddt1: _plain_tile_load,
    amx.tdpbssd: _plain_tmul(DwordDotProducts, lambda K: (K, True, True)),
    amx.tdpbsud: _plain_tmul(DwordDotProducts, lambda K: (K, True, False)),
    amx.tdpbusd: _plain_tmul(DwordDotProducts, lambda K: (K, False, True)),
    amx.tdpbuud: _plain_tmul(DwordDotProducts, lambda K: (K, False, False)),
    amx.tdpbf16ps: _plain_tmul(PairDotProducts, lambda K: (K, numerics.bf16_to_fp32)),
    amx.tdpfp16ps: _plain_tmul(PairDotProducts, lambda K: (K, numerics.fp16_to_fp32)),
    **{semantics: _plain_jcc(test) for semantics, test in JCC_CONDITIONS.items()},
    scalar.add: _plain_arithmetic(add_flags, lambda a, b: a + b),
    scalar.sub: _plain_arithmetic(sub_flags, lambda a, b: a - b),
    scalar.cmp: _plain_arithmetic(sub_flags, None),
    scalar.inc: _plain_arithmetic(add_flags, lambda a, b: a + b, STATUS_FLAGS & ~CF, constant=1),
    scalar.dec: _plain_arithmetic(sub_flags, lambda a, b: a - b, STATUS_FLAGS & ~CF, constant=1),
    scalar.mov: _plain_mov,
}

"""BlockSchedulerQuantBatchMatmulV3: which blocks of C each AI core computes, and in what order.

Read from CANN ops-nn ``matmul/common/cmct/block/block_scheduler_qbmm.h`` and the kernel's
``ProcessWithBatch`` / ``ProcessSingleBatch`` (``kernel_qbmm_cube.h``), normal (not full-load)
mode, ND layouts.  What the scheduler does:

- C is cut into ``mCnt x nCnt`` tiles of baseM x baseN.  Tiles are numbered window by window:
  a window is up to 4 consecutive m-tiles (the last window takes every leftover row, 4 to 7),
  m varies fastest inside a window, then n, and n runs backwards in every other window (a
  serpentine, so consecutive tiles share A or B in L2).
- Core ``blockIdx`` of ``blockNum`` takes tiles blockIdx, blockIdx + blockNum, ... .  The batches
  are laid end to end over the cores: batch b's tiles continue on the core after the one that
  took the last tile of batch b - 1 (``startBlockIdx`` / ``endBlockIdx`` roll on).
- Load balance of the m tail (A not transposed) or n tail (B transposed): the last
  ``mBaseTailSplitCnt`` m-tiles share the rows left after the full tiles, ``mTailMain`` rows each
  and the rest in the last one.
- The tail round: once the tiles left fit on the cores ``mTailTile x nTailTile`` times over, each
  tile of the last round is split into ``mTailTile x nTailTile`` sub-blocks run by consecutive cores.

The result is each core's list of :class:`Tile` (a block of C: batch, tile indices, the block's
rows and columns and where they start), in the order the core runs them.
"""

from __future__ import annotations

from dataclasses import dataclass

WINDOW_LEN = 4  # m-tiles per scheduling window


def ceil_div(a: int, b: int) -> int:
    return -(-a // b)


@dataclass(frozen=True)
class TailSplit:
    """The scheduler's tail parameters (the seed's schParams after baseM/baseN)."""

    m_tail_tile: int = 1
    n_tail_tile: int = 1
    m_base_tail_split_cnt: int = 1
    n_base_tail_split_cnt: int = 1
    m_tail_main: int = 0
    n_tail_main: int = 0


@dataclass(frozen=True)
class Tile:
    """One block of C a core computes: C[batch][m_offset : m_offset + m, n_offset : n_offset + n]."""

    core: int
    batch: int  # the C batch index, 0 .. prod(batch_c) - 1
    m_index: int
    n_index: int
    m_offset: int
    n_offset: int
    m: int
    n: int


class CoreScheduler:
    """The scheduler as one core (``block_idx``) runs it."""

    def __init__(self, m: int, n: int, base_m: int, base_n: int, block_idx: int, block_num: int,
                 split: TailSplit, transpose_a: bool, transpose_b: bool):
        self.m, self.n, self.base_m, self.base_n = m, n, base_m, base_n
        self.block_idx, self.block_num = block_idx, block_num
        self.m_cnt, self.n_cnt = ceil_div(m, base_m), ceil_div(n, base_n)
        self.total_cnt = self.m_cnt * self.n_cnt
        self.m_core_num = min(WINDOW_LEN, self.m_cnt)
        self.main_row = self.m_cnt // self.m_core_num - 1
        self.m_tail_core_num = self.m_cnt - self.m_core_num * self.main_row
        self.end_block_idx = (self.total_cnt - 1) % block_num
        self.round = ceil_div(self.total_cnt, block_num)
        if block_idx > self.end_block_idx:
            self.round -= 1
        self.start_block_idx = 0
        self.round_idx = 0
        self.m_tail_tile = self.n_tail_tile = self.total_tail_tile = 1
        # load balance: only along the outer axis of each operand (m of a row-major A, n of a transposed B)
        self.m_base_norm_cnt = self.n_base_norm_cnt = 0
        if not transpose_a:
            self.m_base_norm_cnt = self.m_cnt - split.m_base_tail_split_cnt
            merged = m - self.m_base_norm_cnt * base_m
            self.m_base_tail_main = merged if split.m_base_tail_split_cnt == 1 else split.m_tail_main
            self.m_base_tail_last = merged - (split.m_base_tail_split_cnt - 1) * self.m_base_tail_main
        else:
            self.m_base_tail_main = m - (self.m_cnt - 1) * base_m
            self.m_base_tail_last = self.m_base_tail_main
        if transpose_b:
            self.n_base_norm_cnt = self.n_cnt - split.n_base_tail_split_cnt
            merged = n - self.n_base_norm_cnt * base_n
            self.n_base_tail_main = merged if split.n_base_tail_split_cnt == 1 else split.n_tail_main
            self.n_base_tail_last = merged - (split.n_base_tail_split_cnt - 1) * self.n_base_tail_main
        else:
            self.n_base_tail_main = n - (self.n_cnt - 1) * base_n
            self.n_base_tail_last = self.n_base_tail_main
        self.transpose_a, self.transpose_b = transpose_a, transpose_b

    def update_tail_tile(self, m_tail_tile: int, n_tail_tile: int) -> None:
        """Split the last round's tiles into m_tail_tile x n_tail_tile sub-blocks over more cores."""
        self.m_tail_tile, self.n_tail_tile = m_tail_tile, n_tail_tile
        self.total_tail_tile = m_tail_tile * n_tail_tile
        tail_tiles = min(self.total_cnt, self.end_block_idx + 1)
        new_end = self.end_block_idx + tail_tiles * (self.total_tail_tile - 1)
        if self.end_block_idx < self.block_idx <= new_end:
            self.round += 1
        if self.block_idx > new_end:
            self.m_tail_tile = self.n_tail_tile = self.total_tail_tile = 1
        self.end_block_idx = new_end

    def next_tile(self) -> tuple[int, int] | None:
        """(mIdx, nIdx) of this core's next tile in the batch, or None (GetTileIdx)."""
        if self.round_idx >= self.round:
            return None
        block = self.block_idx // self.total_tail_tile if self.round_idx == self.round - 1 else self.block_idx
        tile = block + self.round_idx * self.block_num
        if self.block_idx < self.start_block_idx:
            tile += self.block_num - self.start_block_idx
        elif self.end_block_idx + 1 >= self.total_tail_tile * self.total_cnt:
            tile -= self.start_block_idx // self.total_tail_tile
        else:
            tile -= self.start_block_idx
        row = tile // self.n_cnt // self.m_core_num
        if row < self.main_row:
            m_idx = row * self.m_core_num + tile % self.m_core_num
            n_idx = (tile // self.m_core_num) % self.n_cnt
        else:
            row = self.main_row
            rest = tile - self.main_row * self.m_core_num * self.n_cnt
            m_idx = self.main_row * self.m_core_num + rest % self.m_tail_core_num
            n_idx = (rest // self.m_tail_core_num) % self.n_cnt
        if row % 2:
            n_idx = self.n_cnt - 1 - n_idx
        self.round_idx += 1
        return m_idx, n_idx

    def block_shape(self, m_idx: int, n_idx: int) -> tuple[int, int, int, int]:
        """(rows, cols, row split offset, col split offset) of tile (m_idx, n_idx) (GetBlockShape);
        rows or cols 0: this core has no sub-block of it."""
        rows, cols = self.base_m, self.base_n
        if not self.transpose_a:
            if m_idx >= self.m_base_norm_cnt:
                rows = self.m_base_tail_main if m_idx < self.m_cnt - 1 else self.m_base_tail_last
        elif m_idx == self.m_cnt - 1:
            rows = self.m_base_tail_main
        if self.transpose_b:
            if n_idx >= self.n_base_norm_cnt:
                cols = self.n_base_tail_main if n_idx < self.n_cnt - 1 else self.n_base_tail_last
        elif n_idx == self.n_cnt - 1:
            cols = self.n_base_tail_main
        if self.total_tail_tile == 1 or self.round_idx < self.round:  # round_idx has moved on: last round only
            return rows, cols, 0, 0
        split_rows, split_cols = ceil_div(rows, self.m_tail_tile), ceil_div(cols, self.n_tail_tile)
        m_split = (self.block_idx % self.total_tail_tile) % self.m_tail_tile
        n_split = (self.block_idx % self.total_tail_tile) // self.m_tail_tile
        m_off, n_off = m_split * split_rows, n_split * split_cols
        if m_off >= rows or n_off >= cols:
            return 0, 0, 0, 0
        return min(rows - m_off, split_rows), min(cols - n_off, split_cols), m_off, n_off

    def offsets(self, m_idx: int, n_idx: int, m_split: int, n_split: int) -> tuple[int, int]:
        """The block's first row and column of C (Coordinate::GetQuantOffset with load balance)."""
        m_offset = m_idx * self.base_m + m_split
        n_offset = n_idx * self.base_n + n_split
        if not self.transpose_a and m_idx > self.m_base_norm_cnt:
            m_offset -= (m_idx - self.m_base_norm_cnt) * (self.base_m - self.m_base_tail_main)
        if self.transpose_b and n_idx > self.n_base_norm_cnt:
            n_offset -= (n_idx - self.n_base_norm_cnt) * (self.base_n - self.n_base_tail_main)
        return m_offset, n_offset

    def next_batch(self) -> None:
        """UpdateNextBatchBlockRoundParams: the next batch starts on the core after this one's last tile."""
        self.start_block_idx = 0 if self.end_block_idx + 1 == self.block_num else self.end_block_idx + 1
        self.end_block_idx = (self.total_cnt + self.start_block_idx - 1) % self.block_num
        self.round_idx = 0
        self.round = ceil_div(self.total_cnt, self.block_num)
        start, end, me = self.start_block_idx, self.end_block_idx, self.block_idx
        if start > end and end < me < start:
            self.round -= 1
        elif start <= end and (me > end or me < start):
            self.round -= 1


def core_tiles(m: int, n: int, batches: int, base_m: int, base_n: int, block_idx: int, block_num: int,
               split: TailSplit, transpose_a: bool = False, transpose_b: bool = False) -> list[Tile]:
    """Every block core ``block_idx`` computes, in its order, over all ``batches`` C batches."""
    scheduler = CoreScheduler(m, n, base_m, base_n, block_idx, block_num, split, transpose_a, transpose_b)
    tiles: list[Tile] = []
    non_tail_round_cnt = (scheduler.total_cnt * batches // block_num) * block_num
    need_update_tail = False
    for batch in range(batches):
        rest_batch = batches - (batch + 1)
        # a single batch is always its own tail round (ProcessSingleBatch(params, bs, 0, true))
        is_tail_round = batches == 1 or (batch + 1) * scheduler.total_cnt > non_tail_round_cnt
        if need_update_tail or (is_tail_round and ((scheduler.end_block_idx + 1) + rest_batch * scheduler.total_cnt)
                                * split.m_tail_tile * split.n_tail_tile <= block_num):
            need_update_tail = True
            scheduler.update_tail_tile(split.m_tail_tile, split.n_tail_tile)
        stopped = False
        while (index := scheduler.next_tile()) is not None:
            rows, cols, m_split, n_split = scheduler.block_shape(*index)
            if rows <= 0 or cols <= 0:
                stopped = True  # the kernel returns from ProcessSingleBatch here
                break
            m_offset, n_offset = scheduler.offsets(*index, m_split, n_split)
            tiles.append(Tile(block_idx, batch, *index, m_offset, n_offset, rows, cols))
        if not stopped:
            scheduler.next_batch()
    return tiles

"""The seed's quantised batch-matmul Cube kernel (CANN "Kernel Qbmm Cube") as the instruction
stream it executes on the 950: BlockSchedulerQuantBatchMatmulV3 hands out blocks of C,
BlockMmadA8W8FixpipeQuant loads A and B through L1 and L0, accumulates in L0C and dequantises
on the way out through the Fixpipe.

    from isasim.ascend_cube.kernels import qbmm
    kernel = qbmm.build(qbmm.load_case("case.json"))
    c = qbmm.run(kernel)                      # C as the case's c_type stores it

Read from CANN ops-nn (commit e5c3fa9327ea) ``matmul/common/cmct/kernel/kernel_qbmm_cube.h`` and
``matmul/common/cmct/block/block_mmad_a8w8_fixpipe_quant.h``.  Per block (curM x curN of C):

1. per-channel scale: the block's curN quant words GM -> L1 (DataCopyPad; here DataCopy rounded
   up to whole 32-byte blocks), then L1 -> FB and SetFixPipeConfig (the C310 Fixpipe API does
   that move itself when given the L1 words);
2. bias: the block's curN bias values GM -> L1;
3. the K loop over L1 windows: A's kAL1 and B's kBL1 columns GM -> L1 with Nd2Nz (A as an Nz
   matrix of curM rows, B of k rows; transposed operands the other way), ping-ponged over
   nBufferNum buffers in the two L1 halves; inside a window, slices of baseK: LoadData
   (LoadData2DParamsV2, transposing 32 x 32 byte blocks where the L1 matrix runs the other way)
   into the L0A/L0B halves (ping-pong), then Mmad into L0C: the first from the bias table
   (bias copied L1 -> BT just before) or from zero, the rest accumulating;
4. Fixpipe L0C -> GM: NoQuant for int32 C, else the mode the (L0C type, C type) pair selects,
   scalar (the word set by SetFixpipePreQuantFlag) or per channel (V-modes, the words in FB),
   Nz -> ND into C's rows (dstStride n).

L0C is ping-ponged when dbL0C is 2.  With atomic_add, SetAtomicAdd(float32) comes first and
SetAtomicNone last, so the Fixpipe adds C to what GM holds.

The stream carries the kernel's SetFlag / WaitFlag / PipeBarrier where the kernel issues them (the
TPipe's and the block's constructor and destructor sets and waits around the blocks, the L1 buffers'
MTE1_MTE2 / MTE2_MTE1 and FIX_MTE2 / MTE2_FIX pairs, the L0 halves' M_MTE1 / MTE1_M pairs, the
barriers of the odd transposing loads and of the Fixpipe call), and M_FIX / FIX_M pairs standing in
for the unitFlag that orders L0C between the Mmads and the Fixpipe: see qbmm_flags and
docs/ascend_cube/guide/qbmm-flags.md.  ``build(case, sync=False)`` leaves them all out.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from isasim.core.trace import Init, RegionView, Trace

from .qbmm_case import STORAGE, CaseError, QbmmCase, nz_shape
from .qbmm_case_file import load_case  # noqa: F401 (the entry point: qbmm.build(qbmm.load_case(path)))
from .qbmm_flags import epilogue, pipe_barrier, prologue, set_flag, wait_flag
from .qbmm_rules import Dataflow, dataflow
from .qbmm_scale import channel_words, tensor_word
from .qbmm_scheduler import Tile, ceil_div, core_tiles
from .qbmm_size import GM_SLACK, MAX_INSTRUCTIONS, kernel_size, region_bytes
from .qbmm_tiling import C0, CUBE, L0AB_HALF, L0C_SIZE, L1_SIZE, QbmmTiling, align, tiling_for

GM_BASE = 0x100000


@dataclass
class Block:
    """One block of C as the kernel computes it, and where its instructions are in the program."""

    index: int
    tile: Tile
    first: int  # index of its first instruction
    end: int  # one past its last


@dataclass
class QbmmKernel:
    case: QbmmCase
    tiling: QbmmTiling
    flow: Dataflow
    lines: list[str]
    setup: list[int]  # instructions before the first block (atomic mode, the scalar quant word)
    teardown: list[int]  # after the last block
    blocks: list[Block]
    regions: dict[str, tuple[int, np.ndarray, bool]]  # name -> (address, array, writable)
    c_address: int

    @property
    def program_lines(self) -> list[str]:
        return [line for line in self.lines if not line.startswith("#")]

    def block_lines(self, index: int) -> list[str]:
        """The program of block ``index`` alone: the set-up, the block, the tear-down."""
        if not 0 <= index < len(self.blocks):
            raise CaseError(f"--block {index}: the kernel has blocks 0..{len(self.blocks) - 1}",
                            source=self.case.source)
        return self.group_lines(range(index, index + 1))

    def group_lines(self, group: range) -> list[str]:
        """The program of the blocks in ``group`` alone: the set-up, those blocks in order, the tear-down."""
        code = self._code_indices()
        blocks = [self.blocks[i] for i in group]
        pick = [*self.setup, *(i for block in blocks for i in range(block.first, block.end)), *self.teardown]
        return [self.lines[code[i]] for i in pick]

    def _code_indices(self) -> list[int]:
        return [i for i, line in enumerate(self.lines) if not line.startswith("#")]

    def init(self) -> Init:
        memory, views = [], []
        for name, (address, array, writable) in self.regions.items():
            data = np.ascontiguousarray(array).tobytes()
            memory.append((address, data + bytes(align(len(data), 32) + GM_SLACK - len(data)), writable))
        case = self.case
        views.append(RegionView("C", self.c_address, _view_type(case.c_type), (case.batch * case.m, case.n)))
        return Init(memory=memory, views=views)

    def trace(self, expect: np.ndarray | None = None, producer: str = "") -> Trace:
        """The whole run as an isasim trace; with ``expect`` (C bits) its expectation is that C."""
        init = self.init()
        config = {"chip": self.case.chip, "options": dict(self.case.options)}
        expected = {}
        if expect is not None:
            expected = {"fault": None, "memory": [(self.c_address, np.ascontiguousarray(expect).tobytes())]}
        return Trace(isa="ascend_cube", program=self.program_lines, config=config, producer=producer, init=init,
                     expect=expected)


def _view_type(c_type: str) -> str:
    return {"float16": "fp16", "bfloat16": "bf16", "float32": "fp32"}.get(c_type, c_type)


def build(case: QbmmCase, *, machines: int = 1, trace: bool = False, sync: bool = True) -> QbmmKernel:
    """The kernel's instruction stream for ``case`` (checked: a CaseError says what the kernel lacks, or which
    limit of qbmm_size the run would pass on ``machines`` simulating machines, writing a trace or not);
    ``sync=False``: without its SetFlag / WaitFlag / PipeBarrier lines."""
    flow = dataflow(case)
    bias_bytes = 4 if case.has_bias else 0
    tiling = tiling_for(case, flow.scale == "channel", bias_bytes)
    if case.b_format == "NZ" and tiling.nTailTile > 1:
        raise CaseError("tiling.nTailTile > 1 with b_format NZ: an NZ weight is read in whole 32-column blocks",
                        source=case.source)
    kernel_size(case, tiling).check(case.source, machines=machines, trace=trace)  # before any allocation
    return _Builder(case, flow, tiling, sync).build()


class _Builder:
    """Writes the program: the kernel's loops, unrolled (a generated kernel is straight-line code)."""

    def __init__(self, case: QbmmCase, flow: Dataflow, tiling: QbmmTiling, sync: bool = True):
        self.case, self.flow, self.t = case, flow, tiling
        self.sync = sync
        self.lines: list[str] = []
        self.code = 0  # instructions so far
        self.regions: dict[str, tuple[int, np.ndarray, bool]] = {}
        self._layout()
        self._l1_layout()

    # ---- GM ----------------------------------------------------------------------------------
    def _layout(self) -> None:
        case, address = self.case, GM_BASE
        parts = [("A", case.arrays["a"], False), ("B", case.arrays["b"], False)]
        if case.has_bias:
            parts.append(("bias", case.arrays["bias"], False))
        if self.flow.scale == "channel":
            parts.append(("scale_b", channel_words(case), False))
        c_dtype = np.dtype(STORAGE[case.c_type])
        c0 = case.arrays["c_in"] if case.atomic_add else np.zeros(case.shape_of("c"), dtype=c_dtype)
        parts.append(("C", c0, True))
        self.addr = {}
        for name, array, writable in parts:
            self.regions[name] = (address, array, writable)
            self.addr[name] = address
            address += region_bytes(array.nbytes)

    # ---- L1 buffers (InitNormal) ----------------------------------------------------------------
    def _l1_layout(self) -> None:
        t = self.t
        buffers = t.nBufferNum
        self.k_al1, self.k_bl1 = (t.kAL1, t.kBL1) if buffers == 2 else ((min(t.kAL1, t.kBL1),) * 2)
        a_one, b_one = t.baseM * self.k_al1, t.baseN * self.k_bl1
        scale_one = t.baseN * 8 if self.flow.scale == "channel" else 0
        self.a_off = [L1_SIZE // 2 * (i & 1) + a_one * (i >> 1) for i in range(buffers)]
        self.b_off = [L1_SIZE // 2 * (i & 1) + a_one * (buffers >> 1) + b_one * (i >> 1) for i in range(buffers)]
        self.scale_off = [self.b_off[i] + b_one * (buffers >> 1) for i in range(2)]
        self.bias_off = [self.scale_off[i] + scale_one for i in range(2)]

    def emit(self, text: str) -> None:
        self.lines.append(text)
        if not text.startswith("#"):
            self.code += 1
            if self.code > MAX_INSTRUCTIONS:
                raise CaseError(f"the kernel would be more than {MAX_INSTRUCTIONS:,} instructions (MAX_INSTRUCTIONS): "
                                f"choose a larger tiling or a smaller problem", source=self.case.source)

    def note(self, text: str) -> None:
        self.lines.append("# " + text)

    def flag(self, *lines: str) -> None:
        """Sync lines (qbmm_flags), left out when the builder writes the stream without them."""
        if self.sync:
            for line in lines:
                self.emit(line)

    # ---- the kernel ------------------------------------------------------------------------------
    def build(self) -> QbmmKernel:
        case, t, flow = self.case, self.t, self.flow
        self.note(f"QBMM Cube kernel on the 950: C{list(case.shape_of('c'))} {case.c_type} = "
                  f"A {case.a_type} x B {case.b_type}" + (f" + bias {case.bias_type}" if case.has_bias else "")
                  + f", {flow.quant_mode or 'NoQuant'} ({_scale_text(case, flow)})")
        self.note("tiling " + ", ".join(f"{k}={v}" for k, v in t.as_dict().items()))
        setup_start = self.code
        self.flag(*prologue())  # TPipe::Init, BlockMmadA8W8FixpipeQuant's constructor (and the stand-in's FIX_M)
        if case.atomic_add:
            self.emit("SetAtomicAdd(dtype=float32)")
        if flow.scale in ("word", "float", "double"):
            self.emit(f"SetFixpipePreQuantFlag(config={tensor_word(case, flow.scale):#x})")
        setup = list(range(setup_start, self.code))
        blocks: list[Block] = []
        for core in range(t.blockDim):
            self.counters = _Counters()
            for tile in core_tiles(case.m, case.n, case.batch, t.baseM, t.baseN, core, t.blockDim, t.split,
                                   case.transpose_a, case.transpose_b):
                first = self.code
                self._block(len(blocks), tile)
                blocks.append(Block(len(blocks), tile, first, self.code))
        teardown_start = self.code
        if case.atomic_add:
            self.emit("SetAtomicNone()")
        self.flag(*epilogue())  # the block's and the TPipe's destructors
        return QbmmKernel(case, t, flow, self.lines, setup, list(range(teardown_start, self.code)), blocks,
                          self.regions, self.addr["C"])

    def _batch_offsets(self, batch: int) -> tuple[int, int]:
        """The A and B matrix indices C batch ``batch`` reads (a broadcast dimension repeats)."""
        case = self.case
        digits, rest = [], batch
        for size in reversed(case.batch_c):
            digits.append(rest % size)
            rest //= size
        digits.reverse()

        def index(dims):
            flat = 0
            for digit, size, c_size in zip(digits, dims, case.batch_c):
                flat = flat * size + (digit if size == c_size else 0)
            return flat

        return index(case.batch_a), index(case.batch_b)

    def _block(self, number: int, tile: Tile) -> None:
        case, t, flow, counters = self.case, self.t, self.flow, self.counters
        m, n, k = case.m, case.n, case.k
        a_batch, b_batch = self._batch_offsets(tile.batch)
        cur_m, cur_n = tile.m, tile.n
        self.note(f"block {number}: core {tile.core}, batch {tile.batch}, tile (m {tile.m_index}, n {tile.n_index}): "
                  f"C rows {tile.m_offset}..{tile.m_offset + cur_m - 1}, columns {tile.n_offset}..{tile.n_offset + cur_n - 1}")
        a_size = 1
        self.a_gm = self.addr["A"] + (a_batch * m * k + (tile.m_offset if case.transpose_a else tile.m_offset * k)) * a_size
        if case.b_format == "NZ":  # (C1, R1, 16, 32): column blocks of 32 bytes, each R1 x 16 rows deep
            c1, r1, r0, c0 = nz_shape(case.b_rows_cols(), case.b_type)
            start = tile.n_offset * C0 if case.transpose_b else (tile.n_offset // C0) * r1 * r0 * c0
            self.b_gm = self.addr["B"] + b_batch * c1 * r1 * r0 * c0 + start
            self.b_rows_padded = r1 * r0
        else:
            self.b_gm = self.addr["B"] + b_batch * n * k + (tile.n_offset * k if case.transpose_b else tile.n_offset)
        c_size = np.dtype(STORAGE[case.c_type]).itemsize
        c_gm = self.addr["C"] + (tile.batch * m * n + tile.m_offset * n + tile.n_offset) * c_size
        l0c = (counters.l0c & 1) * (L0C_SIZE // 2)
        scale_buf, bias_buf = counters.scale & 1, counters.bias & 1
        l0c_id = counters.l0c & 1
        if flow.scale == "channel":  # CopyX2ScaleInL1
            words = self.addr["scale_b"] + tile.n_offset * 8
            self.flag(wait_flag("FIX_MTE2", scale_buf))
            self.emit(f"DataCopy(dst=L1[{self.scale_off[scale_buf]}], src=GM[{words:#x}], blockCount=1, "
                      f"blockLen={ceil_div(cur_n * 8, 32)}, srcStride=0, dstStride=0)")
            self.flag(set_flag("MTE2_FIX", scale_buf), wait_flag("MTE2_FIX", scale_buf))
        if case.has_bias:  # CopyBiasInL1: the bias buffers' flags are 4 and 5
            bias = self.addr["bias"] + ((tile.batch * n if case.bias_three_dim else 0) + tile.n_offset) * 4
            self.flag(wait_flag("MTE1_MTE2", 4 + bias_buf))
            self.emit(f"DataCopy(dst=L1[{self.bias_off[bias_buf]}], src=GM[{bias:#x}], blockCount=1, "
                      f"blockLen={ceil_div(cur_n * 4, 32)}, srcStride=0, dstStride=0)")
            self.flag(set_flag("MTE2_MTE1", 4 + bias_buf), wait_flag("MTE2_MTE1", 4 + bias_buf))
        self.block = (cur_m, cur_n, l0c, bias_buf)
        self.fix_m_wait: int | None = l0c_id  # the FIX_M wait the block's first Mmad needs (stand-in)
        if self.k_al1 == self.k_bl1:
            self._iterate_ab()
        else:
            self._iterate_nested("a" if self.k_al1 > self.k_bl1 else "b")
        quant = flow.quant_mode or "NoQuant"
        self.flag(set_flag("M_FIX", l0c_id))  # stand-in for the last Mmad's unitFlag
        if flow.scale == "channel":
            self.emit(f"DataCopy(dst=FB[0], src=L1[{self.scale_off[scale_buf]}], blockCount=1, "
                      f"blockLen={ceil_div(cur_n * 8, 32)}, srcStride=0, dstStride=0)")
            self.emit("SetFixPipeConfig(quantPre=FB[0])")
        # the Fixpipe call's own barrier between the words (or set_quant_pre) and the L0C move
        self.flag(pipe_barrier("PIPE_FIX"), wait_flag("M_FIX", l0c_id))
        self.emit(f"Fixpipe(dst=GM[{c_gm:#x}], src=L0C[{l0c}], srcType={flow.l0c_type}, dstType={case.c_type}, "
                  f"nSize={cur_n}, mSize={cur_m}, srcStride={align(cur_m, CUBE)}, dstStride={n}, quantPre={quant}, "
                  f"reluEn=false, nz2nd=true)")
        self.flag(set_flag("FIX_M", l0c_id))  # stand-in for the Fixpipe's unitFlag: the L0C half is read
        if flow.scale == "channel":
            self.flag(set_flag("FIX_MTE2", scale_buf))
        if case.has_bias:
            self.flag(set_flag("MTE1_MTE2", 4 + bias_buf))
        if t.dbL0C > 1:
            counters.l0c += 1
        if flow.scale == "channel":
            counters.scale += 1
        if case.has_bias:
            counters.bias += 1

    # ---- the K loops (IterateABL1, IterateAL1BL1, IterateBL1AL1) ----------------------------------
    def _iterate_ab(self) -> None:
        k_l1, counters = self.k_al1, self.counters
        for it in range(ceil_div(self.case.k, k_l1)):
            cur = min(k_l1, self.case.k - it * k_l1)
            buf = counters.ab_l1 & (self.t.nBufferNum - 1)
            self.flag(wait_flag("MTE1_MTE2", buf))
            self._copy_a(it * k_l1, cur, self.a_off[buf])
            self._copy_b(it * k_l1, cur, self.b_off[buf])
            self.flag(set_flag("MTE2_MTE1", buf), wait_flag("MTE2_MTE1", buf))
            self._iterate(cur, cur, it, self.a_off[buf], self.b_off[buf])
            self.flag(set_flag("MTE1_MTE2", buf))
            counters.ab_l1 += 1

    def _iterate_nested(self, outer: str) -> None:
        """IterateAL1BL1 (outer "a": kAL1 > kBL1) and IterateBL1AL1 (outer "b"): each window of the operand
        with the larger L1 window holds several windows of the other, loaded one after another; the two
        operands ping-pong their own buffers, and the inner loads count on across outer windows (l1Iter)."""
        k = self.case.k
        k_outer, k_inner = (self.k_al1, self.k_bl1) if outer == "a" else (self.k_bl1, self.k_al1)
        copy_outer, copy_inner = (self._copy_a, self._copy_b) if outer == "a" else (self._copy_b, self._copy_a)
        inner = "b" if outer == "a" else "a"
        outer_iters = ceil_div(k, k_outer)
        loop = 0
        for o in range(outer_iters):
            cur_outer = min(k_outer, k - o * k_outer)
            p = self._ping_pong(outer)  # the outer operand's buffers are flags 0 and 1
            self.flag(wait_flag("MTE1_MTE2", p))
            copy_outer(o * k_outer, cur_outer, self._buffer(outer))
            self.flag(set_flag("MTE2_MTE1", p), wait_flag("MTE2_MTE1", p))
            inner_iters = ceil_div(cur_outer, k_inner)
            for i in range(inner_iters):
                last = o == outer_iters - 1 and i == inner_iters - 1
                cur_inner = k - o * k_outer - i * k_inner if last else k_inner
                q = 2 + self._ping_pong(inner)  # the inner operand's are flags 2 and 3
                self.flag(wait_flag("MTE1_MTE2", q))
                copy_inner(loop * k_inner, cur_inner, self._buffer(inner))
                self.flag(set_flag("MTE2_MTE1", q), wait_flag("MTE2_MTE1", q))
                self._iterate(cur_outer, cur_inner, loop, self._buffer("a"), self._buffer("b"))
                self.flag(set_flag("MTE1_MTE2", q))
                self._flip(inner)
                loop += 1
            self.flag(set_flag("MTE1_MTE2", p))
            self._flip(outer)

    def _ping_pong(self, operand: str) -> int:
        return self.counters.a_pp if operand == "a" else self.counters.b_pp

    def _buffer(self, operand: str) -> int:
        return self.a_off[self.counters.a_pp] if operand == "a" else self.b_off[self.counters.b_pp]

    def _flip(self, operand: str) -> None:
        if operand == "a":
            self.counters.a_pp ^= 1
        else:
            self.counters.b_pp ^= 1

    # ---- GM -> L1 -------------------------------------------------------------------------------
    def _copy_a(self, k_start: int, cur_k: int, l1: int) -> None:
        case, cur_m = self.case, self.block[0]
        if case.transpose_a:  # A^T is k x m in GM: its rows are k
            src, rows, cols, pitch = self.a_gm + k_start * case.m, cur_k, cur_m, case.m
        else:
            src, rows, cols, pitch = self.a_gm + k_start, cur_m, cur_k, case.k
        self.emit(f"DataCopy(dst=L1[{l1}], src=GM[{src:#x}], dtype={case.a_type}, nValue={rows}, dValue={cols}, "
                  f"srcDValue={pitch}, dstNzC0Stride={align(rows, CUBE)})")

    def _copy_b(self, k_start: int, cur_k: int, l1: int) -> None:
        case, cur_n = self.case, self.block[1]
        if case.b_format == "NZ":  # already fractal in GM: one burst of whole 32-byte rows per column block
            if case.transpose_b:  # B^T (n x k): column blocks along k, rows n
                rows, blocks = align(cur_n, CUBE), ceil_div(cur_k, C0)
                src = self.b_gm + (k_start // C0) * self.b_rows_padded * C0
            else:  # B (k x n): column blocks along n, rows k
                rows, blocks = align(cur_k, CUBE), ceil_div(cur_n, C0)
                src = self.b_gm + k_start * C0
            self.emit(f"DataCopy(dst=L1[{l1}], src=GM[{src:#x}], blockCount={blocks}, blockLen={rows}, "
                      f"srcStride={self.b_rows_padded - rows}, dstStride=0)")
            return
        if case.transpose_b:  # B^T is n x k in GM: its rows are n
            src, rows, cols, pitch = self.b_gm + k_start, cur_n, cur_k, case.k
        else:
            src, rows, cols, pitch = self.b_gm + k_start * case.n, cur_k, cur_n, case.n
        self.emit(f"DataCopy(dst=L1[{l1}], src=GM[{src:#x}], dtype={case.b_type}, nValue={rows}, dValue={cols}, "
                  f"srcDValue={pitch}, dstNzC0Stride={align(rows, CUBE)})")

    # ---- L1 -> L0 and Mmad (Iterate) ----------------------------------------------------------------
    def _iterate(self, outer_k: int, inner_k: int, l1_iter: int, a_l1: int, b_l1: int) -> None:
        case, t, counters = self.case, self.t, self.counters
        cur_m, cur_n, l0c, bias_buf = self.block
        ka, kb = self.k_al1, self.k_bl1
        if ka >= kb:
            a_l1 += (l1_iter % (ka // kb)) * kb * (C0 if case.transpose_a else align(cur_m, CUBE))
        if kb >= ka:
            b_l1 += (l1_iter % (kb // ka)) * ka * (align(cur_n, CUBE) if case.transpose_b else C0)
        a_height = outer_k if ka >= kb else inner_k
        b_height = outer_k if kb >= ka else inner_k
        for i in range(ceil_div(inner_k, t.baseK)):
            cur_k0 = min(t.baseK, inner_k - i * t.baseK)
            half = counters.l0 & 1
            l0 = L0AB_HALF * half
            self.flag(wait_flag("M_MTE1", half))
            self._load("L0A", l0, a_l1, cur_m, a_height, cur_k0, i, transposed=case.transpose_a, dtype=case.a_type)
            need_bias = case.has_bias and l1_iter == 0 and i == 0
            bt = t.baseN * 4 * bias_buf
            if need_bias:
                self.emit(f"DataCopy(dst=BT[{bt}], src=L1[{self.bias_off[bias_buf]}], srcType={case.bias_type}, "
                          f"dstType={case.bias_type}, blockCount=1, blockLen={align(align(cur_n, CUBE) // 8, 2)}, "
                          f"srcStride=0, dstStride=0)")
            # B's L1 matrix runs k down its rows unless B is transposed: then it needs the transposing load
            self._load("L0B", l0, b_l1, cur_n, b_height, cur_k0, i, transposed=not case.transpose_b, dtype=case.b_type)
            init = l1_iter == 0 and i == 0 and not case.has_bias
            self.flag(set_flag("MTE1_M", half), wait_flag("MTE1_M", half))
            if self.fix_m_wait is not None:  # stand-in for unitFlag: the Fixpipe that last read this L0C half is done
                self.flag(wait_flag("FIX_M", self.fix_m_wait))
                self.fix_m_wait = None
            self.emit(f"Mmad(c=L0C[{l0c}], a=L0A[{l0}], b=L0B[{l0}], aType={case.a_type}, bType={case.b_type}, "
                      f"m={cur_m}, n={cur_n}, k={cur_k0}, cmatrixInitVal={_flag(init)}, cmatrixSource={_flag(need_bias)}, "
                      f"isBias=false, bias=BT[{bt if need_bias else 0}], disableGemv=true)")
            self.flag(set_flag("M_MTE1", half))
            counters.l0 += 1

    def _load(self, buffer: str, l0: int, l1: int, rows: int, l1_k: int, cur_k0: int, i: int, *, transposed: bool,
              dtype: str) -> None:
        """CopyInL0A / CopyInL0B: the i-th baseK slice of an L1 window into an L0 half."""
        blocks = ceil_div(rows, CUBE)  # m1 (n1): the operand's 16-row fractals
        base_k = self.t.baseK
        if not transposed:
            self.emit(f"LoadData(dst={buffer}[{l0}], src=L1[{l1}], dtype={dtype}, mStartPosition=0, "
                      f"kStartPosition={ceil_div(i * base_k, C0)}, mStep={blocks}, kStep={ceil_div(cur_k0, C0)}, "
                      f"srcStride={blocks}, dstStride={blocks}, ifTranspose=false)")
            return
        start = ceil_div(i * base_k, CUBE)
        step = align(ceil_div(cur_k0, CUBE), 2) if blocks % 2 == 0 else 2
        common = (f"dtype={dtype}, kStartPosition=0, mStep={step}, kStep={ceil_div(rows, C0)}, "
                  f"srcStride={ceil_div(l1_k, CUBE)}, dstStride={blocks}, ifTranspose=true")
        self.emit(f"LoadData(dst={buffer}[{l0}], src=L1[{l1}], mStartPosition={start}, {common})")
        if blocks % 2:  # an odd count of 16-row fractals: 32 k rows at a time, each to its own place
            self.flag(pipe_barrier("PIPE_MTE1"))  # the kernel puts a barrier after each of these loads
            for j in range(1, ceil_div(ceil_div(cur_k0, CUBE), 2)):
                self.emit(f"LoadData(dst={buffer}[{l0 + j * blocks * CUBE * C0}], src=L1[{l1}], "
                          f"mStartPosition={2 * j + start}, {common})")
                self.flag(pipe_barrier("PIPE_MTE1"))


@dataclass
class _Counters:
    """The block's loop counters that live across blocks on one core (the kernel's members)."""

    ab_l1: int = 0  # abL1LoopCnt_: which L1 buffer the next A/B window goes to
    l0: int = 0  # l0PingPong_
    l0c: int = 0  # l0cPingPong_
    scale: int = 0  # scaleLoopCnt_
    bias: int = 0  # biasLoopCnt_
    a_pp: int = 0  # aPingPongID_
    b_pp: int = 0  # bPingPongID_


def _flag(value: bool) -> str:
    return "true" if value else "false"


def _scale_text(case: QbmmCase, flow: Dataflow) -> str:
    return {"none": "no scale", "word": f"per-tensor {case.scale_b_type} word",
            "float": f"per-tensor {case.scale_b_type} scale, truncated to 19 bits",
            "double": "scale_a x scale_b in float32, truncated to 19 bits",
            "channel": f"per-channel {case.scale_b_type} words"}[flow.scale]

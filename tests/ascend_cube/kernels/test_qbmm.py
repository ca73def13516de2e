"""The QBMM kernel's schedule and tiling: whatever blocks, windows and buffers the tiling asks for, C is
Huawei's golden C (bit-exact for int8 inputs, whose arithmetic does not depend on how K is cut), and a
tiling the 950 cannot hold is refused in one line naming the field.

The tilings exercise every path of BlockMmadA8W8FixpipeQuant: IterateABL1 (kAL1 = kBL1, two and four
L1 buffers), IterateAL1BL1 (kAL1 > kBL1) and IterateBL1AL1 (kBL1 > kAL1), L0C ping-pong, odd and even
fractal counts for the transposing loads, several cores with the tail-round split, and the scheduler's
m / n load balance.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from isasim.ascend_cube.kernels import qbmm
from isasim.ascend_cube.kernels.qbmm_flags import is_sync
from isasim.ascend_cube.kernels.qbmm_run import compare, run
from isasim.ascend_cube.kernels.qbmm_scheduler import TailSplit, core_tiles

CASES = Path(__file__).parents[1] / "qbmm_cases"

TILINGS = {
    "two buffers, A windows over B windows": {"baseM": 32, "baseN": 32, "baseK": 32, "kAL1": 128, "kBL1": 64,
                                              "nBufferNum": 2},
    "two buffers, B windows over A windows": {"baseM": 32, "baseN": 64, "baseK": 64, "kAL1": 64, "kBL1": 256,
                                              "nBufferNum": 2},
    "four buffers, L0C ping-pong": {"baseM": 48, "baseN": 32, "baseK": 32, "kAL1": 64, "kBL1": 64,
                                    "nBufferNum": 4, "dbL0C": 2},
    "three cores, tail round split": {"baseM": 32, "baseN": 32, "baseK": 64, "blockDim": 3, "mTailTile": 2,
                                      "nTailTile": 2},
    "seven cores, no split": {"baseM": 16, "baseN": 32, "baseK": 32, "blockDim": 7, "dbL0C": 2},
}
# int8 cases with tails in m, n and k, bias, per-channel and per-tensor words, transposes, batches, NZ
INT8_CASES = ["i8_bf16_pcu64_biasi32_m257n15k300", "i8_i8_pcu64_b3_bias3_m33n70k100", "i8_i32_ta_m100n70k300",
              "i8_i8_ptu64_tatb_m100n70k300", "i8_f16_pcu64_bcast_m17n15k33", "i8_bf16_pcu64_nz_m129n70k65",
              "i8_i32_bcast_bias3_ta_m17n15k31"]


def _case(name: str, tiling: dict | None = None) -> qbmm.QbmmCase:
    case = qbmm.load_case(CASES / name / "case.json")
    case.tiling = dict(tiling or {})
    return case


@pytest.mark.parametrize("tiling", list(TILINGS), ids=list(TILINGS))
@pytest.mark.parametrize("name", INT8_CASES)
def test_qbmm_any_tiling_gives_the_golden_c(name, tiling):
    given = dict(TILINGS[tiling])
    case = _case(name)
    if case.transpose_a and given["baseM"] % 32:
        given["baseM"] = 32  # A's L1 rows are k when transposed: baseM in 32-byte columns
    if case.b_format == "NZ":
        given.pop("nTailTile", None)  # an NZ weight is read in whole 32-column blocks (refused: see below)
    case.tiling = given
    kernel = qbmm.build(case)
    c, _machine = run(kernel)
    result = compare(case, c)
    assert result.bit_exact == result.elements, f"{tiling}: {result.describe()}"


def test_qbmm_load_balance_splits_the_m_tail_as_the_tiling_says():
    case = _case("i8_bf16_pcu64_biasi32_m257n15k300", {"baseM": 64, "baseN": 32, "baseK": 64,
                                                        "mBaseTailSplitCnt": 2, "mTailMain": 48})
    kernel = qbmm.build(case)
    rows = sorted((b.tile.m_offset, b.tile.m) for b in kernel.blocks)
    # 257 rows: three blocks of 64, then the last 65 rows shared by two blocks: 48 and 17
    assert rows == [(0, 64), (64, 64), (128, 64), (192, 48), (240, 17)]
    c, _machine = run(kernel)
    assert compare(case, c).bit_exact == c.size


@pytest.mark.parametrize("m, n, base_m, base_n, cores, split, batches", [
    (257, 130, 32, 32, 1, TailSplit(), 1),
    (257, 130, 32, 32, 5, TailSplit(2, 2), 1),
    (100, 70, 16, 32, 8, TailSplit(1, 2), 3),
    (300, 40, 64, 32, 3, TailSplit(2, 1, 2, 1, 48, 0), 2),
    (33, 33, 16, 16, 24, TailSplit(2, 2), 6),
    (512, 96, 32, 32, 4, TailSplit(), 5),
])
def test_qbmm_scheduler_covers_every_element_of_c_once(m, n, base_m, base_n, cores, split, batches):
    hits = np.zeros((batches, m, n), dtype=np.int64)
    for core in range(cores):
        for tile in core_tiles(m, n, batches, base_m, base_n, core, cores, split):
            assert tile.core == core and 0 < tile.m <= base_m and 0 < tile.n <= base_n
            hits[tile.batch, tile.m_offset:tile.m_offset + tile.m, tile.n_offset:tile.n_offset + tile.n] += 1
    assert (hits == 1).all(), f"{(hits == 0).sum()} elements missed, {(hits > 1).sum()} computed twice"


def test_qbmm_scheduler_visits_windows_of_four_m_tiles_in_a_serpentine():
    # one core: the tile order the scheduler's GetTileIdx gives, m fastest inside a window of 4 m-tiles,
    # n reversed in every other window; the last window takes the 5 leftover m-tiles
    tiles = core_tiles(9 * 16, 2 * 32, 1, 16, 32, 0, 1, TailSplit())
    order = [(t.m_index, t.n_index) for t in tiles]
    assert order[:8] == [(0, 0), (1, 0), (2, 0), (3, 0), (0, 1), (1, 1), (2, 1), (3, 1)]
    assert order[8:] == [(4, 1), (5, 1), (6, 1), (7, 1), (8, 1), (4, 0), (5, 0), (6, 0), (7, 0), (8, 0)]


@pytest.mark.parametrize("tiling, words", [
    ({"baseK": 48}, "baseK 48 must be a multiple of 32"),
    ({"baseM": 40}, "multiples of 16"),
    ({"baseM": 256, "baseN": 256, "dbL0C": 2}, "more than L0C gives one tile"),
    ({"baseM": 256, "baseK": 256}, "more than half of L0A"),
    ({"kAL1": 100}, "must be a multiple of baseK"),
    ({"baseK": 64, "kAL1": 192, "kBL1": 128, "nBufferNum": 2}, "the larger must be a multiple of the smaller"),
    ({"baseM": 256, "baseN": 256, "baseK": 128, "kAL1": 1024, "kBL1": 1024, "dbL0C": 1, "nBufferNum": 2},
     "one L1 half needs"),
    ({"mBaseTailSplitCnt": 3, "mTailMain": 16, "baseM": 64, "baseN": 32}, "at most baseM"),
    ({"nBufferNum": 3}, "nBufferNum must be 2 or 4"),
    ({"baseN": 48}, "multiple of 32 with B not transposed"),
    ({"mBaseTailSplitCnt": 9}, "more than the"),
    ({"mTailTile": 20}, "smaller than a 16-row fractal"),
    ({"fooBar": 1}, "tiling.fooBar: not a QBMMTiling field"),
    ({"baseM": -16}, "must be an integer >= 0"),
])
def test_qbmm_tiling_the_chip_cannot_hold_is_one_line(tiling, words):
    case = _case("i8_bf16_pcu64_biasi32_m257n15k300", tiling)
    with pytest.raises(qbmm.CaseError) as refused:
        qbmm.build(case)
    assert words in str(refused.value) and "\n" not in str(refused.value), str(refused.value)


def test_qbmm_default_tiling_is_the_operators_for_a_large_int8_problem():
    # the worked default of the 950 host tiling (facts from ops-nn AdaptiveSlidingWindowCubeBasicAPITiling):
    # baseM = baseN = 256, baseK = 128, kAL1 = kBL1 = 512, two L1 buffers, one L0C tile; per channel: 384
    a = np.zeros((1024, 1024), dtype=np.int8)
    plain = qbmm.QbmmCase(m=1024, n=1024, k=1024, c_type="int32", arrays={"a": a, "b": a})
    t = qbmm.build(plain).tiling
    assert (t.baseM, t.baseN, t.baseK, t.kAL1, t.kBL1, t.nBufferNum, t.dbL0C) == (256, 256, 128, 512, 512, 2, 1)
    words = np.full(1024, 0x3F800000, dtype=np.uint64)
    channel = qbmm.QbmmCase(m=1024, n=1024, k=1024, c_type="bfloat16", x2_quant_mode="perchannel",
                            arrays={"a": a, "b": a, "scale_b": words})
    t = qbmm.build(channel).tiling
    assert (t.kAL1, t.kBL1, t.nBufferNum) == (384, 384, 2)


def test_qbmm_nz_weight_with_a_split_tail_column_is_refused():
    case = _case("i8_bf16_pcu64_nz_m129n70k65", {"baseM": 32, "baseN": 32, "blockDim": 3, "nTailTile": 2})
    with pytest.raises(qbmm.CaseError, match="nTailTile > 1 with b_format NZ"):
        qbmm.build(case)


def test_qbmm_instruction_stream_has_the_kernels_shape():
    kernel = qbmm.build(_case("i8_bf16_pcu64_biasi32_m257n15k300"))
    code = kernel.program_lines
    mnemonics = [line.split("(")[0] for line in code]
    # per block: words GM -> L1, bias GM -> L1, then A and B windows, loads and Mmads, the words to FB, Fixpipe
    assert mnemonics.count("Fixpipe") == len(kernel.blocks) == 2
    first_mmad = next(line for line in code if line.startswith("Mmad"))
    assert "cmatrixInitVal=false, cmatrixSource=true" in first_mmad  # C starts from the bias table
    assert all("quantPre=VQS322BF16_PRE" in line for line in code if line.startswith("Fixpipe"))
    assert sum(line.startswith("SetFixPipeConfig") for line in code) == 2
    block = [line for line in kernel.block_lines(1) if not is_sync(line)]  # the flags around it: test_qbmm_flags
    assert block[0].startswith("DataCopy") and block[-1].startswith("Fixpipe")
    json.dumps(kernel.trace().program)  # the trace holds the program text

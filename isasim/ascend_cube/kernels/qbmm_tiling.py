"""The QBMM kernel's tiling (the seed's QBMMTiling and scheduler parameters): chosen as the
operator's host tiling chooses it, or given, and checked against the chip before anything is built.

The default follows CANN ops-nn's AdaptiveSlidingWindowCubeBasicAPITiling for the 950
(``base_block_calculator.cpp`` ComputeBaseBlockDefault, ``l1_tiling_data_calculator.cpp``
ComputeL1TilingDefault / CalStepKs, ``cube_basic_api_tiling.cpp`` CalculateNBufferNum4Cube, and
CalL1Tiling's dbL0C rule), for one AI core:

- baseM = min(m, 256) aligned to 16 (32 when A is transposed: its L1 rows are m), baseN =
  min(n, 256) aligned to 32 (16 when B is transposed), baseK = min(k, 128) aligned to 32;
- stepKa = (L1 left / 2 / (baseM x baseK)) / 2 and stepKb alike, each at most ceil(k / baseK),
  the larger cut to a multiple of the smaller (L1 left: 512 KiB less two buffers of scale words
  and of bias); kAL1 = stepKa x baseK, kBL1 = stepKb x baseK;
- nBufferNum 4 when four A and four B windows of min(stepKa, stepKb) x baseK fit in L1 (then
  kAL1 = kBL1), else 2;
- dbL0C 2 when two baseM x baseN L0C tiles fit (and the bias and scale of two fit their buffers),
  else 1.

Not chosen automatically (give them in ``tiling``): the host's re-split of small problems over
many cores (AdjustBaseBlockDefault), the edge load balance (mBaseTailSplitCnt / mTailMain /
nBaseTailSplitCnt / nTailMain) and the tail-round split (mTailTile / nTailTile); their defaults
(1, 0) leave every block as the scheduler cuts it.  ``blockDim`` is the number of AI cores the
blocks are spread over (default 1: every block on one core, in the scheduler's order).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields

from isasim.core.trace import brief

from .qbmm_case import CaseError
from .qbmm_scheduler import TailSplit, ceil_div

L1_SIZE = 512 * 1024
L0AB_HALF = 32 * 1024  # L0A and L0B are each two 32 KiB ping-pong halves (HALF_L0_SIZE)
L0C_SIZE = 256 * 1024
BT_SIZE = 4096
FB_SIZE = 4096
C0 = 32  # 8-bit elements per 32-byte fractal row
CUBE = 16


def align(value: int, unit: int) -> int:
    return ceil_div(value, unit) * unit


@dataclass
class QbmmTiling:
    baseM: int
    baseN: int
    baseK: int
    kAL1: int
    kBL1: int
    nBufferNum: int = 2
    dbL0C: int = 1
    mTailTile: int = 1
    nTailTile: int = 1
    mBaseTailSplitCnt: int = 1
    nBaseTailSplitCnt: int = 1
    mTailMain: int = 0
    nTailMain: int = 0
    blockDim: int = 1

    @property
    def split(self) -> TailSplit:
        return TailSplit(self.mTailTile, self.nTailTile, self.mBaseTailSplitCnt, self.nBaseTailSplitCnt,
                         self.mTailMain, self.nTailMain)

    def as_dict(self) -> dict:
        return asdict(self)


FIELDS = tuple(f.name for f in fields(QbmmTiling))


def default_tiling(case, scale_words: bool, bias_bytes: int) -> QbmmTiling:
    """The operator's tiling for ``case`` on one core (see the module docstring)."""
    m, n, k = case.m, case.n, case.k
    base_m = align(min(m, 256), C0 if case.transpose_a else CUBE)
    base_n = align(min(n, 256), CUBE if case.transpose_b else C0)
    base_k = align(min(128, k), C0)
    left = L1_SIZE - (2 * base_n * bias_bytes) - (2 * base_n * 8 if scale_words else 0)
    k_steps = ceil_div(k, base_k)
    step_ka = min(max(left // 2 // (base_m * base_k) // 2, 1), k_steps)
    step_kb = min(max(left // 2 // (base_n * base_k) // 2, 1), k_steps)
    if step_ka > step_kb:
        step_ka = step_ka // step_kb * step_kb
    elif step_kb > step_ka:
        step_kb = step_kb // step_ka * step_ka
    k_l1 = min(step_ka, step_kb) * base_k
    used = 4 * base_n * k_l1 + 4 * base_m * k_l1 + (2 * base_n * 8 if scale_words else 0) + 2 * base_n * bias_bytes
    buffers = 4 if used <= L1_SIZE else 2
    ka, kb = (k_l1, k_l1) if buffers == 4 else (step_ka * base_k, step_kb * base_k)
    fits_twice = base_m * base_n * 4 * 2 <= L0C_SIZE and (not bias_bytes or base_n <= 512) \
        and (not scale_words or base_n <= 256)
    return QbmmTiling(base_m, base_n, base_k, ka, kb, buffers, 2 if fits_twice else 1)


def tiling_for(case, scale_words: bool, bias_bytes: int) -> QbmmTiling:
    """The case's tiling: the fields it gives over the default, checked."""
    tiling = default_tiling(case, scale_words, bias_bytes)
    given = case.tiling or {}
    unknown = sorted(set(given) - set(FIELDS))
    if unknown:
        raise CaseError(f"tiling.{unknown[0]}: not a QBMMTiling field (they are {', '.join(FIELDS)})",
                        source=case.source)
    for key, value in given.items():
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise CaseError(f"tiling.{key} must be an integer >= 0, not {brief(value)}", source=case.source)
        setattr(tiling, key, value)
    if "kAL1" not in given and "kBL1" not in given and {"baseM", "baseN", "baseK"} & set(given):
        # a given base block: the L1 windows the default rule gives for it
        chosen = default_tiling(case, scale_words, bias_bytes)
        tiling.kAL1 = tiling.kBL1 = max(tiling.baseK, min(chosen.kAL1, chosen.kBL1) // max(tiling.baseK, 1)
                                        * tiling.baseK)
    check_tiling(case, tiling, scale_words, bias_bytes)
    return tiling


def check_tiling(case, t: QbmmTiling, scale_words: bool, bias_bytes: int) -> None:
    """Refuse, in one line naming the field and the limit, a tiling the kernel cannot run on the 950."""
    def refuse(message: str):
        raise CaseError(f"tiling: {message}", source=case.source)

    for key in ("baseM", "baseN", "baseK", "kAL1", "kBL1", "blockDim", "mTailTile", "nTailTile",
                "mBaseTailSplitCnt", "nBaseTailSplitCnt"):
        if getattr(t, key) < 1:
            refuse(f"{key} must be at least 1")
    if t.baseM % CUBE or t.baseN % CUBE:
        refuse(f"baseM {t.baseM} and baseN {t.baseN} must be multiples of 16 (the fractal's rows)")
    if case.transpose_a and t.baseM % C0:
        refuse(f"baseM {t.baseM} must be a multiple of 32 with transpose_a: A's L1 rows are k, its 32-byte "
               f"columns m, and the A buffer holds baseM x kAL1 bytes")
    if not case.transpose_b and t.baseN % C0:
        refuse(f"baseN {t.baseN} must be a multiple of 32 with B not transposed: B's L1 rows are k, its 32-byte "
               f"columns n, and the B buffer holds baseN x kBL1 bytes")
    if t.baseK % C0:
        refuse(f"baseK {t.baseK} must be a multiple of 32 (the 8-bit fractal's K0)")
    if t.nBufferNum not in (2, 4):
        refuse(f"nBufferNum must be 2 or 4, not {t.nBufferNum}")
    if t.dbL0C not in (1, 2):
        refuse(f"dbL0C must be 1 or 2, not {t.dbL0C}")
    if t.nBufferNum == 4 and t.kAL1 != t.kBL1:
        t.kAL1 = t.kBL1 = min(t.kAL1, t.kBL1)  # as the kernel's InitNormal does with four buffers
    for key in ("kAL1", "kBL1"):
        if getattr(t, key) % t.baseK:
            refuse(f"{key} {getattr(t, key)} must be a multiple of baseK {t.baseK} (the L1 window is cut into "
                   f"baseK slices)")
    big, small = max(t.kAL1, t.kBL1), min(t.kAL1, t.kBL1)
    if big % small:
        refuse(f"kAL1 {t.kAL1} and kBL1 {t.kBL1}: the larger must be a multiple of the smaller")
    if t.baseM * t.baseK > L0AB_HALF:
        refuse(f"baseM x baseK = {t.baseM * t.baseK} bytes is more than half of L0A ({L0AB_HALF}: L0A is "
               f"double-buffered)")
    if t.baseN * t.baseK > L0AB_HALF:
        refuse(f"baseN x baseK = {t.baseN * t.baseK} bytes is more than half of L0B ({L0AB_HALF}: L0B is "
               f"double-buffered)")
    l0c = L0C_SIZE // t.dbL0C
    if t.baseM * t.baseN * 4 > l0c:
        refuse(f"baseM x baseN x 4 = {t.baseM * t.baseN * 4} bytes is more than L0C gives one tile ({l0c} with "
               f"dbL0C {t.dbL0C})")
    if max(t.baseM, t.baseN, t.baseK) > 4095:
        refuse("baseM, baseN and baseK are at most 4095 (Mmad's m, n, k)")
    if bias_bytes and 2 * t.baseN * 4 > BT_SIZE:
        refuse(f"baseN {t.baseN}: two bias rows of baseN float32/int32 are more than the {BT_SIZE}-byte bias table")
    if scale_words and t.baseN * 8 > FB_SIZE:
        refuse(f"baseN {t.baseN}: baseN quant words of 8 bytes are more than the {FB_SIZE}-byte fixpipe buffer")
    half = l1_half_bytes(t, scale_words, bias_bytes)
    if half > L1_SIZE // 2:
        refuse(f"one L1 half needs {half} bytes (A {t.baseM} x {t.kAL1 if t.nBufferNum == 2 else min(t.kAL1, t.kBL1)}"
               f", B {t.baseN} x {t.kBL1 if t.nBufferNum == 2 else min(t.kAL1, t.kBL1)} per buffer, "
               f"{t.nBufferNum // 2} of each, scale and bias): more than {L1_SIZE // 2}")
    for key, limit in (("mTailTile", ceil_div(t.baseM, CUBE)), ("nTailTile", ceil_div(t.baseN, CUBE))):
        if getattr(t, key) > limit:
            refuse(f"{key} {getattr(t, key)} splits a block into pieces smaller than a 16-row fractal")
    m_cnt, n_cnt = ceil_div(case.m, t.baseM), ceil_div(case.n, t.baseN)
    for key, cnt in (("mBaseTailSplitCnt", m_cnt), ("nBaseTailSplitCnt", n_cnt)):
        if getattr(t, key) > cnt:
            refuse(f"{key} {getattr(t, key)} is more than the {cnt} blocks along that axis")
    for axis, size, cnt, base, unit in (("m", case.m, m_cnt, t.baseM, "rows"), ("n", case.n, n_cnt, t.baseN, "columns")):
        split, main = getattr(t, f"{axis}BaseTailSplitCnt"), getattr(t, f"{axis}TailMain")
        if split == 1:
            continue
        merged = size - (cnt - split) * base
        last = merged - (split - 1) * main
        if not 0 < main <= base or not 0 < last <= base:
            refuse(f"{axis}TailMain {main}: the last {split} {axis} blocks share {merged} {unit}, so each but the "
                   f"last takes 1..base{axis.upper()} {unit} and the last what is left, at most base{axis.upper()} "
                   f"({last})")


def l1_half_bytes(t: QbmmTiling, scale_words: bool, bias_bytes: int) -> int:
    """Bytes of one L1 half: nBufferNum/2 A and B windows, one scale and one bias buffer."""
    k_a = t.kAL1 if t.nBufferNum == 2 else min(t.kAL1, t.kBL1)
    k_b = t.kBL1 if t.nBufferNum == 2 else min(t.kAL1, t.kBL1)
    return (t.nBufferNum // 2) * (t.baseM * k_a + t.baseN * k_b) + (t.baseN * 8 if scale_words else 0) \
        + t.baseN * bias_bytes

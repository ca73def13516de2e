"""The synchronisation the seed's QBMM Cube kernel issues, as isasim's SetFlag / WaitFlag / PipeBarrier lines.

Read (for facts only; nothing here is their code) from:

- ops-nn ``matmul/common/cmct/block/block_mmad_a8w8_fixpipe_quant.h`` (BlockMmadA8W8FixpipeQuant) and
  ``matmul/common/cmct/kernel/kernel_qbmm_cube.h`` (QuantMmBatchCube), repository hicann/ops-nn at commit
  e5c3fa9327ea95ba26d06227e746923580d10921 (:data:`OPS_NN`);
- asc-devkit ``impl/basic_api/dav_3510/kernel_tpipe_impl_c310.h`` (TPipe::Init / TPipe::Destroy on the 950)
  and ``impl/basic_api/dav_3510/kernel_operator_fixpipe_impl.h`` (what one Fixpipe call issues), repository
  mirror-cann/asc-devkit at commit 82b89a15f26329511fc7fbc807d5132a1f9b4ba7 (:data:`ASC_DEVKIT`).

The event IDs are the kernel's: the L1 input buffers use 0..3 (INPUT_BUFFER_FLAG_0..3 of
``quant_batch_matmul_constant.h``), the two bias buffers 4 and 5, the two per-channel scale buffers 0 and 1
(on their own events, FIX_MTE2 / MTE2_FIX), and the L0A/L0B halves 0 and 1 (M_MTE1 / MTE1_M, the
ping-pong bit).  :data:`SYNC_POINTS` lists every place the kernel synchronises, with the line it does so
at; docs/ascend_cube/guide/qbmm-flags.md walks through them.

Two orderings of the real kernel are not flags, and isasim has no form for them, so the stream carries
stand-ins (``stand_in`` in the table, ``STAND_IN_EVENTS``):

- L0C between the Mmads and the Fixpipe: the kernel gives the last Mmad of a block and the Fixpipe
  ``unitFlag`` (FINAL_ACCUMULATION), which makes the hardware hold the Fixpipe until the Mmads' results
  are in L0C and a later Mmad into the same L0C half until the Fixpipe has read it.  isasim's Mmad and
  Fixpipe have no unitFlag, so the stream sets M_FIX after a block's last Mmad and waits for it before the
  Fixpipe, and sets FIX_M after the Fixpipe and waits for it before the next Mmad into that half (IDs: the
  L0C ping-pong bit; FIX_M is set for both halves at the start and waited for at the end).
"""

from __future__ import annotations

from dataclasses import dataclass

OPS_NN = ("hicann/ops-nn", "e5c3fa9327ea95ba26d06227e746923580d10921")
ASC_DEVKIT = ("mirror-cann/asc-devkit", "82b89a15f26329511fc7fbc807d5132a1f9b4ba7")
BLOCK_MMAD = "matmul/common/cmct/block/block_mmad_a8w8_fixpipe_quant.h"
KERNEL = "matmul/common/cmct/kernel/kernel_qbmm_cube.h"
CONSTANTS = "matmul/common/cmct/utils/quant_batch_matmul_constant.h"
TPIPE = "impl/basic_api/dav_3510/kernel_tpipe_impl_c310.h"
FIXPIPE_IMPL = "impl/basic_api/dav_3510/kernel_operator_fixpipe_impl.h"

INPUT_BUFFER_FLAG = (0, 1, 2, 3)  # MTE1_MTE2 / MTE2_MTE1 IDs of the A and B L1 buffers
BIAS_BUFFER_FLAG = (4, 5)  # MTE1_MTE2 / MTE2_MTE1 IDs of the two bias L1 buffers
X2_SCALE_BUFFER_FLAG = (0, 1)  # FIX_MTE2 / MTE2_FIX IDs of the two per-channel scale L1 buffers
L0_FLAG = (0, 1)  # M_MTE1 / MTE1_M IDs: the L0A/L0B half (l0PingPong_ & 1)
TPIPE_M_MTE1 = (0, 1, 2)  # TPipe::Init sets M_MTE1 0, 1 and 2 on the AIC; TPipe::Destroy waits for them
STAND_IN_EVENTS = ("M_FIX", "FIX_M")  # isasim's stand-ins for unitFlag (see the module docstring)


def set_flag(event: str, event_id: int) -> str:
    return f"SetFlag(event={event}, id={event_id})"


def wait_flag(event: str, event_id: int) -> str:
    return f"WaitFlag(event={event}, id={event_id})"


def pipe_barrier(pipe: str) -> str:
    return f"PipeBarrier(pipe={pipe})"


@dataclass(frozen=True)
class SyncPoint:
    """One place the kernel synchronises: what it issues, where in the kernel, and the line that says so."""

    key: str
    issues: str  # the Ascend C calls, in words of the source (event and ID)
    where: str
    source: str  # repository file:line (OPS_NN or ASC_DEVKIT commit)
    stand_in: bool = False  # isasim's stand-in for an ordering the kernel gets without a flag


SYNC_POINTS = (
    SyncPoint("tpipe_init", "SetFlag<M_MTE1>(0), (1), (2)",
              "kernel entry: the TPipe the __global__ function constructs (ASCEND_IS_AIC); 0 and 1 arm the "
              "first two L0 waits, 2 is for the matmul library's bias and unused by this kernel",
              f"{TPIPE}:108-122"),
    SyncPoint("block_ctor", "SetFlag<MTE1_MTE2>(0), (1), (2), (3), (4), (5); SetFlag<FIX_MTE2>(0), (1)",
              "BlockMmadA8W8FixpipeQuant's constructor: every L1 buffer starts free",
              f"{BLOCK_MMAD}:109-120"),
    SyncPoint("scale_in", "WaitFlag<FIX_MTE2>(s); DataCopyPad GM->L1; SetFlag<MTE2_FIX>(s); WaitFlag<MTE2_FIX>(s)",
              "per block with per-channel words, s = scaleLoopCnt_ & 1 (CopyX2ScaleInL1)",
              f"{BLOCK_MMAD}:375-385"),
    SyncPoint("bias_in", "WaitFlag<MTE1_MTE2>(4+b); DataCopyPad GM->L1; SetFlag<MTE2_MTE1>(4+b); "
              "WaitFlag<MTE2_MTE1>(4+b)", "per block with a bias, b = biasLoopCnt_ & 1 (CopyBiasInL1)",
              f"{BLOCK_MMAD}:361-373"),
    SyncPoint("ab_window", "WaitFlag<MTE1_MTE2>(i); A and B GM->L1; SetFlag<MTE2_MTE1>(i); WaitFlag<MTE2_MTE1>(i); "
              "Iterate; SetFlag<MTE1_MTE2>(i)",
              "IterateABL1 (kAL1 = kBL1), per L1 window, i = abL1LoopCnt_ & (nBufferNum - 1)",
              f"{BLOCK_MMAD}:686-703"),
    SyncPoint("outer_window", "WaitFlag<MTE1_MTE2>(0+p); outer operand GM->L1; SetFlag<MTE2_MTE1>(0+p); "
              "WaitFlag<MTE2_MTE1>(0+p); inner windows; SetFlag<MTE1_MTE2>(0+p)",
              "IterateAL1BL1 (outer A, p = aPingPongID_) and IterateBL1AL1 (outer B, p = bPingPongID_)",
              f"{BLOCK_MMAD}:628-651, 659-682"),
    SyncPoint("inner_window", "WaitFlag<MTE1_MTE2>(2+q); inner operand GM->L1; SetFlag<MTE2_MTE1>(2+q); "
              "WaitFlag<MTE2_MTE1>(2+q); Iterate; SetFlag<MTE1_MTE2>(2+q)",
              "the inner loop of IterateAL1BL1 (B, q = bPingPongID_) and IterateBL1AL1 (A, q = aPingPongID_)",
              f"{BLOCK_MMAD}:635-648, 666-679"),
    SyncPoint("l0_slice", "WaitFlag<M_MTE1>(h); LoadData A; [bias L1->BT]; LoadData B; SetFlag<MTE1_M>(h); "
              "WaitFlag<MTE1_M>(h); Mmad; SetFlag<M_MTE1>(h)",
              "Iterate, per baseK slice, h = l0PingPong_ & 1 (the L0A/L0B half)", f"{BLOCK_MMAD}:525-546"),
    SyncPoint("odd_transposing_load", "PipeBarrier<PIPE_MTE1>() after the first LoadData and after each further one",
              "CopyInL0A with A transposed / CopyInL0B with B not transposed, when the 16-row fractal count is odd",
              f"{BLOCK_MMAD}:416-426, 458-468"),
    SyncPoint("fixpipe", "[copy_cbuf_to_fbuf; set_fpc]; PipeBarrier<PIPE_FIX>(); the L0C->GM move",
              "inside every Fixpipe call (vector quant: the words L1->FB first; scalar: set_quant_pre first)",
              f"{FIXPIPE_IMPL}:381-391, 711-737, 740-774"),
    SyncPoint("block_end", "SetFlag<FIX_MTE2>(s) (per-channel words); SetFlag<MTE1_MTE2>(4+b) (bias)",
              "the end of BlockMmadA8W8FixpipeQuant::operator(), after the Fixpipe", f"{BLOCK_MMAD}:205-212"),
    SyncPoint("block_dtor", "WaitFlag<MTE1_MTE2>(0), (1), (2), (3), (4), (5); WaitFlag<FIX_MTE2>(0), (1)",
              "BlockMmadA8W8FixpipeQuant's destructor, after the kernel's last block (and SetAtomicNone)",
              f"{BLOCK_MMAD}:122-133"),
    SyncPoint("tpipe_destroy", "WaitFlag<M_MTE1>(0), (1), (2); pipe_barrier(PIPE_ALL)",
              "TPipe's destructor at the end of the __global__ function", f"{TPIPE}:787-819"),
    SyncPoint("l0c_stand_in", "SetFlag<M_FIX>(c) after a block's last Mmad, WaitFlag<M_FIX>(c) before its Fixpipe; "
              "SetFlag<FIX_M>(c) after the Fixpipe, WaitFlag<FIX_M>(c) before the next Mmad into L0C half c; "
              "SetFlag<FIX_M>(0), (1) at the start and WaitFlag<FIX_M>(0), (1) at the end",
              "isasim only: the kernel orders L0C by unitFlag (Mmad's FINAL_ACCUMULATION, Fixpipe's unitFlag)",
              f"{BLOCK_MMAD}:541, 582, 619", stand_in=True),
)


def prologue() -> list[str]:
    """What runs before the kernel's first block: TPipe::Init's M_MTE1 sets, BlockMmadA8W8FixpipeQuant's
    constructor, and the stand-in's FIX_M sets (both L0C halves start free)."""
    lines = [set_flag("M_MTE1", i) for i in TPIPE_M_MTE1]
    lines += [set_flag("MTE1_MTE2", i) for i in (*INPUT_BUFFER_FLAG, *BIAS_BUFFER_FLAG)]
    lines += [set_flag("FIX_MTE2", i) for i in X2_SCALE_BUFFER_FLAG]
    lines += [set_flag("FIX_M", i) for i in L0_FLAG]
    return lines


def epilogue() -> list[str]:
    """What runs after the last block: the stand-in's FIX_M waits, the block's destructor, TPipe's destructor."""
    lines = [wait_flag("FIX_M", i) for i in L0_FLAG]
    lines += [wait_flag("MTE1_MTE2", i) for i in (*INPUT_BUFFER_FLAG, *BIAS_BUFFER_FLAG)]
    lines += [wait_flag("FIX_MTE2", i) for i in X2_SCALE_BUFFER_FLAG]
    lines += [wait_flag("M_MTE1", i) for i in TPIPE_M_MTE1]
    lines.append(pipe_barrier("PIPE_ALL"))
    return lines


SYNC_MNEMONICS = ("SetFlag", "WaitFlag", "PipeBarrier")


def is_sync(line: str) -> bool:
    return line.split("(", 1)[0] in SYNC_MNEMONICS


def parse(line: str) -> tuple[str, str, int | None]:
    """("SetFlag" | "WaitFlag", event, id) or ("PipeBarrier", pipe, None) of a sync line this module writes."""
    name, rest = line.split("(", 1)
    fields = dict(part.split("=", 1) for part in rest.rstrip(")").split(", "))
    if name == "PipeBarrier":
        return name, fields["pipe"], None
    return name, fields["event"], int(fields["id"])

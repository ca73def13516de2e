"""The fixpipe forms: Fixpipe (L0C -> GM or L1, its parameters named as FixpipeParams names them) and the calls
that set what it reads and how it writes (SetFixpipePreQuantFlag, SetFixPipeConfig, SetAtomicAdd,
SetAtomicNone)."""

from __future__ import annotations

from ..faults import QUANT_PARAM
from ..semantics import fixpipe
from .base import (CHIP_LACKS, DTYPES, FORMS, GM_UNMAPPED, MISALIGNED, OUT_OF_RANGE, PAST_BUFFER_END,
                   QUANT_MODES, AscendForm, Param)

_FIXPIPE = (Param("srcType", "dtype", "L0C element type", choices=("int32", "float32")),
            Param("dstType", "dtype", "output element type", choices=DTYPES),
            Param("nSize", "int", "columns (N) moved", lo=1, hi=4095),
            Param("mSize", "int", "rows (M) moved", lo=1, hi=8192),
            Param("srcStride", "int", "rows between L0C column blocks (C0_SIZE units, >= ceil16(mSize))", lo=1),
            Param("dstStride", "int", "ND: destination row pitch in elements; Nz: 32 B units between column blocks",
                  lo=1, hi=(1 << 32) - 1),
            Param("quantPre", "mode", "the quant mode (QuantMode_t)", "NoQuant", choices=QUANT_MODES),
            Param("reluEn", "bool", "ReLU folded into the scale multiply (M2 = 0 for negative inputs)", False),
            Param("nz2nd", "bool", "write the ND matrix (false: keep Nz fractals)", True))

_FIXPIPE_FAULTS = (PAST_BUFFER_END, MISALIGNED, OUT_OF_RANGE, CHIP_LACKS,
                   (QUANT_PARAM, "more per-channel words than one pass takes, or an M1 the chip forbids "
                                 "(denormal, inf, NaN)"))

for _form in (
    AscendForm("Fixpipe", "L0C_to_GM", (Param("dst", "GM", "destination"), Param("src", "L0C", "source"), *_FIXPIPE),
               "move C from L0C to GM through the fixpipe: quantize, ReLU, Nz -> ND, atomic add",
               fixpipe.fixpipe, (GM_UNMAPPED, *_FIXPIPE_FAULTS), group="fixpipe", check_chip=fixpipe.check_params,
               access=fixpipe.fixpipe_access, pipe="FIX"),
    AscendForm("Fixpipe", "L0C_to_L1", (Param("dst", "L1", "destination"), Param("src", "L0C", "source"), *_FIXPIPE),
               "move C from L0C to L1 through the fixpipe: quantize, ReLU, Nz -> ND", fixpipe.fixpipe,
               _FIXPIPE_FAULTS, group="fixpipe", check_chip=fixpipe.check_params, access=fixpipe.fixpipe_access, pipe="FIX"),
    AscendForm("SetFixpipePreQuantFlag", "", (Param("config", "int", "the 64-bit quant word", lo=0, hi=(1 << 64) - 1),),
               "set the scalar (per-tensor) quant word", fixpipe.set_pre_quant_flag, group="fixpipe"),
    AscendForm("SetFixPipeConfig", "", (Param("quantPre", "FB", "where the per-channel quant words are"),),
               "point the fixpipe at per-channel quant words in FB", fixpipe.set_fixpipe_config,
               (MISALIGNED, PAST_BUFFER_END), group="fixpipe"),
    AscendForm("SetAtomicAdd", "", (Param("dtype", "dtype", "the element type added", choices=DTYPES),),
               "make GM writes of the fixpipe add to what GM holds", fixpipe.set_atomic_add, (CHIP_LACKS,),
               group="fixpipe"),
    AscendForm("SetAtomicNone", "", (), "make GM writes of the fixpipe plain stores again", fixpipe.set_atomic_none,
               group="fixpipe"),
):
    FORMS.add(_form)

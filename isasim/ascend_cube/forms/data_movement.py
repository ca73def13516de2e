"""The data movement forms: DataCopy (GM -> L1 plain and Nd2Nz, L1 -> BT, L1 -> FB) and LoadData (L1 -> L0A/L0B,
with LoadData2DParams, and on the 950 LoadData2DParamsV2), their parameters named as DataCopyParams, Nd2NzParams
and LoadData2DParams(V2) name them."""

from __future__ import annotations

from ..faults import PARAM_RANGE, UNSUPPORTED
from ..semantics import data_movement
from .base import (CHIP_LACKS, DTYPES, FORMS, GM_UNMAPPED, MISALIGNED, OUT_OF_RANGE, PAST_BUFFER_END,
                   AscendForm, Param)


def _burst(unit: str) -> tuple[Param, ...]:
    return (Param("blockCount", "int", "number of bursts", 1, 1, 4095),
            Param("blockLen", "int", f"bytes per burst, in {unit}", lo=1),
            Param("srcStride", "int", f"gap between source bursts, in {unit}", 0),
            Param("dstStride", "int", f"gap between destination bursts, in {unit}", 0))


_LOAD2D = (Param("dtype", "dtype", "the element type (the template argument)", choices=DTYPES),
           Param("startIndex", "int", "the first source fractal (512 B each)", 0),
           Param("repeatTimes", "int", "how many fractals", 1, 1, 255),
           Param("srcStride", "int", "source fractals between consecutive loads", 1),
           Param("dstGap", "int", "fractals left free between destination fractals", 0),
           Param("ifTranspose", "bool", "transpose each fractal (16x16 of 2-byte elements)", False))

# LoadData2DParamsV2 (kernel_struct_mm.h; the ranges are the load_cbuf_to_ca/cb operand widths of
# asc_copy_l12l0a: uint16 positions, uint8 steps as the docs' [0, 255], int16 srcStride (isasim takes no negative
# one: the docs give no meaning for it), uint16 dstStride; the defaults are the struct's, 0)
_LOAD2D_V2 = (Param("dtype", "dtype", "the element type (the template argument)", choices=DTYPES),
              Param("mStartPosition", "int", "first source fractal along M (16-row units)", 0),
              Param("kStartPosition", "int", "first source fractal along K (32 B units)", 0),
              Param("mStep", "int", "source fractals along M (0: nothing moves)", 0, 0, 255),
              Param("kStep", "int", "source fractals along K (0: nothing moves)", 0, 0, 255),
              Param("srcStride", "int", "source fractals (512 B) from one K step to the next", 0, 0, (1 << 15) - 1),
              Param("dstStride", "int", "destination fractals (512 B) from one K column to the next", 0),
              Param("ifTranspose", "bool", "transpose the loaded matrix (b8: mStep even; b32: kStep even)", False))
_LOAD2D_V2_FAULTS = (PAST_BUFFER_END, MISALIGNED,
                     (PARAM_RANGE, "a field outside its width; with ifTranspose an odd mStep (8-bit) or kStep "
                                   "(4-byte); destination fractals of one load that overlap"),
                     (UNSUPPORTED, "a chip without LoadData2DParamsV2 (910B), a type it does not load (int16)"))

for _form in (
    AscendForm("DataCopy", "GM_to_L1",
               (Param("dst", "L1", "destination"), Param("src", "GM", "source"), *_burst("32 B")),
               "copy bursts of bytes from GM to L1 unchanged (ND)", data_movement.copy_gm_to_l1,
               (GM_UNMAPPED, PAST_BUFFER_END, MISALIGNED, OUT_OF_RANGE), access=data_movement.gm_to_l1_access, pipe="MTE2"),
    AscendForm("DataCopy", "GM_to_L1_Nd2Nz",
               (Param("dst", "L1", "destination"), Param("src", "GM", "source"),
                Param("dtype", "dtype", "the element type", choices=DTYPES),
                Param("ndNum", "int", "how many ND matrices", 1, 1, 4095),
                Param("nValue", "int", "rows of each ND matrix", lo=1, hi=16384),
                Param("dValue", "int", "columns of each ND matrix", lo=1),
                Param("srcNdMatrixStride", "int", "elements between source ND matrices", 0),
                Param("srcDValue", "int", "the source row pitch, in elements", lo=1),
                Param("dstNzC0Stride", "int", "32 B rows between destination column blocks (C0)", lo=1),
                Param("dstNzNStride", "int", "32 B rows between destination rows", 1, 1),
                Param("dstNzMatrixStride", "int", "elements between destination matrices", 0)),
               "copy ND matrices from GM into L1 as Nz fractals (Nd2NzParams)", data_movement.copy_gm_to_l1_nd2nz,
               (GM_UNMAPPED, PAST_BUFFER_END, MISALIGNED, OUT_OF_RANGE), marker="nValue",
               access=data_movement.nd2nz_access, pipe="MTE2"),
    AscendForm("DataCopy", "L1_to_BT",
               (Param("dst", "BT", "destination"), Param("src", "L1", "source"),
                Param("srcType", "dtype", "the bias type in L1", choices=DTYPES),
                Param("dstType", "dtype", "the bias type in BT (float32 or int32)", choices=DTYPES),
                *_burst("32 B of the source")),
               "copy a bias from L1 to the bias table, widening half/bf16 to float", data_movement.copy_l1_to_bt,
               (PAST_BUFFER_END, MISALIGNED, OUT_OF_RANGE, CHIP_LACKS), check_chip=data_movement.check_bias_types,
               access=data_movement.l1_to_bt_access, pipe="MTE1"),
    AscendForm("DataCopy", "L1_to_FB", (Param("dst", "FB", "destination"), Param("src", "L1", "source"),
                                        *_burst("32 B")),
               "copy per-channel quant words from L1 to the fixpipe buffer", data_movement.copy_l1_to_fb,
               (PAST_BUFFER_END, MISALIGNED, OUT_OF_RANGE), access=data_movement.l1_to_fb_access, pipe="FIX"),
    AscendForm("LoadData", "L1_to_L0A", (Param("dst", "L0A", "destination"), Param("src", "L1", "source"), *_LOAD2D),
               "load 512 B fractals from L1 into L0A (LoadData2DParams)", data_movement.load_2d,
               (PAST_BUFFER_END, MISALIGNED, OUT_OF_RANGE, CHIP_LACKS), check_chip=data_movement.check_transpose,
               access=data_movement.load_2d_access, pipe="MTE1"),
    AscendForm("LoadData", "L1_to_L0B", (Param("dst", "L0B", "destination"), Param("src", "L1", "source"), *_LOAD2D),
               "load 512 B fractals from L1 into L0B (LoadData2DParams)", data_movement.load_2d,
               (PAST_BUFFER_END, MISALIGNED, OUT_OF_RANGE, CHIP_LACKS), check_chip=data_movement.check_transpose,
               access=data_movement.load_2d_access, pipe="MTE1"),
    AscendForm("LoadData", "L1_to_L0A_V2",
               (Param("dst", "L0A", "destination"), Param("src", "L1", "source"), *_LOAD2D_V2),
               "load an M x K block of 512 B fractals from L1 into L0A, transposed if asked (LoadData2DParamsV2)",
               data_movement.load_2d_v2, _LOAD2D_V2_FAULTS, marker="mStartPosition",
               check_chip=data_movement.check_load2d_v2, chips=data_movement.LOAD2D_V2_CHIPS,
               access=data_movement.load_2d_v2_access, pipe="MTE1"),
    AscendForm("LoadData", "L1_to_L0B_V2",
               (Param("dst", "L0B", "destination"), Param("src", "L1", "source"), *_LOAD2D_V2),
               "load a block of 512 B fractals from L1 into L0B, transposed if asked (LoadData2DParamsV2)",
               data_movement.load_2d_v2, _LOAD2D_V2_FAULTS, marker="mStartPosition",
               check_chip=data_movement.check_load2d_v2, chips=data_movement.LOAD2D_V2_CHIPS,
               access=data_movement.load_2d_v2_access, pipe="MTE1"),
):
    FORMS.add(_form)

"""The Ascend cube's instructions: one declaration each, named after the Ascend C call.

There is no public binary encoding, so the program text is the instruction.  A line is
one call with keyword parameters, named as the Ascend C API and its parameter structs
name them (DataCopyParams, Nd2NzParams, LoadData2DParams, MmadParams, FixpipeParams):

    DataCopy(dst=L1[0], src=GM[0x10000], blockCount=1, blockLen=16, srcStride=0, dstStride=0)
    LoadData(dst=L0A[0], src=L1[0], dtype=int8, startIndex=0, repeatTimes=2, srcStride=1, dstGap=0, ifTranspose=false)
    Mmad(c=L0C[0], a=L0A[0], b=L0B[0], aType=int8, bType=int8, m=16, n=16, k=32, cmatrixInitVal=true, ...)
    Fixpipe(dst=GM[0x20000], src=L0C[0], srcType=int32, dstType=int32, nSize=16, mSize=16, srcStride=16, ...)

A buffer operand is the buffer's name and a byte offset in brackets (``L0A[512]``); GM is
addressed by its address (``GM[0x10000]``).  Integers are C++ integer literals (decimal,
``0x`` hex, ``0b`` binary, ``'`` separators; no octal: :mod:`.numbers`), flags ``true``/``false``,
types and modes their Ascend C names.  Parameters may come in any order;
those with a default may be left out.  The printer writes every parameter, in declaration
order, which the parser reads back to the same instruction.  Programs are straight-line:
kernels are generated (the loops live in the Python that writes them), as a compiler
unrolls a tile loop with known bounds.

Which form a line is: the mnemonic, the buffers its ``dst``/``src`` name, and (DataCopy
GM -> L1) whether it gives Nd2NzParams (``nValue``) or DataCopyParams, and (LoadData, 950) whether it gives
LoadData2DParamsV2 (``mStartPosition``) or LoadData2DParams.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from isasim.core.faults import Fault
from isasim.core.isa import raising
from isasim.core.program import FormTable

from . import cube, datamove, fixpipe
from .faults import ALIGNMENT, BUFFER_OVERFLOW, GM_FAULT, PARAM_RANGE, QUANT_PARAM, UNSUPPORTED
from .config import CHIPS

DTYPES = ("int8", "uint8", "int16", "int32", "float16", "bfloat16", "float32", "float8_e4m3fn", "float8_e5m2",
          "hifloat8")
QUANT_MODES = tuple(dict.fromkeys(mode for chip in CHIPS.values() for mode in chip.quant_modes))


@dataclass(frozen=True)
class Param:
    """One keyword parameter of an instruction.

    kind:  "GM" (an address), a buffer name ("L1", "L0A", ...: a byte offset), "int", "bool",
           "dtype" or "mode" (a name from ``choices``).
    lo, hi: the range of an int (the Ascend C struct's field width, or the documented limit).
    """

    name: str
    kind: str
    doc: str
    default: object = None  # None: the parameter must be given
    lo: int = 0
    hi: int = (1 << 16) - 1
    choices: tuple[str, ...] = ()

    @property
    def required(self) -> bool:
        return self.default is None


@dataclass(frozen=True)
class AscendForm:
    """One instruction form (a core Form: id, mnemonic, syntax, summary)."""

    name: str  # the Ascend C call: "DataCopy"
    variant: str  # what tells it apart from the call's other forms: "GM_to_L1"
    params: tuple[Param, ...]
    summary: str
    semantics: Callable
    faults: tuple[tuple[str, str], ...] = ()  # (kind, when)
    group: str = "data movement"
    marker: str | None = None  # a parameter only this form of the call has (Nd2Nz: nValue)
    # what the chip must support for these parameters (a mode, a type pair), known before the program runs:
    # check_chip(chip, params) raises the UNSUPPORTED fault the instruction raises on that chip
    check_chip: Callable | None = None
    chips: tuple[str, ...] = ()  # the chips that have this form at all (empty: every chip)
    # access(ctx, form, params) -> access.Access: the instruction's checks that its data does not decide, and
    # the bytes it will read (the semantics call it first; explain calls it before building example data).
    # None: the form moves no data (it sets a register)
    access: Callable | None = None

    @property
    def id(self) -> str:
        return f"{self.name}_{self.variant}" if self.variant else self.name

    def prepare(self, instruction):
        """The execute contract (isasim.core.isa): the parameters by name once per instruction, and what the
        chip must support checked once per machine, when the instruction is bound to its context."""
        semantics, check_chip, next_address = self.semantics, self.check_chip, instruction.next_address
        params = dict(zip(self.operand_names, instruction.operands))

        def bind(context):
            if check_chip is not None:
                try:
                    check_chip(context.chip, params)
                except Fault as fault:  # raised anew each time the instruction runs
                    kind, rule = fault.kind, fault.rule
                    return raising(lambda: Fault(kind, rule))

            def run():
                semantics(context, self, params)
                return next_address

            return run

        return bind

    @property
    def mnemonic(self) -> str:
        return self.name.lower()

    @property
    def syntax(self) -> str:
        return f"{self.name}({', '.join(_param_syntax(p) for p in self.params)})"

    @property
    def operand_names(self) -> tuple[str, ...]:
        return tuple(p.name for p in self.params)

    @property
    def buffers(self) -> dict[str, str]:
        """The buffer each location parameter names ({"dst": "L1", "src": "GM"})."""
        return {p.name: p.kind for p in self.params if p.kind in LOCATION_KINDS}

    @property
    def doc(self) -> str:
        """The pseudocode: the semantics function's docstring."""
        return self.semantics.__doc__.strip()


LOCATION_KINDS = ("GM", "L1", "L0A", "L0B", "L0C", "BT", "FB")


def _param_syntax(p: Param) -> str:
    value = {"GM": "GM[address]"}.get(p.kind, f"{p.kind}[offset]" if p.kind in LOCATION_KINDS else p.name)
    if p.kind in LOCATION_KINDS:
        return f"{p.name}={value}"
    return p.name if p.required else f"{p.name}={_default_text(p)}"


def _default_text(p: Param) -> str:
    if p.kind == "bool":
        return "true" if p.default else "false"
    return str(p.default)


# ---- the declarations ----------------------------------------------------------------------------

_GM_FAULT = (GM_FAULT, "a GM byte read or written is not in mapped memory")
_OVERFLOW = (BUFFER_OVERFLOW, "a byte the instruction reads or writes lies past the end of a buffer")
_ALIGN = (ALIGNMENT, "a buffer address is not a multiple of its alignment (L0A/L0B 512 B, L0C 1024 B, BT 64 B, "
          "L1 32 B, FB 64 B)")
_RANGE = (PARAM_RANGE, "a parameter is outside the range the hardware takes")
_UNSUPPORTED = (UNSUPPORTED, "the chip has no such type pair or mode")


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
_LOAD2D_V2_FAULTS = (_OVERFLOW, _ALIGN,
                     (PARAM_RANGE, "a field outside its width; with ifTranspose an odd mStep (8-bit) or kStep "
                                   "(4-byte); destination fractals of one load that overlap"),
                     (UNSUPPORTED, "a chip without LoadData2DParamsV2 (910B), a type it does not load (int16)"))

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

_FIXPIPE_FAULTS = (_OVERFLOW, _ALIGN, _RANGE, _UNSUPPORTED,
                   (QUANT_PARAM, "more per-channel words than one pass takes, or an M1 the chip forbids "
                                 "(denormal, inf, NaN)"))

FORMS = FormTable()
for _form in (
    AscendForm("DataCopy", "GM_to_L1",
               (Param("dst", "L1", "destination"), Param("src", "GM", "source"), *_burst("32 B")),
               "copy bursts of bytes from GM to L1 unchanged (ND)", datamove.copy_gm_to_l1,
               (_GM_FAULT, _OVERFLOW, _ALIGN, _RANGE), access=datamove.gm_to_l1_access),
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
               "copy ND matrices from GM into L1 as Nz fractals (Nd2NzParams)", datamove.copy_gm_to_l1_nd2nz,
               (_GM_FAULT, _OVERFLOW, _ALIGN, _RANGE), marker="nValue", access=datamove.nd2nz_access),
    AscendForm("DataCopy", "L1_to_BT",
               (Param("dst", "BT", "destination"), Param("src", "L1", "source"),
                Param("srcType", "dtype", "the bias type in L1", choices=DTYPES),
                Param("dstType", "dtype", "the bias type in BT (float32 or int32)", choices=DTYPES),
                *_burst("32 B of the source")),
               "copy a bias from L1 to the bias table, widening half/bf16 to float", datamove.copy_l1_to_bt,
               (_OVERFLOW, _ALIGN, _RANGE, _UNSUPPORTED), check_chip=datamove.check_bias_types,
               access=datamove.l1_to_bt_access),
    AscendForm("DataCopy", "L1_to_FB", (Param("dst", "FB", "destination"), Param("src", "L1", "source"),
                                        *_burst("32 B")),
               "copy per-channel quant words from L1 to the fixpipe buffer", datamove.copy_l1_to_fb,
               (_OVERFLOW, _ALIGN, _RANGE), access=datamove.l1_to_fb_access),
    AscendForm("LoadData", "L1_to_L0A", (Param("dst", "L0A", "destination"), Param("src", "L1", "source"), *_LOAD2D),
               "load 512 B fractals from L1 into L0A (LoadData2DParams)", datamove.load_2d,
               (_OVERFLOW, _ALIGN, _RANGE, _UNSUPPORTED), check_chip=datamove.check_transpose,
               access=datamove.load_2d_access),
    AscendForm("LoadData", "L1_to_L0B", (Param("dst", "L0B", "destination"), Param("src", "L1", "source"), *_LOAD2D),
               "load 512 B fractals from L1 into L0B (LoadData2DParams)", datamove.load_2d,
               (_OVERFLOW, _ALIGN, _RANGE, _UNSUPPORTED), check_chip=datamove.check_transpose,
               access=datamove.load_2d_access),
    AscendForm("LoadData", "L1_to_L0A_V2",
               (Param("dst", "L0A", "destination"), Param("src", "L1", "source"), *_LOAD2D_V2),
               "load an M x K block of 512 B fractals from L1 into L0A, transposed if asked (LoadData2DParamsV2)",
               datamove.load_2d_v2, _LOAD2D_V2_FAULTS, marker="mStartPosition", check_chip=datamove.check_load2d_v2,
               chips=datamove.LOAD2D_V2_CHIPS, access=datamove.load_2d_v2_access),
    AscendForm("LoadData", "L1_to_L0B_V2",
               (Param("dst", "L0B", "destination"), Param("src", "L1", "source"), *_LOAD2D_V2),
               "load a block of 512 B fractals from L1 into L0B, transposed if asked (LoadData2DParamsV2)",
               datamove.load_2d_v2, _LOAD2D_V2_FAULTS, marker="mStartPosition", check_chip=datamove.check_load2d_v2,
               chips=datamove.LOAD2D_V2_CHIPS, access=datamove.load_2d_v2_access),
    AscendForm("Mmad", "",
               (Param("c", "L0C", "the accumulator C (Nz, 16x16 fractals)"),
                Param("a", "L0A", "A (m x k)"), Param("b", "L0B", "B (k x n, Zn)"),
                Param("aType", "dtype", "A's element type", choices=DTYPES),
                Param("bType", "dtype", "B's element type", choices=DTYPES),
                Param("m", "int", "rows of A and C", lo=0, hi=65535),
                Param("n", "int", "columns of B and C", lo=0, hi=65535),
                Param("k", "int", "columns of A, rows of B", lo=0, hi=65535),
                Param("cmatrixInitVal", "bool", "C starts at 0 (else from cmatrixSource)", True),
                Param("cmatrixSource", "bool", "C starts from the bias table (with cmatrixInitVal false)", False),
                Param("isBias", "bool", "C += A.B (deprecated; as cmatrixInitVal false)", False),
                Param("bias", "BT", "the bias row in the bias table", 0),
                Param("disableGemv", "bool", "950: keep the fractal A layout when m is 1 (else GEMV reads A as ND)",
                      False)),
               "C = A.B (+ C, or + the bias row): int8 -> int32, float types -> float32", cube.mmad,
               (_OVERFLOW, _ALIGN, (PARAM_RANGE, "m, n or k above 4095"), _UNSUPPORTED), group="cube",
               check_chip=cube.check_types, access=cube.mmad_access),
    AscendForm("Fixpipe", "L0C_to_GM", (Param("dst", "GM", "destination"), Param("src", "L0C", "source"), *_FIXPIPE),
               "move C from L0C to GM through the fixpipe: quantize, ReLU, Nz -> ND, atomic add",
               fixpipe.fixpipe, (_GM_FAULT, *_FIXPIPE_FAULTS), group="fixpipe", check_chip=fixpipe.check_params,
               access=fixpipe.fixpipe_access),
    AscendForm("Fixpipe", "L0C_to_L1", (Param("dst", "L1", "destination"), Param("src", "L0C", "source"), *_FIXPIPE),
               "move C from L0C to L1 through the fixpipe: quantize, ReLU, Nz -> ND", fixpipe.fixpipe,
               _FIXPIPE_FAULTS, group="fixpipe", check_chip=fixpipe.check_params, access=fixpipe.fixpipe_access),
    AscendForm("SetFixpipePreQuantFlag", "", (Param("config", "int", "the 64-bit quant word", lo=0, hi=(1 << 64) - 1),),
               "set the scalar (per-tensor) quant word", fixpipe.set_pre_quant_flag, group="fixpipe"),
    AscendForm("SetFixPipeConfig", "", (Param("quantPre", "FB", "where the per-channel quant words are"),),
               "point the fixpipe at per-channel quant words in FB", fixpipe.set_fixpipe_config,
               (_ALIGN, _OVERFLOW), group="fixpipe"),
    AscendForm("SetAtomicAdd", "", (Param("dtype", "dtype", "the element type added", choices=DTYPES),),
               "make GM writes of the fixpipe add to what GM holds", fixpipe.set_atomic_add, (_UNSUPPORTED,),
               group="fixpipe"),
    AscendForm("SetAtomicNone", "", (), "make GM writes of the fixpipe plain stores again", fixpipe.set_atomic_none,
               group="fixpipe"),
):
    FORMS.add(_form)

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
``0x`` hex, ``0b`` binary, ``'`` separators; no octal: :mod:`..operands`), flags ``true``/``false``,
types and modes their Ascend C names.  Parameters may come in any order;
those with a default may be left out.  The printer writes every parameter, in declaration
order, which the parser reads back to the same instruction.  Programs are straight-line:
kernels are generated (the loops live in the Python that writes them), as a compiler
unrolls a tile loop with known bounds.

Which form a line is: the mnemonic, the buffers its ``dst``/``src`` name, and (DataCopy
GM -> L1) whether it gives Nd2NzParams (``nValue``) or DataCopyParams, and (LoadData, 950) whether it gives
LoadData2DParamsV2 (``mStartPosition``) or LoadData2DParams.

base.py says what a declaration holds; one module per instruction family declares its forms into ``FORMS``,
in the order imported here (the order the docs and ``isasim explain`` list them in):

    data_movement   DataCopy (GM -> L1, Nd2Nz, L1 -> BT, L1 -> FB) and LoadData (L1 -> L0A/L0B)
    mmad            Mmad
    fixpipe         Fixpipe and SetFixpipePreQuantFlag, SetFixPipeConfig, SetAtomicAdd, SetAtomicNone
    sync            SetFlag, WaitFlag, PipeBarrier: the events and barriers that order the pipes

Each form names the pipe that runs it (``pipe``; sync/events.py): DataCopy GM -> L1 PIPE_MTE2, LoadData and
DataCopy L1 -> BT PIPE_MTE1, Mmad PIPE_M, Fixpipe and DataCopy L1 -> FB PIPE_FIX, the setters the scalar unit (PIPE_S).
"""

from __future__ import annotations

# importing a family declares its forms; FORMS lists them in this order
from . import data_movement  # noqa: F401
from . import mmad  # noqa: F401
from . import fixpipe  # noqa: F401  (after mmad, whatever a sorter says)
from . import sync  # noqa: F401  (last: the forms that order the others)
from .base import DTYPES, FORMS, LOCATION_KINDS, QUANT_MODES, AscendForm, Param

__all__ = ["DTYPES", "FORMS", "LOCATION_KINDS", "QUANT_MODES", "AscendForm", "Param"]

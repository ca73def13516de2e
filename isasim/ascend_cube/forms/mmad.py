"""The cube form: Mmad, its parameters named as MmadParams names them."""

from __future__ import annotations

from ..faults import PARAM_RANGE
from ..semantics import mmad
from .base import CHIP_LACKS, DTYPES, FORMS, MISALIGNED, PAST_BUFFER_END, AscendForm, Param

for _form in (
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
               "C = A.B (+ C, or + the bias row): int8 -> int32, float types -> float32", mmad.mmad,
               (PAST_BUFFER_END, MISALIGNED, (PARAM_RANGE, "m, n or k above 4095"), CHIP_LACKS), group="cube",
               check_chip=mmad.check_types, access=mmad.mmad_access, pipe="M"),
):
    FORMS.add(_form)

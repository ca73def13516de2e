"""One quantised batch matmul problem as the QBMM kernel takes it (:class:`QbmmCase`), how each type's values
sit in its arrays, and the error a case the kernel cannot run raises.  A case file is read into one by
:mod:`.qbmm_case_file`."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from isasim.core.errors import ConfigError

# how each type's values sit in an .npy array
STORAGE = {"int8": np.int8, "hifloat8": np.uint8, "float8_e4m3fn": np.uint8, "float8_e5m2": np.uint8,
           "float16": np.uint16, "bfloat16": np.uint16, "float32": np.float32, "int32": np.int32,
           "uint64": np.uint64, "int64": np.int64}


class CaseError(ConfigError):
    """A case file the kernel cannot run: one line, naming the file and the field."""


@dataclass
class QbmmCase:
    """One quantised batch matmul problem: the seed's Params and QBMMTiling fields, the arrays, the
    expectation.  Build one with :func:`.qbmm_case_file.load_case` (a file) or directly (tests, Python users)."""

    m: int
    n: int
    k: int
    a_type: str = "int8"
    b_type: str = "int8"
    c_type: str = "int32"
    batch_a: tuple[int, ...] = (1, 1, 1, 1)
    batch_b: tuple[int, ...] = (1, 1, 1, 1)
    batch_c: tuple[int, ...] = (1, 1, 1, 1)
    bias_type: str | None = None
    bias_three_dim: bool = False
    x1_quant_mode: str = "none"
    x2_quant_mode: str = "none"
    scale_a_type: str = "float32"
    scale_b_type: str = "uint64"
    transpose_a: bool = False
    transpose_b: bool = False
    atomic_add: bool = False
    b_format: str = "ND"
    chip: str = "950"
    tiling: dict | None = None  # QBMMTiling fields the case fixes (the rest are chosen)
    options: dict = field(default_factory=dict)  # isasim options (docs/ascend_cube/options.md)
    arrays: dict[str, np.ndarray] = field(default_factory=dict)  # a, b, bias, scale_a, scale_b, c_in
    expect: np.ndarray | None = None
    compare: object = "exact"  # "exact" or {"rtol": .., "atol": ..}
    source: str = "<case>"
    files: list[str] = field(default_factory=list)  # the array files read (a command must not write over them)

    @property
    def batch(self) -> int:
        return math.prod(self.batch_c)  # Python's: numpy's product wraps at 2^63

    @property
    def has_bias(self) -> bool:
        return self.bias_type is not None

    def shape_of(self, key: str) -> tuple[int, ...]:
        """The full shape array ``key`` must have (batch dimensions included)."""
        m, n, k = self.m, self.n, self.k
        return {"a": (*self.batch_a, *((k, m) if self.transpose_a else (m, k))),
                "b": (*self.batch_b, *(nz_shape(self.b_rows_cols(), self.b_type) if self.b_format == "NZ"
                                       else self.b_rows_cols())),
                "bias": (*self.batch_c, n) if self.bias_three_dim else (n,),
                "scale_a": (1,),
                "scale_b": (n,) if self.x2_quant_mode == "perchannel" else (1,),
                "c_in": (*self.batch_c, m, n), "c": (*self.batch_c, m, n)}[key]

    def b_rows_cols(self) -> tuple[int, int]:
        return (self.n, self.k) if self.transpose_b else (self.k, self.n)

    def type_of(self, key: str) -> str:
        return {"a": self.a_type, "b": self.b_type, "bias": self.bias_type, "scale_a": self.scale_a_type,
                "scale_b": self.scale_b_type, "c_in": self.c_type, "c": self.c_type}[key]

    def needs(self, key: str) -> bool:
        """Whether the case must give array ``key``."""
        return {"a": True, "b": True, "bias": self.has_bias, "scale_a": self.x1_quant_mode == "pertensor",
                "scale_b": self.x2_quant_mode != "none", "c_in": self.atomic_add}[key]


def nz_shape(rows_cols: tuple[int, int], dtype: str) -> tuple[int, int, int, int]:
    """The fractal NZ array of a rows x cols ND matrix (the weight format FRACTAL_NZ):
    (ceil(cols / C0), ceil(rows / 16), 16, C0) with C0 = 32 bytes of the type; the padding is zero."""
    rows, cols = rows_cols
    c0 = 32 // np.dtype(STORAGE[dtype]).itemsize
    return (-(-cols // c0), -(-rows // 16), 16, c0)



"""The quant words the QBMM kernel gives the Fixpipe, formed from the case's scales as the kernel forms them.

- Per channel (``scale_b`` uint64 / int64 of n words, as aclnnTransQuantParam packed them): the
  block's slice of words is copied GM -> L1 -> FB unchanged; int64 words are the same bits.
- Per tensor, a uint64 / int64 word: used as it is (SetFixpipePreQuantFlag).
- Per tensor, a float32 or bfloat16 scale: the kernel "converts and packs it into the uint64
  scaleScalar_" (seed 003).  bfloat16 widens exactly to float32; the word keeps the float32's
  bits 31..13 (the M1 field the Fixpipe reads) and sets bit 46, as TransQuantParam's
  round_mode 0 does (:func:`isasim.ascend_cube.numerics.quant_word.pack_scale`).
- A and B both per tensor: the float32 product scale_a x scale_b (one rounding, ties to even),
  truncated to bits 31..13 (:func:`isasim.ascend_cube.numerics.quant_word.double_scale_word`).
"""

from __future__ import annotations

import numpy as np

from ..numerics.quant_word import double_scale_word, pack_scale


def scale_values(array: np.ndarray, scale_type: str) -> np.ndarray:
    """float32 values of a float32 or bfloat16 (bits) scale array."""
    if scale_type == "bfloat16":
        return (np.asarray(array, dtype=np.uint16).astype(np.uint32) << 16).view(np.float32)
    return np.asarray(array, dtype=np.float32)


def channel_words(case) -> np.ndarray:
    """The n per-channel quant words (uint64)."""
    return np.ascontiguousarray(case.arrays["scale_b"]).view(np.uint64).reshape(-1)


def tensor_word(case, scale: str) -> int:
    """The one quant word of a per-tensor case (``scale``: "word", "float" or "double")."""
    if scale == "word":
        return int(np.ascontiguousarray(case.arrays["scale_b"]).view(np.uint64).reshape(-1)[0])
    b = scale_values(case.arrays["scale_b"], case.scale_b_type).reshape(-1)[0]
    if scale == "float":
        return pack_scale(np.float32(b))
    a = scale_values(case.arrays["scale_a"], case.scale_a_type).reshape(-1)[0]
    return double_scale_word(np.float32(a), np.float32(b))

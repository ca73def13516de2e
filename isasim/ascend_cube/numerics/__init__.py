"""The cube path's exact arithmetic, pure functions on numpy arrays that the semantics call.

- :mod:`.formats`: the number formats (float32/16, bfloat16, FP8, HiFloat8), exact decoders and
  explicitly rounded encoders;
- :mod:`.layouts`: the fractal layouts (Zz, Zn, Nz) and their inverses;
- :mod:`.quant_word`: the Fixpipe's 64-bit quant word, its packing, and the integer steps of its
  quantisation;
- :mod:`.mmad_math`, :mod:`.fixpipe_math`, :mod:`.atomic_math`: the arithmetic of Mmad, of the
  Fixpipe's quant modes, and of an atomic-add write to GM.

What public material leaves open, the order and width of a sum or a rounding, is an option
(:mod:`isasim.ascend_cube.options`) these functions take.
"""

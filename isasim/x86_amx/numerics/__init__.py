"""The exact arithmetic of the AMX TMULs, beside the ISA-neutral formats of :mod:`isasim.core.numerics`.

- :mod:`.tmul`: the fp32 lane rules of TDPBF16PS / TDPFP16PS (FMA32, ADD32 and their fold over K),
  vectorised over whole tiles, as measured on Emerald Rapids;
- :mod:`.reference`: the same rules as a scalar pure-integer reference, for the tests and ``explain``;
- :mod:`.products`: TMUL products that wait for their accumulator to be read, then are applied together.
"""

from .reference import tmul_add32_reference, tmul_fma32_reference
from .tmul import DEFAULT_NAN32, tmul_add32, tmul_fma32, tmul_fma32_fold

__all__ = ["DEFAULT_NAN32", "tmul_add32", "tmul_fma32", "tmul_fma32_fold", "tmul_add32_reference",
           "tmul_fma32_reference"]

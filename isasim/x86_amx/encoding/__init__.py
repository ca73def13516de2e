"""How x86 instructions are encoded, in both directions (Sail's encdec, apart from the semantics).

- :mod:`.vex`: the VEX prefix, ModRM and SIB of the AMX forms, driven by the SDM's opcode column
  (``VEX.128.F2.0F38.W0 4B !(11):rrr:100``); the encoder, the decoder and ``explain`` read its fields;
- :mod:`.iced`: what the scalar and vector forms share with iced-x86, their encoder and decoder: the
  operand kinds of iced's opcode rows, register numbers, memory operands, a RIP-relative address;
- :mod:`.scalar`: the scalar subset, encoded as GNU as encodes its text and decoded by iced;
- :mod:`.vector`: the SSE/AVX/AVX-512 moves, likewise.
"""

from .vex import (MAP_CODES, MAP_NAMES, PP_CODES, PP_NAMES, DecodedModRM, ModRMPattern, VexFields, VexOpcode,
                  decode_modrm, encode_memory, vex3)

__all__ = ["MAP_CODES", "MAP_NAMES", "PP_CODES", "PP_NAMES", "DecodedModRM", "ModRMPattern", "VexFields",
           "VexOpcode", "decode_modrm", "encode_memory", "vex3"]

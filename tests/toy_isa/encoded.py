""""toy32": the toy's instructions with an eight-byte binary encoding (see :mod:`.encoding`).

Registered as ``monkeypatch.setitem(KNOWN_ISAS, "toy32", "toy_isa.encoded")``; everything
but the bytes (and so the addresses, eight apart) is the toy's.
"""

from __future__ import annotations

from . import Toy, decoder


class EncodedToy(Toy):
    def listing(self, code: bytes, base: int):
        return decoder.listing(code, base)


ISA = EncodedToy("toy32", encoded=True, code_base=0x10000)

"""What every operand kind shares: the error it raises and how it reads an integer."""

from __future__ import annotations

import re


SUFFIX_BYTES = {"b": 1, "h": 2, "s": 4, "d": 8, "q": 16}


class OperandError(ValueError):
    def __init__(self, message: str, shape: bool = False):
        super().__init__(message)
        self.shape = shape  # the text is not this kind of operand at all (try another form)


def _shape(message: str) -> OperandError:
    return OperandError(message, shape=True)


_INT = r"#?\s*(-?(?:0x[0-9a-f]+|[0-9]+))"


def parse_int(text: str) -> int | None:
    m = re.fullmatch(_INT, text.strip().lower())
    return int(m.group(1), 0) if m else None


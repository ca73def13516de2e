"""The argparse types every command's options use, the core's and the ISA packages' own commands alike (an
ISA package that adds a command, ascend_cube's qbmm, imports them from here, not from the command line)."""

from __future__ import annotations

import argparse
import re

from .trace import printable


def count_at_least(lowest: int):
    """An argparse type: an integer of at least ``lowest`` (a negative step limit or count is a typo, not a
    request, so it is refused at the command line rather than deep inside a run)."""
    def parse(text: str) -> int:
        if not re.fullmatch(r"-?[0-9]{1,18}", text):  # ASCII digits only: int() would take '١٠' and '1_0'
            raise argparse.ArgumentTypeError(f"expected an integer, got {printable(text[:40])!r}")
        value = int(text)
        if value < lowest:
            raise argparse.ArgumentTypeError(f"must be at least {lowest}, not {value}")
        return value

    parse.__name__ = f"integer >= {lowest}"  # argparse names the type in its messages
    return parse


positive_int, non_negative_int = count_at_least(1), count_at_least(0)


def address(text: str) -> int:
    """An argparse type: an address in ASCII decimal or 0x hex (its range is the ISA's to check)."""
    if not re.fullmatch(r"-?(0[xX][0-9a-fA-F]{1,32}|[0-9]{1,40})", text):
        raise argparse.ArgumentTypeError(f"expected an address (e.g. 0x400000), got {printable(text[:40])!r}")
    return int(text, 0) if not re.fullmatch(r"-?0[0-9]+", text) else int(text, 10)


def seconds(text: str) -> float:
    """An argparse type: a finite, non-negative number of seconds."""
    if not re.fullmatch(r"[0-9]{1,9}(\.[0-9]{1,9})?", text):
        raise argparse.ArgumentTypeError(f"expected a number of seconds (e.g. 30 or 2.5), got {printable(text[:40])!r}")
    return float(text)


def duration(text: str) -> float:
    """An argparse type: a positive time, e.g. 90, 90s, 30m, 2h, 1h30m."""
    found = re.fullmatch(r"(?:([0-9]{1,6})h)?(?:([0-9]{1,6})m)?(?:([0-9]{1,9}(?:\.[0-9]{1,9})?)s?)?", text)
    if not text or found is None or not any(found.groups()):
        raise argparse.ArgumentTypeError(f"expected a time such as 90s, 30m, 2h or 1h30m, got {printable(text[:40])!r}")
    hours, minutes, secs = (float(g) if g else 0.0 for g in found.groups())
    total = 3600 * hours + 60 * minutes + secs
    if total <= 0:
        raise argparse.ArgumentTypeError(f"a duration must be more than 0, got {printable(text[:40])!r}")
    return total

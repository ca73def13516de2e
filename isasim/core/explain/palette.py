"""Roles and their colours: one palette for every renderer.

Highlighted cells and fields carry a *role* ("a", "b", "c", "k3", "even", "field2",
...); the terminal, the SVG and the HTML page map a role to the same colour, so a
colour means the same thing in all three.  Plain text and Markdown mark a
highlighted cell instead (brackets, bold).
"""

from __future__ import annotations

import re

# role -> (SVG/HTML fill, rich style)
ROLES: dict[str, tuple[str, str]] = {
    "a": ("#cfe2ff", "bold blue"),
    "b": ("#ffe3c2", "bold dark_orange"),
    "c": ("#ffc9d6", "bold red"),
    "result": ("#ffc9d6", "bold red"),
    "even": ("#c8f0d4", "bold green"),
    "odd": ("#e6d4ff", "bold magenta"),
    "addr": ("#c9f1f4", "bold cyan"),
    "kept": ("#e9e9e9", "dim"),
    "zeroed": ("#f4f4f4", "dim"),
    "dim": ("#f4f4f4", "dim"),
    "inactive": ("#c8c8c8", "dim"),  # an element a predicate leaves inactive (masked)
    "ok": ("#c8f0d4", "bold green"),
    "bad": ("#ffb3b3", "bold red"),
    "changed": ("#fff1a8", "bold yellow"),
}
# cycles for indices (k of a dot product) and for the fields of a unit: "k0", "k1", ..., "field0", ...
CYCLE_FILLS = ["#ffd6a5", "#caffbf", "#9bf6ff", "#bdb2ff", "#ffadad", "#fdffb6", "#a0c4ff", "#ffc6ff"]
CYCLE_STYLES = ["bold dark_orange", "bold green", "bold cyan", "bold blue", "bold red", "bold yellow",
                "bold bright_blue", "bold magenta"]
_CYCLING = re.compile(r"(k|field)(\d+)")


def cycle_position(role: str) -> tuple[str, int] | None:
    """("k", 3) for "k11" (8 colours cycle), None for a role that does not cycle."""
    m = _CYCLING.fullmatch(role)
    return (m.group(1), int(m.group(2)) % len(CYCLE_FILLS)) if m else None


def role_fill(role: str | None) -> str | None:
    if role is None:
        return None
    if role in ROLES:
        return ROLES[role][0]
    position = cycle_position(role)
    return CYCLE_FILLS[position[1]] if position else None


def role_style(role: str | None) -> str:
    if role is None:
        return ""
    if role in ROLES:
        return ROLES[role][1]
    position = cycle_position(role)
    return CYCLE_STYLES[position[1]] if position else ""


def is_highlight(role: str | None) -> bool:
    """Whether a role stands out (the background roles dim, kept, zeroed and inactive do not)."""
    return role is not None and role not in ("dim", "kept", "zeroed", "inactive")

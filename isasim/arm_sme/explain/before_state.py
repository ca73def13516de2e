"""The worked example's inputs as they were just before the step, named as the Arm ARM names them:
a general register by number (31 is SP or the zero register, as the operand says), a lane of a Z
register, a predicate bit.  The check modules work their results out from these values."""

from __future__ import annotations

from ..state import X_NAMES

ELEMENT_LETTERS = {8: "b", 16: "h", 32: "s", 64: "d"}


def ones(bits: int) -> int:
    return (1 << bits) - 1


def signed(value: int, bits: int) -> int:
    """The ``bits``-bit pattern ``value`` read as two's complement."""
    return value - (1 << bits) if value >> (bits - 1) & 1 else value


def register_name(n: int, width: int, sp: bool) -> str:
    """x3 / w3; register 31 is sp / wsp where the operand allows SP, else xzr / wzr."""
    if n == 31:
        return ("sp" if width == 64 else "wsp") if sp else ("xzr" if width == 64 else "wzr")
    return f"{'x' if width == 64 else 'w'}{n}"


def register_value(run, n: int, width: int, sp: bool) -> int:
    """The low ``width`` bits of register ``n`` before the step (the zero register reads 0)."""
    regs = run.before["regs"]
    if n == 31:
        return regs["sp"] & ones(width) if sp else 0
    return regs[X_NAMES[n]] & ones(width)


def state_register(n: int, sp: bool) -> str | None:
    """The machine's name for register ``n`` ("x3", "sp"), or None for the zero register."""
    if n == 31:
        return "sp" if sp else None
    return X_NAMES[n]


def lane(run, register: int, k: int, bits: int) -> int:
    """Element ``k`` of Z[register] (``bits`` wide, little-endian) before the step, unsigned."""
    size = bits // 8
    return int.from_bytes(bytes(run.before["z"][register][k * size:(k + 1) * size]), "little")


def lane_text(register: int, k: int, bits: int) -> str:
    return f"z{register}.{ELEMENT_LETTERS[bits]}[{k}]"


def plus(value: int) -> str:
    """``+ 5`` or ``- 5``: a signed term as a sum writes it."""
    return f"{'-' if value < 0 else '+'} {abs(value)}"


def hex_text(value: int, bits: int) -> str:
    return f"{value:#0{2 + bits // 4}x}"


def before_p(run, g: int):
    """P[g] before the step: the before snapshot's when it holds the predicates (the trace viewer's live
    state), else the machine's (explain seeds them, and only a load or store would write them)."""
    p = run.before.get("p")
    return (run.machine.state.p if p is None else p)[g]


def predicate_bit(run, g: int, k: int, bits: int) -> int:
    """The lowest predicate bit of element ``k`` of a ``bits``-wide element size: it governs the element."""
    at = k * bits // 8
    return int(before_p(run, g)[at // 8]) >> (at % 8) & 1


def first_group_vector(run, v: int, offset: int, nreg: int) -> int:
    """vec = (UInt(Wv<31:0>) + offset) MOD vstride: the first ZA vector of ZA[Wv, offset, VGx<nreg>]."""
    vstride = run.machine.state.svlb // nreg
    return ((run.before["regs"][f"x{v}"] & 0xFFFFFFFF) + offset) % vstride


def tile_slice(za, tile: int, esize: int, vertical: bool, index: int) -> bytes:
    """ZA tile slice ``index`` as SVL/8 bytes: row r of tile ``tile`` is ZA vector tile + r * (esize / 8), so a
    horizontal slice is one such vector and a vertical one takes element ``index`` of each."""
    eb = esize // 8
    rows = range(tile, za.shape[0], eb)
    if not vertical:
        return bytes(za[rows[index]])
    return b"".join(bytes(za[row][index * eb:(index + 1) * eb]) for row in rows)


def pattern_count(pattern: int, elements: int) -> int:
    """DecodePredCount: the elements a PTRUE/CNT pattern makes active out of ``elements``; a fixed count
    (VL1-VL8, VL16-VL256) that does not fit, or an unallocated pattern (#14-#28), makes none."""
    fixed = {**{n: n for n in range(1, 9)}, 9: 16, 10: 32, 11: 64, 12: 128, 13: 256}
    if pattern in fixed:
        return fixed[pattern] if fixed[pattern] <= elements else 0
    power = 1
    while power * 2 <= elements:
        power *= 2
    return {0: power, 29: elements // 4 * 4, 30: elements // 3 * 3, 31: elements}.get(pattern, 0)

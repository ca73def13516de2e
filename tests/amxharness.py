"""Helpers for AMX semantics tests: build a machine with a tile configuration and data, run a few lines.

The expected values in the tests that use this come from measurements on
Emerald Rapids silicon (the project's AMX fact sheet, sections 1-3), not from
isasim's own output.
"""

from __future__ import annotations

import numpy as np

from isasim.core.machine import Machine
from isasim.x86_amx.kernels import tile_config

CFG_ADDR = 0x10000
BUF_ADDR = 0x20000  # a 64 KiB scratch buffer
BUF_SIZE = 0x10000
DST_ADDR = 0x40000
DST_SIZE = 0x4000


def tilecfg_bytes(shapes: dict[int, tuple[int, int]], *, palette: int = 1, start_row: int = 0) -> bytes:
    """The 64-byte configuration: shapes maps tile -> (rows, colsb)."""
    return tile_config(shapes, start_row, palette=palette)


def machine(lines: list[str] | str, *, shapes=None, cfg: bytes | None = None, regs=None, memory=None,
            cpu: str = "emerald-rapids", buffer: bytes | None = None) -> Machine:
    """A machine with the program loaded; cfg at CFG_ADDR, a scratch buffer at BUF_ADDR, rdi=BUF_ADDR,
    rcx=CFG_ADDR, rdx=DST_ADDR (zeroed)."""
    text = lines if isinstance(lines, str) else "\n".join(lines)
    m = Machine("x86_amx", {"cpu": cpu})
    program = m.assemble(text)
    image = cfg if cfg is not None else tilecfg_bytes(shapes or {})
    regions = [(CFG_ADDR, image, True), (BUF_ADDR, buffer if buffer is not None else bytes(BUF_SIZE), True),
               (DST_ADDR, bytes(DST_SIZE), True)] + list(memory or [])
    all_regs = {"rdi": BUF_ADDR, "rcx": CFG_ADDR, "rdx": DST_ADDR}
    all_regs.update(regs or {})
    m.load(program, regs=all_regs, memory=regions)
    return m


def run(lines, **kw) -> Machine:
    m = machine(lines, **kw)
    m.run(1000)
    return m


def set_tile(m: Machine, t: int, data: bytes | int) -> None:
    """Put raw bytes straight into a tile (as XRSTOR does in the silicon experiments)."""
    if isinstance(data, int):
        data = bytes([data]) * 1024
    m.state.settled_tiles()[t] = np.frombuffer(bytes(data).ljust(1024, b"\0"), dtype=np.uint8).reshape(16, 64)


def tdp_program(mnemonic: str, c_bytes: bytes, a_bytes: bytes, b_bytes: bytes, shapes) -> Machine:
    """Configure tmm0=C, tmm1=A, tmm2=B with ``shapes`` and run ``mnemonic tmm0, tmm1, tmm2``.

    C, A and B are loaded from the buffer with a 64-byte stride, each given as
    rows x 64 bytes (a row's bytes beyond colsb are never read)."""
    buffer = bytearray(BUF_SIZE)
    buffer[0:len(c_bytes)] = c_bytes
    buffer[0x1000:0x1000 + len(a_bytes)] = a_bytes
    buffer[0x2000:0x2000 + len(b_bytes)] = b_bytes
    lines = [
        "ldtilecfg [rcx]",
        "tileloadd tmm0, [rdi+rsi*1]",
        "tileloadd tmm1, [rdi+rsi*1+0x1000]",
        "tileloadd tmm2, [rdi+rsi*1+0x2000]",
        f"{mnemonic} tmm0, tmm1, tmm2",
        "tilestored [rdx+rsi*1], tmm0",
    ]
    return run(lines, shapes=shapes, regs={"rsi": 64}, buffer=bytes(buffer))


def stored_dwords(m: Machine, rows: int, dwords: int, dtype=np.int32) -> np.ndarray:
    raw = m.memory.read(DST_ADDR, 64 * rows)
    return np.frombuffer(raw, dtype=np.uint8).reshape(rows, 64)[:, : 4 * dwords].copy().view(dtype)

"""LDTILECFG and STTILECFG: the 64-byte configuration image, field by field, and what the machine holds after.

The layout is not written down here: :func:`tilecfg_layout` names each byte from the
one declaration of it in :mod:`isasim.x86_amx.state`, which LDTILECFG reads with.
"""

from __future__ import annotations

import re

from ...core.explain import Cell, Check, Grid, Paragraph, Table, fault_blocks, setup_blocks
from ..state import (
    MAX_TILES, TILECFG_BYTES, TILECFG_PALETTE, TILECFG_START_ROW, TileConfig, colsb_bytes, rows_byte,
)
from .common import (
    CFG_ADDR, DATA_ADDR, example_figure, free_address, hex_bytes, init_regions, mem_registers, place,
    region_covering, run_after_setup, scratch,
)
from .settings import Settings


def tilecfg_layout() -> list[str]:
    """The name of each of the 64 TILECFG bytes, from the layout LDTILECFG and STTILECFG use (state.py)."""
    names = ["reserved"] * TILECFG_BYTES
    names[TILECFG_PALETTE], names[TILECFG_START_ROW] = "palette", "start_row"
    for t in range(MAX_TILES):
        colsb = colsb_bytes(t)
        names[colsb.start:colsb.stop] = [f"colsb[{t}]"] * (colsb.stop - colsb.start)
        names[rows_byte(t)] = f"rows[{t}]"
    return names


def _field_role(name: str) -> str | None:
    if name == "palette":
        return "a"
    if name == "start_row":
        return "result"
    m = re.fullmatch(r"(colsb|rows)\[(\d)\]", name)
    return f"k{m.group(2)}" if m else "dim"


def tilecfg_image(shapes: dict[int, tuple[int, int]], *, palette: int = 1, start_row: int = 0) -> bytes:
    """A configuration image through TileConfig.to_bytes (STTILECFG's layout, the same as LDTILECFG's)."""
    cfg = TileConfig(palette=palette, start_row=start_row)
    for t, (rows, colsb) in shapes.items():
        cfg.rows[t], cfg.colsb[t] = rows, colsb
    return cfg.to_bytes()


def tilecfg_grid(image: bytes, title: str, caption: str = "") -> Grid:
    names = tilecfg_layout()
    cells = [[Cell(f"{image[16 * r + c]:02x}", _field_role(names[16 * r + c]), f"byte {16 * r + c}: {names[16 * r + c]}")
              for c in range(16)] for r in range(4)]
    return Grid(title, cells, [f"+{16 * r}" for r in range(4)], [f"{c}" for c in range(16)], group=2, caption=caption)


def tilecfg_fields_table(image: bytes, cfg_after: TileConfig | None) -> Table:
    """The bytes of a configuration image grouped by field, with the value the machine holds after."""
    names = tilecfg_layout()
    rows = []
    offset = 0
    while offset < 64:
        end = offset
        while end + 1 < 64 and names[end + 1] == names[offset]:
            end += 1
        name = names[offset]
        data = image[offset:end + 1]
        value = int.from_bytes(data, "little")
        if cfg_after is None or name == "reserved":
            after = "" if name != "reserved" else ("must be 0" if not any(data) else "NOT 0")
        else:
            m = re.fullmatch(r"(colsb|rows)\[(\d)\]", name)
            held = getattr(cfg_after, m.group(1))[int(m.group(2))] if m else getattr(cfg_after, name)
            after = str(held)
        span = f"{offset}" if end == offset else f"{offset}-{end}"
        rows.append([span, hex_bytes(data), Cell(name, _field_role(name)), str(value), after])
        offset = end + 1
    return Table(["bytes", "hex", "field", "value", "TILECFG after (machine)"], rows)


def cfg_text(cfg: TileConfig) -> str:
    if not cfg.configured:
        return "palette=0 (INIT: not configured)"
    tiles = " ".join(f"tmm{t}={cfg.rows[t]}x{cfg.colsb[t]}" for t in range(MAX_TILES) if cfg.rows[t] or cfg.colsb[t])
    return f"palette={cfg.palette} start_row={cfg.start_row} {tiles}".strip()


def _default_shapes(settings: Settings) -> dict[int, tuple[int, int]]:
    M, K, N = (settings.shape + (4, 4, 4))[:3] if settings.shape else (4, 4, 4)
    return {0: (M, 4 * N), 1: (M, 4 * K), 2: (K, 4 * N)}


def example(ins, form, settings: Settings, cpu: str, encoding):
    """LDTILECFG of an image (generated, or the init file's tilecfg region), or STTILECFG of one loaded first."""
    init, views = init_regions(settings)
    (mem,) = ins.operands or (None,)
    if mem is None:
        return [Paragraph("These bytes do not decode to an operand, so there is nothing to run.")], None
    memory = list(init.memory) if init else []
    regs = dict(init.regs) if init else {}
    if "tilecfg" in views:
        image = bytes(settings.init.memory[[a for a, _d, _w in memory].index(views["tilecfg"].address)][1][:64])
        source = f"the tilecfg region of {settings.init_source}"
    else:
        image = tilecfg_image(_default_shapes(settings), start_row=settings.start_row or 0)
        source = "tmm0 = C, tmm1 = A, tmm2 = B of a TDP example"
    store = form.mnemonic == "sttilecfg"
    avoid = mem_registers(ins)
    if store:
        cfg_at = free_address(memory, 64, CFG_ADDR)
        cfg_reg = scratch(avoid, 1)[0]
        memory.append((cfg_at, image, True))
        place_regs, dest = place(mem, free_address(memory, 64, DATA_ADDR))
        if mem.base == "rip":  # the set-up's LDTILECFG comes first and moves the instruction (and its target)
            from ..assembler import assemble

            dest += len(assemble(f"ldtilecfg [{cfg_reg}]").instructions[0].encoding)
        regs.update(place_regs)
        if not region_covering(memory, dest):
            memory.append((dest, bytes(64), True))
        regs[cfg_reg] = cfg_at
        setup = [f"ldtilecfg [{cfg_reg}]"]
    else:
        place_regs, cfg_at = place(mem, free_address(memory, 64, CFG_ADDR))
        regs.update(place_regs)
        if not region_covering(memory, cfg_at):
            memory.append((cfg_at, image, True))
        setup = []
    run = run_after_setup(ins, setup, cpu=cpu, regs=regs, memory=memory, max_steps=settings.max_steps)
    blocks = setup_blocks(run, f"the configuration: {source}")
    if run.fault:
        blocks += fault_blocks(run)
        if not store:
            blocks.append(tilecfg_fields_table(image, None))
        return blocks, example_figure(ins, encoding, [[tilecfg_grid(image, "the 64 bytes at m512")]], [])
    after = run.machine.state.tilecfg
    if store:
        stored = b"".join(d for _a, d in run.writes)
        where = run.writes[0][0] if run.writes else None
        blocks.append(Paragraph(f"STTILECFG wrote {len(stored)} bytes at {where:#x}" if where is not None
                                else "STTILECFG wrote nothing"))
        blocks.append(tilecfg_fields_table(stored, after))
        blocks.append(Check("the stored image", stored.hex(), after.to_bytes().hex()))
        grid = tilecfg_grid(stored, "the 64 bytes STTILECFG stored", caption=cfg_text(after))
    else:
        blocks.append(Paragraph(f"LDTILECFG read {sum(s for _a, s in run.reads)} bytes at "
                                f"{run.reads[0][0]:#x}; the layout below is what TileConfig.from_bytes reads:"))
        blocks.append(tilecfg_fields_table(image, after))
        blocks.append(Check("TILECFG", cfg_text(TileConfig.from_bytes(image)), cfg_text(after)))
        zeroed = sorted({w.where.name for w in run.record.writes if w.kind == "tile"})
        blocks.append(Paragraph("All tile data is zeroed" + (f" (rows changed in {', '.join(zeroed)})" if zeroed
                                                              else " (it was already zero)") + "."))
        grid = tilecfg_grid(image, "the 64 bytes at m512", caption=cfg_text(after))
    legend = [("a", "palette (byte 0)"), ("result", "start_row (byte 1)")]
    legend += [(f"k{t}", f"tmm{t}: colsb[{t}] at bytes {16 + 2 * t}-{17 + 2 * t}, rows[{t}] at byte {48 + t}")
               for t in range(MAX_TILES)]
    legend.append(("dim", "reserved: must be 0 (else #GP)"))
    return blocks, example_figure(ins, encoding, [[grid]], [], legend=legend)



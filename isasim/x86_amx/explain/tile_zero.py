"""TILEZERO and TILERELEASE: a loaded tile before, every byte zero after, from the machine's journal."""

from __future__ import annotations

import numpy as np

from ...core.explain import Cell, Check, Grid, Table, fault_blocks, setup_blocks
from ..operands import tile_number
from ..state import BYTES_PER_ROW, MAX_ROWS, MAX_TILES, TileConfig
from .common import (
    CFG_ADDR, DATA_ADDR, REGION, example_figure, free_address, hex_bytes, init_regions, run_after_setup, scratch,
)
from .settings import Settings
from .tilecfg import cfg_text, tilecfg_image


def example(ins, form, settings: Settings, cpu: str, encoding):
    """TILEZERO of a loaded tile, or TILERELEASE after loading one."""
    init, views = init_regions(settings)
    release = form.mnemonic == "tilerelease"
    tile = tile_number(ins.operands[0].name) if ins.operands else 0
    rows, colsb = (settings.shape + (4, 16))[:2] if settings.shape else (4, 16)
    rng = np.random.default_rng(settings.seed)
    memory = list(init.memory) if init else []
    regs = dict(init.regs) if init else {}
    cfg_reg, src_reg, stride_reg = scratch(set(regs), 3)
    cfg_at = free_address(memory, 64, CFG_ADDR)
    shapes = {tile: (rows, colsb)} if tile < MAX_TILES else {}
    memory.append((cfg_at, tilecfg_image(shapes), True))
    src_at = free_address(memory, REGION, DATA_ADDR)
    memory.append((src_at, rng.integers(1, 256, REGION, dtype=np.uint8).tobytes(), True))
    regs.update({cfg_reg: cfg_at, src_reg: src_at, stride_reg: 64})
    setup = [f"ldtilecfg [{cfg_reg}]"]
    if tile < MAX_TILES:
        setup.append(f"tileloadd tmm{tile}, [{src_reg}+{stride_reg}*1]")
    run = run_after_setup(ins, setup, cpu=cpu, regs=regs, memory=memory, max_steps=settings.max_steps)
    blocks = setup_blocks(run)
    if run.fault:
        return blocks + fault_blocks(run), example_figure(ins, encoding, [], [])
    state = run.machine.state
    changed = [w for w in run.record.writes if w.kind == "tile"]
    before_cells = [[Cell(f"{run.before['tiles'][tile, r, c]:02x}", "a" if r < rows and c < colsb else "zeroed")
                     for c in range(BYTES_PER_ROW)] for r in range(MAX_ROWS)]
    tiles_after = state.settled_tiles()
    changed_rows = {w.where.subscript for w in changed if w.where.name == f"tmm{tile}"}
    after_cells = [[Cell(f"{tiles_after[tile, r, c]:02x}", "changed" if r in changed_rows else "zeroed")
                    for c in range(BYTES_PER_ROW)] for r in range(MAX_ROWS)]
    before = Grid(f"tmm{tile} before", before_cells, group=4, caption=f"configured {rows} × {colsb} bytes")
    after = Grid(f"tmm{tile} after", after_cells, group=4, caption="every byte of all 16 rows × 64 bytes")
    blocks.append(Table(["write", "old", "new"], [[w.where, hex_bytes(w.old, 8) if isinstance(w.old, bytes)
                                                  else str(w.old), hex_bytes(w.new, 8) if isinstance(w.new, bytes)
                                                  else str(w.new)] for w in run.record.writes],
                        title="What the step wrote (the machine's journal)"))
    nonzero = int(np.count_nonzero(tiles_after))
    blocks.append(Check("non-zero tile bytes after" + ("" if release else f" in tmm{tile}"), "0",
                        str(nonzero if release else int(np.count_nonzero(tiles_after[tile])))))
    if release:
        blocks.append(Check("TILECFG after", cfg_text(TileConfig()), cfg_text(state.tilecfg)))
    panels = [[before, after]]
    legend = [("a", "the configured rows × colsb"), ("changed", "rows the step changed"),
              ("zeroed", "zero")]
    return blocks, example_figure(ins, encoding, panels, [], legend=legend)



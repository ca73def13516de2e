"""TILELOADD, TILELOADDT1 and TILESTORED: each configured row against the address the machine accessed.

The set-up configures the tile (and, for a store or a start_row above 0, loads it
first); the table and the check compare base + disp + r × stride with the addresses
the step read or wrote, and the picture joins memory rows to tile rows.
"""

from __future__ import annotations

import numpy as np

from ...core.explain import Arrow, Cell, Check, Grid, Paragraph, Table, fault_blocks, setup_blocks
from ..operands import Mem, Reg, tile_number
from ..state import BYTES_PER_ROW, MAX_ROWS, MAX_TILES
from .common import (
    CFG_ADDR, DATA_ADDR, OLD_ADDR, REGION, example_figure, free_address, hex_bytes, init_regions, mem_registers,
    region_covering, run_after_setup, scratch,
)
from .settings import Settings
from .tilecfg import tilecfg_image


def example(ins, form, settings: Settings, cpu: str, encoding):
    """One tile load or store of the configured rows, from generated data or the init file's."""
    store = form.mnemonic == "tilestored"
    init, views = init_regions(settings)
    operands = ins.operands
    if len(operands) != 2:
        return [Paragraph("These bytes do not decode to operands, so there is nothing to run.")], None
    mem = next(o for o in operands if isinstance(o, Mem))
    tile = tile_number(next(o for o in operands if isinstance(o, Reg)).name)
    rows, colsb = (settings.shape + (4, 16))[:2] if settings.shape else (4, 16)
    start_row = settings.start_row or 0
    rng = np.random.default_rng(settings.seed)
    memory = list(init.memory) if init else []
    regs = dict(init.regs) if init else {}
    avoid = mem_registers(ins) | set(regs)
    cfg_reg, src_reg, stride_reg, old_reg = scratch(avoid, 4)
    if "tilecfg" in views:
        cfg_at = views["tilecfg"].address
    else:
        cfg_at = free_address(memory, 64, CFG_ADDR)
        if tile < MAX_TILES:
            memory.append((cfg_at, tilecfg_image({tile: (rows, colsb)}), True))
    regs[cfg_reg] = cfg_at
    # the operand's registers: base at the data, index = the row stride
    stride_wanted = 64
    if mem.index and mem.index != "riz" and mem.index not in regs:
        regs[mem.index] = max(1, stride_wanted // mem.scale)
    if mem.base and mem.base not in regs:
        regs[mem.base] = DATA_ADDR if mem.base != mem.index else regs[mem.index]
    base = (regs.get(mem.base, 0) if mem.base else 0) + mem.disp
    stride = regs[mem.index] * mem.scale if mem.index and mem.index != "riz" else 0
    addresses = [(base + r * stride) % (1 << 64) for r in range(rows)]
    if init is None or not all(region_covering(memory, a) for a in addresses):
        low = min(addresses) & ~63
        high = (max(addresses) + colsb + 63) & ~63
        if not any(low < a + len(d) and a < high for a, d, _w in memory):
            data = bytes(high - low) if store else rng.integers(0, 256, high - low, dtype=np.uint8).tobytes()
            memory.append((low, data, True))
    setup = [f"ldtilecfg [{cfg_reg}]"]
    note = ""
    if store:
        src_at = free_address(memory, REGION, OLD_ADDR)
        memory.append((src_at, rng.integers(0, 256, REGION, dtype=np.uint8).tobytes(), True))
        regs[src_reg], regs[stride_reg] = src_at, 64
        setup.append(f"tileloadd tmm{tile}, [{src_reg}+{stride_reg}*1]")
    elif start_row:
        old_at = free_address(memory, REGION, OLD_ADDR)
        memory.append((old_at, bytes([0xEE]) * REGION, True))
        regs[old_reg], regs[stride_reg] = old_at, 64
        setup.append(f"tileloadd tmm{tile}, [{old_reg}+{stride_reg}*1]")
    if start_row:
        note = (f"then start_row := {start_row}, as an earlier {form.mnemonic.upper()} interrupted by a #PF at row "
                f"{start_row} leaves it (and XRSTOR restores it)")

        def before_step(machine):
            machine.state.set_start_row(start_row)
    else:
        before_step = None
    run = run_after_setup(ins, setup, cpu=cpu, regs=regs, memory=memory, max_steps=settings.max_steps,
                      before_step=before_step)
    blocks = setup_blocks(run, note)
    reg_rows = [[name, f"{value:#x}"] for name, value in sorted(regs.items()) if name in (mem.base, mem.index)]
    address_rule = (f"row r is at {mem.base or '0'} + {mem.disp:#x} + r × ({mem.index} × {mem.scale})"
                    if mem.index and mem.index != "riz" else f"row r is at {mem.base or '0'} + {mem.disp:#x} + r × 0")
    blocks.append(Paragraph(f"Addressing: {address_rule}; start_row = {start_row}; "
                            f"tmm{tile} is configured as {rows} rows × {colsb} bytes."))
    if reg_rows:
        blocks.append(Table(["register", "value"], reg_rows))
    if run.fault:
        blocks += fault_blocks(run)
        return blocks, example_figure(ins, encoding, [], [])
    machine = run.machine
    accesses = run.writes if store else [(a, s) for a, s in run.reads]
    table_rows = []
    observed = []
    for r in range(rows):
        if r < start_row:
            kept = run.before["tiles"][tile, r, :colsb].tobytes()
            table_rows.append([str(r), "", "", Cell(f"kept (below start_row): {hex_bytes(kept, 8)}", "kept")])
            continue
        k = r - start_row
        predicted = (base + r * stride) % (1 << 64)
        if k < len(accesses):
            address = accesses[k][0]
            observed.append(address)
            data = bytes(accesses[k][1]) if store else machine.state.settled_tiles()[tile, r, :colsb].tobytes()
        else:
            address, data = None, b""
        table_rows.append([str(r), f"{predicted:#x}", Cell(f"{address:#x}" if address is not None else "-", "addr"),
                           hex_bytes(data, 8)])
    if not store and rows < MAX_ROWS:
        table_rows.append([f"{rows}-{MAX_ROWS - 1}", "", "", Cell("zeroed (beyond the configured rows)", "zeroed")])
    blocks.append(Table(["row", "base + disp + r × stride", "address the machine " + ("wrote" if store else "read"),
                         ("bytes stored" if store else "bytes loaded (then bytes colsb..63 zeroed)")], table_rows))
    predicted_all = [f"{(base + r * stride) % (1 << 64):#x}" for r in range(start_row, rows)]
    blocks.append(Check("row addresses", " ".join(predicted_all), " ".join(f"{a:#x}" for a in observed)))
    blocks.append(Paragraph(f"start_row after: {machine.state.tilecfg.start_row} (every tile instruction that "
                            "completes resets it)."))
    # the picture: memory rows -> tile rows
    tile_after = machine.state.settled_tiles()[tile]
    mem_rows = []
    for r in range(rows):
        address = (base + r * stride) % (1 << 64)
        try:
            data = machine.memory.read(address, colsb)
        except Exception:  # noqa: BLE001 - an unmapped row shows as blanks
            data = b""
        mem_rows.append([Cell(f"{b:02x}", "addr" if r >= start_row else "kept") for b in data] or
                        [Cell("") for _ in range(colsb)])
    mem_grid = Grid("memory rows", mem_rows, [f"{(base + r * stride) % (1 << 64):#x}" for r in range(rows)],
                    [str(c) for c in range(colsb)], group=4,
                    caption=f"row r at base+disp+r×stride, stride {stride}")
    tile_cells = [[Cell(f"{tile_after[r, c]:02x}" if not store else f"{run.before['tiles'][tile, r, c]:02x}",
                        ("kept" if r < start_row else "addr") if r < rows and c < colsb else "zeroed")
                   for c in range(BYTES_PER_ROW)] for r in range(MAX_ROWS)]
    tile_grid = Grid(f"tmm{tile} ({'before the store' if store else 'after'}, all 16 × 64 bytes)", tile_cells,
                     group=4, caption=f"configured: {rows} rows × {colsb} bytes")
    if store:
        panels = [[tile_grid, mem_grid]]
        arrows = [Arrow(tile_grid.title, (r, BYTES_PER_ROW - 1), mem_grid.title, (r, 0), "a", "", "right", "left")
                  for r in range(start_row, rows)]
    else:
        panels = [[mem_grid, tile_grid]]
        arrows = [Arrow(mem_grid.title, (r, colsb - 1), tile_grid.title, (r, 0), "a", "", "right", "left")
                  for r in range(start_row, rows)]
    blocks.append(mem_grid)
    legend = [("addr", "bytes moved by this instruction"), ("kept", "rows below start_row: untouched"),
              ("zeroed", "outside the configured shape" + (": zeroed" if not store else ""))]
    return blocks, example_figure(ins, encoding, panels, arrows, legend=legend)



"""The trace page's operand outlines of x86 AMX steps (ISA.page_outlines), held to what the step does on the
simulator (whose AMX semantics are checked against silicon and the SDM elsewhere): the bytes outlined as
written are exactly the array bytes that changed, and the bytes outside the outlined read spans can be zeroed
without changing the result.  Each step starts from random data, with the tiles' bytes beyond their configured
shape random too (the page does not show them; the instruction must not read them).
"""

from __future__ import annotations

import numpy as np
import pytest

from isasim.core.machine import Machine
from isasim.x86_amx import ISA
from isasim.x86_amx.forms import amx, amx_extensions
from isasim.x86_amx.forms.amx import AmxForm

CONFIG = {"cpu": "diamond-rapids"}  # every AMX extension
WRITTEN = ("written", "read and written")
READ = ("read", "read and written")
TMUL_MNEMONICS = sorted({f.mnemonic for f in list(amx.FORMS) + list(amx_extensions.FORMS)
                         if isinstance(f, AmxForm) and f.is_tmul})


def tilecfg(shapes: dict[int, tuple[int, int]], start_row: int = 0) -> bytes:
    """The SDM's TILECFG layout: palette 1 at byte 0, start_row at 1, colsb[t] (u16) at 16 + 2t, rows[t] at 48 + t."""
    image = bytearray(64)
    image[0], image[1] = 1, start_row
    for t, (rows, colsb) in shapes.items():
        image[16 + 2 * t:18 + 2 * t] = colsb.to_bytes(2, "little")
        image[48 + t] = rows
    return bytes(image)


def step(text: str, cfg: bytes, tiles: dict[int, np.ndarray], regs=None, memory=None, arrays=None):
    """Machines just before and just after the one instruction ``text``, every tile t of ``tiles`` holding its
    16 x 64 bytes (also those beyond the configured shape)."""
    before, after = Machine("x86_amx", CONFIG), Machine("x86_amx", CONFIG)
    program = before.assemble(text)
    for machine in (before, after):
        machine.load(program, regs=regs, memory=[(a, bytes(d), w) for a, d, w in memory or []],
                     arrays={"tilecfg": cfg, **(arrays or {})})
        for t, data in tiles.items():
            machine.state.write_tile(t, data)
    instruction = after.current_instruction()
    assert after.step().fault is None
    return instruction, before, after


def outlined(outlines, roles, unit_of) -> set:
    """(array, unit index) of every byte the outlines of ``roles`` cover."""
    return {(o.location, i // unit_of(o.location)) for o in outlines if o.role in roles
            for start, end in o.spans for i in range(start, end)}


def changed(before, after, unit_of) -> set:
    """(array, unit index) of every array byte the step changed (an array absent before counts as zeros)."""
    a, b = ISA.observed_arrays(before.state), ISA.observed_arrays(after.state)
    out = set()
    for name, new in b.items():
        old = a.get(name, bytes(len(new)))
        assert len(old) == len(new), f"{name} changed shape"
        out |= {(name, i // unit_of(name)) for i in range(len(new)) if old[i] != new[i]}
    return out


def zeroed_outside(tiles: dict[int, np.ndarray], outlines, cfg: bytes) -> dict[int, np.ndarray]:
    """The tiles with every byte outside the outlined read spans := 0 (a tile array's byte r x colsb + c is
    the tile's row r, byte c)."""
    colsb = {t: int.from_bytes(cfg[16 + 2 * t:18 + 2 * t], "little") for t in range(8)}
    out = {}
    for t, data in tiles.items():
        keep = np.zeros((16, 64), bool)
        for o in outlines:
            if o.location == f"tmm{t}" and o.role in READ:
                for start, end in o.spans:
                    for i in range(start, end):
                        keep[divmod(i, colsb[t])] = True
        out[t] = np.where(keep, data, 0).astype(np.uint8)
    return out


def by_dword(name: str) -> int:
    return 1 if name == "tilecfg" else 4


def by_byte(name: str) -> int:
    return 1


def random_tiles(rng, count: int = 8) -> dict[int, np.ndarray]:
    return {t: rng.integers(0, 256, (16, 64), dtype=np.uint8) for t in range(count)}


@pytest.mark.parametrize("mnemonic", TMUL_MNEMONICS)
def test_a_tmul_reads_a_and_b_and_writes_c(mnemonic):
    """C (tmm0) 5 x 7 dwords, A (tmm1) 5 x 6 dwords, B (tmm2) 6 x 7 dwords, start_row 2.  The products' dwords
    change every dword of C (C holds moderate values; random A and B bytes give sums that are not negligible
    beside them), and start_row := 0 changes TILECFG byte 1."""
    rng = np.random.default_rng(sum(map(ord, mnemonic)))
    M, K, N = 5, 6, 7
    cfg = tilecfg({0: (M, 4 * N), 1: (M, 4 * K), 2: (K, 4 * N)}, start_row=2)
    tiles = random_tiles(rng)
    integer = mnemonic.startswith("tdpb") and mnemonic.endswith("d")
    c = rng.integers(-2**31, 2**31, (16, 16)) if integer else rng.uniform(-1, 1, (16, 16))
    tiles[0] = np.asarray(c, "<i4" if integer else "<f4").view(np.uint8).reshape(16, 64)
    instruction, before, after = step(f"{mnemonic} tmm0, tmm1, tmm2", cfg, tiles)

    outlines = ISA.page_outlines(instruction, before)
    assert [(o.location, o.role) for o in outlines] == [
        ("tmm0", "read and written"), ("tmm1", "read"), ("tmm2", "read"), ("tilecfg", "written")]
    assert [o.label.split(":")[0] for o in outlines[:3]] == ["C", "A", "B"]
    assert changed(before, after, by_dword) == outlined(outlines, WRITTEN, by_dword)
    assert len(outlined(outlines, WRITTEN, by_dword)) == M * N + 1

    _, before_zeroed, after_zeroed = step(f"{mnemonic} tmm0, tmm1, tmm2", cfg, zeroed_outside(tiles, outlines, cfg))
    assert ISA.observed_arrays(after_zeroed.state)["tmm0"] == ISA.observed_arrays(after.state)["tmm0"]


LOADS = ["tileloadd", "tileloaddt1", "tileloaddrs", "tileloaddrst1"]


@pytest.mark.parametrize("start_row", [0, 2])
@pytest.mark.parametrize("mnemonic", LOADS)
def test_a_tile_load_writes_the_rows_from_start_row(mnemonic, start_row):
    """tmm3 as 6 rows x 20 bytes from base 0x100000, stride 96: memory holds each row's bytes inverted, so every
    byte a load writes changes."""
    rng = np.random.default_rng(start_row + 7 * LOADS.index(mnemonic))
    rows, colsb, stride, base = 6, 20, 96, 0x100000
    cfg = tilecfg({3: (rows, colsb)}, start_row)
    tiles = random_tiles(rng)
    memory = bytearray(rng.integers(0, 256, rows * stride, dtype=np.uint8).tobytes())
    for r in range(rows):
        memory[r * stride:r * stride + colsb] = (~tiles[3][r, :colsb]).tobytes()
    instruction, before, after = step(f"{mnemonic} tmm3, [rdi+rsi*1]", cfg, tiles, regs={"rdi": base, "rsi": stride},
                                      memory=[(base, memory, False)])
    outlines = ISA.page_outlines(instruction, before)
    assert ("tmm3", ((start_row * colsb, rows * colsb),), "written") in [(o.location, o.spans, o.role)
                                                                       for o in outlines]
    assert changed(before, after, by_byte) == outlined(outlines, WRITTEN, by_byte)
    assert len(outlined(outlines, WRITTEN, by_byte)) == (rows - start_row) * colsb + (start_row != 0)


@pytest.mark.parametrize("start_row", [0, 2])
def test_a_tile_store_reads_the_rows_from_start_row(start_row):
    """TILESTORED writes memory (not an array panel): its outline is the tile's rows it stores, read; zeroing the
    rest of the tile leaves the stored bytes as they were."""
    rng = np.random.default_rng(40 + start_row)
    rows, colsb, stride, base = 6, 20, 96, 0x100000
    cfg = tilecfg({3: (rows, colsb)}, start_row)
    tiles = random_tiles(rng)
    memory = [(base, bytes(rows * stride), True)]
    text = "tilestored [rdi+rsi*1], tmm3"
    instruction, before, after = step(text, cfg, tiles, regs={"rdi": base, "rsi": stride}, memory=memory)
    outlines = ISA.page_outlines(instruction, before)
    assert [(o.location, o.spans, o.role) for o in outlines if o.location == "tmm3"] == [
        ("tmm3", ((start_row * colsb, rows * colsb),), "read")]
    assert changed(before, after, by_byte) == outlined(outlines, WRITTEN, by_byte)  # start_row's byte, or nothing
    _, _, after_zeroed = step(text, cfg, zeroed_outside(tiles, outlines, cfg), regs={"rdi": base, "rsi": stride},
                              memory=memory)
    stored = after.memory.read(base, rows * stride)
    assert after_zeroed.memory.read(base, rows * stride) == stored
    assert stored[start_row * stride:start_row * stride + colsb] == tiles[3][start_row, :colsb].tobytes()


def test_tilezero_writes_its_configured_bytes():
    rng = np.random.default_rng(3)
    cfg = tilecfg({5: (7, 36)})
    tiles = {t: rng.integers(1, 256, (16, 64), dtype=np.uint8) for t in range(8)}  # no zero byte: each changes
    instruction, before, after = step("tilezero tmm5", cfg, tiles)
    outlines = ISA.page_outlines(instruction, before)
    assert [(o.location, o.spans, o.role) for o in outlines] == [("tmm5", ((0, 7 * 36),), "written")]
    assert changed(before, after, by_byte) == outlined(outlines, WRITTEN, by_byte)


def test_ldtilecfg_and_sttilecfg_and_tilerelease_outline_tilecfg():
    """LDTILECFG writes TILECFG (every byte it changes is outlined); STTILECFG reads it; TILERELEASE zeroes it.
    (LDTILECFG also zeroes and reshapes every tile: they are not its operands, and the outline is TILECFG's.)"""
    old, new = tilecfg({0: (16, 64), 1: (3, 8)}, 1), tilecfg({0: (2, 12), 2: (16, 64)})
    base = 0x100000
    instruction, before, after = step("ldtilecfg [rcx]", old, {}, regs={"rcx": base},
                                      memory=[(base, new, False)])
    (outline,) = ISA.page_outlines(instruction, before)
    assert (outline.location, outline.spans, outline.role) == ("tilecfg", ((0, 64),), "written")
    assert "0x100000" in outline.label
    held_before, held_after = (ISA.observed_arrays(m.state)["tilecfg"] for m in (before, after))
    assert held_before == old and held_after == new  # every byte that changed is in the outline's one span

    instruction, before, after = step("sttilecfg [rcx]", old, {}, regs={"rcx": base},
                                      memory=[(base, bytes(64), True)])
    (outline,) = ISA.page_outlines(instruction, before)
    assert (outline.location, outline.spans, outline.role) == ("tilecfg", ((0, 64),), "read")
    assert after.memory.read(base, 64) == old

    instruction, before, after = step("tilerelease", old, {})
    (outline,) = ISA.page_outlines(instruction, before)
    assert (outline.location, outline.spans, outline.role) == ("tilecfg", ((0, 64),), "written")
    assert ISA.observed_arrays(after.state)["tilecfg"] == bytes(64)


ROW_FORMS = ["tcvtrowd2ps", "tcvtrowps2bf16h", "tcvtrowps2bf16l", "tcvtrowps2phh", "tcvtrowps2phl", "tilemovrow"]


@pytest.mark.parametrize("row", ["imm8", "r32"])
@pytest.mark.parametrize("mnemonic", ROW_FORMS)
def test_a_row_form_reads_part_of_one_row_and_writes_a_zmm(mnemonic, row):
    """tmm2 as 5 rows x 40 bytes (the conversions take 10 dwords of a row, TILEMOVROW 40 bytes, and zero the
    rest of zmm7); row 3 by imm8 or ecx.  zmm7 holds random dwords before: each one the step writes changes."""
    rng = np.random.default_rng(ROW_FORMS.index(mnemonic))
    cfg = tilecfg({2: (5, 40)})
    tiles = random_tiles(rng)
    tiles[2] = np.asarray(rng.uniform(-100, 100, (16, 16)), "<f4").view(np.uint8).reshape(16, 64)
    operand = "3" if row == "imm8" else "ecx"
    text = f"{mnemonic} zmm7, tmm2, {operand}"
    zmm = {"zmm7": rng.integers(1, 256, 64, dtype=np.uint8).tobytes()}
    instruction, before, after = step(text, cfg, tiles, regs={"rcx": 3}, arrays=zmm)
    outlines = ISA.page_outlines(instruction, before)
    assert [(o.location, o.spans, o.role) for o in outlines] == [
        ("tmm2", ((3 * 40, 4 * 40),), "read"), ("zmm7", ((0, 64),), "written")]
    assert changed(before, after, by_dword) == outlined(outlines, WRITTEN, by_dword)
    _, _, after_zeroed = step(text, cfg, zeroed_outside(tiles, outlines, cfg), regs={"rcx": 3}, arrays=zmm)
    assert ISA.observed_arrays(after_zeroed.state)["zmm7"] == ISA.observed_arrays(after.state)["zmm7"]


def test_a_row_chunk_beyond_colsb_reads_nothing():
    """ecx = 1 << 16 | 2: row 2, bytes 64.. of a 40-byte row: nothing read, zmm7 := 0."""
    cfg = tilecfg({2: (5, 40)})
    instruction, before, after = step("tilemovrow zmm7, tmm2, ecx", cfg, random_tiles(np.random.default_rng(9)),
                                      regs={"rcx": 1 << 16 | 2}, arrays={"zmm7": bytes(range(1, 65))})
    outlines = ISA.page_outlines(instruction, before)
    assert [(o.location, o.role) for o in outlines] == [("zmm7", "written")]
    assert "zmm7" not in ISA.observed_arrays(after.state)  # zero


def test_no_outline_without_a_configuration_or_for_scalar_code():
    machine = Machine("x86_amx", CONFIG)
    program = machine.assemble("tdpbusd tmm0, tmm1, tmm2\nadd rax, 1")
    machine.load(program)
    for instruction in program.instructions:
        assert ISA.page_outlines(instruction, machine) == []

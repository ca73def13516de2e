"""isasim explain of tile loads and stores, the tile configuration and zeroing: rows where the machine moved them."""

from __future__ import annotations

import pytest

from isasim.core.explain import to_text
from isasim.core.trace import Init, RegionView
from isasim.x86_amx.explain.tilecfg import tilecfg_layout

from explain_helpers import ex


def test_tile_load_rows_are_where_the_machine_read_them():
    expl = ex("tileloadd tmm2, [rsi+rbx*2+0x10]", shape=(5, 12))
    (check,) = expl.checks
    addresses = [int(a, 16) for a in check.machine.split()]
    assert check.equal and len(addresses) == 5
    assert [b - a for a, b in zip(addresses, addresses[1:])] == [64] * 4  # rbx = 32, scale 2


def test_tile_load_with_start_row_keeps_the_rows_below():
    expl = ex("tileloadd tmm1, [rdi+r8*1]", start_row=2)
    (check,) = expl.checks
    assert check.equal and len(check.machine.split()) == 2  # rows 2 and 3 of 4
    text = to_text(expl)
    assert "kept (below start_row)" in text and "start_row := 2" in text


def test_tile_load_without_index_reads_every_row_at_one_address():
    expl = ex("tileloadd tmm0, [rdi+riz*1+0x8]")
    (check,) = expl.checks
    assert check.equal and len(set(check.machine.split())) == 1


def test_tile_store_rows():
    (check,) = ex("tilestored [rdx+r8*1], tmm0", shape=(3, 8)).checks
    assert check.equal and len(check.machine.split()) == 3


def test_tilecfg_layout_is_read_from_the_definition():
    names = tilecfg_layout()
    assert names[0] == "palette" and names[1] == "start_row"
    assert names[16] == names[17] == "colsb[0]" and names[30] == "colsb[7]" and names[48] == "rows[0]"
    assert names[2] == names[32] == names[63] == "reserved"


def test_ldtilecfg_and_sttilecfg():
    expl = ex("ldtilecfg [rcx+0x40]", shape=(2, 3, 4))
    (check,) = expl.checks
    assert check.equal and "tmm0=2x16 tmm1=2x12 tmm2=3x16" in check.machine
    (check,) = ex("sttilecfg [rax]").checks
    assert check.equal


def test_ldtilecfg_of_a_bad_configuration_is_a_gp():
    cfg = bytearray(64)
    cfg[0], cfg[5] = 1, 7  # a reserved byte
    init = Init(memory=[(0x10000, bytes(cfg), True)], views=[RegionView("tilecfg", 0x10000, "uint8", (1, 64))])
    text = to_text(ex("ldtilecfg [rcx]", init=init, init_source="test"))
    assert "#GP" in text and "reserved byte 5" in text


@pytest.mark.parametrize("text", ["tilezero tmm5", "tilerelease"])
def test_zeroing(text):
    expl = ex(text)
    assert expl.checks and all(c.equal for c in expl.checks)

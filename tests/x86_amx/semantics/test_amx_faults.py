"""Every row of the AMX fault table, as measured on Emerald Rapids silicon.

Each test runs the instruction on the simulator and checks the architectural
fault kind (#GP / #UD / #PF), which instruction raised it, and that the state the
hardware leaves behind is what the simulator leaves behind.
"""

from __future__ import annotations

import numpy as np
import pytest

from amx_fault_cases import AFTER_RELEASE, FULL, SHAPE_MISMATCHES, cfg_with
from amxharness import BUF_ADDR, CFG_ADDR, machine, run, set_tile, tilecfg_bytes


def assert_fault(m, kind: str, index: int, rule_words: str = ""):
    assert m.fault is not None, "expected a fault"
    assert (m.fault.kind, m.fault.index) == (kind, index), m.fault.describe()
    assert rule_words in m.fault.rule


# ---- LDTILECFG -----------------------------------------------------------------------


def test_valid_palette_1_configuration_loads():
    m = run(["ldtilecfg [rcx]"], shapes={t: (16, 64) for t in range(8)})
    assert m.fault is None and m.state.tilecfg.palette == 1 and m.state.tilecfg.rows == [16] * 8


@pytest.mark.parametrize("palette", [2, 255])
def test_unsupported_palette_is_gp(palette):
    assert_fault(run(["ldtilecfg [rcx]"], cfg=tilecfg_bytes(FULL, palette=palette)), "#GP", 0, "palette")


@pytest.mark.parametrize("shape", [(17, 64), (16, 65), (16, 68)])
def test_rows_or_colsb_beyond_the_palette_limits_is_gp(shape):
    assert_fault(run(["ldtilecfg [rcx]"], shapes={0: shape}), "#GP", 0, "exceeds")


@pytest.mark.parametrize("shape", [(16, 0), (0, 64)])
def test_exactly_one_of_rows_and_colsb_zero_is_gp(shape):
    assert_fault(run(["ldtilecfg [rcx]"], shapes={0: shape}), "#GP", 0, "both must be 0")


@pytest.mark.parametrize("offset", [2, 15, 32, 47, 56, 63])
def test_non_zero_reserved_byte_is_gp(offset):
    assert_fault(run(["ldtilecfg [rcx]"], cfg=cfg_with(**{f"b{offset}": 1})), "#GP", 0, f"reserved byte {offset}")


def test_colsb_not_multiple_of_4_is_accepted_by_ldtilecfg():
    assert run(["ldtilecfg [rcx]"], shapes={0: (16, 6), 1: (1, 1)}).fault is None


@pytest.mark.parametrize("start_row", [15, 200])
def test_start_row_is_not_validated_and_sttilecfg_echoes_it(start_row):
    m = run(["ldtilecfg [rcx]", "sttilecfg [rdx]"], cfg=tilecfg_bytes(FULL, start_row=start_row))
    assert m.fault is None
    assert m.memory.read(0x40000, 64)[1] == start_row


def test_palette_0_with_garbage_is_init_state():
    m = run(["ldtilecfg [rcx]", "sttilecfg [rdx]"], cfg=bytes([0]) + b"\xff" * 63)
    assert m.fault is None and not m.state.tilecfg.configured
    assert m.memory.read(0x40000, 64) == bytes(64)


def test_misaligned_configuration_address_is_fine():
    image = b"\0" + tilecfg_bytes(FULL)
    m = run(["ldtilecfg [rcx+1]"], cfg=image.ljust(128, b"\0"))
    assert m.fault is None and m.state.tilecfg.rows[0] == 16


def test_ldtilecfg_crossing_into_unmapped_memory_is_pf_read():
    m = run(["ldtilecfg [rcx+0x20]"])  # the 64-byte config region ends after 32 of the bytes read
    assert_fault(m, "#PF", 0)
    assert m.fault.access == "read" and m.fault.address == CFG_ADDR + 0x40


def test_sttilecfg_crossing_into_unmapped_memory_is_pf_write():
    m = run(["ldtilecfg [rcx]", "sttilecfg [rcx+0x20]"], shapes=FULL)
    assert_fault(m, "#PF", 1)
    assert m.fault.access == "write"


def test_ldtilecfg_register_form_is_ud():
    # c4 e2 78 49 c1: mod=11 with NP 49 /0, r/m != 000 (not TILERELEASE): no such instruction
    assert_fault(run([".byte 0xc4,0xe2,0x78,0x49,0xc1"]), "#UD", 0, "ModRM")


def test_gp_ldtilecfg_changes_nothing():
    m = machine(["ldtilecfg [rcx]", "ldtilecfg [rcx+64]"],
                cfg=tilecfg_bytes(FULL) + tilecfg_bytes(FULL, palette=2))
    m.step()
    set_tile(m, 0, 0x66)
    m.step()
    assert m.fault.kind == "#GP"
    assert m.state.tilecfg.palette == 1 and m.state.tilecfg.colsb[0] == 64
    assert (m.state.settled_tiles()[0] == 0x66).all()


# ---- tiles not configured / released -------------------------------------------------

@pytest.mark.parametrize("line", [x[0] for x in AFTER_RELEASE])
def test_tile_instruction_after_tilerelease_is_ud(line):
    assert_fault(run(["ldtilecfg [rcx]", "tilerelease", line], shapes=FULL, regs={"rsi": 64}), "#UD", 2,
                 "not configured")


def test_tilezero_after_palette_0_config_is_ud():
    assert_fault(run(["ldtilecfg [rcx]", "tilezero tmm0"], cfg=bytes(64)), "#UD", 1)


def test_sttilecfg_after_tilerelease_stores_zeros_and_release_twice_is_fine():
    m = run(["ldtilecfg [rcx]", "tilerelease", "tilerelease", "sttilecfg [rdx]"], shapes=FULL)
    assert m.fault is None and m.memory.read(0x40000, 64) == bytes(64)


@pytest.mark.parametrize("line", ["tilezero tmm3", "tileloadd tmm3, [rdi+rsi*1]", "tilestored [rdi+rsi*1], tmm3"])
def test_using_a_tile_with_rows_0_colsb_0_is_ud(line):
    assert_fault(run(["ldtilecfg [rcx]", line], shapes=FULL, regs={"rsi": 64}), "#UD", 1, "tmm3 is not configured")


@pytest.mark.parametrize("line", ["tdpbusd tmm0, tmm1, tmm3", "tdpbusd tmm3, tmm1, tmm2"])
def test_tdpbusd_with_an_unconfigured_tile_is_ud(line):
    assert_fault(run(["ldtilecfg [rcx]", line], shapes=FULL), "#UD", 1, "tmm3 is not configured")


# ---- colsb % 4 ---------------------------------------------------------------------------


def test_tilezero_does_not_check_colsb_multiple_of_4():
    assert run(["ldtilecfg [rcx]", "tilezero tmm0"], shapes={0: (16, 6)}).fault is None


@pytest.mark.parametrize("line", ["tileloadd tmm0, [rdi+rsi*1]", "tilestored [rdi+rsi*1], tmm0"])
def test_load_store_with_colsb_not_multiple_of_4_is_ud(line):
    assert_fault(run(["ldtilecfg [rcx]", line], shapes={0: (16, 6)}, regs={"rsi": 64}), "#UD", 1, "multiple of 4")


def test_tdpbusd_with_c_and_b_colsb_6_is_ud():
    assert_fault(run(["ldtilecfg [rcx]", "tdpbusd tmm0, tmm1, tmm2"], shapes={0: (16, 6), 1: (16, 64), 2: (16, 6)}),
                 "#UD", 1, "multiple of 4")


# ---- TMUL shapes --------------------------------------------------------------------------


@pytest.mark.parametrize("shapes", [FULL, {0: (4, 8), 1: (4, 12), 2: (3, 8)}])
def test_tdpbusd_valid_shapes(shapes):
    assert run(["ldtilecfg [rcx]", "tdpbusd tmm0, tmm1, tmm2"], shapes=shapes).fault is None


@pytest.mark.parametrize("mnemonic", ["tdpbusd", "tdpbssd", "tdpbsud", "tdpbuud", "tdpbf16ps"])
@pytest.mark.parametrize("shapes,words", SHAPE_MISMATCHES)
def test_tmul_shape_mismatch_is_ud(mnemonic, shapes, words):
    assert_fault(run(["ldtilecfg [rcx]", f"{mnemonic} tmm0, tmm1, tmm2"], shapes=shapes), "#UD", 1, words)


@pytest.mark.parametrize("raw", [
    "0xc4,0xe2,0x71,0x5e,0xc0",  # tdpbusd tmm0, tmm0, tmm1 (dst == src1)
    "0xc4,0xe2,0x79,0x5e,0xc1",  # tdpbusd tmm0, tmm1, tmm0 (dst == src2)
    "0xc4,0xe2,0x71,0x5e,0xc1",  # tdpbusd tmm0, tmm1, tmm1 (src1 == src2)
    "0xc4,0xe2,0x72,0x5c,0xc1",  # tdpbf16ps tmm0, tmm1, tmm1
])
def test_repeated_tile_registers_are_ud(raw):
    assert_fault(run(["ldtilecfg [rcx]", f".byte {raw}"], shapes=FULL), "#UD", 1, "must differ")


# ---- memory faults -------------------------------------------------------------------------


def test_tileloadd_crossing_into_an_unmapped_page_faults_at_row_8():
    # rows 0-7 are inside the buffer's last 512 bytes; row 8 is past its end
    m = run(["ldtilecfg [rcx]", "tileloadd tmm0, [rdi+rsi*1+0xfe00]"], shapes=FULL, regs={"rsi": 64})
    assert_fault(m, "#PF", 1)
    assert m.fault.access == "read" and m.fault.address == BUF_ADDR + 0x10000
    assert m.state.tilecfg.start_row == 8  # the faulting row, not the next one


def test_tilestored_to_unmapped_and_read_only_memory_is_pf_write():
    m = run(["ldtilecfg [rcx]", "tilestored [rdi+rsi*1+0xfe00], tmm0"], shapes=FULL, regs={"rsi": 64})
    assert_fault(m, "#PF", 1)
    assert m.fault.access == "write" and m.state.tilecfg.start_row == 8
    m = run(["ldtilecfg [rcx]", "tilestored [r9+rsi*1], tmm0"], shapes=FULL,
            regs={"rsi": 64, "r9": 0x80000}, memory=[(0x80000, bytes(1024), False)])
    assert_fault(m, "#PF", 1, "read-only")


@pytest.mark.parametrize("address,stride", [("[rdi+rsi*1+1]", 65), ("[rdi+rsi*1]", 0), ("[rdi+rsi*1+0x8000]", -64)])
def test_tileloadd_needs_no_alignment_and_takes_any_signed_stride(address, stride):
    assert run(["ldtilecfg [rcx]", f"tileloadd tmm0, {address}"], shapes=FULL, regs={"rsi": stride % (1 << 64)}).fault is None


# ---- start_row -------------------------------------------------------------------------------


@pytest.mark.parametrize("line", ["tileloadd tmm0, [rdi+rsi*1]", "tilestored [rdi+rsi*1], tmm0"])
def test_load_store_with_start_row_at_or_beyond_rows_is_ud(line):
    m = run(["ldtilecfg [rcx]", line], cfg=tilecfg_bytes({0: (4, 64)}, start_row=4), regs={"rsi": 64})
    assert_fault(m, "#UD", 1, "start_row=4")


def test_tilezero_with_start_row_beyond_rows_is_fine():
    assert run(["ldtilecfg [rcx]", "tilezero tmm0"], cfg=tilecfg_bytes({0: (4, 64)}, start_row=4)).fault is None


def test_start_row_is_checked_against_the_tile_used():
    m = run(["ldtilecfg [rcx]", "tileloadd tmm1, [rdi+rsi*1]"],
            cfg=tilecfg_bytes({0: (4, 64), 1: (16, 64)}, start_row=4), regs={"rsi": 64})
    assert m.fault is None


@pytest.mark.parametrize("start_row", [5, 4])
def test_tmul_ignores_start_row(start_row):
    m = run(["ldtilecfg [rcx]", "tdpbusd tmm0, tmm1, tmm2"],
            cfg=tilecfg_bytes({0: (4, 64), 1: (4, 64), 2: (16, 64)}, start_row=start_row))
    assert m.fault is None and m.state.tilecfg.start_row == 0


# ---- encodings the hardware refuses -----------------------------------------------------------


@pytest.mark.parametrize("raw,words", [
    ("0xc4,0xe2,0x7b,0x4b,0x07", "SIB"),  # tileloadd tmm0, [rdi] without a SIB byte
    ("0xc4,0xe2,0x7f,0x49,0xc0", "VEX.L=1"),  # tilezero tmm0 with VEX.L=1
    ("0xc4,0xe2,0xfb,0x49,0xc0", "VEX.W=1"),  # tilezero tmm0 with VEX.W=1
    ("0xc4,0xe2,0x73,0x49,0xc0", "vvvv"),  # tilezero with vvvv != 1111
    ("0xc4,0x62,0x7b,0x49,0xc0", "tmm8"),  # tilezero tmm8 via VEX.R
    ("0xc4,0xe2,0x39,0x5e,0xc1", "tmm8"),  # tdpbusd tmm0, tmm1, tmm8 via vvvv
    ("0xc4,0xc2,0x69,0x5e,0xc1", "tmm9"),  # tdpbusd tmm0, tmm9, tmm2 via VEX.B
    ("0xc4,0xe2,0x69,0x5e,0x01", "register operands"),  # tdpbusd with a memory operand
    ("0xc4,0xe2,0x70,0x49,0xc0", "vvvv"),  # tilerelease with vvvv != 1111
    ("0xf0,0xc4,0xe2,0x6a,0x5c,0xc1", "LOCK"),  # lock tdpbf16ps
    ("0x66,0xc4,0xe2,0x6a,0x5c,0xc1", "66"),  # 66 tdpbf16ps
])
def test_invalid_encodings_are_ud(raw, words):
    m = run(["ldtilecfg [rcx]", f".byte {raw}"], shapes=FULL)
    assert_fault(m, "#UD", 1, words)


def test_tileloadd_with_sib_and_no_index_has_stride_0():
    buffer = bytes(range(64)) + b"\xee" * 64
    m = run(["ldtilecfg [rcx]", "tileloadd tmm0, [rdi+riz*1]"], shapes=FULL, buffer=buffer.ljust(0x10000, b"\0"))
    assert m.fault is None
    assert all(m.state.settled_tiles()[0, r].tobytes() == bytes(range(64)) for r in range(16))


def test_tdpfp16ps_is_ud_without_amx_fp16_and_runs_on_granite_rapids():
    lines = ["ldtilecfg [rcx]", "tdpfp16ps tmm0, tmm1, tmm2"]
    assert_fault(run(lines, shapes=FULL, cpu="emerald-rapids"), "#UD", 1, "AMX-FP16")
    assert_fault(run(lines, shapes=FULL, cpu="sapphire-rapids"), "#UD", 1, "AMX-FP16")
    assert run(lines, shapes=FULL, cpu="granite-rapids").fault is None


def test_fault_stops_the_run_and_names_the_instruction():
    m = run(["ldtilecfg [rcx]", "tilezero tmm0", "tilezero tmm5", "tilezero tmm1"], shapes=FULL)
    assert m.fault.index == 2 and m.fault.instruction == "tilezero tmm5" and m.steps == 3
    assert "tmm5" in str(m.fault) and "instruction 2" in str(m.fault)
    assert not np.any(m.state.settled_tiles()[1])

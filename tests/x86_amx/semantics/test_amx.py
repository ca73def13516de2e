"""AMX data semantics: tile state rules and the TMUL arithmetic, against values measured on silicon.

Every expected value below is a measurement on Emerald Rapids silicon (the
project's AMX fact sheet, sections 1-3) or follows from one by the SDM's
definition (e.g. the seed article's INT64 reference product); none is copied
from isasim's output.
"""

from __future__ import annotations

import numpy as np
import pytest

from amxharness import DST_ADDR, machine, run, set_tile, stored_dwords, tdp_program, tilecfg_bytes

from isasim.core import numerics

FULL = {0: (16, 64), 1: (16, 64), 2: (16, 64)}


# ---- tile state ----------------------------------------------------------------------------


def test_ldtilecfg_zeroes_all_tile_data_and_loads_start_row():
    m = machine(["ldtilecfg [rcx]"], cfg=tilecfg_bytes(FULL, start_row=3))
    for t in range(8):
        set_tile(m, t, 0x5A)
    m.run()
    assert not m.state.settled_tiles().any() and m.state.tilecfg.start_row == 3


def test_sttilecfg_image_has_fields_and_zero_reserved_bytes():
    shapes = {0: (16, 64), 3: (2, 12), 7: (1, 4)}
    m = run(["ldtilecfg [rcx]", "sttilecfg [rdx]"], cfg=tilecfg_bytes(shapes, start_row=1))
    assert m.memory.read(DST_ADDR, 64) == tilecfg_bytes(shapes, start_row=1)


def test_tileloadd_zeroes_bytes_beyond_colsb_and_rows_beyond_rows():
    buffer = bytes(range(256)) * 256
    m = machine(["ldtilecfg [rcx]", "tileloadd tmm0, [rdi+rsi*1]"], shapes={0: (4, 8)}, regs={"rsi": 64},
                buffer=buffer)
    m.step()
    set_tile(m, 0, 0xAA)  # as XRSTOR did in the experiment
    m.step()
    tile = m.state.settled_tiles()[0]
    for r in range(4):
        assert tile[r, :8].tobytes() == buffer[64 * r : 64 * r + 8]
        assert not tile[r, 8:].any()
    assert not tile[4:].any()


def test_tilestored_writes_exactly_colsb_bytes_per_row():
    m = machine(["ldtilecfg [rcx]", "tilestored [rdx+rsi*1], tmm0"], shapes={0: (4, 8)}, regs={"rsi": 64})
    m.step()
    set_tile(m, 0, 0x77)
    m.memory.write(DST_ADDR, b"\x11" * 512)
    m.run()
    out = m.memory.read(DST_ADDR, 512)
    for r in range(8):
        expected = b"\x77" * 8 + b"\x11" * 56 if r < 4 else b"\x11" * 64
        assert out[64 * r : 64 * r + 64] == expected


def test_tilezero_zeroes_the_whole_tile_and_resets_start_row():
    m = machine(["ldtilecfg [rcx]", "tilezero tmm0"], cfg=tilecfg_bytes({0: (2, 8)}, start_row=7))
    m.step()
    set_tile(m, 0, 0xFF)
    m.step()
    assert not m.state.settled_tiles()[0].any() and m.state.tilecfg.start_row == 0


@pytest.mark.parametrize("mnemonic,expected", [("tdpbuud", 0x01010109), ("tdpbf16ps", None)])
def test_tmul_zeroes_beyond_the_output_shape_and_reads_only_k_groups(mnemonic, expected):
    # C 4x8, A 4x8 (K=2), B 2x8: every tile byte 0x01.  Only two K groups contribute.
    m = machine(["ldtilecfg [rcx]", f"{mnemonic} tmm0, tmm1, tmm2"], shapes={0: (4, 8), 1: (4, 8), 2: (2, 8)})
    m.step()
    for t in range(3):
        set_tile(m, t, 0x01)
    m.step()
    tile = m.state.settled_tiles()[0]
    assert not tile[:4, 8:].any() and not tile[4:].any()
    if expected is not None:
        assert (tile[:4, :8].copy().view(np.uint32) == expected).all()


def test_tileloadd_start_row_keeps_rows_below_and_resets():
    buffer = bytes([0x33]) * 0x10000
    m = machine(["ldtilecfg [rcx]", "tileloadd tmm0, [rdi+rsi*1]"], shapes=FULL, regs={"rsi": 64}, buffer=buffer)
    m.step()
    set_tile(m, 0, 0xAA)
    m.state.tilecfg.start_row = 5  # as XRSTOR set it in the experiment
    m.step()
    tile = m.state.settled_tiles()[0]
    assert (tile[:5] == 0xAA).all() and (tile[5:] == 0x33).all() and m.state.tilecfg.start_row == 0


def test_ldtilecfg_with_start_row_then_tileloadd_leaves_zero_rows_below():
    m = run(["ldtilecfg [rcx]", "tileloadd tmm0, [rdi+rsi*1]"], cfg=tilecfg_bytes(FULL, start_row=5),
            regs={"rsi": 64}, buffer=bytes([0x33]) * 0x10000)
    assert not m.state.settled_tiles()[0, :5].any() and (m.state.settled_tiles()[0, 5:] == 0x33).all()


def test_tilestored_start_row_skips_rows_below_and_resets():
    m = machine(["ldtilecfg [rcx]", "tilestored [rdx+rsi*1], tmm0"], cfg=tilecfg_bytes(FULL, start_row=5),
                regs={"rsi": 64})
    m.step()
    set_tile(m, 0, 0x44)
    m.step()
    out = m.memory.read(DST_ADDR, 1024)
    assert out[: 5 * 64] == bytes(5 * 64) and out[5 * 64 :] == b"\x44" * (11 * 64)
    assert m.state.tilecfg.start_row == 0


@pytest.mark.parametrize("mnemonic,pattern,element", [
    ("tdpbuud", b"\x01", 64), ("tdpbssd", b"\x01", 64),
    ("tdpbf16ps", b"\x80\x3f", 0x42000000),  # bf16 1.0 everywhere: 16 k x 2 lanes = 32.0
])
def test_tmul_computes_all_rows_whatever_start_row(mnemonic, pattern, element):
    m = machine(["ldtilecfg [rcx]", f"{mnemonic} tmm0, tmm1, tmm2"], cfg=tilecfg_bytes(FULL, start_row=5))
    m.step()
    set_tile(m, 1, pattern * (1024 // len(pattern)))
    set_tile(m, 2, pattern * (1024 // len(pattern)))
    m.step()
    assert (m.state.settled_tiles()[0].copy().view(np.uint32) == element).all() and m.state.tilecfg.start_row == 0


def test_tileloadd_page_fault_keeps_loaded_rows_and_names_the_faulting_row():
    buffer = bytes([0x44]) * 0x10000
    m = run(["ldtilecfg [rcx]", "tileloadd tmm0, [rdi+rsi*1+0xfe00]"], shapes=FULL, regs={"rsi": 64}, buffer=buffer)
    assert m.fault.kind == "#PF" and m.state.tilecfg.start_row == 8
    assert (m.state.settled_tiles()[0, :8] == 0x44).all()


def test_tileloaddt1_loads_the_same_as_tileloadd():
    buffer = bytes((i * 7) & 0xFF for i in range(0x10000))
    m = run(["ldtilecfg [rcx]", "tileloadd tmm0, [rdi+rsi*1]", "tileloaddt1 tmm1, [rdi+rsi*1]"],
            shapes={0: (16, 40), 1: (16, 40)}, regs={"rsi": 100}, buffer=buffer)
    assert (m.state.settled_tiles()[0] == m.state.settled_tiles()[1]).all() and m.state.settled_tiles()[0].any()


# ---- integer dot products -----------------------------------------------------------------


def one_group(mnemonic: str, c: int, a4: list[int], b4: list[int]) -> int:
    """C 1x1, A 1x4, B 1x4: C += sum of the four byte products; returns C as int32."""
    c_bytes = (c % (1 << 32)).to_bytes(4, "little")
    a_bytes = bytes(x % 256 for x in a4)
    b_bytes = bytes(x % 256 for x in b4)
    m = tdp_program(mnemonic, c_bytes, a_bytes, b_bytes, {0: (1, 4), 1: (1, 4), 2: (1, 4)})
    assert m.fault is None
    return int(stored_dwords(m, 1, 1)[0, 0])


@pytest.mark.parametrize("mnemonic,c,a,b,silicon", [
    ("tdpbuud", 2**31 - 1, [1, 0, 0, 0], [1, 0, 0, 0], -2147483648),
    ("tdpbssd", -2**31, [-1, 0, 0, 0], [1, 0, 0, 0], 2147483647),
    ("tdpbuud", 0x7FFFFFF0, [255] * 4, [255] * 4, -2147223564),
    ("tdpbssd", 0, [-128] * 4, [-128] * 4, 65536),
    ("tdpbsud", 0, [-128] * 4, [255] * 4, -130560),
    ("tdpbusd", 0, [255] * 4, [-128] * 4, -130560),
])
def test_integer_forms_wrap_like_silicon(mnemonic, c, a, b, silicon):
    assert one_group(mnemonic, c, a, b) == silicon


def test_seed_article_worked_group():
    # A row starts [1, 2, 3, 4]; packed B columns 0 and 1 hold [-1, 2, -3, 4] and [-2, 1, 0, 3]
    a = bytes([1, 2, 3, 4])
    b = bytes(x % 256 for x in [-1, 2, -3, 4, -2, 1, 0, 3])
    m = tdp_program("tdpbusd", bytes(8), a, b, {0: (1, 8), 1: (1, 4), 2: (1, 8)})
    assert list(stored_dwords(m, 1, 2)[0]) == [10, 12]


@pytest.mark.parametrize("mnemonic,a_signed,b_signed", [
    ("tdpbssd", True, True), ("tdpbsud", True, False), ("tdpbusd", False, True), ("tdpbuud", False, False)])
def test_integer_forms_match_the_int64_product_reduced_mod_2_32(mnemonic, a_signed, b_signed):
    """The SDM's definition, with extreme bytes and accumulators near the int32 limits."""
    rng = np.random.default_rng(7)
    M, K, N = 16, 16, 16
    a = rng.choice(np.array([0, 1, 127, 128, 255, 0x80, 0x7F, 0xFF, 3], dtype=np.uint8), size=(M, 4 * K))
    b = rng.integers(0, 256, size=(K, 4 * N), dtype=np.uint8)
    c = rng.choice(np.array([2**31 - 1, -2**31, -1, 0, 12345], dtype=np.int64), size=(M, N)).astype(np.int32)
    m = tdp_program(mnemonic, c.tobytes(), a.tobytes(), b.tobytes(), FULL)
    A = (a.view(np.int8) if a_signed else a).astype(np.int64)
    B = (b.view(np.int8) if b_signed else b).astype(np.int64).reshape(K, N, 4).transpose(0, 2, 1).reshape(4 * K, N)
    expected = ((c.astype(np.int64) + A @ B + 2**31) % 2**32 - 2**31).astype(np.int32)
    assert (stored_dwords(m, M, N) == expected).all()


# ---- TDPBF16PS -------------------------------------------------------------------------------

bf = numerics.float_to_bf16_bits
f32 = numerics.float_to_fp32_bits
ONE = bf(1.0)
ZERO = 0


def bf16_element(c_bits: int, steps: list[tuple[tuple[int, int], tuple[int, int]]]) -> int:
    """One output element: steps[k] = ((a_even, b_even), (a_odd, b_odd)) as bf16 bits."""
    K = len(steps)
    a = bytearray()
    b = bytearray()
    for (ae, be), (ao, bo) in steps:
        a += ae.to_bytes(2, "little") + ao.to_bytes(2, "little")  # A[0].bf16[2k], [2k+1]
        b += be.to_bytes(2, "little") + bo.to_bytes(2, "little")  # B[k].bf16[0], [1]
        b += bytes(60)  # the rest of B's row k
    m = tdp_program("tdpbf16ps", c_bits.to_bytes(4, "little"), bytes(a), bytes(b), {0: (1, 4), 1: (1, 4 * K), 2: (K, 4)})
    assert m.fault is None, m.fault
    return int(stored_dwords(m, 1, 1, np.uint32)[0, 0])


def even(p_a: int, p_b: int = ONE):
    return ((p_a, p_b), (ZERO, ONE))


def pair(ea: int, oa: int):
    return ((ea, ONE), (oa, ONE))


P = lambda e: bf(2.0**e)  # noqa: E731  a power of two as bf16
# both lanes get the product -2^-64 * 2^-63 = -2^-127: tiny, so each lane flushes to -0
TINY_NEGATIVE_PAIR = ((bf(-(2.0**-64)), P(-63)), (bf(-(2.0**-64)), P(-63)))


BF16_SILICON = [
    # (case, C bits, steps, silicon result) -- facts 1.1 and 1.2
    ("T1", f32(1.0), [pair(P(-24), P(-24))], 0x3F800001),
    ("T2", f32(1.0), [pair(P(-24), P(-50))], 0x3F800000),
    ("T3", f32(1.0), [even(P(-24)), even(P(-24))], 0x3F800001),
    ("T4", f32(1.0), [even(P(-24))] * 4, 0x3F800002),
    ("T7", f32(2.0**30), [pair(P(0), bf(-(2.0**30)))], 0x00000000),
    ("T14", 0, [even(P(0)), even(P(-24)), even(P(-24))], 0x3F800000),
    ("lane order small first", 0, [even(P(-24)), even(P(-24)), even(P(0))], 0x3F800001),
    ("lane order big first", 0, [even(P(0)), even(P(-24)), even(P(-24)), even(P(-24))], 0x3F800000),
    ("lane order tie to even", 0, [even(P(-24))] * 3 + [even(P(0))], 0x3F800002),
    ("DAZ on A", 0, [even(0x0040, P(100))], 0x00000000),
    ("DAZ on B", 0, [((ZERO, ONE), (P(100), 0x0040))], 0x00000000),
    ("DAZ on C", 0x00400000, [even(P(-126))], 0x00800000),
    ("DAZ keeps the sign", 0x80000001, [TINY_NEGATIVE_PAIR], None),
    ("lane flushed before C", f32(2.0**-126), [even(bf(-(2.0**-64)), P(-63))], 0x00800000),
    ("tiny product kept in a normal sum", 0, [even(P(-126)), even(P(-65), P(-65))], 0x00880000),
    ("tiny lane flushed at k0", 0, [even(P(-65), P(-65)), even(P(-126))], 0x00800000),
    ("FTZ on the final add", f32(1.5 * 2.0**-126), [even(bf(-(2.0**-126)))], 0x00000000),
    ("FTZ keeps the sign", f32(-1.5 * 2.0**-126), [even(P(-126))], 0x80000000),
    ("lanes flush to -0", 0x80000000, [TINY_NEGATIVE_PAIR], None),
    ("tininess after rounding", 0, [even(P(-126)), even(bf(-(2.0**-75)), P(-76))], 0x00800000),
    ("flush on the unbounded grid", 0, [even(P(-126)), even(bf(-(2.0**-75)), P(-75))], 0x00000000),
    ("rounds to tiny, flushed", 0, [even(P(-126)), even(bf(-1.5 * 2.0**-75), P(-76))], 0x00000000),
    ("overflow", 0, [even(P(100), P(100))], 0x7F800000),
    ("inf - inf in T", 0, [((P(100), P(100)), (bf(-(2.0**100)), P(100)))], 0xFFC00000),
    ("lane inf absorbs", 0, [even(P(100), P(100)), even(bf(-(2.0**100)), P(100))], 0x7F800000),
    ("tie at overflow", 0x7F7FFFFF, [even(P(103))], 0x7F800000),
    ("inf + -inf", 0x7F800000, [even(0xFF80)], 0xFFC00000),
    ("inf x 0", 0, [even(0x7F80, 0)], 0xFFC00000),
    ("-inf + inf x 0", 0xFF800000, [even(0x7F80, 0)], 0xFFC00000),
    ("C sNaN quieted", 0x7FA00001, [even(ONE)], 0x7FE00001),
    ("C -sNaN quieted", 0xFFA00001, [even(ONE)], 0xFFE00001),
    ("C qNaN passes", 0x7FC00123, [even(ONE)], 0x7FC00123),
    ("A sNaN widened and quieted", 0, [even(0x7F81)], 0x7FC10000),
    ("A beats B", 0, [even(0x7F81, 0x7F82)], 0x7FC10000),
    ("even lane beats odd", 0, [pair(0x7F81, 0x7F83)], 0x7FC10000),
    ("even lane beats odd (2)", 0, [pair(0x7F83, 0x7F81)], 0x7FC30000),
    ("C beats T", 0x7FA00001, [even(0x7F83)], 0x7FE00001),
    ("later product NaN beats lane NaN", 0, [even(0x7F83), even(0x7F85)], 0x7FC50000),
    ("product NaN beats default NaN", 0, [even(0x7F80, 0), even(0x7F83)], 0x7FC30000),
    ("lane NaN beats new invalid", 0, [even(0x7F83), even(0x7F80, 0)], 0x7FC30000),
    ("C NaN beats invalid", 0x7FA00001, [even(0x7F80, 0)], 0x7FE00001),
    ("E default NaN beats O", 0, [((0x7F80, 0), (0x7F83, ONE))], 0xFFC00000),
    ("-0 + +0 products", 0x80000000, [even(0, 0)], 0x00000000),
    ("-0 + (-0) + (-0) lanes from zero products", 0x80000000, [pair(0x8000, 0x8000)], 0x00000000),
    ("-1 + 1", f32(-1.0), [even(ONE)], 0x00000000),
    ("MXCSR r1", f32(1.0), [even(bf(1 + 2.0**-7), P(-24))], 0x3F800001),
    ("MXCSR r2", f32(-1.0), [even(bf(-(1 + 2.0**-7)), P(-24))], 0xBF800001),
]


@pytest.mark.parametrize("case,c,steps,silicon", BF16_SILICON, ids=[c[0] for c in BF16_SILICON])
def test_tdpbf16ps_matches_silicon(case, c, steps, silicon):
    if silicon is None:
        silicon = 0x80000000  # both sign-keeping cases measured -0
    assert bf16_element(c, steps) == silicon


def test_tdpbf16ps_lanes_pair_the_low_and_high_halves_of_each_dword():
    """A[m].bf16[2k] pairs with B[k].bf16[2n] (low halves), [2k+1] with [2n+1]: a swap would change the sum."""
    # even products 1*1, odd products 2^-24 * 1: 1 + 2^-24 per lane structure rounds
    assert bf16_element(0, [((ONE, ONE), (P(-24), ONE))]) == 0x3F800000
    # pairing A's odd half with B's even half would give 1 * 2^-24 + 2^-24 * 1 = 2^-23
    assert bf16_element(0, [((ONE, P(-24)), (P(-24), ONE))]) == f32(2.0**-23)


def test_seed_article_bf16_block_is_exact_for_quarter_multiples():
    """Inputs that are multiples of 0.25 keep every sum exact: the result is the exact product."""
    rng = np.random.default_rng(3)
    M, K, N = 16, 16, 16  # K pairs
    a = rng.integers(-16, 16, size=(M, 2 * K)) / 4
    b = rng.integers(-16, 16, size=(2 * K, N)) / 4
    to_bits = np.vectorize(lambda x: bf(float(x)), otypes=[np.uint16])
    a_bits = to_bits(a)
    packed = np.zeros((K, 2 * N), dtype=np.uint16)  # packed_b[k][2n + i] = b[2k + i][n]
    for k in range(2 * K):
        for n in range(N):
            packed[k // 2, 2 * n + k % 2] = to_bits(b[k, n])
    m = tdp_program("tdpbf16ps", bytes(1024), a_bits.tobytes(), packed.tobytes(), FULL)
    got = stored_dwords(m, M, N, np.uint32).view(np.float32).astype(np.float64)
    assert (got == a @ b).all()


def test_tile_arrays_reinterpret_the_bits_as_the_element_type():
    m = run(["ldtilecfg [rcx]", "tileloadd tmm0, [rdi+rsi*1]"], shapes={0: (2, 8)}, regs={"rsi": 64},
            buffer=(bytes.fromhex("803f00c0" "0000c03f") + bytes(56)) * 2 + bytes(0x10000 - 128))
    assert m.state.tile_array(0, "bf16")[0].astype(float).tolist() == [1.0, -2.0, 0.0, 1.5]
    assert m.state.tile_array(0, "fp32")[0].tolist() == [numerics.fp32_bits_to_float(0xC0003F80), 1.5]
    assert m.state.tile_array(0, "uint8").shape == (2, 8)

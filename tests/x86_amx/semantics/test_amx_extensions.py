"""The AMX extensions' semantics (semantics/amx_extensions.py): SPEC ONLY, NO SILICON SEEN.

No host with AMX-COMPLEX, AMX-FP8, AMX-TF32, AMX-MOVRS or AMX-AVX512 has run these; this host is AMD without
AMX, so there is no silicon to compare with (the silicon backend probes AMX-COMPLEX where a host has AMX).
The expected values are of two kinds, and say which:

* worked examples computed by hand from the ISE's pseudocode (examples only);
* CONSISTENCY tests: an independent transcription of the ISE's loops in exact rational arithmetic
  (fractions.Fraction, rounded by this file's own RNE/FTZ rule) against the simulator, on FP-interesting
  operands.  Both read the same specification, so they catch slips in the vectorised code, not a misreading
  of the ISE.
"""

from __future__ import annotations

import random
from fractions import Fraction

import numpy as np
import pytest

from amxharness import BUF_SIZE, CFG_ADDR, machine, run, set_tile, stored_dwords, tilecfg_bytes

from isasim.x86_amx.numerics import fp8

FULL = {0: (16, 64), 1: (16, 64), 2: (16, 64)}
EXTENSION_LINES = {
    "AMX-COMPLEX": ["tcmmimfp16ps tmm0, tmm1, tmm2", "tcmmrlfp16ps tmm0, tmm1, tmm2"],
    "AMX-FP8": ["tdpbf8ps tmm0, tmm1, tmm2", "tdpbhf8ps tmm0, tmm1, tmm2", "tdphbf8ps tmm0, tmm1, tmm2",
                "tdphf8ps tmm0, tmm1, tmm2"],
    "AMX-TF32": ["tmmultf32ps tmm0, tmm1, tmm2"],
    "AMX-MOVRS": ["tileloaddrs tmm0, [rdi+rsi*1]", "tileloaddrst1 tmm0, [rdi+rsi*1]"],
    "AMX-AVX512": [f"{m} zmm{z}, tmm1, {row}" for m in ("tcvtrowd2ps", "tcvtrowps2bf16h", "tcvtrowps2bf16l",
                                                        "tcvtrowps2phh", "tcvtrowps2phl", "tilemovrow")
                   for z, row in ((1, "eax"), (17, "3"))],
}


# ---- the CPU models ------------------------------------------------------------------------------------


@pytest.mark.parametrize("feature", sorted(EXTENSION_LINES))
def test_each_extension_is_ud_on_the_models_without_it_and_runs_on_those_with_it(feature):
    for cpu in ("sapphire-rapids", "emerald-rapids", "granite-rapids", "granite-rapids-d", "diamond-rapids"):
        has = feature == "AMX-COMPLEX" and cpu == "granite-rapids-d" or cpu == "diamond-rapids"
        for line in EXTENSION_LINES[feature]:
            m = run(["ldtilecfg [rcx]", line], shapes=FULL, regs={"rsi": 64}, cpu=cpu)
            if has:
                assert m.fault is None, (cpu, line, m.fault)
            else:
                assert m.fault is not None and (m.fault.kind, m.fault.index) == ("#UD", 1), (cpu, line)
                assert feature in m.fault.rule


def test_extension_tmuls_make_every_tmul_check():
    m = run(["tdpbf8ps tmm0, tmm1, tmm2"], cpu="diamond-rapids")
    assert m.fault.kind == "#UD" and "not configured" in m.fault.rule
    m = run(["ldtilecfg [rcx]", "tcmmimfp16ps tmm0, tmm1, tmm2"], shapes={0: (16, 64), 1: (16, 32), 2: (16, 64)},
            cpu="granite-rapids-d")
    assert m.fault.kind == "#UD" and "B=tmm2.rows" in m.fault.rule
    m = run(["ldtilecfg [rcx]", "tmmultf32ps tmm0, tmm1, tmm3"], shapes=FULL, cpu="diamond-rapids")
    assert m.fault.kind == "#UD" and "tmm3 is not configured" in m.fault.rule


# ---- exact reference arithmetic (this file's own) ---------------------------------------------------------


def value32(bits: int) -> Fraction:
    exponent, fraction = bits >> 23 & 0xFF, bits & 0x7FFFFF
    magnitude = Fraction(fraction, 1 << 149) if exponent == 0 else Fraction((1 << 23) | fraction) * Fraction(2) ** (exponent - 150)
    return -magnitude if bits >> 31 else magnitude


def daz(bits: int) -> Fraction:
    return Fraction(0) if bits >> 23 & 0xFF == 0 else value32(bits)


def round32_ftz(x: Fraction, zero_sign: int = 0) -> int:
    """RNE to 24 significant bits, unbounded exponent; below 2**-126 after rounding: a zero of x's sign."""
    if x == 0:
        return zero_sign << 31
    sign = 1 if x < 0 else 0
    x = abs(x)
    e = x.numerator.bit_length() - x.denominator.bit_length()
    while Fraction(2) ** e > x:
        e -= 1
    while Fraction(2) ** (e + 1) <= x:
        e += 1
    scaled = x / Fraction(2) ** (e - 23)
    q = scaled.numerator // scaled.denominator
    rest = scaled - q
    if rest > Fraction(1, 2) or (rest == Fraction(1, 2) and q & 1):
        q += 1
    if q == 1 << 24:
        q, e = q >> 1, e + 1
    if e < -126:
        return sign << 31
    if e > 127:
        return sign << 31 | 0x7F800000
    return sign << 31 | (e + 127) << 23 | (q & 0x7FFFFF)


def fp16_value(h: int) -> Fraction:
    exponent, fraction = h >> 10 & 0x1F, h & 0x3FF
    magnitude = Fraction(fraction, 1 << 24) if exponent == 0 else Fraction(0x400 | fraction, 1 << 10) * Fraction(2) ** (exponent - 15)
    return -magnitude if h & 0x8000 else magnitude


def fp8_value(code: int, fmt: str) -> Fraction:
    e_bits, f_bits = (5, 2) if fmt == "bf8" else (4, 3)
    bias = (1 << (e_bits - 1)) - 1
    exponent, fraction = code >> f_bits & ((1 << e_bits) - 1), code & ((1 << f_bits) - 1)
    if exponent == 0:
        magnitude = Fraction(fraction) * Fraction(2) ** (1 - bias - f_bits)
    else:
        magnitude = Fraction((1 << f_bits) | fraction) * Fraction(2) ** (exponent - bias - f_bits)
    return -magnitude if code & 0x80 else magnitude


def finite_fp16(rng: random.Random) -> int:
    """An fp16 that is finite: denormals, zeros of both signs, values near 1 that make ties, large values."""
    kind = rng.random()
    if kind < 0.15:
        return rng.choice([0x0000, 0x8000, 0x0001, 0x83FF, 0x0400])
    if kind < 0.3:
        return rng.randrange(0x8000) & 0x03FF | rng.choice([0, 0x8000])  # denormals
    if kind < 0.6:
        return rng.choice([0x3C00, 0xBC00]) | rng.randrange(0x400)  # [1, 2): sums that tie at 24 bits
    return (rng.randrange(1, 31) << 10 | rng.randrange(0x400)) | rng.choice([0, 0x8000])


def finite_fp32(rng: random.Random) -> int:
    kind = rng.random()
    if kind < 0.1:
        return rng.choice([0x00000000, 0x80000000, 0x00000001, 0x807FFFFF, 0x00800000])  # zeros, denormals
    if kind < 0.5:
        return (rng.randrange(110, 145) << 23 | rng.randrange(1 << 23)) | rng.choice([0, 0x80000000])
    return (rng.randrange(1, 255) << 23 | rng.randrange(1 << 23)) | rng.choice([0, 0x80000000]) if kind > 0.9 \
        else (127 << 23 | rng.randrange(1 << 23)) | rng.choice([0, 0x80000000])


def tmul_machine(line: str, C: np.ndarray, A: np.ndarray, B: np.ndarray, shapes, cpu: str):
    m = machine(["ldtilecfg [rcx]", line, "tilestored [rdx+rsi*1], tmm0"], shapes=shapes, regs={"rsi": 64}, cpu=cpu)
    m.step()
    for t, data in ((0, C), (1, A), (2, B)):
        image = np.zeros((16, 64), dtype=np.uint8)
        raw = np.ascontiguousarray(data).view(np.uint8)
        image[: raw.shape[0], : raw.shape[1]] = raw
        set_tile(m, t, image.tobytes())
    m.run()
    assert m.fault is None, m.fault
    return m


# ---- AMX-COMPLEX -----------------------------------------------------------------------------------------


def test_complex_worked_example():
    # A = 1 + 2i, B = 3 + 4i (fp16 real in bits 15:0, imaginary in 31:16), C = 0.5:
    # (1 + 2i)(3 + 4i) = -5 + 10i, so IM gives 0.5 + 10 and RL gives 0.5 - 5.
    one, two, three, four = 0x3C00, 0x4000, 0x4200, 0x4400
    A = np.array([[one | two << 16]], dtype=np.uint32)
    B = np.array([[three | four << 16]], dtype=np.uint32)
    C = np.array([[0x3F000000]], dtype=np.uint32)
    shapes = {0: (1, 4), 1: (1, 4), 2: (1, 4)}
    for mnemonic, expected in (("tcmmimfp16ps", 10.5), ("tcmmrlfp16ps", -4.5)):
        m = tmul_machine(f"{mnemonic} tmm0, tmm1, tmm2", C, A, B, shapes, "granite-rapids-d")
        assert stored_dwords(m, 1, 1, np.float32)[0, 0] == expected


def test_complex_consistency_with_an_exact_reading_of_the_ise():
    """CONSISTENCY (not silicon): two lanes of FMA32 per output, then ADD32(C, ADD32(E, O))."""
    rng = random.Random(2029)
    M, K, N = 3, 5, 4
    a = [[(finite_fp16(rng), finite_fp16(rng)) for _ in range(K)] for _ in range(M)]
    b = [[(finite_fp16(rng), finite_fp16(rng)) for _ in range(N)] for _ in range(K)]
    c = [[finite_fp32(rng) for _ in range(N)] for _ in range(M)]
    A = np.array([[re | im << 16 for re, im in row] for row in a], dtype=np.uint32)
    B = np.array([[re | im << 16 for re, im in row] for row in b], dtype=np.uint32)
    C = np.array(c, dtype=np.uint32)
    shapes = {0: (M, 4 * N), 1: (M, 4 * K), 2: (K, 4 * N)}
    for mnemonic in ("tcmmimfp16ps", "tcmmrlfp16ps"):
        got = stored_dwords(tmul_machine(f"{mnemonic} tmm0, tmm1, tmm2", C, A, B, shapes, "diamond-rapids"),
                            M, N, np.uint32)
        for i in range(M):
            for j in range(N):
                even = odd = 0  # fp32 bits, +0.0
                for k in range(K):
                    (are, aim), (bre, bim) = a[i][k], b[k][j]
                    if mnemonic == "tcmmimfp16ps":
                        pe, po = fp16_value(are) * fp16_value(bim), fp16_value(aim) * fp16_value(bre)
                        se, so = (are ^ bim) >> 15, (aim ^ bre) >> 15
                    else:
                        pe, po = fp16_value(are) * fp16_value(bre), -fp16_value(aim) * fp16_value(bim)
                        se, so = (are ^ bre) >> 15, (aim ^ 0x8000 ^ bim) >> 15
                    even = round32_ftz(daz(even) + pe, int(even >> 31 and se and pe == 0))
                    odd = round32_ftz(daz(odd) + po, int(odd >> 31 and so and po == 0))
                t = round32_ftz(daz(even) + daz(odd), int(even >> 31 and odd >> 31))
                expected = round32_ftz(daz(c[i][j]) + daz(t), int(c[i][j] >> 31 and t >> 31))
                assert int(got[i, j]) == expected, (mnemonic, i, j, hex(int(got[i, j])), hex(expected))


def test_complex_sequential_lanes_option_accumulates_every_product_into_c():
    """CONSISTENCY (not silicon) of COMPLEX_LANES = "sequential": C := FMA32(C, a, b) for each product in turn."""
    import isasim.x86_amx.semantics.amx_extensions as module

    rng = random.Random(7)
    M, K, N = 2, 3, 2
    a = [[(finite_fp16(rng), finite_fp16(rng)) for _ in range(K)] for _ in range(M)]
    b = [[(finite_fp16(rng), finite_fp16(rng)) for _ in range(N)] for _ in range(K)]
    c = [[finite_fp32(rng) for _ in range(N)] for _ in range(M)]
    A = np.array([[re | im << 16 for re, im in row] for row in a], dtype=np.uint32)
    B = np.array([[re | im << 16 for re, im in row] for row in b], dtype=np.uint32)
    shapes = {0: (M, 4 * N), 1: (M, 4 * K), 2: (K, 4 * N)}
    saved, module.COMPLEX_LANES = module.COMPLEX_LANES, "sequential"
    try:
        got = stored_dwords(tmul_machine("tcmmrlfp16ps tmm0, tmm1, tmm2", np.array(c, dtype=np.uint32), A, B, shapes,
                                         "diamond-rapids"), M, N, np.uint32)
    finally:
        module.COMPLEX_LANES = saved
    for i in range(M):
        for j in range(N):
            acc = c[i][j]
            for k in range(K):
                (are, aim), (bre, bim) = a[i][k], b[k][j]
                for p, sign in ((fp16_value(are) * fp16_value(bre), (are ^ bre) >> 15),
                                (-fp16_value(aim) * fp16_value(bim), (aim ^ 0x8000 ^ bim) >> 15)):
                    acc = round32_ftz(daz(acc) + p, int(acc >> 31 and sign and p == 0))
            assert int(got[i, j]) == acc, (i, j)


def test_complex_nan_and_negated_nan():
    # a.im is a NaN: IM's odd lane returns it quieted; RL negates a.im first, so its sign flips.
    A = np.array([[0x3C00 | 0x7E01 << 16]], dtype=np.uint32)
    B = np.array([[0x3C00 | 0x3C00 << 16]], dtype=np.uint32)
    C = np.zeros((1, 1), dtype=np.uint32)
    shapes = {0: (1, 4), 1: (1, 4), 2: (1, 4)}
    im = stored_dwords(tmul_machine("tcmmimfp16ps tmm0, tmm1, tmm2", C, A, B, shapes, "diamond-rapids"), 1, 1, np.uint32)
    rl = stored_dwords(tmul_machine("tcmmrlfp16ps tmm0, tmm1, tmm2", C, A, B, shapes, "diamond-rapids"), 1, 1, np.uint32)
    assert hex(int(im[0, 0])) == "0x7fc02000" and hex(int(rl[0, 0])) == "0xffc02000"


# ---- AMX-FP8 ---------------------------------------------------------------------------------------------


def test_fp8_decoding_worked_examples():
    bf8 = fp8.fp8_to_fp32(np.arange(256, dtype=np.uint8), "bf8")
    hf8 = fp8.fp8_to_fp32(np.arange(256, dtype=np.uint8), "hf8")
    f = lambda bits: float(np.array(bits, dtype=np.uint32).view(np.float32))  # noqa: E731
    assert f(bf8[0x3C]) == 1.0 and f(bf8[0x7B]) == 57344.0 and f(bf8[0x01]) == 2.0 ** -16 and f(bf8[0x83]) == -3 * 2.0 ** -16
    assert bf8[0x7C] == 0x7F800000 and bf8[0xFC] == 0xFF800000 and np.isnan(f(bf8[0x7D]))
    assert f(hf8[0x38]) == 1.0 and f(hf8[0x7E]) == 448.0 and f(hf8[0x01]) == 2.0 ** -9 and f(hf8[0x78]) == 256.0
    assert np.isnan(f(hf8[0x7F])) and np.isnan(f(hf8[0xFF])) and f(hf8[0x7F - 8]) == 240.0
    for code in range(256):  # every finite code decodes exactly, as this file's own reading has it
        for fmt, table in (("bf8", bf8), ("hf8", hf8)):
            bits = int(table[code])
            if bits >> 23 & 0xFF != 0xFF:
                assert value32(bits) == fp8_value(code, fmt), (fmt, hex(code))


def fp8_codes(rng: random.Random, fmt: str, n: int) -> list[int]:
    out = []
    for _ in range(n):
        kind = rng.random()
        if kind < 0.1:
            out.append(rng.choice([0x00, 0x80, 0x01, 0x81]))  # zeros and the smallest denormals
        elif kind < 0.25:
            out.append(rng.randrange(1, 8 if fmt == "hf8" else 4) | rng.choice([0, 0x80]))  # denormals
        else:
            top = 0x7B if fmt == "bf8" else 0x7E
            out.append(rng.randrange(top + 1) | rng.choice([0, 0x80]))
    return out


@pytest.mark.parametrize("mnemonic,a_fmt,b_fmt", [("tdpbf8ps", "bf8", "bf8"), ("tdpbhf8ps", "bf8", "hf8"),
                                                  ("tdphbf8ps", "hf8", "bf8"), ("tdphf8ps", "hf8", "hf8")])
def test_fp8_consistency_with_an_exact_reading_of_the_ise(mnemonic, a_fmt, b_fmt):
    """CONSISTENCY (not silicon): temp := ROUND32(temp + four exact products) per k, then ADD32(C, temp)."""
    rng = random.Random(hash(mnemonic) & 0xFFFF)
    M, K, N = 3, 4, 3
    A = np.array([fp8_codes(rng, a_fmt, 4 * K) for _ in range(M)], dtype=np.uint8)
    B = np.array([fp8_codes(rng, b_fmt, 4 * N) for _ in range(K)], dtype=np.uint8)
    C = np.array([[finite_fp32(rng) for _ in range(N)] for _ in range(M)], dtype=np.uint32)
    shapes = {0: (M, 4 * N), 1: (M, 4 * K), 2: (K, 4 * N)}
    got = stored_dwords(tmul_machine(f"{mnemonic} tmm0, tmm1, tmm2", C, A, B, shapes, "diamond-rapids"), M, N, np.uint32)
    for i in range(M):
        for j in range(N):
            temp = 0
            for k in range(K):
                group = [(int(A[i, 4 * k + x]), int(B[k, 4 * j + x])) for x in range(4)]
                total = daz(temp) + sum(fp8_value(p, a_fmt) * fp8_value(q, b_fmt) for p, q in group)
                minus_zero = temp == 0x80000000 and all((p ^ q) & 0x80 and fp8_value(p, a_fmt) * fp8_value(q, b_fmt) == 0
                                                        for p, q in group)
                temp = round32_ftz(total, int(minus_zero))
            c = int(C[i, j])
            expected = round32_ftz(daz(c) + daz(temp), int(c >> 31 and temp >> 31))
            assert int(got[i, j]) == expected, (mnemonic, i, j, hex(int(got[i, j])), hex(expected))


def test_fp8_worked_examples_one_rounding_per_group_and_specials():
    # One group: 1 + 2**-24 + 2**-24 + 0 with temp = 0 rounds once to 1 + 2**-23 (sequential rounding, tie
    # to even at each step, would give 1.0).  BF8: 1.0 = 0x3C, 2**-12 = 0x0C (exponent 3 - 15 = -12).
    one, tiny = 0x3C, 0x0C
    A = np.array([[one, tiny, tiny, 0]], dtype=np.uint8)
    B = np.array([[one, tiny, tiny, 0]], dtype=np.uint8)
    C = np.zeros((1, 1), dtype=np.uint32)
    shapes = {0: (1, 4), 1: (1, 4), 2: (1, 4)}
    got = stored_dwords(tmul_machine("tdpbf8ps tmm0, tmm1, tmm2", C, A, B, shapes, "diamond-rapids"), 1, 1, np.uint32)
    assert int(got[0, 0]) == 0x3F800001
    # The named option's other value rounds after each product: 1 + 2**-24 ties to even at each step (1.0).
    import isasim.x86_amx.numerics.fp8 as fp8_module
    saved, fp8_module.FP8_GROUP_ROUNDING = fp8_module.FP8_GROUP_ROUNDING, "sequential"
    try:
        got = stored_dwords(tmul_machine("tdpbf8ps tmm0, tmm1, tmm2", C, A, B, shapes, "diamond-rapids"), 1, 1, np.uint32)
    finally:
        fp8_module.FP8_GROUP_ROUNDING = saved
    assert int(got[0, 0]) == 0x3F800000
    # BF8 inf * 0 is the default NaN; +inf and -inf products too; a NaN code comes out quiet.
    for a, b, want in (([0x7C, 0, 0, 0], [0, 0, 0, 0], 0xFFC00000), ([0x7C, 0xFC, 0, 0], [one, one, 0, 0], 0xFFC00000),
                       ([0x7C, 0, 0, 0], [0xBC, 0, 0, 0], 0xFF800000), ([0, 0x7D, 0, 0], [0, one, 0, 0], 0x7FE00000)):
        got = stored_dwords(tmul_machine("tdpbf8ps tmm0, tmm1, tmm2", C, np.array([a], dtype=np.uint8),
                                         np.array([b], dtype=np.uint8), shapes, "diamond-rapids"), 1, 1, np.uint32)
        assert int(got[0, 0]) == want, (a, b, hex(int(got[0, 0])))


# ---- AMX-TF32 --------------------------------------------------------------------------------------------


def test_tf32_consistency_with_an_exact_reading_of_the_ise():
    """CONSISTENCY (not silicon): one FMA32 lane of TF32 inputs (13 low fraction bits cleared), then ADD32(T, C)."""
    rng = random.Random(32)
    M, K, N = 2, 6, 3
    A = np.array([[finite_fp32(rng) for _ in range(K)] for _ in range(M)], dtype=np.uint32)
    B = np.array([[finite_fp32(rng) for _ in range(N)] for _ in range(K)], dtype=np.uint32)
    C = np.array([[finite_fp32(rng) for _ in range(N)] for _ in range(M)], dtype=np.uint32)
    shapes = {0: (M, 4 * N), 1: (M, 4 * K), 2: (K, 4 * N)}
    got = stored_dwords(tmul_machine("tmmultf32ps tmm0, tmm1, tmm2", C, A, B, shapes, "diamond-rapids"), M, N, np.uint32)
    for i in range(M):
        for j in range(N):
            t = 0
            for k in range(K):
                a, b = int(A[i, k]) & 0xFFFFE000, int(B[k, j]) & 0xFFFFE000
                product = daz(a) * daz(b)
                t = round32_ftz(daz(t) + product, int(t >> 31 and (a ^ b) >> 31 and product == 0))
            c = int(C[i, j])
            assert int(got[i, j]) == round32_ftz(daz(t) + daz(c), int(t >> 31 and c >> 31)), (i, j)


def test_tf32_worked_example_drops_the_low_fraction_bits_and_quiets_snan():
    A = np.array([[0x3F800001 | 0x1FFF, 0x7F800001]], dtype=np.uint32)  # 1 + 2**-23 + ... -> 1.0; a signalling NaN
    B = np.array([[0x40000000], [0x3F800000]], dtype=np.uint32)
    C = np.array([[0x3F800000]], dtype=np.uint32)
    shapes = {0: (1, 4), 1: (1, 4), 2: (1, 4)}
    got = stored_dwords(tmul_machine("tmmultf32ps tmm0, tmm1, tmm2", C, A[:, :1], B[:1], shapes, "diamond-rapids"), 1, 1, np.float32)
    assert got[0, 0] == 3.0  # 1.0 * 2 + 1
    shapes = {0: (1, 4), 1: (1, 8), 2: (2, 4)}
    got = stored_dwords(tmul_machine("tmmultf32ps tmm0, tmm1, tmm2", C, A, B, shapes, "diamond-rapids"), 1, 1, np.uint32)
    assert int(got[0, 0]) == 0x7FC00000  # quiet(sNaN 7F800001) with bits 12:0 cleared


# ---- AMX-MOVRS -------------------------------------------------------------------------------------------


def test_movrs_loads_as_tileloadd():
    buffer = bytes(range(256)) * (BUF_SIZE // 256)
    tiles = []
    for mnemonic in ("tileloadd", "tileloaddrs", "tileloaddrst1"):
        m = run(["ldtilecfg [rcx]", f"{mnemonic} tmm3, [rdi+rsi*2+0x10]"], shapes={3: (5, 24)}, regs={"rsi": 40},
                buffer=buffer, cpu="diamond-rapids")
        assert m.fault is None
        tiles.append(m.state.settled_tiles()[3].copy())
    assert (tiles[0] == tiles[1]).all() and (tiles[0] == tiles[2]).all() and tiles[0][4, :24].any()


# ---- AMX-AVX512 ------------------------------------------------------------------------------------------


def row_machine(line: str, tile: np.ndarray, shapes, regs=None):
    m = machine(["ldtilecfg [rcx]", line], shapes=shapes, regs=regs, cpu="diamond-rapids")
    m.step()
    set_tile(m, 1, tile.tobytes())
    m.run()
    return m


def zmm_dwords(m, n: int) -> np.ndarray:
    return np.frombuffer(m.state.read_vector(n).to_bytes(64, "little"), dtype=np.uint32)


def test_tcvtrow_conversions_against_numpys_ieee_conversions():
    rng = np.random.default_rng(5)
    tile = rng.integers(0, 1 << 32, (16, 16), dtype=np.uint64).astype(np.uint32)
    tile[3, :4] = [0x7FFFFFFF, 0x80000000, 0x01000001, 0xFEFFFFFF]  # int32s that round
    shapes = {1: (16, 64)}
    m = row_machine("tcvtrowd2ps zmm5, tmm1, 3", tile, shapes)
    assert (zmm_dwords(m, 5) == tile[3].view(np.int32).astype(np.float32).view(np.uint32)).all()
    floats = (rng.standard_normal((16, 16)) * 1000).astype(np.float32)
    floats[7, :4] = [65520.0, 2.0 ** -25, -1.5 * 2.0 ** -24, -1e-40]  # fp16: overflow, ties at denormals; fp32 denormal
    with np.errstate(over="ignore"):
        half = floats[7].astype(np.float16).view(np.uint16).astype(np.uint32)
    m = row_machine("tcvtrowps2phl zmm6, tmm1, eax", floats.view(np.uint32), shapes, regs={"rax": 7})
    assert (zmm_dwords(m, 6) == half).all()
    m = row_machine("tcvtrowps2phh zmm6, tmm1, 7", floats.view(np.uint32), shapes)
    assert (zmm_dwords(m, 6) == half << 16).all()
    bits = floats[7].view(np.uint32).astype(np.uint64)
    bf16 = ((bits + 0x7FFF + (bits >> 16 & 1)) >> 16).astype(np.uint32)  # RNE of normal fp32 to bf16
    bf16[3] = 0x8000  # a denormal input reads as zero (the SDM's convert_fp32_to_bfloat16)
    m = row_machine("tcvtrowps2bf16l zmm6, tmm1, 7", floats.view(np.uint32), shapes)
    assert (zmm_dwords(m, 6) == bf16).all()
    m = row_machine("tcvtrowps2bf16h zmm31, tmm1, edx", floats.view(np.uint32), shapes, regs={"rdx": 7})
    assert (zmm_dwords(m, 31) == bf16 << 16).all()


def test_tilemovrow_row_chunk_and_colsb():
    tile = np.arange(1024, dtype=np.uint32).astype(np.uint8).reshape(16, 64)
    m = row_machine("tilemovrow zmm2, tmm1, ebx", tile, {1: (8, 40)}, regs={"rbx": 0x5})
    out = m.state.read_vector(2).to_bytes(64, "little")
    assert out[:40] == tile[5, :40].tobytes() and out[40:] == bytes(24)
    m = row_machine("tilemovrow zmm2, tmm1, ebx", tile, {1: (8, 64)}, regs={"rbx": 0x10005})  # chunk 1: past colsb
    assert m.state.read_vector(2) == 0 and m.fault is None
    m = row_machine("tilemovrow zmm2, tmm1, 0x48", tile, {1: (16, 64)})  # imm8: chunk 1, row 8
    assert m.state.read_vector(2) == 0
    m = row_machine("tilemovrow zmm2, tmm1, 8", tile, {1: (8, 64)})  # row 8 of 8 rows
    assert m.fault.kind == "#UD" and "row 8 is not below" in m.fault.rule


# ---- LDTILECFG / STTILECFG [rip+disp32] --------------------------------------------------------------------


def test_ldtilecfg_rip_relative_reads_the_configuration_after_the_instruction():
    # The code is at 0x400000; ldtilecfg [rip+disp] is 9 bytes, so it reads CFG_ADDR when disp = CFG_ADDR - 0x400009.
    disp = CFG_ADDR - (0x400000 + 9)
    m = run([f"ldtilecfg [rip{disp:+#x}]", "sttilecfg [rdx]"], shapes={0: (3, 12), 5: (16, 64)})
    assert m.fault is None and m.state.tilecfg.rows[0] == 3 and m.state.tilecfg.colsb[5] == 64
    assert m.memory.read(0x40000, 64) == tilecfg_bytes({0: (3, 12), 5: (16, 64)})


# ---- AMX-COMPLEX on silicon, where a host has it ------------------------------------------------------------


def _complex_here() -> str | None:
    """None when this host executes AMX-COMPLEX (the backend's probe), else why the silicon test skips."""
    from isasim.x86_amx.oracle import host_amx, host_cpu, platform_problem

    why = platform_problem() or host_cpu().why_no_amx()
    if why is not None:
        return f"no AMX programs run on this host's silicon: {why}"
    if "AMX-COMPLEX" not in host_amx().features:
        return f"this host does not execute AMX-COMPLEX ({host_amx().describe()})"
    return None


def test_complex_against_silicon_where_a_host_has_it():
    """Random fp16 pairs (NaNs, infinities, denormals, signed zeros included) through TCMMIMFP16PS and
    TCMMRLFP16PS on silicon and on the simulator (the granite-rapids-d model): the only test here that is
    not spec-only; it skips on every host without AMX-COMPLEX."""
    why = _complex_here()
    if why is not None:
        pytest.skip(why)
    from isasim.core.diff import diff
    from isasim.core.machine import Machine
    from isasim.core.trace import Init

    rng = np.random.default_rng(29)
    cfg, data = 0x20000000, 0x20001000
    specials = np.array([0x7C00, 0xFC00, 0x7E00, 0x7C01, 0x0001, 0x83FF, 0x8000, 0x0000], dtype=np.uint16)
    for mnemonic in ("tcmmimfp16ps", "tcmmrlfp16ps"):
        halves = rng.integers(0, 1 << 16, 3 * 512, dtype=np.uint64).astype(np.uint16)
        special = rng.random(halves.size) < 0.1
        halves[special] = rng.choice(specials, int(special.sum()))
        memory = [(cfg, tilecfg_bytes(FULL).ljust(0x1000, b"\0"), False), (data, halves.tobytes(), True)]
        text = "\n".join(["ldtilecfg [rcx]", "tileloadd tmm0, [rdi+rsi*1]", "tileloadd tmm1, [rdi+rsi*1+0x400]",
                          "tileloadd tmm2, [rdi+rsi*1+0x800]", f"{mnemonic} tmm0, tmm1, tmm2",
                          "tilestored [rdi+rsi*1], tmm0", "ret"])
        config = {"cpu": "granite-rapids-d"}
        program = Machine("x86_amx", config).assemble(text)
        report = diff("x86_amx", config, program, Init({"rcx": cfg, "rdi": data, "rsi": 64}, memory),
                      a="sim", b="silicon")
        assert report.identical, report


def test_fp8_vectorised_path_equals_the_scalar_transcription():
    """numerics/fp8.py's float64 lanes (used where every partial sum is provably exact) against its exact
    Python-integer transcription, on every code (NaNs, infinities, denormals, extremes) and on narrow sets."""
    rng = np.random.default_rng(29)
    pools = [np.arange(256, dtype=np.uint8), np.array([0, 0x80, 1, 0x81, 0x38, 0xB8, 0x3C, 0xBC, 0x7B, 0xFB, 0x7E],
                                                      dtype=np.uint8)]
    for trial in range(40):
        M, K, N = (int(x) for x in rng.integers(1, 17, 3))
        pool = pools[trial % 2]
        A, B = rng.choice(pool, (16, 64)), rng.choice(pool, (16, 64))
        for a_fmt, b_fmt in (("bf8", "bf8"), ("bf8", "hf8"), ("hf8", "bf8"), ("hf8", "hf8")):
            fast = fp8.fp8_dot_products(A, B, M, K, N, a_fmt, b_fmt)
            assert (fast == fp8.fp8_dot_products_exact(A, B, M, K, N, a_fmt, b_fmt)).all(), (trial, a_fmt, b_fmt)

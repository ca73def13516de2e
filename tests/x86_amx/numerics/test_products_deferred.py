"""A plain run defers the TMULs' additions into C (X86AmxState.accumulate); stepping makes them at once.

The two must be indistinguishable.  Each program here runs twice, once with ``run()``
(additions wait until the accumulator is read, at most DwordDotProducts.CAPACITY at a time) and once
instruction by instruction with ``step()`` (every addition made and recorded as it
happens), and the final tiles, TILECFG and memory must be identical.  The sequences mix
the four signednesses and two K into one accumulator, reload and store tiles between
the products, zero and reconfigure, use an accumulator as a source, stop a run part way
and step on, and run long enough to wrap the 32-bit accumulators.  The first test also
checks the plain chain against an int64 matrix product computed here from the bytes.

Run against step compares isasim with itself: the outside evidence for the products is silicon (the
golden traces, the measured values of semantics/test_amx.py, fuzz/test_fuzz_vs_silicon.py) and the
int64 products computed here and in kernels/test_kernels.py.
"""

from __future__ import annotations

import random

import numpy as np
import pytest

from isasim.core.errors import StepLimitExceeded
from isasim.core.machine import Machine
from isasim.x86_amx import ISA
from isasim.x86_amx.kernels import tile_config
from isasim.x86_amx.numerics.products import DwordDotProducts

pytestmark = pytest.mark.consistency

CFG, DATA, OUT = 0x1000, 0x10000, 0x80000
FORMS = {"tdpbssd": (True, True), "tdpbsud": (True, False), "tdpbusd": (False, True), "tdpbuud": (False, False)}


def machine(lines: list[str], shapes: dict[int, tuple[int, int]], data: bytes, cpu: str | None = None) -> Machine:
    m = Machine("x86_amx", {"cpu": cpu} if cpu else None)
    program = ISA.assemble("\n".join(lines) + "\n")
    m.load(program, regs={"rcx": CFG, "rdi": DATA, "rsi": 64, "rdx": OUT},
           memory=[(CFG, tile_config(shapes), False), (DATA, data, False), (OUT, bytes(1 << 16), True)])
    return m


def final_state(m: Machine) -> tuple:
    return (m.state.settled_tiles().tobytes(), m.state.tilecfg.to_bytes(), m.memory.read(OUT, 1 << 16), m.fault)


def run_both_ways(lines, shapes, data, *, stop_after: int | None = None, cpu: str | None = None):
    ran = machine(lines, shapes, data, cpu)
    if stop_after is None:
        ran.run(100_000)
    else:  # a run stopped part way (with additions still waiting), then stepped to the end
        with pytest.raises(StepLimitExceeded):
            ran.run(stop_after)
        while not ran.finished:
            ran.step()
    stepped = machine(lines, shapes, data, cpu)
    while not stepped.finished:
        stepped.step()
    assert final_state(ran) == final_state(stepped)
    return ran


FULL_TILES = {t: (16, 64) for t in range(8)}


def random_tile_program(rng: random.Random, tmuls: list[str], length: int, *, zero_and_reconfigure: bool = False):
    """All eight tiles 16 x 64 and loaded from DATA; then ``length`` random TMULs (any three distinct
    tiles, so accumulators become sources), reloads, stores and perhaps TILEZEROs and LDTILECFGs;
    then every tile stored to OUT + 0xC000."""
    lines = ["ldtilecfg [rcx]"] + [f"tileloadd tmm{t}, [rdi+rsi*1+{t * 1024}]" for t in range(8)]
    for _ in range(length):
        t, roll = rng.randrange(8), rng.random()
        if roll < 0.6:
            c, a, b = rng.sample(range(8), 3)
            lines.append(f"{rng.choice(tmuls)} tmm{c}, tmm{a}, tmm{b}")
        elif roll < 0.75:
            lines.append(f"tileloadd tmm{t}, [rdi+rsi*1+{rng.randrange(0, 30) * 1024}]")
        elif roll < 0.87 or not zero_and_reconfigure:
            lines.append(f"tilestored [rdx+rsi*1+{rng.randrange(0, 40) * 1024}], tmm{t}")
        elif roll < 0.95:
            lines.append(f"tilezero tmm{t}")
        else:
            lines.append("ldtilecfg [rcx]")  # zeroes every tile, waiting additions included
    return lines + [f"tilestored [rdx+rsi*1+{0xC000 + t * 1024}], tmm{t}" for t in range(8)]


def test_a_long_mixed_chain_wraps_and_matches_int64():
    """More products than a batch holds, all four signednesses and two K into one accumulator that wraps."""
    rng = np.random.default_rng(7)
    M, N, K1, K2 = 12, 10, 16, 7
    shapes = {0: (M, 4 * N), 2: (M, 4 * K1), 3: (M, 4 * K2), 4: (K1, 4 * N), 5: (K2, 4 * N)}
    data = bytearray(rng.integers(0, 256, 1 << 14, dtype=np.uint8).tobytes())
    c_init = np.full((M, N), 0xFFFFFF00, dtype=np.uint32)  # just below 2^32 and just above 0:
    c_init[::2] = 0x80  # the sums wrap one way or the other
    data[0x3000:0x3000 + c_init.size * 4] = c_init.tobytes()
    loads = ["ldtilecfg [rcx]", "mov rbx, 40", "tileloadd tmm0, [rdi+rbx*1+0x3000]",
             "tileloadd tmm2, [rdi+rsi*1]", "tileloadd tmm3, [rdi+rsi*1+0x400]",
             "tileloadd tmm4, [rdi+rsi*1+0x800]", "tileloadd tmm5, [rdi+rsi*1+0xc00]"]
    pick = random.Random(3)
    order = [pick.choice(list(FORMS)) + (" tmm0, tmm2, tmm4" if i % 3 else " tmm0, tmm3, tmm5")
             for i in range(3 * DwordDotProducts.CAPACITY + 5)]
    m = run_both_ways(loads + order + ["tilestored [rdx+rbx*1], tmm0"], shapes, bytes(data))

    def tile_bytes(offset: int, rows: int, colsb: int, signed: bool) -> np.ndarray:
        raw = np.frombuffer(bytes(data), np.uint8)[offset:offset + 64 * rows].reshape(rows, 64)[:, :colsb]
        return raw.view(np.int8).astype(np.int64) if signed else raw.astype(np.int64)

    expected = c_init.astype(np.int64)
    expected[1::2] -= 1 << 32  # read as signed: just below 0
    for line in order:
        a_signed, b_signed = FORMS[line.split()[0]]
        (a_off, b_off, K) = (0, 0x800, K1) if line.endswith("tmm4") else (0x400, 0xC00, K2)
        A = tile_bytes(a_off, M, 4 * K, a_signed)  # A[m][4k+i]
        B = tile_bytes(b_off, K, 4 * N, b_signed).reshape(K, N, 4)  # B[k][n][i]
        expected += np.einsum("mki,kni->mn", A.reshape(M, K, 4), B)
    stored = np.frombuffer(m.memory.read(OUT, 40 * M), np.uint8).reshape(M, 40).copy().view(np.uint32)
    assert (stored == (expected % (1 << 32)).astype(np.uint32)).all()
    assert ((expected >= 0) != (c_init.view(np.int32) >= 0)).any()  # some sums do cross zero (wrap)


@pytest.mark.parametrize("seed", range(12))
def test_random_tile_programs_run_as_they_step(seed):
    """Any three distinct full tiles: accumulators become sources, tiles are reloaded, stored,
    zeroed and reconfigured between products; sometimes the run stops part way and steps on."""
    rng = random.Random(seed)
    data = np.random.default_rng(seed).integers(0, 256, 1 << 15, dtype=np.uint8).tobytes()
    lines = random_tile_program(rng, list(FORMS), rng.randrange(20, 160), zero_and_reconfigure=True)
    stop_after = rng.randrange(1, len(lines)) if seed % 2 else None
    run_both_ways(lines, FULL_TILES, data, stop_after=stop_after)


def test_a_run_that_faults_leaves_the_additions_before_the_fault():
    """A #UD part way: every product before it is in the accumulator, none after."""
    shapes = {0: (16, 64), 1: (16, 64), 2: (16, 64), 3: (8, 64)}
    data = np.random.default_rng(1).integers(0, 256, 1 << 13, dtype=np.uint8).tobytes()
    lines = ["ldtilecfg [rcx]", "tileloadd tmm1, [rdi+rsi*1]", "tileloadd tmm2, [rdi+rsi*1+1024]",
             "tdpbusd tmm0, tmm1, tmm2", "tdpbssd tmm0, tmm1, tmm2",
             "tdpbusd tmm0, tmm3, tmm2",  # A has 8 rows, C 16: #UD
             "tdpbuud tmm0, tmm1, tmm2"]
    m = run_both_ways(lines, shapes, data)
    assert m.fault is not None and m.fault.kind == "#UD" and m.fault.index == 5


def half_floats(rng: np.random.Generator, count: int, exponent_bits: int) -> bytes:
    """16-bit floats (bf16 or fp16 layout) with zeros, denormals, infinities and NaNs among ordinary values."""
    values = rng.integers(0, 1 << 16, count, dtype=np.uint32)
    mantissa_bits = 15 - exponent_bits
    special = rng.integers(0, 6, count)
    top = (1 << exponent_bits) - 1
    values = np.where(special == 0, values & 0x8000, values)  # +-0
    values = np.where(special == 1, values & (0x8000 | ((1 << mantissa_bits) - 1)), values)  # denormal
    values = np.where(special == 2, (values & 0x8000) | (top << mantissa_bits), values)  # +-inf
    return values.astype(np.uint16).tobytes()


@pytest.mark.parametrize("seed", range(8))
def test_float_pair_products_run_as_they_step(seed):
    """TDPBF16PS and TDPFP16PS (Granite Rapids) into shared accumulators, special values included:
    each product's lanes are computed together in a run, yet C is updated in instruction order."""
    rng = random.Random(seed)
    values = np.random.default_rng(seed)
    data = b"".join(half_floats(values, 512, 8 if t % 2 else 5) for t in range(32))  # bf16 and fp16 tiles
    lines = random_tile_program(rng, ["tdpbf16ps", "tdpfp16ps"], rng.randrange(20, 90))
    run_both_ways(lines, FULL_TILES, data, stop_after=rng.randrange(1, len(lines)) if seed % 2 else None,
                  cpu="granite-rapids")


def test_many_bf16_products_into_one_accumulator_keep_their_order():
    """Order-sensitive rounding: C grows large, and each product then rounds against it."""
    values = np.random.default_rng(5)
    big = (np.float32(3.0e7) * (1 + values.random(512).astype(np.float32))).view(np.uint32) >> 16
    small = (values.standard_normal(512).astype(np.float32)).view(np.uint32) >> 16
    data = big.astype(np.uint16).tobytes() + small.astype(np.uint16).tobytes() + np.ones(512, np.uint16).tobytes()
    shapes = {0: (16, 64), 1: (16, 64), 2: (16, 64), 3: (16, 64)}
    lines = ["ldtilecfg [rcx]", "tileloadd tmm1, [rdi+rsi*1]", "tileloadd tmm2, [rdi+rsi*1+1024]",
             "tileloadd tmm3, [rdi+rsi*1+2048]"]
    lines += ["tdpbf16ps tmm0, tmm1, tmm3", "tdpbf16ps tmm0, tmm2, tmm3"] * 40 + ["tilestored [rdx+rsi*1], tmm0"]
    run_both_ways(lines, shapes, data)

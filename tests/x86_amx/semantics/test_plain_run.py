"""The plain-run paths (semantics.plain_run.PLAIN_RUN_PATHS, the grouped settle of
X86AmxState._settle) against what they stand in for.

A plain ``run()`` takes these paths; ``step()`` records every write and so runs the semantics
themselves (which the silicon and golden traces judge).  Here programs made to hit the paths'
edges run both ways and must end in identical states: the loop bookkeeping of every width the
paths take, at the values where the flags turn (0, 1, the sign bit, all ones), followed by every
condition code; tile loads from two regions, of part-height tiles and with a stride the path
does not take; and several accumulators of bf16 products stored one after another, which settle
together.  exact_totals over several batches is checked against the lane-by-lane fold, bit for
bit, as numerics/test_products_exact_total.py checks it for one.

These compare isasim with itself: the outside evidence for the semantics the paths stand in for is
silicon (the golden traces, fuzz/test_fuzz_vs_silicon.py) and the SDM's worked examples
(semantics/test_amx.py, forms/test_scalar.py).
"""

from __future__ import annotations

import random

import numpy as np
import pytest

from isasim.core import numerics
from isasim.core.machine import Machine
from isasim.x86_amx import ISA
from isasim.x86_amx import numerics as tmul_numerics
from isasim.x86_amx.numerics.products import DwordDotProducts, PairDotProducts, exact_totals
from isasim.x86_amx.kernels import tile_config
from isasim.x86_amx.semantics.scalar import CONDITIONS
from isasim.x86_amx.operands import GPR64

pytestmark = pytest.mark.consistency

CFG, DATA, OTHER, OUT = 0x1000, 0x10000, 0x40000, 0x80000
EDGES = (0, 1, 2, 0x7F, 0x80, 0xFF, 0x7FFFFFFF, 0x80000000, 0xFFFFFFFF, 0x100000000,
         0x7FFFFFFFFFFFFFFF, 0x8000000000000000, 0xFFFFFFFFFFFFFFFF, 0x0F0F0F0F0F0F0F0F)


def _machine(text: str, regs: dict[str, int], shapes=None, data: bytes = bytes(1 << 15)) -> Machine:
    m = Machine("x86_amx")
    memory = [(DATA, data, False), (OTHER, data, False), (OUT, bytes(1 << 16), True)]
    if shapes is not None:
        memory.append((CFG, tile_config(shapes), False))
    m.load(ISA.assemble(text), regs=regs, memory=memory)
    return m


def _state(m: Machine) -> tuple:
    regs = {name: m.state.read_register(name) for name in m.state.register_names()}
    return regs, m.state.settled_tiles().tobytes(), m.state.tilecfg.to_bytes(), m.memory.read(OUT, 1 << 16), m.fault


def _run_both_ways(text: str, regs: dict[str, int], shapes=None, data: bytes = bytes(1 << 15)) -> Machine:
    ran = _machine(text, regs, shapes, data)
    ran.run(100_000)
    stepped = _machine(text, regs, shapes, data)
    while not stepped.finished:
        stepped.step()
    assert _state(ran) == _state(stepped)
    return ran


def _flag_probe(n: int) -> list[str]:
    """Every Jcc on the flags just set, each taken one storing a 1 at its own byte of OUT (at rdx):
    neither the branches nor the stores change a flag, so all sixteen see the same RFLAGS."""
    lines = []
    for bit, (cc, *_rest) in enumerate(CONDITIONS):
        label = f"probe{n}_{cc}"
        lines += [f"    j{cc} {label}", f"    jmp {label}_done", f"{label}:",
                  f"    mov BYTE PTR [rdx+{16 * n + bit}], 1", f"{label}_done:"]
    return lines


@pytest.mark.parametrize("seed", range(6))
def test_scalar_bookkeeping_runs_as_it_steps(seed):
    rng = random.Random(seed)
    registers = [name for name in GPR64 if name not in ("rsp", "rdx")]
    lines = [".intel_syntax noprefix"]
    for n in range(40):
        dest, src = rng.sample(registers, 2)
        bits = rng.choice((64, 32))
        d, s = (dest, src) if bits == 64 else (_low32(dest), _low32(src))
        operand = rng.choice((s, hex(rng.choice((0, 1, 0x7F, 0x7FFFFFFF))), "-1", "-0x80"))
        op = rng.choice(("add", "sub", "cmp", "inc", "dec", "mov"))
        lines.append(f"    {op} {d}" if op in ("inc", "dec") else f"    {op} {d}, {operand}")
        lines += _flag_probe(n)
    lines.append("    ret")
    regs = {name: rng.choice(EDGES) for name in registers} | {"rdx": OUT}
    _run_both_ways("\n".join(lines) + "\n", regs)


def _low32(name: str) -> str:
    return {"rax": "eax", "rbx": "ebx", "rcx": "ecx", "rdx": "edx", "rsi": "esi", "rdi": "edi",
            "rbp": "ebp"}.get(name, f"{name}d")


def test_a_loop_counter_runs_as_it_steps():
    """dec / jnz of a kernel loop, and inc that wraps (CF kept), sub and cmp down to zero."""
    text = """.intel_syntax noprefix
    mov rcx, 3
    mov rax, -1
    stc_free:
    inc rax
    add rbx, 0x7fffffff
    dec rcx
    jnz stc_free
    sub rdx, rdx
    cmp rdx, 1
    jb below
    mov r8, 1
below:
    mov r9d, -1
    add r9d, 1
    ret
"""
    _run_both_ways(text, {"rbx": 0x7FFFFFFFFFFFFFF0})


@pytest.mark.parametrize("seed", range(4))
def test_tile_loads_run_as_they_step(seed):
    """Loads from two regions in turn, of part-height tiles, with the stride the path takes and others."""
    rng = random.Random(seed)
    data = np.random.default_rng(seed).integers(0, 256, 1 << 15, dtype=np.uint8).tobytes()
    shapes = {t: (rng.choice((16, 16, 5, 1)), 64) for t in range(8)}
    lines = [".intel_syntax noprefix", "    ldtilecfg [rcx]"]
    for _ in range(30):
        t = rng.randrange(8)
        base = rng.choice(("rdi", "rsi"))
        stride = rng.choice(("r8", "r8", "r9"))  # r8: 64-byte rows back to back; r9: 128
        lines.append(f"    tileloadd{rng.choice(('', 't1'))} tmm{t}, [{base}+{stride}*1+{64 * rng.randrange(8)}]")
        if rng.random() < 0.3:
            lines.append(f"    tilestored [rdx+r8*1+{1024 * rng.randrange(8)}], tmm{rng.randrange(8)}")
        if rng.random() < 0.2:
            lines.append(f"    tilezero tmm{rng.randrange(8)}")
    lines += [f"    tilestored [rdx+r8*1+{1024 * t}], tmm{t}" for t in range(8)] + ["    ret"]
    _run_both_ways("\n".join(lines) + "\n", {"rcx": CFG, "rdi": DATA, "rsi": OTHER, "rdx": OUT, "r8": 64, "r9": 128},
                   shapes, data)


@pytest.mark.parametrize("target", ["rdi", "rdx+0xfe00", "rbx"])
def test_a_store_that_faults_runs_as_it_steps(target):
    """A store into read-only memory, past the end of its region, and into no region at all: the
    plain path leaves each to the semantics, which fault (#PF) where the hardware does."""
    text = f""".intel_syntax noprefix
    ldtilecfg [rcx]
    tileloadd tmm0, [rsi+r8*1]
    tilestored [rdx+r8*1], tmm0
    tilestored [{target}+r8*1], tmm0
    ret
"""
    ran = _run_both_ways(text, {"rcx": CFG, "rsi": OTHER, "rdi": DATA, "rdx": OUT, "rbx": 0x7000000, "r8": 64},
                         {t: (16, 64) for t in range(8)})
    assert ran.fault is not None and ran.fault.kind == "#PF"


def _quarters(rng, shape) -> np.ndarray:
    """bf16 multiples of 1/4 (the kernels' data: products that take exact_totals)."""
    values = (rng.integers(-8, 8, shape) / 4.0).astype(np.float32)
    return (values.view(np.uint32) >> 16).astype(np.uint16)


@pytest.mark.parametrize("seed", range(3))
def test_accumulators_stored_in_turn_run_as_they_step(seed):
    """Four bf16 accumulators with waiting products, stored one after another: they settle together."""
    rng = np.random.default_rng(seed)
    data = _quarters(rng, (1 << 14,)).tobytes()
    lines = [".intel_syntax noprefix", "    ldtilecfg [rcx]"] + [f"    tilezero tmm{t}" for t in range(4)]
    for k in range(6):
        lines += [f"    tileloadd tmm4, [rdi+r8*1+{2048 * k}]", f"    tileloadd tmm5, [rdi+r8*1+{2048 * k + 1024}]",
                  f"    tileloadd tmm6, [rsi+r8*1+{2048 * k}]", f"    tileloadd tmm7, [rsi+r8*1+{2048 * k + 1024}]"]
        lines += [f"    tdpbf16ps tmm{c}, tmm{a}, tmm{b}" for c, a, b in ((0, 4, 6), (1, 4, 7), (2, 5, 6), (3, 5, 7))]
    lines += [f"    tilestored [rdx+r8*1+{1024 * t}], tmm{t}" for t in range(4)] + ["    ret"]
    _run_both_ways("\n".join(lines) + "\n", {"rcx": CFG, "rdi": DATA, "rsi": OTHER, "rdx": OUT, "r8": 64},
                   {t: (16, 64) for t in range(8)}, data)


@pytest.mark.parametrize("seed", range(3))
def test_exact_totals_of_several_batches_are_the_fold_bit_for_bit(seed):
    rng = np.random.default_rng(seed)
    taken = 0
    for _ in range(150):
        M, N, K = (int(x) for x in rng.integers(1, 17, 3))
        widen = numerics.bf16_to_fp32 if rng.random() < 0.8 else numerics.fp16_to_fp32
        tiles, count = int(rng.integers(2, 5)), int(rng.integers(1, 12))
        batches, Cs = [], []
        for tile in range(tiles):
            batch = PairDotProducts(M, N)
            zero = rng.random() < 0.15  # a batch whose own products are all zero
            for _ in range(count):
                a, b = np.zeros((16, 64), np.uint8), np.zeros((16, 64), np.uint8)
                if not zero:
                    a[:M, :4 * K] = _quarters(rng, (M, 2 * K)).view(np.uint8).reshape(M, 4 * K)
                b[:K, :4 * N] = _quarters(rng, (K, 2 * N)).view(np.uint8).reshape(K, 4 * N)
                if rng.random() < 0.02:
                    b[0, :2] = (0xC0, 0x7F)  # a NaN: must not take it
                batch.add(a, b, K, widen)
            C = (rng.integers(-50, 50, (M, N)) / 8.0).astype(np.float32).view(np.uint32)
            if rng.random() < 0.3:
                C[0, 0] = 0x80000000  # a -0 accumulator
            batches.append(batch)
            Cs.append(C)
        totals = exact_totals(batches, [C.copy() for C in Cs])
        if totals is None:
            continue
        taken += 1
        for batch, C, total in zip(batches, Cs, totals):
            folded = C.copy()
            for T in batch.products():
                folded = tmul_numerics.tmul_add32(folded, T)
            assert total.dtype == np.uint32 and np.array_equal(total, folded)
    assert taken > 20


@pytest.mark.parametrize("seed", range(3))
def test_dword_batches_settled_together_are_the_int64_sums(seed):
    """DwordDotProducts.apply_all over several accumulators against an int64 sum made here from the bytes."""
    rng = np.random.default_rng(seed)
    for _ in range(60):
        M, N, K = (int(x) for x in rng.integers(1, 17, 3))
        count, tiles = int(rng.integers(1, 33)), int(rng.integers(2, 5))
        kind = (K, bool(rng.integers(0, 2)), bool(rng.integers(0, 2)))
        extreme = rng.random() < 0.3  # every byte at the end of its range: the largest sums
        batches, Cs, expected = [], [], []
        for _ in range(tiles):
            batch, total = DwordDotProducts(M, N), np.zeros((M, N), np.int64)
            for _ in range(count):
                a = np.full((16, 64), 0x80 if kind[1] else 0xFF, np.uint8) if extreme else \
                    rng.integers(0, 256, (16, 64), dtype=np.uint8)
                b = np.full((16, 64), 0x80 if kind[2] else 0xFF, np.uint8) if extreme else \
                    rng.integers(0, 256, (16, 64), dtype=np.uint8)
                batch.add(a, b, *kind)
                A = a[:M, :4 * K].view(np.int8 if kind[1] else np.uint8).astype(np.int64).reshape(M, K, 4)
                B = b[:K, :4 * N].view(np.int8 if kind[2] else np.uint8).astype(np.int64).reshape(K, N, 4)
                total += np.einsum("mki,kni->mn", A, B)
            C = rng.integers(0, 1 << 32, (M, N), dtype=np.uint32)
            batches.append(batch)
            Cs.append(C)
            expected.append(((C.astype(np.int64) + total) % (1 << 32)).astype(np.uint32))
        for got, want in zip(DwordDotProducts.apply_all(batches, Cs), expected):
            assert got.dtype == np.uint32 and np.array_equal(got, want)

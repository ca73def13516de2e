"""Functions compiled by zig's clang, made of A64 base instructions only, run on isasim and on QEMU from the
same bytes and compared (issue 28), at -O0, -O1, -O2 and -O3 (and -O2 with -mbranch-protection=standard, whose
PACIASP/AUTIASP and BTI run as NOP on isasim's core).

The C below is the project's own: 64-bit mixing (byte reverses, count leading and trailing zeros and sign
bits, shifts by a register, 128-bit products through UMULH/SMULH, divides and remainders, a rotate), a
clamped fixed-point quantisation (CSEL, CSINC ...), a strided row sum through pointers with a store of each
row's total (LDRSB/LDRB, STRH, register offsets, a loop), and a call to a local helper (BL, a frame on the
stack).  The object's .text is disassembled by isasim into text, after a few lines that call the function
(BL) and clear the stack below SP when it returns, and that program runs on isasim and on QEMU (the same
text, assembled by clang): x0-x30, SP, NZCV and the memory must agree, and x0 must be the C function's value
worked out here in Python.  (The ELF loader of issue 28 runs such functions from the object itself; this
test needs only the base instructions.)
"""

from __future__ import annotations

import random
import subprocess
from pathlib import Path

import pytest

from isasim.arm_sme import ISA
from isasim.arm_sme.oracle.tools import find_zig, zig_env
from isasim.core.elf_file import read_elf

from differential import MEMORY_BASE, compare_with_qemu, random_state

pytestmark = [pytest.mark.needs_qemu, pytest.mark.needs_clang]

EM_AARCH64 = 183
MASK64 = (1 << 64) - 1

SOURCE = r"""
#include <stdint.h>
#include <stddef.h>

uint64_t mix64(uint64_t x, uint32_t y, int16_t z) {
  uint64_t r = __builtin_bswap64(x) ^ __builtin_bswap32(y) ^ (uint16_t)__builtin_bswap16((uint16_t)z);
  r += __builtin_ctzll(x | 1) + __builtin_clrsbll((int64_t)x) + (x >> (y & 63)) + ((int64_t)x >> (z & 63));
  r ^= (x * (uint64_t)y) + (uint64_t)((__int128)(int64_t)x * (int32_t)y >> 64)
       + (uint64_t)((unsigned __int128)x * x >> 64);
  r += (uint64_t)((int64_t)x / (int64_t)(y | 1)) + x % (y | 1) + (y ? x / y : 7);
  r = (r << 13) | (r >> 51);
  return (r & 0xffff0000ffffull) ? r : ~r;
}

int8_t quantize_one(int32_t v, int32_t scale, int32_t zp) {
  int64_t q = ((int64_t)v * scale + (1 << 15)) >> 16;
  q += zp;
  return (int8_t)(q < -128 ? -128 : q > 127 ? 127 : q);
}

uint64_t sum_rows(const uint8_t *p, size_t rows, size_t cols, size_t stride, int16_t *out) {
  uint64_t total = 0;
  for (size_t r = 0; r < rows; r++) {
    int32_t s = 0;
    for (size_t c = 0; c < cols; c++) s += (int8_t)p[r * stride + c] - (p[r * stride + c] > 200);
    out[r] = (int16_t)s;
    total += (uint32_t)s * (r + 1);
  }
  return total;
}

static uint32_t helper(uint32_t v, uint32_t k) { return (v << (k & 31)) | (v >> ((32 - k) & 31)); }
__attribute__((noinline)) uint32_t rotate_calls(uint32_t v, uint32_t k) { return helper(v, k) ^ helper(v + 1, k + 3); }
"""

BUILDS = {"O0": ["-O0"], "O1": ["-O1"], "O2": ["-O2"], "O3": ["-O3"],
          "O2-bp": ["-O2", "-mbranch-protection=standard"]}


def _signed(value: int, bits: int) -> int:
    value &= (1 << bits) - 1
    return value - (1 << bits) if value >> (bits - 1) else value


def _c_div(a: int, b: int) -> int:
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


def mix64(x: int, y: int, z: int) -> int:
    def bswap(value, nbytes):
        return int.from_bytes(value.to_bytes(nbytes, "little"), "big")

    r = bswap(x, 8) ^ bswap(y, 4) ^ bswap(z & 0xFFFF, 2)
    ctz = ((x | 1) & -(x | 1)).bit_length() - 1
    sx = _signed(x, 64)
    clrsb = next(n for n in range(64) if n == 63 or ((x >> (62 - n)) & 1) != (x >> 63))
    r = (r + ctz + clrsb + (x >> (y & 63)) + ((sx >> (_signed(z, 16) & 63)) & MASK64)) & MASK64
    r ^= (x * y + ((sx * _signed(y, 32)) >> 64) + ((x * x) >> 64)) & MASK64
    r = (r + _c_div(sx, y | 1) + x % (y | 1) + (x // y if y else 7)) & MASK64
    r = ((r << 13) | (r >> 51)) & MASK64
    return r if r & 0xFFFF0000FFFF else ~r & MASK64


def quantize_one(v: int, scale: int, zp: int) -> int:
    q = ((_signed(v, 32) * _signed(scale, 32) + (1 << 15)) >> 16) + _signed(zp, 32)
    return max(-128, min(127, q))


def rotate_calls(v: int, k: int) -> int:
    def helper(value, amount):
        value &= 0xFFFFFFFF
        return ((value << (amount & 31)) | (value >> ((32 - amount) & 31))) & 0xFFFFFFFF

    return helper(v, k) ^ helper(v + 1, k + 3)


def _build(tmp: Path, name: str, flags: list[str]) -> Path:
    zig, _ = find_zig()
    source, obj = tmp / "base_kernels.c", tmp / f"base_kernels_{name}.o"
    source.write_text(SOURCE)
    subprocess.run([zig, "cc", "-target", "aarch64-linux-gnu", "-mcpu=generic+sme2", "-fno-sanitize=all",
                    "-fno-stack-protector", "-fno-vectorize", "-fno-slp-vectorize", *flags, "-c", str(source), "-o",
                    str(obj)], check=True, capture_output=True, timeout=600, env=zig_env())
    return obj


def _program(obj: Path, function: str) -> str:
    """A call of ``function`` (BL, with x30 kept in x27, which the function preserves), then the 128 bytes below
    SP cleared (a frame holds the return address, which is where the code is: elsewhere under QEMU), then the
    object's .text as isasim disassembles it (every relative branch inside it keeps its target)."""
    elf = read_elf(str(obj), EM_AARCH64)
    symbol, _ = elf.find_function(function)
    text = elf.contents(elf.sections[symbol.section])
    lines = [instruction.text.split("//")[0].strip() for instruction in ISA.disassemble(text).instructions]
    wrapper = ["mov x27, x30", "bl #{}", "mov x30, x27", "mov x27, #0"]
    wrapper += [f"stp xzr, xzr, [sp, #-{16 * k}]" for k in range(1, 9)] + ["b end"]
    wrapper[1] = wrapper[1].format(4 * len(wrapper) - 4 + symbol.value)
    return "\n".join(wrapper + lines + ["end:"])


@pytest.fixture(scope="module")
def objects(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("compiled")
    return {name: _build(tmp, name, flags) for name, flags in BUILDS.items()}


def _cases(objects, rng):
    cases, expected = [], []
    for build, obj in objects.items():
        for _ in range(6):
            state = random_state(rng, 128, memory_bytes=4096)
            x, y, z = rng.getrandbits(64), rng.choice([0, 1, 3, rng.getrandbits(32)]), rng.getrandbits(16)
            state["x"][:3] = [x, y, z]
            cases.append((f"{build} mix64", _program(obj, "mix64"), state))
            expected.append(mix64(x, y, z))
            state = random_state(rng, 128, memory_bytes=4096)
            v, scale, zp = rng.getrandbits(32), rng.getrandbits(32) & 0x3FFFF, rng.randrange(-20, 20) & 0xFFFFFFFF
            state["x"][:3] = [v, scale, zp]
            cases.append((f"{build} quantize_one", _program(obj, "quantize_one"), state))
            expected.append(quantize_one(v, scale, zp))
            state = random_state(rng, 128, memory_bytes=4096)
            rows, cols, stride = rng.randrange(1, 6), rng.randrange(0, 20), 24
            state["x"][:5] = [MEMORY_BASE, rows, cols, stride, MEMORY_BASE + 1024]
            data = state["memory"]
            total = 0
            for r in range(rows):
                s = sum(_signed(data[r * stride + c], 8) - (data[r * stride + c] > 200) for c in range(cols))
                total += (s & 0xFFFFFFFF) * (r + 1)
            cases.append((f"{build} sum_rows", _program(obj, "sum_rows"), state))
            expected.append(total & MASK64)
            state = random_state(rng, 128, memory_bytes=4096)
            v, k = rng.getrandbits(32), rng.getrandbits(32)
            state["x"][:2] = [v, k]
            cases.append((f"{build} rotate_calls", _program(obj, "rotate_calls"), state))
            expected.append(rotate_calls(v, k))
    return cases, expected


def test_compiled_functions_agree_with_qemu_and_with_c(objects):
    from differential import run_isasim

    rng = random.Random(2812)
    cases, expected = _cases(objects, rng)
    for (label, text, state), value in zip(cases, expected):
        ours = run_isasim(text, state, 128)
        assert "fault" not in ours, (label, ours)
        width = 8 if "quantize" in label else 32 if "rotate" in label else 64
        assert ours["x"][0] & ((1 << width) - 1) == value & ((1 << width) - 1), (label, hex(ours["x"][0]), hex(value))
    comparison = compare_with_qemu(cases, 128)
    assert not comparison.mismatches, comparison.report(128)

"""The seed article's AMX kernels, written from Python the way the article writes them in C.

Each function returns a :class:`Kernel`: the assembly program, the initial
registers and named memory regions (A, packed B, C, the tile configuration), and
the expected result computed independently of the simulator: an INT64 matrix
product for the integer kernels, an exact float64 product for the BF16 ones (the
inputs are multiples of 0.25, so every partial sum is exact, as in the article's
BF16 tests).  ``kernel.trace()`` is an isasim-trace whose expectations are that
reference, so ``isasim replay`` (or ``isasim run``) says PASS or FAIL like the
article's programs.

    from isasim.x86_amx import kernels
    k = kernels.int8_microkernel(count=32, K=1280)   # the article's M=1024, N=32, K=1280
    k.trace().program                                # assembly lines
    kernels.pack_b_int8(b)                           # B packed four K values per column

The layouts are the article's: packed_b[k/4][4n + k%4] = b[k][n] for INT8,
packed_b[k/2][2n + k%2] = b[k][n] for BF16; the microkernel's A is packed as
[count][steps][2][16][64] and B as [steps][2][16][64] (steps = K / 64 bytes).
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from .builder import (A_BASE, B_BASE, C_BASE, CFG, MAX_KERNEL_MEMORY_BYTES, THREE_FULL_TILES, Assembly, Kernel,
                      KernelSizeError, _config_region, _init, _int32_bytes, _layout, _region, pack_b_bf16,
                      pack_b_int8, to_bf16)


def article_a(M: int, K: int) -> np.ndarray:
    """a[m][k] = (17m + 13k) mod 256 (uint8), the article's A."""
    m, k = np.meshgrid(np.arange(M), np.arange(K), indexing="ij")
    return ((17 * m + 13 * k) % 256).astype(np.uint8)


def article_b(K: int, N: int, modulus: int = 31, offset: int = 15) -> np.ndarray:
    """b[k][n] = (11k + 7n) mod 31 - 15 (int8), the article's B (the microkernel uses mod 255 - 128)."""
    k, n = np.meshgrid(np.arange(K), np.arange(N), indexing="ij")
    return ((11 * k + 7 * n) % modulus - offset).astype(np.int8)


def int8_block(K: int = 64) -> Kernel:
    """The article's first kernel: one 16x16 block of C = A x B with TDPBUSD (K <= 64; K=62 pads with zeros)."""
    if not 1 <= K <= 64:
        raise ValueError("the single-block kernel takes 1 <= K <= 64 (one tile of A)")
    a, b = article_a(16, K), article_b(K, 16)
    a_tile = np.zeros((16, 64), dtype=np.uint8)
    a_tile[:, :K] = a  # K < 64: the columns past K are zero, so they add nothing
    packed = np.zeros((16, 64), dtype=np.int8)
    packed[: -(-K // 4)] = pack_b_int8(b)
    asm = Assembly(f"The seed article's single 16x16 block, K={K}: C = A x B with TDPBUSD.\n"
                   "A: 16 x 64 uint8 at rdi; B packed four K values per column (16 x 64 int8) at rsi;\n"
                   "C: 16 x 16 int32 at rdx; the tile configuration at rcx.")
    asm.label("amx_block")
    asm("ldtilecfg [rcx]", "tmm0 = C, tmm1 = A, tmm2 = packed B: 16 rows x 64 bytes each")
    asm("mov r8, 64", "the row stride of A, packed B and C, in bytes")
    asm("tilezero tmm0", "C := 0")
    asm("tileloadd tmm1, [rdi+r8*1]", "A")
    asm("tileloadd tmm2, [rsi+r8*1]", "packed B")
    asm("tdpbusd tmm0, tmm1, tmm2", "C[m][n] += sum over k of uint8 A[m][k] * int8 B[k][n]")
    asm("tilestored [rdx+r8*1], tmm0", "write C back")
    asm("tilerelease", "return the tiles to their INIT state")
    asm("ret")
    reference = a.astype(np.int64) @ b.astype(np.int64)
    regions = [_config_region(THREE_FULL_TILES),
               _region("A", A_BASE, a_tile, "uint8", (16, 64)),
               _region("packed B", B_BASE, packed, "int8", (16, 64)),
               _region("C", C_BASE, np.zeros((16, 16), np.int32), "int32", (16, 16), show=True)]
    init = _init({"rdi": A_BASE, "rsi": B_BASE, "rdx": C_BASE, "rcx": CFG}, regions)
    return Kernel(f"int8_block_k{K}" if K != 64 else "int8_block", f"16x16 UINT8 x INT8 -> INT32 block, K={K}",
                  asm.lines, init, [(C_BASE, _int32_bytes(reference))], 16 * 16 * K, reference)


def _block_regions(count: int, K: int = 64):
    if count < 1:  # "dec r10; jnz" with r10 = 0 would loop 2^64 times
        raise KernelSizeError(f"count must be at least 1, not {count}")
    a = article_a(16 * count, K)
    b = article_b(K, 16)
    blocks = a.reshape(count, 16, K)
    return a, b, blocks


def int8_batch(count: int = 4) -> Kernel:
    """The reuse kernel: configuration and B stay in tiles while count A blocks stream through."""
    a, b, blocks = _block_regions(count)
    return _batch_kernel(f"int8_batch_{count}", f"{count} 16x16 blocks reusing the configuration and B",
                         _batch_program, a, b, blocks, count)


def _batch_program(count: int) -> Assembly:
    asm = Assembly(f"The seed article's batch kernel: {count} 16x64 A blocks share one packed B.\n"
                   "The configuration and B are loaded once; each block zeroes C, loads A, multiplies, stores.")
    asm("ldtilecfg [rcx]", "tmm0 = C, tmm1 = A, tmm2 = packed B: 16 x 64 bytes")
    asm("mov r8, 64", "row stride of A, B and C")
    asm(f"mov r10, {count}", "blocks to go")
    asm("tileloadd tmm2, [rsi+r8*1]", "B stays in tmm2 for every block")
    asm.label("next_block")
    asm("tilezero tmm0", "C := 0")
    asm("tileloadd tmm1, [rdi+r8*1]", "this block's A")
    asm("tdpbusd tmm0, tmm1, tmm2")
    asm("tilestored [rdx+r8*1], tmm0", "this block's C")
    asm("add rdi, 1024", "next A block: 16 x 64 bytes")
    asm("add rdx, 1024", "next C block: 16 x 16 int32")
    asm("dec r10")
    asm("jnz next_block")
    asm("tilerelease")
    asm("ret")
    return asm


def int8_per_block(count: int = 4) -> Kernel:
    """The original kernel called count times: configure, load B, compute and release for every block."""
    a, b, blocks = _block_regions(count)
    return _batch_kernel(f"int8_per_block_{count}", f"{count} calls of the single-block kernel", _per_block_program,
                         a, b, blocks, count)


def _per_block_program(count: int) -> Assembly:
    asm = Assembly(f"The seed article's original kernel, called for {count} blocks:\n"
                   "every call loads the configuration and B again and releases the tiles.")
    asm("mov r8, 64", "row stride of A, B and C")
    asm(f"mov r10, {count}", "blocks to go")
    asm.label("next_block")
    asm("ldtilecfg [rcx]")
    asm("tilezero tmm0")
    asm("tileloadd tmm1, [rdi+r8*1]", "A")
    asm("tileloadd tmm2, [rsi+r8*1]", "packed B, again")
    asm("tdpbusd tmm0, tmm1, tmm2")
    asm("tilestored [rdx+r8*1], tmm0")
    asm("tilerelease")
    asm("add rdi, 1024")
    asm("add rdx, 1024")
    asm("dec r10")
    asm("jnz next_block")
    asm("ret")
    return asm


def _block_split(program: Callable[[int], Assembly], regs: dict[str, int], a_step: int, c_step: int):
    """The split of a loop over blocks that reads its A at rdi and writes its C at rdx, a_step and c_step
    bytes further per block: the same program with the range's count, the pointers at the range's start."""
    def split(group: range) -> tuple[list[str], dict[str, int]]:
        return program(len(group)).lines, {"rdi": regs["rdi"] + group.start * a_step,
                                           "rdx": regs["rdx"] + group.start * c_step}

    return split


def _batch_kernel(name, description, program, a, b, blocks, count) -> Kernel:
    asm = program(count)
    reference = a.astype(np.int64) @ b.astype(np.int64)
    a_base, b_base, c_base = _layout(16 * count * 64, 16 * 64)
    regions = [_config_region(THREE_FULL_TILES),
               _region("A", a_base, blocks.reshape(16 * count, 64), "uint8", (16 * count, 64)),
               _region("packed B", b_base, pack_b_int8(b), "int8", (16, 64)),
               _region("C", c_base, np.zeros((16 * count, 16), np.int32), "int32", (16 * count, 16), show=True)]
    init = _init({"rdi": a_base, "rsi": b_base, "rdx": c_base, "rcx": CFG}, regions)
    return Kernel(name, description, asm.lines, init, [(c_base, _int32_bytes(reference))], count * 16 * 16 * 64,
                  reference, count, _block_split(program, init.regs, 1024, 1024))


def _microkernel(name: str, description: str, count: int, K: int, element: str) -> Kernel:
    """The 32x32 microkernel: C00, C01, C10, C11 in tmm0-3 across the K loop; A in tmm4/5 (TILELOADDT1),
    B in tmm6/7 (TILELOADD), loads interleaved with the dot products as in the article."""
    per_step = 64 if element == "int8" else 32  # K elements per 64-byte tile row
    if count < 1:  # "dec r10; jnz" with r10 = 0 would loop 2^64 times
        raise KernelSizeError(f"count must be at least 1, not {count}")
    if K % per_step or K <= 0:
        raise ValueError(f"K must be a positive multiple of {per_step} for the {element} microkernel")
    steps, M = K // per_step, 32 * count
    asm = _microkernel_program(count, K, element)

    if element == "int8":
        a = article_a(M, K)
        b = article_b(K, 32, modulus=255, offset=128)
        a_packed = a.reshape(count, 2, 16, steps, 64).transpose(0, 3, 1, 2, 4)  # [count][steps][2][16][64]
        b_packed = pack_b_int8(b).reshape(steps, 16, 2, 64).transpose(0, 2, 1, 3)  # [steps][2][16][64]
        reference = a.astype(np.int64) @ b.astype(np.int64)
        c_bytes = _int32_bytes(reference)
        a_data, b_data, a_type, b_type, c_type = a_packed, b_packed, "uint8", "int8", "int32"
        macs = M * 32 * K
    else:
        m, k = np.meshgrid(np.arange(M), np.arange(K), indexing="ij")
        a_values = ((17 * m + 13 * k) % 16 - 8) / 4.0  # multiples of 0.25: every sum is exact
        k, n = np.meshgrid(np.arange(K), np.arange(32), indexing="ij")
        b_values = ((11 * k + 7 * n) % 15 - 7) / 4.0
        a_bits, b_bits = to_bf16(a_values), to_bf16(b_values)
        a_data = a_bits.reshape(count, 2, 16, steps, 32).transpose(0, 3, 1, 2, 4)
        b_data = pack_b_bf16(b_bits).reshape(steps, 16, 2, 32).transpose(0, 2, 1, 3)
        reference = a_values @ b_values  # exact in float64 and in fp32
        c_bytes = reference.astype(np.float32).tobytes()
        a_type, b_type, c_type = "bf16", "bf16", "fp32"
        macs = M * 32 * K
    c_blocks = np.frombuffer(c_bytes, dtype=np.uint32).reshape(count, 32, 32)  # C laid out [count][32][32]
    a_base, b_base, c_base = _layout(count * steps * 32 * 64, steps * 32 * 64)
    regions = [_config_region({t: (16, 64) for t in range(8)}),
               _region("packed A", a_base, np.ascontiguousarray(a_data), a_type,
                       (count * steps * 32, 64 // (1 if a_type == "uint8" else 2))),
               _region("packed B", b_base, np.ascontiguousarray(b_data), b_type,
                       (steps * 32, 64 // (1 if b_type == "int8" else 2))),
               _region("C", c_base, np.zeros((M, 32), np.uint32), c_type, (M, 32), show=True)]
    init = _init({"rdi": a_base, "rsi": b_base, "rdx": c_base, "rcx": CFG}, regions)
    # each 32x32 block reads steps x 2048 bytes of packed A and writes 4096 bytes of C
    split = _block_split(lambda blocks: _microkernel_program(blocks, K, element), init.regs, steps * 2048, 4096)
    return Kernel(name, description, asm.lines, init, [(c_base, c_blocks.tobytes())], macs, reference, count, split)


def _microkernel_program(count: int, K: int, element: str) -> Assembly:
    per_step = 64 if element == "int8" else 32
    steps, M = K // per_step, 32 * count
    tdp = "tdpbusd" if element == "int8" else "tdpbf16ps"
    asm = Assembly(f"The seed article's 32x32 microkernel ({element}): M={M}, N=32, K={K}.\n"
                   "Four accumulators tmm0-3 stay in tiles across the K loop; A (tmm4, tmm5) streams in with\n"
                   "TILELOADDT1, B (tmm6, tmm7) with TILELOADD; A is packed [count][steps][2][16][64], B [steps][2][16][64].")
    asm("ldtilecfg [rcx]", "all eight tiles 16 rows x 64 bytes")
    asm("mov r8, 64", "row stride of the packed A and B blocks")
    asm("mov r9, 128", "row stride of C: 32 int32 or fp32")
    asm(f"mov r10, {count}", "32x32 output blocks to go")
    asm.label("next_block")
    for t in range(4):
        asm(f"tilezero tmm{t}", ["C00", "C01", "C10", "C11"][t] + " := 0")
    asm("tileloaddt1 tmm4, [rdi+r8*1]", "A0 (rows 0-15) of K step 0")
    asm("tileloaddt1 tmm5, [rdi+r8*1+1024]", "A1 (rows 16-31)")
    asm("tileloadd tmm6, [rsi+r8*1]", "B0 (columns 0-15)")
    asm("tileloadd tmm7, [rsi+r8*1+1024]", "B1 (columns 16-31)")
    if steps > 1:
        asm("mov rax, rsi", "the B cursor")
        asm(f"mov r11, {steps - 1}", "K steps after the first")
        asm.label("next_k")
        asm("add rdi, 2048", "A of the next K step")
        asm("add rax, 2048", "B of the next K step")
        asm(f"{tdp} tmm0, tmm4, tmm6", "C00 += A0 B0")
        asm(f"{tdp} tmm1, tmm4, tmm7", "C01 += A0 B1")
        asm("tileloaddt1 tmm4, [rdi+r8*1]", "A0 is used up: load the next one")
        asm(f"{tdp} tmm2, tmm5, tmm6", "C10 += A1 B0")
        asm("tileloadd tmm6, [rax+r8*1]", "B0 is used up: load the next one")
        asm(f"{tdp} tmm3, tmm5, tmm7", "C11 += A1 B1")
        asm("tileloaddt1 tmm5, [rdi+r8*1+1024]")
        asm("tileloadd tmm7, [rax+r8*1+1024]")
        asm("dec r11")
        asm("jnz next_k")
    asm(f"{tdp} tmm0, tmm4, tmm6", "the last K step")
    asm(f"{tdp} tmm1, tmm4, tmm7")
    asm(f"{tdp} tmm2, tmm5, tmm6")
    asm(f"{tdp} tmm3, tmm5, tmm7")
    asm("tilestored [rdx+r9*1], tmm0", "C00")
    asm("tilestored [rdx+r9*1+64], tmm1", "C01")
    asm("tilestored [rdx+r9*1+2048], tmm2", "C10: 16 rows of 128 bytes further")
    asm("tilestored [rdx+r9*1+2112], tmm3", "C11")
    asm("add rdi, 2048", "A of the next output block")
    asm("add rdx, 4096", "C of the next output block: 32 x 32 x 4 bytes")
    asm("dec r10")
    asm("jnz next_block")
    asm("tilerelease")
    asm("ret")
    return asm


def int8_microkernel(count: int = 32, K: int = 1280) -> Kernel:
    """The article's 32x32 INT8 microkernel over count output blocks (M = 32 * count, N = 32)."""
    return _microkernel(f"int8_microkernel_{count}x{K}", f"32x32 UINT8 x INT8 microkernel, M={32 * count}, K={K}",
                        count, K, "int8")


def bf16_microkernel(count: int = 2, K: int = 128) -> Kernel:
    """The BF16 variant of the microkernel: TDPBF16PS, B packed two K values per column."""
    return _microkernel(f"bf16_microkernel_{count}x{K}", f"32x32 BF16 -> FP32 microkernel, M={32 * count}, K={K}",
                        count, K, "bf16")


def bf16_block(K: int = 32) -> Kernel:
    """The BF16 variant of the single block: 16x16 FP32 outputs, K bf16 values (two per dword)."""
    if not 1 <= K <= 32:
        raise ValueError("the single-block BF16 kernel takes 1 <= K <= 32")
    m, k = np.meshgrid(np.arange(16), np.arange(K), indexing="ij")
    a_values = ((17 * m + 13 * k) % 16 - 8) / 4.0
    k, n = np.meshgrid(np.arange(K), np.arange(16), indexing="ij")
    b_values = ((11 * k + 7 * n) % 15 - 7) / 4.0
    a_tile = np.zeros((16, 32), dtype=np.uint16)
    a_tile[:, :K] = to_bf16(a_values)
    packed = np.zeros((16, 32), dtype=np.uint16)
    packed[: -(-K // 2)] = pack_b_bf16(to_bf16(b_values))
    asm = Assembly(f"The BF16 single block, K={K}: C (16 x 16 fp32) = A (16 x {K} bf16) x B, with TDPBF16PS.\n"
                   "B is packed two K values per column: packed[k/2][2n + k%2] = b[k][n].")
    asm("ldtilecfg [rcx]", "tmm0 = C, tmm1 = A, tmm2 = packed B: 16 x 64 bytes")
    asm("mov r8, 64")
    asm("tilezero tmm0")
    asm("tileloadd tmm1, [rdi+r8*1]", "A: 16 x 32 bf16")
    asm("tileloadd tmm2, [rsi+r8*1]", "packed B")
    asm("tdpbf16ps tmm0, tmm1, tmm2", "C[m][n] += sum over k of A[m][k] * B[k][n], two fp32 lanes per element")
    asm("tilestored [rdx+r8*1], tmm0")
    asm("tilerelease")
    asm("ret")
    reference = a_values @ b_values
    regions = [_config_region(THREE_FULL_TILES),
               _region("A", A_BASE, a_tile, "bf16", (16, 32)),
               _region("packed B", B_BASE, packed, "bf16", (16, 32)),
               _region("C", C_BASE, np.zeros((16, 16), np.float32), "fp32", (16, 16), show=True)]
    init = _init({"rdi": A_BASE, "rsi": B_BASE, "rdx": C_BASE, "rcx": CFG}, regions)
    return Kernel("bf16_block", f"16x16 BF16 -> FP32 block, K={K}", asm.lines, init,
                  [(C_BASE, reference.astype(np.float32).tobytes())], 16 * 16 * K, reference)


BUILDERS = {
    "int8_block": int8_block, "int8_batch": int8_batch, "int8_per_block": int8_per_block,
    "int8_microkernel": int8_microkernel, "bf16_block": bf16_block, "bf16_microkernel": bf16_microkernel,
}

# What each kernel's size parameters may be: (takes count, K rule as (lowest, highest, multiple of) or None).
# The loop counters are "mov r10, count" and "dec r10; jnz": a count of 0 would loop 2^64 times, so the
# smallest count is 1.
_SIZE_RULES = {
    "int8_block": (False, (1, 64, 1)), "bf16_block": (False, (1, 32, 1)),
    "int8_batch": (True, None), "int8_per_block": (True, None),
    "int8_microkernel": (True, (64, None, 64)), "bf16_microkernel": (True, (32, None, 32)),
}


def memory_bytes(name: str, count: int, K: int) -> int:
    """The bytes of memory a kernel's trace carries (initial regions and the expected C), computed from the
    sizes alone, so that an impossible size is refused before anything is allocated."""
    config = 64
    if name in ("int8_block", "bf16_block"):
        return config + 3 * 16 * 64 + 16 * 64
    if name in ("int8_batch", "int8_per_block"):
        return config + count * 1024 + 1024 + 2 * count * 1024  # A, packed B, C and the expected C
    element_bytes = 1 if name == "int8_microkernel" else 2
    a, b, c = 32 * count * K * element_bytes, 32 * K * element_bytes, 32 * 32 * 4 * count
    return config + a + b + 2 * c


def build(name: str, count: int | None = None, K: int | None = None) -> Kernel:
    """Build kernel ``name`` at the given size (None: its default), refusing a size it cannot be built with
    (KernelSizeError, one line naming the rule) before allocating anything."""
    import inspect

    if name not in BUILDERS:
        raise KernelSizeError(f"no kernel named {name!r} (known: {', '.join(BUILDERS)})")
    builder = BUILDERS[name]
    takes_count, k_rule = _SIZE_RULES[name]
    defaults = {key: p.default for key, p in inspect.signature(builder).parameters.items()}
    if count is not None and not takes_count:
        raise KernelSizeError(f"{name} is a single block: it takes no count")
    if count is not None and count < 1:
        raise KernelSizeError(f"{name}: count must be at least 1, not {count}")
    options = {}
    if count is not None:
        options["count"] = count
    if K is not None:
        if k_rule is None:
            raise KernelSizeError(f"{name} has K = 64 (one tile row of A): it takes no K")
        low, high, multiple = k_rule
        if K < low or (high is not None and K > high) or K % multiple:
            rule = f"{low}..{high}" if high is not None else f"a positive multiple of {multiple}"
            raise KernelSizeError(f"{name}: K must be {rule}, not {K}")
        options["K"] = K
    needed = memory_bytes(name, options.get("count", defaults.get("count", 1)), options.get("K", defaults.get("K", 64)))
    if needed > MAX_KERNEL_MEMORY_BYTES:
        raise KernelSizeError(f"{name}: this size needs {needed:,} bytes of memory in its trace, more than the "
                              f"limit of {MAX_KERNEL_MEMORY_BYTES:,} ({MAX_KERNEL_MEMORY_BYTES // 2**20} MiB)")
    return builder(**options)

"""The vector forms compilers emit around AMX kernels (forms/vector.py, issues 15 and 27).

Encodings against GNU as, text against objdump, g++'s own bytes; semantics against this host's CPU (the
silicon tests, where it has the features) and by hand-worked examples of the SDM's Operation sections: a
legacy SSE write keeps bits 511:128, a VEX/EVEX write zeroes them, VZEROUPPER clears bits 511:128 of
zmm0-15, a write mask merges or zeroes and a masked access touches only the selected elements;
alignment faults; a CPU model without the row's CPUID feature raises #UD.
"""

from __future__ import annotations

import dataclasses
import re
import struct
from pathlib import Path

import pytest
from gnu_binutils import assert_round_trip, gas, needs_binutils
from vector_cases import CASES, GXX_BYTES

from isasim.core.errors import AssemblyError
from isasim.core.faults import Fault
from isasim.core.memory import Memory
from isasim.x86_amx import ISA
from isasim.x86_amx.encoding import vector
from isasim.x86_amx.assembler import assemble
from isasim.x86_amx.context import X86Context
from isasim.x86_amx.config import cpu_model
from isasim.x86_amx.decoder import decode_one
from isasim.x86_amx.state import X86AmxState


@pytest.fixture(scope="module")
def gnu():
    return gas(CASES)


@needs_binutils
@pytest.mark.parametrize("i", range(len(CASES)), ids=CASES)
def test_isasim_assembles_as_gnu_as_and_prints_as_objdump(gnu, i):
    assert_round_trip(assemble, CASES[i], *gnu[i])


@pytest.mark.parametrize("hexcode,text", GXX_BYTES)
def test_gxx_bytes_decode_to_objdump_text(hexcode, text):
    code = bytes.fromhex(hexcode)
    ins = decode_one(code, 0, 0x1000)
    assert (ins.text, ins.encoding, ins.extra.get("noncanonical")) == (text, code, None)


@pytest.mark.parametrize("hexcode,why", [
    ("62 f2 7e 38 72 07", "a narrowing conversion's embedded broadcast: vcvtneps2bf16 xmm0,DWORD BCST [rdi]{1to8}"),
    ("62 f1 7f c9 7f 04 24", "zeroing a store: vmovdqu8 ZMMWORD PTR [rsp]{k1}{z},zmm0 (#UD)"),
    ("0f ef c0", "MMX pxor mm0,mm0"),
])
def test_what_does_not_decode(hexcode, why):
    assert vector.decode(bytes.fromhex(hexcode), 0, 0x1000) is None, why


@pytest.mark.parametrize("hexcode,message", [
    ("62 f2 7e 38 72 07", "vcvtneps2bf16 xmm0,[rdi]{1to8}: embedded broadcast is not simulated"),
    ("62 f1 7c 18 58 c2", "vaddps zmm0{rne-sae},zmm0,zmm2: embedded rounding"),
    ("c4 e2 7e 72 c0", "vcvtneps2bf16 xmm0,ymm0: this encoding of vcvtneps2bf16 is not simulated"),  # AVX-NE-CONVERT
    ("0f ef c0", "pxor mm0,mm0: this encoding of pxor is not simulated"),
    ("62 f2 fd 48 b4 c2", "vpmadd52luq zmm0,zmm0,zmm2: isasim does not simulate vpmadd52luq"),
])
def test_what_isasim_lacks_is_refused_by_name(hexcode, message):
    from isasim.core.errors import DecodeError

    with pytest.raises(DecodeError, match=re.escape(message)):
        decode_one(bytes.fromhex(hexcode), 0, 0x1000)


def test_assembly_errors():
    for line, message in (("vpxor xmm16, xmm1, xmm2", "no form"), ("pxor xmm0, eax", "no form"),
                          ("movups xmm0, 1", "no form"),
                          ("vmovdqu32 zmm0{k0}, zmm1", "k0 cannot be a write mask"),
                          ("vmovdqu32 ZMMWORD PTR [rdi]{k1}{z}, zmm1", "no form"),
                          ("vmovdqu xmm0{k1}, xmm1", "no form"), ("kmovw k1, ax", "no form"),
                          ("vpxord zmm0, zmm0, DWORD PTR [rdi]{1to16}", "embedded broadcast"),
                          ("vmovdqu32 zmm0, zmm1{k1}", "only the destination"),
                          ("movaps [rdi], [rsi]", "two memory")):
        with pytest.raises(AssemblyError, match=message):
            assemble(line)
    with pytest.raises(AssemblyError, match="cannot be used by mov"):
        assemble("mov rax, xmm0")  # the scalar forms still refuse vector registers


# ---------------------------------------------------------------------------
# Semantics
# ---------------------------------------------------------------------------

DATA = 0x8000
ALL_ONES = (1 << 512) - 1
PATTERN = int.from_bytes(bytes(range(64)), "little")


def machine(model: str = "emerald-rapids", memory: bytes = bytes(0x200)):
    state = X86AmxState(model=cpu_model(model))
    mem = Memory()
    mem.map(DATA, memory, writable=True)
    return state, mem, X86Context(state, mem, state.model)


def run(text: str, vectors: dict[int, int] | None = None, regs: dict | None = None, **kw):
    state, mem, cpu = machine(**kw)
    for n, value in (vectors or {}).items():
        state.write_vector(n, value)
    for name, value in (regs or {}).items():
        state.write_register(name, value)
    for ins in assemble(text).instructions:
        ins.form.execute(cpu, ins.operands)
    return state, mem


def test_sse_writes_keep_bits_511_128():
    state, _ = run("pxor xmm0, xmm0", {0: ALL_ONES})
    assert state.read_vector(0) == ALL_ONES >> 128 << 128
    state, _ = run("movaps xmm1, xmm2", {1: ALL_ONES, 2: 0x1234})
    assert state.read_vector(1) == ALL_ONES >> 128 << 128 | 0x1234


def test_vex_and_evex_writes_zero_above_vl():
    state, _ = run("vpxor xmm0, xmm0, xmm0", {0: ALL_ONES})
    assert state.read_vector(0) == 0
    state, _ = run("vpxor ymm3, ymm1, ymm2", {1: PATTERN, 2: ALL_ONES, 3: ALL_ONES})
    assert state.read_vector(3) == (PATTERN ^ ALL_ONES) % (1 << 256)
    state, _ = run("vmovdqu8 xmm20, xmm1", {1: PATTERN, 20: ALL_ONES})
    assert state.read_vector(20) == PATTERN % (1 << 128)


def test_stores_write_exactly_vl_bytes():
    state, mem = run("vmovdqu8 YMMWORD PTR [rdi+1], ymm0\nmovups XMMWORD PTR [rdi+0x40], xmm0",
                     {0: PATTERN}, {"rdi": DATA})
    assert mem.read(DATA, 0x52) == b"\0" + bytes(range(32)) + bytes(31) + bytes(range(16)) + bytes(2)
    state, mem = run("vmovdqu8 ZMMWORD PTR [rdi], zmm5\nvmovdqu8 zmm6, ZMMWORD PTR [rdi]", {5: PATTERN}, {"rdi": DATA})
    assert state.read_vector(6) == PATTERN and mem.read(DATA, 64) == bytes(range(64))


def test_vpbroadcastw():
    state, _ = run("vpbroadcastw xmm0, eax", {0: ALL_ONES}, {"rax": 0xDEAD_BEEF})
    assert state.read_vector(0) == int("beef" * 8, 16)  # 8 words, bits 511:128 zeroed
    state, _ = run("vpbroadcastw zmm1, xmm2", {2: 0x1_0040})
    assert state.read_vector(1) == int("0040" * 32, 16)
    state, _ = run("vpbroadcastw ymm1, WORD PTR [rdi]", {}, {"rdi": DATA})
    assert state.read_vector(1) == 0


def test_masked_moves_merge_zero_and_store_only_the_selected_elements():
    """Hand-worked examples of the SDM's masking rule (the silicon test is the evidence)."""
    state, _ = run("kmovw k1, eax\nvmovdqu32 zmm2{k1}, zmm3\nvmovdqu32 zmm4{k1}{z}, zmm3",
                   {2: ALL_ONES, 3: PATTERN, 4: ALL_ONES}, {"rax": 0b101})
    dword = (1 << 32) - 1
    assert state.read_vector(2) == ALL_ONES & ~(dword | dword << 64) | PATTERN & (dword | dword << 64)
    assert state.read_vector(4) == PATTERN & (dword | dword << 64)
    # a store writes the selected qwords only; a masked-out element past the mapped memory does not fault
    state, mem = run("kmovb k2, eax\nvmovdqu64 ZMMWORD PTR [rdi+0x1d0]{k2}, zmm5", {5: PATTERN},
                     {"rax": 0b11, "rdi": DATA}, memory=b"\xee" * 0x200)
    assert mem.read(DATA + 0x1d0, 0x30) == bytes(range(16)) + b"\xee" * 0x20
    state, _ = run("kmovb k2, eax\nvmovdqu64 zmm6{k2}{z}, ZMMWORD PTR [rdi+0x1f0]", {},
                   {"rax": 0b11, "rdi": DATA}, memory=b"\x01" * 0x200)
    assert state.read_vector(6) == int.from_bytes(b"\x01" * 16, "little")
    with pytest.raises(Fault) as info:
        run("kmovb k2, eax\nvmovdqu64 zmm6{k2}{z}, ZMMWORD PTR [rdi+0x1f0]", {}, {"rax": 0b111, "rdi": DATA})
    assert info.value.kind == "#PF"
    with pytest.raises(Fault) as info:  # an aligned move checks the alignment whatever the mask
        run("kxorw k1, k1, k1\nvmovdqa64 zmm1{k1}, ZMMWORD PTR [rdi+0x20]", {}, {"rdi": DATA})
    assert info.value.kind == "#GP"


def test_gpr_and_xmm_moves_keep_or_zero_the_upper_bits():
    state, _ = run("movd xmm1, eax\nvmovq xmm2, rax\nmovq rcx, xmm3\nvmovd edx, xmm3\nmovq xmm4, xmm3",
                   {1: ALL_ONES, 2: ALL_ONES, 3: PATTERN, 4: ALL_ONES}, {"rax": 0x1122334455667788, "rdx": -1})
    assert state.read_vector(1) == ALL_ONES >> 128 << 128 | 0x55667788  # legacy: bits 511:128 kept
    assert state.read_vector(2) == 0x1122334455667788  # VEX: bits 511:64 zeroed
    assert state.read_register("rcx") == PATTERN & (1 << 64) - 1
    assert state.read_register("rdx") == PATTERN & 0xFFFFFFFF  # a 32-bit write zero-extends
    assert state.read_vector(4) == ALL_ONES >> 128 << 128 | PATTERN & (1 << 64) - 1


def test_zeroing_and_all_ones_idioms_and_ternary_logic():
    state, _ = run("vpxord zmm17, zmm17, zmm17\nvpternlogd zmm1, zmm1, zmm1, 0xff\n"
                   "vpternlogq zmm2, zmm3, zmm4, 0x96\nvpternlogd zmm5, zmm3, zmm4, 0xca",
                   {17: PATTERN, 1: 0, 2: 0xF0, 3: 0xCC, 4: 0xAA, 5: 0x0F})
    assert state.read_vector(17) == 0 and state.read_vector(1) == ALL_ONES
    assert state.read_vector(2) == 0xF0 ^ 0xCC ^ 0xAA  # 0x96: the three-way XOR
    assert state.read_vector(5) == (0x0F & 0xCC | ~0x0F & 0xAA) & 0xFF  # 0xca: DEST ? SRC2 : SRC3


def test_broadcasts():
    state, _ = run("vpbroadcastb ymm1, xmm2\nvpbroadcastd zmm3{k0}, eax\nvpbroadcastq xmm4, rax\n"
                   "vbroadcastss zmm5, DWORD PTR [rdi]".replace("{k0}", ""), {2: 0x1234},
                   {"rax": 0x1122334455667788, "rdi": DATA}, memory=bytes(range(4)) * 128)
    assert state.read_vector(1) == int("34" * 32, 16)
    assert state.read_vector(3) == int("55667788" * 16, 16)
    assert state.read_vector(4) == int("1122334455667788" * 2, 16)
    assert state.read_vector(5) == int("03020100" * 16, 16)


def test_opmask_moves_kortest_and_kxor():
    state, mem = run("kmovw k1, eax\nkmovq k2, rax\nkmovb ecx, k2\nkortestw k1, k3\nkmovq QWORD PTR [rdi], k2\n"
                     "kxorb k4, k2, k1\nkmovd k5, DWORD PTR [rdi]", {},
                     {"rax": 0xFFFF_0000_1234_FFFF, "rdi": DATA, "rcx": -1})
    assert state.read_register("k1") == 0xFFFF and state.read_register("k2") == 0xFFFF_0000_1234_FFFF
    assert state.read_register("rcx") == 0xFF
    assert state.rflags & 0x1 and not state.rflags & 0x40  # k1 | k3 = FFFFH: CF=1, ZF=0
    assert mem.read(DATA, 8) == (0xFFFF_0000_1234_FFFF).to_bytes(8, "little")
    assert state.read_register("k4") == 0 and state.read_register("k5") == 0x1234_FFFF


def f32(x: float) -> int:
    return struct.unpack("<I", struct.pack("<f", x))[0]


def vector_of(values, size: int = 32) -> int:
    return sum((v % (1 << size)) << (size * j) for j, v in enumerate(values))


def test_integer_arithmetic_examples():
    state, _ = run("vpaddd xmm1, xmm2, xmm3\nvpsubd xmm4, xmm2, xmm3\nvpmulld xmm5, xmm2, xmm3",
                   {2: vector_of([0xFFFFFFFF, 7, -3, 0x7FFFFFFF]), 3: vector_of([1, -8, 5, 2])})
    assert state.read_vector(1) == vector_of([0, -1, 2, 0x80000001])  # wrapping
    assert state.read_vector(4) == vector_of([0xFFFFFFFE, 15, -8, 0x7FFFFFFD])
    assert state.read_vector(5) == vector_of([-1, -56, -15, 0xFFFFFFFE])  # the low half of each product
    # VPDPBUSD: unsigned bytes of SRC1 times signed bytes of SRC2, four per dword, added to DEST (wrapping)
    state, _ = run("vpdpbusd xmm1, xmm2, xmm3", {1: vector_of([10, 0xFFFFFFFF]),
                                                  2: vector_of([0xFF01FF02, 0x01010101]),
                                                  3: vector_of([0x7F80FF01, 0x02020202])})
    assert state.read_vector(1) == vector_of([10 + 2 * 1 + 255 * -1 + 1 * -128 + 255 * 127, 7])
    state, _ = run("vpermd ymm1, ymm2, ymm3\nvpshufb xmm4, xmm5, xmm6",
                   {2: vector_of([7, 6, 5, 4, 3, 2, 1, 8]), 3: vector_of(range(100, 108)),
                    5: vector_of(range(100, 116), 8), 6: vector_of([0x80, 1, 0x0F, 0x13], 8)})
    assert state.read_vector(1) == vector_of([107, 106, 105, 104, 103, 102, 101, 100])  # index 8 is 0 (mod 8)
    assert state.read_vector(4) == vector_of([0, 101, 115, 103] + [100] * 12, 8)
    state, _ = run("vpmovsxbw xmm1, xmm2\nvpmovzxbd ymm3, xmm2", {2: vector_of([0x80, 0x7F, 0xFF, 1], 8)})
    assert state.read_vector(1) == vector_of([-128, 127, -1, 1, 0, 0, 0, 0], 16)
    assert state.read_vector(3) == vector_of([0x80, 0x7F, 0xFF, 1, 0, 0, 0, 0])


def test_fp32_examples_round_once():
    # 1 + 2^-24 + 2^-48: an FMA rounds the exact value once (up), a multiply then an add would round twice (down)
    a, b, c = f32(1 + 2 ** -23), f32(1 + 2 ** -23), f32(-1.0)
    state, _ = run("vfmadd231ps xmm1, xmm2, xmm3", {1: c, 2: a, 3: b})
    assert state.read_vector(1) == f32(2 ** -22 + 2 ** -46)
    state, _ = run("vaddps xmm1, xmm2, xmm3\nvmulps xmm4, xmm2, xmm5\nvcvtdq2ps xmm6, xmm7",
                   {2: vector_of([f32(-0.0), f32(1.5), 0x7F800000, 0x7F800001]),
                    3: vector_of([f32(-0.0), f32(-1.5), 0xFF800000, 0x7FC00002]),
                    5: vector_of([f32(2.0), 0, 0, 0]), 7: vector_of([16777217, -1, 0x7FFFFFFF, 3])})
    assert state.read_vector(1) == vector_of([0x80000000, 0, 0xFFC00000, 0x7FC00001])  # -0, +0, inf-inf, SNaN
    assert state.read_vector(4) == vector_of([0x80000000, 0, 0xFFC00000, 0x7FC00001])  # -0 x 2, 1.5 x 0, inf x 0
    assert state.read_vector(6) == vector_of([f32(16777216.0), f32(-1.0), f32(2.0 ** 31), f32(3.0)])


def test_bf16_conversion_examples():
    # ties to even, a carry into the exponent, a denormal read as zero, a NaN made quiet, infinity
    values = [0x3F808000, 0x3F818000, 0x3F80FFFF, 0x007FFFFF, 0x807FFFFF, 0x7F800001, 0xFF800000, 0x7F7FFFFF]
    state, _ = run("vcvtneps2bf16 xmm1, ymm2\nvcvtne2ps2bf16 xmm3, xmm4, xmm2",
                   {1: ALL_ONES, 2: vector_of(values), 4: vector_of([f32(1.0), f32(-2.0), 0, 0])})
    words = [0x3F80, 0x3F82, 0x3F81, 0x0000, 0x8000, 0x7FC0, 0xFF80, 0x7F80]
    assert state.read_vector(1) == vector_of(words, 16)  # bits 511:128 zeroed
    assert state.read_vector(3) == vector_of(words[:4] + [0x3F80, 0xC000, 0, 0], 16)


def test_shift_shuffle_insert_extract_examples():
    state, _ = run("vpsrld xmm1, xmm2, 0x4\nvpsrad xmm3, xmm2, xmm4\nvpslld xmm5, xmm2, 0x20\n"
                   "vpshufd xmm6, xmm2, 0x1b\nvpextrq rax, xmm2, 0x1\nvpinsrb xmm7, xmm2, ecx, 0xf\n"
                   "vextracti128 xmm8, ymm9, 0x1\nvpmaddwd xmm10, xmm11, xmm11",
                   {2: vector_of([0x80000010, 0x7FFFFFFF, 1, 0xF0000000]), 4: 40, 9: vector_of(range(8)),
                    11: vector_of([0x8000, 0x8000, 0x7FFF, 0xFFFF], 16)}, {"rcx": 0x1AB})
    assert state.read_vector(1) == vector_of([0x08000001, 0x07FFFFFF, 0, 0x0F000000])
    assert state.read_vector(3) == vector_of([-1, 0, 0, -1])  # a count above 31 fills with the sign
    assert state.read_vector(5) == 0  # a count above 31 clears
    assert state.read_vector(6) == vector_of([0xF0000000, 1, 0x7FFFFFFF, 0x80000010])
    assert state.read_register("rax") == 0xF000000000000001
    assert state.read_vector(7) == vector_of([0x80000010, 0x7FFFFFFF, 1, 0xAB000000])
    assert state.read_vector(8) == vector_of([4, 5, 6, 7])
    assert state.read_vector(10) == vector_of([0x80000000, 0x7FFF * 0x7FFF + 1])  # 2 * 2^30 wraps to 80000000H


def test_vzeroupper_clears_zmm0_15_above_bit_127_only():
    state, _ = run("vzeroupper", {n: ALL_ONES for n in range(32)})
    assert all(state.read_vector(n) == (1 << 128) - 1 for n in range(16))
    assert all(state.read_vector(n) == ALL_ONES for n in range(16, 32))


def test_aligned_forms_fault_on_misaligned_memory():
    for line in ("movaps xmm0, XMMWORD PTR [rdi+8]", "movdqa XMMWORD PTR [rdi+4], xmm0",
                 "pxor xmm0, XMMWORD PTR [rdi+1]", "vmovdqa ymm0, YMMWORD PTR [rdi+0x10]"):
        with pytest.raises(Fault) as info:
            run(line, {}, {"rdi": DATA})
        assert info.value.kind == "#GP", line
    run("movups xmm0, XMMWORD PTR [rdi+8]\nvmovdqu8 ymm0, YMMWORD PTR [rdi+1]\n"
        "vmovdqa ymm0, YMMWORD PTR [rdi+0x20]\nvpxor xmm0, xmm0, XMMWORD PTR [rdi+3]", {}, {"rdi": DATA})


def test_a_cpu_without_avx512_raises_ud(monkeypatch):
    from isasim.x86_amx import config as cpu_module

    lacking = dataclasses.replace(cpu_model("emerald-rapids"), name="no-avx512",
                                  features=cpu_model("emerald-rapids").features - {"AVX512F", "AVX512BW", "AVX512VL"})
    monkeypatch.setitem(cpu_module.CPU_MODELS, "no-avx512", lacking)
    for line in ("vmovdqu8 ymm0, ymm1", "vpbroadcastw xmm0, eax", "vpbroadcastw xmm16, xmm1"):
        with pytest.raises(Fault) as info:
            run(line, model="no-avx512")
        assert info.value.kind == "#UD" and "AVX512" in info.value.rule
    run("vpxor ymm0, ymm0, ymm0\nvpbroadcastw ymm1, xmm2\nvzeroupper\npxor xmm1, xmm1", model="no-avx512")


def test_the_row_decides_the_features(monkeypatch):
    from isasim.x86_amx import config as cpu_module

    base = cpu_model("emerald-rapids")
    for name, lacking, line in (("no-dq", "AVX512DQ", "kmovb k1, eax"), ("no-vl", "AVX512VL", "vpxord xmm1, xmm2, xmm3"),
                                ("no-bw", "AVX512BW", "vmovdqu16 zmm1{k1}, zmm2"), ("no-f", "AVX512F", "kmovw k1, eax"),
                                ("no-avx2", "AVX2", "vpbroadcastd ymm1, xmm2")):
        monkeypatch.setitem(cpu_module.CPU_MODELS, name, dataclasses.replace(base, name=name,
                                                                               features=base.features - {lacking}))
        with pytest.raises(Fault) as info:
            run(line, model=name)
        assert info.value.kind == "#UD" and lacking in info.value.rule, (line, info.value.rule)
    run("vpxord zmm1, zmm2, zmm3\nkmovw k1, eax", model="no-vl")


def test_every_model_has_the_features_of_every_form():
    for name in ("sapphire-rapids", "emerald-rapids", "granite-rapids"):
        assert {"SSE", "SSE2", "AVX", "AVX2", "FMA", "AVX512F", "AVX512BW", "AVX512DQ", "AVX512VL", "AVX512_VNNI",
                "AVX512_BF16", "AVX_VNNI"} <= cpu_model(name).features


def test_vector_registers_are_observed_only_when_not_zero():
    state, _ = run("nop")
    assert not any(name.startswith("zmm") for name in {**ISA.observe(state)["regs"], **ISA.observe(state)["arrays"]})
    state, _ = run("vpbroadcastw zmm7, eax", {}, {"rax": 1})
    assert ISA.observe(state)["arrays"]["zmm7"] == b"\x01\x00" * 32
    state.write_register("xmm7", 5)  # seeding by name: the view's bits, the rest zero
    assert state.read_register("zmm7") == 5 and state.read_register("ymm7") == 5


def test_a_kernel_prologue_runs_on_the_machine():
    text = ("push rbp\nmov rbp, rsp\nvpxor xmm0, xmm0, xmm0\nvmovdqu8 YMMWORD PTR [rsp-0x3f], ymm0\n"
            "mov BYTE PTR [rsp-0x40], 0x1\nvmovdqu8 YMMWORD PTR [rsp-0x20], ymm0\nvzeroupper\npop rbp\nret")
    state, mem, cpu = machine(memory=b"\xff" * 0x200)
    state.write_register("rsp", DATA + 0x100)
    state.write_register("rbp", 0x1234)
    for ins in assemble(text).instructions[:-1]:
        ins.form.execute(cpu, ins.operands)
    assert mem.read(DATA + 0xB8, 0x40) == b"\x01" + bytes(0x3F)  # the TileConfig block g++ builds, zeroed
    assert state.read_register("rbp") == 0x1234 and state.read_register("rsp") == DATA + 0x100


# ---- against this host's CPU (the silicon backend seeds and reads zmm0-31 through the XSAVE image) ----

HOST_FLAGS = next((line.split(":", 1)[1].split() for line in Path("/proc/cpuinfo").read_text().splitlines()
                   if line.startswith("flags")), []) if Path("/proc/cpuinfo").exists() else []
SILICON_DATA = 0x10000
# Every SSE/AVX/AVX2 form and direction forms/vector.py has, on seeded registers and memory, then each
# register stored, so that both the registers and the memory are compared.
SSE_AVX_PROGRAM = """
    pxor xmm0, xmm1
    pxor xmm2, XMMWORD PTR [rdi+0x40]
    vpxor xmm3, xmm4, xmm5
    vpxor ymm6, ymm7, YMMWORD PTR [rdi+0x60]
    vpxor xmm8, xmm9, XMMWORD PTR [rdi+0x80]
    movaps xmm10, XMMWORD PTR [rdi+0x90]
    movaps XMMWORD PTR [rsi], xmm11
    movaps xmm12, xmm13
    movups xmm14, XMMWORD PTR [rdi+0x3]
    movups XMMWORD PTR [rsi+0x11], xmm15
    movups xmm1, xmm14
    movdqa xmm4, XMMWORD PTR [rdi+0xa0]
    movdqa XMMWORD PTR [rsi+0x20], xmm5
    movdqa xmm7, xmm2
    vmovdqa ymm9, YMMWORD PTR [rdi+0xc0]
    vmovdqa YMMWORD PTR [rsi+0x40], ymm10
    vmovdqa xmm11, XMMWORD PTR [rdi+0xe0]
    vmovdqa XMMWORD PTR [rsi+0x60], xmm12
    vmovdqa ymm13, ymm3
    vpbroadcastw xmm15, xmm6
    vpbroadcastw ymm0, WORD PTR [rdi+0x7]
    vmovdqa YMMWORD PTR [rsi+0x80], ymm0
    vzeroupper
    vmovdqa YMMWORD PTR [rsi+0xa0], ymm9
"""
AVX512_PROGRAM = """
    vmovdqu8 zmm1, ZMMWORD PTR [rdi+0x5]
    vmovdqu8 ZMMWORD PTR [rsi+0x3], zmm17
    vmovdqu8 zmm18, zmm2
    vmovdqu8 ymm19, YMMWORD PTR [rdi+0x41]
    vmovdqu8 YMMWORD PTR [rsi+0x80], ymm20
    vmovdqu8 xmm21, XMMWORD PTR [rdi+0x81]
    vmovdqu8 XMMWORD PTR [rsi+0xc1], xmm22
    vmovdqu8 xmm3, xmm23
    vpbroadcastw zmm4, xmm24
    vpbroadcastw zmm25, WORD PTR [rdi+0x9]
    vpbroadcastw zmm26, eax
    vpbroadcastw ymm27, ecx
    vpbroadcastw xmm28, xmm5
    vpbroadcastw ymm29, xmm6
    vmovdqu8 ZMMWORD PTR [rsi+0x100], zmm26
    vpxor xmm7, xmm8, xmm9
    vzeroupper
    vmovdqu8 ZMMWORD PTR [rsi+0x140], zmm1
    vmovdqu8 ZMMWORD PTR [rsi+0x180], zmm25
"""


# issue 27: every mask form (merging, zeroing, masked stores), the GPR <-> xmm moves, the zeroing and all-ones
# idioms, the broadcasts and the opmask instructions; the k registers are stored to memory (a trace does not
# observe them) and KORTEST's flags are compared after it.
MASKED_PROGRAM = """
    mov eax, 0xa5c3
    kmovw k1, eax
    mov rax, 0x8000000180f0ff01
    kmovq k2, rax
    kmovb k3, BYTE PTR [rdi+0x11]
    kmovd k4, DWORD PTR [rdi+0x13]
    kxorw k5, k5, k5
    kxorq k6, k1, k2
    kxorb k7, k2, k3
    kxord k4, k4, k1
    vmovdqu32 zmm1{k1}{z}, ZMMWORD PTR [rdi+0x4]
    vmovdqu32 zmm2{k1}, ZMMWORD PTR [rdi+0x44]
    vmovdqu64 zmm3{k2}, zmm17
    vmovdqu16 zmm18{k2}{z}, ZMMWORD PTR [rdi+0x2]
    vmovdqu8 ymm19{k2}, YMMWORD PTR [rdi+0x81]
    vmovdqu8 XMMWORD PTR [rsi+0x1]{k2}, xmm20
    vmovdqa64 zmm4{k3}, ZMMWORD PTR [rdi+0xc0]
    vmovdqa32 ZMMWORD PTR [rsi+0x40]{k1}, zmm21
    vmovdqa64 ymm22{k3}{z}, ymm5
    vmovdqu64 ZMMWORD PTR [rsi+0x83]{k2}, zmm6
    vmovdqu32 ymm23{k1}, YMMWORD PTR [rdi+0x103]
    vmovups zmm7{k1}{z}, ZMMWORD PTR [rdi+0x7]
    vmovups YMMWORD PTR [rsi+0xc5]{k3}, ymm24
    vmovaps zmm8{k1}, ZMMWORD PTR [rdi+0x140]
    vmovaps ymm9, YMMWORD PTR [rdi+0x180]
    vmovupd zmm25{k2}{z}, zmm10
    vmovupd XMMWORD PTR [rsi+0x107], xmm11
    vmovapd xmm12{k3}, XMMWORD PTR [rdi+0x1c0]
    vmovaps XMMWORD PTR [rsi+0x120], xmm13
    vmovdqu ymm14, YMMWORD PTR [rdi+0x9]
    movdqu xmm15, XMMWORD PTR [rdi+0x1b]
    movdqu XMMWORD PTR [rsi+0x131], xmm6
    vmovdqu8 ZMMWORD PTR [rsi+0x140], zmm1
    vmovdqu8 ZMMWORD PTR [rsi+0x180], zmm2
    movd xmm1, eax
    movd ecx, xmm2
    movq xmm2, rcx
    movq rdx, xmm3
    movq xmm3, xmm4
    movq xmm4, QWORD PTR [rdi+0x21]
    movq QWORD PTR [rsi+0x1c1], xmm5
    movd DWORD PTR [rsi+0x1c9], xmm6
    vmovd xmm17, ecx
    vmovd r8d, xmm18
    vmovq xmm19, rdx
    vmovq r9, xmm20
    vmovq xmm21, xmm22
    vmovq xmm6, QWORD PTR [rdi+0x31]
    vmovd xmm7, DWORD PTR [rdi+0x39]
    vmovq QWORD PTR [rsi+0x1d1], xmm27
    vpxord zmm8, zmm8, zmm8
    vpxord zmm28{k1}, zmm29, ZMMWORD PTR [rdi+0x200]
    vpxorq ymm9{k2}{z}, ymm10, ymm11
    vpternlogd zmm10, zmm10, zmm10, 0xff
    vpternlogd zmm11{k1}, zmm12, zmm13, 0x96
    vpternlogq ymm30{k3}{z}, ymm14, YMMWORD PTR [rdi+0x240], 0xca
    vpternlogd xmm31, xmm15, xmm16, 0x1e
    vpbroadcastb zmm12, eax
    vpbroadcastb ymm13{k2}, xmm1
    vpbroadcastb xmm14, BYTE PTR [rdi+0x3]
    vpbroadcastd zmm15{k1}{z}, ecx
    vpbroadcastd ymm16, DWORD PTR [rdi+0x5]
    vpbroadcastd xmm17, xmm2
    vpbroadcastq zmm18{k3}, rdx
    vpbroadcastq ymm19, QWORD PTR [rdi+0x7]
    vpbroadcastq xmm20, xmm3
    vpbroadcastw zmm21{k1}{z}, eax
    vbroadcastss zmm22{k1}, DWORD PTR [rdi+0x9]
    vbroadcastss ymm23, xmm4
    vbroadcastss xmm5, DWORD PTR [rdi+0xb]
    kortestw k1, k2
    kortestb k5, k5
    mov eax, 0xffffffff
    kmovd k5, eax
    kortestd k5, k0
    kortestq k6, k7
    kmovq QWORD PTR [rsi+0x210], k1
    kmovq QWORD PTR [rsi+0x218], k2
    kmovq QWORD PTR [rsi+0x220], k3
    kmovq QWORD PTR [rsi+0x228], k4
    kmovq QWORD PTR [rsi+0x230], k5
    kmovq QWORD PTR [rsi+0x238], k6
    kmovq QWORD PTR [rsi+0x240], k7
    kmovw WORD PTR [rsi+0x248], k6
    kmovb BYTE PTR [rsi+0x24a], k6
    kmovd DWORD PTR [rsi+0x24b], k6
    kmovw eax, k2
    kmovb ecx, k2
    kmovd edx, k2
    kmovq r10, k2
"""


# issue 27's arithmetic: every form, width and mask kind, then results fed back into the fp32 forms.
ARITHMETIC_PROGRAM = """
    mov eax, 0xa5c3
    kmovw k1, eax
    mov rax, 0x8000000180f0ff01
    kmovq k2, rax
    vpaddd zmm1, zmm2, zmm3
    vpaddd zmm4{k1}{z}, zmm5, ZMMWORD PTR [rdi+0x40]
    vpaddd ymm17, ymm18, ymm19
    vpsubd xmm6, xmm7, xmm8
    vpsubd zmm20{k1}, zmm21, zmm22
    vpmulld zmm9, zmm10, zmm11
    vpmulld ymm12, ymm13, YMMWORD PTR [rdi+0x84]
    vpmulld zmm23{k1}{z}, zmm24, zmm25
    vpdpbusd zmm26, zmm27, zmm28
    vpdpbusd ymm29{k1}, ymm30, YMMWORD PTR [rdi+0x101]
    vpdpbusd xmm31, xmm14, xmm15
    vpermd zmm1, zmm2, zmm3
    vpermd ymm4{k1}{z}, ymm5, YMMWORD PTR [rdi+0x11]
    vpshufb zmm6, zmm7, zmm8
    vpshufb ymm9{k2}, ymm10, ymm11
    vpshufb xmm12, xmm13, XMMWORD PTR [rdi+0x23]
    vpmovzxbw zmm14, ymm15
    vpmovzxbw zmm16{k2}{z}, YMMWORD PTR [rdi+0x37]
    vpmovzxbd zmm17, xmm18
    vpmovzxbd ymm19{k1}, QWORD PTR [rdi+0x41]
    vpmovzxwd zmm20, ymm21
    vpmovzxwd xmm22, QWORD PTR [rdi+0x53]
    vpmovsxbw zmm23{k2}, ymm24
    vpmovsxbw xmm25, xmm26
    vpmovsxbd zmm27, XMMWORD PTR [rdi+0x65]
    vpmovsxbd xmm28, xmm29
    vpmovsxwd zmm30{k1}{z}, ymm31
    vpmovsxwd ymm1, XMMWORD PTR [rdi+0x77]
    vcvtdq2ps zmm2, zmm3
    vcvtdq2ps ymm4{k1}, YMMWORD PTR [rdi+0x89]
    vcvtdq2ps xmm5, xmm6
    vaddps zmm7, zmm8, zmm9
    vaddps zmm10{k1}{z}, zmm11, ZMMWORD PTR [rdi+0x9b]
    vaddps ymm12, ymm13, ymm14
    vmulps zmm15, zmm16, zmm17
    vmulps xmm18{k1}, xmm19, XMMWORD PTR [rdi+0xad]
    vmulps ymm20, ymm21, ymm22
    vfmadd231ps zmm23, zmm24, zmm25
    vfmadd231ps zmm26{k1}, zmm27, ZMMWORD PTR [rdi+0xbf]
    vfmadd231ps ymm8, ymm9, ymm10
    vfmadd231ps xmm11{k2}{z}, xmm12, xmm13
    vcvtne2ps2bf16 zmm14, zmm15, zmm16
    vcvtne2ps2bf16 ymm17{k1}, ymm18, YMMWORD PTR [rdi+0xd1]
    vcvtne2ps2bf16 xmm19, xmm20, xmm21
    vcvtneps2bf16 ymm22, zmm23
    vcvtneps2bf16 xmm24{k1}{z}, YMMWORD PTR [rdi+0xe3]
    vcvtneps2bf16 xmm25, xmm26
    vmulps zmm27, zmm7, zmm15
    vfmadd231ps zmm28, zmm27, zmm2
    vaddps zmm29, zmm28, zmm23
"""


# what g++ and clang emitted besides in tests/x86_amx/compiled's kernels: logic, shifts by imm8 and by xmm,
# shuffles, GPR inserts and extracts, 128/256-bit lane extracts and broadcasts, widening, VPMADDWD, unpacks.
SHUFFLE_PROGRAM = """
    mov eax, 0xa5c3
    kmovw k1, eax
    mov rax, 0x8000000180f0ff01
    kmovq k2, rax
    vpand ymm1, ymm2, ymm3
    vpandd zmm4{k1}{z}, zmm23, zmm25
    vpandq zmm5{k2}, zmm6, ZMMWORD PTR [rdi+0x40]
    vpor xmm7, xmm8, xmm9
    vpord zmm17, zmm18, zmm19
    vporq ymm20{k1}, ymm21, ymm22
    vxorps xmm10, xmm10, xmm10
    vxorps zmm11{k1}, zmm12, zmm13
    vpslld zmm14, zmm15, 0x3
    vpslld ymm16{k2}{z}, ymm17, xmm18
    vpsrld zmm19, ZMMWORD PTR [rdi+0x80], 0x11
    vpsrld xmm20, xmm21, XMMWORD PTR [rdi+0xc0]
    vpsrad zmm22, zmm23, 0x1f
    vpsrad ymm24, ymm25, xmm26
    vpsrad xmm27{k1}, xmm28, 0x4
    vpshufd zmm29, zmm30, 0x1b
    vpshufd ymm1{k1}{z}, YMMWORD PTR [rdi+0x3], 0x4e
    vpextrd eax, xmm2, 0x2
    vpextrd DWORD PTR [rsi+0x4], xmm3, 0x1
    vpextrq rcx, xmm24, 0x1
    vpextrq QWORD PTR [rsi+0x10], xmm4, 0x0
    vpinsrb xmm5, xmm6, BYTE PTR [rdi+0x5], 0x5
    vpinsrb xmm17, xmm7, ecx, 0xf
    vpinsrd xmm8, xmm9, eax, 0x3
    vpinsrq xmm10, xmm11, rcx, 0x1
    vpinsrq xmm12, xmm13, QWORD PTR [rdi+0x9], 0x0
    vextracti128 xmm14, ymm15, 0x1
    vextracti128 XMMWORD PTR [rsi+0x20], ymm6, 0x0
    vextracti32x4 xmm18, zmm19, 0x3
    vextracti32x4 XMMWORD PTR [rsi+0x31]{k1}, zmm20, 0x2
    vextracti32x4 xmm21{k1}{z}, ymm22, 0x1
    vextracti64x4 ymm23, zmm24, 0x1
    vextracti64x4 YMMWORD PTR [rsi+0x43]{k2}, zmm25, 0x0
    vbroadcasti128 ymm6, XMMWORD PTR [rdi+0x11]
    vbroadcasti64x4 zmm27{k2}{z}, YMMWORD PTR [rdi+0x21]
    vpmovsxdq zmm28, ymm29
    vpmovsxdq xmm30{k1}, QWORD PTR [rdi+0x31]
    vpmovzxdq zmm31, YMMWORD PTR [rdi+0x41]
    vpmovzxdq ymm1, xmm2
    vpmaddwd zmm3, zmm4, zmm5
    vpmaddwd ymm6{k1}{z}, ymm7, YMMWORD PTR [rdi+0x51]
    vpunpcklwd zmm8, zmm9, zmm10
    vpunpcklwd ymm11{k2}, ymm12, ymm13
    vpunpckhwd zmm14, zmm15, ZMMWORD PTR [rdi+0x61]
    vpunpckhwd xmm16, xmm17, xmm18
    vperm2i128 ymm1, ymm2, ymm3, 0x21
    vperm2i128 ymm4, ymm5, YMMWORD PTR [rdi+0x71], 0x38
    vperm2i128 ymm9, ymm10, ymm11, 0x83
    vpermt2w zmm24, zmm25, zmm26
    vpermt2w ymm27{k1}{z}, ymm28, YMMWORD PTR [rdi+0x81]
    vpermt2w xmm29{k2}, xmm30, xmm31
"""


def fp32_palette(rng) -> int:
    """A float's bits, drawn where the fp32 and BF16 rules have their cases: signed zeros, infinities, quiet and
    signalling NaNs, denormals, BF16 rounding ties, results near underflow and overflow, and ordinary values."""
    kind = rng.randrange(10)
    sign = rng.getrandbits(1) << 31
    if kind == 0:
        return rng.choice([0, 0x80000000, 0x7F800000, 0xFF800000, 0x7FC00000, 0xFFC00000, 0x7F800001, 0xFFA00000,
                           0x00000001, 0x807FFFFF, 0x00800000, 0x7F7FFFFF, 0xFF7FFFFF])
    if kind == 1:
        return sign | rng.getrandbits(23)  # a denormal
    if kind == 2:
        return rng.getrandbits(32)
    if kind == 3:
        return sign | rng.randrange(120, 135) << 23 | rng.getrandbits(7) << 16 | 0x8000  # a BF16 tie
    if kind == 4:
        return sign | rng.randrange(0, 3) << 23 | rng.getrandbits(23)
    if kind == 5:
        return rng.randrange(250, 255) << 23 | rng.getrandbits(23)
    return sign | rng.randrange(110, 145) << 23 | rng.getrandbits(23)


def silicon_diff(program: str, registers: range, bits: int, *, seed: int = 15, floats: bool = False):
    """The program's lockstep diff, simulator against this CPU, from seeded vector registers, GPRs and memory
    (``floats``: the registers and the data drawn from fp32_palette)."""
    import random

    from isasim.core.diff import diff
    from isasim.core.trace import Init

    rng = random.Random(seed)
    arrays = {f"zmm{n}": rng.getrandbits(bits).to_bytes(64, "little") for n in registers}
    if floats:
        arrays = {f"zmm{n}": b"".join(fp32_palette(rng).to_bytes(4, "little") for _ in range(16)) for n in registers}
    init = Init(regs={"rdi": SILICON_DATA, "rsi": SILICON_DATA + 0x1000, "rax": 0x8001_7F80, "rcx": 0x1234_FFFF},
                memory=[(SILICON_DATA, b"".join(fp32_palette(rng).to_bytes(4, "little") for _ in range(0x400))
                         if floats else rng.randbytes(0x1000), False), (SILICON_DATA + 0x1000, bytes(0x1000), True)],
                arrays=arrays)
    program = ISA.assemble(".intel_syntax noprefix\n" + program + "    ret\n")
    return diff("x86_amx", {}, program, init, mode="lockstep"), program, init


@pytest.mark.needs_silicon
@pytest.mark.skipif("avx2" not in HOST_FLAGS, reason="this CPU has no AVX2 (/proc/cpuinfo): the VEX forms cannot run on it")
def test_sse_and_avx_forms_on_silicon():
    report, program, _init = silicon_diff(SSE_AVX_PROGRAM, range(16), 256)
    assert report.divergence is None, report.divergence.describe()
    assert report.steps == len(program.instructions)


@pytest.mark.needs_silicon
@pytest.mark.skipif(not {"avx512f", "avx512bw", "avx512vl"} <= set(HOST_FLAGS),
                    reason="this CPU has no AVX-512 F/BW/VL (/proc/cpuinfo): the EVEX forms cannot run on it")
def test_evex_forms_on_silicon():
    report, program, _init = silicon_diff(AVX512_PROGRAM, range(32), 512)
    assert report.divergence is None, report.divergence.describe()
    assert report.steps == len(program.instructions)


@pytest.mark.needs_silicon
@pytest.mark.skipif(not {"avx512f", "avx512bw", "avx512vl", "avx512dq"} <= set(HOST_FLAGS),
                    reason="this CPU has no AVX-512 F/BW/VL/DQ (/proc/cpuinfo): the masked forms cannot run on it")
def test_masked_moves_broadcasts_and_opmask_forms_on_silicon():
    report, program, _init = silicon_diff(MASKED_PROGRAM, range(32), 512)
    assert report.divergence is None, report.divergence.describe()
    assert report.steps == len(program.instructions)


@pytest.mark.needs_silicon
@pytest.mark.skipif(not {"avx512f", "avx512bw", "avx512vl", "avx512_vnni", "avx512_bf16"} <= set(HOST_FLAGS),
                    reason="this CPU lacks AVX-512 F/BW/VL/VNNI/BF16 (/proc/cpuinfo): the arithmetic cannot run on it")
@pytest.mark.parametrize("seed", range(12))
def test_arithmetic_bf16_and_fp32_forms_on_silicon(seed):
    """Each fp32 result, BF16 conversion and NaN choice against this CPU, on values drawn where the rules
    have their cases (and on random bits for seed 0)."""
    report, program, _init = silicon_diff(ARITHMETIC_PROGRAM, range(32), 512, seed=seed, floats=seed > 0)
    assert report.divergence is None, report.divergence.describe()
    assert report.steps == len(program.instructions)


@pytest.mark.needs_silicon
@pytest.mark.skipif(not {"avx512f", "avx512bw", "avx512vl", "avx512dq"} <= set(HOST_FLAGS),
                    reason="this CPU lacks AVX-512 F/BW/VL/DQ (/proc/cpuinfo)")
@pytest.mark.parametrize("seed", range(4))
def test_logic_shift_shuffle_and_lane_forms_on_silicon(seed):
    report, program, _init = silicon_diff(SHUFFLE_PROGRAM, range(32), 512, seed=seed, floats=seed % 2 == 1)
    assert report.divergence is None, report.divergence.describe()
    assert report.steps == len(program.instructions)


@pytest.mark.needs_silicon
@pytest.mark.skipif("avx" not in HOST_FLAGS, reason="this CPU has no AVX (/proc/cpuinfo)")
def test_silicon_seeds_and_reads_vector_registers_where_the_cpu_keeps_them():
    """A planted check of the backend's XSAVE offsets (CPUID leaf 0DH): registers seeded through the image
    come back from the CPU's own stores byte for byte, and an unchanged register reads back as seeded."""
    from isasim.core.backends import get_backend
    from isasim.core.trace import Init

    count, bits = (32, 512) if "avx512f" in HOST_FLAGS else (16, 256)
    values = {n: int.from_bytes(bytes((n * 7 + i) % 251 + 1 for i in range(bits // 8)), "little") for n in range(count)}
    store = "vmovdqu8 ZMMWORD PTR [rdi+{at}], zmm{n}" if bits == 512 else "vmovdqa YMMWORD PTR [rdi+{at}], ymm{n}"
    text = ".intel_syntax noprefix\n" + "\n".join(store.format(at=hex(64 * n), n=n) for n in range(count)) + "\nret\n"
    init = Init(regs={"rdi": SILICON_DATA}, memory=[(SILICON_DATA, bytes(64 * count), True)],
                arrays={f"zmm{n}": v.to_bytes(64, "little") for n, v in values.items()})
    program = ISA.assemble(text)
    final = get_backend("silicon", "x86_amx", program).run("x86_amx", {}, program, init)
    assert final.fault is None, final.fault.describe()
    stored = final.read_memory(SILICON_DATA, 64 * count)
    for n, value in values.items():
        assert stored[64 * n:64 * n + bits // 8] == value.to_bytes(bits // 8, "little"), f"zmm{n}"
        assert final.observed["arrays"][f"zmm{n}"] == value.to_bytes(64, "little"), f"zmm{n}"


def test_a_trace_seeds_a_zmm_register_as_64_bytes():
    from isasim.core.errors import ConfigError

    state = X86AmxState(model=cpu_model("emerald-rapids"))
    ISA.seed_arrays(state, {"zmm3": bytes(range(64))})
    assert state.read_vector(3) == PATTERN and ISA.observe(state)["arrays"]["zmm3"] == bytes(range(64))
    with pytest.raises(ConfigError, match="64 bytes"):
        ISA.seed_arrays(state, {"zmm3": bytes(16)})


# issue 27: scalar single precision (SSE, VEX and EVEX with masks): moves, arithmetic, conversions to and from
# integers, compares (flags, read by SETcc), FMA and rounding, on the fp32 palette and on random bits
SCALAR_FP_PROGRAM = """
    mov eax, 0xa5c3
    kmovw k1, eax
    mov eax, 0x5a3c
    kmovw k2, eax
    movss xmm1, DWORD PTR [rdi+0x4]
    movss xmm2, xmm3
    movss DWORD PTR [rsi+0x8], xmm4
    vmovss xmm5, DWORD PTR [rdi+0x8]
    vmovss xmm6, xmm7, xmm8
    vmovss DWORD PTR [rsi+0xc], xmm9
    vmovss xmm17{k1}{z}, DWORD PTR [rdi+0xc]
    vmovss xmm18{k2}, xmm19, xmm20
    vmovss xmm21{k2}{z}, xmm19, xmm20
    vmovss DWORD PTR [rsi+0x10]{k1}, xmm22
    vmovss DWORD PTR [rsi+0x14]{k2}, xmm22
    addss xmm10, xmm11
    addss xmm12, DWORD PTR [rdi+0x10]
    subss xmm13, xmm14
    subss xmm15, DWORD PTR [rdi+0x14]
    mulss xmm0, xmm1
    mulss xmm2, DWORD PTR [rdi+0x18]
    divss xmm3, xmm4
    divss xmm5, DWORD PTR [rdi+0x1c]
    maxss xmm6, xmm7
    maxss xmm8, DWORD PTR [rdi+0x20]
    minss xmm9, xmm10
    minss xmm11, DWORD PTR [rdi+0x24]
    vaddss xmm12, xmm13, xmm14
    vaddss xmm23{k1}{z}, xmm24, DWORD PTR [rdi+0x28]
    vsubss xmm15, xmm0, DWORD PTR [rdi+0x2c]
    vsubss xmm25{k2}, xmm26, xmm27
    vmulss xmm1, xmm2, xmm3
    vmulss xmm28, xmm29, xmm30
    vdivss xmm4, xmm5, xmm6
    vdivss xmm31{k1}, xmm16, DWORD PTR [rdi+0x30]
    vmaxss xmm7, xmm8, xmm9
    vmaxss xmm17, xmm18, DWORD PTR [rdi+0x34]
    vminss xmm10, xmm11, xmm12
    vminss xmm19{k2}{z}, xmm20, xmm21
    cvtsi2ss xmm13, eax
    cvtsi2ss xmm14, rcx
    cvtsi2ss xmm15, DWORD PTR [rdi+0x38]
    cvtsi2ss xmm0, QWORD PTR [rdi+0x3c]
    vcvtsi2ss xmm1, xmm2, ecx
    vcvtsi2ss xmm3, xmm4, rax
    vcvtsi2ss xmm22, xmm23, QWORD PTR [rdi+0x44]
    vcvtsi2ss xmm5, xmm6, DWORD PTR [rdi+0x4c]
    cvttss2si eax, xmm7
    cvttss2si rcx, DWORD PTR [rdi+0x50]
    cvtss2si edx, xmm8
    cvtss2si r8, DWORD PTR [rdi+0x54]
    vcvttss2si r9d, xmm9
    vcvttss2si r10, xmm24
    vcvtss2si r11d, DWORD PTR [rdi+0x58]
    vcvtss2si rdx, xmm25
    ucomiss xmm10, xmm11
    setp bl
    setb bh
    ucomiss xmm12, DWORD PTR [rdi+0x5c]
    comiss xmm13, xmm14
    comiss xmm15, DWORD PTR [rdi+0x60]
    vucomiss xmm0, xmm1
    vucomiss xmm26, DWORD PTR [rdi+0x64]
    vcomiss xmm2, xmm3
    vcomiss xmm27, xmm28
    vfmadd132ss xmm4, xmm5, xmm6
    vfmadd213ss xmm7, xmm8, DWORD PTR [rdi+0x68]
    vfmadd231ss xmm9, xmm10, xmm11
    vfmadd231ss xmm29{k1}{z}, xmm30, xmm31
    vfmadd213ss xmm16{k2}, xmm17, xmm18
    roundss xmm12, xmm13, 0x0
    roundss xmm14, DWORD PTR [rdi+0x6c], 0x9
    roundss xmm15, xmm0, 0xa
    roundss xmm1, xmm2, 0xb
    vroundss xmm3, xmm4, xmm5, 0x4
    vroundss xmm6, xmm7, DWORD PTR [rdi+0x70], 0x1
    vrndscaless xmm19, xmm20, xmm21, 0x4
    vrndscaless xmm22{k1}, xmm23, DWORD PTR [rdi+0x74], 0x32
    vrndscaless xmm24{k2}{z}, xmm25, xmm26, 0xf3
"""


@pytest.mark.needs_silicon
@pytest.mark.skipif(not {"avx512f", "avx512vl", "fma", "sse4_1"} <= set(HOST_FLAGS),
                    reason="this CPU lacks AVX-512 F/VL, FMA or SSE4.1 (/proc/cpuinfo)")
@pytest.mark.parametrize("seed", range(6))
def test_scalar_single_precision_forms_on_silicon(seed):
    """Each scalar fp32 result, NaN choice (MAXSS/MINSS's second operand, even a signalling NaN), integer
    indefinite and compare flag against this CPU, after every instruction."""
    report, program, _init = silicon_diff(SCALAR_FP_PROGRAM, range(32), 512, seed=seed, floats=seed > 0)
    assert report.divergence is None, report.divergence.describe()
    assert report.steps == len(program.instructions)


# issue 27: packed single precision (SSE with aligned m128, VEX and EVEX with masks)
PACKED_FP_PROGRAM = """
    mov eax, 0xa5c3
    kmovw k1, eax
    mov eax, 0x5a3c
    kmovw k2, eax
    addps xmm0, xmm1
    addps xmm2, XMMWORD PTR [rdi+0x10]
    subps xmm3, xmm4
    mulps xmm5, XMMWORD PTR [rdi+0x20]
    divps xmm6, xmm7
    divps xmm8, XMMWORD PTR [rdi+0x30]
    maxps xmm9, xmm10
    maxps xmm11, XMMWORD PTR [rdi+0x40]
    minps xmm12, xmm13
    minps xmm14, XMMWORD PTR [rdi+0x50]
    andps xmm15, xmm0
    orps xmm1, XMMWORD PTR [rdi+0x60]
    xorps xmm2, xmm3
    andnps xmm4, xmm5
    cvtdq2ps xmm6, xmm7
    cvtdq2ps xmm8, XMMWORD PTR [rdi+0x70]
    cvttps2dq xmm9, xmm10
    cvttps2dq xmm11, XMMWORD PTR [rdi+0x80]
    cvtps2dq xmm12, xmm13
    cvtps2dq xmm14, XMMWORD PTR [rdi+0x90]
    unpcklps xmm15, xmm0
    unpckhps xmm1, XMMWORD PTR [rdi+0xa0]
    unpcklpd xmm2, xmm3
    unpckhpd xmm4, xmm5
    vsubps zmm16, zmm17, zmm18
    vsubps ymm19{k1}{z}, ymm20, YMMWORD PTR [rdi+0xb3]
    vsubps xmm0, xmm1, xmm2
    vdivps zmm21{k2}, zmm22, zmm23
    vdivps ymm3, ymm4, ymm5
    vmaxps zmm24, zmm25, ZMMWORD PTR [rdi+0xc1]
    vmaxps ymm6{k1}, ymm7, ymm8
    vminps zmm26{k2}{z}, zmm27, zmm28
    vminps xmm9, xmm10, XMMWORD PTR [rdi+0xd1]
    vandps ymm11, ymm12, ymm13
    vandps zmm29{k1}, zmm30, zmm31
    vorps xmm14, xmm15, xmm0
    vorps zmm16, zmm17, zmm18
    vandnps ymm1, ymm2, YMMWORD PTR [rdi+0xe5]
    vandnps zmm19{k2}{z}, zmm20, zmm21
    vunpcklps ymm3, ymm4, ymm5
    vunpcklps zmm22{k1}, zmm23, zmm24
    vunpckhps ymm6, ymm7, YMMWORD PTR [rdi+0xf1]
    vunpckhps zmm25, zmm26, zmm27
    vunpcklpd zmm28{k2}{z}, zmm29, zmm30
    vunpckhpd ymm8, ymm9, ymm10
    vhaddps ymm11, ymm12, ymm13
    vhaddps xmm14, xmm15, XMMWORD PTR [rdi+0x101]
    vcvttps2dq zmm31, zmm16
    vcvttps2dq ymm0{k1}{z}, YMMWORD PTR [rdi+0x111]
    vcvttps2dq xmm1, xmm2
    vcvtps2dq zmm17{k2}, zmm18
    vcvtps2dq ymm3, ymm4
    vfmadd132ps ymm5, ymm6, ymm7
    vfmadd132ps zmm19{k1}{z}, zmm20, zmm21
    vfmadd213ps ymm8, ymm9, YMMWORD PTR [rdi+0x121]
    vfmadd213ps zmm22{k2}, zmm23, zmm24
    haddps xmm10, xmm11
    haddps xmm12, XMMWORD PTR [rdi+0x130]
    roundps xmm13, xmm14, 0x0
    roundps xmm15, xmm0, 0x9
    roundps xmm1, XMMWORD PTR [rdi+0x140], 0xa
    roundps xmm2, xmm3, 0xb
    vroundps ymm4, ymm5, 0x4
    vroundps xmm6, XMMWORD PTR [rdi+0x151], 0x1
    vrndscaleps zmm25, zmm26, 0x4
    vrndscaleps ymm27{k1}{z}, ymm28, 0x23
    vrndscaleps zmm29{k2}, ZMMWORD PTR [rdi+0x161], 0xf2
    shufps xmm7, xmm8, 0x88
    shufps xmm9, XMMWORD PTR [rdi+0x170], 0xdd
    vshufps ymm10, ymm11, ymm12, 0x1b
    vshufps zmm30{k1}, zmm31, zmm16, 0x44
    movhlps xmm13, xmm14
    movlhps xmm15, xmm0
    movlps QWORD PTR [rsi+0x8], xmm1
    movlps xmm2, QWORD PTR [rdi+0x183]
    movhps xmm3, QWORD PTR [rdi+0x18b]
    movhps QWORD PTR [rsi+0x18], xmm4
    vinsertf128 ymm5, ymm6, xmm7, 0x1
    vinsertf128 ymm8, ymm9, XMMWORD PTR [rdi+0x191], 0x0
    vinserti128 ymm10, ymm11, xmm12, 0x1
    vinserti32x4 zmm17, zmm18, xmm19, 0x3
    vinserti32x4 ymm20{k1}{z}, ymm21, XMMWORD PTR [rdi+0x1a1], 0x1
    vinserti64x4 zmm22, zmm23, ymm24, 0x1
    vinserti64x4 zmm25{k2}, zmm26, YMMWORD PTR [rdi+0x1b1], 0x0
    vextractf128 xmm13, ymm14, 0x1
    vextractf128 XMMWORD PTR [rsi+0x20], ymm15, 0x1
    vextractf32x4 xmm27{k1}{z}, zmm28, 0x3
    vextractf32x4 xmm0, ymm1, 0x1
    vextracti64x2 xmm29, ymm30, 0x1
    vextracti64x2 XMMWORD PTR [rsi+0x31]{k2}, zmm31, 0x2
    vblendvps xmm2, xmm3, xmm4, xmm5
    vblendvps ymm6, ymm7, YMMWORD PTR [rdi+0x1c1], ymm8
    vpblendvb ymm9, ymm10, ymm11, ymm12
    vpblendvb xmm13, xmm14, XMMWORD PTR [rdi+0x1d1], xmm15
    vblendmps zmm16{k1}, zmm17, zmm18
    vblendmps ymm19{k2}{z}, ymm20, YMMWORD PTR [rdi+0x1e1]
    vblendmps xmm21, xmm22, xmm23
    vpblendmb ymm24{k1}, ymm25, ymm26
    vpblendmd zmm27{k2}, zmm28, ZMMWORD PTR [rdi+0x1f1]
"""


@pytest.mark.needs_silicon
@pytest.mark.skipif(not {"avx512f", "avx512vl", "avx512dq", "avx512bw", "fma", "sse4_1"} <= set(HOST_FLAGS), reason="this CPU lacks avx512f, avx512vl, avx512dq, avx512bw, fma, sse4_1 (/proc/cpuinfo)")
@pytest.mark.parametrize("seed", range(4))
def test_packed_single_precision_forms_on_silicon(seed):
    """Each packed fp32 result, NaN choice, integer indefinite, shuffle, lane move and blend against this CPU."""
    report, program, _init = silicon_diff(PACKED_FP_PROGRAM, range(32), 512, seed=seed, floats=seed > 0)
    assert report.divergence is None, report.divergence.describe()
    assert report.steps == len(program.instructions)


# issue 27: packed integers (SSE2 with aligned m128, VEX, EVEX with masks and compares into masks)
PACKED_INTEGER_PROGRAM = """
    mov eax, 0xa5c3
    kmovw k1, eax
    mov rax, 0x5a3c96e1f00f1234
    kmovq k2, rax
    paddb xmm0,xmm1
    paddw xmm3,XMMWORD PTR [rdi+0x50]
    paddd xmm6,xmm7
    paddd xmm1,XMMWORD PTR [rdi+0x90]
    paddq xmm12,xmm5
    psubb xmm15,xmm0
    psubw xmm2,xmm3
    psubd xmm5,XMMWORD PTR [rdi+0xd0]
    psubq xmm8,xmm9
    pand xmm11,xmm12
    pand xmm14,XMMWORD PTR [rdi+0x110]
    por xmm1,xmm2
    pandn xmm4,xmm5
    pmullw xmm7,xmm8
    pmulld xmm10,xmm11
    pmaddwd xmm13,XMMWORD PTR [rdi+0x150]
    pminsd xmm0,xmm1
    pmaxsd xmm3,xmm4
    pminub xmm6,xmm7
    pmaxub xmm9,xmm10
    pavgb xmm12,xmm13
    pcmpeqb xmm15,xmm0
    pcmpeqw xmm2,xmm3
    pcmpeqd xmm5,xmm5
    pcmpgtb xmm8,xmm9
    pcmpgtw xmm11,XMMWORD PTR [rdi+0x190]
    pcmpgtd xmm14,xmm15
    punpcklbw xmm1,xmm2
    punpcklbw xmm4,XMMWORD PTR [rdi+0x1d0]
    punpckhbw xmm7,xmm8
    punpcklwd xmm10,xmm11
    punpckhwd xmm13,xmm14
    punpckldq xmm0,xmm1
    punpckhdq xmm3,xmm4
    punpcklqdq xmm6,xmm7
    punpckhqdq xmm9,xmm10
    packsswb xmm12,xmm13
    packssdw xmm15,xmm0
    packuswb xmm2,xmm3
    packusdw xmm5,xmm6
    phaddd xmm8,xmm9
    pshufb xmm11,xmm12
    psllw xmm14,0x3
    pslld xmm1,0x3
    pslld xmm4,xmm5
    psllq xmm7,0x20
    psrlw xmm10,0x8
    psrld xmm13,0x18
    psrld xmm0,XMMWORD PTR [rdi+0x210]
    psrlq xmm3,0x20
    psraw xmm6,0xf
    psrad xmm9,0x1f
    psrad xmm12,xmm14
    pslldq xmm15,0x4
    psrldq xmm2,0x8
    pshufd xmm5,xmm6,0x1b
    pshufd xmm8,XMMWORD PTR [rdi+0x250],0xe
    vpaddb ymm11,ymm12,ymm13
    vpaddb zmm14{k1}{z},zmm15,zmm16
    vpaddw xmm1,xmm2,XMMWORD PTR [rdi+0x293]
    vpaddq zmm20,zmm21,zmm22
    vpsubb ymm7,ymm8,ymm9
    vpsubw ymm10,ymm11,ymm12
    vpsubq xmm13,xmm14,xmm15
    vpandn ymm0,ymm1,ymm2
    vpmullw ymm3,ymm4,ymm5
    vpminsd ymm6,ymm7,ymm8
    vpmaxsd zmm9{k1},zmm10,zmm11
    vpminub ymm12,ymm13,ymm14
    vpmaxub xmm15,xmm0,xmm1
    vpavgb ymm2,ymm3,ymm4
    vpcmpeqb ymm5,ymm6,ymm7
    vpcmpeqb k1,zmm25,zmm26
    vpcmpeqd k1{k2},ymm28,YMMWORD PTR [rdi+0x2d3]
    vpcmpeqw xmm14,xmm15,xmm0
    vpcmpeqd ymm1,ymm1,ymm1
    vpcmpgtb ymm4,ymm5,ymm6
    vpcmpgtw k3,zmm8,zmm9
    vpcmpgtd xmm10,xmm11,XMMWORD PTR [rdi+0x313]
    vpunpcklbw ymm13,ymm14,ymm15
    vpunpcklbw xmm0,xmm1,xmm2
    vpunpcklbw ymm3,ymm4,YMMWORD PTR [rdi+0x353]
    vpunpckhbw ymm6,ymm7,ymm8
    vpunpckhbw zmm25{k1}{z},zmm26,zmm27
    vpunpckldq xmm12,xmm13,xmm14
    vpunpckhdq ymm15,ymm0,ymm1
    vpunpcklqdq xmm2,xmm3,xmm4
    vpunpckhqdq ymm5,ymm6,ymm7
    vpacksswb ymm8,ymm9,ymm10
    vpackssdw ymm11,ymm12,ymm13
    vpackuswb ymm14,ymm15,ymm0
    vpackusdw xmm1,xmm2,xmm3
    vpackusdw zmm20{k1},zmm21,zmm22
    vphaddd xmm7,xmm8,xmm9
    vphaddd ymm10,ymm11,ymm12
    vpsllw ymm13,ymm14,0x3
    vpsllq zmm0,zmm1,0x20
    vpsrlw ymm3,ymm4,xmm5
    vpsrlq xmm6,xmm7,0x1
    vpsraw zmm9{k1},zmm10,0x2
    vpslldq ymm12,ymm13,0x4
    vpsrldq xmm15,xmm0,0x8
    vpsrldq zmm18,zmm19,0x3
    vpermq ymm5,ymm6,0xd8
    vpermq zmm24,zmm25,0x4e
    vpermq zmm27{k1},zmm28,zmm29
    vpermt2b ymm0,ymm1,ymm2
    vpermt2b zmm0{k1}{z},zmm1,ZMMWORD PTR [rdi+0x393]
    vpermt2d zmm0,zmm1,zmm2
    vpermi2b xmm0,xmm1,xmm2
    vpermi2w xmm0,xmm1,xmm2
    valignd ymm13,ymm14,ymm15,0x1
    valignd zmm16{k1},zmm17,zmm18,0xf
    valignq zmm19,zmm20,zmm21,0x3
    vshufi64x2 zmm22,zmm23,zmm24,0x44
    vshufi64x2 ymm9,ymm10,ymm11,0x1
    vshufi32x4 zmm28{k1}{z},zmm29,zmm30,0xee
    vpmovdb xmm31,zmm0
    vpmovdb QWORD PTR [rsi+0x3d0],ymm3
    vpmovdb xmm5{k1}{z},xmm6
    vpmovsdb xmm8,zmm9
    vpmovusdb xmm11,ymm12
    vpmovdw ymm14,zmm15
    vpmovdw XMMWORD PTR [rsi+0x410],ymm2
    vpmovsdw xmm4,ymm5
    vpmovusdw XMMWORD PTR [rsi+0x450]{k1},ymm24
    vpmovqd ymm26,zmm27
    vpmovwb ymm29,zmm30
    vpmovswb xmm0,ymm1
    vpmovuswb xmm3,xmm4
    vpmovsxbq ymm6,DWORD PTR [rdi+0x493]
    vpmovsxbq zmm9,xmm10
    vpmovzxbq xmm12,xmm13
"""


@pytest.mark.needs_silicon
@pytest.mark.skipif(not {"avx512f", "avx512vl", "avx512bw", "avx512vbmi", "avx2", "sse4_1", "ssse3"} <= set(HOST_FLAGS), reason="this CPU lacks avx512f, avx512vl, avx512bw, avx512vbmi, avx2, sse4_1, ssse3 (/proc/cpuinfo)")
@pytest.mark.parametrize("seed", range(4))
def test_packed_integer_forms_on_silicon(seed):
    """Each packed integer result (wrap, saturation, compare masks, permutes, down-conversions) against this CPU."""
    report, program, _init = silicon_diff(PACKED_INTEGER_PROGRAM, range(32), 512, seed=seed, floats=seed > 0)
    assert report.divergence is None, report.divergence.describe()
    assert report.steps == len(program.instructions)


# issue 27: the opmask logic, each result stored through KMOVQ (k registers are compared through memory), KTEST's flags after every step
OPMASK_LOGIC_PROGRAM = """
    kmovq k1, QWORD PTR [rdi+0x8]
    kmovq k2, QWORD PTR [rdi+0x10]
    kmovq k3, QWORD PTR [rdi+0x18]
    kmovq k4, QWORD PTR [rdi+0x20]
    kmovq k5, QWORD PTR [rdi+0x28]
    kmovq k6, QWORD PTR [rdi+0x30]
    kmovq k7, QWORD PTR [rdi+0x38]
    kandb k5, k3, k6
    kmovq QWORD PTR [rsi+0x8], k5
    kandw k7, k6, k5
    kmovq QWORD PTR [rsi+0x10], k7
    kandd k1, k4, k2
    kmovq QWORD PTR [rsi+0x18], k1
    kandq k6, k1, k2
    kmovq QWORD PTR [rsi+0x20], k6
    kandnb k1, k3, k4
    kmovq QWORD PTR [rsi+0x28], k1
    kandnw k7, k2, k4
    kmovq QWORD PTR [rsi+0x30], k7
    kandnd k5, k1, k7
    kmovq QWORD PTR [rsi+0x38], k5
    kandnq k2, k1, k7
    kmovq QWORD PTR [rsi+0x40], k2
    korb k4, k3, k2
    kmovq QWORD PTR [rsi+0x48], k4
    korw k7, k4, k2
    kmovq QWORD PTR [rsi+0x50], k7
    kord k7, k1, k2
    kmovq QWORD PTR [rsi+0x58], k7
    korq k5, k7, k4
    kmovq QWORD PTR [rsi+0x60], k5
    kxnorb k2, k7, k1
    kmovq QWORD PTR [rsi+0x68], k2
    kxnorw k7, k1, k2
    kmovq QWORD PTR [rsi+0x70], k7
    kxnord k7, k2, k6
    kmovq QWORD PTR [rsi+0x78], k7
    kxnorq k7, k2, k3
    kmovq QWORD PTR [rsi+0x80], k7
    kaddb k3, k2, k5
    kmovq QWORD PTR [rsi+0x88], k3
    kaddw k6, k7, k2
    kmovq QWORD PTR [rsi+0x90], k6
    kaddd k2, k6, k7
    kmovq QWORD PTR [rsi+0x98], k2
    kaddq k4, k3, k1
    kmovq QWORD PTR [rsi+0xa0], k4
    knotb k3, k4
    kmovq QWORD PTR [rsi+0xa8], k3
    kshiftlb k2, k7, 0x0
    kmovq QWORD PTR [rsi+0xb0], k2
    kshiftrb k3, k1, 0x0
    kmovq QWORD PTR [rsi+0xb8], k3
    kshiftlb k3, k7, 0x3
    kmovq QWORD PTR [rsi+0xc0], k3
    kshiftrb k7, k5, 0x3
    kmovq QWORD PTR [rsi+0xc8], k7
    kshiftlb k5, k1, 0x7
    kmovq QWORD PTR [rsi+0xd0], k5
    kshiftrb k5, k6, 0x7
    kmovq QWORD PTR [rsi+0xd8], k5
    kshiftlb k6, k3, 0xf
    kmovq QWORD PTR [rsi+0xe0], k6
    kshiftrb k1, k3, 0xf
    kmovq QWORD PTR [rsi+0xe8], k1
    kshiftlb k3, k7, 0x1f
    kmovq QWORD PTR [rsi+0xf0], k3
    kshiftrb k4, k6, 0x1f
    kmovq QWORD PTR [rsi+0xf8], k4
    kshiftlb k3, k2, 0x28
    kmovq QWORD PTR [rsi+0x100], k3
    kshiftrb k4, k7, 0x28
    kmovq QWORD PTR [rsi+0x108], k4
    kshiftlb k6, k2, 0x3f
    kmovq QWORD PTR [rsi+0x110], k6
    kshiftrb k1, k3, 0x3f
    kmovq QWORD PTR [rsi+0x118], k1
    kshiftlb k1, k6, 0x40
    kmovq QWORD PTR [rsi+0x120], k1
    kshiftrb k3, k4, 0x40
    kmovq QWORD PTR [rsi+0x128], k3
    kshiftlb k1, k5, 0xc8
    kmovq QWORD PTR [rsi+0x130], k1
    kshiftrb k7, k4, 0xc8
    kmovq QWORD PTR [rsi+0x138], k7
    ktestb k3, k4
    ktestb k3, k3
    kxnorb k4, k4, k4
    ktestb k4, k4
    kxorb k4, k4, k4
    ktestb k3, k4
    knotw k5, k1
    kmovq QWORD PTR [rsi+0x140], k5
    kshiftlw k4, k1, 0x0
    kmovq QWORD PTR [rsi+0x148], k4
    kshiftrw k6, k2, 0x0
    kmovq QWORD PTR [rsi+0x150], k6
    kshiftlw k5, k2, 0x3
    kmovq QWORD PTR [rsi+0x158], k5
    kshiftrw k1, k2, 0x3
    kmovq QWORD PTR [rsi+0x160], k1
    kshiftlw k7, k4, 0x7
    kmovq QWORD PTR [rsi+0x168], k7
    kshiftrw k3, k5, 0x7
    kmovq QWORD PTR [rsi+0x170], k3
    kshiftlw k3, k5, 0xf
    kmovq QWORD PTR [rsi+0x178], k3
    kshiftrw k3, k4, 0xf
    kmovq QWORD PTR [rsi+0x180], k3
    kshiftlw k1, k5, 0x1f
    kmovq QWORD PTR [rsi+0x188], k1
    kshiftrw k6, k3, 0x1f
    kmovq QWORD PTR [rsi+0x190], k6
    kshiftlw k7, k3, 0x28
    kmovq QWORD PTR [rsi+0x198], k7
    kshiftrw k1, k4, 0x28
    kmovq QWORD PTR [rsi+0x1a0], k1
    kshiftlw k1, k2, 0x3f
    kmovq QWORD PTR [rsi+0x1a8], k1
    kshiftrw k3, k5, 0x3f
    kmovq QWORD PTR [rsi+0x1b0], k3
    kshiftlw k5, k3, 0x40
    kmovq QWORD PTR [rsi+0x1b8], k5
    kshiftrw k2, k3, 0x40
    kmovq QWORD PTR [rsi+0x1c0], k2
    kshiftlw k3, k6, 0xc8
    kmovq QWORD PTR [rsi+0x1c8], k3
    kshiftrw k5, k1, 0xc8
    kmovq QWORD PTR [rsi+0x1d0], k5
    ktestw k3, k6
    ktestw k3, k3
    kxnorw k6, k6, k6
    ktestw k6, k6
    kxorw k6, k6, k6
    ktestw k3, k6
    knotd k3, k7
    kmovq QWORD PTR [rsi+0x1d8], k3
    kshiftld k2, k1, 0x0
    kmovq QWORD PTR [rsi+0x1e0], k2
    kshiftrd k6, k2, 0x0
    kmovq QWORD PTR [rsi+0x1e8], k6
    kshiftld k6, k7, 0x3
    kmovq QWORD PTR [rsi+0x1f0], k6
    kshiftrd k3, k4, 0x3
    kmovq QWORD PTR [rsi+0x1f8], k3
    kshiftld k2, k6, 0x7
    kmovq QWORD PTR [rsi+0x200], k2
    kshiftrd k1, k7, 0x7
    kmovq QWORD PTR [rsi+0x208], k1
    kshiftld k5, k7, 0xf
    kmovq QWORD PTR [rsi+0x210], k5
    kshiftrd k4, k1, 0xf
    kmovq QWORD PTR [rsi+0x218], k4
    kshiftld k2, k6, 0x1f
    kmovq QWORD PTR [rsi+0x220], k2
    kshiftrd k5, k3, 0x1f
    kmovq QWORD PTR [rsi+0x228], k5
    kshiftld k7, k3, 0x28
    kmovq QWORD PTR [rsi+0x230], k7
    kshiftrd k4, k6, 0x28
    kmovq QWORD PTR [rsi+0x238], k4
    kshiftld k4, k2, 0x3f
    kmovq QWORD PTR [rsi+0x240], k4
    kshiftrd k1, k6, 0x3f
    kmovq QWORD PTR [rsi+0x248], k1
    kshiftld k1, k4, 0x40
    kmovq QWORD PTR [rsi+0x250], k1
    kshiftrd k3, k2, 0x40
    kmovq QWORD PTR [rsi+0x258], k3
    kshiftld k2, k6, 0xc8
    kmovq QWORD PTR [rsi+0x260], k2
    kshiftrd k5, k2, 0xc8
    kmovq QWORD PTR [rsi+0x268], k5
    ktestd k6, k4
    ktestd k6, k6
    kxnord k4, k4, k4
    ktestd k4, k4
    kxord k4, k4, k4
    ktestd k6, k4
    knotq k1, k2
    kmovq QWORD PTR [rsi+0x270], k1
    kshiftlq k4, k3, 0x0
    kmovq QWORD PTR [rsi+0x278], k4
    kshiftrq k2, k1, 0x0
    kmovq QWORD PTR [rsi+0x280], k2
    kshiftlq k7, k4, 0x3
    kmovq QWORD PTR [rsi+0x288], k7
    kshiftrq k3, k2, 0x3
    kmovq QWORD PTR [rsi+0x290], k3
    kshiftlq k4, k5, 0x7
    kmovq QWORD PTR [rsi+0x298], k4
    kshiftrq k7, k2, 0x7
    kmovq QWORD PTR [rsi+0x2a0], k7
    kshiftlq k5, k4, 0xf
    kmovq QWORD PTR [rsi+0x2a8], k5
    kshiftrq k4, k6, 0xf
    kmovq QWORD PTR [rsi+0x2b0], k4
    kshiftlq k6, k3, 0x1f
    kmovq QWORD PTR [rsi+0x2b8], k6
    kshiftrq k4, k3, 0x1f
    kmovq QWORD PTR [rsi+0x2c0], k4
    kshiftlq k3, k4, 0x28
    kmovq QWORD PTR [rsi+0x2c8], k3
    kshiftrq k4, k2, 0x28
    kmovq QWORD PTR [rsi+0x2d0], k4
    kshiftlq k1, k4, 0x3f
    kmovq QWORD PTR [rsi+0x2d8], k1
    kshiftrq k7, k5, 0x3f
    kmovq QWORD PTR [rsi+0x2e0], k7
    kshiftlq k2, k6, 0x40
    kmovq QWORD PTR [rsi+0x2e8], k2
    kshiftrq k4, k3, 0x40
    kmovq QWORD PTR [rsi+0x2f0], k4
    kshiftlq k2, k1, 0xc8
    kmovq QWORD PTR [rsi+0x2f8], k2
    kshiftrq k4, k3, 0xc8
    kmovq QWORD PTR [rsi+0x300], k4
    ktestq k5, k7
    ktestq k5, k5
    kxnorq k7, k7, k7
    ktestq k7, k7
    kxorq k7, k7, k7
    ktestq k5, k7
    kunpckbw k7, k5, k3
    kmovq QWORD PTR [rsi+0x308], k7
    kunpckwd k1, k3, k5
    kmovq QWORD PTR [rsi+0x310], k1
    kunpckdq k6, k1, k3
    kmovq QWORD PTR [rsi+0x318], k6
"""


@pytest.mark.needs_silicon
@pytest.mark.skipif(not {"avx512f", "avx512dq", "avx512bw"} <= set(HOST_FLAGS), reason="this CPU lacks avx512f, avx512dq, avx512bw (/proc/cpuinfo)")
@pytest.mark.parametrize("seed", range(4))
def test_opmask_logic_forms_on_silicon(seed):
    """Each opmask result (shifts by 0 to 200, KADD's wrap, KUNPCK) and KTEST's ZF/CF against this CPU."""
    report, program, _init = silicon_diff(OPMASK_LOGIC_PROGRAM, range(32), 512, seed=seed, floats=seed > 0)
    assert report.divergence is None, report.divergence.describe()
    assert report.steps == len(program.instructions)


# issue 27: compares with every predicate (0-7 legacy, 0-31 VEX/EVEX, 0-7 VPCMP), into vectors and into masks under k2 (stored through KMOVQ)
COMPARE_PROGRAM = """
    mov eax, 0xa5c3
    kmovw k2, eax
    mov rax, 0x5a3c96e1f00f1234
    kmovq k3, rax
    cmpps xmm2, xmm7, 0x0
    cmpps xmm7, XMMWORD PTR [rdi+0x40], 0x0
    cmpss xmm2, xmm7, 0x0
    cmpss xmm2, DWORD PTR [rdi+0x84], 0x0
    cmpps xmm8, xmm0, 0x1
    cmpps xmm0, XMMWORD PTR [rdi+0xc0], 0x1
    cmpss xmm8, xmm0, 0x1
    cmpss xmm8, DWORD PTR [rdi+0x104], 0x1
    cmpps xmm0, xmm2, 0x2
    cmpps xmm2, XMMWORD PTR [rdi+0x140], 0x2
    cmpss xmm0, xmm2, 0x2
    cmpss xmm0, DWORD PTR [rdi+0x184], 0x2
    cmpps xmm15, xmm12, 0x3
    cmpps xmm12, XMMWORD PTR [rdi+0x1c0], 0x3
    cmpss xmm15, xmm12, 0x3
    cmpss xmm15, DWORD PTR [rdi+0x204], 0x3
    cmpps xmm11, xmm5, 0x4
    cmpps xmm5, XMMWORD PTR [rdi+0x240], 0x4
    cmpss xmm11, xmm5, 0x4
    cmpss xmm11, DWORD PTR [rdi+0x284], 0x4
    cmpps xmm0, xmm4, 0x5
    cmpps xmm4, XMMWORD PTR [rdi+0x2c0], 0x5
    cmpss xmm0, xmm4, 0x5
    cmpss xmm0, DWORD PTR [rdi+0x304], 0x5
    cmpps xmm15, xmm12, 0x6
    cmpps xmm12, XMMWORD PTR [rdi+0x340], 0x6
    cmpss xmm15, xmm12, 0x6
    cmpss xmm15, DWORD PTR [rdi+0x384], 0x6
    cmpps xmm6, xmm11, 0x7
    cmpps xmm11, XMMWORD PTR [rdi+0x3c0], 0x7
    cmpss xmm6, xmm11, 0x7
    cmpss xmm6, DWORD PTR [rdi+0x404], 0x7
    vcmpps xmm13, xmm14, xmm8, 0x0
    vcmpps k4{k2}, ymm16, ymm5, 0x0
    kmovq QWORD PTR [rsi+0x8], k4
    vcmpss xmm2, xmm5, DWORD PTR [rdi+0x443], 0x0
    vcmpss k4{k2}, xmm16, xmm28, 0x0
    kmovq QWORD PTR [rsi+0x10], k4
    vcmpps ymm3, ymm12, ymm15, 0x1
    vcmpps k4{k2}, zmm2, zmm12, 0x1
    kmovq QWORD PTR [rsi+0x18], k4
    vcmpss xmm15, xmm14, DWORD PTR [rdi+0x483], 0x1
    vcmpss k4{k2}, xmm1, xmm23, 0x1
    kmovq QWORD PTR [rsi+0x20], k4
    vcmpps ymm7, ymm9, ymm6, 0x2
    vcmpps k5{k3}, zmm7, zmm5, 0x2
    kmovq QWORD PTR [rsi+0x28], k5
    vcmpss xmm6, xmm1, DWORD PTR [rdi+0x4c3], 0x2
    vcmpss k5{k3}, xmm19, xmm12, 0x2
    kmovq QWORD PTR [rsi+0x30], k5
    vcmpps xmm12, xmm7, xmm3, 0x3
    vcmpps k1, xmm0, xmm12, 0x3
    kmovq QWORD PTR [rsi+0x38], k1
    vcmpss xmm10, xmm8, DWORD PTR [rdi+0x503], 0x3
    vcmpss k1, xmm23, xmm24, 0x3
    kmovq QWORD PTR [rsi+0x40], k1
    vcmpps ymm12, ymm4, ymm2, 0x4
    vcmpps k5{k3}, zmm11, zmm27, 0x4
    kmovq QWORD PTR [rsi+0x48], k5
    vcmpss xmm12, xmm1, DWORD PTR [rdi+0x543], 0x4
    vcmpss k5{k3}, xmm5, xmm28, 0x4
    kmovq QWORD PTR [rsi+0x50], k5
    vcmpps ymm14, ymm12, ymm13, 0x5
    vcmpps k5{k3}, ymm27, ymm30, 0x5
    kmovq QWORD PTR [rsi+0x58], k5
    vcmpss xmm13, xmm1, DWORD PTR [rdi+0x583], 0x5
    vcmpss k5{k3}, xmm28, xmm31, 0x5
    kmovq QWORD PTR [rsi+0x60], k5
    vcmpps xmm5, xmm0, xmm14, 0x6
    vcmpps k5{k3}, ymm23, ymm12, 0x6
    kmovq QWORD PTR [rsi+0x68], k5
    vcmpss xmm14, xmm5, DWORD PTR [rdi+0x5c3], 0x6
    vcmpss k5{k3}, xmm26, xmm31, 0x6
    kmovq QWORD PTR [rsi+0x70], k5
    vcmpps ymm8, ymm9, ymm7, 0x7
    vcmpps k4{k2}, ymm9, ymm24, 0x7
    kmovq QWORD PTR [rsi+0x78], k4
    vcmpss xmm14, xmm5, DWORD PTR [rdi+0x603], 0x7
    vcmpss k4{k2}, xmm24, xmm17, 0x7
    kmovq QWORD PTR [rsi+0x80], k4
    vcmpps ymm10, ymm15, ymm6, 0x8
    vcmpps k4{k2}, zmm18, zmm0, 0x8
    kmovq QWORD PTR [rsi+0x88], k4
    vcmpss xmm1, xmm2, DWORD PTR [rdi+0x643], 0x8
    vcmpss k4{k2}, xmm23, xmm31, 0x8
    kmovq QWORD PTR [rsi+0x90], k4
    vcmpps xmm1, xmm14, xmm3, 0x9
    vcmpps k4{k2}, zmm0, zmm27, 0x9
    kmovq QWORD PTR [rsi+0x98], k4
    vcmpss xmm2, xmm7, DWORD PTR [rdi+0x683], 0x9
    vcmpss k4{k2}, xmm23, xmm9, 0x9
    kmovq QWORD PTR [rsi+0xa0], k4
    vcmpps xmm7, xmm9, xmm5, 0xa
    vcmpps k5{k3}, ymm6, ymm30, 0xa
    kmovq QWORD PTR [rsi+0xa8], k5
    vcmpss xmm2, xmm10, DWORD PTR [rdi+0x6c3], 0xa
    vcmpss k5{k3}, xmm5, xmm10, 0xa
    kmovq QWORD PTR [rsi+0xb0], k5
    vcmpps ymm8, ymm14, ymm13, 0xb
    vcmpps k4{k2}, xmm1, xmm8, 0xb
    kmovq QWORD PTR [rsi+0xb8], k4
    vcmpss xmm15, xmm12, DWORD PTR [rdi+0x703], 0xb
    vcmpss k4{k2}, xmm17, xmm30, 0xb
    kmovq QWORD PTR [rsi+0xc0], k4
    vcmpps ymm2, ymm13, ymm12, 0xc
    vcmpps k5{k3}, xmm18, xmm2, 0xc
    kmovq QWORD PTR [rsi+0xc8], k5
    vcmpss xmm8, xmm4, DWORD PTR [rdi+0x743], 0xc
    vcmpss k5{k3}, xmm27, xmm28, 0xc
    kmovq QWORD PTR [rsi+0xd0], k5
    vcmpps xmm11, xmm0, xmm15, 0xd
    vcmpps k4{k2}, ymm2, ymm11, 0xd
    kmovq QWORD PTR [rsi+0xd8], k4
    vcmpss xmm1, xmm0, DWORD PTR [rdi+0x783], 0xd
    vcmpss k4{k2}, xmm27, xmm21, 0xd
    kmovq QWORD PTR [rsi+0xe0], k4
    vcmpps xmm2, xmm15, xmm11, 0xe
    vcmpps k4{k2}, zmm8, zmm29, 0xe
    kmovq QWORD PTR [rsi+0xe8], k4
    vcmpss xmm2, xmm15, DWORD PTR [rdi+0x7c3], 0xe
    vcmpss k4{k2}, xmm1, xmm11, 0xe
    kmovq QWORD PTR [rsi+0xf0], k4
    vcmpps xmm4, xmm2, xmm15, 0xf
    vcmpps k5{k3}, ymm14, ymm8, 0xf
    kmovq QWORD PTR [rsi+0xf8], k5
    vcmpss xmm5, xmm12, DWORD PTR [rdi+0x803], 0xf
    vcmpss k5{k3}, xmm0, xmm24, 0xf
    kmovq QWORD PTR [rsi+0x100], k5
    vcmpps ymm6, ymm12, ymm5, 0x10
    vcmpps k5{k3}, zmm0, zmm25, 0x10
    kmovq QWORD PTR [rsi+0x108], k5
    vcmpss xmm4, xmm11, DWORD PTR [rdi+0x843], 0x10
    vcmpss k5{k3}, xmm17, xmm11, 0x10
    kmovq QWORD PTR [rsi+0x110], k5
    vcmpps xmm4, xmm2, xmm11, 0x11
    vcmpps k1, xmm4, xmm3, 0x11
    kmovq QWORD PTR [rsi+0x118], k1
    vcmpss xmm15, xmm12, DWORD PTR [rdi+0x883], 0x11
    vcmpss k1, xmm6, xmm23, 0x11
    kmovq QWORD PTR [rsi+0x120], k1
    vcmpps xmm1, xmm0, xmm8, 0x12
    vcmpps k4{k2}, xmm14, xmm18, 0x12
    kmovq QWORD PTR [rsi+0x128], k4
    vcmpss xmm2, xmm11, DWORD PTR [rdi+0x8c3], 0x12
    vcmpss k4{k2}, xmm10, xmm28, 0x12
    kmovq QWORD PTR [rsi+0x130], k4
    vcmpps xmm3, xmm1, xmm11, 0x13
    vcmpps k5{k3}, zmm1, zmm27, 0x13
    kmovq QWORD PTR [rsi+0x138], k5
    vcmpss xmm9, xmm4, DWORD PTR [rdi+0x903], 0x13
    vcmpss k5{k3}, xmm12, xmm13, 0x13
    kmovq QWORD PTR [rsi+0x140], k5
    vcmpps ymm8, ymm9, ymm0, 0x14
    vcmpps k4{k2}, ymm5, ymm2, 0x14
    kmovq QWORD PTR [rsi+0x148], k4
    vcmpss xmm3, xmm15, DWORD PTR [rdi+0x943], 0x14
    vcmpss k4{k2}, xmm23, xmm21, 0x14
    kmovq QWORD PTR [rsi+0x150], k4
    vcmpps xmm13, xmm10, xmm15, 0x15
    vcmpps k4{k2}, xmm8, xmm1, 0x15
    kmovq QWORD PTR [rsi+0x158], k4
    vcmpss xmm2, xmm7, DWORD PTR [rdi+0x983], 0x15
    vcmpss k4{k2}, xmm16, xmm5, 0x15
    kmovq QWORD PTR [rsi+0x160], k4
    vcmpps xmm8, xmm3, xmm2, 0x16
    vcmpps k4{k2}, zmm11, zmm15, 0x16
    kmovq QWORD PTR [rsi+0x168], k4
    vcmpss xmm13, xmm9, DWORD PTR [rdi+0x9c3], 0x16
    vcmpss k4{k2}, xmm17, xmm16, 0x16
    kmovq QWORD PTR [rsi+0x170], k4
    vcmpps xmm4, xmm15, xmm0, 0x17
    vcmpps k1, zmm6, zmm11, 0x17
    kmovq QWORD PTR [rsi+0x178], k1
    vcmpss xmm0, xmm8, DWORD PTR [rdi+0xa03], 0x17
    vcmpss k1, xmm9, xmm25, 0x17
    kmovq QWORD PTR [rsi+0x180], k1
    vcmpps ymm15, ymm7, ymm13, 0x18
    vcmpps k1, ymm24, ymm9, 0x18
    kmovq QWORD PTR [rsi+0x188], k1
    vcmpss xmm10, xmm6, DWORD PTR [rdi+0xa43], 0x18
    vcmpss k1, xmm8, xmm18, 0x18
    kmovq QWORD PTR [rsi+0x190], k1
    vcmpps ymm11, ymm9, ymm13, 0x19
    vcmpps k1, xmm0, xmm19, 0x19
    kmovq QWORD PTR [rsi+0x198], k1
    vcmpss xmm13, xmm9, DWORD PTR [rdi+0xa83], 0x19
    vcmpss k1, xmm5, xmm12, 0x19
    kmovq QWORD PTR [rsi+0x1a0], k1
    vcmpps xmm12, xmm6, xmm2, 0x1a
    vcmpps k5{k3}, ymm31, ymm23, 0x1a
    kmovq QWORD PTR [rsi+0x1a8], k5
    vcmpss xmm12, xmm13, DWORD PTR [rdi+0xac3], 0x1a
    vcmpss k5{k3}, xmm16, xmm8, 0x1a
    kmovq QWORD PTR [rsi+0x1b0], k5
    vcmpps xmm1, xmm15, xmm9, 0x1b
    vcmpps k4{k2}, ymm5, ymm13, 0x1b
    kmovq QWORD PTR [rsi+0x1b8], k4
    vcmpss xmm5, xmm11, DWORD PTR [rdi+0xb03], 0x1b
    vcmpss k4{k2}, xmm11, xmm14, 0x1b
    kmovq QWORD PTR [rsi+0x1c0], k4
    vcmpps ymm4, ymm13, ymm7, 0x1c
    vcmpps k5{k3}, xmm8, xmm29, 0x1c
    kmovq QWORD PTR [rsi+0x1c8], k5
    vcmpss xmm11, xmm15, DWORD PTR [rdi+0xb43], 0x1c
    vcmpss k5{k3}, xmm16, xmm4, 0x1c
    kmovq QWORD PTR [rsi+0x1d0], k5
    vcmpps xmm8, xmm12, xmm0, 0x1d
    vcmpps k1, ymm30, ymm29, 0x1d
    kmovq QWORD PTR [rsi+0x1d8], k1
    vcmpss xmm0, xmm4, DWORD PTR [rdi+0xb83], 0x1d
    vcmpss k1, xmm24, xmm21, 0x1d
    kmovq QWORD PTR [rsi+0x1e0], k1
    vcmpps ymm3, ymm11, ymm13, 0x1e
    vcmpps k4{k2}, zmm23, zmm30, 0x1e
    kmovq QWORD PTR [rsi+0x1e8], k4
    vcmpss xmm0, xmm8, DWORD PTR [rdi+0xbc3], 0x1e
    vcmpss k4{k2}, xmm6, xmm28, 0x1e
    kmovq QWORD PTR [rsi+0x1f0], k4
    vcmpps ymm11, ymm0, ymm2, 0x1f
    vcmpps k4{k2}, xmm4, xmm30, 0x1f
    kmovq QWORD PTR [rsi+0x1f8], k4
    vcmpss xmm6, xmm12, DWORD PTR [rdi+0xc03], 0x1f
    vcmpss k4{k2}, xmm28, xmm21, 0x1f
    kmovq QWORD PTR [rsi+0x200], k4
    vpcmpb k5{k3}, zmm22, ZMMWORD PTR [rdi+0xc41], 0x0
    kmovq QWORD PTR [rsi+0x208], k5
    vpcmpb k5{k3}, zmm2, ZMMWORD PTR [rdi+0xc81], 0x1
    kmovq QWORD PTR [rsi+0x210], k5
    vpcmpb k4{k2}, xmm16, xmm10, 0x2
    kmovq QWORD PTR [rsi+0x218], k4
    vpcmpb k4{k2}, xmm19, xmm12, 0x3
    kmovq QWORD PTR [rsi+0x220], k4
    vpcmpb k5{k3}, zmm23, zmm13, 0x4
    kmovq QWORD PTR [rsi+0x228], k5
    vpcmpb k1, zmm5, zmm22, 0x5
    kmovq QWORD PTR [rsi+0x230], k1
    vpcmpb k5{k3}, zmm14, zmm24, 0x6
    kmovq QWORD PTR [rsi+0x238], k5
    vpcmpb k5{k3}, zmm27, zmm3, 0x7
    kmovq QWORD PTR [rsi+0x240], k5
    vpcmpub k1, zmm17, zmm14, 0x0
    kmovq QWORD PTR [rsi+0x248], k1
    vpcmpub k4{k2}, ymm17, YMMWORD PTR [rdi+0xcc1], 0x1
    kmovq QWORD PTR [rsi+0x250], k4
    vpcmpub k1, ymm26, ymm10, 0x2
    kmovq QWORD PTR [rsi+0x258], k1
    vpcmpub k1, zmm3, zmm5, 0x3
    kmovq QWORD PTR [rsi+0x260], k1
    vpcmpub k4{k2}, zmm5, zmm11, 0x4
    kmovq QWORD PTR [rsi+0x268], k4
    vpcmpub k4{k2}, ymm17, ymm19, 0x5
    kmovq QWORD PTR [rsi+0x270], k4
    vpcmpub k4{k2}, ymm7, YMMWORD PTR [rdi+0xd01], 0x6
    kmovq QWORD PTR [rsi+0x278], k4
    vpcmpub k5{k3}, xmm15, xmm0, 0x7
    kmovq QWORD PTR [rsi+0x280], k5
    vpcmpw k5{k3}, ymm9, ymm14, 0x0
    kmovq QWORD PTR [rsi+0x288], k5
    vpcmpw k5{k3}, xmm6, xmm16, 0x1
    kmovq QWORD PTR [rsi+0x290], k5
    vpcmpw k1, xmm16, XMMWORD PTR [rdi+0xd41], 0x2
    kmovq QWORD PTR [rsi+0x298], k1
    vpcmpw k1, xmm8, XMMWORD PTR [rdi+0xd81], 0x3
    kmovq QWORD PTR [rsi+0x2a0], k1
    vpcmpw k5{k3}, zmm26, zmm30, 0x4
    kmovq QWORD PTR [rsi+0x2a8], k5
    vpcmpw k5{k3}, xmm29, xmm12, 0x5
    kmovq QWORD PTR [rsi+0x2b0], k5
    vpcmpw k4{k2}, zmm25, zmm14, 0x6
    kmovq QWORD PTR [rsi+0x2b8], k4
    vpcmpw k1, zmm12, zmm14, 0x7
    kmovq QWORD PTR [rsi+0x2c0], k1
    vpcmpuw k4{k2}, ymm7, YMMWORD PTR [rdi+0xdc1], 0x0
    kmovq QWORD PTR [rsi+0x2c8], k4
    vpcmpuw k4{k2}, ymm27, ymm24, 0x1
    kmovq QWORD PTR [rsi+0x2d0], k4
    vpcmpuw k5{k3}, zmm3, zmm26, 0x2
    kmovq QWORD PTR [rsi+0x2d8], k5
    vpcmpuw k4{k2}, xmm30, XMMWORD PTR [rdi+0xe01], 0x3
    kmovq QWORD PTR [rsi+0x2e0], k4
    vpcmpuw k4{k2}, zmm23, ZMMWORD PTR [rdi+0xe41], 0x4
    kmovq QWORD PTR [rsi+0x2e8], k4
    vpcmpuw k1, ymm29, YMMWORD PTR [rdi+0xe81], 0x5
    kmovq QWORD PTR [rsi+0x2f0], k1
    vpcmpuw k5{k3}, ymm4, ymm30, 0x6
    kmovq QWORD PTR [rsi+0x2f8], k5
    vpcmpuw k1, xmm22, xmm23, 0x7
    kmovq QWORD PTR [rsi+0x300], k1
    vpcmpd k4{k2}, xmm25, XMMWORD PTR [rdi+0xec1], 0x0
    kmovq QWORD PTR [rsi+0x308], k4
    vpcmpd k5{k3}, ymm16, YMMWORD PTR [rdi+0xf01], 0x1
    kmovq QWORD PTR [rsi+0x310], k5
    vpcmpd k4{k2}, xmm26, XMMWORD PTR [rdi+0xf41], 0x2
    kmovq QWORD PTR [rsi+0x318], k4
    vpcmpd k1, zmm2, zmm1, 0x3
    kmovq QWORD PTR [rsi+0x320], k1
    vpcmpd k1, zmm1, zmm30, 0x4
    kmovq QWORD PTR [rsi+0x328], k1
    vpcmpd k4{k2}, xmm20, XMMWORD PTR [rdi+0xf81], 0x5
    kmovq QWORD PTR [rsi+0x330], k4
    vpcmpd k4{k2}, xmm13, xmm3, 0x6
    kmovq QWORD PTR [rsi+0x338], k4
    vpcmpd k4{k2}, xmm30, xmm23, 0x7
    kmovq QWORD PTR [rsi+0x340], k4
    vpcmpud k1, zmm12, zmm3, 0x0
    kmovq QWORD PTR [rsi+0x348], k1
    vpcmpud k1, zmm27, ZMMWORD PTR [rdi+0xfc1], 0x1
    kmovq QWORD PTR [rsi+0x350], k1
    vpcmpud k5{k3}, zmm12, zmm6, 0x2
    kmovq QWORD PTR [rsi+0x358], k5
    vpcmpud k1, xmm11, xmm28, 0x3
    kmovq QWORD PTR [rsi+0x360], k1
    vpcmpud k1, zmm18, zmm9, 0x4
    kmovq QWORD PTR [rsi+0x368], k1
    vpcmpud k1, zmm25, ZMMWORD PTR [rdi+0x1001], 0x5
    kmovq QWORD PTR [rsi+0x370], k1
    vpcmpud k5{k3}, zmm5, ZMMWORD PTR [rdi+0x1041], 0x6
    kmovq QWORD PTR [rsi+0x378], k5
    vpcmpud k4{k2}, ymm12, ymm18, 0x7
    kmovq QWORD PTR [rsi+0x380], k4
    vpcmpq k4{k2}, xmm28, xmm13, 0x0
    kmovq QWORD PTR [rsi+0x388], k4
    vpcmpq k4{k2}, zmm23, zmm3, 0x1
    kmovq QWORD PTR [rsi+0x390], k4
    vpcmpq k5{k3}, ymm25, ymm27, 0x2
    kmovq QWORD PTR [rsi+0x398], k5
    vpcmpq k1, zmm9, zmm16, 0x3
    kmovq QWORD PTR [rsi+0x3a0], k1
    vpcmpq k1, xmm0, xmm9, 0x4
    kmovq QWORD PTR [rsi+0x3a8], k1
    vpcmpq k4{k2}, zmm0, zmm13, 0x5
    kmovq QWORD PTR [rsi+0x3b0], k4
    vpcmpq k4{k2}, xmm31, xmm24, 0x6
    kmovq QWORD PTR [rsi+0x3b8], k4
    vpcmpq k4{k2}, xmm0, xmm17, 0x7
    kmovq QWORD PTR [rsi+0x3c0], k4
    vpcmpuq k5{k3}, zmm22, ZMMWORD PTR [rdi+0x1081], 0x0
    kmovq QWORD PTR [rsi+0x3c8], k5
    vpcmpuq k1, xmm19, xmm13, 0x1
    kmovq QWORD PTR [rsi+0x3d0], k1
    vpcmpuq k5{k3}, xmm22, XMMWORD PTR [rdi+0x10c1], 0x2
    kmovq QWORD PTR [rsi+0x3d8], k5
    vpcmpuq k5{k3}, zmm3, ZMMWORD PTR [rdi+0x1101], 0x3
    kmovq QWORD PTR [rsi+0x3e0], k5
    vpcmpuq k1, ymm18, ymm10, 0x4
    kmovq QWORD PTR [rsi+0x3e8], k1
    vpcmpuq k1, xmm18, xmm14, 0x5
    kmovq QWORD PTR [rsi+0x3f0], k1
    vpcmpuq k5{k3}, xmm3, xmm7, 0x6
    kmovq QWORD PTR [rsi+0x3f8], k5
    vpcmpuq k5{k3}, ymm28, YMMWORD PTR [rdi+0x1141], 0x7
    kmovq QWORD PTR [rsi+0x400], k5
"""


@pytest.mark.needs_silicon
@pytest.mark.skipif(not {"avx512f", "avx512vl", "avx512bw"} <= set(HOST_FLAGS), reason="this CPU lacks avx512f, avx512vl, avx512bw (/proc/cpuinfo)")
@pytest.mark.parametrize("seed", range(4))
def test_compare_forms_on_silicon(seed):
    """Every fp predicate on NaNs, zeros and infinities (the fp32 palette) and every integer predicate, signed and unsigned, against this CPU."""
    report, program, _init = silicon_diff(COMPARE_PROGRAM, range(32), 512, seed=seed, floats=seed > 0)
    assert report.divergence is None, report.divergence.describe()
    assert report.steps == len(program.instructions)


# issue 27: the VNNI family (EVEX; the {vex} forms share the semantics, and this host has no AVX-VNNI), saturation driven by an all-0x7fffffff accumulator
VNNI_PROGRAM = """
    mov eax, 0xa5c3
    kmovw k1, eax
    vpdpbusd zmm0, zmm1, zmm2
    vpdpbusds zmm3, zmm4, zmm5
    vpdpbusds ymm6{k1}{z}, ymm7, YMMWORD PTR [rdi+0x21]
    vpdpbusds xmm16{k1}, xmm17, xmm18
    vpdpwssd zmm8, zmm9, zmm10
    vpdpwssd ymm19{k1}, ymm20, YMMWORD PTR [rdi+0x41]
    vpdpwssds zmm11, zmm12, zmm13
    vpdpwssds xmm21{k1}{z}, xmm22, xmm23
    vpternlogd zmm24, zmm24, zmm24, 0xff
    vpsrld zmm24, zmm24, 0x1
    vpdpwssds zmm24, zmm25, zmm25
    vpdpbusds zmm24, zmm26, zmm26
    vpdpwssds zmm27, zmm28, zmm28
"""


@pytest.mark.needs_silicon
@pytest.mark.skipif(not {"avx512f", "avx512vl", "avx512_vnni"} <= set(HOST_FLAGS), reason="this CPU lacks avx512f, avx512vl, avx512_vnni (/proc/cpuinfo)")
@pytest.mark.parametrize("seed", range(4))
def test_vnni_forms_on_silicon(seed):
    """VPDPBUSD(S) and VPDPWSSD(S) wrap and saturate as this CPU does."""
    report, program, _init = silicon_diff(VNNI_PROGRAM, range(32), 512, seed=seed, floats=seed > 0)
    assert report.divergence is None, report.divergence.describe()
    assert report.steps == len(program.instructions)


# issue 27: embedded broadcast: one element read and repeated, under masks, into compares and FMAs
BROADCAST_PROGRAM = """
    mov eax, 0xa5c3
    kmovw k1, eax
    vaddps zmm1{k1}{z}, zmm2, DWORD BCST [rdi+0x4]
    vpaddd zmm3, zmm4, DWORD BCST [rdi+0x40]
    vpandq ymm5, ymm6, QWORD BCST [rdi+0x8]
    vxorps xmm7, xmm8, DWORD BCST [rdi+0x10]
    vblendmps ymm9{k1}, ymm10, DWORD BCST [rdi+0x20]
    vmulps ymm11, ymm12, DWORD BCST [rdi+0x18]
    vfmadd213ps zmm13, zmm14, DWORD BCST [rdi+0x24]
    vpxord zmm16, zmm16, DWORD BCST [rdi+0x28]
    vcvtdq2ps zmm17{k1}, DWORD BCST [rdi+0x2c]
    vmaxps xmm18, xmm19, DWORD BCST [rdi+0x30]
    vcmpltps k2, zmm20, DWORD BCST [rdi+0x34]
    kmovq QWORD PTR [rsi+0x8], k2
    vpcmpgtd k3{k1}, zmm21, DWORD BCST [rdi+0x38]
    kmovq QWORD PTR [rsi+0x10], k3
    vpdpbusd zmm22, zmm23, DWORD BCST [rdi+0x3c]
    vpermd zmm24, zmm25, DWORD BCST [rdi+0x44]
    vpminsd ymm26{k1}, ymm27, DWORD BCST [rdi+0x100]
    vcvttps2dq zmm28, DWORD BCST [rdi+0x48]
    vpternlogd zmm29, zmm30, DWORD BCST [rdi+0x4c], 0x96
    vpmulld zmm31{k1}{z}, zmm1, DWORD BCST [rdi+0x50]
    vdivps ymm0, ymm2, DWORD BCST [rdi+0x54]
"""


@pytest.mark.needs_silicon
@pytest.mark.skipif(not {"avx512f", "avx512vl", "avx512bw", "avx512_vnni"} <= set(HOST_FLAGS), reason="this CPU lacks avx512f, avx512vl, avx512bw, avx512_vnni (/proc/cpuinfo)")
@pytest.mark.parametrize("seed", range(4))
def test_embedded_broadcast_on_silicon(seed):
    """Every form with a broadcast operand reads one element and repeats it, as this CPU does."""
    report, program, _init = silicon_diff(BROADCAST_PROGRAM, range(32), 512, seed=seed, floats=seed > 0)
    assert report.divergence is None, report.divergence.describe()
    assert report.steps == len(program.instructions)


# issue 27: half precision, every rounding control of VCVTPS2PH (imm8 0-7) into registers and memory, and VCVTPH2PS of the results
HALF_PRECISION_PROGRAM = """
    mov eax, 0xa5c3
    kmovw k1, eax
    vcvtps2ph xmm13, xmm7, 0x0
    vcvtps2ph QWORD PTR [rsi+0x20], xmm7, 0x0
    vcvtps2ph xmm31, ymm17, 0x0
    vcvtps2ph XMMWORD PTR [rsi+0x40], ymm17, 0x0
    vcvtps2ph ymm10, zmm2, 0x0
    vcvtps2ph YMMWORD PTR [rsi+0x60], zmm2, 0x0
    vcvtps2ph xmm15{k1}, xmm23, 0x1
    vcvtps2ph QWORD PTR [rsi+0x80], xmm23, 0x1
    vcvtps2ph xmm11, ymm6, 0x1
    vcvtps2ph XMMWORD PTR [rsi+0xa0], ymm6, 0x1
    vcvtps2ph ymm16{k1}, zmm29, 0x1
    vcvtps2ph YMMWORD PTR [rsi+0xc0], zmm29, 0x1
    vcvtps2ph xmm23, xmm8, 0x2
    vcvtps2ph QWORD PTR [rsi+0xe0], xmm8, 0x2
    vcvtps2ph xmm7, ymm15, 0x2
    vcvtps2ph XMMWORD PTR [rsi+0x100], ymm15, 0x2
    vcvtps2ph ymm2{k1}, zmm0, 0x2
    vcvtps2ph YMMWORD PTR [rsi+0x120], zmm0, 0x2
    vcvtps2ph xmm19, xmm23, 0x3
    vcvtps2ph QWORD PTR [rsi+0x140], xmm23, 0x3
    vcvtps2ph xmm28, ymm27, 0x3
    vcvtps2ph XMMWORD PTR [rsi+0x160], ymm27, 0x3
    vcvtps2ph ymm20, zmm10, 0x3
    vcvtps2ph YMMWORD PTR [rsi+0x180], zmm10, 0x3
    vcvtps2ph xmm7{k1}, xmm0, 0x4
    vcvtps2ph QWORD PTR [rsi+0x1a0], xmm0, 0x4
    vcvtps2ph xmm4{k1}, ymm5, 0x4
    vcvtps2ph XMMWORD PTR [rsi+0x1c0], ymm5, 0x4
    vcvtps2ph ymm23{k1}, zmm9, 0x4
    vcvtps2ph YMMWORD PTR [rsi+0x1e0], zmm9, 0x4
    vcvtps2ph xmm3{k1}, xmm7, 0x5
    vcvtps2ph QWORD PTR [rsi+0x200], xmm7, 0x5
    vcvtps2ph xmm11, ymm6, 0x5
    vcvtps2ph XMMWORD PTR [rsi+0x220], ymm6, 0x5
    vcvtps2ph ymm28, zmm15, 0x5
    vcvtps2ph YMMWORD PTR [rsi+0x240], zmm15, 0x5
    vcvtps2ph xmm11{k1}, xmm7, 0x6
    vcvtps2ph QWORD PTR [rsi+0x260], xmm7, 0x6
    vcvtps2ph xmm11, ymm30, 0x6
    vcvtps2ph XMMWORD PTR [rsi+0x280], ymm30, 0x6
    vcvtps2ph ymm20{k1}, zmm27, 0x6
    vcvtps2ph YMMWORD PTR [rsi+0x2a0], zmm27, 0x6
    vcvtps2ph xmm1, xmm5, 0x7
    vcvtps2ph QWORD PTR [rsi+0x2c0], xmm5, 0x7
    vcvtps2ph xmm16, ymm28, 0x7
    vcvtps2ph XMMWORD PTR [rsi+0x2e0], ymm28, 0x7
    vcvtps2ph ymm10, zmm24, 0x7
    vcvtps2ph YMMWORD PTR [rsi+0x300], zmm24, 0x7
    vcvtph2ps xmm15, xmm10
    vcvtph2ps xmm10{k1}{z}, QWORD PTR [rdi+0x42]
    vcvtph2ps xmm31, QWORD PTR [rsi+0x20]
    vcvtph2ps xmm7, xmm11
    vcvtph2ps xmm11{k1}{z}, QWORD PTR [rdi+0x82]
    vcvtph2ps xmm23, QWORD PTR [rsi+0x40]
    vcvtph2ps xmm8, xmm15
    vcvtph2ps xmm15{k1}{z}, QWORD PTR [rdi+0xc2]
    vcvtph2ps xmm24, QWORD PTR [rsi+0x60]
    vcvtph2ps ymm15, xmm9
    vcvtph2ps ymm9{k1}{z}, XMMWORD PTR [rdi+0x42]
    vcvtph2ps ymm31, XMMWORD PTR [rsi+0x20]
    vcvtph2ps ymm15, xmm1
    vcvtph2ps ymm1{k1}{z}, XMMWORD PTR [rdi+0x82]
    vcvtph2ps ymm31, XMMWORD PTR [rsi+0x40]
    vcvtph2ps ymm5, xmm7
    vcvtph2ps ymm7{k1}{z}, XMMWORD PTR [rdi+0xc2]
    vcvtph2ps ymm21, XMMWORD PTR [rsi+0x60]
    vcvtph2ps zmm14, ymm15
    vcvtph2ps zmm15{k1}{z}, YMMWORD PTR [rdi+0x42]
    vcvtph2ps zmm30, YMMWORD PTR [rsi+0x20]
    vcvtph2ps zmm12, ymm2
    vcvtph2ps zmm2{k1}{z}, YMMWORD PTR [rdi+0x82]
    vcvtph2ps zmm28, YMMWORD PTR [rsi+0x40]
    vcvtph2ps zmm13, ymm8
    vcvtph2ps zmm8{k1}{z}, YMMWORD PTR [rdi+0xc2]
    vcvtph2ps zmm29, YMMWORD PTR [rsi+0x60]
"""


@pytest.mark.needs_silicon
@pytest.mark.skipif(not {"f16c", "avx512f", "avx512vl"} <= set(HOST_FLAGS), reason="this CPU lacks f16c, avx512f, avx512vl (/proc/cpuinfo)")
@pytest.mark.parametrize("seed", range(4))
def test_half_precision_forms_on_silicon(seed):
    """fp32 -> fp16 rounded once in each mode (overflow, denormals, NaN payloads) and fp16 -> fp32, as this CPU does."""
    report, program, _init = silicon_diff(HALF_PRECISION_PROGRAM, range(32), 512, seed=seed, floats=seed > 0)
    assert report.divergence is None, report.divergence.describe()
    assert report.steps == len(program.instructions)


def test_issue_27_legacy_packed_forms_need_aligned_memory_and_scalar_and_vex_forms_do_not():
    """SSE's packed m128 operands fault (#GP(0)) off a 16-byte boundary (SDM Vol. 1, 4.1.1); the scalar m32 ones,
    movlps/movhps's m64 and the VEX/EVEX forms do not."""
    for line in ("addps xmm0, XMMWORD PTR [rdi+4]", "paddd xmm1, XMMWORD PTR [rdi+8]", "pshufd xmm0, XMMWORD PTR [rdi+1], 0x1b",
                 "cmpltps xmm0, XMMWORD PTR [rdi+4]", "cvtdq2ps xmm0, XMMWORD PTR [rdi+12]", "psrld xmm0, XMMWORD PTR [rdi+2]"):
        with pytest.raises(Fault) as info:
            run(line, {}, {"rdi": DATA})
        assert info.value.kind == "#GP", line
    run("addss xmm0, DWORD PTR [rdi+1]\ncvtsi2ss xmm1, DWORD PTR [rdi+3]\nmovlps xmm2, QWORD PTR [rdi+5]\n"
        "vaddps ymm0, ymm0, YMMWORD PTR [rdi+4]\nvpaddd zmm1, zmm1, ZMMWORD PTR [rdi+8]\n"
        "vcmpltps k1, zmm0, DWORD BCST [rdi+2]\naddps xmm0, XMMWORD PTR [rdi+0x10]", {}, {"rdi": DATA})


# issue 27, round 2: gathers and scatters, element by element through VSIB operands.  The index vectors are made
# small from the seeded registers (dwords 0..63, -64..63; qwords 0..63, -64..63) so that every element lands in
# the data (gathers, [rdi]) or in the writable page (scatters, [rsi]: overlapping elements, the last one wins);
# EVEX masks from eax/ebx and stored after each instruction (all zero: each element done clears its bit), VEX
# masks the seeded registers' sign bits
GATHER_SCATTER_PROGRAM = """
    mov eax, 0xa5c3
    mov ebx, 0x5a
    vpsrld zmm1, zmm5, 0x1a
    vpsrlq zmm2, zmm6, 0x3a
    vpsrad zmm3, zmm7, 0x19
    vpmovsxdq zmm4, ymm3
    kmovw k1, eax
    vpgatherdd zmm10{k1}, DWORD PTR [rdi+zmm1*4]
    kmovq QWORD PTR [rsi], k1
    vpgatherdd ymm11, DWORD PTR [rdi+ymm1*4+0x10], ymm12
    vpgatherdd xmm13, DWORD PTR [rdi+xmm3*4+0x800], xmm14
    kmovw k2, ebx
    vpgatherdq zmm15{k2}, QWORD PTR [rdi+ymm1*8]
    kmovq QWORD PTR [rsi+0x8], k2
    vpgatherdq ymm8, QWORD PTR [rdi+xmm3*8+0x800], ymm9
    kmovw k1, eax
    vpgatherqd ymm16{k1}, DWORD PTR [rdi+zmm2*4]
    vpgatherqd xmm0, DWORD PTR [rdi+ymm4*4+0x800], xmm6
    vpgatherqd xmm5, DWORD PTR [rdi+xmm2*2], xmm7
    kmovw k3, ebx
    vpgatherqq zmm17{k3}, QWORD PTR [rdi+zmm4*8+0x800]
    vpgatherqq ymm12, QWORD PTR [rdi+ymm2*8], ymm14
    kmovw k1, eax
    vgatherdps zmm18{k1}, DWORD PTR [rdi+zmm3*4+0x800]
    vgatherdps xmm9, DWORD PTR [rdi+xmm1*4], xmm10
    kmovw k2, eax
    vgatherdpd zmm19{k2}, QWORD PTR [rdi+ymm3*8+0x800]
    kmovw k3, ebx
    vgatherqps ymm20{k3}, DWORD PTR [rdi+zmm2*4+0x4]
    vgatherqps xmm11, DWORD PTR [rdi+ymm2*4], xmm13
    kmovw k1, eax
    vgatherqpd xmm21{k1}, QWORD PTR [rdi+xmm4*8+0x800]
    vgatherqpd ymm15, QWORD PTR [rdi+ymm4*8+0x800], ymm8
    kmovq QWORD PTR [rsi+0x10], k1
    kmovw k1, eax
    vpscatterdd DWORD PTR [rsi+zmm1*4+0x100]{k1}, zmm22
    kmovq QWORD PTR [rsi+0x18], k1
    kmovw k2, ebx
    vpscatterqq QWORD PTR [rsi+zmm4*8+0x800]{k2}, zmm23
    kmovw k1, eax
    vscatterdps DWORD PTR [rsi+ymm3*4+0x800]{k1}, ymm24
    kmovw k1, eax
    vpscatterqd DWORD PTR [rsi+zmm2*4+0x200]{k1}, ymm25
    kmovw k1, eax
    vpscatterdq QWORD PTR [rsi+ymm1*8+0x300]{k1}, zmm26
    kmovw k1, ebx
    vscatterqps DWORD PTR [rsi+ymm2*4]{k1}, xmm27
    kmovw k1, eax
    vscatterdpd QWORD PTR [rsi+xmm1*8+0x600]{k1}, ymm28
    kmovw k1, eax
    vscatterqpd QWORD PTR [rsi+xmm4*8+0x800]{k1}, xmm29
    kmovw k1, eax
    vpscatterdd DWORD PTR [rsi+xmm1*1+0xa00]{k1}, xmm30
    kmovq QWORD PTR [rsi+0x20], k1
"""


@pytest.mark.needs_silicon
@pytest.mark.skipif(not {"avx512f", "avx512vl", "avx2"} <= set(HOST_FLAGS), reason="this CPU lacks avx512f, avx512vl, avx2 (/proc/cpuinfo)")
@pytest.mark.parametrize("seed", range(4))
def test_gathers_and_scatters_on_silicon(seed):
    """Every gather and scatter, VEX and EVEX, at each width, against this CPU: the elements, the order of
    overlapping stores, the masks cleared."""
    report, program, _init = silicon_diff(GATHER_SCATTER_PROGRAM, range(32), 512, seed=seed)
    assert report.divergence is None, report.divergence.describe()
    assert report.steps == len(program.instructions)


# a gather or scatter that faults part way: one index made huge (k2 selects it for a masked broadcast), so the
# element's address is unmapped; the elements below it are done, their mask elements clear, the rest still set
FAULTING_GATHERS = {
    "vex gather": """
    vpsrld ymm1, ymm5, 0x1a
    mov ecx, 0x7ffff000
    mov edx, 0x20
    kmovw k2, edx
    vpbroadcastd ymm1{k2}, ecx
    vpternlogd zmm12, zmm12, zmm12, 0xff
    mov edx, 0x2
    kmovw k3, edx
    vpxord ymm12{k3}, ymm12, ymm12
    vpgatherdd ymm10, DWORD PTR [rdi+ymm1*4], ymm12
""",
    "evex gather": """
    vpsrlq zmm2, zmm6, 0x3a
    mov rcx, 0x7ffff000
    mov edx, 0x10
    kmovw k2, edx
    vpbroadcastq zmm2{k2}, rcx
    mov eax, 0xfd
    kmovw k1, eax
    vpgatherqq zmm11{k1}, QWORD PTR [rdi+zmm2*8]
""",
    "evex scatter": """
    vpsrld zmm1, zmm5, 0x1a
    mov ecx, 0x7ffff000
    mov edx, 0x400
    kmovw k2, edx
    vpbroadcastd zmm1{k2}, ecx
    mov eax, 0xfff7
    kmovw k1, eax
    vpscatterdd DWORD PTR [rsi+zmm1*4]{k1}, zmm20
""",
}


@pytest.mark.needs_silicon
@pytest.mark.skipif(not {"avx512f", "avx512vl", "avx2"} <= set(HOST_FLAGS), reason="this CPU lacks avx512f, avx512vl, avx2 (/proc/cpuinfo)")
@pytest.mark.parametrize("name", sorted(FAULTING_GATHERS))
def test_a_gather_or_scatter_faulting_part_way_leaves_what_silicon_leaves(name):
    """#PF at the huge index, on both; every register (the VEX mask saying how far it got, DEST's gathered
    elements and its bits above them as they were) and the scattered bytes as this CPU leaves them."""
    import random

    from isasim.core.backends import get_backend
    from isasim.core.trace import Init

    program = ISA.assemble(".intel_syntax noprefix\n" + FAULTING_GATHERS[name] + "    ret\n")
    rng = random.Random(27)
    init = Init(regs={"rdi": SILICON_DATA, "rsi": SILICON_DATA + 0x1000},
                memory=[(SILICON_DATA, rng.randbytes(0x1000), False), (SILICON_DATA + 0x1000, bytes(0x1000), True)],
                arrays={f"zmm{n}": rng.randbytes(64) for n in range(32)})
    sim, cpu = (get_backend(b, "x86_amx", program).run("x86_amx", {}, program, init) for b in ("sim", "silicon"))
    assert sim.fault and cpu.fault and sim.fault.kind == cpu.fault.kind == "#PF", (sim.fault, cpu.fault)
    assert (sim.observed["regs"], sim.observed["arrays"]) == (cpu.observed["regs"], cpu.observed["arrays"])
    assert sim.read_memory(SILICON_DATA + 0x1000, 0x1000) == cpu.read_memory(SILICON_DATA + 0x1000, 0x1000)
    assert sim.read_memory(SILICON_DATA + 0x1000, 0x1000) != bytes(0x1000) or name != "evex scatter"


def test_vsib_operands_refused_in_one_line_where_they_do_not_fit():
    for line, message in (("vpgatherdd zmm0, DWORD PTR [rax+zmm1*4]", "no form"),  # EVEX: a mask is required
                          ("vpscatterdd DWORD PTR [rax+zmm1*4], zmm0", "no form"),
                          ("vpgatherdd zmm0{k1}, DWORD PTR [rip+zmm1*4]", "cannot be rip-relative"),
                          ("vpgatherdd zmm0{k1}{z}, DWORD PTR [rax+zmm1*4]", "no form"),  # no zeroing
                          ("vpgatherdd ymm0, DWORD PTR [rax+ymm17*4], ymm2", "no form"),  # VEX: index 0-15
                          ("vmovdqu32 zmm0, ZMMWORD PTR [rax+zmm1*4]", "no form"),
                          ("mov eax, DWORD PTR [rax+xmm1*4]", "must be a 64-bit general-purpose register")):
        with pytest.raises(AssemblyError, match=re.escape(message)):
            assemble(line)


def test_gathers_fault_ud_on_overlapping_registers_and_run_element_by_element():
    """#UD: a VEX gather's destination, index and mask not three registers, an EVEX gather's destination its
    index; hand-worked: the indices -1, 0, 2, 1 (sign-extended) from [rdi+0x4], the VEX mask's sign bits."""
    memory = b"".join(n.to_bytes(4, "little") for n in range(0x100, 0x180))
    for line in ("vpgatherdd xmm1, DWORD PTR [rdi+xmm1*4], xmm2", "vpgatherdd xmm1, DWORD PTR [rdi+xmm2*4], xmm1",
                 "vpgatherdd zmm1{k1}, DWORD PTR [rdi+zmm1*4]"):
        with pytest.raises(Fault, match="#UD|different|cannot be its index"):
            run(line, regs={"rdi": DATA}, memory=memory)
    indices = vector_of([0xFFFFFFFF, 0, 2, 1])
    state, _ = run("vpgatherdd xmm0, DWORD PTR [rdi+xmm1*4+0x4], xmm2", {0: ALL_ONES, 1: indices,
                   2: vector_of([1 << 31, 0, 1 << 31, 0x7FFFFFFF]) | 1 << 200}, {"rdi": DATA}, memory=memory)
    assert state.read_vector(0) == vector_of([0x100, 0xFFFFFFFF, 0x103, 0xFFFFFFFF])  # bits 511:128 zeroed
    assert state.read_vector(2) == 0
    state, mem = run("mov eax, 0x9\nkmovw k1, eax\nvpscatterdd DWORD PTR [rdi+xmm1*4]{k1}, xmm0",
                     {0: vector_of([7, 8, 9, 10]), 1: vector_of([2, 2, 3, 2])}, {"rdi": DATA}, memory=memory)
    assert state.read_opmask(1) == 0  # elements 0 and 3 to the same dword: the later one stays
    assert (mem.read(DATA + 8, 8), mem.read(DATA, 8)) == ((10).to_bytes(4, "little") + memory[12:16], memory[:8])


# issue 27, round 2: VCVTUSI2SS of the unsigned values whose rounding matters (above 2^63, ties at 2^24 and above),
# and the word products' high halves and absolute values at their extremes
UNSIGNED_CONVERSION_PROGRAM = """
    mov rax, -1
    vcvtusi2ss xmm1, xmm2, rax
    mov rax, 0x8000008000000000
    vcvtusi2ss xmm3, xmm4, rax
    mov rax, 0x8000018000000001
    vcvtusi2ss xmm16, xmm17, rax
    mov eax, 0xffffffff
    vcvtusi2ss xmm5, xmm6, eax
    mov eax, 0x1000001
    vcvtusi2ss xmm7, xmm8, eax
    mov eax, 0x1000003
    vcvtusi2ss xmm9, xmm10, eax
    vcvtusi2ss xmm11, xmm12, DWORD PTR [rdi+0x4]
    vcvtusi2ss xmm13, xmm14, QWORD PTR [rdi+0x8]
    vpcmpeqd ymm15, ymm15, ymm15
    vpsllw ymm15, ymm15, 0xf
    vpmulhw ymm18, ymm15, ymm15
    vpmulhuw ymm19, ymm15, ymm20
    vpabsw ymm21, ymm15
    vpabsq zmm22, zmm23
    pmulhw xmm0, xmm15
    pabsb xmm2, xmm15
"""


@pytest.mark.needs_silicon
@pytest.mark.skipif(not {"avx512f", "avx512vl", "avx512bw", "ssse3"} <= set(HOST_FLAGS), reason="this CPU lacks avx512f, avx512vl, avx512bw, ssse3 (/proc/cpuinfo)")
@pytest.mark.parametrize("seed", range(2))
def test_unsigned_conversion_word_products_and_absolute_values_on_silicon(seed):
    report, program, _init = silicon_diff(UNSIGNED_CONVERSION_PROGRAM, range(32), 512, seed=seed)
    assert report.divergence is None, report.divergence.describe()
    assert report.steps == len(program.instructions)

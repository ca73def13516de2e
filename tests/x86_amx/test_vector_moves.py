"""The vector moves and zeroing idioms g++ 12 emits around AMX kernels (vector.py, issue 15).

Encodings against GNU as, text against objdump, g++'s own bytes; semantics by the SDM's Operation
sections: a legacy SSE write keeps bits 511:128, a VEX/EVEX write zeroes them, VZEROUPPER clears
bits 511:128 of zmm0-15; alignment faults; a CPU model without the feature raises #UD.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from isasim.core.errors import AssemblyError
from isasim.core.faults import Fault
from isasim.core.memory import Memory
from isasim.x86_amx import ISA, vector
from isasim.x86_amx.assembler import assemble
from isasim.x86_amx.context import X86Context
from isasim.x86_amx.cpu import cpu_model
from isasim.x86_amx.decoder import decode_one
from isasim.x86_amx.state import X86AmxState

try:
    from gnu_binutils import assert_round_trip, gas, needs_binutils
except ImportError:
    from tests.gnu_binutils import assert_round_trip, gas, needs_binutils

CASES = [
    "pxor xmm0,xmm0", "pxor xmm15,xmm1", "pxor xmm3,XMMWORD PTR [rdi]", "pxor xmm8,XMMWORD PTR [rsp+0x10]",
    "vpxor xmm0,xmm0,xmm0", "vpxor xmm8,xmm9,xmm10", "vpxor xmm1,xmm2,xmm9", "vpxor ymm1,ymm2,ymm3",
    "vpxor ymm1,ymm2,YMMWORD PTR [rsp+0x20]", "vpxor xmm4,xmm5,XMMWORD PTR [r13+rax*8-0x10]",
    "movaps XMMWORD PTR [rbp-0x30],xmm0", "movaps XMMWORD PTR [rsp-0x38],xmm0", "movaps xmm3,XMMWORD PTR [rsp]",
    "movaps xmm1,xmm2", "movaps xmm12,xmm13",
    "movups XMMWORD PTR [rsp-0x18],xmm0", "movups XMMWORD PTR [rsp-0x47],xmm0", "movups xmm1,xmm2",
    "movups xmm9,XMMWORD PTR [r12+rax*4+0x7]",
    "movdqa xmm0,XMMWORD PTR [rsi+0x10]", "movdqa XMMWORD PTR [rsi],xmm14", "movdqa xmm1,xmm2",
    "vmovdqa XMMWORD PTR [rsp-0x30],xmm0", "vmovdqa ymm5,YMMWORD PTR [rdi+0x40]", "vmovdqa ymm5,ymm6",
    "vmovdqa xmm9,xmm1", "vmovdqa YMMWORD PTR [r8],ymm15",
    "vmovdqu8 YMMWORD PTR [rsp-0x3f],ymm0", "vmovdqu8 YMMWORD PTR [rsp-0x20],ymm0",
    "vmovdqu8 ZMMWORD PTR [rsp-0x50],zmm0", "vmovdqu8 ZMMWORD PTR [rsp-0x58],zmm0",
    "vmovdqu8 ZMMWORD PTR [rsp-0x40],zmm1", "vmovdqu8 zmm17,ZMMWORD PTR [rdi+0x80]", "vmovdqu8 xmm1,xmm2",
    "vmovdqu8 XMMWORD PTR [rdi],xmm20", "vmovdqu8 ymm31,ymm16", "vmovdqu8 zmm2,zmm3",
    "vpbroadcastw xmm0,eax", "vpbroadcastw zmm3,r9d", "vpbroadcastw ymm2,xmm1", "vpbroadcastw xmm2,WORD PTR [rdi]",
    "vpbroadcastw zmm2,xmm1", "vpbroadcastw xmm18,xmm1", "vpbroadcastw ymm4,WORD PTR [rsp+0x2]",
    "vzeroupper", "movdqa xmm0,XMMWORD PTR [rip+0x0]", "vmovdqu8 zmm1,ZMMWORD PTR [rip+0x40]",
]


@pytest.fixture(scope="module")
def gnu():
    return gas(CASES)


@needs_binutils
@pytest.mark.parametrize("i", range(len(CASES)), ids=CASES)
def test_isasim_assembles_as_gnu_as_and_prints_as_objdump(gnu, i):
    assert_round_trip(assemble, CASES[i], *gnu[i])


GXX_BYTES = [  # from g++ -O0/-O2/-O3 [-march=sapphirerapids] -c of the kernels, with objdump's text
    ("c5 f9 ef c0", "vpxor xmm0,xmm0,xmm0"), ("66 0f ef c0", "pxor xmm0,xmm0"), ("c5 f8 77", "vzeroupper"),
    ("62 f1 7f 28 7f 84 24 c1 ff ff ff", "vmovdqu8 YMMWORD PTR [rsp-0x3f],ymm0"),
    ("62 f1 7f 28 7f 44 24 ff", "vmovdqu8 YMMWORD PTR [rsp-0x20],ymm0"),
    ("62 f1 7f 48 7f 84 24 b0 ff ff ff", "vmovdqu8 ZMMWORD PTR [rsp-0x50],zmm0"),
    ("0f 11 44 24 e8", "movups XMMWORD PTR [rsp-0x18],xmm0"), ("0f 29 45 d0", "movaps XMMWORD PTR [rbp-0x30],xmm0"),
    ("c5 f9 7f 44 24 d0", "vmovdqa XMMWORD PTR [rsp-0x30],xmm0"), ("62 f2 7d 08 7b c0", "vpbroadcastw xmm0,eax"),
    ("66 0f 6f 05 00 00 00 00", "movdqa xmm0,XMMWORD PTR [rip+0x0]"),
]


@pytest.mark.parametrize("hexcode,text", GXX_BYTES)
def test_gxx_bytes_decode_to_objdump_text(hexcode, text):
    code = bytes.fromhex(hexcode)
    ins = decode_one(code, 0, 0x1000)
    assert (ins.text, ins.encoding, ins.extra.get("noncanonical")) == (text, code, None)


@pytest.mark.parametrize("hexcode,why", [
    ("62 f1 7f 49 7f 04 24", "masked {k1}"),
    ("0f ef c0", "MMX pxor mm0,mm0"),
])
def test_what_does_not_decode(hexcode, why):
    assert vector.decode(bytes.fromhex(hexcode), 0, 0x1000) is None, why


def test_assembly_errors():
    for line, message in (("vpxor xmm16, xmm1, xmm2", "no form"), ("pxor xmm0, eax", "no form"),
                          ("movups xmm0, 1", "registers and memory"),
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
    from isasim.x86_amx import cpu as cpu_module

    lacking = dataclasses.replace(cpu_model("emerald-rapids"), name="no-avx512",
                                  features=cpu_model("emerald-rapids").features - {"AVX512F", "AVX512BW", "AVX512VL"})
    monkeypatch.setitem(cpu_module.CPU_MODELS, "no-avx512", lacking)
    for line in ("vmovdqu8 ymm0, ymm1", "vpbroadcastw xmm0, eax", "vpbroadcastw xmm16, xmm1"):
        with pytest.raises(Fault) as info:
            run(line, model="no-avx512")
        assert info.value.kind == "#UD" and "AVX512" in info.value.rule
    run("vpxor ymm0, ymm0, ymm0\nvpbroadcastw ymm1, xmm2\nvzeroupper\npxor xmm1, xmm1", model="no-avx512")


def test_every_model_has_the_features_of_every_form():
    for name in ("sapphire-rapids", "emerald-rapids", "granite-rapids"):
        assert {"SSE2", "AVX", "AVX2", "AVX512F", "AVX512BW", "AVX512VL"} <= cpu_model(name).features


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


@pytest.mark.skipif("avx512f" not in Path("/proc/cpuinfo").read_text(),
                    reason="this host's /proc/cpuinfo has no avx512f: the EVEX forms cannot run on its silicon")
def test_evex_forms_on_silicon():
    pytest.skip("an AVX-512 silicon comparison needs a host with AVX-512 (none this session)")


def test_a_trace_seeds_a_zmm_register_as_64_bytes():
    from isasim.core.errors import ConfigError

    state = X86AmxState(model=cpu_model("emerald-rapids"))
    ISA.seed_arrays(state, {"zmm3": bytes(range(64))})
    assert state.read_vector(3) == PATTERN and ISA.observe(state)["arrays"]["zmm3"] == bytes(range(64))
    with pytest.raises(ConfigError, match="64 bytes"):
        ISA.seed_arrays(state, {"zmm3": bytes(16)})

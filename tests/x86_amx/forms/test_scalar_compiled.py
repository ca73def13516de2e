"""The scalar instructions g++ 12 emits for the AMX kernels (issue 15): PUSH, POP, LEAVE, CDQE, MOVSXD,
MOVZX, MOVSX, SHL/SAL/SHR/SAR, XCHG (66 90) and the prefixed multi-byte NOPs.

Encodings against GNU as, text against objdump, and the bytes g++'s objects hold decode to objdump's
text; semantics by examples worked by hand from the SDM's Operation sections.
"""

from __future__ import annotations

import pytest
from gnu_binutils import assert_round_trip, gas, needs_binutils

from isasim.core.errors import AssemblyError
from isasim.core.faults import Fault
from isasim.core.memory import Memory
from isasim.x86_amx.encoding import scalar as scalar_encoding
from isasim.x86_amx.forms import scalar
from isasim.x86_amx.assembler import assemble
from isasim.x86_amx.context import X86Context
from isasim.x86_amx.config import cpu_model
from isasim.x86_amx.decoder import decode_one
from isasim.x86_amx.state import AF, CF, OF, PF, SF, ZF, X86AmxState

REGS64 = ("rax", "rcx", "rsp", "rbp", "rdi", "r8", "r12", "r13", "r15")
CASES = [
    # PUSH / POP (64-bit, 16-bit, memory, immediates as GNU as sizes them)
    *[f"push {r}" for r in REGS64], *[f"pop {r}" for r in REGS64],
    "push ax", "push r9w", "pop ax", "pop r11w", "push QWORD PTR [rdi]", "push QWORD PTR [rsp+0x8]",
    "push WORD PTR [rbx+rcx*2+0x10]", "pop QWORD PTR [rsp]", "pop QWORD PTR [r13+0x40]", "pop WORD PTR [rdi]",
    "push 0x0", "push 0x7f", "push 0x80", "push -1", "push -128", "push -129", "push 0x12345678", "push -0x80000000",
    "leave", "cdqe",
    # MOVSXD / MOVZX / MOVSX
    "movsxd rax,eax", "movsxd rcx,DWORD PTR [rbp-0x14]", "movsxd r8,r9d", "movsxd eax,ecx",
    "movsxd rdx,DWORD PTR [rsp+rax*4]",
    *[f"{op} {d},{s}" for op in ("movzx", "movsx") for d, s in (
        ("eax", "al"), ("eax", "ah"), ("rax", "bl"), ("ax", "cl"), ("r8d", "sil"), ("r15", "r14b"), ("eax", "cx"),
        ("rax", "r9w"), ("ecx", "BYTE PTR [rdi]"), ("rcx", "BYTE PTR [rdi+0x8]"), ("ax", "BYTE PTR [rsp]"),
        ("eax", "WORD PTR [rax+0x7]"), ("r10", "WORD PTR [r13+rcx*2]"))],
    # shifts: imm8, the implied 1, CL; SAL is SHL's /4
    *[f"{op} {d},{c}" for op in ("shl", "sal", "shr", "sar") for d in (
        "rax", "ecx", "dx", "bl", "ah", "r9", "r10d", "QWORD PTR [rdi]", "BYTE PTR [rsp+0x3]", "WORD PTR [rbx]")
      for c in ("1", "0xa", "cl")],
    "shl rcx,0x0", "shl rax,0x3f", "shl rax,0xff", "sar eax,-1", "shr r8,0x40",
    # XCHG, the padding 66 90 among them
    "xchg ax,ax", "xchg eax,eax", "xchg rcx,rax", "xchg rax,rcx", "xchg ecx,eax", "xchg cx,ax", "xchg r9,rax",
    "xchg al,cl", "xchg rbx,rcx", "xchg r8d,r9d", "xchg QWORD PTR [rdi],rax", "xchg rax,QWORD PTR [rdi]",
    "xchg BYTE PTR [rsp],dh",
    # NOP with the cs prefix GNU as takes
    "cs nop WORD PTR [rax+rax*1+0x0]", "cs nop DWORD PTR [rax+0x0]",
]


@pytest.fixture(scope="module")
def gnu():
    return gas(CASES)


@needs_binutils
@pytest.mark.parametrize("i", range(len(CASES)), ids=CASES)
def test_isasim_assembles_as_gnu_as_and_prints_as_objdump(gnu, i):
    assert_round_trip(assemble, CASES[i], *gnu[i])


# Bytes from `g++ -O0/-O2/-O3 [-march=sapphirerapids] -c` of the seed's kernels, with objdump's text.
GXX_BYTES = [
    ("55", "push rbp"), ("5d", "pop rbp"), ("41 54", "push r12"), ("41 5c", "pop r12"), ("c9", "leave"),
    ("48 98", "cdqe"), ("48 63 c9", "movsxd rcx,ecx"), ("48 63 d0", "movsxd rdx,eax"),
    ("48 c1 e1 0a", "shl rcx,0xa"), ("48 c1 e0 02", "shl rax,0x2"), ("66 90", "xchg ax,ax"),
    ("0f b7 05 00 00 00 00", "movzx eax,WORD PTR [rip+0x0]"), ("8b 05 00 00 00 00", "mov eax,DWORD PTR [rip+0x0]"),
    ("66 0f 1f 84 00 00 00 00 00", "nop WORD PTR [rax+rax*1+0x0]"),
    ("0f 1f 84 00 00 00 00 00", "nop DWORD PTR [rax+rax*1+0x0]"), ("0f 1f 40 00", "nop DWORD PTR [rax+0x0]"),
    ("66 66 2e 0f 1f 84 00 00 00 00 00", "data16 cs nop WORD PTR [rax+rax*1+0x0]"),
    ("66 66 66 2e 0f 1f 84 00 00 00 00 00", "data16 data16 cs nop WORD PTR [rax+rax*1+0x0]"),
]


@pytest.mark.parametrize("hexcode,text", GXX_BYTES)
def test_gxx_bytes_decode_to_objdump_text(hexcode, text):
    code = bytes.fromhex(hexcode)
    if text is None:
        assert scalar_encoding.decode(code, 0, 0x1000) is None
        return
    ins = decode_one(code, 0, 0x1000)
    assert (ins.text, ins.encoding) == (text, code)
    # the text names these bytes, or the decoder notes which bytes it names (a shorter displacement)
    (again,) = assemble(text).instructions
    assert again.encoding == code or ins.extra["canonical_encoding"] == again.encoding


def test_data16_padding_is_gnu_as_padding_bytes():
    # GNU as refuses "data16" before a WORD nop, yet pads with exactly these bytes: isasim writes them
    (ins,) = assemble("data16 cs nop WORD PTR [rax+rax*1+0x0]").instructions
    assert ins.encoding.hex(" ") == "66 66 2e 0f 1f 04 00"
    with pytest.raises(AssemblyError, match="only 'data16'"):
        assemble("cs data16 nop WORD PTR [rax]")
    with pytest.raises(AssemblyError, match="memory operand"):
        assemble("cs nop")
    with pytest.raises(AssemblyError, match="unknown mnemonic 'cs add'"):
        assemble("cs add rax, rbx")


def test_assembly_errors():
    for line, message in (("xchg rax, rax", "write nop"), ("movzx eax, [rdi]", "size"),
                          ("shl rax, 0x100", "8 bits"), ("shl [rdi], 1", "size"), ("movsxd ax, cx", "no form")):
        with pytest.raises(AssemblyError, match=message):
            assemble(line)


# ---------------------------------------------------------------------------
# Semantics, worked by hand from the SDM
# ---------------------------------------------------------------------------

STACK = 0x7000


def run(lines: str, regs: dict, memory: bytes = bytes(0x100)):
    state = X86AmxState()
    mem = Memory()
    mem.map(STACK, memory, writable=True)
    cpu = X86Context(state, mem, cpu_model("emerald-rapids"))
    for name, value in regs.items():
        state.write_register(name, value)
    for ins in assemble(lines).instructions:
        ins.form.execute(cpu, ins.operands)
    return state, mem


def test_push_pop_move_rsp_and_memory():
    state, mem = run("push rcx\npush -0x80\npop rdx", {"rsp": STACK + 0x80, "rcx": 0x1122334455667788})
    assert mem.read(STACK + 0x78, 8) == (0x1122334455667788).to_bytes(8, "little")
    assert mem.read(STACK + 0x70, 8) == b"\x80" + b"\xff" * 7  # the imm8 is sign-extended to 64 bits
    assert state.read_register("rdx") == (1 << 64) - 0x80 and state.read_register("rsp") == STACK + 0x78
    state, mem = run("push ax\npop r9w", {"rsp": STACK + 0x80, "rax": 0xABCD, "r9": 0xFFFF_FFFF_0000_0000})
    assert state.read_register("rsp") == STACK + 0x80 and state.read_register("r9") == 0xFFFF_FFFF_0000_ABCD


def test_push_rsp_pushes_the_old_value_and_pop_rsp_keeps_the_popped_one():
    state, mem = run("push rsp", {"rsp": STACK + 0x80})
    assert int.from_bytes(mem.read(STACK + 0x78, 8), "little") == STACK + 0x80
    image = bytearray(0x100)
    image[0x80:0x88] = (0xDEADBEEF).to_bytes(8, "little")
    state, _ = run("pop rsp", {"rsp": STACK + 0x80}, bytes(image))
    assert state.read_register("rsp") == 0xDEADBEEF


def test_pop_into_memory_addresses_through_the_incremented_rsp():
    image = bytearray(0x100)
    image[0x80:0x88] = (0x55).to_bytes(8, "little")
    _, mem = run("pop QWORD PTR [rsp]", {"rsp": STACK + 0x80}, bytes(image))
    assert int.from_bytes(mem.read(STACK + 0x88, 8), "little") == 0x55


def test_leave_restores_the_frame():
    image = bytearray(0x100)
    image[0x40:0x48] = (0x123).to_bytes(8, "little")  # the caller's rbp, saved by push rbp
    state, _ = run("leave", {"rsp": STACK + 0x10, "rbp": STACK + 0x40}, bytes(image))
    assert state.read_register("rsp") == STACK + 0x48 and state.read_register("rbp") == 0x123


def test_a_push_that_faults_leaves_rsp():
    state = X86AmxState()
    cpu = X86Context(state, Memory(), cpu_model("emerald-rapids"))
    state.write_register("rsp", 0x9000)
    (ins,) = assemble("push rax").instructions
    with pytest.raises(Fault) as info:
        ins.form.execute(cpu, ins.operands)
    assert info.value.kind == "#PF" and state.read_register("rsp") == 0x9000


@pytest.mark.parametrize("line,regs,expected", [
    ("cdqe", {"rax": 0xFFFF_FFFF_8000_0000 ^ 0xFFFF_FFFF_0000_0000}, {"rax": 0xFFFF_FFFF_8000_0000}),
    ("cdqe", {"rax": 0xFFFF_FFFF_7FFF_FFFF}, {"rax": 0x7FFF_FFFF}),
    ("movsxd rcx, ecx", {"rcx": 0x1_FFFF_FFFE}, {"rcx": (1 << 64) - 2}),
    ("movsxd eax, ecx", {"rax": 1 << 40, "rcx": 0xFFFF_FFFE}, {"rax": 0xFFFF_FFFE}),
    ("movzx eax, cl", {"rax": (1 << 64) - 1, "rcx": 0x80}, {"rax": 0x80}),
    ("movzx ax, cl", {"rax": (1 << 64) - 1, "rcx": 0x80}, {"rax": 0xFFFF_FFFF_FFFF_0080}),
    ("movsx rax, cl", {"rcx": 0x80}, {"rax": (1 << 64) - 0x80}),
    ("movsx eax, cx", {"rax": 1 << 40, "rcx": 0x8000}, {"rax": 0xFFFF_8000}),
    ("movzx eax, ah", {"rax": 0xAB00}, {"rax": 0xAB}),
    ("xchg rcx, rax", {"rax": 1, "rcx": 2}, {"rax": 2, "rcx": 1}),
    ("xchg eax, eax", {"rax": 1 << 40 | 7}, {"rax": 7}),  # 87 C0 zero-extends, unlike NOP
    ("xchg ax, ax", {"rax": 1 << 40 | 7}, {"rax": 1 << 40 | 7}),
])
def test_moves(line, regs, expected):
    state, _ = run(line, regs)
    for name, value in expected.items():
        assert state.read_register(name) == value, name


# (line, registers, expected result register values, expected status flags, or None: unchanged)
SHIFTS = [
    # SHL: CF := last bit out; OF := MSB(result) XOR CF for a count of 1
    ("shl al, 1", {"rax": 0x81}, 0x02, CF | OF),
    ("shl al, 1", {"rax": 0x40}, 0x80, SF | OF),
    ("shl al, 1", {"rax": 0xC0}, 0x80, CF | SF),
    ("shl eax, 4", {"rax": 0xF000_000F}, 0xF0, CF | PF),  # CF: bit 28, the last one out; 0xF0: even parity
    ("shl eax, 29", {"rax": 0xF000_000F}, 0xE000_0000, CF | SF | PF),  # bit 3 is the last out
    ("shl rax, 0x3f", {"rax": 3}, 1 << 63, CF | SF | PF),
    ("shl al, 8", {"rax": 0x01}, 0x00, CF | ZF | PF),  # the count-8 byte shift: bit 0 is the last out
    ("shl al, 9", {"rax": 0xFF}, 0x00, ZF | PF),  # past the width the loop shifts zeros out
    ("shl eax, 0x20", {"rax": 0x1234}, 0x1234, None),  # count AND 1FH = 0: flags and DEST untouched
    # SHR: OF := MSB of the original for a count of 1
    ("shr al, 1", {"rax": 0x81}, 0x40, CF | OF),
    ("shr eax, 1", {"rax": 0x2}, 0x1, 0),
    ("shr rax, 0x3f", {"rax": 1 << 63}, 1, 0),
    # SAR: copies of the sign come in, OF := 0
    ("sar al, 1", {"rax": 0x81}, 0xC0, CF | SF | PF),
    ("sar eax, 0x1f", {"rax": 0x8000_0000}, 0xFFFF_FFFF, SF | PF),
    ("sar rax, 1", {"rax": 1}, 0, CF | ZF | PF),
    ("sar ax, cl", {"rax": 0x8000, "rcx": 0x11}, 0xFFFF, CF | SF | PF),  # count 17 > 16: the sign bit comes out
]


@pytest.mark.parametrize("line,regs,result,flags", SHIFTS)
def test_shift_examples(line, regs, result, flags):
    start = CF | PF | AF | ZF | SF | OF
    state, _ = run(line, {**regs, "rflags": 0x202 | start})
    dest = line.split()[1].rstrip(",")
    assert state.read_register(dest) == result
    status = state.rflags & (CF | PF | AF | ZF | SF | OF)
    if flags is None:
        assert status == start
        return
    count = line.split(",")[1].strip()
    undefined = 0 if count == "1" else OF  # the SDM defines OF for a count of 1 only
    assert status & ~undefined == flags  # AF (undefined) is cleared


def test_shifts_of_memory():
    state, mem = run("shl QWORD PTR [rsp], 4\nsar BYTE PTR [rsp+8], 1",
                     {"rsp": STACK}, bytes.fromhex("0100000000000010" + "80") + bytes(0xF7))
    assert mem.read(STACK, 9).hex() == "1000000000000000" + "c0"


def test_new_forms_are_declared_once_with_their_flags():
    for name in ("push", "pop", "leave", "cdqe", "movsxd", "movzx", "movsx", "shl", "shr", "sar", "xchg"):
        (form,) = scalar.FORMS.of_mnemonic(name)
        assert form.doc and form.codes
    assert "sal" in scalar.MNEMONICS and scalar.ALIASES["sal"] == "shl"
    assert scalar.UNDEFINED_FLAGS["shl"] == scalar.UNDEFINED_FLAGS["sal"] == scalar.UNDEFINED_FLAGS["sar"] == OF | AF
    assert scalar.UNDEFINED_FLAGS["push"] == scalar.UNDEFINED_FLAGS["movzx"] == 0
    # SAL's own /6 rows are not taken: GNU as never writes them
    assert not any("/6" in row for row in scalar.FORMS.of_mnemonic("shl")[0].rows)


RIP_CASES = ["mov eax,DWORD PTR [rip+0x0]", "movzx eax,WORD PTR [rip+0x10]", "lea rax,[rip+0xffffffffffffffe0]",
             "lea rax,[rip-0x20]", "mov QWORD PTR [rip+0x7fffffff],0x5", "add DWORD PTR [rip+0x8],0x1",
             "cmp BYTE PTR [rip-0x80000000],0x1", "push QWORD PTR [rip+0x4]", "shl DWORD PTR [rip+0x1],1"]


@needs_binutils
def test_rip_relative_as_gnu_as_and_objdump():
    for line, (want_bytes, want_text) in zip(RIP_CASES, gas(RIP_CASES)):
        want_text = want_text.split("#")[0].strip()  # objdump's comment names the target
        (ins,) = assemble(line).instructions
        assert (ins.encoding.hex(" "), ins.text) == (want_bytes.hex(" "), want_text), line
        assert assemble(want_text).instructions[0].encoding == want_bytes


def test_rip_relative_addresses_are_the_next_instruction_plus_disp():
    state = X86AmxState()
    mem = Memory()
    program = assemble("lea rax, [rip+0x10]\nmov ecx, DWORD PTR [rip-0xa]", base=0x7000)
    mem.map(0x7000, bytes(program.code) + bytes(0x40), writable=True)
    cpu = X86Context(state, mem, cpu_model("emerald-rapids"))
    for ins in program.instructions:
        ins.form.execute(cpu, ins.operands)
    assert state.read_register("rax") == 0x7000 + 7 + 0x10
    # 0x7007 + 6 - 0xa = 0x7003: the lea's disp32 (0x10)
    assert state.read_register("rcx") == 0x10
    with pytest.raises(AssemblyError, match="no index"):
        assemble("mov rax, [rip+rcx*1]")

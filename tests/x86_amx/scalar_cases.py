"""The scalar lines the tests assemble: a table of every instruction shape and immediate edge, and seeded random
lines of the subset.  forms/test_scalar.py holds them to GNU as and objdump; test_assembler_program.py uses them too."""

from __future__ import annotations

import re

from isasim.x86_amx.encoding import scalar
from isasim.x86_amx.operands import GPR64

MOV_CASES = [
    "mov rax,rbx", "mov eax,ebx", "mov ax,bx", "mov al,bl", "mov ah,bh", "mov sil,dil", "mov r8b,al",
    "mov r15,r8", "mov r9d,r10d", "mov r11w,ax", "mov bh,cl", "mov spl,bpl",
    "mov rax,5", "mov eax,5", "mov ax,5", "mov al,5", "mov ah,0xff", "mov r12,-1", "mov r12d,7", "mov r9b,1",
    "mov rax,0x7fffffff", "mov rax,-0x80000000", "mov rax,0x80000000", "mov rax,0xffffffff",
    "mov rax,0xffffffff80000000", "mov rax,0x123456789abcdef0", "mov rax,0xffffffffffffffff",
    "movabs rax,5", "movabs r15,0xffffffffffffffff", "mov ecx,0xffffffff", "mov ecx,-1", "mov dx,0xffff",
    "mov dl,-1", "mov dx,-32768",
    "mov rax,QWORD PTR [rdi+0x8]", "mov rax,[rdi+8]", "mov QWORD PTR [rdi+0x8],rax", "mov [rdi],ecx",
    "mov eax,DWORD PTR [rsp]", "mov eax,[rsp+0x10]", "mov eax,[r12]", "mov eax,[r12+r13*2]", "mov eax,[rbp]",
    "mov eax,[r13]", "mov eax,[rbp+rax*8]", "mov eax,[r13+r12*1]", "mov eax,[r13+0x7f]", "mov eax,[rdi-0x80]",
    "mov eax,[rdi+0x80]", "mov eax,[rdi-0x81]", "mov eax,[rdi+0x7fffffff]", "mov eax,[rdi-0x80000000]",
    "mov eax,[rbx*4]", "mov eax,[rbx*1]", "mov eax,[rbx*8+0x10]", "mov eax,[r9*2-0x10]",
    "mov rax,QWORD PTR ds:0x1000", "mov rax,[0x1000]", "mov al,BYTE PTR ds:0x7fffffff",
    "mov eax,DWORD PTR ds:0xffffffffffffff00", "mov eax,[-16]", "mov eax,[rax+rbx]", "mov eax,[rsp+rbp*4]",
    "mov BYTE PTR [rdi],0xff", "mov WORD PTR [rdi],-2", "mov DWORD PTR [rdi],0x12345678",
    "mov QWORD PTR [rdi],-1", "mov QWORD PTR [r8+r9*8+0x100],0x7fffffff", "mov BYTE PTR [rsi],ah",
    "mov BYTE PTR [rsi],sil", "mov r10w,WORD PTR [r11]", "mov r8,[r15+0x40]",
]

ALU_CASES = [
    line.format(op=op)
    for op in ("add", "sub", "cmp", "xor")
    for line in (
        "{op} rax,rbx", "{op} ecx,edx", "{op} si,di", "{op} al,bl", "{op} r8b,r9b", "{op} ah,al",
        "{op} rax,1", "{op} rax,-1", "{op} rax,127", "{op} rax,128", "{op} rax,-128", "{op} rax,-129",
        "{op} rax,1000", "{op} rcx,1000", "{op} r9,-1000", "{op} eax,0x7fffffff", "{op} eax,0xffffffff",
        "{op} ebx,0x80000000", "{op} ax,1", "{op} ax,1000", "{op} bx,1000", "{op} ax,0xffff", "{op} al,1",
        "{op} cl,0x80", "{op} r15,0xffffffffffffffff", "{op} rax,0x7fffffff", "{op} rax,-0x80000000",
        "{op} rax,QWORD PTR [rdi]", "{op} QWORD PTR [rdi],rax", "{op} ecx,[rsi+rdx*4+8]",
        "{op} DWORD PTR [rsp+4],7", "{op} BYTE PTR [r12],0x12", "{op} WORD PTR [rbp-2],300",
        "{op} QWORD PTR [rdi],-0x80000000", "{op} QWORD PTR [rdi+rax*8+0x100],-129", "{op} BYTE PTR [rdi],al",
    )
]

OTHER_CASES = [
    "xor eax,eax", "xor r8d,r8d",
    # INC / DEC
    *[f"{op} {x}" for op in ("inc", "dec") for x in (
        "rax", "eax", "ax", "al", "ah", "r15b", "r9", "QWORD PTR [rdi]", "BYTE PTR [rsp]", "DWORD PTR [r13+8]",
        "WORD PTR [rbx*2+0x10]")],
    # TEST
    "test rax,rbx", "test eax,1", "test rax,1", "test al,1", "test ax,1", "test cl,0x80", "test ecx,0x80000000",
    "test rcx,-1", "test r10,0x7fffffff", "test rax,[rdi]", "test QWORD PTR [rdi],rax", "test BYTE PTR [rdi],0x80",
    "test DWORD PTR [rdi+4],0x10", "test sil,dil", "test WORD PTR [rsp],0xffff",
    # LEA
    "lea rax,[rdi+rsi*4+0x40]", "lea rdi,[rdi+rsi*4+0x40]", "lea eax,[rdi+4]", "lea ax,[rdi+4]", "lea r12,[r13]",
    "lea rax,[rsp]", "lea rax,[rbx*8]", "lea rax,[rax+rax*1]", "lea rdi,[rdi-0x40]", "lea r8,[r12+r12*8-0x1000]",
    "lea rax,QWORD PTR [rdx+0x10]", "lea rbp,[rbp]",
    # IMUL
    "imul rax,rbx", "imul eax,DWORD PTR [rdi]", "imul ax,bx", "imul r9,r10", "imul rax,rbx,3", "imul rax,rbx,-1",
    "imul rax,rbx,1000", "imul eax,ebx,-1000", "imul ax,bx,0x7fff", "imul ax,bx,-1", "imul rax,QWORD PTR [rdi+8],0x10",
    "imul rax,5", "imul ecx,-3", "imul r12,0x12345678", "imul rbx", "imul ecx", "imul cx", "imul cl",
    "imul BYTE PTR [rdi]", "imul QWORD PTR [rsp]", "imul r11,[r13]",
    # NOP / RET
    "nop", "nop eax", "nop DWORD PTR [rax]", "nop WORD PTR [rdi+8]", "nop QWORD PTR [rsp+rax*2]", "ret",
]

# issue 27: the rest of the integer instructions g++ and clang emit (lock lines: forms/test_scalar.py)
GENERAL_CASES = [
    *[line.format(op=op) for op in ("and", "or", "adc", "sbb") for line in (
        "{op} rax,rbx", "{op} esp,-64", "{op} rsp,0xffffffffffffffc0", "{op} al,0x7f", "{op} ax,0x1234",
        "{op} eax,0xff", "{op} QWORD PTR [rdi],rax", "{op} ecx,DWORD PTR [rsi+8]", "{op} BYTE PTR [rdi],1",
        "{op} WORD PTR [rsp+2],0x100", "{op} r9b,BYTE PTR [r10]", "{op} rax,0x7fffffff", "{op} ah,bl")],
    *[f"{op} {x}" for op in ("not", "neg", "mul", "div", "idiv") for x in (
        "rax", "ecx", "r9w", "bl", "ah", "QWORD PTR [rdi]", "DWORD PTR [rsp+8]", "BYTE PTR [r13]")],
    *[f"cmov{cc} {x}" for cc in ("o", "no", "b", "c", "nae", "ae", "nb", "nc", "e", "z", "ne", "nz", "be", "na",
                                 "a", "nbe", "s", "ns", "p", "pe", "np", "po", "l", "nge", "ge", "nl", "le", "ng",
                                 "g", "nle") for x in ("rax,rbx",)],
    "cmovne eax,DWORD PTR [rdi]", "cmovl r9w,WORD PTR [r10+2]", "cmovg r15,QWORD PTR [rsp]",
    *[f"set{cc} {x}" for cc in ("o", "no", "b", "c", "ae", "nc", "e", "z", "ne", "nz", "be", "a", "s", "ns", "p",
                                "np", "l", "ge", "le", "g") for x in ("al",)],
    "sete BYTE PTR [rdi]", "setne sil", "setl r8b", "setg ah", "setb BYTE PTR [rsp+rax*1+0x10]",
    "cbw", "cwde", "cwd", "cdq", "cqo", "endbr64",
    "bswap eax", "bswap rax", "bswap r12d", "bswap r15",
    "movbe eax,DWORD PTR [rdi]", "movbe QWORD PTR [rsp],rax", "movbe r9w,WORD PTR [r10+2]",
    "xadd DWORD PTR [rdi],eax", "xadd rax,rbx", "xadd al,cl", "xadd WORD PTR [rsi],r8w", "xadd ah,bh",
    "cmpxchg QWORD PTR [rdi],rcx", "cmpxchg ecx,edx", "cmpxchg BYTE PTR [rdi],al", "cmpxchg r9w,ax",
    # the multi-byte NOPs compilers pad with, as objdump prints them
    "nop DWORD PTR [rax+rax*1+0x0]", "nop WORD PTR [rax+rax*1+0x0]",
    "nop DWORD PTR [rax+0x0]", "nop DWORD PTR [rax+0x00000000]", "nop WORD PTR [rax+rax*1+0x00000000]",
]

# issue 27, group 2: rotates, the shifts by 1, imm8 and CL, SHLD and SHRD
ROTATE_CASES = [
    *[f"{op} {x}" for op in ("rol", "ror", "rcl", "rcr", "shl", "shr", "sar", "sal") for x in (
        "rax,1", "eax,1", "ax,1", "al,1", "rax,0x3f", "ecx,0x1f", "dx,0xf", "bl,0x7", "r9,cl", "r10d,cl", "r11w,cl",
        "sil,cl", "ah,cl", "QWORD PTR [rdi],1", "DWORD PTR [rsp+8],cl", "BYTE PTR [r12],0x4",
        "WORD PTR [rax+rbx*2],0x11", "rax,0x0", "al,0xff")],
    *[f"{op} {x}" for op in ("shld", "shrd") for x in (
        "rax,rdx,0xc", "eax,edx,cl", "ax,dx,0x3", "QWORD PTR [rdi],rcx,0x3f", "DWORD PTR [rsp],eax,cl",
        "r9w,r10w,cl", "r15,r8,1", "eax,ebx,0x0")],
]

# issue 27, group 3: bit tests (imm8 and register offsets), bit scans and counts
BIT_CASES = [
    *[f"{op} {x}" for op in ("bt", "bts", "btr", "btc") for x in (
        "rax,rbx", "eax,ecx", "ax,dx", "r9,r10", "QWORD PTR [rdi],rcx", "DWORD PTR [rsp+8],eax", "WORD PTR [r12],bx",
        "rax,0x3f", "eax,0x1f", "ax,0xf", "DWORD PTR [rdi],0x3", "QWORD PTR [rax+rbx*8],0x40", "eax,0xff")],
    *[f"{op} {x}" for op in ("bsf", "bsr", "lzcnt", "tzcnt", "popcnt") for x in (
        "rax,rbx", "eax,ecx", "ax,dx", "r9,QWORD PTR [r10]", "ecx,DWORD PTR [rsp+4]", "r11w,WORD PTR [rdi]")],
]

# issue 27, group 4: BMI1 and BMI2 (VEX-encoded)
BMI_CASES = [
    *[f"{op} {x}" for op in ("andn", "pdep", "pext", "mulx") for x in (
        "eax,ecx,edx", "rax,rcx,rdx", "r9,r10,QWORD PTR [r11+8]", "ecx,r12d,DWORD PTR [rdi]", "r15,rax,r8")],
    *[f"{op} {x}" for op in ("bextr", "bzhi", "shlx", "shrx", "sarx") for x in (
        "eax,ecx,edx", "rax,rcx,rdx", "r9,QWORD PTR [r11+8],r10", "ecx,DWORD PTR [rdi],r12d", "r15,rax,r8")],
    *[f"{op} {x}" for op in ("blsi", "blsmsk", "blsr") for x in (
        "eax,ecx", "rax,rdx", "r9,QWORD PTR [r10]", "r12d,DWORD PTR [rsp+4]")],
    "rorx eax,ecx,0x7", "rorx rax,rdx,0x3f", "rorx r9,QWORD PTR [r10],0x1", "rorx r12d,DWORD PTR [rsp+4],0x0",
]

CASES = MOV_CASES + ALU_CASES + OTHER_CASES + GENERAL_CASES + ROTATE_CASES + BIT_CASES + BMI_CASES


def random_lines(seed: int, count: int) -> list[str]:
    """Seeded random lines of the subset: every width, register, addressing shape and immediate edge."""
    import random

    from isasim.x86_amx.operands import gpr_name

    rng = random.Random(seed)

    def reg(bits: int) -> str:
        if bits == 8 and rng.random() < 0.15:
            return rng.choice(["ah", "bh", "ch", "dh"])
        return gpr_name(rng.randrange(16), bits)

    def mem(bits: int, sized: bool = True) -> str:
        base = rng.choice([None] + list(GPR64) * 3)
        index = rng.choice([None] * 4 + [r for r in GPR64 if r != "rsp"])
        scale = rng.choice([1, 2, 4, 8])
        disp = rng.choice([0, 0, 1, -1, 127, 128, -128, -129, 0x7FFFFFFF, -0x80000000, rng.randrange(-2**31, 2**31)])
        text = "+".join(([base] if base else []) + ([f"{index}*{scale}"] if index else []))
        if disp or not text:
            text += f"-{-disp:#x}" if disp < 0 else ("+" if text else "") + f"{disp:#x}"
        size = {8: "BYTE", 16: "WORD", 32: "DWORD", 64: "QWORD"}[bits]
        return (f"{size} PTR " if sized else "") + f"[{text}]"

    def imm(bits: int, op: str) -> int | None:
        r = rng.random()
        if r < 0.3:
            v = rng.randrange(-128, 128)
        elif r < 0.6:
            v = rng.choice([127, 128, -129, 255, 256, 0x7FFF, 0x8000, 0xFFFF, 0x7FFFFFFF, -0x80000000,
                            0xFFFFFFFF, 0x80000000, 2**63 - 1, 2**64 - 1])
        else:
            v = rng.randrange(-2 ** (bits - 1), 2**bits)
        if not -(1 << (bits - 1)) <= v < (1 << bits):
            return None
        if bits == 64 and op != "mov" and not -(2**31) <= scalar.signed(v, 64) < 2**31:
            return None
        return v

    lines: list[str] = []
    while len(lines) < count:
        op = rng.choice(["mov", "add", "sub", "cmp", "xor", "test", "inc", "dec", "lea", "imul", "imul1", "imul3",
                         "nop"])
        bits = rng.choice([8, 16, 32, 64])
        shape = rng.choice(["rr", "rm", "mr", "ri", "mi"])
        if op in ("inc", "dec", "imul1", "nop"):
            if op == "nop" and bits == 8:
                continue
            line = f"{op[:4]} " + (reg(bits) if rng.random() < 0.5 else mem(bits))
        elif op in ("lea", "imul", "imul3"):
            if bits == 8:
                continue
            if op == "lea":
                line = f"lea {reg(bits)},{mem(bits, sized=False)}"
            else:
                line = f"imul {reg(bits)},{reg(bits) if rng.random() < 0.5 else mem(bits)}"
                if op == "imul3":
                    v = imm(bits, op)
                    if v is None:
                        continue
                    line += f",{v}"
        else:
            if shape == "rr":
                a, b = reg(bits), reg(bits)
            elif shape == "rm":
                a, b = reg(bits), mem(bits, sized=rng.random() < 0.5)
            elif shape == "mr":
                a, b = mem(bits, sized=rng.random() < 0.5), reg(bits)
            else:
                v = imm(bits, op if shape == "ri" else "mov-to-memory")
                if v is None:
                    continue
                a, b = (reg(bits) if shape == "ri" else mem(bits)), str(v)
            line = f"{op} {a},{b}"
        high = any(h in line for h in ("ah", "bh", "ch", "dh"))
        if high and re.search(r"\b(spl|bpl|sil|dil|r\d+[bwd]?)\b", line):
            continue  # ah..bh cannot be encoded with a REX prefix; GNU as refuses too
        lines.append(line)
    return lines


RANDOM_LINES = random_lines(2024, 1500)

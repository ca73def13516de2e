"""The program the assembler builds is the decoding of the bytes it assembled.

The assembler does not decode what it assembles: the encoders give each statement its bytes and
its instruction (the form they chose, the operands as the bytes say them); only the bytes of
``.byte`` directives are decoded.  What runs must still be exactly what the bytes say, so for every
line of the assembler corpora (the GNU-as-checked scalar, AMX and vector lines, branch programs,
kernels, examples and fuzzer programs) the program is compared, field by field, with
``disassemble`` of its bytes and with the whole code decoded as one run, assembled cold (nothing
remembered) and warm (everything remembered).

These compare isasim with itself: the outside evidence is GNU as and objdump, which the encoders
and the decoder are held to by the GNU binutils tests (test_assembler_vs_gnu_as.py, test_decoder_roundtrip.py,
forms/test_amx_encoding.py, forms/test_scalar.py and forms/test_vector.py).
"""

from __future__ import annotations

import bisect
import dataclasses
import random
from pathlib import Path

import pytest
from amx_lines import lines_for
from branch_programs import branch_program, jump_chain
from scalar_cases import CASES as SCALAR_CASES
from scalar_cases import RANDOM_LINES
from vector_cases import CASES as VECTOR_CASES

from isasim.core.errors import AssemblyError, IsasimError
from isasim.core.program import Program
from isasim.x86_amx import assembler, kernels
from isasim.x86_amx.forms import amx, scalar
from isasim.x86_amx.assembler import Assembler, assemble, attach_labels
from isasim.x86_amx.decoder import decode_one, disassemble
from isasim.x86_amx.fuzz.amx import AmxCaseDrawer
from isasim.x86_amx.operands import Imm
from isasim.x86_amx.operands import GPR64

pytestmark = pytest.mark.consistency

EXAMPLES = sorted((Path(__file__).resolve().parents[2] / "examples" / "x86_amx").glob("*.s"))
BASE = 0x1000


def forget() -> None:
    assembler._LINE_MEMO.clear()
    assembler._STATEMENT_MEMO.clear()
    assembler._PROGRAM_MEMO.clear()


def operand_fields(operand) -> tuple:
    """Every field, also those the operand classes leave out of ==: disp_size and show_size change the text."""
    return (type(operand).__name__,) + tuple(getattr(operand, f.name) for f in dataclasses.fields(operand))


def instruction_fields(ins, line: bool = True) -> tuple:
    return (ins.form.id, id(ins.form), tuple(operand_fields(o) for o in ins.operands), ins.address, ins.encoding,
            ins.text, ins.line if line else None, ins.index, ins.invalid, ins.extra, ins.size)


def decoded_as_one_run(machine: Assembler, statements) -> Program:
    """The assembled bytes decoded as one run of code with decode_one alone: what Assembler.build must give,
    each instruction's line the statement its bytes start in."""
    code = b"".join(st.encoding for st in statements)
    starts = [(st.address, st.line) for st in statements if st.encoding]
    instructions = []
    pos = 0
    while pos < len(code):
        address = machine.base + pos
        ins = decode_one(code, pos, address)
        ins.line = starts[bisect.bisect_right(starts, (address, float("inf"))) - 1][1]
        instructions.append(ins)
        pos += len(ins.encoding)
    program = Program("x86_amx", machine.base, instructions, dict(machine.labels), machine.source)
    attach_labels(program)
    return program


def whole_code_program(text: str) -> Program:
    """The program as the decoder reads the assembled code: its whole code decoded as one run of bytes."""
    forget()
    machine = Assembler(text, "<test>", BASE)
    machine.build = lambda statements: decoded_as_one_run(machine, statements)
    program = machine.assemble()
    forget()
    return program


def disassembled(program: Program) -> Program:
    """The decoder's reading of the program's bytes, with its labels attached."""
    decoded = disassemble(program.code, program.base)
    decoded = Program("x86_amx", decoded.base, decoded.instructions, dict(program.labels), program.source)
    attach_labels(decoded)
    return decoded


def check(text: str) -> None:
    reference = whole_code_program(text)
    cold = assemble(text, "<test>", BASE)  # nothing remembered
    assembler._PROGRAM_MEMO.clear()
    warm = assemble(text, "<test>", BASE)  # every line and statement remembered
    again = assemble(text, "<test>", BASE)  # the whole program remembered
    decoded = disassembled(cold)
    programs = (cold, warm, again)
    assert len(decoded.instructions) == len(reference.instructions)
    for program in programs:
        assert len(program.instructions) == len(reference.instructions)
        assert program.labels == reference.labels and program.code == reference.code
        for ins, ref, dec in zip(program.instructions, reference.instructions, decoded.instructions):
            assert instruction_fields(ins) == instruction_fields(ref), ref.text
            assert instruction_fields(ins, line=False) == instruction_fields(dec, line=False), dec.text
    for ins, ins_warm, ins_again in zip(*(p.instructions for p in programs)):  # each program's are its own
        assert len({id(ins), id(ins_warm), id(ins_again)}) == len({id(ins.extra), id(ins_warm.extra),
                                                                   id(ins_again.extra)}) == 3


AMX_LINES = [line for form in amx.FORMS for line in lines_for(form)] + [
    "tileloadd tmm2,[rdi+riz*1]", "tilestored [r13+riz*1+0x0],tmm1", "ldtilecfg [rdi+riz*4]",
    "tileloadd tmm0, [rsp]", "tilestored [r12+riz*8-0x1], tmm7", "sttilecfg [rbp]", "ldtilecfg [0x40]"]

# Every scalar mnemonic but the branches with none, one or two of these operands, kept where the
# assembler takes them: shapes the corpora above may not have (xchg, shifts, push/pop, movsx ...).
_SHAPES = ["rax", "eax", "ax", "al", "ah", "r9", "r10d", "r11w", "sil", "cl", "1", "5", "-1", "0x1234",
           "0x123456789", "QWORD PTR [rdi+8]", "DWORD PTR [rsp]", "WORD PTR [rbx+rcx*4-0x10]", "BYTE PTR [r13]",
           "[rax]"]


def scalar_shape_lines() -> list[str]:
    out = []
    for mnemonic in sorted(scalar.MNEMONICS):
        if mnemonic.startswith("j"):
            continue
        for operands in [()] + [(a,) for a in _SHAPES] + [(a, b) for a in _SHAPES for b in _SHAPES]:
            line = f"{mnemonic} {', '.join(operands)}"
            try:
                assemble(line)
            except IsasimError:
                continue
            out.append(line)
    return out


@pytest.mark.parametrize("name, lines", [("scalar", SCALAR_CASES), ("random scalar", RANDOM_LINES),
                                         ("amx", AMX_LINES), ("vector", VECTOR_CASES)])
def test_corpus_lines_are_their_decoding(name, lines):
    check("\n".join(lines))


def test_every_scalar_shape_is_its_decoding():
    lines = scalar_shape_lines()
    assert len(lines) > 1000
    check("\n".join(lines))


def test_branch_programs_are_their_decoding():
    rng = random.Random(15)
    for i in range(20):
        check(branch_program(rng, f"p{i}_"))
    check(jump_chain(30))


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.name)
def test_examples_are_their_decoding(path):
    check(path.read_text())


@pytest.mark.parametrize("name", sorted(kernels.BUILDERS))
def test_kernels_are_their_decoding(name):
    small = {"int8_microkernel": {"count": 2, "K": 128}, "bf16_microkernel": {"count": 2, "K": 64}}
    check(kernels.build(name, **small.get(name, {})).text)


def test_a_constant_is_read_in_every_program():
    # "mov rax, k" depends on the program's .set: it must not be remembered from the first one
    assert assemble(".set k, 1\nmov rax, k").code != assemble(".set k, 2\nmov rax, k").code


def test_a_constant_in_an_address_is_read_in_every_program():
    one = assemble(".set k, 8\nmov rax, [rdi+k]")
    two = assemble(".set k, 16\nmov rax, [rdi+k]")
    assert one.instructions[0].text == "mov rax,QWORD PTR [rdi+0x8]"
    assert two.instructions[0].text == "mov rax,QWORD PTR [rdi+0x10]"


def test_a_label_used_as_a_value_is_read_in_every_program():
    with pytest.raises(AssemblyError, match="undefined label 'there'"):
        assemble("jmp there")
    assert assemble("there: jmp there").instructions[0].text == "jmp there"
    with pytest.raises(AssemblyError, match="undefined label 'there'"):
        assemble("jmp there")


def test_rip_relative_operands_name_their_own_address():
    for base in (0x1000, 0x2000):
        for padding in ("", "nop\n"):
            check(padding + "lea rax, [rip+0x10]\nmovdqa xmm0, XMMWORD PTR [rip+0x0]")
            program = assemble(padding + "lea rax, [rip+0x10]", base=base)
            (lea,) = [i for i in program.instructions if i.form.mnemonic == "lea"]
            assert lea.operands[1].rip_target == lea.next_address + 0x10


@pytest.mark.parametrize("text", [
    ".byte 0x66\nnop DWORD PTR [rax]\nret",  # 66 joins the NOP: one instruction across two statements
    "tilezero tmm0\n.byte 0xc3\ntilezero tmm1\n.byte 0xc4,0xe2,0x7b\n.byte 0x49,0xc0\nret",
    ".byte 0xc4,0xe2,0x63,0x5c,0xd8\ntilerelease\n.byte 0x90,0x90\nmov rax, 1",  # a #UD AMX encoding
    ".byte 0x48\nret",  # a REX prefix the text would hide
])
def test_programs_with_bytes_are_their_decoding(text):
    try:
        whole_code_program(text)
    except IsasimError as former:  # then the assembler refuses it with the same message, cold and warm
        for _ in range(2):
            with pytest.raises(IsasimError) as error:
                assemble(text, "<test>", BASE)
            assert error.value.message == former.message
        return
    check(text)


def test_fuzzer_programs_are_their_decoding():
    cases = AmxCaseDrawer(15).draw(150)
    check("\n".join(case.standalone()[0] for case in cases))


def test_bytes_from_byte_directives_decode_with_what_follows():
    # 66 then NOP r/m32: one instruction across two statements, as the bytes say
    program = assemble(".byte 0x66\nnop DWORD PTR [rax]")
    assert [i.text for i in program.instructions] == [i.text for i in disassemble(program.code, BASE).instructions]
    assert len(program.instructions) == 1


def test_errors_name_their_line_every_time():
    for _ in range(3):
        with pytest.raises(AssemblyError) as error:
            assemble("tilezero tmm0\nnop\ntilezero tmm9\n", "prog.s")
        assert "prog.s:3" in str(error.value)
        with pytest.raises(AssemblyError) as error:
            assemble("nop\ntilezero tmm0\ntilezero tmm0\nmov rax,\n", "other.s")
        assert "other.s:4" in str(error.value)


def test_the_memos_stay_bounded(monkeypatch):
    forget()
    memos = (assembler._LINE_MEMO, assembler._STATEMENT_MEMO, assembler._PROGRAM_MEMO)
    for memo in memos:  # small limits, so that the test need not assemble 16,384 programs
        monkeypatch.setattr(memo, "limit", 40)
    for n in range(100):
        assemble(f"mov rax, {n}")
    assert all(len(memo) == 40 for memo in memos)
    assert ("mov", "rax, 99") in assembler._STATEMENT_MEMO and ("mov", "rax, 0") not in assembler._STATEMENT_MEMO
    remembered = {n: assemble(f"mov rax, {n}").code for n in (0, 99)}  # one forgotten, one remembered
    forget()
    assert remembered == {n: assemble(f"mov rax, {n}").code for n in (0, 99)}
    forget()


def _general_reading(text: str):
    """An operand as the expression machinery reads it (the reading the GNU as differential tests check)."""
    reader = Assembler("", "<test>", BASE)
    low = text.lower()
    for word, size in (("qword ptr ", 8), ("dword ptr ", 4), ("byte ptr ", 1), ("zmmword ptr ", 64)):
        if low.startswith(word):
            return reader.parse_memory(text[len(word):], size)
    if "[" in text:
        return reader.parse_memory(text, None)
    return Imm(reader.value(text))


def plain_operands(seed: int, count: int) -> list[str]:
    rng = random.Random(seed)
    out = []
    for _ in range(count):
        roll = rng.random()
        number = rng.choice([0, 1, 7, 0x7F, 0x80, 0xFFFFFFFF, 2**31, 99999999, 2**60, rng.randrange(2**32)])
        spelled = rng.choice([str(number), hex(number), hex(number).upper().replace("0X", "0x")])
        if roll < 0.3:
            out.append(rng.choice(["", "-"]) + spelled)
            continue
        blank = rng.choice(["", " ", "\t"])
        parts = [rng.choice(GPR64 + ("RDI", "R8"))]
        if rng.random() < 0.7:
            index = rng.choice(GPR64)
            parts.append(f"{blank}+{blank}{index}" + (f"{blank}*{blank}{rng.choice('1248')}" if rng.random() < 0.7
                                                          else ""))
        if rng.random() < 0.6:
            parts.append(f"{blank}{rng.choice('+-')}{blank}{spelled}")
        address = f"[{blank}{''.join(parts)}{blank}]"
        out.append(rng.choice(["", "QWORD PTR ", "dword ptr ", "ZMMWORD PTR "]) + address)
    return out


@pytest.mark.parametrize("text", ["5", "-5", "0", "0x10", "-0x80000000", "0xffffffffffffffff", "017", "1f",
                                  "[rdi]", "[rdi+r8*1]", "[rdi+r8]", "[RSI+R8*4-0x10]", "[ rbp + 8 ]",
                                  "[r13+rsp*2]", "[rdi+0x7fffffff]", "[rdi-0x80000000]", "[rdi+0x80000000]",
                                  "QWORD PTR [rsp+rax*8+0x100]", *plain_operands(15, 400)])
def test_plain_operands_read_as_the_general_reading_does(text):
    def outcome(read):
        try:
            return operand_fields(read())
        except AssemblyError as error:
            return error.message

    assert outcome(lambda: Assembler("", "<test>", BASE).parse_operand(text, "mov")) == \
        outcome(lambda: _general_reading(text))


@pytest.mark.parametrize("text", ["0xc4", "0XC4", "255", "-1", "0", "017", "0b11", "'a", "1+2", "-0x80", "0x1ff",
                                  "1f", *[t for t in plain_operands(16, 200) if "[" not in t]])
def test_plain_byte_values_read_as_the_general_reading_does(text):
    def outcome(read):
        try:
            return read(text)
        except AssemblyError as error:
            return error.message

    reader = Assembler("", "<test>", BASE)
    assert outcome(reader.byte_value) == outcome(reader.value)


@pytest.mark.parametrize("text", ["", " ", "rax", "rax, rbx", " rax ,rbx ", "a,", ",", ",,", "tmm1, [rdi+r8*1]",
                                  "[rdx+rsi*1-0x800], tmm0", "[a,b], c", "[a,[b,c]],d", "a],b,[c", "]],a,[[b,c",
                                  "QWORD PTR [rdi+8], 5", "\tzmm1 , ZMMWORD PTR [rsp+0x40]\t", "1,2,3,4,5",
                                  "x\u0085, y"])
def test_operand_splitting_splits_as_the_scan_does(text):
    assert assembler._split_operands(text) == assembler._split_grouped(text)

"""The string instructions (STOS MOVS LODS SCAS CMPS), their repeat prefixes, CLD and STD.

Encodings and text against GNU as and objdump; semantics against this host's silicon (lockstep: the state after
every instruction, a fault's partial progress included).  The hand-computed examples at the end are examples
(they read the SDM the way semantics/strings.py does), not evidence.
"""

from __future__ import annotations

import pytest
from gnu_binutils import gas, needs_binutils

from isasim.core.diff import diff
from isasim.core.errors import AssemblyError
from isasim.core.machine import Machine
from isasim.core.trace import Init
from isasim.x86_amx import ISA

SIZES = {"b": ("BYTE", "al"), "w": ("WORD", "ax"), "d": ("DWORD", "eax"), "q": ("QWORD", "rax")}

# Every spelling users and compilers write: the one-word forms, objdump's own text (es:/ds: written or left
# off), and each repeat prefix word.
LINES = [
    *[f"{p}stos{w}" for w in SIZES for p in ("", "rep ")],
    *[f"{p}movs{w}" for w in SIZES for p in ("", "rep ")],
    *[f"{p}lods{w}" for w in SIZES for p in ("", "rep ")],
    *[f"{p}scas{w}" for w in SIZES for p in ("", "repe ", "repz ", "repne ", "repnz ")],
    *[f"{p}cmps{w}" for w in SIZES for p in ("", "repe ", "repne ", "rep ")],
    *[f"rep stos {size} PTR es:[rdi],{acc}" for size, acc in SIZES.values()],
    *[f"stos {size} PTR [rdi],{acc}" for size, acc in SIZES.values()],
    *[f"rep movs {size} PTR es:[rdi],{size} PTR ds:[rsi]" for size, _ in SIZES.values()],
    *[f"movs {size} PTR [rdi],{size} PTR [rsi]" for size, _ in SIZES.values()],
    *[f"lods {acc},{size} PTR ds:[rsi]" for size, acc in SIZES.values()],
    *[f"repnz scas {acc},{size} PTR es:[rdi]" for size, acc in SIZES.values()],
    *[f"repz cmps {size} PTR ds:[rsi],{size} PTR es:[rdi]" for size, _ in SIZES.values()],
    "cld", "std",
]


@needs_binutils("as", "objdump")
def test_every_spelling_assembles_to_gnu_as_bytes_and_prints_as_objdump():
    expected = gas(LINES)
    program = ISA.assemble("\n".join(LINES))
    assert len(program.instructions) == len(LINES)
    for line, instruction, (want_bytes, want_text) in zip(LINES, program.instructions, expected):
        assert instruction.encoding.hex(" ") == want_bytes.hex(" "), line
        assert instruction.text == want_text, line
    # and the bytes decode to the same instructions, whose text assembles back to the same bytes
    again = ISA.disassemble(program.code, base=program.base)
    assert [i.text for i in again.instructions] == [i.text for i in program.instructions]
    assert ISA.assemble("\n".join(i.text for i in again.instructions)).code == program.code


@pytest.mark.parametrize("line,message", [
    ("stosb al", "takes no operands"),
    ("stos BYTE PTR [rsi],al", "its operands are fixed"),
    ("movs QWORD PTR [rdi],DWORD PTR [rsi]", "its operands are fixed"),
    ("repne stosb", "repne does not repeat stos"),
    ("rep rep movsb", "only one of rep"),
    ("lock stosb", "only one of rep"),
    ("mov rax, QWORD PTR es:[rbx]", "only in a string instruction's operands"),
])
def test_what_is_not_a_string_instruction_is_refused_in_one_line(line, message):
    with pytest.raises(AssemblyError) as caught:
        ISA.assemble(line)
    assert message in str(caught.value) and "\n" not in str(caught.value)


@needs_binutils("objdump")
@pytest.mark.parametrize("code,why", [
    ("f2 aa", "repnz before stos repeats nothing isasim models"),
    ("64 a4", "a segment override on the source"),
    ("67 f3 aa", "32-bit addressing (edi)"),
])
def test_prefixes_isasim_does_not_model_are_left_undecoded(code, why):
    from isasim.core.errors import IsasimError

    with pytest.raises(IsasimError):
        ISA.disassemble(bytes.fromhex(code), base=0x1000)


# ---------------------------------------------------------------------------
# Against silicon: lockstep, so every step's state is compared
# ---------------------------------------------------------------------------

SCRATCH = 0x20000
MEMORY = bytes((i * 37 + 11) & 0xFF for i in range(0x400))
TEXT = b"isasim\0steps\0strings" + bytes(12)

PROGRAMS = {
    "memset bytes": "mov eax, 0x5a\nmov ecx, 37\nrep stosb\nret",
    "memset quadwords": "mov rax, 0x1122334455667788\nmov ecx, 9\nrep stosq\nret",
    "memset words and doublewords": "mov eax, 0xabcd1234\nmov ecx, 5\nrep stosw\nmov ecx, 3\nrep stosd\nstosb\nret",
    "memcpy forward": "mov ecx, 33\nrep movsb\nmov ecx, 4\nrep movsq\nmovsd\nmovsw\nret",
    "overlap: destination ahead": "lea rdi, [rsi+3]\nmov ecx, 40\nrep movsb\nlea rdi, [rsi+4]\nmov ecx, 6\nrep movsq\nret",
    "overlap: destination behind": "lea rdi, [rsi-5]\nmov ecx, 40\nrep movsb\nret",
    "backward (std)": "add rdi, 0x100\nadd rsi, 0x80\nstd\nmov ecx, 17\nrep movsb\nmov ecx, 3\nrep stosq\n"
                      "lodsw\nscasd\ncmpsq\ncld\nret",
    "backward overlapping": "lea rdi, [rsi+0x40]\nadd rsi, 0x3c\nstd\nmov ecx, 20\nrep movsd\ncld\nret",
    "count zero": "xor ecx, ecx\ncmp eax, eax\nrep stosq\nrep movsb\nrepne scasb\nrepe cmpsd\nret",
    "lods": "lodsb\nlodsw\nlodsd\nlodsq\nmov ecx, 5\nrep lodsd\nret",
    "strlen (repne scasb)": "mov rdi, 0x20200\nxor eax, eax\nmov rcx, -1\nrepne scasb\nnot rcx\ndec rcx\nret",
    "scan for a value": "mov rdi, 0x20200\nmov eax, 0x73\nmov ecx, 12\nrepne scasb\nmov eax, 0x69\nmov ecx, 4\n"
                        "repe scasb\nret",
    "memcmp (repe cmps)": "mov rsi, 0x20200\nlea rdi, [rsi+7]\nmov ecx, 6\nrepe cmpsb\nmov rsi, 0x20000\n"
                          "mov rdi, rsi\nmov ecx, 9\nrepe cmpsq\nmov ecx, 9\nrepne cmpsw\nret",
    "flags of one element": "scasb\nscasw\ncmpsd\ncmpsq\nret",
}
INIT = Init(regs={"rdi": SCRATCH + 0x80, "rsi": SCRATCH + 0x10},
            memory=[(SCRATCH, MEMORY[:0x200], True), (SCRATCH + 0x200, TEXT + MEMORY[0x200 + len(TEXT):], True)])


@pytest.mark.needs_silicon
@pytest.mark.parametrize("name", PROGRAMS)
def test_string_programs_agree_with_silicon_after_every_instruction(name):
    program = ISA.assemble(PROGRAMS[name])
    report = diff("x86_amx", {}, program, INIT, mode="lockstep")
    assert report.identical, report.divergence.describe("sim", "silicon")
    assert report.steps == len(program.instructions)


FAULTING = {  # the last elements of the page, then the unmapped one: RCX, RDI and RSI say how far it got
    "rep stosq off the end": "mov rdi, 0x20fc0\nmov ecx, 100\nrep stosq\nret",
    "rep movsb off the end": "mov rdi, 0x20ff0\nmov ecx, 100\nrep movsb\nret",
    "rep movsq from off the end": "mov rsi, 0x20fe8\nmov ecx, 100\nrep movsq\nret",
    "repne scasb off the end": "mov rdi, 0x20ff0\nmov eax, 0x100\nmov rcx, -1\nrepne scasb\nret",
    "std: rep stosd below the start": "mov rdi, 0x20010\nstd\nmov ecx, 100\nrep stosd\ncld\nret",
}
FAULT_INIT = Init(regs={"rdi": SCRATCH, "rsi": SCRATCH}, memory=[(SCRATCH, MEMORY * 4, True)])  # a page:
# silicon faults only at a page boundary


@pytest.mark.needs_silicon
@pytest.mark.parametrize("name", FAULTING)
def test_a_fault_part_way_leaves_the_progress_silicon_leaves(name):
    program = ISA.assemble(FAULTING[name])
    report = diff("x86_amx", {}, program, FAULT_INIT, mode="lockstep")
    assert report.identical, report.divergence.describe("sim", "silicon")
    machine = Machine("x86_amx")
    machine.load_init(program, FAULT_INIT)
    machine.run()
    assert machine.fault is not None and machine.fault.kind == "#PF", machine.fault
    assert machine.state.read_register("rcx") not in (0, 100)  # some elements done, some not


# ---------------------------------------------------------------------------
# Examples (hand-computed from the SDM's pseudocode: illustrations, not evidence)
# ---------------------------------------------------------------------------


def run(text: str, regs: dict, memory: bytes, at: int = 0x10000) -> Machine:
    machine = Machine("x86_amx")
    machine.load(ISA.assemble(text), regs=regs, memory=[(at, memory, True)])
    machine.run()
    return machine


def test_example_rep_stos_fills_and_is_one_step():
    machine = run("mov eax, 0x41\nrep stosb\nret", {"rdi": 0x10000, "rcx": 5}, bytes(8))
    assert machine.memory.read(0x10000, 8) == b"AAAAA\0\0\0"
    assert machine.state.read_register("rdi") == 0x10005 and machine.state.read_register("rcx") == 0
    assert machine.steps == 3


def test_example_overlapping_rep_movsb_repeats_the_pattern():
    machine = run("rep movsb\nret", {"rdi": 0x10001, "rsi": 0x10000, "rcx": 5}, b"abcdefgh")
    assert machine.memory.read(0x10000, 8) == b"aaaaaagh"


def test_example_repne_scasb_is_strlen():
    machine = run("xor eax, eax\nmov rcx, -1\nrepne scasb\nnot rcx\ndec rcx\nret", {"rdi": 0x10000},
                  b"hello\0xx")
    assert machine.state.read_register("rcx") == 5


def test_example_a_repeated_string_instruction_with_rcx_zero_changes_nothing():
    machine = run("rep stosq\nrepe cmpsb\nret", {"rdi": 0x10000, "rsi": 0x10000, "rcx": 0, "rflags": 0x2C7},
                  b"\xff" * 8)
    assert machine.memory.read(0x10000, 8) == b"\xff" * 8
    assert machine.state.read_register("rflags") == 0x2C7 and machine.state.read_register("rdi") == 0x10000

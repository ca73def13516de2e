"""The scalar x86-64 subset: encodings against GNU as, text against objdump, semantics by worked examples."""

from __future__ import annotations

import re
import subprocess

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scalar_cases import CASES, RANDOM_LINES

from isasim.core.errors import AssemblyError
from isasim.core.faults import Fault
from isasim.core.memory import Memory
from isasim.x86_amx.encoding import scalar
from isasim.x86_amx.forms import scalar as scalar_forms
from isasim.x86_amx.semantics.scalar import HALT
from isasim.x86_amx.context import X86Context
from isasim.x86_amx.config import SCALAR_FEATURES, cpu_model
from isasim.x86_amx.operands import Imm, Mem, Reg, Target
from isasim.x86_amx.operands import GPR64, GPR_VIEWS
from isasim.x86_amx.state import AF, CF, OF, PF, SF, ZF, X86AmxState

needs_binutils = pytest.mark.needs_binutils("objcopy", "nm")  # tests/conftest.py; gas() below runs all four

# ---------------------------------------------------------------------------
# A small Intel-syntax operand parser (the project's assembler is not under test here)
# ---------------------------------------------------------------------------

_SIZES = {"byte": 1, "word": 2, "dword": 4, "qword": 8}


def parse_operand(text: str, labels: dict[str, int]):
    t = text.strip()
    size = None
    m = re.match(r"(?i)(byte|word|dword|qword)\s+ptr\s+(.*)$", t)
    if m:
        size, t = _SIZES[m[1].lower()], m[2].strip()
    if t.lower().startswith("ds:"):
        return Mem(disp=int(t[3:], 0), size=size)
    if t.startswith("["):
        base = index = None
        scale, disp = 1, 0
        for sign, term in re.findall(r"([+-]?)\s*([^+-]+)", t[1:-1]):
            term = term.strip().lower()
            if "*" in term:
                index, s = term.split("*")
                scale = int(s)
            elif term in GPR_VIEWS or term == "rip":
                if base is None:
                    base = term
                else:
                    index = term
            else:
                disp += -int(term, 0) if sign == "-" else int(term, 0)
        return Mem(base, index, scale, disp, size)
    if t.lower() in GPR_VIEWS or t.lower().startswith("tmm"):
        return Reg(t.lower())
    if t in labels:
        return Target(labels[t], t)
    return Imm(int(t, 0))


def parse_line(line: str, labels: dict[str, int] | None = None):
    parts = line.strip().split(None, 1)
    operands = ()
    if len(parts) > 1:
        operands = tuple(parse_operand(o, labels or {}) for o in parts[1].split(","))
    return parts[0].lower(), operands


def encode_line(line: str, address: int = 0, labels: dict[str, int] | None = None, **kw):
    mnemonic, operands = parse_line(line, labels)
    return scalar.encode(mnemonic, operands, address, **kw)


# ---------------------------------------------------------------------------
# GNU binutils
# ---------------------------------------------------------------------------


def gas(lines: list[str], tmp_path, name: str = "t") -> tuple[bytes, dict[str, int], dict[int, str], str]:
    """Assemble with GNU as; return .text bytes, symbols, {address: objdump text}, as's stderr."""
    src = tmp_path / f"{name}.s"
    obj = tmp_path / f"{name}.o"
    binary = tmp_path / f"{name}.bin"
    src.write_text(".intel_syntax noprefix\n.text\n" + "\n".join(lines) + "\n")
    run = subprocess.run(["as", "--64", "-o", str(obj), str(src)], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    subprocess.run(["objcopy", "-O", "binary", "-j", ".text", str(obj), str(binary)], check=True)
    symbols = {}
    for row in subprocess.run(["nm", str(obj)], capture_output=True, text=True, check=True).stdout.splitlines():
        fields = row.split()
        if len(fields) == 3:
            symbols[fields[2]] = int(fields[0], 16)
    dump = subprocess.run(["objdump", "-d", "-w", "-M", "intel", "--no-show-raw-insn", str(obj)],
                          capture_output=True, text=True, check=True).stdout
    texts = {}
    for row in dump.splitlines():
        m = re.match(r"^\s*([0-9a-f]+):\t(.*)$", row)
        if m:
            texts[int(m[1], 16)] = normalise_objdump(m[2])
    return binary.read_bytes() if binary.exists() else b"", symbols, texts, run.stderr


def normalise_objdump(text: str) -> str:
    """objdump text without column padding and <symbol> notes; branch targets as 0x addresses."""
    text = re.sub(r"\s*<[^>]*>", "", text)
    text = re.sub(r"\s+", " ", text).strip()
    return re.sub(r"^(j[a-z]+) ([0-9a-f]+)$", r"\1 0x\2", text)


# ---------------------------------------------------------------------------
# The lines whose encodings must match GNU as (scalar_cases.py)
# ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def gnu(tmp_path_factory):
    """All CASES assembled by GNU as in one file, each behind its own label."""
    lines = []
    for i, line in enumerate(CASES):
        lines += [f"case_{i}:", line]
    lines.append("case_end:")
    code, symbols, texts, stderr = gas(lines, tmp_path_factory.mktemp("gas"))
    assert stderr == "", f"GNU as warned: {stderr}"
    return code, symbols, texts


def gnu_case(gnu, i: int) -> tuple[int, bytes, str]:
    code, symbols, texts = gnu
    start = symbols[f"case_{i}"]
    end = symbols[f"case_{i + 1}"] if i + 1 < len(CASES) else symbols["case_end"]
    return start, code[start:end], texts[start]


@needs_binutils
@pytest.mark.parametrize("i", range(len(CASES)), ids=CASES)
def test_encoding_matches_gnu_as(gnu, i):
    address, expected, _ = gnu_case(gnu, i)
    _, _, code = encode_line(CASES[i], address)
    assert code.hex(" ") == expected.hex(" ")


@needs_binutils
@pytest.mark.parametrize("i", range(len(CASES)), ids=CASES)
def test_decoded_text_matches_objdump(gnu, i):
    address, code, objdump_text = gnu_case(gnu, i)
    instr = scalar.decode(code, 0, address)
    assert instr is not None
    assert instr.encoding == code
    assert instr.text == objdump_text
    # encode's canonical operands are what decode produces
    form, operands, _ = encode_line(CASES[i], address)
    assert instr.form is form
    assert instr.operands == operands


@needs_binutils
def test_disassembly_reassembles_to_the_same_bytes(gnu, tmp_path):
    code, _, _ = gnu
    texts = []
    for i in range(len(CASES)):
        address, piece, _ = gnu_case(gnu, i)
        texts.append(scalar.decode(piece, 0, address).text)
    again, _, _, _ = gas(texts, tmp_path, "again")
    assert again == code


@needs_binutils
def test_random_lines_match_gnu_as(tmp_path):
    source = []
    for i, line in enumerate(RANDOM_LINES):
        source += [f"r_{i}:", line]
    source.append("r_end:")
    code, symbols, texts, stderr = gas(source, tmp_path)
    assert stderr == ""
    mismatches = []
    for i, line in enumerate(RANDOM_LINES):
        start = symbols[f"r_{i}"]
        end = symbols[f"r_{i + 1}"] if i + 1 < len(RANDOM_LINES) else symbols["r_end"]
        _, operands, ours = encode_line(line, start)
        instr = scalar.decode(code, start, start)
        if ours != code[start:end] or instr is None or instr.text != texts[start] or instr.operands != operands:
            mismatches.append(f"{line}: ours {ours.hex()} gas {code[start:end].hex()} "
                              f"text {instr and instr.text!r} objdump {texts[start]!r}")
    assert not mismatches, "\n".join(mismatches[:20])


# Encodings GNU as does not produce for any text (a longer displacement, a needless
# imm32, the reg, r/m opcode) still decode to objdump's text.
OTHER_ENCODINGS = [
    "8b4000", "8b8000000000", "0f1f4000", "0f1f440000", "0f1f840000000000", "660f1f440000", "81c001000000",
    "03c3", "488b442400", "48c7c0ffffffff", "4881c0ff000000", "6bc0ff", "0fafc3",
]


@needs_binutils
def test_other_encodings_decode_to_objdump_text(tmp_path):
    lines = [".byte " + ",".join(f"0x{b:02x}" for b in bytes.fromhex(h)) for h in OTHER_ENCODINGS]
    code, _, texts, _ = gas(lines, tmp_path)
    address = 0
    for h in OTHER_ENCODINGS:
        instr = scalar.decode(code, address, address)
        assert instr is not None and instr.encoding.hex() == h
        assert instr.text == texts[address], h
        address += len(instr.encoding)


def test_known_text_differences_from_objdump():
    # A SIB byte with no index (objdump: [rax+riz*1]) and a redundant REX prefix
    # (objdump: rex add eax,ebx) decode to the same operation without the marker.
    assert scalar.decode(bytes.fromhex("8b0420"), 0, 0).text == "mov eax,DWORD PTR [rax]"
    assert scalar.decode(bytes.fromhex("4001d8"), 0, 0).text == "add eax,ebx"


# ---------------------------------------------------------------------------
# Branches: rel8 / rel32 at the limits, forward and backward, every alias
# ---------------------------------------------------------------------------

JCC_SPELLINGS = sorted(m for m in scalar_forms.MNEMONICS if m.startswith("j") and m != "jmp")


def branch_program() -> list[str]:
    lines = ["top:", "jne top"]
    lines += ["nop"] * 124
    lines += ["jne top", "jne top"]  # rel8 = -128 exactly, then -130: rel32
    lines += ["jmp top", "jmp fwd1"] + ["nop"] * 127 + ["fwd1:"]  # rel8 = +127 exactly
    lines += ["je fwd2"] + ["nop"] * 128 + ["fwd2:"]  # +128: rel32
    lines += ["jmp fwd3"] + ["nop"] * 128 + ["fwd3:"]
    lines += [f"{m} fwd2" for m in JCC_SPELLINGS]  # backward, some short some long
    lines += [f"{m} end" for m in JCC_SPELLINGS]  # forward, all short
    lines += ["{disp32} jne mid", "{disp32} jmp mid", "mid:", "jmp mid", "jmp top"]
    lines += ["end:", "ret"]
    return lines


def assemble_with_isasim(lines: list[str]) -> tuple[bytes, dict[str, int], list]:
    """Branch relaxation as an assembler does it over scalar.encode: every branch starts
    short; a short branch whose target is out of rel8 range becomes long; repeat until stable."""
    def split(n: int, line: str) -> tuple[str, bool]:
        if line.startswith("{disp32}"):
            return line[len("{disp32}"):].strip(), True
        return line, n in long

    long: set[int] = set()
    while True:
        labels, address, branches = {}, 0, []
        for n, line in enumerate(lines):
            if line.endswith(":"):
                labels[line[:-1]] = address
                continue
            text, long_branch = split(n, line)
            mnemonic, operands = parse_line(text, {k: 0 for k in _labels_in(lines)})
            if isinstance(operands[0] if operands else None, Target):
                branches.append((n, address, operands[0].label))
                length = len(scalar.encode(mnemonic, (Target(address),), address, long_branch=long_branch)[2])
            else:
                length = len(scalar.encode(mnemonic, operands, address)[2])
            address += length
        grow = {n for n, at, label in branches if n not in long and not -128 <= labels[label] - (at + 2) <= 127}
        if not grow:
            break
        long |= grow
    address, out = 0, []
    for n, line in enumerate(lines):
        if line.endswith(":"):
            continue
        text, long_branch = split(n, line)
        mnemonic, operands = parse_line(text, labels)
        form, ops, code = scalar.encode(mnemonic, operands, address, long_branch=long_branch)
        out.append((address, form, ops, code))
        address += len(code)
    return b"".join(c for *_, c in out), labels, out


def _labels_in(lines: list[str]) -> list[str]:
    return [line[:-1] for line in lines if line.endswith(":")]


@needs_binutils
def test_branches_match_gnu_as(tmp_path):
    lines = branch_program()
    expected, symbols, texts, stderr = gas(lines, tmp_path)
    assert stderr == ""
    code, labels, out = assemble_with_isasim(lines)
    assert labels == {k: symbols[k] for k in labels}
    assert code.hex(" ") == expected.hex(" ")
    sizes = [len(c) for *_, c in out]
    assert sizes[:4] == [2, 1, 1, 1] and sizes[125:127] == [2, 6]  # jne top: rel8 -128, then rel32
    for address, form, ops, piece in out:
        instr = scalar.decode(expected, address, address)
        assert instr is not None and instr.encoding == piece
        assert instr.text == texts[address]
        assert instr.form is form


@needs_binutils
def test_branch_text_with_labels_reassembles(tmp_path):
    lines = [line.replace("{disp32} ", "") for line in branch_program()]
    code, labels, out = assemble_with_isasim(lines)
    by_address = {v: k for k, v in labels.items()}
    text = []
    for address, form, ops, _ in out:
        if address in by_address:
            text.append(f"{by_address[address]}:")
        text.append(form.format(ops))
    assert any(t.startswith("jne top") for t in text)
    again, _, _, _ = gas(text, tmp_path, "again")
    assert again == code


def test_branch_forms_and_lengths():
    form, ops, code = scalar.encode("jnz", (Target(0x1000, "loop"),), 0x1000)
    assert form.mnemonic == "jne" and code == bytes.fromhex("75fe") and ops == (Target(0x1000, "loop"),)
    assert form.format(ops) == "jne loop"
    assert scalar.encode("jne", (Target(0x1000),), 0x1000, long_branch=True)[2] == bytes.fromhex("0f85faffffff")
    assert scalar.encode("jmp", (Target(0x1000 + 2 + 127),), 0x1000)[2] == bytes.fromhex("eb7f")
    # rel32 = 130 - 5
    assert scalar.encode("jmp", (Target(0x1000 + 2 + 128),), 0x1000)[2] == bytes.fromhex("e97d000000")
    assert scalar.encode("jc", (Target(0x1000 - 126),), 0x1000)[2] == bytes.fromhex("7280")
    assert scalar.encode("jc", (Target(0x1000 - 127),), 0x1000)[2] == bytes.fromhex("0f827bffffff")
    instr = scalar.decode(bytes.fromhex("0f827bffffff"), 0, 0x1000)
    assert instr.text == "jb 0xf81" and instr.operands == (Target(0xF81),)


# ---------------------------------------------------------------------------
# Encoding rules without binutils
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("line,hexcode,text", [
    ("mov rax, 5", "48c7c005000000", "mov rax,0x5"),
    ("mov eax, 5", "b805000000", "mov eax,0x5"),
    ("add rax, rbx", "4801d8", "add rax,rbx"),
    ("add rax, 1000", "4805e8030000", "add rax,0x3e8"),
    ("add rax, -1", "4883c0ff", "add rax,0xffffffffffffffff"),
    ("add ax, 1", "6683c001", "add ax,0x1"),
    ("mov rax, [rdi+8]", "488b4708", "mov rax,QWORD PTR [rdi+0x8]"),
    ("lea rdi, [rdi+rsi*4+0x40]", "488d7cb740", "lea rdi,[rdi+rsi*4+0x40]"),
    ("mov rax, 0x80000000", "48b80000008000000000", "movabs rax,0x80000000"),
    ("test rax, [rdi]", "488507", "test QWORD PTR [rdi],rax"),
    ("imul rax, 5", "486bc005", "imul rax,rax,0x5"),
    ("mov eax, [rbp]", "8b4500", "mov eax,DWORD PTR [rbp+0x0]"),
    ("mov eax, [0x1000]", "8b042500100000", "mov eax,DWORD PTR ds:0x1000"),
    ("mov eax, [rbx*4]", "8b049d00000000", "mov eax,DWORD PTR [rbx*4+0x0]"),
    ("ret", "c3", "ret"),
    ("nop", "90", "nop"),
])
def test_encode_examples(line, hexcode, text):
    form, ops, code = encode_line(line, 0x400000)
    assert code.hex() == hexcode
    assert form.format(ops) == text
    assert scalar.decode(code, 0, 0x400000).text == text


@pytest.mark.parametrize("line,message", [
    ("add rax, ecx", "add: operand sizes differ (rax, ecx)"),
    ("mov rax, DWORD PTR [rdi]", "mov: operand sizes differ (rax, DWORD PTR [rdi])"),
    ("mov [rdi], [rsi]", "mov: two memory operands"),
    ("imul rax, rbx, 0x80000000", "imul: immediate does not fit in 32 signed bits"),
    ("add rax, 0x80000000", "add: immediate does not fit in 32 signed bits"),
    ("add al, 0x100", "add: immediate 0x100 does not fit in 8 bits"),
    ("add eax, 0x1ffffffff", "add: immediate 0x1ffffffff does not fit in 32 bits"),
    ("inc [rdi]", "inc: operand size not given; write BYTE, WORD, DWORD or QWORD PTR"),
    ("mov [rdi], 5", "mov: operand size not given; write BYTE, WORD, DWORD or QWORD PTR"),
    ("mov rax, [rip+rcx*1]", "mov: a rip-relative address takes no index register"),
    ("mov rax, [rsp*2]", "mov: rsp cannot be an index register"),
    ("mov rax, [eax]", "mov: base register must be a 64-bit general-purpose register, not 'eax'"),
    ("mov rax, [rdi+0x80000000]", "mov: displacement 0x80000000 does not fit in 32 signed bits"),
    ("mov tmm0, rax", "mov: 'tmm0' is not a general-purpose register"),
    ("mov 5, rax", "mov: the first operand cannot be an immediate"),
    ("ret rax", "ret: takes 0 operand(s), got 1"),
    ("add rax", "add: takes 2 operand(s), got 1"),
    ("jne rax", "jne: operand must be a label or an address, not 'rax' (indirect jumps are not supported)"),
    ("frob rax", "frob: not a scalar instruction isasim knows"),
])
def test_assembly_errors(line, message):
    with pytest.raises(AssemblyError) as info:
        encode_line(line)
    assert str(info.value) == message


@pytest.mark.parametrize("line,start", [
    ("lea rax, rbx", "lea: takes a register and a memory operand"),
    ("lea al, [rdi]", "lea: no form takes (al, [rdi])"),
    ("mov ah, sil", "mov: cannot encode (ah, sil)"),
    ("imul al, bl, 3", "imul: "),
    ("test rax, rbx, rcx", "test: takes 2 operand(s), got 3"),
])
def test_assembly_errors_are_one_line(line, start):
    with pytest.raises(AssemblyError) as info:
        encode_line(line)
    assert str(info.value).startswith(start)
    assert "\n" not in str(info.value)


@pytest.mark.parametrize("hexcode,why", [
    ("f0e800000000", "lock before a call"),
    ("2e90", "cs before a one-byte nop (objdump: cs nop; only NOP r/m takes prefix words)"),
    ("4890", "rex.W nop"),
    ("678b07", "32-bit addressing"),
    ("64488b07", "fs segment override"),
    ("ffe0", "indirect jmp"),
    ("e800000000", "call"),
    ("c2 0800", "ret imm16"),
    ("c4e27b49c0", "an AMX instruction"),
    ("48", "truncated"),
    ("75", "truncated branch"),
    ("", "nothing"),
    ("0f05", "syscall: not in the subset"),
    ("f04801d8", "lock on a register destination (#UD on silicon)"),
    ("0fc7c8", "bswap's neighbour: cmpxchg8b of a register (#UD)"),
])
def test_decode_rejects(hexcode, why):
    assert scalar.decode(bytes.fromhex(hexcode), 0, 0x1000) is None, why


def test_decode_at_offset():
    code = bytes.fromhex("90 4801d8 c3")
    instr = scalar.decode(code, 1, 0x2001)
    assert (instr.text, instr.address, instr.encoding, instr.next_address) == ("add rax,rbx", 0x2001, code[1:4], 0x2004)


def test_mnemonics_and_forms():
    for spelling in ("jz", "je", "jnz", "jne", "jc", "jb", "jnae", "jnc", "jae", "jnb", "ja", "jnbe", "jbe", "jna",
                     "jg", "jnle", "jge", "jnl", "jl", "jnge", "jle", "jng", "js", "jns", "jo", "jno", "jp", "jpe",
                     "jnp", "jpo", "jmp", "mov", "movabs", "add", "sub", "inc", "dec", "cmp", "test", "xor", "lea",
                     "imul", "nop", "ret"):
        assert spelling in scalar_forms.MNEMONICS
    for form in scalar_forms.FORMS:
        assert form.feature in {"BASE"} | SCALAR_FEATURES and form.doc and form.syntax and form.codes and form.rows
    assert scalar_forms.UNDEFINED_FLAGS["imul"] == SF | ZF | AF | PF
    assert scalar_forms.UNDEFINED_FLAGS["test"] == scalar_forms.UNDEFINED_FLAGS["xor"] == AF
    assert scalar_forms.UNDEFINED_FLAGS["add"] == scalar_forms.UNDEFINED_FLAGS["jz"] == 0
    assert set(scalar_forms.UNDEFINED_FLAGS) == set(scalar_forms.MNEMONICS)


@settings(max_examples=300, deadline=None)
@given(
    op=st.sampled_from(["mov", "add", "sub", "cmp", "xor", "test", "imul"]),
    dest=st.sampled_from(GPR64),
    bits=st.sampled_from([16, 32, 64]),
    value=st.integers(-(1 << 31), (1 << 31) - 1),
    base=st.sampled_from(GPR64),
    index=st.sampled_from([None] + [r for r in GPR64 if r != "rsp"]),
    scale=st.sampled_from([1, 2, 4, 8]),
    disp=st.integers(-(1 << 31), (1 << 31) - 1),
    kind=st.sampled_from(["imm", "mem", "reg"]),
)
def test_decode_inverts_encode(op, dest, bits, value, base, index, scale, disp, kind):
    from isasim.x86_amx.operands import gpr_name

    reg = Reg(gpr_name(GPR64.index(dest), bits))
    if kind == "imm":
        operands = (reg, Imm(value if bits > 16 else value % (1 << 16)))
    elif kind == "mem":
        operands = (reg, Mem(base, index, scale if index else 1, disp))
    else:
        operands = (reg, Reg(gpr_name(GPR64.index(base), bits)))
    form, ops, code = scalar.encode(op, operands, 0x1000)
    instr = scalar.decode(code, 0, 0x1000)
    assert instr.form is form and instr.operands == ops and instr.encoding == code
    assert instr.text == form.format(ops)


# ---------------------------------------------------------------------------
# Semantics
# ---------------------------------------------------------------------------

DATA = 0x10000  # a writable page
RODATA = 0x20000  # a read-only page


def make_cpu(**registers) -> X86Context:
    memory = Memory()
    memory.map(DATA, 0x1000)
    memory.map(RODATA, bytes(range(256)) * 16, writable=False)
    cpu = X86Context(X86AmxState(), memory, cpu_model("emerald-rapids"))
    for name, value in registers.items():
        cpu.state.write_register(name, value % (1 << 64))
    cpu.state.journal.take()
    return cpu


def run(cpu: X86Context, line: str, address: int = 0x1000):
    """Assemble, decode the bytes back and execute the decoded instruction."""
    _, _, code = encode_line(line, address)
    instr = scalar.decode(code, 0, address)
    return instr.form.execute(cpu, instr.operands)


def flags(cpu: X86Context) -> dict[str, int]:
    names = (("CF", CF), ("PF", PF), ("AF", AF), ("ZF", ZF), ("SF", SF), ("OF", OF))
    return {n: int(cpu.state.flag(b)) for n, b in names}


def set_flags(cpu: X86Context, **values: int) -> None:
    bits = {"CF": CF, "PF": PF, "AF": AF, "ZF": ZF, "SF": SF, "OF": OF}
    value = cpu.state.rflags
    for name, on in values.items():
        value = value | bits[name] if on else value & ~bits[name]
    cpu.state.set_rflags(value)


# (setup registers, instruction, expected registers, expected flags)
FLAG_EXAMPLES = [
    # 0x7fffffffffffffff + 1: signed overflow, carry out of bit 3, low byte 0x00 has even parity
    ({"rax": 0x7FFFFFFFFFFFFFFF}, "add rax,1", {"rax": 0x8000000000000000},
     dict(CF=0, PF=1, AF=1, ZF=0, SF=1, OF=1)),
    # 0 - 1: borrow, no overflow, 0xff has eight 1 bits
    ({"rax": 0}, "sub rax,1", {"rax": 0xFFFFFFFFFFFFFFFF}, dict(CF=1, PF=1, AF=1, ZF=0, SF=1, OF=0)),
    # 0x80 + 0x80 in 8 bits: carry and overflow, zero result
    ({"rax": 0x1180}, "add al,0x80", {"rax": 0x1100}, dict(CF=1, PF=1, AF=0, ZF=1, SF=0, OF=1)),
    # 0x80 - 1 in 8 bits: overflow, 0x7f has seven 1 bits (odd parity), borrow from bit 4
    ({"rax": 0x80}, "sub al,1", {"rax": 0x7F}, dict(CF=0, PF=0, AF=1, ZF=0, SF=0, OF=1)),
    ({"rax": 0x80}, "cmp al,1", {"rax": 0x80}, dict(CF=0, PF=0, AF=1, ZF=0, SF=0, OF=1)),
    ({"rax": 1, "rbx": 2}, "cmp rax,rbx", {"rax": 1}, dict(CF=1, PF=1, AF=1, ZF=0, SF=1, OF=0)),
    ({"rax": 5}, "cmp rax,5", {"rax": 5}, dict(CF=0, PF=1, AF=0, ZF=1, SF=0, OF=0)),
    # cmp r64, imm8: the immediate is sign-extended to 64 bits (-1), so rax == imm
    ({"rax": 0xFFFFFFFFFFFFFFFF}, "cmp rax,-1", {}, dict(CF=0, PF=1, AF=0, ZF=1, SF=0, OF=0)),
    # parity of the low byte only: 0x0103 -> 0x03 has two 1 bits
    ({"rax": 0x0101}, "add ax,2", {"rax": 0x0103}, dict(CF=0, PF=1, AF=0, ZF=0, SF=0, OF=0)),
    ({"rax": 0}, "add al,7", {"rax": 7}, dict(CF=0, PF=0, AF=0, ZF=0, SF=0, OF=0)),
    # AF: carry out of bit 3
    ({"rax": 0x08}, "add al,0x08", {"rax": 0x10}, dict(CF=0, PF=0, AF=1, ZF=0, SF=0, OF=0)),
    ({"rax": 0x10}, "add al,0x10", {"rax": 0x20}, dict(CF=0, PF=0, AF=0, ZF=0, SF=0, OF=0)),
    # 16-bit overflow and carry
    ({"rax": 0xFFFF}, "add ax,1", {"rax": 0}, dict(CF=1, PF=1, AF=1, ZF=1, SF=0, OF=0)),
    ({"rax": 0x7FFF}, "add ax,1", {"rax": 0x8000}, dict(CF=0, PF=1, AF=1, ZF=0, SF=1, OF=1)),
    # 32-bit results zero-extend
    ({"rax": 0xDEADBEEF7FFFFFFF}, "add eax,1", {"rax": 0x80000000}, dict(CF=0, PF=1, AF=1, ZF=0, SF=1, OF=1)),
    ({"rax": 0xDEADBEEF80000000}, "sub eax,1", {"rax": 0x7FFFFFFF}, dict(CF=0, PF=1, AF=1, ZF=0, SF=0, OF=1)),
    # XOR / TEST clear CF and OF (and, in isasim, the undefined AF)
    ({"rax": 0xFFFFFFFF12345678}, "xor eax,eax", {"rax": 0}, dict(CF=0, PF=1, AF=0, ZF=1, SF=0, OF=0)),
    ({"rax": 0x80}, "test al,0x80", {"rax": 0x80}, dict(CF=0, PF=0, AF=0, ZF=0, SF=1, OF=0)),
    ({"rax": 0xF0, "rbx": 0x0F}, "test rax,rbx", {}, dict(CF=0, PF=1, AF=0, ZF=1, SF=0, OF=0)),
    ({"rax": 0x8000000000000000}, "xor rax,-1", {"rax": 0x7FFFFFFFFFFFFFFF},
     dict(CF=0, PF=1, AF=0, ZF=0, SF=0, OF=0)),
    # IMUL: CF = OF = signed overflow; SF PF from the truncated result; ZF and AF cleared even for a
    # zero result (the SDM leaves SF ZF AF PF undefined; these are Emerald Rapids silicon's values)
    ({"rax": 0x4000000000000000, "rbx": 2}, "imul rax,rbx", {"rax": 0x8000000000000000},
     dict(CF=1, PF=1, AF=0, ZF=0, SF=1, OF=1)),
    ({"rbx": 0xFFFFFFFFFFFFFFFE}, "imul rax,rbx,3", {"rax": 0xFFFFFFFFFFFFFFFA},
     dict(CF=0, PF=1, AF=0, ZF=0, SF=1, OF=0)),
    ({"rbx": 0x80000000}, "imul eax,ebx,-1", {"rax": 0x80000000}, dict(CF=1, PF=1, AF=0, ZF=0, SF=1, OF=1)),
    ({"rcx": 0x7FFF}, "imul cx,cx,1", {"rcx": 0x7FFF}, dict(CF=0, PF=1, AF=0, ZF=0, SF=0, OF=0)),
    ({"rax": 0xFFFFFFFFFFFFFFFF, "rbx": 5}, "imul rbx", {"rax": 0xFFFFFFFFFFFFFFFB, "rdx": 0xFFFFFFFFFFFFFFFF},
     dict(CF=0, PF=0, AF=0, ZF=0, SF=1, OF=0)),
    ({"rax": 0x8000000000000000, "rbx": 2, "rdx": 5}, "imul rbx", {"rax": 0, "rdx": 0xFFFFFFFFFFFFFFFF},
     dict(CF=1, PF=1, AF=0, ZF=0, SF=0, OF=1)),
    ({"rax": 0xFFFFFFFF80000000, "rdx": 0xFFFFFFFFFFFFFFFF, "rcx": 2}, "imul ecx",
     {"rax": 0, "rdx": 0xFFFFFFFF}, dict(CF=1, PF=1, AF=0, ZF=0, SF=0, OF=1)),
    ({"rax": 0x1234FFFF, "rdx": 0x5678, "rcx": 3}, "imul cx", {"rax": 0x1234FFFD, "rdx": 0xFFFF},
     dict(CF=0, PF=0, AF=0, ZF=0, SF=1, OF=0)),
    ({"rax": 0x80, "rbx": 2}, "imul bl", {"rax": 0xFF00}, dict(CF=1, PF=1, AF=0, ZF=0, SF=0, OF=1)),
    ({"rax": 0xFF, "rbx": 0xFF}, "imul bl", {"rax": 0x0001}, dict(CF=0, PF=0, AF=0, ZF=0, SF=0, OF=0)),
]


@pytest.mark.parametrize("setup,line,regs,expected", FLAG_EXAMPLES, ids=[e[1] for e in FLAG_EXAMPLES])
def test_flag_examples(setup, line, regs, expected):
    cpu = make_cpu(**setup)
    assert run(cpu, line) is None
    for name, value in regs.items():
        assert cpu.state.read_register(name) == value, name
    assert flags(cpu) == expected
    assert cpu.state.rflags & 0x2 and cpu.state.flag(1 << 9)  # reserved bit 1 and IF untouched


def test_inc_dec_keep_cf():
    cpu = make_cpu(rax=0xFFFFFFFFFFFFFFFF)
    set_flags(cpu, CF=1)
    run(cpu, "inc rax")
    assert cpu.state.read_register("rax") == 0
    assert flags(cpu) == dict(CF=1, PF=1, AF=1, ZF=1, SF=0, OF=0)
    set_flags(cpu, CF=0)
    run(cpu, "dec rax")
    assert cpu.state.read_register("rax") == 0xFFFFFFFFFFFFFFFF
    assert flags(cpu) == dict(CF=0, PF=1, AF=1, ZF=0, SF=1, OF=0)
    cpu = make_cpu(rcx=0x7F)
    set_flags(cpu, CF=1)
    run(cpu, "inc cl")
    assert cpu.state.read_register("rcx") == 0x80 and flags(cpu) == dict(CF=1, PF=0, AF=1, ZF=0, SF=1, OF=1)
    cpu = make_cpu(rcx=0xAA80000000)
    run(cpu, "dec ecx")
    assert cpu.state.read_register("rcx") == 0x7FFFFFFF and flags(cpu)["OF"] == 1 and flags(cpu)["CF"] == 0


def test_register_width_rules():
    cpu = make_cpu(rax=0xFFFFFFFFFFFFFFFF)
    run(cpu, "mov al,0x12")
    assert cpu.state.read_register("rax") == 0xFFFFFFFFFFFFFF12
    run(cpu, "mov ah,0x34")
    assert cpu.state.read_register("rax") == 0xFFFFFFFFFFFF3412
    run(cpu, "mov ax,0x5678")
    assert cpu.state.read_register("rax") == 0xFFFFFFFFFFFF5678
    run(cpu, "mov eax,1")
    assert cpu.state.read_register("rax") == 1
    run(cpu, "mov rax,-1")  # C7 /0 imm32 sign-extended
    assert cpu.state.read_register("rax") == 0xFFFFFFFFFFFFFFFF
    run(cpu, "mov rax,0xffffffff")  # movabs
    assert cpu.state.read_register("rax") == 0xFFFFFFFF
    run(cpu, "mov r9,rax")
    run(cpu, "mov r9b,0x80")
    assert cpu.state.read_register("r9") == 0xFFFFFF80
    rflags = cpu.state.rflags
    run(cpu, "mov sil,dil")
    assert cpu.state.rflags == rflags  # MOV leaves the flags alone


def test_memory_operands_and_faults():
    cpu = make_cpu(rdi=DATA, rsi=RODATA, rbx=2)
    run(cpu, "mov QWORD PTR [rdi+8],-1")
    assert cpu.memory.read(DATA + 8, 8) == b"\xff" * 8
    run(cpu, "mov DWORD PTR [rdi+rbx*4],0x11223344")
    assert cpu.memory.read(DATA + 8, 8) == bytes.fromhex("44332211ffffffff")
    run(cpu, "mov rax,[rdi+8]")
    assert cpu.state.read_register("rax") == 0xFFFFFFFF11223344
    run(cpu, "add BYTE PTR [rdi+8],0xbc")  # 0x44 + 0xbc = 0x100
    assert cpu.memory.read(DATA + 8, 1) == b"\x00" and flags(cpu)["CF"] == 1 and flags(cpu)["ZF"] == 1
    run(cpu, "mov eax,[rsi+0x10]")
    assert cpu.state.read_register("rax") == 0x13121110
    run(cpu, "cmp eax,DWORD PTR [rsi+0x10]")
    assert flags(cpu)["ZF"] == 1
    run(cpu, "inc WORD PTR [rdi]")
    run(cpu, "imul ecx,DWORD PTR [rdi],7")
    assert cpu.state.read_register("rcx") == 7
    # a write to a read-only page faults with nothing changed, flags included
    before = cpu.state.rflags
    with pytest.raises(Fault) as info:
        run(cpu, "add BYTE PTR [rsi],1")
    assert info.value.kind == "#PF" and info.value.address == RODATA and info.value.access == "write"
    assert cpu.state.rflags == before and cpu.memory.read(RODATA, 1) == b"\x00"
    # an unmapped read faults
    with pytest.raises(Fault) as info:
        run(cpu, "mov rax,QWORD PTR ds:0x100")
    assert info.value.kind == "#PF" and info.value.address == 0x100 and info.value.access == "read"
    # an access straddling the end of a region faults
    with pytest.raises(Fault):
        run(cpu, "mov rax,[rdi+0xffc]")


def test_lea_does_not_touch_memory():
    cpu = make_cpu(rdi=0xFFFFFFFFFFFFFFF0, rsi=0x10)
    run(cpu, "lea rax,[rdi+rsi*4+0x40]")
    assert cpu.state.read_register("rax") == 0x70  # wraps at 64 bits; nothing is mapped there
    cpu.state.write_register("rax", 0xAAAAAAAAAAAAAAAA)
    run(cpu, "lea eax,[rdi+0x8]")
    assert cpu.state.read_register("rax") == 0xFFFFFFF8
    run(cpu, "lea ax,[rsi-0x20]")
    assert cpu.state.read_register("rax") == 0xFFFFFFF0
    run(cpu, "lea rcx,[0x1234]")
    assert cpu.state.read_register("rcx") == 0x1234
    assert not [w for w in cpu.memory.journal.take()]


# (rax, rbx) for cmp rax,rbx -> the conditions that hold, by hand
CMP_CONDITIONS = [
    (1, 2, {"b", "be", "l", "le", "ne", "s", "p", "no"}),  # 1-2 = -1: low byte 0xff, even parity
    (2, 1, {"a", "ae", "g", "ge", "ne", "ns", "np", "no"}),  # 1: odd parity
    (5, 5, {"ae", "be", "e", "ge", "le", "ns", "p", "no"}),
    (0xFFFFFFFFFFFFFFFF, 1, {"a", "ae", "l", "le", "ne", "s", "np", "no"}),  # -1 vs 1: unsigned above, signed less
    (1, 0xFFFFFFFFFFFFFFFF, {"b", "be", "g", "ge", "ne", "ns", "np", "no"}),  # 1 - (-1) = 2
    (0x8000000000000000, 1, {"a", "ae", "l", "le", "ne", "ns", "o", "p"}),  # overflow: 0x7fff...ff, SF != OF
]
ALL_CC = {"o", "no", "b", "ae", "e", "ne", "be", "a", "s", "ns", "p", "np", "l", "ge", "le", "g"}
OPPOSITE = {"o": "no", "b": "ae", "e": "ne", "be": "a", "s": "ns", "p": "np", "l": "ge", "le": "g"}


@pytest.mark.parametrize("a,b,taken", CMP_CONDITIONS)
def test_jcc_after_cmp(a, b, taken):
    for cc, opposite in OPPOSITE.items():  # each condition or its opposite is listed, never both
        assert (cc in taken) != (opposite in taken), (cc, taken)
    cpu = make_cpu(rax=a, rbx=b)
    run(cpu, "cmp rax,rbx")
    labels = {"target": 0x2000}
    for cc in ALL_CC:
        mnemonic, operands = parse_line(f"j{cc} target", labels)
        form, ops, code = scalar.encode(mnemonic, operands, 0x1000)
        result = form.execute(cpu, ops)
        assert result == (0x2000 if cc in taken else None), cc


def test_jcc_aliases_have_the_same_condition():
    for alias, name in scalar_forms.ALIASES.items():
        if not alias.startswith("j"):
            continue  # sal is shl's alias, not a branch
        cpu_form = scalar.encode(alias, (Target(0x1010),), 0x1000)[0]
        assert cpu_form.mnemonic == name


def test_jmp_nop_ret():
    cpu = make_cpu()
    assert run(cpu, "nop") is None
    assert run(cpu, "nop DWORD PTR [rax]") is None  # r/m not accessed: nothing mapped at 0
    form, ops, _ = scalar.encode("jmp", (Target(0x1234, "there"),), 0x1000)
    assert form.execute(cpu, ops) == 0x1234
    assert run(cpu, "ret") is HALT
    assert cpu.state.journal.take() == []


def test_journal_records_the_writes():
    cpu = make_cpu(rax=1)
    run(cpu, "add rax,-1")
    writes = [(w.kind, str(w.where), w.old, w.new) for w in cpu.state.journal.take()]
    assert writes == [("reg", "rax", 1, 0), ("flags", "rflags", 0x202, 0x202 | CF | PF | AF | ZF)]


# Flags by an independent formulation (big-integer arithmetic on signed and unsigned values)
@settings(max_examples=400, deadline=None)
@given(op=st.sampled_from(["add", "sub", "cmp"]), bits=st.sampled_from([8, 16, 32, 64]),
       a=st.integers(0, (1 << 64) - 1), b=st.integers(0, (1 << 64) - 1))
def test_add_sub_flags_against_reference(op, bits, a, b):
    from isasim.x86_amx.operands import gpr_name

    mask = (1 << bits) - 1
    a, b = a & mask, b & mask
    sa, sb = scalar.signed(a, bits), scalar.signed(b, bits)
    cpu = make_cpu(rax=a, rbx=b)
    run(cpu, f"{op} {gpr_name(0, bits)},{gpr_name(3, bits)}")
    if op == "add":
        r = (a + b) & mask
        expected = dict(CF=int(a + b > mask), OF=int(not -(1 << (bits - 1)) <= sa + sb < (1 << (bits - 1))),
                        AF=int((a & 0xF) + (b & 0xF) > 0xF))
    else:
        r = (a - b) & mask
        expected = dict(CF=int(a < b), OF=int(not -(1 << (bits - 1)) <= sa - sb < (1 << (bits - 1))),
                        AF=int((a & 0xF) < (b & 0xF)))
    expected.update(ZF=int(r == 0), SF=int(r >= 1 << (bits - 1)), PF=int(bin(r & 0xFF).count("1") % 2 == 0))
    assert flags(cpu) == expected
    assert cpu.state.read_register(gpr_name(0, bits)) == (a if op == "cmp" else r)


@settings(max_examples=300, deadline=None)
@given(bits=st.sampled_from([16, 32, 64]), a=st.integers(0, (1 << 64) - 1), b=st.integers(0, (1 << 64) - 1))
def test_imul_against_reference(bits, a, b):
    from isasim.x86_amx.operands import gpr_name

    mask = (1 << bits) - 1
    a, b = a & mask, b & mask
    product = scalar.signed(a, bits) * scalar.signed(b, bits)
    cpu = make_cpu(rax=a, rbx=b)
    run(cpu, f"imul {gpr_name(0, bits)},{gpr_name(3, bits)}")
    assert cpu.state.read_register(gpr_name(0, bits)) == product & mask
    overflow = int(not -(1 << (bits - 1)) <= product < (1 << (bits - 1)))
    assert flags(cpu)["CF"] == flags(cpu)["OF"] == overflow


# ---------------------------------------------------------------------------
# Issue 27: the rest of the integer instructions compilers emit
# ---------------------------------------------------------------------------

LOCK_LINES = ["lock xadd DWORD PTR [rdi],eax", "lock cmpxchg QWORD PTR [rdi],rcx", "lock add QWORD PTR [rdi],0x1",
              "lock inc DWORD PTR [rsi]", "lock and BYTE PTR [rdi],al", "lock or QWORD PTR [rdi+0x8],rax",
              "lock dec QWORD PTR [rax]", "lock sub DWORD PTR [rdi],0x10", "lock neg QWORD PTR [rdi]",
              "lock not BYTE PTR [rdi]", "lock adc WORD PTR [rdi],ax", "lock sbb QWORD PTR [rdi],0x7f",
              "lock xor DWORD PTR [rdi],0x80000000", "lock xchg QWORD PTR [rdi],rax", "lock bts QWORD PTR [rdi],rax",
              "lock btr DWORD PTR [rdi],0x5", "lock btc WORD PTR [rdi],ax"]


@needs_binutils
def test_lock_lines_match_gnu_as(tmp_path):
    from isasim.x86_amx import ISA

    lines = []
    for i, line in enumerate(LOCK_LINES):
        lines += [f"l_{i}:", line]
    lines.append("l_end:")
    code, symbols, texts, stderr = gas(lines, tmp_path)
    assert stderr == ""
    for i, line in enumerate(LOCK_LINES):
        start = symbols[f"l_{i}"]
        end = symbols[f"l_{i + 1}"] if i + 1 < len(LOCK_LINES) else symbols["l_end"]
        assert ISA.assemble(line, base=start).code == code[start:end], line
        instr = scalar.decode(code, start, start)
        assert instr.text == texts[start] == line and instr.encoding == code[start:end]


def test_lock_refusals():
    with pytest.raises(AssemblyError, match="lock needs a memory destination"):
        scalar.encode("lock add", (Reg("rax"), Reg("rbx")), 0)
    with pytest.raises(AssemblyError, match="prefix words are supported only before nop"):
        scalar.encode("lock mov", (Mem("rdi", size=8), Reg("rax")), 0)


# (setup registers, instruction, expected registers, expected flags); by hand from the SDM's Operation
GENERAL_EXAMPLES = [
    ({"rsp": 0x7FFFFFFFE128}, "and rsp,-64", {"rsp": 0x7FFFFFFFE100}, dict(CF=0, PF=1, AF=0, ZF=0, SF=0, OF=0)),
    ({"rax": 0xFFFFFFFF0000FF00}, "or eax,0x1", {"rax": 0xFF01}, dict(CF=0, PF=0, AF=0, ZF=0, SF=0, OF=0)),
    ({"rax": 0xFFFFFFFFFFFFFFFF, "rbx": 0}, "adc rax,rbx", {"rax": 0}, dict(CF=1, PF=1, AF=1, ZF=1, SF=0, OF=0)),
    ({"rax": 0x7F}, "adc al,0x0", {"rax": 0x80}, dict(CF=0, PF=0, AF=1, ZF=0, SF=1, OF=1)),
    ({"rax": 0, "rbx": 0xFFFFFFFFFFFFFFFF}, "sbb rax,rbx", {"rax": 0}, dict(CF=1, PF=1, AF=1, ZF=1, SF=0, OF=0)),
    ({"rax": 5}, "sbb eax,eax", {"rax": 0xFFFFFFFF}, dict(CF=1, PF=1, AF=1, ZF=0, SF=1, OF=0)),
    ({"rax": 0x80}, "neg al", {"rax": 0x80}, dict(CF=1, PF=0, AF=0, ZF=0, SF=1, OF=1)),
    ({"rax": 0}, "neg rax", {"rax": 0}, dict(CF=0, PF=1, AF=0, ZF=1, SF=0, OF=0)),
    ({"rax": 0xFFFFFFFF, "rcx": 0xFFFFFFFF}, "mul ecx", {"rax": 1, "rdx": 0xFFFFFFFE},
     dict(CF=1, PF=0, AF=0, ZF=0, SF=0, OF=1)),
    ({"rax": 0x10, "rbx": 0x10}, "mul bl", {"rax": 0x100}, dict(CF=1, PF=1, AF=0, ZF=1, SF=0, OF=1)),
    ({"rax": 7, "rbx": 3}, "mul rbx", {"rax": 21, "rdx": 0}, dict(CF=0, PF=0, AF=0, ZF=0, SF=0, OF=0)),
    ({"rax": 0xFFFFFFFE, "rbx": 1}, "xadd ebx,eax", {"rax": 1, "rbx": 0xFFFFFFFF},
     dict(CF=0, PF=1, AF=0, ZF=0, SF=1, OF=0)),
]


@pytest.mark.parametrize("setup,line,regs,expected", GENERAL_EXAMPLES, ids=[e[1] for e in GENERAL_EXAMPLES])
def test_general_examples(setup, line, regs, expected):
    cpu = make_cpu(**setup)
    if line.startswith(("adc", "sbb")):
        set_flags(cpu, CF=1)
    assert run(cpu, line) is None
    for name, value in regs.items():
        assert cpu.state.read_register(name) == value, name
    assert flags(cpu) == expected


@pytest.mark.parametrize("setup,line,regs", [
    ({"rax": 0x8000}, "cbw", {"rax": 0x0000}), ({"rax": 0x80}, "cbw", {"rax": 0xFF80}),
    ({"rax": 0xFFFFFFFF00008000}, "cwde", {"rax": 0xFFFF8000}),
    ({"rax": 0x8000, "rdx": 0x123456789}, "cwd", {"rdx": 0x12345FFFF}),
    ({"rax": 0x80000000, "rdx": 0x123456789}, "cdq", {"rdx": 0xFFFFFFFF}),
    ({"rax": 0x7FFFFFFFFFFFFFFF, "rdx": 7}, "cqo", {"rdx": 0}),
    ({"rax": 0x8000000000000000}, "cqo", {"rdx": 0xFFFFFFFFFFFFFFFF}),
    ({"rax": 0x1122334455667788}, "bswap rax", {"rax": 0x8877665544332211}),
    ({"rax": 0x1122334455667788}, "bswap eax", {"rax": 0x88776655}),
    ({"rax": 0x0F}, "not al", {"rax": 0xF0}),
    ({"rax": 1000, "rdx": 0, "rcx": 7}, "div rcx", {"rax": 142, "rdx": 6}),
    ({"rax": 1003, "rcx": 10}, "div cl", {"rax": 3 << 8 | 100}),
    ({"rax": 0xFFFFFFFFFFFFFFF9, "rdx": 0xFFFFFFFFFFFFFFFF, "rcx": 2}, "idiv rcx",
     {"rax": 0xFFFFFFFFFFFFFFFD, "rdx": 0xFFFFFFFFFFFFFFFF}),  # -7 / 2 = -3 remainder -1
    ({"rax": 0xFFF9, "rcx": 0xFE}, "idiv cl", {"rax": 0xFF03}),  # -7 / -2 = 3 remainder -1
    ({"rax": 0x1234567800000005, "rdx": 0xAAAA00000000, "rcx": 0}, "cmove ecx,eax", {"rcx": 0}),
])
def test_general_results(setup, line, regs):
    cpu = make_cpu(**setup)
    before = cpu.state.rflags
    assert run(cpu, line) is None
    for name, value in regs.items():
        assert cpu.state.read_register(name) == value, name
    if line.split()[0] not in ("div", "idiv"):
        assert cpu.state.rflags == before


def test_cmov_and_set_follow_the_flags():
    cpu = make_cpu(rax=0xFFFFFFFF00000001, rbx=0xAAAAAAAAAAAAAAAA, rcx=0xFFFFFFFFFFFFFFFF)
    set_flags(cpu, ZF=0)
    run(cpu, "cmove eax,ebx")  # not taken: a 32-bit destination is still zero-extended
    assert cpu.state.read_register("rax") == 1
    run(cpu, "cmovne rcx,rbx")
    assert cpu.state.read_register("rcx") == 0xAAAAAAAAAAAAAAAA
    run(cpu, "cmove cx,ax")  # not taken, 16 bits: unchanged
    assert cpu.state.read_register("rcx") == 0xAAAAAAAAAAAAAAAA
    run(cpu, "sete cl")
    run(cpu, "setne ch")
    assert cpu.state.read_register("rcx") == 0xAAAAAAAAAAAA0100
    with pytest.raises(Fault):  # the source is read whether or not the move happens
        run(cpu, "cmove rax,QWORD PTR ds:0x100")


def test_cmpxchg_success_and_failure():
    cpu = make_cpu(rax=0xFFFFFFFF00000005, rbx=0x1111111100000005, rcx=0x77)
    run(cpu, "cmpxchg ebx,ecx")  # equal: DEST := SRC (zero-extended); the accumulator is not written
    assert cpu.state.read_register("rbx") == 0x77 and cpu.state.read_register("rax") == 0xFFFFFFFF00000005
    assert flags(cpu)["ZF"] == 1
    run(cpu, "cmpxchg ebx,ecx")  # not equal: EAX := DEST; a register DEST is not written
    assert cpu.state.read_register("rax") == 0x77 and flags(cpu)["ZF"] == 0
    cpu = make_cpu(rax=1, rbx=0x100000000)
    run(cpu, "cmpxchg ebx,eax")
    assert cpu.state.read_register("rbx") == 0x100000000 and cpu.state.read_register("rax") == 0
    cpu = make_cpu(rsi=RODATA, rax=0x99)
    with pytest.raises(Fault) as info:  # a failing compare still writes memory back
        run(cpu, "cmpxchg BYTE PTR [rsi],cl")
    assert info.value.kind == "#PF" and info.value.access == "write"


@pytest.mark.parametrize("setup,line,rule", [
    ({"rax": 5, "rcx": 0}, "div ecx", "div: the divisor is 0"),
    ({"rax": 5, "rcx": 0}, "idiv cl", "idiv: the divisor is 0"),
    ({"rax": 0, "rdx": 1, "rcx": 1}, "div rcx", "div: the quotient 0x10000000000000000 does not fit in the "
                                                "64-bit destination"),
    ({"rax": 0x8000000000000000, "rdx": 0xFFFFFFFFFFFFFFFF, "rcx": 0xFFFFFFFFFFFFFFFF}, "idiv rcx",
     "idiv: the quotient 0x8000000000000000 does not fit in the 64-bit destination"),
    ({"rax": 0x8000, "rcx": 0xFF}, "idiv cl", "idiv: the quotient 0x8000 does not fit in the 8-bit destination"),
])
def test_divide_error(setup, line, rule):
    cpu = make_cpu(**setup)
    with pytest.raises(Fault) as info:
        run(cpu, line)
    assert info.value.kind == "#DE" and info.value.rule == rule
    assert cpu.state.read_register("rax") == setup["rax"]  # nothing written


def test_movbe_needs_its_feature():
    from dataclasses import replace

    from isasim.core.program import Instruction

    cpu = make_cpu(rdi=DATA)
    cpu.memory.write(DATA, bytes.fromhex("1122334455667788"))
    run(cpu, "movbe rax,QWORD PTR [rdi]")
    assert cpu.state.read_register("rax") == 0x1122334455667788
    run(cpu, "movbe DWORD PTR [rdi],eax")
    assert cpu.memory.read(DATA, 4) == bytes.fromhex("55667788")
    old = replace(cpu.model, features=cpu.model.features - {"MOVBE"})
    cpu = X86Context(X86AmxState(), cpu.memory, old)
    form, operands, code = encode_line("movbe rax,QWORD PTR [rdi]")
    with pytest.raises(Fault) as info:
        form.prepare(Instruction(form, operands, 0x1000, code, "movbe", size=len(code)))(cpu)()
    assert info.value.kind == "#UD" and "MOVBE" in info.value.rule


def test_endbr64_and_padding_nops_do_nothing():
    cpu = make_cpu()
    for line in ("endbr64", "nop DWORD PTR [rax+rax*1+0x0]", "nop WORD PTR [rax+rax*1+0x0]"):
        assert run(cpu, line) is None
    assert cpu.state.journal.take() == []


# (setup registers, CF before, instruction, expected registers, expected CF and OF); by hand from the SDM
ROTATE_EXAMPLES = [
    ({"rax": 0x81}, 0, "rol al,1", {"rax": 0x03}, dict(CF=1, OF=1)),
    ({"rax": 0x12345678}, 0, "ror eax,0x4", {"rax": 0x81234567}, dict(CF=1, OF=1)),
    ({"rax": 0x8000000000000001}, 0, "ror rax,1", {"rax": 0xC000000000000000}, dict(CF=1, OF=0)),
    ({"rax": 0x80}, 0, "rol al,0x8", {"rax": 0x80}, dict(CF=0, OF=1)),  # a multiple of 8: CF := LSB(DEST)
    ({"rbx": 0x80}, 1, "rcl bl,1", {"rbx": 0x01}, dict(CF=1, OF=1)),
    ({"rbx": 0x01}, 0, "rcr bl,1", {"rbx": 0x00}, dict(CF=1, OF=0)),
    ({"rbx": 0x80}, 1, "rcr bl,1", {"rbx": 0xC0}, dict(CF=0, OF=0)),  # OF := MSB(DEST) XOR CF, before
    ({"rax": 0x55}, 1, "rcl al,0x9", {"rax": 0x55}, dict(CF=1, OF=1)),  # 9 MOD 9 = 0: DEST and CF stay
    ({"rax": 0x12345678, "rdx": 0x9ABCDEF0}, 0, "shld eax,edx,0x4", {"rax": 0x23456789}, dict(CF=1, OF=0)),
    ({"rax": 0x1234, "rdx": 0xABCD}, 0, "shrd ax,dx,0x4", {"rax": 0xD123}, dict(CF=0, OF=1)),
    ({"rax": 0x1234, "rdx": 0xABCD}, 0, "shld ax,dx,0x14", {"rax": 0xBCD1}, dict(CF=0, OF=1)),  # the named choice
    ({"rax": 0x8000000000000000, "rdx": 1}, 0, "shld rax,rdx,1", {"rax": 0}, dict(CF=1, OF=1)),
]


@pytest.mark.parametrize("setup,carry,line,regs,expected", ROTATE_EXAMPLES, ids=[e[2] for e in ROTATE_EXAMPLES])
def test_rotate_examples(setup, carry, line, regs, expected):
    cpu = make_cpu(**setup)
    set_flags(cpu, CF=carry, OF=1 - expected["OF"])
    run(cpu, line)
    for name, value in regs.items():
        assert cpu.state.read_register(name) == value, name
    assert {k: flags(cpu)[k] for k in ("CF", "OF")} == expected


@pytest.mark.parametrize("line", ["rol eax,0x0", "rcr eax,0x20", "shl eax,cl", "shrd eax,edx,0x0", "sar ebx,0x0"])
def test_a_count_of_zero_changes_no_flag_but_zero_extends(line):
    cpu = make_cpu(rax=0xAAAA000012345678, rbx=0xBBBB000000000001, rcx=0x100)
    set_flags(cpu, CF=1, OF=1, ZF=1)
    before = cpu.state.rflags
    run(cpu, line)
    register = line.split()[1].split(",")[0]
    assert cpu.state.read_register(register) < 1 << 32 and cpu.state.rflags == before
    cpu = make_cpu(rax=0xAAAA000012345678)
    run(cpu, "rol rax,0x40")  # masked to 0 in 64 bits: nothing changes
    assert cpu.state.read_register("rax") == 0xAAAA000012345678


def test_bit_tests():
    cpu = make_cpu(rax=0b1010, rcx=65, rdi=DATA + 0x100)
    set_flags(cpu, ZF=1)
    run(cpu, "bt rax,0x3")
    assert flags(cpu)["CF"] == 1 and flags(cpu)["ZF"] == 1  # ZF is not affected
    run(cpu, "bt rax,rcx")  # a register base: 65 MOD 64 = 1
    assert flags(cpu)["CF"] == 1
    run(cpu, "btc eax,0x21")  # 33 MOD 32 = 1: complemented, and a 32-bit write zero-extends
    assert cpu.state.read_register("rax") == 0b1000 and flags(cpu)["CF"] == 1
    run(cpu, "bts ax,0x10")  # 16 MOD 16 = 0
    assert cpu.state.read_register("rax") == 0b1001 and flags(cpu)["CF"] == 0
    # a memory base with a register offset reaches the next qwords: 65 -> [rdi+8], bit 1
    run(cpu, "bts QWORD PTR [rdi],rcx")
    assert cpu.memory.read(DATA + 0x108, 8) == (2).to_bytes(8, "little") and flags(cpu)["CF"] == 0
    cpu.state.write_register("rcx", (-1) % (1 << 64))  # -1: the qword before, bit 63
    run(cpu, "bts QWORD PTR [rdi],rcx")
    assert cpu.memory.read(DATA + 0xF8, 8) == (1 << 63).to_bytes(8, "little")
    cpu.state.write_register("rcx", 0xFFFF)  # a 16-bit offset is signed too: -1 -> the word before
    run(cpu, "btr WORD PTR [rdi],cx")
    assert cpu.memory.read(DATA + 0xFE, 2) == b"\x00\x00" and flags(cpu)["CF"] == 1
    run(cpu, "bt DWORD PTR [rdi],0x41")  # an imm8 offset is taken MOD 32: [rdi], bit 1
    assert flags(cpu)["CF"] == 0


@pytest.mark.parametrize("line,source,expected,cf,zf", [
    ("bsf rax,rbx", 0x80, 7, None, 0), ("bsr rax,rbx", 0x80000001, 31, None, 0),
    ("bsf rax,rbx", 0, 0xAAAAAAAAAAAAAAAA, None, 1), ("bsr eax,ebx", 0, 0xAAAAAAAAAAAAAAAA, None, 1),
    ("lzcnt rax,rbx", 1, 63, 0, 0), ("lzcnt eax,ebx", 0, 32, 1, 0), ("lzcnt ax,bx", 0x8000, 0xAAAAAAAAAAAA0000, 0, 1),
    ("tzcnt rax,rbx", 0x100, 8, 0, 0), ("tzcnt eax,ebx", 0, 32, 1, 0), ("tzcnt rax,rbx", 1, 0, 0, 1),
    ("popcnt rax,rbx", 0xF0F0, 8, 0, 0), ("popcnt eax,ebx", 0, 0, 0, 1),
])
def test_bit_scans_and_counts(line, source, expected, cf, zf):
    cpu = make_cpu(rax=0xAAAAAAAAAAAAAAAA, rbx=source)
    set_flags(cpu, CF=1)
    run(cpu, line)
    assert cpu.state.read_register("rax") == expected  # a zero source leaves BSF/BSR's DEST as it was
    assert flags(cpu)["ZF"] == zf and (cf is None or flags(cpu)["CF"] == cf)


def test_lzcnt_without_its_feature_runs_as_bsr():
    from dataclasses import replace

    cpu = make_cpu(rbx=1)
    cpu = X86Context(cpu.state, cpu.memory, replace(cpu.model, features=cpu.model.features - {"LZCNT"}))
    run(cpu, "lzcnt rax,rbx")
    assert cpu.state.read_register("rax") == 0  # BSR of 1 (LZCNT would give 63)


@pytest.mark.parametrize("setup,line,regs,cf,zf", [
    ({"rcx": 0xF0, "rdx": 0xFF}, "andn eax,ecx,edx", {"rax": 0x0F}, 0, 0),
    ({"rdi": 0xABCD, "rcx": 0x0804}, "bextr rax,rdi,rcx", {"rax": 0xBC}, 0, 0),  # 8 bits from bit 4
    ({"rdi": 0xABCD, "rcx": 0x0840}, "bextr rax,rdi,rcx", {"rax": 0}, 0, 1),  # start 64: nothing
    ({"rcx": 0b101000}, "blsi eax,ecx", {"rax": 0b1000}, 1, 0),
    ({"rdx": 0b101000}, "blsmsk rax,rdx", {"rax": 0b1111}, 0, 0),
    ({"rcx": 0}, "blsmsk eax,ecx", {"rax": 0xFFFFFFFF}, 1, 0),
    ({"rcx": 0b101000}, "blsr eax,ecx", {"rax": 0b100000}, 0, 0),
    ({"rcx": 0xFFFFFFFF, "rdx": 4}, "bzhi eax,ecx,edx", {"rax": 0xF}, 0, 0),
    ({"rcx": 0xFFFFFFFF, "rdx": 40}, "bzhi eax,ecx,edx", {"rax": 0xFFFFFFFF}, 1, 0),  # N > 31: CF
    ({"rdi": 1, "rcx": 65}, "shlx rax,rdi,rcx", {"rax": 2}, None, None),  # 65 AND 63 = 1
    ({"rcx": 0x80000000, "rdx": 31}, "sarx eax,ecx,edx", {"rax": 0xFFFFFFFF}, None, None),
    ({"rcx": 0x80000000, "rdx": 31}, "shrx eax,ecx,edx", {"rax": 1}, None, None),
    ({"rcx": 0x12345678}, "rorx eax,ecx,0x8", {"rax": 0x78123456}, None, None),
    ({"rdx": 0xFFFFFFFFFFFFFFFF, "rcx": 2}, "mulx rbx,rax,rcx", {"rax": 0xFFFFFFFFFFFFFFFE, "rbx": 1}, None, None),
    ({"rdx": 6, "rcx": 7}, "mulx rax,rax,rcx", {"rax": 0}, None, None),  # the same register: the high half
    ({"rcx": 0b101, "rdx": 0b11010}, "pdep rax,rcx,rdx", {"rax": 0b10010}, None, None),
    ({"rcx": 0b11010, "rdx": 0b11010}, "pext eax,ecx,edx", {"rax": 0b111}, None, None),
])
def test_bmi_examples(setup, line, regs, cf, zf):
    cpu = make_cpu(**setup)
    set_flags(cpu, CF=1 - (cf or 0), ZF=1 - (zf or 0))
    before = cpu.state.rflags
    run(cpu, line)
    for name, value in regs.items():
        assert cpu.state.read_register(name) == value, name
    if cf is None:
        assert cpu.state.rflags == before  # SHLX SHRX SARX RORX MULX PDEP PEXT change no flag
    else:
        assert flags(cpu)["CF"] == cf and flags(cpu)["ZF"] == zf and flags(cpu)["OF"] == 0


def test_bmi_needs_its_feature():
    from dataclasses import replace

    from isasim.core.program import Instruction

    cpu = make_cpu(rcx=1, rdx=2)
    cpu = X86Context(cpu.state, cpu.memory, replace(cpu.model, features=cpu.model.features - {"BMI2"}))
    form, operands, code = encode_line("pdep rax,rcx,rdx")
    with pytest.raises(Fault) as info:
        form.prepare(Instruction(form, operands, 0x1000, code, "pdep", size=len(code)))(cpu)()
    assert info.value.kind == "#UD" and "BMI2" in info.value.rule

"""The assembler against GNU as: issue 9's regressions and two differential fuzzers.

GNU as is the oracle.  Where it assembles a line without a word, isasim must
produce the same bytes; where it errors, warns (and then assembles a made-up
value) or crashes, isasim must raise a typed IsasimError.  The fuzzers assemble
thousands of lines in one ``as`` call: every line gets a label of its own, so the
symbol table (``nm``) says where each line's bytes start in the image
(``objcopy -O binary``).
"""

from __future__ import annotations

import random
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from branch_programs import branch_program, jump_chain
from gnu_binutils import gas

from isasim.core.errors import AssemblyError, IsasimError
from isasim.x86_amx.assembler import assemble

needs_gnu_as = pytest.mark.needs_binutils("nm", "objcopy")  # tests/conftest.py

_GAS_COMPLAINT = re.compile(r"^[^:]*\.s:(\d+): (Error|Warning): (.*)$")
_LINE_LABEL = "__isasim_line_{}"


# ---- GNU as in batches --------------------------------------------------------------------------------------
def _run_gas(source: str, tmp: Path) -> tuple[int, str]:
    src, obj = tmp / "batch.s", tmp / "batch.o"
    src.write_text(source)
    done = subprocess.run(["as", "--64", "-o", str(obj), str(src)], capture_output=True, text=True)
    return done.returncode, done.stderr


def _image_and_symbols(tmp: Path) -> tuple[bytes, dict[str, int]]:
    obj, binary = tmp / "batch.o", tmp / "batch.bin"
    subprocess.run(["objcopy", "-O", "binary", "-j", ".text", str(obj), str(binary)], check=True)
    names = subprocess.run(["nm", str(obj)], capture_output=True, text=True, check=True).stdout
    symbols = {}
    for row in names.splitlines():
        parts = row.split()
        if len(parts) == 3:
            symbols[parts[2]] = int(parts[0], 16)
    return binary.read_bytes(), symbols


def gas_batch(lines: list[str]) -> list[bytes | str]:
    """Each line's bytes as GNU as assembles it, or why GNU as refused it (an error, a warning, a crash)."""
    results: list[bytes | str | None] = [None] * len(lines)
    pending = list(range(len(lines)))
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        groups = [pending]
        while groups:
            group = groups.pop()
            if not group:
                continue
            # line k of the file (1-based) is .intel_syntax, then one case per line
            source = ".intel_syntax noprefix\n" + "".join(
                f"{_LINE_LABEL.format(i)}: {lines[i]}\n" for i in group) + f"{_LINE_LABEL.format('end')}:\n"
            code, stderr = _run_gas(source, tmp)
            complaints = {}
            for row in stderr.splitlines():
                m = _GAS_COMPLAINT.match(row)
                if m and 2 <= int(m.group(1)) < 2 + len(group):
                    complaints.setdefault(group[int(m.group(1)) - 2], f"{m.group(2)}: {m.group(3)}")
            if complaints:
                for i, why in complaints.items():
                    results[i] = why
                groups.append([i for i in group if i not in complaints])
                continue
            if code != 0:  # a crash ("Please report this bug") names no line: halve until it does
                if len(group) == 1:
                    results[group[0]] = f"GNU as failed: {stderr.strip()[-200:]}"
                else:
                    groups += [group[: len(group) // 2], group[len(group) // 2:]]
                continue
            image, symbols = _image_and_symbols(tmp)
            starts = [symbols[_LINE_LABEL.format(i)] for i in group] + [symbols[_LINE_LABEL.format("end")]]
            for k, i in enumerate(group):
                results[i] = image[starts[k]:starts[k + 1]]
    return results


def isasim_bytes(line: str) -> bytes | str:
    try:
        return assemble(line).code
    except IsasimError as error:
        return f"{type(error).__name__}: {error}"


def compare(lines: list[str]) -> dict[str, list]:
    """Classify every line by what GNU as and isasim made of it."""
    verdicts = {"same bytes": [], "different bytes": [], "gas refuses, isasim accepts": [],
                "both refuse": [], "gas accepts, isasim refuses": []}
    for line, theirs in zip(lines, gas_batch(lines)):
        ours = isasim_bytes(line)  # anything but an IsasimError propagates and fails the test
        if isinstance(theirs, bytes) and isinstance(ours, bytes):
            verdicts["same bytes" if theirs == ours else "different bytes"].append((line, theirs.hex(), ours.hex()))
        elif isinstance(theirs, bytes):
            verdicts["gas accepts, isasim refuses"].append((line, theirs.hex(), ours))
        elif isinstance(ours, bytes):
            verdicts["gas refuses, isasim accepts"].append((line, theirs, ours.hex()))
        else:
            verdicts["both refuse"].append((line, theirs, ours))
    return verdicts


def _report(verdicts: dict[str, list]) -> str:
    counts = ", ".join(f"{k}: {len(v)}" for k, v in verdicts.items())
    examples = [f"  {k}: {v[:3]}" for k, v in verdicts.items() if v and k not in ("same bytes", "both refuse")]
    return counts + ("\n" + "\n".join(examples) if examples else "")


# ---- issue 9, item 1: expressions ----------------------------------------------------------------------------
ISSUE_EXPRESSIONS = [
    "mov rax, 0x7fffffffffffffff / 1",  # was movabs rax,0x8000000000000000 (division in floating point)
    "mov rax, 0x123456789abcdef1 % 0x100",  # was 0xfffffffffffffff1
    "mov rax, 0x8000000000000000 / 2",  # signed: 0xc000000000000000
    "mov rax, -7 / 2", "mov rax, -7 % 2", "mov rax, 7 % -2",
    "mov rax, -8 >> 1",  # GNU as shifts right logically
    "mov rax, 1 + 2 << 3", "mov rax, 1 | 2 + 3", "mov rax, 2 << 1 * 3", "mov rax, 1 ^ 3 & 2",  # GNU as's ranks
    "mov rax, 1 < 2", "mov rax, 2 > 1", "mov rax, 1 <> 2", "mov rax, 1 && 2", "mov rax, 0 || 2", "mov rax, !5",
    "mov rax, 5 ! 1", "mov rax, 5 mod 3", "mov rax, 5 shl 2", "mov rax, 5 SHR 1", "mov rax, not 0",
    "mov rax, 5 eq 5", "mov rax, 5 le 4", "mov rax, 0xffffffffffffffff + 1", "mov rax, 0xffffffffffffffff",
    "lea rax, [rax + (1 - 2) * 4]",
    "mov rax, 1 < < 3", "mov rax, 5 ! !1", "mov rax, 1 !! 3", "mov rax, !!3",  # GNU as's scrubber joins them
    "mov rax, 'a", "mov rax, 'a' + 1", "mov rax, '\\n", "mov rax, '\\0", "mov rax, '#", "mov rax, ',",
    "mov rax, ' ", "mov al, ';",  # character constants; a quoted # ; , or blank is the character
    ".byte 0xb8, 'P', 0, 0, 0", ".byte 0xb8, ('P'), 0, 0, 0", "mov rax, ('#') + ';'",
    ".byte 0xb8, -129, -255, 0, 0",  # GNU as's .byte takes -255..255
]


@needs_gnu_as
def test_issue_expressions_assemble_as_gnu_as_does():
    expected = gas(ISSUE_EXPRESSIONS)
    for line, (theirs, _text) in zip(ISSUE_EXPRESSIONS, expected):
        assert assemble(line).code == theirs, line


# GNU as refuses (error), warns and assembles a made-up value, or crashes on each of these.
GAS_REFUSES = [
    "mov rax, 1 << -1", "mov rax, 1 << 64", "mov rax, 1 >> 64", "mov rax, 1 / 0", "mov rax, 1 % 0",
    "mov rax, 0x10000000000000000", "mov rax, 18446744073709551616", "mov rax, 0x10000000000000000 - 1",
    "mov rax, 1 +", "mov rax, ()", "mov rax, 1 == 1", "mov rax, 1 <= 2", "mov rax, 08", "mov rax, 10h",
    "mov rax, -0x8000000000000000 / -1", "mov rax, -0x8000000000000000 % -1",  # GNU as 2.40 dies of SIGFPE
    "mov rax, 1 2",
]


@pytest.mark.parametrize("line", GAS_REFUSES)
def test_what_gnu_as_refuses_is_a_typed_error(line):
    with pytest.raises(AssemblyError):
        assemble(line)


@needs_gnu_as
def test_gnu_as_refuses_those_lines_too():
    verdicts = gas_batch(GAS_REFUSES)
    assert all(isinstance(v, str) for v in verdicts), list(zip(GAS_REFUSES, verdicts))


# ---- the crashes (exit 70 before): one typed line each ---------------------------------------------------------
CRASHES = {
    "negative shift": "mov rax, 1 << -1",
    "300 nested parentheses": "mov rax, " + "(" * 300 + "1" + ")" * 300 + " << 64",
    "3000 leading minus": "mov rax, " + "-" * 3000 + "(1 << 70)",
    "3000 leading tilde": "mov rax, " + "~" * 3000 + "1 / 0",
    "5000-digit number": "mov rax, " + "7" * 5000,
    "5000-digit hex number": "mov rax, 0x" + "f" * 5000,
    "50 factors of 1<<128 then /3": "mov rax, " + "*".join(["(1<<128)"] * 50) + "/3",
    "5000-digit displacement": "mov rax, [rbx + " + "9" * 5000 + "]",
}


@pytest.mark.parametrize("name", CRASHES)
def test_crashing_inputs_give_one_typed_line(name):
    with pytest.raises(AssemblyError) as caught:
        assemble(CRASHES[name])
    assert "\n" not in str(caught.value) and len(str(caught.value)) < 300


def test_deep_expressions_still_evaluate():
    assert assemble("mov rax, " + "(" * 5000 + "7" + ")" * 5000).code == assemble("mov rax, 7").code
    assert assemble("mov rax, " + "-" * 3001 + "1").code == assemble("mov rax, -1").code
    assert assemble("mov rax, " + "~" * 3000 + "5").code == assemble("mov rax, 5").code


def test_crashing_inputs_exit_2_with_one_line_from_the_cli(tmp_path, capsys):
    from isasim.cli import main
    program = tmp_path / "bad.s"
    program.write_text("mov rax, 1 << -1\n")
    assert main(["run", str(program)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "shift count" in err and "internal error" not in err


# ---- issue 9, item 2: branch relaxation to a fixed point ------------------------------------------------------
def test_hundred_jump_chain_relaxes_to_all_long():
    program = assemble(jump_chain())
    jumps = [ins for ins in program.instructions if ins.text.startswith("jmp")]
    assert len(jumps) == 100
    assert [len(ins.encoding) for ins in jumps] == [5] * 100  # 37 stayed short before
    for i, ins in enumerate(jumps):  # and none points at a stale address (about 64 did)
        assert ins.operands[0].address == program.labels[f"after{i + 1}"], i


@needs_gnu_as
def test_hundred_jump_chain_matches_gnu_as():
    text = jump_chain()
    assert gas_program_images([text]) == [assemble(text).code]


def test_relaxation_that_does_not_settle_is_refused(monkeypatch):
    """Had the fixed point not been reached, the assembler must raise, never emit the stale bytes (it did)."""
    from isasim.x86_amx import assembler
    monkeypatch.setattr(assembler.Assembler, "relaxation_rounds", 64)
    assert len(assemble(jump_chain(60)).code) > 0  # 60 jumps settle within 64 rounds
    with pytest.raises(AssemblyError, match="did not reach a fixed point in 64 rounds"):
        assemble(jump_chain())  # 100 need 101, as the old fixed 64 passes did not see


def test_a_branch_whose_size_differs_from_its_layout_is_refused(monkeypatch):
    from isasim.x86_amx import assembler
    original = assembler.Assembler._relax

    def forget_growth(self, statements):  # a layout bug: a branch that grew keeps its short size
        labels = original(self, statements)
        for st in statements:
            if st.branch:
                st.size = 2
        return labels

    monkeypatch.setattr(assembler.Assembler, "_relax", forget_growth)
    with pytest.raises(AssemblyError, match="the layout planned 2"):
        assemble(jump_chain(3))


# ---- issue 9, item 3: undefined labels -----------------------------------------------------------------------
@pytest.mark.parametrize("text", ["jmp nowhere", "jne nowhere\nnop", "here: jmp here2\nhere1: nop"])
def test_undefined_label_is_an_error(text):
    with pytest.raises(AssemblyError, match="undefined label"):
        assemble(text)


def test_forward_and_backward_labels_still_resolve():
    program = assemble("top: nop\njmp down\njz top\ndown: ret")
    assert program.code == bytes.fromhex("90 eb 02 74 fb c3".replace(" ", ""))


# ---- issue 9, item 5: exactly GNU as's syntax ----------------------------------------------------------------
LENIENT = ["mov rax, 1\u0663", "mov rax, \u0661\u0662", "mov rax, \uff11", "mov rax, 1\uff12", "mov rax, []",
           "mov rax, [ ]", "mov rax, QWORD PTR []", "lea rax, [rbx + \u0663]", "mov rax,\u00a01",
           "mov rax, 0x\u0663"]


@pytest.mark.parametrize("line", LENIENT)
def test_unicode_digits_and_empty_brackets_are_refused(line):
    with pytest.raises(AssemblyError):
        assemble(line)


@needs_gnu_as
@pytest.mark.parametrize("line", ["mov rax, 1\u0663", "mov rax, \uff11", "mov rax, []", "mov rax, [ ]"])
def test_gnu_as_gives_no_such_bytes_either(line):
    """GNU as errors on these, or (for a name made of non-ASCII bytes) needs a symbol from a linker."""
    verdict = gas_batch([line])[0]
    if isinstance(verdict, bytes):  # an undefined symbol: GNU as leaves a relocation, there is no value
        assert line.endswith("\uff11")
    else:
        assert verdict


# ---- issue 9, item 11: control bytes in messages -------------------------------------------------------------
@pytest.mark.parametrize("text, shown", [("nop\0", "'nop\\x00'"), ("nop\x1b[2J", "'nop\\x1b[2j'"),
                                         ("mov rax, 1\x07", "\\x07")])
def test_control_bytes_are_escaped_in_errors(text, shown):
    with pytest.raises(AssemblyError) as caught:
        assemble(text)
    message = str(caught.value)
    assert shown in message
    assert all(ch.isprintable() for ch in message)


# ---- differential fuzzer 1: expressions ----------------------------------------------------------------------
_BINARY_OPERATORS = ["+", "-", "*", "/", "%", "<<", ">>", "&", "|", "^", "!", "<", ">", "<>", "&&", "||",
                     "mod", "shl", "shr", "and", "or", "xor", "eq", "ne", "lt", "le", "gt", "ge", "AND", "Shl"]
_UNARY_OPERATORS = ["-", "~", "!", "+", "not "]
_EDGE_VALUES = [0, 1, 2, 3, 7, 8, 63, 64, 65, 127, 128, 255, 256, 0x7fff, 0x8000, 0xffff, 0x7fffffff, 0x80000000,
                0xffffffff, 0x100000000, 0x7fffffffffffffff, 0x8000000000000000, 0xffffffffffffffff]


_CHARACTERS = [chr(c) for c in range(0x21, 0x7f) if chr(c) not in "'\\"] + ["\\n", "\\t", "\\b", "\\q", "\\'", "\\\\"]


def _number(rng: random.Random) -> str:
    if rng.random() < 0.04:  # a character constant, with or without its closing quote
        return "'" + rng.choice(_CHARACTERS) + rng.choice(["", "'"])
    roll = rng.random()
    if roll < 0.45:
        value = rng.randrange(0, 70)
    elif roll < 0.75:
        value = rng.choice(_EDGE_VALUES)
    elif roll < 0.9:
        value = rng.getrandbits(rng.choice([8, 16, 31, 32, 63, 64]))
    else:
        value = rng.getrandbits(64) | (1 << 63)
    style = rng.random()
    if style < 0.5:
        return hex(value) if rng.random() < 0.8 else hex(value).upper().replace("0X", "0x")
    if style < 0.8:
        return str(value)
    if style < 0.9:
        return "0" + format(value, "o") if value else "0"
    return "0b" + format(value, "b")


def _expression(rng: random.Random, depth: int) -> str:
    """A flat chain of terms and binary operators (so precedence decides), terms sometimes parenthesised."""
    terms = [_term(rng, depth) for _ in range(rng.choice([1, 2, 2, 3, 3, 4]))]
    text = terms[0]
    for term in terms[1:]:
        operator = rng.choice(_BINARY_OPERATORS)
        space = " " if operator[0].isalpha() or rng.random() < 0.5 else ""
        text += f"{space}{operator}{space}{term}"
    return text


def _term(rng: random.Random, depth: int) -> str:
    prefix = "".join(rng.choice(_UNARY_OPERATORS) for _ in range(rng.choice([0, 0, 0, 1, 2])))
    if depth > 0 and rng.random() < 0.35:
        return f"{prefix}({_expression(rng, depth - 1)})"
    return prefix + _number(rng)


_CONTEXTS = [
    "mov rax, {}", "mov rcx, {}", "add rax, {}", "sub rdx, {}", "cmp rbx, {}", "test rsi, {}", "imul rax, rbx, {}",
    "mov eax, {}", "add ecx, {}", "mov r9d, {}", "test rdi, {}", "xor r10, {}", "xor eax, {}", "cmp r11d, {}",
    "mov QWORD PTR [rax], {}", "add DWORD PTR [rbx+8], {}",
    "lea rax, [rbx + ({})]", "lea rax, [rbx + rcx*4 + ({})]", "mov rax, QWORD PTR [rbp + ({})]",
    "mov rdx, QWORD PTR [rsp - ({})]", "lea rax, [({}) + rbx]", "lea rax, [rbx + {}]",
    "mov rax, QWORD PTR [({}) + rbx*8]", "lea r8, [r9 + r10*2 + {}]",
    "tileloadd tmm1, [rsi + rdx*1 + ({})]", "tilestored [rdi + rcx*1 + {}], tmm3", "ldtilecfg [rax + ({})]",
    ".byte 0xb8, {}, 0, 0, 0", ".byte 0xb8, 1, 2, 3, {}",  # mov eax, imm32: any byte decodes
    ".set c{n}, {} ; mov rax, c{n} * 3 - c{n}",  # a constant (one name per line: GNU as sees one file)
]


def expression_lines(seed: int, count: int) -> list[str]:
    rng = random.Random(seed)
    lines = []
    for _ in range(count):
        context = rng.choice(_CONTEXTS)
        expression = _expression(rng, 2)
        if "[" in context and "({})" not in context:
            # a bare expression beside a register: only operators that rank above + split cleanly
            expression = expression if not re.search(r"<|>|&&|\|\||\b(eq|ne|lt|le|gt|ge)\b", expression) \
                else f"({expression})"
        lines.append(context.replace("{n}", str(len(lines))).format(expression))
    return lines


# isasim refuses some lines GNU as takes: a negative immediate below -2**(n-1) for an n-bit operation
# (GNU as takes -2**n..2**n-1 there, isasim's encoder -2**(n-1)..2**n-1).  That is strictness, never a wrong
# byte; every other kind of refusal must not happen.
def _known_strictness(line: str, ours: str) -> bool:
    return "does not fit in 32 bits" in ours and re.match(r"(mov|add|sub|cmp|and|or|xor|test) (e|r\d+d|DWORD)", line)


@needs_gnu_as
def test_expressions_differential_against_gnu_as():
    lines = expression_lines(seed=9, count=3000)
    verdicts = compare(lines)
    print(f"\nexpression fuzzer, {len(lines)} lines: {_report(verdicts)}")
    assert not verdicts["different bytes"], _report(verdicts)
    assert not verdicts["gas refuses, isasim accepts"], _report(verdicts)
    unexplained = [v for v in verdicts["gas accepts, isasim refuses"] if not _known_strictness(v[0], v[2])]
    assert not unexplained, unexplained[:5]
    assert len(verdicts["same bytes"]) > len(lines) // 3  # the generator must mostly make valid lines


# ---- differential fuzzer 2: branch sizing --------------------------------------------------------------------
def gas_program_images(programs: list[str]) -> list[bytes]:
    """GNU as's image of each program, all assembled in one call (jumps are relative, so position is moot)."""
    source = ".intel_syntax noprefix\n"
    for k, text in enumerate(programs):
        source += f"__isasim_program_{k}:\n{text}\n"
    source += "__isasim_program_end:\n"
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        code, stderr = _run_gas(source, tmp)
        assert code == 0 and not stderr.strip(), stderr[:2000]
        image, symbols = _image_and_symbols(tmp)
    starts = [symbols[f"__isasim_program_{k}"] for k in range(len(programs))] + [symbols["__isasim_program_end"]]
    return [image[starts[k]:starts[k + 1]] for k in range(len(programs))]


@needs_gnu_as
def test_branch_sizing_differential_against_gnu_as():
    rng = random.Random(2)
    programs = [branch_program(rng, f"p{k}_") for k in range(250)]
    theirs = gas_program_images(programs)
    mismatches = [k for k, text in enumerate(programs) if assemble(text).code != theirs[k]]
    jumps = sum(text.count("\nj") + text.startswith("j") for text in programs)
    print(f"\nbranch fuzzer: {len(programs)} programs, {jumps} jumps, {len(mismatches)} images differ")
    assert not mismatches, programs[mismatches[0]]


if __name__ == "__main__":  # a longer run by hand: PYTHONPATH=tests python tests/x86_amx/test_assembler_vs_gnu_as.py SEED COUNT
    seed, count = (int(sys.argv[1]), int(sys.argv[2])) if len(sys.argv) > 2 else (1, 20000)
    print(_report(compare(expression_lines(seed, count))))

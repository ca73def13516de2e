"""Intel-syntax assembler: the dialect GNU as accepts after ``.intel_syntax noprefix``.

Statements are separated by newlines or ``;``; ``#`` starts a comment.  A
statement is any number of ``label:`` prefixes followed by an instruction or a
directive.  Supported directives: ``.intel_syntax noprefix``, ``.text``,
``.globl``/``.global``, ``.type``, ``.size``, ``.p2align 0``, ``.set``/``.equ``
(integer constants usable in operands), and ``.byte`` (raw bytes, e.g. an
encoding GNU as refuses to produce).  Integers are written as GNU as reads them:
``0x1f``, ``0b101``, ``017`` (octal), ``42``, with ``+ - * / % << >> & | ^ ~`` and
parentheses.

Assembly produces bytes, and the program is the decoding of those bytes, so the
simulator runs exactly what the silicon backend would run.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass, field

from ..core.errors import AssemblyError, DecodeError, IsasimError
from ..core.program import Program
from . import amx, scalar
from .decoder import decode_one
from .operands import Imm, Mem, Reg, Target
from .registers import GPR_VIEWS, TILE_REGISTERS

_SIZE_WORDS = {"byte": 1, "word": 2, "dword": 4, "qword": 8, "xmmword": 16, "ymmword": 32, "zmmword": 64}
_IDENT = r"[A-Za-z_.$][A-Za-z0-9_.$]*"
_LABEL_RE = re.compile(rf"^\s*({_IDENT})\s*:(?!:)")
_TOKEN_RE = re.compile(r"\s*(0[xX][0-9A-Fa-f]+|0[bB][01]+|\d+|<<|>>|" + _IDENT + r"|[-+*/%&|^~()])")


@dataclass
class Statement:
    line: int
    labels: list[str]
    mnemonic: str | None = None  # an instruction, or a directive starting with "."
    operand_text: str = ""
    operands: tuple = ()
    encoding: bytes = b""
    long_branch: bool = False
    extra: dict = field(default_factory=dict)


def _split_statements(text: str):
    for number, raw in enumerate(text.splitlines(), start=1):
        code = raw.split("#", 1)[0]
        for piece in code.split(";"):
            if piece.strip():
                yield number, piece


def _split_operands(text: str) -> list[str]:
    """Split on commas that are not inside brackets or parentheses."""
    parts, depth, current = [], 0, ""
    for ch in text:
        if ch in "[(":
            depth += 1
        elif ch in "])":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append(current.strip())
            current = ""
        else:
            current += ch
    if current.strip() or parts:
        parts.append(current.strip())
    return parts


class ExpressionParser:
    """A tiny integer expression evaluator with GNU as's number syntax and precedence."""

    def __init__(self, text: str, symbols: dict[str, int]):
        self.text = text
        self.symbols = symbols
        self.tokens = self._tokenize(text)
        self.pos = 0

    def _tokenize(self, text: str) -> list[str]:
        tokens, pos = [], 0
        while pos < len(text):
            if text[pos].isspace():
                pos += 1
                continue
            m = _TOKEN_RE.match(text, pos)
            if not m:
                raise AssemblyError(f"cannot read '{text[pos:]}' in expression '{text}'")
            tokens.append(m.group(1))
            pos = m.end()
        return tokens

    def parse(self) -> int:
        if not self.tokens:
            raise AssemblyError("missing value")
        value = self._binary(0)
        if self.pos != len(self.tokens):
            raise AssemblyError(f"unexpected '{self.tokens[self.pos]}' in expression '{self.text}'")
        return value

    _LEVELS = [("|",), ("^",), ("&",), ("<<", ">>"), ("+", "-"), ("*", "/", "%")]

    def _binary(self, level: int) -> int:
        if level == len(self._LEVELS):
            return self._unary()
        value = self._binary(level + 1)
        while self.pos < len(self.tokens) and self.tokens[self.pos] in self._LEVELS[level]:
            op = self.tokens[self.pos]
            self.pos += 1
            rhs = self._binary(level + 1)
            if op in ("/", "%") and rhs == 0:
                raise AssemblyError(f"division by zero in '{self.text}'")
            value = {
                "|": lambda a, b: a | b, "^": lambda a, b: a ^ b, "&": lambda a, b: a & b,
                "<<": lambda a, b: a << min(b, 128), ">>": lambda a, b: a >> min(b, 128),
                "+": lambda a, b: a + b, "-": lambda a, b: a - b, "*": lambda a, b: a * b,
                "/": lambda a, b: int(a / b), "%": lambda a, b: a - b * int(a / b),
            }[op](value, rhs)
        return value

    def _unary(self) -> int:
        if self.pos >= len(self.tokens):
            raise AssemblyError(f"expression '{self.text}' ends too early")
        token = self.tokens[self.pos]
        self.pos += 1
        if token == "-":
            return -self._unary()
        if token == "+":
            return self._unary()
        if token == "~":
            return ~self._unary()
        if token == "(":
            value = self._binary(0)
            if self.pos >= len(self.tokens) or self.tokens[self.pos] != ")":
                raise AssemblyError(f"missing ')' in '{self.text}'")
            self.pos += 1
            return value
        if token[0].isdigit():
            low = token.lower()
            if low.startswith("0x"):
                return int(low, 16)
            if low.startswith("0b"):
                return int(low[2:], 2)
            if len(token) > 1 and token[0] == "0":
                if not re.fullmatch(r"[0-7]+", token):
                    raise AssemblyError(f"'{token}' is not a valid octal number")
                return int(token, 8)
            return int(token)
        if token in self.symbols:
            return self.symbols[token]
        raise AssemblyError(f"unknown symbol '{token}'")


class Assembler:
    def __init__(self, text: str, source: str, base: int):
        self.text = text
        self.source = source
        self.base = base
        self.constants: dict[str, int] = {}
        self.labels: dict[str, int] = {}

    # ---- operand parsing ------------------------------------------------------
    def value(self, text: str) -> int:
        return ExpressionParser(text, self.constants).parse()

    def parse_memory(self, text: str, size: int | None) -> Mem:
        inner = text.strip()
        outside = ""
        m = re.fullmatch(r"(.*?)\[(.*)\](.*)", inner)
        if not m:
            raise AssemblyError(f"bad memory operand '{text}'")
        outside = (m.group(1) + m.group(3)).strip()
        body = m.group(2)
        base = index = None
        scale = 1
        disp_terms = []
        for sign, term in re.findall(r"([+-]?)\s*([^+-]+)", body.replace(" ", "")):
            term = term.strip().lower()
            if not term:
                continue
            reg_scale = re.fullmatch(r"([a-z0-9]+)\*(\w+)|(\w+)\*([a-z0-9]+)", term)
            if term in GPR_VIEWS or term in ("riz", "rip"):
                if sign == "-":
                    raise AssemblyError(f"a register cannot be subtracted in '{text}'")
                if base is None and term != "riz":
                    base = term
                elif index is None:
                    index = term
                else:
                    raise AssemblyError(f"too many registers in '{text}'")
            elif reg_scale and (reg_scale.group(1) in GPR_VIEWS or reg_scale.group(4) in GPR_VIEWS or
                                reg_scale.group(1) == "riz" or reg_scale.group(4) == "riz"):
                reg, factor = ((reg_scale.group(1), reg_scale.group(2)) if reg_scale.group(1) in GPR_VIEWS or
                               reg_scale.group(1) == "riz" else (reg_scale.group(4), reg_scale.group(3)))
                if index is not None:
                    raise AssemblyError(f"two index registers in '{text}'")
                index, scale = reg, self.value(factor)
            else:
                disp_terms.append(f"{sign}({term})" if sign else f"({term})")
        if outside:
            disp_terms.append(f"+({outside})")
        disp = self.value("".join(disp_terms)) if disp_terms else 0
        for reg in (base, index):
            if reg and reg not in ("riz", "rip") and GPR_VIEWS[reg].bits != 64:
                raise AssemblyError(f"'{reg}' cannot address memory in 64-bit code; use a 64-bit register")
        if scale not in (1, 2, 4, 8):
            raise AssemblyError(f"scale factor must be 1, 2, 4 or 8 in '{text}'")
        if not -(1 << 63) <= disp < (1 << 64):
            raise AssemblyError(f"displacement of '{text}' does not fit in 64 bits")
        return Mem(base=base, index=index, scale=scale, disp=disp, size=size)

    def parse_operand(self, text: str, mnemonic: str):
        low = text.strip().lower()
        size = None
        m = re.match(r"^(byte|word|dword|qword|xmmword|ymmword|zmmword)\s+ptr\s+(.*)$", low)
        if m:
            size = _SIZE_WORDS[m.group(1)]
            low = m.group(2)
            text = text.strip()[len(text.strip()) - len(low):]
        if "[" in low:
            return self.parse_memory(text, size)
        if low.startswith("ds:"):  # an absolute address, as objdump prints one
            return Mem(disp=self.value(text.strip()[3:]), size=size)
        if size is not None:
            raise AssemblyError(f"'{text}' after PTR must be a memory operand")
        if low in GPR_VIEWS or low in TILE_REGISTERS:
            return Reg(low)
        if re.fullmatch(r"(tmm|xmm|ymm|zmm|k|st|mm|cr|dr)\d+|[cdefgs]s|rip|riz", low):
            raise AssemblyError(f"register '{low}' cannot be used by {mnemonic}")
        if mnemonic.startswith("j") and re.fullmatch(_IDENT, text.strip()) and text.strip() not in self.constants:
            return Target(self.labels.get(text.strip(), -1), text.strip())
        return Imm(self.value(text))

    # ---- statements -------------------------------------------------------------
    def statements(self) -> list[Statement]:
        out = []
        for number, piece in _split_statements(self.text):
            labels = []
            rest = piece
            while True:
                m = _LABEL_RE.match(rest)
                if not m:
                    break
                labels.append(m.group(1))
                rest = rest[m.end():]
            rest = rest.strip()
            statement = Statement(number, labels)
            if rest:
                parts = rest.split(None, 1)
                statement.mnemonic = parts[0].lower()
                statement.operand_text = parts[1] if len(parts) > 1 else ""
            out.append(statement)
        return out

    def directive(self, st: Statement) -> bytes:
        name, args = st.mnemonic, st.operand_text.strip()
        if name == ".intel_syntax":
            if args.lower() not in ("noprefix",):
                raise AssemblyError(".intel_syntax needs 'noprefix' (isasim reads registers without %)")
            return b""
        if name in (".att_syntax",):
            raise AssemblyError("AT&T syntax is not supported; write Intel syntax (.intel_syntax noprefix)")
        if name in (".text", ".globl", ".global", ".type", ".size", ".section", ".file", ".ident"):
            if name == ".section" and not args.startswith(".text"):
                raise AssemblyError(f".section {args}: only .text is supported (programs have no data sections)")
            return b""
        if name in (".p2align", ".align", ".balign"):
            no_padding = 0 if name == ".p2align" else 1  # .p2align 0 and .balign 1 ask for nothing
            if not args or self.value(_split_operands(args)[0]) != no_padding:
                raise AssemblyError(f"{name} {args}: alignment padding is not supported (it would insert bytes)")
            return b""
        if name in (".set", ".equ"):
            parts = _split_operands(args)
            if len(parts) != 2 or not re.fullmatch(_IDENT, parts[0]):
                raise AssemblyError(f"{name} needs 'name, value'")
            self.constants[parts[0]] = self.value(parts[1])
            return b""
        if name == ".byte":
            values = [self.value(v) for v in _split_operands(args)]
            for v in values:
                if not -128 <= v <= 255:
                    raise AssemblyError(f".byte value {v} does not fit in a byte")
            return bytes(v & 0xFF for v in values)
        raise AssemblyError(f"unknown or unsupported directive '{name}'")

    def encode(self, st: Statement, address: int) -> bytes:
        mnemonic = st.mnemonic
        operands = tuple(self.parse_operand(t, mnemonic) for t in _split_operands(st.operand_text))
        form = amx.BY_MNEMONIC.get(mnemonic)
        if form is not None:
            amx.check_operands(form, operands)
            return form.encode(operands)
        if mnemonic in scalar.MNEMONICS:
            targets = [o for o in operands if isinstance(o, Target)]
            for t in targets:
                if t.label not in self.labels:
                    raise AssemblyError(f"undefined label '{t.label}'")
            _form, _ops, code = scalar.encode(mnemonic, operands, address, long_branch=st.long_branch)
            return code
        raise AssemblyError(f"unknown mnemonic '{mnemonic}'")

    def assemble(self) -> Program:
        statements = self.statements()
        # Lay out, then re-lay out while a branch grows from rel8 to rel32.  A
        # branch that has grown stays long, so this always ends.
        for _attempt in range(64):
            address = self.base
            new_labels: dict[str, int] = {}
            changed = False
            self.constants = {}
            for st in statements:
                for label in st.labels:
                    if label in new_labels:
                        raise AssemblyError(f"label '{label}' is defined twice").located(self.source, st.line)
                    new_labels[label] = address
                if st.mnemonic is None:
                    continue
                try:
                    if st.mnemonic.startswith("."):
                        code = self.directive(st)
                    else:
                        # first layout: labels not seen yet resolve to this address (short branch)
                        for label in re.findall(_IDENT, st.operand_text) if st.mnemonic.startswith("j") else ():
                            self.labels.setdefault(label, address)
                        code = self.encode(st, address)
                except IsasimError as error:
                    raise error.located(self.source, st.line)
                if st.mnemonic.startswith("j") and len(code) > 2 and not st.long_branch:
                    st.long_branch = changed = True
                st.encoding = code
                st.extra["address"] = address
                address += len(code)
            if new_labels != self.labels:
                changed = True
            self.labels = new_labels
            if not changed:
                break
        return self.decode(statements)

    def decode(self, statements: list[Statement]) -> Program:
        """Decode the assembled bytes: the program is exactly what the bytes say."""
        code = b"".join(st.encoding for st in statements)
        starts = [(st.extra["address"], st.line) for st in statements if st.encoding]
        instructions = []
        pos = 0
        while pos < len(code):
            address = self.base + pos
            # the statement whose bytes this instruction starts in
            line = starts[bisect.bisect_right(starts, (address, float("inf"))) - 1][1]
            try:
                ins = decode_one(code, pos, address)
            except DecodeError as error:
                raise error.located(self.source, line)
            ins.line = line
            instructions.append(ins)
            pos += len(ins.encoding)
        program = Program("x86_amx", self.base, instructions, dict(self.labels), self.source)
        attach_labels(program)
        return program


def attach_labels(program: Program) -> None:
    """Name branch targets by their labels, and re-render the text."""
    names = {}
    for name, address in program.labels.items():
        names.setdefault(address, name)
    for ins in program.instructions:
        if any(isinstance(o, Target) for o in ins.operands):
            ins.operands = tuple(Target(o.address, names.get(o.address)) if isinstance(o, Target) else o
                                 for o in ins.operands)
            if ins.undefined is None:
                ins.text = ins.form.format(ins.operands)


def assemble(text: str, source: str = "<input>", base: int = 0x1000) -> Program:
    return Assembler(text, source, base).assemble()

"""The scalar subset's encodings: GNU as's choice of bytes for a text, and iced's reading of bytes.

    encode(mnemonic, operands, address, *, long_branch=False) -> (form, operands, bytes)
        mnemonic: lower-case text as written; operands: tuple of Reg/Imm/Mem/Target
        (isasim.x86_amx.operands).  Returns the ScalarForm, the canonical operands
        (as the disassembler would produce them, e.g. Imm with its field width) and
        the encoding GNU as produces for that text.  Branches: rel8 when the target is
        in range and long_branch is False, else rel32.  Raises AssemblyError
        (one line, no location) for operands the instruction does not take.

    decode(code, pos, address) -> Instruction | None
        decode one instruction of the subset at code[pos:], placed at ``address``;
        None if the bytes are not an instruction of the subset.

Encodings are not written here: each form owns the iced-x86 ``Code`` values (the
rows of the SDM opcode table, e.g. ``o64 83 /0 ib  ADD r/m64, imm8``) found by
asking iced's ``OpCodeInfo`` for every 64-bit legacy Code with the form's
mnemonic (forms/scalar.py).  ``encode`` tries every row the operands fit, encodes each with
``iced_x86.Encoder(64)`` and keeps what GNU as 2.40 keeps: the shortest; on a tie,
a row without a fixed accumulator operand (``add ax,1`` is ``66 83 c0 01``, not
``66 05 01 00``), then the lower Code, which puts ``op r/m, reg`` (01, 89, ...)
before ``op reg, r/m`` (03, 8B, ...).  Two further GNU as habits are copied:
``test reg, mem`` is encoded (and printed by objdump) as ``test mem, reg``, and
``imul reg, imm`` is ``imul reg, reg, imm``.

Canonical operands: registers by name; memory with its size (LEA's without) and a
signed displacement; immediates as the instruction sees them, i.e. sign-extended
to the operand width and reduced modulo 2^width, with ``bits`` = the operand
width, so ``str(Imm)`` is what objdump prints (``add rax,0xffffffffffffffff`` for
``48 83 c0 ff``); branch targets as ``Target``.
"""

from __future__ import annotations

import iced_x86

from ...core.errors import AssemblyError
from ...core.program import Instruction
from ..instructions import make_instruction
from ..forms.scalar import CANDIDATES, CODE_FORMS, REPEAT_WORDS, ROWS, STRING_SPELLINGS, Row, ScalarForm
from ..operands import GPR64, GPR_VIEWS, Imm, Mem, Reg, Target, operand_text, signed, width
from .iced import (ACC_KINDS, BRANCH_KINDS, FIXED_REG_KINDS, IMM_FIELD_BITS, IMM_KINDS, IMPLIED_ONE, MASK64,
                   NAME_OF_REGISTER, OK, REG_KINDS, REGISTER_OF, RM_KINDS, SEXT_IMM_KINDS, STRING_KINDS, check_memory,
                   encode_with, fail, iced_memory, rip_relative)


# ---------------------------------------------------------------------------
# Encoding (GNU as's choices, iced's encoder)
# ---------------------------------------------------------------------------


def _check_register(mnemonic: str, reg: Reg) -> Reg:
    name = reg.name.lower()
    if name not in GPR_VIEWS:
        raise fail(mnemonic, f"'{reg.name}' is not a general-purpose register")
    return Reg(name)


def _imm_fits(value: int, bits: int, kind: int) -> bool:
    """Does an immediate (already reduced to the operand width) fit this row's field?"""
    if kind == IMPLIED_ONE:
        return value == 1
    if kind in IMM_KINDS:
        field = IMM_FIELD_BITS[kind]
        # as wide as the operand: already range-checked; narrower (a shift's imm8): -128..255
        return field >= bits or -(1 << (field - 1)) <= value < (1 << field)
    field_bits = SEXT_IMM_KINDS[kind]
    s = signed(value, bits)
    return -(1 << (field_bits - 1)) <= s < (1 << (field_bits - 1))


def _matches(row: Row, operands: tuple) -> bool:
    if len(row.kinds) != len(operands):
        return False
    for kind, op in zip(row.kinds, operands):
        if kind in RM_KINDS:
            ok = (isinstance(op, Reg) and width(op) == RM_KINDS[kind]) or (
                isinstance(op, Mem) and op.size * 8 == RM_KINDS[kind])
        elif kind in REG_KINDS:
            ok = isinstance(op, Reg) and width(op) == REG_KINDS[kind]
        elif kind in ACC_KINDS:
            ok = isinstance(op, Reg) and op.name == ACC_KINDS[kind]
        elif kind in FIXED_REG_KINDS:
            ok = isinstance(op, Reg) and op.name == FIXED_REG_KINDS[kind]
        elif kind in IMM_KINDS or kind in SEXT_IMM_KINDS or kind == IMPLIED_ONE:
            ok = isinstance(op, Imm) and _imm_fits(op.value, row.bits, kind)
        elif kind == OK.MEM:
            ok = isinstance(op, Mem)
        else:
            ok = False
        if not ok:
            return False
    return True


def _iced_instruction(row: Row, operands: tuple) -> "iced_x86.Instruction":
    I = iced_x86.Instruction
    shape = "".join("r" if isinstance(o, Reg) else "m" if isinstance(o, Mem) else "i" for o in operands)
    args = []
    for op in operands:
        if isinstance(op, Reg):
            args.append(REGISTER_OF[op.name])
        elif isinstance(op, Mem):
            args.append(iced_memory(op))
        else:
            args.append(signed(op.value, row.bits))
    if shape == "ri" and row.bits == 64 and OK.IMM64 in row.kinds:
        return I.create_reg_i64(row.code, *args)
    factory = {
        "": I.create, "r": I.create_reg, "m": I.create_mem, "i": I.create_i32,
        "rr": I.create_reg_reg, "rm": I.create_reg_mem, "mr": I.create_mem_reg,
        "ri": I.create_reg_i32, "mi": I.create_mem_i32,
        "rri": I.create_reg_reg_i32, "rmi": I.create_reg_mem_i32,
        "rrr": I.create_reg_reg_reg, "mrr": I.create_mem_reg_reg, "mri": I.create_mem_reg_i32,  # SHLD/SHRD
        "rrm": I.create_reg_reg_mem, "rmr": I.create_reg_mem_reg,  # BMI's VEX forms
    }[shape]
    return factory(row.code, *args)


def _canonical(row: Row, form: ScalarForm, operands: tuple, disp_size: int) -> tuple:
    out = []
    for kind, bits, op in zip(row.kinds, row.operand_bits, operands):
        if isinstance(op, Imm):
            out.append(Imm(op.value % (1 << bits), bits, implied=kind == IMPLIED_ONE))
        elif isinstance(op, Mem):
            if form.mnemonic == "lea":
                out.append(Mem(op.base, op.index, op.scale, op.disp, None, show_size=False, disp_size=disp_size))
            else:
                out.append(Mem(op.base, op.index, op.scale, op.disp, bits // 8, disp_size=disp_size))
        else:
            out.append(op)
    return tuple(out)


def _describe(operands: tuple) -> str:
    return ", ".join(operand_text(o) for o in operands)


def _encode_branch(mnemonic: str, form: ScalarForm, operands: tuple, address: int, long_branch: bool):
    if len(operands) != 1:
        raise fail(mnemonic, f"takes 1 operand (a label or address), got {len(operands)}")
    (op,) = operands
    if isinstance(op, Imm):
        op = Target(op.value & MASK64)
    if not isinstance(op, Target):
        raise fail(mnemonic, f"operand must be a label or an address, not '{operand_text(op)}' "
                              "(indirect jumps are not supported)")
    rows = {BRANCH_KINDS[ROWS[c].kinds[0]]: ROWS[c] for c in form.codes}
    short = rows[1]
    rel8 = op.address - (address + 2)
    row = short if not long_branch and -128 <= rel8 <= 127 else rows[4]
    length = 2 if row is short else (5 if form.mnemonic == "jmp" else 6)
    rel = op.address - (address + length)
    if not -(1 << 31) <= rel < (1 << 31):
        raise fail(mnemonic, f"target {op.address:#x} is out of rel32 range of {address:#x}")
    code, _ = encode_with(iced_x86.Instruction.create_branch(row.code, op.address & MASK64), address)
    return form, (op,), code


def _operation_bits(mnemonic: str, operands: tuple) -> int:
    """The operand size all register and sized memory operands agree on."""
    sized = [o for o in operands if isinstance(o, Reg) or (isinstance(o, Mem) and o.size is not None)]
    sizes = {width(o) for o in sized}
    if len(sizes) > 1:
        raise fail(mnemonic, f"operand sizes differ ({_describe(tuple(sized))})")
    if not sizes:
        raise fail(mnemonic, "operand size not given; write BYTE, WORD, DWORD or QWORD PTR")
    return sizes.pop()


# Prefix words objdump prints before a NOP that carries prefixes it does not need (GNU as's own
# padding, e.g. 66 66 2E 0F 1F 84 00 00 00 00 00 "data16 cs nop WORD PTR [rax+rax*1+0x0]").
NOP_PREFIX_WORDS = {"data16": 0x66, "cs": 0x2E}


# LOCK (F0): GNU as takes it before these with a memory destination; objdump prints "lock".
LOCKABLE = frozenset({"add", "adc", "and", "or", "sbb", "sub", "xor", "not", "neg", "inc", "dec", "xadd", "cmpxchg",
                      "xchg", "bts", "btr", "btc"})
# REP (F3) before STOS MOVS LODS; REPE/REPZ (F3) and REPNE/REPNZ (F2) before SCAS CMPS (forms/scalar.py).
REPEAT_BYTES = {"rep": 0xF3, "repz": 0xF3, "repnz": 0xF2}
PREFIX_WORDS = {**NOP_PREFIX_WORDS, "lock": 0xF0, **{word: REPEAT_BYTES[canonical]
                                                     for word, canonical in REPEAT_WORDS.items()},
                "notrack": 0x3E}  # (CET's, before an indirect call or jmp: encoding/control.py)
# every prefix word the assembler reads before a mnemonic


def split_prefixes(mnemonic: str) -> tuple[tuple[str, ...], str]:
    """("data16", "cs"), "nop" for "data16 cs nop"; (), mnemonic for a mnemonic without prefix words."""
    words = mnemonic.lower().split()
    return tuple(words[:-1]), words[-1] if words else ""


def accepts(mnemonic: str, operands: tuple = ()) -> bool:
    """Whether ``mnemonic`` (possibly with prefix words) is a scalar instruction's.  The one-word string
    spellings take no operands (``movsd``/``cmpsd`` with operands are SSE2's)."""
    prefixes, name = split_prefixes(mnemonic)
    if name in ("movsd", "cmpsd") and operands:
        return False  # SSE2's MOVSD/CMPSD xmm forms; the string ones take no operands
    if name in CANDIDATES and CODE_FORMS[CANDIDATES[name][0]].repeat_prefixes:
        return True  # a string instruction, whatever prefix words: its encoder says which it takes
    return name in CANDIDATES and (not prefixes or name == "nop" or (prefixes == ("lock",) and name in LOCKABLE))


def _encode_prefixed_nop(prefixes: tuple[str, ...], operands: tuple, address: int):
    """NOP r/m behind the prefix words objdump prints.

    GNU as takes ``cs nop WORD PTR [...]`` and writes 2E before the 66 the
    operand size needs; it refuses ``data16`` on a WORD NOP ("same type of prefix
    used twice"), yet its padding is exactly that: every extra 66 first, then the
    operand-size 66, then 2E.  isasim writes those bytes, so objdump's text of GNU
    as's padding assembles back to it.
    """
    if any(p not in NOP_PREFIX_WORDS for p in prefixes) or prefixes.count("cs") > 1 or (
            "cs" in prefixes and prefixes[-1] != "cs"):
        raise fail(" ".join(prefixes + ("nop",)),
                    "only 'data16' (any number) then 'cs' may come before nop, as objdump prints them")
    if not operands or not isinstance(operands[0], Mem):
        raise fail("nop", "prefix words go only before a NOP with a memory operand")
    form, ops, data = encode("nop", operands, address)
    data16 = prefixes.count("data16")
    cs = b"\x2e" if "cs" in prefixes else b""
    if not data16:
        return form, ops, cs + data  # GNU as: 2E 66 0F 1F ...
    own = data[:1] if data[:1] == b"\x66" else b""
    return form, ops, b"\x66" * data16 + own + cs + data[len(own):]


def encode(mnemonic: str, operands: tuple, address: int, *, long_branch: bool = False):
    """Encode one scalar instruction as GNU as 2.40 does; see the module docstring."""
    mnemonic = mnemonic.lower()
    prefixes, name = split_prefixes(mnemonic)
    if name in CANDIDATES and CODE_FORMS[CANDIDATES[name][0]].repeat_prefixes:
        return _encode_string(prefixes, name, tuple(operands), address)
    if prefixes == ("lock",) and name in LOCKABLE:
        form, ops, data = encode(name, operands, address)
        if not ops or not isinstance(ops[0], Mem):
            raise fail(mnemonic, "lock needs a memory destination")
        own = data[:1] if data[:1] == b"\x66" else b""  # GNU as: the operand-size 66 first, then F0
        return form, ops, own + b"\xf0" + data[len(own):]
    if prefixes:
        if name != "nop":
            raise fail(mnemonic, "prefix words are supported only before nop, and lock before "
                                 + ", ".join(sorted(LOCKABLE)))
        return _encode_prefixed_nop(prefixes, tuple(operands), address)
    if mnemonic not in CANDIDATES:
        raise AssemblyError(f"{mnemonic}: not a scalar instruction isasim knows")
    codes = CANDIDATES[mnemonic]
    form = CODE_FORMS[codes[0]]
    if ROWS[codes[0]].kinds and ROWS[codes[0]].kinds[0] in BRANCH_KINDS:
        return _encode_branch(mnemonic, form, tuple(operands), address, long_branch)

    ops = []
    for op in operands:
        if isinstance(op, Reg):
            ops.append(_check_register(mnemonic, op))
        elif isinstance(op, Mem):
            if op.segment:
                raise fail(mnemonic, f"isasim takes {op.segment}: only in a string instruction's operands "
                                     "(es:[rdi], ds:[rsi]) and fs:/gs: before a memory operand")
            ops.append(check_memory(mnemonic, op))
        elif isinstance(op, Imm):
            ops.append(op)
        elif isinstance(op, Target):
            raise fail(mnemonic, f"a label ({op}) is not an operand of {mnemonic}")
        else:
            raise fail(mnemonic, f"unexpected operand {op!r}")
    ops = tuple(ops)

    counts = sorted({len(ROWS[c].kinds) for c in codes})
    if form.mnemonic == "imul" and len(ops) == 2 and isinstance(ops[1], Imm):
        ops = (ops[0], ops[0], ops[1])  # GNU as: imul r, imm is imul r, r, imm
    if len(ops) not in counts:
        wanted = " or ".join(str(n) for n in counts)
        raise fail(mnemonic, f"takes {wanted} operand(s), got {len(ops)}")
    if sum(isinstance(o, Mem) for o in ops) > 1:
        raise fail(mnemonic, "two memory operands")
    if ops and isinstance(ops[0], Imm) and form.mnemonic != "push":
        raise fail(mnemonic, "the first operand cannot be an immediate")
    if form.mnemonic in ("test", "xchg") and len(ops) == 2 and isinstance(ops[0], Reg) and isinstance(ops[1], Mem):
        ops = (ops[1], ops[0])  # GNU as encodes test/xchg reg, mem as OP r/m, reg
    if form.mnemonic == "xchg" and len(ops) == 2 and all(isinstance(o, Reg) for o in ops):
        if ops[0].name == ops[1].name == "rax":
            raise fail(mnemonic, "GNU as writes xchg rax, rax as 90, which is nop; write nop")
        if (ops[0].name in ACC_KINDS.values() and ops[1].name not in ACC_KINDS.values()
                and width(ops[0]) > 8):
            ops = (ops[1], ops[0])  # GNU as: xchg rax, rcx is 90+r with the other register, as objdump prints it

    if ops:
        if form.mnemonic == "lea":
            if not isinstance(ops[0], Reg) or len(ops) != 2 or not isinstance(ops[1], Mem):
                raise fail(mnemonic, "takes a register and a memory operand (lea reg, [address])")
            bits = width(ops[0])
        elif form.mixed_widths:
            if isinstance(ops[0], Imm) or (isinstance(ops[0], Mem) and ops[0].size is None):
                raise fail(mnemonic, "operand size not given; write BYTE, WORD, DWORD or QWORD PTR")
            if any(isinstance(o, Mem) and o.size is None for o in ops):
                raise fail(mnemonic, "source size not given; write BYTE, WORD or DWORD PTR")
            bits = width(ops[0])
        elif form.mnemonic == "push" and len(ops) == 1 and isinstance(ops[0], Imm):
            bits = 64  # push imm: the 64-bit push of the sign-extended imm8/imm32
        else:
            bits = _operation_bits(mnemonic, ops)
            ops = tuple(Mem(o.base, o.index, o.scale, o.disp, bits // 8) if isinstance(o, Mem) else o for o in ops)
        for op in ops:
            if form.mixed_widths and isinstance(op, Imm):
                if not -0x80 <= op.value <= 0xFF:
                    raise fail(mnemonic, f"shift count {op} does not fit in 8 bits")
            elif isinstance(op, Imm) and not -(1 << (bits - 1)) <= op.value < (1 << bits):
                raise fail(mnemonic, f"immediate {op} does not fit in {bits} bits")

    candidates = []
    errors = []
    for code in codes:
        row = ROWS[code]
        if not _matches(row, ops):
            continue
        if code == iced_x86.Code.XCHG_R32_EAX and ops[0].name == "eax":
            continue  # 90 would be NOP, which does not zero-extend: GNU as writes xchg eax, eax as 87 C0
        try:
            data, disp_size = encode_with(_iced_instruction(row, ops), address)
        except ValueError as exc:
            errors.append(str(exc))
            continue
        candidates.append((len(data), row.has_accumulator, code, data, disp_size))
    if not candidates:
        if errors:
            raise fail(mnemonic, f"cannot encode ({_describe(ops)}): {errors[0]}")
        if any(isinstance(o, Imm) for o in ops) and ops and width(ops[0]) == 64:
            raise fail(mnemonic, "immediate does not fit in 32 signed bits")
        if any(isinstance(o, Imm) for o in ops) and ops and width(ops[0]) == 8 and form.mnemonic == "imul":
            raise fail(mnemonic, "there is no 8-bit form with an immediate")
        rows = sorted({ROWS[c].instruction_string for c in codes})
        raise fail(mnemonic, f"no form takes ({_describe(ops)}); forms: {' | '.join(rows)}")
    _, _, code, data, disp_size = min(candidates)
    row = ROWS[code]
    form = CODE_FORMS[code]
    return form, _canonical(row, form, ops, disp_size), data


def _encode_string(prefixes: tuple[str, ...], name: str, operands: tuple, address: int):
    """A string instruction: ``stosq`` (its one-word spelling, no operands) or objdump's ``stos QWORD PTR
    es:[rdi],rax`` (the fixed operands written out: es: and ds: may be left off), behind an optional repeat
    prefix.  Bytes: GNU as's, the operand-size 66 first, then F3/F2, then REX.W and the opcode."""
    text = " ".join(prefixes + (name,))
    if len(prefixes) > 1 or (prefixes and prefixes[0] not in REPEAT_WORDS):
        raise fail(text, "only one of rep, repe/repz, repne/repnz may come before a string instruction")
    if name in STRING_SPELLINGS:
        form, bits = STRING_SPELLINGS[name]
        if operands:
            raise fail(text, f"takes no operands (or write {form.mnemonic} with its operands, as objdump prints it)")
        rows = [ROWS[c] for c in form.codes if ROWS[c].bits == bits]
    else:
        form = CODE_FORMS[CANDIDATES[name][0]]
        rows = [ROWS[c] for c in form.codes if _string_operands_match(ROWS[c], operands)]
        if not rows:
            example = form.format(_string_operands(ROWS[form.codes[-1]]))
            raise fail(text, f"its operands are fixed: write e.g. '{example}' (or {name}b/w/d/q without operands)")
    (row,) = rows
    prefix = repeat_word(prefixes[0], form) if prefixes else None
    if prefix is None and prefixes:
        allowed = " or ".join(form.repeat_prefixes)
        raise fail(text, f"{prefixes[0]} does not repeat {form.mnemonic}; {allowed} does")
    create = getattr(iced_x86.Instruction, f"create_{row.instruction_string.split()[0].lower()}")
    data, _ = encode_with(create(64), address)
    if prefix is not None:
        own = data[:1] if data[:1] == b"\x66" else b""
        data = own + bytes([REPEAT_BYTES[prefix]]) + data[len(own):]
    return form, _string_operands(row), data


def repeat_word(written: str, form: ScalarForm) -> str | None:
    """The word objdump prints for the repeat prefix written before ``form`` (F3 is "rep" before STOS, MOVS
    and LODS, "repz" before SCAS and CMPS; F2 "repnz"), or None if it does not repeat that form."""
    word = REPEAT_WORDS.get(written)
    if word in ("rep", "repz"):
        word = "repz" if "repz" in form.repeat_prefixes else "rep"
    return word if word in form.repeat_prefixes else None


def prefix_words(mnemonic: str, form) -> tuple[str, ...]:
    """The prefix words objdump prints before ``form`` for those written in ``mnemonic`` (``repe cmpsb`` ->
    ("repz",); NOP's data16/cs and lock as written)."""
    prefixes = split_prefixes(mnemonic)[0]
    if prefixes and getattr(form, "repeat_prefixes", ()):
        return tuple(repeat_word(p, form) or p for p in prefixes)
    return prefixes


def _string_operands(row: Row) -> tuple:
    """The canonical operands of a string row: ES:[RDI], DS:[RSI] and the accumulator, sized by the row."""
    out = []
    for kind in row.kinds:
        if kind in STRING_KINDS:
            base, segment = STRING_KINDS[kind]
            out.append(Mem(base, None, 1, 0, row.bits // 8, segment=segment))
        else:
            out.append(Reg(ACC_KINDS[kind]))
    return tuple(out)


def _string_operands_match(row: Row, operands: tuple) -> bool:
    if len(operands) != len(row.kinds):
        return False
    for kind, op in zip(row.kinds, operands):
        if kind in STRING_KINDS:
            base, segment = STRING_KINDS[kind]
            if not (isinstance(op, Mem) and op.base == base and op.index is None and op.disp == 0
                    and op.segment in (None, segment) and op.size in (None, row.bits // 8)):
                return False
        elif not (isinstance(op, Reg) and op.name == ACC_KINDS[kind]):
            return False
    return any(isinstance(op, Reg) or op.size is not None for op in operands)  # the size is said somewhere


# ---------------------------------------------------------------------------
# Decoding (iced's decoder)
# ---------------------------------------------------------------------------


_IMMEDIATE_OP_KINDS = {
    iced_x86.OpKind.IMMEDIATE8, iced_x86.OpKind.IMMEDIATE16, iced_x86.OpKind.IMMEDIATE32,
    iced_x86.OpKind.IMMEDIATE64, iced_x86.OpKind.IMMEDIATE8TO16, iced_x86.OpKind.IMMEDIATE8TO32,
    iced_x86.OpKind.IMMEDIATE8TO64, iced_x86.OpKind.IMMEDIATE32TO64,
}


def _decode_memory(instr: "iced_x86.Instruction", form: ScalarForm, bits: int) -> Mem | None:
    base = index = None
    if instr.memory_base == iced_x86.Register.RIP:
        return rip_relative(instr, bits if form.mnemonic != "lea" else None)
    if instr.memory_base != iced_x86.Register.NONE:
        base = NAME_OF_REGISTER.get(instr.memory_base)
        if base not in GPR64:
            return None  # rip-relative, or 32-bit addressing (67 prefix)
    if instr.memory_index != iced_x86.Register.NONE:
        index = NAME_OF_REGISTER.get(instr.memory_index)
        if index not in GPR64:
            return None
    if base is None and instr.memory_displ_size != 8:
        return None  # 32-bit addressing
    disp = signed(instr.memory_displacement, 64)
    # the bytes the displacement takes: iced says 8 for a disp32 (64-bit addressing sign-extends it)
    disp_size = 4 if instr.memory_displ_size == 8 else instr.memory_displ_size
    if form.mnemonic == "lea":
        return Mem(base, index, instr.memory_index_scale, disp, None, show_size=False, disp_size=disp_size)
    return Mem(base, index, instr.memory_index_scale, disp, bits // 8, disp_size=disp_size)


def decode(code: bytes, pos: int, address: int) -> Instruction | None:
    """Decode one instruction of the subset at code[pos:], placed at ``address``."""
    window = bytes(code[pos : pos + 15])
    if not window:
        return None
    instr = iced_x86.Decoder(64, window, ip=address & MASK64).decode()
    form = CODE_FORMS.get(instr.code)
    if form is None or instr.is_invalid:
        return None
    prefixes = ()
    if instr.code in _PREFIXABLE_NOPS:
        prefixes = _nop_prefix_words(window, instr)
        if prefixes is None:
            return None
    elif instr.segment_prefix != iced_x86.Register.NONE:
        return None
    if instr.has_lock_prefix:
        if (form.mnemonic not in LOCKABLE or instr.op_count == 0 or instr.op_kind(0) != iced_x86.OpKind.MEMORY
                or window[:2] not in (b"\x66\xf0", b"\xf0" + window[1:2]) or window[1:2] == b"\x66"):
            return None  # #UD on silicon, or a lock isasim's text would not put first
        prefixes = ("lock",)
    if instr.has_rep_prefix or instr.has_repne_prefix:
        word = ("repnz" if instr.has_repne_prefix else "repz" if "repz" in form.repeat_prefixes else "rep")
        if word not in form.repeat_prefixes or prefixes:
            return None  # F3/F2 that repeats nothing (objdump: "repz ret", "repnz stos"): not modelled
        prefixes = (word,)
    row = ROWS[instr.code]
    if instr.code == iced_x86.Code.NOPW:
        return make_instruction(form, (Reg("ax"), Reg("ax")), address, window[: instr.len])
    operands = []
    for i in range(instr.op_count):
        kind = instr.op_kind(i)
        if kind == iced_x86.OpKind.REGISTER:
            name = NAME_OF_REGISTER.get(instr.op_register(i))
            if name is None:
                return None
            operands.append(Reg(name))
        elif kind == iced_x86.OpKind.MEMORY:
            mem = _decode_memory(instr, form, row.operand_bits[i])
            if mem is None:
                return None
            operands.append(mem)
        elif kind in (iced_x86.OpKind.MEMORY_ESRDI, iced_x86.OpKind.MEMORY_SEG_RSI):
            if instr.memory_segment not in (iced_x86.Register.NONE, iced_x86.Register.DS, iced_x86.Register.ES):
                return None
            base, segment = ("rdi", "es") if kind == iced_x86.OpKind.MEMORY_ESRDI else ("rsi", "ds")
            operands.append(Mem(base, None, 1, 0, row.bits // 8, segment=segment))
        elif kind == iced_x86.OpKind.NEAR_BRANCH64:
            operands.append(Target(instr.near_branch64))
        elif kind in _IMMEDIATE_OP_KINDS:
            bits = row.operand_bits[i]
            operands.append(Imm(instr.immediate(i) % (1 << bits), bits, implied=row.kinds[i] == IMPLIED_ONE))
        else:
            return None
    operands = tuple(operands)
    if (form.mnemonic == "xchg" and instr.code != iced_x86.Code.XCHG_RM8_R8 and all(isinstance(o, Reg) for o in operands)
            and sum(o.name in ACC_KINDS.values() for o in operands) == 1 and row.kinds[1] != OK.AX
            and row.kinds[1] not in ACC_KINDS):
        # 87 /r with the accumulator: objdump prints "xchg eax,ecx", whose text GNU as writes as 91,
        # which objdump prints "xchg ecx,eax".  The text cannot name these bytes; leave them undecoded.
        return None
    return make_instruction(form, operands, address, window[: instr.len], prefixes)


_PREFIXABLE_NOPS = {iced_x86.Code.NOP_RM16, iced_x86.Code.NOP_RM32, iced_x86.Code.NOP_RM64}


def _nop_prefix_words(window: bytes, instr: "iced_x86.Instruction") -> tuple[str, ...] | None:
    """The words objdump prints before NOP r/m for its prefixes (``data16`` per unneeded 66, ``cs``), or
    None if a prefix is one isasim does not model (another segment, a second 2E, 67, ...)."""
    if instr.segment_prefix not in (iced_x86.Register.NONE, iced_x86.Register.CS):
        return None
    legacy = []
    for byte in window[: instr.len]:
        if byte in (0x66, 0x2E):
            legacy.append(byte)
        elif 0x40 <= byte <= 0x4F or byte == 0x0F:
            break
        else:
            return None
    if legacy.count(0x2E) > 1:
        return None
    needed = 1 if instr.code == iced_x86.Code.NOP_RM16 else 0
    return ("data16",) * (legacy.count(0x66) - needed) + (("cs",) if 0x2E in legacy else ())

"""Bytes -> instructions: the AMX forms from their SDM declarations, the scalar subset via iced-x86.

An encoding that reaches an AMX opcode but breaks one of the rules the hardware
checks while decoding (VEX.L=1, VEX.W=1, a non-1111 vvvv where no operand lives
there, tmm8-15 through VEX.R/B/vvvv, a register form where memory is required, a
missing SIB, a legacy 66/F2/F3/LOCK/REX prefix before VEX) still decodes: it
becomes an instruction marked ``invalid`` that raises #UD when executed, as
those bytes do on silicon; so does a TMUL naming a tile twice.  Bytes that are
neither are a DecodeError.

What decodes re-assembles: the text isasim prints assembles to the same bytes,
or the instruction is #UD, or it carries an ``extra["noncanonical"]`` note naming
the bytes its text assembles to (one of x86's redundant encodings, which objdump
prints as the same text).  Scalar bytes whose prefixes the text would hide (a REX
or 66/67 that changes nothing isasim models, a REX before another prefix, a SIB
with no index where objdump shows ``riz``) are a DecodeError rather than a text
that names other bytes.  ``listing`` is what ``isasim disasm`` prints: it goes on
past undecodable bytes as objdump does.
"""

from __future__ import annotations

from dataclasses import replace

import iced_x86

from ..core.errors import DecodeError, IsasimError
from ..core.program import Instruction, Program
from .encoding import control as control_encoding, scalar as scalar_encoding, vector as vector_encoding
from .encoding.vex import MAP_NAMES, PP_NAMES, VexFields, decode_modrm
from .forms import amx, amx_extensions
from .instructions import make_instruction
from .operands import Mem, Reg

_UD_PREFIXES = {0x66: "66", 0xF2: "F2", 0xF3: "F3", 0xF0: "LOCK"}


def _undefined(form, operands, address, encoding, reason) -> Instruction:
    return Instruction(form, operands, address, encoding, "(bad)", invalid=reason)


def decode_amx(code: bytes, pos: int, address: int) -> Instruction | None:
    """Decode an AMX instruction at code[pos:], or None if the bytes are not one."""
    start = pos
    prefixes = []
    while pos < len(code) and (code[pos] in _UD_PREFIXES or 0x40 <= code[pos] <= 0x4F):
        prefixes.append(_UD_PREFIXES.get(code[pos], "REX"))
        pos += 1
    if pos + 4 > len(code) or code[pos] != 0xC4:
        return None
    vex = VexFields.parse(code[pos + 1], code[pos + 2])
    opcode = code[pos + 3]
    forms = amx.BY_OPCODE.get((vex.map, opcode, vex.pp)) or amx_extensions.BY_OPCODE.get((vex.map, opcode, vex.pp))
    if forms is None:
        if (vex.map, opcode) in amx.AMX_OPCODE_BYTES:
            # The opcode byte is AMX's, the implied prefix selects no instruction.
            form = amx.BY_OPCODE[next(k for k in amx.BY_OPCODE if k[:2] == (vex.map, opcode))][0]
            modrm = decode_modrm(code, pos + 4, vex.X, vex.B)
            if modrm is None or modrm.length < 0:
                return None
            encoding = code[start : pos + 4 + modrm.length]
            return _undefined(form, (), address, encoding,
                              f"no AMX instruction has opcode {MAP_NAMES.get(vex.map, '?')} {opcode:02X} with prefix {PP_NAMES[vex.pp]}")
        return None
    modrm = decode_modrm(code, pos + 4, vex.X, vex.B, show_size=False)
    if modrm is None:
        raise DecodeError(f"truncated instruction at {address:#x}: {code[start:].hex()}")
    register_form = modrm.mod == 0b11
    candidates = [f for f in forms if f.opcode.modrm.register_form == register_form]
    if modrm.length < 0:  # RIP-relative memory operand (ModRM.mod=00, r/m=101, no SIB)
        encoding = code[start : pos + 4 + 5]
        if len(encoding) < pos - start + 4 + 5:
            raise DecodeError(f"truncated instruction at {address:#x}: {code[start:].hex()}")
        if any(kind == "sibmem" for kind in forms[0].operand_kinds):
            return _undefined(forms[0], (), address, encoding, "the memory operand needs a SIB byte")
        # LDTILECFG/STTILECFG [rip+disp32]: the address is the next instruction's plus disp32
        disp = int.from_bytes(code[pos + 5 : pos + 9], "little", signed=True)
        modrm = replace(modrm, mem=Mem(base="rip", disp=disp, show_size=False, disp_size=4), length=5)
    encoding = code[start : pos + 4 + modrm.length]
    if not candidates:
        form = forms[0]
        need = "a memory operand" if not form.opcode.modrm.register_form else "register operands"
        return _undefined(form, (), address, encoding, f"{form.mnemonic} needs {need} (ModRM.mod={modrm.mod:02b})")
    form = candidates[0]
    operands = []
    problems = []
    if prefixes:
        problems.append(f"a {'/'.join(prefixes)} prefix before VEX is not allowed")
    op = form.opcode
    if vex.L != op.L:
        problems.append(f"VEX.L={vex.L} (must be {op.L})")
    if vex.W != op.W:
        problems.append(f"VEX.W={vex.W} (must be {op.W})")
    if op.modrm.reg is not None and modrm.reg != op.modrm.reg:
        problems.append(f"ModRM.reg={modrm.reg:03b} (must be {op.modrm.reg:03b})")
    if op.modrm.rm is not None and modrm.rm != op.modrm.rm:
        problems.append(f"ModRM.r/m={modrm.rm:03b} (must be {op.modrm.rm:03b})")
    if form.field_of("VEX.vvvv") is None and vex.vvvv != 0:
        problems.append(f"VEX.vvvv={~vex.vvvv & 0xF:04b} (must be 1111)")
    for kind, where in zip(form.operand_kinds, form.operand_fields):
        if kind == "tmm":
            if where == "ModRM:reg":
                number = modrm.reg | (vex.R << 3)
            elif where == "ModRM:r/m":
                number = modrm.rm | (vex.B << 3)
            else:  # VEX.vvvv
                number = vex.vvvv
            if number >= 8:
                problems.append(f"tmm{number} does not exist ({where})")
            operands.append(Reg(f"tmm{number}"))
        else:
            if kind == "sibmem" and not modrm.has_sib:
                problems.append("the memory operand needs a SIB byte")
            operands.append(modrm.mem)  # as decoded, without a size (AMX memory operands show none)
    operands = tuple(operands)
    tiles = [o.name for o in operands if isinstance(o, Reg)]
    if form.is_tmul and len(set(tiles)) != len(tiles):
        # The SDM's #UD rule for every TMUL (and the reason GNU as refuses such text):
        # the destination and both sources must be three different tiles.
        problems.append(f"{form.format(operands)} names a tile twice (the three tile registers must differ)")
    if problems:
        return _undefined(form, operands, address, encoding, "; ".join(problems))
    instruction = make_instruction(form, operands, address, encoding)
    _note_if_noncanonical(instruction, form.encode(operands))
    return instruction


# Legacy prefix bytes (segment overrides, 66 operand size, 67 address size, LOCK,
# REP/REPNE) and REX bytes, as they can lead a scalar instruction.
_LEGACY_PREFIXES = {0x26: "es", 0x2E: "cs", 0x36: "ss", 0x3E: "ds", 0x64: "fs", 0x65: "gs",
                    0x66: "data16", 0x67: "addr32", 0xF0: "lock", 0xF2: "repne", 0xF3: "rep"}


def _split_prefixes(encoding: bytes) -> tuple[tuple[int, ...], tuple[int, ...], bool]:
    """(legacy prefix bytes, REX bytes, whether the last prefix is a REX) of a scalar encoding."""
    legacy, rex, last_is_rex = [], [], False
    for byte in encoding[:-1]:
        if byte in _LEGACY_PREFIXES:
            legacy.append(byte)
            last_is_rex = False
        elif 0x40 <= byte <= 0x4F:
            rex.append(byte)
            last_is_rex = True
        else:
            break
    return tuple(sorted(legacy)), tuple(rex), last_is_rex


def _prefix_problem(decoded: bytes, canonical: bytes) -> str | None:
    """Why the prefixes of ``decoded`` are not those of the instruction its text names, or None.

    iced (like the CPU) ignores a prefix that changes nothing and reads some that
    isasim does not model (66 before a near branch or RET, 67 on an instruction
    without memory operand): objdump shows each of them (``rex.W ret``, ``retw``,
    ``data16``, ``addr32``), and isasim's text would hide them.  The prefixes must
    therefore be exactly the ones GNU as writes for the text, up to which of REX.R
    and REX.B names a register (the two ModRM directions of the same instruction).
    """
    legacy, rex, rex_last = _split_prefixes(decoded)
    want_legacy, want_rex, _ = _split_prefixes(canonical)
    if legacy != want_legacy:
        extra = sorted(set(legacy) ^ set(want_legacy)) or legacy
        return f"the {'/'.join(_LEGACY_PREFIXES[b] for b in extra)} prefix is not part of this instruction"
    if len(rex) > 1 or (rex and not rex_last):
        return "a REX prefix not immediately before the opcode is ignored"
    if bool(rex) != bool(want_rex):
        return f"REX {rex[0]:#04x} changes nothing here" if rex else "the instruction needs a REX prefix"
    if rex:
        have, want = rex[0] & 0xF, want_rex[0] & 0xF
        # W and X mean the same in both directions; R and B may trade places.
        if (have & 0b1010) != (want & 0b1010) or bin(have & 0b0101).count("1") != bin(want & 0b0101).count("1"):
            return f"REX {rex[0]:#04x} sets bits this instruction does not use"
    return None


def _hidden_sib_problem(encoding: bytes) -> str | None:
    """A SIB byte with no index where none was needed (objdump shows it as ``riz``), or None.

    GNU as writes such a SIB only when told ``[rcx+riz*1]``; isasim's scalar text would be
    ``[rcx]``, which is other bytes, and its scalar assembler does not take riz.
    """
    pos, rex = 0, 0
    while pos < len(encoding) and (encoding[pos] in _LEGACY_PREFIXES or 0x40 <= encoding[pos] <= 0x4F):
        rex = encoding[pos] if 0x40 <= encoding[pos] <= 0x4F else 0
        pos += 1
    if pos < len(encoding) and encoding[pos] == 0x0F:
        pos += 2 if pos + 1 < len(encoding) and encoding[pos + 1] in (0x38, 0x3A) else 1
    pos += 1  # the opcode byte
    if pos + 1 >= len(encoding):
        return None
    modrm, sib = encoding[pos], encoding[pos + 1]
    if modrm >> 6 == 3 or modrm & 7 != 4:
        return None
    index = ((sib >> 3) & 7) | ((rex >> 1 & 1) << 3)
    if index != 4:
        return None
    base_low, scale_bits = sib & 7, sib >> 6
    sib_needed = base_low == 4 or (base_low == 5 and modrm >> 6 == 0)  # rsp/r12 base, or no base
    if sib_needed and scale_bits == 0:
        return None
    return f"a SIB byte without an index register (objdump: riz*{1 << scale_bits})"


def _vex_difference(decoded: bytes, canonical: bytes) -> list[str]:
    """Name the fields in which two encodings of one AMX instruction differ."""
    reasons = []
    for bit, name in ((7, "VEX.R"), (6, "VEX.X"), (5, "VEX.B")):
        if (decoded[1] ^ canonical[1]) >> bit & 1:
            reasons.append(f"{name} is ignored here")
    if len(decoded) != len(canonical) or decoded[4] >> 6 != canonical[4] >> 6:
        reasons.append("a longer displacement than the address needs")
    elif decoded[4] & 7 == 4 and decoded[4] >> 6 != 3 and decoded[5] >> 6 != canonical[5] >> 6:
        reasons.append("the SIB scale bits are ignored without an index register")
    return reasons


def _note_if_noncanonical(instruction: Instruction, canonical: bytes) -> None:
    """Record that ``instruction``'s bytes are a redundant encoding of its text.

    x86 has several encodings for one instruction (bits the CPU ignores, the two
    ModRM directions, a disp32 or imm32 where 8 bits suffice, a rel32 branch that
    rel8 reaches).  objdump prints them all as the same text, GNU as writes one, so
    the text alone cannot give these bytes back; the note says so and names the
    bytes the text assembles to.
    """
    if canonical == instruction.encoding:
        return
    reasons = []
    if instruction.encoding[:1] == b"\xc4" and canonical[:1] == b"\xc4":
        reasons = _vex_difference(instruction.encoding, canonical)
    why = "; ".join(reasons) or "another encoding of the same instruction"
    instruction.extra["canonical_encoding"] = canonical
    instruction.extra["noncanonical"] = f"{why}; GNU as writes {canonical.hex(' ')} for this text"


def _decode_scalar(code: bytes, pos: int, address: int) -> Instruction | None:
    instruction = scalar_encoding.decode(code, pos, address)
    if instruction is None:
        return None
    try:
        spelled = " ".join(instruction.extra.get("prefixes", ()) + (instruction.form.mnemonic,))
        _form, _operands, canonical = scalar_encoding.encode(spelled, instruction.operands, address)
    except IsasimError as error:  # the decoded operands are not something the text can say
        raise DecodeError(f"cannot decode the bytes at {address:#x} ({instruction.encoding.hex(' ')}): "
                          f"'{instruction.text}' does not assemble ({error.message})") from None
    problem = _prefix_problem(instruction.encoding, canonical)
    if problem is None and any(isinstance(operand, Mem) for operand in instruction.operands):
        # only a memory operand has a ModRM/SIB to look at (a branch's rel32 merely looks like one)
        problem = _hidden_sib_problem(instruction.encoding)
    if problem:
        raise DecodeError(f"cannot decode the bytes at {address:#x} ({instruction.encoding.hex(' ')}): {problem}, "
                          f"and isasim's text '{instruction.text}' would not show it")
    _note_if_noncanonical(instruction, canonical)
    return instruction


def _decode_vector(code: bytes, pos: int, address: int) -> Instruction | None:
    instruction = vector_encoding.decode(code, pos, address)
    if instruction is None:
        return instruction
    try:
        _form, _operands, canonical = vector_encoding.encode(instruction.form.mnemonic, instruction.operands, address)
    except IsasimError as error:
        raise DecodeError(f"cannot decode the bytes at {address:#x} ({instruction.encoding.hex(' ')}): "
                          f"'{instruction.text}' does not assemble ({error.message})") from None
    if canonical != instruction.encoding:
        # A redundant vector encoding (a SIB objdump shows as riz, a VEX3 where VEX2 does, an EVEX disp32
        # where disp8*N does): g++ and GNU as never write one, and objdump's text may name other bytes.
        raise DecodeError(f"cannot decode the bytes at {address:#x} ({instruction.encoding.hex(' ')}): a redundant "
                          f"encoding of '{instruction.text}' (GNU as writes {canonical.hex(' ')}), which isasim "
                          "does not take for vector instructions")
    return instruction


_SEGMENT_PREFIXES = {0x64: "fs", 0x65: "gs"}


def _decode_segment_relative(code: bytes, pos: int, address: int) -> Instruction | None:
    """A scalar instruction behind an FS or GS segment prefix (``mov rax, QWORD PTR fs:0x28``): the instruction
    the bytes after the prefix are, its memory operand relative to that segment.  GNU as writes the segment
    prefix first (before 66 and REX), so only a leading one is read; an instruction without a memory operand
    is left undecoded (the prefix would change nothing and isasim's text would not show it)."""
    segment = _SEGMENT_PREFIXES.get(code[pos]) if pos < len(code) else None
    if segment is None or pos + 1 >= len(code) or code[pos + 1] in _SEGMENT_PREFIXES:
        return None
    try:
        inner = _decode_scalar(code, pos + 1, address + 1)
    except DecodeError:
        return None
    if inner is None or inner.form.mnemonic in ("lea", "nop") or "prefixes" in inner.extra:
        return None
    memory = [o for o in inner.operands if isinstance(o, Mem)]
    if len(memory) != 1 or memory[0].base == "rip":
        return None
    operands = tuple(replace(o, segment=segment) if isinstance(o, Mem) else o for o in inner.operands)
    instruction = make_instruction(inner.form, operands, address, bytes(code[pos:pos + 1]) + inner.encoding)
    if "canonical_encoding" in inner.extra:
        instruction.extra["canonical_encoding"] = bytes(code[pos:pos + 1]) + inner.extra["canonical_encoding"]
        instruction.extra["noncanonical"] = inner.extra["noncanonical"]
    return instruction


def decode_amx_evex(code: bytes, pos: int, address: int) -> Instruction | None:
    """An AMX-AVX512 instruction (EVEX.512, forms/amx_extensions.py), or None if the bytes are not one."""
    decoded = amx_extensions.decode_evex(code, pos, address)
    if decoded is None:
        return None
    form, operands, length, problems = decoded
    encoding = code[pos : pos + length]
    if problems:
        return _undefined(form, operands, address, encoding, "; ".join(problems))
    instruction = make_instruction(form, operands, address, encoding)
    _note_if_noncanonical(instruction, form.encode(operands))
    return instruction


def decode_one(code: bytes, pos: int, address: int) -> Instruction:
    instruction = decode_amx(code, pos, address)
    if instruction is None:
        instruction = decode_amx_evex(code, pos, address)
    if instruction is None:
        instruction = control_encoding.decode(code, pos, address)
    if instruction is None:
        instruction = _decode_segment_relative(code, pos, address)
    if instruction is None:
        instruction = _decode_scalar(code, pos, address)
    if instruction is None:
        instruction = _decode_vector(code, pos, address)
    if instruction is None:
        why = vector_encoding.why_not(code, pos, address)  # a valid instruction isasim lacks: named
        raise DecodeError(
            f"cannot decode the bytes at {address:#x} ({code[pos:pos + 15].hex(' ')}): "
            + (why or "not an AMX instruction nor one of the scalar subset isasim simulates")
        )
    return instruction


def disassemble(code: bytes, base: int, source: str = "<bytes>") -> Program:
    instructions = []
    pos = 0
    while pos < len(code):
        instruction = decode_one(code, pos, base + pos)
        instructions.append(instruction)
        pos += len(instruction.encoding)
    return Program("x86_amx", base, instructions, {}, source)


def _x86_length(code: bytes, pos: int) -> int | None:
    """The length of the valid x86-64 instruction at code[pos:] (iced's decoder), 0 if the bytes end
    inside one, None if they are no instruction."""
    window = bytes(code[pos:pos + 15])
    # Padding tells "cut off" from "invalid": iced reports both as running out of bytes.
    decoded = iced_x86.Decoder(64, window + b"\x90" * 15).decode()
    if decoded.is_invalid:
        return None
    return decoded.len if decoded.len <= len(window) else 0


def listing(code: bytes, base: int):
    """Yield (address, bytes, text, note, decoded) for every instruction, going on past what isasim cannot
    decode (``decoded`` False: isasim has no instruction for these bytes, they are shown as objdump would).

    Like objdump, a byte sequence that is no instruction at all is ``(bad)`` and
    takes one byte; a valid x86 instruction outside isasim's subset is shown as
    ``.byte`` for its whole length (so the listing stays in step with objdump),
    with the reason as the note.
    """
    pos = 0
    while pos < len(code):
        address = base + pos
        try:
            ins = decode_one(code, pos, address)
        except DecodeError as error:
            length = _x86_length(code, pos)
            reason = error.message.split(": ", 1)[-1]
            if not length:  # objdump's "(bad)" takes one byte, as does a byte of a cut-off instruction
                chunk = code[pos:pos + 1]
                text = "(bad)" if length is None else f".byte {chunk[0]:#04x}"
                why = "not an x86-64 instruction" if length is None else "the bytes end inside an instruction"
                yield address, chunk, text, why, False
                pos += 1
            else:
                chunk = code[pos:pos + length]
                yield address, chunk, ".byte " + ",".join(f"{b:#04x}" for b in chunk), reason, False
                pos += length
            continue
        if ins.invalid:
            yield address, ins.encoding, ins.text, f"{ins.form.mnemonic} opcode, #UD: {ins.invalid}", True
        else:
            yield address, ins.encoding, ins.text, ins.extra.get("noncanonical"), True
        pos += len(ins.encoding)

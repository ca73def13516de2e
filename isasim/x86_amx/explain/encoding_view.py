"""An x86 instruction's encoding as byte units split into bit fields (first bit, width, name, value, meaning).

The values come from the one definition of each layout in :mod:`isasim.x86_amx.encoding`
(``VexFields`` for the VEX prefix, ``decode_modrm`` for ModRM, SIB and the
displacement) and, for the scalar subset, from the iced-x86 opcode row the decoder
matched; this module says where each field sits in its byte and what it means here,
and checks a VEX form's fields against its SDM opcode row.
"""

from __future__ import annotations

import re

import iced_x86

from ...core.explain import BitField, Encoding, EncodingUnit
from ...core.program import Instruction
from .. import amx, scalar
from ..encoding import MAP_NAMES, PP_NAMES, DecodedModRM, VexFields, decode_modrm
from ..operands import Target
from ..registers import GPR64


def _byte(code: bytes, offset: int, name: str, fields: list[BitField]) -> EncodingUnit:
    return EncodingUnit(offset, code[offset:offset + 1], name, fields)


def _number(code: bytes, offset: int, size: int, name: str, meaning: str) -> EncodingUnit:
    """A displacement or immediate: one unit holding one number field."""
    data = code[offset:offset + size]
    return EncodingUnit(offset, data, name, [BitField(0, 8 * size, name, int.from_bytes(data, "little"), meaning,
                                                      binary=False)])


def _sib_bits(decoded: DecodedModRM) -> tuple[int, int, int]:
    """(scale, index, base) as the SIB byte holds them, read back from the decoded memory operand."""
    mem = decoded.mem
    scale = mem.scale.bit_length() - 1
    index = 0b100 if mem.index in (None, "riz") else GPR64.index(mem.index) & 7
    base = 0b101 if mem.base is None else GPR64.index(mem.base) & 7
    return scale, index, base


def _whole_byte(name: str, value: int, meaning: str, **rest) -> BitField:
    return BitField(0, 8, name, value, meaning, **rest)


# ---------------------------------------------------------------------------
# AMX: the VEX forms, checked against the form's SDM opcode row
# ---------------------------------------------------------------------------


def vex_encoding(ins: Instruction, form: amx.AmxForm) -> Encoding:
    code = ins.encoding
    op = form.opcode
    units: list[EncodingUnit] = []
    pos = 0
    while code[pos] != 0xC4:
        units.append(_byte(code, pos, "prefix", [_whole_byte(
            "prefix", code[pos], "a legacy or REX prefix before VEX makes the instruction #UD", ok=False)]))
        pos += 1
    units.append(_byte(code, pos, "VEX", [_whole_byte("C4", 0xC4, "three-byte VEX escape")]))
    vex = VexFields.parse(code[pos + 1], code[pos + 2])
    names = dict(zip(form.operand_fields, form.operand_names))
    kinds = dict(zip(form.operand_fields, form.operand_kinds))
    roles = dict(zip(form.operand_names, form.operand_roles))

    def tile_text(where: str) -> str:
        name = names[where]
        role = f", {roles[name]}" if name in roles else ""
        return f"operand {name}{role}"

    register_form = op.modrm.register_form
    rm_tile = kinds.get("ModRM:r/m") == "tmm"
    reg_tile = kinds.get("ModRM:reg") == "tmm"
    # R, X, B and vvvv are stored inverted: a field's value is its stored bits, the meaning gives the decoded one
    units.append(_byte(code, pos + 1, "VEX byte 1", [
        BitField(7, 1, "R̄", 1 - vex.R, f"R = {vex.R}: bit 3 of ModRM.reg" + (
            " (tmm8-15 do not exist)" if reg_tile else ""), ok=(vex.R == 0) if reg_tile else None),
        BitField(6, 1, "X̄", 1 - vex.X, f"X = {vex.X}: bit 3 of the SIB index" + (
            "" if not register_form else " (unused: no memory operand)")),
        BitField(5, 1, "B̄", 1 - vex.B, f"B = {vex.B}: bit 3 of " + (
            "ModRM.r/m (tmm8-15 do not exist)" if rm_tile else "the base register"),
            ok=(vex.B == 0) if rm_tile else None),
        BitField(0, 5, "m-mmmm", vex.map, f"opcode map {MAP_NAMES.get(vex.map, '?')}", ok=vex.map == op.map),
    ]))
    if "VEX.vvvv" in names:
        v_meaning, v_ok = f"vvvv = {vex.vvvv:04b}: tmm{vex.vvvv}, {tile_text('VEX.vvvv')}", vex.vvvv < 8
    else:
        v_meaning, v_ok = "no operand here: must be 1111", vex.vvvv == 0
    units.append(_byte(code, pos + 2, "VEX byte 2", [
        BitField(7, 1, "W", vex.W, f"W{vex.W} (the form is W{op.W})", ok=vex.W == op.W),
        BitField(3, 4, "v̄v̄v̄v̄", ~vex.vvvv & 0xF, v_meaning + " (stored inverted)", ok=v_ok),
        BitField(2, 1, "L", vex.L, f"vector length {'128' if vex.L == 0 else '256'} (the form is L{op.L})",
                 ok=vex.L == op.L),
        BitField(0, 2, "pp", vex.pp, f"implied prefix {PP_NAMES[vex.pp]}", ok=vex.pp == op.pp),
    ]))
    opcode = code[pos + 3]
    units.append(_byte(code, pos + 3, "opcode", [_whole_byte("opcode", opcode, f"{opcode:02X}",
                                                             ok=opcode == op.opcode)]))
    pos += 4
    decoded = decode_modrm(code, pos, vex.X, vex.B)
    if decoded is None:
        return Encoding(units, "Encoding")
    mod, reg, rm = decoded.mod, decoded.reg, decoded.rm
    if mod == 3:
        mod_meaning = "11: register operands"
    else:
        mod_meaning = {0: "00: memory, no displacement", 1: "01: memory + disp8", 2: "10: memory + disp32"}[mod]
        if mod == 0 and decoded.has_sib and decoded.mem.base is None:
            mod_meaning = "00: memory, no base: disp32"
    fields = [BitField(6, 2, "mod", mod, mod_meaning + f" (the form needs {op.modrm.text.split(':')[0]})",
                       ok=(mod == 3) == register_form)]
    if op.modrm.reg is not None:
        fields.append(BitField(3, 3, "reg", reg, f"opcode extension /{op.modrm.reg}", ok=reg == op.modrm.reg))
    elif reg_tile:
        fields.append(BitField(3, 3, "reg", reg, f"tmm{reg | vex.R << 3}: {tile_text('ModRM:reg')}", role="field1"))
    else:
        fields.append(BitField(3, 3, "reg", reg, "ModRM.reg"))
    if op.modrm.rm is not None and register_form:
        fields.append(BitField(0, 3, "r/m", rm, f"must be {op.modrm.rm:03b}", ok=rm == op.modrm.rm))
    elif rm_tile:
        fields.append(BitField(0, 3, "r/m", rm, f"tmm{rm | vex.B << 3}: {tile_text('ModRM:r/m')}"))
    elif mod != 3 and rm == 4:
        need = " (sibmem needs one)" if kinds.get("ModRM:r/m") == "sibmem" else ""
        fields.append(BitField(0, 3, "r/m", rm, "100: a SIB byte follows" + need, ok=True if need else None))
    elif mod != 3:
        bad = kinds.get("ModRM:r/m") == "sibmem"
        fields.append(BitField(0, 3, "r/m", rm, f"base register {decoded.mem.base}"
                               + (": sibmem needs a SIB byte (100)" if bad else ""), ok=False if bad else None))
    else:
        fields.append(BitField(0, 3, "r/m", rm, "ModRM.r/m"))
    units.append(_byte(code, pos, "ModRM", fields))
    pos += 1
    if decoded.has_sib:
        scale, index, base = _sib_bits(decoded)
        mem = decoded.mem
        index_meaning = ("100: no index (riz): stride 0" if mem.index in (None, "riz")
                         else f"index {mem.index} (the row stride register)")
        base_meaning = "101 with mod 00: no base, disp32" if mem.base is None else f"base {mem.base}"
        units.append(_byte(code, pos, "SIB", [
            BitField(6, 2, "scale", scale, f"× {1 << scale}"),
            BitField(3, 3, "index", index, index_meaning),
            BitField(0, 3, "base", base, base_meaning),
        ]))
        pos += 1
    if pos < len(code):
        size = len(code) - pos
        value = int.from_bytes(code[pos:], "little", signed=True)
        units.append(_number(code, pos, size, f"disp{8 * size}",
                             f"displacement {value:#x} ({value}), little-endian, sign-extended"))
    return Encoding(units, "Encoding")


# ---------------------------------------------------------------------------
# The scalar subset: legacy prefixes, REX, opcode, ModRM, SIB, displacement, immediate
# ---------------------------------------------------------------------------

_PREFIX_NAMES = {0x66: "operand size 16 bits", 0x67: "address size 32 bits", 0xF2: "REPNE", 0xF3: "REP",
                 0xF0: "LOCK"}


def legacy_encoding(ins: Instruction) -> tuple[Encoding, str, str]:
    """The encoding of a scalar instruction, and the opcode row (``o64 83 /0 ib``) and its syntax it matched."""
    code = ins.encoding
    decoder = iced_x86.Decoder(64, code, ip=ins.address)
    instr = decoder.decode()
    offsets = decoder.get_constant_offsets(instr)
    info = iced_x86.OpCodeInfo(instr.code)
    tokens = info.op_code_string.split()
    kinds = [info.op_kind(i) for i in range(info.op_count)]
    units: list[EncodingUnit] = []
    pos = 0
    while code[pos] in _PREFIX_NAMES:
        units.append(_byte(code, pos, "prefix", [_whole_byte("prefix", code[pos], _PREFIX_NAMES[code[pos]])]))
        pos += 1
    rex = 0
    if 0x40 <= code[pos] <= 0x4F:
        rex = code[pos]
        units.append(_byte(code, pos, "REX", [
            BitField(4, 4, "0100", 0b0100, "REX"),
            BitField(3, 1, "W", rex >> 3 & 1, "64-bit operand size" if rex & 8 else "default operand size"),
            BitField(2, 1, "R", rex >> 2 & 1, "bit 3 of ModRM.reg"),
            BitField(1, 1, "X", rex >> 1 & 1, "bit 3 of the SIB index"),
            BitField(0, 1, "B", rex & 1, "bit 3 of ModRM.r/m, SIB base or the opcode's register"),
        ]))
        pos += 1
    opcode_tokens = [t for t in tokens if re.fullmatch(r"[0-9A-F]{2}(\+r[bwdo])?", t)]

    def operand_register(i: int) -> str:
        return scalar._NAME_OF_REGISTER.get(instr.op_register(i), "?")

    for token in opcode_tokens:
        byte = code[pos]
        if "+r" in token:
            number = byte & 7 | (rex & 1) << 3
            index = next(i for i, k in enumerate(kinds) if k in scalar._REG_KINDS)
            fields = [BitField(3, 5, "opcode", byte >> 3, f"{token[:2]} + register"),
                      BitField(0, 3, "reg", byte & 7, f"register {number}: {operand_register(index)}")]
        else:
            fields = [_whole_byte("opcode", byte, token)]
        units.append(_byte(code, pos, "opcode", fields))
        pos += 1
    slash = next((t for t in tokens if t.startswith("/")), None)
    if slash is not None:
        decoded = decode_modrm(code, pos, rex >> 1 & 1, rex & 1)
        mod, reg, rm = decoded.mod, decoded.reg, decoded.rm
        reg_index = next((i for i, k in enumerate(kinds) if k in scalar._REG_KINDS), None)
        rm_index = next((i for i, k in enumerate(kinds) if k in scalar._RM_KINDS or k == scalar._OK.MEM), None)
        if slash == "/r" and reg_index is not None:
            reg_meaning = f"register {reg | (rex >> 2 & 1) << 3}: {operand_register(reg_index)}"
        else:
            reg_meaning = f"opcode extension {slash}"
        if mod == 3:
            rm_meaning = f"register {rm | (rex & 1) << 3}: {operand_register(rm_index) if rm_index is not None else '?'}"
        elif rm == 4:
            rm_meaning = "100: a SIB byte follows"
        elif mod == 0 and rm == 5:
            rm_meaning = "RIP-relative"
        else:
            rm_meaning = f"base {decoded.mem.base}"
        mod_meaning = {0: "memory", 1: "memory + disp8", 2: "memory + disp32", 3: "register operand"}[mod]
        units.append(_byte(code, pos, "ModRM", [
            BitField(6, 2, "mod", mod, mod_meaning), BitField(3, 3, "reg", reg, reg_meaning),
            BitField(0, 3, "r/m", rm, rm_meaning)]))
        pos += 1
        if decoded.has_sib:
            scale, index, base = _sib_bits(decoded)
            mem = decoded.mem
            units.append(_byte(code, pos, "SIB", [
                BitField(6, 2, "scale", scale, f"× {1 << scale}"),
                BitField(3, 3, "index", index, "no index" if mem.index in (None, "riz") else f"index {mem.index}"),
                BitField(0, 3, "base", base, "no base (disp32)" if mem.base is None else f"base {mem.base}")]))
            pos += 1
    if offsets.has_displacement:
        size = offsets.displacement_size
        value = int.from_bytes(code[offsets.displacement_offset:offsets.displacement_offset + size], "little",
                               signed=True)
        units.append(_number(code, offsets.displacement_offset, size, f"disp{8 * size}",
                             f"{value:#x} ({value}), sign-extended"))
    if offsets.has_immediate:
        size = offsets.immediate_size
        data = code[offsets.immediate_offset:offsets.immediate_offset + size]
        value = int.from_bytes(data, "little", signed=True)
        if any(k in scalar._BRANCH_KINDS for k in kinds):
            target = ins.operands[0].address if ins.operands and isinstance(ins.operands[0], Target) else 0
            meaning = f"{value:+#x}: target = next instruction {ins.next_address:#x} {value:+#x} = {target:#x}"
            name = f"rel{8 * size}"
        else:
            meaning = f"{value:#x} ({value}), sign-extended to the operand size" if size < 8 else \
                f"{int.from_bytes(data, 'little'):#x}"
            name = f"imm{8 * size}"
        units.append(_number(code, offsets.immediate_offset, size, name, meaning))
    return Encoding(units, "Encoding"), info.op_code_string, info.instruction_string

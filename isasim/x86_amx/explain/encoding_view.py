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
from ..encoding import iced
from ..encoding.vex import MAP_NAMES, PP_NAMES, DecodedModRM, VexFields, decode_modrm
from ..forms import amx
from ..operands import GPR64, Target


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


def _modrm_and_sib(units: list[EncodingUnit], code: bytes, pos: int, decoded: DecodedModRM, reg_meaning: str,
                   rm_register: str, vsib_index: str | None = None) -> int:
    """The ModRM byte at ``pos`` (and its SIB byte) as units; where the next byte is.  ``rm_register``: what
    r/m means when it names a register (mod 11), with the prefix's extension bits."""
    mod, rm = decoded.mod, decoded.rm
    if mod == 3:
        rm_meaning = rm_register
    elif rm == 4:
        rm_meaning = "100: a SIB byte follows"
    elif mod == 0 and rm == 5:
        rm_meaning = "RIP-relative: disp32 from the next instruction"
    else:
        rm_meaning = f"base {decoded.mem.base}"
    mod_meaning = {0: "memory", 1: "memory + disp8", 2: "memory + disp32", 3: "register operand"}[mod]
    units.append(_byte(code, pos, "ModRM", [
        BitField(6, 2, "mod", mod, mod_meaning), BitField(3, 3, "reg", decoded.reg, reg_meaning),
        BitField(0, 3, "r/m", rm, rm_meaning)]))
    pos += 1
    if decoded.has_sib:
        scale, index, base = _sib_bits(decoded)
        mem = decoded.mem
        units.append(_byte(code, pos, "SIB", [
            BitField(6, 2, "scale", scale, f"× {1 << scale}"),
            BitField(3, 3, "index", index, f"index {vsib_index}: VSIB, a vector of indices" if vsib_index else
                     "no index" if mem.index in (None, "riz") else f"index {mem.index}"),
            BitField(0, 3, "base", base, "no base (disp32)" if mem.base is None else f"base {mem.base}")]))
        pos += 1
    return pos


def legacy_encoding(ins: Instruction) -> tuple[Encoding, str, str]:
    """The encoding of a scalar instruction, and the opcode row (``o64 83 /0 ib``) and its syntax it matched."""
    if ins.encoding[:1] in (b"\xc4", b"\xc5"):
        return vector_encoding(ins)  # BMI1/BMI2: a VEX prefix, read as the vector forms' are
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
    if opcode_tokens[0] in ("F2", "F3") and len(opcode_tokens) > 1:
        opcode_tokens = opcode_tokens[1:]  # a mandatory prefix (ENDBR64, POPCNT): shown with the prefixes above

    def operand_register(i: int) -> str:
        return iced.NAME_OF_REGISTER.get(instr.op_register(i), "?")

    for token in opcode_tokens:
        byte = code[pos]
        if "+r" in token:
            number = byte & 7 | (rex & 1) << 3
            index = next(i for i, k in enumerate(kinds) if k in iced.REG_KINDS)
            fields = [BitField(3, 5, "opcode", byte >> 3, f"{token[:2]} + register"),
                      BitField(0, 3, "reg", byte & 7, f"register {number}: {operand_register(index)}")]
        else:
            fields = [_whole_byte("opcode", byte, token)]
        units.append(_byte(code, pos, "opcode", fields))
        pos += 1
    slash = next((t for t in tokens if t.startswith("/")), None)
    if slash is not None:
        decoded = decode_modrm(code, pos, rex >> 1 & 1, rex & 1)
        reg, rm = decoded.reg, decoded.rm
        reg_index = next((i for i, k in enumerate(kinds) if k in iced.REG_KINDS), None)
        rm_index = next((i for i, k in enumerate(kinds) if k in iced.RM_KINDS or k == iced.OK.MEM), None)
        if slash == "/r" and reg_index is not None:
            reg_meaning = f"register {reg | (rex >> 2 & 1) << 3}: {operand_register(reg_index)}"
        else:
            reg_meaning = f"opcode extension {slash}"
        register = f"register {rm | (rex & 1) << 3}: {operand_register(rm_index) if rm_index is not None else '?'}"
        pos = _modrm_and_sib(units, code, pos, decoded, reg_meaning, register)
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
        if any(k in iced.BRANCH_KINDS for k in kinds):
            target = ins.operands[0].address if ins.operands and isinstance(ins.operands[0], Target) else 0
            meaning = f"{value:+#x}: target = next instruction {ins.next_address:#x} {value:+#x} = {target:#x}"
            name = f"rel{8 * size}"
        else:
            meaning = f"{value:#x} ({value}), sign-extended to the operand size" if size < 8 else \
                f"{int.from_bytes(data, 'little'):#x}"
            name = f"imm{8 * size}"
        units.append(_number(code, offsets.immediate_offset, size, name, meaning))
    return Encoding(units, "Encoding"), info.op_code_string, info.instruction_string


# ---------------------------------------------------------------------------
# The vector moves: a legacy SSE opcode with its mandatory prefix, or a VEX or EVEX prefix
# ---------------------------------------------------------------------------

_MANDATORY_PREFIXES = {0x66: "66", 0xF2: "F2", 0xF3: "F3"}
_EVEX_LENGTHS = {0: 128, 1: 256, 2: 512}


def _operand_roles(ins: Instruction, info) -> dict[str, str]:
    """Which operand each encoding field holds ("reg", "vvvv", "rm"), from the opcode row's operand kinds
    (iced-x86's XMM_REG, YMM_VVVV, ZMM_OR_MEM, R32_RM ...), as the operand's text."""
    names = {value: name for name, value in vars(iced_x86.OpCodeOperandKind).items() if isinstance(value, int)}
    roles = {}
    for i in range(info.op_count):
        kind = names.get(info.op_kind(i), "")
        if kind.startswith("IMM"):
            continue  # the immediate byte, after ModRM
        field = ("reg" if kind.endswith("_REG") else "vvvv" if kind.endswith("_VVVV") else
                 "is4" if kind.endswith("_IS4") else "rm")
        operand = ins.operands[i] if i < len(ins.operands) else "?"
        roles[field] = str(getattr(operand, "operand", operand))  # a masked operand: its register
    return roles


def vector_encoding(ins: Instruction) -> tuple[Encoding, str, str]:
    """The encoding of a vector move (legacy SSE, VEX or EVEX), and the opcode row and its syntax it matched."""
    code = ins.encoding
    decoder = iced_x86.Decoder(64, code, ip=ins.address)
    instr = decoder.decode()
    offsets = decoder.get_constant_offsets(instr)
    info = iced_x86.OpCodeInfo(instr.code)
    roles = _operand_roles(ins, info)
    units: list[EncodingUnit] = []
    pos = 0
    R = X = B = R_high = X_high = V_high = 0  # the register-number bits the prefix adds (un-inverted)
    vvvv = None
    if code[pos] in _MANDATORY_PREFIXES:
        units.append(_byte(code, pos, "prefix", [_whole_byte(
            "prefix", code[pos], f"mandatory prefix: part of the opcode "
                                 f"{' '.join(t for t in info.op_code_string.split() if re.fullmatch('[0-9A-F]{2}', t))}")]))
        pos += 1
    if code[pos] == 0xC5:  # two-byte VEX: R, vvvv, L, pp; map 0F, W0, X = B = 0 implied
        byte = code[pos + 1]
        R, vvvv = 1 - (byte >> 7), ~byte >> 3 & 0xF
        units.append(_byte(code, pos, "VEX", [_whole_byte("C5", 0xC5, "two-byte VEX escape (map 0F, W0)")]))
        units.append(_byte(code, pos + 1, "VEX byte 1", [
            BitField(7, 1, "R̄", byte >> 7, f"R = {R}: bit 3 of ModRM.reg"),
            BitField(3, 4, "v̄v̄v̄v̄", byte >> 3 & 0xF, _vvvv_meaning(vvvv, roles)),
            BitField(2, 1, "L", byte >> 2 & 1, f"vector length {256 if byte & 4 else 128}"),
            BitField(0, 2, "pp", byte & 3, f"implied prefix {PP_NAMES[byte & 3]}")]))
        pos += 2
    elif code[pos] == 0xC4:  # three-byte VEX
        vex = VexFields.parse(code[pos + 1], code[pos + 2])
        R, X, B, vvvv = vex.R, vex.X, vex.B, vex.vvvv
        units.append(_byte(code, pos, "VEX", [_whole_byte("C4", 0xC4, "three-byte VEX escape")]))
        units.append(_byte(code, pos + 1, "VEX byte 1", [
            BitField(7, 1, "R̄", 1 - R, f"R = {R}: bit 3 of ModRM.reg"),
            BitField(6, 1, "X̄", 1 - X, f"X = {X}: bit 3 of the SIB index"),
            BitField(5, 1, "B̄", 1 - B, f"B = {B}: bit 3 of ModRM.r/m or the base register"),
            BitField(0, 5, "m-mmmm", vex.map, f"opcode map {MAP_NAMES.get(vex.map, '?')}")]))
        units.append(_byte(code, pos + 2, "VEX byte 2", [
            BitField(7, 1, "W", vex.W, f"W{vex.W}" + (" (ignored: WIG)" if ".WIG" in info.op_code_string else "")),
            BitField(3, 4, "v̄v̄v̄v̄", ~vvvv & 0xF, _vvvv_meaning(vvvv, roles)),
            BitField(2, 1, "L", vex.L, f"vector length {256 if vex.L else 128}"),
            BitField(0, 2, "pp", vex.pp, f"implied prefix {PP_NAMES[vex.pp]}")]))
        pos += 3
    elif code[pos] == 0x62:  # EVEX: four bytes
        p0, p1, p2 = code[pos + 1:pos + 4]
        R, X, B, R_high = 1 - (p0 >> 7), 1 - (p0 >> 6 & 1), 1 - (p0 >> 5 & 1), 1 - (p0 >> 4 & 1)
        vvvv, V_high = ~p1 >> 3 & 0xF, 1 - (p2 >> 3 & 1)
        X_high = X  # with a register r/m operand, EVEX.X is bit 4 of its number (xmm16-31)
        length = _EVEX_LENGTHS.get(p2 >> 5 & 3, "reserved")
        units.append(_byte(code, pos, "EVEX", [_whole_byte("62", 0x62, "EVEX escape")]))
        units.append(_byte(code, pos + 1, "EVEX P0", [
            BitField(7, 1, "R̄", p0 >> 7, f"R = {R}: bit 3 of ModRM.reg"),
            BitField(6, 1, "X̄", p0 >> 6 & 1, f"X = {X}: bit 3 of the SIB index, or bit 4 of a register r/m"),
            BitField(5, 1, "B̄", p0 >> 5 & 1, f"B = {B}: bit 3 of ModRM.r/m or the base register"),
            BitField(4, 1, "R̄'", p0 >> 4 & 1, f"R' = {R_high}: bit 4 of ModRM.reg (xmm16-31)"),
            BitField(3, 1, "0", p0 >> 3 & 1, "reserved, 0"),
            BitField(0, 3, "mmm", p0 & 7, f"opcode map {MAP_NAMES.get(p0 & 7, '?')}")]))
        units.append(_byte(code, pos + 2, "EVEX P1", [
            BitField(7, 1, "W", p1 >> 7, f"W{p1 >> 7}"),
            BitField(3, 4, "v̄v̄v̄v̄", p1 >> 3 & 0xF, _vvvv_meaning(vvvv | V_high << 4, roles)),
            BitField(2, 1, "1", p1 >> 2 & 1, "fixed, 1"),
            BitField(0, 2, "pp", p1 & 3, f"implied prefix {PP_NAMES[p1 & 3]}")]))
        units.append(_byte(code, pos + 3, "EVEX P2", [
            BitField(7, 1, "z", p2 >> 7, "zeroing-masking" if p2 >> 7 else "merging (no mask: k0)"),
            BitField(5, 2, "L'L", p2 >> 5 & 3, f"vector length {length}"),
            BitField(4, 1, "b", p2 >> 4 & 1, "broadcast / rounding control: unused here"),
            BitField(3, 1, "V̄'", p2 >> 3 & 1, f"V' = {V_high}: bit 4 of vvvv"),
            BitField(0, 3, "aaa", p2 & 7, "opmask k0: no masking" if p2 & 7 == 0 else f"opmask k{p2 & 7}")]))
        pos += 4
    else:  # a legacy SSE opcode: an optional REX, then the 0F escape
        if 0x40 <= code[pos] <= 0x4F:
            rex = code[pos]
            R, X, B = rex >> 2 & 1, rex >> 1 & 1, rex & 1
            units.append(_byte(code, pos, "REX", [
                BitField(4, 4, "0100", 0b0100, "REX"), BitField(3, 1, "W", rex >> 3 & 1, "unused here"),
                BitField(2, 1, "R", R, "bit 3 of ModRM.reg"), BitField(1, 1, "X", X, "bit 3 of the SIB index"),
                BitField(0, 1, "B", B, "bit 3 of ModRM.r/m or the base register")]))
            pos += 1
        units.append(_byte(code, pos, "opcode", [_whole_byte("escape", code[pos], "0F: two-byte opcode map")]))
        pos += 1
        if code[pos] in (0x38, 0x3A):  # the three-byte maps 0F 38 and 0F 3A (SSSE3, SSE4.1: pshufb, roundss)
            units.append(_byte(code, pos, "opcode", [_whole_byte("escape", code[pos],
                                                                 f"0F {code[pos]:02X}: three-byte opcode map")]))
            pos += 1
    opcode = code[pos]
    units.append(_byte(code, pos, "opcode", [_whole_byte("opcode", opcode, f"{opcode:02X}")]))
    pos += 1
    extension = re.search(r" /([0-7])\b", info.op_code_string)  # ModRM.reg extends the opcode (VPSRLD /2 ib)
    if pos < len(code) and ("/r" in info.op_code_string or "/vsib" in info.op_code_string or extension):
        decoded = decode_modrm(code, pos, X, B)
        reg, rm = decoded.reg, decoded.rm
        reg_meaning = (f"opcode extension /{extension.group(1)}" if extension else
                       f"register {reg | R << 3 | R_high << 4}: {roles.get('reg', '?')}")
        register = f"register {rm | B << 3 | X_high << 4}: {roles.get('rm', '?')}"
        vsib = next((m.index for m in (getattr(o, "operand", o) for o in ins.operands)
                     if getattr(m, "index", None) and m.index[:3] in ("xmm", "ymm", "zmm")), None)  # [rax+zmm1*4]
        _modrm_and_sib(units, code, pos, decoded, reg_meaning, register, vsib)
    if offsets.has_displacement:
        size = offsets.displacement_size
        at = offsets.displacement_offset
        raw = int.from_bytes(code[at:at + size], "little", signed=True)
        disp = next((o.disp for o in (getattr(o, "operand", o) for o in ins.operands) if hasattr(o, "disp")), raw)
        if code[0] == 0x62 and size == 1 and raw:
            scale = disp // raw  # EVEX's compressed disp8: the stored byte counts units of the access's size
            meaning = f"{raw:#x} × {scale} (disp8×N: N = the {scale}-byte access) = {disp:#x} ({disp})"
        else:
            meaning = f"{raw:#x} ({raw}), sign-extended"
        units.append(_number(code, at, size, f"disp{8 * size}", meaning))
    if offsets.has_immediate:
        at = offsets.immediate_offset
        units.append(_number(code, at, offsets.immediate_size, "imm8", f"{code[at]:#04x}"))
    elif " /is4" in info.op_code_string:  # VBLENDVPS, VPBLENDVB: the fourth register in imm8[7:4]
        at = len(code) - 1
        units.append(_byte(code, at, "imm8", [BitField(4, 4, "is4", code[at] >> 4, f"register {code[at] >> 4}: "
                                                                                     f"{roles.get('is4', '?')}"),
                                               BitField(0, 4, "0000", code[at] & 0xF, "unused")]))
    return Encoding(units, "Encoding"), info.op_code_string, info.instruction_string


def _vvvv_meaning(number: int, roles: dict[str, str]) -> str:
    """What the un-inverted vvvv (with EVEX's V', up to 31) names: an operand, or nothing (all ones stored)."""
    if "vvvv" in roles:
        return f"register {number}: {roles['vvvv']} (stored inverted)"
    return "no operand here: stored 1111" + ("" if number == 0 else f" (holds {number}: the CPU raises #UD)")

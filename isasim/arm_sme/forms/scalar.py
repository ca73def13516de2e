"""The A64 base data-processing forms with immediates (MOVZ/MOVN/MOVK, ADR/ADRP, ADD/SUB immediate, the
logical immediates, UBFM/SBFM/BFM, EXTR) and the arithmetic and logical forms with a shifted or extended
register (ADD/SUB/ADDS/SUBS, AND/BIC/ORR/ORN/EOR/EON/ANDS/BICS), MADD/MSUB, and UDF.  The other base families
are declared beside this module: base_register.py (the other data-processing (register) forms),
base_memory.py (loads and stores), base_branch.py (branches, calls and returns), base_system.py (MRS, MSR,
hints); they use this module's helpers (R, R_OR_SP, _form).

Forms come in X (64-bit, sf = 1) and W (32-bit, sf = 0) variants where the instruction has both.
Where llvm-objdump prints another name for some encodings (CMP is SUBS with Rd = 31, LSL is a UBFM,
MOV is MOVZ, MOVN, ORR or ADD #0), the form lists it as an ``Alias`` with the Arm ARM's
"preferred when" condition, in the order llvm tries them; the assembler accepts every alias.
"""

from __future__ import annotations

from functools import partial

from ..encoding import Encoding
from ..numerics.integer_asl import DecodeBitMasks, HighestSetBit, Ones
from ..operands import (AddImm, BitfieldImm, BitmaskImm, ExtendedReg, GReg, Imm, MovImm, MovWideImm, OperandError,
                        ShiftedReg)
from ..operands.base import PcRelative
from ..semantics import scalar
from .base import A64Form, Alias, add


def R(field, width):
    """A general register of ``width`` bits; register 31 is XZR/WZR."""
    return GReg(field, width=width)


def R_OR_SP(field, width):
    """A general register of ``width`` bits; register 31 is SP/WSP."""
    return GReg(field, width=width, sp=True)


def _sf(width):
    return "1" if width == 64 else "0"


def _form(id, mnemonic, syntax, summary, pattern, operands, function, group="scalar", **extra):
    """A form whose semantics is ``function`` (a partial of semantics/scalar.py's), its doc that function's ASL."""
    base = function.func if isinstance(function, partial) else function
    return A64Form(id, mnemonic, syntax, summary, Encoding(pattern), tuple(operands), function, doc=base.__doc__,
                   group=group, extra=extra)


def _rd_is(value):
    return lambda fields: fields["Rd"] == value


def _rn_is(value):
    return lambda fields: fields["Rn"] == value


# ---- move wide immediate: MOVN, MOVZ, MOVK (and MOV, which is MOVZ or MOVN) ---------------------------------

def _move_wide_mov_preferred(width, inverted):
    def preferred(fields):
        if fields["imm16"] == 0 and fields["hw"] != 0:
            return False  # zero shifted: llvm prints movz/movn x0, #0, lsl #16
        return not (inverted and width == 32 and fields["imm16"] == 0xFFFF)  # MOVN W #0xffff: #-65536 is MOVZ's
    return preferred


for _width in (32, 64):
    _hw = "hw:2" if _width == 64 else "0 hw:1"  # a W register has halfwords 0 and 1 only
    _r = "X" if _width == 64 else "W"
    for _name, _opc, _op in (("MOVN", "00", "N"), ("MOVZ", "10", "Z"), ("MOVK", "11", "K")):
        _aliases = () if _op == "K" else (
            Alias("mov", (R("Rd", _width), MovImm(_width, "movn" if _op == "N" else "movz")),
                  _move_wide_mov_preferred(_width, _op == "N")),)
        add(_form(f"{_name}_{_width}", _name.lower(), f"{_name} <{_r}d>, #<imm>{{, LSL #<shift>}}",
                  {"N": "move the inverse of a shifted 16-bit immediate", "Z": "move a shifted 16-bit immediate",
                   "K": "move a 16-bit immediate into one halfword, keeping the others"}[_op],
                  f"{_sf(_width)} {_opc} 100101 {_hw} imm16:16 Rd:5", (R("Rd", _width), MovWideImm(_width)),
                  partial(scalar.move_wide, datasize=_width, opcode=_op), aliases=_aliases))


# ---- ADD, ADDS, SUB, SUBS (CMP, CMN, NEG, NEGS, MOV to/from SP) -------------------------------------------

def _arith_aliases(name, width, kind):
    """The aliases of one add/sub form: kind imm, shift or ext."""
    if kind == "imm":
        second = AddImm()
    elif kind == "shift":
        second = ShiftedReg(width)
    else:
        second = ExtendedReg(width, rd_is_sp=False)
    rn = R("Rn", width) if kind == "shift" else R_OR_SP("Rn", width)
    aliases = []
    if name in ("ADDS", "SUBS"):
        aliases.append(Alias("cmn" if name == "ADDS" else "cmp", (rn, second), _rd_is(31), {"Rd": 31}))
    if kind == "shift" and name in ("SUB", "SUBS"):
        aliases.append(Alias("neg" if name == "SUB" else "negs", (R("Rd", width), ShiftedReg(width)), _rn_is(31),
                             {"Rn": 31}))
    if kind == "imm":  # add x0, x1, #-1 is SUB #1 (and cmp x0, #-1 is CMN #1), as clang takes them
        opposite = {"ADD": "sub", "SUB": "add", "ADDS": "subs", "SUBS": "adds"}[name]
        operands = (R("Rd", width) if name.endswith("S") else R_OR_SP("Rd", width), rn, AddImm(negated=True))
        aliases.append(Alias(opposite, operands, lambda f: False, accepts=lambda f: True))
        if name.endswith("S"):
            aliases.append(Alias("cmp" if name == "ADDS" else "cmn", (rn, AddImm(negated=True)), lambda f: False,
                                 {"Rd": 31}, accepts=lambda f: True))
    if kind == "imm" and name == "ADD":
        aliases.append(Alias("mov", (R_OR_SP("Rd", width), R_OR_SP("Rn", width)),
                             lambda f: f["sh"] == 0 and f["imm12"] == 0 and 31 in (f["Rd"], f["Rn"]),
                             {"sh": 0, "imm12": 0}))
    return tuple(aliases)


_ARITH = {"ADD": ("0", "0"), "ADDS": ("0", "1"), "SUB": ("1", "0"), "SUBS": ("1", "1")}
_ARITH_SUMMARY = {"ADD": "add", "ADDS": "add, setting NZCV", "SUB": "subtract", "SUBS": "subtract, setting NZCV"}

for _width in (32, 64):
    _r, _sp = ("X", "SP") if _width == 64 else ("W", "WSP")
    for _name, (_op, _s) in _ARITH.items():
        _flags = _s == "1"
        _semantics = dict(datasize=_width, sub_op=_op == "1", setflags=_flags)
        _rd = R("Rd", _width) if _flags else R_OR_SP("Rd", _width)
        _rd_text = f"<{_r}d>" if _flags else f"<{_r}d|{_sp}>"
        add(_form(f"{_name}_{_width}_imm", _name.lower(), f"{_name} {_rd_text}, <{_r}n|{_sp}>, #<imm>{{, LSL #12}}",
                  f"{_ARITH_SUMMARY[_name]} an immediate (0-4095, optionally shifted by 12)",
                  f"{_sf(_width)} {_op} {_s} 100010 sh:1 imm12:12 Rn:5 Rd:5",
                  (_rd, R_OR_SP("Rn", _width), AddImm()), partial(scalar.add_sub_imm, **_semantics),
                  aliases=_arith_aliases(_name, _width, "imm")))
        _imm6 = "imm6:6" if _width == 64 else "0 imm6:5"  # a W form's shift amount is 0-31
        add(_form(f"{_name}_{_width}_shift", _name.lower(),
                  f"{_name} <{_r}d>, <{_r}n>, <{_r}m>{{, <shift> #<amount>}}",
                  f"{_ARITH_SUMMARY[_name]} a register shifted by LSL, LSR or ASR",
                  f"{_sf(_width)} {_op} {_s} 01011 shift:2 0 Rm:5 {_imm6} Rn:5 Rd:5",
                  (R("Rd", _width), R("Rn", _width), ShiftedReg(_width)),
                  partial(scalar.add_sub_shifted, **_semantics), reserved={"shift": 3},
                  aliases=_arith_aliases(_name, _width, "shift")))
        add(_form(f"{_name}_{_width}_ext", _name.lower(),
                  f"{_name} {_rd_text}, <{_r}n|{_sp}>, <R><m>{{, <extend> {{#<amount>}}}}",
                  f"{_ARITH_SUMMARY[_name]} a register zero- or sign-extended and shifted left by 0-4",
                  f"{_sf(_width)} {_op} {_s} 01011 00 1 Rm:5 option:3 imm3:3 Rn:5 Rd:5",
                  (_rd, R_OR_SP("Rn", _width), ExtendedReg(_width, rd_is_sp=not _flags)),
                  partial(scalar.add_sub_extended, **_semantics),
                  undefined_when=lambda f: f"the shift #{f['imm3']} is above 4" if f["imm3"] > 4 else None,
                  aliases=_arith_aliases(_name, _width, "ext")))


# ---- AND, ORR, EOR, ANDS (TST, MOV): bitmask immediate and shifted register --------------------------------

def _bitmask_undefined(width):
    def undefined(fields):
        try:
            DecodeBitMasks(fields.get("N", 0), fields["imms"], fields["immr"], True, width)
        except ValueError as error:
            return str(error)
        return None
    return undefined


def _bitmask_canonical(fields):
    """The encoding llvm (and isasim) assemble for the same value: DecodeBitMasks reads only the low
    log2(esize) bits of immr, so a word may set the others; the assembler leaves them clear."""
    length = HighestSetBit((fields.get("N", 0) << 6) | (~fields["imms"] & 0x3F))
    return {**fields, "immr": fields["immr"] & Ones(length)}


def _move_wide_preferred(width, fields):
    """The Arm ARM's MoveWidePreferred: a MOVZ or MOVN makes this bitmask immediate too."""
    s, r = fields["imms"], fields["immr"]
    if width == 64 and not fields.get("N"):
        return False
    if width == 32 and s >> 5:
        return False
    if s < 16:
        return -r % 16 <= 15 - s
    if s >= width - 15:
        return r % 16 <= s - (width - 15)
    return False


_LOGICAL = {"AND": "00", "ORR": "01", "EOR": "10", "ANDS": "11"}
_LOGICAL_SUMMARY = {"AND": "bitwise AND", "ORR": "bitwise OR", "EOR": "bitwise exclusive OR",
                    "ANDS": "bitwise AND, setting N and Z (C and V cleared)"}

for _width in (32, 64):
    _r, _sp = ("X", "SP") if _width == 64 else ("W", "WSP")
    for _name, _opc in _LOGICAL.items():
        _flags = _name == "ANDS"
        _op = "AND" if _flags else _name
        _rd = R("Rd", _width) if _flags else R_OR_SP("Rd", _width)
        _n = "N:1" if _width == 64 else "0"  # N = 1 (a 64-bit element) is UNDEFINED for a W register
        _aliases = ()
        if _name == "ORR":
            # MOV to SP is always ORR (MOVZ and MOVN cannot write SP), even of a move-wide value: mov sp, #6
            _aliases = (Alias("mov", (R_OR_SP("Rd", _width), MovImm(_width, "orr")),
                              partial(lambda w, f: f["Rn"] == 31 and not _move_wide_preferred(w, f), _width),
                              {"Rn": 31},
                              accepts=partial(lambda w, f: f["Rd"] == 31 or not _move_wide_preferred(w, f), _width)),)
        elif _flags:
            _aliases = (Alias("tst", (R("Rn", _width), BitmaskImm(_width)), _rd_is(31), {"Rd": 31}),)
        add(_form(f"{_name}_{_width}_log_imm", _name.lower(),
                  f"{_name} {'<' + _r + 'd>' if _flags else '<' + _r + 'd|' + _sp + '>'}, <{_r}n>, #<imm>",
                  f"{_LOGICAL_SUMMARY[_name]} with a bitmask immediate",
                  f"{_sf(_width)} {_opc} 100100 {_n} immr:6 imms:6 Rn:5 Rd:5",
                  (_rd, R("Rn", _width), BitmaskImm(_width)),
                  partial(scalar.logical_imm, datasize=_width, op=_op, setflags=_flags),
                  undefined_when=_bitmask_undefined(_width), canonical=_bitmask_canonical, aliases=_aliases))
        _imm6 = "imm6:6" if _width == 64 else "0 imm6:5"
        _aliases = ()
        if _name == "ORR":
            _aliases = (Alias("mov", (R("Rd", _width), R("Rm", _width)),
                              lambda f: f["shift"] == 0 and f["imm6"] == 0 and f["Rn"] == 31,
                              {"Rn": 31, "shift": 0, "imm6": 0}),)
        elif _flags:
            _aliases = (Alias("tst", (R("Rn", _width), ShiftedReg(_width, ror=True)), _rd_is(31), {"Rd": 31}),)
        add(_form(f"{_name}_{_width}_log_shift", _name.lower(),
                  f"{_name} <{_r}d>, <{_r}n>, <{_r}m>{{, <shift> #<amount>}}",
                  f"{_LOGICAL_SUMMARY[_name]} with a register shifted by LSL, LSR, ASR or ROR",
                  f"{_sf(_width)} {_opc} 01010 shift:2 0 Rm:5 {_imm6} Rn:5 Rd:5",
                  (R("Rd", _width), R("Rn", _width), ShiftedReg(_width, ror=True)),
                  partial(scalar.logical_shifted, datasize=_width, op=_op, setflags=_flags), aliases=_aliases))


# the inverted logical forms (N = 1): BIC, ORN (MVN), EON, BICS (operand2 = NOT(shifted Rm))
_INVERTED = {"BIC": ("00", "AND", "bitwise AND with the inverse of"), "ORN": ("01", "ORR", "bitwise OR with the inverse of"),
             "EON": ("10", "EOR", "bitwise exclusive OR with the inverse of"),
             "BICS": ("11", "AND", "bitwise AND with the inverse of")}

for _width in (32, 64):
    _r = "X" if _width == 64 else "W"
    _imm6 = "imm6:6" if _width == 64 else "0 imm6:5"
    for _name, (_opc, _op, _what) in _INVERTED.items():
        _aliases = ()
        if _name == "ORN":
            _aliases = (Alias("mvn", (R("Rd", _width), ShiftedReg(_width, ror=True)), _rn_is(31), {"Rn": 31}),)
        add(_form(f"{_name}_{_width}_log_shift", _name.lower(),
                  f"{_name} <{_r}d>, <{_r}n>, <{_r}m>{{, <shift> #<amount>}}",
                  f"{_what} a register shifted by LSL, LSR, ASR or ROR" + (", setting N and Z" if _name == "BICS" else ""),
                  f"{_sf(_width)} {_opc} 01010 shift:2 1 Rm:5 {_imm6} Rn:5 Rd:5",
                  (R("Rd", _width), R("Rn", _width), ShiftedReg(_width, ror=True)),
                  partial(scalar.logical_shifted, datasize=_width, op=_op, setflags=_name == "BICS", invert=True),
                  aliases=_aliases))


# ---- UBFM and SBFM (LSL, LSR, ASR, UBFX, UBFIZ, SBFX, SBFIZ, UXTB, UXTH, SXTB, SXTH, SXTW) -------------------

def _bitfield_aliases(width, signed):
    top = width - 1
    rd, rn = R("Rd", width), R("Rn", width)
    field_bits = 6 if width == 64 else 5

    def insert(f):  # UBFIZ/SBFIZ #lsb, #width
        if f["lsb"] + f["width"] > width:
            raise OperandError(f"lsb + width must be at most {width}, not {f['lsb']} + {f['width']}")
        return {**f, "immr": -f["lsb"] % width, "imms": f["width"] - 1}

    def extract(f):  # UBFX/SBFX #lsb, #width
        if f["lsb"] + f["width"] > width:
            raise OperandError(f"lsb + width must be at most {width}, not {f['lsb']} + {f['width']}")
        return {**f, "immr": f["lsb"], "imms": f["lsb"] + f["width"] - 1}

    def shift_left(f):
        return {**f, "immr": -f["shift"] % width, "imms": top - f["shift"]}

    u = "s" if signed else "u"
    aliases = [Alias("asr" if signed else "lsr", (rd, rn, Imm("immr", field_bits)), lambda f: f["imms"] == top,
                     {"imms": top})]
    if not signed:
        aliases.append(Alias("lsl", (rd, rn, BitfieldImm("shift", "lsl", width)),
                             lambda f: f["imms"] != top and f["imms"] + 1 == f["immr"], derive=shift_left,
                             accepts=lambda f: True))
    aliases.append(Alias(f"{u}bfiz", (rd, rn, BitfieldImm("lsb", "lsb_ubfiz", width),
                                      BitfieldImm("width", "width_ubfiz", width)),
                         lambda f: f["imms"] < f["immr"], derive=insert, accepts=lambda f: True))
    extends = [("b", 7), ("h", 15)] + ([("w", 31)] if signed and width == 64 else [])
    if signed or width == 32:  # UXTB/UXTH are W-only; SXTB/SXTH/SXTW extend a W register into an X
        for suffix, imms in extends:
            aliases.append(Alias(f"{u}xt{suffix}", (rd, R("Rn", 32)),
                                 partial(lambda s, f: f["immr"] == 0 and f["imms"] == s, imms),
                                 {"immr": 0, "imms": imms}))
    aliases.append(Alias(f"{u}bfx", (rd, rn, BitfieldImm("lsb", "lsb_ubfx", width),
                                     BitfieldImm("width", "width_ubfx", width)),
                         derive=extract, accepts=lambda f: True))
    return tuple(aliases)


for _width in (32, 64):
    _r = "X" if _width == 64 else "W"
    _fields = "1 immr:6 imms:6" if _width == 64 else "0 0 immr:5 0 imms:5"  # N = sf; a W form's immr, imms < 32
    _bits = 6 if _width == 64 else 5
    for _name, _opc, _signed in (("SBFM", "00", True), ("UBFM", "10", False)):
        add(_form(f"{_name}_{_width}", _name.lower(), f"{_name} <{_r}d>, <{_r}n>, #<immr>, #<imms>",
                  f"{'signed' if _signed else 'unsigned'} bitfield move (the shifts, extracts, inserts and extends)",
                  f"{_sf(_width)} {_opc} 100110 {_fields} Rn:5 Rd:5",
                  (R("Rd", _width), R("Rn", _width), Imm("immr", _bits), Imm("imms", _bits)),
                  partial(scalar.bitfield_move, datasize=_width, signed=_signed),
                  aliases=_bitfield_aliases(_width, _signed)))


# ---- MADD, MSUB (MUL, MNEG) --------------------------------------------------------------------------------

for _width in (32, 64):
    _r = "X" if _width == 64 else "W"
    for _name, _o0, _alias in (("MADD", "0", "mul"), ("MSUB", "1", "mneg")):
        _regs = [R(name, _width) for name in ("Rd", "Rn", "Rm", "Ra")]
        add(_form(f"{_name}_{_width}", _name.lower(), f"{_name} <{_r}d>, <{_r}n>, <{_r}m>, <{_r}a>",
                  f"multiply, and {'add to' if _o0 == '0' else 'subtract from'} a third register",
                  f"{_sf(_width)} 00 11011 000 Rm:5 {_o0} Ra:5 Rn:5 Rd:5", _regs,
                  partial(scalar.multiply_add, datasize=_width, sub_op=_o0 == "1"),
                  aliases=(Alias(_alias, tuple(_regs[:3]), lambda f: f["Ra"] == 31, {"Ra": 31}),)))


# UDF #imm16: permanently undefined (its every execution is UNDEFINED): what a raw word that decodes
# to no isasim form would also be, but named, so that a trace can hold one
add(A64Form("UDF", "udf", "UDF #<imm>", "permanently undefined", Encoding("0000000000000000 imm16:16"),
             (Imm("imm16", 16),), None, doc="UNDEFINED;", group="control"))
UNDEFINED_FORMS = {"UDF": "UDF is permanently undefined (Arm ARM C6.2.443)"}


# ---- BFM (BFI, BFC, BFXIL) and EXTR (ROR) --------------------------------------------------------------------

def _bfm_aliases(width):
    rd, rn = R("Rd", width), R("Rn", width)

    def insert(f):  # BFI #lsb, #width
        if f["lsb"] + f["width"] > width:
            raise OperandError(f"lsb + width must be at most {width}, not {f['lsb']} + {f['width']}")
        return {**f, "immr": -f["lsb"] % width, "imms": f["width"] - 1}

    def extract(f):  # BFXIL #lsb, #width
        if f["lsb"] + f["width"] > width:
            raise OperandError(f"lsb + width must be at most {width}, not {f['lsb']} + {f['width']}")
        return {**f, "immr": f["lsb"], "imms": f["lsb"] + f["width"] - 1}

    lsb, wid = BitfieldImm("lsb", "lsb_ubfiz", width), BitfieldImm("width", "width_ubfiz", width)
    # BFC (BFI from XZR) is printed as BFI by llvm without FEAT_v8.2 in its features, as the oracle's are
    return (Alias("bfi", (rd, rn, lsb, wid), lambda f: f["imms"] < f["immr"], derive=insert, accepts=lambda f: True),
            Alias("bfc", (rd, lsb, wid), lambda f: False, {"Rn": 31}, derive=insert, accepts=lambda f: True),
            Alias("bfxil", (rd, rn, BitfieldImm("lsb", "lsb_ubfx", width), BitfieldImm("width", "width_ubfx", width)),
                  derive=extract, accepts=lambda f: True))


for _width in (32, 64):
    _r = "X" if _width == 64 else "W"
    _fields = "1 immr:6 imms:6" if _width == 64 else "0 0 immr:5 0 imms:5"
    _bits = 6 if _width == 64 else 5
    add(_form(f"BFM_{_width}", "bfm", f"BFM <{_r}d>, <{_r}n>, #<immr>, #<imms>",
              "bitfield move, keeping the destination's other bits (BFI, BFC, BFXIL)",
              f"{_sf(_width)} 01 100110 {_fields} Rn:5 Rd:5",
              (R("Rd", _width), R("Rn", _width), Imm("immr", _bits), Imm("imms", _bits)),
              partial(scalar.bitfield_insert, datasize=_width), aliases=_bfm_aliases(_width)))
    _lsb = "imms:6" if _width == 64 else "0 imms:5"
    add(_form(f"EXTR_{_width}", "extr", f"EXTR <{_r}d>, <{_r}n>, <{_r}m>, #<lsb>",
              "extract a register's width of bits from a pair of registers, from bit lsb (ROR: the same register twice)",
              f"{_sf(_width)} 00 100111 {_sf(_width)} 0 Rm:5 {_lsb} Rn:5 Rd:5",
              (R("Rd", _width), R("Rn", _width), R("Rm", _width), Imm("imms", _bits)),
              partial(scalar.extract, datasize=_width),
              aliases=(Alias("ror", (R("Rd", _width), R("Rn", _width), Imm("imms", _bits)),
                             lambda f: f["Rn"] == f["Rm"], derive=lambda f: {**f, "Rm": f["Rn"]}),)))


# ---- ADR, ADRP -----------------------------------------------------------------------------------------------

for _name, _op, _unit, _what in (("ADR", "0", 1, "the address of a label (within 1 MiB)"),
                                 ("ADRP", "1", 4096, "the address of a label's 4 KiB page (within 4 GiB)")):
    add(_form(_name, _name.lower(), f"{_name} <Xd>, <label>", f"form {_what}, PC-relative",
              f"{_op} immlo:2 10000 immhi:19 Rd:5", (R("Rd", 64), PcRelative("imm", 21, unit=_unit, split=True)),
              partial(scalar.pc_relative, page=_op == "1"), position_dependent=True))

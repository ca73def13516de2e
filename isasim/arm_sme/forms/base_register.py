"""The A64 base data-processing (register) forms beyond scalar.py's: the shifts by a register (LSLV, LSRV,
ASRV, RORV, printed as LSL, LSR, ASR, ROR), UDIV/SDIV, RBIT, REV16, REV32, REV, CLZ, CLS, the long and high
multiplies (SMADDL, SMSUBL, UMADDL, UMSUBL with SMULL, SMNEGL, UMULL, UMNEGL; SMULH, UMULH), the conditional
selects (CSEL, CSINC, CSINV, CSNEG with CSET, CSETM, CINC, CINV, CNEG) and the conditional compares (CCMP,
CCMN, register and immediate).  Aliases are listed in the order llvm tries them, with the Arm ARM's
"preferred when".
"""

from __future__ import annotations

from functools import partial

from ..operands import Condition, Imm
from ..operands.base import FpReg, InvertedCondition
from ..semantics import base_register as semantics
from .base import Alias, add
from .scalar import R, _form, _sf

# ---- shifts by a register, divides --------------------------------------------------------------------------

for _width in (32, 64):
    _r = "X" if _width == 64 else "W"
    _regs = (R("Rd", _width), R("Rn", _width), R("Rm", _width))
    for _name, _op2, _alias in (("LSLV", "00", "lsl"), ("LSRV", "01", "lsr"), ("ASRV", "10", "asr"),
                                ("RORV", "11", "ror")):
        add(_form(f"{_name}_{_width}", _name.lower(), f"{_name} <{_r}d>, <{_r}n>, <{_r}m>",
                  f"{_alias.upper()} by a register: the shift amount is Rm modulo {_width}",
                  f"{_sf(_width)} 0 0 11010110 Rm:5 0010 {_op2} Rn:5 Rd:5", _regs,
                  partial(semantics.shift_variable, datasize=_width, shift_type=int(_op2, 2)),
                  aliases=(Alias(_alias, _regs),)))
    for _name, _o1 in (("UDIV", "0"), ("SDIV", "1")):
        add(_form(f"{_name}_{_width}", _name.lower(), f"{_name} <{_r}d>, <{_r}n>, <{_r}m>",
                  f"{'un' if _o1 == '0' else ''}signed divide, rounding towards zero (a divisor of zero gives 0)",
                  f"{_sf(_width)} 0 0 11010110 Rm:5 00001 {_o1} Rn:5 Rd:5", _regs,
                  partial(semantics.divide, datasize=_width, unsigned=_o1 == "0")))

# ---- one source: RBIT, REV16, REV32, REV, CLZ, CLS ------------------------------------------------------------

for _width in (32, 64):
    _r = "X" if _width == 64 else "W"
    _ops = [("RBIT", "000000", "reverse the order of the bits", partial(semantics.reverse_bits, datasize=_width)),
            ("REV16", "000001", "reverse the bytes of each halfword",
             partial(semantics.reverse_bytes, datasize=_width, container=16))]
    if _width == 64:
        _ops.append(("REV32", "000010", "reverse the bytes of each word",
                     partial(semantics.reverse_bytes, datasize=64, container=32)))
    _ops += [("REV", "000011" if _width == 64 else "000010", "reverse the order of the bytes",
              partial(semantics.reverse_bytes, datasize=_width, container=_width)),
             ("CLZ", "000100", "count the leading zero bits", partial(semantics.count_leading, datasize=_width,
                                                                    signs=False)),
             ("CLS", "000101", "count the leading bits equal to the sign bit (after it)",
              partial(semantics.count_leading, datasize=_width, signs=True))]
    for _name, _opcode, _what, _function in _ops:
        _regs = (R("Rd", _width), R("Rn", _width))
        add(_form(f"{_name}_{_width}", _name.lower(), f"{_name} <{_r}d>, <{_r}n>", _what,
                  f"{_sf(_width)} 1 0 11010110 00000 {_opcode} Rn:5 Rd:5", _regs, _function,
                  aliases=(Alias("rev64", _regs, lambda f: False, accepts=lambda f: True),)
                  if _name == "REV" and _width == 64 else ()))

# ---- long and high multiplies -------------------------------------------------------------------------------

for _name, _u, _o0, _alias in (("SMADDL", "0", "0", "smull"), ("SMSUBL", "0", "1", "smnegl"),
                               ("UMADDL", "1", "0", "umull"), ("UMSUBL", "1", "1", "umnegl")):
    _regs = (R("Rd", 64), R("Rn", 32), R("Rm", 32), R("Ra", 64))
    add(_form(_name, _name.lower(), f"{_name} <Xd>, <Wn>, <Wm>, <Xa>",
              f"multiply two {'un' if _u == '1' else ''}signed words into 64 bits, and "
              f"{'subtract the product from' if _o0 == '1' else 'add it to'} a 64-bit register",
              f"1 00 11011 {_u} 01 Rm:5 {_o0} Ra:5 Rn:5 Rd:5", _regs,
              partial(semantics.multiply_long, unsigned=_u == "1", sub_op=_o0 == "1"),
              aliases=(Alias(_alias, _regs[:3], lambda f: f["Ra"] == 31, {"Ra": 31}),)))

for _name, _u in (("SMULH", "0"), ("UMULH", "1")):
    add(_form(_name, _name.lower(), f"{_name} <Xd>, <Xn>, <Xm>",
              f"the upper 64 bits of the 128-bit product of two {'un' if _u == '1' else ''}signed registers",
              f"1 00 11011 {_u} 10 Rm:5 0 11111 Rn:5 Rd:5", (R("Rd", 64), R("Rn", 64), R("Rm", 64)),
              partial(semantics.multiply_high, unsigned=_u == "1")))

# ---- conditional select (CSET, CSETM, CINC, CINV, CNEG) ------------------------------------------------------


def _select_aliases(width, short, long):
    """``short`` (CSET, CSETM: both sources ZR) and ``long`` (CINC, CINV, CNEG: one source twice), both with the
    inverted condition, as llvm prints them (never for AL or NV)."""
    rd, rn = R("Rd", width), R("Rn", width)
    aliases = []
    if short:
        aliases.append(Alias(short, (rd, InvertedCondition()),
                             lambda f: f["Rn"] == 31 and f["Rm"] == 31 and f["cond"] < 14, {"Rn": 31, "Rm": 31}))
    aliases.append(Alias(long, (rd, rn, InvertedCondition()),
                         lambda f: f["Rn"] == f["Rm"] and f["Rn"] != 31 and f["cond"] < 14,
                         derive=lambda f: {**f, "Rm": f["Rn"]},
                         accepts=lambda f: True))
    return tuple(aliases)


for _width in (32, 64):
    _r = "X" if _width == 64 else "W"
    for _name, _op, _o2, _short, _long, _what in (
            ("CSEL", "0", "0", None, None, "Rn if the condition holds, else Rm"),
            ("CSINC", "0", "1", "cset", "cinc", "Rn if the condition holds, else Rm + 1"),
            ("CSINV", "1", "0", "csetm", "cinv", "Rn if the condition holds, else NOT(Rm)"),
            ("CSNEG", "1", "1", None, "cneg", "Rn if the condition holds, else -Rm")):
        add(_form(f"{_name}_{_width}", _name.lower(), f"{_name} <{_r}d>, <{_r}n>, <{_r}m>, <cond>", _what,
                  f"{_sf(_width)} {_op} 0 11010100 Rm:5 cond:4 0 {_o2} Rn:5 Rd:5",
                  (R("Rd", _width), R("Rn", _width), R("Rm", _width), Condition()),
                  partial(semantics.conditional_select, datasize=_width, else_inv=_op == "1", else_inc=_o2 == "1"),
                  aliases=_select_aliases(_width, _short, _long) if _long else ()))

# ---- conditional compare -------------------------------------------------------------------------------------

for _width in (32, 64):
    _r = "X" if _width == 64 else "W"
    for _name, _op in (("CCMN", "0"), ("CCMP", "1")):
        _what = f"if the condition holds, the flags of {'Rn + operand' if _op == '0' else 'Rn - operand'}; else #nzcv"
        add(_form(f"{_name}_{_width}_reg", _name.lower(), f"{_name} <{_r}n>, <{_r}m>, #<nzcv>, <cond>",
                  _what + " (a register)", f"{_sf(_width)} {_op} 1 11010010 Rm:5 cond:4 0 0 Rn:5 0 nzcv:4",
                  (R("Rn", _width), R("Rm", _width), Imm("nzcv", 4), Condition()),
                  partial(semantics.conditional_compare, datasize=_width, sub_op=_op == "1", immediate=False)))
        add(_form(f"{_name}_{_width}_imm", _name.lower(), f"{_name} <{_r}n>, #<imm>, #<nzcv>, <cond>",
                  _what + " (an immediate 0-31)", f"{_sf(_width)} {_op} 1 11010010 imm5:5 cond:4 1 0 Rn:5 0 nzcv:4",
                  (R("Rn", _width), Imm("imm5", 5), Imm("nzcv", 4), Condition()),
                  partial(semantics.conditional_compare, datasize=_width, sub_op=_op == "1", immediate=True)))


# ---- add and subtract with carry (NGC, NGCS) ----------------------------------------------------------------

for _width in (32, 64):
    _r = "X" if _width == 64 else "W"
    _regs = (R("Rd", _width), R("Rn", _width), R("Rm", _width))
    for _name, _op, _s, _alias in (("ADC", "0", "0", None), ("ADCS", "0", "1", None), ("SBC", "1", "0", "ngc"),
                                   ("SBCS", "1", "1", "ngcs")):
        add(_form(f"{_name}_{_width}", _name.lower(), f"{_name} <{_r}d>, <{_r}n>, <{_r}m>",
                  f"{'subtract' if _op == '1' else 'add'} with carry (PSTATE.C)"
                  + (", setting NZCV" if _s == "1" else ""),
                  f"{_sf(_width)} {_op} {_s} 11010000 Rm:5 000000 Rn:5 Rd:5", _regs,
                  partial(semantics.add_sub_carry, datasize=_width, sub_op=_op == "1", setflags=_s == "1"),
                  aliases=(Alias(_alias, (_regs[0], _regs[2]), lambda f: f["Rn"] == 31, {"Rn": 31}),) if _alias else ()))

# ---- FMOV between a general register and an FP register --------------------------------------------------------

for _width, _sf_bit, _ftype, _letter in ((32, "0", "00", "s"), (64, "1", "01", "d")):
    _r = "X" if _width == 64 else "W"
    add(_form(f"FMOV_{_r}_{_letter.upper()}", "fmov", f"FMOV <{_r}d>, <{_letter.upper()}n>",
              f"move the {_width} bits of an FP register to a general register",
              f"{_sf_bit} 0 0 11110 {_ftype} 1 00 110 000000 Rn:5 Rd:5", (R("Rd", _width), FpReg("Rn", _letter)),
              partial(semantics.fmov_general, datasize=_width, to_general=True)))
    add(_form(f"FMOV_{_letter.upper()}_{_r}", "fmov", f"FMOV <{_letter.upper()}d>, <{_r}n>",
              f"move a {_width}-bit general register to an FP register (the rest of the vector zeroed)",
              f"{_sf_bit} 0 0 11110 {_ftype} 1 00 111 000000 Rn:5 Rd:5", (FpReg("Rd", _letter), R("Rn", _width)),
              partial(semantics.fmov_general, datasize=_width, to_general=False)))

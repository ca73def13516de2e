"""The A64 base loads and stores: LDR/STR of X and W, LDRB/LDRH/STRB/STRH, LDRSB/LDRSH (into W or X) and
LDRSW, and LDR/STR of the FP/SIMD registers B, H, S, D and Q, each with an unsigned offset, an unscaled one
(LDUR/STUR: clang also takes ``ldr x0, [x1, #3]`` for it), pre-index, post-index and a register offset
(LSL, UXTW, SXTW, SXTX); LDR (literal) of W, X, S, D, Q and LDRSW; LDP/STP of W, X, S, D and Q and LDPSW,
with an offset, pre-index and post-index (the callee-saved d8-d15 a streaming function saves go through
STP/LDP of D registers).
"""

from __future__ import annotations

from functools import partial

from ..operands import BaseOffset, BaseOnly, PreIndex, QReg, SImm, UnscaledOffset
from ..operands.base import FpReg, PairOffset, PairPreIndex, PcRelative, PrefetchOp, RegisterOffset, ScaledSImm
from ..semantics import base_memory as semantics
from .base import Alias, add
from .scalar import R, _form

GROUP = "memory"


def _writeback_overlap(fields):
    if fields["Rn"] == fields["Rt"] and fields["Rn"] != 31:
        return ("the base register is also the transfer register, with writeback (CONSTRAINED UNPREDICTABLE in "
                "the Arm ARM; clang refuses it too)")
    return None


def _pair_undefined(load, writeback):
    def undefined(fields):
        if load and fields["Rt"] == fields["Rt2"]:
            return "a load pair into the same register twice (CONSTRAINED UNPREDICTABLE; clang refuses it too)"
        if writeback and fields["Rn"] != 31 and fields["Rn"] in (fields["Rt"], fields["Rt2"]):
            return ("the base register is also a transfer register, with writeback (CONSTRAINED UNPREDICTABLE; "
                    "clang refuses it too)")
        return None
    return undefined


def _fp_pair_undefined(load):
    return lambda fields: ("a load pair into the same register twice (CONSTRAINED UNPREDICTABLE; clang refuses it too)"
                           if load and fields["Rt"] == fields["Rt2"] else None)


def _extend_reserved(fields):
    if not fields["option"] & 2:
        return f"the index extend option {fields['option']:03b} is reserved (UNDEFINED)"
    return None


# ---- single registers ----------------------------------------------------------------------------------------
# (id, size bits, V, opc, bytes, the register operand, load, mnemonic, unscaled mnemonic, regsize, signed, what)

def _single():
    rows = []
    for load in (True, False):
        name, unscaled = ("LDR", "LDUR") if load else ("STR", "STUR")
        verb = "load" if load else "store"
        rows += [("64", "11", "0", "01" if load else "00", 8, R("Rt", 64), load, name, unscaled, 64, False,
                  f"{verb} a 64-bit X register"),
                 ("32", "10", "0", "01" if load else "00", 4, R("Rt", 32), load, name, unscaled, 32, False,
                  f"{verb} a 32-bit W register"),
                 ("32", "00", "0", "01" if load else "00", 1, R("Rt", 32), load, name + "B", unscaled + "B", 32, False,
                  f"{verb} a byte" + (" zero-extended into a W register" if load else " from a W register")),
                 ("32", "01", "0", "01" if load else "00", 2, R("Rt", 32), load, name + "H", unscaled + "H", 32, False,
                  f"{verb} a halfword" + (" zero-extended into a W register" if load else " from a W register")),
                 ("Q", "00", "1", "11" if load else "10", 16, QReg("Rt"), load, name, unscaled, 128, False,
                  f"{verb} a 128-bit Q register")]
        for letter, size, nbytes in (("B", "00", 1), ("H", "01", 2), ("S", "10", 4), ("D", "11", 8)):
            rows.append((letter, size, "1", "01" if load else "00", nbytes, FpReg("Rt", letter.lower()), load, name,
                         unscaled, 8 * nbytes, False, f"{verb} a {8 * nbytes}-bit {letter} register"))
    for suffix, size, nbytes, what in (("B", "00", 1, "byte"), ("H", "01", 2, "halfword")):
        rows += [("64", size, "0", "10", nbytes, R("Rt", 64), True, "LDRS" + suffix, "LDURS" + suffix, 64, True,
                  f"load a {what} sign-extended into an X register"),
                 ("32", size, "0", "11", nbytes, R("Rt", 32), True, "LDRS" + suffix, "LDURS" + suffix, 32, True,
                  f"load a {what} sign-extended into a W register")]
    rows.append(("64", "10", "0", "10", 4, R("Rt", 64), True, "LDRSW", "LDURSW", 64, True,
                 "load a word sign-extended into an X register"))
    return rows


for (_id, _size, _v, _opc, _bytes, _reg, _load, _name, _unscaled, _regsize, _signed,
     _what) in _single():
    _register = "V" if _v == "1" else "X"
    _kw = dict(size=_bytes, register=_register, load=_load)
    if _register == "X":
        _kw.update(regsize=_regsize, signed=_signed)
    _overlap = {} if _register == "V" else {"undefined_when": _writeback_overlap}
    _rt = f"<{_reg.text({'Rt': 0})[0].upper()}t>"
    _shift = _bytes.bit_length() - 1
    add(_form(f"{_name}_{_id}_uoff", _name.lower(), f"{_name} {_rt}, [<Xn|SP>{{, #<pimm>}}]",
              _what + " (unsigned offset, a multiple of the size)", f"{_size} 111 {_v} 01 {_opc} imm12:12 Rn:5 Rt:5",
              (_reg, BaseOffset(_bytes)), partial(semantics.load_store, **_kw), group=GROUP))
    add(_form(f"{_unscaled}_{_id}", _unscaled.lower(), f"{_unscaled} {_rt}, [<Xn|SP>{{, #<simm>}}]",
              _what + " (unscaled signed offset, -256 to 255)", f"{_size} 111 {_v} 00 {_opc} 0 imm9:9 00 Rn:5 Rt:5",
              (_reg, UnscaledOffset()), partial(semantics.load_store, **_kw), group=GROUP,
              aliases=(Alias(_name.lower(), (_reg, UnscaledOffset()), lambda f: False,
                             accepts=lambda f: True),)))  # clang takes ldr x0, [x1, #3] as LDUR
    add(_form(f"{_name}_{_id}_pre", _name.lower(), f"{_name} {_rt}, [<Xn|SP>, #<simm>]!",
              _what + " (pre-index: the base moves first)", f"{_size} 111 {_v} 00 {_opc} 0 imm9:9 11 Rn:5 Rt:5",
              (_reg, PreIndex()), partial(semantics.load_store_pre, **_kw), group=GROUP, **_overlap))
    add(_form(f"{_name}_{_id}_post", _name.lower(), f"{_name} {_rt}, [<Xn|SP>], #<simm>",
              _what + " (post-index: the base moves after)", f"{_size} 111 {_v} 00 {_opc} 0 imm9:9 01 Rn:5 Rt:5",
              (_reg, BaseOnly(), SImm("imm9", 9)), partial(semantics.load_store_post, **_kw), group=GROUP,
              **_overlap))
    add(_form(f"{_name}_{_id}_reg", _name.lower(), f"{_name} {_rt}, [<Xn|SP>, (<Wm>|<Xm>){{, <extend> {{<amount>}}}}]",
              _what + f" (register offset: Xm, or Wm zero- or sign-extended, optionally shifted by {_shift})",
              f"{_size} 111 {_v} 00 {_opc} 1 Rm:5 option:3 S:1 10 Rn:5 Rt:5",
              (_reg, RegisterOffset(_shift)), partial(semantics.load_store_register, **_kw), group=GROUP,
              undefined_when=_extend_reserved))

# ---- LDR (literal) -----------------------------------------------------------------------------------------------

for _id, _opc, _v, _reg, _name, _kw in (
        ("32", "00", "0", R("Rt", 32), "LDR", dict(size=4, register="X", regsize=32, signed=False)),
        ("64", "01", "0", R("Rt", 64), "LDR", dict(size=8, register="X", regsize=64, signed=False)),
        ("64", "10", "0", R("Rt", 64), "LDRSW", dict(size=4, register="X", regsize=64, signed=True)),
        ("S", "00", "1", FpReg("Rt", "s"), "LDR", dict(size=4, register="V")),
        ("D", "01", "1", FpReg("Rt", "d"), "LDR", dict(size=8, register="V")),
        ("Q", "10", "1", QReg("Rt"), "LDR", dict(size=16, register="V"))):
    add(_form(f"{_name}_{_id}_lit", _name.lower(), f"{_name} <{_reg.text({'Rt': 0})[0].upper()}t>, <label>",
              f"load {_kw['size'] * 8} bits from a PC-relative address (a literal pool, within 1 MiB)"
              + (", sign-extended" if _name == "LDRSW" else ""),
              f"{_opc} 011 {_v} 00 imm19:19 Rt:5", (_reg, PcRelative("imm19", 19, unit=4)),
              partial(semantics.load_literal, **_kw), group=GROUP, position_dependent=True))

# ---- LDP, STP, LDPSW -------------------------------------------------------------------------------------------

for _id, _opc, _v, _bytes, _letter in (("32", "00", "0", 4, "w"), ("64", "10", "0", 8, "x"), ("SW", "01", "0", 4, "x"),
                                        ("S", "00", "1", 4, "s"), ("D", "01", "1", 8, "d"), ("Q", "10", "1", 16, "q")):
    for _load in (True, False):
        if _id == "SW" and not _load:
            continue  # opc 01 with L = 0 is STGP (FEAT_MTE), not a store of this kind
        _name = ("LDPSW" if _id == "SW" else "LDP") if _load else "STP"
        _form_id = f"{_name}_{'64' if _id == 'SW' else _id}"
        _register = "V" if _v == "1" else "X"
        if _register == "V":
            _regs = (FpReg("Rt", _letter), FpReg("Rt2", _letter))
        else:
            _regs = (R("Rt", 64 if _letter == "x" else 32), R("Rt2", 64 if _letter == "x" else 32))
        _kw = dict(size=_bytes, register=_register, load=_load, signed=_id == "SW")
        _what = (f"{'load' if _load else 'store'} two {8 * _bytes}-bit {_letter.upper()} registers "
                 f"{'from' if _load else 'to'} consecutive memory" + (", sign-extending" if _id == "SW" else ""))
        _rt = f"<{_letter.upper()}t1>, <{_letter.upper()}t2>"
        for _mode, _bits, _address, _function, _writeback, _how in (
                ("off", "10", (PairOffset(_bytes),), semantics.load_store_pair, False, "signed offset"),
                ("pre", "11", (PairPreIndex(_bytes),), semantics.load_store_pair_pre, True,
                 "pre-index: the base moves first"),
                ("post", "01", (BaseOnly(), ScaledSImm(_bytes)), semantics.load_store_pair_post, True,
                 "post-index: the base moves after")):
            _undefined = (_fp_pair_undefined(_load) if _register == "V" else _pair_undefined(_load, _writeback))
            _syntax = {"off": "[<Xn|SP>{, #<imm>}]", "pre": "[<Xn|SP>, #<imm>]!", "post": "[<Xn|SP>], #<imm>"}[_mode]
            add(_form(f"{_form_id}_{_mode}", _name.lower(), f"{_name} {_rt}, {_syntax}",
                      f"{_what} ({_how}, a multiple of {_bytes} in {-64 * _bytes} to {63 * _bytes})",
                      f"{_opc} 101 {_v} 0 {_bits} {'1' if _load else '0'} imm7:7 Rt2:5 Rn:5 Rt:5",
                      (*_regs, *_address), partial(_function, **_kw), group=GROUP, undefined_when=_undefined))


# ---- PRFM (PRFUM): a prefetch hint, with the addressing forms of a 64-bit load ---------------------------------

_PRFOP = PrefetchOp()


def _prfm_register_undefined(fields):
    if fields["Rt"] >> 3 == 3:  # Rt = 11xxx: RPRFM, the range prefetch of FEAT_RPRFM, another instruction
        return "prefetch operations #24-#31 with a register offset are RPRFM (FEAT_RPRFM), which isasim does not model"
    return _extend_reserved(fields)
for _id, _mnemonic, _pattern, _address, _what in (
        ("PRFM_uoff", "prfm", "11 111 0 01 10 imm12:12 Rn:5 Rt:5", BaseOffset(8), "unsigned offset"),
        ("PRFUM", "prfum", "11 111 0 00 10 0 imm9:9 00 Rn:5 Rt:5", UnscaledOffset(), "unscaled signed offset"),
        ("PRFM_reg", "prfm", "11 111 0 00 10 1 Rm:5 option:3 S:1 10 Rn:5 Rt:5", RegisterOffset(3), "register offset"),
        ("PRFM_lit", "prfm", "11 011 0 00 imm19:19 Rt:5", PcRelative("imm19", 19, unit=4), "PC-relative")):
    _extra = {"undefined_when": _prfm_register_undefined} if _id == "PRFM_reg" else {}
    if _id == "PRFUM":
        _extra["aliases"] = (Alias("prfm", (_PRFOP, UnscaledOffset()), lambda f: False, accepts=lambda f: True),)
    add(_form(_id, _mnemonic, f"{_mnemonic.upper()} <prfop>, <address>",
              f"prefetch memory ({_what}): a hint, which isasim runs as NOP (no access, no fault)", _pattern,
              (_PRFOP, _address), semantics.prefetch, group=GROUP, **_extra))

"""The AdvSIMD (NEON) integer forms clang emits in the ordinary (non-streaming) C helpers around SME kernels at
-O1..-O3 (issue 28: measured on plain sums, dot products, clamps, widening adds, table lookups and quantising
loops): MOVI/MVNI/ORR/BIC (immediate); DUP, INS, UMOV, SMOV (and their MOV aliases); ADD, SUB, MUL, MLA, MLS;
SMAX/SMIN/UMAX/UMIN and the pairwise forms; ADDP (vector and scalar); CMEQ/CMGT/CMGE/CMHI/CMHS/CMTST (and
against zero); AND/BIC/ORR(MOV)/ORN/EOR/BSL/BIT/BIF; SADDL/UADDL/SSUBL/USUBL, SADDW/UADDW/SSUBW/USUBW,
SMULL/UMULL/SMLAL/UMLAL/SMLSL/UMLSL (each with its '2' form); XTN/SQXTN/UQXTN(2); NEG/ABS/NOT(MVN); ADDV,
SADDLV/UADDLV, SMAXV/SMINV/UMAXV/UMINV; SHL/SSHR/USHR, SSHLL/USHLL(2) (SXTL/UXTL); TBL/TBX of one to four
registers; ZIP1/ZIP2/UZP1/UZP2/TRN1/TRN2; EXT.  One declaration per arrangement: the size and Q bits are
fixed in the form, as llvm names them (.8b ... .2d).  Illegal in streaming mode (no FEAT_SME_FA64), but for
UMOV and SMOV of element 0, which QEMU runs there too.
"""

from __future__ import annotations

from functools import partial

from ..operands.advsimd import ByteMaskImm, ShiftedImm8, ShiftImm, VElement, VList, VReg, ZeroImm
from ..operands import Imm
from ..operands.base import FpReg
from ..semantics import advsimd as semantics
from .base import Alias, add
from .scalar import R, _form

_LETTER = "bhsd"


def _arr(size: int, q: int) -> str:
    return f"{(64 << q) // (8 << size)}{_LETTER[size]}"


def _vector(id, mnemonic, syntax, summary, pattern, operands, function, **extra):
    add(_form(id, mnemonic, syntax, summary, pattern, operands, function, group="advsimd", **extra))


# (size, Q) pairs; 1d (size 3, Q 0) is reserved wherever it appears
_ALL = [(s, q) for s in range(4) for q in (0, 1) if (s, q) != (3, 0)]
_NO_D = [(s, q) for s in range(3) for q in (0, 1)]

# ---- three registers of the same type ------------------------------------------------------------------------

_SAME = [  # name, U, opcode, arrangements, semantics, what
    ("ADD", "0", "10000", _ALL, partial(semantics.add_sub, sub_op=False), "add"),
    ("SUB", "1", "10000", _ALL, partial(semantics.add_sub, sub_op=True), "subtract"),
    ("MUL", "0", "10011", _NO_D, partial(semantics.multiply, accumulate=False, sub_op=False), "multiply"),
    ("MLA", "0", "10010", _NO_D, partial(semantics.multiply, accumulate=True, sub_op=False), "multiply-add"),
    ("MLS", "1", "10010", _NO_D, partial(semantics.multiply, accumulate=True, sub_op=True), "multiply-subtract"),
    ("SMAX", "0", "01100", _NO_D, partial(semantics.max_min, unsigned=False, minimum=False), "signed maximum"),
    ("SMIN", "0", "01101", _NO_D, partial(semantics.max_min, unsigned=False, minimum=True), "signed minimum"),
    ("UMAX", "1", "01100", _NO_D, partial(semantics.max_min, unsigned=True, minimum=False), "unsigned maximum"),
    ("UMIN", "1", "01101", _NO_D, partial(semantics.max_min, unsigned=True, minimum=True), "unsigned minimum"),
    ("SMAXP", "0", "10100", _NO_D, partial(semantics.max_min, unsigned=False, minimum=False, pair=True),
     "signed maximum of adjacent pairs"),
    ("SMINP", "0", "10101", _NO_D, partial(semantics.max_min, unsigned=False, minimum=True, pair=True),
     "signed minimum of adjacent pairs"),
    ("UMAXP", "1", "10100", _NO_D, partial(semantics.max_min, unsigned=True, minimum=False, pair=True),
     "unsigned maximum of adjacent pairs"),
    ("UMINP", "1", "10101", _NO_D, partial(semantics.max_min, unsigned=True, minimum=True, pair=True),
     "unsigned minimum of adjacent pairs"),
    ("ADDP", "0", "10111", _ALL, semantics.add_pairwise, "add adjacent pairs (of Vn:Vm)"),
    ("CMEQ", "1", "10001", _ALL, partial(semantics.compare, cmp="eq"), "compare equal (all ones or zeros)"),
    ("CMTST", "0", "10001", _ALL, partial(semantics.compare, cmp="tst"), "test bits (AND nonzero: all ones)"),
    ("CMGT", "0", "00110", _ALL, partial(semantics.compare, cmp="gt"), "compare signed greater than"),
    ("CMGE", "0", "00111", _ALL, partial(semantics.compare, cmp="ge"), "compare signed greater or equal"),
    ("CMHI", "1", "00110", _ALL, partial(semantics.compare, cmp="hi"), "compare unsigned higher"),
    ("CMHS", "1", "00111", _ALL, partial(semantics.compare, cmp="hs"), "compare unsigned higher or same"),
]

for _name, _u, _opcode, _arrs, _function, _what in _SAME:
    for _size, _q in _arrs:
        _t = _arr(_size, _q)
        _esize, _datasize = 8 << _size, 64 << _q
        _vector(f"{_name}_v_{_t}", _name.lower(), f"{_name} <Vd>.{_t}, <Vn>.{_t}, <Vm>.{_t}",
                f"{_what}, element by element ({_t})",
                f"0 {_q} {_u} 01110 size={_size:02b} 1 Rm:5 {_opcode} 1 Rn:5 Rd:5",
                (VReg("Rd", _t), VReg("Rn", _t), VReg("Rm", _t)),
                partial(_function, esize=_esize, datasize=_datasize))

for _name, _u, _opc in (("AND", "0", 0), ("BIC", "0", 1), ("ORR", "0", 2), ("ORN", "0", 3), ("EOR", "1", 0),
                        ("BSL", "1", 1), ("BIT", "1", 2), ("BIF", "1", 3)):
    for _q in (0, 1):
        _t = "16b" if _q else "8b"
        _regs = (VReg("Rd", _t), VReg("Rn", _t), VReg("Rm", _t))
        _aliases = (Alias("mov", _regs[:2], lambda f: f["Rn"] == f["Rm"], derive=lambda f: {**f, "Rm": f["Rn"]}),
                    ) if _name == "ORR" else ()
        _vector(f"{_name}_v_{_t}", _name.lower(), f"{_name} <Vd>.{_t}, <Vn>.{_t}, <Vm>.{_t}",
                f"bitwise {_name} of the whole vector" + (" (MOV when Vn = Vm)" if _name == "ORR" else ""),
                f"0 {_q} {_u} 01110 opc={_opc:02b} 1 Rm:5 00011 1 Rn:5 Rd:5", _regs,
                partial(semantics.logical, datasize=64 << _q, op=_name.lower()), aliases=_aliases)

# ---- three registers of different types: long and wide ---------------------------------------------------------

_DIFFERENT = [  # name, U, opcode, semantics
    ("SADDL", "0", "0000", partial(semantics.add_sub_long, unsigned=False, sub_op=False, wide=False)),
    ("UADDL", "1", "0000", partial(semantics.add_sub_long, unsigned=True, sub_op=False, wide=False)),
    ("SADDW", "0", "0001", partial(semantics.add_sub_long, unsigned=False, sub_op=False, wide=True)),
    ("UADDW", "1", "0001", partial(semantics.add_sub_long, unsigned=True, sub_op=False, wide=True)),
    ("SSUBL", "0", "0010", partial(semantics.add_sub_long, unsigned=False, sub_op=True, wide=False)),
    ("USUBL", "1", "0010", partial(semantics.add_sub_long, unsigned=True, sub_op=True, wide=False)),
    ("SSUBW", "0", "0011", partial(semantics.add_sub_long, unsigned=False, sub_op=True, wide=True)),
    ("USUBW", "1", "0011", partial(semantics.add_sub_long, unsigned=True, sub_op=True, wide=True)),
    ("SMLAL", "0", "1000", partial(semantics.multiply_long, unsigned=False, accumulate=True, sub_op=False)),
    ("UMLAL", "1", "1000", partial(semantics.multiply_long, unsigned=True, accumulate=True, sub_op=False)),
    ("SMLSL", "0", "1010", partial(semantics.multiply_long, unsigned=False, accumulate=True, sub_op=True)),
    ("UMLSL", "1", "1010", partial(semantics.multiply_long, unsigned=True, accumulate=True, sub_op=True)),
    ("SMULL", "0", "1100", partial(semantics.multiply_long, unsigned=False, accumulate=False, sub_op=False)),
    ("UMULL", "1", "1100", partial(semantics.multiply_long, unsigned=True, accumulate=False, sub_op=False)),
]

for _name, _u, _opcode, _function in _DIFFERENT:
    _wide = _name[-1] == "W"
    for _size in range(3):
        for _q in (0, 1):
            _ta, _tb = _arr(_size + 1, 1), _arr(_size, _q)
            _mnemonic = _name.lower() + ("2" if _q else "")
            _vector(f"{_name}{'2' if _q else ''}_{_ta}", _mnemonic,
                    f"{_mnemonic.upper()} <Vd>.{_ta}, <Vn>.{_ta if _wide else _tb}, <Vm>.{_tb}",
                    f"{_name} of the {'upper' if _q else 'lower'} half's {_LETTER[_size]} elements, "
                    f"into {2 * (8 << _size)}-bit elements",
                    f"0 {_q} {_u} 01110 size={_size:02b} 1 Rm:5 {_opcode} 00 Rn:5 Rd:5",
                    (VReg("Rd", _ta), VReg("Rn", _ta if _wide else _tb), VReg("Rm", _tb)),
                    partial(_function, esize=8 << _size, part=_q))

# ---- two-register miscellaneous ------------------------------------------------------------------------------

for _name, _u, _opcode, _saturate, _unsigned in (("XTN", "0", "10010", False, False),
                                                ("SQXTN", "0", "10100", True, False),
                                                ("UQXTN", "1", "10100", True, True)):
    for _size in range(3):
        for _q in (0, 1):
            _tb, _ta = _arr(_size, _q), _arr(_size + 1, 1)
            _mnemonic = _name.lower() + ("2" if _q else "")
            _vector(f"{_name}{'2' if _q else ''}_{_tb}", _mnemonic, f"{_mnemonic.upper()} <Vd>.{_tb}, <Vn>.{_ta}",
                    f"narrow each {2 * (8 << _size)}-bit element to {8 << _size} bits"
                    + (" (saturating)" if _saturate else " (its low half)")
                    + (", into the upper half of Vd (the lower kept)" if _q else ""),
                    f"0 {_q} {_u} 01110 size={_size:02b} 10000 {_opcode} 10 Rn:5 Rd:5",
                    (VReg("Rd", _tb), VReg("Rn", _ta)),
                    partial(semantics.extract_narrow, esize=8 << _size, part=_q, saturate=_saturate,
                            unsigned=_unsigned))

for _name, _u, _opcode, _op in (("NEG", "1", "01011", "neg"), ("ABS", "0", "01011", "abs")):
    for _size, _q in _ALL:
        _t = _arr(_size, _q)
        _vector(f"{_name}_v_{_t}", _name.lower(), f"{_name} <Vd>.{_t}, <Vn>.{_t}", f"{_op} each element ({_t})",
                f"0 {_q} {_u} 01110 size={_size:02b} 10000 {_opcode} 10 Rn:5 Rd:5", (VReg("Rd", _t), VReg("Rn", _t)),
                partial(semantics.unary, esize=8 << _size, datasize=64 << _q, op=_op))

for _q in (0, 1):
    _t = "16b" if _q else "8b"
    _regs = (VReg("Rd", _t), VReg("Rn", _t))
    _vector(f"NOT_v_{_t}", "not", f"NOT <Vd>.{_t}, <Vn>.{_t}", "bitwise NOT (printed MVN)",
            f"0 {_q} 1 01110 00 10000 00101 10 Rn:5 Rd:5", _regs,
            partial(semantics.unary, esize=8, datasize=64 << _q, op="not"), aliases=(Alias("mvn", _regs),))

for _name, _u, _opcode, _cmp in (("CMGT", "0", "01000", "gt"), ("CMEQ", "0", "01001", "eq"),
                                 ("CMLT", "0", "01010", "lt"), ("CMGE", "1", "01000", "ge"),
                                 ("CMLE", "1", "01001", "le")):
    for _size, _q in _ALL:
        _t = _arr(_size, _q)

        _vector(f"{_name}_zero_{_t}", _name.lower(), f"{_name} <Vd>.{_t}, <Vn>.{_t}, #0",
                f"compare each element with zero ({_cmp})",
                f"0 {_q} {_u} 01110 size={_size:02b} 10000 {_opcode} 10 Rn:5 Rd:5",
                (VReg("Rd", _t), VReg("Rn", _t), ZeroImm()),
                partial(semantics.compare_zero, esize=8 << _size, datasize=64 << _q, cmp=_cmp))

# ---- across lanes, ADDP (scalar) ---------------------------------------------------------------------------

_ACROSS = [(0, 0), (0, 1), (1, 0), (1, 1), (2, 1)]  # 8b 16b 4h 8h 4s
for _name, _u, _opcode, _long, _function in (
        ("ADDV", "0", "11011", False, partial(semantics.reduce_add, long=False, unsigned=True)),
        ("SADDLV", "0", "00011", True, partial(semantics.reduce_add, long=True, unsigned=False)),
        ("UADDLV", "1", "00011", True, partial(semantics.reduce_add, long=True, unsigned=True)),
        ("SMAXV", "0", "01010", False, partial(semantics.reduce_max_min, unsigned=False, minimum=False)),
        ("SMINV", "0", "11010", False, partial(semantics.reduce_max_min, unsigned=False, minimum=True)),
        ("UMAXV", "1", "01010", False, partial(semantics.reduce_max_min, unsigned=True, minimum=False)),
        ("UMINV", "1", "11010", False, partial(semantics.reduce_max_min, unsigned=True, minimum=True))):
    for _size, _q in _ACROSS:
        _t = _arr(_size, _q)
        _letter = _LETTER[_size + 1] if _long else _LETTER[_size]
        _vector(f"{_name}_{_t}", _name.lower(), f"{_name} <V>d, <Vn>.{_t}",
                f"{_name[:-1].lower()} across the {_t} elements into {_letter.upper()}d",
                f"0 {_q} {_u} 01110 size={_size:02b} 11000 {_opcode} 10 Rn:5 Rd:5",
                (FpReg("Rd", _letter), VReg("Rn", _t)),
                partial(_function, esize=8 << _size, datasize=64 << _q))

_vector("ADDP_scalar", "addp", "ADDP <V>d, <Vn>.2D", "add the two 64-bit elements of Vn into Dd",
        "01 0 11110 size=11 11000 11011 10 Rn:5 Rd:5", (FpReg("Rd", "d"), VReg("Rn", "2d")),
        semantics.add_pair_scalar)

# ---- copies: DUP, INS, UMOV, SMOV ---------------------------------------------------------------------------


def _element(field, size, index_field="index", limit=None):
    """An element operand whose index is the field ``index_field`` (its bits above imm5's size marker)."""
    return VElement(field, _LETTER[size], (16 >> size) - 1 if limit is None else limit,
                    lambda f, _k=index_field: f[_k], lambda i, _k=index_field: {_k: i})


def _imm5(size, name="index"):
    """imm5 for an element size: the index bits, a 1, and zeros below it (b: xxxx1, h: xxx10, s: xx100, d: x1000)."""
    return f"{name}:{4 - size} 1" + " 0" * size


for _size, _q in _ALL:
    _t = _arr(_size, _q)
    _r = 64 if _size == 3 else 32
    _vector(f"DUP_general_{_t}", "dup", f"DUP <Vd>.{_t}, <R><n>", f"copy a general register to every {_t} element",
            f"0 {_q} 0 01110000 {'0' * (4 - _size)}1{'0' * _size} 0 0001 1 Rn:5 Rd:5", (VReg("Rd", _t), R("Rn", _r)),
            partial(semantics.dup_general, esize=8 << _size, datasize=64 << _q))
    _vector(f"DUP_element_{_t}", "dup", f"DUP <Vd>.{_t}, <Vn>.<Ts>[<index>]", f"copy one element to every {_t} element",
            f"0 {_q} 0 01110000 {_imm5(_size)} 0 0000 1 Rn:5 Rd:5", (VReg("Rd", _t), _element("Rn", _size)),
            partial(semantics.dup_element, esize=8 << _size, datasize=64 << _q))

for _size in range(4):
    _regs = (FpReg("Rd", _LETTER[_size]), _element("Rn", _size))
    _vector(f"DUP_scalar_{_LETTER[_size]}", "dup", "DUP <V><d>, <Vn>.<T>[<index>]",
            "copy one element to a scalar (printed MOV)", f"01 0 11110000 {_imm5(_size)} 0 0000 1 Rn:5 Rd:5", _regs,
            partial(semantics.dup_element, esize=8 << _size, datasize=8 << _size), aliases=(Alias("mov", _regs),))
    _target = _element("Rd", _size)
    _regs = (_target, R("Rn", 64 if _size == 3 else 32))
    _vector(f"INS_general_{_LETTER[_size]}", "ins", "INS <Vd>.<Ts>[<index>], <R><n>",
            "copy a general register's low bits into one element (printed MOV)",
            f"0 1 0 01110000 {_imm5(_size)} 0 0011 1 Rn:5 Rd:5", _regs,
            partial(semantics.ins_general, esize=8 << _size), aliases=(Alias("mov", _regs),))
    _regs = (_target, _element("Rn", _size, "index2"))
    _vector(f"INS_element_{_LETTER[_size]}", "ins", "INS <Vd>.<Ts>[<index1>], <Vn>.<Ts>[<index2>]",
            "copy one element into one element of Vd (printed MOV)",
            f"0 1 1 01110000 {_imm5(_size)} 0 index2:{4 - _size}{' 0' * _size} 1 Rn:5 Rd:5", _regs,
            partial(semantics.ins_element, esize=8 << _size), aliases=(Alias("mov", _regs),))

for _size, _q, _signed in ((0, 0, False), (1, 0, False), (2, 0, False), (3, 1, False),
                           (0, 0, True), (1, 0, True), (0, 1, True), (1, 1, True), (2, 1, True)):
    _width = 64 if _q else 32
    _name = "SMOV" if _signed else "UMOV"
    _regs = (R("Rd", _width), _element("Rn", _size))
    _aliases = (Alias("mov", _regs),) if not _signed and _size >= 2 else ()
    _vector(f"{_name}_{'x' if _q else 'w'}_{_LETTER[_size]}", _name.lower(),
            f"{_name} <{'X' if _q else 'W'}d>, <Vn>.{_LETTER[_size].upper()}[<index>]",
            f"copy one element to a general register, {'sign' if _signed else 'zero'}-extended",
            f"0 {_q} 0 01110000 {_imm5(_size)} 0 01{'0' if _signed else '1'}1 1 Rn:5 Rd:5", _regs,
            partial(semantics.move_to_general, esize=8 << _size, datasize=_width, signed=_signed), aliases=_aliases)

# ---- modified immediate: MOVI, MVNI, ORR, BIC -----------------------------------------------------------------

_IMMEDIATES = [  # id, mnemonic, op, cmode pattern, element size, arrangements (Q), operand, semantics op
    ("MOVI_8", "movi", "0", "1110", 8, (0, 1), ShiftedImm8(), "movi"),
    ("MOVI_16", "movi", "0", "10 sh:1 0", 16, (0, 1), ShiftedImm8(shifts=2), "movi"),
    ("MOVI_32", "movi", "0", "0 sh:2 0", 32, (0, 1), ShiftedImm8(shifts=4), "movi"),
    ("MOVI_32_msl", "movi", "0", "110 sh:1", 32, (0, 1), ShiftedImm8("msl"), "mslmovi"),
    ("MOVI_2d", "movi", "1", "1110", 64, (1,), ByteMaskImm(), "movi"),
    ("MVNI_16", "mvni", "1", "10 sh:1 0", 16, (0, 1), ShiftedImm8(shifts=2), "mvni"),
    ("MVNI_32", "mvni", "1", "0 sh:2 0", 32, (0, 1), ShiftedImm8(shifts=4), "mvni"),
    ("MVNI_32_msl", "mvni", "1", "110 sh:1", 32, (0, 1), ShiftedImm8("msl"), "mslmvni"),
    ("ORR_imm_16", "orr", "0", "10 sh:1 1", 16, (0, 1), ShiftedImm8(shifts=2), "orr"),
    ("ORR_imm_32", "orr", "0", "0 sh:2 1", 32, (0, 1), ShiftedImm8(shifts=4), "orr"),
    ("BIC_imm_16", "bic", "1", "10 sh:1 1", 16, (0, 1), ShiftedImm8(shifts=2), "bic"),
    ("BIC_imm_32", "bic", "1", "0 sh:2 1", 32, (0, 1), ShiftedImm8(shifts=4), "bic"),
]

for _id, _mnemonic, _op, _cmode, _esize, _qs, _imm, _operation in _IMMEDIATES:
    for _q in _qs:
        _t = f"{(64 << _q) // _esize}{_LETTER[_esize.bit_length() - 4]}"
        _vector(f"{_id}_{_t}", _mnemonic, f"{_mnemonic.upper()} <Vd>.{_t}, #<imm8>",
                f"{_operation.replace('msl', '').upper()} of an 8-bit immediate, shifted and replicated to every {_t}"
                " element", f"0 {_q} {_op} 0111100000 abc:3 {_cmode} 0 1 defgh:5 Rd:5", (VReg("Rd", _t), _imm),
                partial(semantics.move_immediate, esize=_esize, datasize=64 << _q, op=_operation))

_vector("MOVI_d", "movi", "MOVI <Dd>, #<imm>", "a 64-bit immediate of whole bytes (0x00 or 0xff) into Dd",
        "0 0 1 0111100000 abc:3 1110 0 1 defgh:5 Rd:5", (FpReg("Rd", "d"), ByteMaskImm()),
        partial(semantics.move_immediate, esize=64, datasize=64, op="movi"))

# ---- table lookup, permutes, EXT -------------------------------------------------------------------------------

for _name, _op in (("TBL", "0"), ("TBX", "1")):
    for _regs in range(1, 5):
        for _q in (0, 1):
            _t = "16b" if _q else "8b"
            _vector(f"{_name}_{_regs}_{_t}", _name.lower(), f"{_name} <Vd>.{_t}, {{<Vn>.16B ...}} ({_regs}), <Vm>.{_t}",
                    f"look each byte of Vm up in a table of {_regs} register{'s' if _regs > 1 else ''} "
                    f"(out of range: {'0' if _op == '0' else 'Vd kept'})",
                    f"0 {_q} 001110 000 Rm:5 0 len={_regs - 1:02b} {_op} 00 Rn:5 Rd:5",
                    (VReg("Rd", _t), VList("Rn", _regs), VReg("Rm", _t)),
                    partial(semantics.table_lookup, regs=_regs, datasize=64 << _q, is_tbl=_op == "0"))

for _name, _opc, _op, _part in (("UZP1", "001", "uzp", 0), ("TRN1", "010", "trn", 0), ("ZIP1", "011", "zip", 0),
                                ("UZP2", "101", "uzp", 1), ("TRN2", "110", "trn", 1), ("ZIP2", "111", "zip", 1)):
    for _size, _q in _ALL:
        _t = _arr(_size, _q)
        _vector(f"{_name}_{_t}", _name.lower(), f"{_name} <Vd>.{_t}, <Vn>.{_t}, <Vm>.{_t}",
                f"{ {'uzp': 'unzip', 'trn': 'transpose', 'zip': 'zip'}[_op]} the {_t} elements "
                f"({'odd' if _part else 'even'}/{'upper' if _part else 'lower'} part)",
                f"0 {_q} 001110 size={_size:02b} 0 Rm:5 0 {_opc} 10 Rn:5 Rd:5",
                (VReg("Rd", _t), VReg("Rn", _t), VReg("Rm", _t)),
                partial(semantics.permute, esize=8 << _size, datasize=64 << _q, op=_op, part=_part))

for _q in (0, 1):
    _t = "16b" if _q else "8b"
    _vector(f"EXT_{_t}", "ext", f"EXT <Vd>.{_t}, <Vn>.{_t}, <Vm>.{_t}, #<index>",
            "the bytes of Vm:Vn from #index on", f"0 {_q} 101110 000 Rm:5 0 {'imm4:4' if _q else '0 imm4:3'} 0 Rn:5 Rd:5",
            (VReg("Rd", _t), VReg("Rn", _t), VReg("Rm", _t), Imm("imm4", 4 if _q else 3)),
            partial(semantics.extract, datasize=64 << _q))

# ---- shifts by an immediate -------------------------------------------------------------------------------------

_IMMH = {8: "0001 imm:3", 16: "001 imm:4", 32: "01 imm:5", 64: "1 imm:6"}

for _name, _u, _opcode, _op in (("SHL", "0", "01010", "shl"), ("SSHR", "0", "00000", "sshr"),
                                ("USHR", "1", "00000", "ushr")):
    for _size, _q in _ALL:
        _t, _esize = _arr(_size, _q), 8 << _size
        _vector(f"{_name}_{_t}", _name.lower(), f"{_name} <Vd>.{_t}, <Vn>.{_t}, #<shift>",
                f"shift each {_t} element {'left' if _op == 'shl' else 'right'} by an immediate",
                f"0 {_q} {_u} 011110 {_IMMH[_esize]} {_opcode} 1 Rn:5 Rd:5",
                (VReg("Rd", _t), VReg("Rn", _t), ShiftImm(_esize, right=_op != "shl")),
                partial(semantics.shift_immediate, esize=_esize, datasize=64 << _q, op=_op))

for _name, _u in (("SSHLL", "0"), ("USHLL", "1")):
    for _size in range(3):
        for _q in (0, 1):
            _tb, _ta, _esize = _arr(_size, _q), _arr(_size + 1, 1), 8 << _size
            _mnemonic = _name.lower() + ("2" if _q else "")
            _regs = (VReg("Rd", _ta), VReg("Rn", _tb))
            _alias = ("sxtl" if _u == "0" else "uxtl") + ("2" if _q else "")
            _vector(f"{_name}{'2' if _q else ''}_{_tb}", _mnemonic, f"{_mnemonic.upper()} <Vd>.{_ta}, <Vn>.{_tb}, #<shift>",
                    f"widen the {'upper' if _q else 'lower'} half's elements ({'zero' if _u == '1' else 'sign'}-extended)"
                    f" and shift them left ({_alias.upper()} with #0)",
                    f"0 {_q} {_u} 011110 {_IMMH[_esize]} 10100 1 Rn:5 Rd:5",
                    (*_regs, ShiftImm(_esize, right=False)),
                    partial(semantics.shift_left_long, esize=_esize, part=_q, unsigned=_u == "1"),
                    aliases=(Alias(_alias, _regs, lambda f: False, {"imm": 0}, accepts=lambda f: True),))

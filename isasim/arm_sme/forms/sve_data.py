"""SVE data-processing forms clang's ACLE intrinsics lower to in streaming code (semantics/sve_data.py): the
unpredicated bitwise forms (AND, ORR and its MOV, EOR, BIC) and integer arithmetic (ADD, SUB, SQADD, UQADD,
SQSUB, UQSUB), INCB/INCH/INCW/INCD and DECB... of a register and of a vector's elements, RDVL and ADDPL, the
reductions SADDV, UADDV, SMAXV, UMAXV, SMINV, UMINV, ORV, EORV, ANDV, the predicate logic (AND, BIC, EOR,
SEL, ORR, ORN, NOR, NAND and the S forms, with llvm's MOV, MOVS, NOT, NOTS), DUP (immediate, scalar,
indexed: always printed MOV), SEL of vectors (MOV /M), INDEX in its four forms, and ZIP1/2, UZP1/2, TRN1/2
of vectors and of predicates."""

from __future__ import annotations

from functools import partial

from ..encoding import Encoding
from ..operands import GReg, Pattern, PReg, SImm, ZReg
from ..operands.base import FpReg
from ..operands.sve import AnyGoverning, DupImm, ElementIndexed, ElementZero, SImmField
from ..semantics import sve_data
from .base import A64Form, Alias, add

SIZES = {"b": ("00", 8), "h": ("01", 16), "s": ("10", 32), "d": ("11", 64)}
_LETTER = {"b": "B", "h": "H", "s": "W", "d": "D"}  # INCB, INCH, INCW, INCD


def _doc(function, **names):
    doc = (function.func if isinstance(function, partial) else function).__doc__
    for name, value in names.items():
        doc = doc.replace(name, str(value))
    return doc


def _form(id, mnemonic, syntax, summary, pattern, operands, function, group, **extra):
    add(A64Form(id, mnemonic, syntax, summary, Encoding(pattern), tuple(operands), function, feature="SME",
                doc=_doc(function), group=group, extra=extra))


# ---- unpredicated bitwise (64-bit elements as bits) ----------------------------------------------------
for _op, _opc in (("and", "00"), ("orr", "01"), ("eor", "10"), ("bic", "11")):
    _regs = (ZReg("d", "Zd"), ZReg("d", "Zn"), ZReg("d", "Zm"))
    _aliases = (Alias("mov", _regs[:2], lambda f: f["Zn"] == f["Zm"], derive=lambda f: {**f, "Zm": f["Zn"]}),) \
        if _op == "orr" else ()
    _form(f"{_op.upper()}_z_z", _op, f"{_op.upper()} <Zd>.D, <Zn>.D, <Zm>.D",
          f"{_op.upper()} of two whole vectors (unpredicated)" + ("; MOV where Zn is Zm" if _op == "orr" else ""),
          f"00000100 opc={_opc} 1 Zm:5 001100 Zn:5 Zd:5", _regs, partial(sve_data.logical_vectors, op=_op),
          "z_data", aliases=_aliases)

# ---- unpredicated integer arithmetic -----------------------------------------------------------------------
for _t, (_sz, _esize) in SIZES.items():
    for _op, _opc in (("add", "000"), ("sub", "001"), ("sqadd", "100"), ("uqadd", "101"), ("sqsub", "110"),
                      ("uqsub", "111")):
        _form(f"{_op.upper()}_z_z_{_t}", _op, f"{_op.upper()} <Zd>.{_t.upper()}, <Zn>.{_t.upper()}, <Zm>.{_t.upper()}",
              f"{_op.upper()} of the {_esize}-bit elements of two vectors (unpredicated)",
              f"00000100 size={_sz} 1 Zm:5 000 opc={_opc} Zn:5 Zd:5",
              (ZReg(_t, "Zd"), ZReg(_t, "Zn"), ZReg(_t, "Zm")),
              partial(sve_data.arithmetic_vectors, esize=_esize, op=_op), "z_data")

# ---- element counts: INC/DEC of a vector's elements (H, W, D) ------------------------------------------------
for _t, (_sz, _esize) in SIZES.items():
    for _m, _d in (("inc", "0"), ("dec", "1")):
        _name = f"{_m}{_LETTER[_t].lower()}"
        add(A64Form(
            f"{_name.upper()}_x", _name, f"{_name.upper()} <Xdn>{{, <pattern>{{, MUL #<imm>}}}}",
            f"{'add' if _m == 'inc' else 'subtract'} the number of {_esize}-bit elements a pattern counts, times "
            f"a multiplier, {'to' if _m == 'inc' else 'from'} a 64-bit register",
            Encoding(f"00000100 size={_sz} 11 imm4:4 11100 D={_d} pattern:5 Rdn:5"),
            (GReg("Rdn"), Pattern(multiplier=True)),
            partial(sve_data.inc_scalar, esize=_esize, decrement=_d == "1"), feature="SME",
            doc=_doc(sve_data.inc_scalar).replace("esize", str(_esize)), group="z_data"))
        if _t != "b":
            add(A64Form(
                f"{_name.upper()}_z", _name, f"{_name.upper()} <Zdn>.{_t.upper()}{{, <pattern>{{, MUL #<imm>}}}}",
                f"{'add' if _m == 'inc' else 'subtract'} the number of {_esize}-bit elements a pattern counts, "
                f"times a multiplier, {'to' if _m == 'inc' else 'from'} each element of a vector",
                Encoding(f"00000100 size={_sz} 11 imm4:4 11000 D={_d} pattern:5 Zdn:5"),
                (ZReg(_t, "Zdn"), Pattern(multiplier=True)),
                partial(sve_data.inc_vector, esize=_esize, decrement=_d == "1"), feature="SME",
                doc=_doc(sve_data.inc_vector).replace("esize", str(_esize)), group="z_data"))

# ---- reductions to a SIMD&FP register -------------------------------------------------------------------------
for _op, _opc in (("saddv", "00000"), ("uaddv", "00001"), ("smaxv", "01000"), ("umaxv", "01001"),
                  ("sminv", "01010"), ("uminv", "01011"), ("orv", "11000"), ("eorv", "11001"), ("andv", "11010")):
    for _t, (_sz, _esize) in SIZES.items():
        if _op == "saddv" and _t == "d":
            continue  # unallocated: a sum of 64-bit elements is UADDV's
        _v = "d" if _op.endswith("addv") else _t
        _form(f"{_op.upper()}_{_t}", _op, f"{_op.upper()} <V><d>, <Pg>, <Zn>.{_t.upper()}",
              f"{_op.upper()[:-1]} of the active {_esize}-bit elements into {_v.upper()}d (the rest of Zd zeroed)",
              f"00000100 size={_sz} 0 opc={_opc} 001 Pg:3 Zn:5 Vd:5",
              (FpReg("Vd", _v), AnyGoverning("Pg"), ZReg(_t, "Zn")),
              partial(sve_data.reduce, esize=_esize, op=_op), "z_data")

_form("RDVL", "rdvl", "RDVL <Xd>, #<imm>", "the current vector length in bytes (streaming: the SVL), times -32..31",
      "00000100 1 0 1 11111 01010 imm6:6 Rd:5", (GReg("Rd"), SImm("imm6", 6)), sve_data.rdvl, "z_data")
_form("ADDPL", "addpl", "ADDPL <Xd|SP>, <Xn|SP>, #<imm>", "add -32..31 times the predicate length in bytes",
      "00000100 0 11 Rn:5 01010 imm6:6 Rd:5", (GReg("Rd", sp=True), GReg("Rn", sp=True), SImm("imm6", 6)),
      sve_data.addpl, "z_data")

# ---- DUP (immediate, scalar, indexed), SEL, INDEX ---------------------------------------------------------------
for _t, (_sz, _esize) in SIZES.items():
    _form(f"DUP_z_imm_{_t}", "dup", f"DUP <Zd>.{_t.upper()}, #<imm>{{, <shift>}}",
          f"every {_esize}-bit element an 8-bit signed immediate, optionally shifted left by 8 (printed MOV)",
          f"00100101 size={_sz} 111 00 0 11 sh:1 imm8:8 Zd:5", (ZReg(_t, "Zd"), DupImm(_esize)),
          partial(sve_data.dup_immediate, esize=_esize), "z_data", alias="mov",
          **({"reserved": {"sh": 1}} if _t == "b" else {}))
    _form(f"DUP_z_r_{_t}", "dup", f"DUP <Zd>.{_t.upper()}, <R><n|SP>",
          f"every {_esize}-bit element the low bits of a general register (printed MOV)",
          f"00000101 size={_sz} 1 00000 001110 Rn:5 Zd:5",
          (ZReg(_t, "Zd"), GReg("Rn", 64 if _t == "d" else 32, sp=True)),
          partial(sve_data.dup_scalar, esize=_esize), "z_data", alias="mov")
    _form(f"SEL_z_{_t}", "sel", f"SEL <Zd>.{_t.upper()}, <Pv>, <Zn>.{_t.upper()}, <Zm>.{_t.upper()}",
          f"each {_esize}-bit element from Zn where the predicate is active, else from Zm (MOV /M where Zd is Zm)",
          f"00000101 size={_sz} 1 Zm:5 11 Pg:4 Zn:5 Zd:5",
          (ZReg(_t, "Zd"), AnyGoverning("Pg"), ZReg(_t, "Zn"), ZReg(_t, "Zm")),
          partial(sve_data.select_vectors, esize=_esize), "z_data",
          aliases=(Alias("mov", (ZReg(_t, "Zd"), AnyGoverning("Pg", "m"), ZReg(_t, "Zn")),
                         lambda f: f["Zd"] == f["Zm"], derive=lambda f: {**f, "Zm": f["Zd"]}),))
    _r = 64 if _t == "d" else 32
    for _kind, _opc, _ops, _low in (
            ("ii", "00", (SImmField("imm5"), SImmField("imm5b")), "imm5b:5 0100 00 imm5:5"),
            ("ri", "01", (GReg("Rn", _r), SImmField("imm5")), "imm5:5 0100 01 Rn:5"),
            ("ir", "10", (SImmField("imm5"), GReg("Rm", _r)), "Rm:5 0100 10 imm5:5"),
            ("rr", "11", (GReg("Rn", _r), GReg("Rm", _r)), "Rm:5 0100 11 Rn:5")):
        _first, _second = _ops
        add(A64Form(
            f"INDEX_{_kind}_{_t}", "index", f"INDEX <Zd>.{_t.upper()}, "
            + ("#<imm1>" if _kind[0] == "i" else "<R><n>") + ", " + ("#<imm2>" if _kind[1] == "i" else "<R><m>"),
            f"element e of {_esize} bits = start + e * step (immediates -16..15 or registers)",
            Encoding(f"00000100 size={_sz} 1 {_low} Zd:5"),
            (ZReg(_t, "Zd"), _first, _second),
            partial(sve_data.index_registers, esize=_esize, start_reg=_kind[0] == "r", step_reg=_kind[1] == "r"),
            feature="SME", doc=_doc(sve_data.index_registers), group="z_data"))

# DUP (indexed): the element size is the lowest set bit of tsz; the index imm2 and tsz's bits above it
for _t, _tsz, _low in (("b", "1", 4), ("h", "10", 3), ("s", "100", 2), ("d", "1000", 1), ("q", "10000", 0)):
    _esize = {"b": 8, "h": 16, "s": 32, "d": 64, "q": 128}[_t]
    _index = f"imm2:2 1 tsh:{_low} {_tsz}" if _low else f"imm2:2 1 {_tsz}"
    _fn = partial(sve_data.dup_indexed, esize=_esize)
    add(A64Form(
        f"DUP_z_zi_{_t}", "dup", f"DUP <Zd>.{_t.upper()}, <Zn>.{_t.upper()}[<imm>]",
        f"every {_esize}-bit element one element of Zn (zero if the index is past the vector; printed MOV)",
        Encoding(f"00000101 {_index} 001000 Zn:5 Zd:5"), (ZReg(_t, "Zd"), ElementIndexed(_t, _low)), _fn,
        feature="SME", doc=_doc(sve_data.dup_indexed).replace("esize", str(_esize)), group="z_data",
        extra={"aliases": (
            Alias("mov", (ZReg(_t, "Zd"), ElementZero(_t, _low)), lambda f: f["imm2"] == 0 and f.get("tsh", 0) == 0),
            Alias("mov", (ZReg(_t, "Zd"), ElementIndexed(_t, _low))))}))

# ---- permutes ------------------------------------------------------------------------------------------------
for _op, _opc in (("zip1", "000"), ("zip2", "001"), ("uzp1", "010"), ("uzp2", "011"), ("trn1", "100"),
                  ("trn2", "101")):
    for _t, (_sz, _esize) in SIZES.items():
        _form(f"{_op.upper()}_z_{_t}", _op, f"{_op.upper()} <Zd>.{_t.upper()}, <Zn>.{_t.upper()}, <Zm>.{_t.upper()}",
              f"{_op.upper()} of the {_esize}-bit elements of two vectors",
              f"00000101 size={_sz} 1 Zm:5 011 opc={_opc} Zn:5 Zd:5",
              (ZReg(_t, "Zd"), ZReg(_t, "Zn"), ZReg(_t, "Zm")),
              partial(sve_data.permute, esize=_esize, op=_op), "z_data")

# ---- predicate logic ------------------------------------------------------------------------------------------
_PD, _PN, _PM = PReg("b", "Pd"), PReg("b", "Pn"), PReg("b", "Pm")
for _op, _o, _s, _o2, _o3 in (("and", "0", "0", "0", "0"), ("bic", "0", "0", "0", "1"), ("eor", "0", "0", "1", "0"),
                              ("sel", "0", "0", "1", "1"), ("ands", "0", "1", "0", "0"), ("bics", "0", "1", "0", "1"),
                              ("eors", "0", "1", "1", "0"), ("orr", "1", "0", "0", "0"), ("orn", "1", "0", "0", "1"),
                              ("nor", "1", "0", "1", "0"), ("nand", "1", "0", "1", "1"), ("orrs", "1", "1", "0", "0"),
                              ("orns", "1", "1", "0", "1"), ("nors", "1", "1", "1", "0"),
                              ("nands", "1", "1", "1", "1")):
    _g = AnyGoverning("Pg", "" if _op == "sel" else "z")
    _base = _op.rstrip("s") if _op not in ("sel",) else "sel"
    _aliases = ()
    if _base == "orr":
        _aliases = (Alias("mov" + "s" * (_s == "1"), (_PD, _PN), lambda f: f["Pn"] == f["Pm"] == f["Pg"],
                          derive=lambda f: {**f, "Pm": f["Pn"], "Pg": f["Pn"]}),)
    elif _base == "and":
        _aliases = (Alias("mov" + "s" * (_s == "1"), (_PD, _g, _PN), lambda f: f["Pn"] == f["Pm"],
                          derive=lambda f: {**f, "Pm": f["Pn"]}),)
    elif _base == "eor":
        _aliases = (Alias("not" + "s" * (_s == "1"), (_PD, _g, _PN), lambda f: f["Pm"] == f["Pg"],
                          derive=lambda f: {**f, "Pm": f["Pg"]}),)
    elif _base == "sel":
        _aliases = (Alias("mov", (_PD, AnyGoverning("Pg", "m"), _PN), lambda f: f["Pm"] == f["Pd"],
                          derive=lambda f: {**f, "Pm": f["Pd"]}),)
    _form(f"{_op.upper()}_p", _op, f"{_op.upper()} <Pd>.B, <Pg>{'' if _op == 'sel' else '/Z'}, <Pn>.B, <Pm>.B",
          f"{_base.upper()} of two predicates under a governing one" + (", setting NZCV" if _s == "1" else ""),
          f"00100101 op={_o} S={_s} 00 Pm:4 01 Pg:4 o2={_o2} Pn:4 o3={_o3} Pd:4", (_PD, _g, _PN, _PM),
          partial(sve_data.predicate_logical, op=_base, setflags=_s == "1"), "predicate", aliases=_aliases)

_PERMUTES = (("zip1", "000"), ("zip2", "001"), ("uzp1", "010"), ("uzp2", "011"), ("trn1", "100"), ("trn2", "101"))
for _op, _opc in _PERMUTES:
    for _t, (_sz, _esize) in SIZES.items():
        _form(f"{_op.upper()}_p_{_t}", _op, f"{_op.upper()} <Pd>.{_t.upper()}, <Pn>.{_t.upper()}, <Pm>.{_t.upper()}",
              f"{_op.upper()} of the {_esize}-bit elements of two predicates",
              f"00000101 size={_sz} 10 Pm:4 010 opc={_opc} 0 Pn:4 0 Pd:4",
              (PReg(_t, "Pd"), PReg(_t, "Pn"), PReg(_t, "Pm")),
              partial(sve_data.permute_predicates, esize=_esize, op=_op), "predicate")

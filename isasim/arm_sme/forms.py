"""Every A64 form isasim knows, declared once: its 32-bit encoding in named fields, its syntax,
the operands that fill the fields, the feature it needs, and its semantics.

The same declaration drives the assembler (operands parse text into fields, the encoding
packs them), the decoder (the encoding's fixed bits match a word, the fields unpack), the
disassembler (operands print the fields as llvm-objdump does), the machine (``execute``)
and ``explain`` (``doc``).  Forms are keyed by id: UDOT alone has a dozen.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import partial
from typing import Callable

from ..core.program import FormTable
from . import dots, loads, predicates, scalar, sme, za_moves
from .dots import DotShape
from .encoding import Encoding
from .operands import (AddImm, BaseOffset, BranchTarget, GReg, Governing, Imm, MovWideImm, MulVlAddress, Pattern,
                       PredMerge, PReg, ScalarPlusScalar, SImm, SplitVlAddress, VectorRegister, ZaArrayVector, ZaSlice,
                       ZaSliceList, ZaVectorGroup, ZIndexed, ZList, ZReg)


@dataclass(frozen=True)
class A64Form:
    id: str
    mnemonic: str
    syntax: str  # the Arm ARM's syntax line
    summary: str
    encoding: Encoding
    operands: tuple = ()
    execute: Callable = None  # execute(cpu, *operand values) -> None | branch offset | END
    feature: str = "A64"  # "A64" (the base ISA), "SME", "SME2" or "SME_I16I64"
    doc: str = ""  # the Operation, as the Arm ARM writes it
    group: str = "scalar"
    extra: dict = field(default_factory=dict)

    @property
    def fixed_text(self) -> str:
        """The text of a form without operands, or with fixed ones (``smstart za``)."""
        return self.extra.get("text", self.mnemonic)


FORMS = FormTable()


def _add(form: A64Form) -> None:
    FORMS.add(form)


# ---- SME2 integer dot products into ZA vector groups ----------------------------------------------
# Encodings (Arm ARM C9.2; bit 31 first).  Rv picks W8-W11, off3 the offset, Zn the first source.
SINGLE = "11000001 0 sz={sz} 1 G={g} Zm:4 0 Rv:2 101 Zn:5 opc={opc} off3:3"
MULTIPLE = {2: "11000001 1 sz={sz} 1 Zm:4 0 0 Rv:2 101 Zn:4 0 opc={opc} off3:3",
            4: "11000001 1 sz={sz} 1 Zm:3 01 0 Rv:2 101 Zn:3 00 opc={opc} off3:3"}
INDEXED = {  # (source size, ZA size) -> (23:20, the index bits 12:10)
    "S": {2: "11000001 0101 Zm:4 0 Rv:2 1 i:2 Zn:4 t={t} opc={opc} off3:3",
          4: "11000001 0101 Zm:4 1 Rv:2 1 i:2 Zn:3 0 t={t} opc={opc} off3:3"},
    "D": {2: "11000001 1101 Zm:4 0 Rv:2 00 i:1 Zn:4 0 opc={opc} off3:3",
          4: "11000001 1101 Zm:4 1 Rv:2 00 i:1 Zn:3 0 0 opc={opc} off3:3"},
}

# (mnemonic, ZA size, source size, ways, Zn signed, Zm signed, feature, sz and opc of the single and
#  multiple forms, opc of the indexed form); SUDOT has no multiple-vector form (None)
DOTS = (
    ("udot", "s", "h", 2, False, False, "SME2", ("1", "11"), "10"),
    ("sdot", "s", "h", 2, True, True, "SME2", ("1", "01"), "00"),
    ("udot", "s", "b", 4, False, False, "SME2", ("0", "10"), "10"),
    ("sdot", "s", "b", 4, True, True, "SME2", ("0", "00"), "00"),
    ("usdot", "s", "b", 4, False, True, "SME2", ("0", "01"), "01"),
    ("sudot", "s", "b", 4, True, False, "SME2", ("0", "11"), "11"),
    ("udot", "d", "h", 4, False, False, "SME_I16I64", ("1", "10"), "11"),
    ("sdot", "d", "h", 4, True, True, "SME_I16I64", ("1", "00"), "01"),
)
SIGNEDNESS = {(False, False): "unsigned", (True, True): "signed", (False, True): "unsigned by signed",
              (True, False): "signed by unsigned"}


def _dot_form(mnemonic, za, src, ways, s1, s2, feature, nreg, second, pattern) -> A64Form:
    esize = 32 if za == "s" else 64
    shape = DotShape(esize, ways, s1, s2, nreg, second)
    group = ZaVectorGroup(za, nreg)
    if second == "single":
        zn, zm = ZList(src, nreg, "Zn", 1), ZReg(src, "Zm", 4)
        m_syntax = f"<Zm>.{src.upper()}"
    elif second == "multiple":
        zn, zm = ZList(src, nreg, "Zn", nreg), ZList(src, nreg, "Zm", nreg)
        m_syntax = "{<Zm1>.%s-<Zm%d>.%s}" % (src.upper(), nreg, src.upper())
    else:
        index_bits = 1 if za == "d" else 2
        zn, zm = ZList(src, nreg, "Zn", nreg), ZIndexed(src, "Zm", "i", index_bits)
        m_syntax = f"<Zm>.{src.upper()}[<index>]"
    syntax = (f"{mnemonic.upper()} ZA.{za.upper()}[<Wv>, <offs>{{, VGx{nreg}}}], "
              "{<Zn1>.%s-<Zn%d>.%s}, %s" % (src.upper(), nreg, src.upper(), m_syntax))
    summary = (f"{ways}-way {SIGNEDNESS[s1, s2]} dot product of {src.upper()} elements into the {esize}-bit "
               f"elements of a {nreg}-vector ZA group ({second} Zm)")
    return A64Form(
        id=f"{mnemonic.upper()}_za{za}_{src}_{second}_vgx{nreg}", mnemonic=mnemonic, syntax=syntax,
        summary=summary, encoding=Encoding(pattern), operands=(group, zn, zm),
        execute=dots.bound(shape), feature=feature, doc=dots.asl(mnemonic, shape),
        group="dot", extra={"shape": shape})


for _m, _za, _src, _ways, _s1, _s2, _feature, (_sz, _opc), _iopc in DOTS:
    for _nreg in (2, 4):
        _add(_dot_form(_m, _za, _src, _ways, _s1, _s2, _feature, _nreg, "single",
                       SINGLE.format(sz=_sz, g=_nreg // 4, opc=_opc)))
        if _m != "sudot":  # there is no multiple-vector SUDOT (USDOT with the sources swapped is one)
            _add(_dot_form(_m, _za, _src, _ways, _s1, _s2, _feature, _nreg, "multiple",
                           MULTIPLE[_nreg].format(sz=_sz, opc=_opc)))
        _add(_dot_form(_m, _za, _src, _ways, _s1, _s2, _feature, _nreg, "indexed",
                       INDEXED[_za.upper()][_nreg].format(t=int(_src == "b"), opc=_iopc)))


# ---- SME modes and ZA ---------------------------------------------------------------------------------
# SMSTART/SMSTOP are MSR SVCR{SM,ZA,SMZA}, #imm: CRm = 0 mask(2) imm (mask 01 SM, 10 ZA, 11 both)
for _text, _crm, _sm, _za in (("smstart", "0111", True, True), ("smstop", "0110", False, False),
                              ("smstart sm", "0011", True, None), ("smstop sm", "0010", False, None),
                              ("smstart za", "0101", None, True), ("smstop za", "0100", None, False)):
    _what = " and ".join(n for n, v in (("PSTATE.SM", _sm), ("PSTATE.ZA", _za)) if v is not None)
    _add(A64Form(
        id=_text.upper().replace(" ", "_"), mnemonic=_text.split()[0], syntax=_text.upper(),
        summary=f"{'set' if 'start' in _text else 'clear'} {_what}",
        encoding=Encoding(f"11010101 00000011 0100 {_crm} 01111111"),
        execute=partial(sme.set_modes, sm=_sm, za=_za), feature="SME", group="mode",
        doc=("IF PSTATE.SM != new_sm THEN ResetSVEState();  // Z0-Z31, P0-P15, FFR = 0; ZA kept\n"
             "IF PSTATE.ZA == '0' AND new_za == '1' THEN ResetSMEState();  // ZA, ZT0 = 0\n"
             "PSTATE.SM = new_sm; PSTATE.ZA = new_za;  // for the bits this form writes"),
        extra={"text": _text}))

_add(A64Form(
    id="ZERO_tiles", mnemonic="zero", syntax="ZERO {<mask>}", summary="zero a list of ZA tiles ({za}: all of ZA)",
    encoding=Encoding("11000000 00001000 00000000 mask:8"), operands=("tile_list",),
    execute=sme.zero_tiles, feature="SME", group="za",
    doc=("CheckSMEAndZAEnabled();\n"
         "for row = 0 to (SVL DIV 8)-1\n"
         "    IF mask<row MOD 8> == '1' THEN ZAvector[row] = Zeros();  // ZAt.D holds rows t, t+8, ...")))


_X, _XSP = partial(GReg, width=64), partial(GReg, width=64, sp=True)

# LDR/STR ZA[Wv, offs], [Xn{, #offs, MUL VL}]: one ZA vector from or to memory (the offset is both's)
for _m, _bit, _what in (("ldr", "0", "load"), ("str", "1", "store")):
    _add(A64Form(
        f"{_m.upper()}_za", _m, f"{_m.upper()} ZA[<Wv>, <offs>], [<Xn|SP>{{, #<offs>, MUL VL}}]",
        f"{_what} one ZA array vector ({'from' if _m == 'ldr' else 'to'} memory at Xn + offs * SVL/8)",
        Encoding(f"1110000 1 00{_bit} 00000 0 Rv:2 000 Rn:5 0 off4:4"), (ZaArrayVector(), MulVlAddress("off4")),
        getattr(za_moves, f"{_m}_za"), feature="SME", doc=getattr(za_moves, f"{_m}_za").__doc__, group="za"))

# MOVA tile slice <-> Z (printed as MOV, its alias): size and Q give the element size
_TILE_SIZES = {"b": ("00", "0", 8), "h": ("01", "0", 16), "s": ("10", "0", 32), "d": ("11", "0", 64),
               "q": ("11", "1", 128)}
for _t, (_sz, _q, _esize) in _TILE_SIZES.items():
    _add(A64Form(
        f"MOVA_z_za_{_t}", "mova", f"MOVA <Zd>.{_t.upper()}, <Pg>/M, <ZAn><HV>.{_t.upper()}[<Ws>, <offs>]",
        f"copy the active {_esize}-bit elements of a horizontal or vertical ZA tile slice to a Z register",
        Encoding(f"11000000 size={_sz} 0000 1 Q={_q} V:1 Rs:2 Pg:3 0 ZAn:4 Zd:5"),
        (ZReg(_t, "Zd"), PredMerge(), ZaSlice(_t)), partial(za_moves.mova_to_vector, esize=_esize),
        feature="SME", doc=za_moves.mova_to_vector.__doc__.replace("esize", str(_esize)), group="za_move",
        extra={"alias": "mov"}))
    _add(A64Form(
        f"MOVA_za_z_{_t}", "mova", f"MOVA <ZAd><HV>.{_t.upper()}[<Ws>, <offs>], <Pg>/M, <Zn>.{_t.upper()}",
        f"copy the active {_esize}-bit elements of a Z register to a horizontal or vertical ZA tile slice",
        Encoding(f"11000000 size={_sz} 0000 0 Q={_q} V:1 Rs:2 Pg:3 Zn:5 0 ZAd:4"),
        (ZaSlice(_t, "ZAd"), PredMerge(), ZReg(_t, "Zn")), partial(za_moves.mova_to_tile, esize=_esize),
        feature="SME", doc=za_moves.mova_to_tile.__doc__.replace("esize", str(_esize)), group="za_move",
        extra={"alias": "mov"}))

# SVE LD1B/LD1H/LD1W/LD1D (zero-extending into wider elements) and ST1* (truncating), contiguous:
# (memory size, element size) -> the load's dtype and the store's msz:size
_CONTIGUOUS = [(m, e) for m in (8, 16, 32, 64) for e in (8, 16, 32, 64) if e >= m]
_LOAD_DTYPE = {(8, 8): "0000", (8, 16): "0001", (8, 32): "0010", (8, 64): "0011", (16, 16): "0101",
               (16, 32): "0110", (16, 64): "0111", (32, 32): "1010", (32, 64): "1011", (64, 64): "1111"}
_SIZE_BITS = {8: "00", 16: "01", 32: "10", 64: "11"}
_SUFFIX = {8: "b", 16: "h", 32: "s", 64: "d"}
for _msize, _esize in _CONTIGUOUS:
    _letter, _t = {8: "b", 16: "h", 32: "w", 64: "d"}[_msize], _SUFFIX[_esize]
    _shift = (_msize // 8).bit_length() - 1
    _how = "" if _msize == _esize else (" (each zero-extended)", " (each truncated)")
    for _m in ("ld1", "st1"):
        _load = _m == "ld1"
        _function = loads.ld1_z if _load else loads.st1_z
        _head = "1010010 dtype=" + _LOAD_DTYPE[_msize, _esize] if _load else \
            f"1110010 msz={_SIZE_BITS[_msize]} size={_SIZE_BITS[_esize]}"
        _p = "<Pg>/Z" if _load else "<Pg>"
        _what = (f"{'load' if _load else 'store'} the active {_esize}-bit elements of a Z register "
                 f"{'from' if _load else 'to'} consecutive {_msize}-bit memory elements"
                 + (_how[0 if _load else 1] if _how else "") + (", inactive ones zeroed" if _load else ""))
        for _mode, _tail, _address, _syntax in (
                ("imm", f"0 imm4:4 {'101' if _load else '111'} Pg:3 Rn:5 Zt:5", MulVlAddress("imm4", signed=True),
                 "[<Xn|SP>{, #<imm>, MUL VL}]"),
                ("ss", "Rm:5 010 Pg:3 Rn:5 Zt:5", ScalarPlusScalar(_shift),
                 "[<Xn|SP>, <Xm>" + (f", LSL #{_shift}]" if _shift else "]"))):
            _add(A64Form(
                f"{_m.upper()}{_letter.upper()}_z_{_t}_{_mode}", f"{_m}{_letter}",
                f"{_m.upper()}{_letter.upper()} {{<Zt>.{_t.upper()}}}, {_p}, {_syntax}", _what + f" ({_mode} address)",
                Encoding(f"{_head} {_tail}"), (ZList(_t, 1, "Zt"), Governing(zeroing=_load), _address),
                partial(_function, msize=_msize, esize=_esize, mode=_mode), feature="SME",
                doc=_function.__doc__.replace("msize", str(_msize)).replace("esize", str(_esize)),
                group="z_memory", extra={"reserved": {"Rm": 31}} if _mode == "ss" else {}))
# SME2 MOVA between a ZA vector group and a list of Z registers (any element size names the same
# vectors; llvm prints .d and the MOV alias)
for _nreg, _low_to_z, _low_to_za in ((2, "010 00 off3:3 Zd:4 0", "010 Zn:4 000 off3:3"),
                                     (4, "011 00 off3:3 Zd:3 00", "011 Zn:3 0000 off3:3")):
    _add(A64Form(
        f"MOVA_z_zad_vgx{_nreg}", "mova", "MOVA {<Zd1>.D-<Zd%d>.D}, ZA.D[<Wv>, <offs>{, VGx%d}]" % (_nreg, _nreg),
        f"copy a {_nreg}-vector ZA group to {_nreg} consecutive Z registers",
        Encoding(f"11000000 00000110 0 Rv:2 {_low_to_z}"),
        (ZList("d", _nreg, "Zd", _nreg, any_size=True), ZaVectorGroup("d", _nreg, any_size=True)),
        partial(za_moves.mova_group_to_vectors, nreg=_nreg), feature="SME2",
        doc=za_moves.mova_group_to_vectors.__doc__.replace("nreg-1", str(_nreg - 1)).replace("nreg", str(_nreg)),
        group="za_move", extra={"alias": "mov"}))
    _add(A64Form(
        f"MOVA_zad_z_vgx{_nreg}", "mova", "MOVA ZA.D[<Wv>, <offs>{, VGx%d}], {<Zn1>.D-<Zn%d>.D}" % (_nreg, _nreg),
        f"copy {_nreg} consecutive Z registers to a {_nreg}-vector ZA group",
        Encoding(f"11000000 00000100 0 Rv:2 {_low_to_za}"),
        (ZaVectorGroup("d", _nreg, any_size=True), ZList("d", _nreg, "Zn", _nreg, any_size=True)),
        partial(za_moves.mova_vectors_to_group, nreg=_nreg), feature="SME2",
        doc=za_moves.mova_vectors_to_group.__doc__.replace("nreg-1", str(_nreg - 1)).replace("nreg", str(_nreg)),
        group="za_move", extra={"alias": "mov"}))


# LD1B/LD1H/LD1W/LD1D/LD1Q and ST1* of one ZA tile slice: [Xn|SP{, Xm, LSL #log2(esize/8)}]
for _t, (_sz, _q, _esize) in _TILE_SIZES.items():
    _letter = {"b": "b", "h": "h", "s": "w", "d": "d", "q": "q"}[_t]
    _shift = (_esize // 8).bit_length() - 1
    for _m, _bit, _governing in (("ld1", "0", Governing(zeroing=True)), ("st1", "1", Governing(zeroing=False))):
        _function = loads.ld1_tile if _m == "ld1" else loads.st1_tile
        _add(A64Form(
            f"{_m.upper()}{_letter.upper()}_za_{_t}", f"{_m}{_letter}",
            f"{_m.upper()}{_letter.upper()} {{<ZAt><HV>.{_t.upper()}[<Ws>, <offs>]}}, <Pg>{'/Z' if _m == 'ld1' else ''}"
            f", [<Xn|SP>{{, <Xm>{', LSL #%d' % _shift if _shift else ''}}}]",
            f"{'load' if _m == 'ld1' else 'store'} the active {_esize}-bit elements of a horizontal or vertical ZA "
            f"tile slice {'from' if _m == 'ld1' else 'to'} memory" + (" (inactive ones zeroed)" if _m == "ld1" else ""),
            Encoding(f"1110000 q={_q} msz={_sz} {_bit} Rm:5 V:1 Rs:2 Pg:3 Rn:5 0 ZAt:4"),
            (ZaSliceList(_t), _governing, ScalarPlusScalar(_shift, xzr_is_none=True)),
            partial(_function, esize=_esize), feature="SME", doc=_function.__doc__.replace("esize", str(_esize)),
            group="za_memory"))

# SVE LDR/STR of a whole Z or P register: [Xn|SP{, #imm, MUL VL}], imm -256..255 (imm9h:imm9l)
for _m, _top in (("ldr", "10000101"), ("str", "11100101")):
    for _r, _bits, _tail in (("z", "010", "Zt:5"), ("p", "000", "0 Pt:4")):
        _function = getattr(loads, f"{_m}_{_r}")
        _add(A64Form(
            f"{_m.upper()}_{_r}", _m, f"{_m.upper()} <{_r.upper()}t>, [<Xn|SP>{{, #<imm>, MUL VL}}]",
            f"{'load' if _m == 'ldr' else 'store'} a whole {'Z' if _r == 'z' else 'predicate'} register "
            f"({'SVL/8' if _r == 'z' else 'SVL/64'} bytes; the offset in registers)",
            Encoding(f"{_top} 10 imm9h:6 {_bits} imm9l:3 Rn:5 {_tail}"),
            (VectorRegister(_r, "Zt" if _r == "z" else "Pt"), SplitVlAddress()), _function, feature="SME",
            doc=_function.__doc__, group="z_memory"))


# ---- SVE predicates, element counts and vector lengths (in streaming mode) -------------------------------
SIZES = {"b": ("00", 8), "h": ("01", 16), "s": ("10", 32), "d": ("11", 64)}  # the size field and esize in bits
for _t, (_sz, _esize) in SIZES.items():
    _add(A64Form(
        f"PTRUE_{_t}", "ptrue", f"PTRUE <Pd>.{_t.upper()}{{, <pattern>}}",
        f"set the first elements a pattern counts of a predicate of {_esize}-bit elements (the rest clear)",
        Encoding(f"00100101 size={_sz} 011 000 111000 pattern:5 0 Pd:4"), (PReg(_t, "Pd"), Pattern()),
        partial(predicates.ptrue, esize=_esize), feature="SME",
        doc=predicates.ptrue.__doc__.replace("esize", str(_esize)),
        group="predicate"))
    for _width, _sf in ((64, "1"), (32, "0")):
        for _m, _u, _how in (("whilelt", "0", "signed"), ("whilelo", "1", "unsigned")):
            _r = "X" if _width == 64 else "W"
            _add(A64Form(
                f"{_m.upper()}_{_t}_{_r.lower()}", _m, f"{_m.upper()} <Pd>.{_t.upper()}, <{_r}n>, <{_r}m>",
                f"a predicate of {_esize}-bit elements: element e active while {_r}n + e < {_r}m ({_how}); sets NZCV",
                Encoding(f"00100101 size={_sz} 1 Rm:5 000 sf={_sf} U={_u} 1 Rn:5 0 Pd:4"),
                (PReg(_t, "Pd"), GReg("Rn", _width), GReg("Rm", _width)),
                partial(predicates.whilelt, esize=_esize, width=_width, unsigned=_u == "1"), feature="SME",
                doc=predicates.whilelt.__doc__.replace("esize", str(_esize)).replace("rsize", str(_width)),
                group="predicate"))
    _add(A64Form(
        f"CNT{'W' if _t == 's' else _t.upper()}", f"cnt{'w' if _t == 's' else _t}",
        f"CNT{'W' if _t == 's' else _t.upper()} <Xd>{{, <pattern>{{, MUL #<imm>}}}}",
        f"the number of {_esize}-bit elements a pattern counts, times a multiplier",
        Encoding(f"00000100 size={_sz} 10 imm4:4 11100 0 pattern:5 Rd:5"), (GReg("Rd"), Pattern(multiplier=True)),
        partial(predicates.cnt, esize=_esize), feature="SME", doc=predicates.cnt.__doc__.replace("esize", str(_esize)),
        group="count"))

for _form in (
    A64Form("RDSVL", "rdsvl", "RDSVL <Xd>, #<imm>", "the streaming vector length in bytes, times -32..31",
            Encoding("00000100 1 0 1 11111 01011 imm6:6 Rd:5"), (GReg("Rd"), SImm("imm6", 6)), predicates.rdsvl,
            feature="SME", doc=predicates.rdsvl.__doc__, group="count"),
    A64Form("ADDVL", "addvl", "ADDVL <Xd|SP>, <Xn|SP>, #<imm>", "add -32..31 times the vector length in bytes",
            Encoding("00000100 0 01 Rn:5 01010 imm6:6 Rd:5"), (_XSP("Rd"), _XSP("Rn"), SImm("imm6", 6)),
            predicates.addvl, feature="SME", doc=predicates.addvl.__doc__, group="count"),
    A64Form("ADDSVL", "addsvl", "ADDSVL <Xd|SP>, <Xn|SP>, #<imm>",
            "add -32..31 times the streaming vector length in bytes",
            Encoding("00000100 0 01 Rn:5 01011 imm6:6 Rd:5"), (_XSP("Rd"), _XSP("Rn"), SImm("imm6", 6)),
            predicates.addsvl, feature="SME", doc=predicates.addsvl.__doc__, group="count"),
    A64Form("ADDSPL", "addspl", "ADDSPL <Xd|SP>, <Xn|SP>, #<imm>",
            "add -32..31 times the streaming predicate length in bytes",
            Encoding("00000100 0 11 Rn:5 01011 imm6:6 Rd:5"), (_XSP("Rd"), _XSP("Rn"), SImm("imm6", 6)),
            predicates.addspl, feature="SME", doc=predicates.addspl.__doc__, group="count"),
):
    _add(_form)


# ---- the scalar subset ----------------------------------------------------------------------------------
for _form in (
    A64Form("MOVZ_64_mov", "mov", "MOV <Xd>, #<imm>", "move a 16-bit immediate shifted by 0/16/32/48 (MOVZ)",
            Encoding("1 10 100101 hw:2 imm16:16 Rd:5"), (_X("Rd"), MovWideImm(64)), scalar.movz,
            doc=scalar.movz.__doc__),
    A64Form("ADD_64_imm", "add", "ADD <Xd|SP>, <Xn|SP>, #<imm>{, LSL #12}", "add an immediate",
            Encoding("1 0 0 100010 sh:1 imm12:12 Rn:5 Rd:5"), (_XSP("Rd"), _XSP("Rn"), AddImm()), scalar.add_imm,
            doc=scalar.add_imm.__doc__),
    A64Form("SUB_64_imm", "sub", "SUB <Xd|SP>, <Xn|SP>, #<imm>{, LSL #12}", "subtract an immediate",
            Encoding("1 1 0 100010 sh:1 imm12:12 Rn:5 Rd:5"), (_XSP("Rd"), _XSP("Rn"), AddImm()), scalar.sub_imm,
            doc=scalar.sub_imm.__doc__),
    A64Form("SUBS_64_imm", "subs", "SUBS <Xd>, <Xn|SP>, #<imm>{, LSL #12}", "subtract an immediate, setting NZCV",
            Encoding("1 1 1 100010 sh:1 imm12:12 Rn:5 Rd:5"), (_X("Rd"), _XSP("Rn"), AddImm()), scalar.subs_imm,
            doc=scalar.subs_imm.__doc__),
    A64Form("LDR_64_uoff", "ldr", "LDR <Xt>, [<Xn|SP>{, #<pimm>}]", "load a 64-bit register from memory",
            Encoding("11 111 0 01 01 imm12:12 Rn:5 Rt:5"), (_X("Rt"), BaseOffset(8)), scalar.ldr_x,
            doc=scalar.ldr_x.__doc__, group="memory"),
    A64Form("STR_64_uoff", "str", "STR <Xt>, [<Xn|SP>{, #<pimm>}]", "store a 64-bit register to memory",
            Encoding("11 111 0 01 00 imm12:12 Rn:5 Rt:5"), (_X("Rt"), BaseOffset(8)), scalar.str_x,
            doc=scalar.str_x.__doc__, group="memory"),
    A64Form("B", "b", "B <label>", "branch", Encoding("0 00101 imm26:26"), (BranchTarget("imm26", 26),),
            scalar.b, doc=scalar.b.__doc__, group="control"),
    A64Form("CBZ_64", "cbz", "CBZ <Xt>, <label>", "branch if a register is zero",
            Encoding("1 011010 0 imm19:19 Rt:5"), (_X("Rt"), BranchTarget("imm19", 19)), scalar.cbz,
            doc=scalar.cbz.__doc__, group="control"),
    A64Form("CBNZ_64", "cbnz", "CBNZ <Xt>, <label>", "branch if a register is not zero",
            Encoding("1 011010 1 imm19:19 Rt:5"), (_X("Rt"), BranchTarget("imm19", 19)), scalar.cbnz,
            doc=scalar.cbnz.__doc__, group="control"),
    A64Form("RET", "ret", "RET", "return (the program ends)", Encoding("1101011 0 0 10 11111 0000 0 0 11110 00000"),
            (), scalar.ret, doc=scalar.ret.__doc__, group="control"),
    A64Form("NOP", "nop", "NOP", "no operation", Encoding("11010101 00000011 0010 0000 000 11111"), (), scalar.nop,
            doc=scalar.nop.__doc__),
):
    _add(_form)

# what the assembler says of text that no form encodes but that looks like an instruction
NOT_ENCODABLE = {
    ("sudot", "multiple"): "there is no multi-vector SUDOT (Zm a list): use USDOT with Zn and Zm swapped",
}

# UDF #imm16: permanently undefined (its every execution is UNDEFINED): what a raw word that decodes
# to no isasim form would also be, but named, so that a trace can hold one
_add(A64Form("UDF", "udf", "UDF #<imm>", "permanently undefined", Encoding("0000000000000000 imm16:16"),
             (Imm("imm16", 16),), None, doc="UNDEFINED;", group="control"))
UNDEFINED_FORMS = {"UDF": "UDF is permanently undefined (Arm ARM C6.2.443)"}

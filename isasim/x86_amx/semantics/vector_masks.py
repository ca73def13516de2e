"""Opmask logic and compares with a predicate (issue 27: what compilers emit to build and combine the masks of
tails, clamps and compares): KAND ... KUNPCK, CMPPS/CMPSS, VCMPPS/VCMPSS and VPCMP[U]B/W/D/Q.  Each function is its
form's explain text; forms/vector.py declares the forms.
"""

from __future__ import annotations

from ..context import X86Context
from ..numerics import simd_fp32 as fp32
from ..operands.masking import opmask_number, unmasked
from ..state import AF, CF, OF, PF, SF, ZF
from .vector import active, elements, read, read_selected, signed, vl
from .vector_arithmetic import _each
from .vector_single import LOW32, _legacy_each, _scalar_element, _scalar_legacy, _scalar_vex
from .vector_packed_integer import _SIZE_NAMES


# ---------------------------------------------------------------------------
# Opmask logic (issue 27: what compilers emit to build and combine the masks of tails and compares): each
# reads and writes the low 8, 16, 32 or 64 bits of k registers (B: AVX512DQ, W: AVX512F, D/Q: AVX512BW, KADDB/W
# and KTESTB/W: AVX512DQ) and zeroes DEST[MAX_KL-1:size].
# ---------------------------------------------------------------------------

_K_SIZES = {"b": 8, "w": 16, "d": 32, "q": 64}
_K_FEATURES = {"b": "AVX512DQ", "w": "AVX512F", "d": "AVX512BW", "q": "AVX512BW"}


def _k(cpu: X86Context, operand) -> int:
    return cpu.state.read_opmask(opmask_number(operand.name))


def _k_forms(stem: str, operation, formula: str, summary: str, operands: int = 3):
    out = {}
    for suffix, size in _K_SIZES.items():
        ones = (1 << size) - 1

        def binary(cpu: X86Context, dest, src1, src2, size=size, ones=ones) -> None:
            cpu.state.write_opmask(opmask_number(dest.name), operation(_k(cpu, src1), _k(cpu, src2), size) & ones)

        def unary(cpu: X86Context, dest, src, size=size, ones=ones) -> None:
            cpu.state.write_opmask(opmask_number(dest.name), operation(_k(cpu, src), 0, size) & ones)

        semantics = binary if operands == 3 else unary
        name = f"{stem}{suffix}"
        feature = "AVX512DQ" if stem == "kadd" and suffix in "bw" else _K_FEATURES[suffix]
        semantics.__name__ = semantics.__qualname__ = name
        semantics.__doc__ = (f"{summary} ({feature}).\n\n"
                             f"        DEST[{size - 1}:0] := {formula.format(n=size - 1, size=size)};  "
                             f"DEST[MAX_KL-1:{size}] := 0\n")
        out[name] = semantics
    return out


_k_table = {}
_k_table.update(_k_forms("kand", lambda a, b, s: a & b, "SRC1[{n}:0] BITWISE AND SRC2[{n}:0]",
                         "AND two masks"))
_k_table.update(_k_forms("kandn", lambda a, b, s: ~a & b, "(NOT SRC1[{n}:0]) BITWISE AND SRC2[{n}:0]",
                         "AND NOT of two masks"))
_k_table.update(_k_forms("kor", lambda a, b, s: a | b, "SRC1[{n}:0] BITWISE OR SRC2[{n}:0]", "OR two masks"))
_k_table.update(_k_forms("kxnor", lambda a, b, s: ~(a ^ b), "NOT (SRC1[{n}:0] BITWISE XOR SRC2[{n}:0])",
                         "XNOR two masks (kxnorw k1, k1, k1 sets all 16 bits)"))
_k_table.update(_k_forms("kadd", lambda a, b, s: a + b, "SRC1[{n}:0] + SRC2[{n}:0]   (mod 2^{size})",
                         "Add two masks"))
_k_table.update(_k_forms("knot", lambda a, _b, s: ~a, "BITWISE NOT SRC[{n}:0]", "NOT of a mask", operands=2))
kandb, kandw, kandd, kandq = (_k_table[f"kand{s}"] for s in "bwdq")
kandnb, kandnw, kandnd, kandnq = (_k_table[f"kandn{s}"] for s in "bwdq")
korb, korw, kord, korq = (_k_table[f"kor{s}"] for s in "bwdq")
kxnorb, kxnorw, kxnord, kxnorq = (_k_table[f"kxnor{s}"] for s in "bwdq")
kaddb, kaddw, kaddd, kaddq = (_k_table[f"kadd{s}"] for s in "bwdq")
knotb, knotw, knotd, knotq = (_k_table[f"knot{s}"] for s in "bwdq")


def _kshift_forms(left: bool):
    out = {}
    for suffix, size in _K_SIZES.items():
        def semantics(cpu: X86Context, dest, src, imm8, size=size) -> None:
            count, value = imm8.value & 0xFF, _k(cpu, src) & ((1 << size) - 1)
            result = 0 if count > size - 1 else (value << count if left else value >> count)
            cpu.state.write_opmask(opmask_number(dest.name), result & ((1 << size) - 1))

        name = f"kshift{'l' if left else 'r'}{suffix}"
        semantics.__name__ = semantics.__qualname__ = name
        semantics.__doc__ = (f"Shift a mask {'left' if left else 'right'} by imm8, zeros in ({_K_FEATURES[suffix]}).\n\n"
                             f"        COUNT := imm8[7:0]\n"
                             f"        DEST[{size - 1}:0] := IF COUNT <= {size - 1} THEN SRC[{size - 1}:0] "
                             f"{'<<' if left else '>>'} COUNT ELSE 0;  DEST[MAX_KL-1:{size}] := 0\n")
        out[name] = semantics
    return out


_k_table.update(_kshift_forms(True))
_k_table.update(_kshift_forms(False))
kshiftlb, kshiftlw, kshiftld, kshiftlq = (_k_table[f"kshiftl{s}"] for s in "bwdq")
kshiftrb, kshiftrw, kshiftrd, kshiftrq = (_k_table[f"kshiftr{s}"] for s in "bwdq")


def _kunpck(cpu: X86Context, dest, src1, src2, half: int) -> None:
    ones = (1 << half) - 1
    cpu.state.write_opmask(opmask_number(dest.name), (_k(cpu, src1) & ones) << half | _k(cpu, src2) & ones)


def kunpckbw(cpu: X86Context, dest, src1, src2) -> None:
    """Join the low bytes of two masks into a word (AVX512F).

        DEST[7:0] := SRC2[7:0];  DEST[15:8] := SRC1[7:0];  DEST[MAX_KL-1:16] := 0
    """
    _kunpck(cpu, dest, src1, src2, 8)


def kunpckwd(cpu: X86Context, dest, src1, src2) -> None:
    """Join the low words of two masks into a dword (AVX512BW).

        DEST[15:0] := SRC2[15:0];  DEST[31:16] := SRC1[15:0];  DEST[MAX_KL-1:32] := 0
    """
    _kunpck(cpu, dest, src1, src2, 16)


def kunpckdq(cpu: X86Context, dest, src1, src2) -> None:
    """Join the low dwords of two masks into a qword (AVX512BW).

        DEST[31:0] := SRC2[31:0];  DEST[63:32] := SRC1[31:0]
    """
    _kunpck(cpu, dest, src1, src2, 32)


def _ktest_forms():
    out = {}
    for suffix, size in _K_SIZES.items():
        def semantics(cpu: X86Context, src1, src2, size=size) -> None:
            ones = (1 << size) - 1
            a, b = _k(cpu, src1) & ones, _k(cpu, src2) & ones
            flags = cpu.state.rflags & ~(CF | PF | AF | ZF | SF | OF)
            flags |= (ZF if a & b == 0 else 0) | (CF if ~a & b & ones == 0 else 0)
            cpu.state.set_rflags(flags)

        name = f"ktest{suffix}"
        semantics.__name__ = semantics.__qualname__ = name
        semantics.__doc__ = (f"Test two masks' {size} bits, setting ZF and CF "
                             f"({'AVX512DQ' if suffix in 'bw' else 'AVX512BW'}).\n\n"
                             f"        ZF := IF (SRC1[{size - 1}:0] BITWISE AND SRC2[{size - 1}:0]) = 0 THEN 1 ELSE 0\n"
                             f"        CF := IF ((NOT SRC1[{size - 1}:0]) BITWISE AND SRC2[{size - 1}:0]) = 0 THEN 1 "
                             f"ELSE 0\n        OF, SF, AF, PF := 0\n")
        out[name] = semantics
    return out


_k_table.update(_ktest_forms())
ktestb, ktestw, ktestd, ktestq = (_k_table[f"ktest{s}"] for s in "bwdq")


# ---------------------------------------------------------------------------
# Compares with a predicate (issue 27: clang's clamps and masked tails): CMPPS/CMPSS (SSE, into a vector of
# all-ones or zero elements), VCMPPS/VCMPSS (VEX into a vector, EVEX into an opmask register ANDed with k2)
# and VPCMP[U]B/W/D/Q (EVEX, into an opmask).  objdump prints the predicate in the mnemonic (vcmpltps
# ymm0,ymm1,ymm2 is VCMPPS with imm8 = 1); the forms print and read it so (forms/vector.py's CompareForm).
# ---------------------------------------------------------------------------

# imm8[3:0]'s predicates (imm8[4] only chooses which raise the invalid exception on a quiet NaN: masked, the
# result is the same): the relations (less, equal, greater, unordered) each is true for
FP_PREDICATES = ("eq", "lt", "le", "unord", "neq", "nlt", "nle", "ord", "eq_uq", "nge", "ngt", "false", "neq_oq",
                 "ge", "gt", "true", "eq_os", "lt_oq", "le_oq", "unord_s", "neq_us", "nlt_uq", "nle_uq", "ord_s",
                 "eq_us", "nge_uq", "ngt_uq", "false_os", "neq_os", "ge_oq", "gt_oq", "true_us")
_FP_TRUE_FOR = ({"equal"}, {"less"}, {"less", "equal"}, {"unordered"}, {"less", "greater", "unordered"},
                {"equal", "greater", "unordered"}, {"greater", "unordered"}, {"less", "equal", "greater"},
                {"equal", "unordered"}, {"less", "unordered"}, {"less", "equal", "unordered"}, set(),
                {"less", "greater"}, {"greater", "equal"}, {"greater"}, {"less", "equal", "greater", "unordered"})
INTEGER_PREDICATES = ("eq", "lt", "le", "false", "neq", "nlt", "nle", "true")  # VPCMP's imm8[2:0]


def fp_predicate(a: int, b: int, imm8: int) -> bool:
    """Whether fp32 a and b meet predicate imm8[3:0] (the SDM's CMPPS table)."""
    return fp32.compare(a, b) in _FP_TRUE_FOR[imm8 & 0xF]


def integer_predicate(a: int, b: int, imm8: int) -> bool:
    """Whether a and b (already signed or unsigned as the form reads them) meet VPCMP's predicate imm8[2:0]."""
    return (a == b, a < b, a <= b, False, a != b, a >= b, a > b, True)[imm8 & 7]


_FP_TABLE = """
        imm8[3:0]: 0 EQ, 1 LT, 2 LE, 3 UNORD, 4 NEQ, 5 NLT, 6 NLE, 7 ORD, 8 EQ_UQ, 9 NGE, 10 NGT, 11 FALSE,
        12 NEQ_OQ, 13 GE, 14 GT, 15 TRUE (16-31: the same relations, signalling on quiet NaNs or not);
        a NaN operand is UNORDERED: only UNORD, NEQ, NLT, NLE, EQ_UQ, NGE, NGT and TRUE hold.
"""


def cmpps(cpu: X86Context, dest, src, imm8) -> None:
    """Compare packed single-precision values by predicate imm8[2:0] (SSE); cmpltps xmm1, xmm2 is imm8 = 1.

        FOR j := 0 TO 3: DEST.dword[j] := IF CMP(DEST.fp32[j], SRC.fp32[j], imm8) THEN FFFFFFFFH ELSE 0
        DEST[MAXVL-1:128] unmodified
    """
    _legacy_each(cpu, dest, src, 32, lambda a, b: LOW32 if fp_predicate(a, b, imm8.value & 7) else 0)


def cmpss(cpu: X86Context, dest, src, imm8) -> None:
    """Compare scalar single-precision values by predicate imm8[2:0] (SSE); cmpeqss xmm1, xmm2 is imm8 = 0.

        DEST[31:0] := IF CMP(DEST[31:0], SRC[31:0], imm8) THEN FFFFFFFFH ELSE 0;  DEST[MAXVL-1:32] unmodified
    """
    _scalar_legacy(cpu, dest, src, lambda a, b: LOW32 if fp_predicate(a, b, imm8.value & 7) else 0)


def _compare_into_mask(cpu: X86Context, dest, src1, src2, size: int, bits: int, test) -> None:
    count = bits // size
    mask = active(cpu, dest, count)
    a = elements(read(cpu, src1, bits), size, count)
    b = elements(read_selected(cpu, src2, bits, size, mask), size, count)
    cpu.state.write_opmask(opmask_number(unmasked(dest).name),
                           sum(1 << j for j in range(count) if mask >> j & 1 and test(a[j], b[j])))


def vcmpps(cpu: X86Context, dest, src1, src2, imm8) -> None:
    """Compare packed single-precision values by predicate imm8[4:0] (VEX: AVX, into a vector; EVEX: AVX512F,
    into an opmask register, under k2); vcmpltps ymm1, ymm2, ymm3 is imm8 = 1.

        VEX:  FOR j: DEST.dword[j] := IF CMP(SRC1.fp32[j], SRC2.fp32[j], imm8) THEN FFFFFFFFH ELSE 0
              DEST[MAXVL-1:VL] := 0
        EVEX: FOR j: k1[j] := IF (k2[j] OR *no writemask*) AND CMP(SRC1.fp32[j], SRC2.fp32[j], imm8) THEN 1 ELSE 0
              k1[MAX_KL-1:VL/32] := 0
    """
    test = lambda a, b: fp_predicate(a, b, imm8.value)  # noqa: E731
    target = unmasked(dest)
    if opmask_number(target.name) is not None:
        _compare_into_mask(cpu, dest, src1, src2, 32, vl(src1), test)
        return
    _each(cpu, dest, (src1, src2), 32, lambda a, b: LOW32 if test(a, b) else 0)


def vcmpss(cpu: X86Context, dest, src1, src2, imm8) -> None:
    """Compare scalar single-precision values by predicate imm8[4:0] (VEX: AVX, into DEST[31:0]; EVEX:
    AVX512F, into k1[0], under k2[0]); vcmpeqss xmm1, xmm2, xmm3 is imm8 = 0.

        VEX:  DEST[31:0] := IF CMP(SRC1[31:0], SRC2[31:0], imm8) THEN FFFFFFFFH ELSE 0
              DEST[127:32] := SRC1[127:32];  DEST[MAXVL-1:128] := 0
        EVEX: k1[0] := IF (k2[0] OR *no writemask*) AND CMP(SRC1[31:0], SRC2[31:0], imm8) THEN 1 ELSE 0
              k1[MAX_KL-1:1] := 0
    """
    test = lambda a, b: fp_predicate(a, b, imm8.value)  # noqa: E731
    target = unmasked(dest)
    if opmask_number(target.name) is not None:
        mask = active(cpu, dest, 1)
        hit = bool(mask) and test(read(cpu, src1, 32) & LOW32, _scalar_element(cpu, src2))
        cpu.state.write_opmask(opmask_number(target.name), int(hit))
        return
    _scalar_vex(cpu, dest, src1, src2, lambda a, b: LOW32 if test(a, b) else 0)


for _f in (cmpps, cmpss, vcmpps, vcmpss):
    _f.__doc__ += _FP_TABLE


def _integer_compare(name: str, size: int, is_signed: bool, feature: str):
    e = _SIZE_NAMES[size]

    def semantics(cpu: X86Context, dest, src1, src2, imm8) -> None:
        read_as = (lambda x: signed(x, size)) if is_signed else (lambda x: x)
        _compare_into_mask(cpu, dest, src1, src2, size, vl(src1),
                           lambda a, b: integer_predicate(read_as(a), read_as(b), imm8.value))

    semantics.__name__ = semantics.__qualname__ = name
    semantics.__doc__ = (f"Compare packed {'signed' if is_signed else 'unsigned'} {e}s by predicate imm8[2:0] into an "
                         f"opmask register ({feature}; AVX512VL below 512 bits), under k2.\n\n"
                         f"        FOR j := 0 TO VL/{size} - 1\n"
                         f"            k1[j] := IF (k2[j] OR *no writemask*) AND CMP(SRC1.{e}[j], SRC2.{e}[j], imm8) "
                         f"THEN 1 ELSE 0\n        k1[MAX_KL-1:VL/{size}] := 0\n\n"
                         f"        imm8[2:0]: 0 EQ, 1 LT, 2 LE, 3 FALSE, 4 NEQ, 5 NLT (>=), 6 NLE (>), 7 TRUE\n")
    return semantics


vpcmpb, vpcmpub = _integer_compare("vpcmpb", 8, True, "AVX512BW"), _integer_compare("vpcmpub", 8, False, "AVX512BW")
vpcmpw, vpcmpuw = _integer_compare("vpcmpw", 16, True, "AVX512BW"), _integer_compare("vpcmpuw", 16, False, "AVX512BW")
vpcmpd, vpcmpud = _integer_compare("vpcmpd", 32, True, "AVX512F"), _integer_compare("vpcmpud", 32, False, "AVX512F")
vpcmpq, vpcmpuq = _integer_compare("vpcmpq", 64, True, "AVX512F"), _integer_compare("vpcmpuq", 64, False, "AVX512F")

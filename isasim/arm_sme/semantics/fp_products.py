"""The SME floating-point outer products into a ZA tile (FMOPA/FMOPS .S, the widening .H->.S FMOPA/FMOPS,
BFMOPA/BFMOPS) and the SME2 FDOT/BFDOT .H->.S into ZA vector groups, exactly as the Arm ARM's
Operations (C9.2.116/118 FMOPA/FMOPS non-widening, 115/117 widening, 43/45 BFMOPA/BFMOPS widening,
78-80 FDOT, 16-18 BFDOT).  The Operation text (explain) names the per-element functions of
isasim.arm_sme.numerics.fp_asl (FPMulAdd_ZA, FPDotAdd_ZA, BFDotAdd), the definition; execution applies
their array forms (numerics/fp_arrays.py: FPMulAdd_ZA_array, ...) to a whole tile or vector group at once,
with the FPCR at its reset value (fp_asl.FPCR_DEFAULT).  The array forms give the same bit patterns
element for element (fp_arrays.py says why, tests/arm_sme/numerics/test_fp_arrays.py compares them), and
writing an element with its old value is no write (the journal keeps only changes), so one whole-tile
write equals the ASL's per-element updates.

Outer products: tile element (row, col) of ZAda.S.  Non-widening: it is updated only when element
``row`` of Pn and element ``col`` of Pm are both active.  Widening: Zn holds a dim x 2 matrix of
16-bit elements (row ``row`` is elements 2*row and 2*row+1), Zm a 2 x dim one; an inactive 16-bit
element counts as +0.0, and the ZA element is left alone only when neither pair (prow_0, pcol_0) nor
(prow_1, pcol_1) is active.  The subtracting forms negate the active Zn elements only (an inactive
one stays +0.0).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...core.numerics import FP32
from ..numerics.fp_arrays import BFDotAdd_array, FPDotAdd_ZA_array, FPMulAdd_ZA_array
from ..numerics.fp_asl import FPCR_DEFAULT
from .za_tiles import tile_rows, vector_group_rows

FPCR = FPCR_DEFAULT  # the FPCR every form reads (the trace format has no FPCR: see fp_asl.py)


@dataclass(frozen=True)
class FPOuterShape:
    kind: str  # "fmopa" (non-widening .S), "fmopa_widening" (.H->.S) or "bfmopa" (.H->.S)
    subtract: bool  # FMOPS/BFMOPS


@dataclass(frozen=True)
class FPDotShape:
    kind: str  # "fdot" (half precision) or "bfdot" (BFloat16)
    nreg: int  # VGx2 or VGx4
    second: str  # "single", "multiple" or "indexed"


def fp_outer_product(cpu, shape: FPOuterShape, da: int, a: int, b: int, n: int, m: int) -> None:
    """The whole tile at once: every element's FPMulAdd_ZA / FPDotAdd_ZA / BFDotAdd through the array
    forms in fp_arrays.py (the same rules as the per-element functions the Operation text names, compared with
    them lane by lane in tests/arm_sme/numerics/test_fp_arrays.py)."""
    cpu.CheckStreamingSVEAndZAEnabled()
    dim = cpu.VL // 32
    rows = tile_rows(da, 32, cpu.svlb).tolist()  # ZAtile[da, 32]: row `row` is ZA vector rows[row]
    sums = cpu.ZAvectors(rows).view(np.uint32)  # elem3 of (row, col) is sums[row, col]
    if shape.kind == "fmopa":
        mask1, mask2 = cpu.ActiveElements(a, 32), cpu.ActiveElements(b, 32)
        op1, op2 = cpu.Z(n).view(np.uint32), cpu.Z(m).view(np.uint32)
        elem1 = op1 ^ np.uint32(FP32.sign_mask) if shape.subtract else op1  # FPNeg (AH = 0): the sign bit
        active = mask1[:, None] & mask2[None, :]
        if not active.any():
            return
        result = np.where(active, FPMulAdd_ZA_array(sums, elem1[:, None], op2[None, :]), sums)
    else:
        dot_add = FPDotAdd_ZA_array if shape.kind == "fmopa_widening" else BFDotAdd_array
        mask1, mask2 = cpu.ActiveElements(a, 16), cpu.ActiveElements(b, 16)
        # an inactive 16-bit element is FPZero('0', 16); FMOPS/BFMOPS negate the active row elements
        # (FPNeg with AH = 0 and BFNeg both invert the sign bit only)
        erow = np.where(mask1, cpu.Z(n).view(np.uint16), np.uint16(0))
        if shape.subtract:
            erow = np.where(mask1, erow ^ np.uint16(0x8000), erow)
        ecol = np.where(mask2, cpu.Z(m).view(np.uint16), np.uint16(0))
        prow, pcol = mask1.reshape(dim, 2), mask2.reshape(dim, 2)  # prow_0, prow_1 of each row
        active = (prow[:, None, 0] & pcol[None, :, 0]) | (prow[:, None, 1] & pcol[None, :, 1])
        if not active.any():
            return
        erow, ecol = erow.reshape(dim, 2), ecol.reshape(dim, 2)
        result = np.where(active, dot_add(sums, erow[:, None, 0], erow[:, None, 1], ecol[None, :, 0],
                                          ecol[None, :, 1]), sums)
    cpu.set_ZAvectors(rows, result.astype(np.uint32).view(np.uint8))


def fp_za_dot(cpu, shape: FPDotShape, group: tuple[int, int], n: int, m) -> None:
    """Every element of every vector of the group at once, indexed [r, e] as the ASL's loops (the array
    forms of FPDotAdd_ZA / BFDotAdd in fp_arrays.py)."""
    cpu.CheckStreamingSVEAndZAEnabled()
    v, offset = group
    elements = cpu.VL // 32
    nreg = shape.nreg
    rows = vector_group_rows(cpu.svlb, cpu.X(v), offset, nreg)  # only the low 32 bits of Wv count
    dot_add = FPDotAdd_ZA_array if shape.kind == "fdot" else BFDotAdd_array
    operand1 = cpu.Zs(n, nreg).view(np.uint16).reshape(nreg, elements, 2)  # Elem[Z[n+r], 2*e + i]
    if shape.second == "indexed":
        zm, index = m
        operand2 = cpu.Z(zm).view(np.uint16).reshape(elements, 2)
        eltspersegment = 128 // 32
        e = np.arange(elements)
        elt2 = operand2[(e - e % eltspersegment) + index][None]  # pair `index` of e's 128-bit segment
    elif shape.second == "single":
        elt2 = cpu.Z(m).view(np.uint16).reshape(1, elements, 2)
    else:
        elt2 = cpu.Zs(m, nreg).view(np.uint16).reshape(nreg, elements, 2)
    sums = cpu.ZAvectors(rows).view(np.uint32)
    result = dot_add(sums, operand1[..., 0], operand1[..., 1], elt2[..., 0], elt2[..., 1])
    cpu.set_ZAvectors(rows, result.view(np.uint8))


def bound_outer(shape: FPOuterShape):
    """fp_outer_product for one form: execute(cpu, da, a, b, n, m)."""

    def execute(cpu, da, a, b, n, m):
        fp_outer_product(cpu, shape, da, a, b, n, m)

    return execute


def bound_dot(shape: FPDotShape):
    """fp_za_dot for one form: execute(cpu, group, n, m)."""

    def execute(cpu, group, n, m):
        fp_za_dot(cpu, shape, group, n, m)

    return execute


# ---- the Operation of each form, as the Arm ARM writes it (explain prints it) ------------------------

_HEADER = ("CheckStreamingSVEAndZAEnabled();\n"
           "constant integer VL = CurrentVL;                       // SVL\n"
           "constant integer PL = VL DIV 8;\n")


def _operands(name: str) -> str:
    return ("constant bits(PL) mask1 = P[a, PL];\n"
            "constant bits(PL) mask2 = P[b, PL];\n"
            f"constant bits(VL) {name}1 = Z[n, VL];\n"
            f"constant bits(VL) {name}2 = Z[m, VL];\n"
            f"constant bits(dim*dim*32) {name}3 = ZAtile[da, 32, dim*dim*32];\n"
            "bits(dim*dim*32) result;\n")


def outer_asl(mnemonic: str, shape: FPOuterShape) -> str:
    if shape.kind == "fmopa":
        negate = "FPNeg(Elem[op1, row, 32], FPCR)" if shape.subtract else "Elem[op1, row, 32]"
        return (f"// {mnemonic.upper()} (non-widening, single precision)\n" + _HEADER +
                "constant integer dim = VL DIV 32;\n" + _operands("op") +
                "for row = 0 to dim-1\n"
                "    for col = 0 to dim-1\n"
                "        constant bits(32) elem2 = Elem[op2, col, 32];\n"
                "        constant bits(32) elem3 = Elem[op3, row*dim+col, 32];\n"
                "        if ActivePredicateElement(mask1, row, 32) && ActivePredicateElement(mask2, col, 32) then\n"
                f"            constant bits(32) elem1 = {negate};\n"
                "            Elem[result, row*dim+col, 32] = FPMulAdd_ZA(elem3, elem1, elem2, FPCR);\n"
                "        else\n"
                "            Elem[result, row*dim+col, 32] = elem3;\n"
                "ZAtile[da, 32, dim*dim*32] = result;\n"
                "// FPMulAdd_ZA: addend + op1*op2 rounded once; FPCR.DN = '1', no exceptions")
    dot = "FPDotAdd_ZA" if shape.kind == "fmopa_widening" else "BFDotAdd"
    neg = "FPNeg(erow_{k}, FPCR)" if shape.kind == "fmopa_widening" else "BFNeg(erow_{k}, FALSE)"
    negation = "".join(f"        if prow_{k} then erow_{k} = {neg.format(k=k)};\n" for k in (0, 1)) \
        if shape.subtract else ""
    note = ("// FPDotAdd_ZA: FPAdd(addend, FPDot(...)): the dot product rounded once, then the add; FPCR.DN = '1'"
            if shape.kind == "fmopa_widening" else
            "// BFDotAdd, FPCR.EBF = '0': FPAdd_BF16(addend, FPAdd_BF16(BFMulH(a1, b1), BFMulH(a2, b2))),\n"
            "// each step BFRound (round to odd, denormals flushed, NaN -> default NaN)")
    return (f"// {mnemonic.upper()} (widening, 2-way, 16-bit to single precision)\n" + _HEADER +
            "constant integer dim = VL DIV 32;\n" + _operands("operand") +
            "for row = 0 to dim-1\n"
            "    for col = 0 to dim-1\n"
            "        prow_0 = ActivePredicateElement(mask1, 2*row + 0, 16);\n"
            "        prow_1 = ActivePredicateElement(mask1, 2*row + 1, 16);\n"
            "        pcol_0 = ActivePredicateElement(mask2, 2*col + 0, 16);\n"
            "        pcol_1 = ActivePredicateElement(mask2, 2*col + 1, 16);\n"
            "        bits(32) sum = Elem[operand3, row*dim+col, 32];\n"
            "        if (prow_0 && pcol_0) || (prow_1 && pcol_1) then\n"
            "            erow_0 = if prow_0 then Elem[operand1, 2*row + 0, 16] else FPZero('0', 16);\n"
            "            erow_1 = if prow_1 then Elem[operand1, 2*row + 1, 16] else FPZero('0', 16);\n"
            "            ecol_0 = if pcol_0 then Elem[operand2, 2*col + 0, 16] else FPZero('0', 16);\n"
            "            ecol_1 = if pcol_1 then Elem[operand2, 2*col + 1, 16] else FPZero('0', 16);\n"
            f"{negation.replace('        if', '            if')}"
            f"            sum = {dot}(sum, erow_0, erow_1, ecol_0, ecol_1, FPCR);\n"
            "        Elem[result, row*dim+col, 32] = sum;\n"
            "ZAtile[da, 32, dim*dim*32] = result;\n" + note)


def dot_asl(mnemonic: str, shape: FPDotShape) -> str:
    dot = "FPDotAdd_ZA" if shape.kind == "fdot" else "BFDotAdd"
    operand2 = "Z[(m+r) MOD 32, VL]" if shape.second == "multiple" else "Z[m, VL]"
    if shape.second == "indexed":
        pick = ("        constant integer segmentbase = e - (e MOD 4);   // eltspersegment = 128 DIV 32\n"
                "        constant integer s = segmentbase + index;\n")
        i2 = "s"
    else:
        pick, i2 = "", "e"
    return (f"// {mnemonic.upper()} (2-way, {shape.second}, VGx{shape.nreg})\n"
            "CheckStreamingSVEAndZAEnabled();\n"
            "constant integer VL = CurrentVL;                       // SVL\n"
            "constant integer elements = VL DIV 32;\n"
            f"constant integer vstride = (VL DIV 8) DIV {shape.nreg};\n"
            "constant bits(32) vbase = X[v, 32];                    // only the low 32 bits of Wv\n"
            "integer vec = (UInt(vbase) + offset) MOD vstride;\n"
            f"for r = 0 to {shape.nreg - 1}\n"
            "    operand1 = Z[(n+r) MOD 32, VL];\n"
            f"    operand2 = {operand2};\n"
            "    operand3 = ZAvector[vec, VL];\n"
            "    for e = 0 to elements-1\n"
            "        elt1_a = Elem[operand1, 2 * e + 0, 16];\n"
            "        elt1_b = Elem[operand1, 2 * e + 1, 16];\n"
            f"{pick}"
            f"        elt2_a = Elem[operand2, 2 * {i2} + 0, 16];\n"
            f"        elt2_b = Elem[operand2, 2 * {i2} + 1, 16];\n"
            "        bits(32) sum = Elem[operand3, e, 32];\n"
            f"        sum = {dot}(sum, elt1_a, elt1_b, elt2_a, elt2_b, FPCR);\n"
            "        Elem[result, e, 32] = sum;\n"
            "    ZAvector[vec, VL] = result;\n"
            "    vec = vec + vstride;")

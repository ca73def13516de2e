"""The SME floating-point outer products into a ZA tile (FMOPA/FMOPS .S, the widening .H->.S FMOPA/FMOPS,
BFMOPA/BFMOPS) and the SME2 FDOT/BFDOT .H->.S into ZA vector groups, exactly as the Arm ARM's
Operations (C9.2.116/118 FMOPA/FMOPS non-widening, 115/117 widening, 43/45 BFMOPA/BFMOPS widening,
78-80 FDOT, 16-18 BFDOT).  Every element goes through isasim.arm_sme.fp (FPMulAdd_ZA, FPDotAdd_ZA,
BFDotAdd) with the FPCR at its reset value (fp.FPCR_DEFAULT): the numerics are exact integer
arithmetic, one Python call per ZA element, so correctness comes before speed here.

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

from . import fp
from .fp import FP32, FPCR_DEFAULT, BFDotAdd, BFNeg, FPDotAdd_ZA, FPMulAdd_ZA, FPNeg
from .tiles import tile_rows, vector_group_rows

FPCR = FPCR_DEFAULT  # the FPCR every form reads (the trace format has no FPCR: see fp.py)


@dataclass(frozen=True)
class FPOuterShape:
    kind: str  # "fmopa" (non-widening .S), "fmopa_widening" (.H->.S) or "bfmopa" (.H->.S)
    subtract: bool  # FMOPS/BFMOPS


@dataclass(frozen=True)
class FPDotShape:
    kind: str  # "fdot" (half precision) or "bfdot" (BFloat16)
    nreg: int  # VGx2 or VGx4
    second: str  # "single", "multiple" or "indexed"


def _elements(vector: np.ndarray, dtype) -> list[int]:
    return vector.view(dtype).tolist()


def fp_outer_product(cpu, shape: FPOuterShape, da: int, a: int, b: int, n: int, m: int) -> None:
    cpu.CheckStreamingSVEAndZAEnabled()
    dim = cpu.VL // 32
    rows = tile_rows(da, 32, cpu.svlb)  # ZAtile[da, 32]: row `row` is ZA vector rows[row]
    if shape.kind == "fmopa":
        mask1, mask2 = cpu.ActiveElements(a, 32).tolist(), cpu.ActiveElements(b, 32).tolist()
        op1, op2 = _elements(cpu.Z(n), np.uint32), _elements(cpu.Z(m), np.uint32)
        for row in range(dim):
            if not mask1[row]:
                continue
            elem1 = FPNeg(op1[row], FP32, FPCR) if shape.subtract else op1[row]
            sums = _elements(cpu.ZAvector(rows[row]), np.uint32)
            result = [FPMulAdd_ZA(sums[col], elem1, op2[col], FP32, FPCR) if mask2[col] else sums[col]
                      for col in range(dim)]
            cpu.set_ZAvector(int(rows[row]), np.array(result, dtype=np.uint32).view(np.uint8))
        return
    dot_add = FPDotAdd_ZA if shape.kind == "fmopa_widening" else BFDotAdd
    negate = (lambda op: FPNeg(op, fp.FP16, FPCR)) if shape.kind == "fmopa_widening" else BFNeg
    mask1, mask2 = cpu.ActiveElements(a, 16).tolist(), cpu.ActiveElements(b, 16).tolist()
    operand1, operand2 = _elements(cpu.Z(n), np.uint16), _elements(cpu.Z(m), np.uint16)
    # an inactive 16-bit element is FPZero('0', 16); FMOPS/BFMOPS negate the active row elements
    erow = [operand1[i] if mask1[i] else 0 for i in range(2 * dim)]
    if shape.subtract:
        erow = [negate(value) if mask1[i] else value for i, value in enumerate(erow)]
    ecol = [operand2[i] if mask2[i] else 0 for i in range(2 * dim)]
    for row in range(dim):
        prow_0, prow_1 = mask1[2 * row], mask1[2 * row + 1]
        if not (prow_0 or prow_1):
            continue
        erow_0, erow_1 = erow[2 * row], erow[2 * row + 1]
        sums = _elements(cpu.ZAvector(rows[row]), np.uint32)
        result = []
        for col in range(dim):
            pcol_0, pcol_1 = mask2[2 * col], mask2[2 * col + 1]
            if (prow_0 and pcol_0) or (prow_1 and pcol_1):
                result.append(dot_add(sums[col], erow_0, erow_1, ecol[2 * col], ecol[2 * col + 1], FPCR))
            else:
                result.append(sums[col])
        cpu.set_ZAvector(int(rows[row]), np.array(result, dtype=np.uint32).view(np.uint8))


def fp_za_dot(cpu, shape: FPDotShape, group: tuple[int, int], n: int, m) -> None:
    cpu.CheckStreamingSVEAndZAEnabled()
    v, offset = group
    elements = cpu.VL // 32
    rows = vector_group_rows(cpu.svlb, cpu.X(v), offset, shape.nreg)  # only the low 32 bits of Wv count
    dot_add = FPDotAdd_ZA if shape.kind == "fdot" else BFDotAdd
    if shape.second == "indexed":
        zm, index = m
        operand2 = _elements(cpu.Z(zm), np.uint16)
        eltspersegment = 128 // 32
        # element e uses pair `index` of its own 128-bit segment of Zm
        pairs = [(e - e % eltspersegment) + index for e in range(elements)]
        fixed2 = [(operand2[2 * s], operand2[2 * s + 1]) for s in pairs]
    elif shape.second == "single":
        operand2 = _elements(cpu.Z(m), np.uint16)
        fixed2 = [(operand2[2 * e], operand2[2 * e + 1]) for e in range(elements)]
    for r in range(shape.nreg):
        operand1 = _elements(cpu.Z((n + r) % 32), np.uint16)
        if shape.second == "multiple":
            operand2 = _elements(cpu.Z((m + r) % 32), np.uint16)
            elt2 = [(operand2[2 * e], operand2[2 * e + 1]) for e in range(elements)]
        else:
            elt2 = fixed2
        sums = _elements(cpu.ZAvector(rows[r]), np.uint32)
        result = [dot_add(sums[e], operand1[2 * e], operand1[2 * e + 1], elt2[e][0], elt2[e][1], FPCR)
                  for e in range(elements)]
        cpu.set_ZAvector(rows[r], np.array(result, dtype=np.uint32).view(np.uint8))


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

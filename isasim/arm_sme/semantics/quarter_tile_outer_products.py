"""SME2.2's quarter-tile outer products (FEAT_SME_MOP4): SMOP4A/SMOP4S, UMOP4A/UMOP4S, SUMOP4A/SUMOP4S,
USMOP4A/USMOP4S (4-way .B->.S, 2-way .H->.S, 4-way .H->.D with FEAT_SME_I16I64), FMOP4A/FMOP4S (.S; .D with
FEAT_SME_F64F64; .H with FEAT_SME_F16F16; the widening 2-way .H->.S) and BFMOP4A/BFMOP4S (the widening 2-way
.H->.S; the non-widening .H with FEAT_SME_B16B16), as the Arm ARM's Operations write them (C9.2.220-223 SMOP4A/S,
309-312 UMOP4A/S, 276-277 SUMOP4A/S, 331-332 USMOP4A/S, 109-112 FMOP4A/S, 39-42 BFMOP4A/S).

The tile is 2*dim x 2*dim elements (dim = the elements of esize in half a vector) and is updated as four
quarters.  Quarter (row_hv, col_hv) takes its rows from half ``row_hv`` of ``Z[n + (nreg-1)*col_hv]`` and its
columns from half ``col_hv`` of ``Z[m + (mreg-1)*row_hv]``: a second Zn register feeds the right-hand
quarters (not the lower ones), a second Zm register the lower quarters (not the right-hand ones).  With one
register each, the instruction is the whole-tile outer product of Zn by Zm.  There are no predicates: every
element of the tile is written.

Each element is the outer products' own per-element rule: the integer forms add (or subtract) the ways-long
dot product of a row and a column, modulo 2^esize (integer_outer_products' arithmetic); the non-widening FP
forms FPMulAdd_ZA / BFMulAdd_ZA (elem1 negated by the S forms), the widening ones FPDotAdd_ZA / BFDotAdd (both
row elements negated by the S forms), through the array forms of numerics/fp_arrays.py, with the FPCR at its
reset value (fp_asl.FPCR_DEFAULT).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..numerics.fp_arrays import BFDotAdd_array, FPDotAdd_ZA_array
from .integer_dots import ACCUMULATOR_TYPES, SOURCE_TYPES
from .za_fp_multiply_add import UINTS, _mul_add, _negate
from .za_tiles import tile_rows


@dataclass(frozen=True)
class Mop4Shape:
    kind: str  # "int" (the integer sums), "fp" (non-widening FPMulAdd_ZA/BFMulAdd_ZA), "fp_widening" (FPDotAdd_ZA),
    #            "bf_widening" (BFDotAdd)
    esize: int  # the ZA tile's element size
    ways: int  # source elements per tile element: 1 (non-widening), 2 or 4
    nreg: int  # 1: Zn; 2: {Zn1-Zn2}
    mreg: int  # 1: Zm; 2: {Zm1-Zm2}
    subtract: bool  # the ...MOP4S forms
    fmt: str = ""  # the FP sources' format: "h", "s", "d" or "bf" ("" for the integer forms)
    signed1: bool = True  # the integer forms: Zn's elements are SInt (op1_unsigned = !signed1)
    signed2: bool = True  # Zm's elements are SInt
    requires: str = ""  # the feature the form needs beside FEAT_SME_MOP4 (SME_I16I64, SME_F64F64, ...), or ""

    @property
    def source_bits(self) -> int:
        return self.esize // self.ways


def _halves(cpu, z: int, shape: Mop4Shape, dtype) -> np.ndarray:
    """Z[z] as 2*dim groups of ``ways`` elements (group g: elements ways*g + k)."""
    return cpu.Z(z).view(dtype).reshape(-1, shape.ways)


def _registers(shape: Mop4Shape, n: int, m: int, row_hv: int, col_hv: int) -> tuple[int, int]:
    """The ASL's op1 and op2 of quarter (row_hv, col_hv): a second Zn feeds the right-hand quarters, a second
    Zm the lower ones."""
    return n + (shape.nreg - 1) * col_hv, m + (shape.mreg - 1) * row_hv


def _quarter_int(shape: Mop4Shape, sums, rows, cols):
    acc = ACCUMULATOR_TYPES[shape.esize]
    products = (rows.astype(np.int64) @ cols.astype(np.int64).T).astype(acc)  # exact, then modulo 2^esize
    return sums - products if shape.subtract else sums + products


def _quarter_fp(shape: Mop4Shape, sums, rows, cols):
    dim = sums.shape[0]
    if shape.kind == "fp":
        elem1 = rows[:, 0]
        if shape.subtract:
            elem1 = _negate(elem1, shape.esize)  # FPNeg (FPCR.AH = 0) and BFNeg: the sign bit
        result = _mul_add(shape.fmt, sums.ravel(), np.repeat(elem1, dim), np.tile(cols[:, 0], dim))
        return np.asarray(result).astype(sums.dtype).reshape(dim, dim)
    erow = _negate(rows, 16) if shape.subtract else rows  # both erow_0 and erow_1
    dot_add = FPDotAdd_ZA_array if shape.kind == "fp_widening" else BFDotAdd_array
    result = dot_add(sums.ravel(), np.repeat(erow[:, 0], dim), np.repeat(erow[:, 1], dim),
                     np.tile(cols[:, 0], dim), np.tile(cols[:, 1], dim))
    return np.asarray(result).astype(np.uint32).reshape(dim, dim)


def quarter_tile_outer_product(cpu, shape: Mop4Shape, da: int, n: int, m: int) -> None:
    """The four quarters of ZAda, each from the Zn and Zm registers the ASL names for it."""
    if shape.requires and shape.requires not in cpu.state.features:
        raise cpu.feature_missing(shape.requires)  # decoded UNDEFINED, before the mode checks
    cpu.CheckStreamingSVEAndZAEnabled()
    esize = shape.esize
    dim = (cpu.VL // 2) // esize
    rows = tile_rows(da, esize, cpu.svlb).tolist()  # ZAtile row r is ZA vector rows[r]
    if shape.kind == "int":
        acc = ACCUMULATOR_TYPES[esize]
        sources = (SOURCE_TYPES[shape.source_bits, shape.signed1], SOURCE_TYPES[shape.source_bits, shape.signed2])
    else:
        acc = UINTS[esize]
        sources = (UINTS[shape.source_bits],) * 2
    op3 = cpu.ZAvectors(rows).view(acc)
    result = op3.copy()
    quarter = _quarter_int if shape.kind == "int" else _quarter_fp
    for outprod in range(4):
        row_hv, col_hv = divmod(outprod, 2)
        zn, zm = _registers(shape, n, m, row_hv, col_hv)
        op1, op2 = _halves(cpu, zn, shape, sources[0]), _halves(cpu, zm, shape, sources[1])
        r, c = slice(row_hv * dim, (row_hv + 1) * dim), slice(col_hv * dim, (col_hv + 1) * dim)
        result[r, c] = quarter(shape, op3[r, c], op1[r], op2[c])
    cpu.set_ZAvectors(rows, np.ascontiguousarray(result).view(np.uint8))


def bound(shape: Mop4Shape):
    """quarter_tile_outer_product for one form: execute(cpu, da, n, m)."""

    def execute(cpu, da, n, m):
        quarter_tile_outer_product(cpu, shape, da, n, m)

    return execute


# ---- the Operation of each form, as the Arm ARM writes it (explain prints it) --------------------------

def _element(shape: Mop4Shape) -> str:
    esize, ways = shape.esize, shape.ways
    if shape.kind == "int":
        narrow = f"esize DIV {ways}"
        op1 = "UInt" if not shape.signed1 else "SInt"
        op2 = "UInt" if not shape.signed2 else "SInt"
        return ("            bits(esize) sum = Elem[op3, tile_idx, esize];\n"
                f"            for k = 0 to {ways - 1}\n"
                f"                op1elt = Elem[op1, {ways}*row_idx + k, {narrow}];\n"
                f"                op2elt = Elem[op2, {ways}*col_idx + k, {narrow}];\n"
                f"                prod = {op1}(op1elt) * {op2}(op2elt);\n"
                + ("                prod = -prod;                        // sub_op\n" if shape.subtract else "")
                + f"                sum = sum + prod;                    // modulo 2^{esize}\n"
                "            Elem[result, tile_idx, esize] = sum;\n")
    if shape.kind == "fp":
        rule = "BFMulAdd_ZA" if shape.fmt == "bf" else "FPMulAdd_ZA"
        neg = "BFNeg(elem1, FALSE)" if shape.fmt == "bf" else "FPNeg(elem1, FPCR)"
        return (f"            bits(esize) elem1 = Elem[op1, row_idx, esize];\n"
                "            elem2 = Elem[op2, col_idx, esize];\n"
                "            elem3 = Elem[op3, tile_idx, esize];\n"
                + (f"            elem1 = {neg};                // sub_op\n" if shape.subtract else "")
                + f"            Elem[result, tile_idx, esize] = {rule}(elem3, elem1, elem2, FPCR);\n")
    rule = "FPDotAdd_ZA" if shape.kind == "fp_widening" else "BFDotAdd"
    neg = "FPNeg(erow_{k}, FPCR)" if shape.kind == "fp_widening" else "BFNeg(erow_{k}, FALSE)"
    negation = "".join(f"            erow_{k} = {neg.format(k=k)};          // sub_op\n" for k in (0, 1))
    return ("            sum = Elem[op3, tile_idx, 32];\n"
            "            bits(16) erow_0 = Elem[op1, 2*row_idx + 0, 16];\n"
            "            bits(16) erow_1 = Elem[op1, 2*row_idx + 1, 16];\n"
            "            ecol_0 = Elem[op2, 2*col_idx + 0, 16];\n"
            "            ecol_1 = Elem[op2, 2*col_idx + 1, 16];\n"
            + (negation if shape.subtract else "")
            + f"            Elem[result, tile_idx, 32] = {rule}(sum, erow_0, erow_1, ecol_0, ecol_1, FPCR);\n")


_NOTES = {"int": "",
          "fp": "// FPMulAdd_ZA / BFMulAdd_ZA: elem3 + elem1*elem2 rounded once; FPCR.DN = '1', no exceptions",
          "fp_widening": "// FPDotAdd_ZA: FPAdd(sum, FPDot(...)): the dot product rounded once, then the add; "
                         "FPCR.DN = '1'",
          "bf_widening": "// BFDotAdd, FPCR.EBF = '0': each step BFRound (round to odd, denormals flushed, "
                         "NaN -> default NaN)"}


def asl(mnemonic: str, shape: Mop4Shape) -> str:
    """The form's Operation, in the Arm ARM's ASL (what explain prints)."""
    esize = shape.esize
    lists = {1: "one register", 2: "a pair"}
    return (f"// {mnemonic.upper()} (quarter tiles, {shape.ways}-way, Zn {lists[shape.nreg]}, "
            f"Zm {lists[shape.mreg]})\n"
            "CheckStreamingSVEAndZAEnabled();\n"
            f"constant integer esize = {esize};\n"
            f"constant integer nreg = {shape.nreg};\n"
            f"constant integer mreg = {shape.mreg};\n"
            "constant integer VL = CurrentVL;                       // SVL\n"
            "constant integer hvsize = VL DIV 2;\n"
            "constant integer dim = hvsize DIV esize;\n"
            "constant integer tilesize = 4*dim*dim*esize;\n"
            "constant bits(tilesize) op3 = ZAtile[da, esize, tilesize];\n"
            "bits(tilesize) result;\n"
            "for outprod = 0 to 3\n"
            "    constant integer row_hv = outprod DIV 2;\n"
            "    constant integer col_hv = outprod MOD 2;\n"
            "    constant bits(VL) op1 = Z[n + (nreg-1)*col_hv, VL];  // Zn2 feeds the right-hand quarters\n"
            "    constant bits(VL) op2 = Z[m + (mreg-1)*row_hv, VL];  // Zm2 feeds the lower quarters\n"
            "    for row = 0 to dim-1\n"
            "        for col = 0 to dim-1\n"
            "            constant integer row_idx = row_hv * dim + row;\n"
            "            constant integer col_idx = col_hv * dim + col;\n"
            "            constant integer tile_idx = row_idx * dim * 2 + col_idx;\n"
            + _element(shape) +
            "ZAtile[da, esize, tilesize] = result;"
            + ("\n" + _NOTES[shape.kind] if _NOTES[shape.kind] else ""))


__all__ = ["Mop4Shape", "asl", "bound", "quarter_tile_outer_product"]

"""The SME2 floating-point multiply-adds and adds into ZA array vectors, and the remaining floating-point
and bitwise outer products, as the Arm ARM's Operations write them:

- FMLA/FMLS (.S, .D with FEAT_SME_F64F64, .H with FEAT_SME_F16F16) and BFMLA/BFMLS (.H, FEAT_SME_B16B16)
  into a vector group: single, multiple and indexed Zm, VGx2 and VGx4.  Each element is
  ``FPMulAdd_ZA(element3, element1, element2, FPCR)``: the exact ``element3 + element1 * element2``
  rounded once (fused), no exceptions, every NaN result the default NaN (FPCR.DN = 1); the subtracting
  forms take ``FPNeg(element1)``.  BFloat16's is BFMulAdd_ZA, the same rule on BFloat16's fields
  (rounded by FPCR's mode, denormals kept unless FPCR.FZ: not the round-to-odd of BFDOT).
- FMLAL/FMLSL and BFMLAL/BFMLSL: 16-bit elements widened into single precision, two ZA vectors per
  group member (``vec`` rounded down to even), VGx1, VGx2 and VGx4; each element FPMulAddH_ZA /
  BFMulAddH_ZA (numerics.fp_asl.FPMulAddH_ZA: exact widening, one rounding).
- FADD/FSUB (.S, .D, .H) and BFADD/BFSUB: ZA vector group = ZA vector group +/- a Z list, FPAdd_ZA /
  FPSub_ZA (BFAdd_ZA / BFSub_ZA).
- FVDOT (FPDotAdd_ZA, as FDOT) and BFVDOT (BFDotAdd, as BFDOT): the vertical 2-way dots of a pair of Z
  registers with an indexed pair of Zm, into a VGx2 group.
- FMOPA/FMOPS .D (FEAT_SME_F64F64), FMOPA/FMOPS .H (FEAT_SME_F16F16) and BFMOPA/BFMOPS .H
  (FEAT_SME_B16B16): non-widening outer products into a tile, FPMulAdd_ZA per active (row, col).
- BMOPA/BMOPS: the 1-bit outer product: ``elem3 +/- BitCount(NOT(elem1 EOR elem2))`` modulo 2^32.

FPCR is its reset value (numerics/fp_asl.FPCR_DEFAULT: round to nearest even, no flushing).
Single-precision and 16-bit fused multiply-adds run through fp_arrays.FPMulAdd_ZA_array and
FPMulAdd_ZA16_array (whole arrays, bit-exact, compared with the per-element rule by
tests/arm_sme/numerics/test_fp_arrays.py and test_fp_arrays_za16.py); the double-precision ones and the adds
apply the per-element fp_asl functions over the arrays (exact integer arithmetic, one element at a time).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial

import numpy as np

from ..numerics.fp_arrays import BFDotAdd_array, FPDotAdd_ZA_array, FPMulAdd_ZA16_array, FPMulAdd_ZA_array
from ..numerics.fp_asl import (BF16, FP16, FP32, FP64, FPCR_DEFAULT, FPAdd_ZA, FPMulAdd_ZA, FPMulAddH_ZA,
                               FPSub_ZA)
from .za_tiles import tile_rows, vector_group_rows

FPCR = FPCR_DEFAULT  # the FPCR every form reads (see numerics/fp_asl.py)
FORMATS = {"h": FP16, "s": FP32, "d": FP64, "bf": BF16}
UINTS = {16: np.uint16, 32: np.uint32, 64: np.uint64}


@dataclass(frozen=True)
class ZaFPShape:
    op: str  # "mla" (FMLA, BFMLA), "mlal" (FMLAL, BFMLAL), "add" (FADD, BFADD), "vdot" (FVDOT, BFVDOT)
    fmt: str  # the source elements: "h" (half), "s", "d" or "bf" (BFloat16)
    subtract: bool  # FMLS, FMLSL, FSUB, BFMLS, BFMLSL, BFSUB
    nreg: int  # 1 (VGx1: FMLAL), 2 or 4
    second: str = ""  # "single", "multiple" or "indexed" ("" for FADD)

    @property
    def esize(self) -> int:
        return FORMATS[self.fmt].width


def _elementwise(function, dtype, *arrays) -> np.ndarray:
    """``function`` (one of fp_asl's per-element rules, on Python ints) over broadcast arrays."""
    ufunc = np.frompyfunc(lambda *ops: function(*map(int, ops)), len(arrays), 1)
    return np.asarray(ufunc(*(np.asarray(a).astype(object) for a in arrays)), dtype=object).astype(dtype)


def _mul_add(fmt: str, addend, op1, op2) -> np.ndarray:
    """FPMulAdd_ZA (BFMulAdd_ZA for BFloat16) of whole arrays of bit patterns."""
    if fmt == "s":
        return np.asarray(FPMulAdd_ZA_array(addend, op1, op2)).astype(np.uint32)
    form = FORMATS[fmt]
    if form.width == 16:
        return FPMulAdd_ZA16_array(addend, op1, op2, form)
    return _elementwise(partial(_fp_mul_add, fmt=form), UINTS[form.width], addend, op1, op2)


def _fp_mul_add(addend, op1, op2, fmt):
    return FPMulAdd_ZA(addend, op1, op2, fmt, FPCR)


def _negate(bits: np.ndarray, esize: int) -> np.ndarray:
    """FPNeg (FPCR.AH = 0) and BFNeg: the sign bit inverted, NaN or not."""
    return bits ^ UINTS[esize](1 << (esize - 1))


def _second(cpu, shape: ZaFPShape, m, dtype, per: int = 1) -> np.ndarray:
    """operand2 as [r, e(, i)]: Z[m] for every r (single), Z[m+r] (multiple), or, indexed, element group
    ``index`` of each 128-bit segment of Z[m] for every element of that segment."""
    elements = cpu.svl // (shape.esize * per)
    if shape.second == "single":
        return cpu.Z(m).view(dtype).reshape(1, elements, per)
    if shape.second == "multiple":
        return cpu.Zs(m, shape.nreg).view(dtype).reshape(shape.nreg, elements, per)
    zm, index = m
    groups_per_segment = 128 // (shape.esize * per)
    groups = cpu.Z(zm).view(dtype).reshape(-1, groups_per_segment, per)[:, index, :]
    return np.repeat(groups, groups_per_segment, axis=0).reshape(1, elements, per)


def za_multiply_add(cpu, shape: ZaFPShape, group: tuple[int, int], n: int, m) -> None:
    """FMLA/FMLS/BFMLA/BFMLS: every element of every vector of the group at once, [r, e] as the ASL's
    loops."""
    cpu.CheckStreamingSVEAndZAEnabled()
    v, offset = group
    esize, dtype = shape.esize, UINTS[shape.esize]
    rows = vector_group_rows(cpu.svlb, cpu.X(v), offset, shape.nreg)  # only the low 32 bits of Wv count
    operand1 = cpu.Zs(n, shape.nreg).view(dtype)  # Elem[Z[(n+r) MOD 32], e]
    if shape.subtract:
        operand1 = _negate(operand1, esize)
    operand2 = _second(cpu, shape, m, dtype)[..., 0]
    operand3 = cpu.ZAvectors(rows).view(dtype)
    result = _mul_add(shape.fmt, operand3, operand1, operand2)
    cpu.set_ZAvectors(rows, result.view(np.uint8))


def za_multiply_add_long(cpu, shape: ZaFPShape, group: tuple[int, int], n: int, m) -> None:
    """FMLAL/FMLSL/BFMLAL/BFMLSL: ZA vectors vec + i (i = 0, 1) of each group member take the 16-bit
    elements 2*e + i of Zn and Zm, widened; vec is rounded down to even."""
    cpu.CheckStreamingSVEAndZAEnabled()
    v, offset = group
    nreg = shape.nreg
    elements = cpu.svl // 32
    vstride = cpu.svlb // nreg
    vec = ((cpu.X(v) & 0xFFFFFFFF) + offset) % vstride
    vec -= vec % 2
    operand1 = cpu.Zs(n, nreg).view(np.uint16).reshape(nreg, elements, 2)  # Elem[Z[(n+r) MOD 32], 2*e + i]
    if shape.subtract:
        operand1 = _negate(operand1, 16)
    if shape.second == "indexed":  # one 16-bit element (index) of each 128-bit segment, for both i
        zm, index = m
        picked = cpu.Z(zm).view(np.uint16).reshape(-1, 8)[:, index]
        operand2 = np.repeat(picked, 4)[None, :, None].repeat(2, axis=2)
    else:
        operand2 = _second(cpu, shape, m, np.uint16, per=2)
    widen = _widen_half if shape.fmt == "h" else _widen_bfloat
    for i in (0, 1):
        rows = [vec + i + r * vstride for r in range(nreg)]
        operand3 = cpu.ZAvectors(rows).view(np.uint32)
        result = FPMulAdd_ZA_array(operand3, widen(operand1[..., i]), widen(operand2[..., i]))
        cpu.set_ZAvectors(rows, np.asarray(result).astype(np.uint32).view(np.uint8))


def _widen_half(bits: np.ndarray) -> np.ndarray:
    """Half precision to single precision, exactly (numpy converts bit by bit: no rounding is involved;
    a NaN stays a NaN, which FPMulAdd_ZA turns into the default NaN)."""
    return np.ascontiguousarray(bits).view(np.float16).astype(np.float32).view(np.uint32)


def _widen_bfloat(bits: np.ndarray) -> np.ndarray:
    """BFloat16 to single precision: its bits are the top half."""
    return bits.astype(np.uint32) << np.uint32(16)


def za_add(cpu, shape: ZaFPShape, group: tuple[int, int], m: int) -> None:
    """FADD/FSUB/BFADD/BFSUB: ZA vector vec + r*vstride = it +/- Z[m+r], element by element."""
    cpu.CheckStreamingSVEAndZAEnabled()
    v, offset = group
    fmt = FORMATS[shape.fmt]
    dtype = UINTS[fmt.width]
    rows = vector_group_rows(cpu.svlb, cpu.X(v), offset, shape.nreg)
    operand1 = cpu.ZAvectors(rows).view(dtype)
    operand2 = cpu.Zs(m, shape.nreg).view(dtype)
    rule = FPSub_ZA if shape.subtract else FPAdd_ZA
    result = _elementwise(lambda a, b: rule(a, b, fmt, FPCR), dtype, operand1, operand2)
    cpu.set_ZAvectors(rows, result.view(np.uint8))


def za_vertical_dot(cpu, shape: ZaFPShape, group: tuple[int, int], n: int, m) -> None:
    """FVDOT/BFVDOT: element e of the group's vector r sums the 16-bit elements 2*e + r of Z[n] and
    Z[n+1] times the pair ``index`` of Zm's 128-bit segment."""
    cpu.CheckStreamingSVEAndZAEnabled()
    v, offset = group
    elements = cpu.svl // 32
    rows = vector_group_rows(cpu.svlb, cpu.X(v), offset, 2)
    operand1 = cpu.Zs(n, 2).view(np.uint16).reshape(2, elements, 2).transpose(2, 1, 0)  # [r, e, i]
    operand2 = _second(cpu, shape, m, np.uint16, per=2)
    dot_add = BFDotAdd_array if shape.fmt == "bf" else FPDotAdd_ZA_array
    sums = cpu.ZAvectors(rows).view(np.uint32)
    result = dot_add(sums, operand1[..., 0], operand1[..., 1], operand2[..., 0], operand2[..., 1])
    cpu.set_ZAvectors(rows, np.asarray(result).astype(np.uint32).view(np.uint8))


@dataclass(frozen=True)
class OuterShape:
    fmt: str  # "d", "h" or "bf" (FPMulAdd_ZA / BFMulAdd_ZA), or "bits" (BMOPA: 32-bit words)
    subtract: bool

    @property
    def esize(self) -> int:
        return 32 if self.fmt == "bits" else FORMATS[self.fmt].width


def outer_product(cpu, shape: OuterShape, da: int, a: int, b: int, n: int, m: int) -> None:
    """Tile element (row, col) of ZAda, updated where element ``row`` of Pn and ``col`` of Pm are both
    active: FPMulAdd_ZA(elem3, elem1, elem2) (elem1 negated by FMOPS/BFMOPS), or BMOPA's
    elem3 +/- BitCount(NOT(elem1 EOR elem2))."""
    cpu.CheckStreamingSVEAndZAEnabled()
    esize = shape.esize
    dtype = UINTS[esize]
    rows = tile_rows(da, esize, cpu.svlb).tolist()
    mask1, mask2 = cpu.ActiveElements(a, esize), cpu.ActiveElements(b, esize)
    active = mask1[:, None] & mask2[None, :]
    if not active.any():
        return
    op1, op2 = cpu.Z(n).view(dtype), cpu.Z(m).view(dtype)
    sums = cpu.ZAvectors(rows).view(dtype)
    if shape.fmt == "bits":
        count = np.bitwise_count(~(op1[:, None] ^ op2[None, :])).astype(np.uint32)
        updated = sums - count if shape.subtract else sums + count  # modulo 2^32
    else:
        elem1 = _negate(op1, esize) if shape.subtract else op1
        where = np.nonzero(active)
        updated = sums.copy()
        updated[where] = _mul_add(shape.fmt, sums[where], elem1[where[0]], op2[where[1]])
    result = np.where(active, updated, sums).astype(dtype)
    cpu.set_ZAvectors(rows, result.view(np.uint8))


def bound(function, shape):
    """``function`` for one form: execute(cpu, *operands)."""

    def execute(cpu, *operands):
        function(cpu, shape, *operands)

    return execute


# ---- the Operation of each form, as the Arm ARM writes it (explain prints it) --------------------------

_RULE = {"h": "FPMulAdd_ZA", "s": "FPMulAdd_ZA", "d": "FPMulAdd_ZA", "bf": "BFMulAdd_ZA"}
_HEAD = ("CheckStreamingSVEAndZAEnabled();\n"
         "constant integer VL = CurrentVL;                       // SVL\n")


def _group_head(nreg: int, esize: int) -> str:
    return (_HEAD + f"constant integer elements = VL DIV {esize};\n"
            f"constant integer vstride = (VL DIV 8) DIV {nreg};\n"
            "constant bits(32) vbase = X[v, 32];                    // only the low 32 bits of Wv\n"
            "integer vec = (UInt(vbase) + offset) MOD vstride;\n")


def _operand2(second: str, per: int, esize: int) -> tuple[str, str, str]:
    """(operand2's register, the index computation, element2's position) of the ASL."""
    source = "Z[(m+r) MOD 32, VL]" if second == "multiple" else "Z[m, VL]"
    if second != "indexed":
        return source, "", f"{per} * e + i" if per > 1 else "e"
    pick = (f"        constant integer segmentbase = e - (e MOD (128 DIV {esize * per}));\n"
            "        constant integer s = segmentbase + index;\n")
    return source, pick, f"{per} * s + i" if per > 1 else "s"


def multiply_add_asl(mnemonic: str, shape: ZaFPShape) -> str:
    esize = shape.esize
    source, pick, position = _operand2(shape.second, 1, esize)
    negate = (f"        if sub_op then element1 = {'BFNeg(element1)' if shape.fmt == 'bf' else 'FPNeg(element1, FPCR)'};\n"
              if shape.subtract else "")
    return (f"// {mnemonic.upper()} ({shape.second}, VGx{shape.nreg}, {esize}-bit elements)\n"
            + _group_head(shape.nreg, esize) +
            f"for r = 0 to {shape.nreg - 1}\n"
            "    operand1 = Z[(n+r) MOD 32, VL];\n"
            f"    operand2 = {source};\n"
            "    operand3 = ZAvector[vec, VL];\n"
            "    for e = 0 to elements-1\n"
            f"{pick}"
            f"        element1 = Elem[operand1, e, {esize}];\n"
            f"        element2 = Elem[operand2, {position}, {esize}];\n"
            f"        element3 = Elem[operand3, e, {esize}];\n"
            f"{negate}"
            f"        Elem[result, e, {esize}] = {_RULE[shape.fmt]}(element3, element1, element2, FPCR);\n"
            "    ZAvector[vec, VL] = result;\n"
            "    vec = vec + vstride;\n"
            f"// {_RULE[shape.fmt]}: element3 + element1*element2 rounded once; FPCR.DN = '1', no exceptions")


def multiply_add_long_asl(mnemonic: str, shape: ZaFPShape) -> str:
    rule = "BFMulAddH_ZA" if shape.fmt == "bf" else "FPMulAddH_ZA"
    source = "Z[(m+r) MOD 32, VL]" if shape.second == "multiple" else "Z[m, VL]"
    if shape.second == "indexed":
        pick = ("            constant integer segmentbase = e - (e MOD 4);   // eltspersegment = 128 DIV 32\n"
                "            constant integer s = 2 * segmentbase + index;\n")
        position = "s"
    else:
        pick, position = "", "2 * e + i"
    negate = (f"            element1 = {'BFNeg(element1)' if shape.fmt == 'bf' else 'FPNeg(element1, FPCR)'};\n"
              if shape.subtract else "")
    return (f"// {mnemonic.upper()} ({shape.second}, VGx{shape.nreg}, 16-bit to single precision)\n"
            + _group_head(shape.nreg, 32) +
            "vec = vec - (vec MOD 2);\n"
            f"for r = 0 to {shape.nreg - 1}\n"
            "    operand1 = Z[(n+r) MOD 32, VL];\n"
            f"    operand2 = {source};\n"
            "    for i = 0 to 1\n"
            "        operand3 = ZAvector[vec + i, VL];\n"
            "        for e = 0 to elements-1\n"
            f"{pick}"
            "            element1 = Elem[operand1, 2 * e + i, 16];\n"
            f"            element2 = Elem[operand2, {position}, 16];\n"
            "            element3 = Elem[operand3, e, 32];\n"
            f"{negate}"
            f"            Elem[result, e, 32] = {rule}(element3, element1, element2, FPCR);\n"
            "        ZAvector[vec + i, VL] = result;\n"
            "    vec = vec + vstride;\n"
            f"// {rule}: element3 + element1*element2, the 16-bit operands widened exactly, rounded once; "
            "FPCR.DN = '1'")


def add_asl(mnemonic: str, shape: ZaFPShape) -> str:
    esize = shape.esize
    bf = shape.fmt == "bf"
    rule = ("BFSub_ZA" if bf else "FPSub_ZA") if shape.subtract else ("BFAdd_ZA" if bf else "FPAdd_ZA")
    return (f"// {mnemonic.upper()} (VGx{shape.nreg}, {esize}-bit elements)\n"
            + _group_head(shape.nreg, esize) +
            f"for r = 0 to {shape.nreg - 1}\n"
            "    operand1 = ZAvector[vec, VL];\n"
            "    operand2 = Z[m+r, VL];\n"
            "    for e = 0 to elements-1\n"
            f"        Elem[result, e, {esize}] = {rule}(Elem[operand1, e, {esize}], Elem[operand2, e, {esize}], FPCR);\n"
            "    ZAvector[vec, VL] = result;\n"
            "    vec = vec + vstride;\n"
            f"// {rule}: rounded once; FPCR.DN = '1', no exceptions")


def vertical_dot_asl(mnemonic: str, shape: ZaFPShape) -> str:
    rule = "BFDotAdd" if shape.fmt == "bf" else "FPDotAdd_ZA"
    return (f"// {mnemonic.upper()} (2-way, vertical, indexed, VGx2)\n"
            + _group_head(2, 32) +
            "constant bits(VL) operand2 = Z[m, VL];\n"
            "for r = 0 to 1\n"
            "    operand3 = ZAvector[vec, VL];\n"
            "    for e = 0 to elements-1\n"
            "        constant integer segmentbase = e - (e MOD 4);   // eltspersegment = 128 DIV 32\n"
            "        constant integer s = segmentbase + index;\n"
            "        elt1_a = Elem[Z[n, VL], 2 * e + r, 16];\n"
            "        elt1_b = Elem[Z[n+1, VL], 2 * e + r, 16];\n"
            "        elt2_a = Elem[operand2, 2 * s + 0, 16];\n"
            "        elt2_b = Elem[operand2, 2 * s + 1, 16];\n"
            "        bits(32) sum = Elem[operand3, e, 32];\n"
            f"        Elem[result, e, 32] = {rule}(sum, elt1_a, elt1_b, elt2_a, elt2_b, FPCR);\n"
            "    ZAvector[vec, VL] = result;\n"
            "    vec = vec + vstride;")


def outer_asl(mnemonic: str, shape: OuterShape) -> str:
    esize = shape.esize
    if shape.fmt == "bits":
        update = ("            sum = Elem[op3, row*dim+col, 32];\n"
                  "            bits(32) bits = NOT(elem1 EOR elem2);\n"
                  f"            Elem[result, row*dim+col, 32] = sum {'-' if shape.subtract else '+'} BitCount(bits);\n")
    else:
        negate = ("BFNeg(elem1)" if shape.fmt == "bf" else "FPNeg(elem1, FPCR)") if shape.subtract else "elem1"
        update = (f"            Elem[result, row*dim+col, {esize}] = {_RULE[shape.fmt]}(Elem[op3, row*dim+col, {esize}], "
                  f"{negate}, elem2, FPCR);\n")
    return (f"// {mnemonic.upper()} (non-widening, {esize}-bit elements)\n" + _HEAD +
            f"constant integer dim = VL DIV {esize};\n"
            "constant bits(PL) mask1 = P[a, PL];\n"
            "constant bits(PL) mask2 = P[b, PL];\n"
            "constant bits(VL) op1 = Z[n, VL];\n"
            "constant bits(VL) op2 = Z[m, VL];\n"
            f"constant bits(dim*dim*{esize}) op3 = ZAtile[da, {esize}, dim*dim*{esize}];\n"
            "result = op3;\n"
            "for row = 0 to dim-1\n"
            "    for col = 0 to dim-1\n"
            f"        if ActivePredicateElement(mask1, row, {esize}) && ActivePredicateElement(mask2, col, {esize}) then\n"
            f"            elem1 = Elem[op1, row, {esize}];\n"
            f"            elem2 = Elem[op2, col, {esize}];\n"
            f"{update}"
            f"ZAtile[da, {esize}, dim*dim*{esize}] = result;")

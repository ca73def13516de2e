"""The SME2 integer multiply-adds into ZA array vectors and the integer adds into ZA vector groups.

- SMLAL/SMLSL/UMLAL/UMLSL (2-way: 16-bit sources into 32-bit ZA elements) and SMLALL/SMLSLL/UMLALL/UMLSLL/
  USMLALL/SUMLALL (4-way: 8-bit into 32-bit, and 16-bit into 64-bit with FEAT_SME_I16I64), single, multiple
  and indexed, VGx1/VGx2/VGx4 (Arm ARM C9.2: SMLAL, SMLALL and their siblings): :func:`za_multiply_add`.
  Unlike a dot product, each narrow product goes to a ZA vector of its own: the offset names ``ways``
  consecutive ZA vectors (``za.s[w8, 0:1]``), and vector ``vec + i`` of each group accumulates the products of
  the narrow elements ``ways * e + i``, widened and wrapped to the ZA element.
- ADD/SUB (array accumulators): ZA vector group += or -= a Z list; ADD/SUB (array results, multiple and single
  vector, multiple vectors): the ZA vector group is WRITTEN with Zn + Zm (Zn - Zm): :func:`za_add`.
- ADD (to vector, multiple and single): {Zdn1-Zdn<nreg>} += Zm, element by element: :func:`add_to_vectors`.

Each works on whole vectors at once (numpy), as the ASL's loops would element by element; every sum wraps
modulo 2^esize.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

SIGNED = {8: np.int8, 16: np.int16, 32: np.int32, 64: np.int64}
UNSIGNED = {8: np.uint8, 16: np.uint16, 32: np.uint32, 64: np.uint64}


@dataclass(frozen=True)
class MlaShape:
    esize: int  # the ZA element: 32 (ZA.S) or 64 (ZA.D)
    ways: int  # narrow elements per ZA element, and ZA vectors per group: 2 (MLAL) or 4 (MLALL)
    signed1: bool  # Zn's elements are SInt (else UInt)
    signed2: bool  # Zm's elements are SInt
    subtract: bool  # MLSL/MLSLL: the product is subtracted
    nreg: int  # VGx1, VGx2 or VGx4
    second: str  # "single", "multiple" or "indexed"

    @property
    def source_bits(self) -> int:
        return self.esize // self.ways


def _source(data: np.ndarray, bits: int, signed: bool) -> np.ndarray:
    return data.view((SIGNED if signed else UNSIGNED)[bits]).astype(np.int64)


def za_multiply_add(cpu, shape: MlaShape, group: tuple[int, int], n: int, m) -> None:
    """The ASL's loops over r (the group's registers), i (the ZA vector of the ways at vec) and e (elements) at
    once: the products are [r, e, i] as the ASL's element1 * element2, and ZA vector vec + i + r * vstride takes
    products[r, :, i]."""
    cpu.CheckStreamingSVEAndZAEnabled()
    v, offset = group
    nreg, ways, bits = shape.nreg, shape.ways, shape.source_bits
    elements = cpu.svl // shape.esize
    vstride = cpu.svlb // nreg
    vec = ((cpu.X(v) & 0xFFFFFFFF) + offset) % vstride  # only the low 32 bits of Wv count
    vec -= vec % ways  # the ways vectors the offset names start at a multiple of ways
    operand1 = _source(cpu.Zs(n, nreg), bits, shape.signed1).reshape(nreg, elements, ways)  # Elem[Z[n+r], ways*e+i]
    if shape.second == "multiple":
        operand2 = _source(cpu.Zs(m, nreg), bits, shape.signed2).reshape(nreg, elements, ways)
    elif shape.second == "single":
        operand2 = _source(cpu.Z(m), bits, shape.signed2).reshape(1, elements, ways)
    else:
        zm, index = m
        # each 128-bit segment of Zm gives its element `index` to every product of that segment
        per_segment = 128 // shape.esize
        picked = _source(cpu.Z(zm), bits, shape.signed2).reshape(-1, 128 // bits)[:, index]
        operand2 = np.repeat(picked, per_segment).reshape(1, elements, 1)
    products = operand1 * operand2  # exact in int64: at most 2^32 in magnitude
    acc_type = UNSIGNED[shape.esize]
    combine = np.subtract if shape.subtract else np.add
    for i in range(ways):
        rows = [vec + i + r * vstride for r in range(nreg)]
        # the int64 products cast to the ZA element keep their low bits: the sum wraps modulo 2^esize
        result = combine(cpu.ZAvectors(rows).view(acc_type), products[:, :, i], dtype=acc_type, casting="unsafe")
        cpu.set_ZAvectors(rows, result.view(np.uint8))


def bound(shape: MlaShape):
    """za_multiply_add for one form: execute(cpu, group, n, m)."""

    def execute(cpu, group, n, m):
        za_multiply_add(cpu, shape, group, n, m)

    return execute


def asl(mnemonic: str, shape: MlaShape) -> str:
    """The form's Operation, in the Arm ARM's ASL (what explain prints)."""
    kind1 = "SInt" if shape.signed1 else "UInt"
    kind2 = "SInt" if shape.signed2 else "UInt"
    ways, esize, bits, nreg = shape.ways, shape.esize, shape.source_bits, shape.nreg
    op = "-" if shape.subtract else "+"
    if shape.second == "multiple":
        operand2 = "Z[(m+r) MOD 32, VL]"  # m is a multiple of nreg: no wrap
    else:
        operand2 = "Z[m, VL]"
    if shape.second == "indexed":
        pick2 = (f"            constant integer segmentbase = e - (e MOD eltspersegment);\n"
                 f"            constant integer s = {ways} * segmentbase + index;\n"
                 f"            constant integer element2 = {kind2}(Elem[operand2, s, {bits}]);\n")
    else:
        pick2 = f"            constant integer element2 = {kind2}(Elem[operand2, {ways} * e + i, {bits}]);\n"
    group = f"VGx{nreg}" if nreg > 1 else "VGx1"
    return (f"// {mnemonic.upper()} ({ways}-way, {shape.second}, {group})\n"
            f"CheckStreamingSVEAndZAEnabled();\n"
            f"constant integer VL = CurrentVL;                    // SVL\n"
            f"constant integer elements = VL DIV {esize};\n"
            f"constant integer vectors = VL DIV 8;\n"
            f"constant integer vstride = vectors DIV {nreg};\n"
            f"constant integer eltspersegment = 128 DIV {esize};\n"
            f"constant bits(32) vbase = X[v, 32];                 // only the low 32 bits of Wv\n"
            f"integer vec = (UInt(vbase) + offset) MOD vstride;\n"
            f"vec = vec - (vec MOD {ways});\n"
            f"bits(VL) result;\n"
            f"for r = 0 to {nreg - 1}\n"
            f"    constant bits(VL) operand1 = Z[(n+r) MOD 32, VL];\n"
            f"    constant bits(VL) operand2 = {operand2};\n"
            f"    for i = 0 to {ways - 1}\n"
            f"        constant bits(VL) operand3 = ZAvector[vec + i, VL];\n"
            f"        for e = 0 to elements-1\n"
            f"            constant integer element1 = {kind1}(Elem[operand1, {ways} * e + i, {bits}]);\n"
            f"{pick2}"
            f"            constant bits({esize}) product = (element1 * element2)<{esize - 1}:0>;\n"
            f"            Elem[result, e, {esize}] = Elem[operand3, e, {esize}] {op} product;   // modulo 2^{esize}\n"
            f"        ZAvector[vec + i, VL] = result;\n"
            f"    vec = vec + vstride;")


# ---- ADD/SUB into ZA vector groups -----------------------------------------------------------------

def za_add(cpu, group, n, m=None, *, esize, nreg, second, subtract):
    """The ZA vector group ZA[Wv, offs, VGx<nreg>] (vec = (UInt(Wv) + offs) MOD vstride, then vec + vstride ...):
    second None: ZAvector[vec] = ZAvector[vec] + Z[n+r] (array accumulators);
    "single": ZAvector[vec] = Z[n+r] + Z[m];  "multiple": ZAvector[vec] = Z[n+r] + Z[m+r] (array results: ZA's old
    value is not read).  SUB subtracts the second operand.  Every sum wraps modulo 2^esize."""
    cpu.CheckStreamingSVEAndZAEnabled()
    v, offset = group
    vstride = cpu.svlb // nreg
    vec = ((cpu.X(v) & 0xFFFFFFFF) + offset) % vstride
    rows = [vec + r * vstride for r in range(nreg)]
    kind = UNSIGNED[esize]
    combine = np.subtract if subtract else np.add
    sources = cpu.Zs(n, nreg).view(kind)
    if second is None:
        result = combine(cpu.ZAvectors(rows).view(kind), sources)
    elif second == "single":
        result = combine(sources, cpu.Z(m).view(kind)[np.newaxis, :])
    else:
        result = combine(sources, cpu.Zs(m, nreg).view(kind))
    cpu.set_ZAvectors(rows, result.view(np.uint8))


def za_add_asl(mnemonic: str, esize: int, nreg: int, second: str | None) -> str:
    op = "-" if mnemonic == "sub" else "+"
    if second is None:
        title, first, operand = "array accumulators", "ZAvector[vec, VL]", "Z[(n+r) MOD 32, VL]"
    elif second == "single":
        title, first, operand = "array results, multiple and single vector", "Z[(n+r) MOD 32, VL]", "Z[m, VL]"
    else:
        title, first, operand = "array results, multiple vectors", "Z[n+r, VL]", "Z[m+r, VL]"
    return (f"// {mnemonic.upper()} ({title}), VGx{nreg}\n"
            f"CheckStreamingSVEAndZAEnabled();\n"
            f"constant integer VL = CurrentVL;                    // SVL\n"
            f"constant integer elements = VL DIV {esize};\n"
            f"constant integer vstride = (VL DIV 8) DIV {nreg};\n"
            f"constant bits(32) vbase = X[v, 32];                 // only the low 32 bits of Wv\n"
            f"integer vec = (UInt(vbase) + offset) MOD vstride;\n"
            f"bits(VL) result;\n"
            f"for r = 0 to {nreg - 1}\n"
            f"    constant bits(VL) operand1 = {first};\n"
            f"    constant bits(VL) operand2 = {operand};\n"
            f"    for e = 0 to elements-1\n"
            f"        Elem[result, e, {esize}] = Elem[operand1, e, {esize}] {op} Elem[operand2, e, {esize}];"
            f"   // modulo 2^{esize}\n"
            f"    ZAvector[vec, VL] = result;\n"
            f"    vec = vec + vstride;")


def add_to_vectors(cpu, registers, _same, m, *, esize):
    """CheckStreamingSVEEnabled();
constant integer VL = CurrentVL;
constant integer elements = VL DIV esize;
constant bits(VL) operand2 = Z[m, VL];
for r = 0 to nreg-1
    constant bits(VL) operand1 = Z[dn+r, VL];
    for e = 0 to elements-1
        Elem[result, e, esize] = Elem[operand1, e, esize] + Elem[operand2, e, esize];   // modulo 2^esize
    Z[dn+r, VL] = result;"""
    cpu.CheckStreamingSVEEnabled()
    kind = UNSIGNED[esize]
    addend = cpu.Z(m).view(kind).copy()
    for t in registers:
        cpu.set_Z(t, np.add(cpu.Z(t).view(kind), addend).view(np.uint8))

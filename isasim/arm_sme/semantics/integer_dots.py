"""The SME2 integer dot products into ZA vector groups (UDOT, SDOT, USDOT, SUDOT; 2-way and 4-way)
and the vertical dot products (UVDOT, SVDOT, USVDOT, SUVDOT).

One function, :func:`za_dot`, follows the Arm ARM's Operation for all of them (C9.2.287-292
UDOT, 197-202 SDOT, 325-327 USDOT, 272-273 SUDOT; 340-341 UVDOT, 283-284 SVDOT, 336 USVDOT,
282 SUVDOT); a :class:`DotShape` says which one: the widths, the signedness of each source,
whether the second source is one register (single), a list (multiple) or one indexed element
group (indexed), and whether the dot is vertical.  It works on whole vectors at once (numpy), as
the ASL's inner loops would, element by element.

A vertical dot (indexed only, nreg = ways) sums into element e of the group's vector r the narrow
elements at the SAME position ``ways*e + r`` of each of the nreg registers Zn+i (i = 0..ways-1),
times element ``ways*s + i`` of Zm's indexed group; a horizontal dot takes the ways consecutive
elements ``ways*e + i`` of the one register Zn+r.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .za_tiles import vector_group_rows

SOURCE_TYPES = {(8, False): np.uint8, (8, True): np.int8, (16, False): np.uint16, (16, True): np.int16}
ACCUMULATOR_TYPES = {32: np.uint32, 64: np.uint64}  # ZA elements; the sums wrap modulo 2^esize


@dataclass(frozen=True)
class DotShape:
    esize: int  # the ZA element: 32 (ZA.S) or 64 (ZA.D)
    ways: int  # source elements per ZA element: 2 or 4
    signed1: bool  # Zn's elements are SInt (else UInt)
    signed2: bool  # Zm's elements are SInt
    nreg: int  # VGx2 or VGx4
    second: str  # "single", "multiple" or "indexed"
    vertical: bool = False  # UVDOT, SVDOT, USVDOT, SUVDOT (indexed, nreg == ways)

    @property
    def source_bits(self) -> int:
        return self.esize // self.ways


def za_dot(cpu, shape: DotShape, group: tuple[int, int], n: int, m) -> None:
    """The ASL's loops over r (the group's vectors), e (elements) and i (ways) at once: operand1 and
    operand2 are indexed [r, e, i] as the ASL's element1 and element2 are, and each ZA vector of the
    group gets its sum over i."""
    cpu.CheckStreamingSVEAndZAEnabled()
    v, offset = group
    nreg, ways = shape.nreg, shape.ways
    rows = vector_group_rows(cpu.svlb, cpu.X(v), offset, nreg)  # only the low 32 bits of Wv count
    type1 = SOURCE_TYPES[shape.source_bits, shape.signed1]
    type2 = SOURCE_TYPES[shape.source_bits, shape.signed2]
    acc_type = ACCUMULATOR_TYPES[shape.esize]
    elements = cpu.svl // shape.esize
    if shape.vertical:
        # element1 of ZA vector r, element e, step i is Elem[Z[n+i], ways*e + r]: the same
        # position r of each of the ways registers (sources is [i, e, r])
        operand1 = cpu.Zs(n, ways).view(type1).reshape(ways, elements, ways).transpose(2, 1, 0)
    else:
        operand1 = cpu.Zs(n, nreg).view(type1).reshape(nreg, elements, ways)  # Elem[Z[n+r], ways*e + i]
    if shape.second == "multiple":
        operand2 = cpu.Zs(m, nreg).view(type2).reshape(nreg, elements, ways)  # Elem[Z[m+r], ways*e + i]
    elif shape.second == "single":
        operand2 = cpu.Z(m).view(type2).reshape(1, elements, ways)  # the same Z[m] for every r
    else:
        zm, index = m
        # each 128-bit segment of Zm gives element group `index` to every ZA element of that segment
        per_segment = 128 // shape.esize
        groups = cpu.Z(zm).view(type2).reshape(-1, per_segment, ways)[:, index, :]
        operand2 = np.repeat(groups, per_segment, axis=0).reshape(1, elements, ways)
    # the products and their sums over i are exact in int64 (at most 4 x 2^32 per element); the
    # addition to ZA is cast back to its element type, which keeps the low bits: modulo 2^esize
    products = np.multiply(operand1, operand2, dtype=np.int64).sum(axis=2)
    sums = np.add(cpu.ZAvectors(rows).view(acc_type), products, dtype=acc_type, casting="unsafe")
    cpu.set_ZAvectors(rows, sums.view(np.uint8))


def bound(shape: DotShape):
    """za_dot for one form: execute(cpu, group, n, m)."""

    def execute(cpu, group, n, m):
        za_dot(cpu, shape, group, n, m)

    return execute


def asl(mnemonic: str, shape: DotShape) -> str:
    """The form's Operation, in the Arm ARM's ASL (what explain prints)."""
    kind1 = "SInt" if shape.signed1 else "UInt"
    kind2 = "SInt" if shape.signed2 else "UInt"
    ways, esize = shape.ways, shape.esize
    if shape.vertical:
        return _vertical_asl(mnemonic, shape, kind1, kind2)
    if shape.second == "multiple":
        operand2 = "Z[(m+r) MOD 32, VL]"
    else:
        operand2 = "Z[m, VL]"
    if shape.second == "indexed":
        element2 = (f"        integer segmentbase = e - (e MOD (128 DIV {esize}));\n"
                    f"        integer s = segmentbase + index;\n")
        pick2 = f"{ways} * s + i"
    else:
        element2 = ""
        pick2 = f"{ways} * e + i"
    return (f"// {mnemonic.upper()} ({ways}-way, {shape.second}, VGx{shape.nreg})\n"
            f"CheckStreamingSVEAndZAEnabled();\n"
            f"constant integer VL = CurrentVL;                    // SVL\n"
            f"constant integer elements = VL DIV {esize};\n"
            f"constant integer vstride = (VL DIV 8) DIV {shape.nreg};\n"
            f"constant bits(32) vbase = X[v, 32];                 // only the low 32 bits of Wv\n"
            f"integer vec = (UInt(vbase) + offset) MOD vstride;\n"
            f"for r = 0 to {shape.nreg - 1}\n"
            f"    operand1 = Z[(n+r) MOD 32, VL];\n"
            f"    operand2 = {operand2};\n"
            f"    operand3 = ZAvector[vec, VL];\n"
            f"    for e = 0 to elements-1\n"
            f"        bits({esize}) sum = Elem[operand3, e, {esize}];\n"
            f"{element2}"
            f"        for i = 0 to {ways - 1}\n"
            f"            element1 = {kind1}(Elem[operand1, {ways} * e + i, {esize // ways}]);\n"
            f"            element2 = {kind2}(Elem[operand2, {pick2}, {esize // ways}]);\n"
            f"            sum = sum + element1 * element2;            // wraps modulo 2^{esize}\n"
            f"        Elem[result, e, {esize}] = sum;\n"
            f"    ZAvector[vec, VL] = result;\n"
            f"    vec = vec + vstride;")


def _vertical_asl(mnemonic: str, shape: DotShape, kind1: str, kind2: str) -> str:
    """A vertical dot's Operation (C9.2.340 UVDOT and its siblings): element1 is the same position
    ``ways * e + r`` of each register Z[n+i]."""
    ways, esize = shape.ways, shape.esize
    return (f"// {mnemonic.upper()} ({ways}-way, vertical, indexed, VGx{shape.nreg})\n"
            f"CheckStreamingSVEAndZAEnabled();\n"
            f"constant integer VL = CurrentVL;                    // SVL\n"
            f"constant integer elements = VL DIV {esize};\n"
            f"constant integer vectors = VL DIV 8;\n"
            f"constant integer vstride = vectors DIV {shape.nreg};\n"
            f"constant integer eltspersegment = 128 DIV {esize};\n"
            f"constant bits(32) vbase = X[v, 32];                 // only the low 32 bits of Wv\n"
            f"integer vec = (UInt(vbase) + offset) MOD vstride;\n"
            f"constant bits(VL) operand2 = Z[m, VL];\n"
            f"bits(VL) result;\n"
            f"for r = 0 to {shape.nreg - 1}\n"
            f"    constant bits(VL) operand3 = ZAvector[vec, VL];\n"
            f"    for e = 0 to elements-1\n"
            f"        constant integer segmentbase = e - (e MOD eltspersegment);\n"
            f"        constant integer s = segmentbase + index;\n"
            f"        bits({esize}) sum = Elem[operand3, e, {esize}];\n"
            f"        for i = 0 to {ways - 1}\n"
            f"            constant bits(VL) operand1 = Z[n+i, VL];\n"
            f"            element1 = {kind1}(Elem[operand1, {ways} * e + r, {esize // ways}]);\n"
            f"            element2 = {kind2}(Elem[operand2, {ways} * s + i, {esize // ways}]);\n"
            f"            sum = sum + element1 * element2;            // wraps modulo 2^{esize}\n"
            f"        Elem[result, e, {esize}] = sum;\n"
            f"    ZAvector[vec, VL] = result;\n"
            f"    vec = vec + vstride;")

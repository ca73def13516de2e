"""The SME integer outer products into a ZA tile: UMOPA, SMOPA, USMOPA, SUMOPA (accumulating) and
UMOPS, SMOPS, USMOPS, SUMOPS (subtracting); 4-way .B->.S (SME), 4-way .H->.D (SME_I16I64) and
the SME2 2-way .H->.S UMOPA/SMOPA/UMOPS/SMOPS.

One function, :func:`za_outer_product`, follows the Arm ARM's Operation for all of them (C9.2.313
UMOPA 2-way, 314 UMOPA 4-way, 315-316 UMOPS, 224-227 SMOPA/SMOPS, 278-279 SUMOPA/SUMOPS, 333-334
USMOPA/USMOPS); an :class:`OuterShape` says which one.  Zn holds a dim x ways sub-matrix (row
``row`` is its ``ways`` narrow elements ``ways*row + k``), Zm a ways x dim one (column ``col`` is
elements ``ways*col + k``), and ZA tile element (row, col) gains (or loses) the ways-long dot product
of that row and that column.  Each narrow element has its own predicate bit: the ASL adds the
product of pair k only when element ``ways*row + k`` is active in Pn AND element ``ways*col + k`` is
active in Pm, which is the same as taking every inactive source element as 0.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .integer_dots import ACCUMULATOR_TYPES, SOURCE_TYPES
from .za_tiles import tile_rows


@dataclass(frozen=True)
class OuterShape:
    esize: int  # the ZA tile's element: 32 (ZAda.S) or 64 (ZAda.D)
    ways: int  # narrow elements per product pair: 2 (.H->.S) or 4 (.B->.S, .H->.D)
    signed1: bool  # Zn's elements are SInt (else UInt): op1_unsigned = !signed1
    signed2: bool  # Zm's elements are SInt
    subtract: bool  # MOPS: the sum of outer products is subtracted

    @property
    def source_bits(self) -> int:
        return self.esize // self.ways


def _masked_operand(cpu, z: int, g: int, shape: OuterShape, signed: bool) -> np.ndarray:
    """Z[z] as a dim x ways matrix of integers, each narrow element that P[g] leaves inactive as 0
    (ActivePredicateElement(mask, i, esize DIV ways) is the lowest predicate bit of element i)."""
    dim = cpu.VL // shape.esize
    elements = cpu.Z(z).view(SOURCE_TYPES[shape.source_bits, signed]).astype(np.int64)
    active = cpu.ActiveElements(g, shape.source_bits)
    return np.where(active, elements, 0).reshape(dim, shape.ways)


def za_outer_product(cpu, shape: OuterShape, da: int, a: int, b: int, n: int, m: int) -> None:
    cpu.CheckStreamingSVEAndZAEnabled()
    operand1 = _masked_operand(cpu, n, a, shape, shape.signed1)  # rows: Zn governed by Pn
    operand2 = _masked_operand(cpu, m, b, shape, shape.signed2)  # columns: Zm governed by Pm
    # (row, col) = sum over k of operand1[row, k] * operand2[col, k]: exact in int64 (at most 4 x 2^32);
    # numpy's integer matmul is exact, no BLAS and no host floating point
    products = operand1 @ operand2.T
    acc_type = ACCUMULATOR_TYPES[shape.esize]
    products = products.astype(acc_type)  # modulo 2^esize, as bits(esize) sum wraps
    for row, vector in enumerate(tile_rows(da, shape.esize, cpu.svlb)):  # ZAtile row r is one ZA vector
        if not products[row].any():
            continue  # the row keeps its value (no active pair, or sums that wrap to 0): journal no no-op write
        operand3 = cpu.ZAvector(int(vector)).view(acc_type)
        result = operand3 - products[row] if shape.subtract else operand3 + products[row]
        cpu.set_ZAvector(int(vector), result.view(np.uint8))


def bound(shape: OuterShape):
    """za_outer_product for one form: execute(cpu, da, a, b, n, m)."""

    def execute(cpu, da, a, b, n, m):
        za_outer_product(cpu, shape, da, a, b, n, m)

    return execute


def asl(mnemonic: str, shape: OuterShape) -> str:
    """The form's Operation, in the Arm ARM's ASL (what explain prints)."""
    ways, esize = shape.ways, shape.esize
    narrow = f"esize DIV {ways}"
    op1 = "SInt" if shape.signed1 else "UInt"
    op2 = "SInt" if shape.signed2 else "UInt"
    accumulate = "sum - prod" if shape.subtract else "sum + prod"
    return (f"// {mnemonic.upper()} ({ways}-way)\n"
            f"CheckStreamingSVEAndZAEnabled();\n"
            f"constant integer esize = {esize};\n"
            f"constant integer VL = CurrentVL;                    // SVL\n"
            f"constant integer PL = VL DIV 8;\n"
            f"constant integer dim = VL DIV {esize};\n"
            f"constant bits(PL) mask1 = P[a, PL];                 // Pn: the rows, from Zn\n"
            f"constant bits(PL) mask2 = P[b, PL];                 // Pm: the columns, from Zm\n"
            f"constant bits(VL) operand1 = Z[n, VL];\n"
            f"constant bits(VL) operand2 = Z[m, VL];\n"
            f"constant bits(dim*dim*{esize}) operand3 = ZAtile[da, {esize}, dim*dim*{esize}];\n"
            f"bits(dim*dim*{esize}) result;\n"
            f"for row = 0 to dim-1\n"
            f"    for col = 0 to dim-1\n"
            f"        bits({esize}) sum = Elem[operand3, row*dim+col, {esize}];\n"
            f"        for k = 0 to {ways - 1}\n"
            f"            if (ActivePredicateElement(mask1, {ways}*row + k, {narrow}) &&\n"
            f"                ActivePredicateElement(mask2, {ways}*col + k, {narrow})) then\n"
            f"                element1 = {op1}(Elem[operand1, {ways}*row + k, {narrow}]);\n"
            f"                element2 = {op2}(Elem[operand2, {ways}*col + k, {narrow}]);\n"
            f"                prod = element1 * element2;\n"
            f"                sum = {accumulate};                 // wraps modulo 2^{esize}\n"
            f"        Elem[result, row*dim+col, {esize}] = sum;\n"
            f"ZAtile[da, {esize}, dim*dim*{esize}] = result;")

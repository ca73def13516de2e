"""The worked element of the products into ZA: the integer dot products (ZA[vec] element 0) and
outer products (ZAda element (0, 0)) way by way in plain integers, and the floating-point ones'
inputs beside fp_asl.py's per-element definition.  Each returns its tables and one Check against the
ZA element the machine wrote."""

from __future__ import annotations

import struct

from ...core.explain import Check, Table
from ...core.render import element_text
from ..semantics.za_tiles import tile_count
from .before_state import first_group_vector, hex_text, lane, lane_text, plus, predicate_bit, signed


def _za_element(za, vector: int, bits: int, element: int = 0) -> int:
    """Element ``element`` of ZA vector ``vector`` (``bits`` wide, little-endian)."""
    size = bits // 8
    return int.from_bytes(bytes(za[vector][element * size:(element + 1) * size]), "little")


def _value(raw: int, bits: int, is_signed: bool) -> int:
    return signed(raw, bits) if is_signed else raw


def _sum_table(vector: int, old: int, terms: list[int], esize: int, subtract: bool = False,
               element: int = 0) -> tuple[Table, int]:
    """The old element plus (or minus) the products, and the wrap to ``esize`` bits."""
    term = -sum(terms) if subtract else sum(terms)
    total = old + term
    wrapped = total % (1 << esize)
    wrap = "wraps" if wrapped != total else "no wrap"
    rows = [[f"ZA[{vector}] element {element} before", f"{hex_text(old, esize)} = {old}"],
            ["products" + (" (subtracted)" if subtract else ""), f"{sum(terms)}"],
            [f"old {'-' if subtract else '+'} products", f"{old} {plus(term)} = {total}"],
            [f"MOD 2^{esize}", f"{hex_text(wrapped, esize)} = {wrapped} ({wrap})"]]
    return Table(["", "value"], rows, title=f"The sum, wrapping as a {esize}-bit element does"), wrapped


def dot_blocks(ins, run) -> list:
    """ZA[vec] element 0 of the group's first vector (explain's worked element)."""
    return dot_element_blocks(ins, run, 0, 0)


def dot_element_blocks(ins, run, r: int, e: int) -> list:
    """Element ``e`` of the group's vector ``r`` (ZA[vec + r * vstride]): ways products of Zn's and Zm's lanes
    (a horizontal dot takes lanes ways * e + i of Zn+r; a vertical one lane ways * e + r of each of
    Zn..Zn+ways-1; Zm is the one register (single), Zm+r (multiple), or element group `index` of e's 128-bit
    segment (indexed))."""
    shape = ins.form.extra["shape"]
    (v, offset), n, m = ins.operands
    bits, esize, ways = shape.source_bits, shape.esize, shape.ways
    vec = first_group_vector(run, v, offset, shape.nreg) + r * (run.machine.state.svlb // shape.nreg)
    kind1, kind2 = ("SInt" if shape.signed1 else "UInt"), ("SInt" if shape.signed2 else "UInt")
    rows, products = [], []
    for i in range(ways):
        zn, kn = ((n + i) % 32, ways * e + r) if shape.vertical else ((n + r) % 32, ways * e + i)
        if shape.second == "indexed":
            zm, index = m
            per_segment = 128 // esize
            segment = e // per_segment
            km, where = ways * (segment * per_segment + index) + i, f" (segment {segment}, index {index})"
        elif shape.second == "multiple":  # vector r pairs Zn+r with Zm+r
            zm, km, where = (m + r) % 32, ways * e + i, ""
        else:  # single: the one Zm for every vector of the group
            zm, km, where = m, ways * e + i, ""
        raw1, raw2 = lane(run, zn, kn, bits), lane(run, zm, km, bits)
        a, b = _value(raw1, bits, shape.signed1), _value(raw2, bits, shape.signed2)
        products.append(a * b)
        rows.append([str(i), lane_text(zn, kn, bits), hex_text(raw1, bits), str(a),
                     lane_text(zm, km, bits) + where, hex_text(raw2, bits), str(b), str(a * b)])
    table = Table(["i", "Zn lane", "hex", kind1, "Zm lane", "hex", kind2, "product"], rows,
                  title=f"ZA[{vec}] element {e} worked through: {ways} ways of {kind1}(Zn lane) x {kind2}(Zm lane)")
    old = _za_element(run.before["za"], vec, esize, e)
    sums, expected = _sum_table(vec, old, products, esize, element=e)
    got = _za_element(run.machine.state.za, vec, esize, e)
    letter = "S" if esize == 32 else "D"
    return [table, sums, Check(f"ZA[{vec}] element {e} (ZA.{letter})", f"{expected:#x}", f"{got:#x}")]


def outer_blocks(ins, run) -> list:
    """ZAda element (0, 0) (explain's worked element)."""
    return outer_element_blocks(ins, run, 0, 0)


def outer_element_blocks(ins, run, row: int, col: int) -> list:
    """ZAda element (row, col): the ways products of Zn's element group ``row`` and Zm's group ``col``, each
    pair counted only when both narrow elements are active (Pn for Zn, Pm for Zm)."""
    shape = ins.form.extra["shape"]
    da, pn, pm, n, m = ins.operands
    bits, esize, ways = shape.source_bits, shape.esize, shape.ways
    vector = da + row * tile_count(esize)  # row `row` of ZAda is ZA vector da + row * (esize / 8)
    rows, terms = [], []
    for k in range(ways):
        kn, km = ways * row + k, ways * col + k
        raw1, raw2 = lane(run, n, kn, bits), lane(run, m, km, bits)
        a, b = _value(raw1, bits, shape.signed1), _value(raw2, bits, shape.signed2)
        bit1, bit2 = predicate_bit(run, pn, kn, bits), predicate_bit(run, pm, km, bits)
        active = bit1 and bit2
        if active:
            terms.append(a * b)
        rows.append([str(k), lane_text(n, kn, bits), hex_text(raw1, bits), str(a), f"p{pn}: {bit1}",
                     lane_text(m, km, bits), hex_text(raw2, bits), str(b), f"p{pm}: {bit2}",
                     str(a * b) if active else "inactive"])
    letter = "S" if esize == 32 else "D"
    table = Table(["k", "Zn lane", "hex", "value", "Pn bit", "Zm lane", "hex", "value", "Pm bit", "product"], rows,
                  title=f"ZA{da}.{letter} element ({row}, {col}) worked through: a pair counts only if both its bits "
                        f"are 1")
    old = _za_element(run.before["za"], vector, esize, col)
    sums, expected = _sum_table(vector, old, terms, esize, subtract=shape.subtract, element=col)
    got = _za_element(run.machine.state.za, vector, esize, col)
    return [table, sums, Check(f"ZA{da}.{letter} element ({row}, {col}) (ZA[{vector}] element {col})",
                               f"{expected:#x}", f"{got:#x}")]


def _fp_text(bits: int) -> str:
    """An FP32 result as its bits and its value (the bits are what is compared)."""
    return f"{bits:#010x} ({struct.unpack('<f', bits.to_bytes(4, 'little'))[0]!r})"


def _input_row(what: str, run, register: int, k: int, bits: int, kind: str, *extra) -> list:
    raw = lane(run, register, k, bits)
    return [what, lane_text(register, k, bits), hex_text(raw, bits), element_text(raw, kind), *extra]


def fp_dot_blocks(ins, run) -> list:
    """ZA element 0 of the group's first vector (explain's worked element)."""
    return fp_dot_element_blocks(ins, run, 0, 0)


def fp_dot_element_blocks(ins, run, r: int, e: int) -> list:
    """Element ``e`` of the group's vector ``r``, from the per-element definition in fp_asl.py (FPDotAdd_ZA or
    BFDotAdd), which the instruction does not run: it runs their array forms over the whole group."""
    from ..numerics.fp_asl import BFDotAdd, FPDotAdd_ZA
    from ..semantics.fp_products import FPCR

    shape = ins.form.extra["shape"]
    (v, offset), n, m = ins.operands
    vec = first_group_vector(run, v, offset, shape.nreg) + r * (run.machine.state.svlb // shape.nreg)
    kind = "fp16" if shape.kind == "fdot" else "bf16"
    zn = (n + r) % 32
    if shape.second == "indexed":
        zm, index = m
        pair = (zm, 2 * (e - e % 4 + index))  # pair `index` of element e's 128-bit segment (4 elements)
    elif shape.second == "multiple":  # vector r pairs Zn+r with Zm+r
        pair = ((m + r) % 32, 2 * e)
    else:  # single: the one Zm for every vector of the group
        pair = (m, 2 * e)
    # "element i": member i of each source's pair (the lane column says which lane of which register)
    inputs = [_input_row(f"Zn element {i}", run, zn, 2 * e + i, 16, kind) for i in (0, 1)]
    inputs += [_input_row(f"Zm element {i}", run, pair[0], pair[1] + i, 16, kind) for i in (0, 1)]
    addend = _za_element(run.before["za"], vec, 32, e)
    inputs.append([f"ZA[{vec}] element {e} before", f"ZA[{vec}].s[{e}]", hex_text(addend, 32),
                   element_text(addend, "fp32")])
    table = Table(["input", "lane", "hex", "value"], inputs,
                  title=f"The inputs of ZA[{vec}] element {e} ({kind} pairs)")
    dot_add = FPDotAdd_ZA if shape.kind == "fdot" else BFDotAdd
    expected = dot_add(addend, lane(run, zn, 2 * e, 16), lane(run, zn, 2 * e + 1, 16), lane(run, pair[0], pair[1], 16),
                       lane(run, pair[0], pair[1] + 1, 16), FPCR)
    got = _za_element(run.machine.state.za, vec, 32, e)
    return [table, Check(f"ZA[{vec}] element {e} (ZA.S), by fp_asl.{dot_add.__name__} one element at a time",
                         _fp_text(expected), _fp_text(got))]


def fp_outer_blocks(ins, run) -> list:
    """ZAda.S element (0, 0) (explain's worked element)."""
    return fp_outer_element_blocks(ins, run, 0, 0)


def fp_outer_element_blocks(ins, run, row: int, col: int) -> list:
    """ZAda.S element (row, col), from the per-element definition in fp_asl.py (FPMulAdd_ZA, FPDotAdd_ZA or
    BFDotAdd) with the Operation's predication: the instruction runs the array forms over the tile."""
    from ..numerics.fp_asl import FP32, BFDotAdd, FPDotAdd_ZA, FPMulAdd_ZA
    from ..semantics.fp_products import FPCR

    shape = ins.form.extra["shape"]
    da, a, b, n, m = ins.operands
    vector = da + row * tile_count(32)  # row `row` of ZAda.S is ZA vector da + 4 * row
    addend = _za_element(run.before["za"], vector, 32, col)
    if shape.kind == "fmopa":
        bits, kind, count = 32, "fp32", 1
    else:
        bits, kind, count = 16, "fp16" if shape.kind == "fmopa_widening" else "bf16", 2
    kn, km = [count * row + i for i in range(count)], [count * col + i for i in range(count)]
    prow = [predicate_bit(run, a, k, bits) for k in kn]
    pcol = [predicate_bit(run, b, k, bits) for k in km]
    inputs = [_input_row(f"Zn element {k}", run, n, k, bits, kind, f"p{a}: {bit}") for k, bit in zip(kn, prow)]
    inputs += [_input_row(f"Zm element {k}", run, m, k, bits, kind, f"p{b}: {bit}") for k, bit in zip(km, pcol)]
    inputs.append([f"ZA[{vector}] element {col} before", f"ZA[{vector}].s[{col}]", hex_text(addend, 32),
                   element_text(addend, "fp32"), ""])
    table = Table(["input", "lane", "hex", "value", "predicate bit"], inputs,
                  title=f"The inputs of ZA{da}.S element ({row}, {col}) ({kind})")
    if shape.kind == "fmopa":
        elem1 = lane(run, n, kn[0], 32) ^ (0x80000000 if shape.subtract else 0)  # FPNeg with AH = 0: the sign bit
        name = "FPMulAdd_ZA"
        expected = FPMulAdd_ZA(addend, elem1, lane(run, m, km[0], 32), FP32, FPCR) \
            if prow[0] and pcol[0] else addend
    else:
        # an inactive 16-bit element is +0.0; the subtracting forms negate the active row elements only
        erow = [lane(run, n, k, 16) ^ (0x8000 if shape.subtract else 0) if bit else 0 for k, bit in zip(kn, prow)]
        ecol = [lane(run, m, k, 16) if bit else 0 for k, bit in zip(km, pcol)]
        dot_add = FPDotAdd_ZA if shape.kind == "fmopa_widening" else BFDotAdd
        name = dot_add.__name__
        expected = dot_add(addend, erow[0], erow[1], ecol[0], ecol[1], FPCR) \
            if (prow[0] and pcol[0]) or (prow[1] and pcol[1]) else addend
    got = _za_element(run.machine.state.za, vector, 32, col)
    return [table, Check(f"ZA{da}.S element ({row}, {col}) (ZA[{vector}] element {col}), by fp_asl.{name} one "
                         f"element at a time", _fp_text(expected), _fp_text(got))]

"""The worked element of the products into ZA: the integer dot products (ZA[vec] element 0) and
outer products (ZAda element (0, 0)) way by way in plain integers, and the floating-point ones'
inputs beside fp_asl.py's per-element definition.  Each returns its tables and one Check against the
ZA element the machine wrote."""

from __future__ import annotations

import struct

from ...core.explain import Check, Table
from ...core.render import element_text
from .before_state import first_group_vector, hex_text, lane, lane_text, plus, predicate_bit, signed


def _za_element(za, vector: int, bits: int) -> int:
    """Element 0 of ZA vector ``vector`` (``bits`` wide, little-endian)."""
    return int.from_bytes(bytes(za[vector][:bits // 8]), "little")


def _value(raw: int, bits: int, is_signed: bool) -> int:
    return signed(raw, bits) if is_signed else raw


def _sum_table(vector: int, old: int, terms: list[int], esize: int, subtract: bool = False) -> tuple[Table, int]:
    """The old element plus (or minus) the products, and the wrap to ``esize`` bits."""
    term = -sum(terms) if subtract else sum(terms)
    total = old + term
    wrapped = total % (1 << esize)
    wrap = "wraps" if wrapped != total else "no wrap"
    rows = [[f"ZA[{vector}] element 0 before", f"{hex_text(old, esize)} = {old}"],
            ["products" + (" (subtracted)" if subtract else ""), f"{sum(terms)}"],
            [f"old {'-' if subtract else '+'} products", f"{old} {plus(term)} = {total}"],
            [f"MOD 2^{esize}", f"{hex_text(wrapped, esize)} = {wrapped} ({wrap})"]]
    return Table(["", "value"], rows, title=f"The sum, wrapping as a {esize}-bit element does"), wrapped


def dot_blocks(ins, run) -> list:
    """ZA[vec] element 0 of the group's first vector: ways products of Zn's and Zm's lanes (a vertical dot
    takes element 0 of each of Zn..Zn+ways-1; an indexed one Zm's element group `index` of segment 0)."""
    shape = ins.form.extra["shape"]
    (v, offset), n, m = ins.operands
    bits, esize = shape.source_bits, shape.esize
    vec = first_group_vector(run, v, offset, shape.nreg)
    kind1, kind2 = ("SInt" if shape.signed1 else "UInt"), ("SInt" if shape.signed2 else "UInt")
    rows, products = [], []
    for i in range(shape.ways):
        zn, kn = ((n + i) % 32, 0) if shape.vertical else (n, i)
        if shape.second == "indexed":
            zm, index = m
            km, where = shape.ways * index + i, f" (segment 0, index {index})"
        else:  # single: Zm; multiple: the first register of the Zm list, which vector r = 0 pairs with Zn
            zm, km, where = m, i, ""
        raw1, raw2 = lane(run, zn, kn, bits), lane(run, zm, km, bits)
        a, b = _value(raw1, bits, shape.signed1), _value(raw2, bits, shape.signed2)
        products.append(a * b)
        rows.append([str(i), lane_text(zn, kn, bits), hex_text(raw1, bits), str(a),
                     lane_text(zm, km, bits) + where, hex_text(raw2, bits), str(b), str(a * b)])
    table = Table(["i", "Zn lane", "hex", kind1, "Zm lane", "hex", kind2, "product"], rows,
                  title=f"ZA[{vec}] element 0 worked through: {shape.ways} ways of {kind1}(Zn lane) x {kind2}(Zm lane)")
    old = _za_element(run.before["za"], vec, esize)
    sums, expected = _sum_table(vec, old, products, esize)
    got = _za_element(run.machine.state.za, vec, esize)
    letter = "S" if esize == 32 else "D"
    return [table, sums, Check(f"ZA[{vec}] element 0 (ZA.{letter})", f"{expected:#x}", f"{got:#x}")]


def outer_blocks(ins, run) -> list:
    """ZAda element (0, 0): the ways products of Zn's first element group and Zm's, each pair counted only
    when both narrow elements are active (Pn for Zn, Pm for Zm)."""
    shape = ins.form.extra["shape"]
    da, pn, pm, n, m = ins.operands
    bits, esize = shape.source_bits, shape.esize
    vector = da  # row 0 of ZAda is ZA vector da (the tile's rows are every (esize / 8)-th vector from da)
    rows, terms = [], []
    for k in range(shape.ways):
        raw1, raw2 = lane(run, n, k, bits), lane(run, m, k, bits)
        a, b = _value(raw1, bits, shape.signed1), _value(raw2, bits, shape.signed2)
        bit1, bit2 = predicate_bit(run, pn, k, bits), predicate_bit(run, pm, k, bits)
        active = bit1 and bit2
        if active:
            terms.append(a * b)
        rows.append([str(k), lane_text(n, k, bits), hex_text(raw1, bits), str(a), f"p{pn}: {bit1}",
                     lane_text(m, k, bits), hex_text(raw2, bits), str(b), f"p{pm}: {bit2}",
                     str(a * b) if active else "inactive"])
    letter = "S" if esize == 32 else "D"
    table = Table(["k", "Zn lane", "hex", "value", "Pn bit", "Zm lane", "hex", "value", "Pm bit", "product"], rows,
                  title=f"ZA{da}.{letter} element (0, 0) worked through: a pair counts only if both its bits are 1")
    old = _za_element(run.before["za"], vector, esize)
    sums, expected = _sum_table(vector, old, terms, esize, subtract=shape.subtract)
    got = _za_element(run.machine.state.za, vector, esize)
    return [table, sums, Check(f"ZA{da}.{letter} element (0, 0) (ZA[{vector}] element 0)",
                               f"{expected:#x}", f"{got:#x}")]


def _fp_text(bits: int) -> str:
    """An FP32 result as its bits and its value (the bits are what is compared)."""
    return f"{bits:#010x} ({struct.unpack('<f', bits.to_bytes(4, 'little'))[0]!r})"


def _input_row(what: str, run, register: int, k: int, bits: int, kind: str, *extra) -> list:
    raw = lane(run, register, k, bits)
    return [what, lane_text(register, k, bits), hex_text(raw, bits), element_text(raw, kind), *extra]


def fp_dot_blocks(ins, run) -> list:
    """ZA element 0 of the group's first vector, from the per-element definition in fp_asl.py (FPDotAdd_ZA or
    BFDotAdd), which the instruction does not run: it runs their array forms over the whole group."""
    from ..numerics.fp_asl import BFDotAdd, FPDotAdd_ZA
    from ..semantics.fp_products import FPCR

    shape = ins.form.extra["shape"]
    (v, offset), n, m = ins.operands
    vec = first_group_vector(run, v, offset, shape.nreg)
    kind = "fp16" if shape.kind == "fdot" else "bf16"
    if shape.second == "indexed":
        zm, index = m
        pair = (zm, 2 * index)  # pair `index` of element 0's 128-bit segment
    else:  # single: Zm; multiple: the first register of the Zm list, which r = 0 pairs with Zn
        pair = (m, 0)
    inputs = [_input_row(f"Zn element {i}", run, n, i, 16, kind) for i in (0, 1)]
    inputs += [_input_row(f"Zm element {i}", run, pair[0], pair[1] + i, 16, kind) for i in (0, 1)]
    addend = int.from_bytes(bytes(run.before["za"][vec][:4]), "little")
    inputs.append([f"ZA[{vec}] element 0 before", f"ZA[{vec}].s[0]", hex_text(addend, 32),
                   element_text(addend, "fp32")])
    table = Table(["input", "lane", "hex", "value"], inputs, title=f"The inputs of ZA[{vec}] element 0 ({kind} pairs)")
    dot_add = FPDotAdd_ZA if shape.kind == "fdot" else BFDotAdd
    expected = dot_add(addend, lane(run, n, 0, 16), lane(run, n, 1, 16), lane(run, pair[0], pair[1], 16),
                       lane(run, pair[0], pair[1] + 1, 16), FPCR)
    got = int.from_bytes(bytes(run.machine.state.za[vec][:4]), "little")
    return [table, Check(f"ZA[{vec}] element 0 (ZA.S), by fp_asl.{dot_add.__name__} one element at a time",
                         _fp_text(expected), _fp_text(got))]


def fp_outer_blocks(ins, run) -> list:
    """ZAda.S element (0, 0), from the per-element definition in fp_asl.py (FPMulAdd_ZA, FPDotAdd_ZA or
    BFDotAdd) with the Operation's predication: the instruction runs the array forms over the tile."""
    from ..numerics.fp_asl import FP32, BFDotAdd, FPDotAdd_ZA, FPMulAdd_ZA
    from ..semantics.fp_products import FPCR

    shape = ins.form.extra["shape"]
    da, a, b, n, m = ins.operands
    vector = da  # row 0 of ZAda.S is ZA vector da
    addend = int.from_bytes(bytes(run.before["za"][vector][:4]), "little")
    if shape.kind == "fmopa":
        bits, kind, count = 32, "fp32", 1
    else:
        bits, kind, count = 16, "fp16" if shape.kind == "fmopa_widening" else "bf16", 2
    pbits = {(g, i): predicate_bit(run, g, i, bits) for g in (a, b) for i in range(count)}
    inputs = [_input_row(f"Zn element {i}", run, n, i, bits, kind, f"p{a}: {pbits[a, i]}") for i in range(count)]
    inputs += [_input_row(f"Zm element {i}", run, m, i, bits, kind, f"p{b}: {pbits[b, i]}") for i in range(count)]
    inputs.append([f"ZA[{vector}] element 0 before", f"ZA[{vector}].s[0]", hex_text(addend, 32),
                   element_text(addend, "fp32"), ""])
    table = Table(["input", "lane", "hex", "value", "predicate bit"], inputs,
                  title=f"The inputs of ZA{da}.S element (0, 0) ({kind})")
    if shape.kind == "fmopa":
        elem1 = lane(run, n, 0, 32) ^ (0x80000000 if shape.subtract else 0)  # FPNeg with AH = 0: the sign bit
        name = "FPMulAdd_ZA"
        expected = FPMulAdd_ZA(addend, elem1, lane(run, m, 0, 32), FP32, FPCR) \
            if pbits[a, 0] and pbits[b, 0] else addend
    else:
        prow, pcol = [pbits[a, i] for i in (0, 1)], [pbits[b, i] for i in (0, 1)]
        # an inactive 16-bit element is +0.0; the subtracting forms negate the active row elements only
        erow = [lane(run, n, i, 16) ^ (0x8000 if shape.subtract else 0) if prow[i] else 0 for i in (0, 1)]
        ecol = [lane(run, m, i, 16) if pcol[i] else 0 for i in (0, 1)]
        dot_add = FPDotAdd_ZA if shape.kind == "fmopa_widening" else BFDotAdd
        name = dot_add.__name__
        expected = dot_add(addend, erow[0], erow[1], ecol[0], ecol[1], FPCR) \
            if (prow[0] and pcol[0]) or (prow[1] and pcol[1]) else addend
    got = int.from_bytes(bytes(run.machine.state.za[vector][:4]), "little")
    return [table, Check(f"ZA{da}.S element (0, 0) (ZA[{vector}] element 0), by fp_asl.{name} one element at a time",
                         _fp_text(expected), _fp_text(got))]

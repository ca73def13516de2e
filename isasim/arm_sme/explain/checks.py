"""The worked example's check line for each arm_sme form: one result of the step worked out here
from the form's Operation (in plain integer arithmetic, or with fp.py's per-element functions),
beside what the machine wrote.  The instruction itself runs the simulator's semantics; these
computations are the explanation's arithmetic, shown so a reader can follow it."""

from __future__ import annotations

from ...core.explain import Check, Paragraph
from ..scalar import ConditionHolds
from ..state import MASK64, X_NAMES
from ..tiles import vector_group_rows


def before_p(run, g: int):
    """P[g] before the step (the seeded predicates: nothing before a load or store writes them)."""
    return run.machine.state.p[g]



def _signed(value: int, bits: int) -> int:
    return value - (1 << bits) if value >> (bits - 1) & 1 else value


def _check_outer(shape, ops, before, state, run) -> Check:
    """ZAda element (0, 0): the ways products of Zn's first element group and Zm's, each pair counted
    only when both narrow elements are active (Pn for Zn, Pm for Zm)."""
    da, a, b, n, m = ops
    narrow_bytes = shape.source_bits // 8
    ebytes = shape.esize // 8

    def element(register, k, signed):
        raw = int.from_bytes(bytes(before["z"][register][k * narrow_bytes:(k + 1) * narrow_bytes]), "little")
        return _signed(raw, shape.source_bits) if signed else raw

    def active(g, k):  # the lowest predicate bit of narrow element k
        return bool(before_p(run, g)[(k * narrow_bytes) // 8] >> ((k * narrow_bytes) % 8) & 1)

    vector = da  # row 0 of ZAda is ZA vector da
    total = int.from_bytes(bytes(before["za"][vector][:ebytes]), "little")
    for k in range(shape.ways):
        if active(a, k) and active(b, k):
            product = element(n, k, shape.signed1) * element(m, k, shape.signed2)
            total += -product if shape.subtract else product
    expected = total % (1 << shape.esize)
    got = int.from_bytes(bytes(state.za[vector][:ebytes]), "little")
    return Check(f"ZA{da}.{'S' if shape.esize == 32 else 'D'} element (0, 0) (ZA[{vector}] element 0)",
                 f"{expected:#x}", f"{got:#x}")


def _fp_text(bits: int) -> str:
    """An FP32 result as its bits and its value (the bits are what is compared)."""
    import struct

    return f"{bits:#010x} ({struct.unpack('<f', bits.to_bytes(4, 'little'))[0]!r})"


def _check_fp_dot(shape, ops, before, state) -> Check:
    """ZA element 0 of the group's first vector, from the per-element definition in fp.py (FPDotAdd_ZA or
    BFDotAdd), which the instruction does not run: it runs their array forms over the whole group."""
    from ..fp import BFDotAdd, FPDotAdd_ZA
    from ..fp_products import FPCR

    (v, offset), n, m = ops
    vec = vector_group_rows(state.svlb, before["regs"][f"x{v}"], offset, shape.nreg)[0]

    def half(register, k):
        return int.from_bytes(bytes(before["z"][register][2 * k:2 * k + 2]), "little")

    if shape.second == "indexed":
        zm, index = m
        second = (half(zm, 2 * index), half(zm, 2 * index + 1))  # pair `index` of element 0's 128-bit segment
    else:  # single: Zm; multiple: the first register of the Zm list, which r = 0 pairs with Zn
        second = (half(m, 0), half(m, 1))
    addend = int.from_bytes(bytes(before["za"][vec][:4]), "little")
    dot_add = FPDotAdd_ZA if shape.kind == "fdot" else BFDotAdd
    expected = dot_add(addend, half(n, 0), half(n, 1), second[0], second[1], FPCR)
    got = int.from_bytes(bytes(state.za[vec][:4]), "little")
    return Check(f"ZA[{vec}] element 0 (ZA.S), by fp.{dot_add.__name__} one element at a time",
                 _fp_text(expected), _fp_text(got))


def _check_fp_outer(shape, ops, before, state, run) -> Check:
    """ZAda.S element (0, 0), from the per-element definition in fp.py (FPMulAdd_ZA, FPDotAdd_ZA or
    BFDotAdd) with the Operation's predication: the instruction runs the array forms over the tile."""
    from ..fp import FP32, BFDotAdd, FPDotAdd_ZA, FPMulAdd_ZA
    from ..fp_products import FPCR

    da, a, b, n, m = ops
    vector = da  # row 0 of ZAda.S is ZA vector da

    def element(register, k, ebytes):
        return int.from_bytes(bytes(before["z"][register][k * ebytes:(k + 1) * ebytes]), "little")

    def active(g, k, ebytes):  # the lowest predicate bit of element k
        return bool(before_p(run, g)[(k * ebytes) // 8] >> ((k * ebytes) % 8) & 1)

    addend = int.from_bytes(bytes(before["za"][vector][:4]), "little")
    if shape.kind == "fmopa":
        elem1 = element(n, 0, 4) ^ (0x80000000 if shape.subtract else 0)  # FPNeg with AH = 0: the sign bit
        name = "FPMulAdd_ZA"
        expected = FPMulAdd_ZA(addend, elem1, element(m, 0, 4), FP32, FPCR) \
            if active(a, 0, 4) and active(b, 0, 4) else addend
    else:
        prow, pcol = [active(a, i, 2) for i in (0, 1)], [active(b, i, 2) for i in (0, 1)]
        # an inactive 16-bit element is +0.0; the subtracting forms negate the active row elements only
        erow = [element(n, i, 2) ^ (0x8000 if shape.subtract else 0) if prow[i] else 0 for i in (0, 1)]
        ecol = [element(m, i, 2) if pcol[i] else 0 for i in (0, 1)]
        dot_add = FPDotAdd_ZA if shape.kind == "fmopa_widening" else BFDotAdd
        name = dot_add.__name__
        expected = dot_add(addend, erow[0], erow[1], ecol[0], ecol[1], FPCR) \
            if (prow[0] and pcol[0]) or (prow[1] and pcol[1]) else addend
    got = int.from_bytes(bytes(state.za[vector][:4]), "little")
    return Check(f"ZA{da}.S element (0, 0) (ZA[{vector}] element 0), by fp.{name} one element at a time",
                 _fp_text(expected), _fp_text(got))


def check(ins, run) -> Check:
    """One result of the step worked out from the Operation in plain integers, beside the machine's."""
    form, before, machine = ins.form, run.before, run.machine
    state, regs = machine.state, run.before["regs"]
    ops = ins.operands
    if form.group == "dot":
        shape = form.extra["shape"]
        (v, offset), n, m = ops
        svlb = state.svlb
        vec = vector_group_rows(svlb, regs[f"x{v}"], offset, shape.nreg)[0]  # the group's first vector
        bytes_in = shape.source_bits // 8
        ebytes = shape.esize // 8

        def element(z, register, k, signed):
            raw = int.from_bytes(bytes(z[register][k * bytes_in:(k + 1) * bytes_in]), "little")
            return _signed(raw, shape.source_bits) if signed else raw

        total = int.from_bytes(bytes(before["za"][vec][:ebytes]), "little")
        for i in range(shape.ways):  # element 0 of the group's first vector
            if shape.second == "indexed":
                zm, index = m
                second = element(before["z"], zm, shape.ways * index + i, shape.signed2)
            else:
                second = element(before["z"], m, i, shape.signed2)
            # a vertical dot takes element 0 of each of Zn..Zn+ways-1, a horizontal one elements 0..ways-1 of Zn
            first = element(before["z"], n + i, 0, shape.signed1) if shape.vertical else \
                element(before["z"], n, i, shape.signed1)
            total += first * second
        expected = total % (1 << shape.esize)
        got = int.from_bytes(bytes(state.za[vec][:ebytes]), "little")
        return Check(f"ZA[{vec}] element 0 (ZA.{'S' if shape.esize == 32 else 'D'})", f"{expected:#x}", f"{got:#x}")
    if form.group == "outer":
        return _check_outer(form.extra["shape"], ops, before, state, run)
    if form.group == "mode":
        sm, za = form.execute.keywords["sm"], form.execute.keywords["za"]
        old = regs["svcr"]
        expected = old
        if sm is not None:
            expected = (expected & ~1) | int(sm)
        if za is not None:
            expected = (expected & ~2) | (int(za) << 1)
        return Check("SVCR (SM bit 0, ZA bit 1)", f"{expected:#x}", f"{state.svcr:#x}")
    if form.id == "ZERO_tiles":
        rows = [r for r in range(state.svlb) if ops[0] >> (r % 8) & 1]
        return Check(f"non-zero bytes in the {len(rows)} selected ZA vectors", "0",
                     str(int(state.za[rows].astype(bool).sum())))
    if form.group == "control" or form.mnemonic == "nop":
        if form.mnemonic == "ret":
            return Check("the program ended", "True", str(machine.halted))
        register = regs[X_NAMES[ops[0]]] if form.mnemonic in ("cbz", "cbnz", "tbz", "tbnz") and ops[0] < 31 else 0
        register &= MASK64 >> 32 if form.id.endswith("_32") else MASK64  # CBZ W tests the low 32 bits
        bit = register >> ops[1] & 1 if form.mnemonic in ("tbz", "tbnz") else 0
        taken = {"b": True, "cbz": register == 0, "cbnz": register != 0, "tbz": bit == 0, "tbnz": bit == 1,
                 "b.cond": form.mnemonic == "b.cond" and ConditionHolds(ops[-1], regs["nzcv"] >> 28)
                 }.get(form.mnemonic, False)
        offset = ops[0] if form.mnemonic == "b.cond" else (ops[-1] if ops else 0)
        expected = ins.address + offset if taken else ins.next_address
        return Check("next pc", f"{expected:#x}", f"{state.pc:#x}")
    if form.id in ("LDR_za", "STR_za"):
        (v, offset), (n, _) = ops
        vec = ((regs[f"x{v}"] & 0xFFFFFFFF) + offset) % state.svlb
        address = (regs["sp"] if n == 31 else regs[X_NAMES[n]]) + offset * state.svlb
        memory = bytes(machine.memory.read(address, state.svlb))
        return Check(f"ZA[{vec}] and memory at {address:#x}", memory.hex(), bytes(state.za[vec]).hex())
    if form.group == "za_move" and "vgx" in form.id:
        nreg = int(form.id[-1])
        to_vectors = form.id.startswith("MOVA_z_")
        (v, offset), first = (ops[1], ops[0]) if to_vectors else (ops[0], ops[1])
        vec = ((regs[f"x{v}"] & 0xFFFFFFFF) + offset) % (state.svlb // nreg)
        expected = bytes(before["za"][vec] if to_vectors else before["z"][first]).hex()
        got = bytes(state.z[first] if to_vectors else state.za[vec]).hex()
        return Check(f"{'z%d' % first if to_vectors else 'ZA[%d]' % vec} (the group's first vector)", expected, got)
    if form.group == "za_move":
        from .. import tiles

        esize = 8 << "bhsdq".index(form.id[-1])
        eb = esize // 8
        to_vector = form.id.startswith("MOVA_z_")
        (tile, vertical, s, offset), g = (ops[2], ops[1]) if to_vector else (ops[0], ops[1])
        index = ((regs[f"x{s}"] & 0xFFFFFFFF) + offset) % (state.svl // esize)
        pbits = int.from_bytes(bytes(state.p[g]), "little")
        first = next((e for e in range(state.svl // esize) if pbits >> (e * eb) & 1), None)
        if first is None:
            return Check(f"p{g} has no active element: nothing moves", "no change", "no change")
        slice_before = tiles.read_slice(before["za"], tile, esize, vertical, index)
        source = slice_before if to_vector else before["z"][ops[2]]
        expected = bytes(source[first * eb:(first + 1) * eb]).hex()
        target = state.z[ops[0]] if to_vector else tiles.read_slice(state.za, tile, esize, vertical, index)
        where = f"z{ops[0]}" if to_vector else tiles.tile_text(tile, form.id[-1], vertical) + f"[{index}]"
        return Check(f"{where} element {first} (the first active)", expected,
                     bytes(target[first * eb:(first + 1) * eb]).hex())
    if form.id in ("LDR_z", "STR_z", "LDR_p", "STR_p"):
        t, (n, imm) = ops
        size = state.svlb if form.id.endswith("_z") else state.svlb // 8
        address = ((regs["sp"] if n == 31 else regs[X_NAMES[n]]) + imm * size) & MASK64
        register = (state.z if form.id.endswith("_z") else state.p)[t]
        return Check(f"{form.id[-1]}{t} and memory at {address:#x}", bytes(machine.memory.read(address, size)).hex(),
                     bytes(register).hex())
    if form.group in ("za_memory", "z_memory"):
        from .. import tiles

        if form.group == "za_memory":
            esize = msize = 8 << "bhsdq".index(form.id[-1])
        else:
            msize = 8 << "bhwd".index(form.mnemonic[3])
            esize = 8 << "bhsd".index(form.id.split("_")[2])
        eb, mb = esize // 8, msize // 8
        g, (n, k) = ops[1], ops[2]
        pbits = int.from_bytes(bytes(before_p(run, g)), "little")
        first = next((e for e in range(state.svl // esize) if pbits >> (e * eb) & 1), None)
        if first is None:
            return Check(f"p{g} has no active element: nothing moves", "no change", "no change")
        base = regs["sp"] if n == 31 else regs[X_NAMES[n]]
        if form.id.endswith("_imm"):
            start = base + k * (state.svl // esize) * mb
        else:
            start = base + (0 if k == 31 else regs[X_NAMES[k]]) * mb
        address = (start + first * mb) & MASK64
        memory = bytes(machine.memory.read(address, mb))
        if form.group == "za_memory":
            tile, vertical, s, offset = ops[0]
            index = ((regs[f"x{s}"] & 0xFFFFFFFF) + offset) % (state.svl // esize)
            element = bytes(tiles.read_slice(state.za, tile, esize, vertical, index)[first * eb:(first + 1) * eb])
            where = tiles.tile_text(tile, form.id[-1], vertical) + f"[{index}]"
        else:
            element = bytes(state.z[ops[0]][first * eb:(first + 1) * eb])
            where = f"z{ops[0]}"
        expected, got = (memory + bytes(eb - mb), element) if form.mnemonic.startswith("ld") else \
            (element[:mb], memory)
        return Check(f"{where} element {first} (the first active) and memory at {address:#x}", expected.hex(),
                     got.hex())
    if form.group == "predicate":
        from ..predicates import pred_count

        esize = 8 << "bhsd".index(form.id.split("_")[1])
        elements = state.svl // esize
        if form.mnemonic == "ptrue":
            expected = pred_count(ops[1][0], esize, state.svl)
        else:
            width = 64 if form.id.endswith("_x") else 32
            a, b = (0 if r == 31 else regs[X_NAMES[r]] & ((1 << width) - 1) for r in ops[1:])
            if form.mnemonic == "whilelt":
                a, b = _signed(a, width), _signed(b, width)
            expected = max(0, min(elements, b - a))
        bits = state.p[ops[0]]
        # int(): a numpy uint8 sum would wrap at 256 active elements (ptrue p0.b at SVL 2048)
        got = sum(int(bits[(e * esize // 8) // 8]) >> ((e * esize // 8) % 8) & 1 for e in range(elements))
        return Check(f"active elements of p{ops[0]}.{'bhsd'[esize.bit_length() - 4]}", str(expected), str(got))
    if form.group == "count":
        from ..predicates import pred_count

        svlb = state.svlb
        xs = lambda n: regs["sp"] if n == 31 else regs[X_NAMES[n]]  # noqa: E731
        if form.mnemonic.startswith("cnt"):
            (pattern, times) = ops[1]
            result = pred_count(pattern, 8 << "bhwd".index(form.mnemonic[3]), state.svl) * times
        elif form.mnemonic == "rdsvl":
            result = ops[1] * svlb
        else:
            unit = svlb // 8 if form.mnemonic == "addspl" else svlb
            result = xs(ops[1]) + ops[2] * unit
        result &= MASK64
        sp = form.mnemonic.startswith("add") and ops[0] == 31
        name = "sp" if sp else (X_NAMES[ops[0]] if ops[0] < 31 else None)
        if name is None:
            return Check("the result (to XZR, discarded)", f"{result:#x}", f"{result:#x}")
        return Check(name, f"{result:#x}", f"{state.read_register(name):#x}")
    if form.group == "fp_dot":
        return _check_fp_dot(form.extra["shape"], ops, before, state)
    if form.group == "fp_outer":
        return _check_fp_outer(form.extra["shape"], ops, before, state, run)
    if form.id not in ("MOVZ_64", "ADD_64_imm", "SUB_64_imm", "SUBS_64_imm", "LDR_64_uoff", "STR_64_uoff"):
        return Paragraph("The Operation above gives the result; tests/arm_sme/test_scalar_vs_qemu.py checks this "
                         "form against QEMU.")
    x = lambda n, sp=True: regs["sp"] if n == 31 and sp else (0 if n == 31 else regs[X_NAMES[n]])  # noqa: E731
    if form.mnemonic == "str":
        t, (n, off) = ops
        got = int.from_bytes(machine.memory.read(x(n) + off, 8), "little")
        return Check(f"memory at {x(n) + off:#x}", f"{x(t, False):#x}", f"{got:#x}")
    if form.mnemonic == "ldr":
        t, (n, off) = ops
        expected = int.from_bytes(machine.memory.read(x(n) + off, 8), "little")
        return Check(X_NAMES[t] if t < 31 else "xzr", f"{expected:#x}", f"{state.read_register(X_NAMES[t]):#x}")
    d = ops[0]
    result = {"movz": lambda: ops[1][0] << ops[1][1], "add": lambda: x(ops[1]) + ops[2],
              "sub": lambda: x(ops[1]) - ops[2],
              "subs": lambda: x(ops[1]) - ops[2]}[form.mnemonic]() & MASK64
    name = "sp" if d == 31 and form.mnemonic in ("add", "sub") else (X_NAMES[d] if d < 31 else None)
    if name is None:
        return Check("the result (to XZR, discarded)", f"{result:#x}", f"{result:#x}")
    return Check(name, f"{result:#x}", f"{state.read_register(name):#x}")

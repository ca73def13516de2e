"""The trace viewer's accounts of what the scalar, predicate and whole-register instructions around an SME kernel
write (``Isa.element_workings``, see workings.py): PTRUE with its pattern, WHILELT/WHILELO, CNTB/H/W/D, RDSVL,
ADDVL/ADDSVL/ADDSPL, ADD/SUB (immediate) and MOV (wide immediate), LDR/STR of a Z or P register, multi-vector
MOVA and MOVAZ between a ZA vector group and Z registers, LUTI2/LUTI4, LDR/STR/ZERO ZT0 and MOVT.

Each account gives the inputs as the state before the step held them, the rule in the Arm ARM's terms, the value
that rule makes, and ends with a Check of that value against what the step left in the register, array or
memory (read from the machine after the step), so a wrong step shows as an unequal Check.
"""

from __future__ import annotations

import re

import numpy as np

from ...core.explain.model import Check, ElementWorking, Table
from ..state import MASK64

# DecodePredCount's patterns by their 5-bit encoding (the rest, #14-#28, make no element active)
PATTERN_NAMES = {0: "POW2", **{n: f"VL{n}" for n in range(1, 9)}, **{9 + k: f"VL{16 << k}" for k in range(5)},
                 29: "MUL4", 30: "MUL3", 31: "ALL"}
SIZE_LETTERS = {8: "B", 16: "H", 32: "S", 64: "D"}


def _count_of(pattern: int, elements: int) -> tuple[int, str]:
    """DecodePredCount(pattern, esize) for ``elements`` elements per vector, and the rule it applied."""
    name = PATTERN_NAMES.get(pattern, f"#{pattern}")
    if pattern == 0:
        count = 1 << (elements.bit_length() - 1)
        return count, f"POW2: the largest power of 2 not above {elements} = {count}"
    if 1 <= pattern <= 13:
        wanted = pattern if pattern <= 8 else 16 << (pattern - 9)
        count = wanted if wanted <= elements else 0
        return count, f"{name}: {wanted} if {wanted} <= {elements}, else 0 = {count}"
    if pattern in (29, 30):
        k = 4 if pattern == 29 else 3
        return elements - elements % k, f"{name}: {elements} - ({elements} MOD {k}) = {elements - elements % k}"
    if pattern == 31:
        return elements, f"ALL: every element = {elements}"
    return 0, f"{name}: an unallocated pattern makes no element active = 0"


def _int_text(value: int) -> str:
    return f"{value:#x} ({value})"


def _bytes_text(data: bytes) -> str:
    return data.hex(" ")


def _x(state, n: int, sp: bool = False) -> int:
    """X[n] (XZR reads 0), or SP where the operand is X[n|SP]."""
    if n == 31:
        return state.sp if sp else 0
    return state.x[n]


def _register(n: int, sp: bool = False, width: int = 64) -> str:
    if n == 31:
        return ("sp" if width == 64 else "wsp") if sp else ("xzr" if width == 64 else "wzr")
    return f"{'x' if width == 64 else 'w'}{n}"


def _x_working(d: int, sp: bool, title: str, rows: list, value: int, after) -> ElementWorking:
    """The account of X[d] (or SP): the rows, then the Check of ``value`` against the register after the step."""
    location = "sp" if d == 31 and sp else f"x{d}"
    got = _x(after.state, d, sp)
    return ElementWorking(location, 0, 8, title, [Table(["step", "value"], rows, title=title),
                                                  Check(location, _int_text(value & MASK64), _int_text(got))])


def _bytes_working(location: str, offset: int, title: str, rows: list, value: bytes, got: bytes) -> ElementWorking:
    return ElementWorking(location, offset, len(value), title,
                          [Table(["step", "value"], rows, title=title), Check(title, _bytes_text(value),
                                                                              _bytes_text(got))])


def _predicate_bytes(active: list[bool], esize: int, pl: int) -> bytes:
    """P's bytes when element e of esize bits is active[e]: bit e * esize/8 set, every other bit clear."""
    bits = np.zeros(8 * pl, dtype=np.uint8)
    for e, on in enumerate(active):
        bits[e * esize // 8] = on
    return np.packbits(bits, bitorder="little").tobytes()


def _predicate_working(d: int, esize: int, active: list[bool], rows: list, after, title: str) -> ElementWorking:
    pl = after.state.svlb // 8
    shown = "".join("1" if on else "0" for on in active)
    rows = rows + [["elements (e = 0 first)", shown],
                   [f"P{d} bits", f"bit e x {esize // 8} of element e, the other bits 0"]]
    return _bytes_working(f"p{d}", 0, title, rows, _predicate_bytes(active, esize, pl),
                          bytes(after.state.p[d].tobytes()))


# ---- predicates and counts ---------------------------------------------------------------------------------------

def _ptrue(ins, before, after) -> list[ElementWorking]:
    d, (pattern, _) = ins.operands
    esize = 8 << "bhsd".index(ins.form.id[-1])
    elements = after.state.svl // esize
    count, rule = _count_of(pattern, elements)
    rows = [["elements", f"VL DIV {esize} = {after.state.svl} DIV {esize} = {elements}"],
            ["count = DecodePredCount(pattern)", rule],
            ["element e", f"active if e < {count}"]]
    return [_predicate_working(d, esize, [e < count for e in range(elements)], rows, after,
                               f"P{d}.{SIZE_LETTERS[esize]} = PTRUE {PATTERN_NAMES.get(pattern, pattern)}")]


def _while(ins, before, after) -> list[ElementWorking]:
    d, n, m = ins.operands
    esize = 8 << "bhsd".index(ins.form.id.split("_")[1])
    width = 32 if ins.form.id.endswith("_w") else 64
    unsigned = ins.form.mnemonic == "whilelo"
    mask = (1 << width) - 1
    a, b = _x(before.state, n) & mask, _x(before.state, m) & mask
    if not unsigned:
        a -= (a >> (width - 1)) << width
        b -= (b >> (width - 1)) << width
    elements = after.state.svl // esize
    active, last = [], True
    for e in range(elements):
        last = last and a + e < b
        active.append(last)
    kind = "UInt" if unsigned else "SInt"
    rows = [[f"operand1 = {kind}({_register(n, width=width)})", str(a)],
            [f"operand2 = {kind}({_register(m, width=width)})", str(b)],
            ["elements", f"VL DIV {esize} = {elements}"],
            ["element e", f"active while operand1 + e < operand2: {a} + e < {b} (exact, no wrap-around), "
                          f"{sum(active)} active"]]
    return [_predicate_working(d, esize, active, rows, after,
                               f"P{d}.{SIZE_LETTERS[esize]} = {ins.form.mnemonic.upper()}({a}, {b})")]


def _cnt(ins, before, after) -> list[ElementWorking]:
    d, (pattern, times) = ins.operands
    esize = 8 << "bhwd".index(ins.form.mnemonic[-1])
    elements = after.state.svl // esize
    count, rule = _count_of(pattern, elements)
    rows = [["elements", f"VL DIV {esize} = {elements}"], ["count = DecodePredCount(pattern)", rule],
            [f"X[{d}] = count x {times}", str(count * times)]]
    return [_x_working(d, False, f"x{d} = {ins.form.mnemonic.upper()}", rows, count * times, after)]


def _vector_length_arithmetic(ins, before, after) -> list[ElementWorking]:
    svlb = after.state.svlb
    name = ins.form.id
    if name == "RDSVL":
        d, imm = ins.operands
        rows = [["SVL in bytes", str(svlb)], [f"X[{d}] = {imm} x SVL/8", str(imm * svlb)]]
        return [_x_working(d, False, f"x{d} = RDSVL #{imm}", rows, imm * svlb, after)]
    d, n, imm = ins.operands
    unit, what = {"ADDVL": (svlb, "VL/8 (streaming: SVL/8)"), "ADDSVL": (svlb, "SVL/8"),
                  "ADDSPL": (svlb // 8, "SVL/64")}[name]
    base = _x(before.state, n, sp=True)
    value = (base + imm * unit) & MASK64
    rows = [[_register(n, sp=True), _int_text(base)], [what, str(unit)],
            [f"{_register(d, sp=True)} = {_register(n, sp=True)} + {imm} x {unit}", _int_text(value)]]
    return [_x_working(d, True, f"{_register(d, sp=True)} = {name}", rows, value, after)]


def _add_sub_immediate(ins, before, after) -> list[ElementWorking]:
    d, n, imm = ins.operands
    width = 32 if "_32_" in ins.form.id else 64
    sub = ins.form.mnemonic.startswith("sub")
    mask = (1 << width) - 1
    operand1 = _x(before.state, n, sp=True) & mask
    result = (operand1 - imm if sub else operand1 + imm) & mask
    setflags = ins.form.mnemonic.endswith("s")
    rows = [[f"operand1 = {_register(n, sp=True, width=width)}", _int_text(operand1)],
            ["operand2 = imm (imm12, LSL #12 if sh)", _int_text(imm)],
            [f"result = operand1 {'-' if sub else '+'} operand2, modulo 2^{width}", _int_text(result)]]
    if width == 32:
        rows.append(["X[d] = ZeroExtend(result, 64)", _int_text(result)])
    return [_x_working(d, not setflags, f"{_register(d, sp=not setflags, width=width)} = {ins.text}", rows,
                       result, after)]


def _move_wide(ins, before, after) -> list[ElementWorking]:
    d, (imm16, pos) = ins.operands
    width = 32 if "_32" in ins.form.id else 64
    kind = ins.form.id.split("_")[0][-1]  # MOVZ, MOVN, MOVK
    base = _x(before.state, d) & ((1 << width) - 1) if kind == "K" else 0
    result = (base & ~(0xFFFF << pos)) | imm16 << pos
    if kind == "N":
        result = ~result
    result &= (1 << width) - 1
    rows = [["start", f"X[{d}] = {_int_text(base)}" if kind == "K" else "Zeros"],
            [f"result<{pos + 15}:{pos}> = imm16", _int_text(imm16)]]
    if kind == "N":
        rows.append(["result = NOT(result)", ""])
    rows.append([f"X[{d}]", _int_text(result)])
    return [_x_working(d, False, f"{_register(d, width=width)} = {ins.text}", rows, result, after)]


# ---- whole Z and P registers: LDR, STR -------------------------------------------------------------------------

def _ldr_str_register(ins, before, after) -> list[ElementWorking]:
    t, (n, imm) = ins.operands
    predicate = ins.form.id.endswith("_p")
    svlb = after.state.svlb
    size = svlb // 8 if predicate else svlb
    base = _x(before.state, n, sp=True)
    address = (base + imm * size) & MASK64
    name = f"{'p' if predicate else 'z'}{t}"
    rows = [[_register(n, sp=True), _int_text(base)],
            [f"address = {_register(n, sp=True)} + {imm} x {size} ({'PL' if predicate else 'VL'}/8)",
             _int_text(address)]]
    if ins.form.mnemonic == "ldr":
        data = bytes(before.memory.read(address, size))
        rows.append([f"{name.upper()} = Mem[{address:#x}, {size}]", _bytes_text(data)])
        got = (after.state.p if predicate else after.state.z)[t].tobytes()
        return [_bytes_working(name, 0, f"{name} from memory at {address:#x}", rows, data, got)]
    data = (before.state.p if predicate else before.state.z)[t].tobytes()
    rows.append([f"Mem[{address:#x}, {size}] = {name.upper()}", _bytes_text(data)])
    return [_bytes_working("memory", address, f"memory at {address:#x} from {name}", rows, data,
                           bytes(after.memory.read(address, size)))]


# ---- multi-vector MOVA and MOVAZ between a ZA vector group and Z registers ---------------------------------------

def _group_vectors(state, v: int, offset: int, nreg: int) -> tuple[list[int], list]:
    vstride = state.svlb // nreg
    wv = state.x[v] & 0xFFFFFFFF
    vec = (wv + offset) % vstride
    rows = [["vstride", f"(SVL/8) DIV {nreg} = {vstride}"],
            ["vec", f"(UInt(w{v}) + {offset}) MOD vstride = ({wv} + {offset}) MOD {vstride} = {vec}"]]
    return [vec + r * vstride for r in range(nreg)], rows


def _mova_group(ins, before, after) -> list[ElementWorking]:
    svlb = after.state.svlb
    to_vectors = ins.form.id.startswith(("MOVA_z_", "MOVAZ_z_"))
    (first, (v, offset)) = ins.operands if to_vectors else ins.operands[::-1]
    nreg = int(ins.form.id[-1])
    registers = first if isinstance(first, tuple) else tuple((first + r) % 32 for r in range(nreg))
    vectors, head = _group_vectors(before.state, v, offset, nreg)
    workings = []
    for r, (z, vec) in enumerate(zip(registers, vectors)):
        rows = head + [[f"r = {r}", f"ZA vector vec + {r} x vstride = {vec}, Z{z}"]]
        if to_vectors:
            data = before.state.za[vec].tobytes()
            rows.append([f"Z{z} = ZAvector[{vec}]", _bytes_text(data)])
            workings.append(_bytes_working(f"z{z}", 0, f"z{z} from ZA vector {vec}", rows, data,
                                           after.state.z[z].tobytes()))
            if ins.form.mnemonic == "movaz":
                workings.append(_bytes_working("za", vec * svlb, f"ZA vector {vec} zeroed (MOVAZ)",
                                               rows[:-1] + [[f"ZAvector[{vec}] = Zeros", ""]], bytes(svlb),
                                               after.state.za[vec].tobytes()))
        else:
            data = before.state.z[z].tobytes()
            rows.append([f"ZAvector[{vec}] = Z{z}", _bytes_text(data)])
            workings.append(_bytes_working("za", vec * svlb, f"ZA vector {vec} from z{z}", rows, data,
                                           after.state.za[vec].tobytes()))
    return workings


# ---- ZT0: LUTI2/LUTI4, LDR/STR, ZERO, MOVT ---------------------------------------------------------------------

def _luti(ins, before, after) -> list[ElementWorking]:
    first, _, (n, imm) = ins.operands
    form = ins.form
    esize = 8 << "bhs".index(form.id.split("_")[1])
    isize = 2 if form.mnemonic == "luti2" else 4
    nreg = int(re.search(r"_x(\d)", form.id).group(1))
    registers = first if isinstance(first, tuple) else tuple((first + r) % 32 for r in range(nreg))
    elements = after.state.svl // esize
    segments = esize // (isize * nreg)
    base = (imm % segments) * elements * nreg
    indexes = int.from_bytes(before.state.z[n].tobytes(), "little")
    table = before.state.zt0.tobytes()
    eb = esize // 8
    workings = []
    for r, z in enumerate(registers):
        for e in range(elements):
            k = base + r * elements + e
            index = indexes >> (k * isize) & ((1 << isize) - 1)
            entry = table[4 * index:4 * index + 4]
            value = entry[:eb]
            rows = [["segments", f"esize DIV (isize x nreg) = {esize} DIV ({isize} x {nreg}) = {segments}"],
                    ["base", f"({imm} MOD {segments}) x {elements} x {nreg} = {base}"],
                    [f"index = UInt(Elem[z{n}, {k}, {isize}])", str(index)],
                    [f"ZT0 entry {index} (bytes {4 * index}-{4 * index + 3})", _bytes_text(entry)],
                    [f"z{z}.{'bhs'[eb.bit_length() - 1]}[{e}] = its low {esize} bits", _bytes_text(value)]]
            workings.append(_bytes_working(f"z{z}", e * eb, f"z{z} element {e} = ZT0[{index}]", rows, value,
                                           after.state.z[z][e * eb:(e + 1) * eb].tobytes()))
    return workings


def _zt0(ins, before, after) -> list[ElementWorking]:
    form = ins.form
    table_after = after.state.zt0.tobytes()
    if form.id == "ZERO_zt0":
        return [_bytes_working("zt0", 0, "ZT0 zeroed", [["ZT0[512]", "Zeros(512)"]], bytes(64), table_after)]
    if form.id in ("LDR_zt0", "STR_zt0"):
        n = ins.operands[1]
        address = _x(before.state, n, sp=True)
        rows = [[f"address = {_register(n, sp=True)}", _int_text(address)]]
        if form.id == "LDR_zt0":
            data = bytes(before.memory.read(address, 64))
            rows.append([f"ZT0 = Mem[{address:#x}, 64]", _bytes_text(data)])
            return [_bytes_working("zt0", 0, f"ZT0 from memory at {address:#x}", rows, data, table_after)]
        data = before.state.zt0.tobytes()
        rows.append([f"Mem[{address:#x}, 64] = ZT0", _bytes_text(data)])
        return [_bytes_working("memory", address, f"memory at {address:#x} from ZT0", rows, data,
                               bytes(after.memory.read(address, 64)))]
    if form.id == "MOVT_x":
        t, offset = ins.operands
        data = before.state.zt0.tobytes()[offset:offset + 8]
        rows = [[f"ZT0 bytes {offset}-{offset + 7} (bits {offset * 8}+:64)", _bytes_text(data)]]
        return [_x_working(t, False, f"x{t} = ZT0[{offset * 8} +: 64]", rows, int.from_bytes(data, "little"),
                           after)]
    offset, t = ins.operands  # MOVT_zt0
    value = _x(before.state, t).to_bytes(8, "little")
    rows = [[_register(t), _int_text(_x(before.state, t))], [f"ZT0 bytes {offset}-{offset + 7}", _bytes_text(value)]]
    return [_bytes_working("zt0", offset, f"ZT0[{offset * 8} +: 64] = {_register(t)}", rows, value,
                           table_after[offset:offset + 8])]


REGISTER_ACCOUNTS = [
    (re.compile(r"^PTRUE_[bhsd]$"), _ptrue),
    (re.compile(r"^WHILEL[TO]_[bhsd]_[xw]$"), _while),
    (re.compile(r"^CNT[BHWD]$"), _cnt),
    (re.compile(r"^(RDSVL|ADDVL|ADDSVL|ADDSPL)$"), _vector_length_arithmetic),
    (re.compile(r"^(ADD|SUB)S?_(32|64)_imm$"), _add_sub_immediate),
    (re.compile(r"^MOV[ZNK]_(32|64)$"), _move_wide),
    (re.compile(r"^(LDR|STR)_[zp]$"), _ldr_str_register),
    (re.compile(r"^MOVAZ?_(z_zad|zad_z)_vgx[24]$"), _mova_group),
    (re.compile(r"^LUTI[24]_[bhs]_x[124](_strided)?$"), _luti),
    (re.compile(r"^(ZERO|LDR|STR)_zt0$|^MOVT_(x|zt0)$"), _zt0),
]


def register_workings(instruction, before, after) -> list[ElementWorking] | None:
    """The accounts of a form this module covers, or None for any other."""
    for pattern, accounts in REGISTER_ACCOUNTS:
        if pattern.match(instruction.form.id):
            return accounts(instruction, before, after)
    return None

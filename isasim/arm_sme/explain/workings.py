"""The trace viewer's click-for-working for arm_sme (``Isa.element_workings``): for a step of an integer or
floating-point dot product into a ZA vector group (UDOT, SDOT, USDOT, SUDOT and the vertical dots; FDOT,
BFDOT) or an outer product into a ZA tile (SMOPA ... USMOPS; FMOPA/FMOPS, BFMOPA/BFMOPS), one
core.explain.model.ElementWorking per ZA element the instruction's Operation writes, made by the very
functions that write ``isasim explain``'s worked element (checks_za.py), fed with the step's live state.
The data movements (LD1B/H/W/D and ST1 of a Z register or a ZA tile slice, LDR/STR of a ZA vector, MOVA
between a slice and a Z register, ZERO {mask}) have one account per destination element (a store's: per
memory element written) giving the source bytes as the operands address them and the element's value; the
addresses, vectors and slices come from the functions explain's check line uses (checks.py).

Those functions read a worked example's ``run``: ``run.before`` (the registers, Z, ZA and P before the step)
and ``run.machine`` (the machine after it).  :class:`LiveRun` is that pair made of the viewer's two machines,
so the lanes, predicate bits, products, sums and the final Check are the explain code's, read from the trace.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from ...core.explain.model import Check, ElementWorking, Table
from ..semantics.za_tiles import tile_count, tile_text
from ..state import MASK64, X_NAMES
from .before_state import ELEMENT_LETTERS, first_group_vector, predicate_bit, register_name
from .checks import contiguous_access, slice_index, za_vector_access
from .checks_za import dot_element_blocks, fp_dot_element_blocks, fp_outer_element_blocks, outer_element_blocks


@dataclass
class LiveRun:
    """What checks_za's functions read of a worked example, from a machine before the step and one after it."""

    before: dict
    machine: Any

    @classmethod
    def of(cls, before, after) -> "LiveRun":
        state = before.state
        snapshot = {"regs": {**{name: state.x[n] for n, name in enumerate(X_NAMES)}, "sp": state.sp},
                    "z": state.z, "za": state.za, "p": state.p}
        return cls(snapshot, after)


def element_workings(instruction, before, after) -> list[ElementWorking]:
    """The account of every ZA element ``instruction`` wrote, or [] for a form without one (or a step that
    faulted: it wrote nothing)."""
    form = getattr(instruction, "form", None)
    if form is None or after.fault is not None:
        return []
    if form.group in _GROUPS:
        return _GROUPS[form.group](instruction, LiveRun.of(before, after))
    for pattern, moves in _MOVES:
        if pattern.match(form.id):
            return moves(instruction, LiveRun.of(before, after), before)
    from .workings_registers import register_workings  # the scalar, predicate and whole-register writers

    return register_workings(instruction, before, after) or []


def _group_workings(ins, run: LiveRun, esize: int, blocks_of) -> list[ElementWorking]:
    """Element e of each vector r of the ZA vector group (every element of the nreg vectors is written)."""
    shape = ins.form.extra["shape"]
    (v, offset) = ins.operands[0]
    svlb = run.machine.state.svlb
    first = first_group_vector(run, v, offset, shape.nreg)
    eb, letter = esize // 8, "s" if esize == 32 else "d"
    workings = []
    for r in range(shape.nreg):
        vec = first + r * (svlb // shape.nreg)
        for e in range(svlb // eb):
            workings.append(ElementWorking("za", vec * svlb + e * eb, eb,
                                           f"ZA[{vec}].{letter}[{e}] (vector {r} of the group, element {e})",
                                           blocks_of(ins, run, r, e)))
    return workings


def _tile_workings(ins, run: LiveRun, esize: int, blocks_of) -> list[ElementWorking]:
    """Element (row, col) of ZAda: every element of the tile is written (sum unchanged where no pair is active)."""
    da = ins.operands[0]
    svlb = run.machine.state.svlb
    eb, letter = esize // 8, "S" if esize == 32 else "D"
    dim = svlb // eb
    workings = []
    for row in range(dim):
        vector = da + row * tile_count(esize)
        for col in range(dim):
            workings.append(ElementWorking("za", vector * svlb + col * eb, eb,
                                           f"ZA{da}.{letter}[{row}][{col}] = ZA[{vector}].{letter.lower()}[{col}]",
                                           blocks_of(ins, run, row, col)))
    return workings


_GROUPS = {
    "dot": lambda ins, run: _group_workings(ins, run, ins.form.extra["shape"].esize, dot_element_blocks),
    "fp_dot": lambda ins, run: _group_workings(ins, run, 32, fp_dot_element_blocks),
    "outer": lambda ins, run: _tile_workings(ins, run, ins.form.extra["shape"].esize, outer_element_blocks),
    "fp_outer": lambda ins, run: _tile_workings(ins, run, 32, fp_outer_element_blocks),
}


# ---- the data movements: loads and stores of Z and ZA, MOVA, ZERO ----------------------------------------
# An account says which source bytes (memory at an address the operands computed, or a register's or ZA's
# bytes) went to which destination element, the bytes in hex and the element's value, and ends with a Check of
# the element as the rule makes it from the state before the step against the bytes the step left there.

BYTE_ACCOUNTS_MAX = 4096  # above this many byte elements, one account per 4-byte group


def _value_text(data: bytes) -> str:
    """An element's bytes as its little-endian value in hex and as the unsigned integer of its width."""
    value = int.from_bytes(data, "little")
    return f"{value:#0{2 + 2 * len(data)}x} (uint{8 * len(data)} {value})"


def _moved(location: str, offset: int, size: int, title: str, rows: list, what: str, explained: bytes,
           machine: bytes) -> ElementWorking:
    table = Table(["step", "for this element"], rows, title=title)
    return ElementWorking(location, offset, size, title,
                          [table, Check(what, _value_text(explained), _value_text(machine))])


def _za_slice_offset(tile: int, eb: int, vertical: bool, index: int, e: int, svlb: int) -> tuple[int, str]:
    """Byte offset in ZA of element e of a tile slice and the ZA vector holding it: row r of the tile is ZA
    vector tile + r * eb; a horizontal slice is row ``index``, a vertical one element ``index`` of each row."""
    row, col = (e, index) if vertical else (index, e)
    vector = tile + row * eb
    return vector * svlb + col * eb, f"ZA[{vector}] bytes {col * eb}-{col * eb + eb - 1}"


def _contiguous_rows(ins, run, esize: int, msize: int, start: int, e: int) -> tuple[list, int]:
    """The address of element e of a contiguous LD1/ST1, worked from the operands: rows and the address."""
    form, ops, regs, svl = ins.form, ins.operands, run.before["regs"], run.machine.state.svl
    n, k = ops[2]
    mb = msize // 8
    base = regs["sp"] if n == 31 else regs[X_NAMES[n]]
    rows = [["base", f"{register_name(n, 64, sp=True)} = {base:#x}"]]
    if form.id.endswith("_imm"):
        rows.append(["offset", f"#{k}, MUL VL: {k} x {svl // esize} elements x {mb} bytes = {start - base:#x}"])
    elif k != 31:
        rows.append(["offset", f"x{k} = {regs[X_NAMES[k]]} elements x {mb} bytes = {start - base:#x}"])
    address = (start + e * mb) & MASK64
    rows.append([f"element {e}", f"{start & MASK64:#x} + {e} x {mb} = {address:#x}"])
    return rows, address


def _contiguous_workings(ins, run: LiveRun, before) -> list[ElementWorking]:
    """LD1B/H/W/D of a Z register or a ZA tile slice (inactive elements zeroed; msize < esize zero-extends)
    and ST1B/H/W/D of them (an inactive element writes no memory)."""
    form, ops, state = ins.form, ins.operands, run.machine.state
    regs, svl, svlb = run.before["regs"], state.svl, state.svlb
    esize, msize, start = contiguous_access(ins, regs, svl)
    eb, mb = esize // 8, msize // 8
    g, load = ops[1], form.mnemonic.startswith("ld")
    if form.group == "za_memory":
        tile, vertical, s, offset = ops[0]
        index = slice_index(regs, s, offset, svl, esize)
        name = tile_text(tile, form.id[-1], vertical) + f"[{index}]"
    else:
        name = f"z{ops[0]}"
    workings = []
    for e in range(svl // esize):
        active = predicate_bit(run, g, e, esize)
        rows, address = _contiguous_rows(ins, run, esize, msize, start, e)
        rows.append([f"p{g} element {e}", "active" if active else "inactive"])
        if form.group == "za_memory":
            at, where = _za_slice_offset(tile, eb, vertical, index, e, svlb)
            location, source = "za", bytes(run.before["za"].reshape(-1)[at:at + eb])
        else:
            at, where = e * eb, f"z{ops[0]} byte{f' {e}' if eb == 1 else f's {e * eb}-{e * eb + eb - 1}'}"
            location, source = f"z{ops[0]}", bytes(run.before["z"][ops[0]][at:at + eb])
        element = f"{name}.{form.id[-1] if form.group == 'za_memory' else ELEMENT_LETTERS[esize]}[{e}]"
        if load:
            data = bytes(before.memory.read(address, mb)) if active else b""
            if active:
                rows.append([f"Mem[{address:#x}, {mb}]", data.hex(" ")])
            value = data + bytes(eb - len(data))
            rows.append([f"{element} ({where})", _value_text(value) +
                         ("" if not active else " zero-extended" if mb < eb else "") + ("" if active else ": zeroed")])
            got = bytes((state.za.reshape(-1) if location == "za" else state.z[ops[0]])[at:at + eb])
            workings.append(_moved(location, at, eb, f"{element} from memory at {address:#x}" if active else
                                   f"{element} (inactive: zeroed)", rows, element, value, got))
        elif active:  # a store: the element's low msize bits to Mem[address]
            data = source[:mb]
            rows.append([f"{element} ({where})", _value_text(source)])
            rows.append([f"Mem[{address:#x}, {mb}]", data.hex(" ")])
            workings.append(_moved("memory", address, mb, f"memory at {address:#x} from {element}", rows,
                                   f"memory at {address:#x}", data, bytes(run.machine.memory.read(address, mb))))
    return workings


def _za_vector_workings(ins, run: LiveRun, before) -> list[ElementWorking]:
    """LDR ZA[Wv, #imm], [Xn, #imm, MUL VL] and STR: SVL/8 bytes between ZA vector vec and memory, byte b of
    the vector at address + b; one account per byte."""
    state, regs = run.machine.state, run.before["regs"]
    svlb = state.svlb
    vec, address = za_vector_access(ins.operands, regs, svlb)
    (v, imm), (n, _) = ins.operands
    load = ins.form.id == "LDR_za"
    head = [["vector", f"(w{v} = {regs[f'x{v}'] & 0xFFFFFFFF} + {imm}) MOD {svlb} = {vec}"],
            ["address", f"{register_name(n, 64, sp=True)} = {(regs['sp'] if n == 31 else regs[X_NAMES[n]]):#x}"
                        f" + {imm} x {svlb} = {address:#x}"]]
    workings = []
    for b in range(svlb):
        at = (address + b) & MASK64
        rows = head + [[f"byte {b}", f"ZA[{vec}] byte {b} and Mem[{at:#x}]"]]
        if load:
            data = bytes(before.memory.read(at, 1))
            rows.append([f"Mem[{at:#x}, 1]", data.hex()])
            workings.append(_moved("za", vec * svlb + b, 1, f"ZA[{vec}] byte {b} from memory at {at:#x}", rows,
                                   f"ZA[{vec}] byte {b}", data, bytes(state.za[vec][b:b + 1])))
        else:
            data = bytes(run.before["za"][vec][b:b + 1])
            rows.append([f"ZA[{vec}] byte {b}", data.hex()])
            workings.append(_moved("memory", at, 1, f"memory at {at:#x} from ZA[{vec}] byte {b}", rows,
                                   f"memory at {at:#x}", data, bytes(run.machine.memory.read(at, 1))))
    return workings


def _mova_workings(ins, run: LiveRun, before) -> list[ElementWorking]:
    """MOVA Zd, Pg/M, ZAn<HV>.T[Ws, offs] and MOVA ZAd<HV>.T[Ws, offs], Pg/M, Zn: element e of the slice to or
    from element e of the vector where Pg's element e is active; an inactive element keeps its old bytes."""
    form, ops, state = ins.form, ins.operands, run.machine.state
    letter = form.id[-1]
    esize = 8 << "bhsdq".index(letter)
    eb, svlb = esize // 8, state.svlb
    to_vector = form.id.startswith("MOVA_z_")
    (tile, vertical, s, offset), g = (ops[2], ops[1]) if to_vector else (ops[0], ops[1])
    index = slice_index(run.before["regs"], s, offset, state.svl, esize)
    slice_name = tile_text(tile, letter, vertical) + f"[{index}]"
    z = ops[0] if to_vector else ops[2]
    old_za, new_za = run.before["za"].reshape(-1), state.za.reshape(-1)
    workings = []
    for e in range(state.svl // esize):
        at, where = _za_slice_offset(tile, eb, vertical, index, e, svlb)
        za_element, z_element = f"{slice_name}.{letter}[{e}]", f"z{z}.{letter}[{e}]"
        slice_bytes, z_bytes = bytes(old_za[at:at + eb]), bytes(run.before["z"][z][e * eb:(e + 1) * eb])
        active = predicate_bit(run, g, e, esize)
        source, old = (slice_bytes, z_bytes) if to_vector else (z_bytes, slice_bytes)
        rows = [["slice", f"(w{s} = {run.before['regs'][f'x{s}'] & 0xFFFFFFFF} + {offset}) MOD "
                          f"{state.svl // esize} = {index}"],
                [f"p{g} element {e}", "active" if active else "inactive (merging: the old value stays)"],
                [f"{za_element} ({where})", slice_bytes.hex(" ")], [z_element, z_bytes.hex(" ")]]
        value = source if active else old
        dest = z_element if to_vector else za_element
        if to_vector:
            location, offset_in, got = f"z{z}", e * eb, bytes(state.z[z][e * eb:(e + 1) * eb])
        else:
            location, offset_in, got = "za", at, bytes(new_za[at:at + eb])
        title = f"{dest} from {za_element if to_vector else z_element}" if active else f"{dest} (inactive: kept)"
        workings.append(_moved(location, offset_in, eb, title, rows, dest, value, got))
    return workings


def _zero_workings(ins, run: LiveRun, before) -> list[ElementWorking]:
    """ZERO {mask}: every byte of the ZA vectors of the .D tiles the mask names (vector r belongs to ZA(r MOD
    8).D) becomes zero; one account per byte, or per 4-byte group when they are more than 4096."""
    state, mask = run.machine.state, ins.operands[0]
    svlb = state.svlb
    vectors = [r for r in range(svlb) if mask >> (r % 8) & 1]
    group = 1 if len(vectors) * svlb <= BYTE_ACCOUNTS_MAX else 4
    za = state.za.reshape(-1)
    workings = []
    for r in vectors:
        for b in range(0, svlb, group):
            what = f"ZA[{r}] byte {b}" if group == 1 else f"ZA[{r}] bytes {b}-{b + 3} (a 4-byte group)"
            rows = [["mask", f"{mask:#010b}: tiles " + ", ".join(f"za{t}.d" for t in range(8) if mask >> t & 1)],
                    [f"ZA[{r}]", f"in za{r % 8}.d (vector {r} MOD 8): zeroed"],
                    [what + " before", bytes(run.before["za"][r][b:b + group]).hex(" ")]]
            workings.append(_moved("za", r * svlb + b, group, what + " zeroed", rows, what, bytes(group),
                                   bytes(za[r * svlb + b:r * svlb + b + group])))
    return workings


_MOVES = [
    (re.compile(r"^(LD|ST)1[BHWD]_z_[bhsd]_(imm|ss)$|^(LD|ST)1[BHWDQ]_za_[bhsdq]$"), _contiguous_workings),
    (re.compile(r"^(LDR|STR)_za$"), _za_vector_workings),
    (re.compile(r"^MOVA_(z_za|za_z)_[bhsdq]$"), _mova_workings),
    (re.compile(r"^ZERO_tiles$"), _zero_workings),
]

"""The worked example's check line for each arm_sme form: one result of the step worked out here
from the form's Operation (in plain integer arithmetic, or with fp_asl.py's per-element functions),
beside what the machine wrote, after the tables that show the steps.  The instruction itself runs
the simulator's semantics; these computations are the explanation's arithmetic, shown so a reader
can follow it.  This module dispatches by the form's group and holds the families whose account is
a line or two; checks_za, checks_scalar and checks_memory hold the ones worked through in tables."""

from __future__ import annotations

from ...core.explain import Check
from ..faults import UNDEFINED
from ..forms import UNDEFINED_FORMS
from ..semantics import base_system
from ..state import MASK64, X_NAMES
from .before_state import before_p, pattern_count, signed, tile_slice
from . import checks_base, checks_sve
from . import checks_advsimd, checks_za_multiply_add
from .checks_memory import memory_blocks
from .checks_scalar import FAMILIES, scalar_blocks
from .checks_za import dot_blocks, fp_dot_blocks, fp_outer_blocks, outer_blocks

# ConditionHolds's table, in the Arm ARM's words: cond<3:1> picks the test on N, Z, C, V and cond<0>
# inverts it (except for 1111, which is "always" as 1110 is)
CONDITION_TESTS = (lambda n, z, c, v: z == 1, lambda n, z, c, v: c == 1, lambda n, z, c, v: n == 1,
                   lambda n, z, c, v: v == 1, lambda n, z, c, v: c == 1 and z == 0, lambda n, z, c, v: n == v,
                   lambda n, z, c, v: n == v and z == 0, lambda n, z, c, v: True)
WORKED = {"dot": dot_blocks, "outer": outer_blocks, "fp_dot": fp_dot_blocks, "fp_outer": fp_outer_blocks,
          "memory": memory_blocks}


def condition_holds(cond: int, nzcv: int) -> bool:
    n, z, c, v = (nzcv >> 3) & 1, (nzcv >> 2) & 1, (nzcv >> 1) & 1, nzcv & 1
    holds = CONDITION_TESTS[cond >> 1](n, z, c, v)
    return not holds if cond & 1 and cond != 0b1111 else holds


def check(ins, run) -> list:
    """The worked tables and the one Check of the step: for a faulted step, the fault beside the one
    the form must raise (UDF: UNDEFINED); nothing if the fault was not the form's own."""
    form = ins.form
    if run.fault is not None:
        if run.setup_fault is None and (form.id in UNDEFINED_FORMS or form.execute is base_system.privileged):
            # UDF, and MRS/MSR of a register of EL1 or above: isasim runs code at EL0
            return [Check("the fault the machine raised", UNDEFINED, run.fault.kind)]
        if run.setup_fault is None and checks_sve.applies(form):  # MOVA of four .D slices at SVL 128
            return [checks_sve.fault_check(ins, run)]
        return []
    if checks_za_multiply_add.applies(form):  # issue 29's SMLAL ... SUMLALL, ADD/SUB into ZA: one element worked
        return checks_za_multiply_add.za_multiply_add_blocks(ins, run)
    if checks_sve.applies(form):  # the SVE and SME2 forms of issue 28 (before the base: BIC, ORN are both's)
        return checks_sve.sve_blocks(ins, run)
    if form.group == "advsimd":  # the AdvSIMD forms of issue 28
        return checks_advsimd.advsimd_blocks(ins, run)
    if checks_base.applies(form):  # the A64 base forms of issue 28
        return checks_base.base_blocks(ins, run)
    if form.group in WORKED:
        return WORKED[form.group](ins, run)
    if form.group == "scalar" and form.mnemonic in FAMILIES:
        return scalar_blocks(ins, run)
    return [_check_line(ins, run)]


def _check_line(ins, run) -> Check:
    """The families whose result takes a line to work out."""
    form, before, machine = ins.form, run.before, run.machine
    state, regs = machine.state, run.before["regs"]
    ops = ins.operands
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
                 "b.cond": form.mnemonic == "b.cond" and condition_holds(ops[-1], regs["nzcv"] >> 28)
                 }.get(form.mnemonic, False)
        offset = ops[0] if form.mnemonic == "b.cond" else (ops[-1] if ops else 0)
        expected = ins.address + offset if taken else ins.next_address
        return Check("next pc", f"{expected:#x}", f"{state.pc:#x}")
    if form.id in ("LDR_za", "STR_za"):
        vec, address = za_vector_access(ops, regs, state.svlb)
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
        from ..semantics import za_tiles

        esize = 8 << "bhsdq".index(form.id[-1])
        eb = esize // 8
        to_vector = form.id.startswith("MOVA_z_")
        (tile, vertical, s, offset), g = (ops[2], ops[1]) if to_vector else (ops[0], ops[1])
        index = slice_index(regs, s, offset, state.svl, esize)
        pbits = int.from_bytes(bytes(state.p[g]), "little")
        first = next((e for e in range(state.svl // esize) if pbits >> (e * eb) & 1), None)
        slice_before = tile_slice(before["za"], tile, esize, vertical, index)
        source = slice_before if to_vector else before["z"][ops[2]]
        target = state.z[ops[0]] if to_vector else tile_slice(state.za, tile, esize, vertical, index)
        where = f"z{ops[0]}" if to_vector else za_tiles.tile_text(tile, form.id[-1], vertical) + f"[{index}]"
        if first is None:  # merging: an inactive element keeps its old value
            old = before["z"][ops[0]] if to_vector else slice_before
            return Check(f"{where} (p{g} has no active element: it keeps its old bytes)", bytes(old).hex(),
                         bytes(target).hex())
        expected = bytes(source[first * eb:(first + 1) * eb]).hex()
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
        from ..semantics import za_tiles

        esize, msize, start = contiguous_access(ins, regs, state.svl)
        eb, mb = esize // 8, msize // 8
        g = ops[1]
        pbits = int.from_bytes(bytes(before_p(run, g)), "little")
        first = next((e for e in range(state.svl // esize) if pbits >> (e * eb) & 1), None)
        if first is None:
            return _no_active_element(ins, run, g, esize)
        address = (start + first * mb) & MASK64
        memory = bytes(machine.memory.read(address, mb))
        if form.group == "za_memory":
            tile, vertical, s, offset = ops[0]
            index = slice_index(regs, s, offset, state.svl, esize)
            element = bytes(tile_slice(state.za, tile, esize, vertical, index)[first * eb:(first + 1) * eb])
            where = za_tiles.tile_text(tile, form.id[-1], vertical) + f"[{index}]"
        else:
            element = bytes(state.z[ops[0]][first * eb:(first + 1) * eb])
            where = f"z{ops[0]}"
        expected, got = (memory + bytes(eb - mb), element) if form.mnemonic.startswith("ld") else \
            (element[:mb], memory)
        return Check(f"{where} element {first} (the first active) and memory at {address:#x}", expected.hex(),
                     got.hex())
    if form.group == "predicate":
        esize = 8 << "bhsd".index(form.id.split("_")[1])
        elements = state.svl // esize
        if form.mnemonic == "ptrue":
            expected = pattern_count(ops[1][0], elements)
        else:
            width = 64 if form.id.endswith("_x") else 32
            a, b = (0 if r == 31 else regs[X_NAMES[r]] & ((1 << width) - 1) for r in ops[1:])
            if form.mnemonic == "whilelt":
                a, b = signed(a, width), signed(b, width)
            expected = max(0, min(elements, b - a))
        # ElemP[result, e, esize] = '1' for the first `expected` elements: each one's lowest predicate bit
        # (bit e * esize/8) set, every other bit of the register clear
        image = sum(1 << (e * esize // 8) for e in range(expected)).to_bytes(state.svlb // 8, "little")
        suffix = "bhsd"[esize.bit_length() - 4]
        return Check(f"p{ops[0]}.{suffix}: elements 0 to {expected - 1} of {elements} active" if expected else
                     f"p{ops[0]}.{suffix}: none of its {elements} elements active", image.hex(" "),
                     bytes(state.p[ops[0]]).hex(" "))
    if form.group == "count":
        svlb = state.svlb
        xs = lambda n: regs["sp"] if n == 31 else regs[X_NAMES[n]]  # noqa: E731
        if form.mnemonic.startswith("cnt"):
            (pattern, times) = ops[1]
            result = pattern_count(pattern, state.svl // (8 << "bhwd".index(form.mnemonic[3]))) * times
        elif form.mnemonic == "rdsvl":
            result = ops[1] * svlb
        else:
            unit = svlb // 8 if form.mnemonic == "addspl" else svlb
            result = xs(ops[1]) + ops[2] * unit
        result &= MASK64
        sp = form.mnemonic.startswith("add") and ops[0] == 31
        name = "sp" if sp else (X_NAMES[ops[0]] if ops[0] < 31 else None)
        if name is None:  # the zero register discards the result: the step writes no register but the PC
            written = [str(w.where) for w in run.record.writes if w.kind == "reg" and w.where != "pc"]
            return Check("registers written (xzr discards the result)", "none", ", ".join(written) or "none")
        return Check(name, f"{result:#x}", f"{state.read_register(name):#x}")


def za_vector_access(ops, regs: dict, svlb: int) -> tuple[int, int]:
    """LDR/STR ZA[Wv, #imm], [Xn, #imm, MUL VL]: (the ZA vector, (UInt(Wv) + imm) MOD SVL/8; the address,
    Xn + imm * SVL/8) from the registers before the step (the trace viewer's workings use it too)."""
    (v, offset), (n, _) = ops
    vec = ((regs[f"x{v}"] & 0xFFFFFFFF) + offset) % svlb
    address = (regs["sp"] if n == 31 else regs[X_NAMES[n]]) + offset * svlb
    return vec, address


def slice_index(regs: dict, s: int, offset: int, svl: int, esize: int) -> int:
    """A ZA tile slice's number: (UInt(Ws) + offset) MOD the tile's esize-bit elements per slice."""
    return ((regs[f"x{s}"] & 0xFFFFFFFF) + offset) % (svl // esize)


def contiguous_access(ins, regs: dict, svl: int) -> tuple[int, int, int]:
    """A contiguous LD1/ST1 of a Z register or a ZA tile slice: (esize, msize, the address of element 0 before
    the 64-bit wrap): Xn plus #imm vectors' worth of msize elements (the _imm forms: imm x SVL/esize x
    msize/8) or Xm elements of msize (Xm = XZR: none); element e is msize/8 bytes after element e - 1."""
    form, ops = ins.form, ins.operands
    if form.group == "za_memory":
        esize = msize = 8 << "bhsdq".index(form.id[-1])
    else:
        msize = 8 << "bhwd".index(form.mnemonic[3])
        esize = 8 << "bhsd".index(form.id.split("_")[2])
    n, k = ops[2]
    mb = msize // 8
    base = regs["sp"] if n == 31 else regs[X_NAMES[n]]
    if form.id.endswith("_imm"):
        return esize, msize, base + k * (svl // esize) * mb
    return esize, msize, base + (0 if k == 31 else regs[X_NAMES[k]]) * mb


def _no_active_element(ins, run, g: int, esize: int) -> Check:
    """A contiguous load or store whose predicate has no active element: a load zeroes its whole
    destination (inactive elements are zero), a store writes no memory."""
    from ..semantics import za_tiles

    form, state, ops = ins.form, run.machine.state, ins.operands
    if not form.mnemonic.startswith("ld"):
        written = ", ".join(f"{address:#x}" for address, _ in run.writes) or "none"
        return Check(f"memory written (p{g} has no active element)", "none", written)
    if form.group == "za_memory":
        tile, vertical, s, offset = ops[0]
        index = ((run.before["regs"][f"x{s}"] & 0xFFFFFFFF) + offset) % (state.svl // esize)
        target = tile_slice(state.za, tile, esize, vertical, index)
        where = za_tiles.tile_text(tile, form.id[-1], vertical) + f"[{index}]"
    else:
        target, where = state.z[ops[0]], f"z{ops[0]}"
    return Check(f"{where} (p{g} has no active element: all of it zeroed)", bytes(len(target)).hex(),
                 bytes(target).hex())

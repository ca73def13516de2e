"""arm_sme's click-for-working (``ISA.element_workings``): the account of each ZA element a dot or outer product
wrote, built by explain's own checks_za functions from the live state before and after the step.

The outside truth: examples/arm_sme/smopa_gemm.trace.json was recorded on QEMU (its expect holds QEMU's final
ZA and C), udot_gemm.trace.json's expected C is numpy's int64 GEMM; every product a working lists and every
element's value are recomputed here with numpy from the step's own Z, P and ZA; the floating-point outer
products use exactly representable data, so numpy's float32 arithmetic is exact and the reference.  The data
movements' accounts are held to numpy slices of the traces' init memory (what a load must read) and to their
expected C (what a store must write), and to numpy's slicing of random state for the predicated forms.
"""

from __future__ import annotations

import random
import re
from pathlib import Path

import numpy as np
import pytest

from isasim.arm_sme import ISA
from isasim.arm_sme.explain import example_text
from isasim.arm_sme.explain.workings_registers import REGISTER_ACCOUNTS
from isasim.arm_sme.forms import FORMS
from isasim.core.explain.model import Check, ElementWorking, Table
from isasim.core.machine import Machine
from isasim.core.trace import read_trace

EXAMPLES = Path(__file__).resolve().parents[3] / "examples" / "arm_sme"
LANE = re.compile(r"z(\d+)\.([bhsd])\[(\d+)\]")
COVERED_GROUPS = ("dot", "outer", "fp_dot", "fp_outer")
MOVES = ("ld1", "st1", "ldr za", "str za", "zero", "mova")  # the data movements with an account


def lockstep(trace):
    """Yield (instruction, before, after, record) for each step of the trace's program: ``before`` is a second
    machine one step behind ``after`` (both read-only to the caller)."""
    after, before = Machine("arm_sme", trace.config), Machine("arm_sme", trace.config)
    for machine in (after, before):
        machine.load_init(machine.assemble("\n".join(trace.program)), trace.init)
    while not after.finished:
        instruction = after.current_instruction()
        record = after.step()
        yield instruction, before, after, record
        before.step()


def assert_register_accounts_or_none(instruction, workings) -> None:
    """A step of the kernels' loop code: the scalar and predicate writers have accounts (held to the machine in
    test_workings_registers.py) whose Checks hold; any other form has none."""
    if any(pattern.match(instruction.form.id) for pattern, _ in REGISTER_ACCOUNTS):
        assert workings and all(final_check(w).equal for w in workings), instruction.text
    else:
        assert workings == [], instruction.text


def final_check(working: ElementWorking) -> Check:
    assert isinstance(working.blocks[-1], Check), working.title
    return working.blocks[-1]


def value_of(working: ElementWorking) -> int:
    return int(final_check(working).explained.split()[0], 16)


def listed_products(working: ElementWorking) -> list[tuple[tuple[int, int], tuple[int, int], str]]:
    """((Zn register, lane), (Zm register, lane), product text) of each row of the working's product table."""
    table = next(b for b in working.blocks if isinstance(b, Table) and "product" in b.columns)
    zn, zm, product = (table.columns.index(name) for name in ("Zn lane", "Zm lane", "product"))
    rows = []
    for row in table.rows:
        (rn, _, kn), (rm, _, km) = LANE.match(str(row[zn])).groups(), LANE.match(str(row[zm])).groups()
        rows.append(((int(rn), int(kn)), (int(rm), int(km)), str(row[product])))
    return rows


def changed_offsets(before, after, size: int) -> set[int]:
    old, new = before.state.za.reshape(-1), after.state.za.reshape(-1)
    return {int(at) // size * size for at in np.flatnonzero(old != new)}


def check_integer_working(working, before, zn_type, zm_type, predicates=None):
    """Every listed product equals numpy's product of the two lanes (read from ``before``), an inactive pair
    being one whose predicate bit is clear."""
    for (rn, kn), (rm, km), text in listed_products(working):
        a = np.int64(before.state.z[rn].view(zn_type)[kn])
        b = np.int64(before.state.z[rm].view(zm_type)[km])
        if predicates is not None:
            pn, pm = predicates
            bits = np.dtype(zn_type).itemsize
            active = all(np.unpackbits(before.state.p[p], bitorder="little")[k * bits]
                         for p, k in ((pn, kn), (pm, km)))
            if not active:
                assert text == "inactive"
                continue
        assert int(text) == int(a * b), (working.title, rn, kn, rm, km)


# ---- SMOPA: recorded on QEMU ------------------------------------------------------------------------


def workings_of_one_instruction(config: dict, text: str, **state):
    """The workings of the one instruction ``text`` run from ``state`` (Machine.load's keywords), and the two
    machines they were read from: one left before it, one after it."""
    before, after = Machine("arm_sme", config), Machine("arm_sme", config)
    for machine in (before, after):
        machine.load(machine.assemble(text), **state)
    instruction = after.current_instruction()
    after.step()
    assert after.fault is None
    return ISA.element_workings(instruction, before, after), before, after

def test_smopa_gemm_workings_match_numpy_and_qemu():
    trace = read_trace(EXAMPLES / "smopa_gemm.trace.json")
    # the program stores ZA0.S row by row to C (x2) and SMSTOP then turns ZA off: QEMU's C is the tile
    (c_address, c_bytes, *_), = [region for region in trace.expect["memory"] if region[0] == trace.init.regs["x2"]]
    qemu_c = np.frombuffer(c_bytes, dtype=np.uint32)
    last = None
    smopas = 0
    for instruction, before, after, _ in lockstep(trace):
        workings = ISA.element_workings(instruction, before, after)
        if not instruction.text.startswith("smopa"):
            if not instruction.text.startswith(MOVES):  # the data movements: test_data_movements_... below
                assert_register_accounts_or_none(instruction, workings)
            continue
        smopas += 1
        svlb = before.state.svlb
        dim = svlb // 4
        assert len(workings) == dim * dim
        assert {w.offset for w in workings} >= changed_offsets(before, after, 4)
        zn = before.state.z[0].view(np.int8).astype(np.int64).reshape(dim, 4)
        zm = before.state.z[1].view(np.int8).astype(np.int64).reshape(dim, 4)
        old = before.state.za.view(np.uint32).astype(np.int64).reshape(-1)
        for w in workings:
            assert (w.location, w.size) == ("za", 4)
            assert final_check(w).equal, final_check(w)
            vector, col = divmod(w.offset, svlb)
            row = vector // 4  # ZA0.S row `row` is ZA vector 4 * row
            assert vector % 4 == 0
            assert value_of(w) == (old[w.offset // 4] + int(zn[row] @ zm[col // 4])) % 2 ** 32
            assert int(final_check(w).machine, 16) == int(after.state.za.view(np.uint32).reshape(-1)[w.offset // 4])
            check_integer_working(w, before, np.int8, np.int8, predicates=(0, 0))
        last = workings
    assert smopas == 8
    assert len(qemu_c) == len(last) == dim * dim
    for w in last:  # the last accumulation leaves ZA0.S as QEMU stored it: C[row][col]
        vector, byte = divmod(w.offset, svlb)
        assert value_of(w) == int(qemu_c[vector // 4 * dim + byte // 4]), w.title


# ---- UDOT VGx4: numpy's int64 GEMM ---------------------------------------------------------------------

def test_udot_gemm_workings_match_numpy_and_the_stored_c():
    trace = read_trace(EXAMPLES / "udot_gemm.trace.json")
    ((c_address, c_bytes, *_),) = trace.expect["memory"]
    latest: dict[int, int] = {}  # ZA byte offset -> the value the latest UDOT's working gave it
    udots = stores = 0
    for instruction, before, after, record in lockstep(trace):
        workings = ISA.element_workings(instruction, before, after)
        svlb = before.state.svlb
        if instruction.text.startswith("str za"):
            # the working values of the ZA vector stored are what C holds at the end
            vec = (before.state.x[12] & 0xFFFFFFFF) % svlb
            address = before.state.x[14]
            for e in range(svlb // 4):
                at = address - c_address + 4 * e
                assert latest[vec * svlb + 4 * e] == int.from_bytes(c_bytes[at:at + 4], "little")
            stores += 1
        if not instruction.text.startswith("udot"):
            if not instruction.text.startswith(MOVES):
                assert_register_accounts_or_none(instruction, workings)
            continue
        udots += 1
        vstride = svlb // 4
        first = (before.state.x[8] & 0xFFFFFFFF) % vstride
        vectors = [first + r * vstride for r in range(4)]
        assert sorted({w.offset // svlb for w in workings}) == vectors
        assert len(workings) == 4 * svlb // 4
        assert {w.offset for w in workings} >= changed_offsets(before, after, 4)
        zm = before.state.z[4].astype(np.int64).reshape(-1, 4)
        old = before.state.za.view(np.uint32).astype(np.int64).reshape(-1)
        for w in workings:
            assert (w.location, w.size) == ("za", 4)
            assert final_check(w).equal, final_check(w)
            vector, byte = divmod(w.offset, svlb)
            r, e = vectors.index(vector), byte // 4
            zn = before.state.z[r].astype(np.int64).reshape(-1, 4)
            assert value_of(w) == (old[w.offset // 4] + int(zn[e] @ zm[e])) % 2 ** 32
            check_integer_working(w, before, np.uint8, np.uint8)
            latest[w.offset] = value_of(w)
    assert udots == 36 and stores == 4 * 3 * 2


# ---- FMOPA and BFMOPA: exact data, numpy float32 -----------------------------------------------------

def _exact_floats(rng, count):
    """Small multiples of 1/4: every product and sum of a few of them is exact in fp32, fp16 and bf16."""
    return np.array([rng.randrange(-32, 33) / 4 for _ in range(count)], dtype=np.float32)


@pytest.mark.parametrize("text", ["fmopa za1.s, p2/m, p3/m, z4.s, z5.s", "fmops za1.s, p2/m, p3/m, z4.s, z5.s",
                                  "bfmopa za2.s, p2/m, p3/m, z4.h, z5.h", "fmopa za3.s, p2/m, p3/m, z4.h, z5.h"])
def test_fp_outer_product_workings_match_numpy(text):
    rng = random.Random(31)
    svl = 256
    svlb, dim = svl // 8, svl // 32
    wide = text.endswith(".s")
    per = 1 if wide else 2
    zn, zm = _exact_floats(rng, dim * per), _exact_floats(rng, dim * per)
    za = _exact_floats(rng, svlb * svlb // 4)
    if wide:
        zn_bytes, zm_bytes = zn.tobytes(), zm.tobytes()
    elif text.startswith("bf"):  # bfloat16: the upper half of the fp32 (exact for these values)
        zn_bytes, zm_bytes = ((x.view(np.uint32) >> 16).astype(np.uint16).tobytes() for x in (zn, zm))
    else:
        zn_bytes, zm_bytes = zn.astype(np.float16).tobytes(), zm.astype(np.float16).tobytes()
    pn = [rng.randrange(2) for _ in range(dim * per)]
    pm = [rng.randrange(2) for _ in range(dim * per)]
    bits = 4 if wide else 2  # a predicate bit per byte: element k's bit is k * its bytes

    def predicate(active):
        image = np.zeros(svlb, dtype=np.uint8)
        for k, on in enumerate(active):
            image[k * bits] = on
        return np.packbits(image, bitorder="little").tobytes()

    machine_pair = []
    for _ in range(2):
        machine = Machine("arm_sme", {"svl": svl})
        program = machine.assemble(text)
        machine.load(program, regs={"svcr": 3},
                     arrays={"z4": zn_bytes, "z5": zm_bytes, "za": za.tobytes(), "p2": predicate(pn),
                             "p3": predicate(pm)})
        machine_pair.append(machine)
    before, after = machine_pair
    instruction = after.current_instruction()
    after.step()
    workings = ISA.element_workings(instruction, before, after)
    da = int(text.split("za")[1][0])
    assert len(workings) == dim * dim
    sign = -1 if "mops" in text else 1
    za_rows = za.reshape(svlb, dim)
    for w in workings:
        assert final_check(w).equal, final_check(w)
        vector, byte = divmod(w.offset, svlb)
        row, col = (vector - da) // 4, byte // 4
        total = np.float32(za_rows[vector][col])
        pairs = [(row * per + i, col * per + i) for i in range(per)]
        if any(pn[a] and pm[b] for a, b in pairs):
            total = np.float32(total + sum(np.float32(zn[a] * pn[a]) * np.float32(zm[b] * pm[b]) * sign
                                           for a, b in pairs))
        explained = int(final_check(w).explained.split()[0], 16)
        assert explained == int(np.float32(total).view(np.uint32)), (w.title, total)


# ---- every covered form, and what is not covered ----------------------------------------------------

COVERED = [form for form in FORMS if form.group in COVERED_GROUPS]


@pytest.mark.parametrize("form", COVERED, ids=[form.id for form in COVERED])
def test_every_covered_form_accounts_for_every_element_it_writes(form):
    """consistency: explain's per-element reading against the machine (both isasim; QEMU holds the machine),
    at SVL 128 on random state: one working per element of the vector group or tile, at distinct offsets,
    covering every byte the step changed, each ending with an equal Check."""
    rng = random.Random(form.id)
    svlb = 16
    arrays = {f"z{n}": bytes(rng.randrange(256) for _ in range(svlb)) for n in range(32)}
    arrays["za"] = bytes(rng.randrange(256) for _ in range(svlb * svlb))
    arrays.update({f"p{n}": bytes(rng.randrange(256) for _ in range(svlb // 8)) for n in range(16)})
    regs = {f"x{n}": rng.randrange(1 << 64) for n in range(31)}
    regs["svcr"] = 3
    workings, before, after = workings_of_one_instruction({"svl": 128, "features": ["SME2", "SME_I16I64"]},
                                                          example_text(form), regs=regs, arrays=arrays)
    shape = form.extra["shape"]
    esize = getattr(shape, "esize", 32)
    size = esize // 8
    per_vector = svlb // size
    expected = getattr(shape, "nreg", None) and shape.nreg * per_vector or per_vector * per_vector
    assert len(workings) == expected
    assert len({w.offset for w in workings}) == expected
    assert all(w.location == "za" and w.size == size and w.offset % size == 0 for w in workings)
    assert {w.offset for w in workings} >= changed_offsets(before, after, size)
    for w in workings:
        check = final_check(w)
        assert check.equal, (w.title, check)
        data = after.state.za.reshape(-1)[w.offset:w.offset + size].tobytes()
        assert int(check.machine.split()[0], 16) == int.from_bytes(data, "little")


def test_other_instructions_and_faulted_steps_have_no_working():
    machine, behind = Machine("arm_sme", {"svl": 128}), Machine("arm_sme", {"svl": 128})
    text = "orr x0, x0, #1\nptrue p0.b\nsmopa za0.s, p0/m, p0/m, z0.b, z1.b"  # ORR has no account
    for m in (machine, behind):  # not streaming, ZA off: the SMOPA faults (UNDEFINED)
        m.load(m.assemble(text), regs={"svcr": 0, "x1": 0x1000}, memory=[(0x1000, bytes(64), True)])
    for _ in range(3):
        instruction = machine.current_instruction()
        machine.step()
        assert ISA.element_workings(instruction, behind, machine) == []
        if machine.finished:
            break
        behind.step()
    assert machine.fault is not None


# ---- the data movements: LD1B, LDR/STR ZA, ST1W of a ZA slice, ZERO; MOVA -------------------------------

def memory_of(trace, address: int) -> np.ndarray:
    """The init's bytes of the region starting at ``address`` (the outside truth the loads read)."""
    return np.frombuffer(next(data for start, data, *_ in trace.init.memory if start == address), dtype=np.uint8)


def expected_c(trace, address: int) -> bytes:
    return next(data for start, data, *_ in trace.expect["memory"] if start == address)


def element_values(workings) -> list[int]:
    for w in workings:
        assert final_check(w).equal, (w.title, final_check(w))
    return [value_of(w) for w in workings]


def machine_values(workings) -> list[int]:
    return [int(final_check(w).machine.split()[0], 16) for w in workings]


def test_data_movements_of_the_smopa_gemm_match_numpy_slices_and_qemu():
    """LD1B z0/z1 read row k of A and of B (64 bytes each at SVL 512, slices of the init's memory); ZERO {za}
    zeroes all 4096 bytes; ST1W of ZA0H.S[w12] writes row w12 of QEMU's C."""
    trace = read_trace(EXAMPLES / "smopa_gemm.trace.json")
    svlb = trace.config["svl"] // 8
    a = memory_of(trace, trace.init.regs["x0"]).reshape(-1, svlb)
    b = memory_of(trace, trace.init.regs["x1"]).reshape(-1, svlb)
    c_address = trace.init.regs["x2"]
    qemu_c = np.frombuffer(expected_c(trace, c_address), dtype="<u4").reshape(-1, svlb // 4)
    loads, stores, zeroes = {0: 0, 1: 0}, 0, 0
    for instruction, before, after, _ in lockstep(trace):
        workings = ISA.element_workings(instruction, before, after)
        if instruction.text.startswith("ld1b"):
            z = int(instruction.text.split("z")[1].split(".")[0])
            source = (a, b)[z][loads[z]]
            loads[z] += 1
            assert [(w.location, w.offset, w.size) for w in workings] == [(f"z{z}", e, 1) for e in range(svlb)]
            assert element_values(workings) == source.tolist() == machine_values(workings)
            assert machine_values(workings) == after.state.z[z].tolist()
        elif instruction.text.startswith("st1w"):
            row = stores
            stores += 1
            assert [(w.location, w.offset, w.size) for w in workings] == \
                [("memory", c_address + row * svlb + 4 * e, 4) for e in range(svlb // 4)]
            assert element_values(workings) == qemu_c[row].tolist() == machine_values(workings)
        elif instruction.text.startswith("zero"):
            zeroes += 1
            assert sorted((w.offset, w.size) for w in workings) == [(at, 1) for at in range(svlb * svlb)]
            assert set(element_values(workings)) == {0} and all(w.location == "za" for w in workings)
    assert loads == {0: 8, 1: 8} and stores == svlb // 4 and zeroes == 1


def test_data_movements_of_the_udot_gemm_match_numpy_slices_and_the_expected_c():
    """The program's loops (column block cb, row quad q, k group kg), as its source lays them out: LDR
    ZA[w12] reads row 4q + r of C's block cb from the init, LD1B z4 B's panel cb * groups + kg, z0-z3 A's
    rows (q * groups + kg) * 4 + r (each a slice of the init's memory); STR ZA writes the rows of the trace's
    expected C (numpy's GEMM)."""
    trace = read_trace(EXAMPLES / "udot_gemm.trace.json")
    svlb = trace.config["svl"] // 8
    regs = trace.init.regs
    a = memory_of(trace, regs["x0"]).reshape(-1, svlb)
    b = memory_of(trace, regs["x1"]).reshape(-1, svlb)
    stride, quads, blocks, groups = regs["x6"], regs["x3"], regs["x4"], regs["x5"]
    c_address = regs["x2"]
    c_init = memory_of(trace, c_address)
    c_final = np.frombuffer(expected_c(trace, c_address), dtype=np.uint8)
    plan = []  # (instruction, destination Z or ZA vector, source bytes; for a store the offset in C)
    for cb in range(blocks):
        for q in range(quads):
            rows = [(4 * q + r) * stride + cb * svlb for r in range(4)]
            plan += [("ldr za", r * svlb // 4, c_init[at:at + svlb]) for r, at in enumerate(rows)]
            for kg in range(groups):
                plan.append(("ld1b", 4, b[cb * groups + kg]))
                plan += [("ld1b", r, a[(q * groups + kg) * 4 + r]) for r in range(4)]
            plan += [("str za", r * svlb // 4, rows[r]) for r in range(4)]
    done = 0
    for instruction, before, after, _ in lockstep(trace):
        workings = ISA.element_workings(instruction, before, after)
        if not instruction.text.startswith(("ld1b", "ldr za", "str za")):
            continue
        kind, where, source = plan[done]
        done += 1
        assert instruction.text.startswith(kind), (done, instruction.text)
        assert len(workings) == svlb and all(w.size == 1 for w in workings)
        if kind == "ld1b":
            assert [(w.location, w.offset) for w in workings] == [(f"z{where}", e) for e in range(svlb)]
            assert element_values(workings) == source.tolist() == after.state.z[where].tolist()
        elif kind == "ldr za":
            assert [(w.location, w.offset) for w in workings] == [("za", where * svlb + e) for e in range(svlb)]
            assert element_values(workings) == source.tolist() == after.state.za[where].tolist()
        else:
            assert [(w.location, w.offset) for w in workings] == \
                [("memory", c_address + source + e) for e in range(svlb)]
            assert element_values(workings) == c_final[source:source + svlb].tolist() == machine_values(workings)
    assert done == len(plan) == blocks * quads * (8 + 5 * groups)


@pytest.mark.parametrize("text", ["mova z3.s, p1/m, za2v.s[w13, 1]", "mova za1h.d[w12, 1], p1/m, z5.d",
                                  "ld1w {za3v.s[w14, 0]}, p1/z, [x1, x2, lsl #2]",
                                  "ld1h {z6.s}, p1/z, [x1, #1, mul vl]", "st1b {z7.h}, p1, [x1, x2]"])
def test_predicated_moves_merge_zero_or_skip_inactive_elements(text):
    """Slices and predicates worked out here with numpy from the state before the step: an active element
    moves, an inactive one keeps its bytes (MOVA), reads as zero (a load) or writes nothing (a store)."""
    rng = np.random.default_rng(31)
    svl, svlb = 256, 32
    arrays = {f"z{n}": rng.integers(0, 256, svlb, dtype=np.uint8).tobytes() for n in range(8)}
    arrays["za"] = rng.integers(0, 256, svlb * svlb, dtype=np.uint8).tobytes()
    arrays["p1"] = rng.integers(0, 256, svlb // 8, dtype=np.uint8).tobytes()
    memory = rng.integers(0, 256, 4096, dtype=np.uint8)
    regs = {"svcr": 3, "x1": 0x10000, "x2": 5, "x12": 6, "x13": 9, "x14": 3}
    workings, before, after = workings_of_one_instruction({"svl": svl}, text, regs=regs, arrays=arrays,
                                                          memory=[(0x10000, memory.tobytes(), True)])
    za = np.frombuffer(arrays["za"], dtype=np.uint8).reshape(svlb, svlb)
    bits = np.unpackbits(np.frombuffer(arrays["p1"], dtype=np.uint8), bitorder="little")
    z = {n: np.frombuffer(arrays[f"z{n}"], dtype=np.uint8) for n in range(8)}
    if text.startswith("mova z3.s"):  # vertical slice (9 + 1) % 8 = 2 of ZA2.S: bytes 8-11 of vectors 2, 6, ...
        dest = [za[2 + 4 * e, 8:12] if bits[4 * e] else z[3][4 * e:4 * e + 4] for e in range(8)]
        where = [("z3", 4 * e) for e in range(8)]
    elif text.startswith("mova za1h"):  # horizontal slice (6 + 1) % 4 = 3 of ZA1.D: ZA vector 1 + 3 * 8
        dest = [z[5][8 * e:8 * e + 8] if bits[8 * e] else za[25, 8 * e:8 * e + 8] for e in range(4)]
        where = [("za", 25 * svlb + 8 * e) for e in range(4)]
    elif text.startswith("ld1w"):  # vertical slice 3 of ZA3.S (element e in vector 3 + 4e) from x1 + 5 * 4
        dest = [memory[20 + 4 * e:24 + 4 * e] * bits[4 * e] for e in range(8)]
        where = [("za", (3 + 4 * e) * svlb + 12) for e in range(8)]
    elif text.startswith("ld1h"):  # halfwords zero-extended to words, from x1 + 1 vector's 8 halfwords
        dest = [np.concatenate([memory[16 + 2 * e:18 + 2 * e], [0, 0]]) * bits[4 * e] for e in range(8)]
        where = [("z6", 4 * e) for e in range(8)]
    else:  # the low byte of each active halfword to x1 + 5 + e
        active = [e for e in range(16) if bits[2 * e]]
        dest = [z[7][2 * e:2 * e + 1] for e in active]
        where = [("memory", 0x10000 + 5 + e) for e in active]
    assert [(w.location, w.offset) for w in workings] == where
    assert element_values(workings) == [int.from_bytes(bytes(np.asarray(d, dtype=np.uint8)), "little")
                                        for d in dest] == machine_values(workings)

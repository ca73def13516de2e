"""arm_sme's click-for-working (``ISA.element_workings``): the account of each ZA element a dot or outer product
wrote, built by explain's own checks_za functions from the live state before and after the step.

The outside truth: examples/arm_sme/smopa_gemm.trace.json was recorded on QEMU (its expect holds QEMU's final
ZA and C), udot_gemm.trace.json's expected C is numpy's int64 GEMM; every product a working lists and every
element's value are recomputed here with numpy from the step's own Z, P and ZA; the floating-point outer
products use exactly representable data, so numpy's float32 arithmetic is exact and the reference.
"""

from __future__ import annotations

import random
import re
from pathlib import Path

import numpy as np
import pytest

from isasim.arm_sme import ISA
from isasim.arm_sme.explain import example_text
from isasim.arm_sme.forms import FORMS
from isasim.core.explain.model import Check, ElementWorking, Table
from isasim.core.machine import Machine
from isasim.core.trace import read_trace

EXAMPLES = Path(__file__).resolve().parents[3] / "examples" / "arm_sme"
LANE = re.compile(r"z(\d+)\.([bhsd])\[(\d+)\]")
COVERED_GROUPS = ("dot", "outer", "fp_dot", "fp_outer")


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
            assert workings == [], instruction.text
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
            assert workings == [], instruction.text
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
    machines = []
    for _ in range(2):
        machine = Machine("arm_sme", {"svl": 128, "features": ["SME2", "SME_I16I64"]})
        machine.load(machine.assemble(example_text(form)), regs=regs, arrays=arrays)
        machines.append(machine)
    before, after = machines
    instruction = after.current_instruction()
    after.step()
    assert after.fault is None
    workings = ISA.element_workings(instruction, before, after)
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
    text = "add x0, x0, #1\nld1b {z0.b}, p0/z, [x1]\nsmopa za0.s, p0/m, p0/m, z0.b, z1.b"
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

"""The infrastructure forms executed by isasim and by QEMU (>= 10.1), compared (issue 11).

Every form of the groups mode, za, za_move, za_memory, z_memory, predicate and count at every SVL:
random encodings (horizontal and vertical slices in turn), random X, NZCV, Z, P (random
bits, so random predicates), ZA and ZT0, and a writable memory block that every address lands in
(the base register is set so that base + offset points into it; an index register holds a small
signed index).  Slice and vector-select registers hold edge values (0, dim - 1, dim, 0x7fffffff,
0xffffffff, junk in the upper 32 bits); WHILELT/WHILELO operands are edge values and pairs a few
elements apart.  SMSTART/SMSTOP run as sequences of one to three from every start mode.  A share of
cases start with a mode off, so the UNDEFINED checks are compared too.  The non-streaming SVE
configuration ("SVE" feature, QEMU without sve=off) is compared separately.

QEMU is an oracle, not the architecture: where it differs from the Arm ARM in a documented way
(docs/known-oracle-deviations.md) the case is counted as a known deviation, with its reason,
only if it matches the documented pattern exactly; any other difference fails.

What the harness cannot see is made equal, never hidden in the comparison: the harness enters
non-streaming mode by SMSTOP SM (zeroing Z and P), so a case starting outside streaming mode starts
with zero Z and P; it dumps a state left with a
mode off after SMSTART, which differential.run_isasim runs on isasim too.  X30 is never an operand:
it holds the snippet's return address on QEMU.  docs/known-oracle-deviations.md lists all of this.
"""

from __future__ import annotations

import random
import re
from functools import partial

import numpy as np
import pytest

from isasim.arm_sme.explain import checks_sve
from isasim.arm_sme import ISA
from isasim.arm_sme.forms import FORMS
from isasim.arm_sme.semantics.za_tiles import slice_rows
from isasim.core.errors import IsasimError

from differential import compare_with_qemu, first_difference, random_state, run_isasim

pytestmark = [pytest.mark.needs_qemu, pytest.mark.needs_clang]

SVLS = (128, 256, 512, 1024, 2048)
SEED = 20261211
GROUPS = ("mode", "za", "za_move", "za_memory", "z_memory", "predicate", "count")
# (issue 28's SVE/SME2 forms in these groups have their own QEMU test: tests/arm_sme/semantics/test_sve_forms_vs_qemu.py)
FORMS_UNDER_TEST = [form for form in FORMS if form.group in GROUPS and not checks_sve.applies(form)]
CASES_PER_FORM = 3  # per SVL, in streaming mode with ZA on
MEMORY_BYTES = 16384  # four pages: room for a 256-byte access at any offset, and page-crossing accesses
MASK64 = (1 << 64) - 1
ESIZE = {"b": 8, "h": 16, "s": 32, "d": 64, "q": 128}
PAGE = 4096


def edge_values(dim: int) -> list[int]:
    """Values for a register whose low 32 bits select one of ``dim`` slices or vectors."""
    return [0, dim - 1, dim, 0x7FFFFFFF, 0xFFFFFFFF, 0xDEADBEEF_00000000 | (dim + 1)]


def form_esize(form) -> int:
    """The element size of a tile-slice form (MOVA_z_za_s, LD1W_za_s -> 32)."""
    return ESIZE[form.id.rsplit("_", 1)[-1]]


def memory_size(form) -> int:
    """The bytes one element of memory takes for a load or store form (LD1H -> 2)."""
    letter = form.mnemonic[-1]
    return {"b": 1, "h": 2, "w": 4, "d": 8, "q": 16}[letter]


# ---- putting the registers where the instruction's operands look ------------------------------------

def set_x(state: dict, n: int, value: int) -> None:
    if n == 31:
        state["sp"] = value & MASK64
    else:
        state["x"][n] = value & MASK64


def point_into_memory(rng, state, svl: int, base: int, offset: int, index: int | None = None,
                      scale: int = 1, straddle: bool = False) -> None:
    """Set the base register (and the index register, if any) so that base + offset + X[index] * scale
    is an address inside the memory block with a whole vector's worth of room after it, or (straddle)
    less than a vector before the block's end, so that the last elements lie on an unmapped page."""
    span, end = svl // 8 + 64, state["memory_base"] + len(state["memory"])
    if straddle:
        target = end - rng.randrange(1, svl // 8 + 1)
    else:
        target = rng.randrange(state["memory_base"] + span, end - 2 * span)
    if index not in (None, 31) and index == base:  # [x5, x5, lsl #2]: X * (1 + scale) must be the target
        target -= target % (1 + scale)
        set_x(state, base, (target - offset) // (1 + scale))
        return
    index_bytes = 0
    if index is not None and index != 31:
        elements = rng.randrange(-(svl // 64), svl // 64 + 1)
        set_x(state, index, elements)
        index_bytes = elements * scale
    address = target - offset - index_bytes
    if base == 31:
        address -= address % 16  # SP stays 16-byte aligned, as the AAPCS (and Linux's SA0) wants
    set_x(state, base, address)


def prepare(rng, form, text: str, state: dict, svl: int, straddle: bool = False) -> None:
    """Registers that make this instruction's operands interesting and its addresses valid (or, with
    straddle, running off the end of the memory block)."""
    point = partial(point_into_memory, straddle=straddle)
    operands = ISA.assemble(text).instructions[0].operands
    svlb = svl // 8
    group = form.group
    if group == "za" and form.id != "ZERO_tiles":  # LDR/STR ZA[Wv, off], [Xn, #off, MUL VL]
        (v, offset), (n, _) = operands
        set_x(state, v, rng.choice(edge_values(svlb)))
        point(rng, state, svl, n, offset * svlb)
    elif group == "za_move" and "vgx" in form.id:
        v, _offset = operands[1] if form.id.startswith("MOVA_z_") else operands[0]
        nreg = 4 if form.id.endswith("vgx4") else 2
        set_x(state, v, rng.choice(edge_values(svlb // nreg)))
    elif group == "za_move":
        za_slice = operands[2] if form.id.startswith("MOVA_z_") else operands[0]
        set_x(state, za_slice[2], rng.choice(edge_values(svl // form_esize(form))))
    elif group == "za_memory":
        (_tile, _vertical, s, _offset), _g, (n, m) = operands
        set_x(state, s, rng.choice(edge_values(svl // form_esize(form))))
        point(rng, state, svl, n, 0, m, form_esize(form) // 8)
    elif group == "z_memory" and form.id[:3] in ("LDR", "STR"):
        _t, (n, imm) = operands
        point(rng, state, svl, n, imm * (svlb if form.id.endswith("_z") else svlb // 8))
    elif group == "z_memory":
        _t, _g, (n, k) = operands
        msize, esize = memory_size(form), ESIZE[form.id.split("_")[2]]
        if form.id.endswith("_imm"):  # [Xn, #imm, MUL VL]: imm vectors' worth of memory elements
            point(rng, state, svl, n, k * (svl // esize) * msize)
        else:
            point(rng, state, svl, n, 0, k, msize)
    elif group == "predicate" and form.mnemonic.startswith("while"):
        _d, n, m = operands
        width = 32 if form.id.endswith("_w") else 64
        elements = svl // ESIZE[form.id.split("_")[1]]
        edges = [0, 1, (1 << width) - 1, (1 << (width - 1)) - 1, 1 << (width - 1), rng.getrandbits(width)]
        a = rng.choice(edges)
        b = rng.choice(edges) if rng.random() < 0.4 else a + rng.randrange(-2, elements + 3)
        junk = (lambda: rng.getrandbits(32) << 32) if width == 32 else (lambda: 0)
        set_x(state, n, (a & ((1 << width) - 1)) | junk())
        if m != n:
            set_x(state, m, (b & ((1 << width) - 1)) | junk())
    elif group == "count" and form.id.startswith("ADD"):
        _d, n, _imm = operands
        if n == 31 and rng.random() < 0.5:
            set_x(state, n, rng.getrandbits(64) & ~15)


def random_text(rng, form, **fixed) -> str | None:
    """The text of a random valid encoding of ``form`` with these fields fixed, or None if 50 tries give
    none.  Never naming X30 or W30: the harness's snippet runs with X30 holding its return address, so
    QEMU reads X30 as that address whatever the state says."""
    for _ in range(50):
        values = {name: rng.randrange(1 << box.width) for name, box in form.encoding.fields.items()} | fixed
        try:
            instruction = ISA.disassemble(form.encoding.pack(values).to_bytes(4, "little")).instructions[0]
        except IsasimError:
            continue  # a reserved field value (the decoder refuses it)
        if instruction.form is form and instruction.invalid is None \
                and not re.search(r"\b[xw]30\b", instruction.text):
            return instruction.text
    return None


def random_streaming_case(rng, form, svl: int, **fixed):
    """(label, text, state) for one random encoding of a non-mode form, streaming mode and ZA on."""
    text = random_text(rng, form, **fixed)
    if text is None:
        return None
    state = random_state(rng, svl, memory_bytes=MEMORY_BYTES)
    prepare(rng, form, text, state, svl)
    return form.id, text, state


MODE_FORMS = [form for form in FORMS_UNDER_TEST if form.group == "mode"]


def mode_case(rng, svl: int, texts: list[str], svcr: int):
    """SMSTART/SMSTOP lines run from the modes svcr names, with random Z, P, ZA and ZT0."""
    state = random_state(rng, svl, svcr=svcr, memory_bytes=PAGE)
    if not svcr & 1:  # the harness enters non-streaming mode by SMSTOP SM, which zeroes Z and P
        state["z"] = [bytes(svl // 8)] * 32
        state["p"] = [bytes(svl // 64)] * 16
    return "+".join(t.upper().replace(" ", "_") for t in texts), "\n".join(texts), state


def mode_cases(rng, svl: int) -> list:
    """Each of the six mode forms from each of the four start modes (so every redundant SMSTART and
    SMSTOP too), and random runs of two or three."""
    cases = [mode_case(rng, svl, [form.fixed_text], svcr) for form in MODE_FORMS for svcr in range(4)]
    for _ in range(12):
        texts = [rng.choice(MODE_FORMS).fixed_text for _ in range(rng.randrange(2, 4))]
        cases.append(mode_case(rng, svl, texts, rng.randrange(4)))
    return cases


# ---- known oracle deviations ---------------------------------------------------------------------

VERTICAL_LOAD_UNZEROED = ("LD1* to a vertical ZA tile slice: QEMU (sme_ld1) leaves the inactive elements after "
                          "the last active one of the first page unzeroed; the Arm ARM zeroes every inactive element")


def _instruction(text: str):
    instructions = ISA.assemble(text).instructions
    return instructions[0] if len(instructions) == 1 else None


def known_deviation(label: str, text: str, state: dict, ours: dict, theirs: dict) -> str | None:
    """The documented QEMU deviation this difference is exactly an instance of, or None."""
    instruction = _instruction(text)
    if instruction is None or "fault" in ours or "fault" in theirs:
        return None
    form = instruction.form
    if not (form.group == "za_memory" and form.mnemonic.startswith("ld1")):
        return None
    (tile, vertical, s, offset), g, (n, m) = instruction.operands
    if not vertical:
        return None
    svlb = len(state["z"][0])
    svl, esize = svlb * 8, form_esize(form)
    if first_difference({**ours, "za": theirs["za"]}, theirs, svl) is not None:
        return None  # something besides ZA differs
    ebytes, dim = esize // 8, svl // esize
    x = state["x"] + [state["sp"]]
    index = ((x[s] & 0xFFFFFFFF) + offset) % dim
    active = np.unpackbits(np.frombuffer(state["p"][g], dtype=np.uint8), bitorder="little")[::ebytes].astype(bool)
    if not active.any():
        return None
    def page(e: int) -> int:  # the page element e's address is in: X[n|SP] + (X[m] + e) * ebytes
        return ((x[n] + ((x[m] if m != 31 else 0) + e) * ebytes) & MASK64) // PAGE

    first_page = page(int(np.flatnonzero(active)[0]))
    on_first_page = [page(e) == first_page for e in range(dim)]
    last_on_first_page = max(e for e in np.flatnonzero(active) if on_first_page[e])
    before = np.frombuffer(state["za"], dtype=np.uint8).reshape(svlb, svlb)
    mine = np.frombuffer(ours["za"], dtype=np.uint8).reshape(svlb, svlb)
    qemus = np.frombuffer(theirs["za"], dtype=np.uint8).reshape(svlb, svlb)
    allowed = np.zeros((svlb, svlb), dtype=bool)
    for row, start, stop, element in slice_rows(tile, esize, True, index, svlb):
        if not active[element] and element > last_on_first_page:
            allowed[row, start:stop] = True
    differ = mine != qemus
    if differ.any() and not (differ & ~allowed).any() and (mine[differ] == 0).all() \
            and (qemus[differ] == before[differ]).all():
        return VERTICAL_LOAD_UNZEROED
    return None


def assert_agrees(comparison, svl: int, minimum_changed: float = 0.8) -> None:
    assert not comparison.mismatches, comparison.report(svl)
    assert comparison.changed >= minimum_changed * comparison.compared, \
        f"only {comparison.changed} of {comparison.compared} cases changed anything on QEMU: nothing was compared"
    print(f"SVL {svl}: {comparison.compared} cases, 0 mismatches, known deviations: {comparison.deviations or 'none'}")


# ---- the tests -----------------------------------------------------------------------------------------

@pytest.mark.parametrize("svl", SVLS)
def test_every_infrastructure_form_agrees_with_qemu(svl):
    rng = random.Random(SEED + svl)
    cases = mode_cases(rng, svl)
    for form in FORMS_UNDER_TEST:
        if form.group == "mode":
            continue
        made = 0
        while made < CASES_PER_FORM:  # tile slices: horizontal and vertical in turn
            case = random_streaming_case(rng, form, svl, **({"V": made % 2} if "V" in form.encoding.fields else {}))
            assert case is not None, f"no valid random encoding of {form.id}"
            cases.append(case)
            made += 1
    assert {label for label, _, _ in cases} >= {f.id for f in FORMS_UNDER_TEST if f.group != "mode"}
    comparison = compare_with_qemu(cases, svl, deviations=known_deviation)
    assert_agrees(comparison, svl)


@pytest.mark.parametrize("svl", (128, 2048))
def test_modes_off_are_undefined_as_on_qemu(svl):
    """Each non-mode form once from a random start mode with SM or ZA off: both must fault at the same
    instruction (UNDEFINED), or both run (LDR ZA with only ZA on, RDSVL outside streaming mode...)."""
    rng = random.Random(SEED + 7 * svl)
    cases = []
    for form in FORMS_UNDER_TEST:
        if form.group == "mode":
            continue
        label, text, state = random_streaming_case(rng, form, svl)
        state["svcr"] = rng.choice([0, 1, 2])
        if not state["svcr"] & 1:
            state["z"], state["p"] = [bytes(svl // 8)] * 32, [bytes(svl // 64)] * 16
        if not state["svcr"] & 2:
            state["za"], state["zt0"] = bytes(len(state["za"])), bytes(64)
        cases.append((label, text, state))
    comparison = compare_with_qemu(cases, svl, deviations=known_deviation)
    assert not comparison.mismatches, comparison.report(svl)


SPLIT_ELEMENT_ABORT = ("LD1*/ST1* of a ZA tile slice with an active element, after the first, split across "
                       "the end of mapped memory: QEMU aborts (sme_ld1/sme_st1: code should not be reached) where the "
                       "Arm ARM takes a translation fault")


def active_element_split_at_end(form, text: str, state: dict, svl: int) -> bool:
    """Whether this is a ZA tile-slice load or store with an active element, not the first active one,
    whose bytes run from mapped memory across its end (docs/known-oracle-deviations.md, entry 2)."""
    if form.group != "za_memory":
        return False
    (_tile, _vertical, _s, _offset), g, (n, m) = ISA.assemble(text).instructions[0].operands
    ebytes = form_esize(form) // 8
    x = state["x"] + [state["sp"]]
    start = (x[n] + (x[m] if m != 31 else 0) * ebytes) & MASK64
    end = state["memory_base"] + len(state["memory"])
    active = np.flatnonzero(np.unpackbits(np.frombuffer(state["p"][g], dtype=np.uint8),
                                          bitorder="little")[::ebytes])
    return any(start + e * ebytes < end < start + (e + 1) * ebytes for e in active[1:])


@pytest.mark.parametrize("svl", (128, 512))
def test_accesses_running_off_mapped_memory_fault_as_on_qemu(svl):
    """Every load and store form with its access running off the end of a one-page block: an active
    element on the unmapped page is a translation fault at that instruction on both; inactive ones
    there are not accessed (the Arm ARM), so a case whose active elements all fit runs, and agrees."""
    from isasim.arm_sme.oracle.qemu import OracleError

    rng = random.Random(SEED + 11 * svl)
    cases, splits = [], []
    for form in [f for f in FORMS_UNDER_TEST if f.group in ("za_memory", "z_memory")
                 or f.id in ("LDR_za", "STR_za")]:
        for _ in range(3):
            text = random_streaming_case(rng, form, svl)[1]
            state = random_state(rng, svl, memory_bytes=PAGE)
            prepare(rng, form, text, state, svl, straddle=True)
            (splits if active_element_split_at_end(form, text, state, svl) else cases).append((form.id, text, state))
    comparison = compare_with_qemu(cases, svl, deviations=known_deviation)
    assert not comparison.mismatches, comparison.report(svl)
    faults = sum("fault" in run_isasim(text, state, svl) for _, text, state in cases)
    assert 0.2 * len(cases) < faults < len(cases), f"{faults} of {len(cases)} cases fault: the test has lost its edge"
    aborted = 0
    for case in splits:  # one QEMU run each: an abort ends the run
        try:
            alone = compare_with_qemu([case], svl, deviations=known_deviation)
        except OracleError as error:
            assert re.search(r"sme_(ld|st)1: code should not be reached", str(error)), (case[1], str(error))
            assert run_isasim(case[1], case[2], svl) == {"fault": ("TRANSLATION", 0)}, case[1]
            aborted += 1
            continue
        assert not alone.mismatches, alone.report(svl)  # QEMU no longer aborts: compared like any other
    print(f"SVL {svl}: {len(cases)} cases, {faults} faulting, 0 mismatches, {comparison.deviations or ''}; "
          f"known deviation {SPLIT_ELEMENT_ABORT!r}: {aborted} of {len(splits)}")


@pytest.mark.parametrize("svl", (128, 512))
def test_whole_vector_accesses_running_off_mapped_memory_fault_as_on_qemu(svl):
    """The same loads and stores with every predicate all true, the case isasim reads or writes in one
    access (semantics/vector_memory.py _read_active, _write_active): past the end of the block each faults as on QEMU, a
    faulting store writes nothing, and those that fit agree byte for byte."""
    rng = random.Random(SEED + 13 * svl)
    cases = []
    for form in [f for f in FORMS_UNDER_TEST if f.group in ("za_memory", "z_memory")]:
        for _ in range(3):
            text = random_streaming_case(rng, form, svl)[1]
            state = random_state(rng, svl, memory_bytes=PAGE)
            prepare(rng, form, text, state, svl, straddle=True)
            state["p"] = [b"\xff" * (svl // 64)] * 16
            if not active_element_split_at_end(form, text, state, svl):  # QEMU aborts there (deviation 2)
                cases.append((form.id, text, state))
    comparison = compare_with_qemu(cases, svl, deviations=known_deviation)
    assert not comparison.mismatches, comparison.report(svl)
    faults = sum("fault" in run_isasim(text, state, svl) for _, text, state in cases)
    assert 0.2 * len(cases) < faults < len(cases), f"{faults} of {len(cases)} cases fault: the test has lost its edge"


# ---- the "SVE" configuration: SVE forms outside streaming mode --------------------------------------

SVE_FEATURES = ["SME2", "SME_I16I64", "SVE"]
SVE_GROUPS = ("z_memory", "predicate", "count")


def non_streaming_kernel(rng, svl: int):
    """WHILELO sets a predicate, a random contiguous load fills a Z register under it, a random store
    of the same element size writes it back elsewhere, CNT*/ADDVL count at the vector length: memory,
    X and NZCV show what ran (Z and P do not survive the harness's SMSTART after a non-streaming end)."""
    esize = rng.choice("bhsd")
    memory = [f for f in FORMS_UNDER_TEST if f.group == "z_memory" and f.id.startswith(("LD1", "ST1"))
              and f.id.split("_")[2] == esize]
    loads = [f for f in memory if f.id.startswith("LD1")]
    stores = [f for f in memory if f.id.startswith("ST1")]
    load, store = rng.choice(loads), rng.choice(stores)
    g, k = rng.randrange(8), rng.randrange(32)
    while_form = next(f for f in FORMS if f.id == f"WHILELO_{esize}_x")
    count_form = rng.choice([f for f in FORMS_UNDER_TEST if f.group == "count" and f.id.startswith(("CNT", "ADDVL"))])
    def index(form, register: int) -> dict:  # the ss forms' Rm, the ADDVL's Rn (fixed so none collide)
        name = "Rm" if form.group == "z_memory" else "Rn"
        return {name: register} if name in form.encoding.fields else {}

    parts = [(while_form, random_text(rng, while_form, Pd=g, Rn=20, Rm=21)),
             (load, random_text(rng, load, Zt=k, Pg=g, Rn=22, **index(load, 24))),
             (store, random_text(rng, store, Zt=k, Pg=g, Rn=23, **index(store, 25))),
             (count_form, random_text(rng, count_form, Rd=26, **index(count_form, 27)))]
    state = random_state(rng, svl, svcr=rng.choice([0, 2]), memory_bytes=MEMORY_BYTES)
    state["z"], state["p"] = [bytes(svl // 8)] * 32, [bytes(svl // 64)] * 16
    state["za"], state["zt0"] = bytes(len(state["za"])), bytes(64)
    for form, text in parts:
        prepare(rng, form, text, state, svl)
    label = f"non-streaming {load.id}+{store.id}+{count_form.id}"
    return label, "\n".join(text for _, text in parts), state


@pytest.mark.parametrize("svl", SVLS)
def test_sve_feature_runs_sve_forms_outside_streaming_mode_as_qemu(svl):
    """With "SVE" in the config, isasim's SVE forms run outside streaming mode at VL = SVL, as QEMU's
    (-cpu max with sve-default-vector-length = the SVL); without it both call them UNDEFINED (the test
    above, and here: the same kernels under the default config fault at the first instruction)."""
    rng = random.Random(SEED + 3 * svl)
    cases = [non_streaming_kernel(rng, svl) for _ in range(24)]
    for form in [f for f in FORMS_UNDER_TEST if f.group in ("predicate", "count")]:
        label, text, state = random_streaming_case(rng, form, svl)
        state["svcr"] = rng.choice([0, 2])
        state["z"], state["p"] = [bytes(svl // 8)] * 32, [bytes(svl // 64)] * 16
        state["za"], state["zt0"] = bytes(len(state["za"])), bytes(64)
        cases.append((f"non-streaming {label}", text, state))
    comparison = compare_with_qemu(cases, svl, features=SVE_FEATURES, deviations=known_deviation)
    assert_agrees(comparison, svl, minimum_changed=0.5)
    kernels = cases[:4]
    without = compare_with_qemu(kernels, svl, deviations=known_deviation)
    assert not without.mismatches, without.report(svl)
    assert all("fault" in run_isasim(text, state, svl) for _, text, state in kernels)

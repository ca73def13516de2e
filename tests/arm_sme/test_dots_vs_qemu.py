"""Every integer ZA dot form executed by isasim and by QEMU (>= 10.1, the first with SME2), compared.

For each SVL and each dot form: random encodings of the form (random Zn, Zm, Wv, offset, index),
random Z registers and ZA, and a vector-select register holding edge values (0, vstride - 1,
vstride, 0x7fffffff, 0xffffffff, junk in the upper 32 bits) or a random one.  QEMU runs every case
of one SVL in one process (isasim.arm_sme.oracle.run_many); isasim runs each case on its own
machine.  ZA, the Z registers and the X registers must agree byte for byte.
"""

from __future__ import annotations

import random

import pytest

from isasim.arm_sme import ISA
from isasim.arm_sme.forms import FORMS
from isasim.core.errors import IsasimError
from isasim.core.machine import Machine

pytestmark = [pytest.mark.needs_qemu, pytest.mark.needs_clang]

SVLS = (128, 256, 512, 1024, 2048)
CASES_PER_FORM = 4  # per SVL: 54 forms (46 + 8 vertical) x 5 SVLs x 4 = 1,080 cases
SEED = 20261201
DOTS = [form for form in FORMS if form.group == "dot"]
ON = 3  # SVCR: streaming mode and ZA on


def edge_values(vstride: int) -> list[int]:
    return [0, vstride - 1, vstride, 0x7FFFFFFF, 0xFFFFFFFF, 0xDEADBEEF_00000000 | (vstride + 1)]


def random_case(rng: random.Random, form, svl: int) -> tuple[str, dict] | None:
    """(the instruction's text, the state before) for one random encoding of ``form``, or None when the
    random fields make no valid instruction of it."""
    fields = {name: rng.randrange(1 << box.width) for name, box in form.encoding.fields.items()}
    program = ISA.disassemble(form.encoding.pack(fields).to_bytes(4, "little"))
    instruction = program.instructions[0]
    if instruction.invalid is not None:
        return None
    svl_bytes = svl // 8
    nreg = form.extra["shape"].nreg  # the vertical dots are VGx4-only (4-way) or VGx2-only (2-way)
    vstride = svl_bytes // nreg
    x = [rng.getrandbits(64) for _ in range(31)]
    for v in range(8, 12):
        x[v] = rng.choice(edge_values(vstride)) if rng.random() < 0.6 else rng.getrandbits(64)
    state = {"x": x, "svcr": ON,
             "z": [rng.randbytes(svl_bytes) for _ in range(32)],
             "p": [bytes(svl_bytes // 8) for _ in range(16)],
             "za": rng.randbytes(svl_bytes * svl_bytes), "zt0": bytes(64)}
    return instruction.text, state


def run_isasim(text: str, state: dict, svl: int) -> dict:
    machine = Machine("arm_sme", {"svl": svl})
    regs = {f"x{i}": value for i, value in enumerate(state["x"])}
    regs["svcr"] = state["svcr"]
    arrays = {f"z{i}": data for i, data in enumerate(state["z"])}
    arrays["za"] = state["za"]
    machine.load(machine.assemble(text), regs=regs, arrays=arrays)
    result = machine.run(10)
    assert result.fault is None, (text, result.fault)
    observed = ISA.observe(machine.state)
    return {"x": [observed["regs"][f"x{i}"] for i in range(31)],
            "z": [observed["arrays"][f"z{i}"] for i in range(32)], "za": observed["arrays"]["za"]}


def first_difference(a: bytes, b: bytes, row_bytes: int) -> str:
    offset = next(i for i, (p, q) in enumerate(zip(a, b)) if p != q)
    return f"ZA row {offset // row_bytes}, byte {offset % row_bytes}: isasim {a[offset]:#04x}, qemu {b[offset]:#04x}"


@pytest.mark.parametrize("svl", SVLS)
def test_every_dot_form_agrees_with_qemu(svl):
    from isasim.arm_sme.oracle.qemu import Fault, run_many

    rng = random.Random(SEED + svl)
    cases = []
    for form in DOTS:
        made = tries = 0
        while made < CASES_PER_FORM and tries < 50:
            tries += 1
            case = random_case(rng, form, svl)
            if case is not None:
                cases.append((form.id, *case))
                made += 1
    assert {form_id for form_id, _text, _state in cases} == {form.id for form in DOTS}
    results = run_many([(text, state) for _id, text, state in cases], svl)
    mismatches, changed = [], 0
    for (form_id, text, state), theirs in zip(cases, results):
        assert not isinstance(theirs, Fault), (text, theirs)
        changed += theirs["za"] != state["za"]
        ours = run_isasim(text, state, svl)
        if ours["za"] != theirs["za"]:
            mismatches.append(f"{form_id} `{text}`: {first_difference(ours['za'], theirs['za'], svl // 8)}")
        elif ours["z"] != list(theirs["z"]) or ours["x"][:30] != list(theirs["x"])[:30]:
            mismatches.append(f"{form_id} `{text}`: Z or X registers differ")
    assert not mismatches, f"{len(mismatches)} of {len(cases)} cases differ at SVL {svl}:\n" + "\n".join(mismatches[:10])
    assert changed >= 0.9 * len(cases), f"only {changed} of {len(cases)} cases changed ZA on QEMU: nothing was compared"

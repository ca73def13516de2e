"""arm_sme's outlines for the trace page (``ISA.page_outlines``): the ZA, ZT0, Z and P bytes an instruction's
operands address, from the state before the step.

The outside check is the machine itself (its semantics are QEMU-checked): the bytes outlined as written are
exactly the bytes the step changes, over several random before-states (and ones whose destinations are all
0x00 or all 0xFF, so that an accumulation changes even the high bytes of its sums); and zeroing every byte
outside the outlines read leaves what the step writes unchanged.  A few labels are checked against the Arm ARM's
vector-group arithmetic worked by hand.
"""

from __future__ import annotations

import numpy as np
import pytest

from isasim.arm_sme import ISA
from isasim.arm_sme.config import FEATURES
from isasim.arm_sme.explain import example_text
from isasim.arm_sme.forms import FORMS
from isasim.core.machine import Machine

MEMORY = 0x100000  # every X register points into this region, so the loads and stores find memory
MEMORY_BYTES = 0x10000
ARRAYS = ("za", "zt0", *(f"z{n}" for n in range(32)), *(f"p{n}" for n in range(16)))


def random_arrays(rng, svlb: int, fill: int | None = None, predicates_true: bool = False) -> dict[str, bytes]:
    arrays = {f"z{n}": rng.integers(1, 256, svlb, dtype=np.uint8).tobytes() for n in range(32)}
    za = rng.integers(1, 256, svlb * svlb, dtype=np.uint8)
    arrays["za"] = (za if fill is None else np.full_like(za, fill)).tobytes()
    arrays["zt0"] = rng.integers(1, 256, 64, dtype=np.uint8).tobytes()
    for n in range(16):
        bits = np.full(svlb // 8, 0xFF, np.uint8) if predicates_true else rng.integers(0, 256, svlb // 8, np.uint8)
        arrays[f"p{n}"] = bits.tobytes()
    return arrays


REGS = {**{f"x{n}": MEMORY + 0x40 * n for n in range(31)}, "sp": MEMORY + 0x8000, "svcr": 3,
        "x2": 5, "x8": 5, "x9": 7, "x10": 2, "x11": 9, "x12": 3, "x13": 9, "x14": 6, "x15": 1}


def machines(text: str, svl: int, arrays: dict, memory: bytes):
    config = {"svl": svl, "features": list(FEATURES)}
    before, after = Machine("arm_sme", config), Machine("arm_sme", config)
    for machine in (before, after):
        machine.load(machine.assemble(text), regs=REGS, arrays=arrays, memory=[(MEMORY, memory, True)])
    return before, after


def step(text: str, svl: int, arrays: dict, memory: bytes):
    """The outlines of ``text`` and the machines before and after it."""
    before, after = machines(text, svl, arrays, memory)
    outlines = ISA.page_outlines(after.current_instruction(), before)
    after.step()
    return outlines, before, after


def covered(outlines, roles) -> dict[str, set[int]]:
    """Array -> the byte offsets its outlines with one of ``roles`` cover."""
    out: dict[str, set[int]] = {}
    for o in outlines:
        if o.role in roles:
            for start, end in o.spans:
                out.setdefault(o.location, set()).update(range(start, end))
    return out


def changed(before, after) -> dict[str, set[int]]:
    old, new = ISA.observed_arrays(before.state), ISA.observed_arrays(after.state)
    out = {}
    for name in ARRAYS:
        a, b = np.frombuffer(old[name], np.uint8), np.frombuffer(new[name], np.uint8)
        if (a != b).any():
            out[name] = set(np.flatnonzero(a != b).tolist())
    return out


WRITTEN = ("written", "read and written")
READ = ("read", "read and written")


def written_by_trials(text: str, svl: int, seed: int, predicates_true: bool):
    """The outlines, and the bytes changed in any of five steps of ``text`` from different before-states."""
    rng = np.random.default_rng(seed)
    memory = rng.integers(1, 256, MEMORY_BYTES, dtype=np.uint8).tobytes()
    union: dict[str, set[int]] = {}
    outlines = None
    for fill in (None, None, None, 0x00, 0xFF):
        arrays = random_arrays(rng, svl // 8, fill, predicates_true)
        if fill is not None:
            # ZA all 0x00 or all 0xFF and every Z byte 0x01: each sum of small positive products moves every byte
            # of its accumulator in one of the two (0xFF...FF + a wraps to a - 1; 0 - a is 0xFF...)
            arrays.update({f"z{n}": bytes([1]) * (svl // 8) for n in range(32)})
        found, before, after = step(text, svl, arrays, memory)
        assert after.fault is None, after.fault
        assert outlines is None or found == outlines  # the registers decide them, not the arrays' bytes
        outlines = found
        for name, offsets in changed(before, after).items():
            union.setdefault(name, set()).update(offsets)
    return outlines, union


EXACT = [
    "fmopa za1.s, p2/m, p3/m, z4.s, z5.s",
    "smopa za3.s, p2/m, p3/m, z4.b, z5.b",
    "umops za1.d, p2/m, p3/m, z4.h, z5.h",
    "udot za.s[w8, 1, vgx4], {z0.b-z3.b}, z4.b",
    "sdot za.s[w9, 3, vgx2], {z0.h-z1.h}, {z2.h-z3.h}",
    "fmla za.s[w10, 2, vgx4], {z0.s-z3.s}, z4.s",
    "smlall za.d[w9, 4:7, vgx2], {z0.h-z1.h}, z4.h",
    "umlal za.s[w11, 2:3], z0.h, z4.h",
    "mova za1h.s[w12, 1], p1/m, z5.s",
    "mova za2v.s[w13, 1], p1/m, z5.s",
    "mova z24.s, p1/m, za2v.s[w13, 1]",
    "mova z25.d, p1/m, za5h.d[w14, 0]",
    "mova {z24.d-z27.d}, za.d[w8, 1, vgx4]",
    "mova za.d[w11, 0, vgx2], {z4.d-z5.d}",
    "mova {z24.s-z25.s}, za1v.s[w12, 0:1]",
    "ld1w {za3v.s[w14, 0]}, p1/z, [x1, x2, lsl #2]",
    "ld1w {za0h.s[w15, 2]}, p1/z, [x1]",
    "ld1d {za7v.d[w12, 1]}, p1/z, [x1, x2, lsl #3]",
    "zero {za1.s}",
    "zero {za0.d, za2.d, za5.d}",
    "zero {za}",
    "zero za.d[w9, 2:3, vgx2]",
    "ldr za[w13, 5], [x1, #5, mul vl]",
    "luti4 {z24.b-z25.b}, zt0, z4[1]",
    "ldr zt0, [x1]",
    "movt zt0[16], x5",
    "movaz {z24.d-z25.d}, za.d[w8, 1, vgx2]",
]


@pytest.mark.parametrize("svl", [128, 512])
@pytest.mark.parametrize("text", EXACT)
def test_the_bytes_outlined_as_written_are_the_bytes_the_step_writes(text, svl):
    outlines, written = written_by_trials(text, svl, seed=svl, predicates_true=True)
    assert covered(outlines, WRITTEN) == written


@pytest.mark.parametrize("svl", [128, 512])
@pytest.mark.parametrize("text", EXACT)
def test_bytes_outside_the_read_outlines_do_not_change_what_the_step_writes(text, svl):
    rng = np.random.default_rng(svl + 1)
    memory = rng.integers(1, 256, MEMORY_BYTES, dtype=np.uint8).tobytes()
    arrays = random_arrays(rng, svl // 8, predicates_true=False)
    outlines, _, after = step(text, svl, arrays, memory)
    read = covered(outlines, READ)
    blanked = {}
    for name, data in arrays.items():
        kept = np.zeros(len(data), np.uint8)
        for at in read.get(name, ()):
            kept[at] = data[at]
        blanked[name] = kept.tobytes()
    _, _, again = step(text, svl, blanked, memory)
    assert after.fault is None and again.fault is None
    first, second = ISA.observed_arrays(after.state), ISA.observed_arrays(again.state)
    for name, offsets in covered(outlines, WRITTEN).items():
        at = sorted(offsets)
        assert np.frombuffer(first[name], np.uint8)[at].tolist() == np.frombuffer(second[name], np.uint8)[at].tolist()


def test_labels_name_the_vectors_the_arm_arm_selects():
    """vstride = SVL/8 DIV nreg; vec = (UInt(Wv) + offs) MOD vstride (worked by hand: w8 = 5, w12 = 3)."""
    memory = bytes(MEMORY_BYTES)
    arrays = random_arrays(np.random.default_rng(0), 16)
    (za, *sources), _, _ = step("udot za.s[w8, 1, vgx4], {z0.b-z3.b}, z4.b", 128, arrays, memory)
    assert (za.location, za.role) == ("za", "read and written")
    assert za.label == "ZA.S[w8, 1, VGx4] (w8 = 5): ZA vectors 2, 6, 10, 14"  # vstride 4: 6 MOD 4 = 2
    assert za.spans == ((32, 48), (96, 112), (160, 176), (224, 240))
    assert [(o.location, o.role) for o in sources] == [("z0", "read"), ("z1", "read"), ("z2", "read"),
                                                        ("z3", "read"), ("z4", "read")]
    arrays = random_arrays(np.random.default_rng(0), 64)
    slice_ = step("mova za2v.s[w12, 1], p1/m, z5.s", 512, arrays, memory)[0][0]
    # (3 + 1) MOD 16 = 4: bytes 16-19 of ZA2.S's rows, ZA vectors 2, 6, ..., 62; MOVA merges: read and written
    assert slice_.label == "ZA2V.S[w12, 1] (w12 = 3): vertical slice 4 = bytes 16-19 of ZA vectors 2, 6, ..., 62 " \
                           "(every 4)"
    assert slice_.spans[:2] == ((2 * 64 + 16, 2 * 64 + 20), (6 * 64 + 16, 6 * 64 + 20)) and len(slice_.spans) == 16
    assert slice_.role == "read and written"


def test_an_instruction_without_array_operands_has_no_outline():
    memory = bytes(MEMORY_BYTES)
    arrays = random_arrays(np.random.default_rng(0), 16)
    for text in ("add x0, x1, #4", "smstart", "b #8", "ldr x0, [x1]"):
        assert step(text, 128, arrays, memory)[0] == []


# ---- every form: what a step writes is outlined as written ------------------------------------------------

FORMS_WITH_ARRAYS = [form for form in FORMS if any(
    getattr(o, "kind", "") in ("za_group", "za_tile", "za_slice", "za_vector", "tile_list", "zt0", "z", "z_list",
                                "z_indexed", "p", "p_governing", "p_indexed") for o in form.operands)]


def test_every_form_outlines_as_written_every_array_byte_its_step_changes():
    """At SVL 128 from random state: each form's changed ZA, ZT0, Z and P bytes lie in its written outlines (most
    forms run; the rest fault before writing: a reserved size, a tile too small for its slices, ...)."""
    rng = np.random.default_rng(31)
    memory = rng.integers(1, 256, MEMORY_BYTES, dtype=np.uint8).tobytes()
    arrays = random_arrays(rng, 16)
    ran, wrong = 0, []
    for form in FORMS_WITH_ARRAYS:
        try:
            text = example_text(form)
            outlines, before, after = step(text, 128, arrays, memory)
        except Exception:  # an example the assembler does not take back (a form only an alias spells)
            continue
        if after.fault is not None:
            continue
        ran += 1
        written = covered(outlines, WRITTEN)
        for name, offsets in changed(before, after).items():
            if name != "ffr" and not offsets <= written.get(name, set()):
                wrong.append((form.id, text, name))
    assert not wrong, wrong[:10]
    assert ran > 0.8 * len(FORMS_WITH_ARRAYS), (ran, len(FORMS_WITH_ARRAYS))

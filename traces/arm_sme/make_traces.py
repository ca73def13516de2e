"""Record the arm_sme golden traces on QEMU (qemu-aarch64 >= 10.1, -cpu max), never on isasim.

Each trace is one program run under QEMU by isasim's ``qemu`` backend; its expectations are what
QEMU left (registers, Z, P, ZA, ZT0, memory, or the fault). The suite replays every trace on
the simulator, so machines without QEMU still check isasim against QEMU's results.

    python traces/arm_sme/make_traces.py [OUTPUT_DIR]     # needs tools/install_oracles.sh first
    python traces/arm_sme/make_traces.py --new-forms      # only the forms that have no trace yet
    python traces/arm_sme/make_traces.py --new-forms=za_fp_multiply_add,multi_vector_fp   # ... of these modules

What is recorded (deterministic: the same seed gives the same programs and initial states):
- every integer ZA dot form at SVL 128 and 256, every other form at 512, and a few at 1024 and 2048,
  from random Z registers and ZA with the vector-select register at an edge value (0, vstride - 1,
  vstride, 0x7fffffff, 0xffffffff, junk in the upper half) or a random one;
- faults: a dot with streaming mode off, with ZA off (UNDEFINED), and a load from unmapped
  memory (TRANSLATION);
- every other form (outer products, floating-point dots, vertical dots, ZA and SVE moves, loads
  and stores, predicates, counts, modes, the scalar subset), one trace each, the SVL cycling through
  all five, from random Z, P, ZA and NZCV, with a memory block that the form's base register points
  into (its index register small); an instruction is drawn again while isasim says it would fault,
  so that most of these traces show a result rather than a fault (faults have their own traces),
  or while it names x30 (the harness's return address); a vertical ZA-slice load is governed by an
  all-true predicate (QEMU's known deviation is not recorded as a golden result).

FFR is left out of the expectations: the harness cannot read it in streaming mode.
"""

from __future__ import annotations

import random
import re
import sys
from pathlib import Path

from isasim.arm_sme import ISA
from isasim.arm_sme.forms import FORMS
from isasim.arm_sme.oracle.backend import QemuBackend
from isasim.core.replay import replay
from isasim.core.trace import Init, Trace, expectations, write_trace

SEED = 20261201
# the integer horizontal dots, recorded first (their traces keep their names and contents as forms are added)
DOTS = [form for form in FORMS if form.group == "dot" and form.mnemonic in ("udot", "sdot", "usdot", "sudot")]
ON = 3
MEMORY_BASE = 0x10000000
# ADR/ADRP write addresses of the code, BL/BLR its return address, a literal load reads beside it
# (tests/arm_sme/semantics/test_base_vs_qemu.py compares them as differences of addresses)
POSITION_DEPENDENT = {"ADR", "ADRP", "BL", "BLR"}
# what a one-instruction trace cannot compare with QEMU's harness (test_base_vs_qemu.py reads them back in
# snippets of their own): FPSR holds the harness's own cumulative flags, the harness does not dump TPIDR2_EL0,
# QEMU keeps SVCR's RES0 bits (known deviation 3), and QEMU's -cpu max has FEAT_PAuth where isasim's core has not
HARNESS_STATE = {"MRS_FPSR", "MSR_TPIDR2_EL0", "MSR_SVCR", "HINT_PAC"}
NOT_ALONE = {"control"}  # branches and RET: a one-instruction program of them says little (the loops test them)  # SVCR: streaming mode and ZA on


def dot_forms_at(svl: int) -> list:
    if svl <= 256:
        return DOTS
    if svl == 512:
        return DOTS[::2]
    return DOTS[::12]


def random_dot(rng: random.Random, form) -> str:
    """The text of a random valid encoding of ``form``."""
    while True:
        fields = {name: rng.randrange(1 << box.width) for name, box in form.encoding.fields.items()}
        instruction = ISA.disassemble(form.encoding.pack(fields).to_bytes(4, "little")).instructions[0]
        if instruction.invalid is None:
            return instruction.text


def random_init(rng: random.Random, svl: int, nreg: int, svcr: int = ON) -> Init:
    svl_bytes = svl // 8
    vstride = svl_bytes // nreg
    edges = [0, vstride - 1, vstride, 0x7FFFFFFF, 0xFFFFFFFF, 0xDEADBEEF_00000000 | (vstride + 1)]
    regs = {f"x{v}": rng.choice(edges) if rng.random() < 0.6 else rng.getrandbits(64) for v in range(8, 12)}
    regs["svcr"] = svcr
    arrays = {}
    # Outside streaming mode the Z registers have the non-streaming vector length, and with ZA off
    # ZA holds nothing: neither is seeded then (the harness could not hand QEMU such a state).
    if svcr & 1:
        arrays |= {f"z{i}": rng.randbytes(svl_bytes) for i in range(32)}
    if svcr & 2:
        arrays["za"] = rng.randbytes(svl_bytes * svl_bytes)
    return Init(regs=regs, arrays=arrays)


def random_instruction(rng: random.Random, form, svl: int, init: Init) -> str | None:
    """A random valid encoding of ``form`` whose run on isasim from ``init`` does not fault (drawn
    again up to 1,000 times), its base register pointed into the memory block and its index register
    small; None if every draw faults."""
    from isasim.core.machine import Machine

    for _ in range(1000):
        fields = {name: rng.randrange(1 << box.width) for name, box in form.encoding.fields.items()}
        try:
            instruction = ISA.disassemble(form.encoding.pack(fields).to_bytes(4, "little")).instructions[0]
        except Exception:  # a reserved field value: the decoder refuses it
            continue
        if instruction.invalid is not None or instruction.form is not form:
            continue
        if re.search(r"\b[wx]30\b", instruction.text):
            continue  # the QEMU harness holds its return address in x30 while the program runs
        regs = dict(init.regs)
        used = instruction.extra["fields"]
        if "Rm" in used and used["Rm"] != 31:
            regs[f"x{used['Rm']}"] = rng.randrange(8)
        if "Rn" in used:
            # the middle of the block (offsets either way), or its start (large unsigned offsets)
            base = MEMORY_BASE + rng.choice([len(init.memory[0][1]) // 2, 0])
            regs["sp" if used["Rn"] == 31 else f"x{used['Rn']}"] = base
        arrays = dict(init.arrays)
        if form.group == "za_memory" and form.mnemonic.startswith("ld1") and "v." in instruction.text:
            # a vertical ZA slice load under a partial predicate meets a known QEMU deviation (inactive
            # elements left unzeroed, docs/known-oracle-deviations.md): govern it by an all-true one
            arrays[f"p{used['Pg']}"] = bytes([0xFF]) * (svl // 64)
        trial = Init(regs=regs, memory=init.memory, arrays=arrays)
        machine = Machine("arm_sme", {"svl": svl})
        machine.load_init(ISA.assemble(instruction.text + "\nret"), trial)
        if machine.run(100).fault is None:
            init.regs.clear()
            init.regs.update(regs)
            init.arrays.clear()
            init.arrays.update(arrays)
            return instruction.text
    return None


ZA_GROUPS = {"dot", "outer", "fp_dot", "fp_outer", "za", "za_move", "za_memory", "mode"}
SCALAR_GROUPS = {"scalar", "memory", "control"}


def random_form_init(rng: random.Random, svl: int, group: str) -> Init:
    """Random X (W8-W15 often at an edge), NZCV, SM and ZA on, a writable memory block of 16 vectors
    at MEMORY_BASE, and random Z and P (unless the form is scalar) and ZA (if the form uses ZA): what
    the form does not read is left zero, to keep the traces small."""
    svlb = svl // 8
    regs = {f"x{i}": rng.getrandbits(64) for i in range(30)}
    for v in range(8, 16):
        regs[f"x{v}"] = rng.choice([0, 1, svlb // 4 - 1, svlb // 2, 0xFFFFFFFF, rng.getrandbits(64)])
    regs |= {"nzcv": rng.getrandbits(4) << 28, "svcr": ON}
    arrays = {}
    if group not in SCALAR_GROUPS or rng.random() < 0.2:  # LDR/STR Q read and write Z
        arrays |= {f"z{i}": rng.randbytes(svlb) for i in range(32)}
        arrays |= {f"p{i}": rng.randbytes(svlb // 8) for i in range(16)}
    if group in ZA_GROUPS:
        arrays["za"] = rng.randbytes(svlb * svlb)
    return Init(regs=regs, memory=[(MEMORY_BASE, rng.randbytes(16 * svlb), True)], arrays=arrays)


def record(name: str, lines: list[str], svl: int, init: Init, out: Path, backend: QemuBackend) -> Path:
    config = ISA.configure({"svl": svl})
    program = ISA.assemble("\n".join(lines), source=name)
    outcome = backend.run("arm_sme", config, program, init)
    expect = expectations(outcome, init, every_register=True)
    expect.get("arrays", {}).pop("ffr", None)  # not observed by the harness: not a measurement
    trace = Trace("arm_sme", lines, {"svl": svl}, backend.producer(), init, expect, None, name)
    _final, diffs = replay(trace)
    status = "ok" if not diffs else f"DIFFERS from isasim: {diffs[0].describe()}"
    path = out / f"{name}.trace.json"
    write_trace(trace, path, force=True)
    print(f"{path.name}: {status}")
    return path


def main(out: Path) -> None:
    backend = QemuBackend()
    reason = backend.unavailable_reason("arm_sme")
    if reason:
        sys.exit(f"cannot record on QEMU here: {reason}")
    out.mkdir(parents=True, exist_ok=True)
    rng = random.Random(SEED)
    for svl in (128, 256, 512, 1024, 2048):
        for form in dot_forms_at(svl):
            nreg = 4 if form.id.endswith("vgx4") else 2
            record(f"dot-{form.id.lower()}-svl{svl}", [random_dot(rng, form), "ret"], svl,
                   random_init(rng, svl, nreg), out, backend)
    udot = "udot za.s[w8, 0, vgx4], {z0.h-z3.h}, z4.h"
    for svl in (128, 512):
        record(f"fault-undefined-sm-off-svl{svl}", ["mov x1, #1", udot, "ret"], svl,
               random_init(rng, svl, 4, svcr=0b10), out, backend)
        record(f"fault-undefined-za-off-svl{svl}", ["mov x1, #1", udot, "ret"], svl,
               random_init(rng, svl, 4, svcr=0b01), out, backend)
        unmapped = random_init(rng, svl, 4)
        unmapped.regs["x0"] = 0x7000_0000
        record(f"fault-translation-svl{svl}", [udot, "ldr x2, [x0]", "ret"], svl, unmapped, out, backend)
    # every other form, once, the SVL cycling (its own seed: adding a form does not change the traces above)
    rng = random.Random(SEED + 1)
    # mostly the smaller SVLs (a trace at SVL 2048 holds 64 KiB of ZA twice), every SVL often enough
    svls = (128, 256, 512) * 4 + (1024, 128, 256, 2048)
    others = [form for form in FORMS if form not in DOTS and form.group not in NOT_ALONE and form.execute]
    for number, form in enumerate(others):
        svl = svls[number % len(svls)]
        init = random_form_init(rng, svl, form.group)
        text = random_instruction(rng, form, svl, init)
        if text is None:
            print(f"{form.id}: every draw faults on isasim; no trace")
            continue
        record(f"form-{form.id.lower()}-svl{svl}", [text, "ret"], svl, init, out, backend)


def _module(form) -> str:
    return (getattr(getattr(form.execute, "func", form.execute), "__module__", "") or "").rsplit(".", 1)[-1]


def record_new_forms(out: Path, modules: list[str]) -> None:
    """Every form that has no trace in ``out`` yet (those added after the recording above: issues 28 and 29),
    once, at SVL 128 (small traces: the differential tests run every SVL against QEMU), each from a seed of
    its own, its form id: recording one form changes no other form's trace, and main()'s traces stay as they are."""
    backend = QemuBackend()
    reason = backend.unavailable_reason("arm_sme")
    if reason:
        sys.exit(f"cannot record on QEMU here: {reason}")
    have = {path.name[len("form-"):].rsplit("-svl", 1)[0] for path in out.glob("form-*.trace.json")}
    have |= {path.name[len("dot-"):].rsplit("-svl", 1)[0] for path in out.glob("dot-*.trace.json")}
    for form in FORMS:
        # (AdvSIMD is UNDEFINED in streaming mode, where these traces run: test_advsimd.py runs it outside)
        if form in DOTS or form.group in NOT_ALONE | {"builtin", "advsimd"} or not form.execute \
                or form.id.lower() in have:
            continue
        if modules and _module(form) not in modules:
            continue
        if form.id in POSITION_DEPENDENT | HARNESS_STATE or form.id.endswith("_lit"):
            continue  # what they leave depends on where the code is, which differs between QEMU's harness and isasim
        rng = random.Random(f"{SEED}:{form.id}")
        svl = 128
        init = random_form_init(rng, svl, form.group)
        text = random_instruction(rng, form, svl, init)
        if text is None:
            print(f"{form.id}: every draw faults on isasim (a feature off by default?); no trace")
            continue
        record(f"form-{form.id.lower()}-svl{svl}", [text, "ret"], svl, init, out, backend)


if __name__ == "__main__":
    arguments = [a for a in sys.argv[1:] if not a.startswith("--")]
    folder = Path(arguments[0]) if arguments else Path(__file__).resolve().parent
    options = [a for a in sys.argv[1:] if a.startswith("--")]
    if any(option.startswith("--new-forms") for option in options):  # --new-forms[=module,module...]
        chosen = next(option for option in options if option.startswith("--new-forms"))
        record_new_forms(folder, [m for m in chosen.partition("=")[2].split(",") if m])
    else:
        main(folder)

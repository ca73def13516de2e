"""Differential testing of arm_sme against QEMU: many cases at one SVL, compared field by field.

A case is ``(label, program_text, state)``.  The state is in the oracle's terms (the module
docstring of isasim.arm_sme.oracle.qemu: x, sp, nzcv, svcr, z, p, za, zt0, memory/regions);
:func:`random_state` makes a random one with a writable memory block that base registers can
point into (:func:`address_in`).  :func:`compare_with_qemu` runs every case of one SVL in one
QEMU process (``run_many``) and each on its own isasim machine, and compares everything both can
observe: X0-X30, SP, NZCV, SVCR, Z, P, ZA, ZT0, every memory byte, and a fault's kind and the
index of the faulting instruction.

QEMU is an oracle, not the architecture: where it is known to differ from the Arm ARM, a test
passes ``deviations``, a function ``(label, text, state, ours, theirs) -> reason | None``.  A
case it names is counted under its reason in ``Comparison.deviations`` instead of failing; it
must recognise the documented pattern exactly (docs/known-oracle-deviations.md), never "any
difference in this form".

``Comparison.changed`` counts the cases whose state QEMU changed (or that faulted): a test asserts
it is most of them, so that a harness that compares nothing cannot pass.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Callable, Sequence

from isasim.arm_sme import ISA
from isasim.core.errors import IsasimError
from isasim.core.machine import Machine

ON = 3  # SVCR: streaming mode and ZA on (the harness's default)
MEMORY_BASE = 0x10000000
MEMORY_BYTES = 1 << 16  # whole pages: QEMU maps pages, isasim maps exactly what the state names
FAULT_KINDS = {"SIGILL": "UNDEFINED", "SIGSEGV": "TRANSLATION", "SIGBUS": "ALIGNMENT"}
X_NAMES = [f"x{i}" for i in range(31)]

Case = tuple[str, str, dict]  # (label, program text, oracle state)
Deviation = Callable[[str, str, dict, dict, dict], "str | None"]


def random_state(rng: random.Random, svl: int, *, svcr: int = ON, predicates: bool = True,
                 memory_bytes: int = MEMORY_BYTES) -> dict:
    """Random X, NZCV, Z, P (random bits, or all zero), ZA, ZT0 and a random writable memory block
    at MEMORY_BASE; SP in the middle of the block (16-byte aligned)."""
    svlb = svl // 8
    return {"x": [rng.getrandbits(64) for _ in range(31)],
            "sp": MEMORY_BASE + memory_bytes // 2, "nzcv": rng.getrandbits(4) << 28, "svcr": svcr,
            "z": [rng.randbytes(svlb) for _ in range(32)],
            "p": [rng.randbytes(svlb // 8) if predicates else bytes(svlb // 8) for _ in range(16)],
            "za": rng.randbytes(svlb * svlb), "zt0": rng.randbytes(64),
            "memory": rng.randbytes(memory_bytes), "memory_base": MEMORY_BASE}


def address_in(rng: random.Random, state: dict, span: int, align: int = 1) -> int:
    """A random address whose ``span`` bytes on either side are inside the state's memory block
    (so that a base register plus a signed offset of up to ``span`` stays mapped)."""
    size = len(state["memory"])
    if 2 * span >= size:
        raise ValueError(f"a span of {span} bytes does not fit twice in {size} bytes of memory")
    address = state["memory_base"] + span + rng.randrange(size - 2 * span)
    return address - address % align


def random_instruction(rng: random.Random, form, tries: int = 50) -> str | None:
    """The text of one random valid encoding of ``form`` (random fields, as the decoder reads
    them), or None if ``tries`` random encodings give none."""
    for _ in range(tries):
        fields = {name: rng.randrange(1 << box.width) for name, box in form.encoding.fields.items()}
        try:
            instruction = ISA.disassemble(form.encoding.pack(fields).to_bytes(4, "little")).instructions[0]
        except IsasimError:
            continue  # a reserved field value (the decoder refuses it)
        if instruction.form is form and instruction.invalid is None:
            return instruction.text
    return None


def _regions(state: dict) -> list[tuple[int, bytes, bool]]:
    regions = [(int(a), bytes(d), bool(w)) for a, d, w in state.get("regions", [])]
    if state.get("memory"):
        regions.append((state.get("memory_base", MEMORY_BASE), bytes(state["memory"]), True))
    return regions


def run_isasim(text: str, state: dict, svl: int, features: list | None = None, max_steps: int = 10_000) -> dict:
    """isasim's end state in the oracle's result terms, or {"fault": (kind, index)}."""
    config = {"svl": svl} if features is None else {"svl": svl, "features": features}
    machine = Machine("arm_sme", config)
    regs = dict(zip(X_NAMES, state.get("x", [])))
    regs |= {name: state[name] for name in ("sp", "nzcv", "svcr") if name in state}
    arrays = {f"z{i}": data for i, data in enumerate(state.get("z", []))}
    arrays |= {f"p{i}": data for i, data in enumerate(state.get("p", []))}
    arrays |= {name: state[name] for name in ("za", "zt0") if name in state}
    regions = _regions(state)
    machine.load(machine.assemble(text), regs=regs, arrays=arrays, memory=regions)
    result = machine.run(max_steps)
    if result.fault is not None:
        return {"fault": (result.fault.kind, result.fault.index)}
    svcr_at_end = machine.state.svcr
    if svcr_at_end != ON:
        # The harness dumps Z, P and ZA from streaming mode with ZA on, so after a program that ends
        # with either off it runs SMSTART first (zeroing what that mode change zeroes): do the same,
        # with isasim's own SMSTART, so that both sides report what the harness can see.
        from isasim.arm_sme.context import SmeContext
        from isasim.arm_sme.semantics.modes import set_modes
        set_modes(SmeContext(machine.state, machine.memory), sm=True, za=True)
    observed = ISA.observe(machine.state)
    regs, arrays = observed["regs"], observed["arrays"]
    return {"x": [regs[name] for name in X_NAMES], "sp": regs["sp"], "nzcv": regs["nzcv"], "svcr": svcr_at_end,
            "z": [arrays[f"z{i}"] for i in range(32)], "p": [arrays[f"p{i}"] for i in range(16)],
            "za": arrays["za"], "zt0": arrays["zt0"],
            "regions": [(a, machine.memory.read(a, len(d)), w) for a, d, w in regions]}


def _oracle_terms(theirs) -> dict:
    """QEMU's result (or Fault) in run_isasim's terms."""
    from isasim.arm_sme.oracle.qemu import Fault

    if isinstance(theirs, Fault):
        return {"fault": (FAULT_KINDS.get(theirs.signal, theirs.signal), theirs.index)}
    regions = list(theirs.get("regions", []))
    if "memory" in theirs:
        regions.append((theirs["memory_base"], theirs["memory"], True))
    return {**{k: v for k, v in theirs.items() if k not in ("memory", "memory_base")}, "regions": regions}


def first_difference(ours: dict, theirs: dict, svl: int) -> str | None:
    """Where two end states first differ, in words (None if they agree on everything)."""
    if "fault" in ours or "fault" in theirs:
        if ours.get("fault") != theirs.get("fault"):
            return f"isasim {ours.get('fault', 'no fault')}, qemu {theirs.get('fault', 'no fault')}"
        return None
    svlb = svl // 8
    for name in ("sp", "nzcv", "svcr"):
        if ours[name] != theirs[name]:
            return f"{name}: isasim {ours[name]:#x}, qemu {theirs[name]:#x}"
    for i, (a, b) in enumerate(zip(ours["x"], theirs["x"])):
        if a != b:
            return f"x{i}: isasim {a:#x}, qemu {b:#x}"
    for bank in ("z", "p"):
        for i, (a, b) in enumerate(zip(ours[bank], theirs[bank])):
            if bytes(a) != bytes(b):
                at = _first_byte(a, b)
                return f"{bank}{i} byte {at}: isasim {a[at]:#04x}, qemu {b[at]:#04x}"
    for name, row in (("za", svlb), ("zt0", 64)):
        if bytes(ours[name]) != bytes(theirs[name]):
            at = _first_byte(ours[name], theirs[name])
            where = f"row {at // row}, byte {at % row}" if name == "za" else f"byte {at}"
            return f"{name} {where}: isasim {ours[name][at]:#04x}, qemu {theirs[name][at]:#04x}"
    for (address, a, _), (_, b, _) in zip(ours["regions"], theirs["regions"]):
        if bytes(a) != bytes(b):
            at = _first_byte(a, b)
            return f"memory {address + at:#x}: isasim {a[at]:#04x}, qemu {b[at]:#04x}"
    return None


def _first_byte(a: bytes, b: bytes) -> int:
    return next(i for i, (p, q) in enumerate(zip(a, b)) if p != q)


def _changed(state: dict, theirs: dict) -> bool:
    if "fault" in theirs:
        return True
    before = run_state_terms(state)
    return any(before[key] != theirs[key] for key in ("x", "nzcv", "svcr", "z", "p", "za", "zt0")) \
        or [bytes(d) for _, d, _ in before["regions"]] != [bytes(d) for _, d, _ in theirs["regions"]]


def run_state_terms(state: dict) -> dict:
    """A start state in result terms (what 'nothing happened' would give back)."""
    return {"x": list(state.get("x", [0] * 31)), "nzcv": state.get("nzcv", 0), "svcr": state.get("svcr", ON),
            "z": [bytes(z) for z in state.get("z", [])], "p": [bytes(p) for p in state.get("p", [])],
            "za": bytes(state.get("za", b"")), "zt0": bytes(state.get("zt0", bytes(64))),
            "regions": _regions(state)}


@dataclass
class Comparison:
    compared: int = 0
    changed: int = 0  # cases whose state QEMU changed, or that faulted
    mismatches: list[str] = field(default_factory=list)
    deviations: dict[str, int] = field(default_factory=dict)  # known oracle deviation -> cases

    def report(self, svl: int) -> str:
        return (f"{len(self.mismatches)} of {self.compared} cases differ at SVL {svl}:\n"
                + "\n".join(self.mismatches[:12]))


def compare_with_qemu(cases: Sequence[Case], svl: int, *, features: list | None = None,
                      deviations: Deviation | None = None) -> Comparison:
    """Run every case on QEMU (one process) and on isasim; the differences, one line each."""
    from isasim.arm_sme.oracle.qemu import run_many

    # QEMU models the same core: FEAT_SVE only where the config lists "SVE" (else -cpu max,sve=off)
    results = run_many([(text, state) for _label, text, state in cases], svl, sve="SVE" in (features or ()))
    comparison = Comparison()
    for (label, text, state), raw in zip(cases, results):
        theirs = _oracle_terms(raw)
        if "fault" not in theirs:
            theirs["x"] = list(theirs["x"])
        ours = run_isasim(text, state, svl, features)
        comparison.compared += 1
        comparison.changed += _changed(state, theirs)
        difference = first_difference(ours, theirs, svl)
        if difference is None:
            continue
        reason = deviations(label, text, state, ours, theirs) if deviations else None
        if reason:
            comparison.deviations[reason] = comparison.deviations.get(reason, 0) + 1
        else:
            comparison.mismatches.append(f"{label} `{' ; '.join(text.splitlines())}`: {difference}")
    return comparison

"""Record the arm_sme golden traces on QEMU (qemu-aarch64 >= 10.1, -cpu max), never on isasim.

Each trace is one program run under QEMU by isasim's ``qemu`` backend; its expectations are what
QEMU left (registers, Z, P, ZA, ZT0, memory, or the fault). The suite replays every trace on
the simulator, so machines without QEMU still check isasim against QEMU's results.

    python traces/arm_sme/make_traces.py [OUTPUT_DIR]     # needs tools/install_oracles.sh first

What is recorded (deterministic: the same seed gives the same programs and initial states):
- every integer ZA dot form at SVL 128 and 256, every other form at 512, and a few at 1024 and 2048,
  from random Z registers and ZA with the vector-select register at an edge value (0, vstride - 1,
  vstride, 0x7fffffff, 0xffffffff, junk in the upper half) or a random one;
- faults: a dot with streaming mode off, with ZA off (UNDEFINED), and a load from unmapped
  memory (TRANSLATION).

FFR is left out of the expectations: the harness cannot read it in streaming mode.
"""

from __future__ import annotations

import random
import sys
from pathlib import Path

from isasim.arm_sme import ISA
from isasim.arm_sme.forms import FORMS
from isasim.arm_sme.oracle.backend import QemuBackend
from isasim.core.replay import replay
from isasim.core.trace import Init, Trace, expectations, write_trace

SEED = 20261201
DOTS = [form for form in FORMS if form.group == "dot"]
ON = 3  # SVCR: streaming mode and ZA on


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


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parent)

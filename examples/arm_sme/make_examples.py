"""Regenerate the SME2 kernel examples from isasim's kernel builder (isasim.arm_sme.kernels).

Each kernel is written twice: NAME.s, the commented assembly to read, and NAME.trace.json,
the same program with its initial state (A and B packed as the kernel's instructions need
them, C) and the expected C from an INT64 reference, so

    isasim run examples/arm_sme/NAME.trace.json                # prints PASS or FAIL
    isasim step examples/arm_sme/NAME.trace.json               # steps through it
    isasim diff examples/arm_sme/NAME.trace.json --against qemu   # where QEMU >= 10.1 is installed

(smopa_gemm and udot_vgx4 are hand-written examples, not made here.)

Run: python examples/arm_sme/make_examples.py [OUTPUT_DIR]
"""

import sys
from pathlib import Path

from isasim.arm_sme import kernels
from isasim.core.trace import write_trace


def write_all(out: Path) -> list[Path]:
    written = []
    for name in kernels.BUILDERS:
        kernel = kernels.build(name)
        source = out / f"{name}.s"
        source.write_text(kernel.text)
        trace = out / f"{name}.trace.json"
        write_trace(kernel.trace(), trace, force=True)
        written += [source, trace]
    return written


if __name__ == "__main__":
    target = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).parent
    for path in write_all(target):
        print(f"wrote {path}")

"""Regenerate the AMX examples from isasim's kernel builder (isasim.x86_amx.kernels).

Each example is written twice: NAME.s, the commented assembly to read, and
NAME.trace.json, the same program with its initial state (A, packed B, C, the
tile configuration) and the expected C from an INT64 / exact reference, so

    isasim run examples/x86_amx/NAME.trace.json     # prints C and PASS or FAIL
    isasim step examples/x86_amx/NAME.trace.json    # steps through it
    isasim diff examples/x86_amx/NAME.trace.json --against silicon   # on an AMX host

Run: python examples/x86_amx/make_examples.py [OUTPUT_DIR]
"""

import json
import sys
from pathlib import Path

from isasim.core.trace import trace_json
from isasim.x86_amx import kernels

EXAMPLES = [
    kernels.int8_block(),
    kernels.int8_block(K=62),
    kernels.int8_batch(count=4),
    kernels.int8_per_block(count=4),
    kernels.int8_microkernel(count=2, K=256),
    kernels.bf16_block(),
    kernels.bf16_microkernel(count=2, K=128),
]


def write_all(out: Path) -> list[Path]:
    written = []
    for kernel in EXAMPLES:
        source = out / f"{kernel.name}.s"
        source.write_text(kernel.text)
        trace = out / f"{kernel.name}.trace.json"
        trace.write_text(json.dumps(trace_json(kernel.trace()), separators=(",", ":")) + "\n")
        written += [source, trace]
    return written


if __name__ == "__main__":
    target = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).parent
    for path in write_all(target):
        print(f"wrote {path}")

"""KleidiAI's SME2 micro-kernels, where a checkout is at hand (issue 28): ISASIM_KLEIDIAI names a clone of
ARM-software/kleidiai (nothing of it is committed here, and the test skips without one).

Each ``kai/ukernels/**/*sme2*_asm.S`` is assembled by zig's clang at test time into pytest's tmp folder and its
``kai_kernel_*`` function loaded as ``isasim run FILE.o --function kai_kernel_...`` loads it: it must load whole
(every word decoded, no relocation or symbol isasim cannot place) or be refused before any run in one line that
names what isasim does not simulate yet.  Running one needs its argument structure laid out as the kernel's .c
wrapper fills it (examples/arm_sme/README.md says how); the summary line lists what each file still lacks.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from isasim.core.elf_file import EM_AARCH64, read_elf
from isasim.core.errors import IsasimError
from isasim.core.isa import get_isa
from isasim.core.trace import parse_init

CHECKOUT = os.environ.get("ISASIM_KLEIDIAI")


def kernel_files() -> list[Path]:
    if not CHECKOUT:
        return []
    return sorted(Path(CHECKOUT).glob("kai/ukernels/**/*sme2*_asm.S"))


@pytest.mark.skipif(not CHECKOUT, reason="ISASIM_KLEIDIAI names no KleidiAI checkout")
def test_kleidiai_sme2_kernels_load_or_are_refused_by_name(tmp_path):
    from isasim.arm_sme.oracle.tools import clang_problem, find_zig, zig_env

    if clang_problem():
        pytest.skip(clang_problem())
    files = kernel_files()
    assert files, f"no kai/ukernels/**/*sme2*_asm.S under {CHECKOUT}"
    zig, _ = find_zig()
    isa = get_isa("arm_sme")
    loaded, refused = [], {}
    for source in files:
        obj = tmp_path / (source.stem + ".o")
        done = subprocess.run([zig, "cc", "-target", "aarch64-linux-gnu", "-mcpu=generic+sme2+sme_i16i64", "-c",
                               str(source), "-o", str(obj)], capture_output=True, text=True, env=zig_env(), timeout=300)
        if done.returncode != 0:
            continue  # a file this clang does not assemble is KleidiAI's business, not isasim's
        elf = read_elf(str(obj), EM_AARCH64)
        names = [s.name for s in elf.symbols() if s.name.startswith("kai_kernel_") and s.size]
        for name in names:
            try:
                isa.load_object(str(obj), name, parse_init({"args": [0x1000000]}))
                loaded.append(name)
            except IsasimError as error:
                message = str(error)
                assert "\n" not in message and "does not simulate" in message, message
                refused[name] = message.split(" is ", 1)[-1].split(",")[0]
    print(f"KleidiAI SME2 kernels: {len(loaded)} load whole, {len(refused)} refused by name: "
          + "; ".join(f"{name}: {what}" for name, what in sorted(refused.items())))
    assert loaded or refused

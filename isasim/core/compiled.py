"""The compiled engine: a plain run's hot loop as machine code, beside the Python semantics.

A plain run (``Machine.run`` without records: no stepping, no recording, no lockstep) may hand a
program to its ISA's compiled engine (``Isa.compile_program``).  The ISA lowers each instruction it
has a compiled body for into plain data (a form number and resolved integer operands) and runs those
in one compiled loop (numba) over the state's numpy arrays and the memory's regions.  The Python
semantics stay the reference and the only path for stepping, recording and explain.

The contract that keeps the two bit-identical:

* A compiled body checks everything that could make the instruction fault, or that it does not
  model (an access crossing regions, a mode check, an inactive predicate it leaves to Python), before
  it writes anything; where any check fails it *hands back*: the loop stops with the pc on that
  instruction, unexecuted, and the machine executes it with the Python semantics, which raise the
  fault (with its rule, index and pc) exactly as a recorded run would.
* Instructions without a compiled body hand back the same way, so coverage grows form by form.
* The step count, the pc and the end of the program follow the same rules as the Python loop.

Nothing here knows an ISA.  numba is optional: without it (or with ``ISASIM_ENGINE=python``) every
run takes the Python path, slower and otherwise the same.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from contextlib import contextmanager
from typing import Any

ENGINE_VARIABLE = "ISASIM_ENGINE"
ENGINES = ("compiled", "python")

# What a compiled run reports (CompiledProgram.run's status)
ENDED = 0  # the program ended (its last instruction returned, or the pc reached the end of the code)
HANDBACK = 1  # the instruction at the pc is for the Python semantics (no compiled body, or a check failed)
BUDGET = 2  # the step budget is spent; the pc is on the next instruction, unexecuted

# A run whose compiled loop is not loaded yet starts in Python and loads it after this many instructions
# (about 50 ms of Python): loading from numba's cache takes about a second per process.
TIER_STEPS = 20_000


def chosen_engine(engine: str | None = None) -> str:
    """The engine a machine uses: ``engine`` if given, else the environment's ISASIM_ENGINE, else compiled."""
    name = engine or os.environ.get(ENGINE_VARIABLE) or "compiled"
    if name not in ENGINES:
        from .errors import IsasimError

        raise IsasimError(f"unknown engine '{name}' ({ENGINE_VARIABLE} or --engine): one of {', '.join(ENGINES)}")
    return name


def numba_available() -> bool:
    """Whether numba is installed (found, not imported: importing it takes about 0.3 s)."""
    import importlib.util

    return importlib.util.find_spec("numba") is not None


class CompiledProgram:
    """One program lowered for one configuration (what ``Isa.compile_program`` returns).

    ``run(state, memory, pc, budget)`` executes from ``pc`` (an instruction with a compiled body) for at
    most ``budget`` instructions and returns ``(pc, steps, status)``: the pc it stopped at, how many
    instructions it executed, and ENDED, HANDBACK or BUDGET.  It reads the state's registers at the start
    and writes them back before it returns, so the state is whole between runs."""

    def covers(self, pc: int) -> bool:
        """Whether the instruction at ``pc`` has a compiled body (a run may start there)."""
        raise NotImplementedError

    def run(self, state: Any, memory: Any, pc: int, budget: int) -> tuple[int, int, int]:
        raise NotImplementedError

    def ready(self) -> bool:
        """Whether the compiled loop is loaded in this process (from numba's disk cache, or compiled).  Until it
        is, a run starts in Python and switches only once it has run TIER_STEPS instructions: loading costs about
        a second, which a short run would not get back."""
        return True

    def warm_up(self) -> None:
        """Load (or compile) the compiled loop now, so the next run uses it from its first instruction."""

    def compiled_forms(self) -> dict[str, int]:
        """Form id -> how many of the program's instructions have that compiled body (for the tests and docs)."""
        raise NotImplementedError


# ---- the first compile ------------------------------------------------------------------------------------
_REPORTED: set[str] = set()


@contextmanager
def first_compile_notice(what: str):
    """Around the first call of a jitted loop: if it takes more than a second (numba compiling it, which
    happens once per machine: the result is cached on disk), say so on stderr, once per process, with
    the time it took.  A run that loads the cached code says nothing."""
    if what in _REPORTED:
        yield
        return
    _REPORTED.add(what)
    started = time.perf_counter()
    said = threading.Event()

    def notice() -> None:
        said.set()
        print(f"isasim: compiling the fast engine ({what}, once; it is cached on disk) ...", file=sys.stderr,
              flush=True)

    timer = threading.Timer(1.0, notice)
    timer.daemon = True
    timer.start()
    try:
        yield
    finally:
        timer.cancel()
        if said.is_set():
            print(f"isasim: compiled the fast engine ({what}) in {time.perf_counter() - started:.1f} s",
                  file=sys.stderr, flush=True)

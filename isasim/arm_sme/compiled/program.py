"""A program lowered for the compiled loop, and the moves of the state in and out of it."""

from __future__ import annotations

import weakref

import numpy as np

from ...core import compiled
from ...core.memory import Region
from . import body_numbers as B
from .lowering import WIDTH, lower

# numba (about 0.3 s to import) and the loop (about a second to load from numba's cache) are loaded only when
# a run goes compiled (core.compiled.TIER_STEPS): lowering a program needs neither.
_LOADED = False  # the loop has run in this process (a flag: asking numba's dispatcher costs tens of microseconds)


def _loop():
    global _LOADED
    from . import bodies

    _LOADED = True  # (set before the first call returns: ready() is only asked between runs)
    return bodies.run_loop

# The lowering of a program under a configuration (the vector length and features decide it), by the
# program's id while the program lives: the fuzzer and the benchmarks run one program on many machines.
_LOWERED: dict[tuple, tuple[weakref.ref, tuple]] = {}


def _config_key(config: dict) -> tuple:
    return config["svl"], tuple(sorted(config["features"]))


def lowered(program, config: dict, disabled: frozenset = frozenset()) -> tuple:
    """(bodies, operands, index by address, form id by index) of ``program`` under ``config``; the body
    numbers in ``disabled`` are left to Python (the tests force each off in turn)."""
    key = (id(program), _config_key(config), disabled)
    entry = _LOWERED.get(key)
    if entry is not None and entry[0]() is program:
        return entry[1]
    instructions = program.instructions
    index_of = {instruction.address: i for i, instruction in enumerate(instructions)}
    bodies = np.zeros(len(instructions), dtype=np.int32)
    operands = np.zeros((len(instructions), WIDTH), dtype=np.int64)
    for i, instruction in enumerate(instructions):
        made = lower(instruction, config, index_of, program.end)
        if made is None or made[0] in disabled:
            continue
        bodies[i] = made[0]
        operands[i, :len(made[1])] = [int(value) for value in made[1]]
    forms = [getattr(instruction.form, "id", "?") for instruction in instructions]
    result = (bodies, operands, index_of, forms)

    def forget(ref, key=key):
        if _LOWERED.get(key, (None,))[0] is ref:
            del _LOWERED[key]

    _LOWERED[key] = (weakref.ref(program, forget), result)
    return result


_WARM_UP_REGION = Region(0, bytearray(1))  # warm_up's memory: appending to a typed list compiles its method


class ArmCompiledProgram(compiled.CompiledProgram):
    def __init__(self, program, config: dict, *, disabled: frozenset = frozenset(), plant: int | None = None):
        self.bodies, self.operands, self.index_of, self.forms = lowered(program, config, disabled)
        if plant is not None:  # a test's planted fault: the first instruction with that body gets a wrong operand
            self.operands = self.operands.copy()
            first = int(np.flatnonzero(self.bodies == plant)[0])
            self.operands[first] = planted(plant, self.operands[first])
        self.addresses = [instruction.address for instruction in program.instructions]
        self.end = program.end
        self.count = len(self.addresses)
        self.sve = "SVE" in config["features"]
        self._memory_key = None
        self._regions = None
        svlb = config["svl"] // 8
        self.scratch = np.zeros(svlb, dtype=np.uint8)
        self.operand1 = np.zeros(svlb, dtype=np.int64)
        self.operand2 = np.zeros(svlb, dtype=np.int64)
        self.sums = np.zeros(svlb, dtype=np.int64)

    def covers(self, pc: int) -> bool:
        index = self.index_of.get(pc)
        return index is not None and self.bodies[index] != B.NONE

    def ready(self) -> bool:
        return _LOADED

    def warm_up(self) -> None:
        if not self.ready():
            with compiled.first_compile_notice("arm_sme"):
                _loop()(self.bodies[:0], self.operands[:0], np.zeros(33, dtype=np.uint64), *self._empty_state(),
                           False, False, False, *self._memory_of([_WARM_UP_REGION]), 0, 0, 0, self.scratch, self.operand1,
                           self.operand2, self.sums)

    def _empty_state(self):
        svlb = self.scratch.size
        return (np.zeros((32, svlb), np.uint8), np.zeros((16, svlb // 8), np.uint8), np.zeros((svlb, svlb), np.uint8))

    def compiled_forms(self) -> dict[str, int]:
        counts: dict[str, int] = {}
        for body, form in zip(self.bodies, self.forms):
            if body != B.NONE:
                counts[form] = counts.get(form, 0) + 1
        return counts

    def _memory(self, memory):
        """The regions as the loop takes them, made again only when a region is mapped."""
        key = (id(memory), len(memory.regions))
        if key != self._memory_key:
            self._regions = self._memory_of(memory.regions)
            self._memory_key = key
        return self._regions

    @staticmethod
    def _memory_of(regions):
        from numba import types
        from numba.typed import List

        data = List.empty_list(types.Array(types.uint8, 1, "C"))
        for region in regions:
            data.append(np.frombuffer(region.data, dtype=np.uint8) if len(region.data) else np.zeros(0, np.uint8))
        return (data, np.array([r.start for r in regions], dtype=np.uint64),
                np.array([len(r.data) for r in regions], dtype=np.uint64),
                np.array([r.writable for r in regions], dtype=np.bool_))

    def run(self, state, memory, pc: int, budget: int) -> tuple[int, int, int]:
        R = np.array(state.x + [state.sp, state.nzcv], dtype=np.uint64)
        data, starts, sizes, writable = self._memory(memory)
        with compiled.first_compile_notice("arm_sme"):
            index, steps, status = _loop()(
                self.bodies, self.operands, R, state.z, state.p, state.za, state.sm, state.za_enabled, self.sve,
                data, starts, sizes, writable, self.index_of[pc], budget, self.count, self.scratch, self.operand1,
                self.operand2, self.sums)
        values = R.tolist()
        state.x[:] = values[:31]
        state.sp, state.nzcv = values[31], values[32]
        pc = self.end if index == self.count else self.addresses[index]
        return pc, steps, (compiled.ENDED, compiled.HANDBACK, compiled.BUDGET)[status]


def planted(body: int, operands: np.ndarray) -> np.ndarray:
    """A planted fault (the tests' proof that the identity check sees a wrong body): the operands of one
    instruction changed.  A branch goes to the end of the code (B), or decides the other way (the
    conditional ones); every other body gets the next register or tile as its first operand (the destination
    of most)."""
    operands = operands.copy()
    if body == B.BRANCH:
        operands[0] = B.TARGET_END
    elif body == B.BRANCH_COND:
        operands[1] ^= 1
    elif body in (B.COMPARE_BRANCH, B.TEST_BRANCH):
        operands[3] ^= 1
    elif body in (B.LOAD_MULTI, B.STORE_MULTI):
        operands[1] ^= 1  # the first register of the list (operand 0 is how many)
    else:
        operands[0] ^= 1
    return operands

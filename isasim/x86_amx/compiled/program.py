"""The x86 compiled program: a lowered program (lowering.py) run by the compiled loop (loop.py) over the
state, which it reads into arrays when a run starts and writes back before it returns.

What the Python side tracks beside the architectural state ends as a Python run leaves it: the TILECFG
checks that passed (state.checks_passed, by the same keys and values), start_row (no compiled body runs
while it is not 0, and none changes it), and no TMUL products waiting (the waiting ones are made before
the loop runs, which changes no bit: they wait on copies of their sources).  TILERELEASE and LDTILECFG,
which replace the configuration and note what a release discarded, have no compiled body.
"""

from __future__ import annotations

import numpy as np

from ...core import compiled as core_compiled
from ...core.compiled import CompiledProgram
from . import lowering

REGION_SLOTS = 8  # memory regions the loop reaches (accesses elsewhere hand back)
_NO_REGION = np.zeros(1, dtype=np.uint8)
_LOOP_NAME = "x86_amx"
_LOOP_MODULE = __name__.rsplit(".", 1)[0] + ".loop"


def _loop():
    """loop.py's run_loop and its tables (imported on first use: importing numba takes about 0.3 s)."""
    global _LOOP
    if _LOOP is None:
        from .loop import PARITY, run_loop
        from .tmul import fp16_widening_table

        _LOOP = run_loop, fp16_widening_table(), PARITY
    return _LOOP


_LOOP = None


_READY = False  # run_loop has run in this process (asking numba's dispatcher costs tens of microseconds)


def loop_ready() -> bool:
    """Whether run_loop is loaded in this process (compiled, or read from numba's cache)."""
    return _READY


class X86CompiledProgram(CompiledProgram):
    """``build``'s result: a program lowered for one CPU model, with some forms left to Python (``disabled``,
    form names as lowering.FORM_NAMES) and, for the tests, one deliberate difference (``plant``: a form
    name; the first instruction of that form perturbs its result, see loop.py)."""

    def __init__(self, program, model, disabled=(), plant: str | None = None):
        lowered = lowering.lowered(program, model)
        self.lowered = lowered
        self.model = model
        # (what depends on the program and these options alone is made once and kept on the lowering: the
        # fuzzer and the benchmarks build a Machine, so one of these, for every run of one program)
        self.forms, self.ops, self.limits, self.entry = _shared(lowered, model, tuple(disabled), plant)
        self._memory = None  # the memory whose regions' views are below, and how many regions it had
        self._regions: tuple = ()
        self._table = np.zeros((REGION_SLOTS, 3), dtype=np.int64)
        self._regions_used = 0
        self._tilecfg = None  # the TileConfig object the cfg array below was made from, and its start_row
        self._cfg = np.zeros(18, dtype=np.int64)
        # the registers' bits and the scalars, kept between runs (filled at each run's start)
        self._gpr = np.zeros(16, dtype=np.uint64)
        self._gpr_bits = self._gpr.view(np.int64)
        self._scalars = np.zeros(3, dtype=np.int64)
        # state.checks_passed as one byte per key (2: passed in the last run), valid while the state holds the
        # same dict with as many keys as after the last run (the semantics only add keys; a new TILECFG, a
        # restore, bring a new dict)
        self._passed = np.zeros(len(lowered.keys), dtype=np.int8) if lowered.keys else _NO_KEYS
        self._passed_of = (None, -1)
        self.steps_run = 0  # instructions this program's compiled runs executed (the tests' measure of coverage)

    def covers(self, pc: int) -> bool:
        index = self.lowered.index_of.get(pc)
        return index is not None and self.entry[index]

    def compiled_forms(self) -> dict[str, int]:
        names, counts = np.unique(self.forms[self.forms != lowering.NONE], return_counts=True)
        return {lowering.FORM_NAMES[int(n)]: int(c) for n, c in zip(names, counts)}

    # ---- the state as arrays ------------------------------------------------------------------------------
    def _region_views(self, memory):
        regions = memory.regions
        if self._memory is not memory or self._regions_used_of != len(regions):
            views, used = [], 0
            self._table[:] = 0
            for region in regions:
                if used == REGION_SLOTS or region.end > 1 << 63:
                    continue  # (an access there hands back)
                views.append(np.frombuffer(region.data, dtype=np.uint8))
                self._table[used] = region.start, region.end, int(region.writable)
                used += 1
            self._regions = tuple(views + [_NO_REGION] * (REGION_SLOTS - used))
            self._regions_used = used
            self._memory, self._regions_used_of = memory, len(regions)
        return self._regions

    _regions_used_of = -1

    def _cfg_of(self, tilecfg):
        if tilecfg is not self._tilecfg or tilecfg.start_row != self._cfg[1]:
            self._cfg[:] = [tilecfg.palette, tilecfg.start_row, *tilecfg.colsb, *tilecfg.rows]
            self._tilecfg = tilecfg
        return self._cfg

    def run(self, state, memory, pc: int, budget: int) -> tuple[int, int, int]:
        lowered = self.lowered
        start = lowered.index_of[pc]
        if memory.accesses is not None:  # (someone notes every access: the Python semantics do)
            return pc, 0, core_compiled.HANDBACK
        regions = self._region_views(memory)
        tiles = state.settled_tiles()  # (waiting TMUL products made now: the same bits as later)
        self._gpr[:] = state.gpr
        gpr = self._gpr_bits
        scalars = self._scalars
        scalars[0], scalars[1], scalars[2] = state.rflags, state.call_depth, 0  # (2: checks newly passed)
        keys, checks_passed = lowered.keys, state.checks_passed
        passed = self._passed
        if keys and (self._passed_of[0] is not checks_passed or self._passed_of[1] != len(checks_passed)):
            passed[:] = [key in checks_passed for key in keys]
        cfg = self._cfg_of(state.tilecfg)
        result = self._call(start, budget, gpr, scalars, cfg, tiles, regions, passed)
        _index, pc, steps, status = result
        self.steps_run += steps
        state.gpr[:] = self._gpr.tolist()
        state.rflags = int(scalars[0])
        if scalars[2]:
            config = state.tilecfg
            for slot in np.flatnonzero(passed == 2):
                key = keys[slot]
                if key[0] == "TMUL":
                    c, a = key[1], key[2]
                    checks_passed[key] = config.rows[c], config.colsb[a] // 4, config.colsb[c] // 4
                else:
                    checks_passed[key] = ()
                passed[slot] = 1
        if keys:
            self._passed_of = (checks_passed, len(checks_passed))
        return int(pc) % (1 << 64), int(steps), int(status)

    def _call(self, start, budget, gpr, scalars, cfg, tiles, regions, passed):
        run_loop, fp16_table, parity = _loop()
        lowered = self.lowered
        arguments = (self.forms, self.ops, lowered.addresses, lowered.count, start, budget, gpr, scalars, cfg,
                     self.limits, tiles, regions, self._table, self._regions_used, passed, fp16_table, parity)
        if _READY:
            return run_loop(*arguments)
        with core_compiled.first_compile_notice(_LOOP_NAME):  # (numba compiles it, or reads its cache)
            result = run_loop(*arguments)
        _ready()
        return result

    def ready(self) -> bool:
        return loop_ready()

    def warm_up(self) -> None:
        """Load the loop with a call that runs nothing (a budget of 0)."""
        if not loop_ready():
            tiles = np.zeros((8, 16, 64), dtype=np.uint8)
            gpr, scalars = np.zeros(16, dtype=np.int64), np.zeros(3, dtype=np.int64)
            self._call(0, 0, gpr, scalars, np.zeros(18, dtype=np.int64), tiles, (_NO_REGION,) * REGION_SLOTS,
                       _NO_KEYS)


def _ready() -> None:
    global _READY
    _READY = True


_NO_KEYS = np.zeros(0, dtype=np.int8)

# A compiled run costs about 10 us to enter and leave (the state into arrays and back, numba's call), and the
# Python semantics run a scalar instruction in 1-3 us: measured on the seed block, starting a compiled run
# for its last instruction alone (ret) cost more than it saved.  So a run starts only where the stretch of
# compiled instructions from there (in code order) holds a tile instruction (each costs tens of microseconds
# in Python), a branch (which may loop), or at least SHORT_STRETCH instructions; elsewhere the Python
# semantics run the instruction, and the next one is asked again.  (A compiled run once started goes on
# through every compiled instruction it meets: this only decides where runs start.)
SHORT_STRETCH = 8


def _entries(forms) -> np.ndarray:
    """Where a compiled run may start (see SHORT_STRETCH)."""
    count = len(forms)
    entry = np.zeros(count, dtype=bool)
    worth, length = False, 0  # of the stretch from the instruction after this one
    for i in range(count - 1, -1, -1):
        form = int(forms[i])
        if form == lowering.NONE:
            worth, length = False, 0
            continue
        length += 1
        worth = worth or form in lowering.TILE_FORMS or form in (lowering.JCC, lowering.JMP)
        entry[i] = worth or length >= SHORT_STRETCH
    return entry


def _shared(lowered, model, disabled: tuple, plant):
    """(forms, ops, limits, entries) of a lowering with these options, made once per lowering."""
    cache = lowered.__dict__.setdefault("_compiled_parts", {})
    key = (disabled, plant)
    parts = cache.get(key)
    if parts is None:
        forms, ops = lowered.forms, lowered.ops
        if disabled or plant:
            forms, ops = forms.copy(), ops.copy()
            for name in disabled:
                forms[forms == lowering.FORM_NUMBERS[name]] = lowering.NONE
            if plant:
                where = np.flatnonzero(forms == lowering.FORM_NUMBERS[plant])
                if len(where):
                    ops[where[0], lowering.PLANT] = 1
        limits = np.array([model.max_names, model.tmul_maxk, model.tmul_maxn], dtype=np.int64)
        parts = cache[key] = forms, ops, limits, _entries(forms)
    return parts

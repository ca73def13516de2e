"""The ``silicon`` backend: run a program on this machine's CPU and report what it did.

The same bytes the simulator decodes run on the real core, in a child process
the backend controls with ptrace, so a #UD, #GP or #PF is a report (with the
kind and the index of the faulting instruction) instead of a dead interpreter,
and a runaway loop is stopped by a timeout.  Pure ctypes: no compiler is needed.

How a run goes:

1. A child Python process asks the kernel for AMX tile permission
   (arch_prctl ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA), maps every init memory
   region at its exact address (whole pages, never over an existing mapping),
   maps the program's code at its own address with every RET replaced by INT3
   (and an INT3 after the last instruction), puts itself under ptrace
   (PTRACE_TRACEME) and stops.
2. The parent sets the child's registers to the init state (PTRACE_SETREGS, RIP
   at the first instruction) and either continues it to the end (``run``) or
   single-steps it (``lockstep``), reading the full state after each step:
   GPRs and RFLAGS (PTRACE_GETREGS), TILECFG and the tile data from the XSAVE
   image (PTRACE_GETREGSET NT_X86_XSTATE), and the mapped memory (/proc/PID/mem).
3. An INT3 stop is the end of the program (the simulator's RET); a SIGILL is #UD,
   a SIGSEGV with si_code SI_KERNEL is #GP, other SIGSEGVs are #PF at si_addr.

Safety: the backend runs only programs isasim encoded itself, and first runs the
simulator: a program whose simulated run faults at an address the child process
has mapped for its own use is refused before anything reaches the CPU.
"""

from __future__ import annotations

import os
import re
import signal
import time
from dataclasses import dataclass

from ...core.backends import Backend, Outcome
from ...core.errors import ConfigError, IsasimError, StepLimitExceeded
from ...core.faults import Fault
from ...core.machine import DEFAULT_STEP_LIMIT, Machine
from ...core.program import Program
from ...core.trace import Init
from ..config import CPU_MODELS, model_with_features, uses_amx
from ..faults import INVALID_OPCODE
from ..state import observed_arrays
from .host import CPU_NAMES, host_cpu, platform_problem
from .ptrace import PAGE, PTRACE_CONT, PTRACE_SINGLESTEP, ChildProcess, SiliconSnapshot, seeded_vectors


# What the host executes, which need not be what CPUID says: a hypervisor can clear a feature's CPUID bit
# but cannot stop the core executing the instruction (measured: a KVM guest reporting family 6 model 167
# without amx_fp16 runs TDPFP16PS).  One instruction per feature isasim can only learn so; the probe
# program configures tmm0-2 as 16 x 64 bytes, so the instruction itself is the only thing that can #UD.
AMX_PROBES = {"AMX-FP16": "tdpfp16ps tmm0, tmm1, tmm2", "AMX-COMPLEX": "tcmmimfp16ps tmm0, tmm1, tmm2",
              # issue 29's extensions (spec only until a host runs them): one instruction each
              "AMX-FP8": "tdphf8ps tmm0, tmm1, tmm2", "AMX-TF32": "tmmultf32ps tmm0, tmm1, tmm2",
              "AMX-MOVRS": "tileloaddrs tmm0, [rcx+riz*1]", "AMX-AVX512": "tilemovrow zmm0, tmm0, 0"}
PROBE_CONFIG = 0x20000000  # the probe's one page: its 64-byte TILECFG
EXECUTES_HIDDEN = "executes though CPUID hides it"


@dataclass(frozen=True)
class MeasuredAmx:
    """The AMX features this host executes, as measured, and how each probed one is known."""

    features: frozenset[str]  # what the host runs (CPUID's AMX features, corrected by the probes)
    sources: tuple[tuple[str, str], ...] = ()  # (feature, how it was found) for every feature in features
    absent: tuple[tuple[str, str], ...] = ()  # (feature, why not) for the probed features it does not run

    @property
    def hidden(self) -> list[str]:
        """Features the host executes while CPUID says it has none of them."""
        return [f for f, how in self.sources if how == EXECUTES_HIDDEN]

    def describe(self) -> str:
        """How the features were found, as a producer or a note says it: the probes' findings when they
        differ from CPUID, otherwise the features and "from CPUID"."""
        unusual = [f"{f} {how}" for f, how in self.sources if how != "CPUID"] + \
                  [f"{f} {why}" for f, why in self.absent if why != "raises #UD (as CPUID says)"]
        if unusual:
            return ", ".join(unusual)
        have = ", ".join(sorted(self.features)) or "none"
        return f"AMX features from CPUID: {have}" + "".join(f"; {f} raises #UD" for f, _ in self.absent)


def _probe_executes(line: str) -> Fault | None:
    """Run ``line`` once in the backend's child after a LDTILECFG of tmm0-2; the fault it raised, if any.
    The child is the one every program runs in (same AMX permission, same mappings), so what the probe
    sees is what a program would see."""
    from ..state import tile_config

    full = {t: (16, 64) for t in range(3)}
    program = Machine("x86_amx", {"cpu": "granite-rapids"}).assemble(f"ldtilecfg [rcx]\n{line}\nret")
    init = Init({"rcx": PROBE_CONFIG}, [(PROBE_CONFIG, tile_config(full).ljust(PAGE, b"\0"), False)])
    child = ChildProcess(program, init, True, 10.0)
    try:
        outcome, fault = child.resume(PTRACE_CONT)
        if outcome == "timeout":
            raise IsasimError(f"silicon backend: probing {line!r} did not finish")
        if fault is not None and child.get_regs().rip != program.instructions[1].address:
            raise IsasimError(f"silicon backend: the probe's LDTILECFG faulted ({fault.kind}: {fault.message})")
        return fault
    finally:
        child.kill()


_measured: MeasuredAmx | None = None


def host_amx() -> MeasuredAmx:
    """The host's AMX features as measured (once per process: a probe starts a child process).  With no
    usable AMX at all (no AMX-TILE in CPUID, or no XTILEDATA from the kernel) nothing is probed: the
    child could not configure tiles."""
    global _measured
    if _measured is None:
        cpuid = host_cpu().amx_features
        if not cpuid or platform_problem():
            _measured = MeasuredAmx(frozenset(cpuid))
        else:
            have, sources, absent = set(cpuid), {f: "CPUID" for f in cpuid}, []
            for feature, line in AMX_PROBES.items():
                fault = _probe_executes(line)
                if fault is None:
                    have.add(feature)
                    sources[feature] = "CPUID, and it executes" if feature in cpuid else EXECUTES_HIDDEN
                elif fault.kind == INVALID_OPCODE:
                    have.discard(feature)
                    sources.pop(feature, None)
                    absent.append((feature, "raises #UD though CPUID reports it" if feature in cpuid
                                   else "raises #UD (as CPUID says)"))
                else:
                    raise IsasimError(f"silicon backend: probing {feature} with {line!r} gave {fault.kind} "
                                      f"({fault.message}), neither a result nor #UD")
            _measured = MeasuredAmx(frozenset(have), tuple(sorted(sources.items())), tuple(absent))
    return _measured


def host_model() -> tuple[str | None, str]:
    """The isasim CPU model of this host and how it was chosen: by family and model when isasim knows
    them, otherwise by the AMX features the host executes (host_amx); None when neither names one."""
    host = host_cpu()
    if host.name in CPU_MODELS:
        return host.name, f"(family {host.family} model {host.model})"
    measured = host_amx()
    name = model_with_features(measured.features)
    if name is None:
        return None, f"(family {host.family} model {host.model})"
    return name, f"by its features (family {host.family} model {host.model}, {measured.describe()})"


class SiliconMemory:
    """Final memory as read from the child, with the Memory-like read()/is_mapped() the core uses."""

    def __init__(self, regions: list[tuple[int, bytes, bool]], contents: dict[int, bytes]):
        self.regions = [(a, contents.get(a, d)) for a, d, _w in regions]

    def is_mapped(self, address: int, size: int) -> bool:
        return any(a <= address and address + size <= a + len(d) for a, d in self.regions)

    def read(self, address: int, size: int) -> bytes:
        for a, d in self.regions:
            if a <= address and address + size <= a + len(d):
                return d[address - a : address - a + size]
        raise IsasimError(f"memory at {address:#x} was not mapped in the silicon run")


def observed_vectors(vectors: tuple[int, ...]) -> dict[str, bytes]:
    """Each zmm register that is not zero, as its 64 bytes: what X86AmxState.observed_vectors shows."""
    return {f"zmm{n}": value.to_bytes(64, "little") for n, value in enumerate(vectors) if value}


def observed_state(snap: SiliconSnapshot) -> dict:
    """The trace view of a silicon snapshot, shaped like X86Amx.observe()."""
    regs = dict(snap.regs)
    regs["rflags"] = snap.rflags
    arrays = {**observed_arrays(snap.tilecfg, snap.tiles), **observed_vectors(snap.vectors)}
    return {"regs": regs, "arrays": arrays,
            "raw": {"rip": snap.rip, "tilecfg": snap.tilecfg, "tiles": snap.tiles}}


class SiliconBackend(Backend):
    """This machine's CPU, through a ptrace-controlled child process."""

    name = "silicon"
    isa = "x86_amx"  # the ISA whose programs it runs
    timeout = 10.0

    def unavailable_reason(self, isa: str, program: Program | None = None) -> str | None:
        if isa != "x86_amx":
            return f"the silicon backend runs x86_amx only, not {isa}"
        problem = platform_problem()
        if problem:
            return problem
        if program is not None and uses_amx(program):
            return host_cpu().why_no_amx()
        return None

    def producer(self) -> str:
        """Which CPU ran the program: "silicon: emerald-rapids (family 6 model 207)" for a family and model
        isasim knows, "silicon: granite-rapids by its features (family 6 model 167, AMX-FP16 executes
        though CPUID hides it)" for one it names by what it measured (host_model), "silicon: unknown (...)"
        otherwise."""
        name, how = host_model()
        return f"silicon: {name or 'unknown'} {how}"

    def cpu_of_producer(self, producer: str) -> str | None:
        """The CPU model a silicon producer names by family and model (this backend's producer(), or
        the "family 6 model 207 (0xcf)" of the traces measured on Emerald Rapids), None if unknown.
        A producer that names its model only "by its features" names none here: features tell which
        instructions exist, not how the core sets the flags the SDM leaves undefined, and its family
        and model are a hypervisor's (so its undefined flags are not held against the model)."""
        found = re.search(r"\bfamily ([0-9]{1,9}) model ([0-9]{1,9})\b", producer) if producer.startswith("silicon: ") else None
        if found is None or int(found.group(1)) != 6:
            return None
        return CPU_NAMES.get(int(found.group(2)))

    def measured_elsewhere(self, producer: str, config: dict) -> bool | None:
        """Whether expectations from ``producer`` were measured on a CPU other than the one ``config``
        models (their undefined flags are then that CPU's choice); None if this backend did not write
        them.  A silicon producer whose CPU isasim does not model is elsewhere too."""
        if not producer.startswith("silicon: "):
            return None
        return self.cpu_of_producer(producer) != config.get("cpu")

    def _check(self, isa: str, config: dict, program: Program, init: Init, max_steps: int, *,
               honour_step_limit: bool = False) -> Fault | None:
        reason = self.unavailable_reason(isa, program)
        if reason:
            raise ConfigError(f"backend 'silicon' cannot run this program here: {reason}")
        tile_arrays = [name for name in init.arrays if not name.startswith("zmm")]
        if tile_arrays:
            # The child starts from the state its own code sets up; seeding tiles would need a prologue
            # of LDTILECFG and TILELOADDs that the program's instruction indices would have to skip.
            # (zmm registers it seeds through the XSAVE image: ChildProcess.set_vectors.)
            raise ConfigError("backend 'silicon' cannot seed init.arrays "
                              f"({', '.join(tile_arrays)}): load them with the program's own instructions")
        seeded_vectors(init)  # refused before anything runs if this core cannot hold them
        # Run the simulator first: the program must be one isasim validated, and a
        # fault it predicts must not land in the child's own memory.
        machine = Machine(isa, config)
        machine.load_init(program, init)
        try:
            return machine.run(max_steps).fault
        except StepLimitExceeded:
            # A free run on the CPU cannot count its instructions, so it honours the step limit
            # through the simulator's count: the same error the simulator gives, at once, instead
            # of running until the timeout.  Single-stepping counts on the CPU itself and stops at
            # the limit, and timing a repeated kernel checks only its first calls: both go on.
            if honour_step_limit:
                raise
            return machine.fault

    def _refuse_unsafe_fault(self, child: ChildProcess, sim_fault: Fault | None) -> None:
        if sim_fault is None or sim_fault.address is None:
            return
        page = sim_fault.address // PAGE * PAGE
        own = [(lo, hi) for lo, hi in child.mapped_pages() if lo <= page < hi]
        ours = any(a // PAGE * PAGE <= page < a + len(d) for a, d, _w in child.init.memory)
        if own and not ours:
            raise IsasimError(f"refusing to run on silicon: the program faults at {sim_fault.address:#x}, "
                              "which the backend's child process has mapped for its own use")

    def run(self, isa: str, config: dict, program: Program, init: Init, *,
            max_steps: int = DEFAULT_STEP_LIMIT, keep_records: bool = False) -> Outcome:
        sim_fault = self._check(isa, config, program, init, max_steps, honour_step_limit=True)
        child = ChildProcess(program, init, bool(host_cpu().amx_features), self.timeout)
        try:
            self._refuse_unsafe_fault(child, sim_fault)
            outcome, fault = child.resume(PTRACE_CONT)
            if outcome == "timeout":
                return Outcome({}, SiliconMemory(init.memory, {}), Fault(
                    "timeout", f"the program was still running after {self.timeout:g} s on silicon"), None,
                    timed_out=True)
            snap = child.snapshot()
            if fault is not None:
                fault.index = child.index_at(snap.rip)
                fault.pc = snap.rip
                fault.instruction = program.at(snap.rip).text if program.at(snap.rip) else None
            return Outcome(observed_state(snap), SiliconMemory(init.memory, snap.memory), fault, steps=None)
        finally:
            child.kill()

    def lockstep(self, isa: str, config: dict, program: Program, init: Init, *,
                 max_steps: int = DEFAULT_STEP_LIMIT):
        """Yield (index, pc, observed, memory, fault) after every instruction on silicon."""
        sim_fault = self._check(isa, config, program, init, max_steps)
        child = ChildProcess(program, init, bool(host_cpu().amx_features), self.timeout)
        try:
            self._refuse_unsafe_fault(child, sim_fault)
            for step in range(max_steps):
                regs = child.get_regs()
                rip = regs.rip
                ins = program.at(rip)
                if rip in child.stops and (rip == program.end or child.returns_inside(regs) is None):
                    if ins is not None:  # the RET itself: a step that changes nothing but ends the kernel
                        snap = child.snapshot()
                        yield step, rip, observed_state(snap), SiliconMemory(init.memory, snap.memory), None
                    return
                outcome, fault = child.resume(PTRACE_SINGLESTEP)
                if ins is not None and _repeats(ins):
                    # A repeated string instruction traps after every element with RIP still on it (the SDM's
                    # REP: "the instruction is restarted"); isasim's step is the whole loop: step to its end.
                    elements = 1
                    while outcome != "timeout" and fault is None and child.get_regs().rip == rip:
                        if elements >= REPEAT_STEP_LIMIT:
                            outcome = "timeout"
                            break
                        outcome, fault = child.resume(PTRACE_SINGLESTEP)
                        elements += 1
                if outcome == "timeout":
                    yield step, rip, {}, None, Fault("timeout", "a single step did not finish on silicon")
                    return
                snap = child.snapshot()
                if fault is not None:
                    fault.index, fault.pc = (ins.index if ins else None), rip
                    fault.instruction = ins.text if ins else None
                yield step, rip, observed_state(snap), SiliconMemory(init.memory, snap.memory), fault
                if fault is not None:
                    return
        finally:
            child.kill()


REPEAT_STEP_LIMIT = 1 << 20  # elements of one repeated string instruction stepped on silicon before giving up


def _repeats(instruction) -> bool:
    """Whether ``instruction`` is a string instruction behind a repeat prefix (one step of isasim's, many
    single-step traps of the CPU's)."""
    return bool(set(instruction.extra.get("prefixes", ())) & set(getattr(instruction.form, "repeat_prefixes", ())))


def time_on_silicon(program: Program, init: Init, *, timeout: float = 60.0, simulate_steps: int = 100_000) -> float:
    """Wall-clock seconds from resuming the child at the program's first instruction until it stops at
    the end: the program runs natively, so this is the silicon's time plus a fixed ptrace stop/wake cost
    (benchmarks cancel that by timing two repetition counts).  The program must end without a fault.
    The simulator checks its first ``simulate_steps`` instructions (a repeated kernel repeats the same
    accesses, so its first calls show what all of them touch)."""
    backend = SiliconBackend()
    fault = backend._check("x86_amx", {}, program, init, simulate_steps)
    if fault is not None:
        raise IsasimError(f"refusing to time a program that faults in the simulator: {fault.describe()}")
    child = ChildProcess(program, init, bool(host_cpu().amx_features), timeout)
    try:
        start = time.perf_counter()
        child._ptrace(PTRACE_CONT, None, None)
        _pid, status = os.waitpid(child.pid, 0)  # blocking: the end is seen at once
        elapsed = time.perf_counter() - start
        if not (os.WIFSTOPPED(status) and os.WSTOPSIG(status) == signal.SIGTRAP):
            raise IsasimError("silicon backend: the timed program did not end at its RET")
        return elapsed
    finally:
        child.kill()



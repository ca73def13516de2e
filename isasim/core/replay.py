"""Replaying a trace: run its program from its initial state and check every expectation.

The first difference is what a user needs: ``check`` returns the differences
in the order a reader would want them (per-step records first, then the fault,
then registers, the ISA's arrays and memory), each naming the location and both values.
"""

from __future__ import annotations


from .backends import Outcome, get_backend
from .backends import measured_elsewhere as produced_elsewhere
from .errors import ConfigError
from .compare import Difference, array_difference, memory_difference, register_differences
from .isa import get_isa
from .machine import DEFAULT_STEP_LIMIT
from .journal import write_value
from .trace import Trace

__all__ = ["Difference", "check", "check_steps", "replay", "step_json"]


def fault_kind(isa, kind: str) -> str:
    """A fault kind as the ISA spells it (a trace may write x86's ``#UD`` as ``UD``)."""
    return isa.fault_kind(kind.strip())


def check(trace: Trace, final: Outcome) -> list[Difference]:
    """Every expectation of ``trace`` that ``final`` does not meet, in reading order."""
    diffs: list[Difference] = []
    isa = get_isa(trace.isa)
    elsewhere = measured_elsewhere(isa, trace)
    if trace.steps is not None and final.records is not None:
        diffs += check_steps(trace.steps, final, isa, mask_undefined=elsewhere)
    undefined = undefined_at_end(isa, trace, final) if elsewhere else None
    expect = trace.expect
    if "fault" in expect:
        want = expect["fault"]
        got = final.fault
        if want is None and got is not None:
            diffs.append(Difference("expect.fault", "no fault", f"{got.kind} at instruction {got.index}: {got.rule}"))
        elif want is not None and (got is None or got.kind != fault_kind(isa, want["kind"]) or
                                   (want.get("index") is not None and got.index != want["index"])):
            where = "" if want.get("index") is None else f" at instruction {want['index']}"
            diffs.append(Difference("expect.fault", f"{want['kind']}{where}",
                                    "no fault" if got is None else f"{got.kind} at instruction {got.index}"))
    wanted_regs = expect.get("regs", {})
    diffs += register_differences(isa, wanted_regs, final.observed.get("regs", {}), undefined, list(wanted_regs),
                                  label="expect.regs.")
    actual_arrays = final.observed.get("arrays", {})
    for name, value in expect.get("arrays", {}).items():
        found = array_difference(isa, name, value, actual_arrays.get(name), final.observed, label="expect.arrays.")
        if found is not None:
            if found.b is None:
                found.detail = f"{trace.isa} does not hold {name} at the end of this run"
            diffs.append(found)
    for address, data in expect.get("memory", []):
        found = memory_difference(address, data, final.read_memory(address, len(data)), expected=True,
                                  views=trace.init.views)
        if found is not None:
            diffs.append(found)
    return diffs


def step_json(record) -> dict:
    out = {"index": record.index, "pc": hex(record.pc), "text": record.instruction.text,
           "writes": [{"kind": w.kind, "where": write_value(w.where), "old": write_value(w.old),
                       "new": write_value(w.new)} for w in record.writes]}
    if record.fault is not None:
        out["fault"] = {"kind": record.fault.kind, "rule": record.fault.rule}
    return out


def _is_number(value) -> bool:
    """Whether a step write's value is a number (a register, a field) rather than bytes: an int, or
    the "0x" text a trace holds it as (bytes are written as bare hex)."""
    if isinstance(value, int) and not isinstance(value, bool):
        return True
    return isinstance(value, str) and value.lower().startswith("0x")


def comparable_register(isa, name: str, value, undefined=None):
    """The part of a register value a comparison looks at: the ISA's ``comparable``, the one definition
    ``diff`` uses too (x86: RFLAGS on its status flags, so RF set by a fault's delivery is not compared),
    less what ``undefined`` (the ISA's token, see ``measured_elsewhere``) leaves undefined."""
    if isinstance(value, str):  # a step's write as the trace holds it: "0x202"
        try:
            value = int(value, 16) if value.lower().startswith("0x") else value
        except ValueError:
            return value
    if not isinstance(value, int) or isinstance(value, bool):
        return value
    return isa.comparable({"regs": {name: value}}, undefined)["regs"][name]


def measured_elsewhere(isa, trace: Trace) -> bool:
    """Whether a trace's expectations were measured on a machine other than the one the simulator models
    (recorded with --backend silicon on, say, an AMD host for an Emerald Rapids config).  What the
    architecture leaves undefined (IMUL's SF, ZF, AF, PF) is then that machine's choice, not a value the
    simulator claims, so it is left out, as ``diff`` leaves it out against such a machine.  A trace measured
    on the modelled machine, or recorded on the simulator, is compared on every bit."""
    return produced_elsewhere(trace.producer, isa.configure(trace.config))


def undefined_at_end(isa, trace: Trace, final: Outcome):
    """What the instructions the run executed leave undefined at its end (the ISA's token)."""
    from .diff import undefined_by
    from .machine import Machine

    records = final.records
    if not records:  # a plain run keeps no records: run it again, recording, to learn what it executed
        program = isa.assemble("\n".join(trace.program), source=f"{trace.source}:program")
        machine = Machine(trace.isa, isa.configure(trace.config))
        machine.load_init(program, trace.init)
        records = machine.run((final.steps or DEFAULT_STEP_LIMIT) + 1, keep_records=True).records
    return undefined_by(isa, [record.instruction for record in records])


def check_steps(steps: list[dict], final: Outcome, isa=None, *, mask_undefined: bool = False) -> list[Difference]:
    """Compare recorded per-step writes with the run's; stop at the first diverging step.  With
    ``mask_undefined`` what each step leaves undefined is not compared (``measured_elsewhere``)."""
    records = final.records
    undefined = None
    for i, want in enumerate(steps):
        label = f"steps[{i}]"
        if i >= len(records):
            return [Difference(label, f"a step ({want.get('text', '?')})", "the run had ended")]
        rec = records[i]
        label = f"step {i} ({rec.instruction.text})"
        if mask_undefined and isa is not None:
            undefined = isa.undefined_after(undefined, rec.instruction)
        got = {(w.kind, str(write_value(w.where))): write_value(w.new) for w in rec.writes}
        exp = {(w.get("kind"), str(w.get("where"))): w.get("new") for w in want.get("writes", [])}
        got_before = {(w.kind, str(write_value(w.where))): write_value(w.old) for w in rec.writes}
        exp_before = {(w.get("kind"), str(w.get("where"))): w.get("old") for w in want.get("writes", [])}
        for key in list(exp) + [k for k in got if k not in exp]:
            if isa is not None and _is_number(exp[key] if key in exp else got[key]):
                # a register-like value is compared as in expect.regs (the ISA's ``comparable``: x86
                # compares RFLAGS on its status flags).  A side that records no write kept the value
                # as it was (the other side's old value), so a write of bits that are not compared,
                # or are undefined, is no difference; the journal records only changes, so any other
                # missing write still differs.
                wanted = exp[key] if key in exp else got_before.get(key)
                actual = got[key] if key in got else exp_before.get(key)
                differs = (comparable_register(isa, key[1], wanted, undefined)
                           != comparable_register(isa, key[1], actual, undefined))
            else:
                differs = exp.get(key) != got.get(key)
            if differs:
                return [Difference(f"{label}: {key[0]} {key[1]}", exp.get(key), got.get(key))]
        want_fault = want.get("fault")
        if (want_fault is None) != (rec.fault is None) or (
            want_fault and fault_kind(isa, want_fault.get("kind", "")) != rec.fault.kind
        ):
            return [Difference(f"{label}: fault", want_fault and want_fault.get("kind"),
                               rec.fault and rec.fault.kind)]
    if len(records) > len(steps):
        rec = records[len(steps)]
        return [Difference(f"steps[{len(steps)}]", "the run to end", f"another step ({rec.instruction.text})")]
    return []


def replay(trace: Trace, backend: str = "sim", max_steps: int = DEFAULT_STEP_LIMIT) -> tuple[Outcome, list[Difference]]:
    isa = get_isa(trace.isa)
    config = isa.configure(trace.config)
    program = isa.assemble("\n".join(trace.program), source=f"{trace.source}:program")
    runner = get_backend(backend, trace.isa, program)
    try:
        final = runner.run(trace.isa, config, program, trace.init, max_steps=max_steps,
                           keep_records=trace.steps is not None)
    except ConfigError as error:  # the trace's initial state cannot be loaded (an unknown array, say)
        raise error.located(trace.source)
    return final, check(trace, final)


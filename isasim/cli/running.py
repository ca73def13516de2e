"""The commands that run a program and check or keep its result: ``run``, ``replay``, ``record`` and ``diff``.

    isasim run PROGRAM [--init INIT.json] [--cpu MODEL] [--show tmm0:int32] ...   (--cpu: x86_amx's option)
    isasim replay TRACE.json ...
    isasim record PROGRAM --init INIT.json -o OUT.trace.json
    isasim diff PROGRAM [--against BACKEND] [--lockstep]
"""

from __future__ import annotations

import json
from pathlib import Path

from ..core.arguments import positive_int
from ..core.errors import EXIT_DIFFERENT, EXIT_FAULT, EXIT_OK, IsasimError, UsageError
from ..core.isa import get_isa
from ..core.machine import DEFAULT_STEP_LIMIT, Machine
from ..core.render import console, layout_width, markup_safe, region_grid
from ..core.replay import check, replay, step_json
from ..core.trace import Init, Trace, expectations, parse_trace, read_trace, trace_json, write_trace
from .loading import Loaded, load_program_and_init
from .options import default_oracle, other_backends, parse_show
from .timeline_option import add_timeline_option, check_timeline, write_timeline


def register(subparsers, common) -> None:
    """Add run, replay, record and diff to the isasim command."""
    p = subparsers.add_parser("run", help="run a program and print the final state")
    common(p)
    p.add_argument("--show", action="append", metavar="ARRAY:TYPE",
                   help="show an array as int8/uint8/int16/uint16/int32/uint32/bf16/fp16/fp32, e.g. tmm0:int8 "
                        "(repeatable)")
    p.add_argument("--hex", action="store_true", help="show array elements in hex")
    p.add_argument("--all-rows", action="store_true",
                   help="print every row of a large region (by default the first and last 16 of more than 32)")
    p.add_argument("--region", action="append", metavar="NAME",
                   help="show this named memory region of the init file (repeatable; default: those not marked "
                        "\"show\": false)")
    add_timeline_option(p)
    p.add_argument("--force", action="store_true", help="overwrite the --timeline file if it exists")
    p.set_defaults(func=cmd_run)

    p = subparsers.add_parser("replay", help="replay trace files and check their expectations")
    p.add_argument("traces", nargs="+", metavar="TRACE", help="trace files (.json) to replay")
    p.add_argument("--backend", default="sim", help=f"where to replay: sim (default) or {other_backends()}")
    p.add_argument("--max-steps", type=positive_int, default=DEFAULT_STEP_LIMIT,
                   help="stop with an error after this many instructions (default %(default)s)")
    p.add_argument("--max-report", type=positive_int, default=10,
                   help="differences to list per trace (default %(default)s)")
    p.add_argument("--no-color", action="store_true", help="plain text output")
    add_timeline_option(p)
    p.add_argument("--force", action="store_true", help="overwrite the --timeline file if it exists")
    p.set_defaults(func=cmd_replay)

    p = subparsers.add_parser("record", help="run a program on a backend and write a trace of the result")
    common(p)
    p.add_argument("-o", "--output", required=True, help="trace file to write (never overwritten without --force)")
    p.add_argument("--backend", default="sim", help=f"where to run: sim (default) or {other_backends()}")
    p.add_argument("--producer", help="who produced the expectations (default: the backend)")
    p.add_argument("--steps", action="store_true", help="also record every step's writes")
    p.add_argument("--force", action="store_true", help="overwrite an existing output file")
    p.set_defaults(func=cmd_record)

    p = subparsers.add_parser("diff", help="run a program on two backends and report the first divergence")
    common(p)
    p.add_argument("--against", help=f"the other backend (default: the ISA's oracle; {other_backends()})")
    p.add_argument("--backend", default="sim", help="the first backend (default sim)")
    p.add_argument("--lockstep", action="store_true", help="compare after every instruction")
    p.set_defaults(func=cmd_diff)


def cmd_run(args) -> int:
    loaded = load_program_and_init(args)
    isa_name, config, program, init = loaded.isa_name, loaded.config, loaded.program, loaded.init
    element_types = parse_show(args.show, isa_name)
    check_timeline(args, isa_name, inputs=(args.program, args.init))
    if loaded.trace is not None:
        # A trace runs exactly as `replay` runs it (its per-step records kept when it has steps) and is
        # checked by the same code, so `run` and `replay` cannot give two verdicts on one trace.
        from dataclasses import replace

        result, diffs = replay(replace(loaded.trace, config=config), max_steps=args.max_steps)
    else:
        from ..core.backends import SimulatorBackend

        result, diffs = SimulatorBackend().run(isa_name, config, program, init, max_steps=args.max_steps), []
        if loaded.expect is not None:  # the init file's expectations, checked by the code that checks a trace's
            expect, producer = loaded.expect
            lines = [ins.text for ins in program.instructions]
            diffs = check(Trace(isa_name, lines, config, producer, init, expect, None, args.init), result)
    machine = result.machine
    out = console(color=not args.no_color)
    out.print(f"[bold]{markup_safe(args.program)}[/bold]: {result.steps} "
              f"instruction{'' if result.steps == 1 else 's'} on {markup_safe(get_isa(isa_name).config_title(config))}")
    width = layout_width(out)
    out.print(machine.isa.render_state(machine.state, program, element_types=element_types, hex_values=args.hex,
                                       width=width))
    for view in init.views:
        if view.name in (args.region or []) or (not args.region and view.show):
            out.print(region_grid(machine.memory, view, hex_values=args.hex, width=width, all_rows=args.all_rows))
    if result.fault is not None:
        out.print(f"[bold red]fault[/bold red] {markup_safe(result.fault.describe())}")
        beside = initial_state_beside(args, loaded)
        if beside is not None:  # an example's registers and memory live in the trace next to it
            out.print(f"{args.program} ran with no --init (no registers set, no memory mapped); its initial "
                      f"state is in {beside}: run that (isasim run {beside}), or give --init", markup=False,
                      soft_wrap=True)
    write_timeline(args, machine, out)
    checked = (args.program, loaded.trace.producer) if loaded.trace is not None and (
        loaded.trace.expect or loaded.trace.steps is not None) else None  # what the result must be
    if loaded.expect is not None and loaded.expect[0]:
        checked = (args.init, loaded.expect[1])
    if checked is not None:
        where, producer = checked
        if diffs:
            out.print(f"[bold red]FAIL[/bold red]: {markup_safe(diffs[0].describe())}")
            return EXIT_DIFFERENT
        out.print(f"[bold green]PASS[/bold green]: every expectation of {markup_safe(where)} holds"
                  + (f" ({markup_safe(producer)})" if producer else ""))
        return EXIT_OK
    return EXIT_FAULT if result.fault is not None else EXIT_OK


def initial_state_beside(args, loaded: Loaded) -> str | None:
    """For an assembly file run without --init, the trace beside it (X.s -> X.trace.json) that holds
    its initial state, if there is one."""
    if loaded.trace is not None or args.init or getattr(args, "function", None) is not None:
        return None
    path = Path(args.program)
    beside = path.with_name(path.stem + ".trace.json")
    return str(beside) if path.suffix == ".s" and beside.is_file() else None


def cmd_replay(args) -> int:
    worst = EXIT_OK
    out = console(color=not args.no_color)
    if getattr(args, "timeline", None):  # (a caller may build its own Namespace without it)
        if len(args.traces) != 1 or args.backend != "sim":
            raise UsageError("--timeline writes the simulator's run of one trace: give one TRACE and no --backend")
        check_timeline(args, read_trace(args.traces[0]).isa, inputs=tuple(args.traces))
    for path in args.traces:
        trace = read_trace(path)
        final, diffs = replay(trace, backend=args.backend, max_steps=args.max_steps)
        if final.machine is not None:
            write_timeline(args, final.machine, out)
        if diffs:
            worst = EXIT_DIFFERENT
            out.print(f"[bold red]DIFFERENT[/bold red] {markup_safe(path)}: {markup_safe(diffs[0].describe())}")
            for d in diffs[1:args.max_report]:
                out.print(f"    {d.describe()}", markup=False)
            if len(diffs) > args.max_report:
                out.print(f"    ... {len(diffs) - args.max_report} more")
        else:
            out.print(f"[bold green]ok[/bold green] {markup_safe(path)} ({final.steps} steps"
                      + (f", fault {final.fault.kind} at instruction {final.fault.index}" if final.fault else "") + ")")
    return worst


def cmd_record(args) -> int:
    from ..core.backends import get_backend
    from ..core.output import check_outputs

    # say so before a run that may take long
    check_outputs({"-o": args.output}, force=args.force, inputs=(args.program, args.init))
    loaded = load_program_and_init(args)
    isa_name, config, program, init = loaded.isa_name, loaded.config, loaded.program, loaded.init
    backend = get_backend(args.backend, isa_name, program)
    final = backend.run(isa_name, config, program, init, max_steps=args.max_steps, keep_records=args.steps)
    # A trace says where a run ended; a run that did not end, or faulted at no instruction of the
    # program, has nothing a trace can hold: say what happened to this program, write nothing.
    if final.timed_out:
        raise IsasimError(f"not recorded: {final.fault.rule} (a loop that never ends?); no trace was written",
                          source=args.program)
    if final.fault is not None and final.fault.index is None:
        raise IsasimError(f"not recorded: the {args.backend} run faulted outside the program's instructions "
                          f"({final.fault.describe()}); no trace was written", source=args.program)
    step_records = [step_json(r) for r in final.records] if args.steps else None
    if args.steps and args.backend != "sim":
        step_records = steps_from_lockstep(backend, isa_name, config, program, init, args.max_steps)
    expect = expectations(final, init)
    isa = get_isa(isa_name)
    lines = [isa.source_line(ins) for ins in program.instructions]
    labelled = []
    for ins, line in zip(program.instructions, lines):
        name = program.label_at(ins.address)
        labelled.append(f"{name}: {line}" if name else line)
    producer = args.producer or backend.producer()
    trace = Trace(isa_name, labelled, config, producer, init, expect, step_records)
    # the recorded program must replay to the same result before it is written
    try:
        _final, diffs = replay(parse_trace(json.loads(json.dumps(trace_json(trace))), args.output),
                               max_steps=args.max_steps)
    except IsasimError as error:  # not the user's file: it was never written
        raise IsasimError(f"not recorded: the trace of this run would not read back ({error}); "
                          f"nothing was written to {args.output}", source=args.program) from None
    if diffs and args.backend == "sim":
        raise IsasimError(f"the recorded trace does not replay on the simulator ({diffs[0].describe()})")
    write_trace(trace, args.output, force=args.force)
    steps = f" ({final.steps} steps)" if final.steps is not None else ""
    console(color=not args.no_color).print(f"wrote {args.output}{steps}, expectations from {producer}")
    return EXIT_OK


def steps_from_lockstep(backend, isa_name: str, config: dict, program, init: Init, max_steps: int) -> list[dict]:
    """Per-step records from another backend (silicon): its state after every instruction, and the
    writes that lead from one state to the next."""
    from types import SimpleNamespace

    isa = get_isa(isa_name)
    start = Machine(isa_name, config)
    start.load_init(program, init)
    state, steps = start.state, []
    from ..core.backends import lockstep

    for index, pc, observed, memory, fault in lockstep(backend, isa_name, config, program, init, max_steps=max_steps):
        state, writes = isa.state_from_observed(observed, state, memory, init)
        record = SimpleNamespace(index=index, pc=pc, instruction=program.at(pc), writes=writes, fault=fault)
        steps.append(step_json(record))
    return steps


def cmd_diff(args) -> int:
    from ..core.diff import diff

    loaded = load_program_and_init(args)
    against = args.against or default_oracle(get_isa(loaded.isa_name))
    report = diff(loaded.isa_name, loaded.config, loaded.program, loaded.init, a=args.backend, b=against,
                  mode="lockstep" if args.lockstep else "final", max_steps=args.max_steps)
    out = console(color=not args.no_color)
    if report.identical:
        end = f", both end with {report.a_fault.kind} at instruction {report.a_fault.index}" if report.a_fault else ""
        out.print(f"[bold green]identical[/bold green]: {args.backend} and {against} agree "
                  f"({report.mode}, {report.steps} instructions{end})")
        return EXIT_OK
    d = report.divergence
    out.print(f"[bold red]DIVERGENCE[/bold red] {markup_safe(d.describe(args.backend, against))}")
    if report.mode == "lockstep" and d.index is not None:  # in a loop, which run of the instruction it was
        out.print(f"  at step {d.index} (0-based) of the run", markup=False)
    if d.array is not None and isinstance(d.a, (bytes, bytearray)) and isinstance(d.b, (bytes, bytearray)):
        out.print(side_by_side_row(d.a, d.b, args.backend, against))
    return EXIT_DIFFERENT


def side_by_side_row(a: bytes, b: bytes, name_a: str, name_b: str):
    """Two differing parts of an array (x86: tile rows) as dwords, one above the other, differing ones highlighted."""
    from rich.table import Table
    from rich.text import Text

    table = Table(box=None, padding=(0, 1, 0, 0))
    count = min(len(a), len(b)) // 4
    table.add_column("")
    for i in range(count):
        table.add_column(str(i), justify="right")
    for name, data, other in ((name_a, a, b), (name_b, b, a)):
        cells = []
        for i in range(count):
            word, twin = data[4 * i : 4 * i + 4], other[4 * i : 4 * i + 4]
            cells.append(Text(word[::-1].hex(), style="bold red" if word != twin else "dim"))
        table.add_row(name, *cells)
    return table


"""The ``isasim`` command.

    isasim run PROGRAM [--init INIT.json] [--cpu MODEL] [--show tmm0:int32] ...   (--cpu: x86_amx's option)
    isasim replay TRACE.json ...
    isasim record PROGRAM --init INIT.json -o OUT.trace.json
    isasim asm PROGRAM          (listing: address, bytes, text)
    isasim disasm HEX           (e.g. "c4e2705e c2" or a file with --file)

Exit status: 0 success; 1 a replay found a difference; 2 bad input (one line on
stderr naming the file, line and rule); 3 the simulated program raised an
architectural fault (``run``).  Never a traceback: an unexpected internal error
is reported in one line too (set ISASIM_DEBUG=1 to see the traceback).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
from dataclasses import dataclass
from pathlib import Path

from .core import arguments
from .core.arguments import duration, non_negative_int, positive_int, seconds
from .core.errors import (EXIT_BAD_INPUT, EXIT_DIFFERENT, EXIT_FAULT, EXIT_OK, IsasimError, TraceFormatError,
                          UsageError)
from .core.isa import DEFAULT_ISA, get_isa, registered_isas
from .core.machine import DEFAULT_STEP_LIMIT
from .core.program import Program
from .core.render import console, layout_width, markup_safe, region_grid
from .core.replay import check, replay, step_json
from .core.trace import (Init, Trace, expectations, load_json, parse_expect, parse_init, parse_trace, printable,
                         read_trace, trace_json, write_trace)

class _Parser(argparse.ArgumentParser):
    def error(self, message: str):  # argparse would print usage and exit 2; keep it one line
        raise UsageError(f"{message} (see 'isasim {self.prog.split()[-1]} --help')"
                         if " " in self.prog else f"{message} (see 'isasim --help')")


def read_text(path: str) -> str:
    try:
        return Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise IsasimError("no such file", source=path) from None
    except IsADirectoryError:
        raise IsasimError("is a directory, not a file", source=path) from None
    except UnicodeDecodeError:
        raise IsasimError("not a UTF-8 text file", source=path) from None
    except OSError as error:
        raise IsasimError(f"cannot read ({error.strerror})", source=path) from None


def is_trace_file(path: str) -> bool:
    return path.endswith(".json")


ELF_MAGIC = b"\x7fELF"


def is_object_file(path: str) -> bool:
    """Whether ``path`` starts with the ELF magic (a compiler's .o or a linked program)."""
    try:
        with open(path, "rb") as file:
            return file.read(4) == ELF_MAGIC
    except OSError:  # read_text says what is wrong with it
        return False


@dataclass(frozen=True)
class Loaded:
    """What a command's PROGRAM (and --init) load into: the ISA, its configuration, the program, its initial
    state, the trace PROGRAM is (None for assembly or an object file), and the init file's expectations
    with their producer (None where it has none; `run` checks them)."""

    isa_name: str
    config: dict
    program: Program
    init: Init
    trace: Trace | None
    expect: tuple[dict, str] | None


def load_program_and_init(args) -> Loaded:
    """PROGRAM is assembly (with --init for the initial state), a trace file, or an object file (ELF)
    whose function --function names, loaded by the ISA's ``load_object`` hook."""
    trace = None
    expect = None  # what an init file says the run must end with (its "expect"), checked by `run`
    function = getattr(args, "function", None)
    obj = not is_trace_file(args.program) and is_object_file(args.program)
    if function is not None and not obj:
        raise UsageError(f"--function names a function of an object file, and {args.program} is "
                         f"{'a trace' if is_trace_file(args.program) else 'not an ELF object file'}")
    if obj:
        isa = get_isa(args.isa)
        if not isa.elf_machines:
            with_hook = [name for name in registered_isas() if get_isa(name).elf_machines]
            raise UsageError(f"{args.program} is an ELF object file, and isasim cannot load one for {args.isa} "
                             f"(it can for: {', '.join(with_hook) or 'no ISA'})")
        if function is None:
            raise UsageError(f"{args.program} is an ELF object file: name the function to run with --function NAME")
    if is_trace_file(args.program):
        trace = read_trace(args.program)
        config = dict(trace.config)
        text, source, init = "\n".join(trace.program), f"{args.program}:program", trace.init
        isa_name = trace.isa
    else:
        text, source = ("", args.program) if obj else (read_text(args.program), args.program)
        isa_name, config, init = args.isa, {}, Init()
        if args.init:
            data = load_json(args.init)
            try:
                init = parse_init(data.get("init", data) if isinstance(data, dict) and "format" in data else data)
            except IsasimError as error:
                raise error.located(args.init)
            if isinstance(data, dict) and isinstance(data.get("config"), dict):
                config.update(data["config"])
            expect = init_expectations(data, args.init)
    state_source = args.program if trace is not None else (args.init or args.program)
    isa = get_isa(isa_name)
    given = config_from_options(args, isa)
    config.update(given)
    try:
        config = isa.configure(config)
    except IsasimError as error:
        raise error if given else error.located(state_source)
    if obj:
        program, init = isa.load_object(args.program, function, init)
    else:
        if init.args:
            raise IsasimError("init.args: arguments are for a function of an object file (--function); "
                              "give an assembly program its registers in init.regs", source=state_source)
        program = isa.assemble(text, source=source)
    isa.check_program(program, config)  # what the configuration rules out is refused before anything runs
    from .core.machine import Machine

    try:  # every register, region and array the file names must exist before anything runs or prints
        Machine(isa_name, config).load_init(program, init)
    except IsasimError as error:
        raise error.located(state_source)
    return Loaded(isa_name, config, program, init, trace, expect)


def init_expectations(data, source: str) -> tuple[dict, str] | None:
    """An init file's ``"expect"`` (the format of a trace's) and ``"producer"`` (who worked the expectations
    out), or None where it has none: `run` then checks the end of the run as it checks a trace's."""
    if not isinstance(data, dict) or data.get("expect") is None:
        return None
    producer = data.get("producer", "")
    try:
        if not isinstance(producer, str):
            raise TraceFormatError("producer: must be a string (who worked the expectations out)")
        return parse_expect(data["expect"]), producer
    except IsasimError as error:
        raise error.located(source)


def config_options() -> dict[str, tuple[str, list]]:
    """Every registered ISA's configuration options: flag -> (configuration key, the ISAs that take it)."""
    options: dict[str, tuple[str, list]] = {}
    for name in registered_isas():
        for option in get_isa(name).config_options:
            options.setdefault(option.flag, (option.key, []))[1].append(name)
    return options


def other_backends() -> str:
    """The backends beside the simulator, by ISA, for help texts ("x86_amx: silicon")."""
    from .core.backends import BACKENDS

    for name in registered_isas():
        get_isa(name)  # importing an ISA registers its backends
    by_isa = {name: ", ".join(b.name for b in BACKENDS.values() if b.name != "sim" and serves(b, name))
              for name in registered_isas()}
    return "; ".join(f"{name}: {names or 'none yet (no independent executable reference)'}"
                     for name, names in by_isa.items())


def serves(backend, isa_name: str) -> bool:
    """Whether ``backend`` is one of ``isa_name``'s (a backend names its ISA; the simulator serves all)."""
    return backend.serves(isa_name)


def default_oracle(isa) -> str:
    """The backend ``diff`` compares the simulator with unless --against names one (x86_amx: silicon)."""
    oracle = isa.default_oracle
    if oracle is None:
        raise UsageError(f"{isa.name} has no default backend to compare with: give --against")
    return oracle


def machine_title(isa_name: str, config: dict) -> str:
    """What a run is on, in the ISA's words (x86_amx: the CPU model)."""
    return get_isa(isa_name).config_title(config)


def config_dest(flag: str) -> str:
    return "config_" + flag.lstrip("-").replace("-", "_")


def add_config_options(parser) -> None:
    """Every registered ISA's configuration options (--cpu, --svl, ...) on ``parser``."""
    for flag, (_key, isas) in config_options().items():
        option = next(o for o in get_isa(isas[0]).config_options if o.flag == flag)
        parser.add_argument(flag, dest=config_dest(flag), metavar=option.metavar,
                            help=f"{' and '.join(isas)}: {option.help}")


def config_from_options(args, isa) -> dict:
    """The configuration keys set on the command line, each checked to be one ``isa`` (an Isa or its
    name) takes."""
    name = isa if isinstance(isa, str) else isa.name
    given = {}
    for flag, (key, isas) in config_options().items():
        value = getattr(args, config_dest(flag), None)
        if value is None:
            continue
        if name not in isas:
            raise UsageError(f"{flag} is an option of {' and '.join(isas)}, not of {name}")
        given[key] = value
    return given


def parse_show(specs: list[str], isa_name: str) -> dict[str, str]:
    """--show VIEW:TYPE choices as {array name: element type}; each ISA knows its views (x86_amx: tmmN:TYPE)."""
    types = {}
    for spec in specs or []:
        for item in spec.split(","):
            try:
                name, element = get_isa(isa_name).parse_show(item)
            except ValueError as error:
                raise UsageError(f"--show {item!r}: {error}") from None
            types[name] = element
    return types


# ---- commands -------------------------------------------------------------------------


def cmd_run(args) -> int:
    loaded = load_program_and_init(args)
    isa_name, config, program, init = loaded.isa_name, loaded.config, loaded.program, loaded.init
    element_types = parse_show(args.show, isa_name)
    if loaded.trace is not None:
        # A trace runs exactly as `replay` runs it (its per-step records kept when it has steps) and is
        # checked by the same code, so `run` and `replay` cannot give two verdicts on one trace.
        from dataclasses import replace

        result, diffs = replay(replace(loaded.trace, config=config), max_steps=args.max_steps)
    else:
        from .core.backends import SimulatorBackend

        result, diffs = SimulatorBackend().run(isa_name, config, program, init, max_steps=args.max_steps), []
        if loaded.expect is not None:  # the init file's expectations, checked by the code that checks a trace's
            expect, producer = loaded.expect
            lines = [ins.text for ins in program.instructions]
            diffs = check(Trace(isa_name, lines, config, producer, init, expect, None, args.init), result)
    machine = result.machine
    out = console(color=not args.no_color)
    out.print(f"[bold]{markup_safe(args.program)}[/bold]: {result.steps} "
              f"instruction{'' if result.steps == 1 else 's'} on {markup_safe(machine_title(isa_name, config))}")
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
    for path in args.traces:
        trace = read_trace(path)
        final, diffs = replay(trace, backend=args.backend, max_steps=args.max_steps)
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
    from .core.backends import get_backend
    from .core.output import check_outputs

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


def cmd_diff(args) -> int:
    from .core.diff import diff

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


def cmd_fuzz(args) -> int:
    from rich.table import Table

    isa = get_isa(args.isa)
    try:
        subsets = tuple(isa.fuzz_subsets)  # from the ISA (its fuzzer may need hypothesis)
    except ImportError as error:
        raise IsasimError(f"isasim fuzz needs hypothesis ({error}); install it with: pip install hypothesis") from None
    if not subsets:
        raise UsageError(f"ISA {args.isa} has no fuzzer")
    endless = args.until_divergence or args.duration is not None
    cases = args.cases if args.cases is not None else (None if endless else 200)
    if cases is not None and cases < 1:
        raise UsageError("--cases must be at least 1")
    if args.fresh and args.out is None:
        raise UsageError("--fresh starts the campaign kept in --out DIR over: give --out too")
    from .core.parallel import pool_from_options

    # a cluster is opened here (a malformed address: one line, before anything runs); local processes are
    # the campaign's own, as many as it has shards
    pool = pool_from_options(args) if args.cluster is not None else None
    against = args.against or default_oracle(isa)
    try:
        if args.only is not None and args.only not in subsets:
            raise UsageError(f"argument --only: invalid choice for {args.isa}: '{args.only}' (choose from "
                             f"{', '.join(subsets)}) (see 'isasim fuzz --help')")
        with _campaign_progress(cases, color=not args.no_color) as progress:
            summary = isa.run_fuzz(cases, args.seed, against=against, isa_subset=args.only,
                                   config=config_from_options(args, isa),
                                   lockstep=args.lockstep, out_dir=args.out or ".", shrink_seconds=args.shrink_seconds,
                                   draw=args.draw, workers=args.workers, pool=pool, progress=progress,
                                   max_divergences=1 if args.until_divergence else 3, duration=args.duration,
                                   journal=args.out is not None, fresh=args.fresh)
    except ImportError as error:
        raise IsasimError(f"isasim fuzz needs hypothesis ({error}); install it with: pip install hypothesis") from None
    finally:
        if pool is not None:
            pool.close()
    out = console(color=not args.no_color)
    # a subset drawn otherwise than with hypothesis is named so: its --seed means other programs
    drawn = {subset for subset, way in summary.draws.items() if way != "hypothesis"}
    ran = ", ".join(f"{subset} {count}" + (f" drawn with {summary.draws[subset]}" if subset in drawn else "")
                    for subset, count in summary.cases.items())
    head = (f"fuzz {summary.isa}: {summary.total_cases} programs ({ran}) on sim and {summary.b}, {summary.mode}, "
            f"seed {summary.seed}, on {summary.where}")
    if summary.divergences:
        d = summary.divergences[0]
        out.print(f"[bold red]DIVERGENCE[/bold red] {head}: {d.subset} case {d.case}"
                  + (f", shrunk from {d.original_size} to {len(d.program) - 1} instructions" if d.shrunk else ""))
        out.print(f"  {d.description}", markup=False)
        out.print("  program:")
        for line in d.program:
            out.print(f"    {line}", markup=False)
        for note in d.notes:
            out.print(f"  ({note})", markup=False)
        if d.worker:
            out.print(f"  found on: {d.worker}", markup=False)
        out.print(f"  trace: {d.trace}  (check it with: isasim replay {d.trace})", markup=False)
        if len(summary.divergences) > 1:
            out.print(f"  {len(summary.divergences) - 1} more: " + ", ".join(x.trace for x in summary.divergences[1:]),
                      markup=False)
        for note in summary.notes:
            out.print(note, markup=False)
        return EXIT_DIFFERENT
    out.print(f"[bold green]no divergence[/bold green]: {head} ({summary.seconds:.1f} s)")
    table = Table(box=None, padding=(0, 2, 0, 0))
    table.add_column("form")
    table.add_column("instructions compared", justify="right")
    if summary.elements:
        table.add_column("elements compared", justify="right")
    for form, count in sorted(summary.instructions.items(), key=lambda kv: -kv[1]):
        elements = summary.elements.get(form)
        table.add_row(form, str(count), *([str(elements or "")] if summary.elements else []))
    table.add_row("[bold]total[/bold]", f"[bold]{summary.total_instructions}[/bold]",
                  *([f"[bold]{sum(summary.elements.values())}[/bold]"] if summary.elements else []))
    out.print(table)
    for subset, reason in summary.skipped.items():
        out.print(f"{subset} programs not fuzzed: {summary.b} cannot run them here ({reason})", markup=False)
    if len(summary.hosts) > 1 or summary.where != "this process":
        for host, shards in sorted(summary.hosts.items()):
            out.print(f"ran on {host}: {shards} shard{'s' * (shards != 1)}", markup=False)
    for note in summary.notes:
        out.print(note, markup=False)
    return EXIT_OK


class _campaign_progress:
    """A progress bar on the terminal (stderr), cases and cases per second, while a campaign runs; nothing
    when stderr is not a terminal.  Used as ``with _campaign_progress(cases) as progress``: progress is the
    campaign's callback, or None."""

    def __init__(self, cases: int | None, *, color: bool = True):
        self.cases, self.color, self.bar = cases, color, None

    def __enter__(self):
        if not sys.stderr.isatty():
            return None
        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

        self.bar = Progress(TextColumn("fuzz"), BarColumn(), MofNCompleteColumn(), TextColumn("programs"),
                            TextColumn("{task.fields[rate]}"), TextColumn("{task.fields[found]}"), TimeElapsedColumn(),
                            console=Console(stderr=True, no_color=not self.color), transient=True)
        self.bar.start()
        self.task = self.bar.add_task("fuzz", total=self.cases, rate="", found="")
        return self.update

    def update(self, summary) -> None:
        rate = summary.total_cases / max(1e-9, self._elapsed())
        found = f"{summary.divergent_cases} divergent" if summary.divergent_cases else ""
        self.bar.update(self.task, completed=summary.total_cases, rate=f"{rate:,.0f}/s", found=found)

    def _elapsed(self) -> float:
        return self.bar.tasks[0].elapsed or 0.0

    def __exit__(self, *_exc) -> None:
        if self.bar is not None:
            self.bar.stop()


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


def cmd_step(args) -> int:
    from .core.stepper import Stepper, run_scripted_session, session_console

    loaded = load_program_and_init(args)
    isa_name, config, program, init = loaded.isa_name, loaded.config, loaded.program, loaded.init
    if args.svg:
        from .core.output import check_outputs

        check_outputs({"--svg": args.svg}, force=args.force,  # before the session, not after it
                      inputs=(args.program, args.init, args.commands_file))
        if args.commands is None and not args.commands_file:
            raise UsageError("--svg records a scripted session: give --commands or --commands-file")
    out = session_console(color=not args.no_color, svg=args.svg, svg_width=args.svg_width)
    stepper = Stepper(isa_name, config, program, init, out=out, max_steps=args.max_steps, against=args.against,
                      backend=args.backend, element_types=parse_show(args.show, isa_name), hex_values=args.hex)
    count = len(program.instructions)
    out.print(f"[bold]{markup_safe(args.program)}[/bold]: {count} instruction{'' if count == 1 else 's'} on "
              f"{markup_safe(machine_title(isa_name, config))}"
              + (f", checked against {markup_safe(args.against)}" if args.against else "")
              + (f", stepping on {markup_safe(args.backend)}" if args.backend != "sim" else ""))
    out.print("[dim]commands: s [N], c, back [N], b LOC, w LOC, p WHAT [TYPE], l, i, help, q[/dim]")
    stepper.show_position()
    script = args.commands
    if args.commands_file:
        script = read_text(args.commands_file)
    if script is not None:
        run_scripted_session(stepper, script, svg=args.svg, title=f"isasim step {Path(args.program).name}",
                             force=args.force)
        return EXIT_OK
    stepper.interact()
    return EXIT_OK


def cmd_show(args) -> int:
    from .core.show import show_trace

    trace = read_trace(args.trace)
    if args.html:
        from .core.output import check_outputs, write_output

        check_outputs({"--html": args.html}, force=args.force, inputs=(args.trace,))
        recorder = console(color=True, width=120)
        recorder.record = True
        recorder.file = open(os.devnull, "w")  # noqa: SIM115 - only the recording is wanted
        show_trace(trace, recorder)
        write_output(args.html, recorder.export_html(inline_styles=True), force=args.force)
        console(color=not args.no_color).print(f"wrote {markup_safe(args.html)}")
        return EXIT_OK
    show_trace(trace, console(color=not args.no_color))
    return EXIT_OK


def steps_from_lockstep(backend, isa_name: str, config: dict, program, init: Init, max_steps: int) -> list[dict]:
    """Per-step records from another backend (silicon): its state after every instruction, and the
    writes that lead from one state to the next."""
    from types import SimpleNamespace

    from .core.machine import Machine

    isa = get_isa(isa_name)
    start = Machine(isa_name, config)
    start.load_init(program, init)
    state, steps = start.state, []
    from .core.backends import lockstep

    for index, pc, observed, memory, fault in lockstep(backend, isa_name, config, program, init, max_steps=max_steps):
        state, writes = isa.state_from_observed(observed, state, memory, init)
        record = SimpleNamespace(index=index, pc=pc, instruction=program.at(pc), writes=writes, fault=fault)
        steps.append(step_json(record))
    return steps


def cmd_asm(args) -> int:
    if is_object_file(args.program) or args.function is not None:
        # a compiled function's listing: loaded as run loads it (no init: its addresses are the loader's)
        args.init = None
        program = load_program_and_init(args).program
    else:
        program = get_isa(args.isa).assemble(read_text(args.program), source=args.program)
    if args.hex:
        print(program.code.hex())
    else:
        print(program.listing())
    return EXIT_OK


def cmd_disasm(args) -> int:
    isa = get_isa(args.isa)
    if args.file:
        try:
            code = Path(args.file).read_bytes()
        except OSError as error:
            raise IsasimError(f"cannot read ({error.strerror})", source=args.file) from None
    else:
        text = "".join(args.hex or []).replace(" ", "").replace(",", "")
        text = re.sub(r"0x", "", text)
        if not text or not re.fullmatch(r"(?:[0-9a-fA-F]{2})+", text):
            raise UsageError("disasm needs bytes as hex digits, e.g. 'c4e2695ec1' (or --file BINARY)")
        code = bytes.fromhex(text)
    base = isa.code_base if args.base is None else args.base
    # An address is 64 bits: a negative base or one past 2^64 is no address, and code that would
    # run past 2^64 has no honest addresses either (the CPU would wrap to 0, objdump would not).
    if not 0 <= base < 1 << 64:
        shown = f"{base:#x}" if base >= 0 else f"-{-base:#x}"
        raise UsageError(f"--base {shown} is not a 64-bit address (0 to 0xffffffffffffffff)")
    if base + len(code) > 1 << 64:
        raise UsageError(f"--base {base:#x}: the {len(code)} bytes would run past the top of the 64-bit address "
                         f"space (the last byte may start at most at 0xffffffffffffffff)")
    from .core.errors import DecodeError

    undecoded = []
    # Like objdump, go on past bytes isasim cannot decode; the exit status still says they were there.
    for address, encoding, text, note, decoded in isa.listing(code, base):
        comment = f"    # {note}" if note else ""
        print(f"{address:#x}:  {encoding.hex(' '):<30} {text}{comment}")
        if not decoded:
            undecoded.append((address, note))
    if undecoded:
        address, note = undecoded[0]
        raise DecodeError(f"cannot decode {len(undecoded)} of the {len(code)} bytes' instructions "
                          f"(the first at {address:#x}: {note})")
    return EXIT_OK


def isasim_version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("isasim")
    except PackageNotFoundError:  # run from a source tree that was never installed
        return "unknown (not installed)"


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="isasim", description="Bit-accurate simulator of matrix-engine instruction sets.")
    parser.add_argument("--version", action="version", version=f"isasim {isasim_version()}",
                        help="print the version and exit")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)

    def common(p, *, program=True):
        if program:
            p.add_argument("program", help="assembly file (.s), trace file (.json) or object file (ELF .o, "
                                           "with --function)")
            p.add_argument("--init", help="initial registers and memory (JSON: {\"regs\":..., \"memory\": [...]}; "
                                          "for --function also \"args\": [...])")
            p.add_argument("--function", metavar="NAME",
                           help="the function of an object file to run (its C++ or extern \"C\" name)")
            add_config_options(p)
        p.add_argument("--isa", default=DEFAULT_ISA, help=f"ISA of an assembly file (default {DEFAULT_ISA})")
        p.add_argument("--max-steps", type=positive_int, default=DEFAULT_STEP_LIMIT,
                       help="stop with an error after this many instructions (default %(default)s)")
        p.add_argument("--no-color", action="store_true", help="plain text output")

    p = sub.add_parser("run", help="run a program and print the final state")
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
    p.set_defaults(func=cmd_run)

    p = sub.add_parser("replay", help="replay trace files and check their expectations")
    p.add_argument("traces", nargs="+", metavar="TRACE", help="trace files (.json) to replay")
    p.add_argument("--backend", default="sim", help=f"where to replay: sim (default) or {other_backends()}")
    p.add_argument("--max-steps", type=positive_int, default=DEFAULT_STEP_LIMIT,
                   help="stop with an error after this many instructions (default %(default)s)")
    p.add_argument("--max-report", type=positive_int, default=10,
                   help="differences to list per trace (default %(default)s)")
    p.add_argument("--no-color", action="store_true", help="plain text output")
    p.set_defaults(func=cmd_replay)

    p = sub.add_parser("record", help="run a program on a backend and write a trace of the result")
    common(p)
    p.add_argument("-o", "--output", required=True, help="trace file to write (never overwritten without --force)")
    p.add_argument("--backend", default="sim", help=f"where to run: sim (default) or {other_backends()}")
    p.add_argument("--producer", help="who produced the expectations (default: the backend)")
    p.add_argument("--steps", action="store_true", help="also record every step's writes")
    p.add_argument("--force", action="store_true", help="overwrite an existing output file")
    p.set_defaults(func=cmd_record)

    p = sub.add_parser("diff", help="run a program on two backends and report the first divergence")
    common(p)
    p.add_argument("--against", help=f"the other backend (default: the ISA's oracle; {other_backends()})")
    p.add_argument("--backend", default="sim", help="the first backend (default sim)")
    p.add_argument("--lockstep", action="store_true", help="compare after every instruction")
    p.set_defaults(func=cmd_diff)

    p = sub.add_parser("fuzz", help="run random programs on the simulator and another backend, shrink divergences")
    p.add_argument("--isa", default=DEFAULT_ISA, help=f"ISA (default {DEFAULT_ISA})")
    add_config_options(p)
    p.add_argument("--cases", type=positive_int,
                   help="programs to run (default 200; with --until-divergence or --duration: no limit)")
    p.add_argument("--seed", type=non_negative_int, default=0, help="the same seed draws the same programs (default %(default)s)")
    p.add_argument("--against", help=f"the other backend (default: the ISA's oracle; {other_backends()})")
    p.add_argument("--only", metavar="SUBSET",
                   help="fuzz only this subset of the ISA's instructions (x86_amx: scalar or amx; default: every "
                        "subset the other backend can run here)")
    p.add_argument("--lockstep", action="store_true", help="compare after every instruction")
    p.add_argument("--out", metavar="DIR",
                   help="the campaign directory: the reproducing traces, and the finished shards, so that the same "
                        "command resumes a killed campaign where it stopped (default: traces here, no resuming)")
    p.add_argument("--fresh", action="store_true",
                   help="start the campaign in --out over, even where an unfinished one could be resumed")
    from .core.parallel import add_options as add_parallel_options

    add_parallel_options(p, "the campaign's shards")
    p.add_argument("--until-divergence", action="store_true",
                   help="run until the first divergence (or --duration, or --cases)")
    p.add_argument("--duration", type=duration, metavar="TIME",
                   help="stop starting shards after TIME (e.g. 90s, 30m, 2h, 1h30m); the same command with the "
                        "same --out goes on from there")
    p.add_argument("--shrink-seconds", type=seconds, default=60.0,
                   help="time to spend shrinking each divergence (default %(default)s)")
    p.add_argument("--draw", choices=("hypothesis", "numpy"),
                   help="how to draw the programs.  numpy: the default for the subsets that have a numpy drawer "
                        "(x86_amx: amx), about 0.1 ms a program against hypothesis's 15-30 ms, so that the time "
                        "goes to comparing programs; a divergence is shrunk greedily (shorter cuts, then one "
                        "statement fewer).  hypothesis: the default for the others (x86_amx: scalar); its "
                        "programs lean to small values and boundaries, and its shrinker also simplifies "
                        "operands.  The same --seed draws other programs with each")
    p.add_argument("--no-color", action="store_true", help="plain text output")
    p.set_defaults(func=cmd_fuzz)

    p = sub.add_parser("step", help="step through a program instruction by instruction")
    common(p)
    p.add_argument("--commands", help="run these commands instead of prompting, e.g. \"s 3; p tmm0 int32; c\"")
    p.add_argument("--commands-file", help="run the commands in this file instead of prompting")
    p.add_argument("--against", help=f"also step this backend ({other_backends()}) and stop at the first difference")
    p.add_argument("--backend", default="sim", help=f"whose state to show: sim (default) or {other_backends()}")
    p.add_argument("--show", action="append", metavar="ARRAY:TYPE",
                   help="element type of an array in the views, e.g. tmm0:int8")
    p.add_argument("--hex", action="store_true", help="show array elements in hex")
    p.add_argument("--svg", metavar="FILE", help="also save the scripted session as an SVG picture")
    p.add_argument("--svg-width", type=positive_int, default=110, help="terminal width of the SVG (default %(default)s)")
    p.add_argument("--force", action="store_true", help="overwrite the SVG file if it exists")
    p.set_defaults(func=cmd_step)

    p = sub.add_parser("show", help="show a trace file in the terminal or as an HTML page")
    p.add_argument("trace", metavar="TRACE", help="the trace file (.json) to show")
    p.add_argument("--html", metavar="FILE", help="write a self-contained HTML page instead")
    p.add_argument("--force", action="store_true", help="overwrite the HTML file if it exists")
    p.add_argument("--no-color", action="store_true", help="plain text output")
    p.set_defaults(func=cmd_show)

    p = sub.add_parser("asm", help="assemble and print a listing (or list a compiled function)")
    p.add_argument("program", help="assembly file (.s), or object file (ELF .o, with --function)")
    p.add_argument("--function", metavar="NAME", help="the function of an object file to list")
    p.add_argument("--isa", default=DEFAULT_ISA, help=f"ISA of the assembly file (default {DEFAULT_ISA})")
    p.add_argument("--hex", action="store_true", help="print only the bytes")
    p.set_defaults(func=cmd_asm)

    p = sub.add_parser("disasm", help="disassemble bytes")
    p.add_argument("hex", nargs="*", help="bytes in hex")
    p.add_argument("--file", help="a raw binary file instead")
    p.add_argument("--isa", default=DEFAULT_ISA, help=f"ISA of the bytes (default {DEFAULT_ISA})")
    p.add_argument("--base", type=arguments.address, default=None,
                   help="address of the first byte (0 to 2^64-1; default the ISA's code base)")
    p.set_defaults(func=cmd_disasm)

    from .explain_cli import register as register_explain
    from .kernel_cli import register as register_kernel

    register_kernel(sub)
    register_explain(sub, common)
    for name in registered_isas():  # commands only one ISA has (ascend_cube: qbmm) come from the ISA
        get_isa(name).register_commands(sub, common)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
        if not getattr(args, "command", None):
            parser.print_help()
            return EXIT_BAD_INPUT
        if getattr(args, "max_steps", 1) is not None and getattr(args, "max_steps", 1) < 1:
            raise UsageError("--max-steps must be at least 1")
        return args.func(args)
    except IsasimError as error:
        # printable: a NUL or an escape sequence from the input is shown, not sent to the terminal
        print(f"isasim: error: {printable(str(error))}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except KeyboardInterrupt:
        print("isasim: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return EXIT_OK
    except Exception as error:  # a bug in isasim: still one line, traceback on request
        if os.environ.get("ISASIM_DEBUG"):
            raise
        print(f"isasim: internal error: {error.__class__.__name__}: {error} (set ISASIM_DEBUG=1 for a traceback)",
              file=sys.stderr)
        return 70


if __name__ == "__main__":
    sys.exit(main())

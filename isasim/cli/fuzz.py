"""The ``fuzz`` command: a differential fuzz campaign of an ISA (the ISA's ``run_fuzz``), its progress on the
terminal, and its report.

    isasim fuzz [--isa ISA] [--cases N] [--seed S] [--against BACKEND] [--only SUBSET] [--out DIR] ...
"""

from __future__ import annotations

import sys

from ..core.arguments import duration, non_negative_int, positive_int, seconds
from ..core.errors import EXIT_DIFFERENT, EXIT_OK, IsasimError, UsageError
from ..core.isa import DEFAULT_ISA, get_isa
from ..core.render import console
from .options import add_config_options, config_from_options, default_oracle, other_backends


def register(subparsers) -> None:
    """Add fuzz to the isasim command."""
    p = subparsers.add_parser("fuzz", help="run random programs on the simulator and another backend, shrink divergences")
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
    from ..core.parallel import add_options as add_parallel_options

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
    from ..core.parallel import pool_from_options

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


"""The commands that show a run step by step: ``step`` (the stepper, interactive or scripted) and ``show`` (a
trace file's steps, in the terminal or as an HTML page).

    isasim step PROGRAM [--init INIT.json] [--commands "s 3; p tmm0 int32; c"] [--against BACKEND] [--svg FILE]
    isasim step PROGRAM [--init INIT.json] --html FILE     (the whole run as an interactive page, no prompt)
    isasim show TRACE.json [--html FILE]                    (FILE: the interactive page of the trace's run)
"""

from __future__ import annotations

from pathlib import Path

from ..core.arguments import positive_int
from ..core.errors import EXIT_OK, UsageError
from ..core.isa import get_isa
from ..core.render import console, markup_safe
from ..core.trace import read_trace
from .loading import load_program_and_init, read_text
from .options import other_backends, parse_show
from .timeline_option import add_timeline_option, check_timeline, write_timeline


def register(subparsers, common) -> None:
    """Add step and show to the isasim command."""
    p = subparsers.add_parser("step", help="step through a program instruction by instruction")
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
    p.add_argument("--html", metavar="FILE",
                   help="write the whole run as an interactive page (step it in a browser) instead of prompting")
    add_timeline_option(p)
    p.add_argument("--force", action="store_true", help="overwrite the SVG, HTML or timeline file if it exists")
    p.set_defaults(func=cmd_step)

    p = subparsers.add_parser("show", help="show a trace file in the terminal or as an HTML page")
    p.add_argument("trace", metavar="TRACE", help="the trace file (.json) to show")
    p.add_argument("--html", metavar="FILE",
                   help="write a self-contained interactive page of the trace's run instead (step it in a browser)")
    p.add_argument("--force", action="store_true", help="overwrite the HTML file if it exists")
    p.add_argument("--no-color", action="store_true", help="plain text output")
    p.set_defaults(func=cmd_show)


def cmd_step(args) -> int:
    from ..core.stepper import Stepper, run_scripted_session, session_console

    if args.html:
        return _write_step_page(args)
    loaded = load_program_and_init(args)
    isa_name, config, program, init = loaded.isa_name, loaded.config, loaded.program, loaded.init
    if args.svg:
        from ..core.output import check_outputs

        check_outputs({"--svg": args.svg}, force=args.force,  # before the session, not after it
                      inputs=(args.program, args.init, args.commands_file))
        if args.commands is None and not args.commands_file:
            raise UsageError("--svg records a scripted session: give --commands or --commands-file")
    check_timeline(args, isa_name, inputs=(args.program, args.init, args.commands_file), others={"--svg": args.svg})
    out = session_console(color=not args.no_color, svg=args.svg, svg_width=args.svg_width)
    stepper = Stepper(isa_name, config, program, init, out=out, max_steps=args.max_steps, against=args.against,
                      backend=args.backend, element_types=parse_show(args.show, isa_name), hex_values=args.hex)
    count = len(program.instructions)
    out.print(f"[bold]{markup_safe(args.program)}[/bold]: {count} instruction{'' if count == 1 else 's'} on "
              f"{markup_safe(get_isa(isa_name).config_title(config))}"
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
        write_timeline(args, stepper.machine, out)
        return EXIT_OK
    stepper.interact()
    write_timeline(args, stepper.machine, out)  # the run as far as the session took it
    return EXIT_OK


def _page_step_limit(args) -> int:
    """The steps a page holds: --max-steps when given, else the page's own limit (a page of a million steps
    would be too big to open)."""
    from ..core.machine import DEFAULT_STEP_LIMIT
    from ..core.trace_page.model import PAGE_STEP_LIMIT

    return PAGE_STEP_LIMIT if args.max_steps == DEFAULT_STEP_LIMIT else args.max_steps


def _write_step_page(args) -> int:
    from ..core.output import check_outputs, write_output
    from ..core.trace_page import build_model, page_html

    for option, given in (("--commands", args.commands is not None), ("--commands-file", args.commands_file),
                          ("--svg", args.svg), ("--against", args.against), ("--backend", args.backend != "sim"),
                          ("--timeline", args.timeline)):
        if given:
            raise UsageError(f"--html writes the whole run of the simulator as a page; it takes no {option}")
    check_outputs({"--html": args.html}, force=args.force, inputs=(args.program, args.init))
    loaded = load_program_and_init(args)
    model = build_model(loaded.isa_name, loaded.config, loaded.program, loaded.init,
                        max_steps=_page_step_limit(args), title=Path(args.program).name)
    write_output(args.html, page_html(model), force=args.force)
    _report_page(args, model)
    return EXIT_OK


def _report_page(args, model: dict) -> None:
    steps = len(model["steps"])
    out = console(color=not args.no_color)
    out.print(f"wrote {markup_safe(args.html)}: {steps} step{'' if steps == 1 else 's'}"
              + (f" ({markup_safe(model['truncated'])})" if model["truncated"] else ""))


def cmd_show(args) -> int:
    from ..core.show import show_trace

    trace = read_trace(args.trace)
    if args.html:
        from ..core.output import check_outputs, write_output
        from ..core.trace_page import page_html, trace_model

        check_outputs({"--html": args.html}, force=args.force, inputs=(args.trace,))
        model = trace_model(trace)
        write_output(args.html, page_html(model), force=args.force)
        _report_page(args, model)
        return EXIT_OK
    show_trace(trace, console(color=not args.no_color))
    return EXIT_OK


"""``isasim qbmm``: the seed's quantised batch-matmul Cube kernel on a case file.

    isasim qbmm CASE.json [-o OUT.npy] [--force]      run the kernel, write C, PASS/FAIL against expect
    isasim qbmm CASE.json --trace OUT.trace.json      also (or only) record the whole run as a trace
    isasim qbmm CASE.json --step [--block I] [--commands "s 5; p l0c.nd[16x16]"] [--svg session.svg]
                                                      step through block I's instructions (--svg: save the
                                                      scripted session as a picture, as isasim step does)
    isasim qbmm CASE.json --blocks                    list the blocks and the tiling
    isasim qbmm CASE.json --workers N | --cluster ADDR
                                                      run the blocks in groups on N local processes or
                                                      a Dask cluster, and assemble C (the same bits)

The command belongs to ascend_cube: the ISA registers it (``register_commands``), so the core
command line knows no kernel.  Every size the run allocates is worked out from the case before
anything is built, and a run past a limit of :mod:`.qbmm_size` is refused in one line.  Exit status:
0 done (PASS), 1 C differs from the case's expectation, 2 bad input (one line), as the other commands.
"""

from __future__ import annotations

import io

import numpy as np

from isasim.core.arguments import positive_int
from isasim.core.errors import EXIT_DIFFERENT, EXIT_OK

SVG_WIDTH = 110  # isasim step's default


def register(sub, common) -> None:
    p = sub.add_parser("qbmm", help="run the seed's quantised batch-matmul Cube kernel (ascend_cube, 950) on a case")
    p.add_argument("case", metavar="CASE", help="the case file (JSON, format isasim-qbmm/1; arrays beside it)")
    p.add_argument("-o", "--output", metavar="OUT.npy", help="write C here (never overwritten without --force)")
    p.add_argument("--trace", metavar="FILE", help="also write the whole run as a trace file")
    p.add_argument("--step", action="store_true", help="step through one block's instructions instead of running")
    p.add_argument("--block", type=int, default=None, metavar="I", help="the block --step opens (default 0)")
    p.add_argument("--blocks", action="store_true", help="list the kernel's tiling and blocks, and stop")
    p.add_argument("--commands", help="with --step: run these stepper commands instead of prompting")
    p.add_argument("--svg", metavar="FILE", help="with --step --commands: also save the session as an SVG picture")
    p.add_argument("--svg-width", type=positive_int, default=SVG_WIDTH,
                   help="terminal width of the SVG (default %(default)s)")
    p.add_argument("--option", action="append", metavar="NAME=VALUE",
                   help="an ascend_cube behaviour public material leaves open (docs/ascend_cube/options.md); "
                        "overrides the case's options")
    p.add_argument("--force", action="store_true", help="overwrite the output files")
    p.add_argument("--no-color", action="store_true", help="plain text output")
    from isasim.core import parallel

    parallel.add_options(p, "the kernel's blocks (in groups, one per worker)")
    p.set_defaults(func=cmd_qbmm)


def cmd_qbmm(args) -> int:
    from isasim.core.errors import UsageError
    from isasim.core.output import check_outputs
    from isasim.core.render import console, markup_safe

    from ..config import configure, option_text
    from . import qbmm
    from .qbmm_run import compare, run

    modes = sum(bool(x) for x in (args.step, args.blocks))
    if modes > 1:
        raise UsageError("--step and --blocks are two different things: give one")
    if args.block is not None and not args.step:
        raise UsageError("--block chooses the block --step opens: give --step too")
    if args.commands is not None and not args.step:
        raise UsageError("--commands drives the stepper: give --step too")
    if args.svg and (not args.step or args.commands is None):
        raise UsageError("--svg records a scripted stepper session: give --step and --commands")
    in_parallel = getattr(args, "workers", None) is not None or getattr(args, "cluster", None) is not None
    if in_parallel and (args.step or args.blocks):
        raise UsageError("--workers and --cluster run the whole kernel; --step and --blocks do not run it")
    if (args.step or args.blocks) and (args.output or args.trace):
        raise UsageError("-o and --trace record a whole run; --step and --blocks do not run it")
    # refused before anything runs, so nothing is half written; and again once the case names its array files
    outputs = {"-o": args.output, "--trace": args.trace, "--svg": args.svg}
    check_outputs(outputs, force=args.force, inputs=(args.case,))
    case = qbmm.load_case(args.case)
    check_outputs(outputs, force=args.force, inputs=(args.case, *case.files))
    if not (args.step or args.blocks or args.output or args.trace) and case.expect is None:
        raise UsageError(f"{args.case} has no expect: give -o OUT.npy (and/or --trace FILE) to keep C, "
                         f"or --step / --blocks")
    if args.option:
        for text in args.option:
            case.options.update(option_text(text))
    config = configure({"chip": case.chip, "options": case.options})  # a bad option: one line, now
    case.options = config["options"]
    # every machine simulating here holds the GM image: one, or one per local worker
    kernel = qbmm.build(case, machines=getattr(args, "workers", None) or 1, trace=bool(args.trace))
    out = console(color=not args.no_color)
    count = len(kernel.program_lines)
    summary = (f"{markup_safe(args.case)}: {len(kernel.blocks)} block{'s' * (len(kernel.blocks) != 1)}, "
               f"{count:,} instructions on {case.chip}; {markup_safe(kernel.lines[0][2:])}")
    if args.blocks:
        out.print(summary)
        out.print(markup_safe(kernel.lines[1][2:]))
        for block in kernel.blocks:
            t = block.tile
            out.print(f"  block {block.index}: core {t.core}, batch {t.batch}, C rows {t.m_offset}..{t.m_offset + t.m - 1}"
                      f", columns {t.n_offset}..{t.n_offset + t.n - 1} ({block.end - block.first} instructions)",
                      markup=False)
        return EXIT_OK
    if args.step:
        return _step(args, kernel, config, out)
    if in_parallel:
        from isasim.core.parallel import pool_from_options

        from .qbmm_run import run_parallel

        with pool_from_options(args) as pool:  # a malformed --cluster: one line, before anything runs
            out.print(summary + f"; blocks in groups on {markup_safe(pool.where)}")
            c = run_parallel(kernel, pool)
    else:
        out.print(summary)
        c, _machine = run(kernel)
    status = EXIT_OK
    if args.output:
        from isasim.core.output import write_output

        buffer = io.BytesIO()
        np.save(buffer, c, allow_pickle=False)
        write_output(args.output, buffer.getvalue(), force=args.force)
        out.print(f"wrote {markup_safe(args.output)}: C {list(c.shape)} {case.c_type}"
                  + (" (bit patterns as uint16)" if case.c_type in ("float16", "bfloat16") else ""))
    if case.expect is not None:
        result = compare(case, c)
        if result.passed:
            out.print(f"[bold green]PASS[/bold green]: {markup_safe(result.describe())}")
        else:
            out.print(f"[bold red]FAIL[/bold red]: {markup_safe(result.describe())}")
            status = EXIT_DIFFERENT
    if args.trace:
        from isasim.core.trace import write_trace

        expected = case.expect if case.expect is not None else c
        producer = (f"isasim qbmm {args.case}: the case's expected C" if case.expect is not None
                    else "isasim qbmm (the simulator's own C: a recording, not a check)")
        trace = kernel.trace(expect=np.ascontiguousarray(expected), producer=producer)
        trace.config = config
        write_trace(trace, args.trace, force=args.force)
        out.print(f"wrote {markup_safe(args.trace)}")
    return status


def _step(args, kernel, config, out) -> int:
    from isasim.core.stepper import Stepper
    from isasim.core.render import markup_safe

    index = 0 if args.block is None else args.block
    lines = kernel.block_lines(index)
    isa_name = "ascend_cube"
    from isasim.core.isa import get_isa

    program = get_isa(isa_name).assemble("\n".join(lines), source=f"{args.case} block {index}")
    block = kernel.blocks[index]
    t = block.tile
    if args.svg:  # the session recorded as isasim step --svg records one
        from isasim.core.stepper import session_console

        out = session_console(color=True, svg=args.svg, svg_width=args.svg_width)
    stepper = Stepper(isa_name, config, program, kernel.init(), out=out)
    out.print(f"[bold]{markup_safe(args.case)}[/bold] block {index} of {len(kernel.blocks)}: core {t.core}, batch "
              f"{t.batch}, C rows {t.m_offset}..{t.m_offset + t.m - 1}, columns {t.n_offset}..{t.n_offset + t.n - 1}; "
              f"{len(program.instructions)} instructions")
    l0c_offset = _first_l0c(program)
    out.print(f"[dim]try: s (one instruction), c (to the end), p l1, p l0a, p l0b, "
              f"p l0c{'' if not l0c_offset else f'[{l0c_offset}]'}.nd[{t.m}x{t.n}] (the block of C L0C accumulates), "
              f"p quant_pre (the decoded word), p fixpipe[0,0] (one output element's arithmetic); q quits[/dim]")
    stepper.show_position()
    if args.commands is not None:
        from pathlib import Path

        from isasim.core.stepper import run_scripted_session

        run_scripted_session(stepper, args.commands, svg=args.svg, title=f"isasim qbmm {Path(args.case).name} --step",
                             force=args.force)
        return EXIT_OK
    stepper.interact()
    return EXIT_OK


def _first_l0c(program) -> int:
    """Where the block's first Mmad accumulates in L0C (read from the assembled instruction, not its text)."""
    for instruction in program.instructions:
        if instruction.form.name == "Mmad":
            return dict(zip(instruction.form.operand_names, instruction.operands))["c"]
    return 0

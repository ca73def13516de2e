"""The ``explain`` and ``docs`` subcommands.

    isasim explain INSTRUCTION [--m M] [--n N] [--shape M,K,N | ROWS,COLSB] [--seed S] [--init FILE]
                               [--start-row R] [--cpu MODEL] [--svg FILE] [--html FILE] [--force] [--width W]
                               [--no-color]
    isasim docs [--out DIR] [--check] [--force]

INSTRUCTION is assembly text (``"tdpbusd tmm0, tmm1, tmm2"``) or the bytes of one
instruction in hex (``c4e2695ec1``, ``"c4 e2 69 5e c1"``).  ``cli.build_parser``
adds both subcommands with ``register(sub, common)``.  Neither replaces a file it did not write without
``--force`` (see :mod:`isasim.core.output` and :mod:`isasim.docs`).
"""

from __future__ import annotations

import re
from pathlib import Path

from .core.errors import IsasimError
from .core.explain import (
    ExplainError, ExplainOptions, explain, print_explanation, render_html, render_svg, split_instruction_argument,
)
from .core.output import check_output_path, write_output
from .core.render import console


def _shape(text: str) -> tuple[int, ...]:
    if not re.fullmatch(r"\s*\d+(\s*,\s*\d+){1,2}\s*", text or ""):
        raise ExplainError(f"--shape {text!r}: expected M,K,N (TDP instructions) or ROWS,COLSB (tile loads, "
                           "stores, TILEZERO), e.g. --shape 4,4,4")
    values = tuple(int(x) for x in text.split(","))
    if any(v < 1 or v > 255 for v in values):
        raise ExplainError(f"--shape {text!r}: each number must be 1..255")
    return values


def _load_init(path: str):
    from .core.trace import load_json, parse_init

    data = load_json(path)
    try:
        return parse_init(data.get("init", data) if isinstance(data, dict) and "format" in data else data)
    except IsasimError as error:
        raise error.located(path)


def cmd_explain(args) -> int:
    # refuse an output that must not be written before printing anything (--html prog.s must not eat prog.s)
    for output in (args.svg, args.html):
        if output is not None:
            check_output_path(output, force=args.force)
    if args.svg is not None and args.svg == args.html:
        raise ExplainError(f"--svg and --html name the same file {args.svg!r}")
    text, code = split_instruction_argument(args.instruction, force_hex=args.hex)
    if args.m is not None and args.m < 0 or args.n is not None and args.n < 0:
        raise ExplainError("--m and --n must not be negative")
    options = ExplainOptions(
        cpu=args.cpu, element=(args.m, args.n), shape=_shape(args.shape) if args.shape else None, seed=args.seed,
        init=_load_init(args.init) if args.init else None, init_source=args.init, start_row=args.start_row,
        max_steps=getattr(args, "max_steps", None) or 10_000,
    )
    if options.start_row is not None and not 0 <= options.start_row < 256:
        raise ExplainError("--start-row must be 0..255")
    expl = explain(getattr(args, "isa", None) or "x86_amx", text, code, options)
    out = console(color=not args.no_color, width=args.width)
    print_explanation(expl, out, plain=args.no_color)
    if args.svg:
        if expl.figure is None:
            raise ExplainError("this instruction has no picture to draw")
        write_output(args.svg, render_svg(expl.figure), force=args.force)
        out.print(f"wrote {args.svg}")
    if args.html:
        write_output(args.html, render_html(expl), force=args.force)
        out.print(f"wrote {args.html}")
    return 0


def cmd_docs(args) -> int:
    from .docs import check_docs, default_docs_dir, write_docs

    out = console(color=not args.no_color)
    if args.out is None:
        args.out = str(default_docs_dir(Path.cwd()))
    if args.check:
        stale = check_docs(args.out)
        if stale:
            out.print(f"{len(stale)} reference file(s) differ from what the definitions generate: "
                      + ", ".join(stale[:10]) + (" ..." if len(stale) > 10 else "")
                      + f" (run 'isasim docs --out {args.out}')")
            return 1
        out.print(f"{args.out} is up to date")
        return 0
    written = write_docs(args.out, force=args.force)
    out.print(f"wrote {len(written)} files under {args.out}")
    return 0


def register(subparsers, common) -> None:
    """Add ``explain`` and ``docs`` to the ``isasim`` command (``common`` is cli.build_parser's helper)."""
    from .cli import non_negative_int, positive_int

    p = subparsers.add_parser("explain", help="explain one instruction: encoding, operation, faults, a worked example")
    p.add_argument("instruction", nargs="*", metavar="INSTRUCTION",
                   help="assembly text (quote it) or the instruction's bytes in hex")
    common(p, program=False)
    p.add_argument("--hex", action="store_true", help="read INSTRUCTION as hex bytes")
    p.add_argument("--cpu", help="CPU model (default: emerald-rapids, or one that has the instruction's feature)")
    p.add_argument("--m", type=non_negative_int, help="row of the output element C[m][n] to work through (TDP*)")
    p.add_argument("--n", type=non_negative_int, help="dword column of the output element C[m][n] (TDP*)")
    p.add_argument("--shape", help="M,K,N in dwords for TDP* and the tile configuration (default 4,4,4); "
                                   "ROWS,COLSB for tile loads, stores and TILEZERO (default 4,16)")
    p.add_argument("--seed", type=non_negative_int, default=1,
                   help="seed of the generated example data, 0 or more (default 1)")
    p.add_argument("--init", help="example data: an init file (regs, memory); for TDP* its named regions "
                                  "A, B (and C, tilecfg) become the tiles")
    p.add_argument("--start-row", type=non_negative_int, help="TILECFG.start_row for tile loads and stores (default 0)")
    p.add_argument("--svg", metavar="FILE", help="also draw the picture as a self-contained SVG")
    p.add_argument("--html", metavar="FILE", help="also write a self-contained HTML page (text and picture)")
    p.add_argument("--width", type=positive_int, default=None,
                   help="terminal width to lay out for, in columns (default: the terminal's)")
    p.add_argument("--force", action="store_true", help="overwrite the --svg or --html file if it exists")
    p.set_defaults(func=cmd_explain)

    p = subparsers.add_parser("docs", help="generate the per-instruction reference pages")
    p.add_argument("--out", metavar="DIR", default=None,
                   help="directory to write into (default: docs/ in an isasim checkout, otherwise a new isasim-docs/)")
    p.add_argument("--check", action="store_true", help="only check that the pages in --out are up to date")
    p.add_argument("--force", action="store_true",
                   help="write into a directory that already holds files isasim docs did not generate")
    p.add_argument("--no-color", action="store_true", help="plain text output")
    p.set_defaults(func=cmd_docs)

"""The ``docs`` command: the per-instruction reference pages (:mod:`isasim.docs`) written or checked.

    isasim docs [--out DIR] [--check] [--force]

It replaces no folder's files it did not generate without ``--force`` (see :func:`isasim.docs.write_docs`).
"""

from __future__ import annotations

from pathlib import Path

from ..core.render import console
from ..docs import check_docs, default_docs_dir, write_docs


def register(subparsers) -> None:
    """Add ``docs`` to the ``isasim`` command."""
    p = subparsers.add_parser("docs", help="generate the per-instruction reference pages")
    p.add_argument("--out", metavar="DIR", default=None,
                   help="directory to write into (default: docs/ in an isasim checkout, otherwise a new isasim-docs/)")
    p.add_argument("--check", action="store_true", help="only check that the pages in --out are up to date")
    p.add_argument("--force", action="store_true",
                   help="write into a directory that already holds files isasim docs did not generate")
    p.add_argument("--no-color", action="store_true", help="plain text output")
    p.set_defaults(func=cmd_docs)


def cmd_docs(args) -> int:
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

"""The ``isasim`` command: its parser, and ``main``, which runs a command and turns every error into one line.

    isasim run PROGRAM [--init INIT.json] [--cpu MODEL] [--show tmm0:int32] ...   (--cpu: x86_amx's option)
    isasim replay TRACE.json ...
    isasim record PROGRAM --init INIT.json -o OUT.trace.json
    isasim asm PROGRAM          (listing: address, bytes, text)
    isasim disasm HEX           (e.g. "c4e2705e c2" or a file with --file)

Exit status: 0 success; 1 a replay found a difference; 2 bad input (one line on
stderr naming the file, line and rule); 3 the simulated program raised an
architectural fault (``run``).  Never a traceback: an unexpected internal error
is reported in one line too (set ISASIM_DEBUG=1 to see the traceback).

Each group of commands is a module of this package with a ``register`` function that adds its parsers:
running (run, replay, record, diff), fuzz, stepping (step, show), debugging (gdbserver), assembly (asm, disasm), kernel,
explain and docs; an ISA adds the commands only it has (ascend_cube: qbmm) with its
``register_commands``.  What they share is in options (the options) and loading (PROGRAM and --init).
"""

from __future__ import annotations

import argparse
import os
import sys

from ..core.errors import EXIT_BAD_INPUT, EXIT_OK, IsasimError, UsageError
from ..core.isa import get_isa, registered_isas
from ..core.trace import printable
from . import assembly, debugging, docs, explain, fuzz, kernel, running, stepping
from ..core.compiled import ENGINE_VARIABLE
from .options import add_common_options


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):  # argparse would print usage and exit 2; keep it one line
        raise UsageError(f"{message} (see 'isasim {self.prog.split()[-1]} --help')"
                         if " " in self.prog else f"{message} (see 'isasim --help')")


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
    running.register(sub, add_common_options)
    fuzz.register(sub)
    stepping.register(sub, add_common_options)
    debugging.register(sub, add_common_options)
    assembly.register(sub)
    kernel.register(sub)
    explain.register(sub, add_common_options)
    docs.register(sub)
    for name in registered_isas():  # commands only one ISA has (ascend_cube: qbmm) come from the ISA
        get_isa(name).register_commands(sub, add_common_options)
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
        if getattr(args, "engine", None):
            os.environ[ENGINE_VARIABLE] = args.engine  # every machine of this command (core.compiled.chosen_engine)
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


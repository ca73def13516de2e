"""Errors in what a user supplied, as opposed to architectural faults.

An :class:`IsasimError` is something isasim refuses to do: malformed assembly, an
encoding it cannot decode, an invalid trace file, a run that exceeds its step
limit.  The command line prints it as one line (``file:line: rule``) and exits
non-zero; it never becomes a traceback.  Architectural faults (#UD, #GP, #PF, ...)
are not errors: they are part of the simulated machine's behaviour and live in
:mod:`isasim.core.faults`.
"""

from __future__ import annotations

# The command line's exit status: success; a replay or check found a difference; bad input (one line on
# stderr naming the file, line and rule); the simulated program raised an architectural fault.
EXIT_OK, EXIT_DIFFERENT, EXIT_BAD_INPUT, EXIT_FAULT = 0, 1, 2, 3


class IsasimError(Exception):
    """A user-facing error, printed as a single line."""

    def __init__(self, message: str, *, source: str | None = None, line: int | None = None):
        super().__init__(message)
        self.message = message
        self.source = source
        self.line = line

    def located(self, source: str | None = None, line: int | None = None) -> "IsasimError":
        """Fill in where the error happened if the raiser did not know."""
        if self.source is None:
            self.source = source
        if self.line is None:
            self.line = line
        return self

    def __str__(self) -> str:
        where = ""
        if self.source is not None:
            where = f"{self.source}:"
            if self.line is not None:
                where += f"{self.line}:"
            where += " "
        return f"{where}{self.message}"


class AssemblyError(IsasimError):
    """Text that is not a valid instruction, directive or label."""


class DecodeError(IsasimError):
    """Bytes that isasim cannot decode into an instruction it simulates."""


class TraceFormatError(IsasimError):
    """A trace or init file that does not follow the isasim-trace/1 format."""


class ConfigError(IsasimError):
    """An unknown ISA, CPU model or option."""


class StepLimitExceeded(IsasimError):
    """A run executed more instructions than it was allowed to."""


class ProgramError(IsasimError):
    """Execution reached a state the program cannot continue from (e.g. a pc outside the code)."""


class UsageError(IsasimError):
    """Command-line arguments that do not go together (exit status 2, as argparse's own errors)."""

"""The bounds every fuzz target puts around one case: a time limit (a hang fails the test, naming the case)
and a cap on the address space (an allocation of what a hostile size says fails with MemoryError instead of
succeeding or swapping)."""

from __future__ import annotations

import contextlib
import resource
import signal


class Hang(BaseException):
    """A case ran past its time limit.  Not an Exception: the code under test (the command line's catch-all
    for internal errors among it) must not turn it into an exit status or a refusal."""


@contextlib.contextmanager
def time_limit(seconds: float, what: str):
    """Raise Hang("WHAT ran past N s") in the block once ``seconds`` have passed."""
    def expired(_signum, _frame):
        raise Hang(f"{what} ran past {seconds} s")

    previous = signal.signal(signal.SIGALRM, expired)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


@contextlib.contextmanager
def address_space_room(room: int):
    """At most ``room`` bytes of address space more than the process uses now, inside the block (yields
    whether the cap could be set: not on a system without /proc or RLIMIT_AS)."""
    try:
        with open("/proc/self/statm") as statm:
            used = int(statm.read().split()[0]) * resource.getpagesize()
        soft, hard = resource.getrlimit(resource.RLIMIT_AS)
        cap = used + room if hard == resource.RLIM_INFINITY else min(used + room, hard)
        resource.setrlimit(resource.RLIMIT_AS, (cap, hard))
    except (OSError, ValueError):
        yield False
        return
    try:
        yield True
    finally:
        resource.setrlimit(resource.RLIMIT_AS, (soft, hard))

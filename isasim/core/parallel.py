"""Independent pieces of work run in this process, in local worker processes or on a Dask cluster,
the same way for all three.

isasim has two embarrassingly parallel workloads: a fuzz campaign (shards of cases, see
:mod:`.fuzz`) and a kernel simulated block by block (each output block an independent run of its
own instruction stream on the same inputs, see :mod:`.kernel_parallel`).  Both hand a :class:`Pool`
a module-level function and a list of plain argument tuples and take the results back as they
finish.  What a pool promises, wherever the work runs:

* every task's result comes back exactly once (a task whose worker died is run again, from the
  start, on another worker; its first, lost attempt counts for nothing), or the run ends with one
  :class:`ParallelError` line;
* a task runs the function given on the arguments given, so that a deterministic function gives
  the same result in this process, in a local process and on a cluster (what makes N = 1, 2 and a
  cluster give the same campaign);
* closing the iterator of results early (enough divergences, out of time) cancels what has not
  finished.

``Pool.open(workers=N)`` makes an :class:`InlinePool` for N = 1 (no process: what a debugger and a
profiler want), a :class:`LocalPool` of N forked processes otherwise; ``Pool.open(cluster=ADDR)``
connects to a Dask scheduler (``tcp://HOST:PORT``, or the path of a scheduler file), which needs the
optional ``dask[distributed]`` (``pip install 'isasim[cluster]'``).  Without it the local pools
still work and ``--cluster`` says what to install.
"""

from __future__ import annotations

import contextlib
import json
import multiprocessing
import os
import platform
import re
import socket
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator

from .errors import IsasimError

CLUSTER_EXTRA = "pip install 'isasim[cluster]'"
MAX_ATTEMPTS = 3  # a local task whose worker dies this many times ends the run (it is the task that kills it)
CONNECT_SECONDS = 10.0


class ParallelError(IsasimError):
    """The work could not be done where it was sent (no such scheduler, a worker lacking isasim, a
    task that kills every worker it runs on)."""


# ---------------------------------------------------------------------------
# Who ran a task
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class WorkerInfo:
    """Where a task ran: silicon differs across hosts, so a divergence names the machine that saw it."""

    host: str
    cpu: str  # the CPU's model name, family and model, as /proc/cpuinfo gives them
    pid: int
    address: str = ""  # the Dask worker's address ("" outside a cluster)

    def describe(self) -> str:
        where = f"{self.host} ({self.cpu})"
        return f"{where}, Dask worker {self.address}" if self.address else where

    def as_json(self) -> dict:
        return {"host": self.host, "cpu": self.cpu, "pid": self.pid, "address": self.address}

    @classmethod
    def from_json(cls, data: dict) -> "WorkerInfo":
        return cls(str(data.get("host", "?")), str(data.get("cpu", "?")), int(data.get("pid", 0)),
                   str(data.get("address", "")))


def _cpu_name() -> str:
    fields: dict[str, str] = {}
    try:
        with open("/proc/cpuinfo", encoding="ascii", errors="replace") as f:
            for line in f:
                key, _, value = line.partition(":")
                key = key.strip()
                if key in ("model name", "cpu family", "model") and key not in fields:
                    fields[key] = value.strip()
                if not line.strip():
                    break  # the first processor is enough: every core of a host is the same model
    except OSError:
        pass
    name = fields.get("model name") or platform.processor() or platform.machine() or "unknown CPU"
    if "cpu family" in fields and "model" in fields:
        return f"{name}, family {fields['cpu family']} model {fields['model']}"
    return name


def worker_info() -> WorkerInfo:
    """This process, as the worker that ran a task."""
    address = ""
    try:
        from distributed import get_worker

        address = get_worker().address
    except (ImportError, ValueError):  # not inside a Dask worker
        pass
    return WorkerInfo(socket.gethostname(), _cpu_name(), os.getpid(), address)


# ---------------------------------------------------------------------------
# Pools
# ---------------------------------------------------------------------------


class Pool:
    """Runs ``fn(*task)`` for each task, results as they finish (see the module's promises)."""

    workers: int = 1
    where: str = "this process"

    @staticmethod
    def open(workers: int | None = None, cluster: str | None = None) -> "Pool":
        """A pool of ``workers`` processes here (default: one per core; 1: this process), or the Dask
        cluster whose scheduler is ``cluster`` (an address, or a scheduler file)."""
        if cluster is not None:
            if workers is not None:
                raise ParallelError("--workers and --cluster are two places to run: give one "
                                    "(a cluster's workers are as many as it has)")
            return DaskPool(cluster)
        count = default_workers() if workers is None else workers
        if count < 1:
            raise ParallelError(f"--workers {count}: at least 1")
        return InlinePool() if count == 1 else LocalPool(count)

    def share(self, value: Any) -> Any:
        """``value`` as tasks take it: a large input every task reads (a kernel's matrices) is sent to
        each worker once rather than with each task."""
        return value

    def run(self, fn: Callable, tasks: Iterable[tuple], *, in_flight: int | None = None) -> Iterator[tuple[int, Any]]:
        """(i, fn(*task_i)) as each finishes.  ``tasks`` may be endless (a campaign until a
        divergence): at most ``in_flight`` (default: twice the workers) are handed out at a time."""
        raise NotImplementedError

    def close(self) -> None:
        pass

    def __enter__(self) -> "Pool":
        return self

    def __exit__(self, *_exc) -> None:
        self.close()


def default_workers() -> int:
    """One worker per core this process may use."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


class InlinePool(Pool):
    """The tasks one after the other in this process, in order."""

    def run(self, fn, tasks, *, in_flight=None):
        for index, task in enumerate(tasks):
            yield index, fn(*task)


class LocalPool(Pool):
    """``workers`` forked processes on this machine.

    A worker that dies (killed, out of memory) breaks a ProcessPoolExecutor and fails every task it
    holds; this pool then starts a fresh executor and hands out again the tasks that have no result,
    each from its start (a task's result is taken only from a finished attempt, so nothing counts
    twice).  A task whose attempts kill MAX_ATTEMPTS workers ends the run: it is the task's fault."""

    def __init__(self, workers: int):
        self.workers = workers
        self.where = f"{workers} local processes"
        self._executor: ProcessPoolExecutor | None = None

    def _start(self) -> ProcessPoolExecutor:
        if self._executor is None:
            # fork: the workers start in milliseconds with isasim already imported
            self._executor = ProcessPoolExecutor(max_workers=self.workers,
                                                 mp_context=multiprocessing.get_context("fork"))
        return self._executor

    def _restart(self) -> None:
        if self._executor is not None:
            self._executor.shutdown(wait=False, cancel_futures=True)
        self._executor = None

    def run(self, fn, tasks, *, in_flight=None):
        limit = in_flight or 2 * self.workers
        source = iter(enumerate(tasks))
        running: dict[Future, int] = {}
        waiting: list[int] = []  # tasks to hand out again after their worker died
        arguments: dict[int, tuple] = {}
        attempts: dict[int, int] = {}
        exhausted = False
        try:
            while True:
                while len(running) < limit and (waiting or not exhausted):
                    if waiting:
                        index = waiting.pop(0)
                    else:
                        try:
                            index, task = next(source)
                        except StopIteration:
                            exhausted = True
                            break
                        arguments[index] = tuple(task)
                    attempts[index] = attempts.get(index, 0) + 1
                    try:
                        running[self._start().submit(fn, *arguments[index])] = index
                    except BrokenProcessPool:
                        waiting.insert(0, index)
                        attempts[index] -= 1
                        self._recover(running, waiting, attempts)
                if not running:
                    return
                done, _pending = wait(running, return_when=FIRST_COMPLETED)
                broken = False
                for future in done:
                    index = running.pop(future)
                    try:
                        result = future.result()
                    except BrokenProcessPool:
                        waiting.append(index)
                        broken = True
                        continue
                    del arguments[index]
                    yield index, result
                if broken:
                    self._recover(running, waiting, attempts)
        finally:
            for future in running:
                future.cancel()

    def _recover(self, running: dict, waiting: list, attempts: dict) -> None:
        """The executor broke: every task it still held goes back to the queue, in order."""
        waiting.extend(running.values())
        running.clear()
        waiting.sort()
        for index in waiting:
            if attempts.get(index, 0) >= MAX_ATTEMPTS:
                raise ParallelError(f"task {index} ended {attempts[index]} worker processes: it is not "
                                    "the worker that fails (out of memory? a crash in the task?)")
        self._restart()

    def close(self) -> None:
        if self._executor is not None:
            self._executor.shutdown(wait=True, cancel_futures=True)
            self._executor = None


# ---------------------------------------------------------------------------
# A Dask cluster
# ---------------------------------------------------------------------------

_ADDRESS = re.compile(r"(?P<scheme>[a-z]+)://(?P<host>\[[0-9a-fA-F:]+\]|[A-Za-z0-9.\-_]+):(?P<port>[0-9]{1,5})")
_SCHEMES = ("tcp", "tls", "ucx", "ws", "wss")


def scheduler_target(text: str) -> dict:
    """``Client``'s keyword for ``--cluster TEXT``: {"address": ...} for tcp://HOST:PORT (or another
    Dask scheme), {"scheduler_file": ...} for an existing scheduler file; ParallelError otherwise."""
    found = _ADDRESS.fullmatch(text)
    if found:
        if found["scheme"] not in _SCHEMES:
            raise ParallelError(f"--cluster {text}: unknown scheme '{found['scheme']}://' "
                                f"(a Dask scheduler listens on {', '.join(s + '://' for s in _SCHEMES)})")
        if not 0 < int(found["port"]) < 65536:
            raise ParallelError(f"--cluster {text}: port {found['port']} is not 1..65535")
        return {"address": text}
    path = Path(text)
    if path.is_file():
        try:
            address = json.loads(path.read_text(encoding="utf-8")).get("address")
        except (OSError, UnicodeDecodeError, ValueError, AttributeError):
            address = None
        if not isinstance(address, str):
            raise ParallelError(f"--cluster {text}: not a Dask scheduler file (a JSON object with an "
                                "\"address\", as dask scheduler --scheduler-file writes)")
        return {"scheduler_file": str(path)}
    if "://" in text or ":" in text:
        raise ParallelError(f"--cluster {text}: not a scheduler address (tcp://HOST:PORT, e.g. "
                            "tcp://10.0.0.5:8786)")
    raise ParallelError(f"--cluster {text}: no such scheduler file, and not an address (tcp://HOST:PORT)")


def _refused(address: str | None) -> None:
    """A tcp:// address where nothing listens: said at once, rather than after Dask's connect timeout."""
    found = _ADDRESS.fullmatch(address or "")
    if found is None or found["scheme"] != "tcp":
        return
    host, port = found["host"].strip("[]"), int(found["port"])
    try:
        socket.create_connection((host, port), timeout=CONNECT_SECONDS).close()
    except ConnectionRefusedError:
        raise ParallelError(f"--cluster {address}: nothing listens there (connection refused): is the Dask "
                            "scheduler running (dask scheduler --port PORT)?") from None
    except OSError:
        pass  # unreachable, or a name that does not resolve: Dask's own connect says which


def _isasim_version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("isasim")
    except PackageNotFoundError:
        return "unknown"


class DaskPool(Pool):
    """The workers of a Dask cluster, through a client of its scheduler.

    The scheduler reschedules the tasks of a worker that dies (its ``allowed-failures``, 3 by
    default, bounds how often); a task's result is taken from the attempt that finished."""

    def __init__(self, cluster: str):
        target = scheduler_target(cluster)  # a malformed address: one line, before importing dask
        try:
            from distributed import Client
        except ImportError:
            raise ParallelError(f"--cluster needs dask.distributed, which is not installed: {CLUSTER_EXTRA}") from None
        _refused(target.get("address"))
        try:
            self.client = Client(**target, timeout=f"{CONNECT_SECONDS:g}s", set_as_default=False)
        except (OSError, TimeoutError) as error:
            raise ParallelError(f"cannot reach the Dask scheduler at {cluster} within {CONNECT_SECONDS:g} s "
                                f"({error.__class__.__name__}: {str(error).splitlines()[0] if str(error) else 'no answer'})"
                                ) from None
        self.address = self.client.scheduler.address
        self._check_workers()

    def _check_workers(self) -> None:
        try:
            versions = self.client.run(_isasim_version)
        except Exception as error:  # noqa: BLE001 - a worker that cannot unpickle isasim's function
            self.close()
            raise ParallelError(f"the Dask workers at {self.address} cannot run isasim ({error.__class__.__name__}: "
                                f"{error}): install it on every worker ({CLUSTER_EXTRA})") from None
        if not versions:
            self.close()
            raise ParallelError(f"the Dask scheduler at {self.address} has no workers")
        mine = _isasim_version()
        if other := sorted({v for v in versions.values() if v != mine}):
            self.close()
            raise ParallelError(f"the Dask workers at {self.address} run isasim {', '.join(other)}, this client "
                                f"{mine}: one version on every machine, so that a seed means the same cases")
        self.workers = len(versions)
        self.where = f"the Dask cluster at {self.address} ({self.workers} workers)"

    def share(self, value):
        return self.client.scatter(value, broadcast=True, hash=False)

    def run(self, fn, tasks, *, in_flight=None):
        from distributed import as_completed

        limit = in_flight or 2 * self.workers
        source = iter(enumerate(tasks))
        index_of: dict = {}
        completed = as_completed(loop=self.client.loop)

        def submit_next() -> bool:
            try:
                index, task = next(source)
            except StopIteration:
                return False
            future = self.client.submit(fn, *task, pure=False)
            index_of[future.key] = index
            completed.add(future)
            return True

        for _ in range(limit):
            if not submit_next():
                break
        try:
            for future in completed:
                try:
                    result = future.result()
                except Exception as error:  # noqa: BLE001 - KilledWorker, or the task's own error
                    if error.__class__.__name__ == "KilledWorker":
                        raise ParallelError(f"a task ended every Dask worker it ran on ({error})") from None
                    raise
                index = index_of.pop(future.key)
                future.release()
                submit_next()
                yield index, result
        finally:
            for future in list(completed.futures):
                future.cancel()

    def close(self) -> None:
        client = getattr(self, "client", None)
        if client is not None:
            client.close()
            self.client = None


# ---------------------------------------------------------------------------
# A cluster on this machine (the tests, the benchmarks, a user trying --cluster out)
# ---------------------------------------------------------------------------

# Dask's nanny starts every worker with MALLOC_TRIM_THRESHOLD_=65536 (distributed.nanny.pre-spawn-environ).
# Setting it at all turns off glibc's sliding mmap threshold, so that the simulator's large numpy temporaries
# are mapped and unmapped each time: measured on the block-parallel QBMM at 2048, one part took 3.8 s in such
# a worker against 1.3 s without the variable.  A None in that setting unsets it (distributed's own rule).
FAST_WORKER_ENVIRONMENT = {"distributed.nanny.pre-spawn-environ.MALLOC_TRIM_THRESHOLD_": None}


@contextlib.contextmanager
def local_cluster(workers: int = 2, *, trim: bool = False):
    """A Dask LocalCluster of ``workers`` worker processes, one thread each, on loopback and without a dashboard;
    its workers without MALLOC_TRIM_THRESHOLD_ unless ``trim`` (Dask's default: see FAST_WORKER_ENVIRONMENT).
    Yields the cluster (its ``scheduler_address`` is what ``--cluster`` takes).

    A nanny also sets its workers' variables (MALLOC_TRIM_THRESHOLD_, PYTHONHASHSEED, the BLAS thread
    counts) in the environment of the process that starts it, where every later subprocess would inherit
    them: this process's environment is put back once the workers are up."""
    import logging

    import dask
    from distributed import LocalCluster

    logging.getLogger("distributed").setLevel(logging.ERROR)  # its INFO lines at start and close are noise here
    saved = dict(os.environ)
    try:
        with dask.config.set({} if trim else FAST_WORKER_ENVIRONMENT):
            cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, host="127.0.0.1",
                                   dashboard_address=None, silence_logs=logging.ERROR)
    finally:
        os.environ.clear()
        os.environ.update(saved)
    try:
        yield cluster
    finally:
        cluster.close()


# ---------------------------------------------------------------------------
# The command-line options
# ---------------------------------------------------------------------------


def add_options(parser, what: str) -> None:
    """--workers N and --cluster ADDR, for a command that runs ``what`` in parallel."""
    parser.add_argument("--workers", type=int, metavar="N",
                        help=f"run {what} in N local processes (default: one per core; 1: in this process)")
    parser.add_argument("--cluster", metavar="ADDR",
                        help=f"run {what} on the Dask cluster whose scheduler is ADDR (tcp://HOST:PORT, or a "
                             f"scheduler file); needs {CLUSTER_EXTRA}")


def pool_from_options(args) -> Pool:
    return Pool.open(workers=getattr(args, "workers", None), cluster=getattr(args, "cluster", None))

"""Run independent tasks in this process or on a Dask cluster, with the same results either way.

A *scheduler* is ``"serial"`` (in-process, no dependency), ``"local"`` (a
``dask.distributed.LocalCluster`` of worker processes on this machine) or the address of a running Dask
scheduler (``tcp://HOST:PORT``). Tasks must be deterministic functions of their arguments (randomness
comes from seeds in the arguments, never from the worker or the timing), so results do not depend on the
scheduler or the number of workers; :func:`run_tasks` yields them as they finish and the caller places
them by index.

Dask is optional (``pip install 'lpdp[dask]'``); asking for ``local`` or an address without it is a
:class:`~lpdp.errors.ParameterError` that says how to install it.
"""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from lpdp.errors import ParameterError

__all__ = ["SCHEDULER_ENV", "AUTO_LOCAL_TASKS", "Scheduler", "parse_scheduler", "resolve_scheduler",
           "run_tasks"]

#: Environment variable naming the default scheduler (``serial``, ``local`` or ``tcp://HOST:PORT``).
SCHEDULER_ENV = "LPDP_SCHEDULER"

#: With no scheduler asked for, work of more than this many tasks runs on ``local`` (if Dask is
#: installed): starting a cluster costs a few seconds, which smaller work does not repay.
AUTO_LOCAL_TASKS = 8

#: Seconds to wait for a scheduler at an address before giving up.
CONNECT_TIMEOUT = 20

_ADDRESS = re.compile(r"^(tcp|tls|inproc|ucx)://[^\s/]+$")
INSTALL_HINT = "pip install 'lpdp[dask]'"


@dataclass(frozen=True)
class Scheduler:
    """Where tasks run: ``kind`` is ``"serial"``, ``"local"`` or ``"address"``.

    Examples
    --------
    >>> resolve_scheduler("serial")
    Scheduler(kind='serial', address=None, workers=None)
    >>> resolve_scheduler("tcp://127.0.0.1:8786").address
    'tcp://127.0.0.1:8786'
    """

    kind: str
    address: str | None = None
    workers: int | None = None

    def describe(self) -> str:
        """``serial``, ``local`` or the address (what a person reads and the JSON records)."""
        return self.address or self.kind


def _dask_available() -> bool:
    try:
        import distributed  # noqa: F401
    except ImportError:
        return False
    return True


def resolve_scheduler(value: str | None = None, *, workers: int | None = None, tasks: int = 1,
                      source: str = "--scheduler") -> Scheduler:
    """Validate a scheduler choice (before any work); ``None`` or ``""`` means automatic.

    Automatic: the environment variable :data:`SCHEDULER_ENV` if set, else ``local`` when there are
    more than :data:`AUTO_LOCAL_TASKS` tasks and Dask is installed, else ``serial``. ``workers`` is the
    number of worker processes of ``local`` (default: the CPU count, at most the number of tasks); it
    is refused with the other schedulers, whose workers are not lpdp's to choose.
    """
    if workers is not None and (isinstance(workers, bool) or not isinstance(workers, int) or workers < 1):
        raise ParameterError(f"--workers {workers!r}: must be a positive integer")
    if not value:
        value = os.environ.get(SCHEDULER_ENV, "").strip()
        source = SCHEDULER_ENV if value else source
        if not value:
            value = "local" if tasks > AUTO_LOCAL_TASKS and _dask_available() else "serial"
    kind, address = parse_scheduler(value, source)
    if workers is not None and kind != "local":
        raise ParameterError(f"--workers {workers}: only applies to the 'local' scheduler (the workers "
                             f"of {value!r} are started with the cluster)")
    if kind != "serial" and not _dask_available():
        raise ParameterError(f"{source} {value!r} needs Dask, which is not installed: {INSTALL_HINT}")
    if kind == "local":
        workers = workers or max(1, min(os.cpu_count() or 1, tasks))
    return Scheduler(kind, address, workers)


def parse_scheduler(value: str, source: str = "--scheduler") -> tuple[str, str | None]:
    """``(kind, address)`` of a scheduler name (syntax only: no connection, no import).

    Examples
    --------
    >>> parse_scheduler("local"), parse_scheduler("tcp://10.0.0.5:8786")
    (('local', None), ('address', 'tcp://10.0.0.5:8786'))
    """
    if value in ("serial", "local"):
        return value, None
    if isinstance(value, str) and _ADDRESS.match(value):
        return "address", value
    raise ParameterError(f"{source} {value!r}: must be 'serial', 'local' or the address of a Dask "
                         "scheduler such as tcp://HOST:PORT")


def _call(func: Callable[..., Any], args: tuple[Any, ...]) -> tuple[Any, str]:
    """Run one task; return its result and where it ran (a worker's address, or ``serial``)."""
    result = func(*args)
    try:
        from distributed import get_worker

        where = get_worker().address
    except (ImportError, ValueError):
        where = "serial"
    return result, where


@contextmanager
def _client(scheduler: Scheduler) -> Iterator[Any]:
    from distributed import Client, LocalCluster

    if scheduler.kind == "local":
        # Everything on 127.0.0.1, the dashboard on a free port (a fixed one may be taken); only
        # critical cluster logs (a Ctrl-C otherwise prints the workers' lost-connection errors).
        with LocalCluster(n_workers=scheduler.workers, threads_per_worker=1, processes=True,
                          host="127.0.0.1", dashboard_address="127.0.0.1:0", silence_logs=logging.CRITICAL
                          ) as cluster, Client(cluster) as client:
            yield client
        return
    try:
        client = Client(scheduler.address, timeout=CONNECT_TIMEOUT)
    except (OSError, TimeoutError) as exc:
        raise ParameterError(f"--scheduler {scheduler.address!r}: cannot reach a Dask scheduler there "
                             f"({' '.join(str(exc).split())})") from None
    with client:
        yield client


def run_tasks(func: Callable[..., Any], tasks: Sequence[tuple[Any, ...]], scheduler: Scheduler
              ) -> Iterator[tuple[int, Any, str]]:
    """Run ``func(*tasks[i])`` for every ``i``; yield ``(i, result, where)`` as each task finishes.

    ``func`` must be importable by name on the workers (a module-level function of lpdp). Stopping the
    iteration (or Ctrl-C) cancels what has not run and shuts a local cluster down.

    Examples
    --------
    >>> import math
    >>> sorted(r for _, r, _ in run_tasks(math.pow, [(2, 3), (3, 2)], resolve_scheduler("serial")))
    [8.0, 9.0]
    """
    if scheduler.kind == "serial":
        for i, args in enumerate(tasks):
            result, where = _call(func, args)
            yield i, result, where
        return
    from distributed import as_completed

    with _client(scheduler) as client:
        futures = {client.submit(_call, func, args, pure=False): i for i, args in enumerate(tasks)}
        try:
            for fut in as_completed(futures):
                result, where = fut.result()
                yield futures[fut], result, where
        finally:
            client.cancel(list(futures))

"""Run independent tasks in this process or on a Dask cluster, with the same results either way.

A *scheduler* is ``"serial"`` (in-process, no dependency), ``"local"`` (a
``dask.distributed.LocalCluster`` of worker processes on this machine) or the address of a running Dask
scheduler (``tcp://HOST:PORT``). Tasks must be deterministic functions of their arguments (randomness
comes from seeds in the arguments, never from the worker or the timing), so results do not depend on the
scheduler or the number of workers; :func:`run_tasks` yields them as they finish and the caller places
them by index.

Dask is optional (``pip install 'lpdp[dask]'``); asking for ``local`` or an address without it is a
:class:`~lpdp.errors.ParameterError` that says how to install it. A cluster that stops working (its
scheduler unreachable, or no worker left for ``timeout`` seconds, or a task that kills worker after
worker) is a :class:`~lpdp.errors.ClusterError` naming what happened, never a silent wait.
"""

from __future__ import annotations

import contextlib
import logging
import math
import os
import re
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from lpdp._blas import single_blas_thread_process
from lpdp.errors import ClusterError, ParameterError

__all__ = ["SCHEDULER_ENV", "AUTO_LOCAL_TASKS", "CLUSTER_TIMEOUT", "Scheduler", "parse_scheduler",
           "resolve_scheduler", "run_tasks"]

#: Environment variable naming the default scheduler (``serial``, ``local`` or ``tcp://HOST:PORT``).
SCHEDULER_ENV = "LPDP_SCHEDULER"

#: With no scheduler asked for, work of more than this many tasks runs on ``local`` (if Dask is
#: installed): starting a cluster costs a few seconds, which smaller work does not repay.
AUTO_LOCAL_TASKS = 8

#: Seconds to wait for a scheduler at an address before giving up.
CONNECT_TIMEOUT = 20

#: Seconds a run waits for a cluster without a reachable scheduler or any worker before it stops
#: (``--cluster-timeout``); tasks that take longer are fine as long as a worker is alive.
CLUSTER_TIMEOUT = 60.0

#: Seconds between checks of a cluster's health while no task finishes, and the wait for each answer.
_HEALTH_EVERY, _HEALTH_WAIT = 1.0, 5.0

_ADDRESS = re.compile(r"^(tcp|tls|inproc|ucx)://[^\s/]+$")
INSTALL_HINT = "pip install 'lpdp[dask]'"


@dataclass(frozen=True)
class Scheduler:
    """Where tasks run: ``kind`` is ``"serial"``, ``"local"`` or ``"address"``.

    Examples
    --------
    >>> resolve_scheduler("serial")
    Scheduler(kind='serial', address=None, workers=None, timeout=60.0)
    >>> resolve_scheduler("tcp://127.0.0.1:8786").address
    'tcp://127.0.0.1:8786'
    """

    kind: str
    address: str | None = None
    workers: int | None = None
    timeout: float = CLUSTER_TIMEOUT

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
                      source: str = "--scheduler", timeout: float | None = None) -> Scheduler:
    """Validate a scheduler choice (before any work); ``None`` or ``""`` means automatic.

    Automatic: the environment variable :data:`SCHEDULER_ENV` if set, else ``local`` when there are
    more than :data:`AUTO_LOCAL_TASKS` tasks and Dask is installed, else ``serial``. ``workers`` is the
    number of worker processes of ``local`` (default: the CPU count, at most the number of tasks); it
    is refused with the other schedulers, whose workers are not lpdp's to choose. ``timeout`` is how
    long a run waits for a cluster with no reachable scheduler or no worker (default
    :data:`CLUSTER_TIMEOUT` seconds).
    """
    if workers is not None and (isinstance(workers, bool) or not isinstance(workers, int) or workers < 1):
        raise ParameterError(f"--workers {workers!r}: must be a positive integer")
    if timeout is None:
        timeout = CLUSTER_TIMEOUT
    if (isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not math.isfinite(timeout)
            or timeout <= 0):
        raise ParameterError(f"--cluster-timeout {timeout!r}: must be a positive number of seconds")
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
    return Scheduler(kind, address, workers, float(timeout))


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


#: glibc's mallopt parameters: the mmap threshold, and the heap size trimmed on free.
_M_MMAP_THRESHOLD, _M_TRIM_THRESHOLD = -3, -1
_MALLOC_TUNED = _BLAS_LIMITED = False

#: How a local cluster starts its worker processes. Forked from this process on Linux, so that they
#: inherit its imported modules: two workers start and run a first lpdp task in 0.2 s, against 2.4 s
#: spawned (each imports Dask, NumPy, SciPy and lpdp afresh, and a nanny's shutdown waits 0.5 s more).
#: Spawned elsewhere: macOS and Windows have no fork that is safe with threads.
START_METHOD = "fork" if sys.platform.startswith("linux") else "spawn"


def _tune_malloc() -> None:
    """Once per worker process: undo the effect of Dask's ``MALLOC_TRIM_THRESHOLD_``.

    A nanny starts its workers with that variable set (it returns freed memory to the system sooner), and
    with it glibc no longer raises its mmap threshold adaptively, so every temporary array of more than
    128 kB is mapped and unmapped afresh (measured: 12x page faults and 1.8x CPU per filter task). A local
    cluster is started without the setting (:func:`_client`); on a cluster lpdp did not start, the
    thresholds are raised here instead (a mapped block of 32 MB or more is still returned at once).
    """
    global _MALLOC_TUNED
    if _MALLOC_TUNED or "MALLOC_TRIM_THRESHOLD_" not in os.environ:
        return
    _MALLOC_TUNED = True
    with contextlib.suppress(OSError, AttributeError):  # not glibc: nothing to undo
        import ctypes

        libc = ctypes.CDLL("libc.so.6")
        libc.mallopt(_M_MMAP_THRESHOLD, 32 * 2**20)
        libc.mallopt(_M_TRIM_THRESHOLD, 64 * 2**20)


def _one_blas_thread() -> None:
    """Once per worker process: one BLAS thread. A spawned worker gets ``OPENBLAS_NUM_THREADS=1`` from
    its nanny, but a forked one (:data:`START_METHOD`) inherits BLAS libraries already loaded with a
    thread per core, and two workers on two cores then run four spinning BLAS threads (measured: the
    63-cell filter sweep took longer on two forked workers than serially)."""
    global _BLAS_LIMITED
    if not _BLAS_LIMITED:
        _BLAS_LIMITED = True
        single_blas_thread_process()


def _call(func: Callable[..., Any], args: tuple[Any, ...]) -> tuple[Any, str]:
    """Run one task; return its result and where it ran (a worker's address, or ``serial``)."""
    try:
        from distributed import get_worker

        where = get_worker().address
    except (ImportError, ValueError):
        where = "serial"
    else:
        _tune_malloc()
        _one_blas_thread()
    return func(*args), where


def _call_batch(func: Callable[..., Any], batch: Sequence[tuple[Any, ...]]) -> tuple[list[Any], str]:
    """Run a batch of tasks one after the other on one worker; their results and where they ran."""
    results = []
    where = "serial"
    for args in batch:
        result, where = _call(func, args)
        results.append(result)
    return results, where


def _batches(count: int, workers: int) -> list[range]:
    """Consecutive batches of ``count`` tasks for ``workers`` workers, largest first (guided scheduling).

    Each batch holds the tasks left divided by twice the workers, rounded up: a cluster then handles
    about ``2 * workers * ln(count)`` messages instead of ``count`` (each costs a worker about 7 ms and the
    scheduler a few, against tens of milliseconds for a filter-sweep cell), and the last
    ``2 * workers - 1`` tasks or more, one per batch, even out the workers' finishing times. ``workers``
    0 (not known) counts as one.

    Examples
    --------
    >>> [len(b) for b in _batches(63, 2)]
    [16, 12, 9, 7, 5, 4, 3, 2, 2, 1, 1, 1]
    >>> _batches(3, 8)
    [range(0, 1), range(1, 2), range(2, 3)]
    """
    out, start = [], 0
    while start < count:
        size = -(-(count - start) // (2 * max(1, workers)))
        out.append(range(start, start + size))
        start += size
    return out


@contextmanager
def _sigint_held() -> Iterator[None]:
    """Block SIGINT while worker processes start. They inherit the blocked signal, so a Ctrl-C (which the
    terminal sends to every process of the group) reaches only this process, which shuts the cluster down,
    instead of printing a traceback per worker; a Ctrl-C during the start is delivered when it ends."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    from multiprocessing import resource_tracker

    resource_tracker.ensure_running()   # starting it later would unblock SIGINT in the starting thread
    old = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old)


@contextmanager
def _client(scheduler: Scheduler) -> Iterator[Any]:
    import dask
    from distributed import Client, LocalCluster

    if scheduler.kind == "local":
        # Dask's nanny sets MALLOC_TRIM_THRESHOLD_ in workers, which turns off glibc's adaptive mmap
        # threshold: every temporary array of the filter kernels is then mapped afresh (12x page faults,
        # 1.8x CPU per task). Keep one BLAS thread per worker, without that setting. The workers' own
        # statistical profiler (a stack sample every 10 ms, for a dashboard page nobody opens here) is
        # off: it cost 0.12 s of CPU per worker in the 63-cell filter sweep, 4% of its cells' time.
        environ = {k: v for k, v in dask.config.get("distributed.nanny.pre-spawn-environ", {}).items()
                   if k != "MALLOC_TRIM_THRESHOLD_"}
        with dask.config.set({"distributed.nanny.pre-spawn-environ": environ,
                              "distributed.worker.multiprocessing-method": START_METHOD,
                              "distributed.worker.profile.enabled": False}), _sigint_held():
            cluster = LocalCluster(n_workers=scheduler.workers, threads_per_worker=1, processes=True,
                                   host="127.0.0.1", dashboard_address="127.0.0.1:0",
                                   silence_logs=logging.CRITICAL)
        # Everything on 127.0.0.1, the dashboard on a free port (a fixed one may be taken); only
        # critical cluster logs (a Ctrl-C otherwise prints the workers' lost-connection errors).
        with cluster, Client(cluster) as client:
            yield client
        return
    # The client's own reports of a lost scheduler are tracebacks on stderr: lpdp says it in one line.
    loggers = [logging.getLogger(name) for name in ("distributed", *logging.root.manager.loggerDict)
               if name.startswith("distributed.")]
    levels = [log.level for log in loggers]
    for log in loggers:
        log.setLevel(logging.CRITICAL)
    try:
        try:
            client = Client(scheduler.address, timeout=min(CONNECT_TIMEOUT, scheduler.timeout))
        except (OSError, TimeoutError) as exc:
            raise ParameterError(f"--scheduler {scheduler.address!r}: cannot reach a Dask scheduler there "
                                 f"({' '.join(str(exc).split())})") from None
        try:
            yield client
        finally:
            client.close(timeout=_HEALTH_WAIT)
    finally:
        for log, level in zip(loggers, levels, strict=True):
            log.setLevel(level)


def _workers(client: Any) -> int:
    """Workers the scheduler knows (0 when it does not answer within a few seconds)."""
    try:
        return len(client.nthreads(callback_timeout=_HEALTH_WAIT))
    except Exception:  # the scheduler is gone or does not answer: no worker to count on
        return 0


def _collect(client: Any, futures: dict[Any, int], scheduler: Scheduler
             ) -> Iterator[tuple[int, tuple[Any, str]]]:
    """``(index, (result, where))`` of each task as it finishes; a :class:`ClusterError` as soon as the
    scheduler is lost, or once no worker has been alive for ``scheduler.timeout`` seconds."""
    from distributed import KilledWorker, as_completed
    from distributed.client import CancelledError

    where = scheduler.describe()
    ready = as_completed(futures)
    healthy = checked = time.monotonic()
    while not ready.is_empty():
        batch = ready.next_batch(block=False)
        now = time.monotonic()
        for fut in batch:
            try:
                yield futures[fut], fut.result()
            except CancelledError:
                raise ClusterError(f"--scheduler {where}: lost the connection to the Dask scheduler"
                                   ) from None
            except KilledWorker as exc:
                raise ClusterError(f"--scheduler {where}: a task killed every worker that ran it "
                                   f"({' '.join(str(exc).split())})") from None
            except OSError:  # the worker holding the finished result died: compute it again
                try:
                    client.retry([fut])
                except Exception:
                    raise ClusterError(f"--scheduler {where}: lost the connection to the Dask scheduler"
                                       ) from None
                ready.add(fut)
        if batch:
            healthy = now
            continue
        if now - checked >= _HEALTH_EVERY:
            checked = now
            if _workers(client):
                healthy = time.monotonic()
            elif time.monotonic() - healthy > scheduler.timeout:
                raise ClusterError(f"--scheduler {where}: no Dask scheduler or worker answered for "
                                   f"{scheduler.timeout:g} s (--cluster-timeout); the cluster is down")
        time.sleep(0.05)


def run_tasks(func: Callable[..., Any], tasks: Sequence[tuple[Any, ...]], scheduler: Scheduler, *,
              submitted: Callable[[], None] | None = None) -> Iterator[tuple[int, Any, str]]:
    """Run ``func(*tasks[i])`` for every ``i``; yield ``(i, result, where)`` as each task finishes.

    ``func`` must be importable by name on the workers (a module-level function of lpdp). On a cluster
    the tasks go out in batches, largest first (``_batches``), and ``submitted`` (if given) is called
    once they all have: the caller's own work that needs no result then runs while the workers compute
    (``serial`` never calls it). Stopping the iteration (or Ctrl-C) cancels what has not run and shuts a
    local cluster down. A cluster that stops working raises :class:`~lpdp.errors.ClusterError` (see
    :func:`_collect`); the results yielded before it stay valid.

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
    with _client(scheduler) as client:
        slots = scheduler.workers or _workers(client)
        futures = {client.submit(_call_batch, func, [tasks[i] for i in batch], pure=False): batch
                   for batch in _batches(len(tasks), slots)}
        if submitted is not None:
            submitted()
        try:
            for batch, (results, where) in _collect(client, futures, scheduler):
                for i, result in zip(batch, results, strict=True):
                    yield i, result, where
        finally:
            with contextlib.suppress(Exception):  # a lost scheduler cannot cancel anything
                client.cancel(list(futures))

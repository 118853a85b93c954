"""Sweeps and chunked Monte Carlo audits: serial against a Dask ``LocalCluster`` and a tcp cluster.

Run: ``.venv/bin/python benchmarks/bench_sweep.py [--workers 2] [--repeats 3] [--trajectories 100000000]``.
Prints the start-up cost of a local cluster, then, for the shipped 63-cell filter sweep and a 200-cell
composition sweep, the wall time of a whole ``lpdp run FILE`` in a fresh process (what a user waits for:
Python start-up, imports, the cells, the figure and the files) with ``--scheduler serial``, with
``--scheduler local`` (cluster start-up included) and on a tcp cluster (``dask scheduler`` + ``dask
worker --nworkers W`` started here on 127.0.0.1 beforehand, with Dask's default worker environment), the
fastest and the median of ``--repeats`` runs each (the runs alternate), the speed-ups, and whether every
``result`` is identical to the serial one; then runs a chunked Monte Carlo audit of ``--trajectories``
trajectories per database on the local cluster and prints the throughput per worker. Measure on an idle
machine; a virtual machine's cores can still vary by 20% from run to run, hence the median beside the
fastest run.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

from lpdp.parallel import resolve_scheduler, run_tasks
from lpdp.scenarios import run_file

ROOT = Path(__file__).resolve().parents[1]

COMPOSITION_200 = """kind = "double_dp_epsilon"
title = "epsilon at delta = 1e-6 against k = 1..200"
constraints = [[0.3, 0.0], [0.15, 0.02]]
delta = 1e-6
[sweep]
k = {ks}
"""

AUDIT = """kind = "filter_adaptive_audit"
title = "chunked audit"
epsilon = 3.0
delta = 0.05
max_steps = 10
leak = 0.002
trajectories = {n}
chunk = {chunk}
"""


def timed(src: Path, out: Path, scheduler: str, workers: int | None) -> tuple[float, dict]:
    """Seconds of one ``run_file`` in this process, and the scenario's JSON."""
    t0 = time.perf_counter()
    run_file(src, out, scheduler=scheduler, workers=workers, progress=False)
    seconds = time.perf_counter() - t0
    return seconds, json.loads((out / f"{src.stem}.json").read_text())


def command(src: Path, out: Path, scheduler: str, workers: int | None) -> tuple[float, dict]:
    """Wall seconds of ``lpdp run src`` in a fresh process, and the scenario's JSON."""
    extra = ["--workers", str(workers)] if workers else []
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-m", "lpdp", "run", str(src), "--out", str(out), "--scheduler",
                    scheduler, "--quiet", *extra], check=True, stdout=subprocess.DEVNULL)
    seconds = time.perf_counter() - t0
    return seconds, json.loads((out / f"{src.stem}.json").read_text())


@contextlib.contextmanager
def tcp_cluster(folder: Path, workers: int) -> Iterator[str]:
    """A ``dask scheduler`` and ``dask worker --nworkers workers`` on 127.0.0.1; yields the address."""
    import distributed

    scheduler_file = folder / "scheduler.json"
    common = ["--no-dashboard", "--dashboard-address", "127.0.0.1:0"]
    procs = [subprocess.Popen([sys.executable, "-m", "dask", "scheduler", "--host", "127.0.0.1", "--port",
                               "0", "--scheduler-file", str(scheduler_file), *common],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)]
    try:
        deadline = time.monotonic() + 90
        while not scheduler_file.exists():
            if time.monotonic() > deadline:
                raise RuntimeError("dask scheduler did not start")
            time.sleep(0.2)
        procs.append(subprocess.Popen([sys.executable, "-m", "dask", "worker", "--scheduler-file",
                                       str(scheduler_file), "--nworkers", str(workers), "--nthreads", "1",
                                       "--host", "127.0.0.1", *common],
                                      stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        with distributed.Client(scheduler_file=str(scheduler_file), timeout=90) as client:
            client.wait_for_workers(workers, timeout=90)
            address = client.scheduler.address
        yield address
    finally:
        for proc in reversed(procs):
            proc.terminate()
        for proc in reversed(procs):
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()


def compare(name: str, src: Path, tmp: Path, workers: int, address: str, repeats: int) -> None:
    runs: dict[str, list[float]] = {"serial": [], "local": [], address: []}
    docs = {}
    for r in range(repeats):
        for scheduler in runs:
            out = tmp / f"{name}-{len(docs)}-{r}"
            seconds, docs[scheduler] = command(src, out, scheduler, workers if scheduler == "local" else None)
            runs[scheduler].append(seconds)
    same = len({json.dumps(d["result"]) for d in docs.values()}) == 1
    cells = len(docs["serial"]["result"]["cells"])
    for stat, pick in (("fastest", min), ("median", statistics.median)):
        serial, local, tcp = (pick(runs[s]) for s in ("serial", "local", address))
        print(f"{name:<28} cells {cells:>4}  {stat:<7}  serial {serial:7.2f} s"
              f"   local x{workers} {local:7.2f} s (speed-up {serial / local:4.2f})   "
              f"tcp x{workers} {tcp:7.2f} s (speed-up {serial / tcp:4.2f})   identical results: {same}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--trajectories", type=int, default=100_000_000)
    parser.add_argument("--chunk", type=int, default=1_000_000)
    args = parser.parse_args()
    t0 = time.perf_counter()
    list(run_tasks(abs, [(-1,)] * args.workers, resolve_scheduler("local", workers=args.workers)))
    print(f"local cluster of {args.workers} workers: start, one tiny task per worker, stop: "
          f"{time.perf_counter() - t0:.2f} s (paid once per lpdp run)")
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        shipped = ROOT / "scenarios" / "filter_sweep_gaussian.toml"
        comp = tmp / "composition200.toml"
        comp.write_text(COMPOSITION_200.format(ks=list(range(1, 201))))
        with tcp_cluster(tmp, args.workers) as address:
            compare("filter sweep (shipped)", shipped, tmp, args.workers, address, args.repeats)
            compare("composition sweep k=1..200", comp, tmp, args.workers, address, args.repeats)
        audit = tmp / "audit.toml"
        audit.write_text(AUDIT.format(n=args.trajectories, chunk=args.chunk))
        for scheduler, workers in (("serial", None), ("local", args.workers)):
            seconds, doc = timed(audit, tmp / f"audit-{scheduler}", scheduler, workers)
            n = 2 * doc["result"]["trajectories"]  # under each database of the pair
            per = n / seconds / (workers or 1)
            print(f"audit {n:.0e} trajectories, {-(-args.trajectories // args.chunk)} chunks, {scheduler:<6} "
                  f"{seconds:7.2f} s   {per:.3g} trajectories/s per worker   "
                  f"consistent: {doc['result']['consistent']}")


if __name__ == "__main__":
    main()

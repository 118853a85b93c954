"""Sweeps on real Dask clusters: a ``LocalCluster`` of 2 worker processes (``--scheduler local``) and a
``dask scheduler`` + ``dask worker`` pair started here on 127.0.0.1 (``--scheduler tcp://...``). Results
must be identical to ``--scheduler serial``, tasks must have run on the workers, and ``--resume`` must
recompute only the missing cells. Everything started here is bounded in time and stopped at the end."""

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from lpdp.cli import main

distributed = pytest.importorskip("distributed")

ROOT = Path(__file__).resolve().parents[1]
COMPOSITION = ROOT / "scenarios" / "composition_sweep_double_dp.toml"
START_TIMEOUT = 90


@pytest.fixture(scope="module")
def dask_address(tmp_path_factory):
    """A ``dask scheduler`` and a ``dask worker`` (2 processes) on 127.0.0.1, shared by the module."""
    folder = tmp_path_factory.mktemp("dask")
    scheduler_file = folder / "scheduler.json"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    dask = [sys.executable, "-m", "dask"]
    procs = []
    logs = []

    def start(args, name):
        log = (folder / f"{name}.log").open("w")
        logs.append(log)
        procs.append(subprocess.Popen(dask + args, env=env, stdout=log, stderr=subprocess.STDOUT,
                                      cwd=folder))

    try:
        # every socket on 127.0.0.1 (the HTTP server too: it listens even with --no-dashboard)
        start(["scheduler", "--host", "127.0.0.1", "--port", "0", "--no-dashboard",
               "--dashboard-address", "127.0.0.1:0", "--scheduler-file", str(scheduler_file)], "scheduler")
        deadline = time.monotonic() + START_TIMEOUT
        while not scheduler_file.exists():
            if time.monotonic() > deadline or procs[0].poll() is not None:
                pytest.fail("dask scheduler did not start: "
                            + (folder / "scheduler.log").read_text()[-2000:])
            time.sleep(0.2)
        start(["worker", "--scheduler-file", str(scheduler_file), "--nworkers", "2", "--nthreads", "1",
               "--host", "127.0.0.1", "--no-dashboard", "--dashboard-address", "127.0.0.1:0"], "worker")
        with distributed.Client(scheduler_file=str(scheduler_file), timeout=START_TIMEOUT) as client:
            client.wait_for_workers(2, timeout=START_TIMEOUT)
            address = client.scheduler.address
            workers = set(client.scheduler_info()["workers"])
        yield address, workers
        with distributed.Client(address, timeout=START_TIMEOUT) as client:
            client.shutdown()  # the scheduler and its workers exit
    finally:
        for p in reversed(procs):
            if p.poll() is None:
                p.terminate()
        for p in reversed(procs):
            try:
                p.wait(timeout=30)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait(timeout=10)
        for log in logs:
            log.close()


def run(src, out, *args):
    assert main(["run", str(src), "--out", str(out), "--quiet", *args]) == 0
    return json.loads((Path(out) / f"{Path(src).stem}.json").read_text())


@pytest.fixture(scope="module")
def serial_composition(tmp_path_factory):
    return run(COMPOSITION, tmp_path_factory.mktemp("serial"), "--scheduler", "serial")


def test_local_cluster_of_two_workers_gives_the_serial_result(serial_composition, tmp_path):
    local = run(COMPOSITION, tmp_path, "--scheduler", "local", "--workers", "2")
    assert json.dumps(local["result"]) == json.dumps(serial_composition["result"])
    assert local["execution"]["scheduler"] == "local"
    assert local["execution"]["workers"] and all(
        w.startswith("tcp://127.0.0.1:") for w in local["execution"]["workers"])


def test_run_tasks_on_a_cluster_batches_and_overlaps_the_callers_work():
    """Every task's result comes back under its own index (the batches are unpacked), and the caller's
    ``submitted`` work runs exactly once, after the tasks went out; ``serial`` never calls it."""
    from lpdp.parallel import resolve_scheduler, run_tasks

    tasks = [(i, 3) for i in range(25)]
    calls = []
    got = {i: (r, w) for i, r, w in run_tasks(pow, tasks, resolve_scheduler("local", workers=2),
                                              submitted=lambda: calls.append(time.monotonic()))}
    assert len(calls) == 1
    assert {i: r for i, (r, _) in got.items()} == {i: i ** 3 for i in range(25)}
    assert all(w.startswith("tcp://127.0.0.1:") for _, w in got.values())
    assert list(run_tasks(pow, tasks[:2], resolve_scheduler("serial"), submitted=calls.append)) == [
        (0, 0, "serial"), (1, 1, "serial")] and len(calls) == 1


def test_tcp_scheduler_gives_the_serial_result_on_its_workers(dask_address, serial_composition, tmp_path):
    address, workers = dask_address
    doc = run(COMPOSITION, tmp_path, "--scheduler", address)
    assert json.dumps(doc["result"]) == json.dumps(serial_composition["result"])
    assert doc["execution"]["scheduler"] == address
    used = set(doc["execution"]["workers"])
    assert used and used <= workers  # every task ran on a worker of that cluster
    assert doc["execution"]["computed"] == len(doc["result"]["cells"]) == 18


def test_resume_on_the_cluster_recomputes_only_missing_cells(dask_address, serial_composition, tmp_path,
                                                             capsys):
    address, _ = dask_address
    run(COMPOSITION, tmp_path, "--scheduler", address)
    cells = sorted((tmp_path / "composition_sweep_double_dp.cells").iterdir())
    lost = cells[3:8]
    for p in lost:  # an interrupted run: these cells never finished, nor did the scenario
        p.unlink()
    (tmp_path / "composition_sweep_double_dp.json").unlink()
    kept = {p: p.stat().st_mtime_ns for p in cells if p not in lost}
    capsys.readouterr()
    assert main(["run", str(COMPOSITION), "--out", str(tmp_path), "--scheduler", address, "--resume",
                 "--json", "--quiet"]) == 0
    assert json.loads(capsys.readouterr().out)["reused"] == 13
    doc = json.loads((tmp_path / "composition_sweep_double_dp.json").read_text())
    assert doc["execution"]["reused"] == 13 and doc["execution"]["computed"] == 5
    assert all(p.stat().st_mtime_ns == t for p, t in kept.items())  # not rewritten
    assert all(p.exists() for p in lost)
    assert json.dumps(doc["result"]) == json.dumps(serial_composition["result"])


def test_monte_carlo_audit_chunks_run_on_the_workers(dask_address, tmp_path):
    address, workers = dask_address
    src = tmp_path / "a.toml"
    src.write_text('kind = "filter_adaptive_audit"\ntitle = "t"\nepsilon = 3.0\ndelta = 0.05\n'
                   'max_steps = 5\nleak = 0.01\ntrajectories = 60000\nchunk = 10000\n')
    serial = run(src, tmp_path / "s", "--scheduler", "serial")
    remote = run(src, tmp_path / "r", "--scheduler", address)
    assert json.dumps(remote["result"]) == json.dumps(serial["result"])
    assert set(remote["execution"]["workers"]) <= workers and remote["execution"]["workers"]


@pytest.mark.deep
@pytest.mark.parametrize("where", ["local", "tcp"])
def test_shipped_filter_sweep_same_on_a_cluster(where, dask_address, tmp_path_factory):
    src = ROOT / "scenarios" / "filter_sweep_gaussian.toml"
    serial = run(src, tmp_path_factory.mktemp("s"), "--scheduler", "serial")
    other = run(src, tmp_path_factory.mktemp("c"),
                "--scheduler", "local" if where == "local" else dask_address[0])
    assert len(serial["result"]["cells"]) == 63
    assert json.dumps(other["result"]) == json.dumps(serial["result"])



def _start(args, folder, name):
    """A ``dask`` process in its own process group (so the test can kill it and all its children)."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    log = (folder / f"{name}.log").open("w")
    proc = subprocess.Popen([sys.executable, "-m", "dask", *args], env=env, stdout=log,
                            stderr=subprocess.STDOUT, cwd=folder, start_new_session=True)
    log.close()
    return proc


def _wait_for(predicate, what, timeout=START_TIMEOUT):
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            pytest.fail(f"timed out waiting for {what}")
        time.sleep(0.1)


@pytest.mark.deep  # about 45 s on a loaded machine (a scheduler and two worker starts)
def test_a_dead_cluster_is_reported_in_one_line_and_keeps_finished_cells(tmp_path, capsys):
    """In the middle of a sweep, first the only worker is killed, then (after a restart with ``--resume``)
    the scheduler: each time ``lpdp run`` stops within ``--cluster-timeout`` (plus the health check's own
    wait) with one line and a non-zero status, and the cells finished before are kept and reused."""
    src = tmp_path / "slow.toml"
    src.write_text('kind = "double_dp_epsilon"\ntitle = "t"\nconstraints = [[0.3, 0.0], [0.15, 0.02]]\n'
                   'delta = 1e-6\n[sweep]\nk = [' + ", ".join(str(k) for k in range(300, 340)) + "]\n")
    scheduler_file, out = tmp_path / "scheduler.json", tmp_path / "out"
    cells = out / "slow.cells"
    procs = []

    def start_worker():
        # without a nanny: killing its process group leaves the cluster without workers
        procs.append(_start(["worker", address, "--nthreads", "1", "--no-nanny", "--host", "127.0.0.1",
                             "--no-dashboard", "--dashboard-address", "127.0.0.1:0"], tmp_path, "worker"))
        with distributed.Client(address, timeout=START_TIMEOUT) as client:
            client.wait_for_workers(1, timeout=START_TIMEOUT)

    def run_until_killed(victim, *extra):
        before = len(list(cells.iterdir())) if cells.is_dir() else 0
        codes = []
        run = threading.Thread(target=lambda: codes.append(main([
            "run", str(src), "--out", str(out), "--scheduler", address, "--cluster-timeout", "3", "--quiet",
            *extra])), daemon=True)
        run.start()
        _wait_for(lambda: cells.is_dir() and len(list(cells.iterdir())) > before, "a newly finished cell")
        os.killpg(victim.pid, signal.SIGKILL)
        victim.wait(timeout=30)
        run.join(timeout=60)
        assert not run.is_alive(), "lpdp run did not stop"
        lines = capsys.readouterr().err.strip().splitlines()
        assert codes and codes[0] != 0 and len(lines) == 1, lines
        kept = sorted(cells.iterdir())
        assert before < len(kept) < 40 and f"{len(kept)} of 40 cells are kept" in lines[0]
        assert all(json.loads(p.read_text())["fingerprint"] for p in kept)
        return lines[0]

    try:
        procs.append(_start(["scheduler", "--host", "127.0.0.1", "--port", "0", "--no-dashboard",
                             "--dashboard-address", "127.0.0.1:0", "--scheduler-file", str(scheduler_file)],
                            tmp_path, "scheduler"))
        _wait_for(scheduler_file.exists, "the dask scheduler")
        address = json.loads(scheduler_file.read_text())["address"]
        start_worker()
        assert "no Dask scheduler or worker answered for 3 s" in run_until_killed(procs[-1])
        start_worker()
        assert "lost the connection to the Dask scheduler" in run_until_killed(procs[0], "--resume")
    finally:
        for p in procs:
            if p.poll() is None:
                os.killpg(p.pid, signal.SIGKILL)
            p.wait(timeout=30)

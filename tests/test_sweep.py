"""Sweeps over scenario parameters (serial scheduler): grid expansion, validation, seeds, per-cell files,
the CSV and figure, resume after an interruption, and the scheduler option without Dask."""

import csv
import json
import math
from pathlib import Path

import numpy as np
import pytest

from lpdp import ParameterError, ScenarioError
from lpdp.cli import main
from lpdp.compose import double_dp
from lpdp.parallel import resolve_scheduler
from lpdp.scenarios import KINDS, load
from lpdp.scenarios import composition as composition_kinds
from lpdp.scenarios.sweep import cell_seed
from tests.theorems import theorem2

ROOT = Path(__file__).resolve().parents[1]

EPS_SWEEP = """kind = "double_dp_epsilon"
title = "t"
constraints = [[0.3, 0.0], [0.15, 0.02]]
{extra}
[sweep]
{grid}
"""


def scenario(tmp_path, grid, extra="", name="s.toml"):
    p = tmp_path / name
    p.write_text(EPS_SWEEP.format(grid=grid, extra=extra))
    return p


def test_grid_is_the_cartesian_product_in_table_order(tmp_path):
    _, params = load(scenario(tmp_path, "k = [1, 2, 3]\ndelta = [1e-6, 1e-3]"))
    sweep = params["sweep"]
    assert sweep.keys == ("k", "delta")
    assert [(v["k"], v["delta"]) for v in sweep.values] == [
        (k, d) for k in (1, 2, 3) for d in (1e-6, 1e-3)]
    assert [c["k"] for c in sweep.cells] == [1, 1, 2, 2, 3, 3]


def test_zip_pairs_lists(tmp_path):
    _, params = load(scenario(tmp_path, 'k = [1, 2, 3]\ndelta = [1e-6, 1e-5, 1e-4]\nzip = [["k", "delta"]]'))
    assert [(v["k"], v["delta"]) for v in params["sweep"].values] == [(1, 1e-6), (2, 1e-5), (3, 1e-4)]


@pytest.mark.parametrize(("grid", "extra", "match"), [
    ("colour = [1, 2]", "", r"'sweep.colour' is not a parameter of this kind \(sweepable: constraints, "),
    ("title = ['a', 'b']", "", r"'sweep.title' is not a parameter"),
    ("k = []", "", r"'sweep.k' = \[\] must be a non-empty list"),
    ("k = 3", "", r"'sweep.k' = 3 must be a non-empty list"),
    ("k = [1, 2]", "k = 3", r"key 'k' is both set and swept"),
    ("k = [1, 0]", "", r"sweep cell 1: k=0\): key 'k'"),
    ('k = [1, 2]\ndelta = [1e-6]\nzip = [["k", "delta"]]', "", r"pairs lists of different lengths"),
    ('k = [1, 2]\nzip = [["k", "nope"]]', "", r"'sweep.zip' names 'nope'"),
    ('k = [1, 2]\nzip = ["k"]', "", r"'sweep.zip' = \['k'\] must be a list of lists"),
])
def test_sweep_errors_name_the_file_and_key(tmp_path, grid, extra, match):
    with pytest.raises(ScenarioError, match=r"s\.toml.*" + match):
        load(scenario(tmp_path, grid, extra))


def test_unswept_seed_is_derived_per_cell_from_seed_sequence(tmp_path):
    src = tmp_path / "c.toml"
    src.write_text('kind = "filter_comparison"\ntitle = "t"\nseed = 11\n[sweep]\nepsilon = [4.0, 6.0, 8.0]\n')
    cells = load(src)[1]["sweep"].cells
    children = np.random.SeedSequence(11).spawn(3)
    expected = [int(c.generate_state(1, np.uint64)[0]) >> 1 for c in children]
    assert [c["seed"] for c in cells] == expected and len(set(expected)) == 3
    # a swept seed is used as written
    src.write_text('kind = "filter_comparison"\ntitle = "t"\n[sweep]\nseed = [5, 6]\n')
    assert [c["seed"] for c in load(src)[1]["sweep"].cells] == [5, 6]
    assert cell_seed(11, 1, 3) == expected[1]


def test_composition_sweep_cells_match_direct_calls(tmp_path):
    src = scenario(tmp_path, "k = [1, 4, 9]", extra="delta = 1e-4")
    assert main(["run", str(src), "--out", str(tmp_path / "o"), "--scheduler", "serial", "--quiet"]) == 0
    doc = json.loads((tmp_path / "o" / "s.json").read_text())
    cells = doc["result"]["cells"]
    assert [c["parameters"] for c in cells] == [{"k": 1}, {"k": 4}, {"k": 9}]
    for c in cells:
        k = c["parameters"]["k"]
        for m in ("lattice", "remark1", "remark2"):
            e = c["result"]["epsilon"][m]
            c1, c2 = (0.3, 0.0), (0.15, 0.02)
            region = theorem2(c1, c2, k) if m == "lattice" else double_dp(c1, c2, k, method=m)
            # a valid guarantee, and the smallest one up to bisection: an independent route (Theorem 2)
            assert region.delta(e) <= 1e-4 * (1 + 1e-12) and region.delta(max(e - 1e-9, 0.0)) > 1e-4
        assert c["result"]["epsilon"]["lattice"] <= min(c["result"]["epsilon"]["remark1"],
                                                        c["result"]["epsilon"]["remark2"]) + 1e-12
    assert doc["execution"]["scheduler"] == "serial" and doc["execution"]["computed"] == 3
    assert "seconds" not in json.dumps(doc["result"])
    with (tmp_path / "o" / "s.csv").open() as f:
        rows = list(csv.DictReader(f))
    assert [int(r["k"]) for r in rows] == [1, 4, 9]
    assert float(rows[1]["epsilon.remark1"]) == cells[1]["result"]["epsilon"]["remark1"]
    assert (tmp_path / "o" / "s.png").read_bytes()[:4] == b"\x89PNG"
    assert sorted(p.name for p in (tmp_path / "o" / "s.cells").iterdir()) == [
        "00000.json", "00001.json", "00002.json"]


def test_interrupted_sweep_resumes_with_only_the_missing_cells(tmp_path, monkeypatch, capsys):
    src = scenario(tmp_path, "k = [1, 2, 3, 4, 5]")
    out = tmp_path / "o"
    kind = KINDS["double_dp_epsilon"]
    real = composition_kinds.run_epsilon
    calls, interrupt = [], [True]

    def flaky(params):
        calls.append(params["k"])
        if len(calls) == 3 and interrupt.pop():
            raise KeyboardInterrupt  # Ctrl-C while the third cell runs
        return real(params)

    monkeypatch.setitem(KINDS, "double_dp_epsilon", type(kind)(kind.name, kind.doc, kind.schema, flaky,
                                                               sweep_plot=kind.sweep_plot))
    assert main(["run", str(src), "--out", str(out), "--scheduler", "serial"]) == 130
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--resume" in err
    assert len(list((out / "s.cells").iterdir())) == 2 and not (out / "s.json").exists()
    assert json.loads((out / "manifest.json").read_text())["complete"] is False
    calls.clear()
    interrupt.append(False)
    assert main(["run", str(src), "--out", str(out), "--scheduler", "serial", "--resume", "--json"]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed["reused"] == 2 and printed["scenarios"][0]["reused"] == 2
    assert calls == [3, 4, 5]
    resumed = json.loads((out / "s.json").read_text())
    monkeypatch.undo()
    assert main(["run", str(src), "--out", str(tmp_path / "fresh"), "--scheduler", "serial"]) == 0
    fresh = json.loads((tmp_path / "fresh" / "s.json").read_text())
    assert json.dumps(resumed["result"]) == json.dumps(fresh["result"])
    assert resumed["execution"]["reused"] == 2 and resumed["execution"]["computed"] == 3
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["complete"] is True and {o["name"] for o in manifest["outputs"]} == {
        "s.json", "s.csv", "s.png"}


def test_resume_ignores_cells_of_other_parameters(tmp_path, capsys):
    out = tmp_path / "o"
    assert main(["run", str(scenario(tmp_path, "k = [1, 2]", extra="delta = 1e-3")), "--out", str(out),
                 "--scheduler", "serial"]) == 0
    # same grid, another delta: nothing may be reused
    assert main(["run", str(scenario(tmp_path, "k = [1, 2]", extra="delta = 1e-4")), "--out", str(out),
                 "--scheduler", "serial", "--resume", "--json"]) == 0
    assert json.loads(capsys.readouterr().out.splitlines()[-1])["reused"] == 0


def test_finished_scenario_without_sweep_is_reused_whole(tmp_path, capsys):
    src = ROOT / "scenarios" / "figure1_mixture.toml"
    out = tmp_path / "o"
    assert main(["run", str(src), "--out", str(out)]) == 0
    capsys.readouterr()
    assert main(["run", str(src), "--out", str(out), "--resume", "--json"]) == 0
    row = json.loads(capsys.readouterr().out)["scenarios"][0]
    assert row["reused"] == 1 and any(f.endswith("figure1_mixture.png") for f in row["files"])
    (out / "figure1_mixture.png").unlink()
    assert main(["run", str(src), "--out", str(out), "--resume", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["reused"] == 0


def test_shipped_sweeps_keep_their_grids():
    _, fs = load(ROOT / "scenarios" / "filter_sweep_gaussian.toml")
    assert len(fs["sweep"].cells) == 63 and fs["default"] is False
    assert {(c["epsilon"], c["max_steps"]) for c in fs["sweep"].cells} == {
        (2.0 + 0.5 * i, n) for i in range(21) for n in (24, 48, 96)}
    _, cs = load(ROOT / "scenarios" / "composition_sweep_double_dp.toml")
    assert cs["delta"] == 1e-6 and [c["k"] for c in cs["sweep"].cells][-1] == 200  # exact: read from the file


@pytest.mark.parametrize(("value", "workers", "match"), [
    ("cluster", None, r"--scheduler 'cluster': must be 'serial', 'local' or the address"),
    ("serial", 2, r"--workers 2: only applies to the 'local' scheduler"),
    ("local", 0, r"--workers 0: must be a positive integer"),
])
def test_scheduler_errors(value, workers, match):
    with pytest.raises(ParameterError, match=match):
        resolve_scheduler(value, workers=workers)


def test_scheduler_choice_env_and_automatic(monkeypatch):
    monkeypatch.setenv("LPDP_SCHEDULER", "serial")
    assert resolve_scheduler(None, tasks=1000).kind == "serial"
    monkeypatch.setenv("LPDP_SCHEDULER", "nope")
    with pytest.raises(ParameterError, match=r"LPDP_SCHEDULER 'nope'"):
        resolve_scheduler(None)
    monkeypatch.delenv("LPDP_SCHEDULER")
    assert resolve_scheduler(None, tasks=2).kind == "serial"
    assert resolve_scheduler(None, tasks=100).kind == "local"
    assert resolve_scheduler("local", tasks=1).workers == 1


def test_without_dask_local_says_how_to_install(tmp_path, monkeypatch, capsys):
    import sys

    monkeypatch.setitem(sys.modules, "distributed", None)  # import distributed -> ImportError
    assert resolve_scheduler(None, tasks=100).kind == "serial"  # automatic falls back quietly
    src = scenario(tmp_path, "k = [1, 2]")
    for value in ("local", "tcp://127.0.0.1:8786"):
        assert main(["run", str(src), "--out", str(tmp_path / "o"), "--scheduler", value]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "pip install 'lpdp[dask]'" in err
    assert not (tmp_path / "o").exists()  # refused before any work
    assert main(["run", str(src), "--out", str(tmp_path / "o"), "--scheduler", "serial"]) == 0


def test_scheduler_key_in_the_file_is_validated(tmp_path):
    with pytest.raises(ScenarioError, match=r"key 'scheduler'.*'everywhere'"):
        load(scenario(tmp_path, "k = [1]", extra='scheduler = "everywhere"'))


def test_progress_bar_only_when_asked(tmp_path, capsys):
    from lpdp.scenarios import run_file

    src = scenario(tmp_path, "k = [1, 2, 3]")
    run_file(src, tmp_path / "a", scheduler="serial", progress=True)
    assert "3/3" in capsys.readouterr().err
    run_file(src, tmp_path / "b", scheduler="serial")  # stderr is not a terminal here
    assert capsys.readouterr().err == ""
    assert math.isfinite(json.loads((tmp_path / "b" / "s.json").read_text())["seconds"])


def test_huge_grids_are_refused_before_expanding(tmp_path):
    src = scenario(tmp_path, "k = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]\ndelta = "
                   + str([10.0 ** -i for i in range(2, 12)]) + "\nconstraints = " + str([[[1.0, 0.0],
                   [0.5, 0.1]]] * 3000))
    src.write_text(src.read_text().replace('constraints = [[0.3, 0.0], [0.15, 0.02]]\n', ""))
    with pytest.raises(ParameterError, match=r"\[sweep\] of 10 x 10 x 3000 cells needs ~6 GB of memory"):
        load(src)


@pytest.mark.parametrize("n, workers", [(1, 2), (3, 8), (63, 2), (200, 2), (1000, 7), (64, 1)])
def test_cluster_batches_cover_every_task_once_largest_first(n, workers):
    """Guided batches: consecutive, in order, never growing, far fewer than the tasks once there are many,
    and single tasks at the end so the workers finish together."""
    from lpdp.parallel import _batches

    got = _batches(n, workers)
    assert [i for b in got for i in b] == list(range(n))
    sizes = [len(b) for b in got]
    assert all(a >= b for a, b in zip(sizes, sizes[1:], strict=False))
    tail = min(n, 2 * workers - 1)
    assert sizes[len(sizes) - tail:] == [1] * tail
    # each batch takes at most 1/(2 workers) of what is left (rounded up), so a worker never holds more
    # than half its share; the count grows like 2 workers log(n), not like n
    left = n
    for size in sizes:
        assert size <= max(1, math.ceil(left / (2 * workers)))
        left -= size
    assert len(got) <= 2 * workers * (1 + math.log(max(n, 1)))

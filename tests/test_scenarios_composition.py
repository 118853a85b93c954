"""Double-DP scenarios: Figure 2, the budget question and the user template, plus schema errors."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
import shapely

from lpdp import scenarios
from lpdp.compose import double_dp
from lpdp.errors import ScenarioError
from lpdp.region import largest_delta_gap
from tests.theorems import theorem2

ROOT = Path(__file__).resolve().parents[1] / "scenarios"


def _run(name, tmp_path):
    row = scenarios.run_file(ROOT / name, tmp_path)
    doc = json.loads((tmp_path / f"{Path(name).stem}.json").read_text())
    return row, doc


def test_figure2(tmp_path):
    row, doc = _run("figure2_double_dp.toml", tmp_path)
    assert (tmp_path / "figure2_double_dp.png").stat().st_size > 10_000
    res = doc["result"]
    assert set(res) == {"k=3", "k=20"}
    for k in (3, 20):
        exact = double_dp((0.3, 0.0), (0.15, 0.02), k)
        for m in ("remark1", "remark2"):
            base = double_dp((0.3, 0.0), (0.15, 0.02), k, method=m)
            # Area between the boundaries, independently: Shapely's difference of the polygons (made valid:
            # an edge of mass ~1e-20 leaves a zero-width spike on the diagonal at (0, 1)).
            ref = shapely.make_valid(base.polygon).difference(shapely.make_valid(exact.polygon)).area
            assert res[f"k={k}"][f"{m}_area_between"] == pytest.approx(ref, rel=1e-6, abs=1e-12)
            assert res[f"k={k}"][f"{m}_area_between"] > 0
    # The baselines worsen as k grows (the paper's reading of Figure 2), Remark 2 is the better one.
    for m in ("remark1", "remark2"):
        assert res["k=20"][f"{m}_largest_delta_gap"]["gap"] > 2 * res["k=3"][f"{m}_largest_delta_gap"]["gap"]
    assert res["k=20"]["remark2_area_between"] < res["k=20"]["remark1_area_between"]
    assert len(row["summary"]) == 4 and all("area between" in line for line in row["summary"])


@pytest.mark.parametrize("k", [3, 20])
def test_largest_gap_is_the_maximum_over_a_fine_grid(k):
    exact = double_dp((0.3, 0.0), (0.15, 0.02), k)
    base = double_dp((0.3, 0.0), (0.15, 0.02), k, method="remark1")
    gap, where = largest_delta_gap(exact, base)
    grid = np.linspace(0.0, 7.0, 20001)
    dense = np.asarray(base.delta(grid)) - np.asarray(exact.delta(grid))
    assert dense.max() <= gap + 1e-15
    assert gap - dense.max() < 1e-4          # |dδ/dε| < 1 and the grid step is 3.5e-4
    assert float(base.delta(where) - exact.delta(where)) == pytest.approx(gap, rel=1e-12)


def test_budget(tmp_path):
    row, doc = _run("budget_double_dp.toml", tmp_path)
    found = doc["result"]["max_k"]
    exact = found["exact (Theorems 2-3)"]
    assert exact >= found["Remark 2"] >= found["Remark 1"]
    # δ~ = 1 - (1 - 1e-6)^k alone exceeds 1e-5 from k = 11 on: no route may allow more.
    assert -math.expm1(11 * math.log1p(-1e-6)) > 1e-5
    assert exact <= 10
    # Checked with the independent Theorem 2 route: k fits, k + 1 does not.
    c1, c2 = (1.0, 1e-6), (0.3, 1e-3)
    assert theorem2(c1, c2, exact).delta(8.0) <= 1e-5
    assert theorem2(c1, c2, exact + 1).delta(8.0) > 1e-5
    assert "releases within" in row["summary"][0]


def test_user_template_runs(tmp_path):
    row, doc = _run("count_pure_and_approx.toml", tmp_path)
    res = doc["result"]["k=50"]
    assert res["remark1_area_between"] > res["remark2_area_between"] > 0
    # The template's second guarantee is the Laplace mechanism's tight δ at ε = 0.05 (to 4 digits).
    assert math.isclose(doc["parameters"]["constraints"][1][1], 1 - math.exp(-0.025), rel_tol=1e-4)


@pytest.mark.parametrize("body,match", [
    ('constraints = [[0.3, 0.0]]\nks = [3]', r"key 'constraints'.*exactly two"),
    ('constraints = [[0.3, 0.0], [0.15, 1.0]]\nks = [3]', r"key 'constraints'.*\[1\] delta=1\.0"),
    ('constraints = [[0.3, 0.0], [0.15, 0.02]]\nks = [0]', r"key 'ks'.*\[0\]=0: must be an integer >= 1"),
    ('constraints = [[0.3, 0.0], [0.15, 0.02]]\nks = [3]\nkk = 1', r"unknown key 'kk'"),
    ('constraints = [[0.3, 0.0], [0.15, 0.02]]', r"missing required key 'ks'"),
])
def test_schema_errors(tmp_path, body, match):
    path = tmp_path / "bad.toml"
    path.write_text(f'kind = "double_dp"\ntitle = "t"\n{body}\n')
    with pytest.raises(ScenarioError, match=match):
        scenarios.load(path)


def test_budget_schema_error(tmp_path):
    path = tmp_path / "bad.toml"
    path.write_text('kind = "double_dp_budget"\ntitle = "t"\nconstraints = [[1.0, 0.0], [0.3, 0.01]]\n'
                    'budget = [8.0]\n')
    with pytest.raises(ScenarioError, match=r"bad\.toml: key 'budget'.*give \[epsilon, delta\]"):
        scenarios.load(path)

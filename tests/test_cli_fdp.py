"""``lpdp fdp``: the JSON contract, the bracket against the exact G_{μ√k} (scipy), n = 2 against the double-DP
theorems, and one-line errors with exit status 2."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from scipy import stats

from lpdp.cli import main
from tests.theorems import theorem3


def run_json(capsys, *argv):
    assert main(["fdp", *argv, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def gdp_delta(mu, eps):
    return stats.norm.cdf(-eps / mu + mu / 2) - math.exp(eps) * stats.norm.cdf(-eps / mu - mu / 2)


@pytest.mark.parametrize("n", ["2", "4"])
def test_gaussian_json_brackets_the_exact_composition(capsys, n):
    out = run_json(capsys, "--gaussian", "1", "-k", "10", "--constraints", n, "--at", "0.5", "1", "3")
    for key in ("from_below", "from_above", "exact", "lpdp_version"):
        assert key in out
    for side in ("from_below", "from_above"):
        assert {"profile", "delta_at", "vertices"} <= set(out[side])
        assert [e for e, _ in out[side]["delta_at"]] == [0.5, 1.0, 3.0]
    for (e, lo), (_, hi), (_, ex) in zip(out["from_above"]["delta_at"], out["from_below"]["delta_at"],
                                         out["exact"]["delta_at"], strict=True):
        truth = gdp_delta(math.sqrt(10), e)
        assert lo <= truth * (1 + 1e-9) and hi >= truth * (1 - 1e-9)
        assert math.isclose(ex, truth, rel_tol=1e-7)


def test_two_constraints_are_propositions_and_theorems(capsys):
    out = run_json(capsys, "--gaussian", "1", "-k", "3", "--constraints", "2", "--at", "0.2", "1.5")
    assert out["step"] is None
    below, above = out["from_below"]["approximation"], out["from_above"]["approximation"]
    for got, want in ((below, [(1.10806, 0.10831), (0.32916, 0.28499)]),
                      (above, [(1.37838, 0.0), (0.38215, 0.23932)])):
        assert np.allclose(got, want, atol=1e-5)
    for side, cons in (("from_below", below), ("from_above", above)):
        region = theorem3(tuple(cons[0]), tuple(cons[1]), 3)
        for e, d in out[side]["delta_at"]:
            assert math.isclose(d, float(region.delta(e)), rel_tol=1e-9)


def test_laplace_has_no_closed_form(capsys):
    out = run_json(capsys, "--laplace", "1", "-k", "3", "--constraints", "3", "--at", "1")
    assert out["exact"] is None
    assert out["from_above"]["delta_at"][0][1] <= out["from_below"]["delta_at"][0][1]


def test_readable_summary(capsys):
    assert main(["fdp", "--gaussian", "1", "-k", "3", "--constraints", "2", "--at", "1"]) == 0
    text = capsys.readouterr().out
    assert "from below: (1.10806" in text and "<= truth <=" in text


def test_default_route_is_the_accountant_exact_for_gaussians(capsys):
    out = run_json(capsys, "--gaussian", "mu=0.5", "-k", "40", "--at", "1", "3", "--for-delta", "1e-6")
    assert out["route"] == "gaussian" and out["exact"] is True
    for row in out["delta_at"]:
        truth = gdp_delta(0.5 * math.sqrt(40), row["epsilon"])
        # exact: both sides certified around the closed form, a few ulps apart
        assert row["lower"] <= row["upper"] <= row["lower"] * (1 + 1e-12)
        assert math.isclose(row["upper"], truth, rel_tol=1e-9)
    row = out["epsilon_for"][0]
    assert math.isclose(gdp_delta(0.5 * math.sqrt(40), row["upper"]), 1e-6, rel_tol=1e-6)


def test_default_route_for_laplace_is_the_certified_engine_inside_the_paper_bracket(capsys):
    out = run_json(capsys, "--laplace", "2", "-k", "30", "--at", "0.5", "2", "--for-delta", "1e-5")
    assert out["route"] == "certified" and out["exact"] is False
    paper = run_json(capsys, "--laplace", "2", "-k", "30", "--constraints", "8", "--step", "0.01",
                     "--at", "0.5", "2")
    for row, (_, attack), (_, guarantee) in zip(out["delta_at"], paper["from_above"]["delta_at"],
                                                paper["from_below"]["delta_at"], strict=True):
        assert attack <= row["upper"] and row["lower"] <= guarantee
        assert 0 <= row["upper"] - row["lower"] <= 1e-3 * row["upper"]
    assert out["epsilon_for"][0]["lower"] <= out["epsilon_for"][0]["upper"]
    assert main(["fdp", "--laplace", "2", "-k", "30"]) == 0
    assert "eps at delta=1e-05:" in capsys.readouterr().out


@pytest.mark.parametrize("argv, match", [
    (["--gaussian", "0", "-k", "3"], "--gaussian=0: must be finite and > 0"),
    (["--gaussian", "-1", "-k", "3"], "--gaussian=-1: must be finite and > 0"),
    (["--laplace", "x", "-k", "3"], "--laplace 'x': 'x' is not a number"),
    (["--gaussian", "1", "-k", "0"], "k=0: must be an integer >= 1"),
    (["--gaussian", "1", "-k", "2.5"], "k=2.5: must be an integer >= 1"),
    (["--gaussian", "1", "-k", "3", "--constraints", "0"], r"constraints=0: must be an integer in \[1, 64\]"),
    (["--gaussian", "1", "-k", "3", "--constraints", "3", "--step", "0"], "step=0: must be finite and > 0"),
    (["-k", "3"], "one of the arguments --gaussian --laplace is required"),
    (["--gaussian", "1", "--laplace", "1", "-k", "3"], "not allowed with argument"),
])
def test_errors_are_one_line_exit_2(capsys, argv, match):
    import re

    try:
        code = main(["fdp", *argv])
    except SystemExit as exc:      # argparse usage errors
        code = exc.code
    err = capsys.readouterr().err
    assert code == 2
    assert len(err.strip().splitlines()) == 1 and re.search(match, err), err


def test_figure3_scenario(tmp_path):
    from pathlib import Path

    from lpdp.scenarios import run_file

    root = Path(__file__).resolve().parents[1] / "scenarios"
    row = run_file(root / "figure3_gaussian.toml", tmp_path)
    data = json.loads((tmp_path / "figure3_gaussian.json").read_text())["result"]
    assert np.allclose(data["from_below_constraints"], [(1.10806, 0.10831), (0.32916, 0.28499)], atol=1e-5)
    assert np.allclose(data["from_above_constraints"], [(1.37838, 0.0), (0.38215, 0.23932)], atol=1e-5)
    for k in (3, 10):
        panel = data[f"k={k}"]
        for (e, lo), (_, hi) in zip(panel["from_above"]["delta_at"], panel["from_below"]["delta_at"],
                                    strict=True):
            truth = gdp_delta(math.sqrt(k), e)
            assert lo <= truth * (1 + 1e-9) and hi >= truth * (1 - 1e-9)
    assert any(f.endswith(".png") for f in row["files"])


def test_scenario_errors_name_the_key(tmp_path):
    from lpdp.errors import ScenarioError
    from lpdp.scenarios import load

    bad = tmp_path / "bad.toml"
    bad.write_text('kind = "fdp_bracket"\ntitle = "x"\nks = [3]\n[mechanism]\nkind = "cauchy"\n')
    with pytest.raises(ScenarioError, match=r"bad.toml: key 'mechanism': scenario: mechanism.kind = 'cauchy' "
                                            r"must be one of dp, pure, gaussian"):
        load(bad)
    bad.write_text('kind = "fdp_tightening"\ntitle = "x"\nk = 3\n[mechanism]\nkind = "gaussian"\n'
                   'sigma = -1.0\n')
    with pytest.raises(ScenarioError, match=r"mechanism \(gaussian\): sigma=-1.0: must be"):
        load(bad)
    bad.write_text('kind = "fdp_tightening"\ntitle = "x"\nk = 3\n[mechanism]\nkind = "pure"\nepsilon = 1.0\n'
                   'times = 2\n')
    with pytest.raises(ScenarioError, match=r"mechanism.times=2: the number of compositions is k"):
        load(bad)


def test_the_old_scenario_form_is_refused_with_the_new_one(tmp_path):
    """``mechanism = "gaussian"`` with ``parameter = mu`` (the form before [mechanism] tables) is refused by
    a message that writes the table (reading mu where the table has sigma is the confusion the one data
    form removes)."""
    from lpdp.errors import ScenarioError
    from lpdp.scenarios import load

    bad = tmp_path / "old.toml"
    bad.write_text('kind = "fdp_tightening"\ntitle = "x"\nmechanism = "gaussian"\nparameter = 0.5\nk = 3\n')
    with pytest.raises(ScenarioError, match=r"key 'parameter': .*old form.*kind = \"gaussian\", sigma = 2.0"):
        load(bad)


def test_tail_layout_brackets_epsilon_at_small_delta(capsys):
    out = run_json(capsys, "--gaussian", "1", "-k", "10", "--constraints", "16", "--layout", "tail",
                   "--delta-min", "1e-9", "--for-delta", "1e-5")
    (d, lo, hi), = out["epsilon_for"]
    assert d == 1e-5 and lo < hi < lo + 1.0  # exact: the δ asked for, echoed
    assert gdp_delta(math.sqrt(10), lo) >= 1e-5 >= gdp_delta(math.sqrt(10), hi)

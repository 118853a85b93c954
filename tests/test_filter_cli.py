"""``lpdp filter``: the JSON contract of issues 5 and 6, and one-line errors with exit status 2."""

from __future__ import annotations

import json

import pytest
from scipy import stats

from lpdp.cli import main


def run_json(capsys, *argv):
    assert main([*argv, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_params_json(capsys):
    out = run_json(capsys, "filter", "params", "--delta", "1e-3", "--max-steps", "48",
                   "--gaussian-sigma", "2", "--epsilon", "6")
    assert out["delta_tilde"] == pytest.approx(5.6079e-4, rel=1e-4)
    assert out["theta"] == pytest.approx(9.1553e-6, rel=1e-4)
    expected = 6 - 0.25 - 0.5 * (stats.norm.isf(out["theta"]) + stats.norm.isf(out["delta_tilde"]))
    assert out["kappa"] == pytest.approx(expected, abs=1e-12)
    assert out["first_release_ok"] is True and "lpdp_version" in out
    out = run_json(capsys, "filter", "params", "--delta", "1e-3", "--max-steps", "48")
    assert "kappa" not in out and out["theta"] > 0


@pytest.mark.parametrize("which", ["paper", "union"])
def test_audit_json(capsys, which):
    out = run_json(capsys, "filter", "audit", "--gaussian-sigma", "2", "--epsilon", "6", "--delta",
                   "1e-3", "--max-steps", "48", "--filter", which)
    # exact: the bound is the --delta asked for, echoed
    assert 0 <= out["hockey_stick_delta"] <= out["tail"] <= out["guarantee"] <= out["bound"] == 1e-3
    assert out["expected_T"] == pytest.approx(15.8 if which == "paper" else 28.6, abs=0.05)


@pytest.mark.parametrize("argv, match", [
    (["filter", "audit", "--gaussian-sigma", "-2", "--epsilon", "6", "--delta", "1e-3",
      "--max-steps", "48"], "sigma=-2.0"),
    (["filter", "params", "--delta", "1e-3", "--max-steps", "48", "--epsilon", "3"],
     "no mechanism"),
    (["filter", "params", "--delta", "0", "--max-steps", "48"], r"delta=0.0"),
    (["filter", "audit", "--gaussian-sigma", "2", "--epsilon", "6", "--delta", "1e-3",
      "--max-steps", "0"], r"max_steps=0"),
])
def test_errors_are_one_line_exit_2(capsys, argv, match):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and match in err and err.startswith("lpdp filter: error:")


def test_simulate_json(capsys, tmp_path):
    out = run_json(capsys, "filter", "simulate", "--gaussian-sigma", "2", "--epsilon", "6",
                   "--delta", "1e-3", "--max-steps", "48", "--trajectories", "20000", "--seed", "3",
                   "--plot", str(tmp_path / "s.png"))
    assert len(out["survival"]) == 48 and out["method"] == "quadrature"
    surv = out["survival"]
    assert surv[0] == 1.0 and all(surv[t] >= surv[t + 1] for t in range(47))
    assert out["expected_T"] == pytest.approx(sum(out["survival"]))
    mc = out["monte_carlo"]
    assert abs(mc["expected_T"] - out["expected_T"]) <= 5 * mc["expected_T_stderr"]
    assert set(out["baselines"]) == {"additive", "advanced", "concentrated", "renyi", "classical"}
    assert all(isinstance(v, int) for v in out["baselines"].values())
    assert out["baselines"]["advanced"] == 0 and out["baselines"]["renyi"] == 7
    assert (tmp_path / "s.png").stat().st_size > 0
    out = run_json(capsys, "filter", "simulate", "--gaussian-sigma", "2", "--epsilon", "6",
                   "--delta", "1e-3", "--max-steps", "48", "--trajectories", "0", "--filter", "union")
    assert out["monte_carlo"] is None and out["expected_T"] == pytest.approx(28.6, abs=0.05)


def test_simulate_error(capsys):
    assert main(["filter", "simulate", "--gaussian-sigma", "2", "--epsilon", "6", "--delta", "1e-3",
                 "--max-steps", "48", "--trajectories", "-1"]) == 2
    assert "trajectories=-1" in capsys.readouterr().err

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
    assert 0 <= out["hockey_stick_delta"] <= out["tail"] <= out["bound"] == 1e-3
    assert out["expected_T"] == pytest.approx(15.8 if which == "paper" else 28.6, abs=0.05)


@pytest.mark.parametrize("argv, match", [
    (["filter", "audit", "--gaussian-sigma", "-2", "--epsilon", "6", "--delta", "1e-3",
      "--max-steps", "48"], "sigma=-2.0"),
    (["filter", "params", "--delta", "1e-3", "--max-steps", "48", "--epsilon", "3"],
     "give both"),
    (["filter", "params", "--delta", "0", "--max-steps", "48"], r"delta=0.0"),
    (["filter", "audit", "--gaussian-sigma", "2", "--epsilon", "6", "--delta", "1e-3",
      "--max-steps", "0"], r"max_steps=0"),
])
def test_errors_are_one_line_exit_2(capsys, argv, match):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and match in err and err.startswith("lpdp filter: error:")

"""Filter scenarios run by ``lpdp run``: files written, transcripts replayable, summaries consistent."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from lpdp import scenarios
from lpdp.errors import LpdpError, ParameterError, ScenarioError
from lpdp.filters import RealisationFilter

ROOT = Path(__file__).resolve().parents[1] / "scenarios"


def test_ldp_telemetry_scenario(tmp_path):
    row = scenarios.run_file(ROOT / "ldp_telemetry_filter.toml", tmp_path)
    data = json.loads((tmp_path / "ldp_telemetry_filter.json").read_text())
    res = data["result"]
    n_max = data["parameters"]["max_steps"]
    assert (tmp_path / "ldp_telemetry_filter.png").exists()
    assert all(1 <= t <= n_max for t in res["stopping_times"])
    assert [len(p) - 1 for p in res["max_loss_paths"]] == res["stopping_times"]
    replayed = RealisationFilter.replay(tmp_path / "ldp_telemetry_filter_device0_transcript.json")
    assert replayed.steps == res["stopping_times"][0]
    assert max(replayed.spent().values()) == pytest.approx(res["max_loss_paths"][0][-1])
    assert row["summary"][0].startswith(f"{len(res['stopping_times'])} devices")
    # classical reference: RR(0.5) then Gaussian(σ = 2) reports; dp_accounting's PLDs agree on 9
    from dp_accounting.pld import privacy_loss_distribution as pld

    keep = math.exp(0.5) / (math.exp(0.5) + 3)
    rr = pld.from_randomized_response(noise_parameter=(1 - keep) * 4 / 3, num_buckets=4,
                                      value_discretization_interval=1e-4)
    g = pld.from_gaussian_mechanism(2.0, value_discretization_interval=1e-4)
    assert res["classical_reports"] == 9
    assert rr.compose(g.self_compose(8)).get_delta_for_epsilon(6.0) <= 1e-4
    assert rr.compose(g.self_compose(9)).get_delta_for_epsilon(6.0) > 1e-4
    by_filter = res["stopping_times_by_filter"]
    assert set(by_filter) == {"realisation", "union", "combined", "renyi", "concentrated", "additive",
                              "advanced"}
    assert by_filter["realisation"] == res["stopping_times"]
    assert min(by_filter["renyi"]) >= 1 and res["mean_reports"]["union"] > res["mean_reports"]["renyi"]


def test_telemetry_scenario_errors_name_the_key(tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text('kind = "filter_telemetry"\ntitle = "t"\ncategories = ["a", "a"]\n'
                   'epsilon = 1.0\ndelta = 1e-3\n')
    with pytest.raises(ScenarioError, match=r"key 'categories'.*two distinct"):
        scenarios.load(bad)
    bad.write_text('kind = "filter_telemetry"\ntitle = "t"\ncategories = ["a", "b"]\n'
                   'epsilon = 1.0\ndelta = 1.0\n')
    with pytest.raises(ScenarioError, match=r"key 'delta'.*delta=1.0"):
        scenarios.load(bad)


def test_old_mechanism_keys_are_read_with_a_note(tmp_path):
    """``sigma`` (filter scenarios), ``rr_epsilon`` and ``gaussian_sigma`` (telemetry) are the form before
    the mechanism tables: read as before, each with a note that writes the table; with the table too they
    are refused."""
    from lpdp.filters.adaptive import telemetry
    from lpdp.mechanisms import GaussianMechanism, randomized_response
    from lpdp.scenarios.filters import _round_mechanism, _telemetry_mechanisms

    old = tmp_path / "old.toml"
    old.write_text('kind = "filter_comparison"\ntitle = "t"\nsigma = 3.0\n')
    with pytest.warns(FutureWarning, match=r"'sigma' is the old form; write \[mechanism\] kind = "):
        _, params = scenarios.load(old)
    assert _round_mechanism(params) == GaussianMechanism(3.0)
    old.write_text('kind = "filter_comparison"\ntitle = "t"\nsigma = 3.0\n'
                   'mechanism = { kind = "laplace", scale = 1.0 }\n')
    with pytest.warns(FutureWarning), pytest.raises(LpdpError, match=r"give the \[mechanism\] table only"):
        scenarios.run_file(old, tmp_path)
    old.write_text('kind = "filter_telemetry"\ntitle = "t"\ncategories = ["a", "b", "c"]\nepsilon = 6.0\n'
                   'delta = 1e-4\nrr_epsilon = 0.7\ngaussian_sigma = 3.0\n')
    with pytest.warns(FutureWarning) as notes:
        _, params = scenarios.load(old)
    assert [str(n.message).split(";")[0] for n in notes] == [
        "scenario key 'rr_epsilon' is the old form", "scenario key 'gaussian_sigma' is the old form"]
    assert _telemetry_mechanisms(params) == {"rr_epsilon": 0.7, "gaussian_sigma": 3.0}
    new = tmp_path / "new.toml"
    new.write_text('kind = "filter_telemetry"\ntitle = "t"\ncategories = ["a", "b", "c"]\nepsilon = 6.0\n'
                   'delta = 1e-4\n[report]\nkind = "randomized_response"\ncategories = 3\nepsilon = 0.7\n'
                   '[indicator]\nkind = "gaussian"\nsigma = 3.0\n')
    _, params = scenarios.load(new)
    assert _telemetry_mechanisms(params) == {"report": randomized_response(3, 0.7),
                                             "indicator": GaussianMechanism(3.0)}
    with pytest.raises(ParameterError, match=r"outputs 0 \.\. 2, one per category"):
        telemetry(["a", "b", "c"], 6.0, 1e-4, 5, report=randomized_response(4, 0.7), devices=1)


def test_figure_filter_gaussian_scenario(tmp_path):
    row = scenarios.run_file(ROOT / "figure_filter_gaussian.toml", tmp_path)
    data = json.loads((tmp_path / "figure_filter_gaussian.json").read_text())
    comps = data["result"]["comparisons"]
    assert [c["epsilon"] for c in comps] == [6.0, 10.0]
    for c in comps:
        assert set(c["curves"]) == {"realisation", "union", "combined", "additive", "advanced",
                                    "concentrated", "renyi", "classical"}
        for name, mc in c["monte_carlo"].items():
            exact = c["curves"][name]["expected_T"]
            assert abs(mc["expected_T"] - exact) <= 5 * mc["expected_T_stderr"]
    assert round(comps[0]["expected_releases"]["realisation"], 1) == 15.8
    assert (tmp_path / "figure_filter_gaussian.png").exists()
    csv = (tmp_path / "figure_filter_gaussian_survival.csv").read_text().splitlines()
    assert len(csv) == 1 + 2 * 48
    assert any("realisation" in line for line in row["summary"])


def test_filter_sweep_is_a_sweep_of_the_comparison(tmp_path):
    src = tmp_path / "sweep.toml"
    src.write_text('kind = "filter_comparison"\ntitle = "t"\n[sweep]\nmax_steps = [24, 48]\n'
                   'epsilon = [4.0, 6.0]\n')
    scenarios.run_file(src, tmp_path, scheduler="serial")
    cells = json.loads((tmp_path / "sweep.json").read_text())["result"]["cells"]
    assert [(c["parameters"]["max_steps"], c["parameters"]["epsilon"]) for c in cells] == [
        (24, 4.0), (24, 6.0), (48, 4.0), (48, 6.0)]
    e48 = [c["result"]["expected_releases"] for c in cells[2:]]
    assert round(e48[1]["realisation"], 1) == 15.8 and [e["renyi"] for e in e48] == [3.0, 7.0]
    assert (tmp_path / "sweep.png").exists() and (tmp_path / "sweep.csv").exists()
    shipped = scenarios.load(ROOT / "filter_sweep_gaussian.toml")[1]
    assert shipped["default"] is False and len(shipped["sweep"].cells) == 63


def test_filter_comparison_takes_a_workload_mechanism_table(tmp_path):
    """The one data form in scenarios: a ``[mechanism]`` table (kind = ...) replaces ``sigma``, and the
    output names the mechanism in that form; a bad table is one error naming its key."""
    src = tmp_path / "laplace.toml"
    src.write_text('kind = "filter_comparison"\ntitle = "t"\nepsilon = 3.0\ndelta = 1e-3\nmax_steps = 8\n'
                   '[mechanism]\nkind = "laplace"\nscale = 2.0\n')
    scenarios.run_file(src, tmp_path)
    result = json.loads((tmp_path / "laplace.json").read_text())["result"]
    assert result["mechanism"] == {"kind": "laplace", "scale": 2.0, "sensitivity": 1.0}
    src.write_text('kind = "filter_comparison"\ntitle = "t"\n[mechanism]\nkind = "laplace"\n')
    with pytest.raises(ScenarioError, match=r"mechanism\.scale"):
        scenarios.load(src)

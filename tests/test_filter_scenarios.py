"""Filter scenarios run by ``lpdp run``: files written, transcripts replayable, summaries consistent."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from lpdp import scenarios
from lpdp.errors import ScenarioError
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

"""Workloads as data: TOML/JSON files, the inline CLI form, ``lpdp account`` and the ``account`` scenarios.

Oracles: brute-force enumeration of the product of the dominating pairs (tests.test_accountant), the
Gaussian closed form, and the file form against the inline form and the JSON form of the same workload.
"""

from __future__ import annotations

import json
import math
import re

import numpy as np
import pytest
from scipy import stats

from lpdp.cli import main
from lpdp.errors import ScenarioError
from lpdp.mechanisms import (
    DPMechanism,
    FiniteMechanism,
    GaussianMechanism,
    LaplaceMechanism,
    MixtureMechanism,
    RegionMechanism,
    binary_erasure,
    mechanism_from_dict,
    pure,
    randomized_response,
    subsampled,
)
from lpdp.region import PrivacyRegion
from lpdp.workload import KINDS, load, parse
from tests.test_accountant import product_delta

ISSUE_TOML = """
[[mechanism]]
kind = "dp"                 # meets several (ε, δ) guarantees at once
constraints = [[1.0, 0.0], [0.5, 0.1]]
times = 10
[[mechanism]]
kind = "gaussian"
sigma = 3.0                 # sensitivity 1 unless given
times = 50
[[mechanism]]
kind = "laplace"
scale = 1.0
times = 5
[[mechanism]]
kind = "randomized_response"
categories = 4
epsilon = 0.7
times = 20
[[mechanism]]
kind = "finite"             # output distributions on a neighbouring pair
p = [0.5, 0.3, 0.2]
q = [0.2, 0.3, 0.5]
times = 2
"""

FINITE_TOML = """
[[mechanism]]
kind = "dp"
constraints = [[1.0, 0.0], [0.5, 0.1]]
times = 2
[[mechanism]]
kind = "randomized_response"
categories = 4
epsilon = 0.7
times = 2
[[mechanism]]
kind = "finite"
p = [0.5, 0.3, 0.2]
q = [0.2, 0.3, 0.5]
times = 1
"""


def run_json(capsys, *argv):
    assert main(["account", *argv, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_issue_workload_parses_to_its_mechanisms(tmp_path):
    path = tmp_path / "w.toml"
    path.write_text(ISSUE_TOML)
    parts = load(path)
    assert [k for _, k in parts] == [10, 50, 5, 20, 2]
    assert parts[0][0] == DPMechanism([(1.0, 0.0), (0.5, 0.1)])
    assert parts[3][0] == randomized_response(4, 0.7)
    assert parts[4][0] == FiniteMechanism.from_pair([0.5, 0.3, 0.2], [0.2, 0.3, 0.5])
    assert parts[1][0].sensitivity == 1.0


def test_cli_account_finite_workload_is_exact_and_brute_forced(tmp_path, capsys):
    path = tmp_path / "w.toml"
    path.write_text(FINITE_TOML)
    out = run_json(capsys, str(path), "--at", "0", "0.5", "2", "--for-delta", "1e-3")
    assert set(out) >= {"delta_at", "epsilon_for", "exact", "lpdp_version"}
    assert out["exact"] is True
    expected = product_delta([(DPMechanism([(1.0, 0.0), (0.5, 0.1)]), 2), (randomized_response(4, 0.7), 2),
                              (FiniteMechanism.from_pair([0.5, 0.3, 0.2], [0.2, 0.3, 0.5]), 1)],
                             np.array([0.0, 0.5, 2.0]))
    for row, want in zip(out["delta_at"], expected, strict=True):
        assert row["lower"] <= row["upper"]                    # exact: two certified sides
        assert row["lower"] == pytest.approx(want, rel=1e-9, abs=1e-15)
        assert row["upper"] == pytest.approx(want, rel=1e-9, abs=1e-15)
    (row,) = out["epsilon_for"]
    assert row["delta"] == 1e-3  # exact: the δ asked for, echoed
    assert row["lower"] <= row["upper"] <= row["lower"] * (1 + 1e-11)
    assert product_delta([(DPMechanism([(1.0, 0.0), (0.5, 0.1)]), 2), (randomized_response(4, 0.7), 2),
                          (FiniteMechanism.from_pair([0.5, 0.3, 0.2], [0.2, 0.3, 0.5]), 1)],
                         np.array([row["upper"]]))[0] <= 1e-3 * (1 + 1e-9)


def test_json_file_and_inline_form_agree_with_toml(tmp_path, capsys):
    import tomllib

    toml_path, json_path = tmp_path / "w.toml", tmp_path / "w.json"
    toml_path.write_text(ISSUE_TOML)
    json_path.write_text(json.dumps(tomllib.loads(ISSUE_TOML)))
    args = ("--at", "1", "8", "--for-delta", "1e-6")
    a = run_json(capsys, str(toml_path), *args)
    b = run_json(capsys, str(json_path), *args)
    c = run_json(capsys, "--dp", "1,0/0.5,0.1x10", "--gaussian", "3x50", "--laplace", "1x5", "--rr",
                 "4,0.7x20", *args)
    assert a["delta_at"] == b["delta_at"] and a["epsilon_for"] == b["epsilon_for"]
    assert a["exact"] is False and a["route"] == "certified"
    # The inline workload lacks the finite pair: its δ can only be smaller, on both sides.
    for full, part in zip(a["delta_at"], c["delta_at"], strict=True):
        assert part["upper"] <= full["upper"] and part["lower"] <= full["lower"]
        assert full["lower"] <= full["upper"]


def test_gaussians_alone_are_exact_against_the_closed_form(capsys):
    out = run_json(capsys, "--gaussian", "2x3", "--gaussian", "1,0.5x2", "--at", "0.5", "2")
    mu = math.sqrt(3 / 4 + 2 * 0.25)
    assert out["exact"] is True and out["route"] == "gaussian"
    for row in out["delta_at"]:
        e = row["epsilon"]
        want = stats.norm.cdf(-e / mu + mu / 2) - math.exp(e) * stats.norm.cdf(-e / mu - mu / 2)
        assert row["upper"] == pytest.approx(want, rel=1e-9)


@pytest.mark.parametrize("entry,route", [
    ({"kind": "pure", "epsilon": 0.5, "times": 3}, "kairouz"),
    ({"kind": "region", "vertices": [[0.0, 0.8], [0.3, 0.3], [0.8, 0.0]], "times": 2}, "product"),
    ({"kind": "region", "constraints": [[1.0, 1e-3], [0.2, 0.1]], "times": 2}, "product"),
    ({"kind": "laplace", "scale": 2.0, "times": 3}, "certified"),
])
def test_every_kind_alone(entry, route):
    from lpdp.workload import accountant

    g = accountant(parse({"mechanism": [entry]})).guarantee()
    lo, hi = g.delta(np.array([0.0, 0.5, 1.0]))
    assert g.route == route and np.all(lo <= hi)


def test_summary_rounds_toward_the_safe_side(tmp_path, capsys):
    path = tmp_path / "w.toml"
    path.write_text(ISSUE_TOML)
    data = run_json(capsys, str(path), "--at", "1", "--for-delta", "1e-6")
    assert main(["account", str(path), "--at", "1", "--for-delta", "1e-6"]) == 0
    text = capsys.readouterr().out
    for label, key, row in (("delta at eps=1", "delta_at", data["delta_at"][0]),
                            ("eps for delta=1e-06", "epsilon_for", data["epsilon_for"][0])):
        line = next(line for line in text.splitlines() if line.startswith(label))
        upper, lower = (float(x) for x in re.findall(r"at most (\S+) .* reaches (\S+)", line)[0])
        assert upper >= row["upper"] and lower <= row["lower"], key


@pytest.mark.parametrize("text,match", [
    ('[[mechanism]]\nkind = "gauss"\nsigma = 1\n', r"mechanism\[0\]\.kind = 'gauss' must be one of"),
    ('[[mechanism]]\nkind = "gaussian"\nsigma = 1\nscale = 2\n', r"'mechanism\[0\]\.scale' is not used"),
    ('[[mechanism]]\nkind = "laplace"\n', r"missing required key 'mechanism\[0\]\.scale'"),
    ('[[mechanism]]\nkind = "gaussian"\nsigma = -1\n', r"mechanism\[0\] \(gaussian\): sigma=-1"),
    ('[[mechanism]]\nkind = "pure"\nepsilon = 1\ntimes = -2\n', r"times=-2"),
    ('[[mechanism]]\nkind = "region"\n', r"exactly one of 'vertices', 'constraints' and 'losses'"),
    ('[[mechanism]]\nkind = "finite"\np = [0.5, 0.5]\nq = [0.2]\n', r"table\[1\]=\[0\.2\]: must sum to 1"),
    ("budget = 3\n", r"non-empty list of \[\[mechanism\]\]"),
    ("[[mechanism\n", r"not valid TOML"),
])
def test_file_errors_are_one_line(tmp_path, capsys, text, match):
    path = tmp_path / "w.toml"
    path.write_text(text)
    with pytest.raises(ScenarioError, match=match):
        load(path)
    assert main(["account", str(path), "--at", "1"]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and re.search(match, err)


@pytest.mark.parametrize("argv,match", [
    ([], r"no mechanisms"),
    (["--rr", "4"], r"--rr '4': expected CATEGORIES,EPSILON"),
    (["--dp", "1,0,3"], r"--dp '1,0,3': expected EPS,DELTA"),
    (["--pure", "0.5x2.5"], r"TIMES='2.5' must be an integer"),
    (["--gaussian", "abc"], r"'abc' is not a number"),
    (["w.yaml"], r"must end in \.toml or \.json"),
])
def test_cli_errors(capsys, argv, match):
    assert main(["account", *argv]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and re.search(match, err)


def test_account_scenario(tmp_path):
    from lpdp.scenarios import run_file

    path = tmp_path / "acc.toml"
    path.write_text('kind = "account"\ntitle = "t"\nat = [0.5]\nfor_delta = [1e-3]\n' + FINITE_TOML)
    row = run_file(path, tmp_path / "out")
    data = json.loads((tmp_path / "out" / "acc.json").read_text())
    assert data["result"]["exact"] is True and len(data["result"]["delta_at"]) == 1
    assert any(f.endswith(".png") for f in row["files"])
    bad = tmp_path / "bad.toml"
    bad.write_text('kind = "account"\ntitle = "t"\n[[mechanism]]\nkind = "pure"\n')
    with pytest.raises(ScenarioError, match=r"key 'mechanism'.*missing required key 'mechanism\[0\]\.eps"):
        run_file(bad, tmp_path / "out")


@pytest.mark.parametrize("argv", [["--gaussian", "2x10", "--laplace", "1x3"], ["--gaussian", "2x3"],
                                  ["--pure", "0.5x3"]])
def test_plot_and_profile_for_every_route(tmp_path, argv):
    from lpdp.curves import profile
    from lpdp.workload import accountant, parse

    out = tmp_path / "p.png"
    assert main(["account", *argv, "--at", "1", "--plot", str(out)]) == 0
    assert out.stat().st_size > 0
    g = accountant(parse({"mechanism": [{"kind": "gaussian", "sigma": 2.0, "times": 10}]})).guarantee()
    curve = profile(g, points=50)
    assert np.all(curve.lower <= curve.upper) and np.all(np.diff(curve.upper) <= 0)
    assert curve.upper[-1] <= 1e-12 * (1 + 1e-9)


def test_every_mechanism_writes_the_workload_table_and_old_type_tables_still_read():
    """One data form: ``to_dict`` is a ``[[mechanism]]`` table the workload parser reads back (the same
    mechanism: equal, or the same region); a ``type`` table of the older form is read with a note."""
    region = PrivacyRegion.from_pair([0.6, 0.3, 0.1, 0.0], [0.0, 0.2, 0.5, 0.3])
    mechs = [GaussianMechanism(2.0, 3.0), LaplaceMechanism(0.5), randomized_response(3, 1.0),
             binary_erasure(0.25), DPMechanism([(1.0, 1e-6), (0.3, 0.01)]), RegionMechanism(region),
             FiniteMechanism.from_pair([0.5, 0.5], [0.2, 0.8]), subsampled(randomized_response(3, 1.0), 0.25),
             MixtureMechanism([(GaussianMechanism(1.0), None), (pure(1.0), None)], [1, 2])]
    for m in mechs:
        table = m.to_dict()
        assert "type" not in table and table["kind"] in KINDS
        (back, times), = parse({"mechanism": [{**table, "times": 4}]})
        assert back == m and times == 4
    old = {"type": "region", "losses": region.losses.tolist(), "log_p": region.log_p.tolist(),
           "log_q": region.log_q.tolist(), "log_p_inf": region.log_p_inf, "log_q_ninf": region.log_q_ninf}
    with pytest.warns(FutureWarning, match="'type' table"):
        back = mechanism_from_dict(old)
    assert np.allclose(back.region().delta([0.0, 0.5]), region.delta([0.0, 0.5]), rtol=1e-12, atol=0)
    with pytest.warns(FutureWarning):
        mix = mechanism_from_dict({"type": "mixture", "weights": [1.0, 1.0], "steps": [
            {"mechanism": {"type": "gaussian", "sigma": 1.0, "sensitivity": 1.0}, "request": None},
            {"mechanism": {"type": "dp", "constraints": [[1.0, 0.0]]}, "request": None}]})
    assert mix == MixtureMechanism([(GaussianMechanism(1.0), None), (pure(1.0), None)], [1, 1])

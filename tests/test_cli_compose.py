"""``lpdp compose``: the JSON contract, the three kinds of composition, the budget questions, bad input."""

from __future__ import annotations

import json
import math
import re

import numpy as np
import pytest

from lpdp.cli import main
from lpdp.compose import double_dp, heterogeneous, homogeneous


def run_json(capsys, *argv):
    assert main(["compose", *argv, "--json"]) == 0
    out = capsys.readouterr().out
    return json.loads(out)


def _check_contract(doc):
    for key in ("profile", "delta_at", "vertices", "lpdp_version", "method", "epsilon_for"):
        assert key in doc, key
    eps = [e for e, _ in doc["profile"]]
    assert eps == sorted(eps)


def test_double_dp_json_contract(capsys):
    doc = run_json(capsys, "--dp", "0.3,0", "--dp", "0.15,0.02", "-k", "20", "--at", "0.5", "1")
    _check_contract(doc)
    assert doc["method"] == "lattice"
    exact = double_dp((0.3, 0.0), (0.15, 0.02), 20)
    np.testing.assert_allclose([d for _, d in doc["delta_at"]], exact.delta([0.5, 1.0]), rtol=1e-15)
    # The baselines are reported at the same ε, and are looser.
    for name in ("remark1", "remark2"):
        theirs = [d for _, d in doc["baselines"][name]["delta_at"]]
        assert all(t > d for t, (_, d) in zip(theirs, doc["delta_at"], strict=True))
    # Each profile pair is a tight point of the region (δ at that ε).
    e, d = np.array(doc["profile"]).T
    np.testing.assert_allclose(exact.delta(e), d, rtol=1e-12, atol=1e-300)


@pytest.mark.parametrize("method", ["lattice", "remark1", "remark2"])
def test_method_option(capsys, method):
    doc = run_json(capsys, "--dp", "0.3,0", "--dp", "0.15,0.02", "-k", "5", "--at", "1", "--method", method)
    assert doc["method"] == method
    ref = double_dp((0.3, 0.0), (0.15, 0.02), 5, method=method).delta(1.0)
    assert doc["delta_at"][0][1] == pytest.approx(ref, rel=1e-12)


def test_one_constraint_is_kairouz(capsys):
    doc = run_json(capsys, "--dp", "0.1,1e-7", "-k", "100", "--at", "1", "--for-delta", "1e-4")
    _check_contract(doc)
    assert doc["method"] == "kairouz"
    assert doc["delta_at"][0][1] == pytest.approx(float(homogeneous(0.1, 1e-7, 100).delta(1.0)), rel=1e-15)
    assert "baselines" not in doc


def test_pure_is_heterogeneous(capsys):
    doc = run_json(capsys, "--pure", "0.3x10", "--pure", "0.15x20", "--at", "1")
    _check_contract(doc)
    assert doc["method"] == "theorem1"
    assert doc["delta_at"][0][1] == pytest.approx(float(heterogeneous({0.3: 10, 0.15: 20}).delta(1.0)),
                                                  rel=1e-15)


def test_for_delta_is_the_smallest_epsilon(capsys):
    doc = run_json(capsys, "--dp", "0.3,0", "--dp", "0.15,0.02", "-k", "20", "--for-delta", "1e-3", "1e-5")
    exact = double_dp((0.3, 0.0), (0.15, 0.02), 20)
    for target, eps in doc["epsilon_for"]:
        # Compared in log space: exp of an exact log δ can round one ulp above the target.
        assert exact.log_delta(eps) <= math.log(target)
        assert exact.log_delta(eps * (1 - 1e-9)) > math.log(target)   # smallest: a hair less fails
        for name in ("remark1", "remark2"):
            (t, theirs), = [p for p in doc["baselines"][name]["epsilon_for"] if p[0] == target]
            assert theirs >= eps


def test_max_k_within(capsys):
    doc = run_json(capsys, "--dp", "0.3,0", "--dp", "0.15,0.02", "--max-k-within", "2,1e-3")
    found = doc["max_k_within"]["k"]
    assert found["lattice"] >= found["remark2"] >= found["remark1"] >= 1
    for method, k in found.items():
        assert double_dp((0.3, 0.0), (0.15, 0.02), k, method=method).delta(2.0) <= 1e-3
        assert double_dp((0.3, 0.0), (0.15, 0.02), k + 1, method=method).delta(2.0) > 1e-3
    assert doc["k"] == found["lattice"]


def test_summary_plot_and_export(capsys, tmp_path):
    png, js = tmp_path / "c.png", tmp_path / "c.json"
    assert main(["compose", "--dp", "0.3,0", "--dp", "0.15,0.02", "-k", "3", "--at", "1", "--for-delta",
                 "0.01", "--plot", str(png), "--export", str(js)]) == 0
    out = capsys.readouterr().out
    assert "delta(1) =" in out and "epsilon for delta=0.01" in out and "remark1" in out
    assert png.stat().st_size > 1000
    assert "lpdp_version" in json.loads(js.read_text())


def test_several_dp_are_one_mechanism_with_a_note(capsys):
    """``--dp A --dp B`` (the older spelling) is the one mechanism ``--dp A/B`` of every command."""
    assert main(["compose", "--dp", "0.3,0", "--dp", "0.15,0.02", "-k", "5", "--at", "1", "--json"]) == 0
    old = capsys.readouterr()
    assert "several --dp: read as one mechanism meeting them all, --dp 0.3,0/0.15,0.02" in old.err
    assert main(["compose", "--dp", "0.3,0/0.15,0.02", "-k", "5", "--at", "1", "--json"]) == 0
    new = capsys.readouterr()
    assert new.err == "" and json.loads(new.out)["delta_at"] == json.loads(old.out)["delta_at"]


@pytest.mark.parametrize("argv,match", [
    (["--dp", "0.3,1", "-k", "3"], r"delta=1\.0: must be in \[0, 1\)"),
    (["--dp", "0.3,0", "-k", "2.5"], r"-k=2\.5: must be an integer >= 1"),
    (["--dp", "0.3,0", "-k", "0"], r"-k=0: must be an integer >= 1"),
    (["--dp", "0.3,0", "-k", "abc"], r"-k='abc': must be an integer >= 1"),
    (["--pure", "0.3x-1"], r"count=-1: must be an integer >= 0"),
    (["--pure", "0.3"], r"expected EPSxCOUNT"),
    (["--pure=-0.3x2"], r"must be finite and >= 0"),
    (["--dp", "0.3,0/0.1,0.1/0.2,0.01", "-k", "2", "--method", "remark1"],
     r"--method remark1: only used with exactly two --dp constraints"),
    (["--dp", "0.3,0"], r"-k: the number of compositions is required"),
    (["--dp", "0.3,0", "-k", "3", "--method", "remark2"], r"only used with exactly two --dp"),
    (["--pure", "0.3x2", "-k", "3"], r"-k: not used with --pure"),
    (["--dp", "0.3", "-k", "3"], r"expected EPS,DELTA"),
    (["--dp=-0.3,0", "-k", "3"], r"must be finite and >= 0"),
    (["--dp", "0.3,0", "-k", "3", "--for-delta", "2"], r"--for-delta=2\.0: must be in \[0, 1\]"),
    (["--dp", "0.3,0", "--max-k-within", "1,0.1", "--k-max", "-4"], r"--k-max=-4: must be an integer"),
    ([], r"--dp: give one or more"),
])
def test_errors_are_one_line_exit_2(capsys, argv, match):
    assert main(["compose", *argv]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("lpdp compose: error:")
    assert re.search(match, err), err


@pytest.mark.parametrize("method", ["theorem2", "theorem3"])
def test_theorem_routes_are_not_methods(capsys, method):
    """Theorems 2 and 3 are checks of the lattice in the tests, not routes: the usual usage error."""
    with pytest.raises(SystemExit) as exc:
        main(["compose", "--dp", "0.3,0", "--dp", "0.15,0.02", "-k", "3", "--method", method])
    err = capsys.readouterr().err
    assert exc.value.code == 2 and err.count("\n") == 1
    assert f"argument --method: invalid choice: '{method}'" in err, err


def test_infinite_epsilon_is_valid_json(capsys):
    # δ below δ(∞) = 1 - (1 - 0.01)^3: no ε reaches it.
    doc = run_json(capsys, "--dp", "0.3,0.01", "-k", "3", "--for-delta", "1e-3")
    assert doc["epsilon_for"] == [[1e-3, "inf"]]
    assert not math.isinf(doc["profile"][0][0])


def test_max_k_within_one_constraint(capsys):
    doc = run_json(capsys, "--dp", "0.1,1e-6", "--max-k-within", "1,1e-5")
    k = doc["max_k_within"]["k"]["kairouz"]
    assert homogeneous(0.1, 1e-6, k).delta(1.0) <= 1e-5 < homogeneous(0.1, 1e-6, k + 1).delta(1.0)
    assert "baselines" not in doc and doc["k"] == k


def test_three_constraints_use_the_n_constraint_theorem(capsys):
    """Spec §7 through the CLI: checked against brute-force enumeration of the canonical pair."""
    from lpdp import PrivacyRegion
    from tests.oracles import brute_force_delta

    pairs = [(1.0, 0.0), (0.5, 0.01), (0.2, 0.05)]
    argv = ["compose", *[a for e, d in pairs for a in ("--dp", f"{e},{d}")], "-k", "3", "--at", "0.5", "1.5",
            "--json"]
    assert main(argv) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["method"] == "multi"
    r = PrivacyRegion.from_constraints(pairs)
    p = np.exp(np.concatenate([[r.log_p_inf], r.log_p, [-np.inf]]))
    q = np.exp(np.concatenate([[-np.inf], r.log_q, [r.log_q_ninf]]))
    expected = brute_force_delta(p, q, 3, np.array([0.5, 1.5]))
    np.testing.assert_allclose([d for _, d in doc["delta_at"]], expected, rtol=1e-9)


def test_step_gives_the_same_exact_region_for_three_constraints(capsys):
    pairs = [(0.3, 0.0), (0.2, 0.01), (0.1, 0.05)]
    base = ["compose", *[a for e, d in pairs for a in ("--dp", f"{e},{d}")], "-k", "6", "--at", "0.2", "1",
            "--json"]
    assert main(base) == 0
    plain = json.loads(capsys.readouterr().out)
    assert main([*base, "--step", "0.1"]) == 0
    stepped = json.loads(capsys.readouterr().out)
    np.testing.assert_allclose([d for _, d in stepped["delta_at"]], [d for _, d in plain["delta_at"]],
                               rtol=1e-10)

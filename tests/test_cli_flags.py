"""One set of mechanism flags (lpdp.cli.flags): one meaning per flag in account, calibrate, filter and fdp."""

from __future__ import annotations

import json
import math

import pytest

from lpdp.cli import main
from lpdp.cli.flags import MECHANISM_FLAGS, parse_flag
from lpdp.errors import ParameterError
from lpdp.workload import KINDS


def _json(capsys, *argv):
    assert main([*argv, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_every_flag_builds_a_workload_kind():
    for flag, spec in MECHANISM_FLAGS.items():
        needed, optional = KINDS[spec.kind]
        assert set(needed) <= set(spec.fields) | {"constraints"}, flag
        assert set(spec.fields) <= {*needed, *optional}, flag


@pytest.mark.parametrize("flag, text, entry", [
    ("--gaussian", "1.1", {"kind": "gaussian", "sigma": 1.1}),
    ("--gaussian", "1.1,0.5", {"kind": "gaussian", "sigma": 1.1, "sensitivity": 0.5}),
    ("--gaussian", "sigma=1.1,sensitivity=0.5", {"kind": "gaussian", "sigma": 1.1, "sensitivity": 0.5}),
    ("--gaussian", "sensitivity=0.5,sigma=1.1x3", {"kind": "gaussian", "sigma": 1.1, "sensitivity": 0.5,
                                                   "times": 3}),
    ("--gaussian", "sigma=2,times=7", {"kind": "gaussian", "sigma": 2.0, "times": 7}),
    ("--gaussian", "mu=0.5", {"kind": "gaussian", "sigma": 2.0}),
    ("--gaussian", "?x1000", {"kind": "gaussian", "sigma": "?", "times": 1000}),
    ("--pure", "0.02x?", {"kind": "pure", "epsilon": 0.02, "times": "?"}),
    ("--rr", "4,0.7x20", {"kind": "randomized_response", "categories": 4, "epsilon": 0.7, "times": 20}),
    ("--rr", "categories=4,epsilon=0.7", {"kind": "randomized_response", "categories": 4, "epsilon": 0.7}),
    ("--laplace", "scale=2", {"kind": "laplace", "scale": 2.0}),
    ("--dp", "1,0/0.5,0.1x10", {"kind": "dp", "constraints": [[1.0, 0.0], [0.5, 0.1]], "times": 10}),
])
def test_values_read_as_workload_entries(flag, text, entry):
    assert parse_flag(flag, text) == entry


@pytest.mark.parametrize("flag, text, match", [
    ("--gaussian", "sigma=1,mu=2", "sigma or mu, not both"),
    ("--gaussian", "1,sensitivity=2", "KEY=VALUE"),
    ("--gaussian", "rate=0.01", "KEY one of sigma, sensitivity, mu, times"),
    ("--gaussian", "sensitivity=2", "missing sigma"),
    ("--gaussian", "sigma=1,sigma=2", "sigma given twice"),
    ("--gaussian", "1,0.01,3", r"expected SIGMA\[,SENSITIVITY\]\[xTIMES\]"),
    ("--gaussian", "mu=-1", "mu=-1.0: must be finite and > 0"),
    ("--rr", "4", "expected CATEGORIES,EPSILON"),
    ("--pure", "0.5x2.5", "TIMES='2.5' must be an integer"),
])
def test_bad_values_name_the_flag(flag, text, match):
    with pytest.raises(ParameterError, match=match) as info:
        parse_flag(flag, text)
    assert flag in str(info.value)


def test_a_dp_sgd_reading_of_a_positional_pair_is_refused_when_named(capsys):
    """``--gaussian 1,0.01`` is sigma 1 with sensitivity 0.01 everywhere; a sampling rate is not a field."""
    assert main(["account", "--gaussian", "sigma=1,rate=0.01x10", "--for-delta", "1e-6"]) == 2
    assert "rate=0.01" in capsys.readouterr().err


def test_named_and_positional_spellings_give_the_same_account(capsys):
    a = _json(capsys, "account", "--gaussian", "2,0.5x30", "--for-delta", "1e-6")
    b = _json(capsys, "account", "--gaussian", "sensitivity=0.5,sigma=2,times=30", "--for-delta", "1e-6")
    assert a["epsilon_for"] == b["epsilon_for"]
    c = _json(capsys, "account", "--gaussian", "mu=0.25x30", "--for-delta", "1e-6")
    assert math.isclose(c["epsilon_for"][0]["upper"], a["epsilon_for"][0]["upper"], rel_tol=1e-12)


def test_gaussian_means_sigma_in_fdp_as_in_account(capsys):
    """``--gaussian 2`` is σ = 2 (G_{1/2}) in both; ``mu=`` names G_μ; the old μ reading gets a note."""
    fdp = _json(capsys, "fdp", "--gaussian", "2", "-k", "10", "--for-delta", "1e-6")
    capsys.readouterr()
    acc = _json(capsys, "account", "--gaussian", "2x10", "--for-delta", "1e-6")
    assert math.isclose(fdp["epsilon_for"][0]["upper"], acc["epsilon_for"][0]["upper"], rel_tol=1e-12)
    assert math.isclose(fdp["gaussian"], 0.5, rel_tol=1e-15)
    named = _json(capsys, "fdp", "--gaussian", "mu=0.5", "-k", "10", "--for-delta", "1e-6")
    assert math.isclose(named["epsilon_for"][0]["upper"], fdp["epsilon_for"][0]["upper"], rel_tol=1e-12)


def test_fdp_notes_the_changed_meaning_once(capsys):
    assert main(["fdp", "--gaussian", "2", "-k", "3"]) == 0
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--gaussian mu=2" in err
    assert main(["fdp", "--gaussian", "1", "-k", "3"]) == 0          # sigma 1 is mu 1: no note
    assert capsys.readouterr().err == ""


def test_fdp_refuses_a_count_in_the_flag(capsys):
    assert main(["fdp", "--gaussian", "1x10", "-k", "3"]) == 2
    assert "-k, not xTIMES" in capsys.readouterr().err


FILTER = ["--epsilon", "6", "--delta", "1e-3", "--max-steps", "24"]


def test_filter_flags_are_the_account_flags(capsys):
    new = _json(capsys, "filter", "params", "--gaussian", "2", *FILTER)
    old = _json(capsys, "filter", "params", "--gaussian-sigma", "2", *FILTER)
    also = _json(capsys, "filter", "params", "--sigma", "sigma=2", *FILTER)
    assert new == old == also and new["sigma"] == 2                 # exact: an echoed input
    lap = _json(capsys, "filter", "params", "--laplace", "scale=2,sensitivity=1", *FILTER)
    assert lap == _json(capsys, "filter", "params", "--laplace", "2", *FILTER)
    assert lap["mechanism"]["scale"] == 2                            # exact: an echoed input


def test_several_dp_flags_in_a_filter_are_one_mechanism_with_a_note(capsys):
    one = _json(capsys, "filter", "params", "--dp", "1,0/0.5,0.1", *FILTER)
    assert main(["filter", "params", "--dp", "1,0", "--dp", "0.5,0.1", *FILTER, "--json"]) == 0
    cap = capsys.readouterr()
    assert json.loads(cap.out) == one and "--dp 1,0/0.5,0.1" in cap.err


def test_several_mechanism_flags_in_a_filter_are_a_workload(capsys):
    assert main(["filter", "params", "--gaussian", "2", "--pure", "0.5", *FILTER]) == 2
    assert "--rounds iid" in capsys.readouterr().err
    mix = _json(capsys, "filter", "params", "--gaussian", "2x3", "--pure", "0.5", "--rounds", "iid", *FILTER)
    assert mix["mechanism"]["kind"] == "mixture"
    assert main(["filter", "params", "--gaussian", "2x3", *FILTER]) == 2
    assert "only with --rounds" in capsys.readouterr().err


def test_calibrate_keeps_its_free_value(capsys):
    out = _json(capsys, "calibrate", "--gaussian", "?x1000", "--epsilon", "2", "--delta", "1e-6")
    named = _json(capsys, "calibrate", "--gaussian", "sigma=?,times=1000", "--epsilon", "2",
                  "--delta", "1e-6")
    assert out["value"] == named["value"]                              # exact: the same search


def test_the_count_is_times_everywhere_with_k_kept(capsys):
    a = _json(capsys, "fdp", "--laplace", "1", "--times", "5", "--for-delta", "1e-5")
    b = _json(capsys, "fdp", "--laplace", "1", "-k", "5", "--for-delta", "1e-5")
    assert a == b
    c = _json(capsys, "compose", "--dp", "0.5,0", "--times", "4", "--at", "1")
    d = _json(capsys, "compose", "--dp", "0.5,0", "-k", "4", "--at", "1")
    assert c == d

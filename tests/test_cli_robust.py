"""The command line computes only what is asked, prints numbers on the safe side, and never loses a file."""

from __future__ import annotations

import json
import re
from fractions import Fraction
from pathlib import Path

import pytest

from lpdp import PrivacyRegion
from lpdp.cli import main
from lpdp.compose import homogeneous
from lpdp.export import FULL_EDGES, MANIFEST_NAME

ROOT = Path(__file__).resolve().parents[1]
MIXTURE = ROOT / "scenarios" / "figure1_mixture.toml"


def run(capsys, *argv):
    code = main([str(a) for a in argv])
    out = capsys.readouterr()
    return code, out.out, out.err


# ---------------------------------------------------------------- printed numbers err on the safe side
@pytest.mark.parametrize(("eps", "k", "target"), [(0.496, 26, 1e-6), (0.3, 40, 1e-5), (1.0, 7, 1e-3)])
def test_printed_epsilon_is_a_valid_guarantee(capsys, eps, k, target):
    """The issue's example: 12.6287 was printed for a δ(12.6287) = 1.000137e-6 > 1e-6."""
    code, out, _ = run(capsys, "compose", "--dp", f"{eps},0", "-k", k, "--for-delta", target)
    printed = float(re.search(r"epsilon for delta=\S+: (\S+)", out).group(1))
    assert code == 0 and homogeneous(eps, 0.0, k).delta(printed) <= target


def test_every_printed_delta_is_at_least_the_exact_one(capsys):
    code, out, _ = run(capsys, "compose", "--dp", "0.37,1e-4", "-k", 9, "--at", "0.1", "0.7", "1.3")
    region = homogeneous(0.37, 1e-4, 9)
    pairs = re.findall(r"eps = (\S+)\s+delta = (\S+)", out) + re.findall(r"delta\((\S+)\) = (\S+)", out)
    assert code == 0 and len(pairs) >= 3 + 5
    for e, d in pairs:
        # the printed ε is >= the true one and δ is >= δ at the printed ε: each line is a valid pair
        assert Fraction(d) >= Fraction(region.delta(float(e))), (e, d)


# ---------------------------------------------------------------- compute only what is asked
def test_json_of_a_large_composition_never_builds_the_full_profile(capsys, monkeypatch):
    """The profile costs O(edges^2): the CLI abbreviates it for large regions (it took minutes at k=1e5)."""
    calls = []
    original = PrivacyRegion.profile

    def counted(self):
        calls.append(len(self))
        return original(self)

    monkeypatch.setattr(PrivacyRegion, "profile", counted)
    k = 2 * FULL_EDGES
    code, out, _ = run(capsys, "compose", "--dp", "0.1,1e-7", "-k", k, "--for-delta", "1e-3", "--json")
    doc = json.loads(out)
    assert code == 0 and not calls
    assert doc["abbreviated"]["profile_pairs"] > FULL_EDGES and len(doc["profile"]) <= 100
    region = homogeneous(0.1, 1e-7, k)
    assert region.delta(doc["epsilon_for"][0][1]) <= 1e-3 * (1 + 1e-12)
    for e, d in doc["profile"]:
        assert d == region.delta(e)
    code, out, _ = run(capsys, "compose", "--dp", "0.1,1e-7", "-k", k, "--at", "1")
    assert code == 0 and not calls and "first and last 6" in out


def test_small_regions_keep_the_full_data(capsys):
    code, out, _ = run(capsys, "compose", "--dp", "0.5,1e-3", "-k", 5, "--json")
    doc = json.loads(out)
    assert code == 0 and "abbreviated" not in doc and doc["vertices"] and doc["edges"]["loss"]
    assert doc["profile"] == [list(p) for p in homogeneous(0.5, 1e-3, 5).profile()]


# ---------------------------------------------------------------- silent surprises
def test_a_swapped_pair_is_accepted_with_one_warning(capsys):
    code, out, err = run(capsys, "region", "--dp", "1e-3,0.5", "--at", "0")
    assert code == 0 and out
    assert err.count("\n") == 1 and "did you mean --dp 0.5,1e-3" in err
    code, _, err = run(capsys, "region", "--dp", "0.5,1e-3")
    assert code == 0 and err == ""


def test_a_negative_value_is_a_value_not_an_option(capsys):
    code, _, err = run(capsys, "compose", "--dp", "-0.5,0", "-k", 3)
    assert code == 2 and "epsilon=-0.5" in err and "expected one argument" not in err


def test_output_paths_are_checked_before_the_work(capsys, tmp_path, monkeypatch):
    """--export t.xyz used to be refused after the work, and after the plot was written."""
    import lpdp.compose

    monkeypatch.setattr(lpdp.compose, "homogeneous", lambda *a: pytest.fail("computed before refusing"))
    png = tmp_path / "p.png"
    code, out, err = run(capsys, "compose", "--dp", "1,0", "-k", 3, "--plot", png, "--export",
                         tmp_path / "t.xyz")
    assert code == 2 and out == "" and "--export" in err and not png.exists()


# ---------------------------------------------------------------- files: nothing lost
def test_run_writes_a_manifest(capsys, tmp_path):
    out_dir = tmp_path / "res"
    code, _, _ = run(capsys, "run", MIXTURE, "--out", out_dir)
    doc = json.loads((out_dir / MANIFEST_NAME).read_text())
    assert code == 0 and doc["complete"] is True
    assert [i["path"] for i in doc["inputs"]] == [str(MIXTURE)]
    names = sorted(o["name"] for o in doc["outputs"])
    assert names == sorted(p.name for p in out_dir.iterdir() if p.name != MANIFEST_NAME)
    assert {"figure1_mixture.json", "figure1_mixture.png"} <= set(names)


def test_run_refuses_colliding_names_before_running(capsys, tmp_path):
    for sub in ("a", "b"):
        (tmp_path / sub).mkdir()
        (tmp_path / sub / "fig.toml").write_text(MIXTURE.read_text())
    code, out, err = run(capsys, "run", tmp_path / "a" / "fig.toml", tmp_path / "b" / "fig.toml", "--out",
                         tmp_path / "o")
    assert code == 2 and "fig.json" in err and out == "" and not (tmp_path / "o").exists()


def test_run_never_writes_through_a_symlink(capsys, tmp_path):
    out_dir = tmp_path / "o"
    out_dir.mkdir()
    outside = tmp_path / "outside.json"
    outside.write_text("precious")
    (out_dir / "figure1_mixture.json").symlink_to(outside)
    code, _, err = run(capsys, "run", MIXTURE, "--out", out_dir)
    assert code == 2 and "symbolic link" in err and outside.read_text() == "precious"
    assert json.loads((out_dir / MANIFEST_NAME).read_text())["complete"] is False


def test_a_rerun_replaces_outputs_atomically(capsys, tmp_path):
    out_dir = tmp_path / "o"
    assert run(capsys, "run", MIXTURE, "--out", out_dir)[0] == 0
    first = json.loads((out_dir / MANIFEST_NAME).read_text())
    assert run(capsys, "run", MIXTURE, "--out", out_dir)[0] == 0
    again = json.loads((out_dir / MANIFEST_NAME).read_text())
    assert again["complete"] and len(again["outputs"]) == len(first["outputs"])
    assert not [p for p in out_dir.iterdir() if p.name.startswith(".")]  # no temporary file left


# ---------------------------------------------------------------- text for users cites papers and docs
INTERNAL = re.compile(r"[Ss]pec ?§|spec/|[Ss]pec (filter|composition)\.md|\b[Ii]ssue #?\d"
                      r"|README section \(proposed\)")


def test_user_facing_text_cites_papers_not_internal_notes(capsys):
    """Help, errors, docstrings, docs and scenarios cite the papers or docs/, never notes users cannot see."""
    from lpdp.cli import build_parser

    patterns = ("lpdp/**/*.py", "docs/*.md", "scenarios/*.toml", "README.md")
    texts = {str(p): p.read_text() for pattern in patterns for p in ROOT.glob(pattern)}
    parser = build_parser()
    sub = next(a for a in parser._actions if a.choices and "run" in a.choices)
    for name, cmd in sub.choices.items():
        texts[f"lpdp {name} --help"] = cmd.format_help()
        nested = [a for a in cmd._actions if a.choices and isinstance(a.choices, dict)]
        for a in nested:
            texts.update({f"lpdp {name} {n} --help": c.format_help() for n, c in a.choices.items()})
    bad = {where: INTERNAL.search(text).group(0) for where, text in texts.items() if INTERNAL.search(text)}
    assert not bad

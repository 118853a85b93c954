"""Scenario files: schema validation errors name the file, the key and the problem; Figure 1 runs."""

import json
from pathlib import Path

import pytest

from lpdp import ParameterError, ScenarioError
from lpdp.cli import main
from lpdp.scenarios import load, run_file, schema_text

ROOT = Path(__file__).resolve().parents[1]


def write(tmp_path, text, name="s.toml"):
    p = tmp_path / name
    p.write_text(text)
    return p


GOOD = """kind = "mixture"
title = "t"
[[components]]
weight = 0.5
constraints = [[1.3, 0.0]]
[[components]]
weight = 0.5
constraints = [[0.5, 0.2]]
"""


@pytest.mark.parametrize(("text", "match"), [
    ("colour = 'red'\n" + GOOD, r"s.toml: unknown key 'colour'"),
    (GOOD + "colour = 'red'\n", r"s.toml: unknown key 'components\[1\].colour'"),
    (GOOD.replace('title = "t"\n', ""), r"s.toml: missing required key 'title'"),
    (GOOD.replace("weight = 0.5\nconstraints = [[1.3", "weight = 'half'\nconstraints = [[1.3"),
     r"s.toml: key 'components\[0\].weight' = 'half' must be a number"),
    (GOOD.replace("[[1.3, 0.0]]", "[[1.3, 2.0]]"), r"s.toml: key 'components\[0\].constraints': .*delta=2.0"),
    (GOOD.replace('"mixture"', '"nope"'), r"s.toml: key 'kind' = 'nope' must be one of"),
    ("kind = [", r"s.toml: not valid TOML"),
])
def test_schema_errors(tmp_path, text, match):
    with pytest.raises(ScenarioError, match=match):
        load(write(tmp_path, text))


def test_weights_must_sum_to_one(tmp_path):
    text = GOOD.replace("weight = 0.5\nconstraints = [[0.5", "weight = 0.6\nconstraints = [[0.5")
    with pytest.raises(ParameterError, match="must sum to 1"):
        run_file(write(tmp_path, text), tmp_path / "out")


def test_cli_reports_scenario_errors_in_one_line(tmp_path, capsys):
    p = write(tmp_path, "colour = 1\n" + GOOD)
    assert main(["run", str(p), "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "unknown key 'colour'" in err


def test_figure1_scenario_writes_json_and_png(tmp_path):
    row = run_file(ROOT / "scenarios" / "figure1_mixture.toml", tmp_path)
    doc = json.loads((tmp_path / "figure1_mixture.json").read_text())
    assert doc["lpdp_version"] and doc["result"]["area_mixture_outside_union"] > 1e-3
    assert doc["result"]["area_union_outside_mixture"] > 1e-3
    assert (tmp_path / "figure1_mixture.png").read_bytes()[:4] == b"\x89PNG"
    assert row["summary"]


def test_schema_text_documents_every_kind():
    text = schema_text()
    assert "kind = 'mixture'" in text and "components" in text


def test_every_shipped_scenario_validates():
    """Every shipped file loads, warnings being errors here (pyproject.toml): none uses a form before the
    mechanism tables (those are read with a FutureWarning)."""
    files = sorted((ROOT / "scenarios").glob("*.toml"))
    assert files
    for f in files:
        load(f)


def _docs(folder):
    """The scenario documents of a run folder (one per scenario, by its name)."""
    names = {p.stem for p in (ROOT / "scenarios").glob("*.toml")}
    return {p.stem: json.loads(p.read_text()) for p in folder.glob("*.json") if p.stem in names}


def _results(folder):
    return {name: doc["result"] for name, doc in _docs(folder).items()}


def test_lpdp_run_without_arguments_runs_the_default_set(tmp_path, monkeypatch, capsys):
    """The default set runs; every scenario that took under 2 s runs again and gives the same result
    (the slow ones are compared in the deep profile, test_every_default_scenario_is_deterministic)."""
    monkeypatch.chdir(ROOT)
    out = tmp_path / "results"
    assert main(["run", "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "figure1_mixture" in printed and f"to {out}/" in printed
    assert (out / "figure1_mixture.png").exists() and (out / "figure1_mixture.json").exists()
    quick = [ROOT / "scenarios" / f"{name}.toml" for name, doc in _docs(out).items()
             if doc["execution"]["seconds"] < 2.0]
    assert len(quick) >= 4
    assert main(["run", *map(str, quick), "--out", str(tmp_path / "again"), "--quiet"]) == 0
    first, again = _results(out), _results(tmp_path / "again")
    assert again == {k: first[k] for k in again}


@pytest.mark.deep
def test_every_default_scenario_is_deterministic(tmp_path):
    """Two runs of the whole default set: byte-identical results (timings live under execution)."""
    for name in ("a", "b"):
        assert main(["run", "--out", str(tmp_path / name), "--quiet", "--scheduler", "serial"]) == 0
    assert _results(tmp_path / "a") == _results(tmp_path / "b")


def test_tightening_result_has_no_timings(tmp_path):
    """fdp_tightening puts its per-n seconds under execution; two runs give the same result."""
    f = tmp_path / "t.toml"
    f.write_text('kind = "fdp_tightening"\ntitle = "t"\nk = 3\nns = [2, 4]\n'
                 '[mechanism]\nkind = "gaussian"\nsigma = 1.0\n')
    docs = []
    for name in ("a", "b"):
        assert main(["run", str(f), "--out", str(tmp_path / name), "--quiet"]) == 0
        docs.append(json.loads((tmp_path / name / "t.json").read_text()))
    assert docs[0]["result"] == docs[1]["result"]
    assert "seconds" not in json.dumps(docs[0]["result"])
    assert set(docs[0]["execution"]["bracket_seconds"]) == {"n=2", "n=4"}


def test_run_by_name_list_and_copy(tmp_path, monkeypatch, capsys):
    """Bundled scenarios by name from any folder, listed with their titles, copied to edit."""
    from lpdp.scenarios import bundled

    monkeypatch.chdir(tmp_path)
    assert main(["run", "--list"]) == 0
    listed = capsys.readouterr().out.splitlines()
    assert [ln.split()[0] for ln in listed] == sorted(p.stem for p in (ROOT / "scenarios").glob("*.toml"))
    assert any("not run by default" in ln for ln in listed)
    assert main(["run", "figure1_mixture", "--out", "o", "--quiet"]) == 0
    assert (tmp_path / "o" / "figure1_mixture.json").exists()
    assert main(["run", "--copy", "figure1_mixture", "mine.toml"]) == 0
    assert (tmp_path / "mine.toml").read_text() == bundled()["figure1_mixture"].read_text()
    capsys.readouterr()
    assert main(["run", "--copy", "figure1_mixture", "mine.toml"]) == 2         # never overwritten
    assert "exists" in capsys.readouterr().err
    assert main(["run", "nonesuch"]) == 2
    assert "figure1_mixture" in capsys.readouterr().err


def test_run_plot_and_export(tmp_path, capsys):
    sheet, table = tmp_path / "sheet.png", tmp_path / "summary.csv"
    code = main(["run", str(ROOT / "scenarios" / "figure1_mixture.toml"), "--out", str(tmp_path / "o"),
                 "--plot", str(sheet), "--export", str(table), "--json"])
    assert code == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["scenarios"][0]["scenario"] == "figure1_mixture" and doc["lpdp_version"]
    assert sheet.read_bytes()[:4] == b"\x89PNG"
    assert table.read_text().splitlines()[0] == "scenario,kind,seconds,summary,lpdp_version"

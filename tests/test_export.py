"""Exports are plain data that other tools read back to the same region."""

import csv
import io
import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import shapely
from shapely.geometry import shape

import lpdp
from lpdp import ParameterError, PrivacyRegion
from lpdp.errors import OutputError
from lpdp.export import (
    MANIFEST_NAME,
    Manifest,
    atomic_open,
    atomic_write,
    check_output_path,
    region_dict,
    to_csv,
    to_geojson,
    to_json,
    to_wkt,
    write,
)

REGIONS = {"a": PrivacyRegion.from_constraints([(1.3, 0.0), (0.5, 0.2)]),
           "b": PrivacyRegion.from_dp(0.7, 1e-3)}


def test_json_round_trip_rebuilds_the_region():
    doc = json.loads(to_json(REGIONS))
    assert doc["lpdp_version"] == lpdp.__version__
    for label, r in REGIONS.items():
        e = doc["regions"][label]["edges"]
        lp_inf = float(e["log_p_inf"])
        back = PrivacyRegion.from_log_masses(e["loss"], e["log_p"], e["log_q"], log_p_inf=lp_inf,
                                             log_q_ninf=float(e["log_q_ninf"]), check_total=False)
        grid = np.linspace(0, 2, 21)
        # both certified brackets hold the true δ, so they overlap; they are a few ulps wide
        lows = np.maximum(r.lower.delta(grid), back.lower.delta(grid))
        assert (lows <= np.minimum(r.delta(grid), back.delta(grid))).all()
        np.testing.assert_allclose(back.delta(grid), r.delta(grid), rtol=1e-13, atol=0.0)


def test_region_dict_profile_sorted_and_delta_at():
    d = region_dict(REGIONS["a"], at=[1.0, 0.0])
    eps = [e for e, _ in d["profile"]]
    assert eps == sorted(eps)
    assert d["delta_at"][1][1] == pytest.approx(float(REGIONS["a"].delta(0.0)), rel=1e-15)


def test_geojson_polygons_have_the_region_area():
    doc = json.loads(to_geojson(REGIONS))
    assert doc["lpdp_version"] == lpdp.__version__
    for feat in doc["features"]:
        poly = shape(feat["geometry"])
        assert poly.area == pytest.approx(REGIONS[feat["properties"]["label"]].area(), abs=1e-15)


def test_csv_boundary_is_the_tradeoff_curve():
    text = to_csv(REGIONS)
    # readable by pandas.read_csv without options: the header first, no comment line, one width
    assert text.splitlines()[0] == "label,type_I,type_II,lpdp_version"
    assert {len(r) for r in csv.reader(io.StringIO(text))} == {4}
    rows = list(csv.DictReader(io.StringIO(text)))
    assert {row["lpdp_version"] for row in rows} == {lpdp.__version__}
    for row in rows:
        r = REGIONS[row["label"]]
        x, y = float(row["type_I"]), float(row["type_II"])
        if 0 < x:
            assert y == pytest.approx(float(r.tradeoff(x)), abs=1e-12)


def test_wkt_loads_in_shapely():
    lines = [ln for ln in to_wkt(REGIONS).splitlines() if not ln.startswith("#")]
    for line, r in zip(lines, REGIONS.values(), strict=True):
        assert shapely.from_wkt(line).equals_exact(r.polygon, 1e-15)


def test_write_by_suffix(tmp_path):
    for suffix in (".json", ".geojson", ".csv", ".wkt"):
        path = write(tmp_path / f"out{suffix}", regions=REGIONS, payload={"x": 1})
        assert path.read_text()
    with pytest.raises(ParameterError, match=r"--export .*out.txt.*must end in one of .json"):
        write(tmp_path / "out.txt", regions=REGIONS)
    with pytest.raises(ParameterError, match=r"no region to write as .wkt"):
        write(tmp_path / "out.wkt", payload={"x": 1})


def test_table_csv_has_header_first_and_version_column(tmp_path):
    path = write(tmp_path / "t.csv", table=[{"a": 1, "b": 0.5}, {"a": 2, "b": 0.25}])
    rows = list(csv.DictReader(io.StringIO(path.read_text())))
    assert [(int(r["a"]), float(r["b"]), r["lpdp_version"]) for r in rows] == [
        (1, 0.5, lpdp.__version__), (2, 0.25, lpdp.__version__)]


def test_jsonable_lives_in_the_library_not_the_cli():
    # importing the export module must not import the command line (it used to: an import cycle)
    code = "import sys, lpdp.export, lpdp.scenarios; print('lpdp.cli' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


# ---------------------------------------------------------------- atomic writes, never a lost file
BIG = "x" * 35_000


def test_failed_write_leaves_the_old_file_intact(tmp_path):
    """A write killed by the file-size limit (ulimit -f 16) keeps the previous 35 KB file."""
    target = tmp_path / "old.json"
    target.write_text(json.dumps({"keep": BIG}))
    before = target.read_bytes()
    code = ("import resource, sys\n"
            "resource.setrlimit(resource.RLIMIT_FSIZE, (16 * 1024, 16 * 1024))\n"
            "from lpdp import PrivacyRegion, LpdpError\n"
            "from lpdp.export import write\n"
            "try:\n"
            "    write(sys.argv[1], payload={'data': 'y' * 100_000})\n"
            "except LpdpError as exc:\n"
            "    print(type(exc).__name__, exc)\n")
    out = subprocess.run([sys.executable, "-c", code, str(target)], capture_output=True, text=True,
                         env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    assert out.stdout.startswith("OutputError") and "previous file is unchanged" in out.stdout, out
    assert target.read_bytes() == before
    assert [p.name for p in tmp_path.iterdir()] == ["old.json"]  # no temporary file left behind


def test_failure_inside_the_block_keeps_old_file(tmp_path):
    target = tmp_path / "a.txt"
    target.write_text("old")
    with pytest.raises(RuntimeError), atomic_open(target) as f:
        f.write("new, half written")
        raise RuntimeError("boom")
    assert target.read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["a.txt"]


def test_atomic_write_keeps_the_mode_of_the_file_it_replaces(tmp_path):
    target = tmp_path / "a.txt"
    target.write_text("old")
    target.chmod(0o640)
    atomic_write(target, "new")
    assert target.read_text() == "new" and stat.S_IMODE(target.stat().st_mode) == 0o640


def test_writes_refuse_symlinks_and_never_write_through_them(tmp_path):
    outside = tmp_path / "outside.json"
    outside.write_text("precious")
    link = tmp_path / "link.json"
    link.symlink_to(outside)
    with pytest.raises(OutputError, match="symbolic link"):
        write(link, payload={"x": 1})
    with pytest.raises(OutputError, match="symbolic link"):
        atomic_write(link, "y")
    assert outside.read_text() == "precious" and link.is_symlink()


@pytest.mark.parametrize("make, match", [
    (lambda d: d / "missing" / "x.json", "folder .* does not exist"),
    (lambda d: d, "is a directory"),
    (lambda d: Path("/proc/x.json"), "cannot write"),
])
def test_unwritable_paths_are_refused_before_any_work(tmp_path, make, match):
    with pytest.raises(OutputError, match=match):
        check_output_path(make(tmp_path), "--export")
    with pytest.raises(OutputError, match=match):
        write(make(tmp_path), payload={"x": 1})


def test_manifest_records_outputs_and_completion(tmp_path):
    out = tmp_path / "res"
    with Manifest(out, inputs=[__file__]) as m:
        m.write("a.json", "{}", source="a.toml")
        doc = json.loads((out / MANIFEST_NAME).read_text())
        assert doc["complete"] is False  # written before the outputs: an interrupted run shows it
    doc = json.loads((out / MANIFEST_NAME).read_text())
    assert doc["complete"] is True and doc["lpdp_version"] == lpdp.__version__
    assert doc["inputs"][0]["path"] == __file__ and len(doc["inputs"][0]["sha256"]) == 64
    assert [(o["name"], o["bytes"]) for o in doc["outputs"]] == [("a.json", 2)]
    again = Manifest(out, inputs=[])
    assert again.done("a.json") and not again.done("b.json")
    (out / "a.json").write_text("changed")
    assert not again.done("a.json")


def test_manifest_refuses_colliding_names_and_marks_failure(tmp_path):
    out = tmp_path / "res"
    with pytest.raises(OutputError, match="a/fig.toml and b/fig.toml both write 'fig.json'"):
        with Manifest(out, inputs=[]) as m:
            m.claim("fig.json", "b/fig.toml")
            m.claim("fig.json", "a/fig.toml")
    assert json.loads((out / MANIFEST_NAME).read_text())["complete"] is False
    with pytest.raises(OutputError, match="plain file name"):
        Manifest(out).claim("../escape.json")
    (tmp_path / "file").write_text("")
    with pytest.raises(OutputError, match="not a folder"):
        Manifest(tmp_path / "file")

"""The foundation's CLI: summaries, JSON, plot/export files, and one-line errors with exit status 2."""

import json
import subprocess
import sys

import numpy as np
import pytest

import lpdp
from lpdp import PrivacyRegion
from lpdp.cli import main


def run(capsys, *argv):
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


def test_region_summary_and_json(capsys):
    code, out, _ = run(capsys, "region", "--dp", "1.3,0", "--dp", "0.5,0.2", "--at", "1")
    assert code == 0 and "profile" in out and "delta(1)" in out
    code, out, err = run(capsys, "region", "--dp", "1.3,0", "--dp", "0.5,0.2", "--at", "1", "--json")
    assert "several --dp: read as one mechanism meeting them all, --dp 1.3,0/0.5,0.2" in err
    code_new, out_new, err_new = run(capsys, "region", "--dp", "1.3,0/0.5,0.2", "--at", "1", "--json")
    assert code_new == 0 and err_new == "" and out_new == out       # the one form, silent
    doc = json.loads(out)
    exact = PrivacyRegion.from_dp(1.3, 0).intersect(PrivacyRegion.from_dp(0.5, 0.2))
    assert doc["delta_at"][0][1] == pytest.approx(float(exact.delta(1.0)), rel=1e-12)
    assert doc["lpdp_version"] == lpdp.__version__


def test_mix_json_matches_support_function_sum(capsys):
    code, out, _ = run(capsys, "mix", "--weight", "0.5", "--dp", "1.3,0", "--weight", "0.5",
                       "--dp", "0.5,0.2", "--at", "0.5", "--json")
    doc = json.loads(out)
    a, b = PrivacyRegion.from_dp(1.3, 0), PrivacyRegion.from_dp(0.5, 0.2)
    assert doc["delta_at"][0][1] == pytest.approx(0.5 * a.delta(0.5) + 0.5 * b.delta(0.5), rel=1e-13)


def test_plot_and_export_files(capsys, tmp_path):
    png, gj = tmp_path / "r.png", tmp_path / "r.geojson"
    code, _, _ = run(capsys, "mix", "--weight", "0.5", "--dp", "1.3,0", "--weight", "0.5",
                     "--dp", "0.5,0.2", "--plot", str(png), "--export", str(gj))
    assert code == 0
    assert png.read_bytes()[:4] == b"\x89PNG"
    assert json.loads(gj.read_text())["type"] == "FeatureCollection"


@pytest.mark.parametrize(("argv", "match"), [
    (["region", "--dp=-1,0"], "epsilon=-1.0"),
    (["region", "--dp", "1,1.5"], "delta=1.5: must be in [0, 1]"),
    (["region", "--dp", "1,nan"], "delta=nan"),
    (["region", "--dp", "inf,0"], "epsilon=inf"),
    (["region", "--dp", "1;0"], "expected EPS,DELTA"),
    (["mix", "--weight", "0.5", "--dp", "1,0", "--weight", "0.6", "--dp", "1,0"], "must sum to 1"),
    (["mix", "--weight", "-0.5", "--dp", "1,0", "--weight", "1.5", "--dp", "1,0"], "weights[0]=-0.5"),
    (["region", "--dp", "1,0", "--plot", "x.gif"], "--plot 'x.gif'"),
    (["region", "--dp", "1,0", "--export", "x.txt"], "--export 'x.txt'"),
    (["region"], "--dp: at least one"),
    (["account", "--gaussian", "3x5", "--at", "1", "-1"], "epsilon=-1.0: must be finite and >= 0"),
    (["account", "--gaussian", "3x5", "--for-delta", "1e-5", "2"], "delta=2.0: must be in [0, 1]"),
])
def test_user_errors_are_one_line_exit_2(capsys, argv, match):
    code, _, err = run(capsys, *argv)
    assert code == 2
    assert err.count("\n") == 1 and err.startswith("lpdp ")
    assert match in err


def test_usage_errors_are_one_line_exit_2():
    out = subprocess.run([sys.executable, "-m", "lpdp", "region", "--nope"], capture_output=True, text=True)
    assert out.returncode == 2
    assert out.stderr.count("\n") == 1 and "unrecognized arguments" in out.stderr
    assert "Traceback" not in out.stderr


def test_console_script_runs_end_to_end(tmp_path):
    out = subprocess.run([sys.executable, "-m", "lpdp", "region", "--dp", "1,0", "--at", "0", "--json"],
                         capture_output=True, text=True, check=True, cwd=tmp_path)
    doc = json.loads(out.stdout)
    assert np.isclose(doc["delta_at"][0][1], (np.e - 1) / (np.e + 1), rtol=1e-14)

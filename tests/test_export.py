"""Exports are plain data that other tools read back to the same region."""

import csv
import io
import json

import numpy as np
import pytest
import shapely
from shapely.geometry import shape

import lpdp
from lpdp import ParameterError, PrivacyRegion
from lpdp.export import region_dict, to_csv, to_geojson, to_json, to_wkt, write

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
        np.testing.assert_array_equal(back.delta(grid), r.delta(grid))


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
    assert text.startswith(f"# lpdp {lpdp.__version__}")
    rows = list(csv.DictReader(io.StringIO(text.split("\n", 1)[1])))
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
    with pytest.raises(ParameterError, match=r"suffix must be .json"):
        write(tmp_path / "out.txt", regions=REGIONS)
    with pytest.raises(ParameterError, match=r"no region to write as .wkt"):
        write(tmp_path / "out.wkt", payload={"x": 1})

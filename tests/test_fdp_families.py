"""The DP-TV family from below (one constraint at ε = 0) and Figure 3's caption, by dense search."""

import json

import numpy as np
import pytest

from lpdp import ParameterError
from lpdp.fdp import below
from lpdp.scenarios import run_file
from lpdp.tradeoff import gaussian

T = np.linspace(0.0, 1.0, 20001)


def _area_under(constraints):
    """∫ max_j f_{ε_j,δ_j}(t) dt by the trapezoid rule on a fine grid (no lpdp geometry)."""
    f = np.zeros_like(T)
    for e, d in constraints:
        f = np.maximum(f, np.maximum(1 - d - np.exp(e) * T, np.exp(-e) * (1 - d - T)))
    return float(np.sum((f[1:] + f[:-1]) / 2 * np.diff(T)))


def test_dp_tv_is_the_best_pair_with_a_zero_epsilon():
    """Dense search over the free tangent (δ = δ_f(ε) makes it a tangent, so f⁻ <= f): nothing beats
    lpdp's DP-TV pair by more than the search's resolution, and its area is the caption's 0.228866."""
    f = gaussian(1.0)
    tv = float(f.delta(0.0))
    a = below(f, 2, family="dp_tv")
    assert a.constraints[1][0] == 0.0 and tv <= a.constraints[1][1] <= tv * (1 + 1e-9)
    grid = np.linspace(0.3, 2.0, 341)
    best = max(_area_under([(e, float(f.delta(e))), (0.0, tv)]) for e in grid)
    ours = _area_under(a.constraints)
    assert ours >= best - 1e-7 and abs(ours - 0.228866) < 5e-6
    lines = np.max([np.maximum(1 - d - np.exp(e) * T, np.exp(-e) * (1 - d - T)) for e, d in a.constraints],
                   axis=0)
    assert np.all(np.maximum(lines, 0) <= np.asarray(f(T)) + 1e-15)      # from below


def test_caption_areas():
    f = gaussian(1.0)
    one, tv, two = (_area_under(below(f, n, family=fam).constraints)
                    for n, fam in [(1, "dp"), (2, "dp_tv"), (2, "dp")])
    assert abs(one - 0.219526) < 5e-6 and abs(tv - 0.228866) < 5e-6 and abs(two - 0.232975) < 5e-6
    assert one < tv < two


def test_family_errors_name_the_parameter():
    with pytest.raises(ParameterError, match="family"):
        below(gaussian(1.0), 2, family="tv")
    with pytest.raises(ParameterError, match="n=1"):
        below(gaussian(1.0), 1, family="dp_tv")


def test_caption_scenario(tmp_path):
    from pathlib import Path

    root = Path(__file__).resolve().parents[1] / "scenarios"
    run_file(root / "figure3_caption_dp_tv.toml", tmp_path, progress=False)
    result = json.loads((tmp_path / "figure3_caption_dp_tv.json").read_text())["result"]
    areas = [r["area_under"] for r in result["families"].values()]
    for area, constraints in zip(areas, [r["constraints"] for r in result["families"].values()],
                                 strict=True):
        assert abs(area - _area_under(constraints)) < 1e-7
    assert areas[0] < areas[1] < areas[2] < result["area_under_exact"]

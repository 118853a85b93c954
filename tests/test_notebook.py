"""Notebook habits: HTML reprs rounded toward the safe side, .plot() on regions and guarantees."""

import re

import numpy as np
import pytest

from lpdp import Accountant, ParameterError, PrivacyRegion
from lpdp.mechanisms import GaussianMechanism, LaplaceMechanism, pure

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")

_CELL = re.compile(r"<td>([^<]*)</td>")


def _rows(html):
    cells = _CELL.findall(html)
    return [cells[i:i + 3] for i in range(0, len(cells), 3)]


def test_region_html_rows_are_valid_guarantees():
    region = PrivacyRegion.from_constraints([(1.3, 0.0), (0.5, 0.2), (0.1, 0.35)])
    cells = _CELL.findall(region._repr_html_())
    pairs = [(float(cells[i]), float(cells[i + 1])) for i in range(0, len(cells), 2)]
    assert len(pairs) == 3
    for eps, delta in pairs:          # printed (ε, δ) is implied by the region: δ(printed ε) <= printed δ
        assert float(region.delta(eps)) <= delta
    assert [e for e, _ in pairs] == sorted(e for e, _ in pairs)


def test_large_region_html_is_abbreviated():
    from lpdp.compose import homogeneous

    html = homogeneous(0.1, 1e-7, 300)._repr_html_()
    assert html.count("<tr>") == 1 + 8 + 1 and "…" in html


def test_guarantee_html_rounds_each_side_its_way():
    g = Accountant().compose(GaussianMechanism(2.0), 3).compose(LaplaceMechanism(1.0)).guarantee()
    assert not g.exact
    rows = _rows(g._repr_html_())
    assert len(rows) == 8 and "certified" in g._repr_html_()
    for label, hi, lo in rows[:5]:
        eps = float(label.split("=")[1])
        d_lo, d_hi = g.delta(eps)
        assert float(hi) >= d_hi and float(lo) <= d_lo
    for label, hi, lo in rows[5:]:
        e_lo, e_hi = g.epsilon(float(label.split("=")[1]))
        assert float(hi) >= e_hi and float(lo) <= e_lo


def test_plot_methods_return_their_artists():
    import matplotlib.pyplot as plt

    region = PrivacyRegion.from_dp(1.0, 0.1)
    fig, ax = plt.subplots()
    artists = region.plot(ax, label="R(1, 0.1)", color="C3")
    xs, ys = artists[-1].get_data()
    np.testing.assert_array_equal(np.c_[xs, ys], region.boundary())
    assert ax.get_legend().get_texts()[0].get_text() == "R(1, 0.1)"
    g = Accountant().compose(pure(1.0), 3).guarantee()
    for kind in ("profile", "tradeoff", "tpr"):
        assert g.plot(kind=kind)
    with pytest.raises(ParameterError, match="budget"):
        g.plot(kind="budget")
    plt.close("all")

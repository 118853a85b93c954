import pytest

from lpdp import PrivacyRegion

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")


def test_regions_plot_draws_each_region_with_equal_aspect():
    import matplotlib.pyplot as plt

    from lpdp import plot

    fig, ax = plt.subplots()
    regions = [PrivacyRegion.from_dp(1.0, 0.0), PrivacyRegion.from_dp(0.5, 0.2)]
    artists = plot.regions(regions, labels=["a", "b"], ax=ax, fill=True)
    assert len(artists) == 1 + 2 * 2
    assert ax.get_aspect() == 1.0
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["a", "b"]
    xs, ys = artists[1].get_data()
    assert list(xs) == list(regions[0].boundary()[:, 0])
    plt.close(fig)


def test_lpdp_import_does_not_import_matplotlib():
    import subprocess
    import sys

    code = "import sys, lpdp, lpdp.region, lpdp.mixture; print('matplotlib' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"

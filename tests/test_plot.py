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


def test_filter_figure_titles_name_mixes_and_cycles():
    """A figure of a workload names its mechanisms: a cycle's runs once with their length, a mix's steps."""
    pytest.importorskip("matplotlib")
    import matplotlib

    matplotlib.use("Agg")
    from lpdp.filters import comparison, sequence_comparison, workload_steps
    from lpdp.mechanisms import GaussianMechanism, mixture, randomized_response
    from lpdp.plot import filter_survival

    steps = workload_steps([(randomized_response(4, 0.7), 3), (GaussianMechanism(2.0), 1)])
    c = sequence_comparison(steps, 6.0, 1e-3, 8, pairs=[(1, 0)], trajectories=200)
    filter_survival(c)
    title = " ".join(matplotlib.pyplot.gca().get_title().split())    # titles are wrapped
    rr, g = randomized_response(4, 0.7).label, GaussianMechanism(2.0).label     # the mechanisms' own labels
    assert f"cycle of {rr} ×3, {g}" in title
    mix = mixture(list(dict.fromkeys(steps)), [3, 1])
    filter_survival(comparison(mix, 6.0, 1e-3, 8, trajectories=0))
    assert f"i.i.d. mix of {rr}, {g}" in " ".join(matplotlib.pyplot.gca().get_title().split())
    matplotlib.pyplot.close("all")


def test_preloaded_pyplot_draws_a_figure(tmp_path):
    """``plot.preload`` imports pyplot in a thread (a fresh process, so the import really happens there);
    the figure drawn next waits for it, and the thread ends without an exception."""
    import subprocess
    import sys

    code = (
        "import sys, threading\n"
        "errors = []\n"
        "threading.excepthook = lambda a: errors.append(a.exc_value)\n"
        "from lpdp import plot\n"
        "plot.preload()\n"
        "thread = plot._PRELOAD\n"
        "plot.save_figure(lambda ax: ax.plot([0, 1], [1, 0]), sys.argv[1])\n"
        "thread.join()\n"
        "print(thread is not None, thread.is_alive(), errors, 'matplotlib.pyplot' in sys.modules)\n")
    out = subprocess.run([sys.executable, "-c", code, str(tmp_path / "f.png")], capture_output=True,
                         text=True, check=True)
    assert out.stdout.split() == ["True", "False", "[]", "True"], out.stderr
    assert (tmp_path / "f.png").stat().st_size > 1000

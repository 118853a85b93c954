"""Plots in the style of the paper's figures. matplotlib is imported lazily.

Functions take ``ax=None`` (a new figure is made) and return the artists they drew.
"""

from __future__ import annotations

import math
import sys
import textwrap
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from lpdp.export import atomic_open, check_output_path

_PRELOAD: threading.Thread | None = None


def preload() -> None:
    """Import matplotlib's pyplot in a background thread, once; the next figure waits for it.

    A sweep on a cluster calls it once its cells are submitted: the ~0.4 s import then overlaps the
    workers' computing instead of following it (the main process only waits for results). It is not called
    before the workers exist: a process forked while another thread holds an import lock can deadlock.
    """
    global _PRELOAD
    if _PRELOAD is None and "matplotlib.pyplot" not in sys.modules:
        _PRELOAD = threading.Thread(target=_load_pyplot, name="lpdp-matplotlib-import", daemon=True)
        _PRELOAD.start()


def _pyplot():
    if _PRELOAD is not None:
        _PRELOAD.join()
    return _load_pyplot()


def _load_pyplot():
    import matplotlib

    if matplotlib.get_backend().lower() not in ("agg", "svg", "pdf") and not _interactive():
        matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _interactive() -> bool:
    return hasattr(sys, "ps1") or "ipykernel" in sys.modules


def _axes(ax: Any) -> Any:
    if ax is not None:
        return ax
    return _pyplot().subplots(figsize=(6, 6))[1]


#: Longest title line (characters) and most title lines: longer titles are wrapped, then cut with "…".
TITLE_WIDTH, TITLE_LINES = 60, 3


def wrap_title(text: str, width: int = TITLE_WIDTH, lines: int = TITLE_LINES) -> str:
    """``text`` wrapped to ``width`` characters a line and at most ``lines`` lines (cut with "…").

    Examples
    --------
    >>> wrap_title("a " * 50, width=20, lines=2).splitlines()
    ['a a a a a a a a a a', 'a a a a a a a a a …']
    """
    out = textwrap.wrap(" ".join(str(text).split()), width, break_on_hyphens=False) or [""]
    if len(out) > lines:
        out = out[:lines]
        out[-1] = out[-1][: width - 2].rstrip() + " …"
    return "\n".join(out)


def legend_outside(ax: Any, *, columns: int | None = None) -> Any:
    """A legend below the axes, where it cannot cover data (one column for up to four entries, else
    two); nothing when no artist has a label. Returns the legend."""
    handles, labels = ax.get_legend_handles_labels()
    if not handles:
        return None
    ncol = columns or (1 if len(handles) <= 4 else 2)
    return ax.legend(handles, labels, loc="upper center", bbox_to_anchor=(0.5, -0.13), ncol=ncol,
                     fontsize="small", frameon=False)


def count_ticks(axis: Any, values: Sequence[float]) -> None:
    """Ticks of a log-scaled count axis at the ``values`` themselves, written as plain numbers (2, 4, 8,
    16, not 2×10⁰), without minor labels."""
    from matplotlib.ticker import FixedLocator, FuncFormatter, NullFormatter

    shown = sorted({float(v) for v in values})
    axis.set_major_locator(FixedLocator(shown))
    axis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    axis.set_minor_formatter(NullFormatter())


def probability_axis(ax: Any, values: Sequence[Any], *, which: str = "y") -> None:
    """A log-scaled probability axis from the smallest positive value shown (a third below it) to 1."""
    v = np.concatenate([np.ravel(np.asarray(x, dtype=float)) for x in values])
    v = v[np.isfinite(v) & (v > 0)]
    low = max(float(v.min()) / 3 if v.size else 1e-12, 1e-300)
    (ax.set_yscale if which == "y" else ax.set_xscale)("log")
    (ax.set_ylim if which == "y" else ax.set_xlim)(min(low, 0.5), 1.0)


def regions(items: Sequence[Any], labels: Sequence[str] | None = None, ax: Any = None, *,
            fill: bool = False, styles: Sequence[dict[str, Any]] | None = None) -> list[Any]:
    """Draw privacy regions in the (type I, type II) error plane, as the paper's figures do.

    Parameters
    ----------
    items : sequence of PrivacyRegion
        Regions to draw (their lower boundaries, and optionally their fill).
    labels : sequence of str, optional
        Legend labels, one per region.
    ax : matplotlib Axes, optional
        Where to draw; a new figure is made when omitted.
    fill : bool
        Shade each region lightly.
    styles : sequence of dict, optional
        Extra keyword arguments for each line (colour, linestyle, ...).

    Returns
    -------
    list
        The matplotlib artists drawn.

    Examples
    --------
    >>> import lpdp
    >>> from lpdp import plot
    >>> artists = plot.regions([lpdp.PrivacyRegion.from_dp(1.0, 0.0)], labels=["R(1, 0)"])
    """
    ax = _axes(ax)
    artists = [ax.plot([0, 1], [1, 0], color="0.6", lw=0.8, ls=":", label="_diagonal")[0]]
    for i, region in enumerate(items):
        label = labels[i] if labels is not None else f"region {i + 1}"
        style = dict(styles[i]) if styles is not None else {}
        xs, ys = region.boundary().T
        (line,) = ax.plot(xs, ys, label=label, **style)
        artists.append(line)
        if fill:
            vx, vy = region.vertices.T
            artists.append(ax.fill(vx, vy, alpha=0.12, color=line.get_color(), label="_fill")[0])
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1)
    ax.set_aspect("equal")
    ax.set_xlabel("type I error  $\\beta_I$")
    ax.set_ylabel("type II error  $\\beta_{II}$")
    ax.legend(loc="upper right", fontsize="small")
    ax.grid(True, lw=0.3, alpha=0.5)
    return artists


def region_panels(panels: dict[Any, dict[str, Any]], ax: Any, *,
                  labels: Callable[[Any, str], str] | None = None,
                  styles: dict[str, dict[str, Any]] | None = None) -> list[Any]:
    """Side-by-side panels of regions (e.g. one per k), replacing ``ax`` by ``len(panels)`` axes.

    ``panels`` maps a panel key to ``{name: region}``; ``labels(key, name)`` makes the legend entry and
    ``styles[name]`` the line style. Returns the new axes.
    """
    fig = ax.figure
    fig.clear()
    axes = fig.subplots(1, len(panels), squeeze=False)[0]
    for axis, (key, regs) in zip(axes, panels.items(), strict=True):
        regions(list(regs.values()), ax=axis,
                labels=[labels(key, name) if labels else name for name in regs],
                styles=[(styles or {}).get(name, {}) for name in regs])
    return list(axes)


#: File types :func:`save_figure` writes.
PLOT_SUFFIXES = (".png", ".svg", ".pdf")


def save_figure(draw: Callable[[Any], None], path: str | Path, *,
                figsize: tuple[float, float] = (6.0, 6.0), title: str | None = None,
                option: str = "--plot") -> Path:
    """Make a figure, let ``draw(ax_or_fig)`` fill it, and save it to ``path`` (PNG, SVG or PDF).

    ``draw`` receives an Axes; a callback that wants several panels can use ``ax.figure``, clear it and
    add its own subplots. The path is checked before drawing and the file is written atomically
    (:func:`lpdp.export.atomic_open`): a failure leaves any previous file intact.
    """
    path = check_output_path(path, option, PLOT_SUFFIXES)
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=figsize)
    try:
        draw(ax)
        if title:
            fig.suptitle(wrap_title(title, width=max(TITLE_WIDTH, int(10 * figsize[0]))))
        fig.tight_layout()
        with atomic_open(path, "wb", option=option) as f:
            fig.savefig(f, format=path.suffix[1:].lower(), dpi=120, bbox_inches="tight")
    finally:
        plt.close(fig)
    return path


#: Line styles of the filters in :func:`filter_survival` and the filter sweep figure (labels come from the
#: filter registry, :func:`lpdp.filters.registry.filter_label`; "classical" is the reference line).
FILTER_STYLES: dict[str, dict[str, Any]] = {
    "realisation": {"color": "C3", "lw": 2.2},
    "union": {"color": "C1", "lw": 1.8, "ls": "-."},
    "combined": {"color": "C6", "lw": 1.6, "ls": (0, (5, 1))},
    "renyi": {"color": "C0", "ls": "--"},
    "additive": {"color": "C2", "ls": "--"},
    "concentrated": {"color": "C4", "ls": ":"},
    "advanced": {"color": "C5", "ls": ":"},
    "classical": {"color": "0.4", "lw": 1.0},
}


def filter_survival(c: Any, ax: Any = None) -> list[Any]:
    """Draw every filter's survival curve ``P(T >= t)`` of a :class:`lpdp.filters.Comparison` (steps),
    as in the paper's Figure 2, with the independent Monte Carlo curves as dots. Returns the artists.

    Examples
    --------
    >>> from lpdp.filters import GaussianMechanism, comparison
    >>> artists = filter_survival(comparison(GaussianMechanism(2.0), 6.0, 1e-3, 48, trajectories=0))
    """
    ax = _axes(ax)
    t = np.arange(1, c.max_steps + 1)
    artists = []
    for name, curve in c.curves.items():
        artists += ax.step(np.concatenate([[0], t]), np.concatenate([[1.0], curve.survival]),
                           where="post", label=f"{c.label(name)}: E[T] = {curve.expected_T:.1f}",
                           **FILTER_STYLES.get(name, {}))
    for i, (name, curve) in enumerate(c.monte_carlo.items()):   # open rings on top: the line stays visible
        artists += ax.plot(t, curve.survival, "o", ms=4, mfc="none", mew=0.9, zorder=4,
                           color=FILTER_STYLES.get(name, {}).get("color"),
                           label="rings: Monte Carlo check (same colour)" if i == 0 else "_mc")
    ax.set_xlim(0, c.max_steps + 0.5)
    ax.set_ylim(-0.02, 1.02)
    _dress(ax, "t (number of releases)", "P(T ≥ t)  (probability of at least t releases)",
           f"{_mechanism_name(c.mechanism, c.steps)}: ε = {c.epsilon:g}, δ = {c.delta:g}, "
           f"N = {c.max_steps}")
    legend_outside(ax, columns=1)      # one column: panels side by side keep their legends apart
    return artists


def _mechanism_name(m: Any, steps: Any = ()) -> str:
    """The mechanism's own label (:attr:`lpdp.mechanisms.Mechanism.label`), or for a declared cycle
    (``m`` is ``None``) the runs of its steps, one step shown once with its length."""
    if m is not None:
        return str(m.label)
    runs: list[list[Any]] = []
    for step in steps:
        if runs and runs[-1][0] == step:
            runs[-1][1] += 1
        else:
            runs.append([step, 1])
    return "cycle of " + ", ".join(st[0].label + (f" ×{k}" if k > 1 else "") for st, k in runs)


def filter_telemetry(result: Any, ax: Any = None) -> list[Any]:
    """Two panels for a :class:`lpdp.filters.Telemetry`: the realised privacy loss of each device under
    the realisation-level filter (grey paths, a dot where the device stopped, the budget ε dashed), and
    the share of devices still reporting after t reports under every filter. Replaces ``ax`` by two axes
    of its figure; returns the artists.

    Examples
    --------
    >>> from lpdp.filters.adaptive import telemetry
    >>> artists = filter_telemetry(telemetry(["a", "b", "c"], 6.0, 1e-4, 10, devices=5))
    """
    fig = _axes(ax).figure
    fig.clear()
    left, right = fig.subplots(1, 2)
    artists: list[Any] = []
    for i, path in enumerate(result.paths[:60]):
        artists += left.plot(range(len(path)), path, color="0.45", alpha=0.35, lw=0.8,
                             label="realised loss of one device" if i == 0 else "_path")
        artists += left.plot(len(path) - 1, path[-1], "o", color="C3", ms=3,
                             label="where the filter stopped the device" if i == 0 else "_stop")
    artists.append(left.axhline(result.epsilon, color="k", ls="--", lw=1,
                                label=f"budget ε = {result.epsilon:g}"))
    _dress(left, "reports released (count)", "largest realised privacy loss over ordered pairs (nats)",
           "realisation-level filter: realised loss per device")
    t = np.arange(0, result.max_steps + 1)
    for name, stops in result.stops.items():
        s = np.asarray(stops)
        share = [(s >= k).mean() for k in t]
        artists += right.step(t, share, where="post", **FILTER_STYLES.get(name, {}),
                              label=f"{result.label(name)}: mean {s.mean():.1f}")
    if result.classical is not None:
        artists += right.step(t, (t <= result.classical).astype(float), where="post",
                              **FILTER_STYLES["classical"],
                              label=f"classical composition of the declared sequence: {result.classical}")
    right.set_ylim(-0.02, 1.02)
    _dress(right, "t (reports released, count)", "share of devices with at least t reports",
           f"every filter, budget (ε, δ) = ({result.epsilon:g}, {result.delta:g}), "
           f"N = {result.max_steps}")
    return artists


def sweep_lines(cells: Sequence[tuple[dict[str, Any], dict[str, Any]]], ax: Any, *, x: str, y: str,
                panels: Sequence[str] = (), ylabel: str = "", labels: dict[str, str] | None = None,
                styles: dict[str, dict[str, Any]] | None = None, logy: bool = False) -> list[Any]:
    """The summary figure of a sweep: result ``y`` against parameter ``x``, one panel per combination
    of the ``panels`` parameters, replacing ``ax`` by the panels. Returns the axes.

    ``cells`` are ``(parameters, result)`` pairs in grid order; ``result[y]`` is a number (one line)
    or a table of numbers (one line per entry, labelled by ``labels`` and styled by ``styles``).

    Examples
    --------
    >>> cells = [({"k": k, "n": n}, {"eps": {"a": k * n, "b": k + n}}) for n in (1, 2) for k in (1, 2, 3)]
    >>> axes = sweep_lines(cells, _axes(None), x="k", y="eps", panels=["n"])
    >>> len(axes)
    2
    """
    groups: dict[tuple[Any, ...], list[tuple[dict[str, Any], dict[str, Any]]]] = {}
    for params, result in cells:
        groups.setdefault(tuple(params[k] for k in panels), []).append((params, result))
    fig = ax.figure
    fig.clear()
    axes = fig.subplots(1, len(groups), squeeze=False, sharey=True)[0]
    for axis, (key, members) in zip(axes, groups.items(), strict=True):
        xs = [p[x] for p, _ in members]
        series: dict[str, list[float]] = {}
        for _, result in members:
            value = result[y]
            for name, v in (value.items() if isinstance(value, dict) else [(y, value)]):
                series.setdefault(name, []).append(float(v))
        for name, ys in series.items():
            axis.plot(xs, ys, marker=".", label=(labels or {}).get(name, name),
                      **(styles or {}).get(name, {}))
        if logy:
            axis.set_yscale("log")
        if panels:
            axis.set_title(", ".join(f"{k} = {v}" for k, v in zip(panels, key, strict=True)),
                           fontsize="medium")
        axis.set_xlabel(x)
        axis.grid(True, lw=0.3, alpha=0.5)
    axes[0].set_ylabel(ylabel or y)
    legend_outside(axes[0], columns=2 if len(groups) == 1 else 1)
    return list(axes)


def contact_sheet(pngs: Sequence[str | Path], ax: Any = None) -> list[Any]:
    """Tile scenario figures into one image (``lpdp run --plot``): each tile is the scenario's own figure,
    which carries its title; tiles are large enough that their fonts stay readable (8 × 6 inches each,
    two per row). Replaces ``ax`` by the tiles; returns the images drawn.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> png = pathlib.Path(tempfile.mkdtemp()) / "a.png"
    >>> _ = save_figure(lambda ax: ax.plot([0, 1]), png)
    >>> len(contact_sheet([png]))
    1
    """

    import matplotlib.image as mpimg

    fig = _axes(ax).figure
    fig.clear()
    cols = min(2, len(pngs))
    rows = math.ceil(len(pngs) / cols)
    fig.set_size_inches(8 * cols, 6 * rows)
    out = []
    for i, png in enumerate(pngs):
        sub = fig.add_subplot(rows, cols, i + 1)
        out.append(sub.imshow(mpimg.imread(png)))
        sub.axis("off")
    return out


def fdp_tightening(rows: Sequence[dict[str, Any]], name: str, k: int, ax: Any = None) -> list[Any]:
    """How an f-DP bracket narrows with the number n of (ε, δ) constraints: the largest δ gap and the
    area between the two boundaries (left), and the bracket of ε at δ = 1e-5 (right; an infinite upper
    side is marked at the top). ``rows`` are the tightening scenario's rows. Returns the artists.

    Examples
    --------
    >>> rows = [{"n": 2, "max_delta_gap": 0.6, "area_between": 0.01, "epsilon_at_1e-5": [4.0, 9.0]},
    ...         {"n": 4, "max_delta_gap": 0.3, "area_between": 0.004, "epsilon_at_1e-5": [5.0, 7.0]}]
    >>> artists = fdp_tightening(rows, "G_1", 10)
    """
    fig = _axes(ax).figure
    fig.clear()
    left, right = fig.subplots(1, 2)
    ns = [r["n"] for r in rows]
    out = left.loglog(ns, [r["max_delta_gap"] for r in rows], marker="o",
                      label="largest δ gap between the two sides")
    out += left.loglog(ns, [r["area_between"] for r in rows], marker="s",
                       label="area between the two boundaries")
    _dress(left, "constraints per approximation n (count)",
           "gap (δ: probability; area: fraction of the unit square)",
           f"{name} composed {k} times: width of the bracket")
    count_ticks(left.xaxis, ns)
    lo = np.array([r["epsilon_at_1e-5"][0] for r in rows], dtype=float)
    hi = np.array([r["epsilon_at_1e-5"][1] for r in rows], dtype=float)
    finite = np.isfinite(hi)
    out += right.semilogx(ns, lo, marker="v", label="lower side (attack bound)")
    out += right.semilogx(np.asarray(ns)[finite], hi[finite], marker="^",
                          label="upper side (valid guarantee)")
    if not finite.all():
        top = float(np.nanmax(np.concatenate([lo, hi[finite]]))) * 1.1
        out += right.semilogx(np.asarray(ns)[~finite], [top] * int((~finite).sum()), "x", color="C1",
                              label="upper side infinite (δ = 1e-5 not reached)")
    _dress(right, "constraints per approximation n (count)", "ε at δ = 1e-5 (nats)",
           f"{name} composed {k} times: bracket of ε(1e-5)")
    count_ticks(right.xaxis, ns)
    return out


def _dress(ax: Any, xlabel: str, ylabel: str, title: str, legend: str = "outside") -> None:
    """Axis labels (with units), a wrapped title, a legend naming every curve (below the axes, or in the
    named corner when that corner is free of data), and a light grid."""
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(wrap_title(title), fontsize="medium")
    if legend == "outside":
        legend_outside(ax)
    else:
        ax.legend(loc=legend, fontsize="small")
    ax.grid(True, which="both", lw=0.3, alpha=0.5)


def privacy_profile(curve: Any, ax: Any = None, *, title: str = "") -> list[Any]:
    """δ(ε) of a guarantee: the upper side (a valid guarantee) and the lower side (an attack bound) on a
    log scale from the smallest δ shown to 1, shaded between (one line when they are equal). ``curve`` is
    a :class:`lpdp.curves.Curve` of kind ``"profile"`` (:func:`lpdp.curves.profile`). Returns the artists.

    Examples
    --------
    >>> import numpy as np
    >>> from lpdp.curves import Curve
    >>> c = Curve("profile", "epsilon", "delta", np.array([0.0, 1.0, 2.0]), np.array([0.5, 0.1, 0.01]),
    ...           np.array([0.5, 0.12, 0.02]), False, {})
    >>> artists = privacy_profile(c)
    """
    ax = _axes(ax)
    eps, lo, hi = curve.x, curve.lower, curve.upper
    out = ax.plot(eps, hi, color="k", lw=1.8, label="guarantee: δ(ε) is at most this (upper side)")
    if not np.array_equal(lo, hi):
        out += ax.plot(eps, lo, color="tab:red", ls="--",
                       label="attack bound: δ(ε) is at least this (lower side)")
        out.append(ax.fill_between(eps, np.maximum(lo, 1e-300), hi, color="0.8", alpha=0.6,
                                   label="bracket"))
    probability_axis(ax, [hi[hi > 0], lo[lo > 0]])
    ax.set_xlim(float(eps[0]), float(eps[-1]))
    _dress(ax, "ε (privacy loss, nats)", "δ(ε) (probability)",
           title or "privacy profile of the composition")
    return out


def tradeoff_curve(curve: Any, ax: Any = None, *, title: str = "") -> list[Any]:
    """β(α) of a guarantee (a :class:`lpdp.curves.Curve` of kind ``"tradeoff"``) in the unit square:
    the guarantee side (no test does better) and the attack side (a test of the dominating pairs does
    this well), with the diagonal of random guessing. Returns the artists.

    Examples
    --------
    >>> from lpdp import Accountant
    >>> from lpdp.curves import tradeoff
    >>> from lpdp.mechanisms import pure
    >>> artists = tradeoff_curve(tradeoff(Accountant().compose(pure(1.0), 3).guarantee()))
    """
    ax = _axes(ax)
    out = ax.plot([0, 1], [1, 0], color="0.6", lw=0.8, ls=":", label="random guessing")
    out += ax.plot(curve.x, curve.lower, color="k", lw=1.8,
                   label="guarantee: every test has β at least this")
    if not np.allclose(curve.lower, curve.upper, rtol=0, atol=1e-9):
        out += ax.plot(curve.x, curve.upper, color="tab:red", ls="--",
                       label="attack: a test of the dominating pairs reaches this")
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1)
    ax.set_aspect("equal")
    _dress(ax, "type I error α (false-positive rate)", "type II error β (1 − true-positive rate)",
           title or "trade-off curve of the composition")
    return out


def tpr_curve(curve: Any, ax: Any = None, *, title: str = "") -> list[Any]:
    """TPR against FPR on log-log axes (a :class:`lpdp.curves.Curve` of kind ``"tpr"``): the guarantee
    (no membership test does better) and the attack side, with the line TPR = FPR. Returns the artists.

    Examples
    --------
    >>> from lpdp import Accountant
    >>> from lpdp.curves import tpr
    >>> from lpdp.mechanisms import pure
    >>> artists = tpr_curve(tpr(Accountant().compose(pure(1.0), 3).guarantee(), [1e-3, 1e-2, 0.1]))
    """
    ax = _axes(ax)
    fpr = curve.x
    out = ax.plot(fpr, fpr, color="0.6", lw=0.8, ls=":", label="random guessing (TPR = FPR)")
    out += ax.plot(fpr, curve.upper, color="k", lw=1.8, marker=".",
                   label="guarantee: no test has a higher TPR")
    if not np.allclose(curve.lower, curve.upper, rtol=0, atol=1e-9):
        out += ax.plot(fpr, curve.lower, color="tab:red", ls="--", marker=".",
                       label="attack: a test of the dominating pairs reaches this TPR")
    probability_axis(ax, [fpr], which="x")
    probability_axis(ax, [fpr, curve.lower, curve.upper])
    _dress(ax, "false-positive rate (type I error α)", "true-positive rate (1 − β)",
           title or "membership inference: largest TPR at each FPR")
    return out


def budget_curve(curve: Any, ax: Any = None, *, title: str = "") -> list[Any]:
    """ε at a fixed δ against the number of times the workload runs (a :class:`lpdp.curves.Curve` of
    kind ``"budget"``), both sides, counts as plain numbers on a log axis. Returns the artists.

    Examples
    --------
    >>> from lpdp.curves import budget
    >>> from lpdp.mechanisms import pure
    >>> artists = budget_curve(budget([(pure(0.1), 1)], 1e-6, [1, 10, 100]))
    """
    ax = _axes(ax)
    n = curve.x
    out = ax.plot(n, curve.upper, color="k", lw=1.8, marker="o", ms=3,
                  label="guarantee: ε at most this (upper side)")
    if not np.array_equal(curve.lower, curve.upper):
        out += ax.plot(n, curve.lower, color="tab:red", ls="--", marker="v", ms=3,
                       label="attack bound: ε at least this (lower side)")
    if n.size > 1 and n[-1] / n[0] >= 20:
        from matplotlib.ticker import FuncFormatter

        ax.set_xscale("log")
        ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))   # 1, 10, 100, not 10⁰
    _dress(ax, "times the workload runs (count)", f"ε at δ = {curve.meta.get('delta', 0):g} (nats)",
           title or "privacy budget spent against the count")
    return out


#: Figure drawers of :mod:`lpdp.curves` by curve kind.
CURVE_PLOTS = {"profile": privacy_profile, "tradeoff": tradeoff_curve, "tpr": tpr_curve,
               "budget": budget_curve}


def curve(c: Any, ax: Any = None, *, title: str = "") -> list[Any]:
    """Draw any :class:`lpdp.curves.Curve` with the drawer of its kind (:data:`CURVE_PLOTS`).

    Examples
    --------
    >>> from lpdp import Accountant
    >>> from lpdp.curves import profile
    >>> from lpdp.mechanisms import GaussianMechanism
    >>> artists = curve(profile(Accountant().compose(GaussianMechanism(1.0)).guarantee()))
    """
    return CURVE_PLOTS[c.kind](c, ax, title=title)

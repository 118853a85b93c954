"""The absorbed random walk of the running privacy loss on i.i.d. Laplace rounds, by quadrature: the
exact audit of a threshold rule (Proposition 1's form of Algorithm 1 of Taylor, Vippathalla and Coon,
and the one-step filters) for a Laplace mechanism with one neighbouring pair.

For inputs at distance ``d`` and ``r = d/scale`` the one-step loss ``X`` under ``P_x`` has atoms
``P(X = r) = 1/2``, ``P(X = -r) = e^{-r}/2`` and on ``(-r, r)`` the density ``e^{(l-r)/2}/4``
(:meth:`lpdp.mechanisms.LaplaceMechanism.loss_law`); the reverse ordered pair has the same law and the
realised loss ``-S``. So the law of the running loss ``S_j`` on the paths the rule has not stopped
(continuation region ``C = {S <= κ_own, -S <= κ_rev}``) is a mixture of point masses on the lattice
``r Z`` and a density that is ``e^{x/2}`` times a polynomial between kinks: the lattice points, ``κ_own``,
``-κ_rev`` and their translates by multiples of ``r``.

Both parts are kept apart: atoms as masses at the lattice points, the density at composite
Gauss–Legendre nodes on panels whose edges are every kink and ``ε`` (where the tail and the hockey stick
kink), all reduced modulo ``r``, so the node set is invariant under translation by ``r`` and the atom
parts of the kernel map nodes to nodes. The continuous part of one step,

    ``f'(x) = (1/4) ∫_{(x-r, x+r)} e^{(x-y-r)/2} dμ(y)``,

is a window integral of the measure ``μ`` whose ends ``x ± r`` are nodes: whole-panel integrals, two
atoms, and two partial panels integrated exactly against the panels' interpolating polynomials (every
exponential factor is at most 1). A step costs O(nodes × nodes per panel), not O(nodes²), and nothing is
truncated: the walk moves at most ``r`` per step and the grid covers every reachable loss. Ties follow
:func:`lpdp.filters.realisation.within` exactly on the atoms (an atom on ``κ`` continues, an atom on
``ε`` is not over it); for the density a tie has probability zero. Paths stopped before ``min_steps``
run on unabsorbed to it (no difference of nearly equal numbers).

Accuracy: the only error is Gauss–Legendre quadrature of functions smooth on every panel (spectral
convergence; 6 nodes per panel already agree with 40 to about 1e-15), plus rounding. It is not a
certified bound: the audit is checked against an independent nested integration of the loss law, the
accountant's bracket and Monte Carlo (tests/test_filter_audit_laplace.py). The total mass of the
stopped paths must be 1 within :data:`MASS_TOL`, else too few nodes were asked for.
"""


from __future__ import annotations

import math

import numpy as np

from lpdp._limits import check_budget, seconds_for
from lpdp.errors import ParameterError
from lpdp.filters.realisation import StoppingRule, hockey_terms, over_epsilon, within


class TooManyNodes(ParameterError):
    """The quadrature would need more than :data:`MAX_NODES` nodes (``method="auto"`` falls back to
    Monte Carlo)."""


#: Widest panel (in loss units): the density is ``e^{x/2}`` times a piecewise polynomial.
PANEL_WIDTH = 2.0
#: Largest error of the total mass of the stopped paths (1 exactly) before the nodes are refused as too few.
MASS_TOL = 1e-10
#: Largest number of density nodes (the cost is linear in it); beyond it, use Monte Carlo.
MAX_WALK_NODES = 100_000

Measure = tuple[np.ndarray, np.ndarray]  # (atoms at the lattice points, density at the nodes)


def _partial_panel_matrices(width: float, t: np.ndarray, w: np.ndarray) -> tuple[np.ndarray, ...]:
    """For the Gauss–Legendre nodes ``s_i`` of ``[0, width]`` and their Lagrange basis ``ℓ_k``:
    ``L[i,k] = ∫_0^{s_i} e^{-s/2} ℓ_k(s) ds`` and ``R[i,k] = ∫_{s_i}^{width} e^{(s_i-s)/2} ℓ_k(s) ds``
    (a finer Gauss–Legendre rule on each sub-interval: polynomial times a smooth exponential)."""
    n = t.size
    s = width * (t + 1.0) / 2.0
    coef = (np.arange(n)[:, None] + 0.5) * np.polynomial.legendre.legvander(t, n - 1).T * w[None, :]
    tf, wf = np.polynomial.legendre.leggauss(n + 16)
    left = np.empty((n, n))
    right = np.empty((n, n))
    for i in range(n):
        for out, a, b, tilt in ((left, 0.0, s[i], 0.0), (right, s[i], width, s[i])):
            y = a + (b - a) * (tf + 1.0) / 2.0
            basis = np.polynomial.legendre.legvander(2.0 * y / width - 1.0, n - 1) @ coef
            out[i] = ((b - a) / 2.0 * wf * np.exp((tilt - y) / 2.0)) @ basis
    return left, right


class _Grid:
    """Cells ``[m r, (m+1) r]`` for ``m = m_lo .. m_hi - 1``, each cut into the same panels (offsets
    ``o_q``), ``n`` Gauss–Legendre nodes per panel; atoms at the lattice points ``m_lo r .. m_hi r``."""

    def __init__(self, r: float, m_lo: int, m_hi: int, offsets: np.ndarray, n: int) -> None:
        self.r, self.m_lo = r, m_lo
        cells = m_hi - m_lo
        t, w = np.polynomial.legendre.leggauss(n)
        widths = np.diff(np.append(offsets, r))
        local = widths[:, None] * (t[None, :] + 1.0) / 2.0  # (D, n) offset of each node in its panel
        z = offsets[:, None] + local  # offset in the cell
        d = offsets.size
        self.weights = widths[:, None] * w[None, :] / 2.0
        self.tilted = self.weights * np.exp(-local / 2.0)  # panel integral of e^{(α - y)/2} f
        mats = {}
        for width in np.unique(widths):
            mats[width] = _partial_panel_matrices(float(width), t, w)
        self.left = np.stack([mats[x][0] for x in widths])
        self.right = np.stack([mats[x][1] for x in widths])
        self.left_factor = np.exp((local - 2.0 * r) / 2.0)
        q = np.arange(d)
        zz = z.reshape(-1)[:, None]
        owner = np.repeat(q, n)[:, None]
        # whole panels of cells m-1 (after the node's panel), m, and m+1 (before it): exponents <= 0
        # where used (clipped elsewhere, so a wide cell cannot overflow)
        self.whole = np.exp(np.minimum(0.0, np.concatenate([
            np.where(q[None, :] > owner, (zz - offsets) / 2.0, -np.inf), (zz - r - offsets) / 2.0,
            np.where(q[None, :] < owner, (zz - 2 * r - offsets) / 2.0, -np.inf)], axis=1))).T  # (3D, D n)
        self.atom_here = np.exp((z - r) / 2.0)
        self.atom_next = np.exp((z - 2.0 * r) / 2.0)
        self.nodes = (np.arange(m_lo, m_hi)[:, None, None] * r + z[None, :, :])
        self.mid = np.arange(m_lo, m_hi)[:, None] * r + offsets[None, :] + widths[None, :] / 2.0
        self.lattice = np.arange(m_lo, m_hi + 1) * r
        self.shape = (cells, d, n)
        self.decay = math.exp(-r)

    def zero(self) -> Measure:
        return np.zeros(self.lattice.size), np.zeros(self.shape)

    def origin(self) -> Measure:
        a, f = self.zero()
        a[-self.m_lo] = 1.0
        return a, f

    def step(self, mu: Measure) -> Measure:
        """The law of ``S + X`` for ``S ~ mu`` (sub-probability; nothing leaves the grid by design)."""
        a, f = mu
        q = self.decay
        a2 = np.zeros_like(a)
        a2[1:] += 0.5 * a[:-1]
        a2[:-1] += 0.5 * q * a[1:]
        prev = np.zeros_like(f)
        prev[1:] = f[:-1]
        nxt = np.zeros_like(f)
        nxt[:-1] = f[1:]
        window = np.einsum("qik,mqk->mqi", self.right, prev)
        window += self.left_factor * np.einsum("qik,mqk->mqi", self.left, nxt)
        totals = (f * self.tilted).sum(axis=2)  # (M, D)
        cat = np.concatenate([np.vstack([np.zeros((1, totals.shape[1])), totals[:-1]]), totals,
                              np.vstack([totals[1:], np.zeros((1, totals.shape[1]))])], axis=1)
        window += (cat @ self.whole).reshape(f.shape)
        window += a[:-1, None, None] * self.atom_here + a[1:, None, None] * self.atom_next
        f2 = 0.5 * prev + 0.5 * q * nxt + 0.25 * window
        return a2, f2

    def mass(self, mu: Measure) -> float:
        return math.fsum(mu[0]) + float(np.sum(mu[1] * self.weights))

    def expect(self, mu: Measure, eps: float) -> tuple[float, float]:
        """``E[1{S > ε}]`` (ties not over) and ``E[(1 - e^{ε - S})_+]`` under the sub-law ``mu``."""
        a, f = mu
        dens = f * self.weights
        over_panel = self.mid > eps
        tail = math.fsum(a[over_epsilon(eps, self.lattice)]) + float(np.sum(dens * over_panel[:, :, None]))
        hs = float(a @ hockey_terms(eps, self.lattice)) + float(np.sum(dens * hockey_terms(eps, self.nodes)))
        return tail, hs


def _offsets(r: float, cuts: list[float], tol: float) -> np.ndarray:
    """Panel edges in ``[0, r)``: 0 and every finite cut modulo ``r`` (closer than ``tol`` merged),
    each gap split into equal panels at most :data:`PANEL_WIDTH` wide."""
    raw = sorted({0.0} | {c % r for c in cuts if math.isfinite(c)})
    edges = [0.0]
    for o in raw[1:]:
        if o - edges[-1] > tol and r - o > tol:
            edges.append(o)
    out = []
    for a, b in zip(edges, [*edges[1:], r], strict=True):
        k = max(1, math.ceil((b - a) / PANEL_WIDTH))
        out.extend(a + (b - a) * np.arange(k) / k)
    return np.array(out)


def laplace_pair(rule: StoppingRule, k_own: float, k_rev: float, r: float,
                 nodes: int) -> tuple[float, float, tuple[float, ...]]:
    """Tail ``P(l^{(T)} > ε)``, hockey stick ``E[(1 - e^{ε - l^{(T)}})_+]`` and survival ``P(T >= t)``
    of the ordered pair with thresholds (own, reverse) on i.i.d. Laplace rounds of loss step ``r``.

    ``T = max(T_1, min_steps)`` where ``T_1 >= t`` iff the running losses ``S_0 .. S_{t-1-lag}`` stay in
    ``C`` (:class:`StoppingRule`); the final loss is ``S_T``.

    Examples
    --------
    One release (``N = 1``) of a Laplace round with ``r = 2`` at ``ε = 1``: the tail is
    ``P(L > 1) = 1 - e^{-1/2}/2`` and the hockey stick is ``δ(1) = 1 - e^{-1/2}``.

    >>> rule = StoppingRule(1.0, 1, ((1, 0), (0, 1)), True, (0.0, 0.0), lag=1)
    >>> tail, hs, survival = laplace_pair(rule, 0.0, 0.0, 2.0, 24)
    >>> round(tail, 12), round(hs, 12), survival
    (0.696734670144, 0.393469340287, (1.0,))
    """
    n_max, lag, eps = rule.max_steps, rule.lag, rule.epsilon
    kk = min(rule.min_steps, n_max)
    lo, hi = max(-k_rev, -n_max * r), min(k_own, n_max * r)  # C = {S <= κ_own, -S <= κ_rev}
    reach = 1 + lag
    m_lo = max(-n_max, min(math.floor(min(lo, 0.0) / r) - reach, -kk))
    m_hi = min(n_max, max(math.ceil(max(hi, 0.0) / r) + reach, kk))
    if not rule.first_release:
        m_lo, m_hi = -kk, max(kk, 1)
    tol = 64 * np.finfo(float).eps * max(1.0, n_max * r)
    offsets = _offsets(r, [k_own, -k_rev, eps], tol)
    count = (m_hi - m_lo) * offsets.size * nodes
    if not count <= MAX_WALK_NODES:
        raise TooManyNodes(f"method='quadrature': a Laplace loss step r = {r:.3g} over a range of "
                            f"{(m_hi - m_lo) * r:.3g} needs {count} > {MAX_WALK_NODES} nodes, use "
                            "method='monte-carlo'")
    check_budget(f"max_steps={n_max} (Laplace quadrature, {count} nodes)",
                 memory_bytes=8.0 * count * 16 + 8.0 * offsets.size * nodes * nodes * 8,
                 # measured ~1.5 ms a step for 288 nodes (N = 1000 and 3000): 16x the rate first assumed
                 seconds=seconds_for(3.0 * n_max * count * (2 * nodes + 3 * offsets.size + 20) * 1.6))
    grid = _Grid(r, m_lo, m_hi, offsets, nodes)
    if not rule.first_release:  # T = min_steps
        mu = grid.origin()
        for _ in range(kk):
            mu = grid.step(mu)
        tail, hs = grid.expect(mu, eps) if kk else (0.0, 0.0)
        return tail, hs, (1.0,) * kk + (0.0,) * (n_max - kk)
    keep_atoms = within(grid.lattice, k_own) & within(-grid.lattice, k_rev)
    keep = ((grid.mid <= k_own) & (-grid.mid <= k_rev))[:, :, None]
    totals = [0.0, 0.0, 0.0]  # tail, hockey stick, mass of the stopped paths (1 when nothing leaks)
    zombie = grid.zero()  # paths stopped at t <= min_steps, run on unabsorbed to min_steps
    alive_mass: list[float] = []

    def settle(t: int, sigma: Measure) -> None:
        """The paths with ``T_1 = t`` and their law of ``S_t``."""
        nonlocal zombie
        if t < kk:
            zombie = (zombie[0] + sigma[0], zombie[1] + sigma[1])
            return
        if t == kk:
            sigma = (zombie[0] + sigma[0], zombie[1] + sigma[1])
        for k, v in enumerate((*grid.expect(sigma, eps), grid.mass(sigma))):
            totals[k] += v

    tau = grid.origin()  # the law of S_t on the paths alive at t - 1
    alive = stopped = grid.zero()
    for t in range(n_max + 1):
        if t > 0:
            tau = grid.step(alive)
        if lag and t > 0:
            sigma = grid.step(stopped)  # stopped at S_{t-1}, released S_t
        if t == n_max:
            sigma = (sigma[0] + tau[0], sigma[1] + tau[1]) if lag else tau
        else:
            alive = (np.where(keep_atoms, tau[0], 0.0), np.where(keep, tau[1], 0.0))
            stopped = (tau[0] - alive[0], tau[1] - alive[1])
            alive_mass.append(grid.mass(alive))
            if not lag:
                sigma = stopped
        if t > 0 or not lag:
            settle(t, sigma)
        if t < kk:
            zombie = grid.step(zombie)
    if not abs(totals[2] - 1.0) <= MASS_TOL:  # the quadrature error shows in the total mass
        raise ParameterError(f"nodes={nodes}: the Laplace quadrature is not resolved (the stopped paths "
                             f"carry mass 1 {totals[2] - 1.0:+.2g}); use more nodes per panel")
    survival = tuple(1.0 if t <= kk or t - 1 - lag < 0 else min(1.0, max(0.0, alive_mass[t - 1 - lag]))
                     for t in range(1, n_max + 1))
    return totals[0], totals[1], survival

"""Independent oracles shared by the tests (nothing here calls lpdp's composition code).

``pld_from_region`` wraps Google's dp_accounting once: its ``from_two_probability_mass_functions`` takes
*log* masses, lower (the Q = M(x') distribution) then upper (P = M(x)); plain probabilities are accepted
silently and give nonsense, so every test goes through this function.
"""

from __future__ import annotations

import math

import numpy as np


def pld_from_log_pair(log_p: dict, log_q: dict, *, pessimistic: bool = True,
                      discretization: float = 1e-4):
    """dp_accounting PLD of the pair (P, Q) given as ``{outcome: log mass}`` dicts (P upper, Q lower)."""
    from dp_accounting.pld import privacy_loss_distribution as pld

    return pld.from_two_probability_mass_functions(
        log_probability_mass_function_lower=log_q,
        log_probability_mass_function_upper=log_p,
        pessimistic_estimate=pessimistic,
        value_discretization_interval=discretization,
        symmetric=False,
    )


def pld_from_region(region, *, pessimistic: bool = True, discretization: float = 1e-4):
    """dp_accounting PLD of a region's dominating pair (atoms become outcomes)."""
    log_p, log_q = {}, {}
    for i, (lp, lq) in enumerate(zip(region.log_p, region.log_q, strict=True)):
        log_p[i], log_q[i] = float(lp), float(lq)
    if region.log_p_inf > -math.inf:
        log_p["+inf"] = region.log_p_inf
    if region.log_q_ninf > -math.inf:
        log_q["-inf"] = region.log_q_ninf
    return pld_from_log_pair(log_p, log_q, pessimistic=pessimistic, discretization=discretization)


def brute_force_delta(p: list[float], q: list[float], k: int, eps: np.ndarray) -> np.ndarray:
    """δ(ε) of the k-fold product of the pair (p, q), by enumerating all len(p)**k outcome sequences.

    The product masses are built as explicit outer products (one entry per sequence), so nothing is
    grouped or merged: keep len(p)**k below a few million.
    """
    p, q = np.asarray(p, float), np.asarray(q, float)
    pk, qk = np.ones(1), np.ones(1)
    for _ in range(k):
        pk, qk = np.multiply.outer(pk, p).ravel(), np.multiply.outer(qk, q).ravel()
    eps = np.atleast_1d(np.asarray(eps, float))
    return np.array([np.sum(np.maximum(0.0, pk - np.exp(e) * qk)) for e in eps])


def support_delta_from_vertices(vertices: np.ndarray, eps: np.ndarray) -> np.ndarray:
    """δ(ε) = max over the polygon's vertices of 1 - bII - e^ε bI (the support function, geometry only)."""
    v = np.asarray(vertices, float)
    return np.max(1.0 - v[None, :, 1] - np.exp(np.asarray(eps, float))[:, None] * v[None, :, 0], axis=1)


def minkowski_hull(regions, weights):
    """Shapely convex hull of all weighted vertex sums (one vertex from each region)."""
    from shapely.geometry import MultiPoint

    sums = np.zeros((1, 2))
    for w, r in zip(weights, regions, strict=True):
        v = w * np.asarray(r.vertices, float)
        sums = (sums[:, None, :] + v[None, :, :]).reshape(-1, 2)
    return MultiPoint(sums).convex_hull


# ---------------------------------------------------------------------------------------------------
# High-precision references (mpmath). Each works from a region's stored atoms or from the (ε, δ)
# constraints themselves, never through lpdp's composition, intersection or LP code.
MP_DPS = 50


def region_delta_mp(region, eps):
    """``δ(ε) = p_inf + Σ_{L_j > ε} p_j (1 - e^{ε - L_j})`` of a region's stored atoms, in mpmath.

    ``eps`` may be any real (the support function at slope ``e^ε``) or ``-inf`` (slope 0: the value 1).
    """
    import mpmath as mp

    with mp.workdps(MP_DPS):
        if eps == -math.inf:
            return mp.mpf(1)
        e = mp.mpf(float(eps))
        total = mp.exp(mp.mpf(float(region.log_p_inf))) if region.log_p_inf > -math.inf else mp.mpf(0)
        for L, lp in zip(region.losses, region.log_p, strict=True):
            if L > eps:
                total += mp.exp(mp.mpf(float(lp))) * -mp.expm1(e - mp.mpf(float(L)))
        return total


def intersection_delta_mp(regions, eps):
    """δ(ε) of ``∩ regions``: the lower convex envelope, in the slope σ, of ``min_r δ_r(σ)`` at ``e^ε``.

    The support function of an intersection is the closed convex envelope of the least support function;
    ``min_r δ_r`` is piecewise linear in σ with convex kinks only at the regions' edge slopes, so the
    envelope at ``σ0`` is the least interpolation between two of those slopes around ``σ0`` (slope 0, the
    line ``bII >= 0``, has the value 1), or ``min_r δ_r(σ0)`` itself.
    """
    import mpmath as mp

    with mp.workdps(MP_DPS):
        def g(loss):
            return min(region_delta_mp(r, loss) for r in regions)

        e = float(eps)
        breaks = sorted({float(L) for r in regions for L in r.losses})
        lows = [-math.inf] + [b for b in breaks if b < e]
        highs = [b for b in breaks if b > e]
        best = g(e)
        g_hi = {b: g(b) for b in highs}
        for a in lows:
            # Slopes relative to e^ε: α = 1 - σ_a/σ0 > 0, β = σ_b/σ0 - 1 > 0 (expm1: no cancellation).
            alpha = mp.mpf(1) if a == -math.inf else -mp.expm1(mp.mpf(a) - mp.mpf(e))
            ga = g(a)
            for b in highs:
                beta = mp.expm1(mp.mpf(b) - mp.mpf(e))
                best = min(best, (beta * ga + alpha * g_hi[b]) / (alpha + beta))
        return best


def intersection_tradeoff_mp(regions, t):
    """``f(t) = max_r f_r(t)`` with ``f_r(t) = max(0, max_j (1 - δ_r(L_j) - e^{L_j} t))``, in mpmath."""
    import mpmath as mp

    with mp.workdps(MP_DPS):
        best = mp.mpf(0)
        tt = mp.mpf(float(t))
        for r in regions:
            for L in r.losses:
                best = max(best, 1 - region_delta_mp(r, L) - mp.exp(mp.mpf(float(L))) * tt)
        return best


def direct_log_delta(region, eps: np.ndarray) -> np.ndarray:
    """``log δ(ε) = log(p_inf + Σ_{L_j > ε} p_j (1 - e^{ε - L_j}))`` by one direct sum per ε (O(N) each).

    The textbook formula on a region's atoms, independent of the prefix sums the region answers with.
    """
    from scipy.special import logsumexp

    L, lp = np.asarray(region.losses), np.asarray(region.log_p)
    out = []
    for e in np.atleast_1d(np.asarray(eps, float)):
        above = L > e
        terms = lp[above] + np.log(-np.expm1(e - L[above]))
        out.append(np.logaddexp(logsumexp(terms) if terms.size else -np.inf, region.log_p_inf))
    return np.minimum(np.array(out), 0.0)


def mp_kairouz_delta(eps: float, k: int, at: float, dps: int = 40) -> float:
    """δ(at) of the k-fold ε randomised response (δ = 0) in mpmath, by the binomial recurrence."""
    import mpmath as mp

    with mp.workdps(dps):
        a = mp.e ** mp.mpf(eps) / (1 + mp.e ** mp.mpf(eps))
        b = 1 - a
        ratio_p, ratio_q = b / a, a / b
        tp, tq = a ** k, b ** k                     # i = 0 disagreeing coordinates under P and Q
        total, i, scale = mp.mpf(0), 0, mp.e ** mp.mpf(at)
        while (k - 2 * i) * eps > at:
            total += tp - scale * tq
            tp *= ratio_p * (k - i) / (i + 1)
            tq *= ratio_q * (k - i) / (i + 1)
            i += 1
        return float(total)


def _mpf(x):
    import mpmath as mp

    return mp.mpf(float(x))


def kairouz_delta_mp(eps0, delta0, k, eps):
    """δ(ε) of the k-fold composition of (ε0, δ0)-DP, Kairouz, Oh and Viswanath's closed form, in mpmath:
    ``1 - (1-δ0)^k + (1-δ0)^k Σ_{i: (k-2i) ε0 > ε} C(k,i) p^{k-i} q^i (1 - e^{ε - (k-2i) ε0})`` with
    ``p = e^{ε0}/(1+e^{ε0})``, the one-level case of :func:`rr_levels_delta_mp` (O(k) terms per ε).
    """
    return rr_levels_delta_mp([(eps0, delta0, k)], eps)


def rr_levels_delta_mp(levels, eps):
    """δ(ε) of composing ``k_j`` (ε_j, δ_j) randomised responses for every level, by enumerating every
    vector of agreement counts ``a_j`` (loss ``Σ ε_j (2 a_j - k_j)``, binomial masses), in mpmath.

    ``levels`` is a list of ``(ε_j, δ_j, k_j)``; ``Π (k_j + 1)`` terms, so keep it below ~10^5.
    """
    import itertools

    import mpmath as mp

    with mp.workdps(MP_DPS):
        per_level, log_a = [], mp.mpf(0)
        for e, d, k in levels:
            e = _mpf(e)
            log_a += k * mp.log1p(-_mpf(d))
            lp, lq = e - mp.log1p(mp.exp(e)), -mp.log1p(mp.exp(e))
            per_level.append([(e * (2 * a - k), mp.log(mp.binomial(k, a)) + a * lp + (k - a) * lq)
                              for a in range(k + 1)])
        atoms = [(mp.fsum(L for L, _ in combo), mp.fsum(w for _, w in combo))
                 for combo in itertools.product(*per_level)]
        out = []
        for e in eps:
            em = _mpf(e)
            pure = mp.fsum(mp.exp(w) * -mp.expm1(em - L) for L, w in atoms if L > em)
            out.append(-mp.expm1(log_a) + mp.exp(log_a) * pure)
        return out


def dp_pair_mp(constraints):
    """The dominating pair of ``∩_i R(ε_i, δ_i)`` from the geometry of its trade-off function, in mpmath.

    ``f(t) = max(0, max_i (1 - δ_i - e^{ε_i} t), max_i e^{-ε_i} (1 - δ_i - t))``: every crossing of two
    lines (or of a line with ``bII = 0``) is a candidate vertex; consecutive candidates give edges, and
    each edge with ``Δt > 0`` and a drop ``Δf > 0`` is an atom ``(p, q, L)``: ``q = Δt``, its line's loss
    ``L = ±ε_i`` (exact) and ``p = e^L q``. Returns ``(atoms, p_inf)`` with ``p_inf = 1 - f(0)`` (the
    vertical edge).
    """
    import mpmath as mp

    with mp.workdps(MP_DPS):
        lines = [(mp.mpf(0), mp.mpf(0), -mp.inf)]                # (slope, intercept, loss): bII = 0
        for e, d in constraints:
            e, d = _mpf(e), _mpf(d)
            lines += [(-mp.exp(e), 1 - d, e), (-mp.exp(-e), mp.exp(-e) * (1 - d), -e)]

        def f(t):
            return max(a * t + b for a, b, _ in lines)

        ts = {mp.mpf(0), mp.mpf(1)}
        for i, (a1, b1, _) in enumerate(lines):
            for a2, b2, _ in lines[i + 1:]:
                if a1 != a2:
                    t = (b2 - b1) / (a1 - a2)
                    if 0 < t < 1:
                        ts.add(t)
        ts = sorted(ts)
        # Consecutive candidates on the same top line form one edge (one atom, not several pieces).
        top = [max(range(len(lines)), key=lambda j: lines[j][0] * (a + b) / 2 + lines[j][1])
               for a, b in zip(ts[:-1], ts[1:], strict=True)]
        ends = [0] + [i + 1 for i in range(len(top) - 1) if top[i + 1] != top[i]] + [len(ts) - 1]
        atoms = []
        for i in range(len(ends) - 1):
            q, loss = ts[ends[i + 1]] - ts[ends[i]], lines[top[ends[i]]][2]
            if loss > -mp.inf and q > 0:
                atoms.append((mp.exp(loss) * q, q, loss))
        return atoms, 1 - f(ts[0])


def pair_power_atoms_mp(atoms, p_inf, k):
    """The k-fold product of a finite pair ``atoms = [(p, q, L), ...]`` (``L = log(p/q)``, kept exact)
    plus a P-mass ``p_inf`` with ``q = 0``, as a list of ``(P, Q, L)``, one per vector of atom counts
    (multinomial masses; losses add exactly), in mpmath.

    ``C(k + m, m)`` vectors for m atoms: keep it below ~10^4. Nothing is merged: atoms of equal loss
    add up exactly as merged ones would (both terms have the sign of ``L - ε``).
    """
    import mpmath as mp

    with mp.workdps(MP_DPS):
        full = [(mp.mpf(p), mp.mpf(q), mp.mpf(L)) for p, q, L in atoms] + \
            ([(mp.mpf(p_inf), mp.mpf(0), mp.inf)] if p_inf > 0 else [])
        m = len(full)
        fact = [mp.factorial(i) for i in range(k + 1)]
        pw = [[(p ** c, q ** c, L * c if c else mp.mpf(0)) for c in range(k + 1)] for p, q, L in full]
        prods = []

        def rec(i, left, coef, P, Q, L):
            if i == m - 1:
                c = left
                prods.append((coef / fact[c] * P * pw[i][c][0], coef / fact[c] * Q * pw[i][c][1],
                              L + pw[i][c][2]))
                return
            for c in range(left + 1):
                rec(i + 1, left - c, coef / fact[c], P * pw[i][c][0], Q * pw[i][c][1], L + pw[i][c][2])

        rec(0, k, fact[k], mp.mpf(1), mp.mpf(1), mp.mpf(0))
        return prods


def product_atoms_mp(*atom_lists):
    """The product of several finite pairs given as ``(P, Q, L)`` lists (one entry per pair of atoms)."""
    import itertools

    import mpmath as mp

    with mp.workdps(MP_DPS):
        out = [(mp.mpf(1), mp.mpf(1), mp.mpf(0))]
        for atoms in atom_lists:
            out = [(P * p, Q * q, L + x) for (P, Q, L), (p, q, x) in itertools.product(out, atoms)]
        return out


def atoms_delta_mp(prods, eps, mu=0.0):
    """``δ(ε) = Σ_a P_a (1 - e^{ε - L_a})_+`` of a finite pair of ``(P, Q, L)`` atoms (exact losses, so
    the sign of each term never depends on rounding), or, with ``mu > 0``, of its product with ``G_μ``:
    ``Σ_a P_a δ_{G_μ}(ε - L_a)`` (``δ_{G_μ}`` extended to negative arguments), in mpmath."""
    import mpmath as mp

    with mp.workdps(MP_DPS + 20):
        out = []
        for e in eps:
            em = _mpf(e)
            if mu == 0:
                out.append(mp.fsum(P * -mp.expm1(em - L) for P, _, L in prods if L > em))
                continue
            total = mp.mpf(0)
            for P, _, L in prods:
                if L == mp.inf:
                    total += P
                elif P > 0:
                    total += P * gaussian_delta_mp(mu, [em - L])[0]
            out.append(total)
        return out


def pair_power_delta_mp(atoms, p_inf, k, eps):
    """δ(ε) of the k-fold product of a finite pair (:func:`pair_power_atoms_mp`), in mpmath."""
    return atoms_delta_mp(pair_power_atoms_mp(atoms, p_inf, k), eps)


def rr_pair_mp(categories, epsilon):
    """The pair (rows of inputs 0 and 1) of k-ary randomized response, as ``[(p, q, L), ...]``."""
    import mpmath as mp

    with mp.workdps(MP_DPS):
        e = _mpf(epsilon)
        keep = 1 / (1 + (categories - 1) * mp.exp(-e))
        other = keep * mp.exp(-e)                  # = (1 - keep) / (categories - 1)
        return [(keep, other, e), (other, keep, -e)] + [(other, other, mp.mpf(0))] * (categories - 2)


def gaussian_delta_mp(mu, eps):
    """δ(ε) of ``G_μ``: ``Φ(-ε/μ + μ/2) - e^ε Φ(-ε/μ - μ/2)`` (Dong, Roth and Su, Corollary 2.13), for
    any real ε (mpmath numbers are used as they are)."""
    import mpmath as mp

    with mp.workdps(MP_DPS + 40):     # the two terms cancel in the deep tail
        m = _mpf(mu)
        out = []
        for e in eps:
            em = e if isinstance(e, mp.mpf) else _mpf(e)
            out.append(mp.ncdf(-em / m + m / 2) - mp.exp(em) * mp.ncdf(-em / m - m / 2))
        return out


def laplace_delta_mp(scale, eps):
    """δ(ε) of one Laplace mechanism (sensitivity 1): ``1 - e^{(ε - 1/b)/2}`` for ``ε < 1/b``, else 0."""
    import mpmath as mp

    with mp.workdps(MP_DPS):
        e0 = 1 / _mpf(scale)
        return [max(mp.mpf(0), -mp.expm1((_mpf(e) - e0) / 2)) for e in eps]


# ---------------------------------------------------------------------------------------------------
# The soundness tally: every comparison of a public route with a reference is counted here, and the
# counts are printed at the end of the run (tests/conftest.py).
SOUNDNESS_TALLY: dict[str, dict[str, int]] = {}


def count(route: str, points: int, unsafe: int) -> None:
    """Count one case of ``route``: ``points`` values compared with the reference, ``unsafe`` of them on
    the wrong side of it (tests/test_soundness.py)."""
    t = SOUNDNESS_TALLY.setdefault(route, {"cases": 0, "points": 0, "unsafe": 0})
    t["cases"] += 1
    t["points"] += points
    t["unsafe"] += unsafe


def tally_summary() -> list[str]:
    """One line per route and a total line (empty when nothing was tallied)."""
    if not SOUNDNESS_TALLY:
        return []
    lines = [f"{route:<40} cases {t['cases']:>6}  points {t['points']:>7}  unsafe {t['unsafe']:>5}"
             for route, t in sorted(SOUNDNESS_TALLY.items())]
    tot = {k: sum(t[k] for t in SOUNDNESS_TALLY.values()) for k in ("cases", "points", "unsafe")}
    lines.append(f"{'TOTAL (' + str(len(SOUNDNESS_TALLY)) + ' routes)':<40} cases {tot['cases']:>6}  "
                 f"points {tot['points']:>7}  unsafe {tot['unsafe']:>5}")
    return lines


def kairouz_profile(epsilon: float, delta: float, k: int) -> list[tuple[float, float]]:
    """The paper's closed form ``δ_i = 1 - (1-δ)^k (1 - δ'_i)`` at ``ε_i = (k - 2i) ε`` (Kairouz et al.).

    An independent route to :func:`lpdp.compose.homogeneous` (it sums binomial terms directly, in floating
    point, so use it only for moderate k).
    """
    eps, dlt = float(epsilon), float(delta)
    out = []
    for i in range(k // 2 + 1):
        s = 0.0
        for j in range(i):
            s += math.comb(k, j) * (math.exp((k - j) * eps) - math.exp((k - 2 * i + j) * eps))
        dprime = s / (1 + math.exp(eps)) ** k
        out.append(((k - 2 * i) * eps, 1 - (1 - dlt) ** k * (1 - dprime)))
    return sorted(out)

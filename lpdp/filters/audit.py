"""Audits of a filter on i.i.d. rounds: the exact violation probability ``P_x(l^{(T)} > ε)`` and the exact
hockey-stick δ ``E_x[(1 - e^{ε - l^{(T)}})_+]`` of the stopped transcript (filter paper, Sec. II), with the
survival curve ``P_x(T >= t)``.

Three independent methods:

* ``"quadrature"`` (Gaussian or Laplace, one neighbouring pair): the absorbed random walk of the running
  loss ``S_j`` on the continuation interval of Proposition 1's rule. Gaussian increments
  ``N(μ²/2, μ²)``: Nyström's method with Gauss–Legendre nodes, the last one or two steps in closed form.
  Laplace increments (atoms ``±r`` and a density between, ``r = d/scale``): point masses on the lattice
  ``r Z`` and a density at Gauss–Legendre nodes on panels cut at every kink, translation-invariant by
  ``r`` (:mod:`lpdp.filters._laplace_walk`); atoms on a threshold or on ε follow the rule's ties.
* ``"exact"`` (finite outputs): dynamic programming over output counts, which determine every pair's
  loss exactly.
* ``"monte-carlo"`` (anything): seeded trajectories; estimates come with standard errors and one-sided
  upper bounds at the stated confidence (Clopper–Pearson for the tail, normal for the hockey stick).
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import special

from lpdp._binomial import clopper_pearson_upper
from lpdp._blas import one_blas_thread
from lpdp._limits import check_budget, seconds_for
from lpdp._numerics import UNIT_ROUNDOFF
from lpdp._validate import check_int, check_probability
from lpdp.errors import ParameterError
from lpdp.filters._laplace_walk import TooManyNodes, laplace_pair
from lpdp.filters.realisation import LOSS_TIE_TOL, Step, StoppingRule, hockey_terms, over_epsilon, within
from lpdp.mechanisms import (
    FiniteMechanism,
    Mechanism,
    Request,
    pair_increments,
    request_input,
)
from lpdp.tradeoff import gaussian_hockey

__all__ = ["AuditResult", "PairAudit", "audit", "rule_audit"]

METHODS = ("auto", "quadrature", "exact", "monte-carlo")


@dataclass(frozen=True)
class PairAudit:
    """The audit of one ordered pair ``(x, x')`` under ``P_x``."""

    pair: tuple[Hashable, Hashable]
    tail: float
    hockey_stick_delta: float
    survival: tuple[float, ...]
    tail_stderr: float = 0.0
    hockey_stick_stderr: float = 0.0
    survival_stderr: tuple[float, ...] | None = None

    @property
    def expected_T(self) -> float:
        """``E_x[T] = Σ_t P_x(T >= t)``."""
        return math.fsum(self.survival)


@dataclass(frozen=True)
class AuditResult:
    """Worst case over the ordered pairs of an audit.

    ``tail`` and ``hockey_stick_delta`` are the largest values over ordered pairs; for Monte Carlo
    ``tail_upper`` and ``hockey_stick_upper`` are one-sided upper bounds at ``confidence`` (for exact
    methods they equal the values and ``confidence`` is ``None``). ``bound`` is the δ the filter claims;
    ``guarantee`` is its own proof's bound evaluated at the audited ``E_x[T]`` (largest over pairs;
    ``None`` for a filter without a guarantee).
    """

    tail: float
    hockey_stick_delta: float
    tail_upper: float
    hockey_stick_upper: float
    bound: float
    method: str
    confidence: float | None
    pairs: tuple[PairAudit, ...]
    guarantee: float | None = None

    @property
    def expected_T(self) -> float:
        """``E[T]`` under the first database of the first pair."""
        return self.pairs[0].expected_T

    @property
    def survival(self) -> tuple[float, ...]:
        """``P(T >= t)``, t = 1..N, under the first database of the first pair."""
        return self.pairs[0].survival

    def to_dict(self) -> dict[str, Any]:
        """Plain data for JSON output."""
        return {"tail": self.tail, "hockey_stick_delta": self.hockey_stick_delta,
                "tail_upper": self.tail_upper, "hockey_stick_upper": self.hockey_stick_upper,
                "bound": self.bound, "guarantee": self.guarantee, "method": self.method,
                "confidence": self.confidence,
                "expected_T": self.expected_T,
                "pairs": [{"pair": list(p.pair), "tail": p.tail,
                           "hockey_stick_delta": p.hockey_stick_delta, "expected_T": p.expected_T,
                           "tail_stderr": p.tail_stderr,
                           "hockey_stick_stderr": p.hockey_stick_stderr} for p in self.pairs]}


# -- closed forms for the Gaussian walk ------------------------------------------------------------
def _tail_after(s: np.ndarray, eps: float, mu: float, steps: int) -> np.ndarray:
    """``P(s + Σ_{steps} X > ε)`` for i.i.d. ``X ~ N(μ²/2, μ²)``."""
    s = np.asarray(s, dtype=float)
    if steps == 0:
        return over_epsilon(eps, s).astype(float)
    return special.ndtr((s + steps * mu * mu / 2.0 - eps) / (math.sqrt(steps) * mu))


def _hockey_after(s: np.ndarray, eps: float, mu: float, steps: int) -> np.ndarray:
    """``E[(1 - e^{ε - s - Σ X})_+]``: Balle–Wang ``δ_G(ε - s)`` with ``μ√steps`` (identity at 0 steps)."""
    s = np.asarray(s, dtype=float)
    c = eps - s
    if steps == 0:
        return np.maximum(0.0, -np.expm1(np.minimum(c, 0.0)))
    return gaussian_hockey(c, math.sqrt(steps) * mu)


#: Largest number of quadrature nodes (the kernel matrix is nodes²); beyond it, use Monte Carlo.
MAX_NODES = 6000


def _nodes(lo: float, hi: float, eps: float, n: int, panel: float) -> tuple[np.ndarray, np.ndarray]:
    """Composite Gauss–Legendre nodes and weights on [lo, hi]: panels no wider than ``panel`` (so the
    Gaussian kernel is resolved whatever μ), ``n`` nodes each, with a panel edge at ε (where h has a
    kink)."""
    if not hi > lo:
        return np.empty(0), np.empty(0)
    cuts = [lo, eps, hi] if lo < eps < hi else [lo, hi]
    panels = [max(1.0, math.ceil((b - a) / panel)) for a, b in zip(cuts[:-1], cuts[1:], strict=True)]
    if not sum(panels) * n <= MAX_NODES:
        raise TooManyNodes(f"method='quadrature': the continuation interval is {hi - lo:.3g} wide "
                            f"for a loss step of sd {panel:.3g}; that needs more than {MAX_NODES} "
                            "nodes, use method='monte-carlo'")
    edges = np.concatenate([np.linspace(cuts[j], cuts[j + 1], int(m) + 1)[:-1]
                            for j, m in enumerate(panels)] + [[hi]])
    x0, w0 = np.polynomial.legendre.leggauss(n)
    half = np.diff(edges)[:, None] / 2.0
    return ((half * x0 + (edges[:-1, None] + half)).ravel(), (half * w0).ravel())


def _quadrature_pair(rule: StoppingRule, k_own: float, k_rev: float, mu: float,
                     nodes: int) -> tuple[float, float, tuple[float, ...]]:
    """Tail, hockey stick and survival for the ordered pair with thresholds (own, reverse)."""
    n_max, lag, eps = rule.max_steps, rule.lag, rule.epsilon
    kk = min(rule.min_steps, n_max)
    zero = np.zeros(1)
    if not rule.first_release:  # T = min_steps
        return (float(_tail_after(zero, eps, mu, kk)[0]) if kk else 0.0,
                float(_hockey_after(zero, eps, mu, kk)[0]) if kk else 0.0,
                (1.0,) * kk + (0.0,) * (n_max - kk))
    if k_own == k_rev == math.inf:  # no threshold: T = N, and S_N ~ N(N μ²/2, N μ²) in closed form
        zero = np.zeros(1)
        return (float(_tail_after(zero, eps, mu, n_max)[0]), float(_hockey_after(zero, eps, mu, n_max)[0]),
                (1.0,) * n_max)
    reach = abs(eps) + n_max * (mu * mu / 2.0 + 12.0 * mu) + 1.0  # the walk never gets further
    lo, hi = max(-k_rev, -reach), min(k_own, reach)  # C = {S <= κ_own, -S <= κ_rev}
    x, w = _nodes(lo, hi, eps, nodes, mu)
    check_budget(f"max_steps={n_max} (quadrature, {x.size} nodes)",
                 memory_bytes=8.0 * x.size * (x.size + n_max + 4),
                 # per step: a kernel product, and for the tail and the hockey stick each an
                 # elementwise density of nodes x nodes (~10 operations an entry) and h at the nodes
                 seconds=seconds_for(n_max * x.size * (x.size / BLAS_SPEEDUP + 20 * x.size + 100)))
    in0 = bool(within(0.0, k_own) and within(0.0, k_rev))
    m = mu * mu / 2.0

    def phi(d: np.ndarray) -> np.ndarray:
        return np.exp(-0.5 * ((d - m) / mu) ** 2) / (mu * math.sqrt(2 * math.pi))

    kern = phi(x[:, None] - x[None, :])  # density of the next state x_a from x_b

    def out_expect(points: np.ndarray, h: Any, steps: int) -> np.ndarray:
        """``E[h_steps(s + X); s + X ∉ C]`` for s in ``points`` (``kern.T`` is the kernel from the nodes)."""
        to_nodes = kern.T if points is x else phi(x[None, :] - points[:, None])
        inside = to_nodes @ (w * h(x, eps, mu, steps))
        return np.maximum(0.0, h(points, eps, mu, steps + 1) - inside)

    # The continuation value after a stop at a node depends on the node only (not on t): once per h.
    going_on = {h: out_expect(x, h, lag) for h in (_tail_after, _hockey_after)} if n_max > 1 else {}

    # dens[j] = sub-density of S_j on the alive paths (S_1..S_j in C), at the nodes, j >= 1
    dens = [np.empty(0), phi(x) * in0]
    for _ in range(2, n_max):
        dens.append(kern @ (w * dens[-1]))
    totals = [0.0, 0.0]
    survival = []
    for t in range(1, n_max + 1):
        j = t - 1 - lag
        last = t == n_max
        survival.append(1.0 if j < 0 or t <= kk else float(in0) if j == 0 else
                        float(np.dot(w, dens[j])))
        if t <= kk:  # T = max(T1, kk): the stops of T1 up to kk are counted at kk below
            continue
        for k, h in enumerate((_tail_after, _hockey_after)):
            if j < 0:  # lag 1, t = 1: S_0 decides, S_1 is final
                totals[k] += float(last or not in0) * float(h(zero, eps, mu, lag)[0])
            elif j == 0:
                g0 = h(zero, eps, mu, lag + 1) if last else out_expect(zero, h, lag)
                totals[k] += float(in0) * float(g0[0])
            else:
                g = h(x, eps, mu, lag + 1) if last else going_on[h]
                totals[k] += float(np.dot(w * dens[j], g))
    if kk:  # E[h(S_kk); T1 <= kk] = E[h(S_kk)] - E[h(S_kk); S_0 .. S_{kk-lag} within]
        jj = kk - lag
        for k, h in enumerate((_tail_after, _hockey_after)):
            going = (0.0 if kk == n_max else float(in0) * float(h(zero, eps, mu, kk)[0]) if jj == 0
                     else float(np.dot(w * dens[jj], h(x, eps, mu, lag))))
            totals[k] += max(0.0, float(h(zero, eps, mu, kk)[0]) - going)
    return totals[0], totals[1], tuple(survival)


def _sum_up(values: np.ndarray) -> float:
    """``Σ values`` rounded up (``math.fsum`` rounds to nearest; one step up unless it was exact), at most 1
    (a probability)."""
    vals = [float(v) for v in values]
    total = math.fsum(vals)
    if math.fsum([*vals, -total]) > 0:
        total = math.nextafter(total, math.inf)
    return min(total, 1.0)


#: Veltkamp's splitter for :func:`_two_product` (``2^27 + 1``), and the products below which its error
#: term may underflow (then bounded by ``u p`` plus the smallest subnormal).
_SPLIT = 134217729.0
_TINY_PRODUCT = 2.0 ** -960


def _two_product(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``fl(a b)`` and ``|a b - fl(a b)|`` exactly (Dekker's product, for ``0 <= a, b <= 1``)."""
    p = a * b
    t = _SPLIT * a
    ah = t - (t - a)
    al = a - ah
    t = _SPLIT * b
    bh = t - (t - b)
    bl = b - bh
    err = np.abs(((ah * bh - p) + ah * bl + al * bh) + al * bl)
    tiny = p < _TINY_PRODUCT
    return p, np.where(tiny, UNIT_ROUNDOFF * p + 5e-324, err)


def _exact_finite(rule: StoppingRule, mechanism: FiniteMechanism, request: Request | None,
                  x: Hashable) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Dynamic programming over output counts under ``P_x``: the losses of every final state (rows,
    pairs last), a bound of their rounding (same shape), their probabilities, a bound of the
    probabilities' rounding, and the survival curve.

    A loss ``Σ_i c_i (log p_a(i) - log p_b(i))`` is within ``u Σ_i c_i (8 (|log p_a| + |log p_b|) + (K + 2)
    |increment|)`` of the exact one (numpy's log within 4 ulps, the subtraction, the dot product of K
    terms). Each state carries an absolute bound of its probability's rounding: a step's products are
    exact up to Dekker's error term, computed exactly (:func:`_two_product`), the carried bounds are
    multiplied by the (exact) step masses, and merging g paths into a state adds ``(g - 1) u`` of the sum
    (positive terms); a state reached by exact products alone keeps 0."""
    u = UNIT_ROUNDOFF
    p_all = mechanism.probabilities(request_input(request, x))
    support = np.flatnonzero(p_all > 0)
    probs = p_all[support]
    dbs = {d for pair in rule.pairs for d in pair}
    with np.errstate(divide="ignore"):
        logp = {d: np.log(mechanism.probabilities(request_input(request, d)))[support] for d in dbs}
    inc = pair_increments(logp, rule.pairs).T  # (K, P)
    finite_inc = np.where(np.isfinite(inc), inc, 0.0)
    pos, neg = (inc == np.inf).astype(int), (inc == -np.inf).astype(int)
    with np.errstate(invalid="ignore"):
        size = np.stack([np.abs(logp[a]) + np.abs(logp[b]) for a, b in rule.pairs]).T
    per_count = u * (8 * np.where(np.isfinite(size), size, 0.0) + (support.size + 2) * np.abs(finite_inc))

    def losses(counts: np.ndarray) -> np.ndarray:
        s = counts @ finite_inc
        s = np.where(counts @ neg > 0, -np.inf, s)
        return np.where(counts @ pos > 0, np.inf, s)

    k, n_max = support.size, rule.max_steps
    final_counts: list[np.ndarray] = []
    final_probs: list[np.ndarray] = []
    survival = np.zeros(n_max)
    counts = np.zeros((1 if rule.first_release else 0, k), dtype=np.int64)
    mass = np.column_stack([np.ones(counts.shape[0]), np.zeros(counts.shape[0])])   # (mass, its error)

    def expand(c: np.ndarray, pm: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        eye = np.eye(k, dtype=np.int64)
        new = (c[:, None, :] + eye[None, :, :]).reshape(-1, k)
        if new.shape[0] == 0:
            return new, np.zeros((0, 2))
        newp, err = _two_product(np.repeat(pm[:, 0], k), np.tile(probs, pm.shape[0]))
        err = err + np.repeat(pm[:, 1], k) * np.tile(probs, pm.shape[0]) * (1 + 2 * u)
        uniq, inv = np.unique(new, axis=0, return_inverse=True)
        inv = inv.reshape(-1)
        total = np.bincount(inv, weights=newp, minlength=uniq.shape[0])
        group = np.bincount(inv, minlength=uniq.shape[0])
        bound = np.bincount(inv, weights=err, minlength=uniq.shape[0]) * (1 + (group + 2) * u) \
            + (group - 1) * u * total * (1 + (group + 2) * u)
        return uniq, np.column_stack([total, bound])

    # Paths whose threshold rule has stopped before min_steps go on ("zombies") until T = min_steps.
    kk = min(rule.min_steps, n_max)
    zc = np.zeros((1 if not rule.first_release and kk >= 1 else 0, k), dtype=np.int64)
    zm = np.column_stack([np.ones(zc.shape[0]), np.zeros(zc.shape[0])])

    def finish(c: np.ndarray, pm: np.ndarray) -> None:
        final_counts.append(c)
        final_probs.append(pm)

    for j in range(n_max):
        alive = rule.alive(losses(counts)) if counts.shape[0] else np.zeros(0, bool)
        if rule.lag == 0:
            if j < kk:
                zc, zm = np.concatenate([zc, counts[~alive]]), np.concatenate([zm, mass[~alive]])
            else:
                finish(counts[~alive], mass[~alive])
            counts, mass = counts[alive], mass[alive]
            survival[j] = mass[:, 0].sum() + zm[:, 0].sum()
            counts, mass = expand(counts, mass)
            zc, zm = expand(zc, zm)
            if j + 1 == n_max:
                finish(counts, mass)
        else:
            survival[j] = mass[:, 0].sum() + zm[:, 0].sum()
            go = alive & (j + 1 < n_max)
            c_stop, m_stop = expand(counts[~go], mass[~go])
            zc, zm = expand(zc, zm)
            if j + 1 < kk:
                zc, zm = np.concatenate([zc, c_stop]), np.concatenate([zm, m_stop])
            else:
                finish(c_stop, m_stop)
            counts, mass = expand(counts[go], mass[go])
        if j + 1 == kk:
            finish(zc, zm)
            zc, zm = zc[:0], zm[:0]
    fc = np.concatenate(final_counts) if final_counts else np.zeros((0, k), dtype=np.int64)
    fm = np.concatenate(final_probs) if final_probs else np.zeros((0, 2))
    return losses(fc), fc @ per_count, fm[:, 0], fm[:, 1], survival


def simulate_trajectories(rule: StoppingRule, steps: Sequence[Step], x: Hashable, trajectories: int,
              rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Seeded trajectories under ``P_x``: stopping times ``T`` and final losses (pairs last).

    Round i runs ``steps[(i - 1) % m]`` (i.i.d. rounds: one step) and draws its increments with that
    step's :meth:`~lpdp.mechanisms.Mechanism.sample_losses`; ``S_j`` is checked against the rule's row
    ``j % period`` (``period`` is 1 or m). Step by step on the trajectories still running, so the cost is
    ``trajectories × E[T]`` draws.
    """
    n_max, p, m = rule.max_steps, len(rule.pairs), len(steps)
    if rule.period not in (1, m):
        raise ParameterError(f"steps: a cycle of {m} steps for a rule with {rule.period} threshold rows")
    plan = [(mech, request_input(req, x),
             [(request_input(req, a), request_input(req, b)) for a, b in rule.pairs],
             mech.finite_losses) for mech, req in steps]
    t_out = np.zeros(trajectories, dtype=np.int64)
    final = np.zeros((trajectories, p))

    def draw(s: np.ndarray, j: int) -> np.ndarray:
        """``s`` plus the increment of release j + 1 (step ``j % m``), in place (callers pass arrays
        they own)."""
        mechanism, value, inputs, finite_losses = plan[j % m]
        with np.errstate(invalid="ignore"):
            s += mechanism.sample_losses(value, inputs, rng, (s.shape[1],))
        if not finite_losses:
            s[np.isnan(s)] = np.inf
        return s

    if rule.first_release:
        s = np.zeros((p, trajectories))  # S_j of the running trajectories, one row per ordered pair
        idx = np.arange(trajectories)
        # within(s, thresholds) with the tie slack folded into the bounds once
        bounds = [[float(th) + (LOSS_TIE_TOL * max(1.0, abs(th)) if math.isfinite(th) else 0.0)
                   for th in row] for row in rule.rows()]
        for j in range(n_max - rule.lag):  # T >= t iff S_0 .. S_{t-1-lag} are all within
            bound = bounds[j % rule.period]
            ok = s[0] <= bound[0]
            for k in range(1, p):
                ok &= s[k] <= bound[k]
            if ok.all():
                s = draw(s, j)
                continue
            stop = idx[~ok]
            t_out[stop] = j + rule.lag
            final[stop] = (s[:, ~ok] if rule.lag == 0 else draw(s[:, ~ok], j)).T
            s, idx = draw(s[:, ok], j), idx[ok]
        if rule.lag:
            s = draw(s, n_max - 1)
        t_out[idx] = n_max
        final[idx] = s.T
    # T = max(T, min_steps): trajectories stopped earlier run on to min_steps
    kk = min(rule.min_steps, n_max)
    short = np.flatnonzero(t_out < kk)
    if short.size:
        s, t = np.ascontiguousarray(final[short].T), t_out[short]
        while (need := t < kk).any():
            for r in range(m):  # release t + 1 runs step t % m
                sel = need & (t % m == r)
                if sel.any():
                    s[:, sel] = draw(s[:, sel], r)
            t = t + need
        final[short], t_out[short] = s.T, t
    return t_out, final


def monte_carlo_audit(rule: StoppingRule, steps: Sequence[Step], trajectories: int,
                 seed: int) -> tuple[PairAudit, ...]:
    """Every ordered pair of ``rule`` by seeded trajectories (one simulation per first database)."""
    eps = rule.epsilon
    rng = np.random.default_rng(seed)
    sims = {}
    out = []
    for i, (a, _) in enumerate(rule.pairs):
        if a not in sims:
            sims[a] = simulate_trajectories(rule, steps, a, trajectories, rng)
        t, final = sims[a]
        over = over_epsilon(eps, final[:, i])
        hs = hockey_terms(eps, final[:, i])
        surv = np.array([(t >= k).mean() for k in range(1, rule.max_steps + 1)])
        n = t.size
        out.append(PairAudit(rule.pairs[i], float(over.mean()), float(hs.mean()),
                             tuple(surv.tolist()), float(over.std() / math.sqrt(n)),
                             float(hs.std(ddof=1) / math.sqrt(n)),
                             tuple(np.sqrt(surv * (1 - surv) / n).tolist())))
    return tuple(out)


#: A dense matrix-vector product runs this many times faster per entry than the elementwise rate of
#: :data:`lpdp._limits.OPS_PER_SECOND`.
BLAS_SPEEDUP = 20.0


def _check_cost(rule: StoppingRule, mechanism: Mechanism, request: Request | None, method: str,
                trajectories: int) -> None:
    """Refuse an audit whose estimated memory or time exceeds the budget of :mod:`lpdp._limits`
    (before anything is allocated)."""
    n, p = rule.max_steps, len(rule.pairs)
    base = 64.0 * n  # survival curves (arrays and tuples)
    if method == "exact":
        if not mechanism.finite_outputs:
            raise ParameterError("method='exact': needs a FiniteMechanism")
        k = max(int(np.count_nonzero(mechanism.probabilities(request_input(request, a)) > 0))
                for a, _ in rule.pairs)
        states = float(math.comb(n + k - 1, k - 1)) if n < 10**7 else math.inf
        check_budget(f"max_steps={n} (exact audit over {k} outputs: ~{states:.3g} count vectors)",
                     memory_bytes=base + 48.0 * states * k * k + 8.0 * states * p,
                     seconds=seconds_for(n * states * k * (k + p)))
    elif method == "monte-carlo":
        check_simulation(rule, trajectories)
    else:
        check_budget(f"max_steps={n}", memory_bytes=base, seconds=seconds_for(n))


def check_simulation(rule: StoppingRule, trajectories: int) -> None:
    """Refuse a Monte Carlo run of ``rule`` whose estimated memory or time exceeds the budget of
    :mod:`lpdp._limits` (before anything is allocated)."""
    n, p = rule.max_steps, len(rule.pairs)
    check_budget(f"trajectories={trajectories}, max_steps={n}",
                 memory_bytes=64.0 * n + 64.0 * rule.period * p + trajectories * (40.0 * p + 24.0),
                 seconds=seconds_for(float(trajectories) * n * (p + 2) * 4))


def _loss_family(mechanism: Mechanism, request: Request | None, rule: StoppingRule
                 ) -> tuple[str, float] | None:
    """The closed-form loss law of a rule's one pair (:meth:`~lpdp.mechanisms.Mechanism.loss_family`),
    when the quadrature audit has a walk for it, else ``None``."""
    if len(rule.pairs) != 2:
        return None
    (a, b), _ = rule.pairs
    family = mechanism.loss_family(request_input(request, a), request_input(request, b))
    return family if family is not None and family[0] in ("gaussian", "laplace") else None


def _quadrature_audit(rule: StoppingRule, mechanism: Mechanism, request: Request | None,
                      nodes: int) -> list[PairAudit]:
    """Both ordered pairs of a Gaussian or Laplace rule by quadrature."""
    family = _loss_family(mechanism, request, rule)
    if family is None:
        raise ParameterError("method='quadrature': needs a Gaussian or Laplace mechanism and one pair")
    name, param = family
    if param == 0.0:
        raise ParameterError("method='quadrature': the pair's inputs coincide (zero loss); use "
                             "method='monte-carlo'")
    pair = laplace_pair if name == "laplace" else _quadrature_pair
    with one_blas_thread():   # small matrix products: more BLAS threads only spin (lpdp._blas)
        return [PairAudit(rule.pairs[own], *pair(rule, rule.thresholds[own], rule.thresholds[rev], param,
                                                 nodes)) for own, rev in ((0, 1), (1, 0))]


def rule_audit(rule: StoppingRule, mechanism: Mechanism, request: Request | None = None, *,
               method: str = "auto", nodes: int = 24, trajectories: int = 100_000,
               seed: int = 0) -> tuple[str, tuple[PairAudit, ...]]:
    """Audit a :class:`StoppingRule` for i.i.d. rounds of ``(mechanism, request)``, every ordered pair.

    Returns the method used and one :class:`PairAudit` per ordered pair (see :func:`audit`).
    """
    if method not in METHODS:
        raise ParameterError(f"method={method!r}: must be one of {METHODS}")
    if rule.period > 1:
        raise ParameterError(f"rule: has per-step thresholds (a cycle of {rule.period} steps); the exact "
                             "and quadrature audits are for i.i.d. rounds: use "
                             "lpdp.filters.sequence_audit (Monte Carlo)")
    nodes = check_int(nodes, "nodes", minimum=2, maximum=200)
    trajectories = check_int(trajectories, "trajectories", minimum=2)
    seed = check_int(seed, "seed", minimum=0)
    auto = method == "auto"
    if auto:
        method = ("quadrature" if _loss_family(mechanism, request, rule) is not None else
                  "exact" if mechanism.finite_outputs else "monte-carlo")
    eps = rule.epsilon
    _check_cost(rule, mechanism, request, method, trajectories)
    out: list[PairAudit] = []
    if method == "quadrature":
        try:
            out = _quadrature_audit(rule, mechanism, request, nodes)
        except TooManyNodes:
            if not auto:
                raise
            method = "monte-carlo"
            _check_cost(rule, mechanism, request, method, trajectories)
    if method == "exact":
        dps: dict[Hashable, tuple[np.ndarray, ...]] = {}
        for i, (a, _) in enumerate(rule.pairs):
            if a not in dps:  # one dynamic programme per database: it gives every pair's loss
                dps[a] = _exact_finite(rule, mechanism, request, a)
            loss, loss_err, probs, errs, surv = dps[a]
            # certified from above: each probability plus its rounding bound; the hockey-stick terms of
            # the losses raised by theirs (-expm1 of a rounded difference: 8 u), products rounded (4 u)
            over = over_epsilon(eps, loss[:, i])
            terms = hockey_terms(eps, loss[:, i] + loss_err[:, i])
            inexact = (terms > 0) & (terms < 1)
            weighted = (probs + errs) * np.where(inexact, terms * (1 + 8 * UNIT_ROUNDOFF), terms)
            weighted = np.where(inexact | (errs > 0), weighted * (1 + 4 * UNIT_ROUNDOFF), weighted)
            out.append(PairAudit(rule.pairs[i], _sum_up(np.concatenate([probs[over], errs[over]])),
                                 _sum_up(weighted), tuple(surv.tolist())))
    elif method == "monte-carlo":
        out = list(monte_carlo_audit(rule, [(mechanism, request)], trajectories, seed))
    return method, tuple(out)


def audit(filt: Any, mechanism: Mechanism, request: Request | None = None, *,
          method: str = "auto", nodes: int = 24, trajectories: int = 100_000, seed: int = 0,
          confidence: float = 0.95) -> AuditResult:
    """Audit a filter on i.i.d. rounds of ``(mechanism, request)`` (filter paper, Sec. II and Alg. 1).

    Parameters
    ----------
    filt : RealisationFilter, UnionBoundFilter or NaiveBayesianFilter
        The configured filter (only its configuration is used).
    mechanism, request
        The round.
    method : {"auto", "quadrature", "exact", "monte-carlo"}
        ``auto`` picks quadrature for a Gaussian or Laplace mechanism with one neighbouring pair, exact
        dynamic programming for finite outputs, Monte Carlo otherwise (and where the quadrature would
        need too many nodes).
    nodes : int
        Gauss–Legendre nodes per quadrature panel (Gaussian: panels at most one loss-step standard
        deviation μ wide; Laplace: panels between consecutive kinks, at most 2 wide).
    trajectories, seed : int
        Monte Carlo sample size and seed.
    confidence : float
        Level of the one-sided Monte Carlo upper bounds.

    Returns
    -------
    AuditResult

    Examples
    --------
    >>> from lpdp.filters import GaussianMechanism, RealisationFilter, optimal_parameters
    >>> p = optimal_parameters(1e-3, 48)
    >>> f = RealisationFilter(6.0, 1e-3, 48, p.delta_tilde, p.theta)
    >>> r = audit(f, GaussianMechanism(sigma=2.0))
    >>> r.method, r.tail <= r.bound
    ('quadrature', True)
    """
    confidence = check_probability(confidence, "confidence", open_left=True, open_right=True)
    rule = filt.iid_rule(mechanism, request)
    method, pairs = rule_audit(rule, mechanism, request, method=method, nodes=nodes,
                               trajectories=trajectories, seed=seed)
    return audit_result(filt, method, pairs, trajectories, confidence)


def audit_result(filt: Any, method: str, pairs: tuple[PairAudit, ...], trajectories: int,
            confidence: float) -> AuditResult:
    """The worst case over ordered pairs, with one-sided upper bounds for Monte Carlo."""
    tail = max(p.tail for p in pairs)
    hs = max(p.hockey_stick_delta for p in pairs)
    if method == "monte-carlo":
        z = float(special.ndtri(confidence))   # the normal quantile (scipy.stats: 0.3-0.5 s to import)
        n = trajectories
        tail_up = max(clopper_pearson_upper(round(p.tail * n), n, confidence) if p.tail < 1 else 1.0
                      for p in pairs)
        hs_up = max(min(1.0, p.hockey_stick_delta + z * p.hockey_stick_stderr) for p in pairs)
        conf: float | None = confidence
    else:
        tail_up, hs_up, conf = tail, hs, None
    bounds = [filt.guarantee(p.expected_T) for p in pairs]
    guarantee = None if None in bounds else max(bounds)
    return AuditResult(tail, hs, tail_up, hs_up, filt.claimed_delta, method, conf, pairs, guarantee)

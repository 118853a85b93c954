"""The soundness suite's own reference (tests/test_soundness.py): true δ(ε) of compositions, in mpmath.

Nothing here imports lpdp. Every mechanism is built from its defining numbers, the float inputs taken as
exact:

* **finite pairs with integer loss keys** (:class:`Pair`): each atom's loss is an integer combination
  ``Σ c_i b_i`` of a few *base losses* ``b_i`` (``ε0`` of randomized response, the ``ε_i`` of (ε, δ)
  constraints, ``log(p_j/q_j)`` of a table's outputs), so products add integer keys exactly and atoms of
  equal loss merge exactly; masses are 60-digit numbers. ``δ(ε) = p_∞ + Σ_{L > ε} P (1 - e^{ε - L})``
  from suffix sums of the sorted atoms;
* **closed forms** at 60 digits and more: binomial sums for k-fold randomized response and (ε0, δ0)-DP
  (Kairouz, Oh and Viswanath 2017, Theorem 3.4), evaluated only over the window of agreement counts that
  carries mass (k up to 10^6); ``G_μ`` (Dong, Roth and Su 2022, Corollary 2.13) with finite pairs
  (``Σ_a P_a δ_{G_μ}(ε - L_a)``);
* **Laplace**: the privacy loss of ``Lap(0, b)`` against ``Lap(1, b)`` is ``+1/b`` with P-mass 1/2,
  ``-1/b`` with mass ``e^{-1/b}/2`` and the density ``e^{l/2 - 1/(2b)}/4`` on ``(-1/b, 1/b)``; one and
  two runs in closed form (two runs also by mpmath quadrature, as the closed form's check).

Comparisons (:func:`unsafe_upper`, :func:`unsafe_lower`) have no tolerance on the unsafe side: a float
is unsafe when it is on the wrong side of the reference by more than the reference's own error
(:data:`REF_RTOL`, far below one ulp) or, for δ values, by more than :data:`UNDERFLOW`.
"""

from __future__ import annotations

import bisect
import functools
import math
from collections.abc import Iterable, Sequence
from fractions import Fraction

import mpmath

#: A private mpmath context: 60 significant digits whatever the global mpmath precision is.
MP = mpmath.MPContext()
MP.dps = 60
#: The references' own relative error is below 1e-40; anything within this is not decidable (and is
#: far below one ulp of a double, 1.1e-16).
REF_RTOL = 1e-30
#: δ differences below this are ignored (the smallest δ target the suite asks for is 1e-300).
UNDERFLOW = 1e-300
#: Largest number of atoms a reference pair may carry (keeps every case in milliseconds).
MAX_ATOMS = 60000

ZERO, ONE = MP.mpf(0), MP.mpf(1)


def mpf(x) -> mpmath.mpf:
    """The exact value of a float (or int, or Fraction) as a 60-digit number."""
    if isinstance(x, Fraction):
        return MP.mpf(x.numerator) / x.denominator
    return MP.mpf(x)


# ---------------------------------------------------------------------------------------------------
# Finite pairs with integer loss keys
class Pair:
    """A finite pair ``(P, Q)``: atoms ``key -> (P mass, Q mass)`` with loss ``Σ key_i bases_i``, plus
    ``p_inf`` (P-mass where Q = 0) and ``q_ninf`` (Q-mass where P = 0)."""

    def __init__(self, bases: Sequence, atoms: dict, p_inf=ZERO, q_ninf=ZERO) -> None:
        self.bases = tuple(bases)
        self.atoms = atoms
        self.p_inf, self.q_ninf = mpf(p_inf), mpf(q_ninf)
        if len(atoms) > MAX_ATOMS:
            raise ValueError(f"reference pair too large: {len(atoms)} atoms")

    # -- products ----------------------------------------------------------------------------------
    def _in(self, bases: tuple) -> dict:
        """The atoms with keys over ``bases`` (a superset of this pair's bases, same values)."""
        where = [bases.index(b) for b in self.bases]
        out = {}
        for key, pq in self.atoms.items():
            full = [0] * len(bases)
            for i, c in zip(where, key, strict=True):
                full[i] += c
            out[tuple(full)] = pq
        return out

    def __mul__(self, other: Pair) -> Pair:
        bases = self.bases + tuple(b for b in other.bases if b not in self.bases)
        a, b = self._in(bases), other._in(bases)
        out: dict = {}
        for k1, (p1, q1) in a.items():
            for k2, (p2, q2) in b.items():
                key = tuple(x + y for x, y in zip(k1, k2, strict=True))
                old = out.get(key)
                out[key] = (p1 * p2, q1 * q2) if old is None else (old[0] + p1 * p2, old[1] + q1 * q2)
        p_inf = self.p_inf + other.p_inf - self.p_inf * other.p_inf
        q_ninf = self.q_ninf + other.q_ninf - self.q_ninf * other.q_ninf
        return Pair(bases, out, p_inf, q_ninf)

    def __pow__(self, k: int) -> Pair:
        result, base = identity(), self
        while k:
            if k & 1:
                result = result * base
            k >>= 1
            if k:
                base = base * base
        return result

    def mirror(self) -> Pair:
        """The reversed pair ``(Q, P)``."""
        return Pair(self.bases, {tuple(-c for c in k): (q, p) for k, (p, q) in self.atoms.items()},
                    self.q_ninf, self.p_inf)

    # -- δ -------------------------------------------------------------------------------------------
    def loss(self, key) -> mpmath.mpf:
        return MP.fsum(c * b for c, b in zip(key, self.bases, strict=True) if c)

    @functools.cached_property
    def _sorted(self):
        """Losses ascending with suffix sums of P and Q (``[i]``: atoms ``i..``)."""
        rows = sorted((self.loss(k), p, q) for k, (p, q) in self.atoms.items())
        losses = [r[0] for r in rows]
        sp, sq = [ZERO] * (len(rows) + 1), [ZERO] * (len(rows) + 1)
        for i in range(len(rows) - 1, -1, -1):
            sp[i], sq[i] = sp[i + 1] + rows[i][1], sq[i + 1] + rows[i][2]
        return losses, sp, sq

    def delta(self, eps) -> mpmath.mpf:
        """``δ(ε) = p_∞ + Σ_{L > ε} (P - e^ε Q)`` (every summand has the sign of ``L - ε``)."""
        losses, sp, sq = self._sorted
        e = mpf(eps)
        i = bisect.bisect_right(losses, e)
        return self.p_inf + max(ZERO, sp[i] - MP.exp(e) * sq[i])

    def top_loss(self) -> mpmath.mpf:
        """The largest loss (``inf`` when ``p_inf > 0``): the true ε at δ = 0."""
        if self.p_inf > 0:
            return MP.inf
        return self._sorted[0][-1] if self.atoms else MP.ninf

    def masses_p(self):
        """``(loss, P mass)`` of every finite atom."""
        return [(self.loss(k), p) for k, (p, _) in self.atoms.items() if p > 0]


def identity() -> Pair:
    return Pair((), {(): (ONE, ONE)})


def rr(categories: int, epsilon: float) -> Pair:
    """k-ary randomized response on inputs (0, 1): loss ``ε0`` exactly (keys ±1, 0), ``keep =
    1/(1 + (K-1) e^{-ε0})`` and every other output ``keep e^{-ε0}``."""
    e = mpf(epsilon)
    other = 1 / (MP.exp(e) + categories - 1)
    keep = other * MP.exp(e)
    atoms = {(1,): (keep, other), (-1,): (other, keep)}
    if categories > 2:
        atoms[(0,)] = ((categories - 2) * other, (categories - 2) * other)
    return Pair((e,), atoms)


def subsampled_rr(categories: int, epsilon: float, rate: float) -> Pair:
    """The removal pair ``(q P + (1 - q) Q, Q)`` of k-ary randomized response run on a Poisson subsample
    at ``rate`` q (Zhu, Dong and Wang 2022, Section 5): the output equal to the input has loss
    ``log(q e^{ε0} + 1 - q)``, the one equal to the neighbour's ``log(q e^{-ε0} + 1 - q)`` (two bases),
    the other K - 2 outputs loss 0. The addition pair ``(Q, q P + (1 - q) Q)`` is its mirror."""
    q, base = mpf(rate), rr(categories, epsilon)
    out = {}
    for (c,), (p_mass, q_mass) in base.atoms.items():
        key = (1, 0) if c == 1 else (0, 1) if c == -1 else (0, 0)
        out[key] = (q * p_mass + (1 - q) * q_mass, q_mass)
    # at q = 1 the pair is randomized response itself: its losses ±ε0 exactly (the log of the 60-digit
    # masses' ratio is off by 1e-60, which put δ at the float top loss 6 ε0 of six runs at 9.7e-63, not 0)
    bases = (mpf(epsilon), -mpf(epsilon)) if q == 1 else \
        tuple(MP.log(out[key][0] / out[key][1]) for key in ((1, 0), (0, 1)))
    return Pair(bases, out)


def power_by_counts(pair: Pair, k: int) -> Pair:
    """``pair ** k`` by enumerating the vectors of counts of its atoms (multinomial coefficients as
    integers, powers of the masses tabulated): O(atoms) instead of the products' O(atoms²), for k in the
    thousands. Needs ``p_inf = q_ninf = 0``."""
    if pair.p_inf or pair.q_ninf:
        raise ValueError("power_by_counts: the pair has infinite losses")
    items = list(pair.atoms.items())
    pw = [([ONE] * (k + 1), [ONE] * (k + 1)) for _ in items]
    for (pp, pq), (_, (p, q)) in zip(pw, items, strict=True):
        for c in range(1, k + 1):
            pp[c], pq[c] = pp[c - 1] * p, pq[c - 1] * q
    out: dict = {}

    def rec(i: int, left: int, coef: int, P, Q, key: tuple) -> None:
        if i == len(items) - 1:
            P, Q = coef * P * pw[i][0][left], coef * Q * pw[i][1][left]
            key = tuple(a + left * b for a, b in zip(key, items[i][0], strict=True))
            old = out.get(key)
            out[key] = (P, Q) if old is None else (old[0] + P, old[1] + Q)
            return
        for c in range(left + 1):
            rec(i + 1, left - c, coef * math.comb(left, c), P * pw[i][0][c], Q * pw[i][1][c],
                tuple(a + c * b for a, b in zip(key, items[i][0], strict=True)))

    rec(0, k, 1, ONE, ONE, (0,) * len(pair.bases))
    return Pair(pair.bases, out)


def rr_by_noise(noise: float, buckets: int) -> Pair:
    """k-ary randomized response given by its noise probability p (dp_accounting's
    ``RandomizedResponseDpEvent(p, k)``): the input is kept with probability ``1 - p + p/k``, each other
    bucket has ``p/k``; one base loss ``log(keep/other)`` at 60 digits (never through a float ε)."""
    p, k = mpf(noise), buckets
    keep, other = 1 - p + p / k, p / k
    atoms = {(1,): (keep, other), (-1,): (other, keep)}
    if k > 2:
        atoms[(0,)] = ((k - 2) * other, (k - 2) * other)
    return Pair((MP.log(keep / other),), atoms)


def discrete_laplace(a: float, sensitivity: int) -> Pair:
    """``Δ + Z`` against ``Z``, ``P(Z = z) = tanh(a/2) e^{-a|z|}``: loss ``a (2y - Δ)`` at output y
    clipped to ``±a Δ`` (integer keys ``2y - Δ`` over the base a); the tails ``y <= 0`` and ``y >= Δ`` as
    geometric sums in closed form."""
    a, d = mpf(a), sensitivity
    t = MP.tanh(a / 2)

    def pz(z):                                   # P(Z = z)
        return t * MP.exp(-a * abs(z))

    ge0 = 1 / (1 + MP.exp(-a))                    # P(Z >= 0) = P(Z <= 0)
    atoms = {(d,): (ge0, ge0 * MP.exp(-a * d)), (-d,): (ge0 * MP.exp(-a * d), ge0)}
    for y in range(1, d):
        atoms[(2 * y - d,)] = (pz(y - d), pz(y))
    return Pair((a,), atoms)


def dp(epsilon: float, delta: float) -> Pair:
    """The dominating pair of one (ε, δ) constraint (Kairouz, Oh and Viswanath 2017, Theorem 2.4)."""
    e, d = mpf(epsilon), mpf(delta)
    hi, lo = (1 - d) * MP.exp(e) / (1 + MP.exp(e)), (1 - d) / (1 + MP.exp(e))
    if epsilon == 0:
        return Pair((), {(): (1 - d, 1 - d)}, d, d)
    return Pair((e,), {(1,): (hi, lo), (-1,): (lo, hi)}, d, d)


def constraints(cons: Sequence[tuple[float, float]]) -> Pair:
    """The dominating pair of ``∩_i R(ε_i, δ_i)`` from the geometry of its trade-off function
    ``f(t) = max(0, max_i (1 - δ_i - e^{ε_i} t), max_i e^{-ε_i} (1 - δ_i - t))``: each edge of the
    polygon is an atom ``(q = Δt, p = e^L q)`` of its line's loss ``L = ±ε_i``."""
    lines = [(ZERO, ZERO, None)]                                 # (slope, intercept, (sign, i))
    for i, (e, d) in enumerate(cons):
        e, d = mpf(e), mpf(d)
        lines += [(-MP.exp(e), 1 - d, (1, i)), (-MP.exp(-e), MP.exp(-e) * (1 - d), (-1, i))]

    def f(t):
        return max(a * t + b for a, b, _ in lines)

    ts = {ZERO, ONE}
    for i, (a1, b1, _) in enumerate(lines):
        for a2, b2, _ in lines[i + 1:]:
            if a1 != a2:
                t = (b2 - b1) / (a1 - a2)
                if 0 < t < 1:
                    ts.add(t)
    ts = sorted(ts)
    values = {float(e) for e, _ in cons}
    bases = tuple(sorted(mpf(e) for e in values))
    atoms: dict = {}
    for a, b in zip(ts[:-1], ts[1:], strict=True):
        mid = (a + b) / 2
        slope, _, tag = max(lines, key=lambda line: line[0] * mid + line[1])
        if tag is None or f(a) - f(b) <= 0:
            continue
        sign, i = tag
        key = [0] * len(bases)
        key[bases.index(mpf(cons[i][0]))] = sign
        q = b - a
        p = -slope * q                                           # e^L q: the edge's drop
        old = atoms.get(tuple(key), (ZERO, ZERO))
        atoms[tuple(key)] = (old[0] + p, old[1] + q)
    p_inf = 1 - f(ZERO)
    return Pair(bases, atoms, p_inf, p_inf)


def table(p: Sequence[float], q: Sequence[float]) -> Pair:
    """The pair of two output distributions given as floats (taken as exact): one base loss
    ``log(p_j/q_j)`` per distinct ratio (equal ratios, decided with exact rationals, share a key)."""
    ratios: list[Fraction] = []
    atoms: dict = {}
    p_inf = q_ninf = ZERO
    for pj, qj in zip(p, q, strict=True):
        if pj == 0 and qj == 0:
            continue
        if qj == 0:
            p_inf += mpf(pj)
            continue
        if pj == 0:
            q_ninf += mpf(qj)
            continue
        r = Fraction(pj) / Fraction(qj)
        if r not in ratios:
            ratios.append(r)
        atoms.setdefault(ratios.index(r), []).append((mpf(pj), mpf(qj)))
    bases, out = [], {}
    for i, r in enumerate(ratios):
        bases.append(MP.log(mpf(r)))
        key = tuple(1 if j == i else 0 for j in range(len(ratios)))
        out[key] = (MP.fsum(a for a, _ in atoms[i]), MP.fsum(b for _, b in atoms[i]))
    return Pair(bases, out, p_inf, q_ninf)


# ---------------------------------------------------------------------------------------------------
# Closed forms: binomial sums over the window that carries mass
class Binomial:
    """k-fold composition of (ε0, δ0)-DP (δ0 = 0: binary randomized response): ``1 - (1-δ0)^k +
    (1-δ0)^k Σ_a C(k,a) p^a q^{k-a} (1 - e^{ε - (2a-k) ε0})_+`` with ``p = e^{ε0}/(1+e^{ε0})``
    (Kairouz, Oh and Viswanath 2017, Theorem 3.4). The binomial masses are built by the ratio recurrence
    outward from the mode and dropped below 1e-80 of it (their share of any δ the suite can see)."""

    def __init__(self, eps0: float, delta0: float, k: int) -> None:
        self.eps0, self.k = mpf(eps0), k
        e = self.eps0
        log_p, log_q = e - MP.log1p(MP.exp(e)), -MP.log1p(MP.exp(e))
        mode = min(k, max(0, int(MP.floor((k + 1) * MP.exp(log_p)))))
        log_c = MP.loggamma(k + 1) - MP.loggamma(mode + 1) - MP.loggamma(k - mode + 1)
        t_mode = MP.exp(log_c + mode * log_p + (k - mode) * log_q)
        ratio_pq = MP.exp(log_p - log_q)
        # Upward (the tail every small δ lives in) down to an absolute 1e-340: the rest, decreasing
        # geometrically, is below any difference the comparisons can see. Downward (losses below the
        # mode's, only in δ(ε) for ε below it, where δ is at least ~1e-3 of the mode's mass) to 1e-80
        # of the mode.
        cut_up, cut = MP.mpf(10) ** -340, t_mode * MP.mpf(10) ** -80
        terms = {mode: t_mode}
        t, a = t_mode, mode
        while a < k:                                           # upward: t_{a+1} = t_a (k-a)/(a+1) p/q
            t = t * (k - a) / (a + 1) * ratio_pq
            a += 1
            terms[a] = t
            if t < cut_up and (k - a) * ratio_pq < a + 1:
                break
        t, a = t_mode, mode
        while a > 0:
            t = t * a / (k - a + 1) / ratio_pq
            a -= 1
            terms[a] = t
            if t < cut:
                break
        if len(terms) > 2 * MAX_ATOMS:
            raise ValueError("binomial window too large")
        self.lo = min(terms)
        rows = sorted(terms.items())
        self.counts = [a for a, _ in rows]
        # suffix sums of P = t_a and Q = t_a e^{-(2a-k) ε0}
        n = len(rows)
        self.sp, self.sq = [ZERO] * (n + 1), [ZERO] * (n + 1)
        step = MP.exp(-2 * e)
        qa = rows[-1][1] * MP.exp(-(2 * rows[-1][0] - k) * e) if rows else ZERO
        for i in range(n - 1, -1, -1):                         # Q-mass t_a e^{-(2a-k) ε0}, downward
            a, t = rows[i]
            if i < n - 1 and (n - 1 - i) % 256 == 0:        # exact now and then: no drift
                qa = t * MP.exp(-(2 * a - k) * e)
            elif i < n - 1:
                qa = qa * (t / rows[i + 1][1]) / step
            self.sp[i] = self.sp[i + 1] + t
            self.sq[i] = self.sq[i + 1] + qa
        d = mpf(delta0)
        self.keep = (1 - d) ** k
        self.delta0 = delta0

    def delta(self, eps) -> mpmath.mpf:
        em = mpf(eps)
        # first count a with (2a - k) ε0 > ε
        if em >= self.k * self.eps0:
            a0 = self.k + 1
        else:
            a0 = min(self.k + 1, max(0, int(MP.floor((em / self.eps0 + self.k) / 2)) + 1))
        while a0 > 0 and (2 * (a0 - 1) - self.k) * self.eps0 > em:
            a0 -= 1
        while a0 <= self.k and (2 * a0 - self.k) * self.eps0 <= em:
            a0 += 1
        i = bisect.bisect_left(self.counts, a0)
        pure = max(ZERO, self.sp[i] - MP.exp(em) * self.sq[i])
        return (1 - self.keep) + self.keep * pure

    def top_loss(self) -> mpmath.mpf:
        return MP.inf if self.delta0 > 0 else self.k * self.eps0


class RRPower:
    """k-fold K-ary randomized response, K > 2: with probability ``w = (K-2)/(e^{ε0} + K - 1)`` a run
    reveals nothing (loss 0), otherwise it is binary randomized response with ε0, so
    ``δ(ε) = Σ_j C(k, j) w^j (1-w)^{k-j} δ_{RR2, k-j}(ε)`` (O(k^2) terms: keep k small)."""

    def __init__(self, categories: int, eps0: float, k: int) -> None:
        e = mpf(eps0)
        w = (categories - 2) / (MP.exp(e) + categories - 1)
        self.k, self.eps0 = k, e
        self.parts = [(MP.binomial(k, j) * w ** j * (1 - w) ** (k - j), Binomial(eps0, 0.0, k - j)
                       if k - j else None) for j in range(k + 1)]

    def delta(self, eps) -> mpmath.mpf:
        return MP.fsum(c * b.delta(eps) for c, b in self.parts if b is not None)

    def top_loss(self) -> mpmath.mpf:
        return self.k * self.eps0


# ---------------------------------------------------------------------------------------------------
# Continuous parts
def gaussian_delta(mu, eps) -> mpmath.mpf:
    """``δ_{G_μ}(t) = Φ(-t/μ + μ/2) - e^t Φ(-t/μ - μ/2)`` for any real t (Dong, Roth and Su 2022,
    Corollary 2.13), at 100 digits (the two terms cancel in the deep tail)."""
    with MP.workdps(110):
        m, t = mpf(mu), mpf(eps)
        return +(MP.ncdf(-t / m + m / 2) - MP.exp(t) * MP.ncdf(-t / m - m / 2))


def laplace_g1(a, t) -> mpmath.mpf:
    """``E_P[(1 - e^{t - L})_+]`` for one Laplace run with ``a = 1/b`` (closed form, any real t)."""
    a, t = mpf(a), mpf(t)
    out = ZERO
    if t < a:                                                   # atom +a, mass 1/2
        out += -MP.expm1(t - a) / 2
    if t < -a:                                                  # atom -a, mass e^{-a}/2
        out += MP.exp(-a) * -MP.expm1(t + a) / 2
    lo = max(-a, t)
    if lo < a:   # ∫_lo^a e^{l/2 - a/2}/4 (1 - e^{t-l}) dl
        out += MP.exp(-a / 2) / 2 * (MP.exp(a / 2) - MP.exp(lo / 2))
        out -= MP.exp(t - a / 2) / 2 * (MP.exp(-lo / 2) - MP.exp(-a / 2))
    return out


def laplace2_delta(a, t) -> mpmath.mpf:
    """``E_P[(1 - e^{t - L1 - L2})_+]`` for two Laplace runs, in closed form at 120 digits.

    One run's ``g1(s) = E_P[(1 - e^{s - L})_+]`` is ``1 - e^s`` for ``s < -a``, ``1 - e^{(s - a)/2}`` on
    ``[-a, a)`` and 0 above (:func:`laplace_g1` piece by piece), so conditioning on the first run (atoms
    ``±a``, density ``e^{x/2 - a/2}/4`` on ``(-a, a)``) leaves integrals of ``e^{±x/2}`` and constants:
    ``∫_{x > t+a} e^{x/2 - a/2}/4 (1 - e^{t-x}) dx`` and ``∫_{t-a < x < t+a} e^{x/2 - a/2}/4
    (1 - e^{(t-x-a)/2}) dx`` over ``(-a, a)``. tests/test_reference.py checks it against quadrature and
    Monte Carlo."""
    with MP.workdps(120):
        a, t = mpf(a), mpf(t)
        out = laplace_g1(a, t - a) / 2 + MP.exp(-a) * laplace_g1(a, t + a) / 2
        integral = ZERO
        u, v = max(-a, t + a), a                    # t - x < -a: g1 = 1 - e^{t-x}
        if u < v:
            integral += 2 * (MP.exp(v / 2) - MP.exp(u / 2)) \
                + 2 * MP.exp(t) * (MP.exp(-v / 2) - MP.exp(-u / 2))
        u, v = max(-a, t - a), min(a, t + a)        # -a <= t - x < a: g1 = 1 - e^{(t-x-a)/2}
        if u < v:
            integral += 2 * (MP.exp(v / 2) - MP.exp(u / 2)) - MP.exp((t - a) / 2) * (v - u)
        return +(out + MP.exp(-a / 2) / 4 * integral)


class SubsampledGaussian:
    """One step of the Gaussian mechanism (noise σ, sensitivity 1) on a Poisson subsample at rate q:
    the removal pair ``(q N(1, σ²) + (1-q) N(0, σ²), N(0, σ²))`` or (``addition=True``) the reversed one
    (Zhu, Dong and Wang 2022, Section 5). The loss ``log(q e^{(2x-1)/(2σ²)} + 1 - q)`` is increasing in
    x, so δ is two normal tails at the x where the loss crosses ε, in closed form at 110 digits:
    removal ``q Φ̄((x*-1)/σ) + (1-q) Φ̄(x*/σ) - e^ε Φ̄(x*/σ)`` with ``x* = σ² log((e^ε - 1 + q)/q) + 1/2``
    (``1 - e^ε`` when ``e^ε <= 1 - q``); addition ``Φ(x_a/σ) - e^ε (q Φ((x_a-1)/σ) + (1-q) Φ(x_a/σ))``
    with ``e^{-ε}`` in place of ``e^ε`` in ``x_a`` (0 when ``e^{-ε} <= 1 - q``)."""

    def __init__(self, sigma: float, rate: float, *, addition: bool = False) -> None:
        self.sigma, self.q, self.addition = mpf(sigma), mpf(rate), addition

    def delta(self, eps) -> mpmath.mpf:
        with MP.workdps(110):
            e, s, q = mpf(eps), self.sigma, self.q
            if not self.addition:
                if MP.exp(e) <= 1 - q:
                    return +(-MP.expm1(e))
                x = s * s * MP.log((MP.exp(e) - 1 + q) / q) + MP.mpf(1) / 2
                out = q * MP.ncdf((1 - x) / s) + (1 - q) * MP.ncdf(-x / s) - MP.exp(e) * MP.ncdf(-x / s)
            else:
                if MP.exp(-e) <= 1 - q:
                    return ZERO
                x = s * s * MP.log((MP.exp(-e) - 1 + q) / q) + MP.mpf(1) / 2
                out = MP.ncdf(x / s) - MP.exp(e) * (q * MP.ncdf((x - 1) / s) + (1 - q) * MP.ncdf(x / s))
            return +max(ZERO, out)

    def top_loss(self) -> mpmath.mpf:
        return MP.inf


class Mixed:
    """A finite pair composed with continuous parts: ``G_μ`` (``mu``) or ``n_lap`` Laplace runs of
    scale ``1/a`` (``n_lap`` <= 2), never both. ``δ(ε) = p_∞ + Σ_a P_a g(ε - L_a)``."""

    def __init__(self, pair: Pair, *, mu: float = 0.0, lap_a: float = 0.0, n_lap: int = 0) -> None:
        self.pair, self.mu, self.lap_a, self.n_lap = pair, mu, lap_a, n_lap

    def _g(self, t):
        if self.mu > 0:
            return gaussian_delta(self.mu, t)
        if self.n_lap == 1:
            return laplace_g1(self.lap_a, t)
        if self.n_lap == 2:
            return laplace2_delta(self.lap_a, t)
        return max(ZERO, -MP.expm1(t)) if t < 0 else ZERO

    def delta(self, eps) -> mpmath.mpf:
        e = mpf(eps)
        return self.pair.p_inf + MP.fsum(p * self._g(e - L) for L, p in self.pair.masses_p())

    def top_loss(self) -> mpmath.mpf:
        if self.mu > 0:
            return MP.inf
        return self.pair.top_loss() + self.n_lap * mpf(self.lap_a)


class Worst:
    """The larger δ of several profiles (a pair and its mirror: both orders of the neighbours)."""

    def __init__(self, *profiles) -> None:
        self.profiles = profiles

    def delta(self, eps) -> mpmath.mpf:
        return max(p.delta(eps) for p in self.profiles)

    def top_loss(self) -> mpmath.mpf:
        return max(p.top_loss() for p in self.profiles)


# ---------------------------------------------------------------------------------------------------
# Comparisons: no tolerance on the unsafe side
def _m(x) -> mpmath.mpf:
    return MP.mpf(float(x)) if not isinstance(x, mpmath.mpf) else x


def unsafe_upper(value, ref) -> bool:
    """A δ that claims more privacy than the truth: ``value < ref`` beyond the reference's error."""
    v, r = _m(value), _m(ref)
    return r - v > REF_RTOL * abs(r) + UNDERFLOW


def unsafe_lower(value, ref) -> bool:
    """An attack bound above the truth."""
    v, r = _m(value), _m(ref)
    return v - r > REF_RTOL * abs(r) + UNDERFLOW


def unsafe_epsilon_upper(profile, eps_value, target: float) -> tuple[bool, float]:
    """Is the true δ at the reported guarantee ε above ``target``? Returns ``(unsafe, true δ)``;
    relative to the target (no absolute floor: targets go down to 1e-300)."""
    e = float(eps_value)
    if math.isinf(e) and e > 0:
        return False, 0.0
    if math.isnan(e):
        return True, math.nan
    d = profile.delta(max(e, 0.0))
    return bool(d - mpf(target) > REF_RTOL * mpf(target)) and d > 1e-320, float(d)


def unsafe_epsilon_lower(profile, eps_value, target: float) -> tuple[bool, float]:
    """Is the reported attack ε above the true ``ε(target) = inf{ε: δ(ε) <= target}``? For a target
    > 0, δ is continuous, so the attack ε is too large exactly when the true δ there is already below
    the target; for target 0 the true ε is the largest loss. Returns ``(unsafe, true δ or top loss)``."""
    e = float(eps_value)
    if math.isnan(e):
        return True, math.nan
    e = min(e, 1e300)                  # an attack ε = inf claims δ(ε) > target at every finite ε
    if e <= 0:
        return False, 1.0
    if target == 0:
        top = profile.top_loss()
        return bool(_m(e) > top * (1 + REF_RTOL)), float(top)
    d = profile.delta(e)
    return bool(mpf(target) - d > REF_RTOL * mpf(target)), float(d)


def fractions_sum_to_one(values: Iterable[float]) -> bool:
    """Whether floats sum to exactly 1 (as rationals)."""
    return sum(Fraction(v) for v in values) == 1

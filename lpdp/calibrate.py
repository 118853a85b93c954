"""Calibration: the noise, count, rate or ε0 that meets a target (ε, δ), certified at the answer.

Every question here has one free parameter ``v`` and a target ``(ε, δ)``. The answer is a
:class:`Calibration`:

* ``value``: the best value whose **certified** guarantee meets the target, i.e. the accountant's upper
  side has ``δ(ε) <= δ (1 - 1e-9)`` (:data:`MARGIN`) and ``ε(δ) <= ε`` at ``value`` (the smallest noise,
  or the largest count, rate, ε0 or budget, up to the tolerance);
* ``guarantee``: the :class:`~lpdp.accountant.Guarantee` at ``value`` (the certificate);
* ``optimum``: ``(low, high)``, a bracket on the exact optimum. One end is ``value`` itself; the other is
  a value where the accountant's *lower* side (an attack bound) has ``δ(ε) > δ``, so the target is
  certainly missed there. The exact optimum lies in between because the true δ is monotone in every
  free parameter: more noise is a post-processing (Gaussian noise adds; Laplace noise of a larger scale
  is a smaller one plus an independent mixture of 0 and a Laplace), a smaller ε0 of a pure or
  randomized-response mechanism is implied by a larger one, one more composed mechanism can only add
  privacy loss, and a Poisson sampling rate enters the trade-off function as ``q f + (1 - q) Id``,
  pointwise decreasing in ``q`` (Dong, Roth and Su, 2022, Section 4).

The search itself does not assume that the *certified* side is monotone (a lattice engine's grid moves
with the parameter): every evaluation is recorded, and when one on the safe side of ``value`` misses the
target, or the certified δ goes up on the way to the safe side, ``monotone`` is ``False`` and ``notes``
say so; ``value`` is certified by its own evaluation either way.

Counts are exact: ``value`` fits and ``value + 1`` does not (both evaluated); ``optimum`` is
``(value, value)`` when the lower side misses at ``value + 1`` (every exact route). Continuous values are
found to the relative tolerance ``rtol`` (default ``1e-4``) by bisection in ``log v``. A workload of
Gaussians only is solved on its closed form (``G_μ`` with ``μ² = Σ k_i Δ_i²/σ_i²``, Dong, Roth and Su,
2022, Corollary 3.3): the largest ``μ`` meeting the target is the root of the Balle–Wang profile (Balle
and Wang, 2018, Theorem 8), each trial value costs one square root, and the answer is then certified by
the accountant, to about ``1e-12``.

Entry points: :func:`search` (any builder of a workload from one number), :func:`calibrate` (a workload
whose free value is the string ``"?"``), :func:`noise_factor` (one factor on every noise scale),
:func:`split` (a budget shared by two mechanisms by a weight) and :func:`how_many_more` (the largest count
of one mechanism next to a fixed workload).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from lpdp._search import boundary, largest
from lpdp._validate import check_delta, check_epsilon, check_int, check_probability
from lpdp.accountant import Guarantee, route
from lpdp.display import format_lower, format_upper
from lpdp.errors import ParameterError
from lpdp.mechanisms import Mechanism
from lpdp.tradeoff import MAX_MU, composed_mu, gaussian_delta
from lpdp.workload import parse

__all__ = ["Calibration", "FREE", "FREE_VALUE", "search", "calibrate", "noise_factor", "split",
           "how_many_more", "free_parameter"]

Parts = list[tuple[Mechanism, int]]
#: Which side of a parameter is the private one: ``"larger"`` for noise, ``"smaller"`` for the rest.
Safer = Literal["larger", "smaller"]

#: The value that marks the free parameter in a workload table or an inline option.
FREE_VALUE = "?"
#: Default relative tolerance of a continuous answer.
RTOL = 1e-4
#: Default largest count searched.
MAX_COUNT = 1_000_000
#: ε-width (at δ = 1e-5) of the certified engine in the first, coarse search of a continuous parameter,
#: and that search's relative tolerance (:func:`search`).
COARSE_TOLERANCE, COARSE_RTOL = 0.05, 1e-3
#: An answer must meet ``δ(ε) <= δ (1 - MARGIN)`` on the certified side, so that it never rests on the
#: last bits of a float (the Gaussian closed form is evaluated in double precision without an error bound;
#: its relative error is about 1e-16 times the size of its log-masses over the gap ``1 - δ/Φ(a)``).
MARGIN = 1e-9


@dataclass(frozen=True)
class Free:
    """What a free parameter is: which side is private, whether it is a count, its default range."""

    safer: Safer
    integer: bool
    low: float
    high: float
    doc: str


_NOISE = Free("larger", False, 1e-6, 1e9, "noise scale (larger is more private)")
_EPS0 = Free("smaller", False, 1e-9, 100.0, "epsilon0 of one run (smaller is more private)")
_COUNT = Free("smaller", True, 0, MAX_COUNT, "how many times it runs (exact)")
_RATE = Free("smaller", False, 1e-9, 1.0, "Poisson sampling rate (smaller is more private)")
_STEPS = Free("smaller", True, 1, MAX_COUNT, "DP-SGD steps (exact)")

#: The parameters that may be free, per workload kind (``times`` in every kind).
FREE: dict[str, dict[str, Free]] = {
    "gaussian": {"sigma": _NOISE},
    "laplace": {"scale": _NOISE},
    "pure": {"epsilon": _EPS0},
    "randomized_response": {"epsilon": _EPS0},
    # DP-SGD and subsampled mechanisms (lpdp.sgd, lpdp.mechanisms.subsampled): a smaller Poisson rate is a
    # post-processing of a larger one (each sampled record dropped again with probability 1 - q'/q)
    "dpsgd": {"noise_multiplier": _NOISE, "sampling_rate": _RATE, "steps": _STEPS},
    "subsampled": {"rate": _RATE},
}


@dataclass(frozen=True)
class _Eval:
    value: float
    guarantee: Guarantee
    upper: float      # certified δ(ε) at the target ε
    lower: float      # attack bound on δ(ε)
    fits: bool        # upper δ(ε) <= δ
    missed: bool      # lower δ(ε) > δ: the target is certainly missed


@dataclass(frozen=True)
class Calibration:
    """The answer of a calibration: a certified value, its certificate and a bracket on the optimum.

    Attributes
    ----------
    parameter : str
        The free parameter (e.g. ``"mechanism[0].sigma"``, ``"noise_factor"``).
    value : float or int
        The best value whose certified guarantee meets the target.
    optimum : (float, float)
        ``(low, high)``: the exact optimum lies in it; one end is ``value``, the other an attack bound.
    guarantee : Guarantee
        The certificate: the accountant's guarantee at ``value``.
    epsilon : float
        The certified ε at ``value`` for the target δ (at most the target ε when ``meets_target``).
    target : (float, float)
        The target ``(ε, δ)``.
    safer : {"larger", "smaller"}
        Which side of ``value`` is more private.
    integer : bool
        Whether the parameter is a count (then the answer is exact: ``value + 1`` was checked).
    meets_target : bool
        ``False`` only for a count whose fixed part already exceeds the target ("0 more fit").
    monotone : bool
        Whether every certified evaluation was monotone in the parameter.
    evaluations : int
        Accountant evaluations spent.
    notes : tuple of str
        What a reader should know (range ends reached, non-monotone certified side).
    workload : list of (Mechanism, int)
        The workload at ``value``.

    Examples
    --------
    >>> from lpdp.calibrate import calibrate
    >>> c = calibrate({"mechanism": [{"kind": "gaussian", "sigma": "?", "times": 1000}]}, 2.0, 1e-6)
    >>> round(c.value, 5), c.epsilon <= 2.0
    (70.53385, True)
    """

    parameter: str
    value: float
    optimum: tuple[float, float]
    guarantee: Guarantee
    epsilon: float
    target: tuple[float, float]
    safer: Safer
    integer: bool
    meets_target: bool = True
    monotone: bool = True
    evaluations: int = 0
    notes: tuple[str, ...] = ()
    workload: Parts = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """Plain data (what ``lpdp calibrate --json`` prints, without ``lpdp_version``)."""
        lo, hi = self.guarantee.delta(self.target[0])
        return {
            "parameter": self.parameter,
            "value": self.value,
            "optimum": list(self.optimum),
            "epsilon": self.epsilon,
            "delta": hi,
            "delta_lower": lo,
            "target": {"epsilon": self.target[0], "delta": self.target[1]},
            "meets_target": self.meets_target,
            "exact_optimum": self.optimum[0] == self.optimum[1],
            "monotone": self.monotone,
            "route": self.guarantee.route,
            "evaluations": self.evaluations,
            "notes": list(self.notes),
            "workload": [{**m.to_dict(), "times": k} for m, k in self.workload],
        }

    def summary(self) -> list[str]:
        """Readable lines: the value rounded toward the private side, ε and δ of the certificate up."""
        def safe(x: float) -> str:
            if self.integer:
                return str(int(x)) if math.isfinite(x) else str(x)
            return format_upper(x, 10) if self.safer == "larger" else format_lower(x, 10)

        e, d = self.target
        lo, hi = self.optimum
        side = "smallest" if self.safer == "larger" else "largest"
        lines = [f"{self.parameter} = {safe(self.value)} ({side} certified value for target "
                 f"epsilon={e:g}, delta={d:g})"]
        if not self.meets_target:
            lines[0] = (f"{self.parameter} = {safe(self.value)}: 0 more fit (the rest of the workload "
                        f"already exceeds the target)")
        lines.append(f"{'certificate' if self.meets_target else 'the rest alone'}: epsilon = "
                     f"{format_upper(self.epsilon)} at delta = {d:g}; delta = "
                     f"{format_upper(float(self.guarantee.delta(e)[1]))} at epsilon = {e:g} "
                     f"(route: {self.guarantee.route})")
        if not self.meets_target:
            pass
        elif lo == hi:
            lines.append(f"exact optimum: {safe(lo)}")
        else:
            lines.append(f"exact optimum in [{format_lower(lo, 10)}, {format_upper(hi, 10)}]")
        lines += [f"note: {n}" for n in self.notes if self.meets_target]
        return lines


class _Probe:
    """Evaluate the workload at a value, once per value; keep every evaluation for the monotonicity check."""

    def __init__(self, build: Callable[[float], Parts], epsilon: float, delta: float, parameter: str,
                 route_kw: Mapping[str, Any]) -> None:
        self.build, self.epsilon, self.delta, self.parameter = build, epsilon, delta, parameter
        self.route_kw = dict(route_kw)
        self.seen: dict[float, _Eval] = {}

    def __call__(self, v: float) -> _Eval:
        if v not in self.seen:
            try:
                g = route(self.build(v), **self.route_kw)
            except ParameterError as exc:
                raise ParameterError(f"{self.parameter}={v:.10g}: {exc}") from None
            lo, hi = (float(x) for x in g.delta(self.epsilon))
            self.seen[v] = _Eval(v, g, hi, lo, hi <= self.delta * (1 - MARGIN), lo > self.delta)
        return self.seen[v]

    def score_upper(self, v: float) -> float:
        """``log`` of the certified δ over the target: negative where ``v`` fits (places probes only)."""
        up = self(v).upper
        return math.log(up) - math.log(self.delta * (1 - MARGIN)) if up > 0 and self.delta > 0 else math.nan

    def score_lower(self, v: float) -> float:
        """``log`` of the attack bound over the target: positive where the target is certainly missed."""
        lo = self(v).lower
        return math.log(lo) - math.log(self.delta) if lo > 0 and self.delta > 0 else math.nan

    def certified(self, v: float) -> bool:
        """Whether ``v`` fits on both readings of the certificate: ``δ(ε) <= δ`` and ``ε(δ) <= ε``."""
        e = self(v)
        return e.fits and float(e.guarantee.epsilon(self.delta)[1]) <= self.epsilon


def _order(safer: Safer) -> Callable[[float], float]:
    """A key that grows toward the private side."""
    return (lambda v: v) if safer == "larger" else (lambda v: -v)


def _monotone_notes(probe: _Probe, value: float, safer: Safer) -> list[str]:
    """Check the recorded evaluations: toward the private side, fits never turns off and δ never grows."""
    key = _order(safer)
    evals = sorted(probe.seen.values(), key=lambda e: key(e.value))
    notes = []
    bad_fit = [e.value for e in evals if key(e.value) > key(value) and not e.fits]
    if bad_fit:
        notes.append(f"the certified side is not monotone in {probe.parameter}: {bad_fit[0]:.10g}, on the "
                     f"private side of the answer, does not meet the target (lattice effects); the answer "
                     f"is certified by its own evaluation")
    for a, b in zip(evals, evals[1:], strict=False):
        if b.upper > a.upper * (1 + 1e-9) + 1e-300:
            notes.append(f"the certified delta is not monotone in {probe.parameter}: {b.upper:.6g} at "
                         f"{b.value:.10g} against {a.upper:.6g} at {a.value:.10g}")
            break
    return notes


def _unreachable(probe: _Probe, end: float, low: float, high: float) -> ParameterError:
    e = probe(end)
    return ParameterError(
        f"{probe.parameter}: the target (epsilon={probe.epsilon:g}, delta={probe.delta:g}) is not met "
        f"anywhere in the range tried [{low:.10g}, {high:.10g}] (at {end:.10g} the certified delta is "
        f"{e.upper:.6g}); widen the range with min/max or relax the target")


def _continuous(probe: _Probe, safer: Safer, low: float, high: float, rtol: float,
                fast: Callable[[float], bool] | None, start: tuple[float, float] | None = None
                ) -> tuple[float, float, list[str]]:
    """``(value, attack end, notes)`` of a continuous parameter in ``[low, high]``; ``start``, optional, is
    a ``(bad, ok)`` guess of the bracket (checked here: a wrong guess costs evaluations, not correctness)."""
    safe_end, unsafe_end = (high, low) if safer == "larger" else (low, high)
    toward_safe = 4.0 if safer == "larger" else 0.25
    notes: list[str] = []

    def clamp(v: float) -> float:
        return min(max(v, low), high)

    fits = fast if fast is not None else (lambda v: probe(v).fits)
    v = clamp(math.sqrt(low * high) if math.isfinite(high) else max(low, 1.0))
    if start is not None and not fits(start[0]) and fits(start[1]):
        bad, ok = start
    elif fits(v):
        ok = v
        while True:
            if ok == unsafe_end:
                notes.append(f"every value in the range meets the target; the optimum is at or beyond "
                             f"{unsafe_end:.10g} (widen the range with min/max)")
                return _certify(probe, ok, None, safer, rtol, low, high, notes)
            nxt = clamp(ok / toward_safe)
            if not fits(nxt):
                bad = nxt
                break
            ok = nxt
    else:
        bad = v
        while True:
            if bad == safe_end:
                raise _unreachable(probe, safe_end, low, high)
            nxt = clamp(bad * toward_safe)
            if fits(nxt):
                ok = nxt
                break
            bad = nxt
    if fast is not None:        # the closed form costs nothing per probe: bisect to 1e-13
        bad, ok = boundary(fast, bad, ok, 1e-13)
    else:
        bad, ok = boundary(fits, bad, ok, rtol, score=probe.score_upper)
    return _certify(probe, ok, bad, safer, rtol, low, high, notes)


def _certify(probe: _Probe, ok: float, bad: float | None, safer: Safer, rtol: float, low: float,
             high: float, notes: list[str]) -> tuple[float, float, list[str]]:
    """Make sure ``ok`` fits on the accountant (step toward the private side if a closed-form search
    landed a rounding error short), then bracket the optimum from the attack side."""
    grow = (lambda v, s: v * (1 + s)) if safer == "larger" else (lambda v, s: v / (1 + s))
    step = 1e-13
    while not probe.certified(ok):
        nxt = min(max(grow(ok, step), low), high)
        if nxt == ok:
            raise _unreachable(probe, ok, low, high)
        ok, step = nxt, step * 4
        if step > rtol:
            raise ParameterError(f"{probe.parameter}: the closed-form answer {ok:.10g} does not certify "
                                 f"(please report it)")
    # The attack side: the value closest to ok where the lower side certainly misses the target.
    key = _order(safer)
    missed = [e.value for e in probe.seen.values() if e.missed and key(e.value) < key(ok)]
    unsafe_end = low if safer == "larger" else high
    if bad is not None and not missed:
        shrink = (lambda v, s: v / (1 + s)) if safer == "larger" else (lambda v, s: v * (1 + s))
        v, step = bad, 1e-13
        while not probe(v).missed and v != unsafe_end and step < 1.0:
            v, step = min(max(shrink(v, step), low), high), step * 4
        if probe(v).missed:
            missed.append(v)
    if not missed:
        att = unsafe_end if probe(unsafe_end).missed else (0.0 if safer == "larger" else math.inf)
        if not math.isfinite(att) or att == 0.0:
            notes.append("no value in the range is certainly too weak; the optimum is only bounded by the "
                         "answer")
        return ok, att, notes
    att = max(missed, key=key)
    near = [e.value for e in probe.seen.values() if not e.missed and key(e.value) > key(att)]
    other = min(near, key=key) if near else ok
    att, _ = boundary(lambda v: not probe(v).missed, att, other, rtol, score=probe.score_lower)
    return ok, att, notes


def search(build: Callable[[float], Parts], epsilon: float, delta: float, *, parameter: str = "value",
           safer: Safer = "larger", integer: bool = False, low: float | None = None,
           high: float | None = None, rtol: float = RTOL, method: str = "lattice") -> Calibration:
    """The best value of one free parameter whose certified guarantee meets ``(epsilon, delta)``.

    Parameters
    ----------
    build : callable
        ``build(v)`` returns the workload at ``v``: a list of ``(Mechanism, times)`` pairs (a count ``v``
        is passed as an ``int``).
    epsilon, delta : float
        The target: the answer's certified guarantee has ``δ(epsilon) <= delta`` and
        ``ε(delta) <= epsilon``.
    parameter : str
        The parameter's name, for messages and the answer.
    safer : {"larger", "smaller"}
        Which side is more private: ``"larger"`` for a noise scale (the answer is the smallest value that
        fits), ``"smaller"`` for a count, rate or ε0 (the largest value that fits).
    integer : bool
        A count: the answer is exact (the largest count that fits, ``value + 1`` checked).
    low, high : float, optional
        The search range (defaults: ``[1e-6, 1e9]`` for a continuous value, ``[0, 10^6]`` for a count).
    rtol : float
        Relative tolerance of a continuous answer (default ``1e-4``).
    method : str
        Passed to :func:`lpdp.accountant.route`.

    Returns
    -------
    Calibration

    Raises
    ------
    ParameterError
        The target is not met anywhere in the range (the message names the range), or a bad argument.

    Examples
    --------
    >>> from lpdp.calibrate import search
    >>> from lpdp.mechanisms import pure
    >>> c = search(lambda k: [(pure(0.125), k)], 1.0, 0.0, parameter="times", safer="smaller",
    ...            integer=True)
    >>> c.value, c.optimum
    (8, (8, 8))
    """
    eps, dlt = check_epsilon(epsilon, "epsilon"), check_delta(delta, "delta")
    if safer not in ("larger", "smaller"):
        raise ParameterError(f"safer={safer!r}: must be 'larger' or 'smaller'")
    rtol = check_probability(rtol, "rtol", open_left=True, open_right=True)
    probe = _Probe(build, eps, dlt, parameter, {} if method == "lattice" else {"method": method})
    if integer:
        lo = check_int(0 if low is None else low, f"{parameter} min", 0)
        hi = check_int(MAX_COUNT if high is None else high, f"{parameter} max", lo)
        return _count(probe, lo, hi)
    lo = _positive_end(1e-6 if low is None else low, f"{parameter} min")
    hi = _positive_end(1e9 if high is None else high, f"{parameter} max")
    if hi < lo:
        raise ParameterError(f"{parameter}: min={lo:g} is above max={hi:g}")
    fast = _gaussian_face(build, eps, dlt, lo, hi)
    start = None
    if fast is None:
        # A first search with a coarse certified engine (a few tenths of a second per value instead of
        # seconds) gives the bracket the default engine then narrows; an exact workload ignores the
        # tolerance, and its first search is the answer.
        coarse = _Probe(build, eps, dlt, parameter, {**probe.route_kw, "tolerance": COARSE_TOLERANCE})
        c_value, c_attack, _ = _continuous(coarse, safer, lo, hi, COARSE_RTOL, None)
        if all(e.guarantee.exact for e in coarse.seen.values()):
            probe = coarse
        elif 0.0 < c_attack < math.inf:
            start = (c_attack, c_value)
            # Its attack end is a fact on every engine (its certified lower side misses the target, so
            # the truth does): it needs no second evaluation.
            probe.seen[c_attack] = coarse.seen[c_attack]
    value, attack, notes = _continuous(probe, safer, lo, hi, rtol, fast, start)
    exact = probe(value).guarantee.exact
    for j in (1, 2, 4) if exact else (1, 4):  # steps toward the private side: lattice effects show here
        probe(min(max(value * (1 + j * rtol) if safer == "larger" else value / (1 + j * rtol), lo), hi))
    notes += _monotone_notes(probe, value, safer)
    optimum = (attack, value) if safer == "larger" else (value, attack)
    return _answer(probe, value, optimum, safer, False, notes)


def _positive_end(v: object, name: str) -> float:
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not (math.isfinite(v) and v > 0):
        raise ParameterError(f"{name}={v!r}: must be a finite number > 0")
    return float(v)


def _answer(probe: _Probe, value: float, optimum: tuple[float, float], safer: Safer, integer: bool,
            notes: list[str], meets: bool = True) -> Calibration:
    e = probe(value)
    return Calibration(
        parameter=probe.parameter, value=value, optimum=optimum, guarantee=e.guarantee,
        epsilon=float(e.guarantee.epsilon(probe.delta)[1]), target=(probe.epsilon, probe.delta),
        safer=safer, integer=integer, meets_target=meets,
        monotone=not any("not monotone" in n for n in notes), evaluations=len(probe.seen),
        notes=tuple(notes), workload=probe.build(value))


def _count(probe: _Probe, low: int, high: int) -> Calibration:
    notes: list[str] = []
    if not probe(low).fits:
        if low == 0:
            return _answer(probe, 0, (0, 0), "smaller", True,
                           ["the rest of the workload already exceeds the target: 0 more fit"], meets=False)
        raise _unreachable(probe, low, low, high)
    value, capped = largest(lambda k: probe(k).fits, high, start=low, score=probe.score_upper)
    while not probe.certified(value):       # ε(δ) read off the same profile; a float tie only
        if value == low:
            raise _unreachable(probe, low, low, high)
        value, capped = value - 1, False
    if capped:
        notes.append(f"every count up to max={high} meets the target; the optimum is at least {high} "
                     f"(raise max)")
        top: float = math.inf
    elif probe(value + 1).missed:
        top = value
    else:   # the lower side still fits somewhere above: find where it certainly misses
        reach = min(high, 2 * value + 16)      # the attack side may be trivial: do not search forever
        last, none_missed = largest(lambda k: not probe(k).missed, reach, start=value + 1)
        top = math.inf if none_missed else last
        if none_missed:
            notes.append(f"the attack side does not miss the target up to {reach}: the optimum is only "
                         f"bounded below")
    # An exact route is monotone in the count (one more mechanism only adds privacy loss); a certified
    # one is checked on both sides of the answer.
    certified_only = not probe(value).guarantee.exact
    if certified_only and value - 1 >= low:
        probe(value - 1)
    notes += _monotone_notes(probe, value, "smaller")
    if not capped and certified_only and value + 2 <= high and probe(value + 2).fits:
        notes.append(f"the certified side is not monotone in {probe.parameter}: {value + 2} meets the target "
                     f"again after {value + 1} does not (lattice effects); {value} is the largest count "
                     f"below the first miss")
    return _answer(probe, value, (value, top), "smaller", True, notes)


def _gaussian_face(build: Callable[[float], Parts], epsilon: float, delta: float, low: float,
                   high: float) -> Callable[[float], bool] | None:
    """For a workload of Gaussians only: ``v -> μ(v) <= μ*`` with ``μ*`` the largest μ of ``G_μ`` meeting
    the target (a root of the Balle-Wang profile), or ``None`` for any other workload."""
    from scipy.optimize import brentq

    def mu(v: float) -> float | None:
        parts = build(v)
        mus = [m.gaussian_mu() for m, _ in parts]
        if not parts or None in mus:
            return None
        return composed_mu((u, k) for u, (_, k) in zip(mus, parts, strict=True))

    try:
        probes = (mu(low), mu(high))
    except ParameterError:
        return None
    if probes[0] is None or probes[1] is None:
        return None

    def h(x: float) -> float:
        return float(gaussian_delta(epsilon, math.exp(x))) - delta * (1 - MARGIN)

    a, b = math.log(1e-300), math.log(MAX_MU)
    if h(a) > 0 or h(b) <= 0:
        return None         # no root: let the accountant's own evaluations say what fits
    mu_star = math.exp(brentq(h, a, b, xtol=1e-15, rtol=4 * 2.0 ** -52, maxiter=500))
    return lambda v: (mu(v) or 0.0) <= mu_star


# ----------------------------------------------------------------------------------- workloads with "?"
def free_parameter(data: Mapping[str, Any]) -> tuple[int, str, Free]:
    """Where the ``"?"`` of a workload is: ``(index of its table, key, what kind of parameter)``.

    Raises
    ------
    ParameterError
        No ``"?"``, two of them, or a ``"?"`` on a key its kind cannot calibrate.

    Examples
    --------
    >>> from lpdp.calibrate import free_parameter
    >>> i, key, free = free_parameter({"mechanism": [{"kind": "gaussian", "sigma": "?"}]})
    >>> i, key, free.safer
    (0, 'sigma', 'larger')
    """
    entries = data.get("mechanism") if isinstance(data, Mapping) else None
    if not isinstance(entries, list):
        raise ParameterError("workload: expected a non-empty list of [[mechanism]] tables")
    found = [(i, key) for i, e in enumerate(entries) if isinstance(e, Mapping)
             for key, v in e.items() if isinstance(v, str) and v.strip() == FREE_VALUE]
    if not found:
        raise ParameterError(f"no free parameter: write \"{FREE_VALUE}\" as the value to calibrate (e.g. "
                             f"sigma = \"{FREE_VALUE}\" or times = \"{FREE_VALUE}\")")
    if len(found) > 1:
        names = " and ".join(f"mechanism[{i}].{k}" for i, k in found[:2])
        raise ParameterError(f"two free parameters ({names}): calibrate one at a time")
    i, key = found[0]
    kind = entries[i].get("kind")
    options = {**FREE.get(kind, {}), "times": _COUNT}
    if key not in options:
        raise ParameterError(f"mechanism[{i}].{key} = \"{FREE_VALUE}\": kind {kind!r} has no free parameter "
                             f"named {key!r} (its free parameters: {', '.join(options)})")
    return i, key, options[key]


def calibrate(workload: Mapping[str, Any], epsilon: float, delta: float, *, rtol: float = RTOL,
              source: str = "workload") -> Calibration:
    """Calibrate a workload (plain data, as :func:`lpdp.workload.parse` takes) whose free value is ``"?"``.

    The table holding the ``"?"`` may set ``min`` and ``max``: the search range (defaults: ``[1e-6, 1e9]``
    for a noise scale, ``[1e-9, 100]`` for an ε0, ``[0, 10^6]`` for a count). Free parameters: ``sigma``
    (gaussian), ``scale`` (laplace), ``epsilon`` (pure, randomized_response) and ``times`` (every kind; a
    count is exact, and when the other tables already exceed the target the answer is 0 with
    ``meets_target`` false).

    Examples
    --------
    >>> from lpdp.calibrate import calibrate
    >>> w = {"mechanism": [{"kind": "pure", "epsilon": 0.3, "times": 4},
    ...                    {"kind": "pure", "epsilon": 0.1, "times": "?"}]}
    >>> c = calibrate(w, 2.0, 1e-6)
    >>> c.parameter, c.value, c.optimum
    ('mechanism[1].times', 8, (8, 8))
    """
    i, key, free = free_parameter(workload)
    entries = [dict(e) for e in workload["mechanism"]]
    bounds = {b: entries[i].pop(b) for b in ("min", "max") if b in entries[i]}
    for e in entries[:i] + entries[i + 1:]:
        for b in ("min", "max"):
            if b in e:
                raise ParameterError(f"{source}: key '{b}' belongs in the table with the free \"?\" value")
    rest = {k: v for k, v in workload.items() if k != "mechanism"}

    def build(v: float) -> Parts:
        entries[i][key] = int(v) if free.integer else float(v)
        return parse({**rest, "mechanism": entries}, source=source)

    return search(build, epsilon, delta, parameter=f"mechanism[{i}].{key}", safer=free.safer,
                  integer=free.integer, low=bounds.get("min", free.low), high=bounds.get("max", free.high),
                  rtol=rtol)


# ------------------------------------------------------------------------ several parameters together
def _scaled(m: Mechanism, factor: float) -> Mechanism:
    scaled = m.noise_scaled(factor)
    return m if scaled is None else scaled


def noise_factor(parts: Sequence[tuple[Mechanism, int]], epsilon: float, delta: float, *,
                 low: float = 1e-6, high: float = 1e9, rtol: float = RTOL) -> Calibration:
    """The smallest factor ``c`` such that multiplying every noise scale by ``c`` meets the target.

    Every Gaussian σ and Laplace scale of the workload is multiplied by ``c``; other mechanisms stay
    fixed. ``value`` is ``c``; the scaled workload is :attr:`Calibration.workload`.

    Examples
    --------
    >>> from lpdp.calibrate import noise_factor
    >>> from lpdp.mechanisms import GaussianMechanism
    >>> c = noise_factor([(GaussianMechanism(1.0), 500), (GaussianMechanism(2.0), 2000)], 2.0, 1e-6)
    >>> round(c.value, 4)        # 500/c² + 2000/(2c)² = 1000/c²: the factor is 1000 releases' σ
    70.5339
    """
    base = list(parts)
    if all(m.noise_scaled(1.0) is None for m, _ in base):
        raise ParameterError("noise_factor: the workload has no noise scale (no gaussian or laplace "
                             "mechanism) to scale")
    return search(lambda c: [(_scaled(m, c), k) for m, k in base], epsilon, delta, parameter="noise_factor",
                  safer="larger", low=low, high=high, rtol=rtol)


def _budget_unit(m: Mechanism) -> tuple[str, Callable[[float], Mechanism]]:
    """A mechanism's additive budget and how to rebuild it from a budget ``b``: ε0 for pure and Laplace
    (``Δ/scale``), ``μ² = (Δ/σ)²`` for a Gaussian (what composition adds)."""
    unit = m.additive_budget()
    if unit is not None:
        return unit
    raise ParameterError(f"split: {m!r} has no budget to split (gaussian, laplace or pure)")


def split(parts: Sequence[tuple[Mechanism, int]], first: int, second: int, weight: float, epsilon: float,
          delta: float, *, rtol: float = RTOL) -> Calibration:
    """The largest total budget ``b`` shared by two mechanisms of a workload, ``weight`` to the first.

    The mechanisms at indices ``first`` and ``second`` get budgets ``weight·b`` and ``(1 - weight)·b``
    in their additive unit (ε0 of a pure or Laplace mechanism, ``μ²`` of a Gaussian);
    the rest of the workload is fixed. ``value`` is ``b``; the calibrated mechanisms are in
    :attr:`Calibration.workload`.

    Examples
    --------
    >>> from lpdp.calibrate import split
    >>> from lpdp.mechanisms import pure
    >>> c = split([(pure(1.0), 10), (pure(1.0), 30)], 0, 1, 0.25, 4.0, 0.0)
    >>> [round(m.constraints[0][0], 4) for m, _ in c.workload]   # 10 (b/4) + 30 (3b/4) = 4: b = 0.16
    [0.04, 0.12]
    """
    base = list(parts)
    for name, i in (("first", first), ("second", second)):
        check_int(i, name, 0, len(base) - 1)
    if first == second:
        raise ParameterError(f"split: first={first} and second={second} must be two different mechanisms")
    w = check_probability(weight, "weight", open_left=True, open_right=True)
    (u1, make1), (u2, make2) = _budget_unit(base[first][0]), _budget_unit(base[second][0])

    def build(b: float) -> Parts:
        out = list(base)
        out[first] = (make1(w * b), base[first][1])
        out[second] = (make2((1 - w) * b), base[second][1])
        return out

    return search(build, epsilon, delta, parameter=f"budget ({u1} of [{first}] x {w:g}, {u2} of [{second}] "
                  f"x {1 - w:g})", safer="smaller", low=1e-9, high=1e6, rtol=rtol)


def how_many_more(parts: Sequence[tuple[Mechanism, int]], mechanism: Mechanism, epsilon: float,
                  delta: float, *, cap: int = MAX_COUNT) -> Calibration:
    """The largest count of ``mechanism`` that fits next to the fixed workload ``parts`` (exact).

    ``value`` is 0 with ``meets_target`` false when ``parts`` alone already exceeds the target.

    Examples
    --------
    >>> from lpdp.calibrate import how_many_more
    >>> from lpdp.mechanisms import pure
    >>> how_many_more([(pure(0.5), 2)], pure(0.25), 2.0, 0.0).value
    4
    """
    base = list(parts)
    return search(lambda k: [*base, (mechanism, int(k))], epsilon, delta, parameter="times",
                  safer="smaller", integer=True, high=cap)

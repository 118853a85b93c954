"""Realisation-level privacy filters: Algorithm 1 of Taylor, Vippathalla and Coon, lpdp's union-bound
filter, and Pan's naive filter (unsafe, for demonstrations).

Every filter keeps the realised privacy loss ``l^{(i)}(x, x')`` of each ordered neighbouring pair
(filter paper, Sec. II), asks before charging (:meth:`ask`), records the released output (:meth:`record`),
costs O(pairs) per step whatever the number of steps so far, and keeps a transcript that can be saved
and replayed.
"""

from __future__ import annotations

import json
import math
from abc import ABC, abstractmethod
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from lpdp._validate import check_delta, check_epsilon, check_int, check_probability, read_document
from lpdp._version import __version__
from lpdp.errors import BudgetExhaustedError, LpdpError, ParameterError
from lpdp.export import atomic_write
from lpdp.filters.params import check_budget
from lpdp.mechanisms import Mechanism, Request, Step, request_input, step_from_dict, step_to_dict

__all__ = [
    "Filter",
    "StoppingRule",
    "check_steps",
    "RealisationFilter",
    "UnionBoundFilter",
    "NaiveBayesianFilter",
    "LOSS_TIE_TOL",
    "within",
]

#: Realised losses within this (relative to ``max(1, |bound|)``) of a bound count as ties, which
#: continue (filter paper, Alg. 1: "a tie (=) continues"). Lattice losses such as ``3 ln 3 - ln 3 - ln 3``
#: against ``ln 3`` differ by rounding only; for continuous losses the extra continuation probability
#: is at most ``1e-10 × density`` per step.
LOSS_TIE_TOL = 1e-10


def within(loss: Any, bound: Any) -> Any:
    """``loss <= bound`` up to :data:`LOSS_TIE_TOL` (elementwise; infinite bounds compare exactly)."""
    if isinstance(loss, float) and isinstance(bound, float):  # the filter's per-step fast path
        if math.isfinite(bound):
            return loss <= bound + LOSS_TIE_TOL * max(1.0, abs(bound))
        return loss <= bound
    loss = np.asarray(loss, dtype=float)
    bound = np.asarray(bound, dtype=float)
    with np.errstate(invalid="ignore"):
        slack = np.where(np.isfinite(bound), LOSS_TIE_TOL * np.maximum(1.0, np.abs(bound)), 0.0)
        return loss <= bound + slack


def over_epsilon(eps: float, loss: np.ndarray) -> np.ndarray:
    """``loss > ε``, losses within ``realisation.LOSS_TIE_TOL`` of ε counting as ties (not over): a
    lattice loss such as ``4 × 0.5`` is not above ``ε = 2`` because of rounding in ``log(p/q)``."""
    return ~within(loss, eps)


def hockey_terms(eps: float, loss: np.ndarray) -> np.ndarray:
    return np.maximum(0.0, -np.expm1(np.minimum(eps - loss, 0.0)))


def _plain(y: Any) -> Any:
    return y.item() if isinstance(y, np.generic) else y


def _step_key(mechanism: Mechanism, request: Request | None) -> Step:
    if not isinstance(mechanism, Mechanism):
        raise ParameterError(f"mechanism={mechanism!r}: must be an lpdp.filters Mechanism")
    if request is not None and not isinstance(request, Request):
        raise ParameterError(f"request={request!r}: must be an lpdp.filters.Request or None")
    return mechanism, request


def check_steps(steps: Any, name: str = "steps") -> tuple[Step, ...]:
    """Validate a declared cycle: a non-empty sequence of ``(mechanism, request or None)`` tuples (a bare
    mechanism means ``(mechanism, None)``). Raises :class:`ParameterError` naming the bad entry.

    Examples
    --------
    >>> from lpdp.mechanisms import GaussianMechanism
    >>> check_steps([GaussianMechanism(2.0)])
    ((GaussianMechanism(sigma=2.0, sensitivity=1.0), None),)
    """
    if isinstance(steps, (Mechanism, str, bytes, Mapping)) or not isinstance(steps, Sequence):
        raise ParameterError(f"{name}={steps!r}: must be a non-empty list of (mechanism, request or "
                             "None) tuples")
    if not steps:
        raise ParameterError(f"{name}={list(steps)!r}: declare at least one (mechanism, request) step")
    out = []
    for i, item in enumerate(steps):
        if isinstance(item, Mechanism):
            item = (item, None)
        if not (isinstance(item, tuple) and len(item) == 2 and isinstance(item[0], Mechanism)
                and (item[1] is None or isinstance(item[1], Request))):
            raise ParameterError(f"{name}[{i}]={item!r}: must be a (Mechanism, Request or None) tuple")
        out.append((item[0], item[1]))
    return tuple(out)


def _normalise_next(nxt: Sequence[Any] | None, current: Step) -> tuple[Step, ...]:
    if nxt is None:
        return (current,)
    out = []
    for item in nxt:
        out.append(_step_key(*item) if isinstance(item, tuple) else _step_key(item, None))
    if not out:
        raise ParameterError("next=[]: list at least one possible next (mechanism, request)")
    return tuple(out)


@dataclass(frozen=True)
class StoppingRule:
    """A filter specialised to i.i.d. rounds or to a declared cycle: a threshold on every ordered pair's
    running loss.

    ``T >= t`` (1 <= t <= N) iff ``first_release`` and the running losses ``S_j`` of every ordered
    pair satisfy ``S_j <= threshold_j`` for ``j = 0 .. t-1-lag``. The realisation-level filter has
    ``lag = 1`` (its decision at step i uses ``l^{(i-1)}`` for step i+1, Prop. 1 of the filter paper);
    one-step filters have ``lag = 0``. With ``min_steps = k`` the stopping time is ``max(T, k)``
    (the combined filter: at least the k rounds of its Rényi part).

    For i.i.d. rounds ``threshold_j = thresholds`` for every j. For a cycle of m > 1 steps
    (:meth:`Filter.sequence_rule`), ``step_thresholds`` has one row per step of the cycle and
    ``threshold_j = step_thresholds[j % m]`` (``thresholds`` is its row 0); only Monte Carlo audits such a
    rule (:func:`lpdp.filters.sequence_audit`).
    """

    epsilon: float
    max_steps: int
    pairs: tuple[tuple[Hashable, Hashable], ...]
    first_release: bool
    thresholds: tuple[float, ...]
    lag: int
    min_steps: int = 0
    step_thresholds: tuple[tuple[float, ...], ...] | None = None

    @classmethod
    def cyclic(cls, epsilon: float, max_steps: int, pairs: tuple[tuple[Hashable, Hashable], ...],
               first_release: bool, rows: Sequence[Sequence[float]], lag: int) -> StoppingRule:
        """The rule with ``threshold_j = rows[j % len(rows)]`` (an i.i.d. rule when one row).

        Examples
        --------
        >>> r = StoppingRule.cyclic(6.0, 10, ((1, 0), (0, 1)), True, [(1.0, 2.0), (3.0, 4.0)], lag=0)
        >>> r.period, bool(r.alive([2.5, 3.5], j=3)), bool(r.alive([2.5, 3.5], j=2))
        (2, True, False)
        """
        table = tuple(tuple(float(v) for v in row) for row in rows)
        return cls(epsilon, max_steps, pairs, first_release, table[0], lag,
                   step_thresholds=table if len(table) > 1 else None)

    @property
    def period(self) -> int:
        """The number of threshold rows (1 for i.i.d. rounds)."""
        return 1 if self.step_thresholds is None else len(self.step_thresholds)

    def rows(self) -> tuple[tuple[float, ...], ...]:
        """The threshold rows, ``threshold_j = rows()[j % period]``."""
        return (self.thresholds,) if self.step_thresholds is None else self.step_thresholds

    def alive(self, losses: Any, j: int = 0) -> Any:
        """Whether every ordered pair's ``S_j`` is within its threshold (``losses`` has the pairs last)."""
        return np.all(within(losses, np.asarray(self.rows()[j % self.period])), axis=-1)


class Filter(ABC):
    """The public privacy-filter protocol: ask before running a step, record its output, read the odometer.

    Every filter of :mod:`lpdp.filters` (realisation-level and mechanism-level) is a ``Filter``:

    * :meth:`ask` ``(mechanism, request=None, *, next=None) -> bool``: would running ``mechanism`` at the
      next step keep the guarantee? ``True`` grants the step (its output must then be recorded);
      ``False`` halts the filter for good (what dp_accounting and Flower call ``would_exceed``, negated).
    * :meth:`record` ``(output)``: the released output of the granted step.
    * :meth:`spent`: the odometer reading (realised privacy loss of every ordered pair, or the charged
      per-round parameters of a mechanism-level filter); :meth:`remaining`: what is left, where
      meaningful.
    * :meth:`save` / :meth:`replay`: a JSON transcript, and a filter rebuilt by re-running it.

    A new filter subclasses ``Filter`` and implements :meth:`config` (its constructor arguments) and
    :meth:`decide` (grant a step or say why not); it may override :meth:`iid_rule` (a threshold rule for
    i.i.d. rounds, which the exact audits use), :meth:`sequence_rule` (the rule on a declared cycle of
    steps, which :func:`lpdp.filters.sequence_audit` uses), :meth:`guarantee`, :meth:`spent` and
    :meth:`remaining`. Register it with :func:`lpdp.filters.register_filter` to make it available to
    ``lpdp filter`` and the scenarios.
    """

    def __init__(self, epsilon: float, max_steps: int,
                 pairs: Sequence[tuple[Hashable, Hashable]]) -> None:
        self.epsilon = check_epsilon(epsilon)
        self.max_steps = check_int(max_steps, "max_steps")
        unordered = tuple(tuple(p) for p in pairs)
        if not unordered:
            raise ParameterError("pairs=(): at least one neighbouring pair is needed")
        for p in unordered:
            if len(p) != 2 or p[0] == p[1]:
                raise ParameterError(f"pairs: {p!r} must be two different databases")
        self.pairs = unordered
        self.ordered_pairs = tuple(q for a, b in unordered for q in ((a, b), (b, a)))
        self._databases = tuple(dict.fromkeys(x for p in unordered for x in p))
        self._loss = [0.0] * len(self.ordered_pairs)
        self._steps = 0
        self._pending: Step | None = None
        self._halted: str | None = None
        self._log: list[tuple[Step, tuple[Step, ...] | None, Any]] = []
        self._refused: Step | None = None
        self._cache: dict[tuple[Step, float], tuple[float, ...]] = {}

    # -- configuration ----------------------------------------------------------------------------
    @abstractmethod
    def config(self) -> dict[str, Any]:
        """The constructor arguments (plain data)."""

    def iid_rule(self, mechanism: Mechanism, request: Request | None = None) -> StoppingRule:
        """This filter's threshold rule when every round is ``(mechanism, request)`` (for audits)."""
        raise ParameterError(f"{type(self).__name__}: no threshold rule for i.i.d. rounds")

    def sequence_rule(self, steps: Sequence[Step]) -> StoppingRule:
        """This filter's exact threshold rule when round i runs ``steps[(i - 1) % m]`` (a declared
        cycle, each step's look-ahead declaring the next step of the cycle). The default handles the
        one-step cycle through :meth:`iid_rule`; filters with a per-step rule override it.

        Examples
        --------
        >>> from lpdp.filters import GaussianMechanism
        >>> f = UnionBoundFilter(6.0, 1e-3, 40)
        >>> f.sequence_rule([GaussianMechanism(2.0)]) == f.iid_rule(GaussianMechanism(2.0))
        True
        """
        steps = check_steps(steps)
        if len(steps) == 1:
            return self.iid_rule(*steps[0])
        raise ParameterError(f"{type(self).__name__}: no threshold rule for a cycle of {len(steps)} "
                             "steps")

    @abstractmethod
    def decide(self, step: int, current: Step, nxt: Sequence[Any] | None) -> str | None:
        """``None`` if step ``step`` may run ``current = (mechanism, request)`` (a filter may update its
        state here: it is called once per :meth:`ask`), else the reason it halts. ``nxt`` is the
        ``next=`` argument of :meth:`ask`."""

    def guarantee(self, expected_t: float) -> float | None:
        """The filter's own bound on ``P_x(l^{(T)} > ε)`` given ``E_x[T]`` (``None``: no guarantee)."""
        return None

    # -- helpers ---------------------------------------------------------------------------------
    def _quantiles(self, step: Step, level: float) -> tuple[float, ...]:
        """``u(level)`` of ``step``'s loss for every ordered pair (cached)."""
        key = (step, level)
        out = self._cache.get(key)
        if out is None:
            mech, req = step
            out = tuple(mech.loss_quantile(level, *self._inputs(req, a, b))
                        for a, b in self.ordered_pairs)
            self._cache[key] = out
        return out

    @staticmethod
    def _inputs(request: Request | None, a: Hashable, b: Hashable) -> tuple[Any, Any]:
        return (a, b) if request is None else (request(a), request(b))

    # -- the protocol ----------------------------------------------------------------------------
    def ask(self, mechanism: Mechanism, request: Request | None = None, *,
            next: Sequence[Any] | None = None) -> bool:
        """Whether the next step may run ``mechanism`` on ``request``; ``False`` halts the filter.

        ``next`` lists every (mechanism, request) the analyst might submit at the step after this one
        (default: this one again). The realisation-level filter's look-ahead covers all of them; the
        one-step filters ignore it. Raises :class:`BudgetExhaustedError` once halted.
        """
        if self._halted is not None:
            raise BudgetExhaustedError(f"the filter has halted after {self._steps} releases: "
                                       f"{self._halted}")
        if self._pending is not None:
            raise ParameterError(f"ask: step {self._steps + 1} was granted but its output was not "
                                 "recorded; call record(y) first")
        current = _step_key(mechanism, request)
        reason = self.decide(self._steps + 1, current, next)
        if reason is not None:
            self._halted = reason
            self._refused = current
            return False
        self._pending = current
        self._log.append((current, None if next is None else _normalise_next(next, current), None))
        return True

    def record(self, y: Any) -> None:
        """Record the released output of the granted step and update every pair's realised loss."""
        if self._pending is None:
            if self._halted is not None:
                raise BudgetExhaustedError(f"the filter has halted after {self._steps} releases: "
                                           f"{self._halted}")
            raise ParameterError("record: no step was granted; call ask(...) first")
        mech, req = self._pending
        try:
            logp = {x: float(mech.log_density(y, request_input(req, x)))
                    for x in self._databases}
        except (TypeError, ValueError) as exc:
            raise ParameterError(f"record: output {y!r} is not an output of {mech!r} "
                                 f"({type(exc).__name__}: {exc})") from None
        if any(math.isnan(v) for v in logp.values()):
            raise ParameterError(f"record: output {y!r} has no density under {mech!r} (not a number)")
        loss = self._loss
        for k, (a, b) in enumerate(self.pairs):
            d = logp[a] - logp[b]
            if math.isnan(d):  # impossible under both: conservative
                loss[2 * k] = loss[2 * k + 1] = math.inf
                continue
            fwd, bwd = loss[2 * k] + d, loss[2 * k + 1] - d
            loss[2 * k] = math.inf if math.isnan(fwd) else fwd
            loss[2 * k + 1] = math.inf if math.isnan(bwd) else bwd
        self._steps += 1
        self._log[-1] = (*self._log[-1][:2], _plain(y))
        self._pending = None

    # -- reporting -------------------------------------------------------------------------------
    @property
    def steps(self) -> int:
        """Outputs released so far."""
        return self._steps

    @property
    def halted(self) -> bool:
        """Whether the filter has refused a step (no further step is possible)."""
        return self._halted is not None

    @property
    def remaining_steps(self) -> int:
        """An upper bound on further releases (0 once halted or once the cap N is reached)."""
        return 0 if self._halted is not None else self.max_steps - self._steps

    def spent(self) -> dict[Any, float]:
        """The odometer: the realised privacy loss ``l^{(i)}(x, x')`` of every ordered pair."""
        return dict(zip(self.ordered_pairs, self._loss, strict=True))

    def remaining(self) -> dict[str, float]:
        """What is left: ``{"steps": an upper bound on further releases}`` (mechanism-level filters add
        the unspent budget of each charged parameter)."""
        return {"steps": float(self.remaining_steps)}

    # -- transcript ------------------------------------------------------------------------------
    def transcript(self) -> dict[str, Any]:
        """Plain data: configuration, every granted step (mechanism, request, next, output) and the
        refused step, if any, with the lpdp version."""
        step = step_to_dict
        steps = [{**step(cur), "next": None if nxt is None else [step(s) for s in nxt], "output": y}
                 for cur, nxt, y in self._log]
        return {"filter": type(self).__name__, "config": self.config(),
                "pairs": [list(p) for p in self.pairs], "steps": steps,
                "refused": None if self._refused is None else step(self._refused),
                "lpdp_version": __version__}

    def save(self, path: str | Path) -> Path:
        """Write :meth:`transcript` as JSON (the folder must exist; the file is replaced atomically)."""
        return atomic_write(path, json.dumps(self.transcript(), indent=1) + "\n", option="path")

    @classmethod
    def replay(cls, transcript: Mapping[str, Any] | str | Path,
               mechanisms: Mapping[str, Mechanism] | None = None) -> Filter:
        """Rebuild a filter from a transcript (dict or JSON file) by re-running every step.

        Raises :class:`LpdpError` if a decision differs from the recorded one (the transcript was
        altered, or made by another configuration). ``mechanisms`` supplies sampled mechanisms by name.
        """
        if not isinstance(transcript, Mapping):
            transcript = read_document(transcript, what="transcript", fmt="json", error=ParameterError)
        if not isinstance(transcript, Mapping) or transcript.get("filter") != cls.__name__:
            found = transcript.get("filter") if isinstance(transcript, Mapping) else transcript
            raise LpdpError(f"transcript of a {found!r}, not a {cls.__name__}")

        def step(d: Mapping[str, Any]) -> Step:
            return step_from_dict({k: d[k] for k in ("mechanism", "request")}, mechanisms,
                                  source="transcript")

        try:
            pairs = [tuple(_key(x) for x in p) for p in transcript["pairs"]]
            filt = cls(**transcript["config"], pairs=pairs)
            for i, d in enumerate(transcript["steps"], start=1):
                nxt = None if d["next"] is None else [step(s) for s in d["next"]]
                if not filt.ask(*step(d), next=nxt):
                    raise LpdpError(f"transcript step {i}: the filter refuses it on replay")
                filt.record(d["output"])
            refused = transcript["refused"]
        except (KeyError, TypeError, AttributeError) as exc:
            raise ParameterError(f"transcript: malformed ({type(exc).__name__}: {exc})") from None
        if refused is not None and filt.ask(*step(refused)):
            raise LpdpError("transcript: the refused step is granted on replay")
        return filt


def _key(x: Any) -> Hashable:
    return tuple(x) if isinstance(x, list) else x


def _bound(epsilon: float, *quantiles: float) -> float:
    """``ε - Σ u`` with ``+inf`` quantiles giving ``-inf`` (never NaN)."""
    if math.inf in quantiles:
        return -math.inf
    return epsilon - math.fsum(quantiles)


class RealisationFilter(Filter):
    """The realisation-level privacy filter (Algorithm 1 of the filter paper).

    The first release is allowed iff ``P_x(L_1 > ε) <= δ̃`` for every ordered pair. At step i, before
    ``y_i`` is drawn, the filter decides whether step i+1 will be allowed: for every ordered pair and
    every possible next request ``r`` (the intersection rule), ``P_x(Y_i ∈ Ỹ_i(δ̃)) >= 1 - θ``. Because
    the inner probability ``P_x(l^{(i-1)} + L_i(y) + L_{i+1} > ε)`` is non-decreasing in ``L_i(y)``,
    ``Ỹ_i = {y : L_i(y) <= ε - l^{(i-1)} - max_r u_r(δ̃)}`` and the check is exactly

        ``l^{(i-1)}(x, x') <= ε - u_i(θ) - max_r u_r(δ̃)``   (a tie continues),

    with ``u`` the exact generalised-inverse quantiles of the one-step losses; for i.i.d. rounds this is
    Proposition 1's ``l^{(i-1)} <= κ``. Also ``T <= N``. Guarantee (Theorem 1):
    ``P_x(l^{(T)} > ε) <= δ̃ + (1 - δ̃) θ (E[T] - 1) <= δ``.

    Parameters
    ----------
    epsilon, delta : float
        The budget.
    max_steps : int
        N, the largest number of releases.
    delta_tilde, theta : float
        With ``δ̃ + θ (1 - δ̃) N <= δ`` (see :func:`lpdp.filters.optimal_parameters`).
    pairs : sequence of (database, database)
        The neighbouring pairs; both orderings are checked.

    Examples
    --------
    >>> import numpy as np
    >>> from lpdp.filters import GaussianMechanism, optimal_parameters
    >>> p = optimal_parameters(1e-3, 48)
    >>> f = RealisationFilter(6.0, 1e-3, 48, p.delta_tilde, p.theta, pairs=[(1, 0)])
    >>> g, rng = GaussianMechanism(sigma=2.0), np.random.default_rng(0)
    >>> while f.ask(g):
    ...     f.record(g.sample(1, rng))
    >>> 1 <= f.steps <= 48
    True
    """

    def __init__(self, epsilon: float, delta: float, max_steps: int, delta_tilde: float,
                 theta: float, pairs: Sequence[tuple[Hashable, Hashable]] = ((1, 0),)) -> None:
        super().__init__(epsilon, max_steps, pairs)
        self.delta = check_delta(delta)
        self.delta_tilde = check_probability(delta_tilde, "delta_tilde")
        self.theta = check_probability(theta, "theta")
        check_budget(self.delta, self.max_steps, self.delta_tilde, self.theta)
        self.claimed_delta = self.delta
        self._next_ok = False
        self._next_reason = ""
        self._declared: frozenset[Step] = frozenset()

    def config(self) -> dict[str, Any]:
        return {"epsilon": self.epsilon, "delta": self.delta, "max_steps": self.max_steps,
                "delta_tilde": self.delta_tilde, "theta": self.theta}

    def guarantee(self, expected_t: float) -> float:
        """Theorem 1: ``P_x(l^{(T)} > ε) <= δ̃ + (1 - δ̃) θ (E_x[T] - 1)``."""
        return self.delta_tilde + (1.0 - self.delta_tilde) * self.theta * max(expected_t - 1.0, 0.0)

    def decide(self, step: int, current: Step, nxt: Sequence[Any] | None) -> str | None:
        if step == 1:
            for (a, b), u in zip(self.ordered_pairs, self._quantiles(current, self.delta_tilde),
                                 strict=True):
                if not self.epsilon >= u:
                    return (f"first release: P(L_1 > epsilon) > delta_tilde for the pair "
                            f"({a!r}, {b!r}) (u(delta_tilde) = {u:.6g} > epsilon = {self.epsilon})")
        elif not self._next_ok:
            return self._next_reason
        elif current not in self._declared:
            raise ParameterError(f"ask: ({current[0]!r}, {current[1]!r}) was not among the possible "
                                 "next requests declared at the previous step (`next=`)")
        candidates = _normalise_next(nxt, current)
        if step >= self.max_steps:
            self._next_ok, self._next_reason = False, f"max_steps={self.max_steps} reached"
            return None
        u_theta = self._quantiles(current, self.theta)
        u_next = [max(col) for col in zip(*(self._quantiles(c, self.delta_tilde)
                                            for c in candidates), strict=True)]
        self._next_ok, self._next_reason = True, ""
        for (a, b), loss, ut, un in zip(self.ordered_pairs, self._loss, u_theta, u_next, strict=True):
            bound = _bound(self.epsilon, ut, un)
            if not within(loss, bound):
                self._next_ok = False
                self._next_reason = (f"look-ahead at step {step}: realised loss {loss:.6g} of the pair "
                                     f"({a!r}, {b!r}) exceeds epsilon - u(theta) - u(delta_tilde) = "
                                     f"{bound:.6g}")
                break
        self._declared = frozenset(candidates)
        return None

    def iid_rule(self, mechanism: Mechanism, request: Request | None = None) -> StoppingRule:
        step = _step_key(mechanism, request)
        ud = self._quantiles(step, self.delta_tilde)
        ut = self._quantiles(step, self.theta)
        return StoppingRule(self.epsilon, self.max_steps, self.ordered_pairs,
                            first_release=all(self.epsilon >= u for u in ud),
                            thresholds=tuple(_bound(self.epsilon, a, b)
                                             for a, b in zip(ut, ud, strict=True)),
                            lag=1)

    def sequence_rule(self, steps: Sequence[Step]) -> StoppingRule:
        """Algorithm 1 on the cycle ``s_1 .. s_m``: the first release iff ``u_{s_1}(δ̃) <= ε`` for every
        ordered pair; step i+1 runs iff ``l^{(i-1)} <= ε - u_{s_i}(θ) - u_{s_{i+1}}(δ̃)`` (the look-ahead
        declares the next step of the cycle, :meth:`decide`); at most N steps.

        Examples
        --------
        >>> from lpdp.filters import GaussianMechanism, LaplaceMechanism
        >>> f = RealisationFilter(6.0, 1e-3, 40, 5e-4, 1e-5)
        >>> rule = f.sequence_rule([(GaussianMechanism(2.0), None), (LaplaceMechanism(2.0), None)])
        >>> rule.period, rule.lag
        (2, 1)
        """
        steps = check_steps(steps)
        m = len(steps)
        ud = [self._quantiles(s, self.delta_tilde) for s in steps]
        ut = [self._quantiles(s, self.theta) for s in steps]
        rows = [tuple(_bound(self.epsilon, a, b) for a, b in zip(ut[r], ud[(r + 1) % m], strict=True))
                for r in range(m)]
        return StoppingRule.cyclic(self.epsilon, self.max_steps, self.ordered_pairs,
                                   all(self.epsilon >= u for u in ud[0]), rows, lag=1)


class _OneStepFilter(Filter):
    """Release ``y_i`` iff ``P_x(l^{(i)} > ε | r^i, y^{i-1}) <= level`` for every ordered pair, i.e.
    ``l^{(i-1)} <= ε - u_i(level)``; at most N releases."""

    def __init__(self, epsilon: float, max_steps: int, level: float,
                 pairs: Sequence[tuple[Hashable, Hashable]]) -> None:
        super().__init__(epsilon, max_steps, pairs)
        self._level = level

    def decide(self, step: int, current: Step, nxt: Sequence[Any] | None) -> str | None:
        if step > self.max_steps:
            return f"max_steps={self.max_steps} reached"
        for (a, b), loss, u in zip(self.ordered_pairs, self._loss,
                                   self._quantiles(current, self._level), strict=True):
            bound = _bound(self.epsilon, u)
            if not within(loss, bound):
                return (f"step {step}: P(l > epsilon) > {self._level:.6g} for the pair ({a!r}, {b!r}) "
                        f"(realised loss {loss:.6g} > epsilon - u = {bound:.6g})")
        return None

    def iid_rule(self, mechanism: Mechanism, request: Request | None = None) -> StoppingRule:
        u = self._quantiles(_step_key(mechanism, request), self._level)
        thresholds = tuple(_bound(self.epsilon, x) for x in u)
        return StoppingRule(self.epsilon, self.max_steps, self.ordered_pairs,
                            first_release=bool(np.all(within(0.0, np.asarray(thresholds)))),
                            thresholds=thresholds, lag=0)

    def sequence_rule(self, steps: Sequence[Step]) -> StoppingRule:
        """On the cycle ``s_1 .. s_m``: ``y_i`` is released iff ``l^{(i-1)} <= ε - u_{s_i}(level)`` for
        every ordered pair, at most N times.

        Examples
        --------
        >>> from lpdp.filters import GaussianMechanism, LaplaceMechanism
        >>> rule = UnionBoundFilter(6.0, 1e-3, 40).sequence_rule([GaussianMechanism(2.0),
        ...                                                       LaplaceMechanism(2.0)])
        >>> rule.period, rule.lag, rule.rows()[0] == rule.thresholds
        (2, 0, True)
        """
        steps = check_steps(steps)
        rows = [tuple(_bound(self.epsilon, x) for x in self._quantiles(s, self._level)) for s in steps]
        return StoppingRule.cyclic(self.epsilon, self.max_steps, self.ordered_pairs,
                                   bool(np.all(within(0.0, np.asarray(rows[0])))), rows, lag=0)


class UnionBoundFilter(_OneStepFilter):
    """lpdp's own one-step union-bound filter (docs/filters.md; not from the paper).

    Release ``y_i`` iff ``max over ordered pairs P_x(l^{(i)} > ε | r^i, y^{i-1}) <= δ/N``, with at most
    N releases. It is (ε, δ)-DP: ``P(l^{(T)} > ε) <= Σ_i P(T >= i, l^{(i)} > ε) <= (δ/N) E[T] <= δ``,
    since ``{T >= i}`` is decided from ``(r^i, y^{i-1})``. ``next`` in :meth:`ask` is not needed.

    Examples
    --------
    >>> from lpdp.filters import GaussianMechanism
    >>> f = UnionBoundFilter(6.0, 1e-3, 48)
    >>> f.ask(GaussianMechanism(sigma=2.0))
    True
    """

    def __init__(self, epsilon: float, delta: float, max_steps: int,
                 pairs: Sequence[tuple[Hashable, Hashable]] = ((1, 0),)) -> None:
        self.delta = self.claimed_delta = check_delta(delta)
        max_steps = check_int(max_steps, "max_steps")
        super().__init__(epsilon, max_steps, self.delta / max_steps, pairs)

    def config(self) -> dict[str, Any]:
        return {"epsilon": self.epsilon, "delta": self.delta, "max_steps": self.max_steps}

    def guarantee(self, expected_t: float) -> float:
        """docs/filters.md: ``P_x(l^{(T)} > ε) <= (δ/N) E_x[T]``."""
        return self.delta / self.max_steps * expected_t


class NaiveBayesianFilter(_OneStepFilter):
    """UNSAFE: Pan's naive realisation-level filter (filter paper, Sec. II-B), for demonstrations only.

    Release ``y_i`` iff ``P_x(l^{(i)} > ε | y^{i-1}) <= level`` (Pan: ``level = δ``). With
    ``level = δ̃`` it is also the *no-look-ahead* variant of Algorithm 1 (decide from the realised
    ``y_i`` rather than from ``P(Y_i ∈ Ỹ_i)``). It is **not** (ε, δ)-DP: on the binary erasure
    mechanism with ``p <= level`` it runs until the reveal, so its actual δ is ``1 - (1-p)^N``.

    Examples
    --------
    >>> from lpdp.filters import binary_erasure
    >>> f = NaiveBayesianFilter(1.0, 1e-3, 1000, pairs=[(0, 1)])
    >>> f.ask(binary_erasure(1e-3))
    True
    """

    def __init__(self, epsilon: float, level: float, max_steps: int,
                 pairs: Sequence[tuple[Hashable, Hashable]] = ((1, 0),)) -> None:
        self.level = self.claimed_delta = check_delta(level, "level")
        super().__init__(epsilon, max_steps, self.level, pairs)

    def config(self) -> dict[str, Any]:
        return {"epsilon": self.epsilon, "level": self.level, "max_steps": self.max_steps}

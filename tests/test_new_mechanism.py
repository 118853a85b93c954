"""A new mechanism in one file: the two-sided geometric mechanism, defined here and nowhere in lpdp/.

It goes through the Accountant, a workload file, ``lpdp account``, ``lpdp filter simulate`` and an audit
with no edit to the library: one subclass of :class:`lpdp.mechanisms.Mechanism` (its faces) and one
:func:`lpdp.workload.register_kind` line (its data form). docs/api.md "How to add a mechanism" lists the
same steps.

The geometric mechanism with parameter ε releases ``x + Z``, ``P(Z = z) = (1 - a)/(1 + a) a^|z|`` with
``a = e^{-ε}`` (Ghosh, Roughgarden and Sundararajan 2012). On counts one apart its privacy loss is ``±ε``
with ``P(L = ε) = 1/(1 + a)``: the loss law of binary randomized response with ``ε``, which is the
independent check used throughout (a different route of the accountant, and the built-in mechanism).
"""

from __future__ import annotations

import functools
import json
import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest

from lpdp import Accountant, PrivacyRegion
from lpdp.cli import main
from lpdp.compose import homogeneous
from lpdp.mechanisms import Mechanism, pure, randomized_response
from lpdp.workload import register_kind, unregister_kind


@dataclass(frozen=True)
class GeometricMechanism(Mechanism):
    """The two-sided geometric mechanism on integer inputs (sensitivity 1)."""

    epsilon: float

    def __post_init__(self) -> None:
        if not (math.isfinite(self.epsilon) and self.epsilon > 0):
            raise ValueError(f"epsilon={self.epsilon!r}: must be finite and > 0")

    # ---- accountant face: a finite dominating pair (the loss is ±ε on neighbours)
    @property
    def is_finite(self) -> bool:
        return True

    def region(self) -> PrivacyRegion:
        a = math.exp(-self.epsilon)
        p = [1 / (1 + a), a / (1 + a)]
        return PrivacyRegion.from_pair(p, p[::-1])

    # ---- filter face
    def _log_norm(self) -> float:
        return math.log(-math.expm1(-self.epsilon)) - math.log1p(math.exp(-self.epsilon))

    def sample(self, value: Any, rng: np.random.Generator, size: int | None = None) -> Any:
        p = -math.expm1(-self.epsilon)
        return value + rng.geometric(p, size) - rng.geometric(p, size)

    def log_density(self, y: Any, value: Any) -> Any:
        return self._log_norm() - self.epsilon * np.abs(np.asarray(y) - value)

    @property
    def finite_losses(self) -> bool:
        return True

    def loss_atoms(self, value: Any, other: Any) -> tuple[np.ndarray, np.ndarray]:
        return _atoms(self, value, other)

    def _loss_atoms(self, value: Any, other: Any) -> tuple[np.ndarray, np.ndarray]:
        """The loss ``ε(|y - other| - |y - value|)`` is constant beyond either input: the outputs between
        them, and the two tails, are its atoms."""
        lo, hi = min(value, other), max(value, other)
        d, a = hi - lo, math.exp(-self.epsilon)
        ys = np.arange(lo, hi + 1)
        losses = self.epsilon * (np.abs(ys - other) - np.abs(ys - value))
        probs = np.exp(self.log_density(ys, value))
        # beyond hi and below lo: distances from value of j >= 1 past each end
        probs[-1] += a ** (1 + (hi - value)) / (1 + a)
        probs[0] += a ** (1 + (value - lo)) / (1 + a)
        assert d >= 0
        keys, inverse = np.unique(losses, return_inverse=True)
        return keys, np.bincount(inverse, weights=probs)

    def loss_tail(self, c: float, value: Any, other: Any) -> float:
        losses, probs = self.loss_atoms(value, other)
        return float(math.fsum(probs[losses > c]))

    def loss_quantile(self, a: float, value: Any, other: Any) -> float:
        """``inf{c : P(L > c) <= a}``: the smallest atom whose upper tail is at most ``a``."""
        if a >= 1:
            return -math.inf
        losses, above = _upper_tails(self, value, other)
        return float(next(c for c, t in zip(losses, above, strict=True) if t <= a))

    # ---- mechanism level: a pure (d ε)-DP mechanism on inputs d apart
    def _pure(self, inputs: Any) -> Mechanism:
        d = max((abs(x - y) for x, y in (inputs or self.default_pairs())), default=1)
        return pure(d * self.epsilon)

    def round_delta(self, epsilon: float, inputs: Any = None) -> float:
        return self._pure(inputs).round_delta(epsilon)

    def round_epsilon(self, delta: float, inputs: Any = None) -> float:
        return self._pure(inputs).round_epsilon(delta)

    def renyi(self, alpha: float, inputs: Any = None) -> float:
        return self._pure(inputs).renyi(alpha)

    def zcdp_rho(self, inputs: Any = None) -> float:
        return self._pure(inputs).zcdp_rho()

    def pair_mechanism(self, value: Any, other: Any) -> Mechanism:
        return self._pure([(value, other)])

    # ---- data face
    def to_dict(self) -> dict[str, Any]:
        return {"kind": "geometric", "epsilon": self.epsilon}

    @property
    def label(self) -> str:
        return f"geometric(epsilon={self.epsilon:g})"


@functools.lru_cache(maxsize=64)
def _atoms(m: GeometricMechanism, value: Any, other: Any) -> tuple[np.ndarray, np.ndarray]:
    return m._loss_atoms(value, other)


@functools.lru_cache(maxsize=64)
def _upper_tails(m: GeometricMechanism, value: Any, other: Any) -> tuple[np.ndarray, list[float]]:
    losses, probs = _atoms(m, value, other)
    return losses, [math.fsum(probs[j + 1:]) for j in range(losses.size)]


@pytest.fixture(autouse=True)
def geometric_kind():
    register_kind("geometric", lambda v: GeometricMechanism(v["epsilon"]), needed=("epsilon",))
    yield
    unregister_kind("geometric")


EPS = 0.3
WORKLOAD = f'[[mechanism]]\nkind = "geometric"\nepsilon = {EPS}\ntimes = 25\n'


def test_its_loss_law_is_binary_randomized_response():
    g, rr = GeometricMechanism(EPS), randomized_response(2, EPS)
    losses, probs = g.loss_atoms(1, 0)
    assert np.allclose(losses, [-EPS, EPS], rtol=1e-15) and math.isclose(probs.sum(), 1.0, rel_tol=1e-14)
    for c in (-1.0, 0.0, 0.2, 0.31):
        assert math.isclose(g.loss_tail(c, 1, 0), rr.loss_tail(c, 1, 0), rel_tol=1e-12, abs_tol=1e-15)
    rng = np.random.default_rng(1)
    y = g.sample(1, rng, size=200_000)                      # the sampler against the density
    assert abs(np.mean(y >= 1) - probs[1]) < 5 * math.sqrt(probs[1] * probs[0] / y.size)


def test_the_accountant_composes_it_exactly():
    g = Accountant().compose(GeometricMechanism(EPS), 25).guarantee()
    assert g.exact
    eps = np.linspace(0.0, 7.5, 16)
    ref = homogeneous(EPS, 0.0, 25).delta(eps)              # Kairouz et al.: another route
    assert np.allclose(g.delta(eps)[1], ref, rtol=1e-10, atol=1e-15)


def test_a_workload_file_and_lpdp_account(tmp_path, capsys):
    path = tmp_path / "w.toml"
    path.write_text(WORKLOAD)
    assert main(["account", str(path), "--at", "1", "3", "--for-delta", "1e-6", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert main(["account", "--pure", f"{EPS}x25", "--at", "1", "3", "--for-delta", "1e-6", "--json"]) == 0
    ref = json.loads(capsys.readouterr().out)
    for row, want in zip(out["delta_at"], ref["delta_at"], strict=True):
        assert math.isclose(row["upper"], want["upper"], rel_tol=1e-10)
    assert math.isclose(out["epsilon_for"][0]["upper"], ref["epsilon_for"][0]["upper"], rel_tol=1e-9)
    assert out["workload"][0]["kind"] == "geometric"


def test_lpdp_filter_simulate_runs_it(tmp_path, capsys):
    path = tmp_path / "w.toml"
    path.write_text(WORKLOAD)
    base = ["filter", "simulate", "--epsilon", "2", "--delta", "1e-6", "--max-steps", "20",
            "--trajectories", "1000", "--seed", "3", "--json"]
    assert main([*base, "--mechanism", str(path)]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["mechanism"] == {"kind": "geometric", "epsilon": EPS}
    assert main([*base, "--rr", f"2,{EPS}"]) == 0            # the same loss law, built in
    ref = json.loads(capsys.readouterr().out)
    mc = out["monte_carlo"] or {"expected_T_stderr": 0.0}
    assert abs(out["expected_T"] - ref["expected_T"]) <= 5 * mc["expected_T_stderr"] + 0.5
    assert out["baselines"] == ref["baselines"]               # mechanism-level: the same pure ε rounds


def test_an_audit_of_a_filter_on_it():
    from lpdp.filters import audit, build_filter

    g = GeometricMechanism(EPS)
    filt = build_filter("realisation", g, 3.0, 1e-3, 40, g.default_pairs())
    r = audit(filt, g, trajectories=4000, seed=5)
    assert r.method == "monte-carlo" and r.tail_upper <= 1e-3 + 1e-12
    ref = audit(build_filter("realisation", randomized_response(2, EPS), 3.0, 1e-3, 40, [(1, 0)]),
                randomized_response(2, EPS))                 # exact dynamic programme, same loss law
    assert abs(r.expected_T - ref.expected_T) <= 0.05 * ref.expected_T + 0.5


def test_testing_helpers_say_epsilon_and_keep_eps_as_a_deprecated_spelling():
    from lpdp.testing import assert_delta_le, assert_regions_equal

    r = PrivacyRegion.from_dp(1.0, 0.0)
    assert_regions_equal(r, r, epsilon=[0.0, 0.5])
    assert_delta_le(r, r, epsilon=[0.0, 0.5])
    with pytest.warns(DeprecationWarning, match="eps= is deprecated"):
        assert_delta_le(r, r, eps=[0.0, 0.5])

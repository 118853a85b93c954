"""Monte Carlo audits of filters on adaptive sequences: checked against an exact enumeration of every
transcript of a short adaptive sequence of randomised responses (written here, independently of the
tree sampler), and the enumeration itself against the library's exact i.i.d. audit."""

import itertools
import json
import math

import pytest

from lpdp import ParameterError
from lpdp.filters import audit, build_filter
from lpdp.filters.montecarlo import (
    EscalatingPolicy,
    MonteCarloAudit,
    PairEstimate,
    audit_chunk,
    clopper_pearson,
    combine_chunks,
)
from lpdp.filters.realisation import within
from lpdp.scenarios import run_file

EPS, DELTA, N = 3.0, 0.05, 5


def exact(policy, name, x, x_other):
    """P_x(l(T) > ε), E_x[(1 - e^{ε - l(T)})_+] and E_x[T] by enumerating every output sequence: each
    is replayed through a fresh filter; a sequence that stops early is counted once, at its stop."""
    outputs = policy.mechanisms[0].outputs
    seen, tail, hockey, mean_t = set(), 0.0, 0.0, 0.0
    for seq in itertools.product(outputs, repeat=N):
        f = build_filter(name, policy.mechanisms[-1], EPS, DELTA, N, [policy.pair])
        state, prob, used = 0, 1.0, ()
        while f.ask(policy.mechanisms[state], next=[(policy.mechanisms[s], None)
                                                    for s in policy.candidates(state)]):
            y = seq[len(used)]
            prob *= float(policy.mechanisms[state].probabilities(x)[outputs.index(y)])
            f.record(y)
            used += (y,)
            state = policy.next_state(state, y)
        if used in seen or prob == 0.0:
            continue
        seen.add(used)
        loss = f.spent()[(x, x_other)]
        tail += prob * (not within(loss, EPS))
        hockey += prob * (1.0 if loss == math.inf else max(0.0, 1.0 - math.exp(EPS - loss)))
        mean_t += prob * f.steps
    return tail, hockey, mean_t


@pytest.mark.parametrize("name", ["realisation", "union"])
def test_adaptive_audit_agrees_with_exact_enumeration(name):
    policy = EscalatingPolicy.randomized_response(2, (0.5, 1.0, 2.0), leak=0.01)
    chunks = [audit_chunk(policy, name, EPS, DELTA, N, 100_000, seed) for seed in range(4)]
    a = combine_chunks(chunks, policy, name, EPS, DELTA, N, confidence=0.999)
    assert a.trajectories == 400_000 and a.consistent
    for est in a.pairs:
        x, x_other = (int(v) for v in est.pair.split(","))
        tail, hockey, mean_t = exact(policy, name, x, x_other)
        assert tail > 1e-3  # the leak makes violations observable
        assert est.tail_interval[0] <= tail <= est.tail_interval[1]
        assert est.hockey_stick_interval[0] <= hockey <= est.hockey_stick_interval[1]
        assert abs(est.expected_T - mean_t) < 0.02
        assert tail <= a.filter_bound or name == "union"  # Theorem 1 at the realised E[T]


def test_exact_enumeration_matches_the_iid_audit():
    """With one mechanism the adversary is i.i.d.: the enumeration above equals lpdp's exact audit."""
    policy = EscalatingPolicy.randomized_response(2, (1.0,), leak=0.01)
    f = build_filter("realisation", policy.mechanisms[0], EPS, DELTA, N, [policy.pair])
    reference = audit(f, policy.mechanisms[0], method="exact")
    tail, hockey, _ = exact(policy, "realisation", 0, 1)
    assert tail == pytest.approx(reference.tail, rel=1e-9)
    assert hockey == pytest.approx(reference.hockey_stick_delta, rel=1e-9)


def test_chunks_are_reproducible_and_independent():
    policy = EscalatingPolicy.randomized_response(2, (0.5, 2.0), leak=0.01)
    a = audit_chunk(policy, "realisation", EPS, DELTA, N, 10_000, 7)
    assert a == audit_chunk(policy, "realisation", EPS, DELTA, N, 10_000, 7)
    assert a != audit_chunk(policy, "realisation", EPS, DELTA, N, 10_000, 8)
    assert all(sum(h) == 10_000 for h in a.stopping_times.values())


def test_clopper_pearson_is_the_exact_binomial_interval():
    from scipy import stats

    lo, hi = clopper_pearson(7, 1000, 0.9)
    assert stats.binom.sf(6, 1000, lo) == pytest.approx(0.05, rel=1e-6)
    assert stats.binom.cdf(7, 1000, hi) == pytest.approx(0.05, rel=1e-6)


def test_consistency_fails_when_a_lower_bound_exceeds_delta():
    est = PairEstimate("0,1", 0.02, (0.015, 0.025), 0.01, (0.008, 0.012), 3.0)
    assert MonteCarloAudit("x", 1.0, 0.05, 10**6, 0.95, (est,), None).consistent
    assert not MonteCarloAudit("x", 1.0, 0.01, 10**6, 0.95, (est,), None).consistent


def test_policy_validation():
    with pytest.raises(ParameterError, match=r"levels\[1\]=0.0: must be > 0"):
        EscalatingPolicy.randomized_response(2, (1.0, 0.0))
    with pytest.raises(ParameterError, match=r"leak=1.0"):
        EscalatingPolicy.randomized_response(2, (1.0,), leak=1.0)


def test_scenario_is_split_into_chunks_whose_result_does_not_depend_on_them(tmp_path):
    text = ('kind = "filter_adaptive_audit"\ntitle = "t"\nepsilon = 3.0\ndelta = 0.05\nmax_steps = 5\n'
            'leak = 0.01\ntrajectories = 40000\nchunk = {chunk}\n')
    src = tmp_path / "a.toml"
    src.write_text(text.format(chunk=10000))
    run_file(src, tmp_path / "o", scheduler="serial")
    doc = json.loads((tmp_path / "o" / "a.json").read_text())
    assert doc["result"]["trajectories"] == 40000 and doc["result"]["consistent"] is True
    assert "Clopper-Pearson" in doc["result"]["interval"]
    # the same chunks by hand give the same numbers
    import numpy as np

    policy = EscalatingPolicy.randomized_response(2, (0.5, 1.0, 2.0), leak=0.01)
    seeds = np.random.SeedSequence(0).spawn(4)
    by_hand = combine_chunks([audit_chunk(policy, "realisation", 3.0, 0.05, 5, 10000, s) for s in seeds],
                             policy, "realisation", 3.0, 0.05, 5)
    assert json.dumps(doc["result"]["pairs"]) == json.dumps(by_hand.to_dict()["pairs"])


AUDIT_4M = ('kind = "filter_adaptive_audit"\ntitle = "t"\nepsilon = 3.0\ndelta = 0.05\nmax_steps = 10\n'
            'leak = 0.002\ntrajectories = 4000000\nchunk = 1000000\n')


def test_a_large_audit_over_budget_only_in_the_worst_case_runs(tmp_path, monkeypatch):
    """4 chunks of 10^6 trajectories: the worst-case tree (every prefix of 4 outputs up to depth 10 in
    every chunk) is over the default 10-minute budget, the real one takes milliseconds; a pilot chunk
    measures it. Without the pilot the same file is refused."""
    from lpdp.errors import BudgetError
    from lpdp.scenarios import audit as kind

    src = tmp_path / "a.toml"
    src.write_text(AUDIT_4M)
    with monkeypatch.context() as m:
        m.setattr(kind, "_pilot_seconds", lambda key: math.inf)
        with pytest.raises(BudgetError, match=r"trajectories=4000000, chunk=1000000, max_steps=10 needs"):
            run_file(src, tmp_path / "refused", scheduler="serial")
    run_file(src, tmp_path / "o", scheduler="serial")
    doc = json.loads((tmp_path / "o" / "a.json").read_text())
    assert doc["result"]["trajectories"] == 4_000_000 and doc["result"]["consistent"] is True


def test_an_audit_over_budget_after_its_pilot_is_refused_before_it_runs(tmp_path, monkeypatch):
    """A budget of a tenth of a second: the pilot's estimate of 10^9 trajectories is over it."""
    from lpdp.errors import BudgetError

    monkeypatch.setenv("LPDP_MAX_SECONDS", "0.1")
    src = tmp_path / "a.toml"
    src.write_text(AUDIT_4M.replace("4000000", "1000000000").replace("leak = 0.002", "leak = 0.3"))
    with pytest.raises(BudgetError, match=r"trajectories=1000000000, chunk=1000000, max_steps=10 needs"):
        run_file(src, tmp_path / "o", scheduler="serial")
    assert not (tmp_path / "o" / "a.json").exists()

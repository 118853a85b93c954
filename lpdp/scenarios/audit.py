"""Scenario kind ``filter_adaptive_audit``: a Monte Carlo audit of a filter against an adaptive adversary
(:mod:`lpdp.filters.montecarlo`), split into chunks of trajectories that run as separate tasks."""

from __future__ import annotations

import functools
import math
import time
from typing import Any

from lpdp._validate import check_delta, check_epsilon, check_int, check_probability
from lpdp.errors import ParameterError
from lpdp.scenarios._schema import Field
from lpdp.scenarios.kinds import ScenarioKind, ScenarioOutput, Split, register

#: At most this many chunks (tasks) per audit: raise ``chunk`` for more trajectories.
MAX_CHUNKS = 100_000
#: Seconds per node of a chunk's prefix tree (a filter copy, an ``ask`` and a ``record``), high side.
SECONDS_PER_NODE = 1e-4
#: A pilot chunk starts at this many trajectories and grows 8x while it takes less than
#: :data:`PILOT_SECONDS` (it runs only when the worst-case tree is over the time budget).
PILOT_TRAJECTORIES, PILOT_SECONDS = 1000, 0.05
#: The pilot's time per trajectory is multiplied by this before it is extrapolated (timing noise).
PILOT_MARGIN = 2.0
#: The parameters a chunk's work depends on (the pilot's measurement is kept per combination).
_PILOT_KEYS = ("categories", "levels", "leak", "filter", "epsilon", "delta", "max_steps", "chunk")


def _filter_name(value: str) -> str:
    from lpdp.filters import filter_kinds

    names = [k.name for k in filter_kinds()]
    if value not in names:
        raise ParameterError(f"filter={value!r}: must be one of {names}")
    return value


def _levels(value: list[float]) -> list[float]:
    if not value:
        raise ParameterError("levels=[]: give at least one epsilon0")
    return [check_epsilon(e, f"levels[{i}]") for i, e in enumerate(value)]


SCHEMA = {
    "filter": Field("str", "the registered filter to audit (lpdp filter --help lists them)",
                    default="realisation", check=_filter_name),
    "epsilon": Field("float", "the budget epsilon", required=True, check=check_epsilon),
    "delta": Field("float", "the budget delta", required=True,
                   check=lambda v: check_delta(v, allow_one=False)),
    "max_steps": Field("int", "N: at most this many releases", default=10,
                       check=lambda v: check_int(v, "max_steps")),
    "categories": Field("int", "k of the k-ary randomised-response reports", default=2,
                        check=lambda v: check_int(v, "categories", minimum=2)),
    "levels": Field("list[float]", "the epsilon0 the adversary escalates through (one step up after "
                    "each output that raised the realised loss, back to the first otherwise)",
                    default=[0.5, 1.0, 2.0], check=_levels),
    "leak": Field("float", "probability that a report reveals the value in clear (0: none)", default=0.0,
                  check=lambda v: check_probability(v, "leak", open_right=True)),
    "trajectories": Field("int", "trajectories under each database of the pair", default=1_000_000,
                          check=lambda v: check_int(v, "trajectories")),
    "chunk": Field("int", "trajectories per task (chunks depend on this, never on the workers)",
                   default=250_000, check=lambda v: check_int(v, "chunk")),
    "confidence": Field("float", "level of the two-sided Clopper-Pearson intervals", default=0.95,
                        check=lambda v: check_probability(v, "confidence", open_left=True,
                                                          open_right=True)),
    "seed": Field("int", "random seed (chunk j draws from the j-th SeedSequence child)", default=0,
                  check=lambda v: check_int(v, "seed", minimum=0)),
}


def _policy(params: dict[str, Any]) -> Any:
    from lpdp.filters.montecarlo import EscalatingPolicy

    return EscalatingPolicy.randomized_response(params["categories"], params["levels"], params["leak"])


def _chunks(params: dict[str, Any]) -> int:
    """The number of chunks, after checking the estimated work against the budget (:mod:`lpdp._limits`).

    A chunk's tree has at most ``min(chunk, outputs^t)`` nodes at depth ``t`` under each database; when
    that worst case is over the budget, a pilot chunk measures the tree instead (:func:`_pilot_seconds`):
    the filter stops most trajectories early and rare outputs are seldom drawn, so a real tree is
    usually thousands of times smaller (10^6 trajectories of the shipped audit: 12 ms, worst case 280 s).
    """
    from lpdp._limits import check_budget, time_limit_seconds

    n = math.ceil(params["trajectories"] / params["chunk"])
    if n > MAX_CHUNKS:
        raise ParameterError(f"trajectories={params['trajectories']}, chunk={params['chunk']}: {n} chunks, "
                             f"more than {MAX_CHUNKS}; raise chunk")
    outputs = params["categories"] * (2 if params["leak"] > 0 else 1)
    nodes = sum(min(params["chunk"], outputs ** min(t, 64)) for t in range(params["max_steps"] + 1))
    seconds = 2 * n * nodes * SECONDS_PER_NODE
    if seconds > time_limit_seconds():
        key = tuple((k, tuple(v) if isinstance(v, list) else v) for k, v in sorted(params.items())
                    if k in _PILOT_KEYS)
        seconds = min(seconds, n * _pilot_seconds(key))
    check_budget(f"trajectories={params['trajectories']}, chunk={params['chunk']}, "
                 f"max_steps={params['max_steps']}", seconds=seconds)
    return n


@functools.lru_cache(maxsize=64)
def _pilot_seconds(key: tuple[tuple[str, Any], ...]) -> float:
    """Estimated seconds of one chunk, from pilot chunks of growing size (the audit's parameters as
    sorted ``(name, value)`` pairs). The expected number of distinct prefixes that ``m`` trajectories
    reach is concave in ``m`` (each added trajectory finds fewer new prefixes, in expectation, than the one
    before), so per trajectory it only falls as ``m`` grows, and the pilot's time per trajectory, times
    :data:`PILOT_MARGIN`, extrapolated linearly to the chunk is on the high side. The pilot's counts are
    discarded."""
    from lpdp.filters.montecarlo import audit_chunk

    p = dict(key)
    policy = _policy(p)
    size = min(PILOT_TRAJECTORIES, p["chunk"])
    while True:
        start = time.perf_counter()
        audit_chunk(policy, p["filter"], p["epsilon"], p["delta"], p["max_steps"], size, 0)
        took = time.perf_counter() - start
        if took >= PILOT_SECONDS or size >= p["chunk"]:
            return PILOT_MARGIN * took * p["chunk"] / size
        size = min(8 * size, p["chunk"])


def _run_chunk(params: dict[str, Any], j: int, seed: Any) -> Any:
    from lpdp.filters.montecarlo import audit_chunk

    size = min(params["chunk"], params["trajectories"] - j * params["chunk"])
    return audit_chunk(_policy(params), params["filter"], params["epsilon"], params["delta"],
                       params["max_steps"], size, seed)


def _combine(params: dict[str, Any], parts: list[Any]) -> ScenarioOutput:
    from lpdp.display import format_lower, format_upper
    from lpdp.filters.montecarlo import combine_chunks

    a = combine_chunks(parts, _policy(params), params["filter"], params["epsilon"], params["delta"],
                       params["max_steps"], params["confidence"])
    conf = f"{params['confidence']:.0%}"
    summary = [f"{params['filter']} filter, (eps, delta) = ({params['epsilon']:g}, {params['delta']:g}), "
               f"N = {params['max_steps']}, {a.trajectories} trajectories per database in {len(parts)} "
               f"chunks; {conf} Clopper-Pearson intervals"]
    for p in a.pairs:
        summary.append(f"pair ({p.pair}): P(l(T) > eps) in [{format_lower(p.tail_interval[0], 3)}, "
                       f"{format_upper(p.tail_interval[1], 3)}], hockey-stick delta in "
                       f"[{format_lower(p.hockey_stick_interval[0], 3)}, "
                       f"{format_upper(p.hockey_stick_interval[1], 3)}], E[T] = {p.expected_T:.3f}")
    bound = "" if a.filter_bound is None else f"; the filter's own bound {format_upper(a.filter_bound, 3)}"
    summary.append(f"guarantee (eps, delta) {'consistent' if a.consistent else 'INCONSISTENT'} with the "
                   f"estimates{bound}")
    return ScenarioOutput(payload=a.to_dict(), summary=summary)


register(ScenarioKind("filter_adaptive_audit", "Monte Carlo audit of a filter against an adaptive adversary "
                      "escalating randomised-response reports (Theorem 1 beyond i.i.d. rounds), in chunks",
                      SCHEMA, None, split=Split(_chunks, _run_chunk, _combine)))

"""One registry of filters: what ``lpdp filter --filter NAME``, the comparisons and the scenarios list.

Each entry builds a filter tuned for i.i.d. rounds of a mechanism (the realisation-level filter with the
optimal (δ̃, θ), a mechanism-level filter with the per-round parameters that maximise its rounds). A new
filter (any :class:`~lpdp.filters.Filter` subclass) is added with :func:`register_filter`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from lpdp import workload
from lpdp.errors import ParameterError
from lpdp.filters.baselines import BEST
from lpdp.filters.combined import combined_for_iid
from lpdp.filters.params import optimal_parameters
from lpdp.filters.realisation import Filter, RealisationFilter, UnionBoundFilter
from lpdp.mechanisms import Mechanism, Request, mechanism_from_dict, mixture

__all__ = ["FilterKind", "register_filter", "register_cycle_builder", "unregister_filter", "capped",
           "filter_kinds", "filter_label", "build_filter", "load_mechanism", "load_cycle",
           "workload_steps", "workload_mechanism", "workload_cycle", "ROUNDS"]

Pairs = Sequence[tuple[Hashable, Hashable]]
#: ``(steps, epsilon, delta, max_steps, pairs, model, parameters) -> Filter``.
CycleBuilder = Callable[..., Filter]


@dataclass(frozen=True)
class FilterKind:
    """A registered filter.

    Parameters
    ----------
    name : str
        The key (``lpdp filter ... --filter NAME``, JSON keys, scenario tables).
    label : str
        What figures and tables call it.
    level : {"realisation", "mechanism"}
        Whether it stops on the realised loss (a random stopping time) or on per-round worst cases
        (deterministic on i.i.d. rounds).
    build : callable
        ``build(mechanism, epsilon, delta, max_steps, pairs) -> Filter`` tuned for i.i.d. rounds.
    build_cycle : callable, optional
        ``build_cycle(steps, epsilon, delta, max_steps, pairs, model, parameters) -> Filter`` tuned for a
        declared cycle of ``(mechanism, request)`` steps (``model``: ``"declared"`` or ``"iid"``;
        ``parameters``: a realisation-level (δ̃, θ) given by hand, or ``None``). Without it the filter
        is not offered on cycles (:func:`lpdp.filters.cycle_filter` says so).
    """

    name: str
    label: str
    level: Literal["realisation", "mechanism"]
    build: Callable[[Mechanism, float, float, int, Pairs], Filter]
    build_cycle: CycleBuilder | None = None


_REGISTRY: dict[str, FilterKind] = {}


def register_filter(kind: FilterKind) -> FilterKind:
    """Add ``kind`` to the registry (its name must be new) and return it.

    Examples
    --------
    >>> [k.name for k in filter_kinds()][:2]
    ['realisation', 'union']
    """
    if kind.name in _REGISTRY:
        raise ParameterError(f"filter name={kind.name!r}: already registered")
    _REGISTRY[kind.name] = kind
    return kind


def unregister_filter(name: str) -> None:
    """Remove a filter added by :func:`register_filter` (tests)."""
    _REGISTRY.pop(name, None)


def register_cycle_builder(name: str, build_cycle: CycleBuilder) -> FilterKind:
    """Give the registered filter ``name`` its builder for declared cycles (see :class:`FilterKind`)."""
    if name not in _REGISTRY:
        raise ParameterError(f"filter={name!r}: must be one of {sorted(_REGISTRY)}")
    _REGISTRY[name] = dataclasses.replace(_REGISTRY[name], build_cycle=build_cycle)
    return _REGISTRY[name]


def filter_kinds(level: str | None = None) -> tuple[FilterKind, ...]:
    """The registered filters (all, or those of one ``level``), in registration order."""
    return tuple(k for k in _REGISTRY.values() if level is None or k.level == level)


def filter_label(name: str) -> str:
    """What figures and tables call the registered filter ``name`` (or the classical reference).

    Examples
    --------
    >>> filter_label("union"), filter_label("classical")
    ('union bound (lpdp)', 'classical composition (reference)')
    """
    if name in _REGISTRY:
        return _REGISTRY[name].label
    return "classical composition (reference)" if name == "classical" else name


def build_filter(name: str, mechanism: Mechanism, epsilon: float, delta: float, max_steps: int,
                 pairs: Pairs) -> Filter:
    """The registered filter ``name`` tuned for i.i.d. rounds of ``mechanism`` on ``pairs``.

    Raises :class:`~lpdp.filters.NotApplicableError` when the filter cannot charge this mechanism.

    Examples
    --------
    >>> from lpdp.mechanisms import GaussianMechanism
    >>> f = build_filter("renyi", GaussianMechanism(2.0), 6.0, 1e-3, 48, [(1, 0)])
    >>> f.iid_stopping_time(GaussianMechanism(2.0))
    7
    """
    if name not in _REGISTRY:
        raise ParameterError(f"filter={name!r}: must be one of {sorted(_REGISTRY)}")
    return _REGISTRY[name].build(mechanism, epsilon, delta, max_steps, tuple(pairs))


def _realisation(mechanism: Mechanism, epsilon: float, delta: float, n: int,
                 pairs: Pairs) -> Filter:
    p = optimal_parameters(delta, n, mechanism, inputs=pairs)
    return RealisationFilter(epsilon, delta, n, p.delta_tilde, p.theta, pairs)


def capped(f: Filter, max_steps: int, pairs: Pairs) -> Filter:
    """A tuned mechanism-level filter with the cap ``max_steps`` and the neighbouring ``pairs``."""
    return type(f)(**{**f.config(), "max_steps": max_steps}, pairs=pairs)


def _mechanism_level(name: str) -> Callable[[Mechanism, float, float, int, Pairs], Filter]:
    def build(mechanism: Mechanism, epsilon: float, delta: float, n: int, pairs: Pairs) -> Filter:
        return capped(BEST[name](mechanism, epsilon, delta, pairs).filter, n, pairs)  # each best has one

    return build


register_filter(FilterKind("realisation", "realisation-level (paper)", "realisation", _realisation))
register_filter(FilterKind("union", "union bound (lpdp)", "realisation",
                           lambda m, e, d, n, p: UnionBoundFilter(e, d, n, p)))
register_filter(FilterKind("combined", "realisation-level + Rényi (lpdp)", "realisation",
                           combined_for_iid))
for _name, _label in (("renyi", "Rényi (best order)"), ("concentrated", "concentrated (zCDP)"),
                      ("additive", "additive (best split)"), ("advanced", "advanced (Rogers et al.)")):
    register_filter(FilterKind(_name, _label, "mechanism", _mechanism_level(_name)))


Rounds = Literal["iid", "cyclic"]
#: How a workload of several different mechanisms is run (``lpdp filter ... --rounds``).
ROUNDS: tuple[str, ...] = ("iid", "cyclic")


def workload_steps(parts: Sequence[tuple[Mechanism, int]]) -> list[tuple[Mechanism, Request]]:
    """One period of a workload's rounds, in file order (entry ``i`` repeated ``times`` times), each on
    its worst-case neighbouring pair: the request maps database ``1`` to the mechanism's ``pair[0]`` (P)
    and database ``0`` to ``pair[1]`` (Q), so a filter checks the pair ``(1, 0)`` in both orders.

    Examples
    --------
    >>> from lpdp.mechanisms import GaussianMechanism, pure
    >>> [(m, r.values) for m, r in workload_steps([(GaussianMechanism(2.0), 2), (pure(1.0), 1)])]
    ... # doctest: +NORMALIZE_WHITESPACE
    [(GaussianMechanism(sigma=2.0, sensitivity=1.0), ((1, 1.0), (0, 0.0))),
     (GaussianMechanism(sigma=2.0, sensitivity=1.0), ((1, 1.0), (0, 0.0))),
     (DPMechanism([(1.0, 0.0)]), ((1, 0), (0, 1)))]
    """
    out = []
    for i, (mech, times) in enumerate(parts):
        try:
            p, q = mech.pair
        except ParameterError:
            raise ParameterError(f"mechanism[{i}] ({mech!r}): has no worst-case neighbouring pair to run "
                                 "in a filter") from None
        out += [(mech, Request(f"mechanism[{i}]", {1: p, 0: q}))] * times
    return out


def _workload(path: str | Path) -> tuple[list[tuple[Mechanism, int]], str]:
    source = f"--mechanism {str(path)!r}"
    return workload.parse(workload.read(path), source=source), source


def load_mechanism(path: str | Path, *, rounds: Rounds | None = None) -> Mechanism:
    """Read the mechanism of i.i.d. rounds from a JSON or TOML workload file of :mod:`lpdp.workload`
    (``[[mechanism]]`` tables, the form :meth:`~lpdp.mechanisms.Mechanism.to_dict` writes), or from one
    such table at the top level (``kind = ...``; the older ``type = ...`` tables are read with a one-line
    note). A workload of one mechanism (however many entries)
    is that mechanism; a workload of several needs ``rounds="iid"``: each round runs entry ``i`` with
    probability ``times_i / Σ times``, on its worst-case pair (:func:`workload_steps`), and releases which
    entry ran (:func:`lpdp.mechanisms.mixture`). For a cyclic sequence use :func:`load_cycle`.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> f = pathlib.Path(tempfile.mkdtemp()) / "m.toml"
    >>> _ = f.write_text('[[mechanism]]\\nkind = "randomized_response"\\ncategories = 4\\nepsilon = 0.7')
    >>> load_mechanism(f).probabilities(0).round(4).tolist()
    [0.4016, 0.1995, 0.1995, 0.1995]
    >>> _ = f.write_text('[[mechanism]]\\nkind = "pure"\\nepsilon = 1.0\\ntimes = 3\\n'
    ...                  '[[mechanism]]\\nkind = "randomized_response"\\ncategories = 2\\nepsilon = 0.5')
    >>> load_mechanism(f, rounds="iid").probabilities(1).round(4).tolist()
    [0.5483, 0.2017, 0.1556, 0.0944]
    """
    if rounds not in (None, *ROUNDS):
        raise ParameterError(f"rounds={rounds!r}: must be one of {', '.join(ROUNDS)}")
    data = workload.read(path)
    source = f"--mechanism {str(path)!r}"
    if "kind" in data or "type" in data:
        return mechanism_from_dict(data, source=source)
    return workload_mechanism(workload.parse(data, source=source), rounds=rounds, source=source)


def workload_mechanism(parts: Sequence[tuple[Mechanism, int]], *, rounds: Rounds | None = None,
                       source: str = "workload") -> Mechanism:
    """The mechanism of i.i.d. rounds of a parsed workload (:func:`lpdp.workload.parse`): its one
    mechanism, or with ``rounds="iid"`` the mixture that runs entry ``i`` with probability
    ``times_i / Σ times`` (see :func:`load_mechanism`).

    Examples
    --------
    >>> from lpdp.mechanisms import GaussianMechanism
    >>> workload_mechanism([(GaussianMechanism(2.0), 3), (GaussianMechanism(2.0), 1)])
    GaussianMechanism(sigma=2.0, sensitivity=1.0)
    """
    if rounds not in (None, *ROUNDS):
        raise ParameterError(f"rounds={rounds!r}: must be one of {', '.join(ROUNDS)}")
    distinct = list(dict.fromkeys(m for m, _ in parts))
    if len(distinct) == 1:
        return distinct[0]
    if rounds is None:
        raise ParameterError(f"{source}: the workload has {len(distinct)} different mechanisms; say how "
                             "rounds run: --rounds iid (each round one entry, drawn with weights ∝ times) "
                             "or --rounds cyclic (the entries in order, each `times` times, repeated)")
    if rounds == "cyclic":
        raise ParameterError(f"{source}: rounds='cyclic' is a sequence, not one mechanism: use "
                             "lpdp.filters.load_cycle")
    steps = workload_steps([(m, t) for m, t in parts if t > 0])
    counts: dict[tuple[Mechanism, Request], int] = {}
    for s in steps:
        counts[s] = counts.get(s, 0) + 1
    return mixture(list(counts), list(counts.values()))


def workload_cycle(parts: Sequence[tuple[Mechanism, int]], *,
                   source: str = "workload") -> list[tuple[Mechanism, Request]]:
    """One period of a parsed workload's cyclic rounds (:func:`workload_steps`, entries with
    ``times = 0`` left out); see :func:`load_cycle`."""
    steps = workload_steps([(m, t) for m, t in parts if t > 0])
    if not steps:
        raise ParameterError(f"{source}: every entry has times = 0; the cycle is empty")
    return steps


def load_cycle(path: str | Path) -> list[tuple[Mechanism, Request]]:
    """One period of a workload file's cyclic rounds (:func:`workload_steps`): the entries in file order,
    each ``times`` times, then again.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> f = pathlib.Path(tempfile.mkdtemp()) / "w.toml"
    >>> _ = f.write_text('[[mechanism]]\\nkind = "gaussian"\\nsigma = 2.0\\ntimes = 2\\n'
    ...                  '[[mechanism]]\\nkind = "laplace"\\nscale = 1.0')
    >>> [type(m).__name__ for m, _ in load_cycle(f)]
    ['GaussianMechanism', 'GaussianMechanism', 'LaplaceMechanism']
    """
    parts, source = _workload(path)
    return workload_cycle(parts, source=source)

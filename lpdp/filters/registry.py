"""One registry of filters: what ``lpdp filter --filter NAME``, the comparisons and the scenarios list.

Each entry builds a filter tuned for i.i.d. rounds of a mechanism (the realisation-level filter with the
optimal (δ̃, θ), a mechanism-level filter with the per-round parameters that maximise its rounds). A new
filter (any :class:`~lpdp.filters.Filter` subclass) is added with :func:`register_filter`.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from lpdp.errors import ParameterError
from lpdp.filters.baselines import BEST
from lpdp.filters.combined import combined_for_iid
from lpdp.filters.params import optimal_parameters
from lpdp.filters.realisation import Filter, RealisationFilter, UnionBoundFilter
from lpdp.mechanisms import Mechanism, mechanism_from_dict

__all__ = ["FilterKind", "register_filter", "filter_kinds", "build_filter", "load_mechanism"]

Pairs = Sequence[tuple[Hashable, Hashable]]


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
    """

    name: str
    label: str
    level: Literal["realisation", "mechanism"]
    build: Callable[[Mechanism, float, float, int, Pairs], Filter]


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


def filter_kinds(level: str | None = None) -> tuple[FilterKind, ...]:
    """The registered filters (all, or those of one ``level``), in registration order."""
    return tuple(k for k in _REGISTRY.values() if level is None or k.level == level)


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


def _mechanism_level(name: str) -> Callable[[Mechanism, float, float, int, Pairs], Filter]:
    def build(mechanism: Mechanism, epsilon: float, delta: float, n: int, pairs: Pairs) -> Filter:
        f = BEST[name](mechanism, epsilon, delta, pairs).filter  # every mechanism-level best has one
        return type(f)(**{**f.config(), "max_steps": n}, pairs=pairs)

    return build


register_filter(FilterKind("realisation", "realisation-level (paper)", "realisation", _realisation))
register_filter(FilterKind("union", "union bound (lpdp)", "realisation",
                           lambda m, e, d, n, p: UnionBoundFilter(e, d, n, p)))
register_filter(FilterKind("combined", "realisation-level + Rényi (lpdp)", "realisation",
                           combined_for_iid))
for _name, _label in (("renyi", "Rényi (best order)"), ("concentrated", "concentrated (zCDP)"),
                      ("additive", "additive (best split)"), ("advanced", "advanced (Rogers et al.)")):
    register_filter(FilterKind(_name, _label, "mechanism", _mechanism_level(_name)))


def load_mechanism(path: str | Path) -> Mechanism:
    """Read the mechanism of i.i.d. rounds from a JSON or TOML file: either a workload file of
    :mod:`lpdp.workload` (``[[mechanism]]`` tables; every entry must be the same mechanism, ``times`` is
    ignored), or the plain data of :meth:`~lpdp.mechanisms.Mechanism.to_dict` (``type = "finite"`` with
    ``table`` and ``outputs``, ``"gaussian"``, ``"laplace"``, ``"dp"``, ``"region"``).

    Examples
    --------
    >>> import pathlib, tempfile
    >>> f = pathlib.Path(tempfile.mkdtemp()) / "m.toml"
    >>> _ = f.write_text('[[mechanism]]\\nkind = "randomized_response"\\ncategories = 4\\nepsilon = 0.7')
    >>> load_mechanism(f).probabilities(0).round(4).tolist()
    [0.4016, 0.1995, 0.1995, 0.1995]
    """
    from lpdp import workload

    data = workload.read(path)
    source = f"--mechanism {str(path)!r}"
    if "type" in data:
        try:
            return mechanism_from_dict(data)
        except (KeyError, TypeError, ValueError) as exc:
            if isinstance(exc, ParameterError):
                raise
            raise ParameterError(f"{source}: malformed {data['type']!r} mechanism "
                                 f"({type(exc).__name__}: {exc})") from None
    distinct = list(dict.fromkeys(m for m, _ in workload.parse(data, source=source)))
    if len(distinct) != 1:
        raise ParameterError(f"{source}: the workload has {len(distinct)} different mechanisms; lpdp "
                             "filter runs i.i.d. rounds of one (for a declared sequence of several, see "
                             "lpdp.filters.adaptive.sequence_parameters)")
    return distinct[0]

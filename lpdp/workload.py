"""Workloads as data: a list of mechanisms and how often each runs, from TOML, JSON or the command line.

A workload file has one ``[[mechanism]]`` table per mechanism (JSON: ``{"mechanism": [{...}, ...]}``)::

    [[mechanism]]
    kind = "dp"                 # meets several (ε, δ) guarantees at once
    constraints = [[1.0, 0.0], [0.5, 0.1]]
    times = 10
    [[mechanism]]
    kind = "gaussian"
    sigma = 3.0                 # sensitivity 1 unless given
    times = 50

Kinds and their keys (``times`` defaults to 1 everywhere):

============================ ==================================================================
``dp``                       ``constraints``: the ``[ε, δ]`` pairs met at once
``pure``                     ``epsilon``
``gaussian``                 ``sigma``, optional ``sensitivity`` (1)
``laplace``                  ``scale``, optional ``sensitivity`` (1)
``randomized_response``      ``categories``, ``epsilon``
``finite``                   ``p``, ``q``: the output distributions on a neighbouring pair
``region``                   ``vertices`` (``[type I, type II]`` points) or ``constraints``
``subsampled``               ``rate``, ``mechanism`` (a table of any other kind), optional ``scheme``
                             (``poisson``) and ``relation`` (``add_remove``)
``dpsgd``                    ``noise_multiplier``; ``sampling_rate`` or ``batch_size`` and
                             ``dataset_size``; ``steps`` or ``epochs`` (instead of ``times``)
============================ ==================================================================

:func:`report` turns a :class:`~lpdp.accountant.Guarantee` into the plain data that ``lpdp account`` and
the ``account`` scenarios print, so both show the same numbers.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from lpdp._limits import check_budget, seconds_for
from lpdp._schema import Field, validate
from lpdp._validate import check_int, read_document
from lpdp.accountant import Accountant, Guarantee
from lpdp.display import format_lower, format_upper
from lpdp.errors import LpdpError, ParameterError, ScenarioError
from lpdp.mechanisms import (
    DPMechanism,
    FiniteMechanism,
    GaussianMechanism,
    LaplaceMechanism,
    Mechanism,
    RegionMechanism,
    pure,
    randomized_response,
    subsampled,
)
from lpdp.region import PrivacyRegion
from lpdp.sgd import dpsgd_mechanism, dpsgd_steps

__all__ = ["KINDS", "MECHANISM", "register_kind", "unregister_kind", "mechanism_from_entry", "parse",
           "read", "load", "accountant", "report", "regions", "summary"]

#: Keys of one ``[[mechanism]]`` table (which ones a kind needs: :data:`KINDS`).
MECHANISM: dict[str, Field] = {
    "kind": Field("str", "the mechanism's kind (KINDS: dp, pure, gaussian, laplace, randomized_response, "
                  "finite, region, subsampled, dpsgd, and any registered with register_kind)", required=True),
    "times": Field("int", "how many times the mechanism runs", default=1),
    "constraints": Field("list[pair]", "dp, region: the [epsilon, delta] guarantees met at once"),
    "epsilon": Field("float", "pure, randomized_response: epsilon"),
    "sigma": Field("float", "gaussian: standard deviation of the noise"),
    "scale": Field("float", "laplace: scale of the noise"),
    "sensitivity": Field("float", "gaussian, laplace: sensitivity (default 1)", default=1.0),
    "categories": Field("int", "randomized_response: number of categories k >= 2"),
    "p": Field("list[float]", "finite: output distribution on one input"),
    "q": Field("list[float]", "finite: output distribution on its neighbour"),
    "vertices": Field("list[pair]", "region: [type I, type II] points of the region's boundary"),
    "rate": Field("float", "subsampled: probability that each record is in the subsample, in (0, 1]"),
    "mechanism": Field("table", "subsampled: the mechanism run on the subsample (a table with its kind)"),
    "scheme": Field("str", "subsampled: the sampling scheme (poisson)", default="poisson"),
    "relation": Field("str", "subsampled: the neighbouring relation (add_remove)"),
    "noise_multiplier": Field("float", "dpsgd: noise standard deviation over the clipping norm"),
    "sampling_rate": Field("float", "dpsgd: Poisson sampling rate, in (0, 1]"),
    "batch_size": Field("int", "dpsgd: expected batch size (with dataset_size)"),
    "dataset_size": Field("int", "dpsgd: number of examples (with batch_size)"),
    "steps": Field("int", "dpsgd: number of steps"),
    "epochs": Field("float", "dpsgd: number of epochs (steps = ceil(epochs / rate))"),
}

#: For each kind: the keys it needs, and the optional ones it accepts (beyond ``kind`` and ``times``).
KINDS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {}
#: For each kind: the function building its mechanism from the validated table.
_BUILDERS: dict[str, Callable[[Mapping[str, Any]], Mechanism]] = {}


def register_kind(kind: str, build: Callable[[Mapping[str, Any]], Mechanism], *,
                  needed: Sequence[str] = (), optional: Sequence[str] = (),
                  fields: Mapping[str, Field] | None = None) -> None:
    """Add a ``[[mechanism]]`` kind: workload files, scenarios, ``lpdp account WORKLOAD`` and
    ``lpdp filter ... --mechanism FILE`` then read it.

    Parameters
    ----------
    kind : str
        The table's ``kind`` (new).
    build : callable
        ``build(values) -> Mechanism``; ``values`` maps every key of :data:`MECHANISM` to its validated
        value (or its default); raise :class:`~lpdp.errors.ParameterError` for a bad one.
    needed, optional : sequence of str
        The keys the kind requires and accepts (beyond ``kind`` and ``times``).
    fields : mapping of str to Field, optional
        The schema of keys :data:`MECHANISM` does not have yet (a key already there keeps its schema).

    Examples
    --------
    >>> from lpdp._schema import Field
    >>> from lpdp.mechanisms import pure
    >>> register_kind("pure_twice", lambda v: pure(2 * v["epsilon"]), needed=("epsilon",))
    >>> parse({"mechanism": [{"kind": "pure_twice", "epsilon": 0.25}]})
    [(DPMechanism([(0.5, 0.0)]), 1)]
    >>> unregister_kind("pure_twice")
    """
    if not isinstance(kind, str) or not kind or kind in KINDS:
        raise ParameterError(f"kind={kind!r}: must be a new, non-empty name (known: {', '.join(KINDS)})")
    new = dict(fields or {})
    for key in (*needed, *optional):
        if key in ("kind", "times"):
            raise ParameterError(f"kind={kind!r}: key {key!r} is every kind's own")
        if key not in MECHANISM and key not in new:
            raise ParameterError(f"kind={kind!r}: key {key!r} has no schema; give "
                                 f"fields={{{key!r}: Field(...)}}")
    for key, spec in new.items():
        MECHANISM.setdefault(key, spec)
    KINDS[kind] = (tuple(needed), tuple(optional))
    _BUILDERS[kind] = build


def unregister_kind(kind: str) -> None:
    """Remove a kind added by :func:`register_kind` (tests; the keys it added stay in the schema)."""
    KINDS.pop(kind, None)
    _BUILDERS.pop(kind, None)


def _region(v: Mapping[str, Any]) -> Mechanism:
    if (v["vertices"] is None) == (v["constraints"] is None):
        raise ParameterError("give exactly one of 'vertices' and 'constraints'")
    return RegionMechanism(PrivacyRegion.from_vertices(v["vertices"]) if v["vertices"] is not None
                           else PrivacyRegion.from_constraints(v["constraints"]))


register_kind("dp", lambda v: DPMechanism(v["constraints"]), needed=("constraints",))
register_kind("pure", lambda v: pure(v["epsilon"]), needed=("epsilon",))
register_kind("gaussian", lambda v: GaussianMechanism(v["sigma"], v["sensitivity"]), needed=("sigma",),
              optional=("sensitivity",))
register_kind("laplace", lambda v: LaplaceMechanism(v["scale"], v["sensitivity"]), needed=("scale",),
              optional=("sensitivity",))
register_kind("randomized_response", lambda v: randomized_response(v["categories"], v["epsilon"]),
              needed=("categories", "epsilon"))
register_kind("finite", lambda v: FiniteMechanism.from_pair(v["p"], v["q"]), needed=("p", "q"))
register_kind("region", _region, optional=("vertices", "constraints"))


def _subsampled(v: Mapping[str, Any]) -> Mechanism:
    inner, times = mechanism_from_entry(v["mechanism"], source="the table", where="mechanism")
    if times != 1:
        raise ParameterError(f"mechanism.times={times}: the subsampled mechanism's table has no count "
                             "(give times on the subsampled entry)")
    return subsampled(inner, v["rate"], v["scheme"], v["relation"])


register_kind("subsampled", _subsampled, needed=("rate", "mechanism"), optional=("scheme", "relation"))
register_kind("dpsgd", lambda v: dpsgd_mechanism(v["noise_multiplier"], v["sampling_rate"],
                                                 batch_size=v["batch_size"], dataset_size=v["dataset_size"]),
              needed=("noise_multiplier",), optional=("sampling_rate", "batch_size", "dataset_size", "steps",
                                                      "epochs"))


def mechanism_from_entry(entry: Mapping[str, Any], *, source: str = "workload",
                         where: str = "mechanism[0]") -> tuple[Mechanism, int]:
    """One ``[[mechanism]]`` table as ``(mechanism, times)``; errors name the source, entry and key.

    Examples
    --------
    >>> from lpdp.workload import mechanism_from_entry
    >>> mechanism_from_entry({"kind": "gaussian", "sigma": 3.0, "times": 50})
    (GaussianMechanism(sigma=3.0, sensitivity=1.0), 50)
    """
    if not isinstance(entry, Mapping):
        raise ScenarioError(f"{source}: {where} = {entry!r} must be a table")
    kind = entry.get("kind")
    if not isinstance(kind, str) or kind not in KINDS:
        raise ScenarioError(f"{source}: {where}.kind = {kind!r} must be one of {', '.join(KINDS)}")
    needed, optional = KINDS[kind]
    for key in entry:
        if key not in ("kind", "times", *needed, *optional):
            allowed = ", ".join(("times", *needed, *optional))
            raise ScenarioError(f"{source}: key '{where}.{key}' is not used by kind {kind!r} "
                                f"(its keys: {allowed})")
    for key in needed:
        if key not in entry:
            raise ScenarioError(f"{source}: missing required key '{where}.{key}' ({MECHANISM[key].doc})")
    values = validate(entry, MECHANISM, source=source, prefix=f"{where}.")
    try:
        mech = _BUILDERS[kind](values)
        if kind == "dpsgd":
            if "times" in entry:
                raise ParameterError("times: a dpsgd entry counts steps (give steps or epochs)")
            times = dpsgd_steps(mech.rate, values["steps"], values["epochs"])
        else:
            times = check_int(values["times"], "times", 0)
    except LpdpError as exc:
        raise ScenarioError(f"{source}: {where} ({kind}): {exc}") from None
    return mech, times


#: Estimated operations to validate and build one distinct entry (a DP region is built at once, ~2 ms),
#: and the number of distinct entries above which reading them shows a progress bar (on a terminal).
ENTRY_OPS, PROGRESS_ENTRIES = 1e5, 5000


def parse(data: Mapping[str, Any], *, source: str = "workload") -> list[tuple[Mechanism, int]]:
    """The ``(mechanism, times)`` pairs of a workload given as plain data (``{"mechanism": [...]}``).

    Examples
    --------
    >>> from lpdp.workload import parse
    >>> parse({"mechanism": [{"kind": "pure", "epsilon": 0.5, "times": 3}]})
    [(DPMechanism([(0.5, 0.0)]), 3)]
    """
    if not isinstance(data, Mapping) or not isinstance(data.get("mechanism"), list) \
            or not data["mechanism"]:
        raise ScenarioError(f"{source}: expected a non-empty list of [[mechanism]] tables")
    extra = sorted(set(data) - {"mechanism"})
    if extra:
        raise ScenarioError(f"{source}: unknown key {extra[0]!r} (a workload has only [[mechanism]] tables)")
    entries = data["mechanism"]
    keys = [repr(e) for e in entries]     # equal entries are validated and built once
    distinct = len(set(keys))
    check_budget(f"{source}: {len(entries)} mechanism entries ({distinct} distinct)",
                 seconds=seconds_for(ENTRY_OPS * distinct))
    built: dict[str, tuple[Mechanism, int]] = {}
    steps: Any = enumerate(entries)
    if distinct > PROGRESS_ENTRIES:
        from tqdm import tqdm

        steps = tqdm(steps, total=len(entries), desc=f"reading {source}", unit="entry", file=sys.stderr,
                     disable=not sys.stderr.isatty())
    for i, e in steps:
        if keys[i] not in built:
            built[keys[i]] = mechanism_from_entry(e, source=source, where=f"mechanism[{i}]")
    return [built[k] for k in keys]


def read(path: str | Path) -> dict[str, Any]:
    """The plain data of a workload file (``.toml`` or ``.json``), not yet validated (see :func:`parse`)."""
    path = Path(path)
    source = str(path)
    if path.suffix.lower() not in (".toml", ".json"):
        raise ScenarioError(f"{source}: a workload file must end in .toml or .json")
    data = read_document(path, what="workload file")
    if not isinstance(data, dict):
        raise ScenarioError(f"{source}: expected a table with [[mechanism]] entries")
    return data


def load(path: str | Path) -> list[tuple[Mechanism, int]]:
    """Read and validate a workload file (``.toml`` or ``.json``): its ``(mechanism, times)`` pairs."""
    return parse(read(path), source=str(path))


def accountant(parts: Sequence[tuple[Mechanism, int]]) -> Accountant:
    """An :class:`~lpdp.Accountant` with every ``(mechanism, times)`` composed."""
    acc = Accountant()
    counts: dict[int, list[Any]] = {}      # the same entry read many times is one mechanism object
    for mech, times in parts:
        counts.setdefault(id(mech), [mech, 0])[1] += times
    for mech, times in counts.values():
        acc.compose(mech, times)
    return acc


def report(guarantee: Guarantee, at: Sequence[float] = (), for_delta: Sequence[float] = ()
           ) -> dict[str, Any]:
    """Plain data of a guarantee: δ at each ε, ε for each δ (each ``lower``/``upper``), ``exact``, route.

    Examples
    --------
    >>> from lpdp.workload import accountant, parse, report
    >>> g = accountant(parse({"mechanism": [{"kind": "pure", "epsilon": 1.0, "times": 2}]})).guarantee()
    >>> r = report(g, at=[2.0], for_delta=[0.0])
    >>> r["delta_at"], r["exact"]
    ([{'epsilon': 2.0, 'lower': 0.0, 'upper': 0.0}], True)
    >>> [(e["delta"], round(e["lower"], 12), e["upper"]) for e in r["epsilon_for"]]   # lower rounded down
    [(0.0, 2.0, 2.0)]
    """
    at_lo, at_hi = guarantee.delta(np.asarray(at, dtype=float))
    fd_lo, fd_hi = guarantee.epsilon(np.asarray(for_delta, dtype=float))
    return {
        "delta_at": [{"epsilon": float(e), "lower": float(lo), "upper": float(hi)}
                     for e, lo, hi in zip(at, np.atleast_1d(at_lo), np.atleast_1d(at_hi), strict=True)],
        "epsilon_for": [{"delta": float(d), "lower": float(lo), "upper": float(hi)}
                        for d, lo, hi in zip(for_delta, np.atleast_1d(fd_lo), np.atleast_1d(fd_hi),
                                             strict=True)],
        "exact": guarantee.exact,
        "route": guarantee.route,
        "relation": guarantee.relation,
        "scheme": guarantee.scheme,
    }


def regions(guarantee: Guarantee) -> dict[str, PrivacyRegion]:
    """Labelled regions to plot or export: the exact composition, or both sides when they are regions
    (empty when a side is not a region, e.g. a Gaussian's ``G_μ`` or the certified engine's bracket)."""
    if guarantee.exact and isinstance(guarantee.upper, PrivacyRegion):
        return {"composition (exact)": guarantee.upper}
    if isinstance(guarantee.upper, PrivacyRegion) and isinstance(guarantee.lower, PrivacyRegion):
        return {"guarantee (upper)": guarantee.upper, "attack bound (lower)": guarantee.lower}
    return {}


def summary(data: Mapping[str, Any]) -> list[str]:
    """Readable lines of a :func:`report`: guarantees rounded up, attack bounds rounded down."""
    lines = [f"composition {'exact' if data['exact'] else 'bracketed'} (route: {data['route']})"]
    if data.get("relation") is not None:
        lines.append(f"neighbouring relation: {data['relation']}, sampling: {data['scheme']}")
    for row in data["delta_at"]:
        lines.append(_line(f"delta at eps={row['epsilon']:g}", row))
    for row in data["epsilon_for"]:
        lines.append(_line(f"eps for delta={row['delta']:g}", row))
    return lines


def _line(label: str, row: Mapping[str, float]) -> str:
    if row["lower"] == row["upper"]:
        return f"{label}: {format_upper(row['upper'])}"
    return (f"{label}: at most {format_upper(row['upper'])} (guarantee); an attack reaches "
            f"{format_lower(row['lower'])}")

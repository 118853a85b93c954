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

The tables are the one data form of a mechanism (:meth:`~lpdp.mechanisms.Mechanism.to_dict` writes
them; their kinds and keys: :mod:`lpdp.mechanisms.registry`, whose :func:`register_kind` and
:func:`mechanism_from_entry` this module re-exports). This module adds the kind ``dpsgd``:
``noise_multiplier``; ``sampling_rate`` or ``batch_size`` and ``dataset_size``; ``steps`` or ``epochs``
(instead of ``times``); optional ``scheme`` (``fixed_size``: ``batch_size`` out of ``dataset_size``
without replacement, replace-one neighbours).

:func:`report` turns a :class:`~lpdp.accountant.Guarantee` into the plain data that ``lpdp account`` and
the ``account`` scenarios print, so both show the same numbers.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from lpdp._limits import check_budget, seconds_for
from lpdp._schema import Field
from lpdp._validate import read_document
from lpdp.accountant import Accountant, Guarantee
from lpdp.display import format_lower, format_upper
from lpdp.errors import ScenarioError
from lpdp.mechanisms import (
    KINDS,
    MECHANISM,
    Mechanism,
    mechanism_from_entry,
    register_kind,
    unregister_kind,
)
from lpdp.region import PrivacyRegion
from lpdp.sgd import dpsgd_mechanism, dpsgd_steps

__all__ = ["KINDS", "MECHANISM", "register_kind", "unregister_kind", "mechanism_from_entry", "parse",
           "read", "load", "accountant", "report", "regions", "summary"]

def _dpsgd_steps(v: Mapping[str, Any], mech: Mechanism) -> int:
    return dpsgd_steps(mech.rate, v["steps"], v["epochs"])  # type: ignore[attr-defined]


register_kind("dpsgd", lambda v: dpsgd_mechanism(v["noise_multiplier"], v["sampling_rate"],
                                                 batch_size=v["batch_size"], dataset_size=v["dataset_size"],
                                                 scheme=v["scheme"]),
              needed=("noise_multiplier",), optional=("sampling_rate", "batch_size", "dataset_size", "steps",
                                                      "epochs", "scheme"),
              fields={
                  "noise_multiplier": Field("float", "dpsgd: noise standard deviation over the clipping "
                                            "norm"),
                  "sampling_rate": Field("float", "dpsgd: Poisson sampling rate, in (0, 1]"),
                  "batch_size": Field("int", "dpsgd: expected batch size (with dataset_size)"),
                  "dataset_size": Field("int", "dpsgd: number of examples (with batch_size)"),
                  "steps": Field("int", "dpsgd: number of steps"),
                  "epochs": Field("float", "dpsgd: number of epochs (steps = ceil(epochs / rate))"),
              }, times=_dpsgd_steps)


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


#: The ``relation`` of a result whose mechanisms fix none (no sampling): the guarantee holds for every
#: neighbouring relation under which the mechanisms' sensitivities (or dominating pairs) are stated.
UNSAMPLED_RELATION = "any"


def report(guarantee: Guarantee, at: Sequence[float] = (), for_delta: Sequence[float] = ()
           ) -> dict[str, Any]:
    """Plain data of a guarantee: δ at each ε, ε for each δ (each ``lower``/``upper``), ``exact``, route,
    the neighbouring relation and the sampling scheme (:data:`UNSAMPLED_RELATION` and ``"none"`` without
    sampling).

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
        "relation": guarantee.relation or UNSAMPLED_RELATION,
        "scheme": guarantee.scheme or "none",
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
    relation = data.get("relation") or UNSAMPLED_RELATION
    said = (f"{relation} (whichever the mechanisms' sensitivities and pairs are stated for)"
            if relation == UNSAMPLED_RELATION else relation)
    lines.append(f"neighbouring relation: {said}, sampling: {data.get('scheme') or 'none'}")
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

"""Mechanisms as plain data: the ``[[mechanism]]`` table (``kind = ...``) that workload files, filter
mechanism files, scenarios, filter transcripts and JSON output all use, and the one parser reading it.

:meth:`~lpdp.mechanisms.Mechanism.to_dict` writes a table of this form (without ``times``);
:func:`mechanism_from_entry` reads one (with ``times``), :func:`mechanism_from_dict` rebuilds the
mechanism alone. :func:`register_kind` adds a kind. Tables of the older form (``type = ...``) are still
read, with a one-line note.

Kinds and their keys (``times`` defaults to 1 everywhere):

============================ ==================================================================
``dp``                       ``constraints``: the ``[ε, δ]`` pairs met at once
``pure``                     ``epsilon``
``gaussian``                 ``sigma``, optional ``sensitivity`` (1)
``laplace``                  ``scale``, optional ``sensitivity`` (1)
``randomized_response``      ``categories``, ``epsilon``
``finite``                   ``p``, ``q``: the output distributions on a neighbouring pair; or
                             ``table`` (``[input, [probabilities]]`` rows), optional ``outputs``
                             and ``pair``
``region``                   ``vertices`` (``[type I, type II]`` points), ``constraints``, or the
                             edges' log masses ``losses``, ``log_p``, ``log_q`` (optional
                             ``log_p_inf``, ``log_q_ninf``)
``mixture``                  ``weights``, ``components`` (``{mechanism, request}`` tables)
``subsampled``               ``rate``, ``mechanism`` (a table of any other kind), optional ``scheme``
                             (``poisson`` or ``fixed_size``) and ``relation`` (``add_remove``,
                             ``replace_one``: the one that fits the scheme)
``sampled``, ``tradeoff``    ``name`` (rebuilt from the caller's ``named`` mechanisms only)
============================ ==================================================================

:mod:`lpdp.workload` adds ``dpsgd`` (``noise_multiplier``; ``sampling_rate`` or ``batch_size`` and
``dataset_size``; ``steps`` or ``epochs`` instead of ``times``; optional ``scheme``).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from lpdp._schema import Field, validate
from lpdp._validate import check_int
from lpdp.errors import LpdpError, ParameterError, ScenarioError
from lpdp.mechanisms.base import Mechanism, Request, Step, hashable
from lpdp.mechanisms.finite import DPMechanism, FiniteMechanism, RegionMechanism, pure, randomized_response
from lpdp.mechanisms.gaussian import GaussianMechanism
from lpdp.mechanisms.laplace import LaplaceMechanism
from lpdp.mechanisms.mixture import MixtureMechanism
from lpdp.mechanisms.subsampled import subsampled
from lpdp.region import PrivacyRegion

__all__ = ["KINDS", "MECHANISM", "register_kind", "unregister_kind", "mechanism_from_entry",
           "mechanism_from_dict", "step_from_dict"]

#: Keys of one ``[[mechanism]]`` table (which ones a kind needs: :data:`KINDS`).
MECHANISM: dict[str, Field] = {
    "kind": Field("str", "the mechanism's kind (KINDS: dp, pure, gaussian, laplace, randomized_response, "
                  "finite, region, mixture, subsampled, dpsgd, and any registered with register_kind)",
                  required=True),
    "times": Field("int", "how many times the mechanism runs", default=1),
    "constraints": Field("list[pair]", "dp, region: the [epsilon, delta] guarantees met at once"),
    "epsilon": Field("float", "pure, randomized_response: epsilon"),
    "sigma": Field("float", "gaussian: standard deviation of the noise"),
    "scale": Field("float", "laplace: scale of the noise"),
    "sensitivity": Field("float", "gaussian, laplace: sensitivity (default 1)", default=1.0),
    "categories": Field("int", "randomized_response: number of categories k >= 2"),
    "p": Field("list[float]", "finite: output distribution on one input"),
    "q": Field("list[float]", "finite: output distribution on its neighbour"),
    "table": Field("list", "finite: one [input, [probabilities]] row per input"),
    "outputs": Field("list", "finite: the output labels, one per column of table (default 0 .. K-1)"),
    "pair": Field("list", "finite: the [value, other] inputs of table the accountant composes"),
    "vertices": Field("list[pair]", "region: [type I, type II] points of the region's boundary"),
    "losses": Field("list[float]", "region: the privacy losses of its edges (with log_p, log_q)"),
    "log_p": Field("list[float]", "region: log P-mass of each loss"),
    "log_q": Field("list[float]", "region: log Q-mass of each loss"),
    "log_p_inf": Field("float", "region: log P-mass at loss +inf (default: none)"),
    "log_q_ninf": Field("float", "region: log Q-mass at loss -inf (default: none)"),
    "weights": Field("list[float]", "mixture: the probability (or weight) of each component"),
    "components": Field("list[table]", "mixture: {mechanism, request} tables, one per component"),
    "name": Field("str", "sampled, tradeoff: the name of a mechanism the caller supplies"),
    "rate": Field("float", "subsampled: probability that each record is in the subsample, in (0, 1]"),
    "mechanism": Field("table", "subsampled: the mechanism run on the subsample (a table with its kind)"),
    "scheme": Field("str", "subsampled, dpsgd: the sampling scheme (poisson, or fixed_size: batches drawn "
                           "without replacement)", default="poisson"),
    "relation": Field("str", "subsampled: the neighbouring relation (add_remove for poisson, replace_one "
                             "for fixed_size)"),
}

#: For each kind: the keys it needs, and the optional ones it accepts (beyond ``kind`` and ``times``).
KINDS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {}

Named = Mapping[str, Mechanism] | None
#: For each kind: its builder ``(values, named) -> Mechanism``, and for kinds that count their own runs
#: (``times`` refused) the count ``(values, mechanism) -> int``.
_BUILDERS: dict[str, Callable[[Mapping[str, Any], Named], Mechanism]] = {}
_COUNTS: dict[str, Callable[[Mapping[str, Any], Mechanism], int]] = {}


def register_kind(kind: str, build: Callable[[Mapping[str, Any]], Mechanism], *,
                  needed: Sequence[str] = (), optional: Sequence[str] = (),
                  fields: Mapping[str, Field] | None = None,
                  times: Callable[[Mapping[str, Any], Mechanism], int] | None = None) -> None:
    """Add a ``[[mechanism]]`` kind: workload files, scenarios, ``lpdp account WORKLOAD``,
    ``lpdp filter ... --mechanism FILE`` and :func:`mechanism_from_dict` then read it.

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
    times : callable, optional
        ``times(values, mechanism) -> int``: how many times the entry runs, for a kind that counts its
        runs in its own keys (its tables then refuse the ``times`` key).

    Examples
    --------
    >>> from lpdp.mechanisms import pure
    >>> register_kind("pure_twice", lambda v: pure(2 * v["epsilon"]), needed=("epsilon",))
    >>> mechanism_from_entry({"kind": "pure_twice", "epsilon": 0.25, "times": 3})
    (DPMechanism([(0.5, 0.0)]), 3)
    >>> unregister_kind("pure_twice")
    """
    _register(kind, lambda v, _named: build(v), needed=needed, optional=optional, fields=fields,
              times=times)


def _register(kind: str, build: Callable[[Mapping[str, Any], Named], Mechanism], *,
              needed: Sequence[str] = (), optional: Sequence[str] = (),
              fields: Mapping[str, Field] | None = None,
              times: Callable[[Mapping[str, Any], Mechanism], int] | None = None) -> None:
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
    if times is not None:
        _COUNTS[kind] = times


def unregister_kind(kind: str) -> None:
    """Remove a kind added by :func:`register_kind` (tests; the keys it added stay in the schema)."""
    KINDS.pop(kind, None)
    _BUILDERS.pop(kind, None)
    _COUNTS.pop(kind, None)


def mechanism_from_entry(entry: Mapping[str, Any], *, source: str = "workload",
                         where: str = "mechanism[0]", named: Named = None) -> tuple[Mechanism, int]:
    """One ``[[mechanism]]`` table as ``(mechanism, times)``; errors name the source, entry and key.

    ``named`` supplies the mechanisms of ``sampled`` and ``tradeoff`` tables by name.

    Examples
    --------
    >>> mechanism_from_entry({"kind": "gaussian", "sigma": 3.0, "times": 50})
    (GaussianMechanism(sigma=3.0, sensitivity=1.0), 50)
    """
    if not isinstance(entry, Mapping):
        raise ScenarioError(f"{source}: {where} = {entry!r} must be a table")
    if "type" in entry and "kind" not in entry:
        entry = _from_type_table(entry, source=source, where=where)
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
        mech = _BUILDERS[kind](values, named)
        if kind in _COUNTS:
            if "times" in entry:
                raise ParameterError(f"times: a {kind} entry counts its runs in its own keys "
                                     f"({', '.join(optional)})")
            times = _COUNTS[kind](values, mech)
        else:
            times = check_int(values["times"], "times", 0)
    except LpdpError as exc:
        raise ScenarioError(f"{source}: {where} ({kind}): {exc}") from None
    except (KeyError, TypeError, ValueError) as exc:
        raise ScenarioError(f"{source}: {where} ({kind}): malformed ({type(exc).__name__}: {exc})") from None
    return mech, times


def mechanism_from_dict(data: Mapping[str, Any], named: Named = None, *,
                        source: str = "mechanism data") -> Mechanism:
    """Rebuild a mechanism from its :meth:`Mechanism.to_dict` table (any ``[[mechanism]]`` table;
    ``named`` supplies ``sampled`` and ``tradeoff`` ones by name); bad data raises
    :class:`~lpdp.errors.ParameterError`.

    Examples
    --------
    >>> mechanism_from_dict({"kind": "gaussian", "sigma": 2.0, "sensitivity": 1.0})
    GaussianMechanism(sigma=2.0, sensitivity=1.0)
    >>> m = randomized_response(3, 0.5)
    >>> mechanism_from_dict(m.to_dict()) == m
    True
    """
    try:
        return mechanism_from_entry(data, source=source, where="mechanism", named=named)[0]
    except ScenarioError as exc:
        raise ParameterError(str(exc)) from None


def step_from_dict(data: Mapping[str, Any], named: Named = None, *, source: str = "mechanism data",
                   where: str = "step") -> Step:
    """Inverse of :func:`~lpdp.mechanisms.base.step_to_dict` (a missing ``request`` is ``None``)."""
    if not isinstance(data, Mapping) or "mechanism" not in data \
            or not set(data) <= {"mechanism", "request"}:
        raise ScenarioError(f"{source}: {where} = {data!r} must be a table with 'mechanism' and "
                            "optionally 'request'")
    request = data.get("request")
    mech, _ = mechanism_from_entry(data["mechanism"], source=source, where=f"{where}.mechanism",
                                   named=named)
    return mech, None if request is None else Request.from_dict(request)


# ---------------------------------------------------------------------------- the older form
def _from_type_table(data: Mapping[str, Any], *, source: str, where: str) -> dict[str, Any]:
    """A ``type = ...`` table (the form before the ``[[mechanism]]`` tables) in the ``kind`` form."""
    warnings.warn(f"{source}: {where} is a 'type' table (read as before); write it as a [[mechanism]] "
                  f"table, kind = {data['type']!r} (to_dict's form)", FutureWarning, stacklevel=2)
    return _kind_form(data)


def _kind_form(data: Mapping[str, Any]) -> dict[str, Any]:
    if not isinstance(data, Mapping) or "type" not in data:
        return data  # type: ignore[return-value]
    out = {"kind": data["type"], **{k: v for k, v in data.items() if k != "type" and v is not None}}
    if "mechanism" in out:
        out["mechanism"] = _kind_form(out["mechanism"])
    if out["kind"] == "mixture" and isinstance(out.get("steps"), list):
        out["components"] = [{k: _kind_form(v) if k == "mechanism" else v for k, v in s.items()
                              if v is not None} if isinstance(s, Mapping) else s for s in out.pop("steps")]
    return out


# ---------------------------------------------------------------------------- the library's kinds
def _finite(v: Mapping[str, Any]) -> Mechanism:
    if (v["table"] is None) == (v["p"] is None or v["q"] is None):
        raise ParameterError("give either 'p' and 'q' or 'table'")
    if v["table"] is None:
        return FiniteMechanism.from_pair(v["p"], v["q"])
    if v["p"] is not None or v["q"] is not None:
        raise ParameterError("give either 'p' and 'q' or 'table', not both")
    return FiniteMechanism({hashable(x): p for x, p in v["table"]},
                           None if v["outputs"] is None else [hashable(y) for y in v["outputs"]],
                           pair=None if v["pair"] is None else tuple(hashable(x) for x in v["pair"]))


def _log(x: float | None) -> float:
    return -math.inf if x is None else float(x)


def _region(v: Mapping[str, Any]) -> Mechanism:
    given = [k for k in ("vertices", "constraints", "losses") if v[k] is not None]
    if len(given) != 1:
        raise ParameterError("give exactly one of 'vertices', 'constraints' and 'losses' (with 'log_p' "
                             f"and 'log_q'); given: {', '.join(given) or 'none'}")
    if v["vertices"] is not None:
        return RegionMechanism(PrivacyRegion.from_vertices(v["vertices"]))
    if v["constraints"] is not None:
        return RegionMechanism(PrivacyRegion.from_constraints(v["constraints"]))
    if v["log_p"] is None or v["log_q"] is None:
        raise ParameterError("losses: give 'log_p' and 'log_q' with it")
    return RegionMechanism(PrivacyRegion.from_log_masses(
        v["losses"], v["log_p"], v["log_q"], log_p_inf=_log(v["log_p_inf"]),
        log_q_ninf=_log(v["log_q_ninf"]), check_total=False))


def _mixture(v: Mapping[str, Any], named: Named) -> Mechanism:
    steps = [step_from_dict(c, named, source="mixture", where=f"components[{i}]")
             for i, c in enumerate(v["components"])]
    return MixtureMechanism(steps, v["weights"])


def _subsampled(v: Mapping[str, Any], named: Named) -> Mechanism:
    inner, times = mechanism_from_entry(v["mechanism"], source="the table", where="mechanism", named=named)
    if times != 1:
        raise ParameterError(f"mechanism.times={times}: the subsampled mechanism's table has no count "
                             "(give times on the subsampled entry)")
    return subsampled(inner, v["rate"], v["scheme"], v["relation"])


def _named(kind: str) -> Callable[[Mapping[str, Any], Named], Mechanism]:
    def build(v: Mapping[str, Any], named: Named) -> Mechanism:
        if named is None or v["name"] not in named:
            raise ParameterError(f"mechanism {v['name']!r}: a {kind} mechanism cannot be rebuilt from "
                                 "data; pass it in `mechanisms={name: mechanism}`")
        return named[v["name"]]
    return build


_register("dp", lambda v, _: DPMechanism(v["constraints"]), needed=("constraints",))
_register("pure", lambda v, _: pure(v["epsilon"]), needed=("epsilon",))
_register("gaussian", lambda v, _: GaussianMechanism(v["sigma"], v["sensitivity"]), needed=("sigma",),
          optional=("sensitivity",))
_register("laplace", lambda v, _: LaplaceMechanism(v["scale"], v["sensitivity"]), needed=("scale",),
          optional=("sensitivity",))
_register("randomized_response", lambda v, _: randomized_response(v["categories"], v["epsilon"]),
          needed=("categories", "epsilon"))
_register("finite", lambda v, _: _finite(v), optional=("p", "q", "table", "outputs", "pair"))
_register("region", lambda v, _: _region(v),
          optional=("vertices", "constraints", "losses", "log_p", "log_q", "log_p_inf", "log_q_ninf"))
_register("mixture", _mixture, needed=("weights", "components"))
_register("subsampled", _subsampled, needed=("rate", "mechanism"), optional=("scheme", "relation"))
_register("sampled", _named("sampled"), needed=("name",))
_register("tradeoff", _named("tradeoff"), needed=("name",))

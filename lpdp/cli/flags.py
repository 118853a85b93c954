"""The one set of mechanism flags, shared by ``lpdp account``, ``calibrate``, ``filter params|audit|simulate``
and ``fdp``.

Each flag adds one mechanism, as the workload table of :mod:`lpdp.workload` it stands for (the same kind and
keys as a file's ``[[mechanism]]`` table), so a flag means the same thing in every command. Its value is

* positional: the table's fields in order, separated by commas (``--gaussian 1.1``,
  ``--gaussian 1.1,0.5``: σ = 1.1 with sensitivity 0.5), or
* named: ``key=value`` pairs (``--gaussian sigma=1.1,sensitivity=0.5``, ``--gaussian mu=0.5``), which
  cannot be misread;

either followed by an optional ``xTIMES`` (``--gaussian 3x50``: 50 runs; ``times=50`` when named). ``?``
marks the free value of ``lpdp calibrate`` (``--gaussian '?x1000'``).

A new flag is one row of :data:`MECHANISM_FLAGS` (its workload kind must exist in
:data:`lpdp.workload.KINDS`).
"""

from __future__ import annotations

import argparse
import math
import re
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from lpdp.errors import ParameterError

__all__ = ["MechanismFlag", "MECHANISM_FLAGS", "FREE_VALUE", "add_mechanism_flags", "parse_flag",
           "flag_entries", "InlineMechanism", "canonical", "ALIAS_OF"]

#: The free value of ``lpdp calibrate`` (:data:`lpdp.calibrate.FREE_VALUE`).
FREE_VALUE = "?"


def _gaussian_mu(values: dict[str, Any], flag: str, spec: str) -> None:
    """``mu=M``: the Gaussian mechanism that is ``G_M``-DP, written as σ = sensitivity / M."""
    mu = values.pop("mu")
    if "sigma" in values:
        raise ParameterError(f"{flag} {spec!r}: give sigma or mu, not both")
    if mu == FREE_VALUE:
        raise ParameterError(f"{flag} {spec!r}: mu cannot be the free value; write sigma='?'")
    if not (math.isfinite(mu) and mu > 0):
        raise ParameterError(f"{flag} {spec!r}: mu={mu!r}: must be finite and > 0")
    values["sigma"] = values.get("sensitivity", 1.0) / mu


def _dp_body(body: str, flag: str, spec: str) -> dict[str, Any]:
    """``EPS,DELTA[/EPS,DELTA...]``: the guarantees met at once."""
    pairs = []
    for part in body.split("/"):
        values = part.split(",")
        if len(values) != 2:
            raise ParameterError(f"{flag} {spec!r}: expected EPS,DELTA[/EPS,DELTA...][xTIMES]")
        pairs.append([number(v, flag, spec) for v in values])
    return {"constraints": pairs}


@dataclass(frozen=True)
class MechanismFlag:
    """One mechanism flag: the workload kind it builds and how its value reads.

    ``fields`` are the table's keys in positional order, the first ``required`` of them needed;
    ``named`` lists keys only accepted as ``key=value`` (each with a function that turns it into table
    keys); ``words`` keys only accepted as ``key=value`` whose value is a word, kept as text for the
    workload kind to check (``--dpsgd scheme=fixed_size``); ``body`` replaces the positional reader for
    values of another shape (``--dp``).
    """

    kind: str
    fields: tuple[str, ...]
    required: int
    metavar: str
    help: str
    integers: tuple[str, ...] = ()
    named: Mapping[str, Callable[[dict[str, Any], str, str], None]] = field(default_factory=dict)
    body: Callable[[str, str, str], dict[str, Any]] | None = None
    words: tuple[str, ...] = ()


#: flag -> how it reads. The one table every command uses.
MECHANISM_FLAGS: dict[str, MechanismFlag] = {
    "--dp": MechanismFlag("dp", ("constraints",), 1, "EPS,DELTA[/EPS,DELTA...][xTIMES]",
                          "a mechanism meeting every listed (eps, delta) at once", body=_dp_body),
    "--pure": MechanismFlag("pure", ("epsilon",), 1, "EPS[xTIMES]", "a pure eps-DP mechanism"),
    "--gaussian": MechanismFlag("gaussian", ("sigma", "sensitivity"), 1,
                                "SIGMA[,SENSITIVITY][xTIMES]",
                                "a Gaussian mechanism of noise sigma (sensitivity 1 unless given; named: "
                                "sigma=S,sensitivity=C or mu=M for the G_M-DP one)",
                                named={"mu": _gaussian_mu}),
    "--laplace": MechanismFlag("laplace", ("scale", "sensitivity"), 1, "SCALE[,SENSITIVITY][xTIMES]",
                               "a Laplace mechanism of noise scale SCALE (sensitivity 1 unless given)"),
    "--rr": MechanismFlag("randomized_response", ("categories", "epsilon"), 2, "K,EPS[xTIMES]",
                          "k-ary randomized response with parameter eps", integers=("categories",)),
    "--dpsgd": MechanismFlag("dpsgd", ("noise_multiplier", "sampling_rate", "steps", "batch_size",
                                       "dataset_size", "epochs"), 1,
                             "noise_multiplier=S,sampling_rate=Q,steps=T",
                             "DP-SGD steps: a Gaussian of noise multiplier S on a Poisson sample at rate Q "
                             "(or batch_size=B,dataset_size=N), T steps (or epochs=E); add/remove "
                             "neighbours. scheme=fixed_size,batch_size=B,dataset_size=N: batches of B "
                             "drawn without replacement, replace-one neighbours",
                             integers=("steps", "batch_size", "dataset_size"),
                             words=("scheme",)),
}

#: Old spellings of flags (deprecated, kept working): alias -> flag. Filled by :func:`add_mechanism_flags`.
ALIAS_OF: dict[str, str] = {}

#: ``xTIMES`` at the end of a value: the tail after the last x holds no ``,`` ``=`` or ``/``.
_TIMES = re.compile(r"^(?P<body>.+)[xX](?P<times>[^,=/xX]*)$")


def number(text: str, flag: str, spec: str) -> float | str:
    """One value of a flag: a float, or :data:`FREE_VALUE`."""
    if text.strip() == FREE_VALUE:
        return FREE_VALUE
    try:
        return float(text)
    except ValueError:
        raise ParameterError(f"{flag} {spec!r}: {text!r} is not a number") from None


def _times(text: str, flag: str, spec: str) -> int | str:
    count = number(text, flag, spec)
    if isinstance(count, float) and not count.is_integer():
        raise ParameterError(f"{flag} {spec!r}: TIMES={text!r} must be an integer")
    return count if isinstance(count, str) else int(count)


def parse_flag(flag: str, spec: str) -> dict[str, Any]:
    """One flag's value as a workload entry (``{"kind": ..., key: value, ...[, "times": n]}``).

    Examples
    --------
    >>> parse_flag("--gaussian", "3x50")
    {'kind': 'gaussian', 'sigma': 3.0, 'times': 50}
    >>> parse_flag("--gaussian", "sigma=1.1,sensitivity=0.5")
    {'kind': 'gaussian', 'sigma': 1.1, 'sensitivity': 0.5}
    >>> parse_flag("--rr", "4,0.7x20")
    {'kind': 'randomized_response', 'categories': 4, 'epsilon': 0.7, 'times': 20}
    >>> parse_flag("--dpsgd", "noise_multiplier=1,scheme=fixed_size,batch_size=256,dataset_size=60000,"
    ...                       "epochs=1")
    {'kind': 'dpsgd', 'noise_multiplier': 1.0, 'batch_size': 256, 'dataset_size': 60000, 'epochs': 1.0,
     'scheme': 'fixed_size'}
    """
    spec_ = MECHANISM_FLAGS[ALIAS_OF.get(flag, flag)]
    entry: dict[str, Any] = {"kind": spec_.kind}
    body, times = spec, None
    m = _TIMES.match(spec)
    if m is not None:
        body, times = m["body"], m["times"]
    if spec_.body is not None:
        entry.update(spec_.body(body, flag, spec))
    elif "=" in body:
        values: dict[str, Any] = {}
        for part in body.split(","):
            key, eq, text = part.partition("=")
            key = key.strip()
            if not eq or key not in (*spec_.fields, *spec_.named, *spec_.words, "times"):
                allowed = ", ".join((*spec_.fields, *spec_.named, *spec_.words, "times"))
                raise ParameterError(f"{flag} {spec!r}: {part!r} must be KEY=VALUE with KEY one of {allowed} "
                                     "(do not mix named and positional values)")
            if key in values:
                raise ParameterError(f"{flag} {spec!r}: {key} given twice")
            if key == "times":
                if times is not None:
                    raise ParameterError(f"{flag} {spec!r}: times given twice")
                times = text
                continue
            if key in spec_.words:
                values[key] = text.strip()
                continue
            values[key] = number(text, flag, spec)
        for key, into in spec_.named.items():
            if key in values:
                into(values, flag, spec)
        missing = [k for k in spec_.fields[:spec_.required] if k not in values]
        if missing:
            raise ParameterError(f"{flag} {spec!r}: missing {', '.join(missing)}")
        entry.update((k, values[k]) for k in (*spec_.fields, *spec_.words) if k in values)
    else:
        parts = body.split(",")
        if not spec_.required <= len(parts) <= len(spec_.fields):
            needed = ",".join(k.upper() for k in spec_.fields[:spec_.required])
            optional = "".join(f"[,{k.upper()}]" for k in spec_.fields[spec_.required:])
            raise ParameterError(f"{flag} {spec!r}: expected {needed}{optional}[xTIMES] (or named: "
                                 f"{'=...,'.join(spec_.fields)}=...)")
        for key, text in zip(spec_.fields, parts, strict=False):
            entry[key] = number(text, flag, spec)
    for key in spec_.integers:
        v = entry.get(key)
        if isinstance(v, float) and v.is_integer():
            entry[key] = int(v)
    if times is not None:
        entry["times"] = _times(times, flag, spec)
    return entry


class InlineMechanism(argparse.Action):
    """Keep the mechanism flags in the order given, each with its flag (``namespace.inline``)."""

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: Any,
                 option_string: str | None = None) -> None:
        items = list(getattr(namespace, "inline", None) or [])
        items.append((option_string, values))
        namespace.inline = items


def add_mechanism_flags(parser: argparse.ArgumentParser | argparse._ArgumentGroup, *, note: str = "",
                        flags: Sequence[str] | None = None,
                        aliases: Mapping[str, Sequence[str]] | None = None) -> None:
    """Add the flags of :data:`MECHANISM_FLAGS` (or those in ``flags``) to ``parser``.

    Every flag appends ``(flag, value)`` to ``args.inline``; :func:`flag_entries` reads them. ``aliases``
    maps a flag to old spellings kept working (deprecated; shown in the help).
    """
    for flag in flags or MECHANISM_FLAGS:
        spec = MECHANISM_FLAGS[flag]
        old = list((aliases or {}).get(flag, ()))
        text = spec.help + (f" ({note})" if note else "") + (
            f"; {', '.join(old)}: deprecated spelling{'s' if len(old) > 1 else ''}" if old else "")
        ALIAS_OF.update(dict.fromkeys(old, flag))
        parser.add_argument(flag, *old, action=InlineMechanism, dest="inline", metavar=spec.metavar,
                            help=text)
    parser.set_defaults(inline=None)


def canonical(flag: str) -> str:
    """The flag an old spelling stands for (``--gaussian-sigma`` -> ``--gaussian``)."""
    return ALIAS_OF.get(flag, flag)


def flag_entries(args: argparse.Namespace) -> list[dict[str, Any]]:
    """The workload entries of the mechanism flags given, in order."""
    return [parse_flag(flag, spec) for flag, spec in (getattr(args, "inline", None) or [])]


def warn(message: str) -> None:
    """A one-line note on stderr (deprecated spellings)."""
    print(f"lpdp: note: {message}", file=sys.stderr)

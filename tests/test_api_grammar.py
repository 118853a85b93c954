"""One API grammar (docs/api.md, "API grammar: the choices"), checked on every public signature.

* a count is ``times`` (the paper-level functions of :mod:`lpdp.compose`, :mod:`lpdp.fdp` and the
  trade-off's ``composed`` keep the paper's ``k``; ``n`` is the number of constraints of an f-DP bracket);
* ``epsilon``, never ``eps``;
* ``delta()`` and ``epsilon()`` follow one shape rule: a scalar in gives a scalar out (0-d), an array in an
  array of its shape (a ``Guarantee`` answers a ``(lower, upper)`` pair of such values).
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pytest

import lpdp
from lpdp import Accountant, PrivacyRegion
from lpdp.mechanisms import GaussianMechanism, LaplaceMechanism, pure
from lpdp.sides import Larger
from lpdp.tradeoff import gaussian

#: Parameter names that never appear in a public signature.
FORBIDDEN = {"eps", "eps0", "count", "counts", "num", "n_times", "repeats"}
#: Where the paper's names stay (module prefixes): ``k`` for a k-fold composition, ``n`` for the number of
#: constraints of an f-DP bracket.
PAPER_NAMES = {"k": ("lpdp.compose", "lpdp.fdp", "lpdp.tradeoff.TradeoffFunction.composed",
                     "lpdp.plot.fdp_tightening"),
               "n": ("lpdp.fdp",)}


def _public_callables() -> Iterator[tuple[str, Callable[..., Any]]]:
    for info in pkgutil.walk_packages(lpdp.__path__, "lpdp."):
        parts = info.name.split(".")[1:]
        if any(p.startswith("_") for p in parts) or parts[0] in ("cli", "scenarios"):
            continue
        mod = importlib.import_module(info.name)
        for name in getattr(mod, "__all__", ()):
            obj = getattr(mod, name, None)
            if getattr(obj, "__module__", None) != mod.__name__:
                continue
            if inspect.isclass(obj):
                for attr, member in vars(obj).items():
                    if attr.startswith("_") and attr != "__init__":
                        continue
                    member = member.fget if isinstance(member, property) else member
                    member = member.__func__ if isinstance(member, classmethod | staticmethod) else member
                    if callable(member):
                        yield f"{mod.__name__}.{name}.{attr}", member
            elif callable(obj):
                yield f"{mod.__name__}.{name}", obj


def _bad_names(where: str, params: list[str]) -> list[str]:
    out = []
    for p in params:
        if p in FORBIDDEN:
            out.append(f"{where}({p}=)")
        elif p in PAPER_NAMES and not where.startswith(PAPER_NAMES[p]):
            out.append(f"{where}({p}=): write times (or say why it is the paper's {p})")
    return out


def test_public_signatures_use_one_vocabulary():
    found, seen = [], 0
    for where, fn in _public_callables():
        try:
            params = list(inspect.signature(fn).parameters)
        except (TypeError, ValueError):
            continue
        seen += 1
        found += _bad_names(where, params)
    assert seen > 200, f"only {seen} public callables scanned"
    assert not found, "public names outside the API grammar (docs/api.md):\n" + "\n".join(found)


def test_the_signature_scan_can_fail():
    assert _bad_names("lpdp.curves.of", ["kind", "count"]) == ["lpdp.curves.of(count=)"]
    assert _bad_names("lpdp.accountant.x", ["k"]) and not _bad_names("lpdp.compose.multi.multi", ["k"])
    assert _bad_names("lpdp.testing.assert_delta_le", ["eps"])


def test_renamed_keywords_still_work_and_warn():
    from lpdp.compose import heterogeneous
    from lpdp.curves import counts_up_to

    with pytest.warns(DeprecationWarning, match="counts= is deprecated, write times="):
        old = heterogeneous(counts={0.5: 3})
    assert old.delta(0.5) == heterogeneous({0.5: 3}).delta(0.5)   # exact: the same call
    with pytest.warns(DeprecationWarning, match="n= is deprecated"):
        assert counts_up_to(n=100, points=5) == [1, 3, 10, 32, 100]
    with pytest.raises(TypeError, match="not both"):
        counts_up_to(times=100, n=100)


def test_pairs_are_the_object_then_its_number():
    """``(mechanism, times)``, ``(region, times)`` in compose_regions, ``(region, weight)`` in mix (the
    ``(weight, region)`` order of ``Σ α_i R_i`` is read the same)."""
    from lpdp.compose import homogeneous
    from lpdp.compose.multi import compose_regions

    a, b = PrivacyRegion.from_dp(1.3, 0.0), PrivacyRegion.from_dp(0.5, 0.2)
    new, old = lpdp.mix([(a, 0.25), (b, 0.75)]), lpdp.mix([(0.25, a), (0.75, b)])
    grid = np.linspace(0.0, 1.5, 7)
    np.testing.assert_array_equal(new.delta(grid), old.delta(grid))   # the same computation
    by_hand = 0.25 * a.delta(grid) + 0.75 * b.delta(grid)
    np.testing.assert_allclose(new.delta(grid), by_hand, rtol=1e-12, atol=1e-15)
    assert float(compose_regions([(a, 2)]).delta(1.0)) == pytest.approx(
        float(homogeneous(1.3, 0.0, 2).delta(1.0)), rel=1e-12)


def _objects() -> list[tuple[str, Any, bool]]:
    """``(name, object, answers a pair)`` for objects of each family that has ``delta``/``epsilon``."""
    acc = Accountant().compose(pure(0.5), 3).compose(GaussianMechanism(2.0), 2)
    certified = Accountant().compose(LaplaceMechanism(1.0), 2)
    return [("PrivacyRegion", PrivacyRegion.from_dp(1.0, 0.1), False),
            ("TradeoffFunction", gaussian(1.0), False),
            ("Guarantee (exact)", Accountant().compose(pure(0.5), 3).guarantee(), True),
            ("Guarantee (Gaussian closed form)", Accountant().compose(GaussianMechanism(2.0), 4).guarantee(),
             True),
            ("Guarantee (bracket)", acc.guarantee(), True),
            ("Guarantee (certified engine)", certified.guarantee(), True),
            ("LowerSide", PrivacyRegion.from_dp(1.0, 0.1).lower, False),
            ("Larger (both orders)", Larger(PrivacyRegion.from_dp(1.0, 0.1), PrivacyRegion.from_dp(0.5, 0.2)),
             False),
            ("BracketSide upper", certified.guarantee().upper, False),
            ("BracketSide lower", certified.guarantee().lower, False),
            ("GaussianLower", Accountant().compose(GaussianMechanism(2.0), 4).guarantee().lower, False)]


@pytest.mark.parametrize("name, obj, pair", _objects(), ids=lambda x: x if isinstance(x, str) else "")
def test_delta_and_epsilon_have_one_shape_rule(name, obj, pair):
    for method, values in (("delta", [0.0, 0.5, 1.0]), ("epsilon", [1e-6, 1e-3, 0.5])):
        fn = getattr(obj, method)
        scalar, array = fn(values[1]), fn(np.array(values).reshape(3, 1))
        if pair:
            assert isinstance(scalar, tuple) and len(scalar) == 2, f"{name}.{method}: not a pair"
            assert isinstance(array, tuple) and len(array) == 2, f"{name}.{method}: not a pair"
            sides = (scalar[0], array[0]), (scalar[1], array[1])
        else:
            sides = ((scalar, array),)
        for s, a in sides:
            assert np.ndim(s) == 0, f"{name}.{method}(scalar) has shape {np.shape(s)}"
            assert np.shape(a) == (3, 1), f"{name}.{method}(array of (3, 1)) has shape {np.shape(a)}"
            assert float(s) == pytest.approx(float(np.asarray(a)[1, 0]), rel=1e-12)

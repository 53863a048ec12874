"""Hypothesis strategies that draw valid instances of a formulation, hard ones included, and shrink to small ones.

>>> from hypothesis import given, settings
>>> from svmref.testing import check_instance
>>> from svmref.testing.strategies import instances
>>> @settings(deadline=None)                       # the reference (cvxpy) takes tens of milliseconds
... @given(instances("l1_svm"))
... def test_my_solver(instance):
...     check_instance(my_solver, instance)        # doctest: +SKIP

:func:`instances` draws an :class:`svmref.testing.Case`: data ``X`` (``N`` points in ``d`` dimensions) and labels
(or targets), held-out points, a kernel (linear, RBF, polynomial: positive semidefinite, so the reference always
applies) and the hyperparameters the formulation takes (``C``; ``gamma`` for RLS; ``C, mu`` for the support features
machine; ``C, epsilon`` for epsilon-SVR), each the way verify's entry for the formulation says
(:mod:`svmref.verify.specs`: classification or regression, kernel or features, which hyperparameters).

By default it covers the hard regimes of verify's adversarial suite: C from 1e-4 to 1e6 (log-uniform, so both
ends are drawn), sigma from 1e-3 (``K -> I``) to 1e3 (``K -> 11'``), polynomial kernels with entries up to about
1e8 (ill-conditioned), and the data regimes of :data:`CLASSIFICATION_REGIMES` and :data:`REGRESSION_REGIMES`:
separable classes, one class in five or fewer (imbalance), points repeated with the opposite label (or another
target: the optimal alpha is then not unique), every point the same, outlying targets.

It shrinks towards a small, benign instance: the fewest points (``min_n``), one dimension, the linear kernel,
C = 1 (sigma = 1, ...), the "generic" regime (two classes on either side of the origin) and data without
perturbation; a counterexample keeps only what makes it fail (a solver wrong for ``C >= 1e3`` shrinks to two
points and C = 1000).

Needs hypothesis: ``pip install svmref[testing]``.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

try:
    from hypothesis import strategies as st
    from hypothesis.extra import numpy as hnp
except ImportError as exc:  # hypothesis is optional: svmref.testing works without it
    raise ImportError("svmref.testing.strategies needs hypothesis: pip install svmref[testing] "
                      f"(or pip install hypothesis); {exc}") from exc

from svmref.verify.specs import get as _spec

from ._cases import Case, content_name, hyper_keys

__all__ = ["instances", "KERNELS", "CLASSIFICATION_REGIMES", "REGRESSION_REGIMES", "RANGES"]

#: The kernels drawn (all positive semidefinite; the MLP kernel of 002 is not, and is never drawn).
KERNELS = ("linear", "rbf", "poly")
#: Data regimes of classification; the first is what a counterexample shrinks to.
CLASSIFICATION_REGIMES = ("generic", "separable", "imbalanced", "duplicates", "identical")
#: Data regimes of regression (real targets); the first is what a counterexample shrinks to.
REGRESSION_REGIMES = ("generic", "outliers", "duplicates", "identical")
#: Default range of each drawn number, and its scale: ``log`` draws the exponent uniformly and shrinks to 1 (or the
#: end nearest 1); ``linear`` shrinks to the lower end.
RANGES = {"C": ((1e-4, 1e6), "log"), "gamma": ((1e-8, 1e4), "log"), "sigma": ((1e-3, 1e3), "log"),
          "poly_c": ((0.1, 10.0), "log"), "mu": ((0.0, 0.99), "linear"), "epsilon": ((0.0, 1.0), "linear"),
          "bias_scale": ((0.0, 100.0), "linear"), "weights": ((1e-3, 10.0), "log")}
#: Where a number is drawn from: its whole range first (what a counterexample shrinks to), then its ends.
ENDS = ("whole", "low", "high")
#: The part of a range (on its scale) that counts as one end.
END_FRACTION = 0.25
#: Polynomial degrees drawn (the first is what a counterexample shrinks to).
POLY_DEGREES = (2, 3)
#: The data grid: coordinates are multiples of 1/4 in [-3, 3] (exact in binary; ties, hence duplicates, happen).
GRID, GRID_STEPS = 0.25, 12
#: Held-out points: at most this many, between consecutive training points.
MAX_HELD_OUT = 8


@dataclass(frozen=True)
class _Config:
    formulation: str
    classification: bool
    on_features: bool
    hyper: tuple
    min_n: int
    max_n: int
    max_d: int
    kernels: tuple
    regimes: tuple
    ranges: dict
    weighted: bool = False


def _int(value, name: str, low: int) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < low:
        raise ValueError(f"{name} must be an integer >= {low}; got {value!r}")
    return int(value)


def _range(value, name: str, scale: str) -> tuple[float, float]:
    try:
        lo, hi = (float(v) for v in value)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a pair (low, high) of numbers; got {value!r}") from None
    ok = math.isfinite(lo) and math.isfinite(hi) and lo <= hi and (lo > 0 if scale == "log" else lo >= 0)
    if not ok:
        need = "0 < low <= high" if scale == "log" else "0 <= low <= high"
        raise ValueError(f"{name} must be a pair (low, high) of finite numbers with {need}; got {value!r}")
    if name == "mu" and hi >= 1:
        raise ValueError(f"mu must be a pair (low, high) with high < 1 (the selectivity mu lies in [0, 1)); got {value!r}")
    return lo, hi


def _subset(value, name: str, allowed: tuple) -> tuple:
    items = (value,) if isinstance(value, str) else tuple(value)
    bad = [v for v in items if v not in allowed]
    if not items or bad:
        raise ValueError(f"{name} must be a non-empty selection of {list(allowed)}; got {value!r}")
    return items


def _config(formulation, min_n, max_n, max_d, kernels, regimes, ranges) -> _Config:
    spec = _spec(formulation)
    min_n = _int(min_n, "min_n", 2)
    max_n = _int(max_n, "max_n", 2)
    if max_n < min_n:
        raise ValueError(f"max_n must be >= min_n ({min_n}); got {max_n}")
    max_d = _int(20 if (max_d is None and spec.on_features) else (3 if max_d is None else max_d), "max_d", 1)
    allowed = CLASSIFICATION_REGIMES if spec.classification else REGRESSION_REGIMES
    regimes = allowed if regimes is None else _subset(regimes, "regimes", allowed)
    rng = {k: _range(v, k, RANGES[k][1]) for k, v in ranges.items()}
    return _Config(formulation, spec.classification, spec.on_features, hyper_keys(formulation), min_n, max_n, max_d,
                   _subset(kernels, "kernels", KERNELS), regimes, rng, "v" in spec.instance_keywords)


# ----------------------------------------------------------------------------------------------- numbers


def _number(name: str, bounds: tuple[float, float]):
    """A number in ``bounds`` on the scale of :data:`RANGES`, from the whole range or from one of its ends.

    The end is drawn first (:data:`ENDS`: the whole range, the lowest or the highest :data:`END_FRACTION` of it, each
    about a third of the draws), so that both extremes come up in every run of a hundred examples (hypothesis'
    float draws alone favour simple values); then the number, uniform on the scale: ``10**e`` for ``log`` (shrinks
    to 1, or the end nearest 1), the number itself for ``linear`` (shrinks to the lower end).
    """
    lo, hi = bounds
    if lo == hi:
        return st.just(lo)
    log = RANGES[name][1] == "log"
    a, b = (math.log10(lo), math.log10(hi)) if log else (lo, hi)
    w = END_FRACTION * (b - a)
    ends = {"whole": (a, b), "low": (a, a + w), "high": (b - w, b)}
    scale = (lambda e: min(max(10.0 ** e, lo), hi)) if log else (lambda v: v)
    return st.sampled_from(ENDS).flatmap(lambda end: st.floats(*ends[end]).map(scale))


def _grid(draw, shape) -> np.ndarray:
    """Coordinates on the grid of :data:`GRID` in ``[-3, 3]``; each shrinks to 0."""
    return draw(hnp.arrays(np.float64, shape, elements=st.integers(-GRID_STEPS, GRID_STEPS).map(lambda k: k * GRID),
                           fill=st.nothing()))


def _flags(draw, n: int) -> np.ndarray:
    return draw(hnp.arrays(np.bool_, n, elements=st.booleans(), fill=st.nothing()))


# ----------------------------------------------------------------------------------------------- data


@dataclass(frozen=True)
class _Draws:
    """Every choice the data of any regime needs, drawn in the same order whatever the regime, so that hypothesis can
    shrink a counterexample to another regime (the first, "generic") and keep the rest of its choices."""

    flags: np.ndarray   # (n,) labels flipped from the alternating +1, -1
    m: int              # the minority class (imbalanced) or the outliers: 1 <= m <= max(1, n // 5)
    k: int              # repeated points (duplicates): 1 <= k <= max(1, n // 2)
    Z: np.ndarray       # (n, d) perturbations of the points, on the grid
    z0: np.ndarray      # (1, d) the point of the "identical" regime
    noise: np.ndarray   # (n,) noise of the regression targets, on half the grid


def _draws(draw, n: int, d: int) -> _Draws:
    return _Draws(_flags(draw, n), draw(st.integers(1, max(1, n // 5))), draw(st.integers(1, max(1, n // 2))),
                  _grid(draw, (n, d)), _grid(draw, (1, d)), _grid(draw, n) / 2.0)


def _labels(flags: np.ndarray) -> np.ndarray:
    """Alternating +1, -1, flipped where drawn (shrinks to no flip); both classes when there are two points or more."""
    n = flags.size
    y = np.where(np.arange(n) % 2 == 0, 1.0, -1.0)
    y[flags] *= -1.0
    if n >= 2 and np.all(y == y[0]):
        y[0] = -y[0]
    return y


def _layout(y: np.ndarray, d: int) -> np.ndarray:
    """The unperturbed points: class +1 at +1, class -1 at -1 on the first axis, spread over [-1/2, 1/2] on the last
    (no two coincide, so the shrunk instance has no duplicates)."""
    n = y.size
    base = np.zeros((n, d))
    base[:, 0] += y
    base[:, -1] += np.linspace(-0.5, 0.5, n) if n > 1 else 0.0
    return base


def _two_classes(regime: str, r: _Draws) -> tuple[np.ndarray, np.ndarray]:
    n, d = r.Z.shape
    if regime == "duplicates":  # k points repeated with the opposite label: Q singular, alpha not unique
        nb = n - r.k
        y = _labels(r.flags[:nb])
        X = r.Z[:nb] + _layout(y, d)
        return np.vstack([X, X[: r.k]]), np.concatenate([y, -y[: r.k]])
    if regime == "identical":  # every point the same, both labels: K constant (RBF) or of rank one (linear)
        return np.tile(r.z0, (n, 1)), _labels(r.flags)
    if regime == "imbalanced":  # m <= n/5 points of class +1
        y = -np.ones(n)
        y[: r.m] = 1.0
    else:
        y = _labels(r.flags)
    X = r.Z + _layout(y, d)
    if regime == "separable":  # a gap of 2 along the first axis: separable by every kernel drawn
        X[:, 0] = y * (1.0 + np.abs(X[:, 0] - y))
    return X, y


def _targets(regime: str, r: _Draws) -> tuple[np.ndarray, np.ndarray]:
    n, d = r.Z.shape
    if regime == "identical":  # every point the same, the targets spread: K constant (RBF) or of rank one (linear)
        return np.tile(r.z0, (n, 1)), np.linspace(-1.0, 1.0, n) + r.noise
    X = r.Z.copy()
    X[:, 0] += np.linspace(-2.0, 2.0, n) if n > 1 else 0.0
    y = np.sin(X[:, 0]) + r.noise
    if regime == "duplicates":  # k points repeated with a target 1 higher
        nb = n - r.k
        return np.vstack([X[:nb], X[: r.k]]), np.concatenate([y[:nb], y[: r.k] + 1.0])
    if regime == "outliers":  # m <= n/5 targets 5 above the curve
        y[: r.m] += 5.0
    return X, y


def _held_out(X: np.ndarray) -> np.ndarray:
    """Midpoints of consecutive training points, moved off the grid by half a step."""
    m = min(X.shape[0], MAX_HELD_OUT)
    return (X[:m] + np.roll(X, 1, axis=0)[:m]) / 2.0 + GRID / 2.0


def _kernel(draw, cfg: _Config) -> tuple[str, dict]:
    if cfg.on_features:
        return "linear", {}
    kernel = draw(st.sampled_from(cfg.kernels))
    if kernel == "rbf":
        return kernel, {"sigma": draw(_number("sigma", cfg.ranges["sigma"]))}
    if kernel == "poly":
        return kernel, {"c": draw(_number("poly_c", cfg.ranges["poly_c"])), "d": draw(st.sampled_from(POLY_DEGREES))}
    return kernel, {}


@st.composite
def _case(draw, cfg: _Config) -> Case:
    n = draw(st.integers(cfg.min_n, cfg.max_n))
    d = draw(st.integers(1, cfg.max_d))
    regime = draw(st.sampled_from(cfg.regimes))
    X, y = (_two_classes if cfg.classification else _targets)(regime, _draws(draw, n, d))
    kernel, kp = _kernel(draw, cfg)
    hyper = {k: draw(_number(k, cfg.ranges[k])) for k in cfg.hyper}
    X_test = _held_out(X)
    wts = np.array([draw(_number("weights", cfg.ranges["weights"])) for _ in range(n)]) if cfg.weighted else None
    name = content_name(f"{cfg.formulation}-{regime}-{kernel}-N{n}", X, y, X_test, kernel, kp, hyper, wts)
    unique = np.unique(X, axis=0).shape[0] == n
    setting = ", ".join(f"{k} = {v:g}" for k, v in {**kp, **hyper}.items())
    if wts is not None:
        setting += f", weights in [{wts.min():.3g}, {wts.max():.3g}]"
    return Case(name, X, y, X_test, kernel, kp, hyper, unique,
                f"drawn by svmref.testing.strategies ({regime}): N = {n}, d = {d}, {kernel} kernel, {setting}",
                weights=wts, formulation=cfg.formulation, regime=regime)


def instances(formulation: str, *, min_n: int = 2, max_n: int = 30, max_d: int | None = None, kernels=KERNELS,
              regimes=None, C=RANGES["C"][0], gamma=RANGES["gamma"][0], sigma=RANGES["sigma"][0],
              poly_c=RANGES["poly_c"][0], mu=RANGES["mu"][0], epsilon=RANGES["epsilon"][0],
              bias_scale=RANGES["bias_scale"][0], weights=RANGES["weights"][0]):
    """A hypothesis strategy of :class:`svmref.testing.Case` for ``formulation``, hard regimes included.

    Parameters
    ----------
    formulation : str
        One of :func:`svmref.verify.specs.names`; its entry says whether the instances are classification (labels
        -1, +1) or regression (real targets), on a kernel or on the features, and which hyperparameters they carry.
    min_n, max_n : int
        The number of training points N (``2 <= min_n <= max_n``). Keep ``max_n`` small (tens): the reference is
        a cvxpy solve per instance.
    max_d : int, optional
        The largest dimension d (default 3; 20 for the support features machine, so that d > N is drawn).
    kernels : sequence of str
        A selection of :data:`KERNELS`.
    regimes : sequence of str, optional
        A selection of :data:`CLASSIFICATION_REGIMES` or :data:`REGRESSION_REGIMES` (default: all of them).
    C, gamma, sigma, poly_c, mu, epsilon, bias_scale, weights : (low, high)
        The range of each number drawn (defaults :data:`RANGES`); those the formulation does not take are not drawn.
        ``weights``: each pattern's weight ``v_i`` of the weighted LS-SVM, drawn one by one.
        ``poly_c`` is the ``c`` of the polynomial kernel ``(1 + x'z / c)^d`` (:func:`svmref.kernels.polynomial_kernel`),
        whose degree is 2 or 3.

    Returns
    -------
    hypothesis.strategies.SearchStrategy
        Instances verify accepts for ``formulation``, each named after its regime, kernel, N and a hash of its
        content (so that verify's per-instance reference cache never confuses two of them).
    """
    ranges = {"C": C, "gamma": gamma, "sigma": sigma, "poly_c": poly_c, "mu": mu, "epsilon": epsilon,
              "bias_scale": bias_scale, "weights": weights}
    return _case(_config(formulation, min_n, max_n, max_d, kernels, regimes, ranges))

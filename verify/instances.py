"""Test instances for :func:`svmref.verify.check`: deterministic (seeded), grouped in suites.

A suite is a list of :class:`Instance` for one formulation (``suite(name, formulation)``):

``quick``        three small random problems (N <= 30; linear, RBF, polynomial kernels): seconds;
``standard``     N from 50 to 300, linear, polynomial and RBF kernels, C from 0.1 to 1000;
``adversarial``  duplicates with conflicting labels, identical points, C = 1e-4 and 1e4, sigma -> 0
                 (K -> I) and sigma -> inf (K -> 11'), separable data with huge C, a rank-deficient
                 linear kernel, and a non-PSD MLP kernel (the reference is then *not convex*, which
                 the report says instead of passing or failing);
``real``         small subsamples of the real data sets shipped with the package (Heart, Sonar,
                 Ionosphere, Titanic, Ripley's synth, Breast; Motorcycle for regression).

``svr`` (epsilon-SVR) runs on the regression instances of each suite, each with an ``epsilon``
(:data:`SVR_EPSILONS`).

Every instance draws its data from ``numpy.random.default_rng(seed)`` with a fixed seed, so a
report can be reproduced from its instance names. Held-out points (``X_test``) come from the same
distribution (or the rest of the real data set) and are used to compare decision functions.
Which instances a formulation gets is its entry's ``suite`` (:mod:`svmref.verify.specs`); the
generators are in :mod:`svmref.verify.data`.
"""
from __future__ import annotations

import numpy as np

from . import specs
from .data import SUITES, SVR_EPSILON, SVR_EPSILONS, Instance, default_weights, load_csv

__all__ = ["Instance", "SUITES", "SCALABLE", "suite", "TASK", "load_csv", "from_data", "standardise_split", "SVR_EPSILON",
           "SVR_EPSILONS"]

#: What each formulation takes: "box" (K, y, C), "regression" (K, targets, C), "rls" (K, y, gamma),
#: "features" (X, y, C, mu), "svr" (K, targets, C, epsilon=...; the epsilon-SVR). Each entry's ``kind``.
TASK = {name: spec.kind for name, spec in specs.SPECS.items()}

_CACHE: dict = {}


#: The suites ``n=`` can rescale (the generated ones; adversarial and real instances have their own sizes).
SCALABLE = ("quick", "standard")


def suite(name: str, formulation: str, n: int | None = None) -> list[Instance]:
    """The instances of suite ``name`` for ``formulation`` (cached: the same objects on each call).

    ``n`` (``svmref verify --n N``): every instance of a generated suite (``quick``, ``standard``) is drawn
    with ``n`` training patterns instead of its own size (same kernel, hyperparameters and seed; the
    held-out points unchanged) and named ``NAME@n`` (``s-rbf-200@2000``); ``C`` and, for RLS,
    ``gamma = 1/(C N)`` follow the instance's rule.
    """
    spec = specs.get(formulation)
    if name not in SUITES:
        raise ValueError(f"suite must be one of {list(SUITES)}; got {name!r}")
    if n is not None:
        if name not in SCALABLE:
            raise ValueError(f"n rescales the suites {list(SCALABLE)} only; suite {name!r} has fixed sizes")
        if isinstance(n, bool) or int(n) != n or n < 4:
            raise ValueError(f"n must be an integer >= 4; got {n!r}")
        n = int(n)
    key = (name, spec.suite, n)  # formulations with the same generator share the instances
    if key not in _CACHE:
        _CACHE[key] = spec.suite(name, n)
    return _CACHE[key]


def _two_classes(y: np.ndarray, formulation: str) -> np.ndarray:
    """Labels of two values as -1 (the smaller) and +1 (the larger); ``ValueError`` otherwise."""
    labels = np.unique(y)
    if labels.size != 2:
        raise ValueError(f"a {formulation} needs two classes in the last column; got {labels.size} distinct "
                         f"values ({', '.join(f'{v:g}' for v in labels[:5])}{', ...' if labels.size > 5 else ''})")
    return np.where(y == labels[1], 1.0, -1.0)


def standardise_split(X, test_fraction: float = 0.2, seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(X standardised, training rows, held-out rows)`` as :func:`from_data` makes them: each column scaled by a power
    of two, then to mean 0 and standard deviation 1 (constant columns left at 0); a seeded random ``test_fraction``
    (at least 1, at most 500 patterns) held out."""
    X = np.asarray(X, dtype=float)
    if X.size:  # each column by a power of two first (as verify.data.scale_columns): no overflow near the float
        X = np.ldexp(X, -np.frexp(np.max(np.abs(X), axis=0))[1][None, :])  # range, bit for bit the same otherwise
    sd = X.std(axis=0)
    X = (X - X.mean(axis=0)) / np.where(sd > 0, sd, 1.0)
    rng = np.random.default_rng(seed)
    perm = rng.permutation(X.shape[0])
    n_test = min(500, max(1, int(round(test_fraction * X.shape[0]))))
    return X, perm[n_test:], perm[:n_test]


def from_data(X, y, formulation: str, *, C: float = 1.0, mu: float = 0.5, sigma: float | None = None,
              kernel: str = "rbf", test_fraction: float = 0.2, seed: int = 0, name: str = "data",
              epsilon: float = SVR_EPSILON) -> Instance:
    """One instance from the user's data (``svmref verify --data``).

    Features are standardised (mean 0, standard deviation 1 per column; constant columns left at 0);
    a random ``test_fraction`` (at most 500 patterns, seeded) is held out to compare decision
    functions, the rest is the training set. Classification labels must take two values: the smaller
    becomes -1, the larger +1. Kernel: RBF with ``sigma = sqrt(d)`` unless given (``kernel="linear"``
    possible); the support features machine always works on ``X`` (``C``, ``mu``); RLS uses
    ``gamma = 1/(C N)``; ``svr`` uses ``C`` and ``epsilon`` (in the units of ``y``, which are left as given); the
    weighted LS-SVM gets seeded weights (:func:`svmref.verify.data.default_weights`, most 1, a quarter weighed down).
    """
    spec = specs.SPECS[formulation]
    y = np.asarray(y, dtype=float)
    if spec.classification:
        y = _two_classes(y, formulation)
    X, tr, te = standardise_split(X, test_fraction, seed)
    if spec.classification and np.unique(y[tr]).size < 2:
        raise ValueError("the training part has one class only; give more rows of the other class")
    if spec.on_features:
        return Instance(name, X[tr], y[tr], X[te], "linear", {}, spec.data_hyper(C, mu, epsilon, tr.size), True,
                        f"user data: {tr.size} training patterns, {X.shape[1]} standardised features")
    kp = {} if kernel == "linear" else {"sigma": float(sigma) if sigma else float(np.sqrt(X.shape[1]))}
    hyper = spec.data_hyper(C, mu, epsilon, tr.size)
    desc = f"user data: {tr.size} training patterns, {X.shape[1]} standardised features, {kernel} kernel"
    v = None
    if "v" in spec.instance_keywords:  # the weighted LS-SVM: seeded weights as the robust LS-SVM makes them
        v = default_weights(tr.size, seed)
        desc += f"; weights v in [{v.min():.2g}, {v.max():.2g}] (svmref.verify.data.default_weights, seed {seed})"
    return Instance(name, X[tr], y[tr], X[te], kernel, kp, hyper, True, desc, weights=v)

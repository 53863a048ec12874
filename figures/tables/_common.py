"""What the table modules share: seeded splits, the fits of each formulation, cross-validation.

Everything here is a pure function of its arguments (randomness only through the generators that
:func:`split_rng` derives from ``(seed, table, dataset, split)``), so a split computed on a joblib
worker, on a Dask worker or in the main process gives the same numbers bit for bit.

The formulations are trained through the project's public solver functions only:

============================  =======================================================================
model (CSV ``model``)          solver call
============================  =======================================================================
``ls_svm`` (000)              :func:`svmref.solvers.smo.ls_svm` (000 eq. (2), stopping rule (10))
``least_1norm_svm`` (000)     :func:`svmref.solvers.smo.least_1norm_svm` (000 eq. (5), rule (11))
``l1_svm`` (001, 004)         :func:`svmref.solvers.smo.l1_svm` (LIBSVM's defaults: WSS 2, tol 1e-3);
                              regression (004 Motorcycle): :func:`svmref.solvers.smo.svr` (epsilon-SVR)
``ls_svm`` (004)              :func:`svmref.solvers.linear.ls_svm` / ``ls_svm_regression`` (004 eq. (2))
``isls_svm`` (004)            :func:`svmref.solvers.isls.isls_svm` (004 Algorithm 1)
``rls`` (001)                 :func:`svmref.solvers.linear.rls` (001 eq. (8))
============================  =======================================================================

The CSV column ``solver`` names the call and its settings, so two ``ls_svm`` rows of different
tables are never mistaken for one another.
"""
from __future__ import annotations

import inspect
import math
import warnings
import zlib
from dataclasses import dataclass

import numpy as np

__all__ = ["split_rng", "permutation_split", "standardize", "Fit", "fit_model", "cv_folds", "cv_score", "grid",
           "at_edge"]


def _crc(s: str) -> int:
    return zlib.crc32(s.encode("utf-8"))


def split_rng(seed: int, table: str, dataset: str, split: int, stream: int = 0) -> np.random.Generator:
    """The generator of one split: ``SeedSequence(seed, spawn_key=(crc32(table), crc32(dataset), split, stream))``.

    It does not depend on the model, so every model of a table sees the same training and test sets
    (paired comparison, as in the papers), nor on the order or place in which splits are computed.
    ``stream`` separates independent uses within a split (0: the split itself, 1: the CV folds).
    """
    ss = np.random.SeedSequence(int(seed), spawn_key=(_crc(table), _crc(dataset), int(split), int(stream)))
    return np.random.default_rng(ss)


def permutation_split(n: int, n_train: int, n_test: int, rng: np.random.Generator):
    """A random training/test split: the first ``n_train`` of a permutation train, the next ``n_test`` test."""
    if n_train + n_test > n:
        raise ValueError(f"n_train + n_test must be <= {n}; got {n_train} + {n_test}")
    perm = rng.permutation(n)
    return perm[:n_train], perm[n_train:n_train + n_test]


def standardize(X_train, X_test):
    """Zero mean and unit variance with the training set's statistics (constant columns left at 0)."""
    mu = X_train.mean(axis=0)
    sd = X_train.std(axis=0)
    sd = np.where(sd > 0, sd, 1.0)
    return (X_train - mu) / sd, (X_test - mu) / sd


def grid(lo: float, hi: float, step: float) -> tuple[float, ...]:
    """``10**e`` for ``e = lo, lo + step, ..., hi`` (a logarithmic grid, endpoints included)."""
    n = int(round((hi - lo) / step)) + 1
    return tuple(float(10.0 ** (lo + k * step)) for k in range(n))


def at_edge(scores: dict | None = None, **selected) -> str:
    """The CSV column ``at_edge``: ``"name:low"`` / ``"name:high"`` for each hyperparameter whose selected value is
    the smallest / largest of its grid, ``;``-separated (``""``: every selection inside its grid).

    Each keyword is ``name=(value, grid)``; a grid of one value has no edge. ``scores`` (optional) maps a tuple of
    values, in the keywords' order, to the CV score of that grid point: an edge whose inner neighbour (the next grid
    value of that hyperparameter, the others unchanged) scored the same gets ``"(flat)"`` appended, e.g.
    ``"gamma:low(flat)"``: the CV cannot tell them apart there, and the tie rule (first in grid order) picked the edge,
    so a wider grid would not move it. A selection on an edge says the grid may have cut the CV minimum off, so the
    summary counts them.
    """
    chosen = tuple(float(v) for v, _ in selected.values())
    edges = []
    for i, (name, (value, values)) in enumerate(selected.items()):
        values = sorted(float(v) for v in values)
        if len(values) < 2:
            continue
        if math.isclose(float(value), values[0], rel_tol=1e-12):
            side, inner = "low", values[1]
        elif math.isclose(float(value), values[-1], rel_tol=1e-12):
            side, inner = "high", values[-2]
        else:
            continue
        flat = ""
        if scores is not None:
            here, there = scores.get(chosen), scores.get(chosen[:i] + (inner,) + chosen[i + 1:])
            flat = "(flat)" if here is not None and here == there else ""
        edges.append(f"{name}:{side}{flat}")
    return ";".join(edges)


@dataclass(frozen=True)
class Fit:
    """A trained kernel expansion ``f(x) = sum_i coef_i k(x_i, x) + b`` over the training patterns.

    :meth:`decision` is :func:`svmref.solvers._result.kernel_expansion` and :meth:`predict` its
    :func:`~svmref.solvers._result.sign_labels` (``+1`` where ``f > 0``, ``-1`` where ``f <= 0``), the
    result types' decision function and tie rule.
    """

    coef: np.ndarray
    b: float
    n_sv: int
    n_iter: int
    converged: bool

    def decision(self, K_cross) -> np.ndarray:
        from svmref.solvers._result import kernel_expansion

        return kernel_expansion(K_cross, self.coef, self.b)

    def predict(self, K_cross) -> np.ndarray:
        from svmref.solvers._result import sign_labels

        return sign_labels(self.decision(K_cross))


#: solver settings of each (table family, model): the ``solver`` column of the CSV
SOLVERS = {
    "smo_first": "smo.{model}(wss='first', tol=1e-3)",
    "smo_default": "smo.{model}(wss='second', tol=1e-3)",
    "linear": "linear.{model}",
    "isls": "isls.isls_svm(tol=1e-4, max_iter=50, sv_threshold=1e-6)",
}


def fit_model(model: str, K, y, *, C: float | None = None, gamma: float | None = None, epsilon: float | None = None,
              variant: str = "linear", task: str = "classification") -> Fit:
    """Train one formulation on the kernel matrix ``K`` of the training patterns.

    ``variant`` picks the solver for ``ls_svm`` and the SMO settings: ``"smo_first"`` (000 §4: SMO with
    the maximal violating pair, 000 eq. (8), and eps = 1e-3), ``"smo_default"`` (LIBSVM's WSS 2), or
    ``"linear"`` (LS-SVM by its KKT system). ``ConvergenceWarning`` from a solver that stopped at its
    iteration limit is recorded as ``converged=False`` in the row instead of being printed per fit.
    """
    from svmref.solvers import isls, linear, smo

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", category=Warning)  # the status is kept in Fit.converged
        if model == "l1_svm" and task == "regression":
            # the SVM of a regression table: epsilon-SVR (the L1, epsilon-insensitive loss), smo.svr
            res = smo.svr(K, y, C, epsilon, tol=1e-3)
            return Fit(res.alpha, res.b, int(np.count_nonzero(res.alpha)), int(res.n_iter), bool(res.converged))
        if model in ("l1_svm", "least_1norm_svm") or (model == "ls_svm" and variant.startswith("smo")):
            fn = getattr(smo, model)
            opts = {"wss": "first" if variant == "smo_first" else "second", "tol": 1e-3}
            if variant == "smo_first" and "shrinking" in inspect.signature(fn).parameters:
                opts["shrinking"] = False  # 000 §3's SMO has no shrinking: n_iter counts its pair updates
            res = fn(K, y, C, **opts)
            return Fit(res.alpha * y, res.b, int(np.count_nonzero(res.alpha)), int(res.n_iter), bool(res.converged))
        if model == "ls_svm":
            fn = linear.ls_svm if task == "classification" else linear.ls_svm_regression
            res = fn(K, y, C)
            return Fit(res.coef, res.b, int(np.count_nonzero(res.alpha)), int(res.n_iter), bool(res.converged))
        if model == "isls_svm":
            res = isls.isls_svm(K, y, C, task=task)
            coef = np.zeros_like(res.alpha)
            coef[res.support_] = res.alpha[res.support_]  # 004 §3: only |alpha_i| > 1e-6 enter the model
            return Fit(coef, res.b, int(res.n_sv), int(res.n_iter), bool(res.converged))
        if model == "rls":
            res = linear.rls(K, y, gamma)
            return Fit(res.c, 0.0, int(np.count_nonzero(res.c)), int(res.n_iter), bool(res.converged))
    raise ValueError(f"model must be one of 'ls_svm', 'least_1norm_svm', 'l1_svm', 'isls_svm', 'rls'; got {model!r}")


def cv_folds(n: int, n_folds: int, rng: np.random.Generator) -> list[np.ndarray]:
    """``n_folds`` folds of a random permutation of ``range(n)`` (sizes differ by at most one)."""
    if not 2 <= n_folds <= n:
        raise ValueError(f"n_folds must be in [2, {n}]; got {n_folds}")
    return np.array_split(rng.permutation(n), n_folds)


def cv_score(model: str, K_full, y, folds, *, C=None, gamma=None, epsilon=None, variant="linear",
             task="classification") -> float:
    """k-fold cross-validation on one training set: % misclassified (classification) or the MSE.

    ``K_full`` is the kernel matrix of the whole training set; each fold's matrices are its blocks,
    so the kernel is computed once per ``sigma``. A fold whose training part holds one class only
    predicts that class.
    """
    wrong, sq = 0.0, 0.0
    for k, te in enumerate(folds):
        tr = np.concatenate([f for j, f in enumerate(folds) if j != k])
        if task == "classification" and np.all(y[tr] == y[tr][0]):
            wrong += float(np.sum(y[te] != y[tr][0]))
            continue
        fit = fit_model(model, K_full[np.ix_(tr, tr)], y[tr], C=C, gamma=gamma, epsilon=epsilon, variant=variant,
                        task=task)
        K_cross = K_full[np.ix_(te, tr)]
        if task == "classification":
            wrong += float(np.sum(fit.predict(K_cross) != y[te]))
        else:
            sq += float(np.sum((fit.decision(K_cross) - y[te]) ** 2))
    n = len(y)
    return 100.0 * wrong / n if task == "classification" else sq / n


def no_selection(dsets, splits, quick, seed) -> list[dict]:
    """``selection_tasks`` of a table whose hyperparameters are selected inside each split: there are none."""
    return []


def every_split(dsets, models, splits: int, quick: bool, seed: int) -> list[dict]:
    """``split_tasks`` when every split of every data set runs every model: one task per (data set, model,
    split); ``models(d)`` gives the models of data set ``d``."""
    return [{"dataset": d, "model": m, "split": s, "seed": seed, "quick": quick}
            for d in dsets for m in models(d) for s in range(splits)]

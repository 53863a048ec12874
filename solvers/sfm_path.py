"""The selectivity path and leave-one-out of the support features machine (003 §3, Figs. 2-5).

Both call the solver :func:`svmref.solvers.support_features.support_features` (defined in
:mod:`svmref.solvers._sfm_model`); :mod:`svmref.solvers.support_features` re-exports the names here, so
``from svmref.solvers.support_features import selectivity_path`` keeps working. The imports go one way:
``support_features -> sfm_path -> _sfm_model -> _sfm_engine``.
"""
from __future__ import annotations

import time as _time
from dataclasses import dataclass, field

import numpy as np

from svmref._validation import check_mu, check_positive

from ._result import kernel_expansion
from ._sfm_model import SFMResult, _check_data, _gram_seam, recover_b, support_features

__all__ = ["PathResult", "leave_one_out", "selectivity_path"]


# ----------------------------------------------------------------------------------------------
# selectivity path and leave-one-out (003 §3, Figs. 2-5)
# ----------------------------------------------------------------------------------------------
@dataclass(frozen=True, repr=False)
class PathResult:
    """Result of :func:`selectivity_path`: one model per selectivity ``mu`` (003 Figs. 3-5).

    Attributes: ``mus`` (as given), ``models`` (:class:`SFMResult` per mu), ``n_selected`` (features with
    ``a_i != 0``), ``loo_error`` (leave-one-out error rate per mu, or ``None``), ``n_iter`` (pair steps per
    mu, LOO re-solves excluded), ``time`` (seconds, total).
    """

    mus: np.ndarray
    models: list
    n_selected: np.ndarray
    loo_error: np.ndarray | None = None
    n_iter: np.ndarray | None = None
    time: float = 0.0
    info: dict = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self.models)

    def records(self) -> list[dict]:
        """One dict per mu: ``mu``, ``model``, ``n_selected``, ``selected``, ``loo_error``."""
        out = []
        for k, r in enumerate(self.models):
            out.append({"mu": float(self.mus[k]), "model": r, "n_selected": int(self.n_selected[k]),
                        "selected": r.selected,
                        "loo_error": None if self.loo_error is None else float(self.loo_error[k])})
        return out

    def best(self) -> int:
        """Index of the smallest LOO error (003 §3 chooses mu this way); ties go to fewer features."""
        if self.loo_error is None:
            raise ValueError("best() needs the leave-one-out errors: call selectivity_path(..., loo=True)")
        order = np.lexsort((self.n_selected, self.loo_error))
        return int(order[0])

    def __repr__(self) -> str:
        loo = "" if self.loo_error is None else f", loo_error={np.round(self.loo_error, 4).tolist()}"
        return (f"PathResult(mus={np.round(self.mus, 6).tolist()}, n_selected={self.n_selected.tolist()}"
                f"{loo}, time={self.time:.3g})")


def _repair_warm_start(lam, y, j, C):
    """Drop pattern ``j`` from a feasible ``lam`` of (10) and restore ``sum y lam = 0`` inside the box.

    Removing ``lam_j`` leaves ``sum y lam = -y_j lam_j``; the other class holds at least ``lam_j`` in total
    (``sum_{y=-y_j} lam = sum_{y=y_j} lam >= lam_j``), so scaling its ``lam`` by ``1 - lam_j / S`` repairs it.
    """
    keep = np.ones(y.shape[0], dtype=bool)
    keep[j] = False
    lam_r, y_r = lam[keep].copy(), y[keep]
    other = y_r == -y[j]
    S = float(np.sum(lam_r[other]))
    if lam[j] > 0.0 and S > 0.0:
        lam_r[other] *= max(0.0, 1.0 - lam[j] / S)
    # rounding: put the residual on a free lam of the other class (never move one off a bound)
    resid = float(y_r @ lam_r)
    free = other & (lam_r > 0.0) & (lam_r < C)
    if resid != 0.0 and np.any(free):
        k = np.flatnonzero(free)[np.argmax(lam_r[free])]
        lam_r[k] = min(C, max(0.0, lam_r[k] + resid * y_r[k]))
    return keep, lam_r


def _check_model(model, X, C, mu) -> None:
    """``model`` must be the full model of :func:`leave_one_out`'s own problem: an :class:`SFMResult` of these
    patterns, features, ``C`` and ``mu`` (its ``lam`` is the warm start of each reduced problem)."""
    fix = "pass support_features(X, y, C, mu) fitted on the same X, y, C and mu, or model=None"
    if not isinstance(model, SFMResult):
        raise TypeError(f"model must be an SFMResult; got {type(model).__name__}; {fix}")
    N, n = X.shape
    if np.shape(model.a) != (n,) or np.shape(model.lam) != (N,):
        raise ValueError(f"model was fitted on {np.shape(model.lam)[0]} patterns x {np.shape(model.a)[0]} features, "
                         f"but X has {N} x {n}; {fix}")
    for name, got, want in (("C", model.C, C), ("mu", model.mu, mu)):
        if np.isfinite(got) and not np.isclose(got, want, rtol=1e-12, atol=0.0):
            raise ValueError(f"model was fitted with {name} = {got:g}, but {name} = {want:g} was given; {fix}")


def leave_one_out(X, y, C, mu, model: SFMResult | None = None, *, tol=1e-3, **options) -> tuple[float, np.ndarray]:
    """Leave-one-out error of the support features machine (003 §3: the criterion that chooses mu).

    For each pattern ``j``: train on the others and classify ``x_j``; an error is ``y_j f_{-j}(x_j) <= 0``.
    If ``lam_j = 0`` in the full model, the full ``lam`` without ``j`` is still optimal for the reduced
    problem (feasible, same ``w``, and its KKT sets are subsets), so only ``a`` is reused and ``b`` is
    recomputed without ``j``; otherwise the reduced problem is re-solved from the repaired full ``lam``
    (:func:`_repair_warm_start`). Returns ``(error_rate, margins)`` with ``margins_j = y_j f_{-j}(x_j)``.
    """
    X, y = _check_data(X, y)
    C = check_positive(C, "C")
    mu = check_mu(mu, "mu")
    for cls in (-1.0, 1.0):
        if np.sum(y == cls) < 2:
            raise ValueError(f"y: leave-one-out needs at least 2 patterns of class {int(cls):+d}")
    if model is None:
        model = support_features(X, y, C, mu, tol=tol, **options)
    else:
        _check_model(model, X, C, mu)
    b_rule = options.get("b_rule", "eq11")
    reduced_options = {k: v for k, v in options.items() if k != "gram"}
    lam = model.lam
    F = X @ model.a
    N = X.shape[0]
    margins = np.empty(N)
    for j in range(N):
        keep, lam_r = _repair_warm_start(lam, y, j, C)
        if lam[j] == 0.0:
            b, _ = recover_b(F[keep], y[keep], lam_r, C, b_rule)
            f = F[j] + b
        else:  # a Gram of the full X does not fit the reduced problem: that solve caches its own columns
            r = support_features(X[keep], y[keep], C, mu, tol=tol, lam0=lam_r, **reduced_options)
            f = float(kernel_expansion(X[j], r.a, r.b)[0])
        margins[j] = y[j] * f
    return float(np.mean(margins <= 0.0)), margins


def selectivity_path(X, y, C, mus, *, tol=1e-3, loo=False, **options) -> PathResult:
    """Solve the support features machine for a grid of selectivities ``mus`` with warm starts.

    Each solve starts from the previous ``lam`` (still feasible for (10): the box and ``sum y lam = 0``
    do not depend on ``mu``). Returns a :class:`PathResult` with, per mu, the model, the number of
    selected features and (``loo=True``) the leave-one-out error of :func:`leave_one_out`. Extra
    ``options`` go to :func:`support_features` (``b_rule``, ``wss``, ``max_iter``, ``use_gram``,
    ``cache_size``, ``gram``). The solves share one kernel seam for ``K = X X'``: a column computed for one
    mu is a cache hit for the next.
    """
    t0 = _time.perf_counter()
    X, y = _check_data(X, y)
    C = check_positive(C, "C")
    mus_arr = np.atleast_1d(np.asarray(mus, dtype=np.float64))
    if mus_arr.ndim != 1 or mus_arr.size == 0:
        raise ValueError(f"mus must be a non-empty 1-D sequence of selectivities; got shape {mus_arr.shape}")
    for m in mus_arr:
        check_mu(float(m), "mus")
    if "lam0" in options:
        raise ValueError("selectivity_path chooses its own warm starts; do not pass lam0")
    path_options = dict(options)
    use, seam = _gram_seam(X, **{k: options[k] for k in ("use_gram", "cache_size", "gram") if k in options})
    if use:
        path_options["gram"] = seam  # one column cache for every mu (LOO re-solves use other X: their own)
    models, n_sel, iters, loo_err = [], [], [], []
    lam = None
    for m in mus_arr:
        r = support_features(X, y, C, float(m), tol=tol, lam0=lam, **path_options)
        lam = r.lam
        models.append(r)
        n_sel.append(r.selected.size)
        iters.append(r.n_iter)
        if loo:
            loo_err.append(leave_one_out(X, y, C, float(m), r, tol=tol, **options)[0])
    return PathResult(mus=mus_arr, models=models, n_selected=np.asarray(n_sel, dtype=np.int64),
                      loo_error=np.asarray(loo_err) if loo else None, n_iter=np.asarray(iters, dtype=np.int64),
                      time=_time.perf_counter() - t0, info={"C": C, "tol": tol})

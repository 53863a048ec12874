r"""The weighted LS-SVM and the robust LS-SVM built on it (Suykens, De Brabanter, Lukas & Vandewalle, "Weighted least
squares support vector machines: robustness and sparse approximation", Neurocomputing 48, 2002; LS-SVMlab's
``robustlssvm``).

000 finds the LS-SVM's squared loss sensitive to outliers (000 §1, §4 and Fig. 1): one pattern far on the wrong side
pulls the hyperplane with a force that grows with its error, ``alpha_i = C xi_i`` (000 eq. (7)). The weighted LS-SVM
gives each squared error its own weight, ``C/2 sum_i v_i e_i^2``; its KKT system is the LS-SVM's (004 eq. (2); 000
eqs. (2), (7)) with ``I/C`` replaced by ``D = diag(1/(C v_i))``, and ``e_i = alpha_i / (C v_i)``
(:mod:`svmref.formulations.weighted_ls_svm` derives it).

The robust procedure (Suykens et al. 2002, §3; De Brabanter et al., "Robustness of kernel based regression: a
comparison of iterative weighting schemes", ICANN 2009) starts from the LS-SVM (``v = 1``) and repeats:

1. the residuals ``e_i = alpha_i / (C v_i)`` of the current weighted solve;
2. new weights ``v_i = w(e_i / s)`` for a weight function ``w`` (:data:`WEIGHTS`): Huber, Hampel (``c1 = 2.5``,
   ``c2 = 3``), logistic or myriad, with ``s = 1.483 MAD(e)`` the robust scale (the median absolute deviation from
   the median, made a consistent estimate of the standard deviation of Gaussian errors) of the *unweighted* fit's
   errors, as Suykens et al. 2002 (§3) compute it, held fixed while the weights are iterated. (Recomputing ``s`` at
   every step made Hampel's weights cycle, never settling, on 7 of the 202 fits of 000 Fig. 1's 101 draws; with the
   scale fixed all 202 settle in at most 3 to 27 solves, whatever the weight function.)

until the weights change by less than ``tol`` (``max_i |v_i - v_i'|``) or ``max_iter`` solves; every weighted solve is
certified (its duality gap, :func:`weighted_ls_svm`). The fixed point is not the optimum of one convex problem (the
weights depend on the solution); what is certified is that the returned ``(alpha, b)`` solves the weighted problem
at the returned weights.
"""
from __future__ import annotations

import time
import warnings

import numpy as np
from scipy.linalg import lapack

from svmref._validation import check_gram, check_labels, check_positive, check_targets, check_weights

from ._result import (
    ConvergenceWarning,
    SolverResult,
    certified,
    relative_gap,
    warn_suboptimal,
)

__all__ = ["WEIGHTS", "MIN_WEIGHT", "weight_function", "robust_scale", "weighted_ls_svm",
           "weighted_ls_svm_classification", "weighted_ls_svm_regression", "robust_ls_svm"]

_U = 2.0 ** -53
#: The smallest weight a pattern gets (Hampel's weight beyond ``c2``, 1e-4 in Suykens et al. 2002): never 0, so that
#: ``D = diag(1/(C v_i))`` stays finite.
MIN_WEIGHT = 1e-4


def _huber(r, c=1.345):
    a = np.abs(r)
    return np.where(a <= c, 1.0, c / np.maximum(a, c))


def _hampel(r, c1=2.5, c2=3.0):
    a = np.abs(r)
    return np.where(a <= c1, 1.0, np.where(a <= c2, (c2 - a) / (c2 - c1), MIN_WEIGHT))


def _logistic(r):
    r = np.asarray(r, dtype=float)
    out = np.ones_like(r)
    nz = r != 0.0
    out[nz] = np.tanh(r[nz]) / r[nz]
    return out


def _myriad(r, delta=1.0):
    return delta ** 2 / (delta ** 2 + np.asarray(r, dtype=float) ** 2)


#: The weight functions of the standardised residual ``r = e / s`` (De Brabanter et al. 2009, Table 1): Huber
#: ``min(1, c/|r|)`` with ``c = 1.345``; Hampel ``1`` for ``|r| <= c1``, ``(c2 - |r|)/(c2 - c1)`` up to ``c2``, then
#: ``1e-4`` (``c1 = 2.5``, ``c2 = 3``, Suykens et al. 2002); logistic ``tanh(r)/r``; myriad ``delta^2 / (delta^2 +
#: r^2)`` with ``delta = 1``.
WEIGHTS = {"huber": _huber, "hampel": _hampel, "logistic": _logistic, "myriad": _myriad}


def weight_function(name: str):
    """The weight function called ``name`` (:data:`WEIGHTS`); ``ValueError`` naming the choices otherwise."""
    if name not in WEIGHTS:
        raise ValueError(f"weight must be one of {sorted(WEIGHTS)}; got {name!r}")
    return WEIGHTS[name]


def robust_scale(e) -> float:
    """``1.483 MAD(e)``: ``1.483 median_i |e_i - median(e)|`` (a consistent estimate of the standard deviation of
    Gaussian errors; Suykens et al. 2002, §3)."""
    e = np.asarray(e, dtype=float)
    return float(1.483 * np.median(np.abs(e - np.median(e))))


def _system_parts(A: np.ndarray, r: np.ndarray, s: np.ndarray):
    """``(alpha, b)`` of ``[0 s'; s A][b; alpha] = [0; r]`` (``A`` positive definite): Cholesky of ``A`` and the
    Schur complement of ``b``; None where ``A`` is not positive definite."""
    L, info = lapack.dpotrf(A, lower=1, clean=1)
    if info != 0:
        return None
    u, _ = lapack.dpotrs(L, s, lower=1)
    g, _ = lapack.dpotrs(L, r, lower=1)
    b = float(s @ g) / float(s @ u)
    return g - b * u, b


def _gap(K, y, C, v, alpha, b, classification):
    """The certified duality gap of ``(alpha, b)`` for the weighted problem: the dual point projected onto ``s'alpha
    = 0`` and the primal point with exactly feasible errors ``e = r - S(K S alpha + b s)``; returns ``(P, D, gap,
    floor)`` (dual as a minimisation, ``p* = -d*``)."""
    n = y.shape[0]
    s = y if classification else np.ones(n)
    r = np.ones(n) if classification else y
    a = alpha - s * (s @ alpha) / n                 # s's = n for both forms
    sa = s * a
    Kv = K @ sa
    e = r - s * (Kv + b)                            # y_i (f_i) = 1 - e_i, or f_i = y_i - e_i
    quad = float(sa @ Kv)
    P = 0.5 * quad + 0.5 * C * float(np.sum(v * e * e))
    D = 0.5 * quad + 0.5 * float(np.sum(a * a / (C * v))) - float(r @ a)
    size = (float(np.abs(sa) @ (np.abs(K) @ np.abs(sa))) + C * float(np.sum(v * e * e))
            + float(np.sum(a * a / (C * v))) + float(np.abs(r) @ np.abs(a)))
    return P, D, P + D, (n + 8) * _U * size


def weighted_ls_svm(K, y, C, v, *, task: str = "regression", gap_tol: float = 1e-8) -> SolverResult:
    """The weighted LS-SVM (module docstring) by its KKT system: ``[0 s'; s S(K + D)S][b; alpha] = [0; r]``,
    ``D = diag(1/(C v_i))`` (``S = Y``, ``s = y``, ``r = 1`` for classification, 000 eqs. (2), (7); ``S = I``,
    ``s = 1``, ``r = y`` for regression, 004 eq. (2)), by Cholesky and the Schur complement of ``b``.

    ``alpha`` in the convention of the task (classification ``f(x) = sum alpha_i y_i k(x_i, x) + b``, regression
    ``sum alpha_i k(x_i, x) + b``); ``objective`` is the dual (minimised, ``p* = -objective``); ``status ==
    "optimal"`` when the certified duality gap (:func:`_gap`) is within ``gap_tol`` of ``|objective|``.
    """
    t0 = time.perf_counter()
    if task not in ("regression", "classification"):
        raise ValueError(f"task must be 'regression' or 'classification'; got {task!r}")
    K = check_gram(K, "K")
    n = K.shape[0]
    classification = task == "classification"
    y = check_labels(y, n) if classification else check_targets(y, n)
    C = check_positive(C, "C")
    v = check_weights(v, n, "v")
    gap_tol = check_positive(gap_tol, "gap_tol")
    s = y if classification else np.ones(n)
    r = np.ones(n) if classification else y
    A = (s[:, None] * K) * s[None, :]
    A[np.diag_indices(n)] += 1.0 / (C * v)
    parts = _system_parts(A, r, s)
    if parts is None:  # an indefinite K: the KKT point by LU, labelled not convex
        return _not_convex(A, r, s, y, task, classification, t0)
    alpha, b = parts
    P, D, gap, floor = _gap(K, y, C, v, alpha, b, classification)
    scale = max(abs(D) - max(gap, 0.0) - floor, 0.0)
    rel_gap, rel_floor = relative_gap(max(gap, 0.0), floor, scale)
    if gap >= -floor and certified(max(gap, 0.0), floor, scale, gap_tol):  # a gap below -floor breaks weak duality
        status, msg = "optimal", ""
    else:
        status = "suboptimal"
        msg = warn_suboptimal("weighted_ls_svm", "the direct solve ended", rel_gap, rel_floor, gap_tol,
                              "K + diag(1/(C v_i)) is ill-conditioned: a smaller C or larger weights would help")
    coef = alpha * y if classification else alpha
    return SolverResult(alpha=alpha, b=b, objective=D, n_iter=1, converged=True, status=status, message=msg,
                        time=time.perf_counter() - t0, task=task, coef=coef, duality_gap=rel_gap,
                        gap_floor=rel_floor, gap_tol=gap_tol, info={"v": v, "primal": P})


def weighted_ls_svm_classification(K, y, C, v, *, gap_tol: float = 1e-8) -> SolverResult:
    """:func:`weighted_ls_svm` with ``task="classification"``, in verify's call form ``f(K, y, C, v=v)`` for the
    formulation ``weighted_ls_svm`` (000 eqs. (2), (7) with ``C v_i``)."""
    return weighted_ls_svm(K, y, C, v, task="classification", gap_tol=gap_tol)


def weighted_ls_svm_regression(K, y, C, v, *, gap_tol: float = 1e-8) -> SolverResult:
    """:func:`weighted_ls_svm` with ``task="regression"``, in verify's call form ``f(K, y, C, v=v)`` for the
    formulation ``weighted_ls_svm_regression`` (004 eq. (2) with ``C v_i``)."""
    return weighted_ls_svm(K, y, C, v, task="regression", gap_tol=gap_tol)


def _not_convex(A, r, s, y, task, classification, t0) -> SolverResult:
    """The KKT point of an indefinite system (``S(K + D)S`` not positive definite: K is not PSD), solved by LU, with
    a ``LinAlgWarning`` and ``status == "not_convex"``: a stationary point, not a minimum."""
    from scipy.linalg import LinAlgWarning, solve

    n = y.shape[0]
    H = np.zeros((n + 1, n + 1))
    H[0, 1:] = H[1:, 0] = s
    H[1:, 1:] = A
    msg = ("weighted_ls_svm: K + diag(1/(C v_i)) is not positive definite (K is not PSD): the KKT system is solved by "
           "LU, and its solution is a stationary point of a problem that is not convex, not a minimum")
    warnings.warn(msg, LinAlgWarning, stacklevel=3)
    x = solve(H, np.concatenate([[0.0], r]), check_finite=False)
    alpha, b = x[1:], float(x[0])
    return SolverResult(alpha=alpha, b=b, objective=float("nan"), n_iter=1, converged=True, status="not_convex",
                        message=msg, time=time.perf_counter() - t0, task=task,
                        coef=alpha * y if classification else alpha)


def robust_ls_svm(K, y, C, *, weight: str = "hampel", task: str = "regression", max_iter: int = 100,
                  tol: float = 1e-4, gap_tol: float = 1e-8) -> SolverResult:
    """The robust LS-SVM (module docstring): weights from the residuals, iterated to a fixed point.

    Returns the :class:`SolverResult` of the last weighted solve (certified at its weights), with
    ``info["weights"]`` (the ``v`` of that solve), ``info["scale"]`` (``1.483 MAD`` of the unweighted fit's errors) and
    ``n_iter`` the weighted solves. A run that reaches ``max_iter`` with weights still moving by more than ``tol``
    has ``status == "max_iter_reached"`` and warns :class:`ConvergenceWarning`. Residuals whose robust scale is 0
    (more than half the patterns fitted exactly) leave the weights at 1 there: there is no outlier to weigh down
    on that scale.
    """
    w = weight_function(weight)
    if isinstance(max_iter, bool) or not isinstance(max_iter, (int, np.integer)) or max_iter < 1:
        raise ValueError(f"max_iter must be an integer >= 1; got {max_iter!r}")
    tol = check_positive(tol, "tol")
    n = np.shape(K)[0]
    v = np.ones(n)
    res, scale, moved, solved_at = None, float("nan"), float("inf"), v
    solves = 0
    for _ in range(int(max_iter)):
        res = weighted_ls_svm(K, y, C, v, task=task, gap_tol=gap_tol)
        solves, solved_at = solves + 1, v
        e = res.alpha / (C * v)
        if solves == 1:  # the robust scale of the unweighted fit's errors, held fixed (module docstring)
            scale = robust_scale(e)
        new = np.maximum(w(e / scale), MIN_WEIGHT) if scale > 0.0 else np.ones(n)
        moved = float(np.max(np.abs(new - v)))
        if moved < tol:
            break
        v = new
    status = res.status
    if moved >= tol:
        status = "max_iter_reached"
        warnings.warn(f"robust_ls_svm: the weights still moved by {moved:.3g} (tol = {tol:g}) after {max_iter} "
                      "weighted solves; the last solve is returned, certified at its own weights", ConvergenceWarning,
                      stacklevel=2)
    info = dict(res.info, weights=solved_at, scale=scale, weight=weight, moved=moved)
    return SolverResult(alpha=res.alpha, b=res.b, objective=res.objective, n_iter=solves, converged=moved < tol,
                        status=status, message=res.message, time=res.time, task=res.task, coef=res.coef,
                        duality_gap=res.duality_gap, gap_floor=res.gap_floor, gap_tol=res.gap_tol, info=info)

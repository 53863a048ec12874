"""One SMO engine for the four box-constrained SVM duals, and its four adapters (issue 3).

The L1-SVM, L2-SVM, LS-SVM and Least 1-Norm SVM duals are one problem with different data
(000, Table 1 and eq. (2), (5)):

    min_alpha  D(alpha) = 1/2 sum_ij alpha_i alpha_j y_i y_j Kt_ij - sum_i alpha_i
    s.t.       sum_i alpha_i y_i = 0,     l_i <= alpha_i <= u_i,

    ===================  =====================  ================
    adapter              Kt                     [l_i, u_i]
    ===================  =====================  ================
    :func:`l1_svm`       K                      [0, C]
    :func:`l2_svm`       K + I/C                [0, inf)
    :func:`ls_svm`       K + I/C   (000 (2))    (-inf, inf)
    :func:`least_1norm_svm`  K     (000 (5))    [-C, C]
    ===================  =====================  ================

:func:`smo_solve` is the engine (LIBSVM's ``Solver``: one problem, formulations as adapters that
only choose the diagonal shift and the box).  The shift ``1/C`` is added inside the compiled loop,
never to a copy of K.  Working-set selection:

* ``wss="first"``: the maximal violating pair over I_U, I_L (000, eq. (8)) with the clipped step
  (000, eq. (9));
* ``wss="second"``: Fan, Chen & Lin (2005), LIBSVM's WSS 2: ``i`` as above, ``j`` maximising the
  second-order gain ``(F_j - F_i)^2 / a_ij``.

Stopping rule: the KKT gap ``max_{I_low} F - min_{I_up} F <= tol`` with ``F_t = W.Phi~(X_t) - y_t``
(000, eq. (11); for LS-SVM every index is in both sets and this is eq. (10)).  The default
``tol = 1e-3`` is the paper's (000 §4).  The compiled loops and the notation are in
:mod:`svmref.solvers._smo_kernel`.

The decision function is ``f(x) = sum_i alpha_i y_i k(x_i, x) + b`` for all four (classification
convention); ``b`` is LIBSVM's ``-rho`` (mean over the free variables, midpoint rule otherwise).
"""
from __future__ import annotations

import numbers
import time
from dataclasses import dataclass

import numpy as np

from svmref._validation import (
    check_gram,
    check_kernel_memory,
    check_labels,
    check_max_iter,
    check_positive,
    check_tol,
)

from . import _smo_kernel as _k
from ._result import SolverResult, warn_not_converged

__all__ = ["SMOResult", "smo_solve", "l1_svm", "l2_svm", "ls_svm", "least_1norm_svm", "WSS"]

#: The working-set selection rules.
WSS = ("first", "second")

#: Below this tol the final gap is re-checked on F recomputed from alpha (one K @ v).
REFRESH_TOL = 1e-5

#: Relative asymmetry of K tolerated (the same as :func:`svmref._validation.check_gram`).
_SYM_RTOL = 1e-8


@dataclass(frozen=True, repr=False)
class SMOResult(SolverResult):
    """:class:`~svmref.solvers._result.SolverResult` of :func:`smo_solve`, with SMO's own fields.

    ``objective`` is the dual ``D(alpha)`` in the minimisation sign of 000 eq. (2)/(5) (so the
    primal optimum is ``-objective``); ``kkt_gap`` is the final ``max_{I_low} F - min_{I_up} F``
    (000, eq. (10)/(11)).

    Extra attributes
    ----------------
    n_sv : int
        Patterns with ``alpha_i != 0`` (support vectors).
    n_free : int
        Patterns strictly inside their box (``l_i < alpha_i < u_i``).
    wss : str
        Working-set rule used (``"first"`` or ``"second"``).
    tol : float
        The stopping tolerance.
    """

    n_sv: int = 0
    n_free: int = 0
    wss: str = "second"
    tol: float = 1e-3


# ------------------------------------------------------------------------------------------------
# input checks
# ------------------------------------------------------------------------------------------------
def _check_K(K) -> np.ndarray:
    """The Gram matrix, checked as :func:`check_gram` does but without its N x N temporaries.

    A float64 C-contiguous square array (what :func:`svmref.kernels.kernel_matrix` returns) is
    scanned once by the compiled :func:`_smo_kernel.gram_scan`; anything else, and any failure of
    the scan, goes through :func:`check_gram`, so the error messages are the house's.
    """
    shape = np.shape(K)
    if len(shape) == 2:
        check_kernel_memory(shape[0], shape[1])
    if (
        isinstance(K, np.ndarray)
        and K.dtype == np.float64
        and K.ndim == 2
        and K.shape[0] == K.shape[1]
        and K.size > 0
        and K.flags.c_contiguous
    ):
        bad, asym = _k.gram_scan(K, _SYM_RTOL)
        if bad < 0 and not asym:
            return K
    return check_gram(K, "K", rtol=_SYM_RTOL)


def _check_bound(v, n: int, name: str) -> np.ndarray:
    try:
        arr = np.asarray(v, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name} must be a number or a vector of {n} numbers: {exc}") from None
    if arr.ndim == 0:
        arr = np.full(n, float(arr))
    if arr.ndim != 1 or arr.shape[0] != n:
        raise ValueError(f"{name} must be a number or a vector of length {n}; got shape {arr.shape}")
    if np.any(np.isnan(arr)):
        raise ValueError(f"{name} contains NaN (first at index {int(np.argmax(np.isnan(arr)))})")
    return np.ascontiguousarray(arr)


def _check_alpha0(alpha0, y, lower, upper) -> np.ndarray:
    n = y.shape[0]
    a = np.asarray(alpha0, dtype=np.float64)
    if a.ndim != 1 or a.shape[0] != n:
        raise ValueError(f"alpha0 must be a vector of length {n}; got shape {a.shape}")
    if not np.all(np.isfinite(a)):
        raise ValueError("alpha0 contains NaN or infinity; all entries must be finite")
    if np.any(a < lower) or np.any(a > upper):
        i = int(np.argmax((a < lower) | (a > upper)))
        raise ValueError(
            f"alpha0 must lie in its box [lower, upper]; alpha0[{i}] = {a[i]!r} is outside "
            f"[{lower[i]!r}, {upper[i]!r}]"
        )
    r = float(a @ y)
    if abs(r) > 1e-10 * max(1.0, float(np.sum(np.abs(a)))):
        raise ValueError(f"alpha0 must satisfy sum_i alpha0_i y_i = 0 (000 eq. (5)); it is {r:.3g}")
    return a.copy()


def _check_wss(wss) -> bool:
    if wss not in WSS:
        raise ValueError(f"wss must be one of {WSS}; got {wss!r}")
    return wss == "second"


# ------------------------------------------------------------------------------------------------
# the engine
# ------------------------------------------------------------------------------------------------
def smo_solve(
    K,
    y,
    lower,
    upper,
    *,
    diag_shift: float = 0.0,
    tol: float = 1e-3,
    wss: str = "second",
    max_iter: int | None = None,
    alpha0=None,
    _name: str = "smo_solve",
    _stacklevel: int = 3,
) -> SMOResult:
    """Solve ``min 1/2 alpha' Q alpha - sum alpha`` s.t. ``y' alpha = 0``, ``lower <= alpha <= upper``.

    ``Q_ij = y_i y_j (K_ij + diag_shift * delta_ij)`` (000, eq. (2) with Kt = K + I/C, eq. (5) with
    Kt = K).  Bounds may be infinite (L2: ``upper = inf``; LS: both).

    Parameters
    ----------
    K : (N, N) array
        Symmetric kernel matrix (float64 C-contiguous is used without a copy).
    y : (N,) array of +-1
        Labels.
    lower, upper : float or (N,) array
        The box ``l_i <= alpha_i <= u_i``; ``lower <= 0 <= upper`` unless ``alpha0`` is given.
    diag_shift : float >= 0
        ``s`` in ``Kt = K + s I`` (``1/C`` for L2 and LS-SVM).
    tol : float > 0
        Stop when the KKT gap ``max_{I_low} F - min_{I_up} F <= tol`` (000, eq. (10)/(11)).  Below
        ``REFRESH_TOL = 1e-5`` the gap is confirmed on ``F`` recomputed from ``alpha`` (the running
        ``F`` drifts by rounding), and SMO resumes if it is not met; ``info["F_drift"]`` reports the drift.
    wss : {"first", "second"}
        Maximal violating pair (000, eq. (8)) or Fan, Chen & Lin (2005) second order.
    max_iter : int, optional
        Pair updates allowed; default ``max(10**7, 100 N)`` (LIBSVM's).  Reaching it sets
        ``status="max_iter_reached"`` and warns :class:`ConvergenceWarning`.
    alpha0 : (N,) array, optional
        Feasible start (box and ``y' alpha0 = 0``); default zeros.

    Returns
    -------
    SMOResult
    """
    t0 = time.perf_counter()
    K = _check_K(K)
    n = K.shape[0]
    y = check_labels(y, n, "y")
    lower = _check_bound(lower, n, "lower")
    upper = _check_bound(upper, n, "upper")
    if np.any(lower > upper):
        i = int(np.argmax(lower > upper))
        raise ValueError(f"lower must not exceed upper; lower[{i}] = {lower[i]!r} > upper[{i}] = {upper[i]!r}")
    if np.any(lower == np.inf) or np.any(upper == -np.inf):
        raise ValueError("lower must be < +inf and upper > -inf")
    if isinstance(diag_shift, bool) or not isinstance(diag_shift, numbers.Real):
        raise TypeError(f"diag_shift must be a real number >= 0; got {diag_shift!r}")
    shift = float(diag_shift)
    if not np.isfinite(shift) or shift < 0.0:
        raise ValueError(f"diag_shift must be a finite number >= 0; got {diag_shift!r}")
    tol = check_tol(tol, "tol")
    second = _check_wss(wss)
    max_iter = max(10_000_000, 100 * n) if max_iter is None else check_max_iter(max_iter, "max_iter")

    if alpha0 is None:
        if np.any(lower > 0.0) or np.any(upper < 0.0):
            raise ValueError("alpha = 0 is not in the box [lower, upper]; give a feasible alpha0")
        alpha = np.zeros(n)
        F = -y  # F_t = sum_j alpha_j y_j Kt_tj - y_t at alpha = 0 (a new array: the loop writes to it)
    else:
        alpha = _check_alpha0(alpha0, y, lower, upper)
        v = alpha * y
        F = K @ v + shift * v - y

    Kd = _k.q_diagonal(K)
    n_iter, code, gap = _k.smo_loop(K, Kd, y, lower, upper, shift, tol, second, max_iter, alpha, F)
    # F is updated incrementally and drifts by rounding (~1e-16 per update and iteration).  At a tight
    # tol that drift can hide a violation, so below REFRESH_TOL the stopping rule is checked once
    # more on F recomputed from alpha, and the loop resumes from there if it fails.
    drift = float("nan")
    refreshes = 0
    while code == _k.OPTIMAL and tol < REFRESH_TOL and refreshes < 3:
        v = alpha * y
        F_new = K @ v + shift * v - y
        drift = float(np.max(np.abs(F_new - F)))
        F = F_new
        refreshes += 1
        it, code, gap = _k.smo_loop(K, Kd, y, lower, upper, shift, tol, second, max_iter - n_iter, alpha, F)
        n_iter += it
        if it == 0:
            break
    b, n_free = _k.bias(y, lower, upper, alpha, F)
    # D(alpha) = 1/2 alpha'Q alpha - e'alpha with (Q alpha)_t = y_t F_t + 1  =>  1/2 sum alpha_t (y_t F_t - 1)
    objective = 0.5 * float(alpha @ (y * F - 1.0))
    converged = code == _k.OPTIMAL
    if converged:
        status, message = "optimal", f"KKT gap {gap:.3g} <= tol {tol:g} after {n_iter} iterations"
    else:
        status = "max_iter_reached"
        message = f"stopped at max_iter = {max_iter} with KKT gap {gap:.3g} > tol {tol:g}"
    elapsed = time.perf_counter() - t0
    if not converged:
        warn_not_converged(_name, int(n_iter), float(gap), tol, stacklevel=_stacklevel)
    return SMOResult(
        alpha=alpha,
        b=float(b),
        objective=objective,
        n_iter=int(n_iter),
        converged=converged,
        status=status,
        message=message,
        time=elapsed,
        kkt_gap=float(gap),
        info={"diag_shift": shift, "max_iter": max_iter, "F_refreshes": refreshes, "F_drift": drift},
        n_sv=int(np.count_nonzero(alpha)),
        n_free=int(n_free),
        wss=wss,
        tol=tol,
    )


# ------------------------------------------------------------------------------------------------
# the four adapters: f(K, y, C, **options) -> SMOResult
# ------------------------------------------------------------------------------------------------
def _adapter(name, K, y, C, lower, upper, shift, tol, wss, max_iter, alpha0):
    return smo_solve(
        K, y, lower, upper, diag_shift=shift, tol=tol, wss=wss, max_iter=max_iter, alpha0=alpha0,
        _name=name, _stacklevel=5,  # warn -> smo_solve -> _adapter -> adapter -> the caller
    )


def l1_svm(K, y, C, *, tol=1e-3, wss="second", max_iter=None, alpha0=None) -> SMOResult:
    """L1-SVM dual (000 Table 1; 003 eq. (3)): ``Kt = K``, ``0 <= alpha_i <= C``."""
    C = check_positive(C, "C")
    return _adapter("smo.l1_svm", K, y, C, 0.0, C, 0.0, tol, wss, max_iter, alpha0)


def l2_svm(K, y, C, *, tol=1e-3, wss="second", max_iter=None, alpha0=None) -> SMOResult:
    """L2-SVM dual (000 Table 1, §1): ``Kt = K + I/C``, ``0 <= alpha_i < inf``."""
    C = check_positive(C, "C")
    return _adapter("smo.l2_svm", K, y, C, 0.0, np.inf, 1.0 / C, tol, wss, max_iter, alpha0)


def ls_svm(K, y, C, *, tol=1e-3, wss="second", max_iter=None, alpha0=None) -> SMOResult:
    """LS-SVM dual (000, eq. (2)): ``Kt = K + I/C``, alpha free; the stopping rule is 000 eq. (10)."""
    C = check_positive(C, "C")
    return _adapter("smo.ls_svm", K, y, C, -np.inf, np.inf, 1.0 / C, tol, wss, max_iter, alpha0)


def least_1norm_svm(K, y, C, *, tol=1e-3, wss="second", max_iter=None, alpha0=None) -> SMOResult:
    """Least 1-Norm SVM dual (000, eq. (5)): ``Kt = K``, ``-C <= alpha_i <= C``; stopping 000 eq. (11)."""
    C = check_positive(C, "C")
    return _adapter("smo.least_1norm_svm", K, y, C, -C, C, 0.0, tol, wss, max_iter, alpha0)

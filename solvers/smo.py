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
convention, ``result.coef = alpha * y``); ``b`` is LIBSVM's ``-rho`` (mean over the free variables,
midpoint rule otherwise).  :func:`svr` is epsilon-SVR on the same engine (2N variables and a linear term,
as LIBSVM; ``f(x) = sum_i coef_i k(x_i, x) + b`` with ``coef = alpha^+ - alpha^-``).

**The kernel.**  Every entry point takes ``K`` as a dense Gram matrix, or a :class:`RawKernel` (raw X, a
kernel, an LRU column cache of ``cache_size`` MB: the full K is never formed), or a
:class:`PrecomputedKernel` (a checked dense K, reusable across calls).  For a dense K the engine also keeps
at most :data:`DENSE_CACHE_MB` of compact columns (K over the active variables, LIBSVM's layout; see
:mod:`svmref.solvers._smo_kernel`).

**Honesty.**  A kernel that is not positive semidefinite makes the dual non-convex.  SMO detects it by a
pair with ``a_ij = Kt_ii + Kt_jj - 2 Kt_ij < 0`` met during the iterations and, for a dense K with
N <= :data:`PSD_SCAN_MAX_N`, by a Cholesky scan of ``Kt + tau I`` before starting; then it raises
:class:`~svmref._validation.NotConvexError` (``on_nonconvex="raise"``, the default) or goes on as LIBSVM
does (``a_ij`` replaced by TAU) under a :class:`NotConvexWarning` with ``status="not_convex"``
(``on_nonconvex="clamp"``).  A result with non-finite alpha or b is never labelled optimal.

**Hard problems.**  On ill-conditioned problems (LS-SVM or the Least 1-Norm SVM on separable data with
C = 1e6) pairwise steps converge at a rate ~ 1 - 1/cond and stall.  Every :data:`NEWTON_EVERY` SMO
iterations (and once at the end when ``tol < REFRESH_TOL``) the engine takes a Newton step on the free
variables: the equality-constrained minimiser of D over the free set, other variables fixed, followed
along its direction up to the box (an exact line search; it never increases D).  This is the
unbounded-variable step of active-set methods; it solves LS-SVM (every variable free) in one step.
Without progress over a whole round the solver stops with ``status="numerical_issue"`` and a warning
instead of running to ``max_iter``.
"""
from __future__ import annotations

import time
import warnings
from dataclasses import dataclass

import numpy as np
import scipy.linalg

from svmref._thresholds import SMO_PSD_RTOL
from svmref._validation import (
    NotConvexError,
    check_labels,
    check_max_iter,
    check_nonnegative,
    check_positive,
    check_targets,
    check_tol,
)

from . import _smo_kernel as _k
from ._qmatrix import PrecomputedKernel, RawKernel, as_qmatrix, available_memory
from ._result import ConvergenceWarning, SolverResult, warn_not_converged

__all__ = ["SMOResult", "smo_solve", "l1_svm", "l2_svm", "ls_svm", "least_1norm_svm", "svr", "WSS",
           "RawKernel", "PrecomputedKernel", "NotConvexWarning", "ON_NONCONVEX"]

#: The working-set selection rules.
WSS = ("first", "second")

#: What to do with a kernel that is not positive semidefinite.
ON_NONCONVEX = ("raise", "clamp")

#: Below this tol the final gap is re-checked on F recomputed from alpha (one K @ v).
REFRESH_TOL = 1e-5

#: A pair with ``a_ij < -PSD_RTOL * max(1, |Kt_ii| + |Kt_jj|)`` proves that Kt is not PSD
#: (:data:`svmref._thresholds.SMO_PSD_RTOL`, defined there with its reason).
PSD_RTOL = SMO_PSD_RTOL

#: Dense kernels up to this size are scanned for PSD (a Cholesky factorisation) before solving.
PSD_SCAN_MAX_N = 1000

#: SMO iterations between Newton steps on the free variables: ``max(NEWTON_EVERY, 50 M)``.
NEWTON_EVERY = 200_000

#: Largest free set for which a Newton step (an ``(n_free + 1)``-square dense LDL' solve) is taken.
NEWTON_MAX_FREE = 4000

#: Largest free set for the eigen-decomposition used when that system is singular.
NEWTON_MAX_FREE_SINGULAR = 1500

#: Rounds of :data:`NEWTON_EVERY` iterations without a 10% decrease of the best KKT gap (and no Newton step)
#: after which the solver stops as stalled (``status="numerical_issue"``).
STALL_ROUNDS = 2


class NotConvexWarning(UserWarning):
    """The kernel matrix is not PSD and the solver goes on (``on_nonconvex="clamp"``): the result is a
    stationary point of a non-convex problem, labelled ``status="not_convex"``."""


@dataclass(frozen=True, repr=False)
class SMOResult(SolverResult):
    """:class:`~svmref.solvers._result.SolverResult` of :func:`smo_solve`, with SMO's own fields.

    ``objective`` is the dual ``D(alpha)`` in the minimisation sign of 000 eq. (2)/(5) (so the
    primal optimum is ``-objective``); ``kkt_gap`` is the final ``max_{I_low} F - min_{I_up} F``
    (000, eq. (10)/(11)).  ``coef`` is ``alpha * y`` (classification) or ``alpha^+ - alpha^-`` (:func:`svr`).

    Extra attributes
    ----------------
    n_sv : int
        Patterns with ``alpha_i != 0`` (support vectors).
    n_free : int
        Variables strictly inside their box (``l_i < alpha_i < u_i``).
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


def _check_flag(v, name: str) -> bool:
    if not isinstance(v, (bool, np.bool_)):
        raise TypeError(f"{name} must be True or False; got {v!r}")
    return bool(v)


def _check_options(wss, on_nonconvex, psd_scan, shrinking, newton):
    second = _check_wss(wss)
    if on_nonconvex not in ON_NONCONVEX:
        raise ValueError(f"on_nonconvex must be one of {ON_NONCONVEX}; got {on_nonconvex!r}")
    if psd_scan != "auto":
        _check_flag(psd_scan, "psd_scan")
    return second, _check_flag(shrinking, "shrinking"), _check_flag(newton, "newton")


# ------------------------------------------------------------------------------------------------
# pieces of the engine that run in Python (numpy / LAPACK)
# ------------------------------------------------------------------------------------------------
def _gradient(qm, pat, ident, y, p, shift, alpha, only_at_bound=None):
    """``F = Kt (alpha y) + y p`` exactly (``only_at_bound``: LIBSVM's ``G_bar``, the bound terms of K only)."""
    c = alpha * y
    if only_at_bound is not None:
        c = np.where(only_at_bound, c, 0.0)
    v = c if ident else np.bincount(pat, weights=c, minlength=qm.n)
    Kv = qm.matvec(v)
    Kv = Kv if ident else Kv[pat]
    if only_at_bound is not None:
        return np.ascontiguousarray(Kv)
    return np.ascontiguousarray(Kv + shift * c + y * p)


def _at_nonzero_bound(alpha, lower, upper):
    return ((alpha == upper) & (upper != 0.0)) | ((alpha == lower) & (lower != 0.0))


def _psd_scan(qm, shift, name):
    """``(psd, lambda_min or nan)`` of ``K + shift I`` by a Cholesky factorisation of ``K + (shift + tau) I``,
    ``tau = PSD_RTOL * max(1, ||K||_F)`` (at least the formulations' ``1e-10 max|eig|``, so whatever is refused
    here the reference refuses too)."""
    K = qm.K
    tau = PSD_RTOL * max(1.0, float(np.linalg.norm(K)))
    A = K + (shift + tau) * np.eye(K.shape[0])
    try:
        scipy.linalg.cholesky(A, lower=True, overwrite_a=True, check_finite=False)
        return True, float("nan")
    except np.linalg.LinAlgError:
        w = np.linalg.eigvalsh(K)
        return False, float(w[0] + shift)


def _newton_step(qm, pat, y, lower, upper, shift, alpha, F, max_steps=50):
    """Newton steps on the free variables S (the others fixed).  Returns the decrease of D (>= 0).

    On the face ``{alpha_t fixed for t not in S, y' alpha = const}`` D is the quadratic
    ``1/2 d'Q_SS d + g_S'd`` (``g = y F``, ``Q_SS = diag(y_S) Kt_SS diag(y_S)``).  If it has a minimiser, the
    step is the Newton step ``[Q_SS y_S; y_S' 0] [d; nu] = [-g_S; 0]``; if not (``Q_SS`` singular and ``g_S``
    not in its range: duplicates, a rank-deficient K with a box), D decreases linearly along the projection
    of ``-g_S`` on the null space (``Q d = 0``: F does not change), which is followed up to the box.  Each
    direction is followed with the exact line search ``t* = -g'd / d'Qd`` cut at the first bound; the
    variables that reach a bound leave S and the step is repeated (at most ``max_steps`` times), as in an
    active-set method.  Directions that do not decrease D are never taken.  Returns ``inf`` (nothing moved)
    when such a null direction decreases D and meets no bound: the dual is unbounded below.
    """
    S0 = np.flatnonzero((alpha > lower) & (alpha < upper))
    n0 = S0.size
    if n0 < 2 or n0 > NEWTON_MAX_FREE:
        return 0.0
    y0 = y[S0]
    Q0 = (y0[:, None] * qm.block(pat[S0], pat[S0])) * y0[None, :]
    Q0[np.diag_indices(n0)] += shift
    g0 = y0 * F[S0]
    lo0, up0 = lower[S0], upper[S0]
    loc = np.arange(n0)
    total = 0.0
    for _ in range(max_steps):
        n = loc.size
        if n < 2:
            break
        Qs = Q0[np.ix_(loc, loc)]
        gs = g0[loc]
        ys = y0[loc]
        u = None
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            A = np.zeros((n + 1, n + 1))
            A[:n, :n] = Qs
            A[:n, n] = ys
            A[n, :n] = ys
            rhs = np.concatenate([-gs, [0.0]])
            try:
                x = scipy.linalg.solve(A, rhs, assume_a="sym", check_finite=False)
                if np.all(np.isfinite(x)) and np.linalg.norm(x) * np.abs(A).max() <= 1e12 * max(np.linalg.norm(rhs), 1e-300):
                    u = x[:n]
            except (np.linalg.LinAlgError, ValueError):
                u = None
            if u is None and n > NEWTON_MAX_FREE_SINGULAR:
                break
            if u is None:  # singular: eigen-decomposition of the reduced Hessian on {y_s' d = 0}
                Z = np.linalg.qr(ys[:, None], mode="complete")[0][:, 1:]
                lam, V = np.linalg.eigh(Z.T @ Qs @ Z)
                rv = V.T @ (Z.T @ gs)
                null = lam <= 1e-10 * max(float(lam[-1]), 1e-300)
                d_null = Z @ (V @ np.where(null, -rv, 0.0))
                bounded = np.all(np.isfinite(np.where(d_null > 0, up0[loc], np.where(d_null < 0, lo0[loc], 0.0))))
                has_null = np.linalg.norm(d_null) > 1e-12 * max(np.linalg.norm(rv), 1e-300)
                if has_null and not bounded and float(gs @ d_null) < 0.0:
                    return np.inf  # D decreases linearly along d_null (Q d_null = 0) with no bound: unbounded below
                if has_null and bounded:
                    u = d_null
                else:
                    u = Z @ (V @ np.where(null, 0.0, -rv / np.where(null, 1.0, lam)))
        if not np.all(np.isfinite(u)):
            break
        u = u - ys * ((ys @ u) / n)  # exactly on y_s' d = 0 (y_t^2 = 1)
        gd = float(gs @ u)
        if not gd < 0.0:
            break
        Qu = Qs @ u
        curv = float(u @ Qu)
        t_star = -gd / curv if curv > 1e-14 * float(np.abs(Qs).max()) * float(u @ u) else np.inf
        a = alpha[S0[loc]]
        with np.errstate(divide="ignore", invalid="ignore"):
            room = np.where(u > 0.0, (up0[loc] - a) / u, np.where(u < 0.0, (lo0[loc] - a) / u, np.inf))
        t_box = float(np.min(room))
        t = min(t_star, t_box)
        if not np.isfinite(t) or t <= 0.0:
            break
        new = a + t * u
        hit = room <= t * (1.0 + 1e-12)
        new[hit] = np.where(u[hit] > 0.0, up0[loc][hit], lo0[loc][hit])
        new = np.minimum(np.maximum(new, lo0[loc]), up0[loc])
        step = new - a
        alpha[S0[loc]] = new
        g0 += Q0[:, loc] @ step
        total += max(0.0, -(t * gd + 0.5 * t * t * curv))
        if not np.any(hit):
            break
        loc = loc[~hit]
    return total


def _objective(alpha, y, p, F):
    # D = 1/2 alpha'Q alpha + p'alpha with (Q alpha)_t = y_t F_t - p_t  =>  1/2 sum alpha_t (y_t F_t + p_t)
    return 0.5 * float(alpha @ (y * F + p))


# ------------------------------------------------------------------------------------------------
# the engine
# ------------------------------------------------------------------------------------------------
#: Megabytes of compact columns (the working pair's columns of a precomputed K restricted to the active
#: variables, laid out contiguously: LIBSVM's cache of ``get_Q(i, active_size)``) the engine keeps for a dense K:
#: 400 MB of float64 hold as many kernel values as SVC's default ``cache_size`` of 200 MB, which LIBSVM fills
#: with float32. Never more than M x M floats. Only the slots used are touched. A raw-X kernel has its own cache
#: (``RawKernel(cache_size=...)``); the engine then keeps only the two working columns.
DENSE_CACHE_MB = 400.0


def _compact_cache(qm, M: int) -> np.ndarray:
    """The buffer of the engine's compact column cache: at least the two working columns (2 M floats); for a
    dense K up to :data:`DENSE_CACHE_MB`, but never more than a quarter of the memory available now (the cache
    only saves time: a small one is slower, never wrong)."""
    n = 2 * M
    if isinstance(qm, PrecomputedKernel):
        want = min(M * M, int(DENSE_CACHE_MB * 1024**2) // 8)
        avail = available_memory()
        if avail is not None:
            want = min(want, avail // 32)
        n = max(n, want)
    return np.empty(n)


def _engine(qm, pat, y, p, lower, upper, shift, *, tol, second, wss, max_iter, alpha0, shrinking, on_nonconvex,
            psd_scan, newton, name, stacklevel, coef_fn, t0):
    M = y.shape[0]
    ident = pat is None
    pat = np.arange(M, dtype=np.int64) if ident else np.ascontiguousarray(pat, dtype=np.int64)
    clamp = on_nonconvex == "clamp"
    nonconvex_msg = ""
    # --- PSD: cheap checks first, then (dense, small N) a Cholesky scan -----------------------------
    Kd = np.ascontiguousarray(qm.diag())
    if np.any(Kd + shift < -PSD_RTOL * max(1.0, float(np.max(np.abs(Kd))))):
        t = int(np.argmin(Kd))
        nonconvex_msg = f"K[{t}, {t}] + shift = {Kd[t] + shift:.3g} < 0"
    elif isinstance(qm, PrecomputedKernel) and (psd_scan is True or (psd_scan == "auto" and qm.n <= PSD_SCAN_MAX_N)):
        ok, lmin = _psd_scan(qm, shift, "K")
        if not ok:
            nonconvex_msg = f"its smallest eigenvalue is {lmin:.3g} (Cholesky scan of the {qm.n} x {qm.n} K)"
    if nonconvex_msg:
        if not clamp:
            raise NotConvexError(f"{name}: the kernel matrix is not positive semidefinite ({nonconvex_msg}), so the "
                                 "dual is not convex; pass on_nonconvex='clamp' to go on as LIBSVM does")
        warnings.warn(f"{name}: the kernel matrix is not positive semidefinite ({nonconvex_msg}); going on with the "
                      "TAU clamp (status='not_convex')", NotConvexWarning, stacklevel=stacklevel)

    if alpha0 is None:
        if np.any(lower > 0.0) or np.any(upper < 0.0):
            raise ValueError("alpha = 0 is not in the box [lower, upper]; give a feasible alpha0")
        alpha = np.zeros(M)
        F = np.ascontiguousarray(y * p)
        Gbar = np.zeros(M)
    else:
        alpha = _check_alpha0(alpha0, y, lower, upper)
        F = _gradient(qm, pat, ident, y, p, shift, alpha)
        Gbar = _gradient(qm, pat, ident, y, p, shift, alpha, _at_nonzero_bound(alpha, lower, upper)) if shrinking \
            else np.zeros(M)

    Q = qm.numba_q()
    out = np.zeros(6)
    gathered = 0
    cbuf = _compact_cache(qm, M)
    n_iter = 0
    newton_steps = 0
    refreshes = 0
    drift = float("nan")
    seen_nonconvex = bool(nonconvex_msg)
    min_active = M
    chunk = max(NEWTON_EVERY, 50 * M) if newton else max_iter
    final = None  # (status, message)
    stale = False  # F (and Gbar) need recomputing from alpha
    last_obj = _objective(alpha, y, p, F)
    best_gap = np.inf
    no_progress = 0
    while True:
        if stale:
            F = _gradient(qm, pat, ident, y, p, shift, alpha)
            if shrinking:
                Gbar = _gradient(qm, pat, ident, y, p, shift, alpha, _at_nonzero_bound(alpha, lower, upper))
            stale = False
        budget = min(chunk, max_iter - n_iter)
        it, code, gap = _k.solve(Q, Kd, pat, ident, y, p, lower, upper, shift, tol, second, budget, shrinking,
                                 PSD_RTOL, clamp, alpha, F, Gbar, out, cbuf)
        n_iter += int(it)
        if code != _k.NOT_CONVEX:
            min_active = min(min_active, int(out[4]))
            seen_nonconvex |= bool(out[3])
            gathered += int(out[5])
        if code == _k.NOT_CONVEX:
            i, j, a = int(out[0]), int(out[1]), float(out[2])
            raise NotConvexError(
                f"{name}: the kernel matrix is not positive semidefinite: the pair ({i}, {j}) has "
                f"Kt_ii + Kt_jj - 2 Kt_ij = {a:.3g} < 0, so the dual is not convex; pass on_nonconvex='clamp' "
                "to go on as LIBSVM does (status='not_convex')")
        if code == _k.UNBOUNDED:
            final = ("not_convex" if seen_nonconvex else "numerical_issue",
                     f"the dual is unbounded below along the pair ({int(out[0])}, {int(out[1])}) "
                     f"(a_ij = {out[2]:.3g} <= 0 and no bound): no minimiser exists")
            break
        if code == _k.OPTIMAL:
            if tol >= REFRESH_TOL:
                break
            # F is updated incrementally and drifts by rounding; at a tight tol confirm the gap on F
            # recomputed from alpha, after a Newton polish of the free variables
            refreshes += 1
            F_new = _gradient(qm, pat, ident, y, p, shift, alpha)
            drift = float(np.max(np.abs(F_new - F))) if F_new.size else 0.0
            F = F_new
            if newton and refreshes <= 3 and _newton_step(qm, pat, y, lower, upper, shift, alpha, F) > 0.0:
                newton_steps += 1
                F = _gradient(qm, pat, ident, y, p, shift, alpha)
            if shrinking:
                Gbar = _gradient(qm, pat, ident, y, p, shift, alpha, _at_nonzero_bound(alpha, lower, upper))
            gap = float(_k.kkt_gap(y, lower, upper, alpha, F))
            if gap <= tol:
                break
            if refreshes >= 6:
                final = ("numerical_issue", f"the KKT gap {gap:.3g} on the recomputed gradient stays above tol {tol:g}"
                         " at working precision; use a larger tol")
                break
            continue
        # MAX_ITER: the budget of this round is spent
        if n_iter >= max_iter:
            break
        obj = _objective(alpha, y, p, F)
        dec = _newton_step(qm, pat, y, lower, upper, shift, alpha, F) if newton else 0.0
        if dec == np.inf:
            final = ("not_convex" if seen_nonconvex else "numerical_issue",
                     "the dual is unbounded below: D decreases linearly along a direction of the free variables "
                     "on which Q vanishes and no bound applies; no minimiser exists")
            break
        if dec > 0.0:
            newton_steps += 1
            stale = True
            obj -= dec
            no_progress = 0
        elif gap < 0.9 * best_gap:
            no_progress = 0
        else:
            no_progress += 1
        best_gap = min(best_gap, float(gap))
        if no_progress >= STALL_ROUNDS:
            n_free_now = int(np.count_nonzero((alpha > lower) & (alpha < upper)))
            final = ("numerical_issue",
                     f"stalled: the KKT gap stays above {best_gap:.3g} (tol {tol:g}) over {STALL_ROUNDS * chunk} "
                     "iterations; pairwise steps converge too slowly here (an ill-conditioned K + shift, or a large "
                     f"box along a flat direction) and the Newton step on the free variables needs at most "
                     f"{NEWTON_MAX_FREE} of them ({NEWTON_MAX_FREE_SINGULAR} if singular), here {n_free_now}")
            if stale:
                F = _gradient(qm, pat, ident, y, p, shift, alpha)
            break
        if not obj < last_obj:
            final = ("numerical_issue", f"no decrease of the objective over {chunk} iterations (KKT gap {gap:.3g} > "
                                        f"tol {tol:g}): stalled at working precision")
            if stale:
                F = _gradient(qm, pat, ident, y, p, shift, alpha)
            break
        last_obj = obj
    if stale:
        F = _gradient(qm, pat, ident, y, p, shift, alpha)
        gap = float(_k.kkt_gap(y, lower, upper, alpha, F))
    b, n_free = _k.bias(y, lower, upper, alpha, F)
    objective = _objective(alpha, y, p, F)
    gap = float(gap)
    converged = code == _k.OPTIMAL and final is None and gap <= tol
    if final is not None:
        status, message = final
    elif converged:
        status, message = "optimal", f"KKT gap {gap:.3g} <= tol {tol:g} after {n_iter} iterations"
    else:
        status = "max_iter_reached"
        message = f"stopped at max_iter = {max_iter} with KKT gap {gap:.3g} > tol {tol:g}"
    if seen_nonconvex and status in ("optimal", "max_iter_reached"):
        status = "not_convex"
        converged = False
        message = ("the kernel matrix is not positive semidefinite (a_ij < 0 met, TAU clamp used): "
                   f"a stationary point of a non-convex problem at best; {message}")
    if not (np.all(np.isfinite(alpha)) and np.isfinite(b) and np.isfinite(objective)):
        status, converged = "numerical_issue", False
        message = f"non-finite alpha, b or objective: the result is unusable ({message})"
    elapsed = time.perf_counter() - t0
    if status == "max_iter_reached":
        warn_not_converged(name, int(n_iter), gap, tol, stacklevel=stacklevel + 1)
    elif status != "optimal" and not (status == "not_convex" and nonconvex_msg and final is None):  # warned above
        warnings.warn(f"{name}: {message} (status={status!r})",
                      NotConvexWarning if status == "not_convex" else ConvergenceWarning, stacklevel=stacklevel)
    info = {"diag_shift": shift, "max_iter": max_iter, "F_refreshes": refreshes, "F_drift": drift,
            "newton_steps": newton_steps, "shrinking": shrinking, "min_active": min_active,
            "compact_columns_gathered": gathered, **qm.cache_info()}
    return SMOResult(
        alpha=alpha, b=float(b), objective=objective, n_iter=int(n_iter), converged=converged, status=status,
        message=message, time=elapsed, kkt_gap=gap, info=info, coef=coef_fn(alpha), objective_sense="min",
        n_sv=int(np.count_nonzero(alpha)), n_free=int(n_free), wss=wss, tol=tol,
    )


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
    shrinking: bool = True,
    on_nonconvex: str = "raise",
    psd_scan="auto",
    newton: bool = True,
    _name: str = "smo_solve",
    _stacklevel: int = 3,
) -> SMOResult:
    """Solve ``min 1/2 alpha' Q alpha - sum alpha`` s.t. ``y' alpha = 0``, ``lower <= alpha <= upper``.

    ``Q_ij = y_i y_j (K_ij + diag_shift * delta_ij)`` (000, eq. (2) with Kt = K + I/C, eq. (5) with
    Kt = K).  Bounds may be infinite (L2: ``upper = inf``; LS: both).

    Parameters
    ----------
    K : (N, N) array, RawKernel or PrecomputedKernel
        Symmetric kernel matrix (float64 C-contiguous is used without a copy), or raw X with a kernel and a
        column cache (:class:`RawKernel`).
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
    shrinking : bool
        LIBSVM's shrinking (see :mod:`svmref.solvers._smo_kernel`); the result does not depend on it.
    on_nonconvex : {"raise", "clamp"}
        A kernel found not PSD raises :class:`NotConvexError`, or (``"clamp"``) the solver goes on with
        LIBSVM's TAU clamp, warns :class:`NotConvexWarning` and reports ``status="not_convex"``.
    psd_scan : "auto" or bool
        Cholesky scan of a dense K before solving ("auto": when N <= :data:`PSD_SCAN_MAX_N`).
    newton : bool
        Newton steps on the free variables when SMO stalls and, at tol < REFRESH_TOL, once at the end.

    Returns
    -------
    SMOResult
    """
    t0 = time.perf_counter()
    qm = as_qmatrix(K)
    n = qm.n
    y = check_labels(y, n, "y")
    lower = _check_bound(lower, n, "lower")
    upper = _check_bound(upper, n, "upper")
    if np.any(lower > upper):
        i = int(np.argmax(lower > upper))
        raise ValueError(f"lower must not exceed upper; lower[{i}] = {lower[i]!r} > upper[{i}] = {upper[i]!r}")
    if np.any(lower == np.inf) or np.any(upper == -np.inf):
        raise ValueError("lower must be < +inf and upper > -inf")
    shift = check_nonnegative(diag_shift, "diag_shift")
    tol = check_tol(tol, "tol")
    second, shrinking, newton = _check_options(wss, on_nonconvex, psd_scan, shrinking, newton)
    max_iter = max(10_000_000, 100 * n) if max_iter is None else check_max_iter(max_iter, "max_iter")
    return _engine(qm, None, y, -np.ones(n), lower, upper, shift, tol=tol, second=second, wss=wss,
                   max_iter=max_iter, alpha0=alpha0, shrinking=shrinking, on_nonconvex=on_nonconvex,
                   psd_scan=psd_scan, newton=newton, name=_name, stacklevel=_stacklevel,
                   coef_fn=lambda a: a * y, t0=t0)


# ------------------------------------------------------------------------------------------------
# the four adapters: f(K, y, C, **options) -> SMOResult
# ------------------------------------------------------------------------------------------------
def _adapter(name, K, y, C, lower, upper, shift, tol, wss, max_iter, alpha0, options):
    return smo_solve(
        K, y, lower, upper, diag_shift=shift, tol=tol, wss=wss, max_iter=max_iter, alpha0=alpha0,
        _name=name, _stacklevel=5, **options,  # warn -> _engine -> smo_solve -> _adapter -> adapter -> the caller
    )


def l1_svm(K, y, C, *, tol=1e-3, wss="second", max_iter=None, alpha0=None, shrinking=True, on_nonconvex="raise",
           psd_scan="auto", newton=True) -> SMOResult:
    """L1-SVM dual (000 Table 1; 003 eq. (3)): ``Kt = K``, ``0 <= alpha_i <= C``.  Options: :func:`smo_solve`."""
    C = check_positive(C, "C")
    return _adapter("smo.l1_svm", K, y, C, 0.0, C, 0.0, tol, wss, max_iter, alpha0,
                    dict(shrinking=shrinking, on_nonconvex=on_nonconvex, psd_scan=psd_scan, newton=newton))


def _inv_C(C):
    s = 1.0 / C
    if not np.isfinite(s):
        raise ValueError(f"C = {C!r} is too small: 1/C overflows; C must be at least {1.0 / np.finfo(float).max:.3g}")
    return s


def l2_svm(K, y, C, *, tol=1e-3, wss="second", max_iter=None, alpha0=None, shrinking=True, on_nonconvex="raise",
           psd_scan="auto", newton=True) -> SMOResult:
    """L2-SVM dual (000 Table 1, §1): ``Kt = K + I/C``, ``0 <= alpha_i < inf``.  Options: :func:`smo_solve`."""
    C = check_positive(C, "C")
    return _adapter("smo.l2_svm", K, y, C, 0.0, np.inf, _inv_C(C), tol, wss, max_iter, alpha0,
                    dict(shrinking=shrinking, on_nonconvex=on_nonconvex, psd_scan=psd_scan, newton=newton))


def ls_svm(K, y, C, *, tol=1e-3, wss="second", max_iter=None, alpha0=None, shrinking=True, on_nonconvex="raise",
           psd_scan="auto", newton=True) -> SMOResult:
    """LS-SVM dual (000, eq. (2)): ``Kt = K + I/C``, alpha free; the stopping rule is 000 eq. (10).

    Every variable is free, so the Newton step of :func:`smo_solve` is the exact solve of the KKT system
    when N <= NEWTON_MAX_FREE: SMO that stalls on an ill-conditioned ``K + I/C`` (C = 1e6) finishes there.
    """
    C = check_positive(C, "C")
    return _adapter("smo.ls_svm", K, y, C, -np.inf, np.inf, _inv_C(C), tol, wss, max_iter, alpha0,
                    dict(shrinking=shrinking, on_nonconvex=on_nonconvex, psd_scan=psd_scan, newton=newton))


def least_1norm_svm(K, y, C, *, tol=1e-3, wss="second", max_iter=None, alpha0=None, shrinking=True,
                    on_nonconvex="raise", psd_scan="auto", newton=True) -> SMOResult:
    """Least 1-Norm SVM dual (000, eq. (5)): ``Kt = K``, ``-C <= alpha_i <= C``; stopping 000 eq. (11)."""
    C = check_positive(C, "C")
    return _adapter("smo.least_1norm_svm", K, y, C, -C, C, 0.0, tol, wss, max_iter, alpha0,
                    dict(shrinking=shrinking, on_nonconvex=on_nonconvex, psd_scan=psd_scan, newton=newton))


# ------------------------------------------------------------------------------------------------
# epsilon-SVR on the same engine (LIBSVM's solve_epsilon_svr)
# ------------------------------------------------------------------------------------------------
def svr(K, y, C, epsilon=0.1, *, tol=1e-3, wss="second", max_iter=None, shrinking=True, on_nonconvex="raise",
        psd_scan="auto", newton=True) -> SMOResult:
    """epsilon-SVR dual by SMO with 2N variables (Vapnik; LIBSVM's ``solve_epsilon_svr``).

    With ``beta = [alpha^+; alpha^-]``, signs ``s = [+1; -1]`` and ``p = [epsilon - y; epsilon + y]``, the dual
    (derivation in ``docs/formulations/svr.md``)::

        min  1/2 (alpha^+ - alpha^-)' K (alpha^+ - alpha^-) + epsilon sum (alpha^+ + alpha^-) - y'(alpha^+ - alpha^-)
        s.t. sum (alpha^+ - alpha^-) = 0,   0 <= alpha^+_i, alpha^-_i <= C

    is the engine's problem ``min 1/2 beta'Q beta + p'beta``, ``Q_tu = s_t s_u K[t mod N, u mod N]``,
    ``s'beta = 0``, box ``[0, C]``.  Returns ``alpha = coef = alpha^+ - alpha^-`` (length N; decision
    ``f(x) = sum_i coef_i k(x_i, x) + b``), ``info["alpha_plus"]``, ``info["alpha_minus"]``; ``objective``
    is the dual above (minimisation sign: the primal optimum is ``-objective``).
    """
    t0 = time.perf_counter()
    qm = as_qmatrix(K)
    n = qm.n
    z = check_targets(y, n, "y")
    C = check_positive(C, "C")
    eps = check_nonnegative(epsilon, "epsilon", "width of the insensitive tube")
    tol = check_tol(tol, "tol")
    second, shrinking, newton = _check_options(wss, on_nonconvex, psd_scan, shrinking, newton)
    max_iter = max(10_000_000, 200 * n) if max_iter is None else check_max_iter(max_iter, "max_iter")
    s = np.concatenate([np.ones(n), -np.ones(n)])
    p = np.concatenate([eps - z, eps + z])
    pat = np.concatenate([np.arange(n), np.arange(n)]).astype(np.int64)
    res = _engine(qm, pat, s, p, np.zeros(2 * n), np.full(2 * n, C), 0.0, tol=tol, second=second, wss=wss,
                  max_iter=max_iter, alpha0=None, shrinking=shrinking, on_nonconvex=on_nonconvex, psd_scan=psd_scan,
                  newton=newton, name="smo.svr", stacklevel=3, coef_fn=lambda a: a[:n] - a[n:], t0=t0)
    beta = res.alpha
    coef = beta[:n] - beta[n:]
    info = dict(res.info, alpha_plus=beta[:n].copy(), alpha_minus=beta[n:].copy(), epsilon=eps)
    return SMOResult(alpha=coef, b=res.b, objective=res.objective, n_iter=res.n_iter, converged=res.converged,
                     status=res.status, message=res.message, time=time.perf_counter() - t0, kkt_gap=res.kkt_gap,
                     info=info, coef=coef, objective_sense="min", n_sv=int(np.count_nonzero(coef)),
                     n_free=res.n_free, wss=wss, tol=tol)

"""One SMO engine for the four box-constrained SVM duals, and its four adapters.

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

**Labels.**  The stopping rule is LIBSVM's; the label is not: every result carries the certified relative duality
gap of its point (``duality_gap``, computed in O(N log N) from the maintained gradient: the primal of the point
``alpha`` defines, with the exact best ``b`` and optimal slacks, against the dual), and ``status="optimal"`` means the
KKT rule held **and** ``duality_gap <= gap_tol``; ``"suboptimal"`` (with :class:`SuboptimalWarning`, saying how far
from optimal the point may be and which ``tol`` should fix it) means the rule held but the gap did not.  Derivation
and the measurement behind ``gap_tol = 1e-2``: ``docs/smo.md`` §10.

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
from ._result import (
    UNIT_ROUNDOFF,
    ConvergenceWarning,
    SolverResult,
    SuboptimalWarning,
    certified,
    relative_gap,
    warn_not_converged,
    warn_suboptimal,
)
from ._smo_common import bias, duality_gap, gap_floor, gap_terms, kkt_gap

__all__ = ["SMOResult", "smo_solve", "l1_svm", "l2_svm", "ls_svm", "least_1norm_svm", "svr", "WSS",
           "RawKernel", "PrecomputedKernel", "NotConvexWarning", "SuboptimalWarning", "ON_NONCONVEX", "GAP_TOL"]

#: The working-set selection rules.
WSS = ("first", "second")

#: What to do with a kernel that is not positive semidefinite.
ON_NONCONVEX = ("raise", "clamp")

#: Below this tol the final gap is re-checked on F recomputed from alpha (one K @ v).
REFRESH_TOL = 1e-5

#: Below :data:`REFRESH_TOL` the loop stops at a KKT gap of ``TIGHT_MARGIN * tol`` (``tol`` stays the rule the
#: result is judged by). A tol that tight asks for an accurate solution, and the KKT gap bounds the decision values
#: only up to a factor of order one: on verify's s-linear-50 (epsilon-SVR, epsilon = 0) a KKT gap of 9.7e-7 left
#: ``b`` 4.4e-7 and the decision values 1.3e-6 from the optimum, so ``svmref verify`` at ``--tol 1e-6``, which holds
#: decision values to the tol, failed it. The margin costs a few Newton-polished iterations.
TIGHT_MARGIN = 0.1

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

#: Default ``gap_tol``: the certified relative duality gap at or below which a result that met the stopping rule is
#: labelled ``"optimal"`` (above it: ``"suboptimal"`` and a :class:`SuboptimalWarning`). Chosen by measurement
#: (``docs/smo.md``, "Labels": the gaps of routine fits at the default ``tol`` against the points that are far off).
GAP_TOL = 1e-2

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


def _check_box(lower, upper, n: int):
    """``(lower, upper)`` as vectors of length ``n`` with ``lower <= upper``, ``lower < inf``, ``upper > -inf``."""
    lower = _check_bound(lower, n, "lower")
    upper = _check_bound(upper, n, "upper")
    if np.any(lower > upper):
        i = int(np.argmax(lower > upper))
        raise ValueError(f"lower must not exceed upper; lower[{i}] = {lower[i]!r} > upper[{i}] = {upper[i]!r}")
    if np.any(lower == np.inf) or np.any(upper == -np.inf):
        raise ValueError("lower must be < +inf and upper > -inf")
    return lower, upper


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
    ``tau = PSD_RTOL * max(1, ||K||_F)``. This is not the reference's test (``svmref._thresholds.PSD_RTOL``,
    relative to ``max|eig|`` of ``K`` itself, with another value): a kernel whose smallest eigenvalue lies between
    the two thresholds can be refused by one and accepted by the other (``svmref/_thresholds.py`` says why both
    are kept)."""
    K = qm.K
    tau = PSD_RTOL * max(1.0, float(np.linalg.norm(K)))
    A = K + (shift + tau) * np.eye(K.shape[0])
    try:
        scipy.linalg.cholesky(A, lower=True, overwrite_a=True, check_finite=False)
        return True, float("nan")
    except np.linalg.LinAlgError:
        w = np.linalg.eigvalsh(K)
        return False, float(w[0] + shift)


def _kkt_solve(Qs, gs, ys):
    """The Newton step ``d`` of ``[Q_SS y_S; y_S' 0] [d; nu] = [-g_S; 0]`` (an LDL' solve), or ``None`` when the
    system is singular or the solution is not trustworthy."""
    n = ys.size
    A = np.zeros((n + 1, n + 1))
    A[:n, :n] = Qs
    A[:n, n] = ys
    A[n, :n] = ys
    rhs = np.concatenate([-gs, [0.0]])
    try:
        x = scipy.linalg.solve(A, rhs, assume_a="sym", check_finite=False)
    except (np.linalg.LinAlgError, ValueError):
        return None
    if np.all(np.isfinite(x)) and np.linalg.norm(x) * np.abs(A).max() <= 1e12 * max(np.linalg.norm(rhs), 1e-300):
        return x[:n]
    return None


def _null_space_direction(Qs, gs, ys, lo, up):
    """A direction when ``Q_SS`` is singular: the eigen-decomposition of the reduced Hessian on ``{y_S' d = 0}``.

    Returns ``(d, unbounded)``: the projection of ``-g_S`` on the null space (``Q d = 0``: D decreases linearly,
    F does not change) when it meets a bound, else the minimum-norm Newton step on the range;
    ``unbounded`` when that null direction decreases D and meets no bound (D is unbounded below).
    """
    Z = np.linalg.qr(ys[:, None], mode="complete")[0][:, 1:]
    lam, V = np.linalg.eigh(Z.T @ Qs @ Z)
    rv = V.T @ (Z.T @ gs)
    null = lam <= 1e-10 * max(float(lam[-1]), 1e-300)
    d_null = Z @ (V @ np.where(null, -rv, 0.0))
    bounded = np.all(np.isfinite(np.where(d_null > 0, up, np.where(d_null < 0, lo, 0.0))))
    has_null = np.linalg.norm(d_null) > 1e-12 * max(np.linalg.norm(rv), 1e-300)
    if has_null and not bounded and float(gs @ d_null) < 0.0:
        return None, True
    if has_null and bounded:
        return d_null, False
    return Z @ (V @ np.where(null, 0.0, -rv / np.where(null, 1.0, lam))), False


def _newton_direction(Qs, gs, ys, lo, up):
    """``(d, unbounded)``: the Newton step on the free set, or the direction of :func:`_null_space_direction`
    when the system is singular (``d = None``: no direction, above :data:`NEWTON_MAX_FREE_SINGULAR`)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        u = _kkt_solve(Qs, gs, ys)
        if u is not None:
            return u, False
        if ys.size > NEWTON_MAX_FREE_SINGULAR:
            return None, False
        return _null_space_direction(Qs, gs, ys, lo, up)


def _line_step(Qs, gs, ys, u, a, lo, up):
    """Follow ``u`` (projected exactly onto ``y_S' d = 0``) from ``a`` with the exact line search
    ``t* = -g'd / d'Qd`` cut at the first bound.  Returns ``(new, hit, decrease of D)``, or ``None`` when ``u``
    does not decrease D or no positive step exists."""
    u = u - ys * ((ys @ u) / ys.size)  # exactly on y_s' d = 0 (y_t^2 = 1)
    gd = float(gs @ u)
    if not gd < 0.0:
        return None
    curv = float(u @ (Qs @ u))
    t_star = -gd / curv if curv > 1e-14 * float(np.abs(Qs).max()) * float(u @ u) else np.inf
    with np.errstate(divide="ignore", invalid="ignore"):
        room = np.where(u > 0.0, (up - a) / u, np.where(u < 0.0, (lo - a) / u, np.inf))
    t = min(t_star, float(np.min(room)))
    if not np.isfinite(t) or t <= 0.0:
        return None
    new = a + t * u
    hit = room <= t * (1.0 + 1e-12)
    new[hit] = np.where(u[hit] > 0.0, up[hit], lo[hit])
    new = np.minimum(np.maximum(new, lo), up)
    return new, hit, max(0.0, -(t * gd + 0.5 * t * t * curv))


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
        if loc.size < 2:
            break
        Qs = Q0[np.ix_(loc, loc)]
        gs = g0[loc]
        u, unbounded = _newton_direction(Qs, gs, y0[loc], lo0[loc], up0[loc])
        if unbounded:
            return np.inf  # D decreases linearly along d_null (Q d_null = 0) with no bound: unbounded below
        if u is None or not np.all(np.isfinite(u)):
            break
        a = alpha[S0[loc]]
        step = _line_step(Qs, gs, y0[loc], u, a, lo0[loc], up0[loc])
        if step is None:
            break
        new, hit, dec = step
        alpha[S0[loc]] = new
        g0 += Q0[:, loc] @ (new - a)
        total += dec
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


def _psd_precheck(qm, Kd, shift, psd_scan) -> str:
    """Why ``K + shift I`` is not PSD, or ``""``: a negative diagonal entry first, then (dense K, small N or
    ``psd_scan=True``) the Cholesky scan of :func:`_psd_scan`."""
    if np.any(Kd + shift < -PSD_RTOL * max(1.0, float(np.max(np.abs(Kd))))):
        t = int(np.argmin(Kd))
        return f"K[{t}, {t}] + shift = {Kd[t] + shift:.3g} < 0"
    if isinstance(qm, PrecomputedKernel) and (psd_scan is True or (psd_scan == "auto" and qm.n <= PSD_SCAN_MAX_N)):
        ok, lmin = _psd_scan(qm, shift, "K")
        if not ok:
            return f"its smallest eigenvalue is {lmin:.3g} (Cholesky scan of the {qm.n} x {qm.n} K)"
    return ""


class _Run:
    """One solve: the box dual, the iterate (``alpha``, ``F``, ``Gbar``) and the counters the result reports.

    The compiled loop (:func:`svmref.solvers._smo_kernel.solve`) runs in rounds; between rounds the engine takes
    Newton steps on the free variables and watches for a stall, and at a tight ``tol`` it confirms the gap on
    ``F`` recomputed from ``alpha`` (see the module docstring).
    """

    def __init__(self, qm, pat, y, p, lower, upper, shift, *, tol, second, max_iter, shrinking, clamp, newton):
        M = y.shape[0]
        self.qm, self.ident, self.y, self.p, self.lower, self.upper, self.shift = qm, pat is None, y, p, lower, upper, shift
        self.pat = np.arange(M, dtype=np.int64) if self.ident else np.ascontiguousarray(pat, dtype=np.int64)
        self.tol, self.second, self.max_iter, self.shrinking, self.clamp, self.newton = (
            tol, second, max_iter, shrinking, clamp, newton)
        self.stop_tol = tol * TIGHT_MARGIN if tol < REFRESH_TOL else tol  # where the loop stops (TIGHT_MARGIN)
        self.Kd = np.ascontiguousarray(qm.diag())
        self.n_iter = self.newton_steps = self.refreshes = self.gathered = 0
        self.drift = float("nan")
        self.seen_nonconvex = False
        self.min_active = M
        self.chunk = max(NEWTON_EVERY, 50 * M) if newton else max_iter
        self.alpha = self.F = self.Gbar = None
        # between rounds: alpha moved by a Newton step (F, Gbar stale), the objective after the last round, the
        # best KKT gap so far, and the rounds without a 10% decrease of it
        self.stale, self.last_obj, self.best_gap, self.no_progress = False, np.inf, np.inf, 0
        # the rounding model of the running F (drift_bound): the error of F when it was last computed from alpha,
        # the iterations and the total step |d alpha| since, the largest |F| seen, and max |Kt_ij| (<= max Kt_ii)
        self.kmax = float(np.max(np.abs(self.Kd))) + shift if M else 0.0
        self.exact_err, self.iters_since, self.moved_since, self.fabs = 0.0, 0, 0.0, 0.0

    def gradient(self, only_at_bound=None):
        return _gradient(self.qm, self.pat, self.ident, self.y, self.p, self.shift, self.alpha, only_at_bound)

    def refresh(self):
        """``F`` recomputed from ``alpha`` (one ``K @ v``); the drift counters start again from its rounding."""
        self.F = self.gradient()
        self.exact_err = self.matvec_err()
        self.iters_since, self.moved_since = 0, 0.0
        self.fabs = max(self.fabs, float(np.max(np.abs(self.F))) if self.F.size else 0.0)

    def matvec_err(self):
        """Rounding bound of one ``F`` computed from ``alpha``: ``M u max|Kt| sum|alpha|`` per entry."""
        return self.y.shape[0] * UNIT_ROUNDOFF * self.kmax * float(np.sum(np.abs(self.alpha)))

    def drift_bound(self):
        """A bound on ``max_t |F_t - (y_t (Q alpha + p)_t)|`` for the running ``F``, from a rounding model of its
        updates: each rank-2 update ``F += di K_:i + dj K_:j`` adds at most ``2u (|F| + max|Kt| (|di| + |dj|))``, a
        reconstruction of shrunk entries (or a recomputation) ``M u max|Kt| sum|alpha|``. ``|F|`` is the largest seen
        between rounds, a model rather than a proof; ``tests/test_solver_labels.py`` holds it to the recomputed F."""
        u = UNIT_ROUNDOFF
        return (self.exact_err + 2.0 * u * (self.iters_since * self.fabs + self.kmax * self.moved_since)
                + (self.matvec_err() if self.shrinking else 0.0))

    def gbar(self):
        """LIBSVM's ``G_bar`` at ``alpha``: the terms of the variables at a non-zero bound."""
        return self.gradient(_at_nonzero_bound(self.alpha, self.lower, self.upper))

    def start(self, alpha0):
        M = self.y.shape[0]
        if alpha0 is None:
            if np.any(self.lower > 0.0) or np.any(self.upper < 0.0):
                raise ValueError("alpha = 0 is not in the box [lower, upper]; give a feasible alpha0")
            self.alpha = np.zeros(M)
            self.F = np.ascontiguousarray(self.y * self.p)
            self.Gbar = np.zeros(M)
        else:
            self.alpha = _check_alpha0(alpha0, self.y, self.lower, self.upper)
            self.refresh()
            self.Gbar = self.gbar() if self.shrinking else np.zeros(M)
        self.fabs = max(self.fabs, float(np.max(np.abs(self.F))) if M else 0.0)
        self.d_start = self.objective() if alpha0 is not None else 0.0

    def kkt_gap(self):
        return float(kkt_gap(self.y, self.lower, self.upper, self.alpha, self.F))

    def objective(self):
        return _objective(self.alpha, self.y, self.p, self.F)

    def newton_step(self):
        return _newton_step(self.qm, self.pat, self.y, self.lower, self.upper, self.shift, self.alpha, self.F)

    def compiled_round(self, Q, out, cbuf, name):
        """One call of the compiled loop with the iterations left in this round; returns ``(code, gap)``."""
        budget = min(self.chunk, self.max_iter - self.n_iter)
        it, code, gap = _k.solve(
            _k.BoxDual(Q, self.Kd, self.pat, self.ident, self.y, self.p, self.lower, self.upper, self.shift),
            _k.Options(self.stop_tol, self.second, budget, self.shrinking, PSD_RTOL, self.clamp),
            self.alpha, self.F, self.Gbar, out, cbuf)
        self.n_iter += int(it)
        self.iters_since += int(it)
        self.moved_since += float(out[_k.OUT_MOVED])
        self.fabs = max(self.fabs, float(np.max(np.abs(self.F))) if self.F.size else 0.0)
        if code == _k.NOT_CONVEX:
            i, j, a = int(out[_k.OUT_I]), int(out[_k.OUT_J]), float(out[_k.OUT_AIJ])
            raise NotConvexError(
                f"{name}: the kernel matrix is not positive semidefinite: the pair ({i}, {j}) has "
                f"Kt_ii + Kt_jj - 2 Kt_ij = {a:.3g} < 0, so the dual is not convex; pass on_nonconvex='clamp' "
                "to go on as LIBSVM does (status='not_convex')")
        self.min_active = min(self.min_active, int(out[_k.OUT_MIN_ACTIVE]))
        self.seen_nonconvex |= bool(out[_k.OUT_NONCONVEX])
        self.gathered += int(out[_k.OUT_GATHERED])
        return code, gap

    def confirm(self):
        """At a tight ``tol``: the gap on ``F`` recomputed from ``alpha`` (the running ``F`` drifts by rounding),
        after a Newton polish of the free variables.  Returns ``(gap, final)``; ``final`` is ``None`` while SMO
        should go on or the gap is met."""
        self.refreshes += 1
        F_old = self.F
        self.refresh()
        self.drift = float(np.max(np.abs(self.F - F_old))) if F_old.size else 0.0
        if self.newton and self.refreshes <= 3 and self.newton_step() > 0.0:
            self.newton_steps += 1
            self.refresh()
        if self.shrinking:
            self.Gbar = self.gbar()
        gap = self.kkt_gap()
        if not gap <= self.stop_tol and self.refreshes >= 6:
            if gap <= self.tol:  # the margin is out of reach at working precision; the rule itself holds
                return gap, None
            return gap, ("numerical_issue", f"the KKT gap {gap:.3g} on the recomputed gradient stays above tol "
                                            f"{self.tol:g} at working precision; use a larger tol")
        return gap, None

    def unbounded_status(self):
        return "not_convex" if self.seen_nonconvex else "numerical_issue"

    def between_rounds(self, gap):
        """After a round that spent its iterations: a Newton step on the free variables, then the stall tests.
        Returns ``final`` or ``None``."""
        obj = self.objective()
        dec = self.newton_step() if self.newton else 0.0
        if dec == np.inf:
            return (self.unbounded_status(),
                    "the dual is unbounded below: D decreases linearly along a direction of the free variables "
                    "on which Q vanishes and no bound applies; no minimiser exists")
        if dec > 0.0:
            self.newton_steps += 1
            self.stale = True
            obj -= dec
            self.no_progress = 0
        elif gap < 0.9 * self.best_gap:
            self.no_progress = 0
        else:
            self.no_progress += 1
        self.best_gap = best_gap = min(self.best_gap, float(gap))
        if self.no_progress >= STALL_ROUNDS:
            n_free_now = int(np.count_nonzero((self.alpha > self.lower) & (self.alpha < self.upper)))
            return ("numerical_issue",
                    f"stalled: the KKT gap stays above {best_gap:.3g} (tol {self.tol:g}) over {STALL_ROUNDS * self.chunk} "
                    "iterations; pairwise steps converge too slowly here (an ill-conditioned K + shift, or a large "
                    f"box along a flat direction) and the Newton step on the free variables needs at most "
                    f"{NEWTON_MAX_FREE} of them ({NEWTON_MAX_FREE_SINGULAR} if singular), here {n_free_now}")
        if not obj < self.last_obj:
            return ("numerical_issue", f"no decrease of the objective over {self.chunk} iterations (KKT gap {gap:.3g} > "
                                       f"tol {self.tol:g}): stalled at working precision")
        self.last_obj = obj
        return None

    def iterate(self, Q, out, cbuf, name):
        """Rounds of the compiled loop until it stops.  Returns ``(code, gap, final)``: the last code of the
        compiled loop, the KKT gap, and ``(status, message)`` when the engine stopped it, else ``None``."""
        self.last_obj = self.objective()
        final = None
        while final is None:
            if self.stale:  # alpha moved by a Newton step: F (and Gbar) from alpha
                self.refresh()
                if self.shrinking:
                    self.Gbar = self.gbar()
                self.stale = False
            code, gap = self.compiled_round(Q, out, cbuf, name)
            if code == _k.UNBOUNDED:
                final = (self.unbounded_status(),
                         f"the dual is unbounded below along the pair ({int(out[_k.OUT_I])}, {int(out[_k.OUT_J])}) "
                         f"(a_ij = {out[_k.OUT_AIJ]:.3g} <= 0 and no bound): no minimiser exists")
            elif code == _k.OPTIMAL:
                if self.tol >= REFRESH_TOL:
                    break
                gap, final = self.confirm()
                if gap <= self.stop_tol or (final is None and self.refreshes >= 6 and gap <= self.tol):
                    break
            elif self.margin_out_of_reach(gap):
                gap, final = self.confirm()
                if final is None and gap <= self.tol:
                    code = _k.OPTIMAL
                    break
            elif self.n_iter >= self.max_iter:
                break
            else:
                final = self.between_rounds(gap)
        if self.stale:
            self.refresh()
            gap = self.kkt_gap()
        return code, gap, final

    def margin_out_of_reach(self, gap) -> bool:
        """A round spent its budget with the KKT rule ``gap <= tol`` met but not the tighter ``TIGHT_MARGIN * tol``
        the loop aims at below ``REFRESH_TOL`` (at working precision it can be out of reach: a rank-deficient K, a
        kernel of large scale): the rule is what the result is judged by, so the solve ends there, converged (on F
        recomputed from alpha), instead of running on to a stall test that called the rule missed."""
        return self.stop_tol < self.tol and gap <= self.tol


@dataclass(frozen=True)
class _Certificate:
    """The certified duality gap at the returned point (:func:`_certificate`), in absolute terms: ``gap`` at the
    exact best bias ``b_cert``, its rounding ``floor``, ``scale`` (a certified lower bound on ``|D*|``), the gap
    ``gap_at_b`` of the model as returned (LIBSVM's ``b``) and the primal value ``primal`` at ``b_cert``."""

    gap: float
    floor: float
    scale: float
    b_cert: float
    gap_at_b: float
    primal: float
    drift: float

    def relative(self):
        return relative_gap(self.gap, self.floor, self.scale)


def _certificate(run, b, objective):
    """The certified duality gap of the returned ``alpha`` (:func:`svmref.solvers._smo_common.duality_gap`, from the
    running ``F``: O(M log M)), or ``None`` where weak duality does not apply (a kernel found not PSD) or the
    result is not finite.

    ``D(alpha) - D* <= gap`` and ``P(W, b_cert) - p* <= gap`` (``p* = -D*``); ``D* <= D(alpha) <= 0`` from the
    start ``alpha = 0`` (or ``D(alpha) > 0``, then ``scale = 0``), so ``|D*| >= -D(alpha)``: the relative gap
    ``gap / scale`` with ``scale = -objective - floor`` bounds ``(D(alpha) - D*) / |D*|``.

    The primal each adapter is certified against: 003 eq. (2) (L1), 000 §1 (L2), 000 eq. (1) (LS), 000 eq. (3)
    (Least 1-Norm), the epsilon-SVR primal (:func:`svr`). In ``info``: ``duality_gap_abs``, ``gap_floor_abs``,
    ``gap_scale``, ``primal_objective`` (the primal at ``b_certified``, the exact best bias), ``duality_gap_at_b``
    (the gap of the model with the returned ``b``, LIBSVM's rule) and ``F_drift_bound``."""
    if run.seen_nonconvex or not (np.all(np.isfinite(run.alpha)) and np.all(np.isfinite(run.F))
                                  and np.isfinite(b) and np.isfinite(objective)):
        return None
    gap, b_cert, _, a, fy = duality_gap(run.F, run.alpha, run.y, run.lower, run.upper, run.shift)
    fy_b = gap_terms(run.F, run.alpha, run.y, run.lower, run.upper, run.shift, b)[2]
    gap_at_b = float(np.sum(fy_b)) - b * float(run.y @ run.alpha)
    floor = gap_floor(run.F, run.alpha, run.p, a, b_cert, fy, run.shift, run.drift_bound())
    scale = max(0.0, -objective - floor)
    return _Certificate(gap=gap, floor=floor, scale=scale, b_cert=b_cert, gap_at_b=gap_at_b, primal=gap - objective,
                        drift=run.drift_bound())


def advised_tol(kkt, tol, rel, gap_tol):
    """The ``tol`` that should bring a certified relative gap ``rel`` within ``gap_tol``: the gap falls about in
    proportion to the KKT gap (measured, ``docs/smo.md`` "Labels"), so ``gap_tol / rel`` of the KKT gap reached,
    3x below for the exceptions, rounded down to a power of 10.  An estimate (``tests/test_solver_labels.py``
    re-solves at it)."""
    reached = min(kkt, tol) if np.isfinite(kkt) and kkt > 0.0 else tol
    want = reached * gap_tol / rel / 3.0 if np.isfinite(rel) and rel > 0.0 else reached * 1e-3
    return float(10.0 ** np.floor(np.log10(max(want, 1e-15))))


def _advice(kkt, tol, rel, gap_tol):
    """The advice of the :class:`SuboptimalWarning`, in words (:func:`advised_tol`)."""
    t = advised_tol(kkt, tol, rel, gap_tol)
    return (f"tol = {t:.0e} should bring it within gap_tol (an estimate: the gap falls about in proportion to the KKT "
            f"gap); or raise gap_tol if {100.0 * rel:.3g}% is acceptable")


def _uncertifiable(run, objective) -> str:
    """Why no relative gap can be certified (the floor is not below ``|D(alpha)|``), in numbers: the size of K
    against the objective, and for a dense K whose entries nearly all agree, that a constant part dominates it."""
    K = getattr(run.qm, "K", None)
    text = (f"K_ii reach {float(np.max(np.abs(run.Kd), initial=0.0)):.3g} while |D(alpha)| = {abs(objective):.3g}: "
            "the rounding of K alpha is as large as the objective.")
    if isinstance(K, np.ndarray) and K.size:
        top = float(np.max(np.abs(K)))
        spread = float(np.ptp(K)) / top if top > 0.0 else 1.0
        if spread < 1e-6:
            text += (f" Every K_ij lies within {spread:.1g} (relative) of the others: a constant part dominates K, "
                     "as in the linear kernel of features with a large common offset. With the free bias b "
                     "(y'alpha = 0) the kernel of the centred features gives the same solution: centre them first.")
    return text


def _beyond_psd_bound(run) -> str:
    """With ``shift = 1/C > 0`` (L2, LS-SVM: the dual of 000 eq. (2) with ``Kt = K + I/C``) every iterate of SMO, a
    descent method from ``D_0 = D(alpha0)`` (0 from
    ``alpha = 0``), has ``(shift/2) ||beta||^2 <= D(beta) - p'beta <= D_0 + ||p|| ||beta||`` when ``K`` is PSD, so
    ``||beta|| <= (||p|| + sqrt(||p||^2 + 2 shift max(D_0, 0))) / shift`` (``2 ||p|| C`` from zero); an iterate beyond
    that bound proves that ``K + shift I``, as given (rounded), is not PSD. Returns the words saying so, or ``""``."""
    d0 = getattr(run, "d_start", 0.0)
    if not run.shift > 0.0 or run.seen_nonconvex or not np.isfinite(d0):
        return ""
    with np.errstate(over="ignore", invalid="ignore"):
        norm = float(np.linalg.norm(run.alpha))
    pn = float(np.linalg.norm(run.p))
    bound = (pn + np.sqrt(pn * pn + 2.0 * run.shift * max(d0, 0.0))) / run.shift
    if norm <= bound * (1.0 + 1e-6):
        return ""
    return (f": ||alpha|| = {norm:.3g} exceeds {bound:.3g} (2 ||p|| C from alpha = 0), which no iterate reaches when K + I/C is "
            "positive semidefinite, so K as given is not (its rounding, e.g. the Gram matrix of features with a large "
            "common offset, broke it below the detection threshold)")


def _status(run, code, gap, final, b, objective, cert, gap_tol):
    """``(status, message, converged, rule)`` of a finished run (the labels of :class:`SolverResult`); ``rule`` is the
    stopping rule in words when it held but the certificate did not (``status="suboptimal"``), else ``""``."""
    tol = run.tol
    converged = code == _k.OPTIMAL and final is None and gap <= tol
    rule = ""
    if final is not None:
        status, message = final
    elif converged:
        message = f"KKT gap {gap:.3g} <= tol {tol:g} after {run.n_iter} iterations"
        if cert is not None and certified(cert.gap, cert.floor, cert.scale, gap_tol):
            status = "optimal"
            message += f"; certified relative duality gap {cert.relative()[0]:.3g} <= gap_tol {gap_tol:g}"
        else:
            status, rule = "suboptimal", message
    else:
        status = "max_iter_reached"
        message = f"stopped at max_iter = {run.max_iter} with KKT gap {gap:.3g} > tol {tol:g}"
    if run.seen_nonconvex and status in ("optimal", "suboptimal", "max_iter_reached"):
        status, converged, rule = "not_convex", False, ""
        message = ("the kernel matrix is not positive semidefinite (a_ij < 0 met, TAU clamp used): "
                   f"a stationary point of a non-convex problem at best; {message}")
    beyond = _beyond_psd_bound(run)
    if not (np.all(np.isfinite(run.alpha)) and np.isfinite(b) and np.isfinite(objective)):
        status, converged, rule = "numerical_issue", False, ""
        message = f"non-finite alpha, b or objective: the result is unusable{beyond} ({message})"
    elif beyond:
        status, converged, rule = "numerical_issue", False, ""
        message = f"the result is unusable{beyond} ({message})"
    elif cert is not None and cert.gap < -cert.floor:
        status, converged, rule = "numerical_issue", False, ""
        message = (f"negative duality gap {cert.gap:.3g} beyond its rounding floor {cert.floor:.3g}: weak duality fails, "
                   f"so K is not PSD (below the detection threshold) or F has drifted ({message})")
    return status, message, converged, rule


def _warn(name, status, message, rule, nonconvex_msg, final, cert, gap, tol, gap_tol, n_iter, stacklevel,
          uncertifiable=""):
    """The warning of a finished run (one at most); returns the result's message."""
    if status == "max_iter_reached":
        warn_not_converged(name, n_iter, gap, tol, stacklevel=stacklevel + 2)
    elif status == "suboptimal":
        rel, rel_floor = cert.relative() if cert is not None else (float("nan"), float("nan"))
        return warn_suboptimal(name, rule, rel, rel_floor, gap_tol, _advice(gap, tol, rel, gap_tol),
                               stacklevel=stacklevel + 2, uncertifiable=uncertifiable)
    elif status != "optimal" and not (status == "not_convex" and nonconvex_msg and final is None):  # warned above
        warnings.warn(f"{name}: {message} (status={status!r})",
                      NotConvexWarning if status == "not_convex" else ConvergenceWarning, stacklevel=stacklevel + 1)
    return message


def _cert_fields(cert, gap_tol, status, kkt, tol):
    """The certificate's fields of :class:`SolverResult` and its entries of ``info`` (with ``advised_tol`` when
    ``status="suboptimal"``)."""
    if cert is None:
        nan = float("nan")
        return dict(duality_gap=nan, gap_floor=nan, gap_tol=gap_tol), {}
    rel, rel_floor = cert.relative()
    info = {"duality_gap_abs": cert.gap, "gap_floor_abs": cert.floor, "gap_scale": cert.scale,
            "primal_objective": cert.primal, "b_certified": cert.b_cert,
            "duality_gap_at_b": relative_gap(cert.gap_at_b, cert.floor, cert.scale)[0], "F_drift_bound": cert.drift}
    if status == "suboptimal":
        info["advised_tol"] = advised_tol(kkt, tol, rel, gap_tol)
    return dict(duality_gap=rel, gap_floor=rel_floor, gap_tol=gap_tol), info


def _engine(qm, pat, y, p, lower, upper, shift, *, tol, gap_tol, second, wss, max_iter, alpha0, shrinking,
            on_nonconvex, psd_scan, newton, name, stacklevel, coef_fn, t0):
    """The SMO engine: PSD checks, the start point, the rounds of :meth:`_Run.iterate`, the bias, the certificate,
    the labels and the warnings (issued here, ``stacklevel`` frames above)."""
    run = _Run(qm, pat, y, p, lower, upper, shift, tol=tol, second=second, max_iter=max_iter, shrinking=shrinking,
               clamp=on_nonconvex == "clamp", newton=newton)
    nonconvex_msg = _psd_precheck(qm, run.Kd, shift, psd_scan)
    if nonconvex_msg:
        if not run.clamp:
            raise NotConvexError(f"{name}: the kernel matrix is not positive semidefinite ({nonconvex_msg}), so the "
                                 "dual is not convex; pass on_nonconvex='clamp' to go on as LIBSVM does")
        warnings.warn(f"{name}: the kernel matrix is not positive semidefinite ({nonconvex_msg}); going on with the "
                      "TAU clamp (status='not_convex')", NotConvexWarning, stacklevel=stacklevel)
    run.start(alpha0)
    run.seen_nonconvex = bool(nonconvex_msg)
    code, gap, final = run.iterate(qm.numba_q(), np.zeros(7), _compact_cache(qm, y.shape[0]), name)
    b, n_free = bias(y, lower, upper, run.alpha, run.F)
    objective = run.objective()
    gap = float(gap)
    cert = _certificate(run, float(b), objective)
    status, message, converged, rule = _status(run, code, gap, final, b, objective, cert, gap_tol)
    elapsed = time.perf_counter() - t0
    message = _warn(name, status, message, rule, nonconvex_msg, final, cert, gap, tol, gap_tol, int(run.n_iter),
                    stacklevel, _uncertifiable(run, objective) if status == "suboptimal" else "")
    fields, cinfo = _cert_fields(cert, gap_tol, status, gap, tol)
    info = {"diag_shift": shift, "max_iter": max_iter, "F_refreshes": run.refreshes, "F_drift": run.drift,
            "newton_steps": run.newton_steps, "shrinking": shrinking, "min_active": run.min_active,
            "compact_columns_gathered": run.gathered, **cinfo, **qm.cache_info()}
    alpha = run.alpha
    return SMOResult(
        alpha=alpha, b=float(b), objective=objective, n_iter=int(run.n_iter), converged=converged, status=status,
        message=message, time=elapsed, kkt_gap=gap, info=info, coef=coef_fn(alpha), objective_sense="min",
        n_sv=int(np.count_nonzero(alpha)), n_free=int(n_free), wss=wss, tol=tol, **fields,
    )


def smo_solve(
    K,
    y,
    lower,
    upper,
    *,
    diag_shift: float = 0.0,
    tol: float = 1e-3,
    gap_tol: float = GAP_TOL,
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
        Stop when the KKT gap ``max_{I_low} F - min_{I_up} F <= tol`` (000, eq. (10)/(11)).  Below ``REFRESH_TOL
        = 1e-5`` the gap is confirmed on ``F`` recomputed from ``alpha`` (``info["F_drift"]``: the drift), SMO resumes
        if it is not met, and the loop stops at ``TIGHT_MARGIN * tol`` so that decision values are within tol too.
    gap_tol : float > 0
        A result whose KKT rule held is ``"optimal"`` when its certified relative duality gap is at most
        ``gap_tol``, else ``"suboptimal"`` with a :class:`SuboptimalWarning` advising a ``tol``
        (``info["advised_tol"]``). Default :data:`GAP_TOL` ``= 1e-2``, measured in ``docs/smo.md`` §10.
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
        With the certificate of :func:`_certificate` (``duality_gap``, ``gap_floor``; ``info``: the absolute values,
        ``gap_scale``, ``primal_objective``, ``b_certified``, ``duality_gap_at_b``, ``F_drift_bound``).
    """
    t0 = time.perf_counter()
    qm = as_qmatrix(K)
    n = qm.n
    y = check_labels(y, n, "y")
    lower, upper = _check_box(lower, upper, n)
    shift = check_nonnegative(diag_shift, "diag_shift")
    tol = check_tol(tol, "tol")
    gap_tol = check_positive(gap_tol, "gap_tol")
    second, shrinking, newton = _check_options(wss, on_nonconvex, psd_scan, shrinking, newton)
    max_iter = max(10_000_000, 100 * n) if max_iter is None else check_max_iter(max_iter, "max_iter")
    return _engine(qm, None, y, -np.ones(n), lower, upper, shift, tol=tol, gap_tol=gap_tol, second=second, wss=wss,
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


def l1_svm(K, y, C, *, tol=1e-3, gap_tol=GAP_TOL, wss="second", max_iter=None, alpha0=None, shrinking=True,
           on_nonconvex="raise", psd_scan="auto", newton=True) -> SMOResult:
    """L1-SVM dual (000 Table 1; 003 eq. (3)): ``Kt = K``, ``0 <= alpha_i <= C``.  Options: :func:`smo_solve`."""
    C = check_positive(C, "C")
    return _adapter("smo.l1_svm", K, y, C, 0.0, C, 0.0, tol, wss, max_iter, alpha0,
                    dict(gap_tol=gap_tol, shrinking=shrinking, on_nonconvex=on_nonconvex, psd_scan=psd_scan, newton=newton))


def _inv_C(C):
    s = 1.0 / C
    if not np.isfinite(s):
        raise ValueError(f"C = {C!r} is too small: 1/C overflows; C must be at least {1.0 / np.finfo(float).max:.3g}")
    return s


def l2_svm(K, y, C, *, tol=1e-3, gap_tol=GAP_TOL, wss="second", max_iter=None, alpha0=None, shrinking=True,
           on_nonconvex="raise", psd_scan="auto", newton=True) -> SMOResult:
    """L2-SVM dual (000 Table 1, §1): ``Kt = K + I/C``, ``0 <= alpha_i < inf``.  Options: :func:`smo_solve`."""
    C = check_positive(C, "C")
    return _adapter("smo.l2_svm", K, y, C, 0.0, np.inf, _inv_C(C), tol, wss, max_iter, alpha0,
                    dict(gap_tol=gap_tol, shrinking=shrinking, on_nonconvex=on_nonconvex, psd_scan=psd_scan, newton=newton))


def ls_svm(K, y, C, *, tol=1e-3, gap_tol=GAP_TOL, wss="second", max_iter=None, alpha0=None, shrinking=True,
           on_nonconvex="raise", psd_scan="auto", newton=True) -> SMOResult:
    """LS-SVM dual (000, eq. (2)): ``Kt = K + I/C``, alpha free; the stopping rule is 000 eq. (10).

    Every variable is free, so the Newton step of :func:`smo_solve` is the exact solve of the KKT system
    when N <= NEWTON_MAX_FREE: SMO that stalls on an ill-conditioned ``K + I/C`` (C = 1e6) finishes there.
    """
    C = check_positive(C, "C")
    return _adapter("smo.ls_svm", K, y, C, -np.inf, np.inf, _inv_C(C), tol, wss, max_iter, alpha0,
                    dict(gap_tol=gap_tol, shrinking=shrinking, on_nonconvex=on_nonconvex, psd_scan=psd_scan, newton=newton))


def least_1norm_svm(K, y, C, *, tol=1e-3, gap_tol=GAP_TOL, wss="second", max_iter=None, alpha0=None, shrinking=True,
                    on_nonconvex="raise", psd_scan="auto", newton=True) -> SMOResult:
    """Least 1-Norm SVM dual (000, eq. (5)) by SMO: ``Kt = K``, ``-C <= alpha_i <= C``; stopping 000 eq. (11).

    ``min 1/2 alpha'Y K Y alpha - 1'alpha`` s.t. ``y'alpha = 0``, ``-C <= alpha_i <= C`` (000 eq. (5): the box of
    the LP form's two multipliers ``alpha = gamma - beta``), solved by the engine of :func:`smo_solve` with the
    maximal violating pair over 000's index sets (8), the clipping (9) to ``[-C, C]``, and 000's stopping rule (11).

    Parameters
    ----------
    K : ndarray (N, N), :class:`RawKernel` or :class:`PrecomputedKernel`
        The kernel matrix (must be positive semidefinite: ``on_nonconvex``), or raw X with an LRU column cache.
    y : ndarray (N,)
        Labels ``+-1``.
    C : float > 0
        The box bound (000 eq. (3)'s penalty of ``sum_i |xi_i|``).
    tol : float > 0, default=1e-3
        000 eq. (11)'s epsilon: stop when the maximal KKT violation ``m(alpha) - M(alpha)`` is at most ``tol``.
    gap_tol : float > 0
        The certified relative duality gap that ``status == "optimal"`` needs (module docstring).
    wss : {"first", "second"}, default="second"
        Working-set selection: 000's maximal violating pair, or the second-order rule of Fan, Chen & Lin (2005).
    max_iter : int or None
        Pair updates before stopping with ``status == "max_iter_reached"`` and a ``ConvergenceWarning``.
    alpha0 : ndarray (N,) or None
        A feasible starting point (``y'alpha0 = 0``, in the box); None: zeros.
    shrinking, on_nonconvex, psd_scan, newton
        As :func:`smo_solve`.

    Returns
    -------
    SMOResult
        ``alpha`` (in 000's convention: ``f(x) = sum_i alpha_i y_i k(x_i, x) + b``), ``b``, ``objective`` (the
        dual above), ``status``, ``duality_gap``, ``n_iter``.
    """
    C = check_positive(C, "C")
    return _adapter("smo.least_1norm_svm", K, y, C, -C, C, 0.0, tol, wss, max_iter, alpha0,
                    dict(gap_tol=gap_tol, shrinking=shrinking, on_nonconvex=on_nonconvex, psd_scan=psd_scan, newton=newton))


# ------------------------------------------------------------------------------------------------
# epsilon-SVR on the same engine (LIBSVM's solve_epsilon_svr)
# ------------------------------------------------------------------------------------------------
def svr(K, y, C, epsilon=0.1, *, tol=1e-3, gap_tol=GAP_TOL, wss="second", max_iter=None, shrinking=True,
        on_nonconvex="raise", psd_scan="auto", newton=True) -> SMOResult:
    """epsilon-SVR dual by SMO with 2N variables (Vapnik; LIBSVM's ``solve_epsilon_svr``).

    With ``beta = [alpha^+; alpha^-]``, signs ``s = [+1; -1]`` and ``p = [epsilon - y; epsilon + y]``, the dual
    (derivation in ``docs/formulations/svr.md``)::

        min  1/2 (alpha^+ - alpha^-)' K (alpha^+ - alpha^-) + epsilon sum (alpha^+ + alpha^-) - y'(alpha^+ - alpha^-)
        s.t. sum (alpha^+ - alpha^-) = 0,   0 <= alpha^+_i, alpha^-_i <= C

    is the engine's problem ``min 1/2 beta'Q beta + p'beta``, ``Q_tu = s_t s_u K[t mod N, u mod N]``,
    ``s'beta = 0``, box ``[0, C]``.  Returns ``alpha = coef = alpha^+ - alpha^-`` (length N; decision
    ``f(x) = sum_i coef_i k(x_i, x) + b``), ``info["alpha_plus"]``, ``info["alpha_minus"]``; ``objective``
    is the dual above (minimisation sign: the primal optimum is ``-objective``).  The certificate (``duality_gap``;
    :func:`smo_solve`) holds it against the primal ``1/2 ||W||^2 + C sum_i max(0, |y_i - f(x_i)| - epsilon)`` at
    ``W = sum_i coef_i Phi_i`` and the exact best ``b`` (the engine's loss on the 2N variables,
    ``C max(0, xi)`` for each side of the tube, summed per pattern: ``docs/smo.md`` §10).
    """
    t0 = time.perf_counter()
    qm = as_qmatrix(K)
    n = qm.n
    z = check_targets(y, n, "y")
    C = check_positive(C, "C")
    eps = check_nonnegative(epsilon, "epsilon", "width of the insensitive tube")
    tol = check_tol(tol, "tol")
    gap_tol = check_positive(gap_tol, "gap_tol")
    second, shrinking, newton = _check_options(wss, on_nonconvex, psd_scan, shrinking, newton)
    max_iter = max(10_000_000, 200 * n) if max_iter is None else check_max_iter(max_iter, "max_iter")
    s = np.concatenate([np.ones(n), -np.ones(n)])
    p = np.concatenate([eps - z, eps + z])
    pat = np.concatenate([np.arange(n), np.arange(n)]).astype(np.int64)
    res = _engine(qm, pat, s, p, np.zeros(2 * n), np.full(2 * n, C), 0.0, tol=tol, gap_tol=gap_tol, second=second, wss=wss,
                  max_iter=max_iter, alpha0=None, shrinking=shrinking, on_nonconvex=on_nonconvex, psd_scan=psd_scan,
                  newton=newton, name="smo.svr", stacklevel=3, coef_fn=lambda a: a[:n] - a[n:], t0=t0)
    beta = res.alpha
    coef = beta[:n] - beta[n:]
    info = dict(res.info, alpha_plus=beta[:n].copy(), alpha_minus=beta[n:].copy(), epsilon=eps)
    return SMOResult(alpha=coef, b=res.b, objective=res.objective, n_iter=res.n_iter, converged=res.converged,
                     status=res.status, message=res.message, time=time.perf_counter() - t0, kkt_gap=res.kkt_gap,
                     info=info, coef=coef, objective_sense="min", n_sv=int(np.count_nonzero(coef)),
                     n_free=res.n_free, wss=wss, tol=tol, task="regression", duality_gap=res.duality_gap,
                     gap_floor=res.gap_floor, gap_tol=res.gap_tol)

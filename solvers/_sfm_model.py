"""The support features machine (003) in numpy around its compiled generalised SMO: the formulas of 003
(:func:`recover_a`, :func:`recover_b`, :func:`dual_objective`, :func:`primal_objective`), the result type
:class:`SFMResult` and the solver :func:`support_features`.

The model, its dual and the KKT conditions are stated in :mod:`svmref.solvers.support_features`, the public module
that re-exports these names; the compiled loop is :mod:`svmref.solvers._sfm_engine`; the selectivity path and
leave-one-out, which call :func:`support_features`, are :mod:`svmref.solvers.sfm_path`.
"""
from __future__ import annotations

import time as _time
import warnings
from collections import namedtuple
from dataclasses import dataclass

import numpy as np

from svmref._validation import (
    check_cache_size,
    check_labels,
    check_max_iter,
    check_mu,
    check_positive,
    check_tol,
    check_X,
)

from ._qmatrix import PrecomputedKernel, RawKernel
from ._result import (
    UNIT_ROUNDOFF,
    ConvergenceWarning,
    SolverResult,
    certified,
    kernel_expansion,
    relative_gap,
    warn_not_converged,
    warn_suboptimal,
)
from ._sfm_engine import REFRESH_EVERY, _refresh, _rejudge, _smo
from ._sfm_newton import dual_objective, newton_phase, one_blas_thread
from ._smo_common import best_bias
from ._smo_common import bias as _libsvm_bias

__all__ = ["SFMResult", "support_features", "recover_a", "recover_b", "dual_objective", "primal_objective",
           "certified_gap", "CACHE_SIZE_MB", "AUTO_CACHE_FRACTION", "POLISH_TOL"]


# ----------------------------------------------------------------------------------------------
# formulas of 003, in numpy (the reading copy; the compiled loop of _sfm_engine repeats them inline)
# ----------------------------------------------------------------------------------------------
def recover_a(w: np.ndarray, mu: float) -> np.ndarray:
    """003, eq. (8): ``a_i = sign(w_i) max{0, |w_i| - mu} / (2(1 - mu))`` (soft thresholding of ``w``).

    ``w = sum_j lam_j y_j x_j`` (003, eq. (6)). Case 2 of (8) is garbled in the extraction
    ("solution when ``w_i < mu``"); the subdifferential argument of 003 §2.2 gives ``w_i < -mu``.
    """
    w = np.asarray(w, dtype=np.float64)
    return np.sign(w) * np.maximum(0.0, np.abs(w) - mu) / (2.0 * (1.0 - mu))


def primal_objective(X: np.ndarray, y: np.ndarray, a: np.ndarray, b: float, C: float, mu: float) -> float:
    """003, eq. (5) at ``(a, b)`` with the optimal slacks ``delta_j = max{0, 1 - y_j (a'x_j + b)}``."""
    delta = np.maximum(0.0, 1.0 - y * (X @ a + b))
    return float((1.0 - mu) * (a @ a) + mu * np.sum(np.abs(a)) + C * np.sum(delta))


def recover_b(F: np.ndarray, y: np.ndarray, lam: np.ndarray, C: float, rule: str = "eq11",
              rtol: float = 1e-10) -> tuple[float, str]:
    """The bias from the dual solution; ``F = X a``. Returns ``(b, how)``.

    * ``"eq11"`` -- 003, eq. (11): ``b = -(sum_free lam_j a'x_j + C sum_{lam_j = C} y_j) / sum_free lam_j``,
      the ``lam``-weighted mean of ``y_j - a'x_j`` over the free ``0 < lam_j < C`` (it uses ``sum y lam = 0``).
      This is what 003 prescribes, so it is the default.
    * ``"mean"``  -- the plain mean of ``y_j - a'x_j`` over the free ``lam_j``: LIBSVM's rule, computed by
      :func:`svmref.solvers._smo_common.bias` (the box-dual SMO's) on ``F^box = F - y`` (the box-dual
      convention ``F^box_t = y_t d(-W)/dlam_t``; ``b = -rho``, ``rho`` = mean of ``F^box`` over the free).

    Free means ``rtol C < lam_j < (1 - rtol) C``, at a bound otherwise (the SMO puts a variable that reaches
    a bound exactly on it; ``rtol`` only guards against rounding: (11) goes wrong if a ``lam_j`` at C is
    counted as free), so ``lam`` within ``rtol C`` of a bound is put on it before either rule. When no
    ``lam_j`` is free, (11) is ``0/0``; both rules then use LIBSVM's fallback in
    :func:`svmref.solvers._smo_common.bias`: the midpoint of the KKT interval ``[m, M]`` with
    ``m = max_{I_up} (y_t - F_t)``, ``M = min_{I_low} (y_t - F_t)`` (000, eq. (8), box [0, C]; every optimal
    b lies in it, from ``y_t (a'x_t + b) >= 1`` at ``lam_t = 0`` and ``<= 1`` at ``lam_t = C``), or its
    finite end if one side is empty (``how`` = ``"midpoint"`` / ``"interval_end"``).
    """
    F = np.asarray(F, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    lam = np.asarray(lam, dtype=np.float64)
    free = (lam > rtol * C) & (lam < C * (1.0 - rtol))
    if np.any(free) and rule == "eq11":
        at_C = lam >= C * (1.0 - rtol)
        num = np.sum(lam[free] * F[free]) + C * np.sum(y[at_C])
        return float(-num / np.sum(lam[free])), "eq11"
    # LIBSVM's rule on the box-dual convention, with lam within rtol C of a bound put on it
    snapped = np.where(lam <= rtol * C, 0.0, np.where(lam >= C * (1.0 - rtol), C, lam))
    n = lam.shape[0]
    b, nfree = _libsvm_bias(y, np.zeros(n), np.full(n, float(C)), snapped, F - y)
    if nfree > 0:
        return float(b), "mean"
    # no free lam: every pattern is in I_up only or I_low only; both non-empty gives the midpoint
    up = ((y > 0) & (snapped < C)) | ((y < 0) & (snapped > 0))
    low = ((y < 0) & (snapped < C)) | ((y > 0) & (snapped > 0))
    return float(b), ("midpoint" if np.any(up) and np.any(low) else "interval_end")


# ----------------------------------------------------------------------------------------------
# public API
# ----------------------------------------------------------------------------------------------
@dataclass(frozen=True, repr=False)
class SFMResult(SolverResult):
    """Result of :func:`support_features`.

    ``alpha`` is ``lam`` (the dual (10) variables); ``objective`` is ``W(lam)`` of 003 eq. (10) in its
    *maximisation* sense (so ``primal_objective - objective >= 0`` is the duality gap); ``a`` from (8),
    ``b`` from (11) or the mean rule, ``w = X'(y * lam)`` (003, eq. (6)), ``selected`` the indices of the
    features with ``a_i != 0`` (a feature whose ``|w_i|`` exceeds ``mu`` by no more than the rounding error of
    ``w`` has ``a_i = 0``: it is on the threshold of (8) to working precision); ``primal_objective`` is (5) at
    ``(a, b)`` with optimal slacks.
    Decision function: ``f(x) = a'x + b``.
    """

    lam: np.ndarray | None = None
    a: np.ndarray | None = None
    w: np.ndarray | None = None
    selected: np.ndarray | None = None
    primal_objective: float = float("nan")
    C: float = float("nan")
    mu: float = float("nan")

    def decision_function(self, X) -> np.ndarray:
        """``f(x) = a'x + b`` for the rows of ``X`` (003, eq. (5)'s model; :func:`kernel_expansion` with the
        linear kernel, ``K_cross = X``, ``coef = a``).  :meth:`predict` gives its labels by the project's tie
        rule (``+1`` where ``f > 0``, ``-1`` where ``f <= 0``)."""
        X = check_X(X, "X")
        if X.shape[1] != self.a.shape[0]:
            raise ValueError(f"X has {X.shape[1]} features; the model was trained on {self.a.shape[0]}")
        return kernel_expansion(X, self.a, self.b)


def _check_data(X, y):
    if hasattr(X, "toarray") and not isinstance(X, np.ndarray):
        raise TypeError(
            f"X must be a dense array; got {type(X).__name__}. The support features machine needs dense X "
            "(use X.toarray())."
        )
    X = check_X(X, "X")
    y = check_labels(y, X.shape[0], "y")
    return X, y


def _check_lam0(lam0, y, C):
    lam0 = np.array(lam0, dtype=np.float64, copy=True)
    if lam0.ndim != 1 or lam0.shape[0] != y.shape[0]:
        raise ValueError(f"lam0 must be a vector of length {y.shape[0]} (one per pattern); got shape {lam0.shape}")
    if not np.all(np.isfinite(lam0)):
        raise ValueError("lam0 contains NaN or infinity")
    slack = 1e-10 * C
    if np.any(lam0 < -slack) or np.any(lam0 > C + slack):
        raise ValueError(f"lam0 must lie in the box [0, C] = [0, {C:g}] (003, eq. (10)); got range "
                         f"[{lam0.min():.6g}, {lam0.max():.6g}]")
    lam0 = np.clip(lam0, 0.0, C)
    viol = abs(float(y @ lam0))
    if viol > 1e-8 * max(1.0, C * y.shape[0]):
        raise ValueError(f"lam0 must satisfy sum_j y_j lam0_j = 0 (003, eq. (10)); got {y @ lam0:.3g}")
    return lam0


#: Default megabytes of the column cache of ``X X'`` (as ``sklearn.svm.SVC(cache_size=200)``).
CACHE_SIZE_MB = 200.0


def support_features(X, y, C=1.0, mu=0.0, *, tol=1e-3, gap_tol=None, max_iter=None, lam0=None, b_rule="eq11",
                     wss="first", shrinking=True, use_gram="auto", cache_size=CACHE_SIZE_MB, gram=None,
                     newton="auto") -> SFMResult:
    """Train the support features machine (003, eq. (5)) by the generalised SMO on its dual (003, eq. (10)).

    Parameters
    ----------
    X : (N, n) dense array
        Patterns in rows (003 writes ``x_ij``, feature i of pattern j).
    y : (N,) array of -1/+1
    C : float > 0
        The penalty ``c`` of (5).
    mu : float in [0, 1)
        Selectivity (003, eq. (4)); ``mu = 0`` is the L1-SVM with ``C_svm = C/2``, ``lam = 2 alpha``.
    tol : float > 0
        Stop when the KKT gap ``max_{I_up}(y_t - a'x_t) - min_{I_low}(y_t - a'x_t) <= tol`` (default 1e-3
        as LIBSVM; the gap is checked on freshly recomputed ``w`` and ``a'x`` before stopping). Below
        :data:`POLISH_TOL` ``= 1e-5`` the solve ends with Newton steps on the free set (the decision values move as
        the square root of the duality gap, so a gap of tol alone does not put them within tol;
        ``info["newton_polish_steps"]``).
    gap_tol : float > 0 or None
        The bound on the certified relative duality gap (:func:`certified_gap`: ``(P - W) / W`` with ``P`` the
        primal (5) at ``a`` of (8) and the exact best ``b``, ``W`` the dual (10), with its rounding floor) for
        ``status="optimal"``; ``None`` (default): the number ``tol`` (verify passes one ``tol`` and holds both to
        it). While the KKT rule holds and the gap does not, the KKT tolerance is tightened, warm-started, up to 8
        times by 10x (at large C a KKT gap of tol alone can leave a duality gap of order ``tol x C x N``); if the
        gap still exceeds ``gap_tol``, ``status="suboptimal"`` and a :class:`SuboptimalWarning`.
    max_iter : int, optional
        Pair steps; default ``max(10**6, 100 N)``. Reaching it sets ``status="max_iter_reached"`` and warns.
    lam0 : (N,) array, optional
        Warm start; must be feasible for (10) (box [0, C], ``sum y lam = 0``).
    b_rule : "eq11" or "mean"
        Bias by 003 eq. (11) (lam-weighted) or by the plain mean over free ``lam_j``; see :func:`recover_b`.
    wss : "first" or "second"
        Working-set selection: the maximal violating pair (first order, the default; 000 eq. (8)) or the
        second-order rule of :func:`_select2` (same ``i``, ``j`` by the predicted gain with the local
        curvature). Both stop on the same first-order KKT gap.
    shrinking : bool
        LIBSVM-style shrinking (:func:`_shrink`): patterns at a bound that cannot join a violating pair
        are left out of the selection and the gradient update; all are restored, ``F`` recomputed and the
        stopping rule re-checked on every pattern before the solver stops.
    use_gram : "auto", bool
        Use columns of ``K = X X'`` (the linear kernel on the patterns) for the cheap gradient update at
        ``mu`` near 0 and in the second-order selection; the engine takes them per step only when they touch
        fewer features than the direct update. ``True``: on; ``False``: never. ``"auto"`` (default): on when
        ``gram`` is given or the cache holds at least 3/8 of the ``N`` columns (:data:`AUTO_CACHE_FRACTION`;
        ``N <= 8360`` at 200 MB), off otherwise: a column costs a pass over ``X``, and whether the columns
        are reused enough to pay for it depends on the problem (measured in ``docs/support_features_notes.md``
        §7: with ``n >= 30`` features ``True`` was faster at every N tried, up to 2.7x; with ``n <= 10``
        slower, even with every column cached).
    cache_size : float > 0
        Megabytes for the columns of ``K = X X'``, computed on demand through the kernel seam
        (``RawKernel(X, "linear", cache_size=...)`` of :mod:`svmref.solvers._qmatrix`, least recently used
        column evicted first; as ``sklearn.svm.SVC(cache_size=200)``). At least two columns are always kept;
        a tiny cache is slower, never wrong. Memory is ``cache_size`` plus ``O(N n)``; no ``N x N`` array.
    gram : (N, N) array, PrecomputedKernel or linear RawKernel, optional
        ``K = X X'`` if the caller already holds it (read in place, no cache; checked to be ``X X'`` on its
        diagonal and one column), or a ``RawKernel(X, "linear")`` on this same ``X`` whose cache is to be
        reused across calls. ``cache_size`` is then not used. Needs ``use_gram`` not ``False``.

    newton : "auto", bool
        Newton steps on the free set between pair steps (:mod:`svmref.solvers._sfm_newton`): from a cold start the
        best balanced point, then once the KKT gap is below 0.3 each Newton step moves towards the maximiser of (10)
        with the free patterns and the active features held, by the exact line search of the pair step, and
        ``N // 10`` pair steps (at least 20) follow it; ``info["newton_steps"]``. ``False``: SMO alone. ``"auto"``
        (default): on when ``N <= 2 n`` (:data:`NEWTON_AUTO_RATIO`), where most patterns can be free. With Newton
        steps BLAS runs on one thread during the solve (:func:`svmref.solvers._sfm_newton.one_blas_thread`).

    Returns
    -------
    SFMResult
    """
    t0 = _time.perf_counter()
    s = _setup(X, y, C, mu, tol, gap_tol, max_iter, lam0, b_rule, wss, shrinking, use_gram, cache_size, gram, newton)
    with one_blas_thread(s.newton):
        w, F, n_iter, gap, code, info, why = _solve(s)
    return _finish(s, w, F, n_iter, gap, code, t0, info, why=why)


#: The checked arguments of :func:`support_features` (``lam`` the start, updated in place by the engine).
_Setup = namedtuple("_Setup", "X y C mu tol gap_tol max_iter b_rule use_gram seam shrinking wss lam newton")


def _setup(X, y, C, mu, tol, gap_tol, max_iter, lam0, b_rule, wss, shrinking, use_gram, cache_size, gram,
           newton="auto") -> _Setup:
    """The arguments of :func:`support_features`, checked in the order its errors are documented."""
    X, y = _check_data(X, y)
    C = check_positive(C, "C")
    mu = check_mu(mu, "mu")
    tol = check_tol(tol, "tol")
    gap_tol = tol if gap_tol is None else check_positive(gap_tol, "gap_tol")
    N = X.shape[0]
    max_iter = max(10**6, 100 * N) if max_iter is None else check_max_iter(max_iter)
    if b_rule not in ("eq11", "mean"):
        raise ValueError(f"b_rule must be 'eq11' or 'mean'; got {b_rule!r}")
    use_gram, seam = _gram_seam(X, use_gram, cache_size, gram)
    if not isinstance(shrinking, (bool, np.bool_)):
        raise ValueError(f"shrinking must be True or False; got {shrinking!r}")
    if wss not in ("second", "first"):
        raise ValueError(f"wss must be 'second' or 'first'; got {wss!r}")
    lam = np.zeros(N) if lam0 is None else _check_lam0(lam0, y, C)
    if isinstance(newton, str) and newton == "auto":
        newton = N <= NEWTON_AUTO_RATIO * X.shape[1]
    elif not isinstance(newton, (bool, np.bool_)):
        raise ValueError(f"newton must be 'auto', True or False; got {newton!r}")
    return _Setup(X, y, C, mu, tol, gap_tol, max_iter, b_rule, use_gram, seam, bool(shrinking), wss, lam, bool(newton))


#: ``newton="auto"`` takes the Newton steps when ``N <= NEWTON_AUTO_RATIO * n``. With more features than that,
#: most patterns can be free at the optimum and pair steps converge slowly inside the free set (separable 200 x 1000:
#: 12 151 pair steps at tol 1e-3, 794 with Newton steps, 11x less time); with many more patterns than features at
#: most about ``n + 1`` are free, SMO with shrinking does well, and the chunks of pair steps between Newton steps keep
#: it from shrinking (4000 x 50: 3.4x the time of SMO alone, 2000 x 20: 3x; 1000 x 200: the same at tol 1e-3).
NEWTON_AUTO_RATIO = 2


def _solve(s: _Setup):
    """The generalised SMO (003 §2.6) to ``tol`` on the KKT gap, then, while the certified duality gap is above
    ``gap_tol``, with a tightened KKT tolerance.

    The KKT gap bounds the duality gap only up to a factor of about C x N: at large C a KKT gap of tol can leave
    a relative duality gap above tol (verify's s-features-60x200-mu0.6 at C = 100 had 1.7e-6 at tol 1e-6).
    So the KKT tolerance is tightened, warm-started from the current lam, until the certified gap
    (:func:`certified_gap`) is within ``gap_tol`` as well (8 rounds at most; each costs little).  Returns
    ``(w, F, n_iter, gap, code, info, why)``.
    """
    N, n = s.X.shape
    Q = s.seam.numba_q()
    diag = s.seam.diag() if s.use_gram else np.empty(0)  # read only through the seam (see _sfm_engine._select2)
    w = np.zeros(n)
    F = np.zeros(N)
    _refresh(s.X, s.y, s.lam, s.mu, w, F)
    XT = np.ascontiguousarray(s.X.T)

    def engine(kkt_tol, budget):
        return _smo(s.X, XT, s.y, s.C, s.mu, kkt_tol, budget, s.lam, w, F, s.use_gram, Q, diag,
                    2 if s.wss == "second" else 1, REFRESH_EVERY, s.shrinking)

    def holds():
        return certified_gap(s.X, s.y, s.lam, w, F, s.C, s.mu).holds(s.gap_tol)

    n_iter, gap, code, n_refresh, min_rows, n_newton = _first_solve(s, w, F, engine, holds)
    kkt_tol, rounds = s.tol, 0
    while code == 0 and rounds < 8 and not holds():
        kkt_tol, rounds = kkt_tol / 10.0, rounds + 1
        it2, gap, code, nr2, mr2 = engine(kkt_tol, max(s.max_iter - int(n_iter), 1))
        n_iter, n_refresh, min_rows = int(n_iter) + int(it2), int(n_refresh) + int(nr2), min(int(min_rows), int(mr2))
    polished = 0
    if code == 0 and s.tol < POLISH_TOL:
        polished = _polish(s, w, F)
        if polished:  # the polished lam may leave a KKT violation on a bound variable: SMO finishes it
            it2, gap, code, nr2, mr2 = engine(kkt_tol, max(s.max_iter - int(n_iter), 1))
            n_iter, n_refresh, min_rows = int(n_iter) + int(it2), int(n_refresh) + int(nr2), min(int(min_rows),
                                                                                                  int(mr2))
    why = ""
    if rounds > 0 or polished:
        gap, code, why = _judge_tightened(s, w, F, code, kkt_tol, rounds)
    info = {"n_refresh": int(n_refresh), "gram": bool(s.use_gram), "cache": s.seam.cache_info() if s.use_gram else None,
            "min_unshrunk": int(min_rows), "kkt_tol_rounds": int(rounds), "kkt_tol_reached": float(kkt_tol),
            "newton_polish_steps": int(polished), "newton_steps": int(n_newton)}
    return w, F, int(n_iter), float(gap), int(code), info, why


def _first_solve(s: _Setup, w, F, engine, holds):
    """The first solve to ``tol``: with ``s.newton``, SMO and Newton steps on the free set alternately
    (:func:`svmref.solvers._sfm_newton.newton_phase`), then SMO to ``tol`` from where that phase stopped (at once
    when it converged: the stopping rule on exact numbers); plain SMO otherwise.
    Returns ``(n_iter, gap, code, n_refresh, min_rows, n_newton)``."""
    if not s.newton:
        return (*engine(s.tol, s.max_iter), 0)
    n_iter, n_refresh, min_rows, n_newton = newton_phase(s, w, F, engine, holds)
    it2, gap, code, nr2, mr2 = engine(s.tol, max(s.max_iter - n_iter, 0))
    return n_iter + int(it2), gap, code, n_refresh + int(nr2), min(min_rows, int(mr2)), n_newton


#: Below this ``tol`` the solve ends with Newton polish steps on the free set (:func:`_polish`), as the box-dual
#: SMO does below its ``REFRESH_TOL``: a duality gap at rounding then bounds the decision values to about
#: ``sqrt(u)`` times their scale, which a gap of ``tol`` alone (by the strong convexity of (5) in ``a``) bounds only
#: to ``sqrt(tol)``.
POLISH_TOL = 1e-5


def _newton_point(X, y, lam, w, C, mu, rtol=1e-10, margin=0.0):
    r"""The maximiser of the dual (10) on the current pattern, or ``None``: the free set ``F`` (``0 < lam_j < C``)
    and the active features ``A`` (``|w_k| > mu``, signs ``s_k``) held fixed, (10) is a concave quadratic in
    ``lam_F`` under ``y'lam = 0``, and its stationarity conditions are the free patterns on the margin,
    ``x_{jA}'a_A + b = y_j`` (003 eq. (9) with ``delta_j = 0``), with ``a_A = (w_A - mu s) / (2(1 - mu))`` (eq. (8))
    and ``w_A = X_A'(y * lam)`` (eq. (6)). In ``v = y_F lam_F`` and ``b`` that is the linear system

        [G G' / (2(1 - mu))   1] [v]   [y_F - G c / (2(1 - mu))]
        [1'                   0] [b] = [-y_B'lam_B             ],   G = X_{FA},  c = X_{BA}'(y_B lam_B) - mu s,

    solved in the least-squares sense for the correction from the current point (``G G'`` is singular when more
    patterns are free than features active: the maximisers then form an affine set, and the one nearest the current
    ``lam`` is taken). A feature counts as active when ``|w_k| > mu + margin``: at a point
    near the optimum a feature whose ``|w_k|`` is within the solver's accuracy of ``mu`` may belong to either side
    (at the optimum it is often exactly at ``mu``, ``a_k = 0``), so :func:`_polish` tries several margins. Returns
    ``lam`` with ``lam_F = y_F v``, unclipped."""
    free = np.flatnonzero((lam > rtol * C) & (lam < (1.0 - rtol) * C))
    A = np.flatnonzero(np.abs(w) > mu + margin)
    if free.size == 0:
        return None
    bound = np.setdiff1d(np.arange(y.shape[0]), free)
    sgn = np.sign(w[A])
    G = X[np.ix_(free, A)]
    c = X[np.ix_(bound, A)].T @ (y[bound] * lam[bound]) - mu * sgn
    h = 2.0 * (1.0 - mu)
    m = free.size
    M = np.zeros((m + 1, m + 1))
    M[:m, :m] = G @ G.T / h
    M[:m, m] = 1.0
    M[m, :m] = 1.0
    rhs = np.empty(m + 1)
    rhs[:m] = y[free] - G @ c / h
    rhs[m] = -float(y[bound] @ lam[bound])
    x0 = np.r_[y[free] * lam[free], 0.0]
    sol = x0 + np.linalg.lstsq(M, rhs - M @ x0, rcond=None)[0]  # the maximiser nearest the current point
    if not np.all(np.isfinite(sol)):
        return None
    out = lam.copy()
    out[free] = y[free] * sol[:m]
    return out


def _polish(s: _Setup, w, F, rounds: int = 3) -> int:
    """Newton steps on the free set (:func:`_newton_point`), each taken as far towards that point as the box
    ``[0, C]`` allows (both ends satisfy ``y'lam = 0``, so every point between does) and kept only if the certified
    duality gap (:func:`certified_gap`) falls; ``s.lam``, ``w``, ``F`` updated in place, recomputed from ``lam``.
    Returns the number of steps kept."""
    kept = 0
    cur = certified_gap(s.X, s.y, s.lam, w, F, s.C, s.mu).gap
    for _ in range(rounds):
        if not cur > 0.0:
            break
        best = None
        for margin in POLISH_MARGINS:  # the pattern of features with |w_k| within margin of mu is uncertain
            step = _polish_step(s, w, margin * max(s.mu, 1e-300))
            if step is not None and (best is None or step[0] < best[0]):
                best = step
        if best is None or not best[0] < cur:
            break
        cur, lam_new, w_new, F_new = best
        s.lam[:], w[:], F[:] = lam_new, w_new, F_new
        kept += 1
    return kept


#: Relative margins (times ``mu``) by which a feature's ``|w_k|`` must exceed ``mu`` to count as active in a Newton
#: step of :func:`_polish`; the step of each is tried and the one with the smallest certified gap kept.
POLISH_MARGINS = (0.0, 1e-9, 1e-7, 1e-5)


def _polish_step(s: _Setup, w, margin):
    """One Newton step towards :func:`_newton_point` (with ``margin``), as far as the box allows: ``(gap, lam, w,
    F)`` at the new point (recomputed from ``lam``), or ``None``."""
    target = _newton_point(s.X, s.y, s.lam, w, s.C, s.mu, margin=margin)
    if target is None:
        return None
    d = target - s.lam
    with np.errstate(divide="ignore", invalid="ignore"):
        room = np.where(d > 0, (s.C - s.lam) / d, np.where(d < 0, -s.lam / d, np.inf))
    t = min(1.0, float(np.min(room)))
    if not t > 0.0:
        return None
    lam_new = target.clip(0.0, s.C) if t == 1.0 else np.clip(s.lam + t * d, 0.0, s.C)
    w_new, F_new = np.zeros_like(w), np.zeros(s.X.shape[0])
    _refresh(s.X, s.y, lam_new, s.mu, w_new, F_new)
    return certified_gap(s.X, s.y, lam_new, w_new, F_new, s.C, s.mu).gap, lam_new, w_new, F_new


def _judge_tightened(s: _Setup, w, F, code, kkt_tol, rounds):
    """After tightened rounds, judge the result against the caller's tol, not the tightened one: a tightened
    round that stopped early (max_iter, or a stall below working precision) has still met the stopping rule if
    its KKT gap is within tol (the certificate then decides between "optimal" and "suboptimal", in
    :func:`_finish`).  Returns ``(gap, code, why)``."""
    gap = float(_rejudge(s.X, s.y, s.lam, s.mu, w, F, s.C, np.empty(s.X.shape[0], dtype=np.int64), False)[1])
    why = ""
    if gap <= s.tol:
        code = 0
    elif code != 0:
        why = f"a tightened round (KKT tolerance {kkt_tol:g}, {rounds} rounds) stopped early"
    return gap, code, why


#: ``use_gram="auto"`` uses the column cache when it holds at least this fraction of the ``N`` columns
#: (at the default 200 MB: N <= 8360, about where the former dense 512 MiB Gram stopped, N <= 8192).
AUTO_CACHE_FRACTION = 0.375

_NO_GRAM = []


def _no_gram():
    """The seam handed to the engine when ``use_gram=False`` (never read; a 1 x 1 dense K keeps the types)."""
    if not _NO_GRAM:
        _NO_GRAM.append(PrecomputedKernel(np.zeros((1, 1))))
    return _NO_GRAM[0]


def _gram_seam(X, use_gram="auto", cache_size=CACHE_SIZE_MB, gram=None):
    """``(use_gram, seam)``: whether the engine reads columns of ``K = X X'``, and the kernel seam it reads
    them from (:func:`svmref.solvers._qmatrix.get_col`): the caller's ``gram``, else a linear
    :class:`RawKernel` with an LRU cache of ``cache_size`` MB, or an unused 1 x 1 stand-in. ``"auto"`` is on
    when the cache holds at least :data:`AUTO_CACHE_FRACTION` of the ``N`` columns (RawKernel's count)."""
    N = X.shape[0]
    if isinstance(use_gram, (bool, np.bool_)):
        use_gram = bool(use_gram)
    elif isinstance(use_gram, str) and use_gram == "auto":
        use_gram = None
    else:
        raise ValueError(f"use_gram must be 'auto', True or False; got {use_gram!r}")
    cache_size = check_cache_size(cache_size)
    if use_gram is None:
        use_gram = gram is not None or cache_size * 1024**2 // (8 * N) >= AUTO_CACHE_FRACTION * N
    if gram is not None and not use_gram:
        raise ValueError("gram is given but use_gram=False; pass use_gram='auto' (or True) or leave gram out")
    if not use_gram:
        return False, _no_gram()
    if gram is None:
        return True, RawKernel(X, "linear", cache_size=cache_size)
    return True, _check_gram(gram, X)


def _check_gram(gram, X):
    """A caller's ``K = X X'`` as a kernel seam: a linear :class:`RawKernel` on this ``X`` as given, else a
    :class:`PrecomputedKernel` whose diagonal and first column equal ``X X'``'s (to ``1e-8`` relative; a full
    check would cost ``O(N^2 n)``, more than most solves)."""
    N = X.shape[0]
    if isinstance(gram, RawKernel):
        if gram.kernel != "linear" or gram.X.shape != X.shape or not np.array_equal(gram.X, X):
            raise ValueError(f"gram must be the linear kernel on this X; got {gram!r}")
        return gram
    if not isinstance(gram, PrecomputedKernel):
        gram = PrecomputedKernel(gram, "gram")  # finite, square, symmetric; read in place
    if gram.n != N:
        raise ValueError(f"gram must be {N} x {N} (X has {N} patterns); got {gram.n} x {gram.n}")
    col = X @ X[0]
    scale = max(1.0, float(np.max(np.abs(col))), float(np.max(gram.diag())))
    if (np.max(np.abs(gram.diag() - np.einsum("ij,ij->i", X, X))) > 1e-8 * scale
            or np.max(np.abs(gram.K[0] - col)) > 1e-8 * scale):
        raise ValueError("gram is not X X' (the linear kernel on X): its diagonal or first column differs; "
                         "the support features machine is linear in the patterns")
    return gram


@dataclass(frozen=True)
class SFMGap:
    """The certificate of a point ``lam`` of (10) (:func:`certified_gap`), absolute: ``gap = P(a, b_cert) - W(lam)``
    with ``b_cert`` the exact best bias, its rounding ``floor``, ``scale = W - floor`` (a certified lower bound on
    ``|p*|``), and ``gap_at_b`` the same at a given ``b`` (the returned model's)."""

    gap: float
    floor: float
    scale: float
    b_cert: float
    primal: float
    gap_at_b: float

    def relative(self):
        return relative_gap(self.gap, self.floor, self.scale)

    def holds(self, gap_tol):
        return certified(self.gap, self.floor, self.scale, gap_tol)


def certified_gap(X, y, lam, w, F, C, mu, b=None) -> SFMGap:
    """The certified duality gap of ``lam`` (003 eq. (10)) with ``w = X'(y * lam)`` (eq. (6)) and ``F = X a`` exact.

    The primal point is ``a`` from (8), the exact best ``b`` of (5) at that ``a`` (the hinge loss
    ``C sum_j max(0, 1 - y_j (F_j + b))`` is piecewise linear in ``b``: a weighted median,
    :func:`svmref.solvers._smo_common.best_bias`, O(N log N)) and the optimal slacks ``delta_j``; weak duality
    (003 §2.4: (10) is the Lagrange dual of (5)) gives ``W(lam) <= W* = p* <= P(a, b)``, so
    ``0 <= P - p* <= gap`` and ``0 <= W* - W(lam) <= gap``; ``W(lam) >= 0`` from the start ``lam = 0`` (the engine only
    increases W), so ``|p*| >= W``. The floor is ``(N + n + 4) u`` times the terms summed (both objectives, and the
    products ``x_jk a_k`` of ``F``, weighted by ``C``)."""
    a = recover_a(w, mu)
    Fbox = F - y                            # the box-dual convention of _smo_common: xi_j = -y_j (Fbox_j + b)
    n = y.shape[0]
    b_cert = best_bias(-Fbox, np.where(y > 0, 0.0, -C), np.where(y > 0, C, 0.0), 0.0)
    W = dual_objective(lam, w, mu)
    P = primal_objective(X, y, a, b_cert, C, mu)
    g = np.maximum(0.0, np.abs(w) - mu)
    delta = np.maximum(0.0, 1.0 - y * (F + b_cert))
    terms = ((1.0 - mu) * float(a @ a) + mu * float(np.sum(np.abs(a))) + C * float(np.sum(delta))
             + float(np.sum(lam)) + float(g @ g) / (4.0 * (1.0 - mu)) + float(np.abs(w) @ np.abs(a)))
    xa = float(np.sum(np.abs(X) @ np.abs(a)))            # the products summed in F = X a
    floor = (n + X.shape[1] + 4) * UNIT_ROUNDOFF * (terms + C * (xa + n * (abs(b_cert) + 1.0)))
    P_b = P if b is None else primal_objective(X, y, a, b, C, mu)
    return SFMGap(gap=P - W, floor=floor, scale=max(0.0, W - floor), b_cert=float(b_cert), primal=P,
                  gap_at_b=P_b - W)


def _label(s: _Setup, code, gap, cert, n_iter, why, info):
    """``(status, message)`` of a finished solve, with its warning (at most one)."""
    tol = s.tol
    if code == 0:
        rule = f"KKT gap {gap:.3g} <= tol {tol:g}"
        if cert.holds(s.gap_tol):
            return "optimal", f"{rule}; certified relative duality gap {cert.relative()[0]:.3g} <= gap_tol {s.gap_tol:g}"
        rel, rel_floor = cert.relative()
        advice = (f"The KKT tolerance was tightened to {info['kkt_tol_reached']:g} ({info['kkt_tol_rounds']} rounds); "
                  "a larger gap_tol, or a smaller tol with a larger max_iter, may help")
        return "suboptimal", warn_suboptimal("support_features", rule, rel, rel_floor, s.gap_tol, advice, stacklevel=5)
    if code == 1:
        message = f"stopped after {n_iter} pair steps with KKT gap {gap:.3g}" + (f"; {why}" if why else "")
        warn_not_converged("support_features", n_iter, gap, tol, stacklevel=5)
        return "max_iter_reached", message
    message = (why + "; " if why else "") + (f"stalled at working precision with KKT gap {gap:.3g} > tol {tol:g}: the "
                                             "maximal violating pair cannot move; use a larger tol")
    warnings.warn(f"support_features: {message} (status='numerical_issue')", ConvergenceWarning, stacklevel=5)
    return "numerical_issue", message


def _at_threshold(X, lam, w, mu) -> np.ndarray:
    """The features whose ``|w_k|`` exceeds ``mu`` by no more than the rounding error of computing
    ``w = X'(y * lam)`` (003 eq. (6)), ``(N + 2) u sum_j |lam_j| |x_jk|``: on the threshold of (8) to working
    precision (at the optimum such a feature often sits exactly at ``mu``), so their ``a_k`` is not told from 0."""
    err = (X.shape[0] + 2) * UNIT_ROUNDOFF * (np.abs(X).T @ np.abs(lam))
    return (np.abs(w) > mu) & (np.abs(w) - mu <= err)


def _finish(s: _Setup, w, F, n_iter, gap, code, t0, info, why=""):
    X, y, C, mu, lam = s.X, s.y, s.C, s.mu, s.lam
    a = recover_a(w, mu)
    a[_at_threshold(X, lam, w, mu)] = 0.0  # selected: |w_k| above mu beyond rounding (003's support features)
    b, how = recover_b(F, y, lam, C, s.b_rule)
    W = dual_objective(lam, w, mu)
    P = primal_objective(X, y, a, b, C, mu)
    cert = certified_gap(X, y, lam, w, F, C, mu, b)
    status, message = _label(s, code, gap, cert, n_iter, why, info)
    rel, rel_floor = cert.relative()
    info = dict(info, b_rule=how, n_free=int(np.sum((lam > 0) & (lam < C))), n_bound=int(np.sum(lam >= C)),
                duality_gap_abs=cert.gap, gap_floor_abs=cert.floor, gap_scale=cert.scale, b_certified=cert.b_cert,
                primal_objective_certified=cert.primal,
                duality_gap_at_b=relative_gap(cert.gap_at_b, cert.floor, cert.scale)[0])
    return SFMResult(alpha=lam, b=b, objective=W, n_iter=n_iter, converged=code == 0, status=status,
                     message=message, time=_time.perf_counter() - t0, kkt_gap=gap, info=info,
                     lam=lam, a=a, w=w.copy(), selected=np.flatnonzero(a), primal_objective=P, C=C, mu=mu,
                     objective_sense="max", duality_gap=rel, gap_floor=rel_floor, gap_tol=s.gap_tol)

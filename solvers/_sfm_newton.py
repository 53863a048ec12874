r"""Newton steps on the free set between the pair steps of the generalised SMO (003 §2.6), for the support
features dual (003, eq. (10)).

Why: SMO finds the free patterns (``0 < lam_j < C``) and the active features (``|w_k| > mu``) quickly and then
converges slowly inside them: with most patterns free (separable data with ``n > N``: 179 of 200 free) the dual
restricted to that pattern is an ill-conditioned quadratic, and pair steps reduce its gap by a factor 10 only every
few thousand steps (17 932 steps at ``N = 200``, ``n = 1000``, tol 1e-3, most of them in the last decade). On that
pattern (10) *is* a concave quadratic, and one linear system gives its maximiser (:func:`newton_target`, the
stationarity of 003 eq. (9) with ``delta_j = 0`` on the free patterns, ``a`` from (8) on the active features).

How (:func:`newton_phase`): SMO alone until its KKT gap is below :data:`NEWTON_START_GAP`; then, alternately, one
Newton step and :func:`newton_chunk` pair steps (which free the bound patterns that violate the KKT conditions: a
Newton step never frees one), until the KKT gap is within ``tol`` and the certified duality gap within ``gap_tol``.
A Newton step moves along ``d = target - lam`` with the exact line search of the pair step
(:func:`svmref.solvers._sfm_engine._line_search`: ``phi'(t) = 1'd - a(w + t u)'u`` with ``u = X'(y * d)`` is
monotone and piecewise linear along any feasible direction, 003 §2.6), so ``W`` never decreases and a wrong
pattern (a feature that crosses ``mu``, a ``lam_j`` that leaves the box) costs a shorter step, never a worse point.
The phase stops when a step gains nothing or after :data:`NEWTON_MAX_STEPS`; the solver then goes on exactly as
without it (the SMO stopping rule on exact numbers, the tightened rounds, the polish below ``POLISH_TOL``).
"""
from __future__ import annotations

from contextlib import contextmanager

import numpy as np
import scipy.linalg as sla

from svmref._thresholds import SNAP_RTOL as SNAP

from ._result import UNIT_ROUNDOFF
from ._sfm_engine import _line_search, _refresh

#: SMO runs alone until its KKT gap is below this; then Newton steps and pair steps alternate.
NEWTON_START_GAP = 0.3
#: Most Newton steps in one solve (each costs a dense solve of order the free set).
NEWTON_MAX_STEPS = 50
#: No Newton step when more patterns than this are free (the system is dense, ``O(m^3)``).
NEWTON_MAX_FREE = 1500
#: Solves of one Newton target: the first and one re-solve after pinning the patterns whose target left the box
#: (more re-solves cost more than the longer steps they allow, measured on the benchmark's 200 x 1000 instances).
NEWTON_MAX_PINS = 2
#: The Newton phase ends after this many Newton steps in a row that gain nothing (pair steps run between them).
NEWTON_MAX_FAILS = 3
#: :class:`ActiveGram` is formed anew after this many rank updates.
GRAM_UPDATES = 10


_CONTROLLER = []


@contextmanager
def one_blas_thread(on: bool = True):
    """BLAS on one thread inside the block (when ``on``). The Newton steps' matrices are small (the free set, a few
    hundred rows), where OpenBLAS's threads cost more than they save: separable 200 x 1000 at tol 1e-3 took 0.6-0.8 s
    of CPU time with two BLAS threads on the shared 2-core machine (load 6-9), 31 ms with one. The
    ``threadpoolctl`` controller is made once (about 13 ms) and each limit costs microseconds."""
    if not on:
        yield
        return
    if not _CONTROLLER:
        from threadpoolctl import ThreadpoolController

        _CONTROLLER.append(ThreadpoolController())
    with _CONTROLLER[0].limit(limits=1, user_api="blas"):
        yield


def newton_chunk(N: int) -> int:
    """Pair steps between two Newton steps: ``max(20, N // 10)`` (a Newton step costs about as much as 40 pair
    steps at ``N = 200``, ``n = 1000``; at larger ``N`` more patterns need freeing between two steps)."""
    return max(20, N // 10)


def _bordered(M, r, e, x0):
    """``v`` of ``[M 1; 1' 0] [v; b] = [r; e]``, as the correction from ``x0`` (Cholesky of ``M`` with the
    Schur complement of the border when ``M`` is positive definite and its factor's diagonal spans less than
    ``1/sqrt(m u)``, else the least-squares solution nearest ``x0``, LAPACK's ``gelsy``; ``M = G G'`` is singular when
    more patterns are free than features active)."""
    m = M.shape[0]
    rr = r - M @ x0
    ee = e - float(x0.sum())
    try:
        cf = sla.cho_factor(M, check_finite=False)
        dg = np.abs(np.diag(cf[0]))
        if dg.min() > np.sqrt(m * UNIT_ROUNDOFF) * dg.max():  # condition below about 1/(m u): well posed
            pq = sla.cho_solve(cf, np.column_stack([rr, np.ones(m)]), check_finite=False)
            p, q = pq[:, 0], pq[:, 1]
            b = (p.sum() - ee) / q.sum()
            v = x0 + p - b * q
            if np.all(np.isfinite(v)):
                return v
    except (np.linalg.LinAlgError, ValueError):
        pass
    Mb = np.zeros((m + 1, m + 1))
    Mb[:m, :m] = M
    Mb[:m, m] = 1.0
    Mb[m, :m] = 1.0
    sol = sla.lstsq(Mb, np.r_[rr, ee], cond=np.sqrt(m * UNIT_ROUNDOFF), lapack_driver="gelsy", check_finite=False)[0]
    return x0 + sol[:m]


def newton_target(X, y, lam, w, F, C, mu, max_solves=None, gram=None):
    r"""The maximiser of (10) with the free patterns ``F`` (``0 < lam_j < C``) and the active features ``A``
    (``|w_k| > mu``, signs ``s``) held, kept in the box by pinning: ``lam`` of the target, or ``None``.

    With the pattern held, (10) is a concave quadratic in ``v = y_F lam_F`` under ``y'lam = 0``; its stationarity
    is ``x_{jA}'a_A + b = y_j`` on ``F`` (003 eq. (9), ``delta_j = 0``) with ``a_A = (w_A - mu s)/(2(1 - mu))``
    (eq. (8)) and ``w = X'(y * lam)`` (eq. (6)):

        [G G'/(2(1 - mu))  1] [v]   [y_F - G c/(2(1 - mu))]
        [1'                0] [b] = [-y_B'lam_B           ],   G = X_{FA},  c = X_{BA}'(y_B lam_B) - mu s.

    With ``X_{BA}'(y_B lam_B) = w_A - G'v_0`` (eq. (6), ``v_0`` the current ``y_F lam_F``) and ``G (w_A - mu s) =
    2(1 - mu) (X a)_F`` (eq. (8)), the right-hand side is ``y_F - (X a)_F + G G' v_0 / (2(1 - mu))``: ``F = X a``
    (exact) and ``G G'`` are all it needs. ``G G'`` is the block ``(F, F)`` of ``X_A X_A'``, from ``gram``
    (:class:`ActiveGram`, kept across Newton steps) when given.

    A free pattern whose solution leaves ``[0, C]`` is pinned at the bound it crossed (moved from ``F`` to ``B``)
    and the system solved again on the rest (``max_solves`` solves in all, default :data:`NEWTON_MAX_PINS`, after
    which the last target is returned and the step stops at the box; ``G G'`` is formed once and its blocks reused:
    pinning ``P`` changes the right-hand side by ``-G_K G_P'(y_P lam_P)/(2(1 - mu))``)."""
    free = np.flatnonzero((lam > 0.0) & (lam < C))
    A = np.flatnonzero(np.abs(w) > mu)
    if free.size == 0 or free.size > NEWTON_MAX_FREE or A.size == 0:
        return None
    target = None
    h = 2.0 * (1.0 - mu)
    if gram is None:
        G = X[np.ix_(free, A)]
        M0 = G @ G.T / h
    else:
        M0 = gram.block(w, mu, free) / h
    v0 = y[free] * lam[free]
    r0 = y[free] - F[free] + M0 @ v0
    e0 = -float(y @ lam - v0.sum())
    pin = np.zeros(free.size)              # y_j lam_j of the pinned patterns
    keep = np.ones(free.size, dtype=bool)
    for _ in range(NEWTON_MAX_PINS if max_solves is None else max_solves):
        K, P = np.flatnonzero(keep), np.flatnonzero(~keep)
        if K.size == 0:
            return None
        v = _bordered(M0[np.ix_(K, K)], r0[K] - M0[np.ix_(K, P)] @ pin[P], e0 - float(pin[P].sum()), v0[K])
        lam_K = y[free[K]] * v
        target = lam.copy()
        target[free[K]] = lam_K
        target[free[P]] = y[free[P]] * pin[P]
        out = (lam_K < 0.0) | (lam_K > C)
        if not np.any(out):
            break
        pin[K[out]] = y[free[K[out]]] * np.where(lam_K[out] < 0.0, 0.0, C)
        keep[K[out]] = False
    return target  # after NEWTON_MAX_PINS re-solves it may still leave the box: the step then stops at the box


class ActiveGram:
    """``X_A X_A'`` over all patterns for the active features ``A`` (``|w_k| > mu``), kept across Newton steps:
    between two steps ``A`` changes by a few features, and each costs a rank-one update (``O(N^2)``) instead of
    forming ``G G'`` again (``O(m^2 |A|)``). Formed anew when more than a quarter of ``A`` changed and after
    :data:`GRAM_UPDATES` updates (rounding). ``N x N`` memory: used only when ``N <= NEWTON_MAX_FREE``."""

    def __init__(self, X):
        self.X, self.mask, self.K, self.updates = X, None, None, 0

    def block(self, w, mu, free):
        """``(X_A X_A')[free, free]`` for the active features of ``w``."""
        mask = np.abs(w) > mu
        if self.mask is not None and self.updates < GRAM_UPDATES:
            add, rem = mask & ~self.mask, self.mask & ~mask
            if 4 * (np.count_nonzero(add) + np.count_nonzero(rem)) <= np.count_nonzero(mask):
                for cols, sign in ((add, 1.0), (rem, -1.0)):
                    if np.any(cols):
                        Xc = self.X[:, cols]
                        self.K += sign * (Xc @ Xc.T)
                self.mask, self.updates = mask, self.updates + 1
                return self.K[np.ix_(free, free)]
        XA = self.X[:, mask]
        self.K, self.mask, self.updates = XA @ XA.T, mask, 0
        return self.K[np.ix_(free, free)]


def dual_objective(lam: np.ndarray, w: np.ndarray, mu: float) -> float:
    """003, eq. (10): ``W(lam) = sum_j lam_j - 1/(4(1-mu)) sum_i max{0, |w_i| - mu}^2`` (defined here, where the
    Newton steps' line search needs it; :mod:`svmref.solvers.support_features` exports it)."""
    g = np.maximum(0.0, np.abs(w) - mu)
    return float(np.sum(lam) - g @ g / (4.0 * (1.0 - mu)))


def newton_step(X, y, lam, w, F, C, mu, bp, ds, gram=None) -> bool:
    """One step from ``lam`` towards :func:`newton_target` with the exact line search of 003 §2.6 along
    ``d = target - lam`` (:func:`svmref.solvers._sfm_engine._line_search` with ``phi'(0) = 1'd - a'u``,
    ``u = X'(y * d)``, ``t`` in the box); ``lam``, ``w``, ``F`` updated in place (``w``, ``F`` recomputed exactly).
    Pinning can make ``d`` a direction along which ``W`` does not rise; then the step goes towards the first solve's
    target instead (no pins, the step stops at the first pattern to reach the box: the active-set method's step,
    uphill whenever the free set's quadratic is not at its maximum). Returns whether ``W`` (eq. (10)) rose by more
    than its rounding (``False``: nothing changed)."""
    for pins in (NEWTON_MAX_PINS, 1):
        target = newton_target(X, y, lam, w, F, C, mu, pins, gram)
        if target is not None and _step_to(X, y, lam, w, F, C, mu, bp, ds, target):
            return True
    return False


def _step_to(X, y, lam, w, F, C, mu, bp, ds, target) -> bool:
    """The step of :func:`newton_step` along ``target - lam``; ``True`` when taken."""
    d = target - lam
    with np.errstate(divide="ignore", invalid="ignore"):
        room = np.where(d > 0.0, (C - lam) / d, np.where(d < 0.0, -lam / d, np.inf))
    tmax = float(np.min(room))
    if not tmax > 0.0:
        return False
    u = X.T @ (y * d)
    t = _line_search(w, u, mu, float(d.sum()), 0.0, tmax, bp, ds)
    if not t > 0.0:
        return False
    new = np.clip(lam + t * d, 0.0, C)
    new[new <= SNAP * C] = 0.0            # within rounding of a bound: on it (as the pair step does)
    new[new >= C - SNAP * C] = C
    if abs(float(y @ new)) > abs(float(y @ lam)) + (SNAP + 8.0 * UNIT_ROUNDOFF) * y.size * C:
        return False  # the step would leave y'lam = 0 (003 eq. (10)) beyond rounding and snapping: not taken
    w_new = X.T @ (y * new)                                   # eq. (6), exact (BLAS)
    g = w_new - np.clip(w_new, -mu, mu)                       # sign(w) max{0, |w| - mu}
    F_new = X @ (g / (2.0 * (1.0 - mu)))                      # X a with a of eq. (8)
    W0, W1 = dual_objective(lam, w, mu), dual_objective(new, w_new, mu)
    if not W1 - W0 > 8.0 * UNIT_ROUNDOFF * (abs(W0) + float(np.sum(lam))):
        return False
    lam[:], w[:], F[:] = new, w_new, F_new
    return True


def balanced_start(X, y, C, mu):
    """The start of the Newton phase from ``lam = 0``: the best point of (10) on the segment ``lam = t d``,
    ``d_j = 1/N_+`` on class +1 and ``1/N_-`` on class -1 (so ``y'd = 0``), ``0 <= t <= C / max d``, by the exact line
    search of 003 §2.6 (``phi'(t) = 1'd - a(t u)'u``, ``u = X'(y * d)``, from ``w = 0``). ``W`` there is at least
    ``W(0) = 0``. Every pattern starts free, as most are at the optimum on separable data with ``n > N``: on the
    benchmark's 200 x 1000 instances SMO then reaches the gap where the Newton steps start in about 30 % fewer pair
    steps. ``None`` when a class is empty."""
    n_pos, n_neg = int(np.sum(y > 0)), int(np.sum(y < 0))
    if n_pos == 0 or n_neg == 0:
        return None
    n = X.shape[1]
    d = np.where(y > 0, 1.0 / n_pos, 1.0 / n_neg)
    u = X.T @ (y * d)
    t = _line_search(np.zeros(n), u, mu, float(d.sum()), 0.0, C / float(d.max()), np.empty(2 * n), np.empty(2 * n))
    return np.clip(t * d, 0.0, C)


def newton_phase(s, w, F, engine, holds):
    """From ``lam = 0``: :func:`balanced_start` first. SMO to :data:`NEWTON_START_GAP`, then Newton steps
    (:func:`newton_step`) and :func:`newton_chunk` pair steps
    alternately until the KKT gap is within ``s.tol`` and ``holds()`` (the certified duality gap within
    ``gap_tol``), :data:`NEWTON_MAX_FAILS` Newton steps in a row gain nothing, :data:`NEWTON_MAX_STEPS` or
    ``s.max_iter``.
    ``engine(kkt_tol, budget)`` is the solver's SMO; returns ``(n_iter, n_refresh, min_rows, n_newton)``."""
    N, n = s.X.shape
    bp, ds = np.empty(2 * n), np.empty(2 * n)
    gram = ActiveGram(s.X) if N <= NEWTON_MAX_FREE else None
    if not np.any(s.lam):  # a cold start: from the balanced point instead of 0
        lam = balanced_start(s.X, s.y, s.C, s.mu)
        if lam is not None:
            s.lam[:] = lam
            _refresh(s.X, s.y, s.lam, s.mu, w, F)
    it, gap, code, n_refresh, min_rows = engine(max(s.tol, NEWTON_START_GAP), s.max_iter)
    n_iter, n_newton = int(it), 0
    fails = 0
    while n_newton < NEWTON_MAX_STEPS and n_iter < s.max_iter and fails < NEWTON_MAX_FAILS and code in (0, 1):
        if code == 0 and gap <= s.tol and holds():
            break
        if newton_step(s.X, s.y, s.lam, w, F, s.C, s.mu, bp, ds, gram):
            n_newton, fails = n_newton + 1, 0
        else:
            fails += 1
        it, gap, code, nr, mr = engine(s.tol, min(newton_chunk(N), s.max_iter - n_iter))
        n_iter, n_refresh, min_rows = n_iter + int(it), int(n_refresh) + int(nr), min(int(min_rows), int(mr))
    return n_iter, int(n_refresh), int(min_rows), n_newton

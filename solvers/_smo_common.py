"""What every SMO engine here shares (LIBSVM's ``Solver`` bookkeeping): the index sets of a box-constrained
dual with one equality constraint, the KKT gap over them, and the bias rule.

The problem has variables ``l_t <= alpha_t <= u_t`` with ``sum_t y_t alpha_t`` fixed (``y_t = +-1``), and
``F_t = y_t dD/dalpha_t``. The index sets (000, eq. (8), written for general bounds; for the support
features machine 003 §2.6 with ``l = 0, u = C``):

    I_up  = {t : y_t = +1, alpha_t < u_t}  u  {t : y_t = -1, alpha_t > l_t}   (000 calls it I_L)
    I_low = {t : y_t = +1, alpha_t > l_t}  u  {t : y_t = -1, alpha_t < u_t}   (000 calls it I_U)

and the point is optimal iff ``max_{I_low} F <= min_{I_up} F`` (000, eq. (11) for a box; eq. (10) is the
LS-SVM case, with no bounds, where both sets hold every pattern). Used by the box-dual
SMO (:mod:`svmref.solvers._smo_kernel`) and the generalised SMO of the support features machine
(:mod:`svmref.solvers._sfm_engine`).
"""
from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True, inline="always")
def _in_up(a, yt, lo, up):
    # t in I_up: alpha_t can move along +y_t (000 eq. (8), I_L there).
    return (a < up) if yt > 0.0 else (a > lo)


@njit(cache=True, inline="always")
def _in_low(a, yt, lo, up):
    # t in I_low: alpha_t can move along -y_t (000 eq. (8), I_U there).
    return (a > lo) if yt > 0.0 else (a < up)


@njit(cache=True, inline="always")
def _sets(a, yt, lo, up):
    # membership byte: bit 1 = t in I_up, bit 2 = t in I_low (LIBSVM's alpha_status, for any box)
    return np.int8(_in_up(a, yt, lo, up)) | (np.int8(_in_low(a, yt, lo, up)) << 1)


@njit(cache=True, inline="always")
def _at_nz(a, lo, up):
    # alpha at a non-zero bound: its term alpha y K_:t is kept in Gbar
    return (a == up and up != 0.0) or (a == lo and lo != 0.0)


@njit(cache=True)
def bias(y, lower, upper, alpha, F):
    """``b = -rho`` (LIBSVM's ``calculate_rho``): ``rho`` = mean of ``F`` over the free variables,
    else the midpoint of ``[max F over I_low-only, min F over I_up-only]``.

    Why: the KKT conditions (000 eq. (6) for a box; eq. (7) for the LS-SVM, every variable free with the
    shifted kernel of 000 eq. (2)) read ``F_t = -b`` for a free ``alpha_t`` and
    ``max_{I_low} F <= -b <= min_{I_up} F`` in general (the same for epsilon-SVR, whose ``F`` carries
    ``+-epsilon - z_t``).
    """
    n = y.shape[0]
    nfree = 0
    sfree = 0.0
    ub = np.inf
    lb = -np.inf
    for t in range(n):
        a = alpha[t]
        if lower[t] < a < upper[t]:
            nfree += 1
            sfree += F[t]
        else:
            up = _in_up(a, y[t], lower[t], upper[t])
            low = _in_low(a, y[t], lower[t], upper[t])
            if up and not low:
                ub = min(ub, F[t])
            elif low and not up:
                lb = max(lb, F[t])
    if nfree > 0:
        rho = sfree / nfree
    elif np.isfinite(ub) and np.isfinite(lb):
        rho = 0.5 * (ub + lb)
    elif np.isfinite(ub):
        rho = ub
    elif np.isfinite(lb):
        rho = lb
    else:
        rho = 0.0
    return -rho, nfree


@njit(cache=True)
def kkt_gap(y, lower, upper, alpha, F):
    """``max_{I_low} F - min_{I_up} F`` over all variables (``-inf`` if a set is empty)."""
    Fmin = np.inf
    Fmax = -np.inf
    for t in range(y.shape[0]):
        a = alpha[t]
        if _in_up(a, y[t], lower[t], upper[t]) and F[t] < Fmin:
            Fmin = F[t]
        if _in_low(a, y[t], lower[t], upper[t]) and F[t] > Fmax:
            Fmax = F[t]
    if Fmin == np.inf or Fmax == -np.inf:
        return -np.inf
    return Fmax - Fmin


# ------------------------------------------------------------------------------------------------
# the certified duality gap of a box dual (numpy; O(M log M) from the maintained F)
# ------------------------------------------------------------------------------------------------
_U = np.finfo(np.float64).eps / 2.0       # unit roundoff


def _slopes(y, lower, upper):
    """``(L, U)``: the range of ``y_t a`` over ``a in [l_t, u_t]`` (``[l, u]`` for ``y = +1``, ``[-u, -l]`` else)."""
    pos = y > 0.0
    return np.where(pos, lower, -upper), np.where(pos, upper, -lower)


def _h_sum(b, c, L, U, shift):
    """``H(b) = sum_t y_t l_t'(xi_t(b))`` (right limit where ``shift = 0``): ``clip((c_t - b) / shift, L_t, U_t)``,
    or the step ``U_t`` for ``b < c_t``, ``L_t`` for ``b >= c_t``. Non-increasing in ``b``; ``-dP/db``."""
    if shift > 0.0:
        with np.errstate(invalid="ignore"):
            return float(np.sum(np.clip((c - b) / shift, L, U)))
    with np.errstate(invalid="ignore"):
        return float(np.sum(np.where(c > b, U, L)))


def best_bias(c, L, U, shift):
    """The ``b`` minimising the loss part of the primal, ``P(b) = sum_t l_t(y_t (c_t - b))`` (see
    :func:`duality_gap`), by bisection over the sorted breakpoints: ``O(M log M)``.

    ``P`` is convex with ``dP/db = -H(b)`` (:func:`_h_sum`), ``H`` non-increasing and piecewise linear (a step
    function when ``shift = 0``, where the minimiser is a breakpoint ``c_t``: a weighted median). Any ``b`` gives
    a valid upper bound on the primal optimum; this one gives the tightest. Returns ``0.0`` for ``M = 0``.
    """
    if c.size == 0:
        return 0.0
    if shift > 0.0:
        with np.errstate(invalid="ignore"):
            bps = np.concatenate([c - shift * U, c - shift * L])
        bps = bps[np.isfinite(bps)]
    else:
        bps = c
    if bps.size == 0:  # no bound anywhere (the LS-SVM): H is linear, its root is mean(c)
        return float(np.mean(c))
    bps = np.sort(bps)
    lo, hi = 0, bps.size  # first k with H(bps[k]) <= 0, by bisection (H non-increasing)
    while lo < hi:
        mid = (lo + hi) // 2
        if _h_sum(bps[mid], c, L, U, shift) > 0.0:
            lo = mid + 1
        else:
            hi = mid
    k = lo
    if shift == 0.0:
        return float(bps[min(k, bps.size - 1)])
    if k == 0 or k == bps.size:  # the root is outside the breakpoints: H is linear there, step one unit out
        b0 = float(bps[0] if k == 0 else bps[-1])
        b1 = b0 - 1.0 if k == 0 else b0 + 1.0
    else:
        b0, b1 = float(bps[k - 1]), float(bps[k])
    h0, h1 = _h_sum(b0, c, L, U, shift), _h_sum(b1, c, L, U, shift)
    if not h0 != h1:
        return b0
    return b0 + (b1 - b0) * h0 / (h0 - h1)


def gap_terms(F, beta, y, lower, upper, shift, b):
    """Per-variable terms of the gap at bias ``b``: ``(xi, a, fy)`` with ``xi_t = shift beta_t - y_t (F_t + b)``,
    ``a_t = l_t'(xi_t)`` (the multiplier the loss asks for) and the Fenchel-Young excess
    ``fy_t = l_t(xi_t) + shift beta_t^2 / 2 - beta_t xi_t >= 0``, written without cancellation:
    ``(a_t - beta_t)(xi_t - shift (a_t + beta_t) / 2)`` for ``shift > 0``, else
    ``(u_t - beta_t) max(xi_t, 0) + (beta_t - l_t) max(-xi_t, 0)``."""
    xi = shift * beta - y * (F + b)
    with np.errstate(invalid="ignore", over="ignore"):
        if shift > 0.0:
            a = np.clip(xi / shift, lower, upper)
            fy = (a - beta) * (xi - 0.5 * shift * (a + beta))
        else:
            a = np.where(xi > 0.0, upper, np.where(xi < 0.0, lower, beta))
            up = np.where(xi > 0.0, (upper - beta) * xi, 0.0)
            down = np.where(xi < 0.0, (lower - beta) * xi, 0.0)
            fy = up + down
    return xi, a, fy


def duality_gap(F, beta, y, lower, upper, shift):
    r"""The duality gap of a box dual at ``beta``, from its gradient ``F``: ``(gap, b, xi, a, fy)``.

    The dual (the engine's problem, :mod:`svmref.solvers._smo_kernel`), over ``M`` variables with signs ``y_t``::

        min  D(beta) = 1/2 beta'Q beta + p'beta,   Q_tu = y_t y_u (K_tu + shift delta_tu),   y'beta = 0,  l <= beta <= u,

    is the Lagrange dual of the primal (derivation in ``docs/smo.md``, "Labels")::

        min_{W, b, xi}  1/2 ||W||^2 + sum_t l_t(xi_t)   s.t.   y_t (W.Phi_t + b) + xi_t = -p_t,
        l_t(xi) = max_{a in [l_t, u_t]} (a xi - shift a^2 / 2)

    (``p = -1``: 000 eq. (1) LS-SVM, ``l = (C/2) xi^2``; 000 eq. (3) Least 1-Norm, ``C |xi|``; 003 eq. (2) L1-SVM,
    ``C max(0, xi)``; 000 §1 L2-SVM, ``(C/2) max(0, xi)^2``; epsilon-SVR with its ``p``). The primal point that
    ``beta`` defines is ``W = sum_t beta_t y_t Phi_t``, the exact best ``b`` (:func:`best_bias`) and the optimal
    slacks ``xi_t = shift beta_t - y_t (F_t + b)`` (``F_t = y_t (Q beta + p)_t``). With ``P`` its value, weak
    duality gives ``P >= p* = -D* >= -D(beta)``, and by the Fenchel-Young identity

        P + D(beta) = sum_t fy_t - b y'beta,     fy_t = l_t(xi_t) + shift beta_t^2 / 2 - beta_t xi_t >= 0,

    a sum of non-negative terms (:func:`gap_terms`), so ``0 <= P - p* <= gap`` and ``0 <= D(beta) - D* <= gap``.
    ``gap`` is ``inf`` where the primal point is infeasible (an infinite bound with ``shift = 0``).
    """
    L, U = _slopes(y, lower, upper)
    with np.errstate(invalid="ignore"):
        c = shift * beta * y - F       # xi_t(b) = y_t (c_t - b)
    b = best_bias(c, L, U, shift)
    xi, a, fy = gap_terms(F, beta, y, lower, upper, shift, b)
    gap = float(np.sum(fy)) - b * float(y @ beta)
    if not np.isfinite(gap):
        gap = np.inf
    return gap, b, xi, a, fy


def gap_floor(F, beta, p, a, b, fy, shift, F_err):
    """The rounding floor of :func:`duality_gap` and of the dual ``D = 1/2 sum_t beta_t (y_t F_t + p_t)`` evaluated
    from ``F``: ``(M + 4) u`` times the sizes of the terms summed (the slacks ``xi_t = shift beta_t - y_t (F_t + b)``
    weighted by ``|a_t| + |beta_t|``, the dual's ``beta_t (y_t F_t + p_t)``, ``b y'beta`` and the excesses ``fy_t``),
    plus ``F_err`` (a bound on ``max_t |F_t - F_t exact|``: F's own rounding) times the weights it enters with."""
    M = beta.shape[0]
    ab = np.abs(beta)
    aa = np.where(np.isfinite(a), np.abs(a), 0.0)
    Fa = np.abs(F)
    terms = (float(np.sum((aa + ab) * (shift * ab + Fa + abs(b)))) + float(np.sum(ab * (Fa + np.abs(p))))
             + abs(b) * float(np.sum(ab)) + float(np.sum(np.abs(fy[np.isfinite(fy)]))))
    return (M + 4) * _U * terms + F_err * float(np.sum(aa + 2.0 * ab))

"""Every label held to an independent optimum: case x (reference, SMO at the default tol, verify) -> label, true error.

A label is a promise about a measured quantity: the reference's ``certified`` (the relative objective error is
within its ``tol``, plus the floor it reports), the SMO's ``"optimal"`` (within the bound its result or its
docs state) and the duality gap it reports (an upper bound on its relative objective error), verify's
``pass`` at ``T`` (every error of the answer is at most ``T``). This script measures each of them against an
optimum computed here, without :mod:`svmref.formulations` and without :mod:`svmref.solvers`:

1. the kernel in the difference form ``||x - z||^2`` (exact under any feature offset), in extended precision;
2. each dual written from its paper as a plain cvxpy problem (:func:`dual_data` says which equation) and
   solved by CLARABEL at tolerances 1e-12;
3. refined by the primal active-set method (:func:`refine`): Newton steps on the free set, the
   equality-constrained KKT system solved in double and corrected by residuals computed in ``numpy.longdouble``,
   until the KKT conditions hold to round-off, so the optimum is known to about 1e-12 relative (a proximal point
   fallback, :func:`refine_prox`, where the free set's Hessian is too ill-conditioned for that);
4. its own certificate: the primal objective of the paper at ``W = sum coef_i Phi_i`` and the best ``b`` (the
   duality gap ``P + D``, :func:`primal_best`) and the KKT residuals, both in extended precision;
5. a second solver: for N <= :data:`MP_MAX_M` variables the KKT system of the final active set solved again in
   mpmath (50 digits, the kernel recomputed in mpmath; its value is then D*), otherwise ECOS on the same cvxpy
   dual; the relative agreement of the objectives is printed.

The tools get the kernel as a user would compute it (:func:`svmref.kernels.kernel_matrix`); their answers are
evaluated on the exact kernel. The true errors:

* ``obj``: the relative objective error ``|D(alpha) - D*| / |D*|`` (``D`` the dual in the minimisation sign,
  at the answer's alpha on the exact kernel; for the reference also its reported objective);
* ``dec``: ``max_x |g(x) - g*(x)|`` over the training and held-out points, ``g`` the kernel expansion without
  b, in margin units for a classifier (the constraints ``y_i f(x_i) >= 1 - xi_i`` fix the scale of f: an
  absolute error) and over ``max |y|`` for epsilon-SVR (the targets' units);
* ``b``: the distance of the answer's b from the optimal interval ``[b_lo, b_hi]`` (one point when some
  variable is free), in the same units;
* a verify answer's true error is the largest of the three (and of the feasibility error ``feas``); ``alpha``,
  ``max |alpha - alpha*| / max |alpha*|`` where alpha* is unique, is reported beside them.

A row is *violated* when its label is stronger than its true error: certified at ``tol`` with ``obj > tol +
floor``; ``"optimal"`` with ``obj`` above the stated bound (``bound ?`` when no bound is stated: reported, not
counted); a reported duality gap below the true ``obj``; ``pass`` at ``T`` with a true error above ``T``.
The independent optimum's own uncertainty (its gap, or 1e-15 where mpmath solved its optimal active set) and the
floating-point floor of evaluating ``D`` are added to every bound; a claim whose bound is below them is
``unresolved``. Reported beside the violations, not counted: verify's *false fails* (an answer whose every error
is under ``T/10`` judged failing) and *lenient advice* (``would pass at T'`` for an answer whose true error is
above ``T'``, or ``T' >= 1``, or that fails when re-checked at ``T'``).

    python benchmarks/labels.py [--quick] [--json PATH] [--rows]

``--quick`` (under a minute on 2 cores) runs the named cases that are cheap and the adversarial
suite of three formulations (Least 1-Norm, L1, epsilon-SVR), the reference's primal up to N = 100; the full run
(a few minutes) every formulation on the adversarial suite, the primal everywhere.
"""
from __future__ import annotations

import argparse
import dataclasses
import functools
import json
import math
import sys
import time
import warnings
from dataclasses import dataclass, field

import cvxpy as cp
import mpmath
import numpy as np
import scipy.linalg as sla
from threadpoolctl import threadpool_limits

LD = np.longdouble

#: CLARABEL at tight tolerances: the starting point of the refinement.
CLARABEL_OPTS = {"tol_gap_abs": 1e-12, "tol_gap_rel": 1e-12, "tol_feas": 1e-12, "max_iter": 500}

#: ECOS as the second solver (its tightest reliable tolerances).
ECOS_OPTS = {"abstol": 1e-10, "reltol": 1e-10, "feastol": 1e-10, "max_iters": 500}

#: Up to this many dual variables the second solver is the mpmath KKT solve (50 digits), above it ECOS.
MP_MAX_M = 60

#: Decimal digits of the mpmath cross-check.
MP_DPS = 50

#: The uncertainty of an optimum solved in mpmath on its optimal active set: the data are doubles, exact as given.
MP_FLOOR = 1e-15

#: Seconds each refinement (:func:`refine`, :func:`refine_prox`) may take; its gap says how far it got.
REFINE_SECONDS = 20.0

#: The proximal term of :func:`refine_prox`, relative to the largest diagonal entry of Q.
PROX_RHO = 1e-6

#: In the quick run the reference's primal is solved up to this N only (the hard 302-point problem's primal
#: takes ~20 s on a loaded machine).
QUICK_PRIMAL_MAX_N = 100

#: The perturbed answers are off by this multiple of T: just above the bound a pass at T promises.
OFF = 1.5

#: Verify's tolerances exercised.
VERIFY_TOLS = (1e-3, 1e-6)

#: The interior-point answers: alpha these fractions of C inside each bound it sits on.
INTERIOR = (1e-5, 1e-8)

#: The formulations measured on the adversarial suite (quick: the first three; L2 and LS are in the named cases).
FORMULATIONS = ("least_1norm_svm", "l1_svm", "svr", "l2_svm", "ls_svm")


# ------------------------------------------------------------------------------------------------ exact kernels
def exact_kernel(X, Z, kernel: str, params: dict) -> np.ndarray | None:
    """The kernel of :mod:`svmref.kernels`' conventions in extended precision; RBF in the difference form
    ``exp(-||x - z||^2 / sigma^2)`` (000 §4; 002), exact under any feature offset; ``None`` for MLP (not PSD)."""
    X, Z = np.asarray(X, dtype=LD), np.asarray(Z, dtype=LD)
    if kernel == "linear":
        return X @ Z.T
    if kernel == "poly":  # 002: (1 + x'z / c)^d
        return (1 + (X @ Z.T) / LD(params.get("c", 1.0))) ** int(params.get("d", 2))
    if kernel == "rbf":
        d2 = np.zeros((X.shape[0], Z.shape[0]), dtype=LD)
        for j in range(X.shape[1]):
            d2 += (X[:, j][:, None] - Z[:, j][None, :]) ** 2
        return np.exp(-d2 / LD(params.get("sigma", 1.0)) ** 2)
    return None


def _mp_kernel(X, kernel: str, params: dict):
    """The same kernel in mpmath (the cross-check's own, independent of the longdouble one)."""
    n = X.shape[0]
    rows = [[mpmath.mpf(float(v)) for v in x] for x in X]
    K = mpmath.matrix(n, n)
    for i in range(n):
        for j in range(n):
            if kernel == "rbf":
                d2 = sum((a - b) ** 2 for a, b in zip(rows[i], rows[j]))
                K[i, j] = mpmath.exp(-d2 / mpmath.mpf(params.get("sigma", 1.0)) ** 2)
            else:
                dot = sum(a * b for a, b in zip(rows[i], rows[j]))
                K[i, j] = dot if kernel == "linear" else (1 + dot / mpmath.mpf(params.get("c", 1.0))) ** int(
                    params.get("d", 2))
    return K


# ------------------------------------------------------------------------------------------------ the duals
@dataclass
class Dual:
    """``min 1/2 beta'Q beta + p'beta`` s.t. ``s'beta = 0``, ``lo <= beta <= hi``, ``Q_tu = s_t s_u (K[t, u] +
    shift delta_tu)`` with pattern map ``pat`` (``t -> t mod N`` for the 2N variables of epsilon-SVR)."""

    name: str
    cite: str
    K: np.ndarray          # exact kernel (longdouble), N x N
    y: np.ndarray
    C: float
    s: np.ndarray
    p: np.ndarray
    lo: np.ndarray
    hi: np.ndarray
    shift: float
    pat: np.ndarray
    eps: float = 0.0

    @functools.cached_property
    def Q(self) -> np.ndarray:
        """``Q`` in extended precision (computed once)."""
        Kp = self.K[np.ix_(self.pat, self.pat)].copy()
        Kp[np.diag_indices_from(Kp)] += LD(self.shift)
        return (self.s[:, None] * Kp) * self.s[None, :]

    def objective(self, beta) -> float:
        """``D(beta) = 1/2 beta'Q beta + p'beta`` in extended precision."""
        b = np.asarray(beta, dtype=LD)
        return float(LD(0.5) * (b @ (self.Q @ b)) + self.p.astype(LD) @ b)

    def coef(self, beta) -> np.ndarray:
        """The expansion coefficients of ``g(x) = sum_i coef_i k(x_i, x)``: ``y * alpha`` (classification),
        ``alpha^+ - alpha^-`` (epsilon-SVR)."""
        b = np.asarray(beta, dtype=LD)
        n = self.K.shape[0]
        return b[:n] - b[n:] if self.name == "svr" else self.y.astype(LD) * b


def dual_data(name: str, K, y, C: float, eps: float = 0.0) -> Dual:
    """The dual of ``name`` as written in its paper, in the minimisation sign:

    * ``l1_svm``: 003 eq. (3), ``Q = YKY``, ``p = -1``, box ``[0, C]``;
    * ``least_1norm_svm``: 000 eq. (5), the same with box ``[-C, C]``;
    * ``l2_svm``: 000 §1 and Table 1 (dual of the squared-slack primal), ``K + I/C`` on ``[0, inf)``;
    * ``ls_svm``: 000 eq. (2), ``K + I/C``, alpha free (its KKT system is 000 eq. (7));
    * ``svr``: Vapnik's epsilon-SVR (002 recalls it), ``beta = [alpha^+; alpha^-]``, ``s = [1; -1]``,
      ``p = [eps - y; eps + y]``, box ``[0, C]``.
    """
    n = K.shape[0]
    y = np.asarray(y, dtype=float)
    one, inf = np.ones(n), np.full(n, np.inf)
    if name == "svr":
        return Dual(name, "epsilon-SVR dual", K, y, C, np.concatenate([one, -one]),
                    np.concatenate([eps - y, eps + y]), np.zeros(2 * n), np.full(2 * n, C), 0.0,
                    np.concatenate([np.arange(n), np.arange(n)]), eps)
    box = {"l1_svm": (0 * one, C * one, 0.0, "003 eq. (3)"),
           "least_1norm_svm": (-C * one, C * one, 0.0, "000 eq. (5)"),
           "l2_svm": (0 * one, inf, 1.0 / C, "000 §1, Table 1 (L2 dual)"),
           "ls_svm": (-inf, inf, 1.0 / C, "000 eq. (2)")}[name]
    return Dual(name, box[3], K, y, C, y.copy(), -one, box[0], box[1], box[2], np.arange(n))


def primal_value(d: Dual, beta, b: float) -> float:
    """The primal objective at ``W = sum coef_i Phi_i`` and bias ``b`` (extended precision), ``f = K coef + b``:
    003 eq. (2) ``1/2||W||^2 + C sum max(0, 1 - y f)``; 000 §1 (L2) ``+ C/2 sum max(0, 1 - y f)^2``;
    000 eq. (3) ``+ C sum |1 - y f|``; 000 eq. (1) ``+ C/2 sum (1 - y f)^2``; epsilon-SVR
    ``+ C sum max(0, |y - f| - eps)``. Weak duality: ``P + D >= 0``, so ``P + D`` bounds ``D - D*``."""
    c = d.coef(beta)
    g = d.K @ c
    f = g + LD(b)
    y, C = d.y.astype(LD), LD(d.C)
    r = 1 - y * f
    loss = {"l1_svm": lambda: C * np.sum(np.maximum(r, 0)),
            "l2_svm": lambda: C / 2 * np.sum(np.maximum(r, 0) ** 2),
            "least_1norm_svm": lambda: C * np.sum(np.abs(r)),
            "ls_svm": lambda: C / 2 * np.sum(r ** 2),
            "svr": lambda: C * np.sum(np.maximum(np.abs(y - f) - LD(d.eps), 0))}[d.name]()
    return float(LD(0.5) * (c @ g) + loss)


def primal_best(d: Dual, beta, b: float) -> float:
    """The smallest primal objective (:func:`primal_value`) over the bias at the ``W`` that ``beta`` defines:
    the loss is piecewise linear (L1, Least 1-Norm, epsilon-SVR: a minimum at a breakpoint ``y_i - g_i (+-eps)``)
    or piecewise quadratic (L2, LS: Brent's method between the breakpoints); ``b`` (the KKT bias) is a candidate
    too. ``P_best + D(beta)`` bounds ``D(beta) - D*`` more tightly than at any one b."""
    from scipy.optimize import minimize_scalar

    g = np.asarray(d.K @ d.coef(beta), dtype=float)
    brk = d.y - g
    if d.name == "svr":
        brk = np.concatenate([brk - d.eps, brk + d.eps])
    cands = [float(b), *np.unique(brk)]
    if d.name in ("l2_svm", "ls_svm"):
        lo, hi = float(np.min(brk)) - 1.0, float(np.max(brk)) + 1.0
        res = minimize_scalar(lambda t: primal_value(d, beta, t), bounds=(lo, hi), method="bounded",
                              options={"xatol": 1e-14 * max(1.0, abs(lo), abs(hi))})
        cands.append(float(res.x))
    return min(primal_value(d, beta, t) for t in cands)


def cvxpy_dual(d: Dual, factor: bool = False) -> tuple[cp.Problem, cp.Variable]:
    """The dual of :func:`dual_data` as a plain cvxpy problem (no svmref code): ``beta`` is the paper's alpha
    (003 eq. (3); 000 eqs. (2), (5); the L2 and epsilon-SVR duals as cited there).

    ``factor``: the quadratic term written as ``1/2 ||R beta||^2`` with ``Q = R'R`` from an eigendecomposition
    (negative round-off eigenvalues dropped), which ECOS needs; otherwise ``quad_form`` of the exact ``Q``."""
    m = d.s.size
    beta = cp.Variable(m, name="alpha")
    Q = np.asarray(d.Q, dtype=float)
    Q = 0.5 * (Q + Q.T)
    cons = [d.s @ beta == 0]
    cons += [beta >= d.lo] if np.all(np.isfinite(d.lo)) else []
    cons += [beta <= d.hi] if np.all(np.isfinite(d.hi)) else []
    if factor:
        w, V = np.linalg.eigh(Q)
        keep = w > 0
        quad = cp.sum_squares((V[:, keep] * np.sqrt(w[keep])).T @ beta)
    else:
        quad = cp.quad_form(beta, cp.psd_wrap(Q))
    return cp.Problem(cp.Minimize(0.5 * quad + d.p @ beta), cons), beta


# ------------------------------------------------------------------------------------------------ refinement
def _reduced_gradient(d: Dual, beta, b) -> np.ndarray:
    """``r = Q beta + p + b s`` (extended precision): 0 on the free set, >= 0 at a lower bound, <= 0 at an upper."""
    beta = np.asarray(beta, dtype=LD)
    return d.Q @ beta + d.p.astype(LD) + LD(b) * d.s.astype(LD)


def _solve_ld(A, rhs, steps: int = 6) -> np.ndarray:
    """``A x = rhs`` by LU in double, refined with residuals in extended precision (least squares if singular)."""
    A64 = np.asarray(A, dtype=float)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", sla.LinAlgWarning)
            lu = sla.lu_factor(A64, check_finite=False)
        inner = lambda r: sla.lu_solve(lu, r, check_finite=False)  # noqa: E731
    except (sla.LinAlgWarning, ValueError, np.linalg.LinAlgError):
        pinv = np.linalg.pinv(A64, rcond=1e-13)
        inner = lambda r: pinv @ r  # noqa: E731
    x = inner(np.asarray(rhs, dtype=float)).astype(LD)
    for _ in range(steps):
        res = rhs - A @ x
        x = x + inner(np.asarray(res, dtype=float)).astype(LD)
    return x


def _newton(d: Dual, state: np.ndarray, beta: np.ndarray) -> tuple[np.ndarray, float]:
    """The equality-constrained minimiser over the free set (``state == 0``), the others at their bounds (the
    KKT conditions of the box duals, 000 eq. (6): ``r_t = 0`` on the free set, ``b`` the multiplier of ``s'beta = 0``):
    ``Q_FF beta_F + b s_F = -(p_F + Q_FB beta_B)``, ``s_F'beta_F = -s_B'beta_B``; returns ``(beta, b)``."""
    Q, s, p = d.Q, d.s.astype(LD), d.p.astype(LD)
    beta = beta.astype(LD).copy()
    beta[state < 0] = d.lo[state < 0]
    beta[state > 0] = d.hi[state > 0]
    F, B = np.flatnonzero(state == 0), np.flatnonzero(state != 0)
    if F.size == 0:
        return beta, _b_interval(d, beta)[2]
    A = np.zeros((F.size + 1, F.size + 1), dtype=LD)
    A[:-1, :-1] = Q[np.ix_(F, F)]
    A[:-1, -1] = s[F]
    A[-1, :-1] = s[F]
    rhs = np.concatenate([-(p[F] + Q[np.ix_(F, B)] @ beta[B]), [-(s[B] @ beta[B])]])
    x = _solve_ld(A, rhs)
    beta[F] = x[:-1]
    return beta, float(x[-1])


def _b_interval(d: Dual, beta) -> tuple[float, float, float]:
    """``(b_lo, b_hi, b)``: the biases for which ``beta`` satisfies the sign conditions of 000 eq. (6) (``r_t >= 0`` where
    ``beta_t`` can increase, ``<= 0`` where it can decrease), and the midpoint or the free variables' mean."""
    beta = np.asarray(beta, dtype=LD)
    G = d.Q @ beta + d.p.astype(LD)
    up, down = beta < d.hi, beta > d.lo
    s = d.s
    lows = np.concatenate([-G[up & (s > 0)], G[down & (s < 0)]]).astype(float)
    highs = np.concatenate([-G[down & (s > 0)], G[up & (s < 0)]]).astype(float)
    blo = float(np.max(lows)) if lows.size else -np.inf
    bhi = float(np.min(highs)) if highs.size else np.inf
    free = up & down
    if np.any(free):
        return blo, bhi, float(np.mean(-G[free] * s[free]))
    mid = 0.5 * (blo + bhi) if np.isfinite(blo) and np.isfinite(bhi) else (blo if np.isfinite(blo) else bhi)
    return blo, bhi, float(mid)


def _kkt_residual(d: Dual, beta, b, state) -> float:
    """The largest KKT violation relative to the gradient's scale: ``|r_F|``, wrong signs at the bounds, ``|s'beta|``
    and the box, each over ``max |p| + max |Q beta|``."""
    r = _reduced_gradient(d, beta, b)
    scale = float(np.max(np.abs(d.p)) + np.max(np.abs(d.Q @ np.asarray(beta, dtype=LD))))
    viol = [np.abs(r[state == 0]), np.maximum(-r[state < 0], 0), np.maximum(r[state > 0], 0)]
    worst = max([float(np.max(v)) if v.size else 0.0 for v in viol])
    bscale = max(float(np.max(np.abs(beta))), np.finfo(float).tiny)
    feas = max(abs(float(d.s.astype(LD) @ np.asarray(beta, dtype=LD))),
               float(np.max(np.maximum(d.lo - beta, 0))), float(np.max(np.maximum(beta - d.hi, 0))))
    return max(worst / max(scale, np.finfo(float).tiny), feas / bscale)


def kkt_floor(d: Dual, beta, b) -> float:
    """The rounding floor of :func:`_kkt_residual` at ``(beta, b)``, in its units: how large the residual of an exact
    optimum can come out in this arithmetic. A sign condition violated by less cannot be told from rounding; a wrong
    active set violates by the size of its multipliers.

    Each ``r_t = sum_u Q_tu beta_u + p_t + b s_t`` is a sum of ``m + 2`` terms evaluated in ``LD``, so its rounding is
    at most ``gamma_{m+2} (sum_u |Q_tu beta_u| + |p_t| + |b s_t|)``, ``gamma_n = n u / (1 - n u)`` with ``u`` the unit
    roundoff of ``LD`` (Higham, *Accuracy and Stability of Numerical Algorithms*, 2nd ed., §3.1: ``2^-64`` for x86's
    extended format, ``2^-113`` where ``long double`` is IEEE quad, ``2^-53`` where it is double). ``b`` is carried in
    double, which adds ``u_64 |b s_t|``. The refinement (:func:`_solve_ld`) stops at a residual of that size where its
    double LU contracts (``u_64 cond < 1``; the proximal systems of :func:`refine_prox` have condition at most
    ``max Q_tt / rho``). The equality adds ``gamma_m sum_t |s_t beta_t|``. Both are divided by the scales of
    :func:`_kkt_residual`. On ``a-separable-huge-C`` for the Least 1-Norm SVM (30 points, C = 1e6: terms of 1e8
    cancel to a margin of order 1) this is 6e-10; OpenBLAS's SkylakeX kernels leave 2.9e-10 there and its Haswell
    kernels 2.6e-12, while the smallest multiplier, what a wrong active set would violate by, is 3e-3."""
    bl = np.asarray(beta, dtype=LD)
    m = d.s.size
    u = float(np.finfo(LD).eps) / 2
    gamma = lambda n: n * u / (1 - n * u)  # noqa: E731
    terms = np.abs(d.Q) @ np.abs(bl) + np.abs(d.p).astype(LD) + LD(abs(b)) * np.abs(d.s).astype(LD)
    r_floor = gamma(m + 2) * terms + np.finfo(float).eps / 2 * abs(b) * np.abs(d.s)
    scale = float(np.max(np.abs(d.p)) + np.max(np.abs(d.Q @ bl)))
    bscale = max(float(np.max(np.abs(bl))), np.finfo(float).tiny)
    feas_floor = gamma(m) * float(np.abs(d.s).astype(LD) @ np.abs(bl))
    return max(float(np.max(r_floor)) / max(scale, np.finfo(float).tiny), feas_floor / bscale)


def objective_floor(d: Dual, beta) -> float:
    """The rounding floor of ``D(beta)`` (:meth:`Dual.objective`) in ``LD``, relative to ``|D|``: ``gamma_{m+2}
    (1/2 |beta|'|Q||beta| + |p|'|beta|) / |D|`` (Higham §3.1, as in :func:`kkt_floor`). It also bounds the
    difference between ``Q`` in ``LD`` and the kernel recomputed exactly from X by :func:`_mp_check` (a few rounding
    errors of ``LD`` per entry, fewer than ``m + 2``)."""
    bl = np.abs(np.asarray(beta, dtype=LD))
    m = d.s.size
    u = float(np.finfo(LD).eps) / 2
    size = float(LD(0.5) * (bl @ (np.abs(d.Q) @ bl)) + np.abs(d.p).astype(LD) @ bl)
    return (m + 2) * u / (1 - (m + 2) * u) * size / max(abs(d.objective(beta)), np.finfo(float).tiny)


def _initial_state(d: Dual, beta0) -> np.ndarray:
    """-1 / +1 at the lower / upper bound (within 1e-7 of the smaller of the box's width and max |beta|), else 0."""
    big = max(float(np.max(np.abs(beta0))), np.finfo(float).tiny)
    near = 1e-7 * np.minimum(np.where(np.isfinite(d.hi - d.lo), d.hi - d.lo, big), big)
    state = np.zeros(beta0.size, dtype=int)
    state[beta0 - d.lo <= near] = -1
    state[d.hi - beta0 <= near] = 1
    return state


def _feasible_start(d: Dual, beta0) -> tuple[np.ndarray, np.ndarray]:
    """The conic solution clipped to the box, snapped to the bounds it is near, and ``s'beta = 0`` restored by
    moving the free variables (all variables if they cannot) in proportion to their room."""
    beta = np.clip(np.nan_to_num(np.asarray(beta0, dtype=float)), d.lo, d.hi)
    state = _initial_state(d, beta)
    beta = np.where(state < 0, d.lo, np.where(state > 0, d.hi, beta)).astype(LD)
    cap = LD(float(np.max(np.abs(beta))) + 1.0)
    for movable in (state == 0, np.ones_like(state, dtype=bool)):
        r = d.s.astype(LD) @ beta
        if r == 0:
            break
        down = np.where(d.s > 0, beta - d.lo, d.hi - beta)        # room to lower s'beta
        up = np.where(d.s > 0, d.hi - beta, beta - d.lo)          # room to raise it
        room = np.minimum(np.where(r > 0, down, up), cap) * movable
        total = np.sum(room)
        if total > 0:
            beta = beta - np.sign(r) * d.s * room * min(LD(1), abs(r) / total)
    return np.clip(beta, d.lo, d.hi), _initial_state(d, np.asarray(beta, dtype=float))


def _ratio(d: Dual, beta, step, free, cap: float) -> tuple[float, np.ndarray]:
    """The largest ``t <= cap`` keeping ``beta + t step`` in the box, and the free variables that block it."""
    with np.errstate(divide="ignore", invalid="ignore"):
        lim = np.where(step < 0, (d.lo - beta) / step, np.where(step > 0, (d.hi - beta) / step, np.inf))
    lim = np.where(free, lim, np.inf).astype(float)
    t = min(cap, float(np.min(lim))) if lim.size else cap
    return max(t, 0.0), free & (lim <= t * (1 + 1e-12))


def _direction(d: Dual, state, beta) -> tuple[np.ndarray, float, bool]:
    """``(step, b, newton)``: the Newton step to the minimiser on the free set when it does not increase ``D``;
    otherwise (the reduced Hessian is singular and the system inconsistent) the gradient projected onto the null
    space of ``[Q_FF; s_F']``, a descent direction of zero curvature, followed to the first bound."""
    target, b = _newton(d, state, beta)
    if d.objective(target) <= d.objective(beta) or not np.any(state == 0):
        return target - beta, b, True
    F = np.flatnonzero(state == 0)
    A = np.vstack([np.asarray(d.Q[np.ix_(F, F)], dtype=float), d.s[F][None, :]])
    _, sv, Vt = np.linalg.svd(A)
    null = Vt[np.sum(sv > 1e-12 * sv[0]):]
    G = np.asarray(d.Q @ beta + d.p, dtype=float)[F]
    u = np.zeros(beta.size, dtype=LD)
    u[F] = -(null.T @ (null @ G))
    if not np.any(u != 0):
        return target - beta, b, True
    return u, b, False


def refine(d: Dual, beta0, seconds: float = REFINE_SECONDS) -> tuple[np.ndarray, float, np.ndarray, float]:
    """The primal active-set method (Nocedal & Wright, Algorithm 16.3) from the conic solution: the Newton step
    to the equality-constrained minimiser on the free set (:func:`_newton`), cut at the first bound it meets
    (that variable joins the active set), or, when it is feasible, the variables whose sign condition fails
    leave the active set; it stops when none does (or after ``seconds``). Each step decreases ``D``.
    Returns ``(beta, b, state, kkt)``."""
    beta, state = _feasible_start(d, beta0)
    b = _b_interval(d, beta)[2]
    deadline = time.perf_counter() + seconds
    for _ in range(3 * d.s.size + 20):
        if time.perf_counter() > deadline:
            break
        step, b, newton = _direction(d, state, beta)
        free = state == 0
        t, block = _ratio(d, beta, step, free, 1.0 if newton else np.inf)
        if not np.isfinite(t):
            break  # no bound stops a descent direction of zero curvature: cannot happen for a bounded dual
        if t < 1.0 or not newton:
            beta = beta + LD(t) * step
            hit_lo = block & (np.abs(beta - d.lo) <= np.abs(beta - d.hi))
            state[hit_lo], state[block & ~hit_lo] = -1, 1
            beta = np.where(state < 0, d.lo, np.where(state > 0, d.hi, beta)).astype(LD)
            continue
        beta = beta + step
        r = _reduced_gradient(d, beta, b)
        tiny = 1e-12 * float(np.max(np.abs(d.p)) + np.max(np.abs(d.Q @ beta)))
        wrong = ((state < 0) & (r < -tiny)) | ((state > 0) & (r > tiny))
        if not np.any(wrong):
            break
        state[wrong] = 0
    return beta, b, state, _kkt_residual(d, beta, b, state)


def refine_prox(d: Dual, beta0, seconds: float = REFINE_SECONDS) -> tuple[np.ndarray, float, np.ndarray, float]:
    """The proximal point method (Rockafellar 1976) around :func:`refine`, for a reduced Hessian too
    ill-conditioned for extended precision (many free variables on a near-singular kernel at large C): step k
    minimises ``D(beta) + rho/2 ||beta - beta_k||^2`` (the same dual with ``shift + rho`` and ``p - rho beta_k``,
    whose Newton systems have condition at most ``max Q_tt / rho``), until the step stops changing beta."""
    rho = PROX_RHO * float(np.max(np.abs(np.diag(d.Q))))
    deadline = time.perf_counter() + seconds
    beta = np.clip(np.asarray(beta0, dtype=float), d.lo, d.hi)
    b, state = 0.0, _initial_state(d, beta)
    while time.perf_counter() < deadline:
        dk = dataclasses.replace(d, shift=d.shift + rho, p=d.p - rho * beta)
        new, b, state, _ = refine(dk, beta, max(deadline - time.perf_counter(), 0.0))
        new = np.asarray(new, dtype=float)
        done = float(np.max(np.abs(new - beta))) <= 1e-15 * max(float(np.max(np.abs(new))), np.finfo(float).tiny)
        beta = new
        if done:
            break
    beta = np.asarray(beta, dtype=LD)
    return beta, b, state, _kkt_residual(d, beta, b, state)


def _mp_check(d: Dual, state, X, kernel, params) -> float:
    """The KKT system of the final active set solved again in mpmath at :data:`MP_DPS` digits, on a kernel
    recomputed in mpmath: its dual objective (the second solver for small problems)."""
    with mpmath.workdps(MP_DPS):
        Kmp = _mp_kernel(np.asarray(X, dtype=float), kernel, params)
        m = d.s.size
        mp = lambda v: mpmath.mpf(float(v))  # noqa: E731
        Q = mpmath.matrix(m, m)
        for t in range(m):
            for u in range(m):
                Q[t, u] = mp(d.s[t] * d.s[u]) * (Kmp[int(d.pat[t]), int(d.pat[u])] + (mp(d.shift) if t == u else 0))
        beta = [mp(d.lo[t]) if state[t] < 0 else (mp(d.hi[t]) if state[t] > 0 else mpmath.mpf(0)) for t in range(m)]
        F = [t for t in range(m) if state[t] == 0]
        B = [t for t in range(m) if state[t] != 0]
        A = mpmath.matrix(len(F) + 1, len(F) + 1)
        rhs = mpmath.matrix(len(F) + 1, 1)
        for i, t in enumerate(F):
            for j, u in enumerate(F):
                A[i, j] = Q[t, u]
            A[i, len(F)] = A[len(F), i] = mp(d.s[t])
            rhs[i] = -(mp(d.p[t]) + sum(Q[t, u] * beta[u] for u in B))
        rhs[len(F)] = -sum(mp(d.s[u]) * beta[u] for u in B)
        x = mpmath.lu_solve(A, rhs) if F else []
        for i, t in enumerate(F):
            beta[t] = x[i]
        D = sum(beta[t] * Q[t, u] * beta[u] for t in range(m) for u in range(m)) / 2 + sum(
            mp(d.p[t]) * beta[t] for t in range(m))
        return float(D)


@dataclass
class Optimum:
    """The independent optimum: ``beta`` (extended precision), ``b`` and its interval, ``objective`` ``D*``,
    ``gap`` (relative ``P + D``), ``kkt``, the second solver's name and relative ``agreement``, ``unique``."""

    beta: np.ndarray
    b: float
    b_lo: float
    b_hi: float
    objective: float
    gap: float
    kkt: float
    second: str
    agreement: float
    unique: bool
    g: np.ndarray = field(repr=False, default=None)      # g* on training + held-out points
    scale: float = 1.0                                    # the unit of f: 1 (margins), max |y| (SVR)
    time: float = 0.0
    kkt_floor: float = 0.0                                # the rounding floor of kkt (:func:`kkt_floor`)
    objective_floor: float = 0.0                          # the rounding floor of D (:func:`objective_floor`)

    @property
    def active_set_solved(self) -> bool:
        """Whether the optimal active set was solved again in mpmath: the sign conditions hold to their rounding floor
        (:func:`kkt_floor`) and the 50-digit solve of that set is the second solver."""
        return self.second == "mpmath KKT" and self.kkt <= self.kkt_floor

    @property
    def uncertainty(self) -> float:
        """How far the optimum itself may be off, relative: its duality gap (weak duality makes it a bound; ECOS's
        agreement is reported beside it, and tested, but a conic solver's own error at large C would only blur the
        bound); where the optimal active set was solved again in mpmath (:attr:`active_set_solved`), that value is
        ``D*`` and only the round-off of double inputs remains (:data:`MP_FLOOR`)."""
        if self.active_set_solved:
            return MP_FLOOR
        return abs(self.gap) if math.isfinite(self.gap) else float("inf")


def independent_optimum(case) -> Optimum | None:
    """CLARABEL on the plain cvxpy dual, the active-set refinement, the certificate and the second solver;
    ``None`` for a kernel that is not PSD (no convex problem to be optimal for)."""
    t0 = time.perf_counter()
    d = case.dual
    if d is None:
        return None
    prob, beta_v = cvxpy_dual(d)
    beta, b, state, kkt = refine(d, _conic_start(prob, beta_v))
    D = d.objective(beta)
    gap = (primal_best(d, beta, b) + D) / abs(D) if D != 0 else float("nan")
    if not abs(gap) <= 1e-13:  # not resolved in extended precision: the proximal point fallback
        found = refine_prox(d, beta)
        D2 = d.objective(found[0])
        gap2 = (primal_best(d, found[0], found[1]) + D2) / abs(D2) if D2 != 0 else float("nan")
        if abs(gap2) < abs(gap):
            (beta, b, state, kkt), D, gap = found, D2, gap2
    blo, bhi, _ = _b_interval(d, beta)
    second, agree, D2 = _second_solver(case, d, state, D)
    floors = kkt_floor(d, beta, b), objective_floor(d, beta)
    if second == "mpmath KKT" and kkt <= floors[0]:
        D = D2  # the same optimal active set solved at 50 digits: the more precise value of D*
    Kx = case.exact_cross()
    g = (Kx @ d.coef(beta)).astype(float)
    scale = float(np.max(np.abs(d.y))) if d.name == "svr" else 1.0  # margin units; the targets' units for SVR
    A = d.Q[np.ix_(state == 0, state == 0)].astype(float)
    unique = case.unique and (A.size == 0 or np.linalg.matrix_rank(A) == A.shape[0])
    return Optimum(np.asarray(beta, dtype=LD), b, blo, bhi, D, gap, kkt, second, agree, unique, g, scale,
                   time.perf_counter() - t0, *floors)


def _conic_start(prob: cp.Problem, beta_v: cp.Variable) -> np.ndarray:
    """CLARABEL at :data:`CLARABEL_OPTS`, or at looser tolerances (1e-10 ... 1e-6) where it stops for lack of
    progress, else zeros: only the start of :func:`refine`, which decides the optimum by the KKT conditions."""
    ladder = [CLARABEL_OPTS] + [dict(CLARABEL_OPTS, tol_gap_abs=t, tol_gap_rel=t, tol_feas=t) for t in (1e-10, 1e-8, 1e-6)]
    for opts in ladder:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                prob.solve(solver="CLARABEL", **opts)
            except cp.error.SolverError:
                continue
        if beta_v.value is not None:
            return np.asarray(beta_v.value, dtype=float)
    return np.zeros(beta_v.shape)


def _second_solver(case, d: Dual, state, D) -> tuple[str, float, float]:
    """The second solver's name, its relative agreement with ``D`` and its objective: the mpmath KKT solve for
    small problems (ECOS when that system is singular: the optimal alpha is not unique), ECOS otherwise."""
    if d.s.size <= MP_MAX_M and case.kernel in ("linear", "rbf", "poly"):
        try:
            Dmp = _mp_check(d, state, case.X, case.kernel, case.params)
            return "mpmath KKT", abs(Dmp - D) / abs(D), Dmp
        except ZeroDivisionError:
            pass
    prob, _ = cvxpy_dual(d, factor=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            prob.solve(solver="ECOS", **ECOS_OPTS)
        except (cp.error.SolverError, ValueError):
            return "ECOS (failed)", float("nan"), float("nan")
    if prob.value is None:
        return f"ECOS ({prob.status})", float("nan"), float("nan")
    return "ECOS", abs(float(prob.value) - D) / abs(D), float(prob.value)


# ------------------------------------------------------------------------------------------------ the cases
@dataclass
class Case:
    """One problem: data, kernel, formulation and hyperparameters; ``K`` is the library's kernel (what a user
    hands the tools), ``dual`` the independent dual on the exact kernel."""

    name: str
    formulation: str
    X: np.ndarray
    y: np.ndarray
    X_test: np.ndarray
    kernel: str
    params: dict
    C: float
    eps: float = 0.0
    unique: bool = True
    source: str = "named"
    instance: object = None
    _dual: object = None

    @property
    def K(self) -> np.ndarray:
        if self.instance is not None:
            return self.instance.K
        from svmref.kernels import kernel_matrix
        return kernel_matrix(self.X, None, kernel=self.kernel, **self.params)

    @property
    def dual(self) -> Dual | None:
        if self._dual is None:
            Ke = exact_kernel(self.X, self.X, self.kernel, self.params)
            if Ke is None or np.min(np.linalg.eigvalsh(Ke.astype(float))) < -1e-9 * np.max(np.abs(Ke.astype(float))):
                return None
            self._dual = dual_data(self.formulation, Ke, self.y, self.C, self.eps)
        return self._dual

    def exact_cross(self) -> np.ndarray:
        """The exact kernel between the training and held-out points (rows) and the training points."""
        return exact_kernel(np.vstack([self.X, self.X_test]), self.X, self.kernel, self.params)

    def verify_instance(self):
        from svmref.verify import Instance

        if self.instance is None:
            hyper = {"C": self.C, **({"epsilon": self.eps} if self.formulation == "svr" else {})}
            self.instance = Instance(self.name, self.X, self.y, self.X_test, self.kernel, dict(self.params), hyper,
                                     self.unique, f"labels benchmark: {self.name}")
        return self.instance


def _gaussians(seed: int, n: int, d: int = 2, shift: float = 2.0, n_test: int = 20):
    rng = np.random.default_rng(seed)
    y = np.where(np.arange(n + n_test) % 2 == 0, 1.0, -1.0)
    X = rng.standard_normal((n + n_test, d)) + 0.5 * shift * y[:, None] / np.sqrt(d)
    return X[:n], y[:n], X[n:]


def _two_vs_300(seed: int = 5):
    """2 positives inside a cloud of 300 negatives (2-D): the hard Least 1-Norm problem."""
    rng = np.random.default_rng(seed)
    Xn = rng.standard_normal((300, 2))
    Xp = np.array([[0.5, 0.5], [-0.3, 0.8]]) + 0.1 * rng.standard_normal((2, 2))
    X = np.vstack([Xp, Xn])
    y = np.concatenate([np.ones(2), -np.ones(300)])
    return X, y, rng.standard_normal((20, 2))


def _offset(seed: int = 7, n: int = 60):
    """A raw-timestamp feature (1.7e9, spread 50) beside a standard one: the RBF kernel's cancellation case."""
    rng = np.random.default_rng(seed)
    t = rng.normal(0.0, 50.0, n + 20)
    v = rng.standard_normal(n + 20)
    y = np.where(t / 50.0 + 0.5 * v + 0.3 * rng.standard_normal(n + 20) > 0, 1.0, -1.0)
    X = np.column_stack([1.7e9 + t, v])
    return X[:n], y[:n], X[n:]


def named_cases(quick: bool) -> list[Case]:
    """The named cases where labels were found stronger than their evidence (tiny objectives, the hard Least
    1-Norm problem, LS-SVM at C = 1e6, offset features); the adversarial suite brings large and tiny C,
    duplicates, separable data and sigma -> 0, inf."""
    out = [
        Case("tiny-l1n-linear-C1e-6", "least_1norm_svm", *_gaussians(1, 100), "linear", {}, 1e-6),
        Case("tiny-l2-N4-C1e-6", "l2_svm", *_gaussians(2, 4), "linear", {}, 1e-6),
        Case("tiny-l1-rbf-C1e-7", "l1_svm", *_gaussians(3, 50), "rbf", {"sigma": 1.0}, 1e-7),
        Case("hard-l1n-2v300-C1e3", "least_1norm_svm", *_two_vs_300(), "rbf", {"sigma": 0.5}, 1e3),
        Case("ls-rbf-C1e6", "ls_svm", *_gaussians(4, 60), "rbf", {"sigma": 1.0}, 1e6),
        Case("offset-l1-rbf", "l1_svm", *_offset(), "rbf", {"sigma": 50.0}, 1.0),
    ]
    if not quick:
        out += [Case("hard-l1n-2v300-C1e6", "least_1norm_svm", *_two_vs_300(), "rbf", {"sigma": 0.5}, 1e6),
                Case("offset-l1n-rbf", "least_1norm_svm", *_offset(), "rbf", {"sigma": 50.0}, 1.0),
                Case("offset-ls-rbf", "ls_svm", *_offset(), "rbf", {"sigma": 50.0}, 1.0)]
    return out


def adversarial_cases(formulations) -> list[Case]:
    """verify's adversarial suite (``svmref verify --suite adversarial``) for each formulation."""
    from svmref.verify import suite

    out = []
    for f in formulations:
        for inst in suite("adversarial", f):
            out.append(Case(f"{inst.name}", f, inst.X, inst.y, inst.X_test, inst.kernel, dict(inst.kernel_params),
                            float(inst.hyper["C"]), float(inst.hyper.get("epsilon", 0.0)), inst.unique, "adversarial",
                            inst))
    return out


# ------------------------------------------------------------------------------------------------ true errors
def fp_floor(d: Dual, beta) -> float:
    """The floor of evaluating ``D`` in double, relative: ``16 eps sqrt(m) (|1/2 beta'Q beta| + |p'beta|) / |D|``
    (the size of the rounding of each term; no claim below it can be checked)."""
    b = np.asarray(beta, dtype=LD)
    quad, lin = abs(float(LD(0.5) * (b @ (d.Q @ b)))), abs(float(d.p.astype(LD) @ b))
    D = d.objective(beta)
    return 16 * np.finfo(float).eps * math.sqrt(d.s.size) * (quad + lin) / max(abs(D), np.finfo(float).tiny)


def answer_errors(case: Case, opt: Optimum, beta, b, objective=None) -> dict:
    """The true errors of an answer ``(beta, b)`` (and of a reported ``objective``) against the optimum:
    ``obj``, ``dec``, ``b``, ``feas`` (``|s'beta|`` and the box, over ``max |beta*|``) and ``max``."""
    d = case.dual
    beta = np.asarray(beta, dtype=LD)
    D = d.objective(beta)
    obj = abs(D - opt.objective) / abs(opt.objective)
    if objective is not None and math.isfinite(objective):
        obj = max(obj, abs(objective - opt.objective) / abs(opt.objective))
    g = (case.exact_cross() @ d.coef(beta)).astype(float)
    dec = float(np.max(np.abs(g - opt.g))) / opt.scale
    lo, hi = min(opt.b_lo, opt.b_hi, opt.b), max(opt.b_lo, opt.b_hi, opt.b)
    berr = float("nan") if b is None or not math.isfinite(b) else max(0.0, lo - b, b - hi) / opt.scale
    bs = max(float(np.max(np.abs(opt.beta))), np.finfo(float).tiny)
    feas = (abs(float(d.s.astype(LD) @ beta)) + float(np.max(np.maximum(d.lo - beta, 0)))
            + float(np.max(np.maximum(beta - d.hi, 0)))) / bs
    out = {"obj": float(obj), "dec": dec, "b": berr, "feas": feas}
    out["max"] = max(v for v in out.values() if math.isfinite(v))
    # alpha itself (not in "max": only where the optimal alpha is unique), relative to max |alpha*|
    out["alpha"] = float(np.max(np.abs(beta - opt.beta))) / bs if opt.unique else float("nan")
    return out


def _beta_of(case: Case, values: dict):
    """The box variables of an answer: ``alpha`` (classification) or ``[alpha^+; alpha^-]`` (epsilon-SVR; split
    from ``alpha = alpha^+ - alpha^-`` by sign where only the difference is given)."""
    if case.formulation != "svr":
        return values["alpha"]
    if "alpha_plus" in values and "alpha_minus" in values:
        return np.concatenate([values["alpha_plus"], values["alpha_minus"]])
    a = np.asarray(values["alpha"], dtype=float)
    return np.concatenate([np.maximum(a, 0.0), np.maximum(-a, 0.0)])


def _says_optimal(status) -> bool:
    """``"optimal"``, or ``"optimal (...)"``: the SMO's claim (``optimal_inaccurate`` and the rest are not)."""
    return isinstance(status, str) and (status == "optimal" or status.startswith("optimal ("))


@dataclass
class Row:
    """One (case, tool) measurement: its ``label``, whether the label is a ``claim``, the ``bound`` it claims,
    the true ``errors``, ``violated``, and notes."""

    case: str
    formulation: str
    tool: str
    label: str
    claim: bool = False
    bound: float | None = None
    errors: dict = field(default_factory=dict)
    violated: bool = False
    note: str = ""
    T: float | None = None
    strict: bool = False
    reason: str = ""
    unresolved: bool = False
    lenient_advice: bool = False
    advice: float | None = None

    def judge(self, err: float, slack: float) -> None:
        """A claim with a stated bound is violated when the true error exceeds it (plus ``slack``, the optimum's
        own uncertainty and the floating-point floor); it is unresolved when ``slack`` exceeds the bound."""
        if self.claim and self.bound is not None and math.isfinite(self.bound) and math.isfinite(err):
            self.violated = err > self.bound * (1 + 1e-6) + slack
            self.unresolved = not self.violated and slack > self.bound


def _reference_tol() -> float:
    """The reference's default certification tol (when a solution does not say which it used); nan if unknown."""
    try:
        from svmref.formulations.reference import DEFAULT_TOL
    except ImportError:
        return float("nan")
    return float(DEFAULT_TOL)


def run_reference(case: Case, opt: Optimum | None, solve=None, form: str = "dual") -> Row:
    """``svmref.formulations.solve`` (or ``solve``) on the dual (or the primal): its label (certified at its tol,
    or the error it raised) and its true errors (the dual: its reported objective and its alpha on the exact
    kernel, its b; the primal: its objective against ``p* = -D*`` and its b)."""
    import svmref.formulations as F

    solve = F.solve if solve is None else solve
    row = Row(case.name, case.formulation, "reference" if form == "dual" else f"reference ({form})", "")
    kw = {"epsilon": case.eps} if case.formulation == "svr" else {}
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            sol = solve(getattr(F.get(case.formulation), form)(case.K, case.y, C=case.C, **kw))
    except Exception as exc:  # noqa: BLE001 - a refusal is a label too
        row.label = f"raised {type(exc).__name__}"
        row.note = str(exc).splitlines()[0][:300]
        return row
    res = dict(getattr(sol, "residuals", None) or {})
    tol = float((getattr(sol, "certificate", None) or {}).get("tol", _reference_tol()))
    floor = max([float(res.get(k, 0.0) or 0.0) for k in ("rel_floor", "floor", "abs_floor_rel")] + [0.0])
    row.label = ("certified" if sol.certified else "not certified") + f" ({sol.status})"
    row.claim, row.bound = bool(sol.certified), (tol + floor if sol.certified else None)
    row.note = "; ".join(sorted({c.category.__name__ for c in caught}))
    if opt is None:
        row.violated = row.claim  # certified on a problem that is not convex
        return row
    if form == "dual":
        b = res.get("b")
        row.errors = answer_errors(case, opt, _beta_of(case, sol.values), None if b is None else float(b), sol.objective)
    else:
        row.errors = _primal_errors(opt, sol)
    row.judge(row.errors["obj"], opt.uncertainty + fp_floor(case.dual, opt.beta))
    return row


def _primal_errors(opt: Optimum, sol) -> dict:
    """A primal solution's true errors: ``|p - p*| / |p*|`` with ``p* = -D*`` (strong duality, the duals here
    being minimisations) and the distance of its b from the optimal interval, in the units of f."""
    obj = abs(-float(sol.objective) - opt.objective) / abs(opt.objective)
    b = sol.values.get("b") if isinstance(getattr(sol, "values", None), dict) else None
    lo, hi = min(opt.b_lo, opt.b_hi, opt.b), max(opt.b_lo, opt.b_hi, opt.b)
    berr = float("nan") if b is None else max(0.0, lo - float(b), float(b) - hi) / opt.scale
    out = {"obj": obj, "dec": float("nan"), "b": berr, "feas": float("nan")}
    out["max"] = max(v for v in out.values() if math.isfinite(v))
    out["alpha"] = float("nan")
    return out


#: Names under which the SMO's result, or its module, may state the bound that "optimal" promises.
BOUND_NAMES = ("optimal_bound", "gap_bound", "rel_gap_bound", "optimality_bound", "bound", "gap_tol", "optimal_gap")


def smo_bound(res) -> tuple[float | None, str]:
    """The bound the SMO's "optimal" promises, read where it is stated (the result, its ``info``, or a
    module constant of :mod:`svmref.solvers.smo`), and where it was found; ``(None, "?")`` when none is."""
    from svmref.solvers import smo

    for name in BOUND_NAMES:
        v = getattr(res, name, None)
        if v is None and isinstance(getattr(res, "info", None), dict):
            v = res.info.get(name)
        if isinstance(v, (int, float)) and math.isfinite(v):
            return float(v), f"result.{name}"
    for name in dir(smo):
        v = getattr(smo, name)
        if name.isupper() and "GAP" in name and ("OPTIMAL" in name or "BOUND" in name) and isinstance(v, float):
            return v, f"smo.{name}"
    return None, "?"


def run_smo(case: Case, opt: Optimum | None, solver=None) -> tuple[Row, tuple | None]:
    """The SMO at its default tol (``svmref.solvers.smo.<formulation>``, or ``solver``): status, reported gap,
    warnings, true error; and its answer ``(beta, b)``."""
    from svmref.solvers import smo

    solver = getattr(smo, case.formulation) if solver is None else solver
    row = Row(case.name, case.formulation, "SMO", "")
    kw = {"epsilon": case.eps} if case.formulation == "svr" else {}
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            res = solver(case.K, case.y, case.C, **kw)
    except Exception as exc:  # noqa: BLE001
        row.label, row.note = f"raised {type(exc).__name__}", str(exc).splitlines()[0][:300]
        return row, None
    gap = getattr(res, "duality_gap", None)
    warned = sorted({c.category.__name__ for c in caught})
    row.label = res.status + ("" if gap is None else f" (gap {gap:.1e})")
    row.note = ", ".join(warned)
    beta = _beta_of(case, {"alpha": res.alpha, **res.info}) if case.formulation == "svr" else res.alpha
    if opt is None:
        row.violated = _says_optimal(res.status)
        return row, (beta, res.b)
    row.errors = answer_errors(case, opt, beta, res.b, res.objective)
    floor = getattr(res, "gap_floor", None)
    slack = opt.uncertainty + max(fp_floor(case.dual, beta), floor if isinstance(floor, float) and floor > 0 else 0.0)
    bound, where = smo_bound(res)
    if _says_optimal(res.status):
        row.claim, row.bound = True, bound
        row.note = (row.note + f"; bound {where}").strip("; ")
        row.judge(row.errors["obj"], slack)
    if gap is not None and math.isfinite(gap) and row.errors["obj"] > gap * (1 + 1e-6) + slack:
        row.violated = True
        row.note = (row.note + "; reported gap below the true error").strip("; ")
    return row, (beta, res.b)


# ------------------------------------------------------------------------------------------------ verify
def _answer_alpha(case: Case, beta) -> np.ndarray:
    """What verify reads as alpha: the box variables, or ``alpha^+ - alpha^-`` for epsilon-SVR."""
    beta = np.asarray(beta, dtype=float)
    n = case.X.shape[0]
    return beta[:n] - beta[n:] if case.formulation == "svr" else beta


def perturbed_answers(case: Case, opt: Optimum, T: float, seed: int = 0) -> list[tuple[str, np.ndarray, float]]:
    """Answers a tool might return, each ``(name, beta, b)``: the exact alpha with b off by ``OFF T`` (in the units of
    f, beyond the optimal interval); alpha moved on the free set (``s'beta = 0`` kept) so that the decision values
    are off by up to ``OFF T`` (:data:`OFF`); and the interior-point answers, each variable at a bound moved
    ``1e-5 C`` and ``1e-8 C`` inside it (:data:`INTERIOR`)."""
    d = case.dual
    beta = np.asarray(opt.beta, dtype=float)
    hi = max(opt.b_lo, opt.b_hi, opt.b)
    out = [(f"b off {OFF * T:.1e}", beta, hi + OFF * T * opt.scale)]
    free = np.flatnonzero((beta > d.lo) & (beta < d.hi))
    if free.size >= 2:
        v = np.random.default_rng(seed).standard_normal(free.size)
        v -= d.s[free] * (d.s[free] @ v) / free.size
        step = np.zeros_like(beta)
        step[free] = v
        dg = np.max(np.abs((case.exact_cross() @ d.coef(step)).astype(float)))
        t = OFF * T * opt.scale / dg if dg > 0 else 0.0
        room = np.min(np.where(step[free] > 0, (d.hi[free] - beta[free]) / np.abs(step[free] + 1e-300),
                               (beta[free] - d.lo[free]) / np.abs(step[free] + 1e-300)))
        out.append((f"f off {OFF * T:.1e}", beta + min(t, 0.999 * room) * step, opt.b))
    at = (beta <= d.lo) | (beta >= d.hi)
    if np.any(at):
        out += [(f"interior {frac:.0e} C", _interior(d, beta, free, frac * case.C), opt.b) for frac in INTERIOR]
    return out


def _interior(d: Dual, beta, free, delta: float) -> np.ndarray:
    """An interior-point style answer (as cvxopt leaves it): each variable at a bound moved ``delta`` inside it,
    ``s'beta = 0`` restored on the free variables."""
    inner = beta.copy()
    inner[beta <= d.lo] += delta
    inner[beta >= d.hi] -= delta
    if free.size:
        inner[free] -= d.s[free] * (d.s @ inner) / free.size
    return inner


def _fixed(alpha, b):
    """A solver that returns a fixed answer, whatever it is given (verify's contract: ``f(K, y, C, **kw)``)."""

    def solver(K, y, C, **kw):
        return np.array(alpha, dtype=float), float(b)

    return solver


def run_verify(case: Case, opt: Optimum | None, smo_answer, check=None) -> list[Row]:
    """``svmref.verify.check`` (or ``check``) at each T of :data:`VERIFY_TOLS` on the SMO's answer (default tol)
    and on the perturbed answers: the verdict, the advice (``would_pass_at_tol``) and the answer's true error."""
    if check is None:
        from svmref.verify import check

    if opt is None:
        return []
    inst = case.verify_instance()

    def verdict(beta, b, T, name):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return check(_fixed(_answer_alpha(case, beta), b), case.formulation, [inst], tol=T, name=name).records[0]

    rows = []
    for T in VERIFY_TOLS:
        answers = ([("SMO default tol", np.asarray(smo_answer[0], dtype=float), smo_answer[1])] if smo_answer else [])
        for name, beta, b in answers + perturbed_answers(case, opt, T):
            row = _verify_row(case, opt, name, beta, b, T, verdict(beta, b, T, name))
            advice = row.advice
            if advice is not None and 0 < advice < 1 and not str(verdict(beta, b, advice, name).verdict).startswith("pass"):
                row.lenient_advice = True  # the advice, re-checked, does not pass
                row.note += f" (!: fails at {advice:.0e})"
            rows.append(row)
    return rows


def _verify_row(case: Case, opt: Optimum, name: str, beta, b, T: float, rec) -> Row:
    """One verify verdict judged: a pass above its true error is violated; a fail of an answer whose every error
    (alpha too, where unique) is under ``T/10`` is a false fail; advice (``would pass at T'``) is lenient when the
    true error exceeds ``T'`` or ``T' >= 1`` (the CLI refuses it), or (:func:`run_verify`) when re-checked at ``T'``
    it does not pass. The true error is that of the answer verify
    sees (epsilon-SVR: ``alpha^+ - alpha^-`` only, split by sign, the best ``beta`` for it)."""
    err = answer_errors(case, opt, _beta_of(case, {"alpha": _answer_alpha(case, beta)}), b)
    advice = getattr(rec, "would_pass_at_tol", None)
    passed = str(rec.verdict).startswith("pass")
    row = Row(case.name, case.formulation, f"verify: {name}", rec.verdict, passed, T, err, T=T)
    row.advice = advice
    row.lenient_advice = advice is not None and (advice >= 1 or err["max"] > advice * (1 + 1e-6) + opt.uncertainty)
    row.note = "" if advice is None else f"would pass at {advice:.0e}" + (" (!: lenient)" if row.lenient_advice else "")
    row.judge(err["max"], opt.uncertainty + fp_floor(case.dual, beta))
    row.strict = rec.verdict == "fail" and max(err["max"], np.nan_to_num(err["alpha"])) <= 0.1 * T
    row.reason = getattr(rec, "reason", "")
    return row


# ------------------------------------------------------------------------------------------------ the table
_COMPUTE = object()


def measure(case: Case, primal: bool = True, opt=_COMPUTE) -> tuple[Optimum | None, list[Row]]:
    """All rows of one case: the independent optimum (computed here unless given as ``opt``), then the reference
    (dual), the SMO, the reference (primal, unless ``primal`` is false) and verify."""
    opt = independent_optimum(case) if opt is _COMPUTE else opt
    ref = run_reference(case, opt)
    smo_row, answer = run_smo(case, opt)
    extra = [run_reference(case, opt, form="primal")] if primal else []
    return opt, [ref, smo_row, *extra, *run_verify(case, opt, answer)]


def _e(x) -> str:
    return "-" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:.1e}"


def _err(row: Row, alpha: bool = False) -> str:
    """``obj / dec / b`` (and ``/ alpha``) of a row's true errors; ``-`` where not defined (alpha* not unique)."""
    e = row.errors
    if not e:
        return "n/a"
    return f"{_e(e['obj'])} / {_e(e['dec'])} / {_e(e['b'])}" + (f" / {_e(e.get('alpha'))}" if alpha else "")


def _flag(row: Row) -> str:
    if row.violated:
        return "**VIOLATED**"
    if row.strict:
        return "false fail"
    if row.unresolved:
        return "unresolved"
    if row.claim and (row.bound is None or not math.isfinite(row.bound)):
        return "bound ?"
    return "ok" if row.claim else ""


def table(results: list[tuple[Case, Optimum | None, list[Row]]]) -> str:
    """The markdown table of the cases: the optimum, the reference (dual; primal), the SMO: label and true error."""
    lines = ["| case | formulation | N | C | D* | optimum check (gap, 2nd solver) | reference (dual): label | true err "
             "obj/dec/b/α | reference (primal): label, true err obj/b | SMO (tol 1e-3): label | true err obj/dec/b/α "
             "| flags |", "|" + "---|" * 12]
    for case, opt, rows in results:
        ref, smo_row, prim = rows[0], rows[1], _tool(rows, "reference (primal)")
        chk = "not convex" if opt is None else f"{_e(opt.gap)}, {opt.second} {_e(opt.agreement)}"
        flags = "; ".join(f"{r.tool}: {_flag(r)}" for r in (ref, prim, smo_row) if r is not None and _flag(r))
        p = "-" if prim is None else f"{prim.label}, " + (
            f"{_e(prim.errors['obj'])} / {_e(prim.errors['b'])}" if prim.errors else "n/a")
        lines.append(f"| {case.name} | {case.formulation} | {case.X.shape[0]} | {case.C:g} | "
                     f"{'-' if opt is None else f'{opt.objective:.10g}'} | {chk} | {ref.label} | {_err(ref, True)} | "
                     f"{p} | {smo_row.label} | {_err(smo_row, True)} | {flags} |")
    return "\n".join(lines)


def _tool(rows: list[Row], tool: str) -> Row | None:
    return next((r for r in rows if r.tool == tool), None)


def _verify_only(rows: list[Row]) -> list[Row]:
    return [r for r in rows if r.tool.startswith("verify: ")]


def verify_rows(results) -> str:
    """Every verify verdict: case, answer, T, verdict, advice, true errors, flag."""
    lines = ["| case | formulation | answer | T | verdict | advice | true err obj/dec/b | flag |", "|" + "---|" * 8]
    for case, _, rows in results:
        for r in _verify_only(rows):
            lines.append(f"| {case.name} | {case.formulation} | {r.tool[len('verify: '):]} | {r.T:.0e} | {r.label} | "
                         f"{r.note} | {_err(r)} | {_flag(r)} |")
    return "\n".join(lines)


#: The kinds of verify answers, in the compact table's column order.
ANSWERS = ("SMO default tol", "b off", "f off", "interior 1e-05 C", "interior 1e-08 C")


def _cell(rows: list[Row]) -> str:
    """``verdict true-error`` at each T (``!`` violated, ``?`` lenient advice, ``x`` false fail)."""
    out = []
    for r in rows:
        mark = "!" if r.violated else ("x" if r.strict else ("?" if r.lenient_advice else ""))
        out.append(f"{r.label}{mark} {_e(r.errors.get('max'))}")
    return " · ".join(out) if out else "-"


def verify_summary(results) -> str:
    """One row per case: for each answer, its verdict and true error at T = 1e-3 · 1e-6."""
    lines = ["| case | formulation | " + " | ".join(f"verify: {a} (T = 1e-3 · 1e-6)" for a in ANSWERS) + " |",
             "|" + "---|" * (2 + len(ANSWERS))]
    for case, opt, rows in results:
        if opt is None:
            continue
        cells = [_cell([r for r in _verify_only(rows) if r.tool[len("verify: "):].startswith(a)]) for a in ANSWERS]
        lines.append(f"| {case.name} | {case.formulation} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def violations(results) -> list[Row]:
    return [r for _, _, rows in results for r in rows if r.violated]


def cases(quick: bool) -> list[Case]:
    return named_cases(quick) + adversarial_cases(FORMULATIONS[:3] if quick else FORMULATIONS)


def run(quick: bool, progress=None) -> list[tuple[Case, Optimum | None, list[Row]]]:
    out = []
    for case in cases(quick):
        t0 = time.perf_counter()
        opt, rows = measure(case, primal=not quick or case.X.shape[0] <= QUICK_PRIMAL_MAX_N)
        out.append((case, opt, rows))
        if progress is not None:
            progress(f"{case.name} ({case.formulation}): {time.perf_counter() - t0:.1f} s")
    return out


def _record(case: Case, opt: Optimum | None, r: Row) -> dict:
    optimum = None if opt is None else {"objective": opt.objective, "gap": opt.gap, "kkt": opt.kkt,
                                        "kkt_floor": opt.kkt_floor, "second": opt.second, "agreement": opt.agreement,
                                        "b": [opt.b_lo, opt.b_hi], "scale": opt.scale}
    return {"case": case.name, "formulation": case.formulation, "source": case.source, "tool": r.tool, "T": r.T,
            "label": r.label, "claim": r.claim, "bound": r.bound, "errors": r.errors, "violated": r.violated,
            "unresolved": r.unresolved, "false_fail": r.strict, "lenient_advice": r.lenient_advice, "note": r.note,
            "reason": r.reason, "optimum": optimum}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="the cheap cases and three formulations' adversarial suite")
    ap.add_argument("--json", help="write every row as JSON records to this file")
    ap.add_argument("--rows", action="store_true", help="also print every verify verdict as its own row")
    args = ap.parse_args(argv)
    t0 = time.perf_counter()
    with threadpool_limits(1):
        results = run(args.quick, progress=lambda s: print(s, file=sys.stderr, flush=True))
    print(table(results))
    print()
    print(verify_summary(results))
    if args.rows:
        print()
        print(verify_rows(results))
    bad = violations(results)
    print(f"\nviolations: {len(bad)} of {sum(len(r) for _, _, r in results)} rows "
          f"({time.perf_counter() - t0:.0f} s)")
    for r in bad:
        print(f"  {r.case} ({r.formulation}) {r.tool}: {r.label} but true error {_err(r)} (bound {_e(r.bound)})")
    strict = [r for _, _, rows in results for r in rows if r.strict]
    print(f"false fails (verify fails an answer whose true error is under T/10; not counted above): {len(strict)}")
    for r in strict:
        print(f"  {r.case} ({r.formulation}) {r.tool} at T = {r.T:.0e}: {r.reason[:160]}")
    lenient = [r for _, _, rows in results for r in rows if r.lenient_advice]
    print(f"lenient advice (verify's 'would pass at T' above the true error, >= 1, or failing at T; not counted above): "
          f"{len(lenient)}")
    for r in lenient:
        print(f"  {r.case} ({r.formulation}) {r.tool} at T = {r.T:.0e}: {r.note}; true error {_err(r)}")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump([_record(c, o, r) for c, o, rows in results for r in rows], fh, indent=1, default=float)
    return 0


if __name__ == "__main__":
    sys.exit(main())

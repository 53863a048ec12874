"""Certificates of reference solutions, computed on the ORIGINAL K (or X), never on a factor.

Two kinds of problem:

* **Inequality (box) problems** (the duals and primals of l1_svm, l2_svm, least_1norm_svm, and the
  support features machine): the solver's multipliers are projected onto the feasible set (box, then
  the equality ``y' alpha = 0`` exactly), the dual value ``d(alpha)`` is evaluated on K, and the primal
  point that alpha defines (``W = sum_i alpha_i y_i phi(x_i)``, the best ``b`` by an exact 1-D
  minimisation, the optimal slacks) is evaluated on K too. Weak duality gives
  ``0 <= p(W, b) - p* <= p(W, b) + d(alpha)`` and ``0 <= d(alpha) - d* <= p(W, b) + d(alpha)``
  (``p* = -d*``): the duality gap bounds the error of both objective values. The KKT residual
  (stationarity on the free set, signs on the bounds) is reported too. If the gap is above the
  tolerance, an active-set Newton step polishes alpha: the equality-constrained QP on the free
  variables, bounded ones fixed, is solved exactly (a dense symmetric solve), violators are moved,
  and the certificate is recomputed.
* **Equality-only problems** (LS-SVM classification and regression, RLS, the weighted ISLS problem):
  the KKT system is solved directly (LAPACK LU, or Cholesky when SPD), its 1-norm condition number is
  estimated (``gecon`` / ``pocon``, O(N^2) after the factorisation) and iterative refinement with
  residuals in extended precision (``numpy.longdouble``) is applied; the last correction estimates
  the forward error. A system that is singular to working precision is refused; one whose estimated
  error is above the tolerance is reported (:class:`ReferenceAccuracyWarning`).

Each certifier returns a :class:`Certified`; :func:`svmref.formulations.solve` turns it into a
:class:`~svmref.formulations.Solution`.
"""
from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np
import scipy.linalg as sla
from scipy.linalg import lapack

EPS = float(np.finfo(float).eps)
LD = np.longdouble


class ReferenceAccuracyWarning(UserWarning):
    """The reference's estimated relative error is above the requested tolerance (ill-conditioned system)."""


@dataclass
class Certified:
    """What a certifier found: the certified ``objective`` (problem's own sense), ``values`` to
    replace the solver's (None: keep them), the ``residuals`` (name -> value), which of them failed
    (``failed``: name -> (value, tolerance)), whether a polish step was used, and the condition estimate."""

    objective: float
    values: dict | None
    residuals: dict
    failed: dict = field(default_factory=dict)
    polished: bool = False
    condition: float = float("nan")
    method: str = ""
    duals: list | None = None
    alpha: np.ndarray | None = None
    bounds: tuple[float, float] | None = None

    @property
    def certified(self) -> bool:
        return not self.failed


@dataclass(frozen=True)
class Multipliers:
    """Where a form's solution holds the dual multipliers a certificate is computed from: the variable
    ``values[variable]`` of a dual form, or ``duals[plus] - duals[minus]`` (either term may be absent) from
    the constraint duals of a primal form, in the order the form lists its constraints."""

    variable: str | None = None
    plus: int | None = None
    minus: int | None = None

    def __call__(self, values: dict, duals: list):
        """The multipliers, or ``None`` when the solution does not hold them (a model with other constraints)."""
        try:
            if self.variable is not None:
                return values[self.variable]
            if self.minus is None:
                return duals[self.plus]
            if self.plus is None:
                return -duals[self.minus]
            return duals[self.plus] - duals[self.minus]
        except (IndexError, KeyError, TypeError, ValueError):
            return None


#: A certified box point whose KKT residual (margin units) is above this is polished anyway: the objective is then
#: already certified, but the point (alpha, b, the decision values) is made accurate to round-off.
POINT_KKT = 1e-12


def better(new: Certified, old: Certified) -> bool:
    """``new`` certifies where ``old`` does not, or both do (or both do not) and ``new`` has the smaller gap, or an
    equal-or-smaller gap (to round-off) and the smaller KKT residual."""
    if new.certified != old.certified:
        return new.certified
    g_new, g_old = new.residuals["rel_gap"], old.residuals["rel_gap"]
    if new.certified and g_new <= max(g_old, 1e3 * EPS):
        return new.residuals.get("kkt", 0.0) < old.residuals.get("kkt", 0.0) or g_new < g_old
    return g_new < g_old


def _rel(x: float, scale: float) -> float:
    """``|x| / |scale|``, relative with no floor (``0`` when both are 0, ``inf`` when only the scale is)."""
    x, scale = abs(float(x)), abs(float(scale))
    if scale > 0.0:
        return x / scale
    return 0.0 if x == 0.0 else float("inf")


# ------------------------------------------------------------------------------------------------
# 1-D minimisation over b of the losses (exact): t_i = y_i - f_i, residual 1 - y_i (f_i + b) = y_i (t_i - b)
# ------------------------------------------------------------------------------------------------
def _argmin_pl(t, wpos, wneg) -> float:
    """argmin_b sum_i wpos_i max(0, t_i - b) + wneg_i max(0, b - t_i) (convex piecewise linear)."""
    order = np.argsort(t, kind="stable")
    ts, wp, wn = t[order], wpos[order], wneg[order]
    # slope just right of ts[k]: sum_{j<=k} wn_j - sum_{j>k} wp_j
    slope = np.cumsum(wn) - (np.sum(wp) - np.cumsum(wp))
    k = int(np.argmax(slope >= 0)) if np.any(slope >= 0) else len(ts) - 1
    return float(ts[k])


def _argmin_sq(t, wpos, wneg) -> float:
    """argmin_b 1/2 sum_i wpos_i max(0, t_i - b)^2 + wneg_i max(0, b - t_i)^2 (convex, C^1)."""
    order = np.argsort(t, kind="stable")
    ts, wp, wn = t[order], wpos[order], wneg[order]
    n = len(ts)
    cn, cnt = np.cumsum(wn), np.cumsum(wn * ts)
    rp, rpt = np.sum(wp) - np.cumsum(wp), np.sum(wp * ts) - np.cumsum(wp * ts)
    # derivative at b = ts[k]: sum_{j<=k} wn_j (ts_k - ts_j) - sum_{j>k} wp_j (ts_j - ts_k)
    D = (cn * ts - cnt) - (rpt - rp * ts)
    k = int(np.argmax(D >= 0)) if np.any(D >= 0) else n - 1
    # on [ts[k-1], ts[k]] the active sets are {j <= k-1} (neg side) and {j >= k} (pos side)
    A_neg = cn[k - 1] if k > 0 else 0.0
    B_neg = cnt[k - 1] if k > 0 else 0.0
    A_pos = np.sum(wp[k:])
    B_pos = np.sum(wp[k:] * ts[k:])
    A = A_neg + A_pos
    return float((B_neg + B_pos) / A) if A > 0 else float(ts[k])


def best_b(kind: str, y, f) -> float:
    """The b minimising the loss part of the primal for fixed f = K (y * alpha) (exact)."""
    t = y - f
    pos = (y > 0).astype(float)
    neg = 1.0 - pos
    if kind == "l1":
        return _argmin_pl(t, pos, neg)
    if kind == "l1n":
        one = np.ones_like(t)
        return _argmin_pl(t, one, one)
    if kind == "l2":
        return _argmin_sq(t, pos, neg)
    raise ValueError(kind)


def primal_loss(kind: str, C: float, y, f, b) -> float:
    r = 1.0 - y * (f + b)
    if kind == "l1":
        return C * float(np.sum(np.maximum(r, 0.0)))
    if kind == "l1n":
        return C * float(np.sum(np.abs(r)))
    return 0.5 * C * float(np.sum(np.maximum(r, 0.0) ** 2))


# ------------------------------------------------------------------------------------------------
# Box-constrained duals: min 1/2 a'Qa - 1'a  s.t. y'a = 0, l <= a <= u,  Q = YKY (+ I/C for l2)
# ------------------------------------------------------------------------------------------------
def box_bounds(kind: str, C: float, n: int):
    lo = -C if kind == "l1n" else 0.0
    hi = np.inf if kind == "l2" else C
    return np.full(n, lo), np.full(n, hi)


def project_feasible(alpha, y, lo, hi):
    """Clip to the box, then move along the box's room to satisfy ``y'alpha = 0`` (exactly to round-off)."""
    a = np.clip(np.asarray(alpha, dtype=float), lo, hi)
    for _ in range(3):
        r = float(y @ a)
        if r == 0.0:
            break
        s = np.sign(-r * y)  # direction of each coordinate's move
        room = np.where(s > 0, hi - a, a - lo)
        room = np.where(np.isfinite(room), room, max(1.0, float(np.max(np.abs(a)))))
        tot = float(np.sum(room))
        if tot <= 0.0:
            break
        a = np.clip(a + s * room * min(1.0, abs(r) / tot), lo, hi)
    return a


def box_dual_value(kind, K, y, C, a):
    v = y * a
    f = K @ v
    d = 0.5 * float(v @ f) - float(np.sum(a))
    if kind == "l2":
        d += 0.5 * float(a @ a) / C
    return d, f


def _box_feasibility(kind, C, raw, y, lo, hi):
    """``(eq, bound, scale_a)``: ``|y'alpha| / sum|alpha|`` and the largest box violation relative to the box's
    size (``C``; for the unbounded l2 box, ``max|alpha|``) of the solver's raw alpha, and ``max|alpha|``."""
    scale_a = float(np.max(np.abs(raw))) if raw.size else 0.0
    eq_res = _rel(float(y @ raw), float(np.sum(np.abs(raw))))
    over = float(np.max(np.maximum(np.maximum(lo - raw, raw - hi), 0.0))) if raw.size else 0.0
    bound_res = _rel(over, C if kind != "l2" else scale_a)
    return eq_res, bound_res, scale_a


def box_certificate(kind, K, y, C, alpha, tol, *, kkt_tol=None, raw_alpha=None) -> tuple[Certified, np.ndarray, float]:
    """Certificate of ``alpha`` (projected first) for the box dual of ``kind`` ("l1", "l2", "l1n").

    Certified when the duality gap ``p + d`` is at most ``tol |d|`` or the absolute floor ``abs_floor`` of
    evaluating ``p`` and ``d`` in double precision (reported, with ``rel_floor = abs_floor / |d|``), the
    feasibility residuals are at most ``tol`` relative to their own scales, and the KKT residual at most
    ``sqrt(tol)`` (``kkt_tol``). ``bounds`` is the interval the optimal values lie in: ``[-p, d]`` for the
    dual (003 eq. (3); 000 eq. (5)), ``[-d, p]`` for the primal (weak duality, ``p* = -d*``)."""
    n = len(y)
    lo, hi = box_bounds(kind, C, n)
    raw = np.asarray(alpha if raw_alpha is None else raw_alpha, dtype=float)
    eq_res, bound_res, scale_a = _box_feasibility(kind, C, raw, y, lo, hi)
    a = project_feasible(alpha, y, lo, hi)
    d, f = box_dual_value(kind, K, y, C, a)
    b = best_b(kind, y, f)
    p = 0.5 * float((y * a) @ f) + primal_loss(kind, C, y, f, b)
    gap = p + d
    # KKT: reduced gradient g_i = y_i (f_i + b) - 1 (+ alpha_i / C for l2); zero on the free set,
    # >= 0 at the lower bound, <= 0 at the upper one. Natural residual |a - clip(a - g w, lo, hi)| / w
    # (w the box width): 0 iff KKT holds; min(|g_i|, distance to the bound / w) otherwise.
    g = y * (f + b) - 1.0 + (a / C if kind == "l2" else 0.0)
    width = np.where(np.isfinite(hi - lo), hi - lo, scale_a if scale_a > 0 else 1.0)
    viol = np.abs(a - np.clip(a - g * width, lo, hi)) / width
    kkt = float(np.max(viol)) if n else 0.0
    rounding = _box_rounding(kind, K, y, C, a, f, b)
    # the gap cannot be resolved below the floating-point floor of evaluating p and d; the floor used
    # to accept it is the typical (sqrt(N)) rather than the worst-case (N) accumulation of round-off
    abs_floor = rounding / np.sqrt(max(n, 1))
    res = {"objective_dual": d, "objective_primal": p, "gap": gap, "rel_gap": _rel(gap, d),
           "eq_feasibility": eq_res, "bound_feasibility": bound_res, "kkt": kkt, "b": b,
           "rounding": rounding, "rel_rounding": _rel(rounding, d), "abs_floor": abs_floor,
           "rel_floor": _rel(abs_floor, d)}
    failed = {}
    if not np.isfinite(d) or not np.isfinite(p):
        failed["objective"] = (float("nan"), tol)
    if not (gap <= max(tol * abs(d), abs_floor)) or gap < -max(1e3 * EPS * n * abs(d), abs_floor):
        failed["rel_gap"] = (res["rel_gap"], max(tol, res["rel_floor"]))
    if not (eq_res <= tol):
        failed["eq_feasibility"] = (eq_res, tol)
    if not (bound_res <= tol):
        failed["bound_feasibility"] = (bound_res, tol)
    kt = np.sqrt(tol) if kkt_tol is None else kkt_tol
    if not (kkt <= kt):
        failed["kkt"] = (kkt, kt)
    return Certified(d, None, res, failed), a, b


def _box_rounding(kind, K, y, C, a, f, b) -> float:
    """Worst-case floating-point error of evaluating ``d`` and ``p`` (dot products of length N): the sizes of
    the terms summed, times ``2 N eps``. ``|d(alpha) - d*| <= gap`` holds up to it."""
    n = len(y)
    Kv_abs = np.abs(K) @ np.abs(y * a)
    r = 1.0 - y * (f + b)
    loss_scale = C * float(np.sum(Kv_abs)) if kind != "l2" else C * float(np.abs(r) @ Kv_abs)
    return 2.0 * n * EPS * (float(np.abs(y * a) @ Kv_abs) + float(np.sum(np.abs(a))) + loss_scale
                            + (float(a @ a) / C if kind == "l2" else 0.0))


def _solve_sym(A, rhs):
    """Solve a symmetric (possibly singular, consistent) system; least squares when singular."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", sla.LinAlgWarning)
            x = sla.solve(A, rhs, assume_a="sym", check_finite=False)
        if np.all(np.isfinite(x)):
            return x
    except (np.linalg.LinAlgError, sla.LinAlgWarning, ValueError):
        pass
    return sla.lstsq(A, rhs, check_finite=False, lapack_driver="gelsy")[0]


def box_polish(kind, K, y, C, alpha, tol, *, max_iter: int = 8):
    """Active-set Newton polish of a box dual. Returns (best Certified, alpha, b) over the tried sets."""
    n = len(y)
    lo, hi = box_bounds(kind, C, n)
    a0 = project_feasible(alpha, y, lo, hi)
    best = None
    amax = float(np.max(np.abs(a0))) if n else 0.0
    width = np.where(np.isfinite(hi - lo), hi - lo, amax if amax > 0 else 1.0)
    for delta in (1e-6, 1e-9, 1e-4, 1e-3):
        at_lo = (a0 - lo) <= delta * width
        at_hi = ((hi - a0) <= delta * width) & ~at_lo
        for _ in range(max_iter):
            free = ~(at_lo | at_hi)
            a = np.where(at_lo, lo, np.where(at_hi, hi, a0))
            F = np.flatnonzero(free)
            B = np.flatnonzero(~free)
            yF = y[F]
            QFF = (yF[:, None] * K[np.ix_(F, F)]) * yF[None, :]
            if kind == "l2":
                QFF[np.diag_indices_from(QFF)] += 1.0 / C
            rhs_top = 1.0 - yF * (K[np.ix_(F, B)] @ (y[B] * a[B])) if len(B) else np.ones(len(F))
            M = np.zeros((len(F) + 1, len(F) + 1))
            M[:-1, :-1] = QFF
            M[:-1, -1] = yF
            M[-1, :-1] = yF
            rhs = np.concatenate([rhs_top, [-float(y[B] @ a[B])]])
            sol = _solve_sym(M, rhs)
            a[F] = sol[:-1]
            b = float(sol[-1])
            # primal feasibility of the free variables
            out_lo = free & (a < lo - 1e-12 * width)
            out_hi = free & (a > hi + 1e-12 * width)
            if out_lo.any() or out_hi.any():
                at_lo = at_lo | out_lo
                at_hi = at_hi | out_hi
                continue
            f = K @ (y * a)
            g = y * (f + b) - 1.0 + (a / C if kind == "l2" else 0.0)
            bad = (at_lo & (g < -np.sqrt(tol))) | (at_hi & (g > np.sqrt(tol)))
            if bad.any():
                at_lo = at_lo & ~bad
                at_hi = at_hi & ~bad
                continue
            break
        cert, ap, bp = box_certificate(kind, K, y, C, a, tol)
        if best is None or cert.residuals["rel_gap"] < best[0].residuals["rel_gap"] or (
                cert.certified and not best[0].certified):
            best = (cert, ap, bp)
        if cert.certified:
            break
    return best


def _box_qp(kind, K, y, C):
    """``Q = Y K Y`` (``+ I/C`` for l2) of the box dual ``min 1/2 a'Qa - 1'a`` (003 eq. (3); 000 eq. (5))."""
    Q = (y[:, None] * K) * y[None, :]
    if kind == "l2":
        Q[np.diag_indices_from(Q)] += 1.0 / C
    return Q


def _free_step(Q, y, a, free):
    """The equality-constrained minimiser on the free set, the others fixed: ``(a_F, b)`` from
    ``[[Q_FF, y_F], [y_F', 0]] [a_F; b] = [1 - Q_FB a_B; -y_B' a_B]``."""
    F, B = np.flatnonzero(free), np.flatnonzero(~free)
    M = np.zeros((len(F) + 1, len(F) + 1))
    M[:-1, :-1] = Q[np.ix_(F, F)]
    M[:-1, -1] = M[-1, :-1] = y[F]
    rhs = np.concatenate([1.0 - Q[np.ix_(F, B)] @ a[B], [-float(y[B] @ a[B])]])
    sol = _solve_sym(M, rhs)
    return sol[:-1], float(sol[-1])


def box_active_set(kind, K, y, C, alpha, tol, *, delta: float = 1e-6):
    """A primal active-set method for the box dual (Nocedal & Wright, Algorithm 16.3), from ``alpha``: the
    entries within ``delta`` of a bound start in the working set; each step solves the equality-constrained QP on
    the free set exactly, moves along it as far as the box allows (the blocking entry joins the working set), and
    at a minimiser of the working set releases the bounded entry whose multiplier (the reduced gradient
    ``g_i = (Q a)_i - 1 + y_i b``) has the wrong sign by the most. Finite for a convex QP; every iterate is
    feasible. Returns ``(Certified, alpha, b)`` of :func:`box_certificate`."""
    n = len(y)
    lo, hi = box_bounds(kind, C, n)
    Q = _box_qp(kind, K, y, C)
    a = project_feasible(alpha, y, lo, hi)
    width = np.where(np.isfinite(hi - lo), hi - lo, max(float(np.max(np.abs(a))), 1e-300))
    at_lo, at_hi = (a - lo) <= delta * width, ((hi - a) <= delta * width) & ~((a - lo) <= delta * width)
    a = np.where(at_lo, lo, np.where(at_hi, hi, a))
    aF, b = _free_step(Q, y, a, ~(at_lo | at_hi))  # a feasible start: the bounded ones snapped, y'a = 0 restored
    a[~(at_lo | at_hi)] = aF
    a = project_feasible(a, y, lo, hi)
    at_lo, at_hi = a <= lo, (a >= hi) & ~(a <= lo)
    scale = float(np.max(np.abs(Q))) * max(float(np.max(np.abs(a))), 1e-300) + 1.0
    for _ in range(2 * n + 50):
        free = ~(at_lo | at_hi)
        aF, b = _free_step(Q, y, a, free)
        d = aF - a[free]
        with np.errstate(divide="ignore", invalid="ignore"):
            room = np.where(d > 0, (hi[free] - a[free]) / d, np.where(d < 0, (lo[free] - a[free]) / d, np.inf))
        j = int(np.argmin(room)) if room.size else -1
        if room.size and room[j] < 1.0:  # blocked: move to the bound, which joins the working set
            a[free] = a[free] + max(room[j], 0.0) * d
            k = np.flatnonzero(free)[j]
            a[k] = hi[k] if d[j] > 0 else lo[k]
            at_hi[k], at_lo[k] = d[j] > 0, d[j] < 0
            continue
        a[free] = aF
        g = Q @ a - 1.0 + y * b
        wrong = np.where(at_lo, -g, 0.0) + np.where(at_hi, g, 0.0)
        k = int(np.argmax(wrong))
        if not wrong[k] > 1e3 * EPS * scale:
            break
        at_lo[k] = at_hi[k] = False
    return box_certificate(kind, K, y, C, a, tol)


# ------------------------------------------------------------------------------------------------
# epsilon-SVR (docs/formulations/svr.md): the dual in beta = alpha^+ - alpha^-, the primal of the point beta defines
# ------------------------------------------------------------------------------------------------
def svr_best_b(t, eps) -> float:
    """``argmin_b sum_i max(0, t_i - b - eps) + max(0, b - t_i - eps)`` (exact; ``t = y - K beta``): the
    epsilon-insensitive loss is piecewise linear in b with breakpoints ``t_i -+ eps``."""
    n = len(t)
    T = np.concatenate([t - eps, t + eps])
    return _argmin_pl(T, np.concatenate([np.ones(n), np.zeros(n)]), np.concatenate([np.zeros(n), np.ones(n)]))


def svr_certificate(K, y, C, eps, beta, tol) -> tuple[Certified, np.ndarray, float]:
    """Certificate of ``beta = alpha^+ - alpha^-`` (projected onto ``sum beta = 0``, ``|beta_i| <= C``) for the
    epsilon-SVR: the dual value ``D = 1/2 beta'K beta - y'beta + eps sum |beta|`` (the minimum of the dual over the
    splits of beta into ``alpha^+ - alpha^-``), the primal value of ``W = sum beta_i Phi_i`` with the exact best b
    and the optimal slacks, and their gap (``p* = -D*``, relative to ``|D|`` with the floating-point floor reported);
    the KKT residual is the natural residual of ``alpha^+ = max(beta, 0)``, ``alpha^- = max(-beta, 0)`` on [0, C]."""
    n = len(y)
    lo, hi = np.full(n, -C), np.full(n, C)
    raw = np.asarray(beta, dtype=float)
    eq_res, bound_res, _ = _box_feasibility("l1", C, raw, np.ones(n), lo, hi)
    bt = project_feasible(raw, np.ones(n), lo, hi)
    f = K @ bt
    d = 0.5 * float(bt @ f) - float(y @ bt) + eps * float(np.sum(np.abs(bt)))
    t = y - f
    b = svr_best_b(t, eps)
    p = 0.5 * float(bt @ f) + C * float(np.sum(np.maximum(np.abs(t - b) - eps, 0.0)))
    gap = p + d
    r = f - y + b
    viol = 0.0
    for a, g in ((np.maximum(bt, 0.0), r + eps), (np.maximum(-bt, 0.0), eps - r)):
        viol = max(viol, float(np.max(np.abs(a - np.clip(a - g * C, 0.0, C)))) / C if n else 0.0)
    babs = np.abs(bt)
    rounding = 2.0 * n * EPS * (float(babs @ (np.abs(K) @ babs)) + float(np.abs(y) @ babs) + eps * float(np.sum(babs))
                                + C * float(np.sum(np.abs(y) + np.abs(K) @ babs + abs(b) + eps)))
    abs_floor = rounding / np.sqrt(max(n, 1))
    res = {"objective_dual": d, "objective_primal": p, "gap": gap, "rel_gap": _rel(gap, d), "eq_feasibility": eq_res,
           "bound_feasibility": bound_res, "kkt": viol, "b": b, "rounding": rounding, "abs_floor": abs_floor,
           "rel_floor": _rel(abs_floor, d)}
    failed = {}
    if not (np.isfinite(d) and np.isfinite(p)):
        failed["objective"] = (float("nan"), tol)
    elif not (gap <= max(tol * abs(d), abs_floor)) or gap < -max(1e3 * EPS * n * abs(d), abs_floor):
        failed["rel_gap"] = (res["rel_gap"], max(tol, res["rel_floor"]))
    if not eq_res <= tol:
        failed["eq_feasibility"] = (eq_res, tol)
    if not bound_res <= tol:
        failed["bound_feasibility"] = (bound_res, tol)
    if not viol <= np.sqrt(tol):
        failed["kkt"] = (viol, np.sqrt(tol))
    return Certified(d, None, res, failed), bt, b


def _svr_sets(a0, C, delta):
    """The entries of beta taken at 0, at C and at -C (within ``delta C``)."""
    at_zero = np.abs(a0) <= delta * C
    at_hi = (a0 >= C * (1.0 - delta)) & ~at_zero
    at_lo = (a0 <= -C * (1.0 - delta)) & ~at_zero
    return at_zero, at_hi, at_lo


def _svr_newton(K, y, C, eps, a0, sets, tol, max_iter=8):
    """Active-set Newton steps for the epsilon-SVR dual in beta: on the free set (sign fixed) the KKT system
    ``K_FF beta_F + b = y_F - eps sign(beta_F) - K_FB beta_B``, ``sum beta = 0`` solved exactly; free entries that
    change sign go to 0, those beyond C to the bound; fixed ones whose residual ``y_i - f_i - b`` violates their
    condition (``|.| <= eps`` at 0, ``>= eps`` at C, ``<= -eps`` at -C) by more than ``sqrt(tol)`` are freed."""
    at_zero, at_hi, at_lo = sets
    s = np.sign(a0)
    a = a0
    for _ in range(max_iter):
        free = ~(at_zero | at_hi | at_lo)
        a = np.where(at_hi, C, np.where(at_lo, -C, np.where(at_zero, 0.0, a0)))
        F_, B_ = np.flatnonzero(free), np.flatnonzero(~free)
        M = np.zeros((len(F_) + 1, len(F_) + 1))
        M[:-1, :-1] = K[np.ix_(F_, F_)]
        M[:-1, -1] = M[-1, :-1] = 1.0
        rhs = np.concatenate([y[F_] - eps * s[F_] - K[np.ix_(F_, B_)] @ a[B_], [-float(np.sum(a[B_]))]])
        sol = _solve_sym(M, rhs)
        a[F_], b = sol[:-1], float(sol[-1])
        flipped = free & (a * s < 0)
        over = free & (np.abs(a) > C)
        if flipped.any() or over.any():
            at_zero, at_hi, at_lo = at_zero | flipped, at_hi | (over & (a > 0)), at_lo | (over & (a < 0))
            continue
        u = y - K @ a - b
        st = np.sqrt(tol)
        bad_zero = at_zero & (np.abs(u) > eps + st)
        bad = bad_zero | (at_hi & (u < eps - st)) | (at_lo & (u > -eps + st))
        if not bad.any():
            break
        s = np.where(bad_zero, np.sign(u), s)
        at_zero, at_hi, at_lo = at_zero & ~bad, at_hi & ~bad, at_lo & ~bad
    return a


def svr_polish(K, y, C, eps, beta, tol):
    """Active-set Newton polish of the epsilon-SVR dual (:func:`_svr_newton`) for four thresholds of the sets;
    returns the best ``(Certified, beta, b)`` by :func:`svr_certificate`."""
    n = len(y)
    a0 = project_feasible(beta, np.ones(n), np.full(n, -C), np.full(n, C))
    best = svr_certificate(K, y, C, eps, a0, tol)
    for delta in (1e-6, 1e-9, 1e-4, 1e-3):
        if best[0].certified and best[0].residuals["kkt"] <= POINT_KKT:
            break
        a = _svr_newton(K, y, C, eps, a0, _svr_sets(a0, C, delta), tol)
        found = svr_certificate(K, y, C, eps, a, tol)
        if better(found[0], best[0]):
            best = found
    return best



def _solved(prob, solver, options, *variables):
    """``prob`` solved quietly by ``solver``: the ``variables``' values, or ``None`` where the solver fails or gives
    no optimal point (a scaled re-solve is a candidate, certified afterwards, never an answer by itself)."""
    import cvxpy as cp

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            prob.solve(solver=solver, **(options or {}))
    except (cp.error.SolverError, ValueError):
        return None
    if any(v.value is None for v in variables) or prob.status not in (cp.OPTIMAL, cp.OPTIMAL_INACCURATE):
        return None
    return [np.asarray(v.value, dtype=float) for v in variables]

def svr_scaled_candidates(K, y, C, eps, *, solver: str = "CLARABEL", options: dict | None = None):
    """Candidates from re-solves of the epsilon-SVR dual in better scaling, as :func:`box_scaled_candidates` does for
    the box duals: ``alpha^+- = sigma a'^+-``, ``kappa = max|K|`` (or 1 when K = 0), so that the problem solved is
    the dual divided by ``sigma``::

        min (sigma kappa / 2) d'(K/kappa) d + eps 1'(a'^+ + a'^-) - y'd,   d = a'^+ - a'^-,
        s.t. 1'd = 0,   0 <= a'^+-  <= C / sigma,

    (substitute ``alpha^+- = sigma a'^+-`` in the dual of :class:`~svmref.formulations.svr.SVR`: the quadratic term
    gains ``sigma^2``, the linear terms ``sigma``). ``sigma = 1/kappa``: the quadratic and linear terms of the
    same size (without the upper bound when ``C kappa`` is huge, where it is far away); ``sigma = C``: the box
    ``[0, 1]``. Yields ``beta = alpha^+ - alpha^-`` (in the original units) for each re-solve that ends optimal;
    the caller certifies it on the original K."""
    import cvxpy as cp

    n = len(y)
    kappa = float(np.max(np.abs(K))) or 1.0
    Ks = K / kappa
    for sigma, drop_upper in [(1.0 / kappa, C * kappa > 1e6), (min(C, 1.0 / kappa), False), (C, False)]:
        ap, am = cp.Variable(n), cp.Variable(n)
        d = ap - am
        objective = 0.5 * (sigma * kappa) * cp.quad_form(d, cp.psd_wrap(Ks)) + eps * cp.sum(ap + am) - y @ d
        cons = [cp.sum(d) == 0, ap >= 0, am >= 0]
        if not drop_upper:
            cons += [ap <= C / sigma, am <= C / sigma]
        got = _solved(cp.Problem(cp.Minimize(objective), cons), solver, options, ap, am)
        if got is not None:
            yield sigma * (got[0] - got[1])


def svr_scaled_resolve(K, y, C, eps, tol):
    """The first candidate of :func:`svr_scaled_candidates` that certifies on the original K
    (:func:`svr_certificate`, polished by :func:`svr_polish` when needed), else the one with the smallest gap:
    ``(Certified, beta, b)``, or None when every re-solve failed."""
    best = None
    for beta in svr_scaled_candidates(K, y, C, eps):
        found = svr_certificate(K, y, C, eps, beta, tol)
        if not found[0].certified:
            found = svr_polish(K, y, C, eps, beta, tol)
        if best is None or found[0].certified or found[0].residuals["rel_gap"] < best[0].residuals["rel_gap"]:
            best = found
        if found[0].certified:
            break
    return best


# ------------------------------------------------------------------------------------------------
# Support features machine (003): p(a, b) on X and W(lam) on X
# ------------------------------------------------------------------------------------------------
def recover_a_sfm(w, mu):
    """``a_i = sign(w_i) max(|w_i| - mu, 0) / (2 (1 - mu))`` (003, eq. (8))."""
    return np.sign(w) * np.maximum(np.abs(w) - mu, 0.0) / (2.0 * (1.0 - mu))


def _sfm_dual_value(X, y, mu, lam):
    w = X.T @ (y * lam)  # 003, eq. (6)
    excess = np.maximum(np.abs(w) - mu, 0.0)
    W = float(np.sum(lam)) - float(excess @ excess) / (4.0 * (1.0 - mu))  # 003, eq. (10)
    return W, np.sign(w) * excess / (2.0 * (1.0 - mu))  # and a from 003, eq. (8)


def _sfm_primal_value(X, y, C, mu, a):
    f = X @ a
    b = best_b("l1", y, f)
    return float((1.0 - mu) * (a @ a) + mu * np.sum(np.abs(a))) + primal_loss("l1", C, y, f, b), b  # 003, eq. (5)


def _sfm_rounding(X, y, C, mu, lam, a, b) -> float:
    """Worst-case floating-point error of evaluating ``W(lam)`` (003 eq. (10)) and ``p(a, b)`` (003 eq. (5)): the
    sizes of the terms summed, times ``2 (N + n) eps``."""
    N, n = X.shape
    wabs = np.abs(X).T @ np.abs(lam)
    fabs = np.abs(X) @ np.abs(a) + abs(b) + 1.0
    terms = (float(np.sum(np.abs(lam))) + float(wabs @ wabs) / (4.0 * (1.0 - mu)) + (1.0 - mu) * float(a @ a)
             + mu * float(np.sum(np.abs(a))) + C * float(np.sum(fabs)))
    return 2.0 * (N + n) * EPS * terms


def sfm_certificate(X, y, C, mu, lam, tol, a_primal=None, extra_lams=()):
    """Certificate of the support features machine on X: ``min p(a, b) - max W(lam) >= 0`` over the
    candidates (the solver's lam, projected; ``extra_lams`` e.g. the primal solver's multipliers; ``a`` from
    (8) of each, and ``a_primal``). Returns (Certified, best lam, best a, its b)."""
    n = len(y)
    lo, hi = np.zeros(n), np.full(n, C)
    raw = np.asarray(lam, dtype=float)
    eq_res, bound_res, _ = _box_feasibility("l1", C, raw, y, lo, hi)
    W, best_lam, a_cands = -np.inf, None, []
    for cand in [raw, *[np.asarray(e, dtype=float) for e in extra_lams if e is not None]]:
        lam_c = project_feasible(cand, y, lo, hi)
        W_c, a_c = _sfm_dual_value(X, y, mu, lam_c)
        a_cands.append(a_c)
        if W_c > W:
            W, best_lam = W_c, lam_c
    if a_primal is not None:
        a_cands.append(np.asarray(a_primal, dtype=float))
    p, a, b = np.inf, None, 0.0
    for a_c in a_cands:
        p_c, b_c = _sfm_primal_value(X, y, C, mu, a_c)
        if p_c < p:
            p, a, b = p_c, a_c, b_c
    gap = p - W
    abs_floor = _sfm_rounding(X, y, C, mu, best_lam, a, b) / np.sqrt(max(n, 1))
    res = {"objective_dual": W, "objective_primal": p, "gap": gap, "rel_gap": _rel(gap, W),
           "eq_feasibility": eq_res, "bound_feasibility": bound_res, "b": b, "abs_floor": abs_floor,
           "rel_floor": _rel(abs_floor, W)}
    failed = {}
    if not (gap <= max(tol * abs(W), abs_floor)) or gap < -abs_floor:
        failed["rel_gap"] = (res["rel_gap"], max(tol, res["rel_floor"]))
    if not (eq_res <= tol):
        failed["eq_feasibility"] = (eq_res, tol)
    if not (bound_res <= tol):
        failed["bound_feasibility"] = (bound_res, tol)
    return Certified(W, None, res, failed), best_lam, a, b


# ------------------------------------------------------------------------------------------------
# Equality-only problems: direct solve, condition estimate, extended-precision refinement
# ------------------------------------------------------------------------------------------------
def _split(a):
    """Dekker's split: a = hi + lo with hi, lo of 26 significant bits (products of halves are exact)."""
    c = 134217729.0 * a  # 2^27 + 1
    hi = c - (c - a)
    return hi, a - hi


class AccurateMatvec:
    """``K @ x`` as if computed in twice the working precision (Ogita-Rump-Oishi Dot2): every product
    ``K_ij x_j`` is split into its double value and exact error (Dekker's TwoProduct), the values are
    summed with TwoSum (error-free) along each row, and the result is returned as ``numpy.longdouble``.
    This is what makes iterative refinement converge to working accuracy on systems with condition
    numbers up to ~1/eps (an extended-precision residual alone gains only eps_ext * cond)."""

    def __init__(self, K):
        self.K = np.ascontiguousarray(K, dtype=float)
        self.Kh, self.Kl = _split(self.K)

    def __call__(self, x) -> np.ndarray:
        x = np.asarray(x, dtype=float)
        xh, xl = _split(x)
        P = self.K * x[None, :]
        E = ((self.Kh * xh[None, :] - P) + self.Kh * xl[None, :] + self.Kl * xh[None, :]) + self.Kl * xl[None, :]
        PT = np.ascontiguousarray(P.T)
        s = np.zeros(len(self.K))
        c = np.zeros(len(self.K))
        for j in range(PT.shape[0]):
            p = PT[j]
            t = s + p
            bb = t - s
            c += (s - (t - bb)) + (p - bb)
            s = t
        return s.astype(LD) + (c + E.sum(axis=1)).astype(LD)


@dataclass(frozen=True, eq=False)
class KernelSystem:
    """What the direct systems of the equality problems share (``LSSystem``, ``RLSSystem``, ``ISLSSystem``):
    the data, the form whose values and objective are reported, and ``K`` in extended precision and its
    accurate matrix-vector product (:class:`AccurateMatvec`), each built once and reused across ``solve`` calls
    at other hyperparameters."""

    K: np.ndarray
    y: np.ndarray
    form: str

    @cached_property
    def _K_ld(self):
        return self.K.astype(LD)

    @cached_property
    def _Kx(self):
        return AccurateMatvec(self.K)


def _equilibrate(A):
    """Symmetric Ruiz equilibration by powers of 2 (exact): ``(D A D, d)`` with rows and columns of D A D of
    max-norm ~1, which removes the bad scaling of e.g. ``[[0, y'], [y, K + I/C]]`` with K ~ 1e12 (not an
    intrinsic ill-conditioning)."""
    d = np.ones(A.shape[0])
    for _ in range(8):
        rmax = np.max(np.abs(A * d[:, None] * d[None, :]), axis=1)
        rmax[rmax == 0] = 1.0
        step = np.exp2(-np.round(0.5 * np.log2(rmax)))
        if np.all(step == 1.0):
            break
        d *= step
    return A * d[:, None] * d[None, :], d


def _factorise(A, d, spd: bool, what: str):
    """Factorise the equilibrated ``A`` (Cholesky if ``spd`` and it succeeds, else LU) and estimate its
    1-norm condition number (``dpocon`` / ``dgecon``). Returns ``(solve, cond, spd)``, ``solve(r)`` giving
    ``A0^-1 r = D (D A0 D)^-1 D r`` for the original matrix ``A0``."""
    anorm = float(np.max(np.sum(np.abs(A), axis=0)))
    if spd:
        try:
            c, low = sla.cho_factor(A, lower=False, check_finite=False)
        except np.linalg.LinAlgError:
            spd = False
        else:
            rcond, info = lapack.dpocon(c, anorm, uplo="U")

            def solve(r):  # A^-1 r = D (D A D)^-1 D r
                return d * sla.cho_solve((c, low), d * r, check_finite=False)
    if not spd:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", sla.LinAlgWarning)
            lu, piv = sla.lu_factor(A, check_finite=False)
        if np.any(np.diag(lu) == 0.0):
            raise np.linalg.LinAlgError(f"{what} is singular to working precision (a zero pivot in LU: "
                                        "estimated condition number infinite)")
        rcond, info = lapack.dgecon(lu, anorm, norm="1")

        def solve(r):
            return d * sla.lu_solve((lu, piv), d * r, check_finite=False)
    cond = float(1.0 / rcond) if rcond > 0 else float("inf")
    return solve, cond, spd


def _refine(x, rhs_ld, matvec_ld, solve, max_refine: int):
    """Iterative refinement of ``x`` with residuals ``rhs - A x`` in extended precision; stops when the
    correction is at round-off or stagnates. Returns ``(x, steps, last relative correction, converged)``."""
    steps, last, prev, converged = 0, float("inf"), float("inf"), False
    for steps in range(1, max_refine + 1):  # noqa: B007
        r = rhs_ld - matvec_ld(x)
        dx = solve(np.asarray(r, dtype=float))
        x = (x.astype(LD) + dx.astype(LD)).astype(float)
        last = float(np.max(np.abs(dx))) / max(float(np.max(np.abs(x))), np.finfo(float).tiny)
        if last <= 2 * EPS:
            converged = True
            break
        if last > 0.5 * prev:  # stagnation: no further gain
            break
        prev = last
    return x, steps, last, converged


def refined_solve(A, rhs, matvec_ld, *, spd: bool = False, tol: float = 1e-8, what: str = "the KKT system",
                  max_refine: int = 6):
    """Solve ``A x = rhs`` with LU (or Cholesky if ``spd``), estimate ``cond_1(A)`` (gecon/pocon) and
    refine with residuals ``rhs - A x`` computed in extended precision by ``matvec_ld`` (which takes a
    double vector and returns ``numpy.longdouble``; :class:`AccurateMatvec` for the K products).

    The system is first equilibrated (symmetric Ruiz scaling by powers of 2, exact); ``condition`` is that
    of the equilibrated matrix. Returns ``(x, info)`` with ``condition``, ``refinement_steps``, ``est_rel_error`` (the last
    correction's relative size, or ``cond * eps`` if refinement did not converge) and
    ``backward_error``. Raises ``numpy.linalg.LinAlgError`` (caught by the caller) when A is singular
    to working precision.
    """
    A0 = A
    A, d = _equilibrate(A)
    solve, cond, spd = _factorise(A, d, spd, what)
    if not np.isfinite(cond) or cond * EPS >= 0.5:
        raise np.linalg.LinAlgError(f"{what} is singular to working precision (estimated 1-norm condition number {cond:.3g})")
    x = solve(rhs)
    rhs_ld = np.asarray(rhs, dtype=LD)
    x, steps, last, converged = _refine(x, rhs_ld, matvec_ld, solve, max_refine)
    r = rhs_ld - matvec_ld(x)
    bnorm = float(np.max(np.abs(np.asarray(r, dtype=float))))
    backward = bnorm / max(float(np.max(np.abs(A0) @ np.abs(x))) + float(np.max(np.abs(rhs))), np.finfo(float).tiny)
    est = max(last, EPS) if converged or last < cond * EPS else max(cond * EPS, last)
    return x, {"condition": cond, "refinement_steps": steps, "est_rel_error": est, "backward_error": backward,
               "factorisation": "Cholesky (dpotrf, dpocon)" if spd else "LU (dgetrf, dgecon)"}


def direct_certified(objective, values, info, tol, *, p, d, size, n, duals=None) -> Certified:
    """The certificate of a direct solve: the estimated relative error of the solution (``est_rel_error``,
    :func:`refined_solve`) at most ``tol``, and the primal and dual objectives at it, ``p`` and ``d`` (a
    minimisation dual: ``p* = -d*``), equal to within ``tol |d|`` or the floor ``8 n eps_ld size`` of evaluating
    them in extended precision (``size``: the sizes of their terms, ``n`` the number of unknowns).
    ``duals``: the multipliers of the form's constraints."""
    res = dict(info)
    gap = p + d
    abs_floor = 8.0 * n * float(np.finfo(LD).eps) * size  # p and d are evaluated in extended precision
    res.update({"gap_p_plus_d": gap, "rel_gap": _rel(gap, d), "abs_floor": abs_floor, "rel_floor": _rel(abs_floor, d)})
    failed = {}
    if not (info["est_rel_error"] <= tol):
        failed["est_rel_error"] = (info["est_rel_error"], tol)
    if not np.isfinite(objective):
        failed["objective"] = (objective, tol)
    elif not abs(gap) <= max(tol * abs(d), abs_floor):
        failed["rel_gap"] = (res["rel_gap"], max(tol, res["rel_floor"]))
    return Certified(float(objective), values, res, failed, polished=info["refinement_steps"] > 0,
                     condition=info["condition"], method="direct", duals=duals)


def box_scaled_resolve(kind, K, y, C, *, solver: str = "CLARABEL", options: dict | None = None, tol: float = 1e-8):
    """Re-solve the box dual in better scaling (:func:`box_scaled_candidates`), certifying (and polishing)
    each candidate on the original K; returns the first certified alpha, else the best, else None."""
    best = None
    for alpha in box_scaled_candidates(kind, K, y, C, solver=solver, options=options):
        c, a, b = box_certificate(kind, K, y, C, alpha, tol)
        if not c.certified:
            c, a, b = box_polish(kind, K, y, C, alpha, tol)
        if best is None or c.certified or c.residuals["rel_gap"] < best[0].residuals["rel_gap"]:
            best = (c, a)
        if c.certified:
            break
    return None if best is None else best[1]


def box_scaled_candidates(kind, K, y, C, *, solver: str = "CLARABEL", options: dict | None = None):
    """Candidates from re-solves of the box dual in better scaling: ``alpha = sigma a'``,
    ``kappa = max|K|`` (or 1 when K = 0), so that the problem solved is
    ``min (sigma kappa / 2) a'(Y K/kappa Y)a' (+ sigma/(2C) ||a'||^2) - 1'a'`` over the box divided by sigma:
    the quadratic and linear terms are of comparable size and the box is [0, 1] or the solution lives at
    ``a' ~ 1``. Yields alpha (in the original units) for each re-solve that ends optimal."""
    import cvxpy as cp

    n = len(y)
    kappa = float(np.max(np.abs(K))) or 1.0
    Q = (y[:, None] * (K / kappa)) * y[None, :]
    # sigma = 1/kappa: a' of order 1 where the box is inactive; sigma = C: box [0, 1] (or [-1, 1]);
    # without the upper bound first when it is far away (C kappa huge: the hard-margin regime)
    trials = [(1.0 / kappa, kind != "l2" and C * kappa > 1e6), (min(C, 1.0 / kappa), False), (C, False)]
    for sigma, drop_upper in trials:
        a = cp.Variable(n)
        quad = 0.5 * (sigma * kappa) * cp.quad_form(a, cp.psd_wrap(Q))
        if kind == "l2":
            quad = quad + 0.5 * (sigma / C) * cp.sum_squares(a)
        lo = -C / sigma if kind == "l1n" else 0.0
        cons = [y @ a == 0, a >= lo]
        if kind != "l2" and not drop_upper:
            cons.append(a <= C / sigma)
        got = _solved(cp.Problem(cp.Minimize(quad - cp.sum(a)), cons), solver, options, a)
        if got is not None:
            yield sigma * got[0]


def clarabel_box_dual(kind, K, y, C, options: dict | None = None):
    """Solve the box dual ``min 1/2 a'Qa - 1'a`` (``Q = YKY``, ``+ I/C`` for l2) s.t. ``y'a = 0``, box,
    by calling CLARABEL directly with ``P = triu(Q)``: the same interior-point method and tolerances as
    through cvxpy, without cvxpy's canonicalisation of a dense quadratic form (seconds at N = 2000).
    Returns ``(alpha, b, status)`` (``b`` the multiplier of ``y'a = 0``), or ``(None, nan, status)``."""
    import clarabel
    import scipy.sparse as sp

    n = len(y)
    Q = (y[:, None] * K) * y[None, :]
    if kind == "l2":
        Q[np.diag_indices(n)] += 1.0 / C
    P = sp.csc_matrix(np.triu(Q))
    q = -np.ones(n)
    rows = [sp.csr_matrix(y.reshape(1, -1)), -sp.identity(n, format="csr")]
    b = [np.zeros(1), np.full(n, C if kind == "l1n" else 0.0)]  # -a + s = -lo,  s >= 0
    cones = [clarabel.ZeroConeT(1), clarabel.NonnegativeConeT(n)]
    if kind != "l2":
        rows.append(sp.identity(n, format="csr"))
        b.append(np.full(n, C))
        cones.append(clarabel.NonnegativeConeT(n))
    A = sp.vstack(rows, format="csc")
    settings = clarabel.DefaultSettings()
    settings.verbose = False
    for k, v in (options or {}).items():
        setattr(settings, k, v)
    solver = clarabel.DefaultSolver(P, q, A, np.concatenate(b), cones, settings)
    sol = solver.solve()
    status = str(sol.status)
    if status not in ("Solved", "AlmostSolved"):
        return None, float("nan"), status
    x = np.asarray(sol.x, dtype=float)
    z = np.asarray(sol.z, dtype=float)
    return x, float(z[0]), status

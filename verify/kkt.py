"""KKT residuals of every formulation, computed with numpy from a solver's answer (the third view).

Nothing here imports :mod:`svmref.formulations` or :mod:`svmref.solvers`: each residual is written from the
papers' optimality conditions, so that a mistake shared by the reference and a solver is caught.

Units. Every residual is a dimensionless number compared with one tolerance (see
:data:`verify.TOLERANCES`):

* classification residuals are in **margin units** (``y_i f(x_i) - 1`` is dimensionless since
  ``y_i = +-1``), and dual variables are measured as ``t_i = alpha_i / C`` (for L1 and Least 1-Norm
  the box becomes ``[0, 1]`` or ``[-1, 1]``; for L2 and LS ``alpha_i / C = xi_i`` is the slack,
  000 eq. (7)), so ``alpha_i`` and the margin are comparable;
* regression residuals are in the units of ``y``; both are then made relative to the size of the
  terms that make up ``f(x_i)`` (``f_scale``, at least ``max(1, max_i |y_i|)``), as OSQP's ``eps_rel``;
* equality constraints ``sum_i e_i alpha_i = 0`` are relative to ``sum_i |alpha_i|``;
* objective and duality gaps are relative to the size of the objective.

``nan`` means *not applicable* (e.g. complementarity for LS-SVM, whose constraints are
equalities); ``inf`` means *cannot be computed* (the answer is missing something it needs).

Residual names, the same for every formulation (cvxpy's ``SolverTestHelper`` checks each separately):

``box``                dual feasibility, bounds: ``max_i dist(alpha_i, [l, u]) / C``;
``equality``           dual feasibility, equality: ``|sum_i e_i alpha_i| / sum_i |alpha_i|``;
``primal_feasibility`` constraint violation of the primal recovered from ``(alpha, b)``;
``complementarity``    multiplier x constraint slack of the recovered primal and dual;
``stationarity``       the b-free KKT gap of the maximal violating pair (000 eqs. (10)-(11));
``kkt_absolute``       the largest of primal feasibility, complementarity and stationarity in margin units
                       (times ``f_scale``, i.e. not relative): a margin error that no scale excuses;
``duality_gap``        recovered primal objective minus dual objective, relative.

Indices in messages are 0-based (Python), e.g. ``alpha_17`` is ``alpha[17]``.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from svmref._thresholds import ACTIVE_RTOL

__all__ = [
    "Residuals",
    "RESIDUALS",
    "BOX_DUALS",
    "BoxDual",
    "box_dual_residuals",
    "rls_residuals",
    "sparse_ls_svm_residuals",
    "support_features_residuals",
    "b_interval",
    "svr_residuals",
]

#: The residual names, in the order the report prints them.
RESIDUALS = ("box", "equality", "primal_feasibility", "complementarity", "stationarity", "kkt_absolute",
             "duality_gap")

#: An ``alpha_i`` within ``EPS_ACTIVE * C`` of a bound counts as *at* that bound (eps-active set); the value is
#: :data:`svmref._thresholds.ACTIVE_RTOL`.
EPS_ACTIVE = ACTIVE_RTOL

#: ISLS support-vector threshold (004 §4: a pattern is a SV when |alpha_i| > 1e-6), times max(1, max|y|).
SV_ATOL = 1e-6


@dataclass
class Residuals:
    """What :mod:`svmref.verify.kkt` computes from one answer.

    Attributes
    ----------
    objective : float
        The formulation's objective at the answer, in the sense its reference reports
        (a minimisation dual for the box duals, ISLS and RLS primal; the maximised W of 003 eq. (10)).
    primal_objective : float
        Objective of the primal recovered from the answer (``nan`` if not applicable).
    values : dict
        residual name -> value (see module docstring; ``nan`` n/a, ``inf`` cannot be computed).
    where : dict
        residual name -> a sentence naming the worst offender (``"alpha_17 = -0.31 is outside [0, C = 1]"``).
    b : float or None
        The bias used (given by the solver or derived).
    b_derived : bool
        True when the solver gave no ``b`` and verify derived it from the KKT conditions.
    b_unique : bool
        Whether the KKT conditions determine ``b`` uniquely (some ``alpha_i`` strictly inside its box).
    coef : ndarray
        Decision coefficients: ``f(x) = sum_i coef_i k(x_i, x) + b`` (support features: ``f(x) = coef'x + b``).
    notes : list of str
        Anything the reader should know (b derived, degenerate answers, ...).
    b_low, b_high : float
        The KKT interval ``[m, M]`` of the bias (:func:`b_interval`; ``nan`` where not computed): with the
        dual optimal, every ``b`` in it is optimal (``m > M`` by round-off when ``b`` is unique).
    """

    objective: float
    primal_objective: float
    values: dict
    where: dict
    b: float | None
    b_derived: bool = False
    b_unique: bool = True
    coef: np.ndarray | None = None
    notes: list = field(default_factory=list)
    b_low: float = float("nan")
    b_high: float = float("nan")


def _nan_values() -> dict:
    return {k: float("nan") for k in RESIDUALS}


def _rel(num: float, *scales: float) -> float:
    den = max([abs(s) for s in scales if np.isfinite(s)] + [1e-12])
    return abs(num) / den


# ---------------------------------------------------------------------------------------------
# The box-constrained duals: L1, L2, LS, Least 1-Norm (000 eqs. (2), (5)) and LS-SVM regression
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class BoxDual:
    """One member of the family ``min 1/2 v'Ktilde v + p'alpha  s.t.  e'alpha = 0, l <= alpha <= u``.

    ``v = alpha * y`` and ``e = y``, ``p = -1`` for classification; ``v = alpha``, ``e = 1``, ``p = -y``
    for regression. ``Ktilde = K + I/C`` when ``shift`` (L2, LS; 000 eq. (2)), else ``K``.
    ``lower``/``upper`` are the bounds in units of ``C`` (``-inf``/``inf`` when absent).
    ``loss`` names the slack term of the primal (``hinge``, ``squared_hinge``, ``squared``, ``absolute``).
    ``constraint``: ``(left-hand side, requirement)`` of the primal constraint that no finite bound
    absorbs, as the primal feasibility residual names it (empty when the bounds absorb every sign);
    ``complementarity_cite``: the paper's equation of the complementarity conditions, where it has one.
    """

    name: str
    lower: float
    upper: float
    shift: bool
    loss: str
    regression: bool = False
    cite: str = ""
    constraint: tuple = ()
    complementarity_cite: str = ""


#: The five box-constrained duals (bounds in units of C).
BOX_DUALS: dict[str, BoxDual] = {
    "l1_svm": BoxDual("l1_svm", 0.0, 1.0, False, "hinge", cite="003 eqs. (2)-(3); 000 Table 1"),
    "l2_svm": BoxDual("l2_svm", 0.0, np.inf, True, "squared_hinge", cite="000 §1, Table 1",
                      constraint=("y_i f(x_i) - 1 + alpha_i/C", "the L2-SVM constraint y_i f(x_i) >= 1 - xi_i, "
                                  "xi_i = alpha_i/C, requires >= 0")),
    "ls_svm": BoxDual("ls_svm", -np.inf, np.inf, True, "squared", cite="000 eqs. (1), (2), (7)",
                      constraint=("y_i f(x_i) - 1 + alpha_i/C", "000 eq. (7) requires 0")),
    "least_1norm_svm": BoxDual("least_1norm_svm", -1.0, 1.0, False, "absolute", cite="000 eqs. (3)-(6)",
                               complementarity_cite=" (000 eq. (6))"),
    "ls_svm_regression": BoxDual("ls_svm_regression", -np.inf, np.inf, True, "squared", True,
                                 cite="004 eqs. (1)-(2)", constraint=("f(x_i) + alpha_i/C - y_i", "004 system (2) requires 0")),
}


def b_interval(g: np.ndarray, e: np.ndarray, alpha: np.ndarray, lo: float, hi: float, eps: float):
    """The interval ``[m, M]`` of biases that satisfy the KKT conditions, and the free set.

    With ``g`` the gradient of the (minimised) dual and ``s_i = g_i + e_i b`` the Lagrangian's
    derivative in ``alpha_i``, optimality asks ``s_i >= 0`` where ``alpha_i`` can grow (``alpha_i < u``)
    and ``s_i <= 0`` where it can shrink (``alpha_i > l``). For ``e_i = +-1`` this reads
    ``b >= -e_i g_i`` on ``I_up = {e_i = +1, alpha_i < u} U {e_i = -1, alpha_i > l}`` and
    ``b <= -e_i g_i`` on ``I_low = {e_i = +1, alpha_i > l} U {e_i = -1, alpha_i < u}``, so

        m = max_{I_up} -e_i g_i,   M = min_{I_low} -e_i g_i,

    and the b-free optimality condition is ``m <= M``: the maximal violating pair criterion of
    LIBSVM (Fan, Chen & Lin 2005) and of 000 eqs. (10) (LS-SVM: every index is in both sets, so
    ``m - M = max_i - min_i``) and (11) (Least 1-Norm, sets ``I_U, I_L`` of (8)). "At a bound" is
    tested up to ``eps`` (an eps-active set). Returns ``(m, M, i_m, i_M, free)``.
    """
    up = alpha < hi - eps
    down = alpha > lo + eps
    I_up = ((e > 0) & up) | ((e < 0) & down)
    I_low = ((e > 0) & down) | ((e < 0) & up)
    score = -e * g
    m, i_m = -np.inf, -1
    M, i_M = np.inf, -1
    if np.any(I_up):
        idx = np.flatnonzero(I_up)
        i_m = int(idx[np.argmax(score[idx])])
        m = float(score[i_m])
    if np.any(I_low):
        idx = np.flatnonzero(I_low)
        i_M = int(idx[np.argmin(score[idx])])
        M = float(score[i_M])
    free = up & down
    return m, M, i_m, i_M, free


def _derive_b(g, e, free, m, M):
    """LIBSVM's rule: mean of ``-e_i g_i`` over the free ``alpha_i``; else the midpoint of ``[m, M]``."""
    if np.any(free):
        return float(np.mean(-e[free] * g[free])), True
    if np.isfinite(m) and np.isfinite(M):
        return 0.5 * (m + M), bool(m >= M)
    if np.isfinite(m):
        return m, False
    if np.isfinite(M):
        return M, False
    return 0.0, False


def _given_or_derived_b(b, g, e, free, m, M, notes: list, what: str):
    """``(b, b_unique)``: the given ``b``, or LIBSVM's rule (:func:`_derive_b`) when ``b`` is None, with a note
    saying so. ``b_unique``: whether the KKT conditions pin ``b`` down (a free variable, or ``m >= M``)."""
    if b is None:
        b, b_unique = _derive_b(g, e, free, m, M)
        notes.append(f"b was not given: derived from the KKT conditions as b = {b:.6g} "
                     + (f"(mean over the free {what})" if np.any(free) else "(midpoint of the KKT interval)"))
        return b, b_unique
    return float(b), bool(np.any(free)) or bool(np.isfinite(m) and np.isfinite(M) and m >= M)


def box_dual_residuals(name: str, K: np.ndarray, y: np.ndarray, C: float, alpha: np.ndarray, b: float | None,
                       eps: float = EPS_ACTIVE) -> Residuals:
    r"""Residuals of the box-constrained duals at ``(alpha, b)``.

    Formulas (``f = K v + b`` the decision values on the training set, ``t = alpha / C``):

    * dual objective (000 eqs. (2), (5); L2 derived in ``svmref.formulations.svm``):
      ``D(alpha) = 1/2 v' Ktilde v + p' alpha`` (``= 1/2 sum_ij alpha_i alpha_j y_i y_j Ktilde_ij - sum_i alpha_i``);
    * gradient ``g = y * (Ktilde v) - 1`` (classification), ``g = Ktilde alpha - y`` (regression), and
      ``s_i = g_i + e_i b`` the derivative of the Lagrangian ``D + b e'alpha - ...`` in ``alpha_i``;
      classification: ``s_i = y_i f(x_i) - 1 + [alpha_i / C if L2/LS]`` (000 eqs. (6), (7));
      regression: ``s_i = f(x_i) - y_i + alpha_i / C`` (004 system (2));
    * ``box = max_i max(l - alpha_i, alpha_i - u, 0) / C``;
    * ``equality = |e' alpha| / sum_i |alpha_i|`` (``sum_i alpha_i y_i = 0``, resp. ``sum_i alpha_i = 0``);
    * a bound that is finite carries a multiplier ``nu >= 0`` that absorbs the sign of ``s_i`` it allows
      (``s_i > 0`` at ``l``, ``s_i < 0`` at ``u``); what no finite bound can absorb is a violated primal
      constraint: ``primal_feasibility = max_i ([l = -inf] max(s_i, 0) + [u = inf] max(-s_i, 0))``.
      For L2 this is ``y_i f(x_i) >= 1 - xi_i`` with ``xi_i = alpha_i / C``; for LS (and regression) the
      equality (7) ``y_i f(x_i) = 1 - alpha_i / C``; for L1 and Least 1-Norm the recovered slacks are
      the optimal ones for ``(W, b)`` and this is 0 by construction;
    * ``complementarity = max_i ([l finite] |t_i - l/C| max(s_i, 0) + [u finite] |u/C - t_i| max(-s_i, 0))``,
      i.e. multiplier x slack in margin units: L1 ``alpha_i (y_i f_i - 1 + xi_i) = 0`` and
      ``(C - alpha_i) xi_i = 0``; Least 1-Norm 000 eq. (6) (``s_i > 0`` needs ``alpha_i = -C``,
      ``s_i < 0`` needs ``alpha_i = C``); L2 ``alpha_i (y_i f_i - 1 + xi_i) = 0``;
    * ``stationarity = max(0, m - M)`` of :func:`b_interval`;
    * primal feasibility, complementarity and stationarity are relative to the size of the terms
      that make up ``f(x_i)``: ``f_scale = max(1, max_i |y_i|, max_i sum_j |K_ij v_j| + |alpha_i|/C)``
      (a relative criterion as OSQP's ``eps_rel``): a solver that stores K in single precision, as
      LIBSVM's kernel cache does, is accurate to about 1e-7 of that, not of 1;
    * ``kkt_absolute``: the largest of those three before dividing by ``f_scale`` (checked at
      ``sqrt(tol)``: relative residuals alone would excuse a margin error of 1 when ``f_scale = 1e8``);
    * ``eps`` (in units of C) is the eps-active threshold: ``alpha_i`` within ``eps C`` of a bound is at it;
    * recovered primal (000 eqs. (1), (3); 003 eq. (2); L2 000 §1; regression 004 eq. (1)), with the
      slack ``xi_i = 1 - y_i f(x_i)`` (resp. ``y_i - f(x_i)``) that is optimal for ``(W, b)``:
      ``P = 1/2 v'Kv + C sum max(xi, 0)`` (L1), ``C/2 sum max(xi, 0)^2`` (L2), ``C/2 sum xi^2`` (LS),
      ``C sum |xi|`` (Least 1-Norm); strong duality ``p* = -d*`` so
      ``duality_gap = (P + D) / max(|P|, |D|, mag)`` with ``mag = 1/2 v'Kv + C sum |xi|`` (resp.
      ``C/2 sum xi^2``) ``+ sum |p_i alpha_i| + ||alpha||^2/(2C)``: the size of the terms, since
      ``P + D`` is a sum of N per-pattern complementarity terms (for L1,
      ``P + D = sum_i alpha_i max(s_i, 0) + (C - alpha_i) max(-s_i, 0)`` when ``e'alpha = 0``);
    """
    spec = BOX_DUALS[name]
    p = _box_point(spec, K, y, C, np.asarray(alpha, dtype=float))
    m, M, i_m, i_M, free = b_interval(p.g, p.e, p.alpha, p.lo, p.hi, eps * p.a_scale)
    notes = []
    b_derived = b is None
    b, b_unique = _given_or_derived_b(b, p.g, p.e, free, m, M, notes, "alpha_i")
    s = p.g + p.e * b
    vals = _nan_values()
    where: dict[str, str] = {}
    _box_feasibility(p, vals, where)
    absolute = _margin_residuals(p, s, b, vals, where)
    # stationarity: b-free maximal violating pair
    gap = max(0.0, m - M) if np.isfinite(m) and np.isfinite(M) else 0.0
    vals["stationarity"] = gap / p.f_scale
    where["stationarity"] = (f"maximal violating pair ({i_m}, {i_M}): m - M = {m - M:.3g} > 0 "
                             "(000 eqs. (10)-(11): max over I_up minus min over I_low of -e_i grad_i)")
    absolute.append(gap / p.y_scale)
    vals["kkt_absolute"] = max(absolute)
    where["kkt_absolute"] = (f"a KKT residual of {max(absolute):.3g} in margin units"
                             + (" (units of y / max(1, max|y|))" if spec.regression else "")
                             + f", not relative to f_scale = {p.f_scale:.3g}: the margins themselves are off")
    P = _box_duality_gap(p, b, vals, where)
    return Residuals(p.D, P, vals, where, b, b_derived, b_unique, p.v.copy(), notes, b_low=m, b_high=M)


@dataclass
class _BoxPoint:
    """A box dual at ``alpha`` (see :func:`box_dual_residuals`): bounds ``[lo, hi]``, signs ``e``,
    ``v`` (``alpha * y`` or ``alpha``), ``Kv``, the shift ``alpha / C`` of ``Ktilde``, the gradient ``g``,
    the dual objective ``D`` and the scales of the margins (``y_scale``, ``a_scale``, ``f_scale``)."""

    spec: BoxDual
    C: float
    y: np.ndarray
    alpha: np.ndarray
    lo: float
    hi: float
    e: np.ndarray
    v: np.ndarray
    y_scale: float
    a_scale: float
    Kv: np.ndarray
    shift: np.ndarray
    f_scale: float
    g: np.ndarray
    D: float


def _box_point(spec: BoxDual, K: np.ndarray, y: np.ndarray, C: float, alpha: np.ndarray) -> _BoxPoint:
    """The dual objective and gradient of 000 eqs. (2), (5) (004 eq. (2) for regression) at ``alpha``."""
    N = K.shape[0]
    lo, hi = spec.lower * C, spec.upper * C
    if spec.regression:
        e = np.ones(N)
        v = alpha
        y_scale = max(1.0, float(np.max(np.abs(y))))
    else:
        e = y
        v = alpha * y
        y_scale = 1.0
    a_scale = C * y_scale  # alpha / a_scale is in the units of the margin
    Kv = K @ v
    shift = alpha / C if spec.shift else np.zeros(N)
    f_scale = max(y_scale, float(np.max(np.abs(K) @ np.abs(v) + np.abs(shift))))
    if spec.regression:
        g = Kv + shift - y
        D = 0.5 * float(v @ Kv) + 0.5 * float(alpha @ shift) - float(y @ alpha)
    else:
        g = y * Kv + shift - 1.0
        D = 0.5 * float(v @ Kv) + 0.5 * float(alpha @ shift) - float(np.sum(alpha))
    return _BoxPoint(spec, C, y, alpha, lo, hi, e, v, y_scale, a_scale, Kv, shift, f_scale, g, D)


def _box_feasibility(p: _BoxPoint, vals: dict, where: dict) -> None:
    """Dual feasibility (000 eq. (5); 004 eq. (2)): the box ``l <= alpha <= u`` (relative to C) and the
    equality ``e'alpha = 0``."""
    alpha, lo, hi, C = p.alpha, p.lo, p.hi, p.C
    if np.isfinite(lo) or np.isfinite(hi):
        viol = np.maximum(np.maximum(lo - alpha, alpha - hi), 0.0) / C
        i = int(np.argmax(viol))
        vals["box"] = float(viol[i])
        where["box"] = (f"alpha_{i} = {alpha[i]:.6g} is outside [{_fmt(lo)}, {_fmt(hi)}] (C = {C:g})")
    else:
        vals["box"] = float("nan")
    eq = float(p.e @ alpha)
    vals["equality"] = _rel(eq, float(np.sum(np.abs(alpha)))) if np.any(alpha) else 0.0
    where["equality"] = (f"sum_i alpha_i = {eq:.3g}, not 0" if p.spec.regression
                         else f"sum_i alpha_i y_i = {eq:.3g}, not 0") + f" (sum_i |alpha_i| = {np.sum(np.abs(alpha)):.3g})"


def _margin_residuals(p: _BoxPoint, s: np.ndarray, b: float, vals: dict, where: dict) -> list:
    """Primal feasibility (what no finite bound absorbs of ``s``; 000 eq. (7), 004 system (2)) and
    complementarity (multiplier x slack; 000 eq. (6)); returns both in margin units, not relative, for
    ``kkt_absolute``."""
    spec, alpha, lo, hi = p.spec, p.alpha, p.lo, p.hi
    N = alpha.shape[0]
    unabs = np.zeros(N)
    if not np.isfinite(lo):
        unabs += np.maximum(s, 0.0)
    if not np.isfinite(hi):
        unabs += np.maximum(-s, 0.0)
    i = int(np.argmax(unabs))
    absolute = [float(unabs[i]) / p.y_scale]
    unabs /= p.f_scale
    vals["primal_feasibility"] = float(unabs[i])
    if spec.constraint:
        lhs, requirement = spec.constraint
        where["primal_feasibility"] = f"pattern {i}: {lhs} = {s[i]:.3g} ({requirement})"
    t = alpha / p.a_scale
    comp = np.zeros(N)
    if np.isfinite(lo):
        comp += np.abs(t - lo / p.a_scale) * np.maximum(s, 0.0)
    if np.isfinite(hi):
        comp += np.abs(hi / p.a_scale - t) * np.maximum(-s, 0.0)
    if np.isfinite(lo) or np.isfinite(hi):
        absolute.append(float(np.max(comp)) / p.y_scale)
        comp /= p.f_scale
        i = int(np.argmax(comp))
        vals["complementarity"] = float(comp[i])
        need = "alpha_i = " + (_fmt(lo) if s[i] > 0 else _fmt(hi))
        where["complementarity"] = (f"pattern {i}: alpha_{i} = {alpha[i]:.6g} but y_i f(x_i) - 1"
                                    + (" + alpha_i/C" if spec.shift else "")
                                    + f" = {s[i]:.3g} (with b = {b:.6g}); a nonzero margin residual needs {need}"
                                    + spec.complementarity_cite)
    return absolute


def _box_duality_gap(p: _BoxPoint, b: float, vals: dict, where: dict) -> float:
    """The primal recovered from ``(alpha, b)`` (000 eqs. (1), (3); 003 eq. (2); 004 eq. (1)) and its gap to
    the dual, relative to the size of the terms; returns P."""
    spec, y, C, alpha = p.spec, p.y, p.C, p.alpha
    f_train = p.Kv + b
    xi = (y - f_train) if spec.regression else (1.0 - y * f_train)
    reg = 0.5 * float(p.v @ p.Kv)
    if spec.loss == "hinge":
        P = reg + C * float(np.sum(np.maximum(xi, 0.0)))
    elif spec.loss == "squared_hinge":
        P = reg + 0.5 * C * float(np.sum(np.maximum(xi, 0.0) ** 2))
    elif spec.loss == "squared":
        P = reg + 0.5 * C * float(np.sum(xi**2))
    else:
        P = reg + C * float(np.sum(np.abs(xi)))
    # relative to the magnitude of the objectives' terms (a sum of N per-pattern complementarity terms)
    loss_abs = (C * float(np.sum(np.abs(xi))) if spec.loss in ("hinge", "absolute")
                else 0.5 * C * float(np.sum(xi**2)))
    mag = reg + loss_abs + float(np.sum(np.abs(alpha * (y if spec.regression else 1.0)))) + 0.5 * float(alpha @ p.shift)
    D = p.D
    vals["duality_gap"] = _rel(P + D, P, D, mag)
    where["duality_gap"] = f"recovered primal P = {P:.10g}, dual -D = {-D:.10g}: P - (-D) = {P + D:.3g}"
    return P


def _fmt(x: float) -> str:
    return "inf" if x == np.inf else "-inf" if x == -np.inf else f"{x:g}"


# ---------------------------------------------------------------------------------------------
# RLS (001)
# ---------------------------------------------------------------------------------------------


def rls_residuals(K: np.ndarray, y: np.ndarray, gamma: float, c: np.ndarray) -> Residuals:
    r"""Residuals of RLS at ``c`` (001 eqs. (7)-(9)).

    * objective (001, eq. (7) with ``f = sum_i c_i K(x_i, .)``): ``J(c) = (1/m)||y - Kc||^2 + gamma c'Kc``;
    * ``stationarity = ||(m gamma I + K) c - y||_inf / max(1, ||y||_inf, max_i sum_j |K_ij c_j| + m gamma |c_i|)``:
      the system (8) (relative to the size of its terms), which has a
      unique solution; it implies ``grad J = (2/m) K ((K + m gamma I) c - y) = 0``;
    * dual (derived in ``svmref.formulations.rls``): ``min (m/4)||a||^2 + a'Ka/(4 gamma) - y'a`` with
      ``a = 2 gamma c`` at the optimum; ``duality_gap = (J(c) + D(2 gamma c)) / max(|J|, |D|)``;
    * box, equality, primal feasibility and complementarity: not applicable (no constraints).
    """
    c = np.asarray(c, dtype=float)
    m = K.shape[0]
    Kc = K @ c
    J = float(np.sum((y - Kc) ** 2)) / m + gamma * float(c @ Kc)
    r = Kc + m * gamma * c - y
    y_scale = max(1.0, float(np.max(np.abs(y))), float(np.max(np.abs(K) @ np.abs(c) + m * gamma * np.abs(c))))
    vals = _nan_values()
    where = {}
    i = int(np.argmax(np.abs(r)))
    vals["stationarity"] = float(abs(r[i])) / y_scale
    vals["kkt_absolute"] = float(abs(r[i])) / max(1.0, float(np.max(np.abs(y))))
    where["kkt_absolute"] = f"row {i} of (m gamma I + K) c = y (001 eq. (8)): residual {r[i]:.3g} in the units of y"
    where["stationarity"] = f"row {i} of (m gamma I + K) c = y (001 eq. (8)): residual {r[i]:.3g}"
    a = 2.0 * gamma * c
    D = m / 4.0 * float(a @ a) + float(a @ (K @ a)) / (4.0 * gamma) - float(y @ a)
    vals["duality_gap"] = _rel(J + D, J, D)
    where["duality_gap"] = f"J(c) = {J:.10g}, dual at a = 2 gamma c gives -D = {-D:.10g}"
    return Residuals(J, J, vals, where, 0.0, False, True, c.copy(), [])


# ---------------------------------------------------------------------------------------------
# Sparse LS-SVM (004, eq. (3) and Algorithm 1)
# ---------------------------------------------------------------------------------------------


def sparse_ls_svm_residuals(K: np.ndarray, y: np.ndarray, C: float, alpha: np.ndarray, b: float | None) -> Residuals:
    r"""Residuals of the ISLS-SVM fixed point (004, eq. (3) and Algorithm 1) at ``(alpha, b)``.

    Problem (3) is convex for *fixed* weights; the whole procedure is not. What can be checked is
    that ``(alpha, b)`` is a fixed point of Algorithm 1, i.e. that it solves (3) for the weights it
    implies, ``lam_i = 1/alpha_i^2``.

    Support vectors: ``|alpha_i| > SV_ATOL * y_scale`` (004 §4 counts a pattern as a SV when
    ``|alpha_i| > 1e-6``; ``y_scale = max(1, max|y|)``). The others are taken as exactly 0
    (``lam_i = inf``: Algorithm 1 sends them to 0 quadratically, ``alpha_i <- alpha_i^2 (K beta)_i``),
    which keeps (3) continuous: ``lam_i alpha_i^2 = 1`` for every nonzero ``alpha_i``, however small.

    The KKT conditions of (3) (004 §3) at the pruned ``alpha``, with ``xi = y - K alpha - b`` (the
    constraint, so primal feasibility holds by construction) and ``beta = C xi``:

    * ``dL/db = 0``: ``sum_i beta_i = 0``; ``equality = |sum_i xi_i| / sum_i |xi_i|``
      (when ``b`` is not given it is the value that satisfies it, ``b = mean(y - K alpha)``);
    * ``dL/dalpha_i = 0``: ``lam_i alpha_i = (K beta)_i``; multiplied by ``alpha_i^2`` so that
      ``alpha_i = 0`` (``lam_i = inf``) is allowed: ``alpha_i = alpha_i^2 (K beta)_i``, which is exactly
      the update ``alpha <- diag(lam)^-1 K beta`` of Algorithm 1 holding still;
      ``stationarity = max_i |alpha_i - alpha_i^2 (K beta)_i| / max_i |alpha_i|``;
    * objective of (3) at the implied weights: ``P = 1/2 sum_SV lam_i alpha_i^2 + C/2 ||xi||^2
      = #SV/2 + C/2 ||xi||^2``; its dual (``svmref.formulations.sparse_ls_svm``)
      ``D(beta) = 1/2 beta'(K diag(alpha^2) K + I/C) beta - y'beta`` (``diag(lam)^-1 = diag(alpha^2)``);
      ``duality_gap = (P + D(C xi)) / max(|P|, |D|)``.
    """
    alpha = np.asarray(alpha, dtype=float)
    N = K.shape[0]
    y_scale = max(1.0, float(np.max(np.abs(y))))
    sv = np.abs(alpha) > SV_ATOL * y_scale
    notes = []
    if np.any(alpha[~sv] != 0.0):
        notes.append(f"{int(np.sum((alpha != 0) & ~sv))} coefficient(s) with 0 < |alpha_i| <= {SV_ATOL:g} "
                     "taken as 0 (not support vectors, 004 §4)")
    alpha = np.where(sv, alpha, 0.0)
    Ka = K @ alpha
    b_derived = b is None
    if b is None:
        b = float(np.mean(y - Ka))
        notes.append(f"b was not given: derived from sum_i beta_i = 0 (004 §3) as b = {b:.6g}")
    b = float(b)
    xi = y - Ka - b
    beta = C * xi
    vals = _nan_values()
    where = {}
    vals["primal_feasibility"] = 0.0
    eq = float(np.sum(xi))
    vals["equality"] = _rel(eq, float(np.sum(np.abs(xi)))) if np.any(xi) else 0.0
    where["equality"] = f"sum_i beta_i = C sum_i xi_i = {C * eq:.3g}, not 0 (004 §3, dL/db = 0)"
    a2 = alpha**2
    Kb = K @ beta
    st = np.abs(alpha - a2 * Kb)
    amax = float(np.max(np.abs(alpha))) if N else 0.0
    i = int(np.argmax(st))
    vals["stationarity"] = float(st[i]) / amax if amax > 0 else 0.0
    where["stationarity"] = (f"alpha_{i} = {alpha[i]:.6g} but one step of Algorithm 1 with lam = 1/alpha^2 "
                             f"gives {a2[i] * Kb[i]:.6g} (not a fixed point of 004 Algorithm 1)")
    P = 0.5 * int(np.sum(sv)) + 0.5 * C * float(xi @ xi)
    D = 0.5 * float(Kb @ (a2 * Kb)) + 0.5 / C * float(beta @ beta) - float(y @ beta)
    vals["duality_gap"] = _rel(P + D, P, D)
    where["duality_gap"] = f"P = {P:.10g} (of (3) at lam = 1/alpha^2), dual -D(C xi) = {-D:.10g}"
    if amax == 0.0:
        notes.append("alpha is identically 0: the trivial fixed point (Algorithm 1 reaches it when C is small)")
    return Residuals(P, P, vals, where, b, b_derived, True, alpha.copy(), notes)


# ---------------------------------------------------------------------------------------------
# Support features machine (003)
# ---------------------------------------------------------------------------------------------


def soft_threshold_a(X: np.ndarray, y: np.ndarray, lam: np.ndarray, mu: float) -> np.ndarray:
    """003, eq. (8): ``a_i = sign(w_i) max(0, |w_i| - mu) / (2(1 - mu))`` with ``w = X'(lam * y)`` (eq. (6)).

    (The extraction's ``a_i = (|w_i| - mu)/|w_i| w_i`` lost the factor ``1/(2(1 - mu))``; rebuilt
    from the three cases of (8).)
    """
    w = X.T @ (lam * y)
    return np.sign(w) * np.maximum(0.0, np.abs(w) - mu) / (2.0 * (1.0 - mu))


def support_features_residuals(X, y, C, mu, lam=None, a=None, b=None, eps: float = EPS_ACTIVE) -> Residuals:
    r"""Residuals of the support features machine (003) at whatever the solver gave.

    * dual (003, eq. (10)), maximised: ``W(lam) = sum_j lam_j - 1/(4(1-mu)) sum_i max(0, |w_i| - mu)^2``,
      ``w = X'(lam * y)`` (eq. (6)); its gradient is ``dW/dlam_j = 1 - y_j x_j'a(lam)`` with ``a(lam)``
      of eq. (8) (003 §2.6), so ``g = y * (X a(lam)) - 1`` is the gradient of ``-W`` and the box
      residuals, ``b`` interval and maximal violating pair are those of the L1-SVM with ``W = a``;
    * primal (003, eq. (5)): ``P(a, b) = sum_i ((1-mu) a_i^2 + mu |a_i|) + C sum_j max(0, 1 - y_j(a'x_j + b))``;
    * with ``lam`` and ``a`` both given, ``stationarity`` also takes ``max_i |a_i - a_i(lam)| / max(1, max|a(lam)|)``
      (the subgradient condition ``0 in 2(1-mu) a_i + mu d|a_i| - w_i`` solved by (8));
    * complementarity (003 §2.3): ``lam_j (y_j(a'x_j + b) - 1 + delta_j) = 0``, ``(C - lam_j) delta_j = 0``,
      in margin units as for the L1-SVM;
    * ``duality_gap = (P - W) / max(|P|, |W|, mag)`` (``p* = W*``), ``mag`` the size of the terms
      ``sum((1-mu) a^2 + mu|a|) + C sum_j |1 - y_j(a'x_j + b)| + sum_j lam_j``;
    * stationarity and complementarity are relative to ``f_scale = max(1, max_j sum_i |x_ji a_i|)``.

    With only ``a, b`` (a primal answer) the dual residuals are ``inf``-free ``nan`` (not applicable) and the
    objective is ``P``; with ``lam`` the objective is ``W(lam)``.
    """
    vals = _nan_values()
    where: dict[str, str] = {}
    notes = []
    if lam is not None:
        lam = np.asarray(lam, dtype=float)
        a, b, Wd, m, M, b_derived, b_unique = _features_dual(X, y, C, mu, lam, a, b, eps, vals, where, notes)
    else:
        m = M = float("nan")
        if a is None:
            raise ValueError("the answer has neither lam nor a")
        a = np.asarray(a, dtype=float)
        if b is None:
            raise ValueError("a primal answer (a without lam) needs b")
        Wd = float("nan")
        b_derived, b_unique = False, True
    a = np.asarray(a, dtype=float)
    b = float(b)
    vals["primal_feasibility"] = 0.0  # delta_j = max(0, 1 - y_j(a'x_j + b)) is feasible by construction
    delta = np.maximum(0.0, 1.0 - y * (X @ a + b))
    P = float(np.sum((1.0 - mu) * a**2 + mu * np.abs(a))) + C * float(np.sum(delta))
    if lam is not None:
        # relative to the size of the terms (P - W is a sum of N complementarity terms, as for the L1-SVM)
        mag = float(np.sum((1.0 - mu) * a**2 + mu * np.abs(a))) + C * float(np.sum(np.abs(1.0 - y * (X @ a + b)))) \
            + float(np.sum(np.abs(lam)))
        vals["duality_gap"] = _rel(P - Wd, P, Wd, mag)
        where["duality_gap"] = f"primal (5) P = {P:.10g}, dual (10) W = {Wd:.10g}"
        obj = Wd
    else:
        obj = P
    return Residuals(obj, P, vals, where, b, b_derived, b_unique, a.copy(), notes, b_low=m, b_high=M)


def _features_dual(X, y, C, mu, lam, a, b, eps, vals: dict, where: dict, notes: list):
    """The dual residuals of the support features machine at ``lam`` (003 eqs. (6), (8), (10), §2.3; see
    :func:`support_features_residuals`). Returns ``(a, b, W, m, M, b_derived, b_unique)`` with ``a`` and ``b``
    recovered from ``lam`` where not given."""
    a_given = a is not None
    b_derived = False
    a_lam = soft_threshold_a(X, y, lam, mu)
    w = X.T @ (lam * y)
    Wd = float(np.sum(lam)) - float(np.sum(np.maximum(0.0, np.abs(w) - mu) ** 2)) / (4.0 * (1.0 - mu))
    g = y * (X @ a_lam) - 1.0
    m, M, i_m, i_M, free = b_interval(g, y, lam, 0.0, C, eps * C)
    f_scale = max(1.0, float(np.max(np.abs(X) @ np.abs(a_lam))))
    if b is None:
        b, b_unique = _derive_b(g, y, free, m, M)
        b_derived = True
        notes.append(f"b was not given: derived from the KKT conditions as b = {b:.6g}")
    else:
        b_unique = bool(np.any(free)) or (np.isfinite(m) and np.isfinite(M) and m >= M)
    if a is None:
        a = a_lam
        notes.append("a was not given: recovered from lam by 003 eq. (8)")
    viol = np.maximum(np.maximum(-lam, lam - C), 0.0) / C
    i = int(np.argmax(viol))
    vals["box"] = float(viol[i])
    where["box"] = f"lam_{i} = {lam[i]:.6g} is outside [0, {C:g}] (C = {C:g})"
    eq = float(y @ lam)
    vals["equality"] = _rel(eq, float(np.sum(np.abs(lam)))) if np.any(lam) else 0.0
    where["equality"] = f"sum_j y_j lam_j = {eq:.3g}, not 0 (003 eq. (10))"
    gap = max(0.0, m - M) if np.isfinite(m) and np.isfinite(M) else 0.0
    vals["stationarity"] = gap / f_scale
    absolute = [gap]
    where["stationarity"] = f"maximal violating pair ({i_m}, {i_M}) of dual (10): m - M = {m - M:.3g} > 0"
    if a_given:
        a = np.asarray(a, dtype=float)
        da = np.abs(a - a_lam) / max(1.0, float(np.max(np.abs(a_lam))))
        i = int(np.argmax(da))
        if da[i] > vals["stationarity"]:
            vals["stationarity"] = float(da[i])
            where["stationarity"] = (f"a_{i} = {a[i]:.6g} but 003 eq. (8) at the given lam gives {a_lam[i]:.6g}")
    s = y * (X @ a + b) - 1.0
    t = lam / C
    comp = (t * np.maximum(s, 0.0) + np.abs(1.0 - t) * np.maximum(-s, 0.0))
    absolute.append(float(np.max(comp)))
    vals["kkt_absolute"] = max(absolute)
    where["kkt_absolute"] = (f"a KKT residual of {max(absolute):.3g} in margin units, not relative to "
                             f"f_scale = {f_scale:.3g}: the margins themselves are off")
    comp = comp / f_scale
    i = int(np.argmax(comp))
    vals["complementarity"] = float(comp[i])
    where["complementarity"] = (f"pattern {i}: lam_{i} = {lam[i]:.6g} but y_i(a'x_i + b) - 1 = {s[i]:.3g} "
                                f"(with b = {b:.6g}; 003 §2.3)")
    return a, b, Wd, m, M, b_derived, b_unique


# ---------------------------------------------------------------------------------------------
# epsilon-SVR (Vapnik; LIBSVM's epsilon-SVR)
# ---------------------------------------------------------------------------------------------


def svr_residuals(K: np.ndarray, y: np.ndarray, hyper: dict, answer: dict, eps: float = EPS_ACTIVE) -> Residuals:
    r"""Residuals of the epsilon-SVR dual at ``(beta, b)``, ``beta = alpha^+ - alpha^-`` (length N).

    The dual (derivation in ``docs/formulations/svr.md``; Vapnik's SVM recalled in 002, written as
    LIBSVM's ``solve_epsilon_svr``), a minimisation::

        min 1/2 (a+ - a-)'K(a+ - a-) + epsilon sum(a+ + a-) - y'(a+ - a-)
        s.t. sum(a+ - a-) = 0,  0 <= a+_i, a-_i <= C,

    is evaluated at the split ``a+ = max(beta, 0)``, ``a- = max(-beta, 0)`` (``a+_i a-_i = 0`` at any
    optimum with ``epsilon > 0``, and the best split for ``epsilon = 0``), i.e.
    ``D(beta) = 1/2 beta'K beta + epsilon ||beta||_1 - y'beta``. With ``r_i = y_i - f(x_i)``,
    ``f = K beta + b``:

    * ``box = max_i max(|beta_i| - C, 0) / C`` (``-C <= beta_i <= C``);
    * ``equality = |sum_i beta_i| / sum_i |beta_i|``;
    * the 2N-variable problem (signs ``s = [+1; -1]``, gradient ``g = [K beta + epsilon - y;
      -(K beta) + epsilon + y]``) gives the b-free maximal violating pair of :func:`b_interval`:
      ``stationarity = max(0, m - M) / f_scale``; ``b`` in ``[m, M]`` means ``|r_i| <= epsilon`` where
      ``beta_i = 0``, ``r_i = +epsilon`` where ``0 < beta_i < C``, ``r_i >= epsilon`` at ``beta_i = C``
      (and the mirror for negative ``beta_i``);
    * ``complementarity`` (multiplier x slack, units of y; docs/formulations/svr.md §5):
      ``max_i (a+_i/C) max(epsilon - r_i, 0) + (1 - a+_i/C) max(r_i - epsilon, 0)`` and the mirror
      ``(a-_i/C) max(epsilon + r_i, 0) + (1 - a-_i/C) max(-r_i - epsilon, 0)``;
    * ``primal_feasibility = 0``: the recovered slacks ``xi = max(0, r - epsilon)``,
      ``xi* = max(0, -r - epsilon)`` are the optimal ones for ``(W, b)``;
    * ``f_scale = max(1, max|y|, max_i sum_j |K_ij beta_j|)`` as for the box duals; ``kkt_absolute`` is the
      largest of complementarity and stationarity over ``max(1, max|y|)`` (checked at ``sqrt(tol)``);
    * recovered primal ``P = 1/2 beta'K beta + C sum_i max(0, |r_i| - epsilon)``; strong duality ``p* = -d*``,
      ``duality_gap = (P + D) / max(|P|, |D|, mag)`` with ``mag = 1/2 beta'K beta + C sum(xi + xi*)
      + epsilon ||beta||_1 + sum_i |y_i beta_i|`` (``P + D = sum_i C(xi_i + xi*_i) + epsilon |beta_i| - beta_i r_i``
      when ``sum beta = 0``: N per-pattern complementarity terms).
    """
    C = float(hyper["C"])
    epsilon = float(hyper["epsilon"])
    beta = np.asarray(answer["alpha"], dtype=float)
    b = answer.get("b")
    N = K.shape[0]
    y_scale = max(1.0, float(np.max(np.abs(y)))) if N else 1.0
    Kb = K @ beta
    f_scale = max(y_scale, float(np.max(np.abs(K) @ np.abs(beta)))) if N else y_scale
    ap, am = np.maximum(beta, 0.0), np.maximum(-beta, 0.0)
    D = 0.5 * float(beta @ Kb) + epsilon * float(np.sum(np.abs(beta))) - float(y @ beta)
    # the 2N-variable engine problem: beta2 = [a+; a-], e = s = [+1; -1], g = s * (K beta) + epsilon - s * y
    s2 = np.concatenate([np.ones(N), -np.ones(N)])
    g2 = np.concatenate([Kb + epsilon - y, -Kb + epsilon + y])
    beta2 = np.concatenate([ap, am])
    m, M, i_m, i_M, free = b_interval(g2, s2, beta2, 0.0, C, eps * C)
    notes = []
    b_derived = b is None
    b, b_unique = _given_or_derived_b(b, g2, s2, free, m, M, notes, "alpha^+-_i")
    r = y - Kb - b
    vals = _nan_values()
    where: dict[str, str] = {}
    _svr_feasibility(beta, C, vals, where)
    vals["primal_feasibility"] = 0.0
    cmax = _tube_complementarity(beta, r, C, epsilon, b, f_scale, vals, where)
    gap = max(0.0, m - M) if np.isfinite(m) and np.isfinite(M) else 0.0
    vals["stationarity"] = gap / f_scale

    def _var(t):
        return "-" if t < 0 else (f"alpha^+_{t}" if t < N else f"alpha^-_{t - N}")

    where["stationarity"] = (f"maximal violating pair ({_var(i_m)}, {_var(i_M)}) of the 2N-variable dual: m - M = "
                             f"{m - M:.3g} > 0 (max over I_up minus min over I_low of -s_t grad_t)")
    vals["kkt_absolute"] = max(cmax, gap) / y_scale
    where["kkt_absolute"] = (f"a KKT residual of {vals['kkt_absolute']:.3g} in units of y / max(1, max|y|), not relative "
                             f"to f_scale = {f_scale:.3g}: the residuals y_i - f(x_i) themselves are off the tube")
    reg = 0.5 * float(beta @ Kb)
    xi_sum = float(np.sum(np.maximum(np.abs(r) - epsilon, 0.0)))
    P = reg + C * xi_sum
    mag = reg + C * xi_sum + epsilon * float(np.sum(np.abs(beta))) + float(np.sum(np.abs(y * beta)))
    vals["duality_gap"] = _rel(P + D, P, D, mag)
    where["duality_gap"] = f"recovered primal P = {P:.10g}, dual -D = {-D:.10g}: P - (-D) = {P + D:.3g}"
    return Residuals(D, P, vals, where, b, b_derived, b_unique, beta.copy(), notes, b_low=m, b_high=M)


def _svr_feasibility(beta: np.ndarray, C: float, vals: dict, where: dict) -> None:
    """Dual feasibility of epsilon-SVR: ``-C <= beta_i <= C`` (relative to C) and ``sum_i beta_i = 0``."""
    N = beta.shape[0]
    viol = np.maximum(np.abs(beta) - C, 0.0) / C
    i = int(np.argmax(viol)) if N else 0
    vals["box"] = float(viol[i]) if N else 0.0
    if N:
        where["box"] = f"alpha_{i} = alpha^+_{i} - alpha^-_{i} = {beta[i]:.6g} is outside [-{C:g}, {C:g}] (C = {C:g})"
    eq = float(np.sum(beta))
    vals["equality"] = _rel(eq, float(np.sum(np.abs(beta)))) if np.any(beta) else 0.0
    where["equality"] = f"sum_i alpha_i = {eq:.3g}, not 0 (sum_i |alpha_i| = {np.sum(np.abs(beta)):.3g})"


def _tube_complementarity(beta, r, C: float, epsilon: float, b: float, f_scale: float, vals: dict, where: dict) -> float:
    """Multiplier x slack of the epsilon tube (docs/formulations/svr.md §5, see :func:`svr_residuals`), relative to
    ``f_scale``; returns the largest in the units of y."""
    N = beta.shape[0]
    ap, am = np.maximum(beta, 0.0), np.maximum(-beta, 0.0)
    tp, tm = ap / C, am / C
    comp_p = tp * np.maximum(epsilon - r, 0.0) + np.abs(1.0 - tp) * np.maximum(r - epsilon, 0.0)
    comp_m = tm * np.maximum(epsilon + r, 0.0) + np.abs(1.0 - tm) * np.maximum(-r - epsilon, 0.0)
    comp = np.maximum(comp_p, comp_m)
    i = int(np.argmax(comp)) if N else 0
    cmax = float(comp[i]) if N else 0.0
    vals["complementarity"] = cmax / f_scale
    if N:
        need = ("alpha_i = C (r_i > epsilon)" if r[i] > epsilon else "alpha_i = -C (r_i < -epsilon)"
                if r[i] < -epsilon else ("alpha_i > 0 only where r_i = epsilon" if beta[i] > 0 else
                                         "alpha_i < 0 only where r_i = -epsilon"))
        where["complementarity"] = (f"pattern {i}: alpha_{i} = {beta[i]:.6g} but the residual r_i = y_i - f(x_i) = "
                                    f"{r[i]:.3g} (with b = {b:.6g}, epsilon = {epsilon:g}); the epsilon tube needs {need}")
    return cmax

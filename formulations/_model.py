"""The cvxpy model as written, evaluated at a returned point and at returned multipliers.

Whatever strategy computed a reference (the box dual on ``Y K Y``, a direct LAPACK solve, CLARABEL on the
model), :func:`svmref.formulations.solve` holds the model itself to it with :func:`evaluate`:

* the model's **own objective** at the returned point (``problem.objective.value``), which must lie in the
  interval the certificate proved for the optimal value;
* each constraint's **own violation** (``constraint.violation()``) relative to the constraint's scale:
  ``max_i (sum_j |A_ij x_j| + |c_i|)`` for the linearisation ``A x + c`` of ``lhs - rhs`` at the point, or the
  scale of another constraint its variables appear in when that is larger;
* the **Lagrangian** of the model as written at the returned multipliers ``lam`` (cvxpy's convention:
  ``L = s f + sum_c lam_c' expr_c``, ``s = +1`` for a minimisation and ``-1`` for a maximisation,
  ``expr_c = lhs - rhs``, ``lam_c >= 0`` for an inequality ``expr_c <= 0``): its gradient in the variables
  (stationarity), the complementarity ``sum_c |lam_c' expr_c|`` (the gap between the model's objective and
  its Lagrangian, i.e. its own dual function at ``lam`` when stationarity holds) and the signs of ``lam``.

A slip in a model (a factor ``2C`` for ``C``, a bound ``[0, C]`` for ``[-C, C]``, a dropped constraint, a sign)
moves one of these by an amount of the order of the problem's own terms, far above round-off; the floor of
evaluating them in double precision is reported with them (:attr:`ModelReport.floor`).

Stationarity at a kink of a non-smooth atom (``abs``, ``norm1``, ``pos``) is the condition ``0 in`` the
subdifferential: the gradient is taken at the point and at the point shifted by ``+-h`` in every coordinate
(``h = kink (|x_i| + max|x|)``, the max over every variable, ``kink = sqrt(tol)``: a coordinate that round-off
or the solver's accuracy keeps off a kink, e.g. a slack of ``1e-13`` that is 0 at the optimum, is seen at it;
this is the natural residual's view, in which a point within ``sqrt(tol)`` of a bound counts as at it), and a
coordinate's residual is the distance of 0 from the interval the three values span (for a separable atom that
interval is its subdifferential).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import cvxpy as cp
import numpy as np

EPS = float(np.finfo(float).eps)



@dataclass
class ModelReport:
    """The model at the point: its ``objective`` (own sense), the absolute ``floor`` of evaluating it
    (``8 n eps`` times the size of its terms, :func:`magnitude`, plus its sensitivity to the round-off of the
    variables at the scale of their constraints; ``n`` the number of scalar unknowns), the largest relative
    constraint ``violation`` and the constraint it is in (``worst``, ``"constraint k"``), and, given
    multipliers, the relative ``stationarity`` residual of the Lagrangian, the ``complementarity``
    ``sum_c |lam_c' expr_c|`` (absolute, in the objective's units) and the largest wrong-signed multiplier
    of an inequality relative to ``max |lam|`` (``dual_sign``); ``nan`` where there were no multipliers."""

    objective: float
    floor: float
    violation: float
    worst: str
    stationarity: float = float("nan")
    complementarity: float = float("nan")
    dual_sign: float = float("nan")


def _flat(v) -> np.ndarray:
    return np.atleast_1d(np.asarray(v, dtype=float)).ravel(order="F")


def _dense(G) -> np.ndarray:
    return G.toarray() if hasattr(G, "toarray") else np.atleast_2d(np.asarray(G, dtype=float))


class _Jacobians:
    """The constraints' Jacobians ``d expr_c / d x_v`` (dense), computed once for an affine constraint (they do
    not depend on the point) and at each call for the others."""

    def __init__(self, problem):
        self.problem = problem
        self._fixed = {}

    def of(self, c) -> list:
        if c.id in self._fixed:
            return self._fixed[c.id]
        out = [(var, _dense(G)) for var, G in c.expr.grad.items() if G is not None]
        if c.expr.is_affine():
            self._fixed[c.id] = out
        return out


def constraint_scale(expr, jac=None) -> float:
    """``max_i (sum_j |A_ij x_j| + |c_i|)`` for the linearisation ``A x + c`` of ``expr`` at the current point
    (``jac``: its Jacobians, ``[(variable, dense d expr / d variable)]``)."""
    val = _flat(expr.value)
    lin, mag = np.zeros_like(val), np.zeros_like(val)
    if jac is None:
        jac = [(var, _dense(G)) for var, G in expr.grad.items() if G is not None]
    for var, G in jac:
        x = _flat(var.value)
        lin += G.T @ x
        mag += np.abs(G.T) @ np.abs(x)
    return float(np.max(mag + np.abs(val - lin))) if val.size else 0.0


def magnitude(expr) -> np.ndarray:
    """The expression evaluated on the absolute values of its leaves (``|A| |x|`` for ``A x``, ``|x|'|P||x|`` for
    ``quad_form(x, P)``, a sum for a difference): the size of the terms whose floating-point sum is its value,
    which bounds the round-off of evaluating it (``n eps`` times this). An atom that cannot be rebuilt on
    absolute values counts its own absolute value."""
    if not expr.args:
        return np.abs(np.asarray(expr.value, dtype=float))
    try:
        mags = [cp.Constant(magnitude(a)) for a in expr.args]
        return np.abs(np.asarray(expr.copy(args=mags).value, dtype=float))
    except Exception:  # noqa: BLE001 - an atom that does not take constant arguments: its own size
        return np.abs(np.asarray(expr.value, dtype=float))


def _violations(problem, jacs: _Jacobians) -> tuple[float, str, dict]:
    """The largest constraint violation relative to its scale: the larger of the constraint's own
    (:func:`constraint_scale`) and those of the other constraints its variables appear in (a bound ``delta >= 0``
    on a slack whose values are all round-off is measured on the scale of the margins that define the slack).
    Returns ``(violation, where, scale of each variable's constraints)``."""
    scales = [constraint_scale(c.expr, jacs.of(c)) for c in problem.constraints]
    var_scale: dict = {}
    for c, sc in zip(problem.constraints, scales):
        for v in c.variables():
            var_scale[v.id] = max(var_scale.get(v.id, 0.0), sc)
    worst, where = 0.0, ""
    for k, (c, own) in enumerate(zip(problem.constraints, scales)):
        v = float(np.max(np.atleast_1d(c.violation())))
        s = max([own] + [var_scale[x.id] for x in c.variables()])
        rel = v / s if s > 0 else (0.0 if v == 0 else math.inf)
        if not rel <= worst:
            worst, where = rel, f"constraint {k} ({type(c).__name__})"
    return worst, where, var_scale


def _entry_scales(problem, jacs: _Jacobians, var_id, size: int) -> np.ndarray:
    """Per entry of a variable, the size of the terms of the one-per-entry constraint rows that define it (a slack
    ``xi_i`` in ``y_i f_i + xi_i >= 1``: ``1 + |f_i| + |xi_i|``), at which it is rounded; 0 for a variable that only
    appears in aggregate rows (``sum beta = 0``), whose rounding is its own size, counted in the objective's."""
    out = np.zeros(size)
    for c in problem.constraints:
        for var, G in jacs.of(c):
            if var.id != var_id or G.shape != (size, size):
                continue
            rows = np.zeros(size)
            for v2, G2 in jacs.of(c):
                rows += np.abs(G2.T) @ np.abs(_flat(v2.value))
            rows += np.abs(_flat(c.expr.value) - sum(G2.T @ _flat(v2.value) for v2, G2 in jacs.of(c)))
            d = np.abs(np.diagonal(G))
            out = np.maximum(out, np.where(d > 0, rows / np.where(d > 0, d, 1.0), 0.0))
    return out


def _abs_copy(expr):
    """The expression with every constant replaced by its absolute value and every negation dropped (the
    variables kept): at ``|x|`` its gradient is the size of the terms that make up the gradient at ``x``
    (``|Q| |x|`` for ``1/2 x'Qx``)."""
    if isinstance(expr, cp.Variable):
        return expr
    if not expr.args:
        return cp.Constant(np.abs(np.asarray(expr.value, dtype=float)))
    if isinstance(expr, cp.atoms.affine.unary_operators.NegExpression):
        return _abs_copy(expr.args[0])
    return expr.copy(args=[_abs_copy(a) for a in expr.args])


def _gradient_size(problem) -> dict:
    """Per variable: the size of the terms of the objective's gradient (:func:`_abs_copy` at ``|x|``); the
    absolute gradient term by term where the expression cannot be rebuilt so."""
    variables = problem.variables()
    x0 = {v.id: v.value for v in variables}
    e = problem.objective.expr
    out = {}
    try:
        for v in variables:
            v.value = np.abs(x0[v.id])
        for var, G in _abs_copy(e).grad.items():
            if G is not None:
                out[var.id] = np.abs(_dense(G).ravel())
    except Exception:  # noqa: BLE001 - an atom that cannot be rebuilt on absolute values: term by term
        out = {}
    finally:
        for v in variables:
            v.value = x0[v.id]
    if not out:
        for term in (e.args if isinstance(e, cp.atoms.affine.add_expr.AddExpression) else [e]):
            for var, G in term.grad.items():
                if G is not None:
                    out[var.id] = out.get(var.id, 0.0) + np.abs(_dense(G).ravel())
    return out


def _lagrangian_gradient(problem, lams, jacs: _Jacobians) -> tuple[dict, dict]:
    """Per variable: the gradient of ``L`` in it, and the size of its terms (:func:`_gradient_size`, and
    ``|G| |lam|`` for the constraints: a gradient that cancels to round-off is relative to its parts)."""
    s = 1.0 if isinstance(problem.objective, cp.Minimize) else -1.0
    grad, size = {}, {}
    for var in problem.variables():
        grad[var.id] = np.zeros(var.size)
        size[var.id] = np.zeros(var.size)
    e = problem.objective.expr
    for var, G in e.grad.items():
        if G is not None:
            grad[var.id] += s * _dense(G).ravel()
    for var_id, g in _gradient_size(problem).items():
        size[var_id] += g
    for c, lam in zip(problem.constraints, lams):
        for var, G in jacs.of(c):
            grad[var.id] += G @ lam
            size[var.id] += np.abs(G) @ np.abs(lam)
    return grad, size


#: Atoms with kinks (where the gradient cvxpy gives is one element of the subdifferential).
KINKED = ("abs", "norm1", "pnorm", "maximum", "minimum", "max", "min", "norm_inf", "pos", "neg")


def _stationarity(problem, lams, shift: float, jacs: _Jacobians) -> float:
    """``max_i dist(0, [min, max] of dL/dx_i at x - h, x, x + h) / max_i (size of the terms of dL/dx_i)``; at the
    point only when the problem has no atom with a kink."""
    variables = problem.variables()
    kinked = any(a.__name__ in KINKED for a in problem.atoms())
    x0 = {v.id: _flat(v.value) for v in variables}
    xmax = max((float(np.max(np.abs(x))) for x in x0.values() if x.size), default=0.0)
    lo, hi, size = {}, {}, {}
    for sign in ((0.0, 1.0, -1.0) if kinked else (0.0,)):
        for v in variables:
            x = x0[v.id]
            h = shift * (np.abs(x) + xmax)
            v.value = np.reshape(x + sign * h, v.shape, order="F") if v.ndim else float(x[0] + sign * h[0])
        g, s = _lagrangian_gradient(problem, lams, jacs)
        for k in g:
            lo[k] = g[k] if k not in lo else np.minimum(lo[k], g[k])
            hi[k] = g[k] if k not in hi else np.maximum(hi[k], g[k])
            size[k] = s[k] if k not in size else np.maximum(size[k], s[k])
    for v in variables:
        v.value = np.reshape(x0[v.id], v.shape, order="F") if v.ndim else float(x0[v.id][0])
    res = max((float(np.max(np.maximum(np.maximum(lo[k], -hi[k]), 0.0))) for k in lo if lo[k].size), default=0.0)
    scale = max((float(np.max(size[k])) for k in size if size[k].size), default=0.0)
    return res / scale if scale > 0 else (0.0 if res == 0 else math.inf)


def _complementarity(problem, lams) -> tuple[float, float]:
    """``(sum_c |lam_c' expr_c| over the inequalities, largest wrong-signed multiplier / max |lam|)``."""
    comp, wrong, big = 0.0, 0.0, 0.0
    for c, lam in zip(problem.constraints, lams):
        big = max(big, float(np.max(np.abs(lam))) if lam.size else 0.0)
        if isinstance(c, cp.constraints.Equality | cp.constraints.Zero):
            continue
        comp += float(np.sum(np.abs(lam * _flat(c.expr.value))))
        wrong = max(wrong, float(np.max(-lam)) if lam.size else 0.0)
    return comp, (wrong / big if big > 0 else 0.0)


def evaluate(problem: cp.Problem, duals: list | None = None, *, kink: float = 1e-4) -> ModelReport:
    """The model at the point its variables hold (set them first) and, when every constraint has a
    multiplier in ``duals`` (in the order of ``problem.constraints``), its Lagrangian there (multipliers that
    cannot be this model's, in number or size, make it ``inf``; ``None`` entries leave it ``nan``); a coordinate within
    ``kink (|x_i| + max|x|)`` of a kink of a non-smooth atom counts as at it (the reference passes
    ``sqrt(tol)``, the accuracy it holds the KKT conditions to)."""
    if any(v.value is None for v in problem.variables()):
        return ModelReport(math.nan, math.inf, math.inf, "a variable without a value")
    n = sum(v.size for v in problem.variables())
    objective = float(problem.objective.value)
    jacs = _Jacobians(problem)
    violation, worst, _ = _violations(problem, jacs)
    # round-off of evaluating the objective, and of the variables themselves at the scale of the constraints
    # that define them (a slack 1 - y f rounded at the size of 1 + |f|, times C in the objective)
    sensitivity = sum(float(g @ _entry_scales(problem, jacs, k, g.size)) for k, g in _gradient_size(problem).items())
    floor = 8.0 * n * EPS * (float(np.sum(magnitude(problem.objective.expr))) + sensitivity)
    rep = ModelReport(objective, floor, violation, worst)
    cons = problem.constraints
    if duals is not None and (len(duals) != len(cons) or any(
            d is not None and _flat(d).size != c.size for d, c in zip(duals, cons))):
        rep.stationarity = rep.complementarity = rep.dual_sign = math.inf  # not this model's multipliers
        return rep
    if not cons or (duals is not None and all(d is not None for d in duals)):
        lams = [_flat(d) for d in (duals or [])]
        rep.stationarity = _stationarity(problem, lams, kink, jacs)
        rep.complementarity, rep.dual_sign = _complementarity(problem, lams) if cons else (0.0, 0.0)
    return rep

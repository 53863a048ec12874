"""The cvxpy model is the specification: what ``F.solve`` reports is the model's own at the returned point.

For every formulation and form, the variables of the cvxpy problem are set to ``sol.values`` and the model
itself is evaluated there: ``problem.objective.value`` must equal ``sol.objective``, and each constraint's
``violation()`` must be within the tolerance the reference certified (and, for the constraints whose
feasibility the certificate reports, no larger than the reported residual). Whatever strategy computed the
numbers (the box dual on ``Y K Y``, a direct LAPACK solve, the model through CLARABEL), this is what makes the
reference a reference OF THE MODEL.

Scales (each quantity relative to its own scale, never ``max(1, |x|)``):

* the objective's scale is the sum of the absolute values of its top-level terms at the point (e.g.
  ``|1/2 a'Qa| + |sum a|``); round-off of evaluating it the two ways (K or the factor Phi, long double or
  double) is below ``ROUNDOFF = 40 N eps`` of it (at most 8.3e-14 = 15 N eps measured here: the reported
  objective of a primal is evaluated on K, the model's on the factor Phi);
* a constraint's scale is the largest, over its entries, of the sum of the magnitudes of the entry's terms,
  ``max_i (sum_j |A_ij x_j| + |c_i|)`` for the linearisation ``A x + c`` of ``lhs - rhs`` at the point.
"""
from __future__ import annotations

import dataclasses
import doctest
import warnings

import cvxpy as cp
import numpy as np
import pytest
from instances import KERNELS, make_classification, make_regression

import svmref.formulations as F

N = 24
EPS = float(np.finfo(float).eps)
ROUNDOFF = 40 * N * EPS     # relative to a quantity's scale: round-off of evaluating it two ways
CS = (1.0, 100.0)           # C (RLS: gamma = 1 / C)

#: The strategy ``F.solve`` uses by default for each form (docs/reference.md has the same table).
STRATEGY = {
    ("l1_svm", "primal"): "box_dual_yky", ("l1_svm", "dual"): "box_dual_yky",
    ("l2_svm", "primal"): "box_dual_yky", ("l2_svm", "dual"): "box_dual_yky",
    ("least_1norm_svm", "primal"): "box_dual_yky", ("least_1norm_svm", "dual"): "box_dual_yky",
    ("least_1norm_svm", "lp"): "cvxpy_conic",
    ("ls_svm", "primal"): "direct_lapack", ("ls_svm", "dual"): "direct_lapack",
    ("ls_svm", "primal_mu_zeta"): "direct_lapack",
    ("ls_svm_regression", "primal"): "direct_lapack", ("ls_svm_regression", "dual"): "direct_lapack",
    ("rls", "primal"): "direct_lapack", ("rls", "dual"): "direct_lapack",
    ("sparse_ls_svm", "primal"): "direct_lapack", ("sparse_ls_svm", "dual"): "direct_lapack",
    ("support_features", "primal"): "cvxpy_conic", ("support_features", "dual"): "cvxpy_conic",
    ("support_features", "qp"): "cvxpy_conic",
    ("svr", "primal"): "cvxpy_conic", ("svr", "dual"): "cvxpy_conic",
    ("l1_svm_regularised_bias", "primal"): "cvxpy_conic", ("l1_svm_regularised_bias", "dual"): "cvxpy_conic",
    ("l2_svm_regularised_bias", "primal"): "cvxpy_conic", ("l2_svm_regularised_bias", "dual"): "cvxpy_conic",
    ("weighted_ls_svm", "primal"): "direct_lapack", ("weighted_ls_svm", "dual"): "direct_lapack",
    ("weighted_ls_svm_regression", "primal"): "direct_lapack", ("weighted_ls_svm_regression", "dual"): "direct_lapack",
}

def _forms(name):
    f = F.get(name)
    return ("primal", "dual") + tuple(form for form in f.forms if form not in ("kkt_system", "system"))


CASES = [(name, form, C) for name in F.names() for form in _forms(name) for C in CS]


def _case_id(case):
    name, form, C = case
    return f"{name}-{form}-C{C:g}"


def _params(xfail: dict | None = None):
    out = []
    for case in CASES:
        name, form, _ = case
        reason = (xfail or {}).get((name, form))
        marks = (pytest.mark.xfail(strict=True, reason=reason),) if reason else ()
        out.append(pytest.param(*case, marks=marks, id=_case_id(case)))
    return out


def build(name: str, form: str, C: float):
    """The problem ``form`` of ``name`` on a seeded RBF instance (N = 24), regression targets where the
    formulation is a regression."""
    f = F.get(name)
    X, yc = make_classification(n=N, seed=0)
    y = make_regression(n=N, seed=0)[1] if f.task == "regression" else yc
    K = KERNELS["rbf"](X)
    builder = getattr(f, form)
    if name == "support_features":
        return builder(X, yc, C=C, mu=0.3)
    if name == "rls":
        return builder(K, y, gamma=1.0 / C)
    if name == "sparse_ls_svm":
        return builder(K, y, C=C, lam=np.linspace(0.5, 2.0, N))
    if name == "svr":
        return builder(K, y, C=C, epsilon=0.1)
    if form == "primal_mu_zeta":
        return builder(K, y, mu=2.0, zeta=2.0 * C)
    if name.startswith("weighted_"):
        return builder(K, y, C=C, v=np.linspace(0.3, 1.5, K.shape[0]))
    return builder(K, y, C=C)


def set_point(problem, values: dict) -> None:
    """Set every variable of the model to the returned value."""
    for v in problem.variables():
        assert v.name() in values and values[v.name()] is not None, f"no value returned for {v.name()}"
        v.value = np.reshape(np.asarray(values[v.name()], dtype=float), v.shape)


def objective_scale(problem) -> float:
    """Sum of the absolute values of the objective's top-level terms at the current point."""
    e = problem.objective.expr
    terms = e.args if isinstance(e, cp.atoms.affine.add_expr.AddExpression) else [e]
    return sum(float(np.sum(np.abs(t.value))) for t in terms)


def constraint_scale(constraint) -> float:
    """``max_i (sum_j |A_ij x_j| + |c_i|)`` for the linearisation ``A x + c`` of the constraint's ``lhs - rhs``."""
    expr = constraint.expr
    val = np.atleast_1d(np.asarray(expr.value, dtype=float)).ravel(order="F")
    lin, mag = np.zeros_like(val), np.zeros_like(val)
    for var, G in expr.grad.items():
        if G is None:
            continue
        G = G.toarray() if hasattr(G, "toarray") else np.atleast_2d(np.asarray(G, dtype=float))
        x = np.atleast_1d(np.asarray(var.value, dtype=float)).ravel(order="F")
        lin += G.T @ x
        mag += np.abs(G.T) @ np.abs(x)
    return float(np.max(mag + np.abs(val - lin))) if val.size else 0.0


def model_mismatch(problem, sol) -> tuple[float, list[float]]:
    """(|model objective - reported| / objective scale, each constraint's violation / its scale) at ``sol.values``."""
    set_point(problem, sol.values)
    obj = abs(float(problem.objective.value) - sol.objective) / objective_scale(problem)
    viol = []
    for c in problem.constraints:
        v, s = float(np.max(np.atleast_1d(c.violation()))), constraint_scale(c)
        viol.append(v / s if s > 0 else (0.0 if v == 0 else np.inf))
    return obj, viol


def solve(problem):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return F.solve(problem)


@pytest.mark.parametrize("name, form, C", _params())
def test_constraint_violations_of_the_model_at_the_returned_point_are_within_the_certificate(name, form, C):
    prob = build(name, form, C)
    assert prob.info.strategy == STRATEGY[(name, form)]
    sol = solve(prob)
    _, viol = model_mismatch(prob, sol)
    tol = sol.certificate.get("tol", F.reference.DEFAULT_TOL)
    assert all(v <= tol for v in viol), f"constraint violations {viol} of the model at the returned point > {tol}"
    reported = max((sol.residuals.get(k, 0.0) for k in ("eq_feasibility", "bound_feasibility")), default=0.0)
    if form in ("dual", "qp") and reported:  # the certificate's feasibility is of these forms' own variables
        assert max(viol) <= reported + ROUNDOFF, f"model violation {max(viol):.2e} > reported {reported:.2e}"


@pytest.mark.parametrize("name, form, C", _params())
def test_reported_objective_is_the_models_own_at_the_returned_point(name, form, C):
    prob = build(name, form, C)
    sol = solve(prob)
    obj, _ = model_mismatch(prob, sol)
    # within round-off, or within the floor the reference reports for evaluating the model (a primal's slacks
    # are computed from Phi W, its certified objective on K: C sum |xi_K - xi_Phi| at C = 100), itself far below
    # the certified tol (it is the worst case 8 n eps of the terms and of the variables' sensitivity: 8.5e-11 here)
    floor = sol.residuals["model_floor"] / objective_scale(prob)
    assert floor <= 1e-9, f"the reported model floor {floor:.2e} of the objective's scale is not round-off"
    assert obj <= max(ROUNDOFF, floor), (f"model objective differs from the reported {sol.objective!r} by {obj:.2e} "
                                         f"of its scale (floor {floor:.2e})")


def test_every_form_has_a_strategy_and_a_case():
    assert {(n, f) for n, f, _ in CASES} == set(STRATEGY)


def test_the_check_sees_a_point_that_is_not_the_reported_one():
    """The comparison can fail: the alpha of the positive class moved by 1e-6 changes the model's objective and
    violates ``y'alpha = 0`` by about 1e-6 relative."""
    prob = build("l1_svm", "dual", 1.0)
    sol = solve(prob)
    y = make_classification(n=N, seed=0)[1]
    moved = dict(sol.values, alpha=sol.values["alpha"] + 1e-6 * (y > 0))
    obj, viol = model_mismatch(prob, type(sol)(**{**sol.__dict__, "values": moved}))
    assert obj > 1e3 * ROUNDOFF and viol[0] > 1e-8


def test_the_package_doctest_runs():
    """The example in ``svmref.formulations``' docstring runs and gives what it shows."""
    result = doctest.testmod(F, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted >= 8 and result.failed == 0


def test_problem_info_is_typed_frozen_and_set_params_replaces_it():
    """``problem.info`` is a frozen :class:`ProblemInfo` with named fields (read as a mapping too); ``set_params``
    gives the problem a new one, so a solution keeps the hyperparameters it was solved at."""
    prob = build("l1_svm", "dual", 1.0)
    info = prob.info
    assert isinstance(info, F.ProblemInfo) and info.formulation == "l1_svm" and info.form == "dual"
    assert info["hyper"] == info.hyper == {"C": 1.0} and info.get("factor") is None and "factor" not in info
    with pytest.raises(dataclasses.FrozenInstanceError):
        info.form = "primal"
    sol = solve(prob)
    F.set_params(prob, C=2.0)
    assert prob.info is not info and prob.info.hyper == {"C": 2.0} and sol.info.hyper == {"C": 1.0}
    assert solve(prob).objective != sol.objective

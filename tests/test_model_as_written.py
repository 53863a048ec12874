"""Certified means certified for the problem as written.

``F.solve`` may compute a reference another way (the box dual on ``Y K Y``, a LAPACK solve), but it then
evaluates the cvxpy model as written at the returned point and multipliers (``formulations/_model.py``) and
holds it to the certificate. These tests put a slip into a model, or into the certificate, and ask that the
reference never return a silently different answer: it raises :class:`ReferenceSolveError`, or (a change
that leaves the optimum where it was) returns the optimum of the problem as written, found independently by a
plain cvxpy solve (:func:`instances.as_written`).

They also hold the relative certificate to independent optima on problems whose objective is far below 1
(a relative gap divided by ``max(1, |d|)`` would be an absolute one there).
"""
from __future__ import annotations

import warnings

import cvxpy as cp
import numpy as np
import pytest
from instances import (
    AS_WRITTEN_ACCEPT,
    AS_WRITTEN_TOLS,
    KERNELS,
    as_written,
    clarabel_ladder,
    make_classification,
    make_regression,
    solve_clarabel,
)

import svmref.formulations as F
from svmref.formulations import _certify as cert
from svmref.formulations._common import RefProblem

N = 16


def build(name, form, C=1.0):
    f = F.get(name)
    X, yc = make_classification(n=N, seed=3)
    y = make_regression(n=N, seed=3)[1] if f.task == "regression" else yc
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


def certified_forms():
    out = []
    for name in F.names():
        f = F.get(name)
        for form in ("primal", "dual") + tuple(x for x in f.forms if x not in ("kkt_system", "system")):
            out.append((name, form))
    return out


def _terms(problem):
    e = problem.objective.expr
    return list(e.args) if isinstance(e, cp.atoms.affine.add_expr.AddExpression) else [e]


def _with(problem, objective=None, constraints=None) -> RefProblem:
    """The same problem (and the same ``info``, so the same fast path and certificate) with a slip in the model."""
    return RefProblem(problem.objective if objective is None else objective,
                      list(problem.constraints if constraints is None else constraints), info=problem.info)


def _objective_slips(problem):
    """Each top-level term of the objective doubled (a factor 2C for C, C for C/2, a dropped 1/2)."""
    terms = _terms(problem)
    sense = type(problem.objective)
    for k in range(len(terms)):
        if not terms[k].variables():
            continue
        new = sum(2 * t if j == k else t for j, t in enumerate(terms))
        yield f"objective term {k} doubled", _with(problem, objective=sense(new))


def _constraint_slips(problem):
    """Each constraint dropped, and each inequality's bound moved by the size of its right-hand side."""
    cons = problem.constraints
    for k, c in enumerate(cons):
        yield f"constraint {k} dropped", _with(problem, constraints=cons[:k] + cons[k + 1:])
        if isinstance(c, cp.constraints.Inequality):
            lhs, rhs = c.args
            if not lhs.variables():      # const <= expr: the lower bound moved to 0 (or to 2 lhs)
                moved = (0 * lhs if np.any(np.asarray(lhs.value) != 0) else lhs - 1.0) <= rhs
            else:                        # expr <= const or expr <= expr: the upper side doubled
                moved = lhs <= 2 * rhs
            yield f"constraint {k} bound moved", _with(problem, constraints=cons[:k] + [moved] + cons[k + 1:])


def _reference_or_refusal(problem):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return F.solve(problem, cross_check=False)
        except F.ReferenceSolveError as exc:
            return exc


@pytest.mark.parametrize("name, form", certified_forms(), ids=lambda v: str(v))
def test_a_slip_in_the_model_is_never_a_silently_different_answer(name, form):
    """Every slip (a doubled objective term, a dropped constraint, a moved bound) either makes the reference
    refuse, naming the disagreement, or leaves it at the optimum of the problem as written."""
    base = build(name, form)
    slips = list(_objective_slips(base)) + list(_constraint_slips(base))
    assert slips
    refused = 0
    for what, problem in slips:
        got = _reference_or_refusal(problem)
        if isinstance(got, F.ReferenceSolveError):
            refused += 1
            continue
        try:
            truth = as_written(problem).objective
        except AssertionError:  # the slipped model is unbounded or infeasible: no answer may be returned
            pytest.fail(f"{name} {form}, {what}: the reference answered {got.objective!r} for a problem with no optimum")
        err = abs(got.objective - truth) / abs(truth)
        assert err <= 1e-6, (f"{name} {form}, {what}: reference {got.objective!r} (certified {got.certified}) but the "
                             f"problem as written has optimum {truth!r}")
    assert refused >= 1, f"{name} {form}: no slip was refused"


def test_the_three_wrong_primals_are_refused():
    """A wrong primal objective with the right ``info`` (2C in place of C for the L1-SVM and the Least 1-Norm
    SVM, C in place of C/2 for the LS-SVM) is refused, and the refusal names the model's objective."""
    for name, scale_index in (("l1_svm", 1), ("least_1norm_svm", 1), ("ls_svm", 1)):
        prob = build(name, "primal")
        terms = _terms(prob)
        wrong = _with(prob, objective=cp.Minimize(sum(2 * t if j == scale_index else t for j, t in enumerate(terms))))
        with pytest.raises(F.ReferenceSolveError, match="model as written disagrees"):
            F.solve(wrong)
        # the problem as written has another optimum, which a plain solve finds
        assert abs(as_written(wrong).objective - F.solve(prob).objective) > 1e-3


def test_least_1norm_dual_with_the_l1_box_is_refused():
    """The Least 1-Norm dual's box [-C, C] (000 eq. (5)) written as [0, C]: the returned alpha violates the model."""
    prob = build("least_1norm_svm", "dual")
    a = prob.variables()[0]
    y = np.asarray(prob.constraints[0].args[0].args[0].value).ravel()
    wrong = _with(prob, constraints=[y @ a == 0, a >= 0, a <= 1.0])
    with pytest.raises(F.ReferenceSolveError, match="model_violation"):
        F.solve(wrong)
    with pytest.raises(F.ReferenceSolveError, match="model as written disagrees"):
        F.solve(wrong, method="cvxpy")


@pytest.mark.parametrize("slip", ["loss factor", "dual quadratic", "primal quadratic"])
def test_a_slip_in_the_certificate_is_refused(monkeypatch, slip):
    """A factor put into the certificate's own formulas makes every box reference disagree with its model."""
    if slip == "loss factor":
        orig = cert.primal_loss
        monkeypatch.setattr(cert, "primal_loss", lambda kind, C, y, f, b: orig(kind, 2 * C, y, f, b))
    elif slip == "dual quadratic":
        orig_d = cert.box_dual_value

        def dual_value(kind, K, y, C, a):
            d, f = orig_d(kind, K, y, C, a)
            return d + 0.5 * float((y * a) @ f), f
        monkeypatch.setattr(cert, "box_dual_value", dual_value)
    else:
        orig_b = cert.best_b
        monkeypatch.setattr(cert, "best_b", lambda kind, y, f: orig_b(kind, y, f) + 0.1)
    for name in ("l1_svm", "l2_svm", "least_1norm_svm"):
        for form in ("primal", "dual"):
            with pytest.raises(F.ReferenceSolveError):
                F.solve(build(name, form), cross_check=False)


def _box_optimum_scaled(kind, K, y, C):
    """The box dual (003 eq. (3); 000 eq. (5); the L2 dual) solved in the variable ``a = alpha / C``, whose
    objective ``d / C`` is of order 1 however small C is: an independent optimum for tiny objectives, accurate to
    1e-10 relative (CLARABEL's own gap and residuals at that scale, :func:`instances.solve_clarabel`)."""
    n = len(y)
    a = cp.Variable(n)
    Q = (y[:, None] * K) * y[None, :]
    obj = 0.5 * C * cp.quad_form(a, cp.psd_wrap(Q)) - cp.sum(a)
    cons = [y @ a == 0]
    if kind == "l2":
        obj = obj + 0.5 * cp.sum_squares(a)
        cons.append(a >= 0)
    else:
        cons += [a >= (-1.0 if kind == "l1n" else 0.0), a <= 1.0]
    prob = cp.Problem(cp.Minimize(obj), cons)
    solve_clarabel(prob, tols=(1e-14, 1e-13, 1e-12, 1e-11, 1e-10), accept=1e-10)  # the scaled objective is of order 1
    return C * float(prob.value)


@pytest.mark.parametrize("name, kind, C, n, kernel", [
    ("least_1norm_svm", "l1n", 1e-6, 24, "linear"),
    ("l2_svm", "l2", 1e-6, 4, "rbf"),
    ("l1_svm", "l1", 1e-7, 24, "rbf"),
    ("l1_svm", "l1", 1e-3, 24, "linear"),
])
def test_tiny_objectives_are_certified_relative_to_themselves(name, kind, C, n, kernel):
    """Objectives of 1e-4 .. 1e-7: the certified objective is within tol (1e-8) of the independent optimum
    RELATIVE to the objective (a gap divided by max(1, |d|) would allow an error of 1e-8 absolute, i.e.
    up to 100 % here), and the reported rel_gap is the gap over |d|."""
    X, y = make_classification(n=n, seed=7)
    K = KERNELS[kernel](X)
    truth = _box_optimum_scaled(kind, K, y, C)
    assert abs(truth) < 0.1
    sol = F.solve(F.get(name).dual(K, y, C=C), cross_check=False)
    res = sol.residuals
    assert sol.certified
    assert res["rel_gap"] == pytest.approx(abs(res["gap"]) / abs(res["objective_dual"]), rel=1e-12)
    err = abs(sol.objective - truth) / abs(truth)
    assert err <= F.reference.DEFAULT_TOL + res["rel_floor"] + 1e-10, (sol.objective, truth, err)
    assert res["rel_error_bound"] <= F.reference.DEFAULT_TOL + res["rel_floor"]


def test_the_gap_test_is_relative(monkeypatch):
    """A gap of 1e-9 absolute on an objective of 3e-5 is 3e-5 relative: not certified at tol 1e-8. The
    certificate of a slightly moved alpha (polishing disabled) is refused, naming rel_gap."""
    monkeypatch.setattr(cert, "box_polish", lambda kind, K, y, C, alpha, tol: cert.box_certificate(kind, K, y, C, alpha, tol))
    monkeypatch.setattr(cert, "box_scaled_resolve", lambda *a, **k: None)
    X, y = make_classification(n=N, seed=3)
    K = KERNELS["rbf"](X)
    C = 1e-6
    good = F.solve(F.get("l1_svm").dual(K, y, C=C), cross_check=False)
    alpha = good.values["alpha"]
    c, _, _ = cert.box_certificate("l1", K, y, C, alpha * (1 - 1e-4), 1e-8)
    assert abs(c.residuals["gap"]) < 1e-8 < c.residuals["rel_gap"]
    assert "rel_gap" in c.failed


def _scripted(statuses, seen):
    """A stand-in for one CLARABEL solve per rung: records the options, returns the next scripted status."""
    it = iter(statuses)

    def solve(opts):
        seen.append(opts)
        return next(it)
    return solve


def test_as_written_accepts_only_what_clarabel_certifies_within_its_bound():
    """``as_written`` on any floating-point path: every rung asks CLARABEL for its reduced accuracy at
    AS_WRITTEN_ACCEPT, so that ``optimal_inaccurate`` certifies the same bound as ``optimal`` (by default it certifies
    only 5e-5 to 1e-4); a rung that ends in neither (CLARABEL's insufficient progress, a solver error in cvxpy) is
    followed by the next, looser one, and a problem no rung solves fails the test that asked."""
    seen = []
    assert clarabel_ladder(_scripted(["solver error (CLARABEL failed)", "optimal"], seen)) == ("optimal", AS_WRITTEN_TOLS[1])
    assert [o["tol_gap_abs"] for o in seen] == [o["tol_gap_rel"] for o in seen] == list(AS_WRITTEN_TOLS[:2])
    assert AS_WRITTEN_ACCEPT <= 1e-9  # a hundredth of the tightest claim checked against these solves (1e-7)
    for o in seen:
        assert o["reduced_tol_gap_abs"] == o["reduced_tol_gap_rel"] == o["reduced_tol_feas"] == AS_WRITTEN_ACCEPT
    assert clarabel_ladder(_scripted(["optimal_inaccurate"], [])) == ("optimal_inaccurate", AS_WRITTEN_TOLS[0])
    with pytest.raises(AssertionError, match="did not solve to 1e-09: 1e-12: user_limit; 1e-11: user_limit"):
        clarabel_ladder(_scripted(["user_limit"] * len(AS_WRITTEN_TOLS), []))

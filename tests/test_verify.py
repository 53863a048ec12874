"""Tests of ``verify``: good solvers pass, broken ones fail with the right reason, the CLI keeps its contract.

verify is itself held to the standard it applies: reference-quality solvers written here (scikit-learn's
SVC and KernelRidge, linear systems, cvxpy solved directly, a tight ISLS loop) must pass, and
deliberately broken or near-miss variants must fail naming the check that caught them.
"""
from __future__ import annotations

import json
import math
import re

import cvxpy as cp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from instances import solve_clarabel
from sklearn.kernel_ridge import KernelRidge
from sklearn.svm import SVC

from svmref import verify
from svmref.verify import kkt
from svmref.verify.cli import main as verify_main

# ---------------------------------------------------------------------------------------------
# Tolerances, all in one place
# ---------------------------------------------------------------------------------------------
TOL = verify.DEFAULT_TOL      # the tolerance verify checks at (1e-6)
SVC_TOL = 1e-8                # scikit-learn SVC's own stopping tolerance (the issue asks for 1e-8)
SLOPPY_SMO_TOL = 1e-2         # an SMO stopped far too early: must not pass
NEAR_MISS = 1e-3              # size of the near misses: sum alpha_i y_i, b offset
EXACT = 1e-9                  # residuals of an exact (linear-system) solution, checked without a reference

# ---------------------------------------------------------------------------------------------
# Reference-quality solvers (written here, independent of solvers/ and formulations/)
# ---------------------------------------------------------------------------------------------


def svc_l1(K, y, C, tol=None):
    """scikit-learn's SVC as an l1_svm solver: dual_coef_ holds y_i alpha_i for the support vectors."""
    m = SVC(C=C, kernel="precomputed", tol=SVC_TOL).fit(K, y)
    alpha = np.zeros(len(y))
    alpha[m.support_] = np.abs(m.dual_coef_[0])
    return alpha, float(m.intercept_[0])


def exact_l1(K, y, C):
    """The SMO run to m - M < 1e-10 (it has no tol parameter, so verify does not loosen it): the generic correct
    L1-SVM answer of these tests. scikit-learn's SVC is not one at 1e-6: its kernel cache is single precision, so
    its decision values are off by ~1e-6 (test_sklearn_svc_decision_error_is_what_verify_reports)."""
    return smo(K, y, C, tol=SMO_TOL_TIGHT)


def kernel_ridge_rls(K, y, gamma):
    """KernelRidge as an rls solver: it solves (K + a I) c = y, and 001 eq. (8) has a = m gamma."""
    return KernelRidge(alpha=len(y) * gamma, kernel="precomputed").fit(K, y).dual_coef_


def ls_svm_system(K, y, C):
    """LS-SVM classifier by its KKT system (000 eqs. (2), (7)): y_i(sum_j a_j y_j K_ij + b) = 1 - a_i/C, y'a = 0."""
    N = len(y)
    A = np.zeros((N + 1, N + 1))
    A[0, 1:] = y
    A[1:, 0] = y
    A[1:, 1:] = np.outer(y, y) * K + np.eye(N) / C
    sol = np.linalg.solve(A, np.concatenate([[0.0], np.ones(N)]))
    return sol[1:], sol[0]


def ls_svm_regression_system(K, y, C):
    """LS-SVM regression, 004 system (2): [[0, 1'], [1, K + I/C]] [b; alpha] = [0; y]."""
    N = len(y)
    A = np.zeros((N + 1, N + 1))
    A[0, 1:] = 1.0
    A[1:, 0] = 1.0
    A[1:, 1:] = K + np.eye(N) / C
    sol = np.linalg.solve(A, np.concatenate([[0.0], y]))
    return sol[1:], sol[0]


def _psd_factor(K):
    w, V = np.linalg.eigh(0.5 * (K + K.T))
    keep = w > 1e-10 * max(1.0, w.max())
    return V[:, keep] * np.sqrt(w[keep])


def cvxpy_box_dual(lower, upper, shift):
    """The box dual min 1/2 (a*y)'(K + shift I/C)(a*y) - sum a, y'a = 0, lower*C <= a <= upper*C, by cvxpy.

    Returns alpha only (b omitted): verify must derive b and say so.
    """

    def solve(K, y, C):
        Phi = _psd_factor(K)
        a = cp.Variable(len(y))
        obj = 0.5 * cp.sum_squares(Phi.T @ cp.multiply(y, a)) - cp.sum(a)
        if shift:
            obj = obj + 0.5 / C * cp.sum_squares(a)
        cons = [y @ a == 0]
        if lower is not None:
            cons.append(a >= lower * C)
        if upper is not None:
            cons.append(a <= upper * C)
        solve_clarabel(cp.Problem(cp.Minimize(obj), cons))
        return np.asarray(a.value)

    return solve


def isls_loop(K, y, C):
    """004 Algorithm 1 run to a tight fixed point (max |alpha^t - alpha^{t+1}| <= 1e-14 max |alpha|)."""
    alpha, b = ls_svm_regression_system(K, y, C)
    N = len(y)
    for _ in range(500):
        w = alpha**2                                  # diag(lam)^-1, lam_i = 1/alpha_i^2
        H = (K * w[None, :]) @ K + np.eye(N) / C
        A = np.zeros((N + 1, N + 1))
        A[0, 1:] = 1.0
        A[1:, 0] = 1.0
        A[1:, 1:] = H
        sol = np.linalg.lstsq(A, np.concatenate([[0.0], y]), rcond=None)[0]
        b, beta = sol[0], sol[1:]
        new = w * (K @ beta)
        done = np.max(np.abs(new - alpha)) <= 1e-14 * max(np.max(np.abs(new)), 1e-300)
        alpha = new
        if done:
            break
    return alpha, b


class SFAnswer:
    def __init__(self, lam=None, a=None, b=None):
        self.lam, self.a, self.b = lam, a, b


def sf_dual(X, y, C, mu):
    """The support features dual (003 eq. (10)) by cvxpy; returns .lam only."""
    lam = cp.Variable(X.shape[0])
    w = X.T @ cp.multiply(y, lam)
    obj = cp.sum(lam) - cp.sum_squares(cp.pos(cp.abs(w) - mu)) / (4 * (1 - mu))
    solve_clarabel(cp.Problem(cp.Maximize(obj), [lam >= 0, lam <= C, y @ lam == 0]))
    return SFAnswer(lam=np.asarray(lam.value))


def sf_primal(X, y, C, mu):
    """The support features primal (003 eq. (5)) by cvxpy; returns .a and .b only."""
    a, b, d = cp.Variable(X.shape[1]), cp.Variable(), cp.Variable(X.shape[0])
    obj = (1 - mu) * cp.sum_squares(a) + mu * cp.norm1(a) + C * cp.sum(d)
    solve_clarabel(cp.Problem(cp.Minimize(obj), [cp.multiply(y, X @ a + b) >= 1 - d, d >= 0]))
    return SFAnswer(a=np.asarray(a.value), b=float(b.value))


GOOD = {
    "l1_svm": [exact_l1, cvxpy_box_dual(0.0, 1.0, False)],
    "l2_svm": [cvxpy_box_dual(0.0, None, True)],
    "ls_svm": [ls_svm_system],
    "least_1norm_svm": [cvxpy_box_dual(-1.0, 1.0, False)],
    "ls_svm_regression": [ls_svm_regression_system],
    "sparse_ls_svm": [isls_loop],
    "rls": [kernel_ridge_rls],
    "support_features": [sf_dual, sf_primal],
}


@pytest.mark.parametrize("formulation, solver", [(f, s) for f, ss in GOOD.items() for s in ss],
                         ids=lambda v: v if isinstance(v, str) else getattr(v, "__qualname__", "solver"))
def test_reference_quality_solvers_pass_the_quick_suite(formulation, solver):
    report = verify.check(solver, formulation, "quick", TOL)
    assert report.passed, str(report)
    assert all(r.verdict == "pass" for r in report), str(report)


def test_omitted_b_is_derived_and_said():
    report = verify.check(cvxpy_box_dual(-1.0, 1.0, False), "least_1norm_svm", "quick", TOL)
    assert report.passed, str(report)
    for r in report:
        assert r.b_derived
        assert any("b was not given" in n for n in r.notes)


@pytest.mark.parametrize("suite", ["quick", "real"])
def test_sklearn_svc_decision_error_is_what_verify_reports(suite):
    """scikit-learn's SVC(tol=1e-8) keeps its kernel cache in single precision: alpha is right to ~1e-10 in the
    objective, the decision values only to ~1e-6. Measured here against the SMO run to m - M < 1e-12 (not
    against verify's reference): verify never reports more decision error than there is (beyond the reference's
    stated resolution), and where it fails
    SVC it is on the decision values (or b, or the margins), which are independently off by more than tol."""
    report = verify.check(svc_l1, "l1_svm", suite, TOL)
    for r, inst in zip(report, verify.suite(suite, "l1_svm")):
        K, y, C = inst.K, inst.y, inst.hyper["C"]
        a, b = svc_l1(K, y, C)
        a2, b2 = smo(K, y, C, tol=1e-12)
        rows = np.vstack([K, inst.K_test])  # the training and held-out points, as verify compares
        dw = rows @ (a * y) - rows @ (a2 * y)  # W.Phi(x), and f = W.Phi(x) + b
        err = max(float(np.max(np.abs(dw + b - b2))), float(np.max(np.abs(dw))))
        # verify's value is within the reference's stated resolution of the independently measured error
        res = r.reference_resolution.get("decision_gap", 0.0)
        assert r.decision_gap <= err + res + 1e-8, (r.instance, r.decision_gap, err, res)
        if r.verdict == "fail":
            failing = {k for k in verify.TOLERANCES if re.search(rf"(^|; ){k} \d", r.reason)}
            assert failing and failing <= {"decision_gap", "b_gap", "kkt_absolute"}, r.reason
            assert err > TOL, (r.instance, err)
        else:
            assert r.verdict == "pass", r.reason


@pytest.mark.parametrize("suite", ["quick", "adversarial"])
def test_kernel_ridge_passes_as_external_rls(suite):
    report = verify.check(kernel_ridge_rls, "rls", suite, TOL)
    assert report.passed, str(report)


def test_adversarial_suite_non_psd_kernel_is_reported_not_convex():
    """The MLP kernel instance is neither passed nor failed: it says 'reference not convex'."""
    report = verify.check(svc_l1, "l1_svm", "adversarial", TOL)
    mlp = report["a-mlp-not-psd"]
    assert mlp.passed is None and mlp.verdict == "not convex"
    assert "not convex" in mlp.reason
    # duplicates with conflicting labels: alpha is not unique, objective and KKT still decide
    assert report["a-duplicates-conflicting"].verdict == "pass", str(report)
    assert report.summary()["not_convex"] == 1


# ---------------------------------------------------------------------------------------------
# Broken solvers and near misses: each must fail, naming the check that caught it
# ---------------------------------------------------------------------------------------------


def _free_index(alpha, C):
    free = np.flatnonzero((alpha > 1e-6 * C) & (alpha < (1 - 1e-6) * C))
    return int(free[0]) if free.size else None


def box_violated(K, y, C):
    a, b = exact_l1(K, y, C)
    a = a.copy()
    a[3] = -0.31
    return a, b


def b_sign_flipped(K, y, C):
    a, b = exact_l1(K, y, C)
    return a, -b


def returns_nan(K, y, C):
    a, b = exact_l1(K, y, C)
    a = a.copy()
    a[2] = np.nan
    return a, b


def raises(K, y, C):
    raise RuntimeError("boom")


def wrong_length(K, y, C):
    a, b = exact_l1(K, y, C)
    return a[:-1], b


def returns_a_string(K, y, C):
    return "alpha"


def signed_dual_coef(K, y, C):
    """scikit-learn's dual_coef_ convention (y_i alpha_i) handed over as alpha."""
    a, b = exact_l1(K, y, C)
    return a * y, b


def equality_near_miss(K, y, C):
    """sum_i alpha_i y_i = 1e-3: one free alpha moved by 1e-3."""
    a, b = exact_l1(K, y, C)
    a = a.copy()
    i = _free_index(a, C)
    a[i] += NEAR_MISS * y[i]
    return a, b


def b_off(K, y, C):
    a, b = exact_l1(K, y, C)
    return a, b + NEAR_MISS


def sloppy_smo(K, y, C):
    m = SVC(C=C, kernel="precomputed", tol=SLOPPY_SMO_TOL).fit(K, y)
    a = np.zeros(len(y))
    a[m.support_] = np.abs(m.dual_coef_[0])
    return a, float(m.intercept_[0])


def half_C(K, y, C):
    return exact_l1(K, y, C / 2)


def l1_offered_as_least_1norm(K, y, C):
    return exact_l1(K, y, C)


def ls_without_shift(K, y, C):
    """LS-SVM system solved with K instead of K + I/C (the modified kernel of 000 eq. (2) forgotten)."""
    N = len(y)
    A = np.zeros((N + 1, N + 1))
    A[0, 1:] = y
    A[1:, 0] = y
    A[1:, 1:] = np.outer(y, y) * K + 1e-3 * np.eye(N)
    sol = np.linalg.solve(A, np.concatenate([[0.0], np.ones(N)]))
    return sol[1:], sol[0]


def rls_scaled_by_m(K, y, gamma):
    return kernel_ridge_rls(K, y, gamma) * len(y)


def kernel_ridge_without_m(K, y, gamma):
    return KernelRidge(alpha=gamma, kernel="precomputed").fit(K, y).dual_coef_


def ls_svm_offered_as_isls(K, y, C):
    return ls_svm_regression_system(K, y, C)


def sf_lam_for_half_C(X, y, C, mu):
    return sf_dual(X, y, C / 2, mu)


def sf_lam_scaled(X, y, C, mu):
    ans = sf_dual(X, y, C, mu)
    return SFAnswer(lam=1.01 * ans.lam)


def sf_a_inconsistent(X, y, C, mu):
    ans = sf_dual(X, y, C, mu)
    a = kkt.soft_threshold_a(X, y, ans.lam, mu)
    return SFAnswer(lam=ans.lam, a=1.01 * a, b=None)


#: (case, formulation, solver, expected verdict, a substring every failing reason must contain)
BROKEN = [
    ("box violated", "l1_svm", box_violated, "fail", "alpha_3 = -0.31 is outside [0, "),
    ("sign of b flipped", "l1_svm", b_sign_flipped, "fail", "complementarity"),
    ("returns NaN", "l1_svm", returns_nan, "error", "alpha_2 = nan is not finite"),
    ("raises", "l1_svm", raises, "error", "solver raised RuntimeError: boom"),
    ("wrong length", "l1_svm", wrong_length, "error", "has length"),
    ("returns a string", "l1_svm", returns_a_string, "error", "returns (alpha, b)"),
    ("sklearn signed dual_coef_", "l1_svm", signed_dual_coef, "fail", "box"),
    ("alpha for C/2", "l1_svm", half_C, "fail", "objective_gap"),
    ("L1-SVM offered as Least 1-Norm", "least_1norm_svm", l1_offered_as_least_1norm, "fail", "objective_gap"),
    ("LS-SVM without I/C", "ls_svm", ls_without_shift, "fail", "objective_gap"),
    ("RLS c scaled by m", "rls", rls_scaled_by_m, "fail", "objective_gap"),
    ("KernelRidge with alpha = gamma", "rls", kernel_ridge_without_m, "fail", "objective_gap"),
    ("LS-SVM offered as ISLS fixed point", "sparse_ls_svm", ls_svm_offered_as_isls, "fail", "stationarity"),
    ("support features lam scaled by 1.01", "support_features", sf_lam_scaled, "fail", "objective_gap"),
    ("support features a inconsistent with lam", "support_features", sf_a_inconsistent, "fail", "stationarity"),
]


@pytest.mark.parametrize("case, formulation, solver, verdict, reason", BROKEN, ids=[c[0] for c in BROKEN])
def test_broken_solvers_fail_with_the_right_reason(case, formulation, solver, verdict, reason):
    report = verify.check(solver, formulation, "quick", TOL)
    assert not report.passed
    for r in report:
        assert r.passed is False and r.verdict == verdict, f"{case}: {r.instance}: {r.verdict} {r.reason}"
        assert reason in r.reason, f"{case}: {r.instance}: {r.reason}"


@pytest.mark.parametrize("case, solver, check", [
    ("sum alpha_i y_i = 1e-3", equality_near_miss, "equality"),
    ("b off by 1e-3", b_off, "complementarity"),
])
def test_near_misses_fail_on_every_instance(case, solver, check):
    """Near misses of size 1e-3 are 1000 x the tolerance: every quick instance must fail on ``check``."""
    report = verify.check(solver, "l1_svm", "quick", TOL)
    for r in report:
        assert r.passed is False, f"{case} passed on {r.instance}"
        assert r.residuals[check] > TOL and check in r.reason, r.reason


def test_smo_stopped_at_1e_2_does_not_pass():
    report = verify.check(sloppy_smo, "l1_svm", "quick", TOL)
    assert not report.passed, str(report)
    for r in report.failures:
        assert any(k in r.reason for k in ("stationarity", "complementarity", "objective_gap")), r.reason


def test_regression_alpha_in_classification_convention_fails():
    """ls_svm_regression on +-1 targets: alpha_reg = y * alpha_cls; handing over alpha_cls must fail."""
    insts = [i for i in verify.suite("quick", "ls_svm_regression") if np.all(np.isin(i.y, (-1.0, 1.0)))]
    assert insts, "the quick suite has no +-1 regression instance"

    def cls_convention(K, y, C):
        a, b = ls_svm_regression_system(K, y, C)
        return a * y, b

    report = verify.check(cls_convention, "ls_svm_regression", insts, TOL)
    for r in report:
        assert r.passed is False, r.instance


def test_support_features_lam_for_half_C_fails_unless_the_answer_is_the_same():
    """lam for C/2 is a wrong answer exactly when some lam_j of the C-problem exceeds C/2."""
    report = verify.check(sf_lam_for_half_C, "support_features", "quick", TOL)
    for inst, r in zip(verify.suite("quick", "support_features"), report):
        right = sf_dual(inst.X, inst.y, inst.hyper["C"], inst.hyper["mu"]).lam
        if np.max(right) > 0.5 * inst.hyper["C"] * (1 + 1e-6):
            assert r.passed is False and "objective_gap" in r.reason, r.reason
        else:
            assert r.passed is True, r.reason
    assert not report.passed


def test_primal_only_support_features_answer_is_checked_as_primal():
    report = verify.check(sf_primal, "support_features", "quick", TOL)
    assert report.passed, str(report)
    for r in report:
        assert math.isnan(r.residuals["box"]) and math.isnan(r.residuals["complementarity"])
        assert r.objective_gap <= TOL


def test_permuting_the_data_changes_nothing():
    """Invariance: the same instance with its patterns permuted has the same optimum and the same verdict."""
    inst = verify.suite("quick", "l1_svm")[1]
    perm = np.random.default_rng(3).permutation(inst.N)
    permuted = verify.Instance(inst.name + "-permuted", inst.X[perm], inst.y[perm], inst.X_test, inst.kernel,
                               dict(inst.kernel_params), dict(inst.hyper))
    a, b = verify.check(exact_l1, "l1_svm", [inst, permuted], TOL)
    assert a.passed and b.passed
    assert b.reference_objective == pytest.approx(a.reference_objective, rel=1e-8)
    assert b.objective == pytest.approx(a.objective, rel=1e-8)


def test_solver_status_is_reported():
    from svmref.solvers._result import SolverResult

    def tired(K, y, C):
        alpha, b = exact_l1(K, y, C)
        return SolverResult(alpha, b, float("nan"), 10, False, "max_iter_reached")

    report = verify.check(tired, "l1_svm", verify.suite("quick", "l1_svm")[:1], TOL)
    assert report.passed  # the numbers decide; the status is reported
    assert any("max_iter_reached" in n for n in report[0].notes)


def test_solver_is_given_tol_when_it_accepts_it():
    seen = []

    def solver(K, y, C, tol):
        seen.append(tol)
        return exact_l1(K, y, C)

    verify.check(solver, "l1_svm", verify.suite("quick", "l1_svm")[:1], 1e-7)
    assert seen == [1e-7]


def test_solver_cannot_corrupt_the_instance():
    inst = verify.suite("quick", "l1_svm")[0]
    K0 = inst.K.copy()

    def vandal(K, y, C):
        out = exact_l1(K, y, C)
        K[:] = 0.0
        y[:] = 1.0
        return out

    assert verify.check(vandal, "l1_svm", [inst], TOL).passed
    assert np.array_equal(inst.K, K0)


@pytest.mark.parametrize("bad, exc", [("nope", ValueError), (0.0, ValueError), (-1.0, ValueError)])
def test_check_rejects_bad_arguments(bad, exc):
    if isinstance(bad, str):
        with pytest.raises(exc, match="formulation"):
            verify.check(exact_l1, bad)
    else:
        with pytest.raises(exc, match="tol"):
            verify.check(exact_l1, "l1_svm", tol=bad)


# ---------------------------------------------------------------------------------------------
# The residuals themselves (no reference needed)
# ---------------------------------------------------------------------------------------------


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(4, 25), logC=st.floats(-3, 3))
def test_exact_ls_svm_has_zero_residuals_and_a_shifted_b_does_not(seed, n, logC):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, 3))
    y = np.where(np.arange(n) % 2 == 0, 1.0, -1.0)
    K = X @ X.T + 1.0
    C = 10.0**logC
    a, b = ls_svm_system(K, y, C)
    r = kkt.box_dual_residuals("ls_svm", K, y, C, a, b)
    for name in ("equality", "primal_feasibility", "stationarity", "duality_gap"):
        assert r.values[name] <= EXACT, (name, r.values)
    shifted = kkt.box_dual_residuals("ls_svm", K, y, C, a, b + NEAR_MISS)
    # every pattern's equality (7) is off by exactly y_i * 1e-3, relative to f_scale, the size of the terms of
    # y_i f(x_i) - 1 + alpha_i/C; in margin units (kkt_absolute, the natural residual) it is 1e-3 itself
    f_scale = float(np.max(np.abs(K) @ np.abs(a * y) + np.abs(a) / C + 1.0))
    assert shifted.values["primal_feasibility"] == pytest.approx(NEAR_MISS / f_scale, rel=1e-6)
    assert shifted.values["kkt_absolute"] == pytest.approx(NEAR_MISS, rel=1e-6)


def test_large_scale_does_not_excuse_a_margin_error():
    """With f_scale ~ 1e8, a b off by 0.01 is 1e-10 relative but 0.01 in margin units: kkt_absolute catches it."""
    rng = np.random.default_rng(7)
    X = 1e3 * rng.standard_normal((12, 2))
    y = np.where(np.arange(12) % 2 == 0, 1.0, -1.0)
    K = X @ X.T
    C = 1e3
    a, b = ls_svm_system(K, y, C)
    r = kkt.box_dual_residuals("ls_svm", K, y, C, a, b + 0.01)
    f_scale = float(np.max(np.abs(K) @ np.abs(a * y) + np.abs(a) / C + 1.0))
    assert f_scale > 1e4  # the premise: a large scale
    # every equality (7) is off by y_i * 0.01: relative 0.01 / f_scale, absolute 0.01 (the linear solve's
    # own round-off at this scale is ~1e-16 * f_scale, far below 1e-3 * 0.01)
    assert r.values["primal_feasibility"] == pytest.approx(0.01 / f_scale, rel=1e-3)
    assert r.values["kkt_absolute"] == pytest.approx(0.01, rel=1e-3)
    assert verify.tolerances(TOL)["kkt_absolute"] < 0.01


def test_least_1norm_complementarity_reads_000_eq_6():
    """A pattern with y_i f(x_i) > 1 must have alpha_i = -C (000 eq. (6)); alpha_i = 0 there is a violation."""
    K = np.eye(2)
    y = np.array([1.0, -1.0])
    alpha = np.array([0.0, 0.0])
    r = kkt.box_dual_residuals("least_1norm_svm", K, y, 1.0, alpha, b=2.0)
    # f = b = 2 for both (f_scale = 1). Pattern 0: s_0 = y_0 f_0 - 1 = 1 > 0 needs alpha_0 = -C:
    # |t_0 - (-1)| * 1 = 1. Pattern 1: s_1 = -2 - 1 = -3 < 0 needs alpha_1 = C: |1 - t_1| * 3 = 3 (the worst).
    assert r.values["complementarity"] == pytest.approx(3.0)
    assert "pattern 1" in r.where["complementarity"] and "needs alpha_i = 1" in r.where["complementarity"]
    r0 = kkt.box_dual_residuals("least_1norm_svm", K, y, 1.0, np.array([-1.0, 0.0]), b=2.0)
    # alpha_0 = -C now satisfies pattern 0 (and breaks y'alpha = 0); pattern 1 still gives 3, relative to the size of
    # the terms of y_i f(x_i) - 1, max_i (sum_j |K_ij alpha_j y_j| + 1) = 2
    assert r0.values["complementarity"] == pytest.approx(1.5) and r0.values["equality"] == pytest.approx(1.0)


def test_shifted_geometric_mean():
    # sgm([1, 100]; 0) = sqrt(1 * 100) = 10; with shift s: sqrt((1+s)(100+s)) - s
    assert verify.shifted_geometric_mean([1.0, 100.0], 0.0) == pytest.approx(10.0)
    assert verify.shifted_geometric_mean([1.0, 100.0], 1.0) == pytest.approx(math.sqrt(2 * 101) - 1)
    assert math.isnan(verify.shifted_geometric_mean([float("inf")], 1.0))


def test_instances_are_deterministic():
    from svmref.verify import data

    a = data.kernel_instances("standard", False)
    b = data.kernel_instances("standard", False)
    for i, j in zip(a, b):
        assert i.name == j.name and np.array_equal(i.X, j.X) and np.array_equal(i.y, j.y)


# ---------------------------------------------------------------------------------------------
# One table of formulations (verify/specs.py) and the import structure of verify/
# ---------------------------------------------------------------------------------------------

VERIFY_DIR = __import__("pathlib").Path(verify.__file__).parent


def test_every_formulation_has_a_spec_entry():
    import svmref.formulations as F
    from svmref.verify import specs

    assert sorted({specs.get(n).model for n in specs.names()}) == sorted(F.names())  # each formulation judged
    assert set(specs.names()) - set(F.names()) == {"fixed_size_ls_svm"}  # the one entry on another's model
    assert specs.get("fixed_size_ls_svm").model == "ls_svm_regression"
    assert sorted(verify.instances.TASK) == sorted(specs.names())
    for name, spec in specs.SPECS.items():
        assert spec.name == name and spec.n_args == len(spec.arguments(verify.suite("quick", name)[0])[0])


def _compared_strings(tree) -> set:
    """String constants that a comparison (==, !=, in, not in) of the module tests against."""
    import ast

    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare):
            for side in [node.left, *node.comparators]:
                for c in ast.walk(side):
                    if isinstance(c, ast.Constant) and isinstance(c.value, str):
                        out.add(c.value)
    return out


def test_only_the_spec_table_names_formulations():
    """No module of verify/ but specs.py dispatches on a formulation's name (or its kind)."""
    import ast

    import svmref.formulations as F

    names = set(F.names()) | (set(verify.instances.TASK.values()) - set(verify.RESIDUALS))  # "box" is also a residual
    offenders = {}
    for path in sorted(VERIFY_DIR.glob("*.py")):
        if path.name == "specs.py":
            continue
        hits = _compared_strings(ast.parse(path.read_text(encoding="utf-8"))) & names
        if hits:
            offenders[path.name] = sorted(hits)
    assert not offenders, offenders
    # the check can fail: a comparison against a name is seen
    assert _compared_strings(ast.parse('if formulation == "svr": pass')) & names == {"svr"}


def test_verify_modules_import_each_other_without_a_cycle():
    """The module-level imports inside verify/ form no cycle (cli -> core -> worker -> loader, not -> cli)."""
    import ast

    graph = {}
    for path in VERIFY_DIR.glob("*.py"):
        deps = set()
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            if isinstance(node, ast.ImportFrom) and node.level == 1:
                deps |= {node.module} if node.module else {a.name for a in node.names}
        graph[path.stem] = deps & {p.stem for p in VERIFY_DIR.glob("*.py")}
    state: dict = {}

    def visit(m, stack):
        if state.get(m) == "done":
            return
        assert state.get(m) != "open", f"import cycle: {' -> '.join(stack + [m])}"
        state[m] = "open"
        for d in sorted(graph[m]):
            visit(d, stack + [m])
        state[m] = "done"

    for m in sorted(graph):
        visit(m, [])
    assert "loader" in graph["worker"] and "cli" not in graph["worker"]


# ---------------------------------------------------------------------------------------------
# Report and command line
# ---------------------------------------------------------------------------------------------

GOOD_FILE = """
import numpy as np

def solve(K, y, C):
    # an SMO (maximal violating pair) run until m - M < 1e-10; b from the free alpha_i
    a, g, Q = np.zeros(len(y)), -np.ones(len(y)), np.outer(y, y) * K
    while True:
        up = ((y > 0) & (a < C)) | ((y < 0) & (a > 0))
        low = ((y > 0) & (a > 0)) | ((y < 0) & (a < C))
        s = -y * g
        i, j = np.flatnonzero(up)[np.argmax(s[up])], np.flatnonzero(low)[np.argmin(s[low])]
        if s[i] - s[j] < 1e-10:
            break
        t = min((s[i] - s[j]) / max(K[i, i] + K[j, j] - 2 * K[i, j], 1e-12),
                (C - a[i]) if y[i] > 0 else a[i], a[j] if y[j] > 0 else (C - a[j]))
        a[i] += y[i] * t
        a[j] -= y[j] * t
        g += t * (y[i] * Q[:, i] - y[j] * Q[:, j])
    free = (a > 1e-12) & (a < C - 1e-12)
    return a, float(np.mean(s[free])) if free.any() else 0.5 * (s[up].max() + s[low].min())

def broken(K, y, C):
    alpha, b = solve(K, y, C)
    return alpha, -b

NOT_CALLABLE = 3
"""


@pytest.fixture
def user_file(tmp_path):
    p = tmp_path / "user_solver.py"
    p.write_text(GOOD_FILE)
    return p


def _run(argv, capsys):
    code = verify_main(argv)
    out = capsys.readouterr()
    return code, out.out, out.err


def test_cli_pass_writes_json_and_exits_0(user_file, tmp_path, capsys):
    js = tmp_path / "out.json"
    code, out, _ = _run([f"{user_file}:solve", "--formulation", "l1_svm", "--json", str(js)], capsys)
    assert code == 0, out
    assert "success rate 100.0%" in out and "verdict: PASS" in out
    data = json.loads(js.read_text())
    assert data["passed"] is True
    keys = {"formulation", "solver", "instance", "passed", "objective_gap", "kkt_violation", "duality_gap", "reason"}
    assert data["records"] and all(keys <= set(r) for r in data["records"])


def test_cli_failure_exits_1(user_file, capsys):
    code, out, _ = _run([f"{user_file}:broken", "-f", "l1_svm"], capsys)
    assert code == 1
    assert "complementarity" in out and "verdict: FAIL" in out


@pytest.mark.parametrize("argv, message", [
    (["nonexistent_module_xyz:solve", "-f", "l1_svm"], "cannot import"),
    (["missing/file.py:solve", "-f", "l1_svm"], "no such file"),
    (["{file}:nope", "-f", "l1_svm"], "has no attribute"),
    (["{file}:NOT_CALLABLE", "-f", "l1_svm"], "not callable"),
    (["{file}", "-f", "l1_svm"], "SPEC must look like"),
    (["{file}:solve"], "--formulation is required"),
    (["{file}:solve", "-f", "no_such_formulation"], "unknown --formulation"),
    (["{file}:solve", "-f", "l1_svm", "--tol", "-1"], "--tol"),
    (["{file}:solve", "-f", "l1_svm", "--suite", "huge"], "invalid choice"),
    ([], "SPEC is required"),
])
def test_cli_usage_errors_exit_2(argv, message, user_file, capsys):
    argv = [a.replace("{file}", str(user_file)) for a in argv]
    code, out, err = _run(argv, capsys)
    assert code == 2
    assert message in err


def test_cli_help_says_it_runs_user_code(capsys):
    code, out, _ = _run(["--help"], capsys)
    assert code == 0
    assert "executes the code you name" in out and "f(K, y, C" in out


def test_cli_list_prints_registry(capsys):
    from svmref.solvers import REGISTRY

    code, out, _ = _run(["--list"], capsys)
    assert code == 0
    assert out.split("\n")[:-1] == [f"{s} {f}" for s, f in REGISTRY.items()]


def test_cli_all_skips_unimportable_registry_entries_with_a_reason(monkeypatch, capsys):
    from svmref import solvers

    monkeypatch.setattr(solvers, "REGISTRY", {"svmref.solvers.does_not_exist:f": "l1_svm",
                                               f"{__name__}:kernel_ridge_rls": "rls"})
    code, out, err = _run(["--all", "--suite", "quick"], capsys)
    assert "SKIP svmref.solvers.does_not_exist:f (l1_svm): cannot import" in err
    assert "skipped:" in out and "kernel_ridge_rls" in out
    assert code == 0  # a skipped entry is reported, not a failure
    # an entry that imports but does not have an RLS solver's signature fails (a record, exit 1), before any instance
    monkeypatch.setattr(solvers, "REGISTRY", {"sklearn.kernel_ridge:KernelRidge": "rls"})
    code, out, _ = _run(["--all", "--suite", "quick"], capsys)
    assert code == 1 and "cannot be called as f(K, y, gamma, **options)" in out


def test_report_is_printable_and_converts_to_records():
    report = verify.check(exact_l1, "l1_svm", "quick", TOL)
    text = str(report)
    assert "instance" in text and "success rate" in text
    recs = report.to_records()
    assert len(recs) == len(report) == 3
    json.dumps(recs)  # JSON-ready


# ---------------------------------------------------------------------------------------------
# The built-in solvers (solvers.REGISTRY): the health report, as tests
# ---------------------------------------------------------------------------------------------

#: Built-in solvers known to fail the quick suite (each a strict xfail, so that a fix is noticed). None at present:
#: the support features machine's decision values at tol = 1e-6 (off by 1.8e-6 on q-features-20x10-mu0.3) were
#: fixed by its Newton polish below POLISH_TOL (svmref.solvers._sfm_model).
KNOWN_FAILING: dict[str, str] = {}


def _registry_params():
    from svmref.solvers import REGISTRY

    out = []
    for spec, form in REGISTRY.items():
        marks = [pytest.mark.xfail(strict=True, reason=KNOWN_FAILING[spec])] if spec in KNOWN_FAILING else []
        out.append(pytest.param(spec, form, marks=marks, id=spec))
    return out


def _load_builtin(spec):
    from svmref.verify.loader import SpecError, load_spec

    try:
        return load_spec(spec)
    except SpecError as exc:  # a built-in solver that does not import is a failure
        pytest.fail(f"{spec} does not import: {exc}")


@pytest.mark.parametrize("spec, formulation", _registry_params())
def test_builtin_solver_passes_quick(spec, formulation):
    report = verify.check(_load_builtin(spec), formulation, "quick", TOL, name=spec)
    assert report.passed, str(report)


#: Built-in solvers that verify catches failing on the larger suites: known, measured limitations of the solvers (not
#: of verify), strict xfails until fixed. None at present: the support features machine's decision values (off by
#: 1.1e-6 to 7.6e-6 at tol = 1e-6) and the SVR's on s-linear-50 (1.3e-6) were fixed by the Newton polish below
#: POLISH_TOL (svmref.solvers._sfm_model) and the SMO's TIGHT_MARGIN (svmref.solvers.smo).
KNOWN_FAILING_LARGER: dict[tuple[str, str], str] = {}


def _larger_params():
    out = []
    for p in _registry_params():
        spec, form = p.values
        for suite in ("standard", "adversarial", "real"):
            reason = KNOWN_FAILING_LARGER.get((spec, suite))
            marks = [pytest.mark.xfail(strict=True, reason=reason)] if reason else []
            out.append(pytest.param(spec, form, suite, marks=marks, id=f"{spec}-{suite}"))
    return out


@pytest.mark.slow
@pytest.mark.parametrize("spec, formulation, suite", _larger_params())
def test_builtin_solver_passes_larger_suites(spec, formulation, suite):
    report = verify.check(_load_builtin(spec), formulation, suite, TOL, name=spec)
    assert report.passed, str(report)


# ---------------------------------------------------------------------------------------------
# Timeouts, tolerance advice, diagnoses, convention hints, signature and shape errors.
# Each point is held to a deliberately flawed solver.
# ---------------------------------------------------------------------------------------------
SMO_TOL_NEAR = 1e-3   # where a typical from-scratch SMO stops (LIBSVM's default eps)
SMO_TOL_TIGHT = 1e-10


def smo(K, y, C, tol=SMO_TOL_TIGHT, max_iter=200_000):
    """A from-scratch L1-SVM SMO (maximal violating pair), stopping when m - M < tol; b from the free alpha_i."""
    a = np.zeros(len(y))
    g = -np.ones(len(y))  # gradient of 1/2 a'Qa - e'a, Q = yy'K
    Q = np.outer(y, y) * K
    for _ in range(max_iter):
        up = ((y > 0) & (a < C)) | ((y < 0) & (a > 0))
        low = ((y > 0) & (a > 0)) | ((y < 0) & (a < C))
        s = -y * g
        i = np.flatnonzero(up)[np.argmax(s[up])]
        j = np.flatnonzero(low)[np.argmin(s[low])]
        if s[i] - s[j] < tol:
            break
        t = (s[i] - s[j]) / max(K[i, i] + K[j, j] - 2 * K[i, j], 1e-12)
        t = min(t, (C - a[i]) if y[i] > 0 else a[i], a[j] if y[j] > 0 else (C - a[j]))
        a[i] += y[i] * t
        a[j] -= y[j] * t
        g += t * (y[i] * Q[:, i] - y[j] * Q[:, j])
    s = -y * g
    free = (a > 1e-12) & (a < C - 1e-12)
    b = float(np.mean(s[free])) if free.any() else 0.5 * (s[up].max() + s[low].min())
    return a, b


def near_optimal_smo(K, y, C):
    return smo(K, y, C, tol=SMO_TOL_NEAR)


def wrong_bias_smo(K, y, C):
    """Optimal alpha; b averaged over every support vector, bounded ones (alpha_i = C) included."""
    a, _ = smo(K, y, C)
    sv = a > 1e-8
    return a, float(np.mean(y[sv] - K[sv] @ (a * y)))


def hanging_solver(K, y, C):
    import time

    while True:
        time.sleep(0.01)


def regression_convention_ls_svm(K, y, C):
    """An exact LS-SVM that returns alpha_i y_i (the regression convention) for ls_svm."""
    a, b = ls_svm_system(K, y, C)
    return a * y, b


def three_tuple_solver(K, y, C):
    a, b = smo(K, y, C)
    return a, b, 0


def two_argument_solver(K, y):
    return smo(K, y, 1.0)


def test_smo_passes_when_tight():
    """The yardstick of the flawed variants below: the same SMO run to 1e-10 passes (its own tol set by options, so
    verify does not pass it 1e-6: stopped at m - M < 1e-6 its decision values are off by up to 3e-6)."""
    assert verify.check(smo, "l1_svm", "quick", TOL, options={"tol": SMO_TOL_TIGHT}).passed


def test_near_optimal_smo_gets_the_tolerance_it_would_pass_at():
    report = verify.check(near_optimal_smo, "l1_svm", "quick", TOL)
    assert not report.passed and len(report.failures) == len(report)
    for r in report:
        t = r.would_pass_at_tol
        assert t is not None and TOL < t < 1, r
        assert any(d.startswith("not optimal") for d in r.diagnoses), r.diagnoses
        # the advice is exact to one digit: the answer passes at t (the run repeats the solver, which is deterministic)
        inst = verify.suite("quick", "l1_svm")
        one = [i for i in inst if i.name == r.instance]
        assert verify.check(near_optimal_smo, "l1_svm", one, t).passed
        digit, exp = f"{t:.0e}".split("e")  # the one-digit tolerance just below t must fail
        lower = float(f"{int(digit) - 1}e{exp}") if int(digit) > 1 else float(f"9e{int(exp) - 1}")
        assert not verify.check(near_optimal_smo, "l1_svm", one, lower).passed, (t, lower)
    assert report.suite_tol == max(r.would_pass_at_tol for r in report)
    assert f"the whole suite would pass at --tol {report.suite_tol:.0e}" in str(report)
    assert "would pass at --tol" in report.table()
    rec = json.loads(report.to_json())
    assert rec["summary"]["would_pass_at_tol"] == report.suite_tol
    assert all(x["would_pass_at_tol"] is not None for x in rec["records"])


def test_wrong_bias_is_named_with_its_kkt_interval():
    """b averaged over every support vector: outside the KKT interval of the answer's own (optimal) alpha, and equal
    to that average, which the diagnosis computes before it names the slip."""
    report = verify.check(wrong_bias_smo, "l1_svm", "quick", TOL)
    assert not report.passed
    for r in report:
        assert r.diagnoses and r.diagnoses[0].startswith("b is wrong for the answer's own alpha"), r.diagnoses
        lo, hi = sorted(r.b_interval)
        assert f"[{lo:.6g}, {hi:.6g}]" in r.diagnoses[0]
        assert "bounded ones included" in r.diagnoses[0]
        assert r.objective_gap <= TOL  # alpha is optimal: only b is wrong


def test_box_and_equality_violations_are_diagnosed_in_words():
    r = verify.check(box_violated, "l1_svm", "quick", TOL)[0]
    assert any(d.startswith("box violated: alpha_3 = -0.31") for d in r.diagnoses), r.diagnoses
    r = verify.check(equality_near_miss, "l1_svm", "quick", TOL)[0]
    assert any(d.startswith("y'alpha != 0") for d in r.diagnoses), r.diagnoses


@pytest.mark.parametrize("solver, formulation, words", [
    (half_C, "l1_svm", "solves the problem with C = "),
    (kernel_ridge_without_m, "rls", "solves the problem with gamma / m"),
    (ls_without_shift, "ls_svm", None),  # K + 1e-3 I, not K: no candidate fits, and none is claimed
])
def test_a_different_c_is_named_where_detectable(solver, formulation, words):
    for r in verify.check(solver, formulation, "quick", TOL):
        found = [d for d in r.diagnoses if d.startswith("solves ")]
        if words is None:
            assert not found, found
        else:
            assert found and found[0].startswith(words), r.diagnoses


def test_a_different_c_reads_the_c_the_solver_used():
    r = verify.check(half_C, "l1_svm", "quick", TOL)[0]
    C = r.hyper["C"]
    assert f"C = {C / 2:.6g} (= C / 2) instead of C = {C:g}" in " ".join(r.diagnoses), r.diagnoses


@pytest.mark.parametrize("solver, formulation, hint", [
    (regression_convention_ls_svm, "ls_svm", "alpha -> y * alpha"),
    (signed_dual_coef, "l1_svm", "alpha -> y * alpha"),
    (b_sign_flipped, "l1_svm", "b -> -b"),
    (rls_scaled_by_m, "rls", "c / m"),
])
def test_convention_slips_get_a_hint(solver, formulation, hint):
    for r in verify.check(solver, formulation, "quick", TOL):
        assert r.passed is False
        assert any(h.startswith("hint: the answer passes after " + hint) for h in r.hints), r.hints


def test_regression_convention_says_it_solves_ls_svm_regression():
    r = verify.check(regression_convention_ls_svm, "ls_svm", "quick", TOL)[0]
    assert any("as given, the answer solves ls_svm_regression" in h for h in r.hints), r.hints
    # and the claim is true: the same answer passes ls_svm_regression
    assert verify.check(lambda K, y, C: regression_convention_ls_svm(K, y, C), "ls_svm_regression",
                        [i for i in verify.suite("quick", "ls_svm") if i.name == r.instance], TOL).passed


def test_a_correct_answer_gets_no_hint_and_no_diagnosis():
    for r in verify.check(exact_l1, "l1_svm", "quick", TOL):
        assert r.passed and not r.hints and not r.diagnoses and r.would_pass_at_tol is None


def test_hanging_solver_is_killed_at_the_timeout():
    # the solver never returns: that check() returns at all, with a timeout verdict per instance, is the proof
    report = verify.check(hanging_solver, "l1_svm", "quick", TOL, timeout=0.3)
    assert [r.verdict for r in report] == ["timeout"] * 3
    assert all(r.passed is False and "no answer within 0.3 s" in r.reason for r in report)
    assert "3 timed out" in report.summary_text()


def test_worker_runs_closures_and_returns_unpicklable_answers():
    class Answer:  # a local class: cannot be pickled back from the worker, sent as its attributes
        def __init__(self, alpha, b):
            self.alpha, self.b = alpha, b

    def solver(K, y, C):
        return Answer(*exact_l1(K, y, C))

    report = verify.check(solver, "l1_svm", "quick", TOL, timeout=60)
    assert report.passed, str(report)


def test_solver_that_kills_its_process_is_an_error_not_a_crash():
    import os

    def dies(K, y, C):
        os._exit(3)

    r = verify.check(dies, "l1_svm", "quick", TOL, timeout=60)[0]
    assert r.verdict == "error" and "exit code 3" in r.reason


def test_ctrl_c_keeps_the_finished_records():
    calls = []

    def interrupted_on_second(K, y, C):
        calls.append(1)
        if len(calls) == 2:
            raise KeyboardInterrupt
        return exact_l1(K, y, C)

    report = verify.check(interrupted_on_second, "l1_svm", "quick", TOL)
    assert report.interrupted and len(report) == 1 and report.planned == 3
    assert report.passed  # over what finished
    text = report.summary_text()
    assert "interrupted (Ctrl-C) after 1 of 3" in text and "verdict: PASS (partial)" in text


def test_signature_is_checked_once_before_any_instance():
    with pytest.raises(verify.SignatureError, match=r"cannot be called as f\(K, y, C, \*\*options\)"):
        verify.check(two_argument_solver, "l1_svm", "quick", TOL)
    with pytest.raises(verify.SignatureError, match=r"f\(X, y, C, mu, \*\*options\)"):
        verify.check(exact_l1, "support_features", "quick", TOL)


def test_record_says_when_verify_set_the_solvers_tol():
    report = verify.check(svc_l1, "l1_svm", "quick", TOL)
    assert all(r.solver_tol == TOL and f"verify set the solver's tol = {TOL:g}" in r.notes for r in report)
    assert any("passed tol" in n for n in report.notes)
    report = verify.check(ls_svm_system, "ls_svm", "quick", TOL)
    assert all(r.solver_tol is None for r in report)


def test_three_tuple_error_says_what_was_received():
    r = verify.check(three_tuple_solver, "l1_svm", "quick", TOL)[0]
    assert r.verdict == "error"
    assert "got a tuple of length 3 (ndarray of shape (20,), float, int)" in r.reason


def test_n_rescales_the_standard_suite():
    insts = verify.suite("standard", "l1_svm", n=40)
    assert [i.N for i in insts] == [40] * len(verify.suite("standard", "l1_svm"))
    assert all(i.name.endswith("@40") for i in insts)
    with pytest.raises(ValueError, match="fixed sizes"):
        verify.suite("real", "l1_svm", n=40)


def test_from_data_builds_an_instance_from_a_csv(tmp_path):
    from svmref.verify.instances import from_data, load_csv

    rng = np.random.default_rng(0)
    X = rng.standard_normal((50, 3))
    lab = np.where(X[:, 0] > 0, 2, 1)  # labels 1/2: mapped to -1/+1
    p = tmp_path / "d.csv"
    p.write_text("a,b,c,label\n" + "\n".join(",".join(f"{v:.6g}" for v in row) + f",{c}" for row, c in zip(X, lab)))
    X2, y2 = load_csv(p)
    assert X2.shape == (50, 3) and set(np.unique(y2)) == {1.0, 2.0}
    inst = from_data(X2, y2, "l1_svm", C=2.0, name="d")
    assert inst.N == 40 and inst.X_test.shape == (10, 3) and set(np.unique(inst.y)) == {-1.0, 1.0}
    assert verify.check(exact_l1, "l1_svm", [inst], TOL).passed
    with pytest.raises(ValueError, match="two classes"):
        from_data(X2, np.arange(50.0), "l1_svm")


def test_spawn_worker_imports_the_solver_by_name(tmp_path):
    """Where there is no fork, the worker is spawned and imports SPEC itself (here forced on Linux)."""
    from svmref.verify.worker import Runner

    p = tmp_path / "spawned.py"
    p.write_text("import time\n\ndef ok(K, y, C):\n    return [0.0] * len(y), 0.0\n\n"
                 "def hang(K, y, C):\n    time.sleep(60)\n")
    K, y = np.eye(4), np.array([1.0, -1.0, 1.0, -1.0])
    with Runner(None, timeout=30, spec=f"{p}:ok") as r:
        r.method = "spawn"
        out = r.call((K, y, 1.0), {})
    assert out.kind == "ok" and list(out.value[0]) == [0.0] * 4
    with Runner(None, timeout=0.5, spec=f"{p}:hang") as r:
        r.method = "spawn"
        out = r.call((K, y, 1.0), {})  # the clock starts once the worker has imported: 0.5 s is enough
    assert out.kind == "timeout"
    with Runner(None, timeout=30, spec=f"{p}:missing") as r:
        r.method = "spawn"
        out = r.call((K, y, 1.0), {})
    assert out.kind == "died" and "has no attribute" in out.message


# ---------------------------------------------------------------------------------------------
# epsilon-SVR ("svr"). verify calls f(K, y, C, epsilon=epsilon) and reads alpha = alpha^+ - alpha^-
# (length N) and b, f(x) = sum_i alpha_i k(x_i, x) + b. The registry entry svmref.solvers.smo:svr is held to
# quick (test_builtin_solver_passes_quick) and to the larger suites (test_builtin_solver_passes_larger_suites, slow).
# ---------------------------------------------------------------------------------------------
SVR_SOLVER_TOL = 1e-10  # the SMO runs of the broken variants below: exact but for the one deliberate flaw
SVR_B_OFFSET = 0.05     # a bias error far above sqrt(tol) = 1e-3


def sklearn_svr(K, y, C, epsilon):
    """scikit-learn's SVR (LIBSVM) as an svr solver: dual_coef_ holds alpha^+_i - alpha^-_i of the support
    vectors (index support_), intercept_ is b (LIBSVM's -rho)."""
    from sklearn.svm import SVR

    m = SVR(kernel="precomputed", C=C, epsilon=epsilon, tol=SVC_TOL).fit(K, y)
    alpha = np.zeros(len(y))
    alpha[m.support_] = m.dual_coef_[0]
    return alpha, float(m.intercept_[0])


def _smo_svr(K, y, C, epsilon):
    from svmref.solvers import smo as smo_solvers

    return smo_solvers.svr(K, y, C, epsilon=epsilon, tol=SVR_SOLVER_TOL)


def svr_epsilon_ignored(K, y, C, epsilon):
    r = _smo_svr(K, y, C, 0.0)
    return r.alpha, r.b


def svr_sign_flipped(K, y, C, epsilon):
    r = _smo_svr(K, y, C, epsilon)
    return -r.alpha, r.b


def svr_b_off(K, y, C, epsilon):
    r = _smo_svr(K, y, C, epsilon)
    return r.alpha, r.b + SVR_B_OFFSET


def svr_half_C(K, y, C, epsilon):
    r = _smo_svr(K, y, C / 2, epsilon)
    return r.alpha, r.b


@pytest.mark.parametrize("suite", ["quick", "real"])
def test_sklearn_svr_decision_error_is_what_verify_reports(suite):
    """scikit-learn's SVR shares LIBSVM's single-precision kernel cache: its decision values are off by ~1e-6.
    Measured against the SMO run to 1e-10 (not against verify's reference), verify never reports more decision
    error than there is (beyond the reference's stated resolution), and fails SVR only on the decision values (or
    b, or the margins) where that error is above tol; elsewhere it passes, or says the reference cannot resolve tol
    (never a pass or fail it cannot back)."""
    report = verify.check(sklearn_svr, "svr", suite, TOL)
    for r, inst in zip(report, verify.suite(suite, "svr")):
        K, y, C, eps = inst.K, inst.y, inst.hyper["C"], inst.hyper["epsilon"]
        a, b = sklearn_svr(K, y, C, eps)
        tight = _smo_svr(K, y, C, eps)
        unit = float(np.max(np.abs(y)))
        rows = np.vstack([K, inst.K_test])  # the training and held-out points, as verify compares
        dw = rows @ a - rows @ tight.alpha  # W.Phi(x), and f = W.Phi(x) + b
        err = max(float(np.max(np.abs(dw + b - tight.b))), float(np.max(np.abs(dw)))) / unit
        # verify's value is within the reference's stated resolution of the independently measured error
        res = r.reference_resolution.get("decision_gap", 0.0)
        assert r.decision_gap <= err + res + 1e-8, (r.instance, r.decision_gap, err, res)
        if r.verdict == "fail":
            failing = {k for k in verify.TOLERANCES if re.search(rf"(^|; ){k} \d", r.reason)}
            assert failing and failing <= {"decision_gap", "b_gap", "kkt_absolute"}, r.reason
            assert err > TOL, (r.instance, err)
        else:
            assert r.verdict in ("pass", "unresolved"), r.reason


def test_svr_b_may_be_omitted_and_is_derived():
    report = verify.check(lambda K, y, C, epsilon: _smo_svr(K, y, C, epsilon).alpha, "svr", "quick", TOL)
    assert report.passed, str(report)
    assert all(r.b_derived and any("b was not given" in n for n in r.notes) for r in report)


@pytest.mark.parametrize("solver, instance, reason, words", [
    (svr_epsilon_ignored, "q-rbf-30", "objective_gap",
     "solves the problem with epsilon = 0 (epsilon ignored: no tube) instead of epsilon = 0.1"),
    (svr_sign_flipped, "q-rbf-30", "objective_gap", "hint: the answer passes after alpha -> -alpha"),
    (svr_b_off, "q-rbf-30", "complementarity", "b is wrong for the answer's own alpha"),
    (svr_half_C, "q-poly-24", "objective_gap", "solves the problem with C = 0.05 (= C / 2) instead of C = 0.1"),
], ids=["epsilon-ignored", "alpha-sign-flipped", "b-off", "half-C"])
def test_broken_svr_fails_with_the_right_reason(solver, instance, reason, words):
    """q-rbf-30 has epsilon = 0.1 > 0 and free alpha_i; q-poly-24 (C = 0.1) has alpha_i at the bound C, so
    that halving C changes the answer (at q-rbf-30, C = 10 binds nowhere)."""
    inst = [i for i in verify.suite("quick", "svr") if i.name == instance]
    assert inst and inst[0].hyper["epsilon"] > 0
    rec = verify.check(solver, "svr", inst, TOL)[instance]
    assert rec.verdict == "fail", str(rec)
    assert rec.reason.startswith(reason), rec.reason
    assert any(words in d for d in rec.diagnoses + rec.hints), (rec.diagnoses, rec.hints)


def test_svr_b_off_names_its_kkt_interval_and_tolerance():
    rec = verify.check(svr_b_off, "svr", "quick", TOL)["q-rbf-30"]
    lo, hi = rec.b_interval
    inst = verify.suite("quick", "svr")[1]
    b_true = _smo_svr(inst.K, inst.y, inst.hyper["C"], inst.hyper["epsilon"]).b
    assert abs(lo - b_true) <= 1e-8 and abs(hi - b_true) <= 1e-8
    assert rec.would_pass_at_tol is not None and rec.would_pass_at_tol > TOL


def test_svr_instances_carry_epsilon_and_the_contract_passes_it_by_keyword():
    for name in ("quick", "standard", "adversarial", "real"):
        insts = verify.suite(name, "svr")
        assert insts and all(set(i.hyper) == {"C", "epsilon"} and i.hyper["epsilon"] >= 0 for i in insts)
    eps = [i.hyper["epsilon"] for i in verify.suite("quick", "svr")]
    assert 0.0 in eps and max(eps) > 0.0  # the suites hold epsilon = 0 (least absolute deviations) and a tube
    seen = []

    def spy(K, y, C, epsilon):
        seen.append(epsilon)
        r = _smo_svr(K, y, C, epsilon)
        return r.alpha, r.b

    assert verify.check(spy, "svr", "quick", TOL).passed
    assert seen == eps
    with pytest.raises(verify.SignatureError, match=r"f\(K, y, C, epsilon=epsilon"):
        verify.check(lambda K, y, C: (np.zeros(len(y)), 0.0), "svr", "quick", TOL)
    with pytest.raises(ValueError, match="epsilon"):
        verify.check(spy, "svr", "quick", TOL, options={"epsilon": 0.3})


def test_svr_residuals_of_an_exact_answer_vanish_and_a_box_violation_is_named():
    inst = verify.suite("quick", "svr")[1]
    r = _smo_svr(inst.K, inst.y, inst.hyper["C"], inst.hyper["epsilon"])
    res = kkt.svr_residuals(inst.K, inst.y, inst.hyper, {"alpha": r.alpha, "b": r.b})
    for k in ("box", "equality", "primal_feasibility", "complementarity", "stationarity", "duality_gap"):
        assert res.values[k] <= EXACT, (k, res.values[k])
    assert abs(res.objective - r.objective) <= EXACT * max(1.0, abs(r.objective))
    bad = r.alpha.copy()
    i = int(np.argmax(np.abs(bad)))
    bad[i] = 2.0 * inst.hyper["C"] * np.sign(bad[i])
    res = kkt.svr_residuals(inst.K, inst.y, inst.hyper, {"alpha": bad, "b": r.b})
    assert res.values["box"] == pytest.approx(1.0) and f"alpha_{i} = " in res.where["box"]


def test_from_data_builds_an_svr_instance_with_epsilon():
    from svmref.verify.instances import from_data

    rng = np.random.default_rng(5)
    X = rng.standard_normal((40, 2))
    y = np.sin(X[:, 0]) + 0.1 * rng.standard_normal(40)
    inst = from_data(X, y, "svr", C=2.0, epsilon=0.05)
    assert inst.hyper == {"C": 2.0, "epsilon": 0.05}
    assert verify.check(sklearn_svr, "svr", [inst], TOL).passed
    with pytest.raises(ValueError, match="epsilon"):
        from_data(X, y, "svr", epsilon=-1.0)


def test_cli_verifies_svr_on_user_data_with_epsilon(tmp_path, capsys):
    rng = np.random.default_rng(6)
    X = rng.standard_normal((30, 2))
    y = np.sin(X[:, 0]) + 0.1 * rng.standard_normal(30)
    p = tmp_path / "reg.csv"
    p.write_text("\n".join(f"{a:.6g},{b:.6g},{t:.6g}" for (a, b), t in zip(X, y)))
    out_json = tmp_path / "out.json"
    code, out, err = _run(["svmref.solvers.smo:svr", "--data", str(p), "--epsilon", "0.05", "--json", str(out_json)],
                          capsys)
    assert code == 0, out + err
    recs = json.loads(out_json.read_text())
    recs = recs["records"] if isinstance(recs, dict) else recs
    assert recs[0]["formulation"] == "svr" and recs[0]["hyper"] == {"C": 1.0, "epsilon": 0.05}
    code, out, err = _run(["svmref.solvers.smo:svr", "--epsilon", "0.05"], capsys)
    assert code == 2 and "--epsilon goes with --data" in err
    code, out, err = _run(["svmref.solvers.smo:svr", "--data", str(p), "--epsilon", "-1"], capsys)
    assert code == 2 and "--epsilon must be >= 0" in err


def test_svr_negated_b_gets_the_libsvm_rho_hint():
    def rho_as_b(K, y, C, epsilon):
        r = _smo_svr(K, y, C, epsilon)
        return r.alpha, -r.b

    rec = verify.check(rho_as_b, "svr", "quick", TOL)["q-rbf-30"]
    assert rec.verdict == "fail"
    assert any("b -> -b" in h and "rho" in h for h in rec.hints), rec.hints


def test_near_miss_is_not_diagnosed_as_a_different_C():
    """An answer optimal for C with every lam_j below C' < C is also optimal for C', so a near miss must
    not be blamed on "a different C" (it was, on s-features-60x200-mu0.6 at C = 100: "C = 1.67");
    here lam is shrunk by 1e-6 relative: a plain 'not optimal' near miss."""
    from svmref.solvers.support_features import support_features

    inst = [i for i in verify.suite("standard", "support_features") if i.name == "s-features-60x200-mu0.6"]

    def near_miss(X, y, C, mu):
        return {"lam": support_features(X, y, C, mu, tol=1e-10).lam * (1.0 - 1e-6)}

    rec = verify.check(near_miss, "support_features", inst, TOL).records[0]
    assert rec.verdict == "fail" and rec.would_pass_at_tol <= 1e-3
    assert rec.diagnoses and rec.diagnoses[0].startswith("not optimal")
    assert not any("different C" in d for d in rec.diagnoses), rec.diagnoses

"""LS-SVM (classification, regression) and RLS by linear systems: :mod:`svmref.solvers.linear`.

Checked against the cvxpy ground truth (:mod:`svmref.formulations`): the LS-SVM dual QP (000 eq. (2); dual
of 004 eq. (1)), the primals (000 eq. (1); 004 eq. (1)) through ``alpha_i = C xi_i`` and ``p* = -D*``,
the KKT system (004 eq. (2)) solved densely, RLS against the functional (001 eq. (7)) minimised in
cvxpy.  Every instance has ``Ktilde = K + I/C`` positive definite, so alpha and b are unique and are
compared directly (when the solution is unique, alpha and b are compared, not only objectives and residuals).
"""
from __future__ import annotations

import warnings
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.linalg import LinAlgWarning
from scipy.sparse.linalg import aslinearoperator

import svmref.formulations as F
from svmref.kernels import kernel_matrix, mlp_kernel
from svmref.solvers._result import ConvergenceWarning
from svmref.solvers.linear import IllConditionedWarning, ls_svm, ls_svm_regression, rls

# ---- tolerances (one table) ----------------------------------------------------------------------
TOL = {
    "ref_alpha": 1e-5,     # |alpha - alpha_cvxpy|_inf / max(1, |alpha|_inf): CLARABEL at 1e-10 gap
    "ref_obj": 1e-7,       # |D - D_cvxpy| / max(1, |D|)
    "direct": 1e-10,       # Cholesky vs numpy.linalg.solve of the same (N+1) x (N+1) system, relative
    "cg": 1e-7,            # CG at tol=1e-12 vs Cholesky, relative
    "kkt": 1e-9,           # residual of system (2) / (1 + |y|_inf) after a fallback solve
}

# ---- instances -----------------------------------------------------------------------------------
INSTANCES = {
    "rbf": dict(kernel="rbf", sigma=1.0),
    "linear": dict(kernel="linear"),
    "poly": dict(kernel="poly", c=2.0, d=3),
}


def make(name, N=30, seed=0, task="classification"):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(N, 3))
    K = kernel_matrix(X, **INSTANCES[name])
    if task == "classification":
        y = np.where(X[:, 0] + 0.5 * rng.normal(size=N) > 0, 1.0, -1.0)
        y[:2] = (1.0, -1.0)
    else:
        y = np.sin(X[:, 0]) + 0.1 * rng.normal(size=N)
    return K, y


def rel(a, b):
    a, b = np.asarray(a, float), np.asarray(b, float)
    return float(np.max(np.abs(a - b)) / max(1.0, float(np.max(np.abs(b)))))


def ref(name, form, K, y, **hyper):
    return F.solve(getattr(F.get(name), form)(K, y, **hyper))


FORMS = [("classification", "ls_svm", ls_svm), ("regression", "ls_svm_regression", ls_svm_regression)]


# ---- LS-SVM against the ground truth -------------------------------------------------------------
@pytest.mark.parametrize("task,fname,solver", FORMS, ids=["cls", "reg"])
@pytest.mark.parametrize("inst", list(INSTANCES))
@pytest.mark.parametrize("C", [0.1, 10.0])
def test_ls_svm_equals_cvxpy_dual(task, fname, solver, inst, C):
    K, y = make(inst, task=task)
    res = solver(K, y, C)
    sol = ref(fname, "dual", K, y, C=C)
    assert res.status == "optimal" and res.converged
    assert rel(res.alpha, sol.values["alpha"]) < TOL["ref_alpha"]
    assert abs(res.objective - sol.objective) / max(1.0, abs(sol.objective)) < TOL["ref_obj"]


@pytest.mark.parametrize("task,fname,solver", FORMS, ids=["cls", "reg"])
@pytest.mark.parametrize("inst", ["rbf", "poly"])
def test_ls_svm_equals_cvxpy_primal(task, fname, solver, inst):
    """Primal (000 eq. (1) / 004 eq. (1)): p* = -D*, the same b, and xi = alpha / C."""
    C = 3.0
    K, y = make(inst, task=task, seed=1)
    res = solver(K, y, C)
    sol = ref(fname, "primal", K, y, C=C)
    assert abs(-res.objective - sol.objective) / max(1.0, abs(sol.objective)) < TOL["ref_obj"]
    assert abs(res.b - sol.values["b"]) / max(1.0, abs(sol.values["b"])) < TOL["ref_alpha"]
    assert rel(res.alpha / C, sol.values["xi"]) < TOL["ref_alpha"]


@pytest.mark.parametrize("task,fname,solver", FORMS, ids=["cls", "reg"])
@pytest.mark.parametrize("inst", list(INSTANCES))
def test_ls_svm_equals_dense_kkt_system(task, fname, solver, inst):
    """The formulation's own (N+1) x (N+1) KKT system (000 eqs. (2),(7); 004 eq. (2)), numpy.linalg.solve."""
    C = 2.0
    K, y = make(inst, task=task, seed=2)
    A, rhs = F.get(fname).kkt_system(K, y, C=C)
    s = np.linalg.solve(A, rhs)
    res = solver(K, y, C)
    assert abs(res.b - s[0]) < TOL["direct"] * max(1.0, abs(s[0]))
    assert rel(res.alpha, s[1:]) < TOL["direct"]


def test_classification_and_regression_forms_related():
    """For y in {-1, +1}: alpha_regression = y * alpha_classification, same b, same objective."""
    K, y = make("rbf", seed=3)
    c, r = ls_svm(K, y, 5.0), ls_svm_regression(K, y, 5.0)
    assert rel(r.alpha, y * c.alpha) < TOL["direct"]
    assert abs(r.b - c.b) < TOL["direct"]
    assert abs(r.objective - c.objective) < TOL["direct"] * max(1.0, abs(c.objective))
    assert rel(c.decision_function(K), r.decision_function(K)) < TOL["direct"]


# ---- the three paths -----------------------------------------------------------------------------
@pytest.mark.parametrize("task,fname,solver", FORMS, ids=["cls", "reg"])
@pytest.mark.parametrize("as_operator", [False, True], ids=["dense", "LinearOperator"])
def test_cg_equals_cholesky(task, fname, solver, as_operator):
    K, y = make("rbf", N=60, seed=4, task=task)
    chol = solver(K, y, 10.0)
    cg = solver(aslinearoperator(K) if as_operator else K, y, 10.0, method="cg", tol=1e-12)
    assert cg.method == "cg" and cg.status == "optimal" and cg.kkt_gap <= 1e-12
    assert rel(cg.alpha, chol.alpha) < TOL["cg"]
    assert abs(cg.b - chol.b) < TOL["cg"] * max(1.0, abs(chol.b))


def test_auto_picks_cholesky_for_small_dense_and_cg_for_operator():
    K, y = make("rbf", seed=5)
    assert ls_svm(K, y, 1.0, method="auto").method == "cholesky"
    assert ls_svm(aslinearoperator(K), y, 1.0, method="auto").method == "cg"


def test_cg_iteration_limit_warns_and_reports():
    K, y = make("rbf", N=60, seed=6)
    with pytest.warns(ConvergenceWarning):
        res = ls_svm(K, y, 100.0, method="cg", tol=1e-14, max_iter=2)
    assert res.status == "max_iter_reached" and not res.converged and res.n_iter == 2


def test_overwrite_K_gives_same_answer_and_consumes_K():
    K, y = make("rbf", seed=7)
    ref_res = ls_svm(K, y, 1.0)
    K2 = K.copy()
    res = ls_svm(K2, y, 1.0, overwrite_K=True)
    assert rel(res.alpha, ref_res.alpha) == 0.0
    assert not np.array_equal(K2, K)      # documented: K is overwritten by the factor
    K3 = K.copy()
    ls_svm(K3, y, 1.0)                    # default: K untouched
    assert np.array_equal(K3, K)


def test_indefinite_kernel_falls_back_to_ldl_with_warning():
    """MLP kernel (002: not PSD for all k, theta): Cholesky fails, LDL' solves system (2) exactly."""
    rng = np.random.default_rng(8)
    X = rng.normal(size=(40, 3))
    K = mlp_kernel(X, k=1.0, theta=-1.0)
    assert np.linalg.eigvalsh(K + np.eye(40) / 10.0)[0] < 0        # the instance is indefinite
    y = np.where(X[:, 1] > 0, 1.0, -1.0)
    with pytest.warns(LinAlgWarning, match="not positive definite"):
        res = ls_svm_regression(K, y, 10.0)
    assert res.method == "ldl" and res.status == "numerical_issue"
    resid = (K + np.eye(40) / 10.0) @ res.alpha + res.b - y
    assert np.max(np.abs(resid)) / (1 + np.max(np.abs(y))) < TOL["kkt"]
    assert abs(np.sum(res.alpha)) < TOL["kkt"]


def test_exactly_singular_falls_back_to_eigh_with_warning():
    """K = diag(-1, 2, 3, ...) with C = 1: Ktilde has an exact zero pivot, LDL' fails, eigh is used."""
    K = np.diag(np.r_[-1.0, np.arange(2.0, 11.0)])
    y = np.r_[1.0, -1.0, np.ones(4), -np.ones(4)]
    with pytest.warns(LinAlgWarning, match="singular"):
        res = ls_svm_regression(K, y, 1.0)
    assert res.method == "eigh" and res.status == "numerical_issue"


# ---- RLS -----------------------------------------------------------------------------------------
@pytest.mark.parametrize("inst", ["rbf", "poly"])
@pytest.mark.parametrize("gamma", [1e-3, 0.1])
def test_rls_equals_cvxpy_functional(inst, gamma):
    """001 eq. (7) minimised by cvxpy: the same optimal value and the same fitted values K c."""
    K, y = make(inst, seed=9, task="regression")
    res = rls(K, y, gamma)
    sol = ref("rls", "primal", K, y, gamma=gamma)
    assert res.b is None
    assert abs(res.objective - sol.objective) / max(1.0, abs(sol.objective)) < TOL["ref_obj"]
    assert rel(K @ res.c, K @ sol.values["c"]) < TOL["ref_alpha"]


def test_rls_equals_system_8():
    K, y = make("rbf", seed=10, task="regression")
    A, rhs = F.get("rls").system(K, y, gamma=0.05)
    assert rel(rls(K, y, 0.05).c, np.linalg.solve(A, rhs)) < TOL["direct"]


def test_rls_decision_has_no_bias():
    K, y = make("rbf", seed=11)
    res = rls(K, y, 0.1)
    assert rel(res.decision_function(K), K @ res.c) == 0.0


def test_predict_tie_rule_and_regression():
    """The one tie rule of the result types (solvers/_result.py): +1 where f > 0, -1 where f <= 0 (001 §2),
    for LS-SVM as for RLS; regression predicts f itself. A zero cross-kernel puts f exactly at b (RLS: at 0)."""
    from dataclasses import replace

    K, y = make("rbf", seed=11)
    Z = np.zeros((3, K.shape[0]))
    assert np.array_equal(rls(K, y, 0.1).predict(Z), -np.ones(3))
    c = ls_svm(K, y, 1.0)
    f = c.decision_function(K)
    assert np.array_equal(c.predict(K), np.where(f > 0.0, 1.0, -1.0))
    assert np.array_equal(replace(c, b=0.0).predict(Z), -np.ones(3))
    reg = ls_svm_regression(K, y, 1.0)
    assert reg.task == "regression" and np.array_equal(reg.predict(K), reg.decision_function(K))


# ---- invariances and properties ------------------------------------------------------------------
@pytest.mark.parametrize("task,fname,solver", FORMS, ids=["cls", "reg"])
def test_permutation_invariance(task, fname, solver):
    K, y = make("rbf", seed=12, task=task)
    p = np.random.default_rng(0).permutation(K.shape[0])
    a, b = solver(K, y, 2.0), solver(K[np.ix_(p, p)], y[p], 2.0)
    assert rel(b.alpha, a.alpha[p]) < TOL["direct"] and abs(a.b - b.b) < TOL["direct"]


@settings(max_examples=25, deadline=None)
@given(N=st.integers(3, 25), seed=st.integers(0, 10**6), logC=st.floats(-2, 3))
def test_kkt_residual_property(N, seed, logC):
    """Random small data: the solution satisfies system (2) (004 eq. (2)) to rounding."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(N, 2))
    K = kernel_matrix(X, kernel="rbf", sigma=float(rng.uniform(0.3, 3.0)))
    y = rng.normal(size=N)
    C = 10.0 ** logC
    res = ls_svm_regression(K, y, C)
    Kt = K + np.eye(N) / C
    scale = 1.0 + np.max(np.abs(y)) + np.max(np.abs(Kt)) * np.max(np.abs(res.alpha))
    assert np.max(np.abs(Kt @ res.alpha + res.b - y)) < 1e-12 * N * scale
    assert abs(np.sum(res.alpha)) < 1e-12 * N * (1.0 + np.max(np.abs(res.alpha)))


# ---- bad input -----------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "kwargs,match",
    [
        (dict(C=-1.0), "C"),
        (dict(C=0.0), "C"),
        (dict(y=np.r_[np.ones(5), 2 * np.ones(5)]), "y"),
        (dict(y=np.ones(9)), "y"),
        (dict(K=np.triu(np.ones((10, 10)))), "symmetric"),
        (dict(K=np.ones((10, 9))), "K"),
        (dict(K=np.full((10, 10), np.nan)), "K"),
        (dict(method="lu"), "method"),
        (dict(method="cg", tol=-1.0), "tol"),
    ],
)
def test_bad_input_raises_naming_parameter(kwargs, match):
    K, y = make("rbf", N=10, seed=13)
    args = dict(K=K, y=y, C=1.0)
    args.update({k: v for k, v in kwargs.items() if k in args})
    opts = {k: v for k, v in kwargs.items() if k not in args}
    with pytest.raises(ValueError, match=match):
        ls_svm(args["K"], args["y"], args["C"], **opts)


@pytest.mark.parametrize("gamma", [0.0, -1.0])
def test_rls_bad_gamma(gamma):
    K, y = make("rbf", N=10, seed=14)
    with pytest.raises(ValueError, match="gamma"):
        rls(K, y, gamma)


def test_cholesky_refuses_operator():
    K, y = make("rbf", N=10, seed=15)
    with pytest.raises(ValueError, match="method"):
        ls_svm(aslinearoperator(K), y, 1.0, method="cholesky")


def test_no_warning_on_plain_solve():
    K, y = make("rbf", seed=16)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ls_svm(K, y, 1.0)


# ---- accuracy against exact rational arithmetic (the certified Cholesky path) --------------------------------------
def exact_solve(A, rhs):
    """Gaussian elimination in exact rational arithmetic (fractions.Fraction) on the float entries as given."""
    n = len(rhs)
    M = [[Fraction(float(A[i, j])) for j in range(n)] + [Fraction(float(rhs[i]))] for i in range(n)]
    for k in range(n):
        p = next(i for i in range(k, n) if M[i][k] != 0)
        M[k], M[p] = M[p], M[k]
        for i in range(k + 1, n):
            f = M[i][k] / M[k][k]
            if f:
                M[i] = [a - f * b for a, b in zip(M[i], M[k])]
    x = [Fraction(0)] * n
    for i in reversed(range(n)):
        x[i] = (M[i][n] - sum(M[i][j] * x[j] for j in range(i + 1, n))) / M[i][i]
    return np.array([float(v) for v in x])


def exact_ls_svm_regression(K, y, C):
    """System (2) (004 eq. (2)) bordered, [0 1'; 1 K + I/C][b; alpha] = [0; y], solved exactly."""
    N = len(y)
    A = np.zeros((N + 1, N + 1))
    A[0, 1:] = A[1:, 0] = 1.0
    A[1:, 1:] = K
    A[np.arange(1, N + 1), np.arange(1, N + 1)] += 1.0 / C     # the float Ktilde the solver forms
    s = exact_solve(A, np.r_[0.0, y])
    return s[1:], s[0]


def linear_x1e6(N=12, seed=0):
    """The issue's case: a linear kernel of X * 1e6 (entries ~1e12, condition of K + I/C ~1e13 at C = 1)."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(N, 3)) * 1e6
    y = rng.normal(size=N)
    return X @ X.T, y


def relerr(a, exact):
    return float(np.max(np.abs(a - exact)) / np.max(np.abs(exact)))


def test_ill_conditioned_ls_svm_warns_with_an_accuracy_that_bounds_the_error():
    K, y = linear_x1e6()
    with pytest.warns(IllConditionedWarning, match=r"expected relative accuracy of the solution is [0-9.e+-]+ > tol"):
        res = ls_svm_regression(K, y, 1.0)
    assert res.status == "numerical_issue"
    a_ex, _ = exact_ls_svm_regression(K, y, 1.0)
    acc = res.info["expected_rel_error"]
    assert acc > 1e-6                                        # cond ~ 1e13: nothing like 1e-10
    assert relerr(res.alpha, a_ex) <= acc                   # the stated accuracy holds


def test_ill_conditioned_rls_warns():
    K, y = linear_x1e6(seed=1)
    N = len(y)
    with pytest.warns(IllConditionedWarning, match="m gamma I"):
        res = rls(K, y, 1.0 / N)                            # m gamma = 1
    assert res.status == "numerical_issue"
    A = K + np.eye(N)
    c_ex = exact_solve(A, y)
    assert relerr(res.c, c_ex) <= res.info["expected_rel_error"]


@pytest.mark.parametrize("C", [1e-2, 1.0, 1e2, 1e6, 1e7, 1e8])
def test_warning_fires_exactly_when_eps_cond_exceeds_tol(C):
    """RBF kernel with clustered points: cond(K + I/C) grows like C.  The warning fires iff eps cond_1 > tol,
    with cond_1 computed exactly by numpy (C chosen so that eps cond_1 / tol is outside [0.02, 20]), and
    the solution agrees with the exact rational one to the accuracy the solver states (or 1e-12 when quiet)."""
    rng = np.random.default_rng(3)
    X = rng.normal(size=(14, 2)) * 0.3
    K = kernel_matrix(X, kernel="rbf", sigma=1.0)
    y = rng.normal(size=14)
    tol = 1e-10
    A = K + np.eye(14) / C
    true_acc = np.finfo(float).eps * np.linalg.cond(A, 1)
    assert not 0.02 < true_acc / tol < 20                   # the instance is far from the boundary
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        res = ls_svm_regression(K, y, C, tol=tol)
    fired = any(issubclass(w.category, IllConditionedWarning) for w in rec)
    assert fired == (true_acc > tol)
    assert (res.status == "numerical_issue") == fired
    a_ex, b_ex = exact_ls_svm_regression(K, y, C)
    assert relerr(res.alpha, a_ex) <= max(res.info["expected_rel_error"], 1e-12)


def test_refinement_used_with_overwrite_K_gives_the_same_answer():
    K, y = linear_x1e6(seed=2)
    with pytest.warns(IllConditionedWarning):
        r1 = ls_svm_regression(K, y, 1.0)
    with pytest.warns(IllConditionedWarning):
        r2 = ls_svm_regression(K.copy(), y, 1.0, overwrite_K=True)
    a_ex, _ = exact_ls_svm_regression(K, y, 1.0)
    for r in (r1, r2):                 # the residual is computed differently (K, or symm on the kept triangle)
        assert relerr(r.alpha, a_ex) <= r.info["expected_rel_error"]


def test_refinement_improves_a_moderately_conditioned_solve():
    """cond ~1e8: one or two refinement steps are applied and the result is within eps cond of exact."""
    rng = np.random.default_rng(4)
    X = rng.normal(size=(12, 2)) * 0.2
    K = kernel_matrix(X, kernel="rbf", sigma=1.0)
    y = rng.normal(size=12)
    res = ls_svm_regression(K, y, 1e6, tol=1e-3)             # tol loose: no warning wanted here
    assert res.status == "optimal" and res.info["expected_rel_error"] > 1e-12
    a_ex, _ = exact_ls_svm_regression(K, y, 1e6)
    assert relerr(res.alpha, a_ex) <= res.info["expected_rel_error"]


@pytest.mark.parametrize("C", [5e-324, 1e-310])
def test_C_whose_reciprocal_overflows_is_refused_naming_C(C):
    K, y = make("rbf", N=10, seed=17)
    with pytest.raises(ValueError, match="C"):
        ls_svm(K, y, C)

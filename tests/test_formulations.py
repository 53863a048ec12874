"""The ground truth checks itself: every equality a derivation claims is a test.

Objective values are compared everywhere; solutions only where they are unique (strictly convex
problems: LS-SVM, RLS, the weighted ISLS problem, the primal W of every formulation).
"""
from __future__ import annotations

import warnings

import cvxpy as cp
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from instances import KERNELS, as_written, make_classification, make_regression

import svmref.formulations as F
from svmref.kernels import linear_kernel, mlp_kernel

# --- tolerances, in one table -------------------------------------------------------------------
TOL = {
    "objective": 1e-7,   # relative, two optimal values that must be equal (strong duality, equal forms)
    "solution": 1e-5,    # absolute, unique minimisers compared entrywise (scaled by 1 + max|x|)
    "kkt": 1e-6,         # absolute, KKT conditions at a reference optimum
    "factor": 1e-9,      # relative, ||Phi Phi' - K|| / ||K||
}
CS = [0.1, 10.0]
LARGEST = {}  # largest discrepancy seen per check (printed by the last test, for the closing note)


def rel(a, b):
    return abs(a - b) / max(1.0, abs(a), abs(b))


def close(x, y, tol=TOL["solution"]):
    x, y = np.asarray(x, float), np.asarray(y, float)
    return np.max(np.abs(x - y)) <= tol * (1.0 + max(np.max(np.abs(x)), np.max(np.abs(y))))


def record(check, value):
    LARGEST[check] = max(LARGEST.get(check, 0.0), float(value))
    return value


def instance(kernel, n=24, seed=0):
    X, y = make_classification(n=n, seed=seed)
    return X, y, KERNELS[kernel](X)


# --- the registry and the API --------------------------------------------------------------------
def test_names_and_get():
    assert F.names() == ["l1_svm", "l2_svm", "ls_svm", "ls_svm_regression", "least_1norm_svm", "rls",
                         "sparse_ls_svm", "support_features", "svr", "l1_svm_regularised_bias",
                         "l2_svm_regularised_bias", "weighted_ls_svm", "weighted_ls_svm_regression"]
    for name in F.names():
        f = F.get(name)
        assert f.name == name and f.dual_sense in ("min", "max") and f.paper
    with pytest.raises(ValueError, match="unknown formulation"):
        F.get("l3_svm")


@pytest.mark.parametrize(
    "name, form, expected",
    [
        ("l1_svm", "primal", {"W", "b", "xi"}), ("l1_svm", "dual", {"alpha"}),
        ("l2_svm", "primal", {"W", "b", "xi"}), ("ls_svm", "dual", {"alpha"}),
        ("ls_svm", "primal_mu_zeta", {"w", "b", "e"}), ("least_1norm_svm", "lp", {"W", "b", "t"}),
        ("rls", "primal", {"c"}), ("sparse_ls_svm", "primal", {"alpha", "b", "xi"}),
        ("sparse_ls_svm", "dual", {"beta"}),
    ],
)
def test_variables_are_named_as_in_the_papers(name, form, expected):
    X, y, K = instance("rbf", n=10)
    kw = {"gamma": 0.1} if name == "rls" else {"mu": 1.0, "zeta": 2.0} if form == "primal_mu_zeta" else {"C": 1.0}
    prob = getattr(F.get(name), form)(K, y, **kw)
    assert isinstance(prob, cp.Problem) and prob.status is None  # unsolved
    assert {v.name() for v in prob.variables()} == expected
    assert prob.info["cite"]


def test_support_features_variables():
    X, y = make_classification(n=10)
    f = F.get("support_features")
    assert {v.name() for v in f.primal(X, y, C=1, mu=0.2).variables()} == {"a", "b", "delta"}
    assert {v.name() for v in f.dual(X, y, C=1, mu=0.2).variables()} == {"lam"}
    assert {v.name() for v in f.qp(X, y, C=1, mu=0.2).variables()} == {"lam", "gamma"}


# --- strong duality for every primal/dual pair ---------------------------------------------------
@pytest.mark.parametrize("name", ["l1_svm", "l2_svm", "ls_svm", "least_1norm_svm"])
@pytest.mark.parametrize("C", CS)
def test_strong_duality_classification(name, C, kernel_name):
    X, y, K = instance(kernel_name, seed=1)
    f = F.get(name)
    p = as_written(f.primal(K, y, C=C))  # the primal model solved as written: W is not rebuilt from alpha
    d = F.solve(f.dual(K, y, C=C))
    assert record("strong duality", rel(p.objective, -d.objective)) <= TOL["objective"]
    # the primal W is unique and equals sum_i alpha_i y_i Phi_i of any dual optimum (stationarity)
    Phi = F.kernel_factor(K).Phi
    W_from_dual = Phi.T @ (d.values["alpha"] * y)
    assert close(p.values["W"], W_from_dual, 1e-4)


@pytest.mark.parametrize("name", ["l1_svm_regularised_bias", "l2_svm_regularised_bias"])
@pytest.mark.parametrize("B", [0.0, 1.0, 10.0])
@pytest.mark.parametrize("C", CS)
def test_strong_duality_regularised_bias(name, B, C, kernel_name):
    """The SVM with the bias in the penalty (formulations/regularised_bias.py): its primal solved as written has the
    value -D* of the dual without the equality constraint, and the stationarity conditions of the derivation hold
    between the two solutions (both unique: the primal is strongly convex in (W, v), the dual strictly convex in
    y * alpha on the support): W = sum_i alpha_i y_i Phi_i, v = B sum_i alpha_i y_i, and for the L2 loss xi = alpha/C."""
    X, y, K = instance(kernel_name, seed=7)
    f = F.get(name)
    p = as_written(f.primal(K, y, C=C, bias_scale=B))
    d = F.solve(f.dual(K, y, C=C, bias_scale=B))
    assert record("strong duality", rel(p.objective, -d.objective)) <= TOL["objective"]
    a = np.asarray(d.values["alpha"])
    Phi = F.kernel_factor(K).Phi
    assert close(p.values["W"], Phi.T @ (a * y))
    assert close([float(p.values["v"])], [B * float(a @ y)])
    if name == "l2_svm_regularised_bias":
        assert close(p.values["xi"], a / C)
    else:
        assert np.all(a >= -1e-9) and np.all(a <= C * (1 + 1e-9))


@pytest.mark.parametrize("loss, name", [("hinge", "l1_svm_regularised_bias"), ("squared_hinge", "l2_svm_regularised_bias")])
@pytest.mark.parametrize("B", [0.0, 1.0, 10.0])
def test_regularised_bias_is_the_problem_liblinear_solves(loss, name, B):
    """An independent implementation of the same problem: scikit-learn's LinearSVC (LIBLINEAR's dual coordinate
    descent, tol 1e-12) with ``intercept_scaling = B`` (``fit_intercept=False`` for B = 0) and ``C' = C`` (hinge) or
    ``C/2`` (its squared hinge is ``C' sum xi^2``) gives the reference's w and b on the linear kernel."""
    from sklearn.svm import LinearSVC

    X, y = make_classification(n=40, seed=8)
    C = 1.0
    d = F.solve(F.get(name).dual(X @ X.T, y, C=C, bias_scale=B))
    a = np.asarray(d.values["alpha"])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m = LinearSVC(C=C if loss == "hinge" else C / 2, loss=loss, fit_intercept=B > 0,
                      intercept_scaling=B if B > 0 else 1.0, tol=1e-12, max_iter=10**6, random_state=0).fit(X, y)
    b = float(np.ravel(m.intercept_)[0]) if B > 0 else 0.0
    assert close(m.coef_[0], X.T @ (a * y)) and close([b], [B * B * float(a @ y)])


@pytest.mark.parametrize("name", ["l1_svm_regularised_bias", "l2_svm_regularised_bias"])
def test_regularised_bias_reference_is_polished_to_round_off(name):
    """CLARABEL leaves the dual's KKT conditions at about 1e-7 here (an interior point); the certifier's active-set
    Newton polish brings them to round-off (a few N eps in margin units), at the value of the primal as written."""
    X, y = make_classification(n=50, seed=9)
    f = F.get(name)
    d = F.solve(f.dual(X @ X.T, y, C=1.0, bias_scale=1.0))
    kkt = d.certificate["residuals"]["kkt"]
    assert "polished" in d.status and kkt <= 64 * len(y) * np.finfo(float).eps, (d.status, kkt)
    p = as_written(f.primal(X @ X.T, y, C=1.0, bias_scale=1.0))
    assert rel(p.objective, -d.objective) <= TOL["objective"]


@pytest.mark.parametrize("C", CS)
def test_strong_duality_regression(C, kernel_name):
    X, y = make_regression(n=24, seed=2)
    K = KERNELS[kernel_name](X)
    f = F.get("ls_svm_regression")
    p, d = as_written(f.primal(K, y, C=C)), F.solve(f.dual(K, y, C=C))
    assert record("strong duality", rel(p.objective, -d.objective)) <= TOL["objective"]


@pytest.mark.parametrize("gamma", [1e-3, 0.1])
def test_strong_duality_rls(gamma, kernel_name):
    X, y, K = instance(kernel_name, seed=3)
    f = F.get("rls")
    p, d = as_written(f.primal(K, y, gamma=gamma)), as_written(f.dual(K, y, gamma=gamma))
    assert record("strong duality", rel(p.objective, -d.objective)) <= TOL["objective"]
    # alpha = 2 gamma c (the derivation in formulations.rls); the dual's alpha is unique (strictly
    # convex), c of the primal only up to the null space of K (K c is unique), c of (8) is unique
    A, rhs = f.system(K, y, gamma=gamma)
    c = np.linalg.solve(A, rhs)
    assert close(d.values["alpha"], 2 * gamma * c)
    assert close(K @ p.values["c"], K @ c, 1e-5)


@pytest.mark.parametrize("C", CS)
def test_strong_duality_sparse_ls_svm(C, kernel_name):
    X, y, K = instance(kernel_name, seed=4)
    lam = np.random.default_rng(4).uniform(0.2, 5.0, size=len(y))
    f = F.get("sparse_ls_svm")
    p, d = as_written(f.primal(K, y, C=C, lam=lam)), F.solve(f.dual(K, y, C=C, lam=lam))
    assert record("strong duality", rel(p.objective, -d.objective)) <= TOL["objective"]


@pytest.mark.parametrize("n_features", [3, 40])  # n < N and n >= N
@pytest.mark.parametrize("mu", [0.0, 0.3, 0.9])
def test_support_features_primal_dual_qp(n_features, mu):
    rng = np.random.default_rng(5)
    N = 24
    y = np.where(np.arange(N) % 2 == 0, 1.0, -1.0)
    X = rng.normal(size=(N, n_features)) + 0.7 * y[:, None] * (np.arange(n_features) < 2)
    f = F.get("support_features")
    # the three models through the conic solver as written (method="cvxpy"), then certified
    p = F.solve(f.primal(X, y, C=1.0, mu=mu), method="cvxpy")
    d = F.solve(f.dual(X, y, C=1.0, mu=mu), method="cvxpy")
    q = F.solve(f.qp(X, y, C=1.0, mu=mu), method="cvxpy")
    assert record("SFM primal (5) = dual (10)", rel(p.objective, d.objective)) <= TOL["objective"]
    assert record("SFM dual (10) = QP (13)", rel(d.objective, q.objective)) <= TOL["objective"]
    # recovery (8) and (11): (a, b) is primal optimal
    lam = d.values["lam"]
    a = f.recover_a(X, y, lam, mu)
    assert close(a, p.values["a"], 1e-4)
    b = f.recover_b(X, y, lam, a, 1.0, rtol=1e-5)
    delta = np.maximum(0.0, 1.0 - y * (X @ a + b))
    primal_at_recovered = np.sum((1 - mu) * a**2 + mu * np.abs(a)) + 1.0 * delta.sum()
    assert record("SFM recovered (a, b) objective", rel(primal_at_recovered, p.objective)) <= 1e-6


def test_support_features_mu_zero_is_l1_svm_with_half_C():
    X, y = make_classification(n=24, seed=6)
    C = 2.0
    sfm = as_written(F.get("support_features").primal(X, y, C=C, mu=0.0))
    l1 = as_written(F.get("l1_svm").primal(None, y, C=C / 2, X=X))
    # (5) at mu = 0 is a'a + C sum delta = 2 (1/2 a'a + (C/2) sum delta)
    assert record("SFM(mu=0) = 2 x L1-SVM(C/2)", rel(sfm.objective, 2 * l1.objective)) <= TOL["objective"]
    assert close(sfm.values["a"], l1.values["W"], 1e-4)


# --- further forms that must be equal -----------------------------------------------------------
@pytest.mark.parametrize("C", CS)
def test_least_1norm_lp_form_equals_1norm_form(C, kernel_name):
    X, y, K = instance(kernel_name, seed=7)
    f = F.get("least_1norm_svm")
    p, lp = as_written(f.primal(K, y, C=C)), as_written(f.lp(K, y, C=C))  # both models as written
    assert record("Least 1-Norm (3) = LP (4)", rel(p.objective, lp.objective)) <= TOL["objective"]
    assert close(p.values["W"], lp.values["W"], 1e-4)


@pytest.mark.parametrize("C", CS)
def test_least_1norm_kkt_conditions_6(C, kernel_name):
    """000 eq. (6) at the optimum: margin = 1 where |alpha| < C, <= 1 at alpha = C, >= 1 at alpha = -C."""
    X, y, K = instance(kernel_name, seed=8)
    f = F.get("least_1norm_svm")
    d = F.solve(f.dual(K, y, C=C))
    p = as_written(f.primal(K, y, C=C))  # the primal as written: (W, b) not rebuilt from alpha
    alpha = d.values["alpha"]
    margin = y * (F.kernel_factor(K).Phi @ p.values["W"] + p.values["b"])  # y_i (W.Phi_i + b), primal alone
    eps = 1e-5 * C
    free = np.abs(alpha) < C - eps
    upper, lower = alpha >= C - eps, alpha <= -C + eps
    viol = max(
        np.max(np.abs(margin[free] - 1), initial=0.0),
        np.max(margin[upper] - 1, initial=0.0),
        np.max(1 - margin[lower], initial=0.0),
    )
    assert record("Least 1-Norm KKT (6)", viol) <= 1e-5
    assert abs(alpha @ y) <= TOL["kkt"] and np.all(np.abs(alpha) <= C * (1 + 1e-8))


def test_least_1norm_dual_is_l1_dual_with_lower_bound_minus_C():
    X, y, K = instance("rbf", seed=9)
    C = 1.0
    l1 = F.get("l1_svm").dual(K, y, C=C)
    l1n = F.get("least_1norm_svm").dual(K, y, C=C)
    alpha = l1n.variables()[0]
    # the Least 1-Norm dual restricted to alpha >= 0 is the L1-SVM dual ...
    restricted = cp.Problem(l1n.objective, l1n.constraints + [alpha >= 0])
    assert rel(F.solve(restricted).objective, F.solve(l1).objective) <= TOL["objective"]
    # ... and the L1-SVM dual with its lower bound 0 replaced by -C is the Least 1-Norm dual
    a1 = l1.variables()[0]
    relaxed = cp.Problem(l1.objective, [y @ a1 == 0, a1 >= -C, a1 <= C])
    assert record("L1n dual = L1 dual with -C", rel(F.solve(relaxed).objective, F.solve(l1n).objective)) <= TOL["objective"]
    # the objectives themselves are the same function of alpha
    a = np.random.default_rng(0).uniform(-C, C, len(y))
    a1.value, alpha.value = a, a
    assert np.isclose(l1.objective.value, l1n.objective.value, rtol=1e-12)


@pytest.mark.parametrize("C", CS)
def test_ls_svm_dual_equals_kkt_system_and_mu_zeta_form(C, kernel_name):
    X, y, K = instance(kernel_name, seed=10)
    f = F.get("ls_svm")
    d = as_written(f.dual(K, y, C=C))    # both models solved as written, the system by numpy:
    p = as_written(f.primal(K, y, C=C))  # three independent computations of one optimum
    A, rhs = f.kkt_system(K, y, C=C)
    sol = np.linalg.solve(A, rhs)
    b_sys, alpha_sys = sol[0], sol[1:]
    # the dual's unique minimiser is the system's solution (K~ = K + I/C is positive definite)
    err = np.max(np.abs(d.values["alpha"] - alpha_sys)) / (1 + np.max(np.abs(alpha_sys)))
    assert record("LS-SVM dual = KKT system (alpha)", err) <= TOL["solution"]
    assert close(p.values["b"], b_sys)
    Kt = K + np.eye(len(y)) / C
    D = 0.5 * (alpha_sys * y) @ Kt @ (alpha_sys * y) - alpha_sys.sum()
    assert record("LS-SVM dual value = system value", rel(D, d.objective)) <= TOL["objective"]
    # 000 eq. (7) alpha_i = C xi_i at the primal optimum
    assert close(alpha_sys, C * p.values["xi"], 1e-4)
    # mu/zeta form of 002: same minimiser at gamma = zeta/mu, value scaled by mu
    mu = 0.5
    mz = as_written(f.primal_mu_zeta(K, y, mu=mu, zeta=mu * C))
    assert record("mu/zeta form = LS-SVM (value / mu)", rel(mz.objective / mu, p.objective)) <= TOL["objective"]
    assert close(mz.values["w"], p.values["W"], 1e-4) and close(mz.values["b"], p.values["b"], 1e-4)


@pytest.mark.parametrize("C", CS)
def test_ls_svm_regression_dual_equals_system(C, kernel_name):
    X, y = make_regression(n=24, seed=11)
    K = KERNELS[kernel_name](X)
    f = F.get("ls_svm_regression")
    d = as_written(f.dual(K, y, C=C))
    A, rhs = f.kkt_system(K, y, C=C)
    sol = np.linalg.solve(A, rhs)
    err = np.max(np.abs(d.values["alpha"] - sol[1:])) / (1 + np.max(np.abs(sol)))
    assert record("LS-SVM regression dual = system (2)", err) <= TOL["solution"]
    p = as_written(f.primal(K, y, C=C))
    assert close(p.values["b"], sol[0])


@pytest.mark.parametrize("C", CS)
def test_classification_form_equals_regression_form(C, kernel_name):
    """For y in {-1, +1}: alpha_reg = y * alpha_cls, same b, same optimal values (004 §1)."""
    X, y, K = instance(kernel_name, seed=12)
    cls, reg = F.get("ls_svm"), F.get("ls_svm_regression")
    dc, dr = as_written(cls.dual(K, y, C=C)), as_written(reg.dual(K, y, C=C))  # each model as written
    assert record("classification = regression form", rel(dc.objective, dr.objective)) <= TOL["objective"]
    assert close(dr.values["alpha"], y * dc.values["alpha"])
    pc, pr = as_written(cls.primal(K, y, C=C)), as_written(reg.primal(K, y, C=C))
    assert rel(pc.objective, pr.objective) <= TOL["objective"] and close(pc.values["b"], pr.values["b"])


@pytest.mark.parametrize("gamma", [1e-3, 0.1, 10.0])
def test_rls_functional_equals_system_8(gamma, kernel_name):
    X, y, K = instance(kernel_name, seed=13)
    f = F.get("rls")
    p = as_written(f.primal(K, y, gamma=gamma))  # the finite problem as written, not its system
    A, rhs = f.system(K, y, gamma=gamma)
    c = np.linalg.solve(A, rhs)
    m = len(y)
    value = np.sum((y - K @ c) ** 2) / m + gamma * c @ K @ c
    assert record("RLS functional (7) = system (8)", rel(value, p.objective)) <= TOL["objective"]
    # the minimiser f = Kc is unique (c itself is unique when K + m gamma I is nonsingular)
    assert close(K @ p.values["c"], K @ c, 1e-5)


@pytest.mark.parametrize("C", CS)
def test_isls_weighted_primal_3_equals_system_4(C, kernel_name):
    X, y, K = instance(kernel_name, seed=14)
    lam = np.random.default_rng(14).uniform(0.1, 10.0, size=len(y))
    f = F.get("sparse_ls_svm")
    p = as_written(f.primal(K, y, C=C, lam=lam))  # both models as written, the system by numpy
    d = as_written(f.dual(K, y, C=C, lam=lam))
    A, rhs = f.system(K, y, C=C, lam=lam)
    sol = np.linalg.solve(A, rhs)
    b, beta = sol[0], sol[1:]
    alpha = f.alpha_from_beta(K, beta, lam)
    err = np.max(np.abs(alpha - p.values["alpha"])) / (1 + np.max(np.abs(alpha)))
    assert record("ISLS (3) = system (4): alpha", err) <= TOL["solution"]
    assert close(b, p.values["b"])
    assert close(beta, d.values["beta"])
    assert close(beta, C * p.values["xi"], 1e-4)  # beta_i = C xi_i (004 §3)


# --- kernel factor, parameters, reference solve ---------------------------------------------------
def test_kernel_factor_is_exact_and_reports_clipping():
    X, y = make_classification(n=30, d=2, seed=15)
    K = linear_kernel(X)  # rank 2: 28 (numerically) zero eigenvalues
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", F.KernelClipWarning)
        fac = F.kernel_factor(K)
    assert fac.rank == 2
    assert fac.max_abs_err <= TOL["factor"] * np.max(np.abs(K))
    rep = fac.report()
    assert rep["n_clipped"] >= 0 and rep["min_eig"] <= 1e-9 * np.max(np.abs(K))
    prob = F.get("l1_svm").primal(K, y, C=1.0)
    assert prob.info["factor"]["rank"] == 2  # the report travels with the problem


def test_primal_with_X_equals_primal_with_K():
    X, y = make_classification(n=20, seed=16)
    f = F.get("least_1norm_svm")
    a = F.solve(f.primal(None, y, C=1.0, X=X))
    b = F.solve(f.primal(linear_kernel(X), y, C=1.0))
    assert rel(a.objective, b.objective) <= TOL["objective"]


def test_mlp_kernel_is_reported_not_convex():
    X, y = make_classification(n=20, seed=17)
    K = mlp_kernel(X, k=2.0, theta=-1.0)
    assert np.linalg.eigvalsh(K)[0] < -1e-3  # this MLP kernel really is indefinite
    for name in ["l1_svm", "least_1norm_svm", "ls_svm"]:
        with pytest.raises(F.NotConvexError, match="not positive semidefinite.*not convex"):
            F.get(name).dual(K, y, C=1.0)
    # explicit clipping is possible, and is announced
    with pytest.warns(F.KernelClipWarning, match="clipped"):
        F.get("l1_svm").dual(K, y, C=1.0, psd="clip")


def test_set_params_matches_a_fresh_build():
    X, y, K = instance("rbf", seed=18)
    for name in ["l1_svm", "l2_svm", "ls_svm", "least_1norm_svm"]:
        f = F.get(name)
        prob = f.dual(K, y, C=1.0)
        F.solve(prob, cross_check=False)
        F.set_params(prob, C=5.0)
        assert prob.hyperparameters["C"] == 5.0
        again = F.solve(prob, cross_check=False).objective
        fresh = F.solve(f.dual(K, y, C=5.0), cross_check=False).objective
        assert rel(again, fresh) <= TOL["objective"]
    prob = F.get("support_features").dual(X, y, C=1.0, mu=0.1)
    F.set_params(prob, mu=0.5)
    fresh = F.solve(F.get("support_features").dual(X, y, C=1.0, mu=0.5), cross_check=False).objective
    assert rel(F.solve(prob, cross_check=False).objective, fresh) <= TOL["objective"]
    with pytest.raises(ValueError, match="C must be"):
        F.set_params(prob, C=-1.0)
    with pytest.raises(ValueError, match="unknown hyperparameter"):
        F.set_params(prob, gamma=1.0)


def test_reference_cross_check_is_reported_and_failures_name_the_status():
    X, y, K = instance("rbf", seed=19)
    sol = F.solve(F.get("l1_svm").dual(K, y, C=1.0))  # certified: no second solver unless marginal
    assert sol.solver == "CLARABEL" and sol.certified and sol.residuals["rel_gap"] <= 1e-8
    if not sol.cross_check:
        assert np.isnan(sol.disagreement)
    sol = F.solve(F.get("l1_svm").dual(K, y, C=1.0), cross_check=True)  # requested: ECOS
    assert sol.cross_check["solver"] == "ECOS"
    assert sol.disagreement <= 1e-6
    osqp = F.solve(F.get("l1_svm").dual(K, y, C=1.0), cross_check="OSQP")
    assert osqp.cross_check["solver"] == "OSQP" and osqp.disagreement <= 1e-5
    x = cp.Variable(name="x")
    with pytest.raises(F.ReferenceSolveError, match="infeasible"):
        F.solve(cp.Problem(cp.Minimize(x), [x >= 1, x <= 0]), cross_check=False)
    with pytest.raises(F.ReferenceSolveError, match="unbounded"):
        F.solve(cp.Problem(cp.Minimize(x)), cross_check=False)


# --- bad input --------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "mutate, match",
    [
        (lambda K, y: (np.where(np.eye(len(y)) > 0, np.nan, K), y), "NaN or infinity"),
        (lambda K, y: (K, np.where(y > 0, 2.0, -1.0)), r"labels in \{-1, \+1\}"),
        (lambda K, y: (K, np.ones_like(y)), "only the class"),
        (lambda K, y: (K[:, :-1], y), "square"),
        (lambda K, y: (K + np.triu(np.ones_like(K), 1), y), "symmetric"),
        (lambda K, y: (K, y[:-1]), "lengths must match"),
        (lambda K, y: (np.zeros((0, 0)), np.zeros(0)), "empty"),
        (lambda K, y: (K, y.reshape(-1, 1)), "vector"),
    ],
)
@pytest.mark.parametrize("name", ["l1_svm", "l2_svm", "ls_svm", "least_1norm_svm"])
def test_bad_input_is_named(name, mutate, match):
    X, y, K = instance("rbf", n=8)
    K2, y2 = mutate(K, y)
    with pytest.raises(ValueError, match=match):
        F.get(name).dual(K2, y2, C=1.0)
    with pytest.raises(ValueError, match=match):
        F.get(name).primal(K2, y2, C=1.0)


@pytest.mark.parametrize(
    "name, kwargs, match",
    [
        ("l1_svm", {"C": 0.0}, "C must be"), ("l2_svm", {"C": -1.0}, "C must be"),
        ("ls_svm", {"C": np.inf}, "C must be"), ("rls", {"gamma": 0.0}, "gamma must be"),
        ("sparse_ls_svm", {"C": 1.0, "lam": -np.ones(8)}, "lam must be positive"),
        ("sparse_ls_svm", {"C": 1.0, "lam": np.ones(7)}, "lengths must match"),
    ],
)
def test_bad_hyperparameters_are_named(name, kwargs, match):
    X, y, K = instance("rbf", n=8)
    with pytest.raises(ValueError, match=match):
        F.get(name).dual(K, y, **kwargs)


@pytest.mark.parametrize("mu", [-0.1, 1.0, 1.5, np.nan])
def test_bad_selectivity_is_named(mu):
    X, y = make_classification(n=8)
    with pytest.raises(ValueError, match="mu"):
        F.get("support_features").dual(X, y, C=1.0, mu=mu)


def test_sparse_input_gets_a_clear_error():
    import scipy.sparse as sp

    X, y = make_classification(n=8)
    with pytest.raises(TypeError, match="dense"):
        F.get("support_features").primal(sp.csr_matrix(X), y, C=1.0, mu=0.1)


# --- property-based: small random instances --------------------------------------------------
@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    n=st.integers(4, 14),
    seed=st.integers(0, 10_000),
    logC=st.floats(-2, 2),
    name=st.sampled_from(["l1_svm", "l2_svm", "ls_svm", "least_1norm_svm"]),
)
def test_strong_duality_property(n, seed, logC, name):
    X, y = make_classification(n=n, d=2, seed=seed)
    K = KERNELS["rbf"](X)
    f = F.get(name)
    p, d = as_written(f.primal(K, y, C=10**logC)), F.solve(f.dual(K, y, C=10**logC))  # primal not rebuilt
    assert record("strong duality (hypothesis)", rel(p.objective, -d.objective)) <= 1e-6


def test_zz_report_largest_discrepancies(capsys):
    """Prints the largest discrepancy of each equality (run with -s to see it)."""
    with capsys.disabled():
        for k, v in sorted(LARGEST.items()):
            print(f"  largest discrepancy  {k:45s} {v:.2e}")
    assert all(np.isfinite(v) for v in LARGEST.values())

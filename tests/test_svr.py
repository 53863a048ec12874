"""epsilon-SVR: the cvxpy primal and dual (formulations/svr.py), their equality, and the SMO
solver ``svmref.solvers.smo.svr`` (2N variables and a linear term on the one engine) against them and
against scikit-learn's ``SVR(kernel="precomputed")`` (LIBSVM)."""
from __future__ import annotations

import functools
import warnings

import numpy as np
import pytest

import svmref.formulations as F
from svmref.kernels import linear_kernel, rbf_kernel
from svmref.solvers import smo

TOL = {"tight": 1e-8, "objective_rel": 1e-6, "duality_rel": 1e-6, "sklearn_coef": 1e-5}


def _data(n=40, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, 2))
    z = np.sin(X[:, 0]) + 0.5 * X[:, 1] + 0.1 * rng.standard_normal(n)
    return X, z


CASES = {  # name: (kernel builder, C, epsilon)
    "rbf": (lambda X: rbf_kernel(X, sigma=1.0), 2.0, 0.1),
    "linear": (linear_kernel, 0.5, 0.2),
    "rbf_eps0": (lambda X: rbf_kernel(X, sigma=1.0), 1.0, 0.0),
    "rbf_wide_tube": (lambda X: rbf_kernel(X, sigma=1.0), 1.0, 5.0),  # every target inside the tube: alpha = 0
}


@functools.cache
def case(name):
    build, C, eps = CASES[name]
    X, z = _data()
    return X, z, build(X), C, eps


@functools.cache
def references(name):
    X, z, K, C, eps = case(name)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        P = F.solve(F.get("svr").primal(K, z, C=C, epsilon=eps))
        D = F.solve(F.get("svr").dual(K, z, C=C, epsilon=eps))
    return float(P.objective), float(D.objective)


def svr_dual_objective(K, z, eps, coef, ap, am):
    return 0.5 * coef @ K @ coef + eps * np.sum(ap + am) - z @ coef


@pytest.mark.parametrize("name", sorted(CASES))
def test_strong_duality(name):
    """The derivation of docs/formulations/svr.md: p* = -d* (the dual is written as a minimisation)."""
    p, d = references(name)
    assert abs(p + d) <= TOL["duality_rel"] * max(1.0, abs(p))


@pytest.mark.parametrize("shrinking", [True, False])
@pytest.mark.parametrize("name", sorted(CASES))
def test_smo_svr_reaches_the_reference(name, shrinking):
    X, z, K, C, eps = case(name)
    _, d = references(name)
    r = smo.svr(K, z, C, eps, tol=TOL["tight"], shrinking=shrinking)
    assert r.status == "optimal"
    assert abs(r.objective - d) <= TOL["objective_rel"] * max(1.0, abs(d))
    ap, am = r.info["alpha_plus"], r.info["alpha_minus"]
    np.testing.assert_allclose(r.coef, ap - am)
    assert np.all(ap >= 0) and np.all(am >= 0) and np.all(ap <= C) and np.all(am <= C)
    assert abs(np.sum(r.coef)) <= 1e-10 * max(1.0, np.sum(np.abs(r.coef)))
    assert abs(svr_dual_objective(K, z, eps, r.coef, ap, am) - r.objective) <= 1e-9 * max(1.0, abs(d))
    # KKT of the primal: residual r_i = z_i - f(x_i); free alpha+ => r = eps, free alpha- => r = -eps
    f = K @ r.coef + r.b
    res = z - f
    free_p = (ap > 1e-9 * C) & (ap < C * (1 - 1e-9))
    free_m = (am > 1e-9 * C) & (am < C * (1 - 1e-9))
    assert np.all(np.abs(res[free_p] - eps) <= 1e-6)
    assert np.all(np.abs(res[free_m] + eps) <= 1e-6)
    inside = (ap == 0) & (am == 0)
    assert np.all(np.abs(res[inside]) <= eps + 1e-6)


def test_wide_tube_gives_zero_coefficients():
    X, z, K, C, eps = case("rbf_wide_tube")
    r = smo.svr(K, z, C, eps, tol=1e-8)
    assert np.all(r.coef == 0.0) and r.n_sv == 0


@pytest.mark.parametrize("name", ["rbf", "linear"])
def test_agrees_with_sklearn_svr(name):
    from sklearn.svm import SVR

    X, z, K, C, eps = case(name)
    r = smo.svr(K, z, C, eps, tol=TOL["tight"])
    s = SVR(kernel="precomputed", C=C, epsilon=eps, tol=1e-10).fit(K, z)
    coef = np.zeros(len(z))
    coef[s.support_] = s.dual_coef_[0]
    np.testing.assert_allclose(r.coef, coef, atol=TOL["sklearn_coef"] * C)
    Xt, _ = _data(10, seed=5)
    Kt = rbf_kernel(Xt, X, sigma=1.0) if name == "rbf" else linear_kernel(Xt, X)
    np.testing.assert_allclose(r.decision_function(Kt), s.predict(Kt), atol=TOL["sklearn_coef"] * 10)


@pytest.mark.parametrize("cache_mb", [1e-4, 200.0])
def test_raw_X_equals_precomputed(cache_mb):
    X, z, K, C, eps = case("rbf")
    d = smo.svr(K, z, C, eps, tol=1e-8)
    r = smo.svr(smo.RawKernel(X, "rbf", sigma=1.0, cache_size=cache_mb), z, C, eps, tol=1e-8)
    assert abs(r.objective - d.objective) <= 1e-9 * max(1.0, abs(d.objective))
    np.testing.assert_allclose(r.coef, d.coef, atol=1e-6)


@pytest.mark.parametrize(
    "kw, exc, msg",
    [
        ({"epsilon": -0.1}, ValueError, "epsilon"),
        ({"epsilon": float("nan")}, ValueError, "epsilon"),
        ({"epsilon": "0.1"}, TypeError, "epsilon"),
        ({"C": 0.0}, ValueError, "C must be"),
    ],
)
def test_bad_input(kw, exc, msg):
    X, z, K, C, eps = case("rbf")
    args = {"C": C, "epsilon": eps, **kw}
    with pytest.raises(exc, match=msg):
        smo.svr(K, z, args["C"], args["epsilon"])
    if "epsilon" in kw:
        with pytest.raises(exc, match=msg):
            F.get("svr").dual(K, z, C=args["C"], epsilon=args["epsilon"])


def test_targets_with_nan_are_refused():
    X, z, K, C, eps = case("rbf")
    z = z.copy()
    z[2] = np.nan
    with pytest.raises(ValueError, match="y contains NaN"):
        smo.svr(K, z, C, eps)


def test_svr_result_predicts_values_not_labels():
    """An epsilon-SVR result is a regression (``task="regression"``): ``predict`` is the decision function
    ``f(x) = sum_i coef_i k(x_i, x) + b`` itself, not its sign, and ``decision_function`` is that sum."""
    X, z = _data()
    K = rbf_kernel(X, sigma=1.0)
    r = smo.svr(K, z, 1.0, 0.1, tol=1e-8)
    assert r.task == "regression"
    f = K[:7] @ r.coef + r.b
    assert np.allclose(r.decision_function(K[:7]), f, rtol=0, atol=1e-12)
    assert np.array_equal(r.predict(K[:7]), r.decision_function(K[:7]))
    assert not np.all(np.isin(r.predict(K[:7]), (-1.0, 1.0)))

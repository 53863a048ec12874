"""The weighted LS-SVM (svmref.solvers.robust.weighted_ls_svm) against its cvxpy model, the robust procedure's fixed
point and weight functions, and the outliers it weighs down (RobustLSSVR / RobustLSSVC).

The references are svmref.formulations' weighted models (weighted_ls_svm, weighted_ls_svm_regression), solved and
certified by F.solve: the two sides agree within the solver's certified gap plus the reference's bound.
"""
from __future__ import annotations

import warnings

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning

import svmref.formulations as F
from svmref.kernels import kernel_matrix
from svmref.solvers import linear, robust
from svmref.solvers.estimators import LSSVC, LSSVR, RobustLSSVC, RobustLSSVR


def _data(n=60, seed=0, outliers=True):
    rng = np.random.default_rng(seed)
    X = np.sort(rng.uniform(-3, 3, n))[:, None]
    y = np.sin(X[:, 0]) + 0.1 * rng.normal(size=n)
    if outliers:
        y[[10, 30, 45]] += [3.0, -4.0, 5.0]
    return X, y, rng


def _bound(res, sol):
    r = sol.certificate["residuals"]
    return (res.duality_gap + res.gap_floor + r["rel_error_bound"] + r["rel_floor"]) * abs(sol.objective)


@pytest.mark.parametrize("task", ["regression", "classification"])
@pytest.mark.parametrize("C", [0.1, 10.0, 1e4])
def test_the_weighted_solve_is_the_cvxpy_model(task, C):
    X, y, rng = _data()
    if task == "classification":
        y = np.where(y > 0.0, 1.0, -1.0)
    K = kernel_matrix(X, kernel="rbf", sigma=1.0)
    v = rng.uniform(0.05, 2.0, y.size)
    res = robust.weighted_ls_svm(K, y, C, v, task=task)
    assert res.status == "optimal", res.message
    name = "weighted_ls_svm" if task == "classification" else "weighted_ls_svm_regression"
    sol = F.solve(F.get(name).dual(K, y, C=C, v=v))
    assert sol.certified
    assert abs(res.objective - sol.objective) <= _bound(res, sol)
    primal = F.solve(F.get(name).primal(K, y, C=C, v=v))  # p* = -d*
    assert abs(primal.objective + res.objective) <= _bound(res, primal)


def test_unit_weights_are_the_ls_svm():
    X, y, _ = _data()
    K = kernel_matrix(X, kernel="rbf", sigma=1.0)
    a = robust.weighted_ls_svm(K, y, 10.0, np.ones(y.size))
    b = linear.ls_svm_regression(K, y, 10.0)
    assert np.max(np.abs(a.alpha - b.alpha)) <= 1e-10 * np.max(np.abs(b.alpha)) and abs(a.b - b.b) <= 1e-10


@pytest.mark.parametrize("weight", sorted(robust.WEIGHTS))
def test_the_robust_fit_is_a_fixed_point_certified_at_its_weights(weight):
    """The returned (alpha, b) solves the weighted problem at the returned weights (the cvxpy model at those v), the
    scale is 1.483 MAD of the unweighted LS-SVM's errors (linear.ls_svm_regression: e = alpha / C), and the weights
    the final errors imply, w(e / scale), are those weights to tol."""
    X, y, _ = _data()
    K = kernel_matrix(X, kernel="rbf", sigma=1.0)
    res = robust.robust_ls_svm(K, y, 10.0, weight=weight)
    v = res.info["weights"]
    assert res.status == "optimal" and res.converged and res.n_iter > 1
    sol = F.solve(F.get("weighted_ls_svm_regression").dual(K, y, C=10.0, v=v))
    assert abs(res.objective - sol.objective) <= _bound(res, sol)
    e0 = linear.ls_svm_regression(K, y, 10.0).alpha / 10.0
    assert res.info["scale"] == pytest.approx(1.483 * np.median(np.abs(e0 - np.median(e0))), rel=1e-9)
    e = res.alpha / (10.0 * v)
    implied = np.maximum(robust.WEIGHTS[weight](e / res.info["scale"]), robust.MIN_WEIGHT)
    assert np.max(np.abs(implied - v)) < 1e-4
    others = np.delete(v, [10, 30, 45])
    assert np.max(v[[10, 30, 45]]) < 0.25 * np.median(others), (v[[10, 30, 45]], np.median(others))


def test_the_weight_functions_at_their_landmarks():
    w = robust.WEIGHTS
    assert np.allclose(w["hampel"](np.array([0.0, 2.0, 2.5, 2.75, 3.0, 4.0])), [1, 1, 1, 0.5, 0.0, 1e-4])
    assert np.allclose(w["huber"](np.array([0.0, 1.345, 2.69, -2.69])), [1, 1, 0.5, 0.5])
    assert np.allclose(w["logistic"](np.array([0.0, 1.0, -2.0])), [1, np.tanh(1.0), np.tanh(2.0) / 2.0])
    assert np.allclose(w["myriad"](np.array([0.0, 1.0, 3.0])), [1, 0.5, 0.1])
    assert robust.robust_scale(np.array([1.0, 2.0, 3.0, 4.0, 100.0])) == pytest.approx(1.483)


def test_the_robust_fits_ignore_gross_outliers_where_the_ls_svm_does_not():
    X, y, _ = _data()
    truth = np.sin(X[:, 0])
    rob = RobustLSSVR(C=10.0, sigma=1.0).fit(X, y)
    plain = LSSVR(C=10.0, sigma=1.0).fit(X, y)
    err_rob, err_plain = np.abs(rob.predict(X) - truth).max(), np.abs(plain.predict(X) - truth).max()
    assert err_rob < 0.5 * err_plain, (err_rob, err_plain)
    rng = np.random.default_rng(1)
    Xc = np.r_[rng.normal([0, 0], 1, (20, 2)), rng.normal([5, 2], 1, (20, 2))]
    yc = np.repeat([-1, 1], 20)
    yc[[0, 1]] = 1  # two labels switched deep inside the other class (000 Fig. 1's experiment)
    clf = RobustLSSVC(C=1.0, kernel="linear").fit(Xc, yc)
    ls = LSSVC(C=1.0, kernel="linear").fit(Xc, yc)
    clean = np.repeat([-1, 1], 20)
    assert clf.weights_[:2].max() < 0.1 * np.median(clf.weights_[2:])
    assert np.mean(clf.predict(Xc[2:]) == clean[2:]) >= np.mean(ls.predict(Xc[2:]) == clean[2:])


def test_the_iteration_limit_is_said():
    X, y, _ = _data()
    K = kernel_matrix(X, kernel="rbf", sigma=1.0)
    with pytest.warns(ConvergenceWarning, match="still moved"):
        res = robust.robust_ls_svm(K, y, 10.0, weight="myriad", max_iter=2)
    assert res.status == "max_iter_reached" and not res.converged and res.n_iter == 2


def test_an_indefinite_kernel_is_labelled_not_convex():
    X, y, _ = _data(30, outliers=False)
    K = kernel_matrix(X, kernel="mlp", k=2.0, theta=-3.0)
    assert np.linalg.eigvalsh(K + np.eye(30) / 10.0)[0] < 0
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        res = robust.weighted_ls_svm(K, y, 10.0, np.ones(30))
    assert res.status == "not_convex" and any("not positive definite" in str(w.message) for w in caught)


@pytest.mark.parametrize("call, match", [
    (lambda K, y: robust.weighted_ls_svm(K, y, 1.0, np.ones(3)), "v has 3 weights but the data have 20 patterns"),
    (lambda K, y: robust.weighted_ls_svm(K, y, 1.0, -np.ones(20)), "v must be positive"),
    (lambda K, y: robust.weighted_ls_svm(K, y, 1.0, np.ones(20), task="ranking"), "task must be"),
    (lambda K, y: robust.robust_ls_svm(K, y, 1.0, weight="bisquare"), "weight must be one of"),
    (lambda K, y: robust.robust_ls_svm(K, y, 1.0, max_iter=0), "max_iter must be an integer >= 1"),
])
def test_bad_input_names_the_parameter(call, match):
    X, y, _ = _data(20, outliers=False)
    with pytest.raises(ValueError, match=match):
        call(kernel_matrix(X, kernel="rbf", sigma=1.0), y)

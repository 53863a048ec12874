"""The LS-SVM's exact leave-one-out residuals (svmref.solvers.linear.loo_residuals) against N refits.

Every refit is an independent solve of the system without pattern i (linear.ls_svm_regression, or linear.ls_svm for
the classifier's convention); the closed form must give the same y_i - f^(-i)(x_i) within a bound from the system's
condition number: both sides are backward-stable solves, each accurate to about N u cond(K + D) relative.
"""
from __future__ import annotations

import warnings

import numpy as np
import pytest

from svmref.kernels import kernel_matrix
from svmref.solvers import linear

U = 2.0 ** -53


def _data(n=30, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 2))
    return X, np.sin(X[:, 0]) + 0.1 * rng.normal(size=n), rng


def _refits(K, y, C, v=None, classification=False):
    """y_i - f^(-i)(x_i) by N solves without pattern i (weights through the diagonal of the kernel)."""
    n = y.shape[0]
    out = np.empty(n)
    for i in range(n):
        m = np.arange(n) != i
        Ki = K[np.ix_(m, m)].copy()
        if v is not None:
            Ki[np.diag_indices(n - 1)] += 1.0 / (C * v[m]) - 1.0 / C
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            if classification:
                res = linear.ls_svm(Ki, y[m], C)
                f = K[i, m] @ (res.alpha * y[m]) + res.b
            else:
                res = linear.ls_svm_regression(Ki, y[m], C)
                f = K[i, m] @ res.alpha + res.b
        out[i] = y[i] - f
    return out


def _bound(K, C, v, scale):
    d = 1.0 / (C * (np.ones(K.shape[0]) if v is None else v))
    return 10 * K.shape[0] * U * np.linalg.cond(K + np.diag(d)) * scale


@pytest.mark.parametrize("C", [0.1, 10.0, 1e4])
@pytest.mark.parametrize("weighted", [False, True])
def test_the_closed_form_is_the_refits(C, weighted):
    X, y, rng = _data()
    K = kernel_matrix(X, kernel="rbf", sigma=1.0)
    v = rng.uniform(0.2, 2.0, y.size) if weighted else None
    r = linear.loo_residuals(K, y, C, v=v)
    ref = _refits(K, y, C, v)
    err = np.max(np.abs(r - ref))
    assert err <= _bound(K, C, v, np.max(np.abs(ref))), err


def test_classification_is_the_regression_on_the_labels_and_gives_the_loo_error():
    """task='classification': the classifier of 000 eq. (2) refitted N times (linear.ls_svm, its own convention)
    predicts y - r, so the leave-one-out error is the refits' error."""
    X, _, _ = _data(36, seed=1)
    y = np.where(X[:, 0] + X[:, 1] ** 2 > 0.5, 1.0, -1.0)
    K = kernel_matrix(X, kernel="rbf", sigma=1.5)
    r = linear.loo_residuals(K, y, 5.0, task="classification")
    ref = _refits(K, y, 5.0, classification=True)
    assert np.max(np.abs(r - ref)) <= _bound(K, 5.0, None, np.max(np.abs(ref)))
    assert np.array_equal(np.sign(y - r), np.sign(y - ref))


def test_an_indefinite_kernel_takes_the_lu_path():
    """002's MLP kernel at k = 1, theta = -1 is not PSD; K + I/C is indefinite, Cholesky fails, the LU inverse of the
    bordered matrix still gives the refits' residuals."""
    X, y, _ = _data(25, seed=2)
    K = kernel_matrix(X, kernel="mlp", k=1.0, theta=-1.0)
    assert np.linalg.eigvalsh(K + np.eye(25) / 10.0)[0] < 0
    r = linear.loo_residuals(K, y, 10.0)
    ref = _refits(K, y, 10.0)
    H = np.block([[np.zeros((1, 1)), np.ones((1, 25))], [np.ones((25, 1)), K + np.eye(25) / 10.0]])
    assert np.max(np.abs(r - ref)) <= 10 * 25 * U * np.linalg.cond(H) * np.max(np.abs(ref))


@pytest.mark.parametrize("kwargs, match", [
    ({"task": "ranking"}, "task must be 'regression' or 'classification'"),
    ({"v": np.ones(5)}, "v has 5 weights but the data have 12 patterns"),
    ({"v": np.r_[np.ones(11), 0.0]}, "v must be positive"),
    ({"task": "classification"}, "y"),
])
def test_bad_input_names_the_parameter(kwargs, match):
    X, y, _ = _data(12)
    with pytest.raises(ValueError, match=match):
        linear.loo_residuals(kernel_matrix(X, kernel="rbf", sigma=1.0), y, 1.0, **kwargs)


def test_lssvrcv_scores_each_pair_by_its_refits_and_keeps_the_best():
    """cv_results_ from one factorisation per (C, sigma) are the mean squared residuals of N refits of LSSVR (an
    independent path: scikit-learn's LeaveOneOut over the estimator), and C_, sigma_ are their arg min."""
    from sklearn.model_selection import LeaveOneOut, cross_val_score

    from svmref.solvers.estimators import LSSVR, LSSVRCV

    X, y, _ = _data(24, seed=3)
    reg = LSSVRCV(Cs=[0.1, 10.0], sigmas=[0.5, 2.0]).fit(X, y)
    brute = [-np.mean(cross_val_score(LSSVR(C=C, sigma=s, standardize_y=False), X, y, cv=LeaveOneOut(),
                                      scoring="neg_mean_squared_error"))
             for C, s in zip(reg.cv_results_["C"], reg.cv_results_["sigma"])]
    K = kernel_matrix(X, kernel="rbf", sigma=0.5)
    assert np.allclose(reg.cv_results_["score"], brute, rtol=_bound(K, 10.0, None, 1.0) * 100, atol=0)
    best = int(np.argmin(brute))
    assert (reg.C_, reg.sigma_) == (reg.cv_results_["C"][best], reg.cv_results_["sigma"][best])
    assert reg.best_estimator_.C == reg.C_ and np.allclose(reg.predict(X), reg.best_estimator_.predict(X))


def test_lssvccv_leave_one_out_error_is_the_refits_error_with_three_classes():
    """The one-vs-one LOO vote (pairs without the pattern's class keep their full model) gives the error of N refits
    of the whole LSSVC ensemble."""
    from sklearn.datasets import load_iris
    from sklearn.model_selection import LeaveOneOut, cross_val_score

    from svmref.solvers.estimators import LSSVC, LSSVCCV

    X, y = load_iris(return_X_y=True)
    X, y = X[::3, :2], y[::3]  # two features: classes overlap, the LOO error is not 0
    clf = LSSVCCV(Cs=[0.5, 50.0], sigmas=[0.3, 1.0]).fit(X, y)
    for C, s, score in zip(clf.cv_results_["C"], clf.cv_results_["sigma"], clf.cv_results_["score"]):
        err = 1.0 - np.mean(cross_val_score(LSSVC(C=C, sigma=s), X, y, cv=LeaveOneOut()))
        assert 0.0 <= score - err < 1e-6, (C, s, score, err)
    assert clf.best_score_ == min(clf.cv_results_["score"]) and clf.best_score_ > 0.05


def test_cv_folds_are_cross_val_score():
    from sklearn.model_selection import cross_val_score

    from svmref.solvers.estimators import LSSVR, LSSVRCV

    X, y, _ = _data(40, seed=4)
    reg = LSSVRCV(Cs=[1.0, 100.0], sigmas=[1.0], cv=4).fit(X, y)
    for C, score in zip(reg.cv_results_["C"], reg.cv_results_["score"]):
        ref = -np.mean(cross_val_score(LSSVR(C=C, sigma=1.0, standardize_y=False), X, y, cv=4,
                                       scoring="neg_mean_squared_error"))
        assert score == pytest.approx(ref, rel=1e-12)


def test_tunelssvm_search_does_no_worse_than_a_grid_in_its_box_by_exact_loo():
    """search='tunelssvm' (CSA + simplex on the exact LOO criterion) over the box spanned by Cs and sigmas reaches a
    LOO error no larger than a 6 x 6 grid in the same box; every evaluation is in cv_results_ and the same
    random_state repeats the search."""
    from svmref.solvers.estimators import LSSVRCV

    X, y, _ = _data(40, seed=5)
    Cs, sigmas = np.logspace(-2, 3, 6), np.logspace(-1, 1, 6)
    grid = LSSVRCV(Cs=Cs, sigmas=sigmas).fit(X, y)
    csa = LSSVRCV(Cs=Cs, sigmas=sigmas, search="tunelssvm", random_state=0).fit(X, y)
    assert csa.best_score_ <= grid.best_score_
    assert np.all((csa.cv_results_["C"] >= 1e-2 * (1 - 1e-12)) & (csa.cv_results_["C"] <= 1e3 * (1 + 1e-12)))
    assert csa.best_score_ == min(csa.cv_results_["score"]) and len(csa.cv_results_["score"]) > 36
    again = LSSVRCV(Cs=Cs, sigmas=sigmas, search="tunelssvm", random_state=0).fit(X, y)
    assert (again.C_, again.sigma_) == (csa.C_, csa.sigma_)
    with pytest.raises(ValueError, match="search='tunelssvm' needs Cs"):
        LSSVRCV(Cs=[1.0], sigmas=sigmas, search="tunelssvm").fit(X, y)


def test_the_solution_from_the_same_factorisation_is_the_ls_svm():
    X, y, _ = _data(30, seed=6)
    K = kernel_matrix(X, kernel="rbf", sigma=1.0)
    r, alpha, b = linear.loo_residuals(K, y, 10.0, return_solution=True)
    ref = linear.ls_svm_regression(K, y, 10.0)
    assert np.array_equal(r, linear.loo_residuals(K, y, 10.0))
    assert np.max(np.abs(alpha - ref.alpha)) <= _bound(K, 10.0, None, np.max(np.abs(ref.alpha)))
    assert abs(b - ref.b) <= _bound(K, 10.0, None, max(abs(ref.b), np.max(np.abs(y))))

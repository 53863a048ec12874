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
    ({"v": np.ones(5)}, "v must be 12 finite weights > 0"),
    ({"v": np.r_[np.ones(11), 0.0]}, "v must be 12 finite weights > 0"),
    ({"task": "classification"}, "y"),
])
def test_bad_input_names_the_parameter(kwargs, match):
    X, y, _ = _data(12)
    with pytest.raises(ValueError, match=match):
        linear.loo_residuals(kernel_matrix(X, kernel="rbf", sigma=1.0), y, 1.0, **kwargs)

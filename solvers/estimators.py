"""scikit-learn estimators on the project's own solvers (DESIGN example 6).

``__init__`` stores the arguments only; ``_parameter_constraints`` is checked in ``fit``; fitted
attributes end in ``_`` and are named after the papers' symbols:

=====================  ==================================================================
attribute              symbol (paper)
=====================  ==================================================================
``alpha_``             alpha, the dual variables of all N training patterns (000 eq. (2), (5);
                       004 eq. (2)-(4) in its convention; lam for the support features machine)
``intercept_``         b (the bias; 0.0 for RLS, which has none, 001 eq. (9))
``dual_coef_``         coefficients of the kernel expansion over the support vectors:
                       alpha_i y_i (classifiers, 000), alpha_i (regression and ISLS, 004),
                       c_i (RLS, 001 eq. (8))
``support_``           indices i of the support vectors (coefficient != 0; 004: |alpha_i| > 1e-6)
``support_vectors_``   the patterns x_i, i in ``support_``
``coef_``              a (support features machine, 003 eq. (8)); ``selected_features_`` = {i : a_i != 0}
``n_iter_``            iterations of the solver; ``status_`` its status; ``result_`` the full result
=====================  ==================================================================

Decision function: ``f(x) = sum_{i in support_} dual_coef_i k(x_i, x) + intercept_``. Classifiers
accept any two class labels and map ``classes_[1]`` to +1. A solver stopped by its iteration
limit sets ``status_ = "max_iter_reached"`` and has already warned :class:`ConvergenceWarning`.
"""
from __future__ import annotations

from numbers import Integral, Real

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted, validate_data

from svmref.kernels import kernel_matrix

__all__ = [
    "L1SVC",
    "L2SVC",
    "LSSVC",
    "LeastOneNormSVC",
    "LSSVR",
    "RLSClassifier",
    "ISLSSVC",
    "ISLSSVR",
    "SupportFeaturesClassifier",
]

_KERNEL_CONSTRAINTS = {
    "kernel": [StrOptions({"linear", "poly", "rbf", "gaussian", "mlp"})],
    "sigma": [Interval(Real, 0, None, closed="neither")],
    "degree": [Interval(Integral, 1, None, closed="left")],
    "c": [Interval(Real, 0, None, closed="neither")],
    "k": [Interval(Real, None, None, closed="neither")],
    "theta": [Interval(Real, None, None, closed="neither")],
}


class _KernelModel(BaseEstimator):
    """Kernel parameters of 002: ``rbf`` exp(-||x-z||^2/sigma^2), ``poly`` (1 + x'z/c)^degree,
    ``gaussian`` exp(-||x-z||^2/(2 sigma^2)) (001), ``mlp`` tanh(k x'z + theta), ``linear`` x'z."""

    def _kernel(self, A, B=None):
        params = {"rbf": {"sigma": self.sigma}, "gaussian": {"sigma": self.sigma},
                  "poly": {"c": self.c, "d": self.degree}, "mlp": {"k": self.k, "theta": self.theta},
                  "linear": {}}[self.kernel]
        return kernel_matrix(A, B, kernel=self.kernel, **params)

    def _store(self, X, coef, b, result, alpha):
        support = np.flatnonzero(coef != 0.0)
        self.alpha_ = np.asarray(alpha)
        self.support_ = support
        self.support_vectors_ = X[support]
        self.dual_coef_ = coef[support]
        self.intercept_ = 0.0 if b is None else float(b)
        self.n_iter_ = int(result.n_iter)
        self.status_ = result.status
        self.result_ = result
        return self

    def decision_function(self, X):
        """``f(x) = sum_{i in support_} dual_coef_i k(x_i, x) + intercept_``."""
        check_is_fitted(self)
        X = validate_data(self, X, reset=False)
        if self.support_.size == 0:
            return np.full(X.shape[0], self.intercept_)
        return self._kernel(X, self.support_vectors_) @ self.dual_coef_ + self.intercept_


class _Classifier(ClassifierMixin, _KernelModel):
    def _labels(self, X, y):
        X, y = validate_data(self, X, y)
        self.classes_ = np.unique(y)
        if self.classes_.shape[0] != 2:
            raise ValueError(f"y must contain exactly two classes; got {self.classes_.shape[0]}: {self.classes_[:5]}")
        return X, np.where(y == self.classes_[1], 1.0, -1.0)

    def predict(self, X):
        """``classes_[1]`` where ``f(x) >= 0``, else ``classes_[0]``."""
        return self.classes_[(self.decision_function(X) >= 0.0).astype(int)]


class _SMOClassifier(_Classifier):
    _parameter_constraints = {
        "C": [Interval(Real, 0, None, closed="neither")],
        **_KERNEL_CONSTRAINTS,
        "tol": [Interval(Real, 0, None, closed="neither")],
        "wss": [StrOptions({"first", "second"})],
        "max_iter": [Interval(Integral, 1, None, closed="left"), None],
    }
    _solver = ""

    def __init__(self, C=1.0, *, kernel="rbf", sigma=1.0, degree=2, c=1.0, k=1.0, theta=0.0,
                 tol=1e-3, wss="second", max_iter=None):
        self.C = C
        self.kernel = kernel
        self.sigma = sigma
        self.degree = degree
        self.c = c
        self.k = k
        self.theta = theta
        self.tol = tol
        self.wss = wss
        self.max_iter = max_iter

    def fit(self, X, y):
        self._validate_params()
        X, ys = self._labels(X, y)
        from svmref.solvers import smo

        res = getattr(smo, self._solver)(self._kernel(X), ys, self.C, tol=self.tol, wss=self.wss, max_iter=self.max_iter)
        return self._store(X, res.alpha * ys, res.b, res, res.alpha)


class L1SVC(_SMOClassifier):
    """L1-SVM classifier (003 eq. (2)-(3); dual box [0, C]) trained by :func:`svmref.solvers.smo.l1_svm`."""

    _solver = "l1_svm"


class L2SVC(_SMOClassifier):
    """L2-SVM classifier (000 §1; dual K + I/C on [0, inf)) trained by :func:`svmref.solvers.smo.l2_svm`."""

    _solver = "l2_svm"


class LeastOneNormSVC(_SMOClassifier):
    """Least 1-Norm SVM classifier (000 eqs. (3)-(5); dual box [-C, C]) by :func:`svmref.solvers.smo.least_1norm_svm`."""

    _solver = "least_1norm_svm"


class LSSVC(_SMOClassifier):
    """LS-SVM classifier (000 eqs. (1)-(2)): ``solver="cholesky"`` solves the KKT system
    (:func:`svmref.solvers.linear.ls_svm`), ``solver="smo"`` runs :func:`svmref.solvers.smo.ls_svm`."""

    _parameter_constraints = {**_SMOClassifier._parameter_constraints, "solver": [StrOptions({"cholesky", "smo"})]}

    def __init__(self, C=1.0, *, kernel="rbf", sigma=1.0, degree=2, c=1.0, k=1.0, theta=0.0,
                 solver="cholesky", tol=1e-3, wss="second", max_iter=None):
        super().__init__(C, kernel=kernel, sigma=sigma, degree=degree, c=c, k=k, theta=theta,
                         tol=tol, wss=wss, max_iter=max_iter)
        self.solver = solver

    def fit(self, X, y):
        self._validate_params()
        X, ys = self._labels(X, y)
        if self.solver == "smo":
            from svmref.solvers import smo

            res = smo.ls_svm(self._kernel(X), ys, self.C, tol=self.tol, wss=self.wss, max_iter=self.max_iter)
        else:
            from svmref.solvers import linear

            res = linear.ls_svm(self._kernel(X), ys, self.C)
        return self._store(X, res.alpha * ys, res.b, res, res.alpha)


class LSSVR(RegressorMixin, _KernelModel):
    """LS-SVM regression (004 eqs. (1)-(2)) by :func:`svmref.solvers.linear.ls_svm_regression`."""

    _parameter_constraints = {"C": [Interval(Real, 0, None, closed="neither")], **_KERNEL_CONSTRAINTS}

    def __init__(self, C=1.0, *, kernel="rbf", sigma=1.0, degree=2, c=1.0, k=1.0, theta=0.0):
        self.C = C
        self.kernel = kernel
        self.sigma = sigma
        self.degree = degree
        self.c = c
        self.k = k
        self.theta = theta

    def fit(self, X, y):
        self._validate_params()
        X, y = validate_data(self, X, y, y_numeric=True)
        from svmref.solvers import linear

        res = linear.ls_svm_regression(self._kernel(X), np.asarray(y, float), self.C)
        return self._store(X, res.alpha, res.b, res, res.alpha)

    def predict(self, X):
        return self.decision_function(X)


class RLSClassifier(_Classifier):
    """Regularised least squares classifier (001 eqs. (7)-(9)) by :func:`svmref.solvers.linear.rls`; no bias."""

    _parameter_constraints = {"gamma": [Interval(Real, 0, None, closed="neither")], **_KERNEL_CONSTRAINTS}

    def __init__(self, gamma=1e-3, *, kernel="gaussian", sigma=1.0, degree=2, c=1.0, k=1.0, theta=0.0):
        self.gamma = gamma
        self.kernel = kernel
        self.sigma = sigma
        self.degree = degree
        self.c = c
        self.k = k
        self.theta = theta

    def fit(self, X, y):
        self._validate_params()
        X, ys = self._labels(X, y)
        from svmref.solvers import linear

        res = linear.rls(self._kernel(X), ys, self.gamma)
        return self._store(X, res.c, None, res, res.c)

    def predict(self, X):
        """001 §2.2: class -1 if ``f(x) <= 0``, else +1."""
        return self.classes_[(self.decision_function(X) > 0.0).astype(int)]


class _ISLS(_KernelModel):
    _parameter_constraints = {
        "C": [Interval(Real, 0, None, closed="neither")],
        **_KERNEL_CONSTRAINTS,
        "tol": [Interval(Real, 0, None, closed="neither")],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "sv_threshold": [Interval(Real, 0, None, closed="left")],
    }

    def __init__(self, C=1.0, *, kernel="rbf", sigma=1.0, degree=2, c=1.0, k=1.0, theta=0.0,
                 tol=1e-4, max_iter=50, sv_threshold=1e-6):
        self.C = C
        self.kernel = kernel
        self.sigma = sigma
        self.degree = degree
        self.c = c
        self.k = k
        self.theta = theta
        self.tol = tol
        self.max_iter = max_iter
        self.sv_threshold = sv_threshold

    def _fit(self, X, y, task):
        from svmref.solvers import isls

        res = isls.isls_svm(self._kernel(X), y, self.C, task=task, tol=self.tol, max_iter=self.max_iter,
                            sv_threshold=self.sv_threshold)
        coef = np.zeros_like(res.alpha)
        coef[res.support_] = res.alpha[res.support_]  # the final model uses the support vectors only (004 §4)
        return self._store(X, coef, res.b, res, res.alpha)


class ISLSSVC(_Classifier, _ISLS):
    """ISLS-SVM classifier (004, Algorithm 1) by :func:`svmref.solvers.isls.isls_svm`; sparse LS-SVM."""

    def fit(self, X, y):
        self._validate_params()
        X, ys = self._labels(X, y)
        return self._fit(X, ys, "classification")


class ISLSSVR(RegressorMixin, _ISLS):
    """ISLS-SVM regression (004, Algorithm 1) by :func:`svmref.solvers.isls.isls_svm`."""

    def fit(self, X, y):
        self._validate_params()
        X, y = validate_data(self, X, y, y_numeric=True)
        return self._fit(X, np.asarray(y, float), "regression")

    def predict(self, X):
        return self.decision_function(X)


class SupportFeaturesClassifier(_Classifier):
    """Support features machine (003 eq. (5)), linear, by :func:`svmref.solvers.support_features.support_features`.

    ``coef_`` is ``a`` (003 eq. (8)), ``intercept_`` is ``b`` (003 eq. (11)), ``alpha_`` is ``lam``
    (dual (10)), ``selected_features_`` the indices with ``a_i != 0``.
    """

    _parameter_constraints = {
        "C": [Interval(Real, 0, None, closed="neither")],
        "mu": [Interval(Real, 0, 1, closed="left")],
        "tol": [Interval(Real, 0, None, closed="neither")],
        "max_iter": [Interval(Integral, 1, None, closed="left"), None],
    }

    def __init__(self, C=1.0, mu=0.0, *, tol=1e-3, max_iter=None):
        self.C = C
        self.mu = mu
        self.tol = tol
        self.max_iter = max_iter

    def fit(self, X, y):
        self._validate_params()
        X, ys = self._labels(X, y)
        from svmref.solvers.support_features import support_features

        res = support_features(X, ys, self.C, self.mu, tol=self.tol, max_iter=self.max_iter)
        self.coef_ = res.a
        self.intercept_ = float(res.b)
        self.alpha_ = res.lam
        self.selected_features_ = res.selected
        self.n_iter_ = int(res.n_iter)
        self.status_ = res.status
        self.result_ = res
        return self

    def decision_function(self, X):
        """``f(x) = a'x + b``."""
        check_is_fitted(self)
        X = validate_data(self, X, reset=False)
        return X @ self.coef_ + self.intercept_

"""scikit-learn estimators on our solvers: agreement with SVC, label mapping, parameter checks."""
from __future__ import annotations

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.exceptions import ConvergenceWarning
from sklearn.svm import SVC
from sklearn.utils._param_validation import InvalidParameterError

from svmref.solvers import estimators as E

TOL = {"decision": 1e-5}

RNG = np.random.default_rng(0)
X = RNG.normal(size=(60, 2))
Y = np.where(X[:, 0] + 0.4 * RNG.normal(size=60) > 0, "spam", "ham")

CLASSIFIERS = [E.L1SVC(), E.L2SVC(), E.LSSVC(), E.LSSVC(solver="smo"), E.LeastOneNormSVC(), E.RLSClassifier(),
               E.ISLSSVC(C=10.0), E.SupportFeaturesClassifier(C=1.0, mu=0.1)]


def test_l1svc_agrees_with_sklearn_svc():
    # sklearn's RBF exp(-g ||x - z||^2) is ours with sigma = 1/sqrt(g)
    ref = SVC(kernel="rbf", gamma=0.5, C=2.0, tol=1e-8).fit(X, Y)
    ours = E.L1SVC(C=2.0, sigma=np.sqrt(2.0), tol=1e-8).fit(X, Y)
    np.testing.assert_array_equal(ours.classes_, ref.classes_)
    assert np.max(np.abs(ours.decision_function(X) - ref.decision_function(X))) <= TOL["decision"]
    np.testing.assert_array_equal(np.sort(ours.support_), np.sort(ref.support_))
    assert ours.status_ == "optimal"


@pytest.mark.parametrize("est", CLASSIFIERS, ids=lambda e: type(e).__name__ + getattr(e, "solver", ""))
def test_classifiers_fit_predict_and_map_labels(est):
    est = clone(est).fit(X, Y)
    pred = est.predict(X)
    assert set(pred) <= set(Y)
    assert est.score(X, Y) > 0.75  # an easy, almost separable problem
    f = est.decision_function(X)
    np.testing.assert_array_equal(pred, np.where(f >= 0, "spam", "ham") if not isinstance(est, E.RLSClassifier)
                                  else np.where(f > 0, "spam", "ham"))


def test_decision_function_is_the_kernel_expansion():
    est = E.LeastOneNormSVC(C=1.0, kernel="linear").fit(X, Y)
    ys = np.where(Y == "spam", 1.0, -1.0)
    W = X.T @ (est.alpha_ * ys)  # W = sum alpha_i y_i x_i (000)
    np.testing.assert_allclose(est.decision_function(X), X @ W + est.intercept_, atol=1e-10)
    assert np.all(np.abs(est.alpha_) <= 1.0 + 1e-12)  # the Least 1-Norm box [-C, C]


def test_regressors():
    yr = np.sin(X[:, 0]) + 0.05 * RNG.normal(size=60)
    dense = E.LSSVR(C=10.0).fit(X, yr)
    sparse = E.ISLSSVR(C=10.0).fit(X, yr)
    assert dense.score(X, yr) > 0.9 and sparse.score(X, yr) > 0.8
    assert sparse.support_.size < dense.support_.size  # ISLS is sparser (004)


@pytest.mark.parametrize("est, match", [(E.L1SVC(C=-1.0), "'C' parameter"), (E.L1SVC(kernel="laplace"), "'kernel'"),
                                        (E.SupportFeaturesClassifier(mu=1.0), "'mu'"), (E.LSSVC(solver="qr"), "'solver'")])
def test_bad_parameters_are_named(est, match):
    with pytest.raises(InvalidParameterError, match=match):
        est.fit(X, Y)


def test_one_class_is_an_error_and_max_iter_warns():
    with pytest.raises(ValueError, match="two classes"):
        E.L1SVC().fit(X, np.full(60, "ham"))
    with pytest.warns(ConvergenceWarning):
        est = E.L1SVC(max_iter=2, tol=1e-9).fit(X, Y)
    assert est.status_ == "max_iter_reached"

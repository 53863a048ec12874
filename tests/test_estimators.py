"""scikit-learn estimators on our solvers: check_estimator, agreement with SVC, one-vs-one, precomputed
kernels, target standardisation, parameter checks, and the docstring examples."""
from __future__ import annotations

import ast
import doctest
import inspect
import re

import numpy as np
import pytest
from sklearn.base import BaseEstimator, clone, is_classifier
from sklearn.datasets import load_iris
from sklearn.exceptions import ConvergenceWarning, NotFittedError
from sklearn.svm import SVC, SVR
from sklearn.utils.estimator_checks import check_estimator

from svmref._validation import NotConvexError
from svmref.kernels import kernel_matrix
from svmref.solvers import estimators as E
from svmref.solvers.smo import NotConvexWarning

TOL = {"decision": 1e-5, "same_problem": 1e-8}
# SMO stops at a KKT gap of tol: two runs on kernels equal up to round-off agree to about tol, not to round-off
TIGHT = {"tol": 1e-10}


def _tight(est):
    """``est`` with its SMO tolerance at TIGHT (the solution is then unique to round-off); other solvers as they are."""
    return clone(est).set_params(**TIGHT) if "wss" in est.get_params() else clone(est)

RNG = np.random.default_rng(0)
X = RNG.normal(size=(60, 2))
Y = np.where(X[:, 0] + 0.4 * RNG.normal(size=60) > 0, "spam", "ham")
X_IRIS, Y_IRIS = load_iris(return_X_y=True)

PUBLIC = [name for name in E.__all__ if name != "HyperparameterError"]
# the estimators defined here (re-exported ones, such as bayes.BayesianLSSVC, are checked by check_estimator only)
OWN = [name for name in PUBLIC if getattr(E, name).__module__ == E.__name__]
# the grid searches over LSSVR / LSSVC (meta-estimators: no C or sigma of their own, the model is best_estimator_)
SEARCHES = ["LSSVRCV", "LSSVCCV"]
KERNEL_ESTIMATORS = [name for name in OWN if "kernel" in getattr(E, name)().get_params() and name not in SEARCHES]
CLASSIFIERS = [E.L1SVC(), E.L2SVC(), E.LSSVC(), E.LSSVC(solver="smo"), E.LeastOneNormSVC(), E.RLSClassifier(),
               E.ISLSSVC(C=10.0), E.SupportFeaturesClassifier(C=1.0, mu=0.1)]
REGRESSORS = [getattr(E, name)() for name in OWN if not is_classifier(getattr(E, name)()) and name not in SEARCHES]

# check_estimator skips these only for what this environment lacks (pandas, SCIPY_ARRAY_API), never for the estimator
ENVIRONMENT_SKIPS = ("pandas is not installed", "SCIPY_ARRAY_API is not set")


def _ident(est):
    return type(est).__name__ + "".join(f"-{v}" for k, v in est.get_params().items()
                                         if k in ("solver", "kernel") and v != getattr(E, type(est).__name__)().get_params()[k])


def _check(est):
    results = check_estimator(est, on_fail=None, on_skip=None)
    failed = [f"{r['check_name']}: {r['exception']!r}" for r in results if r["status"] == "failed"]
    assert not failed, "\n".join(failed)
    skipped = [str(r["exception"]) for r in results if r["status"] == "skipped"]
    assert all(any(s in msg for s in ENVIRONMENT_SKIPS) for msg in skipped), skipped
    assert sum(r["status"] == "passed" for r in results) >= 50


# BayesianLSSVC (re-exported from solvers/bayes.py) is checked with its default and two other settings by
# tests/test_bayes.py::test_check_estimator; running its 6 s default check twice would buy nothing
@pytest.mark.parametrize("est", [getattr(E, name)() for name in PUBLIC if name != "BayesianLSSVC"]
                         + [E.LSSVC(solver="smo")], ids=_ident)
def test_check_estimator_passes(est):
    _check(est)


# With kernel="precomputed" check_estimator feeds "kernels" that are not positive semidefinite: X X' minus its mean
# (check_positive_only_tag_during_fit) and Grams computed in float32 (eigenvalues down to -6e-6). The linear-system
# solvers warn (scipy's LinAlgWarning, a RuntimeWarning, which pyproject otherwise turns into an error) and go on;
# the SMO estimators raise NotConvexError by default (on_nonconvex="raise", tested below) and go on as SVC does
# with on_nonconvex="clamp", which is what these checks are run with.
@pytest.mark.filterwarnings("default::RuntimeWarning")
@pytest.mark.parametrize("est", [getattr(E, name)(kernel="precomputed") for name in KERNEL_ESTIMATORS
                                 if "wss" not in getattr(E, name)().get_params()]
                         + [getattr(E, name)(kernel="precomputed", on_nonconvex="clamp") for name in KERNEL_ESTIMATORS
                            if "wss" in getattr(E, name)().get_params()]
                         + [getattr(E, name)(kernel="precomputed") for name in SEARCHES], ids=_ident)
def test_check_estimator_passes_with_precomputed_kernels(est):
    _check(est)


@pytest.mark.parametrize("name", [name for name in KERNEL_ESTIMATORS if "on_nonconvex" in getattr(E, name)().get_params()])
def test_smo_estimators_refuse_an_indefinite_kernel_unless_asked(name):
    K = np.array([[1.0, 3.0, 0.0, 0.0], [3.0, 1.0, 0.0, 0.0], [0.0, 0.0, 1.0, 0.0], [0.0, 0.0, 0.0, 1.0]])  # eig -2
    y = np.array([1.0, -1.0, 1.0, -1.0])
    smo = {"solver": "smo"} if name == "LSSVC" else {}
    with pytest.raises(NotConvexError, match="on_nonconvex='clamp'"):
        getattr(E, name)(kernel="precomputed", **smo).fit(K, y)
    with pytest.warns(NotConvexWarning):
        est = getattr(E, name)(kernel="precomputed", on_nonconvex="clamp", **smo).fit(K, y)
    assert est.status_ == "not_convex"


def test_every_public_estimator_is_checked():
    assert set(PUBLIC) >= {"L1SVC", "L2SVC", "LSSVC", "LeastOneNormSVC", "LSSVR", "RLSClassifier", "ISLSSVC", "ISLSSVR",
                           "SupportFeaturesClassifier", "L1SVR"}
    assert all(callable(getattr(E, name)) for name in PUBLIC)


def test_l1svc_agrees_with_sklearn_svc():
    # sklearn's RBF exp(-g ||x - z||^2) is ours with sigma = 1/sqrt(g)
    ref = SVC(kernel="rbf", gamma=0.5, C=2.0, tol=1e-8).fit(X, Y)
    ours = E.L1SVC(C=2.0, sigma=np.sqrt(2.0), tol=1e-8).fit(X, Y)
    np.testing.assert_array_equal(ours.classes_, ref.classes_)
    assert np.max(np.abs(ours.decision_function(X) - ref.decision_function(X))) <= TOL["decision"]
    np.testing.assert_array_equal(np.sort(ours.support_), np.sort(ref.support_))
    assert ours.status_ == "optimal"


def test_l1svr_agrees_with_sklearn_svr():
    yr = np.sin(2 * X[:, 0]) + X[:, 1] ** 2
    ref = SVR(C=3.0, epsilon=0.2, gamma=0.5, tol=1e-10).fit(X, yr)
    ours = E.L1SVR(C=3.0, epsilon=0.2, sigma=np.sqrt(2.0), tol=1e-10).fit(X, yr)
    assert np.max(np.abs(ours.predict(X) - ref.predict(X))) <= TOL["decision"]
    np.testing.assert_array_equal(ours.support_, ref.support_)
    np.testing.assert_allclose(ours.dual_coef_, ref.dual_coef_.ravel(), atol=TOL["decision"])
    assert np.all(np.abs(ours.alpha_) <= 3.0 + 1e-12)  # the box [0, C] on a and a*


def test_raw_x_with_a_tiny_cache_is_the_dense_solution():
    # with the engine's kernels SMO reads columns from raw X through an LRU cache; the cache size changes time only
    dense = E.L1SVC(kernel="mlp", k=0.0, theta=0.5, tol=1e-10).fit(X, Y)  # tanh(0.5): constant kernel, dense path
    assert dense.status_ == "optimal"
    big = E.L1SVC(tol=1e-10).fit(X_IRIS, Y_IRIS)
    tiny = E.L1SVC(tol=1e-10, cache_size=0.001).fit(X_IRIS, Y_IRIS)
    np.testing.assert_allclose(tiny.decision_function(X_IRIS), big.decision_function(X_IRIS), atol=1e-8)
    assert type(big.estimators_[0].result_).__name__ == "SMOResult"


@pytest.mark.parametrize("kernel, params, kernel_params", [("poly", {"c": 2.0, "degree": 3}, {"c": 2.0, "d": 3}),
                                                           ("linear", {}, {}), ("gaussian", {"sigma": 1.3}, {"sigma": 1.3}),
                                                           ("rbf", {"sigma": 0.7}, {"sigma": 0.7})])
@pytest.mark.parametrize("name", [name for name in KERNEL_ESTIMATORS if "cache_size" in getattr(E, name)().get_params()])
def test_raw_x_kernels_are_the_dense_kernels(name, kernel, params, kernel_params):
    # the SMO estimators hand raw X to smo.RawKernel; its kernels must be svmref.kernels' conventions
    yd = X[:, 0] ** 2 if name == "L1SVR" else Y
    extra = {"solver": "smo"} if name == "LSSVC" else {}
    raw = getattr(E, name)(kernel=kernel, tol=1e-10, **params, **extra).fit(X, yd)
    K = kernel_matrix(X, kernel=kernel, **kernel_params)
    dense = getattr(E, name)(kernel="precomputed", tol=1e-10, **extra).fit(K, yd)
    f = (lambda e, Z: e.predict(Z)) if name == "L1SVR" else (lambda e, Z: e.decision_function(Z))
    np.testing.assert_allclose(f(raw, X), f(dense, K), atol=1e-8)


def test_sigma_scale_is_sklearn_gamma_scale():
    # default sigma="scale" is SVC's default gamma="scale" = 1 / (n_features Var(X))
    Xs = 3.0 * X + 1.0
    ref = SVC(C=1.0, tol=1e-8).fit(Xs, Y)
    ours = E.L1SVC(C=1.0, tol=1e-8).fit(Xs, Y)
    assert ours.sigma_ == pytest.approx(np.sqrt(Xs.shape[1] * Xs.var()))
    assert np.max(np.abs(ours.decision_function(Xs) - ref.decision_function(Xs))) <= TOL["decision"]
    gauss = E.RLSClassifier().fit(Xs, Y)  # 001's exp(-d / (2 sigma^2)): half the squared width
    assert gauss.sigma_ == pytest.approx(ours.sigma_ / np.sqrt(2.0))


def test_multiclass_one_vs_one_agrees_with_svc():
    ref = SVC(C=1.0, gamma=0.5, tol=1e-8, decision_function_shape="ovo").fit(X_IRIS, Y_IRIS)
    ours = E.L1SVC(C=1.0, sigma=np.sqrt(2.0), tol=1e-8, decision_function_shape="ovo").fit(X_IRIS, Y_IRIS)
    np.testing.assert_array_equal(ours.pairs_, [[0, 1], [0, 2], [1, 2]])
    # SVC's ovo value is positive for the pair's first class; ours for its second (classes_[j] is +1)
    assert np.max(np.abs(ours.decision_function(X_IRIS) + ref.decision_function(X_IRIS))) <= TOL["decision"]
    np.testing.assert_array_equal(ours.predict(X_IRIS), ref.predict(X_IRIS))
    np.testing.assert_array_equal(ours.support_, ref.support_)  # the union over the pairs


@pytest.mark.parametrize("est", CLASSIFIERS, ids=_ident)
def test_multiclass_pairs_are_the_binary_models(est):
    labels = np.array(["setosa", "versicolor", "virginica"])[Y_IRIS]
    model = _tight(est).set_params(decision_function_shape="ovo").fit(X_IRIS, labels)
    assert model.decision_function(X_IRIS).shape == (150, 3)
    assert model.intercept_.shape == model.n_iter_.shape == model.status_.shape == (3,)
    assert np.all(model.n_iter_ >= 1)
    for k, (i, j) in enumerate(model.pairs_):
        rows = np.isin(labels, model.classes_[[i, j]])
        binary = _tight(est)
        if "sigma" in est.get_params():
            binary.set_params(sigma=model.sigma_)  # the pairs use the width resolved on all the data
        binary.fit(X_IRIS[rows], labels[rows])
        np.testing.assert_array_equal(binary.classes_, model.estimators_[k].classes_)
        np.testing.assert_allclose(model.decision_function(X_IRIS)[:, k], binary.decision_function(X_IRIS),
                                   atol=TOL["same_problem"])
    ovr = clone(model).set_params(decision_function_shape="ovr").fit(X_IRIS, labels)
    votes = ovr.decision_function(X_IRIS)
    assert votes.shape == (150, 3)
    np.testing.assert_array_equal(np.round(votes).sum(axis=1), 3)  # three pair votes; confidences in (-1/3, 1/3)
    np.testing.assert_array_equal(ovr.predict(X_IRIS), model.classes_[np.argmax(votes, axis=1)])
    assert ovr.score(X_IRIS, labels) > 0.9


@pytest.mark.parametrize("est", CLASSIFIERS, ids=_ident)
def test_binary_fit_predict_and_attributes(est):
    est = clone(est).fit(X, Y)
    pred = est.predict(X)
    assert set(pred) <= set(Y)
    assert est.score(X, Y) > 0.75  # an easy, almost separable problem
    f = est.decision_function(X)
    assert f.shape == (60,)
    np.testing.assert_array_equal(pred, np.where(f > 0, "spam", "ham"))  # classes_[1] = "spam" is +1
    assert isinstance(est.intercept_, float) and isinstance(est.n_iter_, int) and est.n_iter_ >= 1
    assert est.alpha_.shape == (60,) and not hasattr(est, "estimators_")
    if hasattr(est, "dual_coef_"):
        np.testing.assert_array_equal(est.support_, np.flatnonzero(est.alpha_ != 0) if not isinstance(est, E.ISLSSVC)
                                      else est.result_.support_)
        assert est.dual_coef_.shape == est.support_.shape


def test_refit_forgets_the_previous_fit():
    est = E.L1SVC().fit(X_IRIS, Y_IRIS)
    assert hasattr(est, "estimators_")
    est.fit(X, Y)
    assert not hasattr(est, "estimators_") and not hasattr(est, "pairs_") and isinstance(est.intercept_, float)


def test_decision_function_is_the_kernel_expansion():
    est = E.LeastOneNormSVC(C=1.0, kernel="linear").fit(X, Y)
    ys = np.where(Y == "spam", 1.0, -1.0)
    W = X.T @ (est.alpha_ * ys)  # W = sum alpha_i y_i x_i (000)
    np.testing.assert_allclose(est.decision_function(X), X @ W + est.intercept_, atol=1e-10)
    assert np.all(np.abs(est.alpha_) <= 1.0 + 1e-12)  # the Least 1-Norm box [-C, C]


@pytest.mark.parametrize("name, data", [(name, "binary") for name in KERNEL_ESTIMATORS]
                         + [(name, "multiclass") for name in KERNEL_ESTIMATORS if is_classifier(getattr(E, name)())])
def test_precomputed_kernel_equals_the_named_kernel(name, data):
    Xd, yd = (X, Y) if data == "binary" else (X_IRIS, Y_IRIS)
    if not is_classifier(getattr(E, name)()):
        yd = np.sin(Xd[:, 0]) + Xd[:, 1]
    train, test = np.arange(0, len(yd), 2), np.arange(1, len(yd), 2)
    named = _tight(getattr(E, name)(sigma=1.5)).fit(Xd[train], yd[train])
    K = kernel_matrix(Xd, Xd[train], kernel=named.kernel, sigma=1.5)
    pre = _tight(getattr(E, name)(kernel="precomputed")).fit(K[train], yd[train])
    assert pre.n_features_in_ == train.size
    if data == "binary":
        assert pre.support_vectors_.shape[0] == 0  # as SVC: no patterns to store
    if is_classifier(pre):
        np.testing.assert_array_equal(pre.predict(K[test]), named.predict(Xd[test]))
        np.testing.assert_allclose(pre.decision_function(K[test]), named.decision_function(Xd[test]), atol=1e-8)
    else:
        np.testing.assert_allclose(pre.predict(K[test]), named.predict(Xd[test]), atol=1e-8)
    with pytest.raises(ValueError, match="square kernel matrix"):
        getattr(E, name)(kernel="precomputed").fit(Xd[train], yd[train])


@pytest.mark.parametrize("name", PUBLIC)
def test_not_fitted_error_before_fit(name):
    est = getattr(E, name)()
    methods = ["predict"] + (["decision_function"] if hasattr(est, "decision_function") else [])
    assert hasattr(est, "decision_function") == (is_classifier(est) and name in OWN)
    for method in methods:
        with pytest.raises(NotFittedError):
            getattr(est, method)(X)


@pytest.mark.parametrize("est", REGRESSORS, ids=_ident)
def test_regressors_predict_and_score_without_decision_function(est):
    yr = np.sin(X[:, 0]) + 0.05 * RNG.normal(size=60)
    est = clone(est).set_params(C=10.0).fit(X, yr)
    assert not hasattr(est, "decision_function")
    assert est.score(X, yr) > 0.8
    expansion = kernel_matrix(X, est.support_vectors_, sigma=est.sigma_) @ est.dual_coef_ + est.intercept_
    np.testing.assert_allclose(est.predict(X), expansion, atol=1e-8)  # in the units of y


def test_isls_regression_is_sparser_than_lssvr():
    yr = np.sin(X[:, 0]) + 0.05 * RNG.normal(size=60)
    dense = E.LSSVR(C=10.0).fit(X, yr)
    sparse = E.ISLSSVR(C=10.0).fit(X, yr)
    assert dense.score(X, yr) > 0.9 and sparse.score(X, yr) > 0.8
    assert sparse.support_.size < dense.support_.size  # ISLS is sparser (004)


@pytest.mark.parametrize("name", ["LSSVR", "ISLSSVR"])
def test_standardized_targets_make_the_model_unit_free(name):
    yr = np.sin(X[:, 0]) + 0.05 * RNG.normal(size=60)
    a, b = 1e4, -300.0  # a change of units: y -> a y + b
    unit = getattr(E, name)(C=10.0).fit(X, yr)
    scaled = getattr(E, name)(C=10.0).fit(X, a * yr + b)
    np.testing.assert_array_equal(unit.support_, scaled.support_)
    np.testing.assert_allclose(scaled.predict(X), a * unit.predict(X) + b, rtol=1e-8, atol=1e-8 * a)
    np.testing.assert_allclose(scaled.dual_coef_, a * unit.dual_coef_, rtol=1e-8, atol=1e-10 * a)
    assert scaled.y_mean_ == pytest.approx(a * unit.y_mean_ + b) and scaled.y_scale_ == pytest.approx(a * unit.y_scale_)
    raw = getattr(E, name)(C=10.0, standardize_y=False).fit(X, a * yr + b)
    assert raw.y_mean_ == 0.0 and raw.y_scale_ == 1.0
    # LS-SVM is affine-equivariant in y, and isls_svm measures tol and sv_threshold in a unit of alpha from
    # Var(y): standardising changes round-off only (as both docstrings say)
    np.testing.assert_array_equal(raw.support_, scaled.support_)
    np.testing.assert_allclose(raw.predict(X), scaled.predict(X), rtol=1e-8)


@pytest.mark.parametrize("est, match", [(E.L1SVC(C=-1.0), "'C' parameter of L1SVC must be a finite float > 0"),
                                        (E.L1SVC(kernel="laplace"), "'kernel'"),
                                        (E.L1SVC(sigma="auto"), "'sigma'"),
                                        (E.L1SVC(max_iter=0), "'max_iter'"),
                                        (E.L1SVC(decision_function_shape="ovx"), "'decision_function_shape'"),
                                        (E.RLSClassifier(gamma=np.inf), "'gamma'"),
                                        (E.ISLSSVR(standardize_y="yes"), "'standardize_y'"),
                                        (E.SupportFeaturesClassifier(mu=1.0), "'mu'"), (E.LSSVC(solver="qr"), "'solver'"),
                                        (E.SupportFeaturesClassifier(cache_size=0.0), "'cache_size'")])
def test_bad_parameters_are_named(est, match):
    with pytest.raises(E.HyperparameterError, match=match):
        est.fit(X, Y if is_classifier(est) else X[:, 0])
    assert issubclass(E.HyperparameterError, ValueError) and issubclass(E.HyperparameterError, TypeError)
    assert E.InvalidParameterError is E.HyperparameterError  # the earlier name still catches it


@pytest.mark.parametrize("name", PUBLIC)
def test_no_scikit_learn_name_is_shadowed(name):
    # the rules table and its check have names of their own: scikit-learn's _parameter_constraints and
    # BaseEstimator._validate_params (another table format) are neither defined nor overridden
    cls = getattr(E, name)
    assert not hasattr(cls, "_parameter_constraints")
    assert getattr(cls, "_validate_params", None) is getattr(BaseEstimator, "_validate_params", None)
    assert set(cls._hyperparameter_rules) <= set(cls().get_params())


def test_one_class_is_an_error_and_max_iter_warns():
    with pytest.raises(ValueError, match="at least two classes"):
        E.L1SVC().fit(X, np.full(60, "ham"))
    with pytest.raises(ValueError, match="Unknown label type"):
        E.L1SVC().fit(X, X[:, 0])  # continuous targets are not classes
    with pytest.warns(ConvergenceWarning):
        est = E.L1SVC(max_iter=2, tol=1e-9).fit(X, Y)
    assert est.status_ == "max_iter_reached"


def test_docstring_examples_run():
    result = doctest.testmod(E, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE, report=True)
    assert result.attempted >= 30 and result.failed == 0


@pytest.mark.parametrize("name", OWN)
def test_docstrings_are_numpydoc_with_paper_and_example(name):
    doc = getattr(E, name).__doc__
    for section in ("Parameters\n    ----------", "Attributes\n    ----------", "Examples\n    --------"):
        assert section in doc, (name, section)
    assert "eq." in doc and any(paper in doc for paper in ("000", "001", "003", "004"))
    assert not re.search(r"\{[a-z_]+\}", doc), "unsubstituted template field"
    # written out in the source as it reads, not assembled at import time
    source = ast.parse(inspect.getsource(getattr(E, name)))
    assert ast.get_docstring(source.body[0], clean=False) == doc


def test_support_features_classifier_cache_size_changes_speed_not_answer():
    """The estimator passes cache_size to the generalised SMO: a 2-column cache (too small to be used: the engine
    then updates without X X' columns) gives the same model as 200 MB (which holds every column)."""
    rng = np.random.default_rng(3)
    Xs = rng.standard_normal((300, 20))
    ys = np.where(Xs[:, 0] + 0.5 * Xs[:, 1] + 0.3 * rng.standard_normal(300) > 0, 1, -1)
    big = E.SupportFeaturesClassifier(C=1.0, mu=0.3, tol=1e-8).fit(Xs, ys)
    tiny = E.SupportFeaturesClassifier(C=1.0, mu=0.3, tol=1e-8, cache_size=1e-4).fit(Xs, ys)
    assert big.status_ == "optimal" and tiny.status_ == "optimal"
    assert big.result_.info["cache"]["slots"] == 300 and tiny.result_.info["cache"] is None
    np.testing.assert_allclose(tiny.coef_, big.coef_, atol=1e-6 * max(1.0, np.abs(big.coef_).max()))
    np.testing.assert_array_equal(tiny.predict(Xs), big.predict(Xs))

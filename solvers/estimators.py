"""scikit-learn estimators on the project's own solvers.

Every estimator passes :func:`sklearn.utils.estimator_checks.check_estimator` (``tests/test_estimators.py``).
``__init__`` stores the arguments only; each estimator's ``_hyperparameter_rules`` table
(:mod:`svmref.solvers._hyperparameters`) is checked at the start of ``fit``: a bad value raises
:class:`HyperparameterError` (a ``ValueError`` and a ``TypeError``, naming the parameter and what was
expected; ``InvalidParameterError``, its earlier name, is the same class). Calling ``predict`` before
``fit`` raises :class:`~sklearn.exceptions.NotFittedError`.

Fitted attributes end in ``_`` and are named after the papers' symbols. For a binary problem (and for
every regressor):

=====================  ==================================================================
attribute              symbol (paper)
=====================  ==================================================================
``alpha_``             alpha, the dual variables of all N training patterns (000 eq. (2), (5);
                       004 eq. (2)-(4) in its convention; c for RLS, 001 eq. (8); lam for the
                       support features machine, 003 eq. (10))
``intercept_``         b (the bias; 0.0 for RLS, which has none, 001 eq. (9))
``dual_coef_``         coefficients of the kernel expansion over the support vectors:
                       alpha_i y_i (classifiers, 000), alpha_i (regression and ISLS, 004),
                       c_i (RLS, 001 eq. (8)), alpha_i - alpha_i^* (L1SVR)
``support_``           indices i of the support vectors (coefficient != 0; ISLS: |alpha_i| > sv_threshold)
``support_vectors_``   the patterns x_i, i in ``support_`` (empty with ``kernel="precomputed"``)
``coef_``              a (support features machine, 003 eq. (8)); ``selected_features_`` = {i : a_i != 0}
``n_iter_``            iterations of the solver (SMO pair steps, ISLS reweightings; 1 for a direct solve)
``status_``            the solver's status (``"optimal"`` only when the certified gap is within its ``gap_tol``,
                       else ``"suboptimal"``, ...; :mod:`svmref.solvers._result`); ``result_`` the result object
``duality_gap_``       the solver's certified relative duality gap at the fitted model (``result_.duality_gap``;
                       ``|objective - optimum| / |optimum| <= duality_gap_ + result_.gap_floor``)
``sigma_``             the kernel width used (``sigma="scale"`` resolved on the training data)
=====================  ==================================================================

Decision function: ``f(x) = sum_{i in support_} dual_coef_i k(x_i, x) + intercept_``. A binary classifier
maps ``classes_[1]`` to +1 and predicts ``classes_[1]`` where ``f(x) > 0``.

**More than two classes** (the documented choice, as :class:`sklearn.svm.SVC`): one-vs-one. One binary
model is trained for every pair ``pairs_[k] = (i, j)`` of class indices, ``i < j``, on the patterns of
those two classes, with ``classes_[j]`` as +1; ``estimators_[k]`` is that fitted binary model (its
``support_`` indexes the pair's training rows, in their original order). The pair values
``f_k(x)`` vote; ``decision_function_shape="ovo"`` returns them as ``(n_samples, n_pairs)``, ``"ovr"``
(default) as ``(n_samples, n_classes)`` votes plus a confidence term in (-1/3, 1/3) (the sum of the
``|f_k|`` won minus lost, squashed as in scikit-learn) so that the arg max is the vote winner with
ties broken by confidence. ``predict`` returns that arg max. With more than two classes the
per-pair values are stacked: ``intercept_`` and ``n_iter_`` are arrays of length ``n_pairs``, ``status_``
an array of statuses, ``duality_gap_`` an array of gaps, ``support_`` the union of the pairs' support vectors
(indices into the full training set); ``alpha_``, ``dual_coef_``, ``coef_`` and ``result_`` are the binary model's and live on
``estimators_[k]``.

``kernel="linear"`` with a free bias (every kernel estimator but the RLS and ISLS ones): the kernel is computed on
the training features centred by their mean ``X_offset_``, the same problem (``y'alpha = 0``) without the
cancellation a common offset causes (a timestamp feature, or features offset by 1e9, made ``x'z`` about 1e18 and
the fit no better than chance); ``intercept_`` is that of the uncentred expansion, as in scikit-learn.

``sigma="scale"`` is scikit-learn's ``gamma="scale"`` (``Var(X)`` over all entries of ``X``), so unlike the kernel
values, which are exact at any feature offset (:mod:`svmref.kernels`), it is not translation-invariant: a feature
with a large offset (a raw timestamp) inflates it until the kernel is nearly 1 everywhere. Centre such data, or pass
``sigma``.

A solver stopped by its iteration limit sets ``status_ = "max_iter_reached"`` and has already warned
:class:`~sklearn.exceptions.ConvergenceWarning`; one whose stopping rule held at a point whose certified gap is
above ``gap_tol`` sets ``status_ = "suboptimal"`` and has warned
:class:`~svmref.solvers._result.SuboptimalWarning` (a ``ConvergenceWarning``), with the ``tol`` that should fix it.

:class:`~svmref.solvers.bayes.BayesianLSSVC` (the Bayesian LS-SVM of 002, hyperparameters by the evidence) is
defined in :mod:`svmref.solvers.bayes` and re-exported here; its attributes are documented there.
"""
from __future__ import annotations

from abc import ABCMeta, abstractmethod
from itertools import combinations

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin, clone
from sklearn.utils import check_random_state
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data

from svmref.kernels import kernel_matrix
from svmref.solvers._hyperparameters import (
    BOOL,
    FINITE,
    INT_GE1,
    INT_GE1_OR_NONE,
    NONNEGATIVE,
    POSITIVE,
    HyperparameterError,
    HyperparameterMixin,
    InvalidParameterError,  # noqa: F401  (the earlier name of HyperparameterError, still importable from here)
    Rule,
    is_int,
    is_real,
    options,
)
from svmref.solvers._result import kernel_expansion, sign_labels
from svmref.solvers.bayes import BayesianLSSVC  # Bayesian LS-SVM (002), re-exported: defined in solvers/bayes.py

__all__ = [
    "HyperparameterError",
    "L1SVC",
    "L2SVC",
    "LSSVC",
    "LeastOneNormSVC",
    "LSSVR",
    "RLSClassifier",
    "ISLSSVC",
    "ISLSSVR",
    "SupportFeaturesClassifier",
    "L1SVR",
    "BayesianLSSVC",
    "FixedSizeLSSVR",
    "FixedSizeLSSVC",
    "LSSVRCV",
    "LSSVCCV",
    "RobustLSSVR",
    "RobustLSSVC",
]

# ------------------------------------------------------------------------------------------------
# hyperparameter rules: name -> Rule(what is expected, in words; a predicate)
# ------------------------------------------------------------------------------------------------
_KERNELS = ("linear", "poly", "rbf", "gaussian", "mlp", "precomputed")

_KERNEL_RULES = {
    "kernel": options(*_KERNELS),
    "sigma": Rule("a finite float > 0 or 'scale'", lambda v: v == "scale" if isinstance(v, str) else POSITIVE.ok(v)),
    "degree": INT_GE1,
    "c": POSITIVE,
    "k": FINITE,
    "theta": FINITE,
}
_SHAPE_RULE = {"decision_function_shape": options("ovr", "ovo")}
# the SMO engine's own options (svmref.solvers.smo), shared by the SMO estimators
_SMO_RULES = {
    "tol": POSITIVE,
    "gap_tol": POSITIVE,
    "wss": options("first", "second"),
    "max_iter": INT_GE1_OR_NONE,
    "shrinking": BOOL,
    "cache_size": POSITIVE,
    "on_nonconvex": options("raise", "clamp"),
}
#: Kernels the SMO engine computes from raw X (:class:`svmref.solvers.smo.RawKernel`); the others go dense.
_RAW_KERNELS = ("linear", "poly", "rbf", "gaussian")


# ------------------------------------------------------------------------------------------------
# bases
# ------------------------------------------------------------------------------------------------
class _Base(HyperparameterMixin, BaseEstimator, metaclass=ABCMeta):
    """What every estimator here shares, and the hooks its subclasses override.

    Hooks: :meth:`_check_fit_X` (checks of the training X), :meth:`_pair_params` (parameters fixed on all the
    data for the one-vs-one pairs), :meth:`_rows` / :meth:`_cols` (a pair's slice of the data),
    :meth:`_binary_decision` (``f(x)``); ``_has_support`` says whether a fitted model has ``support_``.
    """

    #: whether the fitted binary model has ``support_`` (a kernel expansion); the multiclass union needs it
    _has_support = False

    def _check_fit_X(self, X):
        """Hook: checks of the training X beyond ``validate_data`` (the square kernel when precomputed)."""

    def _pair_params(self, X) -> dict:
        """Hook: parameters resolved once on all the training data that every one-vs-one pair model uses."""
        return {}

    def _rows(self, X, rows):
        """The training data restricted to ``rows``."""
        return X[rows]

    def _cols(self, X, rows):
        """Prediction data for a model trained on ``rows``."""
        return X

    @abstractmethod
    def _binary_decision(self, X):
        """Hook: ``f(x)`` of the fitted binary model (or regressor), shape (n_samples,); every estimator defines
        it (the kernel models by :func:`~svmref.solvers._result.kernel_expansion`, the support features
        classifier as ``a'x + b``)."""

    def _reset(self):
        """Forget a previous fit (a refit on other data must not keep stale attributes)."""
        for name in [a for a in vars(self) if (a.endswith("_") and not a.startswith("_"))
                     or a in ("_pair_rows", "_intercept_centred")]:
            delattr(self, name)


class _KernelMixin:
    """The kernel of an estimator: the one place where kernel matrices are built (:meth:`_kernel`).

    The linear kernel of a model with a free bias whose dual keeps ``sum_i coef_i = 0`` (``y'alpha = 0``: 000 eqs.
    (2), (5) and Table 1; the epsilon-SVR's ``sum_i (alpha_i^+ - alpha_i^-) = 0``) is computed on the training
    features centred by their mean ``X_offset_``: on that constraint ``(x_i - m)'(x_j - m)`` and ``x_i'x_j`` give the
    same dual objective, hence the same solution, and ``f(x) = sum_i coef_i (x_i - m)'(x - m) + b_c`` is the same
    function as ``sum_i coef_i x_i'x + b_c - w'm``. In floating point they differ: a common offset of 1e9 makes
    ``x'z`` about 1e18, rounded by hundreds, and the uncentred kernel keeps hardly a digit of the data (the fit
    was 0.5 accurate where the centred one is 0.95). ``intercept_`` is the uncentred model's bias
    ``b_c - sum_i coef_i (x_i - m)'m`` (scikit-learn's meaning); ``decision_function`` uses the centred form.
    """

    _has_support = True
    #: whether the model's dual keeps ``sum_i coef_i = 0`` exactly (a free bias), so that the linear kernel may be
    #: computed on centred features (class docstring); the RLS (no bias) and ISLS (thresholded coefficients) do not
    _centres_linear = True

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.pairwise = self.kernel == "precomputed"
        return tags

    def _check_fit_X(self, X):
        if self.kernel == "precomputed" and X.shape[0] != X.shape[1]:
            raise ValueError(f"X must be a square kernel matrix (n_samples, n_samples) with kernel='precomputed'; "
                             f"got shape {X.shape}")

    def _pair_params(self, X) -> dict:
        """One kernel width for all pairs, resolved on all the data (``sigma_``)."""
        self.sigma_ = self._resolve_sigma(X)
        return {} if self.sigma_ is None else {"sigma": self.sigma_}

    def _resolve_sigma(self, X):
        if self.kernel not in ("rbf", "gaussian"):
            return None  # the other kernels have no width: sigma is not used, nor checked against X
        if self.sigma != "scale":
            return float(self.sigma)
        var = float(X.var())
        scale2 = X.shape[1] * var if var > 0 else 1.0  # 1/gamma of scikit-learn's gamma='scale'
        return float(np.sqrt(scale2 / 2.0 if self.kernel == "gaussian" else scale2))

    def _kernel(self, X, train=True):
        """Kernel matrix for training (``K(X, X)``; fixes ``sigma_``) or prediction (``K(X, support_vectors_)``).

        The one place where the estimators build kernels. With ``kernel="precomputed"`` ``X`` already is the
        kernel (square in training, checked by ``fit``); for prediction it is restricted to the support columns.
        """
        if train:
            self.sigma_ = self._resolve_sigma(X)
            self.X_offset_ = X.mean(axis=0) if self.kernel == "linear" and self._centres_linear else None
            if self.kernel == "precomputed":
                return X
            if self.X_offset_ is not None:
                X = X - self.X_offset_
            if self._raw_x() and self.kernel in _RAW_KERNELS:
                # SMO reads columns of K on demand from raw X, with an LRU cache of cache_size MB (as SVC)
                from svmref.solvers.smo import RawKernel

                return RawKernel(X, self.kernel, sigma=1.0 if self.sigma_ is None else self.sigma_, c=self.c,
                                 d=self.degree, cache_size=self.cache_size)
        elif self.kernel == "precomputed":
            return X[:, self.support_]
        params = {"rbf": {"sigma": self.sigma_}, "gaussian": {"sigma": self.sigma_},
                  "poly": {"c": self.c, "d": self.degree}, "mlp": {"k": self.k, "theta": self.theta},
                  "linear": {}}[self.kernel]
        Z = None if train else self.support_vectors_
        offset = None if train else getattr(self, "X_offset_", None)
        if offset is not None:
            X, Z = X - offset, Z - offset
        return kernel_matrix(X, Z, kernel=self.kernel, **params)

    def _raw_x(self):
        """Whether the solver takes raw X (:class:`~svmref.solvers.smo.RawKernel`) instead of a dense K."""
        return False

    def _store(self, X, coef, b, result, alpha):
        """Fitted attributes of a kernel expansion with coefficients ``coef`` (zeros are not support vectors)."""
        support = np.flatnonzero(coef != 0.0)
        self.alpha_ = np.asarray(alpha, dtype=float)
        self.support_ = support
        self.support_vectors_ = np.empty((0, X.shape[1])) if self.kernel == "precomputed" else X[support]
        self.dual_coef_ = np.asarray(coef[support], dtype=float)
        self._intercept_centred = 0.0 if b is None else float(b)
        offset = getattr(self, "X_offset_", None)
        shift = 0.0 if offset is None else float(self.dual_coef_ @ ((self.support_vectors_ - offset) @ offset))
        self.intercept_ = self._intercept_centred - shift
        self.n_iter_ = int(result.n_iter)
        self.status_ = result.status
        self.duality_gap_ = float(result.duality_gap)
        self.result_ = result

    def _binary_decision(self, X):
        """``f(x) = sum_{i in support_} dual_coef_i k(x_i, x) + intercept_`` (000 eq. (2); 001 eq. (9); 004 eq. (2))."""
        if self.support_.size == 0:
            return np.full(X.shape[0], self._intercept_centred)
        return kernel_expansion(self._kernel(X, train=False), self.dual_coef_, self._intercept_centred)

    def _rows(self, X, rows):
        """The training data restricted to ``rows`` (rows and columns of a precomputed kernel)."""
        return X[np.ix_(rows, rows)] if self.kernel == "precomputed" else X[rows]

    def _cols(self, X, rows):
        """Prediction data for a model trained on ``rows``: their kernel columns when precomputed."""
        return X[:, rows] if self.kernel == "precomputed" else X


class _Classifier(ClassifierMixin, _Base):
    """Binary fit by ``_fit_binary(X, y_pm1)``; one-vs-one over it for more than two classes.

    Every classifier has the hyperparameter ``decision_function_shape``.
    """

    def fit(self, X, y):
        """Fit on ``X`` (n_samples, n_features) and class labels ``y`` (any two or more distinct values).

        Returns
        -------
        self
        """
        self._check_hyperparameters()
        self._reset()
        X, y = validate_data(self, X, y, dtype=np.float64)
        self._check_fit_X(X)
        check_classification_targets(y)
        classes, y_idx = np.unique(y, return_inverse=True)
        if classes.shape[0] < 2:
            raise ValueError(f"{type(self).__name__} needs at least two classes in y; got 1 class ({classes[0]!r})")
        self.classes_ = classes
        if classes.shape[0] == 2:
            self._fit_binary(X, np.where(y_idx == 1, 1.0, -1.0))
        else:
            self._fit_one_vs_one(X, y_idx)
        return self

    def _fit_one_vs_one(self, X, y_idx):
        """One binary model per pair ``(i, j)`` of class indices, ``classes_[j]`` as +1 (module docstring)."""
        shared = self._pair_params(X)
        pairs = np.array(list(combinations(range(self.classes_.shape[0]), 2)))
        self.pairs_ = pairs
        self.estimators_ = []
        self._pair_rows = []
        for i, j in pairs:
            rows = np.flatnonzero((y_idx == i) | (y_idx == j))
            est = clone(self).set_params(**shared)
            est.classes_ = self.classes_[[i, j]]
            Xp = self._rows(X, rows)
            est.n_features_in_ = Xp.shape[1]
            est._fit_binary(Xp, np.where(y_idx[rows] == j, 1.0, -1.0))
            self.estimators_.append(est)
            self._pair_rows.append(rows)
        self.intercept_ = np.array([e.intercept_ for e in self.estimators_])
        self.n_iter_ = np.array([e.n_iter_ for e in self.estimators_])
        self.status_ = np.array([e.status_ for e in self.estimators_])
        self.duality_gap_ = np.array([e.duality_gap_ for e in self.estimators_])
        if self._has_support:
            self.support_ = np.unique(np.concatenate([rows[e.support_] for e, rows in zip(self.estimators_, self._pair_rows)]))

    def _pair_values(self, X):
        return np.column_stack([e._binary_decision(self._cols(X, rows)) for e, rows in zip(self.estimators_, self._pair_rows)])

    def _votes(self, D):
        """One-vs-one pair values -> (n_samples, n_classes) votes plus confidences in (-1/3, 1/3).

        A pair's vote goes to ``classes_[j]`` where ``f_k(x) > 0`` (the tie rule of :func:`sign_labels`).
        """
        n = self.classes_.shape[0]
        votes = np.zeros((D.shape[0], n))
        conf = np.zeros((D.shape[0], n))
        for k, (i, j) in enumerate(self.pairs_):
            won = sign_labels(D[:, k]) > 0.0
            votes[~won, i] += 1
            votes[won, j] += 1
            conf[:, i] -= D[:, k]
            conf[:, j] += D[:, k]
        return votes + conf / (3.0 * (np.abs(conf) + 1.0))

    def decision_function(self, X):
        """Two classes: ``f(x)`` of shape (n_samples,), positive for ``classes_[1]``.

        More than two: the one-vs-one values, shaped by ``decision_function_shape`` (module docstring).
        """
        check_is_fitted(self)
        X = validate_data(self, X, reset=False, dtype=np.float64)
        if self.classes_.shape[0] == 2:
            return self._binary_decision(X)
        D = self._pair_values(X)
        return D if self.decision_function_shape == "ovo" else self._votes(D)

    def predict(self, X):
        """Two classes: ``classes_[1]`` where ``f(x) > 0``, else ``classes_[0]`` (the tie rule of
        :func:`~svmref.solvers._result.sign_labels`); more: the vote winner."""
        check_is_fitted(self)
        X = validate_data(self, X, reset=False, dtype=np.float64)
        if self.classes_.shape[0] == 2:
            return self.classes_[(sign_labels(self._binary_decision(X)) > 0.0).astype(int)]
        return self.classes_[np.argmax(self._votes(self._pair_values(X)), axis=1)]


class _KernelClassifier(_KernelMixin, _Classifier):
    pass


class _Regressor(RegressorMixin, _Base):
    """Fit by ``_fit_target(X, y)`` on (optionally standardised) targets; ``predict`` and ``score``."""

    def _target_standardisation(self, y) -> tuple[float, float] | None:
        """Hook: ``(mean, scale)`` with which ``fit`` standardises ``y`` and stores ``y_mean_``, ``y_scale_``;
        None: the estimator has no such option (fits ``y`` as it is, no ``y_mean_``, ``y_scale_``)."""
        return None

    def fit(self, X, y):
        """Fit on ``X`` (n_samples, n_features) and real targets ``y`` (n_samples,).

        Returns
        -------
        self
        """
        self._check_hyperparameters()
        self._reset()
        X, y = validate_data(self, X, y, dtype=np.float64, y_numeric=True)
        self._check_fit_X(X)
        y = np.asarray(y, dtype=np.float64)
        standardisation = self._target_standardisation(y)
        mean, scale = (0.0, 1.0) if standardisation is None else standardisation
        if standardisation is not None:
            self.y_mean_, self.y_scale_ = mean, scale
        self._fit_target(X, (y - mean) / scale)
        # back to the units of y: f(x) = scale * (sum coef_i k(x_i, x) + b) + mean
        self.alpha_ = scale * self.alpha_
        self.dual_coef_ = scale * self.dual_coef_
        self.intercept_ = scale * self.intercept_ + mean
        if hasattr(self, "_intercept_centred"):
            self._intercept_centred = scale * self._intercept_centred + mean
        return self

    def predict(self, X):
        """``f(x) = sum_{i in support_} dual_coef_i k(x_i, x) + intercept_`` (in the units of y)."""
        check_is_fitted(self)
        X = validate_data(self, X, reset=False, dtype=np.float64)
        return self._binary_decision(X)


class _StandardizedTarget:
    """The ``standardize_y`` option of the LS-SVM regressors (their docstrings say why it is on by default)."""

    def _target_standardisation(self, y) -> tuple[float, float]:
        if not self.standardize_y:
            return 0.0, 1.0
        mean, scale = float(np.mean(y)), float(np.std(y))
        if not scale > 0.0:
            scale = 1.0  # constant targets: centre only
        return mean, scale


# ------------------------------------------------------------------------------------------------
# SMO classifiers (000 Table 1)
# ------------------------------------------------------------------------------------------------
class _SMOMixin:
    """The SMO estimators: raw X for the engine's own kernels, and the engine's options."""

    def _raw_x(self):
        return True

    def _smo_options(self):
        return dict(tol=self.tol, gap_tol=self.gap_tol, wss=self.wss, max_iter=self.max_iter,
                    shrinking=bool(self.shrinking), on_nonconvex=self.on_nonconvex)


class _SMOClassifier(_SMOMixin, _KernelClassifier):
    """The SMO classifiers of 000 Table 1: ``_solver`` names the adapter of :mod:`svmref.solvers.smo` they call."""

    _hyperparameter_rules = {"C": POSITIVE, **_KERNEL_RULES, **_SMO_RULES, **_SHAPE_RULE}
    _solver = ""

    def __init__(self, C=1.0, *, kernel="rbf", sigma="scale", degree=2, c=1.0, k=1.0, theta=0.0,
                 tol=1e-3, gap_tol=1e-2, wss="second", max_iter=None, shrinking=True, cache_size=200.0,
                 on_nonconvex="raise", decision_function_shape="ovr"):
        self.C = C
        self.kernel = kernel
        self.sigma = sigma
        self.degree = degree
        self.c = c
        self.k = k
        self.theta = theta
        self.tol = tol
        self.gap_tol = gap_tol
        self.wss = wss
        self.max_iter = max_iter
        self.shrinking = shrinking
        self.cache_size = cache_size
        self.on_nonconvex = on_nonconvex
        self.decision_function_shape = decision_function_shape

    def _fit_binary(self, X, ys):
        from svmref.solvers import smo

        res = getattr(smo, self._solver)(self._kernel(X), ys, self.C, **self._smo_options())
        self._store(X, res.alpha * ys, res.b, res, res.alpha)


class L1SVC(_SMOClassifier):
    """L1-SVM (hinge loss) classifier, trained by the SMO of :func:`svmref.solvers.smo.l1_svm`.

    Dual (003 eq. (3); 000 Table 1): ``min 1/2 sum_ij alpha_i alpha_j y_i y_j K_ij - sum_i alpha_i``
    s.t. ``sum_i alpha_i y_i = 0``, ``0 <= alpha_i <= C``. The same problem as :class:`sklearn.svm.SVC`
    (whose ``gamma`` is ``1/sigma^2`` here).

    Parameters
    ----------
    C : float > 0, default=1.0
        Penalty of the slacks (the box bound, or the diagonal shift 1/C; 000 Table 1).
    kernel : {'rbf', 'gaussian', 'poly', 'linear', 'mlp', 'precomputed'}, default='rbf'
        ``rbf`` exp(-||x-z||^2/sigma^2) (000 §4, 002, 004 §4); ``gaussian`` exp(-||x-z||^2/(2 sigma^2))
        (001 §3); ``poly`` (1 + x'z/c)^degree and ``mlp`` tanh(k x'z + theta) (002; not positive
        semidefinite for every k, theta); ``linear`` x'z; ``precomputed``: ``X`` is the Gram matrix,
        ``(n_samples, n_samples)`` in ``fit`` and ``(n_test, n_samples)`` (kernel between the test and
        the training patterns) in ``predict``, as in :class:`sklearn.svm.SVC`.
    sigma : float > 0 or 'scale', default='scale'
        Kernel width of ``rbf`` and ``gaussian``. ``'scale'`` takes the width of scikit-learn's
        ``gamma='scale'``: ``exp(-||x-z||^2 / (n_features Var(X)))`` (``Var(X)`` over all entries of
        the training ``X``; 1 if it is 0), i.e. ``sigma^2 = n_features Var(X)`` for ``rbf`` and half
        that for ``gaussian``. The value used is ``sigma_``.
    degree : int >= 1, default=2
        Degree ``d`` of ``poly``.
    c : float > 0, default=1.0
        Scale ``c`` of ``poly``.
    k, theta : float, default=1.0, 0.0
        Slope and offset of ``mlp``.
    tol : float > 0, default=1e-3
        SMO stopping tolerance on the KKT gap (000 eqs. (10)-(11); 1e-3 is the paper's, 000 §4).
    gap_tol : float > 0, default=1e-2
        ``status_="optimal"`` only when the certified relative duality gap (``duality_gap_``) is within it; above
        it the fit is ``"suboptimal"`` with a warning (:func:`svmref.solvers.smo.smo_solve`; the default is
        measured in ``docs/smo.md``, "Labels").
    wss : {'second', 'first'}, default='second'
        Working-set selection: maximal violating pair (000 eq. (8)) or second order (Fan, Chen & Lin 2005).
    max_iter : int >= 1 or None, default=None
        SMO pair steps; None: the solver's default. Reaching it sets ``status_="max_iter_reached"`` and
        warns ``ConvergenceWarning``.
    shrinking : bool, default=True
        LIBSVM's shrinking heuristic (the same solution to ``tol``; only the time differs).
    cache_size : float > 0, default=200.0
        Megabytes of kernel columns cached (as ``SVC(cache_size=...)``): with the ``linear``, ``poly``,
        ``rbf`` and ``gaussian`` kernels SMO computes the columns of K it needs from X
        (:class:`~svmref.solvers.smo.RawKernel`) and never forms the full ``n_samples^2`` matrix; ``mlp``
        and ``precomputed`` use the dense K.
    on_nonconvex : {'raise', 'clamp'}, default='raise'
        A kernel matrix that is not positive semidefinite (``mlp``; a precomputed indefinite K) makes the
        dual non-convex: ``'raise'`` raises :class:`~svmref._validation.NotConvexError`, ``'clamp'`` goes on
        as LIBSVM does (``status_="not_convex"``, with a warning).
    decision_function_shape : {'ovr', 'ovo'}, default='ovr'
        With more than two classes (one-vs-one, module docstring): ``'ovo'`` returns the pair values
        ``(n_samples, n_pairs)``, ``'ovr'`` votes with confidences ``(n_samples, n_classes)``.
        Ignored for two classes, where ``decision_function`` returns ``(n_samples,)``.

    Attributes
    ----------
    alpha_ : ndarray of shape (n_samples,)
        The dual variables alpha of the L1-SVM dual (003 eq. (3)), in [0, C].
    dual_coef_ : ndarray of shape (n_SV,)
        ``alpha_i y_i`` over the support vectors (``y_i = +1`` for ``classes_[1]``).
    support_ : ndarray of shape (n_SV,)
        Indices of the patterns with ``alpha_i != 0``.
    support_vectors_ : ndarray of shape (n_SV, n_features)
        Those patterns (empty with ``kernel="precomputed"``).
    intercept_ : float
        The bias b (LIBSVM's -rho: the mean over the free variables, the midpoint rule when none is free).
    n_iter_ : int
        SMO pair steps.
    status_ : str
        The solver's status (``"optimal"``, ``"suboptimal"``, ``"max_iter_reached"``, ``"numerical_issue"`` or
        ``"not_convex"``); ``result_`` is its result object (:class:`~svmref.solvers.smo.SMOResult`).
    duality_gap_ : float
        The certified relative duality gap of the fitted model (``result_.duality_gap``).
    sigma_ : float or None
        The kernel width used (None for the kernels without one: linear, poly, mlp, precomputed).
    X_offset_ : ndarray of shape (n_features,) or None
        The training features' mean, by which they are centred for ``kernel="linear"`` (the estimators whose
        model keeps ``sum_i coef_i = 0``: all but the RLS and ISLS ones; module docstring); None otherwise.
    classes_ : ndarray of shape (n_classes,)
        The class labels; with two classes ``classes_[1]`` is +1.
    n_features_in_ : int
        Number of features seen in ``fit`` (``n_samples`` with ``kernel="precomputed"``).
    pairs_, estimators_ : ndarray of shape (n_pairs, 2), list of estimators
        More than two classes only: the class-index pairs ``(i, j)`` and the binary model of each
        (``classes_[j]`` is +1). Then ``intercept_``, ``n_iter_``, ``status_`` and ``duality_gap_`` are arrays over the
        pairs, ``support_`` is the union of the pairs' support vectors, and the other binary attributes
        live on ``estimators_[k]``.

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from svmref.solvers.estimators import L1SVC
    >>> X, y = load_iris(return_X_y=True)
    >>> clf = L1SVC(C=1.0).fit(X, y)
    >>> clf.predict(X[[0, 50, 100]])
    array([0, 1, 2])
    >>> clf.decision_function(X[:1]).shape  # one-vs-one votes, shaped one-vs-rest
    (1, 3)
    """

    _solver = "l1_svm"


class L2SVC(_SMOClassifier):
    """L2-SVM (squared hinge loss) classifier, trained by the SMO of :func:`svmref.solvers.smo.l2_svm`.

    Dual (000 §1 and Table 1): the L1-SVM dual with ``K + I/C`` in place of ``K`` and the box
    ``0 <= alpha_i < inf``.

    Parameters
    ----------
    C : float > 0, default=1.0
        Penalty of the slacks (the box bound, or the diagonal shift 1/C; 000 Table 1).
    kernel : {'rbf', 'gaussian', 'poly', 'linear', 'mlp', 'precomputed'}, default='rbf'
        ``rbf`` exp(-||x-z||^2/sigma^2) (000 §4, 002, 004 §4); ``gaussian`` exp(-||x-z||^2/(2 sigma^2))
        (001 §3); ``poly`` (1 + x'z/c)^degree and ``mlp`` tanh(k x'z + theta) (002; not positive
        semidefinite for every k, theta); ``linear`` x'z; ``precomputed``: ``X`` is the Gram matrix,
        ``(n_samples, n_samples)`` in ``fit`` and ``(n_test, n_samples)`` (kernel between the test and
        the training patterns) in ``predict``, as in :class:`sklearn.svm.SVC`.
    sigma : float > 0 or 'scale', default='scale'
        Kernel width of ``rbf`` and ``gaussian``. ``'scale'`` takes the width of scikit-learn's
        ``gamma='scale'``: ``exp(-||x-z||^2 / (n_features Var(X)))`` (``Var(X)`` over all entries of
        the training ``X``; 1 if it is 0), i.e. ``sigma^2 = n_features Var(X)`` for ``rbf`` and half
        that for ``gaussian``. The value used is ``sigma_``.
    degree : int >= 1, default=2
        Degree ``d`` of ``poly``.
    c : float > 0, default=1.0
        Scale ``c`` of ``poly``.
    k, theta : float, default=1.0, 0.0
        Slope and offset of ``mlp``.
    tol : float > 0, default=1e-3
        SMO stopping tolerance on the KKT gap (000 eqs. (10)-(11); 1e-3 is the paper's, 000 §4).
    gap_tol : float > 0, default=1e-2
        ``status_="optimal"`` only when the certified relative duality gap (``duality_gap_``) is within it; above
        it the fit is ``"suboptimal"`` with a warning (:func:`svmref.solvers.smo.smo_solve`; the default is
        measured in ``docs/smo.md``, "Labels").
    wss : {'second', 'first'}, default='second'
        Working-set selection: maximal violating pair (000 eq. (8)) or second order (Fan, Chen & Lin 2005).
    max_iter : int >= 1 or None, default=None
        SMO pair steps; None: the solver's default. Reaching it sets ``status_="max_iter_reached"`` and
        warns ``ConvergenceWarning``.
    shrinking : bool, default=True
        LIBSVM's shrinking heuristic (the same solution to ``tol``; only the time differs).
    cache_size : float > 0, default=200.0
        Megabytes of kernel columns cached (as ``SVC(cache_size=...)``): with the ``linear``, ``poly``,
        ``rbf`` and ``gaussian`` kernels SMO computes the columns of K it needs from X
        (:class:`~svmref.solvers.smo.RawKernel`) and never forms the full ``n_samples^2`` matrix; ``mlp``
        and ``precomputed`` use the dense K.
    on_nonconvex : {'raise', 'clamp'}, default='raise'
        A kernel matrix that is not positive semidefinite (``mlp``; a precomputed indefinite K) makes the
        dual non-convex: ``'raise'`` raises :class:`~svmref._validation.NotConvexError`, ``'clamp'`` goes on
        as LIBSVM does (``status_="not_convex"``, with a warning).
    decision_function_shape : {'ovr', 'ovo'}, default='ovr'
        With more than two classes (one-vs-one, module docstring): ``'ovo'`` returns the pair values
        ``(n_samples, n_pairs)``, ``'ovr'`` votes with confidences ``(n_samples, n_classes)``.
        Ignored for two classes, where ``decision_function`` returns ``(n_samples,)``.

    Attributes
    ----------
    alpha_ : ndarray of shape (n_samples,)
        The dual variables alpha of the L2-SVM dual (000 §1, Table 1), in [0, inf) with kernel K + I/C.
    dual_coef_ : ndarray of shape (n_SV,)
        ``alpha_i y_i`` over the support vectors (``y_i = +1`` for ``classes_[1]``).
    support_ : ndarray of shape (n_SV,)
        Indices of the patterns with ``alpha_i != 0``.
    support_vectors_ : ndarray of shape (n_SV, n_features)
        Those patterns (empty with ``kernel="precomputed"``).
    intercept_ : float
        The bias b (LIBSVM's -rho: the mean over the free variables, the midpoint rule when none is free).
    n_iter_ : int
        SMO pair steps.
    status_ : str
        The solver's status (``"optimal"``, ``"suboptimal"``, ``"max_iter_reached"``, ``"numerical_issue"`` or
        ``"not_convex"``); ``result_`` is its result object (:class:`~svmref.solvers.smo.SMOResult`).
    duality_gap_ : float
        The certified relative duality gap of the fitted model (``result_.duality_gap``).
    sigma_ : float or None
        The kernel width used (None for the kernels without one: linear, poly, mlp, precomputed).
    X_offset_ : ndarray of shape (n_features,) or None
        The training features' mean, by which they are centred for ``kernel="linear"`` (the estimators whose
        model keeps ``sum_i coef_i = 0``: all but the RLS and ISLS ones; module docstring); None otherwise.
    classes_ : ndarray of shape (n_classes,)
        The class labels; with two classes ``classes_[1]`` is +1.
    n_features_in_ : int
        Number of features seen in ``fit`` (``n_samples`` with ``kernel="precomputed"``).
    pairs_, estimators_ : ndarray of shape (n_pairs, 2), list of estimators
        More than two classes only: the class-index pairs ``(i, j)`` and the binary model of each
        (``classes_[j]`` is +1). Then ``intercept_``, ``n_iter_``, ``status_`` and ``duality_gap_`` are arrays over the
        pairs, ``support_`` is the union of the pairs' support vectors, and the other binary attributes
        live on ``estimators_[k]``.

    Examples
    --------
    >>> import numpy as np
    >>> from svmref.solvers.estimators import L2SVC
    >>> X = np.array([[0.0, 0.0], [0.0, 1.0], [3.0, 0.0], [3.0, 1.0]])
    >>> clf = L2SVC(C=10.0, kernel="linear").fit(X, ["a", "a", "b", "b"])
    >>> clf.predict([[0.5, 0.5], [2.5, 0.5]]).tolist()
    ['a', 'b']
    >>> bool(np.all(clf.alpha_ > 0))  # every pattern has a slack: all are support vectors
    True
    """

    _solver = "l2_svm"


class LeastOneNormSVC(_SMOClassifier):
    """Least 1-Norm SVM classifier (000 eqs. (3)-(6)), trained by :func:`svmref.solvers.smo.least_1norm_svm`.

    Primal (000 eq. (3)): ``min 1/2 ||W||^2 + C sum_i |xi_i|`` s.t. ``y_i (W.Phi(x_i) + b) = 1 - xi_i``;
    dual (000 eq. (5)): the L1-SVM dual with the box ``-C <= alpha_i <= C``. A pattern beyond its margin
    has ``alpha_i = -C`` (000 eq. (6)), which makes the model robust to label-flipped outliers (000 Fig. 1).

    Parameters
    ----------
    C : float > 0, default=1.0
        Penalty of the slacks (the box bound, or the diagonal shift 1/C; 000 Table 1).
    kernel : {'rbf', 'gaussian', 'poly', 'linear', 'mlp', 'precomputed'}, default='rbf'
        ``rbf`` exp(-||x-z||^2/sigma^2) (000 §4, 002, 004 §4); ``gaussian`` exp(-||x-z||^2/(2 sigma^2))
        (001 §3); ``poly`` (1 + x'z/c)^degree and ``mlp`` tanh(k x'z + theta) (002; not positive
        semidefinite for every k, theta); ``linear`` x'z; ``precomputed``: ``X`` is the Gram matrix,
        ``(n_samples, n_samples)`` in ``fit`` and ``(n_test, n_samples)`` (kernel between the test and
        the training patterns) in ``predict``, as in :class:`sklearn.svm.SVC`.
    sigma : float > 0 or 'scale', default='scale'
        Kernel width of ``rbf`` and ``gaussian``. ``'scale'`` takes the width of scikit-learn's
        ``gamma='scale'``: ``exp(-||x-z||^2 / (n_features Var(X)))`` (``Var(X)`` over all entries of
        the training ``X``; 1 if it is 0), i.e. ``sigma^2 = n_features Var(X)`` for ``rbf`` and half
        that for ``gaussian``. The value used is ``sigma_``.
    degree : int >= 1, default=2
        Degree ``d`` of ``poly``.
    c : float > 0, default=1.0
        Scale ``c`` of ``poly``.
    k, theta : float, default=1.0, 0.0
        Slope and offset of ``mlp``.
    tol : float > 0, default=1e-3
        SMO stopping tolerance on the KKT gap (000 eqs. (10)-(11); 1e-3 is the paper's, 000 §4).
    gap_tol : float > 0, default=1e-2
        ``status_="optimal"`` only when the certified relative duality gap (``duality_gap_``) is within it; above
        it the fit is ``"suboptimal"`` with a warning (:func:`svmref.solvers.smo.smo_solve`; the default is
        measured in ``docs/smo.md``, "Labels").
    wss : {'second', 'first'}, default='second'
        Working-set selection: maximal violating pair (000 eq. (8)) or second order (Fan, Chen & Lin 2005).
    max_iter : int >= 1 or None, default=None
        SMO pair steps; None: the solver's default. Reaching it sets ``status_="max_iter_reached"`` and
        warns ``ConvergenceWarning``.
    shrinking : bool, default=True
        LIBSVM's shrinking heuristic (the same solution to ``tol``; only the time differs).
    cache_size : float > 0, default=200.0
        Megabytes of kernel columns cached (as ``SVC(cache_size=...)``): with the ``linear``, ``poly``,
        ``rbf`` and ``gaussian`` kernels SMO computes the columns of K it needs from X
        (:class:`~svmref.solvers.smo.RawKernel`) and never forms the full ``n_samples^2`` matrix; ``mlp``
        and ``precomputed`` use the dense K.
    on_nonconvex : {'raise', 'clamp'}, default='raise'
        A kernel matrix that is not positive semidefinite (``mlp``; a precomputed indefinite K) makes the
        dual non-convex: ``'raise'`` raises :class:`~svmref._validation.NotConvexError`, ``'clamp'`` goes on
        as LIBSVM does (``status_="not_convex"``, with a warning).
    decision_function_shape : {'ovr', 'ovo'}, default='ovr'
        With more than two classes (one-vs-one, module docstring): ``'ovo'`` returns the pair values
        ``(n_samples, n_pairs)``, ``'ovr'`` votes with confidences ``(n_samples, n_classes)``.
        Ignored for two classes, where ``decision_function`` returns ``(n_samples,)``.

    Attributes
    ----------
    alpha_ : ndarray of shape (n_samples,)
        The dual variables alpha of the Least 1-Norm SVM dual (000 eq. (5)), in [-C, C].
    dual_coef_ : ndarray of shape (n_SV,)
        ``alpha_i y_i`` over the support vectors (``y_i = +1`` for ``classes_[1]``).
    support_ : ndarray of shape (n_SV,)
        Indices of the patterns with ``alpha_i != 0``.
    support_vectors_ : ndarray of shape (n_SV, n_features)
        Those patterns (empty with ``kernel="precomputed"``).
    intercept_ : float
        The bias b (LIBSVM's -rho: the mean over the free variables, the midpoint rule when none is free).
    n_iter_ : int
        SMO pair steps.
    status_ : str
        The solver's status (``"optimal"``, ``"suboptimal"``, ``"max_iter_reached"``, ``"numerical_issue"`` or
        ``"not_convex"``); ``result_`` is its result object (:class:`~svmref.solvers.smo.SMOResult`).
    duality_gap_ : float
        The certified relative duality gap of the fitted model (``result_.duality_gap``).
    sigma_ : float or None
        The kernel width used (None for the kernels without one: linear, poly, mlp, precomputed).
    X_offset_ : ndarray of shape (n_features,) or None
        The training features' mean, by which they are centred for ``kernel="linear"`` (the estimators whose
        model keeps ``sum_i coef_i = 0``: all but the RLS and ISLS ones; module docstring); None otherwise.
    classes_ : ndarray of shape (n_classes,)
        The class labels; with two classes ``classes_[1]`` is +1.
    n_features_in_ : int
        Number of features seen in ``fit`` (``n_samples`` with ``kernel="precomputed"``).
    pairs_, estimators_ : ndarray of shape (n_pairs, 2), list of estimators
        More than two classes only: the class-index pairs ``(i, j)`` and the binary model of each
        (``classes_[j]`` is +1). Then ``intercept_``, ``n_iter_``, ``status_`` and ``duality_gap_`` are arrays over the
        pairs, ``support_`` is the union of the pairs' support vectors, and the other binary attributes
        live on ``estimators_[k]``.

    Examples
    --------
    >>> import numpy as np
    >>> from svmref.solvers.estimators import LeastOneNormSVC
    >>> rng = np.random.default_rng(0)
    >>> X = np.vstack([rng.normal(0, 1, (20, 2)), rng.normal((5, 2), 1, (20, 2))])
    >>> y = np.repeat([-1, 1], 20)
    >>> clf = LeastOneNormSVC(C=1.0, kernel="linear").fit(X, y)
    >>> float(clf.score(X, y))
    1.0
    >>> bool(np.all(np.abs(clf.alpha_) <= 1.0))  # the box [-C, C]
    True
    """

    _solver = "least_1norm_svm"


class LSSVC(_SMOClassifier):
    """LS-SVM classifier (000 eqs. (1)-(2), (7)).

    Primal (000 eq. (1)): ``min 1/2 ||W||^2 + C/2 sum_i xi_i^2`` s.t. ``y_i (W.Phi(x_i) + b) = 1 - xi_i``;
    dual (000 eq. (2)): the L1-SVM dual with ``K + I/C`` and no box. Every pattern is a support vector.

    Parameters
    ----------
    C : float > 0, default=1.0
        Penalty of the slacks (the box bound, or the diagonal shift 1/C; 000 Table 1).
    kernel : {'rbf', 'gaussian', 'poly', 'linear', 'mlp', 'precomputed'}, default='rbf'
        ``rbf`` exp(-||x-z||^2/sigma^2) (000 §4, 002, 004 §4); ``gaussian`` exp(-||x-z||^2/(2 sigma^2))
        (001 §3); ``poly`` (1 + x'z/c)^degree and ``mlp`` tanh(k x'z + theta) (002; not positive
        semidefinite for every k, theta); ``linear`` x'z; ``precomputed``: ``X`` is the Gram matrix,
        ``(n_samples, n_samples)`` in ``fit`` and ``(n_test, n_samples)`` (kernel between the test and
        the training patterns) in ``predict``, as in :class:`sklearn.svm.SVC`.
    sigma : float > 0 or 'scale', default='scale'
        Kernel width of ``rbf`` and ``gaussian``. ``'scale'`` takes the width of scikit-learn's
        ``gamma='scale'``: ``exp(-||x-z||^2 / (n_features Var(X)))`` (``Var(X)`` over all entries of
        the training ``X``; 1 if it is 0), i.e. ``sigma^2 = n_features Var(X)`` for ``rbf`` and half
        that for ``gaussian``. The value used is ``sigma_``.
    degree : int >= 1, default=2
        Degree ``d`` of ``poly``.
    c : float > 0, default=1.0
        Scale ``c`` of ``poly``.
    k, theta : float, default=1.0, 0.0
        Slope and offset of ``mlp``.
    solver : {'cholesky', 'smo'}, default='cholesky'
        ``'cholesky'`` solves the KKT system (000 eq. (7); :func:`svmref.solvers.linear.ls_svm`), ``'smo'``
        runs SMO on the dual (000 eq. (2), stopping rule (10); :func:`svmref.solvers.smo.ls_svm`). The SMO
        options below (``tol`` to ``on_nonconvex``) apply to ``'smo'`` only.
    tol : float > 0, default=1e-3
        SMO stopping tolerance on the KKT gap (000 eqs. (10)-(11); 1e-3 is the paper's, 000 §4).
    gap_tol : float > 0, default=1e-2
        ``status_="optimal"`` only when the certified relative duality gap (``duality_gap_``) is within it; above
        it the fit is ``"suboptimal"`` with a warning (:func:`svmref.solvers.smo.smo_solve`; the default is
        measured in ``docs/smo.md``, "Labels").
    wss : {'second', 'first'}, default='second'
        Working-set selection: maximal violating pair (000 eq. (8)) or second order (Fan, Chen & Lin 2005).
    max_iter : int >= 1 or None, default=None
        SMO pair steps; None: the solver's default. Reaching it sets ``status_="max_iter_reached"`` and
        warns ``ConvergenceWarning``.
    shrinking : bool, default=True
        LIBSVM's shrinking heuristic (the same solution to ``tol``; only the time differs).
    cache_size : float > 0, default=200.0
        Megabytes of kernel columns cached (as ``SVC(cache_size=...)``): with the ``linear``, ``poly``,
        ``rbf`` and ``gaussian`` kernels SMO computes the columns of K it needs from X
        (:class:`~svmref.solvers.smo.RawKernel`) and never forms the full ``n_samples^2`` matrix; ``mlp``
        and ``precomputed`` use the dense K.
    on_nonconvex : {'raise', 'clamp'}, default='raise'
        A kernel matrix that is not positive semidefinite (``mlp``; a precomputed indefinite K) makes the
        dual non-convex: ``'raise'`` raises :class:`~svmref._validation.NotConvexError`, ``'clamp'`` goes on
        as LIBSVM does (``status_="not_convex"``, with a warning).
    decision_function_shape : {'ovr', 'ovo'}, default='ovr'
        With more than two classes (one-vs-one, module docstring): ``'ovo'`` returns the pair values
        ``(n_samples, n_pairs)``, ``'ovr'`` votes with confidences ``(n_samples, n_classes)``.
        Ignored for two classes, where ``decision_function`` returns ``(n_samples,)``.

    Attributes
    ----------
    alpha_ : ndarray of shape (n_samples,)
        The dual variables alpha of the LS-SVM dual (000 eq. (2)), free.
    dual_coef_ : ndarray of shape (n_SV,)
        ``alpha_i y_i`` over the support vectors (``y_i = +1`` for ``classes_[1]``).
    support_ : ndarray of shape (n_SV,)
        Indices of the patterns with ``alpha_i != 0``.
    support_vectors_ : ndarray of shape (n_SV, n_features)
        Those patterns (empty with ``kernel="precomputed"``).
    intercept_ : float
        The bias b (from the KKT system (000 eq. (7)), or SMO's as in L1SVC).
    n_iter_ : int
        SMO pair steps (``solver='smo'``), 1 for the direct solve.
    status_ : str
        The solver's status (``"optimal"``, ``"max_iter_reached"`` or ``"numerical_issue"``); ``result_`` is
        its result object (:class:`~svmref.solvers.smo.SMOResult`, or
        :class:`~svmref.solvers.linear.LinearResult` for the direct solve).
    sigma_ : float or None
        The kernel width used (None for the kernels without one: linear, poly, mlp, precomputed).
    X_offset_ : ndarray of shape (n_features,) or None
        The training features' mean, by which they are centred for ``kernel="linear"`` (the estimators whose
        model keeps ``sum_i coef_i = 0``: all but the RLS and ISLS ones; module docstring); None otherwise.
    classes_ : ndarray of shape (n_classes,)
        The class labels; with two classes ``classes_[1]`` is +1.
    n_features_in_ : int
        Number of features seen in ``fit`` (``n_samples`` with ``kernel="precomputed"``).
    pairs_, estimators_ : ndarray of shape (n_pairs, 2), list of estimators
        More than two classes only: the class-index pairs ``(i, j)`` and the binary model of each
        (``classes_[j]`` is +1). Then ``intercept_``, ``n_iter_``, ``status_`` and ``duality_gap_`` are arrays over the
        pairs, ``support_`` is the union of the pairs' support vectors, and the other binary attributes
        live on ``estimators_[k]``.

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from svmref.solvers.estimators import LSSVC
    >>> X, y = load_iris(return_X_y=True)
    >>> X, y = X[y > 0], y[y > 0]                       # versicolor vs virginica
    >>> direct = LSSVC(C=1.0).fit(X, y)
    >>> by_smo = LSSVC(C=1.0, solver="smo", tol=1e-8).fit(X, y)
    >>> bool(abs(direct.decision_function(X) - by_smo.decision_function(X)).max() < 1e-6)
    True
    >>> direct.support_.size == X.shape[0]
    True
    """

    _hyperparameter_rules = {**_SMOClassifier._hyperparameter_rules, "solver": options("cholesky", "smo")}

    def __init__(self, C=1.0, *, kernel="rbf", sigma="scale", degree=2, c=1.0, k=1.0, theta=0.0,
                 solver="cholesky", tol=1e-3, gap_tol=1e-2, wss="second", max_iter=None, shrinking=True,
                 cache_size=200.0, on_nonconvex="raise", decision_function_shape="ovr"):
        super().__init__(C, kernel=kernel, sigma=sigma, degree=degree, c=c, k=k, theta=theta, tol=tol, gap_tol=gap_tol, wss=wss,
                         max_iter=max_iter, shrinking=shrinking, cache_size=cache_size, on_nonconvex=on_nonconvex,
                         decision_function_shape=decision_function_shape)
        self.solver = solver

    def _raw_x(self):
        return self.solver == "smo"

    def _fit_binary(self, X, ys):
        K = self._kernel(X)
        if self.solver == "smo":
            from svmref.solvers import smo

            res = smo.ls_svm(K, ys, self.C, **self._smo_options())
        else:
            from svmref.solvers import linear

            res = linear.ls_svm(K, ys, self.C, gap_tol=self.gap_tol)
        self._store(X, res.alpha * ys, res.b, res, res.alpha)


# ------------------------------------------------------------------------------------------------
# RLS (001)
# ------------------------------------------------------------------------------------------------
class RLSClassifier(_KernelClassifier):
    """Regularised least squares classifier (001 eqs. (7)-(9)), by :func:`svmref.solvers.linear.rls`.

    Functional (001 eq. (7)): ``min_f (1/m) sum_i (y_i - f(x_i))^2 + gamma ||f||_K^2`` on labels ±1;
    solution (001 eqs. (8)-(9)): ``(m gamma I + K) c = y``, ``f(x) = sum_i c_i K(x, x_i)``, no bias.

    Parameters
    ----------
    gamma : float > 0, default=1e-3
        The regularisation gamma of 001 eq. (7) (not a kernel width).
    kernel : {'rbf', 'gaussian', 'poly', 'linear', 'mlp', 'precomputed'}, default='gaussian'
        ``rbf`` exp(-||x-z||^2/sigma^2) (000 §4, 002, 004 §4); ``gaussian`` exp(-||x-z||^2/(2 sigma^2))
        (001 §3); ``poly`` (1 + x'z/c)^degree and ``mlp`` tanh(k x'z + theta) (002; not positive
        semidefinite for every k, theta); ``linear`` x'z; ``precomputed``: ``X`` is the Gram matrix,
        ``(n_samples, n_samples)`` in ``fit`` and ``(n_test, n_samples)`` (kernel between the test and
        the training patterns) in ``predict``, as in :class:`sklearn.svm.SVC`.
    sigma : float > 0 or 'scale', default='scale'
        Kernel width of ``rbf`` and ``gaussian``. ``'scale'`` takes the width of scikit-learn's
        ``gamma='scale'``: ``exp(-||x-z||^2 / (n_features Var(X)))`` (``Var(X)`` over all entries of
        the training ``X``; 1 if it is 0), i.e. ``sigma^2 = n_features Var(X)`` for ``rbf`` and half
        that for ``gaussian``. The value used is ``sigma_``.
    degree : int >= 1, default=2
        Degree ``d`` of ``poly``.
    c : float > 0, default=1.0
        Scale ``c`` of ``poly``.
    k, theta : float, default=1.0, 0.0
        Slope and offset of ``mlp``.
    decision_function_shape : {'ovr', 'ovo'}, default='ovr'
        With more than two classes (one-vs-one, module docstring): ``'ovo'`` returns the pair values
        ``(n_samples, n_pairs)``, ``'ovr'`` votes with confidences ``(n_samples, n_classes)``.
        Ignored for two classes, where ``decision_function`` returns ``(n_samples,)``.

    Attributes
    ----------
    alpha_, dual_coef_ : ndarray of shape (n_samples,), (n_SV,)
        The coefficients c of 001 eq. (8) (``dual_coef_`` over ``c_i != 0``: in practice all).
    support_, support_vectors_ : ndarray
        Indices and patterns with ``c_i != 0``.
    intercept_ : float
        0.0 (001 eq. (9) has no bias).
    n_iter_ : int
        1 (a direct solve); ``status_``, ``duality_gap_`` and ``result_`` the solver's.
    sigma_ : float or None
        The kernel width used (None for the kernels without one: linear, poly, mlp, precomputed).
    X_offset_ : ndarray of shape (n_features,) or None
        The training features' mean, by which they are centred for ``kernel="linear"`` (the estimators whose
        model keeps ``sum_i coef_i = 0``: all but the RLS and ISLS ones; module docstring); None otherwise.
    classes_ : ndarray of shape (n_classes,)
        The class labels; with two classes ``classes_[1]`` is +1.
    n_features_in_ : int
        Number of features seen in ``fit`` (``n_samples`` with ``kernel="precomputed"``).
    pairs_, estimators_ : ndarray of shape (n_pairs, 2), list of estimators
        More than two classes only: the class-index pairs ``(i, j)`` and the binary model of each
        (``classes_[j]`` is +1). Then ``intercept_``, ``n_iter_``, ``status_`` and ``duality_gap_`` are arrays over the
        pairs, ``support_`` is the union of the pairs' support vectors, and the other binary attributes
        live on ``estimators_[k]``.

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from svmref.solvers.estimators import RLSClassifier
    >>> X, y = load_iris(return_X_y=True)
    >>> clf = RLSClassifier(gamma=1e-3).fit(X, y)
    >>> bool(clf.score(X, y) > 0.95)
    True
    >>> clf.intercept_                                   # one bias per class pair, all 0
    array([0., 0., 0.])
    """

    _hyperparameter_rules = {"gamma": POSITIVE, **_KERNEL_RULES, **_SHAPE_RULE}

    def __init__(self, gamma=1e-3, *, kernel="gaussian", sigma="scale", degree=2, c=1.0, k=1.0, theta=0.0,
                 decision_function_shape="ovr"):
        self.gamma = gamma
        self.kernel = kernel
        self.sigma = sigma
        self.degree = degree
        self.c = c
        self.k = k
        self.theta = theta
        self.decision_function_shape = decision_function_shape

    _centres_linear = False  # no bias: the offset is part of the model (001 eq. (9))

    def _fit_binary(self, X, ys):
        from svmref.solvers import linear

        res = linear.rls(self._kernel(X), ys, self.gamma)
        self._store(X, res.c, None, res, res.c)


# ------------------------------------------------------------------------------------------------
# ISLS-SVM (004)
# ------------------------------------------------------------------------------------------------
_ISLS_RULES = {
    "C": POSITIVE,
    **_KERNEL_RULES,
    "tol": POSITIVE,
    "max_iter": INT_GE1,
    "sv_threshold": POSITIVE,
}


class _ISLS:
    _centres_linear = False  # coefficients below sv_threshold are dropped: sum_i coef_i = 0 need not hold
    """The ISLS-SVM estimators' fit by :func:`svmref.solvers.isls.isls_svm` (004, Algorithm 1)."""

    def _isls(self, X, y, task):
        from svmref.solvers import isls

        res = isls.isls_svm(self._kernel(X), y, self.C, task=task, tol=self.tol, max_iter=self.max_iter,
                            sv_threshold=self.sv_threshold)
        coef = np.zeros_like(res.alpha)
        coef[res.support_] = res.alpha[res.support_]  # the final model uses the support vectors only (004 §4)
        self._store(X, coef, res.b, res, res.alpha)


class ISLSSVC(_ISLS, _KernelClassifier):
    """ISLS-SVM classifier, a sparse LS-SVM (004, Algorithm 1), by :func:`svmref.solvers.isls.isls_svm`.

    Starting from the LS-SVM solution (004 eq. (2), targets ±1), each iteration sets ``lambda_i = 1/alpha_i^2``
    and solves the weighted problem (004 eqs. (3)-(4)); the alpha of patterns that stop mattering go to 0,
    an iterative approximation of the L0 norm.

    Parameters
    ----------
    C : float > 0, default=1.0
        Penalty of the squared errors (004 eq. (1)).
    kernel : {'rbf', 'gaussian', 'poly', 'linear', 'mlp', 'precomputed'}, default='rbf'
        ``rbf`` exp(-||x-z||^2/sigma^2) (000 §4, 002, 004 §4); ``gaussian`` exp(-||x-z||^2/(2 sigma^2))
        (001 §3); ``poly`` (1 + x'z/c)^degree and ``mlp`` tanh(k x'z + theta) (002; not positive
        semidefinite for every k, theta); ``linear`` x'z; ``precomputed``: ``X`` is the Gram matrix,
        ``(n_samples, n_samples)`` in ``fit`` and ``(n_test, n_samples)`` (kernel between the test and
        the training patterns) in ``predict``, as in :class:`sklearn.svm.SVC`.
    sigma : float > 0 or 'scale', default='scale'
        Kernel width of ``rbf`` and ``gaussian``. ``'scale'`` takes the width of scikit-learn's
        ``gamma='scale'``: ``exp(-||x-z||^2 / (n_features Var(X)))`` (``Var(X)`` over all entries of
        the training ``X``; 1 if it is 0), i.e. ``sigma^2 = n_features Var(X)`` for ``rbf`` and half
        that for ``gaussian``. The value used is ``sigma_``.
    degree : int >= 1, default=2
        Degree ``d`` of ``poly``.
    c : float > 0, default=1.0
        Scale ``c`` of ``poly``.
    k, theta : float, default=1.0, 0.0
        Slope and offset of ``mlp``.
    tol : float > 0, default=1e-4
        Stop when ``||alpha^t - alpha^(t+1)||_2 / N < tol`` (004 §4: 1e-4).
    max_iter : int >= 1, default=50
        Reweighting iterations (004 §4: 50); reaching it sets ``status_="max_iter_reached"`` and warns.
    sv_threshold : float > 0, default=1e-6
        A pattern is a support vector when ``|alpha_i| > sv_threshold`` (004 §4: 1e-6).
    decision_function_shape : {'ovr', 'ovo'}, default='ovr'
        With more than two classes (one-vs-one, module docstring): ``'ovo'`` returns the pair values
        ``(n_samples, n_pairs)``, ``'ovr'`` votes with confidences ``(n_samples, n_classes)``.
        Ignored for two classes, where ``decision_function`` returns ``(n_samples,)``.

    Attributes
    ----------
    alpha_ : ndarray of shape (n_samples,)
        alpha of the last iteration, in 004's convention ``f(x) = sum_i alpha_i k(x_i, x) + b``.
    dual_coef_ : ndarray of shape (n_SV,)
        ``alpha_i`` over the support vectors; the final model uses these only (004 §4).
    support_, support_vectors_ : ndarray
        Indices and patterns with ``|alpha_i| > sv_threshold``.
    intercept_ : float
        The bias b.
    n_iter_ : int
        Reweighting iterations; ``status_`` (``"optimal"``, ``"suboptimal"``, ``"max_iter_reached"`` or
        ``"numerical_issue"``), ``duality_gap_`` and ``result_`` (:class:`~svmref.solvers.isls.ISLSResult`, in the
        solver's units) the solver's.
    sigma_ : float or None
        The kernel width used (None for the kernels without one: linear, poly, mlp, precomputed).
    X_offset_ : ndarray of shape (n_features,) or None
        The training features' mean, by which they are centred for ``kernel="linear"`` (the estimators whose
        model keeps ``sum_i coef_i = 0``: all but the RLS and ISLS ones; module docstring); None otherwise.
    classes_ : ndarray of shape (n_classes,)
        The class labels; with two classes ``classes_[1]`` is +1.
    n_features_in_ : int
        Number of features seen in ``fit`` (``n_samples`` with ``kernel="precomputed"``).
    pairs_, estimators_ : ndarray of shape (n_pairs, 2), list of estimators
        More than two classes only: the class-index pairs ``(i, j)`` and the binary model of each
        (``classes_[j]`` is +1). Then ``intercept_``, ``n_iter_``, ``status_`` and ``duality_gap_`` are arrays over the
        pairs, ``support_`` is the union of the pairs' support vectors, and the other binary attributes
        live on ``estimators_[k]``.

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from svmref.solvers.estimators import ISLSSVC, LSSVC
    >>> X, y = load_iris(return_X_y=True)
    >>> X, y = X[y > 0], y[y > 0]
    >>> sparse, dense = ISLSSVC(C=10.0).fit(X, y), LSSVC(C=10.0).fit(X, y)
    >>> bool(sparse.support_.size < dense.support_.size / 4)
    True
    >>> bool(sparse.score(X, y) >= 0.9)
    True
    """

    _hyperparameter_rules = {**_ISLS_RULES, **_SHAPE_RULE}

    def __init__(self, C=1.0, *, kernel="rbf", sigma="scale", degree=2, c=1.0, k=1.0, theta=0.0,
                 tol=1e-4, max_iter=50, sv_threshold=1e-6, decision_function_shape="ovr"):
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
        self.decision_function_shape = decision_function_shape

    def _fit_binary(self, X, ys):
        self._isls(X, ys, "classification")


# ------------------------------------------------------------------------------------------------
# regressors
# ------------------------------------------------------------------------------------------------
class _KernelRegressor(_KernelMixin, _Regressor):
    pass


class LSSVR(_StandardizedTarget, _KernelRegressor):
    """LS-SVM regression (004 eqs. (1)-(2); 002), by :func:`svmref.solvers.linear.ls_svm_regression`.

    Primal (004 eq. (1)): ``min 1/2 ||W||^2 + C/2 sum_i xi_i^2`` s.t. ``W.Phi(x_i) + b = y_i - xi_i``;
    KKT system (004 eq. (2)): ``[0 1'; 1 K + I/C] [b; alpha] = [0; y]``, ``f(x) = sum_i alpha_i k(x_i, x) + b``.

    Parameters
    ----------
    C : float > 0, default=1.0
        Penalty of the squared errors (``gamma`` in LS-SVMlab and 002).
    kernel : {'rbf', 'gaussian', 'poly', 'linear', 'mlp', 'precomputed'}, default='rbf'
        ``rbf`` exp(-||x-z||^2/sigma^2) (000 §4, 002, 004 §4); ``gaussian`` exp(-||x-z||^2/(2 sigma^2))
        (001 §3); ``poly`` (1 + x'z/c)^degree and ``mlp`` tanh(k x'z + theta) (002; not positive
        semidefinite for every k, theta); ``linear`` x'z; ``precomputed``: ``X`` is the Gram matrix,
        ``(n_samples, n_samples)`` in ``fit`` and ``(n_test, n_samples)`` (kernel between the test and
        the training patterns) in ``predict``, as in :class:`sklearn.svm.SVC`.
    sigma : float > 0 or 'scale', default='scale'
        Kernel width of ``rbf`` and ``gaussian``. ``'scale'`` takes the width of scikit-learn's
        ``gamma='scale'``: ``exp(-||x-z||^2 / (n_features Var(X)))`` (``Var(X)`` over all entries of
        the training ``X``; 1 if it is 0), i.e. ``sigma^2 = n_features Var(X)`` for ``rbf`` and half
        that for ``gaussian``. The value used is ``sigma_``.
    degree : int >= 1, default=2
        Degree ``d`` of ``poly``.
    c : float > 0, default=1.0
        Scale ``c`` of ``poly``.
    k, theta : float, default=1.0, 0.0
        Slope and offset of ``mlp``.
    standardize_y : bool, default=True
        Fit on ``(y - mean(y)) / std(y)`` and map the model back (``y_mean_``, ``y_scale_``); the fitted
        ``alpha_``, ``dual_coef_``, ``intercept_`` and ``predict`` are in the units of ``y`` either way.
        On by default because LS-SVMlab, the toolbox of 004's experiments (004 §4), standardises the
        targets by default (its ``'preprocess'`` option) and because it keeps the linear system's scale independent of the
        targets' (the solution itself is affine-equivariant in y: with and without, the predictions
        agree to round-off).

    Attributes
    ----------
    alpha_, dual_coef_ : ndarray of shape (n_samples,), (n_SV,)
        alpha of 004 eq. (2), in the units of y (``dual_coef_`` over ``alpha_i != 0``: in practice all).
    support_, support_vectors_ : ndarray
        Indices and patterns with ``alpha_i != 0`` (empty ``support_vectors_`` when precomputed).
    intercept_ : float
        The bias b, in the units of y.
    n_iter_ : int
        1 (a direct solve); ``status_``, ``duality_gap_`` and ``result_`` (standardised units) the solver's.
    sigma_ : float or None
        The kernel width used (None for the kernels without one: linear, poly, mlp, precomputed).
    X_offset_ : ndarray of shape (n_features,) or None
        The training features' mean, by which they are centred for ``kernel="linear"`` (the estimators whose
        model keeps ``sum_i coef_i = 0``: all but the RLS and ISLS ones; module docstring); None otherwise.
    y_mean_, y_scale_ : float
        The target standardisation used (0.0 and 1.0 when ``standardize_y=False``).
    n_features_in_ : int
        Number of features seen in ``fit`` (``n_samples`` with ``kernel="precomputed"``).

    Examples
    --------
    >>> import numpy as np
    >>> from svmref.solvers.estimators import LSSVR
    >>> X = np.linspace(0, 6, 40)[:, None]
    >>> y = 100 * np.sin(X[:, 0]) + 500                 # unscaled targets
    >>> reg = LSSVR(C=100.0, sigma=1.0).fit(X, y)
    >>> bool(reg.score(X, y) > 0.99)
    True
    >>> raw = LSSVR(C=100.0, sigma=1.0, standardize_y=False).fit(X, y)
    >>> bool(np.allclose(reg.predict(X), raw.predict(X)))  # LS-SVM is affine-equivariant in y
    True
    """

    _hyperparameter_rules = {"C": POSITIVE, **_KERNEL_RULES, "standardize_y": BOOL}

    def __init__(self, C=1.0, *, kernel="rbf", sigma="scale", degree=2, c=1.0, k=1.0, theta=0.0, standardize_y=True):
        self.C = C
        self.kernel = kernel
        self.sigma = sigma
        self.degree = degree
        self.c = c
        self.k = k
        self.theta = theta
        self.standardize_y = standardize_y

    def _fit_target(self, X, y):
        from svmref.solvers import linear

        res = linear.ls_svm_regression(self._kernel(X), y, self.C)
        self._store(X, res.alpha, res.b, res, res.alpha)


class ISLSSVR(_ISLS, _StandardizedTarget, _KernelRegressor):
    """ISLS-SVM regression, a sparse LS-SVM (004, Algorithm 1), by :func:`svmref.solvers.isls.isls_svm`.

    Starting from the LS-SVM regression solution (004 eq. (2)), each iteration sets ``lambda_i = 1/alpha_i^2``
    and solves the weighted problem (004 eqs. (3)-(4)); ``f(x) = sum_{i in support_} alpha_i k(x_i, x) + b``.

    Parameters
    ----------
    C : float > 0, default=1.0
        Penalty of the squared errors (004 eq. (1)).
    kernel : {'rbf', 'gaussian', 'poly', 'linear', 'mlp', 'precomputed'}, default='rbf'
        ``rbf`` exp(-||x-z||^2/sigma^2) (000 §4, 002, 004 §4); ``gaussian`` exp(-||x-z||^2/(2 sigma^2))
        (001 §3); ``poly`` (1 + x'z/c)^degree and ``mlp`` tanh(k x'z + theta) (002; not positive
        semidefinite for every k, theta); ``linear`` x'z; ``precomputed``: ``X`` is the Gram matrix,
        ``(n_samples, n_samples)`` in ``fit`` and ``(n_test, n_samples)`` (kernel between the test and
        the training patterns) in ``predict``, as in :class:`sklearn.svm.SVC`.
    sigma : float > 0 or 'scale', default='scale'
        Kernel width of ``rbf`` and ``gaussian``. ``'scale'`` takes the width of scikit-learn's
        ``gamma='scale'``: ``exp(-||x-z||^2 / (n_features Var(X)))`` (``Var(X)`` over all entries of
        the training ``X``; 1 if it is 0), i.e. ``sigma^2 = n_features Var(X)`` for ``rbf`` and half
        that for ``gaussian``. The value used is ``sigma_``.
    degree : int >= 1, default=2
        Degree ``d`` of ``poly``.
    c : float > 0, default=1.0
        Scale ``c`` of ``poly``.
    k, theta : float, default=1.0, 0.0
        Slope and offset of ``mlp``.
    tol : float > 0, default=1e-4
        Stop when ``||alpha^t - alpha^(t+1)||_2 / N < tol`` (004 §4: 1e-4).
    max_iter : int >= 1, default=50
        Reweighting iterations (004 §4: 50); reaching it sets ``status_="max_iter_reached"`` and warns.
    sv_threshold : float > 0, default=1e-6
        A pattern is a support vector when ``|alpha_i| > sv_threshold`` (004 §4: 1e-6).
    standardize_y : bool, default=True
        Fit on ``(y - mean(y)) / std(y)`` and map the model back (``y_mean_``, ``y_scale_``); the fitted
        ``alpha_``, ``dual_coef_``, ``intercept_`` and ``predict`` are in the units of ``y`` either way.
        On by default because LS-SVMlab, the toolbox of 004's experiments (004 §4), standardises the
        targets by default (its ``'preprocess'`` option) and because in 004's Algorithm 1 verbatim the stopping rule
        ``tol`` and ``sv_threshold`` are absolute thresholds on alpha, which carries the units of y.
        :func:`~svmref.solvers.isls.isls_svm` (default ``weight_scale='auto'``) already measures them in a unit of alpha
        derived from Var(y), so here the fit is unit-free either way and the option changes round-off
        only (tested).

    Attributes
    ----------
    alpha_ : ndarray of shape (n_samples,)
        alpha of the last iteration, in 004's convention ``f(x) = sum_i alpha_i k(x_i, x) + b``, in the units of y.
    dual_coef_ : ndarray of shape (n_SV,)
        ``alpha_i`` over the support vectors; the final model uses these only (004 §4).
    support_, support_vectors_ : ndarray
        Indices and patterns with ``|alpha_i| > sv_threshold``.
    intercept_ : float
        The bias b, in the units of y.
    n_iter_ : int
        Reweighting iterations; ``status_`` (``"optimal"``, ``"suboptimal"``, ``"max_iter_reached"`` or
        ``"numerical_issue"``), ``duality_gap_`` and ``result_`` (:class:`~svmref.solvers.isls.ISLSResult`, in the
        solver's units) the solver's.
    sigma_ : float or None
        The kernel width used (None for the kernels without one: linear, poly, mlp, precomputed).
    X_offset_ : ndarray of shape (n_features,) or None
        The training features' mean, by which they are centred for ``kernel="linear"`` (the estimators whose
        model keeps ``sum_i coef_i = 0``: all but the RLS and ISLS ones; module docstring); None otherwise.
    y_mean_, y_scale_ : float
        The target standardisation used (0.0 and 1.0 when ``standardize_y=False``).
    n_features_in_ : int
        Number of features seen in ``fit`` (``n_samples`` with ``kernel="precomputed"``).

    Examples
    --------
    >>> import numpy as np
    >>> from svmref.solvers.estimators import ISLSSVR
    >>> X = np.linspace(0, 6, 60)[:, None]
    >>> y = 100 * np.sin(X[:, 0]) + 500
    >>> reg = ISLSSVR(C=100.0, sigma=1.0).fit(X, y)
    >>> bool(reg.score(X, y) > 0.99), bool(reg.support_.size < 20)
    (True, True)
    """

    _hyperparameter_rules = {**_ISLS_RULES, "standardize_y": BOOL}

    def __init__(self, C=1.0, *, kernel="rbf", sigma="scale", degree=2, c=1.0, k=1.0, theta=0.0,
                 tol=1e-4, max_iter=50, sv_threshold=1e-6, standardize_y=True):
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
        self.standardize_y = standardize_y

    def _fit_target(self, X, y):
        self._isls(X, y, "regression")


# ------------------------------------------------------------------------------------------------
# support features machine (003)
# ------------------------------------------------------------------------------------------------
class SupportFeaturesClassifier(_Classifier):
    """Support features machine (003 eq. (5)), linear, by :func:`svmref.solvers.support_features.support_features`.

    Primal (003 eq. (5)): ``min sum_i ((1 - mu) a_i^2 + mu |a_i|) + C sum_j xi_j`` s.t.
    ``y_j (a'x_j + b) >= 1 - xi_j``, ``xi_j >= 0``; the l2-l1 regulariser (003 eq. (4)) selects
    features as ``mu`` grows. Trained on the dual (003 eq. (10)) by the generalised SMO (003 §2.6);
    at ``mu = 0`` it is the linear L1-SVM with ``C_svm = C/2``.

    Parameters
    ----------
    C : float > 0, default=1.0
        The penalty ``c`` of 003 eq. (5).
    mu : float in [0, 1), default=0.0
        Selectivity (003 eq. (4)).
    tol : float > 0, default=1e-3
        Stopping tolerance on the KKT gap of the dual (10).
    max_iter : int >= 1 or None, default=None
        Pair steps; None: the solver's default (``max(10**6, 100 N)``).
    cache_size : float > 0, default=200.0
        Megabytes for the cached columns of ``X X'`` that the second-order working set and the gradient update
        read (the kernel seam's LRU cache, as ``SVC(cache_size=200)``); a tiny cache is slower, never wrong.
    decision_function_shape : {'ovr', 'ovo'}, default='ovr'
        With more than two classes (one-vs-one, module docstring): ``'ovo'`` returns the pair values
        ``(n_samples, n_pairs)``, ``'ovr'`` votes with confidences ``(n_samples, n_classes)``.
        Ignored for two classes, where ``decision_function`` returns ``(n_samples,)``.

    Attributes
    ----------
    coef_ : ndarray of shape (n_features,)
        a (003 eq. (8)); ``f(x) = a'x + b``.
    selected_features_ : ndarray
        The indices i with ``a_i != 0``.
    intercept_ : float
        b (003 eq. (11)).
    alpha_ : ndarray of shape (n_samples,)
        lam, the dual variables of 003 eq. (10).
    n_iter_ : int
        Pair steps; ``status_``, ``duality_gap_`` and ``result_``
        (:class:`~svmref.solvers.support_features.SFMResult`) the solver's.
    classes_ : ndarray of shape (n_classes,)
        The class labels; with two classes ``classes_[1]`` is +1.
    n_features_in_ : int
        Number of features seen in ``fit`` (``n_samples`` with ``kernel="precomputed"``).
    pairs_, estimators_ : ndarray of shape (n_pairs, 2), list of estimators
        More than two classes only: the class-index pairs ``(i, j)`` and the binary model of each
        (``classes_[j]`` is +1). Then ``intercept_``, ``n_iter_``, ``status_`` and ``duality_gap_`` are arrays over the
        pairs, ``support_`` is the union of the pairs' support vectors, and the other binary attributes
        live on ``estimators_[k]``.

    Examples
    --------
    >>> from svmref.solvers.estimators import SupportFeaturesClassifier
    >>> from svmref.datasets import two_hypercubes
    >>> X, y = two_hypercubes(seed=0)            # 003 §3: 25 + 25 patterns, 5 informative features of 50
    >>> dense = SupportFeaturesClassifier(C=1.0, mu=0.0).fit(X, y)
    >>> sparse = SupportFeaturesClassifier(C=1.0, mu=0.99).fit(X, y)
    >>> dense.selected_features_.size, sparse.selected_features_.size
    (50, 11)
    >>> sparse.selected_features_[:4]                    # features 0, 1, 2 and 4 of the normal (5, 4, 3, 2, 1)
    array([0, 1, 2, 4])
    """

    _hyperparameter_rules = {
        "C": POSITIVE,
        "mu": Rule("a float in [0, 1)", lambda v: is_real(v) and 0 <= v < 1),
        "tol": POSITIVE,
        "max_iter": INT_GE1_OR_NONE,
        "cache_size": POSITIVE,
        **_SHAPE_RULE,
    }

    def __init__(self, C=1.0, mu=0.0, *, tol=1e-3, max_iter=None, cache_size=200.0, decision_function_shape="ovr"):
        self.C = C
        self.mu = mu
        self.tol = tol
        self.max_iter = max_iter
        self.cache_size = cache_size
        self.decision_function_shape = decision_function_shape

    def _fit_binary(self, X, ys):
        from svmref.solvers.support_features import support_features

        res = support_features(X, ys, self.C, self.mu, tol=self.tol, max_iter=self.max_iter, cache_size=self.cache_size)
        self.coef_ = np.asarray(res.a, dtype=float)
        self.intercept_ = float(res.b)
        self.alpha_ = res.lam
        self.selected_features_ = res.selected
        self.n_iter_ = int(res.n_iter)
        self.status_ = res.status
        self.duality_gap_ = float(res.duality_gap)
        self.result_ = res

    def _binary_decision(self, X):
        """``f(x) = a'x + b`` (003 eq. (8)-(11)): the kernel expansion with ``K_cross = X``, ``coef = a``."""
        return kernel_expansion(X, self.coef_, self.intercept_)


# ------------------------------------------------------------------------------------------------
# epsilon-SVR (004 Table 1, the SVM column)
# ------------------------------------------------------------------------------------------------
class L1SVR(_SMOMixin, _KernelRegressor):
    """epsilon-insensitive support vector regression (Vapnik's SVR), by :func:`svmref.solvers.smo.svr`.

    The "SVM" column of 004 Table 1 (LIBSVM's epsilon-SVR, against which 004 compares LS-SVM and ISLS-SVM on
    the Motorcycle and Fossil data). Primal: ``min 1/2 ||W||^2 + C sum_i (xi_i + xi_i^*)`` s.t.
    ``y_i - W.Phi(x_i) - b <= epsilon + xi_i``, ``W.Phi(x_i) + b - y_i <= epsilon + xi_i^*``, slacks >= 0;
    its dual (derived in ``docs/formulations/svr.md``)::

        min  1/2 (a - a*)' K (a - a*) + epsilon sum_i (a_i + a*_i) - y'(a - a*)
        s.t. sum_i (a_i - a*_i) = 0,   0 <= a_i, a*_i <= C,

    ``f(x) = sum_i (a_i - a*_i) k(x_i, x) + b``. It is the L1 (absolute-loss, box-constrained) member of
    the family whose L2 loss is LS-SVM regression (:class:`LSSVR`, 004 eq. (1)). ``epsilon`` and ``C`` are
    in the units of ``y`` (as :class:`sklearn.svm.SVR`; no target standardisation here: wrap it in
    :class:`sklearn.compose.TransformedTargetRegressor` with a ``StandardScaler`` for unit-free settings).

    Parameters
    ----------
    C : float > 0, default=1.0
        Penalty of the slacks (the box ``[0, C]``).
    epsilon : float >= 0, default=0.1
        Half-width of the insensitive tube, in the units of y.
    kernel : {'rbf', 'gaussian', 'poly', 'linear', 'mlp', 'precomputed'}, default='rbf'
        ``rbf`` exp(-||x-z||^2/sigma^2) (000 §4, 002, 004 §4); ``gaussian`` exp(-||x-z||^2/(2 sigma^2))
        (001 §3); ``poly`` (1 + x'z/c)^degree and ``mlp`` tanh(k x'z + theta) (002; not positive
        semidefinite for every k, theta); ``linear`` x'z; ``precomputed``: ``X`` is the Gram matrix,
        ``(n_samples, n_samples)`` in ``fit`` and ``(n_test, n_samples)`` (kernel between the test and
        the training patterns) in ``predict``, as in :class:`sklearn.svm.SVC`.
    sigma : float > 0 or 'scale', default='scale'
        Kernel width of ``rbf`` and ``gaussian``. ``'scale'`` takes the width of scikit-learn's
        ``gamma='scale'``: ``exp(-||x-z||^2 / (n_features Var(X)))`` (``Var(X)`` over all entries of
        the training ``X``; 1 if it is 0), i.e. ``sigma^2 = n_features Var(X)`` for ``rbf`` and half
        that for ``gaussian``. The value used is ``sigma_``.
    degree : int >= 1, default=2
        Degree ``d`` of ``poly``.
    c : float > 0, default=1.0
        Scale ``c`` of ``poly``.
    k, theta : float, default=1.0, 0.0
        Slope and offset of ``mlp``.
    tol : float > 0, default=1e-3
        SMO stopping tolerance on the KKT gap (000 eqs. (10)-(11); 1e-3 is the paper's, 000 §4).
    gap_tol : float > 0, default=1e-2
        ``status_="optimal"`` only when the certified relative duality gap (``duality_gap_``) is within it; above
        it the fit is ``"suboptimal"`` with a warning (:func:`svmref.solvers.smo.smo_solve`; the default is
        measured in ``docs/smo.md``, "Labels").
    wss : {'second', 'first'}, default='second'
        Working-set selection: maximal violating pair (000 eq. (8)) or second order (Fan, Chen & Lin 2005).
    max_iter : int >= 1 or None, default=None
        SMO pair steps; None: the solver's default. Reaching it sets ``status_="max_iter_reached"`` and
        warns ``ConvergenceWarning``.
    shrinking : bool, default=True
        LIBSVM's shrinking heuristic (the same solution to ``tol``; only the time differs).
    cache_size : float > 0, default=200.0
        Megabytes of kernel columns cached (as ``SVC(cache_size=...)``): with the ``linear``, ``poly``,
        ``rbf`` and ``gaussian`` kernels SMO computes the columns of K it needs from X
        (:class:`~svmref.solvers.smo.RawKernel`) and never forms the full ``n_samples^2`` matrix; ``mlp``
        and ``precomputed`` use the dense K.
    on_nonconvex : {'raise', 'clamp'}, default='raise'
        A kernel matrix that is not positive semidefinite (``mlp``; a precomputed indefinite K) makes the
        dual non-convex: ``'raise'`` raises :class:`~svmref._validation.NotConvexError`, ``'clamp'`` goes on
        as LIBSVM does (``status_="not_convex"``, with a warning).

    Attributes
    ----------
    alpha_ : ndarray of shape (n_samples,)
        ``a_i - a*_i`` for every pattern (``result_.info["alpha_plus"]``, ``["alpha_minus"]`` hold ``a``, ``a*``).
    dual_coef_ : ndarray of shape (n_SV,)
        ``a_i - a*_i`` over the support vectors (the patterns on or outside the tube).
    support_, support_vectors_ : ndarray
        Indices and patterns with ``a_i - a*_i != 0`` (empty ``support_vectors_`` when precomputed).
    intercept_ : float
        The bias b (LIBSVM's -rho).
    n_iter_ : int
        SMO pair steps; ``status_``, ``duality_gap_`` and ``result_`` (:class:`~svmref.solvers.smo.SMOResult`) the solver's.
    sigma_ : float or None
        The kernel width used (None for the kernels without one: linear, poly, mlp, precomputed).
    X_offset_ : ndarray of shape (n_features,) or None
        The training features' mean, by which they are centred for ``kernel="linear"`` (the estimators whose
        model keeps ``sum_i coef_i = 0``: all but the RLS and ISLS ones; module docstring); None otherwise.
    n_features_in_ : int
        Number of features seen in ``fit`` (``n_samples`` with ``kernel="precomputed"``).

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.svm import SVR
    >>> from svmref.solvers.estimators import L1SVR
    >>> X = np.linspace(0, 6, 50)[:, None]
    >>> y = np.sin(X[:, 0]) + 0.1 * np.cos(7 * X[:, 0])
    >>> ours = L1SVR(C=10.0, epsilon=0.05, sigma=1.0, tol=1e-8).fit(X, y)
    >>> ref = SVR(C=10.0, epsilon=0.05, gamma=1.0, tol=1e-8).fit(X, y)    # gamma = 1 / sigma^2
    >>> bool(np.abs(ours.predict(X) - ref.predict(X)).max() < 1e-5)
    True
    >>> bool(ours.support_.size < len(y))                                  # patterns inside the tube drop out
    True
    """

    _hyperparameter_rules = {"C": POSITIVE, "epsilon": NONNEGATIVE, **_KERNEL_RULES, **_SMO_RULES}

    def __init__(self, C=1.0, epsilon=0.1, *, kernel="rbf", sigma="scale", degree=2, c=1.0, k=1.0, theta=0.0,
                 tol=1e-3, gap_tol=1e-2, wss="second", max_iter=None, shrinking=True, cache_size=200.0,
                 on_nonconvex="raise"):
        self.C = C
        self.epsilon = epsilon
        self.kernel = kernel
        self.sigma = sigma
        self.degree = degree
        self.c = c
        self.k = k
        self.theta = theta
        self.tol = tol
        self.gap_tol = gap_tol
        self.wss = wss
        self.max_iter = max_iter
        self.shrinking = shrinking
        self.cache_size = cache_size
        self.on_nonconvex = on_nonconvex

    def _fit_target(self, X, y):
        from svmref.solvers import smo

        res = smo.svr(self._kernel(X), y, self.C, self.epsilon, **self._smo_options())
        self._store(X, res.alpha, res.b, res, res.alpha)


# ------------------------------------------------------------------------------------------------
# Fixed-size LS-SVM (004 reference [7]): Nystrom features of prototypes, a blockwise primal fit
# ------------------------------------------------------------------------------------------------
_FIXED_SIZE_RULES = {
    "n_prototypes": INT_GE1,
    "C": POSITIVE,
    "sigma": _KERNEL_RULES["sigma"],
    "n_iter": Rule("an int >= 0 or None", lambda v: v is None or (isinstance(v, (int, np.integer))
                                                                  and not isinstance(v, bool) and v >= 0)),
    "block_size": INT_GE1_OR_NONE,
    "progress": Rule("True, False or None (on a terminal)", lambda v: v is None or isinstance(v, (bool, np.bool_))),
    "n_jobs": INT_GE1_OR_NONE,
}


class _FixedSize(_KernelMixin):
    """The fit shared by the fixed-size estimators (:mod:`svmref.solvers.fixed_size`): prototypes by the Renyi
    entropy, the primal ridge on their Nystrom features streamed over blocks of X; the model is an RBF expansion over
    the prototypes whose coefficient is not 0 (``support_``)."""

    kernel = "rbf"
    _centres_linear = False

    def _init(self, n_prototypes, C, sigma, n_iter, random_state, block_size, progress, n_jobs):
        self.n_prototypes = n_prototypes
        self.C = C
        self.sigma = sigma
        self.n_iter = n_iter
        self.random_state = random_state
        self.block_size = block_size
        self.progress = progress
        self.n_jobs = n_jobs

    def _fit_fixed_size(self, X, y):
        from svmref.solvers.fixed_size import fixed_size_ls_svm, select_prototypes

        sigma = self.sigma_ = self._resolve_sigma(X)
        M = min(int(self.n_prototypes), X.shape[0])
        idx = select_prototypes(X, M, sigma, n_iter=self.n_iter, random_state=self.random_state)
        res = fixed_size_ls_svm(X, y, self.C, sigma=sigma, prototypes=X[idx], block_size=self.block_size,
                                progress=self.progress, n_jobs=self.n_jobs)
        self.prototype_indices_ = idx
        self.prototypes_ = X[idx]
        keep = res.beta != 0.0
        self.support_ = idx[keep]
        self.support_vectors_ = X[self.support_]
        self.dual_coef_ = res.beta[keep]
        self.coef_ = res.w
        self.intercept_ = self._intercept_centred = float(res.b)
        self.X_offset_ = None
        self.n_iter_ = 1
        self.status_ = res.status
        self.duality_gap_ = float(res.duality_gap)
        self.result_ = res

    def _binary_decision(self, X):
        """``f(x) = sum_j dual_coef_j k(support_vectors_j, x) + intercept_`` (the RBF kernel of width ``sigma_``)."""
        if self.support_.size == 0:
            return np.full(X.shape[0], self.intercept_)
        return kernel_expansion(kernel_matrix(X, self.support_vectors_, kernel="rbf", sigma=self.sigma_),
                                self.dual_coef_, self.intercept_)


class FixedSizeLSSVR(_FixedSize, RegressorMixin, _Base):
    """Fixed-size LS-SVM regression (004 §1 and its reference [7], De Brabanter et al., CSDA 2010; LS-SVMlab's
    fixed-size routines), by :func:`svmref.solvers.fixed_size.fixed_size_ls_svm`.

    ``n_prototypes`` rows of X are chosen by the quadratic Renyi entropy; the LS-SVM regression primal (004 eq. (1))
    is solved on their Nystrom features ``phi(x)`` (``phi(x)'phi(z) = k(x, P) K_PP^+ k(P, z)``, RBF kernel
    ``exp(-||x - z||^2 / sigma^2)``), by sums accumulated over blocks of rows: memory is ``O(block_size M + M^2)``
    beside X itself, and N = 1 000 000 patterns fit in seconds (``benchmarks/bench_fixed_size.py``).

    Parameters
    ----------
    n_prototypes : int >= 1, default=100
        ``M``, the number of prototypes (at most ``n_samples``: fewer samples use all of them).
    C : float > 0, default=1.0
        Penalty of the squared errors (004 eq. (1); LS-SVMlab's ``gam``).
    sigma : float > 0 or 'scale', default='scale'
        RBF width; ``'scale'`` as :class:`LSSVR` (``sigma^2 = n_features Var(X)``); the value used is ``sigma_``.
    n_iter : int >= 0 or None, default=None
        Swaps tried by the entropy selection (None: ``10 M``).
    random_state : int, RandomState or None
        The draws of the selection.
    block_size : int >= 1 or None
        Rows per block of the fit (None: about 32 MB of kernel values).
    progress : bool or None, default=None
        A tqdm bar on stderr counting the blocks (None: on a terminal when there is more than one block).
    n_jobs : int >= 1 or None, default=None
        Blocks computed at a time, on threads of one BLAS thread each (None: every core); the fitted coefficients do
        not depend on it.

    Attributes
    ----------
    prototypes_, prototype_indices_ : ndarray
        The selected rows of X and their indices.
    support_, support_vectors_, dual_coef_ : ndarray
        The prototypes whose expansion coefficient ``beta_j`` is not 0, and those ``beta_j``:
        ``f(x) = sum_j dual_coef_j k(support_vectors_j, x) + intercept_``.
    coef_ : ndarray of shape (rank,)
        ``w`` on the Nystrom features (``result_.map``).
    intercept_ : float
        b.
    status_, duality_gap_, result_, n_iter_, sigma_
        The solver's label (``"optimal"``: the accumulated normal equations solved to rounding), its relative
        objective-error bound, the :class:`~svmref.solvers.fixed_size.FixedSizeResult`, 1, the width used.

    Examples
    --------
    >>> import numpy as np
    >>> from svmref.solvers.estimators import FixedSizeLSSVR
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(-3, 3, (2000, 1))
    >>> y = np.sinc(X[:, 0]) + 0.05 * rng.normal(size=2000)
    >>> reg = FixedSizeLSSVR(n_prototypes=12, C=100.0, sigma=1.0, random_state=0).fit(X, y)
    >>> reg.prototypes_.shape, reg.status_
    ((12, 1), 'optimal')
    >>> bool(reg.score(X, y) > 0.95)
    True
    """

    _hyperparameter_rules = _FIXED_SIZE_RULES

    def __init__(self, n_prototypes=100, *, C=1.0, sigma="scale", n_iter=None, random_state=None, block_size=None,
                 progress=None, n_jobs=None):
        self._init(n_prototypes, C, sigma, n_iter, random_state, block_size, progress, n_jobs)

    def fit(self, X, y):
        """Fit on ``X`` (n_samples, n_features) and real targets ``y``; returns self."""
        self._check_hyperparameters()
        self._reset()
        X, y = validate_data(self, X, y, dtype=np.float64, y_numeric=True)
        self._fit_fixed_size(X, np.asarray(y, dtype=np.float64))
        return self

    def predict(self, X):
        """``f(x) = sum_j dual_coef_j k(support_vectors_j, x) + intercept_``."""
        check_is_fitted(self)
        X = validate_data(self, X, reset=False, dtype=np.float64)
        return self._binary_decision(X)


class FixedSizeLSSVC(_FixedSize, _Classifier):
    """Fixed-size LS-SVM classifier: :class:`FixedSizeLSSVR`'s fit on the targets ``+-1`` (the LS-SVM classifier's
    primal, 000 eq. (1), is that regression, since ``y_i^2 = 1``; :mod:`svmref.solvers.fixed_size`), one-vs-one for
    more than two classes (module docstring). The prototypes of a binary problem are chosen among all its patterns,
    whatever their class.

    Parameters
    ----------
    n_prototypes, C, sigma, n_iter, random_state, block_size, progress, n_jobs
        As :class:`FixedSizeLSSVR`.
    decision_function_shape : {'ovr', 'ovo'}, default='ovr'
        The shape of ``decision_function`` with more than two classes (module docstring).

    Attributes
    ----------
    classes_ : ndarray
        The class labels; ``classes_[1]`` is +1 of a binary problem.
    prototypes_, prototype_indices_, support_, support_vectors_, dual_coef_, coef_ : ndarray
        As :class:`FixedSizeLSSVR` (per pair, on ``estimators_``, with more than two classes).
    intercept_, status_, duality_gap_, result_, n_iter_, sigma_
        As :class:`FixedSizeLSSVR` (arrays over the pairs with more than two classes).

    Examples
    --------
    >>> import numpy as np
    >>> from svmref.solvers.estimators import FixedSizeLSSVC
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(3000, 2))
    >>> y = np.where(X[:, 0] ** 2 + X[:, 1] ** 2 < 1.4, "in", "out")
    >>> clf = FixedSizeLSSVC(n_prototypes=40, C=10.0, sigma=1.0, random_state=0).fit(X, y)
    >>> bool(clf.score(X, y) > 0.95), clf.status_
    (True, 'optimal')
    """

    _hyperparameter_rules = {**_FIXED_SIZE_RULES, **_SHAPE_RULE}

    def __init__(self, n_prototypes=100, *, C=1.0, sigma="scale", n_iter=None, random_state=None, block_size=None,
                 progress=None, n_jobs=None, decision_function_shape="ovr"):
        self._init(n_prototypes, C, sigma, n_iter, random_state, block_size, progress, n_jobs)
        self.decision_function_shape = decision_function_shape

    def _fit_binary(self, X, ys):
        self._fit_fixed_size(X, ys)


# ------------------------------------------------------------------------------------------------
# LS-SVM with (C, sigma) chosen by exact leave-one-out or k-fold CV (as RidgeCV does for ridge)
# ------------------------------------------------------------------------------------------------
def _grid_rule(what: str, ok) -> Rule:
    return Rule(f"a non-empty sequence of {what}", lambda v: not isinstance(v, str) and hasattr(v, "__len__")
                and len(v) > 0 and all(ok(x) for x in v))


_CV_RULES = {
    "search": options("grid", "tunelssvm"),
    "Cs": _grid_rule("floats > 0", POSITIVE.ok),
    "sigmas": _grid_rule("floats > 0 or 'scale'", _KERNEL_RULES["sigma"].ok),
    "cv": Rule("None (exact leave-one-out) or an int >= 2", lambda v: v is None or (is_int(v) and v >= 2)),
    **{k: v for k, v in _KERNEL_RULES.items() if k != "sigma"},
}


def _ovo_loo_decisions(K, y_idx, n_classes, C):
    """The leave-one-out pair values of the one-vs-one LS-SVM classifier: for pattern ``i`` the pairs with its class
    take ``f^(-i)(x_i) = y_i - r_i`` (:func:`~svmref.solvers.linear.loo_residuals`), the others, which never saw
    ``i``, their full model's value. Shape (n_samples, n_pairs)."""
    from svmref.solvers import linear

    pairs = list(combinations(range(n_classes), 2))
    D = np.empty((K.shape[0], len(pairs)))
    for k, (i, j) in enumerate(pairs):
        rows = np.flatnonzero((y_idx == i) | (y_idx == j))
        yp = np.where(y_idx[rows] == j, 1.0, -1.0)
        r, alpha, b = linear.loo_residuals(K[np.ix_(rows, rows)], yp, C, task="classification", return_solution=True)
        D[:, k] = K[:, rows] @ alpha + b                 # the full pair model, from the same factorisation
        D[rows, k] = yp - r
    return D, np.array(pairs)


class _LSSVMSearch:
    """The grid search of :class:`LSSVRCV` and :class:`LSSVCCV`: every ``(C, sigma)`` of ``Cs x sigmas`` scored by
    exact leave-one-out (``cv=None``: one factorisation per pair, :func:`~svmref.solvers.linear.loo_residuals`) or
    by ``cv``-fold cross-validation (refits), the best refitted on all the data as ``best_estimator_``."""

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.pairwise = self.kernel == "precomputed"
        return tags

    def _sigma_values(self, X):
        if self.kernel not in ("rbf", "gaussian"):
            return [None]
        out = []
        for s in self.sigmas:
            probe = LSSVR(kernel=self.kernel, sigma=s)
            out.append(probe._resolve_sigma(X))
        return list(dict.fromkeys(out))

    def _kernel_for(self, X, sigma):
        if self.kernel == "precomputed":
            return X
        params = {"rbf": {"sigma": sigma}, "gaussian": {"sigma": sigma}, "poly": {"c": self.c, "d": self.degree},
                  "mlp": {"k": self.k, "theta": self.theta}, "linear": {}}[self.kernel]
        Xc = X - X.mean(axis=0) if self.kernel == "linear" else X
        return kernel_matrix(Xc, None, kernel=self.kernel, **params)

    def _score(self, X, y, y_loo, base, C, sigma, K):
        """The criterion of one ``(C, sigma)``: exact LOO on the kernel ``K`` (``cv=None``), else k-fold CV."""
        from sklearn.model_selection import cross_val_score

        if self.cv is None:
            return self._loo_score(K, y_loo, float(C))
        est = clone(base).set_params(C=float(C), **({} if sigma is None else {"sigma": sigma}))
        return -float(np.mean(cross_val_score(est, X, y, cv=self.cv, scoring=self._cv_scoring)))

    def _grid(self, X, y, y_loo, base, results):
        for sigma in self._sigma_values(X):
            K = self._kernel_for(X, sigma) if self.cv is None else None
            for C in self.Cs:
                results.append((float(C), sigma, self._score(X, y, y_loo, base, C, sigma, K)))

    def _tunelssvm(self, X, y, y_loo, base, results):
        """tunelssvm's search (:func:`svmref.solvers.tuning.tune`) over ``log10 C`` in ``[min Cs, max Cs]`` and, for
        a kernel with a width, ``log10 sigma`` in ``[min sigmas, max sigmas]``; every evaluation in ``results``."""
        from svmref.solvers.tuning import tune

        sig = self._sigma_values(X)
        box = [(np.log10(min(self.Cs)), np.log10(max(self.Cs)))]
        if sig != [None]:
            box.append((np.log10(min(sig)), np.log10(max(sig))))
        if any(lo >= hi for lo, hi in box):
            raise ValueError("search='tunelssvm' needs Cs (and, for the RBF kernels, sigmas) spanning a range: the "
                             f"smallest and largest values bound its search; got Cs={self.Cs!r}, sigmas={self.sigmas!r}")

        def f(x):
            C, sigma = 10.0 ** x[0], (None if len(x) == 1 else float(10.0 ** x[1]))
            K = self._kernel_for(X, sigma) if self.cv is None else None
            results.append((float(C), sigma, self._score(X, y, y_loo, base, C, sigma, K)))
            return results[-1][2]

        tune(f, box, seed=check_random_state(self.random_state).randint(2**31 - 1))

    def _search(self, X, y, base, y_loo=None):
        """Score ``(C, sigma)`` pairs (the grid, or tunelssvm's search; LOO on ``y_loo``, default ``y``; CV on ``y``)
        and refit the best on ``X``, ``y``."""
        if self.kernel == "precomputed" and X.shape[0] != X.shape[1]:
            raise ValueError(f"X must be a square kernel matrix (n_samples, n_samples) with kernel='precomputed'; "
                             f"got shape {X.shape}")
        y_loo = y if y_loo is None else y_loo
        results: list = []
        (self._tunelssvm if self.search == "tunelssvm" else self._grid)(X, y, y_loo, base, results)
        best = int(np.argmin([r[2] for r in results]))  # the first of equal scores, in the order tried
        self.cv_results_ = {"C": np.array([r[0] for r in results]), "sigma": np.array([r[1] for r in results],
                                                                                     dtype=object),
                            "score": np.array([r[2] for r in results])}
        self.best_index_ = best
        self.C_, self.sigma_, self.best_score_ = results[best]
        params = {"C": self.C_, **({} if self.sigma_ is None else {"sigma": self.sigma_})}
        self.best_estimator_ = clone(base).set_params(**params).fit(X, y)
        self.n_features_in_ = X.shape[1]

    def predict(self, X):
        """The prediction of ``best_estimator_``."""
        check_is_fitted(self)
        return self.best_estimator_.predict(X)


class LSSVRCV(_LSSVMSearch, RegressorMixin, BaseEstimator, HyperparameterMixin):
    """LS-SVM regression (004, eq. (1) and system (2)) with ``C`` and ``sigma`` chosen on a grid by exact leave-one-out, as
    :class:`sklearn.linear_model.RidgeCV` does for ridge: the LOO residuals of every ``(C, sigma)`` come from one
    factorisation (:func:`svmref.solvers.linear.loo_residuals`; Cawley & Talbot, Neural Networks 2004), not N refits.

    Parameters
    ----------
    Cs : sequence of floats > 0, default=(0.1, 1.0, 10.0, 100.0)
        The values of C tried.
    sigmas : sequence of floats > 0 or 'scale', default=('scale',)
        The RBF widths tried (``'scale'`` as :class:`LSSVR`); ignored by the kernels without a width.
    cv : None or int >= 2, default=None
        None: exact leave-one-out, scored by the mean squared LOO residual (PRESS / N); an int: that many folds
        (:func:`sklearn.model_selection.cross_val_score`, mean squared error), by refits.
    search : {'grid', 'tunelssvm'}, default='grid'
        ``'grid'``: every pair of ``Cs x sigmas``. ``'tunelssvm'``: LS-SVMlab's search (004 §4;
        :func:`svmref.solvers.tuning.tune`, coupled simulated annealing with 5 starters then a simplex) over
        ``log10 C`` between the smallest and largest of ``Cs`` and ``log10 sigma`` between those of ``sigmas``, on the
        same criterion.
    random_state : int, RandomState or None
        The draws of ``search='tunelssvm'``.
    kernel, degree, c, k, theta
        As :class:`LSSVR`.

    Attributes
    ----------
    C_, sigma_ : float
        The values chosen (``sigma_`` None for kernels without a width).
    best_score_ : float
        Their criterion: the mean squared LOO (or CV) error, in the units of y squared.
    cv_results_ : dict of ndarrays
        ``C``, ``sigma`` and ``score`` of every pair tried (every evaluation of ``search='tunelssvm'``), in the order
        tried; ``best_index_`` the chosen one.
    best_estimator_ : LSSVR
        The model refitted on all the data with ``C_`` and ``sigma_``.

    Examples
    --------
    >>> import numpy as np
    >>> from svmref.solvers.estimators import LSSVRCV
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(-3, 3, (80, 1))
    >>> y = np.sinc(X[:, 0]) + 0.1 * rng.normal(size=80)
    >>> reg = LSSVRCV(Cs=[0.01, 1.0, 100.0], sigmas=[0.3, 1.0, 3.0]).fit(X, y)
    >>> reg.C_, reg.sigma_
    (100.0, 1.0)
    >>> bool(reg.best_score_ < 0.02)
    True
    """

    _hyperparameter_rules = _CV_RULES
    _cv_scoring = "neg_mean_squared_error"

    def __init__(self, Cs=(0.1, 1.0, 10.0, 100.0), sigmas=("scale",), *, cv=None, search="grid", random_state=None,
                 kernel="rbf", degree=2, c=1.0, k=1.0, theta=0.0):
        self.Cs = Cs
        self.search = search
        self.random_state = random_state
        self.sigmas = sigmas
        self.cv = cv
        self.kernel = kernel
        self.degree = degree
        self.c = c
        self.k = k
        self.theta = theta

    def _loo_score(self, K, y, C):
        from svmref.solvers import linear

        return float(np.mean(linear.loo_residuals(K, y, C) ** 2))

    def fit(self, X, y):
        """Search the grid on ``X``, ``y`` and refit the best; returns self."""
        self._check_hyperparameters()
        X, y = validate_data(self, X, y, dtype=np.float64, y_numeric=True)
        base = LSSVR(kernel=self.kernel, degree=self.degree, c=self.c, k=self.k, theta=self.theta, standardize_y=False)
        self._search(X, np.asarray(y, dtype=np.float64), base)
        return self


class LSSVCCV(_LSSVMSearch, ClassifierMixin, BaseEstimator, HyperparameterMixin):
    """LS-SVM classifier (000, eq. (1) and dual (2)) with ``C`` and ``sigma`` chosen on a grid by exact leave-one-out: the
    LOO error of every ``(C, sigma)`` from one factorisation per one-vs-one pair (a pattern's leave-one-out vote
    changes only in the pairs with its class; the others never saw it), ties broken by the mean squared LOO residual.

    Parameters
    ----------
    Cs, sigmas, search, random_state, kernel, degree, c, k, theta
        As :class:`LSSVRCV`.
    cv : None or int >= 2, default=None
        None: exact leave-one-out, scored by the LOO error rate; an int: stratified folds (accuracy), by refits.
    decision_function_shape : {'ovr', 'ovo'}, default='ovr'
        As :class:`LSSVC`.

    Attributes
    ----------
    classes_ : ndarray
        The class labels.
    C_, sigma_, best_score_, cv_results_, best_index_
        As :class:`LSSVRCV`; ``best_score_`` is the LOO error rate (plus less than ``1e-6`` times the mean squared
        LOO residual, the tie-break), or one minus the CV accuracy.
    best_estimator_ : LSSVC
        The model refitted on all the data.

    Examples
    --------
    >>> import numpy as np
    >>> from svmref.solvers.estimators import LSSVCCV
    >>> rng = np.random.default_rng(1)
    >>> X = rng.normal(size=(90, 2))
    >>> y = np.where(X[:, 0] ** 2 + X[:, 1] ** 2 < 1.2, "in", "out")
    >>> clf = LSSVCCV(Cs=[0.1, 10.0], sigmas=[0.2, 1.0, 5.0]).fit(X, y)
    >>> clf.sigma_
    1.0
    >>> bool(clf.score(X, y) > 0.9)
    True
    """

    _hyperparameter_rules = {**_CV_RULES, **_SHAPE_RULE}
    _cv_scoring = "accuracy"

    def __init__(self, Cs=(0.1, 1.0, 10.0, 100.0), sigmas=("scale",), *, cv=None, search="grid", random_state=None,
                 kernel="rbf", degree=2, c=1.0, k=1.0, theta=0.0, decision_function_shape="ovr"):
        self.Cs = Cs
        self.search = search
        self.random_state = random_state
        self.sigmas = sigmas
        self.cv = cv
        self.kernel = kernel
        self.degree = degree
        self.c = c
        self.k = k
        self.theta = theta
        self.decision_function_shape = decision_function_shape

    def _loo_score(self, K, y_idx, C):
        D, pairs = _ovo_loo_decisions(K, y_idx, self.classes_.shape[0], C)
        if pairs.shape[0] == 1:
            pred = (sign_labels(D[:, 0]) > 0.0).astype(int)
        else:
            probe = LSSVC(decision_function_shape="ovr")
            probe.classes_, probe.pairs_ = self.classes_, pairs
            pred = np.argmax(probe._votes(D), axis=1)
        err = float(np.mean(pred != y_idx))
        targets = [np.where(y_idx[(y_idx == i) | (y_idx == j)] == j, 1.0, -1.0) for i, j in pairs]
        margins = [D[(y_idx == i) | (y_idx == j), k] for k, (i, j) in enumerate(pairs)]
        mse = float(np.mean(np.concatenate([(t - m) ** 2 for t, m in zip(targets, margins)])))
        return err + 1e-6 * mse / (1.0 + mse)

    def fit(self, X, y):
        """Search the grid on ``X``, class labels ``y`` and refit the best; returns self."""
        self._check_hyperparameters()
        X, y = validate_data(self, X, y, dtype=np.float64)
        check_classification_targets(y)
        classes, y_idx = np.unique(y, return_inverse=True)
        if classes.shape[0] < 2:
            raise ValueError(f"LSSVCCV needs at least two classes in y; got 1 class ({classes[0]!r})")
        self.classes_ = classes
        base = LSSVC(kernel=self.kernel, degree=self.degree, c=self.c, k=self.k, theta=self.theta,
                     decision_function_shape=self.decision_function_shape)
        self._search(X, y, base, y_loo=y_idx)
        return self

    def decision_function(self, X):
        """The decision function of ``best_estimator_``."""
        check_is_fitted(self)
        return self.best_estimator_.decision_function(X)


# ------------------------------------------------------------------------------------------------
# Robust (weighted) LS-SVM (Suykens, De Brabanter, Lukas & Vandewalle, Neurocomputing 2002)
# ------------------------------------------------------------------------------------------------
_ROBUST_RULES = {
    "C": POSITIVE,
    **_KERNEL_RULES,
    "weight": options("huber", "hampel", "logistic", "myriad"),
    "max_iter": INT_GE1,
    "tol": POSITIVE,
}


class _Robust:
    """The fit shared by :class:`RobustLSSVR` and :class:`RobustLSSVC`: :func:`svmref.solvers.robust.robust_ls_svm`
    on the estimator's kernel; ``weights_`` the final ``v``."""

    def _robust_fit(self, X, y, task):
        from svmref.solvers import robust

        res = robust.robust_ls_svm(self._kernel(X), y, self.C, weight=self.weight, task=task,
                                   max_iter=self.max_iter, tol=self.tol)
        self._store(X, res.coef, res.b, res, res.alpha)
        self.weights_ = np.asarray(res.info["weights"], dtype=float)
        self.residual_scale_ = float(res.info["scale"])


class RobustLSSVR(_Robust, _StandardizedTarget, _KernelRegressor):
    """Robust LS-SVM regression: the weighted LS-SVM (004 eq. (1) with the penalty ``C/2 sum_i v_i e_i^2``; Suykens,
    De Brabanter, Lukas & Vandewalle, Neurocomputing 48, 2002; LS-SVMlab's ``robustlssvm``) with weights from the
    residuals, iterated (:func:`svmref.solvers.robust.robust_ls_svm`): an outlier's weight falls with its
    standardised residual ``e_i / (1.483 MAD(e))``, so that it stops pulling the fit as it does the LS-SVM's
    (000 §1: ``alpha_i = C xi_i``, unbounded).

    Parameters
    ----------
    C : float > 0, default=1.0
        Penalty of the weighted squared errors.
    kernel, sigma, degree, c, k, theta
        As :class:`LSSVR`.
    weight : {'huber', 'hampel', 'logistic', 'myriad'}, default='hampel'
        The weight function of the standardised residual (:data:`svmref.solvers.robust.WEIGHTS`); Hampel with
        ``c1 = 2.5``, ``c2 = 3`` is the choice of Suykens et al. 2002.
    max_iter : int >= 1, default=100
        Weighted solves before stopping with ``status_ == "max_iter_reached"`` and a ``ConvergenceWarning``.
    tol : float > 0, default=1e-4
        Stop when no weight moves by more than this.
    standardize_y : bool, default=True
        As :class:`LSSVR` (the weights are scale-free: the residuals are divided by their robust scale).

    Attributes
    ----------
    weights_ : ndarray of shape (n_samples,)
        The final weights ``v_i`` in ``(0, 1]`` (at least ``1e-4``).
    residual_scale_ : float
        ``1.483 MAD`` of the residuals the final weights came from (standardised units when ``standardize_y``).
    alpha_, dual_coef_, support_, support_vectors_, intercept_, sigma_, X_offset_, y_mean_, y_scale_
        As :class:`LSSVR`.
    n_iter_ : int
        Weighted solves made; ``status_``, ``duality_gap_`` and ``result_`` those of the last one (certified at
        ``weights_``).

    Examples
    --------
    >>> import numpy as np
    >>> from svmref.solvers.estimators import LSSVR, RobustLSSVR
    >>> rng = np.random.default_rng(0)
    >>> X = np.sort(rng.uniform(-3, 3, 80))[:, None]
    >>> y = np.sin(X[:, 0]) + 0.1 * rng.normal(size=80)
    >>> y_out = y.copy(); y_out[[20, 50]] += [6.0, -6.0]            # two gross outliers
    >>> rob = RobustLSSVR(C=10.0, sigma=1.0).fit(X, y_out)
    >>> bool(np.all(rob.weights_[[20, 50]] < 0.01)), rob.status_
    (True, 'optimal')
    >>> plain = LSSVR(C=10.0, sigma=1.0).fit(X, y_out)
    >>> truth = np.sin(X[:, 0])
    >>> bool(np.abs(rob.predict(X) - truth).max() < np.abs(plain.predict(X) - truth).max())
    True
    """

    _hyperparameter_rules = {**_ROBUST_RULES, "standardize_y": BOOL}

    def __init__(self, C=1.0, *, kernel="rbf", sigma="scale", degree=2, c=1.0, k=1.0, theta=0.0, weight="hampel",
                 max_iter=100, tol=1e-4, standardize_y=True):
        self.C = C
        self.kernel = kernel
        self.sigma = sigma
        self.degree = degree
        self.c = c
        self.k = k
        self.theta = theta
        self.weight = weight
        self.max_iter = max_iter
        self.tol = tol
        self.standardize_y = standardize_y

    def _fit_target(self, X, y):
        self._robust_fit(X, y, "regression")


class RobustLSSVC(_Robust, _KernelClassifier):
    """Robust LS-SVM classifier: the weighted LS-SVM classifier (000 eq. (1) with ``C/2 sum_i v_i xi_i^2``; Suykens
    et al., Neurocomputing 2002) with weights from the residuals ``xi_i = alpha_i / (C v_i)``, iterated
    (:func:`svmref.solvers.robust.robust_ls_svm`): a mislabelled pattern far on the wrong side has a large residual
    and loses its weight, where the LS-SVM lets it pull the hyperplane (000 §4, Fig. 1). One-vs-one beyond two classes.

    Parameters
    ----------
    C, kernel, sigma, degree, c, k, theta, weight, max_iter, tol
        As :class:`RobustLSSVR`.
    decision_function_shape : {'ovr', 'ovo'}, default='ovr'
        As :class:`LSSVC`.

    Attributes
    ----------
    weights_, residual_scale_, n_iter_, status_, duality_gap_, result_
        As :class:`RobustLSSVR` (per pair on ``estimators_`` with more than two classes).
    alpha_, dual_coef_, support_, support_vectors_, intercept_, sigma_, classes_
        As :class:`LSSVC`.

    Examples
    --------
    >>> import numpy as np
    >>> from svmref.solvers.estimators import RobustLSSVC
    >>> rng = np.random.default_rng(0)
    >>> X = np.r_[rng.normal([0, 0], 1, (20, 2)), rng.normal([5, 2], 1, (20, 2))]
    >>> y = np.repeat([-1, 1], 20)
    >>> y[[0, 1]] = 1                                              # two switched labels, deep in the other class
    >>> clf = RobustLSSVC(C=1.0, kernel="linear").fit(X, y)
    >>> bool(clf.weights_[:2].max() < 0.1 * np.median(clf.weights_[2:]))   # the switched labels weighed down
    True
    """

    _hyperparameter_rules = {**_ROBUST_RULES, **_SHAPE_RULE}

    def __init__(self, C=1.0, *, kernel="rbf", sigma="scale", degree=2, c=1.0, k=1.0, theta=0.0, weight="hampel",
                 max_iter=100, tol=1e-4, decision_function_shape="ovr"):
        self.C = C
        self.kernel = kernel
        self.sigma = sigma
        self.degree = degree
        self.c = c
        self.k = k
        self.theta = theta
        self.weight = weight
        self.max_iter = max_iter
        self.tol = tol
        self.decision_function_shape = decision_function_shape

    def _fit_binary(self, X, ys):
        self._robust_fit(X, ys, "classification")

"""Distance kernels without catastrophic cancellation (svmref/kernels.py, solvers/_qmatrix.py).

``||x - z||^2`` computed as ``||x||^2 + ||z||^2 - 2 x'z`` loses every digit when a feature carries a large offset
(a raw timestamp: about 1.7e9, spread 50): the three terms are about 3e18 and their rounding (about 300) is larger
than the distances. The kernels promise instead: every RBF/Gaussian value within 1e-12 (absolute) of the exact
kernel of the float64 inputs, whatever the offset. Checked here against references that share no code with the
kernels:

* exact squared distances in rational arithmetic (:class:`fractions.Fraction`) on small instances, rounded once;
* the difference form ``sum_k (x_k - z_k)^2`` in extended precision on larger ones, where every ``x_k - z_k`` is
  exact (the data lie on a dyadic grid, and two entries of an offset feature are within a factor 2 of each other);
* the same estimator fitted on the centred data, which are the offset data minus the offset exactly.

Offsets 1e3, 1.7e9 and 1e12 (the fitted models: 1.7e9 and 1e12, where the plain expansion changes them), each
compared with offset 0. Every test here fails with the plain expansion.
"""
from __future__ import annotations

import math
import warnings
from fractions import Fraction

import numpy as np
import pytest
from sklearn.base import clone

from svmref.kernels import gaussian_kernel, kernel_matrix, linear_kernel, polynomial_kernel, rbf_kernel
from svmref.solvers import _qmatrix
from svmref.solvers.estimators import L1SVC, L1SVR, L2SVC, LSSVC, LSSVR, LeastOneNormSVC, RLSClassifier
from svmref.solvers.smo import RawKernel

# --- tolerances, in one table -------------------------------------------------------------------
TOL = {
    "kernel": 1e-12,      # absolute, a kernel value against the exact kernel of the float64 inputs (the promise)
    "decision": 1e-9,     # absolute, decision function on offset data against the same model on centred data
    "objective": 1e-7,    # relative to max(1, |D|), dual objective of the offset fit on the exact kernel vs optimum
}
OFFSETS = [1e3, 1.7e9, 1e12]
BIG = [1.7e9, 1e12]  # where the plain expansion changes the fitted models


def _step(offset):
    """The grid of the data at this offset: as fine as 2^-30, but no finer than the spacing of the floats near
    ``offset + 64``, so that ``x + offset`` is exact (2^-30 at 1e3, 2^-22 at 1.7e9, 2^-13 at 1e12)."""
    return max(2.0**-30, float(np.spacing(offset + 64.0)))


def _grid(a, offset):
    h = _step(offset)
    return np.round(np.asarray(a) / h) * h


def _data(n, d, seed, offset, spread=(3.0, 1.0, 1.0)):
    rng = np.random.default_rng(seed)
    return _grid(rng.uniform(-0.5, 0.5, (n, d)) * np.asarray(spread[:d]), offset)


def _shifted(A, offset, cols=(0,)):
    """``A`` with ``offset`` added to the columns ``cols``; checks that the sum is exact."""
    B = A.copy()
    B[:, list(cols)] += offset
    assert np.array_equal(B[:, list(cols)] - offset, A[:, list(cols)])
    return B


def exact_rbf(X, Z, rate):
    """``exp(-rate ||x_i - z_j||^2)``: the squared distance exact in rationals, the exponent rounded once."""
    r = Fraction(rate)
    K = np.empty((X.shape[0], Z.shape[0]))
    for i, x in enumerate(X):
        for j, z in enumerate(Z):
            D = sum((Fraction(a) - Fraction(b)) ** 2 for a, b in zip(x, z))
            K[i, j] = math.exp(-float(D * r))
    return K


def longdouble_rbf(X, Z, rate):
    """``exp(-rate ||x_i - z_j||^2)`` by the difference form in extended precision (exact differences)."""
    Xl, Zl = X.astype(np.longdouble), Z.astype(np.longdouble)
    D = ((Xl[:, None, :] - Zl[None, :, :]) ** 2).sum(axis=-1)
    return np.exp(-D * np.longdouble(rate)).astype(np.float64)


def dual_objective(K, y, alpha):
    """``1/2 v'Kv - sum alpha``, ``v = alpha * y`` (the L1-SVM dual, 000 eq. (2))."""
    v = alpha * y
    return 0.5 * float(v @ K @ v) - float(np.sum(alpha))


def _err(A, B):
    return float(np.max(np.abs(A - B)))


# ------------------------------------------------------------------------------------------------
# the dense kernels of svmref.kernels
# ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("cols", [(0,), (0, 1, 2)], ids=["one-feature", "all-features"])
@pytest.mark.parametrize("offset", OFFSETS)
def test_rbf_and_gaussian_are_exact_to_1e12_at_any_offset(offset, cols):
    """rbf_kernel, gaussian_kernel and kernel_matrix, with Z=None and Z given, against exact rational distances."""
    X0, Z0 = _data(14, 3, 0, offset), _data(9, 3, 1, offset)
    X, Z = _shifted(X0, offset, cols), _shifted(Z0, offset, cols)
    for sigma in (0.5, 1.5):
        rate = 1.0 / sigma**2
        KX, KZ = exact_rbf(X, X, rate), exact_rbf(Z, X, rate)
        assert _err(rbf_kernel(X, sigma=sigma), KX) <= TOL["kernel"]
        assert _err(rbf_kernel(X, X, sigma=sigma), KX) <= TOL["kernel"]
        assert _err(rbf_kernel(Z, X, sigma=sigma), KZ) <= TOL["kernel"]
        assert _err(kernel_matrix(Z, X, kernel="rbf", sigma=sigma), KZ) <= TOL["kernel"]
        assert _err(gaussian_kernel(Z, X, sigma=sigma), exact_rbf(Z, X, rate / 2)) <= TOL["kernel"]
        assert _err(kernel_matrix(X, kernel="gaussian", sigma=sigma), exact_rbf(X, X, rate / 2)) <= TOL["kernel"]
        # the same kernel as the centred data, whose exact kernel it is
        assert _err(rbf_kernel(Z, X, sigma=sigma), rbf_kernel(Z0, X0, sigma=sigma)) <= TOL["kernel"]


@pytest.mark.parametrize("offset", OFFSETS)
def test_cross_kernel_of_one_test_point_far_from_the_training_mean(offset):
    """A cross kernel k(X_test, X_train) uses one shift for both arguments: one test point, or test points at the
    edge of the training data, give the exact kernel (the difference form takes over where the shift is far).
    One sample: K = [[1]], and its raw-X column is [1]."""
    X = _shifted(_data(30, 3, 2, offset, spread=(40.0, 1.0, 1.0)), offset)
    for Z in (X[:1], X[[3]] + _step(offset), X[X[:, 0].argsort()[-4:]]):
        for sigma in (0.25, 2.0):
            assert _err(rbf_kernel(Z, X, sigma=sigma), exact_rbf(Z, X, 1.0 / sigma**2)) <= TOL["kernel"]
            assert _err(rbf_kernel(X, Z, sigma=sigma), exact_rbf(X, Z, 1.0 / sigma**2)) <= TOL["kernel"]
    assert np.array_equal(rbf_kernel(X[:1], sigma=0.3), np.ones((1, 1)))
    assert np.array_equal(_qmatrix.get_col(RawKernel(X[:1], "rbf", sigma=0.3).numba_q(), 0), np.ones(1))


def test_two_far_apart_clusters_use_the_difference_form():
    """A feature whose values form two clusters 1.7e9 apart (a timestamp next to zeros): the shift (the mean) is far
    from both, and the near pairs inside each cluster are recomputed in the difference form; exact to 1e-12."""
    A = _data(24, 2, 3, 1.7e9, spread=(40.0, 1.0))
    X = A.copy()
    X[12:, 0] += 1.7e9
    assert np.array_equal(X[12:, 0] - 1.7e9, A[12:, 0])
    for sigma in (0.5, 4.0):
        K = exact_rbf(X, X, 1.0 / sigma**2)
        assert _err(rbf_kernel(X, sigma=sigma), K) <= TOL["kernel"]
        raw = RawKernel(X, "rbf", sigma=sigma, cache_size=1e-6)
        Q = raw.numba_q()
        assert max(_err(_qmatrix.get_col(Q, p), K[p]) for p in range(X.shape[0])) <= TOL["kernel"]


@pytest.mark.parametrize("offset, step, sigma", [(1e3, 2.0**-14, 0.5), (1.7e9, 128.0, 400.0)])
def test_float32_data_give_the_kernel_of_their_float64_values(offset, step, sigma):
    """float32 data (a feature at 1e3, or a timestamp at 1.7e9 whose float32 spacing is 128, next to a feature of
    order 1): the kernel of their exact float64 values, through the dense kernel and the raw-X seam."""
    rng = np.random.default_rng(4)
    t = offset + step * rng.integers(-300, 300, 12)
    X32 = np.column_stack([t, rng.standard_normal(12)]).astype(np.float32)
    assert np.array_equal(X32[:, 0].astype(np.float64), t)
    X64 = X32.astype(np.float64)
    K = exact_rbf(X64, X64, 1.0 / sigma**2)
    assert _err(rbf_kernel(X32, sigma=sigma), K) <= TOL["kernel"]
    Q = RawKernel(X32, "rbf", sigma=sigma).numba_q()
    assert max(_err(_qmatrix.get_col(Q, p), K[p]) for p in range(12)) <= TOL["kernel"]


@pytest.mark.parametrize("offset", BIG)
def test_sigma_limits_on_offset_data(offset):
    """sigma -> 0 (1e-150, sigma^2 = 1e-300): K is 1 exactly on duplicates and 0 elsewhere; sigma -> inf (1e150):
    every value is 1; sigma = 1e-200 (sigma^2 underflows) is refused naming sigma, by the dense kernels, the raw-X
    seam and an estimator."""
    X = _shifted(_data(12, 2, 6, offset), offset)
    X[5] = X[2]  # a duplicate
    same = np.all(X[:, None, :] == X[None, :, :], axis=-1).astype(float)
    for kern in (rbf_kernel(X, sigma=1e-150), rbf_kernel(X, X, sigma=1e-150)):
        assert np.array_equal(kern, same)
    Q = RawKernel(X, "rbf", sigma=1e-150).numba_q()
    assert np.array_equal(np.array([_qmatrix.get_col(Q, p) for p in range(12)]), same)
    assert np.array_equal(rbf_kernel(X, sigma=1e150), np.ones((12, 12)))
    for make in (lambda: rbf_kernel(X, sigma=1e-200), lambda: gaussian_kernel(X, sigma=1e-200),
                 lambda: RawKernel(X, "rbf", sigma=1e-200), lambda: RawKernel(X, "gaussian", sigma=1e-200),
                 lambda: L1SVC(sigma=1e-200).fit(X, np.arange(12) % 2)):
        with pytest.raises(ValueError, match=r"sigma = 1e-200 is out of range"):
            make()


def test_huge_offset_whose_distances_fit_is_computed_and_overflow_is_still_refused():
    """Offset 1e160 and a spread of a few units in its last place: the distances (about 1e289) fit in float64 although
    the squared norms (1e320) do not, so the kernel is computed (exactly), not refused; where the distances
    themselves overflow (X * 1e200, or far-apart Z) the kernels still refuse, naming X and its scale."""
    ulp = np.spacing(1e160)
    X = np.array([[1e160], [1e160 + ulp], [1e160 + 3 * ulp], [1e160 - 2 * ulp]])
    sigma = 2.0 * ulp
    K = exact_rbf(X, X, 1.0 / sigma**2)
    assert _err(rbf_kernel(X, sigma=sigma), K) <= TOL["kernel"]
    Q = RawKernel(X, "rbf", sigma=sigma).numba_q()
    assert max(_err(_qmatrix.get_col(Q, p), K[p]) for p in range(4)) <= TOL["kernel"]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(ValueError, match=r"overflows float64: X has entries up to"):
            rbf_kernel(_data(6, 2, 7, 0.0) * 1e200)
        with pytest.raises(ValueError, match=r"X has entries up to .* and Z up to"):
            rbf_kernel(X, -X)


# ------------------------------------------------------------------------------------------------
# the raw-X seam of the SMO engine
# ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("offset", OFFSETS)
@pytest.mark.parametrize("kernel, rate", [("rbf", 1.0 / 1.5**2), ("gaussian", 0.5 / 1.5**2)])
def test_raw_kernel_columns_are_exact_at_any_offset(kernel, rate, offset):
    """RawKernel's compiled columns (get_col, what the SMO reads), its blocks, matvec and cross kernel, against the
    exact kernel; the linear and polynomial columns stay those of the data as given (x'z is not translation-invariant,
    the offset is the user's)."""
    X0 = _data(40, 3, 8, offset)
    X = _shifted(X0, offset)
    K = longdouble_rbf(X, X, rate)
    raw = RawKernel(X, kernel, sigma=1.5, cache_size=1e-6)  # 2 slots: every column is recomputed
    Q = raw.numba_q()
    cols = np.array([_qmatrix.get_col(Q, p).copy() for p in range(40)])
    assert _err(cols, K) <= TOL["kernel"]
    assert _err(raw.block(np.arange(5), np.arange(40)), K[:5]) <= TOL["kernel"]
    v = np.random.default_rng(0).standard_normal(40)
    assert _err(raw.matvec(v), K @ v) <= 40 * TOL["kernel"]
    Z = _shifted(_data(6, 3, 9, offset), offset)
    assert _err(raw.cross(Z), longdouble_rbf(Z, X, rate)) <= TOL["kernel"]
    ref0 = _qmatrix.RawKernel(X0, kernel, sigma=1.5).numba_q()
    assert _err(cols, np.array([_qmatrix.get_col(ref0, p) for p in range(40)])) <= TOL["kernel"]
    lin = RawKernel(X, "linear").numba_q()
    assert np.array_equal(np.array([_qmatrix.get_col(lin, p) for p in range(40)]), linear_kernel(X))
    poly = RawKernel(X, "poly", c=1e18, d=2).numba_q()
    np.testing.assert_allclose(np.array([_qmatrix.get_col(poly, p) for p in range(40)]),
                               polynomial_kernel(X, c=1e18, d=2), rtol=1e-14)


# ------------------------------------------------------------------------------------------------
# the estimators (train kernel through RawKernel or kernel_matrix, predict through kernel_matrix)
# ------------------------------------------------------------------------------------------------
def _timestamps(n, seed, offset):
    """A timestamp-like feature (spread 50, on the grid of ``offset``) and a standard one; labels from a nonlinear
    rule, targets from the same function."""
    rng = np.random.default_rng(seed)
    t = _grid(rng.uniform(0.0, 50.0, n), offset)
    u = _grid(rng.standard_normal(n), offset)
    f = np.sin(t / 6.0) + 0.6 * u
    return np.column_stack([t, u]), np.where(f + 0.2 * rng.standard_normal(n) > 0, 1, -1), f


ESTIMATORS = [L1SVC(C=10.0, sigma=4.0, tol=1e-8), L2SVC(C=10.0, sigma=4.0, tol=1e-8), RLSClassifier(sigma=4.0),
              L1SVR(C=10.0, sigma=4.0, tol=1e-8), LSSVR(sigma=4.0)]


@pytest.mark.parametrize("offset", BIG)
@pytest.mark.parametrize("est", ESTIMATORS, ids=lambda e: type(e).__name__)
def test_estimators_on_offset_data_match_the_centred_fit(est, offset):
    """decision_function (predict for the regressors) on offset test data equals the centred fit's to 1e-9, and so
    does the training accuracy (score)."""
    Xc, y, f = _timestamps(120, 10, offset)
    target = f if "SVR" in type(est).__name__ else y
    Xo = _shifted(Xc, offset)
    Tc = _grid(Xc[:40] + [0.37109375, -0.125], offset)
    To = _shifted(Tc, offset)
    a = clone(est).fit(Xc, target)
    b = clone(est).fit(Xo, target)
    fa = a.decision_function(Tc) if hasattr(a, "decision_function") else a.predict(Tc)
    fb = b.decision_function(To) if hasattr(b, "decision_function") else b.predict(To)
    assert _err(fa, fb) <= TOL["decision"]
    assert b.score(Xo, target) == pytest.approx(a.score(Xc, target), abs=1e-12)
    if isinstance(est, (L1SVC, L2SVC)):
        assert b.status_ == a.status_ == "optimal"


@pytest.mark.parametrize("offset", BIG)
def test_l1svc_alpha_on_timestamps_is_optimal_for_the_exact_kernel(offset):
    """L1SVC on a raw timestamp feature: its alpha, on the exact kernel of its data, has the dual objective of the
    centred problem's optimum (the plain expansion reported "optimal" for an alpha far from it), and its training
    accuracy is the centred fit's."""
    Xc, y, _ = _timestamps(150, 11, offset)
    X = _shifted(Xc, offset)
    K = longdouble_rbf(X, X, 1.0 / 16.0)
    a = L1SVC(C=100.0, sigma=4.0, tol=1e-6).fit(Xc, y)
    b = L1SVC(C=100.0, sigma=4.0, tol=1e-6).fit(X, y)
    ys = np.where(y == b.classes_[1], 1.0, -1.0)
    opt = dual_objective(K, ys, a.alpha_)
    assert b.status_ == "optimal"
    assert abs(dual_objective(K, ys, b.alpha_) - opt) <= TOL["objective"] * max(1.0, abs(opt))
    assert b.score(X, y) == a.score(Xc, y)


@pytest.mark.parametrize("offset", BIG)
def test_median_distance_of_the_bayesian_level_3_is_translation_invariant(offset):
    """The default width range of 002's level 3 starts from the median pairwise distance: on timestamps it is the
    median of the centred data (the plain expansion gave 32 for 15)."""
    from svmref.solvers.bayes import median_distance

    Xc, _, _ = _timestamps(200, 12, offset)
    assert median_distance(_shifted(Xc, offset)) == pytest.approx(median_distance(Xc), rel=1e-12)


LINEAR = [L1SVC(C=10.0, kernel="linear", tol=1e-8), L2SVC(C=0.1, kernel="linear", tol=1e-8),
          LeastOneNormSVC(C=10.0, kernel="linear", tol=1e-8), LSSVC(C=0.01, kernel="linear"),
          L1SVR(C=10.0, kernel="linear", tol=1e-8), LSSVR(C=0.01, kernel="linear")]


@pytest.mark.parametrize("offset", [1e3] + BIG)
@pytest.mark.parametrize("est", LINEAR, ids=lambda e: type(e).__name__)
def test_linear_kernel_of_a_free_bias_model_is_translation_invariant(est, offset):
    """With a free bias (``y'alpha = 0``) the linear kernel of the centred features gives the same solution, and the
    estimators compute it so: on offset data the fit is the centred fit (decision values to 1e-9, the same training
    accuracy, the same certified label). Computed from the uncentred ``x'z`` (about 1e18 at 1e9, rounded by hundreds)
    the L1SVC was labelled "optimal" with 0.5 accuracy."""
    Xc, y, f = _timestamps(120, 13, offset)
    target = f if "SVR" in type(est).__name__ else y
    Xo = _shifted(Xc, offset)
    Tc = _grid(Xc[:40] + [0.37109375, -0.125], offset)
    a = clone(est).fit(Xc, target)
    b = clone(est).fit(Xo, target)
    fa = a.decision_function(Tc) if hasattr(a, "decision_function") else a.predict(Tc)
    fb = b.decision_function(_shifted(Tc, offset)) if hasattr(b, "decision_function") else b.predict(_shifted(Tc, offset))
    scale = max(1.0, float(np.max(np.abs(fa))))
    assert _err(fa, fb) <= TOL["decision"] * scale
    assert b.score(Xo, target) == pytest.approx(a.score(Xc, target), abs=1e-12)
    assert b.status_ == a.status_ == "optimal"


@pytest.mark.parametrize("est", LINEAR, ids=lambda e: type(e).__name__)
def test_linear_intercept_is_the_uncentred_models_bias(est):
    """``intercept_`` keeps scikit-learn's meaning, ``f(x) = sum_i dual_coef_i x_i'x + intercept_``, although the fit
    centres the features: on data with a moderate mean (3) the uncentred expansion gives ``decision_function`` to the
    rounding of its terms."""
    Xc, y, f = _timestamps(60, 14, 0.0)
    X = Xc + 3.0
    target = f if "SVR" in type(est).__name__ else y
    m = clone(est).fit(X, target)
    raw = m.dual_coef_ @ (m.support_vectors_ @ X.T) + m.intercept_
    got = m.decision_function(X) if hasattr(m, "decision_function") else m.predict(X)
    terms = np.abs(m.dual_coef_) @ np.abs(m.support_vectors_ @ X.T) + abs(m.intercept_)
    assert np.all(np.abs(raw - got) <= 64 * X.shape[0] * 2.0**-53 * (terms + np.abs(got)))
    assert np.allclose(m.X_offset_, X.mean(axis=0))


def test_rls_keeps_the_offset_in_its_linear_kernel():
    """The RLS has no bias (001 eq. (9)): an offset changes its model, so its linear kernel is the data's own."""
    Xc, y, _ = _timestamps(60, 15, 0.0)
    m = RLSClassifier(kernel="linear").fit(Xc + 3.0, y)
    assert m.X_offset_ is None

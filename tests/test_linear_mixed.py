"""The mixed-precision Cholesky path of the linear-system solvers (``svmref.solvers.linear._mixed_solve``): a float32
factor refined in float64 against the original K must give the float64 factorisation's answer, its stopping test
must be float64's backward error, the certificate's product taken from the refinement must be bounded as stated,
and the path must hand over to the float64 factorisation where it cannot work.

The instances are small: ``MIXED_MIN_N`` is lowered for each test so that the path runs at N = 300.
"""
from __future__ import annotations

import warnings

import numpy as np
import pytest
from scipy.linalg import LinAlgWarning

import svmref.solvers.linear as linear
from svmref.kernels import rbf_kernel
from svmref.solvers.linear import ls_svm, ls_svm_regression, rls


@pytest.fixture
def small_mixed(monkeypatch):
    """The mixed path from N = 64 on; ``force_float64()`` switches it off."""
    monkeypatch.setattr(linear, "MIXED_MIN_N", 64)

    def force_float64():
        monkeypatch.setattr(linear, "_MIXED_COND", 0.0)

    return force_float64


def blobs(N=300, seed=0, sigma=0.5):
    rng = np.random.default_rng(seed)
    h = N // 2
    X = np.r_[rng.normal([-0.3, 0.7], 0.25, size=(h, 2)), rng.normal([0.4, 0.5], 0.25, size=(N - h, 2))]
    return rbf_kernel(X, sigma=sigma), np.r_[-np.ones(h), np.ones(N - h)]


def exact_ls_svm(K, y, C):
    """The KKT system (2) in extended precision (long double Gaussian elimination through numpy's solve on the
    float64 system, then one refinement step with long double residuals)."""
    N = y.shape[0]
    A = np.zeros((N + 1, N + 1))
    A[0, 1:] = A[1:, 0] = 1.0
    A[1:, 1:] = K + np.eye(N) / C
    rhs = np.r_[0.0, y]
    z = np.linalg.solve(A, rhs)
    Al = A.astype(np.longdouble)
    for _ in range(3):
        r = rhs.astype(np.longdouble) - Al @ z.astype(np.longdouble)
        z = z + np.linalg.solve(A, r.astype(np.float64))
    return z[1:], z[0]


@pytest.mark.parametrize("C", [1.0, 100.0, 1000.0])
def test_mixed_path_gives_the_float64_answer(small_mixed, C):
    K, y = blobs()
    mixed = ls_svm(K, y, C)
    assert mixed.info["precision"] == "mixed" and mixed.status == "optimal"
    small_mixed()
    full = ls_svm(K, y, C)
    assert full.info["precision"] == "float64"
    beta, b = exact_ls_svm(K, y, C)
    # both within eps cond_1 of the exact solution (b, beta) of system (2), normwise: the error of the whole solution
    # vector relative to its own size, the accuracy a float64 factorisation promises
    scale = max(abs(b), float(np.max(np.abs(beta))))
    for r in (mixed, full):
        acc = max(r.info["expected_rel_error"], 1e-13)
        assert max(abs(r.b - b), float(np.max(np.abs(r.coef - beta)))) <= 10 * acc * scale
    assert mixed.duality_gap <= mixed.gap_tol
    # the floor of the certificate from the refinement's product is not looser than a fresh product's
    assert mixed.gap_floor <= 2.0 * full.gap_floor


def test_mixed_refinement_stops_at_float64_backward_error(small_mixed):
    K, y = blobs(seed=1)
    N = y.shape[0]
    shift = 1.0 / 30.0
    R = np.asfortranarray(np.c_[y, np.ones(N)])
    rows = np.sum(np.abs(K), axis=1)
    out = linear._mixed_solve(K, shift, R, rows, 1.0)
    assert out is not None
    X, used, _, report, _, P = out
    assert used == "cholesky" and report["precision"] == "mixed"
    A = K.astype(np.longdouble) + shift * np.eye(N, dtype=np.longdouble)
    r = R.astype(np.longdouble) - A @ X.astype(np.longdouble)
    anorm = float(np.max(rows + shift))
    eps = np.finfo(np.float64).eps
    for j in range(2):
        # dsposv's test, recomputed in long double: the residual at float64's rounding level
        assert float(np.max(np.abs(r[:, j]))) <= 2 * np.sqrt(N) * anorm * eps * float(np.max(np.abs(X[:, j])))
    # the product handed to the certificate is A X (its float64 rounding only)
    assert float(np.max(np.abs(P - (A @ X.astype(np.longdouble)).astype(np.float64)))) <= N * eps * anorm * np.max(
        np.abs(X))


@pytest.mark.parametrize("C", [1.0, 300.0])
def test_certificate_product_from_the_refinement_is_within_its_bound(small_mixed, C):
    K, y = blobs(seed=2)
    N = y.shape[0]
    rows = np.sum(np.abs(K), axis=1)
    beta_s, b, *_, scaled = linear._ls_svm_kkt(K, y, C, "cholesky", 1e-10, None, False, "ls_svm", rows,
                                               float(np.max(np.abs(K))))
    s, rows_s, shift, kbeta = scaled
    assert s == 1.0 and kbeta is not None
    Kb, err = kbeta
    exact = (K.astype(np.longdouble) + np.eye(N, dtype=np.longdouble) * shift) @ beta_s.astype(np.longdouble)
    actual = float(np.max(np.abs(Kb - exact.astype(np.float64))))
    assert actual <= err
    # and the certificate computed from it equals the one from a fresh product, to within the floor
    fused = ls_svm(K, y, C)
    small_mixed()
    fresh = linear._ls_certificate(lambda V: K @ V + shift * V, y, C, y * fused.coef, fused.coef, fused.b,
                                   "classification", rows)
    assert abs(fused.info["duality_gap_abs"] - fresh[1]) <= fused.info["gap_floor_abs"] + fresh[2]


def test_mixed_path_is_not_tried_where_it_does_not_pay(small_mixed, monkeypatch):
    K, y = blobs(seed=3)
    # C so large that u_32 ||A||_1 C is far above the gate: the float64 factorisation, directly
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert ls_svm(K, y, 1e7).info["precision"] == "float64"
    # below MIXED_MIN_N: float64
    monkeypatch.setattr(linear, "MIXED_MIN_N", 10_000)
    assert ls_svm(K, y, 1.0).info["precision"] == "float64"


def test_mixed_path_hands_an_indefinite_matrix_to_the_float64_fallback(small_mixed):
    """A K with a clearly negative eigenvalue: spotrf breaks down, the float64 path then finds it indefinite and
    uses LDL', exactly as without the mixed path."""
    K, y = blobs(seed=4)
    N = y.shape[0]
    v = np.random.default_rng(0).normal(size=N)
    v /= np.linalg.norm(v)
    Kneg = K - 50.0 * np.outer(v, v)
    with pytest.warns(LinAlgWarning, match="not positive definite"):
        res = ls_svm_regression(Kneg, y, 1.0)
    assert res.method == "ldl" and res.status == "numerical_issue"


def test_rls_on_the_mixed_path_gives_the_float64_answer(small_mixed):
    K, y = blobs(seed=5)
    t = y + 0.1 * np.random.default_rng(1).normal(size=y.shape[0])
    gamma = 1e-3
    mixed = rls(K, t, gamma)
    assert mixed.info["precision"] == "mixed" and mixed.status == "optimal"
    N = y.shape[0]
    c = np.linalg.solve(K + N * gamma * np.eye(N), t)
    assert float(np.max(np.abs(mixed.c - c))) <= 1e-10 * float(np.max(np.abs(c)))


@pytest.mark.parametrize("order", ["C", "F"])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_sym_matmat_reads_the_factorised_triangle_in_either_memory_order(order, dtype):
    """``sym_matmat`` (BLAS symv) is ``K V`` for a symmetric K, and for a K that is symmetric only to a tolerance it
    uses the entries ``K[i, j]``, ``i <= j`` -- the triangle ``potrf``/``spotrf`` factorise -- in C and in Fortran
    order alike, for one column and for several."""
    rng = np.random.default_rng(7)
    N = 37
    A = rng.normal(size=(N, N))
    upper = np.triu(A) + np.triu(A, 1).T           # the symmetric matrix of the entries i <= j
    K = np.array(A, dtype=dtype, order=order)      # not symmetric: the lower triangle is noise
    V = rng.normal(size=(N, 3))
    tol = 1e-12 if dtype == np.float64 else 1e-4
    for W in (V, V[:, 0]):
        got = linear.sym_matmat(K, W)
        assert got.dtype == dtype
        want = upper.astype(dtype).astype(np.float64) @ W
        assert float(np.max(np.abs(got - want))) <= tol * float(np.max(np.abs(want)))


def test_mixed_path_gives_the_same_answer_for_a_fortran_ordered_K(small_mixed):
    K, y = blobs(seed=6)
    rc = ls_svm(K, y, 10.0)
    rf = ls_svm(np.asfortranarray(K), y, 10.0)
    assert rc.info["precision"] == rf.info["precision"] == "mixed"
    assert float(np.max(np.abs(rc.coef - rf.coef))) <= 1e-12 * float(np.max(np.abs(rc.coef)))

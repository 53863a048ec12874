"""Fixed-size LS-SVM (svmref.solvers.fixed_size; the estimators FixedSizeLSSVR / FixedSizeLSSVC): the blockwise
primal fit against the cvxpy primal of 004 eq. (1) on the same Nystrom features, against the dual LS-SVM solve on
the Nystrom kernel judged by verify, the Nystrom kernel identity, the entropy selection, Dask, the bar, bad input.

Tolerances come from the certificates: the fit's own bound (duality_gap + gap_floor) plus the reference's
(certificate["rel_error_bound"]), never a fixed number of digits.
"""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import svmref.formulations as F
from svmref import verify
from svmref.kernels import kernel_matrix
from svmref.solvers import linear
from svmref.solvers.estimators import FixedSizeLSSVC, FixedSizeLSSVR
from svmref.solvers.fixed_size import NystromMap, fixed_size_ls_svm, renyi_entropy, select_prototypes
from svmref.verify.data import Instance

U = 2.0 ** -53


def _data(n=300, d=2, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-3, 3, (n, d))
    return X, np.sin(X[:, 0]) * np.cos(X[:, -1]) + 0.1 * rng.normal(size=n)


def _reference(Phi, y, C):
    sol = F.solve(F.get("ls_svm_regression").primal(None, y, C=C, X=Phi))
    assert sol.certified
    return sol


def _ref_bound(sol):
    """The reference's relative error bound with its floating-point floor."""
    r = sol.certificate["residuals"]
    return r["rel_error_bound"] + r["rel_floor"]


def _agrees(res, sol):
    bound = (res.duality_gap + res.gap_floor + _ref_bound(sol)) * abs(sol.objective)
    return abs(res.objective - sol.objective) <= bound, (res.objective, sol.objective, bound)


@pytest.mark.parametrize("C, sigma, M", [(10.0, 1.0, 20), (1e-3, 1.0, 20), (1e4, 0.5, 40), (10.0, 1e-3, 15),
                                         (10.0, 1e3, 10)])
def test_the_blockwise_fit_solves_the_cvxpy_primal_on_its_features(C, sigma, M):
    """004 eq. (1) on phi(x) (the cvxpy model, certified): the same objective within the two bounds, and the same b
    and w up to what the objective bound allows (the problem is strongly convex in w with modulus 1)."""
    X, y = _data()
    P = X[select_prototypes(X, M, sigma, random_state=0)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = fixed_size_ls_svm(X, y, C, sigma=sigma, prototypes=P, block_size=37)
    assert res.status == "optimal", res.message
    Phi = res.map.transform(X)
    sol = _reference(Phi, y, C)
    ok, why = _agrees(res, sol)
    assert ok, why
    # the objective of the returned (w, b) itself, evaluated here on the features (b included), with its rounding
    e = y - Phi @ res.w - res.b
    direct = 0.5 * res.w @ res.w + 0.5 * C * e @ e
    e_err = (Phi.shape[1] + 4) * U * (np.abs(Phi) @ np.abs(res.w) + np.abs(y) + abs(res.b))
    floor = (y.size + 4) * U * direct + C * np.abs(e) @ e_err + C * e_err @ e_err
    bound = (res.duality_gap + res.gap_floor + _ref_bound(sol)) * abs(sol.objective) + floor
    assert abs(direct - sol.objective) <= bound, (direct, sol.objective, bound)
    # |w - w*|^2 / 2 <= P(w) - P* (strong convexity in w, modulus 1): both within the bounds of the objectives
    slack = 2.0 * (res.duality_gap + res.gap_floor + 2 * _ref_bound(sol)) * abs(sol.objective)
    assert np.linalg.norm(res.w - sol.values["W"]) <= np.sqrt(slack) + 1e-12 * np.linalg.norm(res.w)


def test_the_features_inner_products_are_the_nystrom_kernel():
    """phi(x)'phi(z) = k(x, P) K_PP^-1 k(P, z) (K_PP well conditioned here: the inverse by a solve, not our T)."""
    X, _ = _data(120)
    P = X[:15]
    fmap = NystromMap.fit(P, 1.0)
    Kpp = kernel_matrix(P, None, kernel="rbf", sigma=1.0)
    Kxp = kernel_matrix(X, P, kernel="rbf", sigma=1.0)
    cond = np.linalg.cond(Kpp)
    assert fmap.rank == 15 and cond < 1e8
    nys = Kxp @ np.linalg.solve(Kpp, Kxp.T)
    Phi = fmap.transform(X)
    assert np.max(np.abs(Phi @ Phi.T - nys)) <= 100 * 15 * U * cond * np.max(np.abs(nys))


def test_the_fit_is_the_dual_ls_svm_on_the_nystrom_kernel_as_verify_judges_it():
    """An independent route: the fit's alpha = C e (004 eq. (2): alpha_i = C e_i) and b, judged by verify's
    ls_svm_regression spec on K = Phi Phi' (a linear kernel on the features), pass; so does the dual solve there, and
    the two predict the same."""
    X, y = _data(150)
    C = 10.0
    res = fixed_size_ls_svm(X, y, C, sigma=1.0, n_prototypes=20, random_state=1, block_size=40)
    Phi = res.map.transform(X)
    e = y - Phi @ res.w - res.b
    inst = Instance("nystrom-150", Phi, y, Phi[:20], "linear", {}, {"C": C})
    report = verify.check(lambda K, y, C: (C * e, res.b), "ls_svm_regression", [inst])
    assert report[0].verdict == "pass", (report[0].reason, report[0].notes)
    dual = linear.ls_svm_regression(Phi @ Phi.T, y, C)
    f_dual = Phi @ (Phi.T @ dual.alpha) + dual.b
    f_ours = res.decision_function(X)
    assert np.max(np.abs(f_dual - f_ours)) <= 1e-8 * np.max(np.abs(y)), np.max(np.abs(f_dual - f_ours))


def test_the_block_size_changes_only_the_rounding():
    X, y = _data(500)
    P = X[:25]
    one = fixed_size_ls_svm(X, y, 100.0, sigma=1.0, prototypes=P, block_size=500)
    many = fixed_size_ls_svm(X, y, 100.0, sigma=1.0, prototypes=P, block_size=7)
    assert (one.n_blocks, many.n_blocks) == (1, 72)
    f1, f2 = one.decision_function(X), many.decision_function(X)
    assert np.max(np.abs(f1 - f2)) <= 1e-9 * np.max(np.abs(f1)), np.max(np.abs(f1 - f2))


def test_the_selection_raises_the_entropy_and_is_reproducible():
    X, _ = _data(400)
    idx = select_prototypes(X, 30, 1.0, random_state=3)
    assert np.array_equal(idx, select_prototypes(X, 30, 1.0, random_state=3))
    assert idx.size == np.unique(idx).size == 30
    start = np.random.RandomState(3).choice(400, 30, replace=False)  # the selection's own starting subset
    assert renyi_entropy(X[idx], 1.0) > renyi_entropy(X[start], 1.0)
    none = select_prototypes(X, 30, 1.0, n_iter=0, random_state=3)
    assert np.array_equal(none, np.sort(start))


def test_a_dask_array_gives_the_local_coefficients():
    """Chunks over rows reduced as Dask tasks: the coefficients of the local fit to 1e-10 (other block boundaries:
    rounding only)."""
    da = pytest.importorskip("dask.array", reason="dask is not installed (svmref[dask])")
    X, y = _data(600)
    P = X[:30]
    local = fixed_size_ls_svm(X, y, 10.0, sigma=1.0, prototypes=P, block_size=256)
    remote = fixed_size_ls_svm(da.from_array(X, chunks=(97, 2)), da.from_array(y, chunks=97), 10.0, sigma=1.0,
                               prototypes=P)
    assert remote.n_blocks == 7
    scale = np.max(np.abs(local.beta))
    assert np.max(np.abs(remote.beta - local.beta)) <= 1e-10 * scale
    assert abs(remote.b - local.b) <= 1e-10 * max(abs(local.b), 1.0)
    same = fixed_size_ls_svm(X, y, 10.0, sigma=1.0, prototypes=P, block_size=97)  # the chunks as blocks: the same sums
    assert np.array_equal(remote.w, same.w) and remote.b == same.b


@pytest.mark.parametrize("blas_threads", [1, 2])
def test_the_coefficients_do_not_depend_on_the_threads(blas_threads):
    """Each block's sums are rounded on one BLAS thread and added in the blocks' order, the M x M solve on one thread:
    n_jobs and BLAS's own thread count change nothing, to the last bit."""
    from threadpoolctl import threadpool_limits

    X, y = _data(20_000)
    P = X[:200]  # blocks of 4096 x 202 and a 200 x 200 solve: sizes where BLAS would use its threads
    base = fixed_size_ls_svm(X, y, 10.0, sigma=1.0, prototypes=P, block_size=4096, n_jobs=1)
    with threadpool_limits(blas_threads):
        for jobs in (1, 2, 3):
            other = fixed_size_ls_svm(X, y, 10.0, sigma=1.0, prototypes=P, block_size=4096, n_jobs=jobs)
            assert np.array_equal(other.w, base.w) and other.b == base.b, (blas_threads, jobs)


def test_the_fit_shows_a_bar_counting_its_blocks(capsys):
    X, y = _data(300)
    fixed_size_ls_svm(X, y, 1.0, sigma=1.0, prototypes=X[:10], block_size=64, progress=True)
    err = capsys.readouterr().err
    assert "fixed-size fit: 300 rows in 5 block(s) of 64, 10 prototypes (rank 10)" in err and "5/5" in err, err
    fixed_size_ls_svm(X, y, 1.0, sigma=1.0, prototypes=X[:10], block_size=64)  # stderr is not a terminal here
    assert capsys.readouterr().err == ""


def test_a_wrong_solve_is_not_labelled_optimal(monkeypatch):
    """The label comes from the residual of the normal equations: a solve off by 1e-3 (an objective error of about
    1e-6 relative, above gap_tol = 1e-8) is 'suboptimal'."""
    import scipy.linalg

    from svmref.solvers import _result

    X, y = _data(200)
    real = scipy.linalg.cho_solve
    monkeypatch.setattr(scipy.linalg, "cho_solve", lambda f, b: real(f, b) * (1 + 1e-3))
    with pytest.warns(_result.SuboptimalWarning, match="fixed_size_ls_svm"):
        res = fixed_size_ls_svm(X, y, 10.0, sigma=1.0, prototypes=X[:20])
    assert res.status == "suboptimal"


@pytest.mark.parametrize("kwargs, match", [
    ({"n_prototypes": 0}, "n_prototypes must be an integer in \\[1, n_samples = 50\\]"),
    ({"n_prototypes": 51}, "n_prototypes must be an integer"),
    ({}, "give exactly one of n_prototypes"),
    ({"n_prototypes": 5, "prototypes": np.zeros((5, 2))}, "give exactly one of n_prototypes"),
    ({"prototypes": np.zeros((5, 3))}, "prototypes must have the 2 features of X"),
    ({"n_prototypes": 5, "block_size": 0}, "block_size must be a positive integer"),
    ({"n_prototypes": 5, "sigma": -1.0}, "sigma"),
    ({"n_prototypes": 5, "n_jobs": 0}, "n_jobs must be a positive integer or None"),
])
def test_bad_input_names_the_parameter(kwargs, match):
    X, y = _data(50)
    kwargs = {"sigma": 1.0, **kwargs}
    with pytest.raises(ValueError, match=match):
        fixed_size_ls_svm(X, y, 1.0, **kwargs)


def test_the_estimators_model_is_an_expansion_over_the_selected_rows():
    X, y = _data(400)
    reg = FixedSizeLSSVR(n_prototypes=25, C=10.0, sigma=1.0, random_state=0, block_size=100).fit(X, y)
    assert np.array_equal(reg.prototypes_, X[reg.prototype_indices_])
    assert set(reg.support_) <= set(reg.prototype_indices_)
    K = kernel_matrix(X, X[reg.support_], kernel="rbf", sigma=1.0)
    assert np.allclose(reg.predict(X), K @ reg.dual_coef_ + reg.intercept_, rtol=0, atol=1e-12 * np.abs(y).max())
    labels = np.where(y > 0, "up", "down")
    clf = FixedSizeLSSVC(n_prototypes=25, C=10.0, sigma=1.0, random_state=0).fit(X, labels)
    same = fixed_size_ls_svm(X, np.where(labels == "up", 1.0, -1.0), 10.0, sigma=1.0, prototypes=clf.prototypes_)
    assert np.allclose(clf.decision_function(X), same.decision_function(X), rtol=0, atol=1e-10)

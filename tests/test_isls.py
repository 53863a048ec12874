"""ISLS-SVM (004, Algorithm 1): :mod:`svmref.solvers.isls`.

* every iteration's solution equals the weighted primal (004 eq. (3)) solved by cvxpy with the same
  weights (patterns that left the model: ``alpha_i = 0`` imposed, the limit ``lambda_i -> inf``), on the QR
  path, the Gram-Cholesky path, the mixed-precision CG path and the Cholesky + refinement paths;
* the reduced solve equals the plain N x N system (4), and the whole run equals a plain loop that never drops;
* scale: invariant to ``y -> t y`` and ``(K, C) -> (s K, C / s)`` (``weight_scale="auto"``); 004 verbatim
  (``weight_scale=1``) is equivariant under ``(K, y, C) -> (s K, sqrt(s) y, C / s)`` and equals the auto
  form for +-1 labels and a unit-diagonal kernel;
* Ripley's data (MASS synth.tr / synth.te) at C in {1, 10, 100, 300, 1000}: within 3 points of the
  LS-SVM's test error with at most 30 support vectors; motorcycle with raw targets: finite MSE on 10 splits;
* a diverging run raises :class:`ISLSDivergenceError` naming the iteration; labels that are not +-1 are refused.

The weighted problems have unique solutions (the objective (3) is strictly convex in (alpha, xi) and
b is fixed by the constraints), so alpha and b are compared directly.
"""
from __future__ import annotations

import warnings

import cvxpy as cp
import numpy as np
import pytest
import scipy.linalg
from threadpoolctl import threadpool_limits

import svmref.formulations as F
import svmref.solvers._isls_paths as isls_paths
from svmref import load_dataset
from svmref.kernels import kernel_matrix, rbf_kernel
from svmref.solvers._result import ConvergenceWarning
from svmref.solvers.isls import ISLSDivergenceError, isls_svm, solve_weighted_system
from svmref.solvers.linear import ls_svm, ls_svm_regression

# ---- tolerances (one table) ----------------------------------------------------------------------
TOL = {
    "ref": 1e-8,           # |alpha - alpha_cvxpy|_inf / max(1, |alpha|_inf), and |b - b_cvxpy|
    "ref_obj": 1e-7,       # relative, optimal value of (3) vs -(dual objective)
    "plain": 1e-9,         # reduced solve vs plain N x N system (4), relative
    "loop": 1e-7,          # whole run vs a plain loop that never drops, relative, every iteration
    "paths": 1e-9,         # any other path vs the QR path, relative, every iteration
    "scale": 1e-9,         # scaled run vs unscaled run (after undoing the scale), relative
    # Ripley: at each C, ISLS within 3 points of the LS-SVM's test error (30 of the 1000 synth.te
    # patterns), with at most 30 support vectors (004 Table 1: 13 SVs, +0.6 points)
    "ripley_err_slack": 0.03,
    "ripley_max_sv": 30,
}

#: Ripley: RBF exp(-|x - z|^2 / sigma^2) (004 §4) with sigma = 1, the kernel width at which an earlier
#: implementation predicted one class at C = 300 (docs/isls_notes.md §2); at sigma = 0.5 Algorithm 1 itself
#: (a plain numpy loop) is 2.1 / 5.2 points worse than the LS-SVM at C = 300 / 1000 (docs/isls_notes.md §5).
RIPLEY_SIGMA = 1.0
RIPLEY_CS = (1.0, 10.0, 100.0, 300.0, 1000.0)
#: Motorcycle (raw times in ms, raw accelerations in g): sigma = 5 ms, C = 10 (docs/isls_notes.md §4).
MCYCLE_SIGMA, MCYCLE_C = 5.0, 10.0


def make(N=25, seed=1, task="classification", sigma=1.0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(N, 2))
    K = rbf_kernel(X, sigma=sigma)
    if task == "classification":
        y = np.where(X[:, 0] + 0.3 * rng.normal(size=N) > 0, 1.0, -1.0)
        y[:2] = (1.0, -1.0)
    else:
        y = np.sin(2 * X[:, 0]) + 0.1 * rng.normal(size=N)
    return X, K, y


def rel(a, b):
    a, b = np.asarray(a, float), np.asarray(b, float)
    return float(np.max(np.abs(a - b)) / max(1.0, float(np.max(np.abs(b)))))


def plain_system4(K, y, C, w):
    """System (4) built and solved densely: H = K diag(w) K + I/C (w = 1/lambda), then alpha = w K beta."""
    N = K.shape[0]
    A = np.zeros((N + 1, N + 1))
    A[0, 1:] = 1.0
    A[1:, 0] = 1.0
    A[1:, 1:] = (K * w[None, :]) @ K + np.eye(N) / C
    s = np.linalg.solve(A, np.r_[0.0, y])
    return w * (K @ s[1:]), s[0], s[1:]


def check_against_cvxpy(res, K, y, C):
    f = F.get("sparse_ls_svm")
    sol = None
    for t, w in enumerate(res.weights_history, start=1):
        S = w > 0
        lam = np.where(S, 1.0 / np.where(S, w, 1.0), 1.0)        # lambda = 1/w; placeholder where w = 0
        prob = f.primal(K, y, C=C, lam=lam)
        alpha_var = next(v for v in prob.variables() if v.name() == "alpha")
        cons = list(prob.constraints)
        if not S.all():                                          # lambda_i = inf: alpha_i = 0
            cons.append(alpha_var[np.flatnonzero(~S)] == 0)
        # ECOS (the default cross-check) fails on weights up to 1e17; CLARABEL alone, tight.
        sol = F.solve(cp.Problem(prob.objective, cons), cross_check=False)
        alpha, b, _ = res.history[t]
        assert rel(alpha, sol.values["alpha"]) < TOL["ref"], f"iteration {t}"
        assert abs(b - sol.values["b"]) < TOL["ref"] * max(1.0, abs(sol.values["b"])), f"iteration {t}"
    # final objective: the dual of (3) (min sign) at the last weights, p* = -d*
    assert abs(-res.objective - sol.objective) / max(1.0, abs(sol.objective)) < TOL["ref_obj"]


# ---- every iteration against cvxpy ---------------------------------------------------------------
@pytest.mark.parametrize("task", ["classification", "regression"])
@pytest.mark.parametrize("seed,C", [(1, 5.0), (2, 5.0), (3, 50.0)])
def test_every_iteration_equals_cvxpy_weighted_primal(task, seed, C):
    X, K, y = make(seed=seed, task=task)
    res = isls_svm(K, y, C, task=task)
    assert res.converged and len(res.history) == res.n_iter + 1
    check_against_cvxpy(res, K, y, C)


@pytest.mark.parametrize("path", ["pcg", "cholesky32", "cholesky"])
@pytest.mark.parametrize("task", ["classification", "regression"])
def test_large_set_paths_every_iteration_equal_cvxpy(task, path, monkeypatch):
    """Each solver of the large active sets, forced for every iteration (QR_MAX_M = 0): the mixed-precision CG
    with the Nystrom preconditioner (float32 inner solves, float64 outer refinement), and the Cholesky factor of
    I + c A_c'A_c in float32 and in float64, each refined against the exact operator."""
    monkeypatch.setattr(isls_paths, "QR_MAX_M", 0)
    monkeypatch.setattr(isls_paths, "LARGE_PATHS", (path,))
    X, K, y = make(N=30, seed=2, task=task)
    res = isls_svm(K, y, 5.0, task=task)
    assert res.converged and set(res.info["path"]) == {path}
    check_against_cvxpy(res, K, y, 5.0)


@pytest.mark.parametrize("task", ["classification", "regression"])
def test_pcg_with_a_crude_preconditioner_every_iteration_equals_cvxpy(task, monkeypatch):
    """A Nystrom preconditioner from 3 of 40 columns: the CG takes many steps, the iterates are still those of (3)
    (the float64 residual certifies each one, whatever the preconditioner)."""
    monkeypatch.setattr(isls_paths, "QR_MAX_M", 0)
    monkeypatch.setattr(isls_paths, "LARGE_PATHS", ("pcg",))
    monkeypatch.setattr(isls_paths, "NYSTROM_RANK", 3)
    X, K, y = make(N=40, seed=7, task=task, sigma=0.7)
    res = isls_svm(K, y, 5.0, task=task)
    assert res.converged and set(res.info["path"]) == {"pcg"}
    assert max(inner for _, inner in res.info["cg_steps"]) > 3          # the CG did iterate
    check_against_cvxpy(res, K, y, 5.0)


def test_lowrank_path_every_iteration_equals_cvxpy_and_qr(monkeypatch):
    """A kernel of low numerical rank (polynomial of degree 2 on 2-D data: rank <= 6): the pivoted-Cholesky
    preconditioner with refinement against the exact K gives the iterates of (3) to 1e-8 and those of the QR path."""
    rng = np.random.default_rng(8)
    X = rng.normal(size=(40, 2))
    K = kernel_matrix(X, kernel="poly", c=1.0, d=2)
    y = np.where(X[:, 0] * X[:, 1] + 0.2 * rng.normal(size=40) > 0, 1.0, -1.0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        monkeypatch.setattr(isls_paths, "SMALL_PATHS", ("qr",))
        qr = isls_svm(K, y, 1.0, max_iter=8)
        monkeypatch.setattr(isls_paths, "QR_MAX_M", 0)
        low = isls_svm(K, y, 1.0, max_iter=8)
    assert set(qr.info["path"]) == {"qr"}
    assert "lowrank" in low.info["path"]
    for (a1, b1, _), (a2, b2, _) in zip(qr.history, low.history):
        assert rel(a2, a1) < TOL["paths"] and abs(b2 - b1) < TOL["paths"] * max(1.0, abs(b1))
    check_against_cvxpy(low, K, y, 1.0)


@pytest.mark.parametrize("task", ["classification", "regression"])
def test_every_path_equals_qr_path(task, monkeypatch):
    """Every solver gives the iterates of the QR path (backward stable) to 1e-9, iteration by iteration."""
    X, K, y = make(N=60, seed=3, task=task)
    monkeypatch.setattr(isls_paths, "SMALL_PATHS", ("qr",))
    qr = isls_svm(K, y, 10.0, task=task)
    assert set(qr.info["path"]) == {"qr"}
    runs = [((), "gram")] + [((p,), p) for p in ("pcg", "cholesky32", "cholesky")]
    for large, expect in runs:
        monkeypatch.setattr(isls_paths, "SMALL_PATHS", ("gram", "qr"))
        monkeypatch.setattr(isls_paths, "QR_MAX_M", 256 if not large else 0)
        if large:
            monkeypatch.setattr(isls_paths, "LARGE_PATHS", large)
        other = isls_svm(K, y, 10.0, task=task)
        assert set(other.info["path"]) == {expect}, (expect, other.info["path"])
        assert qr.n_iter == other.n_iter
        for (a1, b1, _), (a2, b2, _) in zip(qr.history, other.history):
            assert rel(a2, a1) < TOL["paths"] and abs(b2 - b1) < TOL["paths"] * max(1.0, abs(b1)), expect


def no_augmented(monkeypatch):
    """Keep the paths off the augmented refinement, so that their float64-residual and double-double certificates
    (what the paths fall back on where the augmented floor is too high) are exercised."""
    monkeypatch.setattr(isls_paths, "_augmented_enough", lambda system, v: False)


@pytest.mark.parametrize("augmented", [True, False])
@pytest.mark.parametrize("C", [1.0, 300.0])
@pytest.mark.parametrize("name", ["gram", "lowrank", "pcg", "cholesky32", "cholesky", "qr"])
def test_each_path_returns_its_iterate_with_its_certificate(name, C, augmented, monkeypatch):
    """Each path object on one weighted system (N) (N = 40, polynomial kernel of rank 6, so that the low-rank path
    starts; random weights): its Solution names the path, the certificate's kind agrees with the numbers it reports
    (``"augmented"``: its bound <= 1e-9; ``"residual"``: residual <= 1e-11; ``"backward error"``: backward error
    <= 32 u; at C = 300, ``||M||`` ~ 1e7, double-double refinement too), and ``v`` equals QR's to 1e-9.  With the
    augmented refinement kept off, the fallbacks.  A path may decline to certify only where its precision gate keeps
    the policy from calling it (the float32 factor at ``cond(M) u_32 > 0.05``)."""
    if not augmented:
        no_augmented(monkeypatch)
    rng = np.random.default_rng(8)
    X = rng.normal(size=(40, 2))
    K = kernel_matrix(X, kernel="poly", c=1.0, d=2)
    y = np.where(X[:, 0] * X[:, 1] + 0.2 * rng.normal(size=40) > 0, 1.0, -1.0)
    D = isls_paths.FitData(K, y)
    S, a = np.arange(40), np.sqrt(rng.uniform(0.01, 1.0, size=40))
    path = isls_paths.PATHS[name]
    sol = path.solve(isls_paths.WeightedSystem(D, S, a, C))
    cert = sol.certificate
    assert cert.path == name
    if not cert.accepted:
        A = (K - K.mean(axis=0)) * a[None, :]
        assert not path.usable(np.linalg.norm(np.eye(40) + C * A.T @ A, 2)), cert
        return
    if cert.kind == "augmented":
        assert augmented and name in ("gram", "lowrank", "cholesky32", "cholesky") and cert.residual <= 1e-9, cert
    elif cert.kind == "residual":
        assert cert.residual <= 1e-11
    elif cert.kind == "backward error":
        assert cert.backward_error <= 32 * np.finfo(float).eps / 2
    else:
        assert cert.kind == ("qr" if name == "qr" else "double-double"), cert
    assert rel(sol.v, isls_paths.solve_qr(D, S, a, C)) < TOL["paths"]


def test_default_paths_at_n_300_equal_qr_path(monkeypatch):
    """N = 300 (RBF in d = 5, full numerical rank): the default run takes the mixed-precision CG while the active set
    exceeds QR_MAX_M, with a Nystrom preconditioner of NYSTROM_RANK < N sampled columns; every iterate equals the
    QR path's to 1e-9."""
    rng = np.random.default_rng(11)
    X = rng.normal(size=(300, 5))
    K = rbf_kernel(X, sigma=2.0)
    y = np.where(X[:, 0] + 0.5 * rng.normal(size=300) > 0, 1.0, -1.0)
    monkeypatch.setattr(isls_paths, "NYSTROM_RANK", 64)
    res = isls_svm(K, y, 1.0)
    assert "pcg" in res.info["path"] and res.converged
    monkeypatch.setattr(isls_paths, "SMALL_PATHS", ("qr",))
    monkeypatch.setattr(isls_paths, "LARGE_PATHS", ("qr",))
    qr = isls_svm(K, y, 1.0)
    assert qr.n_iter == res.n_iter
    for (a1, b1, _), (a2, b2, _) in zip(qr.history, res.history):
        assert rel(a2, a1) < TOL["paths"] and abs(b2 - b1) < TOL["paths"] * max(1.0, abs(b1))


@pytest.mark.parametrize("C", [10.0, 30.0])
def test_ill_conditioned_large_sets_equal_qr_path(C, monkeypatch):
    """At larger C (||M|| of 1e5 to 1e7) the float64 residual cannot reach 1e-11 (its rounding is about u ||M||):
    the iterate is then accepted on its backward error (``_BERR``) with the forward bound ``_FORWARD``, or
    certified by double-double refinement, or the next path is taken, down to QR.  Every iterate still equals
    the QR path's to 1e-9, and at C = 10 the CG path solves every active set above ``QR_MAX_M``."""
    rng = np.random.default_rng(11)
    X = rng.normal(size=(300, 5))
    K = rbf_kernel(X, sigma=2.0)
    y = np.where(X[:, 0] + 0.5 * rng.normal(size=300) > 0, 1.0, -1.0)
    monkeypatch.setattr(isls_paths, "NYSTROM_RANK", 64)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        res = isls_svm(K, y, C, max_iter=12)
        monkeypatch.setattr(isls_paths, "SMALL_PATHS", ("qr",))
        monkeypatch.setattr(isls_paths, "LARGE_PATHS", ("qr",))
        qr = isls_svm(K, y, C, max_iter=12)
    if C == 10.0:
        large = [p for n, p in zip(res.info["n_active"], res.info["path"]) if n > isls_paths.QR_MAX_M]
        assert large and all(p == "pcg" for p in large)
    assert qr.n_iter == res.n_iter
    for (a1, b1, _), (a2, b2, _) in zip(qr.history, res.history):
        assert rel(a2, a1) < TOL["paths"] and abs(b2 - b1) < TOL["paths"] * max(1.0, abs(b1))


def test_start_is_the_ls_svm_solution():
    X, K, y = make(seed=4)
    res = isls_svm(K, y, 2.0)
    ls = ls_svm(K, y, 2.0)
    a0, b0, _ = res.history[0]
    assert rel(a0, y * ls.alpha) < TOL["plain"] and abs(b0 - ls.b) < TOL["plain"]
    assert res.history[0][2] == int(np.sum(np.abs(ls.alpha) > 1e-6))
    assert res.weight_scale == 1.0                                   # +-1 labels, RBF: 004 verbatim
    np.testing.assert_array_equal(res.weights_history[0], a0 * a0)   # lambda_i = 1/alpha_i^2


# ---- the reduced solve is the plain system (4) ---------------------------------------------------
@pytest.mark.parametrize("drop", [True, False])
@pytest.mark.parametrize("tiny", [0, 3, 10])
def test_reduced_solve_equals_plain_system(drop, tiny):
    """Random weights, ``tiny`` of them at 1e-40 (below the drop rule): same answer as the dense (4)."""
    X, K, y = make(N=30, seed=5)
    rng = np.random.default_rng(tiny)
    w = rng.uniform(0.01, 3.0, size=30)
    w[rng.choice(30, tiny, replace=False)] = 1e-40
    alpha, b, beta = solve_weighted_system(K, y, 4.0, w, drop=drop)
    a_ref, b_ref, beta_ref = plain_system4(K, y, 4.0, w)
    assert rel(beta, beta_ref) < TOL["plain"] and abs(b - b_ref) < TOL["plain"]
    assert rel(alpha, a_ref) < TOL["plain"]


@pytest.mark.parametrize("task", ["classification", "regression"])
def test_whole_run_equals_plain_loop_without_drops(task):
    """Algorithm 1 written naively (dense H, no active set, no drop): the same iterates, every iteration."""
    X, K, y = make(N=30, seed=6, task=task)
    C = 10.0
    res = isls_svm(K, y, C, task=task)
    kappa = res.weight_scale                         # lambda_i = kappa / alpha_i^2
    alpha, b = res.history[0][0], res.history[0][1]
    for t in range(1, res.n_iter + 1):
        alpha, b, _ = plain_system4(K, y, C, alpha * alpha / kappa)
        a_t, b_t, _ = res.history[t]
        assert rel(a_t, alpha) < TOL["loop"], f"iteration {t}"
        assert abs(b_t - b) < TOL["loop"] * max(1.0, abs(b)), f"iteration {t}"
    assert res.info["n_active"][-1] < 30          # the run did drop patterns


# ---- scale ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("t", [1e-3, 7.0, 1e4])
def test_invariant_to_the_scale_of_the_targets(t):
    """weight_scale="auto": y -> t y gives alpha -> t alpha, b -> t b, the same support and iteration count."""
    X, K, y = make(N=40, seed=7, task="regression")
    r1 = isls_svm(K, y, 10.0, task="regression")
    r2 = isls_svm(K, t * y, 10.0, task="regression")
    assert r1.n_iter == r2.n_iter and np.array_equal(r1.support_, r2.support_)
    for (a1, b1, _), (a2, b2, _) in zip(r1.history, r2.history):
        assert rel(a2 / t, a1) < TOL["scale"] and abs(b2 / t - b1) < TOL["scale"] * max(1.0, abs(b1))


@pytest.mark.parametrize("task", ["classification", "regression"])
@pytest.mark.parametrize("s", [1e-3, 50.0])
def test_invariant_to_scaling_K_with_C(task, s):
    """weight_scale="auto": (K, C) -> (s K, C / s) gives alpha -> alpha / s, the same b and model."""
    X, K, y = make(N=40, seed=8, task=task)
    r1 = isls_svm(K, y, 10.0, task=task)
    r2 = isls_svm(s * K, y, 10.0 / s, task=task)
    assert r1.n_iter == r2.n_iter and np.array_equal(r1.support_, r2.support_)
    for (a1, b1, _), (a2, b2, _) in zip(r1.history, r2.history):
        assert rel(s * a2, a1) < TOL["scale"] and abs(b2 - b1) < TOL["scale"] * max(1.0, abs(b1))


@pytest.mark.parametrize("s", [1e-2, 30.0])
def test_verbatim_algorithm_1_is_equivariant_under_its_own_group(s):
    """004 verbatim (weight_scale=1): (K, y, C) -> (s K, sqrt(s) y, C / s) maps alpha -> alpha / sqrt(s),
    b -> sqrt(s) b; y -> t y alone is Algorithm 1 at another C (``C t^2`` in the reweighted phase)."""
    X, K, y = make(N=40, seed=9, task="regression")
    r1 = isls_svm(K, y, 10.0, task="regression", weight_scale=1.0)
    r2 = isls_svm(s * K, np.sqrt(s) * y, 10.0 / s, task="regression", weight_scale=1.0)
    # the iterates correspond one to one (verbatim, tol and sv_threshold are absolute, so the stopping
    # iteration may differ by one: compare the common iterations)
    for (a1, b1, _), (a2, b2, _) in zip(r1.history, r2.history):
        assert rel(np.sqrt(s) * a2, a1) < TOL["scale"]
        assert abs(b2 / np.sqrt(s) - b1) < TOL["scale"] * max(1.0, abs(b1))
    r3 = isls_svm(K, 3.0 * y, 10.0, task="regression", weight_scale=1.0)
    assert rel(r3.alpha / 3.0, r1.alpha) > 1e-3                      # not invariant: the literal rule


def test_auto_scale_is_algorithm_1_for_labels_and_rbf():
    X, K, y = make(N=40, seed=10)
    r1, r2 = isls_svm(K, y, 10.0), isls_svm(K, y, 10.0, weight_scale=1.0)
    np.testing.assert_array_equal(r1.alpha, r2.alpha)


# ---- the model -----------------------------------------------------------------------------------
def test_prediction_uses_support_vectors_only():
    X, K, y = make(N=40, seed=9)
    res = isls_svm(K, y, 5.0)
    assert res.n_sv < 40
    full = K @ res.alpha + res.b
    sv_only = res.decision_function(K)
    # the difference is the non-SVs' contribution: |alpha_i| <= 1e-6 each, |k| <= 1
    assert np.max(np.abs(full - sv_only)) <= 40 * res.sv_threshold
    np.testing.assert_allclose(res.decision_function(K[:, res.support_]), sv_only, rtol=0, atol=0)
    assert np.all(np.abs(res.alpha[res.support_]) > res.sv_threshold)


def test_history_counts_support_vectors():
    X, K, y = make(N=40, seed=10)
    res = isls_svm(K, y, 5.0)
    for alpha, _b, n_sv in res.history:
        assert n_sv == int(np.sum(np.abs(alpha) > 1e-6))
    assert res.history[-1][2] == res.n_sv


def test_iteration_limit_warns_and_reports():
    X, K, y = make(N=30, seed=11)
    with pytest.warns(ConvergenceWarning):
        res = isls_svm(K, y, 5.0, max_iter=1)
    assert res.status == "max_iter_reached" and not res.converged and res.n_iter == 1


def test_constant_targets_give_the_constant_model():
    X, K, _ = make(N=10, seed=12)
    res = isls_svm(K, np.full(10, 3.5), 1.0, task="regression")
    assert res.converged and res.b == 3.5 and not np.any(res.alpha) and res.n_sv == 0


# ---- motorcycle (raw targets) --------------------------------------------------------------------
def mcycle_split(seed, n_test=44):
    """004 §4: 1/3 of the data held out (44 of 133), raw times (ms) and raw accelerations (g)."""
    X, y = load_dataset("mcycle")
    p = np.random.default_rng(seed).permutation(len(y))
    return X[p[n_test:]], y[p[n_test:]], X[p[:n_test]], y[p[:n_test]]


def mcycle_run(seed, sigma=MCYCLE_SIGMA, C=MCYCLE_C):
    Xtr, ytr, Xte, yte = mcycle_split(seed)
    K, Kte = rbf_kernel(Xtr, sigma=sigma), rbf_kernel(Xte, Xtr, sigma=sigma)
    ls = ls_svm_regression(K, ytr, C)
    res = isls_svm(K, ytr, C, task="regression")
    return res, float(np.mean((ls.predict(Kte) - yte) ** 2)), float(np.mean((res.predict(Kte) - yte) ** 2)), ls


@pytest.mark.parametrize("seed", range(10))
def test_mcycle_raw_targets_finite_and_sparse(seed):
    """Raw targets (std 48 g) give a finite model on every split (docs/isls_notes.md §4); 004 Table 1 (Motorcycle): ISLS
    keeps few SVs (8.4 of 89) at a test MSE comparable to the LS-SVM's (533.1 vs 503.1, ratio 1.06)."""
    res, mse_ls, mse_isls, ls = mcycle_run(seed)
    assert res.converged and np.isfinite(mse_isls) and np.all(np.isfinite(res.alpha))
    assert res.n_sv <= 0.2 * int(np.sum(np.abs(ls.alpha) > 1e-6))
    assert mse_isls <= 1.5 * mse_ls


def test_mcycle_standardised_equals_raw():
    """The same split with targets standardised: the same model in standardised units (scale invariance)."""
    Xtr, ytr, _, _ = mcycle_split(0)
    K = rbf_kernel(Xtr, sigma=MCYCLE_SIGMA)
    m, s = ytr.mean(), ytr.std()
    raw = isls_svm(K, ytr, MCYCLE_C, task="regression")
    std = isls_svm(K, (ytr - m) / s, MCYCLE_C, task="regression")
    assert rel(raw.alpha / s, std.alpha) < TOL["scale"] and abs((raw.b - m) / s - std.b) < TOL["scale"]


def test_divergence_raises_naming_the_iteration():
    """004 verbatim on raw mcycle targets at C = 1000 is Algorithm 1 at C ~ 2e6 on standardised ones: the
    coefficients grow without bound (near-duplicate times, different accelerations) until (3) has no
    double-precision solution.  The run stops with an error; no model is returned."""
    Xtr, ytr, _, _ = mcycle_split(0)
    K = rbf_kernel(Xtr, sigma=MCYCLE_SIGMA)
    with pytest.raises(ISLSDivergenceError, match=r"diverged at iteration \d+ \(C = 1000\).*max\|alpha"):
        isls_svm(K, ytr, 1000.0, task="regression", weight_scale=1.0)


def test_huge_C_raises_instead_of_returning_a_model():
    """Ripley at C = 1e8: the coefficients grow by orders of magnitude per iteration (LS-SVM start 1.8e8); the run
    stops with ISLSDivergenceError before (3) leaves double precision, never with a non-finite or garbage model."""
    Xtr, ytr = load_dataset("synth.tr")
    K = rbf_kernel(Xtr, sigma=RIPLEY_SIGMA)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")                  # the LS-SVM start itself is ill-conditioned here
        with pytest.raises(ISLSDivergenceError, match=r"iteration \d+ \(C = 1e\+08\)"):
            isls_svm(K, ytr, 1e8)


# ---- Ripley ----------------------------------------------------------------------------------------
def ripley(sigma=RIPLEY_SIGMA, C=1.0):
    Xtr, ytr = load_dataset("synth.tr")
    Xte, yte = load_dataset("synth.te")
    K, Kte = rbf_kernel(Xtr, sigma=sigma), rbf_kernel(Xte, Xtr, sigma=sigma)
    ls = ls_svm(K, ytr, C, tol=1e-8)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        isls = isls_svm(K, ytr, C)
    return {
        "ls_err": float(np.mean(ls.predict(Kte) != yte)), "ls_sv": int(np.sum(np.abs(ls.alpha) > 1e-6)),
        "isls_err": float(np.mean(isls.predict(Kte) != yte)), "isls_sv": isls.n_sv, "isls_iter": isls.n_iter,
        "status": isls.status, "max_alpha": float(np.max(np.abs(isls.alpha))),
    }


@pytest.mark.parametrize("C", RIPLEY_CS)
def test_ripley_within_3_points_of_ls_svm_with_few_svs(C):
    r = ripley(C=C)
    print(C, r)
    assert r["isls_sv"] <= TOL["ripley_max_sv"]
    assert r["isls_err"] <= r["ls_err"] + TOL["ripley_err_slack"]


#: The CV grid of docs/isls_notes.md (RBF, 004 §4).
CV_SIGMAS = (0.2, 0.3, 0.5, 0.7, 1.0, 1.5)
CV_CS = (0.1, 1.0, 10.0, 100.0)


def ripley_cv(method, sigmas=CV_SIGMAS, Cs=CV_CS, n_folds=10, seed=0):
    """10-fold CV error on synth.tr for each (sigma, C), best first.

    Ties (equal CV error up to 1e-9) go to the larger sigma, then the smaller C (the smoother model).
    """
    X, y = load_dataset("synth.tr")
    folds = np.array_split(np.random.default_rng(seed).permutation(len(y)), n_folds)
    out = []
    for s in sigmas:
        Kall = rbf_kernel(X, sigma=s)
        for C in Cs:
            errs = []
            for f in folds:
                tr = np.setdiff1d(np.arange(len(y)), f)
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", ConvergenceWarning)
                    m = (ls_svm if method == "ls" else isls_svm)(Kall[np.ix_(tr, tr)], y[tr], C)
                errs.append(np.mean(m.predict(Kall[np.ix_(f, tr)]) != y[f]))
            out.append((round(float(np.mean(errs)), 9), -s, C))
    return [(e, -ms, C) for e, ms, C in sorted(out)]


@pytest.mark.slow
def test_ripley_cross_validated():
    """Each machine with its own CV-chosen (sigma, C) (004 §4 tunes (IS)LS-SVMs by 10-fold CV):
    ISLS far sparser than LS-SVM, test error comparable.  Prints the numbers for docs/isls_notes.md."""
    cv_ls, cv_isls = ripley_cv("ls"), ripley_cv("isls")
    r_ls = ripley(*cv_ls[0][1:])
    r_isls = ripley(*cv_isls[0][1:])
    print("\nLS-SVM CV best", cv_ls[:3], r_ls, "\nISLS CV best", cv_isls[:3], r_isls)
    assert r_isls["isls_sv"] <= TOL["ripley_max_sv"]
    assert r_isls["isls_err"] <= r_ls["ls_err"] + TOL["ripley_err_slack"]


@pytest.mark.slow
@pytest.mark.parametrize("C", [0.1, 1.0, 10.0, 100.0])
def test_mcycle_every_split_finite_across_C(C):
    """Raw targets at every C of the grid: a finite model (or a divergence error, never a non-finite model)."""
    for seed in range(10):
        res, mse_ls, mse_isls, _ = mcycle_run(seed, C=C)
        assert np.isfinite(mse_isls) and np.isfinite(res.b)


# ---- bad input -----------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "kwargs,match",
    [
        (dict(task="ranking"), "task"),
        (dict(task="auto"), "task"),
        (dict(tol=0.0), "tol"),
        (dict(max_iter=0), "max_iter"),
        (dict(sv_threshold=-1.0), "sv_threshold"),
        (dict(weight_scale=-1.0), "weight_scale"),
    ],
)
def test_bad_input_raises_naming_parameter(kwargs, match):
    X, K, y = make(N=10, seed=12)
    with pytest.raises(ValueError, match=match):
        isls_svm(K, y, 1.0, **kwargs)


@pytest.mark.parametrize("labels", [[0.0, 1.0], [-1.0, 0.0, 1.0], [1.0, 2.0, 3.0]])
def test_classification_refuses_labels_that_are_not_two_classes(labels):
    """No silent regression: {0, 1} or three classes are refused by the default task="classification"."""
    X, K, _ = make(N=12, seed=13)
    y = np.resize(np.array(labels), 12)
    with pytest.raises(ValueError, match="y must contain class labels"):
        isls_svm(K, y, 1.0)


def test_regression_is_asked_for_explicitly():
    X, K, y = make(N=20, seed=14)
    r1, r2 = isls_svm(K, y, 1.0), isls_svm(K, y, 1.0, task="regression", weight_scale=1.0)
    np.testing.assert_array_equal(r1.alpha, r2.alpha)          # same iteration, only predict differs
    assert set(np.unique(r1.predict(K))) <= {-1.0, 1.0}
    assert r2.task == "regression" and not set(np.unique(r2.predict(K))) <= {-1.0, 1.0}


def test_bad_labels_and_C():
    X, K, y = make(N=10, seed=13)
    with pytest.raises(ValueError, match="y"):
        isls_svm(K, y + 0.5, 1.0, task="classification")      # not in {-1, +1}
    with pytest.raises(ValueError, match="C"):
        isls_svm(K, y, -2.0)
    with pytest.raises(ValueError, match="C"):
        isls_svm(K, y, 5e-324)                                 # 1/C overflows
    with pytest.raises(ValueError, match="inv_lam"):
        solve_weighted_system(K, y, 1.0, -np.ones(10))


# ---- large C: the backward-error certificate (docs/isls_notes.md §2) ---------------------------------------------
def longdouble_reference(K, y, C, w):
    """The solution of (3) for ``diag(lambda)^-1 = w`` (``w_i = 0``: pattern out), independent of the solver: the
    normal equations ``(I + C A_c'A_c) v = C A_c' y_c`` (``A_c = K_c[:, S] diag(sqrt(w_S))``, module docstring of
    :mod:`svmref.solvers.isls`) formed in ``numpy.longdouble`` (64-bit significand), solved by a float64 Cholesky
    factor refined with long-double residuals until the correction is below 1e-15.  Its error is about
    ``eps_ld cond(M)`` (<= 1e-10 here), so it can judge a 1e-8 accuracy at ``cond(M)`` up to 1e9."""
    LD = np.longdouble
    S = np.flatnonzero(w > 0)
    a = np.sqrt(w[S].astype(LD))
    KS = K[:, S].astype(LD)
    A = (KS - KS.mean(axis=0)) * a[None, :]
    yc = y.astype(LD) - y.astype(LD).mean()
    Mld = A.T @ A * LD(C)
    Mld[np.diag_indices_from(Mld)] += 1
    g = (A.T @ yc) * LD(C)
    factor = scipy.linalg.cho_factor(Mld.astype(float))
    v = np.zeros(len(S), dtype=LD)
    for _ in range(8):
        r = (g - Mld @ v).astype(float)
        d = scipy.linalg.cho_solve(factor, r)
        v = v + d.astype(LD)
        if np.max(np.abs(d)) <= 1e-15 * float(np.max(np.abs(v))):
            break
    alpha = np.zeros(len(y))
    alpha[S] = (a * v).astype(float)
    b = float(y.astype(LD).mean() - (KS @ (a * v)).mean())
    return alpha, b


#: size of the large-C instance checked against the long-double solve (> QR_MAX_M: the large-set paths)
N_LD = 280


@pytest.mark.skipif(np.finfo(np.longdouble).eps > 1e-18, reason="needs an extended-precision numpy.longdouble")
@pytest.mark.parametrize("augmented", [True, False])
@pytest.mark.parametrize("C", [10.0, 100.0])
def test_large_C_iterates_equal_an_extended_precision_solve(C, augmented, monkeypatch):
    """C = 10 and 100 on N = 280 (RBF, d = 5): at C = 100 ``||M||`` reaches ~4e8, so the float64 residual of
    ``M v = g`` (rounding ~u ||M|| ||v||) can neither reach 1e-11 nor, through a backward error of ~u, bound the
    forward error below 1e-8 (``2 cond(M) 8u`` ~ 1e-7); the residual of the augmented system can (rounding
    ~u sqrt(||M||)), and those iterates are certified by it; with it kept off, by double-double refinement
    (docs/isls_notes.md §2).  Each iterate, and the QR solve of the same weighted problem, equals the long-double
    solution of that problem (same weights) to 1e-8 (measured: ~1e-12 for both; a float64-residual refinement
    stopped at a backward error of ~1e-16 was 1e-9 off at C = 100 and 1.3e-8 at C = 300)."""
    rng = np.random.default_rng(11)
    X = rng.normal(size=(N_LD, 5))
    K = rbf_kernel(X, sigma=2.0)
    y = np.where(X[:, 0] + 0.5 * rng.normal(size=N_LD) > 0, 1.0, -1.0)
    monkeypatch.setattr(isls_paths, "NYSTROM_RANK", 64)
    if not augmented:
        no_augmented(monkeypatch)
    with warnings.catch_warnings(), threadpool_limits(1):     # one BLAS thread: small products, shared machine
        warnings.simplefilter("ignore", ConvergenceWarning)
        res = isls_svm(K, y, C, max_iter=4)
        refs = [longdouble_reference(K, y, C, w) for w in res.weights_history]
        qrs = [solve_weighted_system(K, y, C, w, drop=False) for w in res.weights_history]   # QR on S = {w > 0}
    assert res.info["n_active"][0] > isls_paths.QR_MAX_M and "qr" not in res.info["path"]
    if C == 100.0:        # ||M|| > 1e8: the float64 residual of M v = g is far from 1e-11
        assert ("augmented" if augmented else "double-double") in res.info["certificate"]
    for t, ((ref_alpha, ref_b), (qr_alpha, qr_b, _)) in enumerate(zip(refs, qrs), start=1):
        alpha, b, _ = res.history[t]
        for al, bb, who in ((alpha, b, res.info["path"][t - 1]), (qr_alpha, qr_b, "qr")):
            assert rel(al, ref_alpha) < TOL["ref"], (t, who, rel(al, ref_alpha))
            assert abs(bb - ref_b) < TOL["ref"] * max(1.0, abs(ref_b)), (t, who)


@pytest.mark.parametrize("path,C", [("cholesky", 10.0), ("cholesky", 100.0), ("pcg", 10.0)])
def test_large_set_paths_at_large_C_every_iteration_equal_cvxpy(path, C, monkeypatch):
    """The large-set solvers forced for every iteration (QR_MAX_M = 0) at C = 10 and 100: every iterate equals the
    weighted primal (3) solved by CLARABEL to 1e-8.  (The float32 CG is not tried at C = 100: ``cond(M) u_32`` is
    above its limit there, and QR would be taken.)"""
    monkeypatch.setattr(isls_paths, "QR_MAX_M", 0)
    monkeypatch.setattr(isls_paths, "LARGE_PATHS", (path, "qr"))
    X, K, y = make(N=30, seed=2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        res = isls_svm(K, y, C, max_iter=15)
    assert path in res.info["path"]
    check_against_cvxpy(res, K, y, C)


@pytest.mark.skipif(np.finfo(np.longdouble).eps > 1e-18, reason="needs an extended-precision numpy.longdouble")
@pytest.mark.parametrize("C", [10.0, 30.0])
def test_lowrank_path_at_large_C_equals_an_extended_precision_solve(C, monkeypatch):
    """The low-rank (Woodbury) preconditioner at C = 10 and 30 (polynomial kernel of rank 6, N = 40): the first
    iteration has ``||M||`` of 2e8 and 6e9, beyond the float64 residual, and is refined with double-double residuals
    (the contraction observed before a correction certifies, as the preconditioner is not a factor of M).  Every
    iterate equals the long-double solution of its weighted problem to 1e-8."""
    rng = np.random.default_rng(8)
    X = rng.normal(size=(40, 2))
    K = kernel_matrix(X, kernel="poly", c=1.0, d=2)
    y = np.where(X[:, 0] * X[:, 1] + 0.2 * rng.normal(size=40) > 0, 1.0, -1.0)
    monkeypatch.setattr(isls_paths, "QR_MAX_M", 0)
    monkeypatch.setattr(isls_paths, "LARGE_PATHS", ("lowrank", "qr"))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        res = isls_svm(K, y, C, max_iter=8)
    assert set(res.info["path"]) == {"lowrank"} and res.info["certificate"][0] == "double-double"
    for t, w in enumerate(res.weights_history, start=1):
        ref_alpha, ref_b = longdouble_reference(K, y, C, w)
        alpha, b, _ = res.history[t]
        assert rel(alpha, ref_alpha) < TOL["ref"], (t, rel(alpha, ref_alpha))
        assert abs(b - ref_b) < TOL["ref"] * max(1.0, abs(ref_b)), t


@pytest.mark.skipif(np.finfo(np.longdouble).eps > 1e-18, reason="needs an extended-precision numpy.longdouble")
@pytest.mark.parametrize("C", [1.0, 100.0, 1000.0])
def test_augmented_residual_bounds_the_error_of_any_pair(C):
    """The augmented system's bound ``||v - v*|| <= ||s1|| + sqrt(c) ||t|| / 2 + rounding`` (``s1 = v - c A_c'xi``,
    ``t = y_c - A_c v - xi``; :func:`svmref.solvers._isls_paths._augmented_refine`) holds at any pair ``(v, xi)``, not
    only near the solution: ``v*`` from the long-double solve, pairs off it at random, along the direction where
    ``s1`` vanishes (``xi = xi* + A_c eta``, ``v = v* + c A_c'A_c eta``: only the ``t`` term then sees the error), and
    with ``xi`` shifted off the centred space.
    At the refined iterate the bound is at most 1e-9 ``||v||`` (the certificate) and not below the true error."""
    rng = np.random.default_rng(5)
    N = 120
    X = rng.normal(size=(N, 5))
    K = rbf_kernel(X, sigma=2.0)
    y = np.where(X[:, 0] + 0.5 * rng.normal(size=N) > 0, 1.0, -1.0)
    w = rng.uniform(0.05, 1.0, size=N)
    w[rng.random(N) < 0.3] = 0.0
    S = np.flatnonzero(w > 0)
    a = np.sqrt(w[S])
    alpha_ref, _ = longdouble_reference(K, y, C, w)
    v_ref = alpha_ref[S] / a
    D = isls_paths.FitData(K, y)
    system = isls_paths.WeightedSystem(D, S, a, C)
    A = (K[:, S] - K[:, S].mean(axis=0)) * a[None, :]
    xi_ref = D.yc - A @ v_ref
    for KS, B in ((None, None), (K[S], None), (None, A)):          # FitData's passes, the rows K[S], A_c itself
        res = isls_paths.AugmentedResidual(system, KS, B)
        for scale in (1e-2, 1e-6, 1e-10):
            eta = scale * rng.normal(size=S.size)
            pairs = [(v_ref + scale * rng.normal(size=S.size), xi_ref + scale * rng.normal(size=N)),
                     (v_ref + C * (A.T @ (A @ eta)), xi_ref + A @ eta),
                     (v_ref + C * scale * a * K[S].sum(axis=1), xi_ref + scale),     # xi off the centred space
                     (v_ref + scale * rng.normal(size=S.size), None)]
            for v, xi in pairs:
                bound = res(v, xi)[5]
                assert np.linalg.norm(v - v_ref) <= bound, (C, scale, np.linalg.norm(v - v_ref), bound)
        M = np.eye(S.size) + C * A.T @ A
        v0 = np.linalg.solve(M, C * A.T @ D.yc) * (1 + 1e-6)          # an approximate start
        v, est, u, n = isls_paths._augmented_refine(system, v0, lambda r: np.linalg.solve(M, r), 6, KS, B)
        err = np.linalg.norm(v - v_ref)
        assert est <= 1e-9 and err <= est * max(1.0, np.linalg.norm(v)), (C, est, err)
        assert np.allclose(u, A @ v, rtol=0, atol=1e-9 * np.linalg.norm(u))

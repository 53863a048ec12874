"""Tests of the SMO engine and its four adapters (solvers/smo.py).

What is checked, each against a view that does not share code with the solver:

* the objective against the cvxpy reference dual (``formulations``, CLARABEL cross-checked);
* the KKT conditions of each formulation written out from the paper (000 eq. (6) for L1 and
  Least 1-Norm, eq. (7) for LS-SVM, the L2 analogue): box, ``sum alpha_i y_i = 0``, the margins
  ``y_i f~(x_i) - 1`` against the bound each ``alpha_i`` sits at, and the max-violation gap of
  000 eq. (10)/(11) recomputed from scratch (not the solver's running ``F``);
* LS-SVM against the direct solution of its (N+1) x (N+1) linear KKT system (002; unique solution);
* the L1 adapter against scikit-learn's LIBSVM (objective and decision function);
* awkward instances, bad input, the iteration limit, warm starts, invariance to a permutation.

Where an instance has non-unique dual solutions (duplicated points with conflicting labels, identical
points, K of rank one) only objectives and KKT residuals are compared, never alpha or b.
"""
from __future__ import annotations

import functools
import warnings

import numpy as np
import pytest
from instances import make_classification

from svmref.kernels import linear_kernel, mlp_kernel, polynomial_kernel, rbf_kernel
from svmref.solvers import smo
from svmref.solvers._result import ConvergenceWarning

# ------------------------------------------------------------------------------------------------
# tolerances: one table
# ------------------------------------------------------------------------------------------------
TOL = {
    "tight": 1e-8,          # SMO stopping tolerance for the reference comparisons
    "tightest": 1e-9,       # the smallest tol the engine supports
    "objective_rel": 1e-6,  # |D_smo - D_ref| / max(1, |D_ref|)
    "kkt_slack": 1e-9,      # rounding allowed on top of the stopping tolerance in recomputed KKT
    "feas": 1e-10,          # |sum alpha_i y_i| relative to sum |alpha_i|; box violation
    "linear_system": 1e-6,  # LS-SVM alpha, b vs the direct KKT system solve (relative to max|alpha|)
    "sklearn_obj_rel": 1e-6,  # vs SVC(tol=1e-8): objective
    "sklearn_decision": 1e-5,  # vs SVC(tol=1e-8): max |f_smo(x) - f_svc(x)| on test points
    "default": 1e-3,        # the paper's epsilon (000 §4): default-run KKT gap must be below it
}

DUALS = ("l1_svm", "l2_svm", "ls_svm", "least_1norm_svm")
WSS = ("first", "second")


def box(name: str, C: float):
    """``(lower, upper, shift)`` of each dual, written from 000 Table 1, eq. (2), (5) (not imported)."""
    return {
        "l1_svm": (0.0, C, 0.0),
        "l2_svm": (0.0, np.inf, 1.0 / C),
        "ls_svm": (-np.inf, np.inf, 1.0 / C),
        "least_1norm_svm": (-C, C, 0.0),
    }[name]


# ------------------------------------------------------------------------------------------------
# instances (small: the cvxpy reference must stay fast)
# ------------------------------------------------------------------------------------------------
def _random(n=40, kernel="rbf", seed=0):
    X, y = make_classification(n=n, d=3, seed=seed)
    K = {"rbf": lambda: rbf_kernel(X, sigma=1.5), "linear": lambda: linear_kernel(X),
         "poly": lambda: polynomial_kernel(X, c=2.0, d=3)}[kernel]()
    return K, y


def _duplicates_conflicting(seed=1):
    # every point appears twice, once with each label: Q is singular, alpha not unique
    X, _ = make_classification(n=15, d=2, seed=seed)
    X = np.vstack([X, X])
    y = np.concatenate([np.ones(15), -np.ones(15)])
    y[:3] *= -1.0  # plus a few same-label copies
    return rbf_kernel(X, sigma=1.0), y


def _identical_points(seed=2):
    # a block of 10 identical points (6 of class +1, 4 of -1) among 20 ordinary ones
    X, y = make_classification(n=20, d=2, seed=seed)
    Xs = np.repeat(X[:1], 10, axis=0)
    ys = np.array([1.0] * 6 + [-1.0] * 4)
    return rbf_kernel(np.vstack([X, Xs]), sigma=1.0), np.concatenate([y, ys])


def _separable(seed=3):
    rng = np.random.default_rng(seed)
    y = np.where(np.arange(30) % 2 == 0, 1.0, -1.0)
    X = rng.normal(size=(30, 2)) * 0.5 + 3.0 * y[:, None]
    return linear_kernel(X), y


INSTANCES = {
    # name: (builder, C)
    "rbf_C1": (lambda: _random(40, "rbf", 0), 1.0),
    "linear_C1": (lambda: _random(40, "linear", 4), 1.0),
    "poly_C10": (lambda: _random(30, "poly", 5), 10.0),
    "rbf_C1e-3": (lambda: _random(40, "rbf", 6), 1e-3),
    "rbf_C1e3": (lambda: _random(40, "rbf", 7), 1e3),
    "rbf_tiny_sigma": (lambda: (rbf_kernel(make_classification(40, 3, seed=8)[0], sigma=0.05),
                                make_classification(40, 3, seed=8)[1]), 1.0),
    "rbf_huge_sigma": (lambda: (rbf_kernel(make_classification(40, 3, seed=9)[0], sigma=100.0),
                                make_classification(40, 3, seed=9)[1]), 1.0),
    "duplicates_conflicting": (_duplicates_conflicting, 1.0),
    "identical_points": (_identical_points, 1.0),
    "separable_C1e3": (_separable, 1e3),
    "n80": (lambda: _random(80, "rbf", 10), 2.0),
}


@functools.cache
def instance(name):
    build, C = INSTANCES[name]
    K, y = build()
    K.setflags(write=False)
    return K, y, C


@functools.cache
def reference_objective(name, dual):
    """The cvxpy reference optimum of ``dual`` on instance ``name`` (000 eq. (2)/(5) sign: minimisation)."""
    import svmref.formulations as F
    K, y, C = instance(name)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a cross-check disagreement warning is the reference's concern
        sol = F.solve(F.get(dual).dual(K, y, C=C))
    return float(sol.objective)


# ------------------------------------------------------------------------------------------------
# the KKT conditions of each formulation, recomputed from scratch
# ------------------------------------------------------------------------------------------------
def kkt_report(name, K, y, C, alpha, b):
    """Residuals of the KKT conditions of dual ``name`` at ``(alpha, b)``.

    With ``f~(x_i) = sum_j alpha_j y_j Kt_ij + b`` and ``m_i = y_i f~(x_i) - 1``:

    * L1 / Least 1-Norm (000 eq. (6)): ``m_i = 0`` if ``l < alpha_i < u``; ``m_i <= 0`` at ``u``;
      ``m_i >= 0`` at ``l``;
    * LS-SVM (000 eq. (7)): ``y_i (W.Phi(x_i) + b) = 1 - alpha_i / C``, i.e. ``m_i = 0`` with Kt = K + I/C;
    * L2-SVM: as L1 with Kt = K + I/C and no upper bound;

    plus the box, ``sum alpha_i y_i = 0`` and the gap ``max_{I_low} F - min_{I_up} F`` with
    ``F_i = sum_j alpha_j y_j Kt_ij - y_i`` (000 eq. (10)/(11)).
    """
    lo, up, s = box(name, C)
    Kt = K + s * np.eye(len(y))
    F = Kt @ (alpha * y) - y
    m = y * (F + y + b) - 1.0
    at_lo = alpha <= lo
    at_up = alpha >= up
    free = ~at_lo & ~at_up
    viol = np.zeros_like(alpha)
    viol[free] = np.abs(m[free])
    viol[at_up] = np.maximum(m[at_up], 0.0)
    viol[at_lo] = np.maximum(-m[at_lo], 0.0)
    i_up = np.where(y > 0, alpha < up, alpha > lo)
    i_low = np.where(y > 0, alpha > lo, alpha < up)
    gap = (np.max(F[i_low]) if i_low.any() else -np.inf) - (np.min(F[i_up]) if i_up.any() else np.inf)
    return {
        "box": float(max(np.max(lo - alpha), np.max(alpha - up), 0.0)),
        "equality": abs(float(alpha @ y)) / max(1.0, float(np.sum(np.abs(alpha)))),
        "complementarity": float(np.max(viol)),
        "gap": float(gap),
    }


def dual_objective(name, K, y, C, alpha):
    """``D(alpha) = 1/2 (alpha y)' Kt (alpha y) - sum alpha`` (000 eq. (2), (5))."""
    s = box(name, C)[2]
    v = alpha * y
    return 0.5 * float(v @ K @ v) + 0.5 * s * float(alpha @ alpha) - float(alpha.sum())


def assert_kkt(name, K, y, C, res, tol):
    rep = kkt_report(name, K, y, C, res.alpha, res.b)
    slack = TOL["kkt_slack"] * max(1.0, float(np.max(np.abs(res.alpha))))
    assert rep["box"] <= TOL["feas"], rep
    assert rep["equality"] <= TOL["feas"], rep
    assert rep["gap"] <= tol + slack, rep
    # with b between the I_low max and the I_up min, every margin violation is within the gap
    assert rep["complementarity"] <= tol + slack, rep


# ------------------------------------------------------------------------------------------------
# against the reference
# ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("wss", WSS)
@pytest.mark.parametrize("dual", DUALS)
@pytest.mark.parametrize("inst", sorted(INSTANCES))
def test_matches_reference_and_kkt(inst, dual, wss):
    K, y, C = instance(inst)
    res = getattr(smo, dual)(K, y, C, tol=TOL["tight"], wss=wss)
    assert res.converged and res.status == "optimal", res.message
    assert res.kkt_gap <= TOL["tight"]
    ref = reference_objective(inst, dual)
    assert abs(res.objective - ref) <= TOL["objective_rel"] * max(1.0, abs(ref)), (res.objective, ref)
    # the objective the solver reports is the objective of its alpha
    d = dual_objective(dual, K, y, C, res.alpha)
    assert abs(res.objective - d) <= 1e-9 * max(1.0, abs(d))
    assert_kkt(dual, K, y, C, res, TOL["tight"])


@pytest.mark.parametrize("wss", WSS)
@pytest.mark.parametrize("dual", DUALS)
@pytest.mark.parametrize("inst", ["rbf_C1", "linear_C1", "rbf_C1e3", "duplicates_conflicting", "n80"])
def test_default_tol_gap(inst, dual, wss):
    """At the paper's eps = 1e-3 (000 §4) the stopping rule holds, also when recomputed from scratch."""
    K, y, C = instance(inst)
    res = getattr(smo, dual)(K, y, C, wss=wss)
    assert res.converged and res.tol == TOL["default"]
    assert res.kkt_gap <= TOL["default"]
    assert_kkt(dual, K, y, C, res, TOL["default"])


@pytest.mark.parametrize("dual", DUALS)
@pytest.mark.parametrize("inst", sorted(INSTANCES))
def test_tol_down_to_1e9(inst, dual):
    """verify needs tight solutions: at tol = 1e-9 the gap recomputed from scratch stays within it."""
    K, y, C = instance(inst)
    res = getattr(smo, dual)(K, y, C, tol=TOL["tightest"])
    assert res.converged
    assert_kkt(dual, K, y, C, res, TOL["tightest"])


@pytest.mark.parametrize("dual", DUALS)
def test_tight_tol_confirms_gap_on_fresh_F(dual):
    """Below REFRESH_TOL the stopping rule is re-checked on F recomputed from alpha; not at the default."""
    K, y, C = instance("n80")
    tight = getattr(smo, dual)(K, y, C, tol=TOL["tightest"])
    assert tight.info["F_refreshes"] >= 1 and tight.info["F_drift"] < 1e-10
    loose = getattr(smo, dual)(K, y, C)
    assert loose.info["F_refreshes"] == 0


# ------------------------------------------------------------------------------------------------
# LS-SVM against its linear KKT system (002: [[0, y'], [y, Omega + I/C]] [b; alpha] = [0; 1])
# ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("wss", WSS)
@pytest.mark.parametrize("inst", ["rbf_C1", "linear_C1", "poly_C10", "n80"])
def test_ls_svm_equals_linear_system(inst, wss):
    """000 eq. (7) with W = sum alpha_j y_j Phi_j and sum alpha y = 0 is the linear system
    ``[[0, y'], [y, Omega]] [b; alpha] = [0; 1]``, ``Omega_ij = y_i y_j (K_ij + delta_ij / C)``
    (002, the KKT system in classifier form); the solution is unique, so alpha and b are compared."""
    K, y, C = instance(inst)
    n = len(y)
    A = np.zeros((n + 1, n + 1))
    A[0, 1:] = y
    A[1:, 0] = y
    A[1:, 1:] = np.outer(y, y) * (K + np.eye(n) / C)
    sol = np.linalg.solve(A, np.concatenate([[0.0], np.ones(n)]))
    b_ref, a_ref = sol[0], sol[1:]
    res = smo.ls_svm(K, y, C, tol=TOL["tight"], wss=wss)
    scale = max(1.0, float(np.max(np.abs(a_ref))))
    assert np.max(np.abs(res.alpha - a_ref)) <= TOL["linear_system"] * scale
    assert abs(res.b - b_ref) <= TOL["linear_system"] * scale


# ------------------------------------------------------------------------------------------------
# against scikit-learn's LIBSVM
# ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("wss", WSS)
@pytest.mark.parametrize("inst", ["rbf_C1", "linear_C1", "poly_C10", "rbf_C1e3", "n80"])
def test_l1_agrees_with_sklearn(inst, wss):
    from sklearn.svm import SVC
    K, y, C = instance(inst)
    svc = SVC(kernel="precomputed", C=C, tol=TOL["tight"]).fit(K, y)
    alpha_svc = np.zeros(len(y))
    alpha_svc[svc.support_] = svc.dual_coef_[0] * y[svc.support_]  # dual_coef_ = y_i alpha_i
    d_svc = dual_objective("l1_svm", K, y, C, alpha_svc)
    res = smo.l1_svm(K, y, C, tol=TOL["tight"], wss=wss)
    assert abs(res.objective - d_svc) <= TOL["sklearn_obj_rel"] * max(1.0, abs(d_svc))
    # decision function on the training points and on new points (rows of a rectangular kernel)
    f_ours = K @ (res.alpha * y) + res.b
    assert np.max(np.abs(f_ours - svc.decision_function(K))) <= TOL["sklearn_decision"] * max(1.0, C)


def test_l1_agrees_with_sklearn_on_new_points():
    from sklearn.svm import SVC
    X, y = make_classification(n=50, d=3, seed=11)
    Xt, _ = make_classification(n=30, d=3, seed=12)
    K = rbf_kernel(X, sigma=1.5)
    Kt = rbf_kernel(Xt, X, sigma=1.5)
    svc = SVC(kernel="precomputed", C=1.0, tol=TOL["tight"]).fit(K, y)
    res = smo.l1_svm(K, y, 1.0, tol=TOL["tight"])
    f_ours = Kt @ (res.alpha * y) + res.b
    assert np.max(np.abs(f_ours - svc.decision_function(Kt))) <= TOL["sklearn_decision"]


# ------------------------------------------------------------------------------------------------
# the engine itself
# ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("dual", DUALS)
def test_adapters_are_the_engine(dual):
    """Each adapter is smo_solve with the box and shift of 000 Table 1 (written again in ``box``)."""
    K, y, C = instance("rbf_C1")
    lo, up, s = box(dual, C)
    a = getattr(smo, dual)(K, y, C, tol=1e-6)
    e = smo.smo_solve(K, y, lo, up, diag_shift=s, tol=1e-6)
    np.testing.assert_array_equal(a.alpha, e.alpha)
    assert a.b == e.b and a.n_iter == e.n_iter


@pytest.mark.parametrize("dual", DUALS)
def test_result_object(dual):
    K, y, C = instance("rbf_C1")
    res = getattr(smo, dual)(K, y, C)
    assert isinstance(res, smo.SMOResult)
    alpha, b = res  # the verify contract: .alpha and .b, also unpacked
    assert alpha.shape == y.shape and isinstance(b, float)
    assert res.n_iter > 0 and res.time > 0.0
    assert res.n_sv == np.count_nonzero(res.alpha)
    assert 0 <= res.n_free <= len(y)
    assert res.wss == "second"


@pytest.mark.parametrize("wss", WSS)
@pytest.mark.parametrize("dual", DUALS)
def test_max_iter_reached(dual, wss):
    K, y, C = instance("n80")
    with pytest.warns(ConvergenceWarning, match="max_iter_reached"):
        res = getattr(smo, dual)(K, y, C, max_iter=5, wss=wss)
    assert res.status == "max_iter_reached" and not res.converged and res.n_iter == 5
    assert res.kkt_gap > TOL["default"]
    # still feasible
    rep = kkt_report(dual, K, y, C, res.alpha, res.b)
    assert rep["box"] <= TOL["feas"] and rep["equality"] <= TOL["feas"]


@pytest.mark.parametrize("dual", DUALS)
def test_warm_start_at_optimum_takes_no_step(dual):
    K, y, C = instance("rbf_C1")
    f = getattr(smo, dual)
    res = f(K, y, C, tol=1e-6)
    again = f(K, y, C, tol=1e-6, alpha0=res.alpha)
    assert again.n_iter == 0 and again.converged
    assert abs(again.objective - res.objective) <= 1e-9 * max(1.0, abs(res.objective))


@pytest.mark.parametrize("dual", DUALS)
def test_warm_start_from_other_C(dual):
    """A warm start from the solution at C = 1 (feasible at C = 2: [0, 1] is inside [0, 2], [-1, 1]
    inside [-2, 2], and L2 / LS have no upper bound) reaches the cold start's optimum at C = 2."""
    K, y, _ = instance("rbf_C1")
    f = getattr(smo, dual)
    a0 = f(K, y, 1.0, tol=1e-6).alpha  # feasible for C = 2: box [0, 1] in [0, 2], [-1, 1] in [-2, 2]
    cold = f(K, y, 2.0, tol=TOL["tight"])
    warm = f(K, y, 2.0, tol=TOL["tight"], alpha0=a0)
    assert abs(cold.objective - warm.objective) <= TOL["objective_rel"] * max(1.0, abs(cold.objective))


@pytest.mark.parametrize("dual", DUALS)
def test_permutation_invariance(dual):
    K, y, C = instance("rbf_C1")
    p = np.random.default_rng(0).permutation(len(y))
    r1 = getattr(smo, dual)(K, y, C, tol=TOL["tight"])
    r2 = getattr(smo, dual)(np.ascontiguousarray(K[np.ix_(p, p)]), y[p], C, tol=TOL["tight"])
    assert abs(r1.objective - r2.objective) <= TOL["objective_rel"] * max(1.0, abs(r1.objective))


@pytest.mark.parametrize("dual", ["l1_svm", "least_1norm_svm"])
def test_duplicated_pattern_equals_doubled_box(dual):
    """A pattern given twice with box [l, u] each is the pattern once with box [2l, 2u] (the two
    multipliers only enter D through their sum, 000 eq. (5)): equal optimal values. This exercises
    per-variable bounds of the engine. (L2 / LS are not listed: their I/C term splits the sum evenly,
    which would need a per-variable diagonal shift.)"""
    K, y, C = instance("rbf_C1")
    lo, up, s = box(dual, C)
    dup = np.concatenate([np.arange(len(y)), [0, 1, 2]])
    r_dup = getattr(smo, dual)(np.ascontiguousarray(K[np.ix_(dup, dup)]), y[dup], C, tol=TOL["tight"])
    lower = np.full(len(y), lo)
    upper = np.full(len(y), up)
    lower[:3] *= 2.0
    upper[:3] *= 2.0
    r_box = smo.smo_solve(K, y, lower, upper, diag_shift=s, tol=TOL["tight"])
    assert abs(r_dup.objective - r_box.objective) <= TOL["objective_rel"] * max(1.0, abs(r_box.objective))


@pytest.mark.parametrize("wss", WSS)
@pytest.mark.parametrize("dual", ["l1_svm", "least_1norm_svm"])
def test_non_psd_kernel_clamped_terminates_at_a_kkt_point_labelled_not_convex(dual, wss):
    """MLP kernel (002: not Mercer for all k, theta) with on_nonconvex="clamp": a_ij <= 0 is replaced by
    TAU = 1e-12 as in LIBSVM.  The box keeps the problem bounded, so SMO stops at a KKT point, but the
    problem is not convex: the result says so (status "not_convex", not converged) and warns."""
    X, y = make_classification(n=40, d=3, seed=13)
    K = mlp_kernel(X, k=1.0, theta=-1.0)
    assert np.linalg.eigvalsh(K)[0] < -1e-6  # the instance really is not PSD
    with pytest.warns(smo.NotConvexWarning):
        res = getattr(smo, dual)(K, y, 1.0, tol=1e-6, wss=wss, on_nonconvex="clamp")
    assert res.status == "not_convex" and not res.converged
    assert_kkt(dual, K, y, 1.0, res, 1e-6)


@pytest.mark.parametrize("dual", DUALS)
def test_non_psd_kernel_raises_by_default(dual):
    """A non-PSD K raises NotConvexError (the README's promise), from the scan (small N) or
    from a pair with a_ij < 0 met during the iterations (scan off)."""
    from svmref.solvers import NotConvexError

    X, y = make_classification(n=40, d=3, seed=13)
    K = mlp_kernel(X, k=1.0, theta=-1.0)
    if dual in ("l2_svm", "ls_svm"):  # K + I/C is indefinite only for C large enough
        C = 1e3
    else:
        C = 1.0
    with pytest.raises(NotConvexError, match="not positive semidefinite"):
        getattr(smo, dual)(K, y, C)
    A = np.array([[1.0, 2.0], [2.0, 1.0]])  # a_12 = 1 + 1 - 4 = -2
    K2 = np.kron(np.eye(20), A) + 0.0
    y2 = np.tile([1.0, -1.0], 20)
    with pytest.raises(NotConvexError, match="the pair"):
        getattr(smo, dual)(K2, y2, 1e3 if dual in ("l2_svm", "ls_svm") else 1.0, psd_scan=False)


def test_ls_svm_indefinite_clamped_is_never_optimal():
    """LS-SVM SMO on an indefinite K once returned NaN labelled optimal.  Clamped, the dual is
    unbounded below along a pair with a_ij < 0: the solver stops there, alpha finite, status not_convex."""
    A = np.array([[1.0, 2.0], [2.0, 1.0]])
    K = np.kron(np.eye(10), A)
    y = np.tile([1.0, -1.0], 10)
    with pytest.warns(smo.NotConvexWarning):
        res = smo.ls_svm(K, y, 1e3, on_nonconvex="clamp")
    assert res.status == "not_convex" and not res.converged
    assert np.all(np.isfinite(res.alpha)) and np.isfinite(res.b)


def python_smo_steps(K, y, lo, up, s, wss, steps):
    """``steps`` SMO iterations written plainly from the papers, for the step-by-step test below.

    i = argmin_{I_up} F (000 eq. (8)); j = argmax_{I_low} F (first order, 000 eq. (8)) or
    argmax_{t in I_low, F_t > F_i} (F_t - F_i)^2 / a_it with a_it = Kt_ii + Kt_tt - 2 Kt_it (Fan, Chen &
    Lin 2005, WSS 2); step lam = (F_j - F_i) / a_ij clipped as in 000 eq. (9).
    """
    n = len(y)
    Kt = K + s * np.eye(n)
    alpha = np.zeros(n)
    lo = np.broadcast_to(lo, n)
    up = np.broadcast_to(up, n)
    for _ in range(steps):
        F = Kt @ (alpha * y) - y
        i_up = np.where(y > 0, alpha < up, alpha > lo)
        i_low = np.where(y > 0, alpha > lo, alpha < up)
        i = int(np.argmin(np.where(i_up, F, np.inf)))
        if wss == "first":
            j = int(np.argmax(np.where(i_low, F, -np.inf)))
        else:
            a = np.diag(Kt)[i] + np.diag(Kt) - 2.0 * Kt[i]
            a[i] = 1.0  # t = i is excluded below (F_t > F_i fails)
            a = np.where(a > 0, a, 1e-12)
            gain = np.where(i_low & (F > F[i]), (F - F[i]) ** 2 / a, -np.inf)
            j = int(np.argmax(gain))
        lam = (F[j] - F[i]) / max(Kt[i, i] + Kt[j, j] - 2.0 * Kt[i, j], 1e-12)
        lam = min(lam, up[i] - alpha[i] if y[i] > 0 else alpha[i] - lo[i],
                  alpha[j] - lo[j] if y[j] > 0 else up[j] - alpha[j])
        alpha[i] += y[i] * lam
        alpha[j] -= y[j] * lam
    return alpha


@pytest.mark.parametrize("wss", WSS)
@pytest.mark.parametrize("dual", DUALS)
def test_steps_match_the_written_rule(dual, wss):
    """The compiled loop takes the same first 6 steps as the rule written out in plain numpy (this
    checks the working-set selection itself, which the optimum does not reveal)."""
    K, y, C = instance("rbf_C1")
    lo, up, s = box(dual, C)
    for steps in (1, 2, 6):
        with pytest.warns(ConvergenceWarning):
            res = getattr(smo, dual)(K, y, C, max_iter=steps, wss=wss)
        expected = python_smo_steps(K, y, lo, up, s, wss, steps)
        np.testing.assert_allclose(res.alpha, expected, rtol=1e-10, atol=1e-12)


def test_first_and_second_order_agree_and_second_is_not_slower_on_l1():
    """Fan, Chen & Lin (2005): WSS 2 needs fewer iterations than the maximal violating pair on L1."""
    K, y, C = instance("n80")
    r1 = smo.l1_svm(K, y, C, tol=1e-6, wss="first")
    r2 = smo.l1_svm(K, y, C, tol=1e-6, wss="second")
    assert abs(r1.objective - r2.objective) <= 1e-5 * max(1.0, abs(r1.objective))
    assert r2.n_iter <= r1.n_iter


def test_engine_with_per_variable_bounds():
    """smo_solve with a different box per variable: KKT of the general problem."""
    K, y, _ = instance("rbf_C1")
    n = len(y)
    rng = np.random.default_rng(3)
    lower = -rng.uniform(0.0, 1.0, n)
    upper = rng.uniform(0.5, 2.0, n)
    res = smo.smo_solve(K, y, lower, upper, tol=1e-8)
    F = K @ (res.alpha * y) - y
    assert np.all(res.alpha >= lower) and np.all(res.alpha <= upper)
    i_up = np.where(y > 0, res.alpha < upper, res.alpha > lower)
    i_low = np.where(y > 0, res.alpha > lower, res.alpha < upper)
    assert np.max(F[i_low]) - np.min(F[i_up]) <= 1e-8 + 1e-12 * n


def test_hypothesis_random_instances():
    """Property: for random small data, every adapter stops at a KKT point (000 eq. (6)/(7))."""
    import hypothesis as hyp
    import hypothesis.strategies as st

    @hyp.settings(max_examples=25, deadline=None)
    @hyp.given(
        n=st.integers(4, 25),
        seed=st.integers(0, 10_000),
        logC=st.floats(-2.0, 2.0),
        logsig=st.floats(-1.0, 1.0),
        dual=st.sampled_from(DUALS),
        wss=st.sampled_from(WSS),
    )
    def prop(n, seed, logC, logsig, dual, wss):
        rng = np.random.default_rng(seed)
        y = np.where(np.arange(n) % 2 == 0, 1.0, -1.0)
        X = rng.normal(size=(n, 2)) + 0.5 * y[:, None]
        K = rbf_kernel(X, sigma=10.0**logsig)
        C = 10.0**logC
        res = getattr(smo, dual)(K, y, C, tol=1e-6, wss=wss)
        assert res.converged
        assert_kkt(dual, K, y, C, res, 1e-6)

    prop()


# ------------------------------------------------------------------------------------------------
# bad input
# ------------------------------------------------------------------------------------------------
def _good():
    K, y, C = instance("rbf_C1")
    return np.array(K), y.copy(), C


def _nan_K():
    K, y, C = _good()
    K[3, 5] = K[5, 3] = np.nan
    return K, y, C


def _asym_K():
    K, y, C = _good()
    K[3, 5] += 0.1
    return K, y, C


BAD = {
    # case: (builder -> (K, y, C, kwargs), exception, message fragment)
    "K not square": (lambda: (_good()[0][:, :-1], _good()[1], 1.0, {}), ValueError, "K must be square"),
    "K 1-D": (lambda: (_good()[0][0], _good()[1], 1.0, {}), ValueError, "K must be a matrix"),
    "K NaN": (lambda: (*_nan_K(), {}), ValueError, "NaN"),
    "K not symmetric": (lambda: (*_asym_K(), {}), ValueError, "symmetric"),
    "y length": (lambda: (_good()[0], _good()[1][:-1], 1.0, {}), ValueError, "lengths must match"),
    "y labels": (lambda: (_good()[0], np.arange(40.0), 1.0, {}), ValueError, r"\{-1, \+1\}"),
    "y one class": (lambda: (_good()[0], np.ones(40), 1.0, {}), ValueError, "both classes"),
    "y NaN": (lambda: (_good()[0], np.where(np.arange(40) == 2, np.nan, _good()[1]), 1.0, {}),
              ValueError, "NaN"),
    "C zero": (lambda: (*_good()[:2], 0.0, {}), ValueError, "C must be"),
    "C negative": (lambda: (*_good()[:2], -1.0, {}), ValueError, "C must be"),
    "C NaN": (lambda: (*_good()[:2], np.nan, {}), ValueError, "C must be"),
    "C inf": (lambda: (*_good()[:2], np.inf, {}), ValueError, "C must be"),
    "C string": (lambda: (*_good()[:2], "1", {}), TypeError, "C must be"),
    "tol zero": (lambda: (*_good(), {"tol": 0.0}), ValueError, "tol"),
    "wss": (lambda: (*_good(), {"wss": "third"}), ValueError, "wss must be one of"),
    "max_iter 0": (lambda: (*_good(), {"max_iter": 0}), ValueError, "max_iter"),
    "max_iter float": (lambda: (*_good(), {"max_iter": 2.5}), TypeError, "max_iter"),
    "alpha0 length": (lambda: (*_good(), {"alpha0": np.zeros(3)}), ValueError, "alpha0"),
    "alpha0 equality": (lambda: (*_good(), {"alpha0": np.where(_good()[1] > 0, 0.5, 0.0)}), ValueError,
                        "alpha0 must satisfy"),
}


@pytest.mark.parametrize("dual", DUALS)
@pytest.mark.parametrize("case", sorted(BAD))
def test_bad_input(case, dual):
    build, exc, msg = BAD[case]
    K, y, C, kw = build()
    with pytest.raises(exc, match=msg):
        getattr(smo, dual)(K, y, C, **kw)


@pytest.mark.parametrize("dual, value", [("l1_svm", 5.0), ("least_1norm_svm", -5.0), ("l2_svm", -5.0)])
def test_alpha0_outside_box(dual, value):
    """A start with sum alpha y = 0 but outside the box (LS-SVM has no box, so it is not listed)."""
    K, y, C = _good()
    a0 = np.zeros(len(y))
    a0[np.argmax(y > 0)] = value
    a0[np.argmax(y < 0)] = value
    with pytest.raises(ValueError, match="alpha0 must lie in its box"):
        getattr(smo, dual)(K, y, C, alpha0=a0)


def test_kernel_too_large_for_memory():
    """A (virtual, zero-stride) 10^6 x 10^6 kernel: a clear MemoryError before anything is allocated."""
    K = np.broadcast_to(np.float64(1.0), (10**6, 10**6))
    y = np.where(np.arange(10**6) % 2 == 0, 1.0, -1.0)
    with pytest.raises(MemoryError, match="needs .* GiB"):
        smo.l1_svm(K, y, 1.0)


@pytest.mark.parametrize(
    "lower, upper, kw, msg",
    [
        (1.0, 0.0, {}, "lower must not exceed upper"),
        (np.nan, 1.0, {}, "lower contains NaN"),
        (0.0, np.zeros(3), {}, "upper must be a number or a vector of length"),
        (0.5, 1.0, {}, "alpha = 0 is not in the box"),
        (0.0, 1.0, {"diag_shift": -1.0}, "diag_shift"),
        (np.inf, np.inf, {}, "lower must be < \\+inf"),
    ],
)
def test_engine_bad_bounds(lower, upper, kw, msg):
    K, y, _ = _good()
    with pytest.raises(ValueError, match=msg):
        smo.smo_solve(K, y, lower, upper, **kw)


def test_fast_gram_scan_agrees_with_check_gram():
    """The compiled scan flags exactly what check_gram flags (the error then comes from check_gram)."""
    from svmref.solvers import _qmatrix as k

    K, _, _ = _good()
    assert k.gram_scan(K, 1e-8) == (-1, False)
    K2 = K.copy()
    K2[0, 39] += 1e-3
    assert k.gram_scan(K2, 1e-8)[1]
    K3 = K.copy()
    K3[39, 0] = np.inf
    assert k.gram_scan(K3, 1e-8)[0] >= 0
    K4 = K.copy()
    K4[7, 7] = np.nan  # the diagonal is scanned too
    assert k.gram_scan(K4, 1e-8)[0] >= 0


@pytest.mark.parametrize("n", [1, 7, 8, 9, 17, 64, 71, 130])
def test_scan_gram_both_passes_agree_with_numpy(n):
    """The fast pass of scan_gram (eight rows at a time off the diagonal tiles, a finiteness witness per eight
    pairs) and the pass with row sums give numpy's max|K - K^T| and max|K| exactly, and the flat index they
    report on a non-finite K is a non-finite entry, wherever it sits: diagonal tile, eight-row groups, rows
    left over. Huge finite entries whose differences overflow are not mistaken for non-finite ones."""
    from svmref.solvers._qmatrix import scan_gram

    rng = np.random.default_rng(n)
    A = rng.standard_normal((n, n))
    K = A + A.T
    for trial in range(36):
        K2 = K.copy()
        kind = trial % 6
        i, j = rng.integers(0, n, 2)
        if kind == 1:
            K2[i, j] = np.nan
        elif kind == 2:
            K2[i, j] = np.inf
        elif kind == 3:
            K2[i, j] = -np.inf
        elif kind == 4:
            K2[i, j] += 10.0 * rng.standard_normal()
        elif kind == 5:
            K2 = K2 / np.abs(K2).max() * 1e308
            K2[i, j] = -K2[j, i]
        finite = bool(np.all(np.isfinite(K2)))
        for block in (8, 12, 16, 64):    # 12: rows left over after the groups of eight
            for with_rows in (False, True):
                bad, asym, big, rows = scan_gram(K2, block, with_rows)
                assert (bad < 0) == finite
                if finite:
                    with np.errstate(over="ignore"):
                        assert asym == np.abs(K2 - K2.T).max() and big == np.abs(K2).max()
                        if with_rows:   # the row sums of |K| from the same pass, every tile and leftover row
                            assert np.allclose(rows, np.abs(K2).sum(axis=1), rtol=1e-12, atol=0.0)
                        else:
                            assert rows.shape == (0,)
                else:
                    assert not np.isfinite(K2.flat[bad])


@pytest.mark.parametrize("n", [1, 7, 8, 9, 70])
def test_sketch_pass_computes_K_v_and_K_transpose_v(n):
    """The one-pass sketch gives K v and K' v (eight-row groups and the rows left over) to rounding."""
    from svmref.solvers._qmatrix import _sketch_pass

    rng = np.random.default_rng(n)
    K = rng.standard_normal((n, n))
    V = rng.standard_normal((2, n))
    U = np.zeros((2, n))
    W = np.zeros((2, n))
    _sketch_pass(K, V, U, W)
    np.testing.assert_allclose(U, V @ K.T, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(W, V @ K, rtol=1e-12, atol=1e-12)


def test_precomputed_kernel_sketch_refuses_what_the_exact_pass_refuses(monkeypatch):
    """From SKETCH_MIN_N on K is first checked by the sketch; whatever it does not accept goes to the exact
    pass. So: every asymmetry just above the tolerance and every NaN/inf is refused (with the exact pass's
    message), an asymmetry below it is accepted, and a symmetric K is accepted by the sketch alone."""
    from svmref.solvers import _qmatrix

    monkeypatch.setattr(_qmatrix, "SKETCH_MIN_N", 1)
    rng = np.random.default_rng(5)
    X = rng.standard_normal((203, 4))
    K = rbf_kernel(X, sigma=1.5)
    exact_calls = []
    real_scan = _qmatrix.gram_scan
    monkeypatch.setattr(_qmatrix, "gram_scan", lambda *a: exact_calls.append(1) or real_scan(*a))
    _qmatrix.PrecomputedKernel(K)
    assert exact_calls == []  # accepted by the sketch alone
    _qmatrix.PrecomputedKernel(K, exact_check=True)
    assert exact_calls == [1]
    for trial in range(40):
        i, j = rng.choice(203, 2, replace=False)
        K2 = K.copy()
        K2[i, j] += 1.0001e-8  # just above 1e-8 max|K| (max|K| = 1, the diagonal)
        with pytest.raises(ValueError, match="symmetric"):
            _qmatrix.PrecomputedKernel(K2)
        K2[i, j] = [np.nan, np.inf, -np.inf][trial % 3]
        with pytest.raises(ValueError, match="NaN or infinity"):
            _qmatrix.PrecomputedKernel(K2)
    K2 = K.copy()
    K2[3, 4] += 5e-9  # below the tolerance: the sketch does not accept it, the exact pass does
    _qmatrix.PrecomputedKernel(K2)
    with pytest.raises(TypeError, match="exact_check"):
        _qmatrix.PrecomputedKernel(K, exact_check="yes")


# ------------------------------------------------------------------------------------------------
# the kernel seam (dense / raw X with an LRU cache), shrinking, Newton steps
# ------------------------------------------------------------------------------------------------
RAW = {  # kernel name -> (RawKernel kwargs, dense kernel of svmref.kernels with the same convention)
    "rbf": ({"sigma": 1.5}, lambda X: rbf_kernel(X, sigma=1.5)),
    "gaussian": ({"sigma": 1.5}, lambda X: rbf_kernel(X, sigma=np.sqrt(2.0) * 1.5)),  # 001: 2 sigma^2
    "linear": ({}, lambda X: linear_kernel(X)),
    "poly": ({"c": 2.0, "d": 3}, lambda X: polynomial_kernel(X, c=2.0, d=3)),
}


@functools.cache
def _raw_instance(kernel):
    X, y = make_classification(n=40, d=3, seed=0)
    kw, dense = RAW[kernel]
    K = dense(X)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        import svmref.formulations as F

        refs = {d: float(F.solve(F.get(d).dual(K, y, C=1.0)).objective) for d in DUALS}
    return X, y, K, refs


@pytest.mark.parametrize("cache_mb", [1e-4, 1.0, 200.0])  # 2 columns (the minimum), a tiny cache, all columns
@pytest.mark.parametrize("shrinking", [True, False])
@pytest.mark.parametrize("kernel", sorted(RAW))
@pytest.mark.parametrize("dual", DUALS)
def test_raw_X_cache_and_shrinking_reach_the_reference(dual, kernel, shrinking, cache_mb):
    """Every configuration (raw X through the cache, any cache size, shrinking on or off) reaches
    the cvxpy reference to 1e-6 at tol 1e-8, and agrees with the dense-K run."""
    X, y, K, refs = _raw_instance(kernel)
    kw, _ = RAW[kernel]
    raw = smo.RawKernel(X, kernel, cache_size=cache_mb, **kw)
    r = getattr(smo, dual)(raw, y, 1.0, tol=TOL["tight"], shrinking=shrinking)
    d = getattr(smo, dual)(K, y, 1.0, tol=TOL["tight"], shrinking=shrinking)
    assert r.status == "optimal" and d.status == "optimal"
    for res in (r, d):
        assert abs(res.objective - refs[dual]) <= TOL["objective_rel"] * max(1.0, abs(refs[dual]))
        assert_kkt(dual, K, y, 1.0, res, TOL["tight"])
    assert raw.cache_info()["columns_computed"] >= 1


def test_tiny_cache_recomputes_columns_and_large_cache_does_not():
    """The LRU cache: with 2 slots nearly every request is a miss; with room for all N columns each column is
    computed at most once."""
    X, y, K, _ = _raw_instance("rbf")
    small = smo.RawKernel(X, "rbf", sigma=1.5, cache_size=1e-6)
    big = smo.RawKernel(X, "rbf", sigma=1.5, cache_size=100.0)
    smo.l1_svm(small, y, 1.0, tol=1e-6, shrinking=False, newton=False)
    smo.l1_svm(big, y, 1.0, tol=1e-6, shrinking=False, newton=False)
    assert small.n_slots == 2 and big.n_slots == 40
    assert big.cache_info()["columns_computed"] <= 40
    assert small.cache_info()["columns_computed"] > big.cache_info()["columns_computed"]


@pytest.mark.parametrize("dual", DUALS)
def test_shrinking_changes_the_work_not_the_answer(dual):
    """Shrinking (LIBSVM) leaves out variables stuck at a bound and reconstructs their gradient before the
    final check: same optimum (to tol) with fewer active variables at some point."""
    K, y = _random(200, "rbf", 21)
    on = getattr(smo, dual)(K, y, 1.0, tol=1e-8, shrinking=True)
    off = getattr(smo, dual)(K, y, 1.0, tol=1e-8, shrinking=False)
    assert on.status == off.status == "optimal"
    assert abs(on.objective - off.objective) <= 1e-8 * max(1.0, abs(off.objective))
    assert off.info["min_active"] == 200
    if dual != "ls_svm":  # LS-SVM has no bounds: nothing can be shrunk
        assert on.info["min_active"] < 200
    assert_kkt(dual, K, y, 1.0, on, 1e-8)


@pytest.mark.parametrize("dual", ["l1_svm", "l2_svm", "least_1norm_svm", "svr"])
def test_compact_column_cache_changes_where_columns_come_from_not_the_iterates(dual, monkeypatch):
    """The engine's compact column cache (LIBSVM's cached columns over the active positions, kept across
    shrinking by swapping positions) is only a faster way to read the same numbers: with a cache of two
    columns (evictions at every step while the active set is large) the iterates, the iteration count and the
    answer are those of the 200 MB cache that holds every column."""
    K, y = _random(300, "rbf", 5)
    args = (K, y, 10.0) + ((0.1,) if dual == "svr" else ())
    big = getattr(smo, dual)(*args, tol=1e-8)
    monkeypatch.setattr(smo, "DENSE_CACHE_MB", 0.0)  # the 2 M-float minimum: two working columns at full size
    tiny = getattr(smo, dual)(*args, tol=1e-8)
    assert big.status == tiny.status == "optimal"
    assert big.n_iter == tiny.n_iter and big.info["min_active"] < K.shape[0]  # shrinking moved positions
    np.testing.assert_array_equal(big.alpha, tiny.alpha)
    # the cache does its job: with room for every column far fewer are gathered from K than with two slots
    assert 0 < big.info["compact_columns_gathered"] < tiny.info["compact_columns_gathered"] / 4
    off = getattr(smo, dual)(*args, tol=1e-8, shrinking=False)
    assert abs(big.objective - off.objective) <= 1e-8 * max(1.0, abs(off.objective))


def test_compact_cache_takes_at_most_a_quarter_of_the_memory_available(monkeypatch):
    """The compact cache is only a speed-up: where memory is short it shrinks (to 1/32 of what is available, in
    floats: a quarter of the bytes), down to the two working columns, and the answer is the same."""
    K, y = _random(300, "rbf", 5)
    qm = smo.PrecomputedKernel(K)
    assert smo._compact_cache(qm, 300).size == 300 * 300  # room for every column
    big = smo.l1_svm(qm, y, 10.0, tol=1e-8)
    monkeypatch.setattr(smo, "available_memory", lambda: 32 * 1000)
    assert smo._compact_cache(qm, 300).size == 1000
    monkeypatch.setattr(smo, "available_memory", lambda: 0)
    assert smo._compact_cache(qm, 300).size == 600
    small = smo.l1_svm(qm, y, 10.0, tol=1e-8)
    np.testing.assert_array_equal(small.alpha, big.alpha)
    assert small.info["compact_columns_gathered"] > big.info["compact_columns_gathered"]


@pytest.mark.parametrize("dual", ["ls_svm", "least_1norm_svm"])
def test_separable_huge_C_converges_by_newton_steps(dual):
    """On separable data with C = 1e6 pairwise steps stall (LS: K + I/C has condition ~1e8;
    Least 1-Norm: rank-2 K with a box of 1e6).  The Newton steps on the free set finish the job in a few
    hundred thousand iterations instead of failing at 1e7; the optimum is checked on the KKT conditions."""
    rng = np.random.default_rng(27)
    y = np.where(np.arange(30) % 2 == 0, 1.0, -1.0)
    X = rng.normal(size=(30, 2)) + 8.0 * y[:, None]
    K = linear_kernel(X)
    res = getattr(smo, dual)(K, y, 1e6, tol=1e-6)
    assert res.status == "optimal" and res.n_iter < 10**6 and res.info["newton_steps"] >= 1
    assert_kkt(dual, K, y, 1e6, res, 1e-6)


def test_newton_off_keeps_the_plain_smo():
    """newton=False: the plain SMO of 000 §3 (the steps test above also runs with it on)."""
    K, y, C = instance("rbf_C1")
    a = smo.l1_svm(K, y, C, tol=1e-8, newton=False)
    b = smo.l1_svm(K, y, C, tol=1e-8)
    assert a.info["newton_steps"] == 0
    assert abs(a.objective - b.objective) <= 1e-8 * max(1.0, abs(b.objective))


def test_decision_function_and_coef_convention():
    """SolverResult.coef = alpha * y (classification); decision_function(K_cross) = K_cross @ coef + b,
    the same on raw X through RawKernel.cross."""
    X, y, K, _ = _raw_instance("rbf")
    r = smo.l1_svm(K, y, 1.0, tol=1e-8)
    np.testing.assert_allclose(r.coef, r.alpha * y)
    Z = make_classification(n=7, d=3, seed=99)[0]
    raw = smo.RawKernel(X, "rbf", sigma=1.5)
    f = r.decision_function(raw.cross(Z))
    np.testing.assert_allclose(f, rbf_kernel(Z, X, sigma=1.5) @ (r.alpha * y) + r.b, rtol=1e-12, atol=1e-12)
    assert r.objective_sense == "min"
    with pytest.raises(ValueError, match="K_cross must have 40 columns"):
        r.decision_function(np.zeros((2, 3)))


@pytest.mark.parametrize(
    "kwargs, exc, msg",
    [
        ({"cache_size": 0}, ValueError, "cache_size"),
        ({"cache_size": -5.0}, ValueError, "cache_size"),
        ({"cache_size": "big"}, TypeError, "cache_size"),
        ({"cache_size": float("nan")}, ValueError, "cache_size"),
        ({"kernel": "sigmoid"}, ValueError, "kernel must be one of"),
        ({"sigma": 0.0}, ValueError, "sigma"),
        ({"d": 1.5, "kernel": "poly"}, ValueError, "d \\(polynomial degree\\)"),
    ],
)
def test_raw_kernel_bad_input(kwargs, exc, msg):
    X, _ = make_classification(n=10, d=2, seed=0)
    with pytest.raises(exc, match=msg):
        smo.RawKernel(X, **kwargs)


def test_raw_kernel_bad_X():
    X, _ = make_classification(n=10, d=2, seed=0)
    X[3, 1] = np.nan
    with pytest.raises(ValueError, match="X contains NaN"):
        smo.RawKernel(X, "rbf")
    with pytest.raises(ValueError, match="X is too large in scale"):
        smo.RawKernel(np.full((4, 2), 1e200), "linear")


def test_bad_options():
    K, y, C = _good()
    with pytest.raises(ValueError, match="on_nonconvex"):
        smo.l1_svm(K, y, C, on_nonconvex="ignore")
    with pytest.raises(TypeError, match="shrinking"):
        smo.l1_svm(K, y, C, shrinking="yes")
    with pytest.raises(ValueError, match="C = .* is too small"):
        smo.l2_svm(K, y, 5e-324)


def test_unbounded_dual_is_detected_not_run_to_max_iter():
    """smo_solve with an infinite box, no diagonal shift and a rank-1 K: D decreases linearly along a null
    direction of Q with no bound, so no minimiser exists.  The Newton round detects it and the solver stops
    with status "numerical_issue" and a ConvergenceWarning, alpha finite (not after 10^7 iterations)."""
    X = np.array([[1.0], [2.0], [3.0], [4.0]])
    y = np.array([1.0, -1.0, 1.0, -1.0])
    with pytest.warns(ConvergenceWarning, match="unbounded below"):
        r = smo.smo_solve(X @ X.T, y, -np.inf, np.inf, tol=1e-6)
    assert r.status == "numerical_issue" and not r.converged and r.n_iter <= 10**6
    assert np.all(np.isfinite(r.alpha))


def test_warnings_point_at_the_caller():
    """ConvergenceWarning and NotConvexWarning are attributed to the caller's line, once each."""
    K, y, C = _good()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        smo.l1_svm(K, y, C, max_iter=2)
        smo.smo_solve(K, y, 0.0, C, max_iter=2)
        smo.svr(K, K[:, 0], C, 0.1, max_iter=2)
        smo.l1_svm(mlp_kernel(make_classification(n=30, d=2, seed=1)[0], k=1.0, theta=-1.0),
                   np.where(np.arange(30) % 2 == 0, 1.0, -1.0), 1.0, on_nonconvex="clamp")
    assert [w.category.__name__ for w in caught] == ["ConvergenceWarning"] * 3 + ["NotConvexWarning"]
    assert all(w.filename == __file__ for w in caught)


def test_stall_is_reported_early_when_no_newton_step_applies(monkeypatch):
    """Where the Newton step cannot apply (here forbidden: at most 1 free variable), a solver whose KKT
    gap does not decrease by 10% over STALL_ROUNDS rounds stops with status "numerical_issue" and a warning, long
    before max_iter (10^7), instead of running on."""
    monkeypatch.setattr(smo, "NEWTON_EVERY", 2000)
    monkeypatch.setattr(smo, "NEWTON_MAX_FREE", 1)
    rng = np.random.default_rng(27)
    y = np.where(np.arange(30) % 2 == 0, 1.0, -1.0)
    X = rng.normal(size=(30, 2)) + 8.0 * y[:, None]
    with pytest.warns(ConvergenceWarning, match="stalled"):
        r = smo.least_1norm_svm(linear_kernel(X), y, 1e6, tol=1e-6)
    assert r.status == "numerical_issue" and not r.converged
    assert r.n_iter <= (smo.STALL_ROUNDS + 1) * 2000

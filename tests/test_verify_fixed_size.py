"""verify's entry for the fixed-size LS-SVM's primal (004 eq. (1) on explicit features, its reference [7]): ridge
with a free bias on X, judged against the ``ls_svm_regression`` model's primal, by a certificate that resolves tol at
any N without an N x N kernel, and with the slips of ridge named.

The answers here are built by numpy (the normal equations, written in this file) or by scikit-learn's ``Ridge``,
independently of verify and of :mod:`svmref.solvers.fixed_size`.
"""
from __future__ import annotations

import numpy as np
import pytest

from svmref import verify
from svmref.solvers import fixed_size
from svmref.verify import data, kkt
from svmref.verify.data import Instance
from svmref.verify.estimators import check_estimator

F = "fixed_size_ls_svm"


def _normal_equations(X, y, C, bias="free"):
    """``min 1/2 w'w + C/2 ||y - X w - b||^2`` by its normal equations in ``[w; b]`` (``bias="penalised"``: ``1/2 b^2``
    added; ``"none"``: ``b = 0``), solved by numpy."""
    n, d = X.shape
    if bias == "none":
        return {"w": np.linalg.solve(np.eye(d) / C + X.T @ X, X.T @ y), "b": 0.0}
    Z = np.hstack([X, np.ones((n, 1))])
    H = Z.T @ Z
    H[np.diag_indices(d if bias == "free" else d + 1)] += 1.0 / C
    a = np.linalg.solve(H, Z.T @ y)
    return {"w": a[:-1], "b": float(a[-1])}


def _big(N, d=5, M=40, C=10.0, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1.0, 1.0, (N, d))
    y = np.sin(3.0 * X[:, 0]) + 0.1 * rng.standard_normal(N)
    Z, Zt = data.nystrom_features(X, X[:60], M, 1.0)
    return Instance(f"nystrom-{N}", Z, y, Zt, "linear", {}, {"C": C}, True, f"N = {N}, {M} Nystrom features")


@pytest.mark.parametrize("suite", ["quick", "adversarial", "real"])
def test_the_reference_is_the_normal_equations(suite):
    """On every instance of the suites, the reference's decision values on the held-out points equal the numpy solve
    of the normal equations', within cond(H) times the rounding of its terms, in f's unit (max|y|)."""
    spec = verify.specs.get(F)
    for inst in verify.suite(suite, F):
        ref = spec.build_reference(inst, {})
        ne = _normal_equations(inst.X, inst.y, inst.hyper["C"])
        Z = np.hstack([inst.X, np.ones((inst.N, 1))])
        H = Z.T @ Z + np.diag(np.r_[np.full(inst.X.shape[1], 1.0 / inst.hyper["C"]), 0.0])
        f_ref, f_ne = inst.X_test @ ref.coef + ref.b, inst.X_test @ ne["w"] + ne["b"]
        bound = 10 * np.linalg.cond(H) * inst.N * np.finfo(float).eps * kkt.target_scale(inst.y)  # f's unit, max|y|
        assert np.max(np.abs(f_ref - f_ne)) <= bound, (inst.name, np.max(np.abs(f_ref - f_ne)), bound)


@pytest.mark.parametrize("bias, words", [
    ("penalised", "solves ridge regression with the bias in the penalty instead"),
    ("none", "solves ridge regression without a bias instead"),
])
def test_a_bias_that_is_not_free_is_named(bias, words):
    report = verify.check(lambda X, y, C: _normal_equations(X, y, C, bias), F, "quick")
    assert [r.verdict for r in report.records] == ["fail"] * 3
    assert all(words in " ".join(r.diagnoses) for r in report.records), report


def test_ridge_with_alpha_c_is_named_and_with_alpha_one_over_c_passes():
    from sklearn.linear_model import Ridge

    def wrong(X, y, C):
        m = Ridge(alpha=C).fit(X, y)
        return {"w": m.coef_, "b": m.intercept_}

    insts = [i for i in verify.suite("quick", F) if i.hyper["C"] != 1.0]
    report = verify.check(wrong, F, insts)
    assert all("= 1/C instead of C" in " ".join(r.diagnoses) for r in report.records), report
    right = check_estimator(Ridge(), F, "quick")
    assert [r.verdict for r in right.records] == ["pass"] * 3, right


def test_a_dual_answer_alone_is_judged():
    def dual(X, y, C):
        n = y.size
        H = np.zeros((n + 1, n + 1))
        H[0, 1:] = H[1:, 0] = 1.0
        H[1:, 1:] = X @ X.T + np.eye(n) / C
        x = np.linalg.solve(H, np.r_[0.0, y])
        return {"alpha": x[1:]}

    report = verify.check(dual, F, "quick")
    assert [r.verdict for r in report.records] == ["pass"] * 3, report
    assert all("b was not given" in " ".join(r.notes) for r in report.records)


def test_at_large_n_the_certificate_judges_without_a_kernel_matrix(monkeypatch):
    """N = 20 000 (beyond the reference's reach): judged by the certificate, and no N x N matrix is ever made."""
    inst = _big(20_000)

    def no_kernel(self):
        raise AssertionError("an N x N kernel matrix was made")

    monkeypatch.setattr(Instance, "K", property(no_kernel))
    report = verify.check(fixed_size.fixed_size_primal, F, [inst])
    rec = report.records[0]
    assert rec.verdict == "pass" and rec.decision_gap <= 1e-6, report


def test_a_near_miss_that_solves_another_c_exactly_is_named_so_not_stopped_early():
    """At N = 200 000 the data term outweighs the penalty: the problem with C / 2 has nearly the same solution, and its
    exact answer misses this problem's conditions by less than 100 tol (a near miss). It meets C / 2's to rounding,
    which names it; "stopped early" would be a wrong cause."""
    inst = _big(200_000)
    off = verify.check(lambda X, y, C: fixed_size.fixed_size_primal(X, y, C / 2), F, [inst]).records[0]
    assert off.verdict == "fail" and off.kkt_violation <= 100 * verify.DEFAULT_TOL
    words = " ".join(off.diagnoses)
    assert "C = 5 (= C / 2) instead of C = 10" in words and "stopped early" not in words, off.diagnoses


@pytest.mark.parametrize("move", ["b", "w"])
def test_the_certificate_bounds_the_measured_errors(move):
    """An answer moved off the optimum (b by 1e-4, or w by 1e-4 along a feature): judged by its certificate alone, its
    bounds on the decision and b gaps hold the gaps verify measures against the reference."""
    inst = _big(1500)
    best = _normal_equations(inst.X, inst.y, inst.hyper["C"])
    answer = dict(best)
    if move == "b":
        answer["b"] = best["b"] + 1e-4
    else:
        answer["w"] = best["w"] + 1e-4 * np.eye(best["w"].size)[0]
    judged = verify.check(lambda X, y, C: answer, F, [inst]).records[0]
    certified = verify.check(lambda X, y, C: answer, F, [inst], certificate=True).records[0]
    assert judged.decision_gap > 1e-6  # the move is seen
    assert certified.decision_gap >= judged.decision_gap
    assert certified.b_gap >= judged.b_gap


def test_the_built_in_solver_is_the_fixed_size_fits_last_step():
    """fixed_size_primal on the Nystrom features of the fit's own map gives the fit's w and b, to the rounding of the
    accumulated sums (``accumulation_rounding``, relative) times the system's condition number."""
    rng = np.random.default_rng(4)
    X = rng.uniform(-1, 1, (3000, 3))
    y = np.cos(2 * X[:, 1]) + 0.05 * rng.standard_normal(3000)
    fit = fixed_size.fixed_size_ls_svm(X, y, 10.0, sigma=1.0, prototypes=X[:30], progress=False)
    alone = fixed_size.fixed_size_primal(fit.map.transform(X), y, 10.0, progress=False)
    assert alone.status == fit.status == "optimal"
    bound = 10 * fit.info["condition"] * fit.info["accumulation_rounding"]
    assert np.max(np.abs(alone.w - fit.w)) <= bound * np.max(np.abs(fit.w))
    f_fit, f_alone = fit.decision_function(X[:200]), alone.decision_function(fit.map.transform(X[:200]))
    assert np.max(np.abs(f_alone - f_fit)) <= bound * np.max(np.abs(y))


def test_the_built_in_solver_passes_every_suite_and_none_is_left_unresolved():
    """Features offset by 1e3 included: the reference's Newton step on the centred normal equations resolves tol
    there (the cvxpy model's solve through K = X X' alone is accurate to about 1e-6 on it)."""
    for suite in ("quick", "standard", "adversarial", "real"):
        report = verify.check(fixed_size.fixed_size_primal, F, suite)
        assert {r.verdict for r in report.records} == {"pass"}, report

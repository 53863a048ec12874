"""verify meets estimators where they are: scikit-learn-style objects fitted on raw X (svmref.verify.estimators).

What each test holds: the kernel in scikit-learn's conventions is the instance's kernel (entry by entry); the dual
solution read from the fitted state is the estimator's (its own decision function, and for a one-vs-one pair the
binary model fitted on that pair alone); a misread convention is an error that says so; a linear model with its
intercept in the penalty is "a different problem", never a pass; scikit-learn-intelex's code path is named.
"""
from __future__ import annotations

import numpy as np
import pytest
from sklearn.datasets import load_iris
from sklearn.kernel_ridge import KernelRidge
from sklearn.metrics.pairwise import pairwise_kernels
from sklearn.svm import SVC, SVR, LinearSVC

from svmref import verify
from svmref.kernels import kernel_matrix
from svmref.testing import assert_estimator_solves
from svmref.verify.estimators import check_estimator, pair_instances, sklearn_kernel


def _quick(name, formulation="l1_svm"):
    return next(i for i in verify.suite("quick", formulation) if i.name == name)


@pytest.mark.parametrize("kernel, params", [("linear", {}), ("rbf", {"sigma": 0.7}), ("gaussian", {"sigma": 0.7}),
                                            ("poly", {"c": 2.0, "d": 3}), ("mlp", {"k": 0.3, "theta": -0.5})])
def test_the_kernel_in_scikit_learns_conventions_is_the_instances(kernel, params):
    rng = np.random.default_rng(1)
    X = rng.normal(size=(12, 3))
    sk = sklearn_kernel(kernel, params)
    metric = {"sigmoid": "sigmoid"}.get(sk["kernel"], sk["kernel"])
    mine = kernel_matrix(X, None, kernel=kernel, **params)
    theirs = pairwise_kernels(X, metric=metric, **{k: v for k, v in sk.items() if k != "kernel"})
    assert np.allclose(mine, theirs, rtol=1e-12, atol=1e-12)


def test_svc_kernel_ridge_and_svr_are_judged_on_raw_x():
    """KernelRidge solves RLS exactly (alpha = m gamma): it passes at 1e-6. SVC and SVR at their own tol 1e-10 are
    limited by their float32 kernel cache (about 1e-5 here): they pass at 1e-4."""
    recs = assert_estimator_solves(KernelRidge, "rls", suite="quick", tol=1e-6)
    assert [r.verdict for r in recs] == ["pass"] * 3
    for est, form in ((SVC, "l1_svm"), (SVR, "svr")):
        recs = assert_estimator_solves(est, form, suite="quick", tol=1e-4, params={"tol": 1e-10})
        assert all(r.verdict == "pass" for r in recs), [(r.instance, r.reason) for r in recs]


def test_tol_goes_to_the_estimators_tol_and_is_said():
    report = check_estimator(SVC, "l1_svm", [_quick("q-rbf-30")], tol=1e-5)
    rec = report[0]
    assert rec.solver_tol == 1e-5 and rec.solver_tol_parameter == "tol"
    assert any("the estimator's tolerance parameter" in n for n in report.notes), report.notes


def test_at_its_default_tol_svc_fails_with_the_stopping_tolerance_named():
    rec = check_estimator(SVC, "l1_svm", [_quick("q-rbf-30")], tol=1e-6, params={"tol": 1e-3})[0]
    assert rec.verdict == "fail"
    assert any(d.startswith("stopped early") for d in rec.diagnoses), rec.diagnoses


def test_the_precomputed_path_gives_the_same_answer():
    recs = assert_estimator_solves(KernelRidge, "rls", suite="quick", tol=1e-6, precomputed=True)
    assert all("code path: kernel='precomputed'" in " ".join(r.notes) for r in recs)


def test_each_one_vs_one_pair_is_judged_as_the_binary_problem_it_is():
    """Iris (3 classes): SVC fitted on all three; each pair read from LIBSVM's layout is the binary SVC fitted on the
    pair's patterns alone (the same problem; the same solver at tol 1e-12), coefficient by coefficient."""
    X, y = load_iris(return_X_y=True)
    X = (X - X.mean(0)) / X.std(0)
    insts = pair_instances(X[:120], y[:120], X[120:], "l1_svm", C=1.0, kernel="rbf", kernel_params={"sigma": 2.0})
    assert [i.name for i in insts] == ["data-0-vs-1", "data-0-vs-2", "data-1-vs-2"]
    est = SVC(C=1.0, gamma=0.25, tol=1e-12).fit(X[:120], y[:120])
    read = verify.specs.get("l1_svm").read_fitted
    for inst in insts:
        alpha, b = read(est, inst)
        alone = SVC(C=1.0, gamma=0.25, tol=1e-12).fit(inst.X, inst.y)
        a2 = np.zeros(inst.N)
        a2[alone.support_] = alone.dual_coef_[0] * inst.y[alone.support_]
        assert np.allclose(alpha, a2, atol=1e-6) and b == pytest.approx(float(alone.intercept_[0]), abs=1e-6)
    report = check_estimator(SVC, "l1_svm", insts, tol=1e-3, params={"tol": 1e-10})
    assert len(report) == 3 and all(r.verdict in ("pass", "fail") for r in report), report.table()


class _FlippedSVC(SVC):
    """An SVC whose fitted dual_coef_ has the wrong sign (a convention another library might use)."""

    def fit(self, X, y, sample_weight=None):
        super().fit(X, y, sample_weight)
        self.dual_coef_ = -self.dual_coef_
        return self


def test_a_fitted_state_that_does_not_reproduce_the_estimators_decision_function_is_an_error_that_says_so():
    rec = check_estimator(_FlippedSVC, "l1_svm", [_quick("q-rbf-30")], tol=1e-4)[0]
    assert rec.verdict == "error" and "does not reproduce its own decision function" in rec.reason, rec.reason


def test_linear_svc_is_judged_against_its_own_problem_when_asked():
    """LinearSVC (squared hinge, the intercept in the penalty: C' = C/2, intercept_scaling = B, fit_intercept=False for
    B = 0) passes against l2_svm_regularised_bias on every quick instance at a tight tol; stopped at tol 1e-2 it
    fails. (The reference and LinearSVC share no code: cvxpy and CLARABEL against LIBLINEAR.)"""
    tight = {"tol": 1e-12, "max_iter": 10**6, "random_state": 0}
    report = check_estimator(LinearSVC, "l2_svm_regularised_bias", "quick", params=tight)
    assert [r.verdict for r in report] == ["pass"] * 3, report.table()
    assert {r.instance.rsplit("-B", 1)[1] for r in report} == {"1", "10", "0"}
    loose = check_estimator(LinearSVC, "l2_svm_regularised_bias", "quick", params={"tol": 1e-2, "random_state": 0})
    assert any(r.verdict == "fail" and r.objective_gap > 1e-6 for r in loose), loose.table()


class _PrimalOnly(LinearSVC):
    """A linear model with coef_ and intercept_ and no intercept_scaling: nothing says which problem it solves."""

    def __init__(self, C=1.0, tol=1e-4):
        super().__init__(C=C, tol=tol)

    def fit(self, X, y):
        super().fit(X, y)
        del self.intercept_scaling
        return self


def test_a_linear_model_is_named_different_only_with_the_evidence():
    """fit_intercept=False (no bias) and intercept_scaling (the bias in the penalty) are evidence of another problem;
    a primal-only model without either is an error that says verify cannot read it, never a claim about its problem."""
    inst = [_quick("q-linear-20")]
    rec = check_estimator(LinearSVC, "l1_svm", inst, params={"fit_intercept": False})[0]
    assert rec.verdict == "different problem" and "fitted without an intercept" in rec.reason, rec.reason
    rec = check_estimator(_PrimalOnly, "l1_svm", inst)[0]
    assert rec.verdict == "error" and "says nothing of which problem" in rec.reason, rec.reason


def test_linear_svc_is_a_different_problem_never_a_pass():
    report = check_estimator(LinearSVC, "l1_svm", "quick")
    assert [r.verdict for r in report] == ["different problem"]
    assert "intercept in the penalty" in report[0].reason and report[0].passed is None
    assert "--formulation l1_svm_regularised_bias" in report[0].reason
    assert len(report.skipped) == 2 and "no kernel parameter" in report.skipped[0]
    assert "NOT JUDGED" in report.summary_text()
    with pytest.raises(AssertionError, match="no instance of suite 'quick' was judged"):
        assert_estimator_solves(LinearSVC, "l1_svm", suite="quick")


def test_scikit_learn_intelex_names_the_code_path_it_ran():
    sklearnex_svm = pytest.importorskip("sklearnex.svm", reason="scikit-learn-intelex is not installed "
                                        "(pip install 'svmref[clients]')")
    for est, form in ((sklearnex_svm.SVC, "l1_svm"), (sklearnex_svm.SVR, "svr")):
        report = check_estimator(est, form, [_quick("q-rbf-30", form)], tol=1e-3)
        paths = [n for n in report[0].notes if n.startswith("code path: ")]
        assert paths and ("accelerated" in paths[0] or "fallback" in paths[0]), report[0].notes
        assert report[0].verdict in ("pass", "fail"), report.table()  # judged, its dual read from oneDAL's state


def test_the_command_line_judges_an_estimator_on_multiclass_data(tmp_path, capsys):
    from svmref.cli import main

    X, y = load_iris(return_X_y=True)
    np.savetxt(tmp_path / "iris.csv", np.column_stack([X, y]), delimiter=",")
    main(["verify", "--estimator", "sklearn.svm:SVC", "-f", "l1_svm", "--data", str(tmp_path / "iris.csv"), "--tol",
          "1e-2", "--param", "tol=1e-10", "--timeout", "60"])
    out, err = capsys.readouterr()
    rows = [ln.split()[2] for ln in out.splitlines() if ln.startswith("l1_svm ")]
    assert rows == ["data-iris-0-vs-1", "data-iris-0-vs-2", "data-iris-1-vs-2"], out + err
    code = main(["verify", "--estimator", "sklearn.svm:SVC", "-f", "l1_svm", "--param", "nope=1"])
    out, err = capsys.readouterr()
    assert code == 2 and "--param: SVC(nope=1) cannot be built" in err and not out

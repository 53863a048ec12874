"""LIBSVM and LIBLINEAR model files judged against the reference (svmref.verify.models, ``svmref verify --model``).

A model file written here from the project's SMO (LIBSVM's format, as ``svm_save_model`` writes it) is read and judged
on every machine; the official ``libsvm-official`` and ``liblinear-official`` packages (the ``clients`` extra) train
the models of the remaining tests, which skip, naming the package, where it is absent.
"""
from __future__ import annotations

import subprocess
import sys
import warnings

import numpy as np
import pytest
from sklearn.datasets import dump_svmlight_file, load_iris

from svmref import verify
from svmref.solvers import smo
from svmref.verify.models import check_model, read_model

TOL = verify.DEFAULT_TOL


def _iris(tmp_path, n_train=120):
    X, y = load_iris(return_X_y=True)
    p = np.random.default_rng(0).permutation(150)
    X, y = X[p], y[p]
    dump_svmlight_file(X[:n_train], y[:n_train], str(tmp_path / "train"), zero_based=False)
    dump_svmlight_file(X[n_train:], y[n_train:], str(tmp_path / "test"), zero_based=False)
    return X[:n_train], y[:n_train]


def _write_model(path, X, y, alpha, b, gamma, labels=(1.0, -1.0)):
    """A binary c_svc model in LIBSVM's format, for labels y in {-1, +1} and f = sum alpha_t y_t k(x_t, .) + b: its
    decision function is positive for label[0], so sv_coef = s y_t alpha_t and rho = -s b with s = label[0]."""
    s = 1.0 if labels[0] == 1.0 else -1.0
    b = s * b
    sv = np.flatnonzero(alpha > 0)
    first = sv[y[sv] == labels[0]]
    second = sv[y[sv] == labels[1]]
    with open(path, "w") as fh:
        fh.write(f"svm_type c_svc\nkernel_type rbf\ngamma {float(gamma)!r}\nnr_class 2\ntotal_sv {sv.size}\n"
                 f"rho {-float(b)!r}\n"
                 f"label {labels[0]:g} {labels[1]:g}\nnr_sv {first.size} {second.size}\nSV\n")
        for t in np.concatenate([first, second]):
            feats = " ".join(f"{k + 1}:{float(v)!r}" for k, v in enumerate(X[t]) if v != 0)
            fh.write(f"{float((1.0 if y[t] == labels[0] else -1.0) * alpha[t])!r} {feats}\n")


def test_a_libsvm_model_written_from_an_exact_answer_passes_and_a_wrong_one_fails(tmp_path):
    X, y3 = _iris(tmp_path)
    keep = y3 > 0  # classes 1 and 2: a binary problem
    X, y = X[keep], np.where(y3[keep] == 1, 1.0, -1.0)
    dump_svmlight_file(X, y, str(tmp_path / "bin"), zero_based=False)
    gamma, C = 0.5, 10.0
    K = np.exp(-gamma * ((X[:, None, :] - X[None, :, :]) ** 2).sum(-1))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = smo.l1_svm(K, y, C, tol=1e-11)
    _write_model(tmp_path / "m", X, y, res.alpha, res.b, gamma)
    report = check_model(tmp_path / "m", tmp_path / "bin", C, tol=TOL)
    assert [r.verdict for r in report] == ["pass"], report.table()
    _write_model(tmp_path / "w", X, y, res.alpha, res.b + 0.1, gamma)  # rho off by 0.1
    rec = check_model(tmp_path / "w", tmp_path / "bin", C, tol=TOL)[0]
    assert rec.verdict == "fail" and "b is wrong for the answer's own alpha" in rec.diagnoses[0], rec.diagnoses
    _write_model(tmp_path / "r", X, y, res.alpha, res.b, gamma, labels=(-1.0, 1.0))  # label order read, not assumed
    assert check_model(tmp_path / "r", tmp_path / "bin", C, tol=TOL)[0].verdict == "pass"


def test_a_model_that_was_not_trained_on_train_is_refused_naming_it(tmp_path):
    X, y = _iris(tmp_path)
    X, yb = X[:40], np.where(y[:40] == y[0], 1.0, -1.0)
    dump_svmlight_file(X, yb, str(tmp_path / "bin"), zero_based=False)
    K = np.exp(-0.5 * ((X[:, None, :] - X[None, :, :]) ** 2).sum(-1))
    res = smo.l1_svm(K, yb, 1.0)
    _write_model(tmp_path / "m", X + 0.01, yb, res.alpha, res.b, 0.5)  # its support vectors moved off the data
    with pytest.raises(ValueError, match=r"support vector 1 of the model is no row of TRAIN \(the nearest differs by"):
        check_model(tmp_path / "m", tmp_path / "bin", 1.0)
    _write_model(tmp_path / "m", X, yb, res.alpha, res.b, 0.5)
    assert check_model(tmp_path / "m", tmp_path / "bin", 1.0)[0].verdict in ("pass", "fail")
    run = subprocess.run([sys.executable, "-m", "svmref.cli", "verify", "--model", str(tmp_path / "m"), "--data",
                          str(tmp_path / "train")], capture_output=True, text=True, timeout=600)
    assert run.returncode == 2 and "--C C: neither is in a model file" in run.stderr and not run.stdout


def _libsvm():
    return pytest.importorskip("libsvm.svmutil", reason="libsvm-official is not installed (pip install 'svmref[clients]')")


def _train_libsvm(tmp_path, X, y, options):
    L = _libsvm()
    model = L.svm_train(L.svm_problem(list(y), [dict(enumerate(r, 1)) for r in X]), L.svm_parameter(options + " -q"))
    L.svm_save_model(str(tmp_path / "model"), model)
    return tmp_path / "model"


def test_libsvm_multiclass_models_at_a_tight_e_are_limited_by_float32_and_at_the_default_e_stopped_early(tmp_path):
    """svm-train's models on iris (3 classes, each one-vs-one pair judged): at -e 1e-10 every pair passes at 1e-6 or
    fails with K rounded to float32 as its cause, and the whole model passes at a tolerance of 1e-4 or less; at the
    default -e 1e-3 every pair fails, stopped early, and would pass near 1e-3."""
    X, y = _iris(tmp_path)
    tight = check_model(_train_libsvm(tmp_path, X, y, "-s 0 -t 2 -g 0.5 -c 10 -e 1e-10"), tmp_path / "train", 10.0,
                        test_path=tmp_path / "test")
    assert len(tight) == 3
    for r in tight:
        assert r.verdict == "pass" or "K rounded to float32" in r.diagnoses[0], (r.instance, r.reason, r.diagnoses)
    assert tight.passed or tight.suite_tol <= 1e-4, tight.table()
    loose = check_model(_train_libsvm(tmp_path, X, y, "-s 0 -t 2 -g 0.5 -c 10"), tmp_path / "train", 10.0)
    assert all(r.verdict == "fail" and any(d.startswith("stopped early") for d in r.diagnoses) for r in loose), \
        loose.table()
    assert 1e-4 <= loose.suite_tol <= 1e-2


def test_a_libsvm_epsilon_svr_model_needs_epsilon_and_is_judged_as_svr(tmp_path):
    rng = np.random.default_rng(3)
    X = rng.uniform(-1, 1, (60, 2))
    y = np.sin(3 * X[:, 0]) + 0.1 * rng.normal(size=60)
    dump_svmlight_file(X, y, str(tmp_path / "train"), zero_based=False)
    path = _train_libsvm(tmp_path, X, y, "-s 3 -t 2 -g 1 -c 5 -p 0.1 -e 1e-10")
    with pytest.raises(ValueError, match="needs --epsilon"):
        check_model(path, tmp_path / "train", 5.0)
    report = check_model(path, tmp_path / "train", 5.0, epsilon=0.1)
    assert report[0].formulation == "svr" and report[0].verdict in ("pass", "fail"), report.table()
    assert report[0].verdict == "pass" or "float32" in report[0].diagnoses[0], report.table()


def _binary_iris(tmp_path):
    """Iris, setosa (+1) against the rest (-1), written as LIBSVM text with those labels."""
    X, y = _iris(tmp_path)
    yb = np.where(y == 0, 1.0, -1.0)
    dump_svmlight_file(X, yb, str(tmp_path / "trainb"), zero_based=False)
    return X, yb


def _write_liblinear(path, solver_type, w, b, B):
    """A binary LIBLINEAR model file as ``save_model`` writes it: ``w`` one weight per line, then ``b / B``."""
    rows = list(w) + ([b / B] if B > 0 else [])
    with open(path, "w") as fh:
        fh.write(f"solver_type {solver_type}\nnr_class 2\nlabel 1 -1\nnr_feature {len(w)}\nbias {B if B > 0 else -1:g}\n"
                 "w\n" + "".join(f"{float(v)!r} \n" for v in rows))


@pytest.mark.parametrize("solver_type, formulation, factor", [("L2R_L1LOSS_SVC_DUAL", "l1_svm_regularised_bias", 1.0),
                                                              ("L2R_L2LOSS_SVC_DUAL", "l2_svm_regularised_bias", 2.0)])
@pytest.mark.parametrize("B", [1.0, 0.0])
def test_a_liblinear_model_of_the_exact_answer_passes_and_a_moved_one_fails(tmp_path, solver_type, formulation, factor,
                                                                             B):
    """A LIBLINEAR model file written from the reference's own (w, b) is judged against the SVM with the bias in the
    penalty (``-c`` 0.5: C = 0.5, resp. 1 for the L2 loss, whose C is twice LIBLINEAR's) and passes; with b moved by
    1e-3 it fails on b and the decision values. Runs on every machine (no LIBLINEAR needed)."""
    import svmref.formulations as F

    X, yb = _binary_iris(tmp_path)
    sol = F.solve(F.get(formulation).dual(X @ X.T, yb, C=factor * 0.5, bias_scale=B))
    a = np.asarray(sol.values["alpha"])
    w, b = X.T @ (yb * a), B * B * float(yb @ a)
    _write_liblinear(tmp_path / "ll", solver_type, w, b, B)
    report = check_model(tmp_path / "ll", tmp_path / "trainb", 0.5)
    rec = report[0]
    assert rec.formulation == formulation and rec.verdict == "pass", report.table()
    if B > 0:
        _write_liblinear(tmp_path / "moved", solver_type, w, b + 1e-3, B)
        rec = check_model(tmp_path / "moved", tmp_path / "trainb", 0.5)[0]
        assert rec.verdict == "fail" and rec.b_gap > 1e-4 and rec.decision_gap > 1e-4, rec.reason


@pytest.mark.parametrize("bias", ["1", "-1", "10"])
def test_liblinear_models_are_judged_against_the_problem_with_the_bias_in_the_penalty(tmp_path, bias):
    """LIBLINEAR's L2-loss dual at -e 1e-10 passes against l2_svm_regularised_bias (C = 2 x its -c, bias_scale its -B,
    0 without); stopped at its default -e 0.1 it fails; logistic regression is named and not judged."""
    LL = pytest.importorskip("liblinear.liblinearutil",
                             reason="liblinear-official is not installed (pip install 'svmref[clients]')")
    X, yb = _binary_iris(tmp_path)
    prob = LL.problem(list(yb), [dict(enumerate(r, 1)) for r in X], float(bias))
    LL.save_model(str(tmp_path / "ll"), LL.train(prob, LL.parameter(f"-s 1 -c 1 -B {bias} -e 1e-10 -q")))
    assert read_model(tmp_path / "ll").solver_type == "L2R_L2LOSS_SVC_DUAL"
    report = check_model(tmp_path / "ll", tmp_path / "trainb", 1.0)
    rec = report[0]
    assert rec.formulation == "l2_svm_regularised_bias" and rec.verdict == "pass", report.table()
    LL.save_model(str(tmp_path / "early"), LL.train(prob, LL.parameter(f"-s 1 -c 1 -B {bias} -e 0.1 -q")))
    assert check_model(tmp_path / "early", tmp_path / "trainb", 1.0)[0].verdict == "fail"
    LL.save_model(str(tmp_path / "lr"), LL.train(prob, LL.parameter(f"-s 0 -c 1 -B {bias} -q")))
    report = check_model(tmp_path / "lr", tmp_path / "trainb", 1.0)
    assert [r.verdict for r in report] == ["different problem"] and "L2R_LR solves none" in report[0].reason
    assert "NOT JUDGED" in report.summary_text()

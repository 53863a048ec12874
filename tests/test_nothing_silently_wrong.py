"""Nothing silently wrong: inputs that got a wrong answer under an honest-looking label, a check that judged nothing
and passed, a worker that outlived its parent, and errors that named the wrong thing. Each case below failed on the
code before its fix (old behaviour in the test's docstring) and states the new behaviour.

The instance of the offset cases: two Gaussian blobs (10 + 10 points, 2 features, seed 0) and the same points plus
1e9. With a free bias the problem is the same (y'alpha = 0 removes the offset's terms from the dual), but the Gram
matrix of the offset points has entries of about 2e18, rounded by hundreds, larger than the centred products.
"""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import warnings

import numpy as np
import pytest

import svmref.formulations as F
from svmref import verify
from svmref.kernels import rbf_kernel
from svmref.solvers import estimators, linear, smo
from svmref.solvers._result import FLOOR_CAP, SuboptimalWarning, certified
from svmref.solvers.sfm_path import leave_one_out
from svmref.solvers.support_features import support_features

OFFSET = 1e9


def _blobs():
    rng = np.random.default_rng(0)
    X = np.vstack([rng.normal(-1.0, 1.0, (10, 2)), rng.normal(1.0, 1.0, (10, 2))])
    return X, np.r_[-np.ones(10), np.ones(10)]


# ---- offsets under the linear kernel ----------------------------------------------------------------------------------
@pytest.mark.parametrize("solver", [smo.l1_svm, smo.least_1norm_svm], ids=lambda f: f.__name__)
def test_the_offset_gram_matrix_is_never_labelled_optimal(solver):
    """Old: status "optimal", duality gap 0, gap_floor inf, objective 19x (L1) and 3.4x (Least 1-Norm) off the same
    problem on the centred data. New: an infinite floor certifies nothing, so "suboptimal" with a warning that says no
    gap can be certified and that a constant part dominates K; the centred Gram matrix is still "optimal"."""
    X, y = _blobs()
    Xo = X + OFFSET
    with pytest.warns(SuboptimalWarning, match="no relative gap can be certified") as seen:
        res = solver(Xo @ Xo.T, y, 1.0)
    assert res.status == "suboptimal" and not res.gap_floor <= FLOOR_CAP, (res.status, res.gap_floor)
    assert any("a constant part dominates K" in str(w.message) for w in seen)
    assert solver(X @ X.T, y, 1.0).status == "optimal"


def test_certified_needs_a_floor_below_max_of_gap_tol_and_the_cap():
    """The rule of "optimal" (solvers/_result.py): the gap within gap_tol of the scale and the floor within
    max(gap_tol, FLOOR_CAP) of it; a zero gap with an infinite or large floor is not a certificate."""
    assert certified(0.0, 0.5e-2, 1.0, 1e-2)
    assert certified(0.0, 0.9e-6, 1.0, 1e-8)                  # an exact solve whose floor is above a tiny gap_tol
    assert not certified(0.0, 2e-2, 1.0, 1e-2)
    assert not certified(0.0, 2e-6, 1.0, 1e-8)
    assert not certified(0.0, np.inf, 1.0, 1e-2)
    assert not certified(0.0, 1.0, 0.0, 1e-2)                 # no scale left once the floor is taken off


def test_l2_svm_on_the_offset_gram_matrix_is_never_optimal_and_says_why():
    """Old: b = NaN, alpha up to 6e290, "numerical_issue" while the README promised no non-finite alpha or b. New: the
    same label (the README now says what is returned), and where alpha outgrew 2 ||p|| C, the bound every iterate has
    when K + I/C is PSD, the message says that K as given is not PSD."""
    X, y = _blobs()
    Xo = X + OFFSET
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = smo.l2_svm(Xo @ Xo.T, y, 1.0)
    assert res.status != "optimal"
    if not np.isfinite(res.b) or np.linalg.norm(res.alpha) > 2.0 * np.sqrt(len(y)):
        assert res.status == "numerical_issue" and "which no iterate reaches" in res.message, res.message


@pytest.mark.parametrize("est", [estimators.L1SVC(C=1.0, kernel="linear"), estimators.LeastOneNormSVC(C=1.0, kernel="linear")],
                         ids=lambda e: type(e).__name__)
def test_the_estimators_fit_offset_features_as_the_centred_ones(est):
    """Old: ``L1SVC(kernel="linear").fit(X + 1e9, y)`` was "optimal" with training accuracy 0.50 (0.95 on X). New: the
    linear kernel of a free-bias model is computed on centred features (tests/test_kernel_offset.py holds the general
    case to 1e-9 on exactly representable data): the same accuracy and label as on X."""
    X, y = _blobs()
    a = est.fit(X, y)
    acc, status = a.score(X, y), a.status_
    b = est.fit(X + OFFSET, y)
    assert b.status_ == status == "optimal" and b.score(X + OFFSET, y) == acc


# ---- a check that judged nothing ---------------------------------------------------------------------------------------
def _good(K, y, C):
    return smo.l1_svm(K, y, C, tol=1e-8)


def test_check_with_no_instances_is_refused():
    """Old: ``verify.check(solver, "l1_svm", instances=[])`` returned ``passed == True`` with 0 records."""
    with pytest.raises(ValueError, match="instances is empty: there is nothing to check"):
        verify.check(_good, "l1_svm", instances=[])


def test_a_report_with_nothing_judged_has_not_passed():
    """A report whose records are all verdicts that judge nothing ("different problem") is no evidence: ``passed``
    is False (it was True) and the summary says NOT JUDGED."""
    from svmref.verify.report import Record, Report

    rec = Record("l1_svm", "s", "q-rbf-30", None, "", "", N=30)
    rec.passed, rec.verdict = None, "different problem"
    report = Report([rec], 1e-4)
    assert report.judged == 0 and report.passed is False
    assert "NOT JUDGED" in report.summary_text()
    assert "NOT JUDGED (no instance was judged: none was run" in Report([], 1e-4).summary_text()


@pytest.mark.parametrize("tol", [1.0, 1.5, 0.0, float("nan")])
def test_verify_tol_outside_zero_one_is_refused_from_python_as_on_the_command_line(tol):
    """Old: ``verify.check(..., tol=1.5)`` was accepted (every error passes at tol >= 1) while the CLI refused it."""
    with pytest.raises(ValueError, match="tol must be"):
        verify.check(_good, "l1_svm", "quick", tol=tol)


# ---- the worker dies with its parent ----------------------------------------------------------------------------------
def _children(pid: int) -> list[int]:
    out = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as f:
                    fields = f.read().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == pid:
                out.append(int(entry))
    return out


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads the process tree from /proc (Linux)")
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGKILL], ids=["SIGTERM", "SIGKILL"])
def test_the_solvers_worker_dies_with_verify(sig, tmp_path):
    """Old: ``kill -TERM`` of ``svmref verify user.py:hangs --timeout 300`` left its worker running, reparented to PID 1,
    for ever. New: the worker ends within seconds of its parent, on SIGTERM as on SIGKILL."""
    (tmp_path / "user.py").write_text("import time\n\ndef hangs(K, y, C):\n    time.sleep(10**6)\n")
    cmd = [sys.executable, "-m", "svmref.cli", "verify", "user.py:hangs", "-f", "l1_svm", "--timeout", "300"]
    proc = subprocess.Popen(cmd, cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    workers: list[int] = []
    deadline = time.time() + 120
    while time.time() < deadline and not workers:  # the worker starts once the instance is built
        time.sleep(0.2)
        workers = _children(proc.pid)
    assert workers, "the worker process never started"
    time.sleep(0.5)
    proc.send_signal(sig)
    proc.wait(timeout=30)
    deadline = time.time() + 10
    while time.time() < deadline and any(_alive(w) for w in workers):
        time.sleep(0.1)
    left = [w for w in workers if _alive(w)]
    for w in left:
        os.kill(w, signal.SIGKILL)
    assert not left, f"worker(s) {left} outlived verify after {sig.name}"


# ---- errors that name the input -----------------------------------------------------------------------------------------
def test_a_box_dual_at_huge_C_is_solved_not_called_unbounded():
    """Old: at C = 1e8 "CLARABEL ended with status 'unbounded' (value -inf)" for a box dual, which cannot be unbounded;
    at 1e7 the problem was solved and called badly scaled. New: the impossible status leads to the re-solve in better
    scaling, and the warning names the scale (C N max|K| = 2e9) at 1e8 as at 1e7. The blobs are separable under this
    RBF kernel, so the optimum is the hard-margin one at both C (max alpha far below 1e7): the two values agree within
    the floors and gaps their certificates give."""
    X, y = _blobs()
    K = rbf_kernel(X, sigma=1.0)
    sols = {}
    for C in (1e7, 1e8):
        with pytest.warns(Warning, match=r"C x N x max\|K\| = 2e\+0[89]"):
            sols[C] = F.solve(F.get("l1_svm").dual(K, y, C=C))
    alpha = np.asarray(sols[1e8].values["alpha"])
    assert float(np.max(alpha)) < 1e6
    r = [sols[C].certificate["residuals"] for C in sols]
    room = sum(x["rel_floor"] + abs(x["rel_gap"]) for x in r)
    a, b = sols[1e7].objective, sols[1e8].objective
    assert abs(a - b) <= 2.0 * room * abs(a), (a, b, room)


def test_solve_and_set_params_refuse_what_is_not_a_problem():
    """Old: ``F.solve(42)``: AttributeError 'int' object has no attribute 'is_dcp'; ``F.set_params("not a problem",
    C=1.0)``: "unknown hyperparameter(s) ['C']; this problem has []"."""
    with pytest.raises(TypeError, match="problem must be a cvxpy.Problem.*got int 42"):
        F.solve(42)
    with pytest.raises(TypeError, match="problem must be a cvxpy.Problem.*got str 'not a problem'"):
        F.set_params("not a problem", C=1.0)


def test_an_unknown_reference_solver_is_refused_not_replaced():
    """Old: ``F.solve(prob, solver="GUROBI2")`` solved with CLARABEL while ``Solution.solver`` said "GUROBI2"."""
    X, y = _blobs()
    prob = F.get("l1_svm").dual(rbf_kernel(X, sigma=1.0), y, C=1.0)
    with pytest.raises(ValueError, match="solver must be the name of an installed cvxpy solver.*CLARABEL.*'GUROBI2'"):
        F.solve(prob, solver="GUROBI2")
    with pytest.raises(ValueError, match="cross_check must be the name of an installed cvxpy solver"):
        F.solve(prob, cross_check="GUROBI2")


def test_the_linear_kernel_overflow_names_X_not_sigma():
    """Old: ``L1SVC(kernel="linear").fit(X * 1e160, y)``: "sigma must be a finite number > 0; got inf" (no sigma was
    set; the linear kernel has none). New: sigma is resolved only for the kernels that have one; the error names X."""
    X, y = _blobs()
    with pytest.raises(ValueError, match=r"X .*overflow.*rescale") as err:
        estimators.L1SVC(kernel="linear").fit(X * 1e160, y)
    assert "sigma" not in str(err.value)
    assert estimators.L1SVC(kernel="linear").fit(X, y).sigma_ is None


def test_patterns_without_features_are_named_so():
    """Old: ``support_features(np.zeros((20, 0)), y, 1, .3)``: "X is empty ... at least one pattern is needed"."""
    _, y = _blobs()
    with pytest.raises(ValueError, match=r"X has no features \(shape \(20, 0\): 20 patterns, 0 features\)"):
        support_features(np.zeros((20, 0)), y, 1.0, 0.3)


def test_leave_one_out_refuses_a_model_of_other_data():
    """Old: a model fitted on 3 of X's 6 features gave a numpy gufunc error. New: the shapes (and C, mu) are checked
    and the error says which model to pass."""
    rng = np.random.default_rng(1)
    XF = rng.normal(size=(20, 6))
    _, y = _blobs()
    model = support_features(XF[:, :3], y, 1.0, 0.3)
    with pytest.raises(ValueError, match=r"model was fitted on 20 patterns x 3 features, but X has 20 x 6"):
        leave_one_out(XF, y, 1.0, 0.3, model=model)
    with pytest.raises(ValueError, match=r"model was fitted with C = 1, but C = 2 was given"):
        leave_one_out(XF[:, :3], y, 2.0, 0.3, model=model)
    with pytest.raises(TypeError, match="model must be an SFMResult"):
        leave_one_out(XF, y, 1.0, 0.3, model="m")


def test_a_data_file_given_as_the_solver_is_named(tmp_path, capsys, monkeypatch):
    """Old: ``svmref verify data.csv:f -f l1_svm``: "AttributeError: 'NoneType' object has no attribute 'loader'"."""
    from svmref.cli import main

    (tmp_path / "data.csv").write_text("x1,x2,y\n0,1,1\n1,0,-1\n")
    monkeypatch.chdir(tmp_path)
    code = main(["verify", "data.csv:f", "-f", "l1_svm"])
    err = capsys.readouterr().err
    assert code == 2 and "'data.csv' is a file, but not Python (.py)" in err and "--data" in err, err


# ---- also seen ------------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("call", [lambda K, y: smo.l1_svm(K, y, 1.0), lambda K, y: linear.ls_svm(K, y, 1.0),
                                  lambda K, y: F.get("l1_svm").dual(K, y, C=1.0)], ids=["smo", "linear", "reference"])
def test_a_complex_kernel_is_refused(call):
    """Old: the SMO solvers took a complex K with numpy's ComplexWarning only (the imaginary part dropped). New: every
    entry point that converts arrays refuses complex input, naming it."""
    X, y = _blobs()
    with pytest.raises(TypeError, match="K must be real; got complex values"):
        call(rbf_kernel(X, sigma=1.0).astype(complex), y)


def test_verify_refuses_a_complex_answer():
    """Old: verify passed a complex alpha (the imaginary part dropped). New: verdict "error", saying the answer is
    complex."""
    def complex_alpha(K, y, C):
        res = smo.l1_svm(K, y, C, tol=1e-8)
        return res.alpha.astype(complex), res.b

    rec = verify.check(complex_alpha, "l1_svm", "quick")[0]
    assert rec.verdict == "error" and "alpha is complex" in rec.reason, rec.reason


def test_table_usage_errors_are_one_line(capsys):
    """Old: ``svmref table nosuch`` printed a 5-line usage block before the error. New: one line, exit 2."""
    from svmref.cli import main

    with pytest.raises(SystemExit) as exc:
        main(["table", "nosuch"])
    err = capsys.readouterr().err.strip().splitlines()
    assert exc.value.code == 2 and len(err) == 1 and err[0].startswith("svmref table: error: unknown table"), err

"""Judged by its certificate, without a reference: the bounds hold, what they do not bound is unresolved, and the
blockwise kernel gives the dense numbers (svmref.verify.blockwise, check(..., certificate=True)).

Every bound is held to the error measured against the reference (the certified cvxpy optimum), on answers perturbed
by known amounts: a bound below the measured error would be a pass that promises more than holds.
"""
from __future__ import annotations

import warnings

import numpy as np
import pytest

from svmref import verify
from svmref.kernels import kernel_matrix
from svmref.solvers import linear, robust, smo
from svmref.verify.blockwise import BlockKernel, blockwise
from svmref.verify.data import Instance

TOL = verify.DEFAULT_TOL


def _quick(name, formulation):
    return next(i for i in verify.suite("quick", formulation) if i.name == name)


def _fixed(answer):
    return lambda *a, **k: answer


@pytest.mark.parametrize("kernel, params", [("rbf", {"sigma": 0.8}), ("linear", {}), ("poly", {"c": 2.0, "d": 3}),
                                            ("mlp", {"k": 0.2, "theta": -0.3})])
def test_the_blockwise_kernel_gives_the_dense_products(kernel, params):
    rng = np.random.default_rng(2)
    X, Z = rng.normal(size=(301, 3)), rng.normal(size=(17, 3))
    K = kernel_matrix(X, None, kernel=kernel, **params)
    B = BlockKernel(X, kernel, params, block=37)
    V = rng.normal(size=(301, 2))
    scale = np.abs(K) @ np.abs(V)
    gamma = 2 * 301 * np.finfo(float).eps  # two sums of 301 terms, each within Higham's gamma_N of its terms' size
    assert np.all(np.abs(B @ V - K @ V) <= gamma * scale)
    assert np.all(np.abs(np.abs(B) @ np.abs(V) - np.abs(K) @ np.abs(V)) <= gamma * scale)
    # the closed-form diagonal against K's: a formula slip is an error of order 1; the rounding of an entry (a sum of
    # d = 3 products through exp, a power or tanh) is below 1e-14 of its size: 1e-10 separates the two on any machine
    assert np.all(np.abs(B.diagonal() - np.diag(K)) <= 1e-10 * (1.0 + np.abs(np.diag(K))))
    R = BlockKernel(Z, kernel, params, Z=X, block=5)
    KR = kernel_matrix(Z, X, kernel=kernel, **params)
    assert np.all(np.abs(R @ V[:, 0] - KR @ V[:, 0]) <= gamma * (np.abs(KR) @ np.abs(V[:, 0])))
    with pytest.raises(MemoryError, match="verify does not form this 301 x 301 kernel matrix"):
        np.asarray(B)


def test_one_pass_over_the_kernel_per_residual_evaluation():
    inst = _quick("q-rbf-30", "l1_svm")
    b = blockwise(inst, block=7)
    res = smo.l1_svm(inst.K, inst.y, inst.hyper["C"], tol=1e-10)
    verify.check(_fixed(res), "l1_svm", [b], certificate=True)
    assert b.K.passes == 1


def test_each_pass_over_a_blockwise_kernel_shows_a_bar_counting_its_blocks():
    """Inside show_passes every pass shows a bar that reaches ceil(N / block) blocks, after one line saying how K is
    made; outside it nothing is written."""
    import io

    from svmref.verify.blockwise import show_passes

    inst = _quick("q-rbf-30", "l1_svm")
    res = smo.l1_svm(inst.K, inst.y, inst.hyper["C"], tol=1e-10)
    quiet = blockwise(inst, block=7)
    verify.check(_fixed(res), "l1_svm", [quiet], certificate=True)
    assert quiet.K.blocks_shown == 0
    b, stream = blockwise(inst, block=7), io.StringIO()
    with show_passes(stream):
        verify.check(_fixed(res), "l1_svm", [b], certificate=True)
    text = stream.getvalue()
    assert b.K.passes >= 1 and b.K.blocks_shown == 5 * b.K.passes, (b.K.passes, b.K.blocks_shown)
    assert text.count("K is 30 x 30 (rbf kernel), made in 5 block(s) of 7 rows") == 1, text
    assert "kernel pass 1" in text and "5/5" in text, text


def test_verify_certificate_with_progress_shows_the_kernel_passes(tmp_path, monkeypatch, capsys):
    """svmref verify --answers DIR --certificate --progress on an instance judged blockwise (DENSE_N lowered to 10):
    the line that says how K is made and each pass's bar, ending at its block count, on stderr; none without
    --progress (stderr is not a terminal here)."""
    from svmref.verify import blockwise as bw
    from svmref.verify.cli import main
    from svmref.verify.exchange import export

    monkeypatch.setattr(bw, "DENSE_N", 10)
    monkeypatch.setattr(bw, "DEFAULT_BLOCK_BYTES", 8 * 30)  # the fewest rows a block has, 16, of 30 kernel values
    inst = _quick("q-rbf-30", "ls_svm_regression")
    res = linear.ls_svm_regression(inst.K, inst.y, inst.hyper["C"])
    export(tmp_path, "ls_svm_regression", [inst])
    np.savez(tmp_path / "answers" / f"{inst.name}.npz", alpha=res.alpha, b=res.b)
    assert main(["--answers", str(tmp_path), "--certificate", "--quiet"]) == 0
    assert "kernel pass" not in capsys.readouterr().err
    assert main(["--answers", str(tmp_path), "--certificate", "--quiet", "--progress"]) == 0
    err = capsys.readouterr().err
    assert "K is 30 x 30 (rbf kernel), made in 2 block(s) of 16 rows per pass" in err, err
    assert "kernel pass 1" in err and "2/2" in err, err


def _perturbed(formulation, inst, scales):
    """The exact answer and copies with alpha moved by each relative scale (y'alpha = 0 kept: the dual stays
    feasible, so the certificate applies)."""
    K, y, h = inst.K, inst.y, inst.hyper
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if formulation == "rls":
            c = linear.rls(K, y, h["gamma"]).c
            rng = np.random.default_rng(0)
            top = np.linalg.eigh(K)[1][:, -1]
            return [c + s * np.max(np.abs(c)) * d for s in scales for d in (rng.normal(size=c.size), top)]
        if formulation.startswith("weighted"):
            task = "regression" if formulation.endswith("regression") else "classification"
            res = robust.weighted_ls_svm(K, y, h["C"], verify.data.weights_of(inst), task=task)
        elif formulation == "ls_svm_regression":
            res = linear.ls_svm_regression(K, y, h["C"])
        else:
            res = linear.ls_svm(K, y, h["C"])
    rng = np.random.default_rng(0)
    e = np.ones(inst.N) if formulation.endswith("regression") else y
    top = np.linalg.eigh(K)[1][:, -1] * e  # the direction K moves most (where the bounds are nearest the error)
    out = []
    for s in scales:
        for d in (rng.normal(size=inst.N), top):
            d = d - e * (e @ d) / inst.N
            out.append((res.alpha + s * np.max(np.abs(res.alpha)) * d, res.b + s))
    return out


@pytest.mark.parametrize("formulation", ["ls_svm_regression", "ls_svm", "rls", "weighted_ls_svm_regression",
                                         "weighted_ls_svm"])
def test_the_certificates_bounds_hold_against_the_reference(formulation):
    """For answers off by 1e-8 to 1e-2 (at random, and along K's top eigenvector), the objective, decision and b bounds
    of the certificate are never below the error the reference measures (the strongly convex forms: LS-SVM and RLS),
    and along the top eigenvector they are within a factor 100 of it (the bounds are not vacuous)."""
    inst = _quick("q-rbf-30", formulation)
    ratios = []
    for ans in _perturbed(formulation, inst, (1e-8, 1e-6, 1e-4, 1e-2)):
        cert = verify.check(_fixed(ans), formulation, [inst], 1e-3, certificate=True)[0]
        ref = verify.check(_fixed(ans), formulation, [inst], 1e-3)[0]
        floor = 1e-13
        assert ref.objective_gap <= cert.objective_gap + floor, (ref.objective_gap, cert.objective_gap)
        assert ref.decision_gap <= cert.decision_gap + floor, (ref.decision_gap, cert.decision_gap)
        if formulation != "rls":
            assert ref.b_gap <= cert.b_gap + floor, (ref.b_gap, cert.b_gap)
        if cert.verdict == "pass":
            assert ref.verdict == "pass", (ref.reason, cert.notes)
        ratios.append((ref.decision_gap / cert.decision_gap, ref.objective_gap / cert.objective_gap))
    assert max(r[0] for r in ratios) >= 0.01 and max(r[1] for r in ratios) >= 0.01, ratios


@pytest.mark.parametrize("formulation", ["ls_svm_regression", "ls_svm", "weighted_ls_svm_regression"])
def test_the_ls_svm_certificate_resolves_tol_without_a_reference(formulation):
    """The LS-SVMs' bounds from the gradient of the primal reduced over b (specs._ls_gradient_bounds) do not carry the
    square root of the objective's rounding, which alone left every standard instance unresolved at tol = 1e-6: the
    built-in direct solves now pass by certificate, as they pass against the reference."""
    solver = {"ls_svm_regression": linear.ls_svm_regression, "ls_svm": linear.ls_svm,
              "weighted_ls_svm_regression": robust.weighted_ls_svm_regression}[formulation]
    insts = [i for i in verify.suite("standard", formulation) if i.name != "s-poly-100"]  # (1e-6 within a factor 3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        report = verify.check(solver, formulation, insts, certificate=True)
    assert [r.verdict for r in report.records] == ["pass"] * len(insts), report


def test_a_kernel_that_is_not_psd_is_not_convex_by_certificate_either():
    """Weak duality and strong convexity need a PSD kernel: the MLP kernel's instance is "not convex" by certificate
    (checked on K where it is held), and where K is made by blocks, verify says it cannot know."""
    inst = _quick("q-rbf-30", "ls_svm_regression")
    mlp = Instance("mlp", inst.X, inst.y, inst.X_test, "mlp", {"k": 1.0, "theta": -1.0}, {"C": 1.0})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rec = verify.check(linear.ls_svm_regression, "ls_svm_regression", [mlp], certificate=True)[0]
    assert rec.verdict == "not convex" and "not positive semidefinite" in rec.reason, rec.reason
    big = blockwise(Instance("mlp-by-blocks", inst.X, inst.y, inst.X_test, "mlp", {"k": 1.0, "theta": -1.0},
                             {"C": 1.0}), block=16)
    rec = verify.check(_fixed((np.zeros(inst.N), 0.0)), "ls_svm_regression", [big], certificate=True)[0]
    assert rec.verdict == "not convex" and "too large to check" in rec.reason, rec.reason


def test_what_the_certificate_does_not_bound_is_unresolved_never_passed():
    """The L1-SVM's b need not be unique: its exact answer is unresolved by certificate, with its objective bounded; a
    wrong answer fails on its own residuals."""
    inst = _quick("q-rbf-30", "l1_svm")
    res = smo.l1_svm(inst.K, inst.y, inst.hyper["C"], tol=1e-12)
    rec = verify.check(_fixed(res), "l1_svm", [inst], certificate=True)[0]
    assert rec.verdict == "unresolved" and "not bounded by the certificate" in rec.reason, rec.reason
    assert rec.objective_gap < 1e-10
    bad = verify.check(_fixed((0.5 * res.alpha, res.b)), "l1_svm", [inst], certificate=True)[0]
    assert bad.verdict == "fail" and bad.diagnoses


def test_an_infeasible_dual_point_bounds_nothing():
    inst = _quick("q-rbf-30", "ls_svm_regression")
    res = linear.ls_svm_regression(inst.K, inst.y, inst.hyper["C"])
    rec = verify.check(_fixed((res.alpha + 1e-3, res.b)), "ls_svm_regression", [inst], certificate=True)[0]
    assert rec.objective_gap == float("inf") and rec.verdict == "fail"  # sum(alpha) != 0: no weak duality bound


@pytest.mark.slow  # 10 to 25 s: KernelRidge's own fit at N = 6000 dominates
def test_above_the_references_reach_an_estimator_is_judged_blockwise_by_its_certificate():
    """N = 6000 (above DENSE_N): KernelRidge fitted on raw X, judged without a reference and without an N x N matrix:
    its decision function is bounded by the certificate and passes at 1e-6."""
    rng = np.random.default_rng(4)
    X = rng.uniform(-1, 1, (6000, 3))
    y = np.sin(2 * X[:, 0]) + 0.1 * rng.normal(size=6000)
    inst = Instance("big-rls", X, y, rng.uniform(-1, 1, (50, 3)), "rbf", {"sigma": 1.0}, {"gamma": 1e-3})
    from sklearn.kernel_ridge import KernelRidge

    from svmref.verify.estimators import check_estimator

    report = check_estimator(KernelRidge, "rls", [inst])
    rec = report[0]
    assert rec.verdict == "pass", (rec.reason, rec.notes)
    assert any(n.startswith("judged by its own certificate, without a reference (N = 6000)") for n in rec.notes)


def test_on_a_dask_cluster_the_blocks_give_the_same_numbers(tmp_path):
    """--scheduler: the blocks as tasks of a Dask cluster (here a local one, in this process) give the numbers of the
    same blockwise run made locally, bit for bit, and the same verdict; the answers path takes the client."""
    distributed = pytest.importorskip("dask.distributed", reason="dask.distributed is not installed (svmref[dask])")
    from svmref.verify.exchange import check_answers, export

    inst = _quick("q-rbf-30", "ls_svm_regression")
    res = linear.ls_svm_regression(inst.K, inst.y, inst.hyper["C"])
    local = verify.check(_fixed(res), "ls_svm_regression", [blockwise(inst)], certificate=True)[0]
    export(tmp_path, "ls_svm_regression", [inst])
    np.savez(tmp_path / "answers" / f"{inst.name}.npz", alpha=res.alpha, b=res.b)
    with distributed.LocalCluster(n_workers=2, processes=False, threads_per_worker=1) as lc, distributed.Client(lc) as c:
        remote = verify.check(_fixed(res), "ls_svm_regression", [blockwise(inst, client=c)], certificate=True)[0]
        files = check_answers(tmp_path, certificate=True, client=c)[0]
    same = {k: (v, remote.residuals[k]) for k, v in local.residuals.items()
            if not (v == remote.residuals[k] or (np.isnan(v) and np.isnan(remote.residuals[k])))}
    assert not same, same
    assert remote.verdict == local.verdict == files.verdict == "pass"
    assert remote.reference_resolution == local.reference_resolution


@pytest.mark.parametrize("formulation", ["ls_svm", "weighted_ls_svm_regression"])
def test_the_gradients_bound_by_blocks_is_the_dense_one(formulation):
    """The LS-SVM's gradient bound needs K c and K [d, v]: by blocks (7 rows at a time) they give the dense bounds,
    to the rounding of the products."""
    inst = _quick("q-rbf-30", formulation)
    if formulation == "ls_svm":
        res = linear.ls_svm(inst.K, inst.y, inst.hyper["C"])
    else:
        res = robust.weighted_ls_svm_regression(inst.K, inst.y, inst.hyper["C"], verify.data.weights_of(inst))
    e = inst.y if formulation == "ls_svm" else np.ones(inst.N)
    move = np.random.default_rng(3).normal(size=inst.N)
    move -= e * (e @ move) / inst.N  # the dual stays feasible; the bounds are then the move's, not rounding's
    answer = (res.alpha + 1e-7 * np.max(np.abs(res.alpha)) * move, res.b)  # (a solver taking K cannot take K by blocks)
    dense = verify.check(_fixed(answer), formulation, [inst], 1e-3, certificate=True)[0]
    blocks = verify.check(_fixed(answer), formulation, [blockwise(inst, block=7)], 1e-3, certificate=True)[0]
    assert dense.verdict == blocks.verdict == "pass" and dense.decision_gap > 1e-9
    assert abs(dense.decision_gap - blocks.decision_gap) <= 1e-3 * dense.decision_gap
    assert abs(dense.b_gap - blocks.b_gap) <= 1e-3 * dense.b_gap

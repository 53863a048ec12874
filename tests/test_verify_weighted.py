"""verify's entries for the weighted LS-SVM (Suykens, De Brabanter, Lukas & Vandewalle, Neurocomputing 2002):
instances that carry their weights everywhere they go (suites, --data, exported files, saved cases), a reference that
agrees with the LS-SVM's on the kernel the weights make, and a certificate whose bound uses the smallest curvature.

Each answer is built here by numpy (:func:`test_verify_causes._weighted_kkt`), independently of verify and of
:mod:`svmref.solvers.robust`.
"""
from __future__ import annotations

import json

import numpy as np
import pytest
from test_verify_causes import _weighted_kkt

from svmref import verify
from svmref.testing import load_instance, save_instance
from svmref.verify import data, exchange, kkt
from svmref.verify.data import Instance

FORMULATIONS = ["weighted_ls_svm", "weighted_ls_svm_regression"]


def _inst(formulation, name="q-rbf-30"):
    return next(i for i in verify.suite("quick", formulation) if i.name == name)


@pytest.mark.parametrize("formulation", FORMULATIONS)
def test_the_reference_is_the_ls_svm_on_the_kernel_the_weights_make(formulation):
    """For weights v_i <= 1 the weighted dual is the LS-SVM's on K + diag(1/(C v_i)) - I/C (both systems have the
    diagonal 1/(C v_i)): the two references, solved by cvxpy from two models, agree to 1e-8, relative (the objective,
    alpha) or in the unit of the decision function (b: the margin, or max|y| for regression)."""
    inst = _inst(formulation)
    C = inst.hyper["C"]
    v = np.minimum(data.weights_of(inst), 1.0)
    weighted = Instance(inst.name + "-v-le-1", inst.X, inst.y, inst.X_test, inst.kernel, dict(inst.kernel_params),
                        dict(inst.hyper), True, "", weights=v)
    K2 = inst.K + np.diag(1.0 / (C * v)) - np.eye(inst.N) / C
    plain = Instance(inst.name + "-modified-kernel", inst.X, inst.y, inst.X_test, "precomputed", {}, dict(inst.hyper),
                     True, "", _K=K2, _K_test=inst.K_test)
    spec_w = verify.specs.get(formulation)
    spec_p = verify.specs.get(formulation.replace("weighted_", ""))
    rw = spec_w.build_reference(weighted, {})
    rp = spec_p.build_reference(plain, {})
    tol = 1e-8
    assert abs(rw.objective - rp.objective) <= tol * abs(rp.objective)
    assert np.max(np.abs(rw.coef - rp.coef)) <= tol * np.max(np.abs(rp.coef))
    unit = kkt.target_scale(inst.y) if formulation.endswith("regression") else 1.0  # b in verify's unit of f, as b_gap
    assert abs(rw.b - rp.b) <= tol * unit


@pytest.mark.parametrize("formulation", FORMULATIONS)
def test_with_unit_weights_the_residuals_are_the_ls_svms(formulation):
    inst = _inst(formulation)
    classification = formulation == "weighted_ls_svm"
    a, b = _weighted_kkt(inst.K, inst.y, inst.hyper["C"], np.ones(inst.N), classification)
    a = a * (1.0 + 1e-4 * np.cos(np.arange(inst.N)))  # not optimal: every residual is nonzero
    plain = formulation.replace("weighted_", "")
    r1 = kkt.box_dual_residuals(formulation, inst.K, inst.y, inst.hyper["C"], a, b, weights=np.ones(inst.N))
    r0 = kkt.box_dual_residuals(plain, inst.K, inst.y, inst.hyper["C"], a, b)
    np.testing.assert_equal(r1.values, r0.values)  # (NaN where a residual does not apply, on both)
    assert r1.objective == r0.objective
    r2 = kkt.box_dual_residuals(formulation, inst.K, inst.y, inst.hyper["C"], a, b, weights=np.full(inst.N, 2.0))
    assert r2.values["primal_feasibility"] != r0.values["primal_feasibility"]
    with pytest.raises(ValueError, match="needs the weights v"):
        kkt.box_dual_residuals(formulation, inst.K, inst.y, inst.hyper["C"], a, b)


def test_the_certificate_bounds_the_decision_error_with_the_smallest_weight():
    """A bias off by delta on tiny weights (sum v_i = 0.03): the primal rises by C delta^2 sum v_i / 2 only, so a
    bound that took the curvature C for C min v_i would promise |f - f*| <= 0.17 delta; the certificate's bound holds
    the decision error verify measures against the reference."""
    rng = np.random.default_rng(5)
    X = 1e-4 * rng.standard_normal((30, 2))
    y = np.sin(np.arange(30.0))
    v = np.full(30, 1e-3)
    inst = Instance("tiny-weights", X, y, 1e-4 * rng.standard_normal((8, 2)), "linear", {}, {"C": 1.0}, True, "",
                    weights=v)
    a, b = _weighted_kkt(inst.K, y, 1.0, v, False)
    delta = 1e-3

    def solver(K, y, C, v):
        return a, b + delta

    judged = verify.check(solver, "weighted_ls_svm_regression", [inst]).records[0]
    certified = verify.check(solver, "weighted_ls_svm_regression", [inst], certificate=True).records[0]
    assert judged.decision_gap >= 0.9 * delta / kkt.target_scale(y)
    assert certified.decision_gap >= judged.decision_gap
    assert certified.b_gap >= abs(judged.b_gap)


@pytest.mark.parametrize("formulation", FORMULATIONS)
def test_exported_instances_carry_their_weights(tmp_path, formulation):
    insts = verify.suite("quick", formulation)
    exchange.export(tmp_path, formulation, insts)
    manifest = json.loads((tmp_path / "manifest.json").read_text())
    assert "N lines v_i" in manifest["instance_txt"]
    name, back = exchange.load_exported(tmp_path)
    assert name == formulation
    for a, b in zip(insts, back):
        assert np.array_equal(data.weights_of(a), b.weights) and a.key() == b.key()
        lines = (tmp_path / f"{a.name}.txt").read_text().splitlines()
        n = a.N
        assert [float(t) for t in lines[2 + n:2 + 2 * n]] == list(b.weights)
        v, beta = _weighted_kkt(b.K, b.y, b.hyper["C"], b.weights, formulation == "weighted_ls_svm")
        np.savez(tmp_path / "answers" / f"{a.name}.npz", alpha=v, b=beta)
    report = exchange.check_answers(tmp_path)
    assert [r.verdict for r in report.records] == ["pass"] * len(insts)


def test_a_saved_case_keeps_its_weights_and_its_repr_builds_it_again(tmp_path):
    from hypothesis import find, given, settings

    from svmref.testing import Case, strategies

    seen = []

    @settings(max_examples=5, deadline=None, derandomize=True, database=None)
    @given(strategies.instances("weighted_ls_svm", max_n=8, weights=(1e-3, 1e-3)))
    def run(case):
        assert case.weights is not None and np.all(case.weights == 1e-3)
        back = load_instance(save_instance(case, tmp_path))
        assert np.array_equal(back.weights, case.weights) and back.key() == case.key()
        again = eval(repr(case), {"Case": Case})
        assert np.array_equal(again.weights, case.weights)
        seen.append(case.name)

    run()
    assert len(seen) == 5
    spread = find(strategies.instances("weighted_ls_svm", max_n=8), lambda c: c.weights.max() / c.weights.min() > 100,
                  settings=settings(database=None, derandomize=True))
    assert spread.weights.shape == spread.y.shape


def test_the_users_data_gets_seeded_weights_that_the_description_names():
    X = np.random.default_rng(3).standard_normal((40, 3))
    inst = verify.instances.from_data(X, X[:, 0], "weighted_ls_svm_regression", C=2.0)
    assert inst.weights is not None and inst.weights.shape == (inst.N,)
    assert f"weights v in [{inst.weights.min():.2g}" in inst.description
    again = verify.instances.from_data(X, X[:, 0], "weighted_ls_svm_regression", C=2.0)
    assert np.array_equal(again.weights, inst.weights)


def test_two_instances_that_differ_only_in_their_weights_never_share_a_reference():
    inst = _inst("weighted_ls_svm")
    other = Instance(inst.name, inst.X, inst.y, inst.X_test, inst.kernel, dict(inst.kernel_params), dict(inst.hyper),
                     True, "", weights=data.weights_of(inst) * 2.0)
    assert inst.key() != other.key()
    spec = verify.specs.get("weighted_ls_svm")
    assert spec.build_reference(inst, {}).objective != spec.build_reference(other, {}).objective

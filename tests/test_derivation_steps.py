"""Derivation steps of the docs pages that no other test checks against the models solved as written.

* ``docs/formulations/svr.md``: the epsilon-SVR primal and dual (LIBSVM's epsilon-SVR; none of the five
  papers states it), each solved as written by cvxpy (``as_written``), for strong duality, stationarity
  (W = sum (alpha+ - alpha-) Phi, sum (alpha+ - alpha-) = 0), the KKT regions of the tube and
  alpha+ alpha- = 0.
* ``docs/formulations/support_features.md`` §4: the gradient of 003 eq. (10), 1 - y_j a(lam)'x_j, against
  central differences of the cvxpy model's own objective (``objective.value`` at perturbed lam).

Objective values and the unique primal W are compared; alpha+ and alpha- only through sums that the
KKT conditions fix.
"""
from __future__ import annotations

import numpy as np
import pytest
from instances import KERNELS, as_written, make_classification, make_regression

import svmref.formulations as F

TOL = {
    "objective": 1e-7,  # relative, two optimal values that must be equal
    "kkt": 1e-5,        # absolute, a KKT condition at an optimum solved as written (CLARABEL at 1e-12)
    "fd": 1e-6,         # relative, a gradient against central differences (step 1e-6)
}

SVR_CASES = {  # name: (kernel, C, epsilon)
    "rbf": ("rbf", 2.0, 0.1),
    "linear": ("linear", 0.5, 0.2),
    "poly_eps0": ("poly", 1.0, 0.0),
}


def _rel(a, b):
    return abs(a - b) / max(abs(a), abs(b))


def _svr(name):
    kernel, C, eps = SVR_CASES[name]
    X, y = make_regression(n=24, seed=3)
    K = KERNELS[kernel](X)
    f = F.get("svr")
    p = as_written(f.primal(K, y, C=C, epsilon=eps))
    d = as_written(f.dual(K, y, C=C, epsilon=eps))
    return K, y, C, eps, p, d


@pytest.mark.parametrize("name", sorted(SVR_CASES))
def test_svr_strong_duality_and_stationarity(name):
    """svr.md §1-§4: p* = -d*; W = sum_i (alpha+_i - alpha-_i) Phi_i; sum (alpha+ - alpha-) = 0; 0 <= alpha+- <= C."""
    K, y, C, eps, p, d = _svr(name)
    assert _rel(p.objective, -d.objective) <= TOL["objective"]
    beta = d.values["alpha_plus"] - d.values["alpha_minus"]
    Phi = F.kernel_factor(K).Phi
    W = p.values["W"]
    assert np.max(np.abs(W - Phi.T @ beta)) <= TOL["kkt"] * (1 + np.max(np.abs(W)))
    assert abs(beta.sum()) <= TOL["kkt"]
    for a in (d.values["alpha_plus"], d.values["alpha_minus"]):
        assert np.all(a >= -TOL["kkt"]) and np.all(a <= C + TOL["kkt"])


@pytest.mark.parametrize("name", sorted(SVR_CASES))
def test_svr_kkt_regions_and_complementarity(name):
    """svr.md §5: alpha+ = alpha- = 0 inside the tube, a free alpha+ (alpha-) on its upper (lower) edge,
    alpha at C outside it; alpha+_i alpha-_i = 0 when epsilon > 0 (at every optimum, not only free ones)."""
    K, y, C, eps, p, d = _svr(name)
    ap, am = d.values["alpha_plus"], d.values["alpha_minus"]
    beta = ap - am
    r = y - (K @ beta + p.values["b"])  # residual y_i - f(x_i) with the primal's b
    tol, e = TOL["kkt"], 1e-6 * C
    inside = (ap <= e) & (am <= e)
    assert np.all(np.abs(r[inside]) <= eps + tol)
    free_p, free_m = (ap > e) & (ap < C - e), (am > e) & (am < C - e)
    assert np.all(np.abs(r[free_p] - eps) <= tol) and np.all(np.abs(r[free_m] + eps) <= tol)
    assert np.all(r[ap >= C - e] >= eps - tol) and np.all(r[am >= C - e] <= -eps + tol)
    if eps > 0:
        assert np.max(ap * am) <= tol * C
        assert inside.any() and (free_p | free_m).any(), "the instance exercises both regions"


@pytest.mark.parametrize("mu", [0.0, 0.4, 0.8])
def test_sfm_dual_gradient_against_the_model(mu):
    """support_features.md §4: dW/dlam_j = 1 - y_j a(lam)'x_j with a from (8), against central differences
    of the objective of 003 eq. (10) as the cvxpy model states it (``objective.value`` at lam +- h e_j)."""
    X, y = make_classification(n=12, d=5, seed=7)
    f = F.get("support_features")
    prob = f.dual(X, y, C=1.0, mu=mu)
    lam_var = prob.variables()[0]
    lam = np.random.default_rng(6).uniform(0.1, 0.9, len(y))

    def W(v):
        lam_var.value = v
        return float(prob.objective.value)

    a = f.recover_a(X, y, lam, mu)
    grad = 1.0 - y * (X @ a)
    h = 1e-6
    fd = np.array([(W(lam + h * e) - W(lam - h * e)) / (2 * h) for e in np.eye(len(y))])
    assert np.max(np.abs(fd - grad)) <= TOL["fd"] * (1 + np.max(np.abs(grad)))

"""The worked example of ``docs/worked_example.md``: four points on a line, solved by hand on the page,
checked here against the models solved as written by cvxpy (``as_written``).

Data: x = (-2, -1, 1, 2), y = (-1, -1, +1, +1), linear kernel K = x x'. The page derives, for the
L1-SVM (003 (2)-(3)) and the Least 1-Norm SVM (000 (3)-(5)), the optimum (w, b), the multipliers alpha
and the optimal value; each number below is the page's fraction, not a measured one.
"""
from __future__ import annotations

import numpy as np
import pytest
from instances import as_written

import svmref.formulations as F

X = np.array([-2.0, -1.0, 1.0, 2.0])
Y = np.array([-1.0, -1.0, 1.0, 1.0])
K = np.outer(X, X)
TOL = 1e-6  # absolute, the as-written solve (CLARABEL at 1e-12) against an exact fraction

#: (formulation, C) -> the page's hand solution: w, b, alpha, p* (= -D*)
BY_HAND = {
    ("l1_svm", 1.0): dict(w=1.0, b=0.0, alpha=[0.0, 0.5, 0.5, 0.0], p=0.5),                 # §2
    ("least_1norm_svm", 1.0): dict(w=0.5, b=0.0, alpha=[-3 / 8, 1.0, 1.0, -3 / 8], p=9 / 8),  # §3
    ("l1_svm", 0.25): dict(w=0.5, b=0.0, alpha=[0.0, 0.25, 0.25, 0.0], p=3 / 8),            # §4, no free alpha
}


@pytest.mark.parametrize("name, C", list(BY_HAND), ids=lambda v: str(v))
def test_worked_example_by_hand(name, C):
    """worked_example.md: the hand solution equals the primal and the dual solved as written."""
    want = BY_HAND[(name, C)]
    f = F.get(name)
    p = as_written(f.primal(K, Y, C=C, X=X[:, None]))
    d = as_written(f.dual(K, Y, C=C))
    W = np.atleast_1d(p.values["W"])
    assert abs(abs(W[0]) - want["w"]) <= TOL  # the factor Phi = x up to sign: |w| is the model's w
    assert abs(p.values["b"] - want["b"]) <= TOL
    assert abs(p.objective - want["p"]) <= TOL and abs(-d.objective - want["p"]) <= TOL
    assert np.max(np.abs(d.values["alpha"] - want["alpha"])) <= TOL  # the dual's alpha is unique here
    # stationarity on the line: w = sum_i alpha_i y_i x_i, and sum_i alpha_i y_i = 0
    alpha = np.array(want["alpha"])
    assert abs(alpha @ (Y * X) - want["w"]) <= 1e-15 and abs(alpha @ Y) <= 1e-15


def test_least_1norm_is_not_sparse_l1_is():
    """worked_example.md §5: the L1-SVM ignores the two outer points (alpha = 0), the Least 1-Norm SVM
    pulls them onto its margin with alpha = -3/8: every alpha non-zero."""
    l1 = as_written(F.get("l1_svm").dual(K, Y, C=1.0)).values["alpha"]
    l1n = as_written(F.get("least_1norm_svm").dual(K, Y, C=1.0)).values["alpha"]
    assert np.sum(np.abs(l1) > 1e-6) == 2 and np.all(np.abs(l1n) > 0.3)

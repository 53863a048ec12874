"""my_solver: the L1-SVM solvers under test in the example project of docs/testing.md.

Each follows verify's contract for ``l1_svm``: ``f(K, y, C) -> (alpha, b)`` with the decision function
``f(x) = sum_i alpha_i y_i k(x_i, x) + b`` and the dual of 003 eq. (3) (000 Table 1): ``0 <= alpha_i <= C``,
``sum_i alpha_i y_i = 0``.

* :func:`solve`: exact, svmref's SMO (000 eqs. (8)-(11)) run to a KKT gap of 1e-8;
* :func:`solve_bias_bug`: the same alpha, with ``b`` averaged over every support vector, the bounded ones
  (``alpha_i = C``) included, a classic bug (the KKT conditions fix ``b`` by the free ``alpha_i`` only);
* :func:`solve_large_c_bug`: exact below C = 1e3; from C = 1e3 on, alpha is shrunk by 1 %, a bug that only
  a large C shows.
"""
import numpy as np

from svmref.solvers import smo

#: The C from which solve_large_c_bug goes wrong.
LARGE_C = 1e3


def solve(K, y, C):
    """Exact: svmref's SMO to a KKT gap of 1e-8 (no ``tol`` parameter, so verify does not set it)."""
    res = smo.l1_svm(K, y, C, tol=1e-8)
    return res.alpha, res.b


def solve_bias_bug(K, y, C):
    """Optimal alpha; b averaged over all support vectors, bounded ones included (wrong when some alpha_i = C)."""
    alpha, _ = solve(K, y, C)
    sv = alpha > 1e-8 * C
    return alpha, float(np.mean(y[sv] - K[sv] @ (alpha * y)))


def solve_large_c_bug(K, y, C):
    """Exact below C = 1e3; from there on alpha shrunk by 1 % (b left as it was)."""
    alpha, b = solve(K, y, C)
    if C >= LARGE_C:
        alpha = 0.99 * alpha
    return alpha, b

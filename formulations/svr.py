"""epsilon-SVR: Vapnik's support vector regression with the epsilon-insensitive loss (002 recalls it;
LIBSVM's ``epsilon-SVR``).  Derivation: ``docs/formulations/svr.md``.

Decision function: ``f(x) = sum_i (alpha^+_i - alpha^-_i) k(x_i, x) + b``.
"""
from __future__ import annotations

import cvxpy as cp

from svmref._validation import check_nonnegative

from ._base import C_param, Formulation


def _check_epsilon(epsilon) -> float:
    return check_nonnegative(epsilon, "epsilon", "width of the insensitive tube")


class SVR(Formulation):
    r"""epsilon-SVR (slacks on both sides of a tube of half-width epsilon).

    Primal, with ``K = Phi Phi^T``::

        min_{W, b, xi, xi*}  1/2 ||W||^2 + C sum_i (xi_i + xi*_i)
        s.t.                 y_i - W.Phi_i - b <= epsilon + xi_i,
                             W.Phi_i + b - y_i <= epsilon + xi*_i,     xi_i, xi*_i >= 0.

    Dual (a minimisation; ``alpha^+`` the multipliers of the first constraints, ``alpha^-`` of the second)::

        min  1/2 (alpha^+ - alpha^-)' K (alpha^+ - alpha^-) + epsilon sum_i (alpha^+_i + alpha^-_i)
             - sum_i y_i (alpha^+_i - alpha^-_i)
        s.t. sum_i (alpha^+_i - alpha^-_i) = 0,   0 <= alpha^+_i, alpha^-_i <= C.

    Recovery ``W = sum_i (alpha^+_i - alpha^-_i) Phi_i``; strong duality ``p* = -d*``.
    """

    name = "svr"
    paper = "002 (Vapnik's SVM); LIBSVM epsilon-SVR"
    task = "regression"
    hyper = ("C", "epsilon")

    def primal(self, K, y, C=1.0, epsilon=0.1, *, X=None, psd="raise") -> cp.Problem:
        """``min 1/2||W||^2 + C sum (xi + xi*)`` s.t. ``|y_i - W.Phi_i - b| <= epsilon + slack``."""
        K, y = self._data(K, y, X)
        hyper = self._check_hyper(C=C)
        eps = _check_epsilon(epsilon)
        P, rules = self._params(C_param(), hyper)
        F = self._factor(K, X, psd)
        N = K.shape[0]
        W = cp.Variable(F.Phi.shape[1], name="W")
        b = cp.Variable(name="b")
        xi = cp.Variable(N, name="xi")
        xi_star = cp.Variable(N, name="xi_star")
        f = F.Phi @ W + b
        objective = cp.Minimize(0.5 * cp.sum_squares(W) + P["C"] * (cp.sum(xi) + cp.sum(xi_star)))
        constraints = [y - f <= eps + xi, f - y <= eps + xi_star, xi >= 0, xi_star >= 0]
        return self._problem(objective, constraints, form="primal", cite="epsilon-SVR primal (docs/formulations/svr.md)",
                             sense="min", hyper={**hyper, "epsilon": eps}, rules=rules, factor=F, scale=self._scale(K))

    def dual(self, K, y, C=1.0, epsilon=0.1, *, psd="raise") -> cp.Problem:
        """``min 1/2 (a+ - a-)'K(a+ - a-) + epsilon sum(a+ + a-) - y'(a+ - a-)``, ``sum(a+ - a-) = 0``,
        ``0 <= a+, a- <= C``."""
        K, y = self._data(K, y)
        hyper = self._check_hyper(C=C)
        eps = _check_epsilon(epsilon)
        P, rules = self._params(C_param(), hyper)
        Kp, rep = self._psd_gram(K, psd)
        N = K.shape[0]
        ap = cp.Variable(N, name="alpha_plus")
        am = cp.Variable(N, name="alpha_minus")
        d = ap - am
        objective = cp.Minimize(0.5 * cp.quad_form(d, cp.psd_wrap(Kp)) + eps * cp.sum(ap + am) - y @ d)
        constraints = [cp.sum(d) == 0, ap >= 0, am >= 0, ap <= P["C"], am <= P["C"]]
        return self._problem(objective, constraints, form="dual", cite="epsilon-SVR dual (docs/formulations/svr.md)",
                             sense="min", hyper={**hyper, "epsilon": eps}, rules=rules, gram=rep, scale=self._scale(K))

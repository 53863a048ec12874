"""Least 1-Norm SVM (000 eqs. (3)-(6)): L1 loss with equality constraints."""
from __future__ import annotations

import cvxpy as cp

from ._base import C_param, Formulation
from ._box import BoxCertifier
from ._certify import Multipliers


class Least1NormSVM(Formulation):
    r"""Least 1-Norm SVM (slacks, equality constraints: the "?" cell of 000 Table 1).

    Primal (000, eq. (3); the extraction reads ``C sum_i i|`` for ``C sum_i |xi_i|``, rebuilt here)::

        min_{W, b, xi}  1/2 ||W||^2 + C sum_i |xi_i|
        s.t.            y_i (W . Phi(x_i) + b) = 1 - xi_i   for all i.

    LP form (000, eq. (4)), with ``t_i >= |xi_i|`` and ``xi`` eliminated::

        min_{W, b, t}  1/2 ||W||^2 + C sum_i t_i
        s.t.           -t_i <= 1 - y_i (W . Phi(x_i) + b) <= t_i.

    Dual (000, eq. (5)), ``alpha_i = gamma_i - beta_i`` (the multipliers of the two sides of (4))::

        min_alpha  1/2 sum_ij alpha_i alpha_j y_i y_j K_ij - sum_i alpha_i
        s.t.       sum_i alpha_i y_i = 0,   -C <= alpha_i <= C,

    the L1-SVM dual with lower bound ``-C`` for 0. KKT conditions (000, eq. (6)), with
    ``W = sum alpha_i y_i Phi_i`` and ``sum alpha_i y_i = 0``::

        y_i (W.Phi_i + b) = 1   if -C < alpha_i < C
        y_i (W.Phi_i + b) <= 1  if alpha_i = C
        y_i (W.Phi_i + b) >= 1  if alpha_i = -C.

    Strong duality: ``p* = -d*``.
    """

    name = "least_1norm_svm"
    paper = "000 eqs. (3), (4), (5), (6)"
    forms = ("lp",)

    def primal(self, K, y, C=1.0, *, X=None, psd="raise") -> cp.Problem:
        """000, eq. (3): ``min 1/2||W||^2 + C sum |xi_i|`` s.t. ``y_i(W.Phi_i + b) = 1 - xi_i``."""
        K, y = self._data(K, y, X)
        hyper = self._check_hyper(C=C)
        P, rules = self._params(C_param(), hyper)
        F = self._factor(K, X, psd)
        W = cp.Variable(F.Phi.shape[1], name="W")
        b = cp.Variable(name="b")
        xi = cp.Variable(K.shape[0], name="xi")
        objective = cp.Minimize(0.5 * cp.sum_squares(W) + P["C"] * cp.norm1(xi))
        constraints = [cp.multiply(y, F.Phi @ W + b) == 1 - xi]
        # the multiplier nu of  y(Phi W + b) - (1 - xi) = 0  is -alpha (stationarity in W: W = -Phi'(y nu))
        certifier = BoxCertifier("l1n", K, y, "primal", Multipliers(minus=0), F.Phi)
        return self._problem(objective, constraints, form="primal", cite="000, eq. (3)", sense="min",
                             hyper=hyper, rules=rules, factor=F, scale=self._scale(K), certifier=certifier, box_dual=True)

    def lp(self, K, y, C=1.0, *, X=None, psd="raise") -> cp.Problem:
        """000, eq. (4): ``min 1/2||W||^2 + C sum t_i`` s.t. ``-t_i <= 1 - y_i(W.Phi_i + b) <= t_i``."""
        K, y = self._data(K, y, X)
        hyper = self._check_hyper(C=C)
        P, rules = self._params(C_param(), hyper)
        F = self._factor(K, X, psd)
        W = cp.Variable(F.Phi.shape[1], name="W")
        b = cp.Variable(name="b")
        t = cp.Variable(K.shape[0], name="t")
        margin = 1 - cp.multiply(y, F.Phi @ W + b)
        objective = cp.Minimize(0.5 * cp.sum_squares(W) + P["C"] * cp.sum(t))
        constraints = [-t <= margin, margin <= t]
        # alpha = gamma - beta (000, eq. (5)): the multipliers of the two sides
        certifier = BoxCertifier("l1n", K, y, "lp", Multipliers(plus=1, minus=0), F.Phi, slack="t")
        return self._problem(objective, constraints, form="lp", cite="000, eq. (4)", sense="min",
                             hyper=hyper, rules=rules, factor=F, scale=self._scale(K), certifier=certifier)

    def dual(self, K, y, C=1.0, *, psd="raise") -> cp.Problem:
        """000, eq. (5): ``min 1/2 (alpha*y)' K (alpha*y) - sum alpha`` s.t. ``y'alpha = 0, -C <= alpha <= C``."""
        K, y = self._data(K, y)
        hyper = self._check_hyper(C=C)
        P, rules = self._params(C_param(), hyper)
        Kp, rep = self._psd_gram(K, psd)
        alpha = cp.Variable(K.shape[0], name="alpha")
        Q = (y[:, None] * Kp) * y[None, :]  # exact: no factor, no eigenvalue dropped
        objective = cp.Minimize(0.5 * cp.quad_form(alpha, cp.psd_wrap(Q)) - cp.sum(alpha))
        constraints = [y @ alpha == 0, alpha >= -P["C"], alpha <= P["C"]]
        certifier = BoxCertifier("l1n", Kp, y, "dual", Multipliers(variable="alpha"))
        return self._problem(objective, constraints, form="dual", cite="000, eq. (5)", sense="min",
                             hyper=hyper, rules=rules, gram=rep, scale=self._scale(K), certifier=certifier,
                             box_dual=True)

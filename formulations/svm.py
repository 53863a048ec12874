"""L1-SVM and L2-SVM: the classical soft-margin SVMs (000 §1 and Table 1; 002; 003 eqs. (2)-(3)).

Decision function (both): ``f(x) = sum_i alpha_i y_i k(x_i, x) + b``.
"""
from __future__ import annotations

import cvxpy as cp

from ._base import C_inv_param, C_param, Formulation
from ._box import BoxCertifier
from ._certify import Multipliers


class L1SVM(Formulation):
    r"""L1-SVM (slacks, inequality constraints; 000 Table 1).

    Primal (003, eq. (2); 002 "J_1"; a = W, c = C, delta = xi), with ``K = Phi Phi^T``::

        min_{W, b, xi}  1/2 ||W||^2 + C sum_i xi_i
        s.t.            y_i (W . Phi(x_i) + b) >= 1 - xi_i,   xi_i >= 0.

    Dual (003, eq. (3), written as a minimisation as 000 eq. (5) does)::

        min_alpha  1/2 sum_ij alpha_i alpha_j y_i y_j K_ij - sum_i alpha_i
        s.t.       sum_i alpha_i y_i = 0,   0 <= alpha_i <= C.

    Strong duality: ``p* = -d*``. Recovery: ``W = sum_i alpha_i y_i Phi(x_i)`` (003, KKT after (3)).
    """

    name = "l1_svm"
    paper = "002; 003 eqs. (2)-(3); 000 Table 1"

    def primal(self, K, y, C=1.0, *, X=None, psd="raise") -> cp.Problem:
        """003, eq. (2): ``min 1/2||W||^2 + C sum xi`` s.t. ``y_i(W.Phi_i + b) >= 1 - xi_i, xi >= 0``."""
        K, y = self._data(K, y, X)
        hyper = self._check_hyper(C=C)
        P, rules = self._params(C_param(), hyper)
        F = self._factor(K, X, psd)
        Phi, N = F.Phi, K.shape[0]
        W = cp.Variable(Phi.shape[1], name="W")
        b = cp.Variable(name="b")
        xi = cp.Variable(N, name="xi")
        objective = cp.Minimize(0.5 * cp.sum_squares(W) + P["C"] * cp.sum(xi))
        constraints = [cp.multiply(y, Phi @ W + b) >= 1 - xi, xi >= 0]
        certifier = BoxCertifier("l1", K, y, "primal", Multipliers(plus=0), Phi)
        return self._problem(objective, constraints, form="primal", cite="003, eq. (2)", sense="min",
                             hyper=hyper, rules=rules, factor=F, scale=self._scale(K), certifier=certifier, box_dual=True)

    def dual(self, K, y, C=1.0, *, psd="raise") -> cp.Problem:
        """003, eq. (3) as a minimisation: ``min 1/2 (alpha*y)' K (alpha*y) - sum alpha``,
        ``0 <= alpha <= C``, ``y'alpha = 0``."""
        K, y = self._data(K, y)
        hyper = self._check_hyper(C=C)
        P, rules = self._params(C_param(), hyper)
        Kp, rep = self._psd_gram(K, psd)
        alpha = cp.Variable(K.shape[0], name="alpha")
        Q = (y[:, None] * Kp) * y[None, :]  # (alpha*y)' K (alpha*y) = alpha' Q alpha, exactly (no factor)
        objective = cp.Minimize(0.5 * cp.quad_form(alpha, cp.psd_wrap(Q)) - cp.sum(alpha))
        constraints = [y @ alpha == 0, alpha >= 0, alpha <= P["C"]]
        certifier = BoxCertifier("l1", Kp, y, "dual", Multipliers(variable="alpha"))
        return self._problem(objective, constraints, form="dual", cite="003, eq. (3); 000, eq. (5) with lower bound 0",
                             sense="min", hyper=hyper, rules=rules, gram=rep, scale=self._scale(K), certifier=certifier,
                             box_dual=True)


class L2SVM(Formulation):
    r"""L2-SVM (squared slacks, inequality constraints; 000 §1 and Table 1).

    Primal (000 §1: "identical to (1), but with the equality constraints ... transformed into
    inequality ones")::

        min_{W, b, xi}  1/2 ||W||^2 + C/2 sum_i xi_i^2
        s.t.            y_i (W . Phi(x_i) + b) >= 1 - xi_i.

    (``xi_i >= 0`` is not needed: a negative slack is never optimal since ``xi_i = 0`` satisfies the
    constraint with a smaller objective.)

    Dual (derived here; the papers state only Table 1). Lagrangian with ``alpha_i >= 0``::

        L = 1/2||W||^2 + C/2 sum xi_i^2 - sum_i alpha_i [y_i (W.Phi_i + b) - 1 + xi_i]
        dL/dW = 0   ->  W = sum_i alpha_i y_i Phi_i
        dL/db = 0   ->  sum_i alpha_i y_i = 0
        dL/dxi_i = 0 -> xi_i = alpha_i / C

    Substituting gives ``-1/2 sum alpha_i alpha_j y_i y_j (K_ij + delta_ij / C) + sum alpha_i``; as a
    minimisation::

        min_alpha  1/2 sum_ij alpha_i alpha_j y_i y_j Ktilde_ij - sum_i alpha_i,   Ktilde = K + I/C
        s.t.       sum_i alpha_i y_i = 0,   alpha_i >= 0.

    Strong duality: ``p* = -d*``.
    """

    name = "l2_svm"
    paper = "000 §1 and Table 1 (dual derived)"

    def primal(self, K, y, C=1.0, *, X=None, psd="raise") -> cp.Problem:
        """000 §1: ``min 1/2||W||^2 + C/2 sum xi^2`` s.t. ``y_i(W.Phi_i + b) >= 1 - xi_i``."""
        K, y = self._data(K, y, X)
        hyper = self._check_hyper(C=C)
        P, rules = self._params(C_param(), hyper)
        F = self._factor(K, X, psd)
        Phi, N = F.Phi, K.shape[0]
        W = cp.Variable(Phi.shape[1], name="W")
        b = cp.Variable(name="b")
        xi = cp.Variable(N, name="xi")
        objective = cp.Minimize(0.5 * cp.sum_squares(W) + 0.5 * P["C"] * cp.sum_squares(xi))
        constraints = [cp.multiply(y, Phi @ W + b) >= 1 - xi]
        certifier = BoxCertifier("l2", K, y, "primal", Multipliers(plus=0), Phi)
        return self._problem(objective, constraints, form="primal", cite="000 §1 (L2-SVM)", sense="min",
                             hyper=hyper, rules=rules, factor=F, scale=self._scale(K), certifier=certifier, box_dual=True)

    def dual(self, K, y, C=1.0, *, psd="raise") -> cp.Problem:
        """``min 1/2 (alpha*y)'(K + I/C)(alpha*y) - sum alpha`` s.t. ``y'alpha = 0, alpha >= 0`` (derived above)."""
        K, y = self._data(K, y)
        hyper = self._check_hyper(C=C)
        P, rules = self._params(C_inv_param(), hyper)
        Kp, rep = self._psd_gram(K, psd)
        alpha = cp.Variable(K.shape[0], name="alpha")
        Q = (y[:, None] * Kp) * y[None, :]
        # (alpha*y)' (K + I/C) (alpha*y) = alpha' Q alpha + ||alpha||^2 / C   (y_i^2 = 1)
        objective = cp.Minimize(0.5 * cp.quad_form(alpha, cp.psd_wrap(Q)) + 0.5 * P["C_inv"] * cp.sum_squares(alpha)
                                - cp.sum(alpha))
        constraints = [y @ alpha == 0, alpha >= 0]
        certifier = BoxCertifier("l2", Kp, y, "dual", Multipliers(variable="alpha"))
        return self._problem(objective, constraints, form="dual", cite="L2-SVM dual (derived; 000 Table 1)",
                             sense="min", hyper=hyper, rules=rules, gram=rep, scale=self._scale(K), certifier=certifier,
                             box_dual=True)

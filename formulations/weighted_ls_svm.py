r"""The weighted LS-SVM, classification and regression forms: each squared error with its own weight ``v_i > 0``.

Not a problem of the five papers but the LS-SVM community's own answer to the outlier sensitivity that 000 finds in
the LS-SVM's squared loss: Suykens, De Brabanter, Lukas & Vandewalle, "Weighted least squares support vector
machines: robustness and sparse approximation", Neurocomputing 48 (2002) 85-105 (LS-SVMlab's ``robustlssvm``). The
primal of 004 eq. (1) (regression) or 000 eq. (1) (classification) with the penalty ``C/2 sum_i v_i e_i^2``::

    min_{W, b, e}  1/2 ||W||^2 + C/2 sum_i v_i e_i^2
    s.t.           W . Phi(x_i) + b = y_i - e_i          (regression)
                   y_i (W . Phi(x_i) + b) = 1 - e_i     (classification).

Lagrangian with multipliers ``alpha_i`` (the derivation of 004 §2 with ``C`` replaced by ``C v_i``): stationarity
gives ``W = sum_i alpha_i Phi_i`` (classification ``sum_i alpha_i y_i Phi_i``), ``sum_i alpha_i = 0``
(``sum_i alpha_i y_i = 0``) and ``alpha_i = C v_i e_i``. Substituting::

    min_alpha  1/2 alpha' (K + D) alpha - y'alpha        s.t.  1'alpha = 0        (regression)
    min_alpha  1/2 alpha' Y (K + D) Y alpha - 1'alpha    s.t.  y'alpha = 0        (classification)

with ``D = diag(1 / (C v_i))``, and the KKT system is the LS-SVM's (004 eq. (2); 000 eqs. (2), (7)) with ``I/C``
replaced by ``D``. ``v = 1`` is the LS-SVM itself. Strong duality ``p* = -d*`` (convex quadratic objective, affine
constraints). The weights are data of the problem (a vector fixed when it is built), not a cvxpy parameter.

The reference is the KKT system solved directly and certified on K (:class:`.ls_svm.LSSystem` with ``v``).
"""
from __future__ import annotations

import cvxpy as cp
import numpy as np

from svmref._validation import check_weights

from ._base import C_param, Formulation
from .ls_svm import LSSystem


def check_v(v, n: int) -> np.ndarray:
    """``v``: None (all 1) or ``n`` finite weights > 0 (:func:`svmref._validation.check_weights`, naming ``v``)."""
    return np.ones(n) if v is None else check_weights(v, n, "v")


class _Weighted(Formulation):
    """The primal, dual and KKT system shared by the two weighted forms (module docstring)."""

    classification = True
    forms = ("kkt_system",)

    def _constraint(self, lhs, y, e):
        return [cp.multiply(y, lhs) == 1 - e] if self.classification else [lhs == y - e]

    def primal(self, K, y, C=1.0, *, v=None, X=None, psd="raise") -> cp.Problem:
        """``min 1/2||W||^2 + C/2 sum v_i e_i^2`` s.t. the LS-SVM's equality (module docstring)."""
        K, y = self._data(K, y, X)
        v = check_v(v, K.shape[0])
        hyper = self._check_hyper(C=C)
        P, rules = self._params(C_param(), hyper)
        F = self._factor(K, X, psd)
        W = cp.Variable(F.Phi.shape[1], name="W")
        b = cp.Variable(name="b")
        xi = cp.Variable(K.shape[0], name="xi")
        objective = cp.Minimize(0.5 * cp.sum_squares(W) + 0.5 * P["C"] * cp.sum(cp.multiply(v, cp.square(xi))))
        system = LSSystem(K, y, "primal", F.Phi, classification=self.classification, v=v)
        return self._problem(objective, self._constraint(F.Phi @ W + b, y, xi), form="primal", cite=self._cite,
                             sense="min", hyper=hyper, rules=rules, factor=F, scale=self._scale(K), system=system)

    def dual(self, K, y, C=1.0, *, v=None, psd="raise") -> cp.Problem:
        """``min 1/2 alpha'S(K + D)S alpha - r'alpha`` s.t. ``s'alpha = 0`` (``S = Y``, ``r = 1``, ``s = y`` for
        classification; ``S = I``, ``r = y``, ``s = 1`` for regression), ``D = diag(1/(C v_i))``."""
        K, y = self._data(K, y)
        v = check_v(v, K.shape[0])
        hyper = self._check_hyper(C=C)
        P, rules = self._params({"C_inv": ({"pos": True}, lambda h: 1.0 / h["C"])}, hyper)
        Kp, rep = self._psd_gram(K, psd)
        alpha = cp.Variable(K.shape[0], name="alpha")
        s = y if self.classification else np.ones(K.shape[0])
        r = np.ones(K.shape[0]) if self.classification else y
        Q = (s[:, None] * Kp) * s[None, :]
        objective = cp.Minimize(0.5 * cp.quad_form(alpha, cp.psd_wrap(Q))
                                + 0.5 * P["C_inv"] * cp.sum(cp.multiply(1.0 / v, cp.square(alpha))) - r @ alpha)
        system = LSSystem(Kp, y, "dual", classification=self.classification, v=v)
        return self._problem(objective, [s @ alpha == 0], form="dual", cite=f"dual of {self._cite}", sense="min",
                             hyper=hyper, rules=rules, gram=rep, scale=self._scale(K), system=system)

    def kkt_system(self, K, y, C=1.0, *, v=None) -> tuple[np.ndarray, np.ndarray]:
        """The LS-SVM's system with ``I/C`` replaced by ``diag(1/(C v_i))``: ``(A, rhs)``, unknowns ``[b; alpha]``."""
        K, y = self._data(K, y)
        v = check_v(v, K.shape[0])
        C = self._check_scaled(self._check_hyper(C=C), self._scale(K))["C"]
        N = K.shape[0]
        s = y if self.classification else np.ones(N)
        A = np.zeros((N + 1, N + 1))
        A[0, 1:] = s
        A[1:, 0] = s
        A[1:, 1:] = (s[:, None] * K) * s[None, :] + np.diag(1.0 / (C * v))
        return A, np.concatenate([[0.0], np.ones(N) if self.classification else y])


class WeightedLSSVM(_Weighted):
    """The weighted LS-SVM classifier (module docstring; 000 eq. (1) with ``C v_i``)."""

    name = "weighted_ls_svm"
    paper = "000 eqs. (1)-(2) with weights (Suykens et al., Neurocomputing 2002)"
    task = "classification"
    classification = True
    _cite = "000, eq. (1), weighted"


class WeightedLSSVMRegression(_Weighted):
    """The weighted LS-SVM regression (module docstring; 004 eq. (1) with ``C v_i``)."""

    name = "weighted_ls_svm_regression"
    paper = "004 eqs. (1)-(2) with weights (Suykens et al., Neurocomputing 2002)"
    task = "regression"
    classification = False
    _cite = "004, eq. (1), weighted"


__all__ = ["WeightedLSSVM", "WeightedLSSVMRegression"]

"""LS-SVM, classification and regression forms (000 eqs. (1)-(2), (7); 002; 004 eqs. (1)-(2))."""
from __future__ import annotations

from dataclasses import dataclass

import cvxpy as cp
import numpy as np

from . import _certify as cert
from ._base import C_inv_param, C_param, Formulation
from ._certify import Certified


@dataclass(frozen=True, eq=False)
class LSSystem(cert.KernelSystem):
    """The direct reference of the LS-SVM (000 eqs. (2), (7); 004 eq. (2)): the KKT system in ``[b; alpha]``
    solved by LU with a condition estimate and extended-precision refinement (:func:`._certify.refined_solve`);
    the values and objective of ``form`` are derived from it on the original K.

    Classification: the equality row is ``sum_i y_i alpha_i = 0`` and the right-hand side 1 (000 eq. (7));
    regression: ``sum_i alpha_i = 0`` and the right-hand side y (004 eq. (2)).
    """

    Phi: np.ndarray | None = None
    classification: bool = True
    v: np.ndarray | None = None  # the weights of the weighted LS-SVM: the diagonal 1/C becomes 1/(C v_i)

    def solve(self, hyper: dict, tol: float) -> Certified:
        """Solve the system at ``hyper`` (``C``, or ``C = zeta / mu`` for the mu/zeta form of 002) and certify it."""
        K, y, N = self.K, self.y, self.K.shape[0]
        C = hyper["zeta"] / hyper["mu"] if "zeta" in hyper else hyper["C"]
        s = y if self.classification else np.ones(N)          # the equality row: sum_i s_i alpha_i = 0
        r = np.ones(N) if self.classification else y          # right-hand side
        K_ld, Kx = self._K_ld, self._Kx
        iC = cert.LD(1) / cert.LD(C) if self.v is None else cert.LD(1) / (cert.LD(C) * self.v.astype(cert.LD))
        s_ld = s.astype(cert.LD)
        A = np.zeros((N + 1, N + 1))
        A[0, 1:] = s
        A[1:, 0] = s
        A[1:, 1:] = (s[:, None] * K) * s[None, :]
        A[np.arange(1, N + 1), np.arange(1, N + 1)] += np.asarray(iC, dtype=float)
        rhs = np.concatenate([[0.0], r])

        def mv(x):  # x in double; the products with K as in twice the precision, the rest in longdouble
            b, a = x[0], x[1:]
            a_ld = a.astype(cert.LD)
            return np.concatenate([[s_ld @ a_ld], s_ld * Kx(s * a) + a_ld * iC + s_ld * cert.LD(b)])

        x, info = cert.refined_solve(A, rhs, mv, tol=tol, what="the LS-SVM KKT system")
        return self._certified(x, s, r, C, iC, K_ld, info, hyper, tol)

    def _certified(self, x, s, r, C, iC, K_ld, info, hyper, tol) -> Certified:
        """The objective of the form (000 eqs. (1), (2); 002's J_2 is ``mu`` times (1)), its values and the
        multipliers of its constraint: ``b`` for the dual's ``s'alpha = 0``; ``-alpha`` for the primal's
        ``s_i (W.Phi_i + b) - r_i + xi_i = 0`` (stationarity in xi: ``C xi + nu = 0``), ``-mu alpha`` in the
        mu/zeta form (``zeta e + nu = 0``, ``e = alpha / C``)."""
        b, a = float(x[0]), x[1:]
        v = (s * a).astype(cert.LD)
        quad = float(v @ (K_ld @ v))
        a_ld = a.astype(cert.LD)
        lin = float(r.astype(cert.LD) @ a_ld)
        d = 0.5 * quad + 0.5 * float(np.sum(a_ld * a_ld * iC)) - lin
        vw = np.ones(len(a)) if self.v is None else self.v
        xi = a / (C * vw)
        xi_ld = xi.astype(cert.LD)
        p = 0.5 * quad + 0.5 * C * float(np.sum(vw.astype(cert.LD) * xi_ld * xi_ld))
        size = (float(np.abs(a) @ (np.abs(self.K) @ np.abs(a))) + float(np.sum(a * a / (C * vw)))
                + float(np.abs(r) @ np.abs(a)))
        common = {"info": info, "tol": tol, "p": p, "d": d, "size": size, "n": len(a)}
        if self.form == "dual":
            return cert.direct_certified(d, {"alpha": a}, duals=[b], **common)
        W = self.Phi.T @ (s * a)
        if self.form == "primal_mu_zeta":
            return cert.direct_certified(hyper["mu"] * p, {"w": W, "b": b, "e": xi},
                                         duals=[-hyper["mu"] * a], **common)
        return cert.direct_certified(p, {"W": W, "b": b, "xi": xi}, duals=[-a], **common)


class LSSVM(Formulation):
    r"""LS-SVM classifier (squared slacks, equality constraints; 000 Table 1).

    Primal (000, eq. (1))::

        min_{W, b, xi}  1/2 ||W||^2 + C/2 sum_i xi_i^2
        s.t.            y_i (W . Phi(x_i) + b) = 1 - xi_i   for all i.

    Dual (000, eq. (2)), alpha free::

        min_alpha  1/2 sum_ij alpha_i alpha_j y_i y_j Ktilde_ij - sum_i alpha_i,   Ktilde = K + I/C
        s.t.       sum_i alpha_i y_i = 0.

    Stationarity gives ``W = sum alpha_i y_i Phi_i``, ``alpha_i = C xi_i`` and the only primal KKT
    condition (000, eq. (7)) ``y_i (W.Phi_i + b) = 1 - alpha_i / C``; with ``sum alpha_i y_i = 0`` this is
    the linear KKT system (:meth:`kkt_system`)::

        [ 0   y^T       ] [b    ]   [0]
        [ y   Y Ktilde Y] [alpha] = [1],     Y = diag(y).

    The mu/zeta form of 002 (:meth:`primal_mu_zeta`) has the same minimiser with ``C = zeta/mu``.
    Strong duality: ``p* = -d*``.
    """

    name = "ls_svm"
    paper = "000 eqs. (1), (2), (7); 002 (mu/zeta form)"
    forms = ("kkt_system", "primal_mu_zeta")

    def primal(self, K, y, C=1.0, *, X=None, psd="raise") -> cp.Problem:
        """000, eq. (1): ``min 1/2||W||^2 + C/2 sum xi^2`` s.t. ``y_i(W.Phi_i + b) = 1 - xi_i``."""
        K, y = self._data(K, y, X)
        hyper = self._check_hyper(C=C)
        P, rules = self._params(C_param(), hyper)
        F = self._factor(K, X, psd)
        W = cp.Variable(F.Phi.shape[1], name="W")
        b = cp.Variable(name="b")
        xi = cp.Variable(K.shape[0], name="xi")
        objective = cp.Minimize(0.5 * cp.sum_squares(W) + 0.5 * P["C"] * cp.sum_squares(xi))
        constraints = [cp.multiply(y, F.Phi @ W + b) == 1 - xi]
        system = LSSystem(K, y, "primal", F.Phi, classification=True)
        return self._problem(objective, constraints, form="primal", cite="000, eq. (1)", sense="min",
                             hyper=hyper, rules=rules, factor=F, scale=self._scale(K), system=system)

    def dual(self, K, y, C=1.0, *, psd="raise") -> cp.Problem:
        """000, eq. (2): ``min 1/2 sum alpha_i alpha_j y_i y_j Ktilde_ij - sum alpha_i`` s.t. ``sum alpha_i y_i = 0``."""
        K, y = self._data(K, y)
        hyper = self._check_hyper(C=C)
        P, rules = self._params(C_inv_param(), hyper)
        Kp, rep = self._psd_gram(K, psd)
        alpha = cp.Variable(K.shape[0], name="alpha")
        Q = (y[:, None] * Kp) * y[None, :]
        # Ktilde = K + I/C, so (y*alpha)' Ktilde (y*alpha) = alpha' Q alpha + ||alpha||^2 / C
        objective = cp.Minimize(0.5 * cp.quad_form(alpha, cp.psd_wrap(Q)) + 0.5 * P["C_inv"] * cp.sum_squares(alpha)
                                - cp.sum(alpha))
        constraints = [y @ alpha == 0]
        system = LSSystem(Kp, y, "dual", classification=True)
        return self._problem(objective, constraints, form="dual", cite="000, eq. (2)", sense="min",
                             hyper=hyper, rules=rules, gram=rep, scale=self._scale(K), system=system)

    def kkt_system(self, K, y, C=1.0) -> tuple[np.ndarray, np.ndarray]:
        """The linear KKT system of 000 eqs. (2), (7): returns ``(A, rhs)`` with unknowns ``[b; alpha]``.

        Row 0: ``sum_i alpha_i y_i = 0``; row i: ``y_i (sum_j alpha_j y_j Ktilde_ij + b) = 1``
        (000 eq. (7) with ``W = sum_j alpha_j y_j Phi_j``), ``Ktilde = K + I/C``.
        """
        K, y = self._data(K, y)
        C = self._check_scaled(self._check_hyper(C=C), self._scale(K))["C"]
        N = K.shape[0]
        Ktilde = K + np.eye(N) / C
        A = np.zeros((N + 1, N + 1))
        A[0, 1:] = y
        A[1:, 0] = y
        A[1:, 1:] = (y[:, None] * Ktilde) * y[None, :]
        rhs = np.concatenate([[0.0], np.ones(N)])
        return A, rhs

    def primal_mu_zeta(self, K, y, mu=1.0, zeta=1.0, *, X=None, psd="raise") -> cp.Problem:
        """002, "J_2": ``min mu/2 w'w + zeta/2 sum e_i^2`` s.t. ``y_i (w'phi(x_i) + b) = 1 - e_i``.

        Its minimiser (w, b, e) equals the LS-SVM's (000 eq. (1)) with ``C = gamma = zeta / mu``
        (002: "the solution does only depend on the ratio gamma = zeta/mu"); its optimal value is
        ``mu`` times the LS-SVM's at that ``C``.
        """
        K, y = self._data(K, y, X)
        hyper = {"mu": self._check_hyper(mu=mu)["mu"], "zeta": self._check_hyper(zeta=zeta)["zeta"]}
        P, rules = self._params({"mu": ({"pos": True}, lambda h: h["mu"]),
                                 "zeta": ({"pos": True}, lambda h: h["zeta"])}, hyper)
        F = self._factor(K, X, psd)
        w = cp.Variable(F.Phi.shape[1], name="w")
        b = cp.Variable(name="b")
        e = cp.Variable(K.shape[0], name="e")
        objective = cp.Minimize(0.5 * P["mu"] * cp.sum_squares(w) + 0.5 * P["zeta"] * cp.sum_squares(e))
        constraints = [cp.multiply(y, F.Phi @ w + b) == 1 - e]
        system = LSSystem(K, y, "primal_mu_zeta", F.Phi, classification=True)
        return self._problem(objective, constraints, form="primal_mu_zeta", cite="002 (J_2, mu/zeta form)",
                             sense="min", hyper=hyper, rules=rules, factor=F, scale=self._scale(K), system=system)


class LSSVMRegression(Formulation):
    r"""LS-SVM regression form (004, eqs. (1)-(2); 002).

    Primal (004, eq. (1))::

        min_{W, b, xi}  1/2 ||W||^2 + C/2 sum_i xi_i^2
        s.t.            W . Phi(x_i) + b = y_i - xi_i   for all i.

    Stationarity (004 §2): ``W = sum alpha_i Phi_i``, ``sum alpha_i = 0``, ``alpha_i = C xi_i``. The dual
    (written out here; 004 goes straight to the system)::

        min_alpha  1/2 alpha' Ktilde alpha - y' alpha,   Ktilde = K + I/C
        s.t.       sum_i alpha_i = 0,

    and its KKT conditions are the (N+1) x (N+1) system (004, eq. (2); 002)::

        [ 0  1^T    ] [b    ]   [0]
        [ 1  Ktilde ] [alpha] = [y].

    Decision ``f(x) = sum alpha_i k(x_i, x) + b``. For ``y in {-1, +1}`` this is the classification
    form with ``alpha_reg = y * alpha_cls`` (004 §1: "the dual formulations for classification and
    regression are identical (after a transformation of variables)"). Strong duality: ``p* = -d*``.
    """

    name = "ls_svm_regression"
    paper = "004 eqs. (1)-(2); 002"
    task = "regression"
    forms = ("kkt_system",)

    def primal(self, K, y, C=1.0, *, X=None, psd="raise") -> cp.Problem:
        """004, eq. (1): ``min 1/2||W||^2 + C/2 sum xi^2`` s.t. ``W.Phi_i + b = y_i - xi_i``."""
        K, y = self._data(K, y, X)
        hyper = self._check_hyper(C=C)
        P, rules = self._params(C_param(), hyper)
        F = self._factor(K, X, psd)
        W = cp.Variable(F.Phi.shape[1], name="W")
        b = cp.Variable(name="b")
        xi = cp.Variable(K.shape[0], name="xi")
        objective = cp.Minimize(0.5 * cp.sum_squares(W) + 0.5 * P["C"] * cp.sum_squares(xi))
        constraints = [F.Phi @ W + b == y - xi]
        system = LSSystem(K, y, "primal", F.Phi, classification=False)
        return self._problem(objective, constraints, form="primal", cite="004, eq. (1)", sense="min",
                             hyper=hyper, rules=rules, factor=F, scale=self._scale(K), system=system)

    def dual(self, K, y, C=1.0, *, psd="raise") -> cp.Problem:
        """Dual of 004 eq. (1): ``min 1/2 alpha'(K + I/C)alpha - y'alpha`` s.t. ``sum alpha = 0``."""
        K, y = self._data(K, y)
        hyper = self._check_hyper(C=C)
        P, rules = self._params(C_inv_param(), hyper)
        Kp, rep = self._psd_gram(K, psd)
        alpha = cp.Variable(K.shape[0], name="alpha")
        objective = cp.Minimize(0.5 * cp.quad_form(alpha, cp.psd_wrap(Kp)) + 0.5 * P["C_inv"] * cp.sum_squares(alpha)
                                - y @ alpha)
        constraints = [cp.sum(alpha) == 0]
        system = LSSystem(Kp, y, "dual", classification=False)
        return self._problem(objective, constraints, form="dual", cite="dual of 004, eq. (1)", sense="min",
                             hyper=hyper, rules=rules, gram=rep, scale=self._scale(K), system=system)

    def kkt_system(self, K, y, C=1.0) -> tuple[np.ndarray, np.ndarray]:
        """004, eq. (2): ``[[0, 1'], [1, K + I/C]] [b; alpha] = [0; y]``; returns ``(A, rhs)``."""
        K, y = self._data(K, y)
        C = self._check_scaled(self._check_hyper(C=C), self._scale(K))["C"]
        N = K.shape[0]
        A = np.zeros((N + 1, N + 1))
        A[0, 1:] = 1.0
        A[1:, 0] = 1.0
        A[1:, 1:] = K + np.eye(N) / C
        return A, np.concatenate([[0.0], y])

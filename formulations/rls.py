"""Regularised least squares classification (001 eqs. (7)-(9) and appendix)."""
from __future__ import annotations

from dataclasses import dataclass

import cvxpy as cp
import numpy as np

from . import _certify as cert
from ._base import Formulation
from ._certify import Certified


@dataclass(frozen=True, eq=False)
class RLSSystem(cert.KernelSystem):
    """The direct reference of RLS: 001 eq. (8) ``(m gamma I + K) c = y`` by Cholesky (LU if not SPD to working
    precision), ``dpocon`` condition estimate, extended-precision refinement; ``alpha = 2 gamma c`` for the dual."""


    def solve(self, hyper: dict, tol: float) -> Certified:
        """Solve (8) at ``hyper["gamma"]``; the objective of the form: (7) for the primal, its dual for the dual."""
        K, y, m = self.K, self.y, self.K.shape[0]
        gamma = hyper["gamma"]
        K_ld, Kx, mg = self._K_ld, self._Kx, cert.LD(m) * cert.LD(gamma)
        A = K + (m * gamma) * np.eye(m)
        c, info = cert.refined_solve(A, y, lambda x: Kx(x) + mg * x.astype(cert.LD), spd=True, tol=tol,
                                     what="the RLS system (001, eq. (8))")
        c_ld = c.astype(cert.LD)
        Kc = K_ld @ c_ld
        e = y.astype(cert.LD) - Kc
        p = float(e @ e) / m + gamma * float(c_ld @ Kc)          # 001, eq. (7)
        a_ld = 2 * cert.LD(gamma) * c_ld
        d = float(m / 4.0 * (a_ld @ a_ld) + (a_ld @ (K_ld @ a_ld)) / (4 * cert.LD(gamma)) - y.astype(cert.LD) @ a_ld)
        Kabs_c = np.abs(K) @ np.abs(c)
        ca = np.abs(np.asarray(a_ld, dtype=float))
        size = (float((np.abs(y) + Kabs_c) @ (np.abs(y) + Kabs_c)) / m + gamma * float(np.abs(c) @ Kabs_c)
                + m / 4.0 * float(ca @ ca) + float(ca @ (np.abs(K) @ ca)) / (4 * gamma) + float(np.abs(y) @ ca))
        common = {"info": info, "tol": tol, "p": p, "d": d, "size": size, "n": m, "duals": []}
        if self.form == "dual":
            return cert.direct_certified(d, {"alpha": np.asarray(a_ld, dtype=float)}, **common)
        return cert.direct_certified(p, {"c": c}, **common)


class RLS(Formulation):
    r"""Regularised least squares (001).

    Primal (001, eq. (7)) over the RKHS; by the representer theorem (001 appendix, eq. (10))
    ``f = sum_i c_i K(x_i, .)``, so ``f(x_j) = (K c)_j`` and ``||f||_K^2 = c' K c = ||Phi' c||^2``::

        min_c  (1/m) sum_i (y_i - (K c)_i)^2 + gamma c' K c.

    Its minimiser solves the system (001, eq. (8)) ``(m gamma I + K) c = y`` (:meth:`system`), and
    ``f(x) = sum_i c_i K(x, x_i)`` (001, eq. (9)); no bias, as the paper has it.

    Dual (derived here; 001 gives only the system). Write the primal in feature space with
    ``f(x_i) = w . Phi_i`` and the residuals ``e_i = y_i - w . Phi_i`` as equality constraints::

        min_{w, e} (1/m) ||e||^2 + gamma ||w||^2   s.t.  e = y - Phi w.

    Lagrangian ``L = (1/m) e'e + gamma w'w + alpha'(y - Phi w - e)``:
    ``dL/dw = 0 -> w = Phi' alpha / (2 gamma)``; ``dL/de = 0 -> e = m alpha / 2``. Substituting,
    the dual function is ``y'alpha - (m/4) ||alpha||^2 - alpha' K alpha / (4 gamma)``, concave and
    unconstrained (the constraints were equalities); written as a minimisation::

        min_alpha  (m/4) ||alpha||^2 + (1/(4 gamma)) alpha' K alpha - y' alpha.

    Its optimum satisfies ``(m gamma I + K) alpha = 2 gamma y``, i.e. ``alpha = 2 gamma c`` with c of (8),
    and ``e = m alpha / 2 = m gamma c`` are the training residuals. Strong duality: ``p* = -d*``.
    """

    name = "rls"
    paper = "001 eqs. (7), (8), (9) (dual derived)"
    task = "regression"  # targets are real in (7); y in {-1, +1} for classification (001 §2)
    hyper = ("gamma",)
    forms = ("system",)

    def primal(self, K, y, gamma=1.0, *, X=None, psd="raise") -> cp.Problem:
        """001, eq. (7) with ``f = sum c_i K(x_i, .)``: ``min (1/m)||y - Kc||^2 + gamma c'Kc``."""
        K, y = self._data(K, y, X)
        hyper = self._check_hyper(gamma=gamma)
        P, rules = self._params({"gamma": ({"pos": True}, lambda h: h["gamma"])}, hyper)
        F = self._factor(K, X, psd)
        m = K.shape[0]
        c = cp.Variable(m, name="c")
        objective = cp.Minimize(cp.sum_squares(y - K @ c) / m + P["gamma"] * cp.sum_squares(F.Phi.T @ c))
        return self._problem(objective, [], form="primal", cite="001, eq. (7)", sense="min",
                             hyper=hyper, rules=rules, factor=F, scale=self._scale(K), system=RLSSystem(K, y, "primal"))

    def dual(self, K, y, gamma=1.0, *, psd="raise") -> cp.Problem:
        """``min (m/4)||alpha||^2 + alpha'K alpha/(4 gamma) - y'alpha`` (derived above; ``alpha = 2 gamma c``)."""
        K, y = self._data(K, y)
        hyper = self._check_hyper(gamma=gamma)
        P, rules = self._params({"gamma_inv": ({"pos": True}, lambda h: 1.0 / h["gamma"])}, hyper)
        Kp, rep = self._psd_gram(K, psd)
        m = K.shape[0]
        alpha = cp.Variable(m, name="alpha")
        objective = cp.Minimize(
            m / 4.0 * cp.sum_squares(alpha) + 0.25 * P["gamma_inv"] * cp.quad_form(alpha, cp.psd_wrap(Kp)) - y @ alpha
        )
        return self._problem(objective, [], form="dual", cite="RLS dual (derived from 001, eq. (7))", sense="min",
                             hyper=hyper, rules=rules, gram=rep, scale=self._scale(K), system=RLSSystem(Kp, y, "dual"))

    def system(self, K, y, gamma=1.0) -> tuple[np.ndarray, np.ndarray]:
        """001, eq. (8): ``(m gamma I + K) c = y``; returns ``(A, rhs)``."""
        K, y = self._data(K, y)
        gamma = self._check_scaled(self._check_hyper(gamma=gamma), self._scale(K))["gamma"]
        m = K.shape[0]
        return K + m * gamma * np.eye(m), y.copy()

"""The weighted problem of the sparse LS-SVM (004, eqs. (3)-(4), Algorithm 1)."""
from __future__ import annotations

from dataclasses import dataclass

import cvxpy as cp
import numpy as np

from svmref._validation import check_weights

from . import _certify as cert
from ._base import C_inv_param, C_param, Formulation
from ._certify import Certified


@dataclass(frozen=True, eq=False)
class ISLSSystem(cert.KernelSystem):
    """The direct reference of the weighted problem: the system (004, eq. (4)) ``[[0, 1'], [1, H]] [b; beta] = [0; y]``,
    ``H = K diag(lam)^-1 K + I/C``, by LU with ``dgecon`` and refinement whose residuals are computed in extended
    precision from K itself (two matrix-vector products, H is never trusted); ``alpha = diag(lam)^-1 K beta``,
    ``xi = beta / C``."""


    def solve(self, hyper: dict, tol: float) -> Certified:
        """Solve (4) at ``hyper`` (``C``, ``lam``); the objective of the form: (3) for the primal, its dual for the dual."""
        K, y, N = self.K, self.y, self.K.shape[0]
        C, lam = hyper["C"], np.asarray(hyper["lam"], dtype=float)
        K_ld, Kx, iC, lam_ld = self._K_ld, self._Kx, cert.LD(1) / cert.LD(C), lam.astype(cert.LD)
        A = np.zeros((N + 1, N + 1))
        A[0, 1:] = 1.0
        A[1:, 0] = 1.0
        A[1:, 1:] = (K / lam[None, :]) @ K
        A[np.arange(1, N + 1), np.arange(1, N + 1)] += 1.0 / C
        if not np.all(np.isfinite(A)):
            raise np.linalg.LinAlgError("K diag(lam)^-1 K overflows: some lam_i is too small for this K")

        def mv(x):  # H beta = K (K beta / lam) + beta / C, each K product as in twice the precision
            b, beta = x[0], x[1:]
            Kb = Kx(beta)
            u = (Kb / lam_ld)
            u_hi = u.astype(float)
            inner = Kx(u_hi) + K_ld @ (u - u_hi.astype(cert.LD))  # the low part of u by a plain product
            be = beta.astype(cert.LD)
            return np.concatenate([[np.sum(be)], inner + be * iC + cert.LD(b)])

        x, info = cert.refined_solve(A, np.concatenate([[0.0], y]), mv, tol=tol, what="the ISLS system (004, eq. (4))")
        b, beta = float(x[0]), x[1:]
        be = beta.astype(cert.LD)
        Kb = K_ld @ be
        al = Kb / lam_ld
        d = float(0.5 * (al @ Kb) + 0.5 * (be @ be) * iC - y.astype(cert.LD) @ be)
        xi = be * iC
        p = float(0.5 * (lam_ld * al) @ al + 0.5 * cert.LD(C) * (xi @ xi))
        Kabs_b = np.abs(K) @ np.abs(beta)
        size = float(Kabs_b @ (Kabs_b / lam)) + float(beta @ beta) / C + float(np.abs(y) @ np.abs(beta))
        # multipliers: b for the dual's sum(beta) = 0; -beta for the primal's K alpha + b - y + xi = 0
        # (stationarity in xi: C xi + nu = 0, xi = beta / C)
        common = {"info": info, "tol": tol, "p": p, "d": d, "size": size, "n": N}
        if self.form == "dual":
            return cert.direct_certified(d, {"beta": beta}, duals=[b], **common)
        return cert.direct_certified(p, {"alpha": np.asarray(al, dtype=float), "b": b,
                                         "xi": np.asarray(xi, dtype=float)}, duals=[-beta], **common)


class SparseLSSVM(Formulation):
    r"""The weighted LS-SVM problem solved at each step of ISLS-SVM (004 §3).

    Primal (004, eq. (3)), with fixed weights ``lam_i > 0`` and the model ``f(x) = sum_j alpha_j k(x_j, x) + b``::

        min_{alpha, b, xi}  1/2 sum_i lam_i alpha_i^2 + C/2 sum_i xi_i^2
        s.t.                sum_j alpha_j K_ij + b = y_i - xi_i   for all i.

    (Convex for any symmetric K: K enters only the linear constraints.) Stationarity (004 §3), with
    multipliers ``beta``: ``alpha_i = sum_j beta_j K_ij / lam_i``, ``sum beta_i = 0``, ``beta_i = C xi_i``.

    Dual (derived here; 004 goes straight to the system). Substituting the stationarity conditions in
    ``L = 1/2 sum lam alpha^2 + C/2 sum xi^2 - sum_i beta_i (sum_j alpha_j K_ij + b - y_i + xi_i)``
    gives ``-1/2 beta' H beta + y' beta`` with ``H = K diag(lam)^-1 K + I/C``; as a minimisation::

        min_beta  1/2 beta' H beta - y' beta   s.t.  sum_i beta_i = 0.

    Its KKT conditions are the system (004, eq. (4)) (:meth:`system`)::

        [ 0  1^T ] [b   ]   [0]
        [ 1  H   ] [beta] = [y],     and then  alpha = diag(lam)^-1 K beta.

    Strong duality: ``p* = -d*``. ``y`` may be real (regression) or in {-1, +1} (classification:
    004 uses the same problem for both).
    """

    name = "sparse_ls_svm"
    paper = "004 eqs. (3), (4), Algorithm 1 (dual derived)"
    task = "regression"
    hyper = ("C", "lam")
    forms = ("system",)

    def _check_hyper(self, **hyper) -> dict:
        out = {}
        for k, v in hyper.items():
            out[k] = check_weights(v, None, "lam") if k == "lam" else super()._check_hyper(**{k: v})[k]
        return out

    def _lam(self, lam, n):
        return check_weights(lam, n, "lam")

    def primal(self, K, y, C=1.0, lam=None, *, X=None) -> cp.Problem:
        """004, eq. (3): ``min 1/2 sum lam_i alpha_i^2 + C/2 sum xi_i^2`` s.t. ``K alpha + b = y - xi``."""
        K, y = self._data(K, y, X)
        N = K.shape[0]
        lam = self._lam(np.ones(N) if lam is None else lam, N)
        hyper = {"C": self._check_hyper(C=C)["C"], "lam": lam}
        P, rules = self._params({**C_param(), "lam": ({"pos": True}, lambda h: np.asarray(h["lam"], float))}, hyper)
        alpha = cp.Variable(N, name="alpha")
        b = cp.Variable(name="b")
        xi = cp.Variable(N, name="xi")
        objective = cp.Minimize(0.5 * cp.sum(cp.multiply(P["lam"], cp.square(alpha))) + 0.5 * P["C"] * cp.sum_squares(xi))
        constraints = [K @ alpha + b == y - xi]
        return self._problem(objective, constraints, form="primal", cite="004, eq. (3)", sense="min",
                             hyper=hyper, rules=rules, scale=self._scale(K), system=ISLSSystem(K, y, "primal"))

    def dual(self, K, y, C=1.0, lam=None) -> cp.Problem:
        """``min 1/2 beta'(K diag(lam)^-1 K + I/C) beta - y'beta`` s.t. ``sum beta = 0`` (derived above)."""
        K, y = self._data(K, y)
        N = K.shape[0]
        lam = self._lam(np.ones(N) if lam is None else lam, N)
        hyper = {"C": self._check_hyper(C=C)["C"], "lam": lam}
        spec = {**C_inv_param(), "lam_inv_sqrt": ({"pos": True}, lambda h: 1.0 / np.sqrt(np.asarray(h["lam"], float)))}
        P, rules = self._params(spec, hyper)
        beta = cp.Variable(N, name="beta")
        # beta' K diag(lam)^-1 K beta = || diag(lam)^-1/2 K beta ||^2   (K symmetric)
        objective = cp.Minimize(0.5 * cp.sum_squares(cp.multiply(P["lam_inv_sqrt"], K @ beta))
                                + 0.5 * P["C_inv"] * cp.sum_squares(beta) - y @ beta)
        constraints = [cp.sum(beta) == 0]
        return self._problem(objective, constraints, form="dual", cite="dual of 004, eq. (3)", sense="min",
                             hyper=hyper, rules=rules, scale=self._scale(K), system=ISLSSystem(K, y, "dual"))

    def system(self, K, y, C=1.0, lam=None) -> tuple[np.ndarray, np.ndarray]:
        """004, eq. (4): ``[[0, 1'], [1, H]] [b; beta] = [0; y]``, ``H = K diag(lam)^-1 K + I/C``."""
        K, y = self._data(K, y)
        N = K.shape[0]
        lam = self._lam(np.ones(N) if lam is None else lam, N)
        C = self._check_scaled(self._check_hyper(C=C), self._scale(K))["C"]
        H = (K / lam[None, :]) @ K + np.eye(N) / C
        A = np.zeros((N + 1, N + 1))
        A[0, 1:] = 1.0
        A[1:, 0] = 1.0
        A[1:, 1:] = H
        return A, np.concatenate([[0.0], y])

    @staticmethod
    def alpha_from_beta(K, beta, lam) -> np.ndarray:
        """004 §3, ``dL/dalpha = 0``: ``alpha = diag(lam)^-1 K beta``."""
        return (np.asarray(K) @ np.asarray(beta)) / np.asarray(lam)

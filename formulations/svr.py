"""epsilon-SVR: Vapnik's support vector regression with the epsilon-insensitive loss (002 recalls it;
LIBSVM's ``epsilon-SVR``).  Derivation: ``docs/formulations/svr.md``.

Decision function: ``f(x) = sum_i (alpha^+_i - alpha^-_i) k(x_i, x) + b``.
"""
from __future__ import annotations

from dataclasses import dataclass

import cvxpy as cp
import numpy as np

from svmref._validation import check_nonnegative

from . import _certify as cert
from ._base import C_param, Formulation
from ._certify import Certified


def _check_epsilon(epsilon) -> float:
    return check_nonnegative(epsilon, "epsilon", "width of the insensitive tube")


@dataclass(frozen=True, eq=False)
class SVRCertifier:
    """Certifies a solution of the epsilon-SVR in the form ``form`` on the original K
    (:func:`._certify.svr_certificate`): ``beta = alpha^+ - alpha^-`` from the dual's variables, or from the
    primal's multipliers of its first two constraints (stationarity in W: ``W = sum_i beta_i Phi_i``), polished
    by active-set Newton steps (:func:`._certify.svr_polish`) when needed; the values of the form are then those of
    the certified beta (the primal's W, b and slacks rebuilt from it with
    ``Phi``, the factor ``K = Phi Phi^T``)."""

    K: np.ndarray
    y: np.ndarray
    form: str
    Phi: np.ndarray | None = None

    def _beta(self, values, duals):
        try:
            if self.form == "dual":
                return np.asarray(values["alpha_plus"], float) - np.asarray(values["alpha_minus"], float)
            return np.asarray(duals[0], float) - np.asarray(duals[1], float)
        except (KeyError, IndexError, TypeError, ValueError):
            return None

    def _certified_beta(self, C, eps, beta, tol):
        """``(Certified, beta, b)`` of the form's beta, polished (one dense solve) unless already at round-off; if
        its gap is still above ``tol`` (not certified, or certified only because the floating-point floor is above the
        gap), or the form held no beta (the solver failed), the dual re-solved in better scaling
        (:func:`._certify.svr_scaled_resolve`), as the box duals are, and the better of the two kept
        (:func:`._certify.better`). ``None`` when nothing was found."""
        found = None
        if beta is not None:
            found = cert.svr_certificate(self.K, self.y, C, eps, beta, tol)
            c = found[0]
            if not c.certified or c.residuals["rel_gap"] > 0.1 * tol or c.residuals["kkt"] > cert.POINT_KKT:
                polished = cert.svr_polish(self.K, self.y, C, eps, beta, tol)
                if cert.better(polished[0], c):
                    found = polished
                    found[0].polished = True
        if found is None or not found[0].certified or found[0].residuals["rel_gap"] > tol:
            again = cert.svr_scaled_resolve(self.K, self.y, C, eps, tol)
            if again is not None and (found is None or cert.better(again[0], found[0])):
                found = again
                found[0].polished = True
        return found

    def certify(self, hyper: dict, values, duals, tol: float) -> Certified | None:
        """The certificate of the form's solution; ``None`` when it holds no beta and a re-solve in better
        scaling found none either."""
        beta = None if values is None else self._beta(values, duals)
        if beta is not None and (beta.shape != self.y.shape or not np.all(np.isfinite(beta))):
            beta = None
        found = self._certified_beta(hyper["C"], hyper["epsilon"], beta, tol)
        if found is None:
            return None
        c, bt, b = found
        p, d = c.residuals["objective_primal"], c.residuals["objective_dual"]
        c.method, c.alpha = "duality gap on K (epsilon-SVR dual)", bt
        c.bounds = (-p, d) if self.form == "dual" else (-d, p)  # weak duality, p* = -d*
        if self.form == "dual":
            c.objective, c.values = d, {"alpha_plus": np.maximum(bt, 0.0), "alpha_minus": np.maximum(-bt, 0.0)}
        else:
            W = self.Phi.T @ bt
            t = self.y - self.Phi @ W - b  # the model's own f (K = Phi Phi' to round-off)
            eps = hyper["epsilon"]
            c.objective = p
            c.values = {"W": W, "b": b, "xi": np.maximum(t - eps, 0.0), "xi_star": np.maximum(-t - eps, 0.0)}
        return c

    def constraint_duals(self, c: Certified, hyper: dict) -> list:
        """The multipliers of the form's constraints at the certified beta, in the form's order. Dual:
        ``[b, max(g+, 0), max(g-, 0), max(-g+, 0), max(-g-, 0)]`` for ``sum beta = 0``, ``alpha^+ >= 0``,
        ``alpha^- >= 0``, ``alpha^+ <= C``, ``alpha^- <= C``, with ``r = K beta - y + b``, ``g+ = r + eps``,
        ``g- = eps - r`` (stationarity in ``alpha^+-``); primal: ``[alpha^+, alpha^-, C - alpha^+, C - alpha^-]``
        (the slacks' multipliers from stationarity in xi: ``C - alpha - eta = 0``)."""
        bt, C, eps = c.alpha, hyper["C"], hyper["epsilon"]
        ap, am = np.maximum(bt, 0.0), np.maximum(-bt, 0.0)
        if self.form != "dual":
            return [ap, am, C - ap, C - am]
        b = c.residuals["b"]
        r = self.K @ bt - self.y + b
        gp, gm = r + eps, eps - r
        return [b, np.maximum(gp, 0.0), np.maximum(gm, 0.0), np.maximum(-gp, 0.0), np.maximum(-gm, 0.0)]


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
                             sense="min", hyper={**hyper, "epsilon": eps}, rules=rules, factor=F, scale=self._scale(K),
                             certifier=SVRCertifier(K, y, "primal", F.Phi))

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
                             sense="min", hyper={**hyper, "epsilon": eps}, rules=rules, gram=rep, scale=self._scale(K),
                             certifier=SVRCertifier(Kp, y, "dual"))

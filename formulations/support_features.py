"""The support features machine (003 §2): SVM with the l2-l1 regulariser, linear kernel only."""
from __future__ import annotations

import warnings
from dataclasses import dataclass

import cvxpy as cp
import numpy as np

from svmref._validation import check_labels, check_mu, check_positive, check_X

from . import _certify as cert
from ._base import Formulation
from ._certify import Certified, Multipliers


@dataclass(frozen=True, eq=False)
class SFMCertifier:
    """Certificate on X of a solution of the support features machine in the form ``form``:
    ``p(a, b) - W(lam) >= 0`` bounds both errors (``p* = W*``, 003 §2.5), with ``a`` from (8), the exact best
    ``b`` and ``lam`` (read by ``lam_from``) projected onto the feasible set."""

    X: np.ndarray
    y: np.ndarray
    form: str
    lam_from: Multipliers

    def certify(self, hyper: dict, values, duals, tol: float) -> Certified | None:
        """The certificate, polished by the other side solved tightly when it does not certify at first;
        ``None`` when the solution holds no ``lam``."""
        if values is None or self.lam_from(values, duals) is None:
            return None
        lam0 = self.lam_from(values, duals)
        a0 = values.get("a") if self.form == "primal" else None
        c, lam, a, b = cert.sfm_certificate(self.X, self.y, hyper["C"], hyper["mu"], lam0, tol, a_primal=a0)
        if not c.certified:
            c, lam = self._with_other_side(hyper, lam0, a0, (c, lam, a, b), tol)
        c.method = "duality gap on X (003 eqs. (5), (10))"
        c.alpha = lam
        c.bounds = (c.residuals["objective_dual"], c.residuals["objective_primal"])  # W(lam) <= p* = W* <= p(a, b)
        if self.form == "primal":
            c.objective = c.residuals["objective_primal"]
        else:
            c.values = {"lam": lam}
        return c

    def constraint_duals(self, c: Certified, hyper: dict) -> list:
        """The multipliers of the form's constraints at the certified ``lam`` (003 §2.5), in the form's order.

        Primal (5): ``lam`` for ``1 - delta - y(Xa + b) <= 0`` and ``C - lam`` for ``-delta <= 0`` (stationarity
        in delta). Dual (10) and QP (13), a maximisation (cvxpy's Lagrangian ``-W + sum mult' expr``): with
        ``a`` from (8) and ``g_j = y_j (a'x_j + b) - 1``, ``max(g, 0)`` for ``-lam <= 0``, ``max(-g, 0)`` for
        ``lam - C <= 0`` and ``b`` for ``y'lam = 0``; the QP's ``|w| - mu - gamma <= 0`` has
        ``max(|w| - mu, 0) / (2 (1 - mu))`` (stationarity in gamma, 003 eq. (13))."""
        lam, y, X, C, mu = c.alpha, self.y, self.X, hyper["C"], hyper["mu"]
        if self.form == "primal":
            return [lam, C - lam]
        w = X.T @ (y * lam)  # 003, eq. (6)
        a = cert.recover_a_sfm(w, mu)
        b = c.residuals["b"]
        g = y * (X @ a + b) - 1.0
        box = [np.maximum(g, 0.0), np.maximum(-g, 0.0), b]
        if self.form == "qp":
            return [np.maximum(np.abs(w) - mu, 0.0) / (2.0 * (1.0 - mu))] + box
        return box

    def _with_other_side(self, hyper, lam0, a0, found, tol):
        """Polish: solve the other side tightly (the primal (5) for a dual form, the dual (10) for the primal)
        and certify ``min p - max W`` over all the candidates. Returns ``(Certified, lam)``."""
        from .reference import TIGHTER

        c, lam, a, b = found
        X, y, C, mu = self.X, self.y, hyper["C"], hyper["mu"]
        sfm = SupportFeatures()
        other = (sfm.primal if self.form != "primal" else sfm.dual)(X, y, C=C, mu=mu)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                cp.Problem(other.objective, other.constraints).solve(solver="CLARABEL", **TIGHTER)
            ov = {v.name(): v.value for v in other.variables()}
            extra = [other.constraints[0].dual_value] if self.form != "primal" else [ov.get("lam")]
            a_extra = ov.get("a") if self.form != "primal" else a0
            c2, lam2, a2, b2 = cert.sfm_certificate(X, y, C, mu, lam0, tol, a_primal=a_extra, extra_lams=extra)
            if c2.certified or c2.residuals["rel_gap"] < c.residuals["rel_gap"]:
                c, lam, a, b = c2, lam2, a2, b2
                c.polished = True
                if self.form == "primal":  # the values of the best primal point found
                    c.values = {"a": a, "b": b, "delta": np.maximum(0.0, 1.0 - y * (X @ a + b))}
        except (cp.error.SolverError, ValueError):
            pass
        return c, lam


class SupportFeatures(Formulation):
    r"""Support features machine (003), data ``X`` (N x n), labels ``y`` in {-1, +1}.

    Primal (003, eq. (5)), selectivity ``mu in [0, 1)`` (003, eq. (4)); note: no 1/2 in front of the
    regulariser, so ``mu = 0`` is the L1-SVM (003 eq. (2)) with ``C_svm = C / 2`` (and ``lam = 2 alpha``)::

        min_{a, b, delta}  sum_i ((1 - mu) a_i^2 + mu |a_i|) + C sum_j delta_j
        s.t.               y_j (a' x_j + b) >= 1 - delta_j,   delta_j >= 0.

    Dual (003, eq. (10)), a *maximisation* of a concave, non-quadratic function, with
    ``w_i = sum_j lam_j y_j x_ij`` (003, eq. (6))::

        max_lam  W(lam) = sum_j lam_j - 1/(4(1 - mu)) sum_i (min{mu + w_i, 0, mu - w_i})^2
        s.t.     0 <= lam_j <= C,   sum_j y_j lam_j = 0.

    ``(min{mu + w, 0, mu - w})^2 = (max{0, |w| - mu})^2`` (003 §2.5), which is how it is written here.
    Strong duality: ``p* = W*``. QP form (003, eq. (13)), n extra variables ``gamma_i``::

        max_{lam, gamma}  sum_j lam_j - 1/(4(1 - mu)) sum_i gamma_i^2
        s.t.              gamma_i >= |w_i| - mu,  0 <= lam_j <= C,  sum_j y_j lam_j = 0.

    (003 defines ``gamma_i = max{0, |w_i| - mu}`` but states only ``gamma_i >= |w_i| - mu``; ``gamma_i >= 0``
    holds at the optimum anyway, since ``gamma_i = 0`` is feasible whenever ``|w_i| <= mu`` and
    ``-gamma_i^2`` is largest there.) Primal recovery: :meth:`recover_a` (003, eq. (8)) and
    :meth:`recover_b` (003, eq. (11)).
    """

    name = "support_features"
    paper = "003 eqs. (4), (5), (6), (8), (10), (11)-(13)"
    hyper = ("C", "mu")
    dual_sense = "max"
    forms = ("qp",)

    def _check_hyper(self, **hyper) -> dict:
        out = {}
        for k, v in hyper.items():
            out[k] = check_mu(v) if k == "mu" else check_positive(v, k)
        return out

    def _xy(self, X, y):
        X = check_X(X, "X")
        y = check_labels(y, X.shape[0])
        return X, y

    @staticmethod
    def _spec():
        return {
            "C": ({"pos": True}, lambda h: h["C"]),
            "mu": ({"nonneg": True}, lambda h: h["mu"]),
            "one_minus_mu": ({"pos": True}, lambda h: 1.0 - h["mu"]),
            "coef": ({"pos": True}, lambda h: 1.0 / (4.0 * (1.0 - h["mu"]))),
            # sqrt(coef) and sqrt(coef) * mu keep the dual (10) DPP (a product of parameters is not)
            "sqrt_coef": ({"pos": True}, lambda h: 1.0 / (2.0 * np.sqrt(1.0 - h["mu"]))),
            "sqrt_coef_mu": ({"nonneg": True}, lambda h: h["mu"] / (2.0 * np.sqrt(1.0 - h["mu"]))),
        }

    def _scale_X(self, X) -> float:
        return float(X.shape[0]) * float(np.max(np.abs(X))) ** 2 if np.any(X) else None

    def primal(self, X, y, C=1.0, mu=0.0) -> cp.Problem:
        """003, eq. (5): ``min sum((1-mu) a_i^2 + mu|a_i|) + C sum delta`` s.t. ``y_j(a'x_j + b) >= 1 - delta_j, delta >= 0``."""
        X, y = self._xy(X, y)
        hyper = self._check_hyper(C=C, mu=mu)
        spec = {k: v for k, v in self._spec().items() if k in ("C", "mu", "one_minus_mu")}
        P, rules = self._params(spec, hyper)
        N, n = X.shape
        a = cp.Variable(n, name="a")
        b = cp.Variable(name="b")
        delta = cp.Variable(N, name="delta")
        objective = cp.Minimize(P["one_minus_mu"] * cp.sum_squares(a) + P["mu"] * cp.norm1(a) + P["C"] * cp.sum(delta))
        constraints = [cp.multiply(y, X @ a + b) >= 1 - delta, delta >= 0]
        return self._problem(objective, constraints, form="primal", cite="003, eq. (5)", sense="min",
                             hyper=hyper, rules=rules, scale=self._scale_X(X),
                             certifier=SFMCertifier(X, y, "primal", Multipliers(plus=0)))

    def dual(self, X, y, C=1.0, mu=0.0) -> cp.Problem:
        """003, eq. (10): ``max sum lam - 1/(4(1-mu)) sum_i max{0, |w_i| - mu}^2``, ``w = X'(y*lam)``,
        ``0 <= lam <= C``, ``y'lam = 0``."""
        X, y = self._xy(X, y)
        hyper = self._check_hyper(C=C, mu=mu)
        spec = {k: v for k, v in self._spec().items() if k in ("C", "sqrt_coef", "sqrt_coef_mu")}
        P, rules = self._params(spec, hyper)
        lam = cp.Variable(X.shape[0], name="lam")
        w = X.T @ cp.multiply(y, lam)  # 003, eq. (6)
        # coef * max{0, |w_i| - mu}^2 = max{0, sqrt(coef)|w_i| - sqrt(coef) mu}^2,  coef = 1/(4(1-mu))
        objective = cp.Maximize(cp.sum(lam) - cp.sum_squares(cp.pos(P["sqrt_coef"] * cp.abs(w) - P["sqrt_coef_mu"])))
        constraints = [lam >= 0, lam <= P["C"], y @ lam == 0]
        return self._problem(objective, constraints, form="dual", cite="003, eq. (10)", sense="max",
                             hyper=hyper, rules=rules, scale=self._scale_X(X),
                             certifier=SFMCertifier(X, y, "dual", Multipliers(variable="lam")))

    def qp(self, X, y, C=1.0, mu=0.0) -> cp.Problem:
        """003, eq. (13): ``max sum lam - 1/(4(1-mu)) sum gamma_i^2`` s.t. ``gamma_i >= |w_i| - mu``, box, ``y'lam = 0``."""
        X, y = self._xy(X, y)
        hyper = self._check_hyper(C=C, mu=mu)
        spec = {k: v for k, v in self._spec().items() if k in ("C", "mu", "coef")}
        P, rules = self._params(spec, hyper)
        N, n = X.shape
        lam = cp.Variable(N, name="lam")
        gamma = cp.Variable(n, name="gamma")
        w = X.T @ cp.multiply(y, lam)
        objective = cp.Maximize(cp.sum(lam) - P["coef"] * cp.sum_squares(gamma))
        constraints = [gamma >= cp.abs(w) - P["mu"], lam >= 0, lam <= P["C"], y @ lam == 0]
        return self._problem(objective, constraints, form="qp", cite="003, eq. (13)", sense="max",
                             hyper=hyper, rules=rules, scale=self._scale_X(X),
                             certifier=SFMCertifier(X, y, "qp", Multipliers(variable="lam")))

    @staticmethod
    def recover_a(X, y, lam, mu) -> np.ndarray:
        """003, eq. (8): ``a_i = sign(w_i) max{0, |w_i| - mu} / (2(1 - mu))``, ``w = X'(y*lam)``.

        (The extraction's case 2 reads "solution when w_i < mu"; it is ``w_i < -mu``.)
        """
        w = np.asarray(X).T @ (np.asarray(y) * np.asarray(lam))
        return np.sign(w) * np.maximum(0.0, np.abs(w) - mu) / (2.0 * (1.0 - mu))

    @staticmethod
    def recover_b(X, y, lam, a, C, *, rtol: float = 1e-7) -> float:
        """003, eq. (11): ``b = -(sum_free lam_j a'x_j + C sum_{lam_j = C} y_j) / sum_free lam_j``.

        ``free`` means ``0 < lam_j < C`` up to ``rtol * C``; this is the lam-weighted mean of
        ``y_j - a'x_j`` over the free ``lam_j``. Raises ``ValueError`` when no ``lam_j`` is free
        (then (11) is undefined and b is only bounded by the KKT conditions).
        """
        X, y, lam = np.asarray(X), np.asarray(y), np.asarray(lam)
        free = (lam > rtol * C) & (lam < C * (1 - rtol))
        at_C = lam >= C * (1 - rtol)
        if not np.any(free):
            raise ValueError("no lam_j is free (0 < lam_j < C): eq. (11) is undefined")
        f = X @ np.asarray(a)
        return float(-(np.sum(lam[free] * f[free]) + C * np.sum(y[at_C])) / np.sum(lam[free]))

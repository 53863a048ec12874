"""The certifier of the box problems (l1_svm, l2_svm, least_1norm_svm): their reference is certified on K.

A form of one of these problems (the dual, the primal, the LP form) gives its solution to
:meth:`BoxCertifier.certify`, which reads the box dual's multipliers ``alpha`` from it, certifies them on the
original K by the duality gap (:func:`._certify.box_certificate`), polishes them when needed
(:func:`._certify.box_polish`, :func:`._certify.box_scaled_resolve`) and returns the form's own values
and objective at the certified point.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import _certify as cert
from ._certify import Certified, Multipliers


@dataclass(frozen=True, eq=False)
class BoxCertifier:
    """Certifies a solution of the box problem ``kind`` (``"l1"``: 003 eq. (3), box ``[0, C]``; ``"l2"``: the
    L2-SVM dual, ``K + I/C`` on ``[0, inf)``; ``"l1n"``: 000 eq. (5), box ``[-C, C]``) in the form ``form``.

    ``alpha_from`` says where the form's solution holds alpha; for a primal form, ``Phi`` (the factor
    ``K = Phi Phi^T``) rebuilds the primal point from a polished alpha: ``W = Phi'(y alpha)``, the exact best
    b, and the optimal slacks (named ``slack``).
    """

    kind: str
    K: np.ndarray
    y: np.ndarray
    form: str
    alpha_from: Multipliers
    Phi: np.ndarray | None = None
    slack: str = "xi"

    def certify(self, hyper: dict, values, duals, tol: float, alpha_override=None) -> Certified | None:
        """The certificate of the form's solution (``values``, ``duals``), or of ``alpha_override``; ``None``
        when no alpha could be found (the solver failed and a re-solve in better scaling failed too)."""
        C = hyper["C"]
        if alpha_override is not None:
            alpha = alpha_override
        else:
            alpha = None if values is None else self.alpha_from(values, duals)
        if alpha is None or not np.all(np.isfinite(np.asarray(alpha, dtype=float))):
            alpha = cert.box_scaled_resolve(self.kind, self.K, self.y, C, tol=tol)  # the solver failed: re-solve
            if alpha is None:
                return None
            c, a, b = cert.box_certificate(self.kind, self.K, self.y, C, alpha, tol)
            c.polished = True
        else:
            alpha = np.asarray(alpha, dtype=float)
            c, a, b = cert.box_certificate(self.kind, self.K, self.y, C, alpha, tol)
        c, a, b = self._polish(C, alpha, (c, a, b), tol)
        return self._report(c, a, b, rebuild=alpha_override is not None)

    def _polish(self, C, alpha, found, tol):
        """Polish (cheap: one dense solve on the free set) unless the gap is already far inside tol and the point
        at round-off (KKT residual below :data:`._certify.POINT_KKT`: verify compares decision values and b with
        the reference's, which must then be accurate far below any tol it checks); a certificate above a tenth of
        tol would otherwise count as marginal and run the second solver; if it
        still does not certify, the primal active-set method (:func:`._certify.box_active_set`), then a re-solve in
        better scaling, polished again."""
        c, a, b = found
        if not c.certified or c.residuals["rel_gap"] > 0.1 * tol or c.residuals["kkt"] > cert.POINT_KKT:
            c2, a2, b2 = cert.box_polish(self.kind, self.K, self.y, C, alpha, tol)
            if cert.better(c2, c):
                c, a, b = c2, a2, b2
                c.polished = True
        if not c.certified:  # the rigorous active-set method from the best point found (finite, feasible iterates)
            for start in (a, alpha):
                c4, a4, b4 = cert.box_active_set(self.kind, self.K, self.y, C, start, tol)
                if (c4.certified and not c.certified) or c4.residuals["rel_gap"] < c.residuals["rel_gap"]:
                    c, a, b = c4, a4, b4
                    c.polished = True
                if c.certified:
                    break
        if not c.certified:
            alpha3 = cert.box_scaled_resolve(self.kind, self.K, self.y, C, tol=tol)
            if alpha3 is not None:
                c3, a3, b3 = cert.box_certificate(self.kind, self.K, self.y, C, alpha3, tol)
                if not c3.certified:
                    c3, a3, b3 = cert.box_polish(self.kind, self.K, self.y, C, alpha3, tol)
                if c3.certified or c3.residuals["rel_gap"] < c.residuals["rel_gap"]:
                    c, a, b = c3, a3, b3
                    c.polished = True
        return c, a, b

    def _report(self, c: Certified, a, b: float, *, rebuild: bool) -> Certified:
        """The form's objective and values at the certified alpha: the dual value and alpha for the dual;
        the primal value, and (after a polish, or when alpha came from elsewhere) the primal point it defines."""
        c.method = f"duality gap on K ({self.kind} box dual)"
        c.alpha = a
        p, d = c.residuals["objective_primal"], c.residuals["objective_dual"]
        c.bounds = (-p, d) if self.form == "dual" else (-d, p)  # weak duality, p* = -d*
        if self.form == "dual":
            c.objective = c.residuals["objective_dual"]
            c.values = {"alpha": a}
            return c
        c.objective = c.residuals["objective_primal"]
        if (c.polished or rebuild) and self.Phi is not None:
            y = self.y
            W = self.Phi.T @ (y * a)
            f = self.Phi @ W  # the model's own f (K = Phi Phi' to round-off): its constraints hold at the point
            r = 1.0 - y * (f + b)
            xi = r if self.kind == "l1n" else np.maximum(r, 0.0)
            c.values = {"W": W, "b": b, self.slack: (np.abs(xi) if self.slack == "t" else xi)}
        return c

    def constraint_duals(self, c: Certified, hyper: dict) -> list:
        """The form's constraint duals at the certified alpha, in the order the form lists its constraints:
        dual ``[b, mu_lower, mu_upper]`` (the multipliers of ``y'alpha = 0`` and of the two bounds, from the
        reduced gradient ``g``); primal l1 ``[alpha, C - alpha]``, l2 ``[alpha]``, l1n ``[-alpha]``; the LP form
        of 000 eq. (4) ``[(C - alpha) / 2, (C + alpha) / 2]`` (``alpha = gamma - beta``, 000 eq. (5))."""
        al, y, kind, C = c.alpha, self.y, self.kind, hyper["C"]
        if self.form == "dual":
            b = c.residuals["b"]
            g = y * (self.K @ (y * al) + b) - 1.0 + (al / C if kind == "l2" else 0.0)
            lo_mult, hi_mult = np.maximum(g, 0.0), np.maximum(-g, 0.0)
            return [b, lo_mult] + ([] if kind == "l2" else [hi_mult])
        if self.form == "lp":  # -t <= r and r <= t: beta + gamma = C (stationarity in t), alpha = gamma - beta
            return [0.5 * (C - al), 0.5 * (C + al)]
        return [al, C - al] if kind == "l1" else ([al] if kind == "l2" else [-al])

"""The :class:`Formulation` base: one object per formulation, ``.primal`` and ``.dual`` build problems."""
from __future__ import annotations

import cvxpy as cp
import numpy as np

from svmref._validation import check_gram, check_labels, check_positive, check_scaled, check_targets

from ._common import ProblemInfo, RefProblem, kernel_factor, make_params, psd_gram

#: Hyperparameters that multiply (or divide) the Gram matrix, checked against the scale N max|K|.
SCALED = ("C", "gamma", "zeta")


class Formulation:
    """One formulation of the papers: ``primal(...)`` and ``dual(...)`` build unsolved problems.

    Class attributes: ``name``; ``paper`` (file and equations); ``task`` (``"classification"`` or
    ``"regression"``); ``hyper`` (hyperparameter names); ``dual_sense`` (``"min"`` or ``"max"``:
    the sense the dual is written with, so that strong duality reads ``p* = -d*`` for a
    minimisation dual and ``p* = d*`` for a maximisation dual); ``forms`` (names of the further
    forms this object builds, e.g. ``"lp"``, ``"kkt_system"``).
    """

    name: str = ""
    paper: str = ""
    task: str = "classification"
    hyper: tuple[str, ...] = ("C",)
    dual_sense: str = "min"
    forms: tuple[str, ...] = ()

    # -- helpers shared by the kernel formulations -------------------------------------------
    def _data(self, K, y, X=None):
        """Check (K, y); with ``X`` given (linear kernel) K may be None and is X X^T."""
        if K is None:
            if X is None:
                raise ValueError("K (the Gram matrix) is required unless X is given for the linear kernel")
            from svmref._validation import check_X

            X = check_X(X, "X")
            K = X @ X.T
            K = 0.5 * (K + K.T)
        K = check_gram(K, "K")
        if X is not None and np.shape(X)[0] != K.shape[0]:
            raise ValueError(f"X has {np.shape(X)[0]} rows but K is {K.shape[0]} x {K.shape[0]}")
        n = K.shape[0]
        y = check_labels(y, n) if self.task == "classification" else check_targets(y, n)
        return K, y

    def _check_hyper(self, **hyper) -> dict:
        return {k: check_positive(v, k) for k, v in hyper.items()}

    def _check_scaled(self, hyper: dict, scale: float | None) -> dict:
        """Refuse, naming it, a C / gamma / zeta whose product with ``scale`` (N max|K|) over- or underflows."""
        if scale is None:
            return hyper
        return {k: (check_scaled(v, k, scale, "N x max|K|") if k in SCALED else v) for k, v in hyper.items()}

    def _problem(self, objective, constraints, *, form, cite, sense, hyper, rules, factor=None,
                 scale=None, gram=None, certifier=None, box_dual=False, system=None) -> RefProblem:
        """The problem with its :class:`ProblemInfo`: ``certifier`` certifies a conic solution on K (or X),
        ``box_dual`` lets the reference solve the box dual on ``Y K Y`` directly, ``system`` is the KKT system
        of an equality-only problem (see :mod:`.reference` for the strategies)."""
        hyper = self._check_scaled(hyper, scale)
        info = ProblemInfo(formulation=self.name, form=form, cite=cite, sense=sense, hyper=dict(hyper),
                           param_rules=rules, factor=None if factor is None else factor.report(), scale=scale,
                           gram=gram, owner=self, certifier=certifier, system=system, box_dual=box_dual)
        return RefProblem(objective, constraints, info=info)

    @staticmethod
    def _scale(K) -> float:
        return float(K.shape[0]) * float(np.max(np.abs(K)))

    @staticmethod
    def _psd_gram(K, psd):
        return psd_gram(K, psd=psd)

    @staticmethod
    def _factor(K, X, psd):
        return kernel_factor(K, X, psd=psd)

    @staticmethod
    def _params(spec, hyper):
        return make_params(spec, hyper)

    def __repr__(self) -> str:
        return f"<formulation {self.name!r}: {self.paper}; hyperparameters {self.hyper}; dual sense {self.dual_sense}>"


def C_param():
    """Parameter spec for ``C`` (> 0)."""
    return {"C": ({"pos": True}, lambda h: h["C"])}


def C_inv_param():
    """Parameter spec for ``C_inv = 1/C``: keeps problems with ``1/C`` DPP."""
    return {"C_inv": ({"pos": True}, lambda h: 1.0 / h["C"])}


__all__ = ["Formulation", "C_param", "C_inv_param", "cp"]

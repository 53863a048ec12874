"""The result object every solver returns (after qpsolvers' ``Solution`` and scipy's ``OptimizeResult``).

A frozen dataclass that reports on itself: what was solved (``alpha``, ``b``), how well
(``objective``, ``kkt_gap``), how (``n_iter``, ``time``) and whether it finished
(``converged``, ``status``, ``message``). Solvers with other unknowns subclass it and add
fields (RLS: ``c``; support features machine: ``lam``, ``a``; ISLS: ``history``).

``status`` is one of:

* ``"optimal"``            -- the stopping rule was met (KKT gap <= tol, or a direct solve) **and** the certified
  relative duality gap is within the solver's ``gap_tol``: ``duality_gap <= gap_tol`` and ``gap_floor <=
  max(gap_tol, FLOOR_CAP)`` (below), so the objective is within ``gap_tol + gap_floor`` of the optimum, relative;
* ``"suboptimal"``         -- the stopping rule was met but the certified relative duality gap is above
  ``gap_tol``: the point may be up to ``duality_gap`` (relative) from the optimum; a :class:`SuboptimalWarning`
  said so and which ``tol`` should fix it;
* ``"max_iter_reached"``   -- the iteration limit stopped the solver first (a
  :class:`~sklearn.exceptions.ConvergenceWarning` was issued);
* ``"numerical_issue"``    -- a fallback path was taken or accuracy was lost (``message`` says which);
* ``"not_convex"``         -- the kernel matrix is not positive semidefinite and the solver was asked to go on
  (``on_nonconvex="clamp"``): the answer is a stationary point at best, never called optimal.

**The certificate.** Every fast solver reports, at the point it returns, a *certified relative duality gap*
``duality_gap`` and its floating-point floor ``gap_floor``, both relative to ``gap_scale`` (in ``info``), a
certified lower bound on ``|optimum|`` (the solver docstrings derive each from weak duality). In absolute terms
``0 <= objective - optimum <= duality_gap * gap_scale`` (minimisation sign; the reverse for a maximisation) up to
the rounding of evaluating the objectives, which ``gap_floor * gap_scale`` bounds (a multiple of ``N`` unit
roundoffs times the sizes of the terms summed): so ``|objective - optimum| / |optimum| <= duality_gap + gap_floor``.
The label is read off the same numbers: ``"optimal"`` needs ``duality_gap <= gap_tol`` and ``gap_floor <=
max(gap_tol, FLOOR_CAP)`` (``FLOOR_CAP = 1e-6``), so an optimal result is within ``gap_tol + gap_floor`` of the
optimum, relative (never ``max(1, |objective|)``: a small objective is held
to a relative bound, not an absolute one). The floor is not added to the gap before the comparison: it is a
worst-case bound on rounding that no solver can go below (it grows with ``N`` and with cancellation in the
objective, e.g. 1e-7 relative for the LS-SVM at C = 100 on 2201 titanic patterns), so adding it would refuse
the label to exact solves; it is reported beside the gap instead, and bounded: a floor above both ``gap_tol`` and
``FLOOR_CAP`` (infinite where it is not below ``|optimum|``, as for the linear kernel of features with a common offset
of 1e9) leaves the label ``"suboptimal"`` with a warning that says no certificate is possible. ``nan`` where no
certificate exists (a kernel that is not PSD, a non-finite result); :func:`relative_gap` and :func:`certified` are
the two formulas, written once.

The decision function and the prediction are written once, here, for every result type:
:meth:`SolverResult.decision_function` evaluates the kernel expansion
``f(z) = sum_i coef_i k(x_i, z) + b`` (000 eq. (2), 004 eq. (2), 001 eq. (9) without ``b``, 003's
``f(x) = a'x + b``) on a cross-kernel ``K_cross[m, i] = k(z_m, x_i)`` through :func:`kernel_expansion`,
and :meth:`SolverResult.predict` returns ``f`` for regression and :func:`sign_labels` of ``f`` for
classification. A result type says only what differs, through one hook and one field:
:meth:`SolverResult.expansion` returns ``(coef, b)`` (``b = None``: no bias), and ``task`` is
``"classification"`` or ``"regression"``.

The coefficient convention: ``coef`` holds the expansion coefficients (classification: ``coef = alpha * y``;
regression and ISLS: ``coef = alpha``). ``objective_sense`` says whether ``objective`` was minimised or
maximised.

The tie rule, the one of the whole project: a pattern is classified ``+1`` where ``f > 0`` and ``-1``
where ``f <= 0``. This is 001 §2's rule ("-1 if f(x) <= 0") and scikit-learn's (``classes_[1]`` where
``f > 0``), so the result types, the estimators, the tables and the figures agree at ``f = 0``.
"""
from __future__ import annotations

import warnings
from dataclasses import dataclass, field, fields

import numpy as np
from sklearn.exceptions import ConvergenceWarning

__all__ = ["SolverResult", "ConvergenceWarning", "IllConditionedWarning", "SuboptimalWarning", "warn_not_converged",
           "warn_suboptimal", "kernel_expansion", "sign_labels", "relative_gap", "certified", "FLOOR_CAP", "UNIT_ROUNDOFF"]

#: The unit roundoff of float64 (``eps / 2``): the floors of the certificates are multiples of it.
UNIT_ROUNDOFF = float(np.finfo(np.float64).eps) / 2.0


def kernel_expansion(K_cross, coef: np.ndarray, b: float | None) -> np.ndarray:
    """The decision function of every kernel model here: ``f(z_m) = sum_i coef_i K_cross[m, i] + b``.

    ``K_cross[m, i] = k(z_m, x_i)`` (rows: new points; columns: the patterns ``coef`` belongs to); a 1-D
    ``K_cross`` is one point. ``b = None`` means no bias (RLS, 001 eq. (9)). This is 000 eq. (2) / 004 eq. (2)
    / 001 eq. (9) for the kernel models and, with ``K_cross = X`` and ``coef = a``, 003's ``f(x) = a'x + b``.
    """
    c = np.asarray(coef, dtype=np.float64)
    Kc = np.asarray(K_cross, dtype=np.float64)
    if Kc.ndim == 1:
        Kc = Kc[None, :]
    if Kc.ndim != 2 or Kc.shape[1] != c.shape[0]:
        raise ValueError(f"K_cross must have {c.shape[0]} columns (K_cross[m, i] = k(z_m, x_i), one column per "
                         f"coefficient); got shape {Kc.shape}")
    f = Kc @ c
    return f if b is None else f + float(b)


def sign_labels(f) -> np.ndarray:
    """Class labels from decision values by the tie rule of this module: ``+1`` where ``f > 0``, else ``-1``."""
    return np.where(np.asarray(f) > 0.0, 1.0, -1.0)


@dataclass(frozen=True, repr=False)
class SolverResult:
    """What a solver returns.

    Attributes
    ----------
    alpha : ndarray or None
        Dual coefficients, in the convention of the formulation solved (classification:
        ``f(x) = sum_i alpha_i y_i k(x_i, x) + b``; regression and ISLS: ``f(x) = sum_i alpha_i k(x_i, x) + b``).
    b : float or None
        Bias.
    objective : float
        Value of the objective the solver minimised (the dual, in its documented sign).
    n_iter : int
        Iterations (SMO pair updates, ISLS reweightings, CG steps; 1 for a direct solve).
    converged : bool
        Whether the stopping rule was met.
    status : str
        ``"optimal"``, ``"suboptimal"``, ``"max_iter_reached"``, ``"numerical_issue"`` or ``"not_convex"``
        (module docstring).
    message : str
        Human-readable detail.
    time : float
        Wall-clock seconds spent in the solver.
    kkt_gap : float
        Final KKT violation measured by the solver's own stopping rule (``nan`` if none).
    coef : ndarray or None
        Expansion coefficients of ``f(x) = sum_i coef_i k(x_i, x) + b`` (``None`` where the solver did not
        record them: then :meth:`decision_function` uses ``alpha``).
    objective_sense : str
        ``"min"`` or ``"max"``: the sense in which ``objective`` was optimised.
    task : str
        ``"classification"`` (:meth:`predict` gives labels) or ``"regression"`` (:meth:`predict` gives ``f``).
    duality_gap : float
        The certified relative duality gap at the returned point (module docstring, "The certificate"):
        ``|objective - optimum| / |optimum| <= duality_gap + gap_floor``; ``nan`` where none exists.
    gap_floor : float
        The floating-point floor of ``duality_gap`` (the rounding of evaluating the objectives), in the same
        relative units.
    gap_tol : float
        The bound ``"optimal"`` was held to: ``duality_gap <= gap_tol`` (the objective then within
        ``gap_tol + gap_floor`` of the optimum, relative).
    """

    alpha: np.ndarray | None
    b: float | None
    objective: float
    n_iter: int
    converged: bool
    status: str
    message: str = ""
    time: float = 0.0
    kkt_gap: float = float("nan")
    info: dict = field(default_factory=dict)
    coef: np.ndarray | None = None
    objective_sense: str = "min"
    task: str = "classification"
    duality_gap: float = float("nan")
    gap_floor: float = float("nan")
    gap_tol: float = float("nan")

    def expansion(self) -> tuple[np.ndarray, float | None]:
        """The hook of :meth:`decision_function`: ``(coef, b)`` of ``f(x) = sum_i coef_i k(x_i, x) + b``.

        Here ``coef`` (or ``alpha`` where ``coef`` was not recorded) and ``b``; a result type whose model is
        written with other coefficients, or without a bias (``b = None``), overrides this method only.
        """
        c = self.coef if self.coef is not None else self.alpha
        if c is None:
            raise ValueError("this result has no expansion coefficients (coef and alpha are None)")
        return c, self.b

    def decision_function(self, K_cross) -> np.ndarray:
        """``f(z_m) = sum_i coef_i K_cross[m, i] + b`` for a cross-kernel ``K_cross`` (M x N, rows = new points).

        ``(coef, b)`` come from :meth:`expansion`; the sum is :func:`kernel_expansion`. With raw X,
        ``K_cross = RawKernel(...).cross(Z)``; a 1-D ``K_cross`` is one point.
        """
        coef, b = self.expansion()
        return kernel_expansion(K_cross, coef, b)

    def predict(self, K_cross) -> np.ndarray:
        """Classification: :func:`sign_labels` of :meth:`decision_function` (``+1`` where ``f > 0``, else
        ``-1``); regression: ``f`` itself."""
        f = self.decision_function(K_cross)
        return sign_labels(f) if self.task == "classification" else f

    def __iter__(self):
        """Unpack as ``alpha, b = result``."""
        yield self.alpha
        yield self.b

    def __repr__(self) -> str:
        parts = []
        for f in fields(self):
            v = getattr(self, f.name)
            if isinstance(v, np.ndarray):
                v = f"array(shape={v.shape})"
            elif isinstance(v, float):
                v = f"{v:.6g}"
            elif isinstance(v, (list, dict)) and len(v) > 4:
                v = f"<{type(v).__name__} of {len(v)}>"
            else:
                v = repr(v)
            parts.append(f"{f.name}={v}")
        return f"{type(self).__name__}({', '.join(parts)})"


class IllConditionedWarning(UserWarning):
    """A linear system was solved, but its estimated condition number makes the expected relative accuracy
    of the solution (``eps x cond``) worse than the tolerance asked for; the message gives both numbers."""


def warn_not_converged(solver: str, n_iter: int, gap: float, tol: float, stacklevel: int = 3) -> None:
    """Issue the standard :class:`ConvergenceWarning` for a solver stopped by its iteration limit."""
    warnings.warn(
        f"{solver} stopped at its iteration limit ({n_iter} iterations) with KKT gap "
        f"{gap:.3g} > tol = {tol:g}; the result is not optimal (status='max_iter_reached'). "
        "Increase max_iter or tol.",
        ConvergenceWarning,
        stacklevel=stacklevel,
    )


class SuboptimalWarning(ConvergenceWarning):
    """The solver's stopping rule held, but the certified relative duality gap at the returned point is above
    ``gap_tol`` (``status="suboptimal"``). The message gives the gap (how far from optimal the point may be,
    relative) and the ``tol`` that should bring it within ``gap_tol``."""


def relative_gap(gap: float, floor: float, scale: float) -> tuple[float, float]:
    """``(gap / scale, floor / scale)``: an absolute gap and its floor relative to ``scale``, a certified lower
    bound on ``|optimum|``. Where ``scale`` is 0 (the optimum may be 0) a zero stays 0 and anything else is
    ``inf``: a relative statement is then impossible, never made absolute by a ``max(1, .)``."""
    def rel(v):
        if not np.isfinite(v):
            return float("nan") if np.isnan(v) else float("inf")
        if scale > 0.0:
            return float(v / scale)
        return 0.0 if v <= 0.0 else float("inf")

    return rel(gap), rel(floor)


#: The largest relative rounding floor an ``"optimal"`` result may have where ``gap_tol`` is smaller (the module
#: docstring, "The certificate"): an exact LS-SVM solve of 2201 patterns at C = 100 has 1e-7, while a floor that is
#: not below ``|optimum|`` (a kernel whose entries are dominated by a large common part, e.g. the linear kernel of
#: features with an offset of 1e9: ``x'z`` about 1e18, rounded by hundreds) makes every relative statement void.
FLOOR_CAP = 1e-6


def certified(gap: float, floor: float, scale: float, gap_tol: float) -> bool:
    """The rule of the label ``"optimal"``: ``gap <= gap_tol * scale`` and ``floor <= max(gap_tol, FLOOR_CAP) *
    scale`` (absolute quantities: the certified gap within ``gap_tol`` of the certified lower bound ``scale`` on
    ``|optimum|``, which already has the floor taken off; the floor itself is reported, not added, but it must be
    small: an optimal result is within ``gap_tol + max(gap_tol, FLOOR_CAP)`` of the optimum, relative; module
    docstring)."""
    return bool(np.isfinite(gap) and np.isfinite(floor) and gap <= gap_tol * scale
                and floor <= max(gap_tol, FLOOR_CAP) * scale)


def warn_suboptimal(solver: str, rule: str, rel_gap: float, rel_floor: float, gap_tol: float, advice: str,
                    stacklevel: int = 3, uncertifiable: str = "") -> str:
    """Issue the :class:`SuboptimalWarning` of a result whose stopping rule (``rule``, in words) held but whose
    certified relative gap is above ``gap_tol``; returns the message (the result's ``message``)."""
    if not rel_floor < 1.0:  # the floor is not below |optimum|: no relative statement at all
        advice = ("the floating-point floor of evaluating the objectives is not below the certified bound on "
                  "|optimum| here, so no relative gap can be certified in double precision, whatever the tol. "
                  + uncertifiable)
    elif rel_floor >= gap_tol:  # no point can be certified to gap_tol: say so instead of advising a tol
        advice = (f"gap_tol is below the floating-point floor {rel_floor:.2g} of evaluating the objectives here, so "
                  f"no solution can be certified to it; use gap_tol >= {2.0 * rel_floor:.1g}")
    msg = (f"{solver}: {rule}, but the certified relative duality gap {rel_gap:.3g} (floor {rel_floor:.2g}) is not "
           f"within gap_tol = {gap_tol:g}: the objective may be up to {100.0 * (rel_gap + rel_floor):.3g}% of |optimum| "
           f"from the optimum (status='suboptimal'). {advice}")
    warnings.warn(msg, SuboptimalWarning, stacklevel=stacklevel)
    return msg

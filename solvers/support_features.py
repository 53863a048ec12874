r"""The support features machine (003) and its generalised SMO (003 §2.6).

The model is the linear SVM with the l2-l1 regulariser of selectivity ``mu in [0, 1)`` (003, eq. (4)).
Notation of 003: ``N`` patterns ``x_j in R^n`` (rows of ``X``), labels ``y_j in {-1, +1}``, ``c`` the
penalty (``C`` here). Every formula below is cited to 003 by equation number; the derivations and the
reconstructions of the garbled extraction are written out in ``docs/support_features_notes.md``.

Primal (003, eq. (5))::

    min_{a, b, delta}  sum_i ((1 - mu) a_i^2 + mu |a_i|) + C sum_j delta_j
    s.t.               y_j (a'x_j + b) >= 1 - delta_j,   delta_j >= 0.

Dual (003, eq. (10)), concave and *not* quadratic, with ``w = sum_j lam_j y_j x_j`` (003, eq. (6))::

    max_lam  W(lam) = sum_j lam_j - 1/(4(1 - mu)) sum_i max{0, |w_i| - mu}^2
    s.t.     0 <= lam_j <= C,   sum_j y_j lam_j = 0.

(003 writes the square as ``min{mu + w_i, 0, mu - w_i}^2``; it equals ``max{0, |w_i| - mu}^2``, 003 §2.5.)

Primal recovery (003, eq. (8)), soft thresholding of ``w`` (the extraction's case 2 reads
"``w_i < mu``"; it is ``w_i < -mu``, and (7) lost a square: ``L_i = (1-mu) a_i^2 + mu|a_i| - w_i a_i``)::

    a_i = sign(w_i) max{0, |w_i| - mu} / (2 (1 - mu)).

Gradient of (10) (003 §2.6, simplified with (8))::

    dW/dlam_j = 1 - y_j a(lam)'x_j,

the gradient of the standard SVM dual with the soft-thresholded weight. In LIBSVM's notation
(minimising ``-W``, ``G_j = y_j a'x_j - 1``, so ``-y_j G_j = y_j - a'x_j``) the KKT conditions of (10) read
``max_{t in I_up} (y_t - a'x_t) <= min_{t in I_low} (y_t - a'x_t)`` with
``I_up = {lam_t < C, y_t = +1} u {lam_t > 0, y_t = -1}`` and ``I_low = {lam_t < C, y_t = -1} u {lam_t > 0, y_t = +1}``
(000, eq. (8) with box [0, C]); the solver stops when the difference (the KKT gap) is ``<= tol``.

The layout (imports go one way, ``support_features -> sfm_path -> _sfm_model -> _sfm_engine``): the formulas
of 003 in numpy, :class:`SFMResult` and :func:`support_features` are :mod:`svmref.solvers._sfm_model`; the
compiled generalised SMO is :mod:`svmref.solvers._sfm_engine`; the selectivity path and leave-one-out are
:mod:`svmref.solvers.sfm_path`; the "two hypercubes" data of 003 §3.1 is :mod:`svmref.datasets.synthetic`.
This module is the public face of all of them: every name below is importable from here.
"""
from __future__ import annotations

from svmref.datasets.synthetic import two_hypercubes

from ._sfm_model import (
    AUTO_CACHE_FRACTION,
    CACHE_SIZE_MB,
    SFMResult,
    certified_gap,
    dual_objective,
    primal_objective,
    recover_a,
    recover_b,
    support_features,
)
from .sfm_path import PathResult, leave_one_out, selectivity_path

__all__ = [
    "SFMResult",
    "PathResult",
    "support_features",
    "selectivity_path",
    "two_hypercubes",
    "leave_one_out",
    "recover_a",
    "recover_b",
    "certified_gap",
    "dual_objective",
    "primal_objective",
    "CACHE_SIZE_MB",
    "AUTO_CACHE_FRACTION",
]

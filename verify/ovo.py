"""LIBSVM's one-vs-one layout of a multi-class model, read as one binary problem per pair of classes.

LIBSVM (and scikit-learn's ``SVC``, which keeps LIBSVM's layout in ``dual_coef_``, ``support_``, ``n_support_`` and
``intercept_``; LIBSVM's model file in its ``SV`` lines, ``nr_sv`` and ``rho``) trains one binary C-SVC per pair of
classes ``(i, j)``, ``i < j`` in the order of its labels, on the patterns of those two classes, the first class as
``+1``. The support vectors are stored once, grouped by class (``n_support[k]`` of class ``k``, in label order), with
``k - 1`` coefficient rows: the coefficients ``y_t alpha_t`` of pair ``(i, j)`` for the support vectors of class ``i``
are in row ``j - 1``, those for class ``j`` in row ``i``; the pairs' intercepts are in the order
``(0, 1), (0, 2), ..., (0, k-1), (1, 2), ...``. Nothing here imports the rest of :mod:`svmref.verify`.
"""
from __future__ import annotations

import numpy as np

__all__ = ["pairs", "pair_index", "pair_coefficients"]


def pairs(n_classes: int) -> list[tuple[int, int]]:
    """The pairs ``(i, j)``, ``i < j``, in LIBSVM's order (that of its ``rho`` and of scikit-learn's ``intercept_``)."""
    return [(i, j) for i in range(n_classes) for j in range(i + 1, n_classes)]


def pair_index(n_classes: int, i: int, j: int) -> int:
    """The position of pair ``(i, j)`` in :func:`pairs`."""
    if not 0 <= i < j < n_classes:
        raise ValueError(f"a pair of classes needs 0 <= i < j < {n_classes}; got ({i}, {j})")
    return pairs(n_classes).index((i, j))


def pair_coefficients(n_support, coef: np.ndarray, intercept, i: int, j: int) -> tuple[np.ndarray, np.ndarray, float]:
    """Pair ``(i, j)`` of a one-vs-one model: ``(rows, coefficients, b)``.

    ``rows`` are the positions, among the stored support vectors, of those of classes ``i`` and ``j``;
    ``coefficients`` their ``y_t alpha_t`` for that pair (``+1`` is class ``i``); ``b`` its intercept, so that the
    pair's decision function is ``sum coefficients_t k(x_t, x) + b`` (positive: class ``i``). ``coef`` has ``k - 1``
    rows (one for two classes); ``intercept`` one value per pair (LIBSVM's ``-rho``).
    """
    n_support = np.asarray(n_support, dtype=int)
    k = n_support.size
    coef = np.atleast_2d(np.asarray(coef, dtype=float))
    if coef.shape[0] != k - 1 or coef.shape[1] != int(n_support.sum()):
        raise ValueError(f"a one-vs-one model of {k} classes and {int(n_support.sum())} support vectors has {k - 1} "
                         f"coefficient rows of that length; got shape {coef.shape}")
    start = np.concatenate([[0], np.cumsum(n_support)])
    rows_i = np.arange(start[i], start[i + 1])
    rows_j = np.arange(start[j], start[j + 1])
    c = np.concatenate([coef[j - 1, rows_i], coef[i, rows_j]])
    b = float(np.ravel(intercept)[pair_index(k, i, j)])
    return np.concatenate([rows_i, rows_j]), c, b

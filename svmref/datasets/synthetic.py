"""Synthetic data sets of the papers (numpy only): the "two hypercubes" of 003 §3.1.

Generated, not shipped: :func:`two_hypercubes` draws a fresh sample from ``numpy.random.default_rng(seed)``.
(``svmref.solvers.support_features.two_hypercubes`` re-exports it.)
"""
from __future__ import annotations

import numpy as np

from svmref._validation import check_positive

__all__ = ["two_hypercubes"]


def two_hypercubes(n_train_per_class=25, n=50, seed=0, *, normal=None, side=1.0):
    """The "two hypercubes" data of 003 §3.1: two cubes touching along a face with normal ``(5,4,3,2,1,0,...)``.

    003 says only: uniform points inside two hypercubes that touch along one face, the face's normal
    along ``(5, 4, 3, 2, 1, 0, ..., 0)``, so 5 features carry the class. Our construction (exact):

    * cube coordinates ``z in R^n``: class +1 has ``z_1 ~ U[0, side]``, class -1 has ``z_1 ~ U[-side, 0]``,
      and both have ``z_k ~ U[-side/2, side/2]`` for ``k >= 2`` (two unit cubes sharing the face ``z_1 = 0``,
      centred on the ``z_1`` axis);
    * rotate by the Householder reflection ``H = I - 2 v v'/(v'v)``, ``v = e_1 - nu``, ``nu = normal/||normal||``,
      which maps ``e_1`` to ``nu``: ``x = H z``. Then ``nu'x = z_1``, so the shared face lies in the hyperplane
      ``nu'x = 0`` with normal ``nu``, and the classes are separated exactly by ``sign(nu'x)``;
    * ``v`` is zero beyond the support of ``normal``, so ``H`` leaves ``e_k`` unchanged there: features
      6..n are ``z_k``, pure noise, independent of the class; features 1..5 mix ``z_1..z_5``.

    Returns ``X`` (``2 n_train_per_class x n``: first the class +1 block, then class -1) and ``y``.
    ``seed`` seeds ``numpy.random.default_rng``.
    """
    if isinstance(n_train_per_class, bool) or int(n_train_per_class) != n_train_per_class or n_train_per_class < 1:
        raise ValueError(f"n_train_per_class must be an integer >= 1; got {n_train_per_class!r}")
    normal = np.array([5.0, 4.0, 3.0, 2.0, 1.0]) if normal is None else np.asarray(normal, dtype=np.float64).ravel()
    if isinstance(n, bool) or int(n) != n or n < normal.size:
        raise ValueError(f"n must be an integer >= len(normal) = {normal.size}; got {n!r}")
    side = check_positive(side, "side")
    if not np.all(np.isfinite(normal)) or not np.any(normal != 0):
        raise ValueError("normal must be a finite, non-zero vector")
    n, m = int(n), int(n_train_per_class)
    nu = np.zeros(n)
    nu[: normal.size] = normal / np.linalg.norm(normal)
    v = -nu.copy()
    v[0] += 1.0
    rng = np.random.default_rng(seed)
    Z = rng.uniform(-side / 2, side / 2, size=(2 * m, n))
    Z[:m, 0] = rng.uniform(0.0, side, size=m)
    Z[m:, 0] = rng.uniform(-side, 0.0, size=m)
    vv = float(v @ v)
    X = Z - np.outer(Z @ v, v) * (2.0 / vv) if vv > 0 else Z.copy()  # x = H z (H symmetric)
    y = np.concatenate([np.ones(m), -np.ones(m)])
    return X, y

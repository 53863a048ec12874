"""Kernel functions of the papers, as dense Gram matrices.

Conventions (each cited to the paper that uses it):

* linear      ``k(x, z) = x^T z``                          (000 §4 Fig. 1; 002 "Kernel function K")
* polynomial  ``k(x, z) = (1 + x^T z / c)^d``              (002, "Polynomial kernel of degree d")
* RBF         ``k(x, z) = exp(-||x - z||^2 / sigma^2)``    (000 §4; 002; 004 §4)
* Gaussian of 001 ``k(x, z) = exp(-||x - z||^2 / (2 sigma^2))`` (001 §3): note the factor 2;
  use :func:`gaussian_kernel` for 001's experiments, or ``rbf_kernel(sigma=sqrt(2)*s)``.
* MLP         ``k(x, z) = tanh(k x^T z + theta)``          (002): **not** positive semidefinite for
  all ``k, theta`` (002: "the Mercer condition holds ... but not for all possible choices of k and
  theta in the MLP case"); convex formulations built on it may not be convex.

Accuracy. The distance kernels (RBF, Gaussian) are translation-invariant and computed so: each value is within
1e-12 (absolute; the values lie in [0, 1]) of the exact kernel of the float64 inputs, for any offset of the data
(a raw timestamp, an offset of 1e12 with spread O(1)); :func:`rbf_kernel` says how and why. The inner-product
kernels (linear, polynomial, MLP) are not translation-invariant, and their values are left as the inputs give
them: ``x'z`` is computed to its usual accuracy (``d u sum_k |x_k z_k|``, ``u = 2^-53``), but a large common
offset ``m`` makes it nearly the same for every pair and the kernel matrix nearly of rank one. With a timestamp
feature (``m`` about 1.7e9, spread 50) ``x'z`` is about 3e18 and rounded to about 300, so its part
``(x - m)'(z - m)`` (up to about 600) keeps hardly a digit. That is the model as the user wrote it; no warning is
given, since whether the offset matters depends on the model. The estimators of :mod:`svmref.solvers.estimators`
whose model has a free bias (``y'alpha = 0``, on which the centred Gram matrix gives the same solution) compute the
linear kernel on centred features themselves; elsewhere, centre or standardise such features first.

Only numpy is imported here, so ``solvers`` can use these without cvxpy.
"""
from __future__ import annotations

import numpy as np

from ._validation import check_kernel_memory, check_positive, check_X

__all__ = [
    "linear_kernel",
    "polynomial_kernel",
    "rbf_kernel",
    "gaussian_kernel",
    "mlp_kernel",
    "kernel_matrix",
    "KERNELS",
]


def _pair(X, Z):
    X = check_X(X, "X")
    if Z is None:
        return X, X, True
    Z = check_X(Z, "Z")
    if Z.shape[1] != X.shape[1]:
        raise ValueError(f"Z must have the same number of features as X ({X.shape[1]}); got {Z.shape[1]}")
    return X, Z, False


def _scale_note(X, Z, same) -> str:
    sx = float(np.max(np.abs(X)))
    if same:
        return f"X has entries up to {sx:.3g} in absolute value"
    return f"X has entries up to {sx:.3g} and Z up to {float(np.max(np.abs(Z))):.3g} in absolute value"


def _refuse_overflow(M, X, Z, same, what: str) -> None:
    """Raise naming X (and Z) and their scale if the kernel's intermediate ``M`` overflowed."""
    if not np.all(np.isfinite(M)):
        raise ValueError(
            f"computing {what} overflows float64: {_scale_note(X, Z, same)}; rescale the data "
            "(e.g. standardise each feature) before computing the kernel"
        )


def linear_kernel(X, Z=None) -> np.ndarray:
    """``K_ij = x_i^T z_j`` (002, linear kernel).

    Not translation-invariant: the values are those of the inputs as given (accurate to ``d u sum_k |x_i,k z_j,k|``);
    with a large common offset of a feature they are dominated by it, and centring the data is the user's choice
    (module docstring, "Accuracy").

    Refuses (``ValueError`` naming X and its scale) data whose inner products overflow float64, or
    underflow so that every entry of a kernel of non-zero data is 0.
    """
    X, Z, same = _pair(X, Z)
    check_kernel_memory(X.shape[0], Z.shape[0])
    with np.errstate(over="ignore", invalid="ignore", under="ignore"):
        K = X @ Z.T
    _refuse_overflow(K, X, Z, same, "the linear kernel x_i'z_j")
    if not np.any(K) and np.any(X) and np.any(Z):
        tiny = np.einsum("ij,ij->i", X, X)
        if not np.any(tiny):
            raise ValueError(
                f"the linear kernel x_i'z_j underflows to 0 for every pair: {_scale_note(X, Z, same)}; "
                "rescale the data before computing the kernel"
            )
    if same:
        K = 0.5 * (K + K.T)
    return K


def polynomial_kernel(X, Z=None, *, c: float = 1.0, d: int = 2) -> np.ndarray:
    """``K_ij = (1 + x_i^T z_j / c)^d`` (002, polynomial kernel of degree d; Mercer for c > 0, d in N).

    Not translation-invariant (an inner-product kernel, as :func:`linear_kernel`): an offset of the data changes
    the values and is the user's to remove (module docstring, "Accuracy")."""
    c = check_positive(c, "c")
    if isinstance(d, bool) or int(d) != d or int(d) < 1:
        raise ValueError(f"d (polynomial degree) must be an integer >= 1; got {d!r}")
    K = linear_kernel(X, Z)
    K /= c
    K += 1.0
    with np.errstate(over="ignore", invalid="ignore"):
        K = K ** int(d)
    if not np.all(np.isfinite(K)):
        X, Z, same = _pair(X, Z)
        raise ValueError(
            f"the polynomial kernel (1 + x'z/c)^d with c = {c:g}, d = {int(d)} overflows float64: "
            f"{_scale_note(X, Z, same)}; rescale the data or increase c"
        )
    return K


#: Unit roundoff of float64 (half the machine epsilon).
_U = 2.0 ** -53

#: Absolute accuracy of every RBF/Gaussian kernel value computed by the expansion (kernel values lie in [0, 1]):
#: an entry whose rounding-error bound exceeds it is recomputed in the difference form (see
#: :func:`rbf_kernel`, "Accuracy"). 2^-41 = 4.5e-13 is two hundred times the rounding of a kernel value on
#: well-scaled data, so the difference form runs only where the expansion really loses digits, and below the
#: 1e-12 the kernels promise.
EXPANSION_ATOL = 2.0 ** -41
#: Elements per temporary block of the difference form and of the check (bounds the extra memory).
_BLOCK = 1 << 20


def expansion_bound(d: int) -> float:
    """``kappa u``, ``kappa = 2 d + 8``: the squared distance of two float64 points ``x, z`` in ``d`` features,
    computed by the expansion ``||a||^2 + ||b||^2 - 2 a'b`` of their shifted copies ``a = fl(x - m)``,
    ``b = fl(z - m)`` (any summation order), differs from the exact ``||x - z||^2`` by at most
    ``kappa u (||a||^2 + ||b||^2) + u ||x - z||^2`` (``u = 2^-53``; to first order in ``u``).

    The parts: the shift, ``|a_k - (x_k - m_k)| <= u |a_k|``, moves ``||a - b||^2`` by at most
    ``u ||x - z||^2 + 2u (||a||^2 + ||b||^2)``; the two norms and the inner product are each off by at most
    ``gamma_d = d u`` times ``||a||^2``, ``||b||^2`` and ``sum_k |a_k b_k| <= (||a||^2 + ||b||^2) / 2``;
    the two additions by ``u`` times partial sums of at most ``2 (||a||^2 + ||b||^2)`` each.
    """
    return (2.0 * int(d) + 8.0) * _U


def distance_shift(X) -> np.ndarray:
    """The point both arguments of a distance kernel are translated by before the expansion: the mean of the
    rows of ``X`` (the midpoint of each column's range where the mean overflows).

    Distances do not change under a common translation, and the translation itself is exact where it matters
    most: ``x - m`` is computed without rounding whenever ``m/2 <= x <= 2m`` (Sterbenz's lemma), which holds for
    every entry of a feature with a large offset and a small spread.
    """
    X = np.asarray(X, dtype=np.float64)
    with np.errstate(over="ignore", invalid="ignore"):
        m = X.mean(axis=0)
    if not np.all(np.isfinite(m)):
        m = 0.5 * X.min(axis=0) + 0.5 * X.max(axis=0)
    return m


def sigma_range(factor: float = 1.0) -> tuple[float, float]:
    """``(lo, hi)``: the widths ``sigma`` that :func:`rbf_gamma` accepts, about ``sqrt(factor / F)`` to
    ``sqrt(factor F)`` with ``F`` the largest float64 (``sigma^2 / factor`` and its reciprocal finite and > 0):
    the least and the greatest float64 ``sigma`` for which ``factor / sigma^2`` is a finite number > 0, found by
    stepping from the square roots to the first accepted value (RBF: about 7.5e-155 to 1.3e154)."""
    big = float(np.finfo(np.float64).max)

    def ok(s):
        with np.errstate(over="ignore", divide="ignore", under="ignore"):
            den = s * s / float(factor)
            return bool(den > 0.0 and np.isfinite(den) and np.isfinite(1.0 / den))

    lo, hi = float(np.sqrt(float(factor) / big)), float(np.sqrt(float(factor) * big))
    while not ok(lo):
        lo = float(np.nextafter(lo, np.inf))
    while ok(float(np.nextafter(lo, 0.0))):
        lo = float(np.nextafter(lo, 0.0))
    while not ok(hi):
        hi = float(np.nextafter(hi, 0.0))
    while ok(float(np.nextafter(hi, np.inf))):
        hi = float(np.nextafter(hi, np.inf))
    return lo, hi


def _round_in(v: float, up: bool) -> str:
    """``v`` to 3 significant digits, rounded up (``up``) or down, so that the printed bound of a range is inside it."""
    import decimal

    d = decimal.Context(prec=3, rounding=decimal.ROUND_CEILING if up else decimal.ROUND_FLOOR).create_decimal(v)
    return f"{d:.2e}"


def rbf_gamma(sigma, factor: float = 1.0) -> float:
    """``factor / sigma^2``: the rate ``gamma`` of ``exp(-gamma ||x - z||^2)`` (``factor`` 1 for the RBF, 1/2 for
    001's Gaussian). Refuses (``ValueError`` naming sigma and the accepted range, :func:`sigma_range`) a sigma for
    which ``sigma^2 / factor``, or its reciprocal, is not a finite number > 0 in float64 (e.g. ``sigma = 1e-200``,
    whose square underflows to 0, or ``1e200``)."""
    sigma = check_positive(sigma, "sigma")
    den = sigma * sigma / float(factor)
    with np.errstate(over="ignore", divide="ignore"):
        g = 1.0 / den if den > 0.0 else np.inf
    if den == 0.0 or not np.isfinite(den) or not np.isfinite(g) or g <= 0.0:
        what = {1.0: "sigma^2", 0.5: "2 sigma^2"}.get(float(factor), f"sigma^2 / {factor:g}")
        lo, hi = sigma_range(factor)
        raise ValueError(f"sigma = {sigma!r} is out of range: {what} = {den!r} (or 1/{what}) is not a finite number "
                         f"> 0 in float64; sigma must lie in [{_round_in(lo, True)}, {_round_in(hi, False)}] for this "
                         "kernel. Choose sigma in that range, or rescale X (sigma scales with X: X*t with sigma*t gives "
                         "the same kernel)")
    return g


def _exact_sq(X, Z, rows, cols) -> np.ndarray:
    """``||x_r - z_c||^2`` in the difference form for the pairs ``(rows[k], cols[k])``, from the inputs themselves:
    each ``x_k - z_k`` is rounded once (relative error ``u``), so the sum is accurate to ``(d + 2) u`` relative."""
    out = np.empty(rows.size)
    step = max(1, _BLOCK // max(1, X.shape[1]))
    with np.errstate(over="ignore", invalid="ignore", under="ignore"):
        for s in range(0, rows.size, step):
            diff = X[rows[s:s + step]] - Z[cols[s:s + step]]
            out[s:s + step] = np.einsum("ij,ij->i", diff, diff)
    return out


def exponent_threshold(tmax):
    """The least ``gamma D`` (computed) at which no entry whose bound ``T`` is at most ``tmax > EXPANSION_ATOL`` can need
    the difference form: ``T exp(-(gamma D - T)) > EXPANSION_ATOL`` needs ``gamma D < T + log(T / EXPANSION_ATOL)``,
    which grows with ``T`` (times ``1 + 2^-40``, a margin for the rounding of the test); ``inf`` when ``tmax`` is.
    Elementwise on arrays."""
    return (tmax + np.log(tmax / EXPANSION_ATOL)) * (1.0 + 2.0 ** -40)


def _needs_difference(D, xx, zz, gamma, c):
    """``(rows, cols)`` of the entries of ``D`` (the expansion) whose kernel value ``exp(-gamma D)`` may be off by more
    than :data:`EXPANSION_ATOL`: ``T exp(-max(gamma D - T, 0)) > EXPANSION_ATOL``, with ``T = c (xx_i + zz_j)`` the
    bound on ``gamma |D - D_exact|`` (``c = gamma kappa u``, :func:`expansion_bound`); a NaN in ``D`` counts.

    Only rows with ``T_max = c (xx_i + max zz) > EXPANSION_ATOL`` can hold one (none, for well-scaled data), and in
    them only entries below :func:`exponent_threshold` ``(T_max) / gamma`` (the near pairs): the rows' minima find
    the rows with such candidates, a comparison finds these in them, and the exact test runs on them alone.
    """
    none = np.empty(0, dtype=np.intp)
    with np.errstate(over="ignore", invalid="ignore", under="ignore", divide="ignore"):
        tmax = c * (xx + float(np.max(zz)))
        live = tmax > EXPANSION_ATOL
        if not np.any(live):
            return none, none
        thr = np.full(xx.size, -np.inf)
        thr[live] = exponent_threshold(tmax[live]) / gamma
        thr[np.isposinf(thr)] = np.nan  # every entry of such a row (an overflowed bound) is a candidate
        has = ~(D.min(axis=1) >= thr)  # the rows with a candidate (one fast pass; a NaN counts)
        out_r, out_c = [], []
        step = max(1, _BLOCK // max(1, zz.size))
        for s in range(0, xx.size, step):
            if not np.any(has[s:s + step]):
                continue
            i, j = np.divmod(np.flatnonzero(~(D[s:s + step] >= thr[s:s + step, None])), zz.size)  # 6x np.nonzero's speed
            i += s
            t = c * (xx[i] + zz[j])
            w = gamma * D[i, j] - t
            bad = (~(t <= EXPANSION_ATOL) & ~(w >= np.log(t / EXPANSION_ATOL))) | np.isnan(w)
            out_r.append(i[bad])
            out_c.append(j[bad])
    if not out_r:
        return none, none
    return np.concatenate(out_r), np.concatenate(out_c)


def _sq_dists(X, Z, same, gamma) -> np.ndarray:
    """``||x_i - z_j||^2``, accurate where ``exp(-gamma ||x_i - z_j||^2)`` needs it (:func:`rbf_kernel`, "Accuracy").

    Both arguments are shifted by the mean of ``X`` (:func:`distance_shift`), the distances formed by the expansion
    (one matrix product), and the entries whose rounding could move the kernel value by more than
    :data:`EXPANSION_ATOL` (:func:`_needs_difference`) recomputed in the difference form from the inputs.
    """
    check_kernel_memory(X.shape[0], Z.shape[0])
    m = distance_shift(X)
    with np.errstate(over="ignore", invalid="ignore", under="ignore"):
        A = X - m
        xx = np.einsum("ij,ij->i", A, A)
        if same:
            B, zz = A, xx
        else:
            B = Z - m
            zz = np.einsum("ij,ij->i", B, B)
        D = A @ B.T
        D *= -2.0
        D += xx[:, None]
        D += zz[None, :]
    if same:
        np.fill_diagonal(D, np.inf)  # exactly 0 below; not a candidate meanwhile
    rows, cols = _needs_difference(D, xx, zz, gamma, gamma * expansion_bound(X.shape[1]))
    if rows.size:
        D[rows, cols] = _exact_sq(X, Z, rows, cols)
    if same:
        np.fill_diagonal(D, 0.0)
    _refuse_overflow(D, X, Z, same, "the squared distances ||x_i - z_j||^2")
    np.maximum(D, 0.0, out=D)
    if same:
        D = 0.5 * (D + D.T)
        np.fill_diagonal(D, 0.0)
    return D


def rbf_kernel(X, Z=None, *, sigma: float = 1.0) -> np.ndarray:
    """``K_ij = exp(-||x_i - z_j||^2 / sigma^2)`` (000 §4; 002 RBF kernel; 004 §4).

    Note the absence of the factor 2: 001 uses ``2 sigma^2`` (see :func:`gaussian_kernel`).

    Accuracy
    --------
    Every entry is within ``max(EXPANSION_ATOL + 10u, ((d + 6)/e + 4) u)`` of the exact kernel of the float64
    inputs (``u = 2^-53``, ``EXPANSION_ATOL = 2^-41``): below ``1e-12`` absolute for up to 20000 features,
    whatever the offset of the data: a feature such as a raw timestamp (about 1.7e9, spread 50) or an offset of
    1e12 with spread O(1) gives the same kernel as the centred data, to that accuracy. (The ``10u`` and ``4u``
    cover the rounding of ``gamma``, of the exponent and of ``exp``.)

    Why: distances are translation-invariant, so both arguments are first shifted by the mean of ``X``
    (:func:`distance_shift`; the shift is exact for the offset features, Sterbenz's lemma). The expansion
    ``||a||^2 + ||b||^2 - 2 a'b`` of the shifted points (one matrix product) is off by at most
    ``B = kappa u (||a||^2 + ||b||^2)`` (:func:`expansion_bound`), so the kernel value by at most
    ``gamma B exp(-gamma max(D - B, 0))``, ``gamma = 1/sigma^2``: small for every entry unless the data lie many
    kernel widths from their mean. Where that bound exceeds ``EXPANSION_ATOL`` the entry is recomputed in the
    difference form ``sum_k (x_k - z_k)^2`` from the inputs themselves (relative error ``(d + 2) u``), e.g. the
    near pairs of a feature with two far-apart clusters. Cost: ``O(N d)`` for the shift; the check is free
    unless some row's bound can exceed the tolerance. The unshifted expansion lost everything: with the
    timestamp feature its error reached 1 (1e3: 1e-9).

    Raises ``ValueError`` (naming X, Z and their scale) where a distance overflows float64, and (naming sigma) where
    ``sigma^2`` or its reciprocal is not a finite number > 0.
    """
    return _exp_kernel(X, Z, rbf_gamma(sigma))


def gaussian_kernel(X, Z=None, *, sigma: float = 1.0) -> np.ndarray:
    """``K_ij = exp(-||x_i - z_j||^2 / (2 sigma^2))``: the Gaussian kernel as 001 §3 writes it.

    Computed as :func:`rbf_kernel` is, with ``gamma = 1/(2 sigma^2)``, and as accurate (to 1e-12 absolute, for any
    offset of the data); refuses a sigma whose ``2 sigma^2`` or its reciprocal under- or overflows.
    """
    return _exp_kernel(X, Z, rbf_gamma(sigma, 0.5))


def _exp_kernel(X, Z, gamma) -> np.ndarray:
    """``exp(-gamma ||x_i - z_j||^2)`` with the accuracy of :func:`rbf_kernel`."""
    X, Z, same = _pair(X, Z)
    D = _sq_dists(X, Z, same, gamma)
    with np.errstate(over="ignore", under="ignore"):
        D *= -gamma  # may reach -inf (exp gives exactly 0): a genuine limit, not an error
        return np.exp(D, out=D)


def mlp_kernel(X, Z=None, *, k: float = 1.0, theta: float = 0.0) -> np.ndarray:
    """``K_ij = tanh(k x_i^T z_j + theta)`` (002, MLP kernel). Not PSD for all ``k, theta``."""
    if not np.isfinite(k) or not np.isfinite(theta):
        raise ValueError(f"k and theta must be finite; got k={k!r}, theta={theta!r}")
    K = linear_kernel(X, Z)
    K *= float(k)
    K += float(theta)
    return np.tanh(K, out=K)


KERNELS = {
    "linear": linear_kernel,
    "poly": polynomial_kernel,
    "polynomial": polynomial_kernel,
    "rbf": rbf_kernel,
    "gaussian": gaussian_kernel,
    "mlp": mlp_kernel,
}


def kernel_matrix(X, Z=None, kernel: str = "rbf", **params) -> np.ndarray:
    """Gram matrix ``K_ij = k(x_i, z_j)`` for a kernel named in :data:`KERNELS`.

    ``params`` are the kernel's own (``sigma``; ``c, d``; ``k, theta``).
    """
    if callable(kernel):
        return np.asarray(kernel(X, Z, **params), dtype=np.float64)
    try:
        fn = KERNELS[kernel]
    except KeyError:
        raise ValueError(f"kernel must be one of {sorted(KERNELS)} or a callable; got {kernel!r}") from None
    return fn(X, Z, **params)

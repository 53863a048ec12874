r"""Double-double arithmetic: the residual of ISLS's weighted system in about twice float64's precision.

Error-free transformations (Ogita, Rump & Oishi, "Accurate sum and dot product", SIAM J. Sci. Comput. 26(6),
2005): TwoSum (Knuth) writes ``a + b = s + e`` exactly, TwoProduct writes ``a * b = p + e`` exactly through one
fused multiply-add, ``e = fma(a, b, -p)``.  A sum of such pairs carried as ``(high, low)`` is Dot2, accurate as if
computed in twice the working precision and rounded once.

:func:`dd_residual` evaluates the residual of system (N) of :mod:`svmref.solvers.isls` (the weighted problem (3) of
004 in the variables ``v = alpha_S / a_S``, ``M v = g`` with ``M = I + c A_c'A_c``) this way, for the iterates whose
``||M||`` is too large for a float64 residual to certify them (:mod:`svmref.solvers._isls_paths`).

The fused multiply-add is LLVM's ``llvm.fma.f64`` (:func:`fma`): the FMA instruction where the CPU has one,
libm's exact ``fma`` otherwise (correct, slower).
"""
from __future__ import annotations

import numpy as np
from llvmlite import ir as llvm_ir
from numba import njit, types
from numba.extending import intrinsic

__all__ = ["two_sum", "fma", "two_prod", "dd_residual"]


@njit(cache=True, inline="always")
def two_sum(a, b):
    """TwoSum: ``a + b = s + e`` exactly (six floating-point operations, no branch)."""
    s = a + b
    bb = s - a
    return s, (a - (s - bb)) + (b - bb)


@intrinsic
def fma(typingctx, a, b, c):
    """``a * b + c`` with one rounding (LLVM's ``llvm.fma.f64``: the FMA instruction, or libm's exact ``fma``)."""
    sig = types.float64(types.float64, types.float64, types.float64)

    def codegen(context, builder, signature, args):
        d = llvm_ir.DoubleType()
        f = builder.module.declare_intrinsic("llvm.fma", [d], llvm_ir.FunctionType(d, [d, d, d]))
        return builder.call(f, args)

    return sig, codegen


@njit(cache=True, inline="always")
def two_prod(a, b):
    """TwoProduct: ``a * b = p + e`` exactly."""
    p = a * b
    return p, fma(a, b, -p)


@njit(cache=True)
def dd_residual(KS, z, y, ca, v):  # pragma: no cover - compiled
    """``r = c diag(a) K_S (xi) - v`` with ``xi = P_c (y - K_S' z)`` (``K_S = K[S]``, m x N rows of the symmetric K,
    ``z = a v``, ``P_c`` the centring, ``ca = c a``): the residual of (N), ``c A_c'y_c - v - c A_c'A_c v``, in
    double-double arithmetic.  Returns ``(r, xi)`` rounded to float64: ``r`` is accurate to a few units in its last
    place plus ``u^2 (||M|| ||v|| + ||g||)``, where the float64 evaluation errs by ``u ||M|| ||v||``."""
    m, N = KS.shape
    sh = y.copy()                                          # y - K_S'z, accumulated in (sh, sl)
    sl = np.zeros(N)
    for i in range(m):
        b = -z[i]
        row = KS[i]
        for j in range(N):
            p, e = two_prod(row[j], b)
            s, t = two_sum(sh[j], p)
            sh[j] = s
            sl[j] += t + e
    mh = 0.0                                               # the mean, to centre: sum in double-double
    ml = 0.0
    for j in range(N):
        mh, t = two_sum(mh, sh[j])
        ml += t + sl[j]
    mh, ml = two_sum(mh, ml)
    q = mh / N
    ph, pl = two_prod(q, float(N))
    ql = ((mh - ph) - pl + ml) / N                          # mean = q + ql to double-double accuracy
    xh = np.empty(N)
    xl = np.empty(N)
    for j in range(N):
        s, t = two_sum(sh[j], -q)
        t += sl[j] - ql
        s2 = s + t
        xh[j] = s2
        xl[j] = t - (s2 - s)
    r = np.empty(m)
    for i in range(m):                                     # (K_S xi)_i, four independent double-double lanes
        row = KS[i]
        s0 = s1 = s2 = s3 = 0.0
        c0 = c1 = c2 = c3 = 0.0
        n4 = N - N % 4
        for j in range(0, n4, 4):
            k = row[j]
            xhj = xh[j]
            p, e = two_prod(k, xhj)
            s0, t = two_sum(s0, p)
            c0 += t + e + k * xl[j]
            k = row[j + 1]
            xhj = xh[j + 1]
            p, e = two_prod(k, xhj)
            s1, t = two_sum(s1, p)
            c1 += t + e + k * xl[j + 1]
            k = row[j + 2]
            xhj = xh[j + 2]
            p, e = two_prod(k, xhj)
            s2, t = two_sum(s2, p)
            c2 += t + e + k * xl[j + 2]
            k = row[j + 3]
            xhj = xh[j + 3]
            p, e = two_prod(k, xhj)
            s3, t = two_sum(s3, p)
            c3 += t + e + k * xl[j + 3]
        for j in range(n4, N):
            k = row[j]
            xhj = xh[j]
            p, e = two_prod(k, xhj)
            s0, t = two_sum(s0, p)
            c0 += t + e + k * xl[j]
        s, t = two_sum(s0, s1)
        cc = c0 + c1 + t
        s, t = two_sum(s, s2)
        cc += c2 + t
        s, t = two_sum(s, s3)
        cc += c3 + t
        s, t = two_sum(s, cc)                              # w = s + t
        b = ca[i]
        p, e = two_prod(s, b)
        e += t * b
        h, t2 = two_sum(p, -v[i])
        r[i] = h + (t2 + e)
    return r, xh

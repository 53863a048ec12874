"""verify's verdicts on the built-in solvers over ``svmref.testing.strategies``, each judged by an extended-precision solve.

The promise held here: the project's built-in solvers, run over the instances that :mod:`svmref.testing.strategies`
draws, get no ``fail`` from :func:`svmref.verify.check` that an extended-precision solve does not confirm and no
``pass`` where that solve shows an error above ``T``. For each formulation that has a built-in solver
(:data:`svmref.solvers.REGISTRY`) and an independent dual in ``benchmarks/labels.py`` (L1, L2, LS (both the SMO and
the linear system), Least 1-Norm, epsilon-SVR) this script

1. draws ``--examples`` distinct instances with ``instances(formulation, max_n=...)`` (hypothesis, seeded per
   formulation, no database, its constants mined from local modules left out: the same instances on every run,
   whatever else is imported; :func:`draw`);
2. computes the independent optimum of each (:func:`labels.independent_optimum`: CLARABEL, an active-set refinement
   in ``numpy.longdouble``, and for these sizes the final active set solved again at 50 digits in mpmath; where the
   optimum would be 0 with ``D* = 0``, which labels cannot report, :func:`zero_optimum`); an instance whose exact
   kernel is not PSD has none and is counted as ``no optimum``;
3. runs ``svmref.verify.check(solver, formulation, [instance], tol=T)``, ``T`` = :data:`svmref.verify.DEFAULT_TOL`,
   as a user does (verify passes ``tol = T`` to a solver with a ``tol`` parameter), capturing the answer the solver
   returned to verify;
4. measures that answer's true errors on the exact kernel (:func:`labels.answer_errors`): ``obj`` (relative dual
   objective), ``b`` (distance from the optimal interval), ``feas``, ``dec`` (``W.Phi`` alone, reported) and
   ``f``, the decision function ``f = W.Phi + b`` against ``W*.Phi + b*`` with ``b*`` at its best in the optimal
   interval (what verify judges); the *true error* is the largest of ``obj``, ``f``, ``b`` and ``feas``; and
   recomputes verify's KKT residuals in extended precision on the exact kernel (:func:`ld_residuals`, the same
   formulas and units as :mod:`svmref.verify.kkt`).

Where a verdict hinges on the optimum (a pass that looks violated, a fail that only the true error confirms or
nothing confirms) and that optimum is not resolved (its KKT residual above its rounding floor: the refinement stopped
at its time limit or stalled, so its duality gap bounds the objective but not b and g), the optimum is solved exactly
instead: the primal active-set method in 50-digit mpmath from the answer's refined active set (:func:`exact_optimum`);
if that does not converge the verdict is *uncertain* (listed, never counted as violated or confirmed by the true
error).

Each verdict is classified:

* ``pass``: *violated* when the true error exceeds ``T`` plus the optimum's uncertainty and the floating-point
  floor of evaluating ``D`` (:attr:`labels.Optimum.uncertainty`, :func:`labels.fp_floor`); listed (not counted)
  when uncertain or when that slack alone exceeds ``T``;
* ``fail``: *confirmed* when the true error exceeds ``T`` plus that slack, or when a failed KKT residual, recomputed
  in extended precision, exceeds ``T``; otherwise *unconfirmed*, printed with its reason, diagnoses, true errors
  and extended-precision residuals;
* ``unresolved``, ``error``, ``not convex``, ``no reference``: counted (``other`` for the last three) and listed.

A pass whose extended-precision KKT residual exceeds ``T`` (verify floors those residuals at their double-precision
rounding floor) is listed for information. Exit status 1 if any pass is violated or any fail unconfirmed.

    python benchmarks/verify_strategies.py [--examples N] [--formulations NAME ...] [--json PATH] [--max-n N]
                                           [--seed S]

500 examples per formulation is the count it is held to (about 13 minutes on 2 cores; ``--examples 40``, a minute); BLAS
is pinned to one thread (threadpoolctl) for stable numbers. ``labels``' refinement stops after
:data:`labels.REFINE_SECONDS`, so on a few hard instances (a kernel near ``11'``, identical points) how far it gets
depends on the machine; the 50-digit fallback makes the verdicts on them independent of that.
"""
from __future__ import annotations

import argparse
import contextlib
import dataclasses
import functools
import importlib.util
import json
import math
import re
import sys
import time
import warnings
import zlib
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

_HERE = Path(__file__).resolve().parent


def _load_labels():
    """``benchmarks/labels.py``, loaded as the tests load it (one module object per process)."""
    name = "svmref_bench_labels"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, _HERE / "labels.py")
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module  # dataclasses resolve their module by name
        spec.loader.exec_module(module)
    return sys.modules[name]


labels = _load_labels()
LD = labels.LD

#: The formulations measured: a built-in solver in REGISTRY and an independent dual in labels (``labels.dual_data``).
FORMULATIONS = ("l1_svm", "l2_svm", "ls_svm", "least_1norm_svm", "svr")

#: The examples per formulation of a full run.
DEFAULT_EXAMPLES = 500

#: At most this many steps of the 50-digit active-set method (:func:`mp_active_set`) from each start.
MP_ITERATIONS = 60

#: At most this many draws per instance wanted (hypothesis repeats some instances; repeats are skipped).
DRAW_FACTOR = 4

#: The largest N drawn (the strategy's own default).
DEFAULT_MAX_N = 30

#: verify's checks, in its order of failures (:data:`svmref.verify.evaluation.ORDER`).
KKT_CHECKS = ("box", "equality", "primal_feasibility", "complementarity", "stationarity", "kkt_absolute", "duality_gap")
COMPARISONS = ("objective_gap", "b_gap", "decision_gap")


def solvers_for(formulation: str) -> list[str]:
    """The built-in solvers (REGISTRY specs) of ``formulation``."""
    from svmref.solvers import REGISTRY

    return [spec for spec, f in REGISTRY.items() if f == formulation]


def draw(formulation: str, n: int, max_n: int = DEFAULT_MAX_N, seed: int = 0) -> list:
    """``n`` distinct instances of ``formulation`` from :func:`svmref.testing.strategies.instances`, deterministic:
    hypothesis seeded by ``seed`` and the formulation's name, no database, generation only. Hypothesis mutates the
    examples it has drawn, and some draws repeat an instance (same content, same name): repeats are skipped, up to
    :data:`DRAW_FACTOR` ``* n`` draws (fewer than ``n`` instances only if hypothesis runs out)."""
    from hypothesis import HealthCheck, Phase, given, settings
    from hypothesis import seed as hseed

    from svmref.testing.strategies import instances

    out: dict = {}

    @hseed(seed * 1_000_003 + zlib.crc32(formulation.encode()))
    @settings(max_examples=DRAW_FACTOR * n, database=None, deadline=None, derandomize=False, phases=[Phase.generate],
              suppress_health_check=list(HealthCheck), print_blob=False)
    @given(instances(formulation, max_n=max_n))
    def collect(case):
        if len(out) < n:
            out.setdefault(case.name, case)  # the name hashes the content: one copy of each instance

    with _no_local_constants():
        collect()
    return list(out.values())


@contextlib.contextmanager
def _no_local_constants():
    """Hypothesis (6.170 here) mixes into its draws the literal constants of the local modules loaded at the time
    (``hypothesis.internal.conjecture.providers._get_local_constants``), so the same seed drew other instances once
    verify, the solvers and the tests were imported. Its global constants only, while drawing: the instances depend on
    the seed alone. (A hypothesis without that function is left as it is.)"""
    try:
        from hypothesis.internal.conjecture import providers
        getter, empty = providers._get_local_constants, providers.Constants()
    except (ImportError, AttributeError, TypeError):
        yield
        return
    cache = getattr(providers, "CONSTANTS_CACHE", None)
    clear = getattr(getattr(cache, "cache", None), "clear", lambda: None)
    providers._get_local_constants = lambda: empty
    clear()
    try:
        yield
    finally:
        providers._get_local_constants = getter
        clear()


def labels_case(inst, formulation: str):
    """The instance as a :class:`labels.Case` that shares its kernel (``instance=``): verify and the tools see one K."""
    return labels.Case(inst.name, formulation, inst.X, inst.y, inst.X_test, inst.kernel, dict(inst.kernel_params),
                       float(inst.hyper["C"]), float(inst.hyper.get("epsilon", 0.0)), bool(inst.unique),
                       "strategies", inst)


# ------------------------------------------------------------------------------------------------ the optimum
def zero_optimum(lc):
    """The optimum when it is ``alpha* = 0`` with ``D* = 0`` (epsilon-SVR with every target within ``epsilon`` of one
    ``b``), which :func:`labels.independent_optimum` cannot report (its relative measures divide by ``D*``): ``0``
    satisfies the KKT conditions when its bias interval (:func:`labels._b_interval`) is not empty; then ``g* = 0``
    and ``b*`` is any point of that interval (``None`` otherwise)."""
    d = lc.dual
    if d is None:
        return None
    zero = np.zeros(d.s.size, dtype=LD)
    b_lo, b_hi, b = labels._b_interval(d, zero)
    if not b_lo <= b_hi:
        return None
    rows = lc.X.shape[0] + lc.X_test.shape[0]
    scale = float(np.max(np.abs(d.y))) if d.name == "svr" else 1.0
    return labels.Optimum(zero, b, b_lo, b_hi, 0.0, 0.0, 0.0, "exact (alpha* = 0 satisfies the KKT conditions)", 0.0,
                          bool(lc.unique and b_lo < b_hi), np.zeros(rows), scale if scale > 0 else 1.0)


def optimum(lc):
    """:func:`labels.independent_optimum`, or :func:`zero_optimum` where that divides by ``D* = 0``."""
    try:
        return labels.independent_optimum(lc)
    except ZeroDivisionError:
        opt = zero_optimum(lc)
        if opt is None:
            raise
        return opt


def resolved(opt) -> bool:
    """Whether the optimum holds its KKT conditions to their rounding floor (``labels``' own test, as in
    :attr:`labels.Optimum.active_set_solved`): then its b and g are known, not only its objective. Where it does not
    (the refinement stopped at :data:`labels.REFINE_SECONDS`, or stalled), its duality gap bounds the objective but
    b and g may be off by far more (on a kernel near ``11'`` they trade off at no cost in the objective)."""
    return opt.kkt <= opt.kkt_floor


def mp_active_set(lc, starts, iterations: int = MP_ITERATIONS):
    """The optimum solved exactly at :data:`labels.MP_DPS` digits by the primal active-set method in mpmath, from
    each start (an active-set ``state``: -1 / +1 at the lower / upper bound, 0 free) in turn: solve the KKT system
    of the free set (:func:`labels._mp_check`'s system, the kernel recomputed in mpmath), fix the free variable
    furthest outside its box at that bound, else free the bound variable whose multiplier has the wrong sign (the
    largest), until neither exists: then every KKT condition holds in 50 digits and the point is the optimum.
    ``(beta, b, D)`` as mpmath numbers, or None (no start converges within ``iterations``, a start repeats, the free
    set is empty or its KKT matrix is singular: the optimal alpha is then not unique, nor is this needed)."""
    import mpmath

    d = lc.dual
    m = d.s.size
    if m > labels.MP_MAX_M or lc.kernel not in ("linear", "rbf", "poly"):
        return None
    with mpmath.workdps(labels.MP_DPS):
        mp = lambda v: mpmath.mpf(float(v))  # noqa: E731
        Kmp = labels._mp_kernel(np.asarray(lc.X, dtype=float), lc.kernel, lc.params)
        Q = [[mp(d.s[t] * d.s[u]) * (Kmp[int(d.pat[t]), int(d.pat[u])] + (mp(d.shift) if t == u else 0))
              for u in range(m)] for t in range(m)]
        s, p = [mp(v) for v in d.s], [mp(v) for v in d.p]
        lo = [mp(v) if np.isfinite(v) else None for v in d.lo]
        hi = [mp(v) if np.isfinite(v) else None for v in d.hi]
        tiny = mpmath.mpf(10) ** (10 - labels.MP_DPS)
        for start in starts:
            state, seen = np.asarray(start, dtype=int).copy(), set()
            for _ in range(iterations):
                if state.tobytes() in seen:
                    break
                seen.add(state.tobytes())
                F = [t for t in range(m) if state[t] == 0]
                if not F:
                    break
                beta = [lo[t] if state[t] < 0 else hi[t] if state[t] > 0 else mpmath.mpf(0) for t in range(m)]
                B = [t for t in range(m) if state[t] != 0]
                A = mpmath.matrix(len(F) + 1, len(F) + 1)
                rhs = mpmath.matrix(len(F) + 1, 1)
                for i, t in enumerate(F):
                    for j, u in enumerate(F):
                        A[i, j] = Q[t][u]
                    A[i, len(F)] = A[len(F), i] = s[t]
                    rhs[i] = -(p[t] + mpmath.fsum(Q[t][u] * beta[u] for u in B))
                rhs[len(F)] = -mpmath.fsum(s[u] * beta[u] for u in B)
                try:
                    x = mpmath.lu_solve(A, rhs)
                except ZeroDivisionError:
                    break
                for i, t in enumerate(F):
                    beta[t] = x[i]
                b = x[len(F)]
                size = max([abs(v) for v in beta] + [mpmath.mpf(1)])
                out = {t: max(lo[t] - beta[t] if lo[t] is not None else 0, beta[t] - hi[t] if hi[t] is not None else 0)
                       for t in F}
                out = {t: v for t, v in out.items() if v > tiny * size}
                if out:
                    t = max(out, key=out.get)
                    state[t] = -1 if lo[t] is not None and beta[t] < lo[t] else 1
                    continue
                r = {t: mpmath.fsum(Q[t][u] * beta[u] for u in range(m)) + p[t] + b * s[t] for t in B}
                scale = max([abs(p[t]) for t in range(m)] + [mpmath.mpf(1)]) * size
                wrong = {t: abs(v) for t, v in r.items() if (state[t] < 0 and v < -tiny * scale)
                         or (state[t] > 0 and v > tiny * scale)}
                if not wrong:
                    D = mpmath.fsum(beta[t] * Q[t][u] * beta[u] for t in range(m) for u in range(m)) / 2 \
                        + mpmath.fsum(p[t] * beta[t] for t in range(m))
                    return beta, b, D
                state[max(wrong, key=wrong.get)] = 0
    return None


def exact_optimum(lc, opt, beta_answer):
    """An optimum known to 50 digits (:func:`mp_active_set`) where ``opt`` is not :func:`resolved`, started from the
    active set the refinement of ``labels`` reaches from the answer (:func:`labels.refine`; a start only: the
    optimum is decided by the KKT conditions in mpmath) and from that of ``opt``; None where it does not converge."""
    import mpmath

    d = lc.dual
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        state = labels.refine(d, np.asarray(beta_answer, dtype=float))[2]
    found = mp_active_set(lc, [state, labels._initial_state(d, np.asarray(opt.beta, dtype=float))])
    if found is None:
        return None
    beta_mp, b_mp, D_mp = found
    with mpmath.workdps(labels.MP_DPS):
        beta = np.array([LD(mpmath.nstr(v, 30)) for v in beta_mp], dtype=LD)
        b, D = float(b_mp), float(D_mp)
    g = (lc.exact_cross() @ d.coef(beta)).astype(float)
    return labels.Optimum(beta, b, b, b, D, 0.0, 0.0, "mpmath KKT", 0.0, bool(lc.unique), g, opt.scale,
                          time.perf_counter() - t0, 0.0, 0.0)


# ------------------------------------------------------------------------------------------------ true errors
def f_error(lc, opt, beta, b: float) -> float:
    """``max |(g + b) - (g* + b*)|`` over the training and held-out points in the unit of f, ``b*`` at its best in
    the optimal interval ``[b_lo, b_hi]`` (the answer's ``b`` as given)."""
    d = lc.dual
    g = (lc.exact_cross() @ d.coef(np.asarray(beta, dtype=LD))).astype(float)
    diff = g - opt.g
    lo, hi = min(opt.b_lo, opt.b_hi, opt.b), max(opt.b_lo, opt.b_hi, opt.b)
    if b is None or not math.isfinite(b):
        return float("nan")
    # f - f* = diff + (b - b*), b* in [lo, hi]: the shift b - b* lies in [b - hi, b - lo]
    lo_s, hi_s = b - hi, b - lo
    mid = -0.5 * (float(np.max(diff)) + float(np.min(diff)))
    shift = min(max(mid, lo_s), hi_s) if math.isfinite(lo_s) or math.isfinite(hi_s) else mid
    if not math.isfinite(shift):
        shift = mid
    return float(np.max(np.abs(diff + shift))) / opt.scale


def true_errors(lc, opt, beta, b: float) -> dict:
    """:func:`labels.answer_errors` plus ``f`` (:func:`f_error`) and ``true``, the largest of obj, f, b, feas.
    Where ``D* = 0`` (:func:`zero_optimum`) the relative objective error is not defined: ``obj`` is ``nan``."""
    err = labels.answer_errors(lc, dataclasses.replace(opt, objective=float("nan")) if opt.objective == 0 else opt,
                               beta, b)
    err["f"] = f_error(lc, opt, beta, b)
    err["true"] = max([err[k] for k in ("obj", "f", "b", "feas") if math.isfinite(err[k])] + [0.0])
    return err


# ------------------------------------------------------------------------------------------------ KKT in extended precision
def _unit(d) -> LD:
    if d.name != "svr":
        return LD(1)
    top = float(np.max(np.abs(d.y))) if d.y.size else 0.0
    return LD(top if top > 0 else 1.0)


def _nat(s, dlo, dhi, unit):
    """The natural residual of :func:`svmref.verify.kkt.natural_residual`, in extended precision."""
    z = LD(0)
    return np.minimum(np.maximum(s, z) / unit, dlo) + np.minimum(np.maximum(-s, z) / unit, dhi)


def _b_free(G, e, dlo, dhi, unit, upper) -> float:
    """``min_b max_t r_t(b)`` (verify's ``stationarity``) by bisection on ``rho``: ``r_t(b) <= rho`` bounds ``b`` from
    one side for each variable that can move more than ``rho`` towards the bound its gradient pushes it to."""
    pos, neg = e > 0, e < 0

    def feasible(rho) -> bool:
        ru = rho * unit
        ups = np.concatenate([(ru - G)[pos & (dlo > rho)], (G + ru)[neg & (dhi > rho)]])
        lows = np.concatenate([(-ru - G)[pos & (dhi > rho)], (G - ru)[neg & (dlo > rho)]])
        return (np.max(lows) if lows.size else -np.inf) <= (np.min(ups) if ups.size else np.inf)

    if feasible(LD(0)):
        return 0.0
    lo, hi = LD(0), LD(upper) * (1 + LD(1e-12)) + LD(np.finfo(float).tiny)
    while not feasible(hi):
        hi *= 2
    for _ in range(200):
        mid = (lo + hi) / 2
        if feasible(mid):
            hi = mid
        else:
            lo = mid
        if hi - lo <= LD(1e-15) * hi:
            break
    return float(hi)


def ld_residuals(lc, beta, b: float) -> dict:
    """verify's KKT residuals (:mod:`svmref.verify.kkt`: ``box_dual_residuals``, ``svr_residuals``) at ``(beta, b)``,
    recomputed in ``numpy.longdouble`` on the exact kernel of ``labels`` (same formulas, same units): the box
    relative to C, the equality to ``sum |alpha|``, primal feasibility and complementarity to ``f_scale``, the natural
    residuals in the solution's units (margin, or ``max |y|`` for epsilon-SVR; alpha in units of C), the duality gap
    to the size of its terms."""
    d = lc.dual
    beta = np.asarray(beta, dtype=LD)
    if b is None or not math.isfinite(b):
        return {}
    svr = d.name == "svr"
    C, unit, bb = LD(d.C), _unit(d), LD(b)
    e = d.s.astype(LD)
    G = d.Q @ beta + d.p.astype(LD)
    s = G + bb * e
    lo_f, hi_f = np.isfinite(d.lo), np.isfinite(d.hi)
    inf = LD(np.inf)
    dlo = np.where(lo_f, np.maximum(beta - np.where(lo_f, d.lo, 0), 0) / C, inf)
    dhi = np.where(hi_f, np.maximum(np.where(hi_f, d.hi, 0) - beta, 0) / C, inf)
    out = {}
    nat = _nat(s, dlo, dhi, unit)
    out["kkt_absolute"] = float(np.max(nat)) if nat.size else 0.0
    out["stationarity"] = _b_free(G, e, dlo, dhi, unit, out["kkt_absolute"])
    coef = d.coef(beta)
    K = d.K
    Kc = K @ coef
    y = d.y.astype(LD)
    n = K.shape[0]
    tiny = LD(np.finfo(float).tiny)
    if svr:
        f_scale = np.max(np.abs(y) + np.abs(K) @ np.abs(coef) + LD(d.eps))
    else:
        shift = np.abs(beta) / C if d.shift else np.zeros(n, dtype=LD)
        f_scale = np.max(np.abs(K) @ np.abs(coef) + shift + 1)
    f_scale = max(f_scale, tiny)
    if np.any(lo_f) or np.any(hi_f):
        viol = np.maximum(np.maximum(np.where(lo_f, d.lo, -inf) - beta, beta - np.where(hi_f, d.hi, inf)), 0) / C
        out["box"] = float(np.max(viol))
    else:
        out["box"] = float("nan")
    tot = np.sum(np.abs(beta))
    out["equality"] = float(abs(e @ beta) / tot) if tot > 0 else 0.0
    unabs = np.zeros(beta.size, dtype=LD)
    if not svr:
        unabs += np.where(~lo_f, np.maximum(s, 0), 0) + np.where(~hi_f, np.maximum(-s, 0), 0)
    out["primal_feasibility"] = float(np.max(unabs) / f_scale)
    if np.any(lo_f) or np.any(hi_f):
        comp = (np.where(lo_f, np.abs(beta - np.where(lo_f, d.lo, 0)) / C * np.maximum(s, 0), 0)
                + np.where(hi_f, np.abs(np.where(hi_f, d.hi, 0) - beta) / C * np.maximum(-s, 0), 0))
        out["complementarity"] = float(np.max(comp) / f_scale)
    else:
        out["complementarity"] = float("nan")
    f = Kc + bb
    reg = LD(0.5) * (coef @ Kc)
    D = LD(0.5) * (beta @ (d.Q @ beta)) + d.p.astype(LD) @ beta
    if svr:
        r = y - f
        xi_sum = np.sum(np.maximum(np.abs(r) - LD(d.eps), 0))
        P = reg + C * xi_sum
        mag = reg + C * xi_sum + LD(d.eps) * np.sum(np.abs(coef)) + np.sum(np.abs(y * coef))
    else:
        xi = 1 - y * f
        loss, loss_abs = {
            "l1_svm": (C * np.sum(np.maximum(xi, 0)), C * np.sum(np.abs(xi))),
            "least_1norm_svm": (C * np.sum(np.abs(xi)), C * np.sum(np.abs(xi))),
            "l2_svm": (C / 2 * np.sum(np.maximum(xi, 0) ** 2), C / 2 * np.sum(xi ** 2)),
            "ls_svm": (C / 2 * np.sum(xi ** 2), C / 2 * np.sum(xi ** 2)),
        }[d.name]
        P = reg + loss
        mag = reg + loss_abs + np.sum(np.abs(beta)) + (LD(0.5) * (beta @ (beta / C)) if d.shift else 0)
    out["duality_gap"] = float(abs(P + D) / max(abs(P), abs(D), abs(mag), tiny))
    return out


# ------------------------------------------------------------------------------------------------ one instance
_FAILED = re.compile(r"(?:^|; )(" + "|".join(KKT_CHECKS + COMPARISONS) + r") (\S+) > ")


def failed_checks(reason: str) -> list[str]:
    """The checks named as failed in a fail's ``reason`` (``"box 3.1e-01 > 1e-06: ...; stationarity ..."``)."""
    return list(dict.fromkeys(m.group(1) for m in _FAILED.finditer(reason or "")))


@dataclass
class Outcome:
    """One (instance, solver): verify's verdict, the answer's true and extended-precision errors, the class."""

    formulation: str
    solver: str
    instance: str
    description: str
    hyper: dict
    kernel: str
    kernel_params: dict
    N: int
    verdict: str
    reason: str = ""
    diagnoses: list = field(default_factory=list)
    notes: list = field(default_factory=list)
    verify: dict = field(default_factory=dict)      # objective_gap, decision_gap, b_gap, residuals
    errors: dict = field(default_factory=dict)      # true errors (obj, dec, f, b, feas, alpha, true)
    ld: dict = field(default_factory=dict)          # verify's KKT residuals in extended precision
    slack: float = float("nan")                     # the optimum's uncertainty + the fp floor
    optimum: dict = field(default_factory=dict)
    failed: list = field(default_factory=list)      # checks named in a fail's reason
    confirmed_by: list = field(default_factory=list)
    kind: str = ""                                  # the class (see :data:`KINDS`)
    uncertain: bool = False                         # the optimum does not resolve b and g (no violation counted)
    time: float = 0.0

    def line(self) -> str:
        e = self.errors
        err = ", ".join(f"{k} {e[k]:.2e}" for k in ("obj", "f", "dec", "b", "feas", "alpha")
                        if k in e and isinstance(e[k], float) and math.isfinite(e[k]))
        ld = ", ".join(f"{k} {v:.2e}" for k, v in self.ld.items() if math.isfinite(v))
        hyp = ", ".join(f"{k} = {v:.6g}" for k, v in {**self.kernel_params, **self.hyper}.items())
        return (f"{self.formulation} / {self.solver} / {self.instance} (N = {self.N}, {self.kernel}, {hyp}): "
                f"{self.verdict}\n    reason: {self.reason}\n    diagnoses: {self.diagnoses}\n"
                f"    true errors: {err} (slack {self.slack:.1e})\n    extended-precision KKT: {ld}\n"
                f"    optimum: {self.optimum}")


#: The classes of an outcome, in the table's column order.
KINDS = ("pass", "fail confirmed", "fail unconfirmed", "violated pass", "unresolved", "other")


def classify(o: Outcome, T: float) -> None:
    """Set ``o.kind`` (and ``o.confirmed_by``) from the verdict and the measured errors."""
    true = o.errors.get("true", float("nan"))
    o.confirmed_by = []
    if o.verdict == "pass":
        o.kind = "violated pass" if true > T * (1 + 1e-6) + o.slack and not o.uncertain else "pass"
    elif o.verdict == "fail":
        if math.isfinite(true) and true > T * (1 + 1e-6) + o.slack and not o.uncertain:
            o.confirmed_by.append(f"true error {true:.2e} > T")
        for k in o.failed:
            v = o.ld.get(k, float("nan"))
            if k in KKT_CHECKS and math.isfinite(v) and v > T:
                o.confirmed_by.append(f"{k} {v:.2e} > T in extended precision")
        o.kind = "fail confirmed" if o.confirmed_by else "fail unconfirmed"
    elif o.verdict == "unresolved":
        o.kind = "unresolved"
    else:
        o.kind = "other"


def _capturing(fn, box: list):
    """``fn`` with the same signature (verify reads it, and passes ``tol``), keeping each value it returns."""

    @functools.wraps(fn)
    def solver(*args, **kwargs):
        out = fn(*args, **kwargs)
        box.append(out)
        return out

    return solver


def judge(inst, formulation: str, spec: str, lc, opt, T: float) -> Outcome:
    """verify on ``inst`` with the built-in solver ``spec`` at ``T``, its answer measured against ``opt``."""
    from svmref import verify
    from svmref.verify import specs
    from svmref.verify.loader import load_spec

    box: list = []
    solver = _capturing(load_spec(spec), box)
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rec = verify.check(solver, formulation, [inst], tol=T).records[0]
    o = Outcome(formulation, spec, inst.name, inst.description, dict(inst.hyper), inst.kernel,
                dict(inst.kernel_params), int(inst.N), str(rec.verdict), rec.reason or "", list(rec.diagnoses or []),
                list(rec.notes or []), time=time.perf_counter() - t0)
    o.verify = {"objective_gap": rec.objective_gap, "decision_gap": rec.decision_gap, "b_gap": rec.b_gap,
                **{k: v for k, v in (rec.residuals or {}).items() if isinstance(v, (int, float))}}
    o.failed = failed_checks(o.reason) if o.verdict == "fail" else []
    ans = None
    if box:
        try:
            ans = specs.get(formulation).parse(box[0], inst)
        except Exception:  # noqa: BLE001 - verify said why (verdict error)
            ans = None
    if ans is None:
        o.optimum = _describe(opt, "labels.independent_optimum")
        classify(o, T)
        return o
    beta = labels._beta_of(lc, {"alpha": np.asarray(ans["alpha"], dtype=float)})
    b = ans.get("b")
    b = None if b is None else float(b)
    o.ld = ld_residuals(lc, beta, b)
    _measure(o, lc, opt, beta, b, "labels.independent_optimum", T)
    hinges = o.kind in ("violated pass", "fail unconfirmed") or (
        o.kind == "fail confirmed" and all(c.startswith("true error") for c in o.confirmed_by))
    if hinges and not resolved(opt):  # the verdict hinges on an optimum whose b and g are not known: solve it exactly
        exact = exact_optimum(lc, opt, beta)
        if exact is not None:
            _measure(o, lc, exact, beta, b, "50-digit active set (labels' optimum not resolved: kkt "
                                            f"{opt.kkt:.1e} > floor {opt.kkt_floor:.1e})", T)
        else:
            o.uncertain = True
            o.optimum["source"] += " (not resolved; the 50-digit active-set method did not converge)"
            classify(o, T)
    return o


def _describe(opt, source: str) -> dict:
    return {"source": source, "objective": opt.objective, "uncertainty": opt.uncertainty, "gap": opt.gap,
            "kkt": opt.kkt, "kkt_floor": opt.kkt_floor, "second": opt.second, "agreement": opt.agreement,
            "b": [opt.b_lo, opt.b_hi], "unique": bool(opt.unique), "time": opt.time}


def _measure(o: Outcome, lc, opt, beta, b, source: str, T: float) -> None:
    """The answer's true errors against ``opt``, and the class."""
    o.optimum = _describe(opt, source)
    o.errors = true_errors(lc, opt, beta, b)
    o.slack = opt.uncertainty + labels.fp_floor(lc.dual, beta)
    classify(o, T)


def run_formulation(formulation: str, examples: int, T: float | None = None, max_n: int = DEFAULT_MAX_N,
                    seed: int = 0, solvers=None, progress=None) -> tuple[list[Outcome], list[tuple[str, str]]]:
    """Every built-in solver of ``formulation`` through verify on ``examples`` drawn instances: the outcomes, and the
    instances without an independent optimum ``(name, why)`` (exact kernel not PSD, or the computation raised)."""
    from svmref import verify

    T = verify.DEFAULT_TOL if T is None else T
    specs_ = list(solvers or solvers_for(formulation))
    out, no_opt = [], []
    for i, inst in enumerate(draw(formulation, examples, max_n, seed)):
        t0 = time.perf_counter()
        lc = labels_case(inst, formulation)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                opt = optimum(lc)
        except Exception as exc:  # noqa: BLE001 - reported: the instance is not judged
            opt, why = None, f"the independent optimum raised {type(exc).__name__}: {exc}"
        else:
            why = "the exact kernel is not PSD"
        if opt is None:
            no_opt.append((inst.name, why))
            if progress is not None:
                progress(f"{formulation} #{i} {inst.name}: no optimum ({why})")
            continue
        for spec in specs_:
            o = judge(inst, formulation, spec, lc, opt, T)
            out.append(o)
            if progress is not None and o.kind not in ("pass", "fail confirmed"):
                progress(f"{formulation} #{i} {inst.name} {spec}: {o.verdict} -> {o.kind}")
        if progress is not None:
            progress(f"{formulation} #{i} N = {inst.N}: {time.perf_counter() - t0:.1f} s")
    return out, no_opt


def counts(outcomes: list[Outcome]) -> dict:
    c = {k: 0 for k in KINDS}
    for o in outcomes:
        c[o.kind] += 1
    return c


def bad(outcomes: list[Outcome]) -> list[Outcome]:
    """The outcomes that break the promise: violated passes and unconfirmed fails."""
    return [o for o in outcomes if o.kind in ("violated pass", "fail unconfirmed")]


def table(rows: list[tuple[str, str, int, int, dict]]) -> str:
    head = ("| formulation | solver | examples | no optimum | " + " | ".join(KINDS) + " |",
            "|" + "---|" * (4 + len(KINDS)))
    body = [f"| {f} | {s} | {n} | {no} | " + " | ".join(str(c[k]) for k in KINDS) + " |" for f, s, n, no, c in rows]
    return "\n".join(head + tuple(body))


def _json_default(x):
    if isinstance(x, (np.floating, np.integer)):
        return x.item()
    if isinstance(x, np.ndarray):
        return x.tolist()
    return str(x)


def main(argv=None) -> int:
    from threadpoolctl import threadpool_limits

    from svmref import verify

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--examples", type=int, default=DEFAULT_EXAMPLES, help="instances per formulation (500)")
    ap.add_argument("--formulations", nargs="+", default=list(FORMULATIONS), choices=FORMULATIONS)
    ap.add_argument("--max-n", type=int, default=DEFAULT_MAX_N, help="the largest N drawn (30)")
    ap.add_argument("--seed", type=int, default=0, help="hypothesis' seed (with the formulation's name)")
    ap.add_argument("--json", help="write every outcome as JSON records to this file")
    ap.add_argument("--quiet", action="store_true", help="no progress on stderr")
    args = ap.parse_args(argv)
    T = verify.DEFAULT_TOL
    t0 = time.perf_counter()
    progress = None if args.quiet else (lambda s: print(s, file=sys.stderr, flush=True))
    rows, everything, unjudged = [], [], []
    with threadpool_limits(1):
        for f in args.formulations:
            tf = time.perf_counter()
            outs, no_opt = run_formulation(f, args.examples, T, args.max_n, args.seed, progress=progress)
            everything += outs
            unjudged += [(f, name, why) for name, why in no_opt]
            for spec in solvers_for(f):
                mine = [o for o in outs if o.solver == spec]
                rows.append((f, spec, len(mine) + len(no_opt), len(no_opt), counts(mine)))
            print(f"{f}: {time.perf_counter() - tf:.0f} s", file=sys.stderr, flush=True)
    wall = time.perf_counter() - t0
    print(f"verify at T = {T:g} on svmref.testing.strategies (max_n = {args.max_n}, seed {args.seed}), "
          f"{args.examples} examples per formulation\n")
    print(table(rows))
    print(f"\nwall time {wall:.0f} s")
    print(f"\ninstances without an independent optimum (not judged): {len(unjudged)}")
    for f, name, why in unjudged:
        print(f"  {f} / {name}: {why}")
    zero = [o for o in everything if o.optimum.get("objective") == 0]
    if zero:
        print(f"\ninstances whose optimum is alpha* = 0, D* = 0 (obj error not defined; judged on f, b, feas): "
              f"{len(zero)}")
    worst = bad(everything)
    print(f"\nviolated passes and unconfirmed fails: {len(worst)}")
    for o in worst:
        print(f"  [{o.kind}] " + o.line().replace("\n", "\n  "))
    for kind in ("unresolved", "other"):
        listed = [o for o in everything if o.kind == kind]
        print(f"\n{kind}: {len(listed)}")
        for o in listed:
            print(f"  {o.formulation} / {o.solver} / {o.instance} (N = {o.N}, {o.hyper}): {o.verdict}: "
                  f"{o.reason[:300]}; true error {o.errors.get('true', float('nan')):.2e}")
    uncertain = [o for o in everything if o.verdict in ("pass", "fail") and (o.uncertain or o.slack > T)]
    print(f"\nverdicts the optimum cannot judge (its b and g not resolved, or its uncertainty + fp floor above T; "
          f"not counted): {len(uncertain)}")
    for o in uncertain:
        print(f"  {o.formulation} / {o.solver} / {o.instance}: {o.verdict}; slack {o.slack:.1e}; true error "
              f"{o.errors.get('true', float('nan')):.2e}; optimum {o.optimum}")
    exact = [o for o in everything if o.optimum.get("source", "").startswith("50-digit")]
    print(f"\nverdicts judged against the 50-digit active-set optimum (labels' optimum not resolved where the verdict "
          f"hinged on it): {len(exact)}")
    for o in exact:
        print(f"  {o.formulation} / {o.solver} / {o.instance}: {o.verdict} -> {o.kind}; true error "
              f"{o.errors.get('true', float('nan')):.2e}; {o.optimum['source']}")
    ld_above = [o for o in everything if o.verdict == "pass" and any(v > T for v in o.ld.values() if math.isfinite(v))]
    print(f"\npasses with an extended-precision KKT residual above T (verify floors them at the double rounding "
          f"floor; not counted): {len(ld_above)}")
    for o in ld_above:
        above = {k: f"{v:.1e} (verify {o.verify.get(k, float('nan')):.1e})" for k, v in o.ld.items() if v > T}
        print(f"  {o.formulation} / {o.solver} / {o.instance}: {above}")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump({"T": T, "examples": args.examples, "max_n": args.max_n, "seed": args.seed, "wall_s": wall,
                       "table": [{"formulation": f, "solver": s, "examples": n, "no_optimum": no, **c}
                                 for f, s, n, no, c in rows],
                       "no_optimum": [{"formulation": f, "instance": n, "why": w} for f, n, w in unjudged],
                       "outcomes": [asdict(o) for o in everything]}, fh, indent=1, default=_json_default)
    return 1 if worst else 0


if __name__ == "__main__":
    sys.exit(main())

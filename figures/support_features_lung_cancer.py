"""The support features machine on UCI's Lung Cancer data (003 §3.3-3.4, Figs. 4 and 5).

003 §3.3: ``n = 55`` features, ``N1 = 9`` ill and ``N2 = 18`` healthy patients, from the UCI repository.
``svmref.datasets.load_dataset("lung-cancer")`` gives exactly that problem (see its PROVENANCE.md): the
5 rows holding ``?`` are dropped (27 patients), then UCI attribute 2, constant on them (55 features
left, the stored integer codes 0-3, unscaled: 003 mentions no scaling); class 3 (9 patients, 003's
``N1``) is ``y = +1``, classes 1 and 2 (18, ``N2``) are ``y = -1``. The thesis plots

* Fig. 4: the leave-one-out (LOO) error against the selectivity ``mu`` (003 eq. (4)), on the axis
  ``artanh(mu)`` as in its Figs. 2-3; "at the minimum the algorithm selects 5 features" and "the LOO
  error is 6 % lower than the ordinary SVM's" (the SVM is ``mu = 0``);
* Fig. 5: the number of selected features against ``mu``: "as the selectivity approaches 1 the
  algorithm drops every feature".

The model is the primal 003 eq. (5), ``min sum_i ((1 - mu) a_i^2 + mu |a_i|) + C sum_j delta_j`` s.t.
``y_j (a'x_j + b) >= 1 - delta_j``, ``delta_j >= 0``, trained on its dual (003 eq. (10)) by the
generalised SMO of 003 §2.6 (:func:`svmref.solvers.support_features.support_features`) to a KKT gap of
``tol = 1e-8``; ``a`` by 003 eq. (8) (soft thresholding, so unselected features have ``a_i = 0``
exactly), ``b`` by 003 eq. (11). A feature is selected when ``a_i != 0``.

**Leave-one-out, exact.** For every ``mu`` and every patient ``j`` the machine is retrained on the 26
others (27 refits per ``mu``, no shortcut), each warm-started from the same patient's solution at the
previous ``mu`` of the grid (the box ``0 <= lam <= C`` and ``sum y lam = 0`` of (10) do not depend on
``mu``, so it is feasible). Warm starts change the path of the SMO, not its stopping rule, so every refit
is as exact as a cold one; the tests check the decision values against cold refits (to 1e-6) and the
models against the cvxpy reference of the QP form (003 eq. (13)) at every plotted ``mu`` (to 1e-6).
``x_j`` is an LOO error when ``y_j f_{-j}(x_j) <= TIE = 1e-6``: a pattern on the decision boundary counts
as an error. Exact ties do occur on this integer-coded data (at ``C = 0.3`` a refit with ``a = 1`` on one
feature and ``b = -1`` meets ``x = 1``: ``f = 0``), so the verdict must not hinge on the sign of a rounding
error; the report gives the smallest ``|f_{-j}(x_j)|`` and the number of ties (none at the chosen ``C``,
where the smallest ``|f|`` is 5.6e-4).

**The choice of C.** 003 does not give ``C`` (nor any scaling: the features are the stored codes 0-3).
As in ``support-features-selectivity``, ``C`` is chosen the way one tunes a plain SVM, before looking at
any ``mu > 0``: the value in :data:`CS` (half-decades 0.01 ... 100) with the smallest LOO error at
``mu = 0``, ties to the smaller ``C`` (the stronger regularisation). The SVM's LOO errors are 9, 8, 7, 8,
7, 7, 7, 7 (of 27) for ``C = 0.01, 0.03, 0.1, 0.3, 1, 3, 10, 100``: a **five-way tie** at 7/27
(``C = 0.1, 1, 3, 10, 100``), broken to the smallest, ``C = 0.1``. The tie decides the outcome: at ``C = 0.1``
some ``mu > 0`` beats the SVM (5/27), at each of the other four tied ``C`` none does (the best ``mu > 0`` gives
8/27, worse than the SVM). The report and the third panel give every ``C`` of the grid, the tied ones marked. Choosing
``C`` and then ``mu`` by LOO on the same 27 patients is optimistic, as is the thesis' choice of ``mu``.

**Measured** (``svmref figure support-features-lung-cancer --print``; 81 values ``artanh(mu) = 0, 0.05,
..., 4``; the first minimum on the grid is marked):

==============================  ======================  ==================================================
                                003 (§3.4, Figs. 4-5)   measured, C = 0.1
==============================  ======================  ==================================================
SVM (mu = 0) LOO error          not printed             7/27 = 0.259
minimum LOO error               "6 % below the SVM's"   5/27 = 0.185 at mu = 0.245 and 0.291 (artanh 0.25,
                                                        0.30): 0.074 below the SVM (2 of 27), -29 % relative
features at the minimum         5                       a range: 18 at both grid points of the minimum
                                                        (UCI attributes 9 11 13 14 15 20 21 24 34 38 40
                                                        42 43 46 53 54 55 57); on a 10x finer grid the
                                                        minimum holds for artanh(mu) = 0.25-0.315 with
                                                        15-18 features (counts 15, 17, 18)
5 features                      at the minimum          at mu = 0.462 (attributes 9 20 21 24 38), where the
                                                        LOO error is 11/27 = 0.407, worse than the SVM
mu -> 1                         every feature dropped   0 features from mu = 0.905 (artanh 1.5) on
==============================  ======================  ==================================================

**The minimum is a plateau.** The LOO error moves in steps of 1/27 and is minimal on an interval of ``mu``, not
at a point; the feature count changes along it, so the report gives the range over the plateau (on the grid and
on a grid :data:`REFINE` times finer around it, :func:`refine_plateau`), not one count.

**Where it differs.** (1) The feature count: 15-18 on the minimum's plateau, not 5. (2) The size of the gain: with
27 patients the LOO error moves in steps of 1/27 = 3.7 points, so "6 %" is no attainable absolute
difference; read as relative it would be one error fewer out of about 17, while here it is two fewer
out of 7 (-29 %). (3) The dependence on ``C``, which 003 does not discuss: for ``C = 1, 3, 10, 100``
(the same SVM LOO error, 7/27) no ``mu > 0`` of the grid beats the SVM, and these paths keep 12-13
features at ``artanh(mu) = 4``: the limit ``mu -> 1`` of (5) is the 1-norm SVM ``min ||a||_1 + C sum delta``,
whose solution is ``a = 0`` only for small ``C``, so Fig. 5's "every feature dropped" holds for small ``C``
only (here ``C <= 0.1``). At ``C = 0.3`` (not chosen: its SVM LOO error is 8/27) the minimum is also
5/27 and is reached, among other places, with exactly 5 features (UCI attributes 20, 21, 38, 54, 57
at ``artanh(mu) = 1.5``-1.7), which would match 003's count; we report it as an observation, not as
the result, since ``C`` was fixed before ``mu`` was looked at. These numbers are what
:meth:`LungCancerResult.report` prints; ``tests/test_lung_cancer.py`` (slow) recomputes the main ones.
"""
from __future__ import annotations

import warnings
from dataclasses import dataclass, field

import numpy as np

from ._common import format_table, new_figure

__all__ = ["DEFAULT_SEED", "CS", "TOL", "THESIS", "selectivity_axis", "loo_path", "loo_errors", "loo_counts", "TIE",
           "LungCancerResult",
           "refine_plateau", "compute", "plot", "figure", "to_json"]

#: No randomness is involved (fixed data, deterministic solver); the seed is recorded for the convention.
DEFAULT_SEED = 0
#: grid of C for the LOO choice at mu = 0: half-decades (support-features-selectivity uses decades; the
#: outcome here depends on C, so the grid is finer, and the third panel shows every C of it)
CS = (0.01, 0.03, 0.1, 0.3, 1.0, 3.0, 10.0, 100.0)
#: KKT-gap tolerance of every solve (full-data models and LOO refits)
TOL = 1e-8
#: ``|f_{-j}(x_j)| <= TIE`` is a tie (x_j on the decision boundary), counted as an LOO error; far above the
#: solver's accuracy on f (about 1e-7 at TOL), far below every margin that is not a tie (exact ties occur:
#: integer data, e.g. C = 0.3, a = 1 on one feature, b = -1, x = 1)
TIE = 1e-6
#: the mu grid: artanh(mu) = 0, 0.05, ..., ARTANH_MAX (mu up to tanh(4) = 0.9993)
ARTANH_MAX = 4.0
N_MUS = 81
N_MUS_FAST = 9
#: the LOO plateau at the chosen C is recomputed on a grid REFINE times finer in artanh(mu), between the
#: coarse neighbours of its first and last point (skipped when that would exceed REFINE_MAX values of mu)
REFINE = 10
REFINE_MAX = 201
#: 003 §3.3-3.4 as printed: n, N1, N2, features at the LOO minimum, the LOO reduction against the SVM
THESIS = {"n": 55, "N1": 9, "N2": 18, "loo_min_selected": 5, "loo_reduction": 0.06}


def selectivity_axis(mus) -> np.ndarray:
    """The thesis' horizontal axis, ``artanh(mu)`` (003 §3.2, "arcth(mu)")."""
    return np.arctanh(np.asarray(mus, dtype=float))


def _check_mus(mus) -> np.ndarray:
    mus = np.atleast_1d(np.asarray(mus, dtype=float))
    if mus.ndim != 1 or mus.size == 0 or not np.all(np.isfinite(mus)) or np.any(mus < 0) or np.any(mus >= 1):
        raise ValueError(f"mus must be a non-empty 1-D sequence of selectivities in [0, 1); got {mus!r}")
    return mus


def loo_path(X, y, C, mus, *, tol: float = TOL):
    """Full-data models and exact leave-one-out along a grid of ``mus`` (003 §3: LOO chooses ``mu``).

    For each ``mu``: the model on all patterns (warm-started from the previous ``mu``) and, for each
    pattern ``j``, the model on the others, warm-started from pattern ``j``'s model at the previous
    ``mu`` (cold at the first), solved to KKT gap ``tol``. Returns ``(models, margins, loo_models)``:
    ``models[k]`` the full model at ``mus[k]``, ``margins[k, j] = y_j f_{-j}(x_j)`` (``<= TIE`` is an LOO
    error, see :func:`loo_errors`), ``loo_models[k][j]`` the refit without ``j``. Raises ``RuntimeError`` if a solve does not
    reach ``tol`` (a path point is never reported from an unconverged model).
    """
    from svmref.solvers._result import kernel_expansion
    from svmref.solvers.support_features import support_features

    mus = _check_mus(mus)
    X = np.asarray(X, dtype=float)
    y = np.asarray(y, dtype=float)
    N = X.shape[0]
    masks = [np.arange(N) != j for j in range(N)]
    models, loo_models = [], []
    margins = np.empty((mus.size, N))
    lam_full, lam_loo = None, [None] * N

    def solve(Xs, ys, mu, lam0):
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # ConvergenceWarning -> error: never plot an unconverged model
            try:
                r = support_features(Xs, ys, C, float(mu), tol=tol, lam0=lam0)
            except Warning as exc:
                raise RuntimeError(f"support_features did not converge at C={C:g}, mu={mu:.6g}: {exc}") from None
        if not r.converged:
            raise RuntimeError(f"support_features: status {r.status!r} at C={C:g}, mu={mu:.6g}")
        return r

    for k, mu in enumerate(mus):
        r = solve(X, y, mu, lam_full)
        lam_full = r.lam
        models.append(r)
        row = []
        for j, keep in enumerate(masks):
            rj = solve(X[keep], y[keep], mu, lam_loo[j])
            lam_loo[j] = rj.lam
            margins[k, j] = y[j] * float(kernel_expansion(X[j], rj.a, rj.b)[0])  # f(x) = a'x + b (003)
            row.append(rj)
        loo_models.append(row)
    return models, margins, loo_models


def loo_errors(margins) -> np.ndarray:
    """LOO error rate per row of ``margins``: ``y_j f_{-j}(x_j) <= TIE`` is an error (a tie included)."""
    return np.mean(np.asarray(margins) <= TIE, axis=-1)


def refine_plateau(X, y, C, mus, loo_error, *, tol: float = TOL, factor: int = REFINE) -> dict:
    """The LOO path at ``C`` on a grid ``factor`` times finer in ``artanh(mu)``, from the coarse grid point before
    the first minimum of ``loo_error`` to the one after its last (the plateau with its edges).

    Returns ``{"artanh", "loo_error", "n_selected"}`` (arrays on the fine grid), or ``{"skipped": why}`` when the
    fine grid would have more than :data:`REFINE_MAX` values of ``mu``.
    """
    t = selectivity_axis(_check_mus(mus))
    idx = np.flatnonzero(np.asarray(loo_error) == np.min(loo_error))
    lo, hi = t[max(idx[0] - 1, 0)], t[min(idx[-1] + 1, t.size - 1)]
    step = float(np.min(np.diff(t))) / factor if t.size > 1 else 0.0
    count = int(round((hi - lo) / step)) + 1 if step > 0 else 1
    if count > REFINE_MAX:
        return {"skipped": f"the plateau spans artanh(mu) {lo:g}-{hi:g}: {count} fine values > {REFINE_MAX}"}
    art = np.round(lo + step * np.arange(count), 10)
    models, margins, _ = loo_path(X, y, C, np.tanh(art), tol=tol)
    return {"artanh": art, "loo_error": loo_errors(margins), "n_selected": np.array([m.selected.size for m in models])}


def _plateau(loo, nsel) -> dict:
    """Where ``loo`` is minimal: the indices, and the (min, max) and distinct values of ``nsel`` there."""
    loo, nsel = np.asarray(loo), np.asarray(nsel)
    idx = np.flatnonzero(loo == loo.min())
    return {"index": idx, "features": (int(nsel[idx].min()), int(nsel[idx].max())),
            "distinct": sorted({int(v) for v in nsel[idx]})}


@dataclass(frozen=True)
class LungCancerResult:
    """The curves drawn, per ``mu``, at the chosen ``C``, and the LOO paths for every ``C`` in :data:`CS`."""

    seed: int
    C: float
    C_loo: dict                  # C -> LOO error at mu = 0 (how C was chosen)
    mus: np.ndarray
    loo_error: np.ndarray        # LOO error rate per mu at C
    n_selected: np.ndarray       # features with a_i != 0 in the full-data model
    selected: list               # UCI attribute numbers of the selected features, per mu
    margins: np.ndarray          # (n_mus, N): y_j f_{-j}(x_j)
    loo_by_C: dict               # C -> LOO error per mu (every C in CS)
    n_selected_by_C: dict        # C -> #features per mu
    b_midpoint: int              # LOO refits whose b fell back to the KKT midpoint (no free lam)
    n_refits: int
    N: int
    n: int
    info: dict = field(default_factory=dict)
    refined: dict = field(default_factory=dict)   # refine_plateau at C ({} when not computed)

    def tied_C(self) -> list:
        """The C of the grid whose plain SVM (mu = 0) has the smallest LOO error: the tie the choice breaks."""
        best = min(self.C_loo.values())
        return sorted(c for c, e in self.C_loo.items() if e == best)

    def beats_svm(self, C) -> bool:
        """Whether some ``mu > 0`` of the grid has a lower LOO error than ``mu = 0`` at ``C``."""
        e = self.loo_by_C[C]
        return bool(np.any(e[1:] < e[0]))

    def plateau(self, C=None) -> dict:
        """The LOO minimum at ``C`` (default the chosen one) on the grid: indices, feature range, distinct counts."""
        if C is None or C == self.C:
            return _plateau(self.loo_error, self.n_selected)
        return _plateau(self.loo_by_C[C], self.n_selected_by_C[C])

    def refined_plateau(self) -> dict | None:
        """The plateau on the refined grid (:func:`refine_plateau`), with its ``artanh`` values; None if skipped."""
        if "artanh" not in self.refined:
            return None
        p = _plateau(self.refined["loo_error"], self.refined["n_selected"])
        p["artanh"] = self.refined["artanh"][p["index"]]
        p["loo_error"] = float(self.refined["loo_error"].min())
        return p

    def plateau_text(self) -> str:
        """The LOO minimum at C as a range: where in artanh(mu) it holds and how many features it keeps there."""
        t, p, N = selectivity_axis(self.mus), self.plateau(), self.N
        e = float(self.loo_error[p["index"][0]])
        out = (f"minimum LOO {round(e * N)}/{N} at {p['index'].size} grid value(s) artanh(mu) = "
               f"{', '.join(f'{t[i]:g}' for i in p['index'])}: {p['features'][0]}-{p['features'][1]} features")
        r = self.refined_plateau()
        if r is not None:
            step = float(np.diff(self.refined["artanh"][:2])[0]) if self.refined["artanh"].size > 1 else 0.0
            lower = " (LOWER than on the coarse grid)" if r["loo_error"] < e else ""
            out += (f"; on a {REFINE}x finer grid (step {step:g}) minimum {round(r['loo_error'] * N)}/{N}{lower} at "
                    f"{r['index'].size} values, artanh(mu) {r['artanh'].min():g}-{r['artanh'].max():g}: "
                    f"{r['features'][0]}-{r['features'][1]} features (counts {', '.join(map(str, r['distinct']))})")
        elif "skipped" in self.refined:
            out += f"; not refined: {self.refined['skipped']}"
        return out

    def tie_text(self) -> str:
        """Which C tie at mu = 0, how the tie is broken, and whether any mu > 0 beats the SVM at each."""
        tied, N = self.tied_C(), self.N
        per = "; ".join(f"C = {c:g}: " + (f"yes, down to {round(self.loo_by_C[c].min() * N)}/{N}" if self.beats_svm(c)
                                          else f"no (best mu > 0: {round(self.loo_by_C[c][1:].min() * N)}/{N})")
                        for c in tied)
        return (f"{len(tied)}-way tie at mu = 0 ({round(self.C_loo[tied[0]] * N)}/{N}): C = "
                f"{', '.join(f'{c:g}' for c in tied)}; broken to the smaller C (the stronger regularisation) -> "
                f"C = {tied[0]:g}. Does some mu > 0 beat the SVM? {per}")

    def to_json(self) -> dict:
        return _to_json(self)

    @property
    def min_abs_margin(self) -> float:
        """Smallest ``|f_{-j}(x_j)|`` over all LOO refits at ``C``: how far every verdict is from the tie."""
        return float(np.min(np.abs(self.margins)))

    @property
    def n_ties(self) -> np.ndarray:
        """Per ``mu``: LOO refits with ``|f_{-j}(x_j)| <= TIE`` (counted as errors)."""
        return np.sum(np.abs(self.margins) <= TIE, axis=1)

    def minimum(self) -> int:
        """Index of the first (smallest ``mu``) minimum of the LOO error."""
        return int(np.argmin(self.loo_error))

    def report(self) -> str:
        t = selectivity_axis(self.mus)
        rows = [[f"{m:.4f}", f"{a:.2f}", f"{int(round(e * self.N))}/{self.N} = {e:.3f}", int(s),
                 " ".join(str(v) for v in sel) if len(sel) <= 12 else f"({len(sel)})"]
                for m, a, e, s, sel in zip(self.mus, t, self.loo_error, self.n_selected, self.selected)]
        k = self.minimum()
        e0, ek = float(self.loo_error[0]), float(self.loo_error[k])
        at_min = np.flatnonzero(self.loo_error == ek)
        by_c = [[f"{c:g}", f"{self.C_loo[c]:.3f}", f"{np.min(e):.3f}", f"{self.mus[int(np.argmin(e))]:.3f}",
                 "{}-{}".format(*self.plateau(c)["features"]), "yes" if self.beats_svm(c) else "no",
                 int(self.n_selected_by_C[c][-1])] for c, e in self.loo_by_C.items()]
        summary = [
            ["SVM (mu = 0) LOO error", "not printed", f"{e0:.3f} ({int(round(e0 * self.N))}/{self.N})"],
            ["minimum LOO error", f"{THESIS['loo_reduction']:.0%} below the SVM",
             f"{ek:.3f} ({int(round(ek * self.N))}/{self.N}) at mu = {self.mus[k]:.4f}: {e0 - ek:.3f} below "
             f"({(1 - ek / e0) if e0 > 0 else 0:.0%} relative)"],
            ["features at the minimum", str(THESIS["loo_min_selected"]),
             "{}-{} over the plateau (first point: {}, UCI attributes {})".format(
                 *self.plateau()["features"], int(self.n_selected[k]), " ".join(str(v) for v in self.selected[k]))],
            ["minimum holds for mu in", "", ", ".join(f"{self.mus[i]:.4f} ({int(self.n_selected[i])} feat.)"
                                                     for i in at_min)],
            ["features at the largest mu", "0 (as mu -> 1)", f"{int(self.n_selected[-1])} at mu = {self.mus[-1]:.4f}"],
        ]
        return "\n".join([
            f"support-features-lung-cancer (003 Figs. 4, 5): UCI Lung Cancer, N = {self.N} "
            f"(class 3 = +1: {self.info.get('N1')}, classes 1, 2 = -1: {self.info.get('N2')}), n = {self.n} features, "
            f"solver tol {self.info.get('tol'):g}",
            "C chosen by the LOO error of the plain SVM (mu = 0), ties to the smaller C: "
            + ", ".join(f"C={c:g}: {e:.3f}" for c, e in self.C_loo.items()) + f" -> C = {self.C:g}",
            self.tie_text(),
            f"at C = {self.C:g}: {self.plateau_text()}",
            f"exact LOO: {self.n_refits} refits at C = {self.C:g} (27 per mu, warm-started along mu); smallest "
            f"|f_-j(x_j)| = {self.min_abs_margin:.3g}; ties |f| <= {TIE:g} (errors): {int(self.n_ties.sum())}; "
            f"refits with b from the KKT midpoint (no free lam): {self.b_midpoint}",
            "",
            format_table(["mu", "artanh(mu)", "LOO error", "#features", "UCI attributes selected"], rows),
            "",
            format_table(["", "003", "measured"], summary),
            "",
            "LOO path for every C of the grid:",
            format_table(["C", "LOO at mu=0", "min LOO", "first at mu", "#feat. over its minimum", "mu > 0 beats SVM",
                          "#feat. at largest mu"], by_c),
        ])


def compute(seed: int = DEFAULT_SEED, *, mus=None, C: float | None = None, tol: float = TOL,
            fast: bool = False) -> LungCancerResult:
    """LOO error and selected features along the ``mu`` grid on the prepared Lung Cancer data (27 x 55).

    ``C=None`` chooses ``C`` by the LOO error at ``mu = 0`` over :data:`CS` (ties: the smaller ``C``).
    ``mus`` defaults to ``tanh`` of 81 points ``0, 0.05, ..., 4`` (``fast``: 9 points ``0, 0.5, ..., 4``);
    it must start at ``mu = 0`` (the SVM reference line). ``seed`` is recorded only: nothing is random.
    """
    from svmref.datasets import load_dataset, lung_cancer_attributes

    if isinstance(seed, bool) or int(seed) != seed:
        raise ValueError(f"seed must be an integer; got {seed!r}")
    if mus is None:
        mus = np.tanh(np.linspace(0.0, ARTANH_MAX, N_MUS_FAST if fast else N_MUS))
    mus = _check_mus(mus)
    if mus[0] != 0.0:
        raise ValueError(f"mus must start at 0 (the plain SVM is the reference line); got mus[0] = {mus[0]!r}")
    X, y = load_dataset("lung-cancer")
    attrs = lung_cancer_attributes()
    loo_by_C, nsel_by_C, paths = {}, {}, {}
    for c in CS:
        models, margins, loo_models = loo_path(X, y, float(c), mus, tol=tol)
        paths[float(c)] = (models, margins, loo_models)
        loo_by_C[float(c)] = loo_errors(margins)
        nsel_by_C[float(c)] = np.array([m.selected.size for m in models])
    C_loo = {c: float(e[0]) for c, e in loo_by_C.items()}
    if C is None:
        C = min(C_loo, key=lambda c: (C_loo[c], c))
    C = float(C)
    if C not in paths:
        paths[C] = loo_path(X, y, C, mus, tol=tol)
    models, margins, loo_models = paths[C]
    b_mid = sum(r.info.get("b_rule") in ("midpoint", "interval_end") for row in loo_models for r in row)
    refined = refine_plateau(X, y, C, mus, loo_errors(margins), tol=tol)
    return LungCancerResult(
        seed=int(seed), C=C, C_loo=C_loo, mus=mus, loo_error=loo_errors(margins),
        n_selected=np.array([m.selected.size for m in models]), selected=[attrs[m.selected] for m in models],
        margins=margins, loo_by_C=loo_by_C, n_selected_by_C=nsel_by_C, b_midpoint=int(b_mid),
        n_refits=int(margins.size), N=X.shape[0], n=X.shape[1],
        info={"tol": tol, "N1": int(np.sum(y > 0)), "N2": int(np.sum(y < 0)), "models": models}, refined=refined)


def _to_json(r: LungCancerResult) -> dict:
    """The tie at mu = 0, every C's outcome, and the LOO minimum at C as a plateau with its feature range."""
    N, t = r.N, np.round(selectivity_axis(r.mus), 10)

    def per_c(c):
        e, p = r.loo_by_C[c], r.plateau(c)
        return {"C": c, "svm_loo_errors": round(e[0] * N), "min_loo_errors": round(e.min() * N),
                "best_loo_errors_mu_gt_0": round(e[1:].min() * N) if e.size > 1 else None,
                "mu_gt_0_beats_svm": r.beats_svm(c), "plateau_artanh": [float(t[i]) for i in p["index"]],
                "plateau_features": list(p["features"]), "features_at_largest_mu": int(r.n_selected_by_C[c][-1])}

    ref = r.refined_plateau()
    p = r.plateau()
    return {
        "figure": "support-features-lung-cancer", "paper": "003 Figs. 4, 5", "N": N, "n": r.n, "Cs": list(r.loo_by_C),
        "artanh_mu": [float(v) for v in t], "thesis": dict(THESIS),
        "tie": {"tied_C": r.tied_C(), "svm_loo_errors": round(r.C_loo[r.tied_C()[0]] * N),
                "rule": "the smallest LOO error of the plain SVM (mu = 0); ties to the smaller C", "chosen_C": r.C},
        "by_C": [per_c(c) for c in r.loo_by_C],
        "chosen": {"C": r.C, "svm_loo_errors": round(r.loo_error[0] * N), "min_loo_errors": round(r.loo_error.min() * N),
                   "plateau_artanh": [float(t[i]) for i in p["index"]], "plateau_features": list(p["features"]),
                   "first_minimum_attributes": [int(v) for v in r.selected[r.minimum()]]},
        "refined": ({"step": float(np.diff(r.refined["artanh"][:2])[0]) if r.refined["artanh"].size > 1 else 0.0,
                     "min_loo_errors": round(ref["loo_error"] * N),
                     "plateau_artanh": [float(v) for v in ref["artanh"]], "plateau_features": list(ref["features"]),
                     "distinct_feature_counts": ref["distinct"]} if ref is not None
                    else {"skipped": r.refined.get("skipped", "not computed")}),
    }


def to_json(result: LungCancerResult) -> dict:
    """``result.to_json()``: what ``svmref figure support-features-lung-cancer --json FILE`` writes."""
    return result.to_json()


def _shade_plateau(ax, result: LungCancerResult):
    """Shade the LOO plateau at C in artanh(mu): the refined one when computed, else the grid's."""
    t, ref = selectivity_axis(result.mus), result.refined_plateau()
    lo, hi = (ref["artanh"].min(), ref["artanh"].max()) if ref is not None else \
        (t[result.plateau()["index"]].min(), t[result.plateau()["index"]].max())
    ax.axvspan(lo - 0.01, hi + 0.01, color="tab:red", alpha=0.12, lw=0, label=f"LOO minimum: artanh(mu) {lo:g}-{hi:g}")


def _loo_panel(ax, result: LungCancerResult):
    t, k, e, N = selectivity_axis(result.mus), result.minimum(), result.loo_error, result.N
    ax.plot(t, e, "o-", color="tab:blue", ms=4, label=f"support features machine, C = {result.C:g}")
    ax.axhline(e[0], color="0.5", ls=":", lw=1.2, label=f"SVM (mu = 0): {e[0]:.3f} ({round(e[0] * N)}/{N})")
    ref = result.refined_plateau()
    if ref is not None:
        ax.plot(result.refined["artanh"], result.refined["loo_error"], ".", color="tab:orange", ms=3,
                label=f"{REFINE}x finer grid around the minimum")
    g = result.plateau()
    label = (f"minimum on the grid {e[k]:.3f} ({round(e[k] * N)}/{N}) at {g['index'].size} value(s) of mu:\n"
             f"{g['features'][0]}-{g['features'][1]} features there")
    if ref is not None:
        label += (f"\n{REFINE}x finer grid: minimum {round(ref['loo_error'] * N)}/{N} on artanh(mu) "
                  f"{ref['artanh'].min():g}-{ref['artanh'].max():g},\n{ref['features'][0]}-{ref['features'][1]} features there")
    ax.plot(t[k], e[k], "*", color="tab:red", ms=15, label=label)
    _shade_plateau(ax, result)
    ax.set_xlabel("artanh(mu)")
    ax.set_ylabel(f"leave-one-out error rate (N = {N})")
    ax.set_title("LOO error vs selectivity (003 Fig. 4)", fontsize=10)
    ax.legend(fontsize=7, loc="lower right")


def _features_panel(ax, result: LungCancerResult):
    t, ref = selectivity_axis(result.mus), result.refined_plateau()
    ax.plot(t, result.n_selected, "o-", color="tab:green", ms=4, label=f"selected features, C = {result.C:g}")
    if ref is not None:
        ax.plot(ref["artanh"], np.asarray(result.refined["n_selected"])[ref["index"]], ".", color="tab:orange", ms=4,
                label="on the LOO plateau (finer grid): {}-{}".format(*ref["features"]))
    idx = result.plateau()["index"]
    ax.plot(t[idx], result.n_selected[idx], "*", color="tab:red", ms=13,
            label="on the LOO plateau (grid): {}-{}".format(*result.plateau()["features"]))
    _shade_plateau(ax, result)
    ax.set_xlabel("artanh(mu)")
    ax.set_ylabel(f"number of features (of {result.n})")
    ax.set_title("selected features vs selectivity (003 Fig. 5)", fontsize=10)
    ax.legend(fontsize=8)


def _by_c_panel(ax, result: LungCancerResult):
    t, tied, N = selectivity_axis(result.mus), result.tied_C(), result.N
    for c, err in result.loo_by_C.items():
        tie = (f"tied at mu = 0; mu > 0 beats it: {'yes' if result.beats_svm(c) else 'no'}" if c in tied
               else f"mu = 0: {round(err[0] * N)}/{N}")
        ax.plot(t, err, marker="o" if c == result.C else ".", ms=4 if c == result.C else 3,
                lw=2.0 if c == result.C else 1.0, ls="-" if c in tied else ":",
                label=f"C = {c:g}: {tie}; {int(result.n_selected_by_C[c][-1])} feat. at artanh(mu) = {t[-1]:g}")
    ax.set_xlabel("artanh(mu)")
    ax.set_ylabel("leave-one-out error rate")
    ax.set_title(f"LOO error for every C: {len(tied)}-way tie at mu = 0 "
                 f"({round(result.C_loo[tied[0]] * N)}/{N}: C = {', '.join(f'{c:g}' for c in tied)}),\n"
                 f"broken to the smaller C = {tied[0]:g} (solid lines: the tied C)", fontsize=9)
    ax.legend(fontsize=7, ncol=1, loc="upper center", bbox_to_anchor=(0.5, -0.14), frameon=False)


def loo_counts(result: LungCancerResult) -> np.ndarray:
    """The LOO errors (counts of the N patients) over (C, mu): one row per C of :data:`CS`, one column per mu."""
    return np.array([np.round(np.asarray(result.loo_by_C[c]) * result.N) for c in result.loo_by_C], dtype=int)


def _heatmap_panel(ax, result: LungCancerResult):
    """LOO errors over (C, mu) as a heat map: the tied C at mu = 0 boxed, the chosen C's plateau underlined, each
    row's minimum dotted, and 003's statements beside it (003 Figs. 4, 5; §4.2's 5 features, 6% below the SVM)."""
    t, Z, Cs, N = selectivity_axis(result.mus), loo_counts(result), list(result.loo_by_C), result.N
    half = (t[1] - t[0]) / 2 if t.size > 1 else 0.5
    im = ax.imshow(Z, aspect="auto", origin="lower", cmap="viridis", interpolation="nearest",
                   extent=(t[0] - half, t[-1] + half, -0.5, len(Cs) - 0.5))
    ax.figure.colorbar(im, ax=ax, label=f"leave-one-out errors (of N = {N})")
    ax.set_yticks(range(len(Cs)), [f"{c:g}" for c in Cs])
    tied = result.tied_C()
    rows = [Cs.index(c) for c in tied]
    ax.plot([t[0]] * len(rows), rows, "s", ms=9, mfc="none", mec="white", mew=1.6,
            label=f"tied at mu = 0 ({Z[rows[0], 0]}/{N}): C = " + ", ".join(f"{c:g}" for c in tied))
    for i, row in enumerate(Z):
        on = np.flatnonzero(row == row.min())
        ax.plot(t[on], [i] * on.size, ".", color="tab:red", ms=4, label="each C's minimum" if i == 0 else None)
    k = Cs.index(result.C)
    idx = result.plateau()["index"]
    ax.plot([t[idx].min() - half, t[idx].max() + half], [k - 0.42] * 2, "-", color="tab:red", lw=3,
            label="plateau at the chosen C = {:g}: {}-{} features".format(result.C, *result.plateau()["features"]))
    ax.set_xlabel("artanh(mu)")
    ax.set_ylabel("C")
    ax.set_title(f"LOO errors over (C, mu)\n003: minimum {THESIS['loo_reduction']:.0%} below the SVM, "
                 f"{THESIS['loo_min_selected']} features there", fontsize=10)
    ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.12), frameon=False)


def plot(result: LungCancerResult):
    """Four panels: against ``artanh(mu)``, LOO error (003 Fig. 4) and #features (Fig. 5), each with the LOO plateau
    shaded; the LOO error for every C with the tied C at mu = 0 marked; and the LOO errors over (C, mu) as a heat
    map (:func:`_heatmap_panel`)."""
    fig, axes = new_figure(2, 2, width=15.0, height=12.0)
    _loo_panel(axes[0, 0], result)
    _features_panel(axes[0, 1], result)
    _by_c_panel(axes[1, 0], result)
    _heatmap_panel(axes[1, 1], result)
    fig.suptitle(f"Support features machine on UCI Lung Cancer ({result.N} patients: class 3 vs 1, 2; "
                 f"n = {result.n}), C = {result.C:g} (the smallest of the C tied at the SVM's best LOO error); "
                 f"exact LOO, tol {result.info['tol']:g}", fontsize=11)
    return fig


def figure(seed: int = DEFAULT_SEED, *, fast: bool = False, **params):
    """``plot(compute(seed, fast=fast, **params))``."""
    return plot(compute(seed, fast=fast, **params))

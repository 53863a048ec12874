"""Outlier robustness of the Least 1-Norm SVM against the LS-SVM (000, Fig. 1 and §4), over many draws.

What the paper draws (000 §4, "to show robustness"): 20 patterns per class in the plane, the
positive class drawn from N((0, 0), I) and the negative class from N((5, 2), I); a linear kernel
("no specific kernel (just the inner product)"), ``C = 1``. Four panels show the contours
``W . Phi(X) + b = -1, 0, 1``:

* (a) LS-SVM and (b) Least 1-Norm SVM on the original, linearly separable sample;
* (c) LS-SVM and (d) Least 1-Norm SVM after "switching the class labels of two points", one of
  each class, so that the classes are no longer separable.

The claim: "the final LS-SVM hyperplane has remarkably changed its orientation because of the
outliers' influence, whereas the Least 1-Norm one changes quite less because their influence is
limited" (000 §4), which follows from the KKT conditions: for the LS-SVM ``alpha_i = C xi_i``
(000 eq. (7)), unbounded, while the Least 1-Norm dual keeps ``|alpha_i| <= C`` (000 eq. (5)).
The hyperplane's orientation is the angle of ``W = sum_i alpha_i y_i X_i`` (000, the dual constraint
below eq. (6)), ``atan2(W_2, W_1)`` in degrees; the *turn* of a model is the change of that angle
caused by the two switched labels.

**The draws.** The paper does not say which two points it switched, and the answer depends on it
(below), so the figure shows the claim over ``n_draws`` random draws (101 by default, 11 with
``fast=True``, the tests' setting) rather than on one instance. Draw ``k`` uses the seed
``s = seed + k``: one generator ``numpy.random.default_rng(s)`` draws the 40 patterns (:func:`make_data`)
and then the two switched patterns, one of each class, each uniformly among the 20 of its class
(:func:`draw_flips`). Each switched point is classed by where it lies for the *clean* Least 1-Norm
model: *beyond* its margin when ``y_i f(x_i) > 1 + MARGIN_TOL``, else *inside* (on the margin's edge,
inside the band or on the wrong side); a draw falls in one of :data:`GROUPS` by how many of its two
points lie inside. The claim's measured frequency is the share of draws in which
``|turn(LS-SVM)| > |turn(Least 1-Norm)|``, reported overall and per group.

**The drawn instance** (panels (a)-(d)) is chosen by a stated rule, never the extreme one: the draw
whose LS-SVM ``|turn|`` is the median of the draws (for an even number of draws the lower median;
ties go to the earlier draw), :func:`median_draw`. Panels (e) and (f) show the distribution over all
draws: the empirical CDF of ``|turn|`` per model, and each draw's pair of turns, by group.

**Why a flip beyond the margin does not move the Least 1-Norm SVM at all.** A pattern with
``y_i f(x_i) > 1`` has ``alpha_i = -C`` (000 eq. (6)). After its label is switched,
``y_i' = -y_i`` and ``y_i' f(x_i) < -1 <= 1``, the condition of ``alpha_i' = +C``; and
``alpha_i' y_i' = (+C)(-y_i) = alpha_i y_i``. So the vector ``alpha * y``, hence
``W = sum_i alpha_i y_i X_i``, the constraint ``sum_i alpha_i y_i = 0`` and every KKT condition (6), are
unchanged with the same ``b``: the old solution, with ``alpha_i`` moved from ``-C`` to ``+C``, is optimal
for the new labels, and the dual (5)'s value drops by exactly ``2C`` (the term ``-sum_i alpha_i``).
The turn is then exactly zero, whatever else the data are. The LS-SVM has ``alpha_i = C xi_i``
(000 eq. (7)) with ``xi_i`` unbounded and moves. A figure that switches only points beyond the margin
(for instance the point of each class farthest behind its own class) therefore cannot show anything
but a zero turn for the Least 1-Norm SVM; 000's panel (d) shows a small change, so its switched points
were presumably not both beyond the margin. The draws here switch points on both sides of it.

Both models are trained with the project's own solvers (:func:`svmref.solvers.linear.ls_svm`, a linear
system; :func:`svmref.solvers.smo.least_1norm_svm`, the SMO of 000 eq. (8)-(9), at ``tol=1e-8``) and
every dual value, of every draw, is checked against the cvxpy reference (:mod:`svmref.formulations`)
before anything is drawn: a relative disagreement above ``rtol`` raises :class:`RuntimeError`.
:meth:`OutlierResult.to_json` (and :func:`to_json`) return the numbers as a JSON-able dict, with
``draws`` (each draw's seed, switched patterns, their margins and both turns) and
``median_abs_turn`` per model.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from svmref._validation import check_positive
from svmref.kernels import linear_kernel

from ._common import format_table, mesh, new_figure, wrap_degrees
from ._draws import map_draws

__all__ = [
    "DEFAULT_SEED",
    "N_DRAWS",
    "N_DRAWS_FAST",
    "GROUPS",
    "make_data",
    "draw_flips",
    "dual_objective",
    "hyperplane_angle",
    "median_draw",
    "Fit",
    "Draw",
    "OutlierResult",
    "compute",
    "plot",
    "figure",
    "to_json",
]

#: The seed of the first draw; draw ``k`` uses ``DEFAULT_SEED + k``.
DEFAULT_SEED = 0
#: Number of random draws of the full figure (odd, so that the median draw is one draw).
N_DRAWS = 101
#: Number of draws with ``fast=True`` (the tests' setting).
N_DRAWS_FAST = 11
#: The two models of 000 Fig. 1 and, beside them, the robust (weighted) LS-SVM of Suykens, De Brabanter, Lukas &
#: Vandewalle (Neurocomputing 2002): the LS-SVM community's own answer to the outlier sensitivity 000 shows.
MODELS = ("ls_svm", "least_1norm_svm", "robust_ls_svm")
MODEL_TITLES = {"ls_svm": "LS-SVM", "least_1norm_svm": "Least 1-Norm SVM", "robust_ls_svm": "robust LS-SVM (Hampel)"}
MODEL_COLORS = {"ls_svm": "tab:orange", "least_1norm_svm": "tab:green", "robust_ls_svm": "tab:purple"}
#: Panel letters: 000 Fig. 1's (a)-(d) for its two models, primed beside them for the robust LS-SVM.
PANEL_LETTERS = {("ls_svm", 0): "a", ("least_1norm_svm", 0): "b", ("robust_ls_svm", 0): "a'",
                 ("ls_svm", 1): "c", ("least_1norm_svm", 1): "d", ("robust_ls_svm", 1): "c'"}
SETTINGS = ("without outliers", "with outliers")
#: Draw groups by how many of the two switched points lie inside the clean Least 1-Norm margin.
GROUPS = ("both beyond", "one inside", "both inside")
GROUP_MARKERS = {"both beyond": "o", "one inside": "s", "both inside": "^"}
GROUP_COLORS = {"both beyond": "tab:purple", "one inside": "tab:cyan", "both inside": "tab:brown"}
#: A point is beyond its margin when ``y_i f(x_i) > 1 + MARGIN_TOL``. Points on the margin (free
#: ``alpha_i``) have ``y_i f(x_i) = 1`` to 1e-13 with the SMO at ``tol=1e-8``; over the 101 default
#: draws no other switched pattern is within 2e-3 of 1, so the classes do not depend on this value.
MARGIN_TOL = 1e-6
#: A turn of at most this many degrees counts as none (the SMO at ``tol=1e-8`` leaves the turns that are
#: zero below 4e-12 degrees on the 101 default draws, and the smallest other turn is 0.05 degrees).
ZERO_TURN_DEG = 1e-6
#: Relative tolerance of the solver-vs-cvxpy check on the dual objective.
RTOL_REFERENCE = 1e-6


def _sample(rng, n: int):
    X_pos = rng.standard_normal((n, 2))
    X_neg = rng.standard_normal((n, 2)) + np.array([5.0, 2.0])
    return np.vstack([X_pos, X_neg]), np.concatenate([np.ones(n), -np.ones(n)])


def _check_n(n_per_class) -> int:
    if isinstance(n_per_class, bool) or int(n_per_class) != n_per_class or n_per_class < 2:
        raise ValueError(f"n_per_class must be an integer >= 2; got {n_per_class!r}")
    return int(n_per_class)


def make_data(seed: int = DEFAULT_SEED, n_per_class: int = 20):
    """The toy problem of 000 §4: ``n_per_class`` points from N((0,0), I) labelled +1, then
    ``n_per_class`` from N((5,2), I) labelled -1, from ``numpy.random.default_rng(seed)``.
    Returns ``X`` (2N x 2) and ``y``."""
    return _sample(np.random.default_rng(seed), _check_n(n_per_class))


def draw_flips(seed: int = DEFAULT_SEED, n_per_class: int = 20) -> tuple[int, int]:
    """Indices ``(i_pos, i_neg)`` of the two patterns whose labels draw ``seed`` switches: the same
    generator as :func:`make_data` continues after the patterns and picks one positive pattern
    (index ``0 .. n-1``) and one negative pattern (``n .. 2n-1``), each uniformly in its class."""
    n = _check_n(n_per_class)
    rng = np.random.default_rng(seed)
    _sample(rng, n)
    i_pos = int(rng.integers(n))
    i_neg = n + int(rng.integers(n))
    return i_pos, i_neg


def dual_objective(K, y, alpha, C: float, model: str, weights=None) -> float:
    """The dual of 000 eq. (2) (LS-SVM), eq. (5) (Least 1-Norm) or of the weighted LS-SVM at ``weights``, all
    written as minimisation.

    ``D(alpha) = 1/2 sum_ij alpha_i alpha_j y_i y_j Ktilde_ij - sum_i alpha_i`` with
    ``Ktilde = K + I/C`` for the LS-SVM (000 eq. (2)), ``Ktilde = K`` for the Least 1-Norm SVM
    (000 eq. (5)) and ``Ktilde = K + diag(1/(C v_i))`` for the weighted LS-SVM
    (:mod:`svmref.formulations.weighted_ls_svm`).
    """
    v = np.asarray(alpha) * np.asarray(y)
    quad = v @ (np.asarray(K) @ v)
    if model == "ls_svm":
        quad += (v @ v) / C  # (alpha*y)' (I/C) (alpha*y) = sum alpha_i^2 / C since y_i^2 = 1
    elif model == "robust_ls_svm":
        quad += float(np.sum(v * v / (C * np.asarray(weights, dtype=float))))
    elif model != "least_1norm_svm":
        raise ValueError(f"model must be one of {MODELS}; got {model!r}")
    return float(0.5 * quad - np.sum(alpha))


def hyperplane_angle(W) -> float:
    """Orientation of the normal vector ``W`` in degrees, ``atan2(W_2, W_1)``."""
    W = np.asarray(W, dtype=float)
    return float(np.degrees(np.arctan2(W[1], W[0])))


@dataclass(frozen=True)
class Fit:
    """One trained model: the solver's ``alpha, b``, ``W = sum_i alpha_i y_i X_i``, its angle,
    and the dual value of the solver's ``alpha`` next to the cvxpy reference optimum."""

    model: str
    setting: str
    alpha: np.ndarray
    b: float
    W: np.ndarray
    angle: float
    dual_solver: float
    dual_reference: float
    n_iter: int
    weights: np.ndarray | None = None  # the robust LS-SVM's final weights v_i

    def decision(self, Z) -> np.ndarray:
        """``f(x) = W . x + b`` (linear kernel): the kernel expansion with ``K_cross = Z`` and ``coef = W``."""
        from svmref.solvers._result import kernel_expansion

        return kernel_expansion(Z, self.W, self.b)


@dataclass(frozen=True)
class Draw:
    """One random draw: data seed, the two switched patterns, where they lie for the clean Least 1-Norm
    model (``margin[j] = y_i f(x_i)``, 000 eq. (6)) and each model's turn in degrees."""

    index: int
    seed: int
    flipped: tuple[int, int]
    margin: tuple[float, float]
    turn: dict  # model -> degrees, wrapped to (-180, 180]

    @property
    def beyond(self) -> tuple[bool, bool]:
        """Whether each switched point lies beyond its margin, ``y_i f(x_i) > 1 + MARGIN_TOL``."""
        return tuple(bool(m > 1.0 + MARGIN_TOL) for m in self.margin)

    @property
    def group(self) -> str:
        """One of :data:`GROUPS`: how many of the two switched points lie inside the margin."""
        return GROUPS[sum(not b for b in self.beyond)]

    @property
    def claim_holds(self) -> bool:
        """000 §4's claim on this draw: ``|turn(LS-SVM)| > |turn(Least 1-Norm)|``."""
        return abs(self.turn["ls_svm"]) > abs(self.turn["least_1norm_svm"])

    @property
    def robust_holds(self) -> bool:
        """The weighted LS-SVM's claim on this draw: ``|turn(robust LS-SVM)| < |turn(LS-SVM)|``."""
        return abs(self.turn["robust_ls_svm"]) < abs(self.turn["ls_svm"])

    def to_dict(self) -> dict:
        return {"draw": self.index, "seed": self.seed, "flipped": list(self.flipped),
                "margin_yf": [float(m) for m in self.margin], "beyond_margin": list(self.beyond),
                "group": self.group, "turn": {m: float(self.turn[m]) for m in MODELS},
                "claim_holds": self.claim_holds, "robust_turns_less": self.robust_holds}


def median_draw(draws) -> int:
    """Position in ``draws`` of the draw whose LS-SVM ``|turn|`` is the median: the draw at rank
    ``(N - 1) // 2`` of the draws sorted by ``|turn|`` (the median for odd ``N``, the lower median for
    even ``N``), ties to the earlier draw."""
    order = sorted(range(len(draws)), key=lambda j: (abs(draws[j].turn["ls_svm"]), j))
    return order[(len(draws) - 1) // 2]


def _median_abs(draws, model: str) -> float:
    return float(np.median([abs(d.turn[model]) for d in draws])) if draws else float("nan")


def _zero_turns(draws, model: str) -> int:
    """Number of draws in which ``model`` does not turn: ``|turn| <= ZERO_TURN_DEG``."""
    return sum(abs(d.turn[model]) <= ZERO_TURN_DEG for d in draws)


def _finite(x):
    """``None`` for nan/inf (strict JSON has neither)."""
    return float(x) if math.isfinite(x) else None


@dataclass(frozen=True)
class OutlierResult:
    """Everything the figure draws, and the numbers ``--print`` shows.

    ``draws`` are all the random draws; ``chosen`` is the position of the drawn instance in them
    (:func:`median_draw`), whose data (``X, y, y_outliers, outliers``) and four fits (``fits``,
    ``(model, setting) -> Fit``) panels (a)-(d) draw. ``max_rel_diff`` is the largest relative
    disagreement of a dual value with the cvxpy reference over all draws (``nan`` without the check).
    """

    seed: int
    C: float
    n_per_class: int
    draws: tuple
    chosen: int
    X: np.ndarray
    y: np.ndarray
    y_outliers: np.ndarray
    outliers: tuple[int, int]
    fits: dict = field(default_factory=dict)
    max_rel_diff: float = float("nan")
    rtol: float = RTOL_REFERENCE

    @property
    def chosen_draw(self) -> Draw:
        return self.draws[self.chosen]

    def turn(self, model: str) -> float:
        """Turn of the drawn instance (degrees, wrapped to (-180, 180]) caused by the outliers."""
        return wrap_degrees(self.fits[(model, SETTINGS[1])].angle - self.fits[(model, SETTINGS[0])].angle)

    @property
    def median_abs_turn(self) -> dict:
        """Median over the draws of ``|turn|``, per model (degrees)."""
        return {m: _median_abs(self.draws, m) for m in MODELS}

    @property
    def claim_count(self) -> int:
        """Number of draws in which the LS-SVM turns more than the Least 1-Norm SVM."""
        return sum(d.claim_holds for d in self.draws)

    @property
    def robust_count(self) -> int:
        """Number of draws in which the robust LS-SVM turns less than the LS-SVM."""
        return sum(d.robust_holds for d in self.draws)

    def groups(self) -> dict:
        """Per group of :data:`GROUPS`: number of draws, draws where the claim holds, median ``|turn|``."""
        out = {}
        for g in GROUPS:
            ds = [d for d in self.draws if d.group == g]
            out[g] = {"draws": len(ds), "claim_holds": sum(d.claim_holds for d in ds),
                      "robust_turns_less": sum(d.robust_holds for d in ds),
                      "median_abs_turn": {m: _finite(_median_abs(ds, m)) for m in MODELS},
                      "zero_turn": {m: _zero_turns(ds, m) for m in MODELS}}
        return out

    def headline(self) -> str:
        """The claim with its measured frequency (the figure's title, the report's first line)."""
        n, k, med = len(self.draws), self.claim_count, self.median_abs_turn
        r = self.robust_count
        return (f"LS-SVM turns more than Least 1-Norm SVM in {k} of {n} draws ({100.0 * k / n:.0f} %); "
                f"median |turn| {med['ls_svm']:.1f} deg (LS-SVM) vs {med['least_1norm_svm']:.1f} deg "
                f"(Least 1-Norm); the robust LS-SVM turns less than the LS-SVM in {r} of {n} "
                f"({100.0 * r / n:.0f} %), median |turn| {med['robust_ls_svm']:.1f} deg")

    def selection(self) -> str:
        """The rule that chose the drawn instance, with its outcome."""
        d = self.chosen_draw
        return (f"drawn instance: draw {d.index} (seed {d.seed}), the median LS-SVM |turn| of {len(self.draws)} "
                f"draws; switched patterns {d.flipped[0]} and {d.flipped[1]}: {d.group}")

    def to_json(self) -> dict:
        """The numbers as a JSON-able dict (no nan/inf: those are ``None``)."""
        d = self.chosen_draw
        return {
            "figure": "outlier-robustness", "paper": "000 Fig. 1", "C": self.C, "n_per_class": self.n_per_class,
            "kernel": "linear", "first_seed": self.seed, "n_draws": len(self.draws),
            "claim": {"statement": "|turn(LS-SVM)| > |turn(Least 1-Norm SVM)|", "holds": self.claim_count,
                      "of": len(self.draws), "fraction": self.claim_count / len(self.draws)},
            "robust_claim": {"statement": "|turn(robust LS-SVM)| < |turn(LS-SVM)|", "holds": self.robust_count,
                             "of": len(self.draws), "fraction": self.robust_count / len(self.draws),
                             "weights": "Hampel, c1 = 2.5, c2 = 3, of e / (1.483 MAD(e)), iterated to a fixed point"},
            "median_abs_turn": self.median_abs_turn,
            "groups": self.groups(),
            "chosen": {"draw": d.index, "seed": d.seed, "rule": "median LS-SVM |turn| (lower median, ties to "
                       "the earlier draw)", "angle": {f"{m} {s}": self.fits[(m, s)].angle for m in MODELS
                                                      for s in SETTINGS},
                       "turn": {m: self.turn(m) for m in MODELS}},
            "reference_check": {"rtol": self.rtol, "max_rel_diff": _finite(self.max_rel_diff)},
            "flip_rule": "one pattern per class, uniform in its class, from default_rng(seed) after the data",
            "margin_rule": f"beyond: y_i f(x_i) > 1 + {MARGIN_TOL:g} for the clean Least 1-Norm SVM",
            "draws": [x.to_dict() for x in self.draws],
        }

    def report(self) -> str:
        return _report(self)


def _report(r: OutlierResult) -> str:
    groups = [[g, v["draws"], v["claim_holds"], v["robust_turns_less"],
               *(f"{t:.2f}" if t is not None else "-" for t in v["median_abs_turn"].values()),
               v["zero_turn"]["least_1norm_svm"]] for g, v in r.groups().items()]
    angles = [[MODEL_TITLES[m], f"{r.fits[(m, SETTINGS[0])].angle:.4f}", f"{r.fits[(m, SETTINGS[1])].angle:.4f}",
               f"{r.turn(m):+.4g}"] for m in MODELS]
    draws = [[d.index, d.seed, f"{d.flipped[0]},{d.flipped[1]}", f"{d.margin[0]:.3f},{d.margin[1]:.3f}",
              d.group, f"{d.turn['ls_svm']:+.3f}", f"{d.turn['least_1norm_svm']:+.3g}",
              f"{d.turn['robust_ls_svm']:+.3g}"] for d in r.draws]
    return "\n".join([
        f"outlier-robustness (000 Fig. 1): C={r.C:g}, linear kernel, {2 * r.n_per_class} patterns, "
        f"{len(r.draws)} draws (seeds {r.seed}..{r.seed + len(r.draws) - 1})",
        r.headline(), "",
        "by where the two switched points lie for the clean Least 1-Norm SVM (beyond: y f(x) > 1):",
        format_table(["group", "draws", "claim holds", "robust < LS", "median |turn| LS-SVM", "median |turn| L1N",
                      "median |turn| robust", f"L1N |turn| <= {ZERO_TURN_DEG:g}"], groups), "",
        r.selection(),
        format_table(["model", "angle without", "angle with", "turn (deg)"], angles), "",
        f"cvxpy check of every dual value (000 eq. (2)/(5); the weighted LS-SVM's at its final weights): largest "
        f"relative difference {r.max_rel_diff:.2e} "
        f"(limit {r.rtol:g})", "",
        "draws (margin: y_i f(x_i) of the switched points for the clean Least 1-Norm SVM; turns in degrees):",
        format_table(["draw", "seed", "flipped", "margin", "group", "LS-SVM", "Least 1-Norm", "robust LS-SVM"], draws),
    ])


def to_json(result: OutlierResult) -> dict:
    """``result.to_json()``: what ``svmref figure outlier-robustness --json FILE`` writes."""
    return result.to_json()


def _train(model: str, K, y, C: float):
    # imported here so that importing figures does not import the solvers' numba code
    if model == "ls_svm":
        from svmref.solvers.linear import ls_svm

        return ls_svm(K, y, C)
    if model == "robust_ls_svm":
        from svmref.solvers.robust import robust_ls_svm

        return robust_ls_svm(K, y, C, weight="hampel", task="classification")
    from svmref.solvers.smo import least_1norm_svm

    return least_1norm_svm(K, y, C, tol=1e-8)


def _reference_dual(model: str, K, y, C: float, weights=None) -> float:
    import svmref.formulations as F

    if model == "robust_ls_svm":  # the weighted problem at the weights the robust procedure ended with
        sol = F.solve(F.get("weighted_ls_svm").dual(K, y, C=C, v=weights))
        return float(sol.objective)
    sol = F.solve(F.get(model).dual(K, y, C=C))
    return float(sol.objective)


def _rel_diff(value: float, optimum: float) -> float:
    """``|value - optimum| / |optimum|`` (``inf`` when the optimum is 0 and the value is not)."""
    if optimum != 0.0:
        return abs(value - optimum) / abs(optimum)
    return 0.0 if value == 0.0 else float("inf")


def _fit(model: str, setting: str, X, K, labels, C: float, check: bool, rtol: float, seed: int) -> Fit:
    """Train one model and, with ``check``, hold its dual value against the cvxpy reference."""
    res = _train(model, K, labels, C)
    alpha = np.asarray(res.alpha, dtype=float)
    W = (alpha * labels) @ X  # W = sum_i alpha_i y_i X_i (000, below eq. (6))
    v = res.info.get("weights") if model == "robust_ls_svm" else None
    d_solver = dual_objective(K, labels, alpha, C, model, v)
    d_ref = _reference_dual(model, K, labels, C, v) if check else float("nan")
    if check and not _rel_diff(d_solver, d_ref) <= rtol:
        raise RuntimeError(
            f"{MODEL_TITLES[model]} ({setting}, seed={seed}, C={C:g}): the solver's dual value "
            f"{d_solver:.10g} disagrees with the cvxpy reference {d_ref:.10g} "
            f"(relative difference {_rel_diff(d_solver, d_ref):.2e} > {rtol:g}); "
            "refusing to draw the figure"
        )
    return Fit(model, setting, alpha, float(res.b), W, hyperplane_angle(W), d_solver, d_ref, int(res.n_iter),
               None if v is None else np.asarray(v, dtype=float))


def _one_draw(index: int, seed: int, C: float, n: int, check: bool, rtol: float):
    """Draw ``index`` (data seed ``seed``): ``(Draw, fits, X, y, y_out)``."""
    X, y = make_data(seed, n)
    flipped = draw_flips(seed, n)
    y_out = y.copy()
    y_out[list(flipped)] *= -1.0
    K = linear_kernel(X)
    fits = {(m, s): _fit(m, s, X, K, labels, C, check, rtol, seed)
            for s, labels in zip(SETTINGS, (y, y_out)) for m in MODELS}
    clean = fits[("least_1norm_svm", SETTINGS[0])]
    margin = tuple(float(y[i] * clean.decision(X[i])[0]) for i in flipped)
    turn = {m: wrap_degrees(fits[(m, SETTINGS[1])].angle - fits[(m, SETTINGS[0])].angle) for m in MODELS}
    return Draw(index, int(seed), flipped, margin, turn), fits, X, y, y_out


def work(fast: bool = False) -> str:
    """What :func:`compute` will do, in words (``svmref figure`` says it at the start)."""
    return f"{N_DRAWS_FAST if fast else N_DRAWS} draws" + ("" if fast else f"; --fast runs {N_DRAWS_FAST}")


def compute(seed: int = DEFAULT_SEED, *, C: float = 1.0, n_per_class: int = 20, n_draws: int | None = None,
            check: bool = True, rtol: float = RTOL_REFERENCE, fast: bool = False, jobs: int = 1,
            scheduler: str | None = None, progress: bool = False) -> OutlierResult:
    """Train both models with and without the two switched labels on ``n_draws`` draws (seeds ``seed``,
    ``seed + 1``, ...) and return the numbers to draw. The draws run on ``jobs`` workers (or the Dask cluster at
    ``scheduler``) with a progress bar where ``progress`` (:func:`svmref.figures._draws.map_draws`: the same numbers
    for any ``jobs``).

    ``n_draws`` defaults to :data:`N_DRAWS` (101), or :data:`N_DRAWS_FAST` (11) with ``fast=True``.
    ``check=True`` solves each dual with the cvxpy reference and raises :class:`RuntimeError` when
    ``|D(alpha_solver) - D*| > rtol |D*|`` (relative to the optimum itself, with no floor at 1).
    """
    C = check_positive(C, "C")
    n = _check_n(n_per_class)
    n_draws = (N_DRAWS_FAST if fast else N_DRAWS) if n_draws is None else n_draws
    if isinstance(n_draws, bool) or int(n_draws) != n_draws or n_draws < 1:
        raise ValueError(f"n_draws must be an integer >= 1; got {n_draws!r}")
    runs = map_draws(__name__, "_one_draw", [(k, int(seed) + k, C, n, check, rtol) for k in range(int(n_draws))],
                     jobs=jobs, scheduler=scheduler, progress=progress)
    draws = tuple(r[0] for r in runs)
    chosen = median_draw(draws)
    _, fits, X, y, y_out = runs[chosen]
    rel = [_rel_diff(f.dual_solver, f.dual_reference) for r in runs for f in r[1].values()] if check else []
    return OutlierResult(int(seed), C, n, draws, chosen, X, y, y_out, draws[chosen].flipped, fits,
                         max(rel) if rel else float("nan"), rtol)


def _instance_panel(ax, result: OutlierResult, model: str, r: int, letter: str, grid) -> None:
    """One of panels (a)-(d): the contours ``f = -1, 0, 1`` of one model on the drawn instance."""
    xx, yy, P = grid
    X, setting = result.X, SETTINGS[r]
    labels = (result.y, result.y_outliers)[r]
    fit = result.fits[(model, setting)]
    cs = ax.contour(xx, yy, fit.decision(P).reshape(xx.shape), levels=[-1.0, 0.0, 1.0],
                    colors=["tab:red", "k", "tab:blue"], linestyles=["--", "-", "--"], linewidths=[1.2, 1.8, 1.2])
    ax.clabel(cs, fmt={-1.0: "-1", 0.0: "0", 1.0: "1"}, fontsize=9)
    if r == 1:  # the clean model's separating line, for comparison
        F0 = result.fits[(model, SETTINGS[0])].decision(P).reshape(xx.shape)
        ax.contour(xx, yy, F0, levels=[0.0], colors="0.6", linestyles=":", linewidths=1.5)
    pos, neg = labels > 0, labels < 0
    ax.scatter(X[pos, 0], X[pos, 1], marker="o", facecolors="none", edgecolors="tab:blue", label="y = +1")
    ax.scatter(X[neg, 0], X[neg, 1], marker="x", color="tab:red", label="y = -1")
    if r == 1:
        idx = list(result.outliers)
        ax.scatter(X[idx, 0], X[idx, 1], s=260, facecolors="none", edgecolors="k", linewidths=1.5,
                   label="switched label")
        ax.plot([], [], color="0.6", ls=":", label="f = 0 without outliers")
    ax.set_xlim(xx.min(), xx.max())
    ax.set_ylim(yy.min(), yy.max())
    ax.set_aspect("equal")
    ax.set_xlabel("x")
    ax.set_ylabel("y")
    title = f"({letter}) {MODEL_TITLES[model]} {setting}, C = {result.C:g}\nangle of W: {fit.angle:.1f} deg"
    if r == 1:
        title += f" (turn {round(result.turn(model), 1) + 0.0:+.1f} deg)"
        if fit.weights is not None:
            w = ", ".join(f"{fit.weights[i]:.2g}" for i in result.outliers)
            title += f"\nweights of the switched points: {w}"
    ax.set_title(title, fontsize=10)


def _distribution_panels(ax_cdf, ax_pair, ax_robust, result: OutlierResult) -> None:
    """Panels (e)-(g): the distribution of ``|turn|`` over all draws."""
    n, med = len(result.draws), result.median_abs_turn
    for m in MODELS:
        t = np.sort([abs(d.turn[m]) for d in result.draws])
        ax_cdf.step(np.r_[0.0, t], np.arange(n + 1) / n, where="post", color=MODEL_COLORS[m], gid=f"ecdf {m}",
                    label=f"{MODEL_TITLES[m]}: median {med[m]:.1f} deg, "
                          f"{_zero_turns(result.draws, m)} of {n} do not turn")
        ax_cdf.axvline(med[m], color=MODEL_COLORS[m], ls=":", lw=1)
    ax_cdf.set_xlabel("|turn| (degrees)")
    ax_cdf.set_ylabel(f"fraction of the {n} draws with |turn| <= x")
    ax_cdf.set_title(f"(e) empirical CDF of |turn| over {n} draws\n(do not turn: |turn| <= {ZERO_TURN_DEG:g} deg)",
                     fontsize=10)
    ax_cdf.legend(fontsize=7, loc="lower right")
    lim = 1.05 * max(max(abs(d.turn[m]) for d in result.draws) for m in MODELS) + 1e-9
    _pairs(ax_pair, result, "least_1norm_svm", lim, "draws", lambda d: d.claim_holds)
    ax_pair.set_title("(f) each draw, LS-SVM vs Least 1-Norm; groups: where the switched\npoints lie for the clean "
                      "Least 1-Norm SVM (beyond: y f(x) > 1)", fontsize=10)
    _pairs(ax_robust, result, "robust_ls_svm", lim, "robust draws", lambda d: d.robust_holds)
    ax_robust.set_title("(g) each draw, LS-SVM vs the robust LS-SVM\n(Hampel weights, Suykens et al. 2002)",
                        fontsize=10)


def _pairs(ax, result: OutlierResult, other: str, lim: float, gid: str, below) -> None:
    """Each draw's ``(|turn| LS-SVM, |turn| other)`` by group, the equal-turns line, the drawn instance circled."""
    ax.plot([0, lim], [0, lim], color="0.5", lw=1, label="equal turns")
    for z, g in enumerate(reversed(GROUPS)):  # "both beyond" drawn last, on top
        ds = [d for d in result.draws if d.group == g]
        ax.scatter([abs(d.turn["ls_svm"]) for d in ds], [abs(d.turn[other]) for d in ds], marker=GROUP_MARKERS[g],
                   color=GROUP_COLORS[g], s=22, alpha=0.75, gid=gid, zorder=2 + z,
                   label=f"{g}: {sum(below(d) for d in ds)} of {len(ds)} below the line")
    d = result.chosen_draw
    ax.scatter([abs(d.turn["ls_svm"])], [abs(d.turn[other])], s=200, facecolors="none", edgecolors="k",
               linewidths=1.5, label=f"drawn instance (seed {d.seed})")
    ax.set_xlim(-0.02 * lim, lim)
    ax.set_ylim(-0.02 * lim, lim)
    ax.set_aspect("equal")
    ax.set_xlabel("|turn| LS-SVM (degrees)")
    ax.set_ylabel(f"|turn| {MODEL_TITLES[other]} (degrees)")
    ax.legend(fontsize=7, loc="upper left")


def plot(result: OutlierResult):
    """Panels (a)-(d), the 2 x 2 of 000 Fig. 1 on the drawn instance (rows without/with outliers, columns LS-SVM /
    Least 1-Norm), (a') and (c') the robust LS-SVM beside them, and (e)-(g), the distribution of the turns over all
    draws."""
    X = result.X
    pad = 1.0
    grid = mesh((X[:, 0].min() - pad, X[:, 0].max() + pad), (X[:, 1].min() - pad, X[:, 1].max() + pad), 300)
    fig, axes = new_figure(3, 3, width=15.0, height=13.0)
    for r in range(2):
        for c, model in enumerate(MODELS):
            _instance_panel(axes[r, c], result, model, r, PANEL_LETTERS[(model, r)], grid)
    handles, labels = axes[1, 0].get_legend_handles_labels()
    axes[1, 0].legend(handles, labels, fontsize=8, loc="lower left")
    _distribution_panels(axes[2, 0], axes[2, 1], axes[2, 2], result)
    headline = result.headline().replace("; the robust", ";\nthe robust")  # folded: one line is too wide
    fig.suptitle(f"000 Fig. 1 (a-d), with the robust LS-SVM beside it (a', c'): contours f(x) = W.x + b = -1, 0, 1 on "
                 f"one draw, turns over all draws (e-g)\n{headline}\n{result.selection()}", fontsize=10)
    return fig


def figure(seed: int = DEFAULT_SEED, *, fast: bool = False, **params):
    """``plot(compute(seed, **params))``."""
    return plot(compute(seed, fast=fast, **params))

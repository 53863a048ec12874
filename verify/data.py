"""The seeded data of the suites: :class:`Instance` and the generators that fill each suite.

Every instance draws its data from ``numpy.random.default_rng(seed)`` with a fixed seed, so a report can
be reproduced from its instance names. Held-out points (``X_test``) come from the same distribution (or
the rest of the real data set) and are used to compare decision functions. Which generator a
formulation uses is said by its entry in :mod:`svmref.verify.specs`; :func:`svmref.verify.instances.suite`
looks it up.
"""
from __future__ import annotations

import csv
import math
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from svmref._validation import is_psd
from svmref.datasets import load_dataset
from svmref.kernels import kernel_matrix

__all__ = ["Instance", "SUITES", "kernel_instances", "rls_instances", "feature_instances", "svr_instances",
           "weighted_instances", "default_weights", "weights_of", "SVR_EPSILON", "SVR_EPSILONS", "load_csv",
           "scale_columns", "check_targets", "c_only", "rls_gamma", "fixed_size_instances", "nystrom_features"]

SUITES = ("quick", "standard", "adversarial", "real")


@dataclass
class Instance:
    """One problem: data, held-out points, kernel and hyperparameters.

    ``hyper`` holds the formulation's hyperparameters (``C``; ``gamma`` for RLS; ``C, mu`` for the
    support features machine). ``weights`` are the per-pattern weights ``v_i > 0`` of the weighted LS-SVM (None
    for every other formulation; :func:`weights_of` gives an instance without them the default ones). ``unique``
    says whether the optimal dual is unique (duplicates with conflicting labels make it non-unique: only objective
    values and KKT residuals are then compared).
    ``K`` and ``K_test`` (held-out x training) are computed once and cached.
    """

    name: str
    X: np.ndarray
    y: np.ndarray
    X_test: np.ndarray
    kernel: str = "linear"
    kernel_params: dict = field(default_factory=dict)
    hyper: dict = field(default_factory=dict)
    unique: bool = True
    description: str = ""
    _K: np.ndarray | None = field(default=None, repr=False)
    _K_test: np.ndarray | None = field(default=None, repr=False)
    weights: np.ndarray | None = field(default=None, repr=False)

    @property
    def K(self) -> np.ndarray:
        if self._K is None:
            self._K = kernel_matrix(self.X, None, kernel=self.kernel, **self.kernel_params)
        return self._K

    @property
    def K_test(self) -> np.ndarray:
        if self._K_test is None:
            self._K_test = kernel_matrix(self.X_test, self.X, kernel=self.kernel, **self.kernel_params)
        return self._K_test

    @property
    def N(self) -> int:
        return int(self.X.shape[0])

    def psd(self) -> tuple[bool, float]:
        """Whether K is PSD up to round-off (``svmref._validation.is_psd`` at 1e-9 relative)."""
        return is_psd(self.K, rtol=1e-9)

    def key(self) -> tuple:
        """A hashable identity (for caching references): the name, kernel and hyperparameters and a digest of the
        data (``X``, ``y``, ``X_test`` and the weights), so two instances that share a name but not their data never
        share a cached reference."""
        import hashlib

        h = hashlib.sha256()
        for a in (self.X, self.y, self.X_test) + (() if self.weights is None else (self.weights,)):
            arr = np.ascontiguousarray(a, dtype=np.float64)
            h.update(str(arr.shape).encode())
            h.update(arr.tobytes())
        return (self.name, self.kernel, tuple(sorted(self.kernel_params.items())),
                tuple(sorted((k, float(v)) for k, v in self.hyper.items())), self.N, h.hexdigest())


# ----------------------------------------------------------------------------- data generators


def _two_gaussians(rng, n, d, shift=2.0):
    """Two Gaussian classes, means 0 and ``shift * 1/sqrt(d)``; both classes always present."""
    n_pos = n // 2
    y = np.concatenate([np.ones(n_pos), -np.ones(n - n_pos)])
    mean = shift * np.ones(d) / np.sqrt(d)
    X = rng.standard_normal((n, d))
    X[y < 0] += mean
    perm = rng.permutation(n)
    return X[perm], y[perm]


def _classif(seed, n, d, n_test=40, shift=2.0):
    rng = np.random.default_rng(seed)
    X, y = _two_gaussians(rng, n + n_test, d, shift)
    Xtr, ytr, Xte = X[:n], y[:n], X[n:]
    if np.all(ytr == ytr[0]):
        ytr[0] = -ytr[0]
    return Xtr, ytr, Xte


def _regress(seed, n, d, n_test=40, noise=0.1):
    """``y = sinc(|x|) + noise``: a smooth regression target."""
    rng = np.random.default_rng(seed)
    X = rng.uniform(-3, 3, (n + n_test, d))
    r = np.linalg.norm(X, axis=1)
    y = np.sinc(r) + noise * rng.standard_normal(n + n_test)
    return X[:n], y[:n], X[n:]


def _features(seed, N, n, n_test=40, informative=5):
    """003 §3.1 in small: two touching hypercubes, normal (5, 4, 3, 2, 1, 0, ..., 0)."""
    rng = np.random.default_rng(seed)
    normal = np.zeros(n)
    k = min(informative, n)
    normal[:k] = np.arange(k, 0, -1, dtype=float)
    normal /= np.linalg.norm(normal)
    X = rng.uniform(-1, 1, (N + n_test, n))
    y = np.where(X @ normal >= 0, 1.0, -1.0)
    # flip a few labels so the data are not separable
    flip = rng.choice(N + n_test, size=max(1, (N + n_test) // 10), replace=False)
    y[flip] *= -1
    Xtr, ytr = X[:N], y[:N]
    if np.all(ytr == ytr[0]):
        ytr[0] = -ytr[0]
    return Xtr, ytr, X[N:]


# ------------------------------------------------------------------------------ kernel suites


def c_only(C: float, N: int) -> dict:
    """The hyperparameters of a C-formulation: ``{"C": C}``."""
    return {"C": C}


class _KernelSuite:
    """Collects the kernel instances of one suite (classification labels or regression targets)."""

    def __init__(self, regression: bool, n_train: int | None, hyper: Callable[[float, int], dict]):
        self.regression, self.n_train, self.hyper = regression, n_train, hyper
        self.out: list[Instance] = []

    def add(self, name, X, y, Xte, kernel, kp, C, unique=True, desc=""):
        if self.n_train is not None:
            name = f"{name}@{self.n_train}"
        self.out.append(Instance(name, X, y, Xte, kernel, dict(kp), self.hyper(C, X.shape[0]), unique, desc))

    def data(self, seed, n, d, regression_target=False, n_test=40, shift=2.0):
        n = self.n_train or n
        if self.regression and regression_target:
            return _regress(seed, n, d, n_test)
        return _classif(seed, n, d, n_test, shift)


def _quick(s: _KernelSuite) -> None:
    s.add("q-linear-20", *s.data(1, 20, 2), "linear", {}, 1.0, desc="two Gaussians, linear kernel")
    s.add("q-rbf-30", *s.data(2, 30, 2, True), "rbf", {"sigma": 1.0}, 10.0, desc="RBF sigma = 1")
    s.add("q-poly-24", *s.data(3, 24, 3), "poly", {"c": 1.0, "d": 2}, 0.1, desc="polynomial degree 2")


def _standard(s: _KernelSuite) -> None:
    s.add("s-linear-50", *s.data(11, 50, 5), "linear", {}, 0.1)
    s.add("s-poly-100", *s.data(12, 100, 4, True), "poly", {"c": 2.0, "d": 3}, 1.0)
    s.add("s-rbf-200", *s.data(13, 200, 5), "rbf", {"sigma": 2.0}, 10.0)
    s.add("s-rbf-300", *s.data(14, 300, 2, True, 60), "rbf", {"sigma": 0.7}, 100.0)
    s.add("s-linear-150", *s.data(15, 150, 20), "linear", {}, 1.0)
    s.add("s-poly-80", *s.data(16, 80, 2), "poly", {"c": 1.0, "d": 2}, 0.5)


def _adversarial(s: _KernelSuite) -> None:
    X, y, Xte = s.data(21, 20, 2)
    Xd = np.vstack([X, X[:10]])
    yd = np.concatenate([y, -y[:10]])
    s.add("a-duplicates-conflicting", Xd, yd, Xte, "rbf", {"sigma": 1.0}, 1.0, unique=False,
          desc="10 points repeated with the opposite label: Q singular, alpha not unique")
    rng = np.random.default_rng(22)
    Xi = np.tile(rng.standard_normal((1, 2)), (16, 1))
    yi = np.array([1.0, -1.0] * 8) if not s.regression else rng.standard_normal(16)
    s.add("a-identical-points", Xi, yi, s.data(22, 4, 2)[2], "linear", {}, 1.0, unique=False,
          desc="16 copies of one point with both labels: K = const, rank 1")
    s.add("a-C-1e-4", *s.data(23, 30, 2, True), "rbf", {"sigma": 1.0}, 1e-4, desc="tiny C")
    s.add("a-C-1e4", *s.data(24, 30, 2, True), "rbf", {"sigma": 1.0}, 1e4, desc="huge C")
    s.add("a-sigma-to-0", *s.data(25, 30, 2), "rbf", {"sigma": 1e-3}, 1.0, desc="sigma -> 0: K = I")
    s.add("a-sigma-to-inf", *s.data(26, 30, 2), "rbf", {"sigma": 1e3}, 1.0, desc="sigma -> inf: K = 11' up to 1e-6")
    s.add("a-separable-huge-C", *s.data(27, 30, 2, shift=8.0), "linear", {}, 1e6,
          desc="separable data, C = 1e6 (hard margin)")
    Xr, yr, Xrte = s.data(28, 40, 2)
    Xr = np.hstack([Xr, Xr[:, :1], 2 * Xr[:, 1:2]])
    Xrte = np.hstack([Xrte, Xrte[:, :1], 2 * Xrte[:, 1:2]])
    s.add("a-rank-deficient-linear", Xr, yr, Xrte, "linear", {}, 1.0,
          desc="40 points, 4 features of which 2 are copies: K has rank 2")
    s.add("a-ill-conditioned-poly", *s.data(16, 80, 2), "poly", {"c": 1.0, "d": 2}, 1000.0,
          desc="polynomial kernel with entries up to ~450 and C = 1000: margins need more than single precision")
    s.add("a-mlp-not-psd", *s.data(29, 30, 2), "mlp", {"k": 1.0, "theta": -1.0}, 1.0,
          desc="MLP kernel tanh(x'z - 1) (002): not PSD, the reference is not convex")


def _real(s: _KernelSuite) -> None:
    sets = ["mcycle"] if s.regression else []
    sets += ["heart", "sonar", "ionosphere", "titanic", "synth.tr", "breast"]
    for k, name in enumerate(sets):
        X, y = load_dataset(name, scale="standard")
        if name == "mcycle":
            y = y / float(np.std(y))  # in units of its spread
        rng = np.random.default_rng(100 + k)
        perm = rng.permutation(X.shape[0])
        ntr = min(120, int(0.66 * X.shape[0]))
        tr, te = perm[:ntr], perm[ntr:ntr + 60]
        ytr = y[tr]
        if name != "mcycle" and np.all(ytr == ytr[0]):
            continue
        sigma = float(np.sqrt(X.shape[1])) if name != "mcycle" else 0.5
        s.add(f"r-{name}", X[tr], ytr, X[te], "rbf", {"sigma": sigma}, 1.0,
              unique=name not in ("titanic",),
              desc=f"{name}: {ntr} of {X.shape[0]} patterns, standardised, RBF sigma = {sigma:.3g}")


_KERNEL_SUITES = {"quick": _quick, "standard": _standard, "adversarial": _adversarial, "real": _real}


def kernel_instances(which: str, regression: bool, n_train: int | None = None,
                     hyper: Callable[[float, int], dict] = c_only) -> list[Instance]:
    """The kernel instances of suite ``which``.

    ``regression``: real targets where the instance has them (else two-class labels, and instances whose
    labels are not +-1 are left out); ``n_train`` rescales (see :func:`svmref.verify.instances.suite`);
    ``hyper(C, N)`` gives each instance's hyperparameters from its ``C`` and size.
    """
    if which not in _KERNEL_SUITES:
        raise ValueError(f"suite must be one of {list(SUITES)}; got {which!r}")
    s = _KernelSuite(regression, n_train, hyper)
    _KERNEL_SUITES[which](s)
    out = s.out
    if not regression:
        out = [i for i in out if np.all(np.isin(i.y, (-1.0, 1.0)))]
    return out


def rls_gamma(C: float, N: int) -> dict:
    """RLS's hyperparameter of a kernel instance: ``gamma = 1/(C N)``."""
    return {"gamma": 1.0 / (C * N)}


def rls_instances(which: str, n_train: int | None = None) -> list[Instance]:
    """The regression instances of ``which`` with ``gamma = 1/(C N)``; the adversarial suite adds a tiny and a huge gamma."""
    out = kernel_instances(which, True, n_train, rls_gamma)
    if which == "adversarial":
        out.append(Instance("a-gamma-1e-8", *_regress(30, 30, 2, 40), "rbf", {"sigma": 1.0}, {"gamma": 1e-8}, True,
                            "tiny gamma: (m gamma I + K) nearly singular"))
        out.append(Instance("a-gamma-1e4", *_regress(31, 30, 2, 40), "rbf", {"sigma": 1.0}, {"gamma": 1e4}, True,
                            "huge gamma"))
    return out


# ---------------------------------------------------------------------------- feature suites


def _feature_suite(which: str, add: Callable, n_train: int | None) -> None:
    if which == "quick":
        add("q-features-20x10-mu0", *_features(41, n_train or 20, 10), 1.0, 0.0, desc="mu = 0: the L1-SVM with C/2")
        add("q-features-20x10-mu0.3", *_features(42, n_train or 20, 10), 1.0, 0.3)
        add("q-features-24x30-mu0.7", *_features(43, n_train or 24, 30), 10.0, 0.7, desc="n > N")
    elif which == "standard":
        add("s-features-50x50-mu0.5", *_features(51, n_train or 50, 50), 1.0, 0.5, desc="003 §3.1: 25 + 25 points, n = 50")
        add("s-features-100x20-mu0.2", *_features(52, n_train or 100, 20), 10.0, 0.2)
        add("s-features-200x10-mu0.9", *_features(53, n_train or 200, 10), 0.1, 0.9)
        add("s-features-60x200-mu0.6", *_features(54, n_train or 60, 200), 100.0, 0.6, desc="n >> N")
    elif which == "adversarial":
        X, y, Xte = _features(61, 20, 10)
        add("a-features-duplicates-conflicting", np.vstack([X, X[:8]]), np.concatenate([y, -y[:8]]), Xte, 1.0, 0.3,
            unique=False, desc="8 points repeated with the opposite label")
        add("a-features-C-1e-4", *_features(62, 30, 10), 1e-4, 0.3, desc="tiny C: a = 0 (mu dominates)")
        add("a-features-C-1e4", *_features(63, 30, 10), 1e4, 0.3, desc="huge C")
        add("a-features-mu-0.99", *_features(64, 30, 10), 10.0, 0.99, desc="selectivity near 1")
        X, y, Xte = _features(65, 30, 6)
        add("a-features-duplicate-columns", np.hstack([X, X[:, :3]]), y, np.hstack([Xte, Xte[:, :3]]), 1.0, 0.3,
            desc="three features repeated: X rank deficient")
        add("a-features-20x300", *_features(66, 20, 300), 1.0, 0.5, desc="n >> N")
    elif which == "real":
        for k, name in enumerate(["sonar", "heart", "ionosphere"]):
            X, y = load_dataset(name, scale="standard")
            rng = np.random.default_rng(200 + k)
            perm = rng.permutation(X.shape[0])
            ntr = min(100, int(0.66 * X.shape[0]))
            add(f"r-features-{name}", X[perm[:ntr]], y[perm[:ntr]], X[perm[ntr:ntr + 60]], 1.0, 0.3,
                desc=f"{name}: {ntr} patterns, {X.shape[1]} standardised features")
    else:
        raise ValueError(f"suite must be one of {list(SUITES)}; got {which!r}")


def feature_instances(which: str, n_train: int | None = None) -> list[Instance]:
    """The instances of suite ``which`` for the support features machine (003 §3.1 data, linear on ``X``)."""
    out: list[Instance] = []

    def add(name, X, y, Xte, C, mu, unique=True, desc=""):
        if n_train is not None:
            name = f"{name}@{n_train}"
        out.append(Instance(name, X, y, Xte, "linear", {}, {"C": C, "mu": mu}, unique, desc))

    _feature_suite(which, add, n_train)
    return out


#: The bias scales B of the SVM with the bias in the penalty, given in turn to the instances of a suite: LIBLINEAR's
#: and LinearSVC's default 1, a large one (the bias nearly free) and 0 (no bias).
BIAS_SCALES = (1.0, 10.0, 0.0)


def regularised_bias_instances(which: str, n_train: int | None = None) -> list[Instance]:
    """The instances of suite ``which`` for the SVM with the bias in the penalty (linear on ``X``): the data of the
    support features suite (:func:`feature_instances`), hyperparameters ``C`` and ``bias_scale`` (:data:`BIAS_SCALES`
    in turn)."""
    out: list[Instance] = []

    def add(name, X, y, Xte, C, mu, unique=True, desc=""):
        B = BIAS_SCALES[len(out) % len(BIAS_SCALES)]
        base = name.replace("-features-", "-linear-").rsplit("-mu", 1)[0]
        if base.count("-") < 2:  # the name held only mu: say the shape instead
            base = f"{base}-{X.shape[0]}x{X.shape[1]}"
        name = f"{base}-B{B:g}" + (f"@{n_train}" if n_train is not None else "")
        words = [] if "mu" in desc or "selectivity" in desc else [desc] if desc else []
        words.append("no bias" if B == 0 else f"bias scale B = {B:g}")
        out.append(Instance(name, X, y, Xte, "linear", {}, {"C": C, "bias_scale": B}, True, "; ".join(words)))

    _feature_suite(which, add, n_train)
    return out


#: epsilon-SVR: the tube half-width of each instance (the regression instances of the suite, by base name).
#: Default :data:`SVR_EPSILON`; a few are set so that the suites hold epsilon = 0 (least absolute
#: deviations: every pattern a support vector, alpha^+ alpha^- = 0 no longer forced) and a wide tube
#: (most targets inside it, few support vectors).
SVR_EPSILON = 0.1
SVR_EPSILONS = {"q-linear-20": 0.0, "q-poly-24": 0.5, "s-linear-50": 0.0, "s-rbf-200": 0.5, "a-C-1e4": 0.05,
                "a-duplicates-conflicting": 0.0, "r-heart": 0.5}


def svr_instances(which: str, n_train: int | None = None) -> list[Instance]:
    """The regression instances of ``which`` with an epsilon each (:data:`SVR_EPSILONS`), for epsilon-SVR."""
    out = []
    for inst in kernel_instances(which, True, n_train):
        base = inst.name.split("@")[0]
        eps = SVR_EPSILONS.get(base, SVR_EPSILON)
        desc = f"{inst.description}; epsilon = {eps:g}" if inst.description else f"epsilon = {eps:g}"
        out.append(Instance(inst.name, inst.X, inst.y, inst.X_test, inst.kernel, dict(inst.kernel_params),
                            {**inst.hyper, "epsilon": eps}, inst.unique, desc))
    return out


# ------------------------------------------------------------------------------ the weighted LS-SVM


def default_weights(n: int, seed: int) -> np.ndarray:
    """Per-pattern weights as the robust LS-SVM makes them (Suykens, De Brabanter, Lukas & Vandewalle,
    Neurocomputing 2002): most ``v_i = 1``; a quarter of the patterns weighed down, log-uniformly in
    ``[1e-3, 1]`` (Hampel's weights of outliers); one in ten weighed up, uniformly in ``[1, 3]`` (any ``v_i > 0`` is
    the problem's). Seeded: the same ``(n, seed)`` gives the same weights."""
    rng = np.random.default_rng(seed)
    v = np.ones(n)
    u = rng.random(n)
    down, up = u < 0.25, u > 0.9
    v[down] = 10.0 ** rng.uniform(-3.0, 0.0, int(down.sum()))
    v[up] = rng.uniform(1.0, 3.0, int(up.sum()))
    return v


def _seed_of(name: str) -> int:
    import zlib

    return zlib.crc32(name.split("@")[0].encode())


def weights_of(inst: Instance) -> np.ndarray:
    """The weights of ``inst``: its own, or :func:`default_weights` seeded by its name (the user's data, an instance
    made without them)."""
    if inst.weights is not None:
        return np.asarray(inst.weights, dtype=float)
    return default_weights(inst.N, _seed_of(inst.name))


def _with_weights(inst: Instance, v: np.ndarray, words: str) -> Instance:
    desc = f"{inst.description}; {words}" if inst.description else words
    return Instance(inst.name, inst.X, inst.y, inst.X_test, inst.kernel, dict(inst.kernel_params), dict(inst.hyper),
                    inst.unique, desc, weights=v)


def weighted_instances(which: str, regression: bool, n_train: int | None = None) -> list[Instance]:
    """The kernel instances of ``which`` (:func:`kernel_instances`) with weights ``v_i`` (:func:`default_weights`,
    seeded by the instance's name); the adversarial suite adds weights spread over eight decades and weights of
    1e-8 (patterns all but removed: ``1/(C v_i)`` dominates their row of the system)."""
    out = []
    for inst in kernel_instances(which, regression, n_train):
        v = default_weights(inst.N, _seed_of(inst.name))
        out.append(_with_weights(inst, v, f"weights v in [{v.min():.2g}, {v.max():.2g}]"))
    if which == "adversarial":
        base = kernel_instances("quick", regression)[1]
        rng = np.random.default_rng(71)
        v = 10.0 ** rng.uniform(-4.0, 4.0, base.N)
        out.append(_with_weights(Instance("a-weights-1e-4-to-1e4", base.X, base.y, base.X_test, base.kernel,
                                          dict(base.kernel_params), dict(base.hyper), True, base.description),
                                 v, "weights log-uniform in [1e-4, 1e4]"))
        v = np.ones(base.N)
        v[::5] = 1e-8
        out.append(_with_weights(Instance("a-weights-1e-8", base.X, base.y, base.X_test, base.kernel,
                                          dict(base.kernel_params), dict(base.hyper), True, base.description),
                                 v, "every fifth weight 1e-8, the others 1"))
    return out


# ------------------------------------------------------------------------------ the fixed-size LS-SVM's primal


def nystrom_features(X, X_test, n_prototypes: int, sigma: float) -> tuple[np.ndarray, np.ndarray]:
    """The Nystrom features of the RBF kernel on the first ``n_prototypes`` rows of ``X`` (the fixed-size LS-SVM's,
    004 §1 and its reference [7]): ``phi(x) = k(x, P) U diag(lam)^(-1/2)`` over the eigenpairs of ``K_PP`` above
    ``M u lam_max``, whose inner products are ``k(x, P) K_PP^+ k(P, z)``; for ``X`` and ``X_test``. Written here
    again (verify never imports the solvers)."""
    P = X[:n_prototypes]
    lam, U = np.linalg.eigh(kernel_matrix(P, None, kernel="rbf", sigma=sigma))
    keep = lam > P.shape[0] * np.finfo(float).eps * max(float(lam[-1]), 0.0)
    T = U[:, keep] / np.sqrt(lam[keep])
    return (kernel_matrix(X, P, kernel="rbf", sigma=sigma) @ T,
            kernel_matrix(X_test, P, kernel="rbf", sigma=sigma) @ T)


def _fixed_size_suite(which: str, add: Callable, n: int | None) -> None:
    def nys(seed, N, d, M, sigma):
        X, y, Xte = _regress(seed, n or N, d)
        return (*nystrom_features(X, Xte, M, sigma), y)

    if which == "quick":
        add("q-nystrom-30", *nys(81, 30, 2, 8, 1.0), 10.0, "Nystrom features of 8 prototypes, RBF sigma = 1")
        X, y, Xte = _regress(82, n or 20, 2)
        add("q-raw-20", X, Xte, y, 1.0, "the raw features (linear kernel)")
        add("q-nystrom-60", *nys(83, 60, 3, 20, 2.0), 0.1, "Nystrom features of 20 prototypes, RBF sigma = 2")
    elif which == "standard":
        add("s-nystrom-300", *nys(91, 300, 2, 30, 1.0), 10.0, "30 prototypes")
        add("s-nystrom-2000", *nys(92, 2000, 5, 60, 2.0), 100.0, "60 prototypes")
        X, y, Xte = _regress(93, n or 500, 20)
        add("s-raw-500x20", X, Xte, y, 1.0, "the raw features (linear kernel)")
    elif which == "adversarial":
        add("a-C-1e-4", *nys(101, 40, 2, 10, 1.0), 1e-4, "tiny C: w near 0, b the mean")
        add("a-C-1e4", *nys(102, 40, 2, 10, 1.0), 1e4, "huge C")
        add("a-sigma-to-0", *nys(103, 40, 2, 10, 1e-3), 1.0, "sigma -> 0: each prototype its own indicator feature")
        add("a-sigma-to-inf", *nys(104, 40, 2, 10, 1e3), 1.0, "sigma -> inf: K_PP = 11' up to 1e-6, rank 1 or 2")
        Z, Zte, y = nys(105, 40, 2, 6, 1.0)
        add("a-duplicate-columns", np.hstack([Z, Z[:, :3]]), np.hstack([Zte, Zte[:, :3]]), y, 1.0,
            "three features repeated: X'X singular")
        Z, Zte, y = nys(106, 40, 2, 6, 1.0)
        add("a-offset-1e3", Z + 1e3, Zte + 1e3, y, 1.0, "features offset by 1e3: centring cancels 6 digits")
        X, y, Xte = _regress(107, 16, 2)
        add("a-identical-rows", np.tile(X[:1], (16, 1)), Xte, y, 1.0, "16 copies of one pattern, 16 targets")
    elif which == "real":
        for k, (name, M) in enumerate((("mcycle", 20), ("synth.tr", 30))):
            X, y = load_dataset(name, scale="standard")
            if name == "mcycle":
                y = y / float(np.std(y))
            perm = np.random.default_rng(300 + k).permutation(X.shape[0])
            tr, te = perm[:min(120, int(0.66 * X.shape[0]))], perm[min(120, int(0.66 * X.shape[0])):][:60]
            Z, Zte = nystrom_features(X[tr], X[te], M, 0.5 if name == "mcycle" else 1.0)
            add(f"r-{name}", Z, Zte, y[tr], 1.0, f"{name}: {tr.size} patterns, Nystrom features of {M} prototypes")
    else:
        raise ValueError(f"suite must be one of {list(SUITES)}; got {which!r}")


def fixed_size_instances(which: str, n_train: int | None = None) -> list[Instance]:
    """The instances of suite ``which`` for the fixed-size LS-SVM's primal (ridge with a free bias on features):
    Nystrom features (:func:`nystrom_features`) of regression data, raw features, and the hard cases (tiny and huge
    C, sigma -> 0 and inf, repeated columns, features offset by 1e3, identical rows); hyperparameter ``C``."""
    out: list[Instance] = []

    def add(name, Z, Zte, y, C, desc=""):
        if n_train is not None:
            name = f"{name}@{n_train}"
        out.append(Instance(name, Z, y, Zte, "linear", {}, {"C": C}, True, desc))

    _fixed_size_suite(which, add, n_train)
    return out


# ------------------------------------------------------------------------------ the user's data


def load_csv(path) -> tuple[np.ndarray, np.ndarray]:
    """Read ``FILE.csv`` for ``svmref verify --data``: numbers, comma-separated, labels in the last column.

    A first line that is not numeric is taken as a header. Raises ``ValueError`` saying what is wrong
    (not numeric, fewer than 2 columns, a missing value, fewer than 4 rows).
    """
    rows = []
    with open(path, newline="", encoding="utf-8") as fh:
        for k, row in enumerate(csv.reader(fh)):
            if not row or all(not c.strip() for c in row):
                continue
            try:
                rows.append([float(c) for c in row])
            except ValueError:
                if k == 0 and not rows:
                    continue  # a header
                raise ValueError(f"line {k + 1} is not numeric: {','.join(row)[:80]!r}") from None
    if not rows:
        raise ValueError("no data rows")
    width = {len(r) for r in rows}
    if len(width) != 1:
        raise ValueError(f"rows have different numbers of columns: {sorted(width)}")
    A = np.asarray(rows, dtype=float)
    if A.shape[1] < 2:
        raise ValueError("need at least one feature column and the label column (the last)")
    if not np.all(np.isfinite(A)):
        i, j = np.argwhere(~np.isfinite(A))[0]
        raise ValueError(f"row {i + 1}, column {j + 1} is not finite ({A[i, j]})")
    if A.shape[0] < 4:
        raise ValueError(f"need at least 4 rows; got {A.shape[0]}")
    return A[:, :-1], A[:, -1]


def scale_columns(X, path: str | None = None) -> np.ndarray:
    """Each column of ``X`` divided by a power of two near its largest magnitude, before it is standardised.

    Standardising (``(x - mean) / std`` per column) squares the values: at magnitudes near the ends of the
    floating-point range (``1e200``: the squares overflow to ``inf``; ``1e-200``: they underflow to 0) the
    standard deviation comes out ``inf`` or 0, and every feature would silently become 0. Dividing column
    ``j`` by ``2**e_j``, with ``e_j`` the binary exponent of ``max_i |X_ij|`` (``numpy.frexp``), brings its
    largest magnitude into ``[0.5, 1)``. Standardising is invariant to a positive scale, and a power of two
    scales every rounding of the standardisation exactly, so for data that could be standardised as given
    the result is the same, bit for bit (where no intermediate value is subnormal); an all-zero column is
    left as it is.

    Parameters
    ----------
    X : array of shape (N, d)
        The features, finite.
    path : str, optional
        How the error message names the data (None: it does not; ``svmref verify --data`` names the option and
        the file before it).

    Returns
    -------
    numpy.ndarray
        The scaled features, a new array.

    Raises
    ------
    ValueError
        When every feature column is constant: standardised, every feature is 0 and there is nothing to learn.
    """
    X = np.array(X, dtype=float)
    peak = np.max(np.abs(X), axis=0) if X.shape[0] else np.zeros(X.shape[1])
    _, exponent = np.frexp(peak)
    X = np.ldexp(X, -exponent[None, :])  # exact: a power of two; an all-zero column has exponent 0
    if X.shape[0] and np.all(np.ptp(X, axis=0) == 0):
        where = f" of {path}" if path else ""
        raise ValueError(f"every feature column{where} is constant ({X.shape[1]} column(s) before the last): "
                         "standardised, every feature would be 0; give at least one column that varies")
    return X


def check_targets(y, path: str | None = None) -> None:
    """Refuse regression targets whose squares overflow: no objective (quadratic in them) could be computed.

    The targets are kept in their units (epsilon-SVR's ``epsilon`` is in those units, so they cannot be rescaled
    behind the user's back). Every objective and residual of a regression formulation holds ``sum_i y_i^2`` or
    terms of its size; where that sum is not a finite float64, the check of any answer would be ``inf`` or
    ``nan`` and fail for reasons that are not the solver's.

    Parameters
    ----------
    y : array of shape (N,)
        The targets, finite.
    path : str, optional
        How the error message names the data (None: it does not).

    Raises
    ------
    ValueError
        Naming the largest target and the power of ten to divide the targets by.
    """
    y = np.asarray(y, dtype=float)
    peak = float(np.max(np.abs(y))) if y.size else 0.0
    if peak == 0.0:
        return
    _, e = np.frexp(peak)
    square_sum = float(np.sum(np.square(np.ldexp(y, -int(e)))))  # exact scaling: cannot overflow
    try:
        math.ldexp(square_sum, 2 * int(e))  # the sum of the squares, in float64
    except OverflowError:
        power = math.ceil(math.log10(peak))
        where = f" of {path}" if path else ""
        raise ValueError(f"the targets (the last column{where}) reach {peak:.3g}: the sum of their squares "
                         f"overflows float64, so no objective can be computed; divide them by 1e{power} "
                         "(verify keeps the targets in their units; --epsilon is in the same units)") from None

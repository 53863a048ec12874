"""Test instances for :func:`svmref.verify.check`: deterministic (seeded), grouped in suites.

A suite is a list of :class:`Instance` for one formulation (``suite(name, formulation)``):

``quick``        three small random problems (N <= 30; linear, RBF, polynomial kernels): seconds;
``standard``     N from 50 to 300, linear, polynomial and RBF kernels, C from 0.1 to 1000;
``adversarial``  duplicates with conflicting labels, identical points, C = 1e-4 and 1e4, sigma -> 0
                 (K -> I) and sigma -> inf (K -> 11'), separable data with huge C, a rank-deficient
                 linear kernel, and a non-PSD MLP kernel (the reference is then *not convex*, which
                 the report says instead of passing or failing);
``real``         small subsamples of the real data sets shipped with the package (Heart, Sonar,
                 Ionosphere, Titanic, Ripley's synth, Breast; Motorcycle for regression).

Every instance draws its data from ``numpy.random.default_rng(seed)`` with a fixed seed, so a
report can be reproduced from its instance names. Held-out points (``X_test``) come from the same
distribution (or the rest of the real data set) and are used to compare decision functions.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from svmref._validation import is_psd
from svmref.kernels import kernel_matrix

__all__ = ["Instance", "SUITES", "suite", "TASK"]

SUITES = ("quick", "standard", "adversarial", "real")

#: What each formulation takes: "box" (K, y, C), "regression" (K, targets, C), "rls" (K, y, gamma),
#: "features" (X, y, C, mu).
TASK = {
    "l1_svm": "box",
    "l2_svm": "box",
    "ls_svm": "box",
    "least_1norm_svm": "box",
    "ls_svm_regression": "regression",
    "sparse_ls_svm": "regression",
    "rls": "rls",
    "support_features": "features",
}


@dataclass
class Instance:
    """One problem: data, held-out points, kernel and hyperparameters.

    ``hyper`` holds the formulation's hyperparameters (``C``; ``gamma`` for RLS; ``C, mu`` for the
    support features machine). ``unique`` says whether the optimal dual is unique (duplicates with
    conflicting labels make it non-unique: only objective values and KKT residuals are then compared).
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
        """A hashable identity (for caching references)."""
        return (self.name, self.kernel, tuple(sorted(self.kernel_params.items())),
                tuple(sorted((k, float(v)) for k, v in self.hyper.items())), self.N)


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


# ------------------------------------------------------------------------------------ suites


def _kernel_instances(which: str, task: str) -> list[Instance]:
    """Kernel instances of a suite; ``task`` is "box", "regression" or "rls"."""
    reg = task in ("regression", "rls")
    out: list[Instance] = []

    def add(name, X, y, Xte, kernel, kp, C, unique=True, desc="", gamma=None):
        hyper = {"gamma": gamma if gamma is not None else 1.0 / (C * X.shape[0])} if task == "rls" else {"C": C}
        out.append(Instance(name, X, y, Xte, kernel, dict(kp), hyper, unique, desc))

    def data(seed, n, d, regression_target=False, n_test=40, shift=2.0):
        if reg and regression_target:
            return _regress(seed, n, d, n_test)
        return _classif(seed, n, d, n_test, shift)

    if which == "quick":
        add("q-linear-20", *data(1, 20, 2), "linear", {}, 1.0, desc="two Gaussians, linear kernel")
        add("q-rbf-30", *data(2, 30, 2, True), "rbf", {"sigma": 1.0}, 10.0, desc="RBF sigma = 1")
        add("q-poly-24", *data(3, 24, 3), "poly", {"c": 1.0, "d": 2}, 0.1, desc="polynomial degree 2")
    elif which == "standard":
        add("s-linear-50", *data(11, 50, 5), "linear", {}, 0.1)
        add("s-poly-100", *data(12, 100, 4, True), "poly", {"c": 2.0, "d": 3}, 1.0)
        add("s-rbf-200", *data(13, 200, 5), "rbf", {"sigma": 2.0}, 10.0)
        add("s-rbf-300", *data(14, 300, 2, True, 60), "rbf", {"sigma": 0.7}, 100.0)
        add("s-linear-150", *data(15, 150, 20), "linear", {}, 1.0)
        add("s-poly-80", *data(16, 80, 2), "poly", {"c": 1.0, "d": 2}, 0.5)
    elif which == "adversarial":
        X, y, Xte = data(21, 20, 2)
        Xd = np.vstack([X, X[:10]])
        yd = np.concatenate([y, -y[:10]])
        add("a-duplicates-conflicting", Xd, yd, Xte, "rbf", {"sigma": 1.0}, 1.0, unique=False,
            desc="10 points repeated with the opposite label: Q singular, alpha not unique")
        rng = np.random.default_rng(22)
        Xi = np.tile(rng.standard_normal((1, 2)), (16, 1))
        yi = np.array([1.0, -1.0] * 8) if not reg else rng.standard_normal(16)
        add("a-identical-points", Xi, yi, data(22, 4, 2)[2], "linear", {}, 1.0, unique=False,
            desc="16 copies of one point with both labels: K = const, rank 1")
        add("a-C-1e-4", *data(23, 30, 2, True), "rbf", {"sigma": 1.0}, 1e-4, desc="tiny C")
        add("a-C-1e4", *data(24, 30, 2, True), "rbf", {"sigma": 1.0}, 1e4, desc="huge C")
        add("a-sigma-to-0", *data(25, 30, 2), "rbf", {"sigma": 1e-3}, 1.0, desc="sigma -> 0: K = I")
        add("a-sigma-to-inf", *data(26, 30, 2), "rbf", {"sigma": 1e3}, 1.0,
            desc="sigma -> inf: K = 11' up to 1e-6")
        add("a-separable-huge-C", *data(27, 30, 2, shift=8.0), "linear", {}, 1e6,
            desc="separable data, C = 1e6 (hard margin)")
        Xr, yr, Xrte = data(28, 40, 2)
        Xr = np.hstack([Xr, Xr[:, :1], 2 * Xr[:, 1:2]])
        Xrte = np.hstack([Xrte, Xrte[:, :1], 2 * Xrte[:, 1:2]])
        add("a-rank-deficient-linear", Xr, yr, Xrte, "linear", {}, 1.0,
            desc="40 points, 4 features of which 2 are copies: K has rank 2")
        add("a-ill-conditioned-poly", *data(16, 80, 2), "poly", {"c": 1.0, "d": 2}, 1000.0,
            desc="polynomial kernel with entries up to ~450 and C = 1000: margins need more than single precision")
        add("a-mlp-not-psd", *data(29, 30, 2), "mlp", {"k": 1.0, "theta": -1.0}, 1.0,
            desc="MLP kernel tanh(x'z - 1) (002): not PSD, the reference is not convex")
        if task == "rls":
            add("a-gamma-1e-8", *data(30, 30, 2, True), "rbf", {"sigma": 1.0}, 1.0, gamma=1e-8,
                desc="tiny gamma: (m gamma I + K) nearly singular")
            add("a-gamma-1e4", *data(31, 30, 2, True), "rbf", {"sigma": 1.0}, 1.0, gamma=1e4, desc="huge gamma")
    elif which == "real":
        from svmref.datasets import load_dataset

        sets = ["mcycle"] if reg else []
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
            add(f"r-{name}", X[tr], ytr, X[te], "rbf", {"sigma": sigma}, 1.0,
                unique=name not in ("titanic",),
                desc=f"{name}: {ntr} of {X.shape[0]} patterns, standardised, RBF sigma = {sigma:.3g}")
    else:
        raise ValueError(f"suite must be one of {list(SUITES)}; got {which!r}")
    if not reg:
        out = [i for i in out if np.all(np.isin(i.y, (-1.0, 1.0)))]
    return out


def _feature_instances(which: str) -> list[Instance]:
    out: list[Instance] = []

    def add(name, X, y, Xte, C, mu, unique=True, desc=""):
        out.append(Instance(name, X, y, Xte, "linear", {}, {"C": C, "mu": mu}, unique, desc))

    if which == "quick":
        add("q-features-20x10-mu0", *_features(41, 20, 10), 1.0, 0.0, desc="mu = 0: the L1-SVM with C/2")
        add("q-features-20x10-mu0.3", *_features(42, 20, 10), 1.0, 0.3)
        add("q-features-24x30-mu0.7", *_features(43, 24, 30), 10.0, 0.7, desc="n > N")
    elif which == "standard":
        add("s-features-50x50-mu0.5", *_features(51, 50, 50), 1.0, 0.5, desc="003 §3.1: 25 + 25 points, n = 50")
        add("s-features-100x20-mu0.2", *_features(52, 100, 20), 10.0, 0.2)
        add("s-features-200x10-mu0.9", *_features(53, 200, 10), 0.1, 0.9)
        add("s-features-60x200-mu0.6", *_features(54, 60, 200), 100.0, 0.6, desc="n >> N")
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
        from svmref.datasets import load_dataset

        for k, name in enumerate(["sonar", "heart", "ionosphere"]):
            X, y = load_dataset(name, scale="standard")
            rng = np.random.default_rng(200 + k)
            perm = rng.permutation(X.shape[0])
            ntr = min(100, int(0.66 * X.shape[0]))
            add(f"r-features-{name}", X[perm[:ntr]], y[perm[:ntr]], X[perm[ntr:ntr + 60]], 1.0, 0.3,
                desc=f"{name}: {ntr} patterns, {X.shape[1]} standardised features")
    else:
        raise ValueError(f"suite must be one of {list(SUITES)}; got {which!r}")
    return out


_CACHE: dict = {}


def suite(name: str, formulation: str) -> list[Instance]:
    """The instances of suite ``name`` for ``formulation`` (cached: the same objects on each call)."""
    if formulation not in TASK:
        raise ValueError(f"formulation must be one of {sorted(TASK)}; got {formulation!r}")
    if name not in SUITES:
        raise ValueError(f"suite must be one of {list(SUITES)}; got {name!r}")
    task = TASK[formulation]
    key = (name, task)
    if key not in _CACHE:
        _CACHE[key] = _feature_instances(name) if task == "features" else _kernel_instances(name, task)
    return _CACHE[key]

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

``svr`` (epsilon-SVR) runs on the regression instances of each suite, each with an ``epsilon``
(:data:`SVR_EPSILONS`).

Every instance draws its data from ``numpy.random.default_rng(seed)`` with a fixed seed, so a
report can be reproduced from its instance names. Held-out points (``X_test``) come from the same
distribution (or the rest of the real data set) and are used to compare decision functions.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from svmref._thresholds import PSD_RTOL
from svmref._validation import check_nonnegative, is_psd
from svmref.kernels import kernel_matrix

__all__ = ["Instance", "SUITES", "SCALABLE", "suite", "TASK", "load_csv", "from_data"]

SUITES = ("quick", "standard", "adversarial", "real")

#: What each formulation takes: "box" (K, y, C), "regression" (K, targets, C), "rls" (K, y, gamma),
#: "features" (X, y, C, mu), "svr" (K, targets, C, epsilon=...; the epsilon-SVR).
TASK = {
    "l1_svm": "box",
    "l2_svm": "box",
    "ls_svm": "box",
    "least_1norm_svm": "box",
    "ls_svm_regression": "regression",
    "sparse_ls_svm": "regression",
    "rls": "rls",
    "support_features": "features",
    "svr": "svr",
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
        """Whether K is PSD up to round-off (``svmref._validation.is_psd`` at the reference's
        :data:`svmref._thresholds.PSD_RTOL`)."""
        return is_psd(self.K, rtol=PSD_RTOL)

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


def _kernel_instances(which: str, task: str, n_train: int | None = None) -> list[Instance]:
    """Kernel instances of a suite; ``task`` is "box", "regression" or "rls"; ``n_train`` rescales (see :func:`suite`)."""
    reg = task in ("regression", "rls")
    out: list[Instance] = []

    def add(name, X, y, Xte, kernel, kp, C, unique=True, desc="", gamma=None):
        hyper = {"gamma": gamma if gamma is not None else 1.0 / (C * X.shape[0])} if task == "rls" else {"C": C}
        if n_train is not None:
            name = f"{name}@{n_train}"
        out.append(Instance(name, X, y, Xte, kernel, dict(kp), hyper, unique, desc))

    def data(seed, n, d, regression_target=False, n_test=40, shift=2.0):
        n = n_train or n
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


def _feature_instances(which: str, n_train: int | None = None) -> list[Instance]:
    out: list[Instance] = []

    def add(name, X, y, Xte, C, mu, unique=True, desc=""):
        if n_train is not None:
            name = f"{name}@{n_train}"
        out.append(Instance(name, X, y, Xte, "linear", {}, {"C": C, "mu": mu}, unique, desc))

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


#: epsilon-SVR: the tube half-width of each instance (the regression instances of the suite, by base name).
#: Default :data:`SVR_EPSILON`; a few are set so that the suites hold epsilon = 0 (least absolute
#: deviations: every pattern a support vector, alpha^+ alpha^- = 0 no longer forced) and a wide tube
#: (most targets inside it, few support vectors).
SVR_EPSILON = 0.1
SVR_EPSILONS = {"q-linear-20": 0.0, "q-poly-24": 0.5, "s-linear-50": 0.0, "s-rbf-200": 0.5, "a-C-1e4": 0.05,
                "a-duplicates-conflicting": 0.0, "r-heart": 0.5}


def _svr_instances(which: str, n_train: int | None = None) -> list[Instance]:
    """The regression instances of ``which`` with an epsilon each (:data:`SVR_EPSILONS`), for ``svr``."""
    out = []
    for inst in _kernel_instances(which, "regression", n_train):
        base = inst.name.split("@")[0]
        eps = SVR_EPSILONS.get(base, SVR_EPSILON)
        desc = f"{inst.description}; epsilon = {eps:g}" if inst.description else f"epsilon = {eps:g}"
        out.append(Instance(inst.name, inst.X, inst.y, inst.X_test, inst.kernel, dict(inst.kernel_params),
                            {**inst.hyper, "epsilon": eps}, inst.unique, desc))
    return out


_CACHE: dict = {}


#: The suites ``n=`` can rescale (the generated ones; adversarial and real instances have their own sizes).
SCALABLE = ("quick", "standard")


def suite(name: str, formulation: str, n: int | None = None) -> list[Instance]:
    """The instances of suite ``name`` for ``formulation`` (cached: the same objects on each call).

    ``n`` (``svmref verify --n N``): every instance of a generated suite (``quick``, ``standard``) is drawn
    with ``n`` training patterns instead of its own size (same kernel, hyperparameters and seed; the
    held-out points unchanged) and named ``NAME@n`` (``s-rbf-200@2000``); ``C`` and, for RLS,
    ``gamma = 1/(C N)`` follow the instance's rule.
    """
    if formulation not in TASK:
        raise ValueError(f"formulation must be one of {sorted(TASK)}; got {formulation!r}")
    if name not in SUITES:
        raise ValueError(f"suite must be one of {list(SUITES)}; got {name!r}")
    if n is not None:
        if name not in SCALABLE:
            raise ValueError(f"n rescales the suites {list(SCALABLE)} only; suite {name!r} has fixed sizes")
        if isinstance(n, bool) or int(n) != n or n < 4:
            raise ValueError(f"n must be an integer >= 4; got {n!r}")
        n = int(n)
    task = TASK[formulation]
    key = (name, task, n)
    if key not in _CACHE:
        if task == "features":
            _CACHE[key] = _feature_instances(name, n)
        elif task == "svr":
            _CACHE[key] = _svr_instances(name, n)
        else:
            _CACHE[key] = _kernel_instances(name, task, n)
    return _CACHE[key]


def load_csv(path) -> tuple[np.ndarray, np.ndarray]:
    """Read ``FILE.csv`` for ``svmref verify --data``: numbers, comma-separated, labels in the last column.

    A first line that is not numeric is taken as a header. Raises ``ValueError`` saying what is wrong
    (not numeric, fewer than 2 columns, a missing value, fewer than 4 rows).
    """
    import csv

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


def from_data(X, y, formulation: str, *, C: float = 1.0, mu: float = 0.5, sigma: float | None = None,
              kernel: str = "rbf", test_fraction: float = 0.2, seed: int = 0, name: str = "data",
              epsilon: float = SVR_EPSILON) -> Instance:
    """One instance from the user's data (``svmref verify --data``).

    Features are standardised (mean 0, standard deviation 1 per column; constant columns left at 0);
    a random ``test_fraction`` (at most 500 patterns, seeded) is held out to compare decision
    functions, the rest is the training set. Classification labels must take two values: the smaller
    becomes -1, the larger +1. Kernel: RBF with ``sigma = sqrt(d)`` unless given (``kernel="linear"``
    possible); the support features machine always works on ``X`` (``C``, ``mu``); RLS uses
    ``gamma = 1/(C N)``; ``svr`` uses ``C`` and ``epsilon`` (in the units of ``y``, which are left as given).
    """
    X = np.asarray(X, dtype=float)
    y = np.asarray(y, dtype=float)
    task = TASK[formulation]
    if task in ("box", "features"):
        labels = np.unique(y)
        if labels.size != 2:
            raise ValueError(f"a {formulation} needs two classes in the last column; got {labels.size} distinct "
                             f"values ({', '.join(f'{v:g}' for v in labels[:5])}{', ...' if labels.size > 5 else ''})")
        y = np.where(y == labels[1], 1.0, -1.0)
    sd = X.std(axis=0)
    X = (X - X.mean(axis=0)) / np.where(sd > 0, sd, 1.0)
    rng = np.random.default_rng(seed)
    perm = rng.permutation(X.shape[0])
    n_test = min(500, max(1, int(round(test_fraction * X.shape[0]))))
    te, tr = perm[:n_test], perm[n_test:]
    if task in ("box", "features") and np.unique(y[tr]).size < 2:
        raise ValueError("the training part has one class only; give more rows of the other class")
    if task == "features":
        return Instance(name, X[tr], y[tr], X[te], "linear", {}, {"C": float(C), "mu": float(mu)}, True,
                        f"user data: {tr.size} training patterns, {X.shape[1]} standardised features")
    kp = {} if kernel == "linear" else {"sigma": float(sigma) if sigma else float(np.sqrt(X.shape[1]))}
    hyper = {"gamma": 1.0 / (C * tr.size)} if task == "rls" else {"C": float(C)}
    if task == "svr":
        hyper["epsilon"] = check_nonnegative(epsilon, "epsilon", "width of the insensitive tube")
    return Instance(name, X[tr], y[tr], X[te], kernel, kp, hyper, True,
                    f"user data: {tr.size} training patterns, {X.shape[1]} standardised features, {kernel} kernel")

"""The shared core: kernels, input checks, shipped data sets, the command line, import hygiene."""
from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from svmref import datasets, kernels
from svmref._validation import check_gram, check_kernel_memory, check_labels, check_mu, check_positive

RNG = np.random.default_rng(0)
X = RNG.normal(size=(12, 3))
Z = RNG.normal(size=(5, 3))


def brute(k, A, B):
    return np.array([[k(a, b) for b in B] for a in A])


@pytest.mark.parametrize(
    "fn, params, pointwise",
    [
        (kernels.linear_kernel, {}, lambda a, b: a @ b),
        (kernels.polynomial_kernel, {"c": 2.0, "d": 3}, lambda a, b: (1 + a @ b / 2.0) ** 3),
        (kernels.rbf_kernel, {"sigma": 0.7}, lambda a, b: np.exp(-np.sum((a - b) ** 2) / 0.49)),
        (kernels.gaussian_kernel, {"sigma": 0.7}, lambda a, b: np.exp(-np.sum((a - b) ** 2) / (2 * 0.49))),
        (kernels.mlp_kernel, {"k": 0.5, "theta": -0.2}, lambda a, b: np.tanh(0.5 * a @ b - 0.2)),
    ],
)
def test_kernels_match_their_formulas(fn, params, pointwise):
    np.testing.assert_allclose(fn(X, Z, **params), brute(pointwise, X, Z), rtol=1e-12, atol=1e-12)
    K = fn(X, **params)
    np.testing.assert_allclose(K, brute(pointwise, X, X), rtol=1e-12, atol=1e-12)
    assert np.array_equal(K, K.T)  # exactly symmetric, as the solvers assume


def test_rbf_diagonal_is_exactly_one_and_psd():
    K = kernels.rbf_kernel(X * 1e3, sigma=1e-3)
    assert np.all(np.diag(K) == 1.0)
    assert np.linalg.eigvalsh(kernels.rbf_kernel(X, sigma=2.0))[0] > -1e-12


def test_kernel_matrix_by_name_and_errors():
    np.testing.assert_array_equal(kernels.kernel_matrix(X, kernel="rbf", sigma=2.0), kernels.rbf_kernel(X, sigma=2.0))
    with pytest.raises(ValueError, match="kernel must be one of"):
        kernels.kernel_matrix(X, kernel="laplace")
    with pytest.raises(ValueError, match="sigma must be"):
        kernels.rbf_kernel(X, sigma=0.0)
    with pytest.raises(ValueError, match="same number of features"):
        kernels.rbf_kernel(X, Z[:, :2])
    with pytest.raises(ValueError, match="d \\(polynomial degree\\)"):
        kernels.polynomial_kernel(X, d=1.5)


def test_kernel_memory_guard():
    with pytest.raises(MemoryError, match="GiB"):
        check_kernel_memory(200_000)
    check_kernel_memory(1000)  # fine


def test_validation_messages_name_the_parameter():
    with pytest.raises(ValueError, match="^C must be"):
        check_positive(-1, "C")
    with pytest.raises(TypeError, match="C must be a real number"):
        check_positive("1", "C")
    with pytest.raises(ValueError, match="mu .*\\[0, 1\\)"):
        check_mu(1.0)
    with pytest.raises(ValueError, match="y must contain class labels"):
        check_labels([0, 1, 1])
    with pytest.raises(ValueError, match="symmetric"):
        check_gram(np.array([[1.0, 2.0], [0.0, 1.0]]))


@pytest.mark.parametrize("name", datasets.dataset_names())
def test_every_shipped_dataset_loads(name):
    X, y = datasets.load_dataset(name)
    info = datasets.DATASETS[name]
    assert X.ndim == 2 and X.shape[0] == y.shape[0] > 0 and np.all(np.isfinite(X))
    if info.task == "classification":
        assert set(np.unique(y)) == {-1.0, 1.0}
    Xs, _ = datasets.load_dataset(name, scale="minmax")
    assert Xs.min() >= 0.0 and Xs.max() <= 1.0


@pytest.mark.parametrize(
    "name, shape, n_pos",
    [  # counts from the provenance table (shared/data/PROVENANCE.md)
        ("heart", (270, 13), 120), ("titanic", (2201, 3), 711), ("german", (1000, None), 300),
        ("breast", (277, None), 81), ("synth.tr", (250, 2), 125), ("synth.te", (1000, 2), 500),
        ("letter", (None, 16), None), ("iris", (150, 4), 50),
    ],
)
def test_dataset_sizes_match_provenance(name, shape, n_pos):
    X, y = datasets.load_dataset(name)
    for got, want in zip(X.shape, shape):
        assert want is None or got == want
    if n_pos is not None:
        assert int(np.sum(y == 1)) == n_pos


def test_letter_keeps_only_v_and_w_and_mcycle_is_regression():
    X, y = datasets.load_dataset("letter")
    assert X.shape[0] < 20000 and set(np.unique(y)) == {-1.0, 1.0}
    Xm, ym = datasets.load_dataset("motorcycle")
    assert Xm.shape == (133, 1) and ym.min() < -100  # accel in g, down to about -134
    with pytest.raises(ValueError, match="name must be one of"):
        datasets.load_dataset("mnist")


def test_importing_solvers_does_not_import_cvxpy_or_matplotlib():
    code = (
        "import sys, svmref.solvers, svmref.solvers.kernels, svmref; "
        "import importlib; [importlib.import_module(m) for m in "
        "('svmref.solvers.smo', 'svmref.solvers.linear', 'svmref.solvers.isls', 'svmref.solvers.support_features') "
        " if importlib.util.find_spec(m)]; "
        "bad = [m for m in ('cvxpy', 'matplotlib', 'svmref.formulations') if m in sys.modules]; "
        "print(bad); sys.exit(1 if bad else 0)"
    )
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert res.returncode == 0, res.stdout + res.stderr


def test_formulations_do_not_import_solvers():
    code = (
        "import sys, svmref.formulations; "
        "sys.exit(1 if any(m.startswith('svmref.solvers') for m in sys.modules) else 0)"
    )
    assert subprocess.run([sys.executable, "-c", code]).returncode == 0


def test_cli_help_and_datasets():
    out = subprocess.run([sys.executable, "-m", "svmref.cli", "--help"], capture_output=True, text=True)
    assert out.returncode == 0 and "verify" in out.stdout and "figure" in out.stdout
    out = subprocess.run([sys.executable, "-m", "svmref.cli", "datasets"], capture_output=True, text=True)
    assert out.returncode == 0 and "synth.tr" in out.stdout
    out = subprocess.run([sys.executable, "-m", "svmref.cli", "frobnicate"], capture_output=True, text=True)
    assert out.returncode == 2 and "invalid choice" in out.stderr


def test_positive_values_whose_reciprocal_overflows_are_refused_by_name():
    from svmref._validation import check_scaled

    with pytest.raises(ValueError, match=r"C = 5e-324 is too small: 1/C overflows"):
        check_positive(5e-324, "C")
    assert check_positive(1e-300, "C") == 1e-300
    with pytest.raises(ValueError, match=r"C = 1e\+300 is too large: C x N x max\|K\| = C x 1e\+10 overflows"):
        check_scaled(1e300, "C", 1e10, "N x max|K|")
    with pytest.raises(ValueError, match=r"gamma = 1e-300 is too small: gamma x .* underflows"):
        check_scaled(1e-300, "gamma", 1e-10, "N x max|K|")
    assert check_scaled(1e6, "C", 1e3) == 1e6


@pytest.mark.parametrize("fn, scale, match", [
    (lambda A: kernels.rbf_kernel(A), 1e200, r"squared distances .* overflows float64: X has entries up to"),
    (lambda A: kernels.gaussian_kernel(A), 1e200, r"overflows float64: X has entries up to"),
    (lambda A: kernels.linear_kernel(A), 1e200, r"linear kernel .* overflows float64: X has entries up to"),
    (lambda A: kernels.linear_kernel(A), 1e-200, r"underflows to 0 for every pair: X has entries up to"),
    (lambda A: kernels.polynomial_kernel(A, d=4), 1e80, r"polynomial kernel .* overflows float64"),
    (lambda A: kernels.rbf_kernel(A, Z * 1e200), 1.0, r"X has entries up to .* and Z up to"),
])
def test_kernel_overflow_is_refused_naming_the_data_and_scale(fn, scale, match):
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # and no numpy RuntimeWarning on the way
        with pytest.raises(ValueError, match=match):
            fn(X * scale)


def test_rbf_sigma_whose_square_underflows_is_refused_and_limits_are_exact():
    with pytest.raises(ValueError, match=r"sigma = 1e-200 is out of range"):
        kernels.rbf_kernel(X, sigma=1e-200)
    K0 = kernels.rbf_kernel(X * 1e-200)  # all distances underflow: K = 11' exactly, a genuine limit
    assert np.all(K0 == 1.0)
    KI = kernels.rbf_kernel(X, sigma=1e-150)  # K = I exactly
    assert np.array_equal(KI, np.eye(len(X)))


# ------------------------------------------------------------------------------------------------
# one home for the thresholds, one Gram check
# ------------------------------------------------------------------------------------------------
def test_thresholds_are_defined_once_and_imported():
    """The symmetry and PSD thresholds live in svmref._thresholds; the reference, the SMO engine, the kernel seam
    and the input checks use those objects (values as measured and tested before they moved)."""
    from svmref import _thresholds as T
    from svmref import _validation
    from svmref.formulations import _common
    from svmref.solvers import _qmatrix, smo

    assert (T.SYM_RTOL, T.PSD_RTOL, T.SMO_PSD_RTOL) == (1e-8, 1e-9, 1e-10)
    assert _common.PSD_RTOL is T.PSD_RTOL and smo.PSD_RTOL is T.SMO_PSD_RTOL and _qmatrix.SYM_RTOL is T.SYM_RTOL
    import inspect

    assert inspect.signature(_validation.check_gram).parameters["rtol"].default is T.SYM_RTOL
    assert inspect.signature(_validation.is_psd).parameters["rtol"].default is T.PSD_RTOL


def _gram_cases():
    rng = np.random.default_rng(3)
    A = rng.standard_normal((30, 4))
    K = kernels.rbf_kernel(A, sigma=1.3)
    cases = {"symmetric": K, "list": K.tolist(), "fortran": np.asfortranarray(K), "float32": K.astype(np.float32),
             "non-square": K[:, :-1], "vector": K[0], "empty": np.zeros((0, 0))}
    for da in (0.99e-8, 1.01e-8, 1e-3):
        K2 = K.copy()
        K2[3, 17] += da
        cases[f"asym {da:g}"] = K2
    for bad in (np.nan, np.inf):
        K2 = K.copy()
        K2[29, 2] = bad
        K2[5, 6] = bad  # the message names the first in row-major order, whichever a scan meets first
        cases[f"{bad}"] = K2
    big = K * 1e308
    big[0, 1] = -big[1, 0]
    cases["difference overflows"] = big
    return cases


@pytest.mark.parametrize("case", list(_gram_cases()))
def test_check_gram_gives_the_same_verdict_and_message_on_every_path(case):
    """check_gram alone, with the compiled scan as its fast path (the linear systems), and through the kernel
    seam of the SMO engines (sketch and exact scan): the same accepted matrix or the same error."""
    from svmref.solvers import _qmatrix, linear

    K = _gram_cases()[case]

    def outcome(f):
        try:
            return ("ok", np.asarray(f()).tobytes())
        except (ValueError, TypeError) as e:
            return (type(e).__name__, str(e))

    ref = outcome(lambda: check_gram(K))
    assert outcome(lambda: check_gram(K, fast=_qmatrix.gram_scan)) == ref
    assert outcome(lambda: linear._check_K(K)) == ref
    assert outcome(lambda: _qmatrix.PrecomputedKernel(K).K) == ref
    assert outcome(lambda: _qmatrix.PrecomputedKernel(K, exact_check=True).K) == ref
    assert (ref[0] == "ok") == (case in ("symmetric", "list", "fortran", "float32", "asym 9.9e-09"))


def test_linear_systems_take_the_row_sums_of_the_gram_check():
    """The row sums of |K| that the 1-norm condition estimate needs come from the Gram check's scan and are passed
    explicitly (no module state): a solve given them and one that recomputes them agree to the bit."""
    from svmref.solvers import linear

    rng = np.random.default_rng(4)
    K = kernels.rbf_kernel(rng.standard_normal((40, 3)), sigma=0.8)
    Kc, rows = linear._check_K_rows(K)
    assert Kc is K
    np.testing.assert_allclose(rows, np.abs(K).sum(axis=1), rtol=1e-14)
    R = np.asfortranarray(rng.standard_normal((40, 2)))
    X1, m1, _, rep1 = linear._shifted_solve(K, 1e-3, R, False, rows)
    X2, m2, _, rep2 = linear._shifted_solve(K, 1e-3, R, False)
    assert m1 == m2 == "cholesky" and rep1 == rep2 and np.array_equal(X1, X2)
    assert not [n for n, v in vars(linear).items() if isinstance(v, dict) and not n.startswith("__")]  # no module state

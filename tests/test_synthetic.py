"""svmref.datasets.two_hypercubes (003 §3.1): the documented construction, and the old import path."""
import numpy as np
import pytest

from svmref.datasets import two_hypercubes

ARGS = [dict(n_train_per_class=25, n=50, seed=0), dict(n_train_per_class=7, n=12, seed=3),
        dict(n_train_per_class=5, n=4, seed=1, normal=[1.0, -2.0], side=2.5)]


@pytest.mark.parametrize("kwargs", ARGS)
def test_old_import_is_the_same_generator(kwargs):
    """``svmref.solvers.support_features.two_hypercubes`` (where it used to live) still works and gives the
    same arrays for the same arguments and seed."""
    from svmref.solvers import support_features
    from svmref.solvers.support_features import two_hypercubes as via_import

    X, y = two_hypercubes(**kwargs)
    assert via_import is two_hypercubes  # a re-export of the one generator, not a copy
    for old in (support_features.two_hypercubes, via_import):
        Xo, yo = old(**kwargs)
        assert np.array_equal(X, Xo) and np.array_equal(y, yo)


def _householder(nu):
    v = -nu.copy()
    v[0] += 1.0
    return np.eye(nu.size) - 2.0 * np.outer(v, v) / (v @ v)


@pytest.mark.parametrize("kwargs", ARGS)
def test_documented_construction(kwargs):
    """Two cubes of side ``side`` sharing the face ``z_1 = 0`` (class +1 on ``z_1 >= 0``), mapped by the
    Householder reflection ``H`` with ``H e_1 = nu = normal/||normal||`` (default normal (5,4,3,2,1,0,...))."""
    m, n = kwargs["n_train_per_class"], kwargs["n"]
    side = kwargs.get("side", 1.0)
    normal = np.asarray(kwargs.get("normal", [5.0, 4.0, 3.0, 2.0, 1.0]))
    X, y = two_hypercubes(**kwargs)
    assert X.shape == (2 * m, n) and X.dtype == np.float64
    assert np.array_equal(y, np.r_[np.ones(m), -np.ones(m)])
    nu = np.zeros(n)
    nu[: normal.size] = normal / np.linalg.norm(normal)
    H = _householder(nu)
    assert np.allclose(H @ H, np.eye(n)) and np.allclose(H, H.T) and np.allclose(H[:, 0], nu)
    Z = X @ H  # z = H x (H symmetric, an involution)
    eps = 1e-12 * max(1.0, side)
    # the cube coordinates: z_1 in [0, side] for +1, [-side, 0] for -1; the others in [-side/2, side/2]
    assert np.all((Z[:m, 0] >= -eps) & (Z[:m, 0] <= side + eps))
    assert np.all((Z[m:, 0] <= eps) & (Z[m:, 0] >= -side - eps))
    assert np.all(np.abs(Z[:, 1:]) <= side / 2 + eps)
    # the shared face is nu'x = 0: nu'x = z_1 separates the classes exactly
    assert np.allclose(X @ nu, Z[:, 0]) and np.all(np.sign(X @ nu) == y)
    # beyond the support of normal, H is the identity: those features are the cube coordinates, class-free
    assert np.allclose(X[:, normal.size:], Z[:, normal.size:], rtol=0, atol=eps)


def test_default_normal_and_uniform_fill():
    """The default face normal is (5,4,3,2,1,0,...,0); a large sample fills each cube (uniform on the box)."""
    m = 2000
    X, y = two_hypercubes(m, 8, seed=5)
    nu = np.r_[5.0, 4.0, 3.0, 2.0, 1.0, 0.0, 0.0, 0.0] / np.sqrt(55.0)
    Z = X @ _householder(nu)
    # P(max of 2000 U[0,1] < 0.99) = 0.99^2000 ~ 2e-9, so these hold for any seed in practice
    assert Z[:m, 0].max() > 0.99 and Z[:m, 0].min() < 0.01
    assert Z[m:, 0].min() < -0.99 and Z[m:, 0].max() > -0.01
    assert np.all(Z[:, 1:].max(axis=0) > 0.49) and np.all(Z[:, 1:].min(axis=0) < -0.49)
    # the mean of U[0, 1] is 1/2 (standard error 1/sqrt(12 m) ~ 0.0065)
    assert abs(Z[:m, 0].mean() - 0.5) < 0.03 and abs(Z[m:, 0].mean() + 0.5) < 0.03


def test_normal_along_e1_is_the_identity():
    """``normal = e_1``: v = 0, no reflection, X is the cube sample itself."""
    X, y = two_hypercubes(10, 3, seed=2, normal=[1.0])
    assert np.all(np.sign(X[:, 0]) == y) and np.all(np.abs(X[:, 1:]) <= 0.5)


def test_seed_fixes_the_sample():
    X, y = two_hypercubes(25, 50, seed=0)
    X2, y2 = two_hypercubes(25, 50, seed=0)
    assert np.array_equal(X, X2) and np.array_equal(y, y2)
    assert not np.array_equal(X, two_hypercubes(25, 50, seed=1)[0])


@pytest.mark.parametrize("kwargs, match", [({"n": 3}, "n must be"), ({"n_train_per_class": 0}, "n_train_per_class"),
                                           ({"n_train_per_class": 2.5}, "n_train_per_class"),
                                           ({"side": -1.0}, "side"), ({"side": "1"}, "side"),
                                           ({"normal": [0, 0]}, "normal"), ({"normal": [1, np.nan]}, "normal")])
def test_bad_arguments(kwargs, match):
    with pytest.raises((ValueError, TypeError), match=match):
        two_hypercubes(**kwargs)

"""The kernel matrix as an operator made by blocks of rows: verify's residuals at N = 100 000 without an N x N matrix.

:class:`BlockKernel` stands where verify's residual functions (:mod:`svmref.verify.kkt`) take K: ``K @ v`` and
``np.abs(K) @ v`` are computed one block of ``block`` kernel rows at a time (each block made on the fly from X by
:func:`svmref.kernels.kernel_matrix`, then one BLAS product), so memory is ``O(N x block)``. Each pass also computes
``|K| @ |v|`` (the size of the terms, which the residuals need for their rounding floors) from the same block and
keeps both, so that a residual evaluation costs one pass over the kernel. ``K.shape``, ``K.diagonal()`` and
``K.T`` (the same operator: K is symmetric) are there; ``np.asarray(K)`` is refused with the size it would take.

Inside :func:`show_passes` (``svmref verify --progress``, and on a terminal) each pass over a kernel shows a tqdm bar on
stderr counting its blocks, after one line that says how the kernel is made (``K is 100000 x 100000, made in 1250
blocks of 80 rows per pass``): at N = 100 000 a pass of the RBF kernel takes about a minute on two cores.
"""
from __future__ import annotations

import contextlib
import contextvars
import sys

import numpy as np

from svmref.kernels import kernel_matrix

__all__ = ["BlockKernel", "DEFAULT_BLOCK_BYTES", "DENSE_N", "blockwise", "maybe_blockwise", "connect", "show_passes"]

#: Above this N verify's own paths that do not hand K to a solver (estimators, model files, answers from files) use a
#: :class:`BlockKernel` instead of the dense kernel matrix (5000^2 doubles are 200 MB).
DENSE_N = 5000

#: The kernel values made per block (bytes): the rows per block are this over 8 N (at least 16), about 80 rows at
#: N = 100 000, so that a pass holds about 64 MB of kernel values at a time whatever N is.
DEFAULT_BLOCK_BYTES = 64 * 2**20

_PASS_STREAM: contextvars.ContextVar = contextvars.ContextVar("svmref_blockwise_passes", default=None)


@contextlib.contextmanager
def show_passes(file=None):
    """Within this context every pass over a :class:`BlockKernel` shows a tqdm bar on ``file`` (stderr by default)
    that counts the pass's blocks; the first pass over a kernel is preceded by one line saying how it is made."""
    token = _PASS_STREAM.set(sys.stderr if file is None else file)
    try:
        yield
    finally:
        _PASS_STREAM.reset(token)


class _NoBar:
    def update(self, n=1):
        pass


@contextlib.contextmanager
def _pass_bar(op: BlockKernel):
    """The bar of one pass over ``op`` (a stand-in outside :func:`show_passes`); ``op.blocks_shown`` counts the blocks
    it has shown, over all passes."""
    stream = _PASS_STREAM.get()
    if stream is None:
        yield _NoBar()
        return
    from tqdm import tqdm

    n, m = op.shape
    n_blocks = -(-n // op.block)
    if not op._announced:
        print(f"svmref verify: K is {n} x {m} ({op.kernel} kernel), made in {n_blocks} block(s) of {op.block} rows "
              "per pass; a residual evaluation is one pass", file=stream)
        op._announced = True
    bar = tqdm(total=n_blocks, desc=f"kernel pass {op.passes + 1}", unit="block", file=stream, leave=False)
    try:
        yield bar
        bar.refresh()  # the final count is written once before the bar is cleared
        op.blocks_shown += bar.n
    finally:
        bar.close()


class BlockKernel:
    """``K = k(X, Z)`` (``Z = X`` by default) as an operator; see the module docstring.

    Parameters
    ----------
    X, Z : ndarray
        The rows and the columns of K (``Z`` None: K is the square, symmetric Gram matrix of X).
    kernel, params : str, dict
        As :func:`svmref.kernels.kernel_matrix` takes them.
    block : int, optional
        Rows per block (default: about 64 MB of kernel values, at least 16 rows).
    client : dask.distributed.Client, optional
        Compute the blocks on a Dask cluster (``svmref verify --scheduler ADDRESS``): X and Z are scattered to the
        workers once, each block is one task (the same code as locally, so the same numbers), the results are
        gathered in order.
    """

    def __init__(self, X, kernel: str, params: dict | None = None, Z=None, block: int | None = None, _absolute=False,
                 client=None):
        self.X = np.asarray(X, dtype=float)
        self.Z = self.X if Z is None else np.asarray(Z, dtype=float)
        self.square = Z is None
        self.kernel, self.params = kernel, dict(params or {})
        n_cols = max(self.Z.shape[0], 1)
        self.block = int(block) if block else max(16, DEFAULT_BLOCK_BYTES // (8 * n_cols))
        self._absolute = _absolute
        self.client = client
        self._remote = None
        self._cache: dict = {}
        self._abs_cache: dict = {}
        self.passes = 0
        self.blocks_shown = 0
        self._announced = False

    @property
    def shape(self) -> tuple[int, int]:
        return (self.X.shape[0], self.Z.shape[0])

    @property
    def T(self):
        if not self.square:
            raise ValueError("the transpose of a rectangular BlockKernel is not used by verify")
        return self

    def _blocks(self):
        for s in range(0, self.X.shape[0], self.block):
            yield s, kernel_matrix(self.X[s:s + self.block], self.Z, kernel=self.kernel, **self.params)

    def _key(self, V: np.ndarray) -> tuple:
        return (V.shape, V.dtype.str, hash(V.tobytes()))

    def _products(self, V: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(K @ V, |K| @ |V|)`` in one pass (kept for the next call with the same ``V``)."""
        key = self._key(V)
        if key not in self._cache:
            A = np.abs(V)
            out = np.empty((self.shape[0],) + V.shape[1:])
            out_abs = np.empty_like(out)
            with _pass_bar(self) as bar:
                if self.client is not None:
                    for s, (kv, kav) in self._remote_products(V):
                        out[s:s + kv.shape[0]], out_abs[s:s + kv.shape[0]] = kv, kav
                        bar.update(1)
                else:
                    for s, Kb in self._blocks():
                        out[s:s + Kb.shape[0]] = Kb @ V
                        out_abs[s:s + Kb.shape[0]] = np.abs(Kb) @ A
                        bar.update(1)
            self.passes += 1
            if len(self._cache) >= 8:
                self._cache.pop(next(iter(self._cache)))
                self._abs_cache.pop(next(iter(self._abs_cache)))
            self._cache[key] = (out, out_abs)
            self._abs_cache[self._key(A)] = out_abs
        return self._cache[key]

    def _remote_products(self, V):
        """The blocks' ``(K_b @ V, |K_b| @ |V|)`` computed as tasks on the Dask cluster, yielded as they finish."""
        if self._remote is None:
            X = self.client.scatter(self.X, broadcast=True, hash=False)
            self._remote = (X, X if self.square else self.client.scatter(self.Z, broadcast=True, hash=False))
        X, Z = self._remote
        Vf = self.client.scatter(V, broadcast=True, hash=False)
        starts = list(range(0, self.X.shape[0], self.block))
        futures = [self.client.submit(_block_products, X, Z, s, s + self.block, self.kernel, self.params, Vf,
                                      pure=False) for s in starts]
        from dask.distributed import as_completed

        where = {f.key: s for f, s in zip(futures, starts)}
        for fut, result in as_completed(futures, with_results=True):
            yield where[fut.key], result

    def __matmul__(self, V):
        V = np.asarray(V, dtype=float)
        if V.shape[0] != self.shape[1]:
            raise ValueError(f"matmul: K is {self.shape[0]} x {self.shape[1]}, the operand has {V.shape[0]} rows")
        if self._absolute:
            known = self._parent._abs_cache.get(self._key(V))
            if known is not None:
                return known
            if np.all(V >= 0):
                return self._parent._products(V)[1]
            out = np.empty((self.shape[0],) + V.shape[1:])
            with _pass_bar(self._parent) as bar:
                for s, Kb in self._parent._blocks():
                    out[s:s + Kb.shape[0]] = np.abs(Kb) @ V
                    bar.update(1)
            self._parent.passes += 1
            return out
        return self._products(V)[0]

    def __rmatmul__(self, V):
        if not self.square:
            raise ValueError("v @ K of a rectangular BlockKernel is not used by verify")
        return self.__matmul__(np.asarray(V, dtype=float).T).T

    def absolute(self) -> BlockKernel:
        """``|K|`` entrywise, as an operator sharing this one's blocks and products."""
        if self._absolute:
            return self
        view = BlockKernel.__new__(BlockKernel)
        view.__dict__.update(self.__dict__)
        view._absolute = True
        view._parent = self
        return view

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        if method == "__call__" and ufunc is np.absolute and len(inputs) == 1:
            return self.absolute()
        if method == "__call__" and ufunc is np.matmul and len(inputs) == 2:
            a, b = inputs
            return self.__matmul__(b) if a is self else self.__rmatmul__(a)
        return NotImplemented

    def diagonal(self) -> np.ndarray:
        """``k(x_i, x_i)`` (square K only): in closed form for svmref's kernels (the RBF and Gaussian 1, linear
        ``||x||^2``, polynomial ``(1 + ||x||^2 / c)^d``, MLP ``tanh(k ||x||^2 + theta)``), else row by row."""
        sq = np.einsum("ij,ij->i", self.X, self.X)
        p = self.params
        if self.kernel in ("rbf", "gaussian"):
            return np.ones(self.X.shape[0])
        if self.kernel == "linear":
            return sq
        if self.kernel in ("poly", "polynomial"):
            return (1.0 + sq / float(p.get("c", 1.0))) ** int(p.get("d", 2))
        if self.kernel == "mlp":
            return np.tanh(float(p.get("k", 1.0)) * sq + float(p.get("theta", 0.0)))
        return np.array([float(kernel_matrix(x[None, :], None, kernel=self.kernel, **p)[0, 0]) for x in self.X])

    def __array__(self, dtype=None, copy=None):
        n, m = self.shape
        raise MemoryError(f"verify does not form this {n} x {m} kernel matrix ({8 * n * m / 2**30:.1f} GiB): at this "
                          "size it is made by blocks of rows; judge an estimator (--estimator), a model file (--model) "
                          "or answers from files (--answers), which do not take K")

    def copy(self):
        """The operator itself (it holds no matrix to copy); a solver that asks for the matrix (``np.asarray``) is
        refused with its size."""
        return self


def _block_products(X, Z, start: int, stop: int, kernel: str, params: dict, V):
    """One block's ``(K_b @ V, |K_b| @ |V|)``, ``K_b = k(X[start:stop], Z)``: a task of a Dask worker."""
    Kb = kernel_matrix(X[start:stop], Z, kernel=kernel, **params)
    return Kb @ V, np.abs(Kb) @ np.abs(V)


def blockwise(inst, block: int | None = None, client=None):
    """The instance with its kernel matrices as :class:`BlockKernel` operators (training and held-out rows)."""
    import dataclasses

    return dataclasses.replace(inst, _K=BlockKernel(inst.X, inst.kernel, inst.kernel_params, block=block, client=client),
                               _K_test=BlockKernel(inst.X_test, inst.kernel, inst.kernel_params, Z=inst.X, block=block))


def maybe_blockwise(insts, client=None) -> list:
    """Each instance above :data:`DENSE_N` (every one, on a Dask ``client``) as :func:`blockwise`, the others as they
    are."""
    from svmref.kernels import KERNELS

    return [blockwise(i, client=client) if (i.N > DENSE_N or client is not None) and i.kernel in KERNELS else i
            for i in insts]


def connect(address: str):
    """A Dask client for ``address`` (``tcp://HOST:PORT``), or ``ValueError`` in one line saying what is wrong."""
    try:
        from dask.distributed import Client
    except ImportError as exc:
        raise ValueError("--scheduler needs dask.distributed: python -m pip install 'svmref[dask]'") from exc
    try:
        return Client(address, timeout=10)
    except (OSError, TimeoutError) as exc:
        raise ValueError(f"--scheduler: no Dask scheduler answered at {address!r} within 10 s ({exc}); start one "
                         "(`dask scheduler`) or check the address (tcp://HOST:PORT)") from None

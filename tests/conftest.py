"""pytest fixtures shared by the test modules, and a guard against stale numba caches."""
from pathlib import Path

import pytest
from _numerics import is_sensitive
from instances import KERNELS


def _drop_stale_numba_caches() -> None:
    """Delete on-disk numba caches (``cache=True``) older than any source file of their package.

    numba checks only the file that defines a compiled function: a cached ``_smo_kernel.solve`` keeps the
    code it inlined from ``_qmatrix.get_col`` after ``_qmatrix.py`` changes (numba's documented cache
    limitation), and would then run the old column code on the new data layout. In a working tree that has just
    been edited or pulled, drop every cache older than the newest source file of its folder, so the tests always
    run the code in the tree (a clean clone or a fresh install has no cache to drop).
    """
    root = Path(__file__).resolve().parent.parent
    for pkg in ("solvers", "formulations", "verify", "figures", "svmref"):
        cache = root / pkg / "__pycache__"
        if not cache.is_dir():
            continue
        newest = max((p.stat().st_mtime for p in (root / pkg).glob("*.py")), default=0.0)
        for f in list(cache.glob("*.nbi")) + list(cache.glob("*.nbc")):
            try:
                if f.stat().st_mtime < newest:
                    f.unlink()
            except OSError:
                pass


_drop_stale_numba_caches()


@pytest.fixture(params=sorted(KERNELS))
def kernel_name(request):
    return request.param


def pytest_collection_modifyitems(config, items):
    """Mark every precision-sensitive test ``numerics`` (``_numerics.py`` says what that is, read from its source)."""
    for item in items:
        fn = getattr(item, "function", None)
        if fn is None or item.get_closest_marker("numerics"):
            continue
        cls = getattr(item, "cls", None)
        if is_sensitive(str(item.path), fn.__name__, cls.__name__ if cls else None):
            item.add_marker(pytest.mark.numerics)

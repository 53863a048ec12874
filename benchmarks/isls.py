"""Speed of ISLS-SVM (004, Algorithm 1) as a ratio against one LS-SVM solve measured in the same run.

    python benchmarks/isls.py                      # N = 2000, C = 1, 10, 100; blobs in d = 10 and Ripley-like 2-D
    python benchmarks/isls.py --n 1000 --repeat 3
    python benchmarks/isls.py --baseline 48b7e0b   # also time solvers/isls.py as of that commit, same runs
    python benchmarks/isls.py --C 10 --only blobs --repeat 3   # one C only

The target: one ``isls_svm`` fit (LS-SVM start + every iteration) <= 3 x one ``linear.ls_svm`` on the
same K, at N = 2000 on Gaussian blobs in d = 10 with an RBF kernel, for C = 1, 10 and 100; judged on process CPU
time.  Each timing is the median of ``--repeat``
runs, the ISLS runs and the LS-SVM anchor interleaved so that a load change on the shared machine hits both;
BLAS threads are pinned (``--threads``, default 1) with threadpoolctl.  The anchor is ``linear.ls_svm(K, y, C)``
with K given, exactly the call ISLS makes for its start (same checks, same factorisation: float32 refined in float64
from N = 1024 where it pays, see ``solvers/linear.py``); neither timing
includes forming K.  The printout also gives the iteration count, the active-set sizes, which path solved each
iteration (``info["path"]``) and, for the mixed-precision CG, the (outer float64, inner float32) step counts, so
a ratio can be read against the work done.  Process CPU time is printed too: on a shared machine it moves far
less than wall-clock time.  ``--baseline REV`` loads ``solvers/isls.py`` from git revision REV (``git show``), with
the modules it is split into at that revision (``solvers/_isls_paths.py``, ``solvers/_dd.py``, where they exist), and
times it in the same interleaved runs, so a before/after comparison shares one anchor and one load.
"""
from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
import types
import warnings
from pathlib import Path

import numpy as np
from threadpoolctl import threadpool_limits

from svmref.kernels import rbf_kernel
from svmref.solvers.isls import isls_svm
from svmref.solvers.linear import ls_svm


def blobs(N, d=10, seed=0):
    """Two Gaussian classes in d dimensions, unit covariance, means 0 and 0.5 (overlapping)."""
    rng = np.random.default_rng(seed)
    h = N // 2
    X = np.r_[rng.normal(0.0, 1.0, size=(h, d)), rng.normal(0.5, 1.0, size=(N - h, d))]
    return X, np.r_[-np.ones(h), np.ones(N - h)]


def ripley_like(N, seed=0):
    """Two Gaussian classes in 2-D (the data of benchmarks/linear_systems.py)."""
    rng = np.random.default_rng(seed)
    h = N // 2
    X = np.r_[rng.normal([-0.3, 0.7], 0.25, size=(h, 2)), rng.normal([0.4, 0.5], 0.25, size=(N - h, 2))]
    return X, np.r_[-np.ones(h), np.ones(N - h)]


def interleaved(fns, repeat):
    """Medians of wall-clock and of process CPU time for each function of ``fns``, run in turn ``repeat`` times."""
    wall = [[] for _ in fns]
    cpu = [[] for _ in fns]
    for _ in range(repeat):
        for fn, tw, tc in zip(fns, wall, cpu):
            t0, c0 = time.perf_counter(), time.process_time()
            fn()
            tw.append(time.perf_counter() - t0)
            tc.append(time.process_time() - c0)
    med = statistics.median
    return [med(t) for t in wall], [med(t) for t in cpu]


#: The modules of the ISLS solver, in import order: a baseline revision's copies are loaded together.
ISLS_MODULES = ("_dd", "_isls_paths", "isls")


def _git_show(root, rev, path):
    """The text of ``path`` at revision ``rev``, or None where the file does not exist there."""
    try:
        return subprocess.run(["git", "show", f"{rev}:{path}"], cwd=root, capture_output=True, text=True,
                              check=True).stdout
    except subprocess.CalledProcessError:
        return None
    except OSError as exc:
        raise SystemExit(f"--baseline {rev}: cannot run git ({exc})") from None


def load_baseline(rev):
    """``solvers/isls.py`` as of git revision ``rev``, imported as a module.  Its relative imports of the modules of
    :data:`ISLS_MODULES` that exist at ``rev`` point at their copies from ``rev``; the others are made absolute (the
    current tree's)."""
    root = Path(__file__).resolve().parents[1]
    tag = re.sub(r"[^0-9A-Za-z]", "_", rev)
    where = Path(tempfile.mkdtemp(prefix=f"isls_baseline_{tag}_"))   # real files: numba's cache=True needs them
    loaded = {}
    for mod in ISLS_MODULES:
        src = _git_show(root, rev, f"solvers/{mod}.py")
        if src is None:
            if mod == "isls":
                raise SystemExit(f"--baseline {rev}: cannot read solvers/isls.py at that revision")
            continue

        def target(m):
            return f"from {loaded[m.group(1)].__name__} import" if m.group(1) in loaded else \
                f"from svmref.solvers.{m.group(1)} import"

        src = re.sub(r"^from \.(\w+) import", target, src, flags=re.M)
        module = types.ModuleType(f"_isls_baseline_{tag}_{mod.strip('_')}")
        module.__file__ = str(where / f"{mod}.py")
        Path(module.__file__).write_text(src)
        sys.modules[module.__name__] = module       # dataclasses look their module up
        exec(compile(src, module.__file__, "exec"), module.__dict__)
        loaded[mod] = module
    return loaded["isls"]


def report(name, K, y, C, repeat, base=None, baseline=None):
    """Time one ISLS fit against one LS-SVM solve on ``K`` at ``C`` (and the baseline's fit, if given) and print."""
    out = {}

    def run_isls(fit=isls_svm, key="r"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out[key] = fit(K, y, C)

    fns = [run_isls, lambda: ls_svm(K, y, C)]
    if base is not None:
        fns.append(lambda: run_isls(base.isls_svm, "base"))
    for f in fns:  # warm-up: numba caches (ISLS's double-double kernel), BLAS
        f()
    (t, t0, *tb), (c, c0, *cb) = interleaved(fns, repeat)
    r = out["r"]
    print(f"{name + f', C = {C:g}':40s} CPU:  isls {c:8.4f} s / ls_svm {c0:8.4f} s = {c / c0:6.2f}   "
          f"target <= 3: {'met' if c / c0 <= 3 else 'NOT met'}")
    print(f"{'':40s} wall: isls {t:8.4f} s / ls_svm {t0:8.4f} s = {t / t0:6.2f}   "
          "(CPU time is the judged one: steadier than wall time on a shared machine)")
    print(f"    {r.n_iter} iterations, {r.n_sv} SVs, status {r.status}; active sets {r.info['n_active']}")
    print(f"    paths {r.info['path']}")
    cert = r.info.get("certificate", [])
    print(f"    certificates {dict((k, cert.count(k)) for k in dict.fromkeys(cert))}")
    print(f"    CG steps (outer, inner) {r.info.get('cg_steps')}")
    if base is not None:
        print(f"    baseline {baseline}: wall {tb[0] / t0:6.2f} x ls_svm, CPU {cb[0] / c0:6.2f} x ls_svm; "
              f"{out['base'].n_iter} iterations")
    print()


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n", type=int, default=2000)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--C", type=float, nargs="+", default=[1.0, 10.0, 100.0])
    ap.add_argument("--baseline", metavar="REV", help="also time solvers/isls.py of this git revision, same runs")
    ap.add_argument("--only", choices=["blobs", "ripley"], help="run one of the two data sets only")
    a = ap.parse_args(argv)
    base = load_baseline(a.baseline) if a.baseline else None
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"N = {a.n}, C = {a.C}, BLAS threads = {a.threads}, median of {a.repeat} interleaved runs, "
          f"load average at start {load:.2f}\n")
    cases = [("blobs d=10, RBF sigma=3", blobs(a.n), 3.0), ("Ripley-like 2-D, RBF sigma=0.5", ripley_like(a.n), 0.5)]
    if a.only:
        cases = [cases[0] if a.only == "blobs" else cases[1]]
    with threadpool_limits(a.threads):
        for name, (X, y), sigma in cases:
            K = rbf_kernel(X, sigma=sigma)
            for C in a.C:
                report(name, K, y, C, a.repeat, base, a.baseline)


if __name__ == "__main__":
    main()

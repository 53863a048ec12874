"""Estimators judged on raw X: objects in scikit-learn's style that compute their own kernel.

:func:`check_estimator` (``svmref verify --estimator MODULE:CLASS``, :func:`svmref.testing.assert_estimator_solves`)
builds the estimator for each instance in the estimator's own conventions, fits it on the instance's raw ``X`` and
reads the dual solution from its fitted state; :func:`svmref.verify.check` then judges that answer exactly as it
judges a function's, with the same verdicts, causes and advice.

* **Kernel** (:func:`sklearn_kernel`): the instance's kernel in scikit-learn's parameters, RBF
  ``exp(-||x - z||^2 / sigma^2)`` as ``gamma = 1/sigma^2`` (001's Gaussian ``1/(2 sigma^2)``), the polynomial
  ``(1 + x'z/c)^d`` as ``(gamma x'z + coef0)^degree`` with ``gamma = 1/c, coef0 = 1``, the MLP kernel
  ``tanh(k x'z + theta)`` as ``sigmoid`` with ``gamma = k, coef0 = theta``. ``kernel="precomputed"`` (with K) only when
  the estimator takes nothing else: it has a ``kernel`` parameter and refuses the named kernel. An estimator without a
  ``kernel`` parameter is a linear model: it is judged on the linear-kernel instances only.
* **Hyperparameters**: the entry's :attr:`~svmref.verify.specs.Spec.estimator_params` (``C``; ``epsilon``; for RLS
  KernelRidge's ``alpha = m gamma``); verify's ``tol`` goes to the first of ``tol``, ``tolerance``, ``toler``, ``eps``
  the estimator has, unless the user's ``params`` set it.
* **The answer**: the entry's :attr:`~svmref.verify.specs.Spec.read_fitted` (``dual_coef_``, ``support_``,
  ``intercept_``), checked against the estimator's own ``decision_function`` (or ``predict``) on the held-out points,
  so that a convention misread is an error that says so, never a wrong verdict. A linear model that puts its
  intercept in the penalty (``LinearSVC``) gets the verdict "different problem".
* **More than two classes** (:func:`pair_instances`): the estimator is fitted once on every class; each
  one-vs-one pair is judged as its own binary problem (its patterns, the first class as ``+1``), read from LIBSVM's
  layout (:mod:`svmref.verify.ovo`).
* **Which code path ran**, where the estimator says: scikit-learn-intelex logs whether oneDAL or its fallback to
  scikit-learn ran; those lines go to the record's notes.
"""
from __future__ import annotations

import contextlib
import io
import logging
from dataclasses import dataclass, field

import numpy as np

from . import specs
from .answers import BadAnswer
from .blockwise import maybe_blockwise
from .core import DEFAULT_TOL, TOL_PARAMETERS, check
from .data import Instance
from .instances import suite
from .report import Report

__all__ = ["check_estimator", "sklearn_kernel", "PairInstance", "pair_instances", "estimator_label"]

#: The loggers whose records say which code path an estimator ran (scikit-learn-intelex: oneDAL or its fallback).
CODE_PATH_LOGGERS = ("sklearnex",)
#: The prefix of the lines an estimator's run prints into its captured output about its code path.
CODE_PATH_MARK = "svmref-estimator: "
#: The largest difference, relative to the size of the decision values, between the estimator's own decision
#: function and the one read from its fitted state (a misread convention is far above it; float32 storage of
#: coefficients, as some GPU codes keep them, below it).
READ_CHECK = 1e-5


def sklearn_kernel(kernel: str, params: dict) -> dict | None:
    """The instance's kernel in scikit-learn's parameters (``kernel``, ``gamma``, ``degree``, ``coef0``), or None when
    scikit-learn has no such kernel (a callable)."""
    p = dict(params)
    if kernel == "linear":
        return {"kernel": "linear"}
    if kernel == "rbf":
        return {"kernel": "rbf", "gamma": 1.0 / float(p["sigma"]) ** 2}
    if kernel == "gaussian":
        return {"kernel": "rbf", "gamma": 1.0 / (2.0 * float(p["sigma"]) ** 2)}
    if kernel in ("poly", "polynomial"):
        return {"kernel": "poly", "gamma": 1.0 / float(p.get("c", 1.0)), "coef0": 1.0, "degree": int(p.get("d", 2))}
    if kernel == "mlp":
        return {"kernel": "sigmoid", "gamma": float(p.get("k", 1.0)), "coef0": float(p.get("theta", 0.0))}
    return None


@dataclass
class PairInstance(Instance):
    """One pair ``(i, j)`` of a one-vs-one multi-class problem: the patterns of classes ``i`` and ``j`` (``rows`` of the
    whole training set ``full_X``, ``full_y``), class ``i`` as ``+1``. The estimator is fitted on the whole set."""

    full_X: np.ndarray | None = None
    full_y: np.ndarray | None = None
    pair: tuple | None = None
    rows: np.ndarray | None = None
    labels: tuple = ()


def pair_instances(X, y, X_test, formulation: str, *, C: float = 1.0, kernel: str = "rbf", kernel_params=None,
                   name: str = "data") -> list[PairInstance]:
    """One binary instance per pair of the classes of ``y`` (sorted, LIBSVM's order: the first of a pair is ``+1``)."""
    X, y = np.asarray(X, dtype=float), np.asarray(y)
    classes = np.unique(y)
    out = []
    for i in range(classes.size):
        for j in range(i + 1, classes.size):
            rows = np.flatnonzero((y == classes[i]) | (y == classes[j]))
            yy = np.where(y[rows] == classes[i], 1.0, -1.0)
            out.append(PairInstance(f"{name}-{classes[i]:g}-vs-{classes[j]:g}", X[rows], yy, np.asarray(X_test, dtype=float),
                                    kernel, dict(kernel_params or {}), specs.get(formulation).data_hyper(C, 0.5, 0.1,
                                                                                                          rows.size),
                                    True, f"classes {classes[i]:g} (+1) and {classes[j]:g} (-1) of {classes.size}",
                                    full_X=X, full_y=y, pair=(i, j), rows=rows, labels=(classes[i], classes[j])))
    return out


def estimator_label(estimator) -> str:
    cls = estimator if isinstance(estimator, type) else type(estimator)
    return f"{cls.__module__}:{cls.__qualname__}"


def _fresh(estimator, params: dict):
    """A new, unfitted estimator: the class called with ``params``, or a clone of the instance given with them set."""
    if isinstance(estimator, type):
        try:
            return estimator(**params)
        except TypeError as exc:
            raise ValueError(f"params: {estimator.__name__}({', '.join(f'{k}={v!r}' for k, v in params.items())}) "
                             f"cannot be built: {exc}") from None
    from sklearn.base import clone

    est = clone(estimator)
    if params:
        est.set_params(**params)
    return est


def _accepted(est) -> set:
    try:
        return set(est.get_params(deep=False))
    except (AttributeError, TypeError):
        return set()


@dataclass
class _Setup:
    """How the estimator is built for one instance: its parameters, whether it gets K (``precomputed``), and notes."""

    params: dict
    precomputed: bool = False
    tol_name: str | None = None
    notes: list = field(default_factory=list)


def _setup(est, spec, inst: Instance, tol: float, user: dict, force_precomputed: bool = False) -> _Setup:
    accepted = _accepted(est)
    hyper = spec.estimator_params(inst)
    missing = [k for k in hyper if k not in accepted and k not in user]
    if missing:
        raise BadAnswer(f"{type(est).__name__} has no parameter {', '.join(missing)}: verify cannot give it the "
                        f"instance's {', '.join(missing)} (its parameters: {', '.join(sorted(accepted))})")
    params = dict(hyper)
    setup = _Setup(params)
    if "kernel" in accepted:
        native = None if force_precomputed else sklearn_kernel(inst.kernel, inst.kernel_params)
        if native is None:
            params["kernel"] = "precomputed"
            setup.precomputed = True
        else:
            params.update({k: v for k, v in native.items() if k in accepted})
    elif inst.kernel != "linear":
        raise BadAnswer(f"{type(est).__name__} has no kernel parameter (a linear model) and the instance's kernel is "
                        f"{inst.kernel}")
    setup.tol_name = next((n for n in TOL_PARAMETERS if n in accepted and n not in user), None)
    if setup.tol_name is not None:
        params[setup.tol_name] = tol
    params.update(user)
    return setup


def _train(inst: Instance):
    """The rows the estimator is fitted on, and their labels: the whole multi-class set for a pair, else the instance."""
    if isinstance(inst, PairInstance):
        return inst.full_X, inst.full_y
    return inst.X, inst.y


@contextlib.contextmanager
def _code_path():
    """Collect what the estimator logs about its code path (:data:`CODE_PATH_LOGGERS`) while it fits."""
    buf = io.StringIO()
    handler = logging.StreamHandler(buf)
    handler.setLevel(logging.INFO)
    saved = []
    for name in CODE_PATH_LOGGERS:
        lg = logging.getLogger(name)
        saved.append((lg, lg.level))
        lg.addHandler(handler)
        lg.setLevel(logging.INFO)
    try:
        yield buf
    finally:
        for lg, level in saved:
            lg.removeHandler(handler)
            lg.setLevel(level)


def _own_decision(est, inst: Instance, Xt) -> np.ndarray | None:
    """The estimator's own decision values on the held-out points (one pair's, for a pair), or None."""
    if isinstance(inst, PairInstance) and hasattr(est, "decision_function"):
        if "decision_function_shape" in _accepted(est):
            est.set_params(decision_function_shape="ovo")
        k = len(np.unique(inst.full_y))
        from .ovo import pair_index

        return np.asarray(est.decision_function(Xt), dtype=float)[:, pair_index(k, *inst.pair)]
    if hasattr(est, "decision_function"):
        return np.ravel(np.asarray(est.decision_function(Xt), dtype=float))
    if hasattr(est, "predict"):
        return np.ravel(np.asarray(est.predict(Xt), dtype=float))
    return None


def _read_check(spec, est, inst: Instance, answer, setup: _Setup) -> None:
    """The decision function read from the fitted state must be the estimator's own on the held-out points."""
    if not np.size(inst.X_test):
        return
    if setup.precomputed:
        from svmref.kernels import kernel_matrix

        Xt = kernel_matrix(inst.X_test, _train(inst)[0], kernel=inst.kernel, **inst.kernel_params)
    else:
        Xt = inst.X_test
    own = _own_decision(est, inst, Xt)
    if own is None:
        return
    parsed = spec.parse(answer, inst)
    if spec.on_features:
        w = parsed["a"] if "a" in parsed else parsed["w"]
        mine = inst.X_test @ w + (parsed["b"] or 0.0)
    else:
        coef = parsed.get("c")
        if coef is None:
            coef = parsed["alpha"] * inst.y if spec.classification else parsed["alpha"]
        mine = inst.K_test @ coef + (parsed.get("b") or 0.0)
    scale = max(float(np.max(np.abs(own))), float(np.max(np.abs(mine))), 1.0)
    gap = float(np.max(np.abs(own - mine)))
    if not gap <= READ_CHECK * scale:
        raise BadAnswer(f"the dual solution read from the fitted {type(est).__name__} (dual_coef_, support_, intercept_) "
                        f"does not reproduce its own decision function on the held-out points (they differ by "
                        f"{gap:.3g}): its fitted state does not follow scikit-learn's conventions")


class EstimatorSolver:
    """verify's solver for one instance: builds the estimator, fits it on the instance's raw X (the kernel matrix
    verify passes is not used), reads its answer. Its signature is verify's call form for the formulation, with a
    ``tol`` parameter where the estimator has a tolerance parameter (so that the record says where tol went)."""

    def __init__(self, estimator, spec, inst: Instance, params: dict, force_precomputed: bool = False):
        self.estimator, self.spec, self.inst = estimator, spec, inst
        self.params, self.force_precomputed = dict(params), force_precomputed
        probe = _setup(_fresh(estimator, {}), spec, inst, DEFAULT_TOL, self.params, force_precomputed) \
            if spec.estimator_params is not None else None
        self.tol_name = probe.tol_name if probe is not None else None
        import inspect

        names = spec.positional_names
        P = inspect.Parameter
        sig = [P(n, P.POSITIONAL_OR_KEYWORD) for n in names]
        sig += [P(k, P.KEYWORD_ONLY, default=None) for k in spec.instance_keywords]
        if self.tol_name is not None:
            sig.append(P(self.tol_name, P.KEYWORD_ONLY, default=DEFAULT_TOL))
        self.__signature__ = inspect.Signature(sig)
        self.__name__ = self.__qualname__ = estimator_label(estimator).split(":")[1]
        self.__module__ = estimator_label(estimator).split(":")[0]

    def __call__(self, *args, **kwargs):
        spec, inst = self.spec, self.inst
        tol = kwargs.get(self.tol_name, DEFAULT_TOL) if self.tol_name else DEFAULT_TOL
        est = _fresh(self.estimator, {})
        setup = _setup(est, spec, inst, tol, self.params, self.force_precomputed)
        try:
            est.set_params(**setup.params)
        except (ValueError, TypeError) as exc:
            raise BadAnswer(f"{type(est).__name__}.set_params({setup.params}) refused: {exc}") from None
        X, y = _train(inst)
        if setup.precomputed:
            from svmref.kernels import kernel_matrix

            X = kernel_matrix(X, None, kernel=inst.kernel, **inst.kernel_params)
        with _code_path() as log:
            est.fit(X, y)
        for line in log.getvalue().splitlines():
            print(CODE_PATH_MARK + line.strip())
        if setup.precomputed:
            print(CODE_PATH_MARK + f"kernel='precomputed' ({inst.kernel} kernel computed by svmref)")
        answer = spec.read_fitted(est, inst)
        _read_check(spec, est, inst, answer, setup)
        return answer


def _instances(instances, formulation: str) -> list[Instance]:
    return list(suite(instances, formulation)) if isinstance(instances, str) else list(instances)


def check_estimator(estimator, formulation: str, instances="quick", tol: float = DEFAULT_TOL, *,
                    params: dict | None = None, name: str | None = None, timeout: float | None = None,
                    on_record=None, precomputed: bool = False, certificate: bool | None = None, client=None) -> Report:
    """Judge an estimator on raw X: for each instance, build it in its own conventions, fit it, read its dual solution,
    and hold that against the reference (:func:`svmref.verify.check`).

    Parameters
    ----------
    estimator : class or object
        An estimator class (called with ``params``) or an unfitted instance (cloned, ``params`` set), in scikit-learn's
        style: ``get_params``/``set_params``, ``fit(X, y)``, and after fitting ``dual_coef_``, ``support_``,
        ``intercept_`` (``SVC``, ``SVR``, scikit-learn-intelex's), ``dual_coef_`` (``KernelRidge``) or ``coef_``,
        ``intercept_``.
    formulation : str
        The problem it claims to solve (``svmref.verify.specs.names()``).
    instances : str or list of Instance
        A suite name or instances (:func:`pair_instances` for more than two classes).
    tol : float
        The tolerance of the check; also given to the estimator's ``tol`` (or ``tolerance``, ``toler``, ``eps``)
        unless ``params`` sets it.
    params : dict, optional
        The estimator's own parameters (``svmref verify --param NAME=VALUE``); they override what verify sets.
    name, timeout, on_record
        As for :func:`svmref.verify.check`.
    precomputed : bool
        Give the estimator ``kernel="precomputed"`` and K even where it has the instance's kernel.
    certificate : bool or None
        As for :func:`svmref.verify.check` (above ``DENSE_N`` the kernel is also made blockwise, never N x N).
    client : dask.distributed.Client, optional
        Make the blockwise kernel's blocks on a Dask cluster (``--scheduler``).

    Returns
    -------
    Report
        One record per instance; an instance the estimator cannot take (a linear model on a kernel instance) is
        listed in ``report.skipped``. The record notes which code path the estimator ran, where it logs it.
    """
    spec = specs.get(formulation)
    if spec.estimator_params is None or spec.read_fitted is None:
        raise ValueError(f"formulation {formulation!r} has no estimator conventions: verify cannot judge an estimator "
                         "on it (give a function instead)")
    params = dict(params or {})
    _fresh(estimator, params)  # the parameters are checked before any instance runs
    label = name or estimator_label(estimator)
    report = Report([], tol)
    insts = maybe_blockwise(_instances(instances, formulation), client)
    report.planned = len(insts)
    for inst in insts:
        try:
            solver = EstimatorSolver(estimator, spec, inst, params, precomputed)
        except BadAnswer as exc:
            report.skipped.append(f"{inst.name}: {exc}")
            continue
        part = check(solver, formulation, [inst], tol, name=label, timeout=timeout, on_record=_noted(on_record),
                     solver_tol=solver.tol_name, certificate=certificate)
        report.extend(part)
        if part.interrupted:
            break
    report.notes = [n.replace("(--solver-tol)", "(the estimator's tolerance parameter)") for n in report.notes]
    return report


def _noted(on_record):
    """Move the estimator's code-path lines from its captured output into the record's notes, then pass it on."""
    def hook(rec):
        lines = [ln[len(CODE_PATH_MARK):] for ln in (rec.solver_output or "").splitlines() if ln.startswith(CODE_PATH_MARK)]
        for ln in dict.fromkeys(lines):
            rec.notes.append(f"code path: {ln}")
        if on_record is not None:
            on_record(rec)
    return hook

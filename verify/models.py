"""Model files of LIBSVM and LIBLINEAR judged against the reference: ``svmref verify --model MODEL --data TRAIN --C C``.

A program in any language that writes LIBSVM's model format (``svm-train``, ThunderSVM and many research codes) is
judged without Python glue. :func:`check_model` reads

* the training data in LIBSVM's sparse text format (``label index:value ...``; scikit-learn's ``load_svmlight_file``);
* the model, whose first line tells its format: LIBSVM's (``svm_type``) or LIBLINEAR's (``solver_type``).

**LIBSVM** (:func:`read_libsvm_model`): ``c_svc`` is judged as ``l1_svm``, ``epsilon_svr`` as ``svr``. The kernel in
LIBSVM's parameterisation: linear ``x'z``, polynomial ``(gamma x'z + coef0)^degree``, RBF ``exp(-gamma ||x - z||^2)``
(``sigma = 1/sqrt(gamma)`` in svmref's), sigmoid ``tanh(gamma x'z + coef0)`` (the MLP kernel). The decision function
is ``sum_t sv_coef_t k(x_t, x) - rho``, so ``b = -rho`` and ``sv_coef_t = y_t alpha_t`` (``alpha^+ - alpha^-`` for
epsilon-SVR); more than two classes: one binary problem per one-vs-one pair, read from LIBSVM's layout
(:mod:`svmref.verify.ovo`), the first label of a pair as ``+1``. The file stores the support vectors, not their
positions: each is matched to the training row it is (LIBSVM writes both from the same numbers); a support vector
that is no row of TRAIN is an error that says so. ``C`` (and epsilon-SVR's ``epsilon``, LIBSVM's ``-p``) are not in
the file: they are required.

**LIBLINEAR** (:func:`read_liblinear_model`) keeps only ``w``: its SVM solvers ``-s 1``, ``-s 2`` (L2-loss) and ``-s 3``
(L1-loss) solve the problem without a bias (``-B -1``, the default) or with the bias as a feature of value ``B``,
which puts ``b^2 / B^2`` in the penalty: the SVM with the bias in the penalty
(:mod:`svmref.formulations.regularised_bias`, ``bias_scale = B``, 0 without ``-B``), against whose reference verify
judges the primal answer ``(w, b)`` on X (:func:`liblinear_instances`; ``--C`` is LIBLINEAR's ``-c``: the L2 loss's
``C`` is twice it, since LIBLINEAR writes ``C sum xi^2`` and svmref ``C/2 sum xi^2``). Its other solvers (logistic
regression, L1-regularised) are named and not judged.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from . import ovo
from .core import DEFAULT_TOL, check, check_verify_tol
from .data import Instance
from .report import Record, Report

__all__ = ["LibsvmModel", "LiblinearModel", "LIBLINEAR_SVMS", "liblinear_instances", "read_model", "read_libsvm_model",
           "read_liblinear_model", "read_data",
           "model_instances", "prepare_model", "check_model", "SV_MATCH"]

#: A support vector matches a training row when every feature agrees to this, relative to max(1, |x|): LIBSVM writes
#: the support vectors' features with 8 significant digits (``%.8g``) from the same numbers it read.
SV_MATCH = 1e-7


@dataclass
class LibsvmModel:
    svm_type: str
    kernel_type: str
    gamma: float = float("nan")
    degree: int = 3
    coef0: float = 0.0
    nr_class: int = 2
    labels: list = field(default_factory=list)
    nr_sv: list = field(default_factory=list)
    rho: np.ndarray | None = None
    sv_coef: np.ndarray | None = None
    SV: np.ndarray | None = None


@dataclass
class LiblinearModel:
    solver_type: str
    nr_class: int
    labels: list
    nr_feature: int
    bias: float
    w: np.ndarray


def _header(lines, path) -> tuple[dict, int]:
    head, k = {}, 0
    for k, line in enumerate(lines):
        parts = line.split()
        if not parts:
            continue
        if parts[0] in ("SV", "w"):
            return head, k + 1
        head[parts[0]] = parts[1:]
    raise ValueError(f"{path}: no 'SV' or 'w' line: not a LIBSVM or LIBLINEAR model file")


def read_libsvm_model(path) -> LibsvmModel:
    """LIBSVM's model file (``svm_save_model``): the header, then one line per support vector,
    ``coef_1 ... coef_{k-1} index:value ...``."""
    lines = open(path, encoding="ascii", errors="replace").read().splitlines()
    head, start = _header(lines, path)
    try:
        m = LibsvmModel(head["svm_type"][0], head["kernel_type"][0])
        m.gamma = float(head.get("gamma", ["nan"])[0])
        m.degree = int(head.get("degree", ["3"])[0])
        m.coef0 = float(head.get("coef0", ["0"])[0])
        m.nr_class = int(head.get("nr_class", ["2"])[0])
        m.labels = [float(v) for v in head.get("label", [])]
        m.nr_sv = [int(v) for v in head.get("nr_sv", [])]
        m.rho = np.array([float(v) for v in head["rho"]])
    except (KeyError, ValueError, IndexError) as exc:
        raise ValueError(f"{path}: a LIBSVM model header needs svm_type, kernel_type and rho ({exc})") from None
    k = m.nr_class if m.svm_type in ("c_svc", "nu_svc") else 2
    coefs, rows, width = [], [], 0
    for line in lines[start:]:
        parts = line.split()
        if not parts:
            continue
        coefs.append([float(v) for v in parts[:k - 1]])
        feats = {}
        for item in parts[k - 1:]:
            idx, _, val = item.partition(":")
            feats[int(idx)] = float(val)
        rows.append(feats)
        width = max([width, *feats])
    m.sv_coef = np.array(coefs, dtype=float).T.reshape(k - 1, len(coefs))
    m.SV = np.zeros((len(rows), width))
    for t, feats in enumerate(rows):
        for idx, val in feats.items():
            m.SV[t, idx - 1] = val
    return m


def read_liblinear_model(path) -> LiblinearModel:
    """LIBLINEAR's model file (``save_model``): the header, then ``w`` one row per feature (and the bias)."""
    lines = open(path, encoding="ascii", errors="replace").read().splitlines()
    head, start = _header(lines, path)
    try:
        w = np.array([[float(v) for v in ln.split()] for ln in lines[start:] if ln.strip()])
        return LiblinearModel(head["solver_type"][0], int(head["nr_class"][0]),
                              [float(v) for v in head.get("label", [])], int(head["nr_feature"][0]),
                              float(head.get("bias", ["-1"])[0]), w)
    except (KeyError, ValueError, IndexError) as exc:
        raise ValueError(f"{path}: a LIBLINEAR model header needs solver_type, nr_class, nr_feature ({exc})") from None


def read_model(path):
    """A LIBSVM or a LIBLINEAR model, as its first line tells (``svm_type`` or ``solver_type``)."""
    with open(path, encoding="ascii", errors="replace") as fh:
        first = fh.readline().split()
    if first[:1] == ["svm_type"]:
        return read_libsvm_model(path)
    if first[:1] == ["solver_type"]:
        return read_liblinear_model(path)
    raise ValueError(f"{path}: the first line is {' '.join(first)[:60]!r}: a LIBSVM model starts with 'svm_type', a "
                     "LIBLINEAR model with 'solver_type'")


def read_data(path, n_features: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """LIBSVM's sparse text format (``label index:value ...``), dense, with at least ``n_features`` columns."""
    from sklearn.datasets import load_svmlight_file

    X, y = load_svmlight_file(str(path), n_features=None, zero_based=False)
    X = X.toarray()
    if X.shape[1] < n_features:
        X = np.hstack([X, np.zeros((X.shape[0], n_features - X.shape[1]))])
    return X, np.asarray(y, dtype=float)


def _kernel(m: LibsvmModel) -> tuple[str, dict, object]:
    """svmref's kernel for the model's, and a function for the Gram matrix where svmref has none (the polynomial
    with ``coef0 != 1``, which is svmref's times ``coef0^degree``: given as K itself)."""
    if m.kernel_type == "linear":
        return "linear", {}, None
    if m.kernel_type == "rbf":
        return "rbf", {"sigma": 1.0 / np.sqrt(m.gamma)}, None
    if m.kernel_type == "sigmoid":
        return "mlp", {"k": m.gamma, "theta": m.coef0}, None
    if m.kernel_type == "polynomial":
        if m.coef0 == 1.0:
            return "poly", {"c": 1.0 / m.gamma, "d": m.degree}, None
        return (f"libsvm-poly(gamma={m.gamma:g},coef0={m.coef0:g},degree={m.degree})", {},
                lambda A, B: (m.gamma * (A @ B.T) + m.coef0) ** m.degree)
    raise ValueError(f"kernel_type {m.kernel_type}: verify judges the linear, polynomial, RBF and sigmoid kernels "
                     "(a precomputed kernel needs the kernel file itself)")


def _match(SV: np.ndarray, X: np.ndarray, candidates: np.ndarray, used: set) -> np.ndarray:
    """The training row each support vector is (among ``candidates``, each row used once)."""
    rows = np.empty(SV.shape[0], dtype=int)
    for t, sv in enumerate(SV):
        err = np.max(np.abs(X[candidates] - sv) / np.maximum(1.0, np.abs(X[candidates])), axis=1)
        order = [c for c in np.argsort(err, kind="stable") if err[c] <= SV_MATCH and int(candidates[c]) not in used]
        if not order:
            best = float(np.min(err)) if err.size else float("inf")
            raise ValueError(f"support vector {t + 1} of the model is no row of TRAIN (the nearest differs by {best:.3g} "
                             "relative): is TRAIN the file the model was trained on?")
        rows[t] = int(candidates[order[0]])
        used.add(rows[t])
    return rows


def model_instances(model: LibsvmModel, X, y, C: float, epsilon: float | None = None,
                    X_test=None) -> list[tuple[str, Instance, tuple]]:
    """``(formulation, instance, (alpha, b))`` per binary problem of a LIBSVM model on its training data."""
    X, y = np.asarray(X, dtype=float), np.asarray(y, dtype=float)
    Xt = np.zeros((0, X.shape[1])) if X_test is None else np.asarray(X_test, dtype=float)
    kname, kparams, gram = _kernel(model)
    SV = np.hstack([model.SV, np.zeros((model.SV.shape[0], max(0, X.shape[1] - model.SV.shape[1])))])

    def instance(name, rows, yy, hyper):
        extra = {} if gram is None else {"_K": gram(X[rows], X[rows]), "_K_test": gram(Xt, X[rows])}
        if not Xt.shape[0]:
            extra["_K_test"] = np.zeros((0, rows.size))  # no held-out points: the training points only
        return Instance(name, X[rows], yy, Xt, kname, dict(kparams), hyper, True,
                        f"LIBSVM model ({model.svm_type}, {model.kernel_type}) on {rows.size} training rows", **extra)

    if model.svm_type == "epsilon_svr":
        if epsilon is None:
            raise ValueError("an epsilon_svr model needs --epsilon (LIBSVM's -p, the tube half-width): it is not in "
                             "the model file")
        rows = np.arange(X.shape[0])
        sv_rows = _match(SV, X, rows, set())
        alpha = np.zeros(X.shape[0])
        alpha[sv_rows] = model.sv_coef[0]
        inst = instance("model-svr", rows, y, {"C": float(C), "epsilon": float(epsilon)})
        return [("svr", inst, (alpha, -float(model.rho[0])))]
    if model.svm_type != "c_svc":
        raise ValueError(f"svm_type {model.svm_type}: verify judges c_svc (as l1_svm) and epsilon_svr (as svr)")
    k = model.nr_class
    start = np.concatenate([[0], np.cumsum(model.nr_sv)])
    used: set = set()
    sv_rows = np.empty(SV.shape[0], dtype=int)
    for c in range(k):  # the support vectors of class c are rows labelled c
        part = slice(start[c], start[c + 1])
        sv_rows[part] = _match(SV[part], X, np.flatnonzero(y == model.labels[c]), used)
    out = []
    for i, j in ovo.pairs(k):
        local, coef, b = ovo.pair_coefficients(model.nr_sv, model.sv_coef, -model.rho, i, j)
        rows = np.flatnonzero((y == model.labels[i]) | (y == model.labels[j]))
        yy = np.where(y[rows] == model.labels[i], 1.0, -1.0)
        pos = np.searchsorted(rows, sv_rows[local])
        alpha = np.zeros(rows.size)
        alpha[pos] = coef * yy[pos]
        name = "model" if k == 2 else f"model-{model.labels[i]:g}-vs-{model.labels[j]:g}"
        out.append(("l1_svm", instance(name, rows, yy, {"C": float(C)}), (alpha, b)))
    return out


#: LIBLINEAR's dual SVM solvers and the formulation each solves (with the bias in the penalty), with the factor from
#: LIBLINEAR's ``-c`` to the formulation's ``C`` (its squared hinge is ``C' sum xi^2``; svmref's L2 loss ``C/2 sum
#: xi^2``).
LIBLINEAR_SVMS = {"L2R_L1LOSS_SVC_DUAL": ("l1_svm_regularised_bias", 1.0),
                  "L2R_L2LOSS_SVC_DUAL": ("l2_svm_regularised_bias", 2.0),
                  "L2R_L2LOSS_SVC": ("l2_svm_regularised_bias", 2.0)}


def _liblinear_record(model: LiblinearModel, name: str) -> Record:
    """A LIBLINEAR model of a solver verify has no formulation for (logistic regression, L1-regularised, ...)."""
    return Record("?", name, "model", None, "different problem",
                  f"LIBLINEAR {model.solver_type} solves none of verify's formulations (it judges the SVMs "
                  f"{', '.join(LIBLINEAR_SVMS)}): the model is not judged")


def liblinear_instances(model: LiblinearModel, X, y, C: float, X_test=None) -> list[tuple[str, Instance, dict]]:
    """``(formulation, instance, {"w", "b"})`` per binary problem of a LIBLINEAR SVM model: its problem is the SVM with
    the bias in the penalty (:mod:`svmref.formulations.regularised_bias`; ``bias_scale = B`` of ``-B``, 0 without),
    ``C`` from ``-c`` (:data:`LIBLINEAR_SVMS`), the first label as ``+1`` (LIBLINEAR's decision ``w'x + b > 0``); more
    than two classes: one-vs-rest, one problem per class (LIBLINEAR's column of ``w``)."""
    formulation, factor = LIBLINEAR_SVMS[model.solver_type]
    X, y = np.asarray(X, dtype=float)[:, :model.nr_feature], np.asarray(y, dtype=float)
    Xt = np.zeros((0, X.shape[1])) if X_test is None else np.asarray(X_test, dtype=float)[:, :X.shape[1]]
    B = model.bias if model.bias >= 0 else 0.0
    w = model.w.reshape(model.w.shape[0], -1)
    if w.shape[0] != model.nr_feature + (model.bias >= 0):
        raise ValueError(f"the model has {w.shape[0]} rows of w; nr_feature = {model.nr_feature} and bias "
                         f"{model.bias:g} need {model.nr_feature + (model.bias >= 0)}")
    problems = [(model.labels[0], 0)] if model.nr_class == 2 else list(zip(model.labels, range(model.nr_class)))
    out = []
    for label, col in problems:
        yy = np.where(y == label, 1.0, -1.0)
        b = B * float(w[-1, col]) if model.bias >= 0 else 0.0
        name = "model" if model.nr_class == 2 else f"model-{label:g}-vs-rest"
        inst = Instance(name, X, yy, Xt, "linear", {}, {"C": factor * float(C), "bias_scale": B}, True,
                        f"LIBLINEAR model ({model.solver_type}, -c {float(C):g}, "
                        + (f"-B {B:g})" if model.bias >= 0 else "no -B: no bias)") + f" on {X.shape[0]} training rows")
        out.append((formulation, inst, {"w": w[:model.nr_feature, col].copy(), "b": b}))
    return out


def prepare_model(model_path, data_path, C: float, *, epsilon: float | None = None, test_path=None):
    """The model read and matched to its training data: a :class:`LiblinearModel`, or the list of
    ``(formulation, instance, answer)`` of :func:`model_instances` (``ValueError`` or ``OSError`` saying what is wrong)."""
    model = read_model(model_path)
    if isinstance(model, LiblinearModel):
        if model.solver_type not in LIBLINEAR_SVMS:
            return model
        X, y = read_data(data_path, model.nr_feature)
        Xt = None if test_path is None else read_data(test_path, X.shape[1])[0]
        return liblinear_instances(model, X, y, C, Xt)
    X, y = read_data(data_path, model.SV.shape[1])
    Xt = None if test_path is None else read_data(test_path, X.shape[1])[0][:, :X.shape[1]]
    return model_instances(model, X, y, C, epsilon, Xt)


def check_model(model_path, data_path, C: float, *, epsilon: float | None = None, test_path=None,
                tol: float = DEFAULT_TOL, on_record=None, prepared=None, certificate: bool | None = None,
                client=None) -> Report:
    """Judge the model file ``model_path`` trained on ``data_path`` with ``C`` (module docstring); ``prepared`` is what
    :func:`prepare_model` returned for the same arguments, when the caller has it."""
    problems = prepare_model(model_path, data_path, C, epsilon=epsilon, test_path=test_path) if prepared is None \
        else prepared
    name = f"model {model_path}"
    report = Report([], check_verify_tol(tol))
    if isinstance(problems, LiblinearModel):
        rec = _liblinear_record(problems, name)
        report.records.append(rec)
        if on_record is not None:
            on_record(rec)
        return report
    from .blockwise import maybe_blockwise

    for formulation, inst, answer in problems:
        inst = maybe_blockwise([inst], client)[0]
        report.extend(check(lambda *a, _ans=answer, **k: _ans, formulation, [inst], tol, name=name,
                            on_record=on_record, certificate=certificate))
    if test_path is None:
        report.notes.append("no --test file: the decision functions are compared on the training points only")
    return report

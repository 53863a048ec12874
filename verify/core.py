"""``svmref.verify.check``: run a solver on a suite and hold each answer against the reference.

This module calls the solver and judges its answers; what is particular to a formulation is its entry in
:mod:`svmref.verify.specs`, the residuals are computed by :mod:`svmref.verify.evaluation`, and the advice on a
failed answer comes from :mod:`svmref.verify.diagnosis`.
"""
from __future__ import annotations

import inspect
import math
from collections.abc import Callable

import numpy as np

from svmref._validation import check_tol

from . import specs
from .answers import BadAnswer, get
from .diagnosis import SolverReport, diagnose, hints, pass_tolerance
from .evaluation import COMPARISONS, DEFAULT_TOL, KKT_NAMES, TOLERANCES, evaluate, failed, judge, tolerances, unresolved
from .instances import Instance, suite
from .report import Record, Report
from .worker import Runner

__all__ = ["check", "check_verify_tol",
           "check_signature", "SignatureError", "pass_tolerance", "CALL_FORMS", "TOLERANCES", "tolerances",
           "DEFAULT_TOL", "TOL_PARAMETERS", "tol_parameter", "CERTIFICATE_N"]

#: Above this N an instance is judged by its answer's certificate, not against a reference (a cvxpy reference of
#: N = 3000 takes minutes; its kernel matrix alone is 72 MB).
CERTIFICATE_N = 3000

#: How verify calls a solver of each kind of formulation (for signature errors and the docs).
CALL_FORMS = {spec.kind: spec.call for spec in specs.SPECS.values()}


#: The names of a solver's stopping-tolerance parameter that verify recognises, in the order it looks for them.
TOL_PARAMETERS = ("tol", "tolerance", "toler", "eps")


def tol_parameter(fn, name: str | None = None) -> str | None:
    """The parameter of ``fn`` that receives verify's ``tol``: ``name`` when given (:class:`SignatureError` if ``fn``
    has no parameter of that name and takes no ``**kwargs``), else the first of :data:`TOL_PARAMETERS` that ``fn``
    has (None: none, or the signature cannot be inspected)."""
    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        params = None
    if name is not None:
        if not isinstance(name, str) or not name.isidentifier():
            raise ValueError(f"solver_tol must be the name of the solver's tolerance parameter; got {name!r}")
        if params is not None and name not in params and not any(
                p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values()):
            raise SignatureError(f"solver_tol={name!r}: the solver {_name(fn)}{inspect.signature(fn)} has no "
                                 f"parameter named {name}")
        return name
    if params is None:
        return None
    return next((n for n in TOL_PARAMETERS if n in params), None)


class SignatureError(TypeError):
    """The solver cannot be called the way verify calls it (checked once, before any instance runs)."""


def _expected_names(spec) -> list[str]:
    """The names of the positional arguments in the entry's call form: ``f(K, y, C, **options)`` -> K, y, C."""
    return spec.positional_names


def _misordered(sig: inspect.Signature, spec) -> list[tuple[str, str]]:
    """``(parameter, argument it would receive)`` for each positional parameter of the solver that bears the name
    of another of verify's positional arguments (``f(K, C, y)``: C would receive y), compared without case."""
    expected = _expected_names(spec)
    kinds = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    params = [p.name for p in sig.parameters.values() if p.kind in kinds][:len(expected)]
    lower = [e.lower() for e in expected]
    return [(p, expected[i]) for i, p in enumerate(params)
            if p.lower() != lower[i] and p.lower() in lower]


def check_signature(solver, formulation: str, options: dict | None = None, name: str | None = None,
                    solver_tol: str | None = None) -> bool:
    """Check that ``solver`` can be called as verify calls it for ``formulation``.

    Two checks: the positional arguments and keywords bind to its parameters, and no positional parameter bears
    the name of another argument (``f(K, C, y)`` for ``f(K, y, C, **options)``: verify passes by position, so
    ``C`` would receive ``y``).

    Parameters
    ----------
    solver : callable
        The solver under test.
    formulation : str
        One of ``svmref.formulations.names()``: its entry's call form is the expected call.
    options : dict, optional
        Extra keywords the solver will get.
    name : str, optional
        How the message names the solver.
    solver_tol : str, optional
        The name of the parameter that receives verify's ``tol`` (default: the first of :data:`TOL_PARAMETERS`).

    Returns
    -------
    bool
        False when the signature cannot be inspected (a builtin), True otherwise.

    Raises
    ------
    SignatureError
        Naming the expected call (``f(K, y, C, **options)``, ...) and the solver's own signature.
    """
    spec = specs.SPECS[formulation]
    kw = dict(options or {})
    param = tol_parameter(solver, solver_tol)
    if param is not None:
        kw.setdefault(param, DEFAULT_TOL)
    try:
        sig = inspect.signature(solver)
    except (TypeError, ValueError):
        return False
    for k in spec.instance_keywords:
        kw.setdefault(k, None)  # each instance's own value goes by keyword (the entry's call form)
    try:
        sig.bind(*range(spec.n_args), **kw)
    except TypeError as exc:
        label = name or _name(solver)
        extra = f" with options {sorted(options)}" if options else ""
        raise SignatureError(f"the solver {label}{sig} cannot be called as {spec.call}{extra}, which is how "
                             f"verify calls a {formulation} solver ({exc})") from None
    wrong = _misordered(sig, spec)
    if wrong:
        label = name or _name(solver)
        which = ", ".join(f"{p} would receive {e}" for p, e in wrong)
        raise SignatureError(f"the solver {label}{sig} names its parameters in another order than verify passes "
                             f"them: verify calls a {formulation} solver as {spec.call}, by position, so {which}; "
                             f"put them in the order {', '.join(_expected_names(spec))}")
    return True


def _arguments(spec, solver, inst: Instance, tol: float, options: dict, param: str | None = None) -> tuple[tuple, dict]:
    """Positional arguments (copies, so the solver cannot corrupt the instance) and keywords (``tol`` goes to the
    parameter ``param`` unless the options set it)."""
    kw = dict(options)
    if param is not None and param not in kw:
        kw[param] = tol
    args, own = spec.arguments(inst)
    for k, v in own.items():
        kw.setdefault(k, v)
    return args, kw


def _name(solver) -> str:
    mod = getattr(solver, "__module__", None) or ""
    qn = getattr(solver, "__qualname__", None) or getattr(solver, "__name__", None) or type(solver).__name__
    return f"{mod}:{qn}" if mod and mod != "__main__" else qn


def _check_timeout(timeout) -> float | None:
    if timeout is None:
        return None
    try:
        timeout = float(timeout)
    except (TypeError, ValueError):
        raise ValueError(f"timeout must be a positive number of seconds or None; got {timeout!r}") from None
    if not (timeout > 0 and math.isfinite(timeout)):
        raise ValueError(f"timeout must be a positive number of seconds or None; got {timeout!r}")
    return timeout


def check_verify_tol(tol) -> float:
    """verify's tolerance: a finite number in (0, 1). Every error it is compared with is relative (to the optimum, to
    the size of the KKT terms) or on the scale of the decision values, so at ``tol >= 1`` any answer would pass."""
    tol = check_tol(tol)
    if tol >= 1.0:
        raise ValueError(f"tol must be < 1: verify's errors are relative (or on the scale of the decision values), so "
                         f"at tol >= 1 any answer passes; got {tol!r}")
    return tol


def check(solver: Callable, formulation: str, instances="quick", tol: float = DEFAULT_TOL, *,
          options: dict | None = None, name: str | None = None, timeout: float | None = None,
          spec: str | None = None, on_record: Callable | None = None, solver_tol: str | None = None,
          certificate: bool | None = None) -> Report:
    """Run ``solver`` on each instance and hold its answer against the cvxpy reference.

    Parameters
    ----------
    solver : callable
        Follows the contract of :mod:`svmref.verify` (``f(K, y, C, **options)`` for the box duals,
        ``ls_svm_regression`` and ``sparse_ls_svm``; ``f(K, y, gamma)`` for ``rls``;
        ``f(X, y, C, mu)`` for ``support_features``; ``f(K, y, C, epsilon=epsilon)`` for ``svr``, returning
        ``alpha = alpha^+ - alpha^-`` and ``b``). If it has a parameter named ``tol``, ``tolerance``, ``toler``
        or ``eps`` (:data:`TOL_PARAMETERS`, the first found), ``tol`` is passed to it (each record says so in
        ``solver_tol``, ``solver_tol_parameter`` and its notes). The signature is
        checked once, before any instance runs: :class:`SignatureError` (a ``TypeError``) if it does not fit.
    formulation : str
        One of ``svmref.formulations.names()``.
    instances : str or list of Instance
        A suite name (``"quick"``, ``"standard"``, ``"adversarial"``, ``"real"``) or instances
        (:func:`svmref.verify.instances.suite` with ``n=``, :func:`~svmref.verify.instances.from_data`).
    tol : float
        The tolerance of the check (see :data:`TOLERANCES` for how each quantity uses it).
    options : dict
        Extra keyword arguments for the solver.
    name : str
        How the solver is named in the report (default: ``module:qualname``).
    timeout : float or None
        Seconds per instance. ``None`` (default): the solver runs in this process, without a limit.
        A number: it runs in a worker process that is killed when it overruns (verdict ``timeout``);
        see :mod:`svmref.verify.worker` for which callables can be isolated (any, on Linux).
    spec : str
        ``package.module:callable`` naming ``solver``, for a ``spawn`` worker (platforms without fork).
    on_record : callable
        Called with each :class:`~svmref.verify.report.Record` as it finishes (the CLI prints rows with it).
    solver_tol : str
        The name of the solver's parameter that receives ``tol`` (``svmref verify --solver-tol NAME``), for a
        solver whose tolerance parameter has another name than those of :data:`TOL_PARAMETERS`.
    certificate : bool or None
        Judge without a reference, by the answer's own certificate (``svmref verify --certificate``): its KKT residuals
        and duality gap as always, and the objective, the decision function and ``b`` through what weak duality (and
        strong convexity, for the LS-SVMs and RLS) bounds; what it does not bound is unresolved. None (default): for
        the instances with ``N > CERTIFICATE_N``, which no reference can solve.

    Returns
    -------
    Report
        One :class:`~svmref.verify.report.Record` per instance; ``report.passed`` is the overall verdict.
        Ctrl-C (KeyboardInterrupt) stops the run: the report holds the instances that finished and
        ``report.interrupted`` is True.
    """
    tol = check_verify_tol(tol)
    entry = specs.get(formulation)
    if not callable(solver):
        raise TypeError(f"solver must be callable; got {type(solver).__name__}")
    timeout = _check_timeout(timeout)
    options = dict(options or {})
    for k in entry.instance_keywords:
        if k in options:
            raise ValueError(f"options must not set {k} for {formulation}: each instance carries its own {k}, which "
                             f"verify passes to the solver as the keyword {k}=")
    label = name or _name(solver)
    param = tol_parameter(solver, solver_tol)
    check_signature(solver, formulation, options, label, solver_tol=param)
    insts = suite(instances, formulation) if isinstance(instances, str) else list(instances)
    if not insts:
        raise ValueError(f"instances is empty: there is nothing to check {label} on (pass a suite name such as "
                         "'quick', or a list of instances)")
    report = Report([], tol)
    report.planned = len(insts)
    runner = Runner(solver, timeout, spec)
    if runner.note:
        report.notes.append(runner.note)
    if param is not None and param in options:
        param = None  # the user's own value goes to the solver
    if param is not None:
        how = "--solver-tol" if solver_tol is not None else "it has a parameter of that name"
        report.notes.append(f"verify passed tol = {tol:g} to the solver's parameter {param} ({how})")
    _run(runner, entry, insts, report, tol, options, label, param, on_record, certificate)
    return report


def _run(runner, entry, insts, report, tol, options, label, param, on_record, certificate=None) -> None:
    """Check each instance into ``report``; Ctrl-C stops the run and keeps what finished."""
    tols = tolerances(tol)
    try:
        for inst in insts:
            by_cert = (inst.N > CERTIFICATE_N) if certificate is None else bool(certificate)
            if by_cert and entry.certificate is None:
                rec = _unusable(Record(entry.name, label, inst.name, None, "", "", N=inst.N), "error",
                                f"{entry.name} has no certificate that bounds its answer without a reference")
                rec.passed, rec.verdict = None, "no reference"
            else:
                rec = _check_one(runner, entry, inst, tol, tols, options, label, param, by_cert)
            report.records.append(rec)
            if on_record is not None:
                on_record(rec)
    except KeyboardInterrupt:
        runner.kill()
        report.interrupted = True
    finally:
        runner.close()


def _unusable(rec: Record, verdict: str, reason: str) -> Record:
    rec.passed, rec.verdict, rec.reason = False, verdict, reason
    rec.kkt_violation = rec.duality_gap = rec.objective_gap = float("inf")
    return rec


def _call(runner, spec, inst, tol, options, rec: Record, param: str | None = None):
    """Call the solver on ``inst``; the parsed answer, or None with ``rec`` holding the error or timeout."""
    try:
        args, kwargs = _arguments(spec, runner.solver, inst, tol, options, param)
    except MemoryError as exc:  # a blockwise kernel (N beyond DENSE_N) for a solver that takes K
        _unusable(rec, "error", str(exc))
        return None
    res = runner.call(args, kwargs)
    rec.time = res.time
    rec.solver_output, rec.solver_output_lines, rec.traceback = res.output, res.output_lines, res.traceback
    rec.solver_warnings = [list(w) for w in res.warnings]
    rec.solver_warnings_total = res.warnings_total
    for cat, msg, n in res.warnings:
        if cat == "ConvergenceWarning":
            rec.notes.append(f"solver warned: {msg}" + (f" ({n} times)" if n > 1 else ""))
    kept = sum(n for _, _, n in res.warnings)
    if res.warnings_total > kept:
        rec.notes.append(f"the solver issued {res.warnings_total} warnings; the first {len(res.warnings)} distinct "
                         f"ones are kept with their counts ({kept}), the others only counted")
    if res.kind == "raised" and res.message.startswith("DifferentProblem: "):  # known from how the answer was made
        rec.passed, rec.verdict, rec.reason = None, "different problem", res.message[len("DifferentProblem: "):]
        rec.traceback = ""
        return None
    if res.kind == "raised" and res.message.startswith("BadAnswer: "):  # an estimator's state that cannot be read
        _unusable(rec, "error", "unusable answer: " + res.message[len("BadAnswer: "):])
        rec.traceback = ""
        return None
    if res.kind != "ok":
        _unusable(rec, "timeout" if res.kind == "timeout" else "error",
                  f"solver raised {res.message}" if res.kind == "raised" else res.message)
        if res.kind == "raised" and res.message.startswith("NotConvexError") and not inst.psd()[0]:
            rec.passed, rec.verdict = None, "not convex"  # a refusal of a non-PSD kernel is the right answer
        return None
    out = res.value
    status = get(out, "status") if not isinstance(out, (tuple, list, np.ndarray)) else None
    if isinstance(status, str):
        rec.solver_status = status
        message = get(out, "message")
        rec.solver_message = message if isinstance(message, str) else ""
        if status != "optimal":
            rec.notes.append(f"solver reports status {status!r}")
    try:
        return spec.parse(out, inst)
    except BadAnswer as exc:
        _unusable(rec, "error", f"unusable answer: {exc}")
        return None


def _residuals(rec: Record, r) -> None:
    """Copy the residuals (no reference needed) into the record."""
    rec.objective = r.objective
    rec.b_derived = r.b_derived
    rec.notes.extend(r.notes)
    rec.residuals = dict(r.values)
    finite_kkt = [r.values[k] for k in KKT_NAMES if not math.isnan(r.values[k])]
    rec.kkt_violation = max(finite_kkt) if finite_kkt else float("nan")
    rec.duality_gap = r.values["duality_gap"]
    if math.isfinite(getattr(r, "b_low", float("nan"))) or math.isfinite(getattr(r, "b_high", float("nan"))):
        rec.b_interval = [r.b_low, r.b_high]


def _check_one(runner, spec, inst, tol, tols, options, label, param=None, certificate=False) -> Record:
    rec = Record(spec.name, label, inst.name, None, "", "", N=inst.N, hyper=dict(inst.hyper))
    if param is not None:
        rec.solver_tol, rec.solver_tol_parameter = tol, param
        rec.notes.append(f"verify set the solver's {param} = {tol:g}")
    if not inst.unique:
        rec.notes.append("the optimal alpha is not unique here: only objective values, KKT residuals and "
                         "the decision function are compared, never alpha")
    ans = _call(runner, spec, inst, tol, options, rec, param)  # 1. the solver
    if ans is None:
        return rec
    try:  # 2. the residuals (no reference needed)
        r, own, own_where = evaluate(spec, inst, ans, None, tol)
    except (ValueError, FloatingPointError) as exc:
        rec.passed, rec.verdict, rec.reason = False, "error", f"residuals cannot be computed: {exc}"
        return rec
    _residuals(rec, r)
    if certificate:  # 3'. no reference: what the answer's own certificate bounds
        _by_certificate(rec, spec, inst, ans, r, own, own_where, tol, tols)
        return rec
    ref = spec.build_reference(inst, ans)  # 3. the reference
    rec.reference_time = ref.time
    rec.reference_certified = ref.certified
    rec.notes.extend(ref.warnings)
    if ref.error:
        rec.passed, rec.verdict = None, "no reference"
        rec.reason = ref.error
        return rec
    _, values, where = evaluate(spec, inst, ans, ref, tol)
    if ref.convex:
        rec.reference_objective = ref.objective
        rec.reference_disagreement = ref.disagreement
        rec.objective_gap = values["objective_gap"]
        rec.decision_gap = values["decision_gap"]
        rec.bias_free_gap = values.get("bias_free_gap", float("nan"))
        rec.b_gap = values.get("b_gap", float("nan"))
        rec.reference_resolution = {k: values[k + "_resolution"] for k in COMPARISONS if k + "_resolution" in values}
        if not (r.b_unique and ref.b_unique) and spec.has_b:
            rec.notes.append("b not unique (no free alpha_i): the decision functions are compared with each b at its "
                             "best in its KKT interval")
    else:
        rec.notes.append(ref.message)
    _verdict(rec, spec, inst, ans, r, ref, values, where, tol, tols)  # 4. the verdict
    return rec


#: Kernels positive semidefinite by construction (002; the polynomial kernel for c > 0, which it requires).
PSD_KERNELS = ("linear", "rbf", "gaussian", "poly", "polynomial")


def _not_known_convex(spec, inst) -> str:
    """Why the certificate cannot vouch for ``inst`` (empty when the problem is convex): its kernel is not PSD (checked
    where K is held, as the reference checks it), or not known to be (another kernel, with K made by blocks)."""
    if spec.on_features or inst.kernel in PSD_KERNELS:
        return ""
    if isinstance(inst.K, np.ndarray):
        psd, lam = inst.psd()
        return "" if psd else (f"not convex: K is not positive semidefinite (its smallest eigenvalue is {lam:.3g}): "
                               "no certificate bounds a stationary point's distance to a minimum")
    return (f"not convex as far as verify knows: the {inst.kernel} kernel is not positive semidefinite in general, and "
            f"K ({inst.N} x {inst.N}, made by blocks) is too large to check")


def _by_certificate(rec: Record, spec, inst, ans, r, values: dict, where: dict, tol, tols) -> None:
    """The verdict without a reference (``certificate=True``): the answer's own KKT residuals and duality gap are
    judged as always; the objective, the decision function and ``b`` are compared with the optimum only through what
    the certificate bounds (:attr:`~svmref.verify.specs.Spec.certificate`): each is "0 within its bound", so it
    passes where the bound is at most ``tol`` and is otherwise unresolved, never failed and never passed on faith."""
    not_convex = _not_known_convex(spec, inst)
    if not_convex:  # weak duality and strong convexity, which every bound rests on, need a PSD kernel
        failures = failed(values, where, tols)
        rec.passed, rec.verdict = None, "not convex"
        rec.reason = not_convex + (f" (KKT residuals, for information: {failures[0]})" if failures else
                                   " (the answer satisfies the KKT conditions: a stationary point)")
        return
    bounds = spec.certificate(inst, r, values)
    for k, bound in bounds.items():
        if math.isnan(bound):
            continue  # not applicable (RLS has no b)
        values[k], values[k + "_resolution"] = 0.0, bound
        where[k] = f"bounded by the answer's own certificate: at most {bound:.1e}"
    rec.reference_resolution = dict(bounds)
    rec.objective_gap = bounds["objective_gap"]
    rec.decision_gap = bounds["decision_gap"]
    rec.b_gap = bounds["b_gap"]
    words = ", ".join(f"{k.replace('_', ' ')} <= {v:.1e}" if math.isfinite(v) else f"{k.replace('_', ' ')} unbounded"
                      for k, v in bounds.items() if not math.isnan(v))
    rec.notes.append(f"judged by its own certificate, without a reference (N = {inst.N}): {words}")
    failures = failed(values, where, tols)
    open_checks = unresolved(values, tols)
    if failures:
        rec.passed, rec.verdict, rec.reason = False, "fail", "; ".join(failures)
        rec.diagnoses = diagnose(spec, inst, ans, r, values, tols, tol, [], SolverReport.of(rec), None)
        rec.would_pass_at_tol = pass_tolerance(lambda t: values, tol)
    elif open_checks:
        rec.passed, rec.verdict = None, "unresolved"
        rec.reason = "; ".join(
            (f"{k}: the certificate bounds it by {b:.1e}, above tol = {tol:g}" if math.isfinite(b) else
             f"{k}: not bounded by the certificate (b need not be unique for {spec.name})")
            for k, b in bounds.items() if k in tols and judge(values, k, tols) == "unresolved")
    else:
        rec.passed, rec.verdict = True, "pass"


def _verdict(rec: Record, spec, inst, ans, r, ref, values, where, tol, tols) -> None:
    """pass, fail (with diagnoses, hints and the tolerance it would pass at), unresolved or not convex."""
    failures = failed(values, where, tols)
    open_checks = unresolved(values, tols) if ref.convex else []
    if not ref.convex:
        rec.passed, rec.verdict = None, "not convex"
        rec.reason = ref.message.split(";")[0] + (f" (KKT residuals, for information: {failures[0]})" if failures else
                                                  " (the answer satisfies the KKT conditions: a stationary point)")
    elif failures:
        rec.passed, rec.verdict, rec.reason = False, "fail", "; ".join(failures)
        try:
            rec.hints = hints(spec, inst, ans, ref, tol, tols)
            rec.diagnoses = diagnose(spec, inst, ans, r, values, tols, tol, rec.hints, SolverReport.of(rec), ref)
            rec.would_pass_at_tol = pass_tolerance(lambda t: evaluate(spec, inst, ans, ref, t)[1], tol)
        except (ValueError, FloatingPointError) as exc:  # advice is best effort; the verdict stands
            rec.notes.append(f"no diagnosis: {type(exc).__name__}: {exc}")
    elif open_checks:
        rec.passed, rec.verdict = None, "unresolved"
        rec.reason = "; ".join(open_checks)
    else:
        rec.passed, rec.verdict = True, "pass"
        rec.reason = next((n for n in rec.notes if n.startswith("b was not given")), "")

"""Verify a solver inside your own test suite: assertions, one pytest test per instance, hypothesis strategies.

>>> from svmref.testing import assert_solves
>>> assert_solves(my_solver, "l1_svm", suite="quick")       # doctest: +SKIP

* :func:`assert_solves` runs :func:`svmref.verify.check` on a suite (or your instances) and raises
  ``AssertionError`` whose message is verify's report of the failing instances: the reason, the diagnoses in
  plain words ("b is wrong: ..."), the tolerance each would pass at and the hints. It returns the records.
* :func:`parametrize_solver` is a ``pytest.mark.parametrize`` with one test per instance, its id the instance's
  name (scikit-learn's ``parametrize_with_checks`` does the same for estimators); each test calls ``check()``.
* :func:`assert_estimator_solves` does the same for an estimator in scikit-learn's style, fitted on raw X
  (:mod:`svmref.verify.estimators`).
* :func:`check_instance` holds one instance against the reference: what a hypothesis test calls on each
  instance of :func:`svmref.testing.strategies.instances`.
* :func:`save_instance` and :func:`load_instance` keep a hard instance found once as a JSON file, to be
  checked on every run.

The solver follows verify's contract (:mod:`svmref.verify`: ``f(K, y, C, **options)`` for the box duals, ...).
Nothing here imports pytest or hypothesis when the module is imported: :func:`parametrize_solver` imports pytest
when it is called, and only :mod:`svmref.testing.strategies` needs hypothesis (``pip install svmref[testing]``).
docs/testing.md has a complete example project.
"""
from __future__ import annotations

from collections.abc import Callable, Iterable

from svmref import verify
from svmref.verify import DEFAULT_TOL, Instance, Record, Report
from svmref.verify.specs import get as _spec

from ._cases import Case, describe, hyper_keys, load_instance, save_instance

__all__ = ["assert_solves", "assert_estimator_solves", "check_instance", "parametrize_solver", "SolverCheck", "Case",
           "save_instance", "load_instance"]


def _fits(inst: Instance, formulation: str, where: str) -> None:
    """``ValueError`` naming ``where`` unless ``inst`` carries what a ``formulation`` instance needs."""
    missing = [k for k in hyper_keys(formulation) if k not in inst.hyper]
    if missing:
        raise ValueError(f"{where}: instance {inst.name!r} has the hyperparameters {sorted(inst.hyper)}; a {formulation} "
                         f"instance needs {list(hyper_keys(formulation))} (missing {missing})")
    if _spec(formulation).classification and not set(map(float, inst.y)) <= {-1.0, 1.0}:
        raise ValueError(f"{where}: instance {inst.name!r} has labels other than -1 and +1; {formulation} is a "
                         f"classification formulation")


def _instances(suite, formulation: str) -> tuple[list[Instance], str]:
    """The instances ``suite`` names, and how to name them in a message."""
    if isinstance(suite, str):
        return list(verify.suite(suite, formulation)), f"suite {suite!r}"
    items = [suite] if isinstance(suite, Instance) else suite
    if not isinstance(items, Iterable):
        raise TypeError(f"suite must be a suite name {list(verify.SUITES)}, an Instance, or a list of them; "
                        f"got {type(suite).__name__}")
    out, names = [], []
    for item in items:
        if isinstance(item, str):
            out += verify.suite(item, formulation)
            names.append(item)
        elif isinstance(item, Instance):
            _fits(item, formulation, "suite")
            out.append(item)
        else:
            raise TypeError(f"suite must be a suite name {list(verify.SUITES)}, an Instance, or a list of them; "
                            f"got an item of type {type(item).__name__}")
    if not out:
        raise ValueError("suite is empty: give a suite name or at least one Instance")
    own = len(out) - sum(len(verify.suite(n, formulation)) for n in names)
    label = " + ".join([f"suite {n!r}" for n in names] + ([f"{own} given instance(s)"] if own else []))
    return out, label


def _message(report: Report, formulation: str, what: str | None = None) -> str:
    """verify's report of the failing instances (rows, diagnoses, the tol each would pass at, hints) and its summary,
    under one line that says what failed (``what``: the suite; None for one instance)."""
    fails = report.failures
    where = (f"{len(fails)} of {len(report)} instance(s) of {what}" if what is not None
             else f"instance {fails[0].instance}")
    head = f"{fails[0].solver} does not solve {formulation} on {where} at tol = {report.tol:g}"
    return f"{head}\n{Report(fails, report.tol).table()}\n\n{report.summary_text()}"


def _run(fn, formulation, insts, tol, timeout, name, options) -> Report:
    report = verify.check(fn, formulation, insts, tol, options=options, name=name, timeout=timeout)
    if report.interrupted:  # verify keeps a partial report on Ctrl-C; a test run must stop
        raise KeyboardInterrupt
    return report


def assert_solves(fn: Callable, formulation: str, *, suite="standard", tol: float = DEFAULT_TOL,
                  timeout: float | None = None, name: str | None = None, **options) -> list[Record]:
    """Assert that ``fn`` solves ``formulation`` on every instance of ``suite``, as :func:`svmref.verify.check` judges.

    Parameters
    ----------
    fn : callable
        The solver, following verify's contract for ``formulation`` (``f(K, y, C, **options)`` for the box duals;
        see :mod:`svmref.verify`). If it has a parameter named ``tol``, verify passes it ``tol``.
    formulation : str
        One of :func:`svmref.verify.specs.names` (``"l1_svm"``, ``"ls_svm"``, ...).
    suite : str, Instance or list
        A suite name (``"quick"``, ``"standard"``, ``"adversarial"``, ``"real"``), an instance, or a list of names and
        instances (the cases kept by :func:`save_instance`, read back by :func:`load_instance`).
    tol : float
        The tolerance of every check (:data:`svmref.verify.TOLERANCES`): a pass means every reported error is at most
        ``tol`` in its unit.
    timeout : float, optional
        Seconds per instance; the solver then runs in a worker process killed when it overruns.
    name : str, optional
        How the solver is named in the report (default ``module:qualname``).
    **options
        Keyword arguments for the solver.

    Returns
    -------
    list of Record
        One :class:`svmref.verify.Record` per instance.

    Raises
    ------
    AssertionError
        Some instance failed (its message is verify's report of the failing instances, with diagnoses, hints and the
        tolerance each would pass at), or no instance was judged (every verdict "not convex", "no reference" or
        "unresolved": no evidence either way).
    """
    __tracebackhide__ = True  # pytest shows the message, not this frame
    insts, what = _instances(suite, formulation)
    report = _run(fn, formulation, insts, tol, timeout, name, options)
    if report.records and not report.judged and not report.failures:
        verdicts = ", ".join(f"{r.instance}: {r.verdict}" for r in report.records)
        raise AssertionError(f"no instance of {what} was judged ({verdicts}): this is no evidence that "
                             f"{report.records[0].solver} solves {formulation}")
    if not report.passed:
        raise AssertionError(_message(report, formulation, what))
    return list(report.records)


def assert_estimator_solves(estimator, formulation: str, *, suite="standard", tol: float = DEFAULT_TOL,
                            params: dict | None = None, timeout: float | None = None, name: str | None = None,
                            precomputed: bool = False) -> list[Record]:
    """Assert that an estimator (scikit-learn's conventions) solves ``formulation`` on raw X, as
    :func:`svmref.verify.estimators.check_estimator` judges it.

    For each instance of ``suite`` the estimator is built with the instance's kernel and hyperparameters in its own
    conventions (``gamma = 1/sigma^2``, ``C``, ``epsilon``; KernelRidge's ``alpha = m gamma`` for RLS) and ``params``,
    fitted on raw ``X``, and its dual solution read from ``dual_coef_``, ``support_``, ``intercept_``.

    Parameters
    ----------
    estimator : class or object
        An estimator class, or an unfitted estimator (cloned).
    formulation, suite, tol, timeout, name
        As for :func:`assert_solves`.
    params : dict, optional
        The estimator's own parameters (they override what verify sets, its ``tol`` included).
    precomputed : bool
        Give it ``kernel="precomputed"`` and K instead of the named kernel.

    Returns
    -------
    list of Record
        One record per instance judged.

    Raises
    ------
    AssertionError
        Some instance failed, or none was judged (a linear model with its intercept in the penalty is "a different
        problem"; an instance the estimator cannot take is skipped and named).
    """
    __tracebackhide__ = True
    from svmref.verify.estimators import check_estimator

    insts, what = _instances(suite, formulation)
    report = check_estimator(estimator, formulation, insts, tol, params=params, name=name, timeout=timeout,
                             precomputed=precomputed)
    if report.interrupted:
        raise KeyboardInterrupt
    if not report.judged and not report.failures:
        verdicts = ", ".join([f"{r.instance}: {r.verdict} ({r.reason[:200]})" for r in report.records]
                             + [f"skipped {m}" for m in report.skipped])
        raise AssertionError(f"no instance of {what} was judged ({verdicts}): this is no evidence that "
                             f"{name or type(estimator).__name__} solves {formulation}")
    if not report.passed:
        raise AssertionError(_message(report, formulation, what))
    return list(report.records)


def check_instance(fn: Callable, instance: Instance, formulation: str | None = None, *, tol: float = DEFAULT_TOL,
                   timeout: float | None = None, keep=None, name: str | None = None, **options) -> Record:
    """Hold ``fn``'s answer on one instance against the reference; ``AssertionError`` with verify's report if it fails.

    This is what a hypothesis test calls on each instance that :func:`svmref.testing.strategies.instances` draws.
    An instance that verify does not judge (verdict "not convex", "no reference" or "unresolved": the reference
    cannot decide) is not a failure: the record is returned.

    Parameters
    ----------
    fn : callable
        The solver (verify's contract for the formulation).
    instance : Instance
        A :class:`Case` (it carries its formulation) or any :class:`svmref.verify.Instance`.
    formulation : str, optional
        Defaults to ``instance.formulation``; required for an instance that carries none.
    tol, timeout, name, **options
        As for :func:`assert_solves`.
    keep : str or os.PathLike, optional
        A JSON file: when the instance fails, it is written there (:func:`save_instance`), replacing what was there.
        Hypothesis runs the smallest failing example last, so after a failed hypothesis test the file holds the shrunk
        instance, ready to be checked on every later run.

    Returns
    -------
    Record
        verify's record of the instance.
    """
    __tracebackhide__ = True
    if not isinstance(instance, Instance):
        raise TypeError(f"instance must be an svmref.verify.Instance (or svmref.testing.Case); got "
                        f"{type(instance).__name__}")
    formulation = formulation or getattr(instance, "formulation", "")
    if not formulation:
        raise ValueError(f"formulation: instance {instance.name!r} carries no formulation (it is not an "
                         f"svmref.testing.Case); pass one, e.g. check_instance(fn, instance, 'l1_svm')")
    _fits(instance, formulation, "instance")
    report = _run(fn, formulation, [instance], tol, timeout, name, options)
    rec = report.records[0]
    if rec.passed is False:
        kept = ""
        if keep is not None:
            kept = f"\nkept in {save_instance(instance, keep, formulation)} (svmref.testing.load_instance reads it back)"
        raise AssertionError(f"{_message(report, formulation)}\n"
                             f"instance {instance.name}: {describe(instance)}{kept}")
    return rec


class SolverCheck:
    """One test of :func:`parametrize_solver`: calling it checks the solver on one instance.

    ``check()`` returns the :class:`svmref.verify.Record`, raises ``AssertionError`` with verify's report when the
    instance fails, and skips the test (``pytest.skip`` with verify's verdict and reason) when verify does not judge
    it (not convex, no reference, unresolved).
    """

    def __init__(self, fn, formulation, instance, tol, timeout, name, options):
        self.fn, self.formulation, self.instance = fn, formulation, instance
        self.tol, self.timeout, self.name, self.options = tol, timeout, name, dict(options)

    def __call__(self) -> Record:
        __tracebackhide__ = True
        import pytest

        rec = check_instance(self.fn, self.instance, self.formulation, tol=self.tol, timeout=self.timeout,
                             name=self.name, **self.options)
        if rec.passed is None:
            pytest.skip(reason=f"not judged by verify ({rec.verdict}): {rec.reason}")
        return rec

    def __repr__(self) -> str:
        return f"SolverCheck({self.formulation}, {self.instance.name})"


def parametrize_solver(fn: Callable, formulation: str, suite="standard", *, tol: float = DEFAULT_TOL,
                       timeout: float | None = None, name: str | None = None, argname: str = "check", **options):
    """A pytest parametrisation with one test per instance of ``suite``, each id the instance's name.

    >>> @parametrize_solver(my_solver, "l1_svm", suite="adversarial")    # doctest: +SKIP
    ... def test_my_solver(check):
    ...     check()

    The solver's signature is checked once, when the decorator is built (:class:`svmref.verify.SignatureError` at
    collection). Parameters as for :func:`assert_solves`; ``argname`` is the test's argument that receives the
    :class:`SolverCheck`.

    Returns
    -------
    pytest.MarkDecorator
        ``pytest.mark.parametrize(argname, [...], ids=[instance names])``.
    """
    try:
        import pytest
    except ImportError:
        raise ImportError("svmref.testing.parametrize_solver needs pytest: pip install svmref[testing]") from None
    if not (isinstance(argname, str) and argname.isidentifier()):
        raise ValueError(f"argname must be the name of the test's argument (an identifier); got {argname!r}")
    tol = verify.check_verify_tol(tol)
    empty = not isinstance(suite, (str, Instance)) and isinstance(suite, (list, tuple)) and not suite
    insts = [] if empty else _instances(suite, formulation)[0]  # no kept case yet: pytest skips the empty set
    verify.check_signature(fn, formulation, options, name)
    params = [pytest.param(SolverCheck(fn, formulation, inst, tol, timeout, name, options), id=inst.name)
              for inst in insts]
    return pytest.mark.parametrize(argname, params)

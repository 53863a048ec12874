"""``svmref verify``: hold a solver against the cvxpy reference from the command line.

Exit codes: 0 every instance passed; 1 some instance failed (or timed out); 2 usage error: a bad
option, an output path that cannot be written, a ``--data`` file that cannot be read, a SPEC that
cannot be imported, or a solver whose signature does not fit the formulation (all checked before
any instance runs); 130 interrupted by Ctrl-C (the finished rows, a partial verdict and ``--json``
are still written); 141 its standard output was closed by the reader (``svmref verify --all | head -1``):
it stops at once, quietly, as a Unix tool killed by SIGPIPE does.
"""
from __future__ import annotations

import argparse
import contextlib
import os
import sys

import numpy as np

from svmref._validation import check_kernel_memory
from svmref.cli import ArgumentParser, UsageError, check_number, check_writable, make_parent

from . import specs
from .core import CERTIFICATE_N, DEFAULT_TOL, SignatureError, check, check_signature, tol_parameter
from .data import check_targets, scale_columns
from .instances import SCALABLE, SUITES, from_data, load_csv, standardise_split, suite
from .loader import SpecError, load_spec, parse_spec
from .report import Record, Report

__all__ = ["main", "load_spec", "SpecError"]

_EPILOG = """\
SPEC is package.module:callable (importable from the current directory or the installed
packages) or path/to/file.py:callable.

WARNING: verify imports SPEC and runs it: it executes the code you name, by design.
Only verify code you trust.

The solver contract (see 'python -m pydoc svmref.verify'):
  box duals l1_svm, l2_svm, ls_svm, least_1norm_svm, and ls_svm_regression, sparse_ls_svm:
      f(K, y, C, **options) -> (alpha, b) | alpha | object with .alpha, .b   (b may be None)
  rls:                f(K, y, gamma) -> c | object with .c
  support_features:   f(X, y, C, mu) -> object with .lam and/or .a, .b
  svr (epsilon-SVR):  f(K, y, C, epsilon=epsilon) -> (alpha, b) | alpha | object with .alpha, .b
                      with alpha = alpha^+ - alpha^- (length N), f(x) = sum_i alpha_i k(x_i, x) + b
  If f has a parameter named tol, tolerance, toler or eps (the first found), verify passes the
  tolerance it checks at to it; --solver-tol NAME names another parameter.

Suites: quick (seconds), standard (N up to 300), adversarial (degenerate and extreme
instances; a non-PSD MLP kernel is reported as 'not convex'), real (shipped data sets).
--n N draws every instance of quick or standard with N training patterns (named NAME@N);
--data FILE.csv verifies on your data instead (labels in the last column; --C, --sigma, and
--epsilon for svr).

Each instance runs in a worker process killed after --timeout seconds (verdict 'timeout').
A failed row is followed by its diagnoses, the tolerance it would pass at, and any hint
(an answer that passes after a known convention change such as alpha -> y * alpha).
What the solver prints is captured per instance (in --json as solver_output), as is the
traceback of an exception it raises; --verbose prints both under each row.

Exit status: 0 all instances judged pass (at least one judged), 1 any fails or times out, or none
was judged (not convex, no reference, unresolved, different problem), 2 usage error (bad option,
unwritable --json, unreadable --data, SPEC not importable, wrong solver signature),
130 interrupted by Ctrl-C (the rows that finished and a partial verdict are printed),
141 standard output closed by its reader (e.g. '| head'): verify stops quietly.

An estimator (scikit-learn's conventions) is judged on raw X with --estimator MODULE:CLASS:
built with each instance's kernel (gamma = 1/sigma^2, ...) and hyperparameters, fitted, its dual
solution read from dual_coef_, support_ and intercept_; --param NAME=VALUE sets its own parameters.
With --data and more than two classes, each one-vs-one pair is judged as its own binary problem.

A LIBSVM or LIBLINEAR model file: --model MODEL --data TRAIN --C C (TRAIN in LIBSVM's sparse text
format; C, and epsilon-SVR's --epsilon, are not in the model file). c_svc is judged as l1_svm (each
one-vs-one pair on its own), epsilon_svr as svr; a LIBLINEAR model (no bias, or -B: a regularised bias)
is named a different problem.

A program in any language: 'svmref suite export DIR -f F' writes the instances (DIR/NAME.npz and
DIR/NAME.txt, described in DIR/manifest.json); the program writes DIR/answers/NAME.npz (alpha, b) or
DIR/answers/NAME.txt (alpha one per line, then b); 'svmref verify --answers DIR' judges them.

Examples:
  svmref verify my_solver.py:solve --formulation least_1norm_svm --suite quick --json out.json
  svmref verify --estimator sklearn.svm:SVC --formulation l1_svm --suite standard --param cache_size=500
"""


def _parser() -> argparse.ArgumentParser:
    p = ArgumentParser(
        prog="svmref verify",
        description="Hold a solver against the cvxpy reference (objective, KKT residuals, duality gap, "
        "decision function on the training and held-out points) and print a verdict per instance with the reason.",
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("spec", nargs="?", metavar="SPEC", help="the solver: package.module:callable or path/to/file.py:callable")
    p.add_argument("--formulation", "-f", metavar="NAME",
                   help="formulation the solver solves (default: the registry's entry for a built-in SPEC)")
    p.add_argument("--suite", "-s", default="quick", choices=SUITES, help="instances to run (default: quick)")
    p.add_argument("--tol", default=DEFAULT_TOL, metavar="T",
                   help=f"tolerance of the check, in (0, 1) (default {DEFAULT_TOL:g}); a pass means every reported "
                   "error is <= T in its unit: objective gap, KKT residuals, b and decision values")
    p.add_argument("--solver-tol", default=None, metavar="NAME",
                   help="the solver's parameter that receives --tol (default: the first of tol, tolerance, toler, eps "
                   "that it has)")
    p.add_argument("--timeout", default=DEFAULT_TIMEOUT, metavar="SECONDS",
                   help=f"seconds per instance before the solver's process is killed (default {DEFAULT_TIMEOUT:g})")
    p.add_argument("--n", default=None, metavar="N",
                   help="draw every instance of the quick or standard suite with N training patterns")
    p.add_argument("--data", metavar="FILE.csv",
                   help="verify on your own data: numeric CSV, labels (or targets) in the last column")
    p.add_argument("--C", dest="C", default=None, metavar="C", help="C (for --data; default 1)")
    p.add_argument("--sigma", default=None, metavar="S",
                   help="RBF width for --data (default sqrt(number of features))")
    p.add_argument("--epsilon", default=None, metavar="E",
                   help="tube half-width for --data with --formulation svr (default 0.1, in the units of the targets)")
    p.add_argument("--json", metavar="PATH", help="also write the records as JSON to PATH ('-': standard output, "
                   "and the table goes to standard error)")
    p.add_argument("--estimator", metavar="MODULE:CLASS",
                   help="judge an estimator on raw X instead of a function: built with each instance's kernel and "
                   "hyperparameters in its own conventions (scikit-learn's), fitted, its dual solution read from "
                   "dual_coef_, support_, intercept_")
    p.add_argument("--model", metavar="MODEL",
                   help="judge a LIBSVM (svm-train) or LIBLINEAR (train) model file; --data TRAIN (LIBSVM's sparse text "
                   "format, the file it was trained on) and --C are required, --epsilon for an epsilon_svr model")
    p.add_argument("--test", metavar="FILE",
                   help="with --model: held-out points (LIBSVM's text format) on which the decision functions are "
                   "compared too")
    p.add_argument("--certificate", action="store_true",
                   help="judge without a reference, by the answer's own primal-dual certificate (automatic above "
                   f"N = {CERTIFICATE_N}): its KKT residuals and duality gap, and what weak duality bounds")
    p.add_argument("--scheduler", metavar="ADDRESS",
                   help="with --estimator, --model or --answers: make the kernel's blocks on a Dask cluster "
                   "(tcp://HOST:PORT; pip install 'svmref[dask]')")
    p.add_argument("--answers", metavar="DIR",
                   help="judge the answers a program wrote to DIR/answers for the instances of 'svmref suite export DIR'")
    p.add_argument("--param", action="append", default=[], metavar="NAME=VALUE",
                   help="a parameter of the estimator (repeatable; VALUE a Python literal, else a string)")
    p.add_argument("--list", action="store_true", help="print every built-in solver as 'SPEC formulation' and exit")
    p.add_argument("--all", action="store_true",
                   help="check every built-in solver against every formulation it serves (the health report)")
    p.add_argument("--quiet", "-q", action="store_true", help="print only the summary")
    bar = p.add_mutually_exclusive_group()
    bar.add_argument("--no-progress", action="store_true", help="no progress bar")
    bar.add_argument("--progress", action="store_true",
                     help="a progress bar on stderr even when it is not a terminal (the default there is none)")
    p.add_argument("--verbose", "-v", action="store_true",
                   help="also print, under each row, what the solver printed and the traceback of any exception it raised")
    return p


#: Default seconds per instance (generous: the standard suite's largest instance takes well under a
#: second for a compiled solver, a minute for a slow pure-Python one).
DEFAULT_TIMEOUT = 120.0


def _registry() -> dict[str, str]:
    from svmref.solvers import REGISTRY  # the built-in solvers (numba): imported only for --list and --all

    return dict(REGISTRY)


def _formulation_names() -> list[str]:
    return specs.names()


def _options(args) -> dict:
    """Validate every option before any work; raises UsageError naming the option."""
    opts = {}
    opts["tol"] = check_number(args.tol, "--tol", low=0.0, high=1.0)
    opts["timeout"] = check_number(args.timeout, "--timeout", low=0.0)
    opts["n"] = None if args.n is None else check_number(args.n, "--n", integer=True, low=4, low_open=False)
    if opts["n"] is not None and args.suite not in SCALABLE:
        raise UsageError(f"--n rescales the suites {', '.join(SCALABLE)} only; --suite {args.suite} has fixed sizes")
    if opts["n"] is not None:
        _fits(opts["n"], "--n")
    opts["C"] = 1.0 if args.C is None else check_number(args.C, "--C", low=0.0)
    opts["sigma"] = None if args.sigma is None else check_number(args.sigma, "--sigma", low=0.0)
    if args.data is None and (args.C is not None or args.sigma is not None):
        given = " and ".join(o for o, v in (("--C", args.C), ("--sigma", args.sigma)) if v is not None)
        raise UsageError(f"{given} go{'es' if ' and ' not in given else ''} with --data (the suites fix their own)")
    if args.quiet and args.verbose:
        raise UsageError("give either --quiet or --verbose, not both")
    eps = getattr(args, "epsilon", None)
    opts["epsilon"] = None if eps is None else check_number(eps, "--epsilon", low=0.0, low_open=False)
    if eps is not None and args.data is None:
        raise UsageError("--epsilon goes with --data (the suites fix their own)")
    if args.data is not None and opts["n"] is not None:
        raise UsageError("give either --data or --n, not both")
    if args.json == "-":
        opts["json"] = "-"
    elif args.json is not None:
        opts["json"] = check_writable(args.json, "--json")
    if args.formulation is not None and args.formulation not in _formulation_names():
        raise UsageError(f"unknown --formulation {args.formulation!r}; expected one of {', '.join(_formulation_names())}")
    return opts


def _instances(args, opts, formulation):
    """The instances to run: a suite (maybe rescaled), or the user's --data."""
    size = opts["n"]
    if args.data is None:
        return suite(args.suite, formulation, n=size)
    entry = specs.SPECS[formulation]
    if opts.get("epsilon") is not None and "epsilon" not in entry.instance_keywords:
        raise UsageError(f"--epsilon is the tube half-width of epsilon-SVR (--formulation svr); {formulation} has none")
    try:
        X, y = load_csv(args.data)
    except OSError as exc:
        raise UsageError(f"--data: cannot read {args.data!r} ({exc.strerror or exc})") from None
    except UnicodeDecodeError as exc:
        raise UsageError(f"--data: {args.data!r} is not UTF-8 text (byte {exc.object[exc.start]:#04x} at position "
                         f"{exc.start}); expected a numeric CSV file") from None
    except ValueError as exc:
        raise UsageError(f"--data: {args.data!r}: {exc}") from None
    _fits(X.shape[0], "--data")
    try:
        X = scale_columns(X)  # so that standardising cannot overflow: see scale_columns
        if not entry.classification:
            check_targets(y)
        name = "data-" + os.path.splitext(os.path.basename(args.data))[0]
        extra = {} if opts.get("epsilon") is None else {"epsilon": opts["epsilon"]}
        return [from_data(X, y, formulation, C=opts["C"], sigma=opts["sigma"], name=name, **extra)]
    except ValueError as exc:
        raise UsageError(f"--data: {args.data!r}: {exc}") from None


def _fits(n: int, option: str) -> None:
    """verify (and its reference) hold a dense N x N kernel: refuse sizes that cannot fit, naming the option."""
    try:
        check_kernel_memory(n)
    except MemoryError as exc:
        raise UsageError(f"{option}: {exc}") from None


#: Exit status when the reader of standard output went away (``| head``): 128 + SIGPIPE, as the shells report a
#: process killed by it.
EXIT_PIPE = 141


class ReaderGone(Exception):
    """The reader of a stream we print to has closed it (``svmref verify --all | head -1``)."""

    def __init__(self, stream):
        super().__init__("the reader of standard output closed it")
        self.stream = stream


def _say(text: str = "") -> None:
    """Print a line of the report to standard output and flush it; a closed pipe becomes :class:`ReaderGone`."""
    stream = sys.stdout
    try:
        print(text, file=stream)
        stream.flush()
    except BrokenPipeError:
        raise ReaderGone(stream) from None


def _reader_gone(stream) -> int:
    """Quietly end after the reader closed ``stream``: as Python's documentation on SIGPIPE advises, point the
    stream's descriptor at the null device, so that the flush at exit does not raise again; exit 141."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, stream.fileno())
        os.close(devnull)
    except (OSError, ValueError, AttributeError):  # a stream without a descriptor (tests): nothing will flush it
        pass
    return EXIT_PIPE


class _Rows:
    """The callback that prints each row as its instance finishes (the heading at once, when called), and, once
    :meth:`plan` says how many instances there are, a tqdm bar on stderr that counts them (``--progress`` /
    ``--no-progress``; by default on a terminal only). The bar is cleared while a row is printed."""

    def __init__(self, args):
        self.args, self.header, self.bar = args, False, None

    def plan(self, total: int, what: str) -> None:
        """With a bar (a terminal, or ``--progress``): say on stderr what will run (``12 instance(s) of suite
        'standard' for l1_svm``) and start the bar. Without one stderr stays as it was (scripts and pipes read it)."""
        if not _wants_bar(self.args):
            return
        try:
            from tqdm import tqdm
        except ImportError:  # pragma: no cover - tqdm is a dependency
            return
        print(f"svmref verify: {total} instance(s) {what}", file=sys.stderr)
        self.bar = tqdm(total=total, desc="verify", unit="instance", file=sys.stderr)

    def __call__(self, rec=None) -> None:
        if self.bar is not None and rec is not None:
            self.bar.clear()
        if not self.args.quiet:
            if not self.header:
                _say(Report.header())
                self.header = True
            if rec is not None:
                _say("\n".join([rec.row(), *rec.details(verbose=self.args.verbose)]))
        if self.bar is not None and rec is not None:
            self.bar.update(1)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
            self.bar = None


def _wants_bar(args) -> bool:
    """A bar on stderr: with ``--progress``, or on a terminal without ``--no-progress``."""
    return not getattr(args, "no_progress", False) and (getattr(args, "progress", False) or sys.stderr.isatty())


def _printer(args) -> _Rows:
    return _Rows(args)


def main(argv: list[str] | None = None) -> int:
    """``svmref verify``: parse and check every option, run, print; returns the exit status (module docstring)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = _parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # argparse: --help exits 0, errors exit 2
        return int(exc.code or 0)
    try:
        if args.list:
            _say("\n".join(f"{spec} {form}" for spec, form in _registry().items()))
            return 0
        opts = _options(args)
        if opts.get("json") != "-":
            return _run(args, opts)
        opts["json_stream"] = sys.stdout  # --json -: the JSON alone on standard output, the table on standard error
        with contextlib.redirect_stdout(sys.stderr):
            return _run(args, opts)
    except UsageError as exc:
        print(f"svmref verify: error: {exc}", file=sys.stderr)
        return 2
    except ReaderGone as gone:
        return _reader_gone(gone.stream)


def _run_all(args, opts, on_record) -> Report:
    """Every built-in solver on its formulation (``--all``): the health report."""
    report = Report(tol=opts["tol"])
    chosen = [form for form in _registry().values() if not args.formulation or form == args.formulation]
    on_record.plan(sum(len(_instances(args, opts, form)) for form in chosen),
                   f"for {len(chosen)} built-in solver(s) (--all)")
    on_record()
    for spec, form in _registry().items():
        if args.formulation and form != args.formulation:
            continue
        try:
            fn = load_spec(spec)
            check_signature(fn, form, name=spec)
        except SpecError as exc:
            msg = f"SKIP {spec} ({form}): {exc}"
            print(msg, file=sys.stderr)
            report.skipped.append(msg)
            continue
        except SignatureError as exc:  # a built-in solver that does not fit: a failure, not a skip
            rec = Record(form, spec, "(signature)", False, "error", str(exc))
            report.records.append(rec)
            on_record(rec)
            continue
        part = check(fn, form, _instances(args, opts, form), opts["tol"], name=spec,
                     timeout=opts["timeout"], spec=spec, on_record=on_record)
        report.extend(part)
        if part.interrupted:
            break
    return report


def _params(items: list[str]) -> dict:
    """``--param NAME=VALUE`` as a dict: VALUE a Python literal (``1e-3``, ``True``, ``'rbf'``), else the string."""
    import ast

    out = {}
    for item in items:
        name, eq, value = item.partition("=")
        if not eq or not name.strip().isidentifier():
            raise UsageError(f"--param must look like NAME=VALUE (e.g. --param cache_size=500); got {item!r}")
        try:
            out[name.strip()] = ast.literal_eval(value.strip())
        except (ValueError, SyntaxError):
            out[name.strip()] = value.strip()
    return out


def _estimator_instances(args, opts, formulation):
    """The suite, or --data: two classes give one instance, more give one per one-vs-one pair."""
    from .estimators import pair_instances

    if args.data is None or not specs.SPECS[formulation].classification:
        return _instances(args, opts, formulation)
    try:
        X, y = load_csv(args.data)
    except (OSError, UnicodeDecodeError, ValueError):
        return _instances(args, opts, formulation)  # which says what is wrong with the file
    if np.unique(y).size <= 2:
        return _instances(args, opts, formulation)
    Xs, tr, te = standardise_split(scale_columns(X))
    sigma = opts["sigma"] if opts["sigma"] else float(np.sqrt(X.shape[1]))
    name = "data-" + os.path.splitext(os.path.basename(args.data))[0]
    return pair_instances(Xs[tr], y[tr], Xs[te], formulation, C=opts["C"], kernel="rbf",
                          kernel_params={"sigma": sigma}, name=name)


def _run_estimator(args, opts) -> int:
    """``--estimator MODULE:CLASS``: the estimator judged on raw X, on a suite or on --data."""
    from .estimators import check_estimator

    if args.spec or args.all:
        raise UsageError("give either SPEC, --all or --estimator, not two of them")
    if not args.formulation:
        raise UsageError(f"--formulation is required with --estimator (one of {', '.join(_formulation_names())})")
    try:
        cls = load_spec(args.estimator)
    except SpecError as exc:
        raise UsageError(str(exc).replace("SPEC", "--estimator")) from None
    params = _params(args.param)
    insts = _estimator_instances(args, opts, args.formulation)
    try:
        check_estimator(cls, args.formulation, [], opts["tol"], params=params)  # the parameters, before any output
    except ValueError as exc:
        raise UsageError(str(exc).replace("params: ", "--param: ")) from None
    on_record = _printer(args)
    on_record.plan(len(insts), f"of {_where(args)} for {args.formulation}")
    on_record()
    with _client(args) as client:
        report = check_estimator(cls, args.formulation, insts, opts["tol"], params=params, name=args.estimator,
                                 timeout=opts["timeout"], on_record=on_record, certificate=args.certificate or None,
                                 client=client)
    on_record.close()
    for msg in report.skipped:
        print(f"SKIP {msg}", file=sys.stderr)
    return _finish(report, args, opts)


@contextlib.contextmanager
def _client(args):
    """The Dask client of ``--scheduler`` (None without it), closed at the end."""
    if args.scheduler is None:
        yield None
        return
    from .blockwise import connect

    try:
        client = connect(args.scheduler)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    try:
        yield client
    finally:
        client.close()


def _run_answers(args, opts) -> int:
    """``--answers DIR``: the answers a program wrote for an exported suite (:mod:`svmref.verify.exchange`)."""
    from .exchange import check_answers, load_exported

    if args.spec or args.all or args.estimator:
        raise UsageError("--answers goes alone: not with SPEC, --all or --estimator")
    if args.data is not None or args.formulation is not None:
        raise UsageError("--answers DIR reads the formulation and the instances from DIR/manifest.json: give no "
                         "--formulation or --data")
    try:
        load_exported(args.answers)
    except (OSError, ValueError, KeyError) as exc:
        raise UsageError(f"--answers: {exc}") from None
    on_record = _printer(args)
    on_record()
    with _client(args) as client:
        report = check_answers(args.answers, opts["tol"], on_record=on_record, certificate=args.certificate or None,
                               client=client)
    for msg in report.skipped:
        print(f"SKIP {msg}", file=sys.stderr)
    return _finish(report, args, opts)


def _spec_options(args) -> None:
    """The options that go only with --estimator, --model or --answers, refused with a SPEC or --all."""
    if args.param:
        raise UsageError("--param goes with --estimator")
    if args.scheduler is not None:
        raise UsageError("--scheduler goes with --estimator, --model or --answers (a SPEC takes K itself)")


def _all_alone(args) -> None:
    """--all runs the built-in solvers: the options that name one solver or its data do not go with it."""
    if args.spec:
        raise UsageError("give either SPEC or --all, not both")
    if args.data is not None:
        raise UsageError("--data goes with one SPEC, not --all")
    if args.solver_tol is not None:
        raise UsageError("--solver-tol goes with one SPEC, not --all (the built-in solvers take tol)")


def _run_model(args, opts) -> int:
    """``--model MODEL --data TRAIN --C C``: a LIBSVM or LIBLINEAR model file (:mod:`svmref.verify.models`)."""
    from .models import check_model, prepare_model

    if args.spec or args.all or args.estimator or args.answers:
        raise UsageError("--model goes alone: not with SPEC, --all, --estimator or --answers")
    if args.data is None or args.C is None:
        raise UsageError("--model needs --data TRAIN (the file it was trained on, LIBSVM's sparse text format) and "
                         "--C C: neither is in a model file")
    if args.formulation is not None:
        raise UsageError("--model tells its formulation itself (c_svc: l1_svm, epsilon_svr: svr): give no --formulation")
    try:
        prepared = prepare_model(args.model, args.data, opts["C"], epsilon=opts.get("epsilon"), test_path=args.test)
    except (OSError, ValueError) as exc:
        raise UsageError(f"--model {args.model}, --data {args.data}: {exc}") from None
    on_record = _printer(args)
    on_record()
    with _client(args) as client:
        report = check_model(args.model, args.data, opts["C"], epsilon=opts.get("epsilon"), test_path=args.test,
                             tol=opts["tol"], on_record=on_record, prepared=prepared,
                             certificate=args.certificate or None, client=client)
    return _finish(report, args, opts)


def _run(args, opts) -> int:
    """:func:`_run_what`, with a bar per pass over a kernel made by blocks (:func:`.blockwise.show_passes`) when the
    instances' bar is shown."""
    from .blockwise import show_passes

    with show_passes() if _wants_bar(args) else contextlib.nullcontext():
        return _run_what(args, opts)


def _run_what(args, opts) -> int:
    """Check the arguments that need the formulation, then run SPEC (or every built-in) and print the report."""
    if args.model is not None:
        return _run_model(args, opts)
    if args.test is not None:
        raise UsageError("--test goes with --model")
    if args.answers is not None:
        return _run_answers(args, opts)
    if args.estimator is not None:
        return _run_estimator(args, opts)
    _spec_options(args)
    on_record = _printer(args)
    if args.all:
        _all_alone(args)
        report = _run_all(args, opts, on_record)
        on_record.close()
        return _finish(report, args, opts)
    if not args.spec:
        raise UsageError("SPEC is required (or --list / --all)")
    try:
        parse_spec(args.spec)  # its form first: without ':callable' it is no built-in either
    except SpecError as exc:
        raise UsageError(str(exc)) from None
    form = args.formulation or _registry().get(args.spec)
    if form is None:
        raise UsageError(f"--formulation is required for {args.spec!r} (one of {', '.join(_formulation_names())})")
    insts = _instances(args, opts, form)  # --data is read before the user's code is imported
    try:
        fn = load_spec(args.spec)
    except SpecError as exc:
        raise UsageError(str(exc)) from None
    try:
        check_signature(fn, form, name=args.spec, solver_tol=tol_parameter(fn, args.solver_tol))
    except (SignatureError, ValueError) as exc:
        raise UsageError(str(exc).replace("solver_tol=", "--solver-tol ")) from None
    on_record.plan(len(insts), f"of {_where(args)} for {form}")
    on_record()  # the heading now: the first row may take a while
    report = check(fn, form, insts, opts["tol"], name=args.spec, timeout=opts["timeout"], spec=args.spec,
                   on_record=on_record, solver_tol=args.solver_tol, certificate=args.certificate or None)
    on_record.close()
    return _finish(report, args, opts)


def _where(args) -> str:
    return f"--data {args.data}" if args.data is not None else f"suite {args.suite!r}"


def _finish(report, args, opts) -> int:
    """Print the summary, write ``--json``; the exit status."""
    _say(("" if args.quiet else "\n") + report.summary_text(verbose=args.verbose))
    if opts.get("json") == "-":
        stream = opts["json_stream"]
        try:
            stream.write(report.to_json() + "\n")
            stream.flush()
        except BrokenPipeError:
            raise ReaderGone(stream) from None
    elif "json" in opts:
        try:
            make_parent(opts["json"])
            report.to_json(opts["json"])
            _say(f"records written to {args.json}")
        except OSError as exc:  # it was writable when checked; say what happened since
            print(f"svmref verify: error: --json: cannot write {args.json!r} ({exc.strerror or exc})", file=sys.stderr)
            return 2
    if report.interrupted:
        return 130
    return 0 if report.passed and report.judged else 1


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())

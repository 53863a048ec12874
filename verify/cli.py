"""``svmref verify``: hold a solver against the cvxpy reference from the command line.

Exit codes: 0 every instance passed; 1 some instance failed; 2 usage error, or a SPEC that cannot
be imported.
"""
from __future__ import annotations

import argparse
import importlib
import importlib.util
import os
import sys

__all__ = ["main", "load_spec", "SpecError"]

_EPILOG = """\
SPEC is package.module:callable (importable from the current directory or the installed
packages) or path/to/file.py:callable.

WARNING: verify imports SPEC and runs it: it executes the code you name, by design.
Only verify code you trust.

The solver contract (see 'python -c "import verify; help(verify)"'):
  box duals l1_svm, l2_svm, ls_svm, least_1norm_svm, and ls_svm_regression, sparse_ls_svm:
      f(K, y, C, **options) -> (alpha, b) | alpha | object with .alpha, .b   (b may be None)
  rls:                f(K, y, gamma) -> c | object with .c
  support_features:   f(X, y, C, mu) -> object with .lam and/or .a, .b
  If f has a parameter named tol, verify passes the tolerance it checks at.

Suites: quick (seconds), standard (N up to 300), adversarial (degenerate and extreme
instances; a non-PSD MLP kernel is reported as 'not convex'), real (shipped data sets).

Exit status: 0 all instances pass, 1 any fails, 2 usage error or SPEC not importable.

Example:
  svmref verify my_solver.py:solve --formulation least_1norm_svm --suite quick --json out.json
"""


class SpecError(Exception):
    """SPEC cannot be imported or does not name a callable (exit code 2)."""


def load_spec(spec: str):
    """Import ``package.module:callable`` or ``path/to/file.py:callable`` and return the callable."""
    if ":" not in spec:
        raise SpecError(f"SPEC must look like package.module:callable or path/to/file.py:callable; got {spec!r}")
    target, _, attr = spec.rpartition(":")
    if not target or not attr:
        raise SpecError(f"SPEC must look like package.module:callable or path/to/file.py:callable; got {spec!r}")
    if target.endswith(".py") or os.sep in target or "/" in target:
        path = os.path.abspath(target)
        if not os.path.isfile(path):
            raise SpecError(f"cannot import {spec!r}: no such file {target!r}")
        modname = "_svmref_verify_user_" + os.path.splitext(os.path.basename(path))[0].replace("-", "_")
        directory = os.path.dirname(path)
        if directory not in sys.path:
            sys.path.insert(0, directory)  # so the user's file can import its neighbours
        try:
            loader_spec = importlib.util.spec_from_file_location(modname, path)
            module = importlib.util.module_from_spec(loader_spec)
            sys.modules[modname] = module
            loader_spec.loader.exec_module(module)
        except Exception as exc:  # the user's module failed while importing
            raise SpecError(f"cannot import {spec!r}: {type(exc).__name__}: {exc}") from exc
    else:
        if os.getcwd() not in sys.path and "" not in sys.path:
            sys.path.insert(0, os.getcwd())
        try:
            module = importlib.import_module(target)
        except Exception as exc:
            raise SpecError(f"cannot import {spec!r}: {type(exc).__name__}: {exc}") from exc
    obj = module
    for part in attr.split("."):
        try:
            obj = getattr(obj, part)
        except AttributeError:
            raise SpecError(f"cannot import {spec!r}: module {target!r} has no attribute {attr!r}") from None
    if not callable(obj):
        raise SpecError(f"{spec!r} is not callable ({type(obj).__name__})")
    return obj


def _parser() -> argparse.ArgumentParser:
    from .core import DEFAULT_TOL
    from .instances import SUITES

    p = argparse.ArgumentParser(
        prog="svmref verify",
        description="Hold a solver against the cvxpy reference (objective, KKT residuals, duality gap, "
        "decision function on held-out points) and print a verdict per instance with the reason.",
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("spec", nargs="?", metavar="SPEC", help="the solver: package.module:callable or path/to/file.py:callable")
    p.add_argument("--formulation", "-f", metavar="NAME",
                   help="formulation the solver solves (default: the registry's entry for a built-in SPEC)")
    p.add_argument("--suite", "-s", default="quick", choices=SUITES, help="instances to run (default: quick)")
    p.add_argument("--tol", type=float, default=DEFAULT_TOL,
                   help=f"tolerance of the check (default {DEFAULT_TOL:g}; the decision function is checked at sqrt(tol))")
    p.add_argument("--json", metavar="PATH", help="also write the records as JSON to PATH")
    p.add_argument("--list", action="store_true", help="print every built-in solver as 'SPEC formulation' and exit")
    p.add_argument("--all", action="store_true",
                   help="check every built-in solver against every formulation it serves (the health report)")
    p.add_argument("--quiet", "-q", action="store_true", help="print only the summary")
    return p


def _registry() -> dict[str, str]:
    from svmref.solvers import REGISTRY

    return dict(REGISTRY)


def _formulation_names() -> list[str]:
    from .instances import TASK

    return list(TASK)


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = _parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # argparse: --help exits 0, errors exit 2
        return int(exc.code or 0)
    if args.list:
        for spec, form in _registry().items():
            print(f"{spec} {form}")
        return 0
    if not (args.tol > 0 and args.tol < 1):
        print(f"svmref verify: error: --tol must be in (0, 1); got {args.tol!r}", file=sys.stderr)
        return 2
    if args.formulation is not None and args.formulation not in _formulation_names():
        print(f"svmref verify: error: unknown --formulation {args.formulation!r}; expected one of "
              f"{', '.join(_formulation_names())}", file=sys.stderr)
        return 2
    from .core import check
    from .report import Report

    if args.all:
        if args.spec:
            print("svmref verify: error: give either SPEC or --all, not both", file=sys.stderr)
            return 2
        report = Report(tol=args.tol)
        for spec, form in _registry().items():
            if args.formulation and form != args.formulation:
                continue
            try:
                fn = load_spec(spec)
            except SpecError as exc:
                msg = f"SKIP {spec} ({form}): {exc}"
                print(msg, file=sys.stderr)
                report.skipped.append(msg)
                continue
            report.extend(check(fn, form, args.suite, args.tol, name=spec))
        _print(report, args)
        return 0 if report.passed and len(report) else 1
    if not args.spec:
        parser.print_usage(sys.stderr)
        print("svmref verify: error: SPEC is required (or --list / --all)", file=sys.stderr)
        return 2
    form = args.formulation or _registry().get(args.spec)
    if form is None:
        print(f"svmref verify: error: --formulation is required for {args.spec!r} (one of "
              f"{', '.join(_formulation_names())})", file=sys.stderr)
        return 2
    try:
        fn = load_spec(args.spec)
    except SpecError as exc:
        print(f"svmref verify: error: {exc}", file=sys.stderr)
        return 2
    report = check(fn, form, args.suite, args.tol, name=args.spec)
    _print(report, args)
    return 0 if report.passed else 1


def _print(report, args) -> None:
    if not args.quiet:
        print(report.table())
        print()
    print(report.summary_text())
    if args.json:
        report.to_json(args.json)
        print(f"records written to {args.json}")


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())

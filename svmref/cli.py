"""The ``svmref`` command line.

Each subcommand lives with the package that implements it and is imported only when it is run,
so ``svmref --help`` stays fast:

* ``svmref verify ...``  -> :func:`svmref.verify.cli.main`
* ``svmref figure ...``  -> :func:`svmref.figures.cli.main`
* ``svmref datasets``     lists the shipped data sets.
"""
from __future__ import annotations

import argparse
import importlib
import sys

from . import __version__

_SUBCOMMANDS = {
    "verify": ("svmref.verify.cli", "hold a solver against the cvxpy reference and print a verdict with numbers"),
    "figure": ("svmref.figures.cli", "regenerate a figure of the papers (e.g. outlier-robustness, 000 Fig. 1)"),
}


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="svmref",
        description="svmref: cvxpy ground truth, fast solvers and a verifier for the SVM family "
        "(L1, L2, LS, Least 1-Norm, RLS, sparse LS-SVM, support features machine).",
        epilog="Run 'svmref COMMAND --help' for the options of a command.",
    )
    p.add_argument("--version", action="version", version=f"svmref {__version__}")
    sub = p.add_subparsers(dest="command", metavar="COMMAND")
    for name, (_, helptext) in _SUBCOMMANDS.items():
        sub.add_parser(name, help=helptext, add_help=False)
    sub.add_parser("datasets", help="list the data sets shipped with the package")
    return p


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = _parser()
    if argv and argv[0] in _SUBCOMMANDS:
        module = importlib.import_module(_SUBCOMMANDS[argv[0]][0])
        return int(module.main(argv[1:]) or 0)
    args = parser.parse_args(argv)
    if args.command == "datasets":
        from .datasets import DATASETS

        for name, info in sorted(DATASETS.items()):
            print(f"{name:14s} {info.task:15s} {info.used_by}")
        return 0
    parser.print_help()
    return 0 if argv == [] else 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())

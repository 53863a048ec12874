"""The ``svmref`` command line.

Each subcommand lives with the package that implements it and is imported only when it is run,
so ``svmref --help`` stays fast:

* ``svmref verify ...``  -> :func:`svmref.verify.cli.main`
* ``svmref figure ...``  -> :func:`svmref.figures.cli.main`
* ``svmref suite export ...`` -> :func:`svmref.verify.exchange.main`
* ``svmref datasets``     lists the shipped data sets.

Exit status of every subcommand: 0 success, 1 the work itself failed (a solver failed verification, a
figure could not be made), 2 a usage error: a bad option, an output path that cannot be written, a file
that cannot be read. Every option is checked before any work starts, and a usage error is one line on
standard error naming the option (no traceback). 130: interrupted (Ctrl-C).
"""
from __future__ import annotations

import argparse
import importlib
import math
import os
import sys
import tempfile
from pathlib import Path

from . import __version__

_SUBCOMMANDS = {
    "verify": ("svmref.verify.cli", "hold a solver against the cvxpy reference and print a verdict with numbers"),
    "figure": ("svmref.figures.cli", "regenerate a figure of the papers (e.g. outlier-robustness, 000 Fig. 1)"),
    "table": ("svmref.figures.tables.cli", "reproduce a table of the papers next to the printed numbers (e.g. 000-table2)"),
    "suite": ("svmref.verify.exchange", "export verify's instances for a solver in any language (svmref suite export DIR)"),
}


class UsageError(Exception):
    """A user error in an option (exit status 2); the message names the option."""


class ArgumentParser(argparse.ArgumentParser):
    """argparse with its errors as one line ``PROG: error: MESSAGE`` (exit 2), no usage block."""

    def error(self, message):  # noqa: D401 - argparse's hook
        print(f"{self.prog}: error: {message}", file=sys.stderr)
        raise SystemExit(2)


def _nearest_existing(path: Path) -> Path:
    p = path
    while not p.exists() and p != p.parent:
        p = p.parent
    return p


def check_writable(path, option: str, *, is_dir_ok: bool = False) -> Path:
    """Check, before any work, that ``path`` can be written (creating missing parent folders later).

    Raises :class:`UsageError` naming ``option``. A directory is refused unless ``is_dir_ok``. The check
    creates nothing: it opens an existing file for appending (writing nothing), or creates and removes a
    temporary file in the nearest existing folder (``os.access`` is no guide for root, nor for /proc).
    """
    p = Path(path).expanduser()
    if str(path) == "":
        raise UsageError(f"{option}: empty path")
    if p.is_dir():
        if not is_dir_ok:
            raise UsageError(f"{option}: {str(path)!r} is a directory; give a file name")
        probe_dir = p
    elif p.exists():
        try:
            with open(p, "a"):
                pass
        except OSError as exc:
            raise UsageError(f"{option}: cannot write {str(path)!r} ({exc.strerror or exc})") from None
        return p
    else:
        probe_dir = _nearest_existing(p.parent if str(p.parent) else Path("."))
        if not probe_dir.is_dir():
            raise UsageError(f"{option}: cannot write {str(path)!r}: {str(probe_dir)!r} is not a directory")
    try:
        with tempfile.TemporaryFile(dir=probe_dir):
            pass
    except OSError as exc:
        raise UsageError(f"{option}: cannot write {str(path)!r}: no new file can be made in {str(probe_dir)!r} "
                         f"({exc.strerror or exc})") from None
    return p


def check_number(value, option: str, *, integer: bool = False, low: float | None = None,
                 high: float | None = None, low_open: bool = True, high_open: bool = True):
    """Check a numeric option (finite, within ``(low, high)``); raises :class:`UsageError` naming it."""
    kind = "an integer" if integer else "a number"
    try:
        x = int(value) if integer else float(value)
        if integer and float(value) != x:
            raise ValueError
    except (TypeError, ValueError):
        raise UsageError(f"{option} must be {kind}; got {value!r}") from None
    if not math.isfinite(float(x)):
        raise UsageError(f"{option} must be finite; got {value!r}")
    lo_bad = low is not None and (x <= low if low_open else x < low)
    hi_bad = high is not None and (x >= high if high_open else x > high)
    if lo_bad or hi_bad:
        lo = "" if low is None else (f"> {low:g}" if low_open else f">= {low:g}")
        hi = "" if high is None else (f"< {high:g}" if high_open else f"<= {high:g}")
        raise UsageError(f"{option} must be {' and '.join(t for t in (lo, hi) if t)}; got {value!r}")
    return x


def make_parent(path: Path) -> None:
    """Create the missing folders above ``path`` (after :func:`check_writable` said it can)."""
    parent = Path(path).parent
    if str(parent) and not parent.exists():
        os.makedirs(parent, exist_ok=True)


def _parser() -> argparse.ArgumentParser:
    p = ArgumentParser(
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
        try:
            return int(module.main(argv[1:]) or 0)
        except UsageError as exc:
            print(f"svmref {argv[0]}: error: {exc}", file=sys.stderr)
            return 2
        except KeyboardInterrupt:
            print(f"svmref {argv[0]}: interrupted", file=sys.stderr)
            return 130
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:
        return int(exc.code or 0)
    if args.command == "datasets":
        from .datasets import DATASETS

        for name, info in sorted(DATASETS.items()):
            print(f"{name:14s} {info.task:15s} {info.used_by}")
        return 0
    parser.print_help()
    return 0 if argv == [] else 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())

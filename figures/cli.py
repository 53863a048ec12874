"""``svmref figure``: regenerate a figure of the papers with one command.

Usage::

    svmref figure --list
    svmref figure NAME [--out PATH] [--seed S] [--format FMT] [--dpi DPI] [--print] [--fast] [--json FILE]
                       [--jobs N] [--scheduler ADDRESS] [--no-progress | --progress]

``--print`` writes the numbers that are drawn (angles, error rates, counts) to standard output;
``--fast`` uses the figure's smaller parameter set (what the tests run); ``--json FILE`` also writes the
numbers as JSON (figures whose module has ``to_json(result) -> dict``; refused for the others). The image is
rendered with matplotlib's Agg backend (headless).

The figures with draws (``outlier-robustness``, ``rls-vs-svm``, ``support-features-selectivity``: 101 each) say at the
start how many they will run, run them on ``--jobs`` workers (default every core, one BLAS thread each; or on the
Dask cluster at ``--scheduler``, the convention of ``svmref table``) with the same numbers as ``--jobs 1``, and show a
tqdm bar on stderr when it is a terminal (``--progress`` forces it, ``--no-progress`` turns it off).

``--out``: a file whose suffix names the format (any format matplotlib writes: png, pdf, svg, eps,
jpg, tif, webp, ...; an unknown suffix is refused); an existing directory (or a path ending in
``/``) receives ``NAME.FORMAT``; a path without a suffix gets ``.FORMAT`` appended. ``--format``
must agree with the suffix. Every option, and that ``--out`` can be written, is checked before
the figure is computed.

Exit status: 0 on success, 1 when the figure could not be made (for example the solver disagrees
with the cvxpy reference), 2 on a usage error (one line naming the option).
"""
from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # headless: set before anything imports pyplot

from . import FIGURES, get, names  # noqa: E402

__all__ = ["main", "FORMATS", "resolve_out"]


def _formats() -> tuple[str, ...]:
    from matplotlib.backend_bases import FigureCanvasBase

    return tuple(sorted(FigureCanvasBase.get_supported_filetypes()))


#: The formats matplotlib can write here (the suffixes ``--out`` accepts).
FORMATS = _formats()


def _parser() -> argparse.ArgumentParser:
    from svmref.cli import ArgumentParser

    p = ArgumentParser(
        prog="svmref figure",
        description="Regenerate a figure of the papers. 'svmref figure --list' shows the names.",
    )
    p.add_argument("name", nargs="?", metavar="NAME", help="figure name (see --list)")
    p.add_argument("--list", action="store_true", help="list the figures and exit")
    p.add_argument("--out", default=None, metavar="PATH",
                   help="output file (its suffix names the format) or directory (default: NAME.FORMAT here)")
    p.add_argument("--seed", type=int, default=None, help="random seed (default: the figure's own)")
    p.add_argument("--format", choices=FORMATS, default=None, metavar="FMT",
                   help=f"image format, one of {', '.join(FORMATS)} (default: from --out's suffix, else png)")
    p.add_argument("--print", dest="print_numbers", action="store_true",
                   help="print the numbers that are drawn")
    p.add_argument("--fast", action="store_true", help="smaller parameter set (quick check)")
    p.add_argument("--json", default=None, metavar="FILE",
                   help="also write the numbers as JSON to FILE (figures that have them, e.g. outlier-robustness)")
    p.add_argument("--dpi", default=150, metavar="DPI", help="resolution of raster output, dots per inch (default 150)")
    p.add_argument("--jobs", default="-1", metavar="N",
                   help="workers for the figures with draws, one BLAS thread each (default -1: every core); the "
                   "numbers do not depend on it")
    p.add_argument("--scheduler", default=None, metavar="ADDRESS",
                   help="run the draws on the Dask cluster at ADDRESS (tcp://HOST:PORT) instead")
    bar = p.add_mutually_exclusive_group()
    bar.add_argument("--no-progress", action="store_true", help="no progress bar")
    bar.add_argument("--progress", action="store_true",
                     help="a progress bar on stderr even when it is not a terminal (the default there is none)")
    return p


def resolve_out(name: str, out: str | None, fmt: str | None) -> tuple[Path, str]:
    """The file to write and its format, from ``--out`` and ``--format`` (see the module docstring).

    Raises :class:`svmref.cli.UsageError` naming the option for an unknown suffix or a disagreement.
    """
    from svmref.cli import UsageError

    if out is None:
        fmt = fmt or "png"
        return Path(f"{name}.{fmt}"), fmt
    text = os.fspath(out)
    p = Path(text).expanduser()
    if p.is_dir() or text.endswith(("/", os.sep)):
        fmt = fmt or "png"
        return p / f"{name}.{fmt}", fmt
    suffix = p.suffix.lower().lstrip(".")
    if not suffix:
        fmt = fmt or "png"
        return p.with_name(p.name + f".{fmt}"), fmt
    if suffix not in FORMATS:
        raise UsageError(f"--out: matplotlib cannot write {p.suffix!r} files; use one of "
                         f"{', '.join('.' + f for f in FORMATS)}")
    if fmt is not None and fmt != suffix:
        raise UsageError(f"--out ends in {p.suffix!r} but --format is {fmt!r}; give one or make them agree")
    return p, suffix


def _checked(args):
    """``(dpi, out, fmt)`` from the options, each checked before any work (``UsageError`` naming the option)."""
    from svmref.cli import UsageError, check_number, check_writable

    dpi = check_number(args.dpi, "--dpi", low=0.0, high=10000.0)
    out, fmt = resolve_out(args.name, args.out, args.format)
    check_writable(out, "--out")
    if args.json is not None:
        if not hasattr(get(args.name), "to_json"):
            raise UsageError(f"--json: figure {args.name!r} has no numbers to write as JSON")
        check_writable(args.json, "--json")
    if args.seed is not None and not 0 <= args.seed < 2**32:
        raise UsageError(f"--seed must be an integer from 0 to 2**32 - 1 (numpy's seed range); got {args.seed}")
    jobs = check_number(args.jobs, "--jobs", integer=True, low=-2.0)
    if jobs == 0:
        raise UsageError(f"--jobs must be a positive integer or -1 (every core); got {args.jobs!r}")
    args.jobs = jobs
    return dpi, out, fmt


def _write_json(module, result, name: str) -> int:
    """Write ``module.to_json(result)`` to the ``--json`` file: 0, or 2 with one line if it cannot be written."""
    from svmref.cli import make_parent

    path = Path(name).expanduser()
    try:
        make_parent(path)
        path.write_text(json.dumps(module.to_json(result), indent=1, allow_nan=False) + "\n", encoding="utf-8")
    except OSError as exc:  # writable when checked; say what happened since
        print(f"svmref figure: error: --json: cannot write {name!r} ({exc.strerror or exc})", file=sys.stderr)
        return 2
    print(f"wrote {path}")
    return 0


def _parallel(module, args) -> dict:
    """The options of a figure with draws (``jobs``, ``scheduler``, ``progress``), after saying on stderr what it will
    do (``101 draws; --fast runs 11``); nothing for the others, which have no draws to spread."""
    if not hasattr(module, "work"):
        return {}
    print(f"svmref figure {args.name}: {module.work(args.fast)}", file=sys.stderr)
    progress = not args.no_progress and (args.progress or sys.stderr.isatty())
    return {"jobs": args.jobs, "scheduler": args.scheduler, "progress": progress}


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``svmref figure``; returns the exit status."""
    parser = _parser()
    try:
        args = parser.parse_args(list(sys.argv[1:] if argv is None else argv))
    except SystemExit as exc:  # argparse exits on --help (0) and on usage errors (2)
        return int(exc.code or 0)
    if args.list:
        width = max(len(n) for n in FIGURES)
        for n, (_, what) in FIGURES.items():
            print(f"{n:{width}s}  {what}")
        return 0
    if args.name is None:
        parser.print_usage(sys.stderr)
        print("svmref figure: error: NAME is required (or --list)", file=sys.stderr)
        return 2
    if args.name not in FIGURES:
        print(f"svmref figure: error: unknown figure {args.name!r}; choose one of {names()}", file=sys.stderr)
        return 2
    from svmref.cli import UsageError, make_parent

    try:
        dpi, out, fmt = _checked(args)
    except UsageError as exc:
        print(f"svmref figure: error: {exc}", file=sys.stderr)
        return 2
    module = get(args.name)
    kwargs = {"fast": args.fast}
    if args.seed is not None:
        kwargs["seed"] = args.seed
    kwargs.update(_parallel(module, args))
    try:
        result = module.compute(**kwargs)
    except (RuntimeError, ValueError) as exc:
        print(f"svmref figure {args.name}: error: {exc}", file=sys.stderr)
        return 1
    if args.print_numbers:
        print(result.report())
    fig = module.plot(result)
    try:
        make_parent(out)
        fig.savefig(out, format=fmt, dpi=dpi)
    except OSError as exc:  # writable when checked; say what happened since
        print(f"svmref figure: error: --out: cannot write {str(out)!r} ({exc.strerror or exc})", file=sys.stderr)
        return 2
    except (ValueError, RuntimeError, ImportError) as exc:  # a format this matplotlib lists but cannot make here
        print(f"svmref figure {args.name}: error: writing {fmt}: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 1
    print(f"wrote {out}")
    return 0 if args.json is None else _write_json(module, result, args.json)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())

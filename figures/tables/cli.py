"""``svmref table NAME [--splits N] [--jobs J] [--scheduler ADDRESS] [--out DIR] [--resume | --force] [--quick] [--json]
[--plot]`` and ``svmref table --list``.

Writes ``DIR/NAME.csv`` (one row per data set, model and split, appended as each split finishes),
``DIR/NAME.cv.csv`` (the cross-validation scores, where the table selects its hyperparameters once),
``DIR/NAME.md`` (the paper's layout: ours ± SE next to the paper's numbers, flags by standard error), ``DIR/NAME.json``
and, with ``--plot``, ``DIR/NAME.png`` (per cell ours ± SE against the paper's number); prints the Markdown
table, or the JSON summary with ``--json``. Ctrl-C keeps every finished split: run again with
``--resume`` to compute only the missing ones (refused, in one line, when the stored run's settings differ:
``DIR/NAME.meta.json``, see :func:`svmref.figures.tables._runner.settings`). Results already in ``DIR`` are never
overwritten: ``--force`` starts over. Every argument is checked before any work (one line, exit 2).
"""
from __future__ import annotations

import argparse
import json
import sys

from svmref.cli import ArgumentParser

from . import TABLES, names, run_table
from ._runner import MAX_SPLITS, DaskWorkersLost, TableInterrupted


def _parser() -> argparse.ArgumentParser:
    p = ArgumentParser(
        prog="svmref table",
        description="Reproduce a table of the papers: seeded splits, model selection, mean ± std next to the paper's numbers.",
        epilog="Example: svmref table 000-table2 --splits 20 --jobs 2 --out tables",
    )
    p.add_argument("name", nargs="?", help="table name (see --list)")
    p.add_argument("--list", action="store_true", help="list the tables and exit")
    p.add_argument("--splits", type=int, default=None,
                   help=f"random training/test splits per data set, 1 to {MAX_SPLITS} (default: the table's)")
    p.add_argument("--jobs", type=int, default=1, help="local joblib workers (default 1; -1: every core)")
    p.add_argument("--scheduler", default=None, metavar="ADDRESS",
                   help="run the tasks on a Dask cluster, e.g. tcp://127.0.0.1:8786 (needs dask[distributed])")
    p.add_argument("--out", default="tables", metavar="DIR", help="output folder (default: ./tables)")
    p.add_argument("--resume", action="store_true", help="keep the rows already in DIR/NAME.csv, compute the missing ones "
                   "(refused when the stored run's settings differ)")
    p.add_argument("--force", action="store_true", help="delete the results already in DIR for this table and start over "
                   "(without --resume or --force, existing results are never overwritten)")
    p.add_argument("--quick", action="store_true", help="few splits and a small grid (tests, CI)")
    p.add_argument("--seed", type=int, default=0, help="base seed of the splits (default 0)")
    p.add_argument("--datasets", default=None, help="comma-separated subset of the table's data sets")
    p.add_argument("--json", action="store_true", help="print the JSON summary instead of the Markdown table")
    p.add_argument("--plot", action="store_true", help="also write DIR/NAME.png: per cell ours ± SE against the "
                   "paper's number")
    p.add_argument("--no-progress", action="store_true", help="no progress bar on stderr")
    return p


def _check_args(parser, args) -> None:
    """Every option checked before any work: ``parser.error`` (one line, exit 2) naming it."""
    if args.name is None:
        parser.error(f"give a table name, one of {names()} (or --list)")
    if args.name not in TABLES:
        parser.error(f"unknown table {args.name!r}; choose one of {names()}")
    if args.splits is not None and not 1 <= args.splits <= MAX_SPLITS:
        parser.error(f"--splits must be an integer from 1 to {MAX_SPLITS}; got {args.splits}")
    if args.resume and args.force:
        parser.error("--resume and --force exclude each other (continue the stored run, or delete it)")
    if args.jobs == 0 or args.jobs < -1:
        parser.error(f"--jobs must be a positive integer or -1; got {args.jobs}")


def main(argv: list[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    if args.list:
        for name, (_, what) in TABLES.items():
            print(f"{name:12s} {what}")
        return 0
    _check_args(parser, args)
    dsets = None if args.datasets is None else [d.strip() for d in args.datasets.split(",") if d.strip()]
    try:
        run = run_table(args.name, splits=args.splits, jobs=args.jobs, scheduler=args.scheduler, out=args.out,
                        resume=args.resume, quick=args.quick, seed=args.seed, datasets=dsets,
                        progress=not args.no_progress, force=args.force, plot=args.plot)
    except TableInterrupted as exc:
        print(f"\ninterrupted during {exc.phase}: the finished work is kept in {exc.path}; "
              "run the same command with --resume to compute only the missing tasks", file=sys.stderr)
        return 130
    except KeyboardInterrupt:
        print("\ninterrupted before any task ran; nothing was written", file=sys.stderr)
        return 130
    except ValueError as exc:
        print(f"svmref table: error: {exc}", file=sys.stderr)
        return 2
    except DaskWorkersLost as exc:
        print(f"svmref table: error: {exc}", file=sys.stderr)
        return 1
    try:
        _print_result(args, run)
    except BrokenPipeError:  # `svmref table ... | head`: the reader is gone; exit quietly, as Unix tools do
        import os

        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
    return 0


def _print_result(args, run) -> None:
    if args.json:
        print(json.dumps(run.summary(), indent=1))
        sys.stdout.flush()  # a closed pipe fails here, inside main's handler, not at interpreter exit
    else:
        print(run.md_path.read_text(encoding="utf-8"), end="")
        sys.stdout.flush()
        png = f", {run.png_path}" if run.png_path else ""
        print(f"\nwrote {run.csv_path} ({len(run.rows)} rows, {run.n_computed} computed now), {run.md_path}, "
              f"{run.json_path}{png} in {run.runtime_s:.1f} s", file=sys.stderr)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())

"""``svmref figure``: regenerate a figure of the papers with one command.

Usage::

    svmref figure --list
    svmref figure NAME [--out PATH] [--seed S] [--format png|pdf|svg] [--print] [--fast]

``--print`` writes the numbers that are drawn (angles, error rates, counts) to standard output;
``--fast`` uses the figure's smaller parameter set (what the tests run). The image is rendered
with matplotlib's Agg backend (headless). Exit status: 0 on success, 1 when the figure could not
be made (for example the solver disagrees with the cvxpy reference), 2 on a usage error.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # headless: set before anything imports pyplot

from . import FIGURES, get, names  # noqa: E402

__all__ = ["main"]

FORMATS = ("png", "pdf", "svg")


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="svmref figure",
        description="Regenerate a figure of the papers. 'svmref figure --list' shows the names.",
    )
    p.add_argument("name", nargs="?", metavar="NAME", help="figure name (see --list)")
    p.add_argument("--list", action="store_true", help="list the figures and exit")
    p.add_argument("--out", type=Path, default=None,
                   help="output file (default: NAME.FORMAT in the current directory)")
    p.add_argument("--seed", type=int, default=None, help="random seed (default: the figure's own)")
    p.add_argument("--format", choices=FORMATS, default=None,
                   help="image format (default: from --out's suffix, else png)")
    p.add_argument("--print", dest="print_numbers", action="store_true",
                   help="print the numbers that are drawn")
    p.add_argument("--fast", action="store_true", help="smaller parameter set (quick check)")
    p.add_argument("--dpi", type=int, default=150, help="resolution of raster output (default 150)")
    return p


def _resolve_out(name: str, out: Path | None, fmt: str | None) -> tuple[Path, str]:
    if out is not None and fmt is None:
        suffix = out.suffix.lower().lstrip(".")
        fmt = suffix if suffix in FORMATS else "png"
    fmt = fmt or "png"
    if out is None:
        out = Path(f"{name}.{fmt}")
    elif out.suffix.lower().lstrip(".") != fmt:
        out = out.with_name(out.name + f".{fmt}") if out.suffix == "" else out.with_suffix(f".{fmt}")
    return out, fmt


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
    module = get(args.name)
    kwargs = {"fast": args.fast}
    if args.seed is not None:
        kwargs["seed"] = args.seed
    try:
        result = module.compute(**kwargs)
    except (RuntimeError, ValueError) as exc:
        print(f"svmref figure {args.name}: error: {exc}", file=sys.stderr)
        return 1
    if args.print_numbers:
        print(result.report())
    fig = module.plot(result)
    out, fmt = _resolve_out(args.name, args.out, args.format)
    if out.parent and not out.parent.exists():
        out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, format=fmt, dpi=args.dpi)
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())

"""Small helpers shared by the figure modules (no state, no pyplot)."""
from __future__ import annotations

import numpy as np
from matplotlib.figure import Figure

__all__ = ["new_figure", "wrap_degrees", "format_table", "mesh"]


def new_figure(nrows: int, ncols: int, *, width: float, height: float, **subplot_kw):
    """A fresh :class:`~matplotlib.figure.Figure` (not registered with pyplot) and its axes grid."""
    fig = Figure(figsize=(width, height), layout="constrained")
    axes = fig.subplots(nrows, ncols, squeeze=False, **subplot_kw)
    return fig, axes


def wrap_degrees(d: float) -> float:
    """An angle difference in degrees wrapped to (-180, 180]."""
    w = (float(d) + 180.0) % 360.0 - 180.0
    return 180.0 if w == -180.0 else w


def mesh(xlim, ylim, n: int = 200):
    """A regular ``n x n`` mesh over ``xlim x ylim``: returns ``xx, yy, points`` (points ``n*n x 2``)."""
    xx, yy = np.meshgrid(np.linspace(*xlim, n), np.linspace(*ylim, n))
    return xx, yy, np.column_stack([xx.ravel(), yy.ravel()])


def format_table(header: list[str], rows: list[list], floatfmt: str = ".4g") -> str:
    """A plain-text table with right-aligned columns (what ``--print`` shows)."""
    cells = [[h for h in header]] + [
        [format(v, floatfmt) if isinstance(v, (float, np.floating)) else str(v) for v in r] for r in rows
    ]
    widths = [max(len(r[j]) for r in cells) for j in range(len(header))]
    lines = ["  ".join(c.rjust(w) for c, w in zip(r, widths)) for r in cells]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)
